"""Plan a prefill job: every size, placement and fit decision of ``fxverify gen prefill``.

Takes a ``ModelSpec`` (``hf_config``), an optional ``Topology`` (``nccl_topo``), an optional
``CxlFabric`` (``cxl_list``) and ``PrefillOptions``; produces a ``PrefillPlan``: frozen plain data
(byte counts, offsets, addresses, devices and links, which window holds which layers) that
``prefill_render`` turns into text without computing a size or deciding a fit.

Planning runs in a fixed order, and the first problem stops it (so a run reports one diagnostic,
always the same one): options and sizes, the fabric, each rank's HBM, the CXL windows, host and
remote memory, the policy name; ``prefill_fabric`` places the devices and links. ``plan_prefill`` raises ``InputProblem`` carrying FX-GEN-004 for
an option out of range or in conflict with the model, and FX-GEN-003 when something does not fit
(HBM, CXL capacity, the 64-bit address space, too few GPUs, no NIC). ``specs/generators.md`` gives
every formula with worked numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import diagnostic
from fxverify.gen import KV_DTYPES
from fxverify.gen.cxl_list import CxlFabric, Window
from fxverify.gen.hf_config import ModelSpec
from fxverify.gen.input_file import InputProblem
from fxverify.gen.nccl_topo import Topology
from fxverify.gen.prefill_fabric import FabricPlan, place_fabric
from fxverify.vocab import CODECS, GIB, KIB, MIB, U64_END, canonical_dtype, dtype_bits, in_unit

# CXL spill units and checkpoint slots are whole 4 KiB pages (the x86-64 base page;
# specs/generators.md), so no two of them share a page.
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
# Requests in flight per rank: the KV pool holds this many requests' caches (slots), and request q
# takes slot q % KV_SLOTS once request q - KV_SLOTS has returned its blocks, as a paged-KV server
# (vLLM) admits requests while free blocks remain. Two slots let one request's KV still be sent
# while the next one computes; more requests than slots is the point (blocks are reused).
KV_SLOTS = 2


def align(n: int, a: int) -> int:
    """``n`` rounded up to a multiple of ``a`` (both in the same unit, ``a > 0``)."""
    return -(-n // a) * a


@dataclass(frozen=True)
class PrefillOptions:
    """Options of ``fxverify gen prefill`` (units: tokens, bytes, layers).

    ``spill`` is a fraction of layers as text (``"0.25"``) or ``None`` for the default (0.25 with
    CXL windows, else 0); ``ckpt_every`` ``None`` picks 8, widened until the checkpoints fit the
    pmem windows; ``layers`` keeps only the first N layers (quick checks); ``hbm_gib`` is each
    GPU's memory, which NCCL topology files do not record (80 GiB: H100 SXM, A100 80 GB); ``name``
    the policy name; ``command`` the command line echoed in the header; ``requests`` how many
    prefill requests run one after another through one KV block pool per rank (``KV_SLOTS``)."""

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
    requests: int = 1


@dataclass(frozen=True)
class Sizes:
    """Shapes of the job on one tensor-parallel rank. Counts are layers, tokens or blocks; every
    ``*_bytes`` is bytes; weights are in their stored format (quantized when the config says so).

    KV sharding (``specs/generators.md``, "KV heads per rank"): the cache splits by the model's
    ``cache_heads`` H into ``groups`` G = min(tp, H); with tp > H each head is held by ``replicas``
    R = tp / H ranks, and rank ``g x R`` is the first (primary) rank of group g.
    """

    layers: int  # layers in the policy (``--layers``, else the model's)
    tokens: int  # prompt tokens of the request
    block_tokens: int  # tokens per KV block
    blocks: int  # KV blocks per layer: tokens / block_tokens
    dtype_bytes: int  # bytes per element of the model's dtype
    heads_per_rank: int  # KV heads (MLA: latents) one rank holds
    replicas: int  # R: ranks that hold the same KV head
    groups: int  # G: KV groups, each spilled and sent once by its primary rank
    kv_token_bytes: int  # KV of one token in one layer, on one rank
    kv_bytes_per_token: int  # KV of one token over the policy's layers, unsharded
    block_bytes: int  # one KV block on one rank
    layer_kv_bytes: int  # one layer's KV cache on one rank
    act_bytes: int  # the hidden states: tokens x hidden x dtype
    row_bytes: int  # one token's hidden state: hidden x dtype
    chunk_bytes: int  # one all-reduce chunk: act_bytes / tp
    chunk_offsets: tuple[int, ...]  # where chunk q starts in the hidden states, for each rank q
    attn_weight_bytes: int  # one layer's attention weights on one rank
    embed_weight_bytes: int  # the rank's vocabulary shard of the embedding (and LM head)
    weight_elem_bytes: int  # bytes per weight element: the dtype's, or the quantized format's
    dense_layers: int  # layers [0, dense_layers) run a dense FFN
    ffn_width: int  # the dense FFN width on one rank: intermediate_size / tp
    ffn_weight_bytes: int  # one dense layer's FFN weights on one rank
    inter_bytes: int  # the dense FFN intermediate on one rank (0 without dense layers)
    moe_layers: int  # layers [dense_layers, layers) route tokens to experts
    experts_per_rank: int  # routed experts one rank holds (expert parallelism)
    expert_ranges: tuple[tuple[int, int], ...]  # global experts [first, end) of each rank
    expert_slot_bytes: int  # the rank's expert slots: tokens x top_k / tp rows of the hidden size
    slices: int  # top-k slices of the expert slots a rank gathers back (top_k / tp, else 1)
    slice_stride: int  # bytes between a token's rows in one slice: slices x row_bytes
    expert_weight_bytes: int  # one expert's FFN weights
    rank_expert_bytes: int  # the weights of all the rank's experts of one MoE layer
    shared_weight_bytes: int  # one MoE layer's shared-expert weights on one rank (0 without)
    shared_inter_bytes: int  # the shared-expert intermediate on one rank
    spill_fraction: Fraction  # fraction of layers spilled (``--spill`` or its default)
    spill_layers: int  # the last floor(spill_fraction x layers) layers spill their KV
    first_spilled: int  # the first spilled layer: layers - spill_layers
    requests: int  # prefill requests, one after another (``--requests``)
    kv_slots: int  # requests' KV caches the pool holds: min(requests, KV_SLOTS); request q uses slot q % kv_slots


@dataclass(frozen=True)
class HbmLayout:
    """One rank's HBM (every rank has the same layout). ``stream``: weights are streamed per
    layer from host memory into two slots of ``layer_weight_bytes`` each, because resident weights
    do not fit; ``inter_bytes`` the shared FFN-intermediate buffer; ``offsets`` the byte offset of
    each item (``kv``, ``act``, ``tmp``, ``wemb``, ``hs``, ``inter``, ``wslot`` or ``wattn``/
    ``wffn``/``wsh``, ``xe``, ``ye``, ``wstage``: only those the job has), each 2 MiB aligned;
    ``used_bytes`` the end of the last item."""

    stream: bool
    layer_weight_bytes: int
    inter_bytes: int
    offsets: dict[str, int]
    used_bytes: int


@dataclass(frozen=True)
class SpillWindow:
    """Spilled layers ``[first, end)`` in a volatile ``window``: one ``unit_bytes`` unit per layer
    (the groups' slots side by side, aligned to the window's interleave), and the host-physical
    address of KV group g's slots in the first unit at ``group_bases[g]``."""

    window: Window
    first: int
    end: int
    unit_bytes: int
    group_bases: tuple[int, ...]


