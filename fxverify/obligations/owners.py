"""The ownership model of ``obligations.ownership`` as terms and HB facts: who owns a region at a
time (``owner_is``), whether a lease is in force (``lease_active``) and whether it names its region
(``names_lease``: a lease of a containing region lends only what its grantor owns), the exact HB sufficient
condition for ownership (``owned_by_hb``) and its evidence (``owner_chain``), and, for fix hints,
the owner HB decides at an access (``owner_at``) and the edges of an owner where a lease or a
handoff to the accessor can go (``owner_edges``); owners are compared as device-id facts
(``encode.DeviceFacts``). The model's rules are in the docstring of
``obligations.ownership`` and in specs/obligations.md (BRIEF sections 1 and 3). Also the base
class of the ownership obligations, ``OwnershipObligation``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from fxverify.certificate import HandoffOrder, OwnerChain
from fxverify.edits import after
from fxverify.graph import PolicyGraph
from fxverify.ir import Footprint
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.encode import DeviceFacts, finish, projected_schedule, start
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Result
from fxverify.smt.terms import Term, and_, eq, not_, or_


def owner_is(ctx: Context, region: str, who: Term, t: Term, handoffs: list[int], facts: DeviceFacts) -> Term:
    """The device whose id is ``who`` owns ``region`` at time ``t``: some latest handoff completed
    by ``t`` gives it to ``who``, or none completed and ``who`` is the initial owner. The owners
    are ``facts`` (``init_owner``, ``dst_e<h>``)."""
    init = facts.device("init_owner", ctx.policy.region(region).owner)
    none_done = and_(*[not_(finish(h) <= t) for h in handoffs])
    alts = [and_(none_done, eq(init, who))]
    for h in handoffs:
        latest = and_(finish(h) <= t, *[not_(and_(finish(o) <= t, finish(h) < finish(o))) for o in handoffs if o != h])
        alts.append(and_(latest, eq(facts.device(f"dst_e{h}", ctx.handoff_dst(h, region)), who)))
    return or_(*alts)


def names_lease(ctx: Context, g: int, region: str, device: str) -> bool:
    """Edge ``g`` leases ``region`` itself to ``device`` (a clause names it), not only a region
    containing it. FX-OWN-003 makes the grantor own a region it names; a lease that covers
    ``region`` only by containing it lends ``region`` only if the grantor owns ``region`` too
    (``lease_active``; specs/obligations.md section 1, leases)."""
    return any(ls.region == region and ls.device == device for ls in ctx.edge(g).leases)


def lease_active(ctx: Context, region: str, device: str, t: Term, leases: list[int], handoffs: list[int],
                 facts: DeviceFacts, revokes: Sequence[int] = ()) -> Term:
    """A lease of ``region`` (or of a region containing it) to ``device`` is in force at ``t``:
    granted by ``f(g) <= t``, and no handoff ``h`` of the region on another edge that had not
    finished when the lease's edge started (``f(h) > s(g)``: later handoffs and concurrent ones
    alike) has started by ``t``, the lease's own edge included: a lease granted on an edge that
    hands the region off is void (issue "Trust": a lease ends at a handoff of its region, whatever
    edge it was granted on; the new owner grants a lease-back on a later edge). ``revokes`` are the
    edges revoking the region (or a region containing it) from ``device``
    (``Context.revokes``): each ends the lease by the same rule, ``f(rv) > s(g)`` and
    ``s(rv) <= t``, its own edge included (specs/obligations.md section 1). A lease that covers
    ``region`` only by containing it lends it only if the lease's driving device owns ``region``
    when the lease's edge starts (``owner_is`` over ``handoffs``, with the owners of ``facts``):
    nobody lends bytes it does not own, as a pool's owner cannot lend a block handed elsewhere."""
    alts = []
    for g in leases:
        covering = ctx.leased_by.get(region, frozenset())
        if not any(ls.region in covering and ls.device == device for ls in ctx.edge(g).leases):
            continue
        ends = list(handoffs) + list(revokes)
        active = [finish(g) <= t, *[not_(and_(start(g) < finish(h), start(h) <= t)) for h in ends]]
        if not names_lease(ctx, g, region, device):
            active.append(owner_is(ctx, region, facts.device(f"grantor_e{g}", ctx.edge(g).device), start(g), handoffs, facts))
        alts.append(and_(*active))
    return or_(*alts)


