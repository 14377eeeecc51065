"""The one factory of solver backends.

``open_backend`` returns the Z3 backend, or a pool of worker processes running it for
``--jobs N``. Z3 is imported only when a backend is built: loading it costs time even for runs
that stop at an input error. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.smt.backend import Backend, SolverOptions


def open_backend(options: SolverOptions, *, jobs: int = 1) -> Backend:
    """The solver backend: Z3 in this process, or with ``jobs > 1`` a pool of that many worker
    processes running it (``smt.pool``). The caller closes it."""
    if jobs > 1:
        from fxverify.smt.pool import PoolBackend

        return PoolBackend(options, jobs)
    from fxverify.smt.z3_backend import Z3Backend

    return Z3Backend(options)


def solver_version() -> str:
    """The version string of the solver ``open_backend`` builds (part of every cache key)."""
    from fxverify.smt.z3_backend import Z3Backend

    return Z3Backend().version()
