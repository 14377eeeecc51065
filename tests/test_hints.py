"""Verified hints: every hint shown discharges its finding when applied, checked here apart from
the pipeline's own re-check (the solver on every obligation, no fast proof), and never creates a
new finding (every fail file of the corpus); a finding with no verified fix says so. The three
complaints of issue 10 ("hints that keep the bug") each have a small policy: an `after` already
there, a `merge` for a configuration value, a race fix that still publishes a truncated batch."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxverify import hints
from fxverify.diagnostics import codes
from fxverify.edits import (
    After, Chain, Hint, Init, MapOpAs, Option, SizeRegion, Swap, after, hint, size_region,
)
from fxverify.gate.serialize import result_from_record, result_to_record
from fxverify.graph import PolicyGraph
from fxverify.ir import MapOpKind, Policy
from fxverify.obligations.families import generate
from fxverify.pipeline import NOT_DECIDED, CheckOptions, check, discharge, undecided_outside
from fxverify.resolve import load_policy
from fxverify.result import CheckResult, HintCheck, Verdict
from fxverify.smt.backend import Backend, SolverOptions
from fxverify.smt.caching import CachingBackend, MemoryStore, QueryCounts
from fxverify.smt.factory import open_backend
from fxverify.source import SourceMap
from fxverify.xforms import Checksum, Compress, Persist
from tests.conftest import ROOT, corpus_files

VERIFIED = f"({hints.VERIFIED})"


def _unproved(policy: Policy, backend: Backend | None = None) -> set[str]:
    """Keys of the obligations of ``policy`` that the solver does not prove (every obligation
    goes to the solver: no fast proof, nothing shared with the pipeline's re-check)."""
    own = backend is None
    backend = backend or open_backend(SolverOptions())
    try:
        r = discharge(policy, CheckOptions(verify_hints=False, prune=False), backend)
    finally:
        if own:
            backend.close()
    return {o.key for o in r.outcomes if o.verdict is not Verdict.PROVED}


def _shown_text(c: HintCheck) -> str:
    """The help a ``HintCheck`` stands for, derived from its options alone."""
    if c.status == "pair":
        return f"{hints.PAIR}{c.shown[0].text()}, and {c.shown[1].text()} {VERIFIED}"
    return f"{Hint(c.shown).text()} {VERIFIED}"


@pytest.mark.parametrize("path", corpus_files("fail"), ids=str)
def test_shown_hints_discharge_their_finding_and_add_none(path: Path) -> None:
    r = check(str(ROOT / path))
    assert r.policy is not None
    before = {o.key for o in r.outcomes if o.verdict is not Verdict.PROVED}
    # What was verified survives the result cache and a worker process as the same edits.
    assert result_from_record(json.loads(json.dumps(result_to_record(r))), r.sources).hints == r.hints
    memo: dict[frozenset, set[str]] = {}
    solver = CachingBackend(open_backend(SolverOptions()), MemoryStore(), SolverOptions(), QueryCounts())
    try:
        _check_shown(r, before, memo, solver)
    finally:
        solver.close()


def _check_shown(r: CheckResult, before: set[str], memo: dict[frozenset, set[str]], solver: Backend) -> None:
    """Each refutation of ``r``: its help is what its ``HintCheck`` shows, and applying that
    discharges it and adds no finding (``before``: what was unproved)."""
    assert r.policy is not None
    graph = PolicyGraph(r.policy)
    for d in r.diagnostics:
        if d.trace is None:
            continue
        c = r.hints[d.obligation]
        assert d.help is not None and d.trace.fix == d.help
        if c.status in ("none", "skipped"):
            # No fix is shown: the help says so plainly and names no edit.
            assert d.help.startswith(f"{hints.NONE_FOUND}: ") and "(verified" not in d.help, d.help
            continue
        # The words are the edits: the help is derived from the options applied. A cycle's fix
        # says instead how many of the obligations the cycle hid fail once it is gone.
        cycle = str(d.code) == "FX-ORD-001"
        if cycle:
            assert c.status != "pair" and d.help.startswith(f"{Hint(c.shown).text()} ({hints.UNCYCLED}; "), d.help
        else:
            assert d.help == _shown_text(c)
        # No `after` asks for an ordering the policy already has (directly or through others).
        for e in (e for o in c.shown for e in o.edits if isinstance(e, After)):
            assert not any(graph.hb_before(r.policy.edge(p).eid, r.policy.edge(e.edge).eid) for p in e.preds), d.help
        groups = [c.shown] if c.status == "pair" else [(o,) for o in c.shown]
        for opts in groups:
            key = frozenset(e for o in opts for e in o.edits)
            if key not in memo:
                edited: Policy | None = r.policy
                for o in opts:
                    edited = o.apply(edited) if edited is not None else None
                assert edited is not None, d.help
                memo[key] = _unproved(edited, solver)
            after_ = memo[key]
            assert d.obligation not in after_, (d.help, d.obligation)
            if cycle:
                # No cycle is left, and the help counts the hidden obligations that fail.
                assert not any(k.startswith("FX-ORD-001:") for k in after_), d.help
                assert d.help.endswith(f"; {len(after_)} of the obligations the cycle hid are not proved)" if after_
                                       else "; every obligation the cycle hid holds)"), (d.help, sorted(after_))
                continue
            assert after_ <= before, (d.help, sorted(after_ - before))


def _check(tmp_path: Path, text: str) -> CheckResult:
    p = tmp_path / "p.fx"
    p.write_text(text, encoding="utf-8")
    return check(str(p))


def _help(r: CheckResult, code_id: str) -> str:
    d = next(d for d in r.diagnostics if str(d.code) == code_id)
    assert d.help is not None
    return d.help


_FABRIC = """
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [rx, tx, dma_done]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space dram0 on dpu0 base 0x10_0000_0000 size 16 GiB
"""


def test_a_hint_never_asks_for_an_after_already_there(tmp_path: Path) -> None:
    """The guard already runs after the writer; what is missing is a class that lets it see the
    write. The hint used to ask for the `after` as well."""
    r = _check(tmp_path, 'policy "guard-after-writer"\n' + _FABRIC + """
region kv in hbm0 at 0x2000_0000 size 4 MiB owner gpu0
map done: array<u32, u32>[32] class eventual merge max
flow send {
  edge attn: write kv by gpu0.launch lease kv to dpu0 update done[3] = 1
  edge xmit: read kv by dpu0.tx after attn guard done[3] == 1
}
""")
    assert _help(r, "FX-MAP-003") == f"declare map `done` with `class causal` {VERIFIED}"
    assert r.policy is not None
    assert after("xmit", "attn").apply(r.policy) is None  # the edit itself refuses a repeat


def test_a_configuration_value_gets_one_writer_not_a_merge(tmp_path: Path) -> None:
    """Two blind writes of where a block lives: a sum of two devices means nothing, so the only
    fix offered is one writer at a time. Two `update`s of a counter may get `merge sum`."""
    r = _check(tmp_path, 'policy "config-value"\n' + _FABRIC + """
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 init
region a in hbm0 at 0x100_0000 size 2 MiB owner gpu0
region b in hbm0 at 0x200_0000 size 2 MiB owner gpu0
map home: hash<u32, device>[64] class linearizable
flow spill {
  edge s0: move kv -> a by gpu0.copy_done map_write home[7] = gpu0
  edge s1: move kv -> b by gpu0.launch map_write home[7] = dpu0
}
""")
    assert _help(r, "FX-MAP-002") == f"add `after s0` to `s1` {VERIFIED}"
    assert r.policy is not None
    ob = next(o for o in generate(r.policy)[1] if str(o.code) == "FX-MAP-002")
    w = next(x.witness for x in r.refutations if x.key == ob.key)
    assert ob.fix(w).text() == "add `after s0` to `s1`"  # the proposal itself has no merge
    counter = _check(tmp_path, 'policy "counter"\n' + _FABRIC + """
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 init
region a in hbm0 at 0x100_0000 size 2 MiB owner gpu0
region b in hbm0 at 0x200_0000 size 2 MiB owner gpu0
map sent: array<u32, u64>[64] class linearizable merge sub
flow spill {
  edge s0: move kv -> a by gpu0.copy_done update sent[7] = 1
  edge s1: move kv -> b by gpu0.launch update sent[7] = 1
}
""")
    assert "declare map `sent` with `merge sum`" in _help(counter, "FX-MAP-002")


def test_a_counter_on_another_devices_local_map_gets_per_device_slots_first(tmp_path: Path) -> None:
    """A DPU adds to a statistic that is `local(gpu0)`: one slot per device (`per_device`, summed
    by `aggregate`) is offered first and verified; a plain write to it gets the shared classes
    first, `per_device` last."""
    text = 'policy "stats"\n' + _FABRIC + """
region kv in hbm0 at 0x0 size 2 MiB owner gpu0 init
map stats: array<u32, u64>[4] class local(gpu0) merge sum
flow f {
  edge x: read kv by dpu0.rx OP
}
"""
    r = _check(tmp_path, text.replace("OP", "update stats[0] = 1").replace("owner gpu0 init", "owner dpu0 init"))
    assert _help(r, "FX-MAP-001").startswith("declare map `stats` with `class per_device`, or declare map `stats` with `class causal`")
    assert _help(r, "FX-MAP-001").endswith(VERIFIED)
    r = _check(tmp_path, text.replace("OP", "map_write stats[0] = 1").replace("owner gpu0 init", "owner dpu0 init"))
    assert _help(r, "FX-MAP-001").startswith("declare map `stats` with `class causal`, or declare map `stats` with `class linearizable`, or declare map `stats` with `class per_device`")


_BATCH = 'policy "batch"\n' + _FABRIC + """
region staged in dram0 at 0x10_0000_0000 size 256 KiB owner dpu0 init
region kv in hbm0 at 0x4000_0000 size 256 KiB owner dpu0
region cq in dram0 at 0x10_0100_0000 size 4 KiB owner dpu0
flow load {
  for b in 0..4 {
    edge copy[b]: move staged[b*64 KiB, +64 KiB] -> kv[b*64 KiB, +64 KiB] by dpu0.dma_done
  }
  edge done: write cq[0, +16] by dpu0.tx after copy[0] notifies copy[*] lease kv to gpu0
  edge attn: read kv by gpu0.launch after done
}
"""


def test_a_race_fix_that_still_publishes_a_truncated_batch_is_not_verified(tmp_path: Path) -> None:
    """The completion is posted after the first of four copies. Ordering the reader, or the
    notification, after one more copy removes that race but still publishes a batch two copies
    short: neither is a fix. One `after` for the whole batch is."""
    r = _check(tmp_path, _BATCH)
    assert r.policy is not None
    whole = f"add `after copy[1], copy[2], copy[3]` to `done` {VERIFIED}"
    for code_id in ("FX-ORD-002", "FX-ORD-006", "FX-INIT-001"):
        assert _help(r, code_id) == whole
    _ctx, obs = generate(r.policy)
    race = next(o for o in obs if o.key == "FX-ORD-002:copy[1]#1|attn#0")
    before = {o.key for o in r.outcomes if o.verdict is not Verdict.PROVED}
    v = hints.Verifier(r.policy, before, _recheck)
    f = hints.Finding(race, hint(after("attn", "copy[1]")), tuple(race.edges), 0)
    assert not v.discharges(f, (Option((after("attn", "copy[1]"),)),))
    assert not v.discharges(f, (Option((after("done", "copy[1]"),)),))
    assert not v.discharges(f, (Option((after("attn", "copy[1]"),)), Option((after("done", "copy[1]"),))))
    assert v.discharges(f, (Option((after("done", "copy[1]", "copy[2]", "copy[3]"),)),))


def test_a_race_fix_that_leaves_a_short_copy_is_not_verified(tmp_path: Path) -> None:
    """`publish` copies half the object and `consume` reads all of it, unordered. Ordering them
    removes the race but the reader still gets a truncated object (FX-INIT-001 on its edge):
    that `after` alone is not shown as verified."""
    r = _check(tmp_path, 'policy "short-publish"\n' + _FABRIC + """
region obj in hbm0 at 0x0 size 64 KiB owner gpu0 init
region pub in hbm0 at 0x10_0000 size 64 KiB owner gpu0
flow f {
  edge publish: move obj[0, +32 KiB] -> pub[0, +32 KiB] by gpu0.copy_done
  edge consume: read pub by gpu0.launch
}
""")
    h = _help(r, "FX-ORD-002")
    assert not h.startswith("add `after publish` to `consume` (verified"), h
    assert r.hints["FX-ORD-002:publish#1|consume#0"].status in ("pair", "none")


def _recheck(p: Policy, _blame: object = None, _stop: object = None, _family: object = None) -> hints.Rechecked:
    """A re-check that always replays its refutations, never stops early and decides every family
    (``hints.Recheck``)."""
    backend = open_backend(SolverOptions())
    try:
        res = discharge(p, CheckOptions(verify_hints=False), backend)
    finally:
        backend.close()
    blamed = {d.obligation: frozenset(d.edges) for d in res.diagnostics if d.obligation}
    return hints.Rechecked({o.key: o.code.family.name for o in res.outcomes if o.verdict is not Verdict.PROVED}, blamed)


_WRONG_FREE = ROOT / "corpus/ownership/fail/pool-waits-for-the-wrong-free.fx"


def test_a_recheck_for_one_family_leaves_the_others_unproved_before_undecided() -> None:
    """A hint's re-check judging an ownership finding (``undecided_outside``, as ``verify_hints``
    passes it): every obligation of another family that the policy left unproved is not decided
    (unknown, ``not-decided``), every other obligation gets the verdict a whole check gives it,
    and fewer queries reach the solver (without checked guesses, ``--no-prune``: with them this
    pool's skipped races and reads ask no solver anyway)."""
    policy, _ = load_policy(str(_WRONG_FREE), SourceMap())
    assert policy is not None
    backend = open_backend(SolverOptions())
    try:
        whole = discharge(policy, CheckOptions(verify_hints=False), backend)
        before = {o.key for o in whole.outcomes if o.verdict is not Verdict.PROVED}
        part = discharge(policy, CheckOptions(verify_hints=False), backend, skip_if=undecided_outside(before, "OWNERSHIP"))
        unpruned = [discharge(policy, CheckOptions(verify_hints=False, prune=False), backend, skip_if=skip).solver_calls
                    for skip in (None, undecided_outside(before, "OWNERSHIP"))]
    finally:
        backend.close()
    skipped = 0
    for w, p in zip(whole.outcomes, part.outcomes, strict=True):
        if w.key in before and w.code.family.name != "OWNERSHIP":
            assert (p.verdict, p.method) == (Verdict.UNKNOWN, NOT_DECIDED), p.key
            skipped += 1
        else:
            assert (p.key, p.verdict, p.method) == (w.key, w.verdict, w.method)
    assert skipped and part.solver_calls <= whole.solver_calls and unpruned[1] < unpruned[0]


def test_a_recheck_for_one_family_is_not_reused_to_judge_another() -> None:
    """The same edit set judged for a race (ordering) and for a use outside its allocation
    (ownership): each family gets its own re-check, and a second finding of a family reuses its
    family's."""
    r = check(str(_WRONG_FREE), CheckOptions(verify_hints=False))
    assert r.policy is not None
    before = {o.key for o in r.outcomes if o.verdict is not Verdict.PROVED}
    _ctx, obs = generate(r.policy)
    refuted = [o for o in obs if o.key in before]
    race = next(o for o in refuted if str(o.code) == "FX-ORD-002")
    use = next(o for o in refuted if str(o.code) == "FX-OWN-004")
    asked: list[object] = []

    def recording(p: Policy, blame: object = None, stop: object = None, family: object = None) -> hints.Rechecked:
        asked.append(family)
        # decides every family, and says it decided only ``family``'s: what a re-check may reuse
        return replace(_recheck(p, blame, stop), family=family)  # type: ignore[arg-type]
    v = hints.Verifier(r.policy, before, recording)
    fix = (Option((after("take[4]", "free[0]"),)),)
    for ob in (race, race, use):
        v.unproved(fix, hints.Finding(ob, hint(after("take[4]", "free[0]")), tuple(ob.edges), 0))
    assert asked == ["ORDERING", "OWNERSHIP"]


def test_a_hint_that_keeps_the_bug_is_replaced() -> None:
    """In realloc-before-free, ordering `attn0` after the second alloc discharges the use's own
    finding but leaves the double allocation of the same block: not a fix. The search finds the
    one that is (the second alloc after the free)."""
    policy, diags = load_policy(str(ROOT / "corpus/ownership/fail/realloc-before-free.fx"), SourceMap())
    assert policy is not None and not diags
    _ctx, obs = generate(policy)
    ob = next(o for o in obs if o.key == "FX-OWN-004:attn0|blk[1]")
    v = hints.Verifier(policy, _unproved(policy), _recheck)
    bad = hint(after("attn0", "take1"))
    f = hints.Finding(ob, bad, tuple(ob.edges), 0)
    assert not v.discharges(f, bad.options)
    text, c = hints.verify(v, f, [f])
    assert text == f"add `after free0` to `take1` {VERIFIED}" and c.status == "verified"


def test_no_verified_fix_is_said_plainly() -> None:
    """A persist into a volatile controller memory buffer has no edit fxverify could propose (the
    fix is another destination): no hint is shown, and the help says so."""
    r = check(str(ROOT / "corpus/incidents/fail/ckpt-persisted-into-controller-memory.fx"))
    h = _help(r, "FX-XF-003")
    assert h.startswith(f"{hints.NONE_FOUND}: ") and "add" not in h.split(":", 1)[1].split("fxverify")[0]
    d = next(d for d in r.diagnostics if str(d.code) == "FX-XF-003")
    assert d.trace is not None and d.trace.why  # the rule is still stated


def test_edits_say_and_do_the_same_thing() -> None:
    """A few edits on a corpus policy: each applies once (a repeat does not apply), and its text
    is the clause it adds."""
    pol, _ = load_policy(str(ROOT / "corpus/incidents/fail/ckpt-shard-slots-sized-by-average-ratio.fx"), SourceMap())
    assert pol is not None
    grow = size_region(pol, pol.region("slot[0]"), 8421376)
    assert isinstance(grow, SizeRegion) and grow.spacing == 8421376
    assert grow.text() == "declare `slot[*]` with `size 8224 KiB`, its instances 8224 KiB apart"
    edited = grow.apply(pol)
    assert edited is not None
    assert [(r.base, r.size) for r in edited.regions if r.family == "slot"] == [(i * 8421376, 8421376) for i in range(4)]
    assert all(e.dst is not None and e.dst.nbytes == 8421376 for e in edited.edges if e.family == "save")
    assert grow.apply(edited) is None  # already that size
    chain = Chain("save[0]", (Compress("zstd"), Checksum("crc32c"), Persist()))
    assert chain.text() == "write the chain of `save[0]` as `transform compress(zstd) |> checksum(crc32c) |> persist`"
    assert chain.apply(pol) is None  # the chain is already that
    assert Init("state").apply(pol) is None  # already `init`
    assert After("save[1]", ("save[0]",)).apply(pol) is not None
    assert After("save[1]", ("save[0]", "save[0]")).apply(pol) is None
    pol2, _ = load_policy(str(ROOT / "corpus/ordering/fail/reused-block-read-before-write.fx"), SourceMap())
    assert pol2 is not None
    swapped = Swap("attn1", "fill1").apply(pol2)
    assert swapped is not None
    assert swapped.edge("fill1").after == ("take1",) and swapped.edge("attn1").after == ("fill1",)
    assert swapped.edge("free1").after == ("attn1",)
    assert Swap("fill1", "attn1").apply(pol2) is None  # `attn1` does not run after `fill1`
    pol3, _ = load_policy(str(ROOT / "corpus/maps/fail/per-gpu-counter-read-as-one.fx"), SourceMap())
    assert pol3 is not None
    agg = MapOpAs("report", "kv_sent", 0, MapOpKind.AGGREGATE)
    done = agg.apply(pol3)
    assert done is not None and agg.apply(done) is None and agg.text() == "use `aggregate kv_sent[0]` on `report`"


_RX = """policy "rx-page-recycled-early"
fabric {
  device nic0: nic hooks [rx, refill]
  device cpu0: cpu hooks [napi, app, recycle]
  link nic0 -- cpu0 : pcie ordered
}
space wire on nic0 size 1 GiB init
space host0 on cpu0 base 0x1_0000_0000 size 1 GiB
region pkt[i in 0..2] in wire at i * 4 KiB size 4 KiB owner nic0
region page[p in 0..2] in host0 at 0x1_0000_0000 + p * 4 KiB size 4 KiB owner cpu0 pooled
region sock in host0 at 0x1_1000_0000 size 64 KiB owner cpu0
flow rx {
  edge post0: alloc page[0] to nic0 by nic0.refill
  edge dma0: move pkt[0] -> page[0] by nic0.rx after post0 handoff page[0]: nic0 -> cpu0
  edge head0: move page[0][0, +128] -> sock[0, +128] by cpu0.napi after dma0
  edge frag0: move page[0][128, +3968] -> sock[128, +3968] by cpu0.app after dma0
  edge rec0: release page[0] return_pool by cpu0.recycle after head0
  edge post1: alloc page[0] to nic0 by nic0.refill after rec0
  edge dma1: move pkt[1] -> page[0] by nic0.rx after post1 handoff page[0]: nic0 -> cpu0
}
"""


def test_a_hint_never_moves_a_use_into_the_next_allocation(tmp_path: Path) -> None:
    """A page recycled while a fragment still reads it: ordering the read after the next packet's
    DMA proves the policy, but reads the next packet's bytes (another allocation of the page).
    That edit is rejected before any check; the fix shown keeps the page until the read is done."""
    r = _check(tmp_path, _RX)
    for code in ("FX-ORD-002", "FX-OWN-004"):
        h = _help(r, code)
        assert "`after dma1` to `frag0`" not in h and "to `frag0`" not in h, h
        assert h == f"add `after frag0` to `rec0` {VERIFIED}", h
    pol = r.policy
    assert pol is not None
    v = hints.Verifier(pol, set(), _recheck)
    moved = After("frag0", ("dma1",)).apply(pol)
    assert moved is not None and not v.same_allocations(moved)
    kept = After("rec0", ("frag0",)).apply(pol)
    assert kept is not None and v.same_allocations(kept)


_SEND_REFILL = """policy "send-buffer-refill"
fabric {
  device gpu0: gpu hooks [launch]
  device nic0: nic hooks [tx, dma_done]
  link gpu0 -- nic0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region sbuf in hbm0 at 0x1000_0000 size 1 MiB owner gpu0 dtype bf16
flow f {
  edge fill0: write sbuf by gpu0.launch stream s lease sbuf to nic0
  edge send0: read sbuf by nic0.tx after fill0
  edge fill1: write sbuf by gpu0.launch stream s lease sbuf to nic0
  edge send1: read sbuf by nic0.tx after fill1
}
"""


def test_a_hint_never_makes_a_read_read_a_later_writes_data(tmp_path: Path) -> None:
    """An RDMA send buffer refilled before its send completed: `send0` after `send1` (two edges of
    the NIC) proves the policy, but `send0` then sends `fill1`'s data instead of `fill0`'s. That
    edit is rejected before any check; the fix shown makes the refill wait for the send."""
    r = _check(tmp_path, _SEND_REFILL)
    h = _help(r, "FX-ORD-002")
    assert h.startswith("add `after send0` to `fill1`") and h.endswith(VERIFIED), h
    pol = r.policy
    assert pol is not None
    v = hints.Verifier(pol, set(), _recheck)
    later = After("send0", ("send1",)).apply(pol)
    assert later is not None and v.reads_later_data(later)
    kept = After("fill1", ("send0",)).apply(pol)
    assert kept is not None and not v.reads_later_data(kept)
    assert v.reads_later_data(After("send0", ("fill1",)).apply(pol))  # type: ignore[arg-type]
    # A read that no write reached may be ordered after any write (its `after` was forgotten).
    bare = replace(pol, edges=tuple(replace(e, after=()) if e.name == "send0" else e for e in pol.edges))
    unordered = hints.Verifier(bare, set(), _recheck)
    assert not unordered.reads_later_data(After("send0", ("fill1",)).apply(bare))  # type: ignore[arg-type]


_ZERO_GRAD = """policy "zero-grad-before-step"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region g[i in 0..4] in hbm0 at i * 1 MiB size 1 MiB owner gpu0 dtype fp32 init
region acc in hbm0 at 0x100_0000 size 1 MiB owner gpu0 dtype fp32 init
region w in hbm0 at 0x200_0000 size 1 MiB owner gpu0 dtype fp32 init
flow train {
  for i in 0..4 {
    edge mb[i]: reduce(sum) g[i] -> acc by gpu0.launch stream main
  }
  edge zero: write acc by gpu0.launch stream main
  edge step: move acc -> w by gpu0.launch stream opt after mb[*]
}
"""


def test_a_hint_never_makes_a_read_lose_every_write_it_read(tmp_path: Path) -> None:
    """Gradients zeroed for the next step before the optimizer read their sum (a fresh incident
    writer's case): `step` after `zero` ends the race, but `step` then reads the zeros, not the
    sum of `mb[*]`; the fix shown makes the zeroing wait for the step."""
    r = _check(tmp_path, _ZERO_GRAD)
    h = _help(r, "FX-ORD-002")
    assert h.startswith("add `after step` to `zero`") and h.endswith(VERIFIED), h
    pol = r.policy
    assert pol is not None
    v = hints.Verifier(pol, set(), _recheck)
    assert v.reads_later_data(After("step", ("zero",)).apply(pol))  # type: ignore[arg-type]
    assert not v.reads_later_data(After("zero", ("step",)).apply(pol))  # type: ignore[arg-type]


def test_a_cycle_gets_a_fix_that_lets_the_hidden_obligations_be_checked(tmp_path: Path) -> None:
    """With a happens-before cycle no other obligation is checked, so dropping the `after` that
    closes it brings the race the cycle hid to light: that is no new finding. The fix is shown,
    with the count of hidden obligations that are then not proved."""
    r = _check(tmp_path, 'policy "c"\nfabric {\n  device gpu0: gpu hooks [launch]\n}\n'
                         'space hbm0 on gpu0 size 1 GiB init\nregion x in hbm0 at 0x0 size 4 KiB owner gpu0\n'
                         'flow f {\n  edge a: write x by gpu0.launch\n  edge b: write x by gpu0.launch\n'
                         '  edge c: read x[0, +1] by gpu0.launch after c\n}\n')
    h = _help(r, "FX-ORD-001")
    assert h.startswith(f"remove `after c` from `c` ({hints.UNCYCLED}; ") and "are not proved)" in h, h


def test_a_borrowed_option_leaves_its_findings_condition_behind(tmp_path: Path) -> None:
    """A read that runs past its region into a pooled block: FX-OWN-004 borrows FX-INIT-001's
    option (shrink the footprint), but not its condition ("only if it needs no more than the bytes
    written before it"), which speaks of the other finding."""
    r = _check(tmp_path, 'policy "b"\nfabric {\n  device gpu0: gpu hooks [launch]\n}\n'
                         'space hbm0 on gpu0 size 80 GiB\nregion kv in hbm0 at 0x0 size 1 MiB owner gpu0 init\n'
                         'region blk[b in 0..4] in hbm0 at 1 GiB + b * 64 KiB size 64 KiB owner gpu0 pooled\n'
                         'flow f {\n  edge a: read kv[0, +0xFFFFFFFFFFFFFFFF] by gpu0.launch\n}\n')
    assert "only if" in _help(r, "FX-INIT-001")
    assert _help(r, "FX-OWN-004") == f"shrink the footprint of `a` to `kv` {VERIFIED}"


def test_a_release_after_the_wrong_edge_waits_for_the_last_uses_of_its_allocation(tmp_path: Path) -> None:
    """A block pool's release ordered after the DMA instead of the reads: both reads may overlap
    the next `alloc`. Each read's finding gets the same verified fix, the release after the last
    uses of its allocation (both reads, unordered between them), not after its own read alone
    (which leaves the other read's finding on the release, so it never verified: a generated
    three-request prefill with one such free got no verified hint on 34 findings)."""
    r = _check(tmp_path, _RX.replace("cpu0.recycle after head0", "cpu0.recycle after dma0"))
    fixes = {d.help for d in r.diagnostics if str(d.code) == "FX-OWN-004"}
    assert len([d for d in r.diagnostics if str(d.code) == "FX-OWN-004"]) >= 2, [d.message for d in r.diagnostics]
    assert fixes == {f"add `after head0, frag0` to `rec0` {VERIFIED}"}, fixes


_DOORBELL = """policy "doorbell-before-descriptor"
fabric {
  device cpu0: cpu hooks [run]
  device nic0: nic hooks [tx, doorbell, dma_done]
  link cpu0 -- nic0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
space bar0 on nic0 base 0x20_0000_0000 size 1 MiB
region ring in host0 at 0x1_0000_0000 size 4 KiB owner cpu0
region db in bar0 at 0x20_0000_0000 size 8 owner cpu0
region nicq in bar0 at 0x20_0001_0000 size 4 KiB owner nic0
flow tx {
  edge post: write ring[0, +64] by cpu0.run lease ring to nic0
  edge ring_db: write db by cpu0.run
  edge fetch: move ring[0, +64] -> nicq[0, +64] by nic0.doorbell after ring_db
}
"""


def test_a_hint_orders_what_the_device_can_observe(tmp_path: Path) -> None:
    """The NIC fetches a descriptor when the doorbell rings: it cannot see the CPU's store
    itself, so `after post` on `fetch` is a wait no NIC performs. The hint orders the doorbell
    after the descriptor store on the CPU (a write barrier), the wait the NIC observes."""
    from fxverify.observe import OBSERVED, SAME, UNOBSERVED, Observers

    r = _check(tmp_path, _DOORBELL)
    assert _help(r, "FX-ORD-002") == f"add `after post` to `ring_db` {VERIFIED}"
    pol = r.policy
    assert pol is not None
    obs = Observers(pol, PolicyGraph(pol))
    assert After("ring_db", ("post",)) in obs.rewrites(After("fetch", ("post",)))
    db_edit, direct = After("ring_db", ("post",)).apply(pol), After("fetch", ("post",)).apply(pol)
    assert db_edit is not None and direct is not None
    assert obs.rank(db_edit)[0] == SAME
    assert obs.rank(direct) == (UNOBSERVED, [("post", "fetch")])
    assert obs.observes(pol.edge("ring_db").eid, "nic0")  # a write into the NIC's BAR
    assert OBSERVED == 1


_LAYERS = """policy "layerwise-load-off-by-one"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [run]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region hkv[l in 0..3] in host0 at 0x1_0000_0000 + l * 4 MiB size 4 MiB owner gpu0 dtype bf16 init
region kv[l in 0..3] in hbm0 at 0x4000_0000 + l * 4 MiB size 4 MiB owner gpu0 dtype bf16
region h[l in 0..4] in hbm0 at 0x8000_0000 + l * 1 MiB size 1 MiB owner gpu0 dtype bf16
alias_set hs = [h[*]]
flow fwd {
  edge emb: write h[0] by gpu0.launch stream compute
  for l in 0..3 {
    edge load[l]: move hkv[l] -> kv[l] by gpu0.copy_done stream copy
    if l == 0 {
      edge attn[l]: move kv[l][0, +1 MiB] -> h[l + 1] by gpu0.launch stream compute after load[l]
    } else {
      edge attn[l]: move kv[l][0, +1 MiB] -> h[l + 1] by gpu0.launch stream compute after load[l - 1]
    }
  }
}
"""


def test_a_hint_on_a_family_instance_is_written_on_its_declaration(tmp_path: Path) -> None:
    """An ordering verified on `attn[1]` is shown as the clause the loop's declaration takes
    (`after load[l]` on `attn[l]`), checked for every instance of that declaration."""
    r = _check(tmp_path, _LAYERS)
    assert _help(r, "FX-ORD-002") == f"add `after load[l]` to `attn[l]` {VERIFIED}"
    c = next(c for k, c in r.hints.items() if k.startswith("FX-ORD-002"))
    (ed,) = c.shown[0].edits
    pol = r.policy
    assert pol is not None
    edited = ed.apply(pol)
    assert edited is not None
    # Only the instances of the `else` declaration get it; `attn[0]` already waits on `load[0]`.
    assert [edited.edge(f"attn[{i}]").after for i in range(3)] == [
        ("load[0]",), ("load[0]", "load[1]"), ("load[1]", "load[2]")]


def test_family_forms_of_an_instance_ordering() -> None:
    """``generalise`` writes a predecessor with the declaration's index variables; a
    ``FamilyAfter`` that would make an instance wait on a missing instance does not apply."""
    from fxverify.edits import FamilyAfter, family_forms, generalise

    assert generalise(("b",), "free[3]", "pull[3]") == "pull[b]"
    assert generalise(("l",), "attn[2]", "load[1]") == "load[l - 1]"
    assert generalise(("l",), "attn[2]", "abort") == "abort"
    assert generalise(("a", "b"), "x[1][2]", "y[2][5]") == "y[b, 5]"
    assert generalise(("b",), "free[3]", "not a name") is None
    # a literal index of the declaration stays a literal; a variable keeps its place
    assert generalise(("l", "0"), "free[2][0]", "attn[2][0]") == "attn[l, 0]"
    assert generalise(("a", "b"), "x[1][1]", "y[1][1]") == "y[a, b]"
    assert generalise(("l", ""), "free[2][0]", "attn[2][0]") == "attn[l, l - 2]"
    # an index every instance of the predecessor's family shares stays a number: the rank of a
    # family declared once per rank, not the layer that happens to have its value here
    assert generalise(("l", "0", "0"), "rs_a[0][0][0]", "embed[0]", fixed={0}) == "embed[0]"
    # positional: an index in the place of a variable is that variable with an offset, before
    # another variable that happens to have the same value
    assert generalise(("q", "l"), "take[2][0]", "free[0][0]") == "free[l, l]"
    assert generalise(("q", "l"), "take[2][0]", "free[0][0]", positional=True) == "free[q - 2, l]"
    assert generalise(("q", "l"), "take[2][0]", "free[4][0]", positional=True) == "free[q + 2, l]"
    assert generalise(("q", "l"), "take[2][0]", "free[0]", positional=True) == "free[l]"  # other arity
    pol, _ = load_policy(str(ROOT / "corpus/ordering/fail/reused-block-read-before-write.fx"), SourceMap())
    assert pol is not None
    assert family_forms(pol, After("attn1", ("fill1",))) == []  # plain edges: no family form
    missing = FamilyAfter("attn1", "attn1", "nothing", (), "fill1")
    assert missing.apply(pol) is None


def test_a_pool_slot_fix_is_written_with_the_offset_of_the_slot_s_last_holder() -> None:
    """Three requests share two pool slots (request q takes slot q % 2) and `take[q, l]` of
    request 2 does not wait for request 0's free. At the instance shown, `take[2][0]` after
    `free[0][0]`, the layer `l` is 0 too, so the predecessor's first index could be written `l`:
    `after free[l, l]` orders each layer after another slot's free and verifies only because the
    requests run one after the other. Every finding shows the ordering that frees the block it
    allocates, `after free[q - 2, l]`; the out-of-order allocation says which release it may
    precede."""
    r = check(str(ROOT / "corpus/ownership/fail/pool-slot-handed-out-before-free.fx"))
    fix = "add `after free[q - 2, l]` to `take[q, l]`"
    for d in r.diagnostics:
        assert d.help is not None and d.help.startswith(fix) and d.help.endswith(VERIFIED), (d.code, d.help)
    assert {str(d.code) for d in r.diagnostics} == {"FX-ORD-002", "FX-INIT-001", "FX-OWN-004", "FX-OWN-006"}
    assert next(d.message for d in r.diagnostics if str(d.code) == "FX-OWN-006") == (
        "`take[2][0]` may allocate `kv[0][0]` before `free[0][0]` releases it")


def test_the_release_an_early_allocation_may_precede_is_a_related_location(tmp_path: Path) -> None:
    """Five requests on two pool slots, none waiting for a free: slot 0's events in HB's linear
    extension start `take[0]`, `take[2]`, `take[4]`, so the neighbours of the offending
    `take[2]` are two allocations. The release it may precede, `free[0]`, which the message
    names, is shown among the related locations too."""
    src = (ROOT / "corpus/ownership/fail/pool-slot-handed-out-before-free.fx").read_text()
    assert src.count("for q in 0..3") == 1
    path = tmp_path / "pool5.fx"
    path.write_text(src.replace("for q in 0..3", "for q in 0..5"))
    early = next(d for d in check(str(path)).diagnostics if str(d.code) == "FX-OWN-006")
    assert early.message == "`take[2][0]` may allocate `kv[0][0]` before `free[0][0]` releases it"
    assert [lab.message for lab in early.related] == [
        "`take[0][0]` allocates it", "`take[4][0]` allocates it", "`free[0][0]` releases it"]


def test_a_hint_does_not_order_what_the_waiting_device_already_observes() -> None:
    """Receive completions assumed in order: the CPU sees the second buffer land in its own
    memory, so `after land1` on `proc1` is a wait it performs. Moving that wait onto the NIC
    (`land0` after `land1`) would impose the very order the incident assumed wrongly."""
    r = check(str(ROOT / "corpus/incidents/fail/rdma-recv-completions-assumed-in-order.fx"))
    for code in ("FX-ORD-002", "FX-OWN-001"):
        assert "to `land0`" not in _help(r, code), _help(r, code)
    assert _help(r, "FX-ORD-002") == f"add `after land1` to `proc1` {VERIFIED}"


@pytest.mark.parametrize("path", corpus_files("fail")[::4], ids=str)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data())
def test_orderings_added_are_ranked_without_applying_as_when_applied(path: Path, data: st.DataObject) -> None:
    """``Observers.added_orderings`` (the orderings a fix made of ``after`` edits adds, without
    applying it, which ``Verifier.rank`` uses) is ``None`` exactly when applying the edits fails,
    else the orderings of the applied policy in the same order, with the same rank: random
    ``after`` edits, between any edges of a corpus policy, including ones that do not apply."""
    from fxverify.observe import Observers

    pol = _loaded(path)
    names = [e.name for e in pol.edges] + ["no-such-edge"]
    obs = Observers(pol, PolicyGraph(pol))
    edit = st.builds(lambda e, ps: After(e, tuple(ps)), st.sampled_from(names),
                     st.lists(st.sampled_from(names), max_size=3))
    edits = data.draw(st.lists(edit, min_size=1, max_size=3))
    applied = Option(tuple(edits)).apply(pol)
    fast = obs.added_orderings(edits)
    assert (fast is None) == (applied is None)
    if applied is not None:
        assert fast == obs.orderings(applied)
        assert obs.rank_orderings(pol, fast) == obs.rank(applied)


