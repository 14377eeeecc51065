"""Small policies built directly as IR for unit tests of the obligation families (no parser).

Takes nothing; gives a fixed four-device fabric, spaces and regions whose addresses the tests
write out by hand, constructors for footprints and edges, ``policy`` (which numbers the edges in
order), and helpers that generate one family's obligations, look one up by class and key, decide
it with a seeded Z3 backend and replay its witness in the concrete simulator.

Fabric (``LINKS``): ``gpu0 -- dpu0`` (pcie, ordered) and ``gpu0 -- cxl0`` (cxl, ordered);
``nic0`` has no link at all (an island, for missing paths).

Memory (bytes, absolute addresses):

| region | space | device | range                         | owner | alias set | dtype |
|--------|-------|--------|-------------------------------|-------|-----------|-------|
| ``A``  | hbm0  | gpu0   | [0x0, 0x100)                  | gpu0  | -         | bf16  |
| ``B``  | hbm0  | gpu0   | [0x100, 0x200)                | gpu0  | -         | -     |
| ``BUF``| ddr0  | dpu0   | [0x0, 0x100)                  | dpu0  | -         | -     |
| ``POOL``| hdm0 | cxl0   | [0x8000_0000, 0x8000_0100)    | gpu0  | -         | fp8   |
| ``NB`` | nicm  | nic0   | [0x20_0000, 0x20_0100)        | nic0  | -         | -     |

``hbm0`` and ``ddr0`` both start at 0: the same numbers in two spaces are different bytes.
``hdm0`` is persistent (pmem), the others are not.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

from fxverify.graph import PolicyGraph
from fxverify.ir import (
    AliasSet, ConsistencyClass, Device, Edge, EdgeAction, FinalOwner, Footprint, Handoff, Lease, Link, MapDecl, MapOp, Revoke,
    MapOpKind, Policy, Region, Release, Space,
)
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.witness import Witness
from fxverify.replay.simulate import Simulator, Violation
from fxverify.smt.backend import Backend, Query, Result, SolverOptions, Status
from fxverify.smt.factory import open_backend
from fxverify.vocab import ClassKind, DeviceKind, LinkOrder, ReleaseKind

GPU = Device("gpu0", DeviceKind.GPU, ("launch", "copy_done", "free"))
DPU = Device("dpu0", DeviceKind.DPU, ("rx", "tx", "dma_done"))
CXL = Device("cxl0", DeviceKind.CXL_MEM, ("near_mem",))
NIC = Device("nic0", DeviceKind.NIC, ("rx",))
DEVICES = (GPU, DPU, CXL, NIC)


def links(gpu_dpu: LinkOrder = LinkOrder.ORDERED, gpu_cxl: LinkOrder = LinkOrder.ORDERED) -> tuple[Link, ...]:
    """The two fabric links, with the ordering semantics asked for."""
    return (Link("gpu0--dpu0", "gpu0", "dpu0", "pcie", gpu_dpu), Link("gpu0--cxl0", "gpu0", "cxl0", "cxl", gpu_cxl))


LINKS = links()
POSTED = links(gpu_dpu=LinkOrder.POSTED)

SPACES = (
    Space("hbm0", "gpu0", 0x0, 0x1_0000),
    Space("ddr0", "dpu0", 0x0, 0x1_0000),
    Space("hdm0", "cxl0", 0x8000_0000, 0x1_0000, persistent=True),
    Space("nicm", "nic0", 0x20_0000, 0x1000),
)

A = Region("a", "a", "hbm0", 0x0, 0x100, "gpu0", dtype="bf16")
B = Region("b", "b", "hbm0", 0x100, 0x100, "gpu0")
BUF = Region("buf", "buf", "ddr0", 0x0, 0x100, "dpu0")
POOL = Region("pool", "pool", "hdm0", 0x8000_0000, 0x100, "gpu0", dtype="fp8")
NB = Region("nb", "nb", "nicm", 0x20_0000, 0x100, "nic0")
REGIONS = (A, B, BUF, POOL, NB)

MAPS = (
    MapDecl("loc", "array", "u32", "u64", 8, ConsistencyClass(ClassKind.LOCAL, "gpu0"), "last"),
    MapDecl("cnt", "array", "u32", "u64", 8, ConsistencyClass(ClassKind.PER_DEVICE), "sum"),
    MapDecl("ev", "hash", "u32", "u32", 8, ConsistencyClass(ClassKind.EVENTUAL), "max"),
    MapDecl("cs", "hash", "u32", "u32", 8, ConsistencyClass(ClassKind.CAUSAL)),
    MapDecl("csum", "hash", "u32", "u64", 8, ConsistencyClass(ClassKind.CAUSAL), "sum"),
    MapDecl("lin", "hash", "u32", "u32", 8, ConsistencyClass(ClassKind.LINEARIZABLE), "last"),
)


# ---- footprints and edges -------------------------------------------------------------------

def fp(region: Region, base: int, elem: int, stride: int | None = None, count: int = 1) -> Footprint:
    """``{base + k*stride + o : 0 <= k < count, 0 <= o < elem}`` through ``region`` (absolute
    ``base``, bytes); a contiguous range when ``stride`` is omitted."""
    return Footprint(region.name, region.space, base, elem, elem if stride is None else stride, count)


def whole(region: Region) -> Footprint:
    """Every byte of ``region``."""
    return fp(region, region.base, region.size)


_FIRST_HOOK = {d.name: d.hooks[0] for d in DEVICES}


def edge(name: str, action: str, device: str = "gpu0", hook: str | None = None, **kw) -> Edge:
    """An edge instance; ``policy`` gives it its id. ``hook`` defaults to the device's first hook."""
    return Edge(0, name, name.split("[")[0], EdgeAction(action), device, hook or _FIRST_HOOK[device], **kw)


