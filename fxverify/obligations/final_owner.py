"""FX-OWN-005: the final owner of a region is the same in every schedule, and is the declared
one when the policy declares it (BRIEF section 3; the ownership model is in ``ownership``'s
docstring). ``ownership.generate`` yields these after the other ownership obligations; emits no
diagnostics itself.
"""

from __future__ import annotations

from fxverify.certificate import Evidence, FinalOwnerOf, HandoffOrder
from fxverify.diagnostics import codes
from fxverify.edits import Hint, SetFinalOwner, after, hint
from fxverify.obligations.base import Context
from fxverify.obligations.encode import DeviceFacts, finish, start, time_objectives
from fxverify.obligations.owners import OwnershipObligation
from fxverify.obligations.witness import Step, Witness
from fxverify.smt.backend import Query, Result
from fxverify.smt.terms import Term, and_, eq, not_, or_, rename_vars
from fxverify.source import Span


class FinalOwner(OwnershipObligation):
    """FX-OWN-005: the final owner of ``region`` is the same in every schedule, and equals the
    declared one when declared. Non-uniqueness is a two-schedule query (variables suffixed
    ``__1``/``__2``)."""

    code = codes.OWN_005

    def __init__(self, ctx: Context, region: str, declared: str | None, span: Span) -> None:
        self.region, self.declared = region, declared
        self.hs = list(ctx.handoffs.get(region, ()))
        super().__init__(ctx, tuple(self.hs), f"{self.code}:{region}", span)

    def _dst(self, h: int) -> str:
        return self.ctx.handoff_dst(h, self.region)

    def _maximal(self) -> list[int]:
        g = self.ctx.graph
        return [h for h in self.hs if not any(g.hb_before(h, o) for o in self.hs if o != h)]

    def prove_fast(self) -> str | None:
        init = self.ctx.policy.region(self.region).owner
        finals = {self._dst(h) for h in self._maximal()} if self.hs else {init}
        if len(finals) == 1 and (self.declared is None or finals == {self.declared}):
            return "hb-reachability" if self.hs else "static-owner"
        return None

    def evidence(self) -> Evidence | None:
        if self.prove_fast() is None:
            return None
        last = self._maximal()
        owner = self._dst(last[0]) if self.hs else self.ctx.policy.region(self.region).owner
        superseded = []
        for h in self.hs:
            if h not in last:
                superseded.append(next(HandoffOrder(h, p) for o in self.hs if o != h for p in [self.path(h, o)] if p))
        return FinalOwnerOf(self.region, owner, tuple(superseded), tuple(last))

    def _latest(self, h: int, suffix: str) -> Term:
        fh = rename_vars(finish(h), suffix)
        return and_(*[rename_vars(finish(o), suffix) <= fh for o in self.hs if o != h])

    def encode(self) -> Query:
        facts = DeviceFacts(self.ctx.policy)
        init = facts.device("init_owner", self.ctx.policy.region(self.region).owner)
        dst = {h: facts.device(f"dst_e{h}", self._dst(h)) for h in self.hs}
        base = self._sched()
        header = self.header() + facts.header()
        if self.declared is not None:
            declared = facts.device("declared_owner", self.declared)
            bad = or_(*[and_(self._latest(h, ""), not_(eq(dst[h], declared))) for h in self.hs]) if self.hs else (
                not_(eq(init, declared)))
            cons = base + facts.constraints + [("final_owner_differs", bad)]
            return Query(self.key, tuple(cons), minimize=tuple(time_objectives(self.edges)), header=header)

        cons = [(f"{lbl}__1", rename_vars(t, "__1")) for lbl, t in base] + [
            (f"{lbl}__2", rename_vars(t, "__2")) for lbl, t in base] + facts.constraints
        pairs = [and_(self._latest(a, "__1"), self._latest(b, "__2"), not_(eq(dst[a], dst[b])))
                 for a in self.hs for b in self.hs if a != b]
        cons.append(("two_schedules_disagree", or_(*pairs)))
        return Query(self.key, tuple(cons), header=header)

    def witness(self, result: Result) -> Witness:
        if self.declared is not None:
            w = super().witness(result)
            w.values["declared"] = self.declared
            return w

        def times(h: int, suffix: str) -> tuple[int, int]:
            s_h, f_h = rename_vars(start(h), suffix), rename_vars(finish(h), suffix)
            return int(result.value(s_h, 0)), int(result.value(f_h, 1))
        sched = {h: times(h, "__1") for h in self.hs}
        other = {h: times(h, "__2") for h in self.hs}
        return Witness(schedule=sched, values={"region": self.region}, other_schedule=other)

    def violating(self, w: Witness) -> Step | None:
        """The handoff of the last handoff edge to finish in the schedule shown (ties: larger id)."""
        timed = [h for h in self.hs if h in w.schedule]
        if not timed:
            return None
        return Step(max(timed, key=lambda h: (w.schedule[h][1], h)), "handoff")

    def message(self, w: Witness) -> str:
        if self.declared is not None:
            return f"the final owner of `{self.region}` may differ from the declared `{self.declared}`"
        return f"the final owner of `{self.region}` depends on the schedule"

    def why(self, w: Witness) -> str:
        return "the owner when the flow ends is the destination of the last handoff; it must be unique and as declared"

    def fix(self, w: Witness) -> Hint:
        """The declared final owner made the one the policy gives; else the last handoffs
        ordered one after the other."""
        last = self._maximal()
        if self.declared is not None and len(last) <= 1:
            actual = self._dst(last[0]) if last else self.ctx.policy.region(self.region).owner
            return hint(SetFinalOwner(self.region, actual))
        pairs = [(a, b) for a in last[:3] for b in last[:3] if a != b]
        return hint(*[after(self.name(b), self.name(a)) for a, b in pairs])
