"""Benchmark ``check --jobs`` and ``check --executor dask://``, side by side in one run (never as
timed tests).

Measures, on this machine, ``fxverify check`` as the command line runs it, in a fresh process each
time, with ``--no-cache``:
1. big policies, one at a time (default: the real Llama-3.1-8B prefill, 37,222 edges, 362,528
   obligations, and the real DeepSeek-V3 TP8 policy, 4,577 edges, 39,944 obligations), which
   ``--jobs N`` splits into shards: ``--jobs 1`` vs ``--jobs N``, run right after each other;
2. a folder of policies (default: the corpus without corpus/real), one policy per worker:
   ``--jobs 1`` vs ``--jobs N``;
3. both again on a ``distributed.LocalCluster`` of N single-threaded worker processes started by
   this script (``--executor dask://HOST:PORT``), once warm (a first small check imports
   fxverify on its workers), against ``--jobs N`` on local processes.
Before and after, it measures the ceiling of any split on this machine at this moment: the same
pure-Python loop run in one process, then cut in N equal parts run in N processes (no work
repeated, nothing shared): on a machine shared with other jobs (the kernel's scheduler may give
one session a fixed share of the CPUs, whatever its number of processes) that ratio can be below
1x, and no ``--jobs N`` can do better than it. Prints wall seconds and their ratios, the CPU seconds each run used (its worker processes
included; a LocalCluster's workers are this script's, so they are not counted), the load average
of the machine before and after (others may share it), and whether every run printed the same
report.

Run from the repository root:
  python bench/bench_jobs.py [--jobs 2] [--policy P]... [--folder D...] [--exclude GLOB]... [--no-dask]
                             [--no-folder]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _check(paths: list[str], *opts: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command and its worker processes, report)."""
    t0, c0 = time.perf_counter(), _children_cpu()
    r = subprocess.run([sys.executable, "-m", "fxverify", "check", *paths, "--quiet", "--format", "json", "--no-cache", *opts],
                       cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    dt, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if r.returncode not in (0, 1):
        sys.exit(f"fxverify check {' '.join(paths)} {' '.join(opts)} failed with exit code {r.returncode}:\n{r.stderr}")
    return dt, cpu, r.stdout


def _differing(a: str, b: str) -> list[str]:
    """The policies whose results differ between two JSON reports."""
    ra, rb = (json.loads(x)["results"] for x in (a, b))
    return [x.get("policy", "?") for x, y in zip(ra, rb) if x != y] + (["(the number of results)"] if len(ra) != len(rb) else [])


def _children_cpu() -> float:
    """User and system CPU seconds of every finished child process (the command's workers
    included: they are its children, waited for)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x += i
    return x


def _ceiling(jobs: int, n: int = 40_000_000) -> str:
    """The wall time of ``n`` loop steps in this process against ``n / jobs`` in each of ``jobs``
    spawned processes (started before the clock runs), as a one-line summary."""
    import multiprocessing

    t0 = time.perf_counter()
    _spin(n)
    one = time.perf_counter() - t0
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        pool.map(_spin, [1] * jobs)  # started and warm
        t0 = time.perf_counter()
        pool.map(_spin, [n // jobs] * jobs)
        split = time.perf_counter() - t0
    return f"one process {one:.2f} s, {jobs} processes {split:.2f} s: {one / split:.2f}x"


def _row(name: str, t: float, cpu: float, base: float) -> None:
    print(f"  {name:<30}{t:>9.2f} s{base / t:>9.2f}x{cpu:>11.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--policy", action="append", default=None,
                    help="a policy checked on its own (repeat; default: the 8B prefill and DeepSeek-V3 TP8)")
    ap.add_argument("--no-folder", action="store_true", help="skip the folder runs")
    ap.add_argument("--folder", nargs="+", default=["corpus"], help="paths of the folder run")
    ap.add_argument("--exclude", action="append", default=None, help="--exclude of the folder run (default: corpus/real)")
    ap.add_argument("--no-dask", action="store_true", help="skip the LocalCluster runs")
    a = ap.parse_args()
    n = str(a.jobs)
    folder = a.folder + [x for g in (a.exclude if a.exclude is not None else ["corpus/real"]) for x in ("--exclude", g)]
    policies = a.policy or ["corpus/real/llama-3.1-8b-prefill.fx", "corpus/real/deepseek-v3-tp8-p4d.fx"]
    kinds = [(f"policy {p}", [p]) for p in policies] + ([] if a.no_folder else [("folder", folder)])
    print(f"machine: {os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}")
    print(f"ceiling of a split in {n} now (the same loop): {_ceiling(a.jobs)}")
    runs: dict[str, dict[str, tuple[float, float, str]]] = {kind: {} for kind, _paths in kinds}
    loads: dict[str, float] = {}
    for kind, paths in kinds:
        loads[kind] = os.getloadavg()[0]
        runs[kind]["jobs 1"] = _check(paths, "--jobs", "1")
        runs[kind][f"jobs {n}"] = _check(paths, "--jobs", n)
    if not a.no_dask:
        from distributed import LocalCluster

        # The workers' own logs are silenced below CRITICAL: at shutdown a worker whose heartbeat
        # meets the closing scheduler logs "Failed to communicate with scheduler during heartbeat"
        # with a traceback (distributed's Worker.heartbeat), which says nothing of the checks. A
        # check that fails on the cluster still shows: its fxverify command exits non-zero.
        with LocalCluster(n_workers=a.jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.CRITICAL) as cluster:
            address = cluster.scheduler_address.replace("tcp://", "dask://")
            # A cluster's workers import fxverify on their first task; a gate meets them warm.
            t_cold, _cpu, _out = _check([str(ROOT / "corpus/ordering/ok/kv-offload-ordered.fx")], "--executor", address)
            print(f"LocalCluster of {n}: first check on fresh workers {t_cold:.2f} s (not counted below)")
            for kind, paths in kinds:
                runs[kind][f"LocalCluster of {n}"] = _check(paths, "--executor", address)
    same = True
    for kind, paths in kinds:
        got = runs[kind]
        print(f"{kind.split()[0]}: fxverify check {' '.join(paths)} (load average {loads[kind]:.1f} before)")
        print(f"  {'run':<30}{'wall':>11}{'vs jobs 1':>10}{'CPU':>13}")
        base = got["jobs 1"][0]
        for name, (t, cpu, _out) in got.items():
            _row(name, t, cpu, base)
        if f"LocalCluster of {n}" in got:
            print(f"  LocalCluster / local jobs {n}: {got[f'LocalCluster of {n}'][0] / got[f'jobs {n}'][0]:.2f}x the time")
        outs = {out for _t, _c, out in got.values()}
        print(f"  identical reports: {len(outs) == 1}")
        for name, (_t, _c, out) in got.items():
            for path in _differing(got["jobs 1"][2], out):
                print(f"    {name}: the result of {path} differs from --jobs 1")
        same = same and len(outs) == 1
    print(f"load average after {os.getloadavg()[0]:.1f}")
    print(f"ceiling of a split in {n} now (the same loop): {_ceiling(a.jobs)}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
