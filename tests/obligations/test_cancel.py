"""Cancellation on hand-built IR (specs/obligations.md section 1, cancellation): a cancelled
transfer ``x`` touches its bytes only over ``[s(x), min(f(x), f(c)))`` for its cancels ``c``,
and its writes define no byte. Each rule that uses the touch interval (FX-ORD-002 races, FX-OWN-002
in transit, FX-OWN-004 releases and lifetimes) proves the abort pattern "cancel the transfer,
then free or reuse its buffer" by the cancel alone, refutes a buffer reused before the cancel
completes with a witness the simulator replays, and certifies the fast proof; FX-INIT-001 counts
no byte of a cancelled write, and a cancelled read consumes no accumulation.

Region ``a`` (hbm0, [0x0, 0x100)) is owned by gpu0; ``b`` ([0x100, 0x200)) is gpu0's too.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fxverify.certificate import CancelledFirst, HbPath
from fxverify.certify import MODES, Claim, certify
from fxverify.diagnostics import codes
from fxverify.edits import after
from fxverify.ir import Alloc, Cancel, Region, Release
from fxverify.obligations import defined, lifetimes, ordering, ownership, transforms
from fxverify.obligations.defined import Unwritten
from fxverify.obligations.lifetimes import OutsideAllocation
from fxverify.obligations.ordering import Race, RaceFree
from fxverify.obligations.ownership import InTransit, Unowned, UseAfterRelease
from fxverify.obligations.reductions import LostAccumulation
from fxverify.replay.simulate import Simulator
from fxverify.replay.trace import build_trace
from fxverify.vocab import ReleaseKind

from tests.ir_builders import (
    A, B, REGIONS, assert_solver_proves, edge, fp, handoff, move, policy, read, reduce, refute, release, replay, the, whole,
    write,
)

A_LO = fp(A, 0x0, 0x40)


def cancel(name: str, *targets: str, **kw):
    """An edge on gpu0 (unless ``device``) whose only job is to cancel ``targets``."""
    return edge(name, "cancel", kw.pop("device", "gpu0"), cancels=tuple(Cancel(t) for t in targets), **kw)


def _certified(pol, ob) -> None:
    """The fast proof's certificate validates in both checker modes."""
    cert = ob.certificate()
    assert cert is not None
    claim = Claim(ob.key, str(ob.code), tuple(ob.edges), ob.prove_fast())
    for mode in MODES:
        assert certify(pol, [(claim, cert)], mode).failures == [], mode


# ---- races ------------------------------------------------------------------------------------


def reuse_after(reuse_after: tuple[str, ...]):
    # pull writes `a`; stop cancels it; reuse writes `a` again after `reuse_after`.
    return policy(move("pull", whole(B), A_LO), cancel("stop", "pull"), write("reuse", A_LO, after=reuse_after))


def test_a_buffer_reused_after_the_cancel_completes_is_race_free() -> None:
    pol = reuse_after(("stop",))
    ob = the(ordering, pol, Race, "FX-ORD-002:pull#1|reuse#0")
    assert ob.edges == (0, 2, 1) and ob.culprits() == (0, 2)
    assert ob.prove_fast() == "cancel-order"  # the reason: `reuse` is HB-after the cancel, not after `pull`
    assert isinstance(ob.evidence(), CancelledFirst)
    assert_solver_proves(ob)
    _certified(pol, ob)


def test_a_cancel_completed_before_the_transfer_starts_leaves_it_nothing_to_touch() -> None:
    pol = policy(cancel("stop", "pull"), move("pull", whole(B), A_LO, after=("stop",)), write("reuse", A_LO))
    ob = the(ordering, pol, Race, "FX-ORD-002:pull#1|reuse#0")
    assert ob.prove_fast() == "cancel-order" and ob.evidence().path.last == 1
    assert_solver_proves(ob)
    _certified(pol, ob)


