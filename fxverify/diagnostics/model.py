"""The diagnostic model shared by every stage.

Takes nothing; defines ``Diagnostic``, ``Severity`` and ``Label``. Message style follows Cedar's
guide: lowercase, no final period, one line, user names in backticks, detail in ``help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from fxverify.source import Span

if TYPE_CHECKING:
    from fxverify.trace import Trace


class Severity(Enum):
    """How bad a diagnostic is. Errors fail the run; warnings and notes do not."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Label:
    """A span with a short message, shown underlined in the source."""

    span: Span
    message: str = ""


@dataclass(frozen=True)
class Diagnostic:
    """One finding or input error.

    ``code`` is a registry code (``fxverify.diagnostics.codes``). ``primary`` is where the problem is;
    ``related`` are other places involved (for example the other edge of a race). ``trace`` is set
    for refuted obligations and holds the replayed counterexample.
    """

    code: str
    severity: Severity
    message: str
    primary: Label | None = None
    related: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: str | None = None
    trace: "Trace | None" = field(default=None, compare=False)
    suppressed_reason: str | None = None

    @property
    def is_error(self) -> bool:
        """True when this diagnostic is an unsuppressed error."""
        return self.severity is Severity.ERROR and self.suppressed_reason is None
