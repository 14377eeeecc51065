"""Plan the lowering of one policy: edge descriptors, runtime-guard operations and map contents.

Takes a resolved ``ir.Policy`` (proved, or explicitly allowed unproved) and a target name;
produces a ``Plan`` that the C emitter, the artifact writer and the kernel runner all read. The
programs are data-driven (BRIEF section 7): one program per declared hook, and every edge is a row
of the ``fx_edges`` map with a slice of the ``fx_ops`` map, so a 53k-edge policy still has one
small program per hook.

The operations mirror the proved obligations (``specs/lowering.md`` section 3):
- ``WAIT`` on the edge's predecessor-completion counter (happens-before, BRIEF section 2);
- ``BOUNDS`` of every footprint against its region (FX-ALIAS-003);
- ``OWN`` of every governing region: released, in transit, owner or lease (FX-OWN-001/002/004);
- ``HANDOFF``/``LEASE``/``RELEASE`` (FX-OWN-003/004), with a users-left counter per release; a
  handoff also moves every region inside the handed-off one (``HANDOFF_ENCLOSED``);
- ``REVOKE`` clears the lessee's lease bit of the revoked region and of every region inside it at
  the edge's start (FX-OWN-001: the lessee's later reads are denied; the revoker's ownership is
  its ``OWN`` op's check);
- ``MAPHOME``/``GUARD``/``STARTED``/``AGG``/``CONST`` map-class rules (FX-MAP-001/003/004/005);
- ``POSTED`` visibility of writes over ``posted`` links: a later flush must have started after
  the write finished (FX-ORD-003); ``FLUSH`` publishes that at its end;
- ``ACCUM``/``READBY``: a write over accumulated bytes needs a reader of them in between
  (FX-XF-004, lost accumulation): a covering reader that starts after the reduction ended clears
  the pair's flag in ``fx_flags`` at its end, and the writer defers while the flag is set;
- ``RUNNING`` watches (computed in ``watches``) of conflicting edges that happens-before does not order (FX-ORD-002,
  FX-XF-004, FX-MAP-002). A proved policy has none: those obligations say every such pair is
  ordered, so the watches are only computed for ``--allow-unproved`` lowerings;
- ``DEC`` of successor and users-left counters, ``UPDATE``/``WRITE`` of policy maps at the end.

Codes emitted: FX-BPF-002 (class not realisable), FX-BPF-003 (layout limit; block lifetimes, cache
write-backs and invalidates, unproved notifications, which the runtime does not realise, and a
hook bound to a CUDA kernel whose edges happens-before does not order one after another).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.graph import PolicyGraph
from fxverify.ir import MapDecl, MapOpKind, Policy
from fxverify.lower.targets import (
    MapRealisation, Section, Unrealisable, c_ident, device_programs, hook_programs, realise_map,
)
from fxverify.lower.watches import accumulation_watches, conflict_watches, posted_watches
from fxverify.obligations.base import Context
from fxverify.obligations.maps import CONST_REFUSES
from fxverify.source import NO_SPAN, Span
from fxverify.vocab import ClassKind

#: Operation kinds, in the order of their values in ``struct fx_op.kind`` of the emitted C and in
#: ``manifest.json`` ``abi.op_kinds`` (the op table of ``specs/lowering.md`` section 3).
OP_KINDS: tuple[str, ...] = (
    "NONE", "WAIT", "BOUNDS", "RUNNING", "STARTED", "OWN", "HANDOFF", "LEASE", "RELEASE", "DEC",
    "MAPHOME", "GUARD", "AGG", "UPDATE", "WRITE", "READ", "FLUSH", "POSTED", "ACCUM", "READBY", "REVOKE",
    "CONST",
)
#: Operation kind -> its value in ``struct fx_op.kind``.
OP_KIND: dict[str, int] = {name: i for i, name in enumerate(OP_KINDS)}

#: Reasons a program defers or denies, in the order of their values in ``struct fx_event.reason``
#: and ``manifest.json`` ``abi.reasons`` (``specs/lowering.md`` section 3, "The event"). ``hb`` is a
#: predecessor that has not finished yet; ``guard`` a guard value not yet equal to its expectation;
#: ``internal`` a table lookup that failed (a bug, never a policy verdict); ``no-descriptor`` an
#: edge whose descriptor row is empty or longer than any planned slice (the tables were never
#: filled, or hold another policy's rows: the program fails closed); ``malformed`` a frame sent to
#: the event port without a whole event (dputime); ``untracked`` a CUDA call or launch bpftime
#: cannot follow: its binding's edges are used up, no slot is free to wait for its
#: synchronisation, or the call failed.
REASONS: tuple[str, ...] = (
    "none", "hb", "guard", "internal", codes.HOOK_002, codes.ALIAS_003, codes.ORD_002, codes.XF_004,
    codes.MAP_002, codes.OWN_001, codes.OWN_002, codes.OWN_003, codes.OWN_004, codes.MAP_001,
    codes.MAP_003, codes.MAP_004, codes.ORD_003, codes.MAP_005, "no-descriptor", "malformed", "untracked",
)
#: Reason -> its value in ``struct fx_event.reason``.
REASON_ID: dict[str, int] = {name: i for i, name in enumerate(REASONS)}

#: A program's decisions, in the order of their values (``struct fx_event.decision`` and the return
#: value; ``specs/lowering.md`` section 3).
DECISIONS: tuple[str, ...] = ("proceed", "defer", "deny")

#: Flag bits of an ``OWN`` operation's ``b`` operand (``specs/lowering.md`` section 3, ``OWN`` row):
#: the edge writes the region, so a lease does not suffice (FX-OWN-001).
OWN_WRITES = 1
#: The edge hands the region off itself; FX-OWN-003 checks the handoff instead of the owner.
OWN_SKIP_OWNER = 2
#: ``HANDOFF`` flag (operand ``d``): the region moves because an enclosing region is handed off
#: (``specs/obligations.md`` section 1), so its own owner is not checked, only transit and users.
HANDOFF_ENCLOSED = 1
#: ``HANDOFF`` flag: the edge's clauses hand this region to two owners (FX-OWN-003, schedule-free),
#: so the edge is denied at its start.
HANDOFF_SPLIT = 2
#: ``RELEASE`` flag (operand ``d``): the edge releases this region twice (FX-OWN-004), so it is
#: denied at its start.
RELEASE_TWICE = 1
#: ``LEASE`` flag (operand ``d``): the lease covers this region because it lies inside the leased
#: one; the grantor's ownership is checked on the leased region's own op, and the lease lends this
#: region only if the grantor owns it (a lease lends only what its grantor owns: specs/obligations.md
#: section 1; specs/lowering.md gives the moment the runtime tests it).
LEASE_ENCLOSED = 1
#: ``LEASE`` flag (operand ``d``): the granting edge hands this region off, so the lease is void (a
#: lease ends at a handoff of its region, its own edge's included): checked, never granted.
LEASE_VOID = 2

#: Merge operators the emitted C realises with one atomic instruction or a bounded CAS loop
#: (``specs/lowering.md`` sections 2 and 4); any other merge is FX-BPF-003.
MERGES: tuple[str, ...] = ("last", "sum", "add", "count", "max", "min", "and", "or", "xor", "prod")

#: Most devices a lowering takes: lease sets are one u64 bit mask per region (``specs/lowering.md``
#: section 4); more is FX-BPF-003.
MAX_DEVICES = 64
#: Entries of ``fx_trail``, the latest observations in a map bpftool can print (a power of two: the
#: slot is the record count masked with ``TRAIL - 1``; ``specs/lowering.md`` section 5).
TRAIL = 64
#: ``bpf_loop``'s cap on ``nr_loops``, in iterations (``BPF_MAX_LOOPS`` in ``kernel/bpf/bpf_iter.c``).
BPF_MAX_LOOPS = 1 << 23


@dataclass(frozen=True)
class Op:
    """One runtime-guard operation of one edge: ``kind`` (an ``OP_KIND`` value), operands ``a``,
    ``b`` (u32) and ``c``, ``d`` (u64), whose meaning depends on the kind (``specs/lowering.md``
    section 3; for ``BOUNDS``, ``[c, d)`` is the footprint in bytes), the ``reason``
    (a ``REASON_ID`` value) reported when it defers or denies, and the ``.fx`` span it comes from."""

    kind: int
    a: int = 0
    b: int = 0
    reason: int = 0
    c: int = 0
    d: int = 0
    span: Span = NO_SPAN

    def row(self) -> list[int]:
        """The op as the ``fx_ops`` value row ``[kind, a, b, reason, c, d]``."""
        return [self.kind, self.a, self.b, self.reason, self.c, self.d]


@dataclass(frozen=True)
class Program:
    """One program: the hook ``device.hook`` (``device_id`` is the device's index in
    ``Plan.devices``, ``hook_id`` the 0-based index of the hook in the device's hook list; a
    device-level program, such as the end of a CUDA stream synchronisation, has ``hook`` ``""`` and
    ``hook_id`` -1), its C function ``name`` (a ``c_ident``), its ``section`` on the target and the
    device's span. ``stem`` is the object it goes in: ``<device>``, or ``<device>.cuda`` for a
    program that runs inside a CUDA kernel (bpftime)."""

    name: str
    device: str
    device_id: int
    hook: str
    hook_id: int
    section: Section
    span: Span

    @property
    def stem(self) -> str:
        """File stem of the program's object: ``<device>`` or ``<device>.cuda``."""
        return f"{self.device}.cuda" if self.section.side == "gpu" else self.device


