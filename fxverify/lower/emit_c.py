"""Emit libbpf-style restricted C for one object of a ``Plan``.

Takes a ``Plan``, an object stem (``<device>``, or ``<device>.cuda`` for a bpftime device's
programs inside CUDA kernels) and (optionally) the ``SourceMap`` of the policy; produces a
``CFile``: the text of ``<stem>.bpf.c`` and its source map (C line -> ``.fx`` span or runtime
role). The C holds BTF-defined maps and the object's programs; every program runs the same
data-driven interpreter of ``fx_ops`` rows (``specs/lowering.md`` section 3), iterated with
``bpf_loop`` in the kernel, so the verifier's work does not grow with the number of edges, and with
a loop bounded by the longest slice on bpftime, which has no ``bpf_loop``.

The fixed part of the runtime lives in C files shipped next to this module (``c/``, see
``c/README.md``) and is spliced into every emitted file verbatim, without substitutions:
``fx_structs.h`` (the runtime structs), ``fx_helpers.h`` (event, counter and clock helpers),
``fx_interp.c`` (``fx_exec``, ``fx_step``, ``fx_run``) and, where a program needs them,
``fx_packet.c`` (event frames of dputime XDP and tc programs), ``fx_cuda.c`` with
``fx_cuda_host.c`` (CUDA calls on bpftime's host side) or ``fx_cuda_kernel.c`` (programs inside
a CUDA kernel). This module writes what depends on the plan and the target around them: the
``#define``s of the ABI and of the target (``FX_OUTPUT``, ``FX_LOOP``), the maps, the policy-map
accessors and the entry functions. Policy identifiers only reach the C mangled by
``targets.c_ident``, and policy text only inside ``//`` comments escaped by ``comment_text``, so
they cannot inject code.

Emits no diagnostics (a C file clang rejects is FX-BPF-005 in ``driver``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from fxverify import __version__
from fxverify.lower.plan import (
    DECISIONS, HANDOFF_ENCLOSED, HANDOFF_SPLIT, LEASE_ENCLOSED, LEASE_VOID, OP_KIND, OP_KINDS, OWN_SKIP_OWNER, OWN_WRITES, REASON_ID, REASONS,
    RELEASE_TWICE, TRAIL, MapPlan, Plan, Program,
)
from fxverify.lower.targets import (
    ACTIONS, BPF_F_RDONLY_PROG, BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_RINGBUF, BPFTIME_GPU_ARRAY, BPFTIME_GPU_RINGBUF, CUDA_CALLS,
    FX_UDP_PORT, MAP_TYPE_NAMES,
)
from fxverify.source import NO_SPAN, SourceMap, Span
from fxverify.vocab import ClassKind

#: Size of every device's ``fx_events`` ring buffer in bytes: 256 KiB. The kernel requires a
#: power-of-two multiple of the page size (``ringbuf_map_alloc`` in ``kernel/bpf/ringbuf.c``).
RINGBUF_BYTES = 1 << 18
#: Bound on the compare-and-swap retries of a ``max``/``min``/``prod`` merge; a merge that runs out
#: reports an internal refusal, never a lost update (``specs/lowering.md`` section 2).
CAS_TRIES = 8
#: Kernel map types are below this; bpftime's runtime-specific types (``targets``) are above it.
_RUNTIME_MAP_TYPES = 1000
#: Slots of a bpftime GPU device's ``fx_pending``: asynchronous CUDA calls that may wait for a
#: synchronisation at once. A call beyond them is refused (untracked), never started unseen.
PENDING = 64
#: Records of each GPU thread's buffer in a bpftime GPU ring buffer (``fx_gpu_events``).
GPU_EVENTS = 16
#: Host threads that may be inside a probed synchronous CUDA call or a synchronisation at once
#: (entries of ``fx_inflight`` and ``fx_syncing``).
THREADS = 4096


@cache
def _runtime_c(name: str) -> str:
    """The text of the runtime C file ``c/<name>`` (``fx_structs.h``, ``fx_helpers.h`` or
    ``fx_interp.c``), read from the package data with ``importlib.resources``; every line ends
    with a newline. Raises ``FileNotFoundError`` when the installation lacks the file (package
    data missing from the wheel: ``[tool.setuptools.package-data]`` in ``pyproject.toml``)."""
    return (resources.files("fxverify.lower") / "c" / name).read_text(encoding="ascii")


def comment_text(text: str) -> str:
    """Make ``text`` safe inside a ``//`` comment: printable ASCII except backslash stays, anything
    else (newlines, backslashes that would splice lines, non-ASCII) becomes ``<U+XXXX>``, and
    ``??`` is split so no trigraph can form (C11 5.1.1.2 translation phases 1-2). Returns the
    escaped text; never raises."""
    out = []
    for ch in text:
        if " " <= ch <= "~" and ch != "\\":
            out.append(ch)
        else:
            out.append(f"<U+{ord(ch):04X}>")
    return "".join(out).replace("??", "? ?")


@dataclass
class SourceMapLine:
    """One mapped C line: 1-based ``line``; ``span`` into the policy (or ``NO_SPAN`` for runtime
    code) and ``what`` the line is (``map m``, ``hook gpu0.launch``, ``fxverify runtime: ...``)."""

    line: int
    span: Span
    what: str


@dataclass
class CFile:
    """The emitted C of one object: its ``stem`` (``<device>`` or ``<device>.cuda``; the file is
    ``<stem>.bpf.c``), ``text`` (ASCII, ends with a newline) and ``lines``, its source map in C
    line order."""

    stem: str
    text: str
    lines: list[SourceMapLine] = field(default_factory=list)


class _Emitter:
    """Collects the lines of one C file and its source map. Called with a block of text (one or
    more lines) and, for mapped lines, ``what`` they are: with a ``span`` every line of the block
    is mapped to it, without one only the block's first line is (runtime code)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.map: list[SourceMapLine] = []

    def __call__(self, text: str = "", span: Span | None = None, what: str | None = None) -> None:
        for i, line in enumerate(text.split("\n")):
            self.lines.append(line)
            if what is not None and (i == 0 or span is not None):
                self.map.append(SourceMapLine(len(self.lines), span or NO_SPAN, what))


