"""The lifetime rules of the execution model on one concrete schedule (specs/obligations.md
section 1, lifetimes), for every region with an ``alloc`` or declared ``pooled``:

- its lifetime events (each ``release`` and ``alloc`` clause naming it, over its edge's interval)
  never overlap one another, and sorted by start they alternate, beginning with a release when
  the region starts allocated and with an ``alloc`` when it is pooled (FX-OWN-006);
- every use (an edge touching its bytes, handing it off, leasing it or revoking a lease of it)
  overlaps no other lifetime event, and every release finished by the use's start
  is followed by an ``alloc`` finished by then; with no event before it, the region must have
  started allocated (FX-OWN-004).

Written from that model over concrete times, not from the SMT encoding; ``World.lifetimes``
recomputes which regions have a lifetime from the IR. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.replay.footprints import shared_byte
from fxverify.replay.world import Schedule, Violation, World


def _uses(w: World, region: str, ids: list[int]) -> list[int]:
    reg = w.policy.region(region)
    whole = reg.whole()
    out = []
    for u in ids:
        e = w.policy.edges[u]
        named = {x.region for x in e.leases} | {x.region for x in e.revokes}
        leased = any(ls.region in w.movers(region) for ls in e.leases)
        revoked = any(rv.region in w.movers(region) for rv in e.revokes)
        if (region in named or leased or revoked or w.handed_to(e, region) is not None
                or any(shared_byte(a.footprint, whole) is not None for a in e.accesses())):
            out.append(u)
    return out


def violations(w: World, ids: list[int], sched: Schedule) -> list[Violation]:
    """Every lifetime violation ``sched`` exhibits among its edges ``ids``."""
    out: list[Violation] = []
    E = w.policy.edges
    for region in sorted(w.lifetimes()):
        evs = sorted((sched[e][0], sched[e][1], e, kind) for e in ids
                     for kind, clauses in (("release", E[e].releases), ("alloc", E[e].allocs))
                     for c in clauses if c.region == region)
        for i, (s1, f1, x, _k) in enumerate(evs):
            for s2, f2, y, _k2 in evs[i + 1:]:
                if s1 < f2 and s2 < f1:
                    out.append(Violation(codes.OWN_006, tuple(sorted((x, y))), max(s1, s2), None, f"{region}: overlapping"))
        state = "free" if w.policy.region(region).pooled else "allocated"
        prev = None
        for s1, _f1, x, kind in evs:
            if (kind == "alloc") != (state == "free"):
                out.append(Violation(codes.OWN_006, (x,) if prev is None else tuple(sorted((prev, x))), s1, None,
                                     f"{region}: {kind} while {state}"))
            state, prev = ("allocated" if kind == "alloc" else "free"), x
        for u in _uses(w, region, ids):
            su, fu = w.touch(u, sched)  # a cancelled use ends when its cancel completes
            if fu <= su:
                continue  # cancelled before it started: it touched nothing
            others = [(s1, f1, x, k) for s1, f1, x, k in evs if x != u]
            hit = next((x for s1, f1, x, _k in others if s1 < fu and su < f1), None)
            if hit is not None:
                out.append(Violation(codes.OWN_004, (u, hit), su, None, f"{region}: during a lifetime event"))
                continue
            done = [(f1, x, k) for _s1, f1, x, k in others if f1 <= su]
            if not done:
                if w.policy.region(region).pooled:
                    out.append(Violation(codes.OWN_004, (u,), su, None, f"{region}: before its first alloc"))
                continue
            for f1, r, k in done:
                if k == "release" and not any(k2 == "alloc" and f1 <= sched[a][0] for _f2, a, k2 in done):
                    out.append(Violation(codes.OWN_004, (u, r), su, None, f"{region}: after a release"))
    return out
