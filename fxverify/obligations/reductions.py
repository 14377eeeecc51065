"""Reduction obligations (FX-XF-004): two reductions into the same bytes that do not commute
(``UnsafeReduce``, part (a)), and a plain write over accumulated bytes nobody read in between
(``LostAccumulation``, part (b)); specs/obligations.md, FX-XF-004. ``transforms.generate`` yields
them after the per-edge transform obligations.

Takes a ``Context``; yields ``Obligation`` objects. Every pair has a reduction on one side and
none is two reductions that commute: the sweeps (``obligations.pairs``) visit only those. Emits no
diagnostics.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator

from fxverify.certificate import CoverRead, Evidence, Ordered, ReadCover
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint, Option, SetAction, after, hint
from fxverify.graph import PolicyGraph
from fxverify.ir import AccessMode, Footprint
from fxverify.obligations.base import Context, Obligation, conflict_kind
from fxverify.obligations.pairs import conflicting_reductions, pairs_where
from fxverify.obligations.encode import (
    contains, finish, member, overlap, projected_schedule, start, time_objectives,
)
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import and_, int_var, not_
from fxverify.vocab import AC_OPS


class UnsafeReduce(Obligation):
    """FX-XF-004 (a): two reductions into a shared byte that do not commute are HB-ordered."""

    code = codes.XF_004

    def __init__(self, ctx: Context, a: int, pa: int, b: int, pb: int) -> None:
        ea, eb = ctx.edge(a), ctx.edge(b)
        self.fa, self.fb = ea.accesses()[pa].footprint, eb.accesses()[pb].footprint
        self.ops = (ea.reduce_op, eb.reduce_op)
        super().__init__(ctx, (a, b), f"{self.code}:{ea.name}#{pa}|{eb.name}#{pb}", eb.span,
                         (Label(ea.span, f"`{ea.name}` reduces with `{ea.reduce_op}` here"),))

    def prove_fast(self) -> str | None:
        return "hb-reachability" if self.ctx.graph.ordered(*self.edges) else None

    def evidence(self) -> Evidence | None:
        p = self.either_path(*self.edges)
        return None if p is None else Ordered(p)

    def encode(self) -> Query:
        a, b = self.edges
        addr = int_var("addr")
        ma, ka = member(self.fa, addr, "a")
        mb, kb = member(self.fb, addr, "b")
        self._probes = (addr, ka, kb)
        cons = projected_schedule(self.ctx.graph, self.edges) + [
            ("shared_byte_a", ma), ("shared_byte_b", mb), ("overlap", overlap(a, b))]
        return Query(self.key, tuple(cons), minimize=(addr, ka, kb, *time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        a, b = self.edges
        addr, ka, kb = self._probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.fa.space,
                       elements={a: result.int(ka), b: result.int(kb)})

    def message(self, w: Witness) -> str:
        a, b = self.edges
        return (f"`{self.name(a)}` (`{self.ops[0]}`) and `{self.name(b)}` (`{self.ops[1]}`) reduce into the same "
                f"bytes in either order, and the result depends on it")

    def why(self, w: Witness) -> str:
        return "unordered reductions must use one associative and commutative operator (sum, max, min, ...)"

    def fix(self, w: Witness) -> Hint:
        """The second reduction with the first's operator (when it commutes), or the two ordered."""
        a, b = self.edges
        same = SetAction(self.name(b), self.ops[0]) if self.ops[0] in AC_OPS else None
        return hint(same, after(self.name(b), self.name(a)))


class _Readers:
    """The plain reads of one reduction's bytes, as ``(edge, position)`` ``ids`` and ``(edge,
    footprint)`` ``footprints`` in one order: one object shared by every FX-XF-004 (b) obligation
    of the reduction (a buffer every layer reduces into and writes has pairs in the square of the
    layers, each with every reader). ``ranked`` sorts the contiguous ones by HB rank once."""

    def __init__(self, ctx: Context, ids: list[tuple[int, int]]) -> None:
        self.ids = ids
        self.footprints = [(x, ctx.edge(x).accesses()[px].footprint) for x, px in ids]
        self.edges = tuple(x for x, _ in ids)
        self._ranked: tuple[list[int], list[tuple[int, Footprint]]] | None = None

    def ranked(self, g: PolicyGraph) -> tuple[list[int], list[tuple[int, Footprint]]]:
        """The contiguous readers ``(edge, footprint)`` in ascending ``g.rank`` (acyclic HB), and
        their ranks. Cached."""
        if self._ranked is None:
            order = sorted((g.rank(x), x, fx) for x, fx in self.footprints if fx.contiguous)
            self._ranked = ([t[0] for t in order], [(t[1], t[2]) for t in order])
        return self._ranked


