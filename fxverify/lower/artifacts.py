"""Render a ``Plan`` into the files of a lowering directory and compile the C with clang.

Takes a ``Plan``, its ``CFile``s and ``Fact``s; produces (in memory, then atomically on disk):
``<stem>.bpf.c``, ``<stem>.bpf.o`` (when clang is present and compilation is asked; a stem is a
device, or ``<device>.cuda`` for a bpftime device's programs inside CUDA kernels), the skeleton
loader (``<stem>.skel.h``, ``loader.c``, ``fx_loader.h``, when bpftool is present),
``maps.json``, ``maps.init.json``, ``obligations.json``, ``manifest.json`` and ``sourcemap.json``
(``specs/lowering.md`` section 5). JSON is written with sorted keys and fixed separators, and
objects are compiled with the build directory mapped away, so the same input gives the same bytes.
Emits no diagnostics; compilation failures are returned as text (``driver`` reports FX-BPF-005).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from collections import Counter
from dataclasses import dataclass

from fxverify import __version__, atomic
from fxverify.graph import PolicyGraph
from fxverify.lower.emit_c import GPU_EVENTS, PENDING, RINGBUF_BYTES, THREADS, CFile, pinned
from fxverify.lower.facts import Fact, verifier_obligations
from fxverify.lower.loader import loader_body, loader_c, pin_root, skeleton_name
from fxverify.lower.plan import DECISIONS, OP_KINDS, REASONS, Plan
from fxverify.lower.targets import (
    ACTION_NAMES, ACTIONS, BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_RINGBUF, BPFTIME_GPU_ARRAY, BPFTIME_GPU_RINGBUF,
    CUDA_CALLS, FX_UDP_PORT, MAP_TYPE_NAMES,
)
from fxverify.source import NO_SPAN, SourceMap, Span

#: Runtime structs of the emitted C (``c/fx_structs.h``), field by field: (name, bytes). Offsets
#: follow C layout rules for these naturally aligned fields (no padding inside).
LAYOUTS: dict[str, tuple[tuple[str, int], ...]] = {
    "fx_event": (("edge", 4), ("phase", 4), ("decision", 4), ("reason", 4), ("detail", 4), ("op", 4)),
    "fx_edge": (("device", 4), ("hook", 4), ("op_first", 4), ("op_count", 4)),
    "fx_op": (("kind", 4), ("a", 4), ("b", 4), ("reason", 4), ("c", 8), ("d", 8)),
    "fx_region": (("base", 8), ("end", 8)),
    "fx_own": (("owner", 4), ("transit", 4), ("leases", 8), ("released", 4), ("active", 4)),
    "fx_st": (("state", 4), ("pad", 4), ("start_seq", 8), ("end_seq", 8)),
    "fx_obs": (("kind", 4), ("edge", 4), ("device", 4), ("decision", 4), ("reason", 4), ("a", 4), ("c", 8), ("d", 8)),
    "fx_bind_key": (("device", 4), ("hook", 4), ("handle", 8)),
    "fx_bind": (("first", 4), ("count", 4), ("next", 4), ("ended", 4)),
    "fx_pend": (("edge", 4), ("hook", 4), ("stream", 8)),
}

#: Runtime maps: (name, value struct or scalar size in bytes, what). Every object declares them all
#: (``emit_c``); their ``max_entries`` are ``Plan.max_entries``.
RUNTIME_MAPS: tuple[tuple[str, str | int, str], ...] = (
    ("fx_edges", "fx_edge", "edge descriptors, key = edge id"),
    ("fx_ops", "fx_op", "runtime-guard operations, sliced per edge"),
    ("fx_regions", "fx_region", "region bounds [base, end) in bytes"),
    ("fx_own", "fx_own", "ownership map: owner device, lease mask, transit, released, active accesses"),
    ("fx_countdown", 4, "predecessor-completion and users-left counters"),
    ("fx_state", "fx_st", "edge state (0 idle, 1 running, 2 done) with its start and end event numbers"),
    ("fx_links", 8, "per link: start event number of the latest finished flush (posted-write visibility)"),
    ("fx_clock", 8, "[0] event counter that orders every start and end"),
    ("fx_flags", 4, "1 while an accumulation has not been read by a covering reader (FX-XF-004)"),
    ("fx_stats", 8, "[0] observation events dropped because the ring buffer was full, [1] observations written"),
    ("fx_trail", "fx_obs", "the latest observations, slot = observations written modulo max_entries (bpftool decodes them)"),
)

#: clang flags of every compilation (``specs/lowering.md`` section 1): ``-mcpu=v3`` for the atomic
#: instructions of the merges (Linux 5.12+), ``-g`` for the BTF the maps and the line info need.
CLANG_FLAGS: tuple[str, ...] = ("-target", "bpf", "-mcpu=v3", "-O2", "-g", "-Wall")
# uname machine -> the __TARGET_ARCH_* name bpf_tracing.h expects (libbpf's bpf_tracing.h).
_TRACING_ARCH = {"x86_64": "x86", "aarch64": "arm64", "s390x": "s390", "ppc64le": "powerpc",
                 "riscv64": "riscv", "loongarch64": "loongarch", "armv7l": "arm"}


def layout(struct: str) -> list[dict]:
    """Fields of runtime struct ``struct`` (a ``LAYOUTS`` key) as ``{"name", "offset", "size"}``
    rows, offset and size in bytes. Raises ``KeyError`` for another name."""
    out, off = [], 0
    for name, size in LAYOUTS[struct]:
        out.append({"name": name, "offset": off, "size": size})
        off += size
    return out


def struct_size(struct: str) -> int:
    """Size of runtime struct ``struct`` (a ``LAYOUTS`` key) in bytes. Raises ``KeyError`` for
    another name."""
    return sum(size for _n, size in LAYOUTS[struct])


def _indented_json(obj: object) -> str:
    """``obj`` as JSON with sorted keys, one-space indent and ASCII only, ending in a newline."""
    return json.dumps(obj, sort_keys=True, indent=1, separators=(",", ": "), ensure_ascii=True) + "\n"


def _runtime_row(name: str, map_type: int, key_size: int, value: str | int, entries: int, cls: str, what: str,
                 stems: list[str], pin: bool) -> dict:
    """One runtime map of ``maps.json`` (see ``maps_json``), declared by the objects ``stems``."""
    vsize = struct_size(value) if isinstance(value, str) else value
    devices = list(dict.fromkeys(s.removesuffix(".cuda") for s in stems))
    return {"name": name, "c_name": name, "kind": "runtime", "what": what, "map_type": map_type,
            "map_type_name": MAP_TYPE_NAMES[map_type], "key_size": key_size, "value_size": vsize, "max_entries": entries,
            "class": cls, "home_device": None, "devices": devices,
            "objects": [f"{s}.bpf.o" for s in stems], "pinning": "by_name" if pin else None,
            "value_layout": layout(value) if isinstance(value, str) else [{"name": "value", "offset": 0, "size": vsize}]}


def maps_json(plan: Plan) -> dict:
    """``maps.json`` as ``{"target", "proved", "maps": [...]}``: every runtime map, then each
    object's event stream and (bpftime) CUDA maps, then every policy map, each with its map type
    on the target (number and name), key and value sizes and value layout in bytes,
    ``max_entries`` (bytes for ring buffers), consistency class, merge, home device, the devices
    and objects that declare it, whether it is pinned by name and, for policy maps, the
    realisation rule (``specs/lowering.md`` section 5)."""
    stems = plan.stems()
    pin = pinned(plan)
    out = []
    for name, value, what in RUNTIME_MAPS:
        cls = "eventual" if name in ("fx_stats", "fx_trail") else "linearizable"
        out.append(_runtime_row(name, BPF_MAP_TYPE_ARRAY, 4, value, plan.max_entries(name), cls, what, stems, pin))
    host = [s for s in stems if not s.endswith(".cuda")]
    gpu = [s for s in stems if s.endswith(".cuda")]
    row = _runtime_row("fx_events", BPF_MAP_TYPE_RINGBUF, 0, 0, RINGBUF_BYTES, "local",
                       "observation events, one ring buffer per object (records are struct fx_obs)", host, False)
    out.append(row | {"value_layout": layout("fx_obs")})
    if gpu:
        out.append(_runtime_row("fx_gpu_events", BPFTIME_GPU_RINGBUF, 4, "fx_obs", GPU_EVENTS, "local",
                                "observation events inside CUDA kernels: records per GPU thread", gpu, False))
        hooks = max(len(plan.policy.device(s.removesuffix(".cuda")).hooks) for s in gpu)
        out.append(_runtime_row("fx_exits", BPFTIME_GPU_ARRAY, 4, 8, max(1, hooks), "local",
                                "per hook: threads of the current launch that have exited (one entry per hook "
                                "of the device)", gpu, False))
    bound = [s for s in stems if any(p.stem == s and p.section.role in ("call", "kernel-entry") for p in plan.programs)]
    if bound:
        n = max(1, len(plan.edges))
        out.append(_runtime_row("fx_bind", BPF_MAP_TYPE_HASH, 16, "fx_bind", n, "linearizable",
                                "(device, hook, handle) -> the slice of fx_seq its calls start", bound, False)
                   | {"key_layout": layout("fx_bind_key")})
        out.append(_runtime_row("fx_seq", BPF_MAP_TYPE_ARRAY, 4, 4, n, "linearizable", "edge ids of the bindings", bound, False))
    calls = [s for s in stems if any(p.stem == s and p.section.role == "call" for p in plan.programs)]
    if calls:
        out.append(_runtime_row("fx_pending", BPF_MAP_TYPE_ARRAY, 4, "fx_pend", PENDING, "local",
                                "asynchronous CUDA calls waiting for a synchronisation", calls, False))
        out.append(_runtime_row("fx_inflight", BPF_MAP_TYPE_HASH, 8, 4, THREADS, "local",
                                "thread id -> edge of its synchronous CUDA call in flight", calls, False))
        out.append(_runtime_row("fx_syncing", BPF_MAP_TYPE_HASH, 8, 8, THREADS, "local",
                                "thread id -> the stream it is synchronising", calls, False))
    for m in plan.maps:
        d = m.decl
        per = m.value_size // m.slots
        out.append({"name": d.name, "c_name": m.c_name, "kind": "policy", "what": f"{d.map_type}<{d.key_type}, {d.value_type}>",
                    "map_type": m.realisation.map_type, "map_type_name": m.realisation.type_name, "rule": m.realisation.rule,
                    "map_flags": m.realisation.flags,
                    "key_size": m.key_size, "value_size": m.value_size, "max_entries": d.max_entries,
                    "class": str(d.cls), "merge": d.merge, "home_device": d.cls.device, "devices": list(m.devices),
                    "objects": [f"{s}.bpf.o" for s in m.stems],
                    "pinning": "by_name" if pin and m.realisation.map_type != BPFTIME_GPU_RINGBUF else None,
                    "value_layout": [{"name": f"slot[{i}]" + (f" ({plan.devices[i]})" if m.slots > 1 else ""),
                                      "offset": i * per, "size": per} for i in range(m.slots)]})
    return {"target": plan.target, "proved": plan.proved, "maps": out}


def maps_init_json(plan: Plan) -> dict:
    """``maps.init.json``: initial contents of every runtime map, rows in key order (fields named
    in ``fields``, values as ``LAYOUTS`` gives them), counters with what each non-edge counter
    waits for; maps marked ``zero`` and every policy map start zeroed (arrays) or empty (hash
    maps). A ``const`` policy map is also marked ``read_only_prog``: its table is filled from the
    syscall side before the flow, and programs only read it (``BPF_F_RDONLY_PROG``)."""
    return {
        "proved": plan.proved,
        "fx_edges": {"fields": [f for f, _ in LAYOUTS["fx_edge"]], "rows": plan.edges},
        "fx_ops": {"fields": [f for f, _ in LAYOUTS["fx_op"]], "rows": [op.row() for op in plan.ops]},
        "fx_regions": {"fields": ["base", "end"], "rows": plan.regions},
        "fx_own": {"fields": [f for f, _ in LAYOUTS["fx_own"]], "rows": [[o, 0, 0, 0, 0] for o in plan.owners]},
        "fx_countdown": {"values": plan.countdown,
                         "what": {str(len(plan.edges) + i): w for i, w in enumerate(plan.countdown_what)}},
        "fx_state": {"zero": True},
        "fx_links": {"zero": True},
        "fx_clock": {"zero": True},
        "fx_flags": {"values": [1] * len(plan.flags), "what": plan.flags},
        "fx_stats": {"zero": True},
        "policy_maps": {m.decl.name: {"zero": True} | ({"read_only_prog": True} if m.realisation.flags else {})
                        for m in plan.maps},
    } | (_bindings(plan) if plan.target == "bpftime" else {})


def _bindings(plan: Plan) -> dict:
    """bpftime: ``fx_bind`` rows ``[device, hook, handle, first, count]`` and the ``fx_seq``
    edge ids of the CUDA kernels' launches, plus, under ``calls``, every hook realised by a CUDA
    call with the argument that names its movement and its edges in happens-before order: the
    loader's ``--bind DEVICE.HOOK=HANDLE:EDGE,...`` binds them once the handles are known."""
    pol = plan.policy
    graph = PolicyGraph(pol)
    rank = graph.rank if graph.is_acyclic() else int
    calls = []
    for p in plan.programs:
        if p.section.role != "call":
            continue
        edges = sorted((e.eid for e in pol.edges if e.device == p.device and e.hook == p.hook), key=rank)
        call = CUDA_CALLS[p.hook]
        calls.append({"device": p.device, "hook": p.hook, "device_id": p.device_id, "hook_id": p.hook_id,
                      "symbol": call.symbol, "signature": call.signature, "handle": call.handle,
                      "asynchronous": call.stream_c is not None, "edges": edges})
    return {"fx_bind": {"fields": ["device", "hook", "handle", "first", "count"], "rows": plan.binds, "calls": calls},
            "fx_seq": {"values": plan.seq}}


