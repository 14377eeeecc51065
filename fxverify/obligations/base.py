"""The obligation model shared by every family.

An ``Obligation`` states one property of a policy. It can:
- ``prove_fast()``: try an exact proof without the solver (HB reachability, interval arithmetic,
  constant evaluation) and return the method's name, or ``None``;
- ``certificate()``: the same proof with its evidence (``fxverify.certificate``), which
  ``fxverify.certify`` re-validates from the IR alone (``check --certify``);
- ``encode()``: build the SMT ``Query`` whose answer ``query.expect`` proves it;
- ``witness(result)``: turn a refuting model into a ``Witness`` of IR values, reading the model
  through the terms ``encode`` built.
Families subclass it. ``Context`` (``obligations.context``, imported here for the families)
carries the policy and its graph, with indexes shared by the families. Emits no diagnostics
itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import networkx as nx

from fxverify.certificate import CancelledFirst, Certificate, Evidence, HbPath
from fxverify.diagnostics.codes import Code, Family
from fxverify.diagnostics.model import Label
from fxverify.edits import Hint
from fxverify.ir import Access, AccessMode
from fxverify.obligations.context import Context
from fxverify.obligations.encode import finish, start
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.source import Span
from fxverify.vocab import AC_OPS

__all__ = ["Context", "Obligation", "conflict_kind"]  # ``Context`` lives in ``obligations.context``

class Obligation(ABC):
    """One property to discharge. Subclasses set the class attribute ``code`` and implement
    ``encode``, ``witness`` and ``message``; ``prove_fast``, ``why`` and ``fix`` are optional.

    ``edges`` are the primary edge ids in role order; ``key`` is stable across runs (names only).
    """

    code: ClassVar[Code]
    #: The terms of the last ``encode`` that ``witness`` reads the model through.
    _probes: tuple = ()
    #: True when the property does not depend on the schedule (sizes, bounds, paths, classes):
    #: such obligations are still checked when happens-before is cyclic.
    schedule_free: bool = False
    #: True when no other obligation can have the same key (the family makes each key once by
    #: construction), so generation need not remember it to drop repeats.
    unique_key: bool = False

    @property
    def family(self) -> Family:
        """The obligation family of ``code``."""
        return self.code.family

    def __init__(self, ctx: Context, edges: tuple[int, ...], key: str, primary: Span,
                 related: tuple[Label, ...] = ()) -> None:
        self.ctx = ctx
        self.edges = edges
        self.key = key
        self.primary = primary
        self.related = related

    # -- what a subclass provides -----------------------------------------------------------
    def prove_fast(self) -> str | None:
        """Return the name of an exact non-solver proof that holds, or ``None``."""
        return None

    def evidence(self) -> Evidence | None:
        """The evidence of the proof ``prove_fast`` finds (``fxverify.certificate``), or ``None``
        when there is none. Slower than ``prove_fast`` (it builds HB paths), so it is asked only
        for ``check --certify``."""
        return None

    def certificate(self) -> Certificate | None:
        """The certificate of this obligation's fast proof: its key, code and edges as the
        obligation holds them, the method ``prove_fast`` names and ``evidence()``; ``None`` when
        either is missing (``check --certify`` reports that as FX-INT-001)."""
        method, ev = self.prove_fast(), self.evidence()
        if method is None or ev is None:
            return None
        return Certificate(self.key, str(self.code), method, tuple(self.edges), ev)

    def path(self, a: int, b: int) -> HbPath | None:
        """The HB path from edge ``a`` to edge ``b`` (``graph.hb_path``), or ``None``."""
        p = self.ctx.graph.hb_path(a, b)
        return None if p is None else HbPath(tuple(p))

    def cancel_before(self, cancellable: tuple[int, ...], targets: tuple[int, ...]) -> tuple[int, int, int] | None:
        """``(cancel, cancelled, target)``: an edge that cancels one of ``cancellable`` and
        happens-before one of ``targets`` (the first found, in id order), or ``None``. A cancelled
        edge touches its bytes only until its cancel finishes (specs/obligations.md section 1,
        cancellation): with the cancel HB-before the other edge of a pair the two never touch bytes
        at once, and with it HB-before the cancelled edge itself, that edge touches none."""
        g = self.ctx.graph
        for x in cancellable:
            for c in self.ctx.cancellers.get(x, ()):
                for y in targets:
                    if c != y and g.hb_before(c, y):
                        return c, x, y
        return None

    def order_method(self, ordered: bool, cancellable: tuple[int, ...], targets: tuple[int, ...]) -> str | None:
        """The fast proof of a pair property that an HB order or a cancel settles (FX-ORD-002,
        FX-OWN-002, FX-OWN-004 of a release): ``hb-reachability`` when ``ordered`` (HB orders the
        pair), else ``cancel-order`` when ``cancel_before(cancellable, targets)`` finds a cancel,
        else ``None``. The method names the argument the certificate makes (``hb-order`` or
        ``cancel-order``, ``certificate.METHOD_KINDS``)."""
        if ordered:
            return "hb-reachability"
        return "cancel-order" if self.cancel_before(cancellable, targets) is not None else None

    def cancelled_first(self, cancellable: tuple[int, ...], targets: tuple[int, ...]) -> CancelledFirst | None:
        """The ``cancel-order`` evidence of ``cancel_before``, or ``None``."""
        hit = self.cancel_before(cancellable, targets)
        if hit is None:
            return None
        c, x, y = hit
        p = self.path(c, y)
        return None if p is None else CancelledFirst(c, x, p)

    def either_path(self, a: int, b: int) -> HbPath | None:
        """An HB path between ``a`` and ``b`` in either direction (``a`` first tried first)."""
        return self.path(a, b) or self.path(b, a)

    @abstractmethod
    def encode(self) -> Query:
        """Return the SMT query; ``query.expect`` is the answer that proves the obligation."""

    def probe(self) -> Query | None:
        """A cheaper query to try before ``encode``'s when no fast proof holds, or ``None``: its
        constraints those of ``encode`` and its violation some of the disjuncts of ``encode``'s,
        so that each of its models is one of ``encode``'s. A refuting answer refutes the obligation
        (its witness read as ``witness`` reads ``encode``'s, and replayed as every witness is); any
        other answer proves nothing, and ``encode``'s query is sent (``pipeline.discharge_obligations``).
        For obligations whose violation is a disjunction over many event pairs (a block pool's
        lifetime: cubic in its allocations) of which the HB graph already names the likely one."""
        return None

    def guess(self) -> dict[str, int | bool] | None:
        """A candidate model of ``encode``'s query made without a solver, or ``None``: values for
        every variable of the query (those of its objectives too), named as ``encode`` names them.
        Called after ``encode`` or ``probe`` built the query it is checked against (a witness is
        read through that query's terms). The
        pipeline evaluates every assertion of the query under it (``smt.terms.evaluate``, exact
        integer arithmetic) and, when all hold, the query is satisfiable and the obligation
        refuted by that model: its witness is read and replayed as a solver's is. A guess that
        fails an assertion proves nothing, and the query goes to the solver. For obligations whose
        violation the IR already shows concretely (two accesses HB leaves unordered, with a byte
        in common), by the thousand in a pool that waits for the wrong free."""
        return None

    @abstractmethod
    def witness(self, result: Result) -> Witness:
        """Turn a refuting solver result into a witness; call it on the obligation whose
        ``encode`` made the query (it reads the model through that query's terms)."""

    @abstractmethod
    def message(self, w: Witness) -> str:
        """One-line message for the refutation (Cedar style: lowercase, names in backticks)."""

    def why(self, w: Witness) -> str:
        """The rule that the witness breaks, in one sentence."""
        return ""

    def fix(self, w: Witness) -> Hint:
        """The fix hint: options of edits (``fxverify.edits``) that name the missing ordering,
        owner or size, each written and applied as the same object; ``fxverify.hints`` shows
        only those that discharge the finding when applied. Default: none."""
        return Hint()

    def culprits(self) -> tuple[int, ...]:
        """The edges the finding blames, in role order: those whose events break the rule and the
        message names. A finding's fingerprint hashes their names (``Diagnostic.edges``), so an
        edge that only explains the bug (a flush elsewhere, an earlier handoff) never changes it.
        Default: every primary edge."""
        return self.edges

    def undecided(self) -> tuple[int, ...]:
        """The edges an unknown verdict of this obligation names (FX-SMT-001): its message and
        fingerprint hash their names, so a baseline that accepts it keeps matching. Default:
        every primary edge."""
        return self.edges

    def violating(self, w: Witness) -> Step | None:
        """The violating event of ``w``, the step its trace marks. Default, for a witness with a
        schedule: the start of the culprit that starts last (on a tie, the one of larger id, which
        the trace lists later): for an overlap, the second start of the overlapping pair; for a
        read that comes too early, the read. ``None`` (the trace marks its last step) for
        schedule-independent witnesses and cycles."""
        timed = [e for e in self.culprits() if e in w.schedule]
        if not timed:
            return None
        return Step(max(timed, key=lambda e: (w.schedule[e][0], e)), "start")

    def context(self, w: Witness) -> tuple[int, ...]:
        """Edges that are not primary but that a trace shows, because they make the HB chain
        matter (the message sent too early after a posted write; the other writers of a map
        entry): ascending ids. Default: the inner edges of a shortest HB path between each two
        HB-ordered primary edges (one chain, not every edge between them, so a trace stays short;
        a query eliminates them, ``encode.projected_schedule``, and the trace times them at their
        earliest, ``encode.eliminated_times``), and what the violating edge waited for
        (``waited_for``)."""
        if self.schedule_free:
            return ()
        g, prim = self.ctx.graph, sorted(set(self.edges))
        out: set[int] = set()
        for a in prim:
            for b in prim:
                if a != b and g.hb_before(a, b):
                    out.update(nx.shortest_path(g.hb, a, b)[1:-1])
        step = self.violating(w) if w.schedule and g.is_acyclic() else None
        if step is not None:
            out.update(self.waited_for(step.edge))
        return tuple(sorted(out - set(prim)))

    def waited_for(self, v: int) -> list[int]:
        """What violating edge ``v`` waited for, that a trace shows: every edge HB-before ``v``
        that reports a primary edge complete (``notifies``: the notification sent too early),
        then ``v``'s other immediate HB predecessors (the message, flush or stream step it
        started right after), at most three in all, by id."""
        g, pol = self.ctx.graph, self.ctx.policy
        prim = set(self.edges)
        names = {pol.edges[e].name for e in prim}
        told = sorted({x for n in names for x in self.ctx.notifiers.get(n, ()) if x not in prim and g.hb_before(x, v)})
        preds = sorted(p for p in g.predecessors(v) if p not in prim and p not in told)
        return (sorted(told) + preds)[:3]

    def trace_regions(self) -> tuple[str, ...]:
        """Regions a finding about regions rather than edges shows in its trace (one ``region``
        event each, the last one marked). Default: none."""
        return ()

    # -- shared helpers ---------------------------------------------------------------------
    def name(self, eid: int) -> str:
        """Instance name of edge ``eid``."""
        return self.ctx.policy.edges[eid].name

    def header(self) -> tuple[str, ...]:
        """Header comment lines for the SMT-LIB2 dump: policy, code, edges involved."""
        pol = self.ctx.policy
        lines = [f"fxverify obligation {self.code}", f"policy: {pol.name} ({pol.path})", f"key: {self.key}"]
        for eid in self.edges:
            lines.append(f"edge {eid} = {pol.edges[eid].name}")
        return tuple(lines)

    def schedule_of(self, result: Result, eids: tuple[int, ...] | None = None) -> dict[int, tuple[int, int]]:
        """The ``(start, finish)`` the model gives the primary edges (or ``eids``), in ns."""
        out: dict[int, tuple[int, int]] = {}
        for e in (self.edges if eids is None else eids):
            sv, fv = result.value(start(e)), result.value(finish(e))
            if isinstance(sv, int) and isinstance(fv, int):
                out[e] = (sv, fv)
        return out


def conflict_kind(a: Access, b: Access) -> str | None:
    """Classify two accesses to a shared byte (BRIEF section 2).

    Returns ``"race"`` for a conflict (at least one writes; a reduction against a plain read or
    write counts as a write, and so does a non-atomic reduction against any reduction: its load
    and store can interleave with the other's update, which is then lost), ``"reduce"`` for two
    atomic reductions that do not commute (different operators, or an operator outside
    ``vocab.AC_OPS``: FX-XF-004), and ``None`` for no conflict (two reads, or two atomic
    reductions with the same associative and commutative operator; specs/language.md, `reduce`).
    """
    ma, mb = a.mode, b.mode
    if ma is AccessMode.READ and mb is AccessMode.READ:
        return None
    if ma is AccessMode.REDUCE and mb is AccessMode.REDUCE and a.atomic and b.atomic:
        if a.op == b.op and a.op in AC_OPS:
            return None
        return "reduce"
    return "race"
