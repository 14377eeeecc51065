"""Alias obligations on hand-built IR: FX-ALIAS-001 (``AliasOverlap`` for footprints,
``RegionOverlap`` for regions), FX-ALIAS-002 (``InPlace``), FX-ALIAS-003 (``Bounds``).

``AliasOverlap`` and ``RegionOverlap`` have no fast proof (the pruning is in ``generate``: only
footprints or regions whose bounding intervals meet get an obligation). ``RegionOverlap`` and
``Bounds`` have no solver-proved case: regions are contiguous, and a footprint's bounding interval
is tight (element 0 and the last element attain its ends), so an obligation the interval test
leaves open is always refuted.
"""

from __future__ import annotations

import pytest

from fxverify.diagnostics import codes
from fxverify.ir import AliasSet, Gather, Region
from fxverify.obligations import alias
from fxverify.obligations.alias import AliasOverlap, Bounds, InPlace, RegionOverlap

from tests.ir_builders import (
    A, B, BUF, REGIONS, assert_solver_proves, edge, fp, generated, keys_of, move, policy, read, reduce, refute,
    release, replay, the, write,
)

# Two regions of hbm0 in different alias sets: r1 = [0x1000, 0x1100), r2 = [0x1080, 0x1180).
R1 = Region("r1", "r1", "hbm0", 0x1000, 0x100, "gpu0", alias_set="s1")
R2 = Region("r2", "r2", "hbm0", 0x1080, 0x100, "gpu0", alias_set="s2")


def regions(*extra: Region) -> tuple[Region, ...]:
    return REGIONS + extra


# ---- situations -----------------------------------------------------------------------------


def two_alias_sets(fa, fb, alias_b: str | None = "y", mode_b: str = "write"):
    """w0 (alias set x) writes ``fa``; w1 (alias set ``alias_b``) writes or reads ``fb``."""
    second = write("w1", fb, device="dpu0", alias=alias_b) if mode_b == "write" else \
        read("w1", fb, device="dpu0", alias=alias_b)
    return policy(write("w0", fa, alias="x"), second, alias_sets=(AliasSet("x", ()), AliasSet("y", ())))


def in_bounds():
    return policy(write("w", fp(A, 0x0, 0x100)))


def in_bounds_strided():
    # Elements at 0x00, 0x40, 0x80, 0xc0, 16 B each: the last byte is 0xcf, inside a = [0, 0x100).
    return policy(write("w", fp(A, 0x0, 0x10, 0x40, 4)))


def legal_gather():
    # In-place all-gather, rank 1 of 4, chunk 0x40: the send buffer sits at recv + 1 * 0x40.
    return policy(move("g", fp(A, 0x40, 0x40), fp(A, 0x0, 0x100), transforms=(Gather(4, rank=1),)))


def legal_reduce():
    # In-place all-reduce: source and destination are the very same footprint.
    return policy(reduce("r", fp(A, 0x0, 0x40), fp(A, 0x0, 0x40), "sum"))


def interleaved_copy():
    # src a: 0x00-0x0f, 0x20-0x2f, 0x40-0x4f, 0x60-0x6f; dst a: 0x10-0x1f, 0x30-0x3f, ...
    return policy(move("m", fp(A, 0x0, 0x10, 0x20, 4), fp(A, 0x10, 0x10, 0x20, 4)))


# ---- proved by the fast proof (and the solver agrees) -----------------------------------------

FAST = [
    pytest.param(in_bounds, Bounds, "FX-ALIAS-003:w#0", "interval", id="alias003-whole-region"),
    pytest.param(in_bounds_strided, Bounds, "FX-ALIAS-003:w#0", "interval", id="alias003-strided"),
    pytest.param(legal_gather, InPlace, "FX-ALIAS-002:g", "in-place-rule", id="alias002-gather-at-rank"),
    pytest.param(legal_reduce, InPlace, "FX-ALIAS-002:r", "in-place-rule", id="alias002-reduce-onto-itself"),
]


