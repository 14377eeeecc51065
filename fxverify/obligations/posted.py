"""FX-ORD-003: a write over a posted link read (``PostedRead``) or persisted (``PostedPersist``)
before a flush of the link makes it visible (BRIEF sections 2 and 3; specs/obligations.md gives each query). Like races, the reads are found among pairs of accesses whose bounding intervals
overlap (a sweep per address space, ``pairs``), then pruned by HB reachability before any pair
goes to the solver; persisted posted writes need no pair (one obligation per writing access and link). With a parametric prover, the reads of a pair of declarations that every chain through a
flush orders are proved at once (``hb_flushes``). Takes a ``Context``; yields ``Obligation``
objects and ``ProvedTogether`` runs.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence

import networkx as nx

from fxverify.certificate import (Evidence, FlushedAfter, FlushedBetween, HostReadBetween, Notified, ReadBackAfter,
                                  ReadBackBetween, SameRequester)
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Flush, Hint, Via, after, flush_edge, hint
from fxverify.graph import PolicyGraph, is_posted
from fxverify.ir import AccessMode, Edge, Link
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.pairs import pairs_where
from fxverify.obligations.visibility import (IN_ORDER_HOMES, HostRead, Notice, host_read_between, host_reads_of, noticed,
                                             notices, on_link, read_back_between, read_backs_of, readers_from,
                                             same_requester)
from fxverify.obligations.encode import finish, member, projected_schedule, start, time_objectives
from fxverify.obligations.hb_flushes import flushed_for
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import and_, int_var, not_, or_
from fxverify.vocab import ENTRY_KINDS, READ_BACK_KINDS, DeviceKind, LinkOrder


class PostedRead(Obligation):
    """FX-ORD-003: reader ``r`` of bytes that ``w`` wrote over posted link ``link`` is HB-after a
    flush of that link that is HB-after ``w``, or driven by the writer's device along the write's
    one route (``same``: ``same_requester``), or HB-after (or itself) a consumer of a completion
    entry written after ``w`` along ``w``'s one path into host memory (``notes``: the ``notices``
    whose route holds ``link``), or HB-after a read-back HB-after ``w`` (``read_backs``: a read
    by ``w``'s device from the bytes' device over the one route both take, which holds ``link``;
    its completion follows the posted writes, PCIe Base Specification, section 2.4.1, as for a
    persisted write), or HB-after a host read HB-after ``w`` (``host_reads``: a read of ``w``'s
    device's memory by the host that holds the bytes over the only path between the two, which
    holds ``link``: ``host_reads_of``). Edges: ``w``, ``r``, the flushes, the notices' edges, the
    read-backs, then the host reads."""

    code = codes.ORD_003

    def __init__(self, ctx: Context, w: int, pw: int, r: int, pr: int, link: str, flushes: tuple[int, ...],
                 same: SameRequester | None = None, notes: tuple[Notice, ...] = (),
                 read_backs: tuple[tuple[int, SameRequester], ...] = (), host_reads: tuple[HostRead, ...] = ()) -> None:
        ew, er = ctx.edge(w), ctx.edge(r)
        self.acc_w, self.acc_r = ew.accesses()[pw], er.accesses()[pr]
        self.link = link
        self.flushes = flushes
        self.same = same
        self.notes = notes
        self.read_backs = tuple((x, rb) for x, rb in read_backs if x not in (w, r) and x not in flushes)
        self.host_reads = tuple((x, route) for x, route in host_reads if x not in (w, r) and x not in flushes)
        others = tuple(dict.fromkeys(x for x in flushes + tuple(y for n, c, _ in notes for y in (n, c))
                                     + tuple(x for x, _ in self.read_backs) + tuple(x for x, _ in self.host_reads)
                                     if x not in (w, r)))
        super().__init__(ctx, (w, r) + others, f"{self.code}:{ew.name}#{pw}|{er.name}#{pr}|{link}", er.span,
                         (Label(ew.span, f"`{ew.name}` writes over posted link `{link}`"),))

    def prove_fast(self) -> str | None:
        g = self.ctx.graph
        w, r = self.edges[:2]
        if self.same is not None:
            return "same-requester"
        if w in self.flushes and g.hb_before(w, r):
            return "hb-reachability"  # the writer flushes the link itself when it finishes
        if any(g.hb_before(w, fl) and g.hb_before(fl, r) for fl in self._between()):
            return "hb-reachability"
        if self._read_back_between() is not None or self._host_read_between() is not None:
            return "hb-reachability"
        if self._noticed() is not None:
            return "producer-consumer"
        return None

    def _noticed(self) -> Notice | None:
        w, r = self.edges[:2]
        return noticed(self.ctx, w, r, self.notes)

    def _read_back_between(self) -> tuple[int, SameRequester] | None:
        """``read_back_between`` the writer and the reader, of ``read_backs``."""
        w, r = self.edges[:2]
        return read_back_between(self.ctx.graph, self.read_backs, w, r)

    def _host_read_between(self) -> HostRead | None:
        """``host_read_between`` the writer and the reader, of ``host_reads``."""
        w, r = self.edges[:2]
        return host_read_between(self.ctx.graph, self.host_reads, w, r)

    def _between(self) -> list[int]:
        """The flushes of ``flushes`` ranked between the writer and the reader in the graph's
        linear extension of HB, by rank: only they can be HB-after the one and HB-before the
        other (a link that every layer flushes has flushes in the number of layers)."""
        g = self.ctx.graph
        w, r = self.edges[:2]
        cache = self.ctx.__dict__.setdefault("_flushes_by_rank", {})
        ranked = cache.get(self.flushes)
        if ranked is None:
            order = sorted(self.flushes, key=g.rank)
            ranked = cache[self.flushes] = ([g.rank(x) for x in order], order)
        ranks, order = ranked
        return order[bisect.bisect_right(ranks, g.rank(w)):bisect.bisect_left(ranks, g.rank(r))]

    def evidence(self) -> Evidence | None:
        w, r = self.edges[:2]
        if self.same is not None:
            return self.same
        if w in self.flushes:
            p = self.path(w, r)
            if p is not None:
                return FlushedBetween(self.link, w, None, p)
        for fl in self._between():
            before, after = self.path(w, fl), self.path(fl, r)
            if before is not None and after is not None:
                return FlushedBetween(self.link, fl, before, after)
        back = self._read_back_between()
        if back is not None:
            x, rb = back
            before, after = self.path(w, x), self.path(x, r)
            if before is not None and after is not None:
                return ReadBackBetween(self.link, x, rb.route, before, after)
        host = self._host_read_between()
        if host is not None:
            x, route = host
            before, after = self.path(w, x), self.path(x, r)
            if before is not None and after is not None:
                return HostReadBetween(self.link, x, route, before, after)
        noticed = self._noticed()
        if noticed is not None:
            n, c, route = noticed
            before, after = (None if n == w else self.path(w, n)), (None if c == r else self.path(c, r))
            if (n == w or before is not None) and (c == r or after is not None):
                return Notified(n, c, route, before, after)
        return None

    def encode(self) -> Query:
        w, r = self.edges[:2]
        addr = int_var("addr")
        mw, kw = member(self.acc_w.footprint, addr, "w")
        mr, kr = member(self.acc_r.footprint, addr, "r")
        self._probes = (addr, kw, kr)
        cons = projected_schedule(self.ctx.graph, self.edges)
        cons += [("shared_byte_w", mw), ("shared_byte_r", mr), ("read_after_write", finish(w) <= start(r))]
        if self.same is not None:
            # The one device drives both along one route (or received the bytes itself): the
            # read cannot pass the writes, whatever the schedule.
            cons.append(("same_requester_route", or_()))
        for fl in self.flushes:
            # A flush clause takes effect when its edge finishes; on the writer itself that is
            # right after the write.
            flushed = finish(w) <= start(r) if fl == w else and_(finish(w) <= start(fl), finish(fl) <= start(r))
            cons.append((f"not_flushed_by_{fl}", not_(flushed)))
        for x, _rb in self.read_backs:
            # A read-back pushes the posted writes issued before it along their one route: those
            # of a write finished before it starts are in memory once it finishes.
            cons.append((f"not_read_back_by_{x}", not_(and_(finish(w) <= start(x), finish(x) <= start(r)))))
        for x, _route in self.host_reads:
            # The host's read of the writer's device completes along the writes' one path behind
            # them: those of a write finished before it starts are in host memory once it finishes.
            cons.append((f"not_pushed_by_host_read_{x}", not_(and_(finish(w) <= start(x), finish(x) <= start(r)))))
        for n, c, _route in self.notes:
            # The completion entry follows the write along its one path (or is the write); once
            # its consumer starts, both are in the host's memory.
            seen = start(c) <= start(r) if n == w else and_(finish(w) <= start(n), start(c) <= start(r))
            cons.append((f"not_noticed_by_{n}_at_{c}", not_(seen)))
        return Query(self.key, tuple(cons), minimize=(addr, kw, kr, *time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        w, r = self.edges[:2]
        addr, kw, kr = self._probes
        return Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.acc_w.footprint.space,
                       elements={w: result.int(kw), r: result.int(kr)}, values={"link": self.link})

    def culprits(self) -> tuple[int, ...]:
        """The writer and the reader; the flushes only explain (they are not where the rule breaks)."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        a, b = self.edges[:2]
        return (f"`{self.name(b)}` reads bytes that `{self.name(a)}` wrote over posted link `{self.link}` "
                f"with no flush in between")

    def _same_device_reader(self) -> bool:
        """True when the writer's own device reads the bytes back (over a route that may differ)."""
        a, b = self.edges[:2]
        return self.ctx.edge(a).device == self.ctx.edge(b).device

    def _other_route(self) -> str:
        """Why the same device's read may not follow the write's path (``same_requester`` said
        no): which of the two may take more than one route, or that they take different ones."""
        g = self.ctx.graph
        home = self.ctx.policy.space(self.acc_w.footprint.space).device
        loose = [e for e in map(self.ctx.edge, self.edges[:2]) if g.leg_route(e, home) is None]
        for e in loose:
            if g.writes_between_ends(e):
                return (f"`{e.name}` is a third-party transfer that pins no route (`via`), so its traffic "
                        f"with `{home}` may take more than one route")
        if loose:
            return " and ".join(f"`{e.name}`" for e in loose) + (" may each" if len(loose) > 1 else " may") + (
                f" take more than one route between its driver and `{home}`")
        route = g.leg_route(self.ctx.edge(self.edges[0]), home) or ()
        unordered = [n for n in route if self.ctx.policy.link(n).order is LinkOrder.UNORDERED]
        if unordered and set(route) == set(g.leg_route(self.ctx.edge(self.edges[1]), home) or ()):
            return f"their one route holds `{unordered[0]}`, which is `unordered` (it keeps no order)"
        return "the two take different routes"

    def _host_read_off_path(self) -> str | None:
        """Why the host's read of the writer's device between the writer and the reader (the
        first, in edge order, that nothing cancels) pushes nothing (``host_reads_of`` gave none
        on this link): the writer is a host, several paths join the two, their path holds a link
        that is not PCIe or is ``unordered``, the write is a third-party transfer that pins no
        route, its route misses its driver, or the link is off their path. ``None`` when there is no such read."""
        ctx, (a, b) = self.ctx, self.edges[:2]
        d, home = ctx.edge(a).device, ctx.policy.space(self.acc_w.footprint.space).device
        if self.host_reads or home == d or ctx.policy.device(home).kind not in IN_ORDER_HOMES:
            return None
        g = ctx.graph
        x = next((x for x in readers_from(ctx).get((home, d), ()) if x not in (a, b) and not ctx.cancellers.get(x)
                  and g.hb_before(a, x) and g.hb_before(x, b)), None)
        if x is None:
            return None
        read = f"a read of `{d}` by the host (`{ctx.edge(x).name}`)"
        if ctx.policy.device(d).kind is DeviceKind.CPU:
            return (f"{read} pushes a device's DMA, not the stores of `{d}`, itself a host: another agent's read does "
                    "not drain its write buffers")
        lead = f"{read} keeps the write ahead of it only along their one path of PCIe links, and "
        route = g.only_path(d, home)
        if route is None:
            return lead + f"`{home}` reaches `{d}` by more than one path"
        slow = [n for n in route if ctx.policy.link(n).kind not in READ_BACK_KINDS]
        if slow:
            return lead + f"their path holds `{slow[0]}`, which is not PCIe"
        loose = [n for n in route if ctx.policy.link(n).order is LinkOrder.UNORDERED]
        if loose:
            return lead + f"their path holds `{loose[0]}`, which is `unordered`"
        if g.writes_between_ends(ctx.edge(a)):
            return lead + (f"`{ctx.edge(a).name}` is a third-party transfer that pins no route (`via`), so its "
                           "writes may also cross the links between its ends")
        if ctx.edge(a).via is not None and set(g.leg_route(ctx.edge(a), home) or ()) != set(route):
            return lead + f"`{ctx.edge(a).name}` is pinned (`via`) to another route"
        return lead + f"the write may cross `{self.link}`, off that path"

    def _entry_off_route(self) -> str | None:
        """Why a completion entry that the reader waits for counts for nothing here (``notices``
        gave none on this link): the first edge ``n``, in edge order, driven by the writer's
        device, that ``notifies`` something, writes into the memory holding the bytes, is the
        writer or HB-after it, and that a host edge waits for (names in its ``after``) which is
        the reader or HB-before it, none cancelled. Names what fails: a home that is no host,
        the writer's or the entry's route, or a link of it. ``None`` when there is no such entry
        or it does count (on another link)."""
        ctx, (a, b) = self.ctx, self.edges[:2]
        pol, g, ew = ctx.policy, ctx.graph, ctx.edge(a)
        d, home = ew.device, pol.space(self.acc_w.footprint.space).device
        if self.notes or home == d:
            return None

        def waited(n: Edge) -> bool:
            return any(n.name in c.after and c.device == home and not ctx.cancellers.get(c.eid)
                       and (c.eid == b or g.hb_before(c.eid, b)) for c in pol.edges)

        n = next((n for n in pol.edges if n.notifies and n.device == d and n.dst is not None
                  and pol.space(n.dst.space).device == home and not ctx.cancellers.get(n.eid)
                  and (n.eid == a or g.hb_before(a, n.eid)) and waited(n)), None)
        if n is None:
            return None
        entry = f"the completion entry `{n.name}` that the reader waits for"
        if n.eid == a:
            return f"{entry} is the write itself, and its bytes span more than one posted request"
        if pol.device(home).kind not in IN_ORDER_HOMES:
            return f"{entry} lands in `{home}`, which is no host: it is not taken to see posted writes in order"
        route, theirs = g.leg_route(ew, home), g.leg_route(n, home)
        if route is None and g.writes_between_ends(ew):
            return (f"{entry} need not follow `{ew.name}`, a third-party transfer that pins no route (`via`): its writes "
                    "may also cross the links between its ends")
        if route is None:
            return f"{entry} cannot follow `{ew.name}`: the write may take more than one route between `{d}` and `{home}`"
        if theirs is None or set(theirs) != set(route):
            return f"{entry} takes another route from `{d}` to `{home}` than `{ew.name}`, and may arrive first"
        slow = [x for x in route if pol.link(x).kind not in ENTRY_KINDS]
        if slow:
            return f"{entry} follows the write over `{slow[0]}`, which is not PCIe: no order between the two is promised"
        loose = [x for x in route if pol.link(x).order is LinkOrder.UNORDERED]
        if loose:
            return f"{entry} follows the write over `{loose[0]}`, which is `unordered`"
        return None

    def why(self, w: Witness) -> str:
        if self._same_device_reader():
            return ("a posted write completes at the sender before it is visible; a read by the same device is "
                    f"ordered after it only along the same path (PCIe ordering), and {self._other_route()}")
        off_path = self._host_read_off_path()
        if off_path is not None:
            return f"a posted write completes at the sender before it is visible; {off_path}"
        if self.read_backs:
            return ("a posted write completes at the sender before it is visible; only a flush of the link, or a read "
                    "by the writer's device along the write's one route after it (a read-back), makes it visible")
        if self.host_reads:
            return ("a posted write completes at the sender before it is visible; only a flush of the link, or a read "
                    "of the writer's device by the host after it along their one path of PCIe links (its completion "
                    "cannot pass the write), makes it visible")
        if self.notes:
            return ("a posted write completes at the sender before it is visible; only a flush of the link, or a "
                    "completion entry written after it along the same path and waited for by the reader (or by an "
                    "edge before it), makes it visible")
        entry = self._entry_off_route()
        if entry is not None:
            return f"a posted write completes at the sender before it is visible; {entry}"
        return "a posted write completes at the sender before it is visible; only a flush of the link makes it visible"

    def fix(self, w: Witness) -> Hint:
        """The reader waiting for a consumer of a completion entry, or for a read-back or a host
        read, that follows the write (when there is one); a flush edge between writer and reader; or the writer flushing the link
        itself (then ordered before the reader); or a route without posted links."""
        a, b = self.edges[:2]
        ea, eb = self.ctx.edge(a), self.ctx.edge(b)
        own = (Flush(ea.name, self.link),) + (() if self.ctx.graph.hb_before(a, b) else (after(eb.name, ea.name),))
        route = route_avoiding(self.ctx, ea, LinkOrder.POSTED)
        # A read-back by the writer's device may instead follow the write's one route (the
        # same-requester rule), pinned with `via` on the read.
        same_route = pin_like(self.ctx.graph, ea, eb) if self._same_device_reader() else None
        # A completion entry that followed the write into host memory: wait for its consumer
        # (first: it is how the bytes were meant to become visible), or read from the consumer.
        waits = [after(eb.name, self.ctx.edge(c).name) for n, c, _ in self.notes
                 if c != b and (n == a or self.ctx.graph.hb_before(a, n)) and not self.ctx.graph.hb_before(b, c)]
        # A read-back or a host read that follows the write: wait for it, as for a flush.
        waits += [after(eb.name, self.ctx.edge(x).name) for x, _rb in self.read_backs + self.host_reads
                  if self.ctx.graph.hb_before(a, x) and not self.ctx.graph.hb_before(b, x)]
        return hint(*waits, flush_edge(self.ctx.policy, self.link, ea, eb), own, same_route,
                    Via(ea.name, tuple(route.split(", "))) if route else None)


