"""Pictures: swimlane SVGs of traces, the HTML report, trace pictures linked from Markdown and
SARIF, ``fxverify graph`` (DOT structure, folding, highlighting a finding, SVG through Graphviz,
bad input) and the freshness of the README's pictures."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.diagnostics.model import Diagnostic
from fxverify.pipeline import check
from fxverify.render.dot import picture_to_dot
from fxverify.render.swimlane import lanes_of, trace_to_svg
from fxverify.views.command import GraphRequest, build_pictures
from fxverify.views.families import declared_vars, describe, fold, relation

from tests.conftest import ROOT

RACE = "corpus/ordering/fail/kv-offload-unordered.fx"
CYCLE = "corpus/ordering/fail/hb-cycle.fx"
NO_PATH = "corpus/hooks/fail/no-path-to-expander.fx"
HANDOFF = "corpus/ownership/fail/double-handoff.fx"
STATIC = "corpus/alias/fail/strided-overlap.fx"
LAYERWISE = "corpus/incidents/fail/pd-layerwise-push-waits-for-previous-layer.fx"
SVG = "{http://www.w3.org/2000/svg}"
DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz's `dot` program is not installed")
# Anything a browser would fetch: a URL with a scheme, a protocol-relative one, or CSS url()/@import.
EXTERNAL = re.compile(r"[a-z][a-z0-9+.-]*://|\s(?:src|href)=\"//|url\((?!#)|@import", re.I)


@cache
def finding(path: str) -> Diagnostic:
    """The first finding with a trace of a corpus policy (checked once per session)."""
    return next(d for d in check(str(ROOT / path)).diagnostics if d.trace is not None)


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def titles(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}title")]


# -- swimlanes ---------------------------------------------------------------------------------
def test_race_swimlane_has_a_lane_per_stream_and_overlapping_bars() -> None:
    d = finding(RACE)
    assert lanes_of(d.trace) == [("gpu0", "compute"), ("gpu0", "copy")]  # two streams of one GPU: two lanes
    svg = trace_to_svg(d.trace, d.message)
    assert svg == trace_to_svg(d.trace, d.message)  # deterministic
    root = ET.fromstring(svg)
    words = texts(svg)
    assert words.count("gpu0") == 2 and "stream compute" in words and "stream copy" in words
    bars = {}
    for r in root.iter(f"{SVG}rect"):
        tip = r.find(f"{SVG}title")
        if tip is not None and " on gpu0" in (tip.text or ""):
            bars[tip.text.split(" on ")[0]] = (int(r.get("x")), int(r.get("x")) + int(r.get("width")), int(r.get("y")), tip.text)
    (a0, a1, ay, _), (o0, o1, oy, otip) = bars["attn"], bars["offload"]
    assert a0 < o1 and o0 < a1 and ay != oy  # the intervals overlap in time, on different lanes
    assert "[0x20000000, 0x20200000)" in otip and "[0, 1) ns" in otip  # byte ranges and times on hover
    violating = [g for g in root.iter(f"{SVG}g") if g.get("data-step") and any(
        c.get("fill") == "#c62828" for c in g.iter(f"{SVG}circle"))]
    assert [g.get("data-step") for g in violating] == ["2"] and ">> step 2: the rule breaks" in words
    assert not any("`" in w for w in words)  # code spans become quotes


def test_handoff_swimlane_has_a_lane_for_the_new_owner() -> None:
    d = finding(HANDOFF)
    svg = trace_to_svg(d.trace, d.message)
    assert [ln[0] for ln in lanes_of(d.trace)] == ["gpu0", "nic0", "dpu0"]
    assert "hands to nic0" in texts(svg) and "hands to dpu0" in texts(svg)


def test_cycle_and_missing_path_are_figures_not_notes() -> None:
    cyc = finding(CYCLE)
    svg = trace_to_svg(cyc.trace, cyc.message)
    words = texts(svg)
    assert {"spill", "verify", "must finish"} <= set(words) and "time (ns)" not in words
    assert sum(p.get("stroke") == "#c62828" for p in ET.fromstring(svg).iter(f"{SVG}path")) == 1  # the closing arrow
    gap = finding(NO_PATH)
    words = texts(trace_to_svg(gap.trace, gap.message))
    assert {"reachable from gpu1", "cxl0", "unreachable", ">> no fabric path"} <= set(words)


def test_static_facts_are_a_board() -> None:
    d = finding(STATIC)
    svg = trace_to_svg(d.trace, d.message, steps=False)
    words = texts(svg)
    assert "facts that hold in every schedule, in step order (no time axis)" in words and "steps" not in words


# -- the HTML report, and pictures linked from Markdown and SARIF -------------------------------
def test_html_report_is_self_contained(tmp_path: Path, at_root) -> None:
    out = tmp_path / "report.html"
    r = CliRunner().invoke(app, ["check", RACE, CYCLE, NO_PATH, "--format", "html", "-o", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 1
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and EXTERNAL.search(page) is None
    assert "<script src" not in page and "<link" not in page and "<img" not in page
    sections = re.findall(r'<section class="finding error" id="finding-(\d)">', page)
    assert sections == ["1", "2", "3"] and page.count("<svg") == 3 and page.count('<table class="trace">') == 3
    assert "19 |   edge offload: move kv_blk -&gt; kv_host" in page  # the source line, underlined below
    assert '<span class="status verified"' in page  # the verified hint
    assert '<tr class="violation" data-step="2">' in page
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and 'marker-end="url(#finding-3-red)"' in page  # unique marker ids


def test_pictures_are_linked_from_markdown_and_sarif(tmp_path: Path, at_root) -> None:
    import jsonschema

    pics = tmp_path / "pics"
    md = tmp_path / "out" / "report.md"
    md.parent.mkdir()
    runner = CliRunner()
    r = runner.invoke(app, ["check", RACE, CYCLE, "--format", "markdown", "-o", str(md), "--pictures", str(pics)],
                      catch_exceptions=False)
    assert r.exit_code == 1
    assert sorted(p.name for p in pics.iterdir()) == ["finding-1-FX-ORD-002.svg", "finding-2-FX-ORD-001.svg", "index.json"]
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md.read_text())
    assert links == ["../pics/finding-1-FX-ORD-002.svg", "../pics/finding-2-FX-ORD-001.svg"]
    for link in links:
        ET.fromstring((md.parent / link).read_text())
    sarif = tmp_path / "report.sarif"
    r = runner.invoke(app, ["check", RACE, "--format", "sarif", "-o", str(sarif), "--pictures", str(pics)],
                      catch_exceptions=False)
    log = json.loads(sarif.read_text())
    jsonschema.validate(log, json.loads((ROOT / "corpus/inputs/schemas/sarif-schema-2.1.0.json").read_text()))
    (res,) = log["runs"][0]["results"]
    assert res["attachments"][0]["artifactLocation"]["uri"].endswith("pics/finding-1-FX-ORD-002.svg")
    assert sorted(p.name for p in pics.iterdir()) == ["finding-1-FX-ORD-002.svg", "index.json"]  # replaced whole
    (pics / "notes.txt").write_text("mine")
    r = runner.invoke(app, ["check", RACE, "--format", "sarif", "-o", str(sarif), "--pictures", str(pics)])
    assert r.exit_code == 2 and (pics / "notes.txt").exists()


# -- fxverify graph ----------------------------------------------------------------------------
def test_families_fold_with_their_index_ranges() -> None:
    assert declared_vars("edge kvw[l, 0, b]: write kvb0[l, b]", "edge", "kvw") == ("l", None, "b")
    assert declared_vars("region kvb0[l in 0..32, b in 0..512] in hbm0", "region", "kvb0") == ("l", "b")
    idx = [(l, 0, b) for l in range(32) for b in range(512)]
    assert describe("kvw", idx, ("l", None, "b"))[:2] == ("kvw[l, 0, b]", "l in 0..32, b in 0..512")
    assert describe("ckpt", [(0,), (1,), (3,)], None)[:2] == ("ckpt[i]", "i in {0, 1, 3}")
    names = ["a[0]", "a[1]", "a[2]", "b"]
    groups, where = fold("e", names, ["a", "a", "a", "b"], ("a[1]",), lambda i: "edge a[l]: x", "edge")
    assert [(g.pattern, g.ranges, g.members) for g in groups] == [("a[l]", "l in {0, 2}", (0, 2)), ("a[1]", "", (1,)),
                                                                  ("b", "", (3,))]
    assert where == [0, 1, 0, 2]
    pairs = [((0,), (1,)), ((1,), (2,))]
    for decl, rel in (("edge x[l]: edge y[l]:", "l+1"), ("edge x[l]: edge y[k]:", "")):
        a, b = fold("e", ["x[0]", "x[1]", "y[1]", "y[2]"], ["x", "x", "y", "y"], (), lambda i: decl, "edge")[0][:2]
        assert relation(a, b, pairs) == rel  # in the variables both families declare
    assert relation(a, a, [((0,), (0,)), ((1,), (1,))]) == "same k" if a.dims == ("k",) else True


def test_hb_view_folds_families_into_lanes() -> None:
    built = build_pictures(GraphRequest(str(ROOT / LAYERWISE), ("hb",)))
    pic = built.pictures["hb"]
    nodes = {n.lines[0]: n for n in pic.nodes}
    assert set(nodes) == {"attn[l]", "push[l]"} and nodes["attn[l]"].lines[1] == "l in 0..4"
    assert (nodes["attn[l]"].cluster, nodes["push[l]"].cluster) == ("lane_gpu0_compute", "lane_gpu0_copy")
    labels = {(x.src, x.dst, x.kind): x.label for x in pic.arrows}
    attn, push = nodes["attn[l]"].ident, nodes["push[l]"].ident
    assert labels == {(attn, attn, "stream"): "l+1 ×3", (push, push, "stream"): "l+1 ×3", (attn, push, "after"): "l+1 ×3"}
    dot = picture_to_dot(pic)
    assert dot.startswith("digraph hb {") and "subgraph cluster_dev_gpu0 {" in dot
    assert "subgraph cluster_lane_gpu0_copy {" in dot and "peripheries=2" in dot
    unfolded = build_pictures(GraphRequest(str(ROOT / LAYERWISE), ("hb",), ("attn",))).pictures["hb"]
    assert sorted(n.lines[0] for n in unfolded.nodes) == ["attn[0]", "attn[1]", "attn[2]", "attn[3]", "push[l]"]


def test_finding_highlights_edges_bytes_and_the_missing_ordering() -> None:
    built = build_pictures(GraphRequest(str(ROOT / RACE), finding="FX-ORD-002"))
    hb, mv, fab = (built.pictures[v] for v in ("hb", "movement", "fabric"))
    assert {n.lines[0] for n in hb.nodes if n.focus} == {"attn", "offload"}
    (missing,) = [x for x in hb.arrows if x.kind == "missing"]
    ident = {n.lines[0]: n.ident for n in hb.nodes}
    assert (missing.src, missing.dst, missing.label, missing.focus) == (ident["attn"], ident["offload"],
                                                                        "missing: after attn", True)
    assert 'label=<<FONT POINT-SIZE="9" COLOR="#1f2328">missing: after attn</FONT>>' in picture_to_dot(hb)
    (blk,) = [n for n in mv.nodes if n.focus]
    assert blk.lines[0] == "kv_blk" and blk.lines[-1] == "witness byte 0x20000000"  # the bytes
    assert {x.label for x in mv.arrows if x.focus} == {"attn", "offload"}
    assert all(n.focus for n in fab.nodes) and all(x.focus for x in fab.arrows)  # gpu0 and cpu0, over their link


def test_missing_path_and_cycle_findings() -> None:
    fab = build_pictures(GraphRequest(str(ROOT / NO_PATH), ("fabric",), finding="FX-HOOK-001")).pictures["fabric"]
    assert [(x.src, x.dst, x.label) for x in fab.arrows if x.kind == "missing"] == [("d_gpu1", "d_cxl0", "no fabric path")]
    assert {n.ident for n in fab.nodes if n.focus} == {"d_gpu1", "d_cxl0"}
    hb = build_pictures(GraphRequest(str(ROOT / CYCLE), ("hb",), finding="FX-ORD-001:spill")).pictures["hb"]
    assert len([x for x in hb.arrows if x.focus and x.kind == "after"]) == 2  # both arrows of the cycle


@needs_dot
def test_graph_svg_and_html(tmp_path: Path, at_root) -> None:
    runner = CliRunner()
    svg = tmp_path / "hb.svg"
    r = runner.invoke(app, ["graph", LAYERWISE, "--view", "hb", "-o", str(svg)], catch_exceptions=False)
    assert r.exit_code == 0
    root = ET.fromstring(svg.read_text())  # dot's SVG is well-formed XML
    assert root.tag == f"{SVG}svg" and any("push[l]" in t for t in texts(svg.read_text()))
    page = tmp_path / "p.html"
    r = runner.invoke(app, ["graph", RACE, "--finding", "FX-ORD-002", "-o", str(page)], catch_exceptions=False)
    assert r.exit_code == 0
    html = page.read_text()
    assert EXTERNAL.search(html) is None and html.count("<svg") == 4  # three views and the trace
    assert html.index('id="finding"') < html.index('id="view-fabric"') < html.index('id="view-hb"')
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    r = runner.invoke(app, ["graph", RACE], catch_exceptions=False)
    assert r.exit_code == 0 and r.stdout.startswith("digraph movement {")  # DOT of the movement graph by default


@pytest.mark.parametrize("args, code", [
    (["--finding", "FX-ORD-003"], "FX-USE-005"),
    (["--finding", "FX-ORD-002:attn#0|nothing#0"], "FX-USE-005"),
    (["--unfold", "atn"], "FX-USE-005"),
    (["--view", "all", "--format", "svg"], "FX-USE-002"),
])
def test_graph_bad_input_is_a_diagnostic(args: list[str], code: str, tmp_path: Path) -> None:
    out = tmp_path / "out.svg"
    r = subprocess.run([sys.executable, "-m", "fxverify", "graph", RACE, *args, "-o", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and f"error[{code}]" in r.stderr and "Traceback" not in r.stderr + r.stdout, r.stderr
    assert not out.exists()


def test_graph_to_a_file_of_another_format_writes_nothing(tmp_path: Path) -> None:
    """``-o x.png`` names no format fxverify writes: a usage error that shows the Graphviz
    command for a PNG, instead of DOT text in a file named .png."""
    out = tmp_path / "x.png"
    r = subprocess.run([sys.executable, "-m", "fxverify", "graph", RACE, "-o", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "error[FX-USE-002]" in r.stderr and "dot -Tpng" in r.stderr, r.stderr
    assert not out.exists()
    r = subprocess.run([sys.executable, "-m", "fxverify", "graph", RACE, "-f", "dot", "-o", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and out.read_text().startswith("digraph movement {")  # asked for by name


def test_graph_of_an_unparseable_policy(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fx"
    bad.write_text('policy "x"\nfabric {\n')
    out = tmp_path / "out.dot"
    r = subprocess.run([sys.executable, "-m", "fxverify", "graph", str(bad), "-o", str(out)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and "error[FX-SYN-" in r.stderr and "bad.fx:2:9" in r.stderr and not out.exists()


@pytest.mark.slow
@needs_dot
def test_real_8b_policy_graph_is_folded_and_readable() -> None:
    """The 37,222-edge policy: every view folds to a few dozen nodes, and Graphviz lays it out."""
    from fxverify.render.dot import dot_to_svg

    built = build_pictures(GraphRequest(str(ROOT / "corpus/real/llama-3.1-8b-prefill.fx")))
    sizes = {v: (len(p.nodes), len(p.arrows)) for v, p in built.pictures.items()}
    assert all(n <= 40 and a <= 60 for n, a in sizes.values()), sizes
    for p in built.pictures.values():
        ET.fromstring(dot_to_svg(picture_to_dot(p)))


# -- README pictures ---------------------------------------------------------------------------
def _generator():
    spec = importlib.util.spec_from_file_location("generate_pictures", ROOT / "docs/pictures/generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_pictures_are_fresh() -> None:
    """The committed DOT and swimlane are byte for byte what the script makes; the committed
    layout names the SHA-256 of that DOT (the layout itself depends on Graphviz and the fonts)."""
    gen = _generator()
    made = gen.make(svg_layout=False)
    here = ROOT / "docs/pictures"
    for name, text in made.items():
        assert (here / name).read_text() == text, f"{name} is stale: run python docs/pictures/generate.py"
    layout = (here / "pd-layerwise-hb.svg").read_text()
    assert f"sha256 {hashlib.sha256(made['pd-layerwise-hb.dot'].encode()).hexdigest()}" in layout
    ET.fromstring(layout[layout.index("<svg"):])
    readme = (ROOT / "README.md").read_text()
    assert "docs/pictures/pd-layerwise-hb.svg" in readme and "docs/pictures/pd-layerwise-trace.svg" in readme


def test_movement_draws_each_hook_once(tmp_path: Path) -> None:
    """A hook that reads one region and writes another is one node, its read pointing into it and
    its write out of it (drawn twice, one hook read as two)."""
    pol = tmp_path / "p.fx"
    pol.write_text('policy "p"\nfabric {\n  device gpu0: gpu hooks [launch]\n}\nspace hbm0 on gpu0 size 1 GiB\n'
                   'region a in hbm0 at 0 size 1 MiB owner gpu0 init\nregion b in hbm0 at 1 MiB size 1 MiB owner gpu0\n'
                   'flow f {\n  edge r: read a by gpu0.launch\n  edge w: write b by gpu0.launch after r\n}\n')
    mv = build_pictures(GraphRequest(str(pol), ("movement",))).pictures["movement"]
    (hook,) = [n for n in mv.nodes if n.kind == "hook"]
    assert hook.lines == ("gpu0.launch",)
    assert sorted((x.kind, x.src == hook.ident, x.dst == hook.ident) for x in mv.arrows) == [
        ("read", False, True), ("write", True, False)]
