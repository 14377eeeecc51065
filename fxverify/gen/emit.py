"""A small program of ``.fx`` statements that renders as edge families or unrolled edges.

``prefill_flow`` builds its flow as ``Loop``/``If``/``Stmt``/``Note`` values. ``Stmt`` text holds
placeholders ``$(EXPR)``, where ``EXPR`` is an ``.fx`` integer expression over loop variables
(``+ - * / %``, ``/`` the language's floor division). Rendered as families, a placeholder is its
expression and a loop is a ``for`` block; unrolled, loops are expanded and each placeholder is
evaluated, so both renderings declare the same edge instances by construction. ``count`` gives the
number of edge instances without rendering. Emits no diagnostics: the programs are generated, so a
construct outside that expression language is a generator bug (``ValueError``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt,
        ast.GtE, ast.BoolOp, ast.And, ast.Or, ast.Not)


@dataclass
class Stmt:
    """One statement (an edge; its text may break before clauses, rendered as one line) with
    ``$(EXPR)`` placeholders; ``edges`` is how many edge instances one rendering declares (0 for other statements)."""

    text: str
    edges: int = 1


@dataclass
class Note:
    """A comment line; unrolled, it is written once, before the first iteration of its loop."""

    text: str


@dataclass
class If:
    """``if COND { THEN } else { ELSE }``; ``COND`` uses ``== != < <= > >= and or not``."""

    cond: str
    then: list["Stmt | Note | Loop | If"]
    orelse: list["Stmt | Note | Loop | If"] = field(default_factory=list)


@dataclass
class Loop:
    """``for VAR in LO..HI { BODY }`` with constant bounds (half-open, as the language)."""

    var: str
    lo: int
    hi: int
    body: list["Stmt | Note | Loop | If"] = field(default_factory=list)


Program = list["Stmt | Note | Loop | If"]


def count(prog: Program, env: dict[str, int] | None = None, cap: int | None = None) -> int:
    """Edge instances the program declares, without rendering it (loops multiply; a loop whose
    body holds an ``if`` is iterated to evaluate the conditions). With ``cap``, counting stops
    as soon as the count passes it: the result is then some number above ``cap`` (a loop of a
    million iterations with an ``if`` inside is not walked to its end to learn that it is too
    big)."""
    env = {} if env is None else env
    n = 0
    for s in prog:
        if cap is not None and n > cap:
            break
        if isinstance(s, Loop):
            if not _has_if(s.body):
                n += max(0, s.hi - s.lo) * count(s.body, env, cap)
                continue
            for i in range(s.lo, s.hi):
                env[s.var] = i
                n += count(s.body, env, None if cap is None else cap - n)
                if cap is not None and n > cap:
                    break
            env.pop(s.var, None)
        elif isinstance(s, If):
            n += count(s.then if evaluate(s.cond, env) else s.orelse, env, None if cap is None else cap - n)
        elif isinstance(s, Stmt):
            n += s.edges
    return n


def _has_if(prog: Program) -> bool:
    return any(isinstance(s, If) or (isinstance(s, Loop) and _has_if(s.body)) for s in prog)


def render(prog: Program, indent: str, unroll: bool) -> Iterator[str]:
    """Yield the program's lines (without newlines), each prefixed by ``indent``, as ``for``
    families or (``unroll``) with every loop expanded and every placeholder evaluated. Raises
    ``ValueError`` for a placeholder outside the expression language (a generator bug)."""
    yield from _render(prog, indent, unroll, {}, True)


def _render(prog: Program, indent: str, unroll: bool, env: dict[str, int], first: bool) -> Iterator[str]:
    for s in prog:
        if isinstance(s, Note):
            if first or not unroll:
                yield indent + "# " + s.text if s.text else ""
        elif isinstance(s, Stmt):
            text = _substitute(s.text, (lambda e: str(evaluate(e, env))) if unroll else _simplify)
            # One statement per line, as `fxverify fmt` lays it out (specs/output.md): the
            # continuation lines that keep the generator's source readable are joined.
            yield indent + " ".join(part.strip() for part in text.split("\n"))
        elif isinstance(s, If):
            if unroll:
                yield from _render(s.then if evaluate(s.cond, env) else s.orelse, indent, unroll, env, first)
                continue
            yield f"{indent}if {s.cond} {{"
            yield from _render(s.then, indent + "  ", unroll, env, first)
            if s.orelse:
                yield indent + "} else {"
                yield from _render(s.orelse, indent + "  ", unroll, env, first)
            yield indent + "}"
        elif not unroll:
            if s.hi <= s.lo:
                continue
            yield f"{indent}for {s.var} in {s.lo}..{s.hi} {{"
            yield from _render(s.body, indent + "  ", unroll, env, first)
            yield indent + "}"
        else:
            for i in range(s.lo, s.hi):
                env[s.var] = i
                yield from _render(s.body, indent, unroll, env, first and i == s.lo)
            env.pop(s.var, None)


def _simplify(expr: str) -> str:
    """A placeholder as family text: constant expressions are folded, others kept."""
    try:
        return str(evaluate(expr, {}))
    except NameError:
        return expr.strip()


def _substitute(text: str, fn: Callable[[str], str]) -> str:
    """Replace every ``$(EXPR)`` (parentheses inside ``EXPR`` balanced) by ``fn(EXPR)``."""
    out, i = [], 0
    while (j := text.find("$(", i)) >= 0:
        depth, k = 1, j + 2
        while depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        out += [text[i:j], fn(text[j + 2:k - 1])]
        i = k
    return "".join(out) + text[i:]


_CACHE: dict[str, object] = {}


def evaluate(expr: str, env: dict[str, int]) -> int:
    """Value of an ``.fx`` integer or boolean expression (``/`` floors) under ``env``.

    The expression is parsed once and checked to hold only ``+ - * / %``, comparisons,
    ``and or not``, integers, names and parentheses before it is compiled, so evaluating it runs nothing else. Raises ``NameError``
    for a variable not in ``env`` and ``ValueError`` for any other construct (generator bugs,
    never user input)."""
    code = _CACHE.get(expr)
    if code is None:
        tree = ast.parse(expr.replace("/", "//"), mode="eval")
        for node in ast.walk(tree):
            ok = isinstance(node, (ast.Expression, ast.BinOp, ast.Name, ast.Load, ast.UnaryOp, ast.USub, *_OPS)) or (
                isinstance(node, ast.Constant) and type(node.value) is int)
            if not ok:
                raise ValueError(f"unsupported construct in generated expression `{expr}`")
        code = _CACHE[expr] = compile(tree, "<fx-expr>", "eval")
    return int(eval(code, {"__builtins__": {}}, env))  # noqa: S307 - AST checked above
