"""FX-ORD-002 (data race): one ``RaceFree`` obligation per access for the earlier accesses HB
orders before it, and one ``Race`` per conflicting pair HB does not order.

Takes a ``Context``; yields ``Obligation`` objects (``generate``, a stage of ``ordering``). The
pairs are those of ``pairs.conflicting_pairs`` (``base.conflict_kind`` says they conflict); the
reachability index orders each (one bisection), or, when the index is over its budget, the access
history (``history.after_all``, after FastTrack) shows most of an access's pairs ordered at once
and graph searches the rest. The semantics are BRIEF sections 2 and 3;
``specs/obligations.md`` (FX-ORD-002) gives each query. Emits no diagnostics itself.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from fxverify.certificate import EarlierAccess, Evidence, Ordered, OrderedBefore
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint, after, hint
from fxverify.errors import FxError
from fxverify.ir import Access, AccessMode
from fxverify.obligations import history
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.pairs import conflicting_pairs
from fxverify.obligations.encode import (
    member, projected_schedule, relevant_edges, schedule, time_objectives, touch_overlap,
)
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, and_, int_var, or_
from fxverify.source import Span

_MODE_VERB = {AccessMode.READ: "reads", AccessMode.WRITE: "writes", AccessMode.REDUCE: "reduces into"}


class Race(Obligation):
    """FX-ORD-002: accesses ``a`` and ``b`` (of different edges) to a shared byte, at least one a
    write, are HB-ordered in every schedule, or never touch bytes at once: a cancelled edge
    touches its bytes only until its first cancel finishes (specs/obligations.md section 1,
    cancellation; the cancels are primary edges after ``a`` and ``b``)."""

    code = codes.ORD_002
    unique_key = True  # one per pair of accesses, and edge names are unique

    def __init__(self, ctx: Context, a: int, pa: int, b: int, pb: int) -> None:
        """A policy can have many of these pairs (those ``RaceFree`` does not cover), so the
        spans and labels of the report are made only when asked (``primary``, ``related``)."""
        ea, eb = ctx.edge(a), ctx.edge(b)
        self.ctx, self.edges = ctx, (a, b)
        self.acc_a: Access = ea.accesses()[pa]
        self.acc_b: Access = eb.accesses()[pb]
        self.ca, self.cb = list(ctx.cancellers.get(a, ())), list(ctx.cancellers.get(b, ()))
        cancels = tuple(c for c in ctx.cancelled_by(a, b) if c not in (a, b)) if self.ca or self.cb else ()
        self.edges = (a, b, *cancels)
        self.key = f"{self.code}:{ea.name}#{pa}|{eb.name}#{pb}"

    @property
    def primary(self) -> Span:  # type: ignore[override]
        """The span of the second edge (the access a trace marks)."""
        return self.ctx.edge(self.edges[1]).span

    @property
    def related(self) -> tuple[Label, ...]:  # type: ignore[override]
        """The first edge's access, labelled with its mode."""
        ea = self.ctx.edge(self.edges[0])
        return (Label(ea.span, f"`{ea.name}` {_MODE_VERB[self.acc_a.mode]} here"),)

    def prove_fast(self) -> str | None:
        """``hb-reachability`` when HB orders the two accesses (never, for the pairs ``generate``
        makes: it puts ordered pairs in a ``RaceFree``; kept for pairs built on their own); else
        ``cancel-order`` when a cancel of one of them is HB-before one of them (the cancelled
        edge stops touching bytes before the other starts, or touches none:
        specs/obligations.md, FX-ORD-002); else ``None``. The method names the argument its
        certificate (``evidence``) makes."""
        a, b = self.edges[:2]
        return self.order_method(self.ctx.graph.ordered(a, b), (a, b), (a, b))

    def evidence(self) -> Evidence | None:
        a, b = self.edges[:2]
        p = self.either_path(a, b)
        return Ordered(p) if p is not None else self.cancelled_first((a, b), (a, b))

    def conditions(self, suffix: str = "") -> tuple[tuple[Term, Term, Term], tuple[Term, Term, Term]]:
        """The race condition's three parts (``addr`` is a byte of each footprint, the two touch
        bytes at a common instant) and its probes ``(addr, k_a, k_b)``, over variables named with
        ``suffix`` (a ``RaceFree`` query holds one set per pair)."""
        a, b = self.edges[:2]
        addr = int_var(f"addr{suffix}")
        ma, ka = member(self.acc_a.footprint, addr, f"a{suffix}")
        mb, kb = member(self.acc_b.footprint, addr, f"b{suffix}")
        return (ma, mb, touch_overlap(a, self.ca, b, self.cb)), (addr, ka, kb)

    def encode(self) -> Query:
        (ma, mb, overlap), self._probes = self.conditions()
        cons = projected_schedule(self.ctx.graph, self.edges)
        cons += [("shared_byte_a", ma), ("shared_byte_b", mb), ("overlap", overlap)]
        return Query(self.key, tuple(cons), minimize=(*self._probes, *time_objectives(self.edges)), header=self.header())

    def guess(self) -> dict[str, int | bool] | None:
        """Both accesses at once, over the footprints' lowest common byte: each edge runs over
        ``[0, 1)`` ns, which the query's schedule allows when HB leaves the pair unordered (the
        pairs ``generate`` makes) and no cancel is among its edges. ``None`` with a cancel, or
        when the footprints share no byte (their hulls only meet)."""
        if len(self.edges) > 2:
            return None
        fa, fb = self.acc_a.footprint, self.acc_b.footprint
        byte = fa.shared_byte(fb)
        if byte is None:
            return None
        model: dict[str, int | bool] = {"addr": byte}
        for tag, fp in (("a", fa), ("b", fb)):
            k = fp.element_of(byte)
            assert k is not None  # INVARIANT: shared_byte returns a byte of both
            model[f"k_{tag}"], model[f"o_{tag}"] = k, byte - fp.base - fp.stride * k
        for e in self.edges:
            model[f"s_{e}"], model[f"f_{e}"] = 0, 1
        return model

    def witness(self, result: Result) -> Witness:
        return self.witness_from(result, self._probes)

    def witness_from(self, result: Result, probes: tuple[Term, Term, Term]) -> Witness:
        """The witness of a model of this pair's race condition, read through ``probes``: the
        shared address and the element index on each side (``encode`` makes them; a
        ``RaceFree`` query makes one such triple per pair)."""
        a, b = self.edges[:2]
        addr, ka, kb = probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr),
                       space=self.acc_a.footprint.space, elements={a: result.int(ka), b: result.int(kb)})

    def culprits(self) -> tuple[int, ...]:
        """The two accesses' edges; their cancels only explain."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        a, b = self.edges[:2]
        kind = "write-write" if AccessMode.READ not in (self.acc_a.mode, self.acc_b.mode) else (
            "read-write" if self.acc_a.mode is AccessMode.READ else "write-read")
        if self._nonatomic():
            kind = "non-atomic reduce"
        cancelled = " (a cancelled transfer touches its bytes until its cancel completes)" if len(self.edges) > 2 else ""
        return (f"data race ({kind}) on `{self.acc_b.footprint.region}`: `{self.name(a)}` and "
                f"`{self.name(b)}` may overlap in time{cancelled}")

    def _nonatomic(self) -> bool:
        """True when both accesses accumulate and one of them is ``reduce(OP, nonatomic)``."""
        both = self.acc_a.mode is AccessMode.REDUCE and self.acc_b.mode is AccessMode.REDUCE
        return both and not (self.acc_a.atomic and self.acc_b.atomic)

    def why(self, w: Witness) -> str:
        if self._nonatomic():
            return ("a non-atomic reduce loads, combines and stores: a concurrent accumulation that lands between "
                    "its load and its store is lost, so it must be ordered like a write (after, stream order)")
        return ("two accesses to the same byte, at least one a write, must be ordered by "
                "happens-before (after, stream order)")

    def fix(self, w: Witness) -> Hint:
        """The second access after the first; when one of them is cancelled, first the other
        after that cancel (once the cancel completes, the cancelled edge touches nothing: the abort
        path of a transfer engine frees its buffers so)."""
        a, b = self.edges[:2]
        firsts = [after(self.name(y), self.name(c)) for x, y, cs in ((b, a, self.cb), (a, b, self.ca))
                  for c in cs if c != y]
        return hint(*firsts[:1], after(self.name(b), self.name(a)))


class RaceFree(Obligation):
    """FX-ORD-002 for one access and every earlier access it conflicts with: access ``pos`` of
    edge ``x`` is HB-after each access of ``earlier`` (``(edge, position)`` pairs: accesses of
    other edges that share a hull byte with it and conflict with it), so it races with none of
    them.

    The generator (``generate``) puts an earlier access here only when HB orders it before ``x``:
    the access history (``history.after_all``) showed it for all of them at once, with one
    reachability query per member of its state, or the reachability index did for this pair. A
    buffer that every layer reuses gives one obligation per access instead of one per pair of
    layers. The property is the conjunction of the pairs'
    FX-ORD-002 properties, and the solver query (``--no-prune``, ``--dump-smt``) is their
    disjunction of violations; a model names the pair that races, and the obligation then stands
    for that pair (``witness``). The certificate (``hb-before-all``) gives each earlier access
    an HB path to ``x``, so ``check --certify`` re-checks every pair the obligation covers."""

    code = codes.ORD_002
    unique_key = True  # one per access, and edge names are unique

    def __init__(self, ctx: Context, x: int, pos: int, earlier: tuple[tuple[int, int], ...]) -> None:
        """``earlier`` in ascending order, at least one. A policy can have one per access, so
        nothing of the report is made until a refutation asks for it."""
        ex = ctx.edge(x)
        self.ctx, self.pos, self.earlier = ctx, pos, earlier
        # INVARIANT: every access of ``earlier`` is HB-before ``x`` (``generate`` puts it here only
        # then), which ``prove_fast`` relies on. ``edges`` becomes the racing pair's on a
        # refutation (``witness``); ``access_edge`` stays ``x``.
        self.access_edge = x
        self.edges = (x, *(e for e, _p in earlier))
        self.key = f"{self.code}:{ex.name}#{pos}|earlier"

    @property
    def primary(self) -> Span:  # type: ignore[override]
        """The span of the later access's edge."""
        return self.ctx.edge(self.access_edge).span

    @property
    def related(self) -> tuple[Label, ...]:  # type: ignore[override]
        """Nothing: the message names the racing pair."""
        return ()

    def prove_fast(self) -> str | None:
        """``hb-reachability``: the generator found every earlier access HB-before this one
        (``evidence`` gives each path)."""
        return "hb-reachability"

    def evidence(self) -> Evidence | None:
        x = self.access_edge
        out = []
        for e, p in self.earlier:
            path = self.path(e, x)
            if path is None:
                return None
            out.append(EarlierAccess(e, p, path))
        return OrderedBefore(self.pos, tuple(out))

    def undecided(self) -> tuple[int, ...]:
        """The access's own edge: its earlier accesses grow with every layer that reuses the
        buffer, and an unknown's fingerprint must not change when a layer is added."""
        return (self.access_edge,)

    def _pairs(self) -> list[Race]:
        """One ``Race`` per earlier access, ``(earlier, this)`` in role order."""
        x = self.access_edge
        return [Race(self.ctx, e, p, x, self.pos) for e, p in self.earlier]

    def encode(self) -> Query:
        """Some earlier access and this one touch a shared byte at a common instant: the pairs'
        race conditions (as ``Race.encode`` states them, each over its own address and element
        variables), at least one true, on the schedule of the edges relevant to some pair (each
        disjunct mentions only its pair and their cancels, so a model over a pair's relevant
        edges extends to the rest: ``relevant_edges``). The model is minimised like a pair's:
        each pair's address and elements in turn, then the times."""
        g = self.ctx.graph
        races = self._pairs()
        keep: set[int] = set()
        for r in races:
            keep |= relevant_edges(g, r.edges)
        cons = schedule(g, keep)
        hits: list[Term] = []
        probes: list[tuple[Term, Term, Term]] = []
        for i, r in enumerate(races):
            parts, pr = r.conditions(f"_{i}")
            hits.append(and_(*parts))
            probes.append(pr)
        cons.append(("some_pair_races", or_(*hits)))
        self._probes = (tuple(hits), tuple(probes))
        prim = tuple(sorted({e for r in races for e in r.edges}))
        return Query(self.key, tuple(cons), minimize=(*(t for p in probes for t in p), *time_objectives(prim)),
                     header=self.header())

    def witness(self, result: Result) -> Witness:
        """The witness of the first pair whose race condition the model satisfies. From here on
        the obligation's ``edges`` are that pair's (and its cancels'), which the simulator
        replays and the trace shows. Raises ``FxError`` when the model satisfies no pair (a
        solver answer that contradicts its own query)."""
        hits, probes = self._probes
        for r, hit, pr in zip(self._pairs(), hits, probes):
            if result.value(hit) is True:
                self.edges = r.edges
                return r.witness_from(result, pr)
        raise FxError(f"the model of {self.key} satisfies none of its pairs' races")

    def _race_of(self, w: Witness) -> Race:
        """The pair a witness shows: the earlier access of the edge ``w`` gives an element index
        whose footprint holds ``w.address`` (the first such), against this access. Derived from
        ``w`` alone, so an obligation built again (a shard verifying hints) reads the same pair."""
        for r in self._pairs():
            if r.edges[0] in w.elements and w.address is not None and r.acc_a.footprint.contains(w.address):
                return r
        raise FxError(f"the witness of {self.key} shows none of its pairs")

    def culprits(self) -> tuple[int, ...]:
        """The racing pair's two edges (``edges`` after ``witness``)."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        """The racing pair's message (``Race.message``)."""
        return self._race_of(w).message(w)

    def why(self, w: Witness) -> str:
        """The racing pair's rule (``Race.why``)."""
        return self._race_of(w).why(w)

    def fix(self, w: Witness) -> Hint:
        """The racing pair's hint (``Race.fix``)."""
        return self._race_of(w).fix(w)


