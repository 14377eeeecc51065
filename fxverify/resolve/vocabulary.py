"""Words of the vocabulary (``fxverify.vocab``), checked where the policy uses them, and the
transform steps they make up.

``word`` checks one word (a device kind, link kind, dtype, operator...) against its vocabulary
list, with a did-you-mean. ``compile_transform`` checks a transform step's arguments against the
parameters its kind takes (specs/language.md, "Transforms") and returns a closure that builds the
typed ``ir.Transform`` per instance. Emits FX-TYP-003 (unknown word) and FX-TYP-002 (a parameter
missing, repeated, unknown or out of range).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.resolve.expressions import checked
from fxverify.resolve.names import choices, suggest
from fxverify.resolve.state import Env, State, article
from fxverify.source import Span
from fxverify.vocab import CHECKSUMS, CODECS, DTYPES, OPERATORS

#: The words of each vocabulary list, in the order help texts show them.
DTYPE_WORDS: tuple[str, ...] = tuple(DTYPES)
CODEC_WORDS: tuple[str, ...] = tuple(CODECS)
OPERATOR_WORDS: tuple[str, ...] = tuple(OPERATORS)


def word(st: State, ident: ast.Ident, what: str, words: Sequence[str]) -> bool:
    """Check ``ident`` against a fixed vocabulary; FX-TYP-003 with a did-you-mean otherwise."""
    if ident.name in words:
        return True
    st.error(codes.TYP_003, f"unknown {what} `{ident.name}`", ident.span, f"not a {what}",
             help=choices(ident.name, words))
    return False


@dataclass(frozen=True, slots=True)
class _XfSpec:
    """Parameters a transform kind accepts: an ``A -> B`` dtype pair (``arrow``), positional
    parameters and keyword parameters as ``(name, type)``, and the required ones."""

    arrow: bool = False
    positional: tuple[tuple[str, str], ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    required: tuple[str, ...] = ()


_XF_SPECS: dict[ir.XfKind, _XfSpec] = {
    ir.XfKind.MOVE: _XfSpec(),
    ir.XfKind.PERSIST: _XfSpec(),
    ir.XfKind.QUANTIZE: _XfSpec(arrow=True, keys=(("group", "posint"), ("scale", "dtype"))),
    ir.XfKind.COMPRESS: _XfSpec(positional=(("algo", "compress"),), required=("algo",)),
    ir.XfKind.CHECKSUM: _XfSpec(positional=(("algo", "checksum"),), required=("algo",)),
    ir.XfKind.FILTER: _XfSpec(positional=(("keep", "percent"),)),
    ir.XfKind.REDUCE: _XfSpec(positional=(("op", "op"),), required=("op",)),
    ir.XfKind.SCATTER: _XfSpec(positional=(("ways", "posint"),), required=("ways",)),
    ir.XfKind.REPLICATE: _XfSpec(positional=(("ways", "posint"),), required=("ways",)),
    ir.XfKind.GATHER: _XfSpec(positional=(("ways", "posint"),), keys=(("rank", "nonneg"),), required=("ways",)),
}
_NAME_VOCAB: dict[str, tuple[str, tuple[str, ...]]] = {
    "dtype": ("dtype", DTYPE_WORDS),
    "compress": ("compression algorithm", CODEC_WORDS),
    "checksum": ("checksum algorithm", CHECKSUMS),
    "op": ("operator", OPERATOR_WORDS),
}
#: How each transform kind builds its typed step from its parameters.
_BUILD: dict[ir.XfKind, Callable[[dict[str, Any], Span], ir.Transform]] = {
    ir.XfKind.MOVE: lambda p, span: ir.Move(span),
    ir.XfKind.PERSIST: lambda p, span: ir.Persist(span),
    ir.XfKind.QUANTIZE: lambda p, span: ir.Quantize(p["src"], p["dst"], p.get("group"), p.get("scale", "fp32"), span),
    ir.XfKind.COMPRESS: lambda p, span: ir.Compress(p["algo"], span),
    ir.XfKind.CHECKSUM: lambda p, span: ir.Checksum(p["algo"], span),
    ir.XfKind.FILTER: lambda p, span: ir.Filter(p.get("keep", 100), span),
    ir.XfKind.REDUCE: lambda p, span: ir.Reduce(p["op"], span),
    ir.XfKind.SCATTER: lambda p, span: ir.Scatter(p["ways"], span),
    ir.XfKind.REPLICATE: lambda p, span: ir.Replicate(p["ways"], span),
    ir.XfKind.GATHER: lambda p, span: ir.Gather(p["ways"], p.get("rank"), span),
}


def xf_usage(kind: ir.XfKind) -> str:
    """How to write a step of ``kind`` (the help of its FX-TYP-002)."""
    return {
        ir.XfKind.MOVE: "write `move`",
        ir.XfKind.PERSIST: "write `persist`",
        ir.XfKind.QUANTIZE: "write `quantize(bf16 -> fp8, group 128, scale f32)`; group and scale are optional",
        ir.XfKind.COMPRESS: "write `compress(ALGO)` with ALGO one of " + ", ".join(CODEC_WORDS),
        ir.XfKind.CHECKSUM: "write `checksum(ALGO)` with ALGO one of " + ", ".join(CHECKSUMS),
        ir.XfKind.FILTER: "write `filter(keep N)` with N a percentage 0..100",
        ir.XfKind.REDUCE: "write `reduce(OP)`, such as `reduce(sum)`",
        ir.XfKind.SCATTER: "write `scatter(N)`",
        ir.XfKind.REPLICATE: "write `replicate(N)`",
        ir.XfKind.GATHER: "write `gather(N)` or `gather(N, rank R)`",
    }[kind]


def compile_transform(st: State, step: ast.XfStep, scope: tuple[str, ...]) -> Callable[[Env], ir.Transform] | None:
    """Compile one transform step and its parameters; ``None`` after a static error."""
    if not word(st, step.kind, "transform", [k.value for k in ir.XfKind]):
        return None
    kind = ir.XfKind(step.kind.name)
    spec = _XF_SPECS[kind]
    types = dict(spec.positional) | dict(spec.keys)
    params: dict[str, Any] = {}
    ok = True
    pos = 0

    def put(key: str, value: Any, span: Span) -> None:
        nonlocal ok
        if key in params:
            st.error(codes.TYP_002, f"`{kind.value}` parameter `{key}` given twice", span, "given again here",
                     help="give each parameter once")
            ok = False
        params[key] = value

    for arg in step.args:
        if isinstance(arg, ast.ArrowArg):
            if not spec.arrow:
                st.error(codes.TYP_002, f"`{kind.value}` takes no `A -> B` argument", arg.span, "not expected",
                         help=xf_usage(kind))
                ok = False
                continue
            ok &= word(st, arg.src, "dtype", DTYPE_WORDS) & word(st, arg.dst, "dtype", DTYPE_WORDS)
            put("src", arg.src.name, arg.span)
            put("dst", arg.dst.name, arg.span)
        elif isinstance(arg, ast.KeyArg):
            key = arg.key.name
            if key not in types:
                st.error(codes.TYP_002, f"`{kind.value}` has no parameter `{key}`", arg.key.span, "unknown parameter",
                         help=suggest(key, types) or xf_usage(kind))
                ok = False
                continue
            put(key, _value(st, arg.value, types[key], key, scope), arg.span)
        else:
            if pos >= len(spec.positional):
                st.error(codes.TYP_002, f"too many arguments to `{kind.value}`", arg.span, "not expected",
                         help=xf_usage(kind))
                ok = False
                continue
            key, typ = spec.positional[pos]
            pos += 1
            put(key, _value(st, arg.value, typ, key, scope), arg.span)
    if spec.arrow and "src" not in params:
        st.error(codes.TYP_002, f"`{kind.value}` needs its dtypes", step.span, "`SRC -> DST` missing",
                 help=xf_usage(kind))
        ok = False
    for key in spec.required:
        if key not in params:
            st.error(codes.TYP_002, f"`{kind.value}` needs `{key}`", step.span, f"`{key}` missing", help=xf_usage(kind))
            ok = False
    if not ok or any(v is None for v in params.values()):
        return None
    build, span = _BUILD[kind], step.span
    if all(not callable(v) for v in params.values()):
        xf = build(params, span)
        return lambda env: xf
    return lambda env: build({k: v(env) if callable(v) else v for k, v in params.items()}, span)


def _value(st: State, e: ast.Expr, typ: str, key: str, scope: tuple[str, ...]) -> Any:
    """A transform parameter: a name from a vocabulary, or a checked integer closure."""
    if typ in _NAME_VOCAB:
        what, words = _NAME_VOCAB[typ]
        if not isinstance(e, ast.Var):
            st.error(codes.TYP_002, f"`{key}` expects {article(what)}", e.span, f"expected {article(what)}",
                     help=choices("", words))
            return None
        return e.name if word(st, ast.Ident(e.name, e.span), what, words) else None
    if typ == "percent":
        return checked(st, e, scope, 0, f"`{key}`", 100, fold=True)
    return checked(st, e, scope, 1 if typ == "posint" else 0, f"`{key}`", fold=True)
