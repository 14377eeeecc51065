"""Emit libbpf-style restricted C for one device of a ``Plan``.

Takes a ``Plan``, a device name and (optionally) the ``SourceMap`` of the policy; produces a
``CFile``: the text of ``<device>.bpf.c`` and its source map (C line -> ``.fx`` span or runtime
role). The C holds BTF-defined maps and one program per hook of the device; every program runs the
same data-driven interpreter of ``fx_ops`` rows (``specs/lowering.md`` section 3), iterated with
``bpf_loop`` so the verifier's work does not grow with the number of edges.

The fixed part of the runtime lives in C files shipped next to this module (``c/``, see
``c/README.md``) and is spliced into every emitted file verbatim, without substitutions:
``fx_structs.h`` (the runtime structs), ``fx_helpers.h`` (event, counter and clock helpers) and
``fx_interp.c`` (``fx_exec``, ``fx_step``, ``fx_run``). This module writes what depends on the
plan around them: the ``#define``s of the ABI, the maps, the policy-map accessors and the hook
entry functions. Policy identifiers only reach the C mangled by ``plan.c_ident``, and policy text
only inside ``//`` comments escaped by ``comment_text``, so they cannot inject code.

Emits no diagnostics (a C file clang rejects is FX-BPF-005 in ``driver``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from fxverify import __version__
from fxverify.lower.plan import (
    DECISIONS, HANDOFF_ENCLOSED, HANDOFF_SPLIT, LEASE_ENCLOSED, LEASE_VOID, OP_KIND, OP_KINDS, OWN_SKIP_OWNER, OWN_WRITES, REASON_ID, REASONS,
    RELEASE_TWICE, MapPlan, Plan,
)
from fxverify.lower.targets import BPF_F_RDONLY_PROG, BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_RINGBUF, BPFTIME_GPU_RINGBUF, MAP_TYPE_NAMES
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
    """The emitted C of one device: ``text`` (ASCII, ends with a newline) and ``lines``, its
    source map in C line order."""

    device: str
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


def emit_device(plan: Plan, device: str, sources: SourceMap | None = None) -> CFile:
    """Return the C file of ``device`` (a name in ``plan.devices``): header and ABI ``#define``s,
    runtime structs and maps, the device's policy maps, the runtime helpers, the policy-map
    accessors, the op interpreter, descriptor comments and one entry function per hook.

    With ``sources``, each descriptor comment quotes the first line of its ``.fx`` statement
    (escaped). Deterministic for a given plan. Raises ``ValueError`` when ``device`` is not a
    device of the plan."""
    emit = _Emitter()
    maps = plan.maps_of(device)
    _emit_header(emit, plan, device)
    emit(_runtime_c("fx_structs.h"))
    _emit_runtime_maps(emit, plan)
    _emit_policy_maps(emit, maps)
    emit(_runtime_c("fx_helpers.h"), what="fxverify runtime: helpers")
    _emit_map_read(emit, maps)
    _emit_map_apply(emit, maps)
    emit(_runtime_c("fx_interp.c"), what="fxverify runtime: op interpreter")
    _emit_descriptor_comments(emit, plan, device, sources)
    _emit_programs(emit, plan, device)
    emit('char LICENSE[] SEC("license") = "Dual BSD/GPL";')
    return CFile(device, "\n".join(emit.lines) + "\n", emit.map)


def _emit_header(emit: _Emitter, plan: Plan, device: str) -> None:
    """The licence, the proof stamp, the includes and the ABI constants: decisions, op kinds and
    reasons (the indices ``manifest.json`` ``abi`` lists), modes, edge states, observation kinds
    and ``OWN`` flags."""
    pol = plan.policy
    stamp = "PROVED" if plan.proved else "UNPROVED (lowered with --allow-unproved; not for deployment)"
    emit("// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)")
    emit(f"// Generated by fxverify {__version__}; do not edit. Target: {plan.target}. Policy: {stamp}.")
    emit(f"// Policy `{comment_text(pol.name)}`, device `{comment_text(device)}`.", pol.span, "policy")
    emit("// One program per hook; edges are rows of fx_edges with op slices in fx_ops (specs/lowering.md).")
    emit("#include <linux/bpf.h>")
    emit("#include <bpf/bpf_helpers.h>")
    if any(p.section.kind in ("kprobe", "kretprobe") for p in plan.programs_of(device)):
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
    ("fx_stats", "__u32", "__u64", "[0] observation events dropped"),
)


def _emit_runtime_maps(emit: _Emitter, plan: Plan) -> None:
    """The runtime's array maps, sized by the plan, and the ``fx_events`` ring buffer."""
    for name, key_t, value_t, what in _RUNTIME_TABLES:
        emit(f"// {what}")
        emit(f"struct {{\n\t__uint(type, BPF_MAP_TYPE_ARRAY);\n"
             f"\t__uint(max_entries, {plan.max_entries(name)});\n\t__type(key, {key_t});\n"
             f"\t__type(value, {value_t});\n}} {name} SEC(\".maps\");")
    emit("// observation events (movement commands, completions, ownership transitions)")
    emit(f"struct {{\n\t__uint(type, BPF_MAP_TYPE_RINGBUF);\n\t__uint(max_entries, {RINGBUF_BYTES});\n}} fx_events SEC(\".maps\");")
    emit("")


