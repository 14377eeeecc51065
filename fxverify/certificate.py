"""Certificates of fast proofs: the evidence an exact non-solver proof leaves behind.

Every obligation that ``prove_fast`` proves without the solver can state why in a ``Certificate``
(``Obligation.certificate()``): the obligation's ``key``, ``code`` and primary ``edges``, the
proof ``method`` (the name ``prove_fast`` returned) and one piece of evidence, a frozen dataclass of
IR names, edge ids and integers (no callables, no graph objects). ``fxverify.certify`` re-validates
certificates against the IR alone, sharing no code with the prover; ``specs/certificates.md``
gives each kind and what the checker verifies. This module is the data contract between the two:
it imports nothing from fxverify. Emits no diagnostics.

Edge ids are ``ir.Edge.eid``; an ``HbPath`` ``(x0, ..., xn)`` claims ``f(x0) <= s(xn)`` in every
schedule, each step ``x -> y`` being an ``after x`` clause of ``y`` or ``x`` declared before ``y``
on the same ``(device, stream)`` (BRIEF section 2).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HbPath:
    """An HB path: edge ids ``(x0, ..., xn)``, ``n >= 1``; claims ``f(x0) <= s(xn)``."""

    edges: tuple[int, ...]

    @property
    def first(self) -> int:
        """The edge the path starts at (it finishes first)."""
        return self.edges[0]

    @property
    def last(self) -> int:
        """The edge the path ends at (it starts last)."""
        return self.edges[-1]


@dataclass(frozen=True, slots=True)
class Ordered:
    """Kind ``hb-order``: ``path`` orders two of the obligation's edges (which two, and in which
    direction, the obligation's code decides)."""

    path: HbPath
    kind = "hb-order"


@dataclass(frozen=True, slots=True)
class EarlierAccess:
    """An earlier access that a later one conflicts with (``OrderedBefore``): access ``pos`` of
    edge ``edge``, and ``path``, an HB path from that edge to the later access's edge."""

    edge: int
    pos: int
    path: HbPath


@dataclass(frozen=True, slots=True)
class OrderedBefore:
    """Kind ``hb-before-all`` (FX-ORD-002 of one access): access ``pos`` of the obligation's first
    edge is HB-after each access of ``earlier``, one per further edge of the obligation, in the
    obligation's edge order; each shares a hull byte with it and one of the two writes. So no
    listed access races with it (specs/obligations.md, FX-ORD-002, the access history)."""

    pos: int
    earlier: tuple[EarlierAccess, ...]
    kind = "hb-before-all"


@dataclass(frozen=True, slots=True)
class CancelledFirst:
    """Kind ``cancel-order`` (FX-ORD-002, FX-OWN-002, FX-OWN-004 of a release): edge ``cancel``
    cancels ``cancelled``, one of the obligation's two edges, and ``path`` orders the cancel
    before one of the two (the other edge, or ``cancelled`` itself, which then touches nothing):
    a cancelled edge touches its bytes only until its cancel finishes, so the two never touch
    bytes at once (for a release: the use touches nothing once the release starts)."""

    cancel: int
    cancelled: int
    path: HbPath
    kind = "cancel-order"


@dataclass(frozen=True, slots=True)
class FlushedBetween:
    """Kind ``flush-between`` (FX-ORD-003): edge ``flush`` flushes ``link``; ``before`` orders the
    writer before it (``None`` when the writer is the flushing edge) and ``after`` orders it
    before the reader (from the writer when the writer flushes)."""

    link: str
    flush: int
    before: HbPath | None
    after: HbPath
    kind = "flush-between"


@dataclass(frozen=True, slots=True)
class FlushedAfter:
    """Kind ``flush-after`` (FX-ORD-003, a persisted write): edge ``flush`` flushes ``link`` after
    the persisting writer; ``before`` orders the writer before it (``None`` when the writer is the
    flushing edge: its own flush clause takes effect when it finishes)."""

    link: str
    flush: int
    before: HbPath | None
    kind = "flush-after"


@dataclass(frozen=True, slots=True)
class ReadBackAfter:
    """Kind ``read-back-after`` (FX-ORD-003, a persisted write): edge ``reader``, driven by the
    persisting writer's device, reads from the device of the persisted bytes and starts after the
    writer finished (``before``); both transfers can take only ``route`` (link names in path order
    from the writer's device), which holds ``link``. The read request cannot pass the posted writes
    along that path, so its completion returns only once they reached the device and its
    persistence domain (PCIe Base Specification, section 2.4.1, transaction ordering rules; the
    read-after-write flush of persistent memory, SNIA NVM Programming Model)."""

    link: str
    reader: int
    route: tuple[str, ...]
    before: HbPath
    kind = "read-back-after"


