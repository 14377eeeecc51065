"""Benchmark ``fxverify gen prefill`` and the check of what it generates, side by side in one run.

For each case (full-size real models on the real inputs of corpus/inputs/), prints the edge count,
the generation time, the check time, the check/generation ratio and the verdict; the peak RSS of
the whole run comes last. Never used as a timed test. Run from the repository root:

    python bench/bench_gen.py                  # Llama-3.1-8B, Llama-3.1-70B --tp 8, DeepSeek-V3
    python bench/bench_gen.py --tokens 2048    # the same at a shorter prompt
    python bench/bench_gen.py --only deepseek  # cases whose name contains the text
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fxverify.gen.cxl_list import load_cxl  # noqa: E402
from fxverify.gen.hf_config import load_model  # noqa: E402
from fxverify.gen.nccl_topo import load_topology  # noqa: E402
from fxverify.gen.prefill import PrefillOptions, generate_prefill  # noqa: E402
from fxverify.pipeline import check  # noqa: E402
from fxverify.source import SourceMap  # noqa: E402

IN = ROOT / "corpus/inputs"
CXL = [IN / "cxl/cxl_test-list-BEMPu.json", IN / "cxl/cxl_test-list-BDMu-root-mem3.json"]
CASES = [  # name, model, topology, tp
    ("llama-3.1-8b", "meta-llama--Meta-Llama-3.1-8B", None, 1),
    ("llama-3.1-70b-tp8-p4d", "meta-llama--Meta-Llama-3.1-70B", IN / "topology/aws-p4d-24xl-topo.xml", 8),
    ("deepseek-v3", "deepseek-ai--DeepSeek-V3", None, 1),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    print(f"{'case':<24}{'edges':>9}{'gen s':>8}{'check s':>9}{'check/gen':>10}  verdict")
    for name, model, topo, tp in CASES:
        if args.only not in name:
            continue
        t0 = time.perf_counter()
        m, _ = load_model(str(IN / "models" / f"{model}.json"), SourceMap())
        t = load_topology(str(topo), SourceMap())[0] if topo else None
        c, _ = load_cxl([str(p) for p in CXL], SourceMap())
        out, diags = generate_prefill(m, t, c, PrefillOptions(tokens=args.tokens, tp=tp, disaggregate=True, name=name))
        t_gen = time.perf_counter() - t0
        if out is None:
            print(f"{name:<24} generation failed: {diags[0].message}")
            continue
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / f"{name}.fx"
            p.write_text(out.text)
            t1 = time.perf_counter()
            res = check(str(p))
            t_check = time.perf_counter() - t1
        verdict = res.verdict.value if res.verdict else "error"
        print(f"{name:<24}{out.summary['edges']:>9}{t_gen:>8.2f}{t_check:>9.1f}{t_check / t_gen:>10.0f}  {verdict} "
              f"({len(res.outcomes)} obligations, {res.solver_calls} solver calls)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
