"""One big policy's shards on this machine's cores, in processes forked after it is resolved.

The gate's local workers are spawned (``executors.LocalExecutor``): each imports fxverify and
resolves the policy again before its first shard, and the policy's shared indexes (happens-before
order and reachability, accesses by address space, ownership indexes) are built again in each.
On a 2-core machine that repeated work cost as much as the split saved (bench/bench_jobs.py: the
Llama-3.1-8B prefill took as long with ``--jobs 2`` as with one process). Here, when this process
has measured a lone big policy itself (``run._Run._measure_here``), it finishes resolving it,
builds the indexes most shards read once (``WARM``), and forks ``jobs - 1`` workers (no more than its cores
take: ``workers_for``) that inherit all of it (copy-on-write). This process works as one of them. Each takes the next shard of
``shards.plan`` (the costliest first) from a pipe of their indexes and runs it with
``shards.run_shard``, exactly as a spawned worker would. The children send their ``ShardOutcome``s back through a pipe, and
``shards.merge`` puts everything in the order of one process, so the report has the same bytes as
``--jobs 1`` (tests/test_jobs.py).

Forking is used only where it is safe: on Linux, and when this process runs no other thread at
that instant. A thread holding a lock at the fork would leave it held forever in the child. The
progress bar's refresh thread is paused around the fork (``Progress.paused``). The collector's
objects are frozen first (``gc.freeze``), so the children's collections do not touch the pages
they share with this process. Otherwise (another platform, a worker pool already started, any
other thread) the gate sends the shards to its spawned workers as before; where ``fork_split``
itself declines (the policy does not load, the result cache holds proofs of one of its families,
one CPU or no memory for a worker), the gate checks the policy in its own process.

A child that dies (killed, out of memory) loses only the shards it had taken: this process runs
every shard it did not receive. Emits no diagnostic of its own: FX-INT-001 comes from
``shards.run_shard`` (a shard that raised) and ``shards.merge`` (shards that do not fit). Raises
nothing but what ``shards.merge`` lets through (a bug).
"""

from __future__ import annotations

import base64
import ctypes
import gc
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from array import array
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.gate.cache import CacheStats, FamilyCache
from fxverify.gate.executors import identity, usable_cores
from fxverify.gate.shards import ShardOutcome, ShardTask, built, merge, plan, run_shard
from fxverify.graph import PolicyGraph
from fxverify.obligations.base import Context
from fxverify.obligations.inputs import family_digests
from fxverify.pipeline import CheckOptions
from fxverify.resolve import Loader
from fxverify.resolve.snapshot import FileSnapshot
from fxverify.shapes import Shapes
from fxverify.result import CheckResult, ProvedRun, Verdict


class Paused(Protocol):
    """What ``fork_split`` needs of the gate's progress (``run.Progress``): ``paused()``, a
    context in which it runs no thread of its own (a progress bar's refresh), ``phase`` and
    ``advance``."""

    def phase(self, name: str, total: int | None = None) -> None:
        """Phase ``name`` starts, with ``total`` units."""
        ...

    def paused(self) -> AbstractContextManager[None]:
        """No thread of the progress runs inside this context."""
        ...

    def advance(self, n: int = 1) -> None:
        """``n`` more shards are done."""
        ...


def _accesses(ctx: Context) -> None:
    for e in ctx.policy.edges:
        e.accesses()  # computed once per edge (``ir.Edge.accesses``)


