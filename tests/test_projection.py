"""Schedules with the edges between a query's primaries eliminated (``encode.projected_schedule``,
``encode.eliminated_times``) and the transitive reduction of ``defined._schedule_among``, held to
the constraints they replace."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxverify.graph import PolicyGraph
from fxverify.obligations.families import generate
from fxverify.obligations.defined import _schedule_among
from fxverify.obligations.encode import (
    _gaps, eliminated_times, finish, projected_schedule, relevant_edges, schedule, start, time_objectives,
)
from fxverify.smt.backend import Query, Result, SolverOptions, Status
from fxverify.resolve import load_policy
from fxverify.smt.terms import Term, and_, evaluate, free_vars, or_
from fxverify.smt.z3_backend import Z3Backend
from fxverify.source import SourceMap

from tests.conftest import ROOT, corpus_files
from tests.policies import reuse_policies


@st.composite
def _queries(draw):
    """A layered flow of 30 to 60 edges, 2 to 5 of its edges as a query's primaries, and a random
    disjunction of orderings between their endpoints (what a violation asks of a schedule)."""
    policy = draw(reuse_policies())
    n = len(policy.edges)
    prim = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=5, unique=True)))
    ends = [t for e in prim for t in (start(e), finish(e))]
    atoms = st.tuples(st.sampled_from(ends), st.sampled_from(ends), st.booleans()).map(
        lambda x: x[0] < x[1] if x[2] else x[0] <= x[1])
    bad = or_(*[and_(*c) for c in draw(st.lists(st.lists(atoms, min_size=1, max_size=3), min_size=1, max_size=3))])
    return policy, prim, bad


def _decide(cons: list, prim: list[int]) -> Result:
    return Z3Backend(SolverOptions()).check(Query("q", tuple(cons), minimize=tuple(time_objectives(prim))))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_queries())
def test_a_projected_schedule_is_the_schedule_of_every_edge_between_the_primaries(q) -> None:
    """With the edges between the primaries eliminated, a query about the primaries is the same
    query: the same answer, the same minimal times for the primaries, and those times extend to
    every eliminated edge (``eliminated_times``) so that every constraint of the full schedule
    holds. Fails when a gap counts the shortest path instead of the longest (the minimal times
    differ), or when the walk skips an edge that reaches a primary."""
    policy, prim, bad = q
    g = PolicyGraph(policy)
    assert g.is_acyclic() and g.indexed()
    full = schedule(g, relevant_edges(g, prim))
    one, two = _decide(full + [("bad", bad)], prim), _decide(projected_schedule(g, prim) + [("bad", bad)], prim)
    assert one.status is two.status
    if one.status is not Status.SAT:
        return
    times = {e: (one.int(start(e)), one.int(finish(e))) for e in prim}
    assert times == {e: (two.int(start(e)), two.int(finish(e))) for e in prim}
    between = relevant_edges(g, prim) - set(prim)
    added = eliminated_times(g, times, sorted(between))
    assert set(added) == between
    values = {f"{k}_{e}": v for e, (s, f) in {**times, **added}.items() for k, v in (("s", s), ("f", f))}
    assert all(evaluate(t, values) is True for _label, t in full)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(), st.data())
def test_the_hb_pairs_a_projected_schedule_leaves_out_are_implied_by_those_it_keeps(policy, data) -> None:
    """``projected_schedule`` states ``f(a) + gap(a, b) <= s(b)`` only for the pairs no primary
    right after ``a`` implies (``encode._unimplied``): for up to 12 primaries, every HB pair has a
    chain of kept pairs from ``a`` to ``b`` whose gaps, plus one ns per primary passed, add up to
    its own gap at least (the longest path of the difference constraints), and every pair kept
    is an HB pair with its own gap. Fails when a pair is dropped that no chain implies (a
    mismatched gap, say)."""
    g = PolicyGraph(policy)
    n = len(policy.edges)
    prim = sorted(data.draw(st.lists(st.integers(0, n - 1), min_size=3, max_size=12, unique=True)))
    kept: dict[tuple[int, int], int] = {}
    for label, term in projected_schedule(g, prim):
        m = re.fullmatch(r"hb_(\d+)_(\d+)", label or "")
        if m:  # f(a) + gap <= s(b), or f(a) <= s(b) for a gap of 0
            lhs = term.args[0]
            kept[(int(m[1]), int(m[2]))] = lhs.args[1].value if lhs.op == "+" else 0
    index, rank = g.reach_index(), g.ranks()
    assert index is not None
    among = index.by_post(prim)
    full = {(a, b): d for a in prim if (t := index.after_among(a, among)) for b, d in _gaps(g, a, t, index, rank).items()}
    assert set(kept) <= set(full) and all(kept[p] == full[p] for p in kept)
    order = sorted(prim, key=rank.__getitem__)
    for a in prim:
        longest: dict[int, int] = {}  # x -> the most ns a chain of kept pairs puts between f(a) and s(x)
        for x in order:
            ways = [kept[(a, x)]] if (a, x) in kept else []
            ways += [longest[y] + 1 + kept[(y, x)] for y in longest if (y, x) in kept]
            if ways:
                longest[x] = max(ways)
        for (p, b), d in full.items():
            if p == a:
                assert longest.get(b, -1) >= d, (a, b, d)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(), st.data())
def test_the_pairs_a_read_is_ordered_by_are_the_transitive_reduction_of_hb_among_its_edges(policy, data) -> None:
    """``_schedule_among`` keeps the pairs of HB among its edges that no third of them orders:
    their transitive closure is every HB pair among them (so the same schedules satisfy it),
    and none of them is implied by the others. Fails when a pair is dropped because HB orders
    it through an edge outside the set."""
    g = PolicyGraph(policy)
    eids = sorted(set(data.draw(st.lists(st.integers(0, len(policy.edges) - 1), min_size=1, max_size=12))))
    kept = {tuple(int(x) for x in label[3:].split("_")) for label, _t in _schedule_among(g, eids) if label.startswith("hb_")}
    closure = set(kept)
    while True:
        more = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
        if not more:
            break
        closure |= more
    assert closure == {(a, b) for a in eids for b in eids if a != b and g.hb_before(a, b)}
    for a, b in kept:
        assert not any(g.hb_before(a, c) and g.hb_before(c, b) for c in eids)


_TIME = re.compile(r"^[sf]_\d+(__\d+)?$")  # a start or finish, renamed ``__N`` in a two-schedule query


def _times(terms: Iterable[Term]) -> set[str]:
    return {v.name for v in free_vars(list(terms)) if _TIME.match(v.name)}


@pytest.mark.parametrize("path", corpus_files("fail") + corpus_files("ok"), ids=str)
def test_every_time_a_query_constrains_is_scheduled(path) -> None:
    """Every start or finish time a query's other assertions mention has its duration asserted,
    so its schedule binds it (``projected_schedule`` is exact only for such queries: an edge
    eliminated from the schedule but named by the violation would be free to take any time, and
    the query refuted where the schedule forbids it). Fails when an obligation names a time of an
    edge outside the primaries it schedules."""
    policy, _ = load_policy(str(ROOT / path), SourceMap())
    assert policy is not None
    _ctx, obs = generate(policy)
    for ob in obs:
        q = ob.encode()
        scheduled = _times(t for label, t in q.assertions if label is not None and label.startswith("dur_"))
        said = _times(t for label, t in q.assertions if not (label or "").startswith(("dur_", "hb_")))
        assert said <= scheduled, (ob.key, sorted(said - scheduled))
