"""Parametric happens-before: every instance of one edge declaration HB-before the instances of
another that an obligation pairs it with, proved once for every index value (``Orders``:
FX-OWN-002, FX-OWN-004, FX-MAP-004); and the declaration paths that ``hb_covers`` proves
def-before-use on (FX-INIT-001).

The HB graph has an edge ``a -> b`` for each instance name an ``after`` clause of ``b`` resolves
to (``graph.hb_adjacency``; BRIEF section 2). In a family the references are affine in the loop
variables: ``edge send[l, 0, b]: ... after kvw[l, 0, b]`` puts ``kvw[l, 0, b] -> send[l, 0, b]``
for every ``(l, b)`` the loops and branches admit, and ``after send[l, 0, *]`` an edge from every
existing ``send[l, 0, b']``. A *path* of declarations ``U -> X1 -> ... -> R``, each named by an
``after`` reference of the next, orders ``U[i]`` before ``R[j]`` when every intermediate instance
exists (its loop values lie in their ranges and branches, as ``symbolic.family_terms`` states
them) and each reference names the instance before it: the referenced index equals that
instance's index at every position the reference does not leave to ``*``
(``resolve.references.edge_set``). An intermediate's loop
values are solved from those equations (an index written ``v``, ``v + c``, ``c + v`` or
``v - c``), so the query has no quantifier; a value they leave open (a ``*`` names every value)
is taken at its loop's first value, which must exist and satisfy every equation like the others
(only that value is tried: a chain that only later values complete falls back, never more).
A path longer than ``MAX_STEPS`` references (``COVER_STEPS`` for a cover) is not tried.

``Paths.query`` states, for declarations ``U`` and ``R`` and a pairing condition over both
index tuples (``Pairing``: the footprints or clause regions of ``U`` meeting the regions ``R``
releases, say), the index values the condition admits that no tried path orders. Unsat proves
``U[i]`` HB-before ``R[j]`` for every such pair: each path is a path of the HB graph, so
``graph.hb_before`` holds for every unrolled pair the condition admits, and the unrolled
obligation's own ``hb-reachability`` proof would hold; the verdict is the same, only the method is
``parametric``. Sat or unknown proves nothing: the pair's instances are unrolled, as before.
The property test in ``tests/obligations/test_hb_orders.py`` compares every claimed order with
``graph.hb_before`` on the unrolled instances of random families. Emits no diagnostics; raises
nothing but ``NotAffine`` where documented.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.obligations.base import Context
from fxverify.obligations.parametric import Parametric, Report, solver_reason
from fxverify.obligations.symbolic import NotAffine, Symbolic, as_term, domain, family_terms, footprint_terms
from fxverify.resolve.references import index_items
from fxverify.shapes import EdgeShape, Shapes
from fxverify.smt.backend import Query
from fxverify.smt.terms import Term, and_, eq, not_, or_, sub
from fxverify.source import Span

#: Paths of at most this many ``after`` references are tried: enough for a use, the transfer
#: after it and the release after that (``kvw -> send -> free``), and a bounded query.
MAX_STEPS = 3

#: At most this many paths go into one query (the shortest first). A bound on the query's size,
#: not a rule: a pair with more paths may fall back. The generated prefill policies need 1 or 2.
MAX_PATHS = 32

#: At most this many partial paths are extended per length: a family of many declarations (one
#: per rank and branch) multiplies them. A bound on the search, not a rule; the generated
#: prefill policies stay far below it.
MAX_FRONTIER = 256


@dataclass(frozen=True)
class Indexed:
    """One declaration's index space under a variable prefix: ``sym`` translates expressions over
    its loop variables, ``domain`` holds its loop ranges and branch conditions, ``vars`` its
    solver variables (outermost loop first)."""

    shape: EdgeShape
    sym: Symbolic
    domain: tuple[tuple[str, Term], ...]
    vars: tuple[Term, ...]


def indexed(shape: EdgeShape, prefix: str) -> Indexed:
    """The index space of ``shape`` (``symbolic.family_terms``) with one solver variable per
    loop named ``PREFIX.VAR``, and its facts ``PREFIX.VAR_in_range``/``PREFIX.branch_<n>`` (``.``
    occurs in no name of the language, so two prefixes never give one name); raises
    ``NotAffine`` for a branch condition the translation does not take."""
    t = family_terms(shape, f"{prefix}.", f"{prefix}.")
    return Indexed(shape, t.sym, t.domain, t.vars)


def after_refs(shape: EdgeShape) -> Iterator[ast.Ref]:
    """The references of ``shape``'s ``after`` clauses (not ``notifies``), as written."""
    for c in shape.clauses:
        if isinstance(c, ast.AfterClause) and not c.notifies:
            yield from c.refs


