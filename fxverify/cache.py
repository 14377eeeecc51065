"""The content-addressed result cache.

Two levels, both on disk under one directory (the user's cache directory by default, from
``platformdirs``):

- ``obligations/``: one entry per solver query. The key is the SHA-256 of the query's SMT-LIB2
  text (``smt.smtlib.query_to_smtlib`` without its comment lines, which name files and never change
  the answer), the solver's version and the solver options (seed, rlimit, timeout). The value is the
  raw ``Result`` (status, model, core, reason). Changing one edge changes the text of only the
  obligations that mention it, so only those are solved again.
- ``policies/``: one entry per policy file. The key hashes the path as named, the file's text, the
  check options, the solver version and the source of fxverify itself; the entry lists every file
  the policy read (includes) with its SHA-256, and holds the whole ``CheckResult`` as a record
  (``fxverify.record``). A hit needs every listed file unchanged. Re-checking an unchanged policy
  therefore loads, generates and solves nothing.

Writes go to a temporary file in the same folder and are renamed into place, so concurrent runs
never see half an entry (POSIX ``rename`` is atomic; two writers of one key write the same bytes).
An entry that cannot be read or decoded is a miss, and the next write replaces it. Unknown verdicts
caused by a wall-clock timeout are never stored: they depend on the machine's load. Emits no
diagnostics.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fxverify import pipeline
from fxverify.atomic import replace_atomically
from fxverify.pipeline import CheckOptions, CheckResult, make_backend
from fxverify.record import result_from_record, result_to_record
from fxverify.smt.backend import Backend, Query, Result, SolverOptions, Status
from fxverify.smt.smtlib import query_to_smtlib
from fxverify.source import SourceMap

#: Layout version of the cache directory; a new layout uses a new subfolder.
CACHE_LAYOUT = "v1"


def default_cache_dir() -> str:
    """The user's cache directory for fxverify (``platformdirs.user_cache_dir``), for example
    ``~/.cache/fxverify`` on Linux."""
    import platformdirs

    return platformdirs.user_cache_dir("fxverify", appauthor=False)


def _sha(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8") if isinstance(p, str) else p)
        h.update(b"\x00")
    return h.hexdigest()


_CODE_HASH: str | None = None


def code_fingerprint() -> str:
    """SHA-256 over fxverify's own source files (``*.py``, ``*.lark``): a policy result computed by
    other code is never reused."""
    global _CODE_HASH
    if _CODE_HASH is None:
        root = Path(__file__).resolve().parent
        files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".lark") and p.is_file())
        _CODE_HASH = _sha(*[p.relative_to(root).as_posix().encode() + b"\x00" + p.read_bytes() for p in files])
    return _CODE_HASH


def obligation_text(query: Query) -> str:
    """The SMT-LIB2 text that keys a query: ``query_to_smtlib`` without comment lines."""
    return "".join(ln + "\n" for ln in query_to_smtlib(query).splitlines() if not ln.startswith(";"))


def _timed_out(reason: str) -> bool:
    return "timeout" in reason.lower() or "canceled" in reason.lower()


@dataclass
class CacheStats:
    """Counts of one run. Obligations: ``hits`` answered by the cache, ``misses`` not found
    (each then solved by Z3: ``solved``). Policies: ``policy_hits``/``policy_misses``."""

    hits: int = 0
    misses: int = 0
    solved: int = 0
    policy_hits: int = 0
    policy_misses: int = 0

    def add(self, other: "CacheStats") -> "CacheStats":
        """Add ``other``'s counts to these (a worker's, say); returns ``self``."""
        for k in ("hits", "misses", "solved", "policy_hits", "policy_misses"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self


class ResultCache:
    """The on-disk store (see the module docstring). ``directory`` is created on first write.
    Never raises on a bad entry or an unwritable directory: reads miss, writes are skipped."""

    def __init__(self, directory: str) -> None:
        self.root = Path(directory) / CACHE_LAYOUT

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json.gz"

    def _read(self, kind: str, key: str) -> Any | None:
        try:
            with gzip.open(self._path(kind, key), "rb") as fh:
                return json.loads(fh.read().decode("utf-8"))
        except (OSError, EOFError, ValueError, UnicodeDecodeError):
            return None  # missing or corrupted: a miss; the next write replaces it

    def _write(self, kind: str, key: str, value: Any) -> None:
        path = self._path(kind, key)
        # Level 1: a real policy's record compresses 11:1 in 0.1 s; level 9 gains 20% for 2 s.
        data = gzip.compress(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8"),
                             compresslevel=1, mtime=0)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(str(path), data)
        except OSError:
            pass  # a cache that cannot be written only costs time

    # -- obligations -------------------------------------------------------------------------
    def get_result(self, key: str) -> Result | None:
        """The stored ``Result`` under ``key``, or ``None`` (missing or corrupted)."""
        v = self._read("obligations", key)
        try:
            model = {str(k): (x if isinstance(x, bool) else int(x)) for k, x in v["model"].items()}
            return Result(Status(v["status"]), model, tuple(str(c) for c in v["core"]), str(v["reason"]))
        except (TypeError, KeyError, ValueError, AttributeError):
            return None

    def put_result(self, key: str, res: Result) -> None:
        """Store ``res`` under ``key`` (skipped for wall-clock timeouts)."""
        if res.status is Status.UNKNOWN and _timed_out(res.reason):
            return
        self._write("obligations", key, {"status": res.status.value, "model": res.model, "core": list(res.core),
                                         "reason": res.reason})

    # -- policies ----------------------------------------------------------------------------
    def get_policy(self, key: str) -> CheckResult | None:
        """The stored result under ``key`` if every file it read is unchanged, else ``None``."""
        v = self._read("policies", key)
        try:
            sources = SourceMap()
            for path, digest in v["deps"]:
                with open(path, "rb") as fh:
                    raw = fh.read()
                if hashlib.sha256(raw).hexdigest() != digest:
                    return None
                sources.add(path, raw.decode("utf-8"))
            result = result_from_record(v["record"], sources)
        except (OSError, TypeError, KeyError, ValueError, IndexError, UnicodeDecodeError):
            return None
        result.from_cache = True
        return result

    def put_policy(self, key: str, result: CheckResult) -> None:
        """Store ``result`` under ``key`` with the hashes of the files it read. Skipped for input
        errors, internal errors and timed-out verdicts, which must be computed again."""
        if result.input_error or result.internal_error:
            return
        if any(v.status.value == "unknown" and _timed_out(v.reason) for v in result.verdicts):
            return
        deps = []
        for path in result.sources.paths():
            try:
                with open(path, "rb") as fh:
                    raw = fh.read()
            except OSError:
                return
            if raw.decode("utf-8", errors="replace") != result.sources.get(path).text:
                return  # changed while we checked it: do not store a result for text we never saw
            deps.append([path, hashlib.sha256(raw).hexdigest()])
        self._write("policies", key, {"deps": deps, "record": result_to_record(result)})


class CachingBackend:
    """A ``Backend`` that answers from the ``ResultCache`` and asks Z3 only on a miss.

    ``solver`` is the effective ``SolverOptions`` (part of the key); ``make`` builds the real
    backend on the first miss. ``stats`` counts hits, misses and solved queries.
    """

    name = "z3+cache"

    def __init__(self, cache: ResultCache, solver: SolverOptions, stats: CacheStats,
                 make: Callable[[SolverOptions], Backend] = make_backend) -> None:
        self.cache, self.solver, self.stats, self._make = cache, solver, stats, make
        self._inner: Backend | None = None

    def _backend(self) -> Backend:
        if self._inner is None:
            self._inner = self._make(self.solver)
        return self._inner

    def version(self) -> str:
        """The real solver's version."""
        return self._backend().version()

    def key(self, query: Query) -> str:
        """The cache key of ``query``: SHA-256 of its SMT-LIB2 text, solver version and options."""
        o = self.solver
        return _sha(obligation_text(query), self.version(), f"seed={o.seed} rlimit={o.rlimit} timeout_ms={o.timeout_ms}")

    def check(self, query: Query) -> Result:
        """Answer ``query`` from the cache, or decide it with Z3 and store the answer."""
        return self.check_many([query])[0]

    def check_many(self, queries: list[Query]) -> list[Result]:
        """Answer each query from the cache; decide the misses as one batch (``solve_batch``: a
        pool backend spreads it over processes) and store their answers. Results in input order."""
        keys = [self.key(q) for q in queries]
        known: dict[str, Result] = {}
        todo: dict[str, Query] = {}  # misses, one per key: equal texts are solved once
        for k, q in zip(keys, queries):
            if k in known or k in todo:
                continue
            hit = self.cache.get_result(k)
            if hit is None:
                todo[k] = q
            else:
                known[k] = hit
        self.stats.misses += len(todo)
        self.stats.hits += len(queries) - len(todo)
        if todo:
            solved = pipeline.solve_batch(self._backend(), list(todo.values()))
            self.stats.solved += len(todo)
            for k, res in zip(todo, solved):
                self.cache.put_result(k, res)
                known[k] = res
        return [known[k] for k in keys]

    def close(self) -> None:
        """Close the real backend if it holds resources (a process pool)."""
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


