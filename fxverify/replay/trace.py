"""Counterexample -> trace: the dataflow events a person reads to see why an obligation failed.

Takes a policy, an obligation's primary edges, a decoded ``Witness`` (replayed by the simulator
first), its violating event and the context edges that explain it; produces a
``diagnostics.model.Trace`` of ``TraceEvent``s in time order (BRIEF section 5). Only the edges
involved appear; at equal times an end comes before a start (intervals are half-open). Renderers format traces; they never see solver objects. Emits no
diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.diagnostics.model import Elided, Trace, TraceEvent
from fxverify.ir import AccessMode, Edge, Footprint, Policy, Region
from fxverify.obligations.witness import Step, Witness
from fxverify.replay.simulate import Simulator
from fxverify.replay.world import OwnerTimeline

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


def build_trace(policy: Policy, code: Code, edges: tuple[int, ...], w: Witness, why: str, fix: str,
                sim: Simulator | None = None, step: Step | None = None, context: tuple[int, ...] = (),
                regions: tuple[str, ...] = ()) -> Trace:
    """Build the trace of a confirmed counterexample.

    ``edges`` are the obligation's primary edges; the schedule in ``w`` (every edge it times, the
    context edges included) orders the events. ``step`` is the violating event
    (``Obligation.violating``), marked ``>>``; without one, or when the trace has no such event,
    the last step is. ``context`` are further edges shown with schedule-independent facts, and
    ``regions`` the regions a region-level finding is about (one ``region`` event each). ``sim``
    (the replaying simulator) gives owners.
    """
    raw: list[tuple[tuple, dict]] = []
    sim = sim or Simulator(policy)
    elided: tuple[Elided, ...] = ()
    if w.schedule:
        sched = w.schedule
        ids = sorted(sched)
        hidden = {x for group in w.elided for x in group}
        owners = sim.owner_timeline(ids, sched)
        rows = {eid: _timed_events(policy, code, eid, w, sim, owners) for eid in ids}
        raw += [ev for eid in ids if eid not in hidden for ev in rows[eid]]
    elif w.cycle:
        for i, eid in enumerate(w.cycle):
            e = policy.edges[eid]
            nxt = policy.edges[w.cycle[(i + 1) % len(w.cycle)]]
            raw.append(((i,), dict(time=None, e=nxt, kind="fact", detail=f"`{nxt.name}` must start after `{e.name}` finishes")))
    else:
        for name in regions:
            r = policy.region(name)
            raw.append(((len(raw),), dict(time=None, e=None, region=r, kind="region", detail=_region(r))))
        for eid in list(edges) + [c for c in context if c not in edges]:
            e = policy.edges[eid]
            raw += [((len(raw) + j,), ev) for j, ev in enumerate(_map_events(policy, e, None))]
            if e.accesses() or not e.map_ops:
                raw.append(((len(raw),), dict(time=None, e=e, kind="fact", detail=_accesses(e, w))))
    raw.sort(key=lambda t: t[0])
    if w.schedule and w.elided:
        elided = tuple(_elided(policy, group, rows, raw, w) for group in w.elided)
    mark = _violating_index(raw, w, step)
    events = [_event(policy, i + 1, d, i == mark) for i, (_k, d) in enumerate(raw)]
    facts = tuple((k, str(val)) for k, val in sorted(w.values.items()))
    if w.other_schedule:
        # A non-unique final owner needs two schedules: the events show one, this line the other.
        other = [f"`{policy.edges[eid].name}` [{s}, {f})" for eid, (s, f) in sorted(w.other_schedule.items())]
        facts += (("other schedule", ", ".join(other)),)
    if w.address is not None:
        facts = (("address", f"{w.address:#x}"), ("space", str(w.space))) + facts
    return Trace(code=code, events=tuple(events), why=why, fix=fix, facts=facts, elided=elided)


def _timed_events(policy: Policy, code: Code, eid: int, w: Witness, sim: Simulator, owners: OwnerTimeline
                  ) -> list[tuple[tuple, dict]]:
    """The raw events of edge ``eid`` at its times in ``w.schedule``, each with its sort key
    (time, 0 for what happens at its end and 1 at its start, edge id, order within the edge);
    ``owners`` answers who owns a region when (over the schedule's edges)."""
    raw: list[tuple[tuple, dict]] = []
    sched = w.schedule
    e = policy.edges[eid]
    s, f = sched[eid]
    for r in e.releases:
        raw.append(((s, 1, eid, 0), dict(time=s, e=e, kind="release", clause=r.region,
                                         detail=f"releases `{r.region}` ({r.kind.value})")))
    for al in e.allocs:
        raw.append(((s, 1, eid, 0), dict(time=s, e=e, kind="alloc", clause=al.region,
                                         detail=f"allocates `{al.region}` to `{al.device}` (from its end)")))
    for rv in e.revokes:
        raw.append(((s, 1, eid, 0), dict(time=s, e=e, kind="revoke", clause=rv.region,
                                         detail=f"revokes `{rv.region}` from `{rv.device}`")))
    raw += [((s, 1, eid, 1), ev) for ev in _map_events(policy, e, s)]
    for fp in e.invalidates:
        raw.append(((s, 1, eid, 1), dict(time=s, e=e, kind="invalidate",
                                         detail=f"invalidates `{e.device}`'s lines of {describe_footprint(fp, w.address, None)}")))
    if e.notifies:
        raw.append(((s, 1, eid, 3), dict(time=s, e=e, kind="notify",
                                         detail="notifies " + ", ".join(f"`{n}`" for n in e.notifies) + " complete")))
    if e.accesses() or not (e.releases or e.revokes or e.map_ops or e.flushes or e.allocs or e.invalidates
                            or e.notifies):
        raw.append(((s, 1, eid, 2), dict(time=s, e=e, kind="start", detail=_accesses(e, w, code))))
    elif e.flushes and not (e.releases or e.revokes or e.map_ops or e.allocs or e.invalidates or e.notifies):
        # A flush takes effect when its edge finishes, so when it was issued decides which writes
        # it covers (FX-ORD-003): shown, or a flush that started too early would look in time.
        links = ", ".join(f"`{ln}`" for ln in e.flushes)
        raw.append(((s, 1, eid, 2), dict(time=s, e=e, kind="start",
                                         detail=f"issues a flush of link {links} (it covers writes finished by now)")))
    raw.append(((f, 0, eid, 0), dict(time=f, e=e, kind="end", detail="finishes")))
    for h in e.handoffs:
        before = ",".join(sorted(owners.at(h.region, f - 0.5)))
        raw.append(((f, 0, eid, 1), dict(time=f, e=e, kind="handoff", clause=h.region,
                                         detail=f"hands `{h.region}` from `{h.src}` to `{h.dst}`",
                                         owner_before=before, owner_after=h.dst)))
    for ls in e.leases:
        void = " (void: this edge hands it off)" if sim.handed_to(e, ls.region) is not None else ""
        raw.append(((f, 0, eid, 2), dict(time=f, e=e, kind="lease", clause=ls.region,
                                         detail=f"leases `{ls.region}` to `{ls.device}`{void}")))
    for ln in e.flushes:
        raw.append(((f, 0, eid, 3), dict(time=f, e=e, kind="flush", detail=f"flushes link `{ln}`")))
    if e.cancels:
        names = ", ".join(f"`{c.edge}`" for c in e.cancels)
        verb = "touches" if len(e.cancels) == 1 else "touch"
        raw.append(((f, 0, eid, 3), dict(time=f, e=e, kind="cancel",
                                         detail=f"the cancel completes: {names} {verb} no byte from here")))
    for fp in e.writebacks:
        raw.append(((f, 0, eid, 3), dict(time=f, e=e, kind="writeback",
                                         detail=f"writes back `{e.device}`'s lines of {describe_footprint(fp, w.address, None)}")))
    return raw


def _elided(policy: Policy, group: tuple[int, ...], rows: dict[int, list], raw: list, w: Witness) -> Elided:
    """The one-line summary of a group of elided edges (``Simulator.close``): the span they fill
    and the step they come before. ``close`` keeps shown rows out of that span but for ends at
    its first instant, so the rows before it are those earlier than its end."""
    lo = min(w.schedule[x][0] for x in group)
    hi = max(w.schedule[x][1] for x in group)
    before = 1 + sum(1 for _k, d in raw if d["time"] < hi)
    return Elided(before=before, start=lo, end=hi, events=sum(len(rows[x]) for x in group),
                  edges=tuple(policy.edges[x].name for x in group))


def _accesses(e: Edge, w: Witness, code: Code | None = None) -> str:
    """What an edge touches, with the witness's byte where it lies in a footprint; for an
    FX-INIT-001 trace, how much of its destination a move or reduce defines when not all of it."""
    accs = "; ".join(f"{_VERB[a.mode]} {describe_footprint(a.footprint, w.address, w.elements.get(e.eid))}"
                     for a in e.accesses()) or (
        "issues the cancel of " + ", ".join(f"`{c.edge}`" for c in e.cancels) if e.cancels else e.action.value)
    if code == codes.INIT_001 and e.dst is not None and e.defines() != (e.dst,):
        got = e.defines()
        accs += (f"; defines only [{got[0].lo:#x}, {got[-1].hi:#x}) {sum(d.nbytes for d in got)} B of it"
                 if got else "; defines none of it (its output length depends on the data)")
    return accs


def _map_events(policy: Policy, e: Edge, t: int | None) -> list[dict]:
    """One ``map`` event per map operation of ``e`` at time ``t``; ``clause`` is its position. A
    value of a map whose values are devices (``hash<u32, device>``: a device's index in the policy's
    declaration order, as the resolver stores it) is shown by the device's name."""
    out = []
    for pos, op in enumerate(e.map_ops):
        val = "" if op.value is None else f" = {_map_value(policy, op.map, op.value)}"
        out.append(dict(time=t, e=e, kind="map", clause=pos, detail=f"{op.kind.value} `{op.map}[{op.key}]`{val}"))
    return out


def _map_value(policy: Policy, name: str, value: int) -> str:
    """``value`` as written in the policy: a device name for a map of devices, else the number."""
    m = next((x for x in policy.maps if x.name == name), None)
    if m is not None and m.value_type == "device" and 0 <= value < len(policy.devices):
        return f"`{policy.devices[value].name}`"
    return str(value)


def _region(r: Region) -> str:
    """``region `kv` [lo, hi) N B in `hbm0`, alias set `s```: a region-level fact."""
    alias = f", alias set `{r.alias_set}`" if r.alias_set else ", in no alias set"
    return f"region `{r.name}` [{r.base:#x}, {r.end:#x}) {r.size} B in `{r.space}`{alias}"


def _event(policy: Policy, step: int, d: dict, violation: bool) -> TraceEvent:
    """The ``TraceEvent`` of one raw event: an edge's, or (``e`` is ``None``) a region's, shown on
    the device whose memory holds it."""
    e = d["e"]
    if e is None:
        r = d["region"]
        return TraceEvent(step=step, time=None, device=policy.space(r.space).device, hook="", edge=r.name,
                          kind=d["kind"], detail=d["detail"], span=r.span, violation=violation)
    return TraceEvent(step=step, time=d["time"], device=e.device, hook=e.hook, edge=e.name, kind=d["kind"],
                      detail=d["detail"], span=e.span, owner_before=d.get("owner_before"),
                      owner_after=d.get("owner_after"), violation=violation, stream=e.stream)


def _violating_index(raw: list, w: Witness, step: Step | None) -> int:
    """Index of the marked step: the event ``step`` names (its edge, kind and clause; the last one
    when the clause repeats, as in a region released twice), else, for an edge without that event
    (an edge with no access has no ``start``), that edge's first event at its start time; the
    last step when there is no ``step`` (cycles, schedule-independent facts)."""
    if step is None:
        return len(raw) - 1
    mine = [(i, d) for i, (_k, d) in enumerate(raw) if d["e"] is not None and d["e"].eid == step.edge]
    hits = [i for i, d in mine if d["kind"] == step.kind and (step.clause is None or d.get("clause") == step.clause)]
    if hits:
        return hits[-1]
    t0 = w.schedule.get(step.edge, (None, None))[0]
    at = [i for i, d in mine if d["time"] == t0]
    return at[0] if at else len(raw) - 1
