"""Soundness and completeness against brute force: on small random graphs (up to 5 edges) the
solver's verdict for every code equals what the concrete simulator finds by enumerating every
schedule, and every violation the simulator finds is blamed on its edges by a refuted obligation
of its code (so a refutation elsewhere cannot hide a proof that should have failed). Also: every
refutation replays (no FX-INT-001), and pruning never changes a verdict."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fxverify.diagnostics import codes
from fxverify.pipeline import CheckOptions, discharge
from fxverify.replay.simulate import Simulator
from fxverify.result import CheckResult, Verdict
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend

from tests.policies import policies

BACKEND = open_backend(SolverOptions())


def _check(policy, prune: bool) -> CheckResult:
    r = discharge(policy, CheckOptions(prune=prune), BACKEND)
    assert not [d for d in r.diagnostics if d.code is codes.INT_001], [d.message for d in r.diagnostics]
    assert all(v.verdict is not Verdict.UNKNOWN for v in r.outcomes)
    return r


def _refuted_codes(policy, prune: bool) -> tuple[set[str], list]:
    r = _check(policy, prune)
    return {v.code for v in r.outcomes if v.verdict is Verdict.REFUTED}, list(r.outcomes)


def agreement(policy) -> tuple[int, int]:
    """Compare the checker with brute force on ``policy``: the refuted codes equal the codes the
    simulator finds in some schedule, and every ``(code, edges)`` violation it finds is blamed on
    those edges by a refuted obligation of that code. Raises ``AssertionError`` naming the first
    disagreement; returns ``(obligations, violations compared)``. Shared with ``bench/``."""
    brute = Simulator(policy).explore_violations()
    r = _check(policy, prune=False)
    smt = {v.code for v in r.outcomes if v.verdict is Verdict.REFUTED}
    assert smt == {code for code, _ in brute}, f"solver {sorted(smt)} vs brute force {sorted(brute)}"
    for code, edges in sorted(brute):
        blamed = [ref for ref in r.refutations if ref.code == code and set(edges) <= set(ref.edges)]
        names = [policy.edges[e].name for e in edges]
        assert blamed, f"brute force finds {code} on {names}; no refuted obligation blames them: {[x.key for x in r.refutations]}"
    return len(r.outcomes), len(brute)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(max_edges=5))
def test_solver_agrees_with_brute_force(policy):
    agreement(policy)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(max_edges=5))
def test_pruning_never_changes_a_verdict(policy):
    pruned, vp = _refuted_codes(policy, prune=True)
    full, vf = _refuted_codes(policy, prune=False)
    assert [(v.key, v.verdict) for v in vp] == [(v.key, v.verdict) for v in vf]
