"""The semantic movement graph's data model (the IR).

``fxverify.resolve`` produces a ``Policy`` from the AST: every name is resolved, every size is in
bytes, every address is absolute in its address space, and every edge family is unrolled into
concrete ``Edge`` instances (index arithmetic already evaluated). Later stages (graph, obligations,
simulator, lowering) read only this module's types. Emits no diagnostics.

Units: sizes, addresses, offsets and strides are bytes (``int``); times are abstract nanoseconds.
The execution model these types describe is BRIEF section 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING

from fxverify.diagnostics.suppress import Suppression
from fxverify.footprints import Footprint  # noqa: F401  (part of the IR; its own module for its geometry)
from fxverify.source import NO_SPAN, Span
from fxverify.vocab import ClassKind, DeviceKind, LinkOrder, ReleaseKind, dtype_bits
from fxverify.xforms import (  # noqa: F401  (the transform steps are part of the IR)
    Checksum, Compress, Filter, Gather, Move, Persist, Quantize, Reduce, Replicate, Scatter, Transform, XfKind,
)

if TYPE_CHECKING:
    from fxverify.shapes import Shapes


class EdgeAction(Enum):
    """What an edge does with bytes (specs/language.md, "Edges"): ``write`` its destination,
    ``read`` its source, ``move`` source to destination, ``reduce`` the source into the
    destination, ``release`` regions, ``alloc`` them again, ``flush`` links, ``writeback`` or
    ``invalidate`` its device's cache lines of a footprint (a ``noncoherent`` space), or
    ``cancel`` transfers its device issued."""

    WRITE = "write"
    READ = "read"
    MOVE = "move"
    REDUCE = "reduce"
    RELEASE = "release"
    ALLOC = "alloc"
    FLUSH = "flush"
    WRITEBACK = "writeback"
    INVALIDATE = "invalidate"
    CANCEL = "cancel"


class AccessMode(Enum):
    """How an edge touches a footprint. ``REDUCE`` accumulates with ``Access.op``."""

    READ = "read"
    WRITE = "write"
    REDUCE = "reduce"


class MapOpKind(Enum):
    """Map accesses an edge's program makes.

    ``READ``: a plain read of one entry. ``WRITE``: a blind overwrite. ``UPDATE``: a read-modify-write
    with the map's merge operator. ``GUARD``: a read whose value decides movement, ordering or
    ownership. ``AGGREGATE``: a read that folds every per-device slot of an entry.
    """

    READ = "read"
    WRITE = "write"
    UPDATE = "update"
    GUARD = "guard"
    AGGREGATE = "aggregate"


@dataclass(frozen=True, slots=True)
class Device:
    """A fabric device with its declared hooks."""

    name: str
    kind: DeviceKind
    hooks: tuple[str, ...]
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Link:
    """An undirected fabric link between devices ``a`` and ``b``.

    ``kind`` is one of ``nvlink``, ``pcie``, ``cxl``, ``rdma``, ``ethernet``, ``smp`` (the
    inter-socket interconnect, QPI/UPI/xGMI: NCCL's SYS path).
    ``name`` is ``"a--b"`` unless the policy names it.
    """

    name: str
    a: str
    b: str
    kind: str
    order: LinkOrder
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Space:
    """A byte-addressed space ``[base, base + size)`` homed on ``device``.

    ``persistent`` marks a pmem window (a CXL decoder that is ``pmem_capable``). ``init``: every
    byte of the space holds data before the flow starts (FX-INIT-001 needs no write of it).
    ``checksum`` (``vocab.CHECKSUMS``), when declared, is the algorithm every ``persist`` into the
    space must carry a valid checksum of (FX-XF-002); without it a persist needs none.
    ``noncoherent`` marks memory that several hosts share without cross-host coherence (CXL 2.0
    multi-host sharing): a read by one host of bytes another host wrote needs a write-back and an
    invalidate in between (FX-ORD-005, specs/obligations.md).
    """

    name: str
    device: str
    base: int
    size: int
    persistent: bool = False
    span: Span = NO_SPAN
    init: bool = False
    checksum: str | None = None
    noncoherent: bool = False

    @property
    def end(self) -> int:
        """One past the last address, in bytes."""
        return self.base + self.size


@dataclass(frozen=True, slots=True)
class Region:
    """A named range ``[base, base + size)`` of ``space`` (absolute addresses), with its initial owner.

    ``name`` is the instance name (``kv[3][17]`` for a family instance). ``family`` is the declared
    name (``kv``). ``alias_set`` is the alias set the region belongs to, if any. ``dtype`` is the
    element type stored there, when declared (FX-XF-003 compares it). ``init``: the region's bytes
    hold data before the flow starts (weights, inputs loaded earlier; FX-INIT-001 needs no write
    of them). ``pooled`` regions start unallocated, in their pool: no access is legal before an
    ``alloc`` of them (specs/obligations.md section 1, lifetimes); ``owner`` is then the pool's
    device, whose allocator hands them out.
    """

    name: str
    family: str
    space: str
    base: int
    size: int
    owner: str
    alias_set: str | None = None
    dtype: str | None = None
    span: Span = NO_SPAN
    init: bool = False
    pooled: bool = False

    @property
    def end(self) -> int:
        """One past the last address, in bytes."""
        return self.base + self.size

    def whole(self) -> Footprint:
        """The footprint of every byte of the region, contiguous (``write R`` with no range)."""
        return Footprint(self.name, self.space, self.base, self.size, self.size, 1)


@dataclass(frozen=True, slots=True)
class AliasSet:
    """A group of regions whose footprints may overlap one another."""

    name: str
    regions: tuple[str, ...]
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class ConsistencyClass:
    """A map's consistency class; ``device`` is set only for ``local(dev)``."""

    kind: ClassKind
    device: str | None = None

    def __str__(self) -> str:
        return f"local({self.device})" if self.kind is ClassKind.LOCAL else self.kind.value


@dataclass(frozen=True, slots=True)
class MapDecl:
    """A BPF map used by the policy programs.

    ``map_type`` is ``hash``, ``array`` or ``ringbuf``; ``key_type``/``value_type`` are ``u8``..``u64``
    or ``device``. ``merge`` is the operator used by ``update`` (``sum``, ``max``, ``last``...), or
    ``None`` when updates are not allowed.
    """

    name: str
    map_type: str
    key_type: str
    value_type: str
    max_entries: int
    cls: ConsistencyClass
    merge: str | None = None
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Access:
    """One footprint touched by an edge, with its mode (and operator for ``REDUCE``). ``atomic``
    (``REDUCE`` only): the accumulation is one indivisible read-modify-write per element (an
    atomic add, a reduction in the fabric); false for ``reduce(OP, nonatomic)``, a plain load,
    combine and store that a concurrent accumulation can interleave with (a lost update)."""

    footprint: Footprint
    mode: AccessMode
    op: str | None = None
    atomic: bool = True




@dataclass(frozen=True, slots=True)
class MapOp:
    """One map access by an edge's program. ``key``/``value`` are concrete after unrolling."""

    map: str
    kind: MapOpKind
    key: int | None = None
    value: int | None = None
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Handoff:
    """Ownership of ``region`` passes from ``src`` to ``dst`` when the edge completes.

    While the edge runs the region is in transit (FX-OWN-002).
    """

    region: str
    src: str
    dst: str
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Lease:
    """``device`` may read ``region`` from the end of the edge until the region's next handoff
    starts, or a revoke of it from ``device`` starts (a release ends every use anyway: FX-OWN-004)."""

    region: str
    device: str
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Revoke:
    """``revoke REGION from DEVICE``: from the start of the edge, no lease granted to ``device``
    before the edge finished lets it read ``region`` or any region inside it (a lease granted
    after this edge finished still does). Only the owner of ``region`` when the edge starts may
    revoke (FX-OWN-001, as for a release). Source: specs/obligations.md section 1."""

    region: str
    device: str
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Release:
    """The region's use ends with this edge: every other edge that uses the region must finish
    before this one starts. The edge's own accesses come first (``move a -> b ... release a free``
    frees the source once the copy is done), so they are legal."""

    region: str
    kind: ReleaseKind
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Alloc:
    """``alloc REGION to DEVICE``: a new allocation of the region's bytes begins when the edge
    finishes, owned by ``device`` (a block taken from a pool after a release). The region, and
    every region inside it, is owned by ``device`` from then; every access belongs to the
    allocation it is happens-before-inside (FX-OWN-004), and an allocation begins only after the
    previous one was released (FX-OWN-006). Source: specs/obligations.md section 1, lifetimes."""

    region: str
    device: str
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Cancel:
    """``cancel EDGE``: the edge cancels transfer ``edge`` (an instance name), which its own
    device issued. Once the cancelling edge finishes, the cancelled transfer touches no byte: it
    touches its bytes only over ``[s(x), min(f(x), f(c)))`` for every cancelling edge ``c``, and
    its writes define no byte (a cancelled write may be partial), though they still conflict as
    writes while it runs. The cancelled edge still ends at ``f(x)`` for happens-before (its
    completion, with an error status, is what ``after x`` waits for). Source: RDMA verbs, a work
    request flushed with ``IBV_WC_WR_FLUSH_ERR`` no longer accesses its buffers;
    specs/obligations.md section 1, cancellation."""

    edge: str
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Expectation:
    """``expects OP of P, ...`` on a reading edge: the bytes it reads hold the ``op``-accumulation
    (``vocab.AC_OPS``) of every producer instance in ``producers`` (FX-XF-004, specs/obligations.md)."""

    op: str
    producers: tuple[str, ...]
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Edge:
    """One movement (an instance, after unrolling families).

    ``eid`` is the edge's position in declaration order (0-based) and is its identity.
    ``name`` is the instance name (``spill[3]``); ``family`` the declared name (``spill``).
    ``action`` says what it does with bytes (``EdgeAction``); a ``reduce`` accumulates with
    ``reduce_op``, atomically unless ``reduce_atomic`` is false (``reduce(OP, nonatomic)``).
    ``device``/``hook`` are the driving hook. ``after`` holds the names of predecessor instances.
    ``stream`` puts the edge on a serial in-order queue of its device. ``flushes`` names links the
    edge flushes. ``require_in_order`` asks for in-order delivery over its path (FX-ORD-004).
    ``via`` pins the route of its bytes to these links, in path order (``None``: every path the
    fabric allows may carry them; specs/obligations.md section 2, routes).
    ``alias`` overrides the alias set of the footprints. ``bytes`` is the declared byte count, if any.
    ``reuse`` (bytes of reuse distance) and ``rw`` (read:write ratio) are carried for lowering.
    ``expects`` declares the accumulation the edge's reads expect (``Expectation``).
    ``writebacks``/``invalidates``: footprints whose lines the edge's device writes back when the edge
    finishes (the fence completing) or invalidates when it starts (FX-ORD-005). ``notifies``: the
    transfers (instance names) whose completion the edge reports; it adds no HB (FX-ORD-006).
    ``cancels``: the transfers the edge cancels (``Cancel``): the interval over which a cancelled
    edge touches bytes ends when the first of its cancelling edges finishes.
    ``indices``: for an instance of a family, the index expressions of its declaration as
    written when each is a plain loop variable or an integer literal (``("l", "0")`` for ``edge
    spill[l, 0]``, ``ast.index_text``), with ``""`` for any other expression; empty for a plain
    edge. A fix hint writes an ordering for the whole declaration with them (``edits.FamilyAfter``).
    """

    eid: int
    name: str
    family: str
    action: EdgeAction
    device: str
    hook: str
    src: Footprint | None = None
    dst: Footprint | None = None
    reduce_op: str | None = None
    reduce_atomic: bool = True
    after: tuple[str, ...] = ()
    stream: str | None = None
    flushes: tuple[str, ...] = ()
    require_in_order: bool = False
    via: tuple[str, ...] | None = None
    alias: str | None = None
    bytes: int | None = None
    reuse: int | None = None
    rw: tuple[int, int] | None = None
    transforms: tuple[Transform, ...] = ()
    handoffs: tuple[Handoff, ...] = ()
    leases: tuple[Lease, ...] = ()
    revokes: tuple[Revoke, ...] = ()
    releases: tuple[Release, ...] = ()
    allocs: tuple[Alloc, ...] = ()
    map_ops: tuple[MapOp, ...] = ()
    writebacks: tuple[Footprint, ...] = ()
    invalidates: tuple[Footprint, ...] = ()
    notifies: tuple[str, ...] = ()
    flow: str = ""
    span: Span = NO_SPAN
    hook_span: Span = NO_SPAN
    expects: Expectation | None = None
    cancels: tuple[Cancel, ...] = ()
    indices: tuple[str, ...] = ()
    #: ``accesses()``, computed once (slots, not a ``__dict__``: a full-size policy holds hundreds
    #: of thousands of edges, and a dict each cost about 1 KiB more); not an input of the edge
    _accesses: tuple[Access, ...] | None = field(default=None, init=False, repr=False, compare=False, hash=False)

    def accesses(self) -> tuple[Access, ...]:
        """Return the byte accesses of this edge, source first.

        ``read``: the source is read. ``write``: the destination is written. ``move``: source read,
        destination written. ``reduce``: source read, destination accumulated with ``reduce_op``.
        ``release``, ``flush`` and ``cancel`` touch no bytes. The tuple is computed once per edge.
        """
        cached = self._accesses
        if cached is not None:
            return cached
        out: list[Access] = []
        if self.src is not None:
            out.append(Access(self.src, AccessMode.READ))
        if self.dst is not None:
            if self.action is EdgeAction.REDUCE:
                out.append(Access(self.dst, AccessMode.REDUCE, self.reduce_op, self.reduce_atomic))
            elif self.action is EdgeAction.READ:
                out.append(Access(self.dst, AccessMode.READ))
            else:
                out.append(Access(self.dst, AccessMode.WRITE))
        object.__setattr__(self, "_accesses", tuple(out))  # frozen: set once, as a cache
        return self._accesses

    def persists(self) -> bool:
        """True when the edge's transform chain has a ``persist`` step (it claims its bytes durable)."""
        return any(t.kind is XfKind.PERSIST for t in self.transforms)

    def durable(self) -> Footprint | None:
        """The bytes a ``persist`` step of the edge makes durable: its destination, or its source
        on an in-place edge (no destination: ``read ck ... transform persist`` seals ``ck`` where
        it lies); ``None`` without either (specs/obligations.md, FX-XF-002 and FX-XF-003)."""
        return self.dst if self.dst is not None else self.src

    def defines(self) -> tuple[Footprint, ...]:
        """The destination bytes this edge leaves defined (FX-INIT-001), as at most two footprints:
        a ``write`` defines its whole destination; a ``move`` or ``reduce`` the first ``out`` bytes
        of it in address order, ``out`` being the fewest bytes its transform chain can emit for
        its source's bytes: unchanged through move, checksum, persist and reduce; exact through
        quantize (``ceil(elems*bits/8)`` plus the group scales); ``n // W`` for one part of a
        scatter; ``n*W`` for gather and replicate; none for compress and filter, whose output
        length depends on the data. Source: specs/obligations.md, "Def-before-use"."""
        dst = self.dst
        if dst is None or self.action not in (EdgeAction.WRITE, EdgeAction.MOVE, EdgeAction.REDUCE):
            return ()
        if self.action is EdgeAction.WRITE or self.src is None:
            return (dst,)
        n = self.src.nbytes
        for t in self.transforms:
            n = _fewest_out(t, n)
        n = min(n, dst.nbytes)
        full, rem = divmod(n, dst.elem)
        out = (replace(dst, count=full),) if full else ()
        if rem:
            out += (Footprint(dst.region, dst.space, dst.base + full * dst.stride, rem, rem, 1, dst.span),)
        return out


def _fewest_out(t: Transform, n: int) -> int:
    """The fewest bytes transform ``t`` emits for ``n`` input bytes (``Edge.defines``)."""
    if isinstance(t, (Compress, Filter)):
        return 0
    if isinstance(t, Quantize):
        elems = n * 8 // dtype_bits(t.src)
        out = -(-elems * dtype_bits(t.dst) // 8)
        if t.group:
            out += -(-(-(-elems // t.group)) * dtype_bits(t.scale) // 8)
        return out
    if isinstance(t, Scatter):
        return n // t.ways
    if isinstance(t, (Gather, Replicate)):
        return n * t.ways
    return n


def transfer_devices(driver: str, src_device: str | None, dst_device: str | None) -> tuple[str, str]:
    """Return ``(from_device, to_device)`` of the bytes an edge moves, given its driving device and
    the devices of its source and destination spaces (``None`` when it has none).

    ``move``/``reduce``: source's device to destination's device. ``write``: the driver to the
    destination's device. ``read``: the source's device to the driver. Neither: the driver to itself.
    """
    return (src_device if src_device is not None else driver,
            dst_device if dst_device is not None else driver)


@dataclass(frozen=True, slots=True)
class FinalOwner:
    """The declared owner of ``region`` when the flow ends (FX-OWN-005)."""

    region: str
    device: str
    span: Span = NO_SPAN


@dataclass(frozen=True)
class Policy:
    """A resolved policy: the fabric, the memory layout, the maps and the unrolled flows.

    Tuples are in declaration order. ``rlimit`` is the policy's own cap on solver effort per
    obligation (``policy "x" rlimit N``), applied on top of the command line's.
    """

    name: str
    path: str
    devices: tuple[Device, ...]
    links: tuple[Link, ...]
    spaces: tuple[Space, ...]
    regions: tuple[Region, ...]
    alias_sets: tuple[AliasSet, ...]
    maps: tuple[MapDecl, ...]
    edges: tuple[Edge, ...]
    final_owners: tuple[FinalOwner, ...] = ()
    suppressions: tuple[Suppression, ...] = ()
    span: Span = NO_SPAN
    rlimit: int | None = None
    #: the families as written (``fxverify.shapes.Shapes``), for the parametric prover; not an
    #: input of any verdict: ``Shapes.of`` gives them only while ``edges``/``regions`` are the
    #: tuples they were built with
    shapes: Shapes | None = field(default=None, compare=False, repr=False)
    _index: dict[str, dict[str, int]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update(
            device={d.name: i for i, d in enumerate(self.devices)},
            space={s.name: i for i, s in enumerate(self.spaces)},
            region={r.name: i for i, r in enumerate(self.regions)},
            map={m.name: i for i, m in enumerate(self.maps)},
            edge={e.name: i for i, e in enumerate(self.edges)},
            link={ln.name: i for i, ln in enumerate(self.links)},
        )

    def device(self, name: str) -> Device:
        """Return the device called ``name``; raises ``KeyError`` if absent (resolve guarantees it)."""
        return self.devices[self._index["device"][name]]

    def space(self, name: str) -> Space:
        """Return the address space called ``name``; raises ``KeyError`` if absent."""
        return self.spaces[self._index["space"][name]]

    def region(self, name: str) -> Region:
        """Return the region instance called ``name``; raises ``KeyError`` if absent."""
        return self.regions[self._index["region"][name]]

    def map(self, name: str) -> MapDecl:
        """Return the map called ``name``; raises ``KeyError`` if absent."""
        return self.maps[self._index["map"][name]]

    def edge(self, name: str) -> Edge:
        """Return the edge instance called ``name``; raises ``KeyError`` if absent."""
        return self.edges[self._index["edge"][name]]

    def link(self, name: str) -> Link:
        """Return the link called ``name``; raises ``KeyError`` if absent."""
        return self.links[self._index["link"][name]]

    def has(self, kind: str, name: str) -> bool:
        """True when a ``kind`` (device, space, region, map, edge, link) called ``name`` exists."""
        return name in self._index[kind]
