"""Closing a schedule under happens-before, for a trace that must show one legal schedule.

Takes a ``World`` (the simulator's own HB) and a schedule of the edges a trace shows; produces
the schedule with every HB ancestor they lack timed too (``close``), and those ancestors in
groups, one per gap of the timeline, that the trace summarises as elided
(``specs/obligations.md`` section 4). Emits no diagnostics.
"""

from __future__ import annotations

import networkx as nx

from fxverify.replay.world import Schedule, World


def close(world: World, sched: Schedule) -> tuple[Schedule, tuple[tuple[int, ...], ...]]:
    """``sched`` closed under happens-before: every HB ancestor of a scheduled edge that it
    lacks gets a unit interval of its own, so the result is a prefix of a real execution (an
    edge never starts before something it waits for has finished). Returns the closed
    schedule and the added edges, in groups: each group fills one gap of ``sched``'s timeline,
    in HB order, one edge after the other.

    The endpoints of ``sched`` keep their order (ends before starts at equal times, as
    intervals are half-open): times are only shifted to open the gaps, so every rule compares
    its edges the same way. Each added edge goes into the earliest gap it may: after every
    scheduled or added ancestor has finished. That gap always lies before the start of each
    scheduled edge it is an ancestor of, when ``sched`` is legal. A gap is kept clear of the
    scheduled endpoints around it (no added edge starts with a scheduled start or ends with a
    scheduled end), so a trace can summarise a group in one line between two of its rows.
    Raises ``ValueError`` when ``sched`` or the result is not a legal schedule."""
    why = world.check_schedule(sched)
    if why is not None:
        raise ValueError(why)
    # the missing ancestors, by one search over immediate predecessors (O(edges + HB pairs):
    # a policy of tens of thousands of edges must not build every edge's ancestor set)
    missing: set[int] = set()
    stack = [p for e in sched for p in world.preds[e] if p not in sched]
    while stack:
        x = stack.pop()
        if x not in missing:
            missing.add(x)
            stack.extend(p for p in world.preds[x] if p not in sched and p not in missing)
    if not missing:
        return dict(sched), ()
    # endpoint keys (time, 0 for an end, 1 for a start), in timeline order
    keys = sorted({(f, 0) for _s, f in sched.values()} | {(s, 1) for s, _f in sched.values()})
    idx = {k: i for i, k in enumerate(keys)}
    try:
        order = _topological(world, missing)
    except nx.NetworkXUnfeasible as exc:
        raise ValueError("the edges to add lie on an HB cycle") from exc
    gap: dict[int, int] = {}  # added edge -> index of the key it goes just before
    for x in order:
        lo = 0
        for a in world.preds[x]:
            lo = max(lo, idx[(sched[a][1], 0)] + 1 if a in sched else gap[a])
        if lo >= len(keys):  # only when ``sched`` breaks HB
            raise ValueError(f"edge {x} cannot finish before the scheduled edges that wait for it")
        gap[x] = lo
    groups: list[list[int]] = [[] for _ in keys]
    for x in order:
        groups[gap[x]].append(x)
    out: Schedule = {}
    new: dict[tuple[int, int], int] = {}
    prev_old = prev_new = 0
    for i, (t, kind) in enumerate(keys):
        members = groups[i]
        at = prev_new + (t - prev_old if i else t)
        if members:
            base = prev_new + (1 if i and keys[i - 1][1] == 1 else 0)
            out |= {x: (base + j, base + j + 1) for j, x in enumerate(members)}
            at = max(at, base + len(members) + (1 if kind == 0 else 0))
        new[(t, kind)] = at
        prev_old, prev_new = t, at
    out |= {e: (new[(s, 1)], new[(f, 0)]) for e, (s, f) in sched.items()}
    # immediate predecessors suffice: HB is their transitive closure and every s < f
    bad = next(((a, b) for b in out for a in world.preds[b] if a in out and out[a][1] > out[b][0]), None)
    if bad is not None or any(not 0 <= s < f for s, f in out.values()):
        raise ValueError(f"closing the schedule broke happens-before at {bad}")
    return out, tuple(tuple(g) for g in groups if g)


def _topological(world: World, ids: set[int]) -> list[int]:
    """``ids`` in an HB order, smallest id first among the ready ones (deterministic); raises
    ``networkx.NetworkXUnfeasible`` on a cycle."""
    g = nx.DiGraph()
    g.add_nodes_from(ids)
    g.add_edges_from((p, x) for x in ids for p in world.preds[x] if p in ids)
    return list(nx.lexicographical_topological_sort(g))