def var_names(e: ast.Expr) -> set[str]:
    """The names of the variables that occur in expression ``e``."""
    if isinstance(e, ast.Var):
        return {e.name}
    if isinstance(e, ast.BinOp):
        return var_names(e.left) | var_names(e.right)
    if isinstance(e, ast.Neg):
        return var_names(e.operand)
    return set()


def _solvable(e: ast.Expr) -> tuple[str, int] | None:
    """``(v, c)`` when ``e`` is ``v + c`` in one of the forms ``v``, ``v + c``, ``c + v``,
    ``v - c`` (``c`` an integer literal), else ``None``."""
    if isinstance(e, ast.Var):
        return e.name, 0
    if isinstance(e, ast.BinOp) and e.op in ("+", "-"):
        a, b = e.left, e.right
        if isinstance(a, ast.Var) and isinstance(b, ast.IntLit):
            return a.name, b.value if e.op == "+" else -b.value
        if e.op == "+" and isinstance(a, ast.IntLit) and isinstance(b, ast.Var):
            return b.name, a.value
    return None


@dataclass(frozen=True)
class PathStep:
    """One ``after`` reference of the path: ``ref``'s items (over step ``at``'s variables) name
    an instance of the declaration at step ``at + 1``."""

    at: int
    items: tuple[ast.Item, ...]


def _items(ref: ast.Ref, dims: int) -> tuple[ast.Item, ...] | None:
    items, used = index_items(list(ref.groups), dims)
    if used != len(ref.groups) or len(items) != dims:
        return None
    if any(not isinstance(it, (ast.IndexItem, ast.StarItem)) for it in items):
        return None
    return tuple(items)


def _may_name(items: tuple[ast.Item, ...], label: tuple[ast.Expr, ...]) -> bool:
    """False when a constant index of ``items`` differs from a constant index of ``label``: the
    reference cannot name an instance of that declaration."""
    for it, lab in zip(items, label):
        if isinstance(it, ast.IndexItem) and isinstance(it.expr, ast.IntLit) and isinstance(lab, ast.IntLit):
            if it.expr.value != lab.value:
                return False
    return True


#: A pairing condition: the facts over a ``U`` instance's and an ``R`` instance's index spaces
#: under which the obligation pairs them (``(name, term)`` each). Raises ``NotAffine``.
Pairing = Callable[[Indexed, Indexed], Sequence[tuple[str, Term]]]


