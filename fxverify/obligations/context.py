"""``Context``: one policy and its graph, with the indexes the obligation families share (the
ownership indexes, the cancellation and allocation events, which regions each access touches),
each built on first use. Takes an ``ir.Policy`` and its ``graph.PolicyGraph``; emits no
diagnostics. specs/obligations.md section 1 gives the rules the indexes serve.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fxverify.graph import PolicyGraph, access_regions, by_region_uses
from fxverify.ir import Access, AccessMode, Edge, Handoff, Policy, Region
from fxverify.vocab import ReleaseKind

if TYPE_CHECKING:
    from fxverify.obligations.parametric import Parametric


def _containers(regions: dict[str, list[Region]], handed: set[str]) -> dict[str, frozenset[str]]:
    """For every region inside a region of ``handed`` (names), the regions of ``handed`` that
    contain it (itself included when it is one): same space, ``Q.base <= R.base`` and
    ``R.end <= Q.end``. ``regions`` holds each space's regions sorted by base, then name
    (``_by_base``). Found by bisecting them (O(n log n + pairs))."""
    if not handed:
        return {}
    out: dict[str, set[str]] = defaultdict(set)
    for regs in regions.values():
        bases = [r.base for r in regs]
        for q in regs:
            if q.name not in handed:
                continue
            out[q.name].add(q.name)
            for r in regs[bisect.bisect_left(bases, q.base):bisect.bisect_left(bases, q.end)]:
                if r.end <= q.end:
                    out[r.name].add(q.name)
    return {k: frozenset(v) for k, v in out.items()}


def _by_base(policy: Policy) -> dict[str, list[Region]]:
    """Each space's regions, sorted by base, then name (``_containers``)."""
    by_space: dict[str, list[Region]] = defaultdict(list)
    for r in policy.regions:
        by_space[r.space].append(r)
    for regs in by_space.values():
        regs.sort(key=lambda r: (r.base, r.name))
    return by_space


