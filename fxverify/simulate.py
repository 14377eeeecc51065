"""The independent concrete simulator.

Takes an ``ir.Policy`` and a concrete schedule (edge id -> ``(start, finish)`` in ns) and reports
every violation that the schedule exhibits, by executing the execution model of BRIEF section 2
event by event. It is written from that model, not from the SMT encoding: it imports nothing from
``fxverify.smt`` or ``fxverify.obligations``, recomputes happens-before from ``after`` clauses and
streams by its own search, routes transfers by its own breadth-first search, and recomputes
worst-case transform sizes from the codecs' published bounds.

Uses:
- ``Simulator.confirm`` replays a counterexample before it is shown (BRIEF section 5);
- ``Simulator.explore`` enumerates every schedule of a small graph (brute force), which the
  property tests compare with the solver's verdicts.

Emits no diagnostics; returns ``Violation`` records.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fxverify.ir import (
    AC_OPS, DTYPE_BITS, AccessMode, ClassKind, Edge, Footprint, LinkOrder, MapOpKind, Policy, XfKind,
    canonical_dtype,
)

Schedule = dict[int, tuple[int, int]]


@dataclass(frozen=True, order=True)
class Violation:
    """One violation the simulator observed: its code, the edges involved (ids, in role order),
    the time (ns) and byte address where it shows, when they apply, and a short detail."""

    code: str
    edges: tuple[int, ...]
    time: int | None = None
    address: int | None = None
    detail: str = ""


def shared_byte(a: Footprint, b: Footprint) -> int | None:
    """Return the lowest byte in both footprints, or ``None`` (exact for strided footprints)."""
    for lo, _hi in _intersections(a, b):
        return lo
    return None


def _elements(fp: Footprint, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """Element intervals of ``fp`` that meet ``[lo, hi)``, clipped to it, in address order."""
    if fp.stride <= 0 or fp.count == 1 or fp.stride <= fp.elem:
        a, b = max(lo, fp.lo), min(hi, fp.hi)
        if a < b:
            yield a, b
        return
    k = max(0, (lo - fp.base - fp.elem) // fp.stride + 1)
    while k < fp.count:
        start = fp.base + k * fp.stride
        if start >= hi:
            return
        a, b = max(lo, start), min(hi, start + fp.elem)
        if a < b:
            yield a, b
        k += 1


def _intersections(a: Footprint, b: Footprint) -> Iterator[tuple[int, int]]:
    """Maximal-per-element intervals of bytes in both footprints, in address order."""
    if a.space != b.space:
        return
    for lo, hi in _elements(a, a.lo, a.hi):
        yield from _elements(b, lo, hi)


def worst_case_output(chain: tuple, n: int) -> int:
    """Worst-case output bytes of a transform chain on ``n`` input bytes.

    Bounds: lz4 ``LZ4_COMPRESSBOUND`` (lz4.h), zstd ``ZSTD_COMPRESSBOUND`` (zstd.h), zlib
    ``compressBound`` (compress.c), snappy ``MaxCompressedLength`` (snappy.cc).
    """
    for t in chain:
        k = t.kind
        if k is XfKind.COMPRESS:
            algo = t.param("algo")
            if algo == "lz4":
                n = n + n // 255 + 16
            elif algo == "zstd":
                n = n + (n >> 8) + (((128 << 10) - n) >> 11 if n < (128 << 10) else 0)
            elif algo == "deflate":
                n = n + (n >> 12) + (n >> 14) + (n >> 25) + 13
            else:
                n = 32 + n + n // 6
        elif k is XfKind.QUANTIZE:
            elems = n * 8 // DTYPE_BITS[str(t.param("src"))]
            out = -(-elems * DTYPE_BITS[str(t.param("dst"))] // 8)
            if t.param("group"):
                g = int(t.param("group"))
                out += -(-(-(-elems // g)) * DTYPE_BITS[str(t.param("scale", "fp32"))] // 8)
            n = out
        elif k is XfKind.FILTER:
            n = -(-n * int(t.param("keep", 100)) // 100)
        elif k is XfKind.SCATTER:
            n = -(-n // int(t.param("ways", 1)))
        elif k in (XfKind.GATHER, XfKind.REPLICATE):
            n = n * int(t.param("ways", 1))
    return n


class Simulator:
    """Concrete executions of one policy."""

    def __init__(self, policy: Policy) -> None:
        self.p = policy
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
        self._regions: dict[str, list] = {}
        for r in policy.regions:
            self._regions.setdefault(r.space, []).append(r)

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

    # -- routes, recomputed --------------------------------------------------------------------
    def route(self, src: str, dst: str, only_ordered: bool = False) -> list[str] | None:
        """Links of the first shortest path found breadth-first (neighbours in link order)."""
        if src == dst:
            return []
        adj: dict[str, list[tuple[str, str]]] = {}
        seen_pairs: set[frozenset[str]] = set()
        for ln in self.p.links:
            if only_ordered and ln.order is not LinkOrder.ORDERED:
                continue
            pair = frozenset((ln.a, ln.b))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)
            adj.setdefault(ln.a, []).append((ln.b, ln.name))
            adj.setdefault(ln.b, []).append((ln.a, ln.name))
        prev: dict[str, tuple[str, str] | None] = {src: None}
        frontier = [src]
        while frontier:
            nxt = []
            for n in frontier:
                for m, lname in adj.get(n, []):
                    if m not in prev:
                        prev[m] = (n, lname)
                        nxt.append(m)
            frontier = nxt
        if dst not in prev:
            return None
        out, cur = [], dst
        while prev[cur] is not None:
            n, lname = prev[cur]  # type: ignore[misc]
            out.append(lname)
            cur = n
        return out[::-1]

    def endpoints(self, e: Edge) -> tuple[str, str]:
        """Where an edge's bytes come from and go to (devices)."""
        sp = self.p.space
        if e.src is not None and e.dst is not None:
            return sp(e.src.space).device, sp(e.dst.space).device
        if e.dst is not None:
            return e.device, sp(e.dst.space).device
        if e.src is not None:
            return sp(e.src.space).device, e.device
        return e.device, e.device

    # -- schedule-dependent rules --------------------------------------------------------------
    def run(self, sched: Schedule) -> list[Violation]:
        """Every violation the schedule exhibits among its edges (sorted, deterministic)."""
        out: list[Violation] = []
        ids = sorted(sched)
        E = self.p.edges
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                out += self._pair(E[a], E[b], sched)
        out += self._posted(ids, sched)
        out += self._ownership(ids, sched)
        out += self._maps(ids, sched)
        out += self._accumulation(ids, sched)
        return sorted(set(out))

    @staticmethod
    def _overlap(sched: Schedule, a: int, b: int) -> bool:
        return sched[a][0] < sched[b][1] and sched[b][0] < sched[a][1]

    def _pair(self, ea: Edge, eb: Edge, sched: Schedule) -> list[Violation]:
        out: list[Violation] = []
        if not self._overlap(sched, ea.eid, eb.eid):
            return out
        for xa in ea.accesses():
            for xb in eb.accesses():
                if xa.mode is AccessMode.READ and xb.mode is AccessMode.READ:
                    continue
                addr = shared_byte(xa.footprint, xb.footprint)
                if addr is None:
                    continue
                t = max(sched[ea.eid][0], sched[eb.eid][0])
                if xa.mode is AccessMode.REDUCE and xb.mode is AccessMode.REDUCE:
                    if not (xa.op == xb.op and xa.op in AC_OPS):
                        out.append(Violation("FX-XF-004", (ea.eid, eb.eid), t, addr, "non-commuting reductions overlap"))
                else:
                    out.append(Violation("FX-ORD-002", (ea.eid, eb.eid), t, addr, "conflicting accesses overlap"))
        return out

    def _posted(self, ids: list[int], sched: Schedule) -> list[Violation]:
        out: list[Violation] = []
        E = self.p.edges
        for w in ids:
            ew = E[w]
            src, dst = self.endpoints(ew)
            route = (self.route(src, dst, only_ordered=True) if ew.require_in_order else None) or self.route(src, dst)
            posted = [ln for ln in (route or []) if self.p.link(ln).order is LinkOrder.POSTED]
            if not posted or ew.dst is None:
                continue
            for r in ids:
                er = E[r]
                if r == w or er.device == ew.device or sched[w][1] > sched[r][0]:
                    continue
                for xr in er.accesses():
                    if xr.mode is AccessMode.WRITE:
                        continue
                    addr = shared_byte(ew.dst, xr.footprint)
                    if addr is None:
                        continue
                    for ln in posted:
                        # A flush takes effect when its edge finishes; the writer may flush its own link.
                        flushed = any(ln in E[x].flushes and (x == w or sched[w][1] <= sched[x][0])
                                      and sched[x][1] <= sched[r][0] for x in ids)
                        if not flushed:
                            out.append(Violation("FX-ORD-003", (w, r), sched[r][0], addr, f"no flush of {ln}"))
        return out

    def owners_at(self, region: str, t: float, ids: list[int], sched: Schedule) -> set[str]:
        """Possible owners of ``region`` at time ``t``: the destination of the latest handoff that
        completed by ``t`` (every one of them on a tie), else the initial owner."""
        done = [(sched[h][1], ho.dst) for h in ids for ho in self.p.edges[h].handoffs
                if ho.region == region and sched[h][1] <= t]
        if not done:
            return {self.p.region(region).owner}
        last = max(x for x, _ in done)
        return {d for x, d in done if x == last}

    def _ownership(self, ids: list[int], sched: Schedule) -> list[Violation]:
        out: list[Violation] = []
        E = self.p.edges
        handoffs = {h: ho for h in ids for ho in E[h].handoffs}
        for e in ids:
            ee = E[e]
            touched = self.governing_regions(ee)
            for r, writes in touched.items():
                if any(ho.region == r and ho.src == ee.device for ho in ee.handoffs):
                    continue
                s = sched[e][0]
                if ee.device not in self.owners_at(r, s, ids, sched):
                    leased = (not writes) and any(
                        any(ls.region == r and ls.device == ee.device for ls in E[g].leases) and sched[g][1] <= s
                        and not any(ho.region == r and sched[g][1] <= sched[h][0] <= s
                                    for h in ids for ho in E[h].handoffs)
                        for g in ids)
                    if not leased:
                        out.append(Violation("FX-OWN-001", (e,), s, None, f"{ee.device} does not own {r}"))
                for h in ids:
                    if h != e and any(ho.region == r for ho in E[h].handoffs) and self._overlap(sched, e, h):
                        out.append(Violation("FX-OWN-002", (e, h), max(sched[e][0], sched[h][0]), None, r))
        for g in ids:
            for ls in E[g].leases:
                if E[g].device not in self.owners_at(ls.region, sched[g][0], ids, sched):
                    out.append(Violation("FX-OWN-003", (g,), sched[g][0], None, f"lease of {ls.region}"))
        for h in ids:
            for ho in E[h].handoffs:
                s = sched[h][0]
                bad = ho.src != E[h].device or ho.src not in self.owners_at(ho.region, s, ids, sched) or any(
                    o != h and self._overlap(sched, h, o) and any(x.region == ho.region for x in E[o].handoffs)
                    for o in ids)
                if bad:
                    out.append(Violation("FX-OWN-003", (h,), s, None, ho.region))
        for r in ids:
            for rel in E[r].releases:
                for u in ids:
                    if u == r:
                        continue
                    eu = E[u]
                    reg = self.p.region(rel.region)
                    whole = Footprint(reg.name, reg.space, reg.base, reg.size, reg.size, 1)
                    uses = ({x.region for x in eu.handoffs} | {x.region for x in eu.leases}
                            | {x.region for x in eu.releases})
                    touches = any(shared_byte(a.footprint, whole) is not None for a in eu.accesses())
                    if (touches or rel.region in uses) and sched[u][1] > sched[r][0]:
                        out.append(Violation("FX-OWN-004", (r, u), sched[r][0], None, rel.region))
        declared = {fo.region: fo.device for fo in self.p.final_owners}
        for region, dev in declared.items():
            finals = self.owners_at(region, float("inf"), ids, sched)
            if any(d != dev for d in finals):
                out.append(Violation("FX-OWN-005", (), None, None, region))
        del handoffs
        return out

    def governing_regions(self, e: Edge) -> dict[str, bool]:
        """Regions whose owner decides an edge's access, with whether it writes there: for every
        byte touched, the smallest regions containing it (BRIEF section 1: one owner per region;
        nested regions of an alias set delegate to the innermost). Memoised per edge."""
        if e.eid in self._governing:
            return self._governing[e.eid]
        out: dict[str, bool] = {}
        for acc in e.accesses():
            fp = acc.footprint
            regs = [r for r in self._regions.get(fp.space, ()) if r.base < fp.hi and fp.lo < r.end
                    and shared_byte(fp, Footprint(r.name, r.space, r.base, r.size, r.size, 1)) is not None]
            for r in regs:
                lo, hi = max(fp.lo, r.base), min(fp.hi, r.end)
                if any(q.size < r.size and q.base <= lo and hi <= q.end for q in regs):
                    continue
                out[r.name] = out.get(r.name, False) or acc.mode is not AccessMode.READ
        self._governing[e.eid] = out
        return out

    def final_owners(self, region: str, sched: Schedule) -> set[str]:
        """Possible owners of ``region`` after every edge of ``sched`` finished."""
        return self.owners_at(region, float("inf"), sorted(sched), sched)

    def _maps(self, ids: list[int], sched: Schedule) -> list[Violation]:
        out: list[Violation] = []
        E = self.p.edges
        ops = [(e, op) for e in ids for op in E[e].map_ops]
        for i, (a, oa) in enumerate(ops):
            decl = self.p.map(oa.map)
            for b, ob in ops[i + 1:]:
                if a == b or oa.map != ob.map or oa.key != ob.key:
                    continue
                both_write = oa.kind in (MapOpKind.WRITE, MapOpKind.UPDATE) and ob.kind in (MapOpKind.WRITE, MapOpKind.UPDATE)
                commute = oa.kind is MapOpKind.UPDATE and ob.kind is MapOpKind.UPDATE and decl.merge in AC_OPS
                slots = decl.cls.kind is ClassKind.PER_DEVICE and E[a].device != E[b].device
                if both_write and not commute and not slots and self._overlap(sched, a, b):
                    out.append(Violation("FX-MAP-002", (a, b), max(sched[a][0], sched[b][0]), None, oa.map))
        for g, og in ops:
            decl = self.p.map(og.map)
            for w, ow in ops:
                if w == g or ow.map != og.map or ow.key != og.key or ow.kind not in (MapOpKind.WRITE, MapOpKind.UPDATE):
                    continue
                sg, (sw, fw) = sched[g][0], sched[w]
                if og.kind is MapOpKind.GUARD and decl.cls.kind is ClassKind.EVENTUAL and sw < sg:
                    out.append(Violation("FX-MAP-003", (g, w), sg, None, og.map))
                if og.kind is MapOpKind.GUARD and decl.cls.kind is ClassKind.CAUSAL and (
                        sw < sg < fw or (fw <= sg and not self.hb(w, g))):
                    out.append(Violation("FX-MAP-003", (g, w), sg, None, og.map))
                if og.kind is MapOpKind.AGGREGATE and decl.cls.kind is ClassKind.PER_DEVICE and fw > sg:
                    out.append(Violation("FX-MAP-004", (g, w), sg, None, og.map))
        return out

    def _accumulation(self, ids: list[int], sched: Schedule) -> list[Violation]:
        out: list[Violation] = []
        E = self.p.edges
        for r in ids:
            for xr in E[r].accesses():
                if xr.mode is not AccessMode.REDUCE:
                    continue
                for w in ids:
                    if w == r or sched[r][1] > sched[w][0]:
                        continue
                    for xw in E[w].accesses():
                        if xw.mode is not AccessMode.WRITE:
                            continue
                        addr = self._unread_shared(xr.footprint, xw.footprint, r, w, ids, sched)
                        if addr is not None:
                            out.append(Violation("FX-XF-004", (r, w), sched[w][0], addr, "accumulated bytes overwritten"))
        return out

    def _unread_shared(self, fr: Footprint, fw: Footprint, r: int, w: int, ids: list[int], sched: Schedule) -> int | None:
        """Lowest byte in both footprints that no edge reads between ``r`` finishing and ``w`` starting."""
        E = self.p.edges
        readers = [x.footprint for y in ids if y != r and sched[r][1] <= sched[y][0] and sched[y][1] <= sched[w][0]
                   for x in E[y].accesses() if x.mode is AccessMode.READ]
        for lo, hi in _intersections(fr, fw):
            x = lo
            while x < hi:
                cover = [fx for fx in readers if fx.contains(x)]
                if not cover:
                    return x
                x = max(fx.base + (fx.element_of(x) or 0) * fx.stride + fx.elem for fx in cover)
        return None

    # -- schedule-independent rules ------------------------------------------------------------
    def static(self) -> list[Violation]:
        """Violations that hold in every schedule: bounds, alias sets, in-place legality, transform
        sizes, checksum chains, dtypes, fabric paths, hooks and map classes."""
        out: list[Violation] = []
        P = self.p
        for e in P.edges:
            dev = P.device(e.device)
            if e.hook not in dev.hooks:
                out.append(Violation("FX-HOOK-002", (e.eid,), detail=e.hook))
            if e.src is not None or e.dst is not None:
                a, b = self.endpoints(e)
                if self.route(a, e.device) is None or self.route(e.device, b) is None:
                    out.append(Violation("FX-HOOK-001", (e.eid,)))
            for ln in e.flushes:
                link = P.link(ln)
                if e.device not in (link.a, link.b):
                    out.append(Violation("FX-HOOK-001", (e.eid,), detail=f"flush {ln}"))
            if e.require_in_order:
                a, b = self.endpoints(e)
                if self.route(a, b, only_ordered=True) is None:
                    out.append(Violation("FX-ORD-004", (e.eid,)))
            for acc in e.accesses():
                reg = P.region(acc.footprint.region)
                fp = acc.footprint
                if fp.lo < reg.base or fp.hi > reg.end:
                    out.append(Violation("FX-ALIAS-003", (e.eid,), address=fp.lo if fp.lo < reg.base else fp.hi - 1))
            if e.src is not None and e.dst is not None:
                addr = shared_byte(e.src, e.dst)
                if addr is not None and not self._legal_in_place(e):
                    out.append(Violation("FX-ALIAS-002", (e.eid,), address=addr))
            if e.dst is not None and (e.src is not None or e.transforms):
                n = e.src.nbytes if e.src is not None else (e.bytes if e.bytes is not None else e.dst.nbytes)
                if worst_case_output(e.transforms, n) > e.dst.nbytes:
                    out.append(Violation("FX-XF-001", (e.eid,)))
            if self._checksum_broken(e):
                out.append(Violation("FX-XF-002", (e.eid,)))
            if self._layout_broken(e):
                out.append(Violation("FX-XF-003", (e.eid,)))
            for op in e.map_ops:
                decl = P.map(op.map)
                if decl.cls.kind is ClassKind.LOCAL and decl.cls.device != e.device:
                    out.append(Violation("FX-MAP-001", (e.eid,), detail=op.map))
                if decl.cls.kind is ClassKind.PER_DEVICE and op.kind in (MapOpKind.READ, MapOpKind.GUARD):
                    if any(o.map == op.map and o.key == op.key and o.kind in (MapOpKind.WRITE, MapOpKind.UPDATE)
                           and x.device != e.device and x.eid != e.eid for x in P.edges for o in x.map_ops):
                        out.append(Violation("FX-MAP-004", (e.eid,), detail=op.map))
        out += self._alias_sets()
        out += self._cycles()
        return sorted(set(out))

    def _legal_in_place(self, e: Edge) -> bool:
        src, dst = e.src, e.dst
        assert src is not None and dst is not None
        for t in e.transforms:
            if t.kind is XfKind.GATHER and t.param("rank") is not None:
                return src.base == dst.base + int(t.param("rank")) * src.nbytes  # type: ignore[arg-type]
        return e.action == "reduce" and (src.base, src.elem, src.stride, src.count) == (dst.base, dst.elem, dst.stride, dst.count)

    @staticmethod
    def _checksum_broken(e: Edge) -> bool:
        covered = False
        for t in e.transforms:
            if t.kind is XfKind.CHECKSUM:
                covered = True
            elif t.kind in (XfKind.QUANTIZE, XfKind.COMPRESS, XfKind.FILTER, XfKind.REDUCE, XfKind.SCATTER, XfKind.GATHER):
                if covered:
                    return True
            elif t.kind is XfKind.PERSIST and not covered:
                return True
        return False

    def _layout_broken(self, e: Edge) -> bool:
        P = self.p
        dt = P.region(e.src.region).dtype if e.src is not None else None
        n = e.src.nbytes if e.src is not None else (e.bytes if e.bytes is not None else (e.dst.nbytes if e.dst else 0))
        for t in e.transforms:
            if t.kind is XfKind.QUANTIZE:
                if dt is not None and canonical_dtype(dt) != canonical_dtype(str(t.param("src"))):
                    return True
                if (n * 8) % DTYPE_BITS[str(t.param("src"))]:
                    return True
                dt = str(t.param("dst"))
            elif t.kind is XfKind.SCATTER and n % int(t.param("ways", 1)):
                return True
            elif t.kind is XfKind.GATHER and t.param("rank") is not None and not 0 <= int(t.param("rank")) < int(t.param("ways", 1)):  # type: ignore[arg-type]
                return True
            elif t.kind is XfKind.PERSIST and e.dst is not None and not P.space(e.dst.space).persistent:
                return True
        if e.dst is not None and dt is not None:
            want = P.region(e.dst.region).dtype
            if want is not None and canonical_dtype(want) != canonical_dtype(dt):
                return True
        return False

    def _alias_sets(self) -> list[Violation]:
        out: list[Violation] = []
        P = self.p
        regs = P.regions
        for i, a in enumerate(regs):
            for b in regs[i + 1:]:
                if a.space == b.space and a.base < b.end and b.base < a.end:
                    if (a.alias_set or f"region {a.name}") != (b.alias_set or f"region {b.name}"):
                        out.append(Violation("FX-ALIAS-001", (), address=max(a.base, b.base), detail=f"{a.name}|{b.name}"))
        accs = [(e, x) for e in P.edges for x in e.accesses()]
        for i, (ea, xa) in enumerate(accs):
            for eb, xb in accs[i + 1:]:
                if ea.eid == eb.eid or (ea.alias is None and eb.alias is None):
                    continue
                if xa.mode is AccessMode.READ and xb.mode is AccessMode.READ:
                    continue
                sa = ea.alias or P.region(xa.footprint.region).alias_set or f"region {xa.footprint.region}"
                sb = eb.alias or P.region(xb.footprint.region).alias_set or f"region {xb.footprint.region}"
                if sa != sb:
                    addr = shared_byte(xa.footprint, xb.footprint)
                    if addr is not None:
                        out.append(Violation("FX-ALIAS-001", (ea.eid, eb.eid), address=addr))
        return out

    def _cycles(self) -> list[Violation]:
        out = []
        for e in range(len(self.p.edges)):
            if e in self.ancestors(e):
                out.append(Violation("FX-ORD-001", (e,)))
        return out

    # -- replay and brute force ----------------------------------------------------------------
    def confirm(self, code: str, edges: tuple[int, ...], sched: Schedule, address: int | None = None,
                values: dict | None = None) -> Violation | None:
        """Replay a counterexample: return the matching violation the simulator observes, or
        ``None`` when the witness does not exhibit ``code`` (which is an internal error upstream)."""
        values = values or {}
        if code == "FX-ORD-001":
            cyc = list(edges)
            ok = len(cyc) > 0 and all(cyc[i - 1] in self.preds[cyc[i]] for i in range(len(cyc)))
            return Violation(code, tuple(cyc)) if ok else None
        if code == "FX-OWN-005" and "declared" in values:
            if self.check_schedule(sched):
                return None
            region = str(values["region"])
            finals = self.final_owners(region, sched)
            return Violation(code, edges, detail=region) if any(d != values["declared"] for d in finals) else None
        if code == "FX-OWN-005" and "other_schedule" in values:
            other: Schedule = {}
            for item in str(values["other_schedule"]).split(";"):
                h, s, f = (int(x) for x in item.split(":"))
                other[h] = (s, f)
            if self.check_schedule(sched) or self.check_schedule(other):
                return None
            region = str(values["region"])
            a, b = self.final_owners(region, sched), self.final_owners(region, other)
            return Violation(code, edges, detail=region) if a != b or len(a) > 1 else None
        if sched:
            if self.check_schedule(sched) is not None:
                return None
            found = [v for v in self.run(sched) if v.code == code]
        else:
            found = [v for v in self.static() if v.code == code]
        want = set(edges)
        for v in found:
            if set(v.edges) <= want and (address is None or v.address is None or self._addr_ok(v, address)):
                return v
        return None

    def _addr_ok(self, v: Violation, address: int) -> bool:
        accs = [x.footprint for e in v.edges for x in self.p.edges[e].accesses()]
        return any(fp.contains(address) for fp in accs) or v.address == address

    def linear_extensions(self, ids: list[int]) -> Iterator[Schedule]:
        """Every schedule of ``ids`` with distinct integer times, up to order isomorphism: all
        interleavings of the 2n endpoints with ``s(e)`` before ``f(e)`` and HB respected."""
        n = len(ids)
        started: dict[int, int] = {}
        finished: dict[int, int] = {}
        pos = [0]

        def rec() -> Iterator[Schedule]:
            if len(finished) == n:
                yield {e: (started[e], finished[e]) for e in ids}
                return
            t = pos[0]
            for e in ids:
                if e not in started:
                    if all(a in finished for a in self.ancestors(e) if a in ids):
                        started[e] = t
                        pos[0] += 1
                        yield from rec()
                        pos[0] -= 1
                        del started[e]
                elif e not in finished:
                    finished[e] = t
                    pos[0] += 1
                    yield from rec()
                    pos[0] -= 1
                    del finished[e]

        yield from rec()

    def explore(self) -> set[str]:
        """Brute force: the set of codes violated in some schedule of the whole policy (plus the
        schedule-independent ones). Exponential: meant for graphs of a handful of edges."""
        codes = {v.code for v in self.static()}
        if "FX-ORD-001" in codes:
            return codes
        ids = list(range(len(self.p.edges)))
        finals: dict[str, set[frozenset[str]]] = {}
        regions = {ho.region for e in self.p.edges for ho in e.handoffs}
        for sched in self.linear_extensions(ids):
            codes |= {v.code for v in self.run(sched)}
            for r in regions:
                finals.setdefault(r, set()).add(frozenset(self.final_owners(r, sched)))
        declared = {fo.region for fo in self.p.final_owners}
        for r, outcomes in finals.items():
            if r in declared:
                continue
            multi = sum(1 for e in self.p.edges for ho in e.handoffs if ho.region == r) > 1
            if multi and (len(outcomes) > 1 or any(len(o) > 1 for o in outcomes)):
                codes.add("FX-OWN-005")
        return codes
