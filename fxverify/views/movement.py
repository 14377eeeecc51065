"""The movement view: every edge that moves bytes as an arrow between regions, regions grouped by
address space (each space inside its device).

Takes a policy, its sources (for the families' index variables), the ``--unfold`` names and
optionally a ``Focus``; produces a ``model.Picture``. A ``move`` or ``reduce`` is an arrow from its
source region to its destination region; a ``write`` comes from the hook that drives it and a
``read`` goes to it (one node per hook, whose arrows in are its reads and whose arrows out its
writes). Region and edge families are folded (``families``): one node per region
family, one arrow per edge family and pair of nodes, labelled with the family, how many edges it
stands for, its transform chain and its handoffs. With a focus, the finding's edges and the
regions holding the witness byte are drawn on their own and marked. Edges that move no bytes
(release, alloc, flush, write-back, invalidate) are counted in a note. Emits no diagnostics.
"""

from __future__ import annotations

from collections import defaultdict

from fxverify.edits import xf_text
from fxverify.ir import EdgeAction, Policy
from fxverify.source import SourceMap
from fxverify.views.fabric import size_text
from fxverify.views.families import Group, declaration, fold
from fxverify.views.focus import Focus
from fxverify.views.model import Arrow, Cluster, Node, Picture


def _region_lines(policy: Policy, g: Group, focus: Focus | None) -> tuple[str, ...]:
    regs = [policy.regions[i] for i in g.members]
    lo, hi = min(r.base for r in regs), max(r.end for r in regs)
    if g.folded:
        sizes = {r.size for r in regs}
        each = f"{g.size:,} regions of {size_text(regs[0].size)}" if len(sizes) == 1 else f"{g.size:,} regions"
        lines = [g.pattern, *([g.ranges] if g.ranges else []), each, f"[{lo:#x}, {hi:#x})"]
    else:
        r = regs[0]
        lines = [r.name, f"[{r.base:#x}, {r.end:#x}) {size_text(r.size)}", f"owner {r.owner}"]
    if focus is not None and focus.address is not None and any(
            r.space == focus.space and r.base <= focus.address < r.end for r in regs):
        lines.append(f"witness byte {focus.address:#x}")
    return tuple(lines)


def movement_view(policy: Policy, sources: SourceMap, unfold: tuple[str, ...] = (), focus: Focus | None = None) -> Picture:
    """The movement graph of ``policy`` as a picture (see the module docstring)."""
    focus_regions = sorted(focus.regions) if focus is not None else []
    rgroups, rwhere = fold("r", [r.name for r in policy.regions], [r.family for r in policy.regions],
                           (*unfold, *focus_regions), lambda i: declaration(sources, policy.regions[i].span), "region")
    focus_edges = sorted(policy.edges[e].name for e in focus.edges) if focus is not None else []
    egroups, ewhere = fold("e", [e.name for e in policy.edges], [e.family for e in policy.edges],
                           (*unfold, *focus_edges), lambda i: declaration(sources, policy.edges[i].span), "edge")
    clusters: list[Cluster] = []
    for d in policy.devices:
        clusters.append(Cluster(f"dev_{d.name}", f"{d.name} ({d.kind.value})", "device"))
    for sp in policy.spaces:
        flags = " persistent" if sp.persistent else ""
        clusters.append(Cluster(f"sp_{sp.name}", f"space {sp.name}: {size_text(sp.size)}{flags}", "space",
                                f"dev_{sp.device}", f"{sp.name} [{sp.base:#x}, {sp.base + sp.size:#x}) on {sp.device}"))
    nodes: list[Node] = []
    for g in rgroups:
        first = policy.regions[g.members[0]]
        lines = _region_lines(policy, g, focus)
        marked = focus is not None and not g.folded and first.name in focus.regions
        nodes.append(Node(g.key, lines, "regions" if g.folded else "region", f"sp_{first.space}",
                          " \n".join(lines) + f"\nin {first.space}", marked))
    node_of = {r.name: rgroups[rwhere[i]].key for i, r in enumerate(policy.regions)}
    hooks: dict[str, Node] = {}
    folded: dict[tuple, list[int]] = defaultdict(list)
    idle = 0
    for e in policy.edges:
        src = e.src or (e.dst if e.action is EdgeAction.READ else None)
        dst = e.dst if e.action is not EdgeAction.READ else None
        if e.action in (EdgeAction.MOVE, EdgeAction.REDUCE) and src is not None and dst is not None:
            ends = (node_of[src.region], node_of[dst.region])
        elif e.action is EdgeAction.WRITE and dst is not None:
            ends = (_hook(hooks, e.device, e.hook), node_of[dst.region])
        elif e.action is EdgeAction.READ and src is not None:
            ends = (node_of[src.region], _hook(hooks, e.device, e.hook))
        else:
            idle += 1
            continue
        folded[(ewhere[e.eid], *ends, e.action.value)].append(e.eid)
    arrows = []
    for (gi, a, b, kind), eids in folded.items():
        g = egroups[gi]
        e = policy.edges[eids[0]]
        lines = [g.pattern + (f" ×{len(eids):,}" if len(eids) > 1 else "")]
        if e.transforms:
            lines.append(" |> ".join(xf_text(t) for t in e.transforms))
        lines += [f"hands to {h.dst}" if g.folded else f"hands {h.region} to {h.dst}" for h in e.handoffs[:1]]
        tip = f"{g.pattern}: {len(eids):,} {kind} edge(s)" + (f", {g.ranges}" if g.ranges else "")
        tip += f", by {e.device}.{e.hook}" + (f" on stream {e.stream}" if e.stream else "")
        marked = focus is not None and not g.folded and e.eid in focus.edges
        arrows.append(Arrow(a, b, kind, "\n".join(lines), tip, marked, len(eids)))
    nodes += hooks.values()
    notes = [f"{len(policy.edges):,} edges as {len(arrows):,} arrows, {len(policy.regions):,} regions as "
             f"{len(rgroups):,} nodes (families folded; `--unfold NAME` shows one instance by instance)"]
    if idle:
        notes.append(f"{idle:,} edges that move no bytes (release, alloc, flush, write-back, invalidate) are not drawn")
    return Picture("movement", f"movement graph of {policy.name}", True, tuple(nodes), tuple(arrows),
                   tuple(clusters), tuple(notes))


def _hook(hooks: dict[str, Node], device: str, hook: str) -> str:
    """The node of hook ``device.hook`` (made on first use), in its device's frame: the sink of its
    reads and the source of its writes, so a hook appears once however many edges it drives."""
    key = f"hook_{device}_{hook}"
    if key not in hooks:
        hooks[key] = Node(key, (f"{device}.{hook}",), "hook", f"dev_{device}",
                          f"hook {hook} of {device}: arrows in are the edges it reads, arrows out those it writes")
    return key