@dataclass(frozen=True)
class MapPlan:
    """One policy map on the target: its C identifier ``c_name``, index (``fx_op.a``), key and
    value sizes in bytes (``value_size`` includes every per-device slot), ``slots`` (1, or the
    device count for ``per_device``), the realisation and the devices whose objects declare it."""

    index: int
    decl: MapDecl
    c_name: str
    key_size: int
    value_size: int
    slots: int
    realisation: MapRealisation
    devices: tuple[str, ...]

    @property
    def stems(self) -> tuple[str, ...]:
        """Objects that declare the map: ``<device>`` for each of ``devices``, or ``<device>.cuda``
        for a map in GPU memory (bpftime)."""
        return tuple(f"{d}.cuda" if self.realisation.gpu else d for d in self.devices)


@dataclass
class Plan:
    """Everything the lowering emits, before rendering.

    Tables (one row per entry, in key order): ``edges`` rows ``[device, hook, op_first, op_count]``;
    ``ops`` rows ``Op``; ``regions`` rows ``[base, end]`` in bytes; ``owners`` initial owner device
    ids; ``countdown`` initial counter values (indices ``0..n_edges-1`` are predecessor counts).
    ``countdown_what`` says what each counter past the edges counts; ``flags`` what each
    ``fx_flags`` entry (initially 1) stands for. ``links`` is the number of fabric links (entries
    of ``fx_links``) and ``max_ops`` the longest op slice (ops run per event).

    bpftime only: ``kernels`` maps a GPU ``(device, hook)`` to the CUDA kernel whose probes drive
    it; ``binds`` rows ``[device, hook, handle, first, count]`` bind a hook's calls with one handle
    (0 for a kernel's launches) to the edge ids ``seq[first:first+count]``, in the order the calls
    start them (``fx_bind``, ``fx_seq``; the loader adds the bindings of CUDA calls, whose handles
    exist only at run time).
    """

    policy: Policy
    target: str
    proved: bool
    devices: tuple[str, ...]
    programs: list[Program]
    maps: list[MapPlan]
    edges: list[list[int]] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    regions: list[list[int]] = field(default_factory=list)
    links: int = 0
    owners: list[int] = field(default_factory=list)
    countdown: list[int] = field(default_factory=list)
    countdown_what: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    max_ops: int = 0
    kernels: dict[tuple[str, str], str] = field(default_factory=dict)
    binds: list[list[int]] = field(default_factory=list)
    seq: list[int] = field(default_factory=list)

    def device_id(self, name: str) -> int:
        """Index of device ``name`` in ``devices`` (``fx_edge.device``, ``FX_DEVICE_ID``). Raises
        ``ValueError`` for a name that is not a device of the plan."""
        return self.devices.index(name)

    def programs_of(self, stem: str) -> list[Program]:
        """Programs of the object ``stem`` (``<device>`` or ``<device>.cuda``), in hook
        declaration order, device-level programs last."""
        return [p for p in self.programs if p.stem == stem]

    def maps_of(self, stem: str) -> list[MapPlan]:
        """Policy maps declared in the object ``stem``."""
        return [m for m in self.maps if stem in m.stems]

    def stems(self) -> list[str]:
        """Every object of the lowering: ``<device>`` for each device, in device order, each
        followed by ``<device>.cuda`` when the device has programs inside CUDA kernels."""
        out = []
        for d in self.devices:
            out.append(d)
            if any(p.device == d and p.section.side == "gpu" for p in self.programs):
                out.append(f"{d}.cuda")
        return out

    def max_entries(self, runtime_map: str) -> int:
        """``max_entries`` of the runtime array map ``runtime_map`` (``fx_edges`` .. ``fx_stats``;
        not the ``fx_events`` ring buffer, sized in bytes by ``emit_c.RINGBUF_BYTES``): one entry
        per table row, and at least 1, since the kernel refuses an array map of 0 entries
        (``array_map_alloc_check`` in ``kernel/bpf/arraymap.c``). ``fx_clock`` has 1 entry,
        ``fx_stats`` 4 (``[0]`` counts dropped events, ``[1]`` observations written, the rest are
        reserved) and ``fx_trail`` ``TRAIL``. Raises ``KeyError`` for any other name."""
        rows = {"fx_edges": len(self.edges), "fx_ops": len(self.ops), "fx_regions": len(self.regions),
                "fx_own": len(self.regions), "fx_countdown": len(self.countdown), "fx_state": len(self.edges),
                "fx_links": self.links, "fx_clock": 1, "fx_flags": len(self.flags), "fx_stats": 4,
                "fx_trail": TRAIL}[runtime_map]
        return max(1, rows)


