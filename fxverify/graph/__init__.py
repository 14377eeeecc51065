"""A networkx view of a resolved policy: fabric paths and happens-before (HB) reachability.

Takes an ``ir.Policy``; produces a ``PolicyGraph`` with
- ``fabric``: an undirected graph of devices whose edges carry the link, and the routes a
  transfer may take (``graph.fabric.FabricRoutes``),
- ``hb``: a directed graph on edge ids, ``a -> b`` meaning ``f(a) <= s(b)`` (BRIEF section 2: from
  ``after`` clauses and from serial streams, in declaration order).
Emits no diagnostics; cycles are reported by the FX-ORD-001 obligation.
"""

from __future__ import annotations

import bisect
import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import networkx as nx

from fxverify.graph.fabric import FabricRoutes, is_posted  # noqa: F401  (is_posted re-exported: a rule of the posted obligations)
from fxverify.hb import hb_adjacency
from fxverify.ir import Footprint, Policy, Region


def hb_digraph(preds: list[list[int]]) -> nx.DiGraph:
    """The HB graph with adjacency ``preds`` (``hb_adjacency``) as a networkx ``DiGraph`` on edge
    ids, its edges added in declaration order: for pictures, traces and cycles."""
    hb = nx.DiGraph()
    hb.add_nodes_from(range(len(preds)))
    hb.add_edges_from((a, b) for b, before in enumerate(preds) for a in before)
    return hb


def topological_ranks(preds: list[list[int]], succs: list[list[int]]) -> list[int] | None:
    """Each node's position in a topological order of the graph with adjacency ``preds`` and
    ``succs`` (node ids ``0..n-1``), or ``None`` when it has a cycle. The order is Kahn's by
    generations, as ``networkx.topological_sort`` gives it (3.2 and later): the nodes with no
    predecessor in id order, then those whose last predecessor each generation removes, in the
    order they are freed. O(nodes + edges)."""
    indegree = [len(p) for p in preds]
    ranks = [0] * len(preds)
    generation = [v for v, d in enumerate(indegree) if d == 0]
    done = 0
    while generation:
        freed: list[int] = []
        for v in generation:
            ranks[v] = done
            done += 1
            for c in succs[v]:
                indegree[c] -= 1
                if indegree[c] == 0:
                    freed.append(c)
        generation = freed
    return ranks if done == len(preds) else None


class ReachIndex:
    """The exact reachability index of an acyclic graph: ``post`` numbers nodes in post-order of
    a depth-first search over successors (roots and children in id order), and ``reach[a]``
    holds the post numbers of ``a`` and of every node after it as sorted half-open intervals
    ``(lo0, hi0, lo1, hi1, ...)``, merged. ``a`` reaches ``b`` exactly when ``post[b]`` lies in
    one of them (``before``).

    This is the compressed transitive closure of Agrawal, Borgida and Jagadish ("Efficient
    management of transitive relationships in large data and knowledge bases", SIGMOD 1989): a
    depth-first subtree is one interval, so a layered flow needs a few intervals per edge (3.3 on
    average for the Llama-3.1-8B prefill policy). Built once in O(edges x intervals)
    (``interval_index``); each query is one bisection. Raises nothing."""

    __slots__ = ("post", "reach")

    def __init__(self, post: list[int], reach: list[tuple[int, ...]]) -> None:
        self.post, self.reach = post, reach

    def before(self, a: int, b: int) -> bool:
        """True when a path of one edge or more leads from node ``a`` to node ``b``."""
        return a != b and bisect.bisect_right(self.reach[a], self.post[b]) & 1 == 1

    def by_post(self, nodes: Iterable[int]) -> tuple[list[int], list[int]]:
        """``nodes`` in post order and their post numbers, ascending: the form ``after_among``
        and ``reaches_any`` search with bisections (built once for many queries)."""
        order = sorted(nodes, key=self.post.__getitem__)
        return order, [self.post[v] for v in order]

    def after_among(self, a: int, among: tuple[list[int], list[int]]) -> list[int]:
        """The nodes of ``among`` (``by_post``) that a path of one edge or more leads to from
        ``a``, in post order: one bisection per interval of ``a``, where asking ``before`` of
        each node would cost one per node."""
        order, posts = among
        r, out = self.reach[a], []
        for i in range(0, len(r), 2):
            out += order[bisect.bisect_left(posts, r[i]):bisect.bisect_left(posts, r[i + 1])]
        return [v for v in out if v != a]

    def reaches_any(self, a: int, among: tuple[list[int], list[int]]) -> bool:
        """True when ``a`` is a node of ``among`` (``by_post``) or a path leads from ``a`` to
        one: ``a``'s intervals hold its own post number and those of every node after it."""
        posts, r = among[1], self.reach[a]
        for i in range(0, len(r), 2):
            j = bisect.bisect_left(posts, r[i])
            if j < len(posts) and posts[j] < r[i + 1]:
                return True
        return False


