"""Watches of the lowering: pairs of edges whose runtime guards look at each other's state.

Takes an obligation ``Context`` (policy and happens-before graph); produces, per edge, the edges a
``RUNNING`` op watches (conflicting accesses that happens-before does not order: FX-ORD-002,
FX-XF-004, FX-MAP-002; only computed for ``--allow-unproved`` lowerings), the writers a ``POSTED``
op waits on (FX-ORD-003) and the reductions an ``ACCUM`` op protects (FX-XF-004, lost
accumulation). ``plan`` turns them into ``fx_ops`` rows (``specs/lowering.md`` section 3). Emits no
diagnostics.
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, Footprint, MapOpKind
from fxverify.obligations.base import Context
from fxverify.obligations.visibility import (host_read_between, host_reads_of, noticed, notices, on_link,
                                             read_back_between, read_backs_of, same_requester)
from fxverify.vocab import AC_OPS, ClassKind


def _share_a_byte(a: Footprint, b: Footprint) -> bool:
    """True when two footprints share a byte: exact for strided ones, by walking the elements of
    the footprint with fewer elements (only used for ``--allow-unproved`` lowerings)."""
    if a.space != b.space or a.hi <= b.lo or b.hi <= a.lo:
        return False
    small, big = (a, b) if a.count <= b.count else (b, a)
    if small.contiguous:
        return big.meets(small.lo, small.hi)
    return any(big.meets(small.base + k * small.stride, small.base + k * small.stride + small.elem)
               for k in range(small.count))


def conflict_watches(ctx: Context) -> dict[int, list[tuple[int, str]]]:
    """Pairs of edges that conflict and are not ordered by happens-before, as watches
    ``eid -> [(partner, reason)]`` (FX-ORD-002, FX-XF-004, FX-MAP-002)."""
    pol, graph = ctx.policy, ctx.graph
    out: dict[int, set[tuple[int, str]]] = defaultdict(set)
    if not graph.is_acyclic():
        return {}

    def add(a: int, b: int, reason: str) -> None:
        if a != b and not graph.ordered(a, b):
            out[a].add((b, reason))
            out[b].add((a, reason))

    for items in ctx.accesses_by_space().values():
        # Sweep by footprint start; reads only meet open writes, so they are kept apart.
        open_w: list[tuple[int, object]] = []
        open_r: list[tuple[int, object]] = []
        for eid, _pos, acc in items:
            fp = acc.footprint
            open_w = [t for t in open_w if t[1].footprint.hi > fp.lo]
            others = open_w
            if acc.mode is not AccessMode.READ:
                open_r = [t for t in open_r if t[1].footprint.hi > fp.lo]
                others = open_w + open_r
            for oid, oacc in others:
                if not _share_a_byte(fp, oacc.footprint):
                    continue
                if acc.mode is AccessMode.REDUCE and oacc.mode is AccessMode.REDUCE and acc.atomic and oacc.atomic:
                    if not (acc.op == oacc.op and acc.op in AC_OPS):
                        add(eid, oid, codes.XF_004)
                else:
                    add(eid, oid, codes.ORD_002)
            (open_r if acc.mode is AccessMode.READ else open_w).append((eid, acc))
    writes: dict[tuple[str, int | None], list[tuple[int, object]]] = defaultdict(list)
    for e in pol.edges:
        for op in e.map_ops:
            if op.kind in (MapOpKind.WRITE, MapOpKind.UPDATE) and pol.map(op.map).cls.kind is not ClassKind.CONST:
                writes[(op.map, op.key)].append((e.eid, op))  # a const map's writes are denied (CONST)
    for (mname, _key), ws in writes.items():
        decl = pol.map(mname)
        # Two updates with an associative, commutative merge commute: only pairs with a blind
        # write (or a non-commuting merge) on one side can lose an update.
        blind = [(a, oa) for a, oa in ws if not (oa.kind is MapOpKind.UPDATE and decl.merge in AC_OPS)]
        for a, oa in blind:
            for b, _ob in ws:
                slots = decl.cls.kind is ClassKind.PER_DEVICE and pol.edges[a].device != pol.edges[b].device
                if a != b and not slots:
                    add(a, b, codes.MAP_002)
    return {k: sorted(v) for k, v in out.items()}


def posted_watches(ctx: Context) -> dict[int, list[tuple[int, int, int]]]:
    """Readers of bytes written over a ``posted`` link that need a flush (from another device, or
    from the writer's device along another route: ``visibility.same_requester``; not one ordered
    after a consumer of a completion entry that follows the write, ``visibility.noticed``, nor after a
    read-back or a host read that follows it, ``visibility.read_backs_of``, ``visibility.host_reads_of``):
    ``reader ->
    [(writer, link index, 1 if the writer flushes that link itself)]`` (FX-ORD-003)."""
    pol, graph = ctx.policy, ctx.graph
    link_ids = {ln.name: i for i, ln in enumerate(pol.links)}
    readers: dict[str, list[tuple[int, int, Footprint]]] = defaultdict(list)
    for e in pol.edges:
        for acc in e.accesses():
            if acc.mode is not AccessMode.WRITE:
                readers[acc.footprint.space].append((acc.footprint.lo, e.eid, acc.footprint))
    for v in readers.values():
        v.sort(key=lambda t: (t[0], t[1]))
    out: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for w in pol.edges:
        if w.dst is None:
            continue
        links = graph.posted_links(w)
        if not links:
            continue
        for _lo, r, fp in readers.get(w.dst.space, ()):
            if fp.lo >= w.dst.hi:
                break
            if r == w.eid or not _share_a_byte(fp, w.dst) or same_requester(ctx, w, w.accesses()[-1], pol.edges[r]):
                continue
            notes = notices(ctx, w)
            backs = read_backs_of(ctx, w, len(w.accesses()) - 1)
            hosts = host_reads_of(ctx, w, len(w.accesses()) - 1)
            for ln in links:
                # A read-back or a host read HB-between the write and the read pushed the write
                # along its one route (FX-ORD-003): the `after` clauses the runtime enforces keep
                # that order.
                pushed = read_back_between(graph, [(x, rb) for x, rb in backs if ln.name in rb.route], w.eid, r) or (
                    host_read_between(graph, [(x, route) for x, route in hosts if ln.name in route], w.eid, r))
                if pushed is None and not noticed(ctx, w.eid, r, on_link(notes, ln.name)):
                    out[r].append((w.eid, link_ids[ln.name], int(ln.name in w.flushes)))
    return {k: sorted(set(v)) for k, v in out.items()}


def _covers(y: Footprint, lo: int, hi: int) -> bool:
    """True when contiguous footprint ``y`` holds every byte of ``[lo, hi)``."""
    return y.contiguous and y.lo <= lo and hi <= y.hi


def accumulation_watches(ctx: Context) -> dict[int, list[tuple[int, list[int]]]]:
    """Writes over bytes a reduction accumulated: ``writer -> [(reducer, readers)]``, one entry per
    segment of the shared bytes, where ``readers`` are the edges whose reads cover that segment.
    The writer must not start while the reducer is done and some segment has not been read by one
    of its readers in between (FX-XF-004, lost accumulation). Segments are cut at the readers'
    bounds, so reads in chunks (a reduce-scatter) cover the bytes together, as the checker's proof
    of FX-XF-004 accepts; shared bytes are compared as intervals, exact for contiguous footprints."""
    graph = ctx.graph
    acyclic = graph.is_acyclic()
    out: dict[int, list[tuple[int, list[int]]]] = defaultdict(list)
    for items in ctx.accesses_by_space().values():
        reduces = [(e, a) for e, _i, a in items if a.mode is AccessMode.REDUCE]
        if not reduces:
            continue
        writes = [(e, a) for e, _i, a in items if a.mode is AccessMode.WRITE]
        reads = [(e, a) for e, _i, a in items if a.mode is AccessMode.READ]
        # items are sorted by footprint lo: a write can only meet [lo, hi) if it starts within the
        # longest write's length before lo.
        wlos = [a.footprint.lo for _e, a in writes]
        longest = max((a.footprint.hi - a.footprint.lo for _e, a in writes), default=0)
        for r, ra in reduces:
            fr = ra.footprint
            for w, wa in writes[bisect.bisect_left(wlos, fr.lo - longest):bisect.bisect_left(wlos, fr.hi)]:
                if w == r or not _share_a_byte(fr, wa.footprint) or (acyclic and graph.hb_before(w, r)):
                    continue
                lo, hi = max(fr.lo, wa.footprint.lo), min(fr.hi, wa.footprint.hi)
                near = [(y, ya.footprint) for y, ya in reads
                        if y not in (r, w) and ya.footprint.contiguous and ya.footprint.lo < hi and lo < ya.footprint.hi]
                cuts = sorted({lo, hi} | {min(max(f.lo, lo), hi) for _y, f in near} | {min(max(f.hi, lo), hi) for _y, f in near})
                for a, b in zip(cuts, cuts[1:]):
                    out[w].append((r, sorted({y for y, f in near if _covers(f, a, b)})))
    return dict(out)
