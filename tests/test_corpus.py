"""The golden corpus: every ``ok`` policy is proved; every ``fail`` policy is refuted with exactly
the findings its ``# expect: FX-...`` comments announce, on those lines, with the messages the
``# ^ message`` comment lines right below them give (as mypy's test data writes the expected
error on the offending line). ``pytest --update-expect`` rewrites the message lines for review.
One case per file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, REGISTRY, Family, Severity
from fxverify.pipeline import check
from fxverify.result import Verdict

from tests.conftest import ROOT, corpus_files

EXPECT = re.compile(r"#\s*expect:\s*((?:FX-[A-Z]+-\d{3}[ ,]*)+)")
MESSAGE = re.compile(r"^(\s*)# \^ (.*)$")
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


def expected_messages(path: Path) -> dict[int, list[str]]:
    """Per ``# expect:`` line, the messages of the ``# ^ message`` lines right below it, in order."""
    lines = (ROOT / path).read_text().splitlines()
    out: dict[int, list[str]] = {}
    for i, line in enumerate(lines, start=1):
        if EXPECT.search(line):
            j = i
            while j < len(lines) and (m := MESSAGE.match(lines[j])):
                out.setdefault(i, []).append(m.group(2))
                j += 1
    return out


def findings(path: Path) -> tuple[Verdict | None, set[tuple[str, int]], dict[int, list[str]]]:
    """The verdict, the ``(code, line)`` of every active error, and their messages by line."""
    r = check(str(path))
    assert not r.input_error, [f"{d.code} {d.message}" for d in r.diagnostics]
    assert not r.internal_error, [d.message for d in r.diagnostics]
    got = set()
    messages: dict[int, list[str]] = {}
    for d in r.diagnostics:
        if d.is_error and d.primary is not None:
            line = r.sources.location(d.primary.span)[0]
            got.add((d.code, line))
            messages.setdefault(line, []).append(d.message)
    return r.verdict, got, messages


def rewrite_messages(path: Path, messages: dict[int, list[str]]) -> None:
    """Put ``messages`` as ``# ^`` lines right below their ``# expect:`` lines (``--update-expect``)."""
    lines = (ROOT / path).read_text().splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        out.append(line)
        i += 1
        if EXPECT.search(line):
            while i < len(lines) and MESSAGE.match(lines[i]):
                i += 1
            indent = re.match(r"\s*", line).group(0)
            out += [f"{indent}# ^ {msg}" for msg in messages.get(number, [])]
    (ROOT / path).write_text("\n".join(out) + "\n")


@pytest.mark.parametrize("path", corpus_files("ok"), ids=str)
def test_ok_policies_are_proved(path: Path, at_root) -> None:
    verdict, got, _ = findings(path)
    assert got == set()
    assert verdict is Verdict.PROVED


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_OK, ids=str)
def test_real_policies_are_proved(path: Path, at_root) -> None:
    verdict, got, _ = findings(path)
    assert got == set()
    assert verdict is Verdict.PROVED


def _refuted_where_expected(path: Path, update: bool) -> None:
    want = expectations(path)
    assert want, f"{path} has no `# expect:` comment"
    verdict, got, messages = findings(path)
    only_unknown = {code for code, _ in want} == {"FX-SMT-001"}
    assert verdict is (Verdict.UNKNOWN if only_unknown else Verdict.REFUTED)
    assert got == want
    if update:
        rewrite_messages(path, {line: messages[line] for _, line in want})
        want = expectations(path)
        verdict, got, messages = findings(path)
        assert got == want
    expected = expected_messages(path)
    for _, line in sorted(want):
        assert expected.get(line), f"{path}:{line} has no `# ^ message` line below its `# expect:`"
        assert sorted(messages[line]) == sorted(expected[line]), f"{path}:{line}: rerun with --update-expect if deliberate"


@pytest.mark.parametrize("path", corpus_files("fail"), ids=str)
def test_fail_policies_are_refuted_where_expected(path: Path, at_root, update_expect: bool) -> None:
    _refuted_where_expected(path, update_expect)


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_BAD, ids=str)
def test_real_bad_twin_is_refuted_where_expected(path: Path, at_root) -> None:
    _refuted_where_expected(path, False)


@pytest.mark.parametrize("path", corpus_files("ok") + corpus_files("fail"), ids=str)
def test_every_corpus_file_opens_with_its_lesson(path: Path) -> None:
    first = (ROOT / path).read_text().splitlines()[0]
    assert first.startswith("#") and len(first) > 20


def test_corpus_covers_every_obligation_code() -> None:
    covered = {code for p in corpus_files("fail") for code, _ in expectations(p)}
    wanted = {c for c in REGISTRY.values() if c.family.suppressible and c.severity is Severity.ERROR}
    assert wanted - covered == set()


def test_every_family_has_a_passing_case() -> None:
    families = {p.parts[1] for p in corpus_files("ok")}
    assert {f.value for f in OBLIGATION_FAMILIES} <= families
    assert Family.SOLVER.value in families


def test_real_policy_is_up_to_date() -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(ROOT / "corpus/real/generate.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
