"""Running the checks of a gate: in this process, or in a pool of worker processes.

``run_checks`` checks policy files in order, through the result cache. With ``jobs > 1``, several
policies run in a process pool (each worker returns a ``WorkerOutcome``, the result serialised
as the cache stores it, collected in input order), and a single policy has its solver queries
decided by the pool; either way the report's bytes do not depend on ``jobs``. A check that raises
becomes a result holding its FX-INT-001 diagnostic (``crashed``), the one representation of a
crash in every format. When a worker dies (killed, out of memory), the policies it left unfinished
are checked in this process instead, so no result is lost. Emits FX-INT-001 only.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Protocol

from fxverify.diagnostics.model import Diagnostic, crash
from fxverify.gate.cache import CacheStats, ResultCache, check_cached
from fxverify.gate.serialize import result_from_record, result_to_record
from fxverify import pipeline
from fxverify.pipeline import CheckOptions
from fxverify.result import CheckResult
from fxverify.source import SourceMap


class Progress(pipeline.Progress, Protocol):
    """Where the gate reports progress (a progress bar): the number of policies, each one as it
    starts and as it is done, and, for policies checked in this process, the phases of their
    check with their totals (``pipeline.Progress``)."""

    def start(self, policies: int) -> None:
        """``policies`` files will be checked."""
        ...

    def policy(self, path: str) -> None:
        """The check of ``path`` starts (in this process)."""
        ...

    def done(self, path: str) -> None:
        """The check of ``path`` finished."""
        ...


@dataclass(frozen=True)
class WorkerOutcome:
    """What a worker process sends back for one policy: the result as a record (``None`` when the
    check crashed, and then ``crash`` holds its FX-INT-001), the texts of the files it read, its
    cache counts, and the result's timing and cache fields."""

    path: str
    record: dict | None = None
    texts: dict[str, str] = field(default_factory=dict)
    stats: CacheStats = field(default_factory=CacheStats)
    from_cache: bool = False
    seconds: float = 0.0
    cache_hits: int = 0
    solved: int = 0
    crash: Diagnostic | None = None

    def result(self) -> CheckResult:
        """The ``CheckResult`` this outcome carries."""
        if self.record is None:
            return crashed(self.path, self.crash)
        sources = SourceMap()
        for p, t in self.texts.items():
            sources.add(p, t)
        r = result_from_record(self.record, sources)
        r.from_cache, r.seconds, r.cache_hits, r.solved = self.from_cache, self.seconds, self.cache_hits, self.solved
        return r


def crashed(path: str, diag: Diagnostic | None) -> CheckResult:
    """The result of a check of ``path`` that crashed with ``diag`` (FX-INT-001)."""
    return CheckResult(path, None, SourceMap(), diagnostics=[diag] if diag is not None else [])


def _worker(path: str, options: CheckOptions, cache_dir: str | None) -> WorkerOutcome:
    """Check one policy in a worker process; never raises (a raise would lose the message)."""
    stats = CacheStats()
    try:
        cache = ResultCache(cache_dir) if cache_dir else None
        r = check_cached(path, options, cache, stats)
        texts = {p: r.sources.get(p).text for p in r.sources.paths()}
        return WorkerOutcome(path, result_to_record(r), texts, stats, r.from_cache, r.seconds, r.cache_hits, r.solved)
    except Exception as exc:  # noqa: BLE001 - reported as FX-INT-001
        return WorkerOutcome(path, crash=crash(path, exc))


def run_checks(files: list[str], options: CheckOptions, cache_dir: str | None, jobs: int = 1,
               progress: Progress | None = None) -> tuple[list[CheckResult], CacheStats]:
    """Check ``files`` in order, with ``jobs`` worker processes (1: in this process). Several
    files run one policy per worker; a single file has its solver queries decided by the workers.

    ``cache_dir`` is the result cache folder, ``None`` for ``--no-cache``. ``progress`` (a
    ``gate.Progress``) hears each policy start and finish, and the phases of the policies checked
    in this process. Returns one result per file, in input order, and the cache counts.
    """
    stats = CacheStats()
    results: list[CheckResult] = []
    if jobs <= 1 or len(files) <= 1:
        cache = ResultCache(cache_dir) if cache_dir else None
        for f in files:
            if progress is not None:
                progress.policy(f)
            try:
                results.append(check_cached(f, options, cache, stats, progress, jobs=jobs))
            except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
                results.append(crashed(f, crash(f, exc)))
            if progress is not None:
                progress.done(f)
        return results, stats
    # spawn, not fork: the parent may already hold a Z3 context, which must not be forked.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures: list[Future] = [pool.submit(_worker, f, options, cache_dir) for f in files]
        if progress is not None:
            for f, fut in zip(files, futures):
                fut.add_done_callback(lambda _fut, f=f: progress.done(f))
        for f, fut in zip(files, futures):
            try:
                out: WorkerOutcome = fut.result()
            except BrokenProcessPool:
                # A worker died (killed, out of memory): every policy not finished by then is
                # checked again here, so the others' results are kept.
                results.append(_in_process(f, options, cache_dir, stats))
                continue
            stats.add(out.stats)
            results.append(out.result())
    return results, stats


def _in_process(path: str, options: CheckOptions, cache_dir: str | None, stats: CacheStats) -> CheckResult:
    """Check ``path`` in this process; a raise is that policy's FX-INT-001."""
    try:
        return check_cached(path, options, ResultCache(cache_dir) if cache_dir else None, stats)
    except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
        return crashed(path, crash(path, exc))
