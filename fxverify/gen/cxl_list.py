"""``cxl list`` JSON importer (the ndctl/cxl-cli listing format).

Takes one or more listings (``cxl list -BEMPu``, ``cxl list -BDMu``, ``cxl list -R``, ...) and
merges them into a ``CxlFabric``: host bridges, switch ports, endpoints with their memdevs (ram and
pmem sizes, NUMA node), root decoders (host-physical base, size, volatile or pmem, target count)
and regions (base, size, interleave ways and granularity). The object shapes follow cxl-cli's
``Documentation/cxl/cxl-list.txt`` and the kernel's ``Documentation/driver-api/cxl/``: an object is
classified by its identifying key (``bus``, ``port``, ``endpoint``, ``memdev``, ``decoder``,
``region``); child lists are keyed ``"<kind>s:<parent>"``. Sizes are integers (bytes) or, with
``-u``, strings like ``"256.00 MiB (268.44 MB)"``; addresses are integers or ``"0x..."`` strings.

Listings of several hosts: an argument ``HOST=FILE`` is the listing of host ``HOST``. The host of
the first listing (its label, or none) is the machine the policy is for; every listing with that
label or none is merged into its fabric, and the listings of each other host into that host's own
(``CxlFabric.peers``). One host's listing cannot show that another host maps the same memory;
several can: a window of the machine is *shared* with a peer host when a memdev that backs it
(same ``serial``) is in the peer's listing (``CxlFabric.shared``). Only the serial, the device's
own identity, counts: host-physical addresses are per host (each host's decoders program its own
physical address map), so a peer's decoder or region over the same range is a coincidence of
numbering, not the same memory. A shared window is memory two hosts map without cross-host
coherence (CXL 2.0 multi-headed and pooled Type-3 devices, section 2.4; CXL 3.x coherence between
hosts needs back-invalidate, which a listing does not show), so the generator declares such a
window's space ``noncoherent``; a listing without the serials to decide this is FX-GEN-002.

Emits FX-GEN-001 (a file that cannot be read or is not valid JSON), FX-GEN-004 (a ``HOST=FILE``
argument whose host label is not a name) and FX-GEN-002 (an object with a missing or bad field, a
listing with no CXL object, listings that disagree, overlapping windows).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.gen.input_file import InputFile, InputProblem
from fxverify.source import SourceMap, Span
from fxverify.vocab import U64_END, UNITS

_IDS = ("bus", "port", "endpoint", "memdev", "decoder", "region")
WHAT = "the JSON output of `cxl list` (for example `cxl list -BEMPu` or `cxl list -BDMu`)"
# `-u` sizes come from `display_size()` in ndctl's util/json.c: an IEC figure, then its decimal
# twin in parentheses ("256.00 MiB (268.44 MB)"). Only the IEC units are read, so the decimal
# figure is never taken for the size.
_CXL_UNITS: dict[str, int] = {u: UNITS[u] for u in ("B", "KiB", "MiB", "GiB", "TiB")}
_SIZE_TEXT = re.compile(r"\s*([0-9]+)(?:\.([0-9]+))?\s*(%s)\b" % "|".join(_CXL_UNITS))


@dataclass(frozen=True)
class CxlPort:
    """A host bridge (parent is a bus) or a switch port (parent is a port): ``name`` (``port5``),
    ``host`` (``cxl_host_bridge.1``), ``parent`` and ``span``."""

    name: str
    host: str
    parent: str
    span: Span


@dataclass(frozen=True)
class Memdev:
    """A CXL memory device: ``ram_bytes``/``pmem_bytes`` capacities, ``numa`` node (None when not
    listed), ``serial``, the ``parent`` port (or bus when no port chain is listed), the
    ``endpoint`` port name when listed, and ``span``."""

    name: str
    ram_bytes: int
    pmem_bytes: int
    numa: int | None
    serial: str
    parent: str
    endpoint: str | None
    span: Span


@dataclass(frozen=True)
class Window:
    """A host-physical window: a root decoder (``kind="decoder"``) or a region (``"region"``).

    ``base``/``size`` in bytes; ``persistent`` for pmem (``pmem_capable`` decoders, regions of type
    ``pmem``); ``targets`` the decoder's target count or the region's interleave ways;
    ``granularity`` the region's interleave granularity in bytes (0 for a decoder); ``memdevs``
    the memdevs listed in the same document (who can back it); ``source`` the file."""

    name: str
    kind: str
    base: int
    size: int
    persistent: bool
    targets: int
    granularity: int
    memdevs: tuple[str, ...]
    source: str
    span: Span

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.base + self.size


@dataclass(frozen=True)
class Sharing:
    """Why a window of the machine is shared with peer host ``host``: ``reason``, one line naming
    the memdev serial both listings show."""

    host: str
    reason: str


@dataclass
class CxlFabric:
    """Merged ``cxl list`` listings: buses, ``host_bridges``, ``switch_ports``, ``endpoints``
    (name -> memdev), ``memdevs`` (by name), ``root_decoders`` and ``regions`` (sorted by base).
    For the machine's fabric, ``peers`` holds the merged listings of every other host (by label,
    in argument order) and ``shared`` maps each window shared with one of them to the
    ``Sharing``s, in peer order (module docstring)."""

    paths: list[str] = field(default_factory=list)
    buses: list[str] = field(default_factory=list)
    host_bridges: list[CxlPort] = field(default_factory=list)
    switch_ports: list[CxlPort] = field(default_factory=list)
    endpoints: dict[str, str] = field(default_factory=dict)
    memdevs: dict[str, Memdev] = field(default_factory=dict)
    root_decoders: list[Window] = field(default_factory=list)
    regions: list[Window] = field(default_factory=list)
    peers: dict[str, CxlFabric] = field(default_factory=dict)
    shared: dict[str, tuple[Sharing, ...]] = field(default_factory=dict)

    def windows(self) -> list[Window]:
        """Windows the generator may place regions in, sorted by base: every region, and every root
        decoder that contains no listed region (a region is carved from a decoder's window, so
        using both would place two regions on the same bytes)."""
        out = list(self.regions)
        for d in self.root_decoders:
            if not any(d.base <= r.base < d.end for r in self.regions):
                out.append(d)
        return sorted(out, key=lambda w: (w.base, w.name))

    def port_numa(self, port: str) -> int | None:
        """The NUMA node of a port: that of the first memdev below it that names one."""
        below = {port}
        changed = True
        while changed:
            changed = False
            for p in self.switch_ports:
                if p.parent in below and p.name not in below:
                    below.add(p.name)
                    changed = True
        for m in sorted(self.memdevs.values(), key=lambda m: m.name):
            if m.parent in below and m.numa is not None:
                return m.numa
        return None


def parse_size(v: Any) -> int | None:
    """Bytes of a cxl-cli size: an integer, or ``-u`` text such as ``"256.00 MiB (268.44 MB)"``.
    Returns ``None`` when ``v`` is neither, or when ``-u`` rounding lost the exact byte count."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        m = _SIZE_TEXT.match(v)
        if m:
            whole, frac, unit = m.group(1), m.group(2) or "", _CXL_UNITS[m.group(3)]
            n = int(whole + frac) * unit
            if n % 10 ** len(frac):
                return None  # `-u` rounded the size (e.g. "1.33 GiB"): the exact byte count is lost
            return n // 10 ** len(frac)
        if re.fullmatch(r"\s*(0x[0-9a-fA-F]+|[0-9]+)\s*", v):
            return int(v, 0)
    return None


