"""Which device can observe that an edge has finished, and how far the orderings a fix adds are
from waits that hardware can perform (specs/output.md, "Fix hints": can observe).

An ``after X`` clause may name any edge, but a device waits only on what it can see: its own
work, a completion or doorbell, bytes or a map entry that land where it polls. A fix hint that
makes a NIC wait on a CPU store it never sees is true of the schedules and useless to the
engineer. This module ranks the new orderings of a candidate fix (``rank``: same device, an
edge the waiting device can observe, or neither) and rewrites an ordering across devices into
ones the devices can carry (``rewrites``), so that ``fxverify.hints`` tries and shows those
first.

Takes a policy as written and its ``PolicyGraph``; produces ranks (``SAME``, ``OBSERVED``,
``UNOBSERVED``), the words a last-resort hint adds (``needs``) and rewritten ``After`` edits.
Deterministic: everything is in edge-id order. Emits no diagnostics.
"""

from __future__ import annotations

from collections import defaultdict

from fxverify.edits import After, FamilyAfter
from fxverify.edits.base import Option
from fxverify.graph import PolicyGraph
from fxverify.ir import AccessMode, Edge, MapOpKind, Policy
from fxverify.obligations.definers import reads, writes
from fxverify.vocab import ClassKind

#: An ordering between edges of one device (its program order, a stream wait, a fence), or one
#: the policy already has: the device performs it.
SAME = 0
#: An ordering across devices whose waiting device can observe the edge it waits for.
OBSERVED = 1
#: An ordering across devices that the waiting device has no way to observe: a last resort.
UNOBSERVED = 2

#: Rewrites of one kind proposed per ordering.
MAX_REWRITES = 2

_WRITES = (MapOpKind.WRITE, MapOpKind.UPDATE)
_READS = (MapOpKind.READ, MapOpKind.GUARD, MapOpKind.AGGREGATE)
#: Map classes whose readers see a write that happens-before them (specs/obligations.md
#: section 1, maps): a flag in one of them is a signal.
_VISIBLE = (ClassKind.CAUSAL, ClassKind.LINEARIZABLE)


