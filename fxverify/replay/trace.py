"""Counterexample -> trace: the dataflow events a person reads to see why an obligation failed.

Takes a policy, an obligation's primary edges, a decoded ``Witness`` and the simulator's confirmed
``Violation``; produces a ``diagnostics.model.Trace`` of ``TraceEvent``s in time order (BRIEF
section 5). Only the edges involved appear; at equal times an end comes before a start
(intervals are half-open). Renderers format traces; they never see solver objects. Emits no
diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.diagnostics.model import Trace, TraceEvent
from fxverify.ir import AccessMode, Footprint, Policy
from fxverify.obligations.witness import Witness
from fxverify.replay.simulate import Simulator, Violation

_VERB = {AccessMode.READ: "reads", AccessMode.WRITE: "writes", AccessMode.REDUCE: "reduces into"}


def describe_footprint(fp: Footprint, address: int | None = None, element: int | None = None) -> str:
    """``kv[3] [0x1000, 0x2000) 4096 B`` plus ``, byte 0x1040 in element 1`` when a byte is named."""
    shape = f"[{fp.lo:#x}, {fp.hi:#x}) {fp.nbytes} B"
    if not fp.contiguous:
        shape += f" ({fp.count} x {fp.elem} B, stride {fp.stride})"
    out = f"`{fp.region}` {shape}"
    if address is not None and fp.contains(address):
        k = element if element is not None else fp.element_of(address)
        out += f", byte {address:#x} in element {k}"
    return out


def build_trace(policy: Policy, code: Code, edges: tuple[int, ...], w: Witness, v: Violation, why: str, fix: str,
                sim: Simulator | None = None) -> Trace:
    """Build the trace of a confirmed counterexample.

    ``edges`` are the obligation's primary edges; the schedule in ``w`` orders the events, and the
    violation's time marks the violating step. ``sim`` (the replaying simulator) gives owners.
    """
    raw: list[tuple[tuple, dict]] = []
    sim = sim or Simulator(policy)
    if w.schedule:
        sched = w.schedule
        ids = sorted(sched)
        for eid in ids:
            e = policy.edges[eid]
            s, f = sched[eid]
            accs = "; ".join(f"{_VERB[a.mode]} {describe_footprint(a.footprint, w.address, w.elements.get(eid))}"
                             for a in e.accesses()) or e.action.value
            if code == codes.INIT_001 and e.dst is not None and e.defines() != (e.dst,):
                got = e.defines()
                accs += (f"; defines only [{got[0].lo:#x}, {got[-1].hi:#x}) {sum(d.nbytes for d in got)} B of it"
                         if got else "; defines none of it (its output length depends on the data)")
            for r in e.releases:
                raw.append(((s, 1, eid, 0), dict(time=s, e=e, kind="release", detail=f"releases `{r.region}` ({r.kind.value})")))
            for rv in e.revokes:
                raw.append(((s, 1, eid, 0), dict(time=s, e=e, kind="revoke", detail=f"revokes `{rv.region}` from `{rv.device}`")))
            for op in e.map_ops:
                val = "" if op.value is None else f" = {op.value}"
                raw.append(((s, 1, eid, 1), dict(time=s, e=e, kind="map", detail=f"{op.kind.value} `{op.map}[{op.key}]`{val}")))
            if e.accesses() or not (e.releases or e.revokes or e.map_ops or e.flushes):
                raw.append(((s, 1, eid, 2), dict(time=s, e=e, kind="start", detail=accs)))
            raw.append(((f, 0, eid, 0), dict(time=f, e=e, kind="end", detail="finishes")))
            for h in e.handoffs:
                before = ",".join(sorted(sim.owners_at(h.region, f - 0.5, ids, sched)))
                raw.append(((f, 0, eid, 1), dict(time=f, e=e, kind="handoff", detail=f"hands `{h.region}` from `{h.src}` to `{h.dst}`",
                                                  owner_before=before, owner_after=h.dst)))
            for ls in e.leases:
                void = " (void: this edge hands it off)" if sim.handed_to(e, ls.region) is not None else ""
                raw.append(((f, 0, eid, 2), dict(time=f, e=e, kind="lease", detail=f"leases `{ls.region}` to `{ls.device}`{void}")))
            for ln in e.flushes:
                raw.append(((f, 0, eid, 3), dict(time=f, e=e, kind="flush", detail=f"flushes link `{ln}`")))
    elif w.cycle:
        for i, eid in enumerate(w.cycle):
            e = policy.edges[eid]
            nxt = policy.edges[w.cycle[(i + 1) % len(w.cycle)]]
            raw.append(((i,), dict(time=None, e=nxt, kind="fact", detail=f"`{nxt.name}` must start after `{e.name}` finishes")))
    else:
        for i, eid in enumerate(edges):
            e = policy.edges[eid]
            detail = "; ".join(f"{_VERB[a.mode]} {describe_footprint(a.footprint, w.address, w.elements.get(eid))}"
                               for a in e.accesses()) or e.action.value
            raw.append(((i,), dict(time=None, e=e, kind="fact", detail=detail)))
    raw.sort(key=lambda t: t[0])
    mark = _violating_index(raw, w, v)
    events = [TraceEvent(step=i + 1, time=d["time"], device=d["e"].device, hook=d["e"].hook, edge=d["e"].name,
                         kind=d["kind"], detail=d["detail"], span=d["e"].span, owner_before=d.get("owner_before"),
                         owner_after=d.get("owner_after"), violation=i == mark)
              for i, (_k, d) in enumerate(raw)]
    facts = tuple((k, str(val)) for k, val in sorted(w.values.items()))
    if w.other_schedule:
        # A non-unique final owner needs two schedules: the events show one, this line the other.
        other = [f"`{policy.edges[eid].name}` [{s}, {f})" for eid, (s, f) in sorted(w.other_schedule.items())]
        facts += (("other schedule", ", ".join(other)),)
    if w.address is not None:
        facts = (("address", f"{w.address:#x}"), ("space", str(w.space))) + facts
    return Trace(code=code, events=tuple(events), why=why, fix=fix, facts=facts)


def _violating_index(raw: list, w: Witness, v: Violation) -> int:
    """Index of the step where the rule breaks: at the violation's time, a release if there is one,
    else a revoke, else the last map access, else the last start among the violation's edges; for
    schedule-independent facts, the last step."""
    if not w.schedule or v.time is None:
        return len(raw) - 1
    at = [(i, d) for i, (_k, d) in enumerate(raw) if d["time"] == v.time and d["e"].eid in v.edges]
    for kind in ("release", "revoke", "map", "start"):
        hits = [i for i, d in at if d["kind"] == kind]
        if hits:
            return hits[-1]
    return len(raw) - 1
