"""Map obligations on hand-built IR: FX-MAP-001 (``LocalMap``), FX-MAP-002 (``LostUpdate``),
FX-MAP-003 (``StaleGuard``), FX-MAP-004 (``PerDeviceRead``, plain read and aggregate).

None of them has a solver-proved case: the class checks are static and exact, and two map
accesses that no HB path orders can always overlap, start in either order, or be in flight at
the same time, so the fast proofs are exact; the refuted cases check that.

Maps (``tests.ir_builders.MAPS``): ``loc`` local(gpu0); ``cnt`` per_device merge sum; ``ev``
eventual merge max; ``cs`` causal, no merge; ``csum`` causal merge sum; ``lin`` linearizable
merge last (not commutative).
"""

from __future__ import annotations

import pytest

from fxverify.diagnostics import codes
from fxverify.obligations import maps
from fxverify.obligations.maps import LocalMap, LostUpdate, PerDeviceRead, StaleGuard

from tests.ir_builders import assert_solver_proves, edge, generated, keys_of, mapop, policy, refute, replay, the

_HOOK = {"gpu0": "launch", "dpu0": "rx", "cxl0": "near_mem"}


def prog(name: str, device: str, *ops, **kw):
    """An edge that moves no bytes and only runs its program's map operations."""
    return edge(name, "write", device, _HOOK[device], map_ops=ops, **kw)


# ---- proved by the fast proof (and the solver agrees) -----------------------------------------

FAST = [
    pytest.param(lambda: policy(prog("e", "gpu0", mapop("loc", "read"))), LocalMap, "FX-MAP-001:e#0|loc",
                 "static-class", id="map001-on-home-device"),
    pytest.param(lambda: policy(prog("a", "gpu0", mapop("lin", "write", 3)),
                                prog("b", "dpu0", mapop("lin", "write", 3), after=("a",))),
                 LostUpdate, "FX-MAP-002:a#0|b#0|lin[3]", "hb-reachability", id="map002-ordered-writes"),
    pytest.param(lambda: policy(prog("w", "gpu0", mapop("cs", "write", 1)),
                                prog("g", "dpu0", mapop("cs", "guard", 1), after=("w",))),
                 StaleGuard, "FX-MAP-003:g#0|w#0|cs[1]", "hb-reachability", id="map003-causal-writer-before"),
    pytest.param(lambda: policy(prog("g", "dpu0", mapop("ev", "guard", 1)),
                                prog("w", "gpu0", mapop("ev", "write", 1), after=("g",))),
                 StaleGuard, "FX-MAP-003:g#0|w#0|ev[1]", "hb-reachability", id="map003-eventual-writer-after"),
    pytest.param(lambda: policy(prog("w", "gpu0", mapop("cnt", "update")), prog("r", "gpu0", mapop("cnt", "read"))),
                 PerDeviceRead, "FX-MAP-004:r#0|cnt[0]", "static-class", id="map004-own-slot"),
    pytest.param(lambda: policy(prog("w", "dpu0", mapop("cnt", "update")),
                                prog("r", "gpu0", mapop("cnt", "aggregate"), after=("w",))),
                 PerDeviceRead, "FX-MAP-004:r#0|w#0|cnt[0]", "hb-reachability", id="map004-aggregate-after-writer"),
]


@pytest.mark.parametrize("make,cls,key,method", FAST)
def test_proved_fast(make, cls, key, method) -> None:
    ob = the(maps, make(), cls, key)
    assert ob.prove_fast() == method
    assert_solver_proves(ob)


# ---- refuted ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make,key,k", [
    pytest.param(lambda: policy(prog("e", "dpu0", mapop("loc", "write", 2))), "FX-MAP-001:e#0|loc", 2,
                 id="write-from-dpu0"),
    # The second operation of the edge: its position is part of the key.
    pytest.param(lambda: policy(prog("e", "dpu0", mapop("lin", "read", 1), mapop("loc", "update", 5))),
                 "FX-MAP-001:e#1|loc", 5, id="second-operation"),
])
def test_local_map_refuted(make, key, k) -> None:
    pol = make()
    ob = the(maps, pol, LocalMap, key)
    w = refute(ob)
    assert w.values == {"map": "loc", "key": k, "device": "dpu0"}
    assert w.schedule == {}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.MAP_001 and v.edges == (0,)


