"""Transform obligations over declared intent and final bytes (specs/obligations.md, FX-XF-002 and
FX-XF-004):

- accumulation intent (``expects OP of P, ...`` on a reading edge ``c``): every producer combines
  with ``OP`` or is a plain initialiser (``ExpectedOperator``, schedule-free); every producer
  finishes before ``c`` starts (``LateContribution``); no plain write ``w`` lands between a
  producer ``p`` and ``c`` on bytes both touch (``OverwrittenContribution``);
- checksums over final bytes (``StaleChecksum``): no write lands on checksummed bytes after the
  checksum starts reading them, unless another edge read (consumed) those bytes in between.

Takes a ``Context``; yields ``Obligation`` objects. None has a fast proof: each goes to the solver
(their queries are small: the primary edges and the HB paths between them).
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import DropExpected, Hint, Option, SetAction, Swap, after, hint
from fxverify.ir import AccessMode, Edge, Footprint, XfKind
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.definers import covering_allocs
from fxverify.obligations.pairs import meeting_pairs
from fxverify.obligations.encode import (
    Facts, contains, finish, member, projected_schedule, start, time_objectives,
)
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import and_, eq, int_var, not_, or_
from fxverify.vocab import OPERATORS

_OP_IDS = {name: i + 1 for i, name in enumerate(sorted(OPERATORS))}


def produced(e: Edge) -> Footprint | None:
    """The bytes edge ``e`` writes or accumulates (its destination), or ``None`` for an edge
    that writes nothing (a ``read``, ``release``, ``flush`` or ``alloc``)."""
    acc = [a for a in e.accesses() if a.mode is not AccessMode.READ]
    return acc[0].footprint if acc else None


def covered(e: Edge) -> Footprint | None:
    """The bytes a ``checksum`` in ``e``'s chain describes at rest: the destination when the edge
    has one (the checksum travels with the bytes it stores), else the bytes it reads in place;
    ``None`` when ``e`` has no checksum step."""
    if not any(t.kind is XfKind.CHECKSUM for t in e.transforms):
        return None
    return e.dst if e.dst is not None else e.src


def _meet(a: Footprint, b: Footprint) -> bool:
    """Same space and intersecting ``[lo, hi)`` hulls (a cheap filter; queries decide the bytes)."""
    return a.space == b.space and a.lo < b.hi and b.lo < a.hi


class ExpectedOperator(Obligation):
    """FX-XF-004 (c): producer ``p`` of ``expects OP of ...`` on ``c`` writes bytes, and when it
    is a reduction its operator is ``OP`` (a plain write is an initialiser; the schedule rules
    check that it comes first)."""

    schedule_free = True

    code = codes.XF_004

    def __init__(self, ctx: Context, c: int, p: int) -> None:
        ec, ep = ctx.edge(c), ctx.edge(p)
        assert ec.expects is not None  # INVARIANT: generated for consumers with `expects` only
        self.want = ec.expects.op
        w = produced(ep)
        self.kind = 0 if w is None else 2 if ep.reduce_op is not None else 1
        self.op = ep.reduce_op
        super().__init__(ctx, (c, p), f"{self.code}:expects-op:{ec.name}|{ep.name}", ep.span,
                         (Label(ec.expects.span, f"`{ec.name}` expects `{self.want}` here"),))

    def encode(self) -> Query:
        # Facts: what the producer does (0 writes nothing, 1 plain write, 2 reduction), its
        # operator id and the expected one (``_OP_IDS``: rank in ``vocab.OPERATORS``).
        facts = Facts()
        kind = facts.fact("producer_kind", self.kind)
        op = facts.fact("producer_op", _OP_IDS.get(self.op or "", 0))
        want = facts.fact("expected_op", _OP_IDS[self.want])
        bad = or_(eq(kind, 0), and_(eq(kind, 2), not_(eq(op, want))))
        header = self.header() + tuple(f"operator {i} = {n}" for n, i in _OP_IDS.items())
        return Query(self.key, tuple(facts.constraints + [("producer_breaks_expectation", bad)]), header=header)

    def witness(self, result: Result) -> Witness:
        return Witness(values={"kind": self.kind, "op": self.op or ""})

    def message(self, w: Witness) -> str:
        c, p = self.edges
        if self.kind == 0:
            return f"`{self.name(c)}` expects `{self.want}` of `{self.name(p)}`, which writes no bytes"
        return f"`{self.name(p)}` reduces with `{self.op}`, but `{self.name(c)}` expects `{self.want}`"

    def why(self, w: Witness) -> str:
        return "every producer of an expected accumulation combines with the declared operator (or initialises it)"

    def fix(self, w: Witness) -> Hint:
        c, p = self.edges
        return hint(SetAction(self.name(p), self.want), DropExpected(self.name(c), self.name(p)))


class LateContribution(Obligation):
    """FX-XF-004 (d): producer ``p`` finishes before consumer ``c`` starts, in every schedule;
    else ``c`` may read a partial accumulation. Violated by a schedule and a byte of ``p``'s
    destination that ``c`` reads with ``s(c) < f(p)``."""

    code = codes.XF_004

    def __init__(self, ctx: Context, c: int, p: int) -> None:
        ec, ep = ctx.edge(c), ctx.edge(p)
        self.fc, self.fp = ec.src, produced(ep)
        assert self.fc is not None and self.fp is not None  # INVARIANT: a read edge and a writer
        super().__init__(ctx, (p, c), f"{self.code}:expects-late:{ec.name}|{ep.name}", ec.span,
                         (Label(ep.span, f"`{ep.name}` contributes here"),))

    def encode(self) -> Query:
        p, c = self.edges
        addr = int_var("addr")
        mp, kp = member(self.fp, addr, "p")
        mc, kc = member(self.fc, addr, "c")
        self._probes = (addr, kp, kc)
        cons = projected_schedule(self.ctx.graph, self.edges) + [
            ("byte_of_producer", mp), ("byte_read", mc), ("read_before_contribution", start(c) < finish(p))]
        return Query(self.key, tuple(cons), minimize=(addr, kp, kc, *time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        p, c = self.edges
        addr, kp, kc = self._probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.fp.space,
                       elements={p: result.int(kp), c: result.int(kc)})

    def message(self, w: Witness) -> str:
        p, c = self.edges
        return f"`{self.name(c)}` may read the accumulation before `{self.name(p)}` has contributed to it"

    def why(self, w: Witness) -> str:
        return "a consumer that expects an accumulation must run after every contribution"

    def fix(self, w: Witness) -> Hint:
        p, c = self.edges
        return hint(after(self.name(c), self.name(p)))


class OverwrittenContribution(Obligation):
    """FX-XF-004 (e): no plain write ``w``, and no reduction ``w`` that is not one of ``c``'s
    producers, lands between producer ``p`` finishing and consumer ``c`` starting on a byte that
    ``p`` writes and ``c`` reads (``f(p) <= s(w)`` and ``f(w) <= s(c)``): a plain write would
    discard ``p``'s contribution, whether ``p`` is a reduction or a plain initialiser; a foreign
    reduction would fold in a contribution ``c`` does not expect (another operator, or a gradient
    counted twice)."""

    code = codes.XF_004

    def __init__(self, ctx: Context, c: int, p: int, w: int) -> None:
        ec, ep, ew = ctx.edge(c), ctx.edge(p), ctx.edge(w)
        self.fc, self.fp, self.fw = ec.src, produced(ep), produced(ew)
        self.folds = ew.reduce_op is not None  # a foreign reduction, not a plain write
        assert self.fc is not None and self.fp is not None and self.fw is not None  # INVARIANT: see generate
        super().__init__(ctx, (p, w, c), f"{self.code}:expects-overwrite:{ec.name}|{ep.name}|{ew.name}", ew.span,
                         (Label(ep.span, f"`{ep.name}` contributes here"), Label(ec.span, f"`{ec.name}` expects it here")))

    def encode(self) -> Query:
        p, w, c = self.edges
        addr = int_var("addr")
        mp, kp = member(self.fp, addr, "p")
        mw, kw = member(self.fw, addr, "w")
        self._probes = (addr, kp, kw)
        cons = projected_schedule(self.ctx.graph, self.edges) + [
            ("byte_of_producer", mp), ("byte_overwritten", mw), ("byte_read", contains(self.fc, addr)),
            ("write_after_contribution", finish(p) <= start(w)), ("write_before_read", finish(w) <= start(c))]
        return Query(self.key, tuple(cons), minimize=(addr, kp, kw, *time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        p, w, c = self.edges
        addr, kp, kw = self._probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.fp.space,
                       elements={p: result.int(kp), w: result.int(kw)})

    def culprits(self) -> tuple[int, ...]:
        """The contribution and the plain write that overwrites it; the consumer explains."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        p, wr, c = self.edges
        if self.folds:
            return (f"`{self.name(wr)}` folds a contribution `{self.name(c)}` does not expect "
                    f"(`reduce({self.ctx.edge(wr).reduce_op})`) into that of `{self.name(p)}` before `{self.name(c)}` reads it")
        return f"`{self.name(wr)}` overwrites the contribution of `{self.name(p)}` before `{self.name(c)}` reads the accumulation"

    def why(self, w: Witness) -> str:
        if self.folds:
            return ("a consumer that expects an accumulation reads that of exactly its producers: a reduction by another "
                    "edge between a contribution and the read changes the value it reads")
        return "a plain write between a contribution and the consumer that expects the accumulation discards it"

    def fix(self, w: Witness) -> Hint:
        """A foreign reduction ordered after the consumer; a plain write made a contribution, or
        ordered before the one it overwrites (when nothing orders it after)."""
        p, wr, c = self.edges
        if self.folds:
            return hint(None if self.ctx.graph.hb_before(wr, c) else after(self.name(wr), self.name(c)))
        ec = self.ctx.edge(c)
        op = ec.expects.op if ec.expects is not None else "sum"
        first = None if self.ctx.graph.hb_before(p, wr) else after(self.name(p), self.name(wr))
        return hint(SetAction(self.name(wr), op), first)