@dataclass(frozen=True, slots=True)
class ReadBackBetween:
    """Kind ``read-back-between`` (FX-ORD-003, a read): edge ``reader``, driven by the writer's
    device, reads from the device of the written bytes over ``route``, the one route both
    transfers can take (link names in path order from the writer's device), which holds ``link``;
    ``before`` orders the writer before it and ``after`` orders it before the obligation's reader.
    Its read request cannot pass the posted writes along that path, so it completes only once
    they reached the device (PCIe Base Specification, section 2.4.1): a flush of the link."""

    link: str
    reader: int
    route: tuple[str, ...]
    before: HbPath
    after: HbPath
    kind = "read-back-between"


@dataclass(frozen=True, slots=True)
class HostReadBetween:
    """Kind ``host-read-between`` (FX-ORD-003, a read): edge ``reader``, driven by the device of
    the written bytes, a ``cpu`` (host memory), reads from the memory of the writer's device (no
    ``cpu``; a status register, say) over ``route`` (link names in path order from the writer's
    device), the only simple fabric path between the two devices, made of ``pcie`` links, none
    ``unordered``, holding the key's posted link, and the one route of the write's traffic
    between the two; ``before`` orders the writer before it and ``after`` orders it before the
    obligation's reader. Its completion travels that path from the writer's device behind the
    posted writes issued before the request arrived, and a completion does not pass a posted
    request in the same direction (PCIe Base Specification, section 2.4.1, transaction ordering
    rules, with Relaxed Ordering off), so once it finished the bytes are in host memory: the
    interrupt handler's register read of Linux ``Documentation/PCI/msi-howto.rst``, "Why use
    MSIs?"."""

    link: str
    reader: int
    route: tuple[str, ...]
    before: HbPath
    after: HbPath
    kind = "host-read-between"


@dataclass(frozen=True, slots=True)
class SameRequester:
    """Kind ``same-requester`` (FX-ORD-003): the writer and the reader are driven by one device,
    ``device``, and either the bytes lie in that device's own memory (``route`` empty: the device
    received them itself, so its own later reads find them), or both transfers join ``device`` and
    the device of the bytes over one and the same route, ``route`` (link names in path order from
    ``device``), which the posted link is part of: a read request does not pass posted writes
    along one path (PCIe Base Specification, section 2.4.1, transaction ordering rules)."""

    device: str
    route: tuple[str, ...]
    kind = "same-requester"


@dataclass(frozen=True, slots=True)
class Notified:
    """Kind ``notified`` (FX-ORD-003): edge ``notification``, a completion entry (it ``notifies``
    some edge), is driven by the writer's device and writes into the device of the written
    bytes, a ``cpu`` (host memory), over ``route`` (link names in path order from the writer's
    device), the only simple fabric path between the two devices, which holds the key's posted link; ``before`` orders the writer
    before it. Edge ``consumer``, driven by that host and not cancelled, names it in its own
    ``after`` clause (it waits for the completion entry in its own memory), and ``after`` orders
    the consumer before the reader (``None``: the consumer is the reader). The notification's
    posted writes follow the writer's along that one path and do not pass them (PCIe Base
    Specification, section 2.4.1: the producer/consumer model), so once the consumer sees it, the
    bytes are in host memory for every reader. When the writer is itself the completion entry
    (``notification`` is the writer, it ``notifies`` some edge, ``route`` is empty, ``before``
    ``None``), the consumer saw its own bytes arrive in the device that holds them, any device."""

    notification: int
    consumer: int
    route: tuple[str, ...]
    before: HbPath | None
    after: HbPath | None
    kind = "notified"


@dataclass(frozen=True, slots=True)
class WrittenBack:
    """Kind ``written-back`` (FX-ORD-005): clause ``wb_pos`` of edge ``writeback`` writes back and
    clause ``inv_pos`` of edge ``invalidate`` invalidates every byte of ``[lo, hi)``, the hull of
    the bytes the write and the read share; ``before`` orders the writer before the write-back
    (``None``: the writer writes back itself), ``between`` the write-back before the invalidate,
    ``after`` the invalidate before the reader (``None``: the reader invalidates itself)."""

    lo: int
    hi: int
    writeback: int
    wb_pos: int
    invalidate: int
    inv_pos: int
    before: HbPath | None
    between: HbPath
    after: HbPath | None
    kind = "written-back"


