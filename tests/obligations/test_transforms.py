"""Transform obligations on hand-built IR: FX-XF-001 (``Overflow``), FX-XF-002
(``ChecksumChain``), FX-XF-003 (``Layout``), FX-XF-004 (``UnsafeReduce``, ``LostAccumulation``).

``Overflow``, ``ChecksumChain`` and ``Layout`` have no solver-proved case: every size bound is
monotone in the input size, so evaluating it at the largest input is exact, and the chain walk
and layout checks are plain evaluations of the same facts the queries state.

Sizes are bytes; ``a`` holds bf16 (0x100 B = 128 elements), ``pool`` holds fp8, ``b`` has no dtype.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.ir import Checksum, Compress, Filter, Gather, Move, Persist, Quantize, Replicate, Scatter
from fxverify.obligations import transforms
from fxverify.obligations.reductions import LostAccumulation, UnsafeReduce
from fxverify.obligations.transforms import ChecksumChain, Layout, Overflow

from tests.ir_builders import (
    A, B, BUF, POOL, assert_solver_proves, fp, generated, keys_of, move, overlaps, policy, read, reduce, refute,
    replay, the, write,
)

P0 = 0x8000_0000  # pool's first byte


def into_pool(n_dst: int, *xfs, n_src: int = 0x100):
    """m moves a[0, n_src) into pool[P0, P0 + n_dst) through the transforms ``xfs``."""
    return policy(move("m", fp(A, 0x0, n_src), fp(POOL, P0, n_dst), transforms=xfs))


def sealed(pol):
    """``pol`` with ``hdm0`` (pool's space) declaring ``checksum crc32c``: a persist into it
    must carry a checksum of its final bytes (FX-XF-002)."""
    spaces = tuple(replace(sp, checksum="crc32c") if sp.name == "hdm0" else sp for sp in pol.spaces)
    return replace(pol, spaces=spaces)


def reduce_into_a(name: str, dst, op: str = "sum", **kw):
    """A reduction from dpu0's buf (another space, so it conflicts with nothing) into ``dst``."""
    return reduce(name, fp(BUF, 0x0, 0x40), dst, op, **kw)


A_LO = fp(A, 0x0, 0x40)

# ---- proved by the fast proof (and the solver agrees) -----------------------------------------

FAST = [
    pytest.param(lambda: into_pool(0x100), Overflow, "FX-XF-001:m", "arith", id="xf001-plain-copy-fits"),
    # 128 bf16 elements -> 128 fp8 bytes.
    pytest.param(lambda: into_pool(0x80, Quantize("bf16", "fp8")), Overflow, "FX-XF-001:m", "arith",
                 id="xf001-quantize-fits"),
    # 128 fp8 bytes + ceil(128/32) = 4 fp32 scales = 144 B.
    pytest.param(lambda: into_pool(144, Quantize("bf16", "fp8", group=32)), Overflow, "FX-XF-001:m", "arith",
                 id="xf001-quantize-with-scales-fits"),
    pytest.param(lambda: into_pool(0x80, Quantize("bf16", "fp8"), Checksum("crc32c"), Persist()), ChecksumChain,
                 "FX-XF-002:m", "chain-walk", id="xf002-checksum-of-final-bytes"),
    # hdm0 declares no checksum, so a plain persist into it needs none (the sealed twin is refuted).
    pytest.param(lambda: into_pool(0x100, Persist()), ChecksumChain, "FX-XF-002:m", "chain-walk",
                 id="xf002-persist-where-no-checksum-is-declared"),
    pytest.param(lambda: into_pool(0x100, Checksum("crc32c"), Move()), ChecksumChain,
                 "FX-XF-002:m", "chain-walk", id="xf002-move-keeps-checksum"),
    pytest.param(lambda: into_pool(0x80, Quantize("bf16", "fp8")), Layout, "FX-XF-003:m", "static-layout",
                 id="xf003-quantized-to-destination-dtype"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x40), fp(B, 0x100, 0x40))), Layout, "FX-XF-003:m",
                 "static-layout", id="xf003-untyped-destination"),
    pytest.param(lambda: policy(reduce_into_a("r1", A_LO), reduce_into_a("r2", A_LO, "max", after=("r1",))),
                 UnsafeReduce, "FX-XF-004:r1#1|r2#1", "hb-reachability", id="xf004-ordered-reductions"),
    # The write initialises the target before the reduction accumulates into it.
    pytest.param(lambda: policy(write("w", A_LO), reduce_into_a("r", A_LO, after=("w",))),
                 LostAccumulation, "FX-XF-004:r#1|w#0", "hb-reachability", id="xf004-write-initialises"),
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), read("x", A_LO, after=("r",)), write("w", A_LO, after=("x",))),
                 LostAccumulation, "FX-XF-004:r#1|w#0", "hb-reachability", id="xf004-read-in-between"),
    # A reduce-scatter: two chunked reads, together covering the bytes.
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), read("x1", fp(A, 0x0, 0x20), after=("r",)),
                                read("x2", fp(A, 0x20, 0x20), device="dpu0", after=("r",)),
                                write("w", A_LO, after=("x1", "x2"))),
                 LostAccumulation, "FX-XF-004:r#1|w#0", "hb-reachability", id="xf004-chunked-reads-in-between"),
]


