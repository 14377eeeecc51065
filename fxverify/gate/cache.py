"""The content-addressed result cache.

Two levels, both on disk under one directory (the user's cache directory by default, from
``platformdirs``):

- ``obligations/``: one entry per solver query, keyed by ``smt.caching.CachingBackend.key`` (the
  SHA-256 of ``smt.caching.obligation_text``: the query's SMT-LIB2 text without comment lines plus
  its minimisation objectives and whether it asks for an unsat core; then the solver's version and
  options).
  The value is the raw ``Result`` (status, model, core, reason). Changing one edge changes the text
  of only the obligations that mention it, so only those are solved again.
- ``families/``: one entry per obligation family and digest of what it reads of a policy
  (``obligations.inputs.family_digests``), with the check options, the solver's version,
  fxverify's version and its code: the family's outcomes, all proofs (a family with a refuted or
  unknown outcome is not stored). After a one-edge edit, a check generates and discharges only
  the families whose inputs changed and takes the others' proofs from here
  (``FamilyCache``, ``pipeline.FamilyStore``).
- ``policies/``: one entry per policy file. The key hashes the path as named and as resolved, the
  repository root, the file's text, the check options, the solver version, fxverify's version and
  the source of fxverify itself; the entry lists every file the policy read (includes) with its
  resolved path and SHA-256, and holds the whole ``CheckResult`` as a record (``gate.serialize``).
  A hit needs every listed file unchanged and resolving where it did (a symlinked include that now
  leads out of the repository is a miss). Re-checking an unchanged policy therefore loads,
  generates and solves nothing.

Writes go to a temporary file in the same folder and are renamed into place, so concurrent runs
never see half an entry (POSIX ``rename`` is atomic; two writers of one key write the same bytes).
An entry that cannot be read or decoded is a miss, and the next write replaces it. Unknown verdicts
caused by a wall-clock timeout are never stored: they depend on the machine's load. Emits no
diagnostics.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import time
from array import array
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import fxverify
from fxverify import pipeline
from fxverify.atomic import replace_atomically
from fxverify.diagnostics.codes import Family, lookup_strict
from fxverify.fileio import read_regular
from fxverify.gate.serialize import result_from_record, result_to_record
from fxverify.pipeline import CheckOptions
from fxverify.resolve import Loader
from fxverify.resolve.snapshot import repo_root
from fxverify.result import CheckResult, ProvedRun
from fxverify.smt.backend import Backend, Result, SolverOptions, Status
from fxverify.smt.caching import CachingBackend, CountingBackend, QueryCounts, sha256
from fxverify.smt.factory import open_backend, solver_version
from fxverify.source import SourceMap

#: Layout version of the cache directory; a new layout uses a new subfolder.
CACHE_LAYOUT = "v1"


def default_cache_dir() -> str:
    """The user's cache directory for fxverify (``platformdirs.user_cache_dir``), for example
    ``~/.cache/fxverify`` on Linux."""
    import platformdirs

    return platformdirs.user_cache_dir("fxverify", appauthor=False)


_CODE_HASH: str | None = None


def code_fingerprint() -> str:
    """SHA-256 over the source files of the whole fxverify package (``*.py``, ``*.lark``): a policy
    result computed by other code is never reused."""
    global _CODE_HASH
    if _CODE_HASH is None:
        root = Path(fxverify.__file__).resolve().parent
        files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".lark") and p.is_file())
        _CODE_HASH = sha256(*[p.relative_to(root).as_posix().encode() + b"\x00" + p.read_bytes() for p in files])
    return _CODE_HASH


def _timed_out(reason: str) -> bool:
    return "timeout" in reason.lower() or "canceled" in reason.lower()


@dataclass
class CacheStats(QueryCounts):
    """Counts of one run. Obligations: ``hits`` answered by the cache, ``misses`` not found
    (each then solved: ``solved``). Policies: ``policy_hits``/``policy_misses``. Workers:
    ``workers_lost``, the workers that ended without answering (killed, out of memory, a
    cluster's worker gone), whose work this process then redid (``gate.run``, ``gate.forked``):
    each forked worker that died; for the other executors each error they report, so a local pool
    broken by one dead worker counts once, and a cluster reports one per policy it lost. The
    report is complete; this count says it cost more than planned."""

    policy_hits: int = 0
    policy_misses: int = 0
    workers_lost: int = 0

    def add(self, other: CacheStats) -> CacheStats:
        """Add ``other``'s counts to these (a worker's, say); returns ``self``."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
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
            for path, real, digest in v["deps"]:
                # Where a file resolves decides whether an include is allowed (FX-NAM-004): the
                # same bytes behind a symlink that now leads out of the repository are a miss.
                if os.path.realpath(path) != real:
                    return None
                raw = read_regular(path)
                if hashlib.sha256(raw).hexdigest() != digest:
                    return None
                sources.add(path, raw.decode("utf-8"))
            result = result_from_record(v["record"], sources)
        except (OSError, TypeError, KeyError, ValueError, IndexError, UnicodeDecodeError):
            return None
        result.from_cache = True
        result.reused = ()  # what the stored run took from the families level is not this run's
        return result

    def put_policy(self, key: str, result: CheckResult) -> None:
        """Store ``result`` under ``key`` with the hashes of the files it read. Skipped for input
        errors, internal errors and timed-out verdicts, which must be computed again."""
        if result.input_error or result.internal_error:
            return
        if any(_timed_out(why) for why in result.unknown_reasons()):
            return
        deps = []
        for path in result.sources.paths():
            try:
                raw = read_regular(path)
            except OSError:
                return
            if raw.decode("utf-8", errors="replace") != result.sources.get(path).text:
                return  # changed while we checked it: do not store a result for text we never saw
            deps.append([path, os.path.realpath(path), hashlib.sha256(raw).hexdigest()])
        self._write("policies", key, {"deps": deps, "record": result_to_record(result)})