class Paths:
    """The declaration-level HB paths of one resolution's ``shapes``: ``paths`` finds the chains of
    ``after`` references from one declaration to another, ``query`` states a pair of
    declarations ordered for every index value."""

    def __init__(self, shapes: Shapes) -> None:
        self.shapes = shapes
        self.by_family: dict[str, list[EdgeShape]] = {}
        for shape in shapes.edges.values():
            self.by_family.setdefault(shape.name, []).append(shape)

    def paths(self, u: EdgeShape, r: EdgeShape) -> list[tuple[list[EdgeShape], list[PathStep]]]:
        """The declaration paths ``u -> ... -> r`` of at most ``MAX_STEPS`` ``after`` references,
        shortest first, at most ``MAX_PATHS``: each as its declarations from ``r`` back to ``u``
        and the reference of each step naming the next one. At most ``MAX_FRONTIER`` partial paths
        are followed per length."""
        return self.paths_to(r, {u.span}, MAX_STEPS).get(u.span, [])

    def paths_to(self, r: EdgeShape, targets: Container[Span], steps: int
                 ) -> dict[Span, list[tuple[list[EdgeShape], list[PathStep]]]]:
        """``paths`` from each declaration of ``targets`` (spans) to ``r`` at once, of at most
        ``steps`` references: one search back from ``r``, at most ``MAX_PATHS`` paths per target
        and ``MAX_FRONTIER`` partial paths per length."""
        found: dict[Span, list[tuple[list[EdgeShape], list[PathStep]]]] = {}
        frontier: list[tuple[list[EdgeShape], list[PathStep]]] = [([r], [])]
        for _ in range(steps):
            nxt: list[tuple[list[EdgeShape], list[PathStep]]] = []
            for decls, links in frontier:
                for ref in after_refs(decls[-1]):
                    for x in self.by_family.get(ref.name.name, ()):
                        items = _items(ref, len(x.index))
                        if items is None or not _may_name(items, x.index):
                            continue
                        step = (decls + [x], links + [PathStep(len(decls) - 1, items)])
                        if x.span in targets:
                            got = found.setdefault(x.span, [])
                            if len(got) < MAX_PATHS:
                                got.append(step)
                        if len(nxt) < MAX_FRONTIER:
                            nxt.append(step)
            frontier = nxt
        return found

    def query(self, name: str, u: EdgeShape, r: EdgeShape, pairing: Pairing, header: str,
              keep: Callable[[list[EdgeShape]], bool] | None = None, via: str = "") -> Query | str:
        """The query whose unsat proves every instance of ``u`` HB-before every instance of ``r``
        that ``pairing`` pairs it with (the instance itself excepted when ``u`` is ``r``), or why
        there is none (no path, or an expression the translation does not take). ``keep``: only
        the paths (their declarations, from ``r`` back to ``u``) it accepts order a pair (a path
        through a flush of a link, ``hb_flushes``), which ``via`` says in the reason ("through a
        flush of `l`")."""
        try:
            ui, ri = indexed(u, f"u.{u.name}"), indexed(r, f"r.{r.name}")
            paired = tuple(pairing(ui, ri))
        except NotAffine as err:
            return f"not affine: {err}"
        ordered: list[Term] = []
        for decls, links in self.paths(u, r):
            if keep is not None and not keep(decls):
                continue
            try:
                t = path_term(decls, links, ri, ui)
            except NotAffine:
                continue
            if t is not None:
                ordered.append(t[0])
        if not ordered:
            through = f" {via}" if via else ""
            return f"no chain of at most {MAX_STEPS} `after` references from `{u.name}` to `{r.name}`{through} names its instances"
        same: tuple[tuple[str, Term], ...] = ()
        if u.span == r.span:
            same = (("another_instance", or_(*[not_(eq(a, b)) for a, b in zip(ui.vars, ri.vars)])),)
        return Query(name, ui.domain + ri.domain + paired + same + (("unordered", not_(or_(*ordered))),),
                     minimize=ui.vars + ri.vars, header=(header,))


