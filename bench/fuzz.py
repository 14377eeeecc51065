"""Fuzz fxverify check for a while: the grammar fuzzer and the byte mutator of ``tests/fuzzing.py``,
for ``--seconds`` in all, in turns.

Each input is checked in this process (``judge_in_process``: the gate, then SARIF, JSON and text
rendering); every ``--cli-every``-th mutated input also goes through the real command line in a
fresh process (``judge_cli``: exit code, traceback, ``file:line:col``, a whole ``-o`` file).
Prints inputs tried per fuzzer, the exit-code histogram, diagnostics per code, the slowest input
and the largest resident set (this process, and one command-line child), and writes every input
that broke a promise to ``--crashes DIR`` with what it broke (``<n>.fx`` and ``<n>.txt``).
Exits 1 when any input broke a promise.

Run from the repository root:  python bench/fuzz.py --seconds 600 --seed 1
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzzing import SEEDS, Judgement, judge_cli, judge_in_process, mutate, policy_texts  # noqa: E402


class Tally:
    """What the run saw so far; ``crash`` writes a reproducer."""

    def __init__(self, crashes: Path) -> None:
        self.crashes = crashes
        self.tried: Counter = Counter()
        self.exits: Counter = Counter()
        self.codes: Counter = Counter()
        self.broken = 0
        self.slowest = (0.0, "")
        self.cli_rss_kib = 0

    def add(self, fuzzer: str, data: bytes, j: Judgement) -> None:
        self.tried[fuzzer] += 1
        self.exits[f"{fuzzer}:{j.exit_code}"] += 1
        self.codes.update(j.codes)
        if j.seconds > self.slowest[0]:
            self.slowest = (j.seconds, fuzzer)
        if j.problems:
            self.broken += 1
            self.crashes.mkdir(parents=True, exist_ok=True)
            stem = self.crashes / f"{self.broken:04d}-{fuzzer}"
            stem.with_suffix(".fx").write_bytes(data)
            stem.with_suffix(".txt").write_text("\n".join(j.problems) + "\n")
            print(f"BROKEN {stem}.fx: {j.problems[0][:200]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600.0, help="total time, in seconds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cli-every", type=int, default=25, help="every Nth mutated input also through the CLI")
    ap.add_argument("--crashes", type=Path, default=None, help="folder for reproducers (default: a temporary one)")
    a = ap.parse_args()
    crashes = a.crashes or Path(tempfile.mkdtemp(prefix="fxverify-fuzz-crashes-"))
    tally = Tally(crashes)
    rng = random.Random(a.seed)
    seeds = tuple(p.read_bytes() for p in SEEDS)
    work = Path(tempfile.mkdtemp(prefix="fxverify-fuzz-"))
    path, report = work / "input.fx", work / "report.sarif"
    t0 = time.monotonic()
    end = t0 + a.seconds
    round_no = 0
    while time.monotonic() < end:
        round_no += 1
        # Byte mutation: a batch of corpus mutants.
        for _ in range(20):
            data = mutate(seeds[rng.randrange(len(seeds))], rng, seeds)
            path.write_bytes(data)
            tally.add("mutation", data, judge_in_process(str(path)))
            if tally.tried["mutation"] % a.cli_every == 0:
                before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                tally.add("cli", data, judge_cli(str(path), str(report)))
                tally.cli_rss_kib = max(tally.cli_rss_kib, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
            if time.monotonic() >= end:
                break
        if time.monotonic() >= end:
            break

        # Grammar: one hypothesis run of 20 examples, seeded per round (no shrinking, no database).
        @seed(a.seed * 1_000_003 + round_no)
        @settings(max_examples=20, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(text=policy_texts())
        def grammar_round(text: str) -> None:
            if time.monotonic() >= end:
                return
            data = text.encode("utf-8")
            path.write_bytes(data)
            tally.add("grammar", data, judge_in_process(str(path)))

        grammar_round()

    took = time.monotonic() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"fxverify fuzz: {took:.0f} s, seed {a.seed}, {len(seeds)} corpus seeds")
    print(f"inputs tried: {sum(tally.tried.values())} ({', '.join(f'{k} {v}' for k, v in sorted(tally.tried.items()))})")
    print("exit codes:   " + ", ".join(f"{k} {v}" for k, v in sorted(tally.exits.items())))
    print("diagnostics:  " + ", ".join(f"{k} {v}" for k, v in sorted(tally.codes.items())))
    print(f"slowest input: {tally.slowest[0]:.2f} s ({tally.slowest[1]})")
    print(f"max RSS: {rss / 1024:.0f} MiB (this process), {tally.cli_rss_kib / 1024:.0f} MiB (one CLI child)")
    print(f"broken promises: {tally.broken}" + (f" (reproducers in {crashes})" if tally.broken else ""))
    if tally.broken:
        sys.exit(1)


if __name__ == "__main__":
    main()
