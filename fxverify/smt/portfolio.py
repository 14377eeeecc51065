"""The portfolio backend (``--solver portfolio``): every query is decided by Z3 and by cvc5, one
after the other in this process (a pool spreads queries, never the two solvers of one query).

How the two answers combine (``combine``), so that a pass needs a solver's proof and no solver's
objection:

- both decided and equal: that answer, with Z3's model or core, so witnesses are byte-identical
  to a Z3 run;
- one ``sat`` and the other ``unsat``: a solver disagreement, ``Status.UNKNOWN`` with a reason
  naming both answers (never a pass; FX-SMT-001 shows it);
- one ``unknown`` (a limit) and the other decided: the decided answer (with its model or core):
  the two solvers decide the same logic and a decided answer is sound on its own, so the
  portfolio is never weaker than either solver. A sat model is checked against the query's
  assertions first (``terms.evaluate``); a model that breaks one is a solver bug and gives
  ``unknown``;
- both ``unknown``: ``unknown`` with both reasons.

Deterministic: both solvers are seeded and resource-limited, and the combination depends on their
answers alone. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxverify.smt.backend import Query, Result, SolverOptions, Status
from fxverify.smt.cvc5_backend import Cvc5Backend
from fxverify.smt.terms import evaluate
from fxverify.smt.z3_backend import Z3Backend


def _model_holds(query: Query, res: Result) -> bool:
    """Whether a sat answer's model satisfies every assertion of ``query``."""
    return all(evaluate(t, res.model) is True for _, t in query.assertions)


def combine(query: Query, z3: Result, cvc5: Result) -> Result:
    """The portfolio's answer from Z3's and cvc5's answers to ``query`` (see the module docstring)."""
    decided = [(n, r) for n, r in (("z3", z3), ("cvc5", cvc5)) if r.status is not Status.UNKNOWN]
    if not decided:
        return Result(Status.UNKNOWN, reason=f"z3: {z3.reason}; cvc5: {cvc5.reason}")
    if len(decided) == 2 and z3.status is not cvc5.status:
        return Result(Status.UNKNOWN, reason=f"solver disagreement: z3 says {z3.status.value}, "
                                             f"cvc5 says {cvc5.status.value}")
    name, res = decided[0]
    if res.status is Status.SAT and not _model_holds(query, res):
        return Result(Status.UNKNOWN, reason=f"solver disagreement: the model {name} gave breaks an assertion")
    return res


class PortfolioBackend:
    """Decide each query with Z3 and cvc5 and combine the answers (``combine``)."""

    name = "portfolio"

    def __init__(self, options: SolverOptions | None = None) -> None:
        self.options = options or SolverOptions()
        self.z3, self.cvc5 = Z3Backend(self.options), Cvc5Backend(self.options)

    def version(self) -> str:
        """``z3 <version> + cvc5 <version>``: both solvers' versions (part of every cache key)."""
        return f"z3 {self.z3.version()} + {self.cvc5.version()}"

    def check(self, query: Query) -> Result:
        """Decide ``query`` with both solvers and combine their answers."""
        return combine(query, self.z3.check(query), self.cvc5.check(query))

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Decide ``queries`` one after another, in this process; results in input order."""
        return [self.check(q) for q in queries]

    def close(self) -> None:
        """Close both solvers' backends."""
        self.z3.close()
        self.cvc5.close()
