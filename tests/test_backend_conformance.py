"""One conformance table of solver queries, run against every backend and wrapper of one
(STYLE.md: "every backend passes one conformance test"; pySMT's shared example table).

Each row is a query built from ``fxverify.smt.terms`` with its expected status and what the
answer must carry: the exact values of a lexicographically minimised (or unique) model, the named
unsat core when ``want_core`` is set, the reason of an ``unknown`` under ``SolverOptions(rlimit=1)``.
Each (backend, row) pair is one test case. Backends: ``Z3Backend``; the same backend in two
spawned worker processes (``ProcessBackend``: the query pickled there and the answer back, as
the shards of ``check --jobs`` solve theirs in other processes); ``CachingBackend`` over an in-memory store, asked twice, the
second time answered from the store alone; ``CountingBackend``; ``RecordingBackend`` writing
SMT-LIB2 files that ``check_smtlib`` re-decides; ``Cvc5Backend`` (its files re-decided by cvc5's
own parser too), cvc5 in worker processes, and ``PortfolioBackend``. Every Z3-based backend and the
portfolio must give the same ``Result`` as a fresh ``Z3Backend`` (seeded, one fresh context per
query); cvc5 the same status, core and minimised model (every row's model is fixed by its
objectives or constraints), with its own words for an unknown. Every backend answers
``check_many([])`` with ``[]``, keeps input order in ``check_many``, reports ``version()`` and
accepts ``close()`` twice.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from fxverify.smt.backend import Query, Result, SolverOptions, Status
from fxverify.smt.caching import CachingBackend, CountingBackend, MemoryStore, QueryCounts, obligation_text
from fxverify.smt.cvc5_backend import Cvc5Backend, check_smtlib_cvc5
from fxverify.smt.portfolio import PortfolioBackend
from fxverify.smt.recording import RecordingBackend
from fxverify.smt.smtlib import SmtlibDump, query_to_smtlib
from fxverify.smt.solvers import single_backend
from fxverify.smt.terms import Term, and_, between, bool_var, div, eq, free_vars, int_var, ite, mod, not_, or_
from fxverify.smt.z3_backend import Z3Backend, check_smtlib

x, y, z, o = int_var("x"), int_var("y"), int_var("z"), int_var("o")
p, q = bool_var("p"), bool_var("q")

DEFAULT = SolverOptions()
TINY = SolverOptions(rlimit=1)
CVC5 = SolverOptions(solver="cvc5")


@dataclass(frozen=True)
class Case:
    """One row: the query's parts, the expected status, and what the answer must carry."""

    name: str
    assertions: tuple[tuple[str | None, Term], ...]
    status: Status
    minimize: tuple[Term, ...] = ()
    want_core: bool = False
    options: SolverOptions = DEFAULT
    model: dict | None = None  # exact values of these variables (sat)
    core: frozenset[str] | None = None  # the exact core (unsat with want_core)

    def query(self) -> Query:
        return Query(f"conformance:{self.name}", self.assertions, minimize=self.minimize, want_core=self.want_core,
                     header=(f"conformance row {self.name}",))


def _unlabelled(*terms: Term) -> tuple[tuple[str | None, Term], ...]:
    return tuple((None, t) for t in terms)


def _labelled(*terms: Term) -> tuple[tuple[str | None, Term], ...]:
    return tuple((f"a{i}", t) for i, t in enumerate(terms))


_HARD = [eq(x, 0)] + [or_(eq(int_var(f"v{i}"), 2 * int_var(f"w{i}")), eq(int_var(f"v{i}"), 2 * int_var(f"w{i}") + 1))
                      for i in range(40)]