def policy_key(path: str, options: CheckOptions) -> str | None:
    """The policy-level key of ``path`` under ``options``; ``None`` when the file cannot be read
    (the check itself then reports it).

    It covers everything the verdict depends on besides the files read (whose hashes the entry
    stores): the path as given and as resolved, the repository root that confines includes
    (``resolve.snapshot.repo_root``: adding or removing a ``.git`` changes which includes are
    allowed), the check and solver options (the solver's name among them), the solver's version,
    fxverify's version and its own code. The gate options (``--unknown``, ``--fail-on``) are not in
    it: the gate applies them to the result after the cache (``gate.run_gate``).
    """
    try:
        raw = read_regular(path, options.limits.max_file_bytes)
    except OSError:  # not a regular file, too large, unreadable: the check reports it
        return None
    where = f"real={os.path.realpath(path)} root={repo_root(path)}"
    return sha256(path, raw, *_checker(options), where)


def _checker(options: CheckOptions) -> tuple[str, ...]:
    """What a cached result depends on besides its input: the check and solver options (the
    solver's name among them), the solver's version, fxverify's version and its own code."""
    o = options.solver
    opts = f"prune={options.prune} {o.describe()} limits={options.limits!r}"
    if options.certify:
        opts += f" certify={options.certify}"  # only when asked: the keys of plain checks stay as they were
    if options.skip_codes:
        opts += f" skip={','.join(sorted(options.skip_codes))}"
    if not options.parametric:
        opts += " parametric=off"  # the same verdicts, other methods in the counts
    if not options.minimal:
        opts += " minimal=off"  # the same verdicts, other witnesses
    return opts, solver_version(o.solver), f"fxverify {fxverify.__version__}", code_fingerprint()


