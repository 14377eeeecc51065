"""Brute force at scale: the checker against the concrete simulator on many random graphs.

Runs the property of ``tests/test_sim_vs_smt.py`` (``agreement``) on ``--graphs`` random policies
of up to five edges from ``tests/policies.py``: several address spaces at overlapping numbers,
nested regions, several handoffs and leases on one edge, alternative fabric paths, every map
class and transform. For each graph the simulator enumerates every schedule; the refuted codes
must equal what it finds, and every ``(code, edges)`` violation must be blamed on those edges by
a refuted obligation. Stops at the first disagreement (hypothesis shrinks it and prints it).

Prints graphs, obligations, violations compared and the time per graph. Not a timed test.

Run from the repository root:  python bench/bench_brute_force.py [--graphs 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.policies import policies  # noqa: E402
from tests.test_sim_vs_smt import agreement  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphs", type=int, default=10_000, help="random graphs to compare (default: 10000)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default: 0)")
    args = ap.parse_args()
    totals = {"graphs": 0, "obligations": 0, "violations": 0}

    @seed(args.seed)
    @settings(max_examples=args.graphs, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(policies(max_edges=5))
    def one(policy) -> None:
        obligations, violations = agreement(policy)
        totals["graphs"] += 1
        totals["obligations"] += obligations
        totals["violations"] += violations

    t0 = time.perf_counter()
    one()
    dt = time.perf_counter() - t0
    print(f"brute force vs checker: {totals['graphs']} graphs, {totals['obligations']} obligations, "
          f"{totals['violations']} (code, edges) violations compared, all agree")
    print(f"time: {dt:.1f} s, {1000 * dt / max(1, totals['graphs']):.1f} ms per graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
