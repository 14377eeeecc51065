"""The diagnostic model shared by every stage, and its one constructor.

Defines ``Label``, ``TraceEvent``, ``Trace`` and ``Diagnostic``. Every diagnostic is made by
``diagnostic()``, which takes the severity from the code's registry entry, or by
``internal_error()`` for a broken invariant or an escaped exception (FX-INT-001, the one
representation of a crash in every format). Message style follows Cedar's guide: lowercase, no
final period, one line, user names in backticks, detail in ``help``. Emits nothing itself.
"""

from __future__ import annotations

import difflib
import os
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code, Severity
from fxverify.source import NO_SPAN, Span


@dataclass(frozen=True, slots=True)
class Label:
    """A span with a short message, shown underlined in the source."""

    span: Span
    message: str = ""


@dataclass(frozen=True)
class TraceEvent:
    """One step of a trace (BRIEF section 5).

    ``time`` is ns in the witness schedule (``None`` for schedule-independent facts). ``kind`` is
    ``start``, ``end``, ``handoff``, ``lease``, ``revoke``, ``release``, ``alloc``, ``flush``,
    ``writeback``, ``invalidate``, ``notify``, ``cancel`` (a cancel completes: the transfers it
    names touch no byte after it), ``map``, ``fact`` or ``region`` (a region of a region-level finding: ``edge`` is then the region's name and
    ``hook`` is empty).
    ``detail`` describes the footprint (hex range, element index, bytes) or the map value.
    ``owner_before``/``owner_after`` are set on handoff steps. ``violation`` marks the step where
    the rule breaks. ``stream`` is the edge's serial stream on ``device`` (``None``: an edge on no
    stream, and region facts); a device and a stream make one thread of execution (a SARIF
    threadFlow, a lane of a swimlane picture), since two streams of one device run concurrently
    (BRIEF section 2).
    """

    step: int
    time: int | None
    device: str
    hook: str
    edge: str
    kind: str
    detail: str
    span: Span = NO_SPAN
    owner_before: str | None = None
    owner_after: str | None = None
    violation: bool = False
    stream: str | None = None


@dataclass(frozen=True)
class Elided:
    """Events a trace leaves out: those of ``edges``, HB predecessors of shown edges that the
    replayed schedule times in ``[start, end)`` ns, one after the other, between step
    ``before - 1`` and step ``before`` (``before`` is one past the last step when they come
    last). ``events`` counts the rows they would take."""

    before: int
    start: int
    end: int
    events: int
    edges: tuple[str, ...]

    def summary(self) -> str:
        """``… 8 earlier events of edges take0, fill0 elided (all in [0, 4) ns)``, the line a
        trace shows in their place; at most six edge names, then how many more."""
        names = ", ".join(self.edges[:6]) + (f" and {len(self.edges) - 6} more" if len(self.edges) > 6 else "")
        plural = "s" if self.events != 1 else ""
        return (f"… {self.events} earlier event{plural} of edge{'s' if len(self.edges) != 1 else ''} {names} "
                f"elided (all in [{self.start}, {self.end}) ns)")


@dataclass(frozen=True)
class Trace:
    """A replayed counterexample: events in time order, the rule broken (``why``), a fix hint and
    the witness's named ``facts`` (address, space, values). ``elided`` summarises the events of
    HB predecessors the schedule times but the trace does not show, so that the times shown stay
    those of one legal schedule."""

    code: Code
    events: tuple[TraceEvent, ...]
    why: str
    fix: str
    facts: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    elided: tuple[Elided, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """One finding or input error. Make it with ``diagnostic()``, never directly.

    ``code`` is a registry code. ``primary`` is where the problem is; ``related`` are other places
    involved (for example the other edge of a race). ``trace`` is set for refuted obligations and
    holds the replayed counterexample.

    Identity, for fingerprints (``fxverify.diagnostics.fingerprint``): ``policy`` is the declared
    policy name, ``obligation`` the obligation's stable key, ``edges`` the policy-relative names of
    the edges the finding blames (``Obligation.culprits``: instance names such as ``spill[3]``;
    the trace may show more), ``witness`` the kind of witness
    (``schedule:release``, ``cycle``, ``static``, ``unknown``...), never its values.
    ``suppressed_reason`` is set when an inline suppression accepted the finding; ``baselined``
    when a baseline file did.
    """

    code: Code
    severity: Severity
    message: str
    primary: Label | None = None
    related: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: str | None = None
    trace: Trace | None = field(default=None, compare=False)
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


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun in the number it needs: ``counted(1, "solver call")`` is ``1 solver
    call``, ``counted(2, "polic", ...)`` takes the plural ``nouns`` when it is not ``noun + "s"``
    (``counted(2, "entry", "entries")``). Only 1 is singular (English usage: "0 obligations")."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


def nearest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name`` (``difflib`` ratio at least 0.5, not difflib's 0.6, so that
    short names such as `kx` for `kv` still get one), or ``None``: what every did-you-mean uses.
    Candidates are compared in sorted order, so the answer does not depend on their order."""
    match = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.5)
    return match[0] if match else None


def diagnostic(code: Code, message: str, span: Span | None = None, label: str = "", *,
               related: Sequence[Label] = (), notes: Sequence[str] = (), help: str | None = None,
               trace: Trace | None = None, policy: str = "", obligation: str = "",
               edges: Sequence[str] = (), witness: str = "") -> Diagnostic:
    """The one way to make a diagnostic: ``code``'s registry severity, ``message`` (one line,
    Cedar style), the primary ``span`` underlined with ``label`` (none for command-line problems),
    and the optional parts of ``Diagnostic``."""
    return Diagnostic(code, code.severity, message, Label(span, label) if span is not None else None,
                      tuple(related), tuple(notes), help, trace, None, policy, obligation, tuple(edges), witness)


def internal_error(message: str, span: Span | None = None, *, notes: Sequence[str] = (),
                   policy: str = "", obligation: str = "") -> Diagnostic:
    """FX-INT-001: an internal invariant broke. ``message`` says which; the help asks for a report."""
    return diagnostic(codes.INT_001, message, span, "here" if span is not None else "", notes=notes,
                      help="this is a bug in fxverify; please report it with this policy",
                      policy=policy, obligation=obligation)


def crash(path: str, exc: BaseException) -> Diagnostic:
    """FX-INT-001 for an exception that escaped while working on ``path``: its type, message and
    innermost frame, never a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    notes = (f"at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}",) if frames else ()
    return diagnostic(codes.INT_001, f"internal error while checking {path}: {type(exc).__name__}: {exc}", notes=notes,
                      help="this is a bug in fxverify; please report it with the policy that triggered it")
