"""Running the checks of a gate: in this process, or spread over workers (``gate.executors``).

``run_checks`` checks policy files in order, through the result cache, and returns one result
per file in input order, whatever ran where:
- with one job and no executor, every policy in this process, one after the other;
- otherwise each policy not found in the policy cache becomes a task (``tasks.run_policy``) that
  a worker runs from a snapshot of its files; a policy that measures at least
  ``shards.split_min_edges`` edges is instead split into shards (``shards.plan``) over the
  workers and merged back (``shards.merge``). With local workers, this process measures the
  policies and checks the small ones itself until the workers have started, so a short run (a
  lone policy, a pre-commit hook's few files) never waits for them.
The report's bytes do not depend on the number of jobs or on the executor: workers compute what
this process would (fixed seeds and limits travel with the options; workers with another
fxverify or solver are refused, ``executors.identity``), and the merge restores the order of
one process. A check that raises becomes a result holding its FX-INT-001 (``tasks.crashed``).
When a worker is lost (killed, out of memory, a cluster gone), the policies it left unfinished
are checked in this process instead, so no result is lost. Emits FX-INT-001 only.
"""

from __future__ import annotations

import queue
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from fxverify.diagnostics.model import crash
from fxverify.errors import FxError
from fxverify.gate.cache import CacheStats, FamilyCache, ResultCache, check_cached, check_counted, lookup
from fxverify.gate.executors import Executor, LocalExecutor
from fxverify.gate.forked import can_fork, fork_split
from fxverify.gate.shards import SPLIT_MIN_EDGES, ShardOutcome, ShardTask, merge, plan, run_shard, split_min_edges
from fxverify.gate.tasks import Big, NeedFiles, PolicyOutcome, PolicyTask, crashed, run_policy, take_snapshot, warm
from fxverify import pipeline
from fxverify.pipeline import CheckOptions
from fxverify.resolve import Loader
from fxverify.resolve.snapshot import FileSnapshot, Recording, repo_root
from fxverify.result import CheckResult
from fxverify.source import SourceMap

__all__ = ["Progress", "crashed", "run_checks"]


class Progress(pipeline.Progress, Protocol):
    """Where the gate reports progress (a progress bar): the number of policies, each one as it
    starts and as it is done, and, for policies checked in this process, the phases of their
    check with their totals (``pipeline.Progress``; a policy split into shards reports the
    ``discharge`` phase in shards)."""

    def start(self, policies: int) -> None:
        """``policies`` files will be checked."""
        ...

    def policy(self, path: str) -> None:
        """The check of ``path`` starts (in this process)."""
        ...

    def done(self, path: str) -> None:
        """The check of ``path`` finished."""
        ...

    def paused(self) -> AbstractContextManager[None]:
        """A context in which the progress runs no thread of its own (``forked.fork_split``
        forks inside it)."""
        ...


def run_checks(files: list[str], options: CheckOptions, cache_dir: str | None, jobs: int = 1,
               progress: Progress | None = None, *,
               executor: Executor | None = None, split_from: int = SPLIT_MIN_EDGES) -> tuple[list[CheckResult], CacheStats]:
    """Check ``files`` in order (see the module docstring) with ``executor`` (the caller's, which
    the caller closes), or without one with ``jobs`` local worker processes (1: this process only).

    ``cache_dir`` is the result cache folder, ``None`` for ``--no-cache``; local workers share it,
    a cluster's workers do not see it (the policy-level cache stays in this process).
    ``split_from`` is the edge count from which one policy is split into shards
    (``shards.split_min_edges`` adjusts it to ``options``). ``progress`` (a ``Progress``) hears
    each policy start and finish, and the phases of the policies checked in this process.
    Returns one result per file, in input order, and the cache counts.
    """
    stats = CacheStats()
    cache = ResultCache(cache_dir) if cache_dir else None
    if executor is None and jobs <= 1:
        results: list[CheckResult] = []
        for f in files:
            if progress is not None:
                progress.policy(f)
            results.append(_in_process(f, options, cache, stats, progress))
            if progress is not None:
                progress.done(f)
        return results, stats
    own = executor is None
    ex = executor if executor is not None else LocalExecutor(jobs)
    try:
        run = _Run(ex, options, cache, cache_dir if own else None, split_min_edges(options, split_from), stats, progress)
        return run.all(files, here=own), stats
    finally:
        if own:
            ex.close()


