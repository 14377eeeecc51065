"""Soundness and completeness against brute force: on small random graphs (up to 5 edges) the
solver's verdict for every code equals what the concrete simulator finds by enumerating every
schedule. Also: every refutation replays (no FX-INT-001), and pruning never changes a verdict."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fxverify.pipeline import CheckOptions, Status3, discharge, make_backend
from fxverify.simulate import Simulator
from fxverify.smt.backend import SolverOptions

from tests.policies import policies

BACKEND = make_backend(SolverOptions())


def _refuted_codes(policy, prune: bool) -> tuple[set[str], list]:
    verdicts, diags, _ = discharge(policy, CheckOptions(prune=prune), BACKEND)
    assert not [d for d in diags if d.code == "FX-INT-001"], [d.message for d in diags]
    assert all(v.status is not Status3.UNKNOWN for v in verdicts)
    return {v.code for v in verdicts if v.status is Status3.REFUTED}, verdicts


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
    assert [(v.key, v.status) for v in vp] == [(v.key, v.status) for v in vf]
