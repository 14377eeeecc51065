"""The schedule-dependent rules of the execution model (BRIEF sections 2 and 3), on one concrete
schedule: races and non-commuting reductions that overlap, posted writes read (or persisted) without a flush,
stale reads of non-coherent memory and early notifications (``cache_rules``),
ownership (owner or lease at the start, in transit, handoff by the owner, use after release,
final owners), map classes (lost updates, stale guards, early aggregates), lost accumulations and
reads of bytes never written (``defined_rules``).

``violations(world, sched)`` returns every violation the schedule exhibits among its edges,
sorted. Written from the execution model, not from the SMT encoding. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.ir import AccessMode, Edge, Footprint, MapOpKind
from fxverify.replay import cache_rules, defined_rules, intent_rules, lifetime_rules
from fxverify.replay.footprints import shared_byte
from fxverify.replay.world import Schedule, Violation, World, legs
from fxverify.vocab import (AC_OPS, ENTRY_BLOCK_HOST, ENTRY_BLOCK_OTHER, ENTRY_KINDS, POSTED_WRITE_KINDS, READ_BACK_KINDS,
                            ClassKind, DeviceKind, LinkOrder,
                            ReleaseKind)


def violations(w: World, sched: Schedule, only: Code | None = None) -> list[Violation]:
    """Every violation ``sched`` exhibits among its edges (sorted, deterministic); with ``only``,
    the violations of that code alone, from the groups of rules that report it (``_GROUPS``: a
    replay looks for one code, and the others cost it most of its time on a long schedule)."""
    out: list[Violation] = []
    ids = sorted(sched)
    E = w.policy.edges
    if only is None or only in _PAIRS:
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                out += _pair(w, E[a], E[b], sched)
    for reports, rules in _GROUPS:
        if only is None or only in reports:
            out += rules(w, ids, sched)
    return sorted({v for v in out if only is None or v.code == only})


def _overlap(sched: Schedule, a: int, b: int) -> bool:
    return sched[a][0] < sched[b][1] and sched[b][0] < sched[a][1]


def _pair(w: World, ea: Edge, eb: Edge, sched: Schedule) -> list[Violation]:
    out: list[Violation] = []
    if not _overlap(sched, ea.eid, eb.eid):
        return out
    # Two accesses race only while both edges touch bytes: a cancelled transfer stops when its
    # cancel completes. Reductions cannot be cancelled (resolve): they keep their whole interval.
    touching = w.touch_overlap(sched, ea.eid, eb.eid)
    for xa in ea.accesses():
        for xb in eb.accesses():
            if xa.mode is AccessMode.READ and xb.mode is AccessMode.READ:
                continue
            addr = shared_byte(xa.footprint, xb.footprint)
            if addr is None:
                continue
            t = max(sched[ea.eid][0], sched[eb.eid][0])
            if xa.mode is AccessMode.REDUCE and xb.mode is AccessMode.REDUCE and xa.atomic and xb.atomic:
                # Two atomic accumulations interleave per element; they commute only with one
                # associative, commutative operator. A non-atomic one is a load and a store: it
                # conflicts like a write (the other update may land between them and be lost).
                if not (xa.op == xb.op and xa.op in AC_OPS):
                    out.append(Violation(codes.XF_004, (ea.eid, eb.eid), t, addr, "non-commuting reductions overlap"))
            elif touching:
                out.append(Violation(codes.ORD_002, (ea.eid, eb.eid), t, addr, "conflicting accesses overlap"))
    return out


def _posted(wd: World, ids: list[int], sched: Schedule) -> list[Violation]:
    out: list[Violation] = []
    E = wd.policy.edges
    for w in ids:
        ew = E[w]
        carriers = wd.write_carriers(ew)
        # Posted: declared so, or a PCIe link declared `unordered` (its memory writes are still posted)
        posted = [ln.name for ln in wd.policy.links if ln.name in carriers and (
            ln.order is LinkOrder.POSTED or (ln.order is LinkOrder.UNORDERED and ln.kind in POSTED_WRITE_KINDS))]
        if not posted or ew.dst is None:
            continue
        # The reads by the writer's device from the written memory over the write's one route,
        # cancelled by nobody (a cancelled read may never be issued: it pushes nothing).
        backs = [x for x in ids if x != w and not wd.cancelled(x) and _pushes_writes(wd, ew, E[x])]
        # The host's reads of the writer's device, whose completions follow its posted writes.
        host_reads = _host_reads(wd, ew, ids)
        if ew.persists() and wd.policy.space(ew.dst.space).persistent:
            # The persisted bytes reach the memory (the persistence domain) only with a flush of
            # each posted link issued after the write, the writer's own flush clause, or a
            # read-back issued after it.
            pushed = any(sched[w][1] <= sched[x][0] for x in backs)
            for ln in posted:
                if not any(ln in E[x].flushes and (x == w or sched[w][1] <= sched[x][0]) for x in ids) and not pushed:
                    out.append(Violation(codes.ORD_003, (w,), sched[w][1], None, f"persisted with no flush of {ln} after",
                                         rule="persist"))
        for r in ids:
            er = E[r]
            if r == w or sched[w][1] > sched[r][0] or _reads_back_in_order(wd, ew, er):
                continue
            for xr in er.accesses():
                if xr.mode is AccessMode.WRITE:
                    continue
                addr = shared_byte(ew.dst, xr.footprint)
                if addr is None:
                    continue
                for ln in posted:
                    # A flush takes effect when its edge finishes; the writer may flush its own link.
                    # A read-back of the write's one route, or a host read of the writer's device,
                    # started after it pushes it into memory as a flush does, once it finishes.
                    flushed = any(ln in E[x].flushes and (x == w or sched[w][1] <= sched[x][0])
                                  and sched[x][1] <= sched[r][0] for x in ids) or any(
                        sched[w][1] <= sched[x][0] and sched[x][1] <= sched[r][0] for x in backs) or any(
                        x != r and ln in path and sched[w][1] <= sched[x][0] and sched[x][1] <= sched[r][0]
                        for x, path in host_reads)
                    if not flushed and not _seen_in_host_memory(wd, ew, ln, r, sched):
                        out.append(Violation(codes.ORD_003, (w, r), sched[r][0], addr, f"no flush of {ln}"))
    return out


def _seen_in_host_memory(wd: World, ew: Edge, ln: str, r: int, sched: Schedule) -> bool:
    """True when ``ew``'s posted writes over link ``ln`` are in host memory when ``r`` starts
    because a consumer saw a completion entry that followed them: an edge ``n`` of this schedule
    that notifies some edge (an entry), is driven by ``ew``'s device, starts after ``ew``
    finished and writes into the host (a ``cpu``) that holds ``ew``'s bytes, where the traffic of
    both between that device and the host has one route, the same links (``world.legs``), which
    holds ``ln``, all of kind ``pcie`` and none ``unordered``; and an edge ``c`` of that host that waits for ``n`` itself
    (``after n``) and starts no later than ``r``. Neither is cancelled (a cancelled entry may
    never be written). Posted writes of one requester along one path arrive in order (PCIe Base
    Specification, section 2.4.1, the producer/consumer model), so the entry's arrival, which
    ``c`` waited for, brings the bytes before it. GPU memory is not covered: CUDA may let a GPU
    see such writes out of order. When ``ew`` is itself a completion entry (it notifies some
    edge) that lies in one aligned block written as one request (64 bytes in a host's memory, 8
    elsewhere), its own bytes are there once such a ``c`` that waits for it started, in any
    device's memory. Source: specs/obligations.md section 1, posted rule, completion entries."""
    assert ew.dst is not None
    sp = wd.policy.space
    dev, home = ew.device, sp(ew.dst.space).device
    E = wd.policy.edges

    def seen(n: Edge) -> bool:  # a host edge that waits for entry ``n`` started by the read
        return any(n.name in E[c].after and E[c].device == home and not wd.cancelled(c) and sched[c][0] <= sched[r][0]
                   for c in sched)

    if home == dev:
        return False
    block = ENTRY_BLOCK_HOST if wd.policy.device(home).kind is DeviceKind.CPU else ENTRY_BLOCK_OTHER  # one posted request
    lo, hi = ew.dst.lo, ew.dst.hi
    if ew.notifies and not wd.cancelled(ew.eid) and lo // block == (hi - 1) // block and seen(ew):
        return True  # the entry itself: it arrived whole when the host's edge saw it
    routes = legs(wd, ew, home)
    if len(routes) != 1:
        return False  # no one route: several paths, or a third-party copy that may write between its ends
    path = routes[0]
    if ln not in path or wd.policy.device(home).kind is not DeviceKind.CPU or any(
            wd.policy.link(n).order is LinkOrder.UNORDERED or wd.policy.link(n).kind not in ENTRY_KINDS for n in path):
        return False
    for n in sched:
        en = E[n]
        if (n == ew.eid or not en.notifies or en.device != dev or en.dst is None
                or sp(en.dst.space).device != home or wd.cancelled(n) or sched[ew.eid][1] > sched[n][0]
                or legs(wd, en, home) != routes):
            continue
        if seen(en):
            return True
    return False


