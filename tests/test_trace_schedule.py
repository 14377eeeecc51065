"""Every trace shows one legal schedule: on random policies with findings, the events a trace shows
respect happens-before with the times it shows (an edge HB-before another ends no later than the
other starts), and every HB predecessor of a shown edge is either shown, earlier, or listed in an
elided group that ends no later than that edge starts. Also ``Simulator.close`` on its own."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Trace
from fxverify.ir import Policy
from fxverify.pipeline import CheckOptions, discharge
from fxverify.replay.simulate import Simulator
from fxverify.resolve import load_policy
from fxverify.source import SourceMap
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend

from tests.policies import cancel_policies, lifetime_policies, policies, reuse_policies

BACKEND = open_backend(SolverOptions())


def schedule_errors(policy: Policy, trace: Trace) -> list[str]:
    """Why the timed events of ``trace`` are not one legal schedule of ``policy`` (empty when
    they are): HB among shown edges against the shown times, and every HB predecessor of a shown
    edge shown or elided before that edge starts."""
    sim = Simulator(policy)
    eid = {e.name: e.eid for e in policy.edges}
    timed = [ev for ev in trace.events if ev.time is not None and ev.edge in eid]
    if not timed:
        return []
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for ev in timed:
        e = eid[ev.edge]
        first[e] = min(first.get(e, ev.time), ev.time)
        last[e] = max(last.get(e, ev.time), ev.time)
    hidden_end = {eid[name]: el.end for el in trace.elided for name in el.edges}
    errors = []
    for b in first:
        for a in sim.ancestors(b):
            if a in last and last[a] > first[b]:
                errors.append(f"`{policy.edges[a].name}` ends at {last[a]} after `{policy.edges[b].name}` starts at {first[b]}")
            elif a not in last and a not in hidden_end:
                errors.append(f"`{policy.edges[a].name}` (HB before `{policy.edges[b].name}`) is neither shown nor elided")
            elif a not in last and hidden_end[a] > first[b]:
                errors.append(f"elided `{policy.edges[a].name}` ends at {hidden_end[a]} after `{policy.edges[b].name}` starts")
    steps = [ev.step for ev in trace.events]
    for el in trace.elided:
        if not 1 <= el.before <= len(steps) + 1 or el.start >= el.end:
            errors.append(f"elided group {el} is misplaced")
        shown_before = [ev.time for ev in trace.events if ev.step < el.before and ev.time is not None]
        shown_after = [ev.time for ev in trace.events if ev.step >= el.before and ev.time is not None]
        if (shown_before and max(shown_before) > el.start) or (shown_after and min(shown_after) < el.end):
            errors.append(f"elided group {el} is out of time order")
    return errors


def _load(tmp_path, name: str, text: str) -> Policy:
    path = tmp_path / f"{name}.fx"
    path.write_text(text)
    policy, diags = load_policy(str(path), SourceMap())
    assert policy is not None, diags
    return policy


def _assert_traces_are_schedules(policy: Policy) -> None:
    r = discharge(policy, CheckOptions(prune=True, verify_hints=False), BACKEND)
    for d in r.diagnostics:
        if d.trace is not None:
            assert schedule_errors(policy, d.trace) == [], (d.code, d.message, d.trace)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(policies(max_edges=5), lifetime_policies(), cancel_policies()))
def test_traces_of_small_random_policies_are_schedules(policy: Policy) -> None:
    _assert_traces_are_schedules(policy)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reuse_policies(min_edges=12, max_edges=20))
def test_traces_of_layered_flows_are_schedules(policy: Policy) -> None:
    """Layered flows over reused buffers: findings deep in the flow, whose traces elide most of
    what comes before them."""
    _assert_traces_are_schedules(policy)


B19 = """policy "b19"
fabric {
  device gpu0: gpu hooks [launch, alloc, free]
}
space hbm0 on gpu0 size 80 GiB
region blk[b in 0..4] in hbm0 at 0x4000_0000 + b * 64 KiB size 64 KiB owner gpu0 dtype bf16 pooled
flow serve {
  edge take0: alloc blk[1] to gpu0 by gpu0.alloc
  edge fill0: write blk[1] by gpu0.launch after take0
  edge attn0: read blk[1] by gpu0.launch after fill0
  edge peek0: read blk[1] by gpu0.launch after fill0 stream side
  edge free0: release blk[1] return_pool by gpu0.free after attn0
  edge take1: alloc blk[1] to gpu0 by gpu0.alloc after free0
  edge fill1: write blk[1] by gpu0.launch after take1
}
"""


def test_race_on_a_reused_block_elides_the_free_that_orders_it(tmp_path) -> None:
    """The race between a reader of a block's first allocation and the writer of its second: the
    trace shows the second allocation at a time the free before it allows, and names the free."""
    policy = _load(tmp_path, "b19", B19)
    r = discharge(policy, CheckOptions(prune=True, verify_hints=False), BACKEND)
    race = next(d for d in r.diagnostics if d.code is codes.ORD_002)
    assert schedule_errors(policy, race.trace) == []
    assert [el.edges for el in race.trace.elided] == [("take0", "fill0", "attn0", "free0")]
    take1 = next(ev for ev in race.trace.events if ev.edge == "take1" and ev.kind == "alloc")
    assert take1.time >= race.trace.elided[0].end


@pytest.mark.parametrize("sched, want", [
    ({2: (0, 1)}, {0: (0, 1), 1: (1, 2), 2: (2, 3)}),
    ({0: (0, 2), 2: (1, 2)}, None),  # 2 starts before 0 ends: not legal, refused
])
def test_close_adds_every_ancestor_before_its_descendant(tmp_path, sched, want) -> None:
    policy = _load(tmp_path, "chain", """policy "chain"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 1 GiB
region a in hbm0 at 0 size 4 KiB owner gpu0
flow f {
  edge x: write a by gpu0.launch
  edge y: read a by gpu0.launch after x
  edge z: read a by gpu0.launch after y
}
""")
    sim = Simulator(policy)
    if want is None:
        with pytest.raises(ValueError):
            sim.close(sched)
        return
    closed, groups = sim.close(sched)
    assert closed == want and groups == ((0, 1),)
