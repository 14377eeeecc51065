"""Checking one policy in a child process, under a wall-time cap and a memory cap, cancellable:
how the language server and the teaching server run the checker, so that a slow, runaway or
crashing check never blocks or takes down the server that asked for it.

Takes a policy path, unsaved texts (real path -> text, read instead of those files:
``resolve.load_policy``), ``pipeline.CheckOptions`` and ``Caps``; returns the ``CheckResult`` of
``pipeline.check``, the real checker, carried across the process boundary as the result cache
stores it (``gate.serialize``: ``result.policy`` is ``None``, the sources are the texts the child
read). The child is forked from a fork server that has imported the checker once (``spawn`` where
there is no fork server), never from the caller, which may hold threads or a solver context.
``cancel`` kills the child at once; a check past ``Caps.seconds`` is killed and its result is an
unknown verdict. The memory cap is the child's address-space limit (``RLIMIT_AS``), and its CPU time
is capped too (``RLIMIT_CPU``), so a child whose parent died still ends.

Emits FX-SMT-001 when a check passes a cap or its process ends without an answer (no verdict:
unknown, never a pass) and FX-INT-001 when the checker raises.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, crash, diagnostic
from fxverify.gate.cache import FamilyCache, ResultCache
from fxverify.gate.serialize import diagnostic_from_record, diagnostic_to_record, result_from_record, result_to_record
from fxverify.pipeline import CheckOptions, check
from fxverify.result import CheckResult
from fxverify.source import SourceMap


@dataclass(frozen=True)
class Caps:
    """What one check may use: ``seconds`` of wall time (the child is killed after it) and
    ``memory_bytes`` of address space (``None``: no cap). The solver's own per-query caps
    (``rlimit``, ``timeout_ms``) are in ``CheckOptions.solver``."""

    seconds: float = 60.0
    memory_bytes: int | None = 4 << 30


def _context() -> multiprocessing.context.BaseContext:
    """A fork server that has imported the checker (each child starts in milliseconds), or
    ``spawn`` where the platform has no fork server."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["fxverify.isolate"])
    return ctx


def warm() -> None:
    """Start the fork server now (it imports the checker), so the first check starts at once."""
    ctx = _context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def _child(conn: Connection, path: str, texts: dict[str, str], options: CheckOptions, caps: Caps,
           cache_dir: str | None) -> None:
    """Run in the child: cap its resources, check (with the families level of the result cache
    in ``cache_dir``, if given: ``gate.cache.FamilyCache``), send ``(kind, payload, texts)`` back,
    where kind is ``ok`` (payload: the result record), ``memory`` or ``crash`` (payload: the
    FX-INT-001 record). Never raises."""
    import resource

    try:
        if caps.memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (caps.memory_bytes, caps.memory_bytes))
        cpu = int(caps.seconds) + 5  # a backstop: the parent kills the child at caps.seconds
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    except (ValueError, OSError):
        pass  # a cap the platform refuses still leaves the parent's wall-time cap
    try:
        families = None if cache_dir is None else FamilyCache(ResultCache(cache_dir), options)
        r = check(path, options, texts=texts, families=families)
        read = {p: r.sources.get(p).text for p in r.sources.paths()}
        message = ("ok", result_to_record(r), read)
    except MemoryError:
        message = ("memory", None, {})
    except Exception as exc:  # noqa: BLE001 - a raise would lose the message: it is FX-INT-001
        message = ("crash", diagnostic_to_record(crash(path, exc)), {})
    try:
        conn.send(message)
    except MemoryError:
        conn.send(("memory", None, {}))
    finally:
        conn.close()