@dataclass(frozen=True, slots=True)
class HandoffOrder:
    """One handoff of the region, ordered by ``path``: either it finishes before the handoff that
    gave the region to its owner (``path`` ends there) or it starts after the use (``path`` starts
    at the use)."""

    handoff: int
    path: HbPath


@dataclass(frozen=True, slots=True)
class OwnerChain:
    """Kind ``owner-chain``: ``device`` owns ``region`` when edge ``at`` starts, in every schedule.
    ``via`` is the handoff to ``device`` whose ``via_path`` orders it before ``at`` (``None``: the
    initial owner, with no handoff before ``at``); ``others`` orders every other handoff of the
    region (those of enclosing regions included) before ``via`` or after ``at``."""

    region: str
    device: str
    at: int
    via: int | None
    via_path: HbPath | None
    others: tuple[HandoffOrder, ...]
    kind = "owner-chain"


@dataclass(frozen=True, slots=True)
class OneOwner:
    """Kind ``one-owner``: ``device`` owns ``region`` when edge ``at`` starts, in every schedule,
    whatever the order of its handoffs: ``device`` is its initial owner and every handoff of the
    region (those of enclosing regions included) gives it to ``device`` (a block pool whose every
    ``alloc`` goes to one device). The owner at any time is the initial one or the destination of
    a handoff (specs/obligations.md section 1, ownership), so no HB path is needed."""

    region: str
    device: str
    at: int
    kind = "one-owner"


@dataclass(frozen=True, slots=True)
class LeaseChain:
    """Kind ``lease-chain``: ``device`` holds a read lease on ``region`` when edge ``at`` starts:
    edge ``lease`` grants it and ``lease_path`` orders it before ``at``; ``others`` orders every
    handoff of the region on another edge before the lease or after ``at``; ``revokes`` orders
    every edge that revokes the region (or a region containing it) from ``device`` the same way
    (each entry's ``handoff`` is the revoking edge). ``grantor``: when the lease names only a
    region containing ``region``, the ownership chain that makes the lease's driving device own
    ``region`` when ``lease`` starts (a lease lends only what its grantor owns)."""

    region: str
    device: str
    at: int
    lease: int
    lease_path: HbPath
    others: tuple[HandoffOrder, ...]
    revokes: tuple[HandoffOrder, ...] = ()
    grantor: OwnerChain | None = None
    kind = "lease-chain"


@dataclass(frozen=True, slots=True)
class FinalOwnerOf:
    """Kind ``final-owner``: the owner of ``region`` when the flow ends is ``owner`` in every
    schedule. ``superseded`` orders each handoff that is not last before another handoff of the
    region; ``last`` lists the others, each giving the region to ``owner`` (empty with no
    handoffs: the initial owner stays)."""

    region: str
    owner: str
    superseded: tuple[HandoffOrder, ...]
    last: tuple[int, ...]
    kind = "final-owner"


@dataclass(frozen=True, slots=True)
class TopologicalOrder:
    """Kind ``topological-order`` (FX-ORD-001): every edge id once, each HB constraint going
    forward; ``s(e) = 2i``, ``f(e) = 2i + 1`` for the edge at position ``i`` is a schedule."""

    order: tuple[int, ...]
    kind = "topological-order"


@dataclass(frozen=True, slots=True)
class Interval:
    """Kind ``interval`` (FX-ALIAS-003): access ``pos`` of the edge touches ``[lo, hi)``, inside
    ``region``'s ``[base, end)``."""

    pos: int
    region: str
    lo: int
    hi: int
    base: int
    end: int
    kind = "interval"


@dataclass(frozen=True, slots=True)
class InPlaceForm:
    """Kind ``in-place`` (FX-ALIAS-002): ``rule`` is ``gather-rank`` (the source sits at
    ``dst.base + rank * chunk``) or ``same-footprint`` (a reduction whose source is its
    destination)."""

    rule: str
    rank: int = 0
    chunk: int = 0
    kind = "in-place"


@dataclass(frozen=True, slots=True)
class FabricHop:
    """A route from device ``src`` to device ``dst`` over ``links`` (names, in order)."""

    src: str
    dst: str
    links: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FabricPath:
    """Kind ``fabric-path`` (FX-HOOK-001, FX-ORD-004): one route per pair of devices the
    obligation joins; ``ordered_only`` when every link must be ``ordered``."""

    hops: tuple[FabricHop, ...]
    ordered_only: bool
    kind = "fabric-path"


@dataclass(frozen=True, slots=True)
class EveryPath:
    """Kind ``every-path`` (FX-ORD-004): the links that may carry the transfer from device ``src``
    to device ``dst`` (its ``via`` route when ``pinned``, else every link on some simple path
    between them), all ``ordered``."""

    src: str
    dst: str
    carriers: tuple[str, ...]
    pinned: bool
    kind = "every-path"


