"""The happens-before view: edges as nodes, an arrow ``a -> b`` when ``f(a) <= s(b)`` is guaranteed
directly (an ``after`` clause, or stream order: ``graph.PolicyGraph.hb``), nodes framed by device
and stream.

Takes a policy, its ``PolicyGraph``, its sources, the ``--unfold`` names and optionally a
``Focus``; produces a ``model.Picture``. Edge families are folded (``families``): one node per
family with its index ranges, one arrow per pair of nodes and kind of ordering, labelled with how
the indices relate (``same l``, ``l+1``) and how many orderings it stands for (or, between a family
and an instance drawn on its own, with the family's instances when they are few). With a focus, the
finding's edges are drawn on their own and marked, with the ordering the fix adds (``missing``) or,
for a race, a line between the two edges that may overlap. Emits no diagnostics.
"""

from __future__ import annotations

from collections import defaultdict

from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.source import SourceMap
from fxverify.views.families import declaration, fold, hooks_lines, indices, relation
from fxverify.views.focus import Focus
from fxverify.views.model import Arrow, Cluster, Node, Picture


def hb_view(policy: Policy, graph: PolicyGraph, sources: SourceMap, unfold: tuple[str, ...] = (),
            focus: Focus | None = None) -> Picture:
    """The HB graph of ``policy`` as a picture (see the module docstring)."""
    edges = policy.edges
    focus_names = sorted(edges[e].name for e in focus.edges) if focus is not None else []
    groups, where = fold("e", [e.name for e in edges], [e.family for e in edges], (*unfold, *focus_names),
                         lambda i: declaration(sources, edges[i].span), "edge")
    clusters = [Cluster(f"dev_{d.name}", f"{d.name} ({d.kind.value})", "device") for d in policy.devices]
    streams = sorted({(e.device, e.stream) for e in edges if e.stream is not None})
    clusters += [Cluster(f"lane_{d}_{s}", f"stream {s}", "stream", f"dev_{d}",
                         f"stream {s} of {d}: its edges run one at a time, in declaration order") for d, s in streams]
    nodes = []
    for g in groups:
        members = [edges[i] for i in g.members]
        lanes = {(e.device, e.stream) for e in members}
        first = members[0]
        cluster = None
        if len(lanes) == 1:
            cluster = f"lane_{first.device}_{first.stream}" if first.stream is not None else f"dev_{first.device}"
        actions = ", ".join(sorted({e.action.value for e in members}))
        by = hooks_lines(actions, [(e.device, e.hook) for e in members])
        lines = [g.pattern] + ([g.ranges] if g.ranges else []) + ([f"{g.size:,} edges"] if g.folded else []) + by
        marked = focus is not None and not g.folded and first.eid in focus.edges
        nodes.append(Node(g.key, tuple(lines), "edges" if g.folded else "edge", cluster, " \n".join(lines), marked,
                          first.action.value))
    after_of = [set(e.after) for e in edges]
    pairs: dict[tuple[int, int, str], list[tuple[int, int]]] = defaultdict(list)
    for u, v in graph.hb.edges():
        kind = "after" if edges[u].name in after_of[v] else "stream"
        pairs[(where[u], where[v], kind)].append((u, v))
    arrows = []
    for (gu, gv, kind), uv in sorted(pairs.items()):
        a, b = groups[gu], groups[gv]
        rel = relation(a, b, [(indices(edges[u].name, a.family), indices(edges[v].name, b.family)) for u, v in uv])
        label = " ".join(x for x in (rel, f"×{len(uv):,}" if len(uv) > 1 else "") if x)
        if a.folded != b.folded and len(uv) <= 3:
            # between a family and one instance drawn on its own: name the family's instances
            label = ", ".join(dict.fromkeys(edges[u if a.folded else v].name for u, v in uv))
        tip = f"{a.pattern} -> {b.pattern}: {len(uv):,} {kind} ordering(s)" + (f" ({rel})" if rel else "")
        marked = focus is not None and not a.folded and not b.folded and gu != gv and \
            edges[a.members[0]].eid in focus.edges and edges[b.members[0]].eid in focus.edges
        arrows.append(Arrow(a.key, b.key, kind, label, tip, marked, len(uv)))
    drawn = len(arrows)
    if focus is not None:
        for before, after, label in focus.missing:
            arrows.append(Arrow(groups[where[before]].key, groups[where[after]].key, "missing", label,
                                f"the fix adds this ordering: {edges[after].name} after {edges[before].name}", True))
        for a_, b_ in focus.overlap:
            arrows.append(Arrow(groups[where[a_]].key, groups[where[b_]].key, "overlap", "may overlap",
                                f"no happens-before path joins {edges[a_].name} and {edges[b_].name}", True))
    notes = [f"{len(edges):,} edges as {len(groups):,} nodes and {graph.hb.number_of_edges():,} orderings as "
             f"{drawn:,} arrows (families folded; `--unfold NAME` shows one instance by instance)"]
    return Picture("hb", f"happens-before graph of {policy.name}", True, tuple(nodes), tuple(arrows),
                   tuple(clusters), tuple(notes))