@pytest.mark.parametrize("make,cls,key,method", FAST)
def test_proved_fast(make, cls, key, method) -> None:
    ob = the(transforms, make(), cls, key)
    assert ob.prove_fast() == method
    assert_solver_proves(ob)


@st.composite
def accumulations(draw):
    """Three to six edges that reduce into, read and write chunks of `a` (contiguous or strided,
    some over all of it) on two devices and three streams, each after a random earlier one or after nothing: a
    reduction's readers then lie before it, between it and a later write, after that write, or
    concurrent with either, so the rank window and the interval cover of FX-XF-004 (b)'s fast
    proof both matter."""
    chunks = [A_LO, fp(A, 0x0, 0x20), fp(A, 0x20, 0x20), fp(A, 0x10, 0x20), A_EVEN]
    edges = []
    for i in range(draw(st.integers(3, 6))):
        after = (f"e{draw(st.integers(0, i - 1))}",) if i and draw(st.booleans()) else ()
        dev, stream = draw(st.sampled_from(["gpu0", "dpu0"])), draw(st.sampled_from(["s0", "s1", "s2"]))
        kind, where = draw(st.sampled_from(["reduce", "read", "read", "write"])), draw(st.sampled_from(chunks))
        if kind == "reduce":
            edges.append(reduce_into_a(f"e{i}", where, device=dev, after=after, stream=stream))
        elif kind == "read":
            edges.append(read(f"e{i}", where, device=dev, after=after, stream=stream))
        else:
            edges.append(write(f"e{i}", where, device=dev, after=after, stream=stream))
    return policy(*edges)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accumulations())
def test_lost_accumulation_fast_proof_is_sound(pol) -> None:
    """Every FX-XF-004 (b) obligation the fast proof proves, the solver proves too (the readers
    tried are those ranked between the reduction and the write, shared by the reduction's
    obligations), and the certificate's cover exists for it."""
    for ob in generated(transforms, pol):
        if isinstance(ob, LostAccumulation) and ob.prove_fast() is not None:
            assert_solver_proves(ob)
            assert ob.evidence() is not None, ob.key


# ---- left to the solver, which proves it ------------------------------------------------------

# 8 B every 0x10 of a: 0x00-0x07, 0x10-0x17, 0x20-0x27, 0x30-0x37.
A_EVEN = fp(A, 0x0, 0x8, 0x10, 4)
A_ODD = fp(A, 0x8, 0x8, 0x10, 4)