class Observers:
    """Observability in ``policy`` (as written; ``graph`` is its ``PolicyGraph``).

    A device ``D`` *can observe* that edge ``X`` has finished when (specs/output.md, "Fix hints"):

    1. ``X`` runs on ``D`` (its own work, ordered by program order, a stream or a fence);
    2. ``X`` is a signal to ``D``: it ``notifies`` a transfer (a completion entry, a doorbell, a
       ready flag), or it writes bytes of an address space homed on ``D`` and no edge
       ``notifies`` it (a doorbell write into ``D``'s registers, a message landing in ``D``'s
       memory; a payload whose completion an edge reports is observed through that edge), or it
       writes an entry of a ``causal`` or ``linearizable`` map that an edge on ``D`` reads;
    3. some edge on ``D`` is HB-after ``X`` in the policy as written: ``D`` already learns that
       ``X`` has finished, through orderings the policy declares.
    """

    def __init__(self, policy: Policy, graph: PolicyGraph) -> None:
        self.policy, self.graph = policy, graph
        self.on: dict[str, list[int]] = defaultdict(list)
        for e in policy.edges:
            self.on[e.device].append(e.eid)
        self.notified = frozenset(n for e in policy.edges for n in e.notifies)
        self.map_readers: dict[str, set[str]] = defaultdict(set)
        for e in policy.edges:
            for op in e.map_ops:
                if op.kind in _READS:
                    self.map_readers[op.map].add(e.device)
        self._seen: dict[tuple[int, str], bool] = {}

    def signal(self, x: Edge, device: str, policy: Policy | None = None) -> bool:
        """True when edge ``x`` (of ``policy``, by default the one as written) is a signal to
        ``device`` (rule 2 of the class docstring)."""
        pol = policy or self.policy
        if x.notifies:
            return True
        if x.name not in self.notified and any(
                a.mode is not AccessMode.READ and pol.space(a.footprint.space).device == device for a in x.accesses()):
            return True
        for op in x.map_ops:
            if op.kind in _WRITES and pol.has("map", op.map) and pol.map(op.map).cls.kind in _VISIBLE \
                    and device in self.map_readers.get(op.map, ()):
                return True
        return False

    def observes(self, x: int, device: str) -> bool:
        """True when ``device`` can observe that edge ``x`` (of the policy as written) has
        finished (class docstring). Memoised."""
        key = (x, device)
        if key not in self._seen:
            e = self.policy.edges[x]
            g = self.graph
            self._seen[key] = (e.device == device or self.signal(e, device)
                               or (g.is_acyclic() and any(g.hb_before(x, y) for y in self.on.get(device, ()))))
        return self._seen[key]

    def pair_rank(self, edited: Policy, pred: str, edge: str) -> int:
        """The rank of the ordering ``after pred`` on ``edge`` in ``edited`` (a policy made from
        the one as written by a fix; either edge may be new there): ``SAME`` when both run on one
        device, when ``edge`` reports ``pred``'s completion (``notifies`` it: the ordering is the
        one that notification declares) or when the policy as written has it already;
        ``OBSERVED`` when ``edge``'s device can observe ``pred``; else ``UNOBSERVED``."""
        p, e = edited.edge(pred), edited.edge(edge)
        if p.device == e.device or pred in e.notifies:
            return SAME
        pol = self.policy
        if pol.has("edge", pred) and pol.has("edge", edge):
            x, y = pol.edge(pred).eid, pol.edge(edge).eid
            if self.graph.is_acyclic() and self.graph.hb_before(x, y):
                return SAME
        if pol.has("edge", pred):
            return OBSERVED if self.observes(pol.edge(pred).eid, e.device) else UNOBSERVED
        return OBSERVED if self.signal(p, e.device, edited) else UNOBSERVED

    def orderings(self, edited: Policy) -> list[tuple[str, str]]:
        """The orderings ``(pred, edge)`` that ``edited`` has and the policy as written does not:
        each name added to an edge's ``after`` list, and every ``after`` of a new edge, in
        ``edited``'s edge order. An edge instance an edit left as it was (the same object: edits
        replace only the edges they change, ``edits.base.with_edge``) adds none."""
        pol = self.policy
        kept = pol.edges
        out = []
        for e in edited.edges:
            if e.eid < len(kept) and kept[e.eid] is e:
                continue
            old = set(pol.edge(e.name).after) if pol.has("edge", e.name) else set()
            out += [(p, e.name) for p in e.after if p not in old]
        return out

    def rank(self, edited: Policy) -> tuple[int, list[tuple[str, str]]]:
        """``(rank, unobserved)`` of a fix whose result is ``edited``: the highest rank of its new
        orderings (``SAME`` when it adds none), and those of rank ``UNOBSERVED``."""
        return self.rank_orderings(edited, self.orderings(edited))

    def rank_orderings(self, edited: Policy, new: list[tuple[str, str]]) -> tuple[int, list[tuple[str, str]]]:
        """``rank`` of the orderings ``new`` (``(pred, edge)``, as ``orderings`` gives them) that a
        fix adds to make ``edited``; ``edited`` may be the policy as written itself when the fix
        only adds orderings (``added_orderings``): ``pair_rank`` reads only edges' devices and
        notifications, which such a fix leaves alone."""
        worst, bad = SAME, []
        for p, e in new:
            r = self.pair_rank(edited, p, e)
            worst = max(worst, r)
            if r == UNOBSERVED:
                bad.append((p, e))
        return worst, bad

    def added_orderings(self, edits: list[After]) -> list[tuple[str, str]] | None:
        """The orderings ``(pred, edge)`` that ``edits``, applied in order to the policy as written,
        add (``orderings`` of the result, in the same order), computed without applying them:
        ``None`` when one of them would not apply (``After.apply``: a missing edge or predecessor,
        a repeated one, the edge itself, one already in its ``after`` list). Linear in the edits,
        where applying rebuilds the policy (``Verifier.rank`` ranks hundreds of candidates)."""
        pol = self.policy
        added: dict[int, list[str]] = {}
        for ed in edits:
            if not pol.has("edge", ed.edge) or not ed.preds or len(set(ed.preds)) != len(ed.preds):
                return None
            e = pol.edge(ed.edge)
            now = added.setdefault(e.eid, [])
            if any(p == ed.edge or p in e.after or p in now or not pol.has("edge", p) for p in ed.preds):
                return None
            now += ed.preds
        return [(p, pol.edges[eid].name) for eid in sorted(added) for p in added[eid]]

    def rewrites(self, ed: After) -> list[After]:
        """Orderings across devices that carry ``ed`` (``after X`` on ``E``, ``X`` and ``E`` on
        different devices and HB-unordered) through edges their devices can observe, in this
        order, at most ``MAX_REWRITES`` of each kind, each closest first:

        - ``after X`` on an edge ``W`` of ``X``'s device that ``E`` already runs after (the
          doorbell after the descriptor store it announces);
        - ``after Y`` on ``E``, for an edge ``Y`` of ``E``'s device already HB-after ``X`` (the
          poll of the completion entry);
        - ``after Z`` on ``E``, for an edge ``Z`` HB-after ``X`` that is a signal to ``E``'s
          device (the completion entry, the message that lands in its memory).

        Empty when ``ed`` has several predecessors, or is not an ordering across devices between
        unordered edges."""
        pol, g = self.policy, self.graph
        if len(ed.preds) != 1 or not g.is_acyclic() or not pol.has("edge", ed.edge) or not pol.has("edge", ed.preds[0]):
            return []
        x, e = pol.edge(ed.preds[0]), pol.edge(ed.edge)
        if x.device == e.device or g.ordered(x.eid, e.eid):
            return []
        carriers = [w for w in self.on[x.device] if w != x.eid and g.hb_before(w, e.eid) and not g.ordered(w, x.eid)]
        observers = [y for y in self.on[e.device] if y != e.eid and g.hb_before(x.eid, y) and not g.hb_before(e.eid, y)]
        signals = [z.eid for z in pol.edges if z.eid not in (x.eid, e.eid) and z.device != e.device
                   and g.hb_before(x.eid, z.eid) and not g.hb_before(e.eid, z.eid) and self.signal(z, e.device)]
        out = [After(pol.edges[w].name, (x.name,)) for w in self._last(carriers)]
        out += [After(e.name, (pol.edges[y].name,)) for y in self._first(observers)]
        out += [After(e.name, (pol.edges[z].name,)) for z in self._first(signals)]
        return out

    def _first(self, eids: list[int]) -> list[int]:
        """The HB-minimal of ``eids`` (none of the others before them), at most ``MAX_REWRITES``."""
        g = self.graph
        return [a for a in eids if not any(g.hb_before(b, a) for b in eids)][:MAX_REWRITES]

    def _last(self, eids: list[int]) -> list[int]:
        """The HB-maximal of ``eids`` (none of the others after them), at most ``MAX_REWRITES``."""
        g = self.graph
        return [a for a in eids if not any(g.hb_before(a, b) for b in eids)][:MAX_REWRITES]


