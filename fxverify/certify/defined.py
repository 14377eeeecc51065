"""Check of the ``defined-cover`` certificate (FX-INIT-001, def-before-use).

The certificate says: access ``pos`` of the obligation's first edge ``u`` reads only bytes that a
listed write defines (``ir.Edge.defines``, the IR's own statement of the bytes a write, move or
reduce leaves defined) and that its HB path orders before ``u``, or that a listed ``init`` region
(or ``u``'s space, when declared ``init``) holds. The checker re-derives every fact from the IR and
re-walks the cover with its own interval arithmetic. Same allocation: the checker finds every
``alloc`` of a region that meets the read in the IR, and counts a write's bytes (or an ``init``
range's) inside such a region only when a listed fence path orders that alloc before the write
(or after the read; for ``init``, after the read). A write that some edge cancels defines no
byte and is rejected, and it tears the bytes of its writing footprints: the checker finds every
such write meeting the read in the IR and counts a listed write's bytes (or an ``init`` range's)
inside it only when a listed fence path orders it, or one of its cancels, before the write (or
it after the read; for ``init``, after the read). ``--certify smt`` states the property as "some
byte of the read is in no listed range, or in one whose write may finish after ``s(u)``, or one
that an alloc may make stale: ``s(w) < f(a)`` and ``s(a) < s(u)``, or a cancelled write ``x`` may
tear: ``s(w) < e(x)`` and ``s(x) < s(u)``".
Shares no code with the prover. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.certificate import Certificate, DefinedCover
from fxverify.certify.facts import Facts, Statement, f, fp_hi, key_body, s, split_ref, touches_after
from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, Footprint
from fxverify.smt.terms import Term, and_, between, int_var, mod, not_


def _member(fp: Footprint, addr: Term) -> Term:
    """``addr`` is a byte of ``fp``: ``base <= addr < hi`` and, when strided, its offset from
    ``base`` modulo ``stride`` is below ``elem`` (BRIEF section 1)."""
    inside = between(addr, fp.base, fp_hi(fp))
    if fp.count == 1 or fp.stride <= fp.elem:
        return inside
    return and_(inside, mod(addr - fp.base, fp.stride) < fp.elem)


def _runs(fp: Footprint) -> list[tuple[int, int]]:
    """The element intervals of ``fp``, merged when contiguous."""
    if fp.count == 1 or fp.stride <= fp.elem:
        return [(fp.base, fp_hi(fp))]
    return [(fp.base + k * fp.stride, fp.base + k * fp.stride + fp.elem) for k in range(fp.count)]


def _uncovered(target: Footprint, ranges: list[tuple[int, int]]) -> int | None:
    """The lowest byte of ``target`` in no range of ``ranges`` (``[lo, hi)``), or ``None``: one
    sweep over the ranges by start, keeping the farthest end reached so far."""
    order = sorted(ranges)
    j, reach = 0, None
    for lo, hi in _runs(target):
        x = lo
        while x < hi:
            while j < len(order) and order[j][0] <= x:
                reach = order[j][1] if reach is None else max(reach, order[j][1])
                j += 1
            if reach is None or reach <= x:
                return x
            x = reach
    return None


def _minus(runs: list[tuple[int, int]], kills: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the intervals ``runs`` outside every interval of ``kills`` (all ``[lo, hi)``)."""
    out = []
    for lo, hi in runs:
        parts = [(lo, hi)]
        for klo, khi in kills:
            parts = [q for a, b in parts for q in ((a, min(b, klo)), (max(a, khi), b)) if q[0] < q[1]]
        out += parts
    return out


def _allocs_meeting(facts: Facts, fp: Footprint) -> list[tuple[int, int, int]]:
    """``(alloc edge, lo, hi)`` for every ``alloc`` clause of the IR whose region lies in ``fp``'s
    space and meets its ``[lo, hi)`` bounds."""
    out = []
    for e in facts.edges:
        for al in e.allocs:
            r = facts.regions[al.region]
            lo, hi = r.base, r.base + r.size
            if r.space == fp.space and lo < fp_hi(fp) and fp.base < hi:
                out.append((e.eid, lo, hi))
    return out


def _tears_meeting(facts: Facts, fp: Footprint, u: int) -> list[tuple[int, Footprint]]:
    """``(edge, footprint)`` for every writing access of an edge other than ``u`` that some edge
    cancels, in ``fp``'s space and meeting its ``[lo, hi)`` bounds."""
    out = []
    for e in facts.edges:
        if e.eid != u and facts.cancellers.get(e.eid):
            for acc in e.accesses():
                g = acc.footprint
                if acc.mode is not AccessMode.READ and g.space == fp.space and g.base < fp_hi(fp) and fp.base < fp_hi(g):
                    out.append((e.eid, g))
    return out


