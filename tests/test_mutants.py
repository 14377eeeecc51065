"""The mutation score (``bench/mutants.py``) on a small deterministic sample: no mutant survives
unreviewed, the sample scores at least 95%, and every reviewed entry of
``bench/mutants-equivalent.toml`` still names an existing mutant, and the sampled ones, with the
description they were reviewed under, still survive (so the reviewed list cannot rot: when the checker is fixed,
a weakness entry goes stale and must be removed)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT

# Minutes of checking: the latest-versions pass scores mutants, the minimum-versions pass does not.
pytestmark = pytest.mark.slow

SAMPLE, SEED = 20, 1
#: Reviewed survivors re-checked per run (a deterministic subset; `bench/mutants.py` checks them all).
REVIEWED_SAMPLE = 12
TARGET = 0.95


def _bench():
    spec = importlib.util.spec_from_file_location("bench_mutants", ROOT / "bench" / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


M = _bench()


@pytest.fixture(scope="module")
def mutants() -> list:
    return M.all_mutants()


@pytest.fixture(scope="module")
def reviewed() -> dict:
    return M.load_equivalents()


@pytest.fixture(scope="module")
def results(mutants: list, reviewed: dict) -> dict:
    """The sample and a deterministic sample of the reviewed mutants, checked; by id."""
    picked = {m.id: m for m in M.sample(mutants, SAMPLE, SEED)}
    picked.update({m.id: m for m in M.sample([m for m in mutants if m.id in reviewed], REVIEWED_SAMPLE, SEED)})
    return {c.mutant.id: c for c in M.run(list(picked.values()), reviewed)}


def test_mutant_ids_are_unique(mutants: list) -> None:
    ids = [m.id for m in mutants]
    assert len(ids) == len(set(ids))


def test_every_operator_mutates_something(mutants: list) -> None:
    assert {m.operator for m in mutants} == set(M.OPERATORS)


def test_sample_is_deterministic(mutants: list) -> None:
    assert [m.id for m in M.sample(mutants, SAMPLE, SEED)] == [m.id for m in M.sample(mutants, SAMPLE, SEED)]
    assert len(M.sample(mutants, SAMPLE, SEED)) == SAMPLE


def test_no_unreviewed_survivor(results: dict) -> None:
    survivors = [f"{c.mutant.id}  {c.mutant.description}\n{c.mutant.diff()}" for c in results.values()
                 if c.status == "survived"]
    assert not survivors, "review these survivors in bench/mutants-equivalent.toml:\n" + "\n".join(survivors)


def test_sample_score(mutants: list, results: dict) -> None:
    picked = [results[m.id] for m in M.sample(mutants, SAMPLE, SEED)]
    row = M.table(picked)["total"]
    assert M.score(row) >= TARGET, M.report(picked, {}, 0.0, diff=False)


def test_reviewed_entries_still_hold(mutants: list, reviewed: dict, results: dict) -> None:
    by_id = {m.id: m for m in mutants}
    missing = [i for i in reviewed if i not in by_id]
    assert not missing, f"reviewed mutants that no longer exist: {missing}"
    renamed = [i for i, eq in reviewed.items() if by_id[i].description != eq.mutant]
    assert not renamed, f"reviewed mutants whose description changed: {renamed}"
    assert not M.stale_equivalents(list(results.values()), reviewed)
