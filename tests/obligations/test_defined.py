"""Def-before-use on hand-built IR: FX-INIT-001 (``Unwritten``), the cover arithmetic
(``first_gap``), the bytes a write defines (``ir.Edge.defines``), the simulator's interval sets
and the certificate check of the fast proof."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxverify.certificate import Certificate, DefinedCover, HbPath, WriteBefore
from fxverify.certify import Claim, statement
from fxverify.certify.defined import _runs, _uncovered
from fxverify.certify.facts import Facts
from fxverify.ir import Alloc, Compress, Footprint, Quantize
from fxverify.obligations import ordering
from fxverify.obligations.byte_cover import clip, first_gap
from fxverify.obligations.defined import Unwritten
from fxverify.replay.defined_rules import ByteSet

from tests.ir_builders import (
    A, B, REGIONS, assert_solver_proves, edge, fp, generated, keys_of, move, policy, read, reduce, refute, release, replay,
    the, write,
)


def _init(*names: str) -> tuple:
    return tuple(replace(r, init=True) if r.name in names else r for r in REGIONS)


# ---- the cover arithmetic -------------------------------------------------------------------


def test_first_gap_contiguous_and_strided() -> None:
    t = Footprint("a", "hbm0", 0x0, 0x40, 0x40, 1)
    assert first_gap(t, [(0x0, 0x20), (0x20, 0x40)]) is None
    assert first_gap(t, [(0x0, 0x20), (0x21, 0x40)]) == 0x20
    # two interleaved strided writers (even and odd 8 B lanes) cover the whole range
    even, odd = Footprint("a", "hbm0", 0x0, 8, 16, 4), Footprint("a", "hbm0", 0x8, 8, 16, 4)
    assert first_gap(t, [even, odd]) is None
    assert first_gap(t, [even]) == 0x8
    # a strided read between the lanes it needs: only its own elements count
    lanes = Footprint("a", "hbm0", 0x0, 8, 16, 4)
    assert first_gap(lanes, [even]) is None
    assert first_gap(lanes, [odd]) == 0x0
    with pytest.raises(OverflowError):
        first_gap(Footprint("a", "hbm0", 0x0, 1, 2, 1000), [Footprint("a", "hbm0", 0x0, 1, 2, 1000)], budget=10)


def test_bytes_a_move_defines() -> None:
    src, dst = fp(A, 0x0, 0x20), fp(B, 0x100, 0x40)
    assert move("m", src, dst).defines() == (fp(B, 0x100, 0x20),)
    assert write("w", dst).defines() == (dst,)
    # bf16 -> fp8 halves the bytes; compress defines none (its length depends on the data)
    assert move("q", fp(A, 0x0, 0x40), dst, transforms=(Quantize("bf16", "fp8"),)).defines() == (fp(B, 0x100, 0x20),)
    assert move("c", src, dst, transforms=(Compress("lz4"),)).defines() == ()
    # into a strided destination: whole elements first, then the part of the next one
    strided = Footprint("b", "hbm0", 0x100, 0x10, 0x20, 4)
    got = move("s", fp(A, 0x0, 0x18), strided).defines()
    assert got == (Footprint("b", "hbm0", 0x100, 0x10, 0x20, 1), Footprint("b", "hbm0", 0x120, 0x8, 0x8, 1))


def test_byte_set_merges_and_finds_the_first_missing_byte() -> None:
    s = ByteSet()
    s.add(0x10, 0x20)
    s.add(0x30, 0x40)
    assert s.first_missing(0x10, 0x40) == 0x20
    s.add(0x20, 0x30)
    assert (s.los, s.his) == ([0x10], [0x40])
    assert s.first_missing(0x10, 0x40) is None and s.first_missing(0x0, 0x20) == 0x0


# ---- the obligation -------------------------------------------------------------------------


def test_read_after_a_write_of_every_byte_is_proved_fast() -> None:
    pol = policy(write("w0", fp(A, 0x0, 0x20)), write("w1", fp(A, 0x20, 0x20)), read("r", fp(A, 0x0, 0x40), after=("w0", "w1")))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    assert ob.prove_fast() == "hb-cover"
    ev = ob.evidence()
    assert isinstance(ev, DefinedCover) and [x.edge for x in ev.writes] == [0, 1]
    assert_solver_proves(ob)


def test_read_of_a_byte_one_writer_may_not_have_written_is_refuted_at_that_byte() -> None:
    pol = policy(write("w0", fp(A, 0x0, 0x20)), write("w1", fp(A, 0x20, 0x20)), read("r", fp(A, 0x0, 0x40), after=("w0",)))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    w = refute(ob)
    assert w.address == 0x20 and w.values["region"] == "a" and w.values["element"] == 0x10  # bf16: 2 B
    assert ob.fix(w).text() == "add `after w1` to `r`: that write may finish after the read starts"
    assert replay(pol, ob, w) is not None


def test_init_regions_cover_inputs_and_a_reduce_reads_its_destination() -> None:
    pol = policy(reduce("acc", fp(A, 0x0, 0x20), fp(B, 0x100, 0x20), "sum"), regions=_init("a"))
    obs = generated(ordering, pol)
    assert keys_of(obs, Unwritten) == ["FX-INIT-001:acc#0", "FX-INIT-001:acc#1"]
    src, dst = (o for o in obs if type(o) is Unwritten)
    assert src.prove_fast() == "hb-cover"
    w = refute(dst)
    assert w.address == 0x100 and "reduces into" in dst.message(w)
    assert replay(pol, dst, w) is not None


def test_a_short_move_leaves_the_rest_of_its_destination_unwritten() -> None:
    pol = policy(move("m", fp(A, 0x0, 0x20), fp(B, 0x100, 0x40)), read("r", fp(B, 0x100, 0x40), after=("m",)),
                 regions=_init("a"))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    w = refute(ob)
    assert w.address == 0x120
    assert replay(pol, ob, w) is not None


# ---- the certificate ------------------------------------------------------------------------


def _claim(ob) -> Claim:
    return Claim(ob.key, str(ob.code), tuple(ob.edges), "hb-cover")


def test_certificate_checks_and_rejects_a_cover_with_a_hole() -> None:
    pol = policy(write("w0", fp(A, 0x0, 0x20)), write("w1", fp(A, 0x20, 0x20)), read("r", fp(A, 0x0, 0x40), after=("w0", "w1")))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    cert = ob.certificate()
    assert cert is not None
    facts = Facts(pol)
    st = statement(facts, _claim(ob), cert)
    assert st.problems == [] and st.derived == []
    # drop a write: the cover leaves a hole
    ev = cert.evidence
    short = Certificate(cert.key, cert.code, cert.method, cert.edges, replace(ev, writes=ev.writes[:1]))
    assert statement(facts, _claim(ob), short).derived
    # a forged path: no `after` clause orders w1 before the read that way
    forged = replace(ev, writes=(ev.writes[0], WriteBefore(1, 0, HbPath((1, 0, 2)))))
    assert statement(facts, _claim(ob), Certificate(cert.key, cert.code, cert.method, cert.edges, forged)).problems
    # a region not declared `init`
    bogus = replace(ev, writes=(), inits=("a",))
    assert statement(facts, _claim(ob), Certificate(cert.key, cert.code, cert.method, cert.edges, bogus)).problems


_FPS = st.builds(lambda base, elem, mult, count: Footprint("a", "hbm0", base, elem, elem * mult, count),
                 st.integers(0, 64), st.integers(1, 8), st.integers(1, 3), st.integers(1, 5))


@settings(max_examples=300, deadline=None)
@given(_FPS, st.lists(_FPS, max_size=5))
def test_covers_agree_with_bytes_counted_one_by_one(target: Footprint, pieces: list[Footprint]) -> None:
    """The prover's cover walk, the certificate checker's and the simulator's interval sets all
    find the lowest byte of ``target`` that no piece holds, as counting byte by byte does."""
    truth = next((b for b in range(target.lo, target.hi) if target.contains(b) and not any(p.contains(b) for p in pieces)), None)
    assert first_gap(target, pieces) == truth
    assert _uncovered(target, [r for p in pieces for r in _runs(p)]) == truth
    have = ByteSet()
    for p in pieces:
        for lo, hi in _runs(p):
            have.add(lo, hi)
    sim = next((m for lo, hi in _runs(target) if (m := have.first_missing(lo, hi)) is not None), None)
    assert sim == truth


# ---- same allocation: an `alloc` between a write and a read -----------------------------------


def _alloc(name: str, region, **kw):
    return edge(name, "alloc", allocs=(Alloc(region.name, "gpu0"),), **kw)


def _reused(*tail):
    """``w`` writes all of `a`, ``free`` releases it, ``take`` allocates it again, then ``tail``."""
    return policy(write("w", fp(A, 0x0, 0x100)), release("free", A, after=("w",)), _alloc("take", A, after=("free",)), *tail)


def test_a_write_of_the_previous_allocation_defines_nothing() -> None:
    pol = _reused(read("r", fp(A, 0x0, 0x40), after=("take",)))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    assert ob.prove_fast() is None and 2 in ob.edges
    w = refute(ob)
    assert w.address == 0x0 and "in its allocation" in ob.message(w) and "`take`" in ob.message(w)
    assert not ob.fix(w)  # the write this allocation needs is not in the policy: no edit
    assert replay(pol, ob, w) is not None


def test_a_write_after_the_alloc_defines_the_bytes_and_the_certificate_fences_the_alloc() -> None:
    pol = _reused(write("w2", fp(A, 0x0, 0x40), after=("take",)), read("r", fp(A, 0x0, 0x40), after=("w2",)))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    assert ob.prove_fast() == "hb-cover"
    assert_solver_proves(ob)
    cert = ob.certificate()
    facts = Facts(pol)
    assert statement(facts, _claim(ob), cert).derived == []
    # without the fence of `take` before `w2`, the checker counts none of `w2`'s bytes of `a`
    ev = cert.evidence
    bare = replace(ev, writes=tuple(replace(x, fences=()) if x.edge == 3 else x for x in ev.writes))
    assert statement(facts, _claim(ob), Certificate(cert.key, cert.code, cert.method, cert.edges, bare)).derived


def test_an_alloc_hb_after_the_read_does_not_make_the_write_stale() -> None:
    pol = policy(write("w", fp(A, 0x0, 0x100)), read("r", fp(A, 0x0, 0x40), after=("w",)),
                 release("free", A, after=("r",)), _alloc("take", A, after=("free",)))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    assert ob.prove_fast() == "hb-cover"
    assert statement(Facts(pol), _claim(ob), ob.certificate()).derived == []


def test_init_contents_hold_only_until_the_first_alloc() -> None:
    pol = policy(release("free", A), _alloc("take", A, after=("free",)), read("r", fp(A, 0x0, 0x40), after=("take",)),
                 read("early", fp(A, 0x0, 0x40), after=()), regions=_init("a"))
    late = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    assert late.prove_fast() is None
    w = refute(late)
    assert "loaded before the flow" in late.message(w)
    assert replay(pol, late, w) is not None
    # `early` may start after `take` starts: the init contents may already be stale
    assert the(ordering, pol, Unwritten, "FX-INIT-001:early#0").prove_fast() is None


def test_a_stale_init_read_of_a_pooled_block_is_refuted_and_replays() -> None:
    """A block declared `init` and `pooled`: every legal read follows an `alloc`, and an `alloc`
    hands out what the previous holder left, so with nothing written since, the read is refuted,
    and the simulator sees the same byte unwritten."""
    blk = replace(A, init=True, pooled=True)
    pol = policy(_alloc("take", A), read("r", fp(A, 0x10, 0x40), after=("take",)),
                 regions=tuple(blk if r.name == "a" else r for r in REGIONS))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:r#0")
    assert ob.prove_fast() is None and ob.edges == (1, 0)
    w = refute(ob)
    assert w.address == 0x10 and "loaded before the flow" in ob.message(w) and "`take`" in ob.message(w)
    v = replay(pol, ob, w)
    assert v is not None and v.address == 0x10 and v.edges == (1,)
    # written after the alloc, the same read is proved, by the cover and by the solver
    fixed = policy(*pol.edges[:1], write("w", fp(A, 0x0, 0x100), after=("take",)), read("r", fp(A, 0x10, 0x40), after=("w",)),
                   regions=pol.regions)
    ok = the(ordering, fixed, Unwritten, "FX-INIT-001:r#0")
    assert ok.prove_fast() == "hb-cover"
    assert_solver_proves(ok)


def test_clip_removes_stale_ranges_from_strided_footprints() -> None:
    lanes = Footprint("a", "hbm0", 0x0, 8, 16, 8)          # [0,8) [16,24) ... [112,120)
    got = clip(lanes, [(0x14, 0x44)])
    t = Footprint("a", "hbm0", 0x0, 0x80, 0x80, 1)
    want = [(lo, hi) for k in range(8) for lo, hi in [(16 * k, 16 * k + 8)]]
    have = [(lo, hi) for lo, hi in want for lo, hi in [(lo, min(hi, 0x14)), (max(lo, 0x44), hi)] if lo < hi]
    for x in range(0x80):
        inside = any(lo <= x < hi for lo, hi in have)
        covered = first_gap(Footprint("a", "hbm0", x, 1, 1, 1), got) is None
        assert inside == covered, hex(x)
    assert clip((0x0, 0x80), [(0x10, 0x20), (0x18, 0x30)]) == [(0x0, 0x10), (0x30, 0x80)]
    assert first_gap(t, clip(t, [])) is None


# ---- cancelled writes tear the bytes they may touch -------------------------------------------


def _torn(*tail):
    """`fill` defines `a`; `reload` (a move into `a`) is cancelled by `abort`; then ``tail``."""
    from fxverify.ir import Cancel

    return policy(write("fill", fp(A, 0x0, 0x40)), move("reload", fp(B, 0x100, 0x40), fp(A, 0x0, 0x40), after=("fill",)),
                  edge("abort", "cancel", after=("fill",), cancels=(Cancel("reload"),)), *tail, regions=_init("b"))


def test_a_cancelled_overwrite_leaves_the_bytes_torn() -> None:
    pol = _torn(read("hit", fp(A, 0x0, 0x40), after=("abort",)))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:hit#0")
    assert ob.prove_fast() is None and {1, 2} <= set(ob.edges)
    w = refute(ob)
    assert "may have left half-written after `fill` wrote it" in ob.message(w)
    assert replay(pol, ob, w) is not None


def test_a_refill_after_the_cancel_defines_the_bytes_and_the_certificate_fences_the_tear() -> None:
    pol = _torn(write("refill", fp(A, 0x0, 0x40), after=("abort",)), read("hit", fp(A, 0x0, 0x40), after=("refill",)))
    ob = the(ordering, pol, Unwritten, "FX-INIT-001:hit#0")
    assert ob.prove_fast() == "hb-cover"
    assert_solver_proves(ob)
    cert, facts = ob.certificate(), Facts(pol)
    assert statement(facts, _claim(ob), cert).derived == []
    # without the fence of the cancel before `refill`, the checker counts none of its bytes
    ev = cert.evidence
    bare = replace(ev, writes=tuple(replace(x, fences=()) for x in ev.writes))
    assert statement(facts, _claim(ob), Certificate(cert.key, cert.code, cert.method, cert.edges, bare)).derived


def test_a_cancel_before_the_overwrite_starts_or_a_read_before_it_tears_nothing() -> None:
    # the read finishes before the cancelled transfer starts: it saw `fill`'s bytes
    early = _torn(read("hit", fp(A, 0x0, 0x40), after=("fill",)))
    early = replace(early, edges=tuple(replace(e, after=e.after + ("hit",)) if e.name in ("reload", "abort") else e
                                       for e in early.edges))
    ob = the(ordering, early, Unwritten, "FX-INIT-001:hit#0")
    assert ob.prove_fast() == "hb-cover"
    assert statement(Facts(early), _claim(ob), ob.certificate()).derived == []
