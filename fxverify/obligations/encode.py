"""The encoding of IR facts into solver-neutral terms: the execution model of BRIEF section 2.

Schedules: each edge ``e`` gets integer variables ``start(e)`` and ``finish(e)`` (ns, printed
``s_<eid>`` and ``f_<eid>``) with ``0 <= start < finish``; an HB pair ``a -> b`` becomes
``finish(a) <= start(b)``, and a query that keeps only its primary edges
(``projected_schedule``) has ``finish(a) + d <= start(b)``, ``d`` the most edges it eliminated
on one HB path between them. Footprints: membership of an address ``x`` is
``x = base + k*stride + o`` with ``0 <= k < count`` and ``0 <= o < elem`` (exact for strided
footprints, linear because strides are constants). Obligations build their queries from these and
read model values back through the same terms. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from heapq import heappop, heappush

from fxverify.graph import PolicyGraph, ReachIndex
from fxverify.ir import Footprint, Policy
from fxverify.smt.terms import Term, and_, between, bool_var, eq, int_var, mod, not_


def start(eid: int) -> Term:
    """The start time of edge ``eid``, in ns."""
    return int_var(f"s_{eid}")


def finish(eid: int) -> Term:
    """The finish time of edge ``eid``, in ns (the interval is ``[start, finish)``)."""
    return int_var(f"f_{eid}")


def overlap(a: int, b: int) -> Term:
    """The half-open intervals of edges ``a`` and ``b`` intersect."""
    return and_(start(a) < finish(b), start(b) < finish(a))


def touch_overlap(a: int, ca: Iterable[int], b: int, cb: Iterable[int]) -> Term:
    """Edges ``a`` and ``b`` touch their bytes at a common instant, when the edges ``ca`` cancel
    ``a`` and ``cb`` cancel ``b``: a cancelled edge ``x`` touches bytes only over
    ``[s(x), e(x))`` with ``e(x) = min(f(x), f(c) for each canceller c)`` (specs/obligations.md
    section 1, cancellation), so the intervals meet when ``max(s(a), s(b)) < min(e(a), e(b))``.
    Without cancels this is ``overlap(a, b)``, term for term."""
    ends = [start(a) < finish(c) for c in ca] + [start(b) < finish(c) for c in ca]
    ends += [start(a) < finish(c) for c in cb] + [start(b) < finish(c) for c in cb]
    return and_(start(a) < finish(b), start(b) < finish(a), *ends)


def touches_after(u: int, cu: Iterable[int], t: Term) -> Term:
    """Edge ``u``, cancelled by the edges ``cu``, touches a byte at some instant ``>= t``: its
    interval ``[s(u), e(u))`` (``touch_overlap``) is not empty and ``t < e(u)``. Without
    cancels this is ``not (f(u) <= t)``, term for term."""
    cu = list(cu)
    if not cu:
        return not_(finish(u) <= t)
    return and_(t < finish(u), *[and_(t < finish(c), start(u) < finish(c)) for c in cu])


def touches(u: int, cu: Iterable[int]) -> Term:
    """Edge ``u``, cancelled by the edges ``cu``, touches its bytes at all: no canceller finished
    by ``s(u)`` (``true`` without cancels)."""
    return and_(*[start(u) < finish(c) for c in cu])


def relevant_edges(graph: PolicyGraph, primary: Iterable[int]) -> set[int]:
    """Edges whose constraints can affect a query over ``primary``: the primaries plus every edge on
    an HB path between two of them.

    Exactness: schedule constraints are difference constraints; a violating query adds constraints
    only between primary events, so any infeasibility is a negative cycle through paths between
    primaries. A schedule of this set therefore extends to every other edge.
    """
    prim = sorted(set(primary))
    out = set(prim)
    for a in prim:
        for b in prim:
            if a != b and graph.hb_before(a, b):
                out |= graph.ancestors_between(a, b)
    return out


def durations(eids: Iterable[int]) -> list[tuple[str | None, Term]]:
    """``dur_<e>``: ``0 <= start(e) < finish(e)`` for each edge of ``eids``, in the given order."""
    return [(f"dur_{e}", and_(0 <= start(e), start(e) < finish(e))) for e in eids]


def schedule(graph: PolicyGraph, eids: Iterable[int]) -> list[tuple[str | None, Term]]:
    """Schedule constraints restricted to ``eids``: durations and the HB pairs among them.

    Labels name each constraint (``dur_<eid>``, ``hb_<a>_<b>``) for unsat cores.
    """
    ids = sorted(set(eids))
    keep = set(ids)
    out = durations(ids)
    for e in ids:
        for p in sorted(graph.predecessors(e)):
            if p in keep:
                out.append((hb_label(p, e), finish(p) <= start(e)))
    return out


def projected_schedule(graph: PolicyGraph, primary: Iterable[int]) -> list[tuple[str | None, Term]]:
    """``schedule(graph, relevant_edges(graph, primary))`` with every edge but the primaries
    eliminated: durations of the primaries, and for each pair ``a`` HB-before ``b`` of them
    ``finish(a) + d <= start(b)``, with ``d`` the most edges on one HB path strictly between
    them (labelled ``hb_<a>_<b>``). For a query whose other constraints bind only the primaries'
    times, the two are the same query: the schedule is a system of difference constraints
    (``start(x) + 1 <= finish(x)``, ``finish(p) <= start(x)``), and eliminating a variable of
    such a system keeps the longest paths between the others (Fourier-Motzkin elimination on
    difference constraints: Dechter, Meiri and Pearl, "Temporal constraint networks", 1991,
    section 3). So the primaries take the same values in both (the same minimal witness), and a
    verdict cannot change. A query whose constraints bind another edge's time gets fewer
    constraints on it, never more, so it is refuted at least as often (never proved wrongly).

    The gap of a pair costs one walk from ``a`` over HB successors in rank order, restricted to
    edges that reach a primary (the reachability index), instead of every edge between two
    primaries (thousands in a pooled flow, all of them in the query). On a cyclic HB, or without
    the index, it is ``schedule`` of ``relevant_edges``. Returns the labelled constraints."""
    prim = sorted(set(primary))
    index = graph.reach_index()
    if index is None:
        return schedule(graph, relevant_edges(graph, prim))
    among, rank = index.by_post(prim), graph.ranks()
    gaps = {a: _gaps(graph, a, targets, index, rank) for a in prim if (targets := index.after_among(a, among))}
    out = durations(prim)
    for a in prim:
        if a in gaps:
            out += [(hb_label(a, b), finish(a) + gap <= start(b) if gap else finish(a) <= start(b))
                    for b, gap in sorted(_unimplied(gaps, a, rank).items())]
    return out


def _unimplied(gaps: dict[int, dict[int, int]], a: int, rank: Sequence[int]) -> dict[int, int]:
    """The pairs ``(a, b)`` of ``gaps[a]`` (the gap from ``a`` to each primary after it, in
    edges) that no primary ``c`` right after ``a`` implies: ``f(a) + gap(a, c) <= s(c)``,
    ``s(c) + 1 <= f(c)`` and ``f(c) + gap(c, b) <= s(b)`` give ``f(a) + gap(a, c) + 1 +
    gap(c, b) <= s(b)``, which is the pair's own constraint when that sum is ``gap(a, b)`` (it is
    never more: a path through ``c`` is one path from ``a`` to ``b``). "Right after": no other
    primary after ``a`` is before ``c`` (found in rank order), so the pair ``(a, c)`` is always
    kept, and by induction on the primaries between them every pair dropped is implied by pairs
    kept: the same solutions, in a query of O(primaries) constraints where a chain of a pool's
    lifetime events had O(primaries^2)."""
    mine = gaps[a]
    nearest: list[int] = []
    for c in sorted(mine, key=rank.__getitem__):
        if not any(c in gaps.get(m, ()) for m in nearest):
            nearest.append(c)
    return {b: g for b, g in mine.items()
            if not any(b in (via := gaps.get(m, {})) and mine[m] + 1 + via[b] == g for m in nearest)}


def eliminated_times(graph: PolicyGraph, sched: dict[int, tuple[int, int]],
                     eids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Times for the edges of ``eids`` that lie on an HB path between two edges of ``sched``
    (the ``(start, finish)`` a model of a ``projected_schedule`` query gives its primaries, in
    ns) and that ``sched`` lacks: the earliest each may start, ``max f(a) + d`` over the edges
    ``a`` of ``sched`` before it (``d``: the most edges strictly between them on one HB path),
    each one ns long. With ``sched`` a model of the projected constraints these are legal: an
    edge ``b`` of ``sched`` after ``x`` has ``f(a) + d(a, b) <= s(b)``, and ``d(a, b)`` is at least
    ``d(a, x) + 1 + d(x, b)``. They are the times a trace shows for the edges the query no longer
    names (``Obligation.context``). Returns only the added edges; ``{}`` on a cyclic HB."""
    index = graph.reach_index()
    if index is None:
        return {}
    before, rank = index.before, graph.ranks()
    timed = sorted(sched)
    want = [x for x in sorted(set(eids)) if x not in sched
            and any(before(a, x) for a in timed) and any(before(x, b) for b in timed)]
    starts: dict[int, int] = {}
    for a in timed:
        targets = [x for x in want if before(a, x)]
        if targets:
            for x, gap in _gaps(graph, a, targets, index, rank).items():
                starts[x] = max(starts.get(x, 0), sched[a][1] + gap)
    return {x: (t, t + 1) for x, t in sorted(starts.items())}


