"""Machine-readable rendering (``--format json``); the schema is specified in ``specs/output.md``.

Produces one JSON document per run: for each policy, its verdict, obligation counts per family
and method, and every diagnostic with code, severity, message, spans (file, line, column, offsets),
related spans, notes, help, suppression, fingerprint and the replayed trace; then the run's
summary, the baseline outcome and the exit code. Findings accepted by a baseline are left out
(they are counted). Keys are sorted; output is deterministic unless ``stats=True`` adds wall times
and cache counts.
"""

from __future__ import annotations

import json
from typing import Any

from fxverify.diagnostics.fingerprint import fingerprint
from fxverify import __version__
from fxverify.diagnostics.model import Diagnostic, Label
from fxverify.gate.report import Report
from fxverify.result import CheckResult
from fxverify.source import SourceMap


def _span(sources: SourceMap, lab: Label | None) -> dict[str, Any] | None:
    if lab is None:
        return None
    line, col = sources.location(lab.span)
    return {"file": lab.span.file, "line": line, "column": col, "start": lab.span.start, "end": lab.span.end,
            "label": lab.message}


def diagnostic_to_json(d: Diagnostic, sources: SourceMap) -> dict[str, Any]:
    """One diagnostic as a JSON-ready dict."""
    out: dict[str, Any] = {
        "code": d.code, "severity": d.severity.value, "message": d.message,
        "primary": _span(sources, d.primary), "related": [_span(sources, r) for r in d.related],
        "notes": list(d.notes), "help": d.help, "suppressed": d.suppressed_reason,
        "fingerprint": fingerprint(d), "edges": list(d.edges), "witness_kind": d.witness,
    }
    if d.trace is not None:
        t = d.trace
        out["trace"] = {
            "why": t.why, "fix": t.fix, "witness": dict(t.facts),
            "events": [{"step": e.step, "time_ns": e.time, "device": e.device, "hook": e.hook, "edge": e.edge,
                        "event": e.kind, "detail": e.detail, "stream": e.stream, "owner_before": e.owner_before,
                        "owner_after": e.owner_after, "violation": e.violation,
                        "location": _span(sources, Label(e.span))} for e in t.events],
        }
        if t.elided:
            out["trace"]["elided"] = [{"before_step": el.before, "start_ns": el.start, "end_ns": el.end,
                                       "events": el.events, "edges": list(el.edges)} for el in t.elided]
    return out


def _results(results: list[CheckResult], stats: bool) -> list[dict[str, Any]]:
    docs = []
    for r in results:
        counts = {fam: dict(sorted(c.items())) for fam, c in sorted(r.counts().items())}
        doc: dict[str, Any] = {
            "policy": r.path,
            "verdict": r.verdict.value if r.verdict else "error",
            "obligations": counts,
            "solver_calls": r.solver_calls,
            "name": r.name,
            "diagnostics": [diagnostic_to_json(d, r.sources) for d in r.diagnostics if not d.baselined],
        }
        if r.certified is not None:
            doc["certificates"] = {"checked": r.certified, "rejected": r.certify_rejected}
        if stats:
            doc["seconds"] = round(r.seconds, 3)
            doc["cache"] = {"policy_hit": r.from_cache, "obligation_hits": r.cache_hits, "solved": r.solved,
                            "families_reused": list(r.reused)}
            doc["parametric"] = [{"family": p.family, "at": p.where, "code": p.code, "footprint": p.position,
                                  "instances": p.instances, "proved": p.proved, "reason": p.reason,
                                  **({"before": p.before} if p.before else {})} for p in r.parametric]
        docs.append(doc)
    return docs


def results_to_json(results: list[CheckResult], stats: bool = False) -> str:
    """Render ``CheckResult``s as one JSON document (sorted keys, two-space indent)."""
    return json.dumps({"fxverify": 1, "results": _results(results, stats)}, indent=2, sort_keys=True) + "\n"


def report_to_json(report: Report) -> str:
    """Render a ``gate.Report`` as the JSON document of ``specs/output.md``."""
    doc: dict[str, Any] = {"fxverify": 1, "tool": {"name": "fxverify", "version": __version__},
                           "results": _results(report.results, report.stats), "summary": report.totals(),
                           "exit_code": report.exit_code, "baseline": None}
    certified = [r for r in report.results if r.certified is not None]
    if certified:
        doc["summary"]["certificates_checked"] = sum(r.certified or 0 for r in certified)
        doc["summary"]["certificates_rejected"] = sum(r.certify_rejected for r in certified)
    if report.baseline is not None:
        b = report.baseline
        doc["baseline"] = {"file": b.path, "matched": b.matched, "updated": b.updated,
                           "stale": [{"fingerprint": e.fingerprint, "code": e.code, "policy": e.policy, "path": e.path,
                                      "edges": list(e.edges), "message": e.message} for e in b.stale]}
    if report.skipped_rules:
        doc["skipped_rules"] = list(report.skipped_rules)
    if report.gate.exit_zero:
        doc["soft_fail"] = {"would_fail": report.would_fail}
    if report.stats:
        c = report.cache
        doc["stats"] = {"seconds": round(report.seconds, 3), "obligation_hits": c.hits, "obligation_misses": c.misses,
                        "solved": c.solved, "policy_hits": c.policy_hits, "policy_misses": c.policy_misses,
                        "workers_lost": c.workers_lost}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