def _fx_location(sources: SourceMap, span: Span) -> list | None:
    """``[file, line, col, end_line, end_col]`` of ``span`` (1-based), or ``None`` for ``NO_SPAN``
    or a file ``sources`` does not hold."""
    if span == NO_SPAN or sources.get(span.file) is None:
        return None
    sf = sources.get(span.file)
    assert sf is not None
    l0, c0 = sf.line_col(span.start)
    l1, c1 = sf.line_col(span.end)
    return [span.file, l0, c0, l1, c1]


def sourcemap_json(plan: Plan, cfiles: list[CFile], sources: SourceMap) -> dict:
    """``sourcemap.json``: C line -> ``.fx`` span (``[file, line, col, end_line, end_col]``) and role,
    per C file; every edge id -> its name and span (descriptors are rows, not C lines); and
    ``proved``, like every JSON file of the directory."""
    return {
        "proved": plan.proved,
        "c": {f"{c.stem}.bpf.c": [[m.line, _fx_location(sources, m.span), m.what] for m in c.lines] for c in cfiles},
        "edges": [[e.eid, e.name, _fx_location(sources, e.span)] for e in plan.policy.edges],
    }


def obligations_json(plan: Plan, facts: list[Fact], verdicts: Counter) -> dict:
    """``obligations.json``: per program what the verifier must establish
    (``facts.verifier_obligations``), every lowering fact with its status and method (``z3`` or
    ``count``), and the policy's own verdict counts (``verdicts``: verdict value -> obligations)."""
    vo = verifier_obligations(plan)
    return {
        "proved": plan.proved,
        "policy_verdicts": dict(sorted(verdicts.items())),
        "programs": [{"name": p.name, "device": p.device, "hook": p.hook, "verifier": vo} for p in plan.programs],
        "fxverify_facts": [{"key": f.key, "what": f.what, "status": f.status, "method": f.method, "detail": f.detail}
                           for f in facts],
    }


