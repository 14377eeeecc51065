"""Inline suppressions: reading ``# fx: allow CODE reason "..."`` comments, and matching them to
findings (specs/output.md, "Suppressions").

``read_suppressions`` takes the comments of one file (from ``syntax.parse.scan_comments``) and
returns the ``Suppression``s they declare, with FX-SUP-001 (no reason) and FX-SUP-003 (unreadable,
an unknown code, or a code that is not a finding's) diagnostics. ``apply_suppressions`` marks the findings a
suppression accepts (``Diagnostic.suppressed_reason``) and adds FX-SUP-002 for every suppression
that matched nothing. Only obligation findings and unknown verdicts can be suppressed
(``codes.Family.suppressible``).
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass, replace

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic, nearest
from fxverify.source import NO_SPAN, SourceFile, SourceMap, Span

_SUPPRESS_RE = re.compile(r"^\s*fx:\s*(?P<rest>.*)$")
_ALLOW_RE = re.compile(
    r'^allow\s+(?P<codes>[^\s,"]+(?:\s*,\s*[^\s,"]+)*)'
    r'(?:\s+reason\s+"(?P<reason>(?:\\.|[^"\\])*)")?\s*(?P<tail>.*)$'
)
_FORM = f'`# fx: allow {codes.ORD_002} reason "why this finding is safe"`'


@dataclass(frozen=True, slots=True)
class Suppression:
    """An inline ``# fx: allow CODE reason "..."`` on ``line`` (1-based) of ``file``."""

    code: codes.Code
    reason: str
    file: str
    line: int
    span: Span = NO_SPAN


def read_suppressions(sf: SourceFile, comments: Sequence[tuple[int, int, str]]
                      ) -> tuple[list[Suppression], list[Diagnostic]]:
    """The suppressions declared by ``comments`` (``(start, end, body)`` offsets into ``sf``), and
    the diagnostics of the malformed ones."""
    out: list[Suppression] = []
    diags: list[Diagnostic] = []
    for start, end, body in comments:
        m = _SUPPRESS_RE.match(body)
        if m is None:
            continue
        span = Span(sf.path, start, end)
        line = sf.line_col(start)[0]
        a = _ALLOW_RE.match(m.group("rest"))
        if a is None or a.group("tail"):
            diags.append(diagnostic(codes.SUP_003, "malformed suppression", span, "cannot read this", help=f"write {_FORM}"))
            continue
        names = [c.strip() for c in a.group("codes").split(",")]
        reason = a.group("reason")
        if reason is None or not reason.strip():
            diags.append(diagnostic(codes.SUP_001, f"suppression of `{names[0]}` has no reason", span, "reason missing",
                                    help=f"write {_FORM}"))
            continue
        reason = re.sub(r"\\(.)", r"\1", reason)
        for name in names:
            code = codes.lookup(name)
            if code is None:
                near = name.upper() if codes.lookup(name.upper()) else nearest(name.upper(), codes.REGISTRY)
                diags.append(diagnostic(codes.SUP_003, f"unknown diagnostic code `{name}`", span, "not a fxverify code",
                                        help=f"did you mean `{near}`?" if near else "`fxverify explain` lists the codes"))
                continue
            if code is codes.SMT_001:
                diags.append(diagnostic(codes.SUP_003, f"`{code}` cannot be suppressed: unknown is never a pass", span,
                                        "an unknown verdict",
                                        help="raise the policy's `rlimit` or the command line's `--rlimit`, or split "
                                             "the flow; `--unknown warn` reports unknown verdicts as warnings"))
                continue
            if code is codes.ORD_001:
                diags.append(diagnostic(codes.SUP_003, f"`{code}` cannot be suppressed: with a happens-before cycle no "
                                        "other obligation is checked", span, "a cycle",
                                        help="remove or reverse the `after` that closes the cycle "
                                             "(`fxverify explain FX-ORD-001`)"))
                continue
            if not code.family.suppressible:
                diags.append(diagnostic(codes.SUP_003, f"`{code}` cannot be suppressed", span, "not a finding",
                                        help="only obligation findings can be suppressed; "
                                             "fix input errors, and report internal errors"))
                continue
            out.append(Suppression(code, reason, sf.path, line, span))
    return out, diags


def _lines(sources: SourceMap, span: Span) -> tuple[int, int]:
    """First and last line of ``span`` (``(0, -1)`` when its file is unknown)."""
    sf = sources.get(span.file)
    if sf is None:
        return 0, -1
    return sf.line_col(span.start)[0], sf.line_col(max(span.start, span.end - 1))[0]


def _target_line(sources: SourceMap, sup: Suppression) -> int:
    """The line a suppression annotates: its own (a trailing comment) or, alone on its line, the next."""
    sf = sources.get(sup.file)
    alone = sf is not None and sf.line_text(sup.line).lstrip().startswith("#")
    return sup.line + 1 if alone else sup.line


def _annotated(sources: SourceMap, sup: Suppression, edge_spans: Sequence[Span]) -> list[Span]:
    """The edge declarations a suppression annotates: every one that contains its target line."""
    if sources.get(sup.file) is None:
        return []
    target = _target_line(sources, sup)
    out = []
    for span in dict.fromkeys(s for s in edge_spans if s.file == sup.file):
        l0, l1 = _lines(sources, span)
        if l0 <= target <= l1:
            out.append(span)
    return out


def apply_suppressions(diags: list[Diagnostic], suppressions: Sequence[Suppression], sources: SourceMap,
                       edge_spans: Sequence[Span], policy: str, skipped: Container[str] = ()) -> list[Diagnostic]:
    """Return ``diags`` with every finding a suppression matches marked suppressed, then one
    FX-SUP-002 warning per suppression that matched nothing, except those of ``skipped`` codes
    (rules not checked in this run: their findings could not occur).

    A suppression matches a finding of its code whose primary span includes the suppression's
    target line, or lies inside an edge declaration (``edge_spans``) that the suppression
    annotates, such as a `handoff` clause of that edge on a later line."""
    if not suppressions:
        return diags
    edges = [_annotated(sources, sup, edge_spans) for sup in suppressions]
    used: set[int] = set()
    out = []
    for d in diags:
        if d.primary is None or d.code in (codes.INT_001, codes.SMT_001):
            out.append(d)  # internal errors and unknown verdicts are never accepted
            continue
        p = d.primary.span
        l0, l1 = _lines(sources, p)
        match = None
        for i, sup in enumerate(suppressions):
            if sup.code != d.code or sup.file != p.file:
                continue
            if l0 <= _target_line(sources, sup) <= l1 or any(e.start <= p.start and p.end <= e.end for e in edges[i]):
                match = i
                break
        if match is None:
            out.append(d)
            continue
        used.add(match)
        out.append(replace(d, suppressed_reason=suppressions[match].reason))
    for i, sup in enumerate(suppressions):
        if i not in used and sup.code not in skipped:
            out.append(diagnostic(codes.SUP_002, f"suppression of {sup.code} matched no finding", sup.span, "unused",
                                  help="remove it, or move it onto the line of the finding", policy=policy))
    return out
