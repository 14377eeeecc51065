"""Checks of the schedule certificates: ``hb-order``, ``hb-before-all``, ``cancel-order``, ``flush-between``, ``flush-after``, ``written-back``,
``owner-chain``, ``lease-chain``, ``final-owner``, ``topological-order`` and ``read-cover``.

Each check takes the IR ``Facts``, the ``Certificate`` and returns a ``Statement``: every HB step
is looked up in the IR, the evidence is bound to the obligation (its key names the region, the
edges, the map op; its code decides which endpoints the property needs), and the property is
stated over start/finish times (BRIEF section 2) for ``--certify smt``. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.certificate import (
    CancelledFirst,
    Certificate,
    FinalOwnerOf,
    FlushedAfter,
    FlushedBetween,
    LeaseChain,
    Ordered,
    OrderedBefore,
    OneOwner,
    OwnerChain,
    ReadCover,
    TopologicalOrder,
    WrittenBack,
)
from fxverify.certify.facts import (
    Facts,
    Statement,
    contains,
    f,
    fp_hi,
    key_body,
    overlap,
    s,
    split_ref,
    touch_overlap,
    touches_after,
    two_accesses,
)
from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, EdgeAction, MapOpKind
from fxverify.smt.terms import FALSE, Term, and_, between, const, eq, int_var, not_, or_
from fxverify.vocab import ClassKind, DeviceKind
from fxverify.xforms import XfKind


def _op(facts: Facts, st: Statement, ref: str, eid: int, kinds: tuple[MapOpKind, ...]) -> str | None:
    """The map that op ``name#i`` (``ref``) of edge ``eid`` uses, if it is of ``kinds``."""
    name, i = split_ref(ref)
    e = facts.edges[eid]
    ok = name == e.name and 0 <= i < len(e.map_ops) and e.map_ops[i].kind in kinds
    st.fact(ok, f"the key's map op `{ref}` is not a {'/'.join(k.value for k in kinds)} of `{e.name}`")
    return e.map_ops[i].map if ok else None


def check_ordered(facts: Facts, c: Certificate, ev: Ordered) -> Statement:
    """``hb-order``: the path orders the two edges the code's property needs, in its direction."""
    st = Statement()
    if not st.fact(len(c.edges) >= 2, "an ordering certificate needs two edges"):
        return st
    a, b = c.edges[0], c.edges[1]
    # A pair's race is bound to its key's two accesses: an access's race with every earlier one
    # (``X#pos|earlier``) needs a path per access (``hb-before-all``), never one path.
    if c.code == codes.ORD_002 and two_accesses(facts, c, st, codes.ORD_002, "an HB order") is None:
        return st
    either = False
    if c.code in (codes.ORD_002, codes.OWN_002, codes.MAP_002) or (c.code == codes.XF_004 and len(c.edges) == 2
                                                               and facts.edges[b].action is EdgeAction.REDUCE):
        either, first, last, st.violation = True, a, b, overlap(a, b)
    elif c.code == codes.ORD_006:  # the transfer finishes before its notification starts
        st.fact(facts.edges[a].name in facts.edges[b].notifies, f"{facts.name(b)} does not notify {facts.name(a)}")
        first, last, st.violation = a, b, s(b) < f(a)
    elif c.code == codes.XF_004:  # lost accumulation: the write initialises the target before the reduction
        first, last, st.violation = b, a, f(a) <= s(b)
    elif c.code == codes.OWN_004:  # the use before the release
        first, last, st.violation = b, a, not_(f(b) <= s(a))
    elif c.code == codes.MAP_004:
        _op(facts, st, key_body(c.key).split("|")[0], a, (MapOpKind.AGGREGATE,))
        first, last, st.violation = b, a, not_(f(b) <= s(a))
    elif c.code == codes.MAP_003:
        m = _op(facts, st, key_body(c.key).split("|")[0], a, (MapOpKind.GUARD,))
        eventual = m is not None and facts.policy.map(m).cls.kind is ClassKind.EVENTUAL
        # The guard first works for every class; the writer first only where a finished write is seen.
        first, last = (a, b) if eventual or ev.path.first == a else (b, a)
        st.violation = s(b) < s(a) if eventual else and_(s(b) < s(a), s(a) < f(b))
    else:
        st.fact(False, f"an HB order does not prove {c.code}")
        return st
    if either and ev.path.first == b:
        first, last = b, a
    facts.path(st, ev.path, first, last, "order")
    return st