def _emit_policy_maps(emit: _Emitter, maps: list[MapPlan]) -> None:
    """One BTF map definition per policy map of the device: a ring buffer, or a map whose value
    struct ``<c_name>_val`` holds ``slots`` slots."""
    for m in maps:
        d = m.decl
        real = m.realisation
        what = f"map {d.name}"
        emit(f"// policy map `{comment_text(d.name)}`: {comment_text(f'{d.map_type}<{d.key_type}, {d.value_type}>')}"
             f"[{d.max_entries}] class {comment_text(str(d.cls))}; {real.type_name} ({comment_text(real.rule)})",
             d.span, what)
        if is_ringbuf(m):
            emit(f"struct {{\n\t__uint(type, {_map_type_expr(real.map_type)});\n\t__uint(max_entries, {ringbuf_bytes(m)});\n"
                 f"}} {m.c_name} SEC(\".maps\");", d.span, what)
            continue
        emit(f"struct {m.c_name}_val {{ {_slot_ctype(m)} slot[{m.slots}]; }};", d.span, what)
        flags = "\t__uint(map_flags, BPF_F_RDONLY_PROG);\n" if real.flags & BPF_F_RDONLY_PROG else ""
        emit(f"struct {{\n\t__uint(type, {_map_type_expr(real.map_type)});\n\t__uint(max_entries, {d.max_entries});\n"
             f"{flags}\t__type(key, {_key_ctype(m)});\n\t__type(value, struct {m.c_name}_val);\n}} {m.c_name} SEC(\".maps\");",
             d.span, what)
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


def _emit_programs(emit: _Emitter, plan: Plan, device: str) -> None:
    """One entry function per hook of ``device``, in its ELF section: a ``syscall`` program takes
    the ``struct fx_event`` as its context; XDP and tc programs read it from the packet
    (bounds-checked, a short packet is denied); probes read it through the first argument pointer
    (``specs/lowering.md`` section 2)."""
    for p in plan.programs_of(device):
        what = f"hook {device}.{p.hook}"
        emit(f"// {comment_text(device)}.{comment_text(p.hook)}: {p.section.kind} at {comment_text(p.section.attach)}",
             p.span, what)
        emit(f"SEC(\"{p.section.section}\")", p.span, what)
        if p.section.kind == "syscall":
            emit(f"int {p.name}(struct fx_event *ev)\n{{\n\treturn fx_run(ev, {p.hook_id}u);\n}}", p.span, what)
        elif p.section.kind in ("xdp", "tc"):
            ctx_t = "struct xdp_md" if p.section.kind == "xdp" else "struct __sk_buff"
            emit(f"int {p.name}({ctx_t} *ctx)\n{{\n"
                 "\tvoid *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;\n"
                 "\tstruct fx_event *ev = data;\n\n"
                 "\tif ((void *)(ev + 1) > end)\n\t\treturn FX_DENY;\n"
                 f"\treturn fx_run(ev, {p.hook_id}u);\n}}", p.span, what)
        else:
            emit(f"int {p.name}(struct pt_regs *ctx)\n{{\n\tstruct fx_event ev = {{}};\n\n"
                 "\tif (bpf_probe_read_user(&ev, sizeof(ev), (void *)PT_REGS_PARM1(ctx)))\n\t\treturn FX_DENY;\n"
                 f"\treturn fx_run(&ev, {p.hook_id}u);\n}}", p.span, what)
        emit("")
