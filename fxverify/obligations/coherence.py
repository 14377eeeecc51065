"""Ordering across hosts: FX-ORD-005 (a read of non-coherent memory without the writer's write-back
and the reader's invalidate in between) and FX-ORD-006 (a notification that may start before a
transfer it reports has finished).

Takes a ``Context``; yields ``Obligation`` objects (``ordering.generate`` calls ``generate``). The
rules and their sources are in ``specs/obligations.md`` section 1 ("Non-coherent shared memory",
"Notifications"):

- A ``noncoherent`` space is memory several hosts share without cross-host coherence (CXL 2.0,
  section 2.4.1 and CXL 3.x section 2.5, multi-headed and pooled Type-3 memory: a host's caches
  are not snooped for another host's accesses unless the device implements back-invalidate). A
  *host* is a device that reaches the space through its own cache: ``cpu``, ``gpu`` and ``npu``
  (``HOSTS``). A store by host A reaches memory only when A writes the line back and a fence
  orders the write-back (Intel SDM vol. 2A, CLWB/CLFLUSHOPT: "executing SFENCE ... ensures the
  write-back is complete"); host B sees memory only for lines it invalidated after that (a line
  cached, or speculatively prefetched, before the write-back stays stale). We model the fence as
  the write-back edge finishing: a ``writeback`` clause takes effect when its edge finishes, an
  ``invalidate`` clause drops the lines when its edge starts (the line may be refetched any time
  after, so the write-back must have finished before the invalidate starts).
- ``notifies E, ...`` adds no happens-before: the notification carries HB only from transfers that
  have finished, so each must be HB-before the notifying edge.
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.certificate import Evidence, Ordered, WrittenBack
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint, Invalidate, Writeback, after, hint
from fxverify.ir import AccessMode, Footprint
from fxverify.obligations.base import Context, Obligation, overlapping_pairs
from fxverify.obligations.encode import (
    contains, finish, member, relevant_edges, schedule, start, time_objectives,
)
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import TRUE, and_, int_var, not_
from fxverify.vocab import DeviceKind

#: Device kinds that access a space through their own cache (the "hosts" of FX-ORD-005). DMA
#: engines (``dpu``, ``nic``, ``nvme``) and the memory's own devices read and write memory through
#: the coherence domain of the host they are attached to, which the policy does not model.
HOSTS: frozenset[DeviceKind] = frozenset({DeviceKind.CPU, DeviceKind.GPU, DeviceKind.NPU})

#: ``(edge id, clause position)`` of a write-back or invalidate footprint.
CacheRef = tuple[int, int]


def covers(fp: Footprint, lo: int, hi: int) -> bool:
    """True when ``fp`` holds every byte of ``[lo, hi)``: it is contiguous (``count == 1`` or
    ``stride <= elem``) and spans the range. Used only for fast proofs (a strided cover goes to the
    solver, which is exact)."""
    return (fp.count == 1 or fp.stride <= fp.elem) and fp.base <= lo and hi <= fp.base + (fp.count - 1) * fp.stride + fp.elem


def shared_hull(a: Footprint, b: Footprint) -> tuple[int, int]:
    """``[lo, hi)``: the smallest range holding every byte ``a`` and ``b`` share (may be empty)."""
    return max(a.base, b.base), min(a.base + (a.count - 1) * a.stride + a.elem, b.base + (b.count - 1) * b.stride + b.elem)


class NonCoherentRead(Obligation):
    """FX-ORD-005: host ``r``'s read of bytes host ``w`` wrote in a ``noncoherent`` space, after the
    write, is preceded by a write-back by ``w``'s device (``w`` itself or an edge HB-after it) that
    finishes before an invalidate by ``r``'s device (``r`` itself or an edge HB-before it) starts,
    both covering the byte. ``wbs``/``invs``: every write-back and invalidate footprint of those
    devices on the space."""

    code = codes.ORD_005

    def __init__(self, ctx: Context, w: int, pw: int, r: int, pr: int,
                 wbs: tuple[CacheRef, ...], invs: tuple[CacheRef, ...]) -> None:
        ew, er = ctx.edge(w), ctx.edge(r)
        self.acc_w, self.acc_r = ew.accesses()[pw], er.accesses()[pr]
        self.wbs, self.invs = wbs, invs
        others = tuple(dict.fromkeys(x for x, _ in wbs + invs if x not in (w, r)))
        super().__init__(ctx, (w, r) + others, f"{self.code}:{ew.name}#{pw}|{er.name}#{pr}", er.span,
                         (Label(ew.span, f"`{ew.name}` writes here on `{ew.device}`"),))

    def _chain(self) -> tuple[CacheRef, CacheRef] | None:
        """A write-back and an invalidate that cover the shared bytes and are HB-ordered between
        the write and the read in every schedule, or ``None``."""
        g = self.ctx.graph
        w, r = self.edges[:2]
        lo, hi = shared_hull(self.acc_w.footprint, self.acc_r.footprint)
        E = self.ctx.policy.edges
        for x, i in self.wbs:
            if not (covers(E[x].writebacks[i], lo, hi) and (x == w or g.hb_before(w, x))):
                continue
            for y, j in self.invs:
                if covers(E[y].invalidates[j], lo, hi) and g.hb_before(x, y) and (y == r or g.hb_before(y, r)):
                    return (x, i), (y, j)
        return None

    def prove_fast(self) -> str | None:
        return "hb-reachability" if self._chain() is not None else None

    def evidence(self) -> Evidence | None:
        chain = self._chain()
        if chain is None:
            return None
        (x, i), (y, j) = chain
        w, r = self.edges[:2]
        between = self.path(x, y)
        assert between is not None  # INVARIANT: _chain checked hb_before(x, y)
        lo, hi = shared_hull(self.acc_w.footprint, self.acc_r.footprint)
        return WrittenBack(lo, hi, x, i, y, j, None if x == w else self.path(w, x), between,
                           None if y == r else self.path(y, r))

    def encode(self) -> Query:
        w, r = self.edges[:2]
        E = self.ctx.policy.edges
        addr = int_var("addr")
        mw, kw = member(self.acc_w.footprint, addr, "w")
        mr, kr = member(self.acc_r.footprint, addr, "r")
        self._probes = (addr, kw, kr)
        cons = schedule(self.ctx.graph, relevant_edges(self.ctx.graph, self.edges))
        cons += [("shared_byte_w", mw), ("shared_byte_r", mr), ("read_after_write", finish(w) <= start(r))]
        for x, i in self.wbs:
            # A write-back takes effect when its edge finishes (the fence completing), after the
            # edge's own writes; it counts only for stores finished before it starts.
            wb = and_(contains(E[x].writebacks[i], addr), finish(w) <= start(x) if x != w else TRUE)
            for y, j in self.invs:
                # An invalidate drops the lines when its edge starts (the reader's own: before its
                # reads); the line may be refetched after, so the write-back must have finished.
                inv = and_(contains(E[y].invalidates[j], addr), finish(y) <= start(r) if y != r else TRUE)
                cons.append((f"stale_{x}_{i}_{y}_{j}", not_(and_(wb, inv, finish(x) <= start(y)))))
        return Query(self.key, tuple(cons), minimize=(addr, kw, kr, *time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        w, r = self.edges[:2]
        addr, kw, kr = self._probes
        wit = Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.acc_w.footprint.space,
                      elements={w: result.int(kw), r: result.int(kr)})
        wit.values["missing"] = self._missing(wit)
        return wit

    def _missing(self, wit: Witness) -> str:
        """Which step the witness schedule lacks, for the message: ``writeback``, ``invalidate`` or
        ``order`` (both happen, but the invalidate starts before the write-back finishes)."""
        w, r = self.edges[:2]
        E, sch, a = self.ctx.policy.edges, wit.schedule, wit.address
        if a is None:
            return "writeback"
        done = [x for x, i in self.wbs if x in sch and E[x].writebacks[i].contains(a) and (x == w or sch[w][1] <= sch[x][0])]
        if not done:
            return "writeback"
        inv = [y for y, j in self.invs if y in sch and E[y].invalidates[j].contains(a) and (y == r or sch[y][1] <= sch[r][0])]
        if not inv:
            return "invalidate"
        wit.values["writeback"], wit.values["invalidate"] = E[done[0]].name, E[inv[-1]].name
        return "order"

    def culprits(self) -> tuple[int, ...]:
        """The writer and the reader; write-backs and invalidates only explain."""
        return self.edges[:2]

    def message(self, w: Witness) -> str:
        a, b = self.edges[:2]
        A, B = self.ctx.edge(a).device, self.ctx.edge(b).device
        space = self.acc_w.footprint.space
        missing = w.values.get("missing", "writeback")
        step = {"writeback": f"`{A}` writes them back", "invalidate": f"`{B}` invalidates them after the write-back",
                "order": f"`{B}`'s invalidate starts after `{A}`'s write-back finishes"}[str(missing)]
        return (f"`{self.name(b)}` on `{B}` reads bytes of non-coherent `{space}` that `{self.name(a)}` wrote on `{A}`, "
                f"but not after {step}")

    def why(self, w: Witness) -> str:
        return ("without cross-host coherence a store reaches another host only through memory: the writer's "
                "write-back (flush and fence), then the reader's invalidate, then the read")

    def fix(self, w: Witness) -> Hint:
        """The invalidate after the write-back it must follow; else the step the witness lacks: a
        write-back by the writer and an invalidate by the reader of the regions they access (the
        read comes after the write, which orders them)."""
        a, b = self.edges[:2]
        if w.values.get("missing") == "order":
            x, y = str(w.values["writeback"]), str(w.values["invalidate"])
            return hint(after(y, x) if x != y else None)
        inv = Invalidate(self.name(b), self.acc_r.footprint.region)
        if w.values.get("missing") == "invalidate":
            return hint(inv)
        return hint((Writeback(self.name(a), self.acc_w.footprint.region), inv))


class EarlyNotify(Obligation):
    """FX-ORD-006: transfer ``t`` that edge ``n`` ``notifies`` finishes before ``n`` starts, in
    every schedule. The query asks for a schedule where ``s(n) < f(t)``."""

    code = codes.ORD_006

    def __init__(self, ctx: Context, n: int, t: int) -> None:
        en, et = ctx.edge(n), ctx.edge(t)
        super().__init__(ctx, (t, n), f"{self.code}:{en.name}|{et.name}", en.span,
                         (Label(et.span, f"`{et.name}` is the transfer it reports"),))

    def prove_fast(self) -> str | None:
        t, n = self.edges
        return "hb-reachability" if self.ctx.graph.hb_before(t, n) else None

    def evidence(self) -> Evidence | None:
        t, n = self.edges
        p = self.path(t, n)
        return None if p is None else Ordered(p)

    def encode(self) -> Query:
        t, n = self.edges
        cons = schedule(self.ctx.graph, relevant_edges(self.ctx.graph, self.edges))
        cons.append(("in_flight", start(n) < finish(t)))
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        return Witness(schedule=self.schedule_of(result))

    def violating(self, w: Witness) -> Step | None:
        """The notification's start (the transfer is still in flight then)."""
        return Step(self.edges[1], "notify")

    def message(self, w: Witness) -> str:
        t, n = self.edges
        return f"`{self.name(n)}` notifies `{self.name(t)}`, but may start while `{self.name(t)}` is still in flight"

    def why(self, w: Witness) -> str:
        return ("a notification carries happens-before only from transfers that have completed: a consumer "
                "ordered after it may read bytes the transfer has not delivered yet")

    def fix(self, w: Witness) -> Hint:
        """Order the notification after every transfer it reports that may still be in flight
        (one ``after`` for the whole batch: ordering it after one leaves the others racing)."""
        t, n = self.edges
        g, pol = self.ctx.graph, self.ctx.policy
        late = [x for x in dict.fromkeys([t] + [pol.edge(m).eid for m in self.ctx.edge(n).notifies]) if not g.hb_before(x, n)]
        return hint(after(self.name(n), *[self.name(x) for x in late]))


