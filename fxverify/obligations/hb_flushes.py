"""Parametric FX-ORD-003: every read of bytes a family wrote over a posted link is HB-after a flush
of that link that is HB-after the write, proved once for a pair of declarations (``Flushed``).

A disaggregated prefill's NIC writes every KV block to the decode node over a posted RDMA link,
flushes the link once per layer after the layer's writes, and the decode node reads the layer
after the flush (``send[l, 0, b] -> flush[l, 0] -> dec[l, 0]``). For a writing declaration ``W``
(footprint position ``pw``), a reading declaration ``R`` (position ``pr``) and a posted link
``L`` that may carry ``W``'s writes, one query over both loop indices (``hb_orders.Paths.query``)
asks for instances ``W[i]`` and ``R[j]`` whose footprints there share a hull byte in one space
that no chain of ``after`` references ``W -> ... -> R`` (at most ``hb_orders.MAX_STEPS``) through
a declaration whose every instance flushes ``L`` orders; when ``W``'s instances flush ``L``
themselves, any chain will do. Unsat proves every such pair: each chain is a path of the HB graph,
so the flush instance it names is HB-after ``W[i]`` and HB-before ``R[j]`` (or ``W[i]`` flushes
``L`` and is HB-before ``R[j]``), and ``PostedRead.prove_fast`` would prove the pair's obligation
(``hb-reachability``, or ``same-requester`` first); the verdict is the same, only the method is
``parametric``. The obligations paired are a subset of the pairs whose hulls meet
(``pairs.pairs_where``). A pair the same-requester rule exempts
(``visibility.same_requester``) is not asked: its own proof needs no HB and no query. Not tried under an HB cycle (``prover_for``).
The property test in ``tests/obligations/test_hb_flushes.py`` checks every obligation so proved
against ``PostedRead.prove_fast`` on random families. Emits no diagnostics; raises nothing.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.obligations.base import Context
from fxverify.obligations.hb_orders import Paths, decide, footprint_refs, meeting, prover_for, region_spaces
from fxverify.obligations.parametric import Parametric, Report
from fxverify.shapes import EdgeShape, Shapes
from fxverify.source import Span


class Flushed:
    """The FX-ORD-003 pair proofs of one generation (the module docstring), with the check's
    parametric ``prover``: ``proved`` asks once per writing and reading declaration, positions
    and link, and counts the unrolled obligations it stands for; ``report`` records a
    ``parametric.Report`` per pair asked."""

    def __init__(self, ctx: Context, prover: Parametric, shapes: Shapes) -> None:
        pol = ctx.policy
        self.prover, self.shapes, self.paths = prover, shapes, Paths(shapes)
        self.spaces = region_spaces(pol)
        # link -> the declarations whose every instance flushes it
        instances: dict[Span, list[frozenset[str]]] = {}
        for e in pol.edges:
            instances.setdefault(e.span, []).append(frozenset(e.flushes))
        self.flushers: dict[str, set[Span]] = {}
        for span, flushed in instances.items():
            for link in frozenset.intersection(*flushed):
                self.flushers.setdefault(link, set()).add(span)
        # (w, pw, r, pr, link) -> ["" when proved, else why not; the obligations counted]
        self.found: dict[tuple[Span, int, Span, int, str], list] = {}

    def proved(self, w: Span, pw: int, r: Span, pr: int, link: str) -> bool:
        """True when every read at position ``pr`` of an instance of declaration ``r`` of bytes an
        instance of ``w`` wrote at position ``pw`` over ``link`` is HB-after a flush of ``link``
        HB-after the write (one solver query per key, on first use). Counts one obligation."""
        if not self.prover.worth_a_query(w, r):
            return False  # not asked, nor reported: the pair's instances are proved faster on their own
        key = (w, pw, r, pr, link)
        got = self.found.get(key)
        if got is None:
            got = self.found[key] = [self._ask(*key), 0]
        got[1] += 1
        return not got[0]

    def _ask(self, w: Span, pw: int, r: Span, pr: int, link: str) -> str:
        ws, rs = self.shapes.edges.get(w), self.shapes.edges.get(r)
        if ws is None or rs is None:
            return "no shape"
        if pw >= len(footprint_refs(ws)) or pr >= len(footprint_refs(rs)):
            return "no footprint there"
        flushers = self.flushers.get(link, set())

        def through_flush(decls: list[EdgeShape]) -> bool:
            return w in flushers or any(d.span in flushers for d in decls[1:-1])

        pairing = meeting(self.shapes, self.spaces, lambda s: [footprint_refs(s)[pw]], lambda s: [footprint_refs(s)[pr]])
        code = codes.ORD_003
        name = f"{code}:{ws.name}#{pw}<{rs.name}#{pr}|{link}@{w.file}:{w.start}@{r.file}:{r.start}"
        q = self.paths.query(name, ws, rs, pairing, f"{code}: every read by `{rs.name}` ({rs.where}) of bytes `{ws.name}` "
                                                    f"({ws.where}) writes over posted link `{link}` follows a flush of "
                                                    f"it after the write, over both loop indices",
                             keep=through_flush, via=f"through a flush of `{link}`")
        return q if isinstance(q, str) else decide(self.prover, code, q)

    def report(self) -> None:
        """Record a ``Report`` per pair asked, in the order first asked: the writing declaration
        as its ``family`` (and its position), the reading one as ``before``."""
        for (w, pw, r, _pr, _link), (why, count) in self.found.items():
            ws, rs = self.shapes.edges.get(w), self.shapes.edges.get(r)
            self.prover.reports.append(Report(ws.name if ws else "", ws.where if ws else "", str(codes.ORD_003), pw,
                                              count, why, rs.name if rs else ""))


def flushed_for(ctx: Context) -> Flushed | None:
    """The FX-ORD-003 pair proofs of a generation when the check's prover proves FX-ORD-003, the
    policy has its shapes and HB is acyclic (``prover_for``), else ``None``."""
    prover = prover_for(ctx, codes.ORD_003)
    shapes = Shapes.of(ctx.policy)
    return Flushed(ctx, prover, shapes) if prover is not None and shapes is not None else None
