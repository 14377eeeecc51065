"""Ordering obligations on hand-built IR: FX-ORD-001 (``HbCycle``), FX-ORD-002 (``Race``),
FX-ORD-003 (``PostedRead``), FX-ORD-004 (``InOrder``).

``HbCycle`` and ``InOrder`` have no solver-proved case: their fast proofs (topological sort,
fabric search) are exact, so when they fail the query always refutes; the refuted cases check
that.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fxverify.certificate import HbPath, Ordered
from fxverify.certify import MODES, Claim, certify
from fxverify.diagnostics import codes
from fxverify.graph import PolicyGraph
from fxverify.ir import Link
from fxverify.obligations import ordering
from fxverify.obligations.base import Context
from fxverify.obligations.ordering import HbCycle, InOrder, PostedRead, Race, RaceFree
from fxverify.smt.backend import Status
from fxverify.vocab import LinkOrder

from tests.ir_builders import (
    A, BUF, LINKS, POOL, POSTED, assert_solver_proves, decide, edge, flush, fp, generated, keys_of, links, move, overlaps,
    policy, read, reduce, refute, replay, the, write,
)

# ---- situations -----------------------------------------------------------------------------


def acyclic_pair():
    # w writes a[0x00, 0x40); r reads a[0x20, 0x60) after it.
    return policy(write("w", fp(A, 0x0, 0x40)), read("r", fp(A, 0x20, 0x40), after=("w",)))


def three_cycle():
    # x0 after x1, x1 after x2, x2 after x0: HB 1->0, 2->1, 0->2, i.e. the cycle 0 -> 2 -> 1 -> 0;
    # y is outside the cycle.
    return policy(write("x0", fp(A, 0x0, 0x10), after=("x1",)), write("x1", fp(A, 0x10, 0x10), after=("x2",)),
                  write("x2", fp(A, 0x20, 0x10), after=("x0",)), write("y", fp(A, 0x0, 0x10)))


def self_loop():
    return policy(write("z", fp(A, 0x0, 0x10), after=("z",)))


def two_cycles():
    # a <-> b and c <-> d: two strongly connected components.
    return policy(write("a", fp(A, 0x0, 0x10), after=("b",)), write("b", fp(A, 0x10, 0x10), after=("a",)),
                  write("c", fp(A, 0x20, 0x10), after=("d",)), write("d", fp(A, 0x30, 0x10), after=("c",)))


def stream_ordered_pair():
    # Same serial stream on gpu0: w before r, with no `after`.
    return policy(write("w", fp(A, 0x0, 0x40), stream="s0"), read("r", fp(A, 0x20, 0x40), stream="s0"))


def interleaved_writes():
    # w0: 0x00-0x0f, 0x20-0x2f, 0x40-0x4f, 0x60-0x6f; w1: 0x10-0x1f, 0x30-0x3f, ... : bounding
    # intervals [0x00, 0x70) and [0x10, 0x80) overlap, the bytes never do.
    return policy(write("w0", fp(A, 0x0, 0x10, 0x20, 4)), write("w1", fp(A, 0x10, 0x10, 0x20, 4), device="dpu0",
                                                                   hook="dma_done"))


def strided_race():
    # w writes 8 B every 0x20: 0x00-0x07, 0x20-0x27, 0x40-0x47, 0x60-0x67.
    # r reads 4 B every 0x50: 0x14-0x17 (no shared byte), 0x64-0x67 (element 1).
    # The lowest shared byte is 0x64: element 3 of w, element 1 of r.
    return policy(write("w", fp(A, 0x0, 0x8, 0x20, 4)), read("r", fp(A, 0x14, 0x4, 0x50, 2), device="dpu0"))


def posted_flushed_between():
    # w writes buf (dpu0) from gpu0 over the posted link; fl flushes it; r reads on dpu0 after fl.
    return policy(write("w", fp(BUF, 0x0, 0x40)), flush("fl", "gpu0--dpu0", after=("w",)),
                  read("r", fp(BUF, 0x10, 0x20), device="dpu0", after=("fl",)), links=POSTED)


def posted_writer_flushes_itself(ordered: bool):
    # The writer flushes its own link when it finishes; r reads after it (ordered) or whenever.
    return policy(write("w", fp(BUF, 0x0, 0x40), flushes=("gpu0--dpu0",)),
                  read("r", fp(BUF, 0x10, 0x20), device="dpu0", after=("w",) if ordered else ()), links=POSTED)


def posted_interleaved():
    # Posted write of buf 0x00-0x0f, 0x20-0x2f; the read takes 0x10-0x1f, 0x30-0x3f: no shared byte.
    return policy(write("w", fp(BUF, 0x0, 0x10, 0x20, 2)),
                  read("r", fp(BUF, 0x10, 0x10, 0x20, 2), device="dpu0", after=("w",)), links=POSTED)


def posted_unflushed():
    # w writes buf[0x00, 0x40) over the posted link; r reads buf[0x10, 0x30) after w, no flush.
    return policy(write("w", fp(BUF, 0x0, 0x40)), read("r", fp(BUF, 0x10, 0x20), device="dpu0", after=("w",)),
                  links=POSTED)


def posted_flush_not_between():
    # A flush exists but is ordered with neither the write nor the read.
    return policy(write("w", fp(BUF, 0x0, 0x40)), flush("fl", "gpu0--dpu0"),
                  read("r", fp(BUF, 0x10, 0x20), device="dpu0", after=("w",)), links=POSTED)


def posted_read_back(parallel: bool = False):
    # gpu0 writes buf[0x00, 0x40) over posted gpu0--dpu0 and reads it back after; with `parallel`,
    # a second (ordered) link beside it may carry the read instead.
    extra = (Link("gpu0--dpu0-b", "gpu0", "dpu0", "pcie", LinkOrder.ORDERED),) if parallel else ()
    return policy(write("w", fp(BUF, 0x0, 0x40)), read("r", fp(BUF, 0x0, 0x40), after=("w",)), links=POSTED + extra)


def in_order_over(order: LinkOrder):
    # m moves a (gpu0) -> buf (dpu0) and requires in-order delivery; the only path is gpu0--dpu0.
    return policy(move("m", fp(A, 0x0, 0x40), fp(BUF, 0x0, 0x40), require_in_order=True),
                  links=links(gpu_dpu=order))


def in_order_to_pool():
    return policy(move("m", fp(A, 0x0, 0x40), fp(POOL, 0x8000_0000, 0x40), require_in_order=True))


# ---- proved by the fast proof (and the solver agrees) -----------------------------------------

FAST = [
    pytest.param(acyclic_pair, HbCycle, "FX-ORD-001:policy", "topological-sort", id="ord001-acyclic"),
    pytest.param(acyclic_pair, RaceFree, "FX-ORD-002:r#0|earlier", "hb-reachability", id="ord002-after"),
    pytest.param(stream_ordered_pair, RaceFree, "FX-ORD-002:r#0|earlier", "hb-reachability", id="ord002-stream"),
    pytest.param(posted_flushed_between, PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0", "hb-reachability",
                 id="ord003-flush-between"),
    pytest.param(lambda: posted_writer_flushes_itself(True), PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0",
                 "hb-reachability", id="ord003-writer-flushes"),
    pytest.param(in_order_to_pool, InOrder, "FX-ORD-004:m:in_order", "every-path", id="ord004-ordered-path"),
    # The writer's device reads the bytes back over the one link both transfers can take.
    pytest.param(posted_read_back, PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0", "same-requester",
                 id="ord003-read-back-one-route"),
]


@pytest.mark.parametrize("make,cls,key,method", FAST)
def test_proved_fast(make, cls, key, method) -> None:
    ob = the(ordering, make(), cls, key)
    assert ob.prove_fast() == method
    assert_solver_proves(ob)


# ---- left to the solver, which proves it ------------------------------------------------------

SOLVER = [
    pytest.param(interleaved_writes, Race, "FX-ORD-002:w0#0|w1#0", id="ord002-interleaved-strides"),
    pytest.param(lambda: posted_writer_flushes_itself(False), PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0",
                 id="ord003-writer-flushes-reader-unordered"),
    pytest.param(posted_interleaved, PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0", id="ord003-interleaved-strides"),
]


@pytest.mark.parametrize("make,cls,key", SOLVER)
def test_proved_by_solver(make, cls, key) -> None:
    ob = the(ordering, make(), cls, key)
    assert ob.prove_fast() is None
    assert_solver_proves(ob)


# ---- refuted ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make,key,cycle", [
    pytest.param(three_cycle, "FX-ORD-001:x0", [0, 2, 1], id="three-cycle"),
    pytest.param(self_loop, "FX-ORD-001:z", [0], id="self-loop"),
    # The stream puts e0 before e1; `after e1` on e0 closes the cycle.
    pytest.param(lambda: policy(write("e0", fp(A, 0x0, 0x10), stream="s", after=("e1",)),
                                write("e1", fp(A, 0x10, 0x10), stream="s")), "FX-ORD-001:e0", [0, 1],
                 id="stream-and-after"),
    # Two separate cycles: one obligation each, keyed by the component's first edge.
    pytest.param(two_cycles, "FX-ORD-001:a", [0, 1], id="first-of-two-components"),
    pytest.param(two_cycles, "FX-ORD-001:c", [2, 3], id="second-of-two-components"),
])
def test_hb_cycle_refuted(make, key, cycle) -> None:
    pol = make()
    ob = the(ordering, pol, HbCycle, key)
    w = refute(ob)
    # The cycle follows HB (each edge must finish before the next starts), from its smallest id.
    assert w.cycle == cycle
    assert w.schedule == {} and w.address is None
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_001 and v.edges == tuple(cycle)


def test_race_refuted_witness_and_replay() -> None:
    pol = strided_race()
    ob = the(ordering, pol, Race, "FX-ORD-002:w#0|r#0")
    w = refute(ob)
    assert w.address == 0x64 and w.space == "hbm0"
    assert w.elements == {0: 3, 1: 1}
    assert pol.edges[0].dst.contains(0x64) and pol.edges[1].src.contains(0x64)
    # Minimised times: both run in [0, 1).
    assert w.schedule == {0: (0, 1), 1: (0, 1)}
    assert overlaps(w.schedule, 0, 1)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_002 and v.edges == (0, 1) and v.address == 0x64


def test_a_per_access_obligation_refuted_stands_for_the_racing_pair() -> None:
    """The solver query of a ``RaceFree`` is the disjunction of its pairs' races: built (by hand)
    over an earlier access that HB does not order before it, it is refuted, and the obligation
    then names that pair, whose witness the simulator replays (the generator never builds such
    an obligation: this is the path a sweep bug would take under ``--no-prune``)."""
    pol = strided_race()
    ob = RaceFree(Context(pol, PolicyGraph(pol)), 1, 0, ((0, 0),))
    q, r = decide(ob)
    assert r.status is not q.expect and r.status is not Status.UNKNOWN
    w = ob.witness(r)
    assert ob.edges[:2] == (0, 1) and w.address == 0x64 and overlaps(w.schedule, 0, 1)
    assert "data race" in ob.message(w) and ob.culprits() == (0, 1)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_002 and v.edges == (0, 1)


def test_a_per_access_obligation_is_read_again_from_its_witness_alone() -> None:
    """Sharded hint verification builds obligations again and asks the fresh one for the fix of
    a stored witness: a ``RaceFree`` reads the racing pair from the witness (its element edges and
    address), not from what its own ``witness`` call left behind."""
    pol = strided_race()
    solved = RaceFree(Context(pol, PolicyGraph(pol)), 1, 0, ((0, 0),))
    q, r = decide(solved)
    w = solved.witness(r)
    fresh = RaceFree(Context(pol, PolicyGraph(pol)), 1, 0, ((0, 0),))
    assert fresh.message(w) == solved.message(w) and fresh.fix(w).text() == solved.fix(w).text()


@pytest.mark.parametrize("mode", MODES)
def test_one_hb_path_cannot_certify_a_per_access_obligation(mode: str) -> None:
    """`r` is HB-after `w0` and `w1`; its per-access obligation covers both pairs. An `hb-order`
    certificate (one path, `w0 -> r`) offered for it would leave `w1` unchecked: the checker
    binds `hb-order` to a pair's key and refuses it, and accepts the real `hb-before-all`."""
    pol = policy(write("w0", fp(A, 0x0, 0x40)), write("w1", fp(A, 0x0, 0x40), after=("w0",)),
                 read("r", fp(A, 0x0, 0x40), after=("w1",)))
    ob = the(ordering, pol, RaceFree, "FX-ORD-002:r#0|earlier")
    assert ob.edges == (2, 0, 1)
    real = ob.certificate()
    claim = Claim(ob.key, str(ob.code), tuple(ob.edges), "hb-reachability")
    assert not certify(pol, [(claim, real)], mode).failures
    forged = replace(real, evidence=Ordered(HbPath((0, 1, 2))))
    (failure,) = certify(pol, [(claim, forged)], mode).failures
    assert "does not name the obligation's accesses" in str(failure) or "does not prove" in str(failure)


