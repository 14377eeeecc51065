"""The flow of a prefill plan, as an ``emit.Program`` of edge families.

Takes a finished ``prefill_plan.PrefillPlan``; produces the ``flow prefill`` block as ``Loop``/
``If``/``Stmt``/``Note`` values, which ``emit.render`` writes as ``for`` families or unrolled and
``emit.count`` counts. Per rank and layer (``specs/generators.md``, "The generated flow"):

- ``wload`` streams the layer's weights from host memory when they are not resident, ``wq`` reads
  the attention weights, ``kvw`` writes the KV blocks, ``attn`` attends over the layer's cache and
  ``attn_out`` writes its partial output,
  and the attention all-reduce (``rs_a`` reduce-scatter, ``ag_a`` all-gather, NCCL's ring
  decomposition) adds the partial outputs into the residual stream;
- dense layers: ``wf``, ``up``, ``down``; MoE layers: ``disp`` scatters the tokens to the rank's
  expert slots, ``wst``/``ew`` stream the experts' weights through two HBM slots, ``ex`` runs
  them, ``comb`` gathers the outputs back with ``reduce(sum)``; then the FFN all-reduce, which
  records ``layer_done``;
- ``ckpt`` checkpoints the hidden states into pmem, ``spill`` moves the KV of the last layers into
  volatile CXL slots, ``send``/``flush``/``dec`` ship every KV block to the decode node, and
  ``free`` returns each layer's blocks to the pool;
- several requests: the whole flow once per request ``q``; ``take`` allocates the request's pool
  slot after its previous holder's ``free``, ``head`` (the LM head) reads the last hidden states,
  and the next request's first writes wait for every rank's ``head``.

Reads sizes and placements from the plan and writes them into the text; computes none. Emits no
diagnostics.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fxverify.gen.emit import If, Loop, Note, Program, Stmt
from fxverify.gen.prefill_fabric import pinned_route, space_name
from fxverify.gen.prefill_plan import CHECKPOINT_CODEC, QUANT_GROUP, PrefillPlan
from fxverify.vocab import LinkOrder


def flow_program(p: PrefillPlan) -> Program:
    """The statements of ``flow prefill`` for plan ``p``, in the order they are written: every
    rank's layers, the two all-reduces, checkpoints, spills, sends, frees; with several requests,
    all of it once per request ``q`` (``_per_request``)."""
    prog: Program = []
    for r in range(p.options.tp):
        prog += _rank(p, r)
    prog += _all_reduce(p, "a")
    prog += _all_reduce(p, "f")
    prog += _checkpoints(p)
    prog += _spills(p)
    if p.options.disaggregate:
        prog += _sends(p)
    for r in range(p.options.tp):
        prog += _free(p, r)
    if p.sizes.requests == 1:
        return prog
    s = p.sizes
    prog += [Note(""), Note("the LM head reads the last hidden states (the request's first output token) before the next"
                            " request's embedding overwrites them")]
    for r in range(p.options.tp):
        prog.append(Stmt(f"edge head[{r}]: read {_hidden(p, r)} by {p.fabric.gpus[r]}.launch "
                         f"after {_ar_done(p, 'f', str(s.layers - 1), r)}"))
    return [Note(""), Note(f"{s.requests} requests, one after another on each GPU; request q takes KV slot q % {s.kv_slots}"
                           f" of the pool once request q - {s.kv_slots} has returned it"),
            Loop("q", 0, s.requests, _per_request(prog, s.kv_slots))]


# Edge families of the flow; with several requests each takes the request as its first index.
FAMILIES = ("head", "emb", "embed", "wload", "wq", "take", "kvw", "attn", "attn_out", "rs_a", "ag_a", "wf", "up", "down", "disp", "wst",
            "ew", "ex", "comb", "rs_f", "ag_f", "ckpt", "spill", "fetch", "send", "flush", "dec", "free")
# A reference to an edge family, a KV region or a remote buffer that does not name its request
# yet (references written with ``$(q ...)`` already do: the previous request's edges).
_FAMILY_REF = re.compile(r"\b(" + "|".join(FAMILIES) + r")\[(?!\$\(q)")
_POOL_REF = re.compile(r"\b(kvl\d+|kvb\d+)\[(?!\$\(q)")
_REMOTE_REF = re.compile(r"\b(rkv\d+)\[(?!\$\(q)")


def _per_request(prog: Program, slots: int) -> Program:
    """``prog`` (one request's statements) as the body of the request loop over ``q``: every edge
    family, and every remote buffer ``rkv``, takes ``q`` as its first index, and the KV regions
    ``kvl``/``kvb`` the request's pool slot ``q % slots``. Only the generator's own text is
    rewritten, whose names ``FAMILIES`` lists; references that already name a request are kept."""
    def text(t: str) -> str:
        t = _FAMILY_REF.sub(r"\1[$(q), ", t)
        t = _POOL_REF.sub(rf"\1[$(q % {slots}), ", t)
        return _REMOTE_REF.sub(r"\1[$(q), ", t)
    out: Program = []
    for x in prog:
        if isinstance(x, Stmt):
            out.append(Stmt(text(x.text), x.edges))
        elif isinstance(x, Loop):
            out.append(Loop(x.var, x.lo, x.hi, _per_request(x.body, slots)))
        elif isinstance(x, If):
            out.append(If(x.cond, _per_request(x.then, slots), _per_request(x.orelse, slots)))
        else:
            out.append(x)
    return out


def _after_previous(p: PrefillPlan, r: int, edge: Callable[[str], str]) -> "Stmt | If":
    """The statement ``edge(extra)``, where ``extra`` (an ``after`` list's tail) orders it after
    request ``q - 1``'s last use of rank ``r``'s shared buffers (activations, temporaries, weight
    slots): every rank's LM head read, each after its rank's last all-gather, which comes after
    every rank's last kernels and pulls. One request: ``edge("")``; request 0 has no previous
    request."""
    if p.sizes.requests == 1:
        return Stmt(edge(""))
    return If("q >= 1", [Stmt(edge(", head[$(q - 1), *]"))], [Stmt(edge(""))])


def _key(p: PrefillPlan, expr: str, per_request: int) -> str:
    """A map key ``$(expr)``, offset by ``q x per_request`` with several requests (each request
    has its own entries)."""
    return f"$({expr})" if p.sizes.requests == 1 else f"$(q * {per_request} + {expr})"


def _ar_done(p: PrefillPlan, kind: str, l: str, r: int) -> str:  # noqa: E741
    """Name of the edge that completes rank ``r``'s all-reduce ``kind`` (``a``/``f``) of layer ``l``."""
    return f"ag_{kind}[{l}, {r}]" if p.options.tp > 1 else f"rs_{kind}[{l}, 0, 0]"


def _hidden(p: PrefillPlan, r: int) -> str:
    """The region holding rank ``r``'s full hidden states between sub-layers: the residual
    itself at tp 1, else the all-gathered copy (the residual is reduced chunk by chunk)."""
    return f"hs{r}" if p.options.tp > 1 else f"act{r}"


def _rank(p: PrefillPlan, r: int) -> Program:
    """Rank ``r``'s embedding, weight loads, KV writes and attention, then its FFN."""
    s, f, tp = p.sizes, p.fabric, p.options.tp
    g, L, B, attn_w = f.gpus[r], s.layers, s.blocks, s.attn_weight_bytes
    leases = "".join(f"\n    lease tmp{r} to {q_gpu}" for q, q_gpu in enumerate(f.gpus) if q != r)
    out: Program = [Note(""), Note(f"rank {r} on {g}" + (": its partial outputs are leased to the other ranks for the"
                                                           " all-reduce" if leases else "")),
                    Note("embedding lookup: read the rank's vocabulary shard, write the hidden states"),
                    Stmt(f"edge emb[{r}]: read wemb{r} by {g}.launch"),
                    _after_previous(p, r, lambda x: f"edge embed[{r}]: write act{r} by {g}.launch after emb[{r}]{x}{leases}")]
    if p.hbm.stream:
        load = f"edge wload[$(l), {r}]: move whost{r}[$(l)] -> wslot{r}[$(l % 2)] by {g}.copy_done stream h2d"
        last_moe = f"wf[$(l - 2), {r}]" if s.shared_weight_bytes else f"wq[$(l - 2), {r}]"
        out.append(Loop("l", 0, min(2, L), [_after_previous(p, r, lambda x: f"{load} after {x[2:]}" if x else load)]))
        out.append(Loop("l", 2, L, [
            Note("slot l % 2 held layer l - 2: its last weight read must be done before the slot is overwritten"),
            If(f"l - 2 < {s.dense_layers}", [Stmt(f"{load} after wf[$(l - 2), {r}]")], [Stmt(f"{load} after {last_moe}")])
            if s.dense_layers < L else Stmt(f"{load} after wf[$(l - 2), {r}]")]))
        wq_src = f"wslot{r}[$(l % 2)][0, +{attn_w}]"
        wload = f", wload[$(l), {r}]"
    else:
        wq_src, wload = f"wattn{r}[$(l)]", ""
    lease = f"\n    lease kvb{r}[$(l), $(b)] to {f.nic_of[r]}" if r in f.nic_of else ""
    body_first = [Stmt(f"edge wq[$(l), {r}]: read {wq_src} by {g}.launch after embed[{r}]{wload} reuse {attn_w} rw 1:0")]
    prev = _ar_done(p, "f", "$(l - 1)", r)
    guard = f"\n    guard layer_done[{_key(p, f'(l - 1) * {tp} + {r}', L * tp)}] == 1"
    wq = f"edge wq[$(l), {r}]: read {wq_src} by {g}.launch after {prev}{wload}"
    if r == 0 and p.cxl_layout.checkpoints:
        e = p.cxl_layout.ckpt_every
        body_rest: Program = [If(f"(l - 1) % {e} == {e - 1}",
                                 [Note("the hidden states were just checkpointed: wait for the copy before they change"),
                                  Stmt(f"{wq}, ckpt[$((l - 1) / {e})] reuse {attn_w} rw 1:0{guard}")],
                                 [Stmt(f"{wq} reuse {attn_w} rw 1:0{guard}")])]
    else:
        body_rest = [Stmt(f"{wq} reuse {attn_w} rw 1:0{guard}")]
    out.append(Loop("l", 0, 1, body_first))
    out.append(Loop("l", 1, L, body_rest))
    take = ""
    if s.requests > 1:
        take, n = f", take[$(l), {r}]", s.kv_slots
        grab = f"edge take[$(l), {r}]: alloc kvl{r}[$(l)] to {g} by {g}.alloc"
        out.append(Loop("l", 0, L, [
            Note(f"allocate the layer's KV blocks from the pool: slot q % {n} was request q - {n}'s, which must have freed it"),
            If(f"q >= {n}", [Stmt(f"{grab} after free[$(q - {n}), $(l), {r}]")], [Stmt(grab)])]))
    out.append(Loop("l", 0, L, [
        Note(f"one KV block: {s.block_tokens} tokens x {s.kv_token_bytes} B = {s.block_bytes} B"),
        Loop("b", 0, B, [Stmt(f"edge kvw[$(l), {r}, $(b)]: write kvb{r}[$(l), $(b)] by {g}.launch after wq[$(l), {r}]{take}"
                              f"{lease}\n    update kv_written[0] = 1")]),
        Note("attention reads the layer's whole KV cache, then writes its whole partial output"),
        Stmt(f"edge attn[$(l), {r}]: read kvl{r}[$(l)] by {g}.launch after kvw[$(l), {r}, *]\n"
             f"    bytes {s.layer_kv_bytes} reuse {s.layer_kv_bytes} rw 1:0"),
        Stmt(f"edge attn_out[$(l), {r}]: write tmp{r} by {g}.launch after attn[$(l), {r}]"),
    ]))
    out += _ffn(p, r)
    return out


def _ffn(p: PrefillPlan, r: int) -> Program:
    """Rank ``r``'s dense FFN layers, then its MoE layers (shared experts, dispatch, expert
    weights through two slots, the grouped GEMM, the gather back)."""
    s, g = p.sizes, p.fabric.gpus[r]
    stream, attn_w = p.hbm.stream, s.attn_weight_bytes
    out: Program = []
    ready = _ar_done(p, "a", "$(l)", r)
    if s.dense_layers:
        src = f"wslot{r}[$(l % 2)][{attn_w}, +{s.ffn_weight_bytes}]" if stream else f"wffn{r}[$(l)]"
        out.append(Loop("l", 0, s.dense_layers, [
            Note("dense FFN: stream the weights, up (gate and up) into the intermediate, down into the partial output"),
            Stmt(f"edge wf[$(l), {r}]: read {src} by {g}.launch after {ready} reuse {s.ffn_weight_bytes} rw 1:0"),
            Stmt(f"edge up[$(l), {r}]: write inter{r}[0, +{s.inter_bytes}] by {g}.launch after wf[$(l), {r}]"),
            Stmt(f"edge down[$(l), {r}]: write tmp{r} by {g}.launch after up[$(l), {r}]"),
        ]))
    if not s.moe_layers:
        return out
    fd, H = s.dense_layers, s.row_bytes
    j, slot = f"$(l - {fd})", f"$((l - {fd}) % 2)"
    k, tp = p.model.moe.active, p.options.tp  # type: ignore[union-attr]  # INVARIANT: moe_layers > 0 only for MoE models
    load = f"edge wst[$(l), {r}]: move wexp{r}[{j}] -> wstage{r}[{slot}] by {g}.copy_done stream h2d"
    xf = f"replicate({k}) |> scatter({tp})" if tp > 1 else f"replicate({k})"
    body: Program = []
    if s.shared_weight_bytes:
        src = f"wslot{r}[$(l % 2)][{attn_w}, +{s.shared_weight_bytes}]" if stream else f"wsh{r}[{j}]"
        body += [Note("shared experts run on every token, densely; their output starts the combine buffer"),
                 Stmt(f"edge wf[$(l), {r}]: read {src} by {g}.launch after {ready} reuse {s.shared_weight_bytes} rw 1:0"),
                 Stmt(f"edge up[$(l), {r}]: write inter{r}[0, +{s.shared_inter_bytes}] by {g}.launch after wf[$(l), {r}]"),
                 Stmt(f"edge down[$(l), {r}]: write tmp{r} by {g}.launch after up[$(l), {r}]")]
    else:
        body += [Note("no shared expert: clear the combine buffer"),
                 Stmt(f"edge down[$(l), {r}]: write tmp{r} by {g}.launch after {ready}")]
    init = f"down[$(l), {r}]"
    body += [
        Note(f"fused MoE: copy each token to its top-{k} expert slots" + (f", keeping this rank's 1/{tp}" if tp > 1 else "")
             + f"; stream the weights of the rank's {s.experts_per_rank} experts; one grouped GEMM; sum each token's outputs"),
        Stmt(f"edge disp[$(l), {r}]: move {_hidden(p, r)} -> xe{r} by {g}.launch after {ready}\n    transform {xf}"),
        If(f"l >= {fd + 2}", [Note(f"slot (l - {fd}) % 2 held layer l - 2: its GEMM must be done with it"),
                              Stmt(f"{load} after ew[$(l - 2), {r}]")],
           [_after_previous(p, r, lambda x: f"{load} after {x[2:]}" if x else load)]),
        Stmt(f"edge ew[$(l), {r}]: read wstage{r}[{slot}] by {g}.launch after wst[$(l), {r}] reuse {s.rank_expert_bytes} rw 1:0"),
        Stmt(f"edge ex[$(l), {r}]: move xe{r} -> ye{r} by {g}.launch after disp[$(l), {r}], ew[$(l), {r}]"),
    ]
    if s.slices > 1:
        n = s.slices
        body.append(Note(f"gather back (moe_sum): add each of the {n} top-k slices [t, i, :] of the outputs into the tokens' rows"))
        body.append(Loop("i", 0, n, [Stmt(
            f"edge comb[$(l), {r}, $(i)]: reduce(sum) ye{r}[$(i * {H}), elem {H}, stride {s.slice_stride}, count {s.tokens}] "
            f"-> tmp{r} by {g}.launch after ex[$(l), {r}], {init}")]))
    else:
        body.append(Note("gather back: add the rank's expert outputs into their tokens' rows"))
        body.append(Stmt(f"edge comb[$(l), {r}, 0]: reduce(sum) ye{r} -> tmp{r} by {g}.launch after ex[$(l), {r}], {init}"))
    out.append(Loop("l", fd, s.layers, body))
    return out


def _all_reduce(p: PrefillPlan, kind: str) -> Program:
    """The attention (``kind`` ``a``) or FFN (``f``) all-reduce of every layer: at tp 1 one
    ``reduce(sum)``; else a reduce-scatter of the chunks and an all-gather (NCCL's ring
    decomposition). The FFN's records ``layer_done``."""
    s, f, tp, L = p.sizes, p.fabric, p.options.tp, p.sizes.layers
    what = "attention" if kind == "a" else "FFN"
    if kind == "a":
        before = "attn_out[$(l), *]"
    elif s.moe_layers and s.dense_layers:
        before = None
    elif s.moe_layers:
        before = "comb[$(l), *, *]"
    else:
        before = "down[$(l), *]"
    out: Program = [Note(""), Note(f"{what} all-reduce into the residual stream")]

    def body(before: str) -> Program:
        mw = f"\n    map_write layer_done[{_key(p, f'l * {tp} + 0', L * tp)}] = 1" if (kind == "f" and tp == 1) else ""
        if tp == 1:
            return [Stmt(f"edge rs_{kind}[$(l), 0, 0]: reduce(sum) tmp0 -> act0 by {f.gpus[0]}.launch after {before}{mw}")]
        c = s.chunk_bytes
        res: Program = []
        res.append(Note("reduce-scatter: rank q pulls chunk q of every rank's partial output (P2P read under a lease)"
                        " and adds it to its own residual"))
        for r in range(tp):
            for q in range(tp):
                at = s.chunk_offsets[q]
                res.append(Stmt(f"edge rs_{kind}[$(l), {r}, {q}]: reduce(sum) tmp{r}[{at}, +{c}] -> act{q}[{at}, +{c}] "
                                f"by {f.gpus[q]}.launch after {before}"))
        res.append(Note("all-gather: every rank collects the reduced chunks into its full copy of the hidden states"))
        for q in range(tp):
            mw = f"\n    map_write layer_done[{_key(p, f'l * {tp} + {q}', L * tp)}] = 1" if kind == "f" else ""
            res.append(Stmt(f"edge ag_{kind}[$(l), {q}]: move act{q}[{s.chunk_offsets[q]}, +{c}] -> hs{q} by {f.gpus[q]}.launch "
                            f"after rs_{kind}[$(l), *, *]\n    transform gather({tp}){mw}"))
        return res

    if before is None:  # dense layers then MoE layers (DeepSeek's first_k_dense_replace)
        out.append(Loop("l", 0, s.dense_layers, body("down[$(l), *]")))
        out.append(Loop("l", s.dense_layers, L, body("comb[$(l), *, *]")))
    else:
        out.append(Loop("l", 0, L, body(before)))
    return out


def _checkpoints(p: PrefillPlan) -> Program:
    """Every ``ckpt_every`` layers, rank 0 copies the hidden states into a pmem slot: compressed,
    checksummed, persisted, then handed to the window's memdev."""
    c, f = p.cxl_layout, p.fabric
    if not c.checkpoints:
        return []
    e, g = c.ckpt_every, f.gpus[0]
    codec = CHECKPOINT_CODEC.name
    out: Program = [Note(""), Note(f"every {e} layers, checkpoint the hidden states: {codec} (a compressible intermediate;"
                                   " slots sized by the worst case), crc32c, persist")]
    # A persisted write over a posted link needs a flush of the link after it (FX-ORD-003); the
    # copy engine writes over the machine's own links, which are not posted, so the route is
    # pinned (``pinned_route``) wherever some fabric path crosses a posted link (the RDMA link to
    # the decode node joins every NIC, so an unpinned copy could be assumed to detour through it).
    posted = any(ln.order is LinkOrder.POSTED for ln in f.links)
    for cw in c.ckpt_windows:
        sp, a, b = space_name(cw.window.name), cw.first, cw.end
        home = f.home[cw.window.name]
        slot = f"$(i - {a})" if a else "$(i)"
        via = ", ".join(f"{x} -- {y}" for x, y in pinned_route(f, g, home)) if posted else ""
        out.append(Loop("i", a, b, [Stmt(
            f"edge ckpt[$(i)]: move {_hidden(p, 0)} -> ck_{sp}[{slot}] by {g}.copy_done "
            f"after {_ar_done(p, 'f', f'$(i * {e} + {e - 1})', 0)}\n"
            f"    transform compress({codec}) |> checksum(crc32c) |> persist\n"
            + (f"    via {via}\n" if via else "") +
            f"    handoff ck_{sp}[{slot}]: {g} -> {home}")]))
    return out


def _spills(p: PrefillPlan) -> Program:
    """Each KV group's primary rank moves the blocks of the spilled layers into CXL slots
    (quantized, checksummed) on the ``d2h`` stream, hands each slot to the window's memdev and
    records the new owner in ``block_owner``. In a window another host maps too
    (``FabricPlan.peer_of``) the slot goes to that host instead, which reads it (``fetch``): the
    spill writes the slot back and the fetch invalidates it first, so the read sees the spilled
    bytes without cross-host coherence (specs/obligations.md, FX-ORD-005); the spill then pins
    its route over the machine's own links (``pinned_route``), as the sends do, so no posted
    link to the decode node may carry the bytes the other host reads (FX-ORD-003)."""
    s, f, c = p.sizes, p.fabric, p.cxl_layout
    if not s.spill_layers:
        return []
    G, B, first, dtype = s.groups, s.blocks, s.first_spilled, p.model.dtype
    if c.spill_dtype == "fp8":
        q = f"quantize({dtype} -> fp8, group {QUANT_GROUP}, scale fp32) |> checksum(crc32c)"
    elif c.spill_dtype != dtype:
        q = f"quantize({dtype} -> {c.spill_dtype}) |> checksum(crc32c)"
    else:
        q = "checksum(crc32c)"
    out: Program = [Note(""), Note(f"spill the KV of layers {first}..{s.layers} to CXL as {c.spill_dtype}, then hand each slot to"
                                   " the expander")]
    shared = [sw for sw in c.spill_windows if sw.window.name in f.peer_of]
    if shared:
        out += [Note("a window another host maps too is noncoherent: the spill writes its slot back, and the host that"
                     " takes the"),
                Note("spilled KV invalidates its lines before it reads (FX-ORD-005)")]
    for gi, r in enumerate(f.primaries):
        g = f.gpus[r]
        for sw in c.spill_windows:
            sp, a, b = space_name(sw.window.name), sw.first, sw.end
            peer = f.peer_of.get(sw.window.name)
            to = peer or f.home[sw.window.name]
            slot = f"kvs_{sp}_g{gi}[$(l - {a}), $(b)]"
            key = f"$(((l - {first}) * {G} + {gi}) * {B} + b)"
            # Another host reads the slot, so the spill's route matters (FX-ORD-003): unpinned, it
            # could be any fabric path, through a NIC and the posted RDMA link to the decode node
            # among them. The copy engine writes over the machine's own links (``pinned_route``).
            via = ", ".join(f"{x} -- {y}" for x, y in pinned_route(f, g, f.home[sw.window.name])) if peer else ""
            body = [Stmt(
                f"edge spill[$(l), {r}, $(b)]: move kvb{r}[$(l), $(b)] -> {slot} by {g}.copy_done after kvw[$(l), {r}, $(b)] "
                f"stream d2h\n    transform {q}\n" + (f"    via {via}\n    writeback {slot}\n" if peer else "")
                + f"    handoff {slot}: {g} -> {to}\n    update block_owner[{key}] = {to}")]
            if peer:
                body.append(Stmt(f"edge fetch[$(l), {r}, $(b)]: read {slot} by {peer}.run after spill[$(l), {r}, $(b)] "
                                 f"invalidate {slot}"))
            out.append(Loop("l", a, b, [Loop("b", 0, B, body)]))
    return out


def _sends(p: PrefillPlan) -> Program:
    """Disaggregated prefill: each primary rank's NIC sends every KV block to the decode node
    over the posted RDMA link (replicated when ranks share a head), then flushes the link once per
    layer, hands the layer's buffer to ``decode0``, which reads it."""
    s, f, rm = p.sizes, p.fabric, p.remote
    assert rm is not None  # INVARIANT: called only with --disaggregate
    B, L, R = s.blocks, s.layers, s.replicas
    out: Program = [Note(""), Note("disaggregated prefill: the NIC sends every KV block to the decode node over the posted"
                                   " RDMA link,"),
                    Note("flushes the link once per layer (only a flush makes posted writes visible), then hands the"
                         " layer over")]
    nn = len(f.nics_used)
    per = rm.block_bytes
    for gi, r in enumerate(f.primaries):
        nic = f.nic_of[r]
        n = f.nics_used.index(nic)
        rep = f"\n    transform replicate({R})" if R > 1 else ""
        via = ", ".join(f"{x} -- {y}" for x, y in pinned_route(f, f.gpus[r], nic) + [(nic, "decode0")])
        out.append(Loop("l", 0, L, [Loop("b", 0, B, [Stmt(
            f"edge send[$(l), {r}, $(b)]: move kvb{r}[$(l), $(b)] -> rkv{gi}[$(l)][$(b * {per}), +{per}] by {nic}.tx "
            f"after kvw[$(l), {r}, $(b)]{rep}\n    via {via}\n    update kv_sent[{_key(p, f'l * {nn} + {n}', L * nn)}] = 1")])]))
    for n, nic in enumerate(f.nics_used):
        ranks = [r for r in f.primaries if f.nic_of[r] == nic]
        after = ", ".join(f"send[$(l), {r}, *]" for r in ranks)
        hand = "".join(f"\n    handoff rkv{f.primaries.index(r)}[$(l)]: {nic} -> decode0" for r in ranks)
        reads = [Stmt(f"edge dec[$(l), {f.primaries.index(r)}]: read rkv{f.primaries.index(r)}[$(l)] by decode0.launch "
                      f"after flush[$(l), {n}]") for r in ranks]
        out.append(Loop("l", 0, L, [Stmt(f"edge flush[$(l), {n}]: flush {nic} -- decode0 by {nic}.tx after {after}\n"
                                         f"    aggregate kv_sent[{_key(p, f'l * {nn} + {n}', L * nn)}]{hand}")] + reads))
    return out


def _free(p: PrefillPlan, r: int) -> Program:
    """Rank ``r`` returns each layer's KV blocks to the pool after attention, and after the
    spill and the send when there are."""
    s, f = p.sizes, p.fabric
    g, first = f.gpus[r], s.first_spilled
    base = f"attn[$(l), {r}]"
    if r in f.nic_of:
        base += f", send[$(l), {r}, *]"
    spilled = r in f.primaries and s.spill_layers
    out: Program = [Note(""), Note(f"rank {r}: return each layer's KV blocks to the pool once nothing uses them")]
    if first > 0 or not spilled:
        out.append(Loop("l", 0, first if spilled else s.layers, [
            Stmt(f"edge free[$(l), {r}]: release kvl{r}[$(l)] return_pool by {g}.free after {base}")]))
    if spilled:
        out.append(Loop("l", first, s.layers, [
            Stmt(f"edge free[$(l), {r}]: release kvl{r}[$(l)] return_pool by {g}.free after {base}, spill[$(l), {r}, *]")]))
    return out