def _fenced(facts: Facts, st: Statement, fences: tuple, w: int | None, u: int) -> set[int]:
    """The alloc edges the fence paths order outside: each path ends at write ``w`` (from the
    alloc) or starts at the read ``u`` (to the alloc); ``w`` is ``None`` for the ``init`` fences."""
    out = set()
    for p in fences:
        if w is not None and p.edges and p.edges[-1] == w:
            if facts.path(st, p, None, w, f"alloc before {facts.name(w)}"):
                out.add(p.edges[0])
        elif facts.path(st, p, u, None, "alloc after the read"):
            out.add(p.edges[-1])
    return out


def check_defined(facts: Facts, c: Certificate, ev: DefinedCover) -> Statement:
    """``defined-cover``: every byte the read touches is in a listed write's defined bytes, that
    write HB-before the read, or in a listed ``init`` range."""
    st = Statement()
    ref = key_body(c.key)
    if not st.fact(c.code == codes.INIT_001 and len(c.edges) >= 1, f"a defined cover does not prove {c.code}"):
        return st
    u = c.edges[0]
    name, pos = split_ref(ref)
    eu = facts.edges[u]
    if not st.fact(name == eu.name and pos == ev.pos and 0 <= pos < len(eu.accesses()),
                   "the key does not name the obligation's read"):
        return st
    acc = eu.accesses()[pos]
    st.fact(acc.mode in (AccessMode.READ, AccessMode.REDUCE), f"access {pos} of {facts.name(u)} reads nothing")
    fp = acc.footprint
    addr = int_var("addr")
    ranges: list[tuple[int, int]] = []
    served: list[Term] = []
    allocs = _allocs_meeting(facts, fp)
    tears = _tears_meeting(facts, fp, u)
    for x in ev.writes:
        if not st.fact(0 <= x.edge < len(facts.edges) and 0 <= x.pos < len(facts.edges[x.edge].accesses()),
                       f"no access {x.pos} of {facts.name(x.edge)}"):
            continue
        ew = facts.edges[x.edge]
        st.fact(ew.accesses()[x.pos].mode in (AccessMode.WRITE, AccessMode.REDUCE) and x.edge != u,
                f"{facts.name(x.edge)} does not write with access {x.pos}")
        # A cancelled write may stop halfway: it defines no byte (specs/obligations.md section 1).
        st.fact(not facts.cancellers.get(x.edge), f"{facts.name(x.edge)} is cancelled: it defines no byte")
        facts.path(st, x.path, x.edge, u, f"write {facts.name(x.edge)} to read")
        ok = _fenced(facts, st, x.fences, x.edge, u)
        kills = [(lo, hi) for a, lo, hi in allocs if a not in ok]
        kills += [r for t, g in tears if not ok & {t, *facts.cancellers[t]} for r in _runs(g)]
        stale = [and_(between(addr, lo, hi), s(x.edge) < f(a), s(a) < s(u)) for a, lo, hi in allocs]
        stale += [and_(_member(g, addr), touches_after(t, facts.cancellers[t], s(x.edge)), s(t) < s(u)) for t, g in tears]
        for d in ew.defines():
            if d.space == fp.space:
                ranges += _minus(_runs(d), kills)
                served.append(and_(_member(d, addr), f(x.edge) <= s(u), *[not_(t) for t in stale]))
    spaces = {sp.name: sp for sp in facts.policy.spaces}
    ok = _fenced(facts, st, ev.fences, None, u)
    kills = [(lo, hi) for a, lo, hi in allocs if a not in ok]
    kills += [r for t, g in tears if t not in ok for r in _runs(g)]
    stale = [and_(between(addr, lo, hi), s(a) < s(u)) for a, lo, hi in allocs]
    stale += [and_(_member(g, addr), s(t) < s(u), *[s(t) < f(c) for c in facts.cancellers[t]]) for t, g in tears]
    for n in ev.inits:
        r, sp = facts.regions.get(n), spaces.get(n)
        if r is not None and r.init and r.space == fp.space:
            lo, hi = r.base, r.base + r.size
        elif sp is not None and sp.init and sp.name == fp.space:
            lo, hi = sp.base, sp.base + sp.size
        else:
            st.fact(False, f"`{n}` is no region or space of `{fp.space}` declared `init`")
            continue
        ranges += _minus([(lo, hi)], kills)
        served.append(and_(between(addr, lo, hi), *[not_(t) for t in stale]))
    gap = _uncovered(fp, ranges)
    st.need(gap is None, f"byte {gap:#x} of the read is in no listed write or `init` range" if gap is not None else "")
    st.edges.add(u)
    st.edges.update(a for a, _lo, _hi in allocs)
    st.edges.update(y for t, _g in tears for y in (t, *facts.cancellers[t]))
    st.violation = and_(_member(fp, addr), *[not_(t) for t in served]) if served else _member(fp, addr)
    return st

