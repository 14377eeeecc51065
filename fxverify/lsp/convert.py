"""Diagnostics and spans in the Language Server Protocol's terms.

Takes fxverify ``Diagnostic`` values and ``Span`` values (character offsets into the texts of a
``SourceMap``) and produces ``lsprotocol`` ranges and diagnostics: the code and its title, the
primary span as the range, every related span and every step of the replayed trace as related
information (each pointing at its edge), the rule (``why``) and the hint (with its verification
status) in the message. Columns are counted in the position encoding the client and server agreed
on (UTF-16 unless negotiated otherwise): ``units`` counts a string's code units. Emits nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic, TraceEvent
from fxverify.source import SourceMap, Span

#: Counts the client's code units in a string (``PositionCodec.client_num_units``).
Units = Callable[[str], int]

#: Trace steps attached to one diagnostic as related information (the rest are in the message).
MAX_STEPS = 24

_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
             Severity.NOTE: lsp.DiagnosticSeverity.Information}


def uri_of(path: str) -> str:
    """The ``file:`` URI of an absolute ``path``."""
    from pathlib import Path

    return Path(path).absolute().as_uri()


def path_of(uri: str) -> str | None:
    """The file system path of a ``file:`` URI; ``None`` for other schemes (``untitled:``...)."""
    u = urlparse(uri)
    if u.scheme != "file":
        return None
    return unquote(u.path)


def position(sources: SourceMap, file: str, offset: int, units: Units) -> lsp.Position:
    """The LSP position of character ``offset`` in ``file`` (line 0-based, column in client
    units); the start of the file when ``sources`` does not hold it."""
    sf = sources.get(file)
    if sf is None:
        return lsp.Position(0, 0)
    line, col = sf.line_col(offset)
    return lsp.Position(line - 1, units(sf.line_text(line)[: col - 1]))


def to_range(sources: SourceMap, span: Span, units: Units) -> lsp.Range:
    """The LSP range of ``span``."""
    return lsp.Range(position(sources, span.file, span.start, units), position(sources, span.file, span.end, units))


def _step(ev: TraceEvent) -> str:
    when = "" if ev.time is None else f" t={ev.time} ns"
    where = f" {ev.device}.{ev.hook}" if ev.hook else ""
    mark = ">> " if ev.violation else ""
    return f"{mark}step {ev.step}{when}{where} `{ev.edge}` {ev.kind}: {ev.detail}"


def message(d: Diagnostic) -> str:
    """The message an editor shows: the one-line message, the notes, the rule broken (``why``) and
    the hint with its status."""
    out = [d.message]
    out += [f"note: {n}" for n in d.notes]
    if d.suppressed_reason is not None:
        out.append(f"suppressed: {d.suppressed_reason}")
    if d.trace is not None and d.trace.why:
        out.append(f"why: {d.trace.why}")
    if d.help:
        out.append(f"help: {d.help}")
    return "\n".join(out)


def to_lsp(d: Diagnostic, sources: SourceMap, units: Units, root: str) -> tuple[str, lsp.Diagnostic]:
    """``d`` as an LSP diagnostic and the path of the file it belongs to (its primary span's file,
    or ``root``, the checked policy, for a diagnostic with no span, shown on its first line)."""
    span = d.primary.span if d.primary is not None else Span(root, 0, 0)
    if sources.get(span.file) is None:
        span = Span(root, 0, 0)
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(uri_of(lab.span.file), to_range(sources, lab.span, units)),
                                                lab.message or "related")
               for lab in d.related if sources.get(lab.span.file) is not None]
    if d.trace is not None:
        steps = [ev for ev in d.trace.events if sources.get(ev.span.file) is not None][:MAX_STEPS]
        related += [lsp.DiagnosticRelatedInformation(lsp.Location(uri_of(ev.span.file), to_range(sources, ev.span, units)),
                                                     _step(ev)) for ev in steps]
    out = lsp.Diagnostic(
        # a finding a suppression or baseline accepted stays visible, as a hint rather than an error
        range=to_range(sources, span, units), message=message(d),
        severity=_SEVERITY[d.severity] if d.active else lsp.DiagnosticSeverity.Hint,
        code=str(d.code), source="fxverify", related_information=related or None,
        tags=[lsp.DiagnosticTag.Unnecessary] if d.suppressed_reason is not None else None,
        data={"code": str(d.code), "obligation": d.obligation, "hint": d.help})
    return span.file, out