def _loaded(path: Path) -> Policy:
    pol, _ = load_policy(str(ROOT / path), SourceMap())
    assert pol is not None
    return pol


def test_a_hint_on_a_declaration_with_a_literal_index_is_written_on_the_declaration(tmp_path: Path) -> None:
    """Generated policies declare one family per rank with the rank as a literal (``edge
    free[l, 0]``): the fix of a block returned to the pool while a layer's attention reads it is
    the ordering of the whole declaration, ``after attn[l, 0]``, verified in that form, not the
    ordering of one instance beside thousands more."""
    src = tmp_path / "pool.fx"
    src.write_text('''policy "pool"
fabric {
  device gpu0: gpu hooks [launch, free]
}
space hbm0 on gpu0 size 1 GiB
region kv0[l in 0..3] in hbm0 at l * 4096 size 4096 owner gpu0
flow f {
  for l in 0..3 {
    edge fill[l, 0]: write kv0[l] by gpu0.launch
    edge attn[l, 0]: read kv0[l] by gpu0.launch after fill[l, 0]
    edge free[l, 0]: release kv0[l] return_pool by gpu0.free after fill[l, 0]
  }
}
''')
    r = check(str(src))
    assert _help(r, "FX-OWN-004") == f"add `after attn[l, 0]` to `free[l, 0]` {VERIFIED}"


