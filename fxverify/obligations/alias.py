"""Alias-set obligations: FX-ALIAS-001 (different alias sets overlap), FX-ALIAS-002 (illegal
in-place edge), FX-ALIAS-003 (footprint out of its region).

Takes a ``Context``; yields ``Obligation`` objects. Footprint membership is encoded exactly for
strided footprints (``obligations.encode.member``), so interleaved strided footprints are proved disjoint and
an overlap is refuted with the address and the element index on each side. BRIEF section 3.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from fxverify.certificate import Evidence, InPlaceForm, Interval
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.edits import EdgeAlias, Hint, JoinAlias, MoveRegion, clipped, hint, narrow
from fxverify.ir import Access, Edge, EdgeAction, Footprint, Gather, Region
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.pairs import pairs_where
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.encode import Facts, member
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import add, and_, between, eq, int_var, mul, not_


def alias_of(ctx: Context, e: Edge, fp: Footprint) -> str:
    """The alias set a footprint belongs to: the edge's ``alias`` clause, else its region's alias
    set, else the region instance itself (a region with no alias set aliases nothing else)."""
    if e.alias is not None:
        return e.alias
    r = ctx.policy.region(fp.region)
    return r.alias_set if r.alias_set is not None else f"region {r.name}"


class _TwoFootprints(Obligation):
    """Shared encoding: a byte that lies in footprint ``fa`` and in footprint ``fb``."""

    fa: Footprint
    fb: Footprint
    tags = ("a", "b")

    def extra(self) -> list:
        return []

    def encode(self) -> Query:
        addr = int_var("addr")
        ma, ka = member(self.fa, addr, self.tags[0])
        mb, kb = member(self.fb, addr, self.tags[1])
        self._probes = (addr, ka, kb)
        cons = [("byte_in_first", ma), ("byte_in_second", mb)] + self.extra()
        return Query(self.key, tuple(cons), minimize=(addr, ka, kb), header=self.header())

    def witness(self, result: Result) -> Witness:
        addr, ka, kb = self._probes
        els = {}
        if self.edges:
            els = {self.edges[0]: result.int(ka), self.edges[-1]: result.int(kb)}
        return Witness(address=result.int(addr), space=self.fa.space, elements=els,
                       values={"k_first": result.int(ka), "k_second": result.int(kb)})


class AliasOverlap(_TwoFootprints):
    """FX-ALIAS-001: footprints of edges ``a`` and ``b`` in different alias sets share no byte."""

    schedule_free = True

    code = codes.ALIAS_001

    def __init__(self, ctx: Context, a: int, pa: int, acc_a: Access, sa: str, b: int, pb: int, acc_b: Access, sb: str) -> None:
        self.fa, self.fb, self.sa, self.sb = acc_a.footprint, acc_b.footprint, sa, sb
        ea, eb = ctx.edge(a), ctx.edge(b)
        super().__init__(ctx, (a, b), f"{self.code}:{ea.name}#{pa}|{eb.name}#{pb}",
                         eb.span, (Label(ea.span, f"`{ea.name}` is in alias set `{sa}`"),))

    def message(self, w: Witness) -> str:
        return (f"`{self.name(self.edges[0])}` (alias set `{self.sa}`) and `{self.name(self.edges[1])}` "
                f"(alias set `{self.sb}`) touch the same byte")

    def why(self, w: Witness) -> str:
        return "footprints in different alias sets are promised disjoint (like C `restrict`)"

    def fix(self, w: Witness) -> Hint:
        """Both footprints in one declared alias set: the second edge in the first's, or the
        reverse (new offsets or strides are the author's to choose: no edit)."""
        a, b = self.edges
        declared = {x.name for x in self.ctx.policy.alias_sets}
        return hint(EdgeAlias(self.name(b), self.sa) if self.sa in declared else None,
                    EdgeAlias(self.name(a), self.sb) if self.sb in declared else None)


class RegionOverlap(_TwoFootprints):
    """FX-ALIAS-001 at region level: regions in different alias sets do not overlap."""

    schedule_free = True

    code = codes.ALIAS_001

    def __init__(self, ctx: Context, ra: Region, sa: str, rb: Region, sb: str) -> None:
        self.ra, self.rb, self.sa, self.sb = ra, rb, sa, sb
        self.fa = Footprint(ra.name, ra.space, ra.base, ra.size, ra.size, 1, ra.span)
        self.fb = Footprint(rb.name, rb.space, rb.base, rb.size, rb.size, 1, rb.span)
        super().__init__(ctx, (), f"{self.code}:region:{ra.name}|{rb.name}", rb.span,
                         (Label(ra.span, f"`{ra.name}` is declared here"),))

    def trace_regions(self) -> tuple[str, ...]:
        """The two overlapping regions, the second (the primary span's) marked."""
        return (self.ra.name, self.rb.name)

    def witness(self, result: Result) -> Witness:
        """The shared byte, with the two regions named (``values["regions"]``, ``"A|B"``, a string
        as every witness value is: ``gate.serialize`` stores them): a finding about regions has no
        edge, so the simulator confirms it by the regions and the byte (``Simulator.confirm``)."""
        w = super().witness(result)
        return replace(w, values={**w.values, "regions": f"{self.ra.name}|{self.rb.name}"})

    def message(self, w: Witness) -> str:
        return f"regions `{self.ra.name}` and `{self.rb.name}` overlap but are in different alias sets (`{self.sa}`, `{self.sb}`)"

    def why(self, w: Witness) -> str:
        return "regions may overlap only inside one alias set"

    def fix(self, w: Witness) -> Hint:
        """The second region placed right after the first, or both in one alias set."""
        ra, rb = self.ra, self.rb
        if rb.alias_set is None:
            join = JoinAlias(ra.name, rb.name, ra.alias_set or f"{ra.family}_{rb.family}")
        else:
            join = JoinAlias(rb.name, ra.name, rb.alias_set) if ra.alias_set is None else None
        return hint(MoveRegion(rb.name, ra.end), join)


class InPlace(_TwoFootprints):
    """FX-ALIAS-002: an edge's source and destination overlap only in a legal in-place form:
    an in-place gather whose source sits at ``dst.base + rank * chunk`` (NCCL's in-place
    all-gather rule: sendbuff == recvbuff + rank * sendcount), or a reduction whose source is
    exactly its destination (in-place all-reduce)."""

    schedule_free = True

    code = codes.ALIAS_002
    tags = ("src", "dst")

    def __init__(self, ctx: Context, e: Edge) -> None:
        assert e.src is not None and e.dst is not None
        self.fa, self.fb = e.src, e.dst
        self.legal, self.rule = _in_place_rule(e)
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}", e.span)

    def extra(self) -> list:
        # The legality rule is restated over the footprints' own numbers (facts), apart from
        # ``_in_place_rule``, so the query fails when that Python would be wrong.
        e = self.ctx.edge(self.edges[0])
        facts = Facts()
        fact = facts.fact
        src = {k: fact(f"src_{k}", getattr(self.fa, k)) for k in ("base", "elem", "stride", "count")}
        dst = {k: fact(f"dst_{k}", getattr(self.fb, k)) for k in ("base", "elem", "stride", "count")}
        gather = next((t for t in e.transforms if isinstance(t, Gather) and t.rank is not None), None)
        if gather is not None:
            # send buffer == recv buffer + rank * chunk, the chunk being the send buffer's bytes
            # (elem * count: NCCL's sendcount); the rank is a constant of the term (linear)
            chunk = mul(self.fa.count, src["elem"])
            legal = eq(src["base"], add(dst["base"], mul(gather.rank or 0, chunk)))
        else:
            is_reduce = fact("is_reduce", e.action is EdgeAction.REDUCE)
            legal = and_(is_reduce, *[eq(src[k], dst[k]) for k in src])
        return facts.constraints + [("not_legal_in_place", not_(legal))]

    def witness(self, result: Result) -> Witness:
        w = super().witness(result)
        w.elements = {}
        return w

    def prove_fast(self) -> str | None:
        return "in-place-rule" if self.legal else None

    def evidence(self) -> Evidence | None:
        if not self.legal:
            return None
        e = self.ctx.edge(self.edges[0])
        rank = next((t.rank for t in e.transforms if isinstance(t, Gather) and t.rank is not None), None)
        return InPlaceForm("same-footprint") if rank is None else InPlaceForm("gather-rank", rank, self.fa.nbytes)

    def message(self, w: Witness) -> str:
        return f"`{self.name(self.edges[0])}` reads and writes overlapping bytes and is not a legal in-place operation"

    def why(self, w: Witness) -> str:
        return self.rule

    def fix(self, w: Witness) -> Hint:
        """An in-place gather's send buffer placed at the rank's own slot of the destination (its
        region moved so the source lands there); a separate buffer is the author's to add."""
        e = self.ctx.edge(self.edges[0])
        gather = next((t for t in e.transforms if isinstance(t, Gather) and t.rank is not None), None)
        if gather is None or e.src is None or e.dst is None:
            return hint()
        r = self.ctx.policy.region(e.src.region)
        want = e.dst.base + (gather.rank or 0) * e.src.nbytes
        return hint(MoveRegion(r.name, want - (e.src.base - r.base)))


