"""The fabric half of ``PolicyGraph``: which links may carry a transfer's bytes and its writes,
and the one route a transfer can take (specs/obligations.md section 1, links and routes; PCIe Base
Specification, section 2.4.1, for why the requester's own route matters). Takes an
``ir.Policy``; ``FabricRoutes`` memoises every answer. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx

from fxverify.ir import Edge, Link, LinkOrder, Policy, transfer_devices
from fxverify.vocab import NETWORK_KINDS, POSTED_WRITE_KINDS


class FabricRoutes:
    """Fabric paths and transfer routes of one policy, memoised. ``fabric`` is an undirected
    graph of devices whose edges carry the link; the block-cut tree behind ``possible_links`` is
    built on first use."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._link_graphs: dict[str, nx.Graph] = {}
        self.fabric = self.link_graph("all", lambda ln: True)
        self._path_cache: dict[tuple[str, str], list[Link]] = {}
        self._route_cache: dict[tuple[str, str, str], tuple[str, ...] | None] = {}
        self._bct: tuple[nx.Graph, dict[str, tuple], dict[str, tuple]] | None = None

    def link_graph(self, kind: str, allowed: Callable[[Link], bool]) -> nx.Graph:
        """The fabric restricted to links that satisfy ``allowed``, memoised under ``kind``.

        Devices are nodes; two devices joined by an allowed link are adjacent (parallel links make
        one graph edge, labelled with the first; ``possible_links`` reports all of them). Used for
        reachability, never to choose a route.
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

    def possible_links(self, src_dev: str, dst_dev: str) -> list[Link]:
        """Every link that lies on some simple fabric path from ``src_dev`` to ``dst_dev``, in
        declaration order: nothing in a policy says which path the hardware takes, so a transfer
        that pins no route (``via``) has the guarantees of every path (specs/obligations.md
        section 2, routes). ``[]`` for the same device or when no path exists. Memoised.

        A link lies on a simple ``u``-``v`` path exactly when its biconnected component is on the
        path from ``u`` to ``v`` in the block-cut tree (in a 2-connected graph any two vertices
        and any edge lie on a common simple path; Menger's theorem). Parallel links between two
        devices are in the same component. O(devices + links) per pair.
        """
        key = (src_dev, dst_dev)
        hit = self._path_cache.get(key)
        if hit is not None:
            return hit
        out: list[Link] = []
        g = self.fabric
        if src_dev != dst_dev and src_dev in g and dst_dev in g and nx.has_path(g, src_dev, dst_dev):
            tree, block_of_link, home = self._block_cut_tree()
            blocks = {n for n in nx.shortest_path(tree, home[src_dev], home[dst_dev]) if n[0] == "block"}
            out = [ln for ln in self.policy.links if block_of_link[ln.name] in blocks]
        self._path_cache[key] = out
        return out

    def _block_cut_tree(self) -> tuple[nx.Graph, dict[str, tuple], dict[str, tuple]]:
        """The fabric's block-cut tree, the block of every link, and each device's node in it (its
        own cut-vertex node, or the one block that holds it)."""
        if self._bct is None:
            g = self.fabric
            cuts = set(nx.articulation_points(g))
            tree = nx.Graph()
            home: dict[str, tuple] = {d: ("cut", d) for d in cuts}
            block_nodes: list[set[str]] = [set(b) for b in nx.biconnected_components(g)]
            for i, nodes in enumerate(block_nodes):
                tree.add_node(("block", i))
                for d in nodes:
                    if d in cuts:
                        tree.add_edge(("block", i), ("cut", d))
                    else:
                        home[d] = ("block", i)
            where = {frozenset(pair): ("block", i) for i, nodes in enumerate(block_nodes)
                     for pair in g.subgraph(nodes).edges}
            block_of_link = {ln.name: where[frozenset((ln.a, ln.b))] for ln in self.policy.links}
            self._bct = (tree, block_of_link, home)
        return self._bct

    def transfer_endpoints(self, e: Edge) -> tuple[str, str]:
        """Return ``(from_device, to_device)`` of the bytes an edge moves (``ir.transfer_devices``)."""
        sp = self.policy.space
        return transfer_devices(e.device, sp(e.src.space).device if e.src is not None else None,
                                sp(e.dst.space).device if e.dst is not None else None)

    def transfer_links(self, e: Edge) -> list[Link]:
        """The links that may carry an edge's bytes: its pinned route (``via``, in path order), or
        every link on some path between its endpoints (``possible_links``)."""
        if e.via is not None:
            return [self.policy.link(n) for n in e.via]
        return self.possible_links(*self.transfer_endpoints(e))

    def single_route(self, e: Edge) -> tuple[str, ...] | None:
        """The links of the one route that can carry an edge's bytes, in path order from their
        source: its ``via``, or ``only_path`` between its endpoints. ``None`` for several paths,
        none, or a local transfer."""
        return tuple(e.via) if e.via is not None else self.only_path(*self.transfer_endpoints(e))

    def effective_via(self, e: Edge) -> tuple[str, ...] | None:
        """The route, in path order from the source's device, that a transfer is pinned to, in
        effect: its ``via``; or, for a third-party transfer that pins none (its driving device at
        neither end, two different ends), the only simple fabric path between its ends
        (``only_path``) when that path passes through the driver and crosses a network link
        (``vocab.NETWORK_KINDS``) at it: the bytes then reach or leave the driver as network
        packets, so its own engine issues the memory requests on the other side (an RDMA NIC:
        the requester NIC writes an RDMA READ's data into its host, the responder NIC an RDMA
        WRITE's), as if the transfer were pinned to that path. ``None`` otherwise: several paths,
        a path beside the driver, or one that reaches it over memory links only (the driver may
        only have started a transfer that another device's engine makes, as a GPU starts an NVMe
        read the SSD writes into host memory, and whose writes pass the driver, if at all, as
        traffic it forwards: ``write_links``), or a transfer the driver joins at one end
        (``single_route`` then gives its one route). specs/obligations.md section 1, links and
        routes. Raises nothing."""
        if e.via is not None:
            return tuple(e.via)
        u, v = self.transfer_endpoints(e)
        if u == v or e.device in (u, v):
            return None
        path = self.only_path(u, v)
        if path is None:
            return None
        seen = self._walk(u, path)
        if e.device not in seen:
            return None
        k = seen.index(e.device)  # the path enters the driver over path[k - 1] and leaves over path[k]
        return path if any(self.policy.link(n).kind in NETWORK_KINDS for n in path[max(0, k - 1):k + 1]) else None

    def _walk(self, start: str, route: tuple[str, ...]) -> list[str]:
        """The devices a route (link names, in path order) visits from device ``start``, in order."""
        at, seen = start, [start]
        for name in route:
            ln = self.policy.link(name)
            at = ln.b if at == ln.a else ln.a
            seen.append(at)
        return seen

    def leg_route(self, e: Edge, home: str) -> tuple[str, ...] | None:
        """The links of the one route that carries the traffic between ``e``'s driving device and
        device ``home``, in path order from the driver: ``single_route`` when the transfer joins
        the two; ``only_path`` between the two for a copy inside ``home``'s memory that the
        driver's engine makes (its writes cross only those links: ``write_links``); for a
        third-party transfer pinned with ``via`` (its route runs through the driver: FX-TYP-006),
        the part of that route between the driver and ``home``, one of its ends: the pin states
        that the driver's engine sends the read requests to the source and the writes to the
        destination itself (PCIe: the requester is the device that sends the request); the same
        for a third-party transfer that pins no route but whose ends have only one path, through
        the driver, crossing a network link at it (``effective_via``). ``None`` otherwise:
        several paths, any other third-party transfer that pins no route (the driver may only have
        started another engine's transfer, whose writes may cross the links between its ends:
        ``write_links``), a route that misses the driver (which the resolver refuses, FX-TYP-006,
        but an edit a hint proposes may not), or ``home`` at neither end. Raises nothing."""
        d, (u, v) = e.device, self.transfer_endpoints(e)
        if {u, v} == {d, home}:
            one = self.single_route(e)
            return None if one is None else (one if u == d else one[::-1])
        if u == v == home != d:  # a copy inside ``home``'s memory: in to ``d`` and out again, no via
            return self.only_path(d, home) if e.via is None else None
        if u == v or d in (u, v) or home not in (u, v):
            return None
        via = self.effective_via(e)
        if via is None:
            return None
        seen = self._walk(u, via)  # ``via`` is a path from ``u`` to ``v`` (FX-TYP-006)
        if d not in seen:
            return None
        k = seen.index(d)
        return tuple(via[k:]) if home == v else tuple(reversed(via[:k]))

    def only_path(self, src: str, dst: str) -> tuple[str, ...] | None:
        """The links of the only simple fabric path from device ``src`` to ``dst``, in path order
        (the links of ``possible_links`` each lie on a simple path, so there is one exactly when
        they form a tree: ``links == devices - 1``); ``None`` for several paths, none, or
        ``src == dst``. Memoised."""
        if ("route", src, dst) not in self._route_cache:
            links, names, at = self.possible_links(src, dst), [], src
            if links and len(links) == len({d for ln in links for d in (ln.a, ln.b)}) - 1:
                while at != dst:  # INVARIANT: the links form a path from src to dst
                    ln = next(x for x in links if at in (x.a, x.b) and x.name not in names)
                    names.append(ln.name)
                    at = ln.b if at == ln.a else ln.a
            self._route_cache[("route", src, dst)] = tuple(names) or None
        return self._route_cache[("route", src, dst)]

    def write_links(self, e: Edge) -> list[Link]:
        """The links that may carry an edge's writes, in declaration order: ``transfer_links``, and
        for a third-party transfer that pins no route every link from the driver to the
        destination's device too (``driver_legs``: PCIe's requester of a memory write is the
        device that sends it, which may be the driver or another engine it started); for a
        third-party transfer pinned with ``via``, or whose ends have only one path, through the
        driver and crossing a network link at it (``effective_via``), only the part of
        its route from the driver to the destination's device (``leg_route``: the links before
        the driver carry the bytes in to it as read completions, not as writes); none for a pull
        (``is_pull``); every ``via`` link for a route that misses the driver (refused by the
        resolver, FX-TYP-006, but possible in an edit a hint proposes). specs/obligations.md
        section 1, posted rule."""
        # INVARIANT: this reads only ``e``'s driver, its route, its endpoints' devices and which
        # of source and destination it has; ``posted._posted_links`` memoises on exactly those.
        if self.is_pull(e):
            return []
        src, dst = self.transfer_endpoints(e)
        leg = self.leg_route(e, dst) if e.device not in (src, dst) and self.effective_via(e) is not None else None
        if leg is not None:
            return [ln for ln in self.policy.links if ln.name in leg]
        links, legs = self.transfer_links(e), self.driver_legs(e)
        if legs is None:
            return links
        names = {ln.name for ln in links} | {ln.name for ln in self.possible_links(*legs[1])}
        return [ln for ln in self.policy.links if ln.name in names]

    def writes_between_ends(self, e: Edge) -> bool:
        """True when ``e`` is a third-party transfer (two different ends, its driver at neither)
        that pins no route and is not pinned in effect (``effective_via``): its writes may cross
        the links between its ends (``write_links``), so it has no one route to its bytes."""
        u, v = self.transfer_endpoints(e)
        return e.via is None and u != v and e.device not in (u, v) and self.effective_via(e) is None

    def driver_legs(self, e: Edge) -> tuple[tuple[str, str], tuple[str, str]] | None:
        """``((source's device, driver), (driver, destination's device))``, the legs through the
        driver's engine of a transfer that pins no route and whose driver is at neither end (a
        third-party DMA, a copy inside one remote memory); else ``None`` (specs section 1)."""
        src, dst = self.transfer_endpoints(e)
        return ((src, e.device), (e.device, dst)) if e.via is None and e.device not in (src, dst) else None

    def is_pull(self, e: Edge) -> bool:
        """True for a ``move`` or ``reduce`` its destination's device drives from another device's
        memory (an NVMe controller fetching a write's data, a copy engine reading host memory):
        the bytes come as completions of its reads (PCIe: a memory read is non-posted) and it
        writes only its own memory, so no write crosses a link (specs section 1, posted rule)."""
        src, dst = self.transfer_endpoints(e)
        return e.src is not None and e.dst is not None and e.device == dst != src

    def posted_links(self, e: Edge) -> list[Link]:
        """Return the posted links that may carry an edge's writes (``write_links``; empty when
        none), ``is_posted``: a reader on another device needs a flush of each (FX-ORD-003)."""
        return [ln for ln in self.write_links(e) if is_posted(ln)]


def is_posted(ln: Link) -> bool:
    """True when a write over link ``ln`` completes at its sender before it is visible: a link
    declared ``posted``, or one of a kind whose writes are posted whatever its declared order
    (``vocab.POSTED_WRITE_KINDS``: a ``pcie`` link declared ``unordered``, Relaxed Ordering on).
    FX-ORD-003, specs/obligations.md section 1, posted rule."""
    return ln.order is LinkOrder.POSTED or (ln.order is LinkOrder.UNORDERED and ln.kind in POSTED_WRITE_KINDS)