def _map_type_expr(map_type: int) -> str:
    """The ``__uint(type, ...)`` value: the ``BPF_MAP_TYPE_*`` name for kernel map types (defined
    by ``linux/bpf.h``), the number with its name in a comment for runtime-specific types such as
    bpftime's GPU maps, which no kernel header defines."""
    name = MAP_TYPE_NAMES[map_type]
    return name if map_type < _RUNTIME_MAP_TYPES else f"{map_type} /* {name} */"


def _slot_ctype(m: MapPlan) -> str:
    """C type of one value slot of policy map ``m``: ``__u64`` for 8-byte slots, else ``__u32``."""
    return "__u64" if m.value_size // m.slots == 8 else "__u32"


def _key_ctype(m: MapPlan) -> str:
    """C type of the key of policy map ``m``: ``__u64`` for 8-byte keys, else ``__u32``."""
    return "__u64" if m.key_size == 8 else "__u32"


def is_ringbuf(m: MapPlan) -> bool:
    """True when policy map ``m`` is realised as a ring buffer (kernel's or bpftime's GPU one)."""
    return m.realisation.map_type in (BPF_MAP_TYPE_RINGBUF, BPFTIME_GPU_RINGBUF)


def ringbuf_bytes(m: MapPlan) -> int:
    """Bytes of a policy ring buffer: room for ``max_entries`` 16-byte ``{key, value}`` records,
    at least one 4 KiB page, rounded up to a power of two (the kernel's ring buffer rule)."""
    want = max(4096, m.decl.max_entries * 16)
    size = 4096
    while size < want:
        size <<= 1
    return size


def emit_device(plan: Plan, stem: str, sources: SourceMap | None = None) -> CFile:
    """Return the C file of the object ``stem`` (one of ``plan.stems()``): header and ABI
    ``#define``s, runtime structs and maps, the object's policy maps, the runtime helpers, the
    policy-map accessors, the op interpreter, the target's runtime part (frames, CUDA calls or
    kernels), descriptor comments and one entry function per program.

    With ``sources``, each descriptor comment quotes the first line of its ``.fx`` statement
    (escaped). Deterministic for a given plan. Raises ``ValueError`` when ``stem`` names no device
    of the plan."""
    emit = _Emitter()
    device = stem.removesuffix(".cuda")
    plan.device_id(device)  # raises ValueError for a stem of no device
    programs = plan.programs_of(stem)
    gpu = stem.endswith(".cuda")
    kinds = {p.section.kind for p in programs}
    roles = {p.section.role for p in programs}
    maps = plan.maps_of(stem)
    _emit_header(emit, plan, stem, programs)
    emit(_runtime_c("fx_structs.h"))
    _emit_runtime_maps(emit, plan, stem)
    if roles & {"call", "kernel-entry"}:
        _emit_cuda_maps(emit, plan, stem, programs)
    _emit_policy_maps(emit, plan, maps)
    emit(_runtime_c("fx_helpers.h"), what="fxverify runtime: helpers")
    _emit_map_read(emit, maps)
    _emit_map_apply(emit, maps)
    emit(_runtime_c("fx_interp.c"), what="fxverify runtime: op interpreter")
    if kinds & {"xdp", "tc"}:
        emit(_runtime_c("fx_packet.c"), what="fxverify runtime: event frames")
    if roles & {"call", "kernel-entry"}:
        emit(_runtime_c("fx_cuda.c"), what="fxverify runtime: CUDA bindings")
    if "call" in roles:
        emit(_runtime_c("fx_cuda_host.c"), what="fxverify runtime: CUDA calls")
    if gpu:
        emit(_runtime_c("fx_cuda_kernel.c"), what="fxverify runtime: CUDA kernels")
    _emit_descriptor_comments(emit, plan, device, sources)
    _emit_programs(emit, plan, programs)
    emit('char LICENSE[] SEC("license") = "Dual BSD/GPL";')
    return CFile(stem, "\n".join(emit.lines) + "\n", emit.map)


