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
from fxverify.certify import defined, lifetimes, order, routes, static
from fxverify.certify.facts import Facts, Statement, f, s
from fxverify.ir import Policy
from fxverify.smt.backend import Backend, Query, SolverOptions, Status

#: The certify modes of ``check --certify [MODE]``.
MODES = ("python", "smt")

_CHECKS: dict[str, Callable[[Facts, Certificate, object], Statement]] = {
    "hb-order": order.check_ordered, "hb-before-all": order.check_before_all, "cancel-order": order.check_cancel, "flush-between": order.check_flushed, "flush-after": order.check_flushed_after, "written-back": order.check_written, "owner-chain": order.check_owner, "one-owner": order.check_one_owner,
    "lease-chain": order.check_lease, "final-owner": order.check_final, "topological-order": order.check_topological,
    "read-cover": order.check_cover, "interval": static.check_interval, "in-place": static.check_in_place,
    "fabric-path": static.check_fabric, "every-path": static.check_every_path, "same-requester": routes.check_same_requester, "notified": routes.check_notified, "read-back-after": routes.check_read_back_after, "read-back-between": routes.check_read_back_between, "host-read-between": routes.check_host_read_between, "declared-hook": static.check_hook, "link-endpoint": static.check_endpoint,
    "one-destination": static.check_split, "local-class": static.check_local, "own-slot": static.check_slot,
    "size-bound": static.check_size, "checksum-walk": static.check_checksum, "layout": static.check_layout,
    "lifetime-chain": lifetimes.check_chain, "within-allocation": lifetimes.check_within,
    "defined-cover": defined.check_defined,
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


def certificate_query(facts: Facts, claim: Claim, cert: Certificate | None) -> Query | str:
    """The SMT query of the certificate ``cert`` of ``claim``'s fast proof (``query_of``, unsat
    proves it), or the reason it cannot be stated: a certificate that is missing, about another
    obligation, or whose facts disagree with the IR (``statement``'s problems). Never raises
    for a malformed certificate."""
    st = statement(facts, claim, cert)
    if st.problems:
        return "; ".join(st.problems)
    return query_of(claim.key, st)


class Certifier:
    """Checks certificates as they come (``add``), so a policy's hundreds of thousands are never
    held at once; ``close`` decides the pending SMT queries and returns the report.

    ``mode`` is ``python`` or ``smt`` (``ValueError`` otherwise). In ``smt`` mode ``backend``
    decides the queries, ``batch`` at a time; when omitted one is opened with ``solver``
    (``smt.factory.open_backend``) on first use and closed by ``close``."""

    def __init__(self, policy: Policy, mode: str = "python", *, solver: SolverOptions | None = None,
                 backend: Backend | None = None, batch: int = 64) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown certify mode {mode!r}")
        self.facts = Facts(policy)
        self.report = CertifyReport(mode)
        self.solver = solver or SolverOptions()
        self.backend, self._own = backend, backend is None
        self.batch = batch
        self._pending: list[tuple[int, str, Query]] = []
        #: (claim number, failure): ``close`` reports them in claim order, however batches fall
        self._failed: list[tuple[int, Failure]] = []

    def add(self, claim: Claim, cert: Certificate | None) -> None:
        """Check one fast proof's certificate (``None``: missing, a failure)."""
        n = self.report.checked
        self.report.checked += 1
        st = statement(self.facts, claim, cert)
        if st.problems:
            self._failed.append((n, Failure(claim.key, "; ".join(st.problems))))
        elif self.report.mode == "python":
            if st.derived:
                self._failed.append((n, Failure(claim.key, "; ".join(st.derived))))
        else:
            self._pending.append((n, claim.key, query_of(claim.key, st)))
            if len(self._pending) >= self.batch:
                self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        if self.backend is None:
            from fxverify.smt.factory import open_backend

            self.backend = open_backend(self.solver)
        for (n, key, _q), res in zip(self._pending, self.backend.check_many([q for _n, _k, q in self._pending])):
            if res.status is Status.SAT:
                self._failed.append((n, Failure(key, "the solver finds a schedule or value that breaks the property the certificate claims")))
            elif res.status is Status.UNKNOWN:
                self._failed.append((n, Failure(key, f"the solver could not decide the certificate's query: {res.reason}")))
        self._pending.clear()

    def close(self) -> CertifyReport:
        """Decide what is pending, release an own backend, and return the report (failures in
        claim order, so they do not depend on how claims fell into batches)."""
        try:
            self._flush()
        finally:
            if self._own and self.backend is not None:
                self.backend.close()
                self.backend = None
        self.report.failures = [x for _n, x in sorted(self._failed, key=lambda nx: nx[0])]
        return self.report


def certify(policy: Policy, items: Sequence[tuple[Claim, Certificate | None]], mode: str = "python", *,
            solver: SolverOptions | None = None, backend: Backend | None = None) -> CertifyReport:
    """Re-validate every certificate of ``items`` against ``policy`` in ``mode`` (``Certifier``).
    Raises ``ValueError`` for an unknown mode."""
    c = Certifier(policy, mode, solver=solver, backend=backend)
    for claim, cert in items:
        c.add(claim, cert)
    return c.close()
