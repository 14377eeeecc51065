"""Who may define the bytes a read touches (FX-INIT-001, ``defined.Unwritten``): which accesses
read and write, which writes serve which reads, the ``init`` ranges, the writers of each read
(every serving write, and the latest ones, ``recent_writers``), the ``alloc``s and cancelled
writes that can make defined bytes stale, and the lowest byte left undefined in one concrete
schedule (``undefined_byte``). The rule they serve is in specs/obligations.md, "Def-before-use".
Emits no diagnostics.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

from fxverify.ir import Access, AccessMode, Footprint
from fxverify.obligations.base import Context
from fxverify.obligations.byte_cover import clip, first_gap
from fxverify.obligations.pairs import pairs_where


def reads(a: Access) -> bool:
    """True when access ``a`` reads the bytes already there: a plain read, or a reduction's
    destination (it accumulates into them)."""
    return a.mode is AccessMode.READ or a.mode is AccessMode.REDUCE


def writes(a: Access) -> bool:
    """True when access ``a`` leaves its bytes defined: a write, or a reduction's destination."""
    return a.mode is AccessMode.WRITE or a.mode is AccessMode.REDUCE


def serves(ctx: Context, w: int, pw: int, u: int, pu: int) -> bool:
    """True when access ``pw`` of edge ``w`` may define bytes that access ``pu`` of edge ``u``
    reads, if it finishes before ``u`` starts: another edge that nobody cancels (a cancelled
    write may stop halfway, so it defines no byte: specs/obligations.md section 1, cancellation),
    a writing access, the same address space, and bounding intervals that meet. The one place
    that says which writes count (which of their bytes count, per allocation, the query and the
    fast proof decide)."""
    if w == u or ctx.cancellers.get(w):
        return False
    aw, au = ctx.edge(w).accesses()[pw], ctx.edge(u).accesses()[pu]
    fw, fu = aw.footprint, au.footprint
    return writes(aw) and fw.space == fu.space and fw.lo < fu.hi and fu.lo < fw.hi


def init_ranges(ctx: Context) -> dict[str, list[tuple[int, int, str]]]:
    """Per address space, the ``[lo, hi)`` ranges declared ``init`` with the name that declares
    them (a whole space, or a region), sorted. Cached on the context."""
    hit = ctx.__dict__.get("_init_ranges")
    if hit is None:
        hit = defaultdict(list)
        for sp in ctx.policy.spaces:
            if sp.init:
                hit[sp.name].append((sp.base, sp.end, sp.name))
        for r in ctx.policy.regions:
            if r.init:
                hit[r.space].append((r.base, r.end, r.name))
        for v in hit.values():
            v.sort()
        ctx.__dict__["_init_ranges"] = hit
    return hit


def init_meeting(ctx: Context, fp: Footprint) -> list[tuple[int, int, str]]:
    """The ``init_ranges`` of ``fp``'s space whose range shares a byte with ``fp``'s hull, in
    their sorted order. Bisects the ranges sorted by start, then walks back while the running
    maximum of the ends still passes ``fp.lo`` (O(log n + ranges met + nested ones)), instead of
    testing every range of the space for every read."""
    index = ctx.__dict__.get("_init_index")
    if index is None:
        index = {}
        for space, items in init_ranges(ctx).items():
            ends, top = [], -1
            for _lo, hi, _n in items:
                top = max(top, hi)
                ends.append(top)
            index[space] = ([lo for lo, _hi, _n in items], ends, items)
        ctx.__dict__["_init_index"] = index
    got = index.get(fp.space)
    if got is None:
        return []
    starts, ends, items = got
    lo, hi = fp.lo, fp.hi
    out = []
    j = bisect.bisect_left(starts, hi) - 1
    while j >= 0 and ends[j] > lo:
        if items[j][1] > lo:
            out.append(items[j])
        j -= 1
    out.reverse()
    return out


def writers(ctx: Context) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Reading access ``(edge, position)`` -> the writing accesses that ``serves`` it, sorted.
    Built from the sweep's overlapping pairs. Cached on the context."""
    hit = ctx.__dict__.get("_writers")
    if hit is None:
        hit = defaultdict(list)
        # only a reading access and a writing one that nobody cancels (``serves``)
        reader = (lambda _e, _p, acc: reads(acc))
        writer = (lambda e, _p, acc: writes(acc) and not ctx.cancellers.get(e))
        for a, pa, b, pb in pairs_where(ctx, reader, writer):
            for u, pu, w, pw in ((a, pa, b, pb), (b, pb, a, pa)):
                if reads(ctx.edge(u).accesses()[pu]) and serves(ctx, w, pw, u, pu):
                    hit[(u, pu)].append((w, pw))
        for v in hit.values():
            v.sort()
        ctx.__dict__["_writers"] = hit
    return hit


#: How many of the latest writes of each byte range ``recent_writers`` keeps: enough for the
#: concurrent contributions of an all-reduce (one per rank) to leave the write before them in view.
RECENT = 16


