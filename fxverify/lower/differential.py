"""``--kernel-run``: drive the lowered programs with BPF_PROG_TEST_RUN and compare with the simulator.

Takes a policy, its lowering directory and (for refuted policies) counterexample schedules;
produces a ``RunReport`` of agreements and disagreements (FX-BPF-006 upstream).

- A proved policy is driven in a valid happens-before order: a wavefront schedule where every
  round starts each edge whose predecessors have finished, then ends them all (so edges that
  happens-before leaves unordered really overlap). Every decision must be *proceed*; afterwards
  the kernel's owner map must equal the simulator's final owners, every counter must be zero,
  every edge done, and every policy map equal to the fold of the schedule's map operations.
- A refuted policy is driven along each replayed counterexample schedule, prefixed with the
  ancestors the witness leaves out (all finished before the witness starts, a valid extension).
  The first event the kernel defers or denies must be the event at which the simulator flags the
  violation (the start of the flagged edge at the violation's time). Violations that hold in
  every schedule (no witness schedule) are driven the same way when a runtime guard mirrors them
  (bounds, local maps, undeclared hooks) and are otherwise counted as static-only.
- In both, every driven schedule is first made tie-free (``serialise``), so the simulator judges
  exactly the event order the kernel runs, and every value a plain read (``map_read``,
  ``aggregate``) observed (its ``FX_OBS_MAP`` record) must be one the simulator allows under its
  map's class in that schedule (``check_reads``, ``replay.map_reads``).

Emits no diagnostics; ``driver`` reports a disagreement as FX-BPF-006 (``specs/lowering.md``
section 8). Raises ``BpfError`` (from ``libbpf``) when the programs cannot be loaded or run.
"""

from __future__ import annotations

import heapq
import json
import os
from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.graph import by_region_uses
from fxverify.ir import MapOpKind, Policy
from fxverify.lower.artifacts import struct_size
from fxverify.lower.kernel import OBS_MAP, Decision, Runtime, lowering_files
from fxverify.replay.simulate import Schedule, Simulator
from fxverify.replay.world import Violation
from fxverify.result import Refutation
from fxverify.vocab import OPERATORS, ClassKind

#: Schedule-free codes whose runtime guard refuses the violating edge at its start (the
#: ``BOUNDS``, ``MAPHOME``, ``CONST`` ops, the hook check of ``fx_run`` and a ``HANDOFF`` that splits a
#: region between two owners; ``specs/lowering.md`` section 8).
RUNTIME_STATIC = frozenset({codes.ALIAS_003, codes.MAP_001, codes.MAP_005, codes.HOOK_002, codes.OWN_003})

#: Schedule rules no program guards at runtime, so the simulator's flag of them is no kernel step
#: (``specs/lowering.md`` section 8): a read of bytes never written (FX-INIT-001) depends on which
#: bytes earlier edges wrote; an accumulation a consumer ``expects`` (FX-XF-004 (c)-(e)) and a
#: checksum over bytes still being written (FX-XF-002 (b)) depend on the contents of the bytes
#: between events. No hook sees bytes, only events. A persisted posted write that no flush follows
#: (FX-ORD-003 ``persist:``) shows only at the end of the run, where no hook fires. Keyed by code
#: and the obligation key's kind.
PROOF_ONLY: dict[str, str] = {
    f"{codes.INIT_001}:": "a read of bytes never written",
    f"{codes.XF_004}:expects-": "an accumulation its consumer expects",
    f"{codes.XF_002}:stale:": "a checksum over bytes still being written",
    f"{codes.ORD_003}:persist:": "a persisted write that no flush follows",
}


def proof_only(x: Refutation) -> str | None:
    """What ``x`` violates when no runtime guard mirrors it (a ``PROOF_ONLY`` rule), else ``None``."""
    return next((what for prefix, what in PROOF_ONLY.items() if x.key.startswith(prefix)), None)


@dataclass
class Case:
    """One driven scenario: its ``name`` (code and edges), the number of ``events`` driven, the
    event index the simulator flags (``None`` when it flags none), the first event the kernel
    refused (``None`` when none), the kernel's decision and reason there, whether they ``agree``
    and a ``detail`` sentence."""

    name: str
    events: int
    sim_step: int | None
    kernel_step: int | None
    kernel_decision: str = ""
    kernel_reason: str = ""
    agree: bool = False
    detail: str = ""


