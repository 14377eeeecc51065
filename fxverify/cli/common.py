"""What every ``fxverify`` command shares: problems of the command line on standard error.

Takes diagnostics (``diagnostics.model.Diagnostic``) and renders them as the text report does;
emits no codes of its own (the codes are the callers').
"""

from __future__ import annotations

import sys

import typer

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.source import SourceMap


def problems(diags: list[Diagnostic], sources: SourceMap | None = None) -> None:
    """Render problems of the command itself (and generator input errors) on standard error,
    underlined against ``sources`` when they are given. Returns nothing; raises nothing."""
    from fxverify.render.text import render_diagnostic, to_plain

    lines = []
    for d in diags:
        lines += render_diagnostic(d, sources or SourceMap()) + ([[("", "")]] if sources is not None else [])
    sys.stderr.write(to_plain(lines))


def stop(code: codes.Code, message: str, help: str | None = None) -> typer.Exit:
    """Print one problem (``code``, ``message``, ``help``) and return the exit (code 2) to raise."""
    problems([diagnostic(code, message, help=help)])
    return typer.Exit(2)
