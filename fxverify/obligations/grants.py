"""FX-OWN-003 for leases (``LeaseByNonOwner``): the device that grants a lease owns the region when
the granting edge starts. The ownership model is in ``obligations.ownership``'s docstring; with a
parametric prover, a declaration whose every lease names a region its device owns for the whole
flow is proved for every index value (``Parametric.proved_static_grants``).
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.certificate import Evidence
from fxverify.diagnostics import codes
from fxverify.edits import Hint, hint
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.encode import DeviceFacts, start, time_objectives
from fxverify.obligations.owners import OwnershipObligation, owned_by_hb, owner_chain, owner_is
from fxverify.obligations.parametric import Held, ProvedTogether
from fxverify.obligations.witness import Witness
from fxverify.smt.backend import Query
from fxverify.smt.terms import not_


class LeaseByNonOwner(OwnershipObligation):
    """FX-OWN-003 for leases: the device that grants a lease of ``region`` owns it when the
    granting edge starts (nobody can lend what it does not own)."""

    code = codes.OWN_003

    def __init__(self, ctx: Context, g: int, region: str, to: str) -> None:
        self.region, self.to = region, to
        self.device = ctx.edge(g).device
        self.hs = [h for h in ctx.handoffs.get(region, ()) if h != g]
        eg = ctx.edge(g)
        span = next((x.span for x in eg.leases if x.region == region and x.span.end), eg.span)
        super().__init__(ctx, (g, *self.hs), f"{self.code}:lease:{eg.name}|{region}|{to}", span)

    def prove_fast(self) -> str | None:
        return "hb-reachability" if owned_by_hb(self.ctx, self.region, self.device, self.edges[0], self.hs) else None

    def evidence(self) -> Evidence | None:
        return owner_chain(self, self.region, self.device, self.edges[0], self.hs)

    def encode(self) -> Query:
        g = self.edges[0]
        facts = DeviceFacts(self.ctx.policy)
        owns = owner_is(self.ctx, self.region, facts.device("lender", self.device), start(g), self.hs, facts)
        cons = self._sched() + facts.constraints + [("lender_not_owner", not_(owns))]
        return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=self.header() + facts.header())

    def culprits(self) -> tuple[int, ...]:
        """The granting edge; the handoffs of the region explain."""
        return self.edges[:1]

    def message(self, w: Witness) -> str:
        return (f"`{self.name(self.edges[0])}` on `{self.device}` leases `{self.region}` to `{self.to}`, "
                f"but `{self.device}` may not own it then")

    def why(self, w: Witness) -> str:
        return "only the current owner of a region can lease it"

    def fix(self, w: Witness) -> Hint:
        """No edit: the lease belongs on an edge of the owner, which the policy may not have."""
        return hint()


def lease_grants(ctx: Context) -> Iterator[Obligation | ProvedTogether]:
    """One ``LeaseByNonOwner`` per lease clause and the region it names, by region (sorted), then
    granting edge; with a parametric prover and acyclic HB, those of a declaration
    ``Parametric.proved_static_grants`` proves come as ``ProvedTogether`` runs in their places."""
    held = Held()
    granted = (ctx.parametric.proved_static_grants({r for r, hs in ctx.handoffs.items() if hs})
               if ctx.parametric is not None and ctx.graph.is_acyclic() else set())
    seen: set[str] = set()  # a clause written twice states one property (``families._kept`` drops the copy)
    for region, gs in sorted(ctx.leases.items()):
        for g in gs:
            eg = ctx.edge(g)
            for ls in eg.leases:
                key = f"{codes.OWN_003}:lease:{eg.name}|{region}|{ls.device}"
                if ls.region != region or key in seen:
                    continue
                seen.add(key)
                if eg.span in granted:
                    yield from held.hold(key, codes.OWN_003)
                    continue
                yield from held.flush()
                yield LeaseByNonOwner(ctx, g, region, ls.device)
    yield from held.flush()
