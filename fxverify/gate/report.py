"""The gate's report of one run: results in input order, the baseline's outcome, cache counts,
the gate's own problems, and the exit code (BRIEF section 6).

``Report`` is what ``gate.run_gate`` returns and what every renderer formats. ``exit_code``
decides: 3 when a check crashed or an internal invariant broke (FX-INT-001), else 2 for an input
error or a problem of the run itself (a usage or I/O error), else 1 when an active finding fails
the gate, else 0. Soft-fail (``--exit-zero``) turns only that 1 into 0: the report still shows
every finding and says the gate would fail (``would_fail``), and input and internal errors keep
their codes, since then nothing was verified. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.gate.baseline import BaselineEntry
from fxverify.gate.cache import CacheStats
from fxverify.result import CheckResult
from fxverify.source import SourceMap


@dataclass(frozen=True)
class GateOptions:
    """What fails the gate. ``fail_on``: ``error`` (default) or ``warning`` (warnings fail too).
    ``unknown``: ``fail`` (default; an unknown verdict is an error) or ``warn`` (a warning).
    ``exit_zero``: soft-fail, exit 0 where findings would fail the gate (exit 1)."""

    fail_on: str = "error"
    unknown: str = "fail"
    exit_zero: bool = False


@dataclass
class BaselineOutcome:
    """How a ``--baseline``/``--update-baseline`` file applied: ``matched`` findings accepted,
    ``stale`` entries that no longer occur; ``updated`` when the file was rewritten without them."""

    path: str
    matched: int
    stale: list[BaselineEntry]
    updated: bool = False


@dataclass
class Report:
    """One run of ``fxverify check``: results in input order (a crashed check is a result holding
    its FX-INT-001), the baseline outcome, cache counts, wall time (shown only with ``stats``),
    ``problems`` of the run itself (usage and I/O errors, which stop it, and notes) and the
    ``sources`` they quote, the codes whose
    obligations were not generated (``skipped_rules``: ``--select``/``--ignore``), the exit code,
    and ``would_fail``: findings fail the gate (the exit code is 1, or 0 under soft-fail)."""

    results: list[CheckResult] = field(default_factory=list)
    baseline: BaselineOutcome | None = None
    cache: CacheStats = field(default_factory=CacheStats)
    seconds: float = 0.0
    stats: bool = False
    gate: GateOptions = GateOptions()
    problems: list[Diagnostic] = field(default_factory=list)
    #: The texts the ``problems`` quote (a baseline file at its syntax error); empty when none do
    sources: SourceMap = field(default_factory=SourceMap)
    skipped_rules: tuple[str, ...] = ()
    exit_code: int = 0
    would_fail: bool = False

    @property
    def stopped(self) -> bool:
        """True when a problem of the run stopped it before a report could be made."""
        return any(p.severity is Severity.ERROR for p in self.problems)

    def totals(self) -> dict[str, int]:
        """Run totals for the summary table: policies by verdict (``error`` for input errors,
        ``internal_error`` for crashes, FX-INT-001), obligations by verdict, and findings that were
        suppressed or baselined."""
        out = {k: 0 for k in ("policies", "proved", "refuted", "unknown", "error", "internal_error", "obligations",
                              "obligations_proved", "obligations_refuted", "obligations_unknown",
                              "suppressed", "baselined")}
        for r in self.results:
            out["policies"] += 1
            out[r.verdict.value if r.verdict else "internal_error" if r.internal_error else "error"] += 1
            for c in r.counts().values():
                for status in ("proved", "refuted", "unknown"):
                    out["obligations"] += c[status]
                    out[f"obligations_{status}"] += c[status]
            out["suppressed"] += sum(d.suppressed_reason is not None for d in r.diagnostics)
            out["baselined"] += sum(d.baselined for d in r.diagnostics)
        return out

    def decide(self) -> int:
        """Set and return ``exit_code`` (see the module docstring)."""
        if any(r.internal_error for r in self.results):
            self.exit_code = 3
        elif self.stopped or any(r.input_error for r in self.results):
            self.exit_code = 2
        else:
            failing = {Severity.ERROR} | ({Severity.WARNING} if self.gate.fail_on == "warning" else set())
            self.would_fail = any(d.active and d.severity in failing for r in self.results for d in r.diagnostics)
            self.exit_code = 1 if self.would_fail and not self.gate.exit_zero else 0
        return self.exit_code