@dataclass(frozen=True, slots=True)
class DeclaredHook:
    """Kind ``declared-hook`` (FX-HOOK-002): ``device`` declares ``hook``."""

    device: str
    hook: str
    kind = "declared-hook"


@dataclass(frozen=True, slots=True)
class LinkEndpoint:
    """Kind ``link-endpoint`` (FX-HOOK-001 for flushes): ``device`` is an end of ``link``."""

    link: str
    device: str
    kind = "link-endpoint"


@dataclass(frozen=True, slots=True)
class OneDestination:
    """Kind ``one-destination`` (FX-OWN-003 split): the handoff clauses at ``clauses`` (positions
    in the edge's handoffs) share bytes with ``region`` and all name ``dst``."""

    region: str
    dst: str
    clauses: tuple[int, ...]
    kind = "one-destination"


@dataclass(frozen=True, slots=True)
class LocalClass:
    """Kind ``local-class`` (FX-MAP-001): map op ``op`` (position in the edge's map ops) uses
    ``map``, local to ``device``, which drives the edge."""

    op: int
    map: str
    device: str
    kind = "local-class"


@dataclass(frozen=True, slots=True)
class OwnSlot:
    """Kind ``own-slot`` (FX-MAP-004, plain read): map op ``op`` reads per-device ``map`` entry
    ``key`` and no edge on another device writes it."""

    op: int
    map: str
    key: int | None
    kind = "own-slot"


@dataclass(frozen=True, slots=True)
class SizeBound:
    """Kind ``size-bound`` (FX-XF-001): ``sizes[0]`` input bytes, ``sizes[i]`` the worst-case
    output of transform ``i - 1``; the last fits ``capacity`` (the destination's bytes)."""

    sizes: tuple[int, ...]
    capacity: int
    kind = "size-bound"


@dataclass(frozen=True, slots=True)
class ChecksumWalk:
    """Kind ``checksum-walk`` (FX-XF-002): ``valid[i]`` says whether a valid checksum covers the
    bytes before transform ``i`` (one more entry for the end of the chain)."""

    valid: tuple[bool, ...]
    kind = "checksum-walk"


@dataclass(frozen=True, slots=True)
class LayoutFacts:
    """Kind ``layout`` (FX-XF-003): ``dtypes[i]`` the dtype flowing into transform ``i`` and, last,
    into the destination (``None``: undeclared); ``nbytes`` the input bytes."""

    dtypes: tuple[str | None, ...]
    nbytes: int
    kind = "layout"


@dataclass(frozen=True, slots=True)
class CoverRead:
    """A read (edge ``edge``, access ``pos``) of ``[lo, hi)``, ordered after the reduction by
    ``after_reduce`` and before the write by ``before_write``."""

    edge: int
    pos: int
    lo: int
    hi: int
    after_reduce: HbPath
    before_write: HbPath


@dataclass(frozen=True, slots=True)
class ReadCover:
    """Kind ``read-cover`` (FX-XF-004, lost accumulation): the reads cover ``[lo, hi)``, every byte
    that both the reduction and the write touch."""

    lo: int
    hi: int
    reads: tuple[CoverRead, ...]
    kind = "read-cover"


@dataclass(frozen=True, slots=True)
class LifetimeChain:
    """Kind ``lifetime-chain`` (FX-OWN-006): ``edges``/``kinds`` are every lifetime event of
    ``region`` (``"alloc"``/``"release"``, one per clause), in an order where ``paths[i]`` is an HB
    path from event ``i`` to event ``i + 1``, and the kinds alternate from the region's initial
    state (a release first unless it is pooled)."""

    region: str
    edges: tuple[int, ...]
    kinds: tuple[str, ...]
    paths: tuple[HbPath, ...]
    kind = "lifetime-chain"


@dataclass(frozen=True, slots=True)
class WithinAllocation:
    """Kind ``within-allocation`` (FX-OWN-004, a region with a lifetime): edge ``use`` lies inside
    one allocation of ``region`` in every schedule. ``order`` orders every lifetime event other
    than ``use`` with it (``path`` ends at ``use``: the event is before it; starts there: after);
    ``alloc`` is the event before ``use`` that opens its allocation (``None``: no event is before
    it and the region starts allocated), and ``opened`` orders every release before ``use``
    before ``alloc``."""

    region: str
    use: int
    alloc: int | None
    order: tuple[HandoffOrder, ...]
    opened: tuple[HandoffOrder, ...]
    kind = "within-allocation"


