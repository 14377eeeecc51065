"""What the certificate checker re-derives from the IR, on its own: HB steps, footprint bounds,
region containment, the handoffs that move a region, transfer endpoints, obligation keys; and the
``Statement`` every kind check returns.

Takes an ``ir.Policy``; shares no code with the prover (``fxverify.obligations``,
``fxverify.graph``): every rule here is restated from the execution model (BRIEF section 2) and
``specs/obligations.md``. Emits no diagnostics.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field

from fxverify.certificate import Certificate, HandoffOrder, HbPath
from fxverify.ir import Edge, Footprint, Policy, Region
from fxverify.smt.terms import Term, and_, int_var


@dataclass
class Statement:
    """One certificate, checked: ``problems`` are facts the IR contradicts (fatal in every mode),
    ``derived`` are conclusions the evidence does not reach when checked in Python (``--certify``),
    and ``hyps`` and ``violation`` the SMT statement (``--certify smt``): the hypotheses (each an
    IR fact) and the negated property, unsatisfiable together when the certificate proves it."""

    problems: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    hyps: list[Term] = field(default_factory=list)
    violation: Term | None = None
    edges: set[int] = field(default_factory=set)

    def fact(self, ok: bool, message: str) -> bool:
        """Record ``message`` as a problem unless ``ok``; returns ``ok``."""
        if not ok:
            self.problems.append(message)
        return ok

    def need(self, ok: bool, message: str) -> bool:
        """Record ``message`` as an unreached conclusion unless ``ok``; returns ``ok``."""
        if not ok:
            self.derived.append(message)
        return ok


def s(e: int) -> Term:
    """The start time of edge ``e`` (ns), a variable of the certificate's SMT statement."""
    return int_var(f"start_{e}")


def f(e: int) -> Term:
    """The finish time of edge ``e`` (ns)."""
    return int_var(f"finish_{e}")


def fp_hi(fp: Footprint) -> int:
    """One past the last byte of ``{base + k*stride + o : 0 <= k < count, 0 <= o < elem}``."""
    return fp.base + (fp.count - 1) * fp.stride + fp.elem


