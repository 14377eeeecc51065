"""The networkx view: happens-before paths (the certificates of ordering) and fabric routes."""

from __future__ import annotations

import random
from dataclasses import replace

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxverify.graph import PolicyGraph, access_regions, by_region_uses
from fxverify.ir import AccessMode, Device, Edge, Footprint, Link, LinkOrder, Policy, Region
from fxverify.obligations import context
from fxverify.obligations.base import Context
from fxverify.vocab import DeviceKind

from tests.policies import DEVICES, MAPS, REGIONS, SPACES


def _policy(edges: list[Edge], links: tuple[Link, ...] = ()) -> Policy:
    return Policy("g", "g.fx", DEVICES, links, SPACES, REGIONS, (), MAPS, tuple(edges))


def _e(i: int, after: tuple[str, ...] = (), stream: str | None = None, dev: str = "gpu0") -> Edge:
    return Edge(i, f"e{i}", f"e{i}", "write", dev, "launch", dst=Footprint("a", "hbm0", 0, 8, 8, 1),
                after=after, stream=stream)


def test_hb_path_is_a_certificate() -> None:
    g = PolicyGraph(_policy([_e(0), _e(1, ("e0",)), _e(2, ("e1",)), _e(3)]))
    assert g.hb_path(0, 2) == [0, 1, 2]
    assert g.hb_before(0, 2) and not g.hb_before(2, 0)
    assert not g.ordered(0, 3) and g.hb_path(3, 0) is None


def test_streams_order_their_edges_in_declaration_order() -> None:
    g = PolicyGraph(_policy([_e(0, stream="s"), _e(1), _e(2, stream="s"), _e(3, stream="s", dev="dpu0")]))
    assert g.hb_before(0, 2) and not g.ordered(0, 1) and not g.ordered(2, 3)


def test_cycles_are_reported_and_reachability_still_answers() -> None:
    g = PolicyGraph(_policy([_e(0, ("e1",)), _e(1, ("e0",)), _e(2)]))
    assert not g.is_acyclic()
    assert g.cyclic_components() == [[0, 1]]
    assert g.hb_before(0, 1) and g.hb_before(1, 0)


def test_possible_links_are_those_on_some_simple_path() -> None:
    # A triangle gpu0-dpu0-cxl0 with a parallel link, and a spur cxl0-sw0-nic0 off it.
    links = (Link("gpu0--dpu0", "gpu0", "dpu0", "pcie", LinkOrder.POSTED),
             Link("gpu0--cxl0", "gpu0", "cxl0", "cxl", LinkOrder.ORDERED),
             Link("dpu0--cxl0", "dpu0", "cxl0", "cxl", LinkOrder.ORDERED),
             Link("nv0", "gpu0", "dpu0", "nvlink", LinkOrder.ORDERED),
             Link("cxl0--sw0", "cxl0", "sw0", "pcie", LinkOrder.ORDERED),
             Link("sw0--nic0", "sw0", "nic0", "pcie", LinkOrder.ORDERED))
    devices = DEVICES + (Device("sw0", DeviceKind.PCIE_SWITCH, ("route",)), Device("nic0", DeviceKind.NIC, ("tx",)))
    pol = replace(_policy([_e(0)], links), devices=devices, _index={})
    g = PolicyGraph(pol)
    names = lambda a, b: [ln.name for ln in g.possible_links(a, b)]  # noqa: E731
    # Between two triangle devices every triangle link lies on a simple path; the spur on none.
    assert names("gpu0", "dpu0") == ["gpu0--dpu0", "gpu0--cxl0", "dpu0--cxl0", "nv0"]
    # From the triangle to the spur: the triangle, then the spur's bridges.
    assert names("gpu0", "nic0") == [ln.name for ln in links]
    # Inside the spur only its own bridges.
    assert names("cxl0", "nic0") == ["cxl0--sw0", "sw0--nic0"]
    assert names("gpu0", "gpu0") == []
    assert PolicyGraph(_policy([_e(0)], links[:1])).possible_links("gpu0", "cxl0") == []
    # The same sets whatever the declaration order.
    g2 = PolicyGraph(replace(pol, links=tuple(reversed(links)), _index={}))
    for a, b in (("gpu0", "dpu0"), ("gpu0", "nic0"), ("cxl0", "nic0")):
        assert {ln.name for ln in g2.possible_links(a, b)} == set(names(a, b))


