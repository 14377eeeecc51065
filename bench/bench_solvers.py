"""Benchmark the solvers side by side: the corpus checked with ``--solver z3``, ``cvc5`` and
``portfolio`` in one run (never as timed tests).

Measures, on this machine, ``fxverify check PATHS --no-cache`` as the command line runs it, in a
fresh process per solver, and with ``--no-prune`` too (every obligation to the solver, so the
solvers, not the fast proofs, dominate). Prints the wall times, their ratios to Z3, the number of
solver calls, the unknown obligations, and whether every solver reached the same policy verdicts.
A policy's own ``rlimit`` counts each solver's resource units, which differ: with ``--no-prune``
cvc5 decides, within ``corpus/solver/fail/budget-exhausted.fx``'s tiny budget, two queries Z3
leaves unknown (the policy stays unknown: its race obligation is undecided by both).

Run from the repository root:  python bench/bench_solvers.py [--paths corpus/*/ok corpus/*/fail]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = ("z3", "cvc5", "portfolio")


def _check(paths: list[str], *opts: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "fxverify", "check", *paths, "--quiet", "--no-cache", "--format", "json",
                        *opts], cwd=ROOT, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"fxverify check failed with exit code {r.returncode}:\n{r.stderr}")
    return dt, json.loads(r.stdout)


def _verdicts(report: dict) -> list:
    return [(r["policy"], r["verdict"]) for r in report["results"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", nargs="+", default=[str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("corpus/*/ok"))]
                    + [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("corpus/*/fail"))])
    a = ap.parse_args()
    print(f"fxverify check {' '.join(a.paths)} --no-cache")
    print(f"{'mode':<12}{'solver':<12}{'seconds':>10}{'ratio':>8}{'calls':>8}{'unknown':>9}  same policy verdicts as z3")
    ok = True
    for mode, extra in (("pruned", ()), ("--no-prune", ("--no-prune",))):
        base_t, base = 0.0, None
        for solver in SOLVERS:
            t, rep = _check(a.paths, "--solver", solver, *extra)
            if base is None:
                base_t, base = t, rep
            same = _verdicts(rep) == _verdicts(base)
            ok = ok and same
            calls = sum(r["solver_calls"] for r in rep["results"])
            unknown = rep["summary"]["obligations_unknown"]
            print(f"{mode:<12}{solver:<12}{t:>10.2f}{t / base_t:>8.2f}{calls:>8}{unknown:>9}  {same}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
