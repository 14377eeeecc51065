"""HTML rendering (``fxverify check --format html``, and the page of ``fxverify graph``).

Takes a ``gate.Report`` (or, for ``graph_page``, pictures Graphviz laid out); produces one
self-contained HTML5 page: inline CSS, inline SVG and a few lines of inline script, and no URL of
any kind, so it opens from disk, as a CI artifact or an e-mail attachment, with no network access.
For every finding: its code and message, ``file:line:col``, the source line with the span
underlined, related spans and notes, the trace's swimlane picture (``render.swimlane``), the steps
as a table (hovering a row lights its badge in the picture and the other way round; the violating
step is marked), the witness, the rule (``why``) and the hint with its verification status.
Pieces are importable (``finding_fragment``, ``trace_table``, ``page``) for other front ends.
Renderers only format; output is deterministic. Emits no diagnostics.
"""

from __future__ import annotations

import re
from html import escape

from fxverify import __version__
from fxverify.diagnostics.model import Diagnostic, counted
from fxverify.gate.report import Report
from fxverify.render.figures import step_rows
from fxverify.render.swimlane import trace_to_svg
from fxverify.render.text import location, snippet
from fxverify.source import SourceMap

_CSS = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --red: #c62828; --green: #1a7f37; --bg: #f6f8fa; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0 auto; padding: 1.5rem; max-width: 80rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
h3 { font-size: 1.05rem; margin: 0 0 .4rem; }
code, pre, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .85rem; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--bg); } td.num { text-align: right; }
.finding { border: 1px solid var(--line); border-left: 6px solid var(--red); border-radius: 6px; padding: 1rem;
           margin: 1.2rem 0; }
