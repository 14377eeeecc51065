"""Markdown rendering (``--format markdown``), for pull-request comments and job summaries.

Takes a ``gate.Report``; produces GitHub-flavoured Markdown: a headline with the gate's outcome,
the rules not checked (``--select``/``--ignore``), the summary table (policies and obligations by
verdict), a table of findings (suppressed ones with their reason), stale baseline entries, then
each replayed trace as a Mermaid diagram (``trace_to_mermaid``): a ``sequenceDiagram`` with one
participant per device and stream, each edge's interval an activation bar, the violating step in a
highlighted ``rect``; a cycle or a missing fabric path as a ``flowchart``. With ``pictures``
(``check --pictures DIR``), each trace's SVG swimlane (``render.swimlane``) is linked as an image
under its diagram. Text inside diagrams uses Mermaid's entity codes (``#35;``, ``#59;``, ``#60;``,
``#62;``, quotes for code spans) so that policy names cannot break the diagram. Output is
deterministic.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, Trace, counted
from fxverify.gate.report import Report
from fxverify.render.pictures import picture_names
from fxverify.render.swimlane import lane_label, lanes_of
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
    """Escape text for a Mermaid message, note or node label: Mermaid's entity codes for the
    characters its grammar reads, and code spans (`` `kv` ``) as typographic quotes, since Mermaid
    shows backticks literally."""
    s = s.replace("#", "#35;").replace(";", "#59;").replace("<", "#60;").replace(">", "#62;").replace('"', "#quot;")
    s = re.sub(r"`([^`]*)`", r"#8216;\1#8217;", s)
    return s.replace("`", "#96;").replace("\n", " ")


#: Mermaid settings: wrap long notes at the lane width (without it one long note makes the
#: diagram as wide as the note, and the page scales it down until it cannot be read).
_SEQUENCE_INIT = '%%{init: {"sequence": {"wrap": true, "width": 220, "noteMargin": 8, "mirrorActors": false}}}%%'


def trace_to_mermaid(t: Trace) -> list[str]:
    """A trace as the lines of a Mermaid diagram (without the code fence).

    A schedule is a ``sequenceDiagram`` with one participant per lane (device and stream, as in
    ``render.swimlane``: two streams of one device run concurrently, so each gets its own lane):
    each edge's interval is an activation bar on its lane (overlapping intervals are overlapping
    bars), each step a note over its lane, a handoff a message from the old owner to the new one,
    and the violating step sits in a highlighted ``rect``; each group of elided HB predecessors is
    one note across the lanes, where it runs. A happens-before cycle (FX-ORD-001) and
    a missing fabric path (FX-HOOK-001) are ``flowchart``s of the cycle and of the devices the
    fabric reaches; other schedule-independent facts are notes in step order."""
    facts = dict(t.facts)
    if t.code is codes.ORD_001 and t.events and all(ev.kind == "fact" for ev in t.events):
        return _cycle_flowchart(t)
    if t.code is codes.HOOK_001 and {"from", "to"} <= facts.keys():
        return _path_flowchart(t, facts)
    lanes = lanes_of(t)
    pid = {ln: f"L{i}" for i, ln in enumerate(lanes)}
    first_lane = {}
    for ln in lanes:
        first_lane.setdefault(ln[0], ln)
    out = [_SEQUENCE_INIT, "sequenceDiagram"]
    alone = {d for d, _ in lanes if sum(x == d for x, _ in lanes) == 1}
    out += [f"  participant {pid[ln]} as {_mm(ln[0] if ln[0] in alone and ln[1] is None else ' '.join(lane_label(ln)))}"
            for ln in lanes]
    open_edges: set[tuple[str, str]] = set()
    last_time = {ev.edge: ev.time for ev in t.events}
    gaps = {el.before: el for el in t.elided}
    span = f"{pid[lanes[0]]},{pid[lanes[-1]]}" if len(lanes) > 1 else pid[lanes[0]] if lanes else ""
    for ev in t.events:
        lane = pid[(ev.device, ev.stream)]
        if ev.step in gaps and span:  # HB predecessors the trace leaves out, where they run
            out.append(f"  Note over {span}: {_mm(gaps[ev.step].summary())}")
        when = "" if ev.time is None else f" t={ev.time} ns"
        text = _mm(f"{ev.step}.{when} {ev.edge} {ev.kind}: {ev.detail}")
        if ev.violation:
            out.append("  rect rgb(255, 221, 221)")
        arrow = (ev.kind == "handoff" and ev.owner_before in first_lane and ev.owner_after in first_lane
                 and ev.owner_before != ev.owner_after)
        if arrow:
            out.append(f"  {pid[first_lane[ev.owner_before]]}->>{pid[first_lane[ev.owner_after]]}: {text}")
        else:
            out.append(f"  Note over {lane}: {text}")
        key = (ev.edge, lane)
        if ev.time is not None and key not in open_edges and ev.kind != "end" and last_time[ev.edge] != ev.time:
            out.append(f"  activate {lane}")
            open_edges.add(key)
        if ev.violation:
            out.append(f"  Note over {lane}: {_mm('violation: ' + (t.why or t.code))}")
            out.append("  end")
        if ev.kind == "end" and key in open_edges:
            out.append(f"  deactivate {lane}")
            open_edges.discard(key)
    return out


def _cycle_flowchart(t: Trace) -> list[str]:
    """An HB cycle: event ``i``'s edge must start after event ``i-1``'s edge finishes."""
    evs = list(t.events)
    out = ["flowchart LR"]
    for i, ev in enumerate(evs):
        where = f"{ev.device}.{ev.hook}" if ev.hook else ev.device
        out.append(f'  E{i}["{_mm(ev.edge)}<br/>{_mm(where)}"]')
    for i in range(len(evs)):
        nxt = (i + 1) % len(evs)
        label = ("violation: " if evs[nxt].violation else "") + "finishes before start of"
        out.append(f'  E{i} -->|"{_mm(label)}"| E{nxt}')
    out.append("  linkStyle default stroke:#c62828,stroke-width:2px")
    out += [f"  style E{i} stroke:#c62828,stroke-width:3px" for i, ev in enumerate(evs) if ev.violation]
    return out


def _path_flowchart(t: Trace, facts: dict[str, str]) -> list[str]:
    """A missing fabric path: the devices reached from the source, and the one not reached."""
    src, dst = facts["from"], facts["to"]
    reach = [src] + [d for d in facts.get("cut", src).split(",") if d and d != src]
    ev = next((e for e in t.events if e.violation), None)
    what = f"{ev.edge} ({ev.device}.{ev.hook})" if ev is not None else "transfer"
    out = ["flowchart LR", f'  subgraph R["reachable from {_mm(src)}"]']
    out += [f'    D{i}["{_mm(d)}"]' for i, d in enumerate(reach)]
    out += ["  end", f'  X["{_mm(dst)}<br/>unreachable"]',
            f'  D0 -.->|"{_mm("violation: no fabric path for " + what)}"| X',
            "  style X stroke:#c62828,stroke-width:3px", "  linkStyle 0 stroke:#c62828,stroke-width:2px"]
    return out


def _status(d: Diagnostic) -> str:
    return "suppressed" if d.suppressed_reason is not None else d.severity.value


def report_to_markdown(report: Report, pictures: str | None = None) -> str:
    """Render a ``gate.Report`` as Markdown. ``pictures`` is the folder of the trace pictures
    (``render.pictures``) relative to the report file's folder: each trace then links its SVG."""
    t = report.totals()
    shown = [(r, d) for r in report.results for d in r.diagnostics if not d.baselined]
    outcome = {0: "passed", 1: "failed", 2: "failed: input errors", 3: "failed: internal error"}[report.exit_code]
    out = [f"## fxverify: {outcome}", "",
           f"{counted(t['policies'], 'policy', 'policies')}, {counted(t['obligations'], 'obligation')} checked.", "",
           *([f"Rules not checked (`--select`/`--ignore`): {', '.join(f'`{c}`' for c in report.skipped_rules)}.", ""]
             if report.skipped_rules else []),
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
                f"misses {c.misses}, solved {c.solved}"
                + (f"; workers lost {c.workers_lost} (their work ran in the gate's process)" if c.workers_lost else "") + ".", ""]
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
        names = picture_names(report)
        for r, d in traced:
            where = location(r.sources, d.primary.span) if d.primary is not None else r.path
            out += [f"#### `{d.code}` at {_code(where)} ({_status(d)})", "", _cell(d.message), "",
                    "```mermaid", *trace_to_mermaid(d.trace), "```", ""]
            if pictures is not None:
                link = quote(f"{pictures.rstrip('/')}/{names[id(d)]}", safe="/-._~")
                out += [f"![swimlane picture of the {d.code} trace]({link})", ""]
            if d.trace.why:
                out.append(f"- why: {_cell(d.trace.why)}")
            if d.trace.fix:
                out.append(f"- help: {_cell(d.trace.fix)}")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