def _emit_header(emit: _Emitter, plan: Plan, stem: str, programs: list[Program]) -> None:
    """The licence, the proof stamp, the includes and the ABI constants: decisions, op kinds and
    reasons (the indices ``manifest.json`` ``abi`` lists), modes, edge states, observation kinds
    and ``OWN`` flags; then the target's: how observations are published (``FX_OUTPUT``), how the
    op slice is iterated (``FX_LOOP``), the event port of frames and the CUDA limits."""
    pol = plan.policy
    device = stem.removesuffix(".cuda")
    kinds = {p.section.kind for p in programs}
    gpu = stem.endswith(".cuda")
    stamp = "PROVED" if plan.proved else "UNPROVED (lowered with --allow-unproved; not for deployment)"
    emit("// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)")
    emit(f"// Generated by fxverify {__version__}; do not edit. Target: {plan.target}. Policy: {stamp}.")
    emit(f"// Policy `{comment_text(pol.name)}`, device `{comment_text(device)}`"
         + (", programs inside CUDA kernels." if gpu else "."), pol.span, "policy")
    emit("// Edges are rows of fx_edges with op slices in fx_ops (specs/lowering.md); programs are listed at the end.")
    emit("#include <linux/bpf.h>")
    if kinds & {"xdp", "tc"}:
        emit("#include <linux/if_ether.h>\n#include <linux/in.h>\n#include <linux/ip.h>\n#include <linux/ipv6.h>\n"
             "#include <linux/udp.h>\n#include <linux/pkt_cls.h>")
    emit("#include <bpf/bpf_helpers.h>")
    if kinds & {"xdp", "tc"}:
        emit("#include <bpf/bpf_endian.h>")
    if kinds & {"uprobe", "uretprobe"}:
        emit("#include <linux/ptrace.h>\n#include <bpf/bpf_tracing.h>")
    emit("")
    emit(f"#define FX_DEVICE_ID {plan.device_id(device)}u")
    for i, name in enumerate(DECISIONS):
        emit(f"#define FX_{name.upper()} {i}u")
    for name in OP_KINDS:
        emit(f"#define FX_OP_{name} {OP_KIND[name]}u")
    for name in REASONS:
        emit(f"#define FX_R_{name.replace('-', '_').upper()} {REASON_ID[name]}u  // {name}")
    emit("#define FX_MODE_CHECK 0u\n#define FX_MODE_START 1u\n#define FX_MODE_END 2u")
    emit("#define FX_IDLE 0u\n#define FX_RUNNING 1u\n#define FX_DONE 2u")
    emit("#define FX_OBS_START 1u\n#define FX_OBS_END 2u\n#define FX_OBS_HANDOFF 3u\n#define FX_OBS_RELEASE 4u"
         "\n#define FX_OBS_MAP 5u\n#define FX_OBS_FLUSH 6u\n#define FX_OBS_REFUSED 7u")
    emit(f"#define FX_OWN_WRITES {OWN_WRITES}u\n#define FX_OWN_SKIP_OWNER {OWN_SKIP_OWNER}u"
         f"\n#define FX_HANDOFF_ENCLOSED {HANDOFF_ENCLOSED}u\n#define FX_HANDOFF_SPLIT {HANDOFF_SPLIT}u\n#define FX_RELEASE_TWICE {RELEASE_TWICE}u"
         f"\n#define FX_LEASE_ENCLOSED {LEASE_ENCLOSED}u\n#define FX_LEASE_VOID {LEASE_VOID}u")
    emit(f"// The longest op slice of any edge: a row with more ops is not this policy's (fx_run denies it).\n"
         f"#define FX_MAX_OPS {max(1, plan.max_ops)}u")
    emit(f"#define FX_TRAIL {TRAIL}u")
    if plan.target == "bpftime":
        emit("// bpftime implements no bpf_loop: the op slice is walked by a loop bounded by FX_MAX_OPS.\n"
             "#define FX_LOOP(n, fn, ctx) do { for (__u32 fx_i = 0; fx_i < FX_MAX_OPS && fx_i < (n); fx_i++) "
             "if ((fn)(fx_i, (ctx))) break; } while (0)")
    else:
        emit("#define FX_LOOP(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)")
    if gpu:
        emit("// Inside a CUDA kernel observations go to bpftime's GPU ring buffer, written with bpf_perf_event_output.\n"
             "#define FX_OUTPUT(p, n) bpf_perf_event_output(0, &fx_gpu_events, 0, (p), (n))")
    else:
        emit("#define FX_OUTPUT(p, n) bpf_ringbuf_output(&fx_events, (p), (n), 0)")
    if kinds & {"xdp", "tc"}:
        emit(f"// UDP destination port of the frames that carry an event (specs/lowering.md section 2).\n"
             f"#define FX_UDP_PORT {FX_UDP_PORT}")
    if any(p.section.role == "call" for p in programs):
        emit(f"#define FX_PENDING {PENDING}u")
    emit("")