def _solver_version() -> str:
    from fxverify.smt.z3_backend import Z3Backend

    return Z3Backend().version()


def policy_key(path: str, options: CheckOptions) -> str | None:
    """The policy-level key of ``path`` under ``options``; ``None`` when the file cannot be read
    (the check itself then reports it)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    o = options.solver
    opts = f"prune={options.prune} seed={o.seed} rlimit={o.rlimit} timeout_ms={o.timeout_ms} limits={options.limits!r}"
    return _sha(path, raw, opts, _solver_version(), code_fingerprint())


def check_cached(path: str, options: CheckOptions, cache: ResultCache | None, stats: CacheStats,
                 progress: Callable[[int], None] | None = None, jobs: int = 1) -> CheckResult:
    """Check ``path`` through the cache: a policy-level hit returns the stored result; otherwise
    the pipeline runs with a ``CachingBackend`` and the result is stored. With ``cache=None``
    (``--no-cache``) it is ``pipeline.check`` with the solver counts filled in. With ``jobs > 1``
    the queries that reach Z3 are decided in a pool of that many processes (``smt.pool``).
    Raises only what ``pipeline.check`` raises (bugs)."""
    key = None
    if cache is not None and not options.dump_smt:
        t0 = time.perf_counter()
        key = policy_key(path, options)
        hit = cache.get_policy(key) if key is not None else None
        if hit is not None:
            stats.policy_hits += 1
            hit.seconds = time.perf_counter() - t0
            return hit
        stats.policy_misses += 1
    before = (stats.hits, stats.solved)
    made: list = []

    def solver_backend(solver: SolverOptions) -> Backend:
        if jobs > 1:
            from fxverify.smt.pool import PoolBackend

            return PoolBackend(solver, jobs)
        return make_backend(solver)

    def make(solver: SolverOptions) -> Backend:
        b = _CountingBackend(solver_backend(solver), stats) if cache is None else CachingBackend(cache, solver, stats, solver_backend)
        made.append(b)
        return b

    try:
        result = pipeline.check(path, options, progress=progress, make=make)
    finally:
        for b in made:
            b.close()
    result.cache_hits, result.solved = stats.hits - before[0], stats.solved - before[1]
    if cache is not None and key is not None:
        cache.put_policy(key, result)
    return result


class _CountingBackend:
    """Counts the queries a backend decides (``--no-cache`` still reports ``solved``)."""

    def __init__(self, inner: Backend, stats: CacheStats) -> None:
        self.inner, self.stats, self.name = inner, stats, inner.name

    def version(self) -> str:
        return self.inner.version()

    def check(self, query: Query) -> Result:
        return self.check_many([query])[0]

    def check_many(self, queries: list[Query]) -> list[Result]:
        self.stats.solved += len(queries)
        return pipeline.solve_batch(self.inner, queries)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