@dataclass
class RunReport:
    """Agreement counts of ``--kernel-run``: ``decisions`` compares every driven event,
    ``final`` compares final-state entries (owners, counters, edge states, policy maps),
    ``reads`` every value a plain read or aggregate observed with the values its map's class
    allows in the driven schedule (``reads_unchecked``: reads whose allowed set was too large to
    enumerate, listed, never counted as agreeing)."""

    cases: list[Case] = field(default_factory=list)
    decisions_agree: int = 0
    decisions_total: int = 0
    final_agree: int = 0
    final_total: int = 0
    reads_agree: int = 0
    reads_total: int = 0
    reads_unchecked: list[str] = field(default_factory=list)
    static_only: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when kernel and simulator agree everywhere."""
        return not self.mismatches and all(c.agree for c in self.cases)

    def to_json(self) -> dict:
        """The ``kernel_run`` object of ``--format json``."""
        return {"ok": self.ok, "decisions_agree": self.decisions_agree, "decisions_total": self.decisions_total,
                "final_agree": self.final_agree, "final_total": self.final_total,
                "reads_agree": self.reads_agree, "reads_total": self.reads_total,
                "reads_unchecked": self.reads_unchecked[:50], "cases": [c.__dict__ for c in self.cases], "static_only": self.static_only,
                "mismatches": self.mismatches[:50]}


def events_of(sched: Schedule) -> list[tuple[int, int]]:
    """Events ``(edge, phase)`` of a schedule in time order; at equal times ends come first
    (intervals are half-open), then edge id order."""
    ev = [(f, 0, e, 1) for e, (_s, f) in sched.items()] + [(s, 1, e, 0) for e, (s, _f) in sched.items()]
    return [(e, ph) for _t, _k, e, ph in sorted(ev)]


def serialise(sched: Schedule) -> Schedule:
    """The tie-free schedule the kernel runs: every event of ``sched`` moved to its index in
    ``events_of(sched)`` (edge -> ``(start, end)`` in event numbers), so no two events share a
    time and ``events_of`` gives the same order again. Every start-versus-end comparison keeps
    its outcome (at equal times ends come first, as intervals are half-open), so happens-before
    still holds, the same edges overlap and the same writes finish before each read; only ties
    between two starts or two ends are broken, by edge id, exactly as the kernel is driven. The
    simulator then judges the very order the kernel sees: at a tie of a release and a use, the
    one the kernel runs first is the one the simulator sees first (``specs/lowering.md``
    section 8)."""
    out: dict[int, list[int]] = {e: [0, 0] for e in sched}
    for i, (e, ph) in enumerate(events_of(sched)):
        out[e][ph] = i
    return {e: (s, f) for e, (s, f) in out.items()}


def wavefront(sim: Simulator, n: int) -> Schedule:
    """A valid schedule of all ``n`` edges: round ``r`` starts at ``2r`` every edge whose
    predecessors finished in earlier rounds, and ends them at ``2r + 1``. Returns edge ->
    ``(start, end)`` in schedule time units. Requires acyclic HB (``run_proved`` runs it for proved
    policies only)."""
    level: list[int] = [0] * n
    succs: list[list[int]] = [[] for _ in range(n)]
    indeg = [len(sim.preds[e]) for e in range(n)]
    for e in range(n):
        for p in sim.preds[e]:
            succs[p].append(e)
    ready = [e for e in range(n) if indeg[e] == 0]
    while ready:  # Kahn's algorithm: each edge's level is one more than its latest predecessor's
        e = ready.pop()
        for s in succs[e]:
            level[s] = max(level[s], level[e] + 1)
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return {e: (2 * level[e], 2 * level[e] + 1) for e in range(n)}


def _drive(rt: Runtime, events: list[tuple[int, int]], stop_at_refusal: bool) -> list[Decision]:
    """Fire ``events`` in order; with ``stop_at_refusal``, stop after the first refused one."""
    out = []
    for e, ph in events:
        decision = rt.fire(e, ph)
        out.append(decision)
        if stop_at_refusal and decision.decision != "proceed":
            break
    return out


def run_proved(policy: Policy, out_dir: str, report: RunReport) -> None:
    """Drive every edge of a proved policy (lowered into ``out_dir``) in a wavefront HB order and
    compare final states; adds one ``Case`` and the counts to ``report``. Raises ``BpfError``
    when the programs cannot be loaded or run."""
    sim = Simulator(policy)
    n = len(policy.edges)
    sched = serialise(wavefront(sim, n))
    events = events_of(sched)
    with Runtime(out_dir) as rt:
        decisions = _drive(rt, events, stop_at_refusal=False)
        refused = [x for x in decisions if x.decision != "proceed"]
        report.decisions_total += len(decisions)
        report.decisions_agree += len(decisions) - len(refused)
        for x in refused[:20]:
            report.mismatches.append(f"`{policy.edges[x.edge].name}` {'start' if x.phase == 0 else 'end'}: kernel "
                                     f"{x.decision} ({x.reason}), simulator proceeds")
        _compare_final(policy, rt, sim, sched, report)
        check_reads(policy, sim, sched, decisions, slot_bits(rt), report)
    report.cases.append(Case("proved: every edge in happens-before order", len(events), None,
                             refused[0].edge if refused else None, refused[0].decision if refused else "",
                             refused[0].reason if refused else "", not refused))


def _compare_final(policy: Policy, rt: Runtime, sim: Simulator, sched: Schedule, report: RunReport) -> None:
    """Tally the kernel's final owners, counters, edge states and policy maps after ``sched``."""
    n_regions = len(policy.regions)
    devices = rt.manifest["devices"]
    owners = rt.read_u32s("fx_own", n_regions, value_size=struct_size("fx_own"))
    by_region = _handoff_edges(policy, sim, sched)
    for i, r in enumerate(policy.regions):
        want = sim.owners_at(r.name, float("inf"), by_region.get(r.name, []), sched)
        got = devices[owners[i]] if owners[i] < len(devices) else str(owners[i])
        _tally(report, want == {got}, f"final owner of `{r.name}`: kernel `{got}`, simulator {sorted(want)}")
    counters = rt.read_u32s("fx_countdown", len(rt.init["fx_countdown"]["values"]))
    for i, v in enumerate(counters):
        _tally(report, v == 0, f"counter {i} is {v} after every edge finished")
    states = rt.read_u32s("fx_state", len(policy.edges), value_size=struct_size("fx_st"))
    for e, v in enumerate(states):
        _tally(report, v == 2, f"`{policy.edges[e].name}` ends in state {v}, not done")
    for (c_name, key, key_size, value_size, width, slots), want_v in expected_maps(policy, rt, sched).items():
        raw = rt.read_policy_map(c_name, key, key_size, value_size) or bytes(value_size)
        got_v = [int.from_bytes(raw[i * width:(i + 1) * width], "little") for i in range(slots)]
        _tally(report, got_v == want_v, f"policy map `{c_name}`[{key}]: kernel {got_v}, expected {want_v}")