def check_before_all(facts: Facts, c: Certificate, ev: OrderedBefore) -> Statement:
    """``hb-before-all`` (FX-ORD-002 of one access ``x``): the key ``X#pos|earlier`` names access
    ``pos`` of the obligation's first edge; each earlier access is of the next edge of the
    obligation, in order, exists in the IR, shares a hull byte with ``x`` in its space and
    conflicts with it (one of the two writes: a read against a read is no race), and its path runs
    from its edge to ``x``'s. The property, with those steps as hypotheses: no earlier access runs
    at a common instant with ``x`` (an HB order rules out every overlap, cancels or not)."""
    st = Statement()
    refs = key_body(c.key).split("|")
    if not st.fact(c.code == codes.ORD_002 and len(refs) == 2 and refs[1] == "earlier" and len(c.edges) >= 2,
                   f"an order before one access does not prove {c.code} `{c.key}`"):
        return st
    x = c.edges[0]
    name, pos = split_ref(refs[0])
    ex = facts.edges[x]
    if not st.fact(name == ex.name and pos == ev.pos and 0 <= pos < len(ex.accesses()),
                   "the key does not name the obligation's access"):
        return st
    ax = ex.accesses()[pos]
    st.fact(len(ev.earlier) == len(c.edges) - 1 and all(y.edge == e for y, e in zip(ev.earlier, c.edges[1:])),
            "the earlier accesses are not the obligation's further edges, in order")
    overlaps = []
    for y in ev.earlier:
        if not st.fact(0 <= y.edge < len(facts.edges) and y.edge != x and 0 <= y.pos < len(facts.edges[y.edge].accesses()),
                       f"no access {y.pos} of {facts.name(y.edge)} other than the obligation's own edge"):
            continue
        ay = facts.edges[y.edge].accesses()[y.pos]
        fy, fx = ay.footprint, ax.footprint
        st.fact(fy.space == fx.space and fy.base < fp_hi(fx) and fx.base < fp_hi(fy),
                f"{facts.name(y.edge)}#{y.pos} shares no hull byte with {ex.name}#{pos}")
        st.fact(AccessMode.READ is not ay.mode or AccessMode.READ is not ax.mode,
                f"{facts.name(y.edge)}#{y.pos} and {ex.name}#{pos} both only read")
        facts.path(st, y.path, y.edge, x, "earlier access to access")
        overlaps.append(overlap(y.edge, x))
    st.edges.add(x)
    st.violation = or_(*overlaps) if overlaps else FALSE
    return st


def check_cancel(facts: Facts, c: Certificate, ev: CancelledFirst) -> Statement:
    """``cancel-order``: edge ``cancel`` cancels ``cancelled`` (its ``cancel`` clause names it in
    the IR), one of the obligation's two edges (for FX-OWN-004, the use: the release's edge is
    never the cancelled one), and the path orders the cancel before one of the two. The
    property is stated with the cancelled edge's interval cut at ``f(cancel)``; the other
    cancels the IR gives it only weaken it further, so one suffices."""
    st = Statement()
    if not st.fact(c.code in (codes.ORD_002, codes.OWN_002, codes.OWN_004) and len(c.edges) >= 2,
                   f"a cancel order does not prove {c.code}"):
        return st
    a, b = c.edges[0], c.edges[1]
    x, k = ev.cancelled, ev.cancel
    if c.code == codes.ORD_002 and two_accesses(facts, c, st, codes.ORD_002, "a cancel order") is None:
        return st
    if c.code == codes.OWN_004:
        st.fact(len(key_body(c.key).split("|")) == 3 and a != b, "a cancel order proves a release's use, not a lifetime")
        st.fact(x == b, f"{facts.name(x)} is not the use of the release")
    else:
        st.fact(x in (a, b), f"{facts.name(x)} is not one of the obligation's two edges")
    if not st.fact(0 <= k < len(facts.edges) and 0 <= x < len(facts.edges), "unknown cancel or cancelled edge"):
        return st
    st.fact(k in facts.cancellers.get(x, []), f"{facts.name(k)} does not cancel {facts.name(x)}")
    facts.path(st, ev.path, k, None, "cancel to edge")
    st.need(ev.path.last in (a, b), f"the path ends at {facts.name(ev.path.last)}, not at {facts.name(a)} or {facts.name(b)}")
    st.edges.update({a, b, k})
    if c.code == codes.OWN_004:
        st.violation = touches_after(b, [k], s(a))
    else:
        st.violation = touch_overlap(a, [k] if x == a else [], b, [k] if x == b else [])
    return st


