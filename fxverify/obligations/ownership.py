"""Ownership obligations: FX-OWN-001 (access without ownership or lease), FX-OWN-002 (access while
in transit), FX-OWN-003 (handoff by a non-owner), FX-OWN-004 (use after release), FX-OWN-005 (final
owner not unique or not as declared: ``final_owner``).

Takes a ``Context``; yields ``Obligation`` objects, and ``ProvedTogether`` runs for what the
parametric prover proves at once (``parametric``, ``hb_orders``). The ownership model (BRIEF sections 1 and 3):
a region starts with its declared owner; a handoff edge ``h`` puts it in transit during
``[s(h), f(h))`` and sets the owner to its destination at ``f(h)``; a handoff of a region also moves
every region of the same space inside it (``Context.moved_by``), and the last clause of an edge that
moves a region decides its destination; the owner at time ``t`` is the destination of the latest
handoff completed by ``t`` (simultaneous completions admit either); a lease lets a device read from
``f(g)`` until a handoff of the region on another edge, not finished when ``g`` started, starts
(the lease's own edge included: a lease granted where its region is handed off is void, and the new
owner grants a lease-back on a later edge); a lease of a region lends a region inside it only if
the grantor (the lease edge's device) owns that one when ``g`` starts; or until a revoke of the region
(or of a region containing it) from that device, not finished when ``g`` started, starts (a revoke
on the lease's own edge ends it too; ``resolve`` rejects writing one, FX-TYP-002); only the owner
may revoke, as only the owner may release; a release at ``s(r)`` ends all use. ``s``/``f`` are
``encode.start``/``encode.finish``.
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.certificate import Evidence, HandoffOrder, LeaseChain, OneDestination, OneOwner, Ordered
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import AddHandoff, AddLease, DropHandoff, Hint, Option, Rehand, Swap, after, drive, hint
from fxverify.ir import Edge
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations import lifetimes
from fxverify.obligations.lifetimes import lifetime_regions
from fxverify.obligations.encode import DeviceFacts, overlap, start, time_objectives, touch_overlap, touches, touches_after
from fxverify.obligations.final_owner import FinalOwner
from fxverify.obligations.grants import lease_grants
from fxverify.obligations.hb_owners import owners_for
from fxverify.obligations.hb_orders import footprint_refs, handoff_refs, meeting, orders_for, region_spaces, released_refs, touched_refs
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.owners import (OwnershipObligation, lease_active, names_lease, one_owner, owned_by_hb, owner_at,
                                         owner_chain, owner_edges, owner_is)
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import and_, eq, not_, or_


def _enclosing(ctx: Context, h: int, region: str) -> str | None:
    """The enclosing region whose handoff on edge ``h`` moves ``region``, when ``h`` does not hand
    ``region`` off by name; else ``None``."""
    clauses = ctx.handoff_clauses(h, region)
    if any(c.region == region for c in clauses) or not clauses:
        return None
    return clauses[-1].region


class Unowned(OwnershipObligation):
    """FX-OWN-001: edge ``e`` (on device ``D``) accesses ``region`` only while ``D`` owns it, or
    reads it under a lease that no handoff or revoke has ended, unless a cancel of ``e`` has
    finished by ``s(e)`` (it then touches no byte: ``encode.touches``, specs/obligations.md
    section 1, cancellation); it releases ``region`` (``releases``) or revokes a lease of it
    (``revokes``) only while ``D`` owns it."""

    code = codes.OWN_001

    def __init__(self, ctx: Context, e: Edge, region: str, writes: bool, releases: bool = False,
                 revokes: bool = False) -> None:
        #: ``writes``: a lease is not enough (a write, a reduction, a release or a revoke)
        self.region, self.device, self.writes, self.releases, self.revokes = region, e.device, writes, releases, revokes
        self.hs = list(ctx.handoffs.get(region, ()))
        covering = ctx.leased_by.get(region, frozenset())
        self.ls = [g for g in ctx.leases.get(region, ()) if any(x.region in covering and x.device == e.device for x in ctx.edge(g).leases)]
        #: the edges revoking ``region`` (or a region containing it) from ``D``; empty without a lease
        self.rvs = list(ctx.revokes.get((region, e.device), ())) if self.ls and not writes else []
        related: tuple[Label, ...] = ()
        if self.hs:
            related = tuple(Label(c.span, f"`{ctx.edge(h).name}` hands `{c.region}`, which contains `{region}`, to `{c.dst}` here")
                            for h in self.hs for c in ctx.handoff_clauses(h, region) if c.region != region and c.span.end)
        if self.rvs:
            related += tuple(Label(c.span, f"`{ctx.edge(rv).name}` revokes `{c.region}` from `{c.device}` here")
                             for rv in self.rvs for c in ctx.edge(rv).revokes
                             if c.device == e.device and c.region in ctx.revoked_by.get(region, ()) and c.span.end)
        #: the edges cancelling ``e`` when it only accesses ``region``: an access cancelled before
        #: it starts touches no byte, so it needs no owner (a release or a revoke stays checked
        #: at ``s(e)`` whatever cancels it)
        self.cancels = [] if releases or revokes else ctx.cancelled_by(e.eid)
        prim = (e.eid, *self.hs, *self.ls)
        rest = tuple(dict.fromkeys(x for x in (*self.rvs, *self.cancels) if x not in prim))
        super().__init__(ctx, prim + rest, f"{self.code}:{e.name}|{region}", e.span, related)

    def prove_fast(self) -> str | None:
        g = self.ctx.graph
        e = self.edges[0]
        if owned_by_hb(self.ctx, self.region, self.device, e, self.hs):
            return "hb-reachability" if self.hs else "static-owner"
        if one_owner(self.ctx, self.region, self.device, self.hs):
            return "static-owner"
        if not self.writes:
            for lg in self.ls:
                if g.hb_before(lg, e) and all(g.hb_before(h, lg) or g.hb_before(e, h) for h in self.hs) and all(
                        g.hb_before(rv, lg) or g.hb_before(e, rv) for rv in self.rvs) and self._lends(lg):
                    return "lease-hb"
        return None

    def _lends(self, lg: int) -> bool:
        """Lease ``lg`` lends the region: it names it (FX-OWN-003 then checks its grantor), or
        HB makes its grantor own the region when ``lg`` starts (``owned_by_hb``)."""
        return names_lease(self.ctx, lg, self.region, self.device) or owned_by_hb(
            self.ctx, self.region, self.ctx.edge(lg).device, lg, self.hs)

    def evidence(self) -> Evidence | None:
        e = self.edges[0]
        chain = owner_chain(self, self.region, self.device, e, self.hs)
        if chain is None and one_owner(self.ctx, self.region, self.device, self.hs):
            return OneOwner(self.region, self.device, e)
        if chain is not None or self.writes:
            return chain
        for lg in self.ls:
            granted = self.path(lg, e)
            # every handoff, the lease's own edge included (no path orders an edge with itself:
            # a lease granted where its region is handed off is void)
            others = [(h, self.path(h, lg) or self.path(e, h)) for h in self.hs]
            revoked = [(rv, self.path(rv, lg) or self.path(e, rv)) for rv in self.rvs]
            if granted is None or any(p is None for _h, p in others + revoked):
                continue
            grantor = None
            if not names_lease(self.ctx, lg, self.region, self.device):
                grantor = owner_chain(self, self.region, self.ctx.edge(lg).device, lg, self.hs)
                if grantor is None:
                    continue
            return LeaseChain(self.region, self.device, e, lg, granted, tuple(HandoffOrder(h, p) for h, p in others),
                              tuple(HandoffOrder(rv, p) for rv, p in revoked), grantor)
        return None

    def encode(self) -> Query:
        e = self.edges[0]
        t = start(e)
        facts = DeviceFacts(self.ctx.policy)
        ok = owner_is(self.ctx, self.region, facts.device("accessor", self.device), t, self.hs, facts)
        if not self.writes:
            ok = or_(ok, lease_active(self.ctx, self.region, self.device, t, self.ls, self.hs, facts, self.rvs))
        bad = and_(not_(ok), touches(e, self.cancels)) if self.cancels else not_(ok)
        cons = self._sched() + facts.constraints + [("not_owner_nor_lessee", bad)]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header() + facts.header())

    def witness(self, result: Result) -> Witness:
        w = super().witness(result)
        w.values["device"] = self.device
        return w

    def culprits(self) -> tuple[int, ...]:
        """The edge that acts without owning or leasing; the handoffs, leases and revokes explain."""
        return self.edges[:1]

    def violating(self, w: Witness) -> Step | None:
        """The release, the revoke or the start (the access) of the region the message names."""
        kind = "release" if self.releases else "revoke" if self.revokes else "start"
        return Step(self.edges[0], kind, None if kind == "start" else self.region)

    def message(self, w: Witness) -> str:
        verb = "writes" if self.writes else "reads"
        if self.releases:
            return f"`{self.name(self.edges[0])}` releases `{self.region}` from `{self.device}`, which does not own it then"
        if self.revokes:
            return f"`{self.name(self.edges[0])}` revokes a lease of `{self.region}` from `{self.device}`, which does not own it then"
        if self.writes and self.ls:
            return f"`{self.name(self.edges[0])}` writes `{self.region}` from `{self.device}`, which holds only a read lease on it"
        return f"`{self.name(self.edges[0])}` {verb} `{self.region}` from `{self.device}`, which neither owns nor leases it then"

    def why(self, w: Witness) -> str:
        if self.releases:
            return "only a region's owner may release it: a lessee or another device would free memory it does not own"
        if self.revokes:
            return "only a region's owner may revoke a lease of it: a lease is the owner's to grant and to end"
        if self.rvs:
            return "a device may read a region only while it owns it, or under a lease that no handoff or revoke has ended"
        covering = self.ctx.leased_by.get(self.region, frozenset())
        outer = [(lg, ls.region) for lg in self.ls if not self.writes and not self._lends(lg)
                 for ls in self.ctx.edge(lg).leases if ls.device == self.device and ls.region in covering]
        if outer:
            lg, pool = outer[0]
            return (f"a lease lends only what its grantor owns: `{self.name(lg)}` on `{self.ctx.edge(lg).device}` leases "
                    f"`{pool}`, which holds `{self.region}`, and lends `{self.region}` only if `{self.ctx.edge(lg).device}` "
                    f"owns it when `{self.name(lg)}` starts")
        return "a device may access a region only while it owns it, or read it under a lease"

    def fix(self, w: Witness) -> Hint:
        """By what the edge does: a release or revoke driven from a device that owns the region
        (initially or by a handoff); a read before the revoke that ended its lease, or under a
        lease granted again after it; a read under a lease, or a write after a handoff to the
        accessor, granted on an edge of the region's owner then (ordered before the access)."""
        g, e = self.ctx.graph, self.edges[0]
        ee = self.ctx.edge(e)
        if self.releases or self.revokes:
            owners = [self.ctx.policy.region(self.region).owner] + [self.ctx.handoff_dst(h, self.region) for h in self.hs]
            return hint(*[drive(self.ctx.policy, ee.name, d, ee.hook) for d in dict.fromkeys(owners) if d != self.device])
        owner, last = owner_at(self.ctx, self.region, e, self.hs)
        unordered = [rv for rv in self.rvs if not g.hb_before(e, rv)]
        if unordered:
            rv = unordered[0]
            before = None if g.hb_before(rv, e) else after(self.name(rv), self.name(e))
            return hint(before, *self._granted(owner, rv))
        if not self.writes:
            void = next((x for x in self.ls if x in self.hs), None)
            return hint(*self._granted(owner, void if void is not None else last))
        return hint(*[(AddHandoff(self.name(x), self.region, owner, self.device),) + order
                      for x, order in owner_edges(self.ctx, e, owner, last)])

    def _granted(self, owner: str, since: int | None) -> list[tuple]:
        """``lease R to D`` on an edge of ``owner`` after ``since`` (``owner_edges``), not on a
        handoff of the region: a lease granted where the region is handed off is void."""
        return [(AddLease(self.name(x), self.region, self.device),) + order
                for x, order in owner_edges(self.ctx, self.edges[0], owner, since) if x not in self.hs]


