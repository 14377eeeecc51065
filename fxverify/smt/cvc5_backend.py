"""The cvc5 backend: the only module of fxverify that imports ``cvc5`` (PyPI ``cvc5``, an optional
dependency: ``pip install cvc5``, the ``cvc5`` extra of fxverify).

Takes ``Query`` objects, returns ``Result`` objects, like ``z3_backend``. Every query gets a fresh
``TermManager`` and ``Solver`` with a fixed seed (``seed``, ``sat-random-seed``), a deterministic
resource limit (cvc5 ``rlimit``, counted in cvc5's own resource units over the whole query) and a
wall-clock backstop (``tlimit``, ms over the whole query), so the same query gives the same answer
and model on every machine. Unknown answers carry cvc5's explanation (``resource limit exceeded
(cvc5 RESOURCEOUT)``, ``timeout (cvc5 TIMEOUT)``...), never a verdict.

cvc5 has no optimiser, so the lexicographic minimisation of ``Query.minimize`` is done here by
iterative tightening: for each objective in order, a galloping descent (``t <= best - 1, - 2,
- 4``...) finds a lower bound, a binary search between the bounds finds the minimum, and the
minimum is then asserted before the next objective. Every step asks for ``t <= bound`` inside a
``push``/``pop``, so the minimum is exact; the lexicographic minimum of the objectives is unique,
so it equals Z3's ``Optimize`` result (variables outside the objectives may take other values than
Z3 gives them). Unsat cores come from assumption literals (``checkSatAssuming``,
``getUnsatAssumptions``), one per labelled assertion. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Sequence

import cvc5
from cvc5 import Kind

from fxverify.smt.backend import Query, Result, SolverOptions, Status
from fxverify.smt.terms import Sort, Term

_KINDS = {
    "+": Kind.ADD, "-": Kind.SUB, "*": Kind.MULT, "div": Kind.INTS_DIVISION, "mod": Kind.INTS_MODULUS,
    "and": Kind.AND, "or": Kind.OR, "not": Kind.NOT, "ite": Kind.ITE,
    "<=": Kind.LEQ, "<": Kind.LT, ">=": Kind.GEQ, ">": Kind.GT, "=": Kind.EQUAL,
}

#: Galloping steps before an objective counts as unbounded below (2**_MAX_GALLOP below the first
#: model's value): the minimisation then stops and keeps the plain model, as Z3 does when its
#: optimiser gives up.
_MAX_GALLOP = 128

_CORE_PREFIX = "__core__"


def cvc5_version() -> str:
    """The installed cvc5's version, for example ``1.4.2`` (a ``-modified`` suffix of PyPI builds
    dropped)."""
    raw = cvc5.Solver(cvc5.TermManager()).getVersion()
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    return text.removesuffix("-modified")


def _integer(tm: cvc5.TermManager, v: int) -> cvc5.Term:
    """The integer constant ``v``, of any size (given as a decimal string: the Python API's int
    argument overflows above 32 bits)."""
    return tm.mkInteger(str(v))


class _GaveUp(Exception):
    """A minimisation step answered unknown (limits): keep the plain model."""


class _Query:
    """One query's cvc5 state: term manager, solver, translated terms and declarations."""

    def __init__(self, options: SolverOptions, want_core: bool) -> None:
        self.tm = cvc5.TermManager()
        s = self.solver = cvc5.Solver(self.tm)
        s.setOption("produce-models", "true")
        s.setOption("incremental", "true")
        s.setOption("seed", str(options.seed))
        s.setOption("sat-random-seed", str(options.seed))
        s.setOption("rlimit", str(options.rlimit))
        s.setOption("tlimit", str(options.timeout_ms))
        if want_core:
            s.setOption("produce-unsat-assumptions", "true")
        s.setLogic("QF_LIA")
        self.memo: dict[int, cvc5.Term] = {}
        self.decls: dict[str, cvc5.Term] = {}

    def term(self, t: Term) -> cvc5.Term:
        """``t`` as a cvc5 term (shared sub-terms translated once)."""
        hit = self.memo.get(id(t))
        if hit is not None:
            return hit
        tm, op = self.tm, t.op
        if op == "var":
            out = self.decls.get(t.name)
            if out is None:
                sort = tm.getIntegerSort() if t.sort is Sort.INT else tm.getBooleanSort()
                out = self.decls[t.name] = tm.mkConst(sort, t.name)
        elif op == "const":
            out = tm.mkBoolean(bool(t.value)) if t.sort is Sort.BOOL else _integer(tm, int(t.value))
        else:
            args = [self.term(a) for a in t.args]
            if len(args) < 2 and op in ("+", "and", "or"):
                empty = {"+": tm.mkInteger(0), "and": tm.mkTrue(), "or": tm.mkFalse()}[op]
                out = args[0] if args else empty
            else:
                out = tm.mkTerm(_KINDS[op], *args)
        self.memo[id(t)] = out
        return out

    def at_most(self, t: cvc5.Term, bound: int) -> int | None:
        """The value of ``t`` in a model with ``t <= bound``, or ``None`` when there is none.
        Raises ``_GaveUp`` on an unknown answer."""
        tm, s = self.tm, self.solver
        s.push()
        try:
            s.assertFormula(tm.mkTerm(Kind.LEQ, t, _integer(tm, bound)))
            r = s.checkSat()
            if r.isUnknown():
                raise _GaveUp
            return s.getValue(t).getIntegerValue() if r.isSat() else None
        finally:
            s.pop()

    def minimise(self, t: cvc5.Term) -> int | None:
        """The least value of ``t`` under the current assertions (which are sat), found by a
        galloping descent and a binary search; ``None`` when it is unbounded below (within
        ``_MAX_GALLOP`` doublings). Raises ``_GaveUp`` on an unknown answer."""
        s = self.solver
        r = s.checkSat()
        if not r.isSat():
            raise _GaveUp
        hi = s.getValue(t).getIntegerValue()  # a value reached
        lo = None  # every value below lo is infeasible
        step = 1
        for _ in range(_MAX_GALLOP):
            got = self.at_most(t, hi - step)
            if got is None:
                lo = hi - step + 1
                break
            hi, step = got, step * 2
        if lo is None:
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            got = self.at_most(t, mid)
            if got is None:
                lo = mid + 1
            else:
                hi = got
        return hi

    def model(self) -> dict[str, int | bool]:
        """Every declared variable's value in the current model, by name."""
        out: dict[str, int | bool] = {}
        for name in sorted(self.decls):
            v = self.solver.getValue(self.decls[name])
            out[name] = bool(v.getBooleanValue()) if v.getSort().isBoolean() else int(v.getIntegerValue())
        return out


