"""Regenerate the README's pictures of one corpus lesson.

The lesson is corpus/incidents/fail/pd-layerwise-push-waits-for-previous-layer.fx: the push of
layer l waits for layer l-1's attention kernel instead of layer l's. This writes, into this folder:
- pd-layerwise-hb.dot: the happens-before graph, families folded, the race of layer 1 highlighted
  (what `fxverify graph LESSON --finding 'FX-ORD-002:attn[1]#0|push[1]#0' --view hb` prints);
- pd-layerwise-hb.svg: that DOT laid out by Graphviz's `dot`, with the SHA-256 of the DOT it
  came from in a comment (Graphviz's layout depends on its version and on the installed fonts, so
  the freshness test compares the DOT's bytes and this hash, not the layout's);
- pd-layerwise-trace.svg: the swimlane of that race's replayed trace (what
  `fxverify check LESSON --pictures DIR` writes for it).

Run from anywhere: `python docs/pictures/generate.py` (needs Graphviz). tests/test_pictures.py
checks that the committed files are what this script makes.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LESSON = "corpus/incidents/fail/pd-layerwise-push-waits-for-previous-layer.fx"
FINDING = "FX-ORD-002:attn[1]#0|push[1]#0"


def make(svg_layout: bool = True) -> dict[str, str]:
    """File name -> text of every picture (the graph's SVG only with ``svg_layout``), made from the
    repository root so that paths in them are repository-relative."""
    sys.path.insert(0, str(ROOT))
    from fxverify.render.dot import dot_to_svg, picture_to_dot
    from fxverify.render.swimlane import trace_to_svg
    from fxverify.views.command import GraphRequest, build_pictures

    old = os.getcwd()
    os.chdir(ROOT)
    try:
        built = build_pictures(GraphRequest(LESSON, ("hb",), (), FINDING))
    finally:
        os.chdir(old)
    assert built.exit_code == 0 and built.focus is not None, built.diagnostics
    dot = picture_to_dot(built.pictures["hb"])
    d = built.focus.diagnostic
    files = {"pd-layerwise-hb.dot": dot, "pd-layerwise-trace.svg": trace_to_svg(d.trace, d.message)}
    if svg_layout:
        files["pd-layerwise-hb.svg"] = stamp(dot_to_svg(dot), dot)
    return files


def stamp(svg: str, dot: str) -> str:
    """``svg`` with a comment naming the SHA-256 of the DOT it was laid out from, after its prolog."""
    mark = f"<!-- fxverify: laid out from pd-layerwise-hb.dot, sha256 {dot_digest(dot)} -->\n"
    at = svg.index("<svg")
    return svg[:at] + mark + svg[at:]


def dot_digest(dot: str) -> str:
    """The SHA-256 of a DOT text, in hex."""
    return hashlib.sha256(dot.encode("utf-8")).hexdigest()


def main() -> None:
    for name, text in make().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote {(HERE / name).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