TABLE = [
    # ---- sat, with lexicographic minimisation --------------------------------------------------
    Case("interval-min", _labelled(between(x, 3, 5)), Status.SAT, minimize=(x,), model={"x": 3}),
    Case("lex-min", _unlabelled(and_(x >= 3, y >= x + 2, z >= 0, z < 100)), Status.SAT, minimize=(y, x, z),
         model={"x": 3, "y": 5, "z": 0}),
    # x + y >= 10 with both in [0, 8]: the first objective decides which one is small.
    Case("lex-x-first", _labelled(x + y >= 10, between(x, 0, 9), between(y, 0, 9)), Status.SAT, minimize=(x, y),
         model={"x": 2, "y": 8}),
    Case("lex-y-first", _labelled(x + y >= 10, between(x, 0, 9), between(y, 0, 9)), Status.SAT, minimize=(y, x),
         model={"x": 8, "y": 2}),
    Case("unique-linear", _labelled(eq(x + y, 10), eq(x - y, 4)), Status.SAT, model={"x": 7, "y": 3}),
    Case("empty", (), Status.SAT, model={}),
    # ---- div, mod, ite ---------------------------------------------------------------------------
    Case("div-mod", _labelled(eq(div(x, 7), 3), eq(mod(x, 7), 6)), Status.SAT, model={"x": 27}),
    # SMT-LIB div floors for a positive divisor: div(x, 4) = -1 for x in [-4, -1].
    Case("div-negative", _labelled(eq(div(x, 4), -1)), Status.SAT, minimize=(x,), model={"x": -4}),
    # SMT-LIB mod is in [0, 5): mod(-6, 5) = 4 and mod(-1, 5) = 4.
    Case("mod-negative", _labelled(eq(mod(x, 5), 4), x < 0, x > -10), Status.SAT, minimize=(x,), model={"x": -6}),
    Case("ite-abs-unsat", _labelled(eq(y, ite(x < 0, 0 - x, x)), y < 0), Status.UNSAT),
    Case("ite-abs-min", _labelled(eq(y, ite(x < 0, 0 - x, x)), x >= -5, y >= 3), Status.SAT, minimize=(x,),
         model={"x": -5, "y": 5}),
    # 0x80 B every 0x100 versus 0x80 B every 0x100 from 0x80: disjoint (interleaved strides).
    Case("strided-disjoint", _labelled(between(y, 0, 16), between(z, 0, 16), between(x, 0, 64), between(o, 0, 64),
                                       eq(x + 128 * y, 64 + 128 * z + o)), Status.UNSAT),
    # ---- Booleans --------------------------------------------------------------------------------
    Case("bool-vars", _labelled(or_(p, q), not_(p)), Status.SAT, model={"p": False, "q": True}),
    Case("bool-implies-int", _labelled(or_(not_(p), x >= 5), p, x >= 0), Status.SAT, minimize=(x,),
         model={"p": True, "x": 5}),
    Case("bool-equals-comparison", _labelled(eq(p, x > 3), p), Status.SAT, minimize=(x,), model={"p": True, "x": 4}),
    Case("bool-unsat", _labelled(or_(x < 0, x > 10), not_(x < 0), x < 11), Status.UNSAT),
    # ---- unsat cores -----------------------------------------------------------------------------
    Case("core-pair", (("lo", x >= 10), ("free", y >= 0), ("hi", x < 5)), Status.UNSAT, want_core=True,
         core=frozenset({"lo", "hi"})),
    Case("core-cycle", (("a", x >= y + 1), ("b", y >= z + 1), ("c", z >= x), ("d", x >= 0)), Status.UNSAT,
         want_core=True, core=frozenset({"a", "b", "c"})),
    # An unlabelled assertion is never named, but still takes part.
    Case("core-unlabelled", ((None, x >= 10), ("hi", x < 5), ("free", y >= 0)), Status.UNSAT, want_core=True,
         core=frozenset({"hi"})),
    Case("core-not-asked", (("lo", x >= 10), ("hi", x < 5)), Status.UNSAT, core=frozenset()),
    Case("core-asked-but-sat", (("lo", x >= 10), ("hi", x < 15)), Status.SAT, want_core=True, minimize=(x,),
         model={"x": 10}),
    # ---- unknown ---------------------------------------------------------------------------------
    Case("unknown-rlimit", _unlabelled(*_HARD), Status.UNKNOWN, options=TINY),
    Case("unknown-rlimit-minimised", _labelled(x >= 0), Status.UNKNOWN, minimize=(x,), options=TINY),
]
CASES = {c.name: c for c in TABLE}
DEFAULT_CASES = [c for c in TABLE if c.options == DEFAULT]
# Rows whose cache-key text (`obligation_text`: SMT-LIB2 plus objectives and core request) is shared
# by no other row; the batch tests below use these. Rows that differ only in what SMT-LIB2 does not
# print (`lex-x-first`/`lex-y-first`, their objectives) are kept apart by the key, as
# `test_cache_key_*` shows.
_TEXTS = [obligation_text(c.query()) for c in DEFAULT_CASES]
DISTINCT_CASES = [c for c, t in zip(DEFAULT_CASES, _TEXTS) if _TEXTS.count(t) == 1]

