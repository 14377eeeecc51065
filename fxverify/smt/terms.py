"""Solver-neutral terms for obligations (quantifier-free linear integer arithmetic with Booleans).

Obligation encoders build ``Term`` trees with the constructors below; backends translate them
(``z3_backend``) or print them (``smtlib``). Terms are immutable and hashable, so identical
sub-terms are shared. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Sort(Enum):
    """The two sorts fxverify uses: ``Int`` (bytes, ns, indices) and ``Bool``."""

    INT = "Int"
    BOOL = "Bool"


@dataclass(frozen=True, slots=True)
class Term:
    """A term: ``op`` is an SMT-LIB operator (``+``, ``<=``, ``and``, ``ite``...) or ``var``/``const``.

    ``args`` holds sub-terms; ``name`` is set for variables; ``value`` for constants.
    """

    op: str
    sort: Sort
    args: tuple["Term", ...] = ()
    name: str = ""
    value: int | bool = 0

    # Operator sugar keeps encoders readable: ``s_a < f_b`` builds a term, never compares.
    def __add__(self, other: "Term | int") -> "Term":
        return add(self, other)

    def __radd__(self, other: int) -> "Term":
        return add(other, self)

    def __sub__(self, other: "Term | int") -> "Term":
        return sub(self, other)

    def __rsub__(self, other: int) -> "Term":
        return sub(other, self)

    def __mul__(self, other: int) -> "Term":
        return mul(other, self)

    def __rmul__(self, other: int) -> "Term":
        return mul(other, self)

    def __le__(self, other: "Term | int") -> "Term":  # type: ignore[override]
        return _cmp("<=", self, other)

    def __lt__(self, other: "Term | int") -> "Term":  # type: ignore[override]
        return _cmp("<", self, other)

    def __ge__(self, other: "Term | int") -> "Term":  # type: ignore[override]
        return _cmp(">=", self, other)

    def __gt__(self, other: "Term | int") -> "Term":  # type: ignore[override]
        return _cmp(">", self, other)


def _lift(x: "Term | int | bool") -> Term:
    if isinstance(x, Term):
        return x
    if isinstance(x, bool):
        return Term("const", Sort.BOOL, value=x)
    return Term("const", Sort.INT, value=int(x))


def int_var(name: str) -> Term:
    """An integer variable. Names must be SMT-LIB simple symbols (``[A-Za-z0-9_.$]``)."""
    return Term("var", Sort.INT, name=name)


def bool_var(name: str) -> Term:
    """A Boolean variable."""
    return Term("var", Sort.BOOL, name=name)


def const(v: int | bool) -> Term:
    """An integer or Boolean constant."""
    return _lift(v)


TRUE = Term("const", Sort.BOOL, value=True)
FALSE = Term("const", Sort.BOOL, value=False)


def add(*xs: "Term | int") -> Term:
    """Sum of integer terms."""
    return Term("+", Sort.INT, tuple(_lift(x) for x in xs))


def sub(a: "Term | int", b: "Term | int") -> Term:
    """Difference ``a - b``."""
    return Term("-", Sort.INT, (_lift(a), _lift(b)))


def mul(c: int, t: "Term | int") -> Term:
    """Product of a constant and a term (linear arithmetic only)."""
    return Term("*", Sort.INT, (_lift(c), _lift(t)))


def div(t: "Term | int", c: int) -> Term:
    """Integer division by a positive constant (SMT-LIB ``div``, floor for positive divisors)."""
    return Term("div", Sort.INT, (_lift(t), _lift(c)))


def mod(t: "Term | int", c: int) -> Term:
    """Remainder by a positive constant (SMT-LIB ``mod``, in ``[0, c)``)."""
    return Term("mod", Sort.INT, (_lift(t), _lift(c)))


def _cmp(op: str, a: "Term | int", b: "Term | int") -> Term:
    return Term(op, Sort.BOOL, (_lift(a), _lift(b)))


def eq(a: "Term | int | bool", b: "Term | int | bool") -> Term:
    """Equality of two terms of the same sort."""
    return Term("=", Sort.BOOL, (_lift(a), _lift(b)))


def and_(*xs: Term) -> Term:
    """Conjunction (``true`` when empty)."""
    if not xs:
        return TRUE
    return xs[0] if len(xs) == 1 else Term("and", Sort.BOOL, tuple(xs))


def or_(*xs: Term) -> Term:
    """Disjunction (``false`` when empty)."""
    if not xs:
        return FALSE
    return xs[0] if len(xs) == 1 else Term("or", Sort.BOOL, tuple(xs))


def not_(x: Term) -> Term:
    """Negation."""
    return Term("not", Sort.BOOL, (x,))


def ite(c: Term, a: "Term | int", b: "Term | int") -> Term:
    """If-then-else over integers."""
    return Term("ite", Sort.INT, (c, _lift(a), _lift(b)))


def between(x: Term, lo: "Term | int", hi: "Term | int") -> Term:
    """``lo <= x < hi``."""
    return and_(_cmp("<=", lo, x), _cmp("<", x, hi))


def free_vars(terms: list[Term]) -> list[Term]:
    """Return the variables occurring in ``terms``, in first-occurrence order (deterministic)."""
    seen: dict[str, Term] = {}
    stack = list(reversed(terms))
    while stack:
        t = stack.pop()
        if t.op == "var":
            seen.setdefault(t.name, t)
        else:
            stack.extend(reversed(t.args))
    return list(seen.values())


def rename_vars(t: Term, suffix: str) -> Term:
    """``t`` with every variable renamed ``name + suffix`` (a copy of a formula over fresh
    variables, for queries about two schedules at once)."""
    if t.op == "var":
        return Term("var", t.sort, name=t.name + suffix)
    return Term(t.op, t.sort, tuple(rename_vars(a, suffix) for a in t.args), t.name, t.value)


def evaluate(t: Term, values: dict[str, int | bool]) -> int | bool | None:
    """The value of ``t`` when its variables take ``values`` (a model), or ``None`` when a variable
    of ``t`` has no value there. ``div`` and ``mod`` follow SMT-LIB for positive divisors (floor,
    and a remainder in ``[0, c)``), which Python's ``//`` and ``%`` match."""
    op = t.op
    if op == "var":
        return values.get(t.name)
    if op == "const":
        return t.value
    args = [evaluate(a, values) for a in t.args]
    if any(a is None for a in args):
        return None
    if op == "and":
        return all(args)
    if op == "or":
        return any(args)
    if op == "not":
        return not args[0]
    if op == "ite":
        return args[1] if args[0] else args[2]
    if op == "+":
        return sum(args)  # type: ignore[arg-type]
    # INVARIANT: ``div`` and ``mod`` terms divide by a positive constant (``div``, ``mod``), where
    # Python's floor division and remainder are SMT-LIB's
    return _BINARY[op](args[0], args[1])


_BINARY = {
    "-": lambda a, b: a - b, "*": lambda a, b: a * b, "div": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
}


def satisfies(values: dict[str, int | bool], formulas: list[Term], terms: list[Term]) -> bool:
    """True when ``values`` is a model of the conjunction of ``formulas``: every variable of
    ``formulas`` and of ``terms`` (a query's objectives) has a value of its sort (a ``bool`` for
    ``Bool``, an ``int`` otherwise), and every formula evaluates to ``True`` (``evaluate``: exact
    integer arithmetic, as SMT-LIB's). A checked model, as a solver's sat answer is one."""
    for v in free_vars([*formulas, *terms]):
        got = values.get(v.name)
        if got is None or isinstance(got, bool) is not (v.sort is Sort.BOOL):
            return False
    return all(evaluate(f, values) is True for f in formulas)
