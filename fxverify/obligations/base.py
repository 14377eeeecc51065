"""The obligation model shared by every family.

An ``Obligation`` states one property of a policy. It can:
- ``prove_fast()``: try an exact proof without the solver (HB reachability, interval arithmetic,
  constant evaluation) and return the method's name, or ``None``;
- ``certificate()``: the same proof with its evidence (``fxverify.certificate``), which
  ``fxverify.certify`` re-validates from the IR alone (``check --certify``);
- ``encode()``: build the SMT ``Query`` whose answer ``query.expect`` proves it;
- ``witness(result)``: turn a refuting model into a ``Witness`` of IR values, reading the model
  through the terms ``encode`` built.
Families subclass it. ``Context`` carries the policy and its graph, with indexes shared by the
families. Emits no diagnostics itself.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

import networkx as nx

from fxverify.certificate import CancelledFirst, Certificate, Evidence, HbPath
from fxverify.diagnostics.codes import Code, Family
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint
from fxverify.graph import PolicyGraph, access_regions, by_region_uses
from fxverify.ir import Access, AccessMode, Edge, Handoff, Policy, Region
from fxverify.obligations.encode import finish, start
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.source import Span
from fxverify.vocab import AC_OPS, ReleaseKind

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


class Obligation(ABC):
    """One property to discharge. Subclasses set the class attribute ``code`` and implement
    ``encode``, ``witness`` and ``message``; ``prove_fast``, ``why`` and ``fix`` are optional.

    ``edges`` are the primary edge ids in role order; ``key`` is stable across runs (names only).
    """

    code: ClassVar[Code]
    #: The terms of the last ``encode`` that ``witness`` reads the model through.
    _probes: tuple = ()
    #: True when the property does not depend on the schedule (sizes, bounds, paths, classes):
    #: such obligations are still checked when happens-before is cyclic.
    schedule_free: bool = False
    #: True when no other obligation can have the same key (the family makes each key once by
    #: construction), so generation need not remember it to drop repeats.
    unique_key: bool = False

    @property
    def family(self) -> Family:
        """The obligation family of ``code``."""
        return self.code.family

    def __init__(self, ctx: Context, edges: tuple[int, ...], key: str, primary: Span,
                 related: tuple[Label, ...] = ()) -> None:
        self.ctx = ctx
        self.edges = edges
        self.key = key
        self.primary = primary
        self.related = related

    # -- what a subclass provides -----------------------------------------------------------
    def prove_fast(self) -> str | None:
        """Return the name of an exact non-solver proof that holds, or ``None``."""
        return None

    def evidence(self) -> Evidence | None:
        """The evidence of the proof ``prove_fast`` finds (``fxverify.certificate``), or ``None``
        when there is none. Slower than ``prove_fast`` (it builds HB paths), so it is asked only
        for ``check --certify``."""
        return None

    def certificate(self) -> Certificate | None:
        """The certificate of this obligation's fast proof: its key, code and edges as the
        obligation holds them, the method ``prove_fast`` names and ``evidence()``; ``None`` when
        either is missing (``check --certify`` reports that as FX-INT-001)."""
        method, ev = self.prove_fast(), self.evidence()
        if method is None or ev is None:
            return None
        return Certificate(self.key, str(self.code), method, tuple(self.edges), ev)

    def path(self, a: int, b: int) -> HbPath | None:
        """The HB path from edge ``a`` to edge ``b`` (``graph.hb_path``), or ``None``."""
        p = self.ctx.graph.hb_path(a, b)
        return None if p is None else HbPath(tuple(p))

    def cancel_before(self, cancellable: tuple[int, ...], targets: tuple[int, ...]) -> tuple[int, int, int] | None:
        """``(cancel, cancelled, target)``: an edge that cancels one of ``cancellable`` and
        happens-before one of ``targets`` (the first found, in id order), or ``None``. A cancelled
        edge touches its bytes only until its cancel finishes (specs/obligations.md section 1,
        cancellation): with the cancel HB-before the other edge of a pair the two never touch bytes
        at once, and with it HB-before the cancelled edge itself, that edge touches none."""
        g = self.ctx.graph
        for x in cancellable:
            for c in self.ctx.cancellers.get(x, ()):
                for y in targets:
                    if c != y and g.hb_before(c, y):
                        return c, x, y
        return None

    def order_method(self, ordered: bool, cancellable: tuple[int, ...], targets: tuple[int, ...]) -> str | None:
        """The fast proof of a pair property that an HB order or a cancel settles (FX-ORD-002,
        FX-OWN-002, FX-OWN-004 of a release): ``hb-reachability`` when ``ordered`` (HB orders the
        pair), else ``cancel-order`` when ``cancel_before(cancellable, targets)`` finds a cancel,
        else ``None``. The method names the argument the certificate makes (``hb-order`` or
        ``cancel-order``, ``certificate.METHOD_KINDS``)."""
        if ordered:
            return "hb-reachability"
        return "cancel-order" if self.cancel_before(cancellable, targets) is not None else None

    def cancelled_first(self, cancellable: tuple[int, ...], targets: tuple[int, ...]) -> CancelledFirst | None:
        """The ``cancel-order`` evidence of ``cancel_before``, or ``None``."""
        hit = self.cancel_before(cancellable, targets)
        if hit is None:
            return None
        c, x, y = hit
        p = self.path(c, y)
        return None if p is None else CancelledFirst(c, x, p)

    def either_path(self, a: int, b: int) -> HbPath | None:
        """An HB path between ``a`` and ``b`` in either direction (``a`` first tried first)."""
        return self.path(a, b) or self.path(b, a)

    @abstractmethod
    def encode(self) -> Query:
        """Return the SMT query; ``query.expect`` is the answer that proves the obligation."""

    def probe(self) -> Query | None:
        """A cheaper query to try before ``encode``'s when no fast proof holds, or ``None``: its
        constraints those of ``encode`` and its violation some of the disjuncts of ``encode``'s,
        so that each of its models is one of ``encode``'s. A refuting answer refutes the obligation
        (its witness read as ``witness`` reads ``encode``'s, and replayed as every witness is); any
        other answer proves nothing, and ``encode``'s query is sent (``pipeline.discharge_obligations``).
        For obligations whose violation is a disjunction over many event pairs (a block pool's
        lifetime: cubic in its allocations) of which the HB graph already names the likely one."""
        return None

    def guess(self) -> dict[str, int | bool] | None:
        """A candidate model of ``encode``'s query made without a solver, or ``None``: values for
        every variable of the query (those of its objectives too), named as ``encode`` names them.
        Called after ``encode`` or ``probe`` built the query it is checked against (a witness is
        read through that query's terms). The
        pipeline evaluates every assertion of the query under it (``smt.terms.evaluate``, exact
        integer arithmetic) and, when all hold, the query is satisfiable and the obligation
        refuted by that model: its witness is read and replayed as a solver's is. A guess that
        fails an assertion proves nothing, and the query goes to the solver. For obligations whose
        violation the IR already shows concretely (two accesses HB leaves unordered, with a byte
        in common), by the thousand in a pool that waits for the wrong free."""
        return None

    @abstractmethod
    def witness(self, result: Result) -> Witness:
        """Turn a refuting solver result into a witness; call it on the obligation whose
        ``encode`` made the query (it reads the model through that query's terms)."""

    @abstractmethod
    def message(self, w: Witness) -> str:
        """One-line message for the refutation (Cedar style: lowercase, names in backticks)."""

    def why(self, w: Witness) -> str:
        """The rule that the witness breaks, in one sentence."""
        return ""

    def fix(self, w: Witness) -> Hint:
        """The fix hint: options of edits (``fxverify.edits``) that name the missing ordering,
        owner or size, each written and applied as the same object; ``fxverify.hints`` shows
        only those that discharge the finding when applied. Default: none."""
        return Hint()

    def culprits(self) -> tuple[int, ...]:
        """The edges the finding blames, in role order: those whose events break the rule and the
        message names. A finding's fingerprint hashes their names (``Diagnostic.edges``), so an
        edge that only explains the bug (a flush elsewhere, an earlier handoff) never changes it.
        Default: every primary edge."""
        return self.edges

    def undecided(self) -> tuple[int, ...]:
        """The edges an unknown verdict of this obligation names (FX-SMT-001): its message and
        fingerprint hash their names, so a baseline that accepts it keeps matching. Default:
        every primary edge."""
        return self.edges

    def violating(self, w: Witness) -> Step | None:
        """The violating event of ``w``, the step its trace marks. Default, for a witness with a
        schedule: the start of the culprit that starts last (on a tie, the one of larger id, which
        the trace lists later): for an overlap, the second start of the overlapping pair; for a
        read that comes too early, the read. ``None`` (the trace marks its last step) for
        schedule-independent witnesses and cycles."""
        timed = [e for e in self.culprits() if e in w.schedule]
        if not timed:
            return None
        return Step(max(timed, key=lambda e: (w.schedule[e][0], e)), "start")

    def context(self, w: Witness) -> tuple[int, ...]:
        """Edges that are not primary but that a trace shows, because they make the HB chain
        matter (the message sent too early after a posted write; the other writers of a map
        entry): ascending ids. Default: the inner edges of a shortest HB path between each two
        HB-ordered primary edges (one chain, not every edge between them, so a trace stays short;
        a query eliminates them, ``encode.projected_schedule``, and the trace times them at their
        earliest, ``encode.eliminated_times``), and what the violating edge waited for
        (``waited_for``)."""
        if self.schedule_free:
            return ()
        g, prim = self.ctx.graph, sorted(set(self.edges))
        out: set[int] = set()
        for a in prim:
            for b in prim:
                if a != b and g.hb_before(a, b):
                    out.update(nx.shortest_path(g.hb, a, b)[1:-1])
        step = self.violating(w) if w.schedule and g.is_acyclic() else None
        if step is not None:
            out.update(self.waited_for(step.edge))
        return tuple(sorted(out - set(prim)))

    def waited_for(self, v: int) -> list[int]:
        """What violating edge ``v`` waited for, that a trace shows: every edge HB-before ``v``
        that reports a primary edge complete (``notifies``: the notification sent too early),
        then ``v``'s other immediate HB predecessors (the message, flush or stream step it
        started right after), at most three in all, by id."""
        g, pol = self.ctx.graph, self.ctx.policy
        prim = set(self.edges)
        names = {pol.edges[e].name for e in prim}
        told = sorted({x for n in names for x in self.ctx.notifiers.get(n, ()) if x not in prim and g.hb_before(x, v)})
        preds = sorted(p for p in g.predecessors(v) if p not in prim and p not in told)
        return (sorted(told) + preds)[:3]

    def trace_regions(self) -> tuple[str, ...]:
        """Regions a finding about regions rather than edges shows in its trace (one ``region``
        event each, the last one marked). Default: none."""
        return ()

    # -- shared helpers ---------------------------------------------------------------------
    def name(self, eid: int) -> str:
        """Instance name of edge ``eid``."""
        return self.ctx.policy.edges[eid].name

    def header(self) -> tuple[str, ...]:
        """Header comment lines for the SMT-LIB2 dump: policy, code, edges involved."""
        pol = self.ctx.policy
        lines = [f"fxverify obligation {self.code}", f"policy: {pol.name} ({pol.path})", f"key: {self.key}"]
        for eid in self.edges:
            lines.append(f"edge {eid} = {pol.edges[eid].name}")
        return tuple(lines)

    def schedule_of(self, result: Result, eids: tuple[int, ...] | None = None) -> dict[int, tuple[int, int]]:
        """The ``(start, finish)`` the model gives the primary edges (or ``eids``), in ns."""
        out: dict[int, tuple[int, int]] = {}
        for e in (self.edges if eids is None else eids):
            sv, fv = result.value(start(e)), result.value(finish(e))
            if isinstance(sv, int) and isinstance(fv, int):
                out[e] = (sv, fv)
        return out


def conflict_kind(a: Access, b: Access) -> str | None:
    """Classify two accesses to a shared byte (BRIEF section 2).

    Returns ``"race"`` for a conflict (at least one writes; a reduction against a plain read or
    write counts as a write, and so does a non-atomic reduction against any reduction: its load
    and store can interleave with the other's update, which is then lost), ``"reduce"`` for two
    atomic reductions that do not commute (different operators, or an operator outside
    ``vocab.AC_OPS``: FX-XF-004), and ``None`` for no conflict (two reads, or two atomic
    reductions with the same associative and commutative operator; specs/language.md, `reduce`).
    """
    ma, mb = a.mode, b.mode
    if ma is AccessMode.READ and mb is AccessMode.READ:
        return None
    if ma is AccessMode.REDUCE and mb is AccessMode.REDUCE and a.atomic and b.atomic:
        if a.op == b.op and a.op in AC_OPS:
            return None
        return "reduce"
    return "race"