def _host_reads(wd: World, ew: Edge, ids: list[int]) -> list[tuple[int, frozenset[str]]]:
    """The edges of ``ids`` whose completions bring ``ew``'s posted writes into host memory, each
    with the links of its path: driven by the host (a ``cpu``) that holds ``ew``'s bytes, not
    ``ew``'s own device (which is no ``cpu``: a host's stores are no DMA), cancelled by nobody,
    reading from a space on ``ew``'s device over the only simple path between the two, every link
    of which is of a kind in ``vocab.READ_BACK_KINDS`` and none ``unordered``, and which is the
    one route of ``ew``'s traffic between them (``world.legs``). The completion leaves the writer's device after the writes it
    issued before the request came, along the same path, and does not pass them (PCIe Base
    Specification, section 2.4.1, transaction ordering rules, Relaxed Ordering off; Linux
    ``Documentation/PCI/msi-howto.rst``: an interrupt handler reads a device register so that the
    data is in memory). Source: specs/obligations.md section 1, posted rule, host reads."""
    assert ew.dst is not None
    pol, dev = wd.policy, ew.device
    home = pol.space(ew.dst.space).device
    if home == dev or pol.device(home).kind is not DeviceKind.CPU or pol.device(dev).kind is DeviceKind.CPU:
        return []
    path = wd.one_path(dev, home)
    if path is None or any(pol.link(n).kind not in READ_BACK_KINDS or pol.link(n).order is LinkOrder.UNORDERED
                           for n in path) or legs(wd, ew, home) != [path]:
        return []  # (an unpinned third-party transfer has no legs: it may write between its ends)
    return [(x, path) for x in ids if x != ew.eid and not wd.cancelled(x) and pol.edges[x].device == home and any(
        a.mode is AccessMode.READ and pol.space(a.footprint.space).device == dev for a in pol.edges[x].accesses())]


