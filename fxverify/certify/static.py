"""Checks of the schedule-free certificates: ``interval``, ``in-place``, ``fabric-path``,
``every-path``, ``declared-hook``, ``link-endpoint``, ``one-destination``, ``local-class``,
``own-slot``, ``size-bound``, ``checksum-walk`` and ``layout`` (the posted-write routes of
FX-ORD-003 are ``certify.routes``).

Each check recomputes the facts from the IR's fields (footprint base, stride, count and elem;
region base and size; links, hooks, map ops, transform chains), compares them with the
certificate, decides the property in Python and states it for ``--certify smt`` as constants plus
the negated property. Rules restate ``specs/obligations.md``; codec bounds and dtype widths are the
IR vocabulary's (``fxverify.vocab``). Emits no diagnostics.
"""

from __future__ import annotations

from typing import Any

from fxverify.certificate import (
    Certificate,
    ChecksumWalk,
    DeclaredHook,
    EveryPath,
    FabricPath,
    InPlaceForm,
    Interval,
    LayoutFacts,
    LinkEndpoint,
    LocalClass,
    OneDestination,
    OwnSlot,
    SizeBound,
)
from fxverify.certify.facts import Facts, Statement, fp_hi, key_body, split_ref
from fxverify.diagnostics import codes
from fxverify.ir import Edge, EdgeAction, Footprint, MapOpKind, Transform, XfKind
from fxverify.smt.terms import (
    Term,
    and_,
    between,
    bool_var,
    const,
    div,
    eq,
    int_var,
    ite,
    not_,
    or_,
)
from fxverify.vocab import (
    CODECS,
    INT_ARITH,
    ClassKind,
    LinkOrder,
    canonical_dtype,
    dtype_bits,
)


def _first_edge(facts: Facts, c: Certificate, st: Statement) -> Edge | None:
    """The obligation's first edge, when the certificate names one of the policy."""
    if not st.fact(bool(c.edges) and 0 <= c.edges[0] < len(facts.edges), "the certificate names no edge"):
        return None
    return facts.edges[c.edges[0]]


def _edge(facts: Facts, c: Certificate, st: Statement, suffix: str = "") -> Edge | None:
    """The obligation's single edge, when its key is ``CODE:<edge name><suffix>``."""
    e = _first_edge(facts, c, st)
    if e is None:
        return None
    return e if st.fact(key_body(c.key) == e.name + suffix, f"the key `{c.key}` is not about `{e.name}{suffix}`") else None


def constants(st: Statement, values: dict[str, int | bool]) -> dict[str, Term]:
    """Variables fixed to the recomputed IR values (hypotheses of the SMT statement)."""
    out = {}
    for name, v in values.items():
        out[name] = bool_var(name) if isinstance(v, bool) else int_var(name)
        st.hyps.append(eq(out[name], const(v)))
    return out


def check_interval(facts: Facts, c: Certificate, ev: Interval) -> Statement:
    """``interval`` (FX-ALIAS-003): every byte ``base + k*stride + o`` of the access lies in its region."""
    st = Statement()
    e = _edge(facts, c, st, f"#{ev.pos}")
    if e is None or not st.fact(c.code == codes.ALIAS_003 and 0 <= ev.pos < len(e.accesses()), "not a bounds obligation"):
        return st
    fp = e.accesses()[ev.pos].footprint
    reg = facts.regions.get(fp.region)
    if not st.fact(reg is not None and ev.region == fp.region, f"the access is made through `{fp.region}`, not `{ev.region}`"):
        return st
    assert reg is not None
    lo, hi, base, end = fp.base, fp_hi(fp), reg.base, reg.base + reg.size
    st.fact((ev.lo, ev.hi) == (lo, hi), f"the footprint spans [{lo:#x}, {hi:#x}), not [{ev.lo:#x}, {ev.hi:#x})")
    st.fact((ev.base, ev.end) == (base, end), f"`{reg.name}` spans [{base:#x}, {end:#x}), not [{ev.base:#x}, {ev.end:#x})")
    st.need(base <= lo and hi <= end, f"[{lo:#x}, {hi:#x}) leaves `{reg.name}`")
    addr, k, o = int_var("addr"), int_var("k"), int_var("o")
    st.hyps += [between(k, 0, fp.count), between(o, 0, fp.elem), eq(addr, const(fp.base) + k * fp.stride + o)]
    st.violation = not_(between(addr, const(ev.base), const(ev.end)))
    return st


