"""SARIF 2.1.0 rendering (``--format sarif``), for code scanning and review tools.

Takes a ``gate.Report``; produces one ``sarifLog`` (OASIS SARIF 2.1.0, the section numbers below
refer to that standard):
- ``tool.driver`` (3.19) with ``fullName``, ``informationUri`` (the repository this fxverify
  came from, ``fxverify.origin``, when it is known) and ``rules`` (3.19.23): one
  ``reportingDescriptor`` per code of the registry, with ``shortDescription``,
  ``fullDescription``, ``help`` (the rule and why it matters as text; as Markdown the whole explanation,
  the code's section of ``specs/codes.md`` with its examples), ``helpUri`` (that section at this fxverify's commit, when known)
  and ``defaultConfiguration.level`` (3.49);
- ``automationDetails`` (3.17) ``fxverify/``: the category code scanning files the run under;
- one ``result`` (3.27) per diagnostic, with ``ruleId``/``ruleIndex``, ``level``, ``locations``
  (the primary span) and ``relatedLocations`` (3.27.22), each linked from the message as
  ``[text](id)`` (3.11.6; GitHub shows only related locations linked so), other square brackets
  of the text escaped (3.11.5);
- each replayed trace as ``codeFlows`` (3.36) with one ``threadFlow`` (3.37) per thread of
  execution: a device's stream, or an edge on no stream (BRIEF section 2: nothing else orders
  the edges of one device, so two streams are two threads), and the device itself for region
  facts; the thread holding the violating step comes first (viewers such as VS Code's show the
  first one). Every step is a ``threadFlowLocation`` (3.38) with its location, message, global
  ``executionOrder`` and ``importance`` (``essential`` for the violating step);
- ``partialFingerprints`` (3.27.17) under ``fxverify/v1``: the fingerprint of
  ``fxverify.diagnostics.fingerprint``, free of line numbers;
- with ``check --pictures DIR``, each trace's SVG swimlane as an ``attachment`` (3.27.26);
- inline suppressions as ``suppressions`` of kind ``inSource`` with the reason as
  ``justification`` (3.35); with a baseline, ``baselineState`` ``new`` (3.27.24), and the stale
  entries in the run's property bag;
- ``columnKind`` ``unicodeCodePoints`` (3.14.5): fxverify counts characters, not UTF-16 units.
Rules not checked in the run (``--select``/``--ignore``) are the invocation's
``ruleConfigurationOverrides`` with ``enabled: false`` (3.20.5). A crashed check is a result of
rule FX-INT-001, and the invocation is not successful (3.20.14).
Output is deterministic.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fxverify import __version__
from fxverify.diagnostics.codes import REGISTRY, Severity
from fxverify.diagnostics.explain import anchor, code_markdown, load_examples, load_incidents
from fxverify.diagnostics.fingerprint import FINGERPRINT_VERSION, fingerprint
from fxverify.diagnostics.model import Diagnostic, Label, TraceEvent
from fxverify.origin import origin
from fxverify.gate.report import Report
from fxverify.render.pictures import picture_names
from fxverify.source import SourceMap, Span

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def artifact_uri(path: str) -> str:
    """A policy path as a SARIF ``artifactLocation.uri`` (3.4.3): a relative reference with forward
    slashes for relative paths (resolved against the repository root by code scanning), a ``file``
    URI for absolute ones."""
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(Path(path).as_posix(), safe="/-._~")


def rule_name(title: str) -> str:
    """A rule's ``name`` (3.49.7): its title in PascalCase without articles, for example
    ``CyclicHappensBefore`` or ``NotTextFile`` (a one-letter word would put two capitals side by
    side, which the SARIF multitool's rule SARIF2012 does not read as PascalCase)."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+", title) if w.lower() not in ("a", "an", "the")]
    return "".join(w[:1].upper() + w[1:] for w in words)


#: Where the rules are documented, relative to the repository root (``helpUri`` points into it).
CODES_PAGE = "specs/codes.md"

#: The run's ``automationDetails.id``: a category only (the trailing ``/``), which code scanning
#: uses to keep fxverify's alerts apart from other tools' (GitHub docs, "SARIF support").
CATEGORY = "fxverify/"


def _rules() -> list[dict[str, Any]]:
    examples, incidents = load_examples(), load_incidents()
    where = origin()
    out = []
    for c in REGISTRY.values():
        rule: dict[str, Any] = {
            "id": str(c), "name": rule_name(c.title),
            "shortDescription": {"text": c.title},
            "fullDescription": {"text": f"{c.rule}."},
            # The text form (for viewers without Markdown) stays short; the Markdown one is the
            # whole explanation, which is what code scanning shows beside an alert.
            "help": {"text": f"{c.rule}. Why it matters: {c.why}. `fxverify explain {c}` shows a failing and a "
                             "fixed example.",
                     "markdown": "\n".join([f"**{c}: {c.title}**", "", *code_markdown(c, examples, incidents)]).rstrip() + "\n"},
            "defaultConfiguration": {"level": _LEVEL[c.severity]},
            "properties": {"tags": [c.family.value]},
        }
        uri = where.blob(CODES_PAGE, anchor(c))
        if uri is not None:
            rule["helpUri"] = uri
        out.append(rule)
    return out


def escape_text(s: str) -> str:
    """Plain text for a SARIF message: ``\\``, ``[`` and ``]`` escaped with a backslash (3.11.5),
    so that only the links we embed are read as links (``kv[3]`` stays text)."""
    return s.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _physical(sources: SourceMap, span: Span) -> dict[str, Any]:
    sf = sources.get(span.file)
    loc: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(span.file)}}
    if sf is not None:
        l0, c0 = sf.line_col(span.start)
        l1, c1 = sf.line_col(max(span.start, span.end))
        loc["region"] = {"startLine": l0, "startColumn": c0, "endLine": l1, "endColumn": c1,
                         "snippet": {"text": sf.text[span.start:span.end]}}
    return loc