.finding.warning { border-left-color: #b7791f; } .finding.note, .finding.suppressed { border-left-color: var(--muted); }
.code { font-weight: 700; color: var(--red); } .where { color: var(--muted); margin: .2rem 0 .6rem; }
figure { margin: .8rem 0; overflow-x: auto; } figure svg { display: block; max-width: none; }
table.trace td { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .8rem; }
table.trace tr.violation td { color: var(--red); font-weight: 700; }
table.trace tr.lit td, g.step.lit circle { background: #fff3b0; stroke-width: 3; }
.why { margin: .3rem 0; } .help { margin: .3rem 0; }
.status { font-size: .8rem; border-radius: 1rem; padding: .05rem .5rem; margin-left: .3rem; color: #fff;
          background: var(--muted); } .status.verified { background: var(--green); }
nav ol { columns: 2; } .muted { color: var(--muted); }
"""

# Hovering a table row lights the badge of the same step, and the other way round.
_JS = """
document.querySelectorAll('.finding').forEach(function (f) {
  function light(step, on) {
    f.querySelectorAll('[data-step="' + step + '"]').forEach(function (e) { e.classList.toggle('lit', on); });
  }
  f.querySelectorAll('[data-step]').forEach(function (e) {
    e.addEventListener('mouseenter', function () { light(e.dataset.step, true); });
    e.addEventListener('mouseleave', function () { light(e.dataset.step, false); });
  });
});
"""

_XMLNS = re.compile(r' xmlns="http://www\.w3\.org/2000/svg"')


def inline_svg(svg: str, ident: str = "") -> str:
    """An SVG document as an element of an HTML5 page: without its namespace declaration (HTML
    parsers put ``<svg>`` in the SVG namespace themselves), so the page holds no URL at all; with
    ``ident``, the ``fx-`` ids of its markers renamed ``ident-`` so that ids stay unique when a
    page holds several pictures."""
    svg = _XMLNS.sub("", svg, count=1)
    if ident:
        svg = svg.replace('id="fx-', f'id="{ident}-').replace("url(#fx-", f"url(#{ident}-")
    return svg


def page(heading: str, body: str, script: bool = True) -> str:
    """A whole self-contained HTML5 page around ``body`` (HTML), titled ``heading`` (text)."""
    js = f"<script>{_JS}</script>\n" if script else ""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="fxverify {escape(__version__)}">\n'
            f"<title>{escape(heading)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"{body}\n{js}</body>\n</html>\n")


def _status(d: Diagnostic) -> str:
    return "suppressed" if d.suppressed_reason is not None else d.severity.value


def _help(text: str) -> str:
    """The hint, with its verification status (``(verified: ...)``) as a badge; a finding with no
    verified fix says so in words (``no verified fix found: ...``), without a badge."""
    m = re.fullmatch(r"(.*?) \(((?:not )?verified): (.*)\)", text, re.S)
    if m is None:
        return f'<p class="help"><b>help:</b> {_inline(text)}</p>'
    kind = "verified" if m[2] == "verified" else "unverified"
    return (f'<p class="help"><b>help:</b> {_inline(m[1])}'
            f'<span class="status {kind}" title="{escape(m[3])}">{escape(m[2])}</span></p>')


def _inline(text: str) -> str:
    """Diagnostic text as HTML: code spans (`` `kv` ``) become ``<code>``."""
    parts = re.split(r"`([^`]*)`", text)
    return "".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts))


def trace_table(d: Diagnostic) -> str:
    """The steps of ``d``'s trace as an HTML table (``>>`` rows marked ``violation``)."""
    rows = ['<table class="trace"><thead><tr><th></th><th>step</th><th>t (ns)</th><th>device.hook / stream</th>'
            "<th>edge</th><th>event</th><th>what</th></tr></thead><tbody>"]
    for r in step_rows(d.trace):
        cls = ' class="violation"' if r[0] else ""
        rows.append(f'<tr{cls} data-step="{escape(r[1])}">' + "".join(
            f'<td class="num">{escape(c)}</td>' if i in (1, 2) else f"<td>{_inline(c) if i == 6 else escape(c)}</td>"
            for i, c in enumerate(r)) + "</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def finding_fragment(d: Diagnostic, sources: SourceMap, anchor: str = "") -> str:
    """One finding as an HTML ``<section>``: heading, location, underlined source, related spans,
    notes, the trace picture and table, witness, why and help. ``anchor`` is its ``id``."""
    ident = f' id="{escape(anchor)}"' if anchor else ""
    out = [f'<section class="finding {_status(d)}"{ident}>',
           f'<h3><span class="code">{escape(d.code)}</span> {_inline(d.message)}</h3>']
    where = location(sources, d.primary.span) if d.primary is not None else ""
    out.append(f'<p class="where">{_status(d)} · {escape(d.code.title)}'
               + (f" · <code>{escape(where)}</code>" if where else "") + "</p>")
    if d.primary is not None:
        src = snippet(sources, d.primary.span, d.primary.message)
        if src:
            out.append(f"<pre>{escape(src)}</pre>")
    for rel in d.related:
        out.append(f'<p class="muted">related: {_inline(rel.message)} at <code>{escape(location(sources, rel.span))}</code></p>')
    for n in d.notes:
        out.append(f'<p class="muted">note: {_inline(n)}</p>')
    if d.suppressed_reason is not None:
        out.append(f'<p class="muted">suppressed: {escape(d.suppressed_reason)}</p>')
    if d.trace is not None:
        svg = trace_to_svg(d.trace, d.message, steps=False, caption=False)
        out.append(f"<figure>{inline_svg(svg, anchor or 'fx')}</figure>")
        out.append(trace_table(d))
        if d.trace.facts:
            out.append('<p class="muted"><b>witness:</b> ' + ", ".join(
                f"{escape(k)} = <code>{escape(v)}</code>" for k, v in d.trace.facts) + "</p>")
        if d.trace.why:
            out.append(f'<p class="why"><b>why:</b> {_inline(d.trace.why)}</p>')
    if d.help:
        out.append(_help(d.help))
    out.append("</section>")
    return "\n".join(out)


def report_to_html(report: Report) -> str:
    """Render a ``gate.Report`` as one self-contained HTML page: the outcome, the rules not
    checked (``--select``/``--ignore``), the summary table,
    an index of findings, then every finding (``finding_fragment``); findings a baseline accepted
    are left out (they are counted)."""
    t = report.totals()
    outcome = {0: "passed", 1: "failed", 2: "failed: input errors", 3: "failed: internal error"}[report.exit_code]
    body = [f"<h1>fxverify: {escape(outcome)}</h1>",
            f"<p>{counted(t['policies'], 'policy', 'policies')}, {counted(t['obligations'], 'obligation')} checked.</p>",
            *([f"<p>Rules not checked (--select/--ignore): {', '.join(f'<code>{escape(c)}</code>' for c in report.skipped_rules)}"
               ".</p>"] if report.skipped_rules else []),
            "<table><thead><tr><th></th><th>policies</th><th>obligations</th></tr></thead><tbody>"]
    rows = [("proved", t["proved"], t["obligations_proved"]), ("refuted", t["refuted"], t["obligations_refuted"]),
            ("unknown", t["unknown"], t["obligations_unknown"]), ("input error", t["error"], "-"),
            *([("internal error", t["internal_error"], "-")] if t["internal_error"] else []),
            ("suppressed findings", "-", t["suppressed"]), ("baselined findings", "-", t["baselined"])]
    body += [f'<tr><th>{escape(a)}</th><td class="num">{b}</td><td class="num">{c}</td></tr>' for a, b, c in rows]
    body.append("</tbody></table>")
    shown = [(r, d) for r in report.results for d in r.diagnostics if not d.baselined]
    if shown:
        body.append("<h2>Findings</h2><nav><ol>")
        for i, (r, d) in enumerate(shown, 1):
            where = location(r.sources, d.primary.span) if d.primary is not None else r.path
            body.append(f'<li><a href="#finding-{i}">{escape(d.code)}</a> <code>{escape(where)}</code></li>')
        body.append("</ol></nav>")
        body += [finding_fragment(d, r.sources, f"finding-{i}") for i, (r, d) in enumerate(shown, 1)]
    if report.baseline is not None and report.baseline.stale:
        body.append(f"<h2>Stale baseline entries ({escape(report.baseline.path)})</h2><ul>")
        body += [f"<li><code>{escape(e.code)}</code> in <code>{escape(e.path)}</code>: {_inline(e.message)}</li>"
                 for e in report.baseline.stale]
        body.append("</ul>")
    return page(f"fxverify: {outcome}", "\n".join(body))


_VIEW_TITLES = {"fabric": "Fabric", "movement": "Movement graph", "hb": "Happens-before graph"}
_SVG_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_XLINK = re.compile(r' xmlns:xlink="http://www\.w3\.org/1999/xlink"')


def graph_svg(svg: str, ident: str) -> str:
    """An SVG Graphviz laid out, as an element of an HTML5 page: without its XML prolog, comments
    and namespace declarations (HTML needs none of them, so the page holds no URL), and its ids
    prefixed with ``ident``: Graphviz numbers its ids (node1, edge1...) the same in every picture."""
    return _XLINK.sub("", inline_svg(_SVG_PROLOG.sub("", svg, count=1))).replace(' id="', f' id="{ident}-')


def graph_page(heading: str, svgs: dict[str, str], finding: str = "") -> str:
    """The page of ``fxverify graph --format html``: ``svgs`` maps view names (``fabric``,
    ``movement``, ``hb``) to the SVG Graphviz laid out, shown in that order with an index;
    ``finding`` is the highlighted finding's fragment (``finding_fragment``), shown first. The
    SVGs lose their XML prolog, comments and namespace declarations (HTML needs none of them), so
    the page holds no URL, and their ids get the view as a prefix, so ids stay unique."""
    body = [f"<h1>{escape(heading)}</h1>"]
    if len(svgs) > 1:
        body.append("<nav><ul>" + "".join(f'<li><a href="#view-{escape(v)}">{escape(_VIEW_TITLES.get(v, v))}</a></li>'
                                          for v in svgs) + "</ul></nav>")
    if finding:
        body.append(finding)
    for view, svg in svgs.items():
        svg = graph_svg(svg, view)
        body.append(f'<section id="view-{escape(view)}"><h2>{escape(_VIEW_TITLES.get(view, view))}</h2>'
                    f"<figure>{svg}</figure></section>")
    return page(heading, "\n".join(body))