_REFERENCE: dict[str, Result] = {}


def reference(case: Case) -> Result:
    """The answer of a fresh ``Z3Backend`` (memoised per row)."""
    if case.name not in _REFERENCE:
        _REFERENCE[case.name] = Z3Backend(case.options).check(case.query())
    return _REFERENCE[case.name]


class Refusing:
    """A backend that must never be asked: every answer has to come from the store."""

    name = "refusing"

    def version(self) -> str:
        return Z3Backend().version()

    def check(self, query: Query) -> Result:
        raise AssertionError(f"solver asked for {query.name}")

    def check_many(self, queries) -> list[Result]:
        if queries:
            raise AssertionError(f"solver asked for {[qq.name for qq in queries]}")
        return []

    def close(self) -> None:
        pass


def _solve(options: SolverOptions, query: Query) -> Result:
    """Decide ``query`` in a worker process, with a fresh backend of ``options``."""
    return single_backend(options).check(query)


class ProcessBackend:
    """The backend of ``options`` run in ``jobs`` spawned worker processes: every query and its
    answer cross a process boundary (pickled), as in the shards of ``check --jobs``."""

    def __init__(self, options: SolverOptions, jobs: int) -> None:
        self.options, self.name = options, f"{options.solver}-processes"
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))

    def version(self) -> str:
        return single_backend(self.options).version()

    def check(self, query: Query) -> Result:
        return self.check_many([query])[0]

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        assert self._pool is not None
        return list(self._pool.map(_solve, [self.options] * len(queries), queries))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


@pytest.fixture(scope="module")
def pools():
    """Worker processes, two per option set, started on first use and closed at the end."""
    made: dict[SolverOptions, ProcessBackend] = {}

    def get(options: SolverOptions) -> ProcessBackend:
        if options not in made:
            made[options] = ProcessBackend(options, 2)
        return made[options]

    yield get
    for pool in made.values():
        pool.close()
        pool.close()


# ---- how each backend is asked one row ----------------------------------------------------------


def _ask_z3(case: Case, pools, tmp_path: Path) -> Result:
    b = Z3Backend(case.options)
    r = b.check(case.query())
    assert b.check_many([case.query()]) == [r]
    return r


def _ask_pool(case: Case, pools, tmp_path: Path) -> Result:
    # Two queries, so both workers may answer: the same answer, and the same as in this process.
    pool = pools(case.options)
    rs = pool.check_many([case.query(), case.query()])
    assert len(rs) == 2 and rs[0] == rs[1]
    assert Z3Backend(case.options).check(case.query()) == rs[0]
    return rs[0]


def _ask_caching(case: Case, pools, tmp_path: Path) -> Result:
    store = MemoryStore()
    first = QueryCounts()
    r1 = CachingBackend(Z3Backend(case.options), store, case.options, first).check(case.query())
    assert first == QueryCounts(hits=0, misses=1, solved=1) and len(store.results) == 1
    second = QueryCounts()
    r2 = CachingBackend(Refusing(), store, case.options, second).check(case.query())
    assert second == QueryCounts(hits=1, misses=0, solved=0)
    assert r2 == r1
    return r2


def _ask_counting(case: Case, pools, tmp_path: Path) -> Result:
    counts = QueryCounts()
    b = CountingBackend(Z3Backend(case.options), counts)
    r = b.check(case.query())
    assert counts.solved == 1
    assert b.check_many([case.query(), case.query()]) == [r, r] and counts.solved == 3
    return r


def _ask_recording(case: Case, pools, tmp_path: Path) -> Result:
    folder = tmp_path / "smt"
    b = RecordingBackend(Z3Backend(case.options), SmtlibDump(str(folder)))
    r = b.check(case.query())
    files = sorted(folder.glob("*.smt2"))
    assert len(files) == 1, files
    text = files[0].read_text()
    assert text == query_to_smtlib(case.query())
    # The file alone, parsed by the solver, gives the same answer.
    assert check_smtlib(text, case.options) is r.status
    return r