def generate(ctx: Context) -> Iterator[Obligation]:
    """FX-ORD-002 (none with cyclic HB). Each conflicting pair, its accesses taken in the graph's
    linear extension of HB, is covered once: by the ``RaceFree`` of its later access when HB
    orders the two, else by its own ``Race`` (which a cancel order or the solver decides). HB
    order is known without a query of its own when the access history (``history.after_all``)
    showed the later access HB-after every earlier access it conflicts with, and asked of the
    reachability index otherwise: either way one obligation per access stands for all its
    ordered pairs, so the count grows with the accesses, not with the pairs. The sweep runs only
    without the index (``PolicyGraph.indexed``): with it, a bisection per pair is cheaper, and
    proves the same pairs."""
    g = ctx.graph
    if not g.is_acyclic():
        return
    # With the reachability index, one bisection per pair costs less than the access history's
    # sweep (the 8B prefill policy: 0.06 s for its 60,180 pairs against 0.2 s), and both prove the
    # same pairs: the sweep proves a pair only when HB orders it. Without the index (a graph
    # search per query) the sweep's few queries per access pay.
    swept = frozenset() if g.indexed() else history.after_all(ctx)
    # later access -> its earlier accesses, each packed as ``edge << 8 | position`` (as
    # ``Pairs.halves`` gives them) in a 64-bit array: held for every access until the pairs are
    # done, they are as many as the pairs.
    earlier: dict[int, array] = {}
    ranks, hb_before = g.ranks(), g.hb_before_fn()
    # INVARIANT: ``conflicting_pairs`` holds exactly the pairs ``conflict_kind`` calls a race
    # (tests/obligations/test_pairs.py), so none is asked again here: a buffer every layer
    # reuses has them in the square of the layers.
    for x, y in conflicting_pairs(ctx).halves():
        a, b = x >> 8, y >> 8
        first, later = (x, y) if ranks[a] < ranks[b] else (y, x)
        if (swept and (later >> 8, later & 0xFF) in swept) or hb_before(first >> 8, later >> 8):
            got = earlier.get(later)
            if got is None:
                got = earlier[later] = array("q")
            got.append(first)
        else:
            yield Race(ctx, a, x & 0xFF, b, y & 0xFF)
    for later, before in sorted(earlier.items()):
        yield RaceFree(ctx, later >> 8, later & 0xFF, tuple((v >> 8, v & 0xFF) for v in sorted(before)))
