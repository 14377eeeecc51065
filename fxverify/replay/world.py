"""What the simulator knows about one policy before any rule runs: happens-before recomputed from
``after`` clauses and streams by its own search, routes by its own breadth-first search, and the
owners and governing regions of the ownership model (BRIEF sections 1 and 2).

``World`` is the base of ``simulate.Simulator``; the rule modules read it. Emits no diagnostics.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from fxverify.diagnostics.codes import Code
from fxverify.ir import AccessMode, Edge, Policy, Region
from fxverify.replay.footprints import shared_byte
from fxverify.vocab import NETWORK_KINDS

#: A concrete schedule: edge id -> ``(start, finish)`` in ns, with ``0 <= start < finish``.
Schedule = dict[int, tuple[int, int]]


@dataclass(frozen=True, order=True)
class Violation:
    """One violation the simulator observed: its code, the edges involved (ids, in role order),
    the time (ns) and byte address where it shows, when they apply, a short detail, and the
    ``rule`` that found it when one code has several (``"intent"``: an accumulation a consumer
    ``expects``, ``"stale-checksum"``: a checksum over bytes still being written, ``"defined"``:
    a read of bytes never written; ``""`` otherwise)."""

    code: Code
    edges: tuple[int, ...]
    time: int | None = None
    address: int | None = None
    detail: str = ""
    rule: str = ""


class RegionIndex:
    """The regions of a policy by address space, sorted by base with the running maximum of
    their ends, to find the regions a byte range meets by bisection (``meeting``) instead of a
    scan of every region of the space (a KV cache declares thousands of blocks)."""

    def __init__(self, regions: Sequence[Region]) -> None:
        self._order = {r.name: i for i, r in enumerate(regions)}
        spaces: dict[str, list[Region]] = {}
        for r in regions:
            spaces.setdefault(r.space, []).append(r)
        self._by_base: dict[str, tuple[list[int], list[int], list[Region]]] = {}
        for space, regs in spaces.items():
            ordered = sorted(regs, key=lambda r: r.base)
            ends, top = [], -1
            for r in ordered:
                top = max(top, r.end)
                ends.append(top)
            self._by_base[space] = ([r.base for r in ordered], ends, ordered)

    def meeting(self, space: str, lo: int, hi: int) -> list[Region]:
        """The regions of ``space`` that share an address with ``[lo, hi)`` (``base < hi`` and
        ``lo < end``), in declaration order: a bisection, then a walk back while the running
        maximum of the ends passes ``lo``. O(log n + regions met + regions nested in them)."""
        got = self._by_base.get(space)
        if got is None:
            return []
        bases, ends, ordered = got
        out = []
        j = bisect.bisect_left(bases, hi) - 1
        while j >= 0 and ends[j] > lo:
            if ordered[j].end > lo:
                out.append(ordered[j])
            j -= 1
        return sorted(out, key=lambda r: self._order[r.name])


class World:
    """Happens-before, routes and owners of one policy, recomputed (memoised)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.preds: list[set[int]] = [set() for _ in policy.edges]
        by_name = {e.name: e.eid for e in policy.edges}
        stream_last: dict[tuple[str, str], int] = {}
        for e in policy.edges:
            for n in e.after:
                self.preds[e.eid].add(by_name[n])
            if e.stream is not None:
                k = (e.device, e.stream)
                if k in stream_last:
                    self.preds[e.eid].add(stream_last[k])
                stream_last[k] = e.eid
        self._anc: dict[int, frozenset[int]] = {}
        self._governing: dict[int, dict[str, bool]] = {}
        self._movers: dict[str, frozenset[str]] = {}
        self._moved_with: dict[str, list[str]] = {}
        self._carriers: dict[tuple[str, str], set[str]] = {}
        self._paths: dict[tuple[str, str], list[list[str]]] = {}
        #: edge id -> ids of the edges whose ``cancel`` clauses name it (restated from the IR here,
        #: as ``obligations.context.Context`` does: the simulator imports no obligation module)
        self.cancellers: dict[int, list[int]] = {}
        for e in policy.edges:
            for c in e.cancels:
                x = by_name.get(c.edge)
                if x is not None and e.eid not in self.cancellers.setdefault(x, []):
                    self.cancellers[x].append(e.eid)
        self._meeting = RegionIndex(policy.regions).meeting
        self._lifetimes: frozenset[str] | None = None

    # -- happens-before, recomputed ------------------------------------------------------------
    def ancestors(self, e: int) -> frozenset[int]:
        """Every edge that must finish before ``e`` starts (transitively)."""
        if e in self._anc:
            return self._anc[e]
        seen: set[int] = set()
        stack = list(self.preds[e])
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            stack.extend(self.preds[x])
        self._anc[e] = frozenset(seen)
        return self._anc[e]

    def hb(self, a: int, b: int) -> bool:
        """True when ``a`` must finish before ``b`` starts."""
        return a in self.ancestors(b)

    def check_schedule(self, sched: Schedule) -> str | None:
        """Return why ``sched`` is not a legal schedule of its edges, or ``None`` when it is."""
        for e, (s, f) in sched.items():
            if not 0 <= s < f:
                return f"edge {e} has interval [{s}, {f})"
        for b, (sb, _) in sched.items():
            for a in self.ancestors(b):
                if a in sched and sched[a][1] > sb:
                    return f"edge {a} must finish before edge {b} starts"
        return None

    def extend(self, sched: Schedule, extra: list[int]) -> Schedule:
        """``sched`` plus a legal interval for each edge of ``extra`` it lacks, for a trace that
        shows them. The times of ``sched`` keep their order (they are shifted, never reordered, so
        every rule sees the same comparisons); each added edge gets a unit interval of its own,
        before every edge of ``sched`` when it must finish before one of them, else after all of
        them, in HB order. Requires that no added edge lies on an HB path between two edges of
        ``sched`` (true when ``sched`` times every edge between its primaries). Raises
        ``ValueError`` when the result is not a legal schedule."""
        add = [x for x in sorted(set(extra)) if x not in sched]
        if not add:
            return dict(sched)
        rank = {x: len(self.ancestors(x)) for x in add}  # an ancestor has strictly fewer ancestors
        before = sorted((x for x in add if any(x in self.ancestors(e) for e in sched)), key=lambda x: (rank[x], x))
        after = sorted((x for x in add if x not in before), key=lambda x: (rank[x], x))
        out = {x: (i, i + 1) for i, x in enumerate(before)}
        out |= {e: (s + len(before), f + len(before)) for e, (s, f) in sched.items()}
        end = max(f for _s, f in out.values())
        out |= {x: (end + i, end + i + 1) for i, x in enumerate(after)}
        why = self.check_schedule(out)
        if why is not None:
            raise ValueError(why)
        return out

    # -- cancellation -------------------------------------------------------------------------
    def touch(self, e: int, sched: Schedule) -> tuple[int, int]:
        """``[lo, hi)``, the instants at which edge ``e`` touches its bytes in ``sched``: its
        interval, cut short where the first edge of the schedule that cancels it finishes (a
        cancelled transfer stops touching memory once the cancel completes; empty, ``hi <= lo``,
        when that was before it started). Source: specs/obligations.md section 1, cancellation."""
        s, f = sched[e]
        for c in self.cancellers.get(e, ()):
            if c in sched:
                f = min(f, sched[c][1])
        return s, f

    def cancelled(self, e: int) -> bool:
        """True when some edge cancels ``e``: its writes may stop halfway, so they define no byte,
        and its reads may stop before they read anything."""
        return bool(self.cancellers.get(e))

    def touch_overlap(self, sched: Schedule, a: int, b: int) -> bool:
        """True when edges ``a`` and ``b`` touch their bytes at a common instant (``touch``)."""
        (sa, fa), (sb, fb) = self.touch(a, sched), self.touch(b, sched)
        return max(sa, sb) < min(fa, fb)

    # -- routes, recomputed --------------------------------------------------------------------
    def reaches(self, src: str, dst: str) -> bool:
        """True when some chain of links joins device ``src`` to device ``dst`` (breadth-first;
        reachability only: which paths may carry a transfer is ``carriers``)."""
        seen, frontier = {src}, [src]
        while frontier:
            nxt = []
            for ln in self.policy.links:
                for a, b in ((ln.a, ln.b), (ln.b, ln.a)):
                    if a in frontier and b not in seen:
                        seen.add(b)
                        nxt.append(b)
            frontier = nxt
        return dst in seen

    def _simple_paths(self, src: str, dst: str) -> list[list[str]]:
        """Every simple path from ``src`` to ``dst`` as a list of link names, by depth-first
        enumeration over the links (parallel links are different paths). Exponential in the worst
        case: the simulator runs on small fabrics. Memoised (the schedule rules ask per schedule);
        do not modify the lists."""
        hit = self._paths.get((src, dst))
        if hit is None:
            hit = self._paths[(src, dst)] = list(self._enumerate_paths(src, dst))
        return hit

    def _enumerate_paths(self, src: str, dst: str):
        adj: dict[str, list[tuple[str, str]]] = {}
        for ln in self.policy.links:
            adj.setdefault(ln.a, []).append((ln.b, ln.name))
            adj.setdefault(ln.b, []).append((ln.a, ln.name))
        stack: list[tuple[str, list[str], frozenset[str]]] = [(src, [], frozenset((src,)))]
        while stack:
            at, path, seen = stack.pop()
            if at == dst:
                yield path
                continue
            for nxt, name in adj.get(at, []):
                if nxt not in seen:
                    stack.append((nxt, path + [name], seen | {nxt}))

    def carriers(self, e: Edge) -> set[str]:
        """Names of the links that may carry an edge's bytes: those of its ``via`` route, or of
        any simple path between its endpoints (the policy does not say which one is taken)."""
        if e.via is not None:
            return set(e.via)
        return self.links_between(*self.endpoints(e))

    def links_between(self, a: str, b: str) -> set[str]:
        """Names of the links on some simple path between devices ``a`` and ``b`` (none when
        ``a == b``). Memoised."""
        hit = self._carriers.get((a, b))
        if hit is None:
            hit = self._carriers[(a, b)] = {n for p in self._simple_paths(a, b) for n in p} if a != b else set()
        return hit

    def one_path(self, a: str, b: str) -> frozenset[str] | None:
        """The link names of the only simple path between devices ``a`` and ``b``; ``None`` when
        there are several, none, or ``a == b``."""
        paths = list(self._simple_paths(a, b)) if a != b else []
        return frozenset(paths[0]) if len(paths) == 1 else None

    def write_carriers(self, e: Edge) -> set[str]:
        """Names of the links that may carry an edge's writes: ``carriers``, and when it pins no
        route and its driving device is at neither end (a third-party DMA, or a copy inside one
        remote memory), those of any simple path from the driver to the destination's device:
        the driver's engine may issue the writes, or another engine it started. When such a
        transfer pins its route (through the driver), or its ends have one simple path between
        them, through the driver and crossing a network link at it (``pinned_route``),
        only the links of it on the destination's side of the driver (``legs``): the others bring
        the bytes in to the driver as read completions. None when the destination's device drives
        a transfer from another device's memory (a pull): the bytes come to it as read completions
        and its own engine writes them into its own memory (specs/obligations.md section 1,
        posted rule)."""
        src, dst = self.endpoints(e)
        if e.src is not None and e.dst is not None and e.device == dst != src:
            return set()
        if e.device not in (src, dst) and pinned_route(self, e) is not None and (leg := legs(self, e, dst)):
            return set(leg[0])
        out = self.carriers(e)
        if e.via is None and e.device not in (src, dst):
            out = out | self.links_between(e.device, dst)
        return out

    def routes(self, e: Edge) -> list[frozenset[str]]:
        """Every route that may carry an edge's bytes, each as the set of its link names: its
        ``via`` route alone, or each simple path between its endpoints (none when it stays on one
        device)."""
        if e.via is not None:
            return [frozenset(e.via)]
        src, dst = self.endpoints(e)
        return [] if src == dst else [frozenset(p) for p in self._simple_paths(src, dst)]

    def endpoints(self, e: Edge) -> tuple[str, str]:
        """Where an edge's bytes come from and go to (devices)."""
        sp = self.policy.space
        if e.src is not None and e.dst is not None:
            return sp(e.src.space).device, sp(e.dst.space).device
        if e.dst is not None:
            return e.device, sp(e.dst.space).device
        if e.src is not None:
            return sp(e.src.space).device, e.device
        return e.device, e.device

    # -- owners --------------------------------------------------------------------------------
    def movers(self, region: str) -> frozenset[str]:
        """The regions whose handoff moves ``region``'s bytes, and whose lease covers them: every
        region of its space whose range contains its range, itself included (a handoff of a view
        moves the blocks inside it; a lease of it lets the lessee read them). Memoised."""
        if region not in self._movers:
            r = self.policy.region(region)
            self._movers[region] = frozenset(
                q.name for q in self._meeting(r.space, r.base, r.end) if q.base <= r.base and r.base + r.size <= q.base + q.size)
        return self._movers[region]

    def moved_with(self, region: str) -> list[str]:
        """The regions a handoff of ``region`` moves: itself and every region of its space whose
        range lies inside its range (the inverse of ``movers``). Memoised."""
        if region not in self._moved_with:
            q = self.policy.region(region)
            self._moved_with[region] = sorted(
                r.name for r in self._meeting(q.space, q.base, q.end) if q.base <= r.base and r.base + r.size <= q.base + q.size)
        return self._moved_with[region]

    def handed_to(self, e: Edge, region: str) -> str | None:
        """The owner ``region`` has once ``e`` finishes, when one of ``e``'s handoff clauses moves
        it: clauses apply in written order, so the last one that moves it decides. ``None`` when
        none does."""
        dst = None
        for ho in e.handoffs:
            if ho.region in self.movers(region):
                dst = ho.dst
        return dst

    def owner_set(self, e: Edge, region: str) -> str | None:
        """The owner ``region`` has once ``e`` finishes, when ``e`` allocates it (or a region
        containing it: the allocating device) or hands it off (``handed_to``); else ``None``. An
        edge never does both to the same bytes (``resolve`` rejects it)."""
        for a in reversed(e.allocs):
            if a.region in self.movers(region):
                return a.device
        return self.handed_to(e, region)

    def owners_at(self, region: str, t: float, ids: list[int], sched: Schedule) -> set[str]:
        """Possible owners of ``region`` at time ``t``: the new owner of the latest handoff or
        ``alloc`` that moved it and completed by ``t`` (every one of them on a tie), else the
        initial owner."""
        E = self.policy.edges
        done = [(sched[h][1], dst) for h in ids if sched[h][1] <= t and (dst := self.owner_set(E[h], region)) is not None]
        if not done:
            return {self.policy.region(region).owner}
        last = max(x for x, _ in done)
        return {d for x, d in done if x == last}

    def owner_timeline(self, ids: list[int], sched: Schedule) -> OwnerTimeline:
        """``owners_at`` over the edges ``ids`` of ``sched``, indexed once for many questions
        (a trace asks one per handoff it shows, and a deep flow's trace shows thousands)."""
        return OwnerTimeline(self, ids, sched)

    def final_owners(self, region: str, sched: Schedule) -> set[str]:
        """Possible owners of ``region`` after every edge of ``sched`` finished."""
        return self.owners_at(region, float("inf"), sorted(sched), sched)

    def governing_regions(self, e: Edge) -> dict[str, bool]:
        """Regions whose owner decides an edge's access, with whether it writes there: for every
        byte touched, the smallest regions containing it among those nested in one another (BRIEF
        section 1: one owner per region; nested regions of an alias set delegate to the innermost,
        views that only overlap both decide). Memoised per edge."""
        if e.eid in self._governing:
            return self._governing[e.eid]
        out: dict[str, bool] = {}
        for acc in e.accesses():
            fp = acc.footprint
            regs = [r for r in self._meeting(fp.space, fp.lo, fp.hi) if shared_byte(fp, r.whole()) is not None]
            smaller = sorted(regs, key=lambda q: q.size)  # the candidates for a region inside another
            for r in regs:
                lo, hi = max(fp.lo, r.base), min(fp.hi, r.end)
                inner = False
                for q in smaller:
                    if q.size >= r.size:
                        break
                    if r.base <= q.base and q.base + q.size <= r.base + r.size and q.base <= lo and hi <= q.end:
                        inner = True
                        break
                if not inner:
                    out[r.name] = out.get(r.name, False) or acc.mode is not AccessMode.READ
        self._governing[e.eid] = out
        return out

    def lifetimes(self) -> frozenset[str]:
        """Names of the regions with a lifetime: named by an ``alloc``, or declared ``pooled``
        (specs/obligations.md, "Lifetimes"). Memoised."""
        if self._lifetimes is None:
            self._lifetimes = frozenset({a.region for e in self.policy.edges for a in e.allocs}
                                        | {r.name for r in self.policy.regions if r.pooled})
        return self._lifetimes


