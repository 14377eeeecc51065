"""A networkx view of a resolved policy: fabric paths and happens-before (HB) reachability.

Takes an ``ir.Policy``; produces a ``PolicyGraph`` with
- ``fabric``: an undirected graph of devices whose edges carry the link,
- ``hb``: a directed graph on edge ids, ``a -> b`` meaning ``f(a) <= s(b)`` (BRIEF section 2: from
  ``after`` clauses and from serial streams, in declaration order).
Emits no diagnostics; cycles are reported by the FX-ORD-001 obligation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import networkx as nx

from fxverify.ir import Edge, Link, LinkOrder, Policy


class PolicyGraph:
    """Fabric and HB graphs of one policy, with memoised queries.

    Complexity: building is O(edges + after-references); ``hb_before`` is a backward DFS pruned by
    topological rank, so chains between nearby edges cost a few steps even in 100k-edge graphs.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._link_graphs: dict[str, nx.Graph] = {}
        self.fabric = self.link_graph("all", lambda ln: True)
        self.hb = nx.DiGraph()
        self.hb.add_nodes_from(range(len(policy.edges)))
        last_on_stream: dict[tuple[str, str], int] = {}
        for e in policy.edges:
            for name in e.after:
                self.hb.add_edge(policy.edge(name).eid, e.eid)
            if e.stream is not None:
                key = (e.device, e.stream)
                prev = last_on_stream.get(key)
                if prev is not None:
                    self.hb.add_edge(prev, e.eid)
                last_on_stream[key] = e.eid
        self._preds: list[list[int]] = [list(self.hb.predecessors(i)) for i in range(len(policy.edges))]
        self._rank: list[int] | None = None
        self._acyclic: bool | None = None
        self._path_cache: dict[tuple, list[str] | None] = {}

    # -- happens-before ---------------------------------------------------------------------
    def is_acyclic(self) -> bool:
        """True when HB is a strict partial order (some schedule exists). Memoised."""
        if self._acyclic is None:
            self._acyclic = nx.is_directed_acyclic_graph(self.hb)
        return self._acyclic

    def cyclic_components(self) -> list[list[int]]:
        """Strongly connected components that contain a cycle, each sorted, in order of their
        smallest edge id."""
        comps = [sorted(c) for c in nx.strongly_connected_components(self.hb)
                 if len(c) > 1 or self.hb.has_edge(next(iter(c)), next(iter(c)))]
        return sorted(comps)

    def _ranks(self) -> list[int]:
        if self._rank is None:
            rank = [0] * len(self.policy.edges)
            for i, n in enumerate(nx.topological_sort(self.hb)):
                rank[n] = i
            self._rank = rank
        return self._rank

    def hb_before(self, a: int, b: int) -> bool:
        """True when ``f(a) <= s(b)`` in every schedule, i.e. an HB path leads from ``a`` to ``b``.

        Requires an acyclic HB graph.
        """
        return self.hb_path(a, b) is not None

    def hb_path(self, a: int, b: int) -> list[int] | None:
        """Return an HB path ``[a, ..., b]`` (the certificate of ordering), or ``None``.

        Requires an acyclic HB graph (call ``is_acyclic`` first).
        """
        if a == b:
            return None
        if not self.is_acyclic():
            path = nx.shortest_path(self.hb, a, b) if nx.has_path(self.hb, a, b) else None
            return path
        rank = self._ranks()
        ra = rank[a]
        if rank[b] <= ra:
            return None
        parent: dict[int, int] = {b: -1}
        stack = [b]
        preds = self._preds
        while stack:
            n = stack.pop()
            for p in preds[n]:
                if p in parent or rank[p] < ra:
                    continue
                parent[p] = n
                if p == a:
                    path = [a]
                    while path[-1] != b:
                        path.append(parent[path[-1]])
                    return path
                stack.append(p)
        return None

    def ordered(self, a: int, b: int) -> bool:
        """True when ``a`` and ``b`` are HB-ordered one way or the other."""
        return self.hb_before(a, b) or self.hb_before(b, a)

    def ancestors_between(self, a: int, b: int) -> set[int]:
        """Edge ids on some HB path from ``a`` to ``b`` (inclusive); empty when unordered."""
        if not self.hb_before(a, b):
            return set()
        down = nx.descendants(self.hb, a) | {a}
        up = nx.ancestors(self.hb, b) | {b}
        return down & up

    # -- fabric -------------------------------------------------------------------------------
    def link_graph(self, kind: str, allowed: Callable[[Link], bool]) -> nx.Graph:
        """The fabric restricted to links that satisfy ``allowed``, memoised under ``kind``.

        Devices are nodes; between two devices the first declared allowed link is the edge
        (parallel links stay reachable by name for flushes). Adjacency follows link declaration
        order, so breadth-first searches, and therefore routes, are deterministic.
        """
        g = self._link_graphs.get(kind)
        if g is None:
            g = nx.Graph()
            g.add_nodes_from(d.name for d in self.policy.devices)
            for ln in self.policy.links:
                if allowed(ln) and not g.has_edge(ln.a, ln.b):
                    g.add_edge(ln.a, ln.b, link=ln.name)
            self._link_graphs[kind] = g
        return g

    def _path(self, g: nx.Graph, kind: str, src_dev: str, dst_dev: str) -> list[str] | None:
        key = (kind, src_dev, dst_dev)
        if key not in self._path_cache:
            if src_dev == dst_dev:
                self._path_cache[key] = []
            else:
                # Breadth-first from the source: the first shortest path found wins.
                nodes = nx.single_source_shortest_path(g, src_dev).get(dst_dev) if src_dev in g else None
                self._path_cache[key] = None if nodes is None else [
                    g.edges[u, v]["link"] for u, v in zip(nodes, nodes[1:])]
        return self._path_cache[key]

    def route(self, src_dev: str, dst_dev: str) -> list[str] | None:
        """Return the link names of the route from ``src_dev`` to ``dst_dev``: the shortest fabric
        path (fewest hops, ties broken by declaration order). ``[]`` for the same device, ``None``
        when no path exists."""
        return self._path(self.fabric, "all", src_dev, dst_dev)

    def ordered_route(self, src_dev: str, dst_dev: str) -> list[str] | None:
        """Like ``route``, over ``ordered`` links only (``None`` when no such path exists)."""
        g = self.link_graph("ordered", lambda ln: ln.order is LinkOrder.ORDERED)
        return self._path(g, "ordered", src_dev, dst_dev)

    def transfer_endpoints(self, e: Edge) -> tuple[str, str]:
        """Return ``(from_device, to_device)`` of the bytes an edge moves.

        ``move``/``reduce``: source space's device to destination space's device. ``write``: the
        driving device to the destination's device. ``read``: the source's device to the driver.
        """
        pol = self.policy
        if e.src is not None and e.dst is not None:
            return pol.space(e.src.space).device, pol.space(e.dst.space).device
        if e.dst is not None:
            return e.device, pol.space(e.dst.space).device
        if e.src is not None:
            return pol.space(e.src.space).device, e.device
        return e.device, e.device

    def posted_links(self, e: Edge) -> list[Link]:
        """Return the ``posted`` links on the route of an edge's write (empty when none). An edge
        that requires in-order delivery is routed over ordered links when such a path exists."""
        a, b = self.transfer_endpoints(e)
        route = (self.ordered_route(a, b) if e.require_in_order else None) or self.route(a, b) or []
        return [self.policy.link(n) for n in route if self.policy.link(n).order is LinkOrder.POSTED]