class LostAccumulation(Obligation):
    """FX-XF-004 (b): whenever a plain write ``w`` runs after reduction ``r`` into the same bytes,
    every shared byte is read between ``r`` finishing and ``w`` starting (else the accumulated value
    is lost). Proved at once when ``w`` happens-before ``r`` (the write initialises the target)."""

    code = codes.XF_004

    def __init__(self, ctx: Context, r: int, pr: int, w: int, pw: int, readers: _Readers) -> None:
        er, ew = ctx.edge(r), ctx.edge(w)
        self.fr, self.fw = er.accesses()[pr].footprint, ew.accesses()[pw].footprint
        self._readers = readers  # shared by the reduction's obligations: never modified
        super().__init__(ctx, (r, w, *readers.edges), f"{self.code}:{er.name}#{pr}|{ew.name}#{pw}", ew.span,
                         (Label(er.span, f"`{er.name}` accumulates here"),))

    def prove_fast(self) -> str | None:
        g = self.ctx.graph
        r, w = self.edges[:2]
        if g.hb_before(w, r):
            return "hb-reachability"
        # Every shared byte lies in [lo, hi); it is covered when the contiguous reads that are
        # HB-between r and w, taken together, span that interval (each byte then has such a read
        # in every schedule). Several chunked reads (a reduce-scatter) cover it as well as one.
        # Only readers ranked between r and w in the topological order can lie between them;
        # they are tried in rank order, and one that covers [lo, hi) alone ends the search.
        lo, hi = max(self.fr.lo, self.fw.lo), min(self.fr.hi, self.fw.hi)
        ranks, ranked = self._readers.ranked(g)
        got = []
        for i in range(bisect.bisect_right(ranks, g.rank(r)), bisect.bisect_left(ranks, g.rank(w))):
            x, fx = ranked[i]
            if fx.hi > lo and fx.lo < hi and g.hb_before(r, x) and g.hb_before(x, w):
                if fx.lo <= lo and fx.hi >= hi:
                    return "hb-reachability"
                got.append((fx.lo, fx.hi))
        reach = lo
        for a, b in sorted(got):
            if a > reach:
                break
            reach = max(reach, b)
        return "hb-reachability" if reach >= hi else None

    def evidence(self) -> Evidence | None:
        r, w = self.edges[:2]
        first = self.path(w, r)
        if first is not None:
            return Ordered(first)
        lo, hi = max(self.fr.lo, self.fw.lo), min(self.fr.hi, self.fw.hi)
        reach, used = lo, []
        readers = [(x, px, fx) for (x, px), (_x, fx) in zip(self._readers.ids, self._readers.footprints)]
        for x, px, fx in sorted(readers, key=lambda t: (t[2].lo, t[2].hi, t[0])):
            if not fx.contiguous or fx.hi <= reach or fx.lo > reach or fx.lo >= hi:
                continue
            p1, p2 = self.path(r, x), self.path(x, w)
            if p1 is not None and p2 is not None:
                used.append(CoverRead(x, px, fx.lo, fx.hi, p1, p2))
                reach = fx.hi
                if reach >= hi:
                    break
        return ReadCover(lo, hi, tuple(used)) if reach >= hi else None

    def encode(self) -> Query:
        r, w = self.edges[:2]
        addr = int_var("addr")
        mr, kr = member(self.fr, addr, "r")
        mw, kw = member(self.fw, addr, "w")
        self._probes = (addr, kr, kw)
        cons = projected_schedule(self.ctx.graph, self.edges) + [
            ("shared_byte_r", mr), ("shared_byte_w", mw), ("write_after_reduce", finish(r) <= start(w))]
        for i, (x, fx) in enumerate(self._readers.footprints):
            cons.append((f"not_read_by_{x}", not_(and_(contains(fx, addr), finish(r) <= start(x), finish(x) <= start(w)))))
        return Query(self.key, tuple(cons), minimize=(addr, kr, kw, *time_objectives(self.edges[:2])), header=self.header())

    def witness(self, result: Result) -> Witness:
        r, w = self.edges[:2]
        addr, kr, kw = self._probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.fr.space,
                       elements={r: result.int(kr), w: result.int(kw)})

    def culprits(self) -> tuple[int, ...]:
        """The reduction and the write that overwrites it; the readers explain."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        r, wr = self.edges[:2]
        return f"`{self.name(wr)}` overwrites bytes that `{self.name(r)}` accumulated before anyone read them"

    def why(self, w: Witness) -> str:
        return "a plain write over a reduction target discards the accumulated value (lost write)"

    def fix(self, w: Witness) -> Hint:
        """First, the write ordered after a read of the accumulated bytes that already follows
        the reduction (the earliest in HB rank that covers the shared bytes alone and that the
        write does not precede): a buffer refilled before its reduced value was consumed, an
        NCCL bucket reused too early, is fixed by waiting for the consumer. Then the write made a
        reduction with the same operator, which is right only when the write was meant to add
        to the value, not to replace it (a refill made a reduction would corrupt the result)."""
        r, wr = self.edges[:2]
        g = self.ctx.graph
        lo, hi = max(self.fr.lo, self.fw.lo), min(self.fr.hi, self.fw.hi)
        _ranks, ranked = self._readers.ranked(g)
        reader = next((x for x, fx in ranked if fx.lo <= lo and fx.hi >= hi and x != wr
                       and g.hb_before(r, x) and not g.hb_before(wr, x)), None)
        wait = after(self.name(wr), self.name(reader)) if reader is not None else None
        op = self.ctx.edge(r).reduce_op
        add = Option((SetAction(self.name(wr), op),),
                     f"only if `{self.name(wr)}` adds to the accumulated value rather than replacing it") if op else None
        return hint(wait, add)


def generate(ctx: Context) -> Iterator[Obligation]:
    """Yield the FX-XF-004 (a) and (b) obligations of ``ctx.policy``: one per non-commuting pair of
    reductions, then one per (reduction, plain write) pair sharing a hull byte."""
    pol = ctx.policy
    # A buffer that every layer reduces into (an all-reduce's) has
    # pairs of commuting reductions in the square of the layers, and they give nothing here.
    for a, pa, b, pb in conflicting_reductions(ctx):
        if conflict_kind(pol.edges[a].accesses()[pa], pol.edges[b].accesses()[pb]) == "reduce":
            yield UnsafeReduce(ctx, a, pa, b, pb)
    # (b): the pairs of a reduction and a plain write come first, then the plain reads of only
    # the reductions in them. A buffer every layer reduces into and reads (the residual stream
    # of an all-reduce) has (reduction, read) pairs in the square of the layers: they are
    # visited once, to collect the readers these obligations share.
    reduction = (lambda _e, _p, acc: acc.mode is AccessMode.REDUCE)
    write = (lambda _e, _p, acc: acc.mode is AccessMode.WRITE)
    pairs = pairs_where(ctx, reduction, write)
    targets = {(a, pa) if pol.edges[a].accesses()[pa].mode is AccessMode.REDUCE else (b, pb) for a, pa, b, pb in pairs}
    # A cancelled read may stop before it read the bytes: it consumes nothing.
    read = (lambda e, _p, acc: acc.mode is AccessMode.READ and not ctx.cancellers.get(e))
    readers_of: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    if targets:
        for a, pa, b, pb in pairs_where(ctx, (lambda e, p, _acc: (e, p) in targets), read):
            # pairs come sorted, so each reduction's readers are in (edge, position) order
            if (a, pa) in targets:
                readers_of[(a, pa)].append((b, pb))
            else:
                readers_of[(b, pb)].append((a, pa))
    shared = {k: _Readers(ctx, v) for k, v in readers_of.items()}
    nobody = _Readers(ctx, [])
    for a, pa, b, pb in pairs:
        (r, pr), (w, pw) = ((a, pa), (b, pb)) if (a, pa) in targets else ((b, pb), (a, pa))
        yield LostAccumulation(ctx, r, pr, w, pw, shared.get((r, pr), nobody))
