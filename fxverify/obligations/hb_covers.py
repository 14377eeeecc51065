"""Parametric def-before-use (FX-INIT-001): every instance of a read declaration reads bytes
that are ``init``, or that a write HB-before it defines, proved once for every index value
(``Covers``, ``cover_query``), on the declaration paths of ``hb_orders``.

A write declaration ``W`` defines a read instance's bytes when a path of ``after`` references
``W -> X1 -> ... -> R`` names one of its instances per read instance (``hb_orders.path_term``)
whose destination holds the read's hull, or when the path's last reference names, with one
``*``, every instance over a loop of ``W`` and their destinations tile the hull (``_tiles``).
Only writes that define their whole destination count (``whole_write``). Unsat of the query
proves every instance, and the unrolled fast proof (``defined.Unwritten``, ``hb-cover``) would
hold too; the property tests in ``tests/obligations/test_hb_covers.py`` check it on random
families. Emits no diagnostics; raises nothing but ``NotAffine`` where documented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.obligations.base import Context
from fxverify.obligations.hb_orders import (PathStep, Paths, decide, footprint_refs, indexed, path_term, prover_for,
                                            region_spaces, var_names)
from fxverify.obligations.parametric import Parametric, Report
from fxverify.obligations.symbolic import inside_by_intervals, NotAffine, Symbolic, as_term, domain, footprint_bytes, footprint_terms
from fxverify.shapes import EdgeShape, RegionShape, Shapes
from fxverify.smt.backend import Query
from fxverify.smt.terms import Term, add, and_, between, int_var, not_, or_
from fxverify.source import Span
from fxverify.xforms import XfKind

#: Def-before-use (``Covers``) follows paths of at most this many ``after`` references: a
#: reduction into a buffer every layer reuses is defined by the previous layer's, five steps back
#: in a prefill flow (``rs_f[l - 1] -> wq -> kvw -> attn -> attn_out -> rs_a[l]``). One search
#: from the read finds the paths to every writer at once (``Paths.paths_to``).
COVER_STEPS = 5

#: At most this many paths, the shortest first, go into one cover query (``cover_query``): a bound on
#: the query's size, not a rule (a read left unproved falls back to its instances). The 8B
#: corpus policy needs at most 3; a 70B TP 8 flow, whose ranks an all-reduce joins, has hundreds.
COVER_PATHS = 32


def cover_query(paths: Paths, name: str, r: EdgeShape, pos: int, writers: Sequence[EdgeShape],
                spaces: Mapping[str, str], loaded: Mapping[str, tuple[int, int] | None], header: str
                ) -> Query | str:
    """The query whose unsat proves that, for every instance of ``r``, the bytes of its access
    ``pos`` (the ``pos``-th of its footprint references, as ``ir.Edge.accesses`` orders
    them) are all loaded or written before it: its hull ``[lo, hi)`` lies in its region
    when ``loaded`` maps the region's family to ``None`` (every instance declared ``init``),
    or in the ``[lo, hi)`` it maps it to (its space, declared ``init``); or an instance of
    one of ``writers`` whose whole destination (``whole_write``) lies in the read's space
    (``spaces``: region family -> space) and holds the hull, reached along a path of at
    most ``COVER_STEPS`` ``after`` references that names one of its instances per read
    instance (``path_term``), which exists; or the instances of one of ``writers`` that a
    ``*`` names, tiling the hull together (``_tiles``). Or why there is none (no such path,
    or an expression the translation does not take)."""
    try:
        ri = indexed(r, f"r.{r.name}")
        ref = footprint_refs(r)[pos]
        lo, hi, base, end, facts = footprint_terms(ref, paths.shapes.regions, ri.sym)
    except NotAffine as err:
        return f"not affine: {err}"
    space = spaces.get(ref.name.name)
    covered: list[Term] = []
    if ref.name.name in loaded:
        lo_end = loaded[ref.name.name] or (base, end)
        covered.append(_within(lo, hi, *lo_end))
    usable = {w.span: w for w in writers
              if space is not None and (dst := whole_write(w)) is not None and spaces.get(dst.name.name) == space}
    regions = paths.shapes.regions
    # the shortest paths first, at most COVER_PATHS in all: a flow whose ranks an all-reduce joins
    # has hundreds, and a query of them all (megabytes of terms) cost more than its instances
    found = sorted(((len(decls), n, span, decls, links) for span, got in paths.paths_to(r, usable, COVER_STEPS).items()
                    for n, (decls, links) in enumerate(got)), key=lambda t: t[:2])
    for _len, _n, span, decls, links in found[:COVER_PATHS]:
        w = usable[span]
        try:
            got = path_term(decls, links, ri, None)
            if got is None:
                continue
            wlo, whi, facts_w = _defined(w, Symbolic(got[1]), regions)
            covered.append(and_(got[0], *facts_w, _within(lo, hi, wlo, whi)))
            # INVARIANT (soundness): each tiles disjunct gets names of its own for its "for
            # every b" variables (``_tiles``): ``covered`` only grows, so the index is unique
            tiles = _tiles(regions, f"tiles{len(covered)}", w, links[-1], got, lo, hi)
        except NotAffine:
            continue
        if tiles is not None:
            covered.append(tiles)
    if not covered:
        return (f"not `init`, and no write that defines its whole destination reaches `{r.name}` along a chain "
                f"of at most {COVER_STEPS} `after` references")
    return Query(name, ri.domain + tuple((f"r_{n}", t) for n, t in facts) + (("unwritten", not_(or_(*covered))),),
                 minimize=ri.vars, header=(header,))


def _tiles(regions: Mapping[str, RegionShape], name: str, w: EdgeShape, last: PathStep,
           path: tuple[Term, dict[str, Term | int]], lo: Term | int, hi: Term | int) -> Term | None:
    """The condition under which the instances of ``w`` that the path's last reference ``last``
    names with a ``*`` over one loop variable ``b`` of ``w`` (``w[.., *, ..]``, ``b`` in no
    other index) define, together, every byte of ``[lo, hi)``; ``None`` when it has no such
    ``*``. ``path`` is the path's ``path_term``: no equation names ``b``, so it holds with ``b``
    at its loop's first value ``L``, and the other values it solves are the same for every
    ``b``. Each instance is HB-before the read (the ``*`` names them all), so it suffices
    that, over ``b``'s loop ``[L, H)``: the path holds; every instance exists
    and defines its destination (``_defined``); consecutive destinations tile, ``lo(b) <=
    lo(b + 1) <= hi(b) <= hi(b + 1)``, so that they cover ``[lo(L), hi(H - 1))`` without a
    gap; and that holds the read's bytes.

    "For every ``b``" is stated with a variable of its own per condition (``NAME.every``,
    ``NAME.next``), which the query leaves free: an unsat query refutes every value of it.
    Each disjunct of the query has its own (``name`` is unique in the query), so the query
    proves one disjunct for every value of them, never a mix. Raises ``NotAffine``."""
    stars = [p for p, it in enumerate(last.items) if isinstance(it, ast.StarItem)]
    if len(stars) != 1:
        return None
    label = w.index[stars[0]]
    loop = next((lp for lp in w.loops if isinstance(label, ast.Var) and lp.var == label.name), None)
    if loop is None or loop.hi - loop.lo < 1 or any(
            loop.var in var_names(e) for p, e in enumerate(w.index) if p != stars[0]):
        return None
    env = path[1]
    every, nxt = int_var(f"{name}.every"), int_var(f"{name}.next")

    def at(b: Term | int) -> Symbolic:
        return Symbolic({**env, loop.var: b})

    dst = whole_write(w)
    assert dst is not None  # INVARIANT: ``cover_query`` passes writers ``whole_write`` accepts
    lo_first = footprint_terms(dst, regions, at(loop.lo))[0]
    hi_last = footprint_terms(dst, regions, at(loop.hi - 1))[1]
    _l, _h, each = _defined(w, at(every), regions)
    exists = [t for _, t in domain(w, at(every))]
    lo_b, hi_b = footprint_terms(dst, regions, at(nxt))[:2]
    lo_n, hi_n = footprint_terms(dst, regions, at(add(nxt, 1)))[:2]
    tile = and_(as_term(lo_b) <= as_term(lo_n), as_term(lo_n) <= as_term(hi_b), as_term(hi_b) <= as_term(hi_n))
    return and_(path[0], _within(lo, hi, lo_first, hi_last),
                or_(not_(between(every, loop.lo, loop.hi)), and_(*exists, *each)),
                or_(not_(between(nxt, loop.lo, loop.hi - 1)), tile))


def _defined(w: EdgeShape, sym: Symbolic, regions: Mapping[str, RegionShape]) -> tuple[Term | int, Term | int, list[Term]]:
    """``(lo, hi, facts)``: the bytes ``[lo, hi)`` the instance of ``w`` at ``sym`` defines (its
    destination, ``whole_write``), and the facts under which it does: its footprints' region
    indices in range, and, for a move or reduce, a source no smaller than the destination (it
    defines the first min(src, dst) bytes). Raises ``NotAffine``."""
    dst = whole_write(w)
    assert dst is not None  # INVARIANT: callers pass writers ``whole_write`` accepts
    wlo, whi, _b, _e, wfacts = footprint_terms(dst, regions, sym)
    enough = [] if w.src is None else [as_term(footprint_bytes(w.src, regions, sym)) >= as_term(footprint_bytes(dst, regions, sym))]
    return wlo, whi, [t for _, t in wfacts] + enough


def _within(lo: Term | int, hi: Term | int, outer_lo: Term | int, outer_hi: Term | int) -> Term:
    """``[lo, hi)`` lies in ``[outer_lo, outer_hi)``."""
    return and_(as_term(outer_lo) <= as_term(lo), as_term(hi) <= as_term(outer_hi))


#: Transform steps through which a ``move`` or ``reduce`` emits as many bytes as it reads: with
#: these alone, one whose source is no smaller than its destination defines all of it
#: (``ir.Edge.defines``). INVARIANT: ``ir._fewest_out`` returns ``n`` for each of them.
_KEEPS_LENGTH = frozenset(k.value for k in (XfKind.MOVE, XfKind.CHECKSUM, XfKind.PERSIST))


def whole_write(shape: EdgeShape) -> ast.Ref | None:
    """The destination reference of ``shape`` when every instance defines all of it and it is
    one contiguous interval (no ``elem``/``stride``/``count``): a ``write``, or a ``move`` or
    ``reduce`` whose transform steps are all in ``_KEEPS_LENGTH`` (its source must then be no
    smaller: ``cover_query`` states it). Else ``None``."""
    dst = shape.dst
    if dst is None or any(isinstance(it, ast.KeyItem) for g in dst.groups for it in g.items):
        return None
    if isinstance(shape.action, ast.WriteAction):
        return dst
    steps = [st.kind.name for c in shape.clauses if isinstance(c, ast.TransformClause) for st in c.steps]
    if isinstance(shape.action, (ast.MoveAction, ast.ReduceAction)) and all(k in _KEEPS_LENGTH for k in steps):
        return dst
    return None


class Covers:
    """The FX-INIT-001 proofs of one generation (``defined.generate``), with the check's
    parametric ``prover``: ``proved`` asks once per read declaration and access whether a write
    HB-before every instance defines all its bytes (``cover_query``), and counts the
    instances; ``report`` records a ``parametric.Report`` per access asked.

    Only what the unrolled fast proof (``defined.Unwritten``, ``hb-cover``) would prove is
    claimed: the write is another edge (HB is acyclic) that nobody cancels, writes the read's
    bytes in their space and is HB-before the read, so it serves the read (``definers.serves``)
    and covers it; and the read's space has no ``alloc`` and no cancelled write, the only
    things that make a served byte stale (``defined.Unwritten._kills``). A read in such a
    space, or of a cancelled write's declaration, is left to the unrolled proof."""

    def __init__(self, ctx: Context, prover: Parametric, shapes: Shapes) -> None:
        pol = ctx.policy
        self.prover, self.shapes, self.paths = prover, shapes, Paths(shapes)
        self.spaces = region_spaces(pol)
        # region family -> None when every instance is `init`, or its space's bounds when that is
        loaded_spaces = {sp.name: (sp.base, sp.end) for sp in pol.spaces if sp.init}
        self.loaded: dict[str, tuple[int, int] | None] = {
            r.family: loaded_spaces[r.space] for r in pol.regions if r.space in loaded_spaces}
        mixed = {r.family for r in pol.regions if not r.init}
        self.loaded.update((r.family, None) for r in pol.regions if r.init and r.family not in mixed)
        cancelled = [x for x, by in ctx.cancellers.items() if by]
        self.stale = {pol.region(name).space for name, eids in ctx.allocs.items() if eids}
        self.stale |= {a.footprint.space for x in cancelled for a in pol.edges[x].accesses()
                       if a.mode is not ir.AccessMode.READ}
        # a cancelled writer's space is refused already (``stale``); left out as well, so that a
        # cover never rests on a write that may stop halfway, whatever the space test becomes
        skip = {pol.edges[x].span for x in cancelled}
        self.writers = [w for w in shapes.edges.values() if w.span not in skip and whole_write(w) is not None]
        self.families = prover.families()
        # (declaration, access) -> ["" when proved, else why not; the instances counted]
        self.found: dict[tuple[Span, int], list] = {}

    def proved(self, span: Span, pos: int) -> bool:
        """True when every instance of declaration ``span`` has its access ``pos`` defined by a
        write HB-before it (one solver query per declaration and access, on first use). Counts
        one instance either way. A declaration of fewer than ``parametric.QUERY_MIN_INSTANCES``
        instances is not asked (its instances are proved faster on their own), nor counted."""
        if span not in self.families or not self.prover.worth_a_query(span):
            return False
        key = (span, pos)
        got = self.found.get(key)
        if got is None:
            got = self.found[key] = [self._ask(span, pos), 0]
        got[1] += 1
        return not got[0]

    def _ask(self, span: Span, pos: int) -> str:
        r = self.shapes.edges.get(span)
        if r is None:
            return "no shape"
        refs = footprint_refs(r)
        space = self.spaces.get(refs[pos].name.name) if pos < len(refs) else None
        if space is None:
            return "its footprint names no region family"
        if space in self.stale:
            return f"space `{space}` has an `alloc` or a cancelled write: the unrolled proof decides"
        if self.loaded.get(refs[pos].name.name, ()) is None and inside_by_intervals(r, refs[pos], self.shapes.regions):
            # every instance of the family is `init` and interval bounds keep each footprint in its
            # region: the query's first disjunct holds for every instance, so it is unsat unasked
            return ""
        code = codes.INIT_001
        q = cover_query(self.paths, f"{code}:{r.name}#{pos}@{span.file}:{span.start}", r, pos, self.writers, self.spaces,
                        self.loaded, f"{code}: every instance of `{r.name}` ({r.where}) reads bytes a write HB-before it "
                        f"defines, access {pos}, over its loop indices")
        return q if isinstance(q, str) else decide(self.prover, code, q)

    def report(self) -> None:
        """Record a ``Report`` per access asked, in the order first asked."""
        for (span, pos), (why, count) in self.found.items():
            r = self.shapes.edges.get(span)
            self.prover.reports.append(Report(r.name if r else "", r.where if r else "", codes.INIT_001, pos, count, why))


def covers_for(ctx: Context) -> Covers | None:
    """The FX-INIT-001 proofs of a generation when the check's prover proves FX-INIT-001, the
    policy has its shapes and HB is acyclic (as for ``orders_for``), else ``None``."""
    prover = prover_for(ctx, codes.INIT_001)
    shapes = Shapes.of(ctx.policy)
    return Covers(ctx, prover, shapes) if prover is not None and shapes is not None else None