def test_a_buffer_reused_while_the_cancel_may_still_run_races() -> None:
    pol = reuse_after(())
    ob = the(ordering, pol, Race, "FX-ORD-002:pull#1|reuse#0")
    w = refute(ob)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.ORD_002
    (sp, fp_), (sc, fc), (sr, fr) = w.schedule[0], w.schedule[1], w.schedule[2]
    assert max(sp, sr) < min(fp_, fc, fr)  # the reuse starts before the cancel completes
    assert ob.fix(w).text().startswith("add `after stop` to `reuse`") and "cancelled" in ob.message(w)
    trace = build_trace(pol, ob.code, ob.edges, w, ob.why(w), ob.fix(w).text(), step=ob.violating(w))
    assert any(e.kind == "cancel" and e.edge == "stop" for e in trace.events)


def test_a_reuse_ordered_after_the_cancel_issues_but_on_its_edge_still_races() -> None:
    # The reuse is the cancelling edge: it writes while its own cancel is still running.
    pol = policy(move("pull", whole(B), A_LO), write("reuse", A_LO, cancels=(Cancel("pull"),)))
    ob = the(ordering, pol, Race, "FX-ORD-002:pull#1|reuse#0")
    assert ob.edges == (0, 1)
    w = refute(ob)
    assert replay(pol, ob, w) is not None


# ---- in transit ---------------------------------------------------------------------------------


def test_a_handoff_after_the_cancel_is_not_in_transit_for_the_cancelled_access() -> None:
    pol = policy(move("pull", whole(B), A_LO), cancel("stop", "pull"),
                 read("give", fp(A, 0x80, 0x10), handoffs=handoff(A, "gpu0", "dpu0"), after=("stop",)))
    ob = the(ownership, pol, InTransit, "FX-OWN-002:pull|give|a")
    assert ob.prove_fast() == "cancel-order"
    assert_solver_proves(ob)
    _certified(pol, ob)
    bad = policy(*pol.edges[:2], replace(pol.edges[2], after=()))
    ob = the(ownership, bad, InTransit, "FX-OWN-002:pull|give|a")
    w = refute(ob)
    assert replay(bad, ob, w) is not None


@pytest.mark.parametrize("pull_after,refuted", [
    (("stop",), False),   # the cancel completes before the transfer starts: it touches nothing
    (("give",), True),    # it may start before the cancel completes, when `a` is the DPU's
], ids=["cancelled-first", "may-start-first"])
def test_a_cancelled_access_needs_an_owner_only_if_it_touches_its_bytes(pull_after, refuted) -> None:
    """FX-OWN-001 with ``TOUCHES``: gpu0 hands `a` to the DPU (``give``), then ``pull`` (gpu0)
    writes `a`; ``stop`` cancels ``pull``. When ``pull`` runs after its cancel completed it
    touches no byte and needs no owner (proved by the solver); when it may start before, it
    writes `a` while the DPU owns it, which the simulator replays."""
    pol = policy(read("give", fp(B, 0x100, 0x10), handoffs=handoff(A, "gpu0", "dpu0")),
                 cancel("stop", "pull", after=("give",)), move("pull", whole(B), A_LO, after=pull_after))
    ob = the(ownership, pol, Unowned, "FX-OWN-001:pull|a")
    assert set(ob.edges) >= {2, 1} and ob.cancels == [1]
    if not refuted:
        assert_solver_proves(ob)
        return
    w = refute(ob)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.OWN_001
    s_pull, f_stop = w.schedule[2][0], w.schedule[1][1]
    assert s_pull < f_stop  # it started while the cancel still ran


# ---- releases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("free_after,proved", [
    (("stop",), "cancel-order"),        # freed once the cancel completed
    (("pull",), "hb-reachability"),     # freed once the transfer itself finished
    ((), None),                         # freed at any time
    (("issue",), None),                 # freed once the cancel was issued, not completed
], ids=["after-cancel", "after-transfer", "unordered", "after-issue"])
def test_a_release_after_the_cancel_completes_is_safe(free_after, proved) -> None:
    pol = policy(move("pull", whole(B), A_LO), read("issue", fp(B, 0x100, 0x10)),
                 cancel("stop", "pull", after=("issue",)), release("free", A, after=free_after))
    ob = the(ownership, pol, UseAfterRelease, "FX-OWN-004:free|pull|a")
    assert ob.edges == (3, 0, 2)
    if proved:
        assert ob.prove_fast() == proved
        assert_solver_proves(ob)
        _certified(pol, ob)
        return
    assert ob.prove_fast() is None
    w = refute(ob)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.OWN_004 and v.edges == (3, 0)
    assert ob.fix(w).options[0].edits == (after("free", "stop"),)


