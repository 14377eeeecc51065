"""The JSON files fxverify writes follow the JSON Schemas in ``specs/schemas/`` (Draft 2020-12):
the JSON report of ``check`` (with traces, a baseline, stats, certificates, skipped rules and
soft-fail, input errors), the baseline file, the index of ``fxverify smt``, and ``maps.json`` and
``manifest.json`` of ``fxverify lower``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from fxverify.cli import app

from tests.conftest import ROOT

SCHEMAS = ROOT / "specs/schemas"
RACE = "corpus/ordering/fail/kv-offload-unordered.fx"
CASES = [RACE, "corpus/ownership/fail/double-handoff.fx", "corpus/ordering/fail/hb-cycle.fx",
         "corpus/solver/fail/budget-exhausted.fx", "corpus/transforms/ok/compress-worst-case.fx"]


def validate(doc: object, schema: str) -> None:
    """Validate ``doc`` against ``specs/schemas/<schema>.schema.json``, reporting every error."""
    v = Draft202012Validator(json.loads((SCHEMAS / f"{schema}.schema.json").read_text()))
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def fx(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.schema.json")), ids=lambda p: p.name)
def test_schemas_are_valid_draft_2020_12(path: Path) -> None:
    Draft202012Validator.check_schema(json.loads(path.read_text()))


def test_json_reports_follow_the_report_schema(tmp_path: Path, at_root) -> None:
    base = tmp_path / "base.json"
    assert fx("check", RACE, "--write-baseline", str(base), "--no-cache")[0] == 0
    validate(json.loads(base.read_text()), "baseline")
    fixed = tmp_path / "fixed.fx"
    fixed.write_text((ROOT / RACE).read_text().replace("stream copy  #", "stream copy after attn  #"))
    runs = [
        (*CASES, "--stats"),
        (str(fixed), "--baseline", str(base), "--certify=python"),  # a stale entry, certificates
        (RACE, "--exit-zero", "--ignore", "FX-XF"),
    ]
    bad = tmp_path / "typo.fx"
    bad.write_text('policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu1 size 1 MiB\n')
    runs.append((str(bad), RACE))
    seen = set()
    for args in runs:
        _, out = fx("check", *args, "--format", "json", "--no-cache")
        doc = json.loads(out)
        validate(doc, "report")
        seen |= set(doc)
    assert {"stats", "skipped_rules", "soft_fail"} <= seen


def test_smt_index_follows_its_schema(tmp_path: Path, at_root) -> None:
    assert fx("smt", RACE, "-o", str(tmp_path / "out"))[0] == 0
    validate(json.loads((tmp_path / "out/index.json").read_text()), "smt-index")


def test_lowering_maps_and_manifest_follow_their_schemas(tmp_path: Path, at_root) -> None:
    code, _ = fx("lower", "corpus/ordering/ok/kv-offload-ordered.fx", "-o", str(tmp_path / "lo"), "--no-compile")
    assert code == 0
    validate(json.loads((tmp_path / "lo/maps.json").read_text()), "maps")
    validate(json.loads((tmp_path / "lo/manifest.json").read_text()), "manifest")