def _storage_bytes(ty: str) -> int:
    """Bytes a key or value of declared type ``ty`` takes in a BPF map: 4 or 8 (BPF atomics are
    32- or 64-bit, so narrower types widen to 4; ``device`` is a u32 device index)."""
    return 8 if ty in ("u64", "i64") else 4


def _bpf_error(code: Code, msg: str, span: Span, help: str) -> Diagnostic:
    """A planning error (FX-BPF-002 or FX-BPF-003) underlining ``span``."""
    return diagnostic(code, msg, span, "here", help=help)


def build_plan(policy: Policy, target: str, proved: bool,
               kernels: dict[tuple[str, str], str] | None = None) -> tuple[Plan | None, list[Diagnostic]]:
    """Plan the lowering of ``policy`` for ``target``.

    ``target`` is one of ``targets.TARGETS``; ``kernels`` (bpftime) maps GPU ``(device, hook)``
    pairs to the CUDA kernel whose entry and exit drive them (the command line checked the names).
    Returns ``(plan, diagnostics)``; ``plan`` is ``None``
    when a diagnostic is an error (FX-BPF-002 for an unrealisable class, FX-BPF-003 for more than
    ``MAX_DEVICES`` devices, a merge outside ``MERGES``, block lifetimes, cancels,
    cache maintenance, a kernel-driven hook whose edges happens-before does not order in a chain,
    or, when not ``proved``, ``notifies`` or a ``noncoherent`` space). ``proved`` says whether the policy's
    obligations all hold; when it does not, conflict watches are computed too. Reports problems as
    diagnostics, never by raising.
    """
    kernels = dict(kernels or {})
    diags: list[Diagnostic] = []
    devices = tuple(d.name for d in policy.devices)
    if len(devices) > MAX_DEVICES:
        diags.append(_bpf_error(codes.BPF_003, f"{len(devices)} devices exceed the lowering limit of {MAX_DEVICES}",
                                policy.devices[MAX_DEVICES].span, "lease sets are 64-bit masks; split the fabric"))
    # The runtime's ownership slot has one release per region and no generation: the lifetimes of
    # reused blocks (specs/obligations.md section 1) are checked, not yet lowered.
    pooled = {r.name for r in policy.regions if r.pooled}
    lifetime = next((a.span for e in policy.edges for a in e.allocs), None) or next(
        (e.span for e in policy.edges if {a.footprint.region for a in e.accesses()} & pooled
         or {x.region for x in (*e.releases, *e.handoffs, *e.leases, *e.revokes)} & pooled), None)
    if lifetime is not None:
        diags.append(_bpf_error(codes.BPF_003, "block lifetimes (`alloc`, `pooled`) have no realisation in the lowered runtime yet",
                                lifetime, "the ownership slot holds one allocation; check the policy, and lower "
                                "one without reused blocks"))
    # A cancel ends a transfer's use of its bytes when it completes; the runtime's completion
    # counters know only finished edges, so no guard can tell a cancelled transfer from a done one.
    cancel = next((c.span for e in policy.edges for c in e.cancels), None)
    if cancel is not None:
        diags.append(_bpf_error(codes.BPF_003, "cancellation (`cancel`) has no realisation in the lowered runtime yet",
                                cancel, "the runtime counts finished edges and cannot tell a cancelled transfer from a "
                                "completed one; check the policy, and lower one without cancels"))
    # Cache maintenance (FX-ORD-005) is an instruction of the host's program, not an event a hook
    # can issue or observe; an early notification (FX-ORD-006) has no guard: a proved policy's
    # WAIT ops already order its transfers before it, an unproved one would run it unchecked.
    cache = next((e.span for e in policy.edges if e.writebacks or e.invalidates), None)
    if cache is not None:
        diags.append(_bpf_error(codes.BPF_003, "cache write-backs and invalidates (`writeback`, `invalidate`) have no "
                                "realisation in the lowered runtime", cache, "hooks cannot flush or invalidate a "
                                "host's cache; check the policy, and lower one without non-coherent sharing"))
    notify = next((e.span for e in policy.edges if e.notifies), None)
    if notify is not None and not proved:
        diags.append(_bpf_error(codes.BPF_003, "an unproved `notifies` has no runtime guard", notify,
                                "prove that every notified transfer happens-before its notification first (FX-ORD-006)"))
    shared = next((s for s in policy.spaces if s.noncoherent), None)
    if shared is not None and cache is None and not proved:
        diags.append(_bpf_error(codes.BPF_003, f"an unproved non-coherent space `{shared.name}` has no runtime guard",
                                shared.span, "no hook sees a host's cache; prove FX-ORD-005 first"))
    maps: list[MapPlan] = []
    users: dict[str, set[str]] = defaultdict(set)
    for e in policy.edges:
        for op in e.map_ops:
            users[op.map].add(e.device)
    for i, m in enumerate(policy.maps):
        try:
            real = realise_map(target, policy, m, frozenset(kernels))
        except Unrealisable as err:
            diags.append(_bpf_error(codes.BPF_002, f"`{m.name}` of class `{m.cls}` cannot be realised on target `{target}`",
                                    m.span, err.reason))
            continue
        if m.merge is not None and m.merge not in MERGES:
            diags.append(_bpf_error(codes.BPF_003, f"merge `{m.merge}` of `{m.name}` has no atomic realisation",
                                    m.span, f"use one of {', '.join(MERGES)}"))
            continue
        slots = len(devices) if m.cls.kind is ClassKind.PER_DEVICE else 1
        home = {str(m.cls.device)} if m.cls.kind is ClassKind.LOCAL else set()
        devs = tuple(d for d in devices if d in users[m.name] | home)
        maps.append(MapPlan(i, m, c_ident("pm_", m.name), 4 if m.map_type == "array" else _storage_bytes(m.key_type),
                            _storage_bytes(m.value_type) * slots, slots, real, devs))
    programs = _programs(policy, target, kernels)
    graph = PolicyGraph(policy)
    for (dev, hook), kernel in sorted(kernels.items()):
        chain = _kernel_chain(policy, graph, dev, hook)
        if chain is None:
            diags.append(_bpf_error(codes.BPF_003, f"the edges driven by `{dev}.{hook}` are not ordered one after "
                                    f"another by happens-before, so the probes of CUDA kernel `{kernel}` cannot tell "
                                    "which edge a launch is", policy.device(dev).span,
                                    f"order them with `after`, or drive `{dev}.{hook}` from host CUDA calls "
                                    "(no --cuda-kernel), whose handles the loader binds"))
    if any(d.is_error for d in diags):
        return None, diags
    plan = Plan(policy, target, proved, devices, programs, maps, kernels=kernels)
    _fill_tables(plan, graph)
    if target == "bpftime":
        for (dev, hook), _kernel in sorted(kernels.items()):
            chain = _kernel_chain(policy, graph, dev, hook) or []
            plan.binds.append([plan.device_id(dev), _hook_id(policy, dev, hook), 0, len(plan.seq), len(chain)])
            plan.seq.extend(chain)
    return plan, diags