def _same(a: Footprint, b: Footprint) -> bool:
    return (a.space, a.base, a.elem, a.stride, a.count) == (b.space, b.base, b.elem, b.stride, b.count)


def check_in_place(facts: Facts, c: Certificate, ev: InPlaceForm) -> Statement:
    """``in-place`` (FX-ALIAS-002): the first ranked gather reads at ``dst.base + rank * chunk``
    (NCCL's in-place all-gather), or a reduction reads exactly what it writes."""
    st = Statement()
    e = _edge(facts, c, st)
    if e is None or not st.fact(c.code == codes.ALIAS_002 and e.src is not None and e.dst is not None, "not an in-place obligation"):
        return st
    assert e.src is not None and e.dst is not None
    ranks = [t.rank for t in e.transforms if t.kind is XfKind.GATHER and getattr(t, "rank", None) is not None]
    if ev.rule == "gather-rank":
        chunk = e.src.elem * e.src.count
        st.fact(bool(ranks) and ranks[0] == ev.rank and ev.chunk == chunk, "the rank or chunk is not the edge's gather's")
        st.need(e.src.base == e.dst.base + ev.rank * chunk, "the source is not at the rank's slot")
        v = constants(st, {"src": e.src.base, "dst": e.dst.base, "rank": ev.rank, "chunk": chunk})
        st.violation = not_(eq(v["src"], v["dst"] + ev.rank * chunk))
        return st
    st.fact(ev.rule == "same-footprint" and not ranks and e.action is EdgeAction.REDUCE, f"rule `{ev.rule}` does not apply")
    st.need(_same(e.src, e.dst), "the reduction's source is not its destination")
    pairs = [(getattr(e.src, x), getattr(e.dst, x)) for x in ("base", "elem", "stride", "count")]
    st.violation = or_(*[not_(eq(const(a), const(b))) for a, b in pairs])
    return st


def check_fabric(facts: Facts, c: Certificate, ev: FabricPath) -> Statement:
    """``fabric-path`` (FX-HOOK-001 through the driver, FX-ORD-004 over ordered links): the routes
    join the transfer's endpoints, link by link."""
    st = Statement()
    e = _first_edge(facts, c, st)
    if e is None:
        return st
    u, v = facts.endpoints(e)
    if c.code == codes.HOOK_001:
        st.fact(key_body(c.key) == f"{e.name}:{u}>{e.device}>{v}" and not ev.ordered_only, f"the key `{c.key}` is not this transfer")
        want = [(u, e.device), (e.device, v)] if e.device not in (u, v) else [(u, v)]
    elif c.code == codes.ORD_004:
        legs = in_order_legs(e, u, v)
        st.fact(key_body(c.key) in legs and ev.ordered_only and e.require_in_order, "not an in-order path over ordered links")
        want = [legs.get(key_body(c.key), (u, v))]
    else:
        st.fact(False, f"a fabric path does not prove {c.code}")
        return st
    st.need([(h.src, h.dst) for h in ev.hops] == want, f"the routes join {[(h.src, h.dst) for h in ev.hops]}, not {want}")
    bad = []
    for i, hop in enumerate(ev.hops):
        cur = hop.src
        reach = {d.name: bool_var(f"r{i}_{d.name}") for d in facts.policy.devices}
        if hop.src in reach:
            st.hyps.append(reach[hop.src])
        for name in hop.links:
            ln = facts.policy.link(name) if facts.policy.has("link", name) else None
            if not st.fact(ln is not None and cur in (ln.a, ln.b), f"`{name}` is no link at `{cur}`"):
                break
            assert ln is not None
            st.fact(not ev.ordered_only or ln.order is LinkOrder.ORDERED, f"`{name}` is not an ordered link")
            nxt = ln.b if cur == ln.a else ln.a
            st.hyps.append(or_(not_(reach[cur]), reach[nxt]))
            cur = nxt
        st.need(cur == hop.dst, f"the route from `{hop.src}` ends at `{cur}`, not `{hop.dst}`")
        if hop.dst in reach:
            bad.append(not_(reach[hop.dst]))
    st.violation = or_(*bad)
    return st