def _gaps(graph: PolicyGraph, a: int, targets: list[int], index: ReachIndex,
          rank: Sequence[int]) -> dict[int, int]:
    """For each edge of ``targets`` (all HB-after ``a``), the most edges strictly between ``a`` and
    it on one HB path: a longest-path walk from ``a`` in rank order (ranks are a topological
    order, so an edge is final when popped), through edges that reach some target
    (``ReachIndex.reaches_any``: a bisection per interval of the edge, not an HB query per
    target, which made a query over a pool's hundred lifetime events cubic in them)."""
    last = max(rank[b] for b in targets)
    aim = index.by_post(targets)
    depth = {a: 0}
    heap = [(rank[a], a)]
    while heap:
        _r, x = heappop(heap)
        d = depth[x] + 1
        for y in graph.successors(x):
            if rank[y] > last or not index.reaches_any(y, aim):
                continue
            if y not in depth:
                depth[y] = d
                heappush(heap, (rank[y], y))
            elif depth[y] < d:
                depth[y] = d
    return {b: depth[b] - 1 for b in targets}


def hb_label(a: int, b: int) -> str:
    """The label of the constraint ``a`` happens-before ``b`` (what an unsat core names)."""
    return f"hb_{a}_{b}"


def member(fp: Footprint, addr: Term, tag: str) -> tuple[Term, Term]:
    """Return ``(constraint, k)``: ``addr`` is a byte of ``fp`` via element ``k`` (named ``k_<tag>``)."""
    k = int_var(f"k_{tag}")
    o = int_var(f"o_{tag}")
    body = and_(between(k, 0, fp.count), between(o, 0, fp.elem), eq(addr, fp.base + fp.stride * k + o))
    return body, k


