"""Hostile input, fuzzed: grammar-generated policies (``hypothesis.extra.lark.from_lark`` over
``grammar.lark``) and byte mutations of the corpus, checked in this process (many inputs) and by
the real command line (a few). Every input must end in a verdict or in diagnostics with registered
codes and spans inside their files: exit 0, 1 or 2, never 3 or a traceback, and a ``-o`` report
that is absent or whole JSON (``tests.fuzzing`` states each promise). Deterministic: a fixed seed
per case, hypothesis derandomized and without an example database. ``bench/fuzz.py`` runs the same
fuzzers for minutes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzzing import SEEDS, judge_cli, judge_in_process, mutate, policy_texts

_SEED_TEXTS = tuple(p.read_bytes() for p in SEEDS)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(text=policy_texts())
def test_grammar_generated_policies_end_in_a_verdict_or_diagnostics(tmp_path: Path, text: str) -> None:
    path = tmp_path / "g.fx"
    path.write_text(text, encoding="utf-8")
    j = judge_in_process(str(path))
    assert not j.problems, (text, j.problems)


def test_the_grammar_fuzzer_reaches_the_solver() -> None:
    """The generator is useful only if some of its policies load and get verdicts: drawn with the
    same settings, some texts resolve to a policy."""
    import tempfile

    from hypothesis import find

    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    with tempfile.TemporaryDirectory() as d:
        def loads(text: str) -> bool:
            p = Path(d) / "g.fx"
            p.write_text(text, encoding="utf-8")
            pol, _ = load_policy(str(p), SourceMap())
            return pol is not None and len(pol.edges) > 0

        found = find(policy_texts(), loads, settings=settings(max_examples=400, database=None, derandomize=True,
                                                              deadline=None, suppress_health_check=list(HealthCheck)))
    assert "edge" in found


@pytest.mark.parametrize("chunk", range(6))
def test_mutated_corpus_policies_in_process(tmp_path: Path, chunk: int) -> None:
    rng = random.Random(1000 + chunk)
    path = tmp_path / "m.fx"
    problems = []
    for i in range(50):
        k = rng.randrange(len(SEEDS))
        data = mutate(_SEED_TEXTS[k], rng, _SEED_TEXTS)
        path.write_bytes(data)
        j = judge_in_process(str(path))
        if j.problems:
            problems.append((SEEDS[k].name, i, data[:2000], j.problems))
    assert not problems, problems


@pytest.mark.parametrize("case", range(4))
def test_mutated_corpus_policies_through_the_command_line(tmp_path: Path, case: int) -> None:
    rng = random.Random(2000 + case)
    k = rng.randrange(len(SEEDS))
    path = tmp_path / "m.fx"
    path.write_bytes(mutate(_SEED_TEXTS[k], rng, _SEED_TEXTS))
    j = judge_cli(str(path), str(tmp_path / "report.sarif"))
    assert not j.problems, (SEEDS[k].name, path.read_bytes()[:2000], j.problems)
    assert j.exit_code in (0, 1, 2)


# -- regressions found by the fuzzers ----------------------------------------------------------


@pytest.mark.parametrize("budget", ["9" * 5000, "0x" + "f" * 5000])
def test_a_huge_solver_budget_is_a_limit_not_a_crash(tmp_path: Path, budget: str) -> None:
    """`rlimit` with more digits than Python converts was FX-INT-001 (exit 3)."""
    path = tmp_path / "p.fx"
    path.write_text(f'policy "p" rlimit {budget}\n')
    j = judge_in_process(str(path))
    assert not j.problems and j.exit_code in (0, 2), j
    assert budget.startswith("0x") or j.codes == ["FX-LIM-001"]