class Orders:
    """The pair proofs of one family's generation, with the check's parametric ``prover``:
    ``proved`` asks once per code and pair of declarations whether every paired instance of the
    first is HB-before the second's (``Paths.query``), and counts the unrolled obligations it
    stands for; ``report`` records a ``parametric.Report`` per pair asked. Without shapes (a
    policy edited after resolution) nothing is proved."""

    def __init__(self, prover: Parametric) -> None:
        self.prover = prover
        shapes = Shapes.of(prover.policy)
        self.paths = Paths(shapes) if shapes is not None else None
        # (code, u, r, either) -> ["" when proved, else why not; True when proved the other way
        # round; the obligations counted]. Each code passes one pairing and one ``either`` (its
        # callers are fixed), but the key holds ``either`` so that a proof of "R before U" never
        # answers "U before R". One entry holds all three: ``proved`` runs once per unrolled
        # obligation, and hashes its key once.
        self.found: dict[tuple[codes.Code, Span, Span, bool], list] = {}

    def proved(self, code: codes.Code, u: Span, r: Span, pairing: Pairing, either: bool = False) -> bool:
        """True when every instance of declaration ``u`` that ``pairing`` pairs with an instance of
        declaration ``r`` is HB-before it, for obligation ``code``; with ``either``, or every such
        instance of ``r`` is HB-before its ``u`` instance (one solver query per code, pair and
        direction, on first use). Counts one obligation of the pair either way."""
        if not self.prover.worth_a_query(u, r):
            return False  # not asked, nor reported: the pair's instances are proved faster on their own
        key = (code, u, r, either)
        got = self.found.get(key)
        if got is None:
            why = self._ask(code, u, r, pairing)
            got = [why, False, 0]
            if why and either:
                back = self._ask(code, r, u, lambda a, b: pairing(b, a))
                got = [back, True, 0] if not back else [f"{why}; the other way round, {back}", False, 0]
            self.found[key] = got
        got[2] += 1
        return not got[0]

    def _ask(self, code: codes.Code, u: Span, r: Span, pairing: Pairing) -> str:
        if self.paths is None:
            return "no shape"
        us, rs = self.paths.shapes.edges.get(u), self.paths.shapes.edges.get(r)
        if us is None or rs is None:
            return "no shape"
        name = f"{code}:{us.name}<{rs.name}@{u.file}:{u.start}@{r.file}:{r.start}"
        q = self.paths.query(name, us, rs, pairing, f"{code}: every paired instance of `{us.name}` ({us.where}) "
                                                   f"happens-before `{rs.name}` ({rs.where}), over both loop indices")
        return q if isinstance(q, str) else decide(self.prover, code, q)

    def report(self) -> None:
        """Record a ``Report`` per pair asked, in the order first asked: the declaration ordered
        first as its ``family``, the other as ``before``."""
        shapes = self.paths.shapes if self.paths is not None else None
        for (code, u, r, _either), (why, flipped, count) in self.found.items():
            first, then = (r, u) if flipped else (u, r)
            fs = shapes.edges.get(first) if shapes is not None else None
            ts = shapes.edges.get(then) if shapes is not None else None
            self.prover.reports.append(Report(fs.name if fs else "", fs.where if fs else "", str(code), 0,
                                              count, why, ts.name if ts else ""))


def path_term(decls: list[EdgeShape], links: list[PathStep], ri: Indexed, ui: Indexed | None
              ) -> tuple[Term, dict[str, Term | int]] | None:
    """The condition under which the path ``decls`` (from ``R`` back to ``U``) orders ``U[i]``
    before ``R[j]``: each intermediate instance exists and each reference names the instance
    before it; and ``U``'s loop values, as terms. With ``ui`` ``None``, ``U``'s loop values are
    solved like an intermediate's (``U``'s instance is a function of ``R``'s, and must exist).
    A loop value the equations leave open (a ``*`` names every value) is taken at its loop's
    first value, and the instance so named must exist like the others. ``None`` when an
    equation cannot hold. Raises ``NotAffine``."""
    last = len(decls) - 1
    envs: list[dict[str, Term | int]] = ([dict(ri.sym.env)] + [{} for _ in range(last - 1)]
                                         + [{} if ui is None else dict(ui.sym.env)])
    # each equation: (step of the labelled instance, its label expression, step of the reference, the item)
    eqs = [(lk.at + 1, decls[lk.at + 1].index[p], lk.at, it.expr)
           for lk in links for p, it in enumerate(lk.items) if isinstance(it, ast.IndexItem)]

    # only an intermediate's own loop variables are solved for (the ends' are all known)
    solved = range(1, last + 1) if ui is None else range(1, last)
    open_vars: list[set[str]] = [set() for _ in decls]
    for step in solved:
        open_vars[step] = {lp.var for lp in decls[step].loops}

    def known(step: int, e: ast.Expr) -> bool:
        return var_names(e) <= envs[step].keys()

    while True:
        progress = True
        while progress:
            progress = False
            for a, ea, b, eb in eqs:
                for (s1, e1), (s2, e2) in (((a, ea), (b, eb)), ((b, eb), (a, ea))):
                    form = _solvable(e1)
                    if form is not None and form[0] in open_vars[s1] and form[0] not in envs[s1] and known(s2, e2):
                        v, c = form
                        other = Symbolic(envs[s2]).expr(e2)
                        envs[s1][v] = other - c if isinstance(other, int) else sub(other, c)
                        progress = True
        # INVARIANT (soundness): a value no equation fixes (a ``*``, or a label the equations do
        # not solve for) may be any whose instance the references name: each named instance is
        # HB-before the step naming it. The first of its loop's is taken; that it exists
        # (``domain``) and that every reference names it (each equation) are facts below.
        gap = next(((step, lp) for step in solved for lp in decls[step].loops if lp.var not in envs[step]), None)
        if gap is None:
            break
        envs[gap[0]][gap[1].var] = gap[1].lo
    facts: list[Term] = []
    for step in solved:
        facts += [t for _, t in domain(decls[step], Symbolic(envs[step]))]
    for a, ea, b, eb in eqs:
        x, y = Symbolic(envs[a]).expr(ea), Symbolic(envs[b]).expr(eb)
        if isinstance(x, int) and isinstance(y, int):
            if x != y:
                return None
            continue
        facts.append(eq(x, y))
    return and_(*facts), envs[last]


