"""Policy text -> lark parse tree, with syntax diagnostics.

Takes the raw bytes or decoded text of one policy file and produces a lark ``Tree`` built by an
LALR(1) parser with positions propagated to every node (``grammar.lark``). Every input problem
becomes a ``Diagnostic``; nothing here raises for bad input. Only the first syntax error of a file
is reported.

Emits: FX-SYN-001 (unexpected token, with named messages for a few common mistakes),
FX-SYN-002 (unexpected character), FX-SYN-003 (unexpected end of file), FX-SYN-004 (not UTF-8
text, or a NUL character), FX-LIM-001 (syntax tree, or brackets, nested deeper than the limit).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic, nearest
from fxverify.fileio import NotUtf8, decode_utf8
from fxverify.source import Span

_GRAMMAR = Path(__file__).with_name("grammar.lark")

# Terminals that have a fixed description rather than their literal text.
_TERMINAL_WORDS: dict[str, str] = {
    "NAME": "a name",
    "INT": "a number",
    "STRING": "a string",
    "$END": "end of file",
}
_IGNORED = frozenset({"WS", "COMMENT"})

# Named syntax errors (lark's ``match_examples`` idea): each snippet fails in the parser state
# where the mistake is typical. Messages follow STYLE.md; the help says what to write.
_NAMED_ERRORS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "missing-by": (
        "missing `by` before the hook that drives the edge",
        "an edge names its hook after the action: `edge a: write kv[0, +4 KiB] by gpu0.launch`",
        (
            "flow f { edge a: write x d.h }",
            "flow f { edge a: write x[0] d.h }",
            "flow f { edge a: read x[0, +4] d.h }",
            "flow f { edge a: move x -> y d.h }",
            "flow f { edge a: move x -> y[0] d.h }",
            "flow f { edge a: release x free d.h }",
            "flow f { edge a: flush x d.h }",
            "flow f { edge a: flush x -- y d.h }",
        ),
    ),
    "missing-colon": (
        "missing `:` after the edge name",
        "an edge is written `edge NAME: ACTION ... by DEV.HOOK`, as in `edge a: write kv by gpu0.launch`",
        (
            "flow f { edge a write x by d.h }",
            "flow f { edge a[0] write x by d.h }",
            "flow f { edge a[0][1] write x by d.h }",
        ),
    ),
    "range": (
        "malformed range",
        "a range is half-open and written `LO..HI`, as in `for l in 0..32`",
        (
            "flow f { for i in 0...4 { } }",
            "flow f { for i in 0:4 { } }",
            "flow f { for i in 0 { } }",
            "flow f { for i in n { } }",
            "flow f { for i in (4) { } }",
            "region r[i in 0...4] in s at 0 size 1 owner d",
            "region r[i in 0:4] in s at 0 size 1 owner d",
            "region r[i in 4] in s at 0 size 1 owner d",
        ),
    ),
}


def _tables(name: str) -> str | bool:
    """Where lark keeps the LALR tables of parser ``name`` between runs (its ``cache``
    option): a file in fxverify's user cache folder (``platformdirs``), which lark reuses only
    when the SHA-256 stored in it matches the grammar's text, the parser's options, lark's
    version and Python's; otherwise it builds the tables again and rewrites the file, and a file
    it cannot read or write only costs the build (0.1 to 0.3 s). ``False`` (build every time)
    when the folder cannot be made."""
    import platformdirs

    folder = Path(platformdirs.user_cache_dir("fxverify", appauthor=False)) / "grammar"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return str(folder / f"{name}.lark-tables")


@functools.cache
def parser() -> Lark:
    """Return the process-wide LALR parser for ``grammar.lark`` (built once, then cached; its
    tables are kept between runs: ``_tables``)."""
    return Lark(
        _GRAMMAR.read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
        cache=_tables("parser"),
    )


@functools.cache
def _lexer() -> Lark:
    """The grammar's terminals alone (a basic lexer), for scans that need tokens but no tree."""
    return Lark(_GRAMMAR.read_text(encoding="utf-8"), parser="lalr", lexer="basic", cache=_tables("lexer"))


