"""SMT-LIB2 writer: prints a ``Query`` as a standalone script other solvers can re-check, and
writes such scripts into a folder (``SmtlibDump``).

Takes a ``Query``; returns text. Output is deterministic: variables are declared in
first-occurrence order and every line is built from the term tree alone. Emits no diagnostics.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter

from fxverify.atomic import replace_atomically
from fxverify.smt.backend import Query, Status
from fxverify.smt.terms import Term, free_vars


def term_to_smtlib(t: Term) -> str:
    """Render one term as an SMT-LIB2 s-expression."""
    if t.op == "var":
        return t.name
    if t.op == "const":
        if isinstance(t.value, bool):
            return "true" if t.value else "false"
        return str(t.value) if t.value >= 0 else f"(- {-t.value})"
    return "(" + " ".join([t.op] + [term_to_smtlib(a) for a in t.args]) + ")"


def query_to_smtlib(q: Query, notes: tuple[str, ...] = (), status: Status | None = None) -> str:
    """Return ``q`` as SMT-LIB2 text: header comments (``q.header``, then ``notes``), with
    ``status`` a ``(set-info :status sat|unsat|unknown)`` line (SMT-LIB's status of the
    benchmark: the answer a solver must give), then declarations, named assertions (labels
    prefixed ``A_``), check-sat.

    The final comment states which answer proves the obligation (``unsat`` for most codes,
    ``sat`` for FX-ORD-001).
    """
    proves = "unsat" if q.expect is Status.UNSAT else "sat"
    lines = [f"; {h}" if h else ";" for h in (*q.header, *notes)]
    if status is not None:
        lines.append(f"(set-info :status {status.value})")
    lines.append("(set-option :produce-unsat-cores true)")
    lines.append("(set-logic QF_LIA)")
    for v in free_vars([t for _, t in q.assertions] + list(q.minimize)):
        lines.append(f"(declare-const {v.name} {v.sort.value})")
    for label, t in q.assertions:
        body = term_to_smtlib(t)
        # Labels get a prefix so they can never clash with a declared constant.
        lines.append(f"(assert (! {body} :named A_{label}))" if label else f"(assert {body})")
    lines.append(f"; the obligation is proved when the answer is {proves}")
    lines.append("(check-sat)")
    lines.append("(exit)")
    return "\n".join(lines) + "\n"


class SmtlibDump:
    """Writes queries as standalone SMT-LIB2 files into one folder (``check --dump-smt DIR``).

    A query named ``CODE:rest`` (every obligation's key) becomes ``DIR/CODE__<rest>.smt2``, with
    the rest made file-safe (long names end in a hash) and a ``__2``, ``__3``... suffix when two
    queries would share a name; files are written atomically. Raises ``OSError`` when the folder
    cannot be made or written.
    """

    def __init__(self, directory: str) -> None:
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self._names: Counter = Counter()

    def name(self, q: Query) -> str:
        """The file name ``q`` gets in this folder (``CODE__<rest>.smt2``, unique: each call
        counts as one file)."""
        code, _, rest = q.name.partition(":")
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", rest if rest else code).strip("_")
        if len(slug) > 100:
            slug = slug[:80] + "_" + hashlib.sha1(slug.encode()).hexdigest()[:12]
        name = f"{code}__{slug}"
        self._names[name] += 1
        if self._names[name] > 1:
            name += f"__{self._names[name]}"
        return name + ".smt2"

    def write(self, q: Query, text: str | None = None) -> str:
        """Write ``q`` (as ``text`` when given, else ``query_to_smtlib(q)``); returns the file's path."""
        path = os.path.join(self.dir, self.name(q))
        replace_atomically(path, (query_to_smtlib(q) if text is None else text).encode("utf-8"))
        return path