#: The indexes most shards read, built before the fork so that no worker builds its own: the
#: happens-before order (``graph.PolicyGraph.is_acyclic``, which every shard but the hooks
#: reads), each edge's accesses (``ir.Edge.accesses``), the cancellation and allocation events
#: (``Context._events``, read through ``cancellers``), and the instances of each edge declaration
#: (``Shapes.instances``), which every shard's parametric prover reads (``Parametric.families``).
#: Measured on the Llama-3.1-8B prefill (each shard run alone in a fork, 2-core machine), when
#: the set held the ownership indexes instead of the last two: the ten shards took 13.7 s in all
#: without it and 8.7 s after it, which took 1.1 s to build.
#:
#: Left to the shards that read them, each process building its own: the ownership indexes
#: (``Context._index``: the ownership family only), the reachability index
#: (``PolicyGraph.indexed``) and the accesses by address space (``Context.accesses_by_space``).
#: On the 8B prefill only the races stage reads the first, and races, transforms and alias the
#: second (0.13 and 0.28 s to build), none of them the ownership shard, the largest, which a
#: worker runs while the gate runs those: the serial part before the fork shrinks by their time,
#: nothing is built twice when the gate takes those stages, and the forked check's resolve-to-merge
#: span fell by a median 3.4% over 12 rounds side by side (2 cores; the ratios of the rounds
#: spread from 0.75 to 1.16: a noisy machine). Across the corpus
#: more stages read them (the ownership, def-before-use, posted-write, coherence and maps families
#: the reachability index, posted and coherence the accesses by space), so a split may build one
#: in two processes at once: more CPU, in parallel, where before it was built once before the fork.
WARM: tuple[Callable[[Context], object], ...] = (
    lambda ctx: ctx.graph.is_acyclic(),
    _accesses,
    lambda ctx: ctx.cancellers,
    lambda ctx: (shapes := Shapes.of(ctx.policy)) is not None and shapes.instances(),
)


def can_fork() -> bool:
    """Whether this process may fork its workers now: the ``fork`` start method exists, this is
    Linux (elsewhere fork is missing or unsafe with system libraries) and no other thread runs,
    Python's or native (``/proc/self/task`` lists them all: a solver's timer threads, once it has
    answered a query with a time limit, are invisible to ``threading``)."""
    if not (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()):
        return False
    try:
        return threading.active_count() == 1 and len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


#: Of the memory the kernel reports available, the share forked workers may take: a fifth is
#: left to the rest of the machine (a margin chosen, not measured).
ROOM = 0.8


