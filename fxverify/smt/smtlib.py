"""SMT-LIB2 writer: prints a ``Query`` as a standalone script other solvers can re-check.

Takes a ``Query``; returns text. Output is deterministic: variables are declared in
first-occurrence order and every line is built from the term tree alone. Emits no diagnostics.
"""

from __future__ import annotations

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


def query_to_smtlib(q: Query) -> str:
    """Return ``q`` as SMT-LIB2 text: header comments, declarations, named assertions (labels
    prefixed ``A_``), check-sat.

    The final comment states which answer proves the obligation (``unsat`` for most codes,
    ``sat`` for FX-ORD-001).
    """
    lines = [f"; {h}" if h else ";" for h in q.header]
    lines.append("(set-option :produce-unsat-cores true)")
    lines.append("(set-logic QF_LIA)")
    for v in free_vars([t for _, t in q.assertions] + list(q.minimize)):
        lines.append(f"(declare-const {v.name} {v.sort.value})")
    for label, t in q.assertions:
        body = term_to_smtlib(t)
        # Labels get a prefix so they can never clash with a declared constant.
        lines.append(f"(assert (! {body} :named A_{label}))" if label else f"(assert {body})")
    proves = "unsat" if q.expect is Status.UNSAT else "sat"
    lines.append(f"; the obligation is proved when the answer is {proves}")
    lines.append("(check-sat)")
    lines.append("(exit)")
    return "\n".join(lines) + "\n"
