"""The benchmarks under bench/ run (at small sizes) and print what they measure: a benchmark that
no longer runs measures nothing. They are scripts, not timed tests: nothing here asserts a time."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

RUNS = {
    "bench_check.py": ["--reduced-layers", "1", "--reduced-tokens", "64"],
    "bench_gen.py": ["--tokens", "64", "--only", "llama-3.1-8b"],
    "bench_cache.py": ["--jobs", "2", "--paths", "corpus/ordering/ok"],
    "bench_jobs.py": ["--jobs", "2", "--policy", "corpus/ordering/fail/kv-offload-unordered.fx", "--folder", "corpus/ordering/ok"],
    "bench_brute_force.py": ["--graphs", "3"],
    "bench_scale.py": ["--only", "p4,p5,p7,curve,family-curve", "--p4-tokens", "64", "--p4-layers", "1,2",
                       "--p5-tokens", "256", "--max-edges", "1500"],
    # two races and the budget case (cvc5 decides queries Z3 leaves unknown): every column runs
    "bench_solvers.py": ["--paths", "corpus/ordering/fail/copy-out-during-load-back.fx",
                         "corpus/ordering/fail/cxl-header-plain-stores.fx", "corpus/solver"],
    "bench_certify.py": ["--layers", "1", "--tokens", "64"],
    "bench_lower.py": ["--policy", "corpus/ordering/ok/kv-offload-ordered.fx", "--no-kernel"],
    "mutants.py": ["--sample", "2", "--seed", "1", "--no-real"],  # tests/test_mutants.py scores a sample
    "fuzz.py": ["--seconds", "5", "--seed", "1", "--cli-every", "5"],
}

#: Words the figures of a run must print (a part that prints "not measured" or nothing fails)
SHOWS = {"bench_scale.py": ["P4  70B TP8", "time ratio", "P5  DeepSeek-V3", "P7  fxverify --version"]}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(RUNS))
def test_benchmark_runs(script: str) -> None:
    r = subprocess.run([sys.executable, str(ROOT / "bench" / script), *RUNS[script]], cwd=ROOT,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() and "Traceback" not in r.stderr
    for line in SHOWS.get(script, ()):
        assert line in r.stdout, r.stdout


def test_the_scaling_curve_shows_a_refused_input_as_its_diagnostic(tmp_path) -> None:
    """A policy the check refuses as input (here FX-LIM-001) is a row naming the code and the
    message, not a row of zeros that reads as an instant check."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "bench_scale.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    big = tmp_path / "big.fx"
    big.write_text('policy "big"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu0 size 1 MiB\n'
                   "region kv in s at 0 size 4 KiB owner gpu0\nflow f {\n  for i in 0..10000000000 {\n"
                   "    edge e[i]: write kv by gpu0.launch\n  }\n}\n")
    for mode in ("parse", "check"):
        r = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_scale.py"), "--worker", str(big), mode],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        x = __import__("json").loads(r.stdout.splitlines()[-1])
        row = bench._refused(8, 256, x)
        assert row is not None and "FX-LIM-001: range of 10000000000 iterations exceeds the limit" in row, (mode, x)
    assert bench._refused(8, 256, {"edges": 10, "wall": 1.0}) is None