# The runtime maps every object declares: (name, key type, value type, comment). Their sizes are
# ``Plan.max_entries``; ``artifacts.RUNTIME_MAPS`` describes the same maps for ``maps.json``.
_RUNTIME_TABLES: tuple[tuple[str, str, str, str], ...] = (
    ("fx_edges", "__u32", "struct fx_edge", "edge descriptors, key = edge id"),
    ("fx_ops", "__u32", "struct fx_op", "runtime-guard operations"),
    ("fx_regions", "__u32", "struct fx_region", "region bounds"),
    ("fx_own", "__u32", "struct fx_own", "ownership map"),
    ("fx_countdown", "__u32", "__u32", "predecessor-completion and users-left counters"),
    ("fx_state", "__u32", "struct fx_st", "edge state and its start/end event numbers"),
    ("fx_links", "__u32", "__u64", "per link: start event number of the latest finished flush"),
    ("fx_clock", "__u32", "__u64", "event counter (orders starts and ends)"),
    ("fx_flags", "__u32", "__u32", "1 while an accumulation has not been read by a covering reader"),
    ("fx_stats", "__u32", "__u64", "[0] observation events dropped, [1] observations written"),
    ("fx_trail", "__u32", "struct fx_obs", "the latest FX_TRAIL observations, slot = count % FX_TRAIL (bpftool prints them)"),
)


def pinned(plan: Plan) -> bool:
    """True when the shared maps are pinned by name (``LIBBPF_PIN_BY_NAME``): kernel and dputime.
    bpftime's syscall server implements no ``BPF_OBJ_PIN``, so there the loader shares maps within
    its one process instead (``specs/lowering.md`` section 5)."""
    return plan.target in ("kernel", "dputime")


def _map_def(name: str, map_type: str, entries: int, key: str | None, value: str | None, pin: bool,
             flags: str | None = None) -> str:
    """One BTF-defined map (``SEC(".maps")``): type, ``max_entries``, optional ``map_flags``, key
    and value types, and ``pinning`` by name when ``pin``."""
    out = [f"struct {{\n\t__uint(type, {map_type});\n\t__uint(max_entries, {entries});"]
    if flags:
        out.append(f"\t__uint(map_flags, {flags});")
    if key:
        out.append(f"\t__type(key, {key});")
    if value:
        out.append(f"\t__type(value, {value});")
    if pin:
        out.append("\t__uint(pinning, LIBBPF_PIN_BY_NAME);")
    out.append(f"}} {name} SEC(\".maps\");")
    return "\n".join(out)


def _emit_runtime_maps(emit: _Emitter, plan: Plan, stem: str) -> None:
    """The runtime's array maps, sized by the plan and shared by every object (pinned by name where
    the target pins), and the object's own event stream: the ``fx_events`` ring buffer on the host,
    or, inside CUDA kernels, bpftime's GPU ring buffer ``fx_gpu_events`` and the GPU array
    ``fx_exits`` that counts each hook's thread exits."""
    pin = pinned(plan)
    for name, key_t, value_t, what in _RUNTIME_TABLES:
        emit(f"// {what}")
        emit(_map_def(name, "BPF_MAP_TYPE_ARRAY", plan.max_entries(name), key_t, value_t, pin))
    if stem.endswith(".cuda"):
        hooks = len(plan.policy.device(stem.removesuffix(".cuda")).hooks)
        emit(f"// observation events of this device's programs inside CUDA kernels: {GPU_EVENTS} records per GPU thread")
        emit(_map_def("fx_gpu_events", _map_type_expr(BPFTIME_GPU_RINGBUF), GPU_EVENTS, "__u32", "struct fx_obs", False))
        emit("// per hook: threads of the current launch that have exited")
        emit(_map_def("fx_exits", _map_type_expr(BPFTIME_GPU_ARRAY), max(1, hooks), "__u32", "__u64", False))
    else:
        emit("// observation events (movement commands, completions, ownership transitions), one ring buffer per device")
        emit(_map_def("fx_events", "BPF_MAP_TYPE_RINGBUF", RINGBUF_BYTES, None, None, False))
    emit("")


