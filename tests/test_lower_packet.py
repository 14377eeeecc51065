"""dputime packet programs in the Linux kernel: every decision of an XDP and a tc program run with
BPF_PROG_TEST_RUN on real Ethernet/IPv4-or-IPv6/UDP frames that carry the event after their
headers. Each decision returns its action (specs/lowering.md section 2), the decision is written
back into the frame with a UDP checksum that still verifies, a deferred frame goes back to its
sender, frames for other ports pass untouched and a short event frame is dropped. Tables a loader
never filled deny everything (fail closed). Skips only when clang or bpf() is unavailable."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from fxverify.lower import artifacts, libbpf
from fxverify.lower.driver import LowerOptions, lower
from fxverify.lower.kernel import FX_EVENT, RECEIVER, SENDER, Runtime, event_frame, frame_parts
from fxverify.lower.plan import REASON_ID
from fxverify.lower.targets import ACTIONS, TC_ACT_OK, TC_ACT_REDIRECT, TC_ACT_SHOT, XDP_DROP, XDP_PASS, XDP_TX
from tests.conftest import ROOT

_NO_BPF = libbpf.bpf_available()
pytestmark = [
    pytest.mark.skipif(artifacts.clang_path() is None, reason="clang is not installed (apt-get install clang)"),
    pytest.mark.skipif(_NO_BPF is not None, reason=f"bpf() is unavailable: {_NO_BPF}"),
]

# a (rx) -> b (tx) -> c (rx): each program sees an edge that may proceed, one that must wait (its
# predecessor has not ended) and one that belongs to the other hook (FX-HOOK-002, denied).
FRAMES = """policy "frames"

fabric {
  device nic0: nic hooks [rx, tx]
}
space buf0 on nic0 size 1 MiB
region pkt in buf0 at 0x0 size 64 KiB owner nic0

flow f {
  edge a: write pkt by nic0.rx
  edge b: read pkt by nic0.tx after a
  edge c: write pkt by nic0.rx after b
}
"""
RX, TX = 0, 1  # hook ids of nic0 (device 0)


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FRAMES lowered for dputime and compiled."""
    d = tmp_path_factory.mktemp("frames")
    (d / "frames.fx").write_text(FRAMES)
    res = lower(str(d / "frames.fx"), str(d / "o"), LowerOptions(target="dputime"))
    assert res.exit_code == 0, [x.message for x in res.diagnostics]
    return d / "o"


def _event(edge: int, phase: int) -> bytes:
    return FX_EVENT.pack(edge, phase, 0, 0, 0, 0)


def _run(rt: Runtime, hook: int, frame: bytes) -> tuple[int, bytes]:
    fd, _kind = rt.progs[(0, hook)]
    return libbpf.test_run_frame(fd, frame)


def _decision(out: bytes) -> tuple[int, int]:
    """The decision and reason the program wrote into the frame's event."""
    at = frame_parts(out)["payload"]
    _e, _p, decision, reason, _d, _o = FX_EVENT.unpack_from(out, at)
    return decision, reason


SHAPES = {"ipv4": {}, "ipv6": {"ipv6": True}, "vlan-ipv4": {"vlan": 7}, "vlan-ipv6": {"vlan": 7, "ipv6": True},
          "ipv4-options": {"ip_options": b"\x01\x01\x01\x00" * 10}, "ipv4-no-udp-checksum": {"udp_checksum": False}}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind, hook", [("xdp", RX), ("tc", TX)])
