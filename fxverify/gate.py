"""The pre-merge gate: check many policy files, then decide the exit code.

Takes policy paths (already expanded by ``pipeline.collect_policies``), ``CheckOptions``, a cache
and a number of worker processes; produces a ``Report`` that every renderer formats. With
``jobs > 1``, several policies run in a process pool (results collected in input order, through the
same record round trip as cached results), and a single policy has its solver queries decided by
the pool; either way the report's bytes do not depend on ``jobs``. The exit code
follows BRIEF section 6: 0 all proved, 1 a finding fails the gate, 2 an input error, 3 an internal
error (FX-INT-001). Emits no diagnostics of its own; a check that raises is reported as FX-INT-001
text on stderr by the caller.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace

from fxverify.baseline import BaselineEntry
from fxverify.cache import CacheStats, ResultCache, check_cached
from fxverify.diagnostics.model import Severity
from fxverify.pipeline import CheckOptions, CheckResult
from fxverify.record import result_from_record, result_to_record
from fxverify.source import SourceMap


@dataclass(frozen=True)
class GateOptions:
    """What fails the gate. ``fail_on``: ``error`` (default) or ``warning`` (warnings fail too).
    ``unknown``: ``fail`` (default; an unknown verdict is an error) or ``warn`` (a warning)."""

    fail_on: str = "error"
    unknown: str = "fail"


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
    """One run of ``fxverify check``: results in input order, the files whose check crashed, the
    baseline outcome, cache counts, wall time (shown only with ``stats``) and the exit code."""

    results: list[CheckResult]
    crashed: list[str] = field(default_factory=list)
    baseline: BaselineOutcome | None = None
    cache: CacheStats = field(default_factory=CacheStats)
    seconds: float = 0.0
    stats: bool = False
    gate: GateOptions = GateOptions()
    exit_code: int = 0

    def totals(self) -> dict[str, int]:
        """Run totals for the summary table: policies by verdict (``error`` for input errors),
        obligations by status, and findings that were suppressed or baselined."""
        out = {k: 0 for k in ("policies", "proved", "refuted", "unknown", "error", "obligations",
                              "obligations_proved", "obligations_refuted", "obligations_unknown",
                              "suppressed", "baselined")}
        for r in self.results:
            out["policies"] += 1
            out[r.verdict.value if r.verdict else "error"] += 1
            for c in r.counts().values():
                for status in ("proved", "refuted", "unknown"):
                    out["obligations"] += c[status]
                    out[f"obligations_{status}"] += c[status]
            out["suppressed"] += sum(d.suppressed_reason is not None for d in r.diagnostics)
            out["baselined"] += sum(d.baselined for d in r.diagnostics)
        out["policies"] += len(self.crashed)
        out["error"] += len(self.crashed)
        return out


def internal_error_text(path: str, exc: BaseException) -> str:
    """The FX-INT-001 message for an exception that escaped while checking ``path``: its type,
    message and innermost frame, never a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"  = note: at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}\n" if frames else ""
    return (f"error[FX-INT-001]: internal error while checking {path}: {type(exc).__name__}: {exc}\n{where}"
            f"  = help: this is a bug in fxverify; please report it with the policy that triggered it\n")


def _worker(path: str, options: CheckOptions, cache_dir: str | None) -> tuple:
    """Check one policy in a worker process. Returns ``("ok", record, texts, stats)`` or
    ``("crash", message)``; never raises (a raise would lose the message)."""
    stats = CacheStats()
    try:
        cache = ResultCache(cache_dir) if cache_dir else None
        r = check_cached(path, options, cache, stats)
        texts = {p: r.sources.get(p).text for p in r.sources.paths()}
        return ("ok", result_to_record(r), texts, stats, r.from_cache, r.seconds, r.cache_hits, r.solved)
    except Exception as exc:  # noqa: BLE001 - reported as FX-INT-001
        return ("crash", internal_error_text(path, exc))


def _from_worker(out: tuple) -> CheckResult:
    _ok, record, texts, _stats, from_cache, seconds, hits, solved = out
    sources = SourceMap()
    for p, t in texts.items():
        sources.add(p, t)
    r = result_from_record(record, sources)
    r.from_cache, r.seconds, r.cache_hits, r.solved = from_cache, seconds, hits, solved
    return r


def run_checks(files: list[str], options: CheckOptions, cache_dir: str | None, jobs: int = 1,
               on_done: Callable[[str], None] | None = None,
               on_obligations: Callable[[int], None] | None = None) -> tuple[list[CheckResult], list[str], CacheStats]:
    """Check ``files`` in order, with ``jobs`` worker processes (1: in this process). Several
    files run one policy per worker; a single file has its solver queries decided by the workers.

    ``cache_dir`` is the result cache folder, ``None`` for ``--no-cache``. ``on_done(path)`` is
    called as each policy finishes; ``on_obligations(n)`` as obligations are discharged (only with
    ``jobs == 1``). Returns ``(results, crashed, stats)``: results of the files that did not crash,
    in input order, the FX-INT-001 messages of those that did, and the cache counts.
    """
    stats = CacheStats()
    results: list[CheckResult] = []
    crashed: list[str] = []
    if jobs <= 1 or len(files) <= 1:
        # One policy: its solver queries go to the pool. Several: the policies do (below).
        cache = ResultCache(cache_dir) if cache_dir else None
        for f in files:
            try:
                r = check_cached(f, options, cache, stats, on_obligations, jobs=jobs)
                results.append(r)
            except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
                crashed.append(internal_error_text(f, exc))
            if on_done is not None:
                on_done(f)
        return results, crashed, stats
    import multiprocessing

    # spawn, not fork: the parent may already hold a Z3 context, which must not be forked.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures: list[Future] = [pool.submit(_worker, f, options, cache_dir) for f in files]
        if on_done is not None:
            for f, fut in zip(files, futures):
                fut.add_done_callback(lambda _fut, f=f: on_done(f))
        for fut in futures:
            out = fut.result()
            if out[0] == "crash":
                crashed.append(out[1])
                continue
            stats.add(out[3])
            results.append(_from_worker(out))
    return results, crashed, stats


def apply_unknown_policy(results: list[CheckResult], unknown: str) -> None:
    """With ``--unknown warn``, unknown verdicts (FX-SMT-001) become warnings, in every format."""
    if unknown != "warn":
        return
    for r in results:
        r.diagnostics = [replace(d, severity=Severity.WARNING) if d.code == "FX-SMT-001" else d for d in r.diagnostics]


def exit_code(report: Report) -> int:
    """The exit code of ``report`` (BRIEF section 6): 3 when a check crashed or an internal
    invariant broke, else 2 for an input error, else 1 when an active error (or, with
    ``fail_on == "warning"``, an active warning) remains, else 0."""
    results = report.results
    if report.crashed or any(r.internal_error for r in results):
        return 3
    if any(r.input_error for r in results):
        return 2
    failing = {Severity.ERROR} | ({Severity.WARNING} if report.gate.fail_on == "warning" else set())
    return 1 if any(d.active and d.severity in failing for r in results for d in r.diagnostics) else 0