def _emit_cuda_maps(emit: _Emitter, plan: Plan, stem: str, programs: list[Program]) -> None:
    """bpftime GPU hooks: the bindings of calls to edges (``fx_bind``, ``fx_seq``, shared), and on
    the host side the calls in flight: ``fx_pending`` (asynchronous calls waiting for a
    synchronisation), ``fx_inflight`` (synchronous calls, by thread) and ``fx_syncing`` (the stream
    each thread synchronises)."""
    n = max(1, len(plan.edges))
    emit("// calls bound to edges: (device, hook, handle) -> a slice of fx_seq, and the edge ids of the slices")
    emit(_map_def("fx_bind", "BPF_MAP_TYPE_HASH", n, "struct fx_bind_key", "struct fx_bind", False))
    emit(_map_def("fx_seq", "BPF_MAP_TYPE_ARRAY", n, "__u32", "__u32", False))
    if stem.endswith(".cuda") or not any(p.section.role == "call" for p in programs):
        emit("")
        return
    emit("// this device's asynchronous calls waiting for a synchronisation, synchronous calls in flight by thread,")
    emit("// and the stream each thread is synchronising")
    emit(_map_def("fx_pending", "BPF_MAP_TYPE_ARRAY", PENDING, "__u32", "struct fx_pend", False))
    emit(_map_def("fx_inflight", "BPF_MAP_TYPE_HASH", THREADS, "__u64", "__u32", False))
    emit(_map_def("fx_syncing", "BPF_MAP_TYPE_HASH", THREADS, "__u64", "__u64", False))
    emit("")


def _emit_policy_maps(emit: _Emitter, plan: Plan, maps: list[MapPlan]) -> None:
    """One BTF map definition per policy map of the object: a ring buffer (bpftime's GPU ring
    buffer holds ``max_entries`` ``struct fx_rec`` records per thread), or a map whose value struct
    ``<c_name>_val`` holds ``slots`` slots; pinned by name where the target pins."""
    pin = pinned(plan)
    for m in maps:
        d = m.decl
        real = m.realisation
        what = f"map {d.name}"
        emit(f"// policy map `{comment_text(d.name)}`: {comment_text(f'{d.map_type}<{d.key_type}, {d.value_type}>')}"
             f"[{d.max_entries}] class {comment_text(str(d.cls))}; {real.type_name} ({comment_text(real.rule)})",
             d.span, what)
        if real.map_type == BPFTIME_GPU_RINGBUF:
            emit("struct fx_rec { __u64 key; __u64 value; };", d.span, what)
            emit(_map_def(m.c_name, _map_type_expr(real.map_type), d.max_entries, "__u32", "struct fx_rec", False), d.span, what)
            continue
        if is_ringbuf(m):
            emit(_map_def(m.c_name, _map_type_expr(real.map_type), ringbuf_bytes(m), None, None, pin), d.span, what)
            continue
        emit(f"struct {m.c_name}_val {{ {_slot_ctype(m)} slot[{m.slots}]; }};", d.span, what)
        flags = "BPF_F_RDONLY_PROG" if real.flags & BPF_F_RDONLY_PROG else None
        emit(_map_def(m.c_name, _map_type_expr(real.map_type), d.max_entries, _key_ctype(m), f"struct {m.c_name}_val",
                      pin, flags), d.span, what)
    emit("")


def _slot_expr(m: MapPlan) -> str:
    """The slot a device uses: its own (``dev``) in a ``per_device`` map, else slot 0."""
    return "dev" if m.decl.cls.kind is ClassKind.PER_DEVICE else "0"


def _emit_map_read(emit: _Emitter, maps: list[MapPlan]) -> None:
    """``fx_map_read(m, key, dev, agg, *out)``: one ``case`` per readable policy map (index
    ``MapPlan.index``); ``agg`` sums every per-device slot. Returns 0, or -1 for a missing slot or
    an unknown map."""
    emit("// Read a policy map entry: one slot (agg == 0) or the sum of every per-device slot.")
    emit("static __always_inline int fx_map_read(__u32 m, __u64 key, __u32 dev, __u32 agg, __u64 *out)\n{")
    emit("\t*out = 0;\n\tswitch (m) {")
    for m in maps:
        if is_ringbuf(m):
            continue
        d = m.decl
        what = f"map {d.name}"
        emit(f"\tcase {m.index}: {{ // `{comment_text(d.name)}`", d.span, what)
        emit(f"\t\t{_key_ctype(m)} k = key;\n\t\tstruct {m.c_name}_val *v = bpf_map_lookup_elem(&{m.c_name}, &k);\n\n"
             "\t\tif (!v)\n\t\t\treturn 0;", d.span, what)
        if d.cls.kind is ClassKind.PER_DEVICE:
            emit(f"\t\tif (agg) {{\n\t\t\tfor (int i = 0; i < {m.slots}; i++)\n\t\t\t\t*out += v->slot[i];\n"
                 "\t\t\treturn 0;\n\t\t}", d.span, what)
        slot = _slot_expr(m)
        emit(f"\t\tif ({slot} >= {m.slots})\n\t\t\treturn -1;\n\t\t*out = v->slot[{slot}];\n\t\treturn 0;\n\t}}",
             d.span, what)
    emit("\t}\n\treturn -1;\n}\n")


