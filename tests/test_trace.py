"""Traces point at the truth: the marked step (``>>``) is the violating event, every trace shows
the edges that make its HB chain matter, region-level findings have events, and fingerprints
depend on the violating events only (adding an unrelated map write, flush or handoff to a policy
leaves them alone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxverify.diagnostics import codes
from fxverify.diagnostics.fingerprint import fingerprint
from fxverify.diagnostics.model import Diagnostic
from fxverify.graph import PolicyGraph
from fxverify.pipeline import CheckOptions, check
from fxverify.replay.simulate import Simulator

from tests.conftest import ROOT, corpus_files
from tests.test_trace_schedule import schedule_errors

_RACE = """policy "race"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv_slot in hbm0 at 0x2000_0000 size 1 MiB owner gpu0 dtype bf16
region kv_share in hbm0 at 0x2800_0000 size 1 MiB owner gpu0 dtype bf16
region host_blk in host0 at 0x1_4000_0000 size 1 MiB owner gpu0 dtype bf16
map where: hash<u32, device>[64] class linearizable
flow swap_in {
  edge load_back: move host_blk -> kv_slot by gpu0.copy_done stream h2d
  edge copy_out: move kv_slot -> kv_share by gpu0.copy_done stream d2d MAP
}
"""

_RELEASE = """policy "release"
fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_0000_0000 size 256 MiB
region blk[b in 0..2] in hbm0 at 0x4000_0000 + b * 1 MiB size 1 MiB owner gpu0 dtype bf16
region pool in hdm0 at 0x80_0000_0000 size 1 MiB owner gpu0 dtype bf16
flow f {
  edge spill: move blk[0] -> pool by gpu0.copy_done
  edge fr: release blk[*] free by gpu0.free
}
"""

_REGIONS = """policy "regions"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region a in hbm0 at 0x1000_0000 size 1 MiB owner gpu0 dtype bf16
region b in hbm0 at 0x1008_0000 size 1 MiB owner gpu0 dtype bf16
alias_set sa = [a]
alias_set sb = [b]
flow f {
  edge w: write a by gpu0.launch
}
"""

# A posted RDMA write, then an "ok" message on the same NIC, then the peer consumes the block:
# the message is sent too early (nothing flushed the write), and it is what orders the read.
_RDMA = """policy "rdma"
fabric {
  device nic0: nic hooks [rx, tx, dma_done]
  device nic1: nic hooks [rx, tx, dma_done]
  link wire0 = nic0 -- nic1 : rdma posted
}
space dram0 on nic0 size 16 GiB
space dram1 on nic1 base 0x10_0000_0000 size 16 GiB
region src in dram0 at 0x100_0000 size 1 MiB owner nic0 dtype bf16
region dst in dram1 at 0x10_0100_0000 size 1 MiB owner nic0 dtype bf16
region okbuf in dram0 at 0x200_0000 size 64 owner nic0
region okbox in dram1 at 0x10_0200_0000 size 64 owner nic0
flow f {
  FLUSH
  edge put: move src -> dst by nic0.dma_done AFTER handoff dst: nic0 -> nic1
  edge ok: move okbuf -> okbox by nic0.tx after put handoff okbox: nic0 -> nic1
  edge consume: read dst by nic1.rx after ok
}
"""


def _check(tmp_path: Path, name: str, text: str) -> list[Diagnostic]:
    p = tmp_path / f"{name}.fx"
    p.write_text(text)
    return check(str(p)).diagnostics


def _one(diags: list[Diagnostic], code: str) -> Diagnostic:
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in diags]
    return found[0]


def _marked(d: Diagnostic):
    assert d.trace is not None
    marked = [ev for ev in d.trace.events if ev.violation]
    assert len(marked) == 1
    return marked[0]


def test_race_marks_the_second_start_not_a_map_write(tmp_path: Path) -> None:
    with_map = _one(_check(tmp_path, "m", _RACE.replace("MAP", "map_write where[1] = gpu0")), "FX-ORD-002")
    plain = _one(_check(tmp_path, "p", _RACE.replace("MAP", "")), "FX-ORD-002")
    for d in (with_map, plain):
        ev = _marked(d)
        assert (ev.edge, ev.kind) == ("copy_out", "start")
    assert any(ev.kind == "map" for ev in with_map.trace.events)
    assert fingerprint(with_map) == fingerprint(plain)


def test_a_map_of_devices_shows_device_names() -> None:
    """A value of a ``device`` map is written and shown as a device name, not as the index the
    resolver stores."""
    r = check(str(ROOT / "corpus/maps/fail/const-map-written.fx"), CheckOptions(verify_hints=False))
    rows = [ev.detail for d in r.diagnostics if d.trace is not None for ev in d.trace.events if ev.kind == "map"]
    assert "write `spill_home[0]` = `cxl1`" in rows, rows


def test_release_marks_the_block_the_message_names(tmp_path: Path) -> None:
    d = _one(_check(tmp_path, "r", _RELEASE), "FX-OWN-004")
    assert "`blk[0]`" in d.message
    ev = _marked(d)
    assert (ev.edge, ev.kind) == ("fr", "release") and "`blk[0]`" in ev.detail


def test_region_level_alias_finding_has_events(tmp_path: Path) -> None:
    d = _one(_check(tmp_path, "a", _REGIONS), "FX-ALIAS-001")
    assert d.trace is not None
    assert [(ev.edge, ev.kind) for ev in d.trace.events] == [("a", "region"), ("b", "region")]
    assert _marked(d).edge == "b" and "alias set `sb`" in _marked(d).detail


def test_posted_write_trace_shows_the_message_sent_too_early(tmp_path: Path) -> None:
    d = _one(_check(tmp_path, "o", _RDMA.replace("FLUSH", "").replace("AFTER", "")), "FX-ORD-003")
    events = d.trace.events
    assert {ev.edge for ev in events} == {"put", "ok", "consume"}
    t = {(ev.edge, ev.kind): ev.time for ev in events}
    # the message is sent after the write and before the read, as HB requires
    assert t[("put", "end")] <= t[("ok", "start")] and t[("ok", "end")] <= t[("consume", "start")]
    assert (_marked(d).edge, _marked(d).kind) == ("consume", "start")
    assert list(d.edges) == ["put", "consume"]


def test_posted_write_trace_shows_a_flush_in_the_wrong_place(tmp_path: Path) -> None:
    plain = _one(_check(tmp_path, "o", _RDMA.replace("FLUSH", "").replace("AFTER", "")), "FX-ORD-003")
    early = _one(_check(tmp_path, "e", _RDMA.replace("FLUSH", "edge fl: flush wire0 by nic0.tx")
                        .replace("AFTER", "after fl")), "FX-ORD-003")
    kinds = {(ev.edge, ev.kind) for ev in early.trace.events}
    assert ("fl", "flush") in kinds and ("ok", "start") in kinds
    # the flush explains the bug but is not where the rule breaks: same fingerprint
    assert list(early.edges) == ["put", "consume"] and fingerprint(early) == fingerprint(plain)


def test_persist_trace_marks_the_write_end_and_shows_when_the_flush_was_issued(tmp_path: Path) -> None:
    """A flush edge that may start before the persisting copy finishes does not cover it: the
    trace shows the flush's start (which decides what it covers) and marks the copy's end, after
    which no flush follows."""
    text = (ROOT / "corpus/ordering/fail/persist-over-posted-no-flush.fx").read_text()
    text = text.replace("transform persist  # expect: FX-ORD-003",
                        "transform persist\n  edge drain: flush up0 by gpu0.launch")
    d = _one(_check(tmp_path, "p", text), "FX-ORD-003")
    assert (_marked(d).edge, _marked(d).kind) == ("spill", "end")
    t = {(ev.edge, ev.kind): ev.time for ev in d.trace.events}
    assert t[("drain", "start")] < t[("spill", "end")], t
    start = next(ev for ev in d.trace.events if (ev.edge, ev.kind) == ("drain", "start"))
    assert "flush of link `up0`" in start.detail


@pytest.mark.parametrize("path", ["corpus/maps/fail/aggregate-before-writer.fx",
                                  "corpus/maps/fail/per-gpu-counter-read-as-one.fx"])
def test_map_traces_show_every_writer(path: str) -> None:
    d = _one(check(str(ROOT / path)).diagnostics, "FX-MAP-004")
    writers = {ev.edge for ev in d.trace.events if ev.kind == "map" and ev.detail.startswith("update")}
    assert writers == {"send0", "send1"}
    ev = _marked(d)
    assert ev.edge == "report" and ev.kind == "map"


def test_unrelated_handoff_keeps_an_ownership_fingerprint(tmp_path: Path) -> None:
    base = (ROOT / "corpus/ownership/fail/dpu-reads-unleased-kv.fx").read_text()
    d0 = _one(_check(tmp_path, "a", base), "FX-OWN-001")
    # a handoff of the block ordered after the bad read: it explains nothing that breaks
    later = base.rstrip().rstrip("}") + "  edge back: read kv_blk by gpu0.launch after send handoff kv_blk: gpu0 -> dpu0\n}\n"
    d1 = _one(_check(tmp_path, "b", later), "FX-OWN-001")
    assert d1.message == d0.message and list(d1.edges) == ["send"]
    assert fingerprint(d1) == fingerprint(d0)


def test_extend_adds_context_edges_around_a_schedule(tmp_path: Path) -> None:
    p = tmp_path / "chain.fx"
    p.write_text("""policy "chain"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 1 GiB
