"""``fxverify smt POLICY.fx -o DIR``: every obligation of a policy as a standalone SMT-LIB2 file.

Takes a policy path, an output folder and ``CheckOptions``; checks the policy (fast proofs, then
the chosen solver, as ``check`` does) and writes one ``.smt2`` file per obligation, the
fast-proved ones included: for those the file is the obligation's own query (``encode()``), which
states exactly what the fast proof claims, and a second file, ``certificate_...smt2``, the query of
its certificate (``certify.certificate_query``: the evidence's IR facts as hypotheses and the
property negated, expected ``unsat``), so any solver can re-check the proof. Each file has
``(set-info :status ...)``, SMT-LIB's status of the benchmark, which the checker's verdict fixes:
for a proved obligation the expected answer (the one that proves it: ``unsat``, or ``sat`` for
FX-ORD-001), for a refuted one the opposite answer (cvc5 reports an error when a script's answer
differs from its ``:status``), ``unknown`` for an unknown verdict. A comment and the index give the
expected answer too. Header comments name the obligation code, key and edges and how the checker
decided it. ``DIR/index.json`` lists every file with its code, key, edges, expected answer,
declared status, verdict and method, and for a fast proof its ``certificate`` file (or
``certificate_problem``, why none could be stated) (``specs/output.md``).

The folder is written whole or not at all (``atomic.replace_dir``); an existing folder must be
empty or a previous export (``index.json`` written by fxverify, only ``.smt2`` files beside it),
else FX-IO-002. Problems are diagnostics: the policy's own (exit 2), FX-USE-006 (solver not
installed), FX-IO-001/FX-IO-002 (output folder).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from fxverify import __version__
from fxverify.atomic import foreign_entries, replace_atomically, replace_dir
from fxverify.certify import Claim, certificate_query
from fxverify.certify.facts import Facts
from fxverify.diagnostics.model import Diagnostic, counted
from fxverify.diagnostics.outdir import cannot_write, refuse_replacing
from fxverify.obligations.base import Obligation
from fxverify.pipeline import GUESSED, CheckOptions, discharge, effective_solver, solver_problem
from fxverify.resolve import load_policy
from fxverify.result import Outcome, Verdict
from fxverify.smt.backend import Query, Status
from fxverify.smt.factory import open_backend
from fxverify.smt.smtlib import SmtlibDump, query_to_smtlib
from fxverify.source import SourceMap

#: What an export folder holds: the index and the obligation files.
_EXPORTED_NAME = re.compile(r"index\.json|[A-Za-z0-9_.-]+\.smt2")


@dataclass
class ExportResult:
    """What ``export_smt`` did: the ``sources`` read, the ``diagnostics`` to show, the ``index``
    entries written (one per obligation, in obligation order; empty when nothing was written),
    verdict counts and the exit code (0 written, 2 input or output problem)."""

    path: str
    out_dir: str
    sources: SourceMap
    diagnostics: list[Diagnostic] = field(default_factory=list)
    index: list[dict] = field(default_factory=list)
    exit_code: int = 0

    def summary(self) -> str:
        """One line for standard output: how many files, and how the checker decided them."""
        n = len(self.index)
        by = Counter(e["verdict"] for e in self.index)
        fast = sum(1 for e in self.index if e["verdict"] == "proved" and e["method"] != "solver")
        certs = sum(1 for e in self.index if "certificate" in e)
        return (f"wrote {counted(n, 'obligation file')}, {counted(certs, 'certificate file')} and index.json to {self.out_dir}: "
                f"{by['proved']} proved ({by['proved'] - fast} by the solver, {fast} by a fast proof), "
                f"{by['refuted']} refuted, {by['unknown']} unknown\n")


def _foreign(out_dir: str) -> list[str]:
    return foreign_entries(out_dir, "index.json", _EXPORTED_NAME)


def declared_status(outcome: Outcome, expect: Status) -> Status:
    """The ``:status`` of an obligation's file: the answer its verdict implies (``expect`` when
    proved, the opposite when refuted, unknown otherwise)."""
    if outcome.verdict is Verdict.PROVED:
        return expect
    if outcome.verdict is Verdict.REFUTED:
        return Status.SAT if expect is Status.UNSAT else Status.UNSAT
    return Status.UNKNOWN


def _notes(outcome: Outcome, expect: Status, solver: str) -> tuple[str, ...]:
    """Header lines saying how the checker decided the obligation."""
    proves = expect.value
    other = "sat" if expect is Status.UNSAT else "unsat"
    if outcome.verdict is Verdict.PROVED and outcome.method != "solver":
        how = (f"checker verdict: proved by the fast proof `{outcome.method}`, without a solver; this query states "
               f"what that proof claims, so its answer must be {proves}")
    elif outcome.verdict is Verdict.PROVED:
        how = f"checker verdict: proved by the solver ({solver}), which answered {proves}"
    elif outcome.verdict is Verdict.REFUTED and outcome.method == GUESSED:
        how = (f"checker verdict: refuted by a model made without a solver (`{outcome.method}`) that satisfies every "
               f"assertion of this query, so its answer must be {other} (the :status below); the counterexample "
               f"was replayed by the simulator")
    elif outcome.verdict is Verdict.REFUTED:
        how = (f"checker verdict: refuted by the solver ({solver}), which answered {other} (the :status below), "
               f"the opposite of the expected answer; the counterexample was replayed by the simulator")
    else:
        how = f"checker verdict: unknown ({outcome.reason})"
    return (how, f"expected answer (the one that proves the obligation): {proves}")


def _certificate_notes(outcome: Outcome) -> tuple[str, ...]:
    return (f"the certificate of the fast proof `{outcome.method}` as an SMT query (its IR facts as hypotheses, "
            f"the property negated, as `check --certify smt` states it): unsat re-checks the fast proof",
            "expected answer: unsat")


def _entry(name: str, ob: Obligation, q: Query, outcome: Outcome) -> dict:
    return {"file": name, "code": str(ob.code), "key": ob.key, "edges": [ob.name(e) for e in ob.edges],
            "expect": q.expect.value, "status": declared_status(outcome, q.expect).value,
            "verdict": outcome.verdict.value, "method": outcome.method,
            "reason": outcome.reason}


def export_smt(path: str, out_dir: str, options: CheckOptions | None = None) -> ExportResult:
    """Check the policy at ``path`` and write its obligations into ``out_dir`` (module docstring).
    ``options`` default to ``CheckOptions()``. Never raises for bad input or an unwritable folder
    (diagnostics, exit 2); other exceptions are bugs."""
    options = options or CheckOptions()
    res = ExportResult(path, out_dir, SourceMap())
    problem = solver_problem(options.solver) or refuse_replacing(
        out_dir, _foreign, "`fxverify smt`", "fxverify smt", "smt")
    if problem is not None:
        res.diagnostics, res.exit_code = [problem], 2
        return res
    policy, diags = load_policy(path, res.sources, limits=options.limits)
    res.diagnostics = list(diags)
    if policy is None:
        res.exit_code = 2
        return res
    kept: list[tuple[Obligation, Query]] = []
    backend = open_backend(effective_solver(policy, options.solver))
    try:
        found = discharge(policy, options, backend, keep=kept)
        version = backend.version()
    finally:
        backend.close()
    solver = f"{options.solver.solver} {version}" if options.solver.solver == "z3" else version
    # INVARIANT: discharge keeps one (obligation, query) pair per outcome, in the same order
    assert [ob.key for ob, _ in kept] == [o.key for o in found.outcomes]
    index: list[dict] = []

    def fill(tmp: str) -> None:
        dump = SmtlibDump(tmp)
        facts = Facts(policy)
        for (ob, q), outcome in zip(kept, found.outcomes):
            text = query_to_smtlib(q, _notes(outcome, q.expect, solver), declared_status(outcome, q.expect))
            entry = _entry(os.path.basename(dump.write(q, text)), ob, q, outcome)
            if outcome.verdict is Verdict.PROVED and outcome.method != "solver":
                # A fast proof is also written as its certificate's query (item: "as their
                # certificate query"), so the proof itself, not only the property, is re-checked.
                cq = certificate_query(facts, Claim(ob.key, str(ob.code), tuple(ob.edges), outcome.method), ob.certificate())
                if isinstance(cq, str):
                    entry["certificate_problem"] = cq
                else:
                    entry["certificate"] = os.path.basename(
                        dump.write(cq, query_to_smtlib(cq, _certificate_notes(outcome), Status.UNSAT)))
            index.append(entry)
        doc = {"fxverify": __version__, "policy": policy.name, "path": path, "solver": solver, "obligations": index}
        replace_atomically(os.path.join(tmp, "index.json"),
                           (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8"))

    try:
        replace_dir(out_dir, fill)
    except OSError as err:
        res.diagnostics.append(cannot_write(out_dir, err))
        res.exit_code = 2
        return res
    res.index = index
    return res
