"""``fxverify fmt``: policy text -> the same policy laid out canonically, comments kept.

Takes the text of one ``.fx`` file (a policy or a shared fragment); produces its canonical layout.
The formatter reads the file's own tokens (the grammar's terminals, whitespace and comments
included) and the lark tree's statement positions, and changes only whitespace between tokens:
it never adds, drops, joins or reorders a token, so every comment stays on its line (an
``# expect:`` at the end of the offending line, a ``# fx: allow`` suppression beside or above its
edge) and the syntax tree is the same. The layout:

- two spaces of indentation per ``{`` level; a line that continues a statement (an edge's later
  clauses, the rest of a long list) four more than the statement;
- a comment on a line of its own takes the indentation of the code line after it (a ``# ^``
  line, which annotates the line above it, that of the line above);
- one space between tokens where the source had any; none before ``,`` ``)`` ``]`` and after
  ``(`` ``[``, none around ``.`` and ``..``; one after ``,`` and around ``->`` ``|>`` ``--`` ``=``
  ``==`` ``!=`` ``{`` ``}``; two before a comment that ends a code line;
- no trailing whitespace, at most one blank line in a row, none at the start or the end, and one
  newline at the end of the file (``\\r\\n`` becomes ``\\n``, tabs and a byte-order mark go).

The result is checked before it is returned: it must parse to the same syntax tree (spans aside)
and hold the same comments, or the file is left as it was (FX-INT-001: a bug of the formatter,
never a changed policy). Formatting is idempotent. Emits the syntax diagnostics of
``syntax.parse`` (FX-SYN-*, FX-LIM-001) and FX-INT-001.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lark import Token, Tree

from fxverify.diagnostics.model import Diagnostic, internal_error
from fxverify.source import Span
from fxverify.syntax.parse import _lexer, parse, scan_comments
from fxverify.syntax.to_ast import to_ast

#: Spaces per ``{`` level, and the extra indentation of a continuation line.
INDENT, CONTINUATION = 2, 4

#: Tree nodes that start a statement: a line beginning with one is not a continuation.
_STATEMENTS = frozenset({
    "policy_decl", "include_decl", "fabric_decl", "space_decl", "region_decl", "alias_set_decl", "map_decl",
    "flow_decl", "device_decl", "link_decl", "edge_decl", "for_stmt", "if_stmt", "final_stmt",
})

_TIGHT_BEFORE = frozenset({",", ")", "]", ".", ".."})
_TIGHT_AFTER = frozenset({"(", "[", ".", ".."})
_SPACED = frozenset({"->", "|>", "--", "=", "==", "!=", "{", "}"})


def statement_starts(tree: Tree) -> set[int]:
    """Character offsets where the statements of ``tree`` begin (``_STATEMENTS``)."""
    out: set[int] = set()
    for node in tree.iter_subtrees():
        if node.data in _STATEMENTS and not node.meta.empty:
            out.add(node.meta.start_pos)
    return out


def _lines(text: str) -> list[tuple[int, list[Token]]]:
    """The file as ``(blank lines before, tokens)`` per non-empty line, whitespace dropped. A
    whitespace token is kept only as the gap it leaves: the tokens carry their offsets."""
    out: list[tuple[int, list[Token]]] = []
    current: list[Token] = []
    newlines = 0
    for tok in _lexer().lex(text, dont_ignore=True):
        if tok.type == "WS":
            n = tok.value.count("\n")
            if n and current:
                out.append((max(0, newlines - 1), current))
                current, newlines = [], 0
            newlines += n
            continue
        current.append(tok)
    if current:
        out.append((max(0, newlines - 1), current))
    return out


def _gap(prev: Token, tok: Token) -> str:
    """The whitespace between two tokens of one line (see the module docstring)."""
    if tok.type == "COMMENT":
        return "  "
    if tok.value in _TIGHT_BEFORE or prev.value in _TIGHT_AFTER:
        return ""
    if prev.value == "," or tok.value in _SPACED or prev.value in _SPACED:
        return " "
    return " " if tok.start_pos > prev.end_pos else ""


def layout(text: str, starts: set[int]) -> str:
    """``text`` laid out canonically (the module docstring), given the offsets where statements
    start (``statement_starts``). Does not check the result."""
    lines = _lines(text)
    depth = 0
    rendered: list[tuple[int, int | None, str]] = []  # (blank lines before, indent or None for comments, text)
    for blanks, toks in lines:
        first = toks[0]
        body = first.value.rstrip()
        for prev, tok in zip(toks, toks[1:]):
            body += _gap(prev, tok) + tok.value.rstrip()
        if first.type == "COMMENT":
            indent = None  # decided below, from the code lines around it
        elif first.value == "}":
            indent = max(0, depth - 1) * INDENT
        elif first.start_pos in starts or first.value == "else":
            indent = depth * INDENT
        else:
            indent = depth * INDENT + CONTINUATION
        for tok in toks:
            if tok.type not in ("COMMENT", "STRING"):
                depth += (tok.value == "{") - (tok.value == "}")
        depth = max(depth, 0)
        rendered.append((blanks, indent, body))
    out: list[str] = []
    for i, (blanks, indent, body) in enumerate(rendered):
        if indent is None:
            indent = _comment_indent(rendered, i)
        if out and blanks:
            out.append("")
        out.append(" " * indent + body)
    return "\n".join(out) + "\n" if out else ""


def _comment_indent(rendered: list[tuple[int, int | None, str]], i: int) -> int:
    """A comment line's indentation: that of the code line above for a ``# ^`` line (it points
    at that line), else that of the next code line (inside its block when that line closes it)."""
    if rendered[i][2].startswith("# ^"):
        for _b, ind, body in reversed(rendered[:i]):
            if ind is not None:
                return ind if not body.startswith("}") else ind + INDENT
        return 0
    for _b, ind, body in rendered[i + 1:]:
        if ind is not None:
            return ind + INDENT if body.startswith("}") else ind
    return 0


def shape(node: Any) -> Any:
    """A syntax tree without its spans (nested tuples), for comparing two parses of a text."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__,) + tuple(shape(getattr(node, f.name)) for f in dataclasses.fields(node)
                                              if not isinstance(getattr(node, f.name), Span))
    if isinstance(node, (list, tuple)):
        return tuple(shape(x) for x in node)
    return node


def format_text(text: str, path: str) -> tuple[str | None, list[Diagnostic]]:
    """The canonical layout of ``text`` (the contents of ``path``), or ``None`` with the
    diagnostics: syntax errors (the file cannot be formatted until it parses), or FX-INT-001 when
    the layout would change the syntax tree or lose a comment (a formatter bug; nothing is
    written). Never raises for bad input."""
    tree, diags = parse(text, path)
    if tree is None:
        return None, diags
    out = layout(text, statement_starts(tree))
    again, problems = parse(out, path)
    same = again is not None and not problems and shape(to_ast(tree, path, text)[0].items) == shape(
        to_ast(again, path, out)[0].items)
    if not same or [c.rstrip() for _s, _e, c in scan_comments(text)] != [c.rstrip() for _s, _e, c in scan_comments(out)]:
        return None, [internal_error(f"formatting `{path}` would change its meaning or lose a comment; "
                                     "the file was left as it was", Span(path, 0, 0))]
    return out, []
