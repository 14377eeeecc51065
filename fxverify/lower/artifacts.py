"""Render a ``Plan`` into the files of a lowering directory and compile the C with clang.

Takes a ``Plan``, its ``CFile``s and ``Fact``s; produces (in memory, then atomically on disk):
``<device>.bpf.c``, ``<device>.bpf.o`` (when clang is present and compilation is asked),
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
from fxverify.lower.emit_c import RINGBUF_BYTES, CFile
from fxverify.lower.facts import Fact, verifier_obligations
from fxverify.lower.plan import DECISIONS, OP_KINDS, REASONS, Plan
from fxverify.lower.targets import BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_RINGBUF, MAP_TYPE_NAMES
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
    ("fx_stats", 8, "[0] observation events dropped because the ring buffer was full"),
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


def maps_json(plan: Plan) -> dict:
    """``maps.json`` as ``{"target", "proved", "maps": [...]}``: every runtime map, then
    ``fx_events``, then every policy map, each with its map type on the target (number and name),
    key and value sizes and value layout in bytes, ``max_entries`` (bytes for ring buffers),
    consistency class, merge, home device, the devices whose objects declare it and, for policy
    maps, the realisation rule (``specs/lowering.md`` section 5)."""
    out = []
    for name, value, what in RUNTIME_MAPS:
        vsize = struct_size(value) if isinstance(value, str) else value
        out.append({"name": name, "c_name": name, "kind": "runtime", "what": what, "map_type": BPF_MAP_TYPE_ARRAY,
                    "map_type_name": MAP_TYPE_NAMES[BPF_MAP_TYPE_ARRAY], "key_size": 4, "value_size": vsize,
                    "max_entries": plan.max_entries(name), "class": "linearizable" if name != "fx_stats" else "eventual",
                    "home_device": None, "devices": list(plan.devices),
                    "value_layout": layout(value) if isinstance(value, str) else [{"name": "value", "offset": 0, "size": vsize}]})
    out.append({"name": "fx_events", "c_name": "fx_events", "kind": "runtime", "what": "observation events, one per device",
                "map_type": BPF_MAP_TYPE_RINGBUF, "map_type_name": MAP_TYPE_NAMES[BPF_MAP_TYPE_RINGBUF], "key_size": 0,
                "value_size": 0, "max_entries": RINGBUF_BYTES, "class": "local", "home_device": None,
                "devices": list(plan.devices), "value_layout": layout("fx_obs")})
    for m in plan.maps:
        d = m.decl
        per = m.value_size // m.slots
        out.append({"name": d.name, "c_name": m.c_name, "kind": "policy", "what": f"{d.map_type}<{d.key_type}, {d.value_type}>",
                    "map_type": m.realisation.map_type, "map_type_name": m.realisation.type_name, "rule": m.realisation.rule,
                    "map_flags": m.realisation.flags,
                    "key_size": m.key_size, "value_size": m.value_size, "max_entries": d.max_entries,
                    "class": str(d.cls), "merge": d.merge, "home_device": d.cls.device, "devices": list(m.devices),
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
    }


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
        "c": {f"{c.device}.bpf.c": [[m.line, _fx_location(sources, m.span), m.what] for m in c.lines] for c in cfiles},
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


def manifest_json(plan: Plan, compiled: bool, clang_version: str | None) -> dict:
    """``manifest.json``: programs with hooks, sections and attach points, objects (``None`` unless
    ``compiled``), the target runtime, the compiler command and ``clang_version``, the ABI (event
    layout, decisions, reasons, op kinds), table sizes and the proof stamp. Raises ``KeyError``
    for a target outside ``targets.TARGETS``."""
    runtime = {"kernel": "Linux kernel eBPF via libbpf (BPF_PROG_LOAD, BPF_PROG_TEST_RUN)",
               "bpftime": "bpftime userspace/GPU eBPF runtime",
               "dputime": "DPU/NIC runtime with XDP and tc programs"}[plan.target]
    return {
        "fxverify": __version__,
        "policy": plan.policy.name,
        "source": plan.policy.path,
        "target": plan.target,
        "runtime": runtime,
        "proved": plan.proved,
        "stamp": "proved" if plan.proved else "UNPROVED: lowered with --allow-unproved, not for deployment",
        "devices": list(plan.devices),
        "programs": [{"name": p.name, "device": p.device, "device_id": p.device_id, "hook": p.hook, "hook_id": p.hook_id,
                      "section": p.section.section, "kind": p.section.kind, "attach": p.section.attach,
                      "source": f"{p.device}.bpf.c", "object": f"{p.device}.bpf.o" if compiled else None}
                     for p in plan.programs],
        "compiler": {"command": ["clang", *CLANG_FLAGS, "-c", "<device>.bpf.c"], "version": clang_version} if compiled else None,
        "abi": {"event": layout("fx_event"), "observation": layout("fx_obs"), "decisions": list(DECISIONS),
                "reasons": list(REASONS), "op_kinds": list(OP_KINDS), "phases": ["start", "end"]},
        "counts": {"edges": len(plan.edges), "ops": len(plan.ops), "regions": len(plan.regions),
                   "counters": len(plan.countdown), "max_ops_per_edge": plan.max_ops},
    }


@dataclass
class CompileResult:
    """Outcome of compiling one device's C file: ``ok``, clang's diagnostics text (``log``) and
    the object bytes (empty when not ``ok``)."""

    device: str
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
        src = f"{cfile.device}.bpf.c"
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
        cmd += ["-c", src, "-o", f"{cfile.device}.bpf.o"]
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False,
                           env={**os.environ, "LC_ALL": "C"})
        if r.returncode != 0:
            return CompileResult(cfile.device, False, r.stderr)
        with open(os.path.join(tmp, f"{cfile.device}.bpf.o"), "rb") as fh:
            return CompileResult(cfile.device, True, r.stderr, fh.read())


#: Names a lowering directory holds (``render``): the JSON files and one C source and object per device.
_LOWERED_NAME = re.compile(r"(maps|maps\.init|obligations|manifest|sourcemap)\.json|[A-Za-z_][A-Za-z0-9_]*\.bpf\.[co]")


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
           objects: dict[str, bytes], clang_ver: str | None) -> dict[str, bytes]:
    """Every file of the lowering directory, name -> bytes: the C sources, the ``objects``
    (device -> ``.bpf.o`` bytes, empty without clang) and the five JSON files
    (``specs/lowering.md`` section 5). ``clang_ver`` goes into the manifest."""
    files: dict[str, bytes] = {f"{c.device}.bpf.c": c.text.encode("ascii") for c in cfiles}
    files.update({f"{dev}.bpf.o": obj for dev, obj in objects.items()})
    files["maps.json"] = _indented_json(maps_json(plan)).encode()
    files["maps.init.json"] = json.dumps(maps_init_json(plan), sort_keys=True, separators=(",", ":")).encode() + b"\n"
    files["obligations.json"] = _indented_json(obligations_json(plan, facts, verdicts)).encode()
    files["manifest.json"] = _indented_json(manifest_json(plan, bool(objects), clang_ver)).encode()
    files["sourcemap.json"] = json.dumps(sourcemap_json(plan, cfiles, sources), sort_keys=True,
                                         separators=(",", ":")).encode() + b"\n"
    return files