def test_an_instance_fix_whose_siblings_keep_the_bug_is_shown_on_the_family(tmp_path: Path) -> None:
    """Every request evicts its LoRA slot after the adapter load, not after the batch reading
    it. `after batch[0]` on `evict[0]` discharges the finding shown, but leaves the same finding
    on the next tenant's edges (`batch[4]` and `take[8]`), so alone it is no fix; its family form
    `after batch[r]` on `evict[r]`, applied to every instance, discharges all. Each finding
    (the race, the read of a stale slot, the use after release) shows that form, verified."""
    src = (ROOT / "corpus/ownership/fail/lora-slot-evicted-before-batch.fx").read_text()
    assert src.count("if r == 5 {") == 1
    path = tmp_path / "every-evict-early.fx"
    path.write_text(src.replace("if r == 5 {", "if r >= 0 {"))
    r = check(str(path))
    assert {str(d.code) for d in r.diagnostics} == {"FX-ORD-002", "FX-INIT-001", "FX-OWN-004"}
    for d in r.diagnostics:
        assert d.help == f"add `after batch[r]` to `evict[r]` {VERIFIED}", (d.code, d.help)


def test_an_invalidate_a_dma_engine_needs_goes_on_an_edge_of_the_host_it_sits_behind() -> None:
    """Host B's NIC reads non-coherent CXL memory through host B's cache, which holds a stale
    line of the record: the NIC cannot invalidate host B's lines, so the fix is an invalidate
    on host B's last edge between host A's write-back and the send (`seen`), not on the send."""
    r = check(str(ROOT / "corpus/ordering/fail/nic-behind-host-sends-stale-line.fx"))
    assert _help(r, "FX-ORD-005") == f"add `invalidate rec` to `seen` {VERIFIED}"


