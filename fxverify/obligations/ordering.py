"""Ordering obligations: FX-ORD-001 (cyclic HB), FX-ORD-002 (data race, from ``races``), FX-ORD-003 (posted write
read or persisted before a flush, from ``posted``), FX-ORD-004 (in-order requirement on a path that cannot give
it), and, from ``defined``, FX-INIT-001 (a read of bytes never written);
FX-ORD-005 and FX-ORD-006 (ordering across hosts) come from ``coherence``.

Takes a ``Context``; yields ``Obligation`` objects (and the parametric proofs' ``ProvedTogether``
runs of its stages). The semantics are BRIEF sections 2 and 3; ``specs/obligations.md`` gives
each query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import networkx as nx

from fxverify.certificate import EveryPath, Evidence, TopologicalOrder
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import DropAfter, Hint, Via, hint
from fxverify.ir import Edge, Link
from fxverify.obligations import coherence, defined, posted, races
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.encode import hb_label, schedule
from fxverify.obligations.fabric import path_constraints, path_of
from fxverify.obligations.posted import PostedPersist, PostedRead, route_avoiding
from fxverify.obligations.visibility import same_requester
from fxverify.obligations.races import Race, RaceFree
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result, Status
from fxverify.smt.terms import or_
from fxverify.vocab import LinkOrder

#: The race obligations live in ``races``; named here too, where the ordering family's users look.
__all__ = ["HbCycle", "InOrder", "PostedPersist", "PostedRead", "Race", "RaceFree", "generate", "same_requester"]


class HbCycle(Obligation):
    """FX-ORD-001: the HB constraints over ``edges`` (one strongly connected component, or the
    whole policy when acyclic) admit a schedule. Proved when the query is sat; refuted with the
    cycle read from the unsat core."""

    code = codes.ORD_001

    def prove_fast(self) -> str | None:
        return "topological-sort" if self.ctx.graph.is_acyclic() else None

    def evidence(self) -> Evidence | None:
        g = self.ctx.graph
        return TopologicalOrder(tuple(sorted(self.edges, key=g.rank))) if g.is_acyclic() else None

    def encode(self) -> Query:
        return Query(self.key, tuple(schedule(self.ctx.graph, self.edges)), expect=Status.SAT,
                     header=self.header(), want_core=True)

    def witness(self, result: Result) -> Witness:
        # The core names the HB constraints of the cycle by their labels.
        g = self.ctx.graph
        pairs = {hb_label(p, e): (p, e) for e in self.edges for p in g.predecessors(e)}
        core = nx.DiGraph()
        for label in result.core:
            if label in pairs:
                core.add_edge(*pairs[label])
        cycle = [u for u, _ in nx.find_cycle(core)] if core.number_of_edges() else list(self.edges)
        first = cycle.index(min(cycle))
        return Witness(cycle=cycle[first:] + cycle[:first])

    def message(self, w: Witness) -> str:
        names = " -> ".join(f"`{self.name(e)}`" for e in w.cycle + w.cycle[:1])
        return f"happens-before cycle: {names}"

    def why(self, w: Witness) -> str:
        return "each edge must finish before the next one starts, so none of them can ever start"

    def fix(self, w: Witness) -> Hint:
        """Drop one ``after`` of the cycle, the one that closes it first (stream order cannot be
        dropped this way)."""
        cyc = list(w.cycle)
        pairs = [(cyc[i - 1], cyc[i]) for i in range(len(cyc))]
        return hint(*[DropAfter(self.name(b), self.name(a)) for a, b in pairs if self.name(a) in self.ctx.edge(b).after])


class InOrder(Obligation):
    """FX-ORD-004: every path that may carry the bytes of an edge that requires in-order delivery
    is made of ``ordered`` links: its pinned route (``via``), or, when it pins none, every simple
    fabric path between its endpoints (the policy does not say which one the hardware takes).
    A third-party transfer (its driver at neither end, ``leg`` given) that pins no route has one
    obligation per leg of its bytes: from the source's device into the driver's engine, and from
    the driver out to the destination's device (specs/obligations.md, FX-ORD-004).
    The query asks for a simple path that crosses a link that is not ``ordered``."""

    schedule_free = True

    code = codes.ORD_004

    def __init__(self, ctx: Context, e: Edge, leg: tuple[str, str] | None = None) -> None:
        self.src_dev, self.dst_dev = leg if leg is not None else ctx.graph.transfer_endpoints(e)
        self.leg = leg
        pinned = e.via is not None
        key = f"{self.code}:{e.name}:in_order" + (f":{leg[0]}>{leg[1]}" if leg is not None else "")
        super().__init__(ctx, (e.eid,), key, e.span, (Label(e.span, "on its pinned route"),) if pinned else ())
        self.pinned = pinned
        # The links the query ranges over: the pinned route, or the whole fabric (the Python
        # route enumeration is what the fast proof uses, so the query must not depend on it).
        self.links = ctx.graph.transfer_links(e) if pinned else list(ctx.policy.links)

    def _ordered_carriers(self) -> list[Link] | None:
        """The links that may carry the transfer, when all are ``ordered``; else ``None``."""
        g = self.ctx.graph
        carriers = g.transfer_links(self.ctx.edge(self.edges[0])) if self.leg is None else g.possible_links(*self.leg)
        return carriers if all(ln.order is LinkOrder.ORDERED for ln in carriers) else None

    def prove_fast(self) -> str | None:
        return "every-path" if self._ordered_carriers() is not None else None

    def evidence(self) -> Evidence | None:
        carriers = self._ordered_carriers()
        if carriers is None:
            return None
        return EveryPath(self.src_dev, self.dst_dev, tuple(ln.name for ln in carriers), self.pinned)

    def encode(self) -> Query:
        if self.src_dev == self.dst_dev:
            return Query(self.key, (("same_device", or_()),), header=self.header())
        cons, self._arcs = path_constraints(self.links, self.src_dev, self.dst_dev,
                                            lambda ln: ln.order is not LinkOrder.ORDERED)
        return Query(self.key, tuple(cons), header=self.header())

    def witness(self, result: Result) -> Witness:
        path = path_of(result, self.links, self._arcs, self.src_dev)
        bad = next((n for n in path if self.ctx.policy.link(n).order is not LinkOrder.ORDERED), "")
        return Witness(values={"path": ",".join(path), "link": bad, "from": self.src_dev, "to": self.dst_dev})

    def message(self, w: Witness) -> str:
        ln = self.ctx.policy.link(str(w.values["link"])) if w.values.get("link") else None
        route = " -> ".join(f"`{n}`" for n in str(w.values.get("path", "")).split(",") if n)
        crosses = f"`{ln.name}` ({ln.order.value})" if ln is not None else "an unordered link"
        which = "its pinned route" if self.pinned else f"the path {route}"
        e = self.ctx.edge(self.edges[0])
        leg = ("" if self.leg is None else
               f" (its bytes go {'into' if self.dst_dev == e.device else 'out of'} `{e.device}`'s engine, which moves them)")
        head = f"`{self.name(self.edges[0])}` requires in-order delivery from `{self.src_dev}` to `{self.dst_dev}`{leg}"
        if not self.pinned and ln is not None and route == f"`{ln.name}`":
            return f"{head}, but the link between them, `{ln.name}`, is {ln.order.value}"
        return f"{head}, but {which} crosses {crosses}"

    def why(self, w: Witness) -> str:
        if self.pinned:
            return "only `ordered` links complete transfers in submission order"
        if self.leg is not None:
            return ("only `ordered` links complete transfers in submission order; a copy that another device's engine "
                    "drives takes the bytes into that engine and out again, over any path from the source to it and "
                    "from it to the destination")
        return ("only `ordered` links complete transfers in submission order, and without `via` the bytes may take "
                "any path the fabric allows")

    def fix(self, w: Witness) -> Hint:
        """Pin a route made of ``ordered`` links, when the fabric has one and none is pinned (not
        for a leg of a third-party transfer: its route must pass through the driver)."""
        route = None if self.pinned or self.leg is not None else route_avoiding(self.ctx, self.ctx.edge(self.edges[0]), None)
        return hint(Via(self.name(self.edges[0]), tuple(route.split(", "))) if route else None)


def generate(ctx: Context) -> Iterator[Obligation]:
    """Yield every ordering obligation of ``ctx.policy``: the obligations of each of ``STAGES``
    in turn.

    When HB is cyclic only FX-ORD-004 and FX-ORD-001 obligations are produced: no schedule exists,
    so schedule-dependent obligations are vacuous until the cycle is fixed.
    """
    for stage in STAGES:
        yield from stage(ctx)


def _paths_and_cycles(ctx: Context) -> Iterator[Obligation]:
    """FX-ORD-004 per in-order edge, then FX-ORD-001: one per cyclic component, or one for the
    whole (acyclic) policy."""
    g = ctx.graph
    pol = ctx.policy
    for e in pol.edges:
        if e.require_in_order:
            legs = g.driver_legs(e)  # a third-party transfer: one obligation per leg through the driver's engine
            yield from (InOrder(ctx, e, leg) for leg in legs) if legs is not None else (InOrder(ctx, e),)
    if not g.is_acyclic():
        for comp in g.cyclic_components():
            yield HbCycle(ctx, tuple(comp), f"{codes.ORD_001}:{pol.edges[comp[0]].name}", pol.edges[comp[0]].span)
        return
    yield HbCycle(ctx, tuple(range(len(pol.edges))), f"{codes.ORD_001}:policy", pol.span)


def _acyclic_only(gen: Callable[[Context], Iterator[Obligation]]) -> Callable[[Context], Iterator[Obligation]]:
    """``gen``, yielding nothing with cyclic HB."""

    def stage(ctx: Context) -> Iterator[Obligation]:
        if ctx.graph.is_acyclic():
            yield from gen(ctx)

    stage.__name__ = stage.__qualname__ = gen.__name__
    return stage


#: The ordering obligations in the order ``generate`` yields them, in parts that can be generated
#: apart (``families.stage_obligations``: a shard of a check generates only its own, so no work is
#: repeated). INVARIANT: no code comes from two stages, so a key (which starts with its code)
#: never repeats across stages and dropping repeated keys stage by stage drops the same ones.
STAGES: tuple[Callable[[Context], Iterator[Obligation]], ...] = (
    _paths_and_cycles, races.generate, _acyclic_only(posted.generate), _acyclic_only(defined.generate),
    _acyclic_only(coherence.generate))
