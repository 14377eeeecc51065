"""Serialising results: ``CheckResult`` <-> plain JSON-ready records, for the result cache and
the worker processes of ``--jobs``.

Takes a ``CheckResult`` (with its diagnostics, traces, outcomes, refutations and the fixes its
hints verified, as ``edits.records``) and produces
nested dicts, lists, strings and numbers that ``json`` can write; and back. The record keeps
everything the renderers and the lowering use, and leaves out the resolved ``Policy``
(``result.policy`` is ``None`` after a round trip). Source texts are not in the record: the caller
passes them back as a ``SourceMap``. Rendering a result before and after a round trip gives the
same bytes. Emits no diagnostics.
"""

from __future__ import annotations

import base64
from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any

from fxverify.diagnostics.codes import Severity, lookup_strict
from fxverify.diagnostics.model import Diagnostic, Elided, Label, Trace, TraceEvent
from fxverify.edits.records import from_record, to_record
from fxverify.obligations.witness import Witness
from fxverify.obligations.parametric import Report
from fxverify.result import CheckResult, HintCheck, Outcome, OutcomeLog, Refutation, Verdict
from fxverify.source import SourceMap, Span

#: Bumped whenever the record layout changes, so old cache entries are never misread.
RECORD_VERSION = 6


def _span(s: Span) -> list:
    return [s.file, s.start, s.end]


def _unspan(v: list) -> Span:
    return Span(str(v[0]), int(v[1]), int(v[2]))


def _label(lab: Label | None) -> list | None:
    return None if lab is None else [_span(lab.span), lab.message]


def _unlabel(v: list | None) -> Label | None:
    return None if v is None else Label(_unspan(v[0]), v[1])


def _trace(t: Trace | None) -> dict | None:
    if t is None:
        return None
    return {"code": t.code, "why": t.why, "fix": t.fix, "facts": [list(f) for f in t.facts],
            "events": [[e.step, e.time, e.device, e.hook, e.edge, e.kind, e.detail, _span(e.span),
                        e.owner_before, e.owner_after, e.violation, e.stream] for e in t.events],
            "elided": [[el.before, el.start, el.end, el.events, list(el.edges)] for el in t.elided]}


def _untrace(v: dict | None) -> Trace | None:
    if v is None:
        return None
    events = tuple(TraceEvent(step=e[0], time=e[1], device=e[2], hook=e[3], edge=e[4], kind=e[5], detail=e[6],
                              span=_unspan(e[7]), owner_before=e[8], owner_after=e[9], violation=bool(e[10]),
                              stream=e[11])
                   for e in v["events"])
    return Trace(code=lookup_strict(v["code"]), events=events, why=v["why"], fix=v["fix"],
                 facts=tuple((str(a), str(b)) for a, b in v["facts"]),
                 elided=tuple(Elided(before=g[0], start=g[1], end=g[2], events=g[3], edges=tuple(g[4]))
                              for g in v["elided"]))


def diagnostic_to_record(d: Diagnostic) -> dict[str, Any]:
    """``d`` as a JSON-ready dict (every field, the trace included)."""
    return {"code": d.code, "severity": d.severity.value, "message": d.message, "primary": _label(d.primary),
            "related": [_label(r) for r in d.related], "notes": list(d.notes), "help": d.help,
            "trace": _trace(d.trace), "suppressed": d.suppressed_reason, "policy": d.policy,
            "obligation": d.obligation, "edges": list(d.edges), "witness": d.witness, "baselined": d.baselined}


def diagnostic_from_record(v: dict[str, Any]) -> Diagnostic:
    """Inverse of ``diagnostic_to_record``. Raises ``KeyError``/``ValueError``/``TypeError`` on a
    malformed record (the cache treats that as a corrupted entry)."""
    return Diagnostic(lookup_strict(v["code"]), Severity(v["severity"]), v["message"], _unlabel(v["primary"]),
                      tuple(_unlabel(r) for r in v["related"]), tuple(v["notes"]), v["help"], _untrace(v["trace"]),
                      v["suppressed"], v["policy"], v["obligation"], tuple(v["edges"]), v["witness"],
                      bool(v["baselined"]))


def _witness(w: Witness) -> dict[str, Any]:
    return {"schedule": [[e, s, f] for e, (s, f) in sorted(w.schedule.items())], "address": w.address, "space": w.space,
            "elements": [[e, k] for e, k in sorted(w.elements.items())], "values": [[k, v] for k, v in w.values.items()],
            "cycle": list(w.cycle), "other": [[e, s, f] for e, (s, f) in sorted(w.other_schedule.items())]}