def check_flushed(facts: Facts, c: Certificate, ev: FlushedBetween) -> Statement:
    """``flush-between`` (FX-ORD-003): a flush of the posted link orders the write before the read."""
    st = Statement()
    if not st.fact(c.code == codes.ORD_003 and len(c.edges) >= 2 and not key_body(c.key).startswith(PERSIST),
                   f"a flush order between two edges does not prove {c.key}"):
        return st
    w, r = c.edges[0], c.edges[1]
    st.fact(ev.link == key_body(c.key).rsplit("|", 1)[-1], f"link `{ev.link}` is not the obligation's")
    fl = ev.flush
    st.fact(0 <= fl < len(facts.edges) and ev.link in facts.edges[fl].flushes,
            f"{facts.name(fl)} does not flush `{ev.link}`")
    if fl == w and ev.before is None:
        facts.path(st, ev.after, w, r, "write to read")
        st.violation = not_(f(w) <= s(r))
    else:
        facts.path(st, ev.before, w, fl, "write to flush")
        facts.path(st, ev.after, fl, r, "flush to read")
        st.violation = not_(and_(f(w) <= s(fl), f(fl) <= s(r)))
    return st


#: The key body prefix of a persisted posted write (FX-ORD-003), restated: the checker imports no
#: obligation module.
PERSIST = "persist:"


def persisted_write(facts: Facts, c: Certificate, st: Statement, what: str) -> tuple[int, str] | None:
    """Bind a certificate to a persisted-write obligation of FX-ORD-003: the key
    (``persist:<w>#<pos>|<link>``) names a writing access of the first edge, whose transforms
    include ``persist``. Returns ``(w, link)``, or ``None`` (with a failed fact) when the
    certificate is not for such an obligation; ``what`` names the evidence in that failure."""
    body = key_body(c.key)
    if not st.fact(c.code == codes.ORD_003 and len(c.edges) >= 1 and body.startswith(PERSIST),
                   f"{what} does not prove {c.key}"):
        return None
    w = c.edges[0]
    ref, _, link = body[len(PERSIST):].rpartition("|")
    name, pos = split_ref(ref)
    e = facts.edges[w] if 0 <= w < len(facts.edges) else None
    ok = (e is not None and name == e.name and 0 <= pos < len(e.accesses())
          and e.accesses()[pos].mode is not AccessMode.READ and any(t.kind is XfKind.PERSIST for t in e.transforms))
    st.fact(ok, f"the key's access `{ref}` is no persisted write of {facts.name(w)}")
    return w, link


def check_flushed_after(facts: Facts, c: Certificate, ev: FlushedAfter) -> Statement:
    """``flush-after`` (FX-ORD-003, a persisted write): the key names a writing access of the
    obligation's first edge whose transforms include ``persist``, and a flush of the key's link
    follows that edge in HB (or is its own flush clause)."""
    st = Statement()
    bound = persisted_write(facts, c, st, "a flush after a write")
    if bound is None:
        return st
    w, link = bound
    st.fact(ev.link == link, f"link `{ev.link}` is not the obligation's")
    fl = ev.flush
    st.fact(0 <= fl < len(facts.edges) and ev.link in facts.edges[fl].flushes,
            f"{facts.name(fl)} does not flush `{ev.link}`")
    st.edges.update({w, fl})
    if fl == w and ev.before is None:
        st.violation = FALSE  # its own flush takes effect when it finishes
    else:
        facts.path(st, ev.before, w, fl, "write to flush")
        st.violation = not_(f(w) <= s(fl))
    return st


#: Device kinds that reach a noncoherent space through a cache of their own (specs/obligations.md
#: section 1, non-coherent shared memory), restated here: the checker imports no obligation module.
_HOSTS = frozenset({DeviceKind.CPU, DeviceKind.GPU, DeviceKind.NPU})


