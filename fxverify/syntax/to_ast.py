"""Lark parse tree -> ``fxverify.ast`` nodes.

Takes the tree ``fxverify.syntax.parse.parse`` built (positions propagated) and produces an
``ast.Module`` whose every node carries a ``Span`` (character offsets in ``path``). Integer
literals are converted here (decimal or hex, ``_`` separators removed); nothing else is evaluated.

Emits: FX-LIM-001 for a decimal literal longer than ``MAX_DIGITS`` digits (Python refuses to
convert those, and no address or size needs them); FX-TYP-002 for a space attribute
(``persistent``, ``noncoherent``, ``checksum``, ``init``) given twice (they come in any order).
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, Tree, v_args
from lark.tree import Meta

from fxverify import ast
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, Label, diagnostic
from fxverify.source import Span
from fxverify.syntax.parse import unquote

MAX_DIGITS = 1000


def to_ast(tree: Tree, path: str, text: str) -> tuple[ast.Module, list[Diagnostic]]:
    """Convert the parse tree of ``path`` to an ``ast.Module``.

    ``text`` is the file's text (for the module span). Returns the module and any literal
    diagnostics; never raises for input the grammar accepted.
    """
    builder = _Builder(path)
    items = builder.transform(tree)
    module = ast.Module(path, items, Span(path, 0, len(text)))
    return module, builder.diagnostics


def _is_tok(x: object) -> bool:
    return isinstance(x, Token)


@v_args(meta=True)
class _Base(Transformer):
    """The helpers and the expression rules of the AST builder (one method per grammar rule or
    alias; each returns the AST node for it)."""

    def __init__(self, path: str) -> None:
        super().__init__(visit_tokens=False)
        self.path = path
        self.diagnostics: list[Diagnostic] = []

    # ---- helpers -----------------------------------------------------------------------------

    def _span(self, meta: Meta) -> Span:
        return Span(self.path, meta.start_pos, meta.end_pos)

    def _id(self, tok: Token) -> ast.Ident:
        return ast.Ident(str(tok), Span(self.path, tok.start_pos, tok.end_pos))

    def _opt_id(self, tok: Token | None) -> ast.Ident | None:
        return None if tok is None else self._id(tok)

    def _int(self, tok: Token) -> int:
        s = str(tok).replace("_", "")
        if s[:2] in ("0x", "0X"):
            return int(s[2:], 16)
        if len(s) > MAX_DIGITS:
            self.diagnostics.append(
                diagnostic(codes.LIM_001, f"number with {len(s)} digits exceeds the limit of {MAX_DIGITS}",
                    Span(self.path, tok.start_pos, tok.end_pos), "too long",
                    help="write large constants as products or sizes, such as `4 TiB`",
                )
            )
            return 0
        return int(s, 10)

    # ---- expressions and conditions ----------------------------------------------------------

    def _bin(self, op: str, meta: Meta, ch: list[Any]) -> ast.BinOp:
        return ast.BinOp(op, ch[0], ch[1], self._span(meta))

    def add(self, meta: Meta, ch: list[Any]) -> ast.BinOp:
        return self._bin("+", meta, ch)

    def sub(self, meta: Meta, ch: list[Any]) -> ast.BinOp:
        return self._bin("-", meta, ch)

    def mul(self, meta: Meta, ch: list[Any]) -> ast.BinOp:
        return self._bin("*", meta, ch)

    def div(self, meta: Meta, ch: list[Any]) -> ast.BinOp:
        return self._bin("/", meta, ch)

    def mod(self, meta: Meta, ch: list[Any]) -> ast.BinOp:
        return self._bin("%", meta, ch)

    def neg(self, meta: Meta, ch: list[Any]) -> ast.Neg:
        return ast.Neg(ch[0], self._span(meta))

    def int_lit(self, meta: Meta, ch: list[Any]) -> ast.IntLit:
        return ast.IntLit(self._int(ch[0]), self._span(meta))

    def size_lit(self, meta: Meta, ch: list[Any]) -> ast.SizeLit:
        return ast.SizeLit(self._int(ch[0]), self._id(ch[1]), self._span(meta))

    def var(self, meta: Meta, ch: list[Any]) -> ast.Var:
        return ast.Var(str(ch[0]), self._span(meta))

    def bool_or(self, meta: Meta, ch: list[Any]) -> ast.BoolOp:
        return ast.BoolOp("or", ch[0], ch[1], self._span(meta))

    def bool_and(self, meta: Meta, ch: list[Any]) -> ast.BoolOp:
        return ast.BoolOp("and", ch[0], ch[1], self._span(meta))

    def bool_not(self, meta: Meta, ch: list[Any]) -> ast.Not:
        return ast.Not(ch[0], self._span(meta))

    def compare(self, meta: Meta, ch: list[Any]) -> ast.Compare:
        return ast.Compare(ch[1], ch[0], ch[2], self._span(meta))

    def cmp_op(self, meta: Meta, ch: list[Any]) -> str:
        return str(ch[0])


@v_args(meta=True)
class _Builder(_Base):
    """The declaration, statement, edge and reference rules; each returns the AST node for it."""

    # ---- top level ---------------------------------------------------------------------------

    def start(self, meta: Meta, ch: list[Any]) -> tuple[ast.Decl, ...]:
        return tuple(ch)

    def policy_decl(self, meta: Meta, ch: list[Any]) -> ast.PolicyDecl:
        budget = ch[1] if len(ch) > 1 else None
        return ast.PolicyDecl(unquote(ch[0]), self._span(meta), budget)

    def solver_budget(self, meta: Meta, ch: list[Any]) -> int:
        # Through ``_int``: a budget of more than ``MAX_DIGITS`` digits is FX-LIM-001, not a crash.
        return self._int(ch[0])

    def include_decl(self, meta: Meta, ch: list[Any]) -> ast.IncludeDecl:
        return ast.IncludeDecl(unquote(ch[0]), self._span(meta))

    def fabric_decl(self, meta: Meta, ch: list[Any]) -> ast.FabricDecl:
        return ast.FabricDecl(tuple(ch), self._span(meta))

    def device_decl(self, meta: Meta, ch: list[Any]) -> ast.DeviceDecl:
        hooks = ch[2] if ch[2] is not None else ()
        return ast.DeviceDecl(self._id(ch[0]), self._id(ch[1]), hooks, self._span(meta))

    def hook_list(self, meta: Meta, ch: list[Any]) -> tuple[ast.Ident, ...]:
        return tuple(self._id(t) for t in ch if _is_tok(t))

    def link_decl(self, meta: Meta, ch: list[Any]) -> ast.LinkDecl:
        name, a, b, kind, order = ch
        return ast.LinkDecl(
            self._opt_id(name), self._id(a), self._id(b), self._id(kind), self._id(order),
            self._span(meta),
        )

    def space_decl(self, meta: Meta, ch: list[Any]) -> ast.SpaceDecl:
        name, dev, base, size = ch[:4]
        seen: dict[str, Span] = {}
        checksum: ast.Ident | None = None
        for attr in ch[4:]:
            if isinstance(attr, tuple):  # `checksum ALGO`
                word, span, checksum = "checksum", attr[0], checksum or attr[1]
            else:
                word, span = str(attr), Span(self.path, attr.start_pos, attr.end_pos)
            if word in seen:
                # The grammar takes the attributes in any order, so a repeat is the only mistake left.
                self.diagnostics.append(diagnostic(
                    codes.TYP_002, f"`{word}` given twice on space `{name}`", span, "given again here",
                    related=(Label(seen[word], "first given here"),),
                    help=f"a space takes each of `persistent`, `noncoherent`, `checksum ALGO` and `init` at most once, "
                         f"in any order: drop this `{word}`"))
                continue
            seen[word] = span
        return ast.SpaceDecl(
            self._id(name), self._id(dev), base, size, "persistent" in seen, self._span(meta), "init" in seen, checksum,
            "noncoherent" in seen
        )

    def space_checksum(self, meta: Meta, ch: list[Any]) -> tuple[Span, ast.Ident]:
        return self._span(meta), self._id(ch[0])

    def region_decl(self, meta: Meta, ch: list[Any]) -> ast.RegionDecl:
        name, params, space, at, size, owner, dtype, init, pooled = ch
        return ast.RegionDecl(
            self._id(name), params or (), self._id(space), at, size, self._id(owner),
            self._opt_id(dtype), self._span(meta), init is not None, pooled is not None,
        )

    def index_params(self, meta: Meta, ch: list[Any]) -> tuple[ast.IndexParam, ...]:
        return tuple(ch)

    def index_param(self, meta: Meta, ch: list[Any]) -> ast.IndexParam:
        return ast.IndexParam(self._id(ch[0]), ch[1], ch[2], self._span(meta))

    def alias_set_decl(self, meta: Meta, ch: list[Any]) -> ast.AliasSetDecl:
        members = tuple(c for c in ch[1:] if isinstance(c, ast.Ref))
        return ast.AliasSetDecl(self._id(ch[0]), members, self._span(meta))

    def map_decl(self, meta: Meta, ch: list[Any]) -> ast.MapDecl:
        name, mtype, key, value, entries, cls, arg, merge = ch
        return ast.MapDecl(
            self._id(name), self._id(mtype), self._id(key), self._id(value), entries,
            self._id(cls), self._opt_id(arg), self._opt_id(merge), self._span(meta),
        )

    # ---- flows -------------------------------------------------------------------------------

    def flow_decl(self, meta: Meta, ch: list[Any]) -> ast.FlowDecl:
        return ast.FlowDecl(self._id(ch[0]), tuple(ch[1:]), self._span(meta))

    def for_stmt(self, meta: Meta, ch: list[Any]) -> ast.ForStmt:
        var, lo, hi, body = ch
        return ast.ForStmt(self._id(var), lo, hi, body, self._span(meta))

    def if_stmt(self, meta: Meta, ch: list[Any]) -> ast.IfStmt:
        cond, then, orelse = ch
        return ast.IfStmt(cond, then, orelse if orelse is not None else (), self._span(meta))

    def else_if(self, meta: Meta, ch: list[Any]) -> tuple[ast.Stmt, ...]:
        return (ch[0],)

    def block(self, meta: Meta, ch: list[Any]) -> tuple[ast.Stmt, ...]:
        return tuple(ch)

    def final_stmt(self, meta: Meta, ch: list[Any]) -> ast.FinalOwnerStmt:
        return ast.FinalOwnerStmt(ch[0], self._id(ch[1]), self._span(meta))

    def edge_index(self, meta: Meta, ch: list[Any]) -> list[ast.Expr]:
        # A list (not a tuple) so edge_decl can tell index groups from the action node.
        return list(ch)

    def edge_decl(self, meta: Meta, ch: list[Any]) -> ast.EdgeDecl:
        name = self._id(ch[0])
        i = 1
        indices: list[ast.Expr] = []
        while isinstance(ch[i], list):
            indices.extend(ch[i])
            i += 1
        action, dev, hook = ch[i], ch[i + 1], ch[i + 2]
        clauses = tuple(ch[i + 3:])
        return ast.EdgeDecl(
            name, tuple(indices), action, self._id(dev), self._id(hook), clauses, self._span(meta)
        )

    def write_action(self, meta: Meta, ch: list[Any]) -> ast.WriteAction:
        return ast.WriteAction(ch[0], self._span(meta))

    def read_action(self, meta: Meta, ch: list[Any]) -> ast.ReadAction:
        return ast.ReadAction(ch[0], self._span(meta))

    def move_action(self, meta: Meta, ch: list[Any]) -> ast.MoveAction:
        return ast.MoveAction(ch[0], ch[1], self._span(meta))

    def reduce_action(self, meta: Meta, ch: list[Any]) -> ast.ReduceAction:
        return ast.ReduceAction(self._id(ch[0]), ch[2], ch[3], self._span(meta), ch[1] is None)

    def release_kind(self, meta: Meta, ch: list[Any]) -> Token:
        return ch[0]

    def release_action(self, meta: Meta, ch: list[Any]) -> ast.ReleaseAction:
        return ast.ReleaseAction(ch[0], self._id(ch[1]), self._span(meta))

    def alloc_action(self, meta: Meta, ch: list[Any]) -> ast.AllocClause:
        return ast.AllocClause(ch[0], self._id(ch[1]), self._span(meta))

    def flush_action(self, meta: Meta, ch: list[Any]) -> ast.FlushAction:
        return ast.FlushAction(ch[0], self._span(meta))

    def writeback_op(self, meta: Meta, ch: list[Any]) -> ast.CacheOp:
        return ast.CacheOp("writeback", ch[0], self._span(meta))

    def invalidate_op(self, meta: Meta, ch: list[Any]) -> ast.CacheOp:
        return ast.CacheOp("invalidate", ch[0], self._span(meta))

    def cancel_action(self, meta: Meta, ch: list[Any]) -> ast.CancelClause:
        return ast.CancelClause(tuple(ch), self._span(meta))

    def link_ref(self, meta: Meta, ch: list[Any]) -> ast.LinkRef:
        return ast.LinkRef(self._id(ch[0]), self._opt_id(ch[1]), self._span(meta))

    # ---- clauses -----------------------------------------------------------------------------

    def after_clause(self, meta: Meta, ch: list[Any]) -> ast.AfterClause:
        return ast.AfterClause(tuple(ch), self._span(meta))

    def expects_clause(self, meta: Meta, ch: list[Any]) -> ast.ExpectsClause:
        return ast.ExpectsClause(self._id(ch[0]), tuple(ch[1:]), self._span(meta))
    def notifies_clause(self, meta: Meta, ch: list[Any]) -> ast.AfterClause:
        return ast.AfterClause(tuple(ch), self._span(meta), notifies=True)

    def cancel_clause(self, meta: Meta, ch: list[Any]) -> ast.CancelClause:
        return ast.CancelClause(tuple(ch), self._span(meta))

    def stream_clause(self, meta: Meta, ch: list[Any]) -> ast.StreamClause:
        return ast.StreamClause(self._id(ch[0]), self._span(meta))

    def bytes_clause(self, meta: Meta, ch: list[Any]) -> ast.BytesClause:
        return ast.BytesClause(ch[0], self._span(meta))

    def reuse_clause(self, meta: Meta, ch: list[Any]) -> ast.ReuseClause:
        return ast.ReuseClause(ch[0], self._span(meta))

    def rw_clause(self, meta: Meta, ch: list[Any]) -> ast.RwClause:
        return ast.RwClause(ch[0], ch[1], self._span(meta))

    def alias_clause(self, meta: Meta, ch: list[Any]) -> ast.AliasClause:
        return ast.AliasClause(self._id(ch[0]), self._span(meta))

    def require_clause(self, meta: Meta, ch: list[Any]) -> ast.RequireClause:
        return ast.RequireClause("in_order", self._span(meta))

    def transform_clause(self, meta: Meta, ch: list[Any]) -> ast.TransformClause:
        return ast.TransformClause(tuple(ch), self._span(meta))

    def xf(self, meta: Meta, ch: list[Any]) -> ast.XfStep:
        args = tuple(c for c in ch[1:] if c is not None)
        return ast.XfStep(self._id(ch[0]), args, self._span(meta))

    def xf_arrow(self, meta: Meta, ch: list[Any]) -> ast.ArrowArg:
        return ast.ArrowArg(self._id(ch[0]), self._id(ch[1]), self._span(meta))

    def xf_kv(self, meta: Meta, ch: list[Any]) -> ast.KeyArg:
        return ast.KeyArg(self._id(ch[0]), ch[1], self._span(meta))

    def xf_pos(self, meta: Meta, ch: list[Any]) -> ast.ValueArg:
        return ast.ValueArg(ch[0], self._span(meta))

    def handoff_clause(self, meta: Meta, ch: list[Any]) -> ast.HandoffClause:
        return ast.HandoffClause(ch[0], self._id(ch[1]), self._id(ch[2]), self._span(meta))

    def lease_clause(self, meta: Meta, ch: list[Any]) -> ast.LeaseClause:
        return ast.LeaseClause(ch[0], self._id(ch[1]), self._span(meta))

    def revoke_clause(self, meta: Meta, ch: list[Any]) -> ast.RevokeClause:
        return ast.RevokeClause(ch[0], self._id(ch[1]), self._span(meta))

    def release_clause(self, meta: Meta, ch: list[Any]) -> ast.ReleaseClause:
        return ast.ReleaseClause(ch[0], self._id(ch[1]), self._span(meta))

    def alloc_clause(self, meta: Meta, ch: list[Any]) -> ast.AllocClause:
        return ast.AllocClause(ch[0], self._id(ch[1]), self._span(meta))

    def flush_clause(self, meta: Meta, ch: list[Any]) -> ast.FlushClause:
        return ast.FlushClause(ch[0], self._span(meta))

    def via_clause(self, meta: Meta, ch: list[Any]) -> ast.ViaClause:
        return ast.ViaClause(tuple(ch), self._span(meta))

    def _map_op(self, kind: str, meta: Meta, ch: list[Any]) -> ast.MapOpClause:
        return ast.MapOpClause(kind, ch[0], ch[1] if len(ch) > 1 else None, self._span(meta))

    def map_read_clause(self, meta: Meta, ch: list[Any]) -> ast.MapOpClause:
        return self._map_op("read", meta, ch)

    def map_write_clause(self, meta: Meta, ch: list[Any]) -> ast.MapOpClause:
        return self._map_op("write", meta, ch)

    def update_clause(self, meta: Meta, ch: list[Any]) -> ast.MapOpClause:
        return self._map_op("update", meta, ch)

    def guard_clause(self, meta: Meta, ch: list[Any]) -> ast.MapOpClause:
        return self._map_op("guard", meta, ch)

    def aggregate_clause(self, meta: Meta, ch: list[Any]) -> ast.MapOpClause:
        return self._map_op("aggregate", meta, ch)

    def map_key(self, meta: Meta, ch: list[Any]) -> ast.MapKey:
        return ast.MapKey(self._id(ch[0]), ch[1], self._span(meta))

    # ---- references --------------------------------------------------------------------------

    def ref(self, meta: Meta, ch: list[Any]) -> ast.Ref:
        return ast.Ref(self._id(ch[0]), tuple(ch[1:]), self._span(meta))

    def group(self, meta: Meta, ch: list[Any]) -> ast.Group:
        return ast.Group(tuple(ch), self._span(meta))

    def g_index(self, meta: Meta, ch: list[Any]) -> ast.IndexItem:
        return ast.IndexItem(ch[0], self._span(meta))

    def g_len(self, meta: Meta, ch: list[Any]) -> ast.LenItem:
        return ast.LenItem(ch[0], self._span(meta))

    def g_elem(self, meta: Meta, ch: list[Any]) -> ast.KeyItem:
        return ast.KeyItem("elem", ch[0], self._span(meta))

    def g_stride(self, meta: Meta, ch: list[Any]) -> ast.KeyItem:
        return ast.KeyItem("stride", ch[0], self._span(meta))

    def g_count(self, meta: Meta, ch: list[Any]) -> ast.KeyItem:
        return ast.KeyItem("count", ch[0], self._span(meta))

    def g_star(self, meta: Meta, ch: list[Any]) -> ast.StarItem:
        return ast.StarItem(self._span(meta))
