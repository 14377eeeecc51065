"""Checked guesses (``Obligation.guess``): a model made from the IR, accepted only when it
satisfies every assertion of the obligation's query (``Query.model_of``). A refutation by a guess
must be one the solver agrees with, a guess that fails an assertion must leave the obligation to
the solver, and the common byte a race guess picks must be one both footprints hold."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from fxverify.grouping import group_instances
from fxverify.ir import Footprint, Policy
from fxverify.obligations.base import Obligation
from fxverify.obligations.defined import Unwritten
from fxverify.obligations.families import generate
from fxverify.obligations.lifetimes import OutsideAllocation
from fxverify.obligations.races import Race
from fxverify.pipeline import GUESSED, CheckOptions, check, discharge
from fxverify.result import Verdict
from fxverify.smt.backend import Query, SolverOptions, Status
from fxverify.smt.factory import open_backend
from fxverify.smt.terms import eq, free_vars, int_var, satisfies

from tests.conftest import ROOT
from tests.ir_builders import A, policy, whole, write
from tests.policies import lifetime_policies, policies, pool_chain_policies, reuse_policies


@st.composite
def _footprints(draw) -> Footprint:
    elem = draw(st.integers(1, 6))
    return Footprint("r", "s", draw(st.integers(0, 40)), elem, draw(st.integers(1, 12)), draw(st.integers(1, 6)))


@settings(max_examples=500, deadline=None)
@given(_footprints(), _footprints())
def test_the_shared_byte_is_the_lowest_byte_both_footprints_hold(a, b) -> None:
    """``Footprint.shared_byte`` against every byte: strided footprints interleave, so a common
    byte of the hulls is often in neither, or in one only."""
    both = [x for x in range(min(a.lo, b.lo), max(a.hi, b.hi)) if a.contains(x) and b.contains(x)]
    assert a.shared_byte(b) == (both[0] if both else None)
    assert b.shared_byte(a) == a.shared_byte(b)


def _pinned(query: Query, values: dict[str, int | bool]) -> Query:
    """``query`` with each of its variables asserted equal to its value in ``values``."""
    terms = [t for _label, t in query.assertions] + list(query.minimize)
    pins = tuple((f"pin_{v.name}", eq(v, values[v.name])) for v in free_vars(terms))
    return Query(query.name + "-pinned", query.assertions + pins)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(policies(max_edges=5) | reuse_policies(min_edges=8, max_edges=16))
def test_a_race_guess_is_accepted_exactly_when_the_pair_shares_a_byte_and_the_solver_agrees(policy) -> None:
    """Each ``Race`` ``generate`` makes (a conflicting pair HB leaves unordered): with no cancel
    among its edges and a byte both footprints hold, its guess satisfies its query; the solver
    then finds its query, with every variable pinned to the guess, satisfiable (a check of
    ``terms.evaluate`` against Z3's semantics). Otherwise there is no guess. Fails when the
    guess and ``encode`` name the variables differently, or when evaluation and Z3 disagree."""
    _ctx, obs = generate(policy)
    races = [ob for ob in obs if isinstance(ob, Race) and ob.prove_fast() is None]
    backend = open_backend(SolverOptions())
    accepted = 0
    try:
        for ob in races:
            query = ob.encode()
            values = ob.guess()
            shares = ob.acc_a.footprint.shared_byte(ob.acc_b.footprint) is not None
            if len(ob.edges) > 2 or not shares:
                assert values is None, ob.key
                continue
            assert values is not None and query.model_of(values) is not None, ob.key
            assert backend.check(_pinned(query, values)).status is Status.SAT, ob.key
            accepted += 1
    finally:
        backend.close()
    assume(accepted)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lifetime_policies() | pool_chain_policies())
def test_a_use_outside_its_allocation_guessed_is_a_model_of_the_whole_query(policy) -> None:
    """``OutsideAllocation.guess`` (the use and an unordered lifetime event at one time, the rest
    in a linear extension of HB): every guess satisfies the query sent (the probe, or the whole
    query) and the whole query, and the solver finds the whole query satisfiable with every
    variable pinned to it. Fails when ``concurrent_schedule`` breaks an HB gap or the guess
    names variables the queries do not."""
    assume(_accepted_guesses(policy, OutsideAllocation, lambda ob: [ob.probe() or ob.encode(), ob.encode()]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(policies(max_edges=5) | lifetime_policies() | pool_chain_policies() | reuse_policies(min_edges=8, max_edges=16))
def test_a_read_of_bytes_no_write_defines_guessed_is_a_model_of_its_query(policy) -> None:
    """``Unwritten.guess`` (the read as early as HB lets it run, or after one unordered
    ``alloc``, at a byte ``definers.undefined_byte`` finds undefined): every guess satisfies the
    obligation's query, and the solver finds the query satisfiable with every variable pinned to
    it. Fails when ``undefined_byte`` reads the query's rule differently from ``encode`` (every
    ``alloc`` killing the ``init`` bytes, whenever it starts, say: checked) or
    ``around_schedule`` breaks an HB pair."""
    assume(_accepted_guesses(policy, Unwritten, lambda ob: [ob.encode()]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(policies(max_edges=5) | reuse_policies(min_edges=8, max_edges=16))
def test_a_read_with_no_alloc_or_tear_that_the_cover_leaves_is_always_guessed(policy) -> None:
    """Without ``alloc``s and cancelled writes the fast proof is complete (module docstring of
    ``defined``), and the guess's first schedule (the read right after its HB-ancestors) is the
    one that shows it: every read the cover leaves gets a guess its query accepts. Fails when
    ``around_schedule`` runs an unordered writer before the read, or the guess gives up early."""
    _ctx, obs = generate(policy)
    left = [ob for ob in obs if isinstance(ob, Unwritten) and ob.prove_fast() is None and not ob.allocs and not ob.tears]
    for ob in left:
        query = ob.encode()
        values = ob.guess()
        assert values is not None and query.model_of(values) is not None, ob.key
    assume(left)


def test_a_pool_that_waits_for_the_wrong_free_has_every_read_refuted_by_its_guess() -> None:
    """The corpus pool whose ``take[i]`` waits for ``free[i - 3]``: each ``rd[i]`` may read its
    block after a later request allocated it again, which only a schedule running that ``alloc``
    after the writer and before the read shows (the read's own ancestors leave every byte
    defined). Every FX-INIT-001 refutation is a checked guess, with the same verdicts, findings
    and shown trace as a check that sends every query to the solver, and far fewer solver
    calls. Fails when the guess tries no ``alloc``, or places it before the writers."""
    path = str(ROOT / "corpus/ownership/fail/pool-waits-for-the-wrong-free.fx")
    guessed = check(path, CheckOptions(verify_hints=False))
    solved = check(path, CheckOptions(verify_hints=False, prune=False))
    init = [(o.verdict, o.method) for o in guessed.outcomes if o.key.startswith("FX-INIT-001")]
    assert init == [(Verdict.REFUTED, GUESSED)] * 12
    assert [(o.key, o.verdict) for o in guessed.outcomes] == [(o.key, o.verdict) for o in solved.outcomes]
    shown = [[(d.code, d.message, d.trace) for d in group_instances(r.diagnostics)] for r in (guessed, solved)]
    assert shown[0] == shown[1]
    assert guessed.solver_calls * 10 < solved.solver_calls


def _accepted_guesses(policy: Policy, kind: type[Obligation], queries: Callable[[Any], list[Query]]) -> int:
    """How many obligations of ``kind`` that ``policy`` leaves to a query offer a guess, after
    asserting of each that every query of ``queries(ob)`` (the one sent first, built before the
    guess as the pipeline builds it) accepts it, and that Z3 finds the last with every variable
    pinned to it satisfiable. An obligation without a guess goes to the solver: not counted."""
    _ctx, obs = generate(policy)
    backend = open_backend(SolverOptions())
    accepted = 0
    try:
        for ob in obs:
            if not isinstance(ob, kind) or ob.prove_fast() is not None:
                continue
            sent = queries(ob)
            values = ob.guess()
            if values is None:
                continue
            assert all(q.model_of(values) is not None for q in sent), ob.key  # the schedule meets every HB pair
            assert backend.check(_pinned(sent[-1], values)).status is Status.SAT, ob.key
            accepted += 1
    finally:
        backend.close()
    return accepted


def _racing_writes():
    return policy(write("w0", whole(A)), write("w1", whole(A)))


def test_a_race_refuted_by_its_guess_asks_no_solver_and_shows_the_minimal_trace() -> None:
    """Two unordered writes of one region: refuted by the guess (no solver call decides it), and
    the trace shown is the minimised one the solver gives (address 0, times from 0), as without
    the guess (``--no-prune``)."""
    backend = open_backend(SolverOptions())
    try:
        guessed = discharge(_racing_writes(), CheckOptions(verify_hints=False), backend)
        solved = discharge(_racing_writes(), CheckOptions(verify_hints=False, prune=False), backend)
    finally:
        backend.close()
    race = [o for o in guessed.outcomes if o.key.startswith("FX-ORD-002")]
    assert [(o.verdict, o.method) for o in race] == [(Verdict.REFUTED, GUESSED)]
    assert [r.witness for r in guessed.refutations] == [r.witness for r in solved.refutations]
    assert guessed.solver_calls < solved.solver_calls


def test_a_guess_that_fails_an_assertion_leaves_the_obligation_to_the_solver() -> None:
    """A guess whose address lies outside the footprints is rejected by ``Query.model_of``; the
    solver then decides the race (refuted, method ``solver``, one call more)."""
    original = Race.guess

    def outside(self: Race) -> dict[str, int | bool] | None:
        values = original(self)
        return None if values is None else {**values, "addr": self.acc_a.footprint.hi}

    backend = open_backend(SolverOptions())
    try:
        plain = discharge(_racing_writes(), CheckOptions(verify_hints=False), backend)
        with patch.object(Race, "guess", outside):
            wrong = discharge(_racing_writes(), CheckOptions(verify_hints=False), backend)
    finally:
        backend.close()
    race = [o for o in wrong.outcomes if o.key.startswith("FX-ORD-002")]
    assert [(o.verdict, o.method) for o in race] == [(Verdict.REFUTED, "solver")]
    assert wrong.solver_calls == plain.solver_calls + 1
    assert [r.witness for r in wrong.refutations] == [r.witness for r in plain.refutations]


def test_a_model_must_fix_every_variable_with_a_value_of_its_sort() -> None:
    """``terms.satisfies``: a missing variable, or a boolean for an integer, is no model, even
    where evaluation would pass."""
    x = int_var("x")
    assert satisfies({"x": 3}, [x > 2], [])
    assert not satisfies({"x": 1}, [x > 2], [])
    assert not satisfies({"x": True}, [x >= 1], [])  # True == 1 in Python, not in SMT-LIB
    assert not satisfies({"x": 3}, [x > 2], [int_var("y")])  # an objective's variable unfixed
