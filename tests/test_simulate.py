"""The concrete simulator and the exact footprint arithmetic, against brute force."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.ir import Checksum, Compress, Filter, Footprint, Gather, Quantize, Scatter
from fxverify.obligations.transforms import bound_term
from fxverify.replay.footprints import shared_byte
from fxverify.replay.simulate import Simulator
from fxverify.pipeline import CheckOptions, check
from fxverify.replay.static_rules import worst_case_output
from fxverify.resolve import load_policy
from fxverify.source import SourceMap
from fxverify.result import Verdict
from fxverify.smt.terms import const, evaluate
from fxverify.vocab import CODECS

from tests.conftest import ROOT, corpus_files
from tests.policies import policies


@st.composite
def fps(draw):
    elem = draw(st.integers(1, 12))
    stride = draw(st.integers(1, 24))
    return Footprint("r", "s", draw(st.integers(0, 40)), elem, stride, draw(st.integers(1, 6)))


def _bytes(fp: Footprint) -> set[int]:
    return {fp.base + k * fp.stride + o for k in range(fp.count) for o in range(fp.elem)}


@settings(max_examples=400, deadline=None)
@given(fps(), fps())
def test_shared_byte_is_the_lowest_common_byte(a: Footprint, b: Footprint) -> None:
    common = _bytes(a) & _bytes(b)
    assert shared_byte(a, b) == (min(common) if common else None)


@settings(max_examples=300, deadline=None)
@given(fps(), st.integers(0, 200), st.integers(0, 60))
def test_membership_and_meets(fp: Footprint, addr: int, width: int) -> None:
    bs = _bytes(fp)
    assert fp.contains(addr) == (addr in bs)
    if addr in bs:
        k = fp.element_of(addr)
        assert k is not None and 0 <= addr - fp.base - k * fp.stride < fp.elem
        assert all(not (0 <= addr - fp.base - j * fp.stride < fp.elem) for j in range(k))
    assert fp.meets(addr, addr + width) == any(addr <= x < addr + width for x in bs)


XFS = [
    Compress("lz4"), Compress("zstd"), Compress("deflate"), Compress("snappy"), Quantize("bf16", "fp8", 128),
    Filter(37), Scatter(3), Gather(4), Checksum("crc32c"),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(XFS), max_size=3), st.integers(0, 1 << 22))
def test_size_bounds_agree_between_encoder_and_simulator(chain, n) -> None:
    """The encoder's bound terms and the simulator's integer arithmetic agree (codec bounds come from
    one formula in ``vocab.CODECS``, evaluated over terms and over integers; the other transforms
    are written twice, independently)."""
    t = const(n)
    for x in chain:
        t = bound_term(x, t)
    assert evaluate(t, {}) == worst_case_output(tuple(chain), n)


def test_lz4_bound_matches_lz4_h() -> None:
    # LZ4_COMPRESSBOUND(isize) = isize + isize/255 + 16
    assert worst_case_output((XFS[0],), 4 << 20) == (4 << 20) + (4 << 20) // 255 + 16


def test_codec_bounds_match_their_headers() -> None:
    """Values computed by hand from each codec's own macro or function."""
    # LZ4_COMPRESSBOUND(65536) = 65536 + 257 + 16 (lz4.h)
    assert CODECS["lz4"].bound(65536) == 65809
    # ZSTD_COMPRESSBOUND: below 128 KiB the margin ((128 KiB - n) >> 11) applies (zstd.h)
    assert CODECS["zstd"].bound(1000) == 1000 + 3 + 63
    assert CODECS["zstd"].bound(1 << 20) == (1 << 20) + 4096
    # compressBound(n) = n + (n >> 12) + (n >> 14) + (n >> 25) + 13 (zlib compress.c)
    assert CODECS["deflate"].bound(1 << 26) == (1 << 26) + (1 << 14) + (1 << 12) + 2 + 13
    # MaxCompressedLength(n) = 32 + n + n / 6 (snappy.cc)
    assert CODECS["snappy"].bound(600) == 732


