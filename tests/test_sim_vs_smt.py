"""Soundness and completeness against brute force: on small random graphs (up to 5 edges) the
solver's verdict for every code equals what the concrete simulator finds by enumerating every
schedule. Also: every refutation replays (no FX-INT-001), and pruning never changes a verdict."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fxverify.diagnostics import codes
from fxverify.pipeline import CheckOptions, discharge
from fxverify.replay.simulate import Simulator
from fxverify.result import Verdict
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend

from tests.policies import policies

BACKEND = open_backend(SolverOptions())


def _refuted_codes(policy, prune: bool) -> tuple[set[str], list]:
    r = discharge(policy, CheckOptions(prune=prune), BACKEND)
    assert not [d for d in r.diagnostics if d.code is codes.INT_001], [d.message for d in r.diagnostics]
    assert all(v.verdict is not Verdict.UNKNOWN for v in r.outcomes)
    return {v.code for v in r.outcomes if v.verdict is Verdict.REFUTED}, list(r.outcomes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(max_edges=5))
def test_solver_agrees_with_brute_force(policy):
    brute = Simulator(policy).explore()
    smt, _ = _refuted_codes(policy, prune=False)
    assert smt == brute, f"solver {sorted(smt)} vs brute force {sorted(brute)}"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(max_edges=5))
def test_pruning_never_changes_a_verdict(policy):
    pruned, vp = _refuted_codes(policy, prune=True)
    full, vf = _refuted_codes(policy, prune=False)
    assert [(v.key, v.verdict) for v in vp] == [(v.key, v.verdict) for v in vf]