def _merge_body(merge: str, slot_t: str) -> str:
    """The C that applies an update with merge operator ``merge`` (one of ``plan.MERGES``) to the
    slot ``*p`` of type ``slot_t``: one atomic instruction (``-mcpu=v3``), an aligned store, or a
    compare-and-swap loop bounded by ``CAS_TRIES`` (``specs/lowering.md`` section 2)."""
    if merge in ("sum", "add"):
        return "\t\t__sync_fetch_and_add(p, x);"
    if merge == "count":
        return "\t\t__sync_fetch_and_add(p, 1);"
    if merge in ("and", "or", "xor"):
        return f"\t\t__sync_fetch_and_{merge}(p, x);"
    if merge == "last":
        return f"\t\t*(volatile {slot_t} *)p = x; // an aligned store is single-copy atomic"
    new = {"max": "old > x ? old : x", "min": "old < x ? old : x", "prod": "old * x"}[merge]
    return (f"\t\tfor (int t = 0; t < {CAS_TRIES}; t++) {{\n\t\t\t{slot_t} old = *(volatile {slot_t} *)p;\n\n"
            f"\t\t\tif (__sync_val_compare_and_swap(p, old, {new}) == old)\n\t\t\t\treturn 0;\n\t\t}}\n\t\treturn -1;")


def _emit_map_apply(emit: _Emitter, maps: list[MapPlan]) -> None:
    """``fx_map_apply(m, key, dev, val, update)``: one ``case`` per writable policy map. A ring
    buffer gets a ``{key, val}`` record; other maps a blind store (``update == 0``) or the map's
    merge. Hash maps create the entry on first use. A read-only map (``BPF_F_RDONLY_PROG``, a
    ``const`` map) has no case: the verifier rejects any program store into it, and the plan
    never writes it (its writes are ``CONST`` denials). Returns 0, or -1 on failure or an
    unknown map."""
    emit("// Apply a write (blind store) or an update (the map's merge operator) to a policy map entry.")
    emit("static __always_inline int fx_map_apply(__u32 m, __u64 key, __u32 dev, __u64 val, __u32 update)\n{")
    emit("\tswitch (m) {")
    for m in maps:
        if m.realisation.flags & BPF_F_RDONLY_PROG:
            continue
        d = m.decl
        what = f"map {d.name}"
        emit(f"\tcase {m.index}: {{ // `{comment_text(d.name)}` merge {comment_text(str(d.merge))}", d.span, what)
        if m.realisation.map_type == BPFTIME_GPU_RINGBUF:
            emit(f"\t\tstruct fx_rec rec = {{key, val}};\n\n"
                 f"\t\treturn bpf_perf_event_output(0, &{m.c_name}, 0, &rec, sizeof(rec)) ? -1 : 0;\n\t}}", d.span, what)
            continue
        if is_ringbuf(m):
            emit(f"\t\t__u64 rec[2] = {{key, val}};\n\n\t\treturn bpf_ringbuf_output(&{m.c_name}, rec, sizeof(rec), 0) ? -1 : 0;\n\t}}",
                 d.span, what)
            continue
        slot_t = _slot_ctype(m)
        emit(f"\t\t{_key_ctype(m)} k = key;\n\t\tstruct {m.c_name}_val *v = bpf_map_lookup_elem(&{m.c_name}, &k);\n"
             f"\t\t{slot_t} *p, x = val;\n", d.span, what)
        if m.realisation.map_type != BPF_MAP_TYPE_ARRAY:  # not a kernel array: the entry may not exist yet
            emit(f"\t\tif (!v) {{\n\t\t\tstruct {m.c_name}_val zero = {{}};\n\n"
                 f"\t\t\tbpf_map_update_elem(&{m.c_name}, &k, &zero, BPF_NOEXIST);\n"
                 f"\t\t\tv = bpf_map_lookup_elem(&{m.c_name}, &k);\n\t\t}}", d.span, what)
        slot = _slot_expr(m)
        emit(f"\t\tif (!v || {slot} >= {m.slots})\n\t\t\treturn -1;\n\t\tp = &v->slot[{slot}];", d.span, what)
        emit(f"\t\tif (!update) {{\n\t\t\t*(volatile {slot_t} *)p = x; // an aligned store is single-copy atomic\n"
             "\t\t\treturn 0;\n\t\t}", d.span, what)
        emit(_merge_body(d.merge or "last", slot_t) + "\n\t\treturn 0;\n\t}", d.span, what)
    emit("\t}\n\treturn -1;\n}\n")