@functools.cache
def keywords() -> tuple[str, ...]:
    """The keywords of the grammar (``policy``, ``edge``, ``after``...), sorted: what an editor
    completes."""
    return tuple(sorted({t.pattern.value for t in parser().terminals
                         if isinstance(t.pattern, PatternStr) and t.pattern.value.replace("_", "").isalpha()}))


def unquote(text: str) -> str:
    """Return the value of a STRING token: quotes removed, ``\\"`` and ``\\\\`` unescaped."""
    body = str(text)[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def header_decls(text: str) -> tuple[bool, list[str]]:
    """Whether ``text`` declares a policy, and the paths it includes, read from the grammar's own
    tokens (``policy STRING``, ``include STRING``) without parsing: what a folder scan needs to
    tell policies from shared fragments. A character no token starts with is skipped and the scan
    resumes after it, so one stray byte does not hide a later ``policy`` (checking the file reports
    the character as FX-SYN-002)."""
    declares, includes = False, []
    start = 0
    while start <= len(text):
        prev = None
        try:
            for tok in _lexer().lex(text[start:]):
                if tok.type == "STRING" and prev == "POLICY":
                    declares = True
                elif tok.type == "STRING" and prev == "INCLUDE":
                    includes.append(unquote(tok))
                prev = tok.type
            break
        except UnexpectedCharacters as err:
            start += err.pos_in_stream + 1
        except UnexpectedInput:
            break
    return declares, includes


@functools.cache
def _terminal_words() -> dict[str, str]:
    words = dict(_TERMINAL_WORDS)
    for term in parser().terminals:
        if term.name in words:
            continue
        if isinstance(term.pattern, PatternStr):
            words[term.name] = f"`{term.pattern.value}`"
        else:
            words[term.name] = term.name.lower()
    return words


@functools.cache
def _named_states() -> dict[int, str]:
    """Map parser states to named-error labels by parsing each example once."""
    states: dict[int, str] = {}
    for label, (_msg, _help, examples) in _NAMED_ERRORS.items():
        for example in examples:
            try:
                parser().parse(example)
            except UnexpectedInput as err:
                state = _state_id(err)
                if state is not None:
                    states.setdefault(state, label)
    return states


def _state_id(err: UnexpectedInput) -> int | None:
    """Return the LALR state number an error happened in (lark stores a ``ParserState``)."""
    state = getattr(err, "state", None)
    if state is None:
        return None
    position = getattr(state, "position", state)
    return position if isinstance(position, int) else None


def _expected_help(names: object) -> str | None:
    words = _terminal_words()
    if not names:
        return None
    shown = sorted({words.get(n, n) for n in names if n not in _IGNORED}, key=_word_order)
    if not shown:
        return None
    return "expected one of: " + ", ".join(shown)


def _near_keyword(tok: Token, names: object) -> str | None:
    """The keyword among the expected terminals ``names`` closest to a name token (``leese`` for
    ``lease``: ``diagnostics.model.nearest``), or ``None`` when the token is no name or no
    keyword is close."""
    if tok.type != "NAME" or not names:
        return None
    words = [w.strip("`") for n in names if n not in _IGNORED for w in (_terminal_words().get(n, ""),)
             if w.startswith("`") and w.strip("`").isidentifier()]
    return nearest(str(tok.value), words)


def _word_order(word: str) -> tuple[int, str]:
    # Descriptions ("a name", "a number") first, then keywords and punctuation alphabetically.
    return (0 if not word.startswith("`") else 1, word)


def _token_words(tok: Token) -> str:
    if tok.type == "NAME":
        return f"name `{tok.value}`"
    if tok.type == "INT":
        return f"number `{tok.value}`"
    if tok.type == "STRING":
        return "string"
    return _terminal_words().get(tok.type, f"`{tok.value}`")


def decode_text(data: bytes, path: str) -> tuple[str, list[Diagnostic]]:
    """Decode one file's bytes as UTF-8 text.

    Returns ``(text, diagnostics)``. On a decoding error or a NUL character the diagnostics hold one
    FX-SYN-004 whose span points at the first bad character, and ``text`` is a lossy decoding
    (invalid bytes replaced) that is only good for rendering that span.
    """
    try:
        text = decode_utf8(data)
    except NotUtf8 as err:
        return err.shown, [_syn004(path, err.at, err.found)]
    nul = text.find("\0")
    if nul >= 0:
        return text, [_syn004(path, nul, f"a NUL character at offset {nul}")]
    return text, []


def _syn004(path: str, at: int, what: str) -> Diagnostic:
    return diagnostic(codes.SYN_004, f"`{path}` is not a UTF-8 text file",
        Span(path, at, at + 1), "not text",
        notes=(f"found {what}",),
        help="policy files are UTF-8 text; check that the path names a policy and not a binary",
    )


def parse(text: str, path: str, *, max_depth: int = 200) -> tuple[Tree | None, list[Diagnostic]]:
    """Parse ``text`` (the contents of ``path``) into a lark tree.

    ``max_depth`` caps the nesting depth of the tree (deep expressions or blocks) so later
    recursive passes stay within Python's stack. Returns ``(tree, [])`` on success and
    ``(None, [diagnostic])`` on the first syntax error. Never raises for bad input.
    """
    opened = _too_deep_brackets(text, max_depth)
    if opened is not None:
        return None, [_lim001(Span(path, opened, opened + 1), max_depth)]
    try:
        tree = parser().parse(text)
    except UnexpectedInput as err:
        return None, [_syntax_diagnostic(err, text, path)]
    found = _too_deep(tree, max_depth)
    if found is not None:
        deep, chain = found
        return None, [_lim001(Span(path, deep.meta.start_pos, deep.meta.end_pos), max_depth, chain)]
    return tree, []


#: The tree nodes of binary operators (``grammar.lark``): a chain of them nests one level each.
_OPERATORS = frozenset({"add", "sub", "mul", "div", "mod"})


def _lim001(span: Span, max_depth: int, chain: bool = False) -> Diagnostic:
    """FX-LIM-001 at ``span``; ``chain``: the deep node is an operator of a long chain, whose help
    says how to group it."""
    help_text = ("a chain such as `a + b + c + ...` nests one level per operator: group its terms in "
                 "parentheses, which nest less (`(a + b + c) + (d + e + f)`), or write the value it computes"
                 if chain else "split the expression or the nested blocks into simpler parts")
    return diagnostic(codes.LIM_001, f"nesting deeper than the limit of {max_depth} levels",
        span, "nested too deeply",
        help=help_text,
    )


# Strings and comments (skipped: a bracket in them is text), then the brackets themselves.
_BRACKET_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|#[^\n]*|[(\[{]|[)\]}]')


def _too_deep_brackets(text: str, max_depth: int) -> int | None:
    """The offset of the first ``(``, ``[`` or ``{`` nested more than ``max_depth`` deep (all
    three counted together), or ``None``.

    Parenthesised expressions leave no level in the tree (``grammar.lark`` inlines them), so
    ``_too_deep`` cannot see them, and the parser's time grows with any nesting (20,000 nested
    ``if`` blocks took 8 s); this scan bounds them by the same limit before the parser runs, in
    time linear in the brackets, strings and comments of ``text``. Unbalanced brackets are the
    parser's to report."""
    depth = 0
    for m in _BRACKET_RE.finditer(text):
        c = m.group()
        if c in "([{":
            depth += 1
            if depth > max_depth:
                return m.start()
        elif c in ")]}":
            depth = max(depth - 1, 0)
    return None


def _too_deep(tree: Tree, max_depth: int) -> tuple[Tree, bool] | None:
    """Return the first subtree found deeper than ``max_depth`` (iteratively) and whether most of
    its depth is a run of binary operators (``_OPERATORS``) right above it: a long chain such as
    ``a + b + c + ...``, not a short one inside deep blocks; or ``None``."""
    stack: list[tuple[Tree, int, int]] = [(tree, 1, 0)]  # (node, depth, operators in a row above it)
    while stack:
        node, depth, run = stack.pop()
        if depth > max_depth:
            return node, run > max_depth // 2
        below = run + 1 if node.data in _OPERATORS else 0
        for child in node.children:
            if isinstance(child, Tree):
                stack.append((child, depth + 1, below))
    return None


def _syntax_diagnostic(err: UnexpectedInput, text: str, path: str) -> Diagnostic:
    named = _named_states().get(_state_id(err))
    if isinstance(err, UnexpectedToken) and err.token.type == "$END" or isinstance(err, UnexpectedEOF):
        end = len(text.rstrip())
        expected = getattr(err, "accepts", None) or getattr(err, "expected", None)
        return diagnostic(codes.SYN_003, "unexpected end of file",
            Span(path, end, end), "the file ends here",
            help=_expected_help(expected),
        )
    if isinstance(err, UnexpectedToken):
        tok = err.token
        start = tok.start_pos if tok.start_pos is not None else 0
        end = tok.end_pos if tok.end_pos is not None else start + len(str(tok.value))
        span = Span(path, start, max(end, start + 1))
        expected = err.accepts or err.expected
        if named is not None:
            message, help_text, _ = _NAMED_ERRORS[named]
            return diagnostic(codes.SYN_001, message,
                span, f"unexpected {_token_words(tok)}",
                notes=tuple(h for h in (_expected_help(expected),) if h),
                help=help_text,
            )
        # A misspelt keyword is named, and the full list becomes a note.
        near, listed = _near_keyword(tok, expected), _expected_help(expected)
        return diagnostic(codes.SYN_001, f"unexpected {_token_words(tok)}",
            span, "not expected here",
            notes=(listed,) if near and listed else (),
            help=f"did you mean `{near}`?" if near else listed,
        )
    assert isinstance(err, UnexpectedCharacters)
    pos = err.pos_in_stream
    ch = text[pos] if 0 <= pos < len(text) else ""
    span = Span(path, pos, pos + 1)
    if ch == '"':
        nl = text.find("\n", pos)
        return diagnostic(codes.SYN_002, "unterminated string",
            Span(path, pos, nl if nl >= 0 else len(text)), "this string never ends",
            help='close the string with `"` on the same line (write `\\"` for a quote inside it)',
        )
    shown = ch if ch.isprintable() and not ch.isspace() else _code_point(ch)
    if named is not None:
        message, help_text, _ = _NAMED_ERRORS[named]
        return diagnostic(codes.SYN_002, message,
            span, f"unexpected character `{shown}`",
            help=help_text,
        )
    if not ch.isascii() and (ch.isalnum() or ch == "_"):
        # a letter or digit outside ASCII in or beside a name: NAME is ASCII (grammar.lark), so
        # the expected tokens ("`:`") would point at the wrong thing
        return diagnostic(codes.SYN_002, f"unexpected character `{shown}`",
            span, "not an ASCII letter or digit",
            help="names are ASCII letters, digits and `_` (starting with a letter or `_`); "
                 f"replace `{shown}`",
        )
    if unicodedata.category(ch) == "Zs":  # a space that looks like one (U+00A0 pasted from a web page or a PDF)
        return diagnostic(codes.SYN_002, f"unexpected character `{shown}`",
            span, "not an ASCII space",
            help=f"replace {shown} with an ASCII space: only spaces, tabs and newlines separate the words of a policy",
        )
    return diagnostic(codes.SYN_002, f"unexpected character `{shown}`",
        span, "no token starts with this character",
        help=_expected_help(err.allowed),
    )


def _code_point(ch: str) -> str:
    """``U+00A0 NO-BREAK SPACE``: the code point of ``ch`` and its Unicode name when it has one."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


_COMMENT_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|#[^\n]*')


def scan_comments(text: str) -> list[tuple[int, int, str]]:
    """Return every ``#`` comment of ``text`` as ``(start, end, body)``, skipping string contents.

    ``start``/``end`` are character offsets of the whole comment; ``body`` is the text after ``#``.
    """
    out: list[tuple[int, int, str]] = []
    for m in _COMMENT_RE.finditer(text):
        if m.group(0).startswith("#"):
            out.append((m.start(), m.end(), m.group(0)[1:]))
    return out
