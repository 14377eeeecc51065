"""``fxverify fmt``: policy text -> the same policy laid out canonically, comments kept.

Takes the text of one ``.fx`` file (a policy or a shared fragment); produces its canonical layout.
The formatter reads the file's own tokens (the grammar's terminals, whitespace and comments
included) and the roles the lark tree gives them (statement starts, names, unary signs, the ``:``
of a link or an ``rw`` clause, a map type's ``<`` ``>``), and rewrites only the whitespace between
tokens: it never adds, drops, joins or reorders a token, so every comment stays on its line (an
``# expect:`` at the end of the offending line, a ``# fx: allow`` suppression beside or above its
edge) and the syntax tree is the same. The layout is canonical: it is a function of the tokens,
the comments (one that ends a code line stays at its end, one on a line of its own stays so) and
the blank lines between statements, never of the other whitespace of the source
(specs/output.md). The layout:

- one statement per line; a ``{`` ends its line and the block's statements follow on lines of
  their own, two spaces of indentation per ``{`` level; a ``}`` stands on its own line (``} else
  {`` and ``} else if ... {`` excepted); a statement continues on a line four spaces deeper only
  after a comment ended its line;
- a comment on a line of its own takes the indentation of the code line after it (a ``# ^``
  line, which annotates the line above it, that of the line above);
- one space between tokens, except: none before ``,`` ``)`` ``]`` ``.`` ``..`` ``:`` and after
  ``(`` ``[`` ``.`` ``..`` or a unary ``-``/``+``, none before a ``[`` or ``(`` that follows a name
  or ``]`` (``kv[l]``, ``checksum(crc32c)``, ``reduce(sum)``), none around a map type's ``<`` ``>``
  (``array<u32, u64>[8]``) and the ``:`` of ``rw 1:0``, one around a link's ``:`` (``gpu0 -- cpu0
  : pcie``) and around binary operators (``l * 2 MiB``, ``a[l - 1]``), one between a number and
  its unit (``80 GiB``); two before a comment that ends a code line;
- no trailing whitespace, at most one blank line in a row (kept only before a statement or a
  comment line), none at the start or the end, and one newline at the end of the file (``\\r\\n``
  becomes ``\\n``, tabs and a byte-order mark go).

The result is checked before it is returned: it must parse to the same syntax tree (spans aside)
and hold the same comments, or the file is left as it was (FX-INT-001: a bug of the formatter,
never a changed policy). Formatting is idempotent (tests/test_fmt.py checks both properties, and
canonicity on whitespace-shuffled corpus files). Emits the syntax diagnostics of
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

#: Spaces per ``{`` level, and the extra indentation of a line that continues a statement after a
#: comment ended its previous line.
INDENT, CONTINUATION = 2, 4

#: Tree nodes that start a statement: each begins a line of its own.
_STATEMENTS = frozenset({
    "policy_decl", "include_decl", "fabric_decl", "space_decl", "region_decl", "alias_set_decl", "map_decl",
    "flow_decl", "device_decl", "link_decl", "edge_decl", "for_stmt", "if_stmt", "final_stmt",
})

_TIGHT_BEFORE = frozenset({",", ")", "]", ".", ".."})
_TIGHT_AFTER = frozenset({"(", "[", ".", ".."})


@dataclasses.dataclass(frozen=True)
class Roles:
    """Where the syntax tree gives a token a layout of its own (character offsets of tokens).

    ``starts``: the first tokens of statements; ``names``: NAME tokens (an identifier, even one
    spelled like a keyword, is followed by a tight ``[`` or ``(``: ``kv[l]``, ``checksum(crc32c)``);
    ``unary``: a prefix ``-`` or ``+`` (``-1``, ``kv[0, +4 KiB]``), tight to its operand;
    ``spaced_colon``: the ``:`` of a link (``gpu0 -- cpu0 : pcie``); ``tight_colon``: that of an
    ``rw R:W`` clause; ``angles``: the ``<`` ``>`` of a map's type (``array<u32, u32>``)."""

    starts: frozenset[int]
    names: frozenset[int]
    unary: frozenset[int]
    spaced_colon: frozenset[int]
    tight_colon: frozenset[int]
    angles: frozenset[int]


def statement_starts(tree: Tree) -> set[int]:
    """Character offsets where the statements of ``tree`` begin (``_STATEMENTS``)."""
    out: set[int] = set()
    for node in tree.iter_subtrees():
        if node.data in _STATEMENTS and not node.meta.empty:
            out.add(node.meta.start_pos)
    return out


def roles(tree: Tree, text: str) -> Roles:
    """The layout roles of the tokens of ``text`` (``Roles``), read off its syntax tree ``tree``."""
    names = {t.start_pos for t in tree.scan_values(lambda v: isinstance(v, Token) and v.type == "NAME")}
    unary: set[int] = set()
    ranges: dict[str, list[tuple[int, int]]] = {"link_decl": [], "rw_clause": [], "map_decl": []}
    for node in tree.iter_subtrees():
        if node.meta.empty:
            continue
        if node.data in ("neg", "g_len"):
            unary.add(node.meta.start_pos)
        elif node.data in ranges:
            ranges[node.data].append((node.meta.start_pos, node.meta.end_pos))
    found: dict[str, set[int]] = {k: set() for k in ranges}
    for tok in _lexer().lex(text):
        for kind, spans in ranges.items():
            if tok.value in (":", "<", ">") and any(a <= tok.start_pos < b for a, b in spans):
                found[kind].add(tok.start_pos)
    return Roles(frozenset(statement_starts(tree)), frozenset(names), frozenset(unary),
                 frozenset(p for p in found["link_decl"] if text[p] == ":"),
                 frozenset(p for p in found["rw_clause"] if text[p] == ":"),
                 frozenset(p for p in found["map_decl"] if text[p] in "<>"))


def _gap(prev: Token, tok: Token, r: Roles) -> str:
    """The whitespace between two tokens of one line (see the module docstring): a function of the
    two tokens and their roles alone, never of the source's spacing."""
    if tok.type == "COMMENT":
        return "  "
    if prev.start_pos in r.unary or prev.start_pos in r.angles or tok.start_pos in r.angles:
        return ""
    if tok.value == ":":
        return " " if tok.start_pos in r.spaced_colon else ""
    if prev.value == ":":
        return "" if prev.start_pos in r.tight_colon else " "
    if tok.value in _TIGHT_BEFORE or prev.value in _TIGHT_AFTER:
        return ""
    if tok.value in ("[", "(") and (prev.start_pos in r.names or prev.value in ("]", "reduce")):
        return ""
    return " "


def layout(text: str, r: Roles) -> str:
    """``text`` laid out canonically (the module docstring), given the roles of its tokens
    (``roles``). The result depends only on the tokens, their comments (a comment that ends a code
    line stays at its end, one on a line of its own stays so) and where blank lines separate
    statements, never on other whitespace. Does not check the result."""
    rendered: list[tuple[int, int | None, str]] = []  # (blank lines before, indent or None for comments, text)
    line: list[Token] = []
    indent = 0
    blanks = 0
    depth = 0
    closed = False  # the current line is complete (it ends with `{` or is a `}`): only a comment or an `else` joins it

    def flush() -> None:
        nonlocal line
        if line:
            body = line[0].value.rstrip()
            for prev, tok in zip(line, line[1:]):
                body += _gap(prev, tok, r) + tok.value.rstrip()
            rendered.append((blanks, indent, body))
        line = []

    def begin(tok: Token, at: int | None, gap_lines: int) -> None:
        nonlocal indent, blanks
        flush()
        blanks = 1 if gap_lines > 1 and rendered else 0
        indent = at if at is not None else 0
        line.append(tok)

    newlines = 0
    prev: Token | None = None
    for tok in _lexer().lex(text, dont_ignore=True):
        if tok.type == "WS":
            newlines += tok.value.count("\n")
            continue
        if tok.type == "COMMENT" and (newlines or prev is None):
            flush()
            rendered.append((1 if newlines > 1 and rendered else 0, None, tok.value.rstrip()))
            closed = False
        elif tok.type == "COMMENT":
            line.append(tok)  # it ends the line: the next token starts one
            flush()
            closed = False
        elif tok.value == "}":
            depth = max(0, depth - 1)
            begin(tok, depth * INDENT, 0)
            closed = True
        elif closed and tok.value == "else" and line and line[-1].value == "}":
            line.append(tok)
            closed = False
        elif tok.start_pos in r.starts and not (prev is not None and prev.value == "else" and line):
            begin(tok, depth * INDENT, newlines)
            closed = False
        elif not line or closed:
            begin(tok, depth * INDENT + CONTINUATION, 0)
            closed = False
        else:
            line.append(tok)
        if tok.value == "{":
            depth += 1
            closed = True  # a block's body starts on the next line
        newlines = 0
        prev = tok
    flush()
    out: list[str] = []
    for i, (gap, ind, body) in enumerate(rendered):
        if ind is None:
            ind = _comment_indent(rendered, i)
        if out and gap:
            out.append("")
        out.append(" " * ind + body)
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
    out = layout(text, roles(tree, text))
    again, problems = parse(out, path)
    same = again is not None and not problems and shape(to_ast(tree, path, text)[0].items) == shape(
        to_ast(again, path, out)[0].items)
    if not same or [c.rstrip() for _s, _e, c in scan_comments(text)] != [c.rstrip() for _s, _e, c in scan_comments(out)]:
        return None, [internal_error(f"formatting `{path}` would change its meaning or lose a comment; "
                                     "the file was left as it was", Span(path, 0, 0))]
    return out, []
