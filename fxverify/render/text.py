"""Human-readable rendering of diagnostics and traces.

Produces a list of lines, each a list of ``(text, style)`` segments. ``to_plain`` drops the styles
(CI logs, screen readers, ``NO_COLOR``); ``to_rich`` builds a ``rich.text.Text`` for a terminal.
Layout (BRIEF section 5): title line with code and message, ``--> file:line:col``, the source line
with the span underlined, related spans, the replayed trace as a table with the violating step
marked, the rule (``why``) and a fix hint.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic, Trace, counted
from fxverify.gate.report import Report
from fxverify.result import CheckResult, Verdict
from fxverify.source import SourceMap, Span

if TYPE_CHECKING:
    from rich.text import Text

Seg = tuple[str, str]
Line = list[Seg]

_SEV_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.NOTE: "bold cyan"}


def location(sources: SourceMap, span: Span) -> str:
    """``file:line:col`` of a span's start."""
    line, col = sources.location(span)
    return f"{span.file}:{line}:{col}"


_MAX_SNIPPET = 160


def _printable(text: str) -> str:
    """Replace control characters so a hostile policy cannot drive the terminal: a tab becomes a
    space, a space that is not ASCII (Unicode category Zs: U+00A0 pasted from a page) becomes
    `␣` (U+2423), shown where it is, and anything else unprintable (controls, format characters
    such as bidirectional overrides) becomes U+FFFD. One character each, so underlines stay aligned."""
    return "".join(ch if ch.isprintable() else " " if ch == "\t" else "\u2423" if unicodedata.category(ch) == "Zs"
                   else "\ufffd" for ch in text)


def _snippet(sources: SourceMap, span: Span, label: str, style: str) -> list[Line]:
    sf = sources.get(span.file)
    if sf is None:
        return []
    line, col = sf.line_col(span.start)
    end_line, end_col = sf.line_col(max(span.start, span.end))
    text = _printable(sf.line_text(line))
    width = max(1, (end_col - col) if end_line == line else len(text) - col + 1)
    if len(text) > _MAX_SNIPPET:
        # Very long lines: show a window around the span, marked with ellipses.
        start = max(0, col - 1 - 40)
        text = ("…" if start else "") + text[start:start + _MAX_SNIPPET] + "…"
        col = col - start + (1 if start else 0)
        width = min(width, _MAX_SNIPPET - (col - 1))
    gutter = " " * len(str(line))
    return [
        [(f"{gutter} |", "blue")],
        [(f"{line} | ", "blue"), (text, "")],
        [(f"{gutter} | ", "blue"), (" " * (col - 1) + "^" * width, style), ((" " + label) if label else "", style)],
    ]


def snippet(sources: SourceMap, span: Span, label: str = "") -> str:
    """The source line of ``span`` with the span underlined and ``label`` after it, as plain text
    (the lines under ``-->`` in a diagnostic); empty when the file is unknown."""
    return to_plain(_snippet(sources, span, label, ""))


def render_diagnostic(d: Diagnostic, sources: SourceMap) -> list[Line]:
    """Render one diagnostic (with its trace, if any) as styled lines."""
    sev = d.severity.value if d.suppressed_reason is None else "suppressed"
    style = _SEV_STYLE[d.severity] if d.suppressed_reason is None else "dim"
    out: list[Line] = [[(f"{sev}[{d.code}]", style), (f": {d.message}", "bold")]]
    if d.primary is not None:
        out.append([("  --> ", "blue"), (location(sources, d.primary.span), "")])
        out += _snippet(sources, d.primary.span, d.primary.message, style)
    for rel in d.related:
        out.append([("  = related: ", "blue"), (f"{rel.message} at {location(sources, rel.span)}", "")])
    for n in d.notes:
        out.append([("  = note: ", "blue"), (n, "")])
    if d.suppressed_reason is not None:
        out.append([("  = suppressed: ", "blue"), (d.suppressed_reason, "")])
    if d.trace is not None:
        out += render_trace(d.trace, sources)
    elif d.help:
        out.append([("  = help: ", "green"), (d.help, "")])
    return out


