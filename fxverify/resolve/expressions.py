"""Integer expressions and conditions: compiled once per declaration, evaluated per instance.

``compile_expr`` turns an AST expression into a closure ``env -> int`` (constants are folded), so
an edge family of a million instances evaluates its index arithmetic without walking the AST
again. ``const`` and ``const_range`` evaluate constant expressions; ``checked`` adds a bound check
to a closure; ``compile_cond`` compiles an ``if`` condition. Emits FX-TYP-003 (unknown unit),
FX-NAM-001/FX-TYP-001 (a name that is not an index variable), FX-TYP-002 (division by zero, a value
out of bounds, a backwards range) and FX-LIM-001 (a range longer than ``Limits.max_range``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from fxverify import ast
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.resolve.names import choices, suggest
from fxverify.resolve.state import KINDS, Env, EvalError, Fn, State, article
from fxverify.source import Span
from fxverify.vocab import UNITS

_CMP: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


#: The largest magnitude an expression may have. Addresses and sizes are 64-bit (BRIEF section 2);
#: 2^128 leaves room for products of two of them and keeps every value printable (Python refuses
#: to print integers of more than 4,300 digits, ``sys.int_info``) and cheap to solve over.
MAX_MAGNITUDE = 1 << 128
#: The help of a value past ``MAX_MAGNITUDE``: the 2^128 bound is on any value of an expression,
#: partial products included, while a declared address or size must also fit in 64 bits.
TOO_LARGE_HELP = ("no value of an expression, partial products included, may pass 2^128, and addresses and sizes "
                  "are 64-bit: write the value the hardware uses")


def const_fn(value: Any) -> Fn:
    """The closure that ignores its environment and returns ``value``."""
    return lambda env: value


def compile_expr(st: State, e: ast.Expr, scope: tuple[str, ...], *, devices: bool = False,
                 outer: tuple[str, ...] = ()) -> Fn | None:
    """Compile an integer expression to a closure ``env -> int``; ``None`` after a static error.

    ``scope`` holds the index variables in scope. With ``devices``, a name that is not a
    variable may be a device (its index in ``Policy.devices``). ``outer`` holds variables that
    exist but may not be used (loop variables in constant range bounds).
    """
    ok = [True]
    fn = _compile_node(st, e, scope, devices, outer, ok)
    if not ok[0]:
        return None
    span = e.span
    if isinstance(fn, int):
        if not -MAX_MAGNITUDE <= fn <= MAX_MAGNITUDE:
            st.error(codes.LIM_001, f"value of {fn.bit_length()} bits exceeds the limit of 2^128", span, "too large",
                     help=TOO_LARGE_HELP)
            return None
        return const_fn(fn)
    inner = fn

    def bounded(env: Env) -> int:
        v = inner(env)
        if -MAX_MAGNITUDE <= v <= MAX_MAGNITUDE:
            return v
        raise EvalError(codes.LIM_001, span, f"value of {v.bit_length()} bits exceeds the limit of 2^128",
                        TOO_LARGE_HELP, "too large")
    return bounded


def _compile_node(st: State, e: ast.Expr, scope: tuple[str, ...], devices: bool, outer: tuple[str, ...],
                  ok: list[bool]) -> Any:
    """Compile one node: an ``int`` for constants (folded), else a closure; clears ``ok[0]`` after
    reporting an error."""
    if isinstance(e, ast.IntLit):
        return e.value
    if isinstance(e, ast.SizeLit):
        unit = UNITS.get(e.unit.name)
        if unit is None:
            st.error(codes.TYP_003, f"unknown unit `{e.unit.name}`", e.unit.span, "not a unit",
                     help=choices(e.unit.name, tuple(UNITS)))
            ok[0] = False
            return 0
        return e.count * unit
    if isinstance(e, ast.Var):
        return _compile_var(st, e, scope, devices, outer, ok)
    if isinstance(e, ast.Neg):
        inner = _compile_node(st, e.operand, scope, devices, outer, ok)
        if isinstance(inner, int):
            return -inner
        return lambda env: -inner(env)
    assert isinstance(e, ast.BinOp)
    left = _compile_node(st, e.left, scope, devices, outer, ok)
    right = _compile_node(st, e.right, scope, devices, outer, ok)
    op, span = e.op, e.span
    if isinstance(left, int) and isinstance(right, int):
        if op in "/%" and right == 0:
            st.error(codes.TYP_002, "division by zero", span, "divides by zero",
                     help="the divisor is a constant 0 here; divide by a nonzero size or count")
            ok[0] = False
            return 0
        return arith(op, left, right, span)
    lf = const_fn(left) if isinstance(left, int) else left
    rf = const_fn(right) if isinstance(right, int) else right
    if op == "+":
        return lambda env: lf(env) + rf(env)
    if op == "-":
        return lambda env: lf(env) - rf(env)
    if op == "*":
        return lambda env: lf(env) * rf(env)
    return lambda env: arith(op, lf(env), rf(env), span)


def _compile_var(st: State, e: ast.Var, scope: tuple[str, ...], devices: bool, outer: tuple[str, ...],
                 ok: list[bool]) -> Any:
    name = e.name
    if name in scope:
        return operator.itemgetter(name)
    if devices and name in st.device_index:
        return st.device_index[name]
    if name in outer:
        st.error(codes.TYP_002, f"index variable `{name}` in a constant expression", e.span,
                 "not constant", help="range bounds are constant expressions")
    elif devices and name in st.names["device"]:
        pass  # INVARIANT: a device whose declaration failed was already reported
    else:
        for other in KINDS:
            if name in st.names[other]:
                st.error(codes.TYP_001, f"`{name}` is {article(other)}, not a number", e.span,
                         "expected a number" + (" or a device" if devices else ""),
                         help="use a number, a size such as `4 KiB`, or a loop variable"
                         + (", or a device name" if devices else ""),
                         related=(Label(st.names[other][name], "declared here"),))
                break
        else:
            cands = list(scope) + (list(st.device_index) if devices else [])
            what = "name" if devices else "index variable"
            st.error(codes.NAM_001, f"unknown {what} `{name}`", e.span, "not declared",
                     help=suggest(name, cands) or ("no index variable is in scope here" if not scope else None))
    ok[0] = False
    return 0


def arith(op: str, a: int, b: int, span: Span) -> int:
    """``a op b`` for ``+ - * / %`` (floor division); raises ``EvalError`` on a zero divisor."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise EvalError(codes.TYP_002, span, "division by zero",
                        "the divisor evaluates to 0 for this instance; keep it nonzero over the index range",
                        "divides by zero")
    return a // b if op == "/" else a % b