#: The key body prefix of ``PostedPersist`` (``FX-ORD-003:persist:<w>#<pos>|<link>``).
PERSIST = "persist:"


class PostedPersist(Obligation):
    """FX-ORD-003 for a persisted write: edge ``w`` whose transforms include ``persist`` writes its
    destination, in a ``persistent`` space, over posted link ``link``; the bytes reach the
    persistence domain only once a flush of the link that starts after ``w`` finished has
    finished, or when ``w`` flushes the link itself (BRIEF, links: "only a flush makes it
    visible"; the persistence domain of a CXL or PCIe persistent memory is the device, which a
    posted write has not reached when it completes at the sender). A read-back acts as a flush:
    a read by ``w``'s device from the bytes' device over the one route both can take
    (``read_backs``: the edge and its ``SameRequester`` route) that starts after ``w`` finished
    completes only once the posted writes ahead of it arrived (PCIe Base Specification, section
    2.4.1; the read-after-write flush of persistent memory). Edges: ``w``, then the other edges
    that flush ``link``, then the read-backs."""

    code = codes.ORD_003

    def __init__(self, ctx: Context, w: int, pw: int, link: str, flushes: tuple[int, ...],
                 read_backs: tuple[tuple[int, SameRequester], ...] = ()) -> None:
        ew = ctx.edge(w)
        self.acc_w = ew.accesses()[pw]
        self.link = link
        self.flushes = flushes
        self.read_backs = tuple((x, same) for x, same in read_backs if x not in flushes)
        super().__init__(ctx, (w,) + tuple(x for x in flushes if x != w) + tuple(x for x, _ in self.read_backs),
                         f"{self.code}:{PERSIST}{ew.name}#{pw}|{link}", ew.span, ())

    def prove_fast(self) -> str | None:
        return "hb-reachability" if self.evidence() is not None else None

    def evidence(self) -> Evidence | None:
        w = self.edges[0]
        if w in self.flushes:
            return FlushedAfter(self.link, w, None)
        g = self.ctx.graph
        for fl in self.flushes:
            if g.rank(fl) > g.rank(w) and g.hb_before(w, fl):
                p = self.path(w, fl)
                if p is not None:
                    return FlushedAfter(self.link, fl, p)
        for x, same in self.read_backs:
            if g.rank(x) > g.rank(w) and g.hb_before(w, x):
                p = self.path(w, x)
                if p is not None:
                    return ReadBackAfter(self.link, x, same.route, p)
        return None

    def encode(self) -> Query:
        w = self.edges[0]
        cons = projected_schedule(self.ctx.graph, self.edges)
        for fl in self.flushes:
            # A flush clause takes effect when its edge finishes: the writer's own flush always
            # follows its write, another edge's only when it starts after the write finished.
            cons.append((f"not_flushed_by_{fl}", or_() if fl == w else not_(finish(w) <= start(fl))))
        for x, _same in self.read_backs:
            # A read-back pushes the posted writes issued before it: those of a write finished
            # before the read starts.
            cons.append((f"not_read_back_by_{x}", not_(finish(w) <= start(x))))
        return Query(self.key, tuple(cons), minimize=time_objectives(self.edges), header=self.header())

    def witness(self, result: Result) -> Witness:
        return Witness(schedule=self.schedule_of(result), space=self.acc_w.footprint.space,
                       values={"link": self.link, "persisted": self.acc_w.footprint.space})

    def culprits(self) -> tuple[int, ...]:
        """The persisting writer; the flushes only explain (they all may run before it)."""
        return self.edges[:1]

    def violating(self, w: Witness) -> Step | None:
        """The writer's end: from there on no flush of the link follows (the default, its start,
        would mark the copy as the problem rather than what does not come after it)."""
        return Step(self.edges[0], "end")

    def message(self, w: Witness) -> str:
        return (f"`{self.name(self.edges[0])}` persists bytes over posted link `{self.link}`, and no flush of "
                f"`{self.link}` follows it")

    def why(self, w: Witness) -> str:
        return ("a posted write completes at the sender before it reaches the memory; the bytes are durable only once "
                "a flush of the link issued after the write has finished, or a read of that memory the writer's device "
                "issued after it along the same single route of PCIe links, and that nothing cancels, has completed")

    def fix(self, w: Witness) -> Hint:
        """The writer flushing the link itself; or a read-back that already follows the write,
        pinned to the write's one route (``_read_back_pin``); or a route without posted links."""
        ea = self.ctx.edge(self.edges[0])
        route = route_avoiding(self.ctx, ea, LinkOrder.POSTED)
        return hint((Flush(ea.name, self.link),), self._read_back_pin(ea),
                    Via(ea.name, tuple(route.split(", "))) if route else None)

    def _read_back_pin(self, ea: Edge) -> Via | None:
        """``via`` on the first edge (in HB rank) of the writer's device that follows the write in
        HB, reads from the bytes' device and pins no route, making it take the write's one route
        (which crosses the link): it then acts as a read-back. ``None`` when there is none, or
        the write may take several routes."""
        g, pol = self.ctx.graph, self.ctx.policy
        one = g.single_route(ea)
        home = pol.space(self.acc_w.footprint.space).device
        if one is None or self.link not in one or home == ea.device:
            return None
        for x in sorted((e for e in pol.edges if e.device == ea.device and e.via is None and e.eid != ea.eid
                         and not self.ctx.cancellers.get(e.eid)),
                        key=lambda e: g.rank(e.eid)):
            pin = pin_like(g, ea, x)
            if pin is not None and g.hb_before(ea.eid, x.eid) and any(
                    a.mode is AccessMode.READ and pol.space(a.footprint.space).device == home for a in x.accesses()):
                return pin
        return None