def manifest_json(plan: Plan, compiled: bool, clang_version: str | None, loader: bool = False) -> dict:
    """``manifest.json``: programs with hooks, sections, attach points and roles, objects
    (``None`` unless ``compiled``), the target runtime, the compiler command and
    ``clang_version``, the ABI (event layout, decisions, reasons, op kinds; the return value of
    each decision per program kind; the frame of dputime packet programs), the loader files
    (``None`` unless ``loader``), table sizes and the proof stamp. Raises ``KeyError`` for a
    target outside ``targets.TARGETS``."""
    runtime = {"kernel": "Linux kernel eBPF via libbpf (BPF_PROG_LOAD, BPF_PROG_TEST_RUN)",
               "bpftime": "bpftime userspace/GPU eBPF runtime",
               "dputime": "DPU/NIC runtime with XDP and tc programs"}[plan.target]
    kinds = {p.section.kind for p in plan.programs}
    actions = {k: {d: {"value": v, "name": ACTION_NAMES.get(k, {}).get(v)} for d, v in ACTIONS[k].items()}
               for k in sorted(kinds & set(ACTIONS))}
    abi: dict = {"event": layout("fx_event"), "observation": layout("fx_obs"), "decisions": list(DECISIONS),
                 "reasons": list(REASONS), "op_kinds": list(OP_KINDS), "phases": ["start", "end"], "actions": actions}
    if kinds & {"xdp", "tc"}:
        abi["frame"] = {"udp_port": FX_UDP_PORT, "headers": "Ethernet II (at most one 802.1Q/802.1ad tag), IPv4 or IPv6, "
                        "UDP to udp_port", "event_offset": "right after the UDP header",
                        "written_back": ["decision", "reason", "detail", "op"], "udp_checksum": "updated (RFC 1624)"}
    return {
        "fxverify": __version__,
        "policy": plan.policy.name,
        "source": plan.policy.path,
        "target": plan.target,
        "runtime": runtime,
        "proved": plan.proved,
        "stamp": "proved" if plan.proved else "UNPROVED: lowered with --allow-unproved, not for deployment",
        "devices": list(plan.devices),
        "programs": [{"name": p.name, "device": p.device, "device_id": p.device_id, "hook": p.hook or None,
                      "hook_id": p.hook_id, "section": p.section.section, "kind": p.section.kind,
                      "attach": p.section.attach, "role": p.section.role, "symbol": p.section.symbol,
                      "side": p.section.side, "source": f"{p.stem}.bpf.c", "object": f"{p.stem}.bpf.o" if compiled else None}
                     | ({"tc_direction": "egress" if p.section.egress else "ingress"} if p.section.kind == "tc" else {})
                     for p in plan.programs],
        "compiler": {"command": ["clang", *CLANG_FLAGS, "-c", "<stem>.bpf.c"], "version": clang_version} if compiled else None,
        "loader": {"source": "loader.c", "body": "fx_loader.h", "build": "cc -O2 -o loader loader.c -lbpf",
                   "skeletons": {f"{s}.skel.h": skeleton_name(s) for s in plan.stems()},
                   "pin_root": pin_root(plan) if pinned(plan) else None} if loader else None,
        "abi": abi,
        "counts": {"edges": len(plan.edges), "ops": len(plan.ops), "regions": len(plan.regions),
                   "counters": len(plan.countdown), "max_ops_per_edge": plan.max_ops},
    }


