"""Asking a refuted obligation's query again, for the check's discharge (``pipeline``): the
sat answer an obligation's own guess gives its query (``checked_guess``: no solver asked), and
the answer with the query's minimisation objectives, whose minimal witness replaces the first
one (``minimised``). Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.obligations.base import Obligation
from fxverify.result import CheckResult, Refutation
from fxverify.smt.backend import Backend, Query, Result, Status


def checked_guess(ob: Obligation, query: Query, prune: bool) -> Result | None:
    """The sat answer ``ob``'s guess gives ``query`` when it satisfies every assertion
    (``Query.model_of``) and a model refutes (``expect`` unsat), else ``None``; none without ``prune``."""
    values = ob.guess() if prune else None
    return query.model_of(values) if values is not None and query.expect is Status.UNSAT else None


def minimised(ob: Obligation, query: Query, plain: Result, backend: Backend, result: CheckResult, at: int) -> Result:
    """The answer to ``query`` with its objectives, for the refuted ``ob`` whose query without them
    (``pipeline._unminimised``) ``plain`` answered: when it refutes again (the same assertions: unless the
    solver runs out of time), its minimal witness replaces the refutation at ``at`` in ``result``
    (``ob.witness`` reads the model again) and it is returned; otherwise ``plain``, whose witness
    stays (a proving answer would be the solver contradicting itself). Not counted in
    ``result.solver_calls`` (the queries that decide obligations); ``--stats`` counts it."""
    res = backend.check(query)
    if res.status is Status.UNKNOWN or res.status is query.expect:
        return plain
    w = ob.witness(res)
    result.refutations[at] = Refutation(ob.key, ob.code, tuple(ob.edges), w)
    return res