@pytest.mark.parametrize("make,cls,key,method", FAST)
def test_proved_fast(make, cls, key, method) -> None:
    ob = the(alias, make(), cls, key)
    assert ob.prove_fast() == method
    assert_solver_proves(ob)


# ---- left to the solver, which proves it ------------------------------------------------------

SOLVER = [
    pytest.param(interleaved_copy, InPlace, "FX-ALIAS-002:m", id="alias002-interleaved-strides"),
    pytest.param(lambda: two_alias_sets(fp(A, 0x0, 0x10, 0x20, 4), fp(A, 0x10, 0x10, 0x20, 4)),
                 AliasOverlap, "FX-ALIAS-001:w0#0|w1#0", id="alias001-interleaved-strides"),
    pytest.param(lambda: two_alias_sets(fp(A, 0x0, 0x8, 0x40, 3), fp(A, 0x8, 0x30, 0x40, 3)),
                 AliasOverlap, "FX-ALIAS-001:w0#0|w1#0", id="alias001-gaps-filled-exactly"),
]


@pytest.mark.parametrize("make,cls,key", SOLVER)
def test_proved_by_solver(make, cls, key) -> None:
    ob = the(alias, make(), cls, key)
    assert ob.prove_fast() is None
    assert_solver_proves(ob)


# ---- refuted ----------------------------------------------------------------------------------


def test_alias_overlap_refuted_strided() -> None:
    # w0 (set x) writes 8 B every 0x20 (0x00, 0x20, 0x40, 0x60); w1 (set y) reads 4 B every 0x50
    # (0x14, 0x64): the lowest shared byte is 0x64, element 3 of w0 and element 1 of w1.
    pol = two_alias_sets(fp(A, 0x0, 0x8, 0x20, 4), fp(A, 0x14, 0x4, 0x50, 2), mode_b="read")
    ob = the(alias, pol, AliasOverlap, "FX-ALIAS-001:w0#0|w1#0")
    w = refute(ob)
    assert w.address == 0x64 and w.space == "hbm0"
    assert w.elements == {0: 3, 1: 1}
    assert w.values == {"k_first": 3, "k_second": 1}
    assert pol.edges[0].dst.contains(w.address) and pol.edges[1].src.contains(w.address)
    assert w.schedule == {}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ALIAS_001 and v.edges == (0, 1) and v.address == 0x64


def test_alias_overlap_refuted_against_region_default() -> None:
    # w1 has no alias clause: its footprint is in `region a`'s own set, not in x.
    pol = two_alias_sets(fp(A, 0x0, 0x40), fp(A, 0x30, 0x40), alias_b=None)
    ob = the(alias, pol, AliasOverlap, "FX-ALIAS-001:w0#0|w1#0")
    assert (ob.sa, ob.sb) == ("x", "region a")
    w = refute(ob)
    assert w.address == 0x30 and w.elements == {0: 0, 1: 0}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ALIAS_001 and v.edges == (0, 1)


@pytest.mark.parametrize("first,second,key,sets", [
    pytest.param(R1, R2, "FX-ALIAS-001:region:r1|r2", ("s1", "s2"), id="two-sets"),
    pytest.param(Region("r1", "r1", "hbm0", 0x1000, 0x100, "gpu0"), R2, "FX-ALIAS-001:region:r1|r2",
                 ("region r1", "s2"), id="no-set-vs-set"),
])
def test_region_overlap_refuted(first, second, key, sets) -> None:
    pol = policy(regions=regions(first, second))
    ob = the(alias, pol, RegionOverlap, key)
    assert ob.prove_fast() is None and (ob.sa, ob.sb) == sets
    w = refute(ob)
    # The lowest shared byte is r2's first, 0x1080: element 0 of each (regions have one element).
    assert w.address == 0x1080 and w.space == "hbm0"
    # The witness names the two regions: a finding about regions has no edge to replay by.
    assert w.elements == {} and w.values == {"k_first": 0, "k_second": 0, "regions": "r1|r2"}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ALIAS_001 and v.edges == () and v.address == 0x1080