def test_a_counter_incremented_by_a_load_and_a_store_is_fixed_with_an_atomic_add() -> None:
    """Two CPUs' XDP programs each load a map counter and store it plus one: the verified fix is
    the atomic add on both (`update` merging with `sum`), not serialising the two programs."""
    r = check(str(ROOT / "corpus/maps/fail/xdp-counter-load-and-store.fx"))
    assert _help(r, "FX-MAP-002").startswith(
        "use `update pkts[0]` on `q0` and use `update pkts[0]` on `q1` and declare map `pkts` with `merge sum`: "
        "an atomic add"), _help(r, "FX-MAP-002")
    assert _help(r, "FX-MAP-002").endswith(VERIFIED)


def test_an_off_by_one_pool_wait_is_fixed_on_the_loop_for_every_finding() -> None:
    """Request i waits for `free[i - 3]` instead of the freeing of its own block, `free[i - 4]`.
    Each finding is a different obligation (a race, a stale read, a use during the next
    allocation, an allocation before the free), and an edit of one request leaves the same bug
    in every later one, or, for a block's lifetime (one obligation per block), leaves the
    obligation refuted: each finding shows the loop's line, verified."""
    r = check(str(ROOT / "corpus/ownership/fail/pool-waits-for-the-wrong-free.fx"))
    assert {str(d.code) for d in r.diagnostics} == {"FX-ORD-002", "FX-INIT-001", "FX-OWN-004", "FX-OWN-006"}
    for d in r.diagnostics:
        assert d.help is not None and d.help.startswith("add `after free[i - 4]` to `take[i]`") and d.help.endswith(VERIFIED), \
            (d.code, d.help)