#: Role -> suffix of the program's C name after ``fx_<device>__<hook>`` (``targets.Section``).
_ROLE_SUFFIX = {"event": "", "call": "", "kernel-entry": "", "return": "__ret", "kernel-exit": "__exit",
                "stream-in": "cuda_stream_in", "stream-sync": "cuda_stream_sync", "device-sync": "cuda_device_sync"}


def _programs(policy: Policy, target: str, kernels: dict[tuple[str, str], str]) -> list[Program]:
    """Every program of ``policy`` on ``target``: per device, the programs of each hook in
    declaration order (``targets.hook_programs``), then the device-level ones
    (``targets.device_programs``). C names are ``fx_<device>__<hook>`` plus a role suffix, or
    ``fx_<device>__<role>`` for device-level programs, made unique."""
    programs = []
    taken: set[str] = set()

    def unique(name: str, di: int, k: int) -> str:
        if name in taken:  # device `a__b` hook `c` and device `a` hook `b__c` mangle alike
            name = f"{name}_d{di}p{k}"
        taken.add(name)
        return name

    for di, d in enumerate(policy.devices):
        own = {h: k for (dev, h), k in kernels.items() if dev == d.name}
        for hi, h in enumerate(d.hooks):
            for sec in hook_programs(target, policy, d.name, h, own.get(h)):
                name = unique(c_ident("fx_", f"{d.name}__{h}") + _ROLE_SUFFIX[sec.role], di, len(programs))
                programs.append(Program(name, d.name, di, h, hi, sec, d.span))
        for sec in device_programs(target, policy, d.name, own):
            name = unique(c_ident("fx_", f"{d.name}__") + _ROLE_SUFFIX[sec.role], di, len(programs))
            programs.append(Program(name, d.name, di, "", -1, sec, d.span))
    return programs