def test_each_decision_returns_its_action_on_real_frames(frames: Path, kind: str, hook: int, shape: str) -> None:
    opts = SHAPES[shape]
    with Runtime(str(frames)) as rt:
        if kind == "tc":  # b waits for a: end it first
            assert [rt.fire(0, ph).decision for ph in (0, 1)] == ["proceed", "proceed"]
        ready, waiting = (0, 2) if kind == "xdp" else (1, 1)
        other = 1 if kind == "xdp" else 2  # an edge of the other hook
        # defer: an edge whose predecessor has not ended (c after b; b after a's end, before it here)
        if kind == "tc":
            with Runtime(str(frames)) as fresh:
                ret, out = _run(fresh, hook, event_frame(_event(waiting, 0), **opts))
        else:
            ret, out = _run(rt, hook, event_frame(_event(waiting, 0), **opts))
        parts = frame_parts(out)
        assert ret == ACTIONS[kind]["defer"] == (XDP_TX if kind == "xdp" else TC_ACT_REDIRECT)
        assert _decision(out) == (1, REASON_ID["hb"]) and parts["udp_ok"]
        # turned around: it goes back to its sender
        assert (parts["dst_mac"], parts["src_mac"], parts["dport"], parts["sport"]) == (SENDER[0], RECEIVER[0], SENDER[3], RECEIVER[3])
        # proceed
        frame = event_frame(_event(ready, 0), **opts)
        ret, out = _run(rt, hook, frame)
        parts = frame_parts(out)
        assert ret == ACTIONS[kind]["proceed"] == (XDP_PASS if kind == "xdp" else TC_ACT_OK)
        assert _decision(out) == (0, 0) and parts["udp_ok"] and out[:parts["payload"] - 2] == frame[:parts["payload"] - 2]
        if shape == "ipv4-no-udp-checksum":
            assert parts["udp_check"] == 0  # "no checksum" stays so
        # deny: the other hook's edge
        ret, out = _run(rt, hook, event_frame(_event(other, 0), **opts))
        assert ret == ACTIONS[kind]["deny"] == (XDP_DROP if kind == "xdp" else TC_ACT_SHOT)
        assert _decision(out) == (2, REASON_ID["FX-HOOK-002"]) and frame_parts(out)["udp_ok"]


@pytest.mark.parametrize("kind, hook", [("xdp", RX), ("tc", TX)])
def test_other_frames_pass_untouched_and_short_event_frames_are_dropped(frames: Path, kind: str, hook: int) -> None:
    other_port = event_frame(_event(0, 0), dst=(*RECEIVER[:3], 53))
    arp = RECEIVER[0] + SENDER[0] + struct.pack("!H", 0x0806) + bytes(28)
    short = event_frame(b"\x00" * 10)
    with Runtime(str(frames)) as rt:
        for frame in (other_port, arp):
            ret, out = _run(rt, hook, frame)
            assert ret == ACTIONS[kind]["proceed"] and out == frame
        ret, out = _run(rt, hook, short)
        assert ret == ACTIONS[kind]["deny"] and out == short
        # the drop is an observation (reason `malformed`) of the device's ring buffer
        (obs,) = [o for o in rt.rings[0].drain()]
        assert struct.unpack_from("<5I", obs)[3:] == (2, REASON_ID["malformed"])


@pytest.mark.parametrize("target", ["kernel", "dputime"])
def test_tables_never_filled_deny_everything(tmp_path: Path, target: str) -> None:
    """Fail closed: with the descriptor tables empty (no loader ran), every event is denied
    (`no-descriptor`), never let through."""
    (tmp_path / "frames.fx").write_text(FRAMES)
    res = lower(str(tmp_path / "frames.fx"), str(tmp_path / "o"), LowerOptions(target=target))
    assert res.exit_code == 0, res.diagnostics
    with Runtime(str(tmp_path / "o"), fill=False) as rt:
        for edge in range(3):
            for phase in (0, 1):
                x = rt.fire(edge, phase)
                assert (x.decision, x.reason) == ("deny", "no-descriptor"), (edge, phase, x)


@pytest.mark.parametrize("path", ["corpus/ownership/ok/dpu-reads-leased-kv.fx", "corpus/ownership/fail/double-handoff.fx"],
                         ids=lambda p: Path(p).stem)
def test_dputime_kernel_verify_and_run_agree_with_the_simulator(tmp_path: Path, path: str) -> None:
    """--kernel-verify and --kernel-run on dputime: XDP and tc programs are accepted and, driven
    with event frames, decide as the simulator does (proved: all proceed; refuted: the guard
    refuses where the simulator flags)."""
    res = lower(str(ROOT / path), str(tmp_path / "o"),
                LowerOptions(target="dputime", kernel_verify=True, kernel_run=True, allow_unproved="/fail/" in path))
    assert res.exit_code == 0, [d.message for d in res.diagnostics]
    assert {p.section for p in res.programs} >= {"xdp", "tc"} and all(p.accepted for p in res.programs)
    rr = res.run
    assert rr is not None and rr.ok and rr.cases, rr.mismatches
    assert all(c.agree for c in rr.cases)
