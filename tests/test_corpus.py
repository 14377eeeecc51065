"""The golden corpus: every ``ok`` policy is proved; every ``fail`` policy is refuted with exactly
the findings its ``# expect: FX-...`` comments announce, on those lines. One case per file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fxverify.diagnostics.codes import REGISTRY
from fxverify.pipeline import check
from fxverify.result import Verdict

from tests.conftest import ROOT, corpus_files

EXPECT = re.compile(r"#\s*expect:\s*((?:FX-[A-Z]+-\d{3}[ ,]*)+)")
REAL = sorted(p.relative_to(ROOT) for p in (ROOT / "corpus/real").glob("*.fx"))
REAL_OK = [p for p in REAL if not p.name.endswith(".bad.fx")]
REAL_BAD = [p for p in REAL if p.name.endswith(".bad.fx")]


def expectations(path: Path) -> set[tuple[str, int]]:
    """``(code, line)`` pairs from ``# expect:`` comments (one or more codes per comment)."""
    out = set()
    for i, line in enumerate((ROOT / path).read_text().splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            for code in re.findall(r"FX-[A-Z]+-\d{3}", m.group(1)):
                out.add((code, i))
    return out


def findings(path: Path) -> tuple[Verdict | None, set[tuple[str, int]]]:
    r = check(str(path))
    assert not r.input_error, [f"{d.code} {d.message}" for d in r.diagnostics]
    assert not r.internal_error, [d.message for d in r.diagnostics]
    got = set()
    for d in r.diagnostics:
        if d.is_error and d.primary is not None:
            got.add((d.code, r.sources.location(d.primary.span)[0]))
    return r.verdict, got


@pytest.mark.parametrize("path", corpus_files("ok") + REAL_OK, ids=str)
def test_ok_policies_are_proved(path: Path, at_root) -> None:
    verdict, got = findings(path)
    assert got == set()
    assert verdict is Verdict.PROVED


@pytest.mark.parametrize("path", corpus_files("fail") + REAL_BAD, ids=str)
def test_fail_policies_are_refuted_where_expected(path: Path, at_root) -> None:
    want = expectations(path)
    assert want, f"{path} has no `# expect:` comment"
    verdict, got = findings(path)
    only_unknown = {code for code, _ in want} == {"FX-SMT-001"}
    assert verdict is (Verdict.UNKNOWN if only_unknown else Verdict.REFUTED)
    assert got == want


@pytest.mark.parametrize("path", corpus_files("ok") + corpus_files("fail"), ids=str)
def test_every_corpus_file_opens_with_its_lesson(path: Path) -> None:
    first = (ROOT / path).read_text().splitlines()[0]
    assert first.startswith("#") and len(first) > 20


def test_corpus_covers_every_obligation_code() -> None:
    covered = {code for p in corpus_files("fail") for code, _ in expectations(p)}
    wanted = {c for c, e in REGISTRY.items() if e.family in
              ("ordering", "alias", "ownership", "maps", "transforms", "hooks", "solver") and e.severity.value == "error"}
    assert wanted - covered == set()


def test_every_family_has_a_passing_case() -> None:
    families = {p.parts[1] for p in corpus_files("ok")}
    assert {"ordering", "alias", "ownership", "maps", "transforms", "hooks"} <= families


def test_real_policy_is_up_to_date() -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(ROOT / "corpus/real/generate.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
