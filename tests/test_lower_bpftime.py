"""The bpftime target as bpftime runs it.

- The support table (``fxverify/lower/bpftime_support.json``) names its upstream source and commit.
- Every object a bpftime lowering compiles uses only program sections and helper ids of that table
  for the side it runs on (the host for ``<device>.bpf.o``, the GPU for ``<device>.cuda.bpf.o``):
  read from the object's instructions with pyelftools and, independently, from ``llvm-objdump``'s
  disassembly. A kernel-target object fails the same check (``syscall``, ``bpf_loop``).
- GPU hooks are uprobes on CUDA runtime calls; kprobe/kretprobe only for a named CUDA kernel.
- The host programs read the calls' real arguments: with a stand-in CUDA runtime library (the
  same entry points and CUDA 12 signatures, doing nothing), the generated loader attaches them as
  Linux uprobes, binds the calls' handles to edges, and an application's calls in a valid order
  run every edge, while a copy submitted before the kernel launch it waits for was synchronised
  is deferred. bpftime itself and a GPU are not on the test machine; Linux runs the same host
  programs.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from fxverify.lower import artifacts, libbpf
from fxverify.lower.driver import LowerOptions, lower
from fxverify.lower.elf import bpftime_problems, object_calls
from fxverify.lower.loader import bpftool_path
from fxverify.lower.plan import REASON_ID
from fxverify.lower.targets import CUDA_CALLS, bpftime_support
from tests.conftest import ROOT
from tests.test_cli import run

HAS_CLANG = artifacts.clang_path() is not None
needs_clang = pytest.mark.skipif(not HAS_CLANG, reason="clang is not installed (apt-get install clang)")
OBJDUMP = shutil.which("llvm-objdump")

CASES = [
    ("corpus/ownership/ok/dpu-reads-leased-kv.fx", ()),
    ("corpus/ownership/ok/dpu-reads-leased-kv.fx", (("gpu0", "launch", "_Z9vectorAddPKfS0_Pf"),)),
    ("corpus/maps/ok/per-gpu-counter-aggregated.fx", ()),
    ("corpus/ownership/ok/pinned-free-after-copy.fx", ()),
]


def test_support_table_names_its_upstream_source() -> None:
    table = bpftime_support()
    assert table["upstream"]["repository"] == "https://github.com/eunomia-bpf/bpftime"
    assert re.fullmatch(r"[0-9a-f]{40}", table["upstream"]["commit"])
    for side in ("host", "gpu"):
        assert table["helpers"][side]["sources"] and table["sections"][side]
    host = {int(k) for k in table["helpers"]["host"]["ids"]}
    gpu = {int(k) for k in table["helpers"]["gpu"]["ids"]}
    assert {1, 2, 3, 14, 36, 112, 130} <= host and 181 not in host  # no bpf_loop
    assert gpu == {1, 2, 3, 6, 14, 25, *range(501, 512)}  # the trampoline's _bpf_helper_ext_NNNN
    assert set(table["sections"]["host"]) == {"uprobe", "uretprobe"} and set(table["sections"]["gpu"]) == {"kprobe", "kretprobe"}


def _objdump_calls(path: Path) -> dict[str, set[int]]:
    """Helper ids per section from llvm-objdump's disassembly (``call N``; subprogram calls show
    as ``call -1`` with a relocation)."""
    text = subprocess.run([OBJDUMP, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    out: dict[str, set[int]] = {}
    section = ""
    for line in text.splitlines():
        m = re.match(r"Disassembly of section (.+):", line)
        if m:
            section = m.group(1)
            out[section] = set()
        m = re.search(r"\bcall (\d+)$", line.strip())
        if m and section:
            out[section].add(int(m.group(1)))
    return out


@needs_clang
@pytest.mark.parametrize("path, kernels", CASES, ids=lambda x: Path(x).stem if isinstance(x, str) else
                         ("cuda-kernel" if x else "host"))
def test_objects_use_only_what_bpftime_implements(tmp_path: Path, path: str, kernels: tuple) -> None:
    out = tmp_path / "o"
    res = lower(str(ROOT / path), str(out), LowerOptions(target="bpftime", cuda_kernels=kernels))
    assert res.exit_code == 0, [d.message for d in res.diagnostics]
    table = bpftime_support()
    man = json.loads((out / "manifest.json").read_text())
    objects = sorted({p["object"] for p in man["programs"]})
    assert objects and all((out / o).exists() for o in objects)
    for o in objects:
        side = "gpu" if o.endswith(".cuda.bpf.o") else "host"
        calls = object_calls((out / o).read_bytes())
        helpers = {int(k) for k in table["helpers"][side]["ids"]}
        assert calls.programs and all(s.split("/")[0] in table["sections"][side] for s in calls.programs), calls.programs
        assert calls.helpers() <= helpers, (o, sorted(calls.helpers() - helpers))
        assert bpftime_problems((out / o).read_bytes(), side) == []
        if OBJDUMP:
            assert {s: set(ids) for s, ids in calls.sections.items()} == _objdump_calls(out / o)
    # Every object's check is a proved lowering fact, with the commit it was checked against.
    facts = {f["key"]: f for f in json.loads((out / "obligations.json").read_text())["fxverify_facts"]}
    for o in objects:
        fact = facts[f"bpftime-support:{o.removesuffix('.bpf.o')}"]
        assert fact["status"] == "proved" and table["upstream"]["commit"][:12] in fact["detail"]
    gpu_devices = {d.name for d in res.policy.devices if d.kind.value == "gpu"}
    for p in man["programs"]:
        if p["kind"] in ("kprobe", "kretprobe"):  # only where a named CUDA kernel is the hook
            assert (p["device"], p["hook"], p["symbol"]) in kernels and p["object"].endswith(".cuda.bpf.o")
        elif p["device"] in gpu_devices and p["hook"] in CUDA_CALLS:
            assert p["symbol"] == CUDA_CALLS[p["hook"]].symbol and p["section"].endswith(":" + p["symbol"])
        assert p["kind"] != "syscall"


@needs_clang
def test_the_check_catches_what_bpftime_cannot_run(tmp_path: Path) -> None:
    """A kernel-target object has a `syscall` section and calls bpf_loop (181): the check says
    so, so it can fail."""
    res = lower(str(ROOT / CASES[0][0]), str(tmp_path / "o"), LowerOptions(target="kernel"))
    assert res.exit_code == 0
    problems = bpftime_problems((tmp_path / "o" / "gpu0.bpf.o").read_bytes(), "host")
    assert any("`syscall`" in p for p in problems) and any("helper 181" in p for p in problems)
    dpu = (tmp_path / "o" / "dpu0.bpf.o").read_bytes()
    assert any("helper 130" in p for p in bpftime_problems(dpu, "gpu"))  # no ring buffer inside a CUDA kernel


UNORDERED = """policy "two-launches"

fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 1 GiB
region a in hbm0 at 0x0 size 1 MiB owner gpu0
region b in hbm0 at 0x10_0000 size 1 MiB owner gpu0

flow f {
  edge wa: write a by gpu0.launch
  edge wb: write b by gpu0.launch
}
"""


def test_a_kernel_probe_needs_its_launches_in_order(tmp_path: Path) -> None:
    """A CUDA kernel's probes get no argument that tells launches apart, so the edges of a hook
    bound to one must be a happens-before chain (FX-BPF-003); from host CUDA calls they need not."""
    src = tmp_path / "p.fx"
    src.write_text(UNORDERED)
    opts = LowerOptions(target="bpftime", compile=False, cuda_kernels=(("gpu0", "launch", "_Z1kv"),))
    res = lower(str(src), str(tmp_path / "o"), opts)
    assert res.exit_code == 1 and [d.code for d in res.diagnostics if d.is_error] == ["FX-BPF-003"]
    assert lower(str(src), str(tmp_path / "o"), LowerOptions(target="bpftime", compile=False)).exit_code == 0
    src.write_text(UNORDERED.replace("by gpu0.launch\n}", "by gpu0.launch after wa\n}"))
    assert lower(str(src), str(tmp_path / "o"), opts).exit_code == 0


@pytest.mark.parametrize("args, code", [
    (["--cuda-kernel", "gpu0.launch=_Z1kv"], "FX-USE-002"),  # kernel target
    (["--target", "bpftime", "--cuda-kernel", "gpu0.launch"], "FX-USE-005"),
    (["--target", "bpftime", "--cuda-kernel", "gpu0.nope=_Z1kv"], "FX-USE-005"),
    (["--target", "bpftime", "--cuda-kernel", "dpu0.tx=_Z1kv"], "FX-USE-005"),
    (["--target", "bpftime", "--cuda-kernel", 'gpu0.launch=a"b'], "FX-USE-005"),
    (["--target", "bpftime", "--kernel-verify"], "FX-USE-002"),
])
def test_cuda_kernel_option_is_checked(tmp_path: Path, args: list[str], code: str) -> None:
    """Bad `--cuda-kernel` values and kernel steps on bpftime are usage errors (exit 2), written
    before anything runs."""
    no_compile = [] if "--kernel-verify" in args else ["--no-compile"]  # that pair is its own FX-USE-002
    r = run("lower", CASES[0][0], "-o", str(tmp_path / "o"), *no_compile, *args)
    assert r.returncode == 2 and f"[{code}]" in r.stdout + r.stderr and "Traceback" not in r.stdout + r.stderr, r.stdout
    assert not (tmp_path / "o").exists()


# ---- the host programs in Linux, on a stand-in CUDA runtime ------------------------------------

CUDA_POLICY = """policy "cuda-calls"

fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
}
space hbm0 on gpu0 size 1 GiB
region kv in hbm0 at 0x0 size 1 MiB owner gpu0
region stage in hbm0 at 0x10_0000 size 1 MiB owner gpu0

flow f {
  edge fill: write kv by gpu0.launch
  edge copy: move kv -> stage by gpu0.copy_done after fill
  edge drop: release kv free by gpu0.free after copy
}
"""

# The CUDA 12 runtime's entry points the target probes, doing nothing (cudaFree fails on handle 0xbad).
FAKE_CUDART = r"""
#include <stddef.h>
typedef struct { unsigned x, y, z; } dim3;
typedef void *cudaStream_t;
#define API __attribute__((noinline, used, visibility("default")))
#define BARRIER __asm__ volatile("" ::: "memory")
API int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t stream) { BARRIER; return 0; }
API int cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t stream) { BARRIER; return 0; }
API int cudaStreamSynchronize(cudaStream_t stream) { BARRIER; return 0; }
API int cudaDeviceSynchronize(void) { BARRIER; return 0; }
API int cudaFree(void *ptr) { BARRIER; return ptr == (void *)0xbad ? 1 : 0; }
"""

# Calls in a valid order ("ok"), or the copy submitted before the launch was synchronised ("early").
APP = r"""
#include <stdio.h>
#include <string.h>
#include <stddef.h>
typedef struct { unsigned x, y, z; } dim3;
typedef void *cudaStream_t;
int cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, cudaStream_t);
int cudaMemcpyAsync(void *, const void *, size_t, int, cudaStream_t);
int cudaStreamSynchronize(cudaStream_t);
int cudaDeviceSynchronize(void);
int cudaFree(void *);
int main(int argc, char **argv)
{
	cudaStream_t s = (cudaStream_t)0x5151, other = (cudaStream_t)0x6161;
	dim3 grid = {4, 1, 1}, block = {256, 1, 1};
	int early = argc > 1 && !strcmp(argv[1], "early");

	cudaLaunchKernel((void *)0x1000, grid, block, NULL, 128, s);
	cudaStreamSynchronize(other); /* another stream: the launch is still running */
	if (!early)
		cudaStreamSynchronize(s);
	cudaMemcpyAsync((void *)0x2000, (void *)0x1000, 1 << 20, 3, s);
	cudaMemcpyAsync((void *)0x7777, (void *)0x1000, 64, 3, s); /* not one of the policy's movements */
	cudaDeviceSynchronize();
	cudaFree((void *)0x3000);
	puts("done");
	return 0;
}
"""


@pytest.mark.skipif(not HAS_CLANG or bpftool_path() is None or shutil.which("cc") is None
                    or not Path("/usr/include/bpf/libbpf.h").exists(),
                    reason="needs clang, bpftool, cc and libbpf's headers (apt-get install clang bpftool gcc libbpf-dev)")
@pytest.mark.skipif(libbpf.bpf_available() is not None, reason=f"bpf() is unavailable: {libbpf.bpf_available()}")
@pytest.mark.skipif(not Path("/sys/bus/event_source/devices/uprobe/type").exists(), reason="the kernel has no uprobe PMU")
@pytest.mark.parametrize("order", ["ok", "early"])
def test_host_programs_read_real_cuda_arguments(tmp_path: Path, order: str) -> None:
    src = tmp_path / "cuda.fx"
    src.write_text(CUDA_POLICY)
    out = tmp_path / "o"
    res = lower(str(src), str(out), LowerOptions(target="bpftime"))
    assert res.exit_code == 0, [d.message for d in res.diagnostics]
    (tmp_path / "cudart.c").write_text(FAKE_CUDART)
    (tmp_path / "app.c").write_text(APP)
    cc = shutil.which("cc")
    for cmd in ([cc, "-O1", "-shared", "-fPIC", "-o", "libcudart.so", "cudart.c"],
                [cc, "-O1", "-o", "app", "app.c", "-L.", "-lcudart", f"-Wl,-rpath,{tmp_path}"]):
        subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", "loader", "loader.c", "-lbpf"], cwd=out, check=True, capture_output=True)
    fs = tmp_path / "bpffs"
    fs.mkdir()
    if subprocess.run(["mount", "-t", "bpf", "bpf", str(fs)], capture_output=True, check=False).returncode:
        pytest.skip("cannot mount a bpf filesystem")
    loader = None
    try:
        # The handles the application passes name the movements: the launch's kernel function,
        # the copy's destination, the freed pointer.
        loader = subprocess.Popen([str(out / "loader"), "--attach", "--pin-root", str(fs / "fx"),
                                   "--cuda-lib", str(tmp_path / "libcudart.so"), "--bind", "gpu0.launch=0x1000:0",
                                   "--bind", "gpu0.copy_done=0x2000:1", "--bind", "gpu0.free=0x3000:2"],
                                  cwd=out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert loader.stdout is not None
        for line in loader.stdout:
            if line.startswith("attached"):
                break
        else:
            pytest.fail(f"the loader did not attach: {loader.stderr.read() if loader.stderr else ''}")
        r = subprocess.run([str(tmp_path / "app"), order], capture_output=True, text=True, check=False, timeout=30)
        assert r.returncode == 0 and "done" in r.stdout, r.stderr
        states = [e["formatted"]["value"]["state"] for e in json.loads(subprocess.run(
            ["bpftool", "-j", "map", "dump", "pinned", str(fs / "fx" / "fx_state")], capture_output=True, text=True,
            check=True).stdout)]
        trail = [e["formatted"]["value"] for e in json.loads(subprocess.run(
            ["bpftool", "-j", "map", "dump", "pinned", str(fs / "fx" / "fx_trail")], capture_output=True, text=True,
            check=True).stdout) if e["formatted"]["value"]["kind"]]
    finally:
        if loader is not None:
            loader.send_signal(signal.SIGINT)
            loader.wait(timeout=30)
        subprocess.run(["umount", str(fs)], check=False)
    refused = [(o["edge"], o["decision"], o["reason"]) for o in trail if o["kind"] == 7]
    if order == "ok":
        # launch ends at its stream's synchronisation, the copy at the device's, the free at its return
        assert states == [2, 2, 2] and refused == [], trail
    else:
        # the copy starts before the launch it waits for ended: deferred (hb); the free then waits too
        assert states == [2, 0, 0], trail
        assert (1, 1, REASON_ID["hb"]) in refused and (2, 1, REASON_ID["hb"]) in refused
