"""The pictures of the teaching page, drawn by fxverify's own renderers.

Takes a checked policy text (its path and unsaved texts, ``resolve.load_policy``) and the
``CheckResult`` the real checker gave for it; produces SVG elements for the page: the swimlane of
each finding's replayed trace (``render.swimlane``; a cycle or a missing path as its own figure)
and the graphs of the policy (``views``: the movement graph and the happens-before graph, edge
and region families folded, the first finding with a trace highlighted as ``fxverify graph
--finding`` highlights it), laid out by Graphviz (``render.dot``). Without Graphviz's ``dot``
program there are no graphs, and the reason is said instead. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics.model import Diagnostic
from fxverify.graph import PolicyGraph
from fxverify.render.dot import GraphvizMissing, dot_to_svg, picture_to_dot
from fxverify.render.html import graph_svg, inline_svg
from fxverify.render.swimlane import trace_to_svg
from fxverify.resolve import Limits, load_policy
from fxverify.result import CheckResult
from fxverify.source import SourceMap
from fxverify.views.focus import focus_of
from fxverify.views.hb import hb_view
from fxverify.views.movement import movement_view

#: The graphs the page shows, in order, with their titles.
VIEWS = {"movement": "Movement graph", "hb": "Happens-before graph"}
#: Policies with more edges than this get no graphs on the page (``fxverify graph`` draws them).
MAX_EDGES = 5000


def swimlane(d: Diagnostic, ident: str) -> str | None:
    """The SVG element of ``d``'s trace (steps and caption left out: the page shows them), its
    ids prefixed with ``ident``; ``None`` without a trace."""
    if d.trace is None:
        return None
    return inline_svg(trace_to_svg(d.trace, d.message, steps=False, caption=False), ident)


def graphs(path: str, texts: dict[str, str], result: CheckResult, limits: Limits = Limits()) -> tuple[dict[str, str], str]:
    """``(svgs, note)``: the SVG element of each of ``VIEWS`` (by view name) for the policy at
    ``path`` read with ``texts``, and a note for the page (what is highlighted, or why there are
    no graphs)."""
    sources = SourceMap()
    policy, _ = load_policy(path, sources, limits=limits, texts=texts)
    if policy is None:
        return {}, "no graph: the policy does not load (see its diagnostics)"
    if len(policy.edges) > MAX_EDGES:
        return {}, f"no graph here: {len(policy.edges):,} edges; `fxverify graph` draws it"
    pg = PolicyGraph(policy)
    refs = {x.key: x for x in result.refutations}
    found = next((d for d in result.diagnostics if d.obligation in refs and d.trace is not None), None)
    focus = focus_of(policy, pg, refs[found.obligation], found) if found is not None else None
    pictures = {"movement": movement_view(policy, sources, (), focus), "hb": hb_view(policy, pg, sources, (), focus)}
    try:
        svgs = {v: graph_svg(dot_to_svg(picture_to_dot(pictures[v])), f"graph-{v}") for v in VIEWS}
    except GraphvizMissing:
        return {}, "no graph: Graphviz's `dot` program is not installed (Debian: `apt-get install graphviz`)"
    note = f"highlighted: {found.code} {found.message}" if found is not None else "families folded; nothing refuted"
    return svgs, note
