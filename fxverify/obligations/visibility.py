"""What makes a posted write visible to a reader without a flush of its link (FX-ORD-003;
specs/obligations.md section 1, posted rule): the writer's own device reading along the write's
one route (``same_requester``), a completion entry written after it along the same path into host
memory (``notices``), a read-back by the writer's device (``read_backs_of``) and a read of the
writer's device by the bytes' host (``host_reads_of``). Each rests on the PCIe Base
Specification, section 2.4.1 (transaction ordering rules) along one fabric path. ``posted`` builds
the obligations on them; ``lower.watches`` asks them which reads need a runtime flush check.
Takes a ``Context``; emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable

from fxverify.certificate import SameRequester
from fxverify.graph import PolicyGraph
from fxverify.ir import Access, AccessMode, Edge, Footprint
from fxverify.obligations.base import Context
from fxverify.vocab import ENTRY_BLOCK_HOST, ENTRY_BLOCK_OTHER, ENTRY_KINDS, READ_BACK_KINDS, DeviceKind, LinkOrder


def in_order(ctx: Context, route: Iterable[str], kinds: frozenset[str] | None = None) -> bool:
    """True when no link of ``route`` (link names) is ``unordered`` and, with ``kinds``, each is of
    one of them. Every rule of this module rests on transactions keeping their order along one
    path (PCIe Base Specification, section 2.4.1); an ``unordered`` link keeps none (section 1,
    links and routes: "no order"; on PCIe, Relaxed Ordering lets a posted write or a completion
    pass a posted write)."""
    pol = ctx.policy
    return all(pol.link(n).order is not LinkOrder.UNORDERED and (kinds is None or pol.link(n).kind in kinds) for n in route)


def same_requester(ctx: Context, ew: Edge, acc_w: Access, er: Edge) -> SameRequester | None:
    """Why a posted write by ``ew`` (its writing access ``acc_w``) is visible to ``er`` with no
    flush, or ``None`` when it may not be (specs/obligations.md section 1, posted rule). Both must
    be driven by one device ``D``, and either

    - the bytes lie in ``D``'s own memory: ``D`` drove the transfer that brought them, so it
      received them before its edge finished (route ``()``); or
    - each transfer's traffic between ``D`` and the device ``M`` holding the bytes can take only
      one route, the same links (``PolicyGraph.leg_route``: its ``via``, or the only simple fabric
      path, when the transfer joins ``D`` and ``M``; the part of its ``via`` between them, for a
      pinned third-party transfer ``D`` drives, or of the only path between its ends when that
      passes through ``D`` and crosses a network link at it, ``PolicyGraph.effective_via``):
      ``D``'s read request then follows its posted
      writes over every link they crossed and cannot pass them (PCIe Base
      Specification, section 2.4.1, transaction ordering rules: a read request does not pass a
      posted request in the same direction; the rule holds along one path, not across two).

    A read that may take another route (a second PCIe function, a parallel link, an inter-socket
    detour) is not ordered after the writes by anything, so it needs a flush."""
    d = ew.device
    if er.device != d:
        return None
    g = ctx.graph
    home = ctx.policy.space(acc_w.footprint.space).device
    if home == d:
        return SameRequester(d, ())
    route_w, route_r = g.leg_route(ew, home), g.leg_route(er, home)
    if route_w is None or route_r is None or set(route_w) != set(route_r) or not in_order(ctx, route_w):
        return None
    return SameRequester(d, route_w)


#: The kinds of device whose memory the producer/consumer model covers: host memory behind a root
#: complex. GPU memory is not one: CUDA reports per device whether it consumes third-party
#: (GPUDirect RDMA) writes in order (``CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING``,
#: ``NONE`` on many systems) and offers ``cuFlushGPUDirectRDMAWrites`` for when it does not.
IN_ORDER_HOMES = frozenset({DeviceKind.CPU})

#: ``(notification, consumer, route)``: see ``notices``.
Notice = tuple[int, int, tuple[str, ...]]


def notices(ctx: Context, ew: Edge) -> tuple[Notice, ...]:
    """The completion entries that may make ``ew``'s posted writes visible (specs/obligations.md
    section 1, posted rule, completion entries): ``(n, c, route)`` where edge ``n`` is an entry
    (its ``notifies`` names some edge: ``ew``, or another work request of a selectively signalled
    queue, or the entry an interrupt follows), is driven by ``ew``'s device ``D``, nothing cancels
    it, and writes into the device ``M`` of ``ew``'s destination, a ``cpu`` (``IN_ORDER_HOMES``);
    ``route`` is the one route of ``ew``'s traffic between ``D`` and ``M`` and of ``n``'s, the same
    links (``PolicyGraph.leg_route``: a ``via``, or the only simple fabric path; not for a
    third-party transfer that pins no route and is not pinned in effect (``effective_via``), whose writes may
    also cross the links between its ends), every link of it of a kind in ``vocab.ENTRY_KINDS``
    (PCIe) and none ``unordered`` (``in_order``), so both
    edges' posted writes cross its links in the same direction, and ``n``'s, issued after ``ew`` finished, cannot pass ``ew``'s
    (PCIe Base Specification, section 2.4.1: posted requests do not pass posted requests; the
    ordering rules exist for this producer/consumer model). Edge ``c``, driven by ``M`` itself
    and cancelled by nothing, names ``n`` in its own ``after`` clause: it waits for the entry in
    its own memory (a poll of the queue, or an interrupt, which comes the same way), so when it
    starts the entry, and so the bytes before it, are there. When ``ew`` is a completion entry
    itself (it ``notifies`` something) and its bytes fit one posted request (``one_request``),
    ``(ew, c, ())`` for each such ``c``: the entry's own bytes arrived whole when ``c`` saw any of
    them, over whichever link (whatever ``M`` is); a bigger entry (a buffer whose last word is
    polled) may be seen in part. Empty when ``ew`` writes
    nothing, or writes into its own device's memory. A read of the bytes that ``c`` is or that is
    ordered after ``c`` needs no flush of a link of ``route`` (of any link, for ``()``) when ``ew``
    is ``n`` or HB-before it (``noticed``)."""
    pol, g = ctx.policy, ctx.graph
    if ew.dst is None:
        return ()
    d, home = ew.device, pol.space(ew.dst.space).device
    if home == d:
        return ()
    index = ctx.__dict__.get("_notices_index")
    if index is None:
        entries: dict[tuple[str, str], list[int]] = {}  # (device, memory's device) -> entries
        waits: dict[str, list[int]] = {}
        for e in pol.edges:
            if e.notifies and e.dst is not None and not ctx.cancellers.get(e.eid):
                entries.setdefault((e.device, pol.space(e.dst.space).device), []).append(e.eid)
            for name in e.after:
                waits.setdefault(name, []).append(e.eid)
        index = ctx.__dict__["_notices_index"] = (entries, waits)

    def waiting(n: Edge) -> list[int]:
        return [c for c in index[1].get(n.name, ()) if pol.edges[c].device == home and not ctx.cancellers.get(c)]

    out: list[Notice] = []
    if ew.notifies and not ctx.cancellers.get(ew.eid) and one_request(pol.device(home).kind, ew.dst):
        out += [(ew.eid, c, ()) for c in waiting(ew)]
    route = g.leg_route(ew, home)
    if route is None or pol.device(home).kind not in IN_ORDER_HOMES or not in_order(ctx, route, ENTRY_KINDS):
        return tuple(out)
    for n in index[0].get((d, home), ()):
        if n != ew.eid and set(g.leg_route(pol.edges[n], home) or ()) == set(route):
            out += [(n, c, route) for c in waiting(pol.edges[n])]
    return tuple(out)


def one_request(home: DeviceKind, fp: Footprint) -> bool:
    """True when the bytes of footprint ``fp`` (its hull ``[lo, hi)``, in bytes) in the memory of a
    device of kind ``home`` lie in one naturally aligned block that a device writes as one posted
    request, whole for any reader that saw part of it (``vocab.ENTRY_BLOCK_HOST`` bytes in host
    memory, ``vocab.ENTRY_BLOCK_OTHER`` elsewhere): a completion entry, or a flag."""
    block = ENTRY_BLOCK_HOST if home in IN_ORDER_HOMES else ENTRY_BLOCK_OTHER
    return fp.hi > fp.lo and fp.lo // block == (fp.hi - 1) // block


def on_link(notes: tuple[Notice, ...], link: str) -> tuple[Notice, ...]:
    """The notices of ``notes`` that cover posted link ``link``: an entry's own bytes (empty
    route), or a route that holds the link."""
    return tuple(x for x in notes if not x[2] or link in x[2])


def noticed(ctx: Context, w: int, r: int, notes: tuple[Notice, ...]) -> Notice | None:
    """The first of ``notes`` (``notices`` of writer ``w``) whose completion entry is ``w`` or
    HB-follows it and whose consumer is reader ``r`` or HB-precedes it: then ``r`` sees ``w``'s
    bytes with no flush of the links of its route. ``None`` when none does."""
    g = ctx.graph
    return next(((n, c, route) for n, c, route in notes
                 if (n == w or g.hb_before(w, n)) and (c == r or g.hb_before(c, r))), None)


def read_back_between(g: PolicyGraph, read_backs: Iterable[tuple[int, SameRequester]], w: int, r: int
                      ) -> tuple[int, SameRequester] | None:
    """The first of ``read_backs`` (``read_backs_of``, on one link's route) HB-after writer ``w``
    and HB-before reader ``r``, other than ``r``: its completion follows the posted writes along
    their one route, as a flush of the link does (FX-ORD-003); ``None`` when none is."""
    return next(((x, rb) for x, rb in read_backs if x != r and g.hb_before(w, x) and g.hb_before(x, r)), None)


def host_read_between(g: PolicyGraph, host_reads: Iterable[HostRead], w: int, r: int) -> HostRead | None:
    """The first of ``host_reads`` (``host_reads_of``, on one link's route) HB-after writer ``w``
    and HB-before reader ``r``, other than ``r``: its completion brought the posted writes into
    host memory, as a flush of the link does (FX-ORD-003); ``None`` when none is."""
    return next(((x, route) for x, route in host_reads if x != r and g.hb_before(w, x) and g.hb_before(x, r)), None)


def read_backs_of(ctx: Context, e: Edge, pw: int) -> tuple[tuple[int, SameRequester], ...]:
    """The read-backs of ``e``'s writing access ``pw``: ``(edge, why)`` for every edge of
    ``e``'s device, other than ``e`` and cancelled by nobody (a cancelled read may never be
    issued: it pushes nothing), that reads from the device of the written bytes, not ``e``'s own,
    with ``e`` along one and the same route of links whose kind orders reads after posted writes
    (``vocab.READ_BACK_KINDS``: PCIe) (``why``: its ``same_requester`` evidence, with the
    route). The edges reading
    from each device are indexed once per context."""
    pol = ctx.policy
    acc = e.accesses()[pw]
    home = pol.space(acc.footprint.space).device
    if home == e.device:
        return ()
    out = []
    for x in readers_from(ctx).get((e.device, home), ()):
        if x == e.eid or ctx.cancellers.get(x):
            continue
        same = same_requester(ctx, e, acc, pol.edges[x])
        if same is not None and same.route and in_order(ctx, same.route, READ_BACK_KINDS):
            out.append((x, same))
    return tuple(out)


def readers_from(ctx: Context) -> dict[tuple[str, str], list[int]]:
    """``(driver, device) -> the edges it drives that read from a space on that device``, in edge
    order; built once per context. Raises nothing."""
    readers: dict[tuple[str, str], list[int]] | None = ctx.__dict__.get("_readers_from")
    if readers is None:
        pol = ctx.policy
        readers = ctx.__dict__["_readers_from"] = {}
        for x in pol.edges:
            for dev in {pol.space(a.footprint.space).device for a in x.accesses() if a.mode is AccessMode.READ}:
                readers.setdefault((x.device, dev), []).append(x.eid)
    return readers


#: ``(edge, route)``: see ``host_reads_of``.
HostRead = tuple[int, tuple[str, ...]]


def host_reads_of(ctx: Context, e: Edge, pw: int) -> tuple[HostRead, ...]:
    """The host reads that may make the posted writes of ``e``'s writing access ``pw`` visible
    (specs/obligations.md section 1, posted rule, host reads): ``(x, route)`` for every edge
    ``x`` other than ``e``, cancelled by nobody (a cancelled read may never be issued), driven by
    the device ``M`` holding the written bytes, a ``cpu`` (``IN_ORDER_HOMES``), that reads from a
    space on ``e``'s device ``D``, where ``route`` is the only simple fabric path from ``D`` to
    ``M`` (``graph.only_path``), every link of it is of a kind in ``vocab.READ_BACK_KINDS`` and
    none is ``unordered`` (``in_order``), and it is the one route of ``e``'s traffic between
    ``D`` and ``M`` (``PolicyGraph.leg_route``: not for a third-party transfer that pins no
    route and is not pinned in effect (``effective_via``), whose writes may also cross the links between its
    ends). ``x``'s completion then returns from ``D`` along ``route``
    behind the posted writes ``D`` issued before its request arrived, and a completion does not
    pass a posted request in the same direction (PCIe Base Specification, section 2.4.1, with
    Relaxed Ordering off, as ``posted`` links are taken to run): the register read of an
    interrupt handler (Linux ``Documentation/PCI/msi-howto.rst``, "Why use MSIs?"). A read of the
    bytes that is HB-after ``x``, where ``x`` is HB-after ``e``, needs no flush of a link of
    ``route``. Raises nothing. Empty when the bytes are in ``D``'s own memory or in no host's, or when ``D`` is
    itself a ``cpu``: its stores may still sit in its write-combining buffers, which another
    agent's read does not drain (only the storing core's fence does), and the cited rule is
    about a device's DMA."""
    pol = ctx.policy
    d, home = e.device, pol.space(e.accesses()[pw].footprint.space).device
    if home == d or pol.device(home).kind not in IN_ORDER_HOMES or pol.device(d).kind is DeviceKind.CPU:
        return ()
    route = ctx.graph.only_path(d, home)
    if route is None or not in_order(ctx, route, READ_BACK_KINDS):
        return ()
    leg = ctx.graph.leg_route(e, home)
    if leg is None or set(leg) != set(route):
        return ()  # an unpinned third-party transfer (not pinned in effect) may also write over the links between its ends
    return tuple((x, route) for x in readers_from(ctx).get((home, d), ()) if x != e.eid and not ctx.cancellers.get(x))
