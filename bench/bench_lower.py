"""Benchmark ``fxverify lower`` on the real Llama-3.1-8B prefill policy (never as timed tests).

Measures, on this machine, for corpus/real/llama-3.1-8b-prefill.fx and the kernel target:
1. wall time per stage: check (the proof), lowering (plan + Z3 facts + C), clang, Linux verifier
   loads, and the BPF_PROG_TEST_RUN differential;
2. per program: instructions processed and peak states reported by the Linux verifier
   (``BPF_LOG_STATS``, as veristat reads them), stack depth;
3. the kernel-run agreement counts and the test-run rate (events per second).

The verifier figures should not grow with the number of edges: descriptors are map rows.

Run from the repository root (root or CAP_BPF needed for the kernel steps):
    python bench/bench_lower.py [--policy PATH] [--no-kernel]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fxverify.lower.driver import LowerOptions, lower  # noqa: E402

REAL = ROOT / "corpus/real/llama-3.1-8b-prefill.fx"


def main() -> int:
    """Run the benchmark and print a report; returns the lowering's exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default=str(REAL))
    ap.add_argument("--no-kernel", action="store_true", help="skip --kernel-verify and --kernel-run")
    args = ap.parse_args()
    kernel = not args.no_kernel
    with tempfile.TemporaryDirectory(prefix="fxverify-bench-") as tmp:
        t0 = time.perf_counter()
        res = lower(args.policy, str(Path(tmp) / "out"), LowerOptions(kernel_verify=kernel, kernel_run=kernel))
        total = time.perf_counter() - t0
        sizes = {p.name: p.stat().st_size for p in sorted((Path(tmp) / "out").glob("*"))} if res.written else {}
    print(f"policy: {args.policy}")
    if res.plan is not None:
        p = res.plan
        print(f"edges {len(p.edges)}, guard ops {len(p.ops)}, counters {len(p.countdown)}, "
              f"max ops per edge {p.max_ops}, programs {len(p.programs)}")
    for stage, secs in res.seconds.items():
        print(f"  {stage:<14} {secs:8.2f} s")
    print(f"  {'total':<14} {total:8.2f} s")
    if sizes:
        print("artifacts: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sizes.items()))
    if res.programs:
        print(f"{'program':<22} {'insns processed':>16} {'peak states':>12} {'total states':>13} {'stack':>10}")
        for pr in res.programs:
            print(f"{pr.name:<22} {pr.insns_processed or 0:>16} {pr.peak_states or 0:>12} "
                  f"{pr.total_states or 0:>13} {pr.stack_depth or '-':>10}"
                  + ("" if pr.accepted else "  REJECTED"))
    if res.run is not None:
        rr = res.run
        rate = rr.decisions_total / res.seconds["kernel_run"] if res.seconds.get("kernel_run") else 0.0
        print(f"kernel run: decisions agree {rr.decisions_agree}/{rr.decisions_total}, final state agrees "
              f"{rr.final_agree}/{rr.final_total} ({rate:.0f} events/s including final-state reads)")
    for d in res.diagnostics:
        print(f"{d.severity.value}[{d.code}]: {d.message}")
    return res.exit_code


if __name__ == "__main__":
    sys.exit(main())
