"""SVG writing primitives shared by the trace pictures (``render.swimlane``, ``render.figures``).

Takes coordinates (px), text and styles; produces SVG element text with every attribute and text
node escaped, integers only (so output is byte-for-byte repeatable), and text widths estimated
from character counts (no font metrics: the pictures name a font stack whose glyphs are at most
``CHAR_EM`` em wide on average, DejaVu Sans being the widest common one). Emits no diagnostics.
"""

from __future__ import annotations

import re
import textwrap
from xml.sax.saxutils import escape, quoteattr

#: Sans-serif text, and monospace text for addresses and step lists.
SANS = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
#: Average advance of a character, in em: DejaVu Sans is about 0.6, its monospace exactly 0.602.
CHAR_EM = 0.62

#: Colours: ink, muted ink, grid lines, and the violation red (WCAG AA contrast on white).
INK, MUTED, GRID, RED = "#1f2328", "#57606a", "#d0d7de", "#c62828"
#: Fills of bars, one per lane in turn: light enough for dark text on them.
FILLS = ("#cfe2ff", "#d3f0d9", "#ffe5b4", "#e8d9ff", "#ffd6e0", "#d6f3f7")
#: Strokes matching ``FILLS``.
STROKES = ("#3568b8", "#2f8a47", "#b7791f", "#6f42c1", "#bf3b5e", "#1f8a99")


_CODE = re.compile(r"`([^`]*)`")


def quoted(s: str) -> str:
    """Code spans of diagnostic text (`` `kv` ``) as typographic quotes (‘kv’): a picture has no
    code font, and literal backticks read as noise."""
    return _CODE.sub("\u2018\\1\u2019", s)


def text_width(text: str, size: int) -> int:
    """Estimated width in px of ``text`` at font size ``size`` px."""
    return int(len(text) * size * CHAR_EM) + 1


def wrap(text: str, width_px: int, size: int) -> list[str]:
    """``text`` broken into lines of at most ``width_px`` (estimated) at ``size`` px; long words
    (hex ranges) are broken too."""
    cols = max(8, int(width_px / (size * CHAR_EM)))
    return textwrap.wrap(text, cols, break_on_hyphens=False) or [""]


def attrs(**kw: object) -> str:
    """Attributes for an element: keyword names with ``_`` read as ``-`` (``font_size``), values
    quoted and escaped; ``None`` values are left out; ``cls`` is written ``class`` and
    ``xml_space`` ``xml:space``."""
    out = []
    for k, v in kw.items():
        if v is None:
            continue
        name = {"cls": "class", "xml_space": "xml:space"}.get(k) or k.replace("_", "-")
        out.append(f" {name}={quoteattr(str(v))}")
    return "".join(out)


def text(x: int, y: int, s: str, size: int = 12, fill: str = INK, anchor: str = "start", weight: str | None = None,
         family: str | None = None, **kw: object) -> str:
    """One ``<text>`` element (no wrapping)."""
    return (f"<text{attrs(x=x, y=y, font_size=size, fill=fill, text_anchor=anchor, font_weight=weight, font_family=family, **kw)}>"
            f"{escape(quoted(s))}</text>")


def lines(x: int, y: int, rows: list[str], size: int = 12, fill: str = INK, gap: int = 4, **kw: object) -> str:
    """Several lines of text from baseline ``y`` down, ``size + gap`` px apart."""
    return "".join(text(x, y + i * (size + gap), r, size, fill, **kw) for i, r in enumerate(rows))


def title(s: str) -> str:
    """A ``<title>`` child: the tooltip a browser shows on hover."""
    return f"<title>{escape(quoted(s))}</title>"


def rect(x: int, y: int, w: int, h: int, fill: str, stroke: str | None = None, rx: int = 0, tip: str | None = None,
         **kw: object) -> str:
    """A rectangle, with a hover tooltip when ``tip`` is given."""
    body = title(tip) if tip else ""
    tag = f"rect{attrs(x=x, y=y, width=max(w, 1), height=max(h, 1), rx=rx or None, fill=fill, stroke=stroke, **kw)}"
    return f"<{tag}>{body}</rect>" if body else f"<{tag}/>"


def line(x1: int, y1: int, x2: int, y2: int, stroke: str = GRID, width: int = 1, **kw: object) -> str:
    """A straight line."""
    return f"<line{attrs(x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, stroke_width=width, **kw)}/>"


def arrow_marker(ident: str, color: str) -> str:
    """A ``<marker>`` arrowhead definition called ``ident`` (for ``marker-end``)."""
    return (f'<marker id="{ident}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
            f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{color}"/></marker>')


def document(width: int, height: int, body: list[str], label: str, defs: list[str] = ()) -> str:
    """A whole standalone SVG document (``width`` x ``height`` px, white background) whose
    accessible name is ``label``."""
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img"{attrs(aria_label=label)} font-family="{SANS}">\n')
    parts = [head, title(label), "\n"]
    if defs:
        parts += ["<defs>", *defs, "</defs>\n"]
    parts.append(rect(0, 0, width, height, "#ffffff") + "\n")
    parts += [b + "\n" for b in body]
    parts.append("</svg>\n")
    return "".join(parts)