@pytest.mark.parametrize("make,addr,k_src,k_dst", [
    # src a[0x00, 0x80) -> dst a[0x40, 0xc0): the first shared byte is 0x40.
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x80), fp(A, 0x40, 0x80))), 0x40, 0, 0, id="overlapping-copy"),
    # Rank 1 of 4 with chunk 0x40 must send from 0x40, not 0x80; shared bytes start at 0x80.
    pytest.param(lambda: policy(move("m", fp(A, 0x80, 0x40), fp(A, 0x0, 0x100), transforms=(Gather(4, rank=1),))),
                 0x80, 0, 0, id="gather-off-rank"),
    # A reduction onto a shifted copy of its source is not in place: 0x20 is shared.
    pytest.param(lambda: policy(reduce("m", fp(A, 0x0, 0x40), fp(A, 0x20, 0x40), "sum")), 0x20, 0, 0,
                 id="shifted-reduce"),
    # src 0x10 B every 0x40 (0x00, 0x40, 0x80); dst a[0x48, 0x58): byte 0x48 is src element 1.
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x10, 0x40, 3), fp(A, 0x48, 0x10))), 0x48, 1, 0,
                 id="strided-source"),
])
def test_in_place_refuted(make, addr, k_src, k_dst) -> None:
    pol = make()
    ob = the(alias, pol, InPlace, "FX-ALIAS-002:m")
    w = refute(ob)
    assert w.address == addr and w.space == "hbm0"
    assert w.values == {"k_first": k_src, "k_second": k_dst} and w.elements == {}
    e = pol.edges[0]
    assert e.src.contains(addr) and e.dst.contains(addr)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ALIAS_002 and v.edges == (0,)


def test_in_place_gather_rule_names_the_rank_offset() -> None:
    pol = policy(move("m", fp(A, 0x80, 0x40), fp(A, 0x0, 0x100), transforms=(Gather(4, rank=1),)))
    ob = the(alias, pol, InPlace, "FX-ALIAS-002:m")
    assert "= 0x40" in ob.rule and "not 0x80" in ob.rule


@pytest.mark.parametrize("footprint,region,k,addr", [
    # 0x20 B every 0x40 from 0x80: elements at 0x80, 0xc0, 0x100; element 2 leaves a = [0, 0x100).
    pytest.param(fp(A, 0x80, 0x20, 0x40, 3), A, 2, 0x100, id="past-the-end-strided"),
    # Through b = [0x100, 0x200) from 0xf0: the first byte is already below b.
    pytest.param(fp(B, 0xf0, 0x20), B, 0, 0xf0, id="below-the-start"),
    # Index -1 of 0x40-byte blocks of b: [0xc0, 0x100).
    pytest.param(fp(B, 0x100 - 0x40, 0x40), B, 0, 0xc0, id="negative-index"),
    # Contiguous [0xf8, 0x108) through a: the first byte past the end is 0x100.
    pytest.param(fp(A, 0xf8, 0x10), A, 0, 0x100, id="straddles-the-end"),
])
def test_bounds_refuted(footprint, region, k, addr) -> None:
    pol = policy(write("w", footprint))
    ob = the(alias, pol, Bounds, "FX-ALIAS-003:w#0")
    w = refute(ob)
    assert w.address == addr and w.space == "hbm0" and w.elements == {0: k}
    assert footprint.contains(addr) and not region.base <= addr < region.end
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ALIAS_003 and v.edges == (0,)


def test_the_fix_of_a_stride_0_footprint_past_the_end_shortens_its_elements() -> None:
    """Stride 0 (every element over the same bytes) is legal; cutting it back once divided by
    the stride (found by a fresh breaker: an internal error instead of a finding)."""
    from fxverify.edits.layout import clipped
    over = fp(A, 0xf8, 0x10, 0, 2)
    ob = the(alias, policy(write("w", over)), Bounds, "FX-ALIAS-003:w#0")
    refute(ob)
    assert clipped(over, A) == fp(A, 0xf8, 0x8, 0, 2)
    assert ob.fix(refute(ob)).options  # an edit is offered