def render_trace(t: Trace, sources: SourceMap) -> list[Line]:
    """Render a replayed trace: a table of steps, the violating one marked with ``>>``."""
    out: list[Line] = [[("  trace", "bold"), (" (replayed by the concrete simulator):", "")]]
    rows = [("", "step", "t(ns)", "device.hook", "edge", "event", "what")]
    gaps = {el.before: el for el in t.elided}
    for ev in list(t.events) + [None]:
        el = gaps.get(ev.step if ev is not None else len(t.events) + 1)
        if el is not None:
            rows.append(("", "…", f"{el.start}-{el.end}", "", "", "", el.summary()))
        if ev is None:
            break
        what = ev.detail
        if ev.owner_before is not None:
            what += f"  [owner {ev.owner_before} -> {ev.owner_after}]"
        rows.append((">>" if ev.violation else "", str(ev.step), "-" if ev.time is None else str(ev.time),
                     f"{ev.device}.{ev.hook}" if ev.hook else ev.device, ev.edge, ev.kind, what))
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    for i, r in enumerate(rows):
        cells = "  ".join(r[j].ljust(widths[j]) for j in range(6))
        style = "bold" if i == 0 else ("bold red" if r[0] == ">>" else "")
        out.append([("    " + cells + "  ", style), (r[6], style)])
    for ev in t.events:
        if ev.violation:
            out.append([("    at ", "blue"), (f"`{ev.edge}` {location(sources, ev.span)}", "")])
            break
    for k, v in t.facts:
        out.append([("    witness ", "blue"), (f"{k} = {v}", "")])
    if t.why:
        out.append([("  why: ", "bold magenta"), (t.why, "")])
    if t.fix:
        out.append([("  help: ", "bold green"), (t.fix, "")])
    return out


def render_summary(result: CheckResult, stats: bool = False) -> list[Line]:
    """Summary lines: verdict, obligations per family with how they were discharged; with
    ``stats``, wall time too, and the families whose proofs the result cache gave
    (``CheckResult.reused``; both left out by default so that output is byte-for-byte
    repeatable)."""
    v = result.verdict
    style = {Verdict.PROVED: "bold green", Verdict.REFUTED: "bold red", Verdict.UNKNOWN: "bold yellow"}.get(v, "bold red")
    out: list[Line] = []
    counts = result.counts()
    total = sum(sum(c[k] for k in ("proved", "refuted", "unknown")) for c in counts.values())
    for fam in sorted(counts):
        c = counts[fam]
        methods = ", ".join(f"{k[3:]} {n}" for k, n in sorted(c.items()) if k.startswith("by:"))
        out.append([(f"  {fam:<11}", "bold"), (f" {c['proved']} proved, {c['refuted']} refuted, {c['unknown']} unknown", ""),
                    (f"  ({methods})", "dim")])
    word = v.value if v else "error"
    accepted = sum(c["refuted"] for c in counts.values()) if v is Verdict.PROVED else 0
    if accepted:
        # the gate passes, but a refuted obligation is not a proof: say so in the verdict itself
        word, style = "refuted, accepted", "bold yellow"
    head = [(f"{result.path}: ", "bold"), (word, style),
            (f" — {counted(total, 'obligation')}, {counted(result.solver_calls, 'solver call')}"
             + (f"; {counted(accepted, 'refuted obligation')} accepted as known ({_accepted_by(result)})"
                if accepted else "")
             + _certified(result) + (f", {result.seconds:.2f} s" if stats else "")
             + (f"; proofs of {', '.join(result.reused)} from the cache (inputs unchanged)" if stats and result.reused else ""),
             "")]
    return [head] + out + (_parametric(result) if stats else [])


def _accepted_by(result: CheckResult) -> str:
    """What accepted ``result``'s findings: ``baseline``, ``inline suppressions`` or both."""
    by = [what for what, hit in (("inline suppressions", any(d.suppressed_reason is not None for d in result.diagnostics)),
                                 ("baseline", any(d.baselined for d in result.diagnostics))) if hit]
    return ", ".join(by) or "baseline"


#: How many fallbacks ``--stats`` lists one by one.
_SHOWN_FALLBACKS = 10