class StaleChecksum(Obligation):
    """FX-XF-002 (b): a checksum is over final bytes. For checksum edge ``c`` (bytes ``covered``)
    and an edge ``w`` that writes or accumulates a byte of them: violated by a schedule with
    ``s(c) < f(w)`` (the write may land after the checksum started reading) in which no other
    edge reads that byte between ``c`` finishing and ``w`` starting (nobody consumed the checked
    bytes before they changed) and no ``alloc`` of a region holding it runs between them (the
    write is then in another allocation of the byte, which the checksum never described)."""

    code = codes.XF_002

    def __init__(self, ctx: Context, c: int, w: int, readers: list[tuple[int, Footprint]]) -> None:
        ec, ew = ctx.edge(c), ctx.edge(w)
        self.fc, self.fw = covered(ec), produced(ew)
        assert self.fc is not None and self.fw is not None  # INVARIANT: see generate
        self.readers = readers
        #: ``(alloc edge, lo, hi)`` of the regions whose ``alloc`` meets the covered bytes: one
        #: between the checksum and the write starts another allocation of those bytes, whose
        #: data the old checksum never described (a pool's slot freed and handed out again)
        self.allocs = [t for t in covering_allocs(ctx, self.fc) if t[0] not in (c, w)]
        others = [x for x, _ in readers] + [a for a, _lo, _hi in self.allocs]
        super().__init__(ctx, (c, w, *dict.fromkeys(others)), f"{self.code}:stale:{ec.name}|{ew.name}", ew.span,
                         (Label(ec.span, f"`{ec.name}` takes the checksum here"),))

    def encode(self) -> Query:
        c, w = self.edges[:2]
        addr = int_var("addr")
        mc, kc = member(self.fc, addr, "c")
        mw, kw = member(self.fw, addr, "w")
        self._probes = (addr, kc, kw)
        cons = projected_schedule(self.ctx.graph, self.edges) + [
            ("byte_checksummed", mc), ("byte_written", mw), ("write_lands_after_checksum", start(c) < finish(w))]
        for i, (x, fx) in enumerate(self.readers):
            cons.append((f"not_consumed_by_{x}_{i}", not_(and_(contains(fx, addr), finish(c) <= start(x), finish(x) <= start(w)))))
        for i, (a, lo, hi) in enumerate(self.allocs):
            cons.append((f"not_reallocated_by_{a}_{i}", not_(and_(lo <= addr, addr < hi, finish(c) <= start(a), finish(a) <= start(w)))))
        return Query(self.key, tuple(cons), minimize=(addr, kc, kw, *time_objectives(self.edges[:2])), header=self.header())

    def witness(self, result: Result) -> Witness:
        c, w = self.edges[:2]
        addr, kc, kw = self._probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.fc.space,
                       elements={c: result.int(kc), w: result.int(kw)})

    def culprits(self) -> tuple[int, ...]:
        """The checksum and the write that lands after it; the readers explain."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        c, wr = self.edges[:2]
        return f"`{self.name(wr)}` writes bytes after `{self.name(c)}` took their checksum"

    def why(self, w: Witness) -> str:
        return "a checksum must be taken over final bytes: a later write makes it describe bytes that are gone"

    def fix(self, w: Witness) -> Hint:
        """The checksum after the write (swapped with it when a direct ``after`` orders it before):
        checksum once the last write has landed."""
        c, wr = self.edges[:2]
        why = "checksum once the last write has landed"
        if self.ctx.graph.hb_before(c, wr):
            if self.name(c) not in self.ctx.edge(wr).after:
                return hint()
            return hint(Option((Swap(self.name(c), self.name(wr)),), why))
        return hint(Option((after(self.name(c), self.name(wr)),), why))


def generate(ctx: Context) -> Iterator[Obligation]:
    """Yield the accumulation-intent and final-bytes obligations of ``ctx.policy``.

    Which writes can meet which reads is found with ``meeting_pairs`` (a sweep over each space),
    never by testing every writer against every consumer: a real prefill policy has tens of
    thousands of writers and thousands of checksums."""
    pol = ctx.policy
    E = pol.edges
    writers = [(e.eid, fw) for e in E if (fw := produced(e)) is not None]
    yield from _intent_obligations(ctx, writers)
    checksums = [(e.eid, fc) for e in E if (fc := covered(e)) is not None]
    if not checksums:
        return
    # A cancelled read may stop before it read the bytes: it consumes nothing.
    reads = [(x.eid, a.footprint) for x in E if not ctx.cancellers.get(x.eid) for a in x.accesses() if a.mode is AccessMode.READ]
    readers_of: dict[int, list[tuple[int, Footprint]]] = {}
    for i, j in meeting_pairs([fc for _c, fc in checksums], [fr for _x, fr in reads]):
        readers_of.setdefault(i, []).append(reads[j])
    for i, k in meeting_pairs([fc for _c, fc in checksums], [fw for _w, fw in writers]):
        c, w = checksums[i][0], writers[k][0]
        if w != c:
            yield StaleChecksum(ctx, c, w, [(x, fr) for x, fr in readers_of.get(i, ()) if x not in (c, w)])


def _intent_obligations(ctx: Context, writers: list[tuple[int, Footprint]]) -> Iterator[Obligation]:
    """The obligations of every ``expects OP of ...`` consumer: per producer, its operator, its
    lateness and every write ``w`` (of ``writers``: ``(eid, destination)`` in id order), plain or
    a reduction by an edge that is not a producer, that meets both the producer's bytes and the
    consumer's (``OverwrittenContribution``)."""
    pol, E = ctx.policy, ctx.policy.edges
    for ec in E:
        if ec.expects is None or ec.src is None:
            continue
        producers = set(ec.expects.producers)
        for name in ec.expects.producers:
            p = pol.edge(name).eid
            if p == ec.eid:
                continue
            yield ExpectedOperator(ctx, ec.eid, p)
            fp = produced(E[p])
            if fp is None or not _meet(fp, ec.src):
                continue
            yield LateContribution(ctx, ec.eid, p)
            for _i, k in meeting_pairs([fp], [fw for _w, fw in writers]):
                w, fw = writers[k]
                if w not in (p, ec.eid) and _meet(fw, ec.src) and (E[w].reduce_op is None or E[w].name not in producers):
                    yield OverwrittenContribution(ctx, ec.eid, p, w)