def test_single_route_is_the_only_simple_path_or_the_pinned_one() -> None:
    """``single_route`` (the same-requester rule of FX-ORD-003): a chain of bridges is one route,
    in path order from the transfer's source; a parallel link or a cycle makes several; a `via`
    route is the route whatever the fabric."""
    chain = (Link("up", "cxl0", "sw0", "pcie", LinkOrder.POSTED), Link("down", "gpu0", "sw0", "pcie", LinkOrder.ORDERED))
    devices = DEVICES + (Device("sw0", DeviceKind.PCIE_SWITCH, ("route",)),)
    w = Edge(0, "w", "w", "write", "gpu0", "launch", dst=Footprint("c", "hdm0", 0x8000, 8, 8, 1))
    r = Edge(1, "r", "r", "read", "gpu0", "launch", src=Footprint("c", "hdm0", 0x8000, 8, 8, 1))
    pol = replace(_policy([w, r], chain), devices=devices, _index={})
    g = PolicyGraph(pol)
    assert g.single_route(w) == ("down", "up") and g.single_route(r) == ("up", "down")
    both = chain + (Link("nv", "gpu0", "cxl0", "nvlink", LinkOrder.ORDERED),)
    g2 = PolicyGraph(replace(pol, links=both, _index={}))
    assert g2.single_route(w) is None
    assert g2.single_route(replace(w, via=("nv",))) == ("nv",)
    parallel = chain + (Link("down2", "gpu0", "sw0", "pcie", LinkOrder.ORDERED),)
    assert PolicyGraph(replace(pol, links=parallel, _index={})).single_route(w) is None
    local = Edge(2, "l", "l", "write", "gpu0", "launch", dst=Footprint("a", "hbm0", 0, 8, 8, 1))
    assert g.single_route(local) is None


def test_region_uses_follow_bytes_not_names() -> None:
    # `b` and `d` overlap at 384..448; a write through `b` there uses `d` too.
    e = Edge(0, "w", "w", "write", "gpu0", "launch", dst=Footprint("b", "hbm0", 400, 8, 8, 1))
    uses = by_region_uses(_policy([e]))
    assert uses["b"] == [0] and uses["d"] == [0] and "a" not in uses


@pytest.mark.parametrize("seed", range(6))
def test_reachability_index_is_exact(seed: int) -> None:
    """``hb_before`` (the interval index) agrees with a graph search on every ordered pair of
    random layered DAGs with wide fan-outs, and ``hb_path`` is a real HB path exactly when it
    does; with the index over its budget the search fallback gives the same answers."""
    rng = random.Random(seed)
    n = 40
    edges = []
    for i in range(n):
        preds = sorted({f"e{rng.randrange(i)}" for _ in range(rng.randrange(4))}) if i else []
        edges.append(_e(i, tuple(preds), stream="s" if rng.random() < 0.2 else None))
    g = PolicyGraph(_policy(edges))
    small = PolicyGraph(_policy(edges))
    small._INDEX_BUDGET = -10**9  # the index gives up at once: queries search the graph
    fast, slow = g.hb_before_fn(), small.hb_before_fn()
    for a in range(n):
        for b in range(n):
            want = a != b and nx.has_path(g.hb, a, b)
            assert g.hb_before(a, b) is want and small.hb_before(a, b) is want
            assert fast(a, b) is want and slow(a, b) is want
            for p in (g.hb_path(a, b), small.hb_path(a, b)):
                assert (p is not None) is want
                if p is not None:
                    assert p[0] == a and p[-1] == b and all(g.hb.has_edge(x, y) for x, y in zip(p, p[1:]))
    assert g._reach is not None and small._reach is None
    assert g.indexed() and not small.indexed() and slow == small.hb_before


@pytest.mark.parametrize("seed", range(6))
def test_the_index_searches_many_edges_as_hb_queries_would(seed: int) -> None:
    """``ReachIndex.after_among`` and ``reaches_any`` (the projected schedule's searches over a
    query's primaries) against ``hb_before`` of every edge of random subsets of random DAGs: the
    same edges, none twice, and ``reach_index`` is ``None`` when the index gave up."""
    rng = random.Random(seed)
    n = 40
    edges = []
    for i in range(n):
        preds = sorted({f"e{rng.randrange(i)}" for _ in range(rng.randrange(4))}) if i else []
        edges.append(_e(i, tuple(preds)))
    g = PolicyGraph(_policy(edges))
    index = g.reach_index()
    assert index is not None
    for _ in range(20):
        among = rng.sample(range(n), rng.randrange(1, n))
        searchable = index.by_post(among)
        for a in range(n):
            after = index.after_among(a, searchable)
            assert sorted(after) == sorted(b for b in among if g.hb_before(a, b)) and len(set(after)) == len(after)
            assert index.reaches_any(a, searchable) is (a in among or any(g.hb_before(a, b) for b in among))
    small = PolicyGraph(_policy(edges))
    small._INDEX_BUDGET = -10**9
    assert small.reach_index() is None


