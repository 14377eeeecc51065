"""Baselines: accepted findings recorded by fingerprint, so a gate reports only new ones.

Takes ``CheckResult``s and a baseline file; produces ``BaselineEntry`` lists, marks the findings a
baseline accepts (``Diagnostic.baselined``) and finds stale entries. The file is JSON (sorted keys,
two-space indent, entries sorted), documented in ``specs/output.md``:
``{"fxverify_baseline": 1, "entries": [{"fingerprint", "code", "policy", "path", "edges",
"witness", "message"}]}``. Only the fingerprint decides a match; the other fields are there for the
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

BASELINE_VERSION = 1


class BaselineError(FxError):
    """A baseline file is missing, unreadable or not a baseline (an environment failure)."""


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
    not input or internal errors, not already suppressed)."""
    return d.active and d.severity is not Severity.NOTE and bool(d.policy) and d.code is not codes.INT_001


def entries_from(results: list) -> list[BaselineEntry]:
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
    """Read a baseline file. Raises ``BaselineError`` with a one-line reason."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise BaselineError(f"baseline `{path}` does not exist") from None
    except OSError as err:
        raise BaselineError(f"cannot read baseline `{path}`: {err.strerror or err}") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise BaselineError(f"baseline `{path}` is not JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("fxverify_baseline") != BASELINE_VERSION or not isinstance(doc.get("entries"), list):
        raise BaselineError(f"`{path}` is not an fxverify baseline (version {BASELINE_VERSION})")
    out = []
    for i, e in enumerate(doc["entries"]):
        try:
            out.append(BaselineEntry(str(e["path"]), str(e["code"]), str(e["fingerprint"]), str(e["policy"]),
                                     tuple(str(x) for x in e["edges"]), str(e["witness"]), str(e["message"])))
        except (KeyError, TypeError) as err:
            raise BaselineError(f"baseline `{path}`: entry {i + 1} is malformed ({err})") from None
    return out


def apply_baseline(results: list, entries: list[BaselineEntry]) -> tuple[int, list[BaselineEntry]]:
    """Mark every finding whose fingerprint is in ``entries`` as baselined (in place).

    Returns ``(matched, stale)``: how many findings the baseline accepted, and the entries that
    matched nothing although their policy was checked in this run (by path or by policy name).
    Entries of policies not checked in this run are neither matched nor stale.
    """
    known = {e.fingerprint for e in entries}
    seen: set[str] = set()
    matched = 0
    for r in results:
        out = []
        for d in r.diagnostics:
            fp = fingerprint(d) if baselinable(d) else None
            if fp is not None and fp in known:
                seen.add(fp)
                matched += 1
                d = replace(d, baselined=True)
            out.append(d)
        r.diagnostics = out
    checked_paths = {r.path for r in results}
    checked_names = {r.name for r in results if r.name}
    stale = [e for e in entries if e.fingerprint not in seen and (e.path in checked_paths or e.policy in checked_names)]
    return matched, stale