def by_region_uses(policy: Policy) -> dict[str, list[int]]:
    """Map each region instance to the ids of edges that use it, sorted: edges whose footprints
    touch any byte of the region (whatever region they name, since regions of one alias set may
    overlap), and edges that hand it off or lease it. Found by a sweep per address space."""
    uses: dict[str, set[int]] = defaultdict(set)
    by_space: dict[str, list[tuple[int, int, int, object]]] = defaultdict(list)
    for r in policy.regions:
        by_space[r.space].append((r.base, 0, r.end, r))
    for e in policy.edges:
        for acc in e.accesses():
            fp = acc.footprint
            by_space[fp.space].append((fp.lo, 1, e.eid, fp))
        for h in e.handoffs:
            uses[h.region].add(e.eid)
        for ls in e.leases:
            uses[ls.region].add(e.eid)
    for items in by_space.values():
        items.sort(key=lambda t: (t[0], t[1]))
        open_regions: list = []
        open_fps: list = []
        for lo, kind, x, obj in items:
            if kind == 0:
                region = obj
                open_fps = [t for t in open_fps if t[1].hi > lo]
                for eid, fp in open_fps:
                    if fp.meets(region.base, region.end):
                        uses[region.name].add(eid)
                open_regions.append(region)
            else:
                fp = obj
                open_regions = [r for r in open_regions if r.end > lo]
                for region in open_regions:
                    if fp.meets(region.base, region.end):
                        uses[region.name].add(x)
                open_fps.append((x, fp))
    return {r: sorted(v) for r, v in uses.items()}
