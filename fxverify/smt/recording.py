"""A backend wrapper that records every query it is asked as SMT-LIB2, in the way Apalache's
recording solver context logs what reaches the solver (the backend conformance tests use it;
``check --dump-smt DIR`` writes each obligation's query as encoded, in ``pipeline``).

Takes any ``Backend`` and an ``smtlib.SmtlibDump``; implements the whole protocol by writing each
query, then delegating. Queries are encoded once: the same ``Query`` object is written and solved.
Emits no diagnostics; raises ``OSError`` when a file cannot be written.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxverify.smt.backend import Backend, Query, Result
from fxverify.smt.smtlib import SmtlibDump


class RecordingBackend:
    """``inner`` with every query written to ``dump`` before it is decided."""

    def __init__(self, inner: Backend, dump: SmtlibDump) -> None:
        self.inner, self.dump = inner, dump
        self.name = f"{inner.name}+smtlib"

    def version(self) -> str:
        """The inner solver's version."""
        return self.inner.version()

    def check(self, query: Query) -> Result:
        """Write ``query``, then decide it with the inner backend."""
        self.dump.write(query)
        return self.inner.check(query)

    def check_many(self, queries: Sequence[Query]) -> list[Result]:
        """Write every query, then decide them as one batch."""
        for q in queries:
            self.dump.write(q)
        return self.inner.check_many(queries)

    def close(self) -> None:
        """Close the inner backend."""
        self.inner.close()