region r in hbm0 at 0 size 1 MiB owner gpu0
flow f {
  edge a: read r[0, +64] by gpu0.launch
  edge b: read r[64, +64] by gpu0.launch after a
  edge c: read r[128, +64] by gpu0.launch after b
  edge x: read r[192, +64] by gpu0.launch
  edge y: read r[256, +64] by gpu0.launch after c
}
""")
    sim = Simulator(check(str(p)).policy)
    sched = {1: (0, 2), 3: (1, 3)}
    out = sim.extend(sched, [0, 4, 3])
    assert sim.check_schedule(out) is None and set(out) == {0, 1, 3, 4}
    assert out[0][1] <= out[1][0]  # `a` before `b`
    # the given times keep their order (shifted, never reordered)
    assert sorted(sched, key=lambda e: sched[e]) == sorted(sched, key=lambda e: out[e])
    assert all(out[e][0] - sched[e][0] == out[1][0] - sched[1][0] for e in sched)
    with pytest.raises(ValueError):
        sim.extend({0: (0, 1), 2: (1, 2)}, [1])  # `b` lies between two timed edges


@pytest.mark.parametrize("path", corpus_files("fail"), ids=str)
def test_corpus_traces_point_at_the_truth(path: Path) -> None:
    """Every refutation of the corpus: one marked step, on an edge (or region) the finding blames;
    every blamed edge shown; the times shown those of one legal schedule (``schedule_errors``);
    what the marked edge waited for shown (the edge that notifies a
    blamed transfer complete, the message it started right after)."""
    r = check(str(ROOT / path), CheckOptions(verify_hints=False))
    pol = r.policy
    assert pol is not None
    g = PolicyGraph(pol)
    for d in r.diagnostics:
        if d.trace is None:
            continue
        assert schedule_errors(pol, d.trace) == [], (d.code, d.trace)
        ev = _marked(d)
        shown = {e.edge for e in d.trace.events}
        blamed = [n.removeprefix("region ") for n in d.edges]
        assert ev.edge in blamed, (d.code, ev.edge, d.edges)
        assert set(blamed) <= shown, (d.code, d.edges, shown)
        if ev.time is None or not g.is_acyclic():
            continue
        v = pol.edge(ev.edge).eid
        told = {e.name for e in pol.edges if set(e.notifies) & set(blamed) and g.hb_before(e.eid, v)}
        assert told <= shown, (d.code, told, shown)
        if d.code in (codes.ORD_002, codes.OWN_002, codes.MAP_002):
            # a race marks the second start of the overlapping pair
            starts = {e.edge: e.time for e in d.trace.events if e.kind in ("start", "map") and e.edge in blamed}
            assert ev.time == max(starts.values()), (d.code, starts, ev)


def test_a_notification_sent_too_early_is_in_the_race_trace() -> None:
    """The reader waits for a completion posted after the first of four copies: the race with
    the second copy shows that completion, the HB chain the reader trusted."""
    d = _one(check(str(ROOT / "corpus/ordering/fail/notify-batch-in-flight.fx")).diagnostics, "FX-ORD-002")
    assert {ev.edge for ev in d.trace.events} == {"copy[1]", "attn", "done"}
    assert (_marked(d).edge, _marked(d).kind) == ("attn", "start") and list(d.edges) == ["copy[1]", "attn"]


def test_a_read_of_unwritten_bytes_blames_the_read_alone(tmp_path: Path) -> None:
    """FX-INIT-001 marks the read, and its fingerprint stays when another writer of the bytes
    that are written appears (the writers explain; the read breaks the rule)."""
    base = (ROOT / "corpus/ordering/fail/short-copy-read-whole.fx").read_text()
    d0 = _one(_check(tmp_path, "a", base), "FX-INIT-001")
    assert list(d0.edges) == ["send"] and (_marked(d0).edge, _marked(d0).kind) == ("send", "start")
    more = base.rstrip().rstrip("}") + "  edge again: move kv_data -> stage[0, +32 KiB] by gpu0.copy_done after copy\n}\n"
    more = more.replace("by dpu0.tx after copy", "by dpu0.tx after again")
    d1 = _one(_check(tmp_path, "b", more), "FX-INIT-001")
    assert fingerprint(d1) == fingerprint(d0)


def test_region_level_findings_have_distinct_fingerprints(tmp_path: Path) -> None:
    """Two overlaps of regions in one policy are two findings: their regions key them."""
    text = _REGIONS.replace("alias_set sb = [b]", "alias_set sb = [b]\nregion c in hbm0 at 0x1010_0000 size 1 MiB owner gpu0")
    diags = [d for d in _check(tmp_path, "c", text) if d.code == "FX-ALIAS-001"]
    assert sorted(tuple(d.edges) for d in diags) == [("region a", "region b"), ("region b", "region c")]
    assert len({fingerprint(d) for d in diags}) == 2


@pytest.mark.parametrize(("path", "why"), [
    ("cqe-after-copy-beside-the-nic", "need not follow `land`, a third-party transfer that pins no route"),
    ("rdma-read-cqe-over-another-path", "need not follow `fetch`, a third-party transfer that pins no route"),
    ("cqe-socket-direct-other-function", "takes another route from `nic0` to `cpu0` than `land`, and may arrive first"),
    ("cqe-over-cxl-link", "follows the write over `c2c`, which is not PCIe"),
    ("rdma-cqe-over-unordered-hop", "follows the write over `up0`, which is `unordered`"),
    ("polled-buffer-that-notifies", "is the write itself, and its bytes span more than one posted request"),
    ("rdma-read-into-gpu-then-flag", "lands in `gpu0`, which is no host"),
])
def test_a_completion_entry_that_counts_for_nothing_says_why(path: str, why: str) -> None:
    """A read refuted although it waits for a completion entry after the write: the trace names
    the entry and the part of the rule it misses (specs/obligations.md section 1, completion
    entries), not only that a flush is missing."""
    d = _one(check(str(ROOT / f"corpus/ordering/fail/{path}.fx")).diagnostics, "FX-ORD-003")
    assert d.trace is not None and "the completion entry `" in d.trace.why and why in d.trace.why, d.trace.why


def test_overlapping_region_families_are_confirmed_by_their_regions(tmp_path: Path) -> None:
    """Two region families in different alias sets overlap in every layer: each finding about
    regions is confirmed by the simulator for the two regions it names and a byte in both,
    whichever shared byte the witness names (an FX-INT-001 came of matching the byte against the
    higher base of whatever pair the simulator listed first)."""
    path = tmp_path / "families.fx"
    path.write_text("""policy "region-families"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 1 MiB