def test_a_release_on_the_cancelling_edge_is_before_the_cancel_completes() -> None:
    pol = policy(move("pull", whole(B), A_LO), edge("stop", "release", "gpu0", "free", cancels=(Cancel("pull"),),
                                                      releases=(Release("a", ReleaseKind.FREE),)))
    ob = the(ownership, pol, UseAfterRelease, "FX-OWN-004:stop|pull|a")
    assert ob.edges == (1, 0)
    w = refute(ob)
    assert replay(pol, ob, w) is not None
    # moving the release to an edge of its own after `stop` is no single edit: no hint (never one
    # that orders `stop` after itself)
    assert not ob.fix(w)


def test_tampered_cancel_orders_are_rejected() -> None:
    pol = policy(move("pull", whole(B), A_LO), cancel("stop", "pull"), cancel("other", "reuse"),
                 write("reuse", A_LO, after=("stop",)))
    ob = the(ordering, pol, Race, "FX-ORD-002:pull#1|reuse#0")
    cert = ob.certificate()
    claim = Claim(ob.key, str(ob.code), tuple(ob.edges), "cancel-order")
    for mode in MODES:
        # `other` does not cancel `pull`; a path that does not start at the cancel; a path to an edge
        # of neither access
        for ev in (replace(cert.evidence, cancel=2, path=HbPath((2, 3))), replace(cert.evidence, path=HbPath((0, 3))),
                   replace(cert.evidence, cancelled=3)):
            bad = replace(cert, evidence=ev)
            assert [f.key for f in certify(pol, [(claim, bad)], mode).failures] == [claim.key], (mode, ev)


def test_a_cancel_order_is_its_own_method() -> None:
    """A proof that rests on a cancel is reported and certified as `cancel-order`, not as
    `hb-reachability` (no HB path orders the two accesses): the checker refuses a cancel order
    offered for `hb-reachability`, and an HB order offered for `cancel-order`."""
    pol = reuse_after(("stop",))
    ob = the(ordering, pol, Race, "FX-ORD-002:pull#1|reuse#0")
    cert = ob.certificate()
    assert cert.method == "cancel-order" and cert.evidence.kind == "cancel-order"
    ordered = policy(move("pull", whole(B), A_LO), cancel("stop", "pull"), write("reuse", A_LO, after=("pull",)))
    hb = the(ordering, ordered, RaceFree, "FX-ORD-002:reuse#0|earlier")
    assert hb.prove_fast() == "hb-reachability" and hb.evidence().kind == "hb-before-all"
    for mode in MODES:
        for p, o, method in ((pol, ob, "hb-reachability"), (ordered, hb, "cancel-order")):
            c = replace(o.certificate(), method=method)
            claim = Claim(o.key, str(o.code), tuple(o.edges), method)
            (failure,) = certify(p, [(claim, c)], mode).failures
            assert "cannot back the method" in str(failure), (mode, method)


def test_the_stats_name_the_cancel_order() -> None:
    """`--stats` counts a proof by a cancel under `cancel-order` (the corpus's abort pattern:
    the buffer is reused once the cancel of its transfer completed), and the certificate checker
    accepts it under that name."""
    from fxverify.pipeline import CheckOptions, check

    from tests.conftest import ROOT

    r = check(str(ROOT / "corpus/ownership/ok/free-before-cancel-completes.fx"),
              CheckOptions(certify=MODES[0], verify_hints=False))
    assert r.counts()["ordering"]["by:cancel-order"] == 1
    assert r.certify_rejected == 0 and r.certified == sum(1 for o in r.outcomes if o.method != "solver")


# ---- lifetimes ----------------------------------------------------------------------------------


