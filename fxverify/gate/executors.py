"""Where the gate's tasks run: worker processes on this machine, or an existing Dask cluster.

``open_executor(spec, jobs, solver)`` takes the ``--executor`` value (``local``, or
``dask://HOST:PORT``) and returns an ``Executor``: something that runs ``fn(arg)`` elsewhere and
gives a future back (``submit``), with ``slots`` tasks running at once. ``LocalExecutor`` is a pool
of ``jobs`` processes (``spawn``: the parent may hold a solver context, which must not be forked),
started on the first task. ``DaskExecutor`` is a ``distributed.Client`` connected to the scheduler;
on connecting it asks every worker for its ``identity`` (fxverify's version, the hash of its
code, the solver's version) and refuses workers that would compute other bytes. The gate's
scheduler (``gate.run``) decides what to submit and merges the answers, so a report never depends
on where its parts ran.

Emits FX-USE-005 (an ``--executor`` value that is neither form) and FX-USE-009 (the ``dask``
extra is not installed; the port is not a TCP port or the host name does not resolve; the
scheduler refuses the connection, cannot be reached, does not speak Dask's protocol, is a worker
or anything else rather than a scheduler, stops answering during the handshake or has no workers;
or a worker runs another fxverify or solver), each with a hint, so the command exits 2 instead of
raising.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import re
import socket
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Protocol

import fxverify
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.gate.cache import code_fingerprint
from fxverify.smt.factory import missing, solver_version

#: Seconds to wait for the Dask scheduler to answer, and then for a first worker to join it.
CONNECT_TIMEOUT_S = 10

#: The command that installs what ``--executor dask://`` needs, on the gate's machine and on
#: every worker (``distributed`` brings ``dask``; in a checkout of fxverify, ``pip install
#: '.[dask]'`` installs the tested floor).
DASK_INSTALL = "pip install distributed"

_DASK = re.compile(r"dask://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[^:/\[\]]+)")

#: The identity ``type`` of a Dask scheduler (``distributed.Scheduler.identity``: its class name).
_SCHEDULER = "Scheduler"


@functools.cache
def identity(solver: str) -> str:
    """What decides the bytes a worker computes: fxverify's version, the SHA-256 of its code
    (``cache.code_fingerprint``) and the version of ``solver`` (or why it is missing)."""
    why = missing(solver)
    have = why if why is not None else solver_version(solver)
    return f"fxverify {fxverify.__version__} (code {code_fingerprint()[:12]}), solver {solver}: {have}"


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one, else the
    machine's count): ``check --jobs``'s default."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Executor(Protocol):
    """Runs the gate's tasks: ``submit(fn, arg)`` calls ``fn(arg)`` in a worker and returns a
    future of its value (``result()``, ``add_done_callback``); ``slots`` tasks run at once;
    ``name`` is the ``--executor`` value. A task never raises (it returns its crash); a future
    that raises means the worker was lost."""

    name: str
    slots: int

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        """Run ``fn(arg)`` in a worker; its future."""
        ...

    def check_identity(self, got: str) -> bool:
        """Whether a task's answer came from a worker that computes this process's bytes."""
        ...

    def close(self) -> None:
        """Stop using the workers (idempotent)."""
        ...


class LocalExecutor:
    """``jobs`` worker processes on this machine (they run this very installation)."""

    def __init__(self, jobs: int) -> None:
        self.name, self.slots = "local", max(1, jobs)
        self._pool: ProcessPoolExecutor | None = None

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Future:
        """Run ``fn(arg)`` in the pool, starting it on first use."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.slots, mp_context=multiprocessing.get_context("spawn"))
        return self._pool.submit(fn, arg)

    def started(self) -> bool:
        """Whether the pool's processes (and its threads in this process) have started."""
        return self._pool is not None

    def check_identity(self, got: str) -> bool:
        """Always: the workers import this installation."""
        return True

    def close(self) -> None:
        """Stop the workers. By then every task's answer has been read; a worker still starting
        (the gate finished before it was ready) is terminated rather than waited for."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            procs = list(getattr(pool, "_processes", {}).values())  # no public way before Python 3.14
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
            pool.shutdown(wait=True)


class DaskExecutor:
    """A ``distributed.Client`` connected to the scheduler at ``address``; ``slots`` is the
    number of worker threads the cluster had when it connected (``Client.nthreads``). Tasks are
    submitted impure (``pure=False``): two checks of one policy are two tasks."""

    def __init__(self, name: str, client: Any, slots: int, expected: str) -> None:
        self.name, self.slots = name, max(1, slots)
        self._client, self._expected = client, expected

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        """Submit ``fn(arg)`` to the cluster."""
        return self._client.submit(fn, arg, pure=False)

    def check_identity(self, got: str) -> bool:
        """Whether ``got`` is this process's identity (a worker that joined after connecting may run other code)."""
        return got == self._expected

    def close(self) -> None:
        """Disconnect from the scheduler; the cluster keeps running."""
        if self._client is not None:
            self._client.close()
            self._client = None