def test_a_read_of_a_reused_block_before_its_fill_is_fixed_by_swapping_them() -> None:
    """Request 1 reads its freshly allocated block before its own fill writes it. Swapping the
    read and the fill makes the read read the fill, a write declared after it; that is no new
    data taken from a later write, since before the swap the only write that reached the read
    (request 0's) belonged to the block's previous allocation and defined nothing for it."""
    r = check(str(ROOT / "corpus/ordering/fail/reused-block-read-before-write.fx"))
    assert _help(r, "FX-INIT-001") == f"swap `attn1` and `fill1` in their chain (`fill1` first, `attn1` after it) {VERIFIED}"


_THIRD_PARTY = """
policy "third-party-hints"
fabric {
  device cpu0: cpu hooks [launch]
  device sw0: pcie_switch
  device gpu0: gpu hooks [launch]
  device nic0: nic hooks [rx, tx]
  link up = cpu0 -- sw0 : pcie ordered
  link gp = sw0 -- gpu0 : pcie posted
  link np = sw0 -- nic0 : pcie ordered
  link side = cpu0 -- gpu0 : pcie ordered
}
space ddr0 on cpu0 size 64 GiB
space hbm0 on gpu0 size 80 GiB
region src in ddr0 at 0x1000_0000 size 4 KiB owner nic0 init
region back in ddr0 at 0x2000_0000 size 4 KiB owner nic0
region buf in hbm0 at 0x1000_0000 size 4 KiB owner nic0
flow f {
  edge put: move src -> buf by nic0.rx
  edge get: move buf -> back by nic0.tx after put
}
"""


