"""A backend that decides batches of queries in worker processes (``check --jobs N`` on one policy).

Takes ``Query`` objects in batches (``check_many``); returns their ``Result``s in the same order.
Each worker runs the backend ``SolverOptions.solver`` names (``solvers.single_backend``: Z3, cvc5
or the portfolio), which solves every query in a fresh context, so an answer depends only on the
query and the ``SolverOptions``: the results, and therefore the report, are the same
bytes as with one process. The pool is started on the first batch that has two or more queries
(starting workers costs about a second each) and must be closed with ``close``. Emits no
diagnostics; never raises for solver trouble (that is ``Status.UNKNOWN``).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from fxverify.smt.backend import Backend, Query, Result, SolverOptions
from fxverify.smt.solvers import single_backend

_WORKER_BACKEND: dict[SolverOptions, Backend] = {}


def _solve(options: SolverOptions, query: Query) -> Result:
    """Decide ``query`` in a worker process, with one backend per option set."""
    backend = _WORKER_BACKEND.get(options)
    if backend is None:
        backend = _WORKER_BACKEND[options] = single_backend(options)
    return backend.check(query)


class PoolBackend:
    """Decide queries with the solver of ``options`` in ``jobs`` worker processes (``spawn``: the
    parent may hold a solver context, which must not be forked)."""

    def __init__(self, options: SolverOptions, jobs: int) -> None:
        self.options, self.jobs = options, jobs
        self.name = f"{options.solver}-pool"
        self._pool: ProcessPoolExecutor | None = None

    def version(self) -> str:
        """The solver's version (asked in this process)."""
        return single_backend(self.options).version()

    def check(self, query: Query) -> Result:
        """Decide one query in this process: a pool is not worth starting for it."""
        return _solve(self.options, query)

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Decide ``queries`` in the pool; results in input order."""
        if len(queries) < 2:
            return [self.check(q) for q in queries]
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=multiprocessing.get_context("spawn"))
        return list(self._pool.map(_solve, [self.options] * len(queries), queries))

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
