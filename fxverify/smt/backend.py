"""The solver backend protocol, queries and raw results.

An obligation encoder produces a ``Query``; a ``Backend`` decides it and returns a ``Result``.
``Query.expect`` says which answer proves the obligation: normally ``unsat`` (no violating
schedule exists); for FX-ORD-001 it is ``sat`` (a schedule exists). Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from fxverify.smt.terms import Term


class Status(Enum):
    """Raw solver answers."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Query:
    """One SMT query.

    ``assertions`` are ``(label, term)`` pairs; a label (or ``None``) names the assertion in the
    unsat core. ``minimize`` lists integer terms minimised lexicographically when the query is
    satisfiable, so witnesses are the smallest (addresses, indices, times) and deterministic.
    ``header`` lines become comments in the SMT-LIB2 file.
    """

    name: str
    assertions: tuple[tuple[str | None, Term], ...]
    minimize: tuple[Term, ...] = ()
    expect: Status = Status.UNSAT
    header: tuple[str, ...] = ()
    want_core: bool = False


@dataclass(frozen=True)
class Result:
    """A backend's answer: ``model`` maps variable names to values when sat; ``core`` holds the
    labels of an unsat core when asked; ``reason`` explains ``unknown`` (timeout, rlimit)."""

    status: Status
    model: dict[str, int | bool] = field(default_factory=dict)
    core: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class SolverOptions:
    """Solver effort limits and seeds (STYLE.md, after CrossHair: seeded, resource-limited).

    ``rlimit`` is Z3's deterministic resource counter (machine independent); ``timeout_ms`` is a
    wall-clock backstop. ``seed`` fixes ``smt.random_seed`` and ``sat.random_seed``.
    """

    seed: int = 0
    rlimit: int = 20_000_000
    timeout_ms: int = 30_000


class Backend(Protocol):
    """A decision procedure for ``Query`` objects (pySMT-style protocol)."""

    name: str

    def check(self, query: Query) -> Result:
        """Decide ``query``. Never raises for solver trouble: that is ``Status.UNKNOWN`` with a reason."""
        ...

    def version(self) -> str:
        """Return the solver's version string (used in headers and cache keys)."""
        ...