@dataclass
class CompileResult:
    """Outcome of compiling one object's C file (``stem``): ``ok``, clang's diagnostics text
    (``log``) and the object bytes (empty when not ``ok``)."""

    stem: str
    ok: bool
    log: str
    obj: bytes = b""


def clang_path() -> str | None:
    """Path of ``clang``, or ``None`` when it is not installed."""
    return shutil.which("clang")


def clang_version() -> str | None:
    """First line of ``clang --version`` (recorded in the manifest), or ``None`` when clang is
    missing or prints nothing. Raises ``OSError`` when clang cannot be run."""
    path = clang_path()
    if path is None:
        return None
    r = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    return r.stdout.splitlines()[0].strip() if r.stdout else None


def compile_c(cfile: CFile) -> CompileResult:
    """Compile one device's C with ``clang -target bpf -mcpu=v3 -O2 -g`` in a scratch directory.

    ``-mcpu=v3`` enables the atomic instructions the merges use (kernel 5.12+). The scratch
    directory is mapped to ``.`` in the debug info, so objects are byte-identical across runs.
    The platform's multiarch include directory is added for ``<asm/types.h>``. Returns a
    ``CompileResult`` (clang's failure is a result, not an exception); raises ``OSError`` when the
    scratch directory or clang cannot be used.
    """
    path = clang_path()
    assert path is not None  # INVARIANT: callers check clang_path() first
    with tempfile.TemporaryDirectory(prefix="fxverify-cc-") as tmp:
        src = f"{cfile.stem}.bpf.c"
        with open(os.path.join(tmp, src), "w", encoding="ascii") as fh:
            fh.write(cfile.text)
        cmd = [path, *CLANG_FLAGS, f"-fdebug-prefix-map={tmp}=.", "-fno-ident"]
        arch = sysconfig.get_config_var("MULTIARCH")
        if arch and os.path.isdir(f"/usr/include/{arch}"):
            cmd.append(f"-I/usr/include/{arch}")
        # bpf_tracing.h reads probe arguments per architecture (PT_REGS_PARM1).
        target_arch = _TRACING_ARCH.get(os.uname().machine)
        if target_arch:
            cmd.append(f"-D__TARGET_ARCH_{target_arch}")
        cmd += ["-c", src, "-o", f"{cfile.stem}.bpf.o"]
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False,
                           env={**os.environ, "LC_ALL": "C"})
        if r.returncode != 0:
            return CompileResult(cfile.stem, False, r.stderr)
        with open(os.path.join(tmp, f"{cfile.stem}.bpf.o"), "rb") as fh:
            return CompileResult(cfile.stem, True, r.stderr, fh.read())


