"""The incident corpus (``corpus/incidents/``): bad/fixed twins written after public incident
patterns in KV-cache offload, RDMA, disaggregated prefill, checkpointing, CXL sharing and packet
DMA. ``tests/test_corpus.py`` checks the verdicts (every bad twin refuted where its ``# expect:``
lines say, every fixed twin proved); this module checks the shape of the corpus and that
``fxverify explain`` lists the incidents of a code."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.diagnostics import codes
from fxverify.diagnostics.explain import build_incidents, explain, incident_of, load_examples, load_incidents

from tests.conftest import ROOT

FAIL = sorted((ROOT / "corpus/incidents/fail").glob("*.fx"))
OK = sorted((ROOT / "corpus/incidents/ok").glob("*.fx"))
KINDS = {"KV-cache offload", "RDMA", "disaggregated prefill", "checkpointing", "CXL sharing", "packet DMA"}


def test_at_least_twenty_twins_each_with_its_fix() -> None:
    assert len(FAIL) >= 20
    assert [p.name for p in FAIL] == [p.name for p in OK]


def test_each_bad_twin_opens_with_its_pattern_and_fix_and_covers_every_class() -> None:
    kinds = set()
    for p in FAIL:
        kind, pattern, found = incident_of(p)
        head = [ln for ln in p.read_text().splitlines() if ln.startswith("#")]
        assert any(ln.startswith("# Fix: ") for ln in head[:12]), p
        assert found, p
        kinds.add(kind)
    assert KINDS <= kinds


def test_each_fixed_twin_names_its_bad_twin() -> None:
    for p in OK:
        assert p.read_text().startswith(f"# Fixed twin of fail/{p.name}"), p


def test_incident_index_is_in_sync_and_explain_lists_it() -> None:
    """If this fails, run `python -m fxverify.diagnostics.explain --write` and review the diff."""
    index = build_incidents(ROOT)
    assert load_incidents() == index
    assert sum(len(v) for v in index.values()) >= len(FAIL)
    text = explain(codes.OWN_004, load_examples(), index)
    assert "incidents (" in text and "corpus/incidents/fail/kv-offload-free-during-copy.fx (KV-cache offload):" in text
    r = CliRunner().invoke(app, ["explain", "FX-XF-002"])
    assert r.exit_code == 0
    assert "corpus/incidents/fail/ckpt-shard-persisted-without-checksum.fx (checkpointing)" in r.stdout
    assert "incidents (" not in explain(codes.SYN_001, load_examples(), index)


def test_incident_of_rejects_a_file_without_its_pattern(tmp_path: Path) -> None:
    bad = tmp_path / "x.fx"
    bad.write_text('# some comment\npolicy "x"\n')
    try:
        incident_of(bad)
    except ValueError as e:
        assert "Incident (KIND)" in str(e)
    else:
        raise AssertionError("no error")