def _parametric(result: CheckResult) -> list[Line]:
    """``--stats`` lines of the parametric prover (``CheckResult.parametric``): the obligations it
    proved for every index value at once, per code, and each declaration it left to its unrolled
    instances, with the reason (the first ``_SHOWN_FALLBACKS``)."""
    if not result.parametric:
        return []
    by_code: dict[str, list[int]] = {}
    pairs = {r.code for r in result.parametric if r.before}
    for r in result.parametric:
        c = by_code.setdefault(r.code, [0, 0, 0])
        c[0 if r.proved else 1] += 1
        c[2] += r.instances if r.proved else 0
    out: list[Line] = [[("  parametric " if i == 0 else " " * 13, "bold"),
                        (f"{code}: {c[0]} of {c[0] + c[1]} declaration{' pair' if code in pairs else ''}s proved for every "
                         f"index value ({counted(c[2], 'obligation')} proved at once)", "")]
                       for i, (code, c) in enumerate(sorted(by_code.items()))]
    fallbacks = [r for r in result.parametric if not r.proved]
    for r in fallbacks[:_SHOWN_FALLBACKS]:
        what = f"`{r.family}` before `{r.before}`" if r.before else f"`{r.family}`"
        code = r.code if r.before else f"{r.code}#{r.position}"  # a pair's order has no footprint position
        out.append([("    unrolled ", "dim"), (f"{what} ({r.where}, {counted(r.instances, 'obligation')} discharged on their own) "
                                             f"{code}: {r.reason}", "")])
    if len(fallbacks) > _SHOWN_FALLBACKS:
        out.append([("    unrolled ", "dim"), (f"and {len(fallbacks) - _SHOWN_FALLBACKS} more (JSON --stats lists them all)", "")])
    return out


def _certified(result: CheckResult) -> str:
    """``, N certificates checked[, K rejected]`` under ``--certify``, else nothing."""
    if result.certified is None:
        return ""
    rejected = f", {result.certify_rejected} rejected" if result.certify_rejected else ""
    return f", {counted(result.certified, 'certificate')} checked{rejected}"


def terminal_safe(text: str) -> str:
    """``text`` with every character that is not printable, but a newline, written as ``U+XXXX``
    (a tab as a space): names, paths and reasons come from policies and configuration files, and
    an escape sequence in one must not drive the terminal or a CI log (ECMA-48 control functions:
    ESC, BEL, CSI...) nor a bidirectional override reorder what is shown."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\n" else " " if ch == "\t" else f"U+{ord(ch):04X}" for ch in text)


def to_plain(lines: list[Line]) -> str:
    """Join styled lines into plain text (trailing spaces stripped, ``terminal_safe``)."""
    return "\n".join(terminal_safe("".join(t for t, _ in ln)).rstrip() for ln in lines) + ("\n" if lines else "")


def to_rich(lines: list[Line]) -> "Text":
    """Build a ``rich.text.Text`` with the segments' styles (each segment ``terminal_safe``)."""
    from rich.text import Text

    out = Text()
    for i, ln in enumerate(lines):
        for t, st in ln:
            out.append(terminal_safe(t), style=st or None)
        out.append("\n")
    return out


def render_failures(report: Report) -> list[Line]:
    """``--quiet``: only what fails the gate, each failing policy's diagnostics that fail it (with
    their traces) and its summary line, then one summary line for the run; nothing for a policy
    that passes. A diagnostic fails the gate when it is active (neither suppressed nor baselined)
    and an error, or a warning under ``--fail-on warning``; a crash or an input error always does."""
    failing = {Severity.ERROR} | ({Severity.WARNING} if report.gate.fail_on == "warning" else set())
    lines: list[Line] = []
    for r in report.results:
        bad = [d for d in r.diagnostics if d.active and d.severity in failing]
        if not bad and r.verdict is not None:
            continue
        for d in bad:
            lines += render_diagnostic(d, r.sources) + [[("", "")]]
        lines += render_summary(r, stats=report.stats)[:1]
    t = report.totals()
    crashed = f", internal error {t['internal_error']}" if t["internal_error"] else ""
    lines.append([("summary: ", "bold"), (
        f"{counted(t['policies'], 'policy', 'policies')} (proved {t['proved']}, refuted {t['refuted']}, unknown "
        f"{t['unknown']}, input error {t['error']}{crashed}); {counted(t['obligations'], 'obligation')} (proved "
        f"{t['obligations_proved']}, refuted {t['obligations_refuted']}, unknown {t['obligations_unknown']})", "")])
    return lines + _gate_notes(report)