class OwnerTimeline:
    """``World.owners_at`` for one set of edges ``ids`` of one schedule ``sched``: the edges with
    an ``alloc`` or handoff clause, by the region the clause names, sorted by finish time. An
    edge moves ``region`` exactly when one of its clauses names a region of ``movers(region)``
    (``owner_set``), so the latest such edges that finished by ``t`` are found by one bisection
    per region of ``movers(region)``, instead of a scan of every edge per question. Answers
    equal ``owners_at``'s."""

    def __init__(self, world: World, ids: list[int], sched: Schedule) -> None:
        self.world = world
        E = world.policy.edges
        by_region: dict[str, list[tuple[int, int]]] = {}
        for h in ids:
            for q in dict.fromkeys([a.region for a in E[h].allocs] + [ho.region for ho in E[h].handoffs]):
                by_region.setdefault(q, []).append((sched[h][1], h))
        self._finishes = {q: [f for f, _ in sorted(v)] for q, v in by_region.items()}
        self._edges = {q: [h for _, h in sorted(v)] for q, v in by_region.items()}

    def at(self, region: str, t: float) -> set[str]:
        """``World.owners_at(region, t, ids, sched)``."""
        last: float | None = None
        latest: set[int] = set()
        for q in self.world.movers(region):
            fs = self._finishes.get(q)
            if not fs:
                continue
            i = bisect.bisect_right(fs, t)
            if i == 0:
                continue
            f = fs[i - 1]
            if last is None or f > last:
                last, latest = f, set()
            if f == last:
                j = bisect.bisect_left(fs, f)
                latest.update(self._edges[q][j:i])
        if last is None:
            return {self.world.policy.region(region).owner}
        E = self.world.policy.edges
        return {d for h in latest if (d := self.world.owner_set(E[h], region)) is not None}


