"""Graphviz rendering of policy pictures: DOT text, and SVG laid out by Graphviz's ``dot``.

Takes a ``views.model.Picture``; produces DOT text (``picture_to_dot``, built with the
``graphviz`` package, which quotes every name) and SVG text (``dot_to_svg``, by piping DOT through
the ``dot`` program). Kinds map to one look each: devices coloured by device kind; regions and
edges as boxes, a folded family with a double outline; hooks as ellipses; links by ordering
(``ordered`` solid, ``unordered`` dashed, ``posted`` dotted); movements by action; ``after``
orderings solid and stream order dashed; what a finding involves in red (its own orderings keep
their style), what it lacks (a missing ordering or path, two edges that may overlap) as red dotted
lines that do not move the layout. The
caption holds the title, the notes and a legend of the kinds the picture uses. Output is
deterministic (for one Graphviz version).
Raises ``GraphvizMissing`` when the ``dot`` program cannot be found; emits no diagnostics.
"""

from __future__ import annotations

import math
from html import escape

import graphviz

from fxverify.errors import FxError
from fxverify.render.svgtext import quoted
from fxverify.views.model import Arrow, Cluster, Node, Picture

RED = "#c62828"
#: Layout font: DejaVu Sans is on every system with fontconfig (Debian's fontconfig-config needs it)
#: and wider than the fonts a viewer falls back to, so labels fit wherever the SVG is shown.
_FONT = "DejaVu Sans"
_DEVICE_FILL = {"gpu": "#d3f0d9", "dpu": "#ffe5b4", "nic": "#ffe5b4", "cpu": "#cfe2ff", "cxl_mem": "#e8d9ff",
                "cxl_switch": "#e8d9ff"}
_EDGE_FILL = {"write": "#cfe2ff", "read": "#d3f0d9", "move": "#ffffff", "reduce": "#e8d9ff", "release": "#ffd6e0",
              "alloc": "#ffe5b4", "flush": "#f6f8fa"}
#: Per arrow kind: colour, style, and the legend's words.
_ARROW = {
    "ordered": ("#1f2328", "solid", "ordered link: completions in submission order"),
    "unordered": ("#b7791f", "dashed", "unordered link: no order between transfers"),
    "posted": ("#6f42c1", "dotted", "posted link: a write is visible only after a flush"),
    "move": ("#1f2328", "solid", "move: source region to destination region"),
    "write": ("#3568b8", "solid", "write: from the hook that drives it"),
    "read": ("#2f8a47", "dashed", "read: to the hook that drives it"),
    "reduce": ("#6f42c1", "bold", "reduce: accumulated into the destination"),
    "after": ("#1f2328", "solid", "after: the first finishes before the second starts"),
    "stream": ("#57606a", "dashed", "stream order: one at a time on a stream"),
    "missing": (RED, "dotted", "missing: what the finding lacks (the fix adds it)"),
    "overlap": (RED, "dotted", "may overlap in time: no happens-before path joins them"),
}


class GraphvizMissing(FxError):
    """Graphviz's ``dot`` program is not installed (or not on ``PATH``)."""


def _html(lines: tuple[str, ...] | list[str], first_bold: bool = True, size: int = 10, color: str = "#57606a",
          first_color: str = "#1f2328") -> str:
    out = []
    for i, ln in enumerate(lines):
        if i == 0 and first_bold:
            out.append(f'<FONT COLOR="{first_color}"><B>{escape(quoted(ln))}</B></FONT>')
        else:
            out.append(f'<FONT POINT-SIZE="{size}" COLOR="{color}">{escape(quoted(ln))}</FONT>')
    return "<" + "<BR/>".join(out) + ">"


def _node_attrs(n: Node) -> dict[str, str]:
    a = {"label": _html(n.lines, first_color=RED if n.focus else "#1f2328"), "tooltip": n.tip or n.lines[0],
         "shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff", "color": "#57606a"}
    if n.kind == "device":
        a["fillcolor"] = _DEVICE_FILL.get(n.tag, "#f6f8fa")
    elif n.kind in ("edge", "edges"):
        a["fillcolor"] = _EDGE_FILL.get(n.tag, "#ffffff")
    elif n.kind == "hook":
        a.update(shape="ellipse", style="filled", fillcolor="#fff8c5")
    if n.kind in ("regions", "edges"):
        a["peripheries"] = "2"
    if n.focus:
        a.update(color=RED, penwidth="3")
    return a


