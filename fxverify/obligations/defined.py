"""Def-before-use: FX-INIT-001 (a read touches bytes never written).

Takes a ``Context``; yields one ``Unwritten`` obligation per reading access: the source of a
``read``, ``move`` or ``reduce``, and the destination of a ``reduce``, which accumulates into the
bytes already there (``dst = dst op src``: accumulating into garbage is garbage). Writes are the
destinations of ``write``, ``move`` and ``reduce``. The rule (specs/obligations.md, "Def-before-use"):
every byte a read ``u`` touches lies in a region or space declared ``init`` (loaded before the
flow), or among the bytes a write ``w`` that can serve ``u`` (``serves``) defines
(``ir.Edge.defines``: a move defines only as many destination bytes as its chain emits) with
``f(w) <= s(u)``. The candidate writers of a read are the accesses whose bounding intervals meet
its own (``base.overlapping_pairs``, a sweep per address space), so a policy of tens of
thousands of edges is not quadratic. The fast proof covers the read's footprint with the
footprints of the writers HB-before it and the ``init`` ranges by exact interval and stride
arithmetic (``first_gap``); since every writer that is not HB-before ``u`` can finish after ``u``
starts in one schedule, that proof is also complete, and the solver only finds the witness.
Emits no diagnostics itself (the pipeline reports refutations).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator, Sequence

from fxverify.certificate import DefinedCover, Evidence, WriteBefore
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.ir import Access, AccessMode, Footprint, Region
from fxverify.graph import PolicyGraph
from fxverify.obligations.base import Context, Obligation, overlapping_pairs
from fxverify.obligations.encode import contains, finish, hb_label, member, start, time_objectives
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, and_, between, int_var, not_, or_
from fxverify.vocab import DTYPES

#: The most cover steps (pieces visited, times strided writers scanned) the fast proof spends on
#: one read before it leaves the read to the solver.
COVER_BUDGET = 1 << 17


def reads(a: Access) -> bool:
    """True when access ``a`` reads the bytes already there: a plain read, or a reduction's
    destination (it accumulates into them)."""
    return a.mode is AccessMode.READ or a.mode is AccessMode.REDUCE


def writes(a: Access) -> bool:
    """True when access ``a`` leaves its bytes defined: a write, or a reduction's destination."""
    return a.mode is AccessMode.WRITE or a.mode is AccessMode.REDUCE


def serves(ctx: Context, w: int, pw: int, u: int, pu: int) -> bool:
    """True when access ``pw`` of edge ``w`` may define bytes that access ``pu`` of edge ``u``
    reads, if it finishes before ``u`` starts: another edge, a writing access, the same address
    space, and bounding intervals that meet. The one place that says which writes count (when
    allocations get lifetimes, a write counts only inside the read's allocation)."""
    if w == u:
        return False
    aw, au = ctx.edge(w).accesses()[pw], ctx.edge(u).accesses()[pu]
    fw, fu = aw.footprint, au.footprint
    return writes(aw) and fw.space == fu.space and fw.lo < fu.hi and fu.lo < fw.hi