@dataclass(frozen=True)
class CheckpointWindow:
    """Checkpoints ``[first, end)`` in a pmem ``window``, one slot each from its base."""

    window: Window
    first: int
    end: int


@dataclass(frozen=True)
class CxlLayout:
    """What goes into the CXL windows. The spill: ``spill_dtype`` (``fp8`` quantizes with one
    fp32 scale per ``QUANT_GROUP`` elements), a block of ``spill_elems`` elements of
    ``spill_elem_bytes`` each into a slot of ``spill_slot_bytes``, and the ``spill_windows``.
    Checkpoints: ``ckpt_bound_bytes`` is ``CHECKPOINT_CODEC``'s worst case for the hidden states,
    ``ckpt_slot_bytes`` that bound page-aligned; one every ``ckpt_every`` layers (0: none),
    ``checkpoints`` in all, placed in ``ckpt_windows``."""

    spill_dtype: str
    spill_elems: int
    spill_elem_bytes: int
    spill_slot_bytes: int
    spill_windows: tuple[SpillWindow, ...]
    ckpt_bound_bytes: int
    ckpt_slot_bytes: int
    ckpt_every: int
    checkpoints: int
    ckpt_windows: tuple[CheckpointWindow, ...]


@dataclass(frozen=True)
class HostRegion:
    """A region of pinned host memory for rank ``rank`` at byte offset ``base`` of its space:
    ``kind`` ``whost`` (every layer's streamed weights) or ``wexp`` (the rank's experts)."""

    kind: str
    rank: int
    base: int