SOLVER = [
    pytest.param(lambda: policy(reduce_into_a("r1", A_EVEN), reduce_into_a("r2", A_ODD, "max")),
                 UnsafeReduce, "FX-XF-004:r1#1|r2#1", id="xf004-interleaved-reductions"),
    # The reader covers exactly the reduced bytes, but strided: the interval argument of the fast
    # proof takes only contiguous readers.
    pytest.param(lambda: policy(reduce_into_a("r", A_EVEN), read("x", A_EVEN, after=("r",)),
                                write("w", A_LO, after=("x",))),
                 LostAccumulation, "FX-XF-004:r#1|w#0", id="xf004-strided-read-in-between"),
    pytest.param(lambda: policy(reduce_into_a("r", A_EVEN), write("w", A_ODD, after=("r",))),
                 LostAccumulation, "FX-XF-004:r#1|w#0", id="xf004-write-misses-the-reduced-bytes"),
]


@pytest.mark.parametrize("make,cls,key", SOLVER)
def test_proved_by_solver(make, cls, key) -> None:
    ob = the(transforms, make(), cls, key)
    assert ob.prove_fast() is None
    assert_solver_proves(ob)


# ---- refuted ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make,n,out,cap", [
    # LZ4_COMPRESSBOUND(n) = n + n/255 + 16 exceeds 256 from n = 241 (257 B).
    pytest.param(lambda: into_pool(0x100, Compress("lz4")), 241, 257, 256, id="lz4"),
    # ZSTD_COMPRESSBOUND below 128 KiB: n + n/256 + (131072 - n)/2048 = n + 63 for 1 <= n <= 255.
    pytest.param(lambda: into_pool(0x100, Compress("zstd")), 194, 257, 256, id="zstd"),
    # 128 elements -> 128 B + 4 scales * 4 B = 144 B into 143 B; 127 elements still fit (143 B).
    pytest.param(lambda: into_pool(143, Quantize("bf16", "fp8", group=32)), 256, 144, 143, id="quantize-scales"),
    # ceil(n * 50 / 100) > 127 from n = 255.
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x100), fp(B, 0x100, 127), transforms=(Filter(50),))),
                 255, 128, 127, id="filter"),
    # A write without a source: its declared byte count (0x40) is the input; 2 * 33 > 64.
    pytest.param(lambda: policy(write("m", fp(B, 0x100, 0x40), bytes=0x40, transforms=(Replicate(2),))),
                 33, 66, 64, id="replicate-declared-bytes"),
])
def test_overflow_refuted(make, n, out, cap) -> None:
    pol = make()
    ob = the(transforms, pol, Overflow, "FX-XF-001:m")
    w = refute(ob)
    assert w.values == {"n": n, "out": out, "capacity": cap}
    assert w.schedule == {} and w.address is None
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.XF_001 and v.edges == (0,)


@pytest.mark.parametrize("xfs,step,kind,name", [
    pytest.param((Checksum("crc32c"), Compress("lz4")), 1, "invalidates", "compress", id="compress-after-checksum"),
    pytest.param((Move(), Checksum("xxh64"), Filter(50)), 2, "invalidates", "filter", id="filter-after-checksum"),
    pytest.param((Persist(),), 0, "unprotected", "persist", id="persist-without-checksum"),
    pytest.param((Compress("lz4"), Persist()), 1, "unprotected", "persist", id="persist-after-compress"),
])
def test_checksum_chain_refuted(xfs, step, kind, name) -> None:
    pol = sealed(into_pool(0x200, *xfs))
    ob = the(transforms, pol, ChecksumChain, "FX-XF-002:m")
    w = refute(ob)
    assert w.values == {"step": step, "kind": kind, "transform": name}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.XF_002 and v.edges == (0,)


