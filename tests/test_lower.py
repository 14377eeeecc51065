"""``fxverify lower`` without the kernel: plans, C text, artifacts, facts, refusals, determinism,
hostile identifiers and target profiles. Tests that need clang say so when they skip."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from fxverify.ir import ClassKind, ConsistencyClass, MapDecl
from fxverify.lower import artifacts
from fxverify.lower.driver import LowerOptions, lower
from fxverify.lower.emit_c import comment_text, emit_device
from fxverify.lower.facts import discharge_facts, merge_intervals
from fxverify.lower.kernel import ProgramReport, parse_stats, rewrite_log
from fxverify.lower.loader import NAME_MAX, pin_root
from fxverify.lower.plan import OP_KIND, Op, Plan, build_plan, c_ident
from fxverify.lower.targets import (
    BPF_F_RDONLY_PROG,
    BPF_MAP_TYPE_ARRAY,
    BPF_MAP_TYPE_HASH,
    BPFTIME_GPU_ARRAY,
    hook_programs,
    realise_map,
)
from fxverify.resolve import load_policy
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend
from fxverify.source import SourceMap
from tests.conftest import ROOT
from tests.test_cli import run

HAS_CLANG = artifacts.clang_path() is not None
needs_clang = pytest.mark.skipif(not HAS_CLANG, reason="clang is not installed (apt-get install clang)")

OK = "corpus/maps/ok/per-gpu-counter-aggregated.fx"
FAIL = "corpus/ownership/fail/double-handoff.fx"
NO_COMPILE = LowerOptions(compile=False)


def load(path: str):
    pol, diags = load_policy(str(ROOT / path), SourceMap())
    assert pol is not None, diags
    return pol


def files_of(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_one_program_per_hook_and_descriptors_in_maps() -> None:
    pol = load("corpus/ownership/ok/handoff-round-trip.fx")
    plan, diags = build_plan(pol, "kernel", proved=True)
    assert plan is not None and not diags
    assert [(p.device, p.hook) for p in plan.programs] == [(d.name, h) for d in pol.devices for h in d.hooks]
    assert len(plan.edges) == len(pol.edges)
    # Slices are contiguous and cover every op exactly once.
    firsts = [row[2] for row in plan.edges]
    assert firsts == sorted(firsts) and sum(row[3] for row in plan.edges) == len(plan.ops)
    # Every edge waits on its own predecessor counter first.
    for e, (_d, _h, first, _n) in enumerate(plan.edges):
        assert plan.ops[first].kind == OP_KIND["WAIT"] and plan.ops[first].a == e
    c = emit_device(plan, pol.devices[0].name).text
    for e in pol.edges:
        assert f"fx_{e.name}" not in c  # no per-edge code


def test_handoff_and_release_ops_mirror_the_policy() -> None:
    pol = load("corpus/ownership/ok/pinned-free-after-copy.fx")
    plan, _ = build_plan(pol, "kernel", proved=True)
    assert plan is not None
    kinds = {OP: [op for op in plan.ops if op.kind == OP_KIND[OP]] for OP in ("RELEASE", "HANDOFF", "LEASE", "OWN")}
    n_rel = sum(len(e.releases) for e in pol.edges)
    assert len(kinds["RELEASE"]) == n_rel > 0
    # A release waits on a counter that starts at the number of other users of the region.
    rel = kinds["RELEASE"][0]
    assert plan.countdown[int(rel.c)] == sum(1 for op in plan.ops if op.kind == OP_KIND["DEC"] and op.a == rel.c)


def test_c_ident_mangles_hostile_names() -> None:
    hostile = ['a"b', "x*/y", "#include", "ü", "a b", "", "*/ int evil; /*", "\\\n#define X"]
    seen = set()
    for h in hostile:
        ident = c_ident("pm_", h)
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident), ident
        seen.add(ident)
    assert len(seen) == len(hostile)  # distinct names stay distinct
    # with no prefix (the pin folder): an empty name or a leading digit still makes an identifier
    assert [c_ident("", n) for n in ("", "1x", "kv")] == ["_", "_1x", "kv"]


def test_pin_folder_of_a_long_name_fits_one_path_component() -> None:
    """A 300-character policy name (600 bytes as C) gives a pin folder name of at most NAME_MAX
    bytes, and two such names that differ only at the end get two folders."""
    def named(name: str) -> Plan:
        return SimpleNamespace(policy=SimpleNamespace(name=name))  # type: ignore[return-value]
    folders = {pin_root(named("ü" * 299 + end)) for end in "ab"}
    assert len(folders) == 2 and all(len(f.rsplit("/", 1)[1]) <= NAME_MAX for f in folders)
    assert pin_root(named("")).endswith("/policy") and pin_root(named("kv")).endswith("/kv")


def test_comment_text_cannot_end_a_comment_or_splice_lines() -> None:
    for s in ["*/ evil", "line\\", "a\nb", "??/", "ü€", "\x00", "tab\there"]:
        out = comment_text(s)
        assert "\n" not in out and "\\" not in out and "??" not in out and out.isascii()
        assert all(" " <= ch <= "~" for ch in out)


HOSTILE = '''# A policy whose name and comments try to inject C.
policy "q\\"uote */ #include <evil.h> \\\\ \u00fc\u20ac ??/"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 1 MiB
region kv in hbm0 at 0x0 size 64 KiB owner gpu0
map m: array<u32, u32>[4] class linearizable merge sum

flow f {
  edge w: write kv by gpu0.launch update m[1] = 2  # */ int evil_global = 1; /* \\
  edge r: read kv by gpu0.copy_done after w   # \u00fc #define EVIL 1
}
'''


def test_hostile_strings_stay_inside_comments(tmp_path: Path) -> None:
    src = tmp_path / "h\u00fcstile.fx"
    src.write_text(HOSTILE, encoding="utf-8")
    out = tmp_path / "out"
    res = lower(str(src), str(out), LowerOptions(compile=HAS_CLANG))
    assert res.exit_code == 0, res.diagnostics
    c = (out / "gpu0.bpf.c").read_text(encoding="ascii")
    for line in c.splitlines():
        code = line.split("//", 1)[0]
        assert "evil" not in code.lower() and "EVIL" not in code, line
        assert not line.lstrip().startswith("#") or line.startswith(("#include <", "#define FX_")), line
    assert "<U+00FC>" in c
    if HAS_CLANG:
        obj = (out / "gpu0.bpf.o").read_bytes()
        assert b"evil_global" not in obj


def test_refuses_unproved_policy_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = lower(str(ROOT / FAIL), str(out), NO_COMPILE)
    assert res.exit_code == 1 and not out.exists()
    d = res.diagnostics[0]
    assert d.code == "FX-BPF-001" and "FX-OWN-003" in d.message


def test_cli_refusal_lists_codes(tmp_path: Path) -> None:
    r = run("lower", FAIL, "-o", str(tmp_path / "o"), "--no-compile")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[FX-BPF-001]" in r.stdout and "FX-OWN-003" in r.stdout and "Traceback" not in r.stdout + r.stderr


def test_allow_unproved_stamps_every_artifact(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = lower(str(ROOT / FAIL), str(out), LowerOptions(compile=False, allow_unproved=True))
    assert res.exit_code == 0
    assert any(d.code == "FX-BPF-009" and not d.is_error for d in res.diagnostics)
    for name in ("manifest.json", "maps.json", "obligations.json", "maps.init.json", "sourcemap.json"):
        assert json.loads((out / name).read_text())["proved"] is False, name
    assert "UNPROVED" in json.loads((out / "manifest.json").read_text())["stamp"]
    for c in out.glob("*.bpf.c"):
        assert "Policy: UNPROVED" in c.read_text()


def test_bad_input_is_a_diagnostic_with_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fx"
    bad.write_text('policy "x"\nfabric {\n  device gpu0 gpu\n}\n')
    r = run("lower", str(bad), "-o", str(tmp_path / "o"))
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out and "bad.fx:3:" in out and "^" in out, out


@pytest.mark.parametrize("compile_", [False, pytest.param(True, marks=needs_clang)], ids=["c-only", "with-clang"])
def test_same_input_same_bytes(tmp_path: Path, compile_: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    opts = LowerOptions(compile=compile_)
    monkeypatch.chdir(ROOT)
    a, b = tmp_path / "a", tmp_path / "b"
    assert lower(OK, str(a), opts).exit_code == 0
    assert lower(OK, str(b), opts).exit_code == 0
    fa, fb = files_of(a), files_of(b)
    assert fa == fb
    assert ("gpu0.bpf.o" in fa) == compile_


def test_output_directory_is_replaced_atomically(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert lower(str(ROOT / OK), str(out), NO_COMPILE).exit_code == 0
    (out / "retired.bpf.c").write_text("a device the policy no longer has")
    assert lower(str(ROOT / OK), str(out), NO_COMPILE).exit_code == 0
    assert not (out / "retired.bpf.c").exists() and (out / "manifest.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary directories left


def test_artifacts_describe_maps_layouts_and_programs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = lower(str(ROOT / OK), str(out), NO_COMPILE)
    assert res.exit_code == 0
    maps = {m["name"]: m for m in json.loads((out / "maps.json").read_text())["maps"]}
    kv = maps["kv_sent"]
    assert kv["class"] == "per_device" and kv["map_type_name"] == "BPF_MAP_TYPE_ARRAY"
    assert kv["value_size"] == 8 * len(res.plan.devices) and len(kv["value_layout"]) == len(res.plan.devices)
    assert maps["fx_ops"]["value_size"] == 32 and maps["fx_edges"]["max_entries"] == len(res.plan.edges)
    init = json.loads((out / "maps.init.json").read_text())
    assert init["fx_edges"]["rows"] == res.plan.edges and len(init["fx_ops"]["rows"]) == len(res.plan.ops)
    man = json.loads((out / "manifest.json").read_text())
    assert man["runtime"].startswith("Linux") and {p["section"] for p in man["programs"]} == {"syscall"}
    obl = json.loads((out / "obligations.json").read_text())
    assert obl["fxverify_facts"] and all(f["status"] == "proved" for f in obl["fxverify_facts"])
    assert {f["method"] for f in obl["fxverify_facts"]} == {"z3", "count"}


def test_source_map_points_c_lines_at_fx_spans(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert lower(str(ROOT / OK), str(out), NO_COMPILE).exit_code == 0
    smap = json.loads((out / "sourcemap.json").read_text())
    src = (ROOT / OK).read_text().splitlines()
    c = (out / "gpu0.bpf.c").read_text().splitlines()
    mapped = [row for row in smap["c"]["gpu0.bpf.c"] if row[1] is not None]
    assert mapped
    for line, where, what in mapped:
        assert 1 <= line <= len(c)
        assert where[0].endswith(OK) and 1 <= where[1] <= len(src)
        if what.startswith("map "):
            assert f"map {what[4:]}" in src[where[1] - 1]
    hooks = [row for row in mapped if row[2] == "hook gpu0.launch"]
    assert any("SEC(" in c[line - 1] for line, _w, _x in hooks)
    assert len(smap["edges"]) == 3 and smap["edges"][0][1] == "send0"


def test_rewrite_log_annotates_c_lines_with_fx_spans() -> None:
    smap = {"c": {"gpu0.bpf.c": [[10, ["p.fx", 4, 1, 4, 9], "map m"], [20, None, "fxverify runtime: op interpreter"]]}}
    log = "0: (b7) r1 = 0\n; v = lookup(&pm_m, &k); @ gpu0.bpf.c:12\n1: (85) call\n; x @ gpu0.bpf.c:25\n"
    text, spans = rewrite_log(log, smap)
    assert "--> p.fx:4:1 (map m)" in text and "--> fxverify runtime" in text and spans == ["p.fx:4:1"]


def test_parse_stats_reads_the_veristat_figures() -> None:
    rep = ProgramReport("p", "d", "h", "syscall", True)
    parse_stats("verification time 97 usec\nstack depth 112+0+56\nprocessed 1807 insns (limit 1000000) "
                "max_states_per_insn 3 total_states 150 peak_states 139 mark_read 12\n", rep)
    assert (rep.insns_processed, rep.peak_states, rep.total_states, rep.max_states_per_insn) == (1807, 139, 150, 3)
    assert rep.verification_usec == 97 and rep.stack_depth == "112+0+56"


def test_facts_are_proved_and_can_fail() -> None:
    pol = load(OK)
    plan, _ = build_plan(pol, "kernel", proved=True)
    assert plan is not None
    backend = open_backend(SolverOptions())
    assert all(f.status == "proved" for f in discharge_facts(plan, backend))
    # A corrupted table: a BOUNDS op naming a region past the end, and an unbalanced counter.
    plan.ops.append(Op(OP_KIND["BOUNDS"], len(plan.regions) + 5, 0, 0, 0, 1))
    plan.countdown[0] += 1
    bad = {f.key: f for f in discharge_facts(plan, backend) if f.status != "proved"}
    assert bad["region-ids"].status == "refuted" and str(len(plan.regions) + 5) in bad["region-ids"].detail
    assert bad["counter-balance"].status == "refuted"


def test_merge_intervals() -> None:
    assert merge_intervals([(5, 6), (0, 2), (2, 3), (1, 4), (9, 10)]) == [(0, 4), (5, 6), (9, 10)]


def test_unrealisable_class_is_an_error_never_a_downgrade(tmp_path: Path) -> None:
    src = tmp_path / "p.fx"
    src.write_text((ROOT / OK).read_text().replace("array<u32, u64>[8] class per_device", "hash<u32, u64>[8] class per_device"))
    res = lower(str(src), str(tmp_path / "o"), NO_COMPILE)
    assert res.exit_code == 1 and [d.code for d in res.diagnostics if d.is_error] == ["FX-BPF-002"]
    assert "slots" in (res.diagnostics[0].help or "") and not (tmp_path / "o").exists()


def test_bpftime_profile() -> None:
    """A GPU hook is a uprobe on its CUDA runtime call (the host side), or a kprobe/kretprobe pair
    inside a named CUDA kernel; a local GPU map lives in GPU memory only when every hook that uses
    it runs inside a CUDA kernel, and a hash there stays a host hash (the GPU reaches it through
    bpftime's host-call path)."""
    pol = load("corpus/maps/ok/local-map-on-device.fx")
    gpu = next(d for d in pol.devices if d.kind.value == "gpu")
    (sec,) = hook_programs("bpftime", pol, gpu.name, "launch")
    assert (sec.section, sec.kind, sec.role, sec.side) == ("uprobe/libcudart.so:cudaLaunchKernel", "uprobe", "call", "host")
    entry, exit_ = hook_programs("bpftime", pol, gpu.name, "launch", "_Z9vectorAddPKfS0_Pf")
    assert (entry.section, exit_.section) == ("kprobe/_Z9vectorAddPKfS0_Pf", "kretprobe/_Z9vectorAddPKfS0_Pf")
    assert entry.side == exit_.side == "gpu" and (entry.role, exit_.role) == ("kernel-entry", "kernel-exit")
    assert [s.section for s in hook_programs("kernel", pol, gpu.name, "launch")] == ["syscall"]
    users = {(e.device, e.hook) for e in pol.edges if e.device == gpu.name}
    local = MapDecl("g", "array", "u32", "u32", 4, ConsistencyClass(ClassKind.LOCAL, gpu.name))
    hashed = MapDecl("g", "hash", "u32", "u32", 4, ConsistencyClass(ClassKind.LOCAL, gpu.name))
    used = next(m for m in pol.maps if m.cls.kind is ClassKind.LOCAL)
    assert realise_map("bpftime", pol, used).map_type == BPF_MAP_TYPE_ARRAY  # host programs: host map
    on_gpu = realise_map("bpftime", pol, used, frozenset(users))
    assert on_gpu.map_type == BPFTIME_GPU_ARRAY and on_gpu.gpu
    assert not realise_map("bpftime", pol, local).gpu  # no edge uses it: nothing runs on the GPU
    assert realise_map("bpftime", pol, hashed, frozenset(users)).map_type == BPF_MAP_TYPE_HASH


@pytest.mark.parametrize("target", ["kernel", "bpftime", "dputime"])
def test_npu_and_nvme_hooks_are_runtime_calls_and_const_maps_read_only(target: str) -> None:
    """An NPU is no CUDA device and an NVMe controller no packet path: their hooks are syscall
    programs the runtime runs (kernel, dputime), or uprobes on the hook function the runtime calls
    with the event (bpftime, which has no syscall programs); an NVMe hook's attach point names its
    NVMe event. A `const` map is the same read-only table (BPF_F_RDONLY_PROG) on every target,
    also when only GPU hooks use it."""
    pol = load("corpus/transforms/ok/npu-kv-checkpoint-to-nvme.fx")
    for dev, hook in (("npu0", "launch"), ("npu0", "copy_done"), ("nvme0", "sq_doorbell"), ("nvme0", "completion")):
        (sec,) = hook_programs(target, pol, dev, hook)
        if target == "bpftime":
            assert (sec.kind, sec.role, sec.section) == ("uprobe", "event", f"uprobe/libfxhooks.so:fx_hook_{dev}__{hook}")
        else:
            assert sec.kind == "syscall"
    assert "SQyTDBL" in hook_programs(target, pol, "nvme0", "sq_doorbell")[0].attach
    assert "npu0.fault" in hook_programs(target, pol, "npu0", "fault")[0].attach
    maps = load("corpus/maps/ok/const-map-read-only.fx")
    real = {m.name: realise_map(target, maps, m) for m in maps.maps}
    assert real["spill_home"].flags == BPF_F_RDONLY_PROG and real["spill_home"].map_type == BPF_MAP_TYPE_ARRAY
    assert real["block_home"].flags == 0


BT_POLICY = '''# GPU-only per-device counter and a linearizable map shared by a GPU and a DPU.
policy "bt"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device dpu0: dpu hooks [tx]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm0 on gpu0 size 1 MiB
region kv in hbm0 at 0x0 size 64 KiB owner gpu0
map c: array<u32, u64>[4] class per_device merge sum
map o: array<u32, u32>[4] class linearizable merge sum
flow f {
  edge w: write kv by gpu0.launch update c[0] = 1 update o[0] = 1 lease kv to dpu0
  edge r: read kv by dpu0.tx after w update o[0] = 1
}
'''


def test_bpftime_gpu_maps_only_inside_cuda_kernels_and_linearizable_refusal(tmp_path: Path) -> None:
    """From host CUDA calls every map is a host map (bpftime's shared memory, CPU atomics). With
    `gpu0.launch` inside a CUDA kernel, the per-device map only it uses is a GPU array (one shared
    copy: a per-thread array would split the device's slot among threads), and a linearizable map
    it shares with the DPU is refused (FX-BPF-002): the GPU gives no linearizable read-modify-write
    with another device."""
    src = tmp_path / "p.fx"
    src.write_text(BT_POLICY)
    res = lower(str(src), str(tmp_path / "o"), LowerOptions(target="bpftime", compile=False))
    assert res.exit_code == 0, res.diagnostics
    maps = {m["name"]: m for m in json.loads((tmp_path / "o" / "maps.json").read_text())["maps"]}
    assert maps["c"]["map_type"] == maps["o"]["map_type"] == BPF_MAP_TYPE_ARRAY
    kernel = LowerOptions(target="bpftime", compile=HAS_CLANG, cuda_kernels=(("gpu0", "launch", "_Z4attnPf"),))
    res = lower(str(src), str(tmp_path / "o"), kernel)
    assert [d.code for d in res.diagnostics if d.is_error] == ["FX-BPF-002"], res.diagnostics
    assert "`o`" in res.diagnostics[0].message
    src.write_text(src.read_text().replace(" update o[0] = 1 lease", " lease"))
    res = lower(str(src), str(tmp_path / "o"), kernel)
    assert res.exit_code == 0, res.diagnostics
    maps = {m["name"]: m for m in json.loads((tmp_path / "o" / "maps.json").read_text())["maps"]}
    assert maps["c"]["map_type"] == BPFTIME_GPU_ARRAY and maps["c"]["objects"] == ["gpu0.cuda.bpf.o"]
    c = (tmp_path / "o" / "gpu0.cuda.bpf.c").read_text()
    assert 'SEC("kprobe/_Z4attnPf")' in c and 'SEC("kretprobe/_Z4attnPf")' in c
    assert "1503 /* BPF_MAP_TYPE_GPU_ARRAY_MAP */" in c and "1527 /* BPF_MAP_TYPE_GPU_RINGBUF_MAP */" in c
    assert "bpf_loop(" not in c and "bpf_ringbuf_output(" not in c
    if HAS_CLANG:
        assert (tmp_path / "o" / "gpu0.cuda.bpf.o").exists()


@needs_clang
def test_dputime_rx_is_xdp_and_tx_is_tc(tmp_path: Path) -> None:
    out = tmp_path / "o"
    res = lower(str(ROOT / "corpus/ownership/ok/dpu-reads-leased-kv.fx"), str(out), LowerOptions(target="dputime"))
    assert res.exit_code == 0, res.diagnostics
    man = json.loads((out / "manifest.json").read_text())
    kinds = {(p["device"], p["hook"]): p["section"] for p in man["programs"]}
    assert kinds[("dpu0", "rx")] == "xdp" and kinds[("dpu0", "tx")] == "tc"
    assert all((out / p["object"]).exists() for p in man["programs"])
    tc = {p["hook"]: p["tc_direction"] for p in man["programs"] if p["kind"] == "tc"}
    assert tc == {"tx": "egress", "dma_done": "ingress"}
    actions = man["abi"]["actions"]
    assert {d: a["name"] for d, a in actions["xdp"].items()} == {"proceed": "XDP_PASS", "defer": "XDP_TX", "deny": "XDP_DROP"}
    assert {d: a["name"] for d, a in actions["tc"].items()} == {"proceed": "TC_ACT_OK", "defer": "TC_ACT_REDIRECT",
                                                                "deny": "TC_ACT_SHOT"}
    assert man["abi"]["frame"]["udp_port"] == 18008
    maps = {m["name"]: m for m in json.loads((out / "maps.json").read_text())["maps"]}
    assert maps["fx_edges"]["pinning"] == "by_name" and maps["fx_events"]["pinning"] is None


def test_no_clang_writes_c_and_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    res = lower(str(ROOT / OK), str(tmp_path / "o"), LowerOptions())
    assert res.exit_code == 0
    assert [d.code for d in res.diagnostics] == ["FX-BPF-010"] and not res.diagnostics[0].is_error
    assert not list((tmp_path / "o").glob("*.bpf.o")) and list((tmp_path / "o").glob("*.bpf.c"))
    res = lower(str(ROOT / OK), str(tmp_path / "o2"), LowerOptions(kernel_verify=True))
    assert res.exit_code == 2 and res.diagnostics[0].code == "FX-BPF-008" and res.diagnostics[0].is_error


@pytest.mark.parametrize("case", ["other files", "the policy itself", "a subfolder", "the current folder"])
def test_lower_never_replaces_a_folder_it_did_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The output folder is replaced as a whole, so a folder holding anything a lowering did not
    write is refused (FX-IO-002, exit 2) and left as it was; a new, empty or previously lowered
    folder is written."""
    out = tmp_path / "out"
    out.mkdir()
    policy = ROOT / OK
    if case == "other files":
        (out / "thesis.txt").write_text("years of work\n")
    elif case == "the policy itself":
        policy = Path(shutil.copy(ROOT / OK, out / "p.fx"))
    elif case == "a subfolder":
        lower(str(ROOT / OK), str(out), LowerOptions(compile=False))
        (out / "keep").mkdir()
    else:
        lower(str(ROOT / OK), str(out), LowerOptions(compile=False))
        monkeypatch.chdir(out)
    before = sorted(p.name for p in out.iterdir())
    res = lower(str(policy), str(out), LowerOptions(compile=False))
    assert res.exit_code == 2 and [d.code for d in res.diagnostics] == ["FX-IO-002"], res.diagnostics
    assert sorted(p.name for p in out.iterdir()) == before


def test_lower_replaces_its_own_output_and_an_empty_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert lower(str(ROOT / OK), str(out), LowerOptions(compile=False)).exit_code == 0
    (out / "gpu0.bpf.c").write_text("stale\n")
    assert lower(str(ROOT / OK), str(out), LowerOptions(compile=False)).exit_code == 0
    assert (out / "gpu0.bpf.c").read_text() != "stale\n"


LOWERING_FAILS = sorted(p.relative_to(ROOT) for p in (ROOT / "tests/lowering/fail").glob("*.fx"))


@pytest.mark.parametrize("path", LOWERING_FAILS, ids=lambda p: p.stem)
def test_lowering_corpus_fails_at_its_expect_line(tmp_path: Path, path: Path) -> None:
    """Policies that check but cannot be lowered: each carries `# expect: CODE` on the line the
    lowering underlines; the previous output folder is left as it was."""
    text = (ROOT / path).read_text()
    want = [(i + 1, m.group(1)) for i, ln in enumerate(text.splitlines()) if (m := re.search(r"# expect: (FX-[A-Z]+-\d{3})", ln))]
    out = tmp_path / "out"
    assert lower(str(ROOT / OK), str(out), NO_COMPILE).exit_code == 0
    before = files_of(out)
    res = lower(str(ROOT / path), str(out), LowerOptions())
    assert res.exit_code == 2, res.diagnostics
    got = []
    for d in res.diagnostics:
        assert d.primary is not None
        line, _col = res.sources.get(d.primary.span.file).line_col(d.primary.span.start)
        got.append((line, str(d.code)))
        assert text[d.primary.span.start:d.primary.span.end].startswith("map "), d
    assert got == want
    assert files_of(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


MAP_LINE = "map kv_sent: array<u32, u64>[8] class per_device merge sum"


@pytest.mark.parametrize("decl, reason", [
    ("map kv_sent: array<u32, u64>[4294967296] class per_device merge sum", "max_entries 4294967296 does not fit the kernel's u32"),
    ("map kv_sent: array<u32, u64>[268435456] class per_device merge sum", "over the kernel's bound"),
    ("map kv_sent: hash<u32, u64>[268435456] class linearizable merge sum", "bucket array"),
    (MAP_LINE + "\nmap kv_log: ringbuf<u32, u64>[268435456] class linearizable", "ring buffer of 4294967296 bytes"),
])
def test_map_sizes_the_target_cannot_create_are_refused_before_compiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decl: str, reason: str) -> None:
    src = tmp_path / "p.fx"
    src.write_text((ROOT / OK).read_text().replace(MAP_LINE, decl))
    compiled = []
    monkeypatch.setattr(artifacts, "compile_c", lambda c: compiled.append(c))
    res = lower(str(src), str(tmp_path / "o"), LowerOptions(kernel_verify=True))
    errors = [d for d in res.diagnostics if d.is_error]
    assert res.exit_code == 2 and [d.code for d in errors] == ["FX-BPF-011"], res.diagnostics
    assert reason in errors[0].message and ("kv_log" if "ringbuf" in decl else "kv_sent") in errors[0].message
    assert not compiled and not (tmp_path / "o").exists()


def test_map_limits_at_their_boundaries() -> None:
    from fxverify.lower.map_limits import (
        MAX_HASH_ENTRIES,
        U32_MAX,
        map_problems,
        ringbuf_problem,
    )

    assert map_problems(False, 1, 4, 4) == [] and map_problems(True, 1 << 25, 4, 8) == []
    assert map_problems(False, 0, 4, 4) and "bucket" in map_problems(True, MAX_HASH_ENTRIES + 1, 4, 8)[0]
    assert "bytes for one map" in map_problems(True, MAX_HASH_ENTRIES, 4, 8)[0]  # 8 GiB preallocated
    assert map_problems(False, U32_MAX, 4, 4)  # 32 GiB of elements
    assert map_problems(False, 1, 4, 5 << 20) and map_problems(True, 1, 513, 8)
    assert ringbuf_problem(4096) is None and ringbuf_problem(1 << 31) is None
    assert ringbuf_problem(1 << 32) and ringbuf_problem(3 * 4096) and ringbuf_problem(2048)


@needs_clang
def test_a_failed_compile_leaves_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new output is staged beside the old and swapped in only when complete: after clang fails
    (FX-BPF-005) the previous folder, its manifest and objects are unchanged, and no temporary
    folder is left."""
    out = tmp_path / "out"
    assert lower(str(ROOT / OK), str(out), LowerOptions()).exit_code == 0
    before = files_of(out)
    assert "manifest.json" in before and any(n.endswith(".bpf.o") for n in before)
    monkeypatch.setattr(artifacts, "compile_c", lambda c: artifacts.CompileResult(c.stem, False, "error: injected"))
    src = tmp_path / "p.fx"
    src.write_text((ROOT / OK).read_text().replace("size 4 KiB owner cpu0", "size 8 KiB owner cpu0"))
    res = lower(str(src), str(out), LowerOptions())
    assert res.exit_code == 1 and "FX-BPF-005" in [d.code for d in res.diagnostics] and not res.written
    assert files_of(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "p.fx"]


def test_a_failed_swap_leaves_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    assert lower(str(ROOT / OK), str(out), NO_COMPILE).exit_code == 0
    before = files_of(out)
    real = artifacts.os.rename
    calls = []

    def rename(a, b):
        calls.append(a)
        if len(calls) == 2:  # the staged folder moving into place
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(artifacts.os, "rename", rename)
    res = lower(str(ROOT / OK), str(out), NO_COMPILE)
    monkeypatch.undo()
    assert res.exit_code == 2 and [d.code for d in res.diagnostics] == ["FX-IO-001"]
    assert files_of(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_fifo_named_manifest_in_the_output_folder_never_blocks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "manifest.json")
    res = lower(str(ROOT / OK), str(out), NO_COMPILE)
    assert res.exit_code == 2 and [d.code for d in res.diagnostics] == ["FX-IO-002"]