@pytest.mark.parametrize("ka,kb,m,key", [
    pytest.param("write", "write", "lin", "FX-MAP-002:a#0|b#0|lin[3]", id="two-blind-writes"),
    pytest.param("update", "write", "csum", "FX-MAP-002:a#0|b#0|csum[3]", id="update-vs-blind-write"),
    pytest.param("update", "update", "lin", "FX-MAP-002:a#0|b#0|lin[3]", id="updates-merge-last"),
    # One slot per device: two writers on the same device still share it.
    pytest.param("write", "write", "cnt", "FX-MAP-002:a#0|b#0|cnt[3]", id="per-device-same-device"),
])
def test_lost_update_refuted(ka, kb, m, key) -> None:
    pol = policy(prog("a", "gpu0", mapop(m, ka, 3)), prog("b", "gpu0", mapop(m, kb, 3)))
    ob = the(maps, pol, LostUpdate, key)
    w = refute(ob)
    assert w.values == {"map": m, "key": 3}
    assert w.schedule == {0: (0, 1), 1: (0, 1)}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.MAP_002 and v.edges == (0, 1)


@pytest.mark.parametrize("m,after,sched", [
    # causal, unordered: the guard starts while the write is in flight (s_w < s_g < f_w).
    pytest.param("cs", (), {0: (0, 2), 1: (1, 2)}, id="causal-in-flight"),
    # eventual: even a write that happens-before the guard may be missed.
    pytest.param("ev", ("w",), {0: (0, 1), 1: (1, 2)}, id="eventual-after-writer"),
])
def test_stale_guard_refuted(m, after, sched) -> None:
    pol = policy(prog("w", "gpu0", mapop(m, "write", 1)), prog("g", "dpu0", mapop(m, "guard", 1), after=after))
    ob = the(maps, pol, StaleGuard, f"FX-MAP-003:g#0|w#0|{m}[1]")
    assert ob.edges == (1, 0)
    w = refute(ob)
    assert w.values == {"map": m, "key": 1}
    assert w.schedule == sched
    assert w.schedule[0][0] < w.schedule[1][0]  # the writer started before the guard
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.MAP_003 and v.edges == (1, 0)


@pytest.mark.parametrize("writers,expected", [
    pytest.param(("dpu0",), "dpu0", id="one-foreign-writer"),
    pytest.param(("dpu0", "cxl0", "gpu0"), "cxl0,dpu0", id="two-foreign-writers"),
])
def test_per_device_plain_read_refuted(writers, expected) -> None:
    ws = [prog(f"w{i}", d, mapop("cnt", "update")) for i, d in enumerate(writers)]
    pol = policy(*ws, prog("r", "gpu0", mapop("cnt", "read")))
    r = len(ws)
    ob = the(maps, pol, PerDeviceRead, "FX-MAP-004:r#0|cnt[0]")
    assert ob.schedule_free
    w = refute(ob)
    assert w.values == {"map": "cnt", "key": 0, "writers": expected}
    assert w.schedule == {}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.MAP_004 and v.edges == (r,)


def test_per_device_aggregate_refuted() -> None:
    # The aggregate may run before dpu0 has written its slot.
    pol = policy(prog("w", "dpu0", mapop("cnt", "update")), prog("r", "gpu0", mapop("cnt", "aggregate")))
    ob = the(maps, pol, PerDeviceRead, "FX-MAP-004:r#0|w#0|cnt[0]")
    assert ob.edges == (1, 0) and not ob.schedule_free
    w = refute(ob)
    assert w.values == {"map": "cnt", "key": 0}
    assert w.schedule == {0: (0, 1), 1: (0, 1)}
    assert w.schedule[0][1] > w.schedule[1][0]  # the writer has not finished when the aggregate starts
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.MAP_004 and v.edges == (1, 0)


# ---- not generated ----------------------------------------------------------------------------