def _inverse(containers: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """``outer -> [outer, inner...]`` from ``inner -> {outer...}`` (``_containers``)."""
    out: dict[str, list[str]] = defaultdict(list)
    for inner, outers in sorted(containers.items()):
        for q in outers:
            out[q].append(inner)
    # most regions contain no other (a block of a pool): their list is themselves alone
    return {q: rs if len(rs) == 1 else sorted(rs, key=lambda r: (r != q, r)) for q, rs in out.items()}


#: The ``Context`` ownership indexes built on first use, together (``Context._index``), and the
#: event indexes most families read (``Context._events``: cancellations and allocations), built
#: apart, so that a process whose shards read only these never builds the others (a forked
#: worker, ``gate.forked``). INVARIANT: exactly the attributes each method sets
#: (tests/test_graph.py checks it), so a read of any of them builds its group, and a misspelled
#: attribute is still an ``AttributeError``.
_OWNERSHIP = frozenset({"moved_by", "leased_by", "moves", "covers", "revoked_by", "revoke_covers", "allocated_by",
                   "alloc_covers", "handoffs", "leases", "releases", "revokes"})
_EVENTS = frozenset({"allocs", "cancellers"})


class Context:
    """The policy, its graph and indexes that several families share."""

    def __init__(self, policy: Policy, graph: PolicyGraph) -> None:
        self.policy = policy
        self.graph = graph
        #: the parametric prover (``obligations.parametric.Parametric``) when the check uses one:
        #: a family asks it first, and generates unrolled only what it did not prove
        self.parametric: Parametric | None = None

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute not set yet: the indexes of ``_OWNERSHIP`` are built
        # together on the first read of any of them, and so are those of ``_EVENTS`` (a re-check
        # that takes every family reading them from the result cache never builds them).
        if name in _OWNERSHIP:
            self._index()
            return self.__dict__[name]
        if name in _EVENTS:
            self._events()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _index(self) -> None:
        """Build the ownership indexes (``_OWNERSHIP``) of the policy."""
        policy = self.policy
        regions = _by_base(policy)
        #: region -> the handed-off regions whose handoffs move its bytes: itself and every region
        #: of the same space that contains it (specs/obligations.md section 1, enclosing handoffs).
        self.moved_by: dict[str, frozenset[str]] = _containers(regions, {h.region for e in policy.edges for h in e.handoffs})
        #: region -> the leased regions whose leases cover it: itself and every region of the same
        #: space that contains it (a lease of a pool lets the lessee read the blocks inside it).
        self.leased_by: dict[str, frozenset[str]] = _containers(regions, {ls.region for e in policy.edges for ls in e.leases})
        #: The inverses: handed-off (leased) region -> the regions its handoff moves (its lease
        #: covers), itself first, then the regions inside it by name.
        self.moves: dict[str, list[str]] = _inverse(self.moved_by)
        self.covers: dict[str, list[str]] = _inverse(self.leased_by)
        #: region -> the revoked regions whose revokes end leases of it: itself and every region of
        #: the same space that contains it (revoking a pool's lease revokes its blocks' too), and
        #: the inverse (revoked region -> the regions its revoke covers, itself first).
        self.revoked_by: dict[str, frozenset[str]] = _containers(regions, {rv.region for e in policy.edges for rv in e.revokes})
        self.revoke_covers: dict[str, list[str]] = _inverse(self.revoked_by)
        #: region -> the allocated regions whose ``alloc`` gives it a new owner: itself and every
        #: region of the same space that contains it, and the inverse (specs/obligations.md
        #: section 1, lifetimes).
        self.allocated_by: dict[str, frozenset[str]] = _containers(regions, {a.region for e in policy.edges for a in e.allocs})
        self.alloc_covers: dict[str, list[str]] = _inverse(self.allocated_by)
        #: region -> ids of the edges that set its owner when they finish: a handoff that applies
        #: to it (its own or an enclosing region's) or an ``alloc`` of it (or of an enclosing
        #: region), each edge once, ascending.
        self.handoffs: dict[str, list[int]] = defaultdict(list)
        self.leases: dict[str, list[int]] = defaultdict(list)
        self.releases: dict[str, list[int]] = defaultdict(list)
        #: (region, device) -> ids of the edges that revoke a lease of ``region`` (or of a region
        #: containing it) from ``device``, each edge once, ascending.
        self.revokes: dict[tuple[str, str], list[int]] = defaultdict(list)
        for e in policy.edges:
            if not (e.handoffs or e.allocs or e.leases or e.releases or e.revokes):
                continue  # most edges: nothing to index
            for region in sorted({r for h in e.handoffs for r in self.moves[h.region]}
                                 | {r for a in e.allocs for r in self.alloc_covers[a.region]}):
                self.handoffs[region].append(e.eid)
            for region in sorted({r for ls in e.leases for r in self.covers[ls.region]}):
                self.leases[region].append(e.eid)
            for r in e.releases:
                self.releases[r.region].append(e.eid)
            for region, dev in sorted({(r, rv.device) for rv in e.revokes for r in self.revoke_covers[rv.region]}):
                self.revokes[(region, dev)].append(e.eid)

    def _events(self) -> None:
        """Build the event indexes (``_EVENTS``) of the policy."""
        #: region -> ids of the edges that ``alloc`` it by name, ascending (its lifetime events
        #: are these and ``releases``: obligations.lifetimes).
        self.allocs: dict[str, list[int]] = defaultdict(list)
        #: edge id -> ids of the edges that cancel it, ascending (specs/obligations.md section 1,
        #: cancellation): a cancelled edge touches its bytes only until the first of them finishes.
        self.cancellers: dict[int, list[int]] = defaultdict(list)
        ids = {e.name: e.eid for e in self.policy.edges}
        for e in self.policy.edges:
            for c in e.cancels:
                if c.edge in ids and e.eid not in self.cancellers[ids[c.edge]]:
                    self.cancellers[ids[c.edge]].append(e.eid)
            for region in sorted({a.region for a in e.allocs}):
                self.allocs[region].append(e.eid)

    @property
    def uses(self) -> dict[str, list[int]]:
        """``graph.by_region_uses`` of the policy, built on first use (a re-check that takes
        the families reading it from the result cache never builds it) together with
        ``touched`` (``_by_access``)."""
        hit = self.__dict__.get("_uses")
        if hit is None:
            self._by_access()
            hit = self.__dict__["_uses"]
        return hit

    def _by_access(self) -> None:
        """Build ``uses`` and ``touched`` (those not built yet) from one ``graph.access_regions``
        sweep, which is then dropped: on a full-size policy it holds a million accesses."""
        met = access_regions(self.policy)
        if "_uses" not in self.__dict__:
            self.__dict__["_uses"] = by_region_uses(self.policy, met)
        if "_touched" not in self.__dict__:
            self.__dict__["_touched"] = self._governing(met)

    def forget(self, caches: Iterable[str]) -> None:
        """Drop the named caches (the keys that ``touched``, ``owner_checks`` and the rules'
        helpers keep in ``__dict__``) to free their memory; one read again is rebuilt, so only
        time is at stake, never a verdict."""
        for name in caches:
            self.__dict__.pop(name, None)

    def cancelled_by(self, *eids: int) -> list[int]:
        """The edges that cancel any of ``eids``, each once, ascending (empty for transfers nobody
        cancels)."""
        return sorted({c for e in eids for c in self.cancellers.get(e, ())})

    def handoff_clauses(self, eid: int, region: str) -> list[Handoff]:
        """The handoff clauses of edge ``eid`` that move ``region`` (its own, or an enclosing
        region's), in written order."""
        movers = self.moved_by.get(region, frozenset())
        return [h for h in self.policy.edges[eid].handoffs if h.region in movers]

    def clauses_sharing_bytes(self, eid: int, region: str) -> list[Handoff]:
        """The handoff clauses of edge ``eid`` whose region shares a byte with ``region`` (same
        space, ranges intersecting: its own clauses, enclosing, nested and overlapping views), in
        written order. One edge gives any byte to one new owner (FX-OWN-003)."""
        r = self.policy.region(region)
        out = []
        for h in self.policy.edges[eid].handoffs:
            q = self.policy.region(h.region)
            if q.space == r.space and q.base < r.end and r.base < q.end:
                out.append(h)
        return out

    def true_handoffs(self, region: str) -> list[int]:
        """The edges of ``handoffs[region]`` that hand ``region`` off (its own clause or an
        enclosing region's), without the ``alloc``s that only give it a new owner, ascending.
        Built once per region (do not modify the list)."""
        memo = self.__dict__.setdefault("_true_handoffs", {})
        got = memo.get(region)
        if got is None:
            memo[region] = got = [h for h in self.handoffs.get(region, ()) if self.handoff_clauses(h, region)]
        return got

    def handoff_dst(self, eid: int, region: str) -> str:
        """The owner ``region`` gets when edge ``eid`` finishes: the destination of the last
        clause of ``eid`` that moves it (clauses apply in written order).

        An ``alloc`` of ``region`` (or of a region containing it) on ``eid`` gives it to the
        allocating device (``resolve`` rejects an edge that both allocates and hands off the same
        bytes, FX-TYP-002).

        Raises ``KeyError`` when no clause of ``eid`` moves ``region`` (``eid`` not in
        ``handoffs[region]``)."""
        allocating = self.allocated_by.get(region, frozenset())
        for a in reversed(self.policy.edges[eid].allocs):
            if a.region in allocating:
                return a.device
        clauses = self.handoff_clauses(eid, region)
        if not clauses:
            raise KeyError(region)
        return clauses[-1].dst

    def touched(self) -> dict[int, dict[str, bool]]:
        """Map each edge id to the regions that govern the bytes its footprints touch, and whether
        it writes (or reduces into) them. Cached.

        Each access is taken on its own, within its footprint's address space. Regions of one
        alias set may overlap and have different owners. The bytes an access touches inside region
        ``R`` are governed by ``R`` unless a strictly smaller region of the same space, touched by
        the same access and nested inside ``R``, contains all of them (a block inside its layer's
        view: the block's owner and leases decide). Views that only overlap both govern, and ties
        keep both, so each owner is checked.
        """
        hit = self.__dict__.get("_touched")
        if hit is None:
            self._by_access()
            hit = self.__dict__["_touched"]
        return hit

    def _governing(self, met: dict[tuple[int, int], list[Region]]) -> dict[int, dict[str, bool]]:
        """``touched`` from ``met`` (``graph.access_regions``)."""
        read = AccessMode.READ
        out: dict[int, dict[str, bool]] = {}
        # in (edge id, position) order, as the keys of ``met`` sorted, without sorting them.
        # INVARIANT: ``policy.edges[i].eid == i`` (``ir.Edge``: an edge's id is its position).
        for eid, pos, a in ((e.eid, pos, a) for e in self.policy.edges for pos, a in enumerate(e.accesses())):
            regions = met.get((eid, pos))
            if regions is None:
                continue  # touches no region
            got = out.setdefault(eid, {})
            writes = a.mode is not read
            if len(regions) == 1:  # one region: nothing nested in it speaks for its bytes
                name = regions[0].name
                got[name] = got.get(name, False) or writes
                continue
            lo, hi = a.footprint.base, a.footprint.hi
            if len(regions) == 2:  # the common case (a block inside its layer's view), unrolled
                r1, r2 = regions
                e1, e2 = r1.base + r1.size, r2.base + r2.size
                same = (max(lo, r1.base), min(hi, e1)) == (max(lo, r2.base), min(hi, e2))
                if not (same and r2.size < r1.size and r1.base <= r2.base and e2 <= e1):
                    got[r1.name] = got.get(r1.name, False) or writes
                if not (same and r1.size < r2.size and r2.base <= r1.base and e1 <= e2):
                    got[r2.name] = got.get(r2.name, False) or writes
                continue
            # A region r2 nested inside `reg` holds all the bytes the access touches in `reg`
            # exactly when it touches the same clipped range [lo, hi) (inside `reg`, its clip is
            # a subset of `reg`'s): so only regions of the same clip are compared, which keeps an
            # access over a pool of many blocks linear in the blocks.
            clips = [(lo if lo > reg.base else reg.base, hi if hi < reg.end else reg.end) for reg in regions]
            same_clip: dict[tuple[int, int], list[Region]] = {}
            for reg, clip in zip(regions, clips):
                same_clip.setdefault(clip, []).append(reg)
            for reg, clip in zip(regions, clips):
                # Only a region nested inside `reg` may speak for its bytes: a view that merely
                # overlaps `reg` is not moved by `reg`'s handoffs, so both govern.
                if not any(r2.size < reg.size and reg.base <= r2.base and r2.end <= reg.end for r2 in same_clip[clip]):
                    got[reg.name] = got.get(reg.name, False) or writes
        return out

    def owner_checks(self) -> dict[int, dict[str, bool]]:
        """Map each edge id to the regions whose owner it must be (or lessee, when the value is
        ``False``) when it starts: those it touches (``touched``), those it releases, which
        only the owner may do (a lease is not enough: a lessee that frees a block frees another
        device's memory), and those whose leases it revokes (only the lender's side may end a
        lease). One exception: the device whose memory holds a region may ``unlock`` it
        (the host unpins the pages it pinned for a DMA, whoever owns the data). Cached.

        Source: specs/obligations.md section 1 (who may release)."""
        hit = self.__dict__.get("_owner_checks")
        if hit is None:
            out = {eid: dict(regions) for eid, regions in self.touched().items()}
            for e in self.policy.edges:
                for rel in e.releases:
                    home = self.policy.space(self.policy.region(rel.region).space).device
                    if not (rel.kind is ReleaseKind.UNLOCK and e.device == home):
                        out.setdefault(e.eid, {})[rel.region] = True
                for rv in e.revokes:
                    out.setdefault(e.eid, {})[rv.region] = True
            hit = self.__dict__["_owner_checks"] = out
        return hit

    def edge(self, eid: int) -> Edge:
        """Return edge ``eid``."""
        return self.policy.edges[eid]

    @property
    def notifiers(self) -> dict[str, list[int]]:
        """Edge name -> the ids of the edges that notify it complete (``notifies``), ascending;
        built on first use (a trace of a refutation asks it, ``Obligation.waited_for``)."""
        hit = self.__dict__.get("_notifiers")
        if hit is None:
            hit = {}
            for e in self.policy.edges:
                for name in e.notifies:
                    hit.setdefault(name, []).append(e.eid)
            self.__dict__["_notifiers"] = hit
        return hit

    def accesses_by_space(self) -> dict[str, list[tuple[int, int, Access]]]:
        """Map each space to ``(eid, position, access)`` triples sorted by footprint ``lo``.
        Cached (several families sweep them); do not modify the lists."""
        hit = self.__dict__.get("_by_space")
        if hit is None:
            hit = defaultdict(list)
            for e in self.policy.edges:
                for i, acc in enumerate(e.accesses()):
                    hit[acc.footprint.space].append((e.eid, i, acc))
            for v in hit.values():
                # stable: accesses starting at one byte stay in (edge id, position) order, as
                # they were appended
                v.sort(key=lambda t: t[2].footprint.base)
            self.__dict__["_by_space"] = hit
        return hit