class InTransit(OwnershipObligation):
    """FX-OWN-002: edge ``e`` does not overlap handoff ``h`` of the region it accesses (a cancelled
    one touches bytes only until its first cancel finishes; cancels are primary edges after both)."""

    code = codes.OWN_002

    def __init__(self, ctx: Context, e: Edge, h: int, region: str) -> None:
        self.region, eh = region, ctx.edge(h)
        outer = _enclosing(ctx, h, region)
        what = f"`{outer}`, which contains `{region}`," if outer else f"`{region}`"
        self.ce, self.ch = list(ctx.cancellers.get(e.eid, ())), list(ctx.cancellers.get(h, ()))
        cancels = tuple(c for c in ctx.cancelled_by(e.eid, h) if c not in (e.eid, h))
        super().__init__(ctx, (e.eid, h, *cancels), f"{self.code}:{e.name}|{eh.name}|{region}", e.span,
                         (Label(eh.span, f"`{eh.name}` hands {what} off here"),))

    def prove_fast(self) -> str | None:
        e, h = self.edges[:2]
        return self.order_method(self.ctx.graph.ordered(e, h), (e, h), (e, h))

    def evidence(self) -> Evidence | None:
        p = self.either_path(*self.edges[:2])
        return Ordered(p) if p is not None else self.cancelled_first(self.edges[:2], self.edges[:2])

    def encode(self) -> Query:
        e, h = self.edges[:2]
        cons = self._sched() + [("overlaps_handoff", touch_overlap(e, self.ce, h, self.ch))]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header())

    def culprits(self) -> tuple[int, ...]:
        return self.edges[:2]  # the access and the handoff; their cancels only explain

    def message(self, w: Witness) -> str:
        e, h = self.edges[:2]
        outer = _enclosing(self.ctx, h, self.region)
        if outer:
            return f"`{self.name(e)}` accesses `{self.region}` while `{self.name(h)}` is handing off `{outer}`, which contains it"
        return f"`{self.name(e)}` accesses `{self.region}` while `{self.name(h)}` is handing it off"

    def why(self, w: Witness) -> str:
        return "a region in transit belongs to nobody: no edge but the handoff may touch it"

    def fix(self, w: Witness) -> Hint:
        e, h = self.edges[:2]
        return hint(after(self.name(e), self.name(h)), after(self.name(h), self.name(e)))


