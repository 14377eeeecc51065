"""The fabric-cut encoding shared by FX-HOOK-001 and FX-ORD-004.

A path from device ``u`` to device ``v`` over an allowed set of links exists iff no *cut* exists:
a set of devices that contains ``u``, not ``v``, and is closed under allowed links. The query asks
for such a cut, so unsat proves the path and a model is the cut (the devices ``u`` can reach).
Takes a ``Context``; used by ``hooks`` and ``ordering``.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx

from fxverify.certificate import Evidence, FabricHop, FabricPath
from fxverify.ir import Edge, Link
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, and_, bool_var, eq, not_, or_


def cut_constraints(ctx: Context, allowed: Callable[[Link], bool], pairs: list[tuple[str, str]]
                    ) -> tuple[list[tuple[str | None, Term]], list[dict[str, Term]]]:
    """Constraints asking for one cut per ``(u, v)`` pair, disjoined: some pair has no path; and,
    per pair, the Boolean variable of each device (true when it lies in that cut).

    Variables ``c<i>_<dev>`` mark device membership in cut ``i``.
    """
    pol = ctx.policy
    alts: list[Term] = []
    members: list[dict[str, Term]] = []
    for i, (u, v) in enumerate(pairs):
        c = {d.name: bool_var(f"c{i}_{d.name}") for d in pol.devices}
        members.append(c)
        closed = [eq(c[ln.a], c[ln.b]) for ln in pol.links if allowed(ln) and ln.a in c and ln.b in c]
        alts.append(and_(c[u], not_(c[v]), *closed))
    return [("cut", or_(*alts))], members


class CutObligation(Obligation):
    """Base for obligations that need fabric paths: from ``src_dev`` to ``dst_dev`` (and through
    ``via`` when set) over links that satisfy ``allowed``."""

    #: True when only ``ordered`` links may carry the path (FX-ORD-004).
    ordered_only = False

    def __init__(self, ctx: Context, e: Edge, src_dev: str, dst_dev: str, *, allowed: Callable[[Link], bool],
                 key_extra: str, via: str | None = None) -> None:
        self.src_dev, self.dst_dev, self.via = src_dev, dst_dev, via
        self.allowed = allowed
        self.pairs = [(src_dev, via), (via, dst_dev)] if via and via not in (src_dev, dst_dev) else [(src_dev, dst_dev)]
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}:{key_extra}", e.span)

    def _reachable(self, u: str, v: str) -> bool:
        return u == v or v in self.reachable_from(u)

    def reachable_from(self, u: str) -> set[str]:
        """Devices reachable from ``u`` over allowed links (``u`` included)."""
        return set(nx.node_connected_component(self.ctx.graph.link_graph(self.code, self.allowed), u))

    def prove_fast(self) -> str | None:
        return "fabric-search" if all(self._reachable(u, v) for u, v in self.pairs) else None

    def evidence(self) -> Evidence | None:
        g = self.ctx.graph.link_graph(self.code, self.allowed)
        hops = []
        for u, v in self.pairs:
            if u != v and not (u in g and v in g and nx.has_path(g, u, v)):
                return None
            nodes = [u] if u == v else nx.shortest_path(g, u, v)
            hops.append(FabricHop(u, v, tuple(g.edges[x, y]["link"] for x, y in zip(nodes, nodes[1:]))))
        return FabricPath(tuple(hops), self.ordered_only)

    def encode(self) -> Query:
        pairs = [(u, v) for u, v in self.pairs if u != v]
        cons, self._members = cut_constraints(self.ctx, self.allowed, pairs)
        return Query(self.key, tuple(cons), header=self.header())

    def witness(self, result: Result) -> Witness:
        # The model satisfies at least one pair's disjunct; only that pair's variables form a cut
        # (the others are unconstrained), so the pair is the one whose side is closed under the
        # allowed links, holds its source and leaves out its target.
        pairs = [(u, v) for u, v in self.pairs if u != v]
        links = [ln for ln in self.ctx.policy.links if self.allowed(ln)]
        for (u, v), members in zip(pairs, self._members):
            side = {d for d, var in members.items() if result.value(var) is True}
            closed = all((ln.a in side) == (ln.b in side) for ln in links if ln.a in members and ln.b in members)
            if closed and u in side and v not in side:
                return Witness(values={"cut": ",".join(sorted(side)), "from": u, "to": v})
        return Witness(values={"cut": "", "from": self.src_dev, "to": self.dst_dev})