def _sides(facts: Facts, dev: str, space: str) -> set[str]:
    """Where an access by ``dev`` to ``space`` is served (specs/obligations.md section 1,
    non-coherent shared memory): ``{dev}`` for a host; else ``""`` (the memory itself) when ``dev``
    is the memory's device or a chain of links through devices that are neither hosts nor the
    memory's reaches it (not a host), plus each host such a chain meets first that is the memory's
    device or reaches it avoiding ``dev``. Recomputed by breadth-first search over the IR's links."""
    hosts = {d.name for d in facts.policy.devices if d.kind in _HOSTS}
    home = next(sp.device for sp in facts.policy.spaces if sp.name == space)
    if dev in hosts:
        return {dev}
    if dev == home:
        return {""}
    nbrs: dict[str, list[str]] = {}
    for ln in facts.policy.links:
        nbrs.setdefault(ln.a, []).append(ln.b)
        nbrs.setdefault(ln.b, []).append(ln.a)

    def reaches(src: str, banned: str) -> bool:
        seen, queue = {src, banned}, [src]
        while queue:
            u = queue.pop(0)
            if u == home:
                return True
            for x in nbrs.get(u, []):
                if x not in seen:
                    seen.add(x)
                    queue.append(x)
        return False
    out: set[str] = set()
    seen, queue = {dev}, [dev]
    while queue:
        u = queue.pop(0)
        for x in nbrs.get(u, []):
            if x == home:
                out.add(home if home in hosts else "")
            elif x in hosts:
                if reaches(x, dev):
                    out.add(x)
            elif x not in seen:
                seen.add(x)
                queue.append(x)
    return out or {""}


def check_written(facts: Facts, c: Certificate, ev: WrittenBack) -> Statement:
    """``written-back`` (FX-ORD-005): the key's accesses are a write and a read of one
    ``noncoherent`` space served from two different sides (specs/obligations.md section 1: a
    host's cache, or the memory itself for a device without one, recomputed from the fabric, each
    access from one side only); the bytes reach memory (the writer's side's host writes them back,
    or the write lands there itself: ``wb_pos`` -1), and then the reader's side sees memory (its
    host invalidates them, or the read fetches from memory itself: ``inv_pos`` -1), for every byte
    of the hull the write and the read share, ordered between them."""
    st = Statement()
    bound = two_accesses(facts, c, st, codes.ORD_005, "a write-back")
    if bound is None:
        return st
    w, r, aw, ar = bound
    ew, er = facts.edges[w], facts.edges[r]
    # The obligation exists only for a write (or reduction) and a read (or reduction) of one
    # noncoherent space served from two different sides (specs/obligations.md, FX-ORD-005):
    # re-check each.
    st.fact(aw.mode is not AccessMode.READ, f"access of {facts.name(w)} is a read, not a write")
    st.fact(ar.mode is not AccessMode.WRITE, f"access of {facts.name(r)} is a write, not a read")
    decl = next((sp for sp in facts.policy.spaces if sp.name == aw.footprint.space), None)
    st.fact(decl is not None and decl.noncoherent and ar.footprint.space == aw.footprint.space,
            f"`{aw.footprint.space}` is not a noncoherent space both accesses touch")
    space = aw.footprint.space
    if decl is None:
        return st
    lo, hi = max(aw.footprint.base, ar.footprint.base), min(fp_hi(aw.footprint), fp_hi(ar.footprint))
    st.fact((ev.lo, ev.hi) == (lo, hi), f"the shared bytes are [{lo:#x}, {hi:#x}), not [{ev.lo:#x}, {ev.hi:#x})")
    x, y = ev.writeback, ev.invalidate
    if not st.fact(0 <= x < len(facts.edges) and 0 <= y < len(facts.edges), "unknown write-back or invalidate edge"):
        return st
    side_w, side_r = _sides(facts, ew.device, space), _sides(facts, er.device, space)
    st.fact(side_w != side_r, f"{facts.name(w)} and {facts.name(r)} are served from the same side (coherent)")
    for e, pos, fps, sides, own, what in ((x, ev.wb_pos, facts.edges[x].writebacks, side_w, w, "write back"),
                                         (y, ev.inv_pos, facts.edges[y].invalidates, side_r, r, "invalidate")):
        if pos == -1:
            st.fact(e == own and sides == {""}, f"{facts.name(own)} does not reach the memory itself only")
            continue
        fp = fps[pos] if 0 <= pos < len(fps) else None
        dev = facts.edges[e].device
        st.fact(fp is not None and sides == {dev} and fp.space == space
                and (fp.count == 1 or fp.stride <= fp.elem) and fp.base <= lo and hi <= fp_hi(fp),
                f"{facts.name(e)} does not {what} [{lo:#x}, {hi:#x}) on `{dev}` for every access")
    conds = []
    if x == w and ev.before is None:
        pass
    else:
        facts.path(st, ev.before, w, x, "write to write-back")
        conds.append(f(w) <= s(x))
    facts.path(st, ev.between, x, y, "write-back to invalidate")
    conds.append(f(x) <= s(y))
    if not (y == r and ev.after is None):
        facts.path(st, ev.after, y, r, "invalidate to read")
        conds.append(f(y) <= s(r))
    st.edges.update({w, r})
    st.violation = not_(and_(*conds))
    return st