def open_executor(spec: str, jobs: int, solver: str) -> Executor | Diagnostic:
    """The executor ``spec`` names (``--executor``), or the diagnostic saying why it cannot be
    used. ``jobs`` sizes the local pool; ``solver`` is the solver every worker must have."""
    if spec == "local":
        return LocalExecutor(jobs)
    m = _DASK.fullmatch(spec)
    if m is None:
        return diagnostic(codes.USE_005, f"`--executor {spec}` is not an executor; use `local` or `dask://HOST:PORT`",
                          help="for example `--executor dask://scheduler.example.org:8786`, the address a "
                               "`dask scheduler` prints")
    bad = _bad_address(spec, m["host"], m["port"])
    if bad is not None:
        return bad
    return _connect(spec, f"tcp://{m['host']}:{m['port']}", solver)


def _bad_address(spec: str, host: str, port: str) -> Diagnostic | None:
    """FX-USE-009 for an address that cannot name a scheduler, found before connecting: a port
    that is not a number from 1 to 65535 (RFC 6335: port 0 is reserved), or a host name that
    does not resolve; else ``None``."""
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return diagnostic(codes.USE_009, f"`--executor {spec}`: `{port}` is not a TCP port",
                          help="give the scheduler's port, a number from 1 to 65535 (`dask scheduler` listens on "
                               "8786 unless told otherwise): `dask://HOST:8786`")
    try:
        socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        return diagnostic(codes.USE_009, f"`--executor {spec}`: the host name `{host}` does not resolve "
                                         f"({getattr(err, 'strerror', None) or _one_line(err)})",
                          help="check the spelling of the scheduler's host name, or give its IP address "
                               "(`dask://10.0.0.5:8786`)")
    return None


def _connect(spec: str, address: str, solver: str) -> Executor | Diagnostic:
    try:
        from distributed import Client
    except ImportError:
        return diagnostic(codes.USE_009, f"`--executor {spec}` needs the `distributed` package, which is not installed",
                          help=f"install it with `{DASK_INSTALL}` (or `pip install '.[dask]'` in a checkout of fxverify; "
                               "the same on every worker), or use `--executor local`")
    refused = _probe(spec, address)
    if refused is not None:
        return refused
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as err:  # the scheduler went away between the probe and the client;
        # distributed's CommClosedError is an OSError, asyncio's TimeoutError the builtin one
        return _unreachable(spec, err)
    try:
        problem = _workers_problem(spec, client, solver)
    except Exception as err:  # noqa: BLE001 - a handshake that breaks off is the scheduler's fault, not ours
        problem = diagnostic(codes.USE_009, f"the Dask scheduler at `{spec}` stopped answering during the handshake: "
                                            f"{_one_line(err)}",
                             help="check the scheduler's log and that it runs the `distributed` version of this "
                                  "machine, then retry, or use `--executor local`")
    if isinstance(problem, Diagnostic):
        client.close()
        return problem
    slots, expected = problem
    return DaskExecutor(spec, client, slots, expected)


