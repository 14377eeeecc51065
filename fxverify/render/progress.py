"""The progress bar of ``fxverify check`` on a terminal.

Takes the gate's progress events (policies started and done, obligations discharged); draws a
rich progress bar on standard error while it is a terminal and ``--quiet`` is off, else nothing.
A ``gate.Progress``. Emits no diagnostics.
"""

from __future__ import annotations

import sys


class ProgressBar:
    """A rich progress bar on stderr (policies, obligations discharged) when stderr is a terminal
    and not ``--quiet``; otherwise it shows nothing. A ``gate.Progress``."""

    def __init__(self, quiet: bool) -> None:
        self.enabled = sys.stderr.isatty() and not quiet
        self.bar = None
        self._policies = self._obligations = None

    def __enter__(self) -> "ProgressBar":
        return self

    def start(self, policies: int) -> None:
        """Show the bar for ``policies`` files."""
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.__enter__()
        self._policies = self.bar.add_task("policies", total=policies)
        self._obligations = self.bar.add_task("obligations discharged", total=None)

    def done(self, path: str) -> None:
        """One more policy checked."""
        if self.bar is not None:
            self.bar.advance(self._policies)

    def obligations(self, n: int) -> None:
        """``n`` more obligations discharged."""
        if self.bar is not None:
            self.bar.advance(self._obligations, n)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