def contains(fp: Footprint, addr: Term) -> Term:
    """``addr`` is a byte of ``fp``, without auxiliary variables, so it can be negated:
    ``lo <= addr < hi`` and, for strided footprints, ``(addr - base) mod stride < elem``."""
    body = between(addr, fp.lo, fp.hi)
    if fp.contiguous:
        return body
    return and_(body, mod(addr - fp.base, fp.stride) < fp.elem)


def concurrent_schedule(graph: PolicyGraph, eids: Iterable[int], a: int, b: int) -> dict[str, int | bool]:
    """Start and finish times (``s_<e>``, ``f_<e>``, in ns) for the edges ``eids``, among them
    ``a`` and ``b``, which HB leaves unordered: ``a`` and ``b`` run over one interval after the
    edges HB-before either and before the rest (``around_schedule``), a linear extension of HB
    on ``eids`` (none of those edges is HB-after ``a`` or ``b``: that would order them). For a
    checked guess (``Obligation.guess``): the caller's query decides whether they fit."""
    return around_schedule(graph, eids, (a, b))


def around_schedule(graph: PolicyGraph, eids: Iterable[int], at_once: Sequence[int],
                    ahead: Collection[int] = ()) -> dict[str, int | bool]:
    """Start and finish times (``s_<e>``, ``f_<e>``, in ns; ``slotted_schedule``) for the edges
    ``eids``, among them the edges ``at_once`` (which HB leaves unordered), in one linear
    extension of HB that runs ``at_once`` together, as early as HB lets them after the edges of
    ``ahead``, and those as late as they can before them: first the edges of ``eids`` HB-before
    one of ``at_once`` or HB-before an edge of ``ahead`` that are not HB-after one, then
    ``ahead``, then the rest of the edges HB-before ``at_once`` (those HB-after an edge of
    ``ahead``), then ``at_once``, then the rest, each part in rank order. Each part before
    ``at_once`` is closed under HB-predecessors but for those in the parts before it, so the
    order extends HB when no edge of ``ahead`` is HB-after one of ``at_once`` or after another
    edge of ``ahead`` (the caller's to ensure: else the times break an HB pair, and the query
    they are checked against rejects them). For a checked guess (``Obligation.guess``). Raises
    nothing."""
    before, rank = graph.hb_before_fn(), graph.ranks()
    prim = sorted(set(eids) - set(at_once), key=lambda e: rank[e])
    late = [e for e in prim if e not in ahead and any(before(x, e) for x in ahead)]
    early = [e for e in prim if e not in ahead
             and (any(before(e, u) for u in at_once) or any(before(e, x) for x in ahead))]
    fenced = set(late)
    parts = ([e for e in early if e not in fenced] + [e for e in prim if e in ahead]
             + [e for e in early if e in fenced])
    placed = set(parts)
    return slotted_schedule(graph, [[e] for e in parts] + [list(at_once)] + [[e] for e in prim if e not in placed])