def _kernel_chain(policy: Policy, graph: PolicyGraph, device: str, hook: str) -> list[int] | None:
    """The edges ``device.hook`` drives, in happens-before order, when happens-before orders them
    one after another (each before the next, so the n-th launch of the kernel is the n-th edge);
    ``None`` when two of them may run in either order, or happens-before is cyclic."""
    ids = [e.eid for e in policy.edges if e.device == device and e.hook == hook]
    if not graph.is_acyclic():
        return None
    ids.sort(key=graph.rank)
    if any(not graph.hb_before(a, b) for a, b in zip(ids, ids[1:])):
        return None
    return ids


def _fill_tables(plan: Plan, graph: PolicyGraph) -> None:
    """Fill ``plan``'s tables: region bounds, owners, counters and each edge's op slice (its start
    ops, then the end ops other edges' plans give it), in edge id order. ``graph`` is the
    policy's ``PolicyGraph``."""
    pol = plan.policy
    ctx = Context(pol, graph)
    n = len(pol.edges)
    region_id = {r.name: i for i, r in enumerate(pol.regions)}
    map_id = {m.decl.name: m.index for m in plan.maps}
    plan.regions = [[r.base, r.end] for r in pol.regions]
    plan.links = len(pol.links)
    plan.owners = [plan.device_id(r.owner) for r in pol.regions]
    plan.countdown = [len(graph.predecessors(e)) for e in range(n)]
    plan.countdown_what = []
    start_ops: dict[int, list[Op]] = defaultdict(list)
    end_ops: dict[int, list[Op]] = defaultdict(list)

    def counter(what: str, initial: int) -> int:
        plan.countdown.append(initial)
        plan.countdown_what.append(what)
        return len(plan.countdown) - 1

    # Release waits: one counter per (releasing edge, region) of the other edges that use it.
    for region, rs in sorted(ctx.releases.items()):
        users = set(ctx.uses.get(region, ())) | set(rs) | set(ctx.true_handoffs(region))
        for r in rs:
            others = sorted(u for u in users if u != r)
            c = counter(f"users of `{region}` before `{pol.edges[r].name}` releases it", len(others))
            rel = next(x for x in pol.edges[r].releases if x.region == region)
            twice = RELEASE_TWICE if sum(1 for x in pol.edges[r].releases if x.region == region) > 1 else 0
            start_ops[r].append(Op(OP_KIND["RELEASE"], region_id[region], 0, REASON_ID[codes.OWN_004], c, twice, rel.span))
            for u in others:
                end_ops[u].append(Op(OP_KIND["DEC"], c, 0, 0, 0, 0, pol.edges[u].span))
    # Aggregates wait for every writer of their key.
    writers: dict[tuple[str, int | None], list[int]] = defaultdict(list)
    for e in pol.edges:
        for op in e.map_ops:
            if op.kind in (MapOpKind.WRITE, MapOpKind.UPDATE) and pol.map(op.map).cls.kind is not ClassKind.CONST:
                writers[(op.map, op.key)].append(e.eid)
    watches = {} if plan.proved else conflict_watches(ctx)
    posted = posted_watches(ctx)
    accum = accumulation_watches(ctx)
    touched = ctx.owner_checks()
    for e in pol.edges:
        ops: list[Op] = [Op(OP_KIND["WAIT"], e.eid, 0, REASON_ID["hb"], 0, 0, e.span)]
        for acc in e.accesses():
            fp = acc.footprint
            ops.append(Op(OP_KIND["BOUNDS"], region_id[fp.region], 0, REASON_ID[codes.ALIAS_003], fp.lo, fp.hi, fp.span))
        for partner, reason in watches.get(e.eid, ()):
            ops.append(Op(OP_KIND["RUNNING"], partner, 0, REASON_ID[reason], 0, 0, e.span))
        for w, link, own_flush in posted.get(e.eid, ()):
            ops.append(Op(OP_KIND["POSTED"], w, link, REASON_ID[codes.ORD_003], own_flush, 0, e.span))
        for r, readers in accum.get(e.eid, ()):
            plan.flags.append(f"`{pol.edges[r].name}`'s accumulation not yet read before `{e.name}` writes")
            flag = len(plan.flags) - 1
            ops.append(Op(OP_KIND["ACCUM"], r, 0, REASON_ID[codes.XF_004], flag, 0, e.span))
            for y in readers:
                end_ops[y].append(Op(OP_KIND["READBY"], r, 0, 0, flag, 0, pol.edges[y].span))
        for region, writes in sorted(touched.get(e.eid, {}).items()):
            flags = (OWN_WRITES if writes else 0) | (
                OWN_SKIP_OWNER if any(h.region == region and h.src == e.device for h in e.handoffs) else 0)
            ops.append(Op(OP_KIND["OWN"], region_id[region], flags, REASON_ID[codes.OWN_001], 0, 0, e.span))
        def split(region: str) -> int:
            return HANDOFF_SPLIT if len({c.dst for c in ctx.clauses_sharing_bytes(e.eid, region)}) > 1 else 0
        for h in e.handoffs:
            ops.append(Op(OP_KIND["HANDOFF"], region_id[h.region], plan.device_id(h.src), REASON_ID[codes.OWN_003],
                          plan.device_id(h.dst), split(h.region), h.span))
            for inner in ctx.moves[h.region][1:]:  # the regions inside it move with it
                ops.append(Op(OP_KIND["HANDOFF"], region_id[inner], plan.device_id(h.src), REASON_ID[codes.OWN_003],
                              plan.device_id(h.dst), HANDOFF_ENCLOSED | split(inner), h.span))
        def void(region: str) -> int:  # the edge hands the region off (Context.handoffs)
            return LEASE_VOID if e.eid in ctx.handoffs.get(region, ()) else 0
        for ls in e.leases:
            ops.append(Op(OP_KIND["LEASE"], region_id[ls.region], plan.device_id(ls.device), REASON_ID[codes.OWN_003],
                          0, void(ls.region), ls.span))
            for inner in ctx.covers[ls.region][1:]:  # the lease covers the regions inside it
                ops.append(Op(OP_KIND["LEASE"], region_id[inner], plan.device_id(ls.device), REASON_ID[codes.OWN_003],
                              0, LEASE_ENCLOSED | void(inner), ls.span))
        for rv in e.revokes:
            for inner in ctx.revoke_covers[rv.region]:  # the region and every region inside it
                ops.append(Op(OP_KIND["REVOKE"], region_id[inner], plan.device_id(rv.device), REASON_ID[codes.OWN_001],
                              0, 0, rv.span))
        ops += start_ops[e.eid]
        for op in e.map_ops:
            if op.map not in map_id:
                continue  # INVARIANT: build_plan stops before this when a map could not be realised
            m = pol.map(op.map)
            key = op.key or 0
            if m.cls.kind is ClassKind.LOCAL:
                ops.append(Op(OP_KIND["MAPHOME"], map_id[op.map], plan.device_id(str(m.cls.device)),
                              REASON_ID[codes.MAP_001], 0, 0, op.span))
            if m.cls.kind is ClassKind.CONST and op.kind in CONST_REFUSES:
                # FX-MAP-005: the map is read-only for programs; the edge is denied, never run.
                ops.append(Op(OP_KIND["CONST"], map_id[op.map], 0, REASON_ID[codes.MAP_005], key, 0, op.span))
            elif op.kind is MapOpKind.GUARD:
                for w in writers.get((op.map, op.key), ()):
                    stale = m.cls.kind is ClassKind.EVENTUAL or (
                        m.cls.kind is ClassKind.CAUSAL and (not graph.is_acyclic() or not graph.hb_before(w, e.eid)))
                    if w != e.eid and stale:
                        ops.append(Op(OP_KIND["STARTED"], w, 0, REASON_ID[codes.MAP_003], 0, 0, op.span))
                ops.append(Op(OP_KIND["GUARD"], map_id[op.map], 0, REASON_ID["guard"], key, op.value or 0, op.span))
            elif op.kind is MapOpKind.AGGREGATE and m.cls.kind is ClassKind.PER_DEVICE:
                ws = [w for w in writers.get((op.map, op.key), ()) if w != e.eid]
                c = counter(f"writers of `{op.map}[{key}]` before `{e.name}` aggregates it", len(ws))
                for w in ws:
                    end_ops[w].append(Op(OP_KIND["DEC"], c, 0, 0, 0, 0, pol.edges[w].span))
                ops.append(Op(OP_KIND["AGG"], map_id[op.map], c, REASON_ID[codes.MAP_004], key, 0, op.span))
            elif op.kind in (MapOpKind.READ, MapOpKind.AGGREGATE):
                # An aggregate of a map without slots is one read: FX-MAP-004 is about per_device.
                ops.append(Op(OP_KIND["READ"], map_id[op.map], 0, 0, key, 0, op.span))
            else:
                kind = OP_KIND["UPDATE"] if op.kind is MapOpKind.UPDATE else OP_KIND["WRITE"]
                ops.append(Op(kind, map_id[op.map], 0, 0, key, op.value or 0, op.span))
        for ln in e.flushes:
            ops.append(Op(OP_KIND["FLUSH"], [x.name for x in pol.links].index(ln), 0, 0, 0, 0, e.span))
        for s in sorted(graph.successors(e.eid)):
            ops.append(Op(OP_KIND["DEC"], s, 0, 0, 0, 0, pol.edges[s].span))
        start_ops[e.eid] = ops
    for e in pol.edges:
        ops = start_ops[e.eid] + end_ops[e.eid]
        plan.edges.append([plan.device_id(e.device), _hook_id(pol, e.device, e.hook), len(plan.ops), len(ops)])
        plan.ops.extend(ops)
        plan.max_ops = max(plan.max_ops, len(ops))


def _hook_id(pol: Policy, device: str, hook: str) -> int:
    """Index of ``hook`` in ``device``'s hook list, or the list's length for an undeclared hook (no
    program has that id, so the edge is denied with FX-HOOK-002 wherever it is delivered)."""
    hooks = pol.device(device).hooks
    return hooks.index(hook) if hook in hooks else len(hooks)