def pin_like(g: PolicyGraph, ea: Edge, ex: Edge) -> Via | None:
    """``via`` on ``ex`` giving it ``ea``'s one route (``single_route``), from ``ex``'s source, when
    both join the same two devices; ``None`` when ``ea`` may take several routes, or its only path
    misses its driver (FX-TYP-006). For hints only (each is checked again)."""
    one, ends_a, ends_x = g.single_route(ea), g.transfer_endpoints(ea), g.transfer_endpoints(ex)
    if one is None or set(ends_a) != set(ends_x) or not (ea.device in ends_a or ea.via is not None):
        return None
    return Via(ex.name, one if ends_x[0] == ends_a[0] else one[::-1])


def route_avoiding(ctx: Context, e: Edge, avoid: LinkOrder | None) -> str:
    """A `via` route for ``e``'s transfer over links that are not ``avoid`` (``None``: over
    ``ordered`` links only), fewest hops on each side of the driver when that is at neither end
    (a third-party transfer's route runs through it: FX-TYP-006), as written in a policy; ``""``
    when the edge pins a route already or there is no such simple path. For hints only: it never
    decides a verdict."""
    if e.via is not None:
        return ""
    src, dst = ctx.graph.transfer_endpoints(e)
    kind = f"route-not-{avoid.value}" if avoid else "route-ordered"
    # Avoiding posted links avoids every link whose writes are posted (``is_posted``: a `pcie`
    # link declared `unordered` too), else the hint would not discharge the finding.
    g = ctx.graph.link_graph(kind, (lambda ln: not is_posted(ln)) if avoid is LinkOrder.POSTED else
                             (lambda ln: ln.order is not avoid) if avoid else (lambda ln: ln.order is LinkOrder.ORDERED))
    stops = [src, dst] if e.device in (src, dst) else [src, e.device, dst]
    if src == dst or not all(a in g and b in g and nx.has_path(g, a, b) for a, b in zip(stops, stops[1:])):
        return ""
    nodes = [src] + [n for a, b in zip(stops, stops[1:]) for n in nx.shortest_path(g, a, b)[1:]]
    if len(set(nodes)) != len(nodes):
        return ""  # the two sides meet before the driver: no simple path through it
    return ", ".join(g.edges[x, y]["link"] for x, y in zip(nodes, nodes[1:]))


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """FX-ORD-003 per write over a posted link and read of its bytes (by another device, or by the
    writer along another route: ``same_requester`` decides which same-device reads are exempt),
    then per persisting write into a ``persistent`` space and posted link (``PostedPersist``).

    A write over a posted link never lands in its own device's memory: a write into its own
    memory is a pull or stays on the device, and neither crosses a link (``graph.write_links``),
    so a buffer that every layer fills and reads back on its own GPU gets no obligation at all."""
    g, pol = ctx.graph, ctx.policy
    flushes: dict[str, list[int]] = {}
    for e in pol.edges:
        for ln in e.flushes:
            flushes.setdefault(ln, []).append(e.eid)
    if not any(map(is_posted, pol.links)):
        return
    # writer -> the posted links that may carry its writes; only an edge with a destination writes
    posted = _posted_links(g, pol.edges)
    writer = (lambda e, _p, acc: e in posted and acc.mode is not AccessMode.READ)
    reader = (lambda _e, _p, acc: acc.mode is not AccessMode.WRITE)
    # Every pair below has a write access that may cross a posted link, and a pair lies in one
    # space: the sweep visits only the spaces such a write reaches.
    spaces = {acc.footprint.space for e in posted for acc in pol.edges[e].accesses() if acc.mode is not AccessMode.READ}
    # (pair order, orientation, w, pw, r, pr, same): the obligations' pairs, in the sweep's order
    found: list[tuple[tuple[int, int, int, int], int, int, int, int, int, SameRequester | None]] = []
    for a, pa, b, pb in pairs_where(ctx, writer, reader, spaces=spaces):
        for turn, (w, pw, r, pr) in enumerate(((a, pa, b, pb), (b, pb, a, pa))):
            ew, er = pol.edges[w], pol.edges[r]
            acc_w, acc_r = ew.accesses()[pw], er.accesses()[pr]
            if not (writer(w, pw, acc_w) and reader(r, pr, acc_r)) or g.hb_before(r, w):
                continue  # a reader that always runs first cannot see the write at all
            found.append(((a, pa, b, pb), turn, w, pw, r, pr, same_requester(ctx, ew, acc_w, er)))
    found.sort(key=lambda t: t[:2])
    # With a parametric prover, the reads of a pair of declarations that every chain through a
    # flush orders come as ``ProvedTogether`` runs in their places (``hb_flushes``).
    flushed, held = flushed_for(ctx), Held()
    notes: dict[int, tuple[Notice, ...]] = {}  # writer -> its notices
    backs: dict[tuple[int, int], tuple[tuple[int, SameRequester], ...]] = {}  # writing access -> its read-backs
    hosts: dict[tuple[int, int], tuple[HostRead, ...]] = {}  # writing access -> its host reads
    for _pair, _turn, w, pw, r, pr, same in found:
        ew, er = pol.edges[w], pol.edges[r]
        for link in posted[w]:
            # A same-requester pair needs no flush (its own fast proof, no query): not asked.
            if same is None and flushed is not None and flushed.proved(ew.span, pw, er.span, pr, link.name):
                yield from held.hold(f"{codes.ORD_003}:{ew.name}#{pw}|{er.name}#{pr}|{link.name}", codes.ORD_003)
                continue
            yield from held.flush()
            if w not in notes:
                notes[w] = notices(ctx, ew)
            if (w, pw) not in backs:
                backs[(w, pw)] = read_backs_of(ctx, ew, pw)
                hosts[(w, pw)] = host_reads_of(ctx, ew, pw)
            yield PostedRead(ctx, w, pw, r, pr, link.name, tuple(flushes.get(link.name, ())), same,
                             on_link(notes[w], link.name),
                             tuple((x, rb) for x, rb in backs[(w, pw)] if link.name in rb.route),
                             tuple((x, route) for x, route in hosts[(w, pw)] if link.name in route))
    yield from held.flush()
    if flushed is not None:
        flushed.report()
    yield from _persisted(ctx, lambda w: posted.get(w, []), flushes)


