"""Property: on small random policies (proved or not) and a random schedule, the first event the
lowered programs refuse in the kernel is the event at which the concrete simulator flags a
violation, or neither refuses; and every value a plain map read observed is one its map's class
allows in that schedule. Guards are left out: they read map values, which the simulator
does not model. Skips only when clang or bpf() is unavailable."""

from __future__ import annotations

import os
import tempfile
from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from fxverify.diagnostics import codes
from fxverify.ir import MapOpKind, Policy
from fxverify.lower import artifacts, libbpf
from fxverify.lower.differential import RUNTIME_STATIC, RunReport, _sim_step, check_reads, events_of, slot_bits
from fxverify.lower.emit_c import emit_device
from fxverify.lower.kernel import Runtime
from fxverify.lower.plan import build_plan
from fxverify.replay.simulate import Simulator
from fxverify.source import SourceMap
from tests.policies import policies

_NO_BPF = libbpf.bpf_available()
pytestmark = [
    pytest.mark.skipif(artifacts.clang_path() is None, reason="clang is not installed (apt-get install clang)"),
    pytest.mark.skipif(_NO_BPF is not None, reason=f"bpf() is unavailable: {_NO_BPF}"),
    pytest.mark.slow,  # compiles and loads 25 random policies: the latest-versions pass runs it
]


def _expected(sim: Simulator, sched: dict, events: list[tuple[int, int]]) -> int | None:
    """The simulator's flagged event: a timed violation's step, or the start of an edge with a
    schedule-free violation that a runtime guard mirrors, whichever comes first."""
    step, _why = _sim_step(sim, sched, events)
    static = [events.index((e, 0)) for v in sim.static() if v.code in RUNTIME_STATIC for e in v.edges[:1]]
    return min([s for s in [step, *static] if s is not None], default=None)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(policies(max_edges=4), st.randoms(use_true_random=False))
def test_kernel_refuses_where_the_simulator_flags(pol: Policy, rnd) -> None:
    assume(not any(op.kind is MapOpKind.GUARD for e in pol.edges for op in e.map_ops))
    sim = Simulator(pol)
    assume(not any(v.code == "FX-ORD-001" for v in sim.static()))
    plan, diags = build_plan(pol, "kernel", proved=False)
    # Block lifetimes and cancels are refused by the lowering (tests/test_lower_kernel.py checks the refusal).
    assume(not any(d.code is codes.BPF_003 and ("lifetimes" in d.message or "cancel" in d.message) for d in diags))
    assert plan is not None, diags
    sched = rnd.choice(list(sim.linear_extensions(list(range(len(pol.edges))))))
    cfiles = [emit_device(plan, d) for d in plan.devices]
    objects = {}
    for c in cfiles:
        r = artifacts.compile_c(c)
        assert r.ok, r.log
        objects[c.stem] = r.obj
    files = artifacts.render(plan, cfiles, [], Counter(), SourceMap(), objects, None)
    events = events_of(sched)
    want = _expected(sim, sched, events)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o")
        artifacts.write_dir(out, files)
        got = None
        decisions = []
        reads = RunReport()
        with Runtime(out) as rt:
            for i, (e, ph) in enumerate(events):
                x = rt.fire(e, ph)
                decisions.append(x)
                if x.decision != "proceed":
                    got = (i, x.reason)
                    break
            # Every value a plain read observed is one its map's class allows in this schedule.
            check_reads(pol, sim, sched, decisions, slot_bits(rt), reads)
    assert (got[0] if got else None) == want, (got, want, sorted({v.code for v in sim.run(sched)}))
    assert not reads.mismatches and not reads.reads_unchecked, reads.mismatches