def _emit_descriptor_comments(emit: _Emitter, plan: Plan, device: str, sources: SourceMap | None) -> None:
    """One comment per ``.fx`` statement (an edge family) whose descriptors ``device`` drives,
    with its location and, when ``sources`` has the file, its first source line."""
    pol = plan.policy
    emit(f"// Edge descriptors driven by {comment_text(device)}'s hooks (rows of fx_edges, by .fx statement):")
    groups: dict[object, list[int]] = {}
    for e in pol.edges:
        if e.device == device:
            groups.setdefault((e.span, e.family), []).append(e.eid)
    for ids in groups.values():
        e = pol.edges[ids[0]]
        rows = f"edge {ids[0]}" if len(ids) == 1 else f"{len(ids)} edges, ids {ids[0]}..{ids[-1]}"
        source = sources.get(e.span.file) if sources is not None else None
        if source is not None:
            line, col = source.line_col(e.span.start)
            where = f"{e.span.file}:{line}:{col}"
            text = source.line_text(line).strip()
        else:
            where, text = e.span.file, f"edge {e.family}: {e.action.value} by {e.device}.{e.hook}"
        emit(f"//   {rows} at {comment_text(where)}:", e.span, f"edge {e.family}")
        emit(f"//     {comment_text(text)}", e.span, f"edge {e.family}")
    emit("")


def _emit_programs(emit: _Emitter, plan: Plan, programs: list[Program]) -> None:
    """One entry function per program, in its ELF section (``specs/lowering.md`` section 2):
    a ``syscall`` program takes the ``struct fx_event`` as its context; XDP and tc programs find
    it after the frame's headers (``fx_packet.c``) and return the decision's action
    (``targets.ACTIONS``); a probe on a runtime's hook function reads it from the first argument
    and writes the decision back; probes on CUDA calls and kernels run ``fx_cuda_host.c`` and
    ``fx_cuda_kernel.c``."""
    for p in programs:
        sec = p.section
        hook = f"{p.device}.{p.hook}" if p.hook else p.device
        what = f"hook {hook}"
        emit(f"// {comment_text(hook)}: {sec.kind} at {comment_text(sec.attach)}", p.span, what)
        emit(f"SEC(\"{sec.section}\")", p.span, what)
        emit(_entry(plan, p), p.span, what)
        emit("")


def _entry(plan: Plan, p: Program) -> str:
    """The C of program ``p``'s entry function (see ``_emit_programs``)."""
    sec, name, hook = p.section, p.name, f"{p.hook_id}u"
    if sec.kind == "syscall":
        return f"int {name}(struct fx_event *ev)\n{{\n\treturn fx_run(ev, {hook});\n}}"
    if sec.kind in ("xdp", "tc"):
        return _packet_entry(p)
    if sec.role == "event":  # the runtime calls fx_hook_<device>__<hook>(struct fx_event *ev)
        return (f"int {name}(struct pt_regs *ctx)\n{{\n\tstruct fx_event *at = (void *)PT_REGS_PARM1(ctx), ev = {{}};\n\n"
                "\tif (bpf_probe_read_user(&ev, sizeof(ev), at))\n\t\treturn 0;\n"
                f"\tfx_run_copy(&ev, {hook});\n"
                "\t// The decision, reason, detail and op go back into the caller's event.\n"
                "\tbpf_probe_write_user(&at->decision, &ev.decision, 4 * sizeof(__u32));\n\treturn 0;\n}")
    if sec.role == "call":
        call = CUDA_CALLS[p.hook]
        stream = call.stream_c or "0"
        return (f"int {name}(struct pt_regs *ctx)\n{{\n\t// {comment_text(call.signature)}\n"
                f"\treturn fx_cuda_call({hook}, (__u64){call.handle_c}, (__u64){stream}, {int(call.stream_c is not None)});\n}}")
    if sec.role == "return":
        return f"int {name}(struct pt_regs *ctx)\n{{\n\treturn fx_cuda_return({hook}, (long)PT_REGS_RC(ctx));\n}}"
    if sec.role == "stream-in":
        return (f"int {name}(struct pt_regs *ctx)\n{{\n\t__u64 t = bpf_get_current_pid_tgid(), s = (__u64)PT_REGS_PARM1(ctx);\n\n"
                "\tbpf_map_update_elem(&fx_syncing, &t, &s, BPF_ANY);\n\treturn 0;\n}")
    if sec.role == "stream-sync":
        return (f"int {name}(struct pt_regs *ctx)\n{{\n\t__u64 t = bpf_get_current_pid_tgid(), *s = bpf_map_lookup_elem(&fx_syncing, &t), "
                "stream;\n\n\tif (!s)\n\t\treturn 0;\n\tstream = *s;\n\tbpf_map_delete_elem(&fx_syncing, &t);\n"
                "\treturn fx_cuda_sync(stream, 0, (long)PT_REGS_RC(ctx));\n}")
    if sec.role == "device-sync":
        return f"int {name}(struct pt_regs *ctx)\n{{\n\treturn fx_cuda_sync(0, 1, (long)PT_REGS_RC(ctx));\n}}"
    if sec.role == "kernel-entry":
        return f"int {name}(void *ctx)\n{{\n\tif (!fx_first_thread())\n\t\treturn 0;\n\treturn fx_cuda_kernel({hook}, 0);\n}}"
    assert sec.role == "kernel-exit", sec  # INVARIANT: targets.Section lists every role
    return f"int {name}(void *ctx)\n{{\n\tif (!fx_last_thread({hook}))\n\t\treturn 0;\n\treturn fx_cuda_kernel({hook}, 1);\n}}"


