"""Fabric and hook obligations on hand-built IR: FX-HOOK-001 (``NoPath``, and ``FlushDriver`` for
flushes) and FX-HOOK-002 (``UndeclaredHook``).

None of them has a solver-proved case: fabric search, hook declarations and link endpoints are
decided exactly without the solver, so the queries only ever refute what the fast proof leaves.

Fabric: gpu0 -- dpu0, gpu0 -- cxl0; nic0 is an island.
"""

from __future__ import annotations

import pytest

from fxverify.diagnostics import codes
from fxverify.obligations import hooks
from fxverify.obligations.hooks import FlushDriver, NoPath, UndeclaredHook

from tests.ir_builders import (
    A, B, BUF, NB, POOL, assert_solver_proves, edge, flush, fp, generated, keys_of, move, policy, read, refute,
    release, replay, the, write,
)

A_LO = fp(A, 0x0, 0x40)
NB_LO = fp(NB, 0x20_0000, 0x40)

# ---- proved by the fast proof (and the solver agrees) -----------------------------------------

FAST = [
    pytest.param(lambda: policy(move("m", A_LO, fp(BUF, 0x0, 0x40))), NoPath, "FX-HOOK-001:m:gpu0>gpu0>dpu0",
                 "fabric-search", id="hook001-direct-link"),
    # dpu0 drives a copy gpu0 -> cxl0: gpu0 -- dpu0 and dpu0 -- gpu0 -- cxl0 both exist.
    pytest.param(lambda: policy(move("m", A_LO, fp(POOL, 0x8000_0000, 0x40), device="dpu0")), NoPath,
                 "FX-HOOK-001:m:gpu0>dpu0>cxl0", "fabric-search", id="hook001-driver-between"),
    # cxl0 writes into dpu0's memory over two hops.
    pytest.param(lambda: policy(write("w", fp(BUF, 0x0, 0x40), device="cxl0")), NoPath,
                 "FX-HOOK-001:w:cxl0>cxl0>dpu0", "fabric-search", id="hook001-two-hops"),
    pytest.param(lambda: policy(move("m", A_LO, fp(B, 0x100, 0x40))), NoPath, "FX-HOOK-001:m:gpu0>gpu0>gpu0",
                 "fabric-search", id="hook001-same-device"),
    pytest.param(lambda: policy(write("w", A_LO)), UndeclaredHook, "FX-HOOK-002:w", "declared", id="hook002-declared"),
    pytest.param(lambda: policy(flush("f", "gpu0--dpu0")), FlushDriver, "FX-HOOK-001:f:flush:gpu0--dpu0",
                 "link-endpoint", id="hook001-flush-from-a-end"),
    pytest.param(lambda: policy(flush("f", "gpu0--dpu0", device="dpu0")), FlushDriver, "FX-HOOK-001:f:flush:gpu0--dpu0",
                 "link-endpoint", id="hook001-flush-from-other-end"),
]


@pytest.mark.parametrize("make,cls,key,method", FAST)
def test_proved_fast(make, cls, key, method) -> None:
    ob = the(hooks, make(), cls, key)
    assert ob.prove_fast() == method
    assert_solver_proves(ob)


# ---- refuted ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make,key,values", [
    # gpu0 reaches {gpu0, dpu0, cxl0}: that is the cut, and nic0 lies outside it.
    pytest.param(lambda: policy(move("m", A_LO, NB_LO)), "FX-HOOK-001:m:gpu0>gpu0>nic0",
                 {"cut": "cxl0,dpu0,gpu0", "from": "gpu0", "to": "nic0"}, id="destination-unreachable"),
    # Reading nic0's memory from gpu0: nic0 reaches only itself.
    pytest.param(lambda: policy(read("r", NB_LO)), "FX-HOOK-001:r:nic0>gpu0>gpu0",
                 {"cut": "nic0", "from": "nic0", "to": "gpu0"}, id="source-unreachable"),
])
def test_no_path_refuted(make, key, values) -> None:
    pol = make()
    ob = the(hooks, pol, NoPath, key)
    w = refute(ob)
    assert w.values == values
    assert w.schedule == {}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.HOOK_001 and v.edges == (0,)


def closed(pol, cut: str) -> bool:
    """No link leaves the set of devices ``cut`` (what a cut must be)."""
    side = set(cut.split(",")) if cut else set()
    return all((ln.a in side) == (ln.b in side) for ln in pol.links)