@pytest.mark.parametrize("make,problem", [
    pytest.param(lambda: into_pool(0x100), "writes `bf16` into `pool`, which holds `fp8`", id="dtype-mismatch"),
    pytest.param(lambda: into_pool(0x100, Quantize("fp16", "fp8")), "quantize expects `fp16` but the source holds `bf16`",
                 id="quantize-wrong-source-dtype"),
    pytest.param(lambda: into_pool(0x100, Quantize("bf16", "fp8"), n_src=0x81),
                 "129 B is not a whole number of `bf16` elements", id="partial-element"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x100), fp(B, 0x100, 0x100), transforms=(Scatter(3),))),
                 "scatter of 256 B into 3 ways leaves 1 B unaccounted", id="uneven-scatter"),
    pytest.param(lambda: policy(move("m", fp(B, 0x100, 0x40), fp(A, 0x0, 0x100), transforms=(Gather(4, rank=4),))),
                 "gather rank 4 is outside 0..4", id="gather-rank-out-of-range"),
    pytest.param(lambda: policy(move("m", fp(B, 0x100, 0x40), fp(B, 0x180, 0x40),
                                     transforms=(Checksum("crc32c"), Persist()))),
                 "persist into `hbm0`, which is not declared `persistent`: its bytes do not survive a power loss or reboot", id="persist-to-volatile"),
])
def test_layout_refuted(make, problem) -> None:
    pol = make()
    ob = the(transforms, pol, Layout, "FX-XF-003:m")
    w = refute(ob)
    assert w.values == {"problem": problem}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.XF_003 and v.edges == (0,)


@pytest.mark.parametrize("ops", [("sum", "max"), ("sub", "sub")], ids=["sum-vs-max", "sub-twice"])
def test_unsafe_reduce_refuted(ops) -> None:
    # r1 reduces into a[0x00, 0x40), r2 into a[0x20, 0x60), unordered.
    pol = policy(reduce_into_a("r1", A_LO, ops[0]), reduce_into_a("r2", fp(A, 0x20, 0x40), ops[1], device="dpu0"))
    ob = the(transforms, pol, UnsafeReduce, "FX-XF-004:r1#1|r2#1")
    w = refute(ob)
    assert w.address == 0x20 and w.space == "hbm0" and w.elements == {0: 0, 1: 0}
    assert w.schedule == {0: (0, 1), 1: (0, 1)} and overlaps(w.schedule, 0, 1)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.XF_004 and v.edges == (0, 1) and v.address == 0x20


def test_unsafe_reduce_refuted_strided_elements() -> None:
    # r1: 8 B every 0x10 from 0 (A_EVEN); r2: 4 B every 0x18 from 0x0c: 0x0c, 0x24, 0x3c.
    # 0x0c-0x0f is a gap of r1; 0x24 is in r1's element 2 (0x20-0x27) and r2's element 1.
    pol = policy(reduce_into_a("r1", A_EVEN), reduce_into_a("r2", fp(A, 0xc, 0x4, 0x18, 3), "max"))
    w = refute(the(transforms, pol, UnsafeReduce, "FX-XF-004:r1#1|r2#1"))
    assert w.address == 0x24 and w.elements == {0: 2, 1: 1}


@pytest.mark.parametrize("make,edges,addr,elements,sched", [
    # Nobody reads the accumulated bytes before w overwrites them.
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), write("w", A_LO, after=("r",))), (0, 1), 0x0,
                 {0: 0, 1: 0}, {0: (0, 1), 1: (1, 2)}, id="no-reader"),
    # Unordered: the query still asks for the write after the reduction.
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), write("w", A_LO, device="dpu0")), (0, 1), 0x0,
                 {0: 0, 1: 0}, {0: (0, 1), 1: (1, 2)}, id="unordered"),
    # x reads only a[0x00, 0x20): the first unread byte is 0x20.
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), read("x", fp(A, 0x0, 0x20), after=("r",)),
                                write("w", A_LO, after=("x",))),
                 (0, 2, 1), 0x20, {0: 0, 2: 0}, {0: (0, 1), 1: (1, 2), 2: (2, 3)}, id="half-read"),
    # The reduction is strided (A_EVEN); w writes 0x10 B every 0x20 from 0x10: 0x10-0x1f and 0x30-0x3f.
    # The lowest shared byte is 0x10: element 1 of r, element 0 of w.
    pytest.param(lambda: policy(reduce_into_a("r", A_EVEN), write("w", fp(A, 0x10, 0x10, 0x20, 2), after=("r",))),
                 (0, 1), 0x10, {0: 1, 1: 0}, {0: (0, 1), 1: (1, 2)}, id="strided"),
])
def test_lost_accumulation_refuted(make, edges, addr, elements, sched) -> None:
    pol = make()
    ob = the(transforms, pol, LostAccumulation, "FX-XF-004:r#1|w#0")
    assert ob.edges == edges
    w = refute(ob)
    assert w.address == addr and w.space == "hbm0" and w.elements == elements
    r, wr = edges[:2]
    assert pol.edges[r].dst.contains(addr) and pol.edges[wr].dst.contains(addr)
    assert w.schedule == sched
    assert w.schedule[r][1] <= w.schedule[wr][0]
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.XF_004 and v.edges == (r, wr) and v.address == addr


