"""Render a prefill plan as an ``.fx`` policy and its summary.

Takes a finished ``prefill_plan.PrefillPlan``; produces a ``Generated``: the policy text (the
header with every derivation, the fabric, spaces, regions, alias sets, maps and the flow, which
``prefill_flow`` builds and ``emit`` writes as ``for`` families or unrolled) and the summary
dictionary of ``--summary-json`` (``specs/generators.md``, "Summary JSON"). Only formats: every
size, address and placement is read from the plan, and nothing here fails on a plan that
``plan_prefill`` returned, so it emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fxverify.gen.emit import count, render
from fxverify.gen.prefill_flow import flow_program
from fxverify.gen.prefill_fabric import Device, Link, space_name
from fxverify.gen.prefill_plan import CHECKPOINT_CODEC, QUANT_GROUP, SCALE_BYTES, PrefillPlan
from fxverify.vocab import GIB, DeviceKind, in_unit, size_text

# A comment that ends a declaration follows it after two spaces, as `fxverify fmt` lays it out
# (specs/output.md), so a generated policy is already formatted.
COMMENT_GAP = "  "


@dataclass
class Generated:
    """The result of ``fxverify gen prefill``: the policy ``text`` (``.fx``, ending in a newline)
    and the ``summary`` dictionary written by ``--summary-json``."""

    text: str
    summary: dict[str, Any]


@dataclass
class _Region:
    """One region declaration: ``decl`` is the text after ``region``, ``instances`` how many
    regions its family declares, ``comment`` the line written above it (none when empty)."""

    decl: str
    instances: int
    comment: str = ""


@dataclass
class _Declarations:
    """The declarations between the fabric and the flow, each list in the order it is written;
    ``finals`` are the ``final owner`` lines at the end of the flow."""

    spaces: list[str]
    regions: list[_Region]
    alias_sets: list[str]
    maps: list[str]
    finals: list[str]

    def region(self, decl: str, n: int, comment: str = "") -> None:
        """Declare ``region DECL``, a family of ``n`` regions, with ``comment`` above it."""
        self.regions.append(_Region(decl, n, comment))


def render_prefill(p: PrefillPlan) -> Generated:
    """The policy text and summary of plan ``p``. Deterministic; raises nothing for a plan that
    ``plan_prefill`` returned."""
    flow = flow_program(p)
    decl = _declarations(p)
    edges = count(flow)
    lines = _header(p, edges)
    lines.append(f'policy "{p.name}"')
    lines.append("")
    lines.append("fabric {")
    if p.topo is not None:
        t = p.topo
        lines.append(f"  # from {t.path}: {len(t.gpus)} GPUs, {len(t.nics)} NICs, "
                     f"{len(t.switches)} PCIe switches, {t.numa_nodes} NUMA nodes")
    if p.cxl is not None:
        lines.append(f"  # from {', '.join(p.cxl.paths)}")
    lines.append("  # PCIe and CXL.mem complete a DMA only after its writes: a completion is a posted write that")
    lines.append("  # cannot pass the data before it (PCIe Base Specification, ordering rules), hence `ordered`")
    lines += ["  " + _device_line(d) for d in p.fabric.devices]
    lines += ["  " + _link_line(ln) for ln in p.fabric.links] + ["  # " + n for n in p.fabric.notes]
    lines.append("}")
    lines.append("")
    lines += decl.spaces
    lines.append("")
    for r in decl.regions:
        if r.comment:
            lines.append(f"# {r.comment}")
        lines.append(f"region {r.decl}")
    lines += decl.alias_sets
    lines.append("")
    lines += decl.maps
    lines.append("")
    lines.append("flow prefill {")
    lines += list(render(flow, "  ", p.options.unroll))
    lines += ["  " + f for f in decl.finals]
    lines.append("}")
    return Generated("\n".join(lines) + "\n", _summary(p, edges, sum(r.instances for r in decl.regions)))


def final_owner_lines(p: PrefillPlan) -> int:
    """The ``final owner`` statements of plan ``p``'s flow: ``fxverify check`` counts each
    against its edge limit (``resolve.flows``), beside the edge instances ``emit.count`` counts."""
    return len(_declarations(p).finals)


# ---- fabric -----------------------------------------------------------------------------------

def _commented(decl: str, comment: str) -> str:
    """``decl``, then ``# comment`` after ``COMMENT_GAP`` (nothing when ``comment`` is empty)."""
    return f"{decl}{COMMENT_GAP}# {comment}" if comment else decl