@pytest.mark.parametrize("second,key", [
    pytest.param(lambda: write("w2", fp(A, 0x30, 0x20), device="dpu0", hook="rx"), "FX-ORD-002:w#0|w2#0", id="waw"),
    pytest.param(lambda: reduce("red", fp(BUF, 0x0, 0x20), fp(A, 0x30, 0x20), "sum", device="dpu0"),
                 "FX-ORD-002:w#0|red#1", id="write-vs-reduce"),
    pytest.param(lambda: read("r", fp(A, 0x30, 0x20), device="dpu0"), "FX-ORD-002:w#0|r#0", id="raw"),
])
def test_race_refuted_kinds(second, key) -> None:
    # w writes a[0x00, 0x40); the second edge touches a[0x30, 0x50), unordered.
    pol = policy(write("w", fp(A, 0x0, 0x40)), second())
    ob = the(ordering, pol, Race, key)
    w = refute(ob)
    assert w.address == 0x30 and w.elements == {0: 0, 1: 0}
    assert overlaps(w.schedule, 0, 1)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_002 and v.edges == (0, 1)


def test_posted_read_refuted_without_flush() -> None:
    pol = posted_unflushed()
    ob = the(ordering, pol, PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0")
    w = refute(ob)
    assert w.address == 0x10 and w.space == "ddr0" and w.elements == {0: 0, 1: 0}
    assert w.values == {"link": "gpu0--dpu0"}
    # The read starts once the write has completed at the sender.
    assert w.schedule == {0: (0, 1), 1: (1, 2)}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_003 and v.edges == (0, 1)


def test_posted_read_refuted_with_unordered_flush() -> None:
    pol = posted_flush_not_between()
    ob = the(ordering, pol, PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0")
    assert ob.edges == (0, 2, 1)
    w = refute(ob)
    assert w.address == 0x10 and w.elements == {0: 0, 2: 0}
    s = w.schedule
    assert s[0][1] <= s[2][0]  # the read follows the write
    assert not (s[0][1] <= s[1][0] and s[1][1] <= s[2][0])  # and no flush lies between them
    assert s == {0: (0, 1), 1: (0, 1), 2: (1, 2)}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_003 and v.edges == (0, 2)


@pytest.mark.parametrize("order", [LinkOrder.POSTED, LinkOrder.UNORDERED], ids=lambda o: o.value)
def test_in_order_refuted(order) -> None:
    pol = in_order_over(order)
    ob = the(ordering, pol, InOrder, "FX-ORD-004:m:in_order")
    w = refute(ob)
    # The only path is the one link, which is not ordered; the message names it once.
    assert w.values == {"path": "gpu0--dpu0", "link": "gpu0--dpu0", "from": "gpu0", "to": "dpu0"}
    assert ob.message(w).endswith(f"but the link between them, `gpu0--dpu0`, is {order.value}"), ob.message(w)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_004 and v.edges == (0,)


def _with_detour(order: LinkOrder, via: tuple[str, ...] | None = None):
    # The direct link is ordered; a second path through cxl0 ends in a link of `order`.
    detour = (Link("cxl0--dpu0", "cxl0", "dpu0", "cxl", order),)
    pol = in_order_over(LinkOrder.ORDERED)
    e = replace(pol.edges[0], via=via)
    return replace(pol, links=pol.links + detour, edges=(e,), _index={})


@pytest.mark.parametrize("first", [True, False], ids=["detour-declared-last", "detour-declared-first"])
def test_in_order_refuted_by_another_path(first) -> None:
    pol = _with_detour(LinkOrder.UNORDERED)
    if not first:
        pol = replace(pol, links=tuple(reversed(pol.links)), _index={})
    ob = the(ordering, pol, InOrder, "FX-ORD-004:m:in_order")
    assert ob.prove_fast() is None
    w = refute(ob)
    assert w.values == {"path": "gpu0--cxl0,cxl0--dpu0", "link": "cxl0--dpu0", "from": "gpu0", "to": "dpu0"}
    assert ob.fix(w).text() == "pin `via gpu0--dpu0` on `m`"
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_004


def test_in_order_proved_on_a_pinned_route() -> None:
    pol = _with_detour(LinkOrder.UNORDERED, via=("gpu0--dpu0",))
    ob = the(ordering, pol, InOrder, "FX-ORD-004:m:in_order")
    assert ob.prove_fast() == "every-path"
    assert_solver_proves(ob)


def test_posted_write_on_another_path_needs_a_flush() -> None:
    # The direct link is ordered, the detour through cxl0 posted: the reader needs a flush of it.
    detour = LINKS[:1] + (Link("cxl0--dpu0", "cxl0", "dpu0", "cxl", LinkOrder.POSTED),) + LINKS[1:]
    pol = policy(write("w", fp(BUF, 0x0, 0x40)), read("r", fp(BUF, 0x0, 0x40), device="dpu0", after=("w",)), links=detour)
    assert "FX-ORD-003:w#0|r#0|cxl0--dpu0" in keys_of(generated(ordering, pol), PostedRead)
    pinned = replace(pol, edges=(replace(pol.edges[0], via=("gpu0--dpu0",)), pol.edges[1]), _index={})
    assert keys_of(generated(ordering, pinned), PostedRead) == []


# ---- not generated ----------------------------------------------------------------------------

ABSENT = [
    pytest.param(three_cycle, HbCycle, ["FX-ORD-001:x0"], id="ord001-cyclic-only-the-component"),
    pytest.param(two_cycles, HbCycle, ["FX-ORD-001:a", "FX-ORD-001:c"], id="ord001-one-per-component"),
    pytest.param(lambda: policy(), HbCycle, ["FX-ORD-001:policy"], id="ord001-empty-policy-one"),
    pytest.param(three_cycle, Race, [], id="ord002-none-when-hb-cyclic"),
    pytest.param(lambda: policy(read("r0", fp(A, 0x0, 0x40)), read("r1", fp(A, 0x0, 0x40), device="dpu0")),
                 Race, [], id="ord002-two-reads"),
    pytest.param(lambda: policy(reduce("p", fp(BUF, 0, 0x10), fp(A, 0x0, 0x40), "sum"),
                                reduce("q", fp(BUF, 0x10, 0x10), fp(A, 0x0, 0x40), "sum", device="dpu0")),
                 Race, [], id="ord002-two-sum-reductions"),
    pytest.param(lambda: policy(write("w0", fp(A, 0x0, 0x40)), write("w1", fp(A, 0x40, 0x40))),
                 Race, [], id="ord002-adjacent-footprints"),
    pytest.param(lambda: policy(write("w0", fp(A, 0x0, 0x40)), write("w1", fp(BUF, 0x0, 0x40), device="dpu0")),
                 Race, [], id="ord002-same-addresses-other-space"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x40), fp(A, 0x20, 0x40))), Race, [],
                 id="ord002-not-within-one-edge"),
    pytest.param(lambda: policy(write("w", fp(BUF, 0x0, 0x40)), read("r", fp(BUF, 0x0, 0x40), device="dpu0",
                                                                     after=("w",))),
                 PostedRead, [], id="ord003-ordered-link"),
    pytest.param(lambda: policy(read("r", fp(BUF, 0x0, 0x40), device="dpu0"), write("w", fp(BUF, 0x0, 0x40),
                                                                                  after=("r",)), links=POSTED),
                 PostedRead, [], id="ord003-reader-before-writer"),
    pytest.param(lambda: policy(write("w", fp(BUF, 0x0, 0x40)), write("w2", fp(BUF, 0x0, 0x40), device="dpu0",
                                                                      after=("w",)), links=POSTED),
                 PostedRead, [], id="ord003-second-access-writes"),
    pytest.param(lambda: policy(move("m", fp(A, 0x0, 0x40), fp(BUF, 0x0, 0x40))), InOrder, [],
                 id="ord004-not-required"),
]


@pytest.mark.parametrize("make,cls,expected", ABSENT)
def test_generated_only_where_it_applies(make, cls, expected) -> None:
    assert keys_of(generated(ordering, make()), cls) == expected


def test_edge_without_bytes_is_no_race() -> None:
    # A flush touches no bytes: no race with a write, even unordered.
    pol = policy(write("w", fp(A, 0x0, 0x40)), edge("fl", "flush", flushes=("gpu0--cxl0",)), links=LINKS)
    assert keys_of(generated(ordering, pol), Race) == []


def test_read_back_over_a_second_route_refuted() -> None:
    """The same device reading its posted write back over another route (a parallel link) is not
    ordered after it (PCIe orders a read after posted writes only along one path)."""
    pol = posted_read_back(parallel=True)
    ob = the(ordering, pol, PostedRead, "FX-ORD-003:w#0|r#0|gpu0--dpu0")
    assert ob.prove_fast() is None
    w = refute(ob)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_003 and v.edges[:2] == (0, 1)
