"""Flows: measuring them against the limits, unrolling their loops and branches into edge
instances, and building the edges and final owners of every instance.

``check_flow_limits`` measures nesting, ranges and the unrolled size on the AST before anything is
expanded (FX-LIM-001; FX-NAM-002 for a loop variable that shadows another; FX-TYP-002 for a
backwards range) and records each loop's range. ``unroll`` enumerates edge instances in
declaration order, loops in index order (FX-NAM-002 for an instance declared twice). ``build_edges``
and ``build_finals`` turn the instances into ``ir.Edge`` and ``ir.FinalOwner`` values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.resolve.edges import check_cancels, edge_plan
from fxverify.resolve.expressions import compile_cond, compile_expr, const_range
from fxverify.resolve.names import device
from fxverify.resolve.references import region_set
from fxverify.resolve.state import Env, EvalError, Fn, Instance, State, instance_name
from fxverify.shapes import EdgeShape, Loop, edge_refs
from fxverify.source import Span


class Unroller:
    """Unrolls the flows of one ``State``: the loop ranges found by ``check_flow_limits`` and the
    per-declaration compiled parts (conditions, edge indices) are kept here, keyed by AST node."""

    def __init__(self, st: State) -> None:
        self.st = st
        self._ranges: dict[int, tuple[int, int]] = {}
        self._conds: dict[int, Fn | None] = {}
        self._edge_idx: dict[int, list[Fn] | None] = {}
        self._reported_dup: set[tuple[int, int]] = set()
        self._eid_of: dict[str, int] = {}
        #: The upper bound of edge instances (final owners included) ``check_flow_limits`` measured.
        self.measured_edges = 0

    # ---- limits, before anything is expanded ---------------------------------------------------

    def check_flow_limits(self, flows: Sequence[ast.FlowDecl]) -> bool:
        """Check nesting, ranges and the unrolled size of ``flows`` (FX-LIM-001); True when they fit."""
        st = self.st
        total_edges = total_iters = 0
        ok = True
        for flow in flows:
            res = self._measure(flow.body, 1, ())
            if res is None:
                ok = False
                continue
            total_edges += res[0]
            total_iters += res[1]
            self.measured_edges = total_edges
            if total_edges > st.limits.max_edges:
                st.error(codes.LIM_001, f"flows unroll to {total_edges} edges, over the limit of "
                         f"{st.limits.max_edges}", flow.name.span, "too many edge instances",
                         help="use smaller ranges; the limit bounds the work of one check")
                return False
            if total_iters > st.limits.max_edges:
                st.error(codes.LIM_001, f"flows run {total_iters} loop iterations, over the limit of "
                         f"{st.limits.max_edges}", flow.name.span, "too many loop iterations",
                         help="use smaller ranges; the limit bounds the work of one check")
                return False
        return ok

    def _measure(self, stmts: Sequence[ast.Stmt], depth: int, scope: tuple[str, ...]) -> tuple[int, int] | None:
        """An upper bound of (statement instances, loop iterations) for ``stmts``."""
        st = self.st
        edges = iters = 0
        ok = True
        for s in stmts:
            if isinstance(s, (ast.EdgeDecl, ast.FinalOwnerStmt)):
                edges += 1
                continue
            if depth > st.limits.max_nesting:
                st.error(codes.LIM_001, f"blocks nested deeper than the limit of {st.limits.max_nesting}", s.span,
                         "nested too deeply", help="flatten the loops (one loop can range over a product)")
                return None
            if isinstance(s, ast.ForStmt):
                if s.var.name in scope:
                    st.error(codes.NAM_002, f"index variable `{s.var.name}` shadows an outer one", s.var.span,
                             "already in scope", help="pick another name")
                    ok = False
                    continue
                rng = const_range(st, s.lo, s.hi, Span(s.span.file, s.lo.span.start, s.hi.span.end), outer=scope)
                if rng is None:
                    ok = False
                    continue
                self._ranges[id(s)] = rng
                inner = self._measure(s.body, depth + 1, scope + (s.var.name,))
                if inner is None:
                    return None
                n = rng[1] - rng[0]
                edges += n * inner[0]
                iters += n * (1 + inner[1])
            else:
                assert isinstance(s, ast.IfStmt)
                a = self._measure(s.then, depth + 1, scope)
                b = self._measure(s.orelse, depth + 1, scope)
                if a is None or b is None:
                    return None
                edges += max(a[0], b[0])
                iters += max(a[1], b[1])
        return (edges, iters) if ok else None

    # ---- unrolling -----------------------------------------------------------------------------

    def unroll(self, stmts: Sequence[ast.Stmt], env: Env, scope: tuple[str, ...], flow: str) -> None:
        """Enumerate edge instances in declaration order, loops in index order."""
        st = self.st
        for s in stmts:
            if isinstance(s, ast.EdgeDecl):
                self._unroll_edge(s, env, scope, flow)
            elif isinstance(s, ast.ForStmt):
                lo, hi = self._ranges[id(s)]
                var = s.var.name
                inner = scope + (var,)
                for v in range(lo, hi):
                    env[var] = v
                    self.unroll(s.body, env, inner, flow)
                env.pop(var, None)
            elif isinstance(s, ast.IfStmt):
                key = id(s)
                if key not in self._conds:
                    self._conds[key] = compile_cond(st, s.cond, scope)
                cond = self._conds[key]
                if cond is None:
                    continue
                try:
                    taken = cond(env)
                except EvalError as err:
                    st.eval_error(err)
                    continue
                self.unroll(s.then if taken else s.orelse, env, scope, flow)
            else:
                assert isinstance(s, ast.FinalOwnerStmt)
                st.finals.append((s, dict(env), scope))

    def shapes(self, stmts: Sequence[ast.Stmt], loops: tuple[Loop, ...] = (),
               conds: tuple[tuple[ast.Cond, bool], ...] = (), out: dict[Span, EdgeShape] | None = None) -> dict[Span, EdgeShape]:
        """The ``EdgeShape`` of every edge declaration of ``stmts`` (after ``check_flow_limits``),
        by declaration span: the loops (with the ranges measured) and branches around it."""
        out = {} if out is None else out
        for s in stmts:
            if isinstance(s, ast.EdgeDecl):
                src, dst = edge_refs(s)
                line, col = self.st.sources.location(s.span)
                out[s.span] = EdgeShape(s.name.name, s.span, f"{s.span.file}:{line}:{col}", loops, conds, src, dst,
                                        s.device.name, s.hook.name, s.clauses, s.indices, s.action)
            elif isinstance(s, ast.ForStmt):
                rng = self._ranges.get(id(s))
                if rng is not None:
                    self.shapes(s.body, loops + (Loop(s.var.name, *rng),), conds, out)
            elif isinstance(s, ast.IfStmt):
                self.shapes(s.then, loops, conds + ((s.cond, True),), out)
                self.shapes(s.orelse, loops, conds + ((s.cond, False),), out)
        return out

    def _unroll_edge(self, d: ast.EdgeDecl, env: Env, scope: tuple[str, ...], flow: str) -> None:
        st = self.st
        key = id(d)
        if key not in self._edge_idx:
            fns: list[Fn] | None = []
            for e in d.indices:
                fn = compile_expr(st, e, scope)
                if fn is None:
                    fns = None
                    break
                fns.append(fn)
            self._edge_idx[key] = fns
        fns = self._edge_idx[key]
        fam = st.edge_fams[d.name.name]
        if fns is None or fam.dims != len(d.indices):
            return
        try:
            idx = tuple([f(env) for f in fns])
        except EvalError as err:
            st.eval_error(err)
            return
        name = instance_name(fam.name, idx) if idx else fam.name
        if idx in fam.instances:
            first = st.instances[self._eid_of[name]].decl
            pair = (id(first), id(d))
            if pair not in self._reported_dup:
                self._reported_dup.add(pair)
                st.error(codes.NAM_002, f"duplicate edge `{name}`", d.name.span, "declared again here",
                         related=(Label(first.name.span, "first declared here"),),
                         help="each edge instance is declared once; check the indices")
            return
        fam.instances[idx] = name
        self._eid_of[name] = len(st.instances)
        st.instances.append(Instance(d, dict(env), scope, flow, name))

    def finish(self) -> None:
        """Freeze every edge family's instance list (what ``after fam[*]`` names)."""
        for fam in self.st.edge_fams.values():
            fam.all_names = tuple(fam.instances.values())


