"""The access-history sweep (``obligations.history``) proves only real orderings: every FX-ORD-002
pair it marks is HB-ordered, on flows large enough to hold several writers and readers per byte
range; and on a totally ordered flow it proves every pair, so it is not vacuous. Its verdicts are
compared with the solver's in tests/test_sim_vs_smt.py (pruning never changes a verdict)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings

from fxverify.graph import PolicyGraph
from fxverify.obligations import ordering
from fxverify.obligations.base import Context, overlapping_pairs

from tests.policies import reuse_policies


def _races(policy) -> tuple[Context, list[ordering.Race]]:
    ctx = Context(policy, PolicyGraph(policy))
    return ctx, [ob for ob in ordering.generate(ctx) if isinstance(ob, ordering.Race)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=40, max_edges=160))
def test_the_sweep_proves_only_ordered_pairs(policy) -> None:
    ctx, races = _races(policy)
    if not ctx.graph.is_acyclic():
        return
    for ob in races:
        if ob.swept:
            assert ctx.graph.ordered(*ob.edges), ob.key
    # every pair of the pairwise check is still an obligation
    pairs = sum(1 for a, pa, b, pb in overlapping_pairs(ctx)
                if ordering.conflict_kind(ctx.edge(a).accesses()[pa], ctx.edge(b).accesses()[pb]) == "race")
    assert len(races) == pairs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=40, max_edges=120))
def test_on_one_stream_the_sweep_proves_every_pair(policy) -> None:
    one = replace(policy, edges=tuple(replace(e, stream="s0") for e in policy.edges), _index={})
    _ctx, races = _races(one)
    assert all(ob.swept for ob in races)