region layer[l in 0..4] in hbm0 at 0x0 + l * 36864 size 36864 owner gpu0 dtype bf16
region block[l in 0..4, b in 0..2] in hbm0 at 0x0 + (l * 2 + b) * 18432 size 18432 owner gpu0 dtype bf16
alias_set blocks = [block]
flow f {
  for l in 0..4 {
    edge fill[l]: write layer[l] by gpu0.launch
    for b in 0..2 {
      edge use[l, b]: read block[l, b] by gpu0.launch after fill[l]
    }
  }
}
""")
    from fxverify.result import Verdict

    r = check(str(path))
    assert not [d.message for d in r.diagnostics if d.code == "FX-INT-001"]
    refuted = {v.key for v in r.outcomes if v.verdict is Verdict.REFUTED}
    pairs = {frozenset(k.removeprefix("FX-ALIAS-001:region:").split("|")) for k in refuted}
    assert pairs == {frozenset((f"layer[{i}]", f"block[{i}][{b}]")) for i in range(4) for b in range(2)}, refuted
    # the witness, which names the regions, survives the result cache's record and the workers' pipes
    from fxverify.gate.serialize import result_from_record, result_to_record
    from fxverify.source import SourceMap

    back = result_from_record(json.loads(json.dumps(result_to_record(r))), SourceMap())
    assert [d.message for d in back.diagnostics] == [d.message for d in r.diagnostics]