class IsolatedCheck:
    """One check of ``path`` running in a child process from the moment it is made.

    ``wait`` blocks until its result; ``cancel`` (from any thread) kills the child, after which
    ``wait`` returns ``None``. With ``cache_dir``, the check keeps the proofs of each obligation
    family there and reuses those whose inputs an edit left unchanged (an editor's re-check after
    a keystroke: ``pipeline.FamilyStore``); a killed child leaves no half-written entry (writes
    are atomic). Raises ``OSError`` when the child cannot be started."""

    def __init__(self, path: str, options: CheckOptions = CheckOptions(), texts: Mapping[str, str] | None = None,
                 caps: Caps = Caps(), cache_dir: str | None = None) -> None:
        self.path, self.caps = path, caps
        self._cancelled = threading.Event()
        ctx = _context()
        self._conn, child_end = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(child_end, path, dict(texts or {}), options, caps, cache_dir),
                                 daemon=True)
        self._started = time.monotonic()
        self._proc.start()
        child_end.close()

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Kill the child (idempotent); ``wait`` then returns ``None``."""
        self._cancelled.set()
        if self._proc.is_alive():
            self._proc.kill()

    def wait(self) -> CheckResult | None:
        """The check's result, ``None`` when cancelled. Past ``Caps.seconds`` the child is killed
        and the result holds one FX-SMT-001 (unknown); a child that ends without an answer gives
        FX-SMT-001 too (most likely the memory cap), and a raise inside the checker FX-INT-001."""
        try:
            deadline = self._started + self.caps.seconds
            message = None
            while message is None and not self.cancelled:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._proc.kill()
                    return _unknown(self.path, f"the check did not finish within {self.caps.seconds:g} s")
                ready = wait([self._conn, self._proc.sentinel], timeout=min(left, 0.5))
                if self._conn in ready:
                    try:
                        message = self._conn.recv()
                    except (EOFError, OSError):
                        break  # the child ended without sending: it died
                elif ready:
                    if self._conn.poll():  # the child sent its answer and exited at once
                        continue
                    break
            if self.cancelled:
                return None
            if message is None:
                self._proc.join(1)
                return _unknown(self.path, f"the check's process ended without an answer (exit code {self._proc.exitcode}), "
                                           f"most likely at the memory cap of {_mib(self.caps.memory_bytes)}")
            return self._result(message)
        finally:
            self._conn.close()
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(1)

    def _result(self, message: tuple) -> CheckResult:
        kind, payload, read = message
        if kind == "memory":
            return _unknown(self.path, f"the check ran out of its memory cap of {_mib(self.caps.memory_bytes)}")
        if kind == "crash":
            return CheckResult(self.path, None, SourceMap(), diagnostics=[diagnostic_from_record(payload)])
        sources = SourceMap()
        for p, t in read.items():
            sources.add(p, t)
        r = result_from_record(payload, sources)
        r.seconds = time.monotonic() - self._started
        return r


def check_isolated(path: str, options: CheckOptions = CheckOptions(), texts: Mapping[str, str] | None = None,
                   caps: Caps = Caps(), cache_dir: str | None = None) -> CheckResult:
    """Check ``path`` in a child process under ``caps`` (with the families level of the result
    cache in ``cache_dir``, if given) and wait for the result (see ``IsolatedCheck.wait``); a
    child that cannot be started is FX-INT-001 in the result."""
    try:
        job = IsolatedCheck(path, options, texts, caps, cache_dir)
    except OSError as err:
        return CheckResult(path, None, SourceMap(), diagnostics=[crash(path, err)])
    result = job.wait()
    assert result is not None  # INVARIANT: nobody else holds the job to cancel it
    return result


def _mib(n: int | None) -> str:
    return "no cap" if n is None else f"{n / (1 << 20):g} MiB"


def _unknown(path: str, why: str) -> CheckResult:
    """The result of a check stopped by a cap: no obligation decided, one FX-SMT-001. Its name
    is the file's (no policy was read), so it counts as unknown, not as an input error."""
    d: Diagnostic = diagnostic(codes.SMT_001, f"no verdict for `{os.path.basename(path)}`: {why}",
                               help="unknown is never a pass: shrink the policy (fewer edges or smaller families), "
                                    "or check it with `fxverify check`, which has no such cap")
    return CheckResult(path, None, SourceMap(), diagnostics=[d], name=os.path.basename(path))
