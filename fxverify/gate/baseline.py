"""Baselines: accepted findings recorded by fingerprint, so a gate reports only new ones.

Takes ``CheckResult``s and a baseline file; produces ``BaselineEntry`` lists, marks the findings a
baseline accepts (``Diagnostic.baselined``) and finds stale entries. The file is JSON (sorted keys,
two-space indent, entries sorted), documented in ``specs/output.md``:
``{"fxverify_baseline": 1, "entries": [{"fingerprint", "code", "policy", "path", "edges",
"witness", "message"}]}``. The fingerprint decides a match, and the path which of several files
with that finding an entry belongs to (``apply_baseline``); the other fields are there for the
person reviewing the file. Emits no diagnostics; a file that cannot be read or decoded raises
``BaselineError``, which the gate reports as FX-GATE-001 (exit code 2).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from fxverify.diagnostics.fingerprint import fingerprint
from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.errors import FxError
from fxverify.fileio import NotUtf8, decode_utf8, read_regular
from fxverify.result import CheckResult
from fxverify.source import Span

BASELINE_VERSION = 1


class BaselineError(FxError):
    """A baseline file is missing, unreadable or not a baseline (an environment failure). When
    the problem is at a place in the file (a byte that is not UTF-8, a JSON syntax error),
    ``span`` points at it with ``label``, ``text`` is the file's text to quote (else both are
    ``None``), and ``notes`` say what was found there."""

    def __init__(self, message: str, span: Span | None = None, text: str | None = None, label: str = "",
                 notes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.span, self.text, self.label, self.notes = span, text, label, notes


@dataclass(frozen=True, order=True)
class BaselineEntry:
    """One accepted finding. ``path`` is the policy file as it was named when recorded."""

    path: str
    code: str
    fingerprint: str
    policy: str
    edges: tuple[str, ...]
    witness: str
    message: str


def baselinable(d: Diagnostic) -> bool:
    """Findings a baseline can accept: active errors and warnings of a loaded policy (not notes,
    not input or internal errors, not unknown verdicts, not already suppressed). An unknown
    verdict (FX-SMT-001) is never accepted: unknown is never a pass (BRIEF section 1); with
    ``--unknown warn`` it is a warning that does not fail the gate anyway. Nor is a
    happens-before cycle (FX-ORD-001): with one, no other obligation of the policy is checked
    (``obligations.families.generate``), so accepting it would pass a policy nothing verified."""
    return (d.active and d.severity is not Severity.NOTE and bool(d.policy)
            and d.code not in (codes.INT_001, codes.SMT_001, codes.ORD_001))


def entries_from(results: list[CheckResult]) -> list[BaselineEntry]:
    """The baseline entries of every baselinable finding in ``results``, sorted, one per
    fingerprint and path."""
    out = {BaselineEntry(r.path, d.code, fingerprint(d), d.policy, d.edges, d.witness, d.message)
           for r in results for d in r.diagnostics if baselinable(d)}
    return sorted(out)


def dump_baseline(entries: list[BaselineEntry]) -> str:
    """The baseline file's text for ``entries``."""
    rows = [{**asdict(e), "edges": list(e.edges)} for e in sorted(entries)]
    return json.dumps({"fxverify_baseline": BASELINE_VERSION, "entries": rows}, indent=2, sort_keys=True) + "\n"


