"""Def-before-use on one concrete schedule (FX-INIT-001), for the simulator.

A read (the source of a ``read``, ``move`` or ``reduce``; the destination a ``reduce`` accumulates
into) at ``s(u)`` sees only bytes that an ``init`` region or space holds before the flow, or that
another edge of the schedule defined (``ir.Edge.defines``) and finished by ``s(u)`` *in the same
allocation*: a byte of a region that an ``alloc`` edge ``a`` gives out again is stale for ``u``
when ``a`` lies between the write and the read, ``s(w) < f(a)`` and ``s(a) < s(u)`` (an ``alloc``
that overlaps either end counts), and the ``init`` contents hold only until an ``alloc`` of the
byte's region starts before ``s(u)``: a reused block holds the previous allocation's data, which
this request never wrote. A cancelled write ``x`` (another edge) tears the bytes of its writing
footprints the same way: it may stop halfway, so a byte it may touch after the serving write
starts, ``s(w) < e(x)`` with ``s(x) < s(u)``, holds part of its data and is not the serving
write's (for ``init``: any touch that starts before ``s(u)``); ``e(x)`` is the end of its touch
interval (specs/obligations.md section 1, cancellation). Defined bytes
are kept as sorted disjoint intervals (``ByteSet``), never byte by byte: regions can be GiB.
Written from the execution model (BRIEF section 2, specs/obligations.md "Def-before-use"), not
from the SMT encoding. Emits no diagnostics.
"""

from __future__ import annotations

import bisect

from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, Footprint
from fxverify.replay.footprints import elements
from fxverify.replay.world import Schedule, Violation, World


class ByteSet:
    """A set of byte addresses as sorted, disjoint, non-adjacent intervals ``[lo, hi)``."""

    def __init__(self) -> None:
        self.los: list[int] = []
        self.his: list[int] = []

    def add(self, lo: int, hi: int) -> None:
        """Add every byte of ``[lo, hi)``, merging the intervals it meets or touches."""
        if hi <= lo:
            return
        i = bisect.bisect_left(self.his, lo)      # first interval ending at or after lo
        j = bisect.bisect_right(self.los, hi)     # intervals starting at or before hi
        if i < j:
            lo, hi = min(lo, self.los[i]), max(hi, self.his[j - 1])
        self.los[i:j], self.his[i:j] = [lo], [hi]

    def first_missing(self, lo: int, hi: int) -> int | None:
        """The lowest byte of ``[lo, hi)`` not in the set, or ``None`` when all are."""
        i = bisect.bisect_right(self.los, lo) - 1
        if i >= 0 and self.his[i] > lo:
            lo = self.his[i]
        return lo if lo < hi else None


def _fresh(lo: int, hi: int, stale: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[lo, hi)`` outside every stale interval."""
    parts = [(lo, hi)]
    for a, b in stale:
        parts = [q for x, y in parts for q in ((x, min(y, a)), (max(x, b), y)) if q[0] < q[1]]
    return parts


def defined(w: World, ids: list[int], sched: Schedule, u: int, fp: Footprint) -> ByteSet:
    """The bytes of ``fp``'s hull that the read ``u`` of ``fp`` sees defined at ``s(u)`` in
    ``sched`` (over the edges ``ids``): the ``init`` ranges not made stale by an ``alloc`` or a
    cancelled write that starts before ``s(u)``, and the bytes each other edge that finished by
    ``s(u)`` defines, less those an ``alloc`` or a cancelled write made stale between the two (the
    rule in the module docstring)."""
    P, E = w.policy, w.policy.edges
    su = sched[u][0]
    # (start, finish, [lo, hi)) of every alloc of a region of this space in the schedule
    allocs = [(sched[x][0], sched[x][1], r.base, r.base + r.size) for x in ids for al in E[x].allocs
              for r in [P.region(al.region)] if r.space == fp.space]
    # (start, end of touch, [lo, hi)) of every element of a write some edge cancels
    tears = [(tx[0], tx[1], lo, hi) for x in ids if x != u and w.cancelled(x)
             for tx in [w.touch(x, sched)] if tx[0] < tx[1]
             for a_x in E[x].accesses() if a_x.mode is not AccessMode.READ and a_x.footprint.space == fp.space
             for lo, hi in elements(a_x.footprint, fp.lo, fp.hi)]
    before_flow = [(lo, hi) for sa, _fa, lo, hi in allocs + tears if sa < su]
    have = ByteSet()
    for sp in P.spaces:
        if sp.init and sp.name == fp.space:
            for lo, hi in _fresh(sp.base, sp.base + sp.size, before_flow):
                have.add(lo, hi)
    for r in P.regions:
        if r.init and r.space == fp.space:
            for lo, hi in _fresh(r.base, r.base + r.size, before_flow):
                have.add(lo, hi)
    for x in ids:
        sx, fx = sched[x]
        # A cancelled write may stop halfway: it defines no byte.
        if x != u and fx <= su and not w.cancelled(x):
            stale = [(lo, hi) for sa, fa, lo, hi in allocs + tears if sx < fa and sa < su]
            for d in E[x].defines():
                if d.space == fp.space:
                    for lo, hi in elements(d, fp.lo, fp.hi):
                        for q in _fresh(lo, hi, stale):
                            have.add(*q)
    return have


def violations(w: World, ids: list[int], sched: Schedule) -> list[Violation]:
    """Every read of ``sched`` that sees a byte nobody defined: ``(u,)`` at ``s(u)``, with the
    lowest such byte of the access; one violation per reading access."""
    out: list[Violation] = []
    for u in ids:
        for a in w.policy.edges[u].accesses():
            if a.mode is AccessMode.WRITE:
                continue
            fp = a.footprint
            have = defined(w, ids, sched, u, fp)
            for lo, hi in elements(fp, fp.lo, fp.hi):
                miss = have.first_missing(lo, hi)
                if miss is not None:
                    out.append(_unwritten(u, sched, miss))
                    break
    return out


def undefined_at(w: World, sched: Schedule, u: int, address: int) -> Violation | None:
    """The violation of ``sched`` in which a read of ``u`` sees byte ``address`` undefined, or
    ``None`` when no reading access of ``u`` touches that byte or every one sees it defined. A
    counterexample names one byte its read sees undefined, not necessarily the lowest one
    (``violations`` reports that one): this confirms the byte it names."""
    ids = sorted(sched)
    for a in w.policy.edges[u].accesses():
        fp = a.footprint
        if a.mode is not AccessMode.WRITE and fp.contains(address) \
                and defined(w, ids, sched, u, fp).first_missing(address, address + 1) is not None:
            return _unwritten(u, sched, address)
    return None


def _unwritten(u: int, sched: Schedule, byte: int) -> Violation:
    return Violation(codes.INIT_001, (u,), sched[u][0], byte, f"byte {byte:#x} never written", "defined")
