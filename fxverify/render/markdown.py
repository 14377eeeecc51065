"""Markdown rendering (``--format markdown``), for pull-request comments and job summaries.

Takes a ``gate.Report``; produces GitHub-flavoured Markdown: a headline with the gate's outcome,
the summary table (policies and obligations by verdict), a table of findings (suppressed ones with
their reason), stale baseline entries, then each replayed trace as a Mermaid ``sequenceDiagram``
with one participant per device: steps on one device are notes over it, a handoff is a message from
the old owner to the new one, and the violating step sits in a highlighted ``rect``. Text inside
diagrams uses Mermaid's entity codes (``#35;``, ``#59;``, ``#60;``, ``#62;``) so that policy names
cannot break the diagram. Output is deterministic.
"""

from __future__ import annotations

import re

from fxverify.diagnostics.model import Diagnostic, Trace, counted
from fxverify.gate.report import Report
from fxverify.render.text import location


def _cell(s: str) -> str:
    """Escape text for one Markdown table cell."""
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _code(s: str) -> str:
    """``s`` as one inline code span in a table cell (CommonMark 6.1): fenced by one backtick more
    than its longest run of backticks, padded with spaces when it starts or ends with one. Inside a
    code span backslashes and ``<`` are literal, so only ``|`` is escaped (GFM tables split cells
    before code spans are read)."""
    s = s.replace("\n", " ").replace("|", "\\|")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _mm(s: str) -> str:
    """Escape text for a Mermaid sequence-diagram message or note."""
    s = s.replace("#", "#35;").replace(";", "#59;").replace("<", "#60;").replace(">", "#62;")
    return s.replace("\n", " ")


def trace_to_mermaid(t: Trace) -> list[str]:
    """A trace as the lines of a Mermaid ``sequenceDiagram`` (without the code fence), one
    participant per device in order of first appearance."""
    devices: list[str] = []
    for ev in t.events:
        for dev in (ev.device, ev.owner_before, ev.owner_after):
            if dev and "," not in dev and dev not in devices:
                devices.append(dev)
    pid = {d: f"D{i}" for i, d in enumerate(devices)}
    out = ["sequenceDiagram"] + [f"  participant {pid[d]} as {_mm(d)}" for d in devices]
    for ev in t.events:
        when = "" if ev.time is None else f" t={ev.time} ns"
        text = _mm(f"{ev.step}.{when} {ev.edge} {ev.kind}: {ev.detail}")
        if ev.violation:
            out.append("  rect rgb(255, 221, 221)")
        arrow = ev.kind == "handoff" and ev.owner_before in pid and ev.owner_after in pid and ev.owner_before != ev.owner_after
        if arrow:
            out.append(f"  {pid[ev.owner_before]}->>{pid[ev.owner_after]}: {text}")
        else:
            out.append(f"  Note over {pid[ev.device]}: {text}")
        if ev.violation:
            out.append(f"  Note over {pid[ev.device]}: {_mm('violation: ' + (t.why or t.code))}")
            out.append("  end")
    return out


def _status(d: Diagnostic) -> str:
    return "suppressed" if d.suppressed_reason is not None else d.severity.value


def report_to_markdown(report: Report) -> str:
    """Render a ``gate.Report`` as Markdown."""
    t = report.totals()
    shown = [(r, d) for r in report.results for d in r.diagnostics if not d.baselined]
    outcome = {0: "passed", 1: "failed", 2: "failed: input errors", 3: "failed: internal error"}[report.exit_code]
    out = [f"## fxverify: {outcome}", "",
           f"{counted(t['policies'], 'policy', 'policies')}, {counted(t['obligations'], 'obligation')} checked.", "",
           "| | policies | obligations |", "|---|---:|---:|",
           f"| proved | {t['proved']} | {t['obligations_proved']} |",
           f"| refuted | {t['refuted']} | {t['obligations_refuted']} |",
           f"| unknown | {t['unknown']} | {t['obligations_unknown']} |",
           f"| input error | {t['error']} | - |",
           *([f"| internal error | {t['internal_error']} | - |"] if t["internal_error"] else []),
           f"| suppressed findings | - | {t['suppressed']} |",
           f"| baselined findings | - | {t['baselined']} |", ""]
    if report.stats:
        c = report.cache
        out += [f"Time {report.seconds:.2f} s; policies from cache {c.policy_hits}; solver queries: cache hits {c.hits}, "
                f"misses {c.misses}, solved {c.solved}.", ""]
    if shown:
        out += ["### Findings", "", "| status | code | location | message |", "|---|---|---|---|"]
        for r, d in shown:
            where = _code(location(r.sources, d.primary.span)) if d.primary is not None else _code(r.path)
            title = d.code.title
            msg = _cell(d.message) + (f" (reason: {_cell(d.suppressed_reason)})" if d.suppressed_reason is not None else "")
            out.append(f"| {_status(d)} | `{d.code}` {_cell(title)} | {where} | {msg} |")
        out.append("")
    if report.baseline is not None and report.baseline.stale:
        out += [f"### Stale baseline entries ({_cell(report.baseline.path)})", ""]
        out += [f"- `{e.code}` in {_code(e.path)}: {_cell(e.message)}" for e in report.baseline.stale]
        out.append("")
    traced = [(r, d) for r, d in shown if d.trace is not None]
    if traced:
        out += ["### Traces", ""]
        for r, d in traced:
            where = location(r.sources, d.primary.span) if d.primary is not None else r.path
            out += [f"#### `{d.code}` at {_code(where)} ({_status(d)})", "", _cell(d.message), "",
                    "```mermaid", *trace_to_mermaid(d.trace), "```", ""]
            if d.trace.why:
                out.append(f"- why: {_cell(d.trace.why)}")
            if d.trace.fix:
                out.append(f"- help: {_cell(d.trace.fix)}")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
