"""The symbol index of one policy: where every name is declared and where it is used, for hover,
go-to-definition and completion in an editor.

Takes the syntax trees of the files of one policy (the root and its includes, as
``resolve.load_policy`` read them) and, when resolution succeeded, the resolved ``ir.Policy``;
produces an ``Index``: the declarations (``Symbol``: devices, hooks, links, spaces, regions, alias
sets, maps, flows, edge families and index variables, each with the span of its declaring name),
every use of a name with the kind the grammar position gives it (``Occurrence``), the ``include``
lines with the files they name, and the integer and size literals. The kinds follow the name
tables of ``resolve.names`` (one table per kind); a use whose name has no declaration of its kind
is kept with no symbol. Emits no diagnostics: those come from the checker.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fxverify import ast, ir
from fxverify.source import SourceMap, Span
from fxverify.syntax.parse import parse
from fxverify.syntax.to_ast import to_ast


@dataclass(frozen=True, slots=True)
class Symbol:
    """A declared name: ``kind`` (``device``, ``hook``, ``link``, ``space``, ``region``, ``alias
    set``, ``map``, ``flow``, ``edge``, ``index``), ``name`` (a hook is ``DEV.HOOK``; an index
    variable carries its scope, ``l@<offset>``), ``span`` of the declaring identifier and ``decl``
    of the whole declaration."""

    kind: str
    name: str
    span: Span
    decl: Span

    @property
    def shown(self) -> str:
        """The name as the policy writes it (an index variable without its scope)."""
        return self.name.split("@", 1)[0]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A name as written at ``span``, of ``kind``, keyed ``name`` as in ``Symbol``; ``edge`` is
    the declaration span of the edge it appears in (``None`` outside edges)."""

    span: Span
    kind: str
    name: str
    edge: Span | None = None


@dataclass(frozen=True, slots=True)
class Include:
    """An ``include "path"`` line at ``span`` and the file it names (``target``, normalised)."""

    span: Span
    written: str
    target: str


@dataclass(frozen=True, slots=True)
class Number:
    """An integer or size literal at ``span``: its value in bytes (or plain units) and its text."""

    span: Span
    value: int
    unit: str | None


@dataclass
class Index:
    """Declarations and uses of one policy's names (see the module docstring). ``policy`` is the
    resolved IR, ``None`` when the policy did not resolve (hover then shows declared facts only).
    ``modules`` holds the syntax tree of every file that parsed, by path."""

    policy: ir.Policy | None = None
    modules: dict[str, ast.Module] = field(default_factory=dict)
    symbols: dict[tuple[str, str], Symbol] = field(default_factory=dict)
    includes: list[Include] = field(default_factory=list)
    edge_decls: dict[Span, ast.EdgeDecl] = field(default_factory=dict)
    region_decls: dict[str, ast.RegionDecl] = field(default_factory=dict)
    _occ: dict[str, list[tuple[int, int, object]]] = field(default_factory=dict)

    def add(self, file: str, start: int, end: int, what: object) -> None:
        """Record ``what`` (an ``Occurrence``, ``Include`` or ``Number``) at ``[start, end)``."""
        self._occ.setdefault(file, []).append((start, end, what))

    def finish(self) -> None:
        """Sort every file's entries by position (call once, after the last ``add``)."""
        for items in self._occ.values():
            items.sort(key=lambda t: (t[0], -t[1]))

    def at(self, file: str, offset: int) -> object | None:
        """The innermost entry covering character ``offset`` of ``file`` (a name's end counts, so a
        cursor just after a name finds it), or ``None``."""
        items = self._occ.get(file, [])
        i = bisect.bisect_right(items, (offset, float("inf")))
        best = None
        for start, end, what in reversed(items[max(0, i - 64):i]):
            if start <= offset <= end and (best is None or end - start < best[1] - best[0]):
                best = (start, end, what)
        return None if best is None else best[2]

    def symbol(self, occ: Occurrence) -> Symbol | None:
        """The declaration ``occ`` names, or ``None`` when its name is not declared as its kind."""
        return self.symbols.get((occ.kind, occ.name))

    def occurrences(self, file: str) -> Iterator[Occurrence]:
        """Every name written in ``file`` (declarations and uses), in offset order."""
        for _, _, what in self._occ.get(file, []):
            if isinstance(what, Occurrence):
                yield what

    def names(self, kind: str) -> list[str]:
        """The declared names of ``kind``, sorted (hooks as ``DEV.HOOK``, index variables left out)."""
        return sorted(s.name for (k, _), s in self.symbols.items() if k == kind and k != "index")


