"""The independent certificate checker behind ``fxverify check --certify``.

Takes an ``ir.Policy`` and, for every obligation the prover proved without the solver, a
``Claim`` (the obligation's key, code, edges and method, as the obligation holds them) with its
``certificate.Certificate`` (or ``None``); returns a ``CertifyReport``: how many were checked and
a ``Failure`` for each one that is missing, malformed, about another obligation, or that does not
prove the property. It shares no code with the prover: it imports only the IR, the certificate
data model, the IR's vocabulary and the solver-neutral ``smt`` package (architecture test), and
re-derives every fact from the IR (``certify.facts``).

Two modes (``specs/certificates.md``): ``python`` decides each property by re-walking the
evidence; ``smt`` states each certificate as an SMT query (its IR facts as hypotheses, the
negated property) and discharges it with the solver of ``smt.factory.open_backend``, expecting
unsat; sat or unknown is a failure, never a pass. In both modes every fact the certificate states
is checked against the IR first. The caller turns each failure into FX-INT-001. Emits no
diagnostics itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fxverify.certificate import METHOD_KINDS, Certificate
from fxverify.certify import order, static
from fxverify.certify.facts import Facts, Statement, f, s
from fxverify.ir import Policy
from fxverify.smt.backend import Backend, Query, SolverOptions, Status

#: The certify modes of ``check --certify [MODE]``.
MODES = ("python", "smt")

_CHECKS: dict[str, Callable[[Facts, Certificate, object], Statement]] = {
    "hb-order": order.check_ordered, "flush-between": order.check_flushed, "owner-chain": order.check_owner,
    "lease-chain": order.check_lease, "final-owner": order.check_final, "topological-order": order.check_topological,
    "read-cover": order.check_cover, "interval": static.check_interval, "in-place": static.check_in_place,
    "fabric-path": static.check_fabric, "declared-hook": static.check_hook, "link-endpoint": static.check_endpoint,
    "one-destination": static.check_split, "local-class": static.check_local, "own-slot": static.check_slot,
    "size-bound": static.check_size, "checksum-walk": static.check_checksum, "layout": static.check_layout,
}  # type: ignore[dict-item]


@dataclass(frozen=True)
class Claim:
    """What the pipeline says was proved: the obligation's ``key``, ``code`` (``"FX-ORD-002"``),
    primary ``edges`` (ids, role order) and the fast ``method`` that proved it."""

    key: str
    code: str
    edges: tuple[int, ...]
    method: str


@dataclass(frozen=True)
class Failure:
    """A certificate that did not validate: the obligation's ``key`` and what failed."""

    key: str
    reason: str


@dataclass
class CertifyReport:
    """``checked`` certificates (one per fast proof, missing ones included), ``mode`` and the
    ``failures``, in claim order."""

    mode: str
    checked: int = 0
    failures: list[Failure] = field(default_factory=list)


def statement(facts: Facts, claim: Claim, cert: Certificate | None) -> Statement:
    """Check ``cert`` against ``claim`` and the IR (see the module docstring); never raises for
    a malformed certificate (that is a problem of the statement)."""
    st = Statement()
    if not st.fact(cert is not None, f"no certificate for the fast proof `{claim.method}`"):
        return st
    assert cert is not None
    same = (cert.key, cert.code, tuple(cert.edges), cert.method) == (claim.key, claim.code, tuple(claim.edges), claim.method)
    if not st.fact(same, "the certificate is about another obligation or method"):
        return st
    kind = getattr(cert.evidence, "kind", None)
    if not st.fact(kind in METHOD_KINDS.get(cert.method, frozenset()) and kind in _CHECKS,
                   f"a `{kind}` certificate cannot back the method `{cert.method}`"):
        return st
    try:
        return _CHECKS[kind](facts, cert, cert.evidence)  # type: ignore[index]
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as err:
        st.fact(False, f"malformed `{kind}` certificate ({type(err).__name__}: {err})")
        return st


def query_of(key: str, st: Statement) -> Query:
    """The SMT query of a checked statement: every edge of it runs for a positive time, the
    hypotheses hold and the property fails; unsat proves the certificate."""
    durations = [s(e) < f(e) for e in sorted(st.edges)]
    assert st.violation is not None  # INVARIANT: a statement without problems states its violation
    cons = [(None, t) for t in durations + st.hyps] + [("property_fails", st.violation)]
    return Query(f"certificate:{key}", tuple(cons), header=(f"fxverify certificate of {key}",))


def certify(policy: Policy, items: Sequence[tuple[Claim, Certificate | None]], mode: str = "python", *,
            solver: SolverOptions = SolverOptions(), backend: Backend | None = None, batch: int = 64) -> CertifyReport:
    """Re-validate every certificate of ``items`` against ``policy`` in ``mode`` (``python`` or
    ``smt``). In ``smt`` mode ``backend`` decides the queries (when omitted one is opened with
    ``solver`` and closed before returning), ``batch`` at a time. Raises ``ValueError`` for an
    unknown mode."""
    if mode not in MODES:
        raise ValueError(f"unknown certify mode {mode!r}")
    facts = Facts(policy)
    report = CertifyReport(mode)
    pending: list[tuple[str, Query]] = []
    for claim, cert in items:
        report.checked += 1
        st = statement(facts, claim, cert)
        if st.problems:
            report.failures.append(Failure(claim.key, "; ".join(st.problems)))
        elif mode == "python":
            if st.derived:
                report.failures.append(Failure(claim.key, "; ".join(st.derived)))
        else:
            pending.append((claim.key, query_of(claim.key, st)))
    if pending:
        own = backend is None
        if backend is None:
            from fxverify.smt.factory import open_backend

            backend = open_backend(solver)
        try:
            for i in range(0, len(pending), batch):
                chunk = pending[i:i + batch]
                for (key, _q), res in zip(chunk, backend.check_many([q for _k, q in chunk])):
                    if res.status is Status.SAT:
                        report.failures.append(Failure(key, "the solver finds a schedule or value that breaks the property the certificate claims"))
                    elif res.status is Status.UNKNOWN:
                        report.failures.append(Failure(key, f"the solver could not decide the certificate's query: {res.reason}"))
        finally:
            if own:
                backend.close()
        order_of = {c.key: i for i, (c, _x) in enumerate(items)}
        report.failures.sort(key=lambda x: order_of.get(x.key, 0))
    return report
