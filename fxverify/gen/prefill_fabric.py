"""Place a prefill job on its fabric: devices, links, the ranks' GPUs and NICs, the CXL windows.

Takes an optional ``Topology`` (``nccl_topo``), an optional ``CxlFabric`` (``cxl_list``) and the
job's tensor-parallel shape; produces a ``FabricPlan``, part of the ``prefill_plan.PrefillPlan``:
every device with its hooks and provenance, every link with its ordering, which GPU runs each
rank, which NIC sends each KV group with ``--disaggregate`` (the nearest one in PCI hops, as NCCL
picks it), and which memdev homes each CXL window. ``specs/generators.md`` ("NCCL topology XML",
"`cxl list` JSON") says what each input element becomes. Emits FX-GEN-003 (raised as
``InputProblem``) for too few GPUs or no NIC, and FX-GEN-004 for a host label of a `cxl list`
listing that names a device of the machine.
"""

from __future__ import annotations

import networkx as nx

import re
from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import diagnostic
from fxverify.gen.cxl_list import CxlFabric, Sharing, Window
from fxverify.gen.input_file import InputProblem
from fxverify.gen.nccl_topo import Topology
from fxverify.vocab import DeviceKind, LinkOrder, size_text

# Hooks of the generated devices: the events the flow's edges run on (specs/generators.md).
GPU_HOOKS = ("launch", "copy_done", "free")
NIC_HOOKS = ("tx", "rx", "dma_done")
DPU_HOOKS = ("rx", "tx", "dma_done")
DECODE_HOOKS = ("launch",)
CXL_SWITCH_HOOKS = ("route",)
CXL_MEM_HOOKS = ("near_mem",)
PEER_HOOKS = ("run",)


@dataclass(frozen=True)
class Device:
    """A device of the fabric: ``name``, ``kind``, the ``hooks`` its edges run on, and a
    ``comment`` saying where it comes from (bus id, sizes; empty for assumed devices)."""

    name: str
    kind: DeviceKind
    hooks: tuple[str, ...] = ()
    comment: str = ""


@dataclass(frozen=True)
class Link:
    """A link ``a -- b`` of ``kind`` (one of ``vocab.LINK_KINDS``) with its ``order``, and a
    ``comment`` (its speed, or why it exists)."""

    a: str
    b: str
    kind: str
    order: LinkOrder
    comment: str = ""


@dataclass(frozen=True)
class FabricPlan:
    """Where the job runs. ``devices`` and ``links`` in declaration order; ``notes`` about the
    fabric; ``cpus``; ``gpus[r]`` runs rank r (the first ``tp`` GPUs in document order);
    ``rank_cpus[r]`` the CPU of rank r's NUMA node, whose memory holds its streamed weights and
    experts; ``primaries`` the first rank of each KV group; ``nic_of`` the NIC (or DPU) that sends
    a primary rank's KV with ``--disaggregate`` (the nearest in PCI hops, ``Topology.nearest_nic``);
    ``nics_used`` those NICs in device order; ``windows`` the CXL windows in address order
    (``CxlFabric.windows``) and ``home`` the memdev that homes each: the first memdev listed with
    the window, else the first memdev of all, else a placeholder ``cxlmem`` device; ``shared`` the
    windows other hosts map too (``CxlFabric.shared``), and ``peer_of`` the peer host (a ``cpu``
    device named by its label, with hook ``run``) that takes the spilled KV of each shared window:
    the first host that shares it."""

    devices: tuple[Device, ...]
    links: tuple[Link, ...]
    notes: tuple[str, ...]
    cpus: tuple[str, ...]
    gpus: tuple[str, ...]
    rank_cpus: tuple[str, ...]
    primaries: tuple[int, ...]
    nic_of: dict[int, str]
    nics_used: tuple[str, ...]
    windows: tuple[Window, ...]
    home: dict[str, str]
    shared: dict[str, tuple[Sharing, ...]] = field(default_factory=dict)
    peer_of: dict[str, str] = field(default_factory=dict)


def pinned_route(f: FabricPlan, a: str, b: str) -> list[tuple[str, str]]:
    """The route the generator pins (``via``) for bytes that travel from device ``a`` to device
    ``b`` inside the machine: the fewest-hop path over the machine's own links (every link but the
    ``rdma`` links to remote nodes), as ``(from, to)`` device pairs in path order. Without a pin a
    transfer has the guarantees of every fabric path (specs/obligations.md section 1), and the
    remote decode node joins every NIC, so a GPU's KV could be assumed to leave through another
    rank's NIC; NCCL sends through the GPU's nearest NIC over the PCIe tree (NCCL topology search,
    ``ncclTopoGetLocalNet``).

    Raises ``ValueError`` when ``b`` cannot be reached (``place_fabric`` connects every rank's GPU
    to its NIC)."""
    g = nx.Graph()
    g.add_edges_from((ln.a, ln.b) for ln in f.links if ln.kind != "rdma")
    try:
        nodes = nx.shortest_path(g, a, b)
    except (nx.NetworkXNoPath, nx.NodeNotFound) as err:
        raise ValueError(f"no path from {a} to {b} in the machine") from err
    return list(zip(nodes, nodes[1:]))