def _two_disjoint(adj: dict[str, set[str]], sources: set[str], sinks: set[str]) -> bool:
    """True when two vertex-disjoint paths lead from ``sources`` to ``sinks`` in the undirected
    graph ``adj`` (a path may be one vertex in both): a unit-capacity max flow on split vertices,
    augmented by breadth-first search at most twice (Menger's theorem)."""
    cap: dict[tuple[str, str], int] = {}

    def arc(a: str, b: str) -> None:
        cap[(a, b)] = cap.get((a, b), 0) + 1
        cap.setdefault((b, a), 0)
    for d in adj:
        arc(f"in:{d}", f"out:{d}")
        for n in adj[d]:
            arc(f"out:{d}", f"in:{n}")
    for d in sources:
        arc("S", f"in:{d}")
    for d in sinks:
        arc(f"out:{d}", "T")
    nbrs: dict[str, list[str]] = {}
    for a, b in cap:
        nbrs.setdefault(a, []).append(b)
    flow = 0
    while flow < 2:
        prev: dict[str, str] = {"S": "S"}
        queue = ["S"]
        while queue and "T" not in prev:
            a = queue.pop(0)
            for b in nbrs.get(a, []):
                if b not in prev and cap[(a, b)] > 0:
                    prev[b] = a
                    queue.append(b)
        if "T" not in prev:
            return False
        b = "T"
        while b != "S":
            a = prev[b]
            cap[(a, b)] -= 1
            cap[(b, a)] += 1
            b = a
        flow += 1
    return True


def on_simple_path(facts: Facts, name: str, u: str, v: str) -> bool:
    """True when link ``name`` (``x -- y``) lies on some simple fabric path between devices ``u``
    and ``v`` (``u != v``): exactly when two vertex-disjoint paths join ``{x, y}`` to ``{u, v}``
    in the fabric without that link (then one path, the link and the other form a simple path)."""
    ln = facts.policy.link(name)
    adj: dict[str, set[str]] = {d.name: set() for d in facts.policy.devices}
    for other in facts.policy.links:
        if other.name != name:
            adj[other.a].add(other.b)
            adj[other.b].add(other.a)
    return _two_disjoint(adj, {ln.a, ln.b}, {u, v})


def in_order_legs(e: Edge, u: str, v: str) -> dict[str, tuple[str, str]]:
    """The FX-ORD-004 obligations of ``e`` (endpoints ``u``, ``v``) by key body, each with the two
    devices its paths join: one ``<edge>:in_order`` for ``u`` to ``v``; for a third-party
    transfer that pins no route, one per leg through the driver's engine instead,
    ``<edge>:in_order:<a>><b>`` (specs/obligations.md, FX-ORD-004)."""
    if e.via is None and e.device not in (u, v):
        return {f"{e.name}:in_order:{a}>{b}": (a, b) for a, b in ((u, e.device), (e.device, v))}
    return {f"{e.name}:in_order": (u, v)}