@settings(max_examples=60, deadline=None)
@given(policies(max_edges=4))
def test_linear_extensions_respect_happens_before(policy) -> None:
    sim = Simulator(policy)
    n = 0
    for sched in sim.linear_extensions(list(range(len(policy.edges)))):
        assert sim.check_schedule(sched) is None
        n += 1
    if all(not e.after and e.stream is None for e in policy.edges):
        from math import factorial

        k = len(policy.edges)
        assert n == factorial(2 * k) // 2 ** k


def test_a_write_back_of_another_space_at_the_same_addresses_is_other_memory(tmp_path) -> None:
    """The cache model keys lines by space and address: a write-back of `local` (cpu0's DRAM, at
    the numeric addresses of the shared header) does not publish the header, so the reader's
    FX-ORD-005 is refuted and its counterexample replays (no FX-INT-001); writing back the header
    itself proves it."""
    text = (ROOT / "corpus/ordering/ok/cxl-header-writeback-invalidate.fx").read_text()
    text = text.replace("noncoherent\n", "noncoherent\nspace dram0 on cpu0 base 0x40_0000_0000 size 1 GiB\n"
                        "region local in dram0 at 0x40_0000_0000 size 4 KiB owner cpu0\n", 1)
    for wb, want in (("local", Verdict.REFUTED), ("hdr", Verdict.PROVED)):
        p = tmp_path / f"{wb}.fx"
        p.write_text(text.replace("writeback hdr[0, +64]", f"writeback {wb}[0, +64]"))
        r = check(str(p), CheckOptions(verify_hints=False))
        assert not [d for d in r.diagnostics if d.code is codes.INT_001], [d.message for d in r.diagnostics]
        assert {o.verdict for o in r.outcomes if o.code is codes.ORD_005} == {want}


_OWNER_POLICIES = ("ownership/ok/handoff-round-trip.fx", "ownership/ok/block-pool-reuse.fx",
                   "ownership/ok/free-block-during-pool-handoff.fx", "ownership/ok/one-edge-two-owners.fx")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_OWNER_POLICIES), st.data())
def test_owner_timeline_answers_as_owners_at(name: str, data: st.DataObject) -> None:
    """The indexed owners a trace asks for (``World.owner_timeline``) are ``owners_at``'s, for any
    subset of timed edges, with ties in finish times, at every finish time, between them and
    after all."""
    pol = load_policy(str(ROOT / "corpus" / name), SourceMap())[0]
    assert pol is not None
    sim = Simulator(pol)
    sched = {}
    for e in pol.edges:
        if data.draw(st.booleans(), label=f"timed {e.name}"):
            s = data.draw(st.integers(0, 6))
            sched[e.eid] = (s, s + data.draw(st.integers(1, 3)))
    ids = sorted(sched)
    timeline = sim.owner_timeline(ids, sched)
    times = sorted({f for _, f in sched.values()} | {0})
    for r in pol.regions:
        for t in [x + d for x in times for d in (-0.5, 0, 0.5)] + [float("inf")]:
            assert timeline.at(r.name, t) == sim.owners_at(r.name, t, ids, sched), (r.name, t)


def _each_code_alone_matches_every_rule(sim: Simulator, sched: dict) -> None:
    """``run(sched, code)`` is exactly the violations of ``code`` among ``run(sched)``, for every
    code: the table of which rules report which codes (``schedule_rules._GROUPS``) misses none."""
    every = sim.run(sched)
    for code in {v.code for v in every} | {codes.ORD_002, codes.OWN_004, codes.INIT_001}:
        assert sim.run(sched, code) == [v for v in every if v.code == code], code


@settings(max_examples=80, deadline=None)
@given(policies(max_edges=5), st.data())
def test_replaying_one_code_runs_only_its_rules_and_finds_the_same(policy, data: st.DataObject) -> None:
    sim = Simulator(policy)
    scheds = list(sim.linear_extensions(list(range(len(policy.edges)))))
    if scheds:
        _each_code_alone_matches_every_rule(sim, data.draw(st.sampled_from(scheds)))


