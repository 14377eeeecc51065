"""Def-before-use: FX-INIT-001 (a read touches bytes never written).

Takes a ``Context``; yields one ``Unwritten`` obligation per reading access (or, for a read
declaration the parametric prover covers for every index value, ``hb_covers.Covers``, its keys
as a ``ProvedTogether``): the source of a
``read``, ``move`` or ``reduce``, and the destination of a ``reduce``, which accumulates into the
bytes already there (``dst = dst op src``: accumulating into garbage is garbage). Writes are the
destinations of ``write``, ``move`` and ``reduce``. The rule (specs/obligations.md, "Def-before-use"):
every byte a read ``u`` touches lies in a region or space declared ``init`` (loaded before the
flow) and no ``alloc`` of a region holding it starts before ``s(u)``, or among the bytes a
write ``w`` that can serve ``u`` (``definers.serves``) defines (``ir.Edge.defines``: a move defines only as
many destination bytes as its chain emits) with ``f(w) <= s(u)`` and *in the same allocation*: no
``alloc`` ``a`` of a region holding the byte lies between them, ``s(w) < f(a)`` and ``s(a) < s(u)``
(a reused block holds the previous request's bytes, not this one's), nor a cancelled write ``x``
that may tear it, ``s(w) < e(x)`` and ``s(x) < s(u)`` (``definers.covering_tears``). The writers a read
lists are first the latest writes of its bytes before it (``definers.recent_writers``), and only when those do
not prove it every serving write whose bounding interval meets its own (``pairs.pairs_where``, a
sweep per address space): a buffer that every layer reuses is not quadratic in the layers. The
fast proof covers the read's footprint with the
footprints of the writers HB-before it and the ``init`` ranges by exact interval and stride
arithmetic (``byte_cover.first_gap``), each less the regions of the ``alloc``s HB does not order outside
it (``hb(a, w)`` or ``hb(u, a)``; for ``init``, ``hb(u, a)``) and of the cancelled writes it
does not (``Unwritten._tear_fence``). Without allocations and cancels that proof is
also complete (every writer not HB-before ``u`` can finish after ``u`` starts in one schedule);
with them the solver decides what it leaves, after a checked guess (``Unwritten.guess``: a few
linear extensions of HB, evaluated against the query) that refutes most reads of a pool that
waits for the wrong free without it.
Emits no diagnostics itself (the pipeline reports refutations).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from fxverify.certificate import DefinedCover, Evidence, WriteBefore
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Edit, Hint, Init, Option, SetAction, Swap, Widen, after, hint, narrow
from fxverify.graph import PolicyGraph
from fxverify.ir import AccessMode, EdgeAction, Footprint, Policy, Region
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.byte_cover import clip, first_gap
from fxverify.obligations.definers import (
    covering_allocs, covering_tears, init_meeting, reads, recent_writers, undefined_byte, writers, writes,
)
from fxverify.obligations.encode import (
    around_schedule, contains, durations, finish, hb_label, member, start, time_objectives, touches, touches_after,
)
from fxverify.obligations.hb_covers import covers_for
from fxverify.obligations.owners import alloc_chains, stale_allocs
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, and_, between, int_var, not_, or_
from fxverify.vocab import DTYPES


#: How many ``alloc``s a guess of FX-INIT-001 runs before the read, one at a time
#: (``Unwritten.guess``): each try costs a schedule of the obligation's edges (O(edges x
#: primaries)). The off-by-one pool of 100 requests needs the first only (the latest in rank
#: order); a few more cover reads that several allocations reach, and past them the solver,
#: which reads them all at once, is as cheap.
GUESS_ALLOCS = 8


def narrowest_region(regions: Sequence[Region], space: str, addr: int) -> Region | None:
    """The smallest region of ``space`` that holds byte ``addr`` (first declared on a tie)."""
    best = None
    for r in regions:
        if r.space == space and r.base <= addr < r.end and (best is None or r.size < best.size):
            best = r
    return best


def _schedule_among(graph: PolicyGraph, eids: Sequence[int]) -> list[tuple[str | None, Term]]:
    """Schedule constraints over ``eids`` alone: durations, and ``f(a) <= s(b)`` for every pair
    that happens-before (transitively, through edges outside ``eids`` too) and that HB does not
    also order through a third edge of ``eids`` (the transitive reduction of HB on ``eids``: the
    others are implied; a read of 130 writers had 4,400 pairs). Exact for this query: with dense time an assignment of ``eids`` that respects these pairs extends to every other
    edge, and its negated constraints ``s(u) < f(w)`` bind only ``u`` and its writers, so no edge
    off those paths can make it infeasible (``encode.relevant_edges`` would add every edge
    between two writers: thousands in a real flow)."""
    ids = sorted(set(eids))
    out = durations(ids)
    before = graph.hb_before_fn()
    # after[i]: the ids HB-after ids[i], as a bit set over positions in ``ids``
    after = [sum(1 << j for j, b in enumerate(ids) if b != a and before(a, b)) for a in ids]
    for i, a in enumerate(ids):
        # a pair HB also orders through a third edge of ``ids`` is implied (f(a) <= s(c) < f(c) <= s(b))
        implied = 0
        rest = after[i]
        while rest:
            low = rest & -rest
            implied |= after[low.bit_length() - 1]
            rest ^= low
        keep = after[i] & ~implied
        out += [(hb_label(a, ids[j]), finish(a) <= start(ids[j])) for j in range(len(ids)) if keep >> j & 1]
    return out


class Unwritten(Obligation):
    """FX-INIT-001: every byte access ``pos`` of edge ``u`` reads is written by a serving write
    that happens-before ``u``, or lies in an ``init`` region or space."""

    code = codes.INIT_001

    def __init__(self, ctx: Context, u: int, pos: int) -> None:
        eu = ctx.edge(u)
        self.ctx, self.edges, self.pos = ctx, (u,), pos
        self.fp: Footprint = eu.accesses()[pos].footprint
        self.inits = init_meeting(ctx, self.fp)
        self.allocs = covering_allocs(ctx, self.fp)
        self.tears = covering_tears(ctx, self.fp, u)
        # ``_kills``'s inputs: the allocation chains meeting the footprint, and per chain, by
        # position, where the allocations HB-after the read begin (``stale_allocs``)
        self._chains = alloc_chains(ctx, self.fp)
        self._first_after: dict[int, int] = {}
        # The latest writes of the read's bytes first (``recent_writers``): when they cover it,
        # the obligation is the stronger "these writes define every byte" and the older writes
        # of a reused buffer are never listed; else every serving write, as the solver needs.
        # INVARIANT: a read missing from ``recent_writers`` (left out of the sweep, ``only``)
        # lists no writer here, so the cover fails and every serving write is tried below.
        self.ws = recent_writers(ctx).get((u, pos), [])
        self._cover: bool | None = self._covered()
        if not self._cover:
            self.ws, self._cover = writers(ctx).get((u, pos), []), None
        ids = sorted({w for w, _ in self.ws})
        related = tuple(Label(ctx.edge(w).span, f"`{ctx.edge(w).name}` writes here") for w in ids[:3])
        rest = [a for a, _lo, _hi in self.allocs] + [y for x, _g in self.tears for y in (x, *ctx.cancellers[x])]
        rest = tuple(a for a in dict.fromkeys(rest) if a != u and a not in ids)
        super().__init__(ctx, (u, *ids, *rest), f"{self.code}:{eu.name}#{pos}", eu.span, related)

    def culprits(self) -> tuple[int, ...]:
        """The read: a byte read before any write defines it is the read's fault to name; the
        writers and allocations only explain it."""
        return self.edges[:1]

    def _before(self) -> list[tuple[int, int]]:
        g, u = self.ctx.graph, self.edges[0]
        return [(w, pw) for w, pw in self.ws if g.hb_before(w, u)]

    def _kills(self, w: int | None) -> list[tuple[int, int]]:
        """The byte ranges an ``alloc`` or a cancelled write may make stale between write ``w``
        (``None``: the ``init`` contents, before the flow) and the read: those of every covering
        alloc that HB orders neither before ``w`` nor after the read (``stale_allocs``), and the
        bounds of every torn write (``covering_tears``) whose fence ``_tear_fence`` does not find."""
        return stale_allocs(self.ctx.graph, self.edges[0], w, self._chains, self._first_after) \
            + [(x_fp.lo, x_fp.hi) for x, x_fp in self.tears if self._tear_fence(x, w) is None]

    def _tear_fence(self, x: int, w: int | None) -> tuple[int, int] | None:
        """An HB pair keeping cancelled write ``x`` from tearing what ``w`` (``None``: ``init``)
        left for the read: ``x`` or a cancel of it before ``w``, or the read before ``x``."""
        g, u = self.ctx.graph, self.edges[0]
        if w is not None:
            for y in (x, *self.ctx.cancellers[x]):
                if g.hb_before(y, w):
                    return y, w
        return (u, x) if g.hb_before(u, x) else None

    def _pieces(self) -> list[Footprint | tuple[int, int]]:
        """The bytes defined before the read in every schedule (``first_gap`` pieces): the
        ``init`` ranges and what the writes HB-before it define, each less what an ``alloc`` may
        make stale."""
        stale = self._kills(None)
        pieces: list[Footprint | tuple[int, int]] = [p for lo, hi, _ in self.inits for p in clip((lo, hi), stale)]
        for w, _pw in self._before():
            stale = self._kills(w)
            pieces += [p for fp in self.ctx.edge(w).defines() for p in clip(fp, stale)]
        return pieces

    def _covered(self) -> bool:
        if self.__dict__.get("_cover") is not None:
            return bool(self._cover)
        try:
            return first_gap(self.fp, self._pieces()) is None
        except OverflowError:
            return False

    def prove_fast(self) -> str | None:
        return "hb-cover" if self._covered() else None

    def evidence(self) -> Evidence | None:
        if not self._covered():
            return None
        u = self.edges[0]
        g = self.ctx.graph
        allocs = list(dict.fromkeys(a for a, _lo, _hi in self.allocs))
        tears = list(dict.fromkeys(x for x, _g in self.tears))

        def fences(w: int | None) -> tuple:
            out = [self.path(a, w) if w is not None and g.hb_before(a, w) else self.path(u, a)
                   for a in allocs if (w is not None and g.hb_before(a, w)) or g.hb_before(u, a)]
            pairs = [self._tear_fence(x, w) for x in tears]
            return tuple(out + [self.path(*pair) for pair in pairs if pair])

        before = tuple(WriteBefore(w, pw, self.path(w, u), fences(w)) for w, pw in self._before())
        fenced = fences(None)
        return DefinedCover(self.pos, before, tuple(n for _lo, _hi, n in self.inits), fenced)

    def encode(self) -> Query:
        u = self.edges[0]
        addr = int_var("addr")
        mu, ku = member(self.fp, addr, "u")
        self._probes = (addr, ku)
        cons = _schedule_among(self.ctx.graph, self.edges)
        cons.append(("read_byte", mu))
        cancels = self.ctx.cancellers
        for i, (lo, hi, _name) in enumerate(self.inits):
            stale = [and_(between(addr, alo, ahi), start(a) < start(u)) for a, alo, ahi in self.allocs]
            stale += [and_(contains(g, addr), touches(x, cancels[x]), start(x) < start(u)) for x, g in self.tears]
            cons.append((f"not_init_{i}", or_(not_(between(addr, lo, hi)), *stale)))
        for w, pw in self.ws:
            written = or_(*[contains(fw, addr) for fw in self.ctx.edge(w).defines()])
            stale = [and_(between(addr, alo, ahi), start(w) < finish(a), start(a) < start(u))
                     for a, alo, ahi in self.allocs]
            stale += [and_(contains(g, addr), touches_after(x, cancels[x], start(w)), start(x) < start(u))
                      for x, g in self.tears if x != w]
            cons.append((f"not_written_by_{w}_{pw}", or_(not_(written), not_(finish(w) <= start(u)), *stale)))
        header = self.header() + tuple(f"init {i} = {name} [{lo:#x}, {hi:#x})" for i, (lo, hi, name) in enumerate(self.inits))
        return Query(self.key, tuple(cons), minimize=(addr, ku, *time_objectives(self.edges)), header=header)

    def guess(self) -> dict[str, int | bool] | None:
        """The read as early as HB lets it run (``encode.around_schedule``), then as early as it
        can after one covering ``alloc`` that is not HB-after it, run as late as HB lets it
        before the read (``GUESS_ALLOCS`` of them, the latest in rank order first: an
        allocation after the read's writers makes what they wrote stale), each at the lowest
        byte of the read's footprint that, in that schedule, neither an ``init`` range nor a
        listed writer defines in its allocation (``definers.undefined_byte``: the query's rule,
        evaluated): the first schedule that leaves such a byte. ``None`` with a cancelled write
        that may tear the bytes (its touch interval is not modelled here), or when no schedule
        tried leaves a byte undefined (the solver may still find one). Without allocations and
        cancels the first schedule is complete: the writers HB-before the read are then those
        that define its bytes in every schedule, as the fast proof says."""
        if self.tears:
            return None
        g, u = self.ctx.graph, self.edges[0]
        before, rank = g.hb_before_fn(), g.ranks()
        allocs = sorted((x for x in {a for a, _lo, _hi in self.allocs} if not before(u, x)),
                        key=lambda x: (-rank[x], x))
        for ahead in [(), *((x,) for x in allocs[:GUESS_ALLOCS])]:
            times = around_schedule(g, self.edges, (u,), ahead)
            byte = undefined_byte(self.ctx, u, self.fp, self.inits, self.allocs, self.ws, times)
            if byte is not None:
                k = self.fp.element_of(byte)
                assert k is not None  # INVARIANT: first_gap returns a byte of the footprint
                return {**times, "addr": byte, "k_u": k, "o_u": byte - self.fp.base - self.fp.stride * k}
        return None

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
        stale = self._spoiled(w, tears=False)
        if stale is not None:
            x, a = stale
            return (f"`{self.name(u)}` {what} byte {w.address:#x} of {where}{elem}, which no edge writes in its allocation: "
                    f"{'it was loaded before the flow,' if x is None else f'`{self.name(x)}` wrote it'} before `{self.name(a)}` allocated it again")
        torn = self._spoiled(w, tears=True)
        if torn is not None:
            x, t = torn
            c = self.ctx.cancellers[t][0]
            return (f"`{self.name(u)}` {what} byte {w.address:#x} of {where}{elem}, which `{self.name(t)}` may have left "
                    f"half-written after {'it was loaded before the flow' if x is None else f'`{self.name(x)}` wrote it'}: "
                    f"`{self.name(c)}` cancels `{self.name(t)}`, and a cancelled transfer may stop halfway")
        cancelled = [e for e in self.ctx.policy.edges if e.eid != u and self.ctx.cancellers.get(e.eid) and w.address is not None
                     and any(fp.space == self.fp.space and fp.contains(w.address) for fp in e.defines())]
        if cancelled:
            # The byte is written, but only by a transfer that may stop halfway (specs/obligations.md
            # section 1, cancellation): say so, since the policy text shows a write.
            x = cancelled[0]
            c = self.ctx.cancellers[x.eid][0]
            return (f"`{self.name(u)}` {what} byte {w.address:#x} of {where}{elem}, which no edge writes before it: "
                    f"`{x.name}` writes it, but `{self.name(c)}` cancels it, and a cancelled transfer may stop halfway")
        return (f"`{self.name(u)}` {what} byte {w.address:#x} of {where}{elem}, which no edge writes before it")

    def _spoiled(self, w: Witness, tears: bool) -> tuple[int | None, int] | None:
        """``(writer, spoiler)`` when the witness shows the byte written (``None``: ``init``) and
        then made stale before the read started: by an ``alloc`` running after the write started
        (``tears`` false), or by a cancelled write touching it after then (``tears`` true); else
        ``None``. The writer is the last to finish before the read of those HB orders before it
        (then of the others), and the spoiler the first to start after the writer did (in the
        witness's times)."""
        sch, u, addr = w.schedule, self.edges[0], w.address
        if addr is None or u not in sch:
            return None
        if tears:  # a cancelled write spoils until its touch interval ends
            spans = {t: (sch[t][0], min([sch[t][1]] + [sch[c][1] for c in self.ctx.cancellers[t] if c in sch]))
                     for t, g in self.tears if g.contains(addr) and t in sch}
        else:
            spans = {a: sch[a] for a, lo, hi in self.allocs if lo <= addr < hi and a in sch}
        hits = sorted((k for k, (sk, ek) in spans.items() if sk < sch[u][0] and (not tears or sk < ek)),
                      key=lambda k: (spans[k][0], k))
        # The write the read would otherwise have seen: of those HB orders before it (the ones
        # it was written to read), the last to finish (a reused buffer is written once per
        # tenant; the oldest tenant's write explains nothing); then the others.
        g = self.ctx.graph
        done = sorted({x for x, _px in self.ws if x in sch and sch[x][1] <= sch[u][0]
                       and any(fp.contains(addr) for fp in self.ctx.edge(x).defines())},
                      key=lambda x: (g.hb_before(x, u), sch[x][1], sch[x][0], x), reverse=True)
        for x in done:
            late = [k for k in hits if k != x and sch[x][0] < spans[k][1]]
            if late:
                return x, late[0]
        if hits and any(lo <= addr < hi for lo, hi, _n in self.inits):
            return None, hits[0]
        return None

    def why(self, w: Witness) -> str:
        return ("every byte a read touches must be written by an edge that happens-before it in the same allocation, "
                "or lie in a region or space declared `init` (loaded before the flow, and before any `alloc` of it)")

    def fix(self, w: Witness) -> Hint:
        """Order the read after a write that may finish late; run a write that a direct ``after``
        puts after the read before it instead (swap them); else make a reduction into bytes no
        one wrote a plain move (the first contribution); move a multi-part layout whole
        (each move of one part, back along the moves that fed its source), or shrink the read to
        the bytes written before it, or, for a region no edge writes and no written layout
        shares, declare it ``init``."""
        u, g = self.edges[0], self.ctx.graph
        if w.address is None:
            return hint()
        defining = [x for x, _px in self.ws if any(fp.contains(w.address) for fp in self.ctx.edge(x).defines())]
        swaps = [Swap(self.name(u), self.name(x)) for x in dict.fromkeys(defining) if self.name(u) in self.ctx.edge(x).after]
        if self._spoiled(w, tears=False) is not None:
            return hint(*swaps)
        late = [x for x in defining if not g.hb_before(x, u) and not g.hb_before(u, x)]
        if late:
            why = "that write may finish after the read starts" if len(late) == 1 else "those writes may finish after the read starts"
            return hint(Option((after(self.name(u), *[self.name(x) for x in dict.fromkeys(late)]),), why), *swaps)
        shrunk = self._shrunk()
        needs = f"only if `{self.name(u)}` needs no more than the bytes written before it"
        eu = self.ctx.edge(u)
        first = (Option((SetAction(eu.name, None),), "the first contribution initialises the bytes")
                 if eu.accesses()[self.pos].mode is AccessMode.REDUCE else None)
        return hint(*swaps, first, *self._widened(w.address), Option((shrunk,), needs) if shrunk else None,
                    self._declared(w))

    def _widened(self, addr: int) -> list[tuple[Edit, ...]]:
        """For a writer that moves one part of a layout into regions that also hold ``addr``: the
        move made whole (``widen_move``), ordered before the read when it is not."""
        pol, u, out = self.ctx.policy, self.edges[0], []
        for x in dict.fromkeys(x for x, _ in self.ws):
            ex = self.ctx.edge(x)
            if ex.action is not EdgeAction.MOVE or ex.src is None or ex.dst is None:
                continue
            for d in sorted((r for r in pol.regions if r.space == ex.dst.space and r.base <= min(ex.dst.lo, addr)
                             and max(ex.dst.hi, addr + 1) <= r.end and r.name != ex.dst.region), key=lambda r: r.size):
                whole = widen_move(pol, x, d)
                if whole:
                    order = () if self.ctx.graph.hb_before(x, u) else (after(self.name(u), ex.name),)
                    out.append(whole + order)
                    break
        return out[:2]

    def _shrunk(self) -> Edit | None:
        """``Narrow`` of the read to the prefix of its bytes that writes HB-before it (and
        ``init``) define, when it is contiguous, that prefix is not empty, and the first byte
        left out lies in no declared region smaller than the one read through (a part of a
        layout, a layer of a family: bytes someone meant to write, which the read needs)."""
        fp = self.fp
        if not fp.contiguous:
            return None
        try:
            gap = first_gap(fp, self._pieces())
        except OverflowError:
            return None
        if gap is None or gap <= fp.lo:
            return None
        mine = self.ctx.policy.region(fp.region)
        if any(r.space == fp.space and r.base <= gap < r.end and r.size < mine.size for r in self.ctx.policy.regions):
            return None
        return narrow(self.ctx.policy, self.ctx.edge(self.edges[0]), self.pos,
                      replace(fp, elem=gap - fp.lo, stride=gap - fp.lo, count=1))

    def _declared(self, w: Witness) -> Option | None:
        """``Init`` of the read byte's region family, when no edge writes a byte of the family or
        of a region that shares bytes with it (a part of a written layout is moved, not loaded)."""
        name = w.values.get("region")
        if not isinstance(name, str):
            return None
        pol = self.ctx.policy
        fam = [r for r in pol.regions if r.family == pol.region(name).family]
        near = [r for r in pol.regions if any(r.space == f.space and r.base < f.end and f.base < r.end for f in fam)]
        for e in pol.edges:
            for a in e.accesses():
                if writes(a) and any(a.footprint.space == r.space and a.footprint.meets(r.base, r.end) for r in near):
                    return None
        return Option((Init(fam[0].family),), "if its bytes are loaded before the flow")


def widen_move(pol: Policy, x: int, d: Region, depth: int = 0) -> tuple[Edit, ...]:
    """``Widen`` of move ``x`` of ``pol`` into all of region ``d`` from the region of ``d``'s shape
    around its source, and (up to four moves back) of each move that fills only part of that
    region; ``()`` when no source region has ``d``'s shape. For FX-INIT-001's fix hint
    (``Unwritten.fix``): a layout moved one part at a time. Raises nothing."""
    ex = pol.edges[x]
    assert ex.src is not None and ex.dst is not None  # INVARIANT: called for moves
    off = ex.dst.lo - d.base
    s = next((r for r in pol.regions if r.space == ex.src.space and r.size == d.size and r.base == ex.src.lo - off
              and ex.src.hi <= r.end and r.name != ex.src.region), None)
    if s is None:
        return ()
    out: tuple[Edit, ...] = (Widen(ex.name, s.name, d.name),)
    if depth < 3:
        for y in pol.edges:
            if (y.eid != x and y.action is EdgeAction.MOVE and y.src is not None and y.dst is not None
                    and y.dst.space == s.space and s.base <= y.dst.lo and y.dst.hi <= s.end
                    and (y.dst.lo, y.dst.hi) != (s.base, s.end)):
                out += widen_move(pol, y.eid, s, depth + 1)
    return out


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """Yield one FX-INIT-001 obligation per reading access of ``ctx.policy``, in edge order; an
    access that the parametric prover proves for its whole declaration (``hb_covers.Covers``)
    as a held key instead."""
    covers, held = covers_for(ctx), Held()
    todo = [(e, pos) for e in ctx.policy.edges for pos, a in enumerate(e.accesses()) if reads(a)]
    done = [covers is not None and covers.proved(e.span, pos) for e, pos in todo]
    if covers is not None:  # the sweep lists writers only for the reads left to the unrolled proof
        recent_writers(ctx, {(e.eid, pos) for (e, pos), ok in zip(todo, done) if not ok})
    for (e, pos), ok in zip(todo, done):
        if ok:
            yield from held.hold(f"{codes.INIT_001}:{e.name}#{pos}", codes.INIT_001)
            continue
        yield from held.flush()
        yield Unwritten(ctx, e.eid, pos)
    yield from held.flush()
    if covers is not None:
        covers.report()