def check_every_path(facts: Facts, c: Certificate, ev: EveryPath) -> Statement:
    """``every-path`` (FX-ORD-004): every link that may carry the transfer is ``ordered``. Pinned:
    the edge's ``via`` links, which must join its endpoints in order. Not pinned: the checker finds
    on its own every link that is not ``ordered`` yet lies on a simple path between the endpoints,
    or between the two devices of the key's leg for a third-party transfer (``in_order_legs``;
    ``on_simple_path``); there must be none, whatever the certificate lists. The SMT statement
    takes each link's order and whether it may carry the transfer as hypotheses."""
    st = Statement()
    e = _first_edge(facts, c, st)
    if e is None:
        return st
    legs = in_order_legs(e, *facts.endpoints(e))
    if not st.fact(key_body(c.key) in legs, f"the key `{c.key}` is not an in-order obligation of `{e.name}`"):
        return st
    if not st.fact(c.code == codes.ORD_004 and e.require_in_order, "not an in-order obligation"):
        return st
    u, v = legs[key_body(c.key)]
    st.fact((ev.src, ev.dst) == (u, v), f"the certificate joins `{ev.src}` and `{ev.dst}`, not `{u}` and `{v}`")
    st.fact(ev.pinned == (e.via is not None), "the certificate and the edge disagree on a pinned route")
    if u == v:
        st.violation = or_()
        return st
    links = facts.policy.links
    if e.via is not None:
        st.fact(ev.carriers == e.via, "the carriers are not the edge's `via` route")
        at = u
        for name in e.via:
            ln = facts.policy.link(name)
            if not st.fact(at in (ln.a, ln.b), f"`{name}` is no link at `{at}`"):
                return st
            at = ln.b if at == ln.a else ln.a
        st.fact(at == v, f"the `via` route ends at `{at}`, not `{v}`")
        carries = {ln.name: ln.name in e.via for ln in links}
    else:
        carries = {ln.name: on_simple_path(facts, ln.name, u, v) for ln in links}
        st.fact({n for n, yes in carries.items() if yes} <= set(ev.carriers),
                "a link on a path between the endpoints is missing from the certificate")
    for ln in links:
        st.need(not carries[ln.name] or ln.order is LinkOrder.ORDERED,
                f"`{ln.name}` ({ln.order.value}) may carry the transfer")
    on = constants(st, {f"carries_{i}": carries[ln.name] for i, ln in enumerate(links)})
    ordered = constants(st, {f"ordered_{i}": ln.order is LinkOrder.ORDERED for i, ln in enumerate(links)})
    st.violation = or_(*[and_(on[f"carries_{i}"], not_(ordered[f"ordered_{i}"])) for i in range(len(links))])
    return st


def _ids(facts: Facts) -> dict[str, int]:
    return {d.name: i for i, d in enumerate(facts.policy.devices)}


def check_hook(facts: Facts, c: Certificate, ev: DeclaredHook) -> Statement:
    """``declared-hook`` (FX-HOOK-002): the edge's device declares the hook that drives it."""
    st = Statement()
    e = _edge(facts, c, st)
    if e is None or not st.fact(c.code == codes.HOOK_002 and (ev.device, ev.hook) == (e.device, e.hook),
                                f"`{ev.device}.{ev.hook}` does not drive the edge"):
        return st
    hooks = facts.policy.device(e.device).hooks
    st.need(e.hook in hooks, f"`{e.device}` declares no hook `{e.hook}`")
    universe = sorted(set(hooks) | {e.hook})
    h = constants(st, {"hook": universe.index(e.hook)})["hook"]
    st.violation = and_(*[not_(eq(h, universe.index(x))) for x in hooks])
    return st


def check_endpoint(facts: Facts, c: Certificate, ev: LinkEndpoint) -> Statement:
    """``link-endpoint`` (FX-HOOK-001 for a flush): the flushing device is an end of the link."""
    st = Statement()
    e = _edge(facts, c, st, f":flush:{ev.link}")
    if e is None or not st.fact(c.code == codes.HOOK_001 and ev.link in e.flushes and ev.device == e.device
                                and facts.policy.has("link", ev.link), "not a flush of this link by this device"):
        return st
    ln, ids = facts.policy.link(ev.link), _ids(facts)
    st.need(e.device in (ln.a, ln.b), f"`{e.device}` is not an end of `{ln.name}`")
    d = constants(st, {"device": ids[e.device]})["device"]
    st.violation = and_(not_(eq(d, ids[ln.a])), not_(eq(d, ids[ln.b])))
    return st