class BadHandoff(OwnershipObligation):
    """FX-OWN-003: handoff ``h`` of ``region`` from ``A`` starts while ``A`` owns the region and no
    other handoff of it is in flight."""

    code = codes.OWN_003

    def __init__(self, ctx: Context, h: int, region: str) -> None:
        self.region = region
        self.driver = ctx.edge(h).device
        # Every clause of `region` on `h` is checked; the first whose source is not the driver
        # names the obligation's source (a second clause from another device is the bug).
        clauses = [x for x in ctx.edge(h).handoffs if x.region == region]
        ho = next((x for x in clauses if x.src != self.driver), clauses[0])
        self.src = ho.src
        self.srcs = sorted({x.src for x in clauses})
        self.hs = list(ctx.handoffs[region])
        eh = ctx.edge(h)
        super().__init__(ctx, (h, *[o for o in self.hs if o != h]), f"{self.code}:{eh.name}|{region}", ho.span if ho.span.end else eh.span)

    def prove_fast(self) -> str | None:
        h = self.edges[0]
        if self.srcs != [self.driver]:
            return None
        others = [o for o in self.hs if o != h]
        return "hb-reachability" if owned_by_hb(self.ctx, self.region, self.src, h, others) else None

    def evidence(self) -> Evidence | None:
        h = self.edges[0]
        if self.srcs != [self.driver]:
            return None
        return owner_chain(self, self.region, self.src, h, [o for o in self.hs if o != h])

    def encode(self) -> Query:
        h = self.edges[0]
        # The driving device is the one giving the region away: it must be the declared source.
        facts = DeviceFacts(self.ctx.policy)
        driver = facts.device("driver", self.driver)
        srcs = [facts.device(f"from_{k}", src) for k, src in enumerate(self.srcs)]
        bad = or_(*[not_(eq(src, driver)) for src in srcs],
                  *[not_(owner_is(self.ctx, self.region, src, start(h), self.hs, facts)) for src in srcs],
                  *[overlap(h, o) for o in self.hs if o != h and self.ctx.handoff_clauses(o, self.region)])
        cons = self._sched() + facts.constraints + [("handoff_by_non_owner", bad)]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header() + facts.header())

    def witness(self, result: Result) -> Witness:
        w = super().witness(result)
        w.values["from"] = self.src
        return w

    def culprits(self) -> tuple[int, ...]:
        """The handoff the message names; the other handoffs of the region explain."""
        return self.edges[:1]

    def message(self, w: Witness) -> str:
        if self.driver != self.src:
            return (f"`{self.name(self.edges[0])}` runs on `{self.driver}` but hands `{self.region}` off from "
                    f"`{self.src}`: only the owner can give a region away")
        return f"`{self.name(self.edges[0])}` hands `{self.region}` off from `{self.src}`, which may not own it then"

    def why(self, w: Witness) -> str:
        return "only the current owner can hand a region off, and one handoff at a time"

    def fix(self, w: Witness) -> Hint:
        """The handoff driven from the device it gives the region away from; or ordered after a
        handoff of the region it may overlap; or, after an earlier handoff moved the region on,
        made by the owner that handoff left (driven from it, from it). Handing the region back
        first needs an edge the policy lacks: no edit."""
        h = self.edges[0]
        g = self.ctx.graph
        eh = self.ctx.edge(h)
        if self.driver != self.src:
            return hint(drive(self.ctx.policy, eh.name, self.src, eh.hook))
        unordered = [o for o in self.edges[1:] if not g.ordered(h, o)]
        if unordered:
            return hint(after(eh.name, self.name(unordered[0])))
        prev = [o for o in self.edges[1:] if g.hb_before(o, h) and self.ctx.handoff_clauses(o, self.region)]
        last = [o for o in prev if not any(g.hb_before(o, x) for x in prev if x != o)]
        if len(last) != 1:
            return hint()
        owner = self.ctx.handoff_dst(last[0], self.region)
        moved = [Rehand(eh.name, c.region, c.src, owner, c.dst)
                 for c in eh.handoffs if c.region == self.region and c.src == self.src and c.dst != owner]
        handed = drive(self.ctx.policy, eh.name, owner, eh.hook)
        return hint((handed, moved[0]) if handed and moved else None)