def build_edges(st: State) -> list[ir.Edge]:
    """The ``ir.Edge`` of every instance, in instance order (edge ids are positions), after
    checking the ``cancel`` clauses across edges (``edges.check_cancels``, FX-TYP-002)."""
    edges: list[ir.Edge] = []
    plans: dict[int, Any] = {}
    for inst in st.instances:
        key = id(inst.decl)
        if key not in plans:
            plans[key] = edge_plan(st, inst.decl, inst.scope)
        plan = plans[key]
        if plan is None:
            continue
        try:
            edges.append(plan(inst.env, len(edges), inst.name, inst.flow))
        except EvalError as err:
            st.eval_error(err)
    for err in check_cancels(edges):
        st.eval_error(err)
    return edges


def build_finals(st: State) -> list[ir.FinalOwner]:
    """The declared final owners of every ``final owner`` statement instance."""
    out: list[ir.FinalOwner] = []
    plans: dict[int, Any] = {}
    for s, env, scope in st.finals:
        key = id(s)
        if key not in plans:
            regions = region_set(st, s.ref, scope, "a final owner")
            dev = device(st, s.device)
            plans[key] = None if regions is None or dev is None else (regions, dev)
        plan = plans[key]
        if plan is None:
            continue
        try:
            out.extend(ir.FinalOwner(r, plan[1], s.span) for r in plan[0](env))
        except EvalError as err:
            st.eval_error(err)
    return out