def place_fabric(topo: Topology | None, cxl: CxlFabric | None, tp: int, groups: int, replicas: int,
                 disaggregate: bool, alloc: bool = False) -> FabricPlan:
    """The fabric of a job of ``tp`` ranks whose KV cache splits into ``groups`` KV groups of
    ``replicas`` ranks each: devices and links from ``topo`` (or, without one, an assumed machine
    whose GPUs are linked all-to-all by NVSwitch) and the CXL listings ``cxl``; the ranks' GPUs;
    with ``disaggregate``, the NIC (or a DPU without ``topo``) that sends each group's KV to a
    decode node. With ``alloc`` the GPUs also get an ``alloc`` hook, on which their KV block
    allocator hands blocks out of the pool (several requests).

    Returns the ``FabricPlan``. Raises ``InputProblem`` with FX-GEN-003 when ``topo`` has fewer
    than ``tp`` GPUs, or no NIC to disaggregate through."""
    devices: list[Device] = []
    links: list[Link] = []
    notes: list[str] = []
    ordered, posted = LinkOrder.ORDERED, LinkOrder.POSTED
    gpu_hooks = GPU_HOOKS + (("alloc",) if alloc else ())
    if topo is not None:
        if tp > len(topo.gpus):
            raise InputProblem(diagnostic(codes.GEN_003, f"--tp {tp} needs {tp} GPUs; `{topo.path}` has {len(topo.gpus)}",
                                          help=f"use --tp {len(topo.gpus)} or less"))
        cpus = [c.name for c in topo.cpus]
        gpus = [g.name for g in topo.gpus[:tp]]
        numa = {d.name: d.numa for d in topo.cpus + topo.switches + topo.gpus + topo.nics}
        for c in topo.cpus:
            devices.append(Device(c.name, DeviceKind.CPU, (), f"NUMA node {c.numa}"))
        for d in topo.switches + topo.gpus + topo.nics:
            hooks = {DeviceKind.GPU: gpu_hooks, DeviceKind.NIC: NIC_HOOKS}.get(d.kind, ())
            where = f"{d.busid}, class {d.pci_class:#08x}" if d.pci_class is not None else "no PCI entry"
            extra = f", {'InfiniBand' if d.net == 'ib' else 'Ethernet'}" if d.kind is DeviceKind.NIC else ""
            devices.append(Device(d.name, d.kind, hooks, f"{where}{extra}"))
        for d in topo.switches + topo.gpus + topo.nics:
            speed = d.link.describe() if d.link is not None else "speed not given"
            # INVARIANT: only CPUs lack a parent, and CPUs are not in this list
            links.append(Link(d.parent, d.name, "pcie", ordered, speed))  # type: ignore[arg-type]
        for i, a in enumerate(cpus):
            for b in cpus[i + 1:]:
                links.append(Link(a, b, "smp", ordered, "inter-socket (NCCL SYS path)"))
        for a, b, n in topo.nvlinks:
            links.append(Link(a, b, "nvlink", ordered, f"{n} NVLinks"))
        if not topo.nvlinks and tp > 1:
            notes.append(f"{topo.path} lists no NVLink: traffic between GPUs crosses PCIe (and the inter-socket link)")
    else:
        cpus = ["cpu0"]
        gpus = [f"gpu{r}" for r in range(tp)]
        numa = {g: 0 for g in gpus} | {"cpu0": 0}
        devices.append(Device("cpu0", DeviceKind.CPU))
        for g in gpus:
            devices.append(Device(g, DeviceKind.GPU, gpu_hooks))
            links.append(Link("cpu0", g, "pcie", ordered))
        for i, a in enumerate(gpus):
            for b in gpus[i + 1:]:
                links.append(Link(a, b, "nvlink", ordered, "assumed NVSwitch all-to-all"))
    primaries = [g * replicas for g in range(groups)]
    nic_of: dict[int, str] = {}
    if disaggregate:
        if topo is not None:
            if not topo.nics:
                raise InputProblem(diagnostic(codes.GEN_003, f"--disaggregate needs a NIC; `{topo.path}` lists none",
                                              help="pass a topology with NICs, or drop --topology to use a DPU"))
            for r in primaries:
                nic_of[r] = topo.nearest_nic(gpus[r])  # type: ignore[assignment]  # INVARIANT: topo.nics is not empty
        else:
            devices.append(Device("dpu0", DeviceKind.DPU, DPU_HOOKS))
            for g in gpus:
                links.append(Link(g, "dpu0", "pcie", ordered))
            nic_of = {r: "dpu0" for r in primaries}
        devices.append(Device("decode0", DeviceKind.GPU, DECODE_HOOKS, "the remote decode node"))
        for n in _in_device_order(set(nic_of.values()), devices):
            links.append(Link(n, "decode0", "rdma", posted, "completion at the sender precedes visibility"))
    nics_used = _in_device_order(set(nic_of.values()), devices)
    windows, home = _cxl_devices(cxl, cpus, devices, links)
    peer_of = _peer_hosts(cxl, home, devices, links, notes)
    rank_cpus = tuple(_cpu_for(numa.get(g, 0), cpus) for g in gpus)
    return FabricPlan(tuple(devices), tuple(links), tuple(notes), tuple(cpus), tuple(gpus), rank_cpus,
                      tuple(primaries), nic_of, tuple(nics_used), tuple(windows), home,
                      dict(cxl.shared) if cxl is not None else {}, peer_of)


