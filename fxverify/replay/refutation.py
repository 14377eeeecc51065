"""The diagnostic of a refuted obligation, once the independent simulator has replayed its
counterexample (``refutation``): a counterexample that does not replay is FX-INT-001, never a
finding. Its trace shows the obligation's context edges at the times the model gives them, closed
under happens-before (``_shown``), and marks the violating event. Takes the policy, its
``Simulator``, the obligation, its witness and the solver result; emits the obligation's code or
FX-INT-001.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from fxverify.diagnostics.model import Diagnostic, Trace, diagnostic, internal_error
from fxverify.ir import Policy
from fxverify.obligations.encode import eliminated_times
from fxverify.obligations.witness import Witness
from fxverify.replay.simulate import Simulator
from fxverify.replay.trace import build_trace

if TYPE_CHECKING:  # types only: the replay imports nothing of the encoder at run time
    from fxverify.obligations.base import Obligation
    from fxverify.smt.backend import Result


def refutation(policy: Policy, sim: Simulator, ob: Obligation, w: Witness, res: Result, *,
               traced: bool = True) -> Diagnostic:
    """The diagnostic of a refuted obligation, after the simulator replayed its witness; a witness
    that does not replay is FX-INT-001, never a finding. Its trace shows the context edges too
    (``_shown``) and marks the obligation's violating event; its ``edges`` (which the fingerprint
    hashes) are the culprits only (the regions, for a finding about regions).

    With ``traced`` False the witness is replayed all the same, but neither widened nor drawn:
    the diagnostic has no trace, its help is the fix's text and the violating event is read off
    the witness's own schedule. ``pipeline.discharge_obligations`` asks so for a refutation that
    a check shows grouped under an earlier one of its group (``grouping.group_key``), which
    carries the trace: on a layered policy with a race in every layer, widening and drawing
    each of hundreds of witnesses over thousands of edges took minutes."""
    edges = tuple(w.cycle) if w.cycle else ob.edges
    confirmed = sim.confirm(ob.code, edges, w.schedule, w.address, w.values, w.other_schedule)
    if confirmed is None:
        return internal_error(f"the counterexample for {ob.code} ({ob.key}) did not replay in the simulator",
                              ob.primary, notes=(f"witness schedule {sorted(w.schedule.items())}, address {w.address}",),
                              policy=policy.name, obligation=ob.key)
    trace: Trace | None = None
    if traced:
        shown = _shown(sim, ob, w, res)
        step = ob.violating(shown)
        trace = build_trace(policy, ob.code, ob.edges, shown, ob.why(w), ob.fix(w).text(), sim, step,
                            ob.context(w), ob.trace_regions())
        help_text, violated = trace.fix, next((ev.kind for ev in trace.events if ev.violation), "")
    else:
        step = ob.violating(w)
        help_text, violated = ob.fix(w).text(), step.kind if step is not None else ""
    culprits = edges if w.cycle else ob.culprits()
    if step is not None and step.edge in ob.edges and step.edge not in culprits:
        # The marked step is the violating event, so its edge is blamed too (a release that lands
        # while a use is still in flight): fingerprints follow the violating events.
        culprits = (*culprits, step.edge)
    # A finding about regions blames no edge: its regions are what breaks the rule, so they key
    # its fingerprint (as `region NAME`, which no edge can be called).
    blamed = [policy.edges[e].name for e in culprits] or [f"region {r}" for r in ob.trace_regions()]
    return diagnostic(ob.code, ob.message(w), ob.primary, ob.code.title, related=ob.related, help=help_text,
                      trace=trace, policy=policy.name, obligation=ob.key, edges=blamed, witness=_witness_kind(w, violated))


#: Most elided edges a trace's closed schedule replays with (``_shown``); past it, only the
#: shown edges are replayed, at their shifted times.
CLOSE_REPLAY_LIMIT = 200


def _shown(sim: Simulator, ob: Obligation, w: Witness, res: Result) -> Witness:
    """``w`` as its trace shows it: with the context edges (``Obligation.context``) at the times
    the model gives them, else at times ``Simulator.extend`` adds, then closed under
    happens-before (``Simulator.close``: every edge a timed edge waits for gets a time too, and
    the trace summarises those as elided), so the times shown are those of one legal schedule.
    The wider schedule is replayed again; when it no longer exhibits the violation (or cannot be
    built), the closure of ``w`` alone is tried, then ``w`` itself."""
    if not w.schedule:
        return w
    tries = []
    extra = ob.context(w)
    if extra and not w.other_schedule:
        try:
            timed = {**ob.schedule_of(res, extra), **w.schedule}
            # a projected query names no edge between its primaries: time those the trace shows
            timed |= eliminated_times(ob.ctx.graph, w.schedule, [x for x in extra if x not in timed])
            tries.append(sim.extend(timed, list(extra)))
        except ValueError:
            pass
    tries.append(w.schedule)
    for sched in tries:
        try:
            closed, elided = sim.close(sched)
            other = sim.close(w.other_schedule)[0] if w.other_schedule else {}
        except ValueError:
            continue
        hidden = {x for group in elided for x in group}
        # A closure of thousands of edges (a deep layered flow) is not replayed whole: the rules
        # are quadratic in the edges timed. The shown edges are, at their shifted times.
        replayed = closed if len(hidden) <= CLOSE_REPLAY_LIMIT else {
            e: t for e, t in closed.items() if e not in hidden}
        if sim.confirm(ob.code, ob.edges, replayed, w.address, w.values, other) is not None:
            return replace(w, schedule=closed, other_schedule=other, elided=elided)
    return w


def _witness_kind(w: Witness, violated: str) -> str:
    """The shape of a witness, without its values: ``cycle``, ``static`` (schedule-independent
    facts) or ``schedule:<event>`` with ``violated``, the kind of the violating step (``release``,
    ``map``...)."""
    if w.cycle:
        return "cycle"
    if not w.schedule:
        return "static"
    return f"schedule:{violated}"