def _ask_cvc5(case: Case, pools, tmp_path: Path) -> Result:
    b = Cvc5Backend(case.options)
    r = b.check(case.query())
    assert b.check_many([case.query()]) == [r]  # deterministic: the same answer and model again
    # The SMT-LIB2 text alone, parsed by cvc5's own parser, gives the same answer.
    assert check_smtlib_cvc5(query_to_smtlib(case.query()), case.options) is r.status
    return r


def _ask_cvc5_pool(case: Case, pools, tmp_path: Path) -> Result:
    pool = pools(SolverOptions(case.options.seed, case.options.rlimit, case.options.timeout_ms, "cvc5"))
    rs = pool.check_many([case.query(), case.query()])
    assert len(rs) == 2 and rs[0] == rs[1]
    assert rs[0] == Cvc5Backend(case.options).check(case.query())
    return rs[0]


def _ask_portfolio(case: Case, pools, tmp_path: Path) -> Result:
    return PortfolioBackend(case.options).check(case.query())


ASK = {"z3": _ask_z3, "pool": _ask_pool, "caching": _ask_caching, "counting": _ask_counting,
       "recording": _ask_recording, "cvc5": _ask_cvc5, "cvc5-pool": _ask_cvc5_pool, "portfolio": _ask_portfolio}
#: Backends that run cvc5 alone: the same answers as Z3, in cvc5's words for an unknown.
CVC5_KINDS = {"cvc5", "cvc5-pool"}


def _expected(case: Case, r: Result) -> None:
    assert r.status is case.status, (case.name, r)
    if case.status is Status.SAT:
        names = {v.name for v in free_vars([t for _, t in case.assertions] + list(case.minimize))}
        assert set(r.model) == names  # every variable of the query gets a value
        assert case.model is not None
        assert {k: r.model[k] for k in case.model} == case.model
        assert all(type(r.model[k]) is type(v) for k, v in case.model.items())  # bool stays bool, int int
        assert r.core == () and r.reason == ""
    elif case.status is Status.UNSAT:
        assert r.model == {} and r.reason == ""
        assert set(r.core) == (case.core or set())
        assert list(r.core) == sorted(r.core)
    else:
        assert r.model == {} and r.core == ()
        assert "resource limit" in r.reason, r.reason


@pytest.mark.parametrize("case", TABLE, ids=[c.name for c in TABLE])
@pytest.mark.parametrize("kind", list(ASK))
def test_conformance(kind: str, case: Case, pools, tmp_path: Path) -> None:
    r = ASK[kind](case, pools, tmp_path)
    _expected(case, r)
    if kind in CVC5_KINDS | {"portfolio"} and case.status is Status.UNKNOWN:
        assert "cvc5" in r.reason and (kind != "portfolio" or r.reason.startswith("z3: "))
        return
    # Same answer, same model, as a fresh seeded Z3 backend (cvc5's lexicographic minimum is Z3's).
    assert r == reference(case)


# ---- the rest of the protocol, per backend ------------------------------------------------------


def _make(kind: str, pools, tmp_path: Path, options: SolverOptions = DEFAULT):
    if kind == "z3":
        return Z3Backend(options)
    if kind == "pool":
        return pools(options)
    if kind == "caching":
        return CachingBackend(Z3Backend(options), MemoryStore(), options, QueryCounts())
    if kind == "counting":
        return CountingBackend(Z3Backend(options), QueryCounts())
    if kind == "cvc5":
        return Cvc5Backend(options)
    if kind == "cvc5-pool":
        return pools(CVC5)
    if kind == "portfolio":
        return PortfolioBackend(options)
    return RecordingBackend(Z3Backend(options), SmtlibDump(str(tmp_path / "smt")))


@pytest.mark.parametrize("kind", list(ASK))
def test_check_many_of_nothing(kind: str, pools, tmp_path: Path) -> None:
    assert _make(kind, pools, tmp_path).check_many([]) == []


@pytest.mark.parametrize("kind", list(ASK))
def test_check_many_keeps_input_order(kind: str, pools, tmp_path: Path) -> None:
    # The default-option rows, in a scrambled order with a repeat: answers come back in input order.
    cases = DISTINCT_CASES[::-1] + DISTINCT_CASES[:3]
    got = _make(kind, pools, tmp_path).check_many([c.query() for c in cases])
    assert [r.status for r in got] == [c.status for c in cases]
    assert got == [reference(c) for c in cases]


