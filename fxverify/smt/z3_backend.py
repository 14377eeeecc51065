"""The Z3 backend: the only module of fxverify that imports ``z3``.

Takes ``Query`` objects, returns ``Result`` objects. Every solver gets fixed seeds, an rlimit and a
timeout (``SolverOptions``), so the same query gives the same answer and model on every machine.
Unknown answers are returned with Z3's reason (``timeout``, ``max. resource limit exceeded``...),
never read as a verdict.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import z3

from fxverify.smt.backend import Query, Result, SolverOptions, Status
from fxverify.smt.terms import Sort, Term

T = TypeVar("T")

#: Each operator's constructor in Z3's C API and the Python class of its result. The terms are
#: well sorted by construction (``smt.terms``: integers and booleans, never mixed), so the
#: coercions z3py's operators make (a Python wrapper and a sort check per argument, most of the
#: time of translating a query) have nothing to do: calling the constructors directly makes the
#: same Z3 terms. Z3 Int ``div`` and ``mod`` are SMT-LIB's.
_NARY: dict[str, tuple[Callable, type]] = {
    "and": (z3.Z3_mk_and, z3.BoolRef), "or": (z3.Z3_mk_or, z3.BoolRef),
    "+": (z3.Z3_mk_add, z3.ArithRef), "*": (z3.Z3_mk_mul, z3.ArithRef), "-": (z3.Z3_mk_sub, z3.ArithRef),
}
_BINARY: dict[str, tuple[Callable, type]] = {
    "<=": (z3.Z3_mk_le, z3.BoolRef), "<": (z3.Z3_mk_lt, z3.BoolRef), ">=": (z3.Z3_mk_ge, z3.BoolRef),
    ">": (z3.Z3_mk_gt, z3.BoolRef), "=": (z3.Z3_mk_eq, z3.BoolRef),
    "div": (z3.Z3_mk_div, z3.ArithRef), "mod": (z3.Z3_mk_mod, z3.ArithRef),
}


class Z3Backend:
    """Decide queries with Z3 (``z3-solver``), seeded and resource-limited."""

    name = "z3"

    def __init__(self, options: SolverOptions | None = None) -> None:
        self.options = options or SolverOptions()
        self._ctx: z3.Context | None = None

    def version(self) -> str:
        """Return Z3's full version string, for example ``4.13.0.0``."""
        return z3.get_full_version()

    def _translate(self, term: Term, memo: dict[int, z3.ExprRef], decls: dict[str, z3.ExprRef]) -> z3.ExprRef:
        key = id(term)
        hit = memo.get(key)
        if hit is not None:
            return hit
        ctx = self._ctx
        op = term.op
        if op == "var":
            out = decls.get(term.name)
            if out is None:
                out = z3.Int(term.name, ctx) if term.sort is Sort.INT else z3.Bool(term.name, ctx)
                decls[term.name] = out
        elif op == "const":
            out = z3.BoolVal(bool(term.value), ctx) if term.sort is Sort.BOOL else z3.IntVal(int(term.value), ctx)
        else:
            args = [self._translate(a, memo, decls) for a in term.args]
            ref = ctx.ref()
            if op in _NARY:
                if op == "+" and len(args) == 1:
                    out = args[0]
                else:
                    mk, cls = _NARY[op]
                    out = cls(mk(ref, len(args), (z3.Ast * len(args))(*[a.as_ast() for a in args])), ctx)
            elif op == "not":
                out = z3.BoolRef(z3.Z3_mk_not(ref, args[0].as_ast()), ctx)
            elif op == "ite":
                out = (z3.BoolRef if term.sort is Sort.BOOL else z3.ArithRef)(
                    z3.Z3_mk_ite(ref, args[0].as_ast(), args[1].as_ast(), args[2].as_ast()), ctx)
            else:
                mk, cls = _BINARY[op]
                out = cls(mk(ref, args[0].as_ast(), args[1].as_ast()), ctx)
        memo[key] = out
        return out

    def _configure(self, solver: z3.Solver | z3.Optimize) -> None:
        # Seeds and limits live on each solver, never in z3's global parameters.
        o = self.options
        solver.set("random_seed", o.seed)
        solver.set("timeout", o.timeout_ms)
        solver.set("rlimit", o.rlimit)

    def check(self, query: Query) -> Result:
        """Decide ``query``; when sat, minimise ``query.minimize`` lexicographically for the model.

        Returns ``Status.UNKNOWN`` with Z3's reason string on timeout or resource exhaustion.
        Raises ``KeyboardInterrupt`` when SIGINT (Ctrl-C) arrives during the query.
        Each query gets a fresh Z3 context: terms left by earlier queries would change the new
        terms' internal ids and with them, possibly, the model. The answer is then a function of
        the query and the options alone, which the result cache and ``--jobs`` rely on.
        """
        self._ctx = _context()
        memo: dict[int, z3.ExprRef] = {}
        decls: dict[str, z3.ExprRef] = {}
        solver = z3.Solver(ctx=self._ctx)
        self._configure(solver)
        tracked: dict[str, z3.ExprRef] = {}
        formulas = []
        for label, term in query.assertions:
            f = self._translate(term, memo, decls)
            formulas.append(f)
            if query.want_core and label is not None:
                lit = z3.Bool(f"__core__{label}", self._ctx)
                tracked[str(lit)] = lit
                solver.assert_and_track(f, lit)
            else:
                solver.add(f)
        answer = solver.check()
        if answer == z3.unknown:
            return Result(Status.UNKNOWN, reason=_not_interrupted(solver) or "unknown")
        if answer == z3.unsat:
            core = tuple(sorted(str(c)[len("__core__"):] for c in solver.unsat_core())) if query.want_core else ()
            return Result(Status.UNSAT, core=core)
        model = solver.model()
        if query.minimize:
            opt = z3.Optimize(ctx=self._ctx)
            self._configure(opt)
            opt.set("priority", "lex")
            # An Optimize interrupted by Z3's own SIGINT handler says "canceled", as for a
            # resource limit (``KEYBOARD_REASON``): a handler of ours keeps the signal instead
            # (``_sigint_kept``), and ``KeyboardInterrupt`` is raised once the search ends (at
            # the latest at ``timeout_ms``).
            opt.set("ctrl_c", False)
            for f in formulas:
                opt.add(f)
            for m in query.minimize:
                opt.minimize(self._translate(m, memo, decls))
            answer = _sigint_kept(opt.check, "the minimisation of a witness")
            if answer == z3.sat:
                model = opt.model()
            # An Optimize that gives up keeps the plain model: still a valid witness, only not minimal.
        values: dict[str, int | bool] = {}
        for name in sorted(decls):
            v = model.eval(decls[name], model_completion=True)
            values[name] = bool(z3.is_true(v)) if z3.is_bool(v) else v.as_long()
        return Result(Status.SAT, model=values)

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Decide ``queries`` one after another, in this process; results in input order."""
        return [self.check(q) for q in queries]

    def close(self) -> None:
        """Nothing to release: every query has its own context."""


#: Z3's reason for ``unknown`` when SIGINT arrived during a query. Z3 takes the signal from
#: Python's handler while it searches (its ``ctrl_c`` parameter, on by default), cancels the search
#: and answers ``unknown``; Python never sees the signal. Read as an answer, a Ctrl-C during a
#: query would only make that query unknown (a parametric one falls back to its instances) and the
#: check would go on to its end. A ``Solver`` gives "canceled" for a resource limit and "timeout"
#: for a timeout; an ``Optimize`` gives "canceled" for a Ctrl-C too, so it runs with ``ctrl_c``
#: off (``check``). Source: Z3's ``solver::reason_unknown`` after its Ctrl-C handler
#: (``scoped_ctrl_c``), checked with z3-solver 5.1 and 5.4 (tests/test_smt.py).
KEYBOARD_REASON = "interrupted from keyboard"


def _sigint_kept(search: Callable[[], T], during: str) -> T:
    """``search()``, with SIGINT only noted while it runs, then raised as ``KeyboardInterrupt``
    here. Python's own handler raises at the next bytecode it checks for signals once the search
    returns, and that may be in a ``__del__`` of a Z3 object being freed, where Python prints the
    exception and drops it: the Ctrl-C would be lost. Only in the main thread with Python's
    default handler in place (elsewhere a handler cannot be set, or another one is wanted), else
    ``search()`` as it is. ``during`` names the step in the exception's message. Raises
    ``KeyboardInterrupt`` when a SIGINT arrived."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return search()
    got: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, _frame: got.append(signum))
    try:
        answer = search()
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if got:
        raise KeyboardInterrupt(f"SIGINT during {during}")
    return answer