def _bind_owner(facts: Facts, c: Certificate, st: Statement, region: str, device: str, at: int,
                lease: bool) -> list[int] | None:
    """The handoffs the ownership claim must order, after checking that it speaks of the
    obligation's edge, region and device (its key and its code say which); ``None`` on mismatch."""
    body = key_body(c.key)
    if not st.fact(region in facts.regions and 0 <= at < len(facts.edges), "unknown region or edge"):
        return None
    e = facts.edges[at]
    st.fact(bool(c.edges) and c.edges[0] == at, "the claim is not about the obligation's primary edge")
    st.fact(device == e.device, f"`{device}` does not drive `{e.name}` ({e.device} does)")
    hs = facts.movers(region)
    if c.code == codes.OWN_001:
        st.fact(body == f"{e.name}|{region}", f"the key `{c.key}` is not about `{e.name}` and `{region}`")
        if lease:
            st.fact(not facts.writes_governed(e, region), f"`{e.name}` writes `{region}`: a lease allows reads only")
        return hs
    if c.code == codes.OWN_003 and body.startswith("lease:") and not lease:
        _g, _, rest = body.removeprefix("lease:").partition("|")
        reg, _, to = rest.partition("|")
        st.fact(_g == e.name and reg == region and any(x.region == region and x.device == to for x in e.leases),
                f"the key `{c.key}` is not a lease of `{region}` by `{e.name}`")
        return [h for h in hs if h != at]
    if c.code == codes.OWN_003 and not lease and not body.startswith(("lease:", "split:")):
        st.fact(body == f"{e.name}|{region}", f"the key `{c.key}` is not about `{e.name}` and `{region}`")
        clauses = [x for x in e.handoffs if x.region == region]
        st.fact(bool(clauses) and all(x.src == device for x in clauses),
                f"`{e.name}` does not hand `{region}` off from `{device}`, its driver")
        return [h for h in hs if h != at]
    st.fact(False, f"an ownership chain does not prove {c.code} `{c.key}`")
    return None


def check_owner(facts: Facts, c: Certificate, ev: OwnerChain) -> Statement:
    """``owner-chain``: ``device`` owns the region when ``at`` starts, in every schedule."""
    st = Statement()
    hs = _bind_owner(facts, c, st, ev.region, ev.device, ev.at, lease=False)
    if hs is None:
        return st
    st.violation = _owner_violation(facts, st, ev, hs)
    return st


def check_one_owner(facts: Facts, c: Certificate, ev: OneOwner) -> Statement:
    """``one-owner``: ``device`` is the initial owner of the region and every handoff of it gives it
    to ``device``, so ``device`` owns it when ``at`` starts whatever the schedule (the owner is
    always the initial one or some handoff's destination): the facts alone prove it, and the SMT
    statement's violation is false."""
    st = Statement()
    hs = _bind_owner(facts, c, st, ev.region, ev.device, ev.at, lease=False)
    if hs is None:
        return st
    st.edges.add(ev.at)
    st.fact(facts.regions[ev.region].owner == ev.device, f"`{ev.device}` is not the initial owner of `{ev.region}`")
    for h in hs:
        st.fact(facts.dst(h, ev.region) == ev.device, f"{facts.name(h)} does not give `{ev.region}` to `{ev.device}`")
    st.violation = FALSE
    return st