def check_split(facts: Facts, c: Certificate, ev: OneDestination) -> Statement:
    """``one-destination`` (FX-OWN-003): the edge's clauses sharing bytes with the region all
    name one new owner."""
    st = Statement()
    if not st.fact(bool(c.edges) and 0 <= c.edges[0] < len(facts.edges) and ev.region in facts.regions, "unknown edge or region"):
        return st
    e, r = facts.edges[c.edges[0]], facts.regions[ev.region]
    st.fact(c.code == codes.OWN_003 and key_body(c.key) == f"split:{e.name}|{r.name}", f"the key `{c.key}` is not this split")
    mine = tuple(i for i, h in enumerate(e.handoffs) if (q := facts.regions[h.region]).space == r.space
                 and q.base < r.base + r.size and r.base < q.base + q.size)
    st.fact(mine == ev.clauses, f"the clauses sharing bytes with `{r.name}` are {list(mine)}, not {list(ev.clauses)}")
    dsts = [e.handoffs[i].dst for i in mine]
    st.need(set(dsts) == {ev.dst}, f"the clauses give `{r.name}` to {sorted(set(dsts))}")
    ids = _ids(facts)
    v = constants(st, {f"dst_{i}": ids[d] for i, d in enumerate(dsts)})
    st.violation = or_(*[not_(eq(x, ids[ev.dst])) for x in v.values()])
    return st


def _map_op(facts: Facts, c: Certificate, st: Statement, op: int, name: str) -> Edge | None:
    """The obligation's edge when its key's first part is ``<edge>#<op>`` and that op uses ``name``."""
    e = _first_edge(facts, c, st)
    if e is None:
        return None
    ref = split_ref(key_body(c.key).split("|")[0])
    ok = ref == (e.name, op) and 0 <= op < len(e.map_ops) and e.map_ops[op].map == name and facts.policy.has("map", name)
    return e if st.fact(ok, f"the key `{c.key}` is not op {op} of `{e.name}` on `{name}`") else None


def check_local(facts: Facts, c: Certificate, ev: LocalClass) -> Statement:
    """``local-class`` (FX-MAP-001): a ``local(dev)`` map used from a hook on ``dev``."""
    st = Statement()
    e = _map_op(facts, c, st, ev.op, ev.map)
    if e is None or not st.fact(c.code == codes.MAP_001 and ev.device == e.device, "not this edge's device"):
        return st
    cls = facts.policy.map(ev.map).cls
    st.need(cls.kind is ClassKind.LOCAL and cls.device == e.device, f"`{ev.map}` is not local to `{e.device}`")
    ids = _ids(facts)
    v = constants(st, {"device": ids[e.device], "home": ids.get(cls.device or "", -1)})
    st.violation = not_(eq(v["device"], v["home"]))
    return st


def check_slot(facts: Facts, c: Certificate, ev: OwnSlot) -> Statement:
    """``own-slot`` (FX-MAP-004, plain read): no edge on another device writes the entry."""
    st = Statement()
    e = _map_op(facts, c, st, ev.op, ev.map)
    if e is None:
        return st
    op = e.map_ops[ev.op]
    st.fact(c.code == codes.MAP_004 and op.kind is not MapOpKind.AGGREGATE and op.key == ev.key
            and facts.policy.map(ev.map).cls.kind is ClassKind.PER_DEVICE, "not a plain read of a per-device entry")
    foreign = sorted({w.device for w in facts.edges if w.eid != e.eid and w.device != e.device
                      for o in w.map_ops if o.map == ev.map and o.key == ev.key and o.kind in (MapOpKind.WRITE, MapOpKind.UPDATE)})
    st.need(not foreign, f"{foreign} write their own slots of `{ev.map}[{ev.key}]`")
    st.violation = constants(st, {"foreign_writers": len(foreign)})["foreign_writers"] > 0
    return st