def _in_place_rule(e: Edge) -> tuple[bool, str]:
    src, dst = e.src, e.dst
    assert src is not None and dst is not None
    for t in e.transforms:
        if isinstance(t, Gather) and t.rank is not None:
            rank = t.rank
            want = dst.base + rank * src.nbytes
            return (src.base == want,
                    f"an in-place gather must read its send buffer at recv + rank x chunk = {want:#x} "
                    f"(rank {rank}, chunk {src.nbytes} B), not {src.base:#x}")
    if e.action is EdgeAction.REDUCE and (src.base, src.elem, src.stride, src.count) == (dst.base, dst.elem, dst.stride, dst.count):
        return True, "an in-place reduction reads and writes exactly the same footprint"
    return False, "a copy whose source and destination overlap reads bytes it has already overwritten"


class Bounds(Obligation):
    """FX-ALIAS-003: every byte of a footprint lies inside its region."""

    schedule_free = True
    unique_key = True  # one per access of an edge, edge names are unique, and no other class has the code

    code = codes.ALIAS_003

    def __init__(self, ctx: Context, e: Edge, pos: int, fp: Footprint) -> None:
        self.fp, self.pos = fp, pos
        self.region = ctx.policy.region(fp.region)
        super().__init__(ctx, (e.eid,), f"{self.code}:{e.name}#{pos}", fp.span if fp.span.end else e.span,
                         (Label(self.region.span, f"region `{self.region.name}` is declared here"),))

    def prove_fast(self) -> str | None:
        # The bounding interval is tight: its ends are attained by element 0 and the last element.
        return "interval" if self.region.base <= self.fp.lo and self.fp.hi <= self.region.end else None

    def evidence(self) -> Evidence | None:
        r = self.region
        return Interval(self.pos, r.name, self.fp.lo, self.fp.hi, r.base, r.end) if self.prove_fast() else None

    def encode(self) -> Query:
        addr = int_var("addr")
        m, k = member(self.fp, addr, "a")
        self._probes = (addr, k)
        out = not_(between(addr, self.region.base, self.region.end))
        return Query(self.key, (("byte_of_footprint", m), ("outside_region", out)), minimize=(k, addr), header=self.header())

    def witness(self, result: Result) -> Witness:
        addr, k = self._probes
        return Witness(address=result.int(addr), space=self.fp.space, elements={self.edges[0]: result.int(k)})

    def message(self, w: Witness) -> str:
        side = "below" if (w.address or 0) < self.region.base else "past the end of"
        return f"`{self.name(self.edges[0])}` touches {w.address:#x}, {side} region `{self.region.name}`"

    def why(self, w: Witness) -> str:
        return (f"region `{self.region.name}` spans [{self.region.base:#x}, {self.region.end:#x}); every byte "
                f"base + k*stride + o of a footprint must lie inside it")

    def fix(self, w: Witness) -> Hint:
        """The footprint cut back to its region's end; one that starts outside its region (a
        wrong, negative or sentinel index) gets no edit."""
        cut = clipped(self.fp, self.region)
        return hint(narrow(self.ctx.policy, self.ctx.edge(self.edges[0]), self.pos, cut) if cut else None)