#: The clauses whose region an edge hands off, leases, revokes, releases or allocates.
_CLAUSE_REGIONS = (ast.HandoffClause, ast.LeaseClause, ast.RevokeClause, ast.ReleaseClause, ast.AllocClause)


def touched_refs(shape: EdgeShape) -> list[ast.Ref]:
    """Every region reference of ``shape`` that a use of a region can come from
    (``graph.by_region_uses``, ``Context.true_handoffs``, the releases): its footprints, and the
    regions its action and clauses hand off, lease, revoke, release or allocate.

    INVARIANT (soundness of the FX-OWN-004 pairing): every way an edge uses a region in
    ``ownership._uses_before_releases`` is here: its footprints' bytes (``ir.Edge.accesses``
    reads only ``src``/``dst``, and ``by_region_uses`` finds regions by address within a space),
    and the handoff, lease and revoke clauses (``by_region_uses``, by name; a handoff moves the
    regions its region contains, ``Context.moves``, which is byte containment), and the releases.
    A new kind of use added there must be added here, or a pair could go unpaired."""
    refs = footprint_refs(shape)
    if isinstance(shape.action, (ast.ReleaseAction, ast.AllocClause)):
        refs.append(shape.action.ref)
    refs += [c.ref for c in shape.clauses if isinstance(c, _CLAUSE_REGIONS)]
    return refs


def footprint_refs(shape: EdgeShape) -> list[ast.Ref]:
    """The footprint references of ``shape`` (``src``, ``dst``): the bytes it touches."""
    return [r for r in (shape.src, shape.dst) if r is not None]


def handoff_refs(shape: EdgeShape) -> list[ast.Ref]:
    """The region references ``shape``'s ``handoff`` clauses name."""
    return [c.ref for c in shape.clauses if isinstance(c, ast.HandoffClause)]


def released_refs(shape: EdgeShape) -> list[ast.Ref]:
    """The region references ``shape`` releases: its ``release`` action's and clauses'."""
    refs = [shape.action.ref] if isinstance(shape.action, ast.ReleaseAction) else []
    return refs + [c.ref for c in shape.clauses if isinstance(c, ast.ReleaseClause)]