def generate(ctx: Context) -> Iterator[Obligation]:
    """Yield FX-ORD-005 for every write and later cross-host read of a shared byte in a
    ``noncoherent`` space (both on hosts; pairs where the read always runs first are skipped, like
    FX-ORD-003's), and FX-ORD-006 for every transfer an edge ``notifies``."""
    pol, g = ctx.policy, ctx.graph
    for e in pol.edges:
        for name in e.notifies:
            yield EarlyNotify(ctx, e.eid, pol.edge(name).eid)
    noncoherent = {s.name for s in pol.spaces if s.noncoherent}
    if not noncoherent:
        return
    hosts = {d.name for d in pol.devices if d.kind in HOSTS}
    wbs: dict[tuple[str, str], list[CacheRef]] = {}
    invs: dict[tuple[str, str], list[CacheRef]] = {}
    for e in pol.edges:
        for i, fp in enumerate(e.writebacks):
            wbs.setdefault((e.device, fp.space), []).append((e.eid, i))
        for j, fp in enumerate(e.invalidates):
            invs.setdefault((e.device, fp.space), []).append((e.eid, j))
    for a, pa, b, pb in overlapping_pairs(ctx):
        for w, pw, r, pr in ((a, pa, b, pb), (b, pb, a, pa)):
            ew, er = pol.edges[w], pol.edges[r]
            acc_w, acc_r = ew.accesses()[pw], er.accesses()[pr]
            space = acc_w.footprint.space
            if acc_w.mode is AccessMode.READ or acc_r.mode is AccessMode.WRITE or space not in noncoherent:
                continue
            if ew.device == er.device or ew.device not in hosts or er.device not in hosts or g.hb_before(r, w):
                continue
            yield NonCoherentRead(ctx, w, pw, r, pr, tuple(wbs.get((ew.device, space), ())),
                                  tuple(invs.get((er.device, space), ())))