def _unwitness(v: dict[str, Any]) -> Witness:
    return Witness(schedule={int(e): (int(s), int(f)) for e, s, f in v["schedule"]},
                   address=None if v["address"] is None else int(v["address"]), space=v["space"],
                   elements={int(e): int(k) for e, k in v["elements"]},
                   values={str(k): x if isinstance(x, str) else int(x) for k, x in v["values"]},
                   cycle=[int(e) for e in v["cycle"]],
                   other_schedule={int(e): (int(s), int(f)) for e, s, f in v["other"]})


def result_to_record(r: CheckResult) -> dict[str, Any]:
    """``r`` as a JSON-ready dict. A real policy has hundreds of thousands of outcomes, so they are
    stored compactly: the keys as one newline-joined string, and per outcome the index of its
    ``(code, verdict, method, reason)`` kind, as base64 of 32-bit integers. The counts per family
    are stored too, so a summary never needs to decode the outcomes."""
    # A check's own log is packed without decoding an outcome; other sequences are logged first.
    log = r.outcomes if isinstance(r.outcomes, OutcomeLog) else OutcomeLog.of(r.outcomes)
    keys, log_kinds, ids = log.packed()
    kinds = [[c, v.value, m, why] for c, v, m, why in log_kinds]
    return {"version": RECORD_VERSION, "path": r.path, "name": r.name, "solver_calls": r.solver_calls,
            "keys": keys, "kinds": kinds,
            "kind_ids": base64.b64encode(ids.tobytes()).decode("ascii"),
            "counts": {fam: dict(c) for fam, c in r.counts().items()},
            "diagnostics": [diagnostic_to_record(d) for d in r.diagnostics],
            "refutations": [[x.key, x.code, list(x.edges), _witness(x.witness)] for x in r.refutations],
            "hints": {k: [c.status, [to_record(o) for o in c.shown], c.tried] for k, c in r.hints.items()},
            **({"certified": [r.certified, r.certify_rejected]} if r.certified is not None else {}),
            **({"reused": list(r.reused)} if r.reused else {}),
            **({"parametric": [list(x) for x in r.parametric]} if r.parametric else {})}


class _Outcomes(Sequence):
    """The outcomes of a record, decoded on first use (most reports only need the counts)."""

    def __init__(self, keys: str, kinds: list, ids: bytes) -> None:
        self._raw: tuple | None = (keys, kinds, ids)
        self._items: list[Outcome] = []

    def _decode(self) -> list[Outcome]:
        if self._raw is not None:
            keys, kinds, ids = self._raw
            proto = [(lookup_strict(str(c)), Verdict(s), str(m), str(why)) for c, s, m, why in kinds]
            idx = array("I")
            idx.frombytes(ids)
            names = keys.split("\n") if keys else []
            if len(names) != len(idx):
                raise ValueError("outcome keys and kinds differ in length")
            self._items = [Outcome(k, *proto[i]) for k, i in zip(names, idx)]
            self._raw = None
        return self._items

    def __len__(self) -> int:
        return len(self._decode())

    def __getitem__(self, i):
        return self._decode()[i]

    def __iter__(self):
        return iter(self._decode())


def result_from_record(v: dict[str, Any], sources: SourceMap) -> CheckResult:
    """Inverse of ``result_to_record``; ``sources`` holds the texts the spans point into.
    Raises ``KeyError``/``ValueError``/``TypeError``/``IndexError`` on a malformed record."""
    if v.get("version") != RECORD_VERSION:
        raise ValueError(f"record version {v.get('version')!r}")
    ids = base64.b64decode(v["kind_ids"], validate=True)
    if len(ids) % array("I").itemsize or any(len(k) != 4 for k in v["kinds"]):
        raise ValueError("malformed outcome kinds")
    counts = {str(fam): Counter({str(k): int(n) for k, n in c.items()}) for fam, c in v["counts"].items()}
    refutations = [Refutation(str(k), lookup_strict(c), tuple(int(e) for e in edges), _unwitness(w))
                   for k, c, edges, w in v["refutations"]]
    certified = v.get("certified")
    hints = {str(k): HintCheck(str(st), tuple(from_record(o) for o in shown), int(n)) for k, (st, shown, n) in v["hints"].items()}
    return CheckResult(v["path"], None, sources, outcomes=_Outcomes(str(v["keys"]), v["kinds"], ids),
                       diagnostics=[diagnostic_from_record(d) for d in v["diagnostics"]], refutations=refutations,
                       solver_calls=int(v["solver_calls"]), name=v["name"], tally=counts,
                       certified=None if certified is None else int(certified[0]),
                       certify_rejected=0 if certified is None else int(certified[1]), hints=hints,
                       reused=tuple(str(f) for f in v.get("reused", ())),
                       parametric=tuple(Report(str(f), str(at), str(c), int(pos), int(n), str(why), *map(str, before))
                                        for f, at, c, pos, n, why, *before in v.get("parametric", ())))