class SplitHandoff(OwnershipObligation):
    """FX-OWN-003 for one edge: the handoff clauses of edge ``h`` whose regions share a byte with
    the handed-off ``region`` (its own, enclosing, nested or overlapping views) all name one
    destination. A byte goes to one new owner per edge; with two, the owner after the edge would
    depend on the order the clauses are read."""

    code = codes.OWN_003
    schedule_free = True

    def __init__(self, ctx: Context, h: int, region: str) -> None:
        self.region = region
        self.clauses = ctx.clauses_sharing_bytes(h, region)
        eh = ctx.edge(h)
        last = self.clauses[-1]
        super().__init__(ctx, (h,), f"{self.code}:split:{eh.name}|{region}", last.span if last.span.end else eh.span,
                         tuple(Label(c.span, f"hands `{c.region}` to `{c.dst}` here") for c in self.clauses[:-1] if c.span.end))

    def _dsts(self) -> list[str]:
        return sorted({c.dst for c in self.clauses})

    def prove_fast(self) -> str | None:
        return "constant" if len(self._dsts()) == 1 else None

    def evidence(self) -> Evidence | None:
        if len(self._dsts()) != 1:
            return None
        pos = tuple(i for i, c in enumerate(self.ctx.edge(self.edges[0]).handoffs) if c in self.clauses)
        return OneDestination(self.region, self._dsts()[0], pos)

    def encode(self) -> Query:
        facts = DeviceFacts(self.ctx.policy)
        dsts = [facts.device(f"dst_{k}", c.dst) for k, c in enumerate(self.clauses)]
        cons = facts.constraints + [("two_destinations", or_(*[not_(eq(d, dsts[0])) for d in dsts[1:]]))]
        return Query(self.key, tuple(cons), header=self.header() + facts.header())

    def witness(self, result: Result) -> Witness:
        return Witness(values={"region": self.region, "to": ", ".join(self._dsts())})

    def message(self, w: Witness) -> str:
        dsts = " and ".join(f"`{d}`" for d in self._dsts())
        others = sorted({c.region for c in self.clauses} - {self.region})
        also = f" (with {', '.join(f'`{o}`' for o in others)}, which shares its bytes)" if others else ""
        return f"`{self.name(self.edges[0])}` hands `{self.region}`{also} to both {dsts}"

    def why(self, w: Witness) -> str:
        return "one edge moves a region's bytes to one new owner; a handoff of a region also moves every region inside it"

    def fix(self, w: Witness) -> Hint:
        """Keep one handoff of the region's bytes on the edge: drop each other clause."""
        name = self.name(self.edges[0])
        return hint(*[DropHandoff(name, c.region, c.src, c.dst) for c in self.clauses])