def test_bounds_refuted_on_the_source_of_a_move() -> None:
    # The source reads one byte past b; the destination is fine. Position 0 is the source.
    pol = policy(move("m", fp(B, 0x180, 0x81), fp(A, 0x0, 0x81)))
    w = refute(the(alias, pol, Bounds, "FX-ALIAS-003:m#0"))
    assert w.address == 0x200 and w.elements == {0: 0}
    assert the(alias, pol, Bounds, "FX-ALIAS-003:m#1").prove_fast() == "interval"


# ---- not generated ----------------------------------------------------------------------------

ABSENT = [
    pytest.param(lambda: policy(release("f", A)), Bounds, [], id="alias003-no-footprint"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x40), fp(B, 0x100, 0x40))), InPlace, [],
                 id="alias002-disjoint-src-dst"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x40), fp(A, 0x40, 0x40))), InPlace, [],
                 id="alias002-adjacent-src-dst"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x40), fp(BUF, 0x0, 0x40))), InPlace, [],
                 id="alias002-same-addresses-other-space"),
    pytest.param(lambda: policy(write("w0", fp(A, 0x0, 0x40)), write("w1", fp(A, 0x20, 0x40), device="dpu0")),
                 AliasOverlap, [], id="alias001-no-alias-clause-left-to-regions"),
    pytest.param(lambda: policy(write("w0", fp(A, 0x0, 0x40), alias="x"), write("w1", fp(A, 0x20, 0x40), alias="x"),
                                alias_sets=(AliasSet("x", ()),)),
                 AliasOverlap, [], id="alias001-same-alias-set"),
    pytest.param(lambda: two_alias_sets(fp(A, 0x0, 0x40), fp(A, 0x40, 0x40)), AliasOverlap, [],
                 id="alias001-bounding-intervals-disjoint"),
    # Two reads count: an alias set promises disjoint bytes, not only the absence of races.
    pytest.param(lambda: policy(read("w0", fp(A, 0x0, 0x40), alias="x"), read("w1", fp(A, 0x0, 0x40), alias="y"),
                                alias_sets=(AliasSet("x", ()), AliasSet("y", ()))),
                 AliasOverlap, ["FX-ALIAS-001:w0#0|w1#0"], id="alias001-two-reads"),
    pytest.param(lambda: policy(regions=regions(R1, Region("r2", "r2", "hbm0", 0x1080, 0x100, "gpu0", alias_set="s1"))),
                 RegionOverlap, [], id="alias001-regions-same-set"),
    pytest.param(lambda: policy(regions=regions(R1, Region("r2", "r2", "hbm0", 0x1100, 0x100, "gpu0", alias_set="s2"))),
                 RegionOverlap, [], id="alias001-adjacent-regions"),
    pytest.param(lambda: policy(regions=regions(R1, Region("r2", "r2", "ddr0", 0x1080, 0x100, "dpu0", alias_set="s2"))),
                 RegionOverlap, [], id="alias001-regions-in-two-spaces"),
    pytest.param(lambda: policy(), RegionOverlap, [], id="alias001-fixture-regions-disjoint"),
]


@pytest.mark.parametrize("make,cls,expected", ABSENT)
def test_generated_only_where_it_applies(make, cls, expected) -> None:
    assert keys_of(generated(alias, make()), cls) == expected


def test_bounds_per_access_position() -> None:
    # A move has two accesses, source (#0) then destination (#1); a flush has none.
    pol = policy(move("m", fp(A, 0x0, 0x40), fp(B, 0x100, 0x40)), edge("fl", "flush", flushes=("gpu0--dpu0",)))
    assert keys_of(generated(alias, pol), Bounds) == ["FX-ALIAS-003:m#0", "FX-ALIAS-003:m#1"]