#: A host label: a name as the policy language writes one.
_LABEL = r"[A-Za-z_][A-Za-z0-9_]*"
#: ``HOST=FILE``: a listing of host ``HOST``.
_HOST_ARG = re.compile(rf"({_LABEL})=(.+)", re.DOTALL)


def split_host(arg: str) -> tuple[str | None, str]:
    """``HOST=FILE`` -> ``(HOST, FILE)``; any other argument -> ``(None, arg)``. An argument that
    names an existing file as written is a file, even with a ``=`` in it."""
    m = _HOST_ARG.fullmatch(arg)
    if m is None or os.path.exists(arg):
        return None, arg
    return m.group(1), m.group(2)


def _bad_label(arg: str) -> Diagnostic | None:
    """FX-GEN-004 for ``LABEL=FILE`` whose label is not a name (``bad label=x.json``) and that
    is no file either, or for ``HOST=`` with a valid label and no file; else ``None`` (the file,
    if missing, is reported as unreadable)."""
    label, eq, path = arg.partition("=")
    if not eq or os.path.exists(arg) or _HOST_ARG.fullmatch(arg):
        return None
    if not path and re.fullmatch(_LABEL, label):
        return diagnostic(codes.GEN_004, f"`--cxl {arg}` names host `{label}` but no file",
                          help=f"give the listing's file after `=`: `--cxl {label}=listing.json`")
    return diagnostic(codes.GEN_004, f"`--cxl {arg}`: `{label}` is not a host label (and no file is named `{arg}`)",
                      help="a host label is a name as the policy language writes one: a letter or `_`, then letters, "
                           "digits or `_` (`--cxl peer1=listing.json`); or give the listing's file alone for this "
                           "machine")


