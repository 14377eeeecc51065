"""Parametric FX-OWN-001 beyond static owners: a declaration whose instances touch regions another
device owns, or regions that are handed off, proved for every index value by HB and leases
(``Owners``), for the declarations ``Parametric.proved_static_owners`` leaves (its ``more``).

A disaggregated prefill's NIC reads every KV block under a lease the GPU grants on the block's
write, and writes the decode node's copy before the flush that hands it over
(``edge send[l, 0, b]: move kvb0[l, b] -> rkv0[l][...] by dpu0.tx after kvw[l, 0, b]``). Each
footprint position ``p`` of a declaration ``U`` on device ``D`` is proved one of two ways:

- *owner by HB*: every region meeting the hull of ``U``'s footprints at ``p`` is ``D``'s when
  the flow starts, its space has no ``alloc``, and for every declaration ``H`` with a
  ``handoff`` clause in that space (whose handed-off regions' hull meets the hull of ``U``'s
  footprints there: no other can pair), every instance of ``U`` is HB-before every instance of
  ``H`` whose handed-off region meets one of its footprints (``hb_orders.Orders``). A region
  ``r`` the instance touches at ``p`` meets that footprint, and so does every region whose
  handoff moves ``r`` (``r`` or a region containing it: ``Context.handoffs``), so every handoff
  of ``r`` is HB-after the instance and ``D`` still owns ``r``: ``owners.owned_by_hb``;
- *lease*: ``p`` is a read, and every instance ``U[i]`` names, through a chain of ``after``
  references of at most ``hb_orders.MAX_STEPS``, an instance ``G[j]`` of a declaration whose
  ``lease`` clause leases to ``D`` the very region instance ``U[i]``'s footprint at ``p`` names
  (same family, equal indices). One QF_LIA query over ``U``'s loop indices, as FX-INIT-001's
  covers (``hb_orders.path_term`` with ``G``'s loop values solved from ``U``'s): ``G[j]``
  exists, is HB-before ``U[i]``, and names the region in a lease to ``D`` (``names_lease``).

Then every instance is checked against what the argument assumed, by lookups: it releases,
revokes and hands off nothing (so its owner checks are the regions it touches,
``Context.owner_checks``); and each region ``r`` it is checked against either is the region its
footprint names at a lease position, read only (a lease is not enough for a write), with no
handoff and no revoke from ``D`` (``Context.handoffs``, ``Context.revokes``: nothing ends the
lease), or meets its footprint at an owner position. Either way ``Unowned.prove_fast`` would
prove it (``hb-reachability``, ``static-owner`` or ``lease-hb``): the verdict is the same, only
the method is ``parametric``. Not tried under an HB cycle (``prover_for``). The property test in
``tests/obligations/test_hb_owners.py`` checks every obligation so proved against
``Unowned.prove_fast`` on random families. Emits no diagnostics; raises nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.obligations.base import Context
from fxverify.obligations.hb_orders import (MAX_STEPS, Orders, Paths, decide, footprint_refs, handoff_refs, indexed,
                                            meeting, path_term, prover_for, region_spaces)
from fxverify.obligations.parametric import Parametric
from fxverify.obligations.symbolic import NotAffine, Symbolic, split_ref
from fxverify.shapes import EdgeShape, Shapes
from fxverify.smt.backend import Query
from fxverify.smt.terms import Term, and_, eq, not_, or_
from fxverify.source import Span

#: A footprint position's proof: by HB over the handoffs of regions its device owns (``OWNER``),
#: or by a lease named along a chain of ``after`` references (``LEASE``).
OWNER, LEASE = "owner", "lease"


class Owners:
    """The FX-OWN-001 proofs by HB and leases of one generation (the module docstring), with the
    check's parametric ``prover``: ``reason`` decides one declaration (at most one solver query
    per footprint position and one per handoff declaration it is ordered before)."""

    def __init__(self, ctx: Context, prover: Parametric, shapes: Shapes) -> None:
        pol = ctx.policy
        self.ctx, self.prover, self.shapes, self.paths = ctx, prover, shapes, Paths(shapes)
        self.spaces = region_spaces(pol)
        self.orders = Orders(prover)  # its rows are not reported: ``proved_static_owners`` reports one per declaration
        self.alloc_spaces = {pol.region(a.region).space for e in pol.edges for a in e.allocs}
        # space -> the declarations with a handoff clause of a region in it, each with the hull
        # [lo, hi) of the regions its instances hand off there (bytes)
        self.handing: dict[str, dict[Span, tuple[int, int]]] = {}
        for e in pol.edges:
            for h in e.handoffs:
                r = pol.region(h.region)
                got = self.handing.setdefault(r.space, {})
                lo, hi = got.get(e.span, (r.base, r.end))
                got[e.span] = (min(lo, r.base), max(hi, r.end))
        self._instances: dict[Span, list[ir.Edge]] | None = None
        self._hull_cache: dict[Span, list[tuple[str, int, int] | None]] = {}

    def reason(self, span: Span, static: str) -> str:
        """"" when every FX-OWN-001 obligation of every instance of declaration ``span`` holds by
        HB and leases, else why not (``static``, the reason ``proved_static_owners`` gave, first)."""
        u = self.shapes.edges.get(span)
        instances = self._of(span)
        first = instances[0] if instances else None
        if u is None or first is None or first.releases or first.revokes or first.handoffs:
            return static  # the instances' owner checks then go beyond the regions they touch
        if not self.prover.worth_a_query(span):
            return static  # its instances are proved faster on their own than by a query
        modes: list[str] = []
        for pos, ref in enumerate(footprint_refs(u)):
            owner = self._owner(u, span, pos)
            if not owner:
                modes.append(OWNER)
                continue
            why = static if owner == static else f"{static}; by HB, {owner}"
            if first.accesses()[pos].mode is not ir.AccessMode.READ:
                return why  # a lease lends reads only
            lease = self._lease(u, pos, ref)
            if lease:
                return f"{why}; by a lease, {lease}"
            modes.append(LEASE)
        return self._instances_fit(span, u.device, modes)

    def _owner(self, u: EdgeShape, span: Span, pos: int) -> str:
        """"" when every region meeting the hull of ``u``'s footprints at ``pos`` is its device's
        when the flow starts and keeps it up to ``u``'s instances, else why not."""
        hulls = self._hulls(span)
        hull = hulls[pos] if pos < len(hulls) else None
        if hull is None:
            return "an instance has no footprint there"
        space, lo, hi = hull
        if space in self.alloc_spaces:
            return f"space `{space}` has an `alloc`"
        other = self.prover.not_owned(space, u.device, lo, hi)
        if other:
            return other
        pairing = meeting(self.shapes, self.spaces, footprint_refs, handoff_refs)
        same = [x for x in hulls if x is not None and x[0] == space]
        for h, (hlo, hhi) in sorted(self.handing.get(space, {}).items(), key=lambda kv: (kv[0].file, kv[0].start)):
            if not any(flo < hhi and hlo < fhi for _s, flo, fhi in same):
                continue  # no region it hands off meets a footprint of `u` in that space: no pair to order
            if not self.orders.proved(codes.OWN_001, span, h, pairing):
                hs = self.shapes.edges.get(h)
                return f"a handoff of `{hs.name if hs else '?'}` may come first"
        return ""

    def _hulls(self, span: Span) -> list[tuple[str, int, int] | None]:
        """Per footprint position, ``(space, lo, hi)``: the hull of the footprints there of every
        instance of ``span`` (bytes), or ``None`` when some instance has none there or two
        spaces differ. Computed once per declaration (every position's proof reads them all)."""
        got = self._hull_cache.get(span)
        if got is not None:
            return got
        instances = self._of(span)
        hulls: list[tuple[str, int, int] | None] = []
        for pos in range(max((len(e.accesses()) for e in instances), default=0)):
            hull: tuple[str, int, int] | None = None
            for e in instances:
                acc = e.accesses()
                if pos >= len(acc) or (hull is not None and hull[0] != acc[pos].footprint.space):
                    hull = None
                    break
                fp = acc[pos].footprint
                hull = (fp.space, fp.lo, fp.hi) if hull is None else (hull[0], min(hull[1], fp.lo), max(hull[2], fp.hi))
            hulls.append(hull)
        self._hull_cache[span] = hulls
        return hulls

    def _lease(self, u: EdgeShape, pos: int, ref: ast.Ref) -> str:
        """"" when the query proves that every instance of ``u`` reads its footprint's region at
        ``pos`` (a read) under a lease granted to its device HB-before it (the module docstring),
        else why not."""
        try:
            ui = indexed(u, f"r.{u.name}")
            _rs, mine, _slice = split_ref(ref, self.shapes.regions)
        except NotAffine as err:
            return f"not affine: {err}"
        grants = [(g, c) for g in self.shapes.edges.values() for c in g.clauses
                  if isinstance(c, ast.LeaseClause) and c.device.name == u.device and c.ref.name.name == ref.name.name]
        found = self.paths.paths_to(u, {g.span for g, _c in grants}, MAX_STEPS)
        alts: list[Term] = []
        for g, c in grants:
            for decls, links in found.get(g.span, ()):
                try:
                    t = path_term(decls, links, ui, None)
                    if t is None:
                        continue
                    _rs, theirs, _slice = split_ref(c.ref, self.shapes.regions)
                    same = _equal(Symbolic(t[1]), theirs, ui.sym, mine)
                except NotAffine:
                    continue
                if same is not None:
                    alts.append(and_(t[0], *same))
        if not alts:
            return (f"no chain of at most {MAX_STEPS} `after` references names a lease of `{ref.name.name}` "
                    f"to `{u.device}` for its instances")
        code = codes.OWN_001
        q = Query(f"{code}:lease:{u.name}#{pos}@{u.span.file}:{u.span.start}", ui.domain + (("unleased", not_(or_(*alts))),),
                  minimize=ui.vars, header=(f"{code}: every instance of `{u.name}` ({u.where}) reads its footprint {pos} "
                                            f"under a lease to `{u.device}` granted HB-before it, over its loop indices",))
        return decide(self.prover, code, q)

    def _instances_fit(self, span: Span, device: str, modes: Sequence[str]) -> str:
        """"" when every instance of ``span`` has only the owner checks the positions' proofs
        cover (the module docstring), else the first instance that does not, and why."""
        ctx = self.ctx
        checks = ctx.owner_checks()
        for e in self._of(span):
            if e.releases or e.revokes or e.handoffs:
                return f"`{e.name}` releases, revokes or hands off a region"
            acc = e.accesses()
            leased = {acc[p].footprint.region for p, m in enumerate(modes) if m == LEASE}
            owned = [acc[p].footprint for p, m in enumerate(modes) if m == OWNER]
            for r, writes in checks.get(e.eid, {}).items():
                if r in leased and not writes and not ctx.handoffs.get(r) and not ctx.revokes.get((r, device)):
                    continue
                reg = ctx.policy.region(r)
                if any(fp.space == reg.space and reg.base < fp.hi and fp.lo < reg.end for fp in owned):
                    continue
                return f"`{e.name}` touches `{r}`, which no position's proof covers"
        return ""

    def _of(self, span: Span) -> list[ir.Edge]:
        """The instances of declaration ``span``, in edge order."""
        if self._instances is None:
            self._instances = {}
            for e in self.ctx.policy.edges:
                self._instances.setdefault(e.span, []).append(e)
        return self._instances.get(span, [])


def _equal(gsym: Symbolic, theirs: Sequence[ast.Item], usym: Symbolic, mine: Sequence[ast.Item]) -> list[Term] | None:
    """The equations "the region indices ``theirs`` (over ``gsym``) equal ``mine`` (over
    ``usym``)", or ``None`` when two constants differ."""
    out: list[Term] = []
    for a, b in zip(theirs, mine):
        assert isinstance(a, ast.IndexItem) and isinstance(b, ast.IndexItem)  # INVARIANT: ``split_ref`` checked
        x, y = gsym.expr(a.expr), usym.expr(b.expr)
        if isinstance(x, int) and isinstance(y, int):
            if x != y:
                return None
            continue
        out.append(eq(x, y))
    return out


def owners_for(ctx: Context) -> Owners | None:
    """The FX-OWN-001 proofs by HB and leases of a generation when the check's prover proves
    FX-OWN-001, the policy has its shapes and HB is acyclic (``prover_for``), else ``None``."""
    prover = prover_for(ctx, codes.OWN_001)
    shapes = Shapes.of(ctx.policy)
    return Owners(ctx, prover, shapes) if prover is not None and shapes is not None else None