def _reads_back_in_order(wd: World, ew: Edge, er: Edge) -> bool:
    """True when ``er`` sees ``ew``'s posted write without a flush: one device drives both, and
    either the written bytes are in its own memory (it received them itself) or each transfer's
    traffic between it and the bytes' device has exactly one possible route, the same one
    (``world.legs``), so its read follows its writes over the same links (PCIe: a read does not
    pass posted writes on one path; two routes are not ordered). Source: specs/obligations.md
    section 1, posted rule."""
    dev = ew.device
    if er.device != dev or ew.dst is None:
        return False
    home = wd.policy.space(ew.dst.space).device
    if home == dev:
        return True
    rw, rr = legs(wd, ew, home), legs(wd, er, home)
    return len(rw) == 1 and rw == rr and all(wd.policy.link(n).order is not LinkOrder.UNORDERED for n in rw[0])


def _pushes_writes(wd: World, ew: Edge, ex: Edge) -> bool:
    """True when ``ex`` is a read-back that pushes ``ew``'s posted writes to their memory: ``ex``
    reads from the device of ``ew``'s destination, which is not the writer's own, and both take
    one and the same route from the same device (``_reads_back_in_order``), every link of it of a
    kind in ``vocab.READ_BACK_KINDS``: the read request cannot pass the writes on that path (PCIe
    Base Specification, section 2.4.1), so its completion returns after they arrived."""
    assert ew.dst is not None
    home = wd.policy.space(ew.dst.space).device
    return (home != ew.device and _reads_back_in_order(wd, ew, ex)
            and all(wd.policy.link(n).kind in READ_BACK_KINDS for route in legs(wd, ew, home) for n in route)
            and any(a.mode is AccessMode.READ and wd.policy.space(a.footprint.space).device == home for a in ex.accesses()))


