"""GitHub Actions workflow commands (``--format github``): one annotation per finding.

Takes a ``gate.Report``; produces lines such as
``::error file=p.fx,line=3,col=5,endLine=3,endColumn=20,title=FX-ORD-002 data race::message``
(GitHub docs, "Workflow commands for GitHub Actions": ``error``, ``warning`` and ``notice``
messages with ``file``, ``line``, ``col``, ``endLine``, ``endColumn`` and ``title`` parameters).
Values are escaped as the runner expects: ``%``, CR and LF in the message; also ``:`` and ``,``
in parameters. The message carries the rule broken and the fix hint on further lines. Suppressed
findings are ``notice`` annotations that give the reason; findings a baseline accepted are left
out; stale baseline entries are one ``notice`` each.

GitHub shows at most ``PER_KIND`` (10) error, 10 warning and 10 notice annotations per step, and
drops the rest without a word (actions/toolkit, docs/problem-matchers.md, "Limitations"). So errors
come first, then warnings, then notices, each in report order and capped; when some are left out,
one last ``notice`` (within the notice budget) says how many of each, and where the run's full
report is (the other outputs of the run, ``elsewhere``). Output is deterministic.
"""

from __future__ import annotations

from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic, counted
from fxverify.gate.report import Report
from fxverify.render.text import terminal_safe
from fxverify.source import SourceMap

_CMD = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}

#: Annotations of one kind (error, warning, notice) GitHub shows per step.
PER_KIND = 10

_ORDER = ("error", "warning", "notice")


def escape_data(s: str) -> str:
    """Escape a workflow command's message (``%``, ``\\r``, ``\\n``; other control characters
    as ``U+XXXX``: ``text.terminal_safe``, since a runner's log is shown in a terminal too)."""
    return terminal_safe(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(s: str) -> str:
    """Escape a workflow command's parameter value (also ``:`` and ``,``)."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _command(d: Diagnostic, sources: SourceMap) -> str:
    cmd = "notice" if d.suppressed_reason is not None else _CMD[d.severity]
    title = f"{d.code} {d.code.title}"
    if d.suppressed_reason is not None:
        title += " (suppressed)"
    params = []
    if d.primary is not None:
        sf = sources.get(d.primary.span.file)
        params.append(f"file={escape_property(d.primary.span.file)}")
        if sf is not None:
            l0, c0 = sf.line_col(d.primary.span.start)
            l1, c1 = sf.line_col(max(d.primary.span.start, d.primary.span.end))
            params += [f"line={l0}", f"col={c0}", f"endLine={l1}", f"endColumn={c1}"]
    params.append(f"title={escape_property(title)}")
    lines = [d.message]
    if d.suppressed_reason is not None:
        lines.append(f"suppressed: {d.suppressed_reason}")
    if d.trace is not None and d.trace.why:
        lines.append(f"why: {d.trace.why}")
    if d.help:
        lines.append(f"help: {d.help}")
    return f"::{cmd} {','.join(params)}::{escape_data(chr(10).join(lines))}"


def report_to_github(report: Report, elsewhere: tuple[str, ...] = ()) -> str:
    """Render a ``gate.Report`` as workflow commands, one per line: errors, then warnings, then
    notices, at most ``PER_KIND`` of each, and a last notice counting what was left out and
    naming ``elsewhere`` (descriptions of the run's other outputs) as the full report."""
    out: dict[str, list[str]] = {k: [] for k in _ORDER}
    for r in report.results:
        for d in r.diagnostics:
            if not d.baselined:
                line = _command(d, r.sources)
                out[line[2:line.index(" ")]].append(line)
    if report.baseline is not None:
        for e in report.baseline.stale:
            out["notice"].append(f"::notice file={escape_property(e.path)},title={escape_property('stale baseline entry ' + e.code)}::"
                                 + escape_data(f"{e.message} no longer occurs; `fxverify check --update-baseline "
                                               f"{report.baseline.path}` drops it"))
    total = sum(len(v) for v in out.values())
    cut = {k: len(v) > PER_KIND - (k == "notice") for k, v in out.items()}
    if not any(cut.values()):
        return "".join(line + "\n" for k in _ORDER for line in out[k])
    # One notice is kept back for the line that says what was left out.
    shown = {k: v[:PER_KIND - (k == "notice")] for k, v in out.items()}
    left = {k: len(out[k]) - len(shown[k]) for k in _ORDER}
    parts = ", ".join(counted(n, k) for k, n in left.items() if n)
    where = "; the full report: " + ", ".join(elsewhere) if elsewhere else \
        "; run `fxverify check` (text, or `--format markdown`) for the full report"
    last = (f"::notice title={escape_property(f'fxverify: {sum(left.values())} more annotations not shown')}::"
            + escape_data(f"{sum(left.values())} of {total} annotations are not shown ({parts}): GitHub shows "
                          f"{PER_KIND} of each kind per step{where}"))
    return "".join(line + "\n" for k in _ORDER for line in shown[k]) + last + "\n"
