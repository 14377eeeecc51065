"""The schedule-independent rules (BRIEF section 3): they hold or fail in every schedule.

Bounds, alias sets, in-place legality, transform sizes, checksum chains, dtypes and layouts,
fabric paths, hooks, map classes, and cycles of happens-before. ``violations(world)`` returns every
violation, sorted. Written from the execution model and the codecs' published bounds
(``vocab.CODECS``), not from the SMT encoding. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.ir import (
    Checksum, Compress, Edge, EdgeAction, Filter, Gather, MapOpKind, Persist, Quantize, Reduce, Replicate,
    Scatter, Transform,
)
from fxverify.replay import intent_rules
from fxverify.replay.footprints import shared_byte
from fxverify.replay.world import Violation, World
from fxverify.vocab import CODECS, ClassKind, LinkOrder, canonical_dtype, dtype_bits


def worst_case_output(chain: tuple[Transform, ...], n: int) -> int:
    """Worst-case output bytes of a transform chain on ``n`` input bytes: codecs by their published
    bounds (``vocab.CODECS``), quantization by element and scale widths, filters by their keep
    percentage, scatter by the largest part, gather and replicate by the ways."""
    for t in chain:
        if isinstance(t, Compress):
            n = CODECS[t.algo].bound(n)
        elif isinstance(t, Quantize):
            elems = n * 8 // dtype_bits(t.src)
            out = -(-elems * dtype_bits(t.dst) // 8)
            if t.group:
                out += -(-(-(-elems // t.group)) * dtype_bits(t.scale) // 8)
            n = out
        elif isinstance(t, Filter):
            n = -(-n * t.keep // 100)
        elif isinstance(t, Scatter):
            n = -(-n // t.ways)
        elif isinstance(t, (Gather, Replicate)):
            n = n * t.ways
    return n


def violations(w: World) -> list[Violation]:
    """Violations that hold in every schedule, sorted."""
    out: list[Violation] = []
    P = w.policy
    for e in P.edges:
        out += _edge(w, e)
    out += _alias_sets(w)
    out += _cycles(w)
    out += _split_handoffs(w)
    out += intent_rules.static(w)
    return sorted(set(out))


def _edge(w: World, e: Edge) -> list[Violation]:
    out: list[Violation] = []
    P = w.policy
    dev = P.device(e.device)
    if e.hook not in dev.hooks:
        out.append(Violation(codes.HOOK_002, (e.eid,), detail=e.hook))
    if e.src is not None or e.dst is not None:
        a, b = w.endpoints(e)
        if not (w.reaches(a, e.device) and w.reaches(e.device, b)):
            out.append(Violation(codes.HOOK_001, (e.eid,)))
    for ln in e.flushes:
        link = P.link(ln)
        if e.device not in (link.a, link.b):
            out.append(Violation(codes.HOOK_001, (e.eid,), detail=f"flush {ln}"))
    if e.require_in_order:
        carriers = w.carriers(e)
        a, b = w.endpoints(e)
        if e.via is None and e.device not in (a, b):  # a third-party copy: in to the driver's engine and out again
            carriers = w.links_between(a, e.device) | w.links_between(e.device, b)
        if any(ln.order is not LinkOrder.ORDERED for ln in P.links if ln.name in carriers):
            out.append(Violation(codes.ORD_004, (e.eid,)))
    for acc in e.accesses():
        reg = P.region(acc.footprint.region)
        fp = acc.footprint
        if fp.lo < reg.base or fp.hi > reg.end:
            out.append(Violation(codes.ALIAS_003, (e.eid,), address=fp.lo if fp.lo < reg.base else fp.hi - 1))
    if e.src is not None and e.dst is not None:
        addr = shared_byte(e.src, e.dst)
        if addr is not None and not _legal_in_place(e):
            out.append(Violation(codes.ALIAS_002, (e.eid,), address=addr))
    if e.dst is not None and (e.src is not None or e.transforms):
        n = e.src.nbytes if e.src is not None else (e.bytes if e.bytes is not None else e.dst.nbytes)
        if worst_case_output(e.transforms, n) > e.dst.nbytes:
            out.append(Violation(codes.XF_001, (e.eid,)))
    if _checksum_broken(w, e):
        out.append(Violation(codes.XF_002, (e.eid,)))
    if _layout_broken(w, e):
        out.append(Violation(codes.XF_003, (e.eid,)))
    for op in e.map_ops:
        decl = P.map(op.map)
        if decl.cls.kind is ClassKind.LOCAL and decl.cls.device != e.device:
            out.append(Violation(codes.MAP_001, (e.eid,), detail=op.map))
        if decl.cls.kind is ClassKind.CONST and op.kind in (MapOpKind.WRITE, MapOpKind.UPDATE, MapOpKind.AGGREGATE):
            out.append(Violation(codes.MAP_005, (e.eid,), detail=op.map))
        if decl.cls.kind is ClassKind.PER_DEVICE and op.kind in (MapOpKind.READ, MapOpKind.GUARD):
            if any(o.map == op.map and o.key == op.key and o.kind in (MapOpKind.WRITE, MapOpKind.UPDATE)
                   and x.device != e.device and x.eid != e.eid for x in P.edges for o in x.map_ops):
                out.append(Violation(codes.MAP_004, (e.eid,), detail=op.map))
    return out


def _legal_in_place(e: Edge) -> bool:
    """NCCL's in-place rules: a gather at the rank's own slot, or a reduction onto exactly itself."""
    src, dst = e.src, e.dst
    assert src is not None and dst is not None
    for t in e.transforms:
        if isinstance(t, Gather) and t.rank is not None:
            return src.base == dst.base + t.rank * src.nbytes
    return e.action is EdgeAction.REDUCE and (src.base, src.elem, src.stride, src.count) == (dst.base, dst.elem, dst.stride, dst.count)


def _checksum_broken(w: World, e: Edge) -> bool:
    """A value-changing step after a checksum, or a persist into a space that declares
    ``checksum ALGO`` (the destination's; the source's when the edge has no destination) with no
    valid checksum of that algorithm over the bytes as they are persisted."""
    fp = e.dst if e.dst is not None else e.src
    need = None if fp is None else w.policy.space(fp.space).checksum
    last: str | None = None
    for t in e.transforms:
        if isinstance(t, Checksum):
            last = t.algo
        elif isinstance(t, (Quantize, Compress, Filter, Reduce, Scatter, Gather)):
            if last is not None:
                return True
        elif isinstance(t, Persist) and need is not None and last != need:
            return True
    return False


def _layout_broken(w: World, e: Edge) -> bool:
    P = w.policy
    dt = P.region(e.src.region).dtype if e.src is not None else None
    n = e.src.nbytes if e.src is not None else (e.bytes if e.bytes is not None else (e.dst.nbytes if e.dst else 0))
    for t in e.transforms:
        if isinstance(t, Quantize):
            if dt is not None and canonical_dtype(dt) != canonical_dtype(t.src):
                return True
            if (n * 8) % dtype_bits(t.src):
                return True
            dt = t.dst
        elif isinstance(t, Scatter) and n % t.ways:
            return True
        elif isinstance(t, Gather) and t.rank is not None and not 0 <= t.rank < t.ways:
            return True
        elif isinstance(t, Persist) and (kept := e.durable()) is not None and not P.space(kept.space).persistent:
            return True  # the destination, or the source sealed in place
    if e.dst is not None and dt is not None:
        want = P.region(e.dst.region).dtype
        if want is not None and canonical_dtype(want) != canonical_dtype(dt):
            return True
    return False


def _split_handoffs(w: World) -> list[Violation]:
    """FX-OWN-003: an edge with two handoff clauses whose regions share a byte (the same region,
    nested or overlapping views) and name different new owners."""
    out: list[Violation] = []
    P = w.policy
    for e in P.edges:
        for i, a in enumerate(e.handoffs):
            for b in e.handoffs[i + 1:]:
                ra, rb = P.region(a.region), P.region(b.region)
                if a.dst != b.dst and ra.space == rb.space and ra.base < rb.end and rb.base < ra.end:
                    out.append(Violation(codes.OWN_003, (e.eid,), detail=f"{a.region} to {a.dst}, {b.region} to {b.dst}"))
    return out


def _alias_sets(w: World) -> list[Violation]:
    out: list[Violation] = []
    P = w.policy
    regs = P.regions
    for i, a in enumerate(regs):
        for b in regs[i + 1:]:
            if a.space == b.space and a.base < b.end and b.base < a.end:
                if (a.alias_set or f"region {a.name}") != (b.alias_set or f"region {b.name}"):
                    out.append(Violation(codes.ALIAS_001, (), address=max(a.base, b.base), detail=f"{a.name}|{b.name}"))
    accs = [(e, x) for e in P.edges for x in e.accesses()]
    for i, (ea, xa) in enumerate(accs):
        for eb, xb in accs[i + 1:]:
            if ea.eid == eb.eid or (ea.alias is None and eb.alias is None):
                continue  # two reads count too: an alias set promises disjoint bytes, not disjoint writes
            sa = ea.alias or P.region(xa.footprint.region).alias_set or f"region {xa.footprint.region}"
            sb = eb.alias or P.region(xb.footprint.region).alias_set or f"region {xb.footprint.region}"
            if sa != sb:
                addr = shared_byte(xa.footprint, xb.footprint)
                if addr is not None:
                    out.append(Violation(codes.ALIAS_001, (ea.eid, eb.eid), address=addr))
    return out


def _cycles(w: World) -> list[Violation]:
    return [Violation(codes.ORD_001, (e,)) for e in range(len(w.policy.edges)) if e in w.ancestors(e)]
