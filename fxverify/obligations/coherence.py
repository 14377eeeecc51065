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
- A device without a host cache (the DMA engine of a NIC, DPU or NVMe controller, the memory's
  near-memory engine) reads and writes the memory itself, unless it reaches the memory through a
  host's root port, where its accesses snoop that host's cache and behave as that host's
  (``cache_domains``). So a host's store it reads needs the host's write-back before the read
  (no invalidate on its side), and a host that reads what it wrote needs its own invalidate after
  the write has landed and before the read.
- ``notifies E, ...`` adds no happens-before: the notification carries HB only from transfers that
  have finished, so each must be HB-before the notifying edge.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator, Sequence

from fxverify.certificate import Evidence, Ordered, WrittenBack
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint, Invalidate, Writeback, after, hint
from fxverify.ir import AccessMode, Footprint
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.pairs import pairs_where
from fxverify.obligations.encode import contains, finish, member, projected_schedule, start, time_objectives
from fxverify.obligations.witness import Step as TraceStep, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import TRUE, Term, and_, int_var, not_, or_
from fxverify.vocab import DeviceKind

#: Device kinds that access a space through their own cache (the "hosts" of FX-ORD-005). Other
#: devices (DMA engines of ``dpu``, ``nic``, ``nvme``; the memory's own near-memory engine;
#: switches) have no host cache: they reach memory directly, or through the cache domain of the
#: host whose root port they sit behind (``cache_domains``).
HOSTS: frozenset[DeviceKind] = frozenset({DeviceKind.CPU, DeviceKind.GPU, DeviceKind.NPU})

#: The cache domain of an access that reaches the memory with no host cache in between (device
#: names are identifiers, never empty).
MEMORY = ""

#: ``(edge id, clause position)`` of a write-back or invalidate footprint.
CacheRef = tuple[int, int]


def cache_domains(ctx: Context, dev: str, space: str) -> tuple[str, ...]:
    """The caches an access by device ``dev`` to ``space`` may go through, sorted (``MEMORY``
    first): ``(dev,)`` for a host. For a device without a host cache, with ``M`` the device of the
    space (specs/obligations.md section 1, non-coherent shared memory):

    - ``MEMORY`` when ``dev`` is ``M`` itself (a near-memory engine), or when a chain of links
      reaches ``M`` from ``dev`` through devices that are neither hosts nor ``M``, ``M`` not being
      a host: the access goes to the memory itself;
    - each host ``H`` that such a chain reaches first, when ``H`` is ``M`` or reaches ``M`` by a
      chain of links that avoids ``dev``: the access enters ``H``'s root port, and a DMA access
      through a host is coherent with that host's cache (it snoops it), so it behaves as ``H``'s
      own load or store.

    Routes are not pinned for this (the policy does not say which root port a DMA engine's
    accesses to a space use), so every candidate counts. Cached on the context."""
    cache = ctx.__dict__.setdefault("_cache_domains", {})
    home = ctx.policy.space(space).device
    key = (dev, home)
    if key in cache:
        return cache[key]
    pol = ctx.policy
    hosts = {d.name for d in pol.devices if d.kind in HOSTS}
    out: set[str] = set()
    if dev in hosts:
        out.add(dev)
    elif dev == home:
        out.add(MEMORY)
    else:
        adj: dict[str, set[str]] = {}
        for ln in pol.links:
            adj.setdefault(ln.a, set()).add(ln.b)
            adj.setdefault(ln.b, set()).add(ln.a)
        seen, todo = {dev}, [dev]
        while todo:
            u = todo.pop()
            for x in adj.get(u, ()):
                if x == home:
                    out.add(home if home in hosts else MEMORY)
                elif x in hosts:
                    if _reaches_avoiding(adj, x, home, dev):
                        out.add(x)
                elif x not in seen:
                    seen.add(x)
                    todo.append(x)
        if not out:
            out.add(MEMORY)  # no path at all: FX-HOOK-001's business; the access cannot happen
    cache[key] = tuple(sorted(out))
    return cache[key]


