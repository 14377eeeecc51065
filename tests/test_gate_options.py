"""The gate at repository scale: configuration files and environment variables (and their
precedence), rule selection, soft-fail, several outputs from one run, capped GitHub annotations,
JUnit per obligation, and CSV reports compared run against run."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fxverify.cli import app

from tests.conftest import ROOT

RACE = ROOT / "corpus/ordering/fail/kv-offload-unordered.fx"
CYCLE = ROOT / "corpus/ordering/fail/hb-cycle.fx"


def fx(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the command line in this process: ``(exit code, stdout, stderr)``."""
    r = CliRunner().invoke(app, list(args), catch_exceptions=False, env=env)
    return r.exit_code, r.stdout, r.stderr


def as_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    code, out, err = fx("check", *args, "--format", "json", "--no-cache", env=env)
    assert out, err
    return code, json.loads(out)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository (a `.git` folder marks its root) holding the racy policy, as the cwd."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "p.fx").write_text(RACE.read_text())
    monkeypatch.chdir(tmp_path)
    for k in ("FXVERIFY_IGNORE", "FXVERIFY_SELECT", "FXVERIFY_FAIL_ON", "FXVERIFY_EXIT_ZERO", "FXVERIFY_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    return tmp_path


# -- configuration ------------------------------------------------------------------------------

def test_precedence_command_line_environment_file_defaults(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nearest `.fxverify.toml` beats `pyproject.toml` in the same folder; the environment
    beats the file; the command line beats the environment."""
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.fxverify]\nignore = ["FX-ORD-002"]\n')
    code, doc = as_json("p.fx")
    assert code == 0 and doc["skipped_rules"] == ["FX-ORD-002"]
    (repo / ".fxverify.toml").write_text('ignore = ["FX-XF"]\nfail-on = "warning"\n')
    code, doc = as_json("p.fx")
    assert code == 1 and doc["skipped_rules"] == ["FX-XF-001", "FX-XF-002", "FX-XF-003", "FX-XF-004"]
    code, doc = as_json("p.fx", env={"FXVERIFY_IGNORE": "FX-ORD-002,FX-OWN-004"})
    assert code == 0 and doc["skipped_rules"] == ["FX-ORD-002", "FX-OWN-004"]
    code, doc = as_json("p.fx", "--ignore", "FX-HOOK", env={"FXVERIFY_IGNORE": "FX-ORD-002"})
    assert code == 1 and doc["skipped_rules"] == ["FX-HOOK-001", "FX-HOOK-002"]
    # A subfolder without its own file uses the nearest one above it, up to the repository root.
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    assert as_json("../p.fx")[1]["skipped_rules"] == ["FX-XF-001", "FX-XF-002", "FX-XF-003", "FX-XF-004"]


def test_the_search_stops_at_the_repository_root(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inner = repo / "inner"
    inner.mkdir()
    (inner / ".git").mkdir()
    (inner / "p.fx").write_text(RACE.read_text())
    (repo / ".fxverify.toml").write_text('ignore = ["FX-ORD-002"]\n')
    monkeypatch.chdir(inner)
    assert as_json("p.fx")[0] == 1  # the outer repository's file does not apply inside another repository
    monkeypatch.chdir(repo)
    assert as_json("inner/p.fx")[0] == 0
    code, _, err = fx("check", "inner/p.fx", "--config", str(inner / "none.toml"))
    assert code == 2 and "cannot read the configuration file" in err


def test_relative_paths_in_the_file_are_relative_to_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert fx("check", "p.fx", "--write-baseline", "base.json", "--no-cache")[0] == 0
    (repo / "sub").mkdir()
    (repo / ".fxverify.toml").write_text('baseline = "base.json"\n')
    monkeypatch.chdir(repo / "sub")
    code, doc = as_json("../p.fx")
    assert code == 0 and doc["baseline"]["matched"] == 1


@pytest.mark.parametrize("text,where,words", [
    ('[tool.fxverify]\nfail-on = "never"\n', "pyproject.toml:2:1", "`fail-on` must be one of 'error', 'warning'"),
    ('[tool.fxverify]\njobs = "2"\n', "pyproject.toml:2:1", "`jobs` must be an integer, not a string"),
    ('[tool.fxverify]\nexlude = ["x"]\n', "pyproject.toml:2:1", "did you mean `exclude`"),
    ('[tool.fxverify]\nselect = ["FX-ORD"\n', "pyproject.toml:2:", "is not valid TOML"),
    ('[tool.fxverify]\nselect = ["FX-NOPE"]\n', None, "`--select FX-NOPE` names no rule"),
    # Z3 keeps the low 32 bits of a larger budget: 2^32 + 1 would be a budget of 1
    ('[tool.fxverify]\nrlimit = 4294967297\n', "pyproject.toml:2:1", "`rlimit` must be at most 4294967295"),
    ('[tool.fxverify]\nseed = 4294967296\n', "pyproject.toml:2:1", "`seed` must be at most 4294967295"),
    # broken files that name the table otherwise than `[tool.fxverify]`: still the configuration
    ('[tool]\nfxverify = { jobs = 2\n', "pyproject.toml:2:", "is not valid TOML"),
    ('tool.fxverify.jobs = 2\nx = = 1\n', "pyproject.toml:2:5", "is not valid TOML"),
    ('[ tool . "fxverify" ]\njobs = 2\n[[\n', "pyproject.toml:3:", "is not valid TOML"),
    ("[tool.'fxverify'.more]\nx = \n", "pyproject.toml:2:", "is not valid TOML"),
    (b'[tool.fxverify]\njobs = 2 # \xff\n', "pyproject.toml:2:12", "`pyproject.toml`: it is not UTF-8 text"),
])
def test_a_bad_file_is_fx_use_007_with_its_position(repo: Path, text: str | bytes, where: str | None, words: str) -> None:
    (repo / "pyproject.toml").write_bytes(text if isinstance(text, bytes) else text.encode())
    code, out, err = fx("check", "p.fx", "--no-cache")
    assert code == 2 and out == "" and words in err and "Traceback" not in err, err
    if where is not None:
        assert "error[FX-USE-008]" in err and f"--> {where}" in err and "^" in err


@pytest.mark.parametrize("text", ['[project]\nname = = "x"\n', '[tool.black]\nfxverify = = 1\n'])
def test_a_broken_pyproject_without_the_table_is_another_tools_file(repo: Path, text: str) -> None:
    """A broken `pyproject.toml` that never names `tool.fxverify` is not read for settings: no
    FX-USE-008, as for a valid one without the table."""
    (repo / "pyproject.toml").write_text(text)
    code, _, err = fx("check", "p.fx", "--no-cache", "--ignore", "FX-ORD-002")
    assert code == 0 and "FX-USE-008" not in err, err


def test_environment_values_are_checked_like_options(repo: Path) -> None:
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "fxverify", "check", "p.fx"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "FXVERIFY_FAIL_ON": "sometimes", "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and "error[FX-USE-005]" in r.stderr and "FXVERIFY_FAIL_ON" in r.stderr, r.stderr


# -- rule selection and soft-fail -----------------------------------------------------------------

def test_select_and_ignore(repo: Path) -> None:
    code, doc = as_json("p.fx", "--select", "ownership,FX-ALIAS")
    assert code == 0 and "FX-ORD-002" in doc["skipped_rules"] and "FX-OWN-004" not in doc["skipped_rules"]
    assert "FX-ORD-001" not in doc["skipped_rules"]
    checked = {fam for fam in doc["results"][0]["obligations"]}
    assert checked <= {"ownership", "alias", "ordering"}
    code, doc = as_json("p.fx", "--select", "FX-ORD", "--ignore", "FX-ORD-002")
    assert code == 0 and set(doc["results"][0]["obligations"]) <= {"ordering"}
    # A skipped rule's suppression is not reported as unused (its findings could not occur).
    (repo / "s.fx").write_text(RACE.read_text().replace("# expect: FX-ORD-002", '# fx: allow FX-ORD-002 reason "drained"'))
    _, doc = as_json("s.fx", "--ignore", "FX-ORD-002")
    assert [d["code"] for d in doc["results"][0]["diagnostics"]] == []


def test_every_report_names_the_rules_it_did_not_check(repo: Path) -> None:
    """`--ignore FX-ORD-002` on the racy policy proves it: the text summary and the SARIF
    invocation (ruleConfigurationOverrides, SARIF 2.1.0 3.20.5) say the rule was skipped."""
    import jsonschema

    code, out, _ = fx("check", "p.fx", "--ignore", "FX-ORD-002", "--no-cache")
    assert code == 0 and "rules not checked (1 rule, --select/--ignore): FX-ORD-002" in out
    for fmt, words in (("markdown", "Rules not checked (`--select`/`--ignore`): `FX-ORD-002`."),
                       ("html", "Rules not checked (--select/--ignore): <code>FX-ORD-002</code>.")):
        assert words in fx("check", "p.fx", "--ignore", "FX-ORD-002", "--no-cache", "--format", fmt)[1]
        assert "Rules not checked" not in fx("check", "p.fx", "--no-cache", "--format", fmt)[1]
    code, out, _ = fx("check", "p.fx", "--ignore", "FX-ORD-002", "--no-cache", "--format", "sarif")
    log = json.loads(out)
    jsonschema.validate(log, json.loads((ROOT / "corpus/inputs/schemas/sarif-schema-2.1.0.json").read_text()))
    run = log["runs"][0]
    (over,) = run["invocations"][0]["ruleConfigurationOverrides"]
    assert over["configuration"] == {"enabled": False} and over["descriptor"]["id"] == "FX-ORD-002"
    assert run["tool"]["driver"]["rules"][over["descriptor"]["index"]]["id"] == "FX-ORD-002"
    assert "ruleConfigurationOverrides" not in json.loads(fx("check", "p.fx", "--no-cache", "--format", "sarif")[1])[
        "runs"][0]["invocations"][0]


@pytest.mark.parametrize("value", ["", " ", ","])
def test_an_empty_selection_is_a_usage_error(repo: Path, value: str) -> None:
    code, out, err = fx("check", "p.fx", "--select", value, "--no-cache")
    assert code == 2 and out == "" and "error[FX-USE-005]: `--select` is empty" in err and "leave `--select` out" in err
    (repo / ".fxverify.toml").write_text(f'select = ["{value}"]\n')
    assert fx("check", "p.fx", "--no-cache")[0] == 2


def test_a_cycle_is_found_whatever_the_selection(repo: Path) -> None:
    """With cyclic happens-before every schedule obligation holds vacuously, so FX-ORD-001 is
    checked whatever `--select` says, and `--ignore FX-ORD-001` is refused."""
    code, doc = as_json(str(CYCLE), "--select", "FX-OWN")
    assert code == 1 and [d["code"] for d in doc["results"][0]["diagnostics"]] == ["FX-ORD-001"]
    code, _, err = fx("check", str(CYCLE), "--ignore", "FX-ORD-001")
    assert code == 2 and "cannot skip FX-ORD-001" in err
    code, _, err = fx("check", str(CYCLE), "--ignore", "FX-SYN,FX-SMT-001")
    assert code == 2 and "is not a rule" in err


def test_soft_fail_reports_but_exits_zero(repo: Path) -> None:
    code, doc = as_json("p.fx", "--exit-zero")
    assert code == 0 and doc["soft_fail"] == {"would_fail": True} and doc["results"][0]["verdict"] == "refuted"
    code, out, _ = fx("check", "p.fx", "--soft-fail", "--no-cache")
    assert code == 0 and "error[FX-ORD-002]" in out and "soft-fail: findings fail the gate" in out
    (repo / "bad.fx").write_text('policy "b"\nfabric {\n')
    assert fx("check", "bad.fx", "--exit-zero", "--no-cache")[0] == 2  # nothing was verified: never 0
    assert fx("check", "p.fx", "--no-cache", env={"FXVERIFY_EXIT_ZERO": "1"})[0] == 0


# -- several outputs from one run -----------------------------------------------------------------

def test_several_outputs_from_one_run_match_single_runs(repo: Path) -> None:
    formats = ("json", "sarif", "junit", "markdown", "csv")
    code, out, _ = fx("check", "p.fx", "--no-cache", "--format", "github",
                      *[a for f in formats for a in ("--format", f"{f}=out.{f}")])
    assert code == 1 and out.startswith("::error ")
    for f in formats:
        alone = fx("check", "p.fx", "--no-cache", "--format", f)[1]
        assert (repo / f"out.{f}").read_text() == alone, f
    assert fx("check", "p.fx", "--format", "json", "--format", "sarif")[0] == 2
    code, _, err = fx("check", "p.fx", "-f", "json=o.txt", "-f", "sarif=./o.txt")
    assert code == 2 and "two outputs write" in err and not (repo / "o.txt").exists()
    code, _, err = fx("check", "p.fx", "-f", "sarif=p.fx", "--no-cache")
    assert code == 2 and "FX-IO-002" in err and "policy" in (repo / "p.fx").read_text()


# -- GitHub annotations and JUnit at scale --------------------------------------------------------

def _report(n_errors: int):
    """A report with ``n_errors`` failing copies of the racy policy, one suppressed finding and
    one unused suppression (a warning)."""
    from fxverify.gate.report import Report
    from fxverify.pipeline import CheckOptions, check

    race = check(str(RACE), CheckOptions(verify_hints=False))
    sup = RACE.read_text().replace("# expect: FX-ORD-002", '# fx: allow FX-ORD-002 reason "drained"')
    sup += '# fx: allow FX-OWN-004 reason "never used"\n'
    return race, sup, lambda other: Report(results=[race] * n_errors + [other])


def test_github_annotations_come_errors_first_and_say_what_is_cut(tmp_path: Path) -> None:
    from fxverify.pipeline import CheckOptions, check
    from fxverify.render.github import PER_KIND, report_to_github

    race, sup, make = _report(12)
    p = tmp_path / "s.fx"
    p.write_text(sup)
    other = check(str(p), CheckOptions(verify_hints=False))
    lines = report_to_github(make(other), elsewhere=("`fxverify.sarif` (sarif)", "the job summary")).splitlines()
    kinds = [ln[2:ln.index(" ")] for ln in lines]
    assert kinds == ["error"] * PER_KIND + ["warning", "notice", "notice"]
    assert "title=FX-SUP-002" in lines[PER_KIND] and "(suppressed)" in lines[PER_KIND + 1]
    last = lines[-1]
    assert "2 of 14 annotations are not shown (2 errors)" in last.replace("%2C", ",")
    assert "the full report: `fxverify.sarif` (sarif), the job summary" in last
    # Under the caps, nothing is cut and there is no last line.
    few = report_to_github(make(other).__class__(results=[race] * 3)).splitlines()
    assert len(few) == 3 and all(x.startswith("::error ") for x in few)


def test_junit_per_obligation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fxverify.pipeline import CheckOptions, check

    monkeypatch.chdir(ROOT)
    pol = "corpus/ordering/fail/notify-batch-in-flight.fx"
    outcomes = check(pol, CheckOptions(verify_hints=False)).outcomes
    grouped = ET.fromstring(fx("check", pol, "--format", "junit", "--no-cache")[1])
    single = ET.fromstring(fx("check", pol, "--format", "junit", "--no-cache", "--junit-per-obligation")[1])
    names = [c.get("name") for c in single.iter("testcase")]
    assert sorted(names) == sorted(v.key for v in outcomes) and len(set(names)) == len(names)
    assert len(list(grouped.iter("testcase"))) < len(names)
    assert single.get("failures") == grouped.get("failures") and single.get("errors") == grouped.get("errors")
    proved = [c for c in single.iter("testcase") if len(c) == 1 and c[0].tag == "system-out"]
    assert proved and all(re.fullmatch(r"proved \(\S+\)", c[0].text.strip()) for c in proved)


# -- CSV and compare ------------------------------------------------------------------------------

def test_csv_rows_per_policy_and_family_and_compare(repo: Path) -> None:
    (repo / "ok.fx").write_text((ROOT / "corpus/ordering/ok/kv-offload-ordered.fx").read_text())
    assert fx("check", "p.fx", "ok.fx", "--no-cache", "--format", "csv=a.csv")[0] == 1
    rows = list(csv.DictReader(io.StringIO((repo / "a.csv").read_text())))
    total = {r["policy"]: r for r in rows if r["family"] == "all"}
    assert total["p.fx"]["verdict"] == "refuted" and total["ok.fx"]["verdict"] == "proved"
    fams = [r for r in rows if r["policy"] == "p.fx" and r["family"] != "all"]
    assert sum(int(r["obligations"]) for r in fams) == int(total["p.fx"]["obligations"])
    assert all(int(r["solver"]) + int(r["fast"]) == int(r["obligations"]) for r in rows)
    assert all(r["seconds"] == "" for r in rows)  # times only with --stats
    # The second run fixes the race and times the policies.
    (repo / "p.fx").write_text(RACE.read_text().replace("stream copy  #", "stream copy after attn  #"))
    assert fx("check", "p.fx", "ok.fx", "--no-cache", "--stats", "--format", "csv=b.csv")[0] == 0
    code, out, _ = fx("compare", "a.csv", "b.csv", "--format", "csv")
    assert code == 0
    cmp = {(r["policy"], r["family"]): r for r in csv.DictReader(io.StringIO(out))}
    row = cmp[("p.fx", "ordering")]
    assert (row["verdict (A)"], row["verdict (B)"], row["refuted (DIFF)"]) == ("refuted", "proved", "-1")
    assert cmp[("ok.fx", "all")]["seconds (A)"] == "-" and float(cmp[("ok.fx", "all")]["seconds (B)"]) >= 0
    code, out, _ = fx("compare", "a.csv", "b.csv", "--changed")
    assert code == 0 and "p.fx" in out and "ok.fx" not in out and out.splitlines()[0].startswith("policy")
    (repo / "c.csv").write_text("not,a,report\n")
    code, _, err = fx("compare", "a.csv", "c.csv")
    assert code == 2 and "FX-GATE-003" in err
    assert fx("compare", "a.csv", "missing.csv")[0] == 2



@pytest.mark.parametrize("data,where,words", [
    (b"\xff\xfe" + ",".join(["policy"] * 10).encode() + b"\n", "bad.csv:1:1", "not UTF-8"),
    (b"hello\n", "bad.csv:1:1", "this header"),
    (b"", "bad.csv:3:1", "this row"),  # a short row after the header and one good row
    (b"\r\n", "bad.csv:3:1", "this row"),  # the same, with CRLF line ends
    (b"\"", "bad.csv:3:1", "this row"),  # a row whose quoted first cell spans two lines
])
def test_compare_points_at_the_place_in_a_bad_csv(repo: Path, data: bytes, where: str, words: str) -> None:
    """A CSV that is not a report is FX-GATE-003 at file:line:col with the line quoted and
    underlined (a byte that is not UTF-8, the header, the first bad row: the underline as long as
    the row's text), never a raw codec message."""
    assert fx("check", "p.fx", "--no-cache", "--format", "csv=a.csv")[0] == 1
    if words == "this row":
        good = (repo / "a.csv").read_bytes().splitlines()
        end = b"\r\n" if data == b"\r\n" else b"\n"
        row = b'"p.\nfx",all' if data == b'"' else b"p.fx,all"
        data = good[0] + end + good[1] + end + row + end
    (repo / "bad.csv").write_bytes(data)
    code, _, err = fx("compare", "a.csv", "bad.csv")
    assert code == 2 and "FX-GATE-003" in err and f"--> {where}" in err and words in err, err
    assert "codec" not in err and "Traceback" not in err
    if words == "this row":
        quoted = [ln for ln in err.splitlines() if ln.startswith("3 |")]
        carets = [ln for ln in err.splitlines() if "^" in ln]
        assert quoted[0].endswith('"p.' if data.count(b'"') else "p.fx,all") and carets[0].count("^") == len(
            quoted[0]) - len("3 | "), err


def test_compare_reads_a_pipe(repo: Path) -> None:
    """`fxverify compare <(...) b.csv`: a report may come through a pipe (process substitution)."""
    import os
    import threading

    assert fx("check", "p.fx", "--no-cache", "--format", "csv=a.csv")[0] == 1
    os.mkfifo(repo / "pipe.csv")
    feed = threading.Thread(target=lambda: (repo / "pipe.csv").write_bytes((repo / "a.csv").read_bytes()))
    feed.start()
    code, out, err = fx("compare", "pipe.csv", "a.csv", "--format", "csv")
    feed.join()
    assert code == 0 and "p.fx" in out, err

def test_an_unwritable_cache_is_a_note_and_changes_no_verdict(repo: Path) -> None:
    """``--cache-dir`` on a path that cannot be a folder: the run still checks (exit 1 for the
    race, as without a cache) and says, once, that nothing was kept (FX-GATE-004); a writable one
    says nothing."""
    (repo / "afile").write_text("not a folder")
    code, out, err = fx("check", "p.fx", "--cache-dir", str(repo / "afile" / "cache"))
    assert code == 1 and err.count("note[FX-GATE-004]") == 1 and "were not kept" in err, err
    code, _, err = fx("check", "p.fx", "--cache-dir", str(repo / "cache"))
    assert code == 1 and "FX-GATE-004" not in err and (repo / "cache").is_dir()