def _owner_violation(facts: Facts, st: Statement, ev: OwnerChain, hs: list[int]) -> Term:
    """The negation of ``ev``'s claim (``device`` owns ``region`` when ``at`` starts) over the
    region's handoffs ``hs``, after checking the chain's paths and orders into ``st``."""
    t = s(ev.at)
    st.edges.add(ev.at)
    if ev.via is None:
        st.fact(facts.regions[ev.region].owner == ev.device, f"`{ev.device}` is not the initial owner of `{ev.region}`")
        facts.ordered_entries(st, ev.others, hs, -1, ev.at, "later handoff")
        return not_(and_(*[not_(f(o) <= t) for o in hs]))
    if not st.fact(ev.via in hs, f"{facts.name(ev.via)} does not hand `{ev.region}` off"):
        return FALSE  # INVARIANT: st.fact recorded a problem, which rejects the certificate in every mode
    st.fact(facts.dst(ev.via, ev.region) == ev.device, f"{facts.name(ev.via)} does not give `{ev.region}` to `{ev.device}`")
    facts.path(st, ev.via_path, ev.via, ev.at, "handoff to use")
    others = [o for o in hs if o != ev.via]
    facts.ordered_entries(st, ev.others, others, ev.via, ev.at, "other handoff")
    return not_(and_(f(ev.via) <= t, *[not_(and_(f(o) <= t, f(ev.via) < f(o))) for o in others]))


def check_lease(facts: Facts, c: Certificate, ev: LeaseChain) -> Statement:
    """``lease-chain`` (FX-OWN-001, a read): a lease to ``device`` is in force when ``at`` starts."""
    st = Statement()
    hs = _bind_owner(facts, c, st, ev.region, ev.device, ev.at, lease=True)
    if hs is None or not st.fact(c.code == codes.OWN_001 and 0 <= ev.lease < len(facts.edges), "not a lease of a use"):
        return st
    r = facts.regions[ev.region]
    st.fact(any(ls.device == ev.device and contains(facts.regions[ls.region], r) for ls in facts.edges[ev.lease].leases),
            f"{facts.name(ev.lease)} leases no region holding `{ev.region}` to `{ev.device}`")
    facts.path(st, ev.lease_path, ev.lease, ev.at, "lease to use")
    # Every handoff of the region, the lease's own edge included (a lease granted where the region
    # is handed off is void), finishes before the lease starts or starts after the use.
    others = list(hs)
    facts.ordered_entries(st, ev.others, others, ev.lease, ev.at, "handoff")
    # Every revoke of the region (or of one holding it) from the lessee, the lease's own edge
    # included, finishes before the lease starts or starts after the use.
    rvs = [x.eid for x in facts.edges if any(rv.device == ev.device and rv.region in facts.regions
                                                and contains(facts.regions[rv.region], r) for rv in x.revokes)]
    facts.ordered_entries(st, ev.revokes, rvs, ev.lease, ev.at, "revoke")
    g, t = ev.lease, s(ev.at)
    st.edges.update({ev.at, g})
    st.violation = not_(and_(f(g) <= t, *[not_(and_(s(g) < f(h), s(h) <= t)) for h in others + rvs]))
    # A lease that names only a region holding this one lends it only if its grantor (the
    # lease's driving device) owns this region when the lease starts (FX-OWN-003 covers a lease
    # of the region itself): the chain must say so.
    if not any(ls.device == ev.device and ls.region == ev.region for ls in facts.edges[g].leases):
        grantor = ev.grantor
        bound = grantor is not None and grantor.region == ev.region and grantor.device == facts.edges[g].device and grantor.at == g
        st.fact(bound, f"no ownership chain shows `{facts.edges[g].device}` owns `{ev.region}` when {facts.name(g)} lends it")
        if grantor is not None and bound:
            st.violation = or_(st.violation, _owner_violation(facts, st, grantor, hs))
    return st


def check_final(facts: Facts, c: Certificate, ev: FinalOwnerOf) -> Statement:
    """``final-owner`` (FX-OWN-005): every handoff but the last ones precedes another handoff, and
    the last ones all give the region to ``owner`` (the declared owner, when declared)."""
    st = Statement()
    if not st.fact(c.code == codes.OWN_005 and key_body(c.key) == ev.region and ev.region in facts.regions,
                   f"the certificate is not about the final owner of `{ev.region}`"):
        return st
    declared = [fo.device for fo in facts.policy.final_owners if fo.region == ev.region]
    st.fact(not declared or declared[-1] == ev.owner, f"`{ev.owner}` is not the declared final owner")
    hs = facts.movers(ev.region)
    if not hs:
        st.fact(facts.regions[ev.region].owner == ev.owner and not ev.last and not ev.superseded,
                f"with no handoff `{ev.region}` stays with its initial owner, not `{ev.owner}`")
        st.violation = FALSE
        return st
    st.fact(set(ev.last) <= set(hs) and all(facts.dst(h, ev.region) == ev.owner for h in ev.last),
            f"a last handoff does not give `{ev.region}` to `{ev.owner}`")
    sup = {x.handoff for x in ev.superseded}
    st.need(bool(ev.last) and sup | set(ev.last) == set(hs) and not sup & set(ev.last),
            "the handoffs are not split into superseded and last ones")
    for x in ev.superseded:
        st.fact(x.handoff in hs, f"{facts.name(x.handoff)} does not hand `{ev.region}` off")
        facts.path(st, x.path, x.handoff, None, "superseded handoff")
        st.need(x.path is not None and x.path.last in hs and x.path.last != x.handoff,
                f"{facts.name(x.handoff)} is not followed by another handoff of `{ev.region}`")
    st.edges.update(hs)
    st.violation = or_(*[and_(*[f(o) <= f(h) for o in hs if o != h]) for h in hs if h not in ev.last])
    return st


