"""The task that checks one whole policy in a worker, and the snapshot of files it reads.

``take_snapshot(path, limits)`` reads a policy file on the gate's machine, and the files its
``include`` lines seem to name (a guess that saves a round trip; the resolver decides what is
really read), into a ``resolve.snapshot.FileSnapshot``. ``run_policy(PolicyTask)`` runs in a worker
(a local process or a Dask worker, which need not see the gate's disk): it resolves the policy
from the snapshot and returns one of
- ``NeedFiles``: resolution asked for a file the snapshot lacks (the gate adds it and asks again);
- ``Big``: the policy measured at least ``split_from`` edges (``resolve.Loader.measure``), so the
  gate splits it into shards (``gate.shards``) instead;
- ``PolicyOutcome``: the checked result, serialised as the cache stores it.
The worker uses the obligation cache when given its folder (a local worker); the policy-level
cache is the gate's. Emits FX-INT-001 (through ``crash``) for a check that raised.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from fxverify.diagnostics.model import Diagnostic, crash
from fxverify.gate.cache import CacheStats, ResultCache, check_counted
from fxverify.gate.executors import identity
from fxverify.gate.serialize import result_from_record, result_to_record
from fxverify.pipeline import CheckOptions
from fxverify.resolve import Limits, Loader
from fxverify.resolve.snapshot import FileSnapshot, NotInSnapshot
from fxverify.result import CheckResult
from fxverify.source import SourceMap

#: ``include "path"`` as the grammar writes it (specs/language.md); only a guess of what to send
#: along, so comments and strings that look like includes cost a file read, nothing more.
_INCLUDE = re.compile(rb'^[ \t]*include[ \t]+"([^"\n]+)"', re.MULTILINE)
#: Files guessed per policy at most (a wrong guess never loops).
_GUESS_MAX = 64


def take_snapshot(path: str, limits: Limits) -> FileSnapshot:
    """The snapshot of ``path`` and of the files its includes (and theirs) seem to name."""
    snap = FileSnapshot.take(path, limits.max_file_bytes)
    todo = [path]
    while todo:
        cur = todo.pop()
        for m in _INCLUDE.finditer(snap.files[cur].data or b""):
            # as ``resolve.files.expand`` joins them: relative to the including file as named
            target = os.path.normpath(os.path.join(os.path.dirname(cur), m.group(1).decode("utf-8", "replace")))
            if target not in snap.files and len(snap.files) < _GUESS_MAX:
                snap.add(target)
                todo.append(target)
    return snap


@dataclass(frozen=True)
class PolicyTask:
    """Check the policy of ``snapshot`` with ``options`` (seeds and limits included); the
    obligation cache is ``cache_dir`` (``None``: none); with ``split_from`` set, a policy of at
    least that many edges is answered with ``Big`` before it is unrolled."""

    snapshot: FileSnapshot
    options: CheckOptions
    cache_dir: str | None = None
    split_from: int | None = None


@dataclass(frozen=True)
class NeedFiles:
    """Resolution asked for ``path``, which the snapshot lacks."""

    path: str
    identity: str = ""


@dataclass(frozen=True)
class Big:
    """The policy measured ``edges`` edges: split it (``gate.shards``)."""

    edges: int
    identity: str = ""


@dataclass(frozen=True)
class PolicyOutcome:
    """What a worker sends back for one policy: the result as a record (``None`` when the check
    crashed, and then ``crash`` holds its FX-INT-001), the texts of the files it read, its cache
    counts, the result's timing and cache fields, and the worker's ``identity``."""

    path: str
    record: dict | None = None
    texts: dict[str, str] = field(default_factory=dict)
    stats: CacheStats = field(default_factory=CacheStats)
    seconds: float = 0.0
    cache_hits: int = 0
    solved: int = 0
    crash: Diagnostic | None = None
    identity: str = ""

    def result(self) -> CheckResult:
        """The ``CheckResult`` this outcome carries."""
        if self.record is None:
            return crashed(self.path, self.crash)
        sources = SourceMap()
        for p, t in self.texts.items():
            sources.add(p, t)
        r = result_from_record(self.record, sources)
        r.seconds, r.cache_hits, r.solved = self.seconds, self.cache_hits, self.solved
        return r


def crashed(path: str, diag: Diagnostic | None) -> CheckResult:
    """The result of a check of ``path`` that crashed with ``diag`` (FX-INT-001)."""
    return CheckResult(path, None, SourceMap(), diagnostics=[diag] if diag is not None else [])


def warm(_arg: object) -> str:
    """Get a worker ready before its first task: import the pipeline and build the parser (a
    second or so), so the gate knows when handing work out stops costing start-up time. Returns
    the worker's identity."""
    from fxverify.syntax.parse import parser

    parser()
    return identity(CheckOptions().solver.solver)


def run_policy(task: PolicyTask) -> PolicyOutcome | NeedFiles | Big:
    """Check (or measure) one policy in a worker (see the module docstring); never raises (a
    raise would lose the message: it becomes the outcome's ``crash``)."""
    me = identity(task.options.solver.solver)
    path = task.snapshot.root
    stats = CacheStats()
    try:
        loader = Loader(path, SourceMap(), limits=task.options.limits, files=task.snapshot)
        edges = loader.measure()
        if task.split_from is not None and edges is not None and edges >= task.split_from:
            return Big(edges, me)
        r = check_counted(path, task.options, ResultCache(task.cache_dir) if task.cache_dir else None, stats, loader=loader)
        texts = {p: r.sources.get(p).text for p in r.sources.paths()}
        return PolicyOutcome(path, result_to_record(r), texts, stats, r.seconds, r.cache_hits, r.solved, identity=me)
    except NotInSnapshot as missing:
        return NeedFiles(missing.path, me)
    except Exception as exc:  # noqa: BLE001 - reported as FX-INT-001
        return PolicyOutcome(path, crash=crash(path, exc), identity=me)