def test_lost_accumulation_fix_waits_for_the_reader_first() -> None:
    """A refill that may run before the read of the reduced bytes: the first fix orders the refill
    after that read; making the refill a reduction comes second, with its condition (adding new
    data to the reduced sum would corrupt it). With no reader, only the second remains."""
    pol = policy(reduce_into_a("r", A_LO), read("x", A_LO, after=("r",)), write("w", A_LO, after=("r",)))
    ob = the(transforms, pol, LostAccumulation, "FX-XF-004:r#1|w#0")
    opts = ob.fix(refute(ob)).options
    assert [o.text() for o in opts] == ["add `after x` to `w`",
                                        "make `w` a `reduce(sum)`: only if `w` adds to the accumulated value rather than "
                                        "replacing it"], [o.text() for o in opts]
    lone = policy(reduce_into_a("r", A_LO), write("w", A_LO, after=("r",)))
    ob = the(transforms, lone, LostAccumulation, "FX-XF-004:r#1|w#0")
    assert [o.edits[0].text() for o in ob.fix(refute(ob)).options] == ["make `w` a `reduce(sum)`"]


# ---- not generated ----------------------------------------------------------------------------

ABSENT = [
    pytest.param(lambda: policy(write("w", A_LO)), Overflow, [], id="xf001-write-without-source-or-transforms"),
    pytest.param(lambda: policy(read("r", A_LO)), Overflow, [], id="xf001-read"),
    pytest.param(lambda: into_pool(0x100), ChecksumChain, [], id="xf002-no-transforms"),
    pytest.param(lambda: policy(write("w", A_LO)), Layout, [], id="xf003-write-without-transforms"),
    pytest.param(lambda: policy(read("r", A_LO)), Layout, [], id="xf003-read"),
    pytest.param(lambda: policy(reduce_into_a("r1", A_LO), reduce_into_a("r2", A_LO, device="dpu0")), UnsafeReduce, [],
                 id="xf004-same-commutative-operator"),
    pytest.param(lambda: policy(reduce_into_a("r1", A_LO), read("x", A_LO, device="dpu0")), UnsafeReduce, [],
                 id="xf004-reduce-vs-read-is-a-race"),
    pytest.param(lambda: policy(reduce_into_a("r1", A_LO), reduce_into_a("r2", fp(A, 0x40, 0x40), "max")),
                 UnsafeReduce, [], id="xf004-disjoint-reductions"),
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), write("w", fp(A, 0x40, 0x40), after=("r",))),
                 LostAccumulation, [], id="xf004-write-elsewhere"),
    pytest.param(lambda: policy(reduce_into_a("r1", A_LO), reduce_into_a("r2", A_LO, "max", after=("r1",))),
                 LostAccumulation, [], id="xf004-two-reductions"),
    pytest.param(lambda: policy(reduce_into_a("r", A_LO), read("x", A_LO, after=("r",))), LostAccumulation, [],
                 id="xf004-read-only"),
]


@pytest.mark.parametrize("make,cls,expected", ABSENT)
def test_generated_only_where_it_applies(make, cls, expected) -> None:
    assert keys_of(generated(transforms, make()), cls) == expected