def uses_vars(e: ast.Expr) -> bool:
    """True when the expression names a variable (so it is not a constant)."""
    if isinstance(e, ast.Var):
        return True
    if isinstance(e, ast.BinOp):
        return uses_vars(e.left) or uses_vars(e.right)
    if isinstance(e, ast.Neg):
        return uses_vars(e.operand)
    return False


def const(st: State, e: ast.Expr, outer: tuple[str, ...] = ()) -> int | None:
    """Evaluate a constant expression (no variables); ``None`` after reporting an error."""
    fn = compile_expr(st, e, (), outer=outer)
    if fn is None:
        return None
    try:
        return fn({})
    except EvalError as err:
        st.eval_error(err)
        return None


def const_range(st: State, lo_e: ast.Expr, hi_e: ast.Expr, span: Span,
                outer: tuple[str, ...] = ()) -> tuple[int, int] | None:
    """Evaluate a constant half-open range ``lo..hi`` and check it against ``max_range``."""
    lo = const(st, lo_e, outer)
    hi = const(st, hi_e, outer)
    if lo is None or hi is None:
        return None
    if hi < lo:
        st.error(codes.TYP_002, f"range {lo}..{hi} runs backwards", span, "empty range",
                 help="ranges are half-open `LO..HI` with `LO <= HI`")
        return None
    if hi - lo > st.limits.max_range:
        st.error(codes.LIM_001, f"range of {hi - lo} iterations exceeds the limit of "
                 f"{st.limits.max_range}", span, "too many iterations",
                 help="split the family into smaller ones; the limit bounds the work of one check")
        return None
    return lo, hi


def checked(st: State, e: ast.Expr, scope: tuple[str, ...], minimum: int, what: str,
            maximum: int | None = None, *, fold: bool = False) -> Any:
    """Compile ``e`` with a check ``minimum <= value [<= maximum]`` (FX-TYP-002).

    Returns a closure ``env -> int``, or with ``fold`` the ``int`` itself when ``e`` is
    constant; ``None`` after a static error.
    """
    fn = compile_expr(st, e, scope)
    if fn is None:
        return None
    span = e.span
    bound = f"at least {minimum}" if maximum is None else f"between {minimum} and {maximum}"
    if fold and not uses_vars(e):
        v = fn({})
        if v < minimum or (maximum is not None and v > maximum):
            st.error(codes.TYP_002, f"{what} is {v}", span, "invalid value", help=f"{what} must be {bound}")
            return None
        return v

    def check(env: Env) -> int:
        v = fn(env)
        if v < minimum or (maximum is not None and v > maximum):
            raise EvalError(codes.TYP_002, span, f"{what} is {v}", f"{what} must be {bound}", "invalid value")
        return v
    return check


def compile_cond(st: State, c: ast.Cond, scope: tuple[str, ...]) -> Fn | None:
    """Compile a condition to a closure ``env -> bool``; ``None`` after a static error."""
    if isinstance(c, ast.Compare):
        lf, rf = compile_expr(st, c.left, scope), compile_expr(st, c.right, scope)
        if lf is None or rf is None:
            return None
        cmp = _CMP[c.op]
        return lambda env: cmp(lf(env), rf(env))
    if isinstance(c, ast.Not):
        inner = compile_cond(st, c.operand, scope)
        return None if inner is None else (lambda env: not inner(env))
    left, right = compile_cond(st, c.left, scope), compile_cond(st, c.right, scope)
    if left is None or right is None:
        return None
    if c.op == "and":
        return lambda env: left(env) and right(env)
    return lambda env: left(env) or right(env)