def read_baseline(path: str) -> list[BaselineEntry]:
    """Read a baseline file. Raises ``BaselineError`` with a one-line reason, and the place in the
    file when there is one (the first byte that is not UTF-8, a JSON syntax error)."""
    try:
        text = decode_utf8(read_regular(path))
    except FileNotFoundError:
        raise BaselineError(f"baseline `{path}` does not exist") from None
    except OSError as err:
        raise BaselineError(f"cannot read baseline `{path}`: {err.strerror or err}") from None
    except NotUtf8 as err:
        raise BaselineError(f"baseline `{path}` is not UTF-8 text", Span(path, err.at, err.at + 1), err.shown,
                            "not UTF-8", (f"found {err.found}",)) from None
    bom = 1 if text.startswith("\ufeff") else 0  # a byte order mark an editor put first: read past it
    try:
        doc = json.loads(text[bom:])
    except json.JSONDecodeError as err:
        at = err.pos + bom
        raise BaselineError(f"baseline `{path}` is not JSON: {err.msg}", Span(path, at, at + 1), text, "here") from None
    except (ValueError, RecursionError) as err:  # nesting past the decoder's stack, an integer of too many digits
        raise BaselineError(f"baseline `{path}` is not readable JSON: {err}") from None
    version = doc.get("fxverify_baseline") if isinstance(doc, dict) else None
    if type(version) is not int or version != BASELINE_VERSION or not isinstance(doc.get("entries"), list):
        raise BaselineError(f"`{path}` is not an fxverify baseline (version {BASELINE_VERSION})")
    out = []
    fields = ("path", "code", "fingerprint", "policy", "edges", "witness", "message")
    for i, e in enumerate(doc["entries"]):
        if not isinstance(e, dict):
            raise BaselineError(f"baseline `{path}`: entry {i + 1} is not an object")
        missing = [f for f in fields if f not in e]
        if missing:
            raise BaselineError(f"baseline `{path}`: entry {i + 1} lacks " + ", ".join(f"`{f}`" for f in missing))
        if not all(isinstance(e[f], str) for f in fields if f != "edges") or not isinstance(e["edges"], list):
            raise BaselineError(f"baseline `{path}`: entry {i + 1} has a field of the wrong type "
                                "(`edges` is a list of names, the others are strings)")
        out.append(BaselineEntry(e["path"], e["code"], e["fingerprint"], e["policy"],
                                 tuple(str(x) for x in e["edges"]), e["witness"], e["message"]))
    return out


def apply_baseline(results: list[CheckResult], entries: list[BaselineEntry]) -> tuple[int, list[BaselineEntry]]:
    """Mark every finding a baseline entry accepts as baselined (in place).

    An entry accepts the findings of its fingerprint in its own path. An entry whose path has no
    such finding in this run (the file was moved or renamed) accepts them in one other path, the
    first in run order that no entry names: a moved file keeps its baseline, but a copy of a
    baselined file reports its findings as new. Returns ``(matched, stale)``: how many findings
    the baseline accepted, and the entries that accepted nothing although their policy was checked
    and loaded in this run (by path or by policy name). Entries of policies not checked, or that
    did not load, are neither matched nor stale.
    """
    found: list[tuple[CheckResult, int, str]] = []  # (result, diagnostic index, fingerprint)
    for r in results:
        found += [(r, i, fingerprint(d)) for i, d in enumerate(r.diagnostics) if baselinable(d)]
    here = {(r.path, fp) for r, _, fp in found}
    used: set[BaselineEntry] = {e for e in entries if (e.path, e.fingerprint) in here}
    owner: dict[tuple[str, str], bool] = {(e.path, e.fingerprint): True for e in entries}
    spare: dict[str, list[BaselineEntry]] = {}
    for e in sorted(entries):
        if e not in used:
            spare.setdefault(e.fingerprint, []).append(e)
    moved: dict[tuple[str, str], bool] = {}  # (path, fingerprint) -> accepted by a moved entry
    matched = 0
    for r, i, fp in found:
        key = (r.path, fp)
        ok = owner.get(key, False) or moved.get(key, False)
        if not ok and key not in moved:
            if spare.get(fp):
                used.add(spare[fp].pop(0))
                ok = True
            moved[key] = ok
        if ok:
            matched += 1
            r.diagnostics[i] = replace(r.diagnostics[i], baselined=True)
    loaded = [r for r in results if not (r.input_error or r.internal_error)]
    checked_paths = {r.path for r in loaded}
    checked_names = {r.name for r in loaded if r.name}
    stale = [e for e in entries if e not in used and (e.path in checked_paths or e.policy in checked_names)]
    return matched, stale