def room_for(workers: int, meminfo: str = "/proc/meminfo") -> int:
    """How many of ``workers`` forked workers fit in this machine's memory: each is counted as
    large as this process now (its resident set), against ``ROOM`` of ``MemAvailable`` in
    ``meminfo`` (proc(5)); all of them when either cannot be read. A worker shares this process's
    pages until it writes to them, and Python's reference counts write to every object a shard
    reads: on the full-size Llama-3.1-70B TP8 policy (P2 of bench/bench_scale.py) the gate held
    2.1 GB and `--jobs 2` took 3.6 GB in all (proportional set sizes), so a worker came to about
    three quarters of the gate. Raises nothing."""
    try:
        with open(meminfo, encoding="ascii") as fh:
            avail = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("MemAvailable:"))
        with open("/proc/self/statm", encoding="ascii") as fh:
            resident = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, StopIteration):
        return workers
    return max(0, min(workers, int(ROOM * avail // max(resident, 1))))


def _processes(jobs: int) -> int:
    """The processes a split of ``jobs`` may use, this one included: no more than this process's
    cores (``usable_cores``)."""
    return min(jobs, usable_cores())


def workers_for(jobs: int, meminfo: str = "/proc/meminfo") -> int:
    """How many workers to fork for ``jobs`` (this process counts as one): no more than this
    process's cores allow (``usable_cores``: shards are CPU-bound, so more processes than cores
    only add forks and copy-on-write faults; on the Llama-3.1-8B prefill, 2-core machine,
    ``--jobs 8`` took 3.24-3.42 s against 2.89-3.01 s for ``--jobs 2``), and as many of those as
    fit in memory (``room_for``). Raises nothing."""
    return room_for(max(0, _processes(jobs) - 1), meminfo)


def fork_split(path: str, loader: Loader, snapshot: FileSnapshot, options: CheckOptions, jobs: int,
               cache_dir: str | None, stats: CacheStats, progress: Paused | None = None,
               families: FamilyCache | None = None) -> CheckResult | None:
    """Check the policy ``loader`` measured (``path``, its files recorded in ``snapshot``) in
    ``jobs`` processes, this one and ``jobs - 1`` forked after resolving it, no more than the
    cores take (``workers_for``; module docstring).
    ``cache_dir`` is the obligation cache folder (``None``: none); the shards' cache counts are
    added to ``stats``.

    ``families`` is the result cache's families level (``None``: no cache). When it holds the
    proofs of any family of this policy (a re-check after an edit), nothing is forked: the
    caller's check in this process takes them (``pipeline.discharge``) and discharges only the
    other families, which costs less than a split. After a split, each family whose every
    obligation was proved is stored there, as ``pipeline.discharge`` stores it. Not with
    ``--dump-smt`` or ``--certify``, which use no stored proofs.

    Returns the merged result, the same as ``pipeline.check``'s but for ``policy`` (``None``, as
    for any split), or ``None`` when the caller is to check the policy in this process: it did
    not load, proofs of one of its families are stored, this process may use one CPU only, or it
    may not fork after all
    (``can_fork``) or its workers would not fit in memory (``room_for``); ``Loader.finish`` then returns the same policy again, and
    ``inputs.family_digests`` the same digests without computing them again. Raises what
    ``shards.merge`` lets through (a bug)."""
    if _processes(jobs) < 2:
        return None  # no worker to fork (``workers_for``): resolved and warmed for nothing
    policy, diags = loader.finish()
    if policy is None:
        return None
    if options.dump_smt or options.certify:
        families = None
    digests = family_digests(policy) if families is not None else {}
    if families is not None and any(families.held(f, digests[f]) for f in OBLIGATION_FAMILIES):
        return None
    tasks = [ShardTask(snapshot, options, shard, cache_dir, facts=n == 0) for n, shard in enumerate(plan())]
    if progress is not None:
        progress.phase("discharge", len(tasks))
    b = built(tasks[0])
    try:
        with b.lock:
            b.policy, b.diags, b.sources = policy, diags, loader.sources
            b.ctx = Context(policy, PolicyGraph(policy))
            b.ready = True
        for warm in WARM:
            warm(b.ctx)
        identity(options.solver.solver)  # the solver imported and the code hashed once, not in every worker
        ran = _run(tasks, jobs, progress)
        if ran is None:
            return None
        outs, lost = ran
        stats.workers_lost += lost
        for o in outs:
            stats.add(o.stats)
        merged = merge(path, outs, options, snapshot)
        if families is not None and not merged.internal_error:
            _store(families, digests, outs)
        return merged
    finally:
        built(tasks[0], forget=True)


def _store(families: FamilyCache, digests: dict[Family, str], outs: list[ShardOutcome]) -> None:
    """Keep, for each family whose every obligation its shards proved, its outcomes (its stages'
    in order) as one ``ProvedRun``, as ``pipeline.discharge`` keeps a family."""
    by_family: dict[Family, list[ShardOutcome]] = {}
    for o in sorted(outs, key=lambda o: o.shard.stage):
        by_family.setdefault(o.shard.family, []).append(o)
    for family, parts in by_family.items():
        if any(o.record is None or o.crash is not None for o in parts):
            continue
        run = proved_run([o.record for o in parts if o.record is not None], sum(o.queries for o in parts))
        if run is not None:
            families.put(family, digests[family], run)


def proved_run(records: list[dict], queries: int) -> ProvedRun | None:
    """The outcomes of result ``records`` (``serialize.result_to_record``), one after the other,
    as one ``ProvedRun`` with ``queries`` (``OutcomeLog.proved_run`` without decoding an
    outcome); ``None`` when one of them is not a plain proof. Raises ``KeyError`` or
    ``ValueError`` (``binascii.Error``) on a malformed record (records come from this
    process's own shards)."""
    keys: list[str] = []
    kinds: dict[tuple[str, str], int] = {}
    ids = array("I")
    for rec in records:
        local = []
        for code, verdict, method, reason in rec["kinds"]:
            if verdict != Verdict.PROVED.value or reason:
                return None
            local.append(kinds.setdefault((str(code), str(method)), len(kinds)))
        part = array("I")
        part.frombytes(base64.b64decode(rec["kind_ids"]))
        ids.extend(local[i] for i in part)
        if rec["keys"]:
            keys.append(rec["keys"])
    return ProvedRun("\n".join(keys), tuple(kinds), ids, queries)


def _run(tasks: list[ShardTask], jobs: int, progress: Paused | None) -> tuple[list[ShardOutcome], int] | None:
    """Every task's outcome, run by this process and up to ``jobs - 1`` forked workers (as many
    as the cores and memory allow: ``workers_for``), and how many workers ended without answering
    (their shards are run here); ``None`` when another thread appeared before the fork, or not
    one worker fits.

    The tasks are handed out through a pipe holding their indexes, two bytes each, written
    before the fork with its write end closed: a read of two bytes from a pipe is atomic, so
    each index is taken once, and end of file means none is left. No lock is shared, so a worker
    killed at any instant leaves nothing held."""
    mp = multiprocessing.get_context("fork")
    # INVARIANT: fewer than 2 ** 16 tasks (``shards.plan`` has ten), so each index fits two bytes
    # and all of them the pipe's buffer: this write never blocks.
    queue, fill = os.pipe()
    os.write(fill, b"".join(i.to_bytes(2, "big") for i in range(len(tasks))))
    os.close(fill)
    pipes: list[tuple[BaseProcess, Connection]] = []  # (worker, the read end of its answer)
    lost = 0
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        with (progress.paused() if progress is not None else nullcontext()):
            workers = workers_for(jobs) if can_fork() else 0
            if workers == 0:
                return None
            gc.freeze()
            try:
                for _ in range(workers):
                    recv, send = mp.Pipe(duplex=False)
                    reads = [r for _c, r in pipes] + [recv]
                    child = mp.Process(target=_worker, args=(tasks, queue, send, reads, os.getpid()), daemon=True)
                    pipes.append((child, recv))  # before it starts: a Ctrl-C in ``start`` still stops it
                    child.start()
                    send.close()
            finally:
                gc.unfreeze()
        outs = _take(tasks, queue, progress)
        for child, recv in pipes:
            try:
                got: list[ShardOutcome] = pickle.loads(recv.recv_bytes())
            except (EOFError, OSError, pickle.UnpicklingError):
                got = []  # the worker died: its shards are run below
                lost += 1
            child.join()
            outs += got
            if progress is not None:
                progress.advance(len(got))
    except BaseException:
        # Ctrl-C or a bug here: no worker outlives the check (a worker blocked on its answer
        # would wait for this process forever)
        started = [child for child, _recv in pipes if child.pid is not None]
        for child in started:
            child.terminate()
        for child in started:
            child.join()
        raise
    finally:
        os.close(queue)
        for _child, recv in pipes:
            recv.close()
    have = {o.shard for o in outs}
    for task in tasks:
        if task.shard not in have:
            outs.append(run_shard(task))
            if progress is not None:
                progress.advance(1)
    return outs, lost


def _take(tasks: list[ShardTask], queue: int, progress: Paused | None) -> list[ShardOutcome]:
    """Run the tasks whose indexes this process reads from the pipe ``queue`` (``_run``), until
    it is empty; their outcomes."""
    outs = []
    while True:
        got = os.read(queue, 2)
        if not got:
            return outs
        outs.append(run_shard(tasks[int.from_bytes(got, "big")]))
        if progress is not None:
            progress.advance(1)


def _worker(tasks: list[ShardTask], queue: int, send: Connection, reads: list[Connection], gate: int) -> None:
    """A forked worker: take shards until none is left, then send their outcomes. First it
    closes the read ends of the answers it inherited (its own included), so that its answer
    fails at once, instead of blocking, when the gate is gone; and it asks the kernel to end it
    when the gate ends (``PR_SET_PDEATHSIG``: a gate killed by a signal runs no clean-up). It
    ignores Ctrl-C (the gate stops it) and never prints: anything that escapes ``run_shard``
    ends it silently, and the gate runs the shards it had taken."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for r in reads:
            r.close()
        _end_with_parent()
        if os.getppid() != gate:  # the gate ended before the request was in place
            os._exit(1)
        send.send_bytes(pickle.dumps(_take(tasks, queue, None), protocol=pickle.HIGHEST_PROTOCOL))
        send.close()
    except BaseException:  # noqa: BLE001 - the gate runs this worker's shards itself
        os._exit(1)


#: ``prctl`` option: the signal this process gets when its parent ends (Linux, prctl(2)).
_PR_SET_PDEATHSIG = 1


def _end_with_parent() -> None:
    """Have the kernel send SIGTERM to this process when its parent ends (prctl(2),
    ``PR_SET_PDEATHSIG``); nothing where libc has no ``prctl``."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
