"""Def-before-use on one concrete schedule (FX-INIT-001), for the simulator.

A read (the source of a ``read``, ``move`` or ``reduce``; the destination a ``reduce`` accumulates
into) at ``s(u)`` sees only bytes that an ``init`` region or space holds before the flow, or that
another edge of the schedule defined (``ir.Edge.defines``) and finished by ``s(u)``. Defined bytes
are kept as sorted disjoint intervals (``ByteSet``), never byte by byte: regions can be GiB.
Written from the execution model (BRIEF section 2, specs/obligations.md "Def-before-use"), not
from the SMT encoding. Emits no diagnostics.
"""

from __future__ import annotations

import bisect

from fxverify.diagnostics import codes
from fxverify.ir import AccessMode
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


def violations(w: World, ids: list[int], sched: Schedule) -> list[Violation]:
    """Every read of ``sched`` that sees a byte nobody defined: ``(u,)`` at ``s(u)``, with the
    lowest such byte of the access; one violation per reading access."""
    P, E = w.policy, w.policy.edges
    out: list[Violation] = []
    for u in ids:
        for a in E[u].accesses():
            if a.mode is AccessMode.WRITE:
                continue
            fp = a.footprint
            have = ByteSet()
            for sp in P.spaces:
                if sp.init and sp.name == fp.space:
                    have.add(sp.base, sp.base + sp.size)
            for r in P.regions:
                if r.init and r.space == fp.space:
                    have.add(r.base, r.base + r.size)
            for x in ids:
                if x != u and sched[x][1] <= sched[u][0]:
                    for d in E[x].defines():
                        if d.space == fp.space:
                            for lo, hi in elements(d, fp.lo, fp.hi):
                                have.add(lo, hi)
            for lo, hi in elements(fp, fp.lo, fp.hi):
                miss = have.first_missing(lo, hi)
                if miss is not None:
                    out.append(Violation(codes.INIT_001, (u,), sched[u][0], miss, f"byte {miss:#x} never written"))
                    break
    return out