def _networkx_hb(policy: Policy) -> nx.DiGraph:
    """The HB graph as networkx builds it from the clauses, edge by edge (the reference)."""
    hb = nx.DiGraph()
    hb.add_nodes_from(range(len(policy.edges)))
    last: dict[tuple[str, str], int] = {}
    for e in policy.edges:
        for name in e.after:
            hb.add_edge(policy.edge(name).eid, e.eid)
        if e.stream is not None:
            if (e.device, e.stream) in last:
                hb.add_edge(last[(e.device, e.stream)], e.eid)
            last[(e.device, e.stream)] = e.eid
    return hb


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_adjacency_and_ranks_are_those_of_networkx(data: st.DataObject) -> None:
    """``hb_adjacency`` and ``topological_ranks`` give the adjacency orders, acyclicity and the
    topological order of networkx's graph of the same clauses (``topological_sort``), on random
    flows with repeated and self references, later references (cycles) and two streams."""
    n = data.draw(st.integers(1, 14))
    edges = []
    for i in range(n):
        refs = data.draw(st.lists(st.integers(0, n - 1), max_size=4))
        if data.draw(st.booleans()):
            refs = [r for r in refs if r < i]  # most flows are acyclic
        edges.append(_e(i, tuple(f"e{r}" for r in refs), stream=data.draw(st.sampled_from([None, "s", "t"])),
                        dev=data.draw(st.sampled_from(["gpu0", "gpu1"]))))
    pol = _policy(edges)
    g, ref = PolicyGraph(pol), _networkx_hb(pol)
    assert g._preds == [list(ref.predecessors(i)) for i in range(n)]
    assert g._succs == [list(ref.successors(i)) for i in range(n)]
    assert list(g.hb.edges) == list(ref.edges)
    try:
        order = list(nx.topological_sort(ref))
    except nx.NetworkXUnfeasible:
        assert not g.is_acyclic()
        return
    assert g.is_acyclic() and sorted(range(n), key=g.rank) == order


def test_hb_node_labels_fold_device_runs() -> None:
    """An 8-GPU family's node says `gpu0..gpu7.launch (8 devices)`, not eight hooks on one line that
    runs past the node; other lists are wrapped after commas."""
    from fxverify.views.families import LINE_CHARS, hooks_lines

    assert hooks_lines("read", [(f"gpu{i}", "launch") for i in range(8)]) == ["read by gpu0..gpu7.launch (8 devices)"]
    assert hooks_lines("move", [(f"nic{i}", "tx") for i in (0, 1, 2, 4)]) == ["move by nic0..nic2.tx, nic4.tx"]
    mixed = hooks_lines("read, write", [("gpu0", "launch"), ("cpu0", "run"), ("dpu0", "dma_done"), ("gpu1", "launch")])
    assert mixed == ["read, write by dpu0.dma_done, gpu0.launch,", "gpu1.launch, cpu0.run"]
    assert all(len(ln) <= LINE_CHARS for ln in mixed)


def test_the_networkx_hb_graph_is_rebuilt_in_declaration_order() -> None:
    """The checks read the adjacency lists, and ``hb`` rebuilds the networkx graph (dropped once
    the graph is built) on demand: its adjacency is the same, in the same order, so searches and
    pictures that follow it do not change."""
    edges = [_e(0, stream="s"), _e(1, ("e0",)), _e(2, ("e1", "e0"), stream="s"), _e(3, ("e2", "e2")), _e(4, stream="s")]
    g = PolicyGraph(_policy(edges))
    assert g._hb is None
    assert [g.predecessors(i) for i in range(5)] == [[], [0], [1, 0], [2], [2]]
    assert [list(g.hb.predecessors(i)) for i in range(5)] == [g.predecessors(i) for i in range(5)]
    assert [list(g.hb.successors(i)) for i in range(5)] == [g.successors(i) for i in range(5)]
    assert g.is_acyclic() and [g.rank(i) for i in range(5)] == [0, 1, 2, 3, 4]


