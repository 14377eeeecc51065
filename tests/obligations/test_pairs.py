"""The targeted pair sweeps (``obligations.pairs``) give exactly the pairs their callers would
filter out of the full sweep, and the latest-writers index of FX-INIT-001
(``definers.recent_writers``) never changes a fast-proof verdict: a read it proves is proved with
every serving write too, and a read it cannot prove falls back to every serving write."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fxverify.graph import PolicyGraph
from fxverify.ir import AccessMode
from fxverify.obligations import defined, definers, ordering, posted
from fxverify.obligations.base import Context, conflict_kind
from fxverify.obligations.pairs import conflicting_pairs, conflicting_reductions, overlapping_pairs, pairs_where

from tests.ir_builders import A, BUF, POSTED, flush, move, policy, read, whole, write
from tests.policies import policies, reuse_policies

MODES = list(AccessMode)


def _ctx(policy) -> Context:
    return Context(policy, PolicyGraph(policy))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=10, max_edges=60), st.sets(st.sampled_from(MODES)), st.sets(st.sampled_from(MODES)),
       st.integers(1, 4), st.booleans())
def test_pairs_where_is_the_full_sweep_filtered(policy, first_modes, second_modes, modulus, reads) -> None:
    ctx = _ctx(policy)
    first = (lambda e, _p, acc: acc.mode in first_modes and e % modulus == 0)
    second = (lambda _e, p, acc: acc.mode in second_modes or p == 1)
    want = [(a, pa, b, pb) for a, pa, b, pb in overlapping_pairs(ctx, reads)
            if (first(a, pa, ctx.edge(a).accesses()[pa]) and second(b, pb, ctx.edge(b).accesses()[pb]))
            or (first(b, pb, ctx.edge(b).accesses()[pb]) and second(a, pa, ctx.edge(a).accesses()[pa]))]
    assert list(pairs_where(ctx, first, second, reads=reads)) == want
    spaces = {policy.regions[0].space}
    assert list(pairs_where(ctx, first, second, reads=reads, spaces=spaces)) == [
        p for p in want if ctx.edge(p[0]).accesses()[p[1]].footprint.space in spaces]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=10, max_edges=80))
def test_conflicting_sweeps_are_the_full_sweep_by_conflict_kind(policy) -> None:
    ctx = _ctx(policy)
    kinds = {(a, pa, b, pb): conflict_kind(ctx.edge(a).accesses()[pa], ctx.edge(b).accesses()[pb])
             for a, pa, b, pb in overlapping_pairs(ctx)}
    assert list(conflicting_pairs(ctx)) == [p for p, k in kinds.items() if k == "race"]
    both_reduce = [p for p in kinds if ctx.edge(p[0]).accesses()[p[1]].mode is AccessMode.REDUCE
                   and ctx.edge(p[2]).accesses()[p[3]].mode is AccessMode.REDUCE]
    assert list(conflicting_reductions(ctx)) == [p for p in both_reduce if kinds[p] is not None]


def _uninitialised(policy):
    return replace(policy, regions=tuple(replace(r, init=False) for r in policy.regions))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=10, max_edges=80))
def test_latest_writers_never_change_the_fast_proof(policy) -> None:
    ctx = _ctx(_uninitialised(policy))
    if not ctx.graph.is_acyclic():
        return
    everyone = definers.writers(ctx)
    for ob in defined.generate(ctx):
        u, pos = ob.edges[0], ob.pos
        assert set(ob.ws) <= set(everyone.get((u, pos), [])), ob.key
        # the same read, with every serving write listed, as before the index
        full = defined.Unwritten.__new__(defined.Unwritten)
        full.__dict__.update(ob.__dict__)
        full.ws, full._cover = everyone.get((u, pos), []), None
        assert ob.prove_fast() == full.prove_fast(), ob.key
        if ob.prove_fast() is not None:
            assert ob.certificate() is not None, ob.key


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reuse_policies(min_edges=10, max_edges=80), st.data())
def test_latest_writers_of_some_reads_are_those_of_every_read(policy, data) -> None:
    """``recent_writers(ctx, only)`` sweeps only the spaces of the reads in ``only``, and lists
    for them what the sweep of the whole policy lists."""
    ctx = _ctx(policy)
    if not ctx.graph.is_acyclic():
        return
    full = definers.recent_writers(ctx)
    reads = sorted((e.eid, p) for e in policy.edges for p, a in enumerate(e.accesses()) if definers.reads(a))
    only = set(data.draw(st.lists(st.sampled_from(reads), max_size=6) if reads else st.just([])))
    assert definers.recent_writers(_ctx(policy), only) == {r: full[r] for r in only}


@pytest.mark.parametrize("layers", [2, 4, 40])
def test_a_read_of_a_reused_buffer_lists_only_the_latest_writes(layers: int) -> None:
    """A buffer every layer writes and reads back: each read is proved by the latest writes before
    it (at most ``RECENT``), though every layer's write serves it (the square of the layers,
    listed before the index)."""
    edges = []
    for i in range(layers):
        edges.append(write(f"w{i}", whole(A), after=(f"r{i - 1}",) if i else ()))
        edges.append(read(f"r{i}", whole(A), after=(f"w{i}",)))
    ctx = _ctx(policy(*edges))
    obs = list(defined.generate(ctx))
    assert len(obs) == layers
    for i, ob in enumerate(obs):
        assert ob.prove_fast() == "hb-cover"
        assert [ctx.edge(w).name for w, _pw in ob.ws] == [f"w{j}" for j in range(max(0, i + 1 - definers.RECENT), i + 1)]
        assert len(definers.writers(ctx)[(ob.edges[0], 0)]) == layers  # every layer's write, before or after it


def _posted_by_pairs(ctx: Context) -> list[str]:
    """FX-ORD-003's keys from every sweep pair: each write over a posted link and read it may
    see."""
    g, pol = ctx.graph, ctx.policy
    keys = []
    for a, pa, b, pb in overlapping_pairs(ctx):
        for w, pw, r, pr in ((a, pa, b, pb), (b, pb, a, pa)):
            ew, er = pol.edges[w], pol.edges[r]
            aw, ar = ew.accesses()[pw], er.accesses()[pr]
            links = g.posted_links(ew)
            if aw.mode is AccessMode.READ or ar.mode is AccessMode.WRITE or not links or g.hb_before(r, w):
                continue
            keys += [f"FX-ORD-003:{ew.name}#{pw}|{er.name}#{pr}|{ln.name}" for ln in links]
    return sorted(keys)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(policies(max_edges=10))
def test_posted_reads_are_those_of_every_pair(policy) -> None:
    ctx = _ctx(policy)
    if not ctx.graph.is_acyclic():
        return
    obs = list(posted.generate(ctx))
    assert sorted(ob.key for ob in obs if isinstance(ob, ordering.PostedRead)) == _posted_by_pairs(ctx)
    # and one persisted-write obligation per persisting write access into a persistent space and
    # posted link that may carry it
    pol, g = ctx.policy, ctx.graph
    persisted = sorted(f"FX-ORD-003:persist:{e.name}#{p}|{ln.name}" for e in pol.edges
                       if e.dst is not None and any(t.kind.value == "persist" for t in e.transforms)
                       and pol.space(e.dst.space).persistent
                       for p, a in enumerate(e.accesses()) if a.mode is not AccessMode.READ and a.footprint == e.dst
                       for ln in g.posted_links(e))
    assert sorted(ob.key for ob in obs if isinstance(ob, ordering.PostedPersist)) == persisted


@st.composite
def own_posted_policies(draw):
    """The GPU pulls bytes from the DPU's buffer into its own `a` over the posted GPU-DPU link,
    reads `a`, and the DPU pulls `a` back into its buffer, with flushes, in random orders with
    some orderings left out: many reads per write, some HB-before it, some concurrent with it."""
    n = draw(st.integers(3, 12))
    edges = []
    for i in range(n):
        kind = draw(st.sampled_from(["own", "own", "read", "read", "dpu", "flush"]))
        after = tuple(sorted({f"e{i - k}" for k in draw(st.lists(st.integers(1, min(i, 3)), max_size=2))})) if i else ()
        kw = dict(after=after, stream=draw(st.sampled_from([None, "s0", "s1"])))
        if kind == "own":
            edges.append(move(f"e{i}", whole(BUF), whole(A), **kw))
        elif kind == "read":
            edges.append(read(f"e{i}", whole(A), **kw))
        elif kind == "dpu":
            edges.append(move(f"e{i}", whole(A), whole(BUF), device="dpu0", after=after))
        else:
            edges.append(flush(f"e{i}", "gpu0--dpu0", **kw))
    return policy(*edges, links=POSTED)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(own_posted_policies())
def test_pulls_over_a_posted_link_get_no_posted_obligation(policy) -> None:
    """Every write here is a pull (its destination's device drives it): none crosses a link as
    a posted write, so no read and no persist waits for a flush (specs/obligations.md section 1)."""
    ctx = _ctx(policy)
    if not ctx.graph.is_acyclic():
        return
    assert all(ctx.graph.is_pull(e) for e in policy.edges if e.dst is not None)
    assert list(posted.generate(ctx)) == [] == _posted_by_pairs(ctx)
