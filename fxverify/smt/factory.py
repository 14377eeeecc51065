"""The one factory of solver backends.

``open_backend`` returns the backend ``SolverOptions.solver`` names (``SOLVERS``: Z3, cvc5, or the
portfolio of both). The solvers are
imported only when a backend is built: loading them costs time even for runs that stop at an input
error, and cvc5 is an optional dependency (``missing`` tells whether it is installed). Emits no
diagnostics.
"""

from __future__ import annotations

from fxverify.smt.backend import Backend, SolverOptions
from fxverify.smt.solvers import SOLVERS, SolverUnavailable, missing, single_backend

__all__ = ["SOLVERS", "SolverUnavailable", "missing", "open_backend", "single_backend", "solver_version"]


def open_backend(options: SolverOptions) -> Backend:
    """The solver backend of ``options.solver``, in this process (``check --jobs`` spreads whole
    obligations over worker processes instead: ``gate.shards``). The caller closes it. Raises
    ``SolverUnavailable`` (``missing``)."""
    return single_backend(options)


def solver_version(solver: str = "z3") -> str:
    """The version string of the backend ``solver`` names (part of every cache key): Z3's bare
    version (``4.13.0.0``), ``cvc5 1.4.2``, or both for the portfolio. Raises
    ``SolverUnavailable``."""
    return single_backend(SolverOptions(solver=solver)).version()
