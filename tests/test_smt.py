"""The SMT layer: SMT-LIB printing, and a conformance table every backend must pass (verdicts,
lexicographic minimisation, unsat cores, determinism, unknown with a reason)."""

from __future__ import annotations

import pytest

from fxverify.smt.backend import Query, SolverOptions, Status
from fxverify.smt.smtlib import query_to_smtlib, term_to_smtlib
from fxverify.smt.terms import and_, between, div, eq, int_var, ite, mod, not_, or_
from fxverify.smt.z3_backend import Z3Backend, check_smtlib

x, y, z = int_var("x"), int_var("y"), int_var("z")

BACKENDS = [Z3Backend]

# (name, assertions, expected status)
TABLE = [
    ("interval", [between(x, 3, 5)], Status.SAT),
    ("empty", [x < 3, x > 5], Status.UNSAT),
    ("strided-disjoint", [between(y, 0, 16), between(z, 0, 16), between(x, 0, 64), between(int_var("o"), 0, 64),
                          eq(x + 128 * y, 64 + 128 * z + int_var("o"))], Status.UNSAT),
    ("div-mod", [eq(div(x, 7), 3), eq(mod(x, 7), 6)], Status.SAT),
    ("ite", [eq(y, ite(x < 0, 0 - x, x)), y < 0], Status.UNSAT),
    ("bool", [or_(x < 0, x > 10), not_(x < 0), x < 11], Status.UNSAT),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,assertions,status", TABLE, ids=[t[0] for t in TABLE])
def test_backend_conformance(backend, name, assertions, status) -> None:
    q = Query(name, tuple((f"a{i}", t) for i, t in enumerate(assertions)))
    assert backend().check(q).status is status
    assert check_smtlib(query_to_smtlib(q)) is status


@pytest.mark.parametrize("backend", BACKENDS)
def test_minimisation_is_lexicographic_and_deterministic(backend) -> None:
    q = Query("min", ((None, and_(x >= 3, y >= x + 2, z >= 0, z < 100)),), minimize=(y, x, z))
    a, b = backend().check(q), backend().check(q)
    assert a.model == b.model
    assert (a.model["x"], a.model["y"], a.model["z"]) == (3, 5, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unsat_core_names_the_conflict(backend) -> None:
    q = Query("core", (("lo", x >= 10), ("free", y >= 0), ("hi", x < 5)), want_core=True)
    r = backend().check(q)
    assert r.status is Status.UNSAT and set(r.core) == {"lo", "hi"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_resource_limit_gives_unknown_with_reason(backend) -> None:
    hard = [eq(x * 1 + 0, 0)] + [or_(eq(int_var(f"v{i}"), 2 * int_var(f"w{i}")), eq(int_var(f"v{i}"), 2 * int_var(f"w{i}") + 1))
                                 for i in range(40)]
    q = Query("tiny", tuple((None, t) for t in hard))
    r = backend(SolverOptions(rlimit=1)).check(q)
    assert r.status is Status.UNKNOWN and r.reason


def test_smtlib_printing() -> None:
    assert term_to_smtlib(x - 3) == "(- x 3)"
    assert term_to_smtlib(eq(x, -5)) == "(= x (- 5))"
    text = query_to_smtlib(Query("q", (("lbl", x < 2),), header=("hello",)))
    assert text.startswith("; hello\n(set-option :produce-unsat-cores true)\n(set-logic QF_LIA)")
    assert "(declare-const x Int)" in text and ":named A_lbl" in text and text.endswith("(exit)\n")


def _pigeons(n: int) -> list:
    """The pigeonhole principle, ``n`` pigeons in ``n - 1`` holes: unsat, and hard for resolution
    (at 10 pigeons far longer than the half second before the tests' signal)."""
    from fxverify.smt.terms import bool_var

    p = [[bool_var(f"p{i}_{h}") for h in range(n - 1)] for i in range(n)]
    return [or_(*p[i]) for i in range(n)] + [or_(not_(p[i][h]), not_(p[j][h]))
                                              for h in range(n - 1) for i in range(n) for j in range(i + 1, n)]


@pytest.fixture
def default_sigint():
    """Python's default SIGINT handler (``KeyboardInterrupt``), as the ``fxverify`` command has
    it, for the length of a test, then the handler before it. In a full run an earlier test of
    the same worker process may leave another one set, and the minimisation path, which relies
    on Python's handler, then never raises."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _interrupted(run, timer=None) -> None:
    """Run ``run()`` with a SIGINT sent to this process half a second in (or when ``timer``, a
    started ``threading.Timer`` the caller arms, fires); it must raise ``KeyboardInterrupt``."""
    import os
    import signal
    import threading

    if timer is None:
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        timer.cancel()


def _armed_in_the_minimisation(monkeypatch: pytest.MonkeyPatch):
    """A timer that sends SIGINT to this process 0.3 s after a ``z3.Optimize`` starts its
    search, so the signal lands in the minimisation of the witness, the path this case is about,
    however long the plain satisfiability check before it takes on a loaded machine."""
    import os
    import signal
    import threading

    import z3

    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    real = z3.Optimize.check

    def check(self, *args):
        timer.start()
        return real(self, *args)

    monkeypatch.setattr(z3.Optimize, "check", check)
    return timer


def test_a_ctrl_c_during_the_minimisation_is_kept_until_it_ends(default_sigint) -> None:
    """While the Optimize searches, SIGINT is only noted, and raised once the search has
    returned: Python's own handler would raise wherever it next checks for signals, which may be
    code that drops the exception (a ``__del__``, modelled here by a search that swallows it).
    Python's handler is back afterwards."""
    import os
    import signal
    import time

    from fxverify.smt import z3_backend

    swallowed: list[int] = []

    def search() -> str:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        except KeyboardInterrupt:
            swallowed.append(1)
        return "sat"

    with pytest.raises(KeyboardInterrupt):
        z3_backend._sigint_kept(search, "a search")
    assert not swallowed and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert z3_backend._sigint_kept(lambda: "unsat", "a search") == "unsat"


def test_a_ctrl_c_while_a_context_is_built_is_raised_once_it_is_whole(default_sigint,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C landing inside ``z3.Context.__init__`` is raised after the constructor returns:
    raised inside it, it left a context without ``owner``, whose ``__del__`` printed a traceback
    on the way out of an interrupted gate (a CI run of tests/test_jobs.py)."""
    import gc
    import os
    import signal
    import sys
    import time

    import z3

    from fxverify.smt import z3_backend

    built: list[z3.Context] = []
    dropped: list[object] = []

    class Interrupted(z3.Context):
        def __init__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            super().__init__()
            built.append(self)

    monkeypatch.setattr(z3, "Context", Interrupted)
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)
    with pytest.raises(KeyboardInterrupt, match="creation of a Z3 context"):
        z3_backend._context()
    assert len(built) == 1
    assert built[0].owner
    built.clear()
    gc.collect()
    assert not dropped


@pytest.mark.parametrize("path", ["query", "minimisation", "smt-lib"])
def test_ctrl_c_during_a_query_stops_the_check_instead_of_answering_unknown(path: str, monkeypatch: pytest.MonkeyPatch,
                                                                            default_sigint) -> None:
    """Z3 takes SIGINT while it searches and answers ``unknown``; the backend turns that answer
    back into the ``KeyboardInterrupt`` Python would have raised, so Ctrl-C stops a check. Each
    way a query reaches Z3: a plain query (no limit ends it first), the minimisation of a witness
    (the model is quick, ``x >= 1000``; a smaller ``x`` needs the pigeons refuted; its time limit
    ends it within seconds), and an SMT-LIB2 re-check."""
    facts = _pigeons(10)
    if path == "query":
        q = Query("pigeons", tuple((None, t) for t in facts))
        _interrupted(lambda: Z3Backend(SolverOptions(timeout_ms=600_000, rlimit=0)).check(q))
    elif path == "minimisation":
        q = Query("least", ((None, or_(and_(*facts), x >= 1000)), (None, x >= 0)), minimize=(x,), expect=Status.SAT)
        _interrupted(lambda: Z3Backend(SolverOptions(timeout_ms=3_000, rlimit=0)).check(q),
                     _armed_in_the_minimisation(monkeypatch))
    else:
        text = query_to_smtlib(Query("pigeons", tuple((None, t) for t in facts)))
        _interrupted(lambda: check_smtlib(text, SolverOptions(rlimit=0)))
