"""Fabric encodings: cuts (FX-HOOK-001) and simple paths (FX-ORD-004).

A path from device ``u`` to device ``v`` over an allowed set of links exists iff no *cut* exists:
a set of devices that contains ``u``, not ``v``, and is closed under allowed links. The query asks
for such a cut, so unsat proves the path and a model is the cut (the devices ``u`` can reach).

``path_constraints`` asks for a simple path from ``u`` to ``v`` that crosses a link of a given
set (a path the hardware may take that breaks a guarantee); a model is that path.
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
from fxverify.smt.terms import Term, add, and_, bool_var, const, eq, int_var, ite, not_, or_


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


def path_constraints(links: list[Link], u: str, v: str, bad: Callable[[Link], bool]
                     ) -> tuple[list[tuple[str | None, Term]], dict[tuple[str, bool], Term]]:
    """Constraints asking for a simple path from device ``u`` to device ``v`` (``u != v``) over
    ``links`` that crosses at least one link satisfying ``bad``; and the arc variables.

    Each link ``L`` gives two Boolean arcs, ``p_<i>_f`` (``L.a`` to ``L.b``) and ``p_<i>_r``
    (back), ``i`` its position in ``links``. At most one arc of a link is used; ``u`` has one
    outgoing arc and none incoming, ``v`` one incoming and none outgoing, every other device as many
    incoming as outgoing arcs and at most one. Integer levels ``d_<dev>`` grow along every used arc,
    which rules out cycles, so the used arcs are exactly one simple path.
    Returns ``(constraints, {(link name, forward): arc})``.
    """
    arcs: dict[tuple[str, bool], Term] = {}
    ins: dict[str, list[Term]] = {}
    outs: dict[str, list[Term]] = {}
    cons: list[tuple[str | None, Term]] = []
    level = {d: int_var(f"d_{d}") for ln in links for d in (ln.a, ln.b)}
    for i, ln in enumerate(links):
        for fwd, (x, y) in ((True, (ln.a, ln.b)), (False, (ln.b, ln.a))):
            arc = arcs[(ln.name, fwd)] = bool_var(f"p_{i}_{'f' if fwd else 'r'}")
            outs.setdefault(x, []).append(arc)
            ins.setdefault(y, []).append(arc)
            cons.append((None, or_(not_(arc), level[y] >= level[x] + 1)))
        cons.append((None, not_(and_(arcs[(ln.name, True)], arcs[(ln.name, False)]))))

    def count(xs: list[Term]) -> Term:
        # `(+ t)` with one argument is not SMT-LIB (cvc5 rejects it): a lone term stands alone.
        terms = [ite(x, 1, 0) for x in xs]
        return add(*terms) if len(terms) > 1 else terms[0] if terms else const(0)
    for d in sorted(level):
        n_in, n_out = count(ins.get(d, [])), count(outs.get(d, []))
        if d == u:
            cons.append((f"leaves_{d}", and_(eq(n_out, 1), eq(n_in, 0))))
        elif d == v:
            cons.append((f"arrives_{d}", and_(eq(n_in, 1), eq(n_out, 0))))
        else:
            cons.append((None, and_(eq(n_in, n_out), n_in <= 1)))
    if u not in level or v not in level:
        cons.append(("no_link_at_an_end", or_()))
    crossing = [arcs[(ln.name, f)] for ln in links if bad(ln) for f in (True, False)]
    cons.append(("crosses_a_bad_link", or_(*crossing)))
    return cons, arcs


def path_of(result: Result, links: list[Link], arcs: dict[tuple[str, bool], Term], u: str) -> list[str]:
    """The link names of the path a model of ``path_constraints`` chose, from ``u`` in order."""
    used = {(ln.name, f): ln for ln in links for f in (True, False) if result.value(arcs[(ln.name, f)]) is True}
    out: list[str] = []
    at = u
    while len(out) < len(used):
        step = next(((n, f, ln) for (n, f), ln in used.items() if (ln.a if f else ln.b) == at and n not in out), None)
        if step is None:
            break
        out.append(step[0])
        at = step[2].b if step[1] else step[2].a
    return out


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