def _context() -> z3.Context:
    """A fresh Z3 context, built whole. A Ctrl-C raised inside ``z3.Context.__init__`` leaves an
    object without its ``owner`` attribute, whose ``__del__`` then fails and prints a traceback
    (z3-solver 5.4, seen in a CI run of tests/test_jobs.py); the signal is taken after the
    constructor returns instead (``_sigint_kept``). Raises ``KeyboardInterrupt`` when a SIGINT
    arrived meanwhile."""
    return _sigint_kept(z3.Context, "the creation of a Z3 context")


def _not_interrupted(solver: z3.Solver) -> str:
    """The reason ``solver`` gives for its ``unknown`` answer. Raises ``KeyboardInterrupt`` when
    the reason is a Ctrl-C (``KEYBOARD_REASON``), as Python would have."""
    reason = solver.reason_unknown()
    if reason == KEYBOARD_REASON:
        raise KeyboardInterrupt(f"Z3: {reason}")
    return reason


def check_smtlib(text: str, options: SolverOptions | None = None) -> Status:
    """Decide an SMT-LIB2 script by parsing its text (not our terms): used to re-check dumped
    obligations independently of the term translation. Returns the raw answer. Raises
    ``KeyboardInterrupt`` when SIGINT (Ctrl-C) arrives during the query."""
    o = options or SolverOptions()
    ctx = _context()
    solver = z3.Solver(ctx=ctx)
    solver.set("random_seed", o.seed)
    solver.set("rlimit", o.rlimit)
    # Z3's string parser turns `(! f :named n)` into a guarded macro; drop the names (each
    # assertion is one line in our dumps) so every assertion is asserted as written.
    plain = re.sub(r"^\(assert \(! (.*) :named [A-Za-z_][A-Za-z0-9_.$]*\)\)$", r"(assert \1)", text, flags=re.MULTILINE)
    solver.add(z3.parse_smt2_string(plain, ctx=ctx))
    answer = solver.check()
    if answer == z3.unknown:
        _not_interrupted(solver)
    if answer == z3.sat:
        return Status.SAT
    if answer == z3.unsat:
        return Status.UNSAT
    return Status.UNKNOWN