@pytest.mark.parametrize("kind", list(ASK))
def test_version_and_name(kind: str, pools, tmp_path: Path) -> None:
    b = _make(kind, pools, tmp_path)
    assert isinstance(b.name, str) and b.version()
    if kind in CVC5_KINDS:
        assert b.name.startswith("cvc5") and b.version() == Cvc5Backend().version()
        assert b.version().startswith("cvc5 ")  # the name keeps cache keys of the two solvers apart
    elif kind == "portfolio":
        assert b.name == "portfolio" and b.version() == f"z3 {Z3Backend().version()} + {Cvc5Backend().version()}"
    else:
        assert b.version() == Z3Backend().version()
        assert b.name.startswith("z3")


@pytest.mark.parametrize("kind", ["z3", "caching", "counting", "recording", "cvc5", "portfolio"])
def test_close_twice(kind: str, pools, tmp_path: Path) -> None:
    b = _make(kind, pools, tmp_path)
    b.check(CASES["interval-min"].query())
    b.close()
    b.close()


def test_cache_answers_a_whole_batch_from_the_store(pools) -> None:
    """The second run of the table through the cache (over worker processes) never reaches the solver, and
    equal queries in one batch are solved once."""
    store = MemoryStore()
    queries = [c.query() for c in DISTINCT_CASES] + [DISTINCT_CASES[0].query()]
    first = QueryCounts()
    r1 = CachingBackend(pools(DEFAULT), store, DEFAULT, first).check_many(queries)
    n = len(DISTINCT_CASES)
    assert first == QueryCounts(hits=1, misses=n, solved=n)
    second = QueryCounts()
    r2 = CachingBackend(Refusing(), store, DEFAULT, second).check_many(queries)
    assert second == QueryCounts(hits=n + 1, misses=0, solved=0)
    assert r2 == r1 == [reference(c) for c in DISTINCT_CASES] + [reference(DISTINCT_CASES[0])]


def test_cache_key_includes_the_objectives() -> None:
    """Two queries with the same assertions but other objectives have other minimal models: the
    cache must not answer one with the other's model."""
    a, b = CASES["lex-x-first"], CASES["lex-y-first"]
    counts = QueryCounts()
    cache = CachingBackend(Z3Backend(DEFAULT), MemoryStore(), DEFAULT, counts)
    assert cache.check_many([a.query(), b.query()]) == [reference(a), reference(b)]
    assert counts.solved == 2


def test_cache_key_includes_want_core() -> None:
    """A query asked with ``want_core`` must get its core even when the same assertions were
    answered before without one (FX-ORD-001 reads its cycle from the core)."""
    plain = Query("core", (("lo", x >= 10), ("hi", x < 5)))
    cored = Query("core", (("lo", x >= 10), ("hi", x < 5)), want_core=True)
    cache = CachingBackend(Z3Backend(DEFAULT), MemoryStore(), DEFAULT, QueryCounts())
    assert cache.check(plain).core == ()
    assert set(cache.check(cored).core) == {"lo", "hi"}


def test_cache_keys_depend_on_the_options() -> None:
    # The same text under another rlimit is another key: an unknown never answers a full-budget run.
    store = MemoryStore()
    qq = CASES["interval-min"].query()
    tiny = CachingBackend(Z3Backend(TINY), store, TINY, QueryCounts())
    assert tiny.check(qq).status is Status.UNKNOWN
    counts = QueryCounts()
    full = CachingBackend(Z3Backend(DEFAULT), store, DEFAULT, counts)
    assert full.check(qq) == reference(CASES["interval-min"]) and counts.solved == 1


def test_recording_writes_one_file_per_query(tmp_path: Path) -> None:
    folder = tmp_path / "smt"
    b = RecordingBackend(Z3Backend(DEFAULT), SmtlibDump(str(folder)))
    results = b.check_many([c.query() for c in DEFAULT_CASES])
    files = sorted(folder.glob("*.smt2"))
    assert len(files) == len(DEFAULT_CASES)
    by_name = {f.name: f.read_text() for f in files}
    for c, r in zip(DEFAULT_CASES, results):
        text = by_name[f"conformance__{c.name}.smt2"]
        assert check_smtlib(text) is r.status is c.status