def _reaches_avoiding(adj: dict[str, set[str]], src: str, dst: str, avoid: str) -> bool:
    """True when a chain of links leads from ``src`` to ``dst`` without entering ``avoid``."""
    seen, todo = {src, avoid}, [src]
    while todo:
        u = todo.pop()
        if u == dst:
            return True
        for x in adj.get(u, ()):
            if x not in seen:
                seen.add(x)
                todo.append(x)
    return False


def covers(fp: Footprint, lo: int, hi: int) -> bool:
    """True when ``fp`` holds every byte of ``[lo, hi)``: it is contiguous (``count == 1`` or
    ``stride <= elem``) and spans the range. Used only for fast proofs (a strided cover goes to the
    solver, which is exact)."""
    return (fp.count == 1 or fp.stride <= fp.elem) and fp.base <= lo and hi <= fp.base + (fp.count - 1) * fp.stride + fp.elem


def shared_hull(a: Footprint, b: Footprint) -> tuple[int, int]:
    """``[lo, hi)``: the smallest range holding every byte ``a`` and ``b`` share (may be empty)."""
    return max(a.base, b.base), min(a.base + (a.count - 1) * a.stride + a.elem, b.base + (b.count - 1) * b.stride + b.elem)


#: A way a write reaches memory, or a read drops stale lines: ``(edge id, clause position)``, the
#: position ``-1`` standing for the access itself when its side is ``MEMORY`` (the write lands in
#: memory when its edge finishes; the read fetches from memory when its edge starts).
CacheStep = tuple[int, int]


class CacheClauses:
    """The write-back (or invalidate) footprints of one space by one device, sorted by their lowest
    byte, to find those that meet a range in O(log n + candidates) instead of a scan of all of
    them (a spilled layer has one per KV block, and every block's FX-ORD-005 asks). The same
    window search as ``lower.watches``: a footprint meeting ``[lo, hi)`` starts in
    ``[lo - longest, hi)``."""

    def __init__(self, refs: Sequence[tuple[CacheRef, Footprint]]) -> None:
        items = sorted(((fp.lo, ref, fp) for ref, fp in refs), key=lambda t: (t[0], t[1]))
        self._los = [lo for lo, _, _ in items]
        self._items = [(ref, fp) for _, ref, fp in items]
        self._longest = max((fp.hi - fp.lo for _, fp in self._items), default=0)

    def meeting(self, lo: int, hi: int) -> tuple[CacheRef, ...]:
        """The references of the footprints that hold a byte of ``[lo, hi)`` (exact for strided
        ones: ``Footprint.meets``), in ``(edge id, clause position)`` order."""
        i, j = bisect.bisect_left(self._los, lo - self._longest), bisect.bisect_left(self._los, hi)
        return tuple(sorted(ref for ref, fp in self._items[i:j] if fp.meets(lo, hi)))


