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

    Identity, for fingerprints (``fxverify.diagnostics.fingerprint``): ``policy`` is the declared
    policy name, ``obligation`` the obligation's stable key, ``edges`` the policy-relative names of
    the edges involved (instance names such as ``spill[3]``), ``witness`` the kind of witness
    (``schedule:release``, ``cycle``, ``static``, ``unknown``...), never its values.
    ``suppressed_reason`` is set when an inline suppression accepted the finding; ``baselined``
    when a baseline file did.
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
    policy: str = ""
    obligation: str = ""
    edges: tuple[str, ...] = ()
    witness: str = ""
    baselined: bool = False

    @property
    def active(self) -> bool:
        """True when neither a suppression nor a baseline accepted this diagnostic."""
        return self.suppressed_reason is None and not self.baselined

    @property
    def is_error(self) -> bool:
        """True when this diagnostic is an error that neither a suppression nor a baseline accepted."""
        return self.severity is Severity.ERROR and self.active
