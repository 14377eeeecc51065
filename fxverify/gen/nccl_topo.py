"""NCCL topology XML importer (the ``NCCL_TOPO_FILE`` format).

Takes one topology file; produces a ``Topology``: CPUs (NUMA nodes), PCI bridges and switches,
GPUs, NICs and the links between them, each with the element's line in the file. The format is
NCCL's own (``src/graph/xml.cc``, ``topo.cc``): ``<system>`` holds ``<cpu numaid=...>`` elements,
which hold nested ``<pci busid class link_speed link_width>`` elements; a GPU may carry ``<gpu>``
with ``<nvlink target count tclass>`` children. PCI class codes (PCI Code and ID Assignment
Specification): ``0x0302xx`` 3D controller (GPU), ``0x0207xx`` InfiniBand, ``0x0200xx`` Ethernet,
``0x0604xx`` PCI-to-PCI bridge or switch; NVSwitch links have ``tclass 0x068000``.

Link bandwidth: ``link_speed`` GT/s per lane x ``link_width`` lanes x encoding efficiency
(8b/10b up to 5 GT/s, 128b/130b from 8 GT/s; PCIe Base Specification 3.0 section 4.2.2) / 8 bits.

Emits FX-GEN-001 (a file that cannot be read, malformed XML, entity declarations) and FX-GEN-002
(a missing or bad attribute, a duplicate bus id or NUMA node, no usable GPU).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.gen.input_file import InputFile, InputProblem
from fxverify.source import SourceMap, Span
from fxverify.vocab import DeviceKind

WHAT = "an NCCL topology XML file (the NCCL_TOPO_FILE format)"
NVSWITCH_CLASS = 0x068000


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]
    offset: int
    children: list["_Node"] = field(default_factory=list)


@dataclass(frozen=True)
class PciLink:
    """The PCIe link above a device: ``speed_gts`` per lane, ``width`` lanes; ``gbps`` is the
    usable bandwidth in GB/s after line encoding (0 when the file gives no speed)."""

    speed_gts: float
    width: int

    @property
    def gbps(self) -> float:
        """Usable bandwidth in GB/s (decimal), after 8b/10b or 128b/130b encoding."""
        eff = 0.8 if self.speed_gts <= 5.0 else 128 / 130
        return self.speed_gts * self.width * eff / 8

    def describe(self) -> str:
        """``16 GT/s x16, 31.5 GB/s`` style text for comments."""
        if not self.speed_gts:
            return "speed not given"
        return f"{self.speed_gts:g} GT/s x{self.width}, {self.gbps:.1f} GB/s"


@dataclass(frozen=True)
class TopoDevice:
    """One device of the topology: ``name`` (``gpu0``, ``nic2``, ``sw1``, ``cpu0``), ``kind``
    (a ``vocab.DeviceKind``: GPU, NIC, PCIE_SWITCH or CPU), PCI ``busid`` and ``pci_class``
    (None for a CPU), the ``numa`` node it hangs under, its ``parent`` device name (None for a
    CPU), the ``link`` to that parent, ``net`` (``ib`` or ``eth`` for NICs) and ``span`` (its
    element)."""

    name: str
    kind: DeviceKind
    busid: str | None
    pci_class: int | None
    numa: int
    parent: str | None
    link: PciLink | None
    span: Span
    net: str | None = None


@dataclass(frozen=True)
class Topology:
    """An imported NCCL topology: devices in document order per kind, NVLink pairs
    ``(gpu, gpu, links)``, and the ``path`` it came from."""

    path: str
    cpus: tuple[TopoDevice, ...]
    switches: tuple[TopoDevice, ...]
    gpus: tuple[TopoDevice, ...]
    nics: tuple[TopoDevice, ...]
    nvlinks: tuple[tuple[str, str, int], ...]

    @property
    def numa_nodes(self) -> int:
        """Number of distinct NUMA nodes (CPU sockets)."""
        return len({c.numa for c in self.cpus})

    def device(self, name: str) -> TopoDevice:
        """The device called ``name``. Raises ``KeyError`` when there is none (a bug)."""
        for d in self.cpus + self.switches + self.gpus + self.nics:
            if d.name == name:
                return d
        raise KeyError(name)

    def nearest_nic(self, gpu: str) -> str | None:
        """The NIC closest to ``gpu`` in PCI hops (NCCL prefers PIX/PXB paths over PHB and SYS),
        ties broken by document order; ``None`` when the topology has no NIC."""
        ranked = sorted((self.hops(gpu, n.name), i, n.name) for i, n in enumerate(self.nics))
        return ranked[0][2] if ranked else None

    def hops(self, a: str, b: str) -> int:
        """Links between devices ``a`` and ``b`` through their lowest common ancestor; through
        both CPUs plus the inter-socket hop when they hang under different NUMA nodes."""
        pa, pb = [a] + self._ancestors(a), [b] + self._ancestors(b)
        for i, x in enumerate(pa):
            if x in pb:
                return i + pb.index(x)
        return len(pa) + len(pb) - 1

    def _ancestors(self, name: str) -> list[str]:
        out = []
        d = self.device(name)
        while d.parent is not None:
            out.append(d.parent)
            d = self.device(d.parent)
        return out


def load_topology(path: str, sources: SourceMap) -> tuple[Topology | None, list[Diagnostic]]:
    """Read an NCCL topology XML file.

    Returns ``(topology, [])`` or ``(None, [diagnostic])``: FX-GEN-001 for unreadable or malformed
    XML (at the parser's line and column), FX-GEN-002 for a missing or bad attribute, a duplicate
    bus id or NUMA node, or a file with no usable GPU entries. Elements the generator does not use
    are skipped. Never raises for bad input."""
    try:
        f = InputFile.read(path, sources, WHAT)
        return _Builder(f).build(_parse(f)), []
    except InputProblem as p:
        return None, [p.diag]


#: Deepest element nesting read. NCCL's own topologies nest a handful of PCI switches (system, cpu,
#: pci bridges, gpu/nic); 64 levels is far beyond any real one and bounds the builder's recursion.
MAX_DEPTH = 64


def _parse(f: InputFile) -> _Node:
    """Parse with expat, keeping each element's character offset for diagnostics. Entity
    declarations are refused, so a hostile file cannot expand entities."""
    root = _Node("#document", {}, 0)
    stack = [root]
    line_starts = [0] + [i + 1 for i, ch in enumerate(f.text) if ch == "\n"]
    p = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        off = line_starts[p.CurrentLineNumber - 1] + p.CurrentColumnNumber
        if len(stack) > MAX_DEPTH:
            raise InputProblem(diagnostic(codes.GEN_001, f"`{f.path}` nests elements more than {MAX_DEPTH} deep",
                                          f.span(off), f"<{tag}>", help=f"pass {WHAT}"))
        node = _Node(tag, attrs, off)
        stack[-1].children.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def entity(*_a) -> None:
        raise InputProblem(diagnostic(codes.GEN_001, f"`{f.path}` declares XML entities, which a topology never needs",
                                      f.line_col_span(p.CurrentLineNumber, p.CurrentColumnNumber + 1),
                                      "entity declaration", help=f"pass {WHAT}"))

    p.StartElementHandler, p.EndElementHandler, p.EntityDeclHandler = start, end, entity
    try:
        p.Parse(f.text.encode("utf-8"), True)
    except expat.ExpatError as err:
        raise InputProblem(diagnostic(codes.GEN_001, f"`{f.path}` is not well-formed XML: {expat.ErrorString(err.code)}",
                                      f.line_col_span(err.lineno, err.offset + 1), "here",
                                      help=f"pass {WHAT}")) from None
    return root


class _Builder:
    def __init__(self, f: InputFile) -> None:
        self.f = f
        self.cpus: list[TopoDevice] = []
        self.switches: list[TopoDevice] = []
        self.gpus: list[TopoDevice] = []
        self.nics: list[TopoDevice] = []
        self.nv: list[tuple[str, str, int, int]] = []  # gpu busid, target busid, count, tclass
        self.by_busid: dict[str, str] = {}

    def span(self, n: _Node) -> Span:
        return self.f.span(n.offset)

    def bad(self, n: _Node, msg: str, help: str) -> InputProblem:
        return InputProblem(diagnostic(codes.GEN_002, msg, self.span(n), f"<{n.tag}>", help=help))

    def build(self, doc: _Node) -> Topology:
        systems = [c for c in doc.children if c.tag == "system"]
        if not systems:
            top = doc.children[0] if doc.children else _Node("#document", {}, 0)
            raise self.bad(top, f"`{self.f.path}` has no <system> element", help=f"pass {WHAT}")
        system = systems[0]
        for c in system.children:
            if c.tag == "cpu":
                self.cpu(c)
        if not self.gpus:
            raise self.bad(system, f"`{self.f.path}` has no usable GPU entries (PCI class 0x0302xx)",
                           help="a topology for prefill needs at least one GPU; check the file is the one NCCL_TOPO_FILE names")
        nvlinks: dict[tuple[str, str], int] = {}
        switched: dict[str, list[tuple[str, int]]] = {}
        for gpu_bus, target, count, tclass in self.nv:
            g = self.by_busid[gpu_bus]
            if tclass == NVSWITCH_CLASS:
                switched.setdefault(target, []).append((g, count))
            elif self.by_busid.get(target, "").startswith("gpu"):
                key = tuple(sorted((g, self.by_busid[target])))
                nvlinks[key] = max(nvlinks.get(key, 0), count)  # type: ignore[index]  # listed from both ends
            # an NVLink to a device the file does not list (a GPU left out, a CPU) carries no policy traffic
        for members in switched.values():  # an NVSwitch connects every pair of its GPUs; NCCL sums over switches
            for i, (a, ca) in enumerate(members):
                for b, cb in members[i + 1:]:
                    key = tuple(sorted((a, b)))
                    nvlinks[key] = nvlinks.get(key, 0) + min(ca, cb)  # type: ignore[index]
        order = {g.name: i for i, g in enumerate(self.gpus)}
        nv = tuple(sorted(((a, b, c) for (a, b), c in nvlinks.items()), key=lambda t: (order[t[0]], order[t[1]])))
        return Topology(self.f.path, tuple(self.cpus), tuple(self.switches), tuple(self.gpus), tuple(self.nics), nv)

    def cpu(self, n: _Node) -> None:
        numa = self.int_attr(n, "numaid", "NCCL names each CPU socket by `numaid`")
        if numa < 0:
            raise self.bad(n, f"<cpu> has numaid {numa}: an unknown NUMA node", help="give each CPU socket its NUMA node (0, 1, ...)")
        name = f"cpu{numa}"
        if any(c.name == name for c in self.cpus):
            raise self.bad(n, f"two <cpu> elements have numaid {numa}", help="each NUMA node appears once")
        self.cpus.append(TopoDevice(name, DeviceKind.CPU, None, None, numa, None, None, self.span(n)))
        for c in n.children:
            if c.tag == "pci":
                self.pci(c, name, numa)
            elif c.tag == "nic":
                self.nic_elem(c, name, numa)

    def int_attr(self, n: _Node, key: str, why: str) -> int:
        v = n.attrs.get(key)
        if v is None:
            raise self.bad(n, f"<{n.tag}> has no `{key}` attribute", help=why)
        try:
            return int(v, 0)
        except ValueError:
            raise self.bad(n, f"`{key}=\"{v}\"` of <{n.tag}> is not an integer", help=why) from None

    def link(self, n: _Node) -> PciLink:
        speed = n.attrs.get("link_speed", "")
        m = re.match(r"\s*([0-9.]+)\s*GT/s", speed)
        if speed and not m and speed.strip().lower() != "unknown":  # sysfs reports "Unknown" for some links
            raise self.bad(n, f"`link_speed=\"{speed}\"` is not a speed in GT/s", help="NCCL writes e.g. `16.0 GT/s PCIe`")
        width = n.attrs.get("link_width", "0")
        if not width.isdigit():
            raise self.bad(n, f"`link_width=\"{width}\"` is not a lane count", help="NCCL writes e.g. `16`")
        return PciLink(float(m.group(1)) if m else 0.0, int(width))

    def pci(self, n: _Node, parent: str, numa: int) -> None:
        busid = n.attrs.get("busid")
        if busid is None:
            raise self.bad(n, "<pci> has no `busid` attribute", help="NCCL names every PCI device by its bus id")
        cls = self.int_attr(n, "class", "the PCI class code says what the device is")
        base = cls >> 8
        if busid in self.by_busid:
            raise self.bad(n, f"bus id `{busid}` appears twice", help="each PCI device appears once")
        link = self.link(n)
        if base == 0x0604:
            name = f"sw{len(self.switches)}"
            self.switches.append(TopoDevice(name, DeviceKind.PCIE_SWITCH, busid, cls, numa, parent, link, self.span(n)))
            self.by_busid[busid] = name
            for c in n.children:
                if c.tag == "pci":
                    self.pci(c, name, numa)
                elif c.tag == "nic":
                    self.nic_elem(c, name, numa)
        elif base == 0x0302:
            name = f"gpu{len(self.gpus)}"
            self.gpus.append(TopoDevice(name, DeviceKind.GPU, busid, cls, numa, parent, link, self.span(n)))
            self.by_busid[busid] = name
            for g in (c for c in n.children if c.tag == "gpu"):
                for nv in (c for c in g.children if c.tag == "nvlink"):
                    target = nv.attrs.get("target")
                    if target is None:
                        raise self.bad(nv, "<nvlink> has no `target`", help="NCCL names the peer's bus id")
                    tclass = self.int_attr(nv, "tclass", "the peer's PCI class, e.g. 0x068000") if nv.attrs.get("tclass") else 0
                    self.nv.append((busid, target, self.int_attr(nv, "count", "the NVLink count"), tclass))
        elif base in (0x0207, 0x0200):
            self.add_nic(n, busid, cls, numa, parent, link, "ib" if base == 0x0207 else "eth")
        # other classes (NVSwitch 0x0680, display, storage, ...) carry no traffic of the policy

    def nic_elem(self, n: _Node, parent: str, numa: int) -> None:
        # A bare <nic> (no PCI parent element) as NCCL writes for a network plugin device.
        kind = "ib" if any(c.attrs.get("name", "").startswith("mlx") for c in n.children) else "eth"
        self.add_nic(n, None, None, numa, parent, None, kind)

    def add_nic(self, n: _Node, busid: str | None, cls: int | None, numa: int, parent: str, link: PciLink | None,
                net: str) -> None:
        name = f"nic{len(self.nics)}"
        self.nics.append(TopoDevice(name, DeviceKind.NIC, busid, cls, numa, parent, link, self.span(n), net))
        if busid is not None:
            self.by_busid[busid] = name