@pytest.mark.parametrize("name,forged", [
    ("interval-min", Result(Status.SAT, {"y": 1})),             # a model without the query's variables
    ("interval-min", Result(Status.SAT, {"x": -5, "y": -5})),   # a model that breaks an assertion
    ("core-asked-but-sat", Result(Status.UNSAT, (), ("lo", "elsewhere"))),  # a core label not in the query
])
def test_a_stored_answer_that_cannot_be_the_answer_is_a_miss(name: str, forged: Result) -> None:
    """An edited or stale cache entry is re-solved, not trusted: sat models are evaluated against
    the query, unsat cores must name its labels (``caching.consistent``)."""
    c = CASES[name]
    store, counts = MemoryStore(), QueryCounts()
    cache = CachingBackend(Z3Backend(DEFAULT), store, DEFAULT, counts)
    store.put_result(cache.key(c.query()), forged)
    assert cache.check(c.query()) == reference(c) and counts.solved == 1


# ---- the portfolio's combination, and solvers kept apart by the cache ---------------------------


class Canned:
    """A backend that answers every query with one fixed ``Result``."""

    name = "canned"

    def __init__(self, res: Result) -> None:
        self.res = res

    def version(self) -> str:
        return "canned"

    def check(self, query: Query) -> Result:
        return self.res

    def check_many(self, queries) -> list[Result]:
        return [self.res for _ in queries]

    def close(self) -> None:
        pass


_SAT = Result(Status.SAT, {"x": 3})
_UNSAT = Result(Status.UNSAT)
_UNKNOWN = Result(Status.UNKNOWN, reason="max. resource limit exceeded")


@pytest.mark.parametrize("z3_says,cvc5_says,status,reason", [
    (_SAT, _UNSAT, Status.UNKNOWN, "solver disagreement: z3 says sat, cvc5 says unsat"),
    (_UNSAT, _SAT, Status.UNKNOWN, "solver disagreement: z3 says unsat, cvc5 says sat"),
    (_UNKNOWN, _UNSAT, Status.UNSAT, ""),
    (_SAT, _UNKNOWN, Status.SAT, ""),
    (_UNKNOWN, _UNKNOWN, Status.UNKNOWN, "z3: max. resource limit exceeded; cvc5: max. resource limit exceeded"),
    # A sat answer whose model breaks the query is a solver bug, never a refutation.
    (_UNKNOWN, Result(Status.SAT, {"x": 9}), Status.UNKNOWN, "solver disagreement: the model cvc5 gave breaks an assertion"),
])
def test_portfolio_combines_the_answers(z3_says: Result, cvc5_says: Result, status: Status, reason: str) -> None:
    """A disagreement is unknown with both answers named (never a pass); one unknown takes the
    other's decided answer; agreement takes Z3's."""
    case = CASES["interval-min"]
    b = PortfolioBackend(DEFAULT)
    b.z3, b.cvc5 = Canned(z3_says), Canned(cvc5_says)  # type: ignore[assignment]
    r = b.check(case.query())
    assert (r.status, r.reason) == (status, reason)
    if status is not Status.UNKNOWN:
        assert r == (z3_says if z3_says.status is not Status.UNKNOWN else cvc5_says)


def test_cache_keeps_solvers_apart() -> None:
    """A verdict cached for one solver is never served for another: the key covers the solver's
    name and version."""
    qq = CASES["interval-min"].query()
    keys = {CachingBackend(make(o), MemoryStore(), o, QueryCounts()).key(qq)
            for o, make in [(DEFAULT, Z3Backend), (CVC5, Cvc5Backend),
                            (SolverOptions(solver="portfolio"), PortfolioBackend)]}
    assert len(keys) == 3
    store = MemoryStore()
    CachingBackend(Z3Backend(DEFAULT), store, DEFAULT, QueryCounts()).check(qq)
    counts = QueryCounts()
    assert CachingBackend(Cvc5Backend(CVC5), store, CVC5, counts).check(qq) == reference(CASES["interval-min"])
    assert counts == QueryCounts(hits=0, misses=1, solved=1)
