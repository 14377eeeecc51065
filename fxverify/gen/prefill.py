"""``fxverify gen prefill``: a prefill policy from a model config, a topology and CXL listings.

Takes a ``ModelSpec`` (``hf_config``), an optional ``Topology`` (``nccl_topo``), an optional
``CxlFabric`` (``cxl_list``) and ``PrefillOptions``; produces ``.fx`` text and a summary, or
diagnostics (FX-GEN-003 when something does not fit, FX-GEN-004 for bad options). The job it
describes, per tensor-parallel rank and layer (``specs/generators.md`` gives every formula):

- stream the layer's attention weights, write the layer's KV cache in blocks of ``block_tokens``
  tokens, attend over the layer's cache, all-reduce the attention output into the residual
  stream (reduce-scatter with ``reduce(sum)``, then an all-gather into a full copy of the hidden
  states, NCCL's ring decomposition);
- dense layers: stream FFN weights, up and down projections, all-reduce; MoE layers: scatter the
  tokens to the rank's experts (expert capacity ``tokens x top_k / experts``, GShard/Switch),
  stream each expert's weights from host memory into a double-buffered HBM slot, run the expert,
  gather the outputs back into token order with a ``reduce(sum)`` (shared experts run densely);
- spill the KV of the last ``spill`` fraction of layers into volatile CXL windows (quantized to
  fp8 with per-128 scales, then crc32c), checkpoint the hidden states lz4-compressed into pmem
  windows (crc32c, then persist), and with ``disaggregate`` send every KV block through the
  nearest NIC (or a DPU) over a posted RDMA link to a decode node, flushing per layer;
- return each layer's KV blocks to the pool once attention, the spill and the send are done.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.gen.cxl_list import CxlFabric, Window
from fxverify.gen.emit import If, Loop, Note, Program, Stmt, count, render
from fxverify.gen.hf_config import ModelSpec
from fxverify.gen.input_file import InputProblem
from fxverify.gen.nccl_topo import Topology
from fxverify.vocab import CODECS, GIB, KIB, MIB, U64_END, canonical_dtype, dtype_bits, size_text

PAGE = 4 * KIB
# fp8 elements per fp32 scale: fine-grained 1x128 groups, as DeepSeek-V3 quantizes activations
# (DeepSeek-V3 technical report, section 3.3.2).
QUANT_GROUP = 128
FP8_BYTES = dtype_bits("fp8") // 8
SCALE_BYTES = dtype_bits("fp32") // 8
DEFAULT_CKPT_EVERY = 8  # ours: a checkpoint every 8 layers keeps 4 of Llama-3.1-8B's 32 in the cxl_test pmem
ALIGN = 2 * MIB  # HBM regions start on 2 MiB boundaries, CUDA's allocation granularity (cuMemGetAllocationGranularity)
# Checkpoints of the hidden states are lz4-compressed (a compressible intermediate); their slots
# are sized by the codec's worst-case bound (LZ4_COMPRESSBOUND, lz4.h), never an average ratio.
CHECKPOINT_CODEC = CODECS["lz4"]


def align(n: int, a: int) -> int:
    """``n`` rounded up to a multiple of ``a``."""
    return -(-n // a) * a


@dataclass(frozen=True)
class PrefillOptions:
    """Options of ``fxverify gen prefill`` (units: tokens, bytes, layers).

    ``spill`` is a fraction of layers as text (``"0.25"``) or ``None`` for the default (0.25 with
    CXL windows, else 0); ``ckpt_every`` ``None`` picks 8, widened until the checkpoints fit the
    pmem windows; ``layers`` keeps only the first N layers (quick checks); ``hbm_gib`` is each
    GPU's memory, which NCCL topology files do not record (80 GiB: H100 SXM, A100 80 GB); ``name`` the policy name; ``command``
    the command line echoed in the header."""

    tokens: int = 8192
    block_tokens: int = 16
    tp: int = 1
    kv_dtype: str = "fp8"
    spill: str | None = None
    disaggregate: bool = False
    unroll: bool = False
    layers: int | None = None
    hbm_gib: int = 80
    ckpt_every: int | None = None
    name: str | None = None
    command: str = ""


@dataclass
class Generated:
    """The result: policy ``text`` and the ``summary`` dictionary (``--summary-json``)."""

    text: str
    summary: dict[str, Any]


def generate_prefill(model: ModelSpec, topo: Topology | None, cxl: CxlFabric | None,
                     opts: PrefillOptions) -> tuple[Generated | None, list[Diagnostic]]:
    """Plan and render a prefill policy. Returns ``(generated, [])`` or ``(None, [diagnostic])``
    with FX-GEN-003 (HBM, CXL or address space too small, too few GPUs or no NIC) or FX-GEN-004
    (an option out of range or in conflict). Deterministic: same inputs, same text."""
    try:
        return _Plan(model, topo, cxl, opts).generate(), []
    except InputProblem as p:
        return None, [p.diag]


def _opt_error(msg: str, help: str) -> InputProblem:
    return InputProblem(diagnostic(codes.GEN_004, msg, help=help))


def _fit_error(msg: str, help: str) -> InputProblem:
    return InputProblem(diagnostic(codes.GEN_003, msg, help=help))


@dataclass
class _Region:
    name: str
    decl: str  # the text after `region `
    instances: int
    comment: str = ""
    size: int = 0  # bytes of the whole family (host regions, laid out after planning)


class _Plan:
    def __init__(self, m: ModelSpec, topo: Topology | None, cxl: CxlFabric | None, o: PrefillOptions) -> None:
        self.m, self.topo, self.cxl, self.o = m, topo, cxl, o
        self.regions: list[_Region] = []
        self.spaces: list[str] = []
        self.maps: list[str] = []
        self.alias_sets: list[str] = []
        self.finals: list[str] = []
        self._sizes()
        self._fabric()

    # ---- sizes --------------------------------------------------------------------------------
    def _sizes(self) -> None:
        m, o = self.m, self.o
        if o.tokens < 1 or o.block_tokens < 1:
            raise _opt_error("--tokens and --block-tokens must be positive", help="for example --tokens 8192 --block-tokens 16")
        if o.tokens % o.block_tokens:
            raise _opt_error(f"--tokens {o.tokens} is not a multiple of --block-tokens {o.block_tokens}",
                             help=f"use --tokens {align(o.tokens, o.block_tokens)}: paged KV caches allocate whole blocks")
        if o.tp < 1:
            raise _opt_error(f"--tp {o.tp} must be at least 1", help="the tensor-parallel degree counts GPUs")
        if not 1 <= o.hbm_gib < U64_END // GIB:  # the space must end below 2^64
            raise _opt_error(f"--hbm-gib {o.hbm_gib} is outside 1..{U64_END // GIB - 1}", help="for example --hbm-gib 80")
        self.L = o.layers if o.layers is not None else m.layers
        if not 1 <= self.L <= m.layers:
            raise _opt_error(f"--layers {o.layers} is outside 1..{m.layers}", help=f"`{m.name}` has {m.layers} layers")
        self.T, self.BT = o.tokens, o.block_tokens
        self.B = self.T // self.BT
        self.db = m.dtype_bytes
        tp, H = o.tp, m.cache_heads
        what = "its single MLA latent" if m.mla else f"{H} KV heads"
        if tp <= H:
            if H % tp:
                raise _opt_error(f"--tp {tp} does not divide the {what} of `{m.name}`",
                                 help=f"choose --tp among the divisors of {H}, or a multiple of it")
            self.hpr, self.R, self.G = H // tp, 1, tp
        else:
            if tp % H:
                raise _opt_error(f"--tp {tp} is neither a divisor nor a multiple of the {what} of `{m.name}`",
                                 help="serving engines replicate KV heads only in whole groups")
            self.hpr, self.R, self.G = 1, tp // H, H
        self.kv_tok = m.kv_bytes_per_token_per_layer * self.hpr // H
        self.block = self.BT * self.kv_tok
        self.layer_kv = self.B * self.block
        self.act = self.T * m.hidden * self.db
        for what_, n in (("hidden_size", m.hidden), ("intermediate_size", m.inter)):
            if n % tp:
                raise _opt_error(f"--tp {tp} does not divide {what_} {n} of `{m.name}`",
                                 help="tensor parallelism shards these dimensions evenly")
        self.chunk = self.act // tp
        self.attn_w = m.attn_weight_bytes(tp)
        self.emb_w = m.embedding_bytes(tp)
        self.fd = min(m.moe.first_dense, self.L) if m.moe else self.L  # dense layers [0, fd)
        self.ffn_w = m.ffn_weight_bytes(m.inter // tp)
        self.inter_act = self.T * (m.inter // tp) * self.db if self.fd else 0
        if m.moe:
            e = m.moe
            if e.experts % tp:
                raise _opt_error(f"--tp {tp} does not divide the {e.experts} routed experts of `{m.name}`",
                                 help="experts are spread evenly over the ranks (expert parallelism)")
            self.E_loc = e.experts // tp
            if (self.act * e.active) % tp:
                raise _opt_error(f"the {e.active} expert copies of the hidden states ({self.act} B each) do not split over --tp {tp}",
                                 help="choose --tokens so that the expert slots divide evenly over the ranks")
            self.cap = self.act * e.active // tp  # this rank's expert slots: tokens x top_k / tp rows
            if e.active > tp and e.active % tp:
                raise _opt_error(f"--tp {tp} does not divide top_k {e.active} of `{m.name}`",
                                 help="each rank must hold a whole number of every token's expert slots")
            self.slices = e.active // tp if e.active % tp == 0 else 1
            self.exp_w = m.ffn_weight_bytes(e.inter)
            sh = e.shared * e.shared_inter
            if sh % tp:
                raise _opt_error(f"--tp {tp} does not divide the shared-expert width {sh}", help="choose another --tp")
            self.sh_w = m.ffn_weight_bytes(sh // tp) if sh else 0
            self.sh_act = self.T * (sh // tp) * self.db
        else:
            self.E_loc = self.cap = self.exp_w = self.sh_w = self.sh_act = self.slices = 0
        self.moe_layers = self.L - self.fd
        self.spill_layers = self._spill_count()

    def _spill_count(self) -> int:
        o = self.o
        if o.spill is None:
            frac = Fraction(1, 4) if self.cxl is not None and self.cxl.windows() else Fraction(0)
        else:
            try:
                frac = Fraction(o.spill)
            except (ValueError, ZeroDivisionError):
                raise _opt_error(f"--spill {o.spill} is not a fraction", help="for example --spill 0.25") from None
            if not 0 <= frac <= 1:
                raise _opt_error(f"--spill {o.spill} is outside 0..1", help="it is the fraction of layers spilled")
            if frac and self.cxl is None:
                raise _opt_error(f"--spill {o.spill} needs CXL memory", help="pass --cxl with a `cxl list` listing, or --spill 0")
        self.spill_frac = frac
        return math.floor(frac * self.L)

    # ---- fabric -------------------------------------------------------------------------------
    def _fabric(self) -> None:
        t, o = self.topo, self.o
        self.devices: list[tuple[str, str]] = []  # name, declaration
        self.links: list[str] = []
        self.fabric_notes: list[str] = []
        if t is not None:
            if o.tp > len(t.gpus):
                raise _fit_error(f"--tp {o.tp} needs {o.tp} GPUs; `{t.path}` has {len(t.gpus)}",
                                 help=f"use --tp {len(t.gpus)} or less")
            self.cpus = [c.name for c in t.cpus]
            self.gpus = [g.name for g in t.gpus[: o.tp]]
            self.numa = {d.name: d.numa for d in t.cpus + t.switches + t.gpus + t.nics}
            for c in t.cpus:
                self.devices.append((c.name, f"device {c.name}: cpu                         # NUMA node {c.numa}"))
            for d in t.switches + t.gpus + t.nics:
                hooks = {"gpu": " hooks [launch, copy_done, free]", "nic": " hooks [tx, rx, dma_done]"}.get(d.kind, "")
                where = f"{d.busid}, class {d.pci_class:#08x}" if d.pci_class is not None else "no PCI entry"
                extra = f", {'InfiniBand' if d.net == 'ib' else 'Ethernet'}" if d.kind == "nic" else ""
                self.devices.append((d.name, f"device {d.name}: {d.kind}{hooks}".ljust(50) + f"# {where}{extra}"))
            for d in t.switches + t.gpus + t.nics:
                speed = d.link.describe() if d.link is not None else "speed not given"
                self.links.append(f"link {d.parent} -- {d.name} : pcie ordered".ljust(50) + f"# {speed}")
            for i, a in enumerate(self.cpus):
                for b in self.cpus[i + 1:]:
                    self.links.append(f"link {a} -- {b} : smp ordered".ljust(50) + "# inter-socket (NCCL SYS path)")
            for a, b, n in t.nvlinks:
                self.links.append(f"link {a} -- {b} : nvlink ordered".ljust(50) + f"# {n} NVLinks")
            if not t.nvlinks and o.tp > 1:
                self.fabric_notes.append(f"{t.path} lists no NVLink: traffic between GPUs crosses PCIe (and the inter-socket link)")
        else:
            self.cpus = ["cpu0"]
            self.gpus = [f"gpu{r}" for r in range(o.tp)]
            self.numa = {g: 0 for g in self.gpus} | {"cpu0": 0}
            self.devices.append(("cpu0", "device cpu0: cpu"))
            for g in self.gpus:
                self.devices.append((g, f"device {g}: gpu hooks [launch, copy_done, free]"))
                self.links.append(f"link cpu0 -- {g} : pcie ordered")
            for i, a in enumerate(self.gpus):
                for b in self.gpus[i + 1:]:
                    self.links.append(f"link {a} -- {b} : nvlink ordered".ljust(50) + "# assumed NVSwitch all-to-all")
        self.primaries = [g * self.R for g in range(self.G)]
        self.nic_of: dict[int, str] = {}
        if o.disaggregate:
            if t is not None:
                if not t.nics:
                    raise _fit_error(f"--disaggregate needs a NIC; `{t.path}` lists none",
                                     help="pass a topology with NICs, or drop --topology to use a DPU")
                for r in self.primaries:
                    self.nic_of[r] = t.nearest_nic(self.gpus[r])  # type: ignore[assignment]
            else:
                self.devices.append(("dpu0", "device dpu0: dpu hooks [rx, tx, dma_done]"))
                for g in self.gpus:
                    self.links.append(f"link {g} -- dpu0 : pcie ordered")
                self.nic_of = {r: "dpu0" for r in self.primaries}
            self.devices.append(("decode0", "device decode0: gpu hooks [launch]".ljust(50) + "# the remote decode node"))
            for n in sorted(set(self.nic_of.values()), key=self._dev_order):
                self.links.append(f"link {n} -- decode0 : rdma posted".ljust(50) + "# completion at the sender precedes visibility")
        self.nics_used = sorted(set(self.nic_of.values()), key=self._dev_order)
        self._cxl_fabric()

    def _dev_order(self, name: str) -> int:
        return [d for d, _ in self.devices].index(name)

    def _cpu_for(self, numa: int | None) -> str:
        want = f"cpu{numa}"
        return want if want in self.cpus else self.cpus[0]

    def _cxl_fabric(self) -> None:
        c = self.cxl
        self.windows: list[Window] = c.windows() if c else []
        self.home: dict[str, str] = {}
        if c is None:
            return
        for hb in c.host_bridges:
            self.devices.append((hb.name, f"device {hb.name}: cxl_switch hooks [route]".ljust(50) + f"# host bridge {hb.host}"))
            self.links.append(f"link {self._cpu_for(c.port_numa(hb.name))} -- {hb.name} : cxl ordered")
        for sp in c.switch_ports:
            self.devices.append((sp.name, f"device {sp.name}: cxl_switch hooks [route]".ljust(50) + f"# switch port {sp.host}"))
            self.links.append(f"link {sp.parent} -- {sp.name} : cxl ordered")
        ports = {p.name for p in c.host_bridges + c.switch_ports}
        for md in sorted(c.memdevs.values(), key=lambda x: _natural(x.name)):
            numa = "" if md.numa is None else f", NUMA node {md.numa}"
            self.devices.append((md.name, f"device {md.name}: cxl_mem hooks [near_mem]".ljust(50)
                                 + f"# ram {size_text(md.ram_bytes)}, pmem {size_text(md.pmem_bytes)}{numa}"))
            up = md.parent if md.parent in ports else self._cpu_for(md.numa)
            self.links.append(f"link {up} -- {md.name} : cxl ordered")
        first = min(c.memdevs, key=_natural) if c.memdevs else None
        for w in self.windows:
            owner = next((x for x in w.memdevs if x in c.memdevs), first)
            if owner is None:
                owner = "cxlmem"
                if not any(d == "cxlmem" for d, _ in self.devices):
                    self.devices.append(("cxlmem", "device cxlmem: cxl_mem hooks [near_mem]".ljust(50)
                                         + "# memory behind windows whose memdevs the listing does not name"))
                    self.links.append(f"link {self.cpus[0]} -- cxlmem : cxl ordered")
            self.home[w.name] = owner

    # ---- layout -------------------------------------------------------------------------------
    def _hbm_layout(self) -> None:
        """Per-rank HBM regions at fixed offsets; picks resident or streamed weights."""
        self.hbm = self.o.hbm_gib * GIB
        self.stream = False
        self.layer_w = self.attn_w + max(self.ffn_w if self.fd else 0, self.sh_w if self.moe_layers else 0)
        plan = self._rank_plan(stream=False)
        if plan[-1][1] > self.hbm:
            self.stream = True
            plan = self._rank_plan(stream=True)
        if plan[-1][1] > self.hbm:
            need = plan[-1][1]
            raise _fit_error(f"one rank needs {need} B ({need / GIB:.1f} GiB) of HBM; each GPU has {self.o.hbm_gib} GiB",
                             help="raise --tp, lower --tokens, or pass --hbm-gib for larger GPUs")
        self.rank_plan = plan
        self.hbm_used = plan[-1][1]

    def _rank_plan(self, stream: bool) -> list[tuple[str, int]]:
        """``(item, offset after it)`` for one rank's HBM, in layout order, 2 MiB aligned."""
        items: list[tuple[str, int]] = [("kv", self.L * self.layer_kv), ("act", self.act), ("tmp", self.act),
                                        ("wemb", self.emb_w)]
        if self.o.tp > 1:
            items.append(("hs", self.act))
        inter = max(self.inter_act, self.sh_act)
        if inter:
            items.append(("inter", inter))
        if stream:
            items.append(("wslot", 2 * self.layer_w))
        else:
            items += [("wattn", self.L * self.attn_w)]
            if self.fd:
                items.append(("wffn", self.fd * self.ffn_w))
            if self.moe_layers and self.sh_w:
                items.append(("wsh", self.moe_layers * self.sh_w))
        if self.moe_layers:
            items += [("xe", self.cap), ("ye", self.cap), ("wstage", 2 * self.E_loc * self.exp_w)]
        out, at = [], 0
        for name, n in items:
            at = align(at + n, ALIGN)
            out.append((name, at))
        return out

    def _offsets(self) -> dict[str, int]:
        start, out = 0, {}
        for name, end in self.rank_plan:
            out[name] = start
            start = end
        return out

    # ---- generation ---------------------------------------------------------------------------
    def generate(self) -> Generated:
        self._hbm_layout()
        self._cxl_layout()
        flow = self._flow()
        self._declare_regions()
        name = self.o.name or re.sub(r"[^a-z0-9._-]", "_", f"{self.m.name.split('--')[-1].lower()}-prefill")
        if not re.fullmatch(r"[A-Za-z0-9._ -]+", name):
            raise _opt_error(f"--name {name!r} has characters a policy name cannot hold",
                             help="use letters, digits, `.`, `_`, `-` and spaces")
        edges = count(flow)
        lines = self._header(name, edges)
        lines.append(f'policy "{name}"')
        lines.append("")
        lines.append("fabric {")
        if self.topo is not None:
            lines.append(f"  # from {self.topo.path}: {len(self.topo.gpus)} GPUs, {len(self.topo.nics)} NICs, "
                         f"{len(self.topo.switches)} PCIe switches, {self.topo.numa_nodes} NUMA nodes")
        if self.cxl is not None:
            lines.append(f"  # from {', '.join(self.cxl.paths)}")
        lines.append("  # PCIe and CXL.mem complete a DMA only after its writes: a completion is a posted write that")
        lines.append("  # cannot pass the data before it (PCIe Base Specification, ordering rules), hence `ordered`")
        lines += ["  " + d for _, d in self.devices]
        lines += ["  " + ln for ln in self.links] + ["  # " + n for n in self.fabric_notes]
        lines.append("}")
        lines.append("")
        lines += self.spaces
        lines.append("")
        for r in self.regions:
            if r.comment:
                lines.append(f"# {r.comment}")
            lines.append(f"region {r.decl}")
        lines += self.alias_sets
        lines.append("")
        lines += self.maps
        lines.append("")
        lines.append("flow prefill {")
        lines += list(render(flow, "  ", self.o.unroll))
        lines += ["  " + f for f in self.finals]
        lines.append("}")
        text = "\n".join(lines) + "\n"
        return Generated(text, self._summary(name, edges))

    def _summary(self, name: str, edges: int) -> dict[str, Any]:
        m = self.m
        return {
            "policy": name,
            "model": m.name,
            "architecture": m.arch,
            "layers": self.L,
            "dtype": m.dtype,
            "kv_bytes_per_token": self.L * m.kv_bytes_per_token_per_layer,
            "kv_bytes_per_token_per_layer": m.kv_bytes_per_token_per_layer,
            "kv_block_bytes_per_rank": self.block,
            "blocks_per_layer": self.B,
            "tokens": self.T,
            "block_tokens": self.BT,
            "tp": self.o.tp,
            "kv_heads": m.cache_heads,
            "kv_heads_per_rank": self.hpr,
            "kv_replicas": self.R,
            "experts": m.moe.experts if m.moe else 0,
            "active_experts": m.moe.active if m.moe else 0,
            "shared_experts": m.moe.shared if m.moe else 0,
            "moe_layers": self.moe_layers,
            "weight_quantization": f"{m.quant.method} {m.quant.fmt}" if m.quant else None,
            "weights": "streamed" if self.stream else "resident",
            "hbm_bytes_per_rank": self.hbm_used,
            "spill_layers": self.spill_layers,
            "kv_dtype_spilled": self.o.kv_dtype,
            "checkpoints": self.n_ckpt,
            "disaggregate": self.o.disaggregate,
            "devices": len(self.devices),
            "links": len(self.links),
            "edges": edges,
            "regions": sum(r.instances for r in self.regions),
            "windows": [{"name": w.name, "base": w.base, "size": w.size, "persistent": w.persistent,
                         "home": self.home[w.name]} for w in self.windows],
        }

    def _header(self, name: str, edges: int) -> list[str]:
        m, o = self.m, self.o
        machine = f"the GPUs of {self.topo.path}" if self.topo else f"{o.tp} GPU(s)"
        h = [f"# {m.name} prefill of one {self.T}-token request, tensor parallel {o.tp}, on {machine}.",
             "# GENERATED by: " + (o.command or "fxverify gen prefill"),
             "# Do not edit by hand: change the options and regenerate.",
             "#",
             f"# Model ({m.path}): {m.arch}, {m.layers} layers" + (f" (first {self.L} kept)" if self.L != m.layers else "")
             + f", hidden {m.hidden}, {m.heads} heads, {m.kv_heads} KV heads, dtype {m.dtype} ({self.db} B)"
             + (", language model under text_config" if m.nested else ""),
             ] + ([] if m.mla else [f"#   head_dim = {m.head_dim} (from {m.head_dim_source})"])
        if m.mla:
            x = m.mla
            h.append(f"#   MLA: kv_lora_rank {x.kv_lora_rank}, qk_rope_head_dim {x.qk_rope_head_dim}, "
                     f"qk_nope_head_dim {x.qk_nope_head_dim}, v_head_dim {x.v_head_dim}, q_lora_rank {x.q_lora_rank}")
        if m.moe:
            e = m.moe
            h.append(f"#   MoE: {e.experts} routed experts ({e.fields['experts']}), {e.active} active per token, "
                     f"{e.shared} shared, first {e.first_dense} layers dense, expert width {e.inter}")
        if m.quant:
            q = m.quant
            blk = f", {q.block[0]}x{q.block[1]} blocks with one fp32 scale each" if q.block else ""
            h.append(f"#   weights quantized: {q.method} {q.fmt} ({q.elem_bytes} B per weight{blk}); activations and KV stay {m.dtype}")
        h += ["#", "# Derivation:",
              f"#   KV per token per layer = {m.kv_derivation()}",
              f"#   KV per token = {self.L} layers x {m.kv_bytes_per_token_per_layer} B = {self.L * m.kv_bytes_per_token_per_layer} B"]
        if self.R > 1:
            h.append(f"#   tp {o.tp} > {m.cache_heads} KV head(s): each rank holds 1 head; {self.R} replicas per head "
                     f"({self.G} group(s)); the first rank of each group spills and sends")
        elif o.tp > 1:
            h.append(f"#   tp {o.tp}: each rank holds {self.hpr} of {m.cache_heads} KV heads")
        h += [f"#   KV per token per layer per rank = {m.kv_bytes_per_token_per_layer} B x {self.hpr}/{m.cache_heads} = {self.kv_tok} B",
              f"#   KV block = {self.BT} tok x {self.kv_tok} B = {self.block} B ({size_text(self.block)}); "
              f"{self.T} / {self.BT} = {self.B} blocks per layer",
              f"#   hidden states = {self.T} tok x {m.hidden} x {self.db} B = {self.act} B; all-reduce chunk = {self.act} / {o.tp} = {self.chunk} B",
              f"#   attention weights per layer per rank = {self.attn_w} B"]
        if self.fd:
            h.append(f"#   dense FFN weights per layer per rank = 3 x {m.hidden} x {m.inter // o.tp} "
                     f"(x {m.quant.elem_bytes if m.quant else self.db} B{' + block scales' if m.quant else ''}) = {self.ffn_w} B")
        if m.moe:
            e = m.moe
            h += [f"#   expert slots per rank = {self.T} tok x top_k {e.active} / tp {o.tp} rows x {m.hidden} x {self.db} B = {self.cap} B "
                  f"(capacity factor 1: GShard drops tokens beyond it); {self.E_loc} experts per rank",
                  f"#   expert weights = 3 x {m.hidden} x {e.inter} (x {m.quant.elem_bytes if m.quant else self.db} B{' + block scales' if m.quant else ''}) = {self.exp_w} B each; {self.E_loc} per rank streamed per MoE layer "
                  f"= {self.E_loc * self.exp_w} B"]
        h.append(f"#   weights are {'streamed per layer into two HBM slots' if self.stream else 'resident in HBM'}; "
                 f"one rank uses {self.hbm_used} B ({self.hbm_used / GIB:.2f} GiB) of {o.hbm_gib} GiB HBM")
        if self.spill_layers:
            h.append(f"#   spill: floor({self.spill_frac} x {self.L}) = {self.spill_layers} layers (from layer {self.L - self.spill_layers}); "
                     f"slot = {self.spill_derivation}")
        if self.n_ckpt:
            h.append(f"#   checkpoints every {self.ckpt_every} layers: {self.n_ckpt} slots of "
                     f"LZ4_COMPRESSBOUND({self.act}) = {CHECKPOINT_CODEC.bound(self.act)} B, page-aligned = {self.ckpt_slot} B")
        h.append(f"#   edges = {edges} (as unrolled)")
        return h

    # ---- CXL layout ---------------------------------------------------------------------------
    def _cxl_layout(self) -> None:
        o = self.o
        fp8 = o.kv_dtype.startswith("fp8")
        self.spill_dtype = "fp8" if fp8 else o.kv_dtype
        elems = self.block // self.db
        if fp8:
            self.spill_slot = elems * FP8_BYTES + -(-elems // QUANT_GROUP) * SCALE_BYTES
            self.spill_derivation = (f"{elems} elems x {FP8_BYTES} B + ceil({elems} / {QUANT_GROUP}) fp32 scales x {SCALE_BYTES} B = {self.spill_slot} B")
        else:
            bits = dtype_bits(canonical_dtype(o.kv_dtype))
            self.spill_slot = elems * bits // 8
            self.spill_derivation = f"{elems} elems x {bits // 8} B ({o.kv_dtype}) = {self.spill_slot} B"
        self.spill_windows: list[tuple[Window, int, int, int]] = []  # window, first layer, end layer, unit
        volatile = [w for w in self.windows if not w.persistent]
        pmem = [w for w in self.windows if w.persistent]
        first = self.L - self.spill_layers
        if self.spill_layers:
            if not volatile:
                raise _fit_error("--spill needs a volatile CXL window; the listings have only pmem windows"
                                 if pmem else "--spill needs a CXL window; the listings have no root decoder or region",
                                 help="pass `cxl list -BDMu` output (root decoders), or --spill 0")
            unit = align(self.G * self.B * self.spill_slot, PAGE)
            layer = first
            for w in volatile:
                step = max(w.targets, 1) * w.granularity if w.granularity else PAGE
                unit_w = align(unit, step)
                fit = w.size // unit_w
                take = min(fit, self.L - layer)
                if take:
                    self.spill_windows.append((w, layer, layer + take, unit_w))
                    layer += take
            if layer < self.L:
                have = sum(w.size for w in volatile)
                need = self.spill_layers * unit
                raise _fit_error(f"too little CXL capacity: spilling {self.spill_layers} layers needs {need} B "
                                 f"({need / MIB:.1f} MiB) in whole-layer units of {unit} B; the volatile windows hold {have} B "
                                 f"({', '.join(w.name for w in volatile)})",
                                 help="lower --spill" + ("" if fp8 else ", use --kv-dtype fp8")
                                      + ", or pass a listing with more CXL memory")
        self.ckpt_slot = align(CHECKPOINT_CODEC.bound(self.act), PAGE)
        fits = sum(w.size // self.ckpt_slot for w in pmem)
        self.ckpt_windows: list[tuple[Window, int, int]] = []
        every = o.ckpt_every
        if every is not None and every < 0:
            raise _opt_error(f"--ckpt-every {every} must be 0 (off) or positive", help="for example --ckpt-every 8")
        if every is None:
            every = DEFAULT_CKPT_EVERY
            while self.L // every > fits and every <= self.L:
                every += 1
            if not fits or self.L // every == 0:
                every = 0
        elif every:
            if not pmem:
                raise _fit_error(f"--ckpt-every {every} needs a pmem CXL window; the listings have none",
                                 help="pass a listing with pmem-capable root decoders, or --ckpt-every 0")
            if self.L // every > fits:
                raise _fit_error(f"too little CXL pmem: {self.L // every} checkpoints of {self.ckpt_slot} B need "
                                 f"{self.L // every * self.ckpt_slot} B; the pmem windows hold {fits} slots",
                                 help=f"use --ckpt-every {self._smallest_every(fits)} or --ckpt-every 0")
        self.ckpt_every = every
        self.n_ckpt = self.L // every if every else 0
        i = 0
        for w in pmem:
            take = min(w.size // self.ckpt_slot, self.n_ckpt - i)
            if take > 0:
                self.ckpt_windows.append((w, i, i + take))
                i += take

    def _smallest_every(self, fits: int) -> int:
        e = 1
        while self.L // e > fits:
            e += 1
        return e

    # ---- regions, maps ------------------------------------------------------------------------
    def _declare_regions(self) -> None:
        m, o = self.m, self.o
        dt = m.dtype
        wdt = "" if m.quant else f" dtype {dt}"
        off = self._offsets()
        for r, g in enumerate(self.gpus):
            self.spaces.append(f"space hbm{r} on {g} size {o.hbm_gib} GiB")
        host: dict[str, list[_Region]] = {}
        B, L = self.B, self.L
        for r, g in enumerate(self.gpus):
            kv = off["kv"]
            self._region(f"kvl{r}", f"kvl{r}[l in 0..{L}] in hbm{r} at {kv:#x} + l * {self.layer_kv} size {self.layer_kv} "
                         f"owner {g} dtype {dt}", L, f"rank {r} ({g}): the KV cache of one layer, and its blocks")
            self._region(f"kvb{r}", f"kvb{r}[l in 0..{L}, b in 0..{B}] in hbm{r} at {kv:#x} + (l * {B} + b) * {self.block} "
                         f"size {self.block} owner {g} dtype {dt}", L * B)
            self.alias_sets.append(f"alias_set kvcache{r} = [kvl{r}, kvb{r}]   # a layer's view and its blocks are the same bytes")
            self._region(f"wemb{r}", f"wemb{r} in hbm{r} at {off['wemb']:#x} size {self.emb_w} owner {g} dtype {dt}", 1,
                         f"rank {r}: its vocabulary shard of the embedding{'' if m.tied else ' and the LM head'}")
            for nm in ("act", "tmp", "hs"):
                if nm in off:
                    self._region(f"{nm}{r}", f"{nm}{r} in hbm{r} at {off[nm]:#x} size {self.act} owner {g} dtype {dt}", 1)
            if "inter" in off:
                n = max(self.inter_act, self.sh_act)
                self._region(f"inter{r}", f"inter{r} in hbm{r} at {off['inter']:#x} size {n} owner {g} dtype {dt}", 1)
            if self.stream:
                self._region(f"wslot{r}", f"wslot{r}[p in 0..2] in hbm{r} at {off['wslot']:#x} + p * {self.layer_w} "
                             f"size {self.layer_w} owner {g}{wdt}", 2, "two slots: layer l streams into slot l % 2")
                host.setdefault(self._host_space(r), []).append(
                    _Region(f"whost{r}", f"whost{r}[l in 0..{L}] in {{space}} at {{base}} + l * {self.layer_w} size {self.layer_w} "
                            f"owner {self.gpus[r]}{wdt}", L, f"rank {r}: every layer's weights in pinned host memory registered to {self.gpus[r]}",
                            L * self.layer_w))
            else:
                self._region(f"wattn{r}", f"wattn{r}[l in 0..{L}] in hbm{r} at {off['wattn']:#x} + l * {self.attn_w} "
                             f"size {self.attn_w} owner {g}{wdt}", L)
                if self.fd:
                    self._region(f"wffn{r}", f"wffn{r}[l in 0..{self.fd}] in hbm{r} at {off['wffn']:#x} + l * {self.ffn_w} "
                                 f"size {self.ffn_w} owner {g}{wdt}", self.fd)
                if self.moe_layers and self.sh_w:
                    self._region(f"wsh{r}", f"wsh{r}[j in 0..{self.moe_layers}] in hbm{r} at {off['wsh']:#x} + j * {self.sh_w} "
                                 f"size {self.sh_w} owner {g}{wdt}", self.moe_layers, f"shared experts of MoE layer j (model layer {self.fd} + j)")
            if self.moe_layers:
                E, ew = self.E_loc, self.E_loc * self.exp_w
                for nm in ("xe", "ye"):
                    self._region(f"{nm}{r}", f"{nm}{r} in hbm{r} at {off[nm]:#x} size {self.cap} owner {g} dtype {dt}", 1,
                                 "expert slots [tokens, top_k / tp, hidden]: inputs" if nm == "xe" else "expert slots: outputs")
                self._region(f"wstage{r}", f"wstage{r}[p in 0..2] in hbm{r} at {off['wstage']:#x} + p * {ew} size {ew} "
                             f"owner {g}{wdt}", 2, f"weights of the rank's {E} experts, double-buffered: MoE layer j streams into slot j % 2")
                reg = _Region(f"wexp{r}", f"wexp{r}[j in 0..{self.moe_layers}] in {{space}} at {{base}} + j * {ew} size {ew} "
                              f"owner {g}{wdt}", self.moe_layers,
                              f"rank {r}: weights of global experts {r * E}..{(r + 1) * E} of every MoE layer, in pinned host memory",
                              self.moe_layers * ew)
                host.setdefault(self._host_space(r), []).append(reg)
        for space, regs in sorted(host.items()):
            cpu = space.replace("dram", "cpu")
            at = 0
            for reg in regs:
                reg.decl = reg.decl.replace("{space}", space).replace("{base}", f"{at:#x}")
                self.regions.append(reg)
                at = align(at + reg.size, ALIGN)
            _fits64(align(at, GIB), f"host memory `{space}`")
            self.spaces.append(f"space {space} on {cpu} size {size_text(align(at, GIB))}".ljust(50)
                               + "# host memory holding streamed weights (sized to fit them)")
        self._cxl_regions()
        if o.disaggregate:
            self._remote_regions()
        self._maps()

    def _host_cpu(self, r: int) -> str:
        return self._cpu_for(self.numa.get(self.gpus[r], 0))

    def _host_space(self, r: int) -> str:
        return self._host_cpu(r).replace("cpu", "dram")

    def _region(self, name: str, decl: str, n: int, comment: str = "") -> None:
        self.regions.append(_Region(name, decl, n, comment))

    def _cxl_regions(self) -> None:
        seen = set()
        for w in self.windows:
            if w.name in seen:
                continue
            seen.add(w.name)
            sp = _space_name(w.name)
            what = (f"region, {w.targets}-way interleave, granularity {w.granularity} B" if w.kind == "region"
                    else f"root decoder, {w.targets} target(s)")
            kind = "pmem" if w.persistent else "volatile"
            self.spaces.append(f"space {sp} on {self.home[w.name]} base {w.base:#x} size {size_text(w.size)}"
                               + (" persistent" if w.persistent else "") + f"   # {w.name}: {what}, {kind}")
        G, B = self.G, self.B
        for w, a, b, unit in self.spill_windows:
            sp = _space_name(w.name)
            for gi, r in enumerate(self.primaries):
                at = w.base + gi * B * self.spill_slot
                self._region(f"kvs_{sp}_g{gi}", f"kvs_{sp}_g{gi}[u in 0..{b - a}, b in 0..{B}] in {sp} at {at:#x} + u * {unit} + "
                             f"b * {self.spill_slot} size {self.spill_slot} owner {self.gpus[r]} dtype {self.spill_dtype}",
                             (b - a) * B, f"spilled KV of layers {a}..{b} (u = layer - {a}), KV group {gi}, in {w.name}; "
                             f"a layer's {G} group(s) share one {unit} B unit" if gi == 0 else "")
                self.finals.append(f"final owner kvs_{sp}_g{gi}[*, *] = {self.home[w.name]}")
        for w, a, b in self.ckpt_windows:
            sp = _space_name(w.name)
            self._region(f"ck_{sp}", f"ck_{sp}[i in 0..{b - a}] in {sp} at {w.base:#x} + i * {self.ckpt_slot} size {self.ckpt_slot} "
                         f"owner {self.gpus[0]}", b - a, f"{CHECKPOINT_CODEC.name} checkpoints {a}..{b} of the hidden states in {w.name}")
            self.finals.append(f"final owner ck_{sp}[*] = {self.home[w.name]}")

    def _remote_regions(self) -> None:
        per = self.layer_kv * self.R
        total = self.G * self.L * per
        _fits64(align(total, GIB), "the decode node's KV memory")
        self.spaces.append(f"space rhbm on decode0 size {size_text(align(total, GIB))}".ljust(50)
                           + "# the decode node's KV memory (sized to fit)")
        for g, r in enumerate(self.primaries):
            nic = self.nic_of[r]
            rep = f"; {self.R} replicas per block" if self.R > 1 else ""
            self._region(f"rkv{g}", f"rkv{g}[l in 0..{self.L}] in rhbm at {g * self.L * per:#x} + l * {per} size {per} "
                         f"owner {nic} dtype {self.m.dtype}", self.L, f"KV group {g} on the decode node{rep}")
            self.finals.append(f"final owner rkv{g}[*] = decode0")

    def _maps(self) -> None:
        tp = self.o.tp
        self.maps.append("map kv_written: array<u32, u64>[1] class per_device merge sum      # KV blocks written, per GPU")
        self.maps.append(f"map layer_done: array<u32, u32>[{self.L * tp}] class causal            # key l * {tp} + rank")
        if self.spill_layers:
            n = self.spill_layers * self.G * self.B
            self.maps.append(f"map block_owner: hash<u32, device>[{n}] class linearizable   # who holds each spilled block")
        if self.o.disaggregate:
            n = self.L * len(self.nics_used)
            self.maps.append(f"map kv_sent: array<u32, u64>[{n}] class per_device merge sum     # key l * {len(self.nics_used)} + NIC")

    # ---- the flow -----------------------------------------------------------------------------
    def _ar_done(self, kind: str, l: str, r: int) -> str:  # noqa: E741
        """Name of the edge that completes rank ``r``'s all-reduce ``kind`` (``a``/``f``) of layer ``l``."""
        return f"ag_{kind}[{l}, {r}]" if self.o.tp > 1 else f"rs_{kind}[{l}, 0, 0]"

    def _hidden(self, r: int) -> str:
        """The region holding rank ``r``'s full hidden states between sub-layers: the residual
        itself at tp 1, else the all-gathered copy (the residual is reduced chunk by chunk)."""
        return f"hs{r}" if self.o.tp > 1 else f"act{r}"

    def _flow(self) -> Program:
        prog: Program = []
        for r in range(self.o.tp):
            prog += self._rank(r)
        prog += self._all_reduce("a")
        prog += self._all_reduce("f")
        prog += self._checkpoints()
        prog += self._spills()
        if self.o.disaggregate:
            prog += self._sends()
        for r in range(self.o.tp):
            prog += self._free(r)
        return prog

    def _rank(self, r: int) -> Program:
        g, L, B, tp = self.gpus[r], self.L, self.B, self.o.tp
        leases = "".join(f"\n    lease tmp{r} to {p}" for q, p in enumerate(self.gpus) if q != r)
        out: Program = [Note(""), Note(f"rank {r} on {g}" + (": its partial outputs are leased to the other ranks for the"
                                                               " all-reduce" if leases else "")),
                        Note("embedding lookup: read the rank's vocabulary shard, write the hidden states"),
                        Stmt(f"edge emb[{r}]: read wemb{r} by {g}.launch"),
                        Stmt(f"edge embed[{r}]: write act{r} by {g}.launch after emb[{r}]{leases}")]
        if self.stream:
            load = f"edge wload[$(l), {r}]: move whost{r}[$(l)] -> wslot{r}[$(l % 2)] by {g}.copy_done stream h2d"
            last_moe = f"wf[$(l - 2), {r}]" if self.sh_w else f"wq[$(l - 2), {r}]"
            out.append(Loop("l", 0, min(2, L), [Stmt(load)]))
            out.append(Loop("l", 2, L, [
                Note("slot l % 2 held layer l - 2: its last weight read must be done before the slot is overwritten"),
                If(f"l - 2 < {self.fd}", [Stmt(f"{load} after wf[$(l - 2), {r}]")], [Stmt(f"{load} after {last_moe}")])
                if self.fd < L else Stmt(f"{load} after wf[$(l - 2), {r}]")]))
            wq_src = f"wslot{r}[$(l % 2)][0, +{self.attn_w}]"
            wload = f", wload[$(l), {r}]"
        else:
            wq_src, wload = f"wattn{r}[$(l)]", ""
        lease = f"\n    lease kvb{r}[$(l), $(b)] to {self.nic_of[r]}" if r in self.nic_of else ""
        body_first = [Stmt(f"edge wq[$(l), {r}]: read {wq_src} by {g}.launch after embed[{r}]{wload} reuse {self.attn_w} rw 1:0")]
        prev = f"{self._ar_done('f', '$(l - 1)', r)}"
        guard = f"\n    guard layer_done[$((l - 1) * {tp} + {r})] == 1"
        wq = f"edge wq[$(l), {r}]: read {wq_src} by {g}.launch after {prev}{wload}"
        if r == 0 and self.n_ckpt:
            e = self.ckpt_every
            body_rest: Program = [If(f"(l - 1) % {e} == {e - 1}",
                                     [Note("the hidden states were just checkpointed: wait for the copy before they change"),
                                      Stmt(f"{wq}, ckpt[$((l - 1) / {e})] reuse {self.attn_w} rw 1:0{guard}")],
                                     [Stmt(f"{wq} reuse {self.attn_w} rw 1:0{guard}")])]
        else:
            body_rest = [Stmt(f"{wq} reuse {self.attn_w} rw 1:0{guard}")]
        out.append(Loop("l", 0, 1, body_first))
        out.append(Loop("l", 1, L, body_rest))
        out.append(Loop("l", 0, L, [
            Note(f"one KV block: {self.BT} tokens x {self.kv_tok} B = {self.block} B"),
            Loop("b", 0, B, [Stmt(f"edge kvw[$(l), {r}, $(b)]: write kvb{r}[$(l), $(b)] by {g}.launch after wq[$(l), {r}]"
                                  f"{lease}\n    update kv_written[0] = 1")]),
            Note("attention reads the layer's whole KV cache and writes its partial output"),
            Stmt(f"edge attn[$(l), {r}]: move kvl{r}[$(l)] -> tmp{r} by {g}.launch after kvw[$(l), {r}, *]\n"
                 f"    bytes {self.layer_kv} reuse {self.layer_kv} rw 1:1"),
        ]))
        out += self._ffn(r)
        return out

    def _ffn(self, r: int) -> Program:
        g = self.gpus[r]
        out: Program = []
        ready = self._ar_done("a", "$(l)", r)
        if self.fd:
            src = (f"wslot{r}[$(l % 2)][{self.attn_w}, +{self.ffn_w}]" if self.stream else f"wffn{r}[$(l)]")
            out.append(Loop("l", 0, self.fd, [
                Note("dense FFN: stream the weights, up (gate and up) into the intermediate, down into the partial output"),
                Stmt(f"edge wf[$(l), {r}]: read {src} by {g}.launch after {ready} reuse {self.ffn_w} rw 1:0"),
                Stmt(f"edge up[$(l), {r}]: write inter{r}[0, +{self.inter_act}] by {g}.launch after wf[$(l), {r}]"),
                Stmt(f"edge down[$(l), {r}]: write tmp{r} by {g}.launch after up[$(l), {r}]"),
            ]))
        if not self.moe_layers:
            return out
        fd, T, H = self.fd, self.T, self.m.hidden * self.db
        j, p = f"$(l - {fd})", f"$((l - {fd}) % 2)"
        k, tp = self.m.moe.active, self.o.tp  # type: ignore[union-attr]
        load = f"edge wst[$(l), {r}]: move wexp{r}[{j}] -> wstage{r}[{p}] by {g}.copy_done stream h2d"
        xf = f"replicate({k}) |> scatter({tp})" if tp > 1 else f"replicate({k})"
        body: Program = []
        if self.sh_w:
            src = (f"wslot{r}[$(l % 2)][{self.attn_w}, +{self.sh_w}]" if self.stream else f"wsh{r}[{j}]")
            body += [Note("shared experts run on every token, densely; their output starts the combine buffer"),
                     Stmt(f"edge wf[$(l), {r}]: read {src} by {g}.launch after {ready} reuse {self.sh_w} rw 1:0"),
                     Stmt(f"edge up[$(l), {r}]: write inter{r}[0, +{self.sh_act}] by {g}.launch after wf[$(l), {r}]"),
                     Stmt(f"edge down[$(l), {r}]: write tmp{r} by {g}.launch after up[$(l), {r}]")]
        else:
            body += [Note("no shared expert: clear the combine buffer"),
                     Stmt(f"edge down[$(l), {r}]: write tmp{r} by {g}.launch after {ready}")]
        init = f"down[$(l), {r}]"
        body += [
            Note(f"fused MoE: copy each token to its top-{k} expert slots" + (f", keeping this rank's 1/{tp}" if tp > 1 else "")
                 + f"; stream the weights of the rank's {self.E_loc} experts; one grouped GEMM; sum each token's outputs"),
            Stmt(f"edge disp[$(l), {r}]: move {self._hidden(r)} -> xe{r} by {g}.launch after {ready}\n    transform {xf}"),
            If(f"l >= {fd + 2}", [Note(f"slot (l - {fd}) % 2 held layer l - 2: its GEMM must be done with it"),
                                  Stmt(f"{load} after ew[$(l - 2), {r}]")], [Stmt(load)]),
            Stmt(f"edge ew[$(l), {r}]: read wstage{r}[{p}] by {g}.launch after wst[$(l), {r}] reuse {self.E_loc * self.exp_w} rw 1:0"),
            Stmt(f"edge ex[$(l), {r}]: move xe{r} -> ye{r} by {g}.launch after disp[$(l), {r}], ew[$(l), {r}]"),
        ]
        if self.slices > 1:
            s = self.slices
            body.append(Note(f"gather back (moe_sum): add each of the {s} top-k slices [t, i, :] of the outputs into the tokens' rows"))
            body.append(Loop("i", 0, s, [Stmt(
                f"edge comb[$(l), {r}, $(i)]: reduce(sum) ye{r}[$(i * {H}), elem {H}, stride {s * H}, count {T}] -> tmp{r} "
                f"by {g}.launch after ex[$(l), {r}], {init}")]))
        else:
            body.append(Note("gather back: add the rank's expert outputs into their tokens' rows"))
            body.append(Stmt(f"edge comb[$(l), {r}, 0]: reduce(sum) ye{r} -> tmp{r} by {g}.launch after ex[$(l), {r}], {init}"))
        out.append(Loop("l", fd, self.L, body))
        return out

    def _all_reduce(self, kind: str) -> Program:
        tp, L = self.o.tp, self.L
        what = "attention" if kind == "a" else "FFN"
        if kind == "a":
            before = "attn[$(l), *]"
        elif self.moe_layers and self.fd:
            before = None
        elif self.moe_layers:
            before = "comb[$(l), *, *]"
        else:
            before = "down[$(l), *]"
        out: Program = [Note(""), Note(f"{what} all-reduce into the residual stream")]

        def body(before: str) -> Program:
            mw = "\n    map_write layer_done[$(l * %d + %d)] = 1" % (tp, 0) if (kind == "f" and tp == 1) else ""
            if tp == 1:
                return [Stmt(f"edge rs_{kind}[$(l), 0, 0]: reduce(sum) tmp0 -> act0 by {self.gpus[0]}.launch after {before}{mw}")]
            c = self.chunk
            res: Program = []
            res.append(Note("reduce-scatter: rank q pulls chunk q of every rank's partial output (P2P read under a lease)"
                            " and adds it to its own residual"))
            for r in range(tp):
                for q in range(tp):
                    res.append(Stmt(f"edge rs_{kind}[$(l), {r}, {q}]: reduce(sum) tmp{r}[{q * c}, +{c}] -> act{q}[{q * c}, +{c}] "
                                    f"by {self.gpus[q]}.launch after {before}"))
            res.append(Note("all-gather: every rank collects the reduced chunks into its full copy of the hidden states"))
            for q in range(tp):
                mw = f"\n    map_write layer_done[$(l * {tp} + {q})] = 1" if kind == "f" else ""
                res.append(Stmt(f"edge ag_{kind}[$(l), {q}]: move act{q}[{q * c}, +{c}] -> hs{q} by {self.gpus[q]}.launch "
                                f"after rs_{kind}[$(l), *, *]\n    transform gather({tp}){mw}"))
            return res

        if before is None:  # dense layers then MoE layers (DeepSeek's first_k_dense_replace)
            out.append(Loop("l", 0, self.fd, body("down[$(l), *]")))
            out.append(Loop("l", self.fd, L, body("comb[$(l), *, *]")))
        else:
            out.append(Loop("l", 0, L, body(before)))
        return out

    def _checkpoints(self) -> Program:
        if not self.n_ckpt:
            return []
        e, g = self.ckpt_every, self.gpus[0]
        codec = CHECKPOINT_CODEC.name
        out: Program = [Note(""), Note(f"every {e} layers, checkpoint the hidden states: {codec} (a compressible intermediate;"
                                       " slots sized by the worst case), crc32c, persist")]
        for w, a, b in self.ckpt_windows:
            sp = _space_name(w.name)
            home = self.home[w.name]
            slot = f"$(i - {a})" if a else "$(i)"
            out.append(Loop("i", a, b, [Stmt(
                f"edge ckpt[$(i)]: move {self._hidden(0)} -> ck_{sp}[{slot}] by {g}.copy_done after {self._ar_done('f', f'$(i * {e} + {e - 1})', 0)}\n"
                f"    transform compress({codec}) |> checksum(crc32c) |> persist\n"
                f"    handoff ck_{sp}[{slot}]: {g} -> {home}")]))
        return out

    def _spills(self) -> Program:
        if not self.spill_layers:
            return []
        G, B, first = self.G, self.B, self.L - self.spill_layers
        q = (f"quantize({self.m.dtype} -> fp8, group {QUANT_GROUP}, scale fp32) |> checksum(crc32c)"
             if self.spill_dtype == "fp8" else
             (f"quantize({self.m.dtype} -> {self.spill_dtype}) |> checksum(crc32c)" if self.spill_dtype != self.m.dtype
              else "checksum(crc32c)"))
        out: Program = [Note(""), Note(f"spill the KV of layers {first}..{self.L} to CXL as {self.spill_dtype}, then hand each slot to"
                                       " the expander")]
        for gi, r in enumerate(self.primaries):
            g = self.gpus[r]
            for w, a, b, _unit in self.spill_windows:
                sp = _space_name(w.name)
                home = self.home[w.name]
                slot = f"kvs_{sp}_g{gi}[$(l - {a}), $(b)]"
                key = f"$(((l - {first}) * {G} + {gi}) * {B} + b)"
                out.append(Loop("l", a, b, [Loop("b", 0, B, [Stmt(
                    f"edge spill[$(l), {r}, $(b)]: move kvb{r}[$(l), $(b)] -> {slot} by {g}.copy_done after kvw[$(l), {r}, $(b)] "
                    f"stream d2h\n    transform {q}\n    handoff {slot}: {g} -> {home}\n    update block_owner[{key}] = {home}")])]))
        return out

    def _sends(self) -> Program:
        B, L, R = self.B, self.L, self.R
        out: Program = [Note(""), Note("disaggregated prefill: the NIC sends every KV block to the decode node over the posted"
                                       " RDMA link,"),
                        Note("flushes the link once per layer (only a flush makes posted writes visible), then hands the"
                             " layer over")]
        nn = len(self.nics_used)
        for gi, r in enumerate(self.primaries):
            nic = self.nic_of[r]
            n = self.nics_used.index(nic)
            rep = f"\n    transform replicate({R})" if R > 1 else ""
            per = self.block * R
            out.append(Loop("l", 0, L, [Loop("b", 0, B, [Stmt(
                f"edge send[$(l), {r}, $(b)]: move kvb{r}[$(l), $(b)] -> rkv{gi}[$(l)][$(b * {per}), +{per}] by {nic}.tx "
                f"after kvw[$(l), {r}, $(b)]{rep}\n    update kv_sent[$(l * {nn} + {n})] = 1")])]))
        for n, nic in enumerate(self.nics_used):
            ranks = [r for r in self.primaries if self.nic_of[r] == nic]
            after = ", ".join(f"send[$(l), {r}, *]" for r in ranks)
            hand = "".join(f"\n    handoff rkv{self.primaries.index(r)}[$(l)]: {nic} -> decode0" for r in ranks)
            reads = [Stmt(f"edge dec[$(l), {self.primaries.index(r)}]: read rkv{self.primaries.index(r)}[$(l)] by decode0.launch "
                          f"after flush[$(l), {n}]") for r in ranks]
            out.append(Loop("l", 0, L, [Stmt(f"edge flush[$(l), {n}]: flush {nic} -- decode0 by {nic}.tx after {after}\n"
                                             f"    aggregate kv_sent[$(l * {nn} + {n})]{hand}")] + reads))
        return out

    def _free(self, r: int) -> Program:
        g, first = self.gpus[r], self.L - self.spill_layers
        base = f"attn[$(l), {r}]"
        if r in self.nic_of:
            base += f", send[$(l), {r}, *]"
        spilled = r in self.primaries and self.spill_layers
        out: Program = [Note(""), Note(f"rank {r}: return each layer's KV blocks to the pool once nothing uses them")]
        if first > 0 or not spilled:
            out.append(Loop("l", 0, first if spilled else self.L, [
                Stmt(f"edge free[$(l), {r}]: release kvl{r}[$(l)] return_pool by {g}.free after {base}")]))
        if spilled:
            out.append(Loop("l", first, self.L, [
                Stmt(f"edge free[$(l), {r}]: release kvl{r}[$(l)] return_pool by {g}.free after {base}, spill[$(l), {r}, *]")]))
        return out


def _fits64(n: int, what: str) -> None:
    """Raise FX-GEN-003 when a space of ``n`` bytes cannot be addressed with 64 bits."""
    if n >= U64_END:
        raise _fit_error(f"{what} would need {n} B, beyond 64-bit addresses", help="lower --tokens or the layer count")


def _space_name(window: str) -> str:
    """An ``.fx`` space name for a window (``decoder3.0`` -> ``decoder3_0``)."""
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in window)


def _natural(name: str) -> tuple:
    """Sort key that orders ``mem2`` before ``mem10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))
