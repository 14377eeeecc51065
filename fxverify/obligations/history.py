"""The access history of each address space, swept once in a linear extension of happens-before:
which accesses are HB-after every earlier access they conflict with (FastTrack-style).

Takes a ``Context`` (acyclic HB); produces ``after_all(ctx)``, the set of accesses ``(edge,
position)`` whose every conflicting earlier access is HB-before them, so that each FX-ORD-002 pair
they close is proved without a query of its own. Its callers run it only where it pays: FX-ORD-002
when the reachability index is over its budget (``PolicyGraph.indexed``: each query is then a
graph search), FX-ORD-003 for the own writes with no later own read. Emits no diagnostics.

The sweep follows FastTrack (Flanagan and Freund, "FastTrack: Efficient and Precise Dynamic Race
Detection", PLDI 2009) on the static HB order instead of vector clocks. Each space's footprint
hulls cut it into elementary byte segments; accesses are visited in a topological order of HB
(``PolicyGraph.rank``), and each segment keeps ``W``, the accesses that write it (plain writes and
reductions) not known to be HB-before a later one, and ``R``, the reads since. The invariant, per
segment: every access visited so far is in ``W`` or ``R``, or is HB-before a member of ``W``. A new
access ``x`` checks the members its segments hold (``W``; for a write also ``R``) with one
reachability query each. When all are HB-before ``x``, transitivity makes every earlier access
that conflicts with ``x`` HB-before it (an access of ``x``'s own edge counts as before it: what
precedes that edge precedes ``x``). When one is not, each of ``x``'s pairs is asked of the
reachability index on its own (``races.generate``), and a pair HB does not order goes to a cancel
order or the solver: the sweep only ever proves, never refutes. Then a read joins ``R``; a write replaces ``W`` and ``R`` by itself and the members not
HB-before it, which keeps the invariant in both cases.
"""

from __future__ import annotations

import bisect

from fxverify.ir import AccessMode
from fxverify.obligations.base import Context


def after_all(ctx: Context) -> frozenset[tuple[int, int]]:
    """The accesses ``(edge id, position)`` that are HB-after every earlier access (in HB order)
    sharing a hull byte with them, other than their own edge's (see the module docstring). Read
    accesses need this only against writes and reductions. Requires an acyclic HB graph. Cached
    on the context. O(accesses x (segments per hull + members per segment)) queries of the
    reachability index, not one per pair."""
    hit = ctx.__dict__.get("_after_all")
    if hit is not None:
        return hit
    g = ctx.graph
    hb_before, rank = g.hb_before, g.rank
    out: set[tuple[int, int]] = set()
    read = AccessMode.READ
    for _space, items in sorted(ctx.accesses_by_space().items()):
        cuts = sorted({b for _e, _p, acc in items for b in (acc.footprint.lo, acc.footprint.hi)})
        order = sorted(items, key=lambda t: (rank(t[0]), t[0], t[1]))
        writers: dict[int, list[tuple[int, int]]] = {}  # segment -> W
        readers: dict[int, list[tuple[int, int]]] = {}  # segment -> R
        for eid, pos, acc in order:
            fp = acc.footprint
            segs = range(bisect.bisect_left(cuts, fp.base), bisect.bisect_left(cuts, fp.hi))
            writes = acc.mode is not read
            before: dict[tuple[int, int], bool] = {}  # member -> HB-before x (or of x's edge)
            proved = True
            for s in segs:
                for members in (writers.get(s), readers.get(s) if writes else None):
                    if not members:
                        continue
                    for m in members:
                        if m not in before:
                            before[m] = hit_m = m[0] == eid or hb_before(m[0], eid)
                            proved = proved and hit_m
            me = (eid, pos)
            if proved:
                out.add(me)
            if not writes:
                for s in segs:
                    members = readers.get(s)
                    if members is None:
                        readers[s] = [me]
                    else:
                        members.append(me)
                continue
            for s in segs:
                members = writers.get(s)
                writers[s] = [m for m in members if not before[m]] + [me] if members else [me]
                members = readers.get(s)
                if members:
                    readers[s] = [m for m in members if not before[m]]
    hit = frozenset(out)
    ctx.__dict__["_after_all"] = hit
    return hit