def _ownership(w: World, ids: list[int], sched: Schedule) -> list[Violation]:
    out: list[Violation] = []
    E = w.policy.edges
    owners = w.owner_timeline(ids, sched)  # owners_at, indexed once for every question below
    for e in ids:
        ee = E[e]
        touched = w.governing_regions(ee)
        lo, hi = w.touch(e, sched)
        for r, writes in touched.items():
            # an access cancelled before it starts touches no byte (``World.touch``): no owner
            # needed, and it overlaps no handoff; a release or revoke of the region is still
            # checked at the edge's start (the loop below)
            if hi <= lo or any(ho.region == r and ho.src == ee.device for ho in ee.handoffs):
                continue
            s = sched[e][0]
            if ee.device not in owners.at(r, s):
                # A lease (of the region or of one containing it) lives from its edge's end until a
                # handoff of the region, not finished when the lease's edge began, starts (its own
                # edge's handoff included: that lease is void), or until a revoke of the region (or
                # of one containing it) from the lessee, not finished when the lease's edge began,
                # starts (on any edge, the lease's own included). A lease of a region containing
                # it lends it only if the lease's grantor (its edge's device) owns it when that edge starts.
                leased = (not writes) and any(
                    any(ls.region in w.movers(r) and ls.device == ee.device for ls in E[g].leases) and sched[g][1] <= s
                    and (any(ls.region == r and ls.device == ee.device for ls in E[g].leases)
                         or E[g].device in owners.at(r, sched[g][0]))
                    and not any(w.owner_set(E[h], r) is not None and sched[h][0] <= s and sched[h][1] > sched[g][0]
                                for h in ids)
                    and not any(any(rv.region in w.movers(r) and rv.device == ee.device for rv in E[x].revokes)
                                and sched[x][0] <= s and sched[x][1] > sched[g][0] for x in ids)
                    for g in ids)
                if not leased:
                    out.append(Violation(codes.OWN_001, (e,), s, None, f"{ee.device} does not own {r}"))
            for h in ids:
                if h != e and w.handed_to(E[h], r) is not None and w.touch_overlap(sched, e, h):
                    out.append(Violation(codes.OWN_002, (e, h), max(sched[e][0], sched[h][0]), None, r))
        for r in sorted({rel.region for rel in ee.releases
                         if not (rel.kind is ReleaseKind.UNLOCK and w.policy.space(w.policy.region(rel.region).space).device == ee.device)}
                        | {rv.region for rv in ee.revokes}):
            # Only the owner may release a region (a lease is not enough); the memory's own device
            # may unlock (unpin) it. Only the owner may revoke a lease of it.
            if any(ho.region == r and ho.src == ee.device for ho in ee.handoffs):
                continue
            if ee.device not in owners.at(r, sched[e][0]):
                out.append(Violation(codes.OWN_001, (e,), sched[e][0], None, f"{ee.device} does not own {r}"))
    for g in ids:
        for ls in E[g].leases:
            if E[g].device not in owners.at(ls.region, sched[g][0]):
                out.append(Violation(codes.OWN_003, (g,), sched[g][0], None, f"lease of {ls.region}"))
    for h in ids:
        for ho in E[h].handoffs:
            s = sched[h][0]
            bad = ho.src != E[h].device or ho.src not in owners.at(ho.region, s) or any(
                o != h and _overlap(sched, h, o) and w.handed_to(E[o], ho.region) is not None for o in ids)
            if bad:
                out.append(Violation(codes.OWN_003, (h,), s, None, ho.region))
    reused = w.lifetimes()  # their releases follow lifetime_rules
    for r in ids:
        for rel in E[r].releases:
            if rel.region in reused:
                continue
            if sum(1 for x in E[r].releases if x.region == rel.region) > 1:
                out.append(Violation(codes.OWN_004, (r, r), sched[r][0], None, f"{rel.region} released twice"))
            for u in ids:
                if u == r:
                    continue
                eu = E[u]
                reg = w.policy.region(rel.region)
                whole = reg.whole()
                uses = {x.region for x in eu.leases} | {x.region for x in eu.releases} | {x.region for x in eu.revokes}
                handed = w.handed_to(eu, rel.region) is not None  # its own handoff or an enclosing one
                touches = any(shared_byte(a.footprint, whole) is not None for a in eu.accesses())
                lo, hi = w.touch(u, sched)  # a cancelled use ends when its cancel completes
                if (touches or handed or rel.region in uses) and lo < hi and hi > sched[r][0]:
                    out.append(Violation(codes.OWN_004, (r, u), sched[r][0], None, rel.region))
    declared = {fo.region: fo.device for fo in w.policy.final_owners}
    for region, dev in declared.items():
        finals = owners.at(region, float("inf"))
        if any(d != dev for d in finals):
            out.append(Violation(codes.OWN_005, (), None, None, region))
    return out