def _probe(spec: str, address: str) -> Diagnostic | None:
    """``None`` when a Dask scheduler answers at ``address`` (``tcp://HOST:PORT``) within
    ``CONNECT_TIMEOUT_S`` seconds, else the FX-USE-009 saying what answered instead.

    ``distributed.Client`` bounds only the TCP connect: its protocol handshake waits for the
    peer's first message without a deadline (a silent server holds it for ever), and it reads a
    frame length from whatever bytes arrive (an HTTP server's answer becomes a multi-exabyte
    allocation). So the gate first asks for the scheduler's ``identity`` over the library's own
    comm (``distributed.comm.connect``, the handshake included) under one overall deadline, and
    only a peer that answers as a scheduler is handed to ``Client``. Before that, a plain TCP
    connect (``_tcp_refused``): ``distributed``'s connect retries a refused connection until its
    deadline, so a port where nothing listens would wait it out and be reported as a time-out.
    Runs its own event loop: call it from synchronous code (the command line)."""
    from distributed.comm import connect

    closed = _tcp_refused(spec, address)
    if closed is not None:
        return closed

    async def ask() -> object:
        comm = await connect(address, timeout=CONNECT_TIMEOUT_S)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        answer = asyncio.run(asyncio.wait_for(ask(), CONNECT_TIMEOUT_S))
    except Exception as err:  # noqa: BLE001 - whatever the peer sent, it is not a scheduler we can use
        return _unreachable(spec, err)
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind == _SCHEDULER:
        return None
    if kind in ("Worker", "Nanny"):
        return diagnostic(codes.USE_009, f"`{spec}` is a Dask {kind.lower()}, not the scheduler",
                          help="give the scheduler's address (the one `dask scheduler` prints and `dask worker` was "
                               "given), not a worker's")
    what = f" (it says it is a `{kind}`)" if isinstance(kind, str) and kind.isprintable() and len(kind) <= 40 else ""
    return diagnostic(codes.USE_009, f"`{spec}` does not answer as a Dask scheduler{what}",
                      help="check the host and port: give the address `dask scheduler` prints (by default port "
                           "8786), or use `--executor local`")


def _tcp_refused(spec: str, address: str) -> Diagnostic | None:
    """FX-USE-009 when a plain TCP connect to ``address`` (``tcp://HOST:PORT``) fails (refused at
    once, or no answer within ``CONNECT_TIMEOUT_S``), else ``None``; the connection is closed
    unused (a Dask scheduler logs and drops a connection that sends nothing)."""
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as err:
        return _unreachable(spec, err)
    return None


def _unreachable(spec: str, err: BaseException) -> Diagnostic:
    """The FX-USE-009 for a scheduler that refused, timed out or broke the protocol (``err``).
    Every time-out has one wording, whichever deadline fired and however the executor was named
    (``--executor``, ``FXVERIFY_EXECUTOR`` or the configuration file)."""
    if isinstance(err, TimeoutError) or "timed out" in str(err).lower():
        # the overall deadline, the socket's, or the library's own connect and handshake deadlines
        # (the same length; an OSError whose text says so): one wording for all
        why = f"no answer within {CONNECT_TIMEOUT_S} s"
    elif isinstance(err, ConnectionRefusedError):
        why = "connection refused (nothing listens on that port)"
    elif isinstance(err, OSError):
        why = _one_line(err)
    else:  # a garbled frame: decoding errors, or a nonsense frame length read as a huge allocation
        why = "what answered there does not speak Dask's protocol (another service on that port?)"
    return diagnostic(codes.USE_009, f"cannot reach the Dask scheduler at `{spec}`: {why}",
                      help="start it (`dask scheduler`, then `dask worker HOST:PORT` on each machine), check the "
                           "host and port, or use `--executor local`")


def _workers_problem(spec: str, client: Any, solver: str) -> tuple[int, str] | Diagnostic:
    """``(worker threads, identity)`` when every worker computes this process's bytes, else the
    FX-USE-009 saying which does not."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as err:
        return diagnostic(codes.USE_009, f"the Dask scheduler at `{spec}` has no workers: {_one_line(err)}",
                          help="start workers with `dask worker HOST:PORT` on machines with fxverify installed")
    expected = identity(solver)
    try:
        seen: dict[str, str] = client.run(identity, solver)
    except Exception as err:  # noqa: BLE001 - whatever a worker raised, it cannot run fxverify
        return diagnostic(codes.USE_009, f"the workers of `{spec}` cannot run fxverify: {_one_line(err)}",
                          help="install this fxverify on every worker (from the same checkout or commit, with "
                               f"`{DASK_INSTALL}`), then restart them")
    wrong = sorted((w, got) for w, got in seen.items() if got != expected)
    if wrong:
        worker, got = wrong[0]
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        return diagnostic(codes.USE_009, f"worker `{worker}`{more} of `{spec}` runs {got}; this gate runs {expected}",
                          help="every worker needs the same fxverify (same version and code) and the same solver, so "
                               "that a report does not depend on where it was computed: install the commit the gate "
                               "runs on the workers, then restart them")
    return sum(client.nthreads().values()), expected


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:1].lower() + text[1:]