def _gate_notes(report: Report) -> list[Line]:
    """What the run left out or let pass: rules not checked (``--select``/``--ignore``), and a
    soft-fail that exits 0 although findings fail the gate (``--exit-zero``)."""
    out: list[Line] = []
    if report.skipped_rules:
        n = len(report.skipped_rules)
        names = ", ".join(report.skipped_rules) if n <= 8 else ", ".join(report.skipped_rules[:8]) + ", ..."
        out.append([("  rules not checked ", "yellow"), (f"({counted(n, 'rule')}, --select/--ignore): {names}", "")])
    if report.gate.exit_zero and report.would_fail:
        out.append([("  soft-fail: ", "bold yellow"), ("findings fail the gate (exit 1 without --exit-zero); exiting 0", "")])
    return out


def render_report(report: Report, quiet: bool = False) -> list[Line]:
    """A whole run (``gate.Report``): each policy's diagnostics (findings a baseline accepted are
    left out) and summary, stale baseline entries, then the run's summary table. Wall time and
    cache counts appear only with ``report.stats``. ``quiet``: ``render_failures``."""
    if quiet:
        return render_failures(report)
    lines: list[Line] = []
    for r in report.results:
        for d in r.diagnostics:
            if not d.baselined:
                lines += render_diagnostic(d, r.sources) + [[("", "")]]
        lines += render_summary(r, stats=report.stats)
    b = report.baseline
    if b is not None:
        lines.append([("", "")])
        verb = "dropped from" if b.updated else "no longer occur; `--update-baseline` drops them from"
        lines.append([("baseline ", "bold"), (f"{b.path}: {counted(b.matched, 'known finding')} accepted, "
                                               f"{counted(len(b.stale), 'stale entry', 'stale entries')}", "")])
        for e in b.stale:
            lines.append([("  stale ", "yellow"), (f"{e.code} in {e.path} ({', '.join(e.edges) or e.policy}): {e.message}", "")])
        if b.stale:
            lines.append([("  = note: ", "blue"), (f"these entries {verb} the baseline", "")])
    t = report.totals()
    rows = [("", "policies", "obligations"),
            ("proved", str(t["proved"]), str(t["obligations_proved"])),
            ("refuted", str(t["refuted"]), str(t["obligations_refuted"])),
            ("unknown", str(t["unknown"]), str(t["obligations_unknown"])),
            ("input error", str(t["error"]), "-"),
            *([("internal error", str(t["internal_error"]), "-")] if t["internal_error"] else []),
            ("suppressed findings", "-", str(t["suppressed"])),
            ("total", str(t["policies"]), str(t["obligations"]))]
    if t["baselined"] or b is not None:
        rows.insert(-1, ("baselined findings", "-", str(t["baselined"])))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines.append([("", "")])
    lines.append([("summary", "bold")])
    for i, (a, p, o) in enumerate(rows):
        lines.append([(f"  {a:<{w[0]}}  {p:>{w[1]}}  {o:>{w[2]}}", "bold" if i in (0, len(rows) - 1) else "")])
    certified = [r for r in report.results if r.certified is not None]
    if certified:
        n, k = sum(r.certified or 0 for r in certified), sum(r.certify_rejected for r in certified)
        lines.append([(f"  certificates of fast proofs: {n} checked, {k} rejected", "bold red" if k else "")])
    lines += _gate_notes(report)
    if report.stats:
        c = report.cache
        checked = sum(1 for r in report.results if not r.from_cache)  # with or without a cache
        lines.append([(f"  time {report.seconds:.2f} s; policies from cache {c.policy_hits}, checked {checked}; "
                       f"solver queries: cache hits {c.hits}, misses {c.misses}, solved {c.solved}"
                       + (f"; workers lost {c.workers_lost} (their work ran in this process)" if c.workers_lost else ""),
                       "yellow" if c.workers_lost else "dim")])
    return lines