def _packet_entry(p: Program) -> str:
    """The entry of an XDP or tc program: find the event after the frame's headers, run it, write
    the decision back with the UDP checksum updated, and return the decision's action; a frame not
    sent to the event port passes untouched, one sent there without a whole event is dropped
    (``malformed``). A deferred frame is turned around (XDP_TX; on tc redirected out of the
    interface it came in on, or into the stack for an egress program)."""
    act = ACTIONS[p.section.kind]
    hook = f"{p.hook_id}u"
    if p.section.kind == "xdp":
        head = (f"int {p.name}(struct xdp_md *ctx)\n{{\n"
                "\tvoid *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;\n")
        other, deny, defer, proceed = "XDP_PASS", "XDP_DROP", "XDP_TX", "XDP_PASS"
    else:
        head = (f"int {p.name}(struct __sk_buff *ctx)\n{{\n\tvoid *data, *end;\n")
        other, deny, defer, proceed = "TC_ACT_OK", "TC_ACT_SHOT", "TC_ACT_REDIRECT", "TC_ACT_OK"
    assert (act["proceed"], act["defer"], act["deny"]) in ((2, 3, 1), (0, 7, 2))  # INVARIANT: targets.ACTIONS
    body = [head, "\tstruct fx_event *at, ev, old;\n\tstruct udphdr *udp;\n\tstruct fx_frame f = {};\n\tint k;\n\n"]
    if p.section.kind == "tc":
        body.append("\t// The headers and the event must be in the linear part of the buffer (pulled only when short).\n"
                    "\tif (ctx->data_end - ctx->data < (ctx->len < FX_FRAME_MAX ? ctx->len : FX_FRAME_MAX))\n"
                    "\t\tbpf_skb_pull_data(ctx, ctx->len < FX_FRAME_MAX ? ctx->len : FX_FRAME_MAX);\n"
                    "\tdata = (void *)(long)ctx->data;\n\tend = (void *)(long)ctx->data_end;\n")
    body.append("\tk = fx_frame_parse(data, end, &f);\n"
                f"\tif (k == FX_FRAME_OTHER)\n\t\treturn {other};\n"
                "\tat = data + (f.ev & 0xff);\n\tudp = data + (f.udp & 0xff);\n"
                "\tif (k != FX_FRAME_EVENT || (void *)(at + 1) > end || (void *)(udp + 1) > end) {\n"
                f"\t\tfx_emit(FX_OBS_REFUSED, ~0u, FX_DENY, FX_R_MALFORMED, {hook}, 0, 0);\n\t\treturn {deny};\n\t}}\n"
                "\t__builtin_memcpy(&old, at, sizeof(old));\n\tev = old;\n"
                f"\tfx_run_copy(&ev, {hook});\n")
    if p.section.kind == "xdp":
        body.append("\tudp->check = fx_udp_check(udp->check, &old, &ev, f.ipv6);\n"
                    "\t__builtin_memcpy(at, &ev, sizeof(ev));\n"
                    f"\tif (ev.decision == FX_DEFER) {{\n\t\tfx_turnaround(data, end, &f);\n\t\treturn {defer};\n\t}}\n")
    else:
        flags = "BPF_F_INGRESS" if p.section.egress else "0"
        where = "into the stack, back to the local sender" if p.section.egress else "out of the interface it came in on"
        body.append("\tif (ev.decision == FX_DEFER)\n\t\tfx_turnaround(data, end, &f);\n"
                    "\t// Write the event back and fold its change into the UDP checksum (for any ip_summed state).\n"
                    "\tbpf_skb_store_bytes(ctx, f.ev & 0xff, &ev, sizeof(ev), 0);\n"
                    "\tbpf_l4_csum_replace(ctx, (f.udp & 0xff) + 6, 0,\n"
                    "\t\t\t    bpf_csum_diff((__be32 *)&old, sizeof(old), (__be32 *)&ev, sizeof(ev), 0), BPF_F_MARK_MANGLED_0);\n"
                    f"\tif (ev.decision == FX_DEFER) // {where}\n"
                    f"\t\treturn bpf_redirect(ctx->ifindex, {flags});\n")
    body.append(f"\treturn ev.decision == FX_PROCEED ? {proceed} : {deny};\n}}")
    return "".join(body)