def write(name: str, dst: Footprint, device: str = "gpu0", **kw) -> Edge:
    return edge(name, "write", device, dst=dst, **kw)


def read(name: str, src: Footprint, device: str = "gpu0", **kw) -> Edge:
    return edge(name, "read", device, src=src, **kw)


def move(name: str, src: Footprint, dst: Footprint, device: str = "gpu0", **kw) -> Edge:
    return edge(name, "move", device, src=src, dst=dst, **kw)


def reduce(name: str, src: Footprint, dst: Footprint, op: str, device: str = "gpu0", **kw) -> Edge:
    return edge(name, "reduce", device, src=src, dst=dst, reduce_op=op, **kw)


def release(name: str, region: Region, device: str = "gpu0", kind: ReleaseKind = ReleaseKind.FREE, **kw) -> Edge:
    return edge(name, "release", device, "free" if device == "gpu0" else None,
                releases=(Release(region.name, kind),), **kw)


def flush(name: str, link: str, device: str = "gpu0", **kw) -> Edge:
    return edge(name, "flush", device, flushes=(link,), **kw)


def handoff(region: Region, src: str, dst: str) -> tuple[Handoff, ...]:
    return (Handoff(region.name, src, dst),)


def lease(region: Region, device: str) -> tuple[Lease, ...]:
    return (Lease(region.name, device),)


def revoke(region: Region, device: str) -> tuple[Revoke, ...]:
    return (Revoke(region.name, device),)


def mapop(m: str, kind: str, key: int = 0, value: int | None = 1) -> MapOp:
    return MapOp(m, MapOpKind(kind), key, value)


def policy(*edges: Edge, regions: tuple[Region, ...] = REGIONS, links: tuple[Link, ...] = LINKS,
           alias_sets: tuple[AliasSet, ...] = (), maps: tuple[MapDecl, ...] = MAPS,
           final_owners: tuple[tuple[str, str], ...] = ()) -> Policy:
    """A policy over the fixed fabric; edge ``i`` of ``edges`` gets id ``i``. ``final_owners``
    are ``(region, device)`` pairs."""
    return Policy("unit", "unit.fx", DEVICES, links, SPACES, regions, alias_sets, maps,
                  tuple(replace(e, eid=i) for i, e in enumerate(edges)),
                  tuple(FinalOwner(r, d) for r, d in final_owners))


# ---- obligations ----------------------------------------------------------------------------

def generated(family: ModuleType, pol: Policy) -> list[Obligation]:
    """Every obligation that ``family.generate`` yields for ``pol``."""
    return list(family.generate(Context(pol, PolicyGraph(pol))))


def keys_of(obs: list[Obligation], cls: type) -> list[str]:
    """Keys of the obligations of exactly class ``cls``, in generation order."""
    return [o.key for o in obs if type(o) is cls]


def the(family: ModuleType, pol: Policy, cls: type, key: str) -> Obligation:
    """The one obligation of class ``cls`` with ``key`` that ``family`` generates for ``pol``."""
    obs = generated(family, pol)
    hits = [o for o in obs if type(o) is cls and o.key == key]
    assert len(hits) == 1, f"{cls.__name__} {key!r} among {[(type(o).__name__, o.key) for o in obs]}"
    return hits[0]


_BACKEND: list[Backend] = []


def backend() -> Backend:
    """The seeded Z3 backend every obligation test decides with (opened once)."""
    if not _BACKEND:
        _BACKEND.append(open_backend(SolverOptions()))
    return _BACKEND[0]


def decide(ob: Obligation) -> tuple[Query, Result]:
    """Encode ``ob`` and decide the query."""
    q = ob.encode()
    return q, backend().check(q)


def assert_solver_proves(ob: Obligation) -> None:
    """The solver's answer to ``ob``'s query is the one that proves it."""
    q, r = decide(ob)
    assert r.status is q.expect, (ob.key, r)


def refute(ob: Obligation) -> Witness:
    """Assert that no fast proof applies and the solver refutes ``ob``; return its witness."""
    method = ob.prove_fast()
    assert method is None, f"{ob.key} is proved by {method!r}"
    q, r = decide(ob)
    assert r.status is not Status.UNKNOWN, r.reason
    assert r.status is not q.expect, ob.key
    return ob.witness(r)


def replay(pol: Policy, ob: Obligation, w: Witness) -> Violation | None:
    """What the concrete simulator observes when it replays ``w`` (as the pipeline calls it)."""
    edges = tuple(w.cycle) if w.cycle else ob.edges
    return Simulator(pol).confirm(ob.code, edges, w.schedule, w.address, w.values, w.other_schedule)


def overlaps(sched: dict[int, tuple[int, int]], a: int, b: int) -> bool:
    """The half-open intervals of ``a`` and ``b`` in ``sched`` intersect."""
    return sched[a][0] < sched[b][1] and sched[b][0] < sched[a][1]
