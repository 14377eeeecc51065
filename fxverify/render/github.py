"""GitHub Actions workflow commands (``--format github``): one annotation per finding.

Takes a ``gate.Report``; produces lines such as
``::error file=p.fx,line=3,col=5,endLine=3,endColumn=20,title=FX-ORD-002 data race::message``
(GitHub docs, "Workflow commands for GitHub Actions": ``error``, ``warning`` and ``notice``
messages with ``file``, ``line``, ``col``, ``endLine``, ``endColumn`` and ``title`` parameters).
Values are escaped as the runner expects: ``%``, CR and LF in the message; also ``:`` and ``,``
in parameters. The message carries the rule broken and the fix hint on further lines. Suppressed
findings are ``notice`` annotations that give the reason; findings a baseline accepted are left
out; stale baseline entries are one ``notice`` each. Output is deterministic.
"""

from __future__ import annotations

from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.gate.report import Report
from fxverify.source import SourceMap

_CMD = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(s: str) -> str:
    """Escape a workflow command's message (``%``, ``\\r``, ``\\n``)."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


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


def report_to_github(report: Report) -> str:
    """Render a ``gate.Report`` as workflow commands, one per line."""
    out = [_command(d, r.sources) for r in report.results for d in r.diagnostics if not d.baselined]
    if report.baseline is not None:
        for e in report.baseline.stale:
            out.append(f"::notice file={escape_property(e.path)},title={escape_property('stale baseline entry ' + e.code)}::"
                       + escape_data(f"{e.message} no longer occurs; `fxverify check --update-baseline "
                                     f"{report.baseline.path}` drops it"))
    return "".join(line + "\n" for line in out)