def _device_line(d: Device) -> str:
    """``device NAME: KIND hooks [...]`` and its comment."""
    decl = f"device {d.name}: {d.kind.value}" + (f" hooks [{', '.join(d.hooks)}]" if d.hooks else "")
    if d.kind is DeviceKind.CPU and d.comment:
        return f"{decl}{COMMENT_GAP}# {d.comment}"
    return _commented(decl, d.comment)


def _link_line(ln: Link) -> str:
    """``link A -- B : KIND ORDER`` and its comment."""
    return _commented(f"link {ln.a} -- {ln.b} : {ln.kind} {ln.order.value}", ln.comment)


# ---- header -----------------------------------------------------------------------------------

def _header(p: PrefillPlan, edges: int) -> list[str]:
    """The header comments: the command, the model, and every derivation with its numbers."""
    m, o, s, c = p.model, p.options, p.sizes, p.cxl_layout
    db = s.dtype_bytes
    machine = f"the GPUs of {p.topo.path}" if p.topo else f"{o.tp} GPU(s)"
    what = f"one {s.tokens}-token request" if s.requests == 1 else f"{s.requests} {s.tokens}-token requests"
    h = [f"# {m.name} prefill of {what}, tensor parallel {o.tp}, on {machine}.",
         "# GENERATED by: " + (o.command or "fxverify gen prefill"),
         "# Do not edit by hand: change the options and regenerate.",
         "#",
         f"# Model ({m.path}): {m.arch}, {m.layers} layers" + (f" (first {s.layers} kept)" if s.layers != m.layers else "")
         + f", hidden {m.hidden}, {m.heads} heads, {m.kv_heads} KV heads, dtype {m.dtype} ({db} B)"
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
    per_layer = m.kv_bytes_per_token_per_layer
    h += ["#", "# Derivation:",
          f"#   KV per token per layer = {m.kv_derivation()}",
          f"#   KV per token = {s.layers} layers x {per_layer} B = {s.kv_bytes_per_token} B"]
    if s.replicas > 1:
        h.append(f"#   tp {o.tp} > {m.cache_heads} KV head(s): each rank holds 1 head; {s.replicas} replicas per head "
                 f"({s.groups} group(s)); the first rank of each group spills and sends")
    elif o.tp > 1:
        h.append(f"#   tp {o.tp}: each rank holds {s.heads_per_rank} of {m.cache_heads} KV heads")
    h += [f"#   KV per token per layer per rank = {per_layer} B x {s.heads_per_rank}/{m.cache_heads} = {s.kv_token_bytes} B",
          f"#   KV block = {s.block_tokens} tok x {s.kv_token_bytes} B = {s.block_bytes} B ({size_text(s.block_bytes)}); "
          f"{s.tokens} / {s.block_tokens} = {s.blocks} blocks per layer",
          f"#   hidden states = {s.tokens} tok x {m.hidden} x {db} B = {s.act_bytes} B; "
          f"all-reduce chunk = {s.act_bytes} / {o.tp} = {s.chunk_bytes} B",
          f"#   attention weights per layer per rank = {s.attn_weight_bytes} B"]
    scales = " + block scales" if m.quant else ""
    if s.dense_layers:
        h.append(f"#   dense FFN weights per layer per rank = 3 x {m.hidden} x {s.ffn_width} "
                 f"(x {s.weight_elem_bytes} B{scales}) = {s.ffn_weight_bytes} B")
    if m.moe:
        e = m.moe
        h += [f"#   expert slots per rank = {s.tokens} tok x top_k {e.active} / tp {o.tp} rows x {m.hidden} x {db} B "
              f"= {s.expert_slot_bytes} B (capacity factor 1: GShard drops tokens beyond it); "
              f"{s.experts_per_rank} experts per rank",
              f"#   expert weights = 3 x {m.hidden} x {e.inter} (x {s.weight_elem_bytes} B{scales}) = {s.expert_weight_bytes} B "
              f"each; {s.experts_per_rank} per rank streamed per MoE layer = {s.rank_expert_bytes} B"]
    if s.requests > 1:
        n = s.kv_slots
        h += [f"#   requests = {s.requests}, one after another on each GPU (they share the activations and temporaries);"
              f" the KV block pool holds {n} of them",
              f"#   KV pool per rank = {n} slots x {s.layers} layers x {s.blocks} blocks x {s.block_bytes} B = "
              f"{n * s.layer_kv_bytes * s.layers} B; request q takes slot q % {n} (blocks kvb[q % {n}, l, b]),"
              f" allocated after request q - {n} frees them"]
    used = p.hbm.used_bytes
    h.append(f"#   weights are {'streamed per layer into two HBM slots' if p.hbm.stream else 'resident in HBM'}; "
             f"one rank uses {used} B ({in_unit(used, GIB, 'GiB', 2)}) of {o.hbm_gib} GiB HBM")
    if s.spill_layers:
        h.append(f"#   spill: floor({s.spill_fraction} x {s.layers}) = {s.spill_layers} layers (from layer {s.first_spilled}); "
                 f"slot = {_spill_derivation(p)}")
    if c.checkpoints:
        h.append(f"#   checkpoints every {c.ckpt_every} layers: {c.checkpoints} slots of "
                 f"LZ4_COMPRESSBOUND({s.act_bytes}) = {c.ckpt_bound_bytes} B, "
                 f"page-aligned = {c.ckpt_slot_bytes} B")
    h.append(f"#   edges = {edges} (as unrolled)")
    return h


def _spill_derivation(p: PrefillPlan) -> str:
    """The spill slot's formula with its numbers (``specs/generators.md``, "Spill slot")."""
    c = p.cxl_layout
    if c.spill_dtype == "fp8":
        return (f"{c.spill_elems} elems x {c.spill_elem_bytes} B + ceil({c.spill_elems} / {QUANT_GROUP}) fp32 scales "
                f"x {SCALE_BYTES} B = {c.spill_slot_bytes} B")
    return f"{c.spill_elems} elems x {c.spill_elem_bytes} B ({p.options.kv_dtype}) = {c.spill_slot_bytes} B"


# ---- spaces, regions, maps --------------------------------------------------------------------

def _declarations(p: PrefillPlan) -> _Declarations:
    """Spaces, regions (HBM per rank, host, CXL, remote), alias sets, maps and final owners."""
    d = _Declarations([], [], [], [], [])
    m, s, f, hbm = p.model, p.sizes, p.fabric, p.hbm
    dt = m.dtype
    wdt = "" if m.quant else f" dtype {dt}"  # quantized weights are bytes plus scales, no one dtype
    # Weights are loaded before the flow (`init`): resident in HBM, or in pinned host memory to stream
    # from. Everything else (activations, KV, slots the flow streams into) is written by the flow.
    off = hbm.offsets
    L, B = s.layers, s.blocks
    region = d.region
    for r, g in enumerate(f.gpus):
        d.spaces.append(f"space hbm{r} on {g} size {p.options.hbm_gib} GiB")
    for r, g in enumerate(f.gpus):
        kv, n = off["kv"], s.kv_slots
        if s.requests == 1:
            region(f"kvl{r}[l in 0..{L}] in hbm{r} at {kv:#x} + l * {s.layer_kv_bytes} size {s.layer_kv_bytes} "
                   f"owner {g} dtype {dt}", L, f"rank {r} ({g}): the KV cache of one layer, and its blocks")
            region(f"kvb{r}[l in 0..{L}, b in 0..{B}] in hbm{r} at {kv:#x} + (l * {B} + b) * {s.block_bytes} "
                   f"size {s.block_bytes} owner {g} dtype {dt}", L * B)
        else:
            region(f"kvl{r}[s in 0..{n}, l in 0..{L}] in hbm{r} at {kv:#x} + (s * {L} + l) * {s.layer_kv_bytes} "
                   f"size {s.layer_kv_bytes} owner {g} dtype {dt} pooled", n * L,
                   f"rank {r} ({g}): the KV block pool, {n} slots of one request's cache; a layer's blocks of slot s, "
                   "allocated and freed together")
            region(f"kvb{r}[s in 0..{n}, l in 0..{L}, b in 0..{B}] in hbm{r} at {kv:#x} + ((s * {L} + l) * {B} + b) * "
                   f"{s.block_bytes} size {s.block_bytes} owner {g} dtype {dt}", n * L * B)
        d.alias_sets.append(f"alias_set kvcache{r} = [kvl{r}, kvb{r}]  # a layer's view and its blocks are the same bytes")
        region(f"wemb{r} in hbm{r} at {off['wemb']:#x} size {s.embed_weight_bytes} owner {g} dtype {dt} init", 1,
               f"rank {r}: its vocabulary shard of the embedding{'' if m.tied else ' and the LM head'}")
        for nm in ("act", "tmp", "hs"):
            if nm in off:
                region(f"{nm}{r} in hbm{r} at {off[nm]:#x} size {s.act_bytes} owner {g} dtype {dt}", 1)
        if "inter" in off:
            region(f"inter{r} in hbm{r} at {off['inter']:#x} size {hbm.inter_bytes} owner {g} dtype {dt}", 1)
        if hbm.stream:
            lw = hbm.layer_weight_bytes
            region(f"wslot{r}[p in 0..2] in hbm{r} at {off['wslot']:#x} + p * {lw} size {lw} owner {g}{wdt}", 2,
                   "two slots: layer l streams into slot l % 2")
        else:
            region(f"wattn{r}[l in 0..{L}] in hbm{r} at {off['wattn']:#x} + l * {s.attn_weight_bytes} "
                   f"size {s.attn_weight_bytes} owner {g}{wdt} init", L)
            if s.dense_layers:
                region(f"wffn{r}[l in 0..{s.dense_layers}] in hbm{r} at {off['wffn']:#x} + l * {s.ffn_weight_bytes} "
                       f"size {s.ffn_weight_bytes} owner {g}{wdt} init", s.dense_layers)
            if s.moe_layers and s.shared_weight_bytes:
                region(f"wsh{r}[j in 0..{s.moe_layers}] in hbm{r} at {off['wsh']:#x} + j * {s.shared_weight_bytes} "
                       f"size {s.shared_weight_bytes} owner {g}{wdt} init", s.moe_layers,
                       f"shared experts of MoE layer j (model layer {s.dense_layers} + j)")
        if s.moe_layers:
            ew = s.rank_expert_bytes
            for nm in ("xe", "ye"):
                region(f"{nm}{r} in hbm{r} at {off[nm]:#x} size {s.expert_slot_bytes} owner {g} dtype {dt}", 1,
                       "expert slots [tokens, top_k / tp, hidden]: inputs" if nm == "xe" else "expert slots: outputs")
            region(f"wstage{r}[p in 0..2] in hbm{r} at {off['wstage']:#x} + p * {ew} size {ew} owner {g}{wdt}", 2,
                   f"weights of the rank's {s.experts_per_rank} experts, double-buffered: MoE layer j streams into slot j % 2")
    for hs in p.host:
        for hr in hs.regions:
            r, g = hr.rank, f.gpus[hr.rank]
            if hr.kind == "whost":
                lw = hbm.layer_weight_bytes
                region(f"whost{r}[l in 0..{L}] in {hs.name} at {hr.base:#x} + l * {lw} size {lw} owner {g}{wdt} init", L,
                       f"rank {r}: every layer's weights in pinned host memory registered to {g}")
            else:
                ew = s.rank_expert_bytes
                first, end = s.expert_ranges[r]
                region(f"wexp{r}[j in 0..{s.moe_layers}] in {hs.name} at {hr.base:#x} + j * {ew} size {ew} "
                       f"owner {g}{wdt} init", s.moe_layers,
                       f"rank {r}: weights of global experts {first}..{end} of every MoE layer, in pinned host memory")
        d.spaces.append(f"space {hs.name} on {hs.cpu} size {size_text(hs.size_bytes)}"
                        + COMMENT_GAP + "# host memory holding streamed weights (sized to fit them)")
    _cxl_declarations(p, d)
    if p.remote is not None:
        _remote_declarations(p, d)
    _maps(p, d)
    return d


def _cxl_declarations(p: PrefillPlan, d: _Declarations) -> None:
    """A space per CXL window; the spill slots and checkpoint slots in them, handed to the
    window's memdev at the end."""
    f, s, c, region = p.fabric, p.sizes, p.cxl_layout, d.region
    seen = set()
    for w in f.windows:
        if w.name in seen:
            continue
        seen.add(w.name)
        what = (f"region, {w.targets}-way interleave, granularity {w.granularity} B" if w.kind == "region"
                else f"root decoder, {w.targets} target(s)")
        kind = "pmem" if w.persistent else "volatile"
        shared = f.shared.get(w.name, ())
        d.spaces.append(f"space {space_name(w.name)} on {f.home[w.name]} base {w.base:#x} size {size_text(w.size)}"
                        + (" persistent" if w.persistent else "") + (" noncoherent" if shared else "")
                        + f"  # {w.name}: {what}, {kind}")
        for x in shared:
            # Two hosts map it, and nothing in a listing shows cross-host coherence (CXL 2.0).
            d.spaces.append(f"#   shared with host `{x.host}`: {x.reason}")
    slot = c.spill_slot_bytes
    for sw in c.spill_windows:
        w, a, b, sp = sw.window, sw.first, sw.end, space_name(sw.window.name)
        for gi, r in enumerate(f.primaries):
            region(f"kvs_{sp}_g{gi}[u in 0..{b - a}, b in 0..{s.blocks}] in {sp} at {sw.group_bases[gi]:#x} "
                   f"+ u * {sw.unit_bytes} + b * {slot} size {slot} owner {f.gpus[r]} dtype {c.spill_dtype}",
                   (b - a) * s.blocks, f"spilled KV of layers {a}..{b} (u = layer - {a}), KV group {gi}, in {w.name}; "
                   f"a layer's {s.groups} group(s) share one {sw.unit_bytes} B unit" if gi == 0 else "")
            d.finals.append(f"final owner kvs_{sp}_g{gi}[*, *] = {f.peer_of.get(w.name, f.home[w.name])}")
    for cw in c.ckpt_windows:
        w, a, b, sp = cw.window, cw.first, cw.end, space_name(cw.window.name)
        region(f"ck_{sp}[i in 0..{b - a}] in {sp} at {w.base:#x} + i * {c.ckpt_slot_bytes} "
               f"size {c.ckpt_slot_bytes} owner {f.gpus[0]}", b - a,
               f"{CHECKPOINT_CODEC.name} checkpoints {a}..{b} of the hidden states in {w.name}")
        d.finals.append(f"final owner ck_{sp}[*] = {f.home[w.name]}")


def _remote_declarations(p: PrefillPlan, d: _Declarations) -> None:
    """The decode node's KV memory and one buffer per KV group, owned by its NIC until the flush
    hands it to ``decode0``."""
    rm, s, f, region = p.remote, p.sizes, p.fabric, d.region
    assert rm is not None  # INVARIANT: called only with --disaggregate
    d.spaces.append(f"space rhbm on decode0 size {size_text(rm.size_bytes)}"
                    + COMMENT_GAP + "# the decode node's KV memory (sized to fit)")
    for g, r in enumerate(f.primaries):
        rep = f"; {s.replicas} replicas per block" if s.replicas > 1 else ""
        if s.requests == 1:
            region(f"rkv{g}[l in 0..{s.layers}] in rhbm at {rm.group_bases[g]:#x} + l * {rm.layer_bytes} "
                   f"size {rm.layer_bytes} owner {f.nic_of[r]} dtype {p.model.dtype}", s.layers, f"KV group {g} on the decode node{rep}")
            d.finals.append(f"final owner rkv{g}[*] = decode0")
            continue
        region(f"rkv{g}[q in 0..{s.requests}, l in 0..{s.layers}] in rhbm at {rm.group_bases[g]:#x} + (q * {s.layers} + l) * "
               f"{rm.layer_bytes} size {rm.layer_bytes} owner {f.nic_of[r]} dtype {p.model.dtype}", s.requests * s.layers,
               f"KV group {g} of each request on the decode node{rep}")
        d.finals.append(f"final owner rkv{g}[*, *] = decode0")


def _maps(p: PrefillPlan, d: _Declarations) -> None:
    """The policy's maps: blocks written, layers done (the next layer's guard), spilled blocks'
    owners, blocks sent per NIC (the flush's aggregate); layers done and blocks sent per request."""
    tp, nn = p.options.tp, len(p.fabric.nics_used)
    layer = "l" if p.sizes.requests == 1 else f"(q * {p.sizes.layers} + l)"  # each request has its own entries
    d.maps.append("map kv_written: array<u32, u64>[1] class per_device merge sum  # KV blocks written, per GPU")
    d.maps.append(f"map layer_done: array<u32, u32>[{p.layer_done_entries}] class causal  # key {layer} * {tp} + rank")
    if p.sizes.spill_layers:
        d.maps.append(f"map block_owner: hash<u32, device>[{p.block_owner_entries}] class linearizable  "
                      "# who holds each spilled block")
    if p.options.disaggregate:
        d.maps.append(f"map kv_sent: array<u32, u64>[{p.kv_sent_entries}] class per_device merge sum  # key {layer} * {nn} + NIC")


# ---- summary ----------------------------------------------------------------------------------

def _summary(p: PrefillPlan, edges: int, regions: int) -> dict[str, Any]:
    """The ``--summary-json`` dictionary (``specs/generators.md`` lists every key)."""
    m, s, o = p.model, p.sizes, p.options
    return {
        "policy": p.name,
        "model": m.name,
        "architecture": m.arch,
        "layers": s.layers,
        "dtype": m.dtype,
        "kv_bytes_per_token": s.kv_bytes_per_token,
        "kv_bytes_per_token_per_layer": m.kv_bytes_per_token_per_layer,
        "kv_block_bytes_per_rank": s.block_bytes,
        "blocks_per_layer": s.blocks,
        "tokens": s.tokens,
        "requests": s.requests,
        "kv_pool_slots": s.kv_slots,
        "block_tokens": s.block_tokens,
        "tp": o.tp,
        "kv_heads": m.cache_heads,
        "kv_heads_per_rank": s.heads_per_rank,
        "kv_replicas": s.replicas,
        "experts": m.moe.experts if m.moe else 0,
        "active_experts": m.moe.active if m.moe else 0,
        "shared_experts": m.moe.shared if m.moe else 0,
        "moe_layers": s.moe_layers,
        "weight_quantization": f"{m.quant.method} {m.quant.fmt}" if m.quant else None,
        "weights": "streamed" if p.hbm.stream else "resident",
        "hbm_bytes_per_rank": p.hbm.used_bytes,
        "spill_layers": s.spill_layers,
        "kv_dtype_spilled": o.kv_dtype,
        "checkpoints": p.cxl_layout.checkpoints,
        "disaggregate": o.disaggregate,
        "devices": len(p.fabric.devices),
        "links": len(p.fabric.links),
        "edges": edges,
        "regions": regions,
        "windows": [{"name": w.name, "base": w.base, "size": w.size, "persistent": w.persistent,
                     "home": p.fabric.home[w.name], "shared_with": [x.host for x in p.fabric.shared.get(w.name, ())]}
                    for w in p.fabric.windows],
    }
