"""Benchmark ``fxverify check`` on the real Llama-3.1-8B prefill policy, with ratios measured side
by side in one run (never as timed tests).

Measures, on this machine:
1. parse + resolve only (the floor) vs the full check of corpus/real/llama-3.1-8b-prefill.fx,
   whose target is under 60 s on a 2-core machine;
2. on a reduced variant of the same policy (fewer layers and tokens, made by the same generator
   from the same inputs), the pruned check vs the naive encoding (``--no-prune``: every obligation
   to the solver).

Run from the repository root:  python bench/bench_check.py [--reduced-layers 2 --reduced-tokens 256]
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
from fxverify.gen.prefill import PrefillOptions, generate_prefill  # noqa: E402
from fxverify.pipeline import CheckOptions, check  # noqa: E402
from fxverify.resolve import load_policy  # noqa: E402
from fxverify.source import SourceMap  # noqa: E402

REAL = ROOT / "corpus/real/llama-3.1-8b-prefill.fx"


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _reduced(tokens: int, layers: int) -> str:
    """The real policy's options (corpus/real/generate.py) with fewer tokens and layers."""
    model, _ = load_model(str(ROOT / "corpus/inputs/models/meta-llama--Meta-Llama-3.1-8B.json"), SourceMap())
    cxl, _ = load_cxl([str(ROOT / "corpus/inputs/cxl/cxl_test-list-BDMu-root-mem3.json")], SourceMap())
    out, diags = generate_prefill(model, None, cxl, PrefillOptions(tokens=tokens, layers=layers, disaggregate=True,
                                                                   name="reduced"))
    assert out is not None, diags
    return out.text


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reduced-layers", type=int, default=4)
    ap.add_argument("--reduced-tokens", type=int, default=256)
    args = ap.parse_args()

    (pol, _), t_parse = _timed(lambda: load_policy(str(REAL), SourceMap()))
    res, t_check = _timed(lambda: check(str(REAL)))
    total = len(res.outcomes)
    print(f"real policy: {REAL.relative_to(ROOT)}")
    print(f"  edges {len(pol.edges)}, regions {len(pol.regions)}, obligations {total}, solver calls {res.solver_calls}")
    print(f"  verdict {res.verdict.value if res.verdict else 'error'}")
    print(f"  parse+resolve {t_parse:.2f} s | full check {t_check:.2f} s | check/parse ratio {t_check / t_parse:.2f}")
    for fam, c in sorted(res.counts().items()):
        print(f"    {fam:<11} {c['proved'] + c['refuted'] + c['unknown']:>7} obligations")

    with tempfile.TemporaryDirectory() as d:
        small = Path(d) / "reduced.fx"
        small.write_text(_reduced(args.reduced_tokens, args.reduced_layers))
        r1, t_pruned = _timed(lambda: check(str(small)))
        r2, t_naive = _timed(lambda: check(str(small), CheckOptions(prune=False)))
    same = [(v.key, v.verdict) for v in r1.outcomes] == [(v.key, v.verdict) for v in r2.outcomes]
    print(f"reduced policy: {args.reduced_layers} layers, {args.reduced_tokens} tokens, {len(r1.outcomes)} obligations")
    print(f"  pruned {t_pruned:.2f} s ({r1.solver_calls} solver calls) | naive all-solver {t_naive:.2f} s "
          f"({r2.solver_calls} solver calls) | naive/pruned ratio {t_naive / t_pruned:.1f} | same verdicts: {same}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