class NonCoherentRead(Obligation):
    """FX-ORD-005: the read ``r`` of bytes that ``w`` wrote in a ``noncoherent`` space, after the
    write, sees them, for every pair of cache domains ``(a, b)`` in ``combos`` the write and the
    read may go through (``cache_domains``, pairs with ``a == b`` left out: one cache, or memory
    on both sides, is coherent with itself). For a pair, the bytes reach memory when the write
    lands (``a`` is ``MEMORY``) or a write-back by host ``a`` (``w`` itself or an edge HB-after it)
    finishes, and the read sees memory from the start of the read (``b`` is ``MEMORY``) or of an
    invalidate by host ``b`` (``r`` itself or an edge HB-before it); the first must come no later
    than the second, both covering the byte. ``wbs``/``invs``: the write-back and invalidate
    footprints on the space, by device, that meet the hull of the bytes ``w`` and ``r`` share
    (``shared_hull``): one that meets none of them can neither land nor drop a shared byte, so
    leaving it out changes no verdict, and keeps the query, the trace and the edges a hint
    must not blame to the clauses that matter."""

    code = codes.ORD_005

    def __init__(self, ctx: Context, w: int, pw: int, r: int, pr: int, combos: tuple[tuple[str, str], ...],
                 wbs: dict[str, tuple[CacheRef, ...]], invs: dict[str, tuple[CacheRef, ...]]) -> None:
        ew, er = ctx.edge(w), ctx.edge(r)
        self.acc_w, self.acc_r = ew.accesses()[pw], er.accesses()[pr]
        self.combos = combos
        self.wbs = {a: wbs.get(a, ()) for a, _ in combos if a != MEMORY}
        self.invs = {b: invs.get(b, ()) for _, b in combos if b != MEMORY}
        refs = [x for v in self.wbs.values() for x, _ in v] + [y for v in self.invs.values() for y, _ in v]
        others = tuple(dict.fromkeys(x for x in sorted(refs) if x not in (w, r)))
        super().__init__(ctx, (w, r) + others, f"{self.code}:{ew.name}#{pw}|{er.name}#{pr}", er.span,
                         (Label(ew.span, f"`{ew.name}` writes here on `{ew.device}`"),))

    def _lands(self, a: str) -> list[CacheStep]:
        """The steps that put the written bytes in memory on side ``a``."""
        return [(self.edges[0], -1)] if a == MEMORY else list(self.wbs[a])

    def _drops(self, b: str) -> list[CacheStep]:
        """The steps after which the reader sees memory on side ``b``."""
        return [(self.edges[1], -1)] if b == MEMORY else list(self.invs[b])

    def _chain(self) -> tuple[CacheStep, CacheStep] | None:
        """A landing step and a dropping step that cover the shared bytes and are HB-ordered between
        the write and the read in every schedule, when the write and the read have one pair of
        cache domains (several go to the solver), or ``None``."""
        if len(self.combos) != 1:
            return None
        a, b = self.combos[0]
        g = self.ctx.graph
        w, r = self.edges[:2]
        lo, hi = shared_hull(self.acc_w.footprint, self.acc_r.footprint)
        E = self.ctx.policy.edges
        for x, i in self._lands(a):
            if not (i < 0 or (covers(E[x].writebacks[i], lo, hi) and (x == w or g.hb_before(w, x)))):
                continue
            for y, j in self._drops(b):
                if (j < 0 or covers(E[y].invalidates[j], lo, hi)) and g.hb_before(x, y) and (y == r or g.hb_before(y, r)):
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
        cons = projected_schedule(self.ctx.graph, self.edges)
        cons += [("shared_byte_w", mw), ("shared_byte_r", mr), ("read_after_write", finish(w) <= start(r))]
        per_combo: list[list[tuple[str, Term]]] = []
        for a, b in self.combos:
            stale: list[tuple[str, Term]] = []
            for x, i in self._lands(a):
                # A write-back takes effect when its edge finishes (the fence completing), after the
                # edge's own writes; it counts only for stores finished before it starts. A write
                # straight to memory lands when its edge finishes.
                lands = TRUE if i < 0 else and_(contains(E[x].writebacks[i], addr), finish(w) <= start(x) if x != w else TRUE)
                for y, j in self._drops(b):
                    # An invalidate drops the lines when its edge starts (the reader's own: before
                    # its reads); the line may be refetched after, so the bytes must be in memory by
                    # then. A read straight from memory sees it as of its start.
                    drops = TRUE if j < 0 else and_(contains(E[y].invalidates[j], addr),
                                                    finish(y) <= start(r) if y != r else TRUE)
                    # `mem_w`: the write landing in memory; `mem_r`: the read fetching from it.
                    label = f"stale_{f'{x}_{i}' if i >= 0 else 'mem_w'}_{f'{y}_{j}' if j >= 0 else 'mem_r'}"
                    stale.append((label, not_(and_(lands, drops, finish(x) <= start(y)))))
            per_combo.append(stale)
        if len(per_combo) == 1:
            cons += per_combo[0]
        else:
            cons.append(("stale_in_some_domain", or_(*[and_(*[t for _, t in st]) for st in per_combo])))
        return Query(self.key, tuple(cons), minimize=(addr, kw, kr, *time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        w, r = self.edges[:2]
        addr, kw, kr = self._probes
        wit = Witness(schedule=self.schedule_of(result), address=result.int(addr), space=self.acc_w.footprint.space,
                      elements={w: result.int(kw), r: result.int(kr)})
        a, b = self._stale_combo(wit)
        wit.values["missing"] = self._missing(wit, a, b)
        if a != self.ctx.edge(w).device:
            wit.values["writer_side"] = a or "memory"
        if b != self.ctx.edge(r).device:
            wit.values["reader_side"] = b or "memory"
        return wit

    def _fresh(self, wit: Witness, a: str, b: str) -> bool:
        """True when, in the witness schedule and at its address, the read sees the write on
        sides ``(a, b)``."""
        w, r = self.edges[:2]
        E, sch, addr = self.ctx.policy.edges, wit.schedule, wit.address
        if addr is None:
            return False
        for x, i in self._lands(a):
            if x not in sch or (i >= 0 and not (E[x].writebacks[i].contains(addr) and (x == w or sch[w][1] <= sch[x][0]))):
                continue
            for y, j in self._drops(b):
                if y not in sch or (j >= 0 and not (E[y].invalidates[j].contains(addr) and (y == r or sch[y][1] <= sch[r][0]))):
                    continue
                if sch[x][1] <= sch[y][0]:
                    return True
        return False

    def _stale_combo(self, wit: Witness) -> tuple[str, str]:
        """The first pair of cache domains on which the witness reads a stale line."""
        return next((c for c in self.combos if not self._fresh(wit, *c)), self.combos[0])

    def _missing(self, wit: Witness, a: str, b: str) -> str:
        """Which step the witness schedule lacks on sides ``(a, b)``, for the message:
        ``writeback``, ``invalidate`` or ``order`` (both happen, but the bytes reach memory after
        the reader's side dropped its lines)."""
        w, r = self.edges[:2]
        E, sch, addr = self.ctx.policy.edges, wit.schedule, wit.address
        if addr is None:
            return "writeback" if a != MEMORY else "invalidate"
        done = [x for x, i in self._lands(a) if x in sch and (i < 0 or (E[x].writebacks[i].contains(addr)
                                                                        and (x == w or sch[w][1] <= sch[x][0])))]
        if not done:
            return "writeback"
        inv = [y for y, j in self._drops(b) if y in sch and (j < 0 or (E[y].invalidates[j].contains(addr)
                                                                       and (y == r or sch[y][1] <= sch[r][0])))]
        if not inv or a == MEMORY:
            return "invalidate"
        wit.values["writeback"], wit.values["invalidate"] = E[done[0]].name, E[inv[-1]].name
        return "order"

    def culprits(self) -> tuple[int, ...]:
        """The writer and the reader; write-backs and invalidates only explain."""
        return self.edges[:2]

    def _sides(self, w: Witness) -> tuple[str, str]:
        """The pair of cache domains the witness is about (from its values; the devices when
        they are hosts)."""
        a, b = self.edges[:2]
        A, B = self.ctx.edge(a).device, self.ctx.edge(b).device
        ws, rs = w.values.get("writer_side"), w.values.get("reader_side")
        return (MEMORY if ws == "memory" else str(ws) if ws else A), (MEMORY if rs == "memory" else str(rs) if rs else B)

    def message(self, w: Witness) -> str:
        a, b = self.edges[:2]
        A, B = self.ctx.edge(a).device, self.ctx.edge(b).device
        sa, sb = self._sides(w)
        space = self.acc_w.footprint.space
        missing = str(w.values.get("missing", "writeback"))
        wrote = (f"on `{A}`" if sa == A else f"on `{A}`, straight to memory" if sa == MEMORY
                 else f"on `{A}`, through `{sa}`'s cache")
        reads = (f"on `{B}`" if sb == B else f"on `{B}` (straight from memory)" if sb == MEMORY
                 else f"on `{B}` (through `{sb}`'s cache)")
        if missing == "writeback":
            step = f"`{sa}` writes them back"
        elif missing == "invalidate":
            step = (f"`{sb}` invalidates them after the write lands" if sa == MEMORY
                    else f"`{sb}` invalidates them after the write-back")
        elif sb == MEMORY:
            step = f"`{sa}`'s write-back finishes"
        else:
            step = f"`{sb}`'s invalidate starts after `{sa}`'s write-back finishes"
        since = self._overwritten(w) if missing == "writeback" and sa not in (MEMORY, None) else None
        later = ("" if since is None else f": `{self.name(since)}` wrote them since, but a line `{sa}` left dirty may "
                 f"still be written back over its data")
        return (f"`{self.name(b)}` {reads} reads bytes of non-coherent `{space}` that `{self.name(a)}` wrote {wrote}, "
                f"but not after {step}{later}")

    def _overwritten(self, w: Witness) -> int | None:
        """An edge that writes the witness byte HB-after the write and HB-before the read (the
        next tenant filling the block), or ``None``: the read then sees that edge's data unless
        the writer's dirty line lands over it, which the message says."""
        a, b = self.edges[:2]
        g, addr, space = self.ctx.graph, w.address, self.acc_w.footprint.space
        if addr is None:
            return None
        for x, _pos, acc in self.ctx.accesses_by_space().get(space, ()):
            if acc.footprint.base > addr:
                break  # sorted by base: no later access holds the byte
            if (x not in (a, b) and acc.mode is not AccessMode.READ and acc.footprint.contains(addr)
                    and g.hb_before(a, x) and g.hb_before(x, b)):
                return x
        return None

    def why(self, w: Witness) -> str:
        sa, sb = self._sides(w)
        if MEMORY in (sa, sb):
            return ("without cross-host coherence a host's store reaches memory only when the host writes it back, "
                    "and a host sees memory only for lines it invalidated since; a device without a host cache "
                    "reads and writes the memory itself")
        return ("without cross-host coherence a store reaches another host only through memory: the writer's "
                "write-back (flush and fence), then the reader's invalidate, then the read")

    def fix(self, w: Witness) -> Hint:
        """The invalidate after the write-back it must follow; else the step the witness lacks: a
        write-back by the writer and an invalidate by the reader of the regions they access (the
        read comes after the write, which orders them)."""
        a, b = self.edges[:2]
        sa, sb = self._sides(w)
        A, B = self.ctx.edge(a).device, self.ctx.edge(b).device
        if w.values.get("missing") == "order":
            x, y = str(w.values["writeback"]), str(w.values["invalidate"])
            if sb == MEMORY:  # the reader reads the memory itself: the write-back must precede it
                return hint(after(self.name(b), x))
            return hint(after(y, x) if x != y else None)
        # A side that is the cache of a host the DMA engine sits behind needs an edge of that
        # host: the clause goes on one HB-between the write (its write-back) and the read, the
        # latest for an invalidate, the earliest for a write-back; none there, no edit.
        inv = Invalidate(self.name(b), self.acc_r.footprint.region) if sb == B else None
        wb = Writeback(self.name(a), self.acc_w.footprint.region) if sa == A else None
        if inv is None and sb != MEMORY:
            y = self._host_edge(sb, [x for x, _ in self._lands(sa)] or [a], latest=True)
            inv = None if y is None else Invalidate(self.name(y), self.acc_r.footprint.region)
        if wb is None and sa != MEMORY:
            x = self._host_edge(sa, [a], latest=False)
            wb = None if x is None else Writeback(self.name(x), self.acc_w.footprint.region)
        if sa == MEMORY:
            return hint(inv)
        if sb == MEMORY:
            return hint(wb)
        if w.values.get("missing") == "invalidate":
            return hint(inv)
        return hint((wb, inv) if wb is not None and inv is not None else None)

    def _host_edge(self, host: str, anchors: list[int], latest: bool) -> int | None:
        """An edge of device ``host`` HB-after one of ``anchors`` and HB-before the read: the
        last or the first in HB's linear extension (``latest``); ``None`` when none is, or on a
        cyclic HB."""
        g, r = self.ctx.graph, self.edges[1]
        if not g.is_acyclic():
            return None
        by_device = self.ctx.__dict__.get("_edges_by_device")
        if by_device is None:  # kept for the other refutations' hints
            by_device = self.ctx.__dict__["_edges_by_device"] = defaultdict(list)
            for e in self.ctx.policy.edges:
                by_device[e.device].append(e.eid)
        found = [y for y in by_device.get(host, ()) if y != r and g.hb_before(y, r) and any(g.hb_before(x, y) for x in anchors)]
        if not found:
            return None
        return (max if latest else min)(found, key=g.rank)


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
        cons = projected_schedule(self.ctx.graph, self.edges)
        cons.append(("in_flight", start(n) < finish(t)))
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header())

    def witness(self, result: Result) -> Witness:
        return Witness(schedule=self.schedule_of(result))

    def violating(self, w: Witness) -> TraceStep | None:
        """The notification's start (the transfer is still in flight then)."""
        return TraceStep(self.edges[1], "notify")

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
    """Yield FX-ORD-005 for every write and later read of a shared byte in a ``noncoherent`` space
    that may go through different cache domains (``cache_domains``: two hosts, a host and memory
    reached directly, or a host and a device behind another host; pairs where the read always
    runs first are skipped, like FX-ORD-003's), and FX-ORD-006 for every transfer an edge
    ``notifies``."""
    pol, g = ctx.policy, ctx.graph
    for e in pol.edges:
        for name in e.notifies:
            yield EarlyNotify(ctx, e.eid, pol.edge(name).eid)
    noncoherent = {s.name for s in pol.spaces if s.noncoherent}
    if not noncoherent:
        return
    wbs: dict[str, dict[str, list[tuple[CacheRef, Footprint]]]] = {}  # space -> device -> write-backs
    invs: dict[str, dict[str, list[tuple[CacheRef, Footprint]]]] = {}
    for e in pol.edges:
        for i, fp in enumerate(e.writebacks):
            wbs.setdefault(fp.space, {}).setdefault(e.device, []).append(((e.eid, i), fp))
        for j, fp in enumerate(e.invalidates):
            invs.setdefault(fp.space, {}).setdefault(e.device, []).append(((e.eid, j), fp))
    wb_index = {sp: {d: CacheClauses(v) for d, v in by.items()} for sp, by in wbs.items()}
    inv_index = {sp: {d: CacheClauses(v) for d, v in by.items()} for sp, by in invs.items()}
    # only a write (or reduction) and a read (or reduction) of a noncoherent space's bytes
    writer, reader = (lambda _e, _p, acc: acc.mode is not AccessMode.READ), (lambda _e, _p, acc: acc.mode is not AccessMode.WRITE)
    for a, pa, b, pb in pairs_where(ctx, writer, reader, spaces=noncoherent):
        for w, pw, r, pr in ((a, pa, b, pb), (b, pb, a, pa)):
            ew, er = pol.edges[w], pol.edges[r]
            acc_w, acc_r = ew.accesses()[pw], er.accesses()[pr]
            space = acc_w.footprint.space
            if acc_w.mode is AccessMode.READ or acc_r.mode is AccessMode.WRITE or space not in noncoherent:
                continue
            combos = tuple((x, y) for x in cache_domains(ctx, ew.device, space)
                           for y in cache_domains(ctx, er.device, space) if x != y)
            if not combos or g.hb_before(r, w):
                continue
            lo, hi = shared_hull(acc_w.footprint, acc_r.footprint)
            by_wb, by_inv = wb_index.get(space, {}), inv_index.get(space, {})
            yield NonCoherentRead(ctx, w, pw, r, pr, combos,
                                  {x: by_wb[x].meeting(lo, hi) for x, _ in combos if x in by_wb},
                                  {y: by_inv[y].meeting(lo, hi) for _, y in combos if y in by_inv})