def owned_by_hb(ctx: Context, region: str, device: str, e: int, hs: list[int]) -> bool:
    """Exact sufficient condition, by HB reachability, that ``device`` owns ``region`` when edge
    ``e`` starts in every schedule: the initial owner with every handoff after ``e``, or a handoff
    to ``device`` before ``e`` with every other handoff before that one or after ``e``. ``hs``:
    the edges handing ``region`` off (or allocating it). O(len(hs)) HB queries on an acyclic
    graph, O(log len(hs)) when HB chains them (``hb_chain``)."""
    g = ctx.graph
    if ctx.policy.region(region).owner == device and all(g.hb_before(e, h) for h in hs):
        return True
    if not g.is_acyclic():
        return any(ctx.handoff_dst(h, region) == device and g.hb_before(h, e)
                   and all(o == h or g.hb_before(o, h) or g.hb_before(e, o) for o in hs) for h in hs)
    chain = hb_chain(ctx, region, hs)
    if chain is not None:
        # One HB chain (a pool slot handed to one request after another): the handoffs after
        # ``e`` are a suffix of it, and the last one before that suffix decides. One bisection.
        lo = bisect_left(range(len(chain)), True, key=lambda j: g.hb_before(e, chain[j]))
        if lo == 0:
            return ctx.policy.region(region).owner == device
        h = chain[lo - 1]
        return ctx.handoff_dst(h, region) == device and g.hb_before(h, e)
    # The handoff that decides is HB-after every other one not after ``e``: the last of those in
    # HB's linear extension (``rank``), the only candidate. Linear in the handoffs, not quadratic
    # (a pooled block handed out once per request has as many as the requests).
    open_ = [o for o in hs if not g.hb_before(e, o)]
    if not open_:
        return False
    h = max(open_, key=g.rank)
    return (ctx.handoff_dst(h, region) == device and g.hb_before(h, e)
            and all(o == h or g.hb_before(o, h) for o in open_))


def one_owner(ctx: Context, region: str, device: str, hs: Sequence[int]) -> bool:
    """``device`` owns ``region`` at every instant of every schedule, whatever the order of the
    handoffs ``hs`` (the region's, as ``owner_is`` takes them): it is the region's initial owner
    and each of them gives the region to ``device`` (a block pool whose every ``alloc`` goes to one
    device). ``owner_is`` names the initial owner or some handoff's destination, so it then names
    ``device``. O(len(hs)); the certificate is ``OneOwner``."""
    return ctx.policy.region(region).owner == device and all(ctx.handoff_dst(h, region) == device for h in hs)


def hb_chain(ctx: Context, region: str, hs: Sequence[int], memo: str = "_handoff_chains") -> list[int] | None:
    """``hs`` (edges of one kind on ``region``: its handoffs and allocations, or its
    allocations) in rank order when HB orders each of them before the next (one chain: every two
    are HB-ordered), else ``None``; ``None`` on a cyclic HB. Kept in the ``ctx`` cache ``memo``
    per region, for the largest set asked: every use of a pooled block asks it of the same
    edges, and the handoff-authority check of each handoff asks it of all the others, which a
    chain of the whole set answers as its subsequence (HB is transitive). Memory O(len(hs)) per
    region."""
    known: tuple[frozenset[int], list[int] | None] | None = ctx.__dict__.setdefault(memo, {}).get(region)
    if known is not None and known[0].issuperset(hs):
        if len(known[0]) == len(set(hs)):
            return known[1]
        if known[1] is not None:
            want = set(hs)
            return [h for h in known[1] if h in want]
    g = ctx.graph
    order = sorted(hs, key=g.rank) if g.is_acyclic() else None
    chain = order if order is not None and all(g.hb_before(a, b) for a, b in zip(order, order[1:])) else None
    if known is None or len(hs) > len(known[0]):
        ctx.__dict__[memo][region] = (frozenset(hs), chain)
    return chain


def owner_chain(ob: Obligation, region: str, device: str, e: int, hs: list[int]) -> OwnerChain | None:
    """The evidence of ``owned_by_hb``: the HB paths that make ``device`` the owner of ``region``
    when ``e`` starts (every handoff in ``hs`` after ``e``, or one handoff to ``device`` before
    ``e`` with every other one before it or after ``e``), or ``None``."""
    ctx = ob.ctx
    if ctx.policy.region(region).owner == device:
        later = [(h, ob.path(e, h)) for h in hs]
        if all(p is not None for _h, p in later):
            return OwnerChain(region, device, e, None, None, tuple(HandoffOrder(h, p) for h, p in later))
    for h in hs:
        via = ob.path(h, e) if ctx.handoff_dst(h, region) == device else None
        if via is None:
            continue
        others = [(o, ob.path(o, h) or ob.path(e, o)) for o in hs if o != h]
        if all(p is not None for _o, p in others):
            return OwnerChain(region, device, e, h, via, tuple(HandoffOrder(o, p) for o, p in others))
    return None