def _tally(report: RunReport, agree: bool, mismatch: str, what: str = "final") -> None:
    """Count one comparison of kind ``what`` (``final``: final state, ``reads``: a plain read's
    value); keep the message when it disagrees."""
    setattr(report, f"{what}_total", getattr(report, f"{what}_total") + 1)
    if agree:
        setattr(report, f"{what}_agree", getattr(report, f"{what}_agree") + 1)
    else:
        report.mismatches.append(mismatch)


def slot_bits(rt: Runtime) -> dict[str, int]:
    """Policy map name -> the width in bits its slots wrap at in the lowering (``maps.json``)."""
    return {m["name"]: 8 * m["value_size"] // max(1, len(m["value_layout"])) for m in _policy_maps(rt)}


def check_reads(policy: Policy, sim: Simulator, sched: Schedule, decisions: list[Decision], bits: dict[str, int],
                report: RunReport) -> None:
    """Check every value a plain read (``map_read``, ``aggregate``) observed in the kernel against
    the values its map's class allows in ``sched`` (``Simulator.read_values``; the rule is in
    ``replay.map_reads``). ``decisions`` are the driven events of ``sched`` with their
    observations; ``bits`` the slot widths (``slot_bits``). At a start that proceeds, the
    ``READ`` and ``AGG`` ops emit one ``FX_OBS_MAP`` each, in the edge's map-operation order
    (``specs/lowering.md`` section 3), so the k-th such record answers the k-th plain read. A
    value outside the allowed set, a record for another map or key, or a missing record is a
    disagreement (FX-BPF-006 upstream); values compare modulo 2^64, the runtime's ``__u64``.
    Adds to ``report``'s ``reads`` counts; never raises."""
    allowed = sim.read_values(sched, bits)
    names = [m.name for m in policy.maps]
    full = (1 << 64) - 1
    for x in decisions:
        if x.phase != 0 or x.decision != "proceed":
            continue
        edge = policy.edges[x.edge]
        reads = [(i, op) for i, op in enumerate(edge.map_ops) if (x.edge, i) in allowed]
        seen = [o for o in x.observations if o.kind == OBS_MAP]
        if len(seen) != len(reads):
            _tally(report, False, f"`{edge.name}` start: kernel reported {len(seen)} map reads, the policy has "
                                  f"{len(reads)}", "reads")
            continue
        for (i, op), o in zip(reads, seen):
            what = f"`{edge.name}` {op.kind.value} `{op.map}`[{op.key or 0}]"
            if o.a != names.index(op.map) or o.c != (op.key or 0):
                got = names[o.a] if o.a < len(names) else str(o.a)
                _tally(report, False, f"{what}: kernel read `{got}`[{o.c}]", "reads")
                continue
            want = allowed[(x.edge, i)]
            if want is None:
                report.reads_unchecked.append(f"{what}: too many concurrent writers to enumerate")
                continue
            legal = sorted({v & full for v in want})
            _tally(report, o.d & full in legal, f"{what}: kernel read {o.d}, its class "
                   f"`{policy.map(op.map).cls.kind.value}` allows only {legal[:8]}", "reads")


def _handoff_edges(policy: Policy, sim: Simulator, sched: Schedule) -> dict[str, list[int]]:
    """Scheduled edges whose handoffs move each region (its own, or an enclosing region's).
    ``Simulator.owners_at`` only looks at those, so giving it these ids gives the same owners
    without a scan of every edge."""
    out: dict[str, list[int]] = {}
    for e in sorted(sched):
        for region in sorted({r for h in policy.edges[e].handoffs for r in sim.moved_with(h.region)}):
            out.setdefault(region, []).append(e)
    return out


def expected_maps(policy: Policy, rt: Runtime, sched: Schedule) -> dict[tuple, list[int]]:
    """Fold every write and update of the schedule, in end-time order (edge id on ties), into the
    value each policy-map entry must hold: ``(c_name, key, key_size, value_size, slot width,
    slots) -> [slot values]``. Values wrap at the slot width, as the BPF atomics do."""
    maps = {m["name"]: m for m in _policy_maps(rt)}
    devices = rt.manifest["devices"]
    out: dict[tuple, list[int]] = {}
    for e in sorted(sched, key=lambda x: (sched[x][1], x)):
        edge = policy.edges[e]
        for op in edge.map_ops:
            m = maps.get(op.map)
            if m is None or op.kind not in (MapOpKind.WRITE, MapOpKind.UPDATE) or m["map_type_name"].endswith("RINGBUF"):
                continue
            slots = len(m["value_layout"])
            width = m["value_size"] // slots
            k = (m["c_name"], op.key or 0, m["key_size"], m["value_size"], width, slots)
            vals = out.setdefault(k, [0] * slots)
            slot = devices.index(edge.device) if policy.map(op.map).cls.kind is ClassKind.PER_DEVICE else 0
            merge = OPERATORS.get(policy.map(op.map).merge or "")
            v = op.value or 0
            if op.kind is MapOpKind.UPDATE and merge is not None and merge.fold is not None:
                v = merge.fold(vals[slot], v)
            vals[slot] = v % (1 << (8 * width))
    return out


def _policy_maps(rt: Runtime) -> list[dict]:
    """The policy maps' rows of the lowering's ``maps.json``."""
    with open(os.path.join(rt.dir, "maps.json"), encoding="utf-8") as fh:
        return [m for m in json.load(fh)["maps"] if m["kind"] == "policy"]


def counterexamples(refutations: list[Refutation]) -> list[tuple[str, tuple[int, ...], Schedule | None]]:
    """The check's refutations as ``(code, edges, witness schedule or None)``, one per (code, edge
    set), in obligation order. The schedule is the witness the check decoded from the solver's
    model; ``None`` for schedule-independent violations. Nothing is solved again."""
    out, seen = [], set()
    for x in refutations:
        key = (x.code, tuple(sorted(x.edges)))
        if key in seen:
            continue
        seen.add(key)
        out.append((x.code, x.edges, dict(x.witness.schedule) if x.witness.schedule else None))
    return out


def _extend(sim: Simulator, sched: Schedule) -> Schedule:
    """Add to ``sched`` every ancestor of its edges that it leaves out: those after none of its
    edges run one after another before time 0; those after one of its edges (an edge on an HB
    path between two witness edges, which the solver scheduled but the witness does not report)
    start as soon as their predecessors finish and last 1 ns. Both keep the schedule valid: the
    first finish before any witness edge starts; the second lie on a path between witness edges,
    so the solver's own times for them, no earlier and no shorter, fit before their successors."""
    missing = _topological(sim, {a for e in sched for a in sim.ancestors(e)} - set(sched))
    # An edge is after a witness edge when one of its predecessors is a witness edge or is after
    # one: the ancestors of the witness edges are closed under predecessors, so one pass in
    # topological order decides every missing edge (linear, where a search per edge was quadratic
    # on a policy of 37k edges).
    after_witness: set[int] = set()
    for m in missing:
        if any(p in sched or p in after_witness for p in sim.preds[m]):
            after_witness.add(m)
    before = [m for m in missing if m not in after_witness]
    shift = 2 * len(before)
    out = {a: (2 * i, 2 * i + 1) for i, a in enumerate(before)}
    out.update({e: (s + shift, f + shift) for e, (s, f) in sched.items()})
    for m in missing:
        if m in after_witness:
            start = max(out[p][1] for p in sim.preds[m])
            out[m] = (start, start + 1)
    return out


def _topological(sim: Simulator, ids: set[int]) -> list[int]:
    """``ids`` in an order that respects happens-before (Kahn's algorithm on the induced graph,
    smallest edge id first among the ready ones)."""
    indeg = {e: sum(1 for p in sim.preds[e] if p in ids) for e in ids}
    succs: dict[int, list[int]] = {e: [] for e in ids}
    for e in ids:
        for p in sim.preds[e]:
            if p in ids:
                succs[p].append(e)
    ready = [e for e, n in indeg.items() if n == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        e = heapq.heappop(ready)
        out.append(e)
        for s in succs[e]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, s)
    return out


#: Extended schedules up to this many edges are simulated whole; longer ones only in the part
#: ``_simulated_part`` keeps (``specs/lowering.md`` section 8).
WHOLE_SCHEDULE_EDGES = 300


def _simulated_part(full: Schedule, witness: Schedule, uses: dict[str, list[int]]) -> Schedule:
    """The part of the extended schedule ``full`` the simulator runs: all of it when it is small;
    otherwise the witness plus the ancestors that touch, hand off, lease or release a region the
    witness uses (the owners, leases and users its rules read; ``uses`` is ``_region_users`` of
    the policy). Other ancestors only finish earlier on unrelated regions; the kernel still runs
    every one of them."""
    if len(full) <= WHOLE_SCHEDULE_EDGES:
        return full
    used = {r for r, es in uses.items() if any(e in witness for e in es)}
    keep = set(witness) | {e for r in used for e in uses[r] if e in full}
    return {e: full[e] for e in sorted(keep)}


def _region_users(policy: Policy) -> dict[str, list[int]]:
    """Region -> the edges that touch, hand off, lease or release it (``graph.by_region_uses``
    plus the releases): what ``_simulated_part`` keeps of a long schedule."""
    uses = by_region_uses(policy)
    for e in policy.edges:
        for x in e.releases:
            uses.setdefault(x.region, []).append(e.eid)
    return uses


def _sim_step(sim: Simulator, sched: Schedule, events: list[tuple[int, int]]) -> tuple[int | None, str]:
    """Index in ``events`` of the earliest event the simulator flags when it runs ``sched`` (a
    sub-schedule of the driven one, at the same times). A violation with a time shows
    at the last start, among its edges, at that time: the event after which every condition of
    the violation holds (as the trace marks it: ``trace._violating_index``)."""
    best, why = None, ""
    index = {ev: i for i, ev in enumerate(events)}
    for v in sim.run(sched):
        if v.time is None or _proof_only_violation(v):
            continue
        at = [index[(e, 0)] for e in v.edges if e in sched and sched[e][0] == v.time]
        if at and (best is None or max(at) < best):
            best, why = max(at), v.code
    return best, why


def _proof_only_violation(v: Violation) -> bool:
    """True when the simulator's ``v`` comes from a ``PROOF_ONLY`` rule (its ``rule`` tag:
    ``defined``, ``intent``, ``stale-checksum``, ``persist``); the reduce-race FX-XF-004 and the chain rule
    of FX-XF-002 keep their runtime comparison."""
    return v.rule in ("defined", "intent", "stale-checksum", "persist")


def run_refuted(policy: Policy, out_dir: str, refutations: list[Refutation], report: RunReport) -> None:
    """Drive each counterexample of a refuted policy (lowered into ``out_dir``; the check's
    ``refutations``) and compare the flagged step; adds one ``Case`` per counterexample (or a
    ``static_only`` line) and the counts to ``report``. Raises ``BpfError`` when the programs
    cannot be loaded or run."""
    sim = Simulator(policy)
    for x in refutations:
        what = proof_only(x)
        if what is not None:
            name = f"{x.code} on {', '.join('`' + policy.edges[e].name + '`' for e in x.edges)}"
            report.static_only.append(f"{name}: {what} has no runtime guard; the proof enforces it")
    cases = counterexamples([x for x in refutations if proof_only(x) is None])
    static_seen: set[tuple[str, tuple[int, ...]]] = set()
    files: tuple[dict, dict] | None = None
    uses: dict[str, list[int]] = {}
    for code, edges, sched in cases:
        name = f"{code} on {', '.join('`' + policy.edges[e].name + '`' for e in edges) or 'the policy'}"
        if code is codes.ORD_001:
            report.static_only.append(f"{name}: no schedule exists (cyclic happens-before)")
            continue
        if sched is None:
            if code not in RUNTIME_STATIC or not edges:
                report.static_only.append(f"{name}: holds in every schedule, enforced by the proof, not at runtime")
                continue
            if (code, edges) in static_seen:
                continue
            static_seen.add((code, edges))
            target = edges[0]
            full = serialise(_extend(sim, {target: (0, 1)}))
            events = events_of(full)
            sim_step: int | None = events.index((target, 0))
            why = code
        else:
            if sim.check_schedule(sched) is not None:
                report.mismatches.append(f"{name}: the witness schedule is not a valid schedule")
                continue
            full = serialise(_extend(sim, sched))
            events = events_of(full)
            uses = uses or _region_users(policy)  # built once, for the first long counterexample
            sim_step, why = _sim_step(sim, _simulated_part(full, sched, uses), events)
        files = files or lowering_files(out_dir)  # read once, loaded afresh for each counterexample
        with Runtime(out_dir, files=files) as rt:
            decisions = _drive(rt, events, stop_at_refusal=True)
            check_reads(policy, sim, full, decisions, slot_bits(rt), report)
            kstep = next((i for i, x in enumerate(decisions) if x.decision != "proceed"), None)
            if code is codes.OWN_005 and sim_step is None and kstep is None:
                agree = _final_owners_equal(policy, rt, sim, full)
                case = Case(name, len(events), None, None, "", "", agree, "final owners equal the simulator's"
                            if agree else "final owners differ from the simulator's")
            else:
                x = decisions[kstep] if kstep is not None else None
                agree = kstep == sim_step
                case = Case(name, len(events), sim_step, kstep, x.decision if x else "", x.reason if x else "", agree,
                            f"simulator flags {why or 'nothing'}")
        report.cases.append(case)
        report.decisions_total += len(decisions)
        report.decisions_agree += sum(1 for i, x in enumerate(decisions)
                                      if (x.decision != "proceed") == (i == sim_step))
        if not case.agree:
            report.mismatches.append(f"{name}: simulator flags event {sim_step}, kernel refuses event {kstep}")


def _final_owners_equal(policy: Policy, rt: Runtime, sim: Simulator, sched: Schedule) -> bool:
    """FX-OWN-005 witnesses end normally (the violation is about the final state, not a step):
    kernel and simulator agree when the kernel's owner map holds, for every region, the one final
    owner the simulator computes for the driven schedule."""
    devices = rt.manifest["devices"]
    owners = rt.read_u32s("fx_own", len(policy.regions), value_size=struct_size("fx_own"))
    by_region = _handoff_edges(policy, sim, sched)
    return all(sim.owners_at(r.name, float("inf"), by_region.get(r.name, []), sched) == {devices[owners[i]]}
               for i, r in enumerate(policy.regions))
