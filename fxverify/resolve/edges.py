"""Edges: one declaration compiled once into a builder of ``ir.Edge`` instances.

``edge_plan`` resolves an edge declaration's action and clauses (``after``, ``stream``,
``bytes``, ``reuse``, ``rw``, ``alias``, ``require``, ``transform``, ``handoff``, ``lease``,
``revoke``, ``release``, ``flush``, ``writeback``, ``invalidate``, ``notifies``, ``cancel`` and the map operations) and returns ``build(env, eid, name, flow)``, which
evaluates the instance's index arithmetic. Emits FX-TYP-002 (a clause given twice, a value out of
range, an edge that revokes bytes it leases to the same device, a ``cancel`` without a meaning:
``check_cancels``), FX-TYP-004 (a map key out of range), FX-TYP-005 (``bytes`` that disagree with the
footprint), and the codes of the references, words and expressions it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.hb import hb_adjacency
from fxverify.resolve.expressions import checked, compile_expr
from fxverify.resolve.names import device, known
from fxverify.resolve.references import TupleFn, edge_set, footprint, link, region_set
from fxverify.resolve.state import Env, EvalError, State
from fxverify.resolve.vocabulary import OPERATOR_WORDS, compile_transform, word
from fxverify.source import Span
from fxverify.vocab import AC_OPS, MAP_SCALAR_BITS, ReleaseKind

_CLAUSE_WORD: dict[type, str] = {
    ast.StreamClause: "stream", ast.BytesClause: "bytes", ast.ReuseClause: "reuse",
    ast.RwClause: "rw", ast.AliasClause: "alias", ast.RequireClause: "require",
}


def _concat(fns: Sequence[TupleFn], dedupe: bool = False) -> TupleFn:
    """Return ``env -> the concatenation of f(env) for f in fns`` (optionally without repeats)."""
    if not fns:
        return lambda env: ()
    if len(fns) == 1:
        return fns[0]
    fs = tuple(fns)
    if dedupe:
        return lambda env: tuple(dict.fromkeys(x for f in fs for x in f(env)))
    return lambda env: tuple(x for f in fs for x in f(env))


def _collect(fns: Sequence[Callable[[Env], Any]]) -> TupleFn:
    """Return ``env -> tuple(f(env) for f in fns)``."""
    if not fns:
        return lambda env: ()
    if len(fns) == 1:
        f0 = fns[0]
        return lambda env: (f0(env),)
    fs = tuple(fns)
    return lambda env: tuple([f(env) for f in fs])


class _Parts:
    """The compiled parts of one edge declaration, gathered clause by clause."""

    def __init__(self) -> None:
        self.ok = True
        self.src_fn: Callable[[Env], ir.Footprint] | None = None
        self.dst_fn: Callable[[Env], ir.Footprint] | None = None
        self.reduce_op: str | None = None
        self.reduce_atomic = True
        self.flushes: list[str] = []
        self.via: tuple[ast.ViaClause, tuple[str, ...]] | None = None
        self.after: list[TupleFn] = []
        self.expects: tuple[ast.ExpectsClause, list[TupleFn]] | None = None
        self.notifies: list[TupleFn] = []
        self.notify_span: Span | None = None  # of the first `notifies` clause, for FX-TYP-002 (notifies itself)
        self.cancels: list[tuple[Span, TupleFn]] = []
        self.cache: dict[str, list[Callable[[Env], ir.Footprint]]] = {"writeback": [], "invalidate": []}
        self.single: dict[str, tuple[ast.Clause, Any]] = {}
        self.xfs: list[Callable[[Env], ir.Transform]] = []
        self.handoffs: list[TupleFn] = []
        self.leases: list[TupleFn] = []
        self.revokes: list[TupleFn] = []
        self.releases: list[TupleFn] = []
        self.allocs: list[TupleFn] = []
        self.map_ops: list[Callable[[Env], ir.MapOp]] = []

    def need(self, part: Any) -> Any:
        """Keep ``part``; a ``None`` (a reported error) fails the declaration."""
        self.ok &= part is not None
        return part


def _action(st: State, d: ast.EdgeDecl, scope: tuple[str, ...], p: _Parts) -> ir.EdgeAction:
    a = d.action
    if isinstance(a, ast.WriteAction):
        p.dst_fn = p.need(footprint(st, a.dst, scope))
        return ir.EdgeAction.WRITE
    if isinstance(a, ast.ReadAction):
        p.src_fn = p.need(footprint(st, a.src, scope))
        return ir.EdgeAction.READ
    if isinstance(a, (ast.MoveAction, ast.ReduceAction)):
        src, dst = footprint(st, a.src, scope), footprint(st, a.dst, scope)
        p.ok &= src is not None and dst is not None
        p.src_fn, p.dst_fn = src, dst
        if isinstance(a, ast.ReduceAction):
            p.ok &= word(st, a.op, "reduction operator", OPERATOR_WORDS)
            p.reduce_op = a.op.name
            p.reduce_atomic = a.atomic
            return ir.EdgeAction.REDUCE
        return ir.EdgeAction.MOVE
    if isinstance(a, ast.ReleaseAction):
        fn = p.need(_release(st, a.ref, a.kind, scope, a.span))
        if fn is not None:
            p.releases.append(fn)
        return ir.EdgeAction.RELEASE
    if isinstance(a, ast.AllocClause):
        fn = p.need(_alloc(st, a, scope))
        if fn is not None:
            p.allocs.append(fn)
        return ir.EdgeAction.ALLOC
    if isinstance(a, ast.CacheOp):
        _clause(st, a, scope, ir.EdgeAction(a.kind), p)
        return ir.EdgeAction(a.kind)
    if isinstance(a, ast.CancelClause):
        _clause(st, a, scope, ir.EdgeAction.CANCEL, p)
        return ir.EdgeAction.CANCEL
    assert isinstance(a, ast.FlushAction)
    name = p.need(link(st, a.link))
    if name is not None:
        p.flushes.append(name)
    return ir.EdgeAction.FLUSH


def _twice(st: State, p: _Parts, kw: str, c: ast.Clause, first: ast.Clause) -> None:
    """Report a clause that an edge takes once given again (FX-TYP-002) and fail the edge."""
    st.error(codes.TYP_002, f"`{kw}` given twice", c.span, "given again here",
             related=(Label(first.span, "first given here"),), help=f"an edge takes one `{kw}` clause")
    p.ok = False


def _clause(st: State, c: ast.Clause, scope: tuple[str, ...], action: ir.EdgeAction, p: _Parts) -> None:
    if isinstance(c, ast.AfterClause):
        for ref in c.refs:
            fn = p.need(edge_set(st, ref, scope))
            if fn is not None:
                (p.notifies if c.notifies else p.after).append(fn)
        if c.notifies and p.notify_span is None:
            p.notify_span = c.span
    elif isinstance(c, ast.CancelClause):
        for ref in c.refs:
            fn = p.need(edge_set(st, ref, scope))
            if fn is not None:
                p.cancels.append((c.span, fn))
    elif isinstance(c, ast.ExpectsClause):
        if p.expects is not None:
            return _twice(st, p, "expects", c, p.expects[0])
        if action is not ir.EdgeAction.READ:
            st.error(codes.TYP_002, "`expects` on an edge that does not read an accumulator", c.span, "not a `read` edge",
                     help="put `expects OP of PRODUCERS` on the `read` edge that consumes the accumulated bytes")
            p.ok = False
            return
        p.ok &= word(st, c.op, "accumulation operator", sorted(AC_OPS))
        fns = [p.need(edge_set(st, ref, scope)) for ref in c.refs]
        p.expects = (c, [fn for fn in fns if fn is not None])
    elif isinstance(c, ast.CacheOp):
        fp = p.need(footprint(st, c.ref, scope))
        if fp is not None:
            p.cache[c.kind].append(fp)
    elif isinstance(c, tuple(_CLAUSE_WORD)):
        kw = _CLAUSE_WORD[type(c)]
        if kw in p.single:
            st.error(codes.TYP_002, f"`{kw}` given twice", c.span, "given again here",
                     related=(Label(p.single[kw][0].span, "first given here"),), help=f"an edge takes one `{kw}` clause")
            p.ok = False
            return
        value = p.need(_single_clause(st, c, scope, p.dst_fn or p.src_fn, action))
        p.single[kw] = (c, value)
    elif isinstance(c, ast.TransformClause):
        for step in c.steps:
            fn = p.need(compile_transform(st, step, scope))
            if fn is not None:
                p.xfs.append(fn)
    elif isinstance(c, ast.HandoffClause):
        fn = p.need(_handoff(st, c, scope))
        if fn is not None:
            p.handoffs.append(fn)
    elif isinstance(c, ast.LeaseClause):
        fn = p.need(_lease(st, c, scope))
        if fn is not None:
            p.leases.append(fn)
    elif isinstance(c, ast.RevokeClause):
        fn = p.need(_lease(st, c, scope))
        if fn is not None:
            p.revokes.append(fn)
    elif isinstance(c, ast.ReleaseClause):
        fn = p.need(_release(st, c.ref, c.kind, scope, c.span))
        if fn is not None:
            p.releases.append(fn)
    elif isinstance(c, ast.AllocClause):
        fn = p.need(_alloc(st, c, scope))
        if fn is not None:
            p.allocs.append(fn)
    elif isinstance(c, ast.FlushClause):
        name = p.need(link(st, c.link))
        if name is not None:
            p.flushes.append(name)
    elif isinstance(c, ast.ViaClause):
        if p.via is not None:
            return _twice(st, p, "via", c, p.via[0])
        names = [link(st, lr) for lr in c.links]
        p.ok &= all(n is not None for n in names)
        p.via = (c, tuple(n for n in names if n is not None))
    else:
        assert isinstance(c, ast.MapOpClause)
        fn = p.need(_map_op(st, c, scope))
        if fn is not None:
            p.map_ops.append(fn)


def _check_route(span: Span, names: tuple[str, ...], a: str, b: str, links: dict[str, ir.Link],
                 driver: str | None = None, bytes_: bool = True) -> None:
    """Raise ``EvalError`` (FX-TYP-006) unless the links ``names`` form a simple path from device
    ``a`` to device ``b``, in order: each link leaves the device the previous one reached, no device
    is visited twice, and the last link arrives at ``b``; and, for a transfer whose driving device
    ``driver`` is at neither end (a third-party DMA), unless the path passes through ``driver``:
    its engine reads the bytes in and issues the writes itself (specs/obligations.md section 1,
    links and routes), so a route that leaves it out names links its writes never cross.
    ``bytes_``: whether the edge moves any bytes (a ``flush`` moves none: its ``via`` pins
    nothing)."""
    def fail(message: str, help_: str) -> None:
        raise EvalError(codes.TYP_006, span, message, help_, "not a path")
    if a == b:
        fail(f"the edge's bytes stay on `{a}`, so no link carries them" if bytes_ else
             "the edge moves no bytes, so there is no route to pin",
             "drop the `via` clause: a transfer within one device crosses no link" if bytes_ else
             "drop the `via` clause (a `flush` names its link directly: `flush LINK`)")
    at, seen = a, [a]
    for i, n in enumerate(names):
        ln = links[n]
        if at not in (ln.a, ln.b):
            fail(f"route from `{a}` to `{b}` reaches `{at}`, but link `{n}` joins `{ln.a}` and `{ln.b}`",
                 f"list the links in order from `{a}` to `{b}`, each starting where the previous one ends")
        at = ln.b if at == ln.a else ln.a
        if at in seen:
            fail(f"route from `{a}` to `{b}` visits `{at}` twice", "a route is a simple path: drop the loop")
        seen.append(at)
        if at == b and i != len(names) - 1:
            fail(f"route from `{a}` reaches `{b}` before its last link", f"end the route at `{b}`")
    if at != b:
        fail(f"route from `{a}` ends at `{at}`, not at `{b}`", f"continue the route to `{b}`")
    if driver is not None and driver not in seen:
        fail(f"route from `{a}` to `{b}` leaves out `{driver}`, whose engine moves the bytes: they come in to it "
             f"and its writes go out from it", f"route the bytes through `{driver}`, or drop `via`")


def edge_plan(st: State, d: ast.EdgeDecl, scope: tuple[str, ...]) -> Callable[..., ir.Edge] | None:
    """Compile one edge declaration once; the result builds an ``ir.Edge`` per instance, or
    raises ``EvalError`` for a problem of that instance. ``None`` after a static error."""
    p = _Parts()
    p.ok = known(st, d.device, "device")
    action = _action(st, d, scope, p)
    for c in d.clauses:
        _clause(st, c, scope, action, p)
    if not p.ok:
        return None
    src_fn, dst_fn, reduce_op, single = p.src_fn, p.dst_fn, p.reduce_op, p.single
    reduce_atomic = p.reduce_atomic
    device_name, hook, family = d.device.name, d.hook.name, d.name.name
    span, hook_span = d.span, d.hook.span
    indices = tuple(ast.index_text(ix) for ix in d.indices)
    flush_t = tuple(dict.fromkeys(p.flushes))
    stream = single["stream"][1] if "stream" in single else None
    alias = single["alias"][1] if "alias" in single else None
    in_order = "require" in single
    bytes_c = single.get("bytes")
    reuse_fn = single["reuse"][1] if "reuse" in single else None
    rw_fn = single["rw"][1] if "rw" in single else None
    after_of = _concat(p.after, dedupe=True)
    expects = None if p.expects is None else (p.expects[0], _concat(p.expects[1], dedupe=True))
    after_of, notifies_of = _concat(p.after, dedupe=True), _concat(p.notifies, dedupe=True)
    writebacks_of, invalidates_of = _collect(p.cache["writeback"]), _collect(p.cache["invalidate"])
    transforms_of, map_ops_of = _collect(p.xfs), _collect(p.map_ops)
    handoffs_of, leases_of = _concat(p.handoffs), _concat(p.leases)
    releases_of, revokes_of = _concat(p.releases), _concat(p.revokes)
    allocs_of = _concat(p.allocs)
    cancel_fns = tuple(p.cancels)
    notify_span = p.notify_span or span
    region_of = {r.name: r for r in st.regions} if (p.leases and p.revokes) or p.allocs else {}
    via = p.via
    links = {ln.name: ln for ln in st.links}
    space_device = {name: sp.device for name, sp in st.spaces.items()}

    routed: set[tuple[str, str]] = set()  # device pairs whose route ``via`` names is a path

    def build(env: Env, eid: int, name: str, flow: str) -> ir.Edge:
        src = src_fn(env) if src_fn is not None else None
        dst = dst_fn(env) if dst_fn is not None else None
        nbytes = None
        if bytes_c is not None:
            nbytes = bytes_c[1](env)
            fp = src if src is not None else dst
            if fp is not None and nbytes != fp.nbytes:
                raise EvalError(codes.TYP_005, bytes_c[0].span,
                                f"`bytes` says {nbytes} but the footprint covers {fp.nbytes}",
                                f"the {'source' if src is not None else 'destination'} "
                                f"`{fp.region}` covers {fp.nbytes} bytes", "disagrees with the footprint")
        notifies = notifies_of(env)
        if name in notifies:
            raise EvalError(codes.TYP_002, notify_span, f"`{name}` notifies its own completion",
                            "a notification reports transfers other edges made: write it on an edge of its own, "
                            f"`after {name}`, or drop `{name}` from `notifies`", "notifies itself")
        leases, revokes = leases_of(env), revokes_of(env)
        if revokes and leases:
            _check_revokes(name, leases, revokes, region_of)
        allocs, releases, handoffs = allocs_of(env), releases_of(env), handoffs_of(env)
        if allocs:
            _check_allocs(name, allocs, releases, handoffs, region_of, (src, dst))
        if via is not None:
            a, b = ir.transfer_devices(device_name, src and space_device[src.space], dst and space_device[dst.space])
            if (a, b) not in routed:  # the route depends on the two devices (and this plan's driver): once per pair
                _check_route(via[0].span, via[1], a, b, links, device_name if device_name not in (a, b) else None,
                             src is not None or dst is not None)
                routed.add((a, b))
        return ir.Edge(
            eid=eid, name=name, family=family, action=action, device=device_name, hook=hook,
            src=src, dst=dst, reduce_op=reduce_op, reduce_atomic=reduce_atomic, after=after_of(env), stream=stream,
            flushes=flush_t, require_in_order=in_order, via=via[1] if via is not None else None,
            alias=alias, bytes=nbytes,
            reuse=reuse_fn(env) if reuse_fn is not None else None,
            rw=rw_fn(env) if rw_fn is not None else None,
            transforms=transforms_of(env), handoffs=handoffs, leases=leases, revokes=revokes,
            releases=releases, allocs=allocs, map_ops=map_ops_of(env),
            writebacks=writebacks_of(env), invalidates=invalidates_of(env), notifies=notifies,
            flow=flow, span=span, hook_span=hook_span,
            expects=None if expects is None else ir.Expectation(expects[0].op.name, expects[1](env), expects[0].span),
            cancels=_cancels(cancel_fns, env),
            indices=indices,
        )
    return build


def _cancels(fns: tuple[tuple[Span, TupleFn], ...], env: Env) -> tuple[ir.Cancel, ...]:
    """One ``ir.Cancel`` per edge instance the ``cancel`` clauses name, in written order, each
    once (the first clause naming it gives its span)."""
    out: dict[str, ir.Cancel] = {}
    for span, fn in fns:
        for name in fn(env):
            out.setdefault(name, ir.Cancel(name, span))
    return tuple(out.values())


def check_cancels(edges: Sequence[ir.Edge]) -> list[EvalError]:
    """FX-TYP-002 for every ``cancel`` the model cannot give a meaning (specs/language.md,
    Clauses): an edge that cancels itself; a cancel on another device than the transfer's (only
    the device that issued a transfer can cancel it: RDMA verbs cancel a queue pair's work
    requests, io_uring an instance's own requests); a cancelled edge that is not a transfer
    (``read``, ``write``, ``move``: a reduction's partial contribution has no meaning here) or
    that carries a clause whose effect the cancel could stop halfway (a handoff, lease, revoke,
    release, alloc, flush, write-back, invalidate, notification, an ``expects`` or cancels of its
    own); an ``expects`` that names a cancelled producer (its contribution is partial) or the
    reading edge itself (a read contributes nothing). Returns the errors, one per offending clause, in edge order; raises nothing."""
    by_name = {e.name: e for e in edges}
    out: list[EvalError] = []
    cancelled: dict[str, ir.Edge] = {}
    transfers = (ir.EdgeAction.READ, ir.EdgeAction.WRITE, ir.EdgeAction.MOVE)
    for c in edges:
        for cl in c.cancels:
            x = by_name.get(cl.edge)
            if x is None:  # an instance that failed to build was reported already
                continue
            cancelled.setdefault(x.name, c)
            if x.eid == c.eid:
                out.append(EvalError(codes.TYP_002, cl.span, f"`{c.name}` cancels itself",
                                     "cancel a transfer from another edge of the issuing device", "cancels itself"))
                continue
            if x.device != c.device:
                out.append(EvalError(codes.TYP_002, cl.span, f"`{c.name}` runs on `{c.device}` but cancels `{x.name}`, "
                                     f"which `{x.device}` issues", f"drive the cancel from a hook of `{x.device}`: only "
                                     "the device that issued a transfer can cancel it", "not the issuing device"))
                continue
            if x.action not in transfers:
                out.append(EvalError(codes.TYP_002, cl.span, f"`{c.name}` cancels `{x.name}`, a `{x.action.value}` edge",
                                     "only transfers (`read`, `write`, `move`) can be cancelled", "not a transfer"))
                continue
            held = [kw for kw, has in (("handoff", x.handoffs), ("lease", x.leases), ("revoke", x.revokes),
                                       ("release", x.releases), ("alloc", x.allocs), ("flush", x.flushes),
                                       ("writeback", x.writebacks), ("invalidate", x.invalidates),
                                       ("notifies", x.notifies), ("expects", x.expects), ("cancel", x.cancels)) if has]
            if held:
                out.append(EvalError(codes.TYP_002, cl.span, f"`{c.name}` cancels `{x.name}`, which carries `{held[0]}`",
                                     f"move `{held[0]}` onto an edge of its own, `after {x.name}`: a cancel may stop "
                                     "the transfer before it takes effect", "cancels an edge with effects beyond its bytes"))
    out += _cancels_issued_after(edges, by_name)
    for e in edges:
        if e.expects is not None:
            for p in e.expects.producers:
                if p == e.name:
                    out.append(EvalError(codes.TYP_002, e.expects.span, f"`{e.name}` expects its own contribution",
                                         "name the edges that write the accumulated bytes before this read",
                                         "expects itself"))
                    break
                if p in cancelled:
                    out.append(EvalError(codes.TYP_002, e.expects.span, f"`{e.name}` expects the contribution of `{p}`, "
                                         f"which `{cancelled[p].name}` cancels", "a cancelled transfer contributes an "
                                         "unknown part of its bytes: drop it from `expects`", "expects a cancelled producer"))
                    break
    return out


def _cancels_issued_after(edges: Sequence[ir.Edge], by_name: dict[str, ir.Edge]) -> list[EvalError]:
    """FX-TYP-002 for every ``cancel X`` on an edge ``c`` that happens-before ``X`` (an ``after``
    or stream chain from ``c`` to ``X``): ``X`` is then issued only once the cancel completed, and
    a cancel stops transfers already issued and still in flight (specs/language.md,
    Cancellation); one issued after it runs in full. Unordered, the cancel may come first, which
    the touch interval models (specs/obligations.md section 1). One breadth-first search of HB's
    adjacency (``hb.hb_adjacency``) per cancelling edge, only when some edge cancels."""
    pairs = [(c, by_name[cl.edge], cl) for c in edges for cl in c.cancels if cl.edge in by_name and cl.edge != c.name]
    if not pairs:
        return []
    succs = hb_adjacency(edges, strict=False)[1]
    after: dict[int, set[int]] = {}
    out = []
    for c, x, cl in pairs:
        if c.eid not in after:
            seen, todo = {c.eid}, [c.eid]
            while todo:
                for y in succs[todo.pop()]:
                    if y not in seen:
                        seen.add(y)
                        todo.append(y)
            after[c.eid] = seen
        if x.eid in after[c.eid]:
            out.append(EvalError(codes.TYP_002, cl.span, f"`{c.name}` cancels `{x.name}`, which starts only after `{c.name}` finishes",
                                 f"a cancel stops a transfer already issued and still in flight; one issued after the cancel "
                                 f"completed runs in full: drop what orders `{x.name}` after `{c.name}`, or cancel a "
                                 "transfer that may still be in flight", "cancels a transfer issued after it"))
    return out


def _single_clause(st: State, c: ast.Clause, scope: tuple[str, ...], fp_fn: Any, action: ir.EdgeAction) -> Any:
    """Compile a clause that may appear once: stream, bytes, reuse, rw, alias, require."""
    if isinstance(c, ast.StreamClause):
        return c.name.name
    if isinstance(c, ast.AliasClause):
        return c.name.name if known(st, c.name, "alias set") else None
    if isinstance(c, ast.RequireClause):
        return True
    if isinstance(c, ast.BytesClause):
        if fp_fn is None:
            st.error(codes.TYP_005, f"`bytes` on a `{action.value}` edge", c.span, "no footprint",
                     help="only edges that read or write bytes declare `bytes`")
            return None
        return checked(st, c.value, scope, 1, "`bytes`")
    if isinstance(c, ast.ReuseClause):
        return checked(st, c.value, scope, 0, "`reuse`")
    assert isinstance(c, ast.RwClause)
    r = checked(st, c.read, scope, 0, "a read share")
    w = checked(st, c.write, scope, 0, "a write share")
    if r is None or w is None:
        return None
    return lambda env: (r(env), w(env))


def _handoff(st: State, c: ast.HandoffClause, scope: tuple[str, ...]) -> TupleFn | None:
    regions = region_set(st, c.ref, scope, "a handoff")
    src, dst = device(st, c.src), device(st, c.dst)
    if regions is None or src is None or dst is None:
        return None
    span = c.span
    return lambda env: tuple([ir.Handoff(r, src, dst, span) for r in regions(env)])


def _lease(st: State, c: ast.LeaseClause | ast.RevokeClause, scope: tuple[str, ...]) -> TupleFn | None:
    """``lease REF to DEV`` or ``revoke REF from DEV``: one ``ir.Lease`` (``ir.Revoke``) per region
    instance ``REF`` names; ``None`` after reporting an unknown region or device (FX-NAM-001)."""
    revoke = isinstance(c, ast.RevokeClause)
    regions = region_set(st, c.ref, scope, "a revoke" if revoke else "a lease")
    dev = device(st, c.device)
    if regions is None or dev is None:
        return None
    span, cls = c.span, ir.Revoke if revoke else ir.Lease
    return lambda env: tuple([cls(r, dev, span) for r in regions(env)])


def _check_revokes(name: str, leases: tuple[ir.Lease, ...], revokes: tuple[ir.Revoke, ...],
                   region_of: dict[str, ir.Region]) -> None:
    """FX-TYP-002: an edge that both leases bytes to a device and revokes them from it. A revoke
    ends every lease granted before it finished, its own edge's included (specs/obligations.md
    section 1), so such a lease could never be read under: the policy says two contradicting
    things. Raises ``EvalError`` at the revoke."""
    for rv in revokes:
        r = region_of[rv.region]
        for ls in leases:
            q = region_of[ls.region]
            if ls.device == rv.device and q.space == r.space and q.base < r.end and r.base < q.end:
                raise EvalError(codes.TYP_002, rv.span, f"`{name}` revokes the lease it grants: `{ls.region}` to `{rv.device}`",
                                f"drop the `revoke`, or revoke `{rv.region}` from `{rv.device}` on a later edge "
                                f"(`after {name}`)", "ends the lease this edge grants")


def _alloc(st: State, c: ast.AllocClause, scope: tuple[str, ...]) -> TupleFn | None:
    """``alloc REF to DEV``: one ``ir.Alloc`` per region instance ``REF`` names; ``None`` after
    reporting an unknown region or device (FX-NAM-001)."""
    regions = region_set(st, c.ref, scope, "an allocation")
    dev = device(st, c.device)
    if regions is None or dev is None:
        return None
    span = c.span
    return lambda env: tuple([ir.Alloc(r, dev, span) for r in regions(env)])


def _check_allocs(name: str, allocs: tuple[ir.Alloc, ...], releases: tuple[ir.Release, ...],
                  handoffs: tuple[ir.Handoff, ...], region_of: dict[str, ir.Region],
                  footprints: tuple[ir.Footprint | None, ...]) -> None:
    """FX-TYP-002: an edge that allocates bytes it also touches, releases, hands off or
    allocates twice (the allocation begins when the edge finishes, so its own accesses would
    fall before it).
    An allocation begins when its edge finishes and a release ends one when its edge starts
    (specs/obligations.md section 1, lifetimes), so one edge cannot do both to the same bytes; a
    handoff at the same instant would give them two new owners. Raises ``EvalError`` at the
    ``alloc``."""
    def meet(a: str, b: str) -> bool:
        q, r = region_of[a], region_of[b]
        return q.space == r.space and q.base < r.end and r.base < q.end
    for i, al in enumerate(allocs):
        r = region_of[al.region]
        for fp in footprints:
            if fp is not None and fp.space == r.space and fp.meets(r.base, r.end):
                raise EvalError(codes.TYP_002, al.span, f"`{name}` allocates `{al.region}` and touches its bytes",
                                f"allocate on an edge of its own and access the block on an edge `after {name}`",
                                "the allocation begins when this edge finishes")
        for other, what in [(x.region, "releases") for x in releases] + [(x.region, "hands off") for x in handoffs] + [
                (x.region, "allocates again") for x in allocs[i + 1:]]:
            if meet(al.region, other):
                raise EvalError(codes.TYP_002, al.span, f"`{name}` allocates `{al.region}` and {what} `{other}`",
                                f"allocate on its own edge, ordered after the release (`after {name}`), and hand "
                                "the block off on a later edge", "one edge cannot begin and end an allocation")


def _release(st: State, ref: ast.Ref, kind: ast.Ident, scope: tuple[str, ...], span: Span) -> TupleFn | None:
    ok = word(st, kind, "release kind", [k.value for k in ReleaseKind])
    regions = region_set(st, ref, scope, "a release")
    if not ok or regions is None:
        return None
    rk = ReleaseKind(kind.name)
    return lambda env: tuple([ir.Release(r, rk, span) for r in regions(env)])


def _map_op(st: State, c: ast.MapOpClause, scope: tuple[str, ...]) -> Callable[[Env], ir.MapOp] | None:
    ok = known(st, c.target.map, "map")
    key_fn = compile_expr(st, c.target.key, scope, devices=True)
    val_fn = compile_expr(st, c.value, scope, devices=True) if c.value is not None else None
    m = st.maps.get(c.target.map.name)
    if not ok or m is None or key_fn is None or (c.value is not None and val_fn is None):
        return None
    kind, span, key_span = ir.MapOpKind(c.kind), c.span, c.target.key.span
    name, entries = m.name, m.max_entries
    value_type, key_type = m.value_type, m.key_type
    # Keys and values must fit their declared types (`device` values are device indices, u32 wide).
    bits, key_bits = MAP_SCALAR_BITS.get(value_type, 64), MAP_SCALAR_BITS.get(key_type, 64)
    val_span = c.value.span if c.value is not None else span

    def op(env: Env) -> ir.MapOp:
        key = key_fn(env)
        if not 0 <= key < entries:
            raise EvalError(codes.TYP_004, key_span, f"key {key} is out of range for map `{name}`",
                            f"`{name}` has {entries} entries, keys 0..{entries - 1}", "out of range")
        if key >= 1 << key_bits:
            raise EvalError(codes.TYP_002, key_span, f"key {key} does not fit `{key_type}`, the key type of map `{name}`",
                            f"`{key_type}` holds 0..{(1 << key_bits) - 1}: declare a wider key type", "out of range")
        value = val_fn(env) if val_fn is not None else None
        if value is not None and not 0 <= value < (1 << bits):
            raise EvalError(codes.TYP_002, val_span, f"value {value} does not fit `{value_type}` of map `{name}`",
                            f"`{value_type}` holds 0..{(1 << bits) - 1}", "out of range")
        return ir.MapOp(name, kind, key, value, span)
    return op