def check_topological(facts: Facts, c: Certificate, ev: TopologicalOrder) -> Statement:
    """``topological-order`` (FX-ORD-001): a permutation of every edge with each HB constraint
    forward, so ``s = 2i, f = 2i + 1`` is a schedule."""
    st = Statement()
    n = len(facts.edges)
    st.fact(c.code == codes.ORD_001 and key_body(c.key) == "policy" and tuple(c.edges) == tuple(range(n)),
            "the certificate is not about the whole policy's HB")
    if not st.fact(sorted(ev.order) == list(range(n)), "the order is not a permutation of the edges"):
        return st
    pos = {e: i for i, e in enumerate(ev.order)}
    cons = facts.constraints()
    back = [(x, y) for x, y in cons if pos[x] >= pos[y]]
    st.need(not back, f"{len(back)} HB constraint(s) go backwards, first {facts.name(back[0][0]) if back else ''}")
    for e, i in pos.items():
        st.hyps += [eq(s(e), 2 * i), eq(f(e), 2 * i + 1)]
    st.violation = or_(*[not_(f(x) <= s(y)) for x, y in cons])
    return st


def check_cover(facts: Facts, c: Certificate, ev: ReadCover) -> Statement:
    """``read-cover`` (FX-XF-004, lost accumulation): reads ordered between the reduction and the
    write cover every byte both touch."""
    st = Statement()
    bound = two_accesses(facts, c, st, codes.XF_004, "a read cover")
    if bound is None:
        return st
    r, w, ar, aw = bound
    st.fact(ar.mode is AccessMode.REDUCE and aw.mode is AccessMode.WRITE, "not a reduction followed by a plain write")
    lo, hi = max(ar.footprint.base, aw.footprint.base), min(fp_hi(ar.footprint), fp_hi(aw.footprint))
    st.fact((ev.lo, ev.hi) == (lo, hi), f"the shared bytes are [{lo:#x}, {hi:#x}), not [{ev.lo:#x}, {ev.hi:#x})")
    reach = lo
    addr = int_var("addr")
    covered = []
    for x in sorted(ev.reads, key=lambda x: x.lo):
        if not st.fact(0 <= x.edge < len(facts.edges) and 0 <= x.pos < len(facts.edges[x.edge].accesses()),
                       f"no access {x.pos} of {facts.name(x.edge)}"):
            continue
        fx = facts.edges[x.edge].accesses()[x.pos]
        fp = fx.footprint
        st.fact(fx.mode is AccessMode.READ and fp.space == ar.footprint.space and (fp.count == 1 or fp.stride <= fp.elem)
                and (x.lo, x.hi) == (fp.base, fp_hi(fp)), f"{facts.name(x.edge)} does not read [{x.lo:#x}, {x.hi:#x}) whole")
        # A cancelled read may stop before it read anything (specs/obligations.md section 1).
        st.fact(not facts.cancellers.get(x.edge), f"{facts.name(x.edge)} is cancelled: it may read nothing")
        facts.path(st, x.after_reduce, r, x.edge, "reduction to read")
        facts.path(st, x.before_write, x.edge, w, "read to write")
        if x.lo <= reach:
            reach = max(reach, x.hi)
        covered.append(and_(between(addr, x.lo, x.hi), f(r) <= s(x.edge), f(x.edge) <= s(w)))
    st.need(reach >= hi, f"the reads leave [{reach:#x}, {hi:#x}) uncovered")
    st.edges.update({r, w})
    st.violation = and_(between(addr, const(lo), const(hi)), f(r) <= s(w), *[not_(t) for t in covered])
    return st