def _in_process(path: str, options: CheckOptions, cache: ResultCache | None, stats: CacheStats,
                progress: Progress | None = None) -> CheckResult:
    """Check ``path`` in this process; a raise is that policy's FX-INT-001."""
    try:
        return check_cached(path, options, cache, stats, progress)
    except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
        return crashed(path, crash(path, exc))


@dataclass
class _Policy:
    """One policy in flight: its path, policy-cache key, snapshot, start time, and the shards
    expected and received so far."""

    path: str
    key: str | None
    snapshot: FileSnapshot | None = None
    t0: float = field(default_factory=time.perf_counter)
    expected: int = 0
    shards: list[ShardOutcome] = field(default_factory=list)
    lost: bool = False


class _Run:
    """One ``run_checks`` over an executor: tasks go out, their futures report to ``events`` (from
    whatever thread completes them) and this process handles them one at a time."""

    def __init__(self, ex: Executor, options: CheckOptions, cache: ResultCache | None, worker_cache: str | None,
                 split_from: int, stats: CacheStats, progress: Progress | None) -> None:
        self.ex, self.options, self.cache, self.worker_cache = ex, options, cache, worker_cache
        self.split_from, self.stats, self.progress = split_from, stats, progress
        self.events: queue.Queue = queue.Queue()
        self.lost: list[BaseException] = []  # the errors of lost workers, each counted once
        self.live = 0
        self.policies: dict[int, _Policy] = {}
        self.results: list[CheckResult | None] = []

    def all(self, files: list[str], here: bool) -> list[CheckResult]:
        """Every file's result, in order. With ``here`` (local workers), this process measures
        the policies in order and checks the small ones itself until the workers have started
        (a few seconds): a short run never waits for them; then everything left goes out."""
        self.results = [None] * len(files)
        todo = deque(enumerate(files))
        ready = self.ex.submit(warm, None) if here and len(files) > 1 else None
        while todo:
            if here and (ready is None or not ready.done()):
                i, f = todo.popleft()
                self._start(i, f, here=True)
                continue
            for i, f in todo:
                self._start(i, f, here=False)
            todo.clear()
        while self.live:
            i, kind, fut = self.events.get()
            self.live -= 1
            self._handle(i, kind, fut)
        assert all(r is not None for r in self.results)  # INVARIANT: every task was answered
        return [r for r in self.results if r is not None]

    # -- sending work -------------------------------------------------------------------------
    def _submit(self, i: int, kind: str, fn: Callable[[Any], Any], arg: Any) -> None:
        fut = self.ex.submit(fn, arg)
        self.live += 1
        fut.add_done_callback(lambda f: self.events.put((i, kind, f)))

    def _start(self, i: int, path: str, here: bool) -> None:
        key, hit = lookup(path, self.options, self.cache, self.stats)
        if hit is not None:
            self.policies[i] = _Policy(path, key)
            self._finish(i, hit, store=False)
            return
        p = self.policies[i] = _Policy(path, key)
        try:
            if here:
                self._measure_here(i, p)
                return
            p.snapshot = take_snapshot(path, self.options.limits)
        except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
            self._finish(i, crashed(path, crash(path, exc)))
            return
        if p.snapshot.files[path].data is None:
            # Unreadable here (vanished since it was found): this process words that diagnostic
            # (its hint names this process's working folder).
            self._lose(i, p)
            return
        self._submit(i, "policy", run_policy, self._policy_task(p))

    def _policy_task(self, p: _Policy) -> PolicyTask:
        assert p.snapshot is not None
        return PolicyTask(p.snapshot, self.options, self.worker_cache, self.split_from if self.ex.slots > 1 else None)

    def _measure_here(self, i: int, p: _Policy) -> None:
        """Measure a policy in this process (keeping the bytes read): a small one is checked
        right here, a big one goes to the workers in shards."""
        p.snapshot = FileSnapshot(p.path, repo_root(p.path), self.options.limits.max_file_bytes)
        loader = Loader(p.path, SourceMap(), limits=self.options.limits, files=Recording(p.snapshot))
        if self.progress is not None:
            self.progress.policy(p.path)
        edges = loader.measure(None if self.progress is None else self.progress.phase)
        if edges is not None and edges >= self.split_from and self.ex.slots > 1:
            if self._forked(i, p, loader):
                return
            self._split(i, p, edges)
            return
        self._finish(i, check_counted(p.path, self.options, self.cache, self.stats, self.progress, loader=loader))

    def _forked(self, i: int, p: _Policy, loader: Loader) -> bool:
        """Check a big policy measured here in workers forked after this process resolves it
        (``forked.fork_split``, with the result cache's families level), when this process may
        fork (local workers not started, no other thread but the progress bar's); a policy that
        does not load is then checked here. False when it may not fork (the caller splits the
        policy over spawned workers)."""
        if not isinstance(self.ex, LocalExecutor) or self.ex.started():
            return False
        with self.progress.paused() if self.progress is not None else nullcontext():
            if not can_fork():
                return False
        assert p.snapshot is not None
        try:
            r = fork_split(p.path, loader, p.snapshot, self.options, self.ex.slots, self.worker_cache, self.stats,
                           self.progress, families=FamilyCache(self.cache, self.options) if self.cache is not None else None)
            if r is None:  # refused as input, or no fork after all: checked here
                r = check_counted(p.path, self.options, self.cache, self.stats, self.progress, loader=loader)
        except Exception as exc:  # noqa: BLE001 - shards that disagree are a bug, reported as FX-INT-001
            r = crashed(p.path, crash(p.path, exc))
        r.seconds = time.perf_counter() - p.t0
        self._finish(i, r)
        return True

    def _split(self, i: int, p: _Policy, edges: int) -> None:
        assert p.snapshot is not None
        shards = plan()
        p.expected = len(shards)
        if self.progress is not None:
            self.progress.policy(p.path)
            self.progress.phase("discharge", len(shards))
        for n, shard in enumerate(shards):
            self._submit(i, "shard", run_shard, ShardTask(p.snapshot, self.options, shard, self.worker_cache, facts=n == 0))

    # -- receiving answers --------------------------------------------------------------------
    def _handle(self, i: int, kind: str, fut: Any) -> None:
        p = self.policies[i]
        if p.lost:
            return  # already checked in this process
        try:
            out = fut.result()
        except Exception as exc:  # noqa: BLE001 - the worker was lost (killed, out of memory, cluster gone)
            # A local pool whose worker died fails every pending task with one error: one loss.
            if not any(exc is seen for seen in self.lost):
                self.lost.append(exc)
                self.stats.workers_lost += 1
            self._lose(i, p)
            return
        if not self.ex.check_identity(out.identity):
            self._lose(i, p)  # a worker that joined later runs other code: its bytes could differ
            return
        if isinstance(out, NeedFiles):
            assert p.snapshot is not None
            if out.path in p.snapshot.files:
                self._finish(i, crashed(p.path, crash(p.path, FxError(f"a worker asked twice for `{out.path}`"))))
                return
            p.snapshot.add(out.path)
            self._submit(i, "policy", run_policy, self._policy_task(p))
        elif isinstance(out, Big):
            self._split(i, p, out.edges)
        elif isinstance(out, PolicyOutcome):
            self.stats.add(out.stats)
            self._finish(i, out.result())
        else:
            p.shards.append(out)
            self.stats.add(out.stats)
            if self.progress is not None:
                self.progress.advance(1)
            if len(p.shards) == p.expected:
                self._merge(i, p)

    def _merge(self, i: int, p: _Policy) -> None:
        assert p.snapshot is not None
        try:
            r = merge(p.path, p.shards, self.options, p.snapshot)
        except Exception as exc:  # noqa: BLE001 - shards that disagree are a bug, reported as FX-INT-001
            r = crashed(p.path, crash(p.path, exc))
        r.seconds = time.perf_counter() - p.t0
        self._finish(i, r)

    def _lose(self, i: int, p: _Policy) -> None:
        """Check policy ``i`` in this process (instead of workers lost, or not trusted; the
        answers of its other tasks are ignored)."""
        p.lost = True
        if self.progress is not None:
            self.progress.policy(p.path)
        try:
            r = check_counted(p.path, self.options, self.cache, self.stats, self.progress)
        except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
            r = crashed(p.path, crash(p.path, exc))
        self._finish(i, r)

    def _finish(self, i: int, r: CheckResult, *, store: bool = True) -> None:
        p = self.policies[i]
        self.results[i] = r
        if store and self.cache is not None and p.key is not None:
            self.cache.put_policy(p.key, r)
        if self.progress is not None:
            self.progress.done(p.path)