def _arrow_attrs(x: Arrow, directed: bool) -> dict[str, str]:
    color, style, _ = _ARROW.get(x.kind, ("#1f2328", "solid", ""))
    a = {"color": color, "style": style, "tooltip": x.tip or x.label or x.kind,
         "penwidth": f"{1 + min(2.0, math.log10(x.count) / 2):.1f}"}
    if x.label:
        a["label"] = _html(x.label.split("\n"), first_bold=False, size=9, color="#1f2328")
    if x.kind == "posted":
        a["penwidth"] = "2"
    if x.focus:
        a.update(color=RED, penwidth="3", fontcolor=RED)
    if x.kind in ("missing", "overlap"):
        a["constraint"] = "false"
        if directed and x.kind == "overlap":
            a["dir"] = "none"
    return a


def _caption(p: Picture) -> str:
    """The picture's label: its title, its notes, and a legend of the kinds it uses."""
    rows = [f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="14"><B>{escape(p.title)}</B></FONT></TD></TR>']
    rows += [f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="10" COLOR="#57606a">{escape(quoted(n))}</FONT></TD></TR>'
             for n in p.notes]
    marks = {"solid": "——", "dashed": "- - -", "dotted": "· · ·", "bold": "━━"}
    for k in (k for k in _ARROW if any(x.kind == k for x in p.arrows)):
        color, style, words = _ARROW[k]
        rows.append(f'<TR><TD ALIGN="LEFT"><FONT COLOR="{color}"><B>{escape(marks[style])}</B></FONT> '
                    f'<FONT POINT-SIZE="10">{escape(words)}</FONT></TD></TR>')
    if any(n.kind in ("regions", "edges") for n in p.nodes):
        rows.append('<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="10">double outline: a folded family, with its index '
                    "ranges; ×N on an arrow: the instances it stands for</FONT></TD></TR>")
    if any(n.focus for n in p.nodes) or any(x.focus for x in p.arrows):
        rows.append(f'<TR><TD ALIGN="LEFT"><FONT COLOR="{RED}" POINT-SIZE="10">red: what the finding involves'
                    "</FONT></TD></TR>")
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="1" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


def picture_to_dot(p: Picture) -> str:
    """The DOT text of a picture (a ``digraph`` or, for the fabric, a ``graph``)."""
    g = graphviz.Digraph(p.view) if p.directed else graphviz.Graph(p.view)
    g.attr(label=_caption(p), labelloc="t", labeljust="l", fontname=_FONT, fontsize="14",
           rankdir="TB" if p.view == "hb" else "LR", nodesep="0.35", ranksep="0.6", pad="0.3")
    g.attr("node", fontname=_FONT, fontsize="12", margin="0.2,0.08")
    g.attr("edge", fontname=_FONT, fontsize="9", arrowsize="0.7")
    children: dict[str | None, list[Cluster]] = {}
    for c in p.clusters:
        children.setdefault(c.parent, []).append(c)
    members: dict[str | None, list[Node]] = {}
    for n in p.nodes:
        members.setdefault(n.cluster, []).append(n)

    def fill(sub: graphviz.Graph, parent: str | None) -> None:
        for n in members.get(parent, []):
            sub.node(n.ident, **_node_attrs(n))
        for c in children.get(parent, []):
            if not _used(c.ident, children, members):
                continue
            with sub.subgraph(name=f"cluster_{c.ident}") as s:
                style = "rounded,filled" if c.kind == "device" else "rounded,dashed"
                s.attr(label=c.label, tooltip=c.tip or c.label, style=style, color="#8c959f",
                       fillcolor="#fbfbfc", fontname=_FONT, fontsize="12", labeljust="l")
                fill(s, c.ident)

    fill(g, None)
    for x in p.arrows:
        g.edge(x.src, x.dst, **_arrow_attrs(x, p.directed))
    return g.source


def _used(ident: str, children: dict[str | None, list[Cluster]], members: dict[str | None, list[Node]]) -> bool:
    """True when a cluster holds a node, itself or in a cluster inside it (dot drops empty ones
    anyway; leaving them out keeps the DOT short)."""
    return bool(members.get(ident)) or any(_used(c.ident, children, members) for c in children.get(ident, []))


def dot_to_svg(dot: str) -> str:
    """Lay ``dot`` out with Graphviz's ``dot`` program and return the SVG text. Raises
    ``GraphvizMissing`` when the program is not installed; any other failure is a bug (the DOT is
    ours) and propagates."""
    try:
        return graphviz.pipe("dot", "svg", dot.encode("utf-8"), quiet=True).decode("utf-8")
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizMissing(str(exc)) from exc