def pooled_block(free_after: tuple[str, ...]):
    p = Region("p", "p", "hbm0", 0x1000, 0x100, "gpu0", pooled=True)
    pol = policy(edge("take0", "alloc", allocs=(Alloc("p", "gpu0"),)),
                 move("pull", whole(B), fp(p, 0x1000, 0x40), after=("take0",)),
                 cancel("stop", "pull", after=("take0",)),
                 release("free", p, kind=ReleaseKind.RETURN_POOL, after=free_after),
                 edge("take1", "alloc", allocs=(Alloc("p", "gpu0"),), after=("free",)),
                 write("fill1", fp(p, 0x1000, 0x40), after=("take1",)),
                 regions=REGIONS + (p,))
    return pol


def test_a_cancelled_use_ends_with_its_cancel_inside_the_allocation() -> None:
    pol = pooled_block(("stop", "take0"))
    ob = the(lifetimes, pol, OutsideAllocation, "FX-OWN-004:pull|p")
    assert ob.prove_fast() == "hb-reachability"
    assert_solver_proves(ob)
    _certified(pol, ob)
    race = the(ordering, pol, Race, "FX-ORD-002:pull#1|fill1#0")
    assert race.prove_fast() == "cancel-order"  # `fill1` is HB-after `stop` (via `free`), not after `pull`
    _certified(pol, race)


def test_a_block_freed_before_the_cancel_completes_is_used_outside_its_allocation() -> None:
    pol = pooled_block(("take0",))
    ob = the(lifetimes, pol, OutsideAllocation, "FX-OWN-004:pull|p")
    assert ob.prove_fast() is None
    w = refute(ob)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.OWN_004
    assert "cancel" in ob.message(w) and ob.fix(w).options[0].edits == (after("free", "stop"),)
    # the next request's write may land while the cancelled pull still writes
    assert (codes.ORD_002, (1, 5)) in Simulator(pol).explore_violations()


# ---- def-before-use and consumption -------------------------------------------------------------


def test_a_cancelled_write_defines_nothing() -> None:
    # pull moves `b` into `a`, stop cancels it, and a reader after both finds nothing written.
    pol = policy(write("fill", whole(B)), move("pull", whole(B), A_LO, after=("fill",)), cancel("stop", "pull"),
                 read("use", A_LO, after=("pull", "stop")))
    ob = the(defined, pol, Unwritten, "FX-INIT-001:use#0")
    # the cancelled move serves no read: it and its cancel are primaries only as a write that may
    # tear the bytes (FX-INIT-001, torn bytes), and no writer is listed
    assert ob.edges == (3, 1, 2) and ob.ws == []
    w = refute(ob)
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.INIT_001
    assert "`stop` cancels it" in ob.message(w)
    assert "init" not in ob.fix(w).text()  # the bytes are written, by a transfer that may stop halfway
    done = policy(*pol.edges[:2], read("use", A_LO, after=("pull",)))
    assert the(defined, done, Unwritten, "FX-INIT-001:use#0").prove_fast() == "hb-cover"


def test_a_certificate_that_counts_a_cancelled_write_is_rejected() -> None:
    done = policy(write("fill", whole(B)), move("pull", whole(B), A_LO, after=("fill",)), read("use", A_LO, after=("pull",)))
    ob = the(defined, done, Unwritten, "FX-INIT-001:use#0")
    cert, claim = ob.certificate(), Claim(ob.key, str(ob.code), tuple(ob.edges), "hb-cover")
    pol = policy(*done.edges, cancel("stop", "pull"))
    for mode in MODES:
        assert certify(done, [(claim, cert)], mode).failures == []
        assert [f.key for f in certify(pol, [(claim, cert)], mode).failures] == [claim.key]


def test_a_cancelled_read_consumes_no_accumulation() -> None:
    acc = fp(A, 0x0, 0x40)
    base = (reduce("r", fp(B, 0x100, 0x40), acc, "sum"), read("look", acc, after=("r",)),
            write("w", acc, after=("look",)))
    ok = the(transforms, policy(*base), LostAccumulation, "FX-XF-004:r#1|w#0")
    assert ok.prove_fast() == "hb-reachability"
    pol = policy(*base, cancel("stop", "look"))
    ob = the(transforms, pol, LostAccumulation, "FX-XF-004:r#1|w#0")
    assert ob.edges == (0, 2)  # the cancelled read is no reader
    w = refute(ob)
    assert replay(pol, ob, w) is not None
