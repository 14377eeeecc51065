"""The access-history sweep (``obligations.history``) proves only real orderings: every FX-ORD-002
pair a per-access obligation (``RaceFree``) stands for is HB-ordered, earlier access first, on
flows large enough to hold several writers and readers per byte range; every conflicting pair is
covered exactly once, by a ``RaceFree`` or by its own ``Race``; and on a totally ordered flow
every pair is covered per access, so the sweep is not vacuous. Its verdicts are
compared with the solver's in tests/test_sim_vs_smt.py (pruning never changes a verdict)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from fxverify.graph import PolicyGraph
from fxverify.obligations import ordering
from fxverify.obligations.base import Context, conflict_kind
from fxverify.obligations.pairs import overlapping_pairs

from tests.ir_builders import A, policy, read, whole, write
from tests.policies import reuse_policies


def _races(policy, indexed: bool = True) -> tuple[Context, list[ordering.Race], list[ordering.RaceFree]]:
    """The FX-ORD-002 obligations of ``policy``: with ``indexed``, HB order asked of the
    reachability index pair by pair; without, as when the index is over its budget, the access
    history's sweep (``history.after_all``) proves most pairs."""
    g = PolicyGraph(policy)
    if not indexed:
        g.indexed = lambda: False  # as over its budget: ``races.generate`` runs the sweep
    ctx = Context(policy, g)
    obs = list(ordering.generate(ctx))
    return (ctx, [ob for ob in obs if isinstance(ob, ordering.Race)],
            [ob for ob in obs if isinstance(ob, ordering.RaceFree)])


def _covered(races: list[ordering.Race], free: list[ordering.RaceFree]) -> list[tuple[int, int, int, int]]:
    """Every access pair the obligations cover, ``(a, pa, b, pb)`` with ``a < b``."""
    pairs = []
    for r in races:
        (_na, pa), (_nb, pb) = (ref.split(":", 1)[-1].rsplit("#", 1) for ref in r.key.split("|"))
        pairs.append((r.edges[0], int(pa), r.edges[1], int(pb)))
    for ob in free:
        x = ob.edges[0]
        for e, p in ob.earlier:
            pairs.append((e, p, x, ob.pos) if e < x else (x, ob.pos, e, p))
    return pairs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=40, max_edges=160))
def test_the_sweep_proves_only_ordered_pairs(policy) -> None:
    ctx, races, free = _races(policy, indexed=False)
    if not ctx.graph.is_acyclic():
        return
    for ob in free:
        assert all(ctx.graph.hb_before(e, ob.edges[0]) for e, _p in ob.earlier), ob.key
    # every conflicting pair of the pairwise check is covered, once
    pairs = sorted((a, pa, b, pb) for a, pa, b, pb in overlapping_pairs(ctx)
                   if conflict_kind(ctx.edge(a).accesses()[pa], ctx.edge(b).accesses()[pb]) == "race")
    assert sorted(_covered(races, free)) == pairs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=40, max_edges=120))
def test_on_one_stream_the_sweep_proves_every_pair(policy) -> None:
    one = replace(policy, edges=tuple(replace(e, stream="s0") for e in policy.edges), _index={})
    _ctx, races, free = _races(one, indexed=False)
    assert not races
    assert len(free) <= sum(len(e.accesses()) for e in one.edges)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=40, max_edges=160))
def test_the_index_and_the_sweep_give_the_same_obligations(policy) -> None:
    """With the reachability index, ``races.generate`` asks it pair by pair and skips the sweep;
    the obligations (kinds, keys, the earlier accesses of each ``RaceFree``) are those the sweep
    gives, and each pair a ``RaceFree`` stands for is HB-ordered."""
    ctx, races, free = _races(policy)
    if not ctx.graph.is_acyclic():
        return
    assert ctx.graph.indexed()
    _ctx, races2, free2 = _races(policy, indexed=False)
    assert [r.key for r in races] == [r.key for r in races2]
    assert [(ob.key, ob.earlier) for ob in free] == [(ob.key, ob.earlier) for ob in free2]
    for ob in free:
        assert all(ctx.graph.hb_before(e, ob.edges[0]) for e, _p in ob.earlier), ob.key


@pytest.mark.parametrize("layers", [2, 4, 8])
def test_a_buffer_every_layer_reuses_costs_obligations_per_access(layers: int) -> None:
    """A scratch buffer that every layer writes and then reads, each layer after the last: the
    conflicting pairs grow with the square of the layers (every write against every earlier
    write and read), the FX-ORD-002 obligations with the accesses (one per access after the
    first), and each stands for exactly its earlier conflicting accesses. On the pairwise
    generation this count was the pair count."""
    edges = []
    for i in range(layers):
        edges.append(write(f"w{i}", whole(A), after=(f"r{i - 1}",) if i else ()))
        edges.append(read(f"r{i}", whole(A), after=(f"w{i}",)))
    ctx, races, free = _races(policy(*edges))
    pairs = [(a, b) for a, _pa, b, _pb in overlapping_pairs(ctx)
             if conflict_kind(ctx.edge(a).accesses()[0], ctx.edge(b).accesses()[0]) == "race"]
    assert not races
    assert len(free) == 2 * layers - 1
    assert len(pairs) == sum(len(ob.earlier) for ob in free) == layers * (layers - 1) * 3 // 2 + layers