@pytest.mark.parametrize("path", corpus_files("fail"), ids=str)
def test_replaying_one_code_finds_what_every_rule_finds_on_the_corpus_witnesses(path, at_root) -> None:
    """On every refuted corpus policy's witness schedules, each code's replay alone finds what
    the simulator's full run finds of that code."""
    r = check(str(path), CheckOptions(verify_hints=False))
    sim = Simulator(r.policy)
    for ref in r.refutations:
        if ref.witness.schedule:
            _each_code_alone_matches_every_rule(sim, ref.witness.schedule)


def test_a_read_is_confirmed_unwritten_at_any_byte_its_witness_names(tmp_path) -> None:
    """FX-INIT-001 replays the byte a counterexample names, not only the lowest unwritten one the
    simulator's own search reports: a solver's first model may name any (the property tests met
    first models of 0x11f where the lowest unwritten byte was 0x100). Bytes written before the
    read, and bytes outside its footprint, confirm nothing."""
    src = tmp_path / "half.fx"
    src.write_text('policy "half"\n'
                   "fabric {\n  device gpu0: gpu hooks [launch]\n}\n"
                   "space hbm0 on gpu0 size 1 MiB\n"
                   "region buf in hbm0 at 0x100 size 128 owner gpu0\n"
                   "region low in hbm0 at 0x100 size 64 owner gpu0\n"
                   "alias_set s = [buf, low]\n"
                   "flow f {\n  edge w: write low by gpu0.launch\n  edge r: read buf by gpu0.launch after w\n}\n")
    pol = load_policy(str(src), SourceMap())[0]
    assert pol is not None
    sim = Simulator(pol)
    w, r = (pol.edge(n).eid for n in ("w", "r"))
    sched = {w: (0, 1), r: (1, 2)}
    assert [v.address for v in sim.run(sched, codes.INIT_001)] == [0x140]
    confirmed = {a for a in range(0xF0, 0x1A0) if sim.confirm(codes.INIT_001, (r,), sched, address=a) is not None}
    assert confirmed == set(range(0x140, 0x180))
    # the writer's own edge names no unwritten read
    assert sim.confirm(codes.INIT_001, (w,), sched, address=0x150) is None


@st.composite
def _nested_regions(draw):
    """Up to 12 regions of ``hbm0`` that nest, overlap and repeat one another, and a footprint."""
    from fxverify.ir import Region
    regs = []
    for i in range(draw(st.integers(1, 12))):
        base = draw(st.integers(0, 15)) * 16
        regs.append(Region(f"r{i}", "r", "hbm0", base, draw(st.integers(1, 8)) * 16, "gpu0"))
    fp = Footprint("r0", "hbm0", draw(st.integers(0, 260)), draw(st.integers(1, 40)), draw(st.integers(1, 64)),
                   draw(st.integers(1, 4)))
    return tuple(regs), fp


@settings(max_examples=300, deadline=None)
@given(_nested_regions())
def test_regions_met_through_the_index_are_those_of_a_scan(case) -> None:
    """``World`` finds the regions an access, a handoff or a lease concerns through an index of
    the regions sorted by base (``RegionIndex``): the governing regions, the movers and the regions
    moved with one are those of a scan of every region, as the rules state them (the smallest
    regions holding each byte touched; the regions containing one; those inside one)."""
    from tests import ir_builders as ib
    regs, fp = case
    e = ib.write("w", replace(fp, region=regs[0].name))
    w = Simulator(ib.policy(e, regions=regs))
    met = [r for r in regs if r.base < fp.hi and fp.lo < r.end and shared_byte(fp, r.whole()) is not None]
    want = {}
    for r in met:
        lo, hi = max(fp.lo, r.base), min(fp.hi, r.end)
        if not any(q.size < r.size and r.base <= q.base and q.end <= r.end and q.base <= lo and hi <= q.end for q in met):
            want[r.name] = True
    assert w.governing_regions(w.policy.edges[0]) == want
    for r in regs:
        assert w.movers(r.name) == frozenset(q.name for q in regs if q.base <= r.base and r.end <= q.end)
        assert w.moved_with(r.name) == sorted(q.name for q in regs if r.base <= q.base and q.end <= r.end)
