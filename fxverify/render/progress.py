"""The progress bar of ``fxverify check`` (rich, on standard error).

Takes the gate's progress reports (``gate.Progress``: policies started and done, the phases of each
check and their units); produces a live two-line bar on a terminal, nothing elsewhere. Emits no
diagnostics.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class ProgressBar:
    """A rich progress bar on stderr when stderr is a terminal and not ``--quiet``; otherwise it
    shows nothing. A ``gate.Progress``: one line counts the policies, one names the current
    policy's phase (parse, resolve, generate, discharge, replay, hints: ``pipeline.PHASES``) with
    its units done and their total when known (obligation families, obligations, refutations,
    hints)."""

    def __init__(self, quiet: bool, console=None) -> None:
        self.enabled = (console is not None or sys.stderr.isatty()) and not quiet
        self.console = console  # a rich Console (tests); default: standard error
        self.bar = None
        self._policies = self._phase = None
        self._path = ""

    def __enter__(self) -> "ProgressBar":
        return self

    def start(self, policies: int) -> None:
        """Show the bar for ``policies`` files."""
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[counts]}"),
                            TimeElapsedColumn(), console=self.console or Console(stderr=True), transient=True)
        self.bar.__enter__()
        self._policies = self.bar.add_task("policies", total=policies, counts=f"0/{policies}")
        self._phase = self.bar.add_task("", total=None, counts="", visible=False)

    def policy(self, path: str) -> None:
        """The check of ``path`` starts."""
        self._path = path

    def phase(self, name: str, total: int | None = None) -> None:
        """Phase ``name`` of the current policy starts, with ``total`` units (``None``: unknown)."""
        if self.bar is not None:
            self.bar.reset(self._phase, total=total, visible=True, description=f"{self._path}: {name}",
                           counts="" if total is None else f"0/{total}")

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current phase are done."""
        if self.bar is not None:
            self.bar.advance(self._phase, n)
            task = self.bar.tasks[self._phase]
            if task.total is not None:
                self.bar.update(self._phase, counts=f"{int(task.completed)}/{int(task.total)}")

    def done(self, path: str) -> None:
        """One more policy checked."""
        if self.bar is not None:
            self.bar.advance(self._policies)
            task = self.bar.tasks[self._policies]
            self.bar.update(self._policies, counts=f"{int(task.completed)}/{int(task.total)}")
            self.bar.update(self._phase, visible=False)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the bar's refresh thread inside this context (``gate.forked`` forks its workers
        there: a thread holding a lock at a fork leaves it held in the child), then restart it."""
        if self.bar is None:
            yield
            return
        # rich's ``Live.stop`` tells its refresh thread to end but does not wait for it
        thread = getattr(self.bar.live, "_refresh_thread", None)
        self.bar.stop()
        if thread is not None:
            thread.join()
        try:
            yield
        finally:
            self.bar.start()

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