class _Terms:
    def div(self, a: Any, c: int) -> Any:
        return div(a, c)

    def ite(self, cond: Any, then: Any, other: Any) -> Any:
        return ite(cond, then, other)


def worst_case(t: Transform, n: Any, arith: Any) -> Any:
    """Worst-case output bytes of ``t`` for ``n`` input bytes (ints or terms; ``arith`` divides),
    restated from ``specs/obligations.md`` (FX-XF-001) with the codecs' own bounds."""
    k = t.kind
    if k is XfKind.COMPRESS:
        return CODECS[t.algo].bound_with(n, arith)  # type: ignore[union-attr]
    if k is XfKind.QUANTIZE:
        elems = arith.div(n * 8, dtype_bits(t.src))  # type: ignore[union-attr]
        out = arith.div(elems * dtype_bits(t.dst) + 7, 8)  # type: ignore[union-attr]
        if t.group:  # type: ignore[union-attr]
            scales = arith.div(elems + (t.group - 1), t.group)  # type: ignore[union-attr]
            out = out + arith.div(scales * dtype_bits(t.scale) + 7, 8)  # type: ignore[union-attr]
        return out
    if k is XfKind.FILTER:
        return arith.div(n * t.keep + 99, 100)  # type: ignore[union-attr]
    if k is XfKind.SCATTER:
        return arith.div(n + (t.ways - 1), t.ways)  # type: ignore[union-attr]
    if k in (XfKind.GATHER, XfKind.REPLICATE):
        return n * t.ways  # type: ignore[union-attr]
    return n


def _input(e: Edge) -> int:
    if e.src is not None:
        return e.src.elem * e.src.count
    return e.bytes if e.bytes is not None else (e.dst.elem * e.dst.count if e.dst is not None else 0)


def check_size(facts: Facts, c: Certificate, ev: SizeBound) -> Statement:
    """``size-bound`` (FX-XF-001): each step's worst case recomputed; the last fits the
    destination. The bounds grow with the input, so the largest input is the worst case."""
    st = Statement()
    e = _edge(facts, c, st)
    if e is None or not st.fact(c.code == codes.XF_001 and e.dst is not None, "not an overflow obligation"):
        return st
    assert e.dst is not None
    sizes = [_input(e)]
    for t in e.transforms:
        sizes.append(worst_case(t, sizes[-1], INT_ARITH))
    cap = e.dst.elem * e.dst.count
    st.fact(tuple(sizes) == ev.sizes and cap == ev.capacity, f"the sizes are {sizes} into {cap} B, not {list(ev.sizes)} into {ev.capacity} B")
    st.need(sizes[-1] <= cap, f"{sizes[-1]} B do not fit {cap} B")
    n = [int_var(f"n_{i}") for i in range(len(sizes))]
    st.hyps.append(eq(n[0], sizes[0]))
    st.hyps += [eq(n[i + 1], worst_case(t, n[i], _Terms())) for i, t in enumerate(e.transforms)]
    st.violation = n[-1] > cap
    return st


_CHANGES = {XfKind.QUANTIZE, XfKind.COMPRESS, XfKind.FILTER, XfKind.REDUCE, XfKind.SCATTER, XfKind.GATHER}