class UseAfterRelease(OwnershipObligation):
    """FX-OWN-004: every use ``u`` of ``region`` happens-before its release ``r``; a cancelled ``u``
    touches no byte once ``r`` starts when ``r`` is HB-after one of its cancels (specs/obligations.md
    section 1, cancellation; the cancels are primary edges after ``r`` and ``u``)."""

    code = codes.OWN_004

    def __init__(self, ctx: Context, r: int, u: int, region: str, kind: str) -> None:
        self.region, self.kind = region, kind
        er, eu = ctx.edge(r), ctx.edge(u)
        self.cu = list(ctx.cancellers.get(u, ())) if u != r else []
        super().__init__(ctx, (r, u, *[c for c in self.cu if c not in (r, u)]), f"{self.code}:{er.name}|{eu.name}|{region}",
                         er.span, (Label(eu.span, f"`{eu.name}` uses `{region}` here"),))

    def prove_fast(self) -> str | None:
        r, u = self.edges[:2]
        return self.order_method(self.ctx.graph.hb_before(u, r), (u,) if u != r else (), (r, u))

    def evidence(self) -> Evidence | None:
        r, u = self.edges[:2]
        p = self.path(u, r)
        return Ordered(p) if p is not None else self.cancelled_first((u,), (r, u)) if u != r else None

    def encode(self) -> Query:
        r, u = self.edges[:2]
        cons = self._sched() + [("use_not_before_release", touches_after(u, self.cu, start(r)))]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header())

    def culprits(self) -> tuple[int, ...]:
        return self.edges[:2]  # the release and the use; the use's cancels only explain

    def violating(self, w: Witness) -> Step | None:
        """The release of the region the message names (the second one, when it is released twice)."""
        return Step(self.edges[0], "release", self.region)

    def message(self, w: Witness) -> str:
        r, u = self.edges[:2]
        if r == u:
            return f"`{self.name(r)}` releases `{self.region}` twice"
        why = " (a cancelled transfer touches its bytes until its cancel completes)" if self.cu else ""
        if not self.cu and self.ctx.graph.hb_before(r, u):
            # ordered the wrong way round: every schedule uses the region after it is released
            return f"`{self.name(u)}` uses `{self.region}` after `{self.name(r)}` releases it ({self.kind}): use after release"
        return f"`{self.name(r)}` releases `{self.region}` ({self.kind}) while `{self.name(u)}` may still use it{why}"

    def why(self, w: Witness) -> str:
        cancelled = "; a cancelled transfer's use ends when its cancel completes, not when it is issued" if self.cu else ""
        return f"a release (free, evict, unlock, return to pool) must happen after every use of the region has finished{cancelled}"

    def fix(self, w: Witness) -> Hint:
        """The release after the use (first after its cancel, when it has one not on ``r``); the
        two swapped when a direct ``after`` orders the use after the release."""
        r, u = self.edges[:2]
        if r == u or r in self.cu:
            return hint()
        c = next((c for c in self.cu if c != r), None)
        if c is not None and not self.ctx.graph.hb_before(r, c):
            why = f"free the blocks once the cancel of `{self.name(u)}` has completed"
            return hint(Option((after(self.name(r), self.name(c)),), why), after(self.name(r), self.name(u)))
        if self.ctx.graph.hb_before(r, u):
            if self.name(r) not in self.ctx.edge(u).after:
                return hint()
            return hint(Swap(self.name(r), self.name(u)))
        return hint(after(self.name(r), self.name(u)))


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """Yield every ownership obligation of ``ctx.policy``. With a parametric prover
    (``Context.parametric``), the FX-OWN-001 obligations of a declaration whose every instance
    touches only regions its device owns for the whole flow come as ``ProvedTogether`` runs, in
    the places their instances have unrolled (``Parametric.proved_static_owners``), and so do
    the FX-OWN-002 obligations of a pair of declarations whose every paired use and handoff are
    ordered, and the FX-OWN-004 ones of a pair whose every paired use is before the release
    (``hb_orders.Orders``)."""
    pol = ctx.policy
    touched, checks = ctx.touched(), ctx.owner_checks()
    # With an HB cycle the unrolled FX-OWN-001 obligations are dropped (``families._kept``: they
    # are not ``schedule_free``), so the prover is not asked: no proof and no report of them.
    owners = owners_for(ctx)
    static = (ctx.parametric.proved_static_owners({r for r, hs in ctx.handoffs.items() if hs}, checks,
                                                  owners.reason if owners is not None else None)
              if ctx.parametric is not None and ctx.graph.is_acyclic() else set())
    orders = orders_for(ctx, codes.OWN_002)
    transit = meeting(orders.paths.shapes, region_spaces(ctx.policy), footprint_refs, handoff_refs) if orders is not None else None
    held = Held()
    for e in pol.edges:
        proved = bool(static) and e.span in static
        # Every region whose bytes the edge touches, whichever region its footprint names: regions
        # of one alias set may overlap, and each has its own owner. And every region it releases.
        released, revoked = {rel.region for rel in e.releases}, {rv.region for rv in e.revokes}
        for r, writes in sorted(checks.get(e.eid, {}).items()):
            if any(h.region == r and h.src == e.device for h in e.handoffs):
                continue  # the owner's handoff edge touches what it gives away; FX-OWN-003 checks it
            if proved:
                yield from held.hold(f"{codes.OWN_001}:{e.name}|{r}", codes.OWN_001)
            else:
                yield from held.flush()
                yield Unowned(ctx, e, r, writes, releases=r in released, revokes=r in revoked)
            if r not in touched.get(e.eid, {}):
                continue  # a release touches no bytes: FX-OWN-004 orders it after every use
            for h in ctx.true_handoffs(r):  # an alloc puts nothing in transit
                if h == e.eid:
                    continue
                if transit is not None and orders.proved(codes.OWN_002, e.span, ctx.edge(h).span, transit, either=True):
                    yield from held.hold(f"{codes.OWN_002}:{e.name}|{ctx.edge(h).name}|{r}", codes.OWN_002)
                    continue
                yield from held.flush()
                yield InTransit(ctx, e, h, r)
    yield from held.flush()
    if orders is not None:
        orders.report()
    for e in pol.edges:
        for region in sorted({h.region for h in e.handoffs}):
            yield BadHandoff(ctx, e.eid, region)
    for e in pol.edges:
        if len(e.handoffs) > 1:
            for region in sorted({h.region for h in e.handoffs}):
                if len(ctx.clauses_sharing_bytes(e.eid, region)) > 1:
                    yield SplitHandoff(ctx, e.eid, region)
    yield from lease_grants(ctx)
    yield from _uses_before_releases(ctx)
    yield from lifetimes.generate(ctx)
    declared = {fo.region: fo for fo in pol.final_owners}
    for region in sorted(set(declared) | {r for r, hs in ctx.handoffs.items() if len(hs) > 1}):
        fo = declared.get(region)
        yield FinalOwner(ctx, region, fo.device if fo else None, fo.span if fo else pol.region(region).span)