def needs(policy: Policy, edited: Policy, bad: list[tuple[str, str]], option: Option) -> str:
    """What must carry the unobserved orderings ``bad`` of ``option`` (its result is
    ``edited``): ``"`D` cannot observe `X` on `A`, so this ordering needs a completion or
    notification from `X` to `E`"``, each ordering once, named as the option writes it (the
    orderings a family edit adds to the instances of its declaration by that edit's words)."""
    said: dict[tuple[str, str], tuple[str, str]] = {}
    for ed in option.edits:
        if isinstance(ed, FamilyAfter) and edited.has("edge", ed.edge):
            decl = edited.edge(ed.edge)
            for e in edited.edges:
                if e.family == decl.family and e.span == decl.span:
                    for p in e.after:
                        said[(p, e.name)] = (ed.pred(), ed.pattern)
    parts = []
    for p, e in bad:
        wp, we = said.get((p, e), (p, e))
        parts.append(f"`{edited.edge(e).device}` cannot observe `{wp}` on `{edited.edge(p).device}`, so this ordering "
                     f"needs a completion or notification from `{wp}` to `{we}`")
    return "; ".join(dict.fromkeys(parts))


def reaching_writes(policy: Policy, graph: PolicyGraph, eid: int) -> dict[int, frozenset[int]]:
    """Per reading access position of edge ``eid``: the edges whose writes reach it, the writes
    (or reductions) of other edges that meet its footprint and happen-before it with no other
    such write HB-between them (the HB-latest ones), nor an ``alloc`` of a region meeting the
    footprint: a write of a block's previous allocation defines nothing for a read in the next
    (specs/obligations.md, FX-INIT-001, same allocation). For hint filtering only: it decides no
    verdict, and partial overwrites are not subtracted."""
    e = policy.edges[eid]
    out: dict[int, frozenset[int]] = {}
    for pos, a in enumerate(e.accesses()):
        if not reads(a):
            continue
        fp = a.footprint
        before = [x.eid for x in policy.edges if x.eid != eid and graph.hb_before(x.eid, eid) and any(
            writes(b) and b.footprint.space == fp.space and b.footprint.meets(fp.lo, fp.hi) and fp.meets(b.footprint.lo, b.footprint.hi)
            for b in x.accesses())]
        fresh = [x.eid for x in policy.edges if x.eid != eid and graph.hb_before(x.eid, eid) and any(
            (r := policy.region(al.region)).space == fp.space and fp.meets(r.base, r.end) for al in x.allocs)]
        out[pos] = frozenset(w for w in before if not any(o != w and graph.hb_before(w, o) for o in before)
                             and not any(graph.hb_before(w, x) for x in fresh))
    return out