def interval_index(succs: list[list[int]], preds: list[list[int]], budget: int) -> ReachIndex | None:
    """The ``ReachIndex`` of the acyclic graph with adjacency ``succs`` and ``preds`` (node ids
    ``0..n-1``); ``None`` once the intervals exceed ``budget`` endpoints in all. O(nodes x
    intervals)."""
    n = len(succs)
    post = [-1] * n
    order: list[int] = []  # nodes by increasing post number: successors come first
    for root in range(n):
        if post[root] >= 0 or preds[root]:
            continue
        post[root] = -2
        stack = [(root, iter(succs[root]))]
        while stack:
            v, it = stack[-1]
            for c in it:
                if post[c] == -1:
                    post[c] = -2
                    stack.append((c, iter(succs[c])))
                    break
            else:
                stack.pop()
                post[v] = len(order)
                order.append(v)
    reach: list[tuple[int, ...]] = [()] * n
    for v in order:
        p = post[v]
        kids = succs[v]
        if not kids:
            reach[v] = (p, p + 1)
            continue
        bounds = [(p, p + 1)]
        for c in kids:
            f = reach[c]
            bounds.extend(zip(f[0::2], f[1::2]))
        bounds.sort()
        out: list[int] = []
        for lo, hi in bounds:
            if out and lo <= out[-1]:
                if hi > out[-1]:
                    out[-1] = hi
            else:
                out += (lo, hi)
        reach[v] = tuple(out)
        budget -= len(out)
        if budget < 0:
            return None
    return ReachIndex(post, reach)