@pytest.mark.parametrize("src,dst,key,values", [
    # gpu0 -> nic0 driven by dpu0: the leg gpu0 -> dpu0 exists, dpu0 -> nic0 does not.
    pytest.param(A_LO, NB_LO, "FX-HOOK-001:m:gpu0>dpu0>nic0", {"cut": "cxl0,dpu0,gpu0", "from": "dpu0", "to": "nic0"},
                 id="second-leg-missing"),
    # nic0 -> gpu0 driven by dpu0: the leg nic0 -> dpu0 is missing, dpu0 -> gpu0 exists.
    pytest.param(NB_LO, A_LO, "FX-HOOK-001:m:nic0>dpu0>gpu0", {"cut": "nic0", "from": "nic0", "to": "dpu0"},
                 id="first-leg-missing"),
])
def test_no_path_refuted_names_the_missing_leg(src, dst, key, values) -> None:
    pol = policy(move("m", src, dst, device="dpu0"))
    ob = the(hooks, pol, NoPath, key)
    w = refute(ob)
    # The witness names the leg that has no path, with the devices its start reaches: a closed cut.
    assert w.values == values
    assert closed(pol, str(w.values["cut"]))
    assert ob.fix(w).options[0].text() == f"declare `link {values['from']} -- {values['to']} : pcie ordered`"
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.HOOK_001 and v.edges == (0,)


def test_no_path_refuted_driver_off_the_path() -> None:
    # nic0 drives a copy inside gpu0's memory: bytes gpu0 -> gpu0, but via an island.
    pol = policy(move("m", A_LO, fp(B, 0x100, 0x40), device="nic0"))
    ob = the(hooks, pol, NoPath, "FX-HOOK-001:m:gpu0>nic0>gpu0")
    assert ob.pairs == [("gpu0", "nic0"), ("nic0", "gpu0")]
    w = refute(ob)
    # Either leg can be the one without a path; the cut is what its start reaches.
    reach = {"gpu0": "cxl0,dpu0,gpu0", "nic0": "nic0"}
    assert (w.values["from"], w.values["to"]) in ob.pairs
    assert w.values["cut"] == reach[str(w.values["from"])]
    assert closed(pol, str(w.values["cut"]))
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.HOOK_001 and v.edges == (0,)


@pytest.mark.parametrize("hook,hint", [
    pytest.param("rx", "add `rx` to the hooks of `gpu0`", id="hook-of-another-device"),
    pytest.param("lanch", "drive `w` by `gpu0.launch`, or add `lanch` to the hooks of `gpu0`", id="typo"),
])
def test_undeclared_hook_refuted(hook, hint) -> None:
    pol = policy(edge("w", "write", "gpu0", hook, dst=A_LO))
    ob = the(hooks, pol, UndeclaredHook, "FX-HOOK-002:w")
    w = refute(ob)
    assert w.values == {"hook": hook, "device": "gpu0"}
    assert ob.fix(w).text() == hint
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.HOOK_002 and v.edges == (0,)


def test_flush_driver_refuted() -> None:
    pol = policy(flush("f", "gpu0--dpu0", device="cxl0"))
    ob = the(hooks, pol, FlushDriver, "FX-HOOK-001:f:flush:gpu0--dpu0")
    w = refute(ob)
    assert w.values == {"link": "gpu0--dpu0", "device": "cxl0"}
    v = replay(pol, ob, w)
    assert v is not None and v.code == codes.HOOK_001 and v.edges == (0,) and v.detail == "flush gpu0--dpu0"


# ---- not generated ----------------------------------------------------------------------------

ABSENT = [
    pytest.param(lambda: policy(release("f", A)), NoPath, [], id="hook001-no-bytes"),
    pytest.param(lambda: policy(flush("f", "gpu0--dpu0", device="cxl0")), NoPath, [], id="hook001-flush-moves-no-bytes"),
    # Instances of one family with the same endpoints share the answer: one obligation.
    pytest.param(lambda: policy(move("m[0]", A_LO, fp(BUF, 0x0, 0x40)), move("m[1]", fp(A, 0x40, 0x40), fp(BUF, 0x40, 0x40))),
                 NoPath, ["FX-HOOK-001:m[0]:gpu0>gpu0>dpu0"], id="hook001-one-per-family-and-endpoints"),
    pytest.param(lambda: policy(move("m[0]", A_LO, fp(BUF, 0x0, 0x40)), move("m[1]", A_LO, fp(POOL, 0x8000_0000, 0x40))),
                 NoPath, ["FX-HOOK-001:m[0]:gpu0>gpu0>dpu0", "FX-HOOK-001:m[1]:gpu0>gpu0>cxl0"],
                 id="hook001-other-endpoints-kept"),
    pytest.param(lambda: policy(write("w", A_LO)), FlushDriver, [], id="hook001-no-flush"),
    # Every edge has a driving hook, including those that move no bytes.
    pytest.param(lambda: policy(write("w", A_LO), release("f", A), flush("fl", "gpu0--cxl0")), UndeclaredHook,
                 ["FX-HOOK-002:w", "FX-HOOK-002:f", "FX-HOOK-002:fl"], id="hook002-one-per-edge"),
]


@pytest.mark.parametrize("make,cls,expected", ABSENT)
def test_generated_only_where_it_applies(make, cls, expected) -> None:
    assert keys_of(generated(hooks, make()), cls) == expected
