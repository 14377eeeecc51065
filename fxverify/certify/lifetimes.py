"""Checks of the lifetime certificates: ``lifetime-chain`` (FX-OWN-006) and
``within-allocation`` (FX-OWN-004 for a region with an ``alloc`` or declared ``pooled``).

Each check re-derives the region's lifetime events from the IR (one per ``release``/``alloc``
clause naming it) and its initial state (allocated, or unallocated when ``pooled``), checks every
HB step of the evidence against the IR, and states the property over start/finish times for
``--certify smt`` (specs/obligations.md section 1, lifetimes). Emits no diagnostics.
"""

from __future__ import annotations

from collections import Counter

from fxverify.certificate import Certificate, LifetimeChain, WithinAllocation
from fxverify.certify.facts import Facts, Statement, f, key_body, s, touch_overlap
from fxverify.diagnostics import codes
from fxverify.smt.terms import TRUE, Term, and_, not_, or_


def _events(facts: Facts, region: str) -> Counter:
    """``(edge id, kind)`` -> how many clauses of that edge release or allocate ``region``."""
    out: Counter = Counter()
    for e in facts.edges:
        out.update((e.eid, "release") for x in e.releases if x.region == region)
        out.update((e.eid, "alloc") for x in e.allocs if x.region == region)
    return out


def _overlap(a: int, b: int) -> Term:
    return TRUE if a == b else and_(s(a) < f(b), s(b) < f(a))


def check_chain(facts: Facts, c: Certificate, ev: LifetimeChain) -> Statement:
    """``lifetime-chain``: the events of the region form one HB chain that alternates from its
    initial state, so in every schedule they never overlap and alternate in time."""
    st = Statement()
    if not st.fact(ev.region in facts.regions and c.code == codes.OWN_006 and key_body(c.key) == ev.region,
                   "the certificate is not about the lifetime of its region"):
        return st
    evs = list(zip(ev.edges, ev.kinds))
    st.fact(len(ev.edges) == len(ev.kinds) == len(ev.paths) + 1, "the chain's events, kinds and paths do not line up")
    st.fact(Counter(evs) == _events(facts, ev.region), f"the chain does not list every release and alloc of `{ev.region}` once")
    first = "alloc" if facts.regions[ev.region].pooled else "release"
    for i, (_x, k) in enumerate(evs):
        want = first if i == 0 else ("alloc" if evs[i - 1][1] == "release" else "release")
        st.need(k == want, f"event {i} of the chain is a {k}, not a {want}")
    for (a, _), (b, _), p in zip(evs, evs[1:], ev.paths):
        facts.path(st, p, a, b, "lifetime order")
    alts: list[Term] = [_overlap(x, y) for i, (x, _) in enumerate(evs) for y, _ in evs[i + 1:]]
    alts += [and_(*[f(x) <= s(y) for j, (y, _) in enumerate(evs) if j != i]) for i, (x, k) in enumerate(evs) if k != first]
    alts += [and_(f(x) <= s(y), *[not_(and_(f(x) <= s(z), f(z) <= s(y))) for z, _ in evs if z not in (x, y)])
             for x, kx in evs for y, ky in evs if x != y and kx == ky]
    st.violation = or_(*alts)
    return st


def check_within(facts: Facts, c: Certificate, ev: WithinAllocation) -> Statement:
    """``within-allocation``: every lifetime event but the use is HB-ordered with it, and every
    release before it precedes the ``alloc`` before it (or none is before it and the region
    starts allocated), so the use lies inside one allocation in every schedule."""
    st = Statement()
    if not st.fact(ev.region in facts.regions and 0 <= ev.use < len(facts.edges) and bool(c.edges)
                   and c.edges[0] == ev.use and c.code == codes.OWN_004
                   and key_body(c.key) == f"{facts.name(ev.use)}|{ev.region}",
                   "the certificate is not about its use and region"):
        return st
    u = ev.use
    st.edges.add(u)
    evs = [(x, k) for (x, k) in _events(facts, ev.region) if x != u]
    seen = {x.handoff for x in ev.order}
    st.need(seen == {x for x, _ in evs}, "the evidence does not order every release and alloc with the use")
    before = set()
    # A cancelled use touches the block only until one of its cancels finishes (specs/obligations.md
    # section 1, cancellation): an event after such a cancel is after the use.
    cancels = [k for k in facts.cancellers.get(u, []) if k != u]
    for x in ev.order:
        if x.path is not None and x.path.last == u:
            facts.path(st, x.path, x.handoff, u, f"{facts.name(x.handoff)} before the use")
            before.add(x.handoff)
        else:
            first = x.path.first if x.path is not None and x.path.first in cancels else u
            facts.path(st, x.path, first, x.handoff, f"{facts.name(x.handoff)} after the use")
    kinds = dict(evs)
    releases = [x for x, k in evs if k == "release" and x in before]
    if ev.alloc is None:
        st.need(not before and not facts.regions[ev.region].pooled,
                "no alloc opens the use's allocation, yet events come before it or the region is pooled")
    else:
        st.need(ev.alloc in before and kinds.get(ev.alloc) == "alloc", "the opening alloc is not an alloc before the use")
        got = {x.handoff for x in ev.opened}
        st.need(set(releases) <= got, "a release before the use is not ordered before the opening alloc")
        for x in ev.opened:
            facts.path(st, x.path, x.handoff, ev.alloc, "release before the opening alloc")
    allocs = [x for x, k in evs if k == "alloc"]
    st.edges.update(cancels)
    alts: list[Term] = [touch_overlap(u, cancels, x, []) for x, _ in evs]
    early: list[Term] = []
    if facts.regions[ev.region].pooled:
        early.append(and_(*[not_(f(x) <= s(u)) for x, _ in evs]))
    early += [and_(f(r) <= s(u), *[not_(and_(f(r) <= s(a), f(a) <= s(u))) for a in allocs]) for r, k in evs if k == "release"]
    touched = and_(*[s(u) < f(k) for k in cancels])  # a cancel finished by s(u): the use touches nothing
    st.violation = or_(*alts, and_(touched, or_(*early)))
    return st