#: Names a lowering directory holds (``render``): the JSON files, one C source, object and skeleton
#: per object, and the loader, with ``loader``, the program its documented build command makes there.
_LOWERED_NAME = re.compile(r"(maps|maps\.init|obligations|manifest|sourcemap)\.json|loader(\.c)?|fx_loader\.h"
                           r"|[A-Za-z_][A-Za-z0-9_]*(\.cuda)?\.(bpf\.[co]|skel\.h)")


def foreign_entries(out_dir: str) -> list[str]:
    """What in the existing folder ``out_dir`` is not a lowering's output, sorted: entries whose
    names no lowering writes, subfolders, or everything when ``manifest.json`` is missing or is not
    one fxverify wrote (``atomic.foreign_entries``). Replacing ``out_dir`` (``write_dir``) deletes
    it, so the driver refuses a folder for which this is not empty. An empty folder gives ``[]``.
    Raises ``OSError`` when the folder cannot be listed."""
    return atomic.foreign_entries(out_dir, "manifest.json", _LOWERED_NAME)


def _filler(files: dict[str, bytes]):
    def fill(tmp: str) -> None:
        for name, data in sorted(files.items()):
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(data)
    return fill


def stage_dir(out_dir: str, files: dict[str, bytes]) -> str:
    """Write ``files`` (name -> bytes) into a new temporary sibling folder of ``out_dir`` and
    return its path (``atomic.stage_dir``); ``atomic.swap_in`` then publishes it, or
    ``atomic.discard`` removes it. Raises ``OSError`` on I/O failure (nothing is left behind)."""
    return atomic.stage_dir(out_dir, _filler(files))


