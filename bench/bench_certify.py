"""Benchmark ``fxverify check --certify``: the plain check, ``--certify`` (the independent checker
re-walks every fast proof's certificate in Python) and ``--certify smt`` (every certificate as an
SMT query for the solver), side by side on one generated prefill policy, with the ratios.

The policy is ``fxverify gen prefill`` output for a model config and a ``cxl list`` listing of
``corpus/inputs/`` (the same generator and inputs as ``corpus/real/``), cut to ``--layers`` and
``--tokens`` so that the SMT mode, one query per fast proof, stays minutes, not hours.

Run from the repository root:  python bench/bench_certify.py [--model PATH --layers 2 --tokens 256] [--no-smt]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fxverify.gen.cxl_list import load_cxl
from fxverify.gen.hf_config import load_model
from fxverify.gen.prefill import PrefillOptions, generate_prefill
from fxverify.pipeline import CheckOptions, check
from fxverify.source import SourceMap


def _policy(model: str, tokens: int, layers: int | None) -> str:
    cfg, _ = load_model(model, SourceMap())
    cxl, _ = load_cxl([str(ROOT / "corpus/inputs/cxl/cxl_test-list-BDMu-root-mem3.json")], SourceMap())
    out, diags = generate_prefill(cfg, None, cxl, PrefillOptions(tokens=tokens, layers=layers, disaggregate=True,
                                                                 name="bench-certify"))
    assert out is not None, diags
    return out.text


def _timed(path: str, certify: str | None):
    t0 = time.perf_counter()
    r = check(path, CheckOptions(certify=certify))
    return r, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "corpus/inputs/models/meta-llama--Meta-Llama-3.1-8B.json"))
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--no-smt", action="store_true", help="skip the SMT mode (one solver query per fast proof)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "bench-certify.fx")
        Path(path).write_text(_policy(args.model, args.tokens, args.layers))
        _timed(path, None)  # warm-up: imports and the solver's first load are not the check's cost
        plain, t_plain = _timed(path, None)
        runs = [("--certify", *_timed(path, "python"))]
        if not args.no_smt:
            runs.append(("--certify smt", *_timed(path, "smt")))
    fast = sum(1 for o in plain.outcomes if o.method != "solver")
    print(f"policy: {Path(args.model).stem}, {args.layers} layers, {args.tokens} tokens: {len(plain.outcomes)} obligations, "
          f"{fast} fast proofs, {plain.solver_calls} solver calls")
    print(f"  plain check      {t_plain:8.2f} s")
    ok = True
    for name, r, t in runs:
        good = r.certified == fast and r.certify_rejected == 0
        ok = ok and good
        print(f"  {name:<16} {t:8.2f} s  ratio {t / t_plain:6.2f}  certificates {r.certified}, rejected {r.certify_rejected}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