def meeting(shapes: Shapes, spaces: Mapping[str, str], left: Callable[[EdgeShape], list[ast.Ref]],
            right: Callable[[EdgeShape], list[ast.Ref]]) -> Pairing:
    """The pairing "some region reference ``left`` gives of the ``U`` instance meets one that
    ``right`` gives of the ``R`` instance": in one space (``spaces``: region family -> space),
    their byte intervals ``[lo, hi)`` (a strided footprint's hull) intersect. It admits every pair
    whose regions share a byte, and maybe more; the region indices are inside their declared
    ranges (``footprint_terms``), as in every built instance.

    INVARIANT: a region named by a clause contains (or is) every region instance it stands for
    in the unrolled policy, and each family lies in one space (``region_spaces``), so two regions
    sharing a byte meet here."""

    def pairing(ui: Indexed, ri: Indexed) -> list[tuple[str, Term]]:
        facts: list[tuple[str, Term]] = []
        sides = []
        for side, ix, refs in (("u", ui, left(ui.shape)), ("r", ri, right(ri.shape))):
            got = []
            for n, ref in enumerate(refs):
                lo, hi, _base, _end, fs = footprint_terms(ref, shapes.regions, ix.sym)
                facts += [(f"{side}{n}_{name}", t) for name, t in fs]
                got.append((spaces.get(ref.name.name), lo, hi))
            sides.append(got)
        meets = [and_(as_term(alo) < bhi, as_term(blo) < ahi) for sa, alo, ahi in sides[0] for sb, blo, bhi in sides[1]
                 if sa is not None and sa == sb]
        return facts + [("regions_meet", or_(*meets))]

    return pairing


def orders_for(ctx: Context, code: codes.Code) -> Orders | None:
    """The pair proofs of ``code`` for a family's generation when the check has a parametric
    prover that proves it (``Context.parametric``, ``Parametric.skip``), the policy has its
    shapes and HB is acyclic (under a cycle the schedule-dependent obligations are dropped,
    ``families._kept``), else ``None``."""
    prover = prover_for(ctx, code)
    return Orders(prover) if prover is not None else None


def prover_for(ctx: Context, code: codes.Code) -> Parametric | None:
    """``ctx``'s parametric prover when it proves ``code``, the policy has its shapes and HB is
    acyclic (``orders_for``, ``covers_for``), else ``None``."""
    prover = ctx.parametric
    if prover is None or str(code) in prover.skip or Shapes.of(ctx.policy) is None or not ctx.graph.is_acyclic():
        return None
    return prover


def decide(prover: Parametric, code: codes.Code, q: Query) -> str:
    """Ask ``prover``'s backend ``q`` for ``code``, counted as a query of ``code``'s family:
    ``""`` when unsat, else the fallback reason (``solver_reason``)."""
    prover.queries[code.family] += 1
    return solver_reason(q, prover.backend.check_many([q])[0])


def region_spaces(policy: ir.Policy) -> dict[str, str]:
    """Region family -> its address space (every instance of a family lies in one space)."""
    return {r.family: r.space for r in policy.regions}


#: The map operations that write an entry (``maps._WRITES``, by their ``ir.MapOpKind`` values).
_MAP_WRITES = tuple(k.value for k in (ir.MapOpKind.WRITE, ir.MapOpKind.UPDATE))


def same_entry(ui: Indexed, ri: Indexed) -> list[tuple[str, Term]]:
    """The pairing "a write or update of ``U`` and an ``aggregate`` of ``R`` name the same entry
    of one map": the maps' names equal and the key expressions equal over both index spaces
    (``resolve.edges._map_op`` computes each instance's key from them). Raises ``NotAffine``
    (a key naming a device, say).

    INVARIANT: ``maps.generate`` pairs an ``aggregate`` with the writes of ``maps._WRITES`` keyed
    by ``(map, key)``, every map operation comes from a ``MapOpClause`` (``resolve.edges``), and
    ``_MAP_WRITES`` names the same kinds as ``maps._WRITES``."""
    same = [eq(as_term(ui.sym.expr(a.target.key)), ri.sym.expr(b.target.key))
            for a in _map_ops(ui.shape, _MAP_WRITES) for b in _map_ops(ri.shape, ("aggregate",))
            if a.target.map.name == b.target.map.name]
    return [("same_entry", or_(*same))]


def _map_ops(shape: EdgeShape, kinds: tuple[str, ...]) -> list[ast.MapOpClause]:
    return [c for c in shape.clauses if isinstance(c, ast.MapOpClause) and c.kind in kinds]