def generate(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """Yield every alias obligation of ``ctx.policy``. With a parametric prover
    (``Context.parametric``), the FX-ALIAS-003 obligations of a declaration it proved for every
    index value come as ``ProvedTogether`` runs, in the places their instances have unrolled."""
    pol = ctx.policy
    proved = ctx.parametric.proved_bounds() if ctx.parametric is not None else set()
    held = Held()
    for e in pol.edges:
        for pos, acc in enumerate(e.accesses()):
            if proved and (e.span, pos) in proved:
                yield from held.hold(f"{codes.ALIAS_003}:{e.name}#{pos}", codes.ALIAS_003)
                continue
            yield from held.flush()
            yield Bounds(ctx, e, pos, acc.footprint)
        if e.src is not None and e.dst is not None and e.src.space == e.dst.space:
            if e.src.lo < e.dst.hi and e.dst.lo < e.src.hi:
                yield from held.flush()
                yield InPlace(ctx, e)
    yield from held.flush()
    yield from _region_overlaps(ctx)
    # A pair of accesses that both inherit their regions' sets is covered by the region-level
    # check: only pairs with an edge that overrides its alias set are visited.
    overrides = (lambda e, _p, _acc: pol.edges[e].alias is not None)
    for a, pa, b, pb in pairs_where(ctx, overrides, lambda _e, _p, _acc: True, reads=True):
        ea, eb = pol.edges[a], pol.edges[b]
        acc_a, acc_b = ea.accesses()[pa], eb.accesses()[pb]
        sa, sb = alias_of(ctx, ea, acc_a.footprint), alias_of(ctx, eb, acc_b.footprint)
        if sa != sb:
            yield AliasOverlap(ctx, a, pa, acc_a, sa, b, pb, acc_b, sb)


def _region_overlaps(ctx: Context) -> Iterator[Obligation]:
    by_space: dict[str, list[Region]] = {}
    for r in ctx.policy.regions:
        by_space.setdefault(r.space, []).append(r)
    for _space, regions in sorted(by_space.items()):
        regions.sort(key=lambda r: (r.base, r.name))
        active: list[Region] = []
        for r in regions:
            active = [x for x in active if x.end > r.base]
            for x in active:
                sx = x.alias_set or f"region {x.name}"
                sr = r.alias_set or f"region {r.name}"
                if sx != sr:
                    yield RegionOverlap(ctx, x, sx, r, sr)
            active.append(r)
