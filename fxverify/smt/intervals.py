"""Interval bounds of linear integer terms over a box of variable ranges, without a solver.

``term_bounds`` puts a term (``smt.terms``: ``+``, ``-``, constant ``*``, ``div`` and ``mod`` by
a positive constant) in linear normal form, so that a variable occurring on both sides of a
difference cancels exactly (``(at + off) - at`` is ``off``), then bounds each atom: a variable by
its range, ``div(t, c)`` by ``floor`` of ``t``'s bounds (floor division is monotone), ``mod(t,
c)`` by ``t``'s bounds when they lie in ``[0, c)`` and by ``[0, c - 1]`` otherwise. The result
contains every value the term takes on the box (interval arithmetic: sound, maybe loose). The
parametric prover (``obligations.parametric``) decides with it, before asking the solver, the
FX-ALIAS-003 queries whose footprints stay in their regions over the whole loop box; the test
``tests/test_intervals.py`` compares the bounds with every value of random terms on their
boxes. Raises ``ValueError`` for a term outside that fragment or a variable with no range.
"""

from __future__ import annotations

from collections.abc import Mapping

from fxverify.smt.terms import Term

#: (inclusive lower, inclusive upper) bound.
Bounds = tuple[int, int]


def linear(t: Term | int) -> tuple[dict[Term, int], int]:
    """``t`` as ``sum(coefficient * atom) + constant``: atoms are variables and ``div``/``mod``
    terms (with their arguments as written). Raises ``ValueError`` for other operators."""
    if isinstance(t, int):
        return {}, t
    if t.op == "const" and not isinstance(t.value, bool):
        return {}, int(t.value)
    if t.op in ("var", "div", "mod"):
        return {t: 1}, 0
    if t.op in ("+", "-") and t.args:
        coeffs: dict[Term, int] = {}
        total = 0
        for n, a in enumerate(t.args):
            sign = -1 if t.op == "-" and n > 0 else 1
            cs, c = linear(a)
            total += sign * c
            for atom, k in cs.items():
                coeffs[atom] = coeffs.get(atom, 0) + sign * k
        return {a: k for a, k in coeffs.items() if k}, total
    if t.op == "*" and len(t.args) == 2 and t.args[0].op == "const":
        k = int(t.args[0].value)
        cs, c = linear(t.args[1])
        return {a: k * v for a, v in cs.items() if k * v}, k * c
    raise ValueError(f"`{t.op}` is not a linear integer operator")


def term_bounds(t: Term | int, box: Mapping[str, Bounds]) -> Bounds:
    """The least and greatest values ``t`` can take when each variable ``name`` ranges over
    ``box[name]`` (inclusive), or wider. Raises ``ValueError`` (see the module docstring)."""
    cs, lo = linear(t)
    hi = lo
    for atom, k in cs.items():
        a, b = _atom_bounds(atom, box)
        lo += min(k * a, k * b)
        hi += max(k * a, k * b)
    return lo, hi


def _atom_bounds(atom: Term, box: Mapping[str, Bounds]) -> Bounds:
    if atom.op == "var":
        if atom.name not in box:
            raise ValueError(f"`{atom.name}` has no range")
        return box[atom.name]
    inner, divisor = atom.args
    c = int(divisor.value) if divisor.op == "const" else 0
    if c <= 0:
        raise ValueError(f"`{atom.op}` by something other than a positive constant")
    a, b = term_bounds(inner, box)
    if atom.op == "div":
        return a // c, b // c
    return (a, b) if 0 <= a and b < c else (0, c - 1)