def owner_at(ctx: Context, region: str, e: int, handoffs: Sequence[int]) -> tuple[str, int | None]:
    """``(owner, handoff)``: the owner of ``region`` when edge ``e`` starts as HB decides it, the
    destination of the one latest of ``handoffs`` HB-before ``e`` (and that handoff's edge), else
    the region's initial owner (and ``None``). For fix hints: it decides no verdict."""
    g = ctx.graph
    done = [h for h in handoffs if g.hb_before(h, e)]
    last = [h for h in done if not any(g.hb_before(h, o) for o in done if o != h)]
    if len(last) == 1:
        return ctx.handoff_dst(last[0], region), last[0]
    return ctx.policy.region(region).owner, None


def owner_edges(ctx: Context, e: int, owner: str, since: int | None) -> list[tuple[int, tuple]]:
    """Up to two edges on device ``owner`` that do not run after edge ``e`` (and run after
    ``since`` when given, or are it), those that happen-before ``e`` first, latest first: where a
    lease or a handoff to ``e``'s device can go. Each comes with the edit that orders ``e`` after
    it when HB does not (``()`` when it does). For fix hints: it decides no verdict."""
    g, name = ctx.graph, ctx.policy.edges[e].name
    xs = [x.eid for x in ctx.policy.edges if x.device == owner and x.eid != e and not g.hb_before(e, x.eid)
          and (since is None or x.eid == since or g.hb_before(since, x.eid))]
    xs.sort(key=lambda x: (not g.hb_before(x, e), -g.rank(x), x))
    return [(x, () if g.hb_before(x, e) else (after(name, ctx.policy.edges[x].name),)) for x in xs[:2]]


class OwnershipObligation(Obligation):
    """Base of the ownership obligations (FX-OWN-001 to FX-OWN-005): a ``region``'s property, its
    schedule over the edges that bear on it, and a witness naming the region."""

    region: str

    def _sched(self, extra: tuple[int, ...] = ()) -> list:
        return projected_schedule(self.ctx.graph, self.edges + extra)

    def witness(self, result: Result) -> Witness:
        return Witness(schedule=self.schedule_of(result), values={"region": self.region})


def alloc_chains(ctx: Context, fp: Footprint) -> list[tuple[int, int, list[int] | None, list[int]]]:
    """``(lo, hi, chain, eids)`` per region an ``alloc`` allocates that meets ``fp`` (the regions
    of ``covering_allocs``): its bounds, its allocating edges in HB order when HB chains them
    (``owners.hb_chain``, kept in the context per region) else ``None``, and those edges."""
    out = []
    for name, eids in ctx.allocs.items():
        r = ctx.policy.region(name)
        if r.space == fp.space and fp.meets(r.base, r.end):
            out.append((r.base, r.end, hb_chain(ctx, name, eids, "_alloc_chains"), eids))
    return out


def stale_allocs(g: PolicyGraph, u: int, w: int | None, chains: list[tuple[int, int, list[int] | None, list[int]]],
                 first_after: dict[int, int]) -> list[tuple[int, int]]:
    """``[lo, hi)`` of each region of ``chains`` (``alloc_chains``) that an ``alloc`` HB orders
    neither before write ``w`` (``None``: the ``init`` contents) nor after read ``u`` may
    reallocate in between. On a chain (a pooled block allocated to one request after another)
    the allocs HB-after the read are a suffix and those HB-before ``w`` a prefix: one lies
    between exactly when the prefix ends before the suffix starts, two bisections. ``first_after``
    keeps the suffix's start per chain position (two regions may share bounds)."""
    out = []
    for i, (lo, hi, chain, eids) in enumerate(chains):
        if chain is None:
            out += [(lo, hi) for a in eids if not g.hb_before(u, a) and (w is None or not g.hb_before(a, w))]
            continue
        if i not in first_after:
            first_after[i] = bisect_left(range(len(chain)), True, key=lambda j: g.hb_before(u, chain[j]))
        done = 0 if w is None else bisect_left(range(len(chain)), True, key=lambda j: not g.hb_before(chain[j], w))
        if done < first_after[i]:
            out.append((lo, hi))
    return out