def _peer_hosts(c: CxlFabric | None, home: dict[str, str], devices: list[Device], links: list[Link],
                notes: list[str]) -> dict[str, str]:
    """Append a ``cpu`` device (hook ``run``) per peer host that shares a window with the machine,
    linked ``cxl ordered`` to the memdev homing each window it shares (the peer reaches the memory
    over its own CXL port, which its listing shows and this machine's does not); note the peers
    that share nothing. Returns window -> the first host sharing it. Raises ``InputProblem``
    (FX-GEN-004) for a host label that names a device of the machine."""
    out: dict[str, str] = {}
    if c is None:
        return out
    names = {d.name for d in devices}
    for host, peer in c.peers.items():
        mine = [w for w, why in c.shared.items() if any(x.host == host for x in why)]
        if host in names:
            raise InputProblem(diagnostic(codes.GEN_004, f"host label `{host}` names a device of the generated fabric",
                                          help=f"label the listing of that host with another name (`--cxl OTHER={peer.paths[0]}`)"))
        if not mine:
            notes.append(f"the `cxl list` of host `{host}` shares no window with this machine")
            continue
        devices.append(Device(host, DeviceKind.CPU, PEER_HOOKS, f"host `{host}`: maps {', '.join(mine)} too "
                              f"(its `cxl list`: {', '.join(peer.paths)})"))
        for m in dict.fromkeys(home[w] for w in mine):
            links.append(Link(host, m, "cxl", LinkOrder.ORDERED, "the other host's own CXL port to the shared device"))
        for w in mine:
            out.setdefault(w, host)
    return out


def _in_device_order(names: set[str], devices: list[Device]) -> list[str]:
    """``names`` sorted by where their devices are declared, so NIC numbering follows the file."""
    order = [d.name for d in devices]
    return sorted(names, key=order.index)


def _cpu_for(numa: int | None, cpus: list[str]) -> str:
    """The CPU of NUMA node ``numa``, or the first CPU when the node is unknown or absent."""
    want = f"cpu{numa}"
    return want if want in cpus else cpus[0]


def _cxl_devices(c: CxlFabric | None, cpus: list[str], devices: list[Device],
                 links: list[Link]) -> tuple[list[Window], dict[str, str]]:
    """Append the CXL host bridges, switch ports and memdevs (and their links) to ``devices`` and
    ``links``; return the windows and the memdev homing each (a placeholder ``cxlmem`` device
    when a listing names no memdev)."""
    windows = c.windows() if c else []
    home: dict[str, str] = {}
    if c is None:
        return windows, home
    ordered = LinkOrder.ORDERED
    for hb in c.host_bridges:
        devices.append(Device(hb.name, DeviceKind.CXL_SWITCH, CXL_SWITCH_HOOKS, f"host bridge {hb.host}"))
        links.append(Link(_cpu_for(c.port_numa(hb.name), cpus), hb.name, "cxl", ordered))
    for sp in c.switch_ports:
        devices.append(Device(sp.name, DeviceKind.CXL_SWITCH, CXL_SWITCH_HOOKS, f"switch port {sp.host}"))
        links.append(Link(sp.parent, sp.name, "cxl", ordered))
    ports = {p.name for p in c.host_bridges + c.switch_ports}
    for md in sorted(c.memdevs.values(), key=lambda x: _natural(x.name)):
        numa = "" if md.numa is None else f", NUMA node {md.numa}"
        devices.append(Device(md.name, DeviceKind.CXL_MEM, CXL_MEM_HOOKS,
                              f"ram {size_text(md.ram_bytes)}, pmem {size_text(md.pmem_bytes)}{numa}"))
        up = md.parent if md.parent in ports else _cpu_for(md.numa, cpus)
        links.append(Link(up, md.name, "cxl", ordered))
    first = min(c.memdevs, key=_natural) if c.memdevs else None
    for w in windows:
        owner = next((x for x in w.memdevs if x in c.memdevs), first)
        if owner is None:
            owner = "cxlmem"
            if not any(d.name == "cxlmem" for d in devices):
                devices.append(Device("cxlmem", DeviceKind.CXL_MEM, CXL_MEM_HOOKS,
                                      "memory behind windows whose memdevs the listing does not name"))
                links.append(Link(cpus[0], "cxlmem", "cxl", ordered))
        home[w.name] = owner
    return windows, home


def space_name(window: str) -> str:
    """The ``.fx`` space name of CXL window ``window``: its name with every character other than
    letters, digits and ``_`` replaced by ``_`` (``decoder3.0`` -> ``decoder3_0``)."""
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in window)


def _natural(name: str) -> tuple:
    """Sort key that orders ``mem2`` before ``mem10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))