def fp_meets(fp: Footprint, lo: int, hi: int) -> bool:
    """True when some byte of ``fp`` lies in ``[lo, hi)`` (exact for strided footprints)."""
    if hi <= lo or fp.count <= 0 or hi <= fp.base or lo >= fp_hi(fp):
        return False
    if fp.count == 1 or fp.stride <= fp.elem:
        return True
    k = max(0, -(-(lo - fp.base - fp.elem + 1) // fp.stride))  # first element ending after lo
    return k < fp.count and fp.base + k * fp.stride < hi


def contains(outer: Region, inner: Region) -> bool:
    """True when ``outer`` holds every byte of ``inner`` (same space)."""
    return outer.space == inner.space and outer.base <= inner.base and inner.base + inner.size <= outer.base + outer.size


def key_body(key: str) -> str:
    """The part of an obligation key after ``CODE:``."""
    return key.split(":", 1)[1] if ":" in key else ""


def split_ref(ref: str) -> tuple[str, int]:
    """``name#pos`` -> ``(name, pos)``; ``(ref, -1)`` when there is no position."""
    name, sep, pos = ref.rpartition("#")
    return (name, int(pos)) if sep and pos.isdigit() else (ref, -1)


class Facts:
    """IR indexes the checks share: edges by name, HB predecessors, handoffs per region."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.edges = policy.edges
        self.by_name = {e.name: e.eid for e in policy.edges}
        self.regions = {r.name: r for r in policy.regions}
        self.after: list[frozenset[int]] = [frozenset(self.by_name[n] for n in e.after if n in self.by_name)
                                            for e in policy.edges]
        self._movers: dict[str, list[int]] | None = None
        #: edge id -> ids of the edges whose ``cancel`` clauses name it, ascending
        self.cancellers: dict[int, list[int]] = defaultdict(list)
        for e in policy.edges:
            for c in e.cancels:
                x = self.by_name.get(c.edge)
                if x is not None and e.eid not in self.cancellers[x]:
                    self.cancellers[x].append(e.eid)

    # -- happens-before ------------------------------------------------------------------------
    def step(self, x: int, y: int) -> bool:
        """True when ``f(x) <= s(y)`` is a constraint of the IR: ``y`` names ``x`` in ``after``,
        or both run on one ``(device, stream)`` and ``x`` is declared first (BRIEF section 2)."""
        if not (0 <= x < len(self.edges) and 0 <= y < len(self.edges)) or x == y:
            return False
        if x in self.after[y]:
            return True
        ex, ey = self.edges[x], self.edges[y]
        return ex.stream is not None and ex.stream == ey.stream and ex.device == ey.device and x < y

    def constraints(self) -> list[tuple[int, int]]:
        """Every HB constraint ``(x, y)``, ``f(x) <= s(y)``: the ``after`` clauses and each
        stream's consecutive pairs (the others follow by transitivity)."""
        out = [(x, e.eid) for e in self.edges for x in sorted(self.after[e.eid])]
        last: dict[tuple[str, str], int] = {}
        for e in self.edges:
            if e.stream is not None:
                k = (e.device, e.stream)
                if k in last:
                    out.append((last[k], e.eid))
                last[k] = e.eid
        return out

    def path(self, st: Statement, p: HbPath | None, first: int | None, last: int | None, what: str) -> bool:
        """Check HB path ``p`` step by step against the IR (a fact, every mode) and its endpoints
        against ``first``/``last`` (a conclusion; ``None`` leaves an end free). Adds the steps
        to the SMT hypotheses. Returns True when both hold."""
        if not st.fact(p is not None and len(p.edges) >= 2, f"{what}: no HB path"):
            return False
        assert p is not None
        ok = True
        for x, y in zip(p.edges, p.edges[1:]):
            if st.fact(self.step(x, y), f"{what}: step {self._n(x)} -> {self._n(y)} is no `after` clause or stream order"):
                st.hyps.append(f(x) <= s(y))
            else:
                ok = False
        st.edges.update(e for e in p.edges if 0 <= e < len(self.edges))
        ends = st.need((first is None or p.first == first) and (last is None or p.last == last),
                       f"{what}: the path runs {self._n(p.first)} -> {self._n(p.last)}, not "
                       f"{self._n(first) if first is not None else '*'} -> {self._n(last) if last is not None else '*'}")
        return ok and ends

    def ordered_entries(self, st: Statement, entries: tuple[HandoffOrder, ...], want: list[int], before: int,
                        after: int, what: str) -> None:
        """Each handoff of ``want`` has one entry whose path ends at ``before`` or starts at
        ``after``; no entry names another handoff."""
        seen = {x.handoff for x in entries}
        st.fact(seen <= set(want), f"{what}: orders edges that are not handoffs of the region: "
                f"{sorted(self._n(x) for x in seen - set(want))}")
        st.need(set(want) <= seen, f"{what}: leaves handoffs unordered: {sorted(self._n(x) for x in set(want) - seen)}")
        for x in entries:
            if x.handoff not in want or x.path is None or len(x.path.edges) < 2:
                st.fact(x.path is not None and len(x.path.edges) >= 2, f"{what}: no HB path for {self._n(x.handoff)}")
                continue
            if x.path.last == before:
                self.path(st, x.path, x.handoff, before, f"{what} ({self._n(x.handoff)} first)")
            else:
                self.path(st, x.path, after, x.handoff, f"{what} ({self._n(x.handoff)} after)")

    def _n(self, e: int | None) -> str:
        return f"`{self.edges[e].name}`" if e is not None and 0 <= e < len(self.edges) else f"#{e}"

    def name(self, e: int) -> str:
        """Edge ``e``'s instance name (``#e`` when no such edge)."""
        return self.edges[e].name if 0 <= e < len(self.edges) else f"#{e}"

    # -- ownership -----------------------------------------------------------------------------
    def movers(self, region: str) -> list[int]:
        """Ids of the edges with a handoff clause of ``region`` or of a region containing it
        (a handoff moves every region inside its own: specs/obligations.md section 1), ascending."""
        if self._movers is None:
            by_space: dict[str, list[Region]] = defaultdict(list)
            for r in self.policy.regions:
                by_space[r.space].append(r)
            for rs in by_space.values():
                rs.sort(key=lambda r: r.base)
            bases = {sp: [r.base for r in rs] for sp, rs in by_space.items()}
            out: dict[str, set[int]] = defaultdict(set)
            for e in self.edges:
                for h in [*e.handoffs, *e.allocs]:  # an alloc gives the region a new owner too
                    q = self.regions[h.region]
                    rs, bs = by_space[q.space], bases[q.space]
                    for r in rs[bisect.bisect_left(bs, q.base):bisect.bisect_left(bs, q.base + q.size)]:
                        if contains(q, r):
                            out[r.name].add(e.eid)
            self._movers = {k: sorted(v) for k, v in out.items()}
        return self._movers.get(region, [])

    def dst(self, eid: int, region: str) -> str | None:
        """The owner ``region`` gets when ``eid`` finishes: the destination of the edge's last
        clause that moves it (clauses apply in written order), or the device of an ``alloc`` of
        it (or of a region containing it), or ``None``."""
        r = self.regions[region]
        out = None
        for h in self.edges[eid].handoffs:
            if contains(self.regions[h.region], r):
                out = h.dst
        for a in self.edges[eid].allocs:  # never with a handoff of the same bytes (resolve)
            if contains(self.regions[a.region], r):
                out = a.device
        return out

    def writes_governed(self, e: Edge, region: str) -> bool:
        """True when ``e`` writes (or reduces into) bytes of ``region`` that no strictly smaller
        region nested inside it holds whole (such bytes are the nested region's to govern)."""
        r = self.regions[region]
        for a in e.accesses():
            fp = a.footprint
            if a.mode.value == "read" or fp.space != r.space or not fp_meets(fp, r.base, r.base + r.size):
                continue
            lo, hi = max(fp.base, r.base), min(fp_hi(fp), r.base + r.size)
            if not any(q.size < r.size and contains(r, q) and q.base <= lo and hi <= q.base + q.size
                       and fp_meets(fp, q.base, q.base + q.size) for q in self.policy.regions):
                return True
        return False

    # -- fabric --------------------------------------------------------------------------------
    def endpoints(self, e: Edge) -> tuple[str, str]:
        """``(from_device, to_device)`` of the bytes ``e`` moves: source space's device to the
        destination space's; a write goes from the driver, a read to it."""
        dev = {sp.name: sp.device for sp in self.policy.spaces}
        src = dev[e.src.space] if e.src is not None else e.device
        dst = dev[e.dst.space] if e.dst is not None else e.device
        return src, dst


def overlap(a: int, b: int) -> Term:
    """Edges ``a`` and ``b`` run at some common instant: ``s(a) < f(b)`` and ``s(b) < f(a)``."""
    return and_(s(a) < f(b), s(b) < f(a))


def touch_overlap(a: int, ca: list[int], b: int, cb: list[int]) -> Term:
    """Edges ``a`` and ``b`` touch bytes at a common instant when ``ca`` cancel ``a`` and ``cb``
    cancel ``b``: a cancelled edge ``x`` touches bytes only over ``[s(x), min(f(x), f(c)))``
    (specs/obligations.md section 1, cancellation), so every cancel finishes after both start."""
    return and_(s(a) < f(b), s(b) < f(a), *[and_(s(a) < f(c), s(b) < f(c)) for c in [*ca, *cb]])


def touches_after(u: int, cu: list[int], t: Term) -> Term:
    """Edge ``u``, cancelled by ``cu``, touches a byte at an instant ``>= t``: ``t < f(u)``, and
    every cancel finishes after ``t`` and after ``s(u)``."""
    return and_(t < f(u), *[and_(t < f(c), s(u) < f(c)) for c in cu])


def two_accesses(facts: Facts, c: Certificate, st: Statement, code: object, what: str,
                 parts: int = 2) -> tuple | None:
    """``(a, b, access_a, access_b)``: the obligation's first two edges and the accesses its key
    ``A#i|B#j`` (then ``parts - 2`` more ``|``-separated fields, such as a link) names, after
    checking that ``c`` is of ``code``; ``None`` (with the problem recorded in ``st``) when not."""
    refs = key_body(c.key).split("|")
    if not st.fact(c.code == code and len(refs) == parts and len(c.edges) >= 2, f"{what} does not prove {c.code}"):
        return None
    a, b = c.edges[0], c.edges[1]
    (na, pa), (nb, pb) = split_ref(refs[0]), split_ref(refs[1])
    ea, eb = facts.edges[a], facts.edges[b]
    if not st.fact(na == ea.name and nb == eb.name and 0 <= pa < len(ea.accesses()) and 0 <= pb < len(eb.accesses()),
                   "the key does not name the obligation's accesses"):
        return None
    return a, b, ea.accesses()[pa], eb.accesses()[pb]