def slotted_schedule(graph: PolicyGraph, slots: Sequence[Sequence[int]]) -> dict[str, int | bool]:
    """Start and finish times (``s_<e>``, ``f_<e>``, in ns) of the edges in ``slots``: the edges
    of slot ``i`` all run over ``[i * step, i * step + 1)``, ``step`` being one more than the
    policy's edges, so consecutive slots are further apart than any gap of
    ``projected_schedule``'s (the most edges on an HB path between two primaries). The caller
    orders the slots as a linear extension of HB."""
    step = len(graph.policy.edges) + 1
    out: dict[str, int | bool] = {}
    for i, slot in enumerate(slots):
        for e in slot:
            out[f"s_{e}"], out[f"f_{e}"] = i * step, i * step + 1
    return out


def time_objectives(eids: Iterable[int]) -> list[Term]:
    """Minimisation objectives that make witness schedules small and deterministic."""
    out: list[Term] = []
    for e in sorted(set(eids)):
        out.extend((finish(e), start(e)))
    return out


class Facts:
    """The IR facts a query states as hypotheses: named SMT variables, each fixed to the value the
    IR gives it (an integer or a boolean), so the query's rule is stated over them and decided by
    the solver, not precomputed in Python. ``constraints`` are the ``(label, term)`` pairs to
    assert, in the order the facts were first named; naming a fact again returns its variable."""

    def __init__(self) -> None:
        self.constraints: list[tuple[str | None, Term]] = []
        self._vars: dict[str, Term] = {}

    def fact(self, name: str, value: int | bool) -> Term:
        """The variable ``name`` (boolean for a ``bool`` value, else integer), fixed to ``value``
        the first time it is named."""
        if name not in self._vars:
            self._vars[name] = bool_var(name) if isinstance(value, bool) else int_var(name)
            self.constraints.append((name, eq(self._vars[name], value)))
        return self._vars[name]


class DeviceFacts(Facts):
    """``Facts`` whose values may be devices: every device has a fixed id, its declaration index
    in ``policy`` (``header`` lists them)."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.ids = {d.name: i for i, d in enumerate(policy.devices)}

    def device(self, name: str, device: str) -> Term:
        """The variable ``name``, fixed to ``device``'s id. Raises ``KeyError`` for an undeclared
        device (resolve rejects those first)."""
        return self.fact(name, self.ids[device])

    def header(self) -> tuple[str, ...]:
        """Header comment lines naming each device id."""
        return tuple(f"device {i} = {n}" for n, i in self.ids.items())