def legs(w: World, e: Edge, home: str) -> list[frozenset[str]]:
    """Every route that may carry the traffic between an edge's driving device and device
    ``home``, each as the set of its link names: ``World.routes`` when the edge's transfer joins
    the two; every simple path between them for a copy inside ``home``'s memory that the
    driver's engine makes; for a third-party transfer pinned with ``via``, or whose ends have one
    simple path between them, through the driver and crossing a network link at it
    (``pinned_route``), the links of the route on ``home``'s side of the driver (the driver sends
    the read requests and the writes itself); none otherwise (any other unpinned third-party
    transfer may also write over the links between its ends: ``World.write_carriers``; a route
    that misses the driver, which the resolver refuses but a hint's edit may propose)."""
    d, (src, dst) = e.device, w.endpoints(e)
    if {src, dst} == {d, home}:
        return w.routes(e)
    if src == dst == home != d:  # a copy inside ``home``'s memory by ``d``'s engine (never pinned)
        return [frozenset(p) for p in w._simple_paths(d, home)] if e.via is None else []
    via = pinned_route(w, e)
    if via is None or src == dst or d in (src, dst) or home not in (src, dst):
        return []
    at, before, after, seen = src, [], [], {src}
    for n in via:  # the route runs from the source's device through the driver
        (after if at == d or after else before).append(n)
        ln = w.policy.link(n)
        at = ln.b if at == ln.a else ln.a
        seen.add(at)
    if d not in seen:
        return []
    return [frozenset(after if home == dst else before)]


def pinned_route(w: World, e: Edge) -> list[str] | None:
    """The route, link names in order from the source's device, an edge is pinned to in effect:
    its ``via``; or, for a third-party transfer that pins none (its driver at neither of two
    different ends), the one simple path between its ends when there is exactly one, it passes
    through the driver, and one of the links it takes into or out of the driver carries network
    packets (``vocab.NETWORK_KINDS``: the driver terminates the transport, so its own engine
    issues the memory requests on the other side), as if it were pinned to it; else ``None``."""
    if e.via is not None:
        return list(e.via)
    src, dst = w.endpoints(e)
    if src == dst or e.device in (src, dst):
        return None
    paths = list(w._simple_paths(src, dst))
    if len(paths) != 1:
        return None
    at, around = src, []
    for n in paths[0]:
        ln = w.policy.link(n)
        nxt = ln.b if at == ln.a else ln.a
        if e.device in (at, nxt):
            around.append(ln.kind)
        at = nxt
    return list(paths[0]) if any(k in NETWORK_KINDS for k in around) else None
