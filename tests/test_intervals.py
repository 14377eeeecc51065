"""Interval bounds of linear terms (``smt.intervals``) and the FX-ALIAS-003 proofs they make
without a solver (``obligations.symbolic.inside_by_intervals``).

The bounds must contain every value a term takes on its box: random terms with sums,
differences, constant products, ``div`` and ``mod`` are evaluated at every point of random boxes.
And every footprint the intervals keep inside its region has a query the solver answers unsat,
on random families (``test_parametric.family_texts``).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fxverify.obligations.parametric import Parametric
from fxverify.obligations.symbolic import inside_by_intervals
from fxverify.shapes import Shapes
from fxverify.smt import intervals
from fxverify.smt.backend import SolverOptions, Status
from fxverify.smt.factory import open_backend
from fxverify.smt.terms import Term, add, div, evaluate, int_var, mod, mul, sub

from tests.obligations.test_parametric import _load, family_texts

VARS = ("a", "b")


@st.composite
def linear_terms(draw, depth: int = 3) -> Term:
    """A term over ``VARS``: constants, variables, sums, differences, constant multiples (negative
    ones too), and ``div``/``mod`` by a positive constant, nested."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([int_var(v) for v in VARS] + [add(draw(st.integers(-9, 9)))]))
    kind = draw(st.sampled_from(["+", "-", "*", "div", "mod"]))
    x = draw(linear_terms(depth - 1))
    if kind == "+":
        return add(x, draw(linear_terms(depth - 1)))
    if kind == "-":
        return sub(x, draw(linear_terms(depth - 1)))
    if kind == "*":
        return mul(draw(st.integers(-4, 4)), x)
    c = draw(st.integers(1, 7))
    return div(x, c) if kind == "div" else mod(x, c)


def assert_bounds_contain_every_value(t: Term, box: dict[str, tuple[int, int]]) -> None:
    lo, hi = intervals.term_bounds(t, box)
    for values in itertools.product(*(range(a, b + 1) for a, b in box.values())):
        v = evaluate(t, dict(zip(box, values)))
        assert lo <= v <= hi, (t, dict(zip(box, values)), v, (lo, hi))


@settings(max_examples=400, deadline=None)
@given(linear_terms(), st.integers(-6, 6), st.integers(0, 6), st.integers(-6, 6), st.integers(0, 6))
def test_bounds_contain_every_value_on_the_box(t: Term, a0: int, na: int, b0: int, nb: int) -> None:
    assert_bounds_contain_every_value(t, {"a": (a0, a0 + na), "b": (b0, b0 + nb)})


def test_a_difference_cancels_exactly() -> None:
    at = add(mul(4096, int_var("a")), 7)
    assert intervals.term_bounds(sub(add(at, 64), at), {"a": (0, 1000)}) == (64, 64)


def test_a_wrong_bound_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = intervals._atom_bounds

    def low_only(atom, box):
        lo, hi = real(atom, box)
        return (lo, lo) if atom.op == "div" else (lo, hi)

    monkeypatch.setattr(intervals, "_atom_bounds", low_only)
    with pytest.raises(AssertionError):
        assert_bounds_contain_every_value(div(int_var("a"), 2), {"a": (0, 5), "b": (0, 0)})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(family_texts())
def test_every_footprint_the_intervals_keep_inside_has_an_unsat_query(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None and policy.edges)
    shapes = Shapes.of(policy)
    prover = Parametric(policy, None)  # type: ignore[arg-type]  # asks nothing: the queries are only built
    backend = open_backend(SolverOptions())
    decided = asked = 0
    try:
        for (span, pos), q in prover.bounds_queries(shapes.edges):
            shape = shapes.edges[span]
            ref = [r for r in (shape.src, shape.dst) if r is not None][pos]
            if isinstance(q, str):
                continue
            asked += 1
            if inside_by_intervals(shape, ref, shapes.regions):
                decided += 1
                assert backend.check(q).status is Status.UNSAT, q.name
    finally:
        backend.close()
    event(f"decided by intervals: {'none' if not decided else 'all' if decided == asked else 'some'}")