@pytest.mark.parametrize("side", [True, False], ids=["two-paths", "behind-a-switch"])
def test_a_route_a_hint_pins_on_a_third_party_copy_runs_through_its_driver(tmp_path: Path, side: bool) -> None:
    """A NIC copying host memory into GPU memory and back (third-party copies, its engine at
    neither end), over a posted link to the GPU: a hint that pins a route (``route_avoiding``, the
    same-route and read-back pins) names only routes through the NIC, as the resolver demands
    (FX-TYP-006). A route from the host straight to the GPU used to be offered as verified, or to
    stop the check with FX-INT-001 when the edit was checked again."""
    import re

    text = _THIRD_PARTY if side else _THIRD_PARTY.replace("  link side = cpu0 -- gpu0 : pcie ordered\n", "")
    r = _check(tmp_path, text)
    assert r.policy is not None and not [d.message for d in r.diagnostics if d.code is codes.INT_001]
    assert {d.code for d in r.diagnostics} == {codes.ORD_003}, [d.message for d in r.diagnostics]
    pins = [m for d in r.diagnostics for m in re.findall(r"pin `via ([^`]+)` on `([^`]+)`", d.help or "")]
    for route, name in pins:
        ends = {dev for n in route.split(", ") for ln in [r.policy.link(n)] for dev in (ln.a, ln.b)}
        assert r.policy.edge(name).device in ends, (route, name)
    assert all("verified" in (d.help or "") for d in r.diagnostics), [d.help for d in r.diagnostics]