ABSENT = [
    pytest.param(lambda: policy(prog("e", "dpu0", mapop("lin", "write"))), LocalMap, [], id="map001-shared-class"),
    pytest.param(lambda: policy(prog("a", "gpu0", mapop("csum", "update", 1)), prog("b", "dpu0", mapop("csum", "update", 1))),
                 LostUpdate, [], id="map002-commuting-updates"),
    pytest.param(lambda: policy(prog("a", "gpu0", mapop("lin", "write", 1)), prog("b", "dpu0", mapop("lin", "write", 2))),
                 LostUpdate, [], id="map002-different-keys"),
    pytest.param(lambda: policy(prog("a", "gpu0", mapop("cnt", "write")), prog("b", "dpu0", mapop("cnt", "write"))),
                 LostUpdate, [], id="map002-per-device-different-slots"),
    pytest.param(lambda: policy(prog("a", "gpu0", mapop("lin", "write"), mapop("lin", "write"))),
                 LostUpdate, [], id="map002-within-one-edge"),
    # Only pairs with a blind write: the two commuting updates are not paired with each other.
    pytest.param(lambda: policy(prog("a", "gpu0", mapop("csum", "update", 1)), prog("b", "dpu0", mapop("csum", "update", 1)),
                                prog("c", "cxl0", mapop("csum", "write", 1))),
                 LostUpdate, ["FX-MAP-002:a#0|c#0|csum[1]", "FX-MAP-002:b#0|c#0|csum[1]"], id="map002-only-blind-pairs"),
    # A linearizable guard is checked too: it may run while the write is in flight.
    pytest.param(lambda: policy(prog("w", "gpu0", mapop("lin", "write", 1)), prog("g", "dpu0", mapop("lin", "guard", 1))),
                 StaleGuard, ["FX-MAP-003:g#0|w#0|lin[1]"], id="map003-linearizable"),
    # On a per-device map a guard reads its own slot: another device's writes are not paired.
    pytest.param(lambda: policy(prog("w", "gpu0", mapop("cnt", "write", 1)), prog("g", "dpu0", mapop("cnt", "guard", 1))),
                 StaleGuard, [], id="map003-per-device-other-slot"),
    pytest.param(lambda: policy(prog("w", "gpu0", mapop("cs", "write", 1)), prog("g", "dpu0", mapop("cs", "read", 1))),
                 StaleGuard, [], id="map003-plain-read"),
    pytest.param(lambda: policy(prog("w", "gpu0", mapop("cs", "write", 1)), prog("g", "dpu0", mapop("cs", "guard", 2))),
                 StaleGuard, [], id="map003-other-key"),
    pytest.param(lambda: policy(prog("g", "dpu0", mapop("cs", "write", 1), mapop("cs", "guard", 1))),
                 StaleGuard, [], id="map003-own-write"),
    pytest.param(lambda: policy(prog("w", "dpu0", mapop("cs", "write")), prog("r", "gpu0", mapop("cs", "aggregate"))),
                 PerDeviceRead, [], id="map004-not-per-device"),
    pytest.param(lambda: policy(prog("r", "gpu0", mapop("cnt", "aggregate"))), PerDeviceRead, [],
                 id="map004-aggregate-without-writers"),
    pytest.param(lambda: policy(prog("w", "dpu0", mapop("cnt", "update")), prog("r", "gpu0", mapop("cnt", "read", 1))),
                 PerDeviceRead, ["FX-MAP-004:r#0|cnt[1]"], id="map004-writer-of-other-key-is-not-foreign"),
]


@pytest.mark.parametrize("make,cls,expected", ABSENT)
def test_generated_only_where_it_applies(make, cls, expected) -> None:
    assert keys_of(generated(maps, make()), cls) == expected


def test_writer_of_other_key_leaves_plain_read_proved() -> None:
    pol = policy(prog("w", "dpu0", mapop("cnt", "update")), prog("r", "gpu0", mapop("cnt", "read", 1)))
    assert the(maps, pol, PerDeviceRead, "FX-MAP-004:r#0|cnt[1]").prove_fast() == "static-class"