@dataclass(frozen=True)
class HostSpace:
    """Host memory ``name`` (``dram0``) on CPU ``cpu``, ``size_bytes`` (its regions, rounded up
    to a GiB) and the ``regions`` in it, 2 MiB aligned."""

    name: str
    cpu: str
    size_bytes: int
    regions: tuple[HostRegion, ...]


@dataclass(frozen=True)
class RemoteLayout:
    """The decode node's KV memory (``--disaggregate``): ``size_bytes`` (rounded up to a GiB),
    one layer of one KV group in ``layer_bytes`` and one of its blocks in ``block_bytes`` (both
    times the replicas), and KV group g's buffers (every request's layers) at ``group_bases[g]``."""

    size_bytes: int
    layer_bytes: int
    block_bytes: int
    group_bases: tuple[int, ...]


@dataclass(frozen=True)
class PrefillPlan:
    """A finished plan: the policy ``name``, the inputs (``model``, ``topo``, ``cxl``,
    ``options``), and every decision, in the order they are made. Map capacities are entries:
    ``layer_done`` one per request, layer and rank, ``block_owner`` one per spilled block and
    group, ``kv_sent`` one per request, layer and sending NIC."""

    name: str
    model: ModelSpec
    topo: Topology | None
    cxl: CxlFabric | None
    options: PrefillOptions
    sizes: Sizes
    fabric: FabricPlan
    hbm: HbmLayout
    cxl_layout: CxlLayout
    host: tuple[HostSpace, ...]
    remote: RemoteLayout | None
    layer_done_entries: int
    block_owner_entries: int
    kv_sent_entries: int


def plan_prefill(m: ModelSpec, topo: Topology | None, cxl: CxlFabric | None, o: PrefillOptions) -> PrefillPlan:
    """Plan a prefill of ``o.tokens`` tokens of model ``m`` over ``o.tp`` GPUs of ``topo`` (or
    of an assumed NVSwitch machine) with the CXL windows of ``cxl``.

    Returns the plan. Raises ``InputProblem`` with FX-GEN-004 (an option out of range or in
    conflict with the model) or FX-GEN-003 (HBM, CXL or address space too small, too few GPUs or
    no NIC), the first problem in planning order. Deterministic: same inputs, same plan."""
    s = _sizes(m, cxl, o)
    fabric = place_fabric(topo, cxl, o.tp, s.groups, s.replicas, o.disaggregate, alloc=s.requests > 1)
    hbm = _hbm(o, s)
    cxl_layout = _cxl_layout(o, s, fabric)
    host = _host(s, hbm, fabric)
    remote = _remote(s, fabric) if o.disaggregate else None
    return PrefillPlan(
        name=_policy_name(m, o), model=m, topo=topo, cxl=cxl, options=o, sizes=s, fabric=fabric, hbm=hbm,
        cxl_layout=cxl_layout, host=host, remote=remote, layer_done_entries=s.requests * s.layers * o.tp,
        block_owner_entries=s.spill_layers * s.groups * s.blocks,
        kv_sent_entries=s.requests * s.layers * len(fabric.nics_used))


