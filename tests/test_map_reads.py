"""What a plain map read may return (``replay.map_reads``) and its check in ``--kernel-run``
(``differential.check_reads``): worked cases on every class, a property test against an
independent brute force over the instants and orders operations may take, and observations
fabricated outside the allowed set, which the differential must report. No kernel needed."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings, strategies as st

from fxverify.ir import ConsistencyClass, Device, Edge, EdgeAction, MapDecl, MapOp, MapOpKind, Policy
from fxverify.lower.differential import RunReport, check_reads, serialise, wavefront
from fxverify.lower.kernel import OBS_MAP, Decision, Observation
from fxverify.replay.map_reads import allowed_values, read_values
from fxverify.replay.simulate import Simulator
from fxverify.resolve import load_policy
from fxverify.source import SourceMap
from fxverify.vocab import OPERATORS, ClassKind, DeviceKind
from tests.conftest import ROOT

DEVICES = (Device("gpu0", DeviceKind.GPU, ("launch",)), Device("dpu0", DeviceKind.DPU, ("rx",)))
CLASSES = [ConsistencyClass(ClassKind.LINEARIZABLE), ConsistencyClass(ClassKind.CAUSAL),
           ConsistencyClass(ClassKind.EVENTUAL), ConsistencyClass(ClassKind.LOCAL, "gpu0"),
           ConsistencyClass(ClassKind.PER_DEVICE), ConsistencyClass(ClassKind.CONST)]
MERGES = ["sum", "max", "last", "xor", None]


def _policy(cls: ConsistencyClass, merge: str | None, edges: list[tuple[str, tuple[int, ...], tuple[MapOp, ...]]]) -> Policy:
    """A policy of one map ``m`` (class ``cls``, ``merge``) and ``edges`` given as (device,
    predecessor ids, map ops)."""
    m = MapDecl("m", "array", "u32", "u32", 4, cls, merge)
    es = tuple(Edge(i, f"e{i}", f"e{i}", EdgeAction.WRITE, dev, DEVICES[[d.name for d in DEVICES].index(dev)].hooks[0],
                    after=tuple(f"e{p}" for p in preds), map_ops=ops) for i, (dev, preds, ops) in enumerate(edges))
    return Policy("reads", "reads.fx", DEVICES, (), (), (), (), (m,), es, ())


def W(v: int, key: int = 0) -> MapOp:
    return MapOp("m", MapOpKind.WRITE, key, v)


def U(v: int, key: int = 0) -> MapOp:
    return MapOp("m", MapOpKind.UPDATE, key, v)


def R(key: int = 0) -> MapOp:
    return MapOp("m", MapOpKind.READ, key)


def A(key: int = 0) -> MapOp:
    return MapOp("m", MapOpKind.AGGREGATE, key)


# -- worked cases ---------------------------------------------------------------------------------

def test_const_reads_see_the_initial_value_whatever_is_written() -> None:
    # A write that finished long before the read (and happens-before it) never takes effect.
    pol = _policy(ConsistencyClass(ClassKind.CONST), None, [("gpu0", (), (W(5),)), ("gpu0", (0,), (R(), A()))])
    sim = Simulator(pol)
    assert read_values(sim, {0: (0, 1), 1: (2, 3)}) == {(1, 0): frozenset({0}), (1, 1): frozenset({0})}


def test_causal_needs_happens_before_linearizable_needs_real_time() -> None:
    # e0 writes 5 and finishes at 1; e1 reads at 2, unordered with e0 (no `after`).
    for cls, want in ((ClassKind.LINEARIZABLE, {5}), (ClassKind.CAUSAL, {0, 5}), (ClassKind.EVENTUAL, {0, 5})):
        pol = _policy(ConsistencyClass(cls), None, [("gpu0", (), (W(5),)), ("gpu0", (), (R(),))])
        assert allowed_values(Simulator(pol), {0: (0, 1), 1: (2, 3)}, 1, 0) == want, cls
    # With `after e0`, causal must see it too; eventual still need not.
    for cls, want in ((ClassKind.CAUSAL, {5}), (ClassKind.EVENTUAL, {0, 5})):
        pol = _policy(ConsistencyClass(cls), None, [("gpu0", (), (W(5),)), ("gpu0", (0,), (R(),))])
        assert allowed_values(Simulator(pol), {0: (0, 1), 1: (2, 3)}, 1, 0) == want, cls


def test_concurrent_and_later_writes() -> None:
    lin = ConsistencyClass(ClassKind.LINEARIZABLE)
    pol = _policy(lin, None, [("gpu0", (), (W(5),)), ("gpu0", (), (R(),)), ("gpu0", (), (W(7),))])
    # e0 in flight while e1 reads: maybe; e2 starts after the read finished: never.
    assert allowed_values(Simulator(pol), {0: (0, 4), 1: (2, 3), 2: (3, 5)}, 1, 0) == {0, 5}


def test_visible_write_drags_in_what_precedes_it() -> None:
    # Linearizable: e0 [0,2) writes 1, then e1 [3,6) writes 2; the read [1,4) overlaps both. Seeing
    # e1's 2 is fine, and then e0 came first: never 1 after 2. Eventual may end on 1 (any order).
    edges = [("gpu0", (), (W(1),)), ("gpu0", (), (W(2),)), ("gpu0", (), (R(),))]
    sched = {0: (0, 2), 1: (3, 6), 2: (1, 4)}
    assert allowed_values(Simulator(_policy(CLASSES[0], None, edges)), sched, 2, 0) == {0, 1, 2}
    upd = [("gpu0", (), (U(1),)), ("gpu0", (), (U(2),)), ("gpu0", (), (R(),))]
    # Sums: seeing e1 (2) forces e0 (1) in: 0, 1 or 3, never 2 alone; eventual allows 2.
    assert allowed_values(Simulator(_policy(CLASSES[0], "sum", upd)), sched, 2, 0) == {0, 1, 3}
    assert allowed_values(Simulator(_policy(CLASSES[2], "sum", upd)), sched, 2, 0) == {0, 1, 2, 3}


def test_per_device_slots() -> None:
    pd = ConsistencyClass(ClassKind.PER_DEVICE)
    edges = [("gpu0", (), (U(3),)), ("dpu0", (), (U(4),)), ("gpu0", (0, 1), (R(), A()))]
    sim = Simulator(_policy(pd, "sum", edges))
    got = read_values(sim, {0: (0, 1), 1: (0, 1), 2: (2, 3)})
    assert got == {(2, 0): {3}, (2, 1): {7}}  # its own slot; the sum of both slots


def test_slots_wrap_at_their_width() -> None:
    pol = _policy(CLASSES[0], "sum", [("gpu0", (), (U(200),)), ("gpu0", (0,), (U(100),)), ("gpu0", (1,), (R(),))])
    assert allowed_values(Simulator(pol), {0: (0, 1), 1: (1, 2), 2: (2, 3)}, 2, 0, bits=8) == {44}


# -- property: against a brute force over instants and orders -------------------------------------

def _brute(pol: Policy, sim: Simulator, sched: dict, reader: int, op_index: int) -> set[int]:
    """Every value the read may return, by enumerating every order of the relevant writes and the
    read itself and keeping the orders the class allows: for the real-time classes, those that
    some choice of one instant per operation inside its interval realises (checked greedily along
    the order); for ``causal``, those that extend happens-before; for ``eventual``, any. Writes
    never take effect after an instant that is not yet reached: a write that starts when the read
    has finished comes after it in every class. The read sees the writes before it, folded in
    order from 0. No write of a ``const`` map takes effect (programs cannot write it), so its
    reads see 0 in every order."""
    decl = pol.maps[0]
    e = pol.edges[reader]
    rop = e.map_ops[op_index]
    per_dev = decl.cls.kind is ClassKind.PER_DEVICE
    whole = per_dev and rop.kind is MapOpKind.AGGREGATE
    ops = [(w, op) for w in sorted(sched) for op in pol.edges[w].map_ops
           if op.kind in (MapOpKind.WRITE, MapOpKind.UPDATE) and op.key == rop.key
           and (not per_dev or whole or pol.edges[w].device == e.device) and decl.cls.kind is not ClassKind.CONST]
    items = [("w", w, op) for w, op in ops] + [("r", reader, rop)]
    fold = OPERATORS[decl.merge].fold if decl.merge in OPERATORS else None
    out = set()
    for order in itertools.permutations(range(len(items))):
        seq = [items[i] for i in order]
        if decl.cls.kind in (ClassKind.LINEARIZABLE, ClassKind.LOCAL, ClassKind.PER_DEVICE):
            t, ok = -1, True
            for _k, edge, _op in seq:
                t = max(t, sched[edge][0])
                ok = ok and t < sched[edge][1]
            if not ok:
                continue
        if decl.cls.kind is ClassKind.CAUSAL and any(
                sim.hb(b[1], a[1]) for i, a in enumerate(seq) for b in seq[i + 1:]):
            continue
        at = next(i for i, x in enumerate(seq) if x[0] == "r")
        if any(sched[edge][0] >= sched[reader][1] for _k, edge, _op in seq[:at]):
            continue
        slots: dict[str, int] = {}
        for _k, edge, op in seq[:at]:
            slot = pol.edges[edge].device if whole else "-"
            old = slots.get(slot, 0)
            slots[slot] = fold(old, op.value) if op.kind is MapOpKind.UPDATE and fold else op.value
        out.add(sum(slots.values()))
    return out


@st.composite
def _cases(draw):
    """A one-map policy of up to 4 edges on two devices with random HB, map writes, updates and
    plain reads on one or two keys, and a valid schedule (possibly with ties)."""
    cls = draw(st.sampled_from(CLASSES))
    merge = draw(st.sampled_from(MERGES))
    n = draw(st.integers(2, 4))
    edges, sched = [], {}
    for i in range(n):
        preds = tuple(sorted(set(draw(st.lists(st.integers(0, i - 1), max_size=2))))) if i else ()
        dev = "gpu0" if cls.kind is ClassKind.LOCAL else draw(st.sampled_from(["gpu0", "dpu0"]))
        kinds = draw(st.lists(st.sampled_from(["W", "U", "U", "R", "A"]), min_size=1, max_size=2))
        ops = tuple({"W": W, "U": U}[k](draw(st.integers(0, 3)), draw(st.integers(0, 1))) if k in "WU"
                    else {"R": R, "A": A}[k](draw(st.integers(0, 1))) for k in kinds)
        edges.append((dev, preds, ops))
        s = max([sched[p][1] for p in preds], default=0) + draw(st.integers(0, 2))
        sched[i] = (s, s + draw(st.integers(1, 3)))
    return _policy(cls, merge, edges), sched


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_allowed_values_match_brute_force(case) -> None:
    pol, sched = case
    sim = Simulator(pol)
    assert sim.check_schedule(sched) is None
    for (e, i), got in read_values(sim, sched).items():
        assert got == _brute(pol, sim, sched, e, i), (pol.maps[0].cls, pol.maps[0].merge, sched,
                                                      [x.map_ops for x in pol.edges], e, i)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_stronger_classes_allow_fewer_values(case) -> None:
    # linearizable within causal within eventual, on the same operations and schedule.
    pol, sched = case
    if pol.maps[0].cls.kind in (ClassKind.LOCAL, ClassKind.PER_DEVICE, ClassKind.CONST):
        return
    sets = []
    for kind in (ClassKind.LINEARIZABLE, ClassKind.CAUSAL, ClassKind.EVENTUAL):
        p = _policy(ConsistencyClass(kind), pol.maps[0].merge, [(x.device, tuple(int(a[1:]) for a in x.after), x.map_ops)
                                                                 for x in pol.edges])
        sets.append(read_values(Simulator(p), sched))
    for k in sets[0]:
        assert sets[0][k] <= sets[1][k] <= sets[2][k]


# -- the differential check ------------------------------------------------------------------------

def _corpus_run():
    """The corpus policy with plain reads on a causal and a linearizable map, its driven schedule,
    and the kernel's observations as the interpreter would emit them: each read sees the fold of
    the writes whose end was driven before its start (``FX_OP_READ``)."""
    pol, diags = load_policy(str(ROOT / "corpus/maps/ok/plain-reads-by-class.fx"), SourceMap())
    assert pol is not None, diags
    sim = Simulator(pol)
    sched = serialise(wavefront(sim, len(pol.edges)))
    return pol, sim, sched


def _observed(pol: Policy, e: int, values: list[int], keys: list[int] | None = None) -> Decision:
    """A start of edge ``e`` that proceeded, with one ``FX_OBS_MAP`` per plain read carrying
    ``values`` (and ``keys``, default the policy's)."""
    reads = [op for op in pol.edges[e].map_ops if op.kind in (MapOpKind.READ, MapOpKind.AGGREGATE)]
    names = [m.name for m in pol.maps]
    keys = keys or [op.key or 0 for op in reads]
    obs = tuple(Observation(OBS_MAP, e, 0, 0, 0, names.index(op.map), k, v) for op, k, v in zip(reads, keys, values))
    return Decision(e, 0, "proceed", "hb", 0, 0, obs)


def test_check_reads_accepts_legal_values_and_reports_the_rest() -> None:
    pol, sim, sched = _corpus_run()
    peek, audit = (next(e.eid for e in pol.edges if e.name == n) for n in ("peek", "audit"))
    bits = {"layer_done": 32, "block_home": 32}
    cxl0 = [d.name for d in pol.devices].index("cxl0")
    ok = RunReport()
    # peek may see attn1's update or not, spill's write or not; audit must see both.
    check_reads(pol, sim, sched, [_observed(pol, peek, [1, cxl0]), _observed(pol, audit, [cxl0, 2])], bits, ok)
    assert ok.reads_total == ok.reads_agree == 4 and not ok.mismatches
    ok2 = RunReport()
    check_reads(pol, sim, sched, [_observed(pol, peek, [2, 0])], bits, ok2)
    assert ok2.reads_agree == 2 and not ok2.mismatches
    # audit reading the home map before spill's write, which happens-before it: stale.
    bad = RunReport()
    check_reads(pol, sim, sched, [_observed(pol, audit, [0, 2])], bits, bad)
    assert bad.reads_total == 2 and bad.reads_agree == 1 and not bad.ok
    assert "block_home" in bad.mismatches[0] and "kernel read 0" in bad.mismatches[0]
    # peek seeing nothing of attn0, which happens-before it on the causal map.
    bad2 = RunReport()
    check_reads(pol, sim, sched, [_observed(pol, peek, [0, 0])], bits, bad2)
    assert bad2.reads_agree == 1 and "layer_done" in bad2.mismatches[0]
    # A record for another key, and a missing record.
    bad3 = RunReport()
    check_reads(pol, sim, sched, [_observed(pol, audit, [cxl0, 2], keys=[8, 0]),
                                  Decision(peek, 0, "proceed", "hb", 0, 0, ())], bits, bad3)
    assert len(bad3.mismatches) == 2 and not bad3.ok, bad3.mismatches
