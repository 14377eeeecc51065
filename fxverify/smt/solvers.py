"""Which solvers exist, whether each is installed, and the in-process backend of each.

``single_backend`` builds the backend ``SolverOptions.solver`` names (``SOLVERS``: Z3, cvc5, or the
portfolio of both) in this process; ``smt.factory.open_backend`` (the entry point) calls it in
the gate's process and in every worker of ``check --jobs``, so every worker builds the same
solver. Solvers are
imported only when a backend is built, and cvc5 is an optional dependency (``missing`` tells
whether it is installed). Emits no diagnostics.
"""

from __future__ import annotations

import importlib.util

from fxverify.smt.backend import Backend, SolverOptions

#: The solvers ``--solver`` accepts, in the order the command line lists them.
SOLVERS = ("z3", "cvc5", "portfolio")

#: The Python package each solver needs, and the pip requirement that installs it (the PyPI
#: package itself: fxverify is not on PyPI, so `fxverify[cvc5]` would name someone else's).
_NEEDS = {"z3": (("z3", "z3-solver"),), "cvc5": (("cvc5", "cvc5"),),
          "portfolio": (("z3", "z3-solver"), ("cvc5", "cvc5"))}


class SolverUnavailable(Exception):
    """The solver asked for is unknown, or its Python package is not installed (the message says
    which and how to install it)."""


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (a module blocked in
    ``sys.modules`` counts as missing)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(solver: str) -> str | None:
    """Why ``solver`` cannot be used (an unknown name, or a package that is not installed, with
    the pip requirement that installs it), or ``None`` when it can."""
    needs = _NEEDS.get(solver)
    if needs is None:
        return f"unknown solver `{solver}` (choose one of {', '.join(SOLVERS)})"
    for module, requirement in needs:
        if not _installed(module):
            return f"`--solver {solver}` needs the `{module}` Python package, which is not installed " \
                   f"(`pip install '{requirement}'`)"
    return None


def single_backend(options: SolverOptions) -> Backend:
    """The in-process backend of ``options.solver``. Raises ``SolverUnavailable`` (``missing``)."""
    why = missing(options.solver)
    if why is not None:
        raise SolverUnavailable(why)
    if options.solver == "cvc5":
        from fxverify.smt.cvc5_backend import Cvc5Backend

        return Cvc5Backend(options)
    if options.solver == "portfolio":
        from fxverify.smt.portfolio import PortfolioBackend

        return PortfolioBackend(options)
    from fxverify.smt.z3_backend import Z3Backend

    return Z3Backend(options)