def recent_writers(ctx: Context, only: Collection[tuple[int, int]] | None = None
                   ) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Reading access ``(edge, position)`` -> the latest ``RECENT`` serving writes (``serves``) of
    each byte range its hull meets, in the graph's linear extension of HB before it: the writes
    the fast proof tries first. Only writes earlier in that order can happen-before the read, and
    in a flow that reuses its buffers, the write that defines a read's bytes is one of the last
    ones before it; the older writes of the same bytes (every earlier layer's) are not visited.

    One sweep over the edges in HB-rank order, per address space, over the segments between the
    hull bounds of its writes: a read collects the writes kept on the segments it meets, then a
    write joins the segments of its hull. Cost: O(accesses x segments met x ``RECENT``), not the
    pairs of a reused buffer. Cached on the context, as the first call makes it: with ``only``,
    just the reads it holds are listed, and only their spaces are swept (a read left out lists no
    writer, and ``Unwritten`` then tries every serving write, ``writers``)."""
    hit = ctx.__dict__.get("_recent")
    if hit is not None:
        return hit
    pol, g = ctx.policy, ctx.graph
    # only the spaces of the reads to list: a write serves reads of its own space alone
    spaces = None if only is None else {pol.edges[e].accesses()[p].footprint.space for e, p in only}
    bounds: dict[str, set[int]] = defaultdict(set)
    for e in pol.edges:
        for a in e.accesses():
            if writes(a) and (spaces is None or a.footprint.space in spaces):
                bounds[a.footprint.space].update((a.footprint.lo, a.footprint.hi))
    cuts = {space: sorted(b) for space, b in bounds.items()}
    kept: dict[str, list[tuple[tuple[int, int], ...]]] = {space: [()] * len(c) for space, c in cuts.items()}
    hit = {}
    for eid in sorted(range(len(pol.edges)), key=g.rank) if spaces is None or spaces else ():
        accs = pol.edges[eid].accesses()
        for pos, a in enumerate(accs):
            if reads(a) and (only is None or (eid, pos) in only):
                fp, seen = a.footprint, {}
                c = cuts.get(fp.space, [])
                for i in range(max(0, bisect.bisect_right(c, fp.lo) - 1), bisect.bisect_left(c, fp.hi)):
                    for wv in kept[fp.space][i]:
                        seen[wv] = None
                hit[(eid, pos)] = [wv for wv in seen if serves(ctx, wv[0], wv[1], eid, pos)]
        for pos, a in enumerate(accs):
            if writes(a) and (spaces is None or a.footprint.space in spaces):
                fp = a.footprint
                c, segs = cuts[fp.space], kept[fp.space]
                for i in range(bisect.bisect_left(c, fp.lo), bisect.bisect_left(c, fp.hi)):
                    segs[i] = (segs[i] + ((eid, pos),))[-RECENT:]
    ctx.__dict__["_recent"] = hit
    return hit


def covering_allocs(ctx: Context, fp: Footprint) -> list[tuple[int, int, int]]:
    """``(alloc edge, lo, hi)`` for every ``alloc`` clause whose region ``[lo, hi)`` lies in
    ``fp``'s space and meets ``fp``: the allocations that can make a write of ``fp``'s bytes stale
    (specs/obligations.md, "Def-before-use"). Sorted."""
    out = set()
    for name, eids in ctx.allocs.items():
        r = ctx.policy.region(name)
        if r.space == fp.space and fp.meets(r.base, r.end):
            out |= {(a, r.base, r.end) for a in eids}
    return sorted(out)


def covering_tears(ctx: Context, fp: Footprint, u: int) -> list[tuple[int, Footprint]]:
    """``(edge, footprint)`` for every writing access of a cancelled edge other than ``u`` whose
    footprint lies in ``fp``'s space and meets its bounds: the writes that may stop halfway and
    leave the bytes they touched torn (specs/obligations.md section 1, cancellation; FX-INIT-001).
    Sorted by edge."""
    out = []
    for x in sorted(ctx.cancellers):
        if x == u:
            continue
        for a in ctx.edge(x).accesses():
            g = a.footprint
            if a.mode is not AccessMode.READ and g.space == fp.space and g.lo < fp.hi and fp.lo < g.hi:
                out.append((x, g))
    return out


def undefined_byte(ctx: Context, u: int, fp: Footprint, inits: Sequence[tuple[int, int, str]],
                   allocs: Sequence[tuple[int, int, int]], ws: Sequence[tuple[int, int]],
                   times: Mapping[str, int | bool]) -> int | None:
    """The lowest byte of ``fp`` (read by edge ``u``) that, when the edges run at ``times``
    (``s_<e>``, ``f_<e>``, ns), no ``inits`` range (``init_meeting``) and no write of ``ws``
    defines when ``u`` starts: the FX-INIT-001 query's rule (``defined.Unwritten.encode``),
    evaluated. A write counts when it finishes by then, less the ranges of the ``allocs``
    (``covering_allocs``) that start before ``u`` and finish after the write starts; an ``init``
    range less those of the ``allocs`` that start before ``u``. Cancelled writes are not read
    (the caller guesses only without them). ``None`` when every byte is defined or the cover runs
    out of steps (``first_gap``). Raises ``KeyError`` when ``times`` misses an edge."""
    su = times[f"s_{u}"]
    fresh = [(lo, hi) for a, lo, hi in allocs if times[f"s_{a}"] < su]
    pieces: list[Footprint | tuple[int, int]] = [p for lo, hi, _ in inits for p in clip((lo, hi), fresh)]
    for w, _pw in ws:
        if times[f"f_{w}"] <= su:
            sw = times[f"s_{w}"]
            kills = [(lo, hi) for a, lo, hi in allocs if sw < times[f"f_{a}"] and times[f"s_{a}"] < su]
            pieces += [p for d in ctx.edge(w).defines() for p in clip(d, kills)]
    try:
        return first_gap(fp, pieces)
    except OverflowError:
        return None