def check_checksum(facts: Facts, c: Certificate, ev: ChecksumWalk) -> Statement:
    """``checksum-walk`` (FX-XF-002): no value-changing step after a checksum and, where the
    persisted space (the destination's, else the source's) declares ``checksum ALGO``, a valid
    checksum of that algorithm before every persist."""
    st = Statement()
    e = _edge(facts, c, st)
    if e is None or not st.fact(c.code == codes.XF_002, "not a checksum obligation"):
        return st
    fp = e.dst if e.dst is not None else e.src
    need = None if fp is None else facts.policy.space(fp.space).checksum
    valid, algo, bad = [False], [""], []
    for t in e.transforms:
        if t.kind in _CHANGES and valid[-1] or t.kind is XfKind.PERSIST and need is not None and not (valid[-1] and algo[-1] == need):
            bad.append(t.kind.value)
        valid.append(True if t.kind is XfKind.CHECKSUM else False if t.kind in _CHANGES else valid[-1])
        algo.append(getattr(t, "algo") if t.kind is XfKind.CHECKSUM else algo[-1])
    st.fact(tuple(valid) == ev.valid, f"the checksum validity along the chain is {valid}, not {list(ev.valid)}")
    st.need(not bad, f"{bad} break the checksum")
    v = [bool_var(f"v_{i}") for i in range(len(valid))]
    st.hyps.append(not_(v[0]))
    alarms = []
    for i, t in enumerate(e.transforms):
        st.hyps.append(eq(v[i + 1], const(True) if t.kind is XfKind.CHECKSUM else const(False) if t.kind in _CHANGES else v[i]))
        if t.kind in _CHANGES:
            alarms.append(v[i])
        elif t.kind is XfKind.PERSIST and need is not None:
            alarms.append(not_(v[i]) if algo[i] == need else const(True))
    st.violation = or_(*alarms)
    return st


def check_layout(facts: Facts, c: Certificate, ev: LayoutFacts) -> Statement:
    """``layout`` (FX-XF-003): dtypes agree along the chain, quantize inputs are whole elements,
    scatters divide, ranked gathers are in range, persists land in pmem."""
    st = Statement()
    e = _edge(facts, c, st)
    if e is None or not st.fact(c.code == codes.XF_003, "not a layout obligation"):
        return st
    pol = facts.policy
    cur = facts.regions[e.src.region].dtype if e.src is not None else None
    n, dtypes, checks = _input(e), [], []
    for t in e.transforms:
        dtypes.append(cur)
        if t.kind is XfKind.QUANTIZE:
            if cur is not None:
                checks.append((canonical_dtype(cur), canonical_dtype(t.src)))  # type: ignore[union-attr]
            checks.append(((n * 8) % dtype_bits(t.src), 0))  # type: ignore[union-attr]
            cur = t.dst  # type: ignore[union-attr]
        elif t.kind is XfKind.SCATTER:
            checks.append((n % t.ways, 0))  # type: ignore[union-attr]
        elif t.kind is XfKind.GATHER and t.rank is not None:  # type: ignore[union-attr]
            checks.append((int(0 <= t.rank < t.ways), 1))  # type: ignore[union-attr]
        elif t.kind is XfKind.PERSIST and (kept := e.durable()) is not None:  # or the source, sealed in place
            checks.append((int(pol.space(kept.space).persistent), 1))
    dtypes.append(cur)
    dst_dt = facts.regions[e.dst.region].dtype if e.dst is not None else None
    if dst_dt is not None and cur is not None:
        checks.append((canonical_dtype(cur), canonical_dtype(dst_dt)))
    st.fact(tuple(dtypes) == ev.dtypes and n == ev.nbytes, f"the dtypes are {dtypes} over {n} B, not {list(ev.dtypes)} over {ev.nbytes} B")
    wrong = [(a, b) for a, b in checks if a != b]
    st.need(not wrong, f"layout checks fail: {wrong}")
    names = sorted({x for pair in checks for x in pair if isinstance(x, str)})
    num = [(names.index(a) if isinstance(a, str) else a, names.index(b) if isinstance(b, str) else b) for a, b in checks]
    v = constants(st, {f"lhs_{i}": a for i, (a, _b) in enumerate(num)} | {f"rhs_{i}": b for i, (_a, b) in enumerate(num)})
    st.violation = or_(*[not_(eq(v[f"lhs_{i}"], v[f"rhs_{i}"])) for i in range(len(num))])
    return st

