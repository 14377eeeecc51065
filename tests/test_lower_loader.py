"""The lowering's objects stand alone in the libbpf toolchain: the generated skeleton loader
(`loader.c` over `<stem>.skel.h`) is compiled with `cc ... -lbpf`, loads and fills the tables as
root, pins the shared maps by name and the programs under a bpf filesystem, and `bpftool map dump`
decodes the descriptor rows and the observation records through BTF. The programs the loader
pinned then decide as fxverify's own runs do. Every bpf filesystem here is a private mount in a
temporary folder, unmounted afterwards. Skips only when cc, libbpf's headers, bpftool, clang, the
bpf() call or a bpffs mount are unavailable, and says which."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fxverify.lower import artifacts, libbpf
from fxverify.lower.differential import events_of, serialise, wavefront
from fxverify.lower.driver import LowerOptions, lower
from fxverify.lower.kernel import FX_EVENT
from fxverify.lower.loader import bpftool_path
from fxverify.replay.simulate import Simulator
from tests.conftest import ROOT

_NO_BPF = libbpf.bpf_available()
_CC = shutil.which("cc")
pytestmark = [
    pytest.mark.skipif(artifacts.clang_path() is None, reason="clang is not installed (apt-get install clang)"),
    pytest.mark.skipif(bpftool_path() is None, reason="bpftool is not installed (apt-get install bpftool)"),
    pytest.mark.skipif(_CC is None or not Path("/usr/include/bpf/libbpf.h").exists(),
                       reason="cc or libbpf's headers are missing (apt-get install gcc libbpf-dev)"),
    pytest.mark.skipif(_NO_BPF is not None, reason=f"bpf() is unavailable: {_NO_BPF}"),
]

POLICY = "corpus/maps/ok/per-gpu-counter-aggregated.fx"


@pytest.fixture
def bpffs(tmp_path: Path):
    """A private bpf filesystem mounted at a temporary folder (so no pin outlives the test or meets
    another run's), unmounted afterwards."""
    root = tmp_path / "bpffs"
    root.mkdir()
    r = subprocess.run(["mount", "-t", "bpf", "bpf", str(root)], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a bpf filesystem: {r.stderr.strip()}")
    try:
        yield root
    finally:
        subprocess.run(["umount", str(root)], check=False)


def _build(out: Path) -> Path:
    """Compile the generated loader in ``out`` with the system compiler against libbpf."""
    r = subprocess.run([_CC, "-O2", "-Wall", "-Werror", "-o", "loader", "loader.c", "-lbpf"], cwd=out,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return out / "loader"


def _dump(path: Path) -> list[dict]:
    """``bpftool -j map dump pinned PATH``: the entries as bpftool decodes them through BTF
    (``formatted``: ``{"key", "value"}`` with the struct's field names)."""
    r = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    entries = json.loads(r.stdout)
    assert all("formatted" in e for e in entries), "bpftool found no BTF for the map"
    return [e["formatted"] for e in entries]


def test_skeleton_loader_fills_pins_and_bpftool_decodes(tmp_path: Path, bpffs: Path) -> None:
    out = tmp_path / "o"
    res = lower(str(ROOT / POLICY), str(out), LowerOptions())
    assert res.exit_code == 0, res.diagnostics
    man = json.loads((out / "manifest.json").read_text())
    assert man["loader"]["skeletons"] == {f"{d}.skel.h": f"fx_{d}" for d in man["devices"]}
    loader = _build(out)
    pins = bpffs / "fx"
    r = subprocess.run([str(loader), "--pin-root", str(pins)], cwd=out, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tables filled from maps.init.json" in r.stdout
    init = json.loads((out / "maps.init.json").read_text())
    # The descriptor tables, decoded by bpftool through BTF, are maps.init.json's rows.
    for table in ("fx_edges", "fx_ops", "fx_own"):
        fields = init[table]["fields"]
        rows = [[e["value"][f] for f in fields] for e in _dump(pins / table)]
        assert rows == init[table]["rows"], table
    # Shared maps are pinned by name; each device's ring buffer is its own and is not.
    maps = {m["name"]: m for m in json.loads((out / "maps.json").read_text())["maps"]}
    pinned = {p.name for p in pins.iterdir()} - {"progs"}
    assert pinned == {m["c_name"] for m in maps.values() if m["pinning"] == "by_name"}
    assert "fx_events" not in pinned and "pm_kv_sent" in pinned
    # The programs the loader pinned decide as fxverify's own runs do: all proceed, in HB order.
    progs = {(p["device_id"], p["hook_id"]): p["name"] for p in man["programs"]}
    sched = serialise(wavefront(Simulator(res.policy), len(res.policy.edges)))
    for e, ph in events_of(sched):
        dev, hook = init["fx_edges"]["rows"][e][:2]
        fd = libbpf.obj_get(str(pins / "progs" / progs[(dev, hook)]))
        try:
            ret, ctx = libbpf.test_run(fd, FX_EVENT.pack(e, ph, 0, 0, 0, 0))
        finally:
            os.close(fd)
        assert ret == 0 and FX_EVENT.unpack(ctx)[2] == 0, (e, ph, FX_EVENT.unpack(ctx))
    assert {e["value"]["state"] for e in _dump(pins / "fx_state")} == {2}
    # Every observation is in the trail, decoded as struct fx_obs.
    trail = [e["value"] for e in _dump(pins / "fx_trail") if e["value"]["kind"]]
    assert {"kind", "edge", "device", "decision", "reason", "a", "c", "d"} == set(trail[0])
    n = len(res.policy.edges)
    assert sum(1 for o in trail if o["kind"] == 1) == n and sum(1 for o in trail if o["kind"] == 2) == n
    # A second loader reuses the pinned, filled tables: the edges stay done.
    r = subprocess.run([str(loader), "--pin-root", str(pins)], cwd=out, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and "tables reused" in r.stdout, r.stdout + r.stderr
    assert {e["value"]["state"] for e in _dump(pins / "fx_state")} == {2}
    r = subprocess.run([str(loader), "--unpin", "--pin-root", str(pins)], cwd=out, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and not pins.exists(), r.stdout + r.stderr


@pytest.mark.parametrize("target", ["dputime", "bpftime"])
def test_loader_builds_for_every_target(tmp_path: Path, bpffs: Path, target: str) -> None:
    """The loader of a dputime lowering loads its XDP and tc programs (attaching needs an
    interface: `--ifname`); a bpftime lowering's loader builds (it runs under bpftime's syscall
    server)."""
    out = tmp_path / "o"
    res = lower(str(ROOT / "corpus/ownership/ok/dpu-reads-leased-kv.fx"), str(out), LowerOptions(target=target))
    assert res.exit_code == 0, res.diagnostics
    loader = _build(out)
    if target == "dputime":
        r = subprocess.run([str(loader), "--pin-root", str(bpffs / "fx")], cwd=out, capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stdout + r.stderr
        assert {p.name for p in (bpffs / "fx" / "progs").iterdir()} == {p.name for p in res.plan.programs}
