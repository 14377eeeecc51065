"""Backend wrappers that answer from a result store, or count what reaches the solver.

``CachingBackend`` keys each query by the SHA-256 of its SMT-LIB2 text (without comment lines,
which name files and never change the answer) with its minimisation objectives and core request,
the solver's name and version and the solver options, and asks the inner backend only on a miss; equal texts in one batch are solved once. The store is
anything with ``get_result``/``put_result`` (the on-disk ``gate.cache.ResultCache``).
``CountingBackend`` only counts (``--no-cache`` still reports how many queries were solved). Both
implement the whole ``Backend`` protocol. Emits no diagnostics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fxverify.smt.backend import Backend, Query, Result, SolverOptions, Status
from fxverify.smt.smtlib import query_to_smtlib, term_to_smtlib
from fxverify.smt.terms import evaluate


@dataclass
class QueryCounts:
    """Queries of one run: ``hits`` answered by the store, ``misses`` not found there, ``solved``
    decided by the solver."""

    hits: int = 0
    misses: int = 0
    solved: int = 0


class ResultStore(Protocol):
    """Where ``CachingBackend`` keeps answers."""

    def get_result(self, key: str) -> Result | None:
        """The stored answer under ``key``, or ``None``."""
        ...

    def put_result(self, key: str, res: Result) -> None:
        """Store ``res`` under ``key`` (the store may decline, for example wall-clock timeouts)."""
        ...


class MemoryStore:
    """A ``ResultStore`` in memory, for the life of one object: a hint's re-checks of one policy
    (an edited policy repeats most of the policy's queries)."""

    def __init__(self) -> None:
        self.results: dict[str, Result] = {}

    def get_result(self, key: str) -> Result | None:
        """The answer stored under ``key``, or ``None``."""
        return self.results.get(key)

    def put_result(self, key: str, res: Result) -> None:
        """Store ``res`` under ``key``."""
        self.results[key] = res


def sha256(*parts: str | bytes) -> str:
    """SHA-256 of ``parts``, each followed by a NUL byte (so ``("ab", "c")`` and ``("a", "bc")`` differ)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8") if isinstance(p, str) else p)
        h.update(b"\x00")
    return h.hexdigest()


def obligation_text(query: Query) -> str:
    """The text that keys a query: ``query_to_smtlib`` without comment lines (which name files and
    never change the answer), then everything else that shapes the answer but SMT-LIB2 does not
    print: the minimisation objectives, in order (they fix the model), and whether an unsat core
    is asked for."""
    body = "".join(ln + "\n" for ln in query_to_smtlib(query).splitlines() if not ln.startswith(";"))
    objectives = " ".join(term_to_smtlib(t) for t in query.minimize)
    return body + f"; minimize lex: {objectives}\n; unsat core: {'yes' if query.want_core else 'no'}\n"


def consistent(query: Query, res: Result) -> bool:
    """Whether a stored answer can be the answer to ``query``: a sat model must give every
    variable of the query a value and satisfy every assertion (checked with ``terms.evaluate``);
    an unsat core may name only the query's labels, and must be there when the query asks for one.
    A stored entry that fails this (edited, or written by a buggy version) is a miss. An unsat
    answer without a core cannot be checked this way; the key already covers its text, solver
    version and options."""
    if res.status is Status.SAT:
        return all(evaluate(t, res.model) is True for _, t in query.assertions)
    if res.status is Status.UNSAT:
        labels = {lbl for lbl, _ in query.assertions if lbl is not None}
        return set(res.core) <= labels and (bool(res.core) or not query.want_core)
    return True


class CachingBackend:
    """``inner`` behind ``store``: a hit is answered without solving, once ``consistent`` accepts it."""

    def __init__(self, inner: Backend, store: ResultStore, solver: SolverOptions, counts: QueryCounts) -> None:
        self.inner, self.store, self.solver, self.counts = inner, store, solver, counts
        self.name = f"{inner.name}+cache"
        self._version: str | None = None

    def version(self) -> str:
        """The inner solver's version."""
        if self._version is None:
            self._version = self.inner.version()
        return self._version

    def key(self, query: Query) -> str:
        """The cache key of ``query``: SHA-256 of its SMT-LIB2 text, the solver's version (which
        names cvc5 and the portfolio) and the options, the solver's name among them."""
        return sha256(obligation_text(query), self.version(), self.solver.describe())

    def check(self, query: Query) -> Result:
        """Answer ``query`` from the store, or decide it and store the answer."""
        return self.check_many([query])[0]

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Answer each query from the store; decide the misses as one batch and store their
        answers. Results in input order."""
        keys = [self.key(q) for q in queries]
        known: dict[str, Result] = {}
        todo: dict[str, Query] = {}  # misses, one per key: equal texts are solved once
        for k, q in zip(keys, queries):
            if k in known or k in todo:
                continue
            hit = self.store.get_result(k)
            if hit is None or not consistent(q, hit):
                todo[k] = q
            else:
                known[k] = hit
        self.counts.misses += len(todo)
        self.counts.hits += len(queries) - len(todo)
        if todo:
            solved = self.inner.check_many(list(todo.values()))
            self.counts.solved += len(todo)
            for k, res in zip(todo, solved):
                self.store.put_result(k, res)
                known[k] = res
        return [known[k] for k in keys]

    def close(self) -> None:
        """Close the inner backend."""
        self.inner.close()


class CountingBackend:
    """``inner``, counting the queries it decides in ``counts.solved``."""

    def __init__(self, inner: Backend, counts: QueryCounts) -> None:
        self.inner, self.counts, self.name = inner, counts, inner.name

    def version(self) -> str:
        """The inner solver's version."""
        return self.inner.version()

    def check(self, query: Query) -> Result:
        """Decide ``query`` with the inner backend."""
        return self.check_many([query])[0]

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Decide ``queries`` with the inner backend, counting them."""
        self.counts.solved += len(queries)
        return self.inner.check_many(queries)

    def close(self) -> None:
        """Close the inner backend."""
        self.inner.close()
