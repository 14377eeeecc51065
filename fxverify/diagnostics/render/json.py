"""Machine-readable rendering (``--format json``).

Produces one JSON document per run: for each policy, its verdict, obligation counts per family
and method, and every diagnostic with code, severity, message, spans (file, line, column, offsets),
related spans, notes, help, suppression and the replayed trace. Keys are sorted; output is
deterministic unless ``stats=True`` adds the wall time (``seconds``).
"""

from __future__ import annotations

import json
from typing import Any

from fxverify.diagnostics.model import Diagnostic, Label
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
    }
    if d.trace is not None:
        t = d.trace
        out["trace"] = {
            "why": t.why, "fix": t.fix, "witness": dict(t.facts),
            "events": [{"step": e.step, "time_ns": e.time, "device": e.device, "hook": e.hook, "edge": e.edge,
                        "event": e.kind, "detail": e.detail, "owner_before": e.owner_before,
                        "owner_after": e.owner_after, "violation": e.violation,
                        "location": _span(sources, Label(e.span))} for e in t.events],
        }
    return out


def results_to_json(results: list, stats: bool = False) -> str:
    """Render ``CheckResult``s as one JSON document (sorted keys, two-space indent)."""
    docs = []
    for r in results:
        counts = {fam: dict(sorted(c.items())) for fam, c in sorted(r.counts().items())}
        doc: dict[str, Any] = {
            "policy": r.path,
            "verdict": r.verdict.value if r.verdict else "error",
            "obligations": counts,
            "solver_calls": r.solver_calls,
            "diagnostics": [diagnostic_to_json(d, r.sources) for d in r.diagnostics],
        }
        if stats:
            doc["seconds"] = round(r.seconds, 3)
        docs.append(doc)
    return json.dumps({"fxverify": 1, "results": docs}, indent=2, sort_keys=True) + "\n"