def load_cxl(args: list[str], sources: SourceMap) -> tuple[CxlFabric | None, list[Diagnostic]]:
    """Read ``cxl list`` listings, in the order given, each argument ``FILE`` or ``HOST=FILE``
    (``split_host``): the machine's listings merged into the fabric returned, every other host's
    into its ``peers`` entry, and the windows the machine shares with a peer in ``shared``.

    Returns ``(fabric, [])`` or ``(None, [diagnostic])``: FX-GEN-004 for a host label that is not
    a name, FX-GEN-001 for unreadable or malformed JSON, FX-GEN-002 for an object with a missing or bad field, a listing with no CXL objects, or
    two listings of one host that disagree about the same memdev or decoder. Never raises for bad
    input."""
    for arg in args:
        bad = _bad_label(arg)
        if bad is not None:
            return None, [bad]
    groups: dict[str | None, list[str]] = {}
    local = split_host(args[0])[0] if args else None
    for arg in args:
        host, path = split_host(arg)
        groups.setdefault(None if host == local else host, []).append(path)
    try:
        fab = _merge(groups.pop(None, []), sources)
        fab.peers = {host: _merge(paths, sources) for host, paths in groups.items()}
    except InputProblem as p:
        return None, [p.diag]
    for host, peer in fab.peers.items():
        blind = _undecided(fab, host, peer)
        if blind is not None:
            return None, [blind]
        for name, why in _sharing(fab, host, peer).items():
            fab.shared[name] = fab.shared.get(name, ()) + (Sharing(host, why),)
    return fab, []


def _merge(paths: list[str], sources: SourceMap) -> CxlFabric:
    """One host's listings merged in order; raises ``InputProblem``."""
    fab = CxlFabric()
    for path in paths:
        f = InputFile.read(path, sources, WHAT)
        _Walker(f, fab).walk_doc(f.load_json(WHAT))
        fab.paths.append(path)
    fab.root_decoders.sort(key=lambda w: (w.base, w.name))
    fab.regions.sort(key=lambda w: (w.base, w.name))
    return fab


def _undecided(fab: CxlFabric, host: str, peer: CxlFabric) -> Diagnostic | None:
    """FX-GEN-002 when sharing with ``peer`` (the listings of ``host``) cannot be decided, at the
    memdev or window that lacks a serial, in the listing (the machine's or the peer's) that lists
    it; or ``None``. Sharing is decided by memdev serial only (``_sharing``), so every memdev the
    peer lists, and every window of either side, must be backed by a memdev with a serial (a
    listing without memdevs, or a device that reports no serial number, fails this); otherwise
    such memory would silently come out unshared, and coherent, where it may be memory the two
    hosts share without cross-host coherence. A peer that lists neither memdevs nor windows
    shares nothing."""
    if not peer.memdevs and not peer.windows():
        return None
    why = f"cannot tell whether `{host}` shares CXL memory with this machine"
    per_host = "(memdev names are per host; the serial is the device's own)"
    help = ("give listings that show each memdev's `serial` (`cxl list -M -D -R` prints it), or leave this host out "
            "if it maps none of this machine's CXL memory")
    for m in sorted(peer.memdevs.values(), key=lambda m: m.name):
        if not m.serial:
            return diagnostic(codes.GEN_002, f"{why}: `{host}` lists memdev `{m.name}` with no serial {per_host}",
                              m.span, f"`{host}`'s memdev without a serial", help=help)
    for side, where in ((fab, "this machine's"), (peer, f"`{host}`'s")):
        for w in side.windows():
            if not any(x in side.memdevs and side.memdevs[x].serial for x in w.memdevs):
                return diagnostic(codes.GEN_002, f"{why}: {where} window `{w.name}` is backed by no memdev with a serial "
                                  f"{per_host}", w.span, f"{where} window, backed by no memdev with a serial", help=help)
    return None


def _sharing(fab: CxlFabric, host: str, peer: CxlFabric) -> dict[str, str]:
    """Window of ``fab`` -> why ``peer`` (the listings of ``host``) maps it too: a memdev backing
    it whose serial the peer lists (memdev names are per host: the serial is the device's own).

    Host-physical ranges are never compared: each host programs its own physical address map, so
    equal ranges on two hosts say nothing about the memory behind them (a root decoder is one of
    the host's own ACPI CEDT fixed memory windows, kernel ``Documentation/driver-api/cxl/``)."""
    serials = {m.serial: m.name for m in sorted(peer.memdevs.values(), key=lambda m: m.name) if m.serial}
    out: dict[str, str] = {}
    for w in fab.windows():
        backing = [fab.memdevs[x] for x in w.memdevs if x in fab.memdevs]
        hit = next((m for m in backing if m.serial and m.serial in serials), None)
        if hit is not None:
            out[w.name] = (f"memdev `{hit.name}` (serial {hit.serial}) backs it, and `{host}` lists the same device "
                           f"as `{serials[hit.serial]}`")
    return out


