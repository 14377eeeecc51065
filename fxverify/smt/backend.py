"""The solver backend protocol, queries and raw results.

An obligation encoder produces a ``Query``; a ``Backend`` decides it and returns a ``Result``.
``Query.expect`` says which answer proves the obligation: normally ``unsat`` (no violating
schedule exists); for FX-ORD-001 it is ``sat`` (a schedule exists). Model values are read back
through the terms that made them (``Result.value``). ``smt.factory.open_backend`` builds the
backends; the result cache (``smt.caching``) and the SMT-LIB2 recorder (``smt.recording``) wrap any
backend and implement the whole protocol too. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from fxverify.smt.terms import Term, evaluate, satisfies


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

    def model_of(self, values: dict[str, int | bool]) -> Result | None:
        """A sat ``Result`` with model ``values`` when they satisfy every assertion and fix every
        variable of the assertions and objectives (``terms.satisfies``), else ``None``."""
        if not satisfies(values, [t for _label, t in self.assertions], list(self.minimize)):
            return None
        return Result(Status.SAT, dict(values))


@dataclass(frozen=True)
class Result:
    """A backend's answer: ``model`` maps variable names to values when sat; ``core`` holds the
    labels of an unsat core when asked; ``reason`` explains ``unknown`` (timeout, rlimit)."""

    status: Status
    model: dict[str, int | bool] = field(default_factory=dict)
    core: tuple[str, ...] = ()
    reason: str = ""

    def value(self, t: Term, default: int | bool | None = None) -> int | bool | None:
        """The model's value of term ``t`` (a variable of the query, or a term over them), or
        ``default`` when the model does not fix it."""
        v = evaluate(t, self.model)
        return default if v is None else v

    def int(self, t: Term) -> int:
        """The model's integer value of ``t``; raises ``KeyError`` when the model does not fix it
        (a refuting model always fixes the variables its query minimises, or minimised before
        the objectives were taken away: ``pipeline._unminimised``, every query's first answer)."""
        v = evaluate(t, self.model)
        if v is None:
            raise KeyError(t.name or t.op)
        return int(v)


@dataclass(frozen=True)
class SolverOptions:
    """Which solver, its effort limits and seeds (STYLE.md, after CrossHair: seeded,
    resource-limited).

    ``solver`` names the backend ``smt.factory.open_backend`` builds: ``z3``, ``cvc5`` or
    ``portfolio`` (both, answering when they agree; ``smt.portfolio``). ``rlimit`` is the
    solver's deterministic resource counter (machine independent; Z3's ``rlimit``, cvc5's
    ``rlimit`` in its own units); ``timeout_ms`` is a wall-clock backstop. ``seed`` fixes the
    solver's random seeds (Z3 ``random_seed``; cvc5 ``seed`` and ``sat-random-seed``).
    """

    seed: int = 0
    rlimit: int = 20_000_000
    timeout_ms: int = 30_000
    solver: str = "z3"

    def describe(self) -> str:
        """The options as one line, for cache keys: ``solver=z3 seed=0 rlimit=... timeout_ms=...``."""
        return f"solver={self.solver} seed={self.seed} rlimit={self.rlimit} timeout_ms={self.timeout_ms}"


class Backend(Protocol):
    """A decision procedure for ``Query`` objects (pySMT-style protocol). Every backend, and every
    wrapper of one, implements all of it; ``tests/test_backend_conformance.py`` runs one conformance table
    against each."""

    name: str

    def check(self, query: Query) -> Result:
        """Decide ``query``. Never raises for solver trouble: that is ``Status.UNKNOWN`` with a reason."""
        ...

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Decide ``queries`` (a pool spreads them over processes); results in input order."""
        ...

    def version(self) -> str:
        """Return the solver's version string (used in headers and cache keys)."""
        ...

    def close(self) -> None:
        """Release what the backend holds (worker processes); idempotent."""
        ...