def build(sources: SourceMap, policy: ir.Policy | None, *, max_depth: int = 200) -> Index:
    """The index of the files in ``sources`` (each parsed again from its text; a file that does not
    parse contributes nothing) and of ``policy``."""
    idx = Index(policy)
    for path in sources.paths():
        sf = sources.get(path)
        tree, diags = parse(sf.text, path, max_depth=max_depth)
        if tree is None:
            continue
        module, _ = to_ast(tree, path, sf.text)
        idx.modules[path] = module
    walker = _Walker(idx)
    for module in idx.modules.values():
        walker.module(module)
    walker.resolve_values()
    idx.finish()
    return idx


class _Walker:
    """Visits syntax trees and fills an ``Index``: every identifier gets the kind its grammar
    position gives (``specs/language.md``)."""

    def __init__(self, idx: Index) -> None:
        self.idx = idx
        self.scopes: list[dict[str, str]] = []  # index variable -> its symbol key
        self.edge: Span | None = None
        self.values: list[ast.Var] = []  # names used as values: device names, unless index variables

    # ---- recording ------------------------------------------------------------------------------

    def declare(self, kind: str, ident: ast.Ident, decl: Span, key: str | None = None) -> None:
        name = key or ident.name
        self.idx.symbols.setdefault((kind, name), Symbol(kind, name, ident.span, decl))
        self.use(kind, ident, key)

    def use(self, kind: str, ident: ast.Ident, key: str | None = None) -> None:
        sp = ident.span
        self.idx.add(sp.file, sp.start, sp.end, Occurrence(sp, kind, key or ident.name, self.edge))

    # ---- declarations ---------------------------------------------------------------------------

    def module(self, m: ast.Module) -> None:
        for item in m.items:
            if isinstance(item, ast.IncludeDecl):
                target = os.path.normpath(os.path.join(os.path.dirname(m.path), item.path))
                inc = Include(item.span, item.path, target)
                self.idx.includes.append(inc)
                self.idx.add(item.span.file, item.span.start, item.span.end, inc)
            elif isinstance(item, ast.FabricDecl):
                for sub in item.items:
                    self.fabric_item(sub)
            elif isinstance(item, ast.SpaceDecl):
                self.declare("space", item.name, item.span)
                self.use("device", item.device)
                self.exprs([item.base, item.size])
            elif isinstance(item, ast.RegionDecl):
                self.region(item)
            elif isinstance(item, ast.AliasSetDecl):
                self.declare("alias set", item.name, item.span)
                for r in item.members:
                    self.ref("region", r)
            elif isinstance(item, ast.MapDecl):
                self.declare("map", item.name, item.span)
                self.exprs([item.max_entries])
                if item.cls_arg is not None:
                    self.use("device", item.cls_arg)
            elif isinstance(item, ast.FlowDecl):
                self.declare("flow", item.name, item.span)
                self.stmts(item.body)

    def fabric_item(self, sub: ast.DeviceDecl | ast.LinkDecl) -> None:
        if isinstance(sub, ast.DeviceDecl):
            self.declare("device", sub.name, sub.span)
            for h in sub.hooks:
                self.declare("hook", h, sub.span, f"{sub.name.name}.{h.name}")
            return
        if sub.name is not None:
            self.declare("link", sub.name, sub.span)
        else:
            name = f"{sub.a.name}--{sub.b.name}"
            self.idx.symbols.setdefault(("link", name), Symbol("link", name, sub.a.span.join(sub.b.span), sub.span))
        self.use("device", sub.a)
        self.use("device", sub.b)

    def region(self, d: ast.RegionDecl) -> None:
        self.declare("region", d.name, d.span)
        self.idx.region_decls.setdefault(d.name.name, d)
        self.scopes.append({})
        for p in d.params:
            self.exprs([p.lo, p.hi])
            self.index_var(p.var, d.span)
        self.use("space", d.space)
        self.exprs([d.at, d.size])
        self.use("device", d.owner)
        self.scopes.pop()

    def index_var(self, var: ast.Ident, decl: Span) -> None:
        key = f"{var.name}@{var.span.file}:{var.span.start}"
        self.scopes[-1][var.name] = key
        self.declare("index", var, decl, key)

    # ---- flows ----------------------------------------------------------------------------------

    def stmts(self, body: Iterable[ast.Stmt]) -> None:
        for s in body:
            if isinstance(s, ast.EdgeDecl):
                self.edge_decl(s)
            elif isinstance(s, ast.ForStmt):
                self.exprs([s.lo, s.hi])
                self.scopes.append({})
                self.index_var(s.var, s.span)
                self.stmts(s.body)
                self.scopes.pop()
            elif isinstance(s, ast.IfStmt):
                self.cond(s.cond)
                self.stmts(s.then)
                self.stmts(s.orelse)
            elif isinstance(s, ast.FinalOwnerStmt):
                self.ref("region", s.ref)
                self.use("device", s.device)

    def edge_decl(self, d: ast.EdgeDecl) -> None:
        self.edge = d.span
        self.idx.edge_decls[d.span] = d
        self.declare("edge", d.name, d.span)
        self.exprs(d.indices)
        self.action(d.action)
        self.use("device", d.device)
        self.use("hook", d.hook, f"{d.device.name}.{d.hook.name}")
        for c in d.clauses:
            self.clause(c)
        self.edge = None

    def action(self, a: ast.Action) -> None:
        if isinstance(a, (ast.WriteAction,)):
            self.ref("region", a.dst)
        elif isinstance(a, ast.ReadAction):
            self.ref("region", a.src)
        elif isinstance(a, (ast.MoveAction, ast.ReduceAction)):
            self.ref("region", a.src)
            self.ref("region", a.dst)
        elif isinstance(a, (ast.ReleaseAction, ast.CacheOp)):
            self.ref("region", a.ref)
        elif isinstance(a, ast.AllocClause):
            self.ref("region", a.ref)
            self.use("device", a.device)
        elif isinstance(a, ast.FlushAction):
            self.link_ref(a.link)
        elif isinstance(a, ast.CancelClause):
            for r in a.refs:
                self.ref("edge", r)

    def clause(self, c: ast.Clause) -> None:
        if isinstance(c, (ast.AfterClause, ast.ExpectsClause, ast.CancelClause)):
            for r in c.refs:
                self.ref("edge", r)
        elif isinstance(c, (ast.BytesClause, ast.ReuseClause)):
            self.exprs([c.value])
        elif isinstance(c, ast.RwClause):
            self.exprs([c.read, c.write])
        elif isinstance(c, ast.AliasClause):
            self.use("alias set", c.name)
        elif isinstance(c, ast.TransformClause):
            for step in c.steps:
                self.exprs([a.value for a in step.args if isinstance(a, (ast.KeyArg, ast.ValueArg))])
        elif isinstance(c, ast.HandoffClause):
            self.ref("region", c.ref)
            self.use("device", c.src)
            self.use("device", c.dst)
        elif isinstance(c, (ast.LeaseClause, ast.RevokeClause, ast.AllocClause)):
            self.ref("region", c.ref)
            self.use("device", c.device)
        elif isinstance(c, (ast.ReleaseClause, ast.CacheOp)):
            self.ref("region", c.ref)
        elif isinstance(c, ast.FlushClause):
            self.link_ref(c.link)
        elif isinstance(c, ast.ViaClause):
            for lr in c.links:
                self.link_ref(lr)
        elif isinstance(c, ast.MapOpClause):
            self.use("map", c.target.map)
            self.exprs([c.target.key, c.value])

    def link_ref(self, lr: ast.LinkRef) -> None:
        if lr.second is None:
            self.use("link", lr.first)
        else:
            self.use("device", lr.first)
            self.use("device", lr.second)

    def ref(self, kind: str, r: ast.Ref) -> None:
        self.use(kind, r.name)
        for g in r.groups:
            for it in g.items:
                if not isinstance(it, ast.StarItem):
                    self.exprs([it.expr])

    # ---- expressions ----------------------------------------------------------------------------

    def cond(self, c: ast.Cond) -> None:
        if isinstance(c, ast.Compare):
            self.exprs([c.left, c.right])
        elif isinstance(c, ast.BoolOp):
            self.cond(c.left)
            self.cond(c.right)
        elif isinstance(c, ast.Not):
            self.cond(c.operand)

    def exprs(self, es: Iterable[ast.Expr | None]) -> None:
        for e in es:
            self.expr(e)

    def expr(self, e: ast.Expr | None) -> None:
        if isinstance(e, ast.IntLit):
            self.idx.add(e.span.file, e.span.start, e.span.end, Number(e.span, e.value, None))
        elif isinstance(e, ast.SizeLit):
            self.idx.add(e.span.file, e.span.start, e.span.end, Number(e.span, e.count, e.unit.name))
        elif isinstance(e, ast.Var):
            key = next((s[e.name] for s in reversed(self.scopes) if e.name in s), None)
            if key is not None:
                self.use("index", ast.Ident(e.name, e.span), key)
            else:
                self.values.append(e)
        elif isinstance(e, ast.BinOp):
            self.expr(e.left)
            self.expr(e.right)
        elif isinstance(e, ast.Neg):
            self.expr(e.operand)

    def resolve_values(self) -> None:
        """Names used as values that are not index variables: device names (map values)."""
        for v in self.values:
            if ("device", v.name) in self.idx.symbols:
                self.idx.add(v.span.file, v.span.start, v.span.end, Occurrence(v.span, "device", v.name))