class FamilyCache:
    """The ``families`` level of a ``ResultCache`` for checks with ``options`` (a
    ``pipeline.FamilyStore``): the proofs of one obligation family, keyed by the digest of what
    the family reads of the policy and by ``_checker(options)``. Never raises: an entry that
    cannot be read or does not decode (other code, a truncated file) is a miss."""

    def __init__(self, cache: ResultCache, options: CheckOptions) -> None:
        self.cache = cache
        self.checker = _checker(options)

    def _key(self, family: Family, digest: str) -> str:
        return sha256(f"family={family.value}", digest, *self.checker)

    def held(self, family: Family, digest: str) -> bool:
        """Whether an entry for ``family`` with inputs ``digest`` exists, without reading it (it
        may still not decode: ``get`` is the answer)."""
        return self.cache._path("families", self._key(family, digest)).is_file()

    def get(self, family: Family, digest: str) -> ProvedRun | None:
        """The proofs stored for ``family`` with inputs ``digest``, or ``None``."""
        v = self.cache._read("families", self._key(family, digest))
        try:
            kinds = tuple((str(c), str(m)) for c, m in v["kinds"])
            if any(lookup_strict(c).family is not family for c, _m in kinds):
                return None
            ids = array("I")
            ids.frombytes(base64.b64decode(v["ids"], validate=True))
            keys = str(v["keys"])
            queries = int(v["queries"])
            if (keys.count("\n") + 1 if keys else 0) != len(ids) or any(i >= len(kinds) for i in set(ids)) or queries < 0:
                return None
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        return ProvedRun(keys, kinds, ids, queries)

    def put(self, family: Family, digest: str, run: ProvedRun) -> None:
        """Store ``run`` (every obligation of ``family`` proved) for inputs ``digest``."""
        self.cache._write("families", self._key(family, digest),
                          {"keys": run.keys, "kinds": [list(k) for k in run.kinds],
                           "ids": base64.b64encode(run.ids.tobytes()).decode("ascii"), "queries": run.queries})


def lookup(path: str, options: CheckOptions, cache: ResultCache | None, stats: CacheStats) -> tuple[str | None, CheckResult | None]:
    """``(policy key, stored result)`` for ``path``: the key is ``None`` without a cache, with
    ``dump_smt`` (a dump must run every query) or for a file that cannot be read; the result is
    ``None`` on a miss. Counts the hit or miss in ``stats``."""
    if cache is None or options.dump_smt:
        return None, None
    t0 = time.perf_counter()
    key = policy_key(path, options)
    hit = cache.get_policy(key) if key is not None else None
    if hit is not None:
        stats.policy_hits += 1
        hit.seconds = time.perf_counter() - t0
        return key, hit
    stats.policy_misses += 1
    return key, None


def counting(cache: ResultCache | None, stats: CacheStats) -> pipeline.BackendFactory:
    """Makes the solver of a check: through the obligation cache (``CachingBackend``), or with
    ``cache=None`` counting its queries only; either way the counts go to ``stats``."""
    def make(solver: SolverOptions) -> Backend:
        inner = open_backend(solver)
        return CountingBackend(inner, stats) if cache is None else CachingBackend(inner, cache, solver, stats)
    return make


def check_counted(path: str, options: CheckOptions, cache: ResultCache | None, stats: CacheStats,
                  progress: pipeline.Progress | None = None, loader: Loader | None = None) -> CheckResult:
    """``pipeline.check`` with the solver of ``counting`` and, with a cache, its families level
    (``FamilyCache``: families whose inputs are unchanged are not discharged again; the
    policy-level cache is the caller's), the result's ``cache_hits`` and ``solved`` filled in.
    Raises what ``pipeline.check`` raises."""
    before = (stats.hits, stats.solved)
    result = pipeline.check(path, options, make=counting(cache, stats), progress=progress, loader=loader,
                            families=None if cache is None else FamilyCache(cache, options))
    result.cache_hits, result.solved = stats.hits - before[0], stats.solved - before[1]
    return result


def check_cached(path: str, options: CheckOptions, cache: ResultCache | None, stats: CacheStats,
                 progress: pipeline.Progress | None = None) -> CheckResult:
    """Check ``path`` through the cache: a policy-level hit returns the stored result; otherwise
    the pipeline runs with a ``CachingBackend`` over the solver and the result is stored. With
    ``cache=None`` (``--no-cache``) it is ``pipeline.check`` with the solver counts filled in.
    Raises only what ``pipeline.check`` raises (bugs)."""
    key, hit = lookup(path, options, cache, stats)
    if hit is not None:
        return hit
    result = check_counted(path, options, cache, stats, progress)
    if cache is not None and key is not None:
        cache.put_policy(key, result)
    return result
