"""The symbolic form of a declaration's index space and footprints, for parametric proofs.

``Symbolic`` translates the policy's integer expressions and conditions into solver terms over
loop variables, as ``resolve.expressions`` computes them (``/`` floor division and ``%`` the
remainder in ``[0, c)`` by a positive constant, which SMT-LIB's ``div``/``mod`` are);
``family_terms`` and ``domain`` state a declaration's loops and branches (an instance exists
exactly when they hold); ``footprint_terms`` and ``footprint_bytes`` state a footprint's bytes;
``inside_by_intervals`` decides a footprint's bounds over the loop box without a solver
(``smt.intervals``). The parametric prover (``obligations.parametric``) and the HB orders
(``obligations.hb_orders``) build their queries from them; the property tests in
``tests/obligations/test_parametric.py`` evaluate every translated term at every instance of
random families. Emits no diagnostics; raises ``NotAffine`` where documented.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, fields, is_dataclass

from fxverify import ast
from fxverify.resolve.expressions import arith
from fxverify.resolve.references import index_items
from fxverify.resolve.state import EvalError
from fxverify.shapes import EdgeShape, RegionShape
from fxverify.smt import intervals
from fxverify.smt.terms import Term, add, and_, div, eq, int_var, mod, mul, not_, or_, sub
from fxverify.source import Span
from fxverify.vocab import UNITS

_COMPARE = {"==": eq, "!=": lambda a, b: not_(eq(a, b)), "<": lambda a, b: as_term(a) < b,
            "<=": lambda a, b: as_term(a) <= b, ">": lambda a, b: as_term(a) > b, ">=": lambda a, b: as_term(a) >= b}


class NotAffine(Exception):
    """An expression ``Symbolic`` does not translate; ``str(err)`` says which and why."""


def as_term(x: Term | int) -> Term:
    """``x`` as a term (an ``int`` becomes a constant)."""
    return x if isinstance(x, Term) else add(x)


class Symbolic:
    """Translates the policy's integer expressions (``ast.Expr``) and conditions (``ast.Cond``)
    into solver terms, with ``env`` giving the term of each variable in scope. Constants fold to
    ``int`` as ``resolve.expressions`` folds them. Raises ``NotAffine`` for what linear integer
    arithmetic cannot state as the resolver computes it."""

    def __init__(self, env: dict[str, Term | int]) -> None:
        self.env = env

    def expr(self, e: ast.Expr) -> Term | int:
        """The term (or folded ``int``) of ``e``; raises ``NotAffine``."""
        if isinstance(e, ast.IntLit):
            return e.value
        if isinstance(e, ast.SizeLit):
            if e.unit.name not in UNITS:
                raise NotAffine(f"unknown unit `{e.unit.name}`")
            return e.count * UNITS[e.unit.name]
        if isinstance(e, ast.Var):
            if e.name not in self.env:
                raise NotAffine(f"`{e.name}` is not an index variable")
            return self.env[e.name]
        if isinstance(e, ast.Neg):
            inner = self.expr(e.operand)
            return -inner if isinstance(inner, int) else sub(0, inner)
        assert isinstance(e, ast.BinOp)
        a, b = self.expr(e.left), self.expr(e.right)
        op = e.op
        if isinstance(a, int) and isinstance(b, int):
            try:
                return arith(op, a, b, e.span)  # folded as the resolver folds it
            except EvalError as err:
                raise NotAffine(err.message) from None
        if op == "+":
            return add(a, b)
        if op == "-":
            return sub(a, b)
        if op == "*":
            if isinstance(a, int):
                return mul(a, b)
            if isinstance(b, int):
                return mul(b, a)
            raise NotAffine("a product of two index expressions")
        if not isinstance(b, int) or b <= 0:
            raise NotAffine("a division or remainder by something other than a positive constant")
        return div(a, b) if op == "/" else mod(a, b)

    def cond(self, c: ast.Cond) -> Term:
        """The Boolean term of ``c``; raises ``NotAffine``."""
        if isinstance(c, ast.Compare):
            return _COMPARE[c.op](as_term(self.expr(c.left)), self.expr(c.right))
        if isinstance(c, ast.BoolOp):
            left, right = self.cond(c.left), self.cond(c.right)
            return and_(left, right) if c.op == "and" else or_(left, right)
        assert isinstance(c, ast.Not)
        return not_(self.cond(c.operand))


@dataclass(frozen=True)
class FamilyTerms:
    """One declaration's symbolic index space: ``vars`` (a solver variable per loop, outermost
    first) and ``domain`` (the loop ranges and the branch conditions around it)."""

    vars: tuple[Term, ...]
    domain: tuple[tuple[str, Term], ...]
    sym: Symbolic


def family_terms(shape: EdgeShape, prefix: str = "i_", label: str = "") -> FamilyTerms:
    """The symbolic index space of ``shape``: a variable ``PREFIX<var>`` per loop, and its
    ``domain`` with each fact named ``LABEL<var>_in_range`` or ``LABEL branch_<n>``. Raises
    ``NotAffine`` for a branch condition the translation does not take."""
    env: dict[str, Term | int] = {loop.var: int_var(f"{prefix}{loop.var}") for loop in shape.loops}
    sym = Symbolic(env)
    return FamilyTerms(tuple(env.values()), domain(shape, sym, label), sym)  # type: ignore[arg-type]  # all variables


def domain(shape: EdgeShape, sym: Symbolic, label: str = "") -> tuple[tuple[str, Term], ...]:
    """The loop ranges and branch conditions of ``shape`` over ``sym``'s terms for its loop
    variables (an instance exists exactly when they hold; a loop variable given as an ``int``
    folds its range to true or false). Raises ``NotAffine``."""
    out: list[tuple[str, Term]] = []
    for loop in shape.loops:
        v = sym.env[loop.var]
        inside = (and_() if loop.lo <= v < loop.hi else or_()) if isinstance(v, int) else and_(v >= loop.lo, v < loop.hi)
        out.append((f"{label}{loop.var}_in_range", inside))
    for n, (c, taken) in enumerate(shape.conds):
        t = sym.cond(c)
        out.append((f"{label}branch_{n}", t if taken else not_(t)))
    return tuple(out)


def split_ref(ref: ast.Ref, regions: dict[str, RegionShape]) -> tuple[RegionShape, list[ast.Item], tuple[ast.Group, ...]]:
    """The shape of the region family ``ref`` names, its index items and its slice group (if any);
    raises ``NotAffine`` for a family without a shape or an index that is not an expression."""
    rs = regions.get(ref.name.name)
    if rs is None:
        raise NotAffine(f"region `{ref.name.name}` has no shape")
    items, gi = index_items(ref.groups, len(rs.dims))
    if len(items) != len(rs.dims) or any(not isinstance(it, ast.IndexItem) for it in items):
        raise NotAffine("an index that is not an expression")
    return rs, items, ref.groups[gi:]


def footprint_terms(ref: ast.Ref, regions: dict[str, RegionShape], sym: Symbolic
                    ) -> tuple[Term | int, Term | int, Term | int, Term | int, list[tuple[str, Term]]]:
    """``(lo, hi, base, end)`` of the footprint ``ref`` names, in bytes, as terms over ``sym``'s
    variables (``ir.Footprint.lo``/``hi`` and the region instance's ``base``/``end``), and the
    facts every built instance satisfies (each region index inside its declared range). Raises
    ``NotAffine``."""
    rs, items, rest = split_ref(ref, regions)
    facts: list[tuple[str, Term]] = []
    renv: dict[str, Term | int] = {}
    for n, (it, var, (lo, hi)) in enumerate(zip(items, rs.vars, rs.dims)):
        assert isinstance(it, ast.IndexItem)
        t = sym.expr(it.expr)
        renv[var] = t
        if isinstance(t, Term):
            facts.append((f"region_index_{n}_declared", and_(t >= lo, t < hi)))
    rsym = Symbolic(renv)
    base, size = rsym.expr(rs.at), rsym.expr(rs.size)
    end = _sum(base, size)
    if not rest:
        return base, end, base, end, facts
    first, more = rest[0].items[0], rest[0].items[1:]
    assert isinstance(first, ast.IndexItem)  # INVARIANT: the resolver built every instance of it
    lo = _sum(base, sym.expr(first.expr))
    if len(more) == 1 and isinstance(more[0], ast.LenItem):
        return lo, _sum(lo, sym.expr(more[0].expr)), base, end, facts
    keys = {it.key: sym.expr(it.expr) for it in more if isinstance(it, ast.KeyItem)}
    elem, stride, count = keys["elem"], keys["stride"], keys["count"]
    last = _product(_sum(count, -1), stride)
    return lo, _sum(_sum(lo, last), elem), base, end, facts


def footprint_bytes(ref: ast.Ref, regions: dict[str, RegionShape], sym: Symbolic) -> Term | int:
    """The bytes the footprint ``ref`` names cover (``ir.Footprint.nbytes``: ``elem * count``), as
    a term over ``sym``'s variables, or an ``int`` when no index changes it. Raises ``NotAffine``."""
    rs, items, rest = split_ref(ref, regions)
    if not rest:
        renv = {var: sym.expr(it.expr) for it, var in zip(items, rs.vars) if isinstance(it, ast.IndexItem)}
        return Symbolic(renv).expr(rs.size)
    more = rest[0].items[1:]
    if len(more) == 1 and isinstance(more[0], ast.LenItem):
        return sym.expr(more[0].expr)
    keys = {it.key: sym.expr(it.expr) for it in more if isinstance(it, ast.KeyItem)}
    return _product(keys["elem"], keys["count"])


def index_free(node: object, names: Container[str]) -> bool:
    """True when no variable of ``names`` occurs in the syntax tree ``node`` (an ``ast`` node, or
    a tuple of them): its value is the same for every index value."""
    if isinstance(node, ast.Var):
        return node.name not in names
    if isinstance(node, tuple):
        return all(index_free(x, names) for x in node)
    if is_dataclass(node) and not isinstance(node, Span):
        return all(index_free(getattr(node, f.name), names) for f in fields(node))
    return True


def _sum(a: Term | int, b: Term | int) -> Term | int:
    return a + b if isinstance(a, int) and isinstance(b, int) else add(a, b)


def _product(a: Term | int, b: Term | int) -> Term | int:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int):
        return mul(a, b)
    if isinstance(b, int):
        return mul(b, a)
    raise NotAffine("a strided slice whose count and stride (or elem) both depend on the indices")


def inside_by_intervals(shape: EdgeShape, ref: ast.Ref, regions: dict[str, RegionShape]) -> bool:
    """True when interval bounds (``smt.intervals``) over the loop ranges of ``shape`` alone keep
    the footprint ``ref`` inside its region for every index value: ``lo - at >= 0`` and
    ``hi - (at + size) <= 0`` at every point of the loop box, which holds every instance's index
    values (branches only remove points), so the FX-ALIAS-003 query of ``bounds_queries`` is
    unsat. False when they do not show it (the solver then decides), or for an expression the
    translation or the intervals do not take."""
    box = {f"i_{lp.var}": (lp.lo, lp.hi - 1) for lp in shape.loops}
    if any(a > b for a, b in box.values()):
        return True  # an empty loop: no instance
    try:
        lo, hi, base, end, _facts = footprint_terms(ref, regions, family_terms(shape).sym)
        return intervals.term_bounds(sub(lo, base), box)[0] >= 0 and intervals.term_bounds(sub(hi, end), box)[1] <= 0
    except (NotAffine, ValueError):
        return False