class PolicyGraph(FabricRoutes):
    """Fabric and HB graphs of one policy, with memoised queries.

    Complexity: the first HB read builds adjacency lists, ranks and acyclicity in O(edges +
    after-references); the first HB query builds an exact reachability index once
    (``reach_index``: interval labels of a depth-first post-order); ``hb_before`` is then one
    bisection, and ``hb_path`` walks straight to its target, choosing at each step a successor the
    index says still reaches it."""

    def __init__(self, policy: Policy) -> None:
        super().__init__(policy)
        # HB's adjacency lists, ranks and acyclicity are built on first use (``__getattr__``): a
        # re-check that takes its ordering proofs from the result cache may never read them.
        self._hb: nx.DiGraph | None = None
        self._reach: ReachIndex | None = None
        self._reach_failed = False

    _ORDER = frozenset({"_preds", "_succs", "_rank", "_acyclic"})  #: set together by ``_order``

    def __getattr__(self, name: str):  # noqa: ANN204 - the attribute's own type
        # Called only when ``name`` is not set: after ``_order`` the attributes are plain ones,
        # so the hot paths (``hb_before``) pay nothing for the laziness.
        if name in PolicyGraph._ORDER:
            self._order()
            return self.__dict__[name]
        raise AttributeError(name)

    def _order(self) -> None:
        """Set ``_preds``/``_succs`` (HB adjacency lists), ``_rank`` (topological ranks, empty
        with a cycle) and ``_acyclic``."""
        self._preds, self._succs = hb_adjacency(self.policy.edges)
        # Whether HB is acyclic, and its topological ranks, are read by every check: computed
        # here, on the adjacency lists the checks read (the networkx graph, ``hb``, is built
        # only for pictures, traces and cycles).
        ranks = topological_ranks(self._preds, self._succs)
        self._acyclic, self._rank = ranks is not None, ranks or []

    # -- happens-before ---------------------------------------------------------------------
    @property
    def hb(self) -> nx.DiGraph:
        """The HB graph as a networkx ``DiGraph`` on edge ids (``a -> b``: ``f(a) <= s(b)``),
        built on first use and kept (pictures, traces, cycles, lowering); the checks read the
        adjacency lists instead."""
        if self._hb is None:
            self._hb = hb_digraph(self._preds)
        return self._hb

    def is_acyclic(self) -> bool:
        """True when HB is a strict partial order (some schedule exists); decided with the HB
        adjacency lists, on first use."""
        return self._acyclic

    def predecessors(self, e: int) -> list[int]:
        """The edges ``e`` waits for directly (an ``after`` clause, or its stream predecessor), in
        the order they were declared; do not modify the list."""
        return self._preds[e]

    def successors(self, e: int) -> list[int]:
        """The edges that wait for ``e`` directly, in the order they were declared; do not
        modify the list."""
        return self._succs[e]

    def cyclic_components(self) -> list[list[int]]:
        """Strongly connected components that contain a cycle, each sorted, in order of their
        smallest edge id."""
        comps = [sorted(c) for c in nx.strongly_connected_components(self.hb)
                 if len(c) > 1 or self.hb.has_edge(next(iter(c)), next(iter(c)))]
        return sorted(comps)

    #: Interval endpoints the reachability index may hold, per edge on average, before it gives
    #: up (a graph whose descendant sets do not compress would need quadratic memory); then
    #: queries fall back to a depth-first search bounded by topological rank.
    _INDEX_BUDGET = 64

    def reach_index(self) -> ReachIndex | None:
        """HB's ``ReachIndex`` (also for searches over many edges at once), built on first use;
        ``None`` on a cyclic HB or when its intervals exceed ``_INDEX_BUDGET`` per edge."""
        if self._reach is None and not self._reach_failed and self.is_acyclic():
            self._reach = interval_index(self._succs, self._preds, self._INDEX_BUDGET * len(self._succs) + 1_000_000)
            self._reach_failed = self._reach is None
        return self._reach

    def indexed(self) -> bool:
        """True when ``hb_before`` is one bisection (``reach_index`` is built), False when it is
        a graph search. Builds the index on first use."""
        return self.reach_index() is not None

    def rank(self, e: int) -> int:
        """Position of edge ``e`` in a fixed topological order of HB (``topological_ranks``,
        computed on first use): an edge can happen-before only edges of higher rank. Raises
        ``IndexError`` when HB is cyclic (no such order exists)."""
        return self._rank[e]

    def ranks(self) -> Sequence[int]:
        """Every edge's ``rank``, by edge id (do not modify), for loops over millions of pairs."""
        return self._rank

    def hb_before_fn(self) -> Callable[[int, int], bool]:
        """``hb_before`` as a function, without its per-call checks when the index is built."""
        return self._reach.before if self.indexed() else self.hb_before  # type: ignore[union-attr]

    def hb_before(self, a: int, b: int) -> bool:
        """True when ``f(a) <= s(b)`` in every schedule, i.e. an HB path leads from ``a`` to ``b``.

        Exact, one bisection in the reachability index (``reach_index``); on a cyclic
        graph, or one whose index exceeded its budget, a graph search."""
        reach = self.reach_index()
        if reach is None:
            return self.hb_path(a, b) is not None
        return reach.before(a, b)

    def hb_path(self, a: int, b: int) -> list[int] | None:
        """Return an HB path ``[a, ..., b]`` (the certificate of ordering), or ``None``: from each
        edge, the first successor (in the order edges were declared) that reaches ``b``.

        O(path length x fan-out) with the reachability index; a depth-first search bounded by
        topological rank without it (the index exceeded its budget), and a networkx search on a
        cyclic graph.
        """
        if a == b:
            return None
        if not self.is_acyclic():
            path = nx.shortest_path(self.hb, a, b) if nx.has_path(self.hb, a, b) else None
            return path
        succs = self._succs
        index = self.reach_index()
        if index is not None:
            if not index.before(a, b):
                return None
            reach, pb = index.reach, index.post[b]
            path = [a]
            n = a
            while n != b:
                # INVARIANT: n reaches b, so some successor is b or reaches it.
                n = next(c for c in succs[n] if bisect.bisect_right(reach[c], pb) & 1)
                path.append(n)
            return path
        rank = self._rank
        rb = rank[b]
        if rb <= rank[a]:
            return None
        seen = {a}
        stack = [(a, 0)]
        while stack:
            n, i = stack[-1]
            kids = succs[n]
            while i < len(kids):
                c = kids[i]
                i += 1
                if c == b:
                    return [v for v, _ in stack] + [b]
                if c not in seen and rank[c] < rb:
                    seen.add(c)
                    break
            else:
                stack.pop()
                continue
            stack[-1] = (n, i)
            stack.append((c, 0))
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