def _location(sources: SourceMap, lab: Label, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {**extra, "physicalLocation": _physical(sources, lab.span)}
    if lab.message:
        out["message"] = {"text": escape_text(lab.message)}
    return out


def thread_of(ev: TraceEvent) -> tuple[str, str]:
    """The thread of execution a trace step runs on, as ``(id, description)``: the device and its
    stream (``gpu0/stream copy``), or for an edge on no stream the edge itself (``gpu0/edge attn``:
    such an edge is ordered with nothing on its device but its ``after`` clauses), or for a region
    fact the device alone."""
    if ev.kind == "region" and not ev.hook:
        return ev.device, f"device `{ev.device}`"
    if ev.stream is not None:
        return f"{ev.device}/stream {ev.stream}", f"device `{ev.device}`, stream `{ev.stream}`"
    return f"{ev.device}/edge {ev.edge}", f"device `{ev.device}`, edge `{ev.edge}` (on no stream)"


def _code_flows(d: Diagnostic, sources: SourceMap) -> list[dict[str, Any]]:
    t = d.trace
    threads: dict[str, list[dict[str, Any]]] = {}
    described: dict[str, str] = {}
    for ev in t.events:
        when = "" if ev.time is None else f"t={ev.time} ns: "
        text = f"{when}`{ev.edge}` {ev.kind}: {ev.detail}"
        if ev.owner_before is not None:
            text += f" (owner {ev.owner_before} -> {ev.owner_after})"
        if ev.violation:
            text += f" <- violation: {t.why}" if t.why else " <- violation"
        tid, what = thread_of(ev)
        described[tid] = what
        props: dict[str, Any] = {"device": ev.device, "hook": ev.hook, "edge": ev.edge}
        if ev.stream is not None:
            props["stream"] = ev.stream
        threads.setdefault(tid, []).append({
            "location": {"physicalLocation": _physical(sources, ev.span), "message": {"text": escape_text(text)}},
            "executionOrder": ev.step,
            "importance": "essential" if ev.violation else "important",
            "kinds": [ev.kind],
            "properties": props,
        })
    # The violating thread first; the others in order of their first step (dicts keep insertion order).
    order = sorted(threads, key=lambda tid: not any(loc["importance"] == "essential" for loc in threads[tid]))
    flows = [{"id": tid, "message": {"text": escape_text(described[tid])}, "locations": threads[tid]} for tid in order]
    msg = t.why or d.message
    if t.fix:
        msg += f"; fix: {t.fix}"
    return [{"message": {"text": escape_text(msg)}, "threadFlows": flows}]


def _message(d: Diagnostic) -> str:
    """The result's message: the diagnostic's message, a link to each related location
    (``[label](id)``, ids from 1 as ``relatedLocations`` numbers them), and the help."""
    text = escape_text(d.message)
    if d.related:
        links = [f"[{escape_text(r.message or 'related location')}]({i + 1})" for i, r in enumerate(d.related)]
        text += "\nrelated: " + "; ".join(links)
    if d.help:
        text += "\nhelp: " + escape_text(d.help)
    return text


def _result(d: Diagnostic, sources: SourceMap, index: dict[str, int], with_baseline: bool,
            picture: str | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {
        "ruleId": d.code, "ruleIndex": index[d.code], "level": _LEVEL[d.severity], "message": {"text": _message(d)},
        "partialFingerprints": {f"fxverify/v{FINGERPRINT_VERSION}": fingerprint(d)},
    }
    if d.primary is not None:
        res["locations"] = [_location(sources, d.primary)]
    if d.related:
        res["relatedLocations"] = [_location(sources, r, id=i + 1) for i, r in enumerate(d.related)]
    if d.trace is not None:
        res["codeFlows"] = _code_flows(d, sources)
    if picture is not None:
        res["attachments"] = [{"description": {"text": "swimlane picture of the trace (SVG)"},
                               "artifactLocation": {"uri": artifact_uri(picture)}}]
    if d.suppressed_reason is not None:
        res["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": d.suppressed_reason}]
    if with_baseline:
        res["baselineState"] = "new"
    props: dict[str, Any] = {}
    if d.edges:
        props["edges"] = list(d.edges)
    if d.witness:
        props["witnessKind"] = d.witness
    if d.trace is not None and d.trace.facts:
        props["witness"] = dict(d.trace.facts)
    if d.trace is not None and d.trace.elided:
        # HB predecessors the threadFlows leave out, though the replayed schedule times them
        props["elided"] = [el.summary() for el in d.trace.elided]
    if d.notes:
        props["notes"] = list(d.notes)
    if props:
        res["properties"] = props
    return res


def report_to_sarif(report: Report, pictures: str | None = None) -> str:
    """Render a ``gate.Report`` as a SARIF 2.1.0 log (JSON text, sorted keys, two-space indent).
    ``pictures`` is the folder of the trace pictures (``render.pictures``), as the policy paths
    are given: each traced result then links its SVG as an ``attachment`` (3.27.26)."""
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    with_baseline = report.baseline is not None
    names = picture_names(report) if pictures is not None else {}
    results = [_result(d, r.sources, index, with_baseline,
                       f"{pictures.rstrip('/')}/{names[id(d)]}" if id(d) in names else None)
               for r in report.results for d in r.diagnostics if not d.baselined]
    invocation: dict[str, Any] = {"executionSuccessful": report.exit_code in (0, 1), "exitCode": report.exit_code}
    if report.skipped_rules:  # --select/--ignore: the rules this run did not check (3.20.5, 3.51)
        invocation["ruleConfigurationOverrides"] = [
            {"descriptor": {"id": c, "index": index[c]}, "configuration": {"enabled": False}} for c in report.skipped_rules]
    where = origin()
    driver: dict[str, Any] = {"name": "fxverify", "fullName": f"fxverify {__version__}" + (
        f" ({where.commit[:12]})" if where.commit else ""), "version": __version__, "semanticVersion": __version__,
        "rules": rules}
    if where.web() is not None:
        driver["informationUri"] = where.web()
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "automationDetails": {"id": CATEGORY, "description": {
            "text": "fxverify check: happens-before, alias, ownership, map, transform and fabric obligations"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": results,
    }
    if with_baseline:
        run["properties"] = {"baseline": report.baseline.path, "baselineMatched": report.baseline.matched,
                             "staleBaselineEntries": [{"fingerprint": e.fingerprint, "code": e.code, "path": e.path,
                                                       "message": e.message} for e in report.baseline.stale]}
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
