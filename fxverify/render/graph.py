"""The text ``fxverify graph`` writes: DOT, SVG or one HTML page.

Takes a ``views.command.GraphBuild`` and a format; produces DOT of its one view
(``render.dot.picture_to_dot``), SVG of it laid out by Graphviz (``render.dot.dot_to_svg``), or the
HTML page of every view with the highlighted finding first (``render.html.graph_page``). Raises
``render.dot.GraphvizMissing`` for SVG and HTML when Graphviz's ``dot`` is not installed; emits no
diagnostics.
"""

from __future__ import annotations

from fxverify.render.dot import dot_to_svg, picture_to_dot
from fxverify.render.html import finding_fragment, graph_page
from fxverify.views.command import GraphBuild


def draw_graph(built: GraphBuild, fmt: str) -> str:
    """``built``'s pictures as ``fmt`` (``dot``, ``svg``: its first view; ``html``: all of them)."""
    dots = {v: picture_to_dot(p) for v, p in built.pictures.items()}
    if fmt == "dot":
        return next(iter(dots.values()))
    svgs = {v: dot_to_svg(d) for v, d in dots.items()}
    if fmt == "svg":
        return next(iter(svgs.values()))
    focus = built.focus
    fragment = finding_fragment(focus.diagnostic, built.sources, "finding") if focus is not None else ""
    return graph_page(f"fxverify graph: {built.name}", svgs, fragment)