def first_gap(target: Footprint, pieces: Sequence[tuple[int, int] | Footprint], budget: int = COVER_BUDGET
              ) -> int | None:
    """The lowest byte of ``target`` in none of ``pieces`` (intervals ``[lo, hi)`` or footprints,
    strided ones exactly), or ``None`` when they cover it. Walks ``target`` piece by piece: the
    contiguous pieces merged and bisected, the strided ones scanned. Raises ``OverflowError``
    after ``budget`` steps (a step scans every strided piece once)."""
    spans, strided = [], []
    for p in pieces:
        if isinstance(p, Footprint) and not p.contiguous:
            strided.append(p)
        else:
            spans.append((p.lo, p.hi) if isinstance(p, Footprint) else p)
    merged: list[list[int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        elif lo < hi:
            merged.append([lo, hi])
    los = [m[0] for m in merged]
    cost = 1 + len(strided)
    x, steps = target.lo, 0
    while x < target.hi:
        steps += cost
        if steps > budget:
            raise OverflowError("cover budget exhausted")
        if not target.contiguous and (x - target.base) % target.stride >= target.elem:
            x = target.base + ((x - target.base) // target.stride + 1) * target.stride
            continue
        end = x
        i = bisect.bisect_right(los, x) - 1
        if i >= 0 and merged[i][1] > x:
            end = merged[i][1]
        for p in strided:
            k = p.element_of(x)
            if k is not None:
                end = max(end, p.base + k * p.stride + p.elem)
        if end == x:
            return x
        x = end
    return None


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


def writers(ctx: Context) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Reading access ``(edge, position)`` -> the writing accesses that ``serves`` it, sorted.
    Built from the sweep's overlapping pairs. Cached on the context."""
    hit = ctx.__dict__.get("_writers")
    if hit is None:
        hit = defaultdict(list)
        for a, pa, b, pb in overlapping_pairs(ctx):
            for u, pu, w, pw in ((a, pa, b, pb), (b, pb, a, pa)):
                if reads(ctx.edge(u).accesses()[pu]) and serves(ctx, w, pw, u, pu):
                    hit[(u, pu)].append((w, pw))
        for v in hit.values():
            v.sort()
        ctx.__dict__["_writers"] = hit
    return hit


def narrowest_region(regions: Sequence[Region], space: str, addr: int) -> Region | None:
    """The smallest region of ``space`` that holds byte ``addr`` (first declared on a tie)."""
    best = None
    for r in regions:
        if r.space == space and r.base <= addr < r.end and (best is None or r.size < best.size):
            best = r
    return best


def _schedule_among(graph: PolicyGraph, eids: Sequence[int]) -> list[tuple[str | None, Term]]:
    """Schedule constraints over ``eids`` alone: durations, and ``f(a) <= s(b)`` for every pair
    that happens-before (transitively, through edges outside ``eids`` too). Exact for this query:
    with dense time an assignment of ``eids`` that respects these pairs extends to every other
    edge, and its negated constraints ``s(u) < f(w)`` bind only ``u`` and its writers, so no edge
    off those paths can make it infeasible (``encode.relevant_edges`` would add every edge
    between two writers: thousands in a real flow)."""
    ids = sorted(set(eids))
    out: list[tuple[str | None, Term]] = [(f"dur_{e}", and_(0 <= start(e), start(e) < finish(e))) for e in ids]
    for a in ids:
        for b in ids:
            if a != b and graph.hb_before(a, b):
                out.append((hb_label(a, b), finish(a) <= start(b)))
    return out


class Unwritten(Obligation):
    """FX-INIT-001: every byte access ``pos`` of edge ``u`` reads is written by a serving write
    that happens-before ``u``, or lies in an ``init`` region or space."""

    code = codes.INIT_001

    def __init__(self, ctx: Context, u: int, pos: int) -> None:
        eu = ctx.edge(u)
        self.pos = pos
        self.fp: Footprint = eu.accesses()[pos].footprint
        self.ws = writers(ctx).get((u, pos), [])
        self.inits = [(lo, hi, n) for lo, hi, n in init_ranges(ctx).get(self.fp.space, ()) if lo < self.fp.hi and self.fp.lo < hi]
        ids = sorted({w for w, _ in self.ws})
        related = tuple(Label(ctx.edge(w).span, f"`{ctx.edge(w).name}` writes here") for w in ids[:3])
        super().__init__(ctx, (u, *ids), f"{self.code}:{eu.name}#{pos}", eu.span, related)

    def _before(self) -> list[tuple[int, int]]:
        g, u = self.ctx.graph, self.edges[0]
        return [(w, pw) for w, pw in self.ws if g.hb_before(w, u)]

    def _covered(self) -> bool:
        pieces: list = [(lo, hi) for lo, hi, _ in self.inits]
        pieces += [fp for w, _pw in self._before() for fp in self.ctx.edge(w).defines()]
        try:
            return first_gap(self.fp, pieces) is None
        except OverflowError:
            return False

    def prove_fast(self) -> str | None:
        return "hb-cover" if self._covered() else None

    def evidence(self) -> Evidence | None:
        if not self._covered():
            return None
        u = self.edges[0]
        before = tuple(WriteBefore(w, pw, self.path(w, u)) for w, pw in self._before())
        return DefinedCover(self.pos, before, tuple(n for _lo, _hi, n in self.inits))

    def encode(self) -> Query:
        u = self.edges[0]
        addr = int_var("addr")
        mu, ku = member(self.fp, addr, "u")
        self._probes = (addr, ku)
        cons = _schedule_among(self.ctx.graph, self.edges)
        cons.append(("read_byte", mu))
        for i, (lo, hi, _name) in enumerate(self.inits):
            cons.append((f"not_init_{i}", not_(between(addr, lo, hi))))
        for w, pw in self.ws:
            written = or_(*[contains(fw, addr) for fw in self.ctx.edge(w).defines()])
            cons.append((f"not_written_by_{w}_{pw}", or_(not_(written), not_(finish(w) <= start(u)))))
        header = self.header() + tuple(f"init {i} = {name} [{lo:#x}, {hi:#x})" for i, (lo, hi, name) in enumerate(self.inits))
        return Query(self.key, tuple(cons), minimize=(addr, ku, *time_objectives(self.edges)), header=header)

    def witness(self, result: Result) -> Witness:
        u = self.edges[0]
        addr, ku = self._probes
        a = result.int(addr)
        values: dict[str, int | str] = {}
        r = narrowest_region(self.ctx.policy.regions, self.fp.space, a)
        if r is not None:
            values["region"] = r.name
            if r.dtype is not None and r.dtype in DTYPES:
                values["dtype"] = r.dtype
                values["element"] = (a - r.base) * 8 // DTYPES[r.dtype].bits
        return Witness(schedule=self.schedule_of(result), address=a, space=self.fp.space,
                       elements={u: result.int(ku)}, values=values)

    def message(self, w: Witness) -> str:
        u = self.edges[0]
        where = f"`{w.values['region']}`" if "region" in w.values else f"space `{self.fp.space}`"
        elem = f", {w.values['dtype']} element {w.values['element']}" if "element" in w.values else ""
        what = "reduces into" if self.ctx.edge(u).accesses()[self.pos].mode is AccessMode.REDUCE else "reads"
        return (f"`{self.name(u)}` {what} byte {w.address:#x} of {where}{elem}, which no edge writes before it")

    def why(self, w: Witness) -> str:
        return ("every byte a read touches must be written by an edge that happens-before it, or lie in a region "
                "or space declared `init` (loaded before the flow)")

    def fix(self, w: Witness) -> str:
        u, g = self.edges[0], self.ctx.graph
        late = [x for x, px in self.ws if w.address is not None and not g.hb_before(x, u)
                and any(fp.contains(w.address) for fp in self.ctx.edge(x).defines())]
        if late:
            return f"add `after {self.name(late[0])}` to `{self.name(u)}`: that write may finish after the read starts"
        where = f"`{w.values['region']}`" if "region" in w.values else f"`{self.fp.space}`"
        return (f"write byte {w.address:#x} of {where} on an edge that happens-before `{self.name(u)}` (move every part "
                f"of the layout, or shrink the read to what was written), or declare {where} `init` if it is loaded before the flow")


def generate(ctx: Context) -> Iterator[Obligation]:
    """Yield one FX-INIT-001 obligation per reading access of ``ctx.policy``, in edge order."""
    for e in ctx.policy.edges:
        for pos, a in enumerate(e.accesses()):
            if reads(a):
                yield Unwritten(ctx, e.eid, pos)
