"""The lowering's own obligations: facts the emitted programs rely on, discharged with Z3.

Takes a ``Plan``; produces ``Fact`` records for ``obligations.json``. Each index fact is one SMT
query "some index the programs derive lies outside ``[0, max_entries)``" over the exact set of
indices the tables contain (compressed into intervals); ``unsat`` proves it. Counter balance and
hash-map capacity are established by counting. What the Linux verifier itself must establish
(memory safety, bounded loops, stack use) is listed per program by ``verifier_obligations``.

Emits no diagnostics; ``driver`` reports each refuted or unknown fact as FX-BPF-007.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fxverify.lower.emit_c import CAS_TRIES
from fxverify.lower.plan import BPF_MAX_LOOPS, MAX_DEVICES, OP_KIND, Plan
from fxverify.smt.backend import Backend, Query, Status
from fxverify.smt.terms import between, int_var, or_
from fxverify.vocab import ClassKind

#: Beyond this many disjoint intervals an index fact is proved over their convex hull (a stronger
#: statement that keeps the SMT query small).
MAX_INTERVALS = 64


@dataclass(frozen=True)
class Fact:
    """One lowering obligation (``specs/lowering.md`` section 6): ``key`` identifies it, ``what``
    states it, ``status`` is ``proved``, ``refuted`` or ``unknown``, ``method`` is ``z3`` or
    ``count``, and ``detail`` gives the figures (index counts, ``max_entries``, a counterexample
    index or the solver's reason for ``unknown``)."""

    key: str
    what: str
    status: str
    method: str
    detail: str = ""


def merge_intervals(slices: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge half-open integer intervals ``[lo, hi)``: returns them sorted, with overlapping and
    touching intervals joined, so they cover exactly the integers ``slices`` covers."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(set(slices)):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _range_query(name: str, spans: list[tuple[int, int]], limit: int) -> Query:
    """The query "some ``k`` in one of ``spans`` (half-open) lies outside ``[0, limit)``": ``unsat``
    proves every index of the spans in range; a model's ``k`` is an index out of range."""
    k = int_var("k")
    member = or_(*(between(k, lo, hi) for lo, hi in spans))
    outside = or_(k < 0, k >= limit)
    return Query(name, ((None, member), ("outside", outside)),
                 header=(f"lowering fact {name}: every index is in [0, {limit})",))


def _index_fact(backend: Backend, key: str, what: str, values: list[int], limit: int) -> Fact:
    """Prove every index in ``values`` lies in ``[0, limit)`` (``limit`` is a ``max_entries``)."""
    return _span_fact(backend, key, what, [(v, v + 1) for v in values], limit)


def _span_fact(backend: Backend, key: str, what: str, slices: list[tuple[int, int]], limit: int) -> Fact:
    """Prove every integer of the half-open ``slices`` lies in ``[0, limit)``: a ``Fact`` proved by
    counting when there is no index, else by one ``backend`` query."""
    if not slices:
        return Fact(key, what, "proved", "count", "no index is derived")
    spans = merge_intervals(slices)
    hull = len(spans) > MAX_INTERVALS
    if hull:
        # Proving the convex hull in range proves every index in it; it keeps the query small.
        spans = [(spans[0][0], spans[-1][1])]
    res = backend.check(_range_query(key, spans, limit))
    status = {Status.UNSAT: "proved", Status.SAT: "refuted", Status.UNKNOWN: "unknown"}[res.status]
    detail = (f"{sum(hi - lo for lo, hi in spans)} indices in {len(spans)} interval(s)"
              f"{' (convex hull of the index set)' if hull else ''}, max_entries {limit}")
    if res.status is Status.SAT:
        detail += f"; index {res.model.get('k')} is out of range"
    elif res.status is Status.UNKNOWN:
        detail += f"; {res.reason}"
    return Fact(key, what, status, "z3", detail)


def discharge_facts(plan: Plan, backend: Backend) -> list[Fact]:
    """Discharge every lowering fact of ``plan`` (deterministic order).

    Index facts (``z3``): edge ids against ``fx_edges``/``fx_state``, op slices against ``fx_ops``,
    counter, region and state indices named by ops, policy-map keys against ``max_entries``,
    per-device slot indices, lease bits, ``bpf_loop`` trip counts against ``BPF_MAX_LOOPS``.
    Counting facts: every counter starts at the number of ``DEC`` ops that target it, and every
    hash map has room for its distinct keys. Returns one ``Fact`` per obligation; never raises for
    solver trouble (``Backend.check`` makes it an ``unknown`` fact).
    """
    ops = plan.ops
    n_edges = len(plan.edges)
    by_kind: dict[int, list] = {}
    for op in ops:
        by_kind.setdefault(op.kind, []).append(op)

    def operands(*kinds: str, field: str = "a") -> list[int]:
        """Operand ``field`` of every op of the given kinds (``OP_KINDS`` names)."""
        return [int(getattr(op, field)) for kd in kinds for op in by_kind.get(OP_KIND[kd], ())]

    facts = [
        _index_fact(backend, "edge-ids", "every edge id a hook passes is below fx_edges.max_entries",
                    list(range(n_edges)), plan.max_entries("fx_edges")),
        _span_fact(backend, "op-slices", "every fx_ops index op_first + i (i < op_count) is below fx_ops.max_entries",
                   [(first, first + count) for _d, _h, first, count in plan.edges if count],
                   plan.max_entries("fx_ops")),
        _index_fact(backend, "counter-ids", "every counter index of WAIT, DEC, RELEASE and AGG is below fx_countdown.max_entries",
                    operands("WAIT", "DEC") + operands("RELEASE", field="c") + operands("AGG", field="b"),
                    plan.max_entries("fx_countdown")),
        _index_fact(backend, "state-ids", "every edge id watched by RUNNING, STARTED, POSTED, ACCUM and READBY is below "
                    "fx_state.max_entries", operands("RUNNING", "STARTED", "POSTED", "ACCUM", "READBY"),
                    plan.max_entries("fx_state")),
        _index_fact(backend, "flag-ids", "every flag index of ACCUM and READBY is below fx_flags.max_entries",
                    operands("ACCUM", "READBY", field="c"), plan.max_entries("fx_flags")),
        _index_fact(backend, "link-ids", "every link index of POSTED and FLUSH is below fx_links.max_entries",
                    operands("POSTED", field="b") + operands("FLUSH"), plan.max_entries("fx_links")),
        _index_fact(backend, "region-ids", "every region index of BOUNDS, OWN, HANDOFF, LEASE and RELEASE is below fx_own.max_entries",
                    operands("BOUNDS", "OWN", "HANDOFF", "LEASE", "RELEASE"), plan.max_entries("fx_own")),
        _index_fact(backend, "lease-bits", "every leasing device id is a bit of the 64-bit lease mask",
                    operands("LEASE", field="b") + list(range(len(plan.devices))), MAX_DEVICES),
        _index_fact(backend, "loop-bounds", "every bpf_loop trip count (op_count) is at most BPF_MAX_LOOPS",
                    [count for *_x, count in plan.edges], BPF_MAX_LOOPS + 1),
    ]
    for m in plan.maps:
        keys = [op.key or 0 for e in plan.policy.edges for op in e.map_ops if op.map == m.decl.name]
        if m.decl.map_type == "array":
            facts.append(_index_fact(backend, f"keys:{m.decl.name}",
                                     f"every key of `{m.decl.name}` is below its max_entries", keys, m.decl.max_entries))
        elif m.decl.map_type == "hash":
            distinct = len(set(keys))
            ok = distinct <= m.decl.max_entries
            facts.append(Fact(f"keys:{m.decl.name}", f"`{m.decl.name}` has room for every distinct key",
                              "proved" if ok else "refuted", "count", f"{distinct} distinct keys, max_entries {m.decl.max_entries}"))
            facts.append(_index_fact(backend, f"key-width:{m.decl.name}", f"every key of `{m.decl.name}` fits its key type",
                                     keys, 1 << (8 * m.key_size)))
        if m.decl.cls.kind is ClassKind.PER_DEVICE:
            slots = [plan.device_id(e.device) for e in plan.policy.edges for op in e.map_ops if op.map == m.decl.name]
            facts.append(_index_fact(backend, f"slots:{m.decl.name}",
                                     f"every device slot of `{m.decl.name}` exists", slots, m.slots))
    decs = Counter(op.a for op in by_kind.get(OP_KIND["DEC"], ()))
    bad = [i for i, init in enumerate(plan.countdown) if decs.get(i, 0) != init]
    facts.append(Fact("counter-balance", "every counter starts at the number of DEC operations that target it, "
                      "so it reaches zero exactly when every awaited edge has finished",
                      "refuted" if bad else "proved", "count",
                      f"{len(plan.countdown)} counters" + (f"; counter {bad[0]} is unbalanced" if bad else "")))
    return facts


def verifier_obligations(plan: Plan) -> list[dict]:
    """What the Linux verifier must establish for every program (checked at BPF_PROG_LOAD), as
    ``obligations.json`` rows ``{"key", "what", "established_by"[, "see"]}``. The rules are the
    kernel's (``Documentation/bpf/verifier.rst``; the 512-byte stack is ``MAX_BPF_STACK`` in
    ``include/linux/filter.h``); the merge CAS bound is ``emit_c.CAS_TRIES``."""
    return [
        {"key": "memory-safety", "what": "every map value, stack and context access is in bounds and every "
         "lookup result is NULL-checked before use", "established_by": "linux-verifier"},
        {"key": "bounded-loops", "what": ("the op interpreter runs under bpf_loop (callback verified once); "
                                          if plan.target != "bpftime" else
                                          f"the op interpreter's loop is bounded by the longest slice ({plan.max_ops} ops; "
                                          "bpftime has no bpf_loop); ")
         + f"merge CAS loops are bounded by {CAS_TRIES} iterations",
         "established_by": "linux-verifier" if plan.target != "bpftime" else "fxverify", "see": "loop-bounds"},
        {"key": "stack", "what": "stack use of each program and callback is at most 512 bytes (MAX_BPF_STACK)",
         "established_by": "linux-verifier"},
        {"key": "map-keys", "what": "map keys are stack or map-value memory of the map's key size",
         "established_by": "linux-verifier"},
        {"key": "termination", "what": f"at most {plan.max_ops} ops per event (the longest fx_ops slice)",
         "established_by": "fxverify", "see": "loop-bounds"},
    ]