def _maps(wd: World, ids: list[int], sched: Schedule) -> list[Violation]:
    out: list[Violation] = []
    E = wd.policy.edges
    # A const map's writes never take effect (FX-MAP-005, static): no lost update, no stale guard.
    ops = [(e, op) for e in ids for op in E[e].map_ops if wd.policy.map(op.map).cls.kind is not ClassKind.CONST]
    for i, (a, oa) in enumerate(ops):
        decl = wd.policy.map(oa.map)
        for b, ob in ops[i + 1:]:
            if a == b or oa.map != ob.map or oa.key != ob.key:
                continue
            both_write = oa.kind in (MapOpKind.WRITE, MapOpKind.UPDATE) and ob.kind in (MapOpKind.WRITE, MapOpKind.UPDATE)
            commute = oa.kind is MapOpKind.UPDATE and ob.kind is MapOpKind.UPDATE and decl.merge in AC_OPS
            slots = decl.cls.kind is ClassKind.PER_DEVICE and E[a].device != E[b].device
            if both_write and not commute and not slots and _overlap(sched, a, b):
                out.append(Violation(codes.MAP_002, (a, b), max(sched[a][0], sched[b][0]), None, oa.map))
    for g, og in ops:
        decl = wd.policy.map(og.map)
        for w, ow in ops:
            if w == g or ow.map != og.map or ow.key != og.key or ow.kind not in (MapOpKind.WRITE, MapOpKind.UPDATE):
                continue
            sg, (sw, fw) = sched[g][0], sched[w]
            if og.kind is MapOpKind.GUARD and decl.cls.kind is ClassKind.EVENTUAL and sw < sg:
                out.append(Violation(codes.MAP_003, (g, w), sg, None, og.map))
            if og.kind is MapOpKind.GUARD and decl.cls.kind is ClassKind.CAUSAL and (
                    sw < sg < fw or (fw <= sg and not wd.hb(w, g))):
                out.append(Violation(codes.MAP_003, (g, w), sg, None, og.map))
            # Linearizable, local and per-device reads see a write once it has finished in real
            # time: a guard that runs while the write is in flight may miss it (per device: only
            # the guard's own slot counts).
            if og.kind is MapOpKind.GUARD and decl.cls.kind in (ClassKind.LINEARIZABLE, ClassKind.LOCAL) and sw < sg < fw:
                out.append(Violation(codes.MAP_003, (g, w), sg, None, og.map))
            if (og.kind is MapOpKind.GUARD and decl.cls.kind is ClassKind.PER_DEVICE and E[g].device == E[w].device
                    and sw < sg < fw):
                out.append(Violation(codes.MAP_003, (g, w), sg, None, og.map))
            if og.kind is MapOpKind.AGGREGATE and decl.cls.kind is ClassKind.PER_DEVICE and fw > sg:
                out.append(Violation(codes.MAP_004, (g, w), sg, None, og.map))
    return out


def _accumulation(wd: World, ids: list[int], sched: Schedule) -> list[Violation]:
    out: list[Violation] = []
    E = wd.policy.edges
    for r in ids:
        for xr in E[r].accesses():
            if xr.mode is not AccessMode.REDUCE:
                continue
            for w in ids:
                if w == r or sched[r][1] > sched[w][0]:
                    continue
                for xw in E[w].accesses():
                    if xw.mode is not AccessMode.WRITE:
                        continue
                    addr = _unread_shared(wd, xr.footprint, xw.footprint, r, w, ids, sched)
                    if addr is not None:
                        out.append(Violation(codes.XF_004, (r, w), sched[w][0], addr, "accumulated bytes overwritten"))
    return out


def _unread_shared(wd: World, fr: Footprint, fw: Footprint, r: int, w: int, ids: list[int], sched: Schedule) -> int | None:
    """Lowest byte in both footprints that no edge reads between ``r`` finishing and ``w``
    starting (a cancelled read may stop before it read anything: it reads nothing here)."""
    E = wd.policy.edges
    readers = [x.footprint for y in ids if y != r and not wd.cancelled(y) and sched[r][1] <= sched[y][0]
               and sched[y][1] <= sched[w][0] for x in E[y].accesses() if x.mode is AccessMode.READ]
    return intent_rules.first_uncovered(fr, fw, readers)


#: The codes each group of rules above can report. ``violations`` asked for one code runs only
#: the groups that report it; tests/test_simulate.py checks, over the corpus's witnesses and
#: random schedules, that the violations of each code are the same as when every group runs.
_PAIRS = frozenset({codes.ORD_002, codes.XF_004})
_GROUPS: tuple[tuple[frozenset[Code], Callable[[World, list[int], Schedule], list[Violation]]], ...] = (
    (frozenset({codes.ORD_003}), _posted),
    (frozenset({codes.ORD_005, codes.ORD_006}), cache_rules.violations),
    (frozenset({codes.OWN_001, codes.OWN_002, codes.OWN_003, codes.OWN_004, codes.OWN_005}),
     _ownership),
    (frozenset({codes.OWN_004, codes.OWN_006}), lifetime_rules.violations),
    (frozenset({codes.MAP_002, codes.MAP_003, codes.MAP_004}), _maps),
    (frozenset({codes.XF_004}), _accumulation),
    (frozenset({codes.INIT_001}), defined_rules.violations),
    (frozenset({codes.XF_002, codes.XF_004}), intent_rules.violations),
)