def access_regions(policy: Policy) -> dict[tuple[int, int], list[Region]]:
    """Map each access ``(edge id, position in Edge.accesses())`` to the region instances its
    footprint touches a byte of (exact for strided footprints), whatever region it names:
    regions of one alias set may overlap. An access that touches none is left out; the map's
    order is not defined (its readers look accesses up). Found by a sweep per address space over
    region and footprint starts (O(n log n + the pairs found + the overlaps of the open lists))."""
    out: dict[tuple[int, int], list[Region]] = {}
    # space -> (lo, kind, hi, region or (edge id, position), the footprint when strided): kind 0
    # is a region (sorted before the footprints that start where it does), 1 a footprint
    by_space: dict[str, list[tuple[int, int, int, Region | tuple[int, int], Footprint | None]]] = defaultdict(list)
    for r in policy.regions:
        if r.size > 0:  # an empty region holds no byte to touch (``Footprint.meets``)
            by_space[r.space].append((r.base, 0, r.end, r, None))
    for e in policy.edges:
        eid = e.eid
        for pos, acc in enumerate(e.accesses()):
            fp = acc.footprint
            by_space[fp.space].append((fp.base, 1, fp.hi, (eid, pos), None if fp.count == 1 or fp.stride <= fp.elem else fp))
    # Each event meets the open events of the other kind that end past its start; those started
    # no later than it, so the hulls share a byte, and only a strided footprint needs the exact
    # test (``Footprint.meets``). INVARIANT: footprints are not empty (the resolver rejects a
    # region `size`, a slice's `elem` or `count` below 1), so sharing a hull byte is meeting.
    # A heap of each open list's ends says when one has ended: the list is filtered only then,
    # not at every event (most footprints start where no open region ends).
    for items in by_space.values():
        items.sort(key=lambda t: (t[0], t[1]))
        open_regions: list[Region] = []
        region_ends: list[int] = []  # a heap: the ends of open_regions
        open_fps: list[tuple[int, tuple[int, int], Footprint | None]] = []  # (hi, access, strided footprint)
        fp_ends: list[int] = []  # a heap: the ends of open_fps
        for lo, kind, hi, x, strided in items:
            if kind == 0:
                if fp_ends and fp_ends[0] <= lo:
                    while fp_ends and fp_ends[0] <= lo:
                        heapq.heappop(fp_ends)
                    open_fps = [t for t in open_fps if t[0] > lo]
                for _hi, acc_id, sfp in open_fps:
                    if sfp is None or sfp.meets(lo, hi):
                        out.setdefault(acc_id, []).append(x)
                open_regions.append(x)
                heapq.heappush(region_ends, hi)
            else:
                if region_ends and region_ends[0] <= lo:
                    while region_ends and region_ends[0] <= lo:
                        heapq.heappop(region_ends)
                    open_regions = [r for r in open_regions if r.end > lo]
                if open_regions:
                    got = open_regions if strided is None else [r for r in open_regions if strided.meets(r.base, r.end)]
                    if got:
                        out.setdefault(x, []).extend(got)
                open_fps.append((hi, x, strided))
                heapq.heappush(fp_ends, hi)
    return out


def by_region_uses(policy: Policy, met: dict[tuple[int, int], list[Region]] | None = None) -> dict[str, list[int]]:
    """Map each region instance to the ids of edges that use it, sorted: edges whose footprints
    touch any byte of the region (whatever region they name, since regions of one alias set may
    overlap: ``access_regions``, or ``met`` when given, which must be its result), and edges
    that hand it off, lease it or revoke a lease of it."""
    uses: dict[str, set[int]] = defaultdict(set)
    for e in policy.edges:
        for h in e.handoffs:
            uses[h.region].add(e.eid)
        for ls in e.leases:
            uses[ls.region].add(e.eid)
        for rv in e.revokes:
            uses[rv.region].add(e.eid)
    for (eid, _pos), regions in (access_regions(policy) if met is None else met).items():
        for r in regions:
            uses[r.name].add(eid)
    return {r: sorted(v) for r, v in uses.items()}