# ---- sizes ------------------------------------------------------------------------------------

def _multiples(tokens: int, block: int) -> str:
    """The ``--tokens`` values nearest ``tokens`` that are whole blocks: the one below first
    (when there is one), as a prompt that is already too long should not be lengthened."""
    down, up = tokens - tokens % block, align(tokens, block)
    return f"use --tokens {down} or {up}" if down else f"use --tokens {up}"


def _sizes(m: ModelSpec, cxl: CxlFabric | None, o: PrefillOptions) -> Sizes:
    """Check the options against the model and size everything on one rank (FX-GEN-004)."""
    if o.kv_dtype not in KV_DTYPES:
        raise InputProblem(diagnostic(codes.GEN_004, f"--kv-dtype {o.kv_dtype} is not one of {', '.join(KV_DTYPES)}",
                                      help="spilled KV blocks are fp8 (with per-group scales), bf16 or fp16"))
    if o.tokens < 1 or o.block_tokens < 1:
        raise InputProblem(diagnostic(codes.GEN_004, "--tokens and --block-tokens must be positive",
                                      help="for example --tokens 8192 --block-tokens 16"))
    if o.tokens % o.block_tokens:
        raise InputProblem(diagnostic(codes.GEN_004, f"--tokens {o.tokens} is not a multiple of --block-tokens {o.block_tokens}",
                                      help=_multiples(o.tokens, o.block_tokens) + ": paged KV caches allocate whole blocks"))
    if o.tp < 1:
        raise InputProblem(diagnostic(codes.GEN_004, f"--tp {o.tp} must be at least 1",
                                      help="the tensor-parallel degree counts GPUs"))
    if not 1 <= o.hbm_gib < U64_END // GIB:  # the space must end below 2^64
        raise InputProblem(diagnostic(codes.GEN_004, f"--hbm-gib {o.hbm_gib} is outside 1..{U64_END // GIB - 1}",
                                      help="for example --hbm-gib 80"))
    L = o.layers if o.layers is not None else m.layers
    if not 1 <= L <= m.layers:
        raise InputProblem(diagnostic(codes.GEN_004, f"--layers {o.layers} is outside 1..{m.layers}",
                                      help=f"`{m.name}` has {m.layers} layers"))
    T, BT = o.tokens, o.block_tokens
    B = T // BT
    db = m.dtype_bytes
    tp, H = o.tp, m.cache_heads
    what = "its single MLA latent" if m.mla else f"{H} KV heads"
    if tp <= H:
        if H % tp:
            raise InputProblem(diagnostic(codes.GEN_004, f"--tp {tp} does not divide the {what} of `{m.name}`",
                                          help=f"choose --tp among the divisors of {H}, or a multiple of it"))
        hpr, R, G = H // tp, 1, tp
    else:
        if tp % H:
            raise InputProblem(diagnostic(codes.GEN_004, f"--tp {tp} is neither a divisor nor a multiple of the {what} of `{m.name}`",
                                          help="serving engines replicate KV heads only in whole groups"))
        hpr, R, G = 1, tp // H, H
    kv_tok = m.kv_bytes_per_token_per_layer * hpr // H
    block = BT * kv_tok
    act = T * m.hidden * db
    for field_, n in (("hidden_size", m.hidden), ("intermediate_size", m.inter)):
        if n % tp:
            raise InputProblem(diagnostic(codes.GEN_004, f"--tp {tp} does not divide {field_} {n} of `{m.name}`",
                                          help="tensor parallelism shards these dimensions evenly"))
    chunk = act // tp
    fd = min(m.moe.first_dense, L) if m.moe else L
    E_loc = cap = exp_w = sh_w = sh_act = slices = 0
    if m.moe:
        e = m.moe
        if e.experts % tp:
            raise InputProblem(diagnostic(codes.GEN_004, f"--tp {tp} does not divide the {e.experts} routed experts of `{m.name}`",
                                          help="experts are spread evenly over the ranks (expert parallelism)"))
        E_loc = e.experts // tp
        if (act * e.active) % tp:
            raise InputProblem(diagnostic(codes.GEN_004, f"the {e.active} expert copies of the hidden states ({act} B each) "
                                          f"do not split over --tp {tp}",
                                          help="choose --tokens so that the expert slots divide evenly over the ranks"))
        cap = act * e.active // tp  # capacity factor 1 (GShard, Switch): tokens x top_k / tp rows
        if e.active > tp and e.active % tp:
            raise InputProblem(diagnostic(codes.GEN_004, f"--tp {tp} does not divide top_k {e.active} of `{m.name}`",
                                          help="each rank must hold a whole number of every token's expert slots"))
        slices = e.active // tp if e.active % tp == 0 else 1
        exp_w = m.ffn_weight_bytes(e.inter)
        sh = e.shared * e.shared_inter
        if sh % tp:
            raise InputProblem(diagnostic(codes.GEN_004, f"--tp {tp} does not divide the shared-expert width {sh}",
                                          help="choose another --tp"))
        sh_w = m.ffn_weight_bytes(sh // tp) if sh else 0
        sh_act = T * (sh // tp) * db
    if o.requests < 1:
        raise InputProblem(diagnostic(codes.GEN_004, f"--requests {o.requests} must be at least 1",
                                      help="it counts the prefill requests sharing the KV block pool"))
    frac = _spill_fraction(cxl, o)
    spill_layers = math.floor(frac * L)
    return Sizes(
        layers=L, tokens=T, block_tokens=BT, blocks=B, dtype_bytes=db, heads_per_rank=hpr, replicas=R, groups=G,
        kv_token_bytes=kv_tok, kv_bytes_per_token=L * m.kv_bytes_per_token_per_layer, block_bytes=block,
        layer_kv_bytes=B * block, act_bytes=act, row_bytes=m.hidden * db, chunk_bytes=chunk,
        chunk_offsets=tuple(q * chunk for q in range(tp)), attn_weight_bytes=m.attn_weight_bytes(tp),
        embed_weight_bytes=m.embedding_bytes(tp), weight_elem_bytes=m.quant.elem_bytes if m.quant else db,
        dense_layers=fd, ffn_width=m.inter // tp, ffn_weight_bytes=m.ffn_weight_bytes(m.inter // tp),
        inter_bytes=T * (m.inter // tp) * db if fd else 0, moe_layers=L - fd, experts_per_rank=E_loc,
        expert_ranges=tuple((r * E_loc, (r + 1) * E_loc) for r in range(tp)), expert_slot_bytes=cap, slices=slices,
        slice_stride=slices * m.hidden * db, expert_weight_bytes=exp_w, rank_expert_bytes=E_loc * exp_w,
        shared_weight_bytes=sh_w, shared_inter_bytes=sh_act, spill_fraction=frac, spill_layers=spill_layers,
        first_spilled=L - spill_layers, requests=o.requests, kv_slots=min(o.requests, KV_SLOTS))


def _spill_fraction(cxl: CxlFabric | None, o: PrefillOptions) -> Fraction:
    """``--spill`` as an exact fraction; its default is 1/4 when CXL windows exist, else 0."""
    if o.spill is None:
        return Fraction(1, 4) if cxl is not None and cxl.windows() else Fraction(0)
    try:
        frac = Fraction(o.spill)
    except (ValueError, ZeroDivisionError):
        raise InputProblem(diagnostic(codes.GEN_004, f"--spill {o.spill} is not a fraction",
                                      help="for example --spill 0.25")) from None
    if not 0 <= frac <= 1:
        raise InputProblem(diagnostic(codes.GEN_004, f"--spill {o.spill} is outside 0..1",
                                      help="it is the fraction of layers spilled"))
    if frac and cxl is None:
        raise InputProblem(diagnostic(codes.GEN_004, f"--spill {o.spill} needs CXL memory",
                                      help="pass --cxl with a `cxl list` listing, or --spill 0"))
    return frac


# ---- HBM --------------------------------------------------------------------------------------

def _hbm(o: PrefillOptions, s: Sizes) -> HbmLayout:
    """One rank's HBM: weights resident if they fit ``--hbm-gib``, else streamed.

    Returns the layout. Raises ``InputProblem`` with FX-GEN-003 when neither fits: the 64-bit one
    when the need is 2^64 B or more, which no ``--hbm-gib`` can hold (its range ends below 2^64 B)."""
    hbm = o.hbm_gib * GIB
    layer_w = s.attn_weight_bytes + max(s.ffn_weight_bytes if s.dense_layers else 0,
                                        s.shared_weight_bytes if s.moe_layers else 0)
    stream = False
    items = _hbm_items(s, o.tp, layer_w, stream=False)
    if items[-1][1] > hbm:
        stream = True
        items = _hbm_items(s, o.tp, layer_w, stream=True)
    used = items[-1][1]
    _fits64(used, "one rank's HBM", "raise --tp, or lower --tokens or the layer count")
    if used > hbm:
        raise InputProblem(diagnostic(codes.GEN_003, f"one rank needs {used} B ({in_unit(used, GIB, 'GiB')}) of HBM; "
                                      f"each GPU has {o.hbm_gib} GiB",
                                      help="raise --tp, lower --tokens, or pass --hbm-gib for larger GPUs"))
    offsets, start = {}, 0
    for name, end in items:
        offsets[name] = start
        start = end
    return HbmLayout(stream, layer_w, max(s.inter_bytes, s.shared_inter_bytes), offsets, used)


def _hbm_items(s: Sizes, tp: int, layer_w: int, stream: bool) -> list[tuple[str, int]]:
    """``(item, offset after it)`` for one rank's HBM, in layout order, 2 MiB aligned."""
    items: list[tuple[str, int]] = [("kv", s.kv_slots * s.layers * s.layer_kv_bytes), ("act", s.act_bytes), ("tmp", s.act_bytes),
                                    ("wemb", s.embed_weight_bytes)]
    if tp > 1:
        items.append(("hs", s.act_bytes))
    inter = max(s.inter_bytes, s.shared_inter_bytes)
    if inter:
        items.append(("inter", inter))
    if stream:
        items.append(("wslot", 2 * layer_w))
    else:
        items += [("wattn", s.layers * s.attn_weight_bytes)]
        if s.dense_layers:
            items.append(("wffn", s.dense_layers * s.ffn_weight_bytes))
        if s.moe_layers and s.shared_weight_bytes:
            items.append(("wsh", s.moe_layers * s.shared_weight_bytes))
    if s.moe_layers:
        items += [("xe", s.expert_slot_bytes), ("ye", s.expert_slot_bytes), ("wstage", 2 * s.rank_expert_bytes)]
    out, at = [], 0
    for name, n in items:
        at = align(at + n, ALIGN)
        out.append((name, at))
    return out


# ---- CXL windows ------------------------------------------------------------------------------

def _cxl_layout(o: PrefillOptions, s: Sizes, f: FabricPlan) -> CxlLayout:
    """The spill into volatile windows and the checkpoints into pmem windows. FX-GEN-003 when
    they do not fit, FX-GEN-004 for a negative ``--ckpt-every``."""
    fp8 = o.kv_dtype.startswith("fp8")
    spill_dtype = "fp8" if fp8 else o.kv_dtype
    elems = s.block_bytes // s.dtype_bytes
    if fp8:
        elem_bytes = FP8_BYTES
        slot = elems * FP8_BYTES + -(-elems // QUANT_GROUP) * SCALE_BYTES
    else:
        bits = dtype_bits(canonical_dtype(o.kv_dtype))
        elem_bytes, slot = bits // 8, elems * bits // 8
    volatile = [w for w in f.windows if not w.persistent]
    pmem = [w for w in f.windows if w.persistent]
    spill_windows: list[SpillWindow] = []
    if s.spill_layers:
        if not volatile:
            raise InputProblem(diagnostic(codes.GEN_003, "--spill needs a volatile CXL window; the listings have only pmem windows"
                                          if pmem else "--spill needs a CXL window; the listings have no root decoder or region",
                                          help="pass `cxl list -BDMu` output (root decoders), or --spill 0"))
        unit = align(s.groups * s.blocks * slot, PAGE)
        layer = s.first_spilled
        for w in volatile:
            # units of an interleaved region start on whole interleave sets (ways x granularity),
            # so every unit spreads over the region's devices the same way
            step = max(w.targets, 1) * w.granularity if w.granularity else PAGE
            unit_w = align(unit, step)
            take = min(w.size // unit_w, s.layers - layer)
            if take:
                bases = tuple(w.base + gi * s.blocks * slot for gi in range(s.groups))
                spill_windows.append(SpillWindow(w, layer, layer + take, unit_w, bases))
                layer += take
        if layer < s.layers:
            have = sum(w.size for w in volatile)
            need = s.spill_layers * unit
            raise InputProblem(diagnostic(codes.GEN_003, f"too little CXL capacity: spilling {s.spill_layers} layers needs "
                                          f"{need} B ({in_unit(need, MIB, 'MiB')}) in whole-layer units of {unit} B; the volatile "
                                          f"windows hold {have} B ({', '.join(w.name for w in volatile)})",
                                          help="lower --spill" + ("" if fp8 else ", use --kv-dtype fp8")
                                               + ", or pass a listing with more CXL memory"))
    bound = CHECKPOINT_CODEC.bound(s.act_bytes)
    ckpt_slot = align(bound, PAGE)
    every, n_ckpt = _checkpoint_interval(o, s.layers, ckpt_slot, pmem)
    ckpt_windows: list[CheckpointWindow] = []
    i = 0
    for w in pmem:
        take = min(w.size // ckpt_slot, n_ckpt - i)
        if take > 0:
            ckpt_windows.append(CheckpointWindow(w, i, i + take))
            i += take
    if s.requests > 1 and (s.spill_layers or n_ckpt):
        # INVARIANT: spill and checkpoint slots are handed to the memdev, so a later request
        # cannot reuse them; per-request slots are not laid out yet
        raise InputProblem(diagnostic(codes.GEN_004, f"--requests {s.requests} cannot spill KV or checkpoint into CXL yet",
                                      help="pass --spill 0 --ckpt-every 0 with --requests, or generate one request"))
    return CxlLayout(spill_dtype, elems, elem_bytes, slot, tuple(spill_windows), bound, ckpt_slot, every, n_ckpt,
                     tuple(ckpt_windows))


def _checkpoint_interval(o: PrefillOptions, layers: int, slot: int, pmem: list[Window]) -> tuple[int, int]:
    """``(every, checkpoints)``: ``--ckpt-every``, or the default widened until the checkpoints
    fit the pmem windows (0 when none fits). FX-GEN-004 for a negative value, FX-GEN-003 for an
    explicit interval that does not fit."""
    fits = sum(w.size // slot for w in pmem)
    every = o.ckpt_every
    if every is not None and every < 0:
        raise InputProblem(diagnostic(codes.GEN_004, f"--ckpt-every {every} must be 0 (off) or positive",
                                      help="for example --ckpt-every 8"))
    if every is None:
        every = DEFAULT_CKPT_EVERY
        while layers // every > fits and every <= layers:
            every += 1
        if not fits or layers // every == 0:
            every = 0
    elif every:
        if not pmem:
            raise InputProblem(diagnostic(codes.GEN_003, f"--ckpt-every {every} needs a pmem CXL window; the listings have none",
                                          help="pass a listing with pmem-capable root decoders, or --ckpt-every 0"))
        if layers // every > fits:
            raise InputProblem(diagnostic(codes.GEN_003, f"too little CXL pmem: {layers // every} checkpoints of {slot} B need "
                                          f"{layers // every * slot} B; the pmem windows hold {fits} slots",
                                          help=f"use --ckpt-every {_smallest_every(layers, fits)} or --ckpt-every 0"))
    return every, layers // every if every else 0


def _smallest_every(layers: int, fits: int) -> int:
    """The smallest checkpoint interval whose checkpoints fit ``fits`` slots."""
    e = 1
    while layers // e > fits:
        e += 1
    return e


# ---- host and remote memory -------------------------------------------------------------------

def _host(s: Sizes, hbm: HbmLayout, f: FabricPlan) -> tuple[HostSpace, ...]:
    """Pinned host memory of each NUMA node holding its ranks' streamed weights and experts,
    sized to fit; FX-GEN-003 when a space would pass 64-bit addresses."""
    members: dict[str, list[tuple[str, int, int]]] = {}  # space -> (kind, rank, bytes)
    for r in range(len(f.gpus)):
        space = f.rank_cpus[r].replace("cpu", "dram")
        if hbm.stream:
            members.setdefault(space, []).append(("whost", r, s.layers * hbm.layer_weight_bytes))
        if s.moe_layers:
            members.setdefault(space, []).append(("wexp", r, s.moe_layers * s.rank_expert_bytes))
    out = []
    for space, regs in sorted(members.items()):
        at, placed = 0, []
        for kind, r, n in regs:
            placed.append(HostRegion(kind, r, at))
            at = align(at + n, ALIGN)
        _fits64(align(at, GIB), f"host memory `{space}`")
        out.append(HostSpace(space, space.replace("dram", "cpu"), align(at, GIB), tuple(placed)))
    return tuple(out)


def _remote(s: Sizes, f: FabricPlan) -> RemoteLayout:
    """The decode node's KV memory: every layer of every KV group of every request (the decode
    node keeps each request's KV), replicated; FX-GEN-003 when it would pass 64-bit addresses."""
    per = s.layer_kv_bytes * s.replicas
    total = s.groups * s.requests * s.layers * per
    _fits64(align(total, GIB), "the decode node's KV memory")
    return RemoteLayout(align(total, GIB), per, s.block_bytes * s.replicas,
                        tuple(g * s.requests * s.layers * per for g in range(len(f.primaries))))


def _fits64(n: int, what: str, help: str = "lower --tokens or the layer count") -> None:
    """Raise FX-GEN-003 (``InputProblem``, with ``help``) when a space of ``n`` bytes cannot be
    addressed with 64 bits (``n >= 2**64``)."""
    if n >= U64_END:
        raise InputProblem(diagnostic(codes.GEN_003, f"{what} would need {n} B, beyond 64-bit addresses", help=help))


def _policy_name(m: ModelSpec, o: PrefillOptions) -> str:
    """``--name``, or ``<model>-prefill``; FX-GEN-004 for characters a policy name cannot hold."""
    name = o.name if o.name is not None else re.sub(r"[^a-z0-9._-]", "_", f"{m.name.split('--')[-1].lower()}-prefill")
    if not name.strip() or name != name.strip():
        raise InputProblem(diagnostic(codes.GEN_004, f"--name {name!r} is empty or begins or ends with a space",
                                      help="name the policy, such as --name llama-8b-prefill"))
    if not re.fullmatch(r"[A-Za-z0-9._ -]+", name):
        raise InputProblem(diagnostic(codes.GEN_004, f"--name {name!r} has characters a policy name cannot hold",
                                      help="use letters, digits, `.`, `_`, `-` and spaces"))
    return name
