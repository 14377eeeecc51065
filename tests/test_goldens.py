"""SMT-LIB2 goldens: ``fxverify check --dump-smt`` of a few corpus policies must reproduce
``obligations/<policy>/`` byte for byte. A difference must be a deliberate change: rewrite them
with ``pytest --update-goldens`` and review the diff. Every golden must also re-check, parsed from
its text, with the answer its last comment announces."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fxverify.pipeline import CheckOptions, check
from fxverify.smt.backend import Status
from fxverify.smt.z3_backend import check_smtlib

from tests.conftest import ROOT

GOLDEN_POLICIES = [
    "corpus/ordering/fail/kv-offload-unordered.fx",
    "corpus/ordering/fail/cxl-unfenced-flush-loop.fx",
    "corpus/ordering/fail/notify-batch-in-flight.fx",
    "corpus/alias/ok/interleaved-strided.fx",
    "corpus/ownership/fail/pinned-free-before-copy.fx",
    "corpus/ownership/fail/read-after-revoke.fx",
    "corpus/transforms/ok/compress-worst-case.fx",
    "corpus/ordering/fail/fp8-page-scales-not-moved.fx",
    "corpus/ordering/fail/persist-over-posted-no-flush.fx",
]


def _golden_dir(policy: str) -> Path:
    return ROOT / "obligations" / Path(policy).stem


@pytest.mark.parametrize("policy", GOLDEN_POLICIES)
def test_dumped_obligations_match_goldens(policy: str, tmp_path: Path, at_root, update_goldens: bool) -> None:
    out = tmp_path / "smt" / Path(policy).stem
    check(policy, CheckOptions(dump_smt=str(out), verify_hints=False))
    got = {p.name: p.read_text() for p in sorted(out.glob("*.smt2"))}
    assert got, "no obligations dumped"
    gold = _golden_dir(policy)
    if update_goldens:
        shutil.rmtree(gold, ignore_errors=True)
        gold.mkdir(parents=True)
        for name, text in got.items():
            (gold / name).write_text(text)
    want = {p.name: p.read_text() for p in sorted(gold.glob("*.smt2"))}
    assert sorted(got) == sorted(want)
    for name in got:
        assert got[name] == want[name], f"{gold.name}/{name} changed; rerun with --update-goldens if deliberate"


@pytest.mark.parametrize("policy", GOLDEN_POLICIES)
def test_goldens_recheck_from_text(policy: str) -> None:
    """Parsed back from text, every golden of an ``ok`` policy gives the proving answer, and a
    ``fail`` policy has at least one golden that does not."""
    answers = []
    for f in sorted(_golden_dir(policy).glob("*.smt2")):
        text = f.read_text()
        assert text.startswith("; fxverify obligation FX-")
        proving = Status.UNSAT if "proved when the answer is unsat" in text else Status.SAT
        answers.append(check_smtlib(text) is proving)
    assert answers
    assert all(answers) if "/ok/" in policy else not all(answers)