def _reason(r: cvc5.Result) -> str:
    """A reason string for an unknown answer, in the words the rest of fxverify reads: ``resource
    limit`` and ``timeout`` (a timed-out answer is never cached)."""
    why = str(r.getUnknownExplanation()).rsplit(".", 1)[-1]
    if "RESOURCEOUT" in why:
        return f"max. resource limit exceeded (cvc5 {why})"
    if "TIMEOUT" in why:
        return f"timeout (cvc5 {why})"
    return f"unknown (cvc5 {why})"


class Cvc5Backend:
    """Decide queries with cvc5, seeded and resource-limited (see the module docstring)."""

    name = "cvc5"

    def __init__(self, options: SolverOptions | None = None) -> None:
        self.options = options or SolverOptions()

    def version(self) -> str:
        """``cvc5 <version>``, for example ``cvc5 1.4.2`` (the solver's name is part of the string,
        so a cache key never confuses its answers with Z3's)."""
        return f"cvc5 {cvc5_version()}"

    def check(self, query: Query) -> Result:
        """Decide ``query``; when sat, minimise ``query.minimize`` lexicographically for the model.

        Returns ``Status.UNKNOWN`` with cvc5's explanation on a resource limit or timeout. Never
        raises for solver trouble: a cvc5 exception is ``Status.UNKNOWN`` with its message.
        """
        try:
            return self._check(query)
        except RuntimeError as err:  # cvc5 raises RuntimeError for its own errors
            return Result(Status.UNKNOWN, reason=f"cvc5 error: {err}")

    def _check(self, query: Query) -> Result:
        q = _Query(self.options, query.want_core)
        s, tm = q.solver, q.tm
        lits: dict[str, cvc5.Term] = {}
        for label, term in query.assertions:
            f = q.term(term)
            if query.want_core and label is not None:
                lit = lits.get(label)
                if lit is None:
                    lit = lits[label] = tm.mkConst(tm.getBooleanSort(), _CORE_PREFIX + label)
                s.assertFormula(tm.mkTerm(Kind.IMPLIES, lit, f))
            else:
                s.assertFormula(f)
        objectives = [q.term(m) for m in query.minimize]
        answer = s.checkSatAssuming(*lits.values()) if lits else s.checkSat()
        if answer.isUnknown():
            return Result(Status.UNKNOWN, reason=_reason(answer))
        if answer.isUnsat():
            core: tuple[str, ...] = ()
            if query.want_core:
                core = tuple(sorted(str(c)[len(_CORE_PREFIX):] for c in s.getUnsatAssumptions()))
            return Result(Status.UNSAT, core=core)
        model = q.model()
        if objectives:
            for lit in lits.values():
                s.assertFormula(lit)
            try:
                for t in objectives:
                    best = q.minimise(t)
                    if best is None:
                        raise _GaveUp
                    s.assertFormula(tm.mkTerm(Kind.EQUAL, t, _integer(tm, best)))
                if s.checkSat().isSat():
                    model = q.model()
            except _GaveUp:
                pass  # keep the plain model: still a valid witness, only not minimal (as with Z3)
        return Result(Status.SAT, model=model)

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Decide ``queries`` one after another, in this process; results in input order."""
        return [self.check(q) for q in queries]

    def close(self) -> None:
        """Nothing to release: every query has its own term manager and solver."""


def check_smtlib_cvc5(text: str, options: SolverOptions | None = None) -> Status:
    """Decide an SMT-LIB2 script with cvc5's own parser (``cvc5.InputParser``), not our terms:
    re-checks written obligations independently of the term translation. Runs every command of
    the script; returns the answer of its last ``check-sat``. Raises ``RuntimeError`` when cvc5
    cannot parse the text or reports an error (among them an answer other than the script's
    ``(set-info :status ...)``, which cvc5 checks)."""
    o = options or SolverOptions()
    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("seed", str(o.seed))
    solver.setOption("rlimit", str(o.rlimit))
    sm = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, sm)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "obligation")
    answer = Status.UNKNOWN
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        out = cmd.invoke(solver, sm).strip()
        if out.startswith("(error"):
            raise RuntimeError(out)
        if out in ("sat", "unsat", "unknown"):
            answer = Status(out)
    return answer