def _touched_by_brute_force(pol: Policy) -> dict[int, dict[str, bool]]:
    """``Context.touched`` by its definition, every access against every region: the regions an
    access meets, minus those a strictly smaller region nested in them and meeting the same
    clipped bytes speaks for."""
    out: dict[int, dict[str, bool]] = {}
    for e in pol.edges:
        for a in e.accesses():
            fp = a.footprint
            met = [r for r in pol.regions if r.space == fp.space and fp.meets(r.base, r.end)]
            clip = {r.name: (max(fp.lo, r.base), min(fp.hi, r.end)) for r in met}
            for r in met:
                if not any(q.size < r.size and r.base <= q.base and q.end <= r.end and clip[q.name] == clip[r.name] for q in met):
                    got = out.setdefault(e.eid, {})
                    got[r.name] = got.get(r.name, False) or a.mode is not AccessMode.READ
    return out


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_access_regions_and_touched_match_brute_force(data: st.DataObject) -> None:
    """``access_regions`` (a sweep) gives exactly the regions each access meets byte for byte,
    ``by_region_uses`` the edges of each, and ``Context.touched`` built on them equals its
    definition, on random regions (nested, overlapping, equal, empty) and random contiguous and
    strided footprints in two spaces."""
    spaces = ("hbm0", "ddr0")
    regions = []
    for i in range(data.draw(st.integers(1, 8))):
        if regions and data.draw(st.integers(0, 3)) == 0:  # the same bytes as the last one: a tie
            space, base, size = regions[-1].space, regions[-1].base, regions[-1].size
        else:
            space, base = data.draw(st.sampled_from(spaces)), data.draw(st.sampled_from([0, 8, 16, 32, 64]) | st.integers(0, 96))
            size = data.draw(st.sampled_from([0, 1, 4, 8, 16, 32, 64]))
        regions.append(Region(f"r{i}", f"r{i}", space, base, size, "gpu0"))
    edges = []
    for i in range(data.draw(st.integers(1, 8))):
        foot = []
        for _ in range(2):
            elem, count = data.draw(st.integers(1, 16)), data.draw(st.integers(1, 4))
            stride = data.draw(st.integers(elem, 3 * elem)) if count > 1 else elem
            foot.append(Footprint("r0", data.draw(st.sampled_from(spaces)), data.draw(st.integers(0, 120)), elem, stride, count))
        action = data.draw(st.sampled_from(["read", "write", "move"]))
        src, dst = (foot[0], None) if action == "read" else (None, foot[1]) if action == "write" else (foot[0], foot[1])
        edges.append(Edge(i, f"e{i}", f"e{i}", action, "gpu0", "launch", src=src, dst=dst))
    pol = Policy("g", "g.fx", DEVICES, (), SPACES, tuple(regions), (), MAPS, tuple(edges))
    met = access_regions(pol)
    for e in edges:
        for pos, a in enumerate(e.accesses()):
            fp = a.footprint
            want = sorted(r.name for r in regions if r.space == fp.space and fp.meets(r.base, r.end))
            assert sorted(r.name for r in met.get((e.eid, pos), [])) == want
    uses = by_region_uses(pol)
    assert uses == {r: sorted({eid for (eid, _p), rs in met.items() if any(x.name == r for x in rs)})
                    for r in {x.name for rs in met.values() for x in rs}}
    assert Context(pol, PolicyGraph(pol)).touched() == _touched_by_brute_force(pol)


def test_the_lazy_indexes_are_exactly_those_the_context_builds() -> None:
    """``context._OWNERSHIP`` names exactly the attributes ``Context._index`` sets, and ``context._EVENTS``
    those ``Context._events`` sets: a read of any of them builds its group and no other, and any
    other missing attribute is an ``AttributeError``."""
    for build, group in (("_index", context._OWNERSHIP), ("_events", context._EVENTS)):
        ctx = Context(_policy([_e(0)]), PolicyGraph(_policy([_e(0)])))
        before = set(vars(ctx))
        getattr(ctx, build)()
        assert set(vars(ctx)) - before == group
        fresh = Context(_policy([_e(0)]), PolicyGraph(_policy([_e(0)])))
        getattr(fresh, sorted(group)[0])
        assert set(vars(fresh)) - before == group
    with pytest.raises(AttributeError):
        _ = Context(_policy([_e(0)]), PolicyGraph(_policy([_e(0)]))).handof
