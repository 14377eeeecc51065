"""The execution model's rules for declared accumulations and checksummed bytes (BRIEF section 3;
specs/obligations.md, FX-XF-002 and FX-XF-004), on one concrete schedule or on none.

A reading edge ``c`` with ``expects OP of P...`` reads the ``OP``-accumulation of the producers
``P``: each must write bytes and, if it reduces, with ``OP`` (``static``); in a schedule each
must have finished before ``c`` starts, and no plain write may land on a byte that a producer
wrote and ``c`` reads after that producer finished and before ``c`` started (``violations``).
A checksum describes the bytes it covers (the destination of its edge, or the bytes it reads in
place): a write that lands on one of them after the checksum started reading, with no other edge
reading the byte in between and no ``alloc`` of its region in between (which starts another
allocation of it), leaves it describing bytes that are gone.

Written from the execution model, not from the SMT encoding. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.ir import AccessMode, Checksum, Edge, Footprint
from fxverify.replay.footprints import elements, intersections, shared_byte
from fxverify.replay.world import Schedule, Violation, World


def _writes(e: Edge) -> Footprint | None:
    return next((a.footprint for a in e.accesses() if a.mode is not AccessMode.READ), None)


def _first_shared(a: Footprint, b: Footprint, c: Footprint | None = None) -> int | None:
    """The lowest byte in ``a``, ``b`` (and ``c``), or ``None``."""
    for lo, hi in intersections(a, b):
        if c is None:
            return lo
        if c.space == a.space:
            for x, _ in elements(c, lo, hi):
                return x
    return None


def first_uncovered(a: Footprint, b: Footprint, covers: list[Footprint]) -> int | None:
    """The lowest byte in ``a`` and ``b`` that no footprint of ``covers`` contains, or ``None``."""
    for lo, hi in intersections(a, b):
        x = lo
        while x < hi:
            cover = [f for f in covers if f.contains(x)]
            if not cover:
                return x
            x = max(f.base + (f.element_of(x) or 0) * f.stride + f.elem for f in cover)
    return None


def static(w: World) -> list[Violation]:
    """Producers of an ``expects`` that write nothing or reduce with another operator."""
    out: list[Violation] = []
    P = w.policy
    for c in P.edges:
        if c.expects is None:
            continue
        for name in c.expects.producers:
            p = P.edge(name)
            if p.eid != c.eid and (_writes(p) is None or p.reduce_op not in (None, c.expects.op)):
                out.append(Violation(codes.XF_004, (c.eid, p.eid), detail=f"{p.name} does not {c.expects.op}", rule="intent"))
    return out


def violations(w: World, ids: list[int], sched: Schedule) -> list[Violation]:
    """Late or overwritten contributions to an expected accumulation, and writes that land on
    checksummed bytes before anyone consumed them, in ``sched``."""
    out: list[Violation] = []
    E = w.policy.edges
    for c in ids:
        ec = E[c]
        if ec.expects is None or ec.src is None:
            continue
        sc = sched[c][0]
        for name in ec.expects.producers:
            p = w.policy.edge(name).eid
            fp = _writes(E[p])
            if p == c or p not in sched or fp is None:
                continue
            first = _first_shared(fp, ec.src)
            if first is not None and sc < sched[p][1]:
                out.append(Violation(codes.XF_004, (p, c), sc, first, "read before the contribution", "intent"))
            for x in ids:
                fx = _writes(E[x])
                # A reduction by a producer is a declared contribution; any other write, plain or
                # reducing, between a contribution and the read changes what the read sees.
                if x in (p, c) or fx is None or (E[x].reduce_op is not None and E[x].name in ec.expects.producers):
                    continue
                if sched[p][1] <= sched[x][0] and sched[x][1] <= sc:
                    hit = _first_shared(fp, ec.src, fx)
                    if hit is not None:
                        what = "contribution overwritten" if E[x].reduce_op is None else "foreign contribution folded in"
                        out.append(Violation(codes.XF_004, (p, x, c), sched[x][0], hit, what, "intent"))
    for c in ids:
        ec = E[c]
        fc = (ec.dst if ec.dst is not None else ec.src) if any(isinstance(t, Checksum) for t in ec.transforms) else None
        if fc is None:
            continue
        for x in ids:
            fx = _writes(E[x])
            if x == c or fx is None or not sched[c][0] < sched[x][1]:
                continue
            if fx.space != fc.space or fx.hi <= fc.lo or fc.hi <= fx.lo or shared_byte(fc, fx) is None:
                continue  # the write lands on no checksummed byte: no consumer list to gather
            # A cancelled read may stop before it read anything: it consumes nothing.
            consumers = [a.footprint for y in ids if y not in (c, x) and not w.cancelled(y) and sched[c][1] <= sched[y][0]
                         and sched[y][1] <= sched[x][0] for a in E[y].accesses() if a.mode is AccessMode.READ]
            # An `alloc` between them starts another allocation of its region's bytes: the write
            # lands in data the checksum never described (a pool's slot freed and handed out again).
            consumers += [w.policy.region(al.region).whole() for y in ids if y not in (c, x) and sched[c][1] <= sched[y][0]
                          and sched[y][1] <= sched[x][0] for al in E[y].allocs]
            stale = first_uncovered(fc, fx, consumers)
            if stale is not None:
                out.append(Violation(codes.XF_002, (c, x), sched[x][0], stale, "checksummed bytes overwritten", "stale-checksum"))
    return out
