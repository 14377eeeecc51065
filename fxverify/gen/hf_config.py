"""Hugging Face ``config.json`` importer: the shapes of a decoder-only transformer.

Takes one config file; produces a ``ModelSpec`` (every size a prefill policy needs) plus
diagnostics. Fields read, and what they mean, follow the ``transformers`` configuration classes
(``LlamaConfig``, ``Qwen3Config``, ``MixtralConfig``, ``Qwen3MoeConfig``, DeepSeek-V3's
``DeepseekV3Config``); ``specs/generators.md`` lists every field and formula. Multimodal configs
that nest the language model under ``text_config`` are read from there.

KV-cache bytes per token per layer (the cache a serving engine keeps, in the model's dtype):
- GQA/MHA: ``2 (K, V) x num_key_value_heads x head_dim x dtype_bytes``, with ``head_dim`` from the
  config when present and ``hidden_size / num_attention_heads`` only when absent;
- MLA (DeepSeek-V2/V3, ``kv_lora_rank`` present): one latent of ``kv_lora_rank + qk_rope_head_dim``
  elements, no separate K and V (DeepSeek-V2 paper, section 2.1.2: the cache holds the compressed
  latent and the decoupled RoPE key).

Element widths come from ``vocab.dtype_bits``. Emits FX-GEN-001 (a file that cannot be read or is
not valid JSON) and FX-GEN-002 (a missing, mistyped or contradictory field, named with its place
in the file).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.gen.input_file import InputFile, InputProblem
from fxverify.source import SourceMap
from fxverify.vocab import dtype_bits

#: ``torch_dtype`` names (``torch.bfloat16`` and its aliases, as ``transformers`` writes them) ->
#: the fx dtype; the element width comes from ``vocab.dtype_bits``.
TORCH_DTYPES: dict[str, str] = {
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
}
#: Bytes of one block scale of fp8 block quantization: scales are fp32 (``weight_scale_inv``).
SCALE_BYTES = dtype_bits("fp32") // 8  # one fp32 scale per quantization block
WHAT = "a Hugging Face config.json"


@dataclass(frozen=True)
class WeightQuant:
    """Weight quantization from ``quantization_config``: ``method`` (``fp8``), element ``fmt``
    (``e4m3``), ``elem_bytes`` per weight element and the ``block`` (rows, cols, in elements)
    sharing one fp32 scale (``weight_block_size``; ``None`` for per-tensor scales)."""

    method: str
    fmt: str
    elem_bytes: int
    block: tuple[int, int] | None

    def matrix_bytes(self, rows: int, cols: int) -> int:
        """Bytes of a ``rows x cols`` weight matrix: elements plus one fp32 scale per block (one
        per tensor without blocks)."""
        scales = math.ceil(rows / self.block[0]) * math.ceil(cols / self.block[1]) if self.block else 1
        return rows * cols * self.elem_bytes + SCALE_BYTES * scales


@dataclass(frozen=True)
class Moe:
    """Mixture-of-experts shape: ``experts`` routed experts, ``active`` per token (top-k),
    ``shared`` always-on experts, ``first_dense`` leading dense layers, ``inter`` the expert FFN
    width and ``shared_inter`` the width of one shared expert (elements); ``fields`` names the
    config key that gave each value, for messages and headers."""

    experts: int
    active: int
    shared: int
    first_dense: int
    inter: int
    fields: dict[str, str] = field(default_factory=dict)  # which config key gave each value
    shared_inter: int = 0  # width of one shared expert (``inter`` unless the config names it)


@dataclass(frozen=True)
class Mla:
    """Multi-head latent attention dimensions (DeepSeek-V2/V3), in elements: the KV latent rank,
    the query latent rank (``None`` when queries are not compressed), and the per-head widths of
    the non-RoPE and RoPE query/key parts and of the values (DeepSeek-V2 paper, section 2.1)."""

    kv_lora_rank: int
    q_lora_rank: int | None
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class ModelSpec:
    """The shapes of one model. Sizes are element counts unless named ``_bytes``.

    ``name`` is the file stem (``meta-llama--Meta-Llama-3.1-8B``); ``arch`` the first entry of
    ``architectures``; ``dtype``/``dtype_bytes`` from ``torch_dtype``; ``head_dim_source`` says
    whether ``head_dim`` came from the config or from ``hidden_size / num_attention_heads``.
    """

    name: str
    path: str
    arch: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    head_dim_source: str
    inter: int
    vocab: int
    dtype: str
    dtype_bytes: int
    nested: bool = False
    tied: bool = False
    moe: Moe | None = None
    mla: Mla | None = None
    quant: WeightQuant | None = None

    @property
    def kv_bytes_per_token_per_layer(self) -> int:
        """KV-cache bytes of one token in one layer, unsharded, in the model's dtype."""
        if self.mla is not None:
            return (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim) * self.dtype_bytes
        return 2 * self.kv_heads * self.head_dim * self.dtype_bytes

    @property
    def kv_bytes_per_token(self) -> int:
        """KV-cache bytes of one token over all layers."""
        return self.layers * self.kv_bytes_per_token_per_layer

    @property
    def cache_heads(self) -> int:
        """Heads the KV cache is split by under tensor parallelism: ``num_key_value_heads`` for
        GQA; 1 for MLA, whose single latent every rank needs whole."""
        return 1 if self.mla is not None else self.kv_heads

    def kv_derivation(self) -> str:
        """The formula of ``kv_bytes_per_token_per_layer`` with the numbers, for comments."""
        b = self.dtype_bytes
        if self.mla is not None:
            m = self.mla
            return (f"(kv_lora_rank {m.kv_lora_rank} + qk_rope_head_dim {m.qk_rope_head_dim}) x {b} B "
                    f"= {self.kv_bytes_per_token_per_layer} B (MLA latent, no separate K and V)")
        return (f"2 (K,V) x {self.kv_heads} kv_heads x {self.head_dim} head_dim x {b} B "
                f"= {self.kv_bytes_per_token_per_layer} B")

    def matrix_bytes(self, rows: int, cols: int) -> int:
        """Bytes of a ``rows x cols`` weight matrix (element counts) in the stored format:
        quantized when the config says so, else the model's dtype."""
        if self.quant is not None:
            return self.quant.matrix_bytes(rows, cols)
        return rows * cols * self.dtype_bytes

    def attn_weight_bytes(self, tp: int = 1) -> int:
        """Attention projection weights of one layer held by one of ``tp`` ranks, in bytes.

        Sharding follows Megatron-style tensor parallelism as vLLM implements it: q and o are split
        by heads; k and v are split by KV heads, and when ``tp`` exceeds the KV heads each rank
        holds one whole KV head (``QKVParallelLinear`` replicates them). GQA shapes: q
        ``hidden x heads*head_dim``, k and v ``hidden x kv_heads*head_dim``, o ``heads*head_dim x
        hidden``. MLA (DeepSeek-V2/V3): the down-projections q_a ``hidden x q_lora_rank`` and kv_a
        ``hidden x (kv_lora_rank + rope)`` are replicated on every rank (``ReplicatedLinear``);
        q_b ``q_lora_rank x heads*(nope + rope)``, kv_b ``kv_lora_rank x heads*(nope + v)`` and o
        ``heads*v_head_dim x hidden`` are split by heads."""
        h = self.hidden
        if self.mla is not None:
            m = self.mla
            qk = m.qk_nope_head_dim + m.qk_rope_head_dim
            hpr = self.heads // tp
            rep = self.matrix_bytes(h, m.kv_lora_rank + m.qk_rope_head_dim)
            if m.q_lora_rank:
                rep += self.matrix_bytes(h, m.q_lora_rank)
                q = self.matrix_bytes(m.q_lora_rank, hpr * qk)
            else:
                q = self.matrix_bytes(h, hpr * qk)
            kv_b = self.matrix_bytes(m.kv_lora_rank, hpr * (m.qk_nope_head_dim + m.v_head_dim))
            return rep + q + kv_b + self.matrix_bytes(hpr * m.v_head_dim, h)
        hpr, kvpr = self.heads // tp, max(self.kv_heads // tp, 1)
        q = self.matrix_bytes(h, hpr * self.head_dim)
        kv = 2 * self.matrix_bytes(h, kvpr * self.head_dim)
        return q + kv + self.matrix_bytes(hpr * self.head_dim, h)

    def embedding_bytes(self, tp: int = 1) -> int:
        """Token embedding and LM head held by one of ``tp`` ranks (vocabulary-parallel, as
        vLLM's ``VocabParallelEmbedding``/``ParallelLMHead``): ``ceil(vocab / tp) x hidden`` each,
        once when ``tie_word_embeddings``; in the model's dtype (quantization leaves them alone)."""
        rows = -(-self.vocab // tp)
        return (1 if self.tied else 2) * rows * self.hidden * self.dtype_bytes

    def ffn_weight_bytes(self, inter: int) -> int:
        """A gated (SwiGLU) FFN of width ``inter``: gate, up ``hidden x inter`` and down
        ``inter x hidden``, in bytes."""
        return 2 * self.matrix_bytes(self.hidden, inter) + self.matrix_bytes(inter, self.hidden)


def load_model(path: str, sources: SourceMap) -> tuple[ModelSpec | None, list[Diagnostic]]:
    """Read a Hugging Face ``config.json`` into a ``ModelSpec``.

    Returns ``(spec, [])`` or ``(None, [diagnostic])``: FX-GEN-001 for unreadable or malformed
    JSON, FX-GEN-002 for a missing, mistyped or contradictory field (named, with its place in the
    file). Never raises for bad input."""
    try:
        f = InputFile.read(path, sources, WHAT)
        doc = f.load_json(WHAT)
        return _Reader(f, doc).model(), []
    except InputProblem as p:
        return None, [p.diag]


class _Reader:
    def __init__(self, f: InputFile, doc: Any) -> None:
        self.f = f
        if not isinstance(doc, dict):
            raise InputProblem(diagnostic(codes.GEN_002, f"`{f.path}` holds a JSON {type(doc).__name__}, not an object",
                                          f.span(0), help=f"pass {WHAT}"))
        self.nested = isinstance(doc.get("text_config"), dict)
        self.cfg: dict[str, Any] = doc["text_config"] if self.nested else doc
        self.top = doc
        self.prefix: tuple[str, ...] = ("text_config",) if self.nested else ()

    def _where(self, key: str):
        return self.f.key_span(self.prefix + (key,))

    def _missing(self, key: str, why: str) -> InputProblem:
        inside = " under `text_config`" if self.nested else ""
        return InputProblem(diagnostic(codes.GEN_002, f"`{self.f.path}` has no `{key}`{inside}", self.f.key_span(self.prefix),
                                       help=f"{why}; add `\"{key}\": ...` to the config"))

    def _bad(self, key: str, msg: str, help: str) -> InputProblem:
        return InputProblem(diagnostic(codes.GEN_002, f"`{key}` in `{self.f.path}` {msg}", self._where(key), f"`{key}`",
                                       help=help))

    def int_(self, key: str, why: str, *, optional: bool = False, minimum: int = 1) -> int | None:
        if key not in self.cfg or self.cfg[key] is None:
            if optional:
                return None
            raise self._missing(key, why)
        v = self.cfg[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise self._bad(key, f"is {json_repr(v)}, not an integer", help=_join(why, "it must be an integer"))
        if v < minimum:
            raise self._bad(key, f"is {v}, below {minimum}", help=_join(why, f"it must be at least {minimum}"))
        return v

    def model(self) -> ModelSpec:
        c = self.cfg
        name = _stem(self.f.path)
        archs = self.top.get("architectures") or c.get("architectures") or ["unknown"]
        if isinstance(archs, str):
            archs = [archs]
        if not (isinstance(archs, list) and archs and all(isinstance(a, str) for a in archs)):
            raise InputProblem(diagnostic(codes.GEN_002, f"`architectures` in `{self.f.path}` is not a list of names",
                                          self.f.key_span(("architectures",)), "`architectures`",
                                          help='write e.g. ["LlamaForCausalLM"]'))
        layers = self.int_("num_hidden_layers", "the layer count sizes every per-layer family")
        hidden = self.int_("hidden_size", "the hidden size sizes activations and weights")
        heads = self.int_("num_attention_heads", "the head count sizes attention")
        kv_heads = self.int_("num_key_value_heads", "GQA models name their KV heads", optional=True)
        if kv_heads is None:
            kv_heads = heads  # MHA: the transformers default when the field is absent
        if heads % kv_heads:
            raise self._bad("num_key_value_heads", f"({kv_heads}) does not divide num_attention_heads ({heads})",
                            help="GQA groups query heads evenly over KV heads")
        head_dim = self.int_("head_dim", "", optional=True)
        source = "head_dim"
        if head_dim is None:
            if hidden % heads:
                raise self._bad("hidden_size", f"({hidden}) is not a multiple of num_attention_heads ({heads})",
                                help="without `head_dim`, head_dim = hidden_size / num_attention_heads must be whole")
            head_dim, source = hidden // heads, "hidden_size / num_attention_heads"
        inter = self.int_("intermediate_size", "the FFN width sizes dense FFN weights and activations")
        vocab = self.int_("vocab_size", "the vocabulary sizes the embedding and the LM head")
        tied = c.get("tie_word_embeddings", self.top.get("tie_word_embeddings", False))
        if not isinstance(tied, bool):
            raise self._bad("tie_word_embeddings", f"is {json_repr(tied)}, not true or false",
                            help="it says whether the LM head shares the embedding's weights")
        dt = c.get("torch_dtype") or self.top.get("torch_dtype") or c.get("dtype") or self.top.get("dtype")
        if dt is None:
            raise self._missing("torch_dtype", "the dtype sizes every tensor")
        if not isinstance(dt, str) or dt not in TORCH_DTYPES:
            raise self._bad("torch_dtype", f"is {json_repr(dt)}, which fxverify does not know",
                            help="use one of: " + ", ".join(sorted(TORCH_DTYPES)))
        dtype = TORCH_DTYPES[dt]
        dbytes = dtype_bits(dtype) // 8
        return ModelSpec(name=name, path=self.f.path, arch=str(archs[0]), layers=layers, hidden=hidden, heads=heads,
                         kv_heads=kv_heads, head_dim=head_dim, head_dim_source=source, inter=inter, vocab=vocab,
                         dtype=dtype, dtype_bytes=dbytes, nested=self.nested,
                         tied=tied,
                         moe=self.moe(layers),
                         mla=self.mla(heads), quant=self.quant())

    def moe(self, layers: int) -> Moe | None:
        c = self.cfg
        keys = [k for k in ("num_local_experts", "n_routed_experts", "num_experts") if c.get(k)]
        if not keys:
            return None
        for k in keys:
            self.int_(k, "the routed expert count")
        for key, plain in (("interleave_moe_layer_step", 1), ("decoder_sparse_step", 1), ("moe_layer_freq", 1)):
            v = c.get(key)
            if v is not None and v != plain:
                raise self._bad(key, f"is {json_repr(v)}: MoE layers interleaved with dense ones",
                                help="the generator places MoE layers after `first_k_dense_replace` only; "
                                     "interleaved layouts are not supported yet")
        if c.get("mlp_only_layers"):
            raise self._bad("mlp_only_layers", "lists dense layers among the MoE layers",
                            help="the generator places MoE layers after `first_k_dense_replace` only")
        if len(keys) > 1 and len({c[k] for k in keys}) > 1:
            raise self._bad(keys[1], f"({c[keys[1]]}) contradicts `{keys[0]}` ({c[keys[0]]})",
                            help="name the routed expert count once")
        experts = self.int_(keys[0], "the routed expert count")
        active = self.int_("num_experts_per_tok", "top-k routing needs the number of experts per token")
        if active > experts:
            raise self._bad("num_experts_per_tok", f"({active}) exceeds the {experts} experts of `{keys[0]}`",
                            help="a token cannot be routed to more experts than exist")
        shared = self.int_("n_shared_experts", "", optional=True, minimum=0) or 0
        shared_inter = self.int_("shared_expert_intermediate_size", "", optional=True)  # Qwen2-MoE: one wide shared expert
        first = self.int_("first_k_dense_replace", "", optional=True, minimum=0) or 0
        if first >= layers:
            raise self._bad("first_k_dense_replace", f"({first}) leaves no MoE layer of {layers}",
                            help="it counts the leading dense layers")
        inter = self.int_("moe_intermediate_size", "", optional=True) or self.int_(
            "intermediate_size", "the expert FFN width")
        src = {"experts": keys[0], "active": "num_experts_per_tok",
               "inter": "moe_intermediate_size" if c.get("moe_intermediate_size") else "intermediate_size"}
        if shared_inter:
            shared = shared or 1
            if shared_inter % shared:
                raise self._bad("shared_expert_intermediate_size", f"({shared_inter}) is not a multiple of {shared} shared experts",
                                help="the shared experts split the width evenly")
            src["shared_inter"] = "shared_expert_intermediate_size"
        return Moe(experts, active, shared, first, inter, src, shared_inter // shared if shared_inter else inter)

    def mla(self, heads: int) -> Mla | None:
        if self.cfg.get("kv_lora_rank") is None:
            return None
        why = "MLA (kv_lora_rank present) needs it"
        return Mla(kv_lora_rank=self.int_("kv_lora_rank", why), q_lora_rank=self.int_("q_lora_rank", why, optional=True),
                   qk_nope_head_dim=self.int_("qk_nope_head_dim", why), qk_rope_head_dim=self.int_("qk_rope_head_dim", why),
                   v_head_dim=self.int_("v_head_dim", why))

    def quant(self) -> WeightQuant | None:
        q = self.cfg.get("quantization_config", self.top.get("quantization_config"))
        if q is None:
            return None
        if not isinstance(q, dict):
            raise self._bad("quantization_config", "is not an object", help="see the model's quantization docs")
        method = str(q.get("quant_method", ""))
        if method != "fp8":
            # Other methods (gptq, awq, bitsandbytes) pack weights in ways this generator does not size.
            raise self._bad("quantization_config", f"uses `quant_method` {json_repr(q.get('quant_method'))}, "
                            "which the generator cannot size", help="supported: fp8 (with or without weight_block_size)")
        blk = q.get("weight_block_size")
        block = None
        if blk is not None:
            if not (isinstance(blk, list) and len(blk) == 2 and all(type(x) is int and x > 0 for x in blk)):
                raise self._bad("weight_block_size", f"is {json_repr(blk)}, not two positive integers",
                                help="fp8 block quantization names [rows, cols] per scale")
            block = (blk[0], blk[1])
        return WeightQuant(method, str(q.get("fmt", "e4m3")), dtype_bits("fp8") // 8, block)


def _join(why: str, rule: str) -> str:
    return f"{why}; {rule}" if why else rule


def _stem(path: str) -> str:
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base[:-5] if base.endswith(".json") else base


def json_repr(v: Any) -> str:
    """A short JSON rendering of a value for messages."""
    text = json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."
