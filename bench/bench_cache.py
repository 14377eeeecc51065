"""Benchmark the result cache and ``--jobs`` on the whole corpus, side by side in one run (never as
timed tests).

Measures, on this machine, ``fxverify check corpus`` (every policy, the two real Llama-3.1-8B
prefill policies included) as the command line runs it, in a fresh process each time:
1. ``--no-cache`` (no cache at all);
2. a cold cache (an empty ``--cache-dir``) and then the warm cache (the same folder again);
3. ``--jobs 1`` vs ``--jobs N`` with ``--no-cache``.
It also checks that every run printed the same report, and prints the cache counts (``--stats``).

Run from the repository root:  python bench/bench_cache.py [--jobs 2] [--paths corpus]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _check(paths: list[str], *opts: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "fxverify", "check", *paths, "--quiet", "--format", "json", *opts],
                       cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"fxverify check failed with exit code {r.returncode}:\n{r.stderr}")
    return dt, r.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--paths", nargs="+", default=["corpus"])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fxverify-bench-cache-") as cache:
        t_none, out_none = _check(a.paths, "--no-cache")
        t_cold, out_cold = _check(a.paths, "--cache-dir", cache)
        t_warm, out_warm = _check(a.paths, "--cache-dir", cache)
        _, stats_cold_warm = _check(a.paths, "--cache-dir", cache, "--stats")
    t_j1 = t_none
    t_jn, out_jn = _check(a.paths, "--no-cache", "--jobs", str(a.jobs))
    same = out_none == out_cold == out_warm == out_jn
    stats = json.loads(stats_cold_warm)["stats"]
    print(f"fxverify check {' '.join(a.paths)}  ({json.loads(out_none)['summary']['policies']} policies)")
    print(f"{'run':<28}{'seconds':>10}{'ratio':>10}")
    for name, t in [("no cache", t_none), ("cold cache", t_cold), ("warm cache", t_warm),
                    ("no cache, --jobs 1", t_j1), (f"no cache, --jobs {a.jobs}", t_jn)]:
        print(f"{name:<28}{t:>10.2f}{t / t_none:>10.2f}")
    print(f"warm-cache counts: policies from cache {stats['policy_hits']}, checked {stats['policy_misses']}, "
          f"queries solved {stats['solved']}")
    print(f"identical reports: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