def _posted_links(g: PolicyGraph, edges: Sequence[Edge]) -> dict[int, list[Link]]:
    """Edge id -> its ``PolicyGraph.posted_links``, for the edges with a destination that have
    any. Asked once per kind of edge: the links depend only on what ``write_links`` reads of an
    edge (its driver, its endpoints' devices, its route, which of source and destination it has),
    and a policy's many edges come in few such kinds."""
    kinds: dict[tuple, list[Link]] = {}
    out: dict[int, list[Link]] = {}
    for e in edges:
        if e.dst is None:
            continue
        kind = (e.device, *g.transfer_endpoints(e), e.via, e.src is None)
        links = kinds.get(kind)
        if links is None:
            links = kinds[kind] = g.posted_links(e)
        if links:
            out[e.eid] = links
    return out


def _persisted(ctx: Context, links_of: Callable[[int], list[Link]], flushes: dict[str, list[int]]
               ) -> Iterator[Obligation]:
    """FX-ORD-003 per persisting write access into a ``persistent`` space and posted link that may
    carry it (``links_of``), with the link's flushes (``flushes``) and the read-backs that cross
    it (``read_backs_of``). A persist into a space that is not ``persistent`` is FX-XF-003 already:
    no flush can make it durable, so it gets none."""
    pol = ctx.policy
    for e in pol.edges:
        if e.dst is None or not e.persists() or not pol.space(e.dst.space).persistent:
            continue
        for pw, acc in enumerate(e.accesses()):
            if acc.mode is AccessMode.READ or acc.footprint != e.dst:
                continue
            backs = read_backs_of(ctx, e, pw)
            for link in links_of(e.eid):
                yield PostedPersist(ctx, e.eid, pw, link.name, tuple(flushes.get(link.name, ())),
                                    tuple((x, same) for x, same in backs if link.name in same.route))