@dataclass(frozen=True, slots=True)
class WriteBefore:
    """A write that defines bytes before a read: access ``pos`` of edge ``edge`` writes (or
    reduces into) them, and ``path`` orders the edge before the reader. ``fences``: HB paths that
    order ``alloc`` edges of the read's bytes outside the write's allocation span, each from the
    alloc to the write or from the read to the alloc; the bytes of every other such alloc's
    region do not count as written (FX-INIT-001, same allocation)."""

    edge: int
    pos: int
    path: HbPath
    fences: tuple[HbPath, ...] = ()


@dataclass(frozen=True, slots=True)
class DefinedCover:
    """Kind ``defined-cover`` (FX-INIT-001): the read access ``pos`` of the obligation's first edge
    touches only bytes in the footprints of ``writes`` (each ordered before the read) or in the
    ranges of ``inits``: names of regions declared ``init``, or of the read's space when that
    space is declared ``init``. ``fences``: HB paths from the read to ``alloc`` edges of its
    bytes; the ``init`` contents of every other such alloc's region do not count (they hold only
    until the first allocation)."""

    pos: int
    writes: tuple[WriteBefore, ...]
    inits: tuple[str, ...]
    fences: tuple[HbPath, ...] = ()
    kind = "defined-cover"


Evidence = (Ordered | OrderedBefore | CancelledFirst | FlushedBetween | FlushedAfter | ReadBackAfter | ReadBackBetween | HostReadBetween | SameRequester | Notified | WrittenBack | OwnerChain | OneOwner | LeaseChain | FinalOwnerOf | TopologicalOrder | Interval
            | InPlaceForm | FabricPath | EveryPath | DeclaredHook | LinkEndpoint | OneDestination | LocalClass | OwnSlot
            | SizeBound | ChecksumWalk | LayoutFacts | ReadCover | LifetimeChain | WithinAllocation | DefinedCover)

#: Every evidence class, by its kind name.
KINDS: dict[str, type] = {c.kind: c for c in (
    Ordered, OrderedBefore, CancelledFirst, FlushedBetween, FlushedAfter, ReadBackAfter, ReadBackBetween, HostReadBetween, SameRequester, Notified, WrittenBack, OwnerChain, OneOwner, LeaseChain, FinalOwnerOf, TopologicalOrder, Interval, InPlaceForm,
    FabricPath, EveryPath, DeclaredHook, LinkEndpoint, OneDestination, LocalClass, OwnSlot, SizeBound, ChecksumWalk,
    LayoutFacts, ReadCover, LifetimeChain, WithinAllocation, DefinedCover)}

#: Every proof method ``prove_fast`` may return, and the certificate kinds that can prove it.
METHOD_KINDS: dict[str, frozenset[str]] = {
    "hb-reachability": frozenset({"hb-order", "hb-before-all", "flush-between", "flush-after", "read-back-after", "read-back-between", "host-read-between", "written-back", "owner-chain", "final-owner", "read-cover",
                                  "lifetime-chain", "within-allocation"}),
    "cancel-order": frozenset({"cancel-order"}),
    "static-owner": frozenset({"owner-chain", "one-owner", "final-owner"}),
    "lease-hb": frozenset({"lease-chain"}),
    "topological-sort": frozenset({"topological-order"}),
    "interval": frozenset({"interval"}),
    "in-place-rule": frozenset({"in-place"}),
    "fabric-search": frozenset({"fabric-path"}),
    "every-path": frozenset({"every-path"}),
    "same-requester": frozenset({"same-requester"}),
    "producer-consumer": frozenset({"notified"}),
    "declared": frozenset({"declared-hook"}),
    "link-endpoint": frozenset({"link-endpoint"}),
    "constant": frozenset({"one-destination"}),
    "static-class": frozenset({"local-class", "own-slot"}),
    "arith": frozenset({"size-bound"}),
    "chain-walk": frozenset({"checksum-walk"}),
    "static-layout": frozenset({"layout"}),
    "hb-cover": frozenset({"defined-cover"}),
}


@dataclass(frozen=True, slots=True)
class Certificate:
    """The certificate of one fast proof: the obligation's ``key``, ``code`` (``"FX-ORD-002"``)
    and primary ``edges`` (ids, in role order, as the obligation holds them), the ``method`` that
    proved it, and the ``evidence``."""

    key: str
    code: str
    method: str
    edges: tuple[int, ...]
    evidence: Evidence

    @property
    def kind(self) -> str:
        """The evidence's kind name (a key of ``KINDS``)."""
        return self.evidence.kind