def _uses_before_releases(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """The FX-OWN-004 obligations of the releases that are not lifetime events: every use of the
    region before its release. With a parametric prover and acyclic HB, a pair of declarations
    whose every paired use is HB-before the release by a chain of ``after`` references
    (``hb_orders.Orders``) comes as ``ProvedTogether`` runs, in the places their instances unroll."""
    orders = orders_for(ctx, codes.OWN_004)
    pairing = meeting(orders.paths.shapes, region_spaces(ctx.policy), touched_refs, released_refs) if orders is not None else None
    held = Held()
    reused = set(lifetime_regions(ctx))  # their releases are lifetime events (obligations.lifetimes)
    for region, rs in sorted(ctx.releases.items()):
        if region in reused:
            continue
        # Uses: edges touching its bytes, handing it off (an enclosing region's handoff included)
        # or leasing it, and the other releases of it.
        users = set(ctx.uses.get(region, ())) | set(rs) | set(ctx.true_handoffs(region))
        for r in sorted(set(rs)):
            er = ctx.edge(r)
            kinds = [x.kind.value for x in er.releases if x.region == region]
            for u in sorted(users):
                if u == r:
                    continue
                eu = ctx.edge(u)
                if pairing is not None and orders.proved(codes.OWN_004, eu.span, er.span, pairing):
                    yield from held.hold(f"{codes.OWN_004}:{er.name}|{eu.name}|{region}", codes.OWN_004)
                    continue
                yield from held.flush()
                yield UseAfterRelease(ctx, r, u, region, kinds[0])
            if len(kinds) > 1:
                yield from held.flush()
                yield UseAfterRelease(ctx, r, r, region, kinds[0])  # released twice by one edge
    yield from held.flush()
    if orders is not None:
        orders.report()
