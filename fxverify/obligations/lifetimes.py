"""Lifetime obligations: FX-OWN-006 (allocation or release out of order) and FX-OWN-004 for
regions whose bytes are reused (a use outside its allocation).

Takes a ``Context``; yields ``Obligation`` objects for every region that has an ``alloc`` or is
declared ``pooled``. The model (specs/obligations.md section 1, lifetimes): a region's lifetime
events are its releases, each at ``[s(r), f(r))``, and its ``alloc``s, each at ``[s(a), f(a))``
(events of the region by name). A region starts allocated to its declared owner, or unallocated
when ``pooled``. In every schedule:

- no two lifetime events of a region overlap in time, and in time order they alternate, starting
  with a release when the region starts allocated and with an ``alloc`` when it is pooled
  (``LifetimeOrder``, FX-OWN-006: a block allocated again while its last request still holds
  it, freed twice, or freed before it was allocated);
- every use ``u`` of the region (an edge that touches its bytes, hands it off, leases it or
  revokes a lease of it) is inside one allocation: no lifetime event other than
  ``u`` overlaps ``u``, and every release that finished by ``s(u)`` is followed by an ``alloc``
  that finished by ``s(u)``; with no event before ``u``, the region must have started allocated
  (``OutsideAllocation``, FX-OWN-004: use after release, or use of the next request's block).

The owner an ``alloc`` gives (``Context.handoff_dst``) is decided by the ownership obligations
(FX-OWN-001). Regions with neither ``alloc`` nor ``pooled`` keep the pairwise release rule of
``obligations.ownership`` (``UseAfterRelease``), which this one generalises.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from fxverify.certificate import Evidence, HandoffOrder, LifetimeChain, WithinAllocation
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import After, DropRelease, Hint, Option, Pooled, after, hint
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.encode import concurrent_schedule, overlap, projected_schedule, time_objectives, touch_overlap
from fxverify.obligations.lifetime_terms import (
    Event, consecutive, first_in_time, order_violation, outside_violation, overlapping,
)
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, or_

#: One lifetime event: ``(edge id, "alloc" | "release")``, one per clause.


def lifetime_regions(ctx: Context) -> list[str]:
    """Names of the regions with a lifetime: an ``alloc`` of them, or declared ``pooled``; sorted."""
    return sorted(set(ctx.allocs) | {r.name for r in ctx.policy.regions if r.pooled})


def events(ctx: Context, region: str) -> list[Event]:
    """The lifetime events of ``region``, one per ``release``/``alloc`` clause naming it, in a
    fixed topological order of HB (ties, and cyclic HB, by edge id). Built once per region and
    kept in ``ctx`` (every use of a pooled block asks for them): do not modify the list."""
    memo = ctx.__dict__.setdefault("_lifetime_events", {})
    got = memo.get(region)
    if got is not None:
        return got
    out: list[Event] = []
    for eid in sorted(set(ctx.releases.get(region, ())) | set(ctx.allocs.get(region, ()))):
        e = ctx.edge(eid)
        out += [(eid, "release") for x in e.releases if x.region == region]
        out += [(eid, "alloc") for x in e.allocs if x.region == region]
    g = ctx.graph
    memo[region] = got = sorted(out, key=lambda ev: (g.rank(ev[0]) if g.is_acyclic() else 0, ev[0], ev[1]))
    return got


def chained(ctx: Context, region: str) -> bool:
    """True when the lifetime events of ``region`` (``events``) form one HB chain that alternates
    as ``LifetimeOrder`` requires (``_bad_step`` finds no step): HB then orders every two of
    them, in list order. Kept in ``ctx`` per region."""
    memo = ctx.__dict__.setdefault("_lifetime_chained", {})
    got = memo.get(region)
    if got is None:
        evs = events(ctx, region)
        memo[region] = got = bool(evs) and _bad_step(ctx, region, evs) is None
    return got


def users(ctx: Context, region: str) -> list[int]:
    """The edges that use ``region`` (touch its bytes, hand it off, lease it or revoke a lease of
    it), ascending; its releases and ``alloc``s are lifetime events (``LifetimeOrder`` orders
    them), and a use only when they also touch its bytes."""
    hs = ctx.true_handoffs(region)
    rv = {eid for (r, _d), eids in ctx.revokes.items() if r == region for eid in eids}
    out = set(ctx.uses.get(region, ())) | set(hs) | set(ctx.leases.get(region, ())) | rv
    return sorted(out)


def allocation(ctx: Context, region: str, u: int) -> frozenset[str] | None:
    """The allocations of ``region`` that use ``u`` belongs to by happens-before, as the names of
    the edges whose ``alloc`` opens them (``""``: the initial allocation of a region that starts
    allocated); ``None`` when HB does not place it (a pooled region with no ``alloc`` before
    ``u``, or a cyclic HB).

    With ``B`` the lifetime events HB-before ``u``: when a release in ``B`` is followed by no
    ``alloc`` in ``B`` (``u`` comes after the end of an allocation), the allocations ``u`` may
    belong to are those opened by an ``alloc`` outside ``B``; else they are the HB-maximal
    ``alloc``s in ``B`` (one when HB decides it; several when ``u`` follows allocations HB
    leaves unordered), or the initial one when ``B`` holds no ``alloc``. A fix hint may not
    change this set except to narrow it (specs/output.md, "Fix hints": same allocation)."""
    g = ctx.graph
    if not g.is_acyclic():
        return None
    evs = [(x, k) for x, k in events(ctx, region) if x != u]
    before = [(x, k) for x, k in evs if g.hb_before(x, u)]
    allocs = [x for x, k in before if k == "alloc"]
    if any(k == "release" and not any(g.hb_before(x, a) for a in allocs) for x, k in before):
        return frozenset(ctx.edge(x).name for x, k in evs if k == "alloc" and (x, k) not in before)
    if not allocs:
        return None if ctx.policy.region(region).pooled else frozenset({""})
    return frozenset(ctx.edge(a).name for a in allocs if not any(b != a and g.hb_before(a, b) for b in allocs))


def allocations(ctx: Context) -> dict[tuple[str, str], frozenset[str] | None]:
    """``allocation`` of every use of every region with a lifetime, by ``(region, use's edge name)``."""
    return {(r, ctx.edge(u).name): allocation(ctx, r, u) for r in lifetime_regions(ctx) for u in users(ctx, r)}


def _first_kind(ctx: Context, region: str) -> str:
    return "alloc" if ctx.policy.region(region).pooled else "release"


def _bad_step(ctx: Context, region: str, evs: list[Event]) -> int | None:
    """Index of the first event of the chain ``evs`` that is out of order: of the wrong kind, or
    not HB-after the event before it; ``None`` when the chain is ordered and alternates."""
    g, first = ctx.graph, _first_kind(ctx, region)
    for i, (x, k) in enumerate(evs):
        want = first if i == 0 else ("alloc" if evs[i - 1][1] == "release" else "release")
        if k != want or (i and not (g.is_acyclic() and g.hb_before(evs[i - 1][0], x))):
            return i
    return None


def _unordered_after(ctx: Context, evs: list[Event], kind: str, anchor: int, x: int) -> int | None:
    """The first event of ``kind`` in ``evs`` that is HB-after ``anchor`` and that HB leaves
    unordered with ``x`` (neither before the other): the release a pool's next ``alloc`` ``x``
    does not wait for, which it may precede. ``None`` when there is none, or on a cyclic HB."""
    g = ctx.graph
    if not g.is_acyclic():
        return None
    return next((y for y, ky in evs if ky == kind and g.hb_before(anchor, y)
                 and not g.hb_before(x, y) and not g.hb_before(y, x)), None)


class _Lifetime(Obligation):
    def __init__(self, ctx: Context, region: str, edges: tuple[int, ...], key: str, primary, related=()) -> None:
        self.region = region
        self.evs = events(ctx, region)
        super().__init__(ctx, edges, key, primary, related)

    def _query(self, bad: Term, label: str) -> Query:
        cons = projected_schedule(self.ctx.graph, self.edges) + [(label, bad)]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        return Witness(schedule=self.schedule_of(result), values={"region": self.region})



class LifetimeOrder(_Lifetime):
    """FX-OWN-006: the lifetime events of ``region`` are ordered by happens-before and alternate
    (release, alloc, release, ...; alloc first when ``pooled``), in every schedule."""

    code = codes.OWN_006

    def __init__(self, ctx: Context, region: str) -> None:
        evs = events(ctx, region)
        eids = tuple(dict.fromkeys(x for x, _ in evs))
        i = _bad_step(ctx, region, evs) or 0
        super().__init__(ctx, region, eids, f"{self.code}:{region}", ctx.edge(evs[i][0]).span,
                         tuple(Label(ctx.edge(x).span, self._said_static(ctx, x, k)) for j, (x, k) in enumerate(evs)
                               if j != i and abs(j - i) <= 1))

    @staticmethod
    def _said_static(ctx: Context, eid: int, kind: str) -> str:
        return f"`{ctx.edge(eid).name}` {'allocates' if kind == 'alloc' else 'releases'} it"

    def _bad_step(self) -> int | None:
        return _bad_step(self.ctx, self.region, self.evs)

    def prove_fast(self) -> str | None:
        return "hb-reachability" if self.evs and self._bad_step() is None else None

    def evidence(self) -> Evidence | None:
        if self.prove_fast() is None:
            return None
        paths = tuple(self.path(a, b) for (a, _), (b, _) in zip(self.evs, self.evs[1:]))
        if any(p is None for p in paths):
            return None
        return LifetimeChain(self.region, tuple(x for x, _ in self.evs), tuple(k for _, k in self.evs), paths)  # type: ignore[arg-type]

    def culprits(self) -> tuple[int, ...]:
        i = self._bad_step()
        if i is None:
            return self.edges
        return tuple(dict.fromkeys(x for x, _ in self.evs[max(0, i - 1):i + 1]))

    def violating(self, w: Witness) -> Step | None:
        i = self._bad_step()
        x, k = self.evs[i if i is not None else -1]
        return Step(x, k, self.region)

    def encode(self) -> Query:
        return self._query(order_violation(self.evs, _first_kind(self.ctx, self.region)), "lifetime_out_of_order")

    def probe(self) -> Query | None:
        """The disjuncts of ``order_violation`` at the first step the chain breaks (``_bad_step``):
        its first event of the wrong kind comes first; or two events in a row of one kind follow
        each other; or an event overlaps the one before it, or the one ``_follows`` says it must
        follow, when HB leaves the two unordered. Linear in the events, where the violation is
        cubic (16 MB for a pool block of 1,100 lifetime events). ``None`` on a cyclic HB."""
        i, g = self._bad_step(), self.ctx.graph
        if i is None or not g.is_acyclic():
            return None
        x, k = self.evs[i]
        alts: list[Term] = []
        if i == 0:
            alts.append(first_in_time(self.evs, (x, k)))
        else:
            p, kp = self.evs[i - 1]
            if k == kp and p != x:
                alts.append(consecutive(self.evs, p, x))
            if not g.hb_before(p, x):
                alts.append(overlapping(p, x))
        case, y, q = self._follows()
        if case.startswith("early-") and y is not None and q is not None and not g.hb_before(q, y) \
                and not g.hb_before(y, q):
            alts.append(overlapping(q, y))
        return self._query(or_(*alts), "lifetime_out_of_order") if alts else None

    def _case(self) -> tuple[str, str, str, str]:
        """``(case, x, p, owner)``: how the chain breaks (``first-alloc``, ``first-release``,
        ``twice-alloc``, ``twice-release``, ``early-alloc``, ``early-release``, ``unordered``), the
        names of the offending event's edge and of the event it must follow (``_follows``; ``""``
        for none), and the initial owner."""
        case, x, p = self._follows()
        return (case, "" if x is None else self.name(x), "" if p is None else self.name(p),
                self.ctx.policy.region(self.region).owner)

    def _follows(self) -> tuple[str, int | None, int | None]:
        """``(case, x, p)`` of ``_case`` with edge ids. The event ``p`` that ``x`` must follow is
        the one before it in the chain; for two events of one kind in a row, it is rather a later
        event of the other kind, after the first of them, that HB leaves unordered with the second
        (the free a pool's next ``alloc`` does not wait for): the case is then ``early-*``, not
        ``twice-*``."""
        i = self._bad_step()
        if i is None:
            return "unordered", None, None
        x, k = self.evs[i]
        if i == 0:
            return f"first-{k}", x, None
        p, kp = self.evs[i - 1]
        if k == kp:
            # Two allocs (or releases) in a row in the linear extension, with an event of the
            # other kind after the first that HB leaves unordered with the second (a block pool's
            # next `alloc` that does not wait for the free): that one may come first.
            y = _unordered_after(self.ctx, self.evs, "release" if k == "alloc" else "alloc", p, x)
            if y is not None:
                return f"early-{k}", x, y
        return (f"twice-{k}" if k == kp else f"early-{k}"), x, p

    @property
    def related(self) -> tuple[Label, ...]:  # type: ignore[override]
        """The events next to the offending one in the chain (the grouping of findings reads the
        first); then the event ``_follows`` says it must follow, when that is not one of them (a
        later free that a pool's next ``alloc`` may precede). Computed when read: only a refuted
        obligation is asked (its case costs HB queries)."""
        case, _x, p = self._follows()
        if p is None or not case.startswith("early-"):
            return self._near
        kind = next(k for y, k in self.evs if y == p)
        must = Label(self.ctx.edge(p).span, self._said_static(self.ctx, p, kind))
        return self._near if must in self._near else (*self._near, must)

    @related.setter
    def related(self, near: tuple[Label, ...]) -> None:
        self._near = near

    _MESSAGES = {
        "unordered": "the allocations and releases of `{r}` may happen out of order",
        "first-alloc": "`{x}` allocates `{r}`, which is already allocated to `{o}`",
        "first-release": "`{x}` releases `{r}`, which is pooled and not yet allocated",
        "twice-alloc": "`{x}` allocates `{r}` again after `{p}` allocated it, with no release between",
        "twice-release": "`{x}` releases `{r}` again after `{p}` released it, with no alloc between",
        "early-alloc": "`{x}` may allocate `{r}` before `{p}` releases it",
        "early-release": "`{x}` may release `{r}` before `{p}` allocates it",
    }
    def message(self, w: Witness) -> str:
        case, x, p, o = self._case()
        return self._MESSAGES[case].format(r=self.region, x=x, p=p, o=o)

    def why(self, w: Witness) -> str:
        return ("a region is allocated at most once at a time: each `alloc` must come after the release of the previous "
                "allocation, and each release after the `alloc` it ends (a pooled region starts unallocated)")

    def fix(self, w: Witness) -> Hint:
        """By case: a region allocated first starts in its pool (``pooled``); a second release
        goes; an early event waits for the event it must follow (``_case``). The other cases need
        an event the policy lacks, so no edit is proposed."""
        case, x, p, _o = self._case()
        if case == "first-alloc":
            return hint(Pooled(self.ctx.policy.region(self.region).family))
        if case == "twice-release":
            return hint(DropRelease(x, self.region))
        if case in ("early-alloc", "early-release"):
            return hint(after(x, p))
        return hint()


class OutsideAllocation(_Lifetime):
    """FX-OWN-004, for a region with a lifetime: edge ``u`` uses ``region`` inside one of its
    allocations, in every schedule (see the module docstring)."""

    code = codes.OWN_004

    def __init__(self, ctx: Context, region: str, u: int) -> None:
        evs = events(ctx, region)
        #: the edges that cancel ``u``: it touches the block only until the first finishes
        self.cancels = [c for c in ctx.cancellers.get(u, ()) if c != u]
        eids = (u,) + tuple(dict.fromkeys([x for x, _ in evs if x != u] + [c for c in self.cancels]))
        eu = ctx.edge(u)
        super().__init__(ctx, region, eids, f"{self.code}:{eu.name}|{region}", eu.span,
                         tuple(Label(ctx.edge(x).span, self._said_static(ctx, x, k)) for x, k in [e for e in evs if e[0] != u][:3]))
        self.u = u

    _said_static = staticmethod(LifetimeOrder._said_static)

    def _placement(self) -> tuple[list[Event], list[Event], Event | None] | None:
        """``(before, after, alloc)``: the events HB-before and HB-after ``u``, and the alloc that
        opens ``u``'s allocation (``None``: the initial one), when HB decides them all; else ``None``."""
        g = self.ctx.graph
        if not g.is_acyclic():
            return None
        if chained(self.ctx, self.region) and all(x != self.u for x, _k in self.evs):
            return self._placed_in_chain()
        before, after = [], []
        for x, k in self.evs:
            if x == self.u:
                continue
            if g.hb_before(x, self.u):
                before.append((x, k))
            elif self._after_use(x) is not None:
                after.append((x, k))
            else:
                return None
        if not before:
            return None if self.ctx.policy.region(self.region).pooled else (before, after, None)
        for a, k in before:
            if k == "alloc" and all(g.hb_before(r, a) for r, kr in before if kr == "release"):
                return before, after, (a, k)
        return None

    def _placed_in_chain(self) -> tuple[list[Event], list[Event], Event | None] | None:
        """``_placement`` when the events are one alternating HB chain (``chained``) and ``u`` is
        none of them: being HB-before ``u`` holds for a prefix of the chain and being after the
        use for a suffix, so one bisection finds the split and one test checks that the suffix
        starts after the use; the allocation ``u`` is in is opened by the last event before it
        when that is an ``alloc`` (each release before it in the chain is HB-before it). The same
        answer as the scan of every event, in O(log events) HB queries instead of O(events²)."""
        g, evs = self.ctx.graph, self.evs
        lo = bisect_left(range(len(evs)), True, key=lambda j: not g.hb_before(evs[j][0], self.u))
        before, after = evs[:lo], evs[lo:]
        if after and self._after_use(after[0][0]) is None:
            return None
        if not before:
            return None if self.ctx.policy.region(self.region).pooled else (before, after, None)
        return (before, after, before[-1]) if before[-1][1] == "alloc" else None

    def _after_use(self, x: int) -> int | None:
        """The edge HB-before event ``x`` that ends the use: ``u`` itself, or one of its cancels
        (a cancelled use touches the block only until its cancel finishes); ``None`` when neither
        is HB-before ``x``."""
        g = self.ctx.graph
        return next((y for y in (self.u, *self.cancels) if y != x and g.hb_before(y, x)), None)

    def prove_fast(self) -> str | None:
        return "hb-reachability" if self._placement() is not None else None

    def evidence(self) -> Evidence | None:
        got = self._placement()
        if got is None:
            return None
        before, after, alloc = got
        order = tuple(HandoffOrder(x, p) for x, _ in before for p in [self.path(x, self.u)] if p) + tuple(
            HandoffOrder(x, p) for x, _ in after for y in [self._after_use(x)] if y is not None
            for p in [self.path(y, x)] if p)
        opened = () if alloc is None else tuple(
            HandoffOrder(r, p) for r, k in before if k == "release" for p in [self.path(r, alloc[0])] if p)
        return WithinAllocation(self.region, self.u, None if alloc is None else alloc[0], order, opened)

    def culprits(self) -> tuple[int, ...]:
        return (self.u,)

    def violating(self, w: Witness) -> Step | None:
        what, x = self._culprit(w)
        if what == "overlap" and x is not None and w.schedule.get(x, (0,))[0] > w.schedule.get(self.u, (0,))[0]:
            return Step(x, next(k for y, k in self.evs if y == x), self.region)
        return Step(self.u, "start")

    def encode(self) -> Query:
        return self._query(outside_violation(self.u, self.evs, self.ctx.policy.region(self.region).pooled, self.cancels),
                           "use_outside_allocation")

    def guess(self) -> dict[str, int | bool] | None:
        """The use and the first lifetime event HB leaves unordered with it over one interval
        (``encode.concurrent_schedule``): the probe's first disjunct. ``None`` with a cancel of
        the use, when HB orders every event with it, or when the query is not projected on the
        primaries (a cyclic HB, or no reachability index)."""
        g = self.ctx.graph
        if self.cancels or not g.indexed():
            return None
        before = g.hb_before_fn()
        x = next((y for y, _k in self.evs if y != self.u and not before(y, self.u) and not before(self.u, y)), None)
        return None if x is None else concurrent_schedule(g, self.edges, self.u, x)

    def probe(self) -> Query | None:
        """The disjuncts of ``outside_violation`` that say a lifetime event overlaps the use, for
        the events HB leaves unordered with it (each can overlap it unless a cancel or timing
        forbids: the solver says). Linear in the events, where the violation is quadratic (a
        release not followed by an ``alloc``). ``None`` when HB orders every event with the use,
        or on a cyclic HB."""
        g = self.ctx.graph
        if not g.is_acyclic():
            return None
        free = [x for x, _k in self.evs if x != self.u and not g.hb_before(x, self.u) and not g.hb_before(self.u, x)]
        if not free:
            return None
        alts = [touch_overlap(self.u, self.cancels, x, ()) if self.cancels else overlap(self.u, x) for x in free]
        return self._query(or_(*alts), "use_outside_allocation")

    def _culprit(self, w: Witness) -> tuple[str, int | None]:
        """What the witness shows: ``("overlap", x)``, ``("released", r)`` or ``("pooled", None)``."""
        sch = w.schedule
        if self.u not in sch:
            return "released", None
        su, fu = sch[self.u]
        fu = min([fu] + [sch[c][1] for c in self.cancels if c in sch])  # a cancel ends the use
        others = [(x, k) for x, k in self.evs if x != self.u and x in sch]
        for x, _k in others:
            if not (sch[x][1] <= su or fu <= sch[x][0]):
                return "overlap", x
        done = [(sch[x][1], x, k) for x, k in others if sch[x][1] <= su]
        if not done:
            return "pooled", None
        for f_r, r, k in sorted(done, reverse=True):
            if k == "release" and not any(k2 == "alloc" and f_r <= sch[a][0] for _f, a, k2 in done):
                return "released", r
        return "released", None

    def message(self, w: Witness) -> str:
        what, x = self._culprit(w)
        u = self.name(self.u)
        if self.cancels and what != "pooled":
            return self._message(what, x, u) + " (a cancelled transfer touches its bytes until its cancel completes)"
        return self._message(what, x, u)

    def _message(self, what: str, x: int | None, u: str) -> str:
        if what == "pooled":
            return f"`{u}` may use `{self.region}` before it is allocated (it is pooled)"
        if what == "overlap" and x is not None:
            verb = "allocates" if any(k == "alloc" for y, k in self.evs if y == x) else "releases"
            return f"`{u}` may use `{self.region}` while `{self.name(x)}` {verb} it"
        if x is not None:
            return f"`{u}` may use `{self.region}` after `{self.name(x)}` releases it and before it is allocated again"
        return f"`{u}` may use `{self.region}` outside its allocation"

    def _last_uses(self, release: int) -> list[str]:
        """Names of the HB-latest uses of ``u``'s allocation that ``release`` does not already
        follow (``u`` among them unless a later use follows it): the release waits for them, one
        edit shared by every use's finding, so a hint checked once serves them all."""
        g = self.ctx.graph
        mine = allocation(self.ctx, self.region, self.u)
        same = [y for y in users(self.ctx, self.region)
                if y != release and not g.hb_before(y, release) and not g.hb_before(release, y)
                and allocation(self.ctx, self.region, y) == mine]
        last = [y for y in same if not any(z != y and g.hb_before(y, z) for z in same)]
        return [self.name(y) for y in (last or [self.u])]

    def why(self, w: Witness) -> str:
        return ("every use of a block belongs to one allocation: after the `alloc` that gives it out and before the "
                "release that ends it; a use between a release and the next `alloc` touches freed memory, and one "
                "across an `alloc` touches the next request's data")

    def fix(self, w: Witness) -> Hint:
        """The ordering that puts the use inside one allocation: after the first ``alloc`` of a
        pooled region, the next ``alloc`` after the release it follows, the release after the
        HB-latest uses of the allocation (``_last_uses``), or the use after the allocation it
        uses. A use after the last release needs an allocation the policy lacks: no edit."""
        what, x = self._culprit(w)
        u = self.name(self.u)
        g = self.ctx.graph
        again = "the block is allocated again only once it is released"
        if what == "pooled":
            first = next((a for a, k in self.evs if k == "alloc"), None)
            return hint(after(u, self.name(first)) if first is not None else None)
        if x is None:
            return hint()
        late = [a for a, k in self.evs if k == "alloc" and g.is_acyclic() and g.hb_before(a, self.u)
                and not g.hb_before(x, a) and not g.hb_before(a, x)]
        if late and any(k == "release" for y, k in self.evs if y == x):
            return hint(Option((after(self.name(late[0]), self.name(x)),), again))
        if g.is_acyclic() and g.hb_before(x, self.u):
            nxt = [a for a, k in self.evs if k == "alloc" and a != self.u and g.is_acyclic() and g.hb_before(x, a)]
            return hint(Option((after(u, self.name(nxt[0])),), "it uses the block of the next allocation") if nxt else None)
        if x in self.cancels:
            # A release on the cancelling edge starts before the cancel takes effect; no single
            # edit moves it to an edge of its own.
            return hint()
        if self.cancels and not g.hb_before(x, self.cancels[0]):
            verb = "free" if any(k == "release" for y, k in self.evs if y == x) else "reallocate"
            return hint(Option((after(self.name(x), self.name(self.cancels[0])),),
                               f"{verb} the block once the cancel of `{u}` has completed"))
        if any(k == "release" for y, k in self.evs if y == x):
            return hint(after(self.name(x), *self._last_uses(x)))
        pos = next(i for i, (y, _k) in enumerate(self.evs) if y == x)
        prev = self.evs[pos - 1][0] if pos and self.evs[pos - 1][1] == "release" else None
        if prev is not None and g.is_acyclic() and not g.hb_before(self.u, prev) and not g.hb_before(prev, self.u):
            # The release before the reallocation does not wait for the use (a block pool's free
            # ordered after the wrong edge): the release waits for it, and the reallocation for
            # the release when it does not already.
            last = self._last_uses(prev)
            edits: tuple[After, ...] = (after(self.name(prev), *last),)
            if not g.hb_before(prev, x):
                edits += (after(self.name(x), self.name(prev)),)
            return hint(Option(edits, "the block is released only once every use of it in this allocation has finished"))
        if prev is not None and g.is_acyclic() and g.hb_before(self.u, prev) and not g.hb_before(prev, x):
            return hint(Option((after(self.name(x), self.name(prev)),), again))
        # The next `alloc` does not wait for the release that ends this use's allocation (a pool
        # hands the block out again before it is freed): it waits for that release.
        end = _unordered_after(self.ctx, self.evs, "release", self.u, x) if any(
            k == "alloc" for y, k in self.evs if y == x) else None
        if end is not None:
            return hint(Option((after(self.name(x), self.name(end)),), again))
        return hint(after(u, self.name(x)))


def generate(ctx: Context) -> Iterator[Obligation]:
    """Yield the lifetime obligations of every region with an ``alloc`` or declared ``pooled``."""
    for region in lifetime_regions(ctx):
        evs = events(ctx, region)
        if evs:
            yield LifetimeOrder(ctx, region)
        for u in users(ctx, region):
            yield OutsideAllocation(ctx, region, u)