def write_dir(out_dir: str, files: dict[str, bytes]) -> None:
    """Write ``files`` (name -> bytes) as the folder ``out_dir``, atomically
    (``atomic.replace_dir``). Raises ``OSError`` on I/O failure, leaving ``out_dir`` as it was."""
    atomic.replace_dir(out_dir, _filler(files))


def render(plan: Plan, cfiles: list[CFile], facts: list[Fact], verdicts: Counter, sources: SourceMap,
           objects: dict[str, bytes], clang_ver: str | None, skeletons: dict[str, str] | None = None) -> dict[str, bytes]:
    """Every file of the lowering directory, name -> bytes: the C sources, the ``objects``
    (stem -> ``.bpf.o`` bytes, empty without clang), the skeleton loader when ``skeletons``
    (stem -> ``bpftool gen skeleton`` text) covers every object, and the five JSON files
    (``specs/lowering.md`` section 5). ``clang_ver`` goes into the manifest."""
    files: dict[str, bytes] = {f"{c.stem}.bpf.c": c.text.encode("ascii") for c in cfiles}
    files.update({f"{stem}.bpf.o": obj for stem, obj in objects.items()})
    with_loader = bool(skeletons) and set(skeletons) == set(plan.stems())
    if with_loader:
        assert skeletons is not None
        files.update({f"{stem}.skel.h": text.encode() for stem, text in skeletons.items()})
        files["loader.c"] = loader_c(plan).encode("ascii")
        files["fx_loader.h"] = loader_body().encode("ascii")
    files["maps.json"] = _indented_json(maps_json(plan)).encode()
    files["maps.init.json"] = json.dumps(maps_init_json(plan), sort_keys=True, separators=(",", ":")).encode() + b"\n"
    files["obligations.json"] = _indented_json(obligations_json(plan, facts, verdicts)).encode()
    files["manifest.json"] = _indented_json(manifest_json(plan, bool(objects), clang_ver, with_loader)).encode()
    files["sourcemap.json"] = json.dumps(sourcemap_json(plan, cfiles, sources), sort_keys=True,
                                         separators=(",", ":")).encode() + b"\n"
    return files
