"""The HB ownership condition (``obligations.owners.owned_by_hb``), the placement of a use in its
allocation (``lifetimes.OutsideAllocation``) and the allocations that make a read's bytes stale
(``defined.Unwritten._kills``) against their definitions."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import HealthCheck, assume, given, settings

from fxverify.graph import PolicyGraph
from fxverify.ir import AccessMode
from fxverify.obligations import lifetimes, owners
from fxverify.obligations.base import Context
from fxverify.obligations.families import generate
from fxverify.obligations.defined import Unwritten
from fxverify.obligations.lifetimes import OutsideAllocation, chained, lifetime_regions, users
from fxverify.obligations.owners import owned_by_hb
from fxverify.smt.backend import SolverOptions, Status
from fxverify.smt.factory import open_backend

from tests.policies import lease_revoke_policies, lifetime_policies, policies, pool_chain_policies


def _by_definition(ctx: Context, region: str, device: str, e: int, hs: list[int]) -> bool:
    """``owned_by_hb`` as its docstring states it: every handoff against every other."""
    g = ctx.graph
    if ctx.policy.region(region).owner == device and all(g.hb_before(e, h) for h in hs):
        return True
    return any(ctx.handoff_dst(h, region) == device and g.hb_before(h, e)
               and all(o == h or g.hb_before(o, h) or g.hb_before(e, o) for o in hs) for h in hs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(max_edges=6) | lifetime_policies() | lease_revoke_policies() | pool_chain_policies())
def test_ownership_by_hb_picks_the_one_deciding_handoff_as_every_pair_would(policy) -> None:
    """On an acyclic HB, ``owned_by_hb`` tries only the handoff that is last in HB's linear
    extension among those not after the edge (found by bisection when HB chains the handoffs, as
    a pool's allocations of one slot); its answer is that of trying every handoff against
    every other, for every region, device and edge of random policies (cyclic ones use the
    definition itself). Asked, as the handoff-authority check asks, of every handoff but one
    too: the chain kept for the whole set answers as its subsequence, and one chain is kept per
    region."""
    ctx = Context(policy, PolicyGraph(policy))
    for region, hs in ctx.handoffs.items():
        for sub in [hs, *([o for o in hs if o != h] for h in hs)]:
            for e in range(len(policy.edges)):
                for d in policy.devices:
                    assert owned_by_hb(ctx, region, d.name, e, sub) == _by_definition(ctx, region, d.name, e, sub), \
                        (region, sub, e, d.name)
    assert set(ctx.__dict__.get("_handoff_chains", {})) <= set(ctx.handoffs)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lifetime_policies() | pool_chain_policies())
def test_a_use_is_placed_in_a_chain_of_allocations_as_by_a_scan_of_every_event(policy) -> None:
    """Where a block's allocations and releases form one HB chain, ``OutsideAllocation`` places
    each use by bisection (``_placed_in_chain``); the placement, and so the fast proof and its
    certificate, is that of scanning every event. Fails when the bisection is off by one or the
    opening ``alloc`` is taken from the wrong end of the events before the use."""
    ctx = Context(policy, PolicyGraph(policy))
    chains = 0
    for region in lifetime_regions(ctx):
        chains += chained(ctx, region)
        for u in users(ctx, region):
            ob = OutsideAllocation(ctx, region, u)
            with patch.object(lifetimes, "chained", lambda _ctx, _region: False):
                scanned = ob._placement()  # every event against the use: the definition
            assert ob._placement() == scanned, (region, u)
    assume(chains)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lifetime_policies() | pool_chain_policies())
def test_the_allocations_that_make_a_read_stale_are_found_in_their_chain_as_by_a_scan(policy) -> None:
    """Where HB chains a block's allocations, ``Unwritten._kills`` decides by two bisections
    whether one of them lies between a write (or the ``init`` contents) and the read; the byte
    ranges it returns are those of testing every allocation (``hb_chain`` patched off), for every
    read and every write of random pooled policies. Fails when a bisection is off by one or the
    prefix and suffix are swapped."""
    ctx = Context(policy, PolicyGraph(policy))
    chains = 0
    for u, e in enumerate(policy.edges):
        for pos, acc in enumerate(e.accesses()):
            if acc.mode is not AccessMode.READ:
                continue
            ob = Unwritten(ctx, u, pos)
            chains += any(chain is not None for _lo, _hi, chain, _eids in ob._chains)
            for w in (None, *range(len(policy.edges))):
                with patch.object(owners, "hb_chain", lambda *_a, **_k: None):
                    scanned = set(Unwritten(ctx, u, pos)._kills(w))  # every allocation tested: the definition
                assert set(ob._kills(w)) == scanned, (u, pos, w)
    assume(chains)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lifetime_policies() | pool_chain_policies())
def test_a_probe_that_refutes_gives_a_model_of_the_whole_query(policy) -> None:
    """``Obligation.probe`` is tried before ``encode``: a refuting answer to it refutes the
    obligation, so every model of the probe must satisfy every assertion of the whole query (its
    violation is some of the whole one's disjuncts, its constraints the same)."""
    _ctx, obs = generate(policy)
    backend = open_backend(SolverOptions())
    try:
        for ob in obs:
            probe = ob.probe() if ob.prove_fast() is None else None
            if probe is None:
                continue
            res = backend.check(probe)
            if res.status is probe.expect or res.status is Status.UNKNOWN:
                continue
            whole = ob.encode()
            assert all(res.value(t) is True for _label, t in whole.assertions), ob.key
    finally:
        backend.close()