class _Walker:
    def __init__(self, f: InputFile, fab: CxlFabric) -> None:
        self.f, self.fab = f, fab
        self.doc_memdevs: list[str] = []
        self.doc_windows: list[tuple[dict[str, Any], str, str]] = []  # object, kind, parent list key
        self.seen = 0
        self.cursor = 0

    def span_of(self, key: str, value: str) -> Span:
        """The span of ``"key": "value"`` (the next occurrence from the cursor, then anywhere)."""
        pat = re.compile(r'"%s"\s*:\s*"%s"' % (re.escape(key), re.escape(value)))
        m = pat.search(self.f.text, self.cursor) or pat.search(self.f.text)
        if m is None:
            return self.f.span(0)
        self.cursor = m.end()
        return self.f.span(m.start())

    def bad(self, span: Span, msg: str, help: str, label: str = "") -> InputProblem:
        return InputProblem(diagnostic(codes.GEN_002, msg, span, label, help=help))

    def walk_doc(self, doc: Any) -> None:
        if isinstance(doc, dict) and not any(isinstance(doc.get(k), str) for k in _IDS):
            self.walk_groups(doc)
        elif isinstance(doc, dict):
            self.obj(doc, None)
        elif isinstance(doc, list):
            for o in doc:
                if isinstance(o, (dict, list)) and not (isinstance(o, dict) and any(isinstance(o.get(k), str) for k in _IDS)):
                    self.walk_groups(o)
                elif isinstance(o, dict):
                    self.obj(o, None)
        if not self.seen:
            raise self.bad(self.f.span(0), f"`{self.f.path}` holds no CXL bus, port, memdev, decoder or region objects",
                           help=f"pass {WHAT}")
        for obj, kind, parent in self.doc_windows:
            self.window(obj, kind, parent)

    def walk_groups(self, doc: Any) -> None:
        """Grouped listings (`cxl list -D`, `-MD`): ``{"root decoders": [...], "anon memdevs": [...]}``,
        possibly inside a list."""
        groups = doc if isinstance(doc, list) else [doc]
        for g in groups:
            if not isinstance(g, dict):
                continue
            for key, val in g.items():
                for o in val if isinstance(val, list) else []:
                    if isinstance(o, dict):
                        self.obj(o, "bus:" if key == "root decoders" else None)

    def obj(self, o: dict[str, Any], parent: str | None) -> None:
        if isinstance(o.get("bus"), str):
            self.seen += 1
            name = o["bus"]
            if name not in self.fab.buses:
                self.fab.buses.append(name)
            self.children(o, name, "bus")
        elif isinstance(o.get("port"), str):
            self.port(o, parent)
        elif isinstance(o.get("endpoint"), str):
            self.seen += 1
            md = o.get("memdev")
            if isinstance(md, dict) and isinstance(md.get("memdev"), str):
                self.memdev(md, parent or "", endpoint=o["endpoint"])
            self.children(o, o["endpoint"], "endpoint")
        elif isinstance(o.get("memdev"), str):
            self.memdev(o, parent or "", endpoint=None)
        elif isinstance(o.get("decoder"), str):
            self.seen += 1
            self.doc_windows.append((o, "decoder", parent or ""))
        elif isinstance(o.get("region"), str):
            self.seen += 1
            self.doc_windows.append((o, "region", parent or ""))

    def children(self, o: dict[str, Any], name: str, kind: str) -> None:
        for key, val in o.items():
            if ":" in key and isinstance(val, list):
                for c in val:
                    if isinstance(c, dict):
                        self.obj(c, name if not key.startswith("decoders:") else f"{kind}:{name}")

    def port(self, o: dict[str, Any], parent: str | None) -> None:
        self.seen += 1
        name, host = o["port"], str(o.get("host", ""))
        span = self.span_of("port", name)
        p = CxlPort(name, host, parent or "", span)
        # a port whose parent is the root (or which stands at the top of a flat `cxl list -P`) is a
        # host bridge; a port under a port is a switch port
        is_bridge = parent is None or parent in self.fab.buses
        group = self.fab.host_bridges if is_bridge else self.fab.switch_ports
        if not any(q.name == name for q in self.fab.host_bridges + self.fab.switch_ports):
            group.append(p)
        self.children(o, name, "port")

    def memdev(self, o: dict[str, Any], parent: str, endpoint: str | None) -> None:
        self.seen += 1
        name = o["memdev"]
        span = self.span_of("memdev", name)
        sizes = {}
        for key in ("ram_size", "pmem_size"):
            v = o.get(key, 0)
            n = parse_size(v)
            if n is None or n < 0:
                raise self.bad(span, f"`{key}` of `{name}` is {v!r}, not a size", help="cxl list writes bytes or `256.00 MiB (...)`",
                               label=f"`{name}`")
            sizes[key] = n
        numa = o.get("numa_node")
        if numa is not None and (isinstance(numa, bool) or not isinstance(numa, int)):
            raise self.bad(span, f"`numa_node` of `{name}` is {numa!r}, not an integer", help="cxl list writes e.g. 0",
                           label=f"`{name}`")
        m = Memdev(name, sizes["ram_size"], sizes["pmem_size"], numa if numa is None or numa >= 0 else None,
                   str(o.get("serial", "")), parent, endpoint, span)
        old = self.fab.memdevs.get(name)
        if old is not None:
            if (old.ram_bytes, old.pmem_bytes, old.serial) != (m.ram_bytes, m.pmem_bytes, m.serial):
                raise self.bad(span, f"`{name}` disagrees with its listing in `{old.span.file}` (sizes or serial)",
                               help="pass listings of the same machine", label=f"`{name}`")
            # keep the more specific parent: a port beats a bare bus
            if old.parent in self.fab.buses and parent not in self.fab.buses:
                self.fab.memdevs[name] = m
        else:
            self.fab.memdevs[name] = m
        if endpoint:
            self.fab.endpoints[endpoint] = name
        if name not in self.doc_memdevs:
            self.doc_memdevs.append(name)

    def count(self, o: dict[str, Any], key: str, span: Span, label: str, default: int = 1) -> int:
        v = o.get(key, default)
        if type(v) is not int or v < 0:
            raise self.bad(span, f"`{key}` is {v!r}, not a count", help="cxl list writes a non-negative integer", label=label)
        return v or default

    def window(self, o: dict[str, Any], kind: str, parent: str) -> None:
        name = o[kind]
        span = self.span_of(kind, name)
        label = f"`{name}`"
        root = parent.startswith("bus:") or any(k in o for k in ("pmem_capable", "volatile_capable", "accelmem_capable"))
        if kind == "decoder" and not root:
            return  # a switch or endpoint decoder: only root decoders open host-physical windows
        base = parse_size(o.get("resource"))
        if base is None:
            raise self.bad(span, f"{kind} `{name}` has no exact host-physical `resource`", help="cxl list writes `\"resource\": \"0x...\"`",
                           label=label)
        size = parse_size(o.get("size"))
        if not size:
            raise self.bad(span, f"{kind} `{name}` has no exact positive `size`",
                           help="cxl list writes bytes, or with -u `256.00 MiB (...)`; pass a listing without -u when -u rounds",
                           label=label)
        if base + size > U64_END:
            raise self.bad(span, f"{kind} `{name}` [{base:#x}, +{size}) runs past 64-bit addresses",
                           help="check `resource` and `size`", label=label)
        if kind == "decoder":
            persistent = bool(o.get("pmem_capable")) and not o.get("volatile_capable")
            targets, gran = self.count(o, "nr_targets", span, label), 0
        else:
            typ = str(o.get("type", ""))
            persistent = typ == "pmem"
            targets, gran = self.count(o, "interleave_ways", span, label), self.count(o, "interleave_granularity", span, label, 0)
        w = Window(name, kind, base, size, persistent, targets, gran, tuple(self.doc_memdevs), self.f.path, span)
        pool = self.fab.root_decoders if kind == "decoder" else self.fab.regions
        old = next((x for x in pool if x.name == name), None)
        if old is not None:
            if (old.base, old.size, old.persistent) != (w.base, w.size, w.persistent):
                raise self.bad(span, f"`{name}` disagrees with its listing in `{old.source}`", help="pass listings of the same machine",
                               label=label)
            return
        for x in self.fab.root_decoders + self.fab.regions:
            if x.kind == kind and x.base < w.end and w.base < x.end:
                raise self.bad(span, f"`{name}` [{w.base:#x}, {w.end:#x}) overlaps `{x.name}` [{x.base:#x}, {x.end:#x})",
                               help="two windows of one kind never share host-physical addresses", label=label)
        pool.append(w)
