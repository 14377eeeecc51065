"""fxverify as a pre-merge gate, on the corpus: every output format, exit codes, baselines,
inline suppressions, the result cache and ``--jobs``."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.diagnostics.codes import REGISTRY

from tests.conftest import ROOT

# Refuted (with traces on several devices, an HB cycle, a handoff), unknown, and proved policies.
CASES = ["corpus/ordering/fail/kv-offload-unordered.fx", "corpus/ownership/fail/double-handoff.fx",
         "corpus/ordering/fail/hb-cycle.fx", "corpus/solver/fail/budget-exhausted.fx",
         "corpus/transforms/ok/compress-worst-case.fx"]
RACE = "corpus/ordering/fail/kv-offload-unordered.fx"


def fx(*args: str) -> tuple[int, str]:
    """Run the command line in this process; returns ``(exit code, stdout)``."""
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout


def report(tmp_path: Path, fmt: str, *args: str) -> tuple[int, str]:
    out = tmp_path / f"report.{fmt}"
    code, stdout = fx("check", *args, "--format", fmt, "-o", str(out))
    assert stdout == ""
    return code, out.read_text()


@pytest.fixture(scope="module")
def corpus_json(tmp_path_factory) -> dict:
    """The JSON report of ``CASES``: what every other format is compared with."""
    import os

    tmp = tmp_path_factory.mktemp("json")
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        code, text = report(tmp, "json", *CASES)
    finally:
        os.chdir(old)
    assert code == 1
    return json.loads(text)


def findings(doc: dict) -> list[dict]:
    return [d for r in doc["results"] for d in r["diagnostics"]]


def test_json_schema_fields(corpus_json: dict) -> None:
    assert corpus_json["exit_code"] == 1 and corpus_json["summary"]["policies"] == len(CASES)
    fs = findings(corpus_json)
    assert {d["code"] for d in fs} == {"FX-ORD-002", "FX-OWN-003", "FX-ORD-001", "FX-SMT-001"}
    for d in fs:
        assert re.fullmatch(r"[0-9a-f]{32}", d["fingerprint"]) and d["primary"]["line"] > 0
    race = next(d for d in fs if d["code"] == "FX-ORD-002")
    assert race["related"] and race["edges"] == ["attn", "offload"] and race["trace"]["events"]


SARIF_SCHEMA = ROOT / "corpus/inputs/schemas/sarif-schema-2.1.0.json"


def _threads(events: list[dict]) -> set[str]:
    """The threads of execution of a trace's events: a device's stream, an edge on no stream, or
    the device for region facts (``render.sarif.thread_of``)."""
    out = set()
    for ev in events:
        if ev["event"] == "region" and not ev["hook"]:
            out.add(ev["device"])
        elif ev["stream"] is not None:
            out.add(f"{ev['device']}/stream {ev['stream']}")
        else:
            out.add(f"{ev['device']}/edge {ev['edge']}")
    return out


def test_sarif_validates_and_carries_flows(tmp_path: Path, at_root, corpus_json: dict) -> None:
    import jsonschema

    code, text = report(tmp_path, "sarif", *CASES)
    assert code == 1
    log = json.loads(text)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(REGISTRY)
    assert all(r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"] for r in rules)
    assert run["automationDetails"]["id"] == "fxverify/" and run["tool"]["driver"]["fullName"].startswith("fxverify ")
    want = {d["fingerprint"]: d for d in findings(corpus_json)}
    assert len(run["results"]) == len(want)
    for res in run["results"]:
        d = want[res["partialFingerprints"]["fxverify/v1"]]
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == d["code"]
        assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == d["primary"]["line"]
        related = res.get("relatedLocations", [])
        assert len(related) == len(d["related"])
        # Every related location is linked from the message as [text](id); other brackets are escaped.
        links = re.findall(r"(?<!\\)\[((?:[^\]\\]|\\.)*)\]\((\d+)\)", res["message"]["text"])
        assert sorted(int(i) for _, i in links) == [r["id"] for r in related]
        if "trace" in d:
            (flow,) = res["codeFlows"]
            assert {t["id"] for t in flow["threadFlows"]} == _threads(d["trace"]["events"])
            steps = sorted(loc["executionOrder"] for t in flow["threadFlows"] for loc in t["locations"])
            assert steps == [ev["step"] for ev in d["trace"]["events"]]
            essential = [t for t in flow["threadFlows"] if any(loc["importance"] == "essential" for loc in t["locations"])]
            assert len(essential) == 1 and flow["threadFlows"][0] is essential[0]  # the violating thread first
    race = next(r for r in run["results"] if r["ruleId"] == "FX-ORD-002")
    # Both edges run on gpu0, on two streams: two threads, so the trace shows them overlapping.
    assert [t["id"] for t in race["codeFlows"][0]["threadFlows"]] == ["gpu0/stream copy", "gpu0/stream compute"]
    assert "[`attn` writes here](1)" in race["message"]["text"]
    handoff = next(r for r in run["results"] if r["ruleId"] == "FX-OWN-003")
    assert handoff["codeFlows"][0]["threadFlows"]


def test_sarif_rules_link_their_documentation(tmp_path: Path, at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rule's help is its whole explanation in Markdown (rule, why, the failing example and
    its fix); with the repository and commit of this fxverify known, `helpUri` points at the
    code's section of specs/codes.md there and `informationUri` at the repository. Unknown, both
    are left out (never a made-up address)."""
    import fxverify.render.sarif as sarif
    from fxverify.origin import Origin

    monkeypatch.setattr(sarif, "origin", lambda: Origin("git@example.org:acme/fxverify.git", "ab" * 20))
    log = json.loads(report(tmp_path, "sarif", RACE)[1])
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://example.org/acme/fxverify"
    assert driver["fullName"] == "fxverify 0.1.0 (abababababab)"
    rule = next(r for r in driver["rules"] if r["id"] == "FX-ORD-002")
    assert rule["helpUri"] == f"https://example.org/acme/fxverify/blob/{'ab' * 20}/specs/codes.md#fx-ord-002"
    md = rule["help"]["markdown"]
    assert "Why it matters:" in md and "kv-offload-unordered.fx" in md and "```diff" in md and "+  edge offload" in md
    assert "## FX-ORD-002" in (ROOT / "specs/codes.md").read_text()  # the anchor exists
    monkeypatch.setattr(sarif, "origin", lambda: Origin())
    driver = json.loads(report(tmp_path, "sarif", RACE)[1])["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and not any("helpUri" in r for r in driver["rules"])


def _multitool() -> Path | None:
    """The SARIF multitool's executable (npm `@microsoft/sarif-multitool`), or ``None`` when it is
    not installed. The npm command is a node script that runs the platform's executable through a
    shell without quoting (`;` in `--rule-kind "Gh;Sarif"` would end the command), so the
    executable it wraps is run directly."""
    import shutil
    import sys

    wrapper = shutil.which("sarif-multitool")
    if wrapper is None:
        return None
    exe = Path(wrapper).resolve().parent.parent / f"sarif-multitool-{sys.platform}" / "Sarif.Multitool"
    return exe if exe.is_file() else None


@pytest.mark.slow
def test_sarif_multitool_validation(tmp_path: Path, at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SARIF multitool's own validation, with its SARIF and GitHub rule sets (`--rule-kind
    "Gh;Sarif"`), finds no error and no warning in a log with traces, related locations,
    suppressions and an unknown verdict. (.ci/run installs it with npm.)"""
    import subprocess

    tool = _multitool()
    if tool is None:
        pytest.skip("the SARIF multitool is not installed (npm install -g @microsoft/sarif-multitool)")
    import fxverify.render.sarif as sarif
    from fxverify.origin import Origin

    monkeypatch.setattr(sarif, "origin", lambda: Origin("https://example.org/acme/fxverify.git", "cd" * 20))
    pol = tmp_path / "sup.fx"
    pol.write_text((ROOT / RACE).read_text().replace("# expect: FX-ORD-002", '# fx: allow FX-ORD-002 reason "drained"'))
    _, text = report(tmp_path, "sarif", *CASES, str(pol))
    log = tmp_path / "fxverify.sarif"
    log.write_text(text)
    done = subprocess.run([str(tool), "validate", str(log), "-o", str(tmp_path / "out.sarif"), "--rule-kind", "Gh;Sarif",
                           "--level", "Error;Warning"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
    assert found == [], done.stdout


def _junit_structure(root: ET.Element) -> None:
    """What JUnit consumers (junitparser, GitLab, Jenkins) rely on: named test cases, unique per
    suite, with at most one outcome each, and counts that add up."""
    assert root.tag == "testsuites"
    for s in root.findall("testsuite"):
        cases = s.findall("testcase")
        names = [(c.get("classname"), c.get("name")) for c in cases]
        assert all(a and b for a, b in names) and len(set(names)) == len(names)
        assert all(sum(c.find(t) is not None for t in ("failure", "error", "skipped")) <= 1 for c in cases)
        assert int(s.get("tests")) == len(cases)
        for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            assert int(s.get(attr)) == sum(c.find(tag) is not None for c in cases)
    for attr in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(attr)) == sum(int(s.get(attr)) for s in root.findall("testsuite"))


_PROVED_GROUP = re.compile(r"(\d+) obligations? proved \(([^)]*)\)")


def test_junit_groups_proved_obligations(tmp_path: Path, at_root, corpus_json: dict) -> None:
    code, text = report(tmp_path, "junit", *CASES)
    assert code == 1
    root = ET.fromstring(text)
    _junit_structure(root)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == CASES
    for s, res in zip(suites, corpus_json["results"]):
        n = sum(sum(v for k, v in c.items() if not k.startswith("by:")) for c in res["obligations"].values())
        props = {p.get("name"): p.get("value") for p in s.iter("property")}
        assert int(props["obligations"]) == n
        grouped = sum(int(_PROVED_GROUP.fullmatch(c.find("system-out").text.strip())[1])
                      for c in s.findall("testcase") if c.find("system-out") is not None and len(c) == 1)
        assert grouped == int(props["obligations_proved"])
        bad = [c for c in s.findall("testcase") if c.find("failure") is not None or c.find("error") is not None]
        assert len(bad) == len(res["diagnostics"])
    fail = root.find(".//failure[@type='FX-ORD-002']")
    assert "trace (replayed by the concrete simulator)" in fail.text and ">>" in fail.text
    assert root.find(".//error[@type='FX-SMT-001']") is not None
    assert int(root.get("failures")) == 3 and int(root.get("errors")) == 1


def test_junit_keeps_each_refuted_instance_beside_its_proved_family(tmp_path: Path, at_root) -> None:
    """A family with proved and refuted instances: the proved ones are one passing test case named
    by the family key, every refuted instance fails in a test case of its own."""
    from fxverify.pipeline import CheckOptions, check
    from fxverify.render.junit import family_key

    pol = "corpus/ordering/fail/notify-batch-in-flight.fx"
    outcomes = check(pol, CheckOptions()).outcomes
    code, text = report(tmp_path, "junit", pol, "--no-cache")
    assert code == 1
    root = ET.fromstring(text)
    _junit_structure(root)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    refuted = [v.key for v in outcomes if v.verdict.value != "proved"]
    assert refuted and all(cases[k].find("failure") is not None for k in refuted)
    proved = {}
    for v in outcomes:
        if v.verdict.value == "proved":
            proved.setdefault(family_key(v.key), []).append(v.method)
    assert len(cases) == len(refuted) + len(proved) < len(outcomes)
    for fk, methods in proved.items():
        (out,) = list(cases[fk])
        assert out.tag == "system-out" and int(_PROVED_GROUP.fullmatch(out.text.strip())[1]) == len(methods)
    mixed = {family_key(k) for k in refuted} & set(proved)
    assert mixed  # the family of `copy[i]` has proved and refuted instances
    assert not any(cases[k].find("failure") is not None for k in mixed)


def test_github_annotations(tmp_path: Path, at_root, corpus_json: dict) -> None:
    code, text = report(tmp_path, "github", *CASES)
    assert code == 1
    lines = text.splitlines()
    assert len(lines) == len(findings(corpus_json))
    for line, d in zip(lines, findings(corpus_json)):
        m = re.fullmatch(r"::error file=([^,]+),line=(\d+),col=(\d+),endLine=\d+,endColumn=\d+,title=(FX-[A-Z]+-\d+)[^:]*::(.+)", line)
        assert m, line
        assert (m[1], int(m[2]), int(m[3]), m[4]) == (d["primary"]["file"], d["primary"]["line"], d["primary"]["column"], d["code"])
        assert "\n" not in m[5] and m[5].startswith(d["message"].replace("%", "%25"))


def test_markdown_table_and_sequence_diagrams(tmp_path: Path, at_root, corpus_json: dict) -> None:
    code, text = report(tmp_path, "markdown", *CASES)
    assert code == 1 and text.startswith("## fxverify: failed")
    fs = findings(corpus_json)
    rows = [ln for ln in text.splitlines() if ln.startswith("| error | `FX-")]
    assert len(rows) == len(fs)
    diagrams = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    traced = [d for d in fs if "trace" in d]
    assert len(diagrams) == len(traced)
    for dia, d in zip(diagrams, traced):
        assert "`" not in dia  # Mermaid shows backticks literally: code spans become quotes
        entities = re.sub(r"#(\d+|quot);", "", dia.split("\n", 1)[1])
        assert ";" not in entities and '"' not in entities.replace('["', "").replace('"]', "").replace('|"', "").replace('"|', "")
        if d["code"] == "FX-ORD-001":  # a cycle is drawn as the cycle, not as notes
            assert dia.startswith("flowchart LR\n") and dia.count(" -->|") == len(d["trace"]["events"])
            continue
        head, body = dia.split("\n", 1)
        assert '"wrap": true' in head and body.startswith("sequenceDiagram\n")  # long notes wrap: a readable width
        participants = re.findall(r"participant L\d+ as (.+)", dia)
        lanes = {(ev["device"], ev["stream"]) for ev in d["trace"]["events"]}
        assert len(participants) == len(set(participants)) >= len(lanes)
        assert dia.count("rect rgb") == 1 and dia.count("activate ") == 2 * dia.count("deactivate ")
    race = diagrams[[d["code"] for d in traced].index("FX-ORD-002")]
    # two streams of one GPU are two lanes, each edge's interval an activation bar on its own lane
    assert re.findall(r"participant L\d+ as (.+)", race) == ["gpu0 stream compute", "gpu0 stream copy"]
    steps = race.splitlines()
    assert steps.index("  activate L1") < steps.index("  deactivate L0")  # the intervals overlap
    assert "->>" in text  # the double handoff is drawn as messages between owners


def test_text_ends_with_summary_table(at_root) -> None:
    code, out = fx("check", *CASES)
    assert code == 1
    tail = out[out.rindex("summary"):].splitlines()
    assert re.fullmatch(r"\s+proved\s+1\s+\d+", tail[2]) and re.fullmatch(r"\s+refuted\s+3\s+3", tail[3])
    assert re.fullmatch(r"\s+unknown\s+1\s+1", tail[4]) and re.fullmatch(r"\s+total\s+5\s+\d+", tail[-1])
    assert " s;" not in out


def test_exit_codes_fail_on_and_unknown(tmp_path: Path, at_root) -> None:
    budget = "corpus/solver/fail/budget-exhausted.fx"
    assert fx("check", budget)[0] == 1
    code, out = fx("check", budget, "--unknown", "warn")
    assert code == 0 and "warning[FX-SMT-001]" in out
    assert fx("check", budget, "--unknown", "warn", "--fail-on", "warning")[0] == 1
    p = tmp_path / "p.fx"
    p.write_text((ROOT / "corpus/transforms/ok/compress-worst-case.fx").read_text()
                 + '# fx: allow FX-ORD-002 reason "nothing races here"\n')
    code, out = fx("check", str(p))
    assert code == 0 and "warning[FX-SUP-002]" in out
    assert fx("check", str(p), "--fail-on", "warning")[0] == 1
    assert fx("check", str(tmp_path / "missing.fx"))[0] == 2


def test_unknown_is_never_accepted_by_a_baseline_or_a_suppression(tmp_path: Path, at_root) -> None:
    """An unknown verdict stays unknown and fails the gate whatever a baseline or an inline
    suppression says; only `--unknown warn` lets it through (as a warning)."""
    budget = "corpus/solver/fail/budget-exhausted.fx"
    base = tmp_path / "b.json"
    assert fx("check", budget, "--write-baseline", str(base))[0] == 0
    assert "FX-SMT-001" not in base.read_text()
    code, out = fx("check", budget, "--baseline", str(base), "--format", "json")
    assert code == 1 and json.loads(out)["results"][0]["verdict"] == "unknown"
    # A baseline written by hand with the unknown's own fingerprint accepts nothing: it is stale.
    doc = json.loads(base.read_text())
    _, js = fx("check", budget, "--format", "json")
    unk = next(d for d in json.loads(js)["results"][0]["diagnostics"] if d["code"] == "FX-SMT-001")
    doc["entries"].append({"path": budget, "code": "FX-SMT-001", "fingerprint": unk["fingerprint"],
                           "policy": "budget-exhausted", "edges": [], "witness": "", "message": ""})
    base.write_text(json.dumps(doc))
    code, out = fx("check", budget, "--baseline", str(base))
    assert code == 1 and "error[FX-SMT-001]" in out
    assert fx("check", budget, "--baseline", str(base), "--unknown", "warn")[0] == 0
    # An inline suppression of FX-SMT-001 is refused (FX-SUP-003), and the unknown stays.
    src = (ROOT / budget).read_text().splitlines()
    line = next(i for i, t in enumerate(src) if "# expect: FX-SMT-001" in t)
    src[line] = src[line].replace("# expect: FX-SMT-001", '# fx: allow FX-SMT-001 reason "too big to decide"')
    p = tmp_path / "sup.fx"
    p.write_text("\n".join(src) + "\n")
    code, out = fx("check", str(p))
    assert code != 0 and "FX-SUP-003" in out and "cannot be suppressed: unknown is never a pass" in out


# -- baselines ------------------------------------------------------------------------------

def _reformat(text: str) -> str:
    """Shift every line down and change the spacing, without changing meaning."""
    body = re.sub(r"[ ]+", "  ", text)
    return "# reformatted\n\n\n" + body.replace("\nflow", "\n\n# a comment\nflow")


_CYCLE_HIDES_RACE = """policy "cycle-hides-race"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 1 GiB init
region x in hbm0 at 0x0 size 4 KiB owner gpu0
flow f {
  edge a: write x by gpu0.launch
  edge b: write x by gpu0.launch
  edge c: read x[0, +1] by gpu0.launch after c
}
"""


def test_a_cycle_is_never_accepted_by_a_baseline_or_a_suppression(tmp_path: Path) -> None:
    """With a happens-before cycle no other obligation is checked (the writes `a` and `b` race,
    unseen), so FX-ORD-001 must always fail: a baseline written for it accepts nothing, and an
    inline suppression of it is refused (FX-SUP-003)."""
    p = tmp_path / "cycle.fx"
    p.write_text(_CYCLE_HIDES_RACE)
    base = tmp_path / "base.json"
    assert fx("check", str(p), "--write-baseline", str(base))[0] == 0
    assert json.loads(base.read_text())["entries"] == []
    code, out = fx("check", str(p), "--baseline", str(base))
    assert code == 1 and "error[FX-ORD-001]" in out
    p.write_text(_CYCLE_HIDES_RACE.replace("  edge c:", '  # fx: allow FX-ORD-001 reason "handshake"\n  edge c:'))
    code, out = fx("check", str(p))
    assert code == 2 and "FX-SUP-003" in out and "`FX-ORD-001` cannot be suppressed" in out


def test_baseline_round_trip_survives_reformatting(tmp_path: Path) -> None:
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text())
    base = tmp_path / "baseline.json"
    code, _ = fx("check", str(pol), "--write-baseline", str(base))
    assert code == 0
    entries = json.loads(base.read_text())["entries"]
    assert [e["code"] for e in entries] == ["FX-ORD-002"] and entries[0]["edges"] == ["attn", "offload"]
    assert fx("check", str(pol))[0] == 1
    assert fx("check", str(pol), "--baseline", str(base))[0] == 0
    before = json.loads(report(tmp_path, "json", str(pol), "--no-cache")[1])
    pol.write_text(_reformat(pol.read_text()))
    after = json.loads(report(tmp_path, "json", str(pol), "--no-cache")[1])
    (d0,), (d1,) = findings(before), findings(after)
    assert d0["primary"]["line"] != d1["primary"]["line"] and d0["fingerprint"] == d1["fingerprint"]
    code, out = fx("check", str(pol), "--baseline", str(base))
    assert code == 0 and "FX-ORD-002" not in out.split("summary")[0].split("baseline")[0]
    assert "1 known finding accepted, 0 stale entries" in out
    # the gate passes, but the policy is not called proved while an obligation is refuted
    assert f"{pol}: refuted, accepted — " in out and "1 refuted obligation accepted as known (baseline)" in out
    assert f"{pol}: proved" not in out
    # A new finding is reported; the known one stays accepted.
    pol.write_text(re.sub(r"stream\s+compute", "stream compute\n  edge late: write kv_blk by gpu0.launch stream other",
                          pol.read_text()))
    code, text = report(tmp_path, "json", str(pol), "--baseline", str(base))
    doc = json.loads(text)
    assert code == 1 and doc["baseline"]["matched"] == 1
    assert {tuple(d["edges"]) for d in findings(doc)} and ("attn", "offload") not in {tuple(d["edges"]) for d in findings(doc)}


def test_stale_entries_are_listed_then_dropped(tmp_path: Path) -> None:
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text())
    base = tmp_path / "baseline.json"
    assert fx("check", str(pol), "--write-baseline", str(base))[0] == 0
    pol.write_text(pol.read_text().replace("stream copy  #", "stream copy after attn  #"))
    code, out = fx("check", str(pol), "--baseline", str(base))
    assert code == 0 and "1 stale entry" in out and "stale FX-ORD-002" in out
    code, out = fx("check", str(pol), "--update-baseline", str(base))
    assert code == 0 and json.loads(base.read_text())["entries"] == []
    assert "0 stale entries" in fx("check", str(pol), "--baseline", str(base))[1]


def test_a_moved_policy_keeps_its_baseline_and_a_copy_does_not(tmp_path: Path) -> None:
    """An entry belongs to its path; a moved file's entry follows it, a copy's findings are new."""
    (tmp_path / "p").mkdir()
    a = tmp_path / "p" / "a.fx"
    a.write_text((ROOT / RACE).read_text())
    base = tmp_path / "baseline.json"
    assert fx("check", str(tmp_path / "p"), "--write-baseline", str(base))[0] == 0
    b = tmp_path / "p" / "b.fx"
    b.write_text(a.read_text())
    code, text = report(tmp_path, "json", str(tmp_path / "p"), "--baseline", str(base))
    doc = json.loads(text)
    assert code == 1 and doc["baseline"]["matched"] == 1
    assert [(r["policy"].endswith("b.fx"), [d["code"] for d in r["diagnostics"]]) for r in doc["results"]] == [
        (False, []), (True, ["FX-ORD-002"])]
    a.unlink()  # now b.fx is a.fx moved
    code, text = report(tmp_path, "json", str(tmp_path / "p"), "--baseline", str(base))
    assert code == 0 and json.loads(text)["baseline"]["matched"] == 1


def test_a_policy_that_does_not_load_leaves_its_entries_alone(tmp_path: Path) -> None:
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text())
    base = tmp_path / "baseline.json"
    assert fx("check", str(pol), "--write-baseline", str(base))[0] == 0
    pol.write_text(pol.read_text() + "\nregion\n")
    code, out = fx("check", str(pol), "--update-baseline", str(base))
    assert code == 2 and "0 stale entries" in out and "dropped" not in out
    assert len(json.loads(base.read_text())["entries"]) == 1


@pytest.mark.parametrize("doc,words", [
    ('{"fxverify_baseline": true, "entries": []}', "is not an fxverify baseline"),
    ('{"fxverify_baseline": 1, "entries": [{"code": "FX-ORD-002"}]}', "entry 1 lacks `path`, `fingerprint`"),
    ('{"fxverify_baseline": 1, "entries": [7]}', "entry 1 is not an object"),
    ('{"fxverify_baseline": 1, "entries": [{"path": 1, "code": "", "fingerprint": "", "policy": "", "edges": [],'
     ' "witness": "", "message": ""}]}', "wrong type"),
])
def test_malformed_baselines_say_what_is_wrong(tmp_path: Path, doc: str, words: str) -> None:
    (tmp_path / "b.json").write_text(doc)
    report = _gate(str(ROOT / RACE), baseline=str(tmp_path / "b.json"))
    assert [p.code for p in report.problems] == ["FX-GATE-001"] and words in report.problems[0].message


def test_a_baseline_an_editor_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """A UTF-8 byte order mark before the JSON (some editors write one) is read past."""
    base = tmp_path / "b.json"
    assert CliRunner().invoke(app, ["check", str(ROOT / RACE), "--no-cache", "--write-baseline", str(base)]).exit_code == 0
    base.write_bytes(b"\xef\xbb\xbf" + base.read_bytes())
    r = CliRunner().invoke(app, ["check", str(ROOT / RACE), "--no-cache", "--baseline", str(base)])
    assert r.exit_code == 0 and "FX-GATE-001" not in r.stderr, r.stdout + r.stderr


def test_bad_baselines_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text("{not json")
    r = CliRunner().invoke(app, ["check", str(ROOT / RACE), "--baseline", str(tmp_path / "b.json")])
    assert r.exit_code == 2 and "is not JSON" in r.stderr and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["check", str(ROOT / RACE), "--baseline", str(tmp_path / "none.json")])
    assert r.exit_code == 2 and "does not exist" in r.stderr


@pytest.mark.parametrize("data,where,label", [
    (b'{"fxverify_baseline": 1,\n "entries": [\n  {"a": 1,}\n ]}\n', "b.json:3:11", "here"),
    (b'\xef\xbb\xbf{"fxverify_baseline": 1,\n "entries": [\n  {"a": 1,}\n ]}\n', "b.json:3:11", "here"),  # a BOM first
    (b'{"fxverify_baseline": 1, "entries": []}\n\xff\n', "b.json:2:1", "not UTF-8"),
])
def test_a_baseline_with_a_syntax_error_or_a_bad_byte_points_at_it(tmp_path: Path, data: bytes, where: str,
                                                                    label: str) -> None:
    """FX-GATE-001 at the JSON syntax error or the first byte that is not UTF-8, the line quoted and
    underlined: not the decoder's raw message without a place."""
    (tmp_path / "b.json").write_bytes(data)
    r = CliRunner().invoke(app, ["check", str(ROOT / RACE), "--baseline", str(tmp_path / "b.json")])
    assert r.exit_code == 2 and "FX-GATE-001" in r.stderr and label in r.stderr, r.stderr
    assert where in r.stderr.replace(str(tmp_path) + "/", "") and "codec" not in r.stderr


# -- suppressions ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,needle", [
    ("text", "= suppressed: the copy engine drains the compute stream first"),
    ("json", '"suppressed": "the copy engine drains the compute stream first"'),
    ("sarif", '"justification": "the copy engine drains the compute stream first"'),
    ("junit", 'message="suppressed FX-ORD-002: the copy engine drains the compute stream first"'),
    ("github", "::notice file="),
    ("markdown", "| suppressed | `FX-ORD-002`"),
])
def test_suppressed_findings_show_their_reason_in_every_format(tmp_path: Path, fmt: str, needle: str) -> None:
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text().replace(
        "# expect: FX-ORD-002", '# fx: allow FX-ORD-002 reason "the copy engine drains the compute stream first"'))
    code, text = report(tmp_path, fmt, str(pol))
    assert code == 0, text
    assert needle in text
    assert "the copy engine drains the compute stream first" in text


def test_suppression_on_the_line_above_the_edge(tmp_path: Path) -> None:
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text().replace(
        "  edge offload:", '  # fx: allow FX-ORD-002 reason "accepted"\n  edge offload:'))
    code, out = fx("check", str(pol))
    assert code == 0 and "suppressed[FX-ORD-002]" in out and "FX-SUP-002" not in out


def test_suppression_without_reason_is_an_error(tmp_path: Path) -> None:
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text().replace("# expect: FX-ORD-002", "# fx: allow FX-ORD-002"))
    code, out = fx("check", str(pol))
    assert code == 2 and "error[FX-SUP-001]" in out and "kv.fx:19:" in out


# -- cache and parallelism --------------------------------------------------------------------

def _stats(tmp_path: Path, *args: str) -> dict:
    code, text = report(tmp_path, "json", *args, "--stats")
    return json.loads(text)["stats"]


@pytest.mark.parametrize("fmt,lost,shown", [
    ("text", 2, "; workers lost 2 (their work ran in this process)"),
    ("markdown", 2, "; workers lost 2 (their work ran in the gate's process)."),
    ("json", 2, '"workers_lost": 2'),
    ("text", 0, "; policies from cache 0, checked 1; "),
    ("json", 0, '"workers_lost": 0'),
    ("markdown", 0, "; policies from cache 0; solver queries: "),
])
def test_stats_count_the_workers_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, lost: int,
                                      shown: str) -> None:
    """``--stats`` says how many workers ended without answering (their work redone in the
    gate's process: ``CacheStats.workers_lost``); the text and Markdown lines only when any
    did."""
    import fxverify.gate as gate

    real = gate.run_checks

    def losing(*args, **kwargs):
        results, stats = real(*args, **kwargs)
        stats.workers_lost = lost
        return results, stats

    monkeypatch.setattr(gate, "run_checks", losing)
    code, text = report(tmp_path, fmt, "corpus/ordering/ok/kv-offload-ordered.fx", "--no-cache", "--stats")
    assert code == 0 and shown in text
    if fmt != "json":
        assert ("workers lost" in text) == (lost > 0)


def test_cache_hits_misses_and_rebuilds(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    pol = tmp_path / "kv.fx"
    pol.write_text((ROOT / RACE).read_text())
    args = (str(pol), "--no-prune", "--cache-dir", str(cache))
    cold = _stats(tmp_path, *args)
    n = cold["solved"]
    queries = cold["obligation_hits"] + n
    # Two obligations with the same SMT-LIB text are solved once; the one refutation shown is
    # asked again, with its objectives, for its minimal witness (one query more).
    minimised = 1
    assert n > 5 and cold["obligation_misses"] == n and cold["policy_misses"] == 1
    warm = _stats(tmp_path, *args)
    assert (warm["policy_hits"], warm["solved"], warm["obligation_misses"]) == (1, 0, 0)
    # Same output, cold or warm.
    assert report(tmp_path, "json", *args)[1] == report(tmp_path, "json", str(pol), "--no-prune", "--no-cache")[1]
    # Change one edge: only the obligations whose SMT-LIB text changed are solved again.
    smt0 = tmp_path / "smt0"
    fx("check", str(pol), "--no-prune", "--no-cache", "--dump-smt", str(smt0))
    pol.write_text(pol.read_text().replace("stream copy  #", "stream copy after attn  #"))
    smt1 = tmp_path / "smt1"
    fx("check", str(pol), "--no-prune", "--no-cache", "--dump-smt", str(smt1))

    def texts(d: Path) -> set[str]:
        return {"".join(ln for ln in p.read_text().splitlines(True) if not ln.startswith(";")) for p in d.rglob("*.smt2")}

    assert len(texts(smt0)) == n - minimised
    changed = len(texts(smt1) - texts(smt0))
    edited = _stats(tmp_path, *args)  # the race is fixed: nothing to minimise
    assert 0 < changed < n
    assert (edited["policy_misses"], edited["solved"]) == (1, changed)
    assert edited["obligation_hits"] + edited["obligation_misses"] == queries - minimised
    # Corrupted entries are misses, rebuilt by the next run.
    entries = sorted((cache / "v1").rglob("*.json.gz"))
    for p in entries:
        p.write_bytes(b"\x1f\x8b garbage")
    again = _stats(tmp_path, *args)
    assert again["policy_misses"] == 1 and again["solved"] == n - minimised  # the edited policy: proved
    assert _stats(tmp_path, *args)["policy_hits"] == 1


def test_the_cache_key_covers_the_repository_root(tmp_path: Path) -> None:
    """Which includes are allowed depends on the repository root (the nearest `.git`), not only on
    the files read: a `.git` that moves the root makes the cached pass stale."""
    lib = ROOT / "corpus/transforms/ok/compress-worst-case.fx"
    (tmp_path / ".git").mkdir()
    (tmp_path / "lib.fx").write_text(lib.read_text().replace('policy "compress-worst-case"', ""))
    repo = tmp_path / "repo"
    repo.mkdir()
    pol = repo / "p.fx"
    pol.write_text('policy "uses-lib"\ninclude "../lib.fx"\n')
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = fx("check", str(pol), *cache)
    assert first[0] == 0 and "proved" in first[1], first[1]
    (repo / ".git").mkdir()  # now the root is `repo`, and `../lib.fx` lies outside it
    code, out = fx("check", str(pol), *cache)
    assert code == 2 and "FX-NAM-004" in out, out
    assert fx("check", str(pol), "--no-cache")[0] == 2


def test_a_baseline_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    """FX-IO-001, exit 2, naming the file, when its folder does not exist."""
    where = tmp_path / "missing" / "b.json"
    r = CliRunner().invoke(app, ["check", str(ROOT / RACE), "--no-cache", "--write-baseline", str(where)])
    assert r.exit_code == 2 and f"FX-IO-001]: cannot write the baseline `{where}`" in r.output, r.output
    assert not where.parent.exists()


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    stats = _stats(tmp_path, str(ROOT / RACE), "--no-cache", "--cache-dir", str(cache))
    assert stats["solved"] == 1 and not cache.exists()  # its minimal witness (a checked guess refutes the race)


def test_jobs_output_is_byte_identical(tmp_path: Path, at_root) -> None:
    args = ("corpus/ordering", "corpus/ownership", "corpus/solver", "--no-cache")
    for fmt in ("text", "sarif"):
        one = report(tmp_path, fmt, *args, "--jobs", "1")
        two = report(tmp_path, fmt, *args, "--jobs", "2")
        assert one == two and one[0] == 1


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown", "html"])
def test_input_errors_in_every_format(tmp_path: Path, fmt: str) -> None:
    bad = tmp_path / "typo.fx"
    bad.write_text('policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu1 size 1 MiB\n')
    code, text = report(tmp_path, fmt, str(bad), str(ROOT / RACE))
    assert code == 2 and "FX-NAM-001" in text and "Traceback" not in text
    if fmt == "sarif":
        import jsonschema

        jsonschema.validate(json.loads(text), json.loads((ROOT / "corpus/inputs/schemas/sarif-schema-2.1.0.json").read_text()))
    if fmt == "junit":
        assert ET.fromstring(text).find(".//testcase[@name='load']/error[@type='FX-NAM-001']") is not None


def test_concurrent_runs_share_one_cache(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    cache = tmp_path / "cache"
    args = [sys.executable, "-m", "fxverify", "check", str(ROOT / RACE), str(ROOT / "corpus/alias/ok/interleaved-strided.fx"),
            "--no-prune", "--format", "json", "--cache-dir", str(cache)]
    env = {**os.environ, "NO_COLOR": "1"}
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [1, 1, 1], outs
    assert outs[0][0] == outs[1][0] == outs[2][0]
    assert not [p for p in cache.rglob("*") if p.name.startswith(".fxverify-")]  # no temporary file left behind
    assert fx("check", *args[4:])[1] == outs[0][0]


def test_jobs_on_one_small_policy_checks_it_here(tmp_path: Path) -> None:
    """One policy below the split threshold (`--no-prune`: every obligation a query) with `--jobs
    2`: checked in this process, without starting workers; same bytes, same counts, and the
    obligation cache answers as with one job (tests/test_jobs.py splits policies into shards)."""
    args = (str(ROOT / RACE), "--no-prune", "--cache-dir", str(tmp_path / "c1"))
    one = report(tmp_path, "json", *args, "--jobs", "1", "--no-cache")
    two = report(tmp_path, "json", *args, "--jobs", "2")
    assert one == two and one[0] == 1
    stats = _stats(tmp_path, str(ROOT / RACE), "--no-prune", "--cache-dir", str(tmp_path / "c2"), "--jobs", "2")
    assert stats["solved"] == stats["obligation_misses"] > 5


@pytest.mark.parametrize("where", ["trailing", "above"])
def test_suppression_on_the_edge_covers_its_later_clauses(tmp_path: Path, where: str) -> None:
    """FX-OWN-003's primary span is the `handoff` clause on the line after `edge to_dpu:`; a
    suppression on (or above) the edge's first line annotates the whole edge."""
    src = (ROOT / "corpus/ownership/fail/double-handoff.fx").read_text()
    # The corpus file is formatted (one statement per line): put the clause on a line of its own.
    src = src.replace("after to_nic handoff stage: gpu0 -> dpu0", "after to_nic\n      handoff stage: gpu0 -> dpu0")
    assert "after to_nic\n" in src
    sup = '# fx: allow FX-OWN-003 reason "the NIC returns `stage` before the DPU takes it"'
    if where == "trailing":
        src = src.replace("after to_nic\n", f"after to_nic  {sup}\n")
    else:
        src = src.replace("  edge to_dpu:", f"  {sup}\n  edge to_dpu:")
    pol = tmp_path / "p.fx"
    pol.write_text(src)
    code, out = fx("check", str(pol))
    assert code == 0 and "suppressed[FX-OWN-003]" in out and "FX-SUP-002" not in out


def test_each_file_checked_once_in_a_deterministic_order(at_root) -> None:
    from fxverify.gate.discover import collect_policies

    got = collect_policies(["corpus/ordering/ok/kv-offload-ordered.fx", "corpus/ordering", "./corpus/ordering/ok/spill-then-free.fx"])
    assert got[0] == "corpus/ordering/ok/kv-offload-ordered.fx"
    assert got[1:] == sorted(str(p.relative_to(ROOT)) for p in (ROOT / "corpus/ordering").rglob("*.fx")
                             if p.name != "kv-offload-ordered.fx")


_FABRIC = """fabric {
  device gpu0: gpu hooks [launch]
}
"""
_USES_FABRIC = 'policy "{name}"\ninclude "{inc}"\nspace hbm0 on gpu0 size 80 GiB\n' \
               'region kv in hbm0 at 0x0 size 2 MiB owner gpu0 dtype bf16\nflow f {{\n  edge w: write kv by gpu0.launch\n}}\n'


def _git(cwd: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def _tree(root: Path) -> None:
    """A policy repository: a tracked policy, an untracked one, an ignored broken one, a fragment."""
    (root / "gen").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "lib/fabric.fx").write_text(_FABRIC)
    (root / "a.fx").write_text(_USES_FABRIC.format(name="a", inc="lib/fabric.fx"))
    (root / "new.fx").write_text(_USES_FABRIC.format(name="new", inc="lib/fabric.fx"))
    (root / "gen/broken.fx").write_text('policy "broken"\nfabric {\n')
    (root / ".gitignore").write_text("gen/\n")


@pytest.mark.parametrize("in_git", [True, False])
def test_folder_scan_skips_what_git_ignores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_git: bool) -> None:
    from fxverify.gate.discover import collect_policies

    _tree(tmp_path)
    if in_git:
        _git(tmp_path, "init", "-q")
        _git(tmp_path, "add", "a.fx", "lib/fabric.fx")
    monkeypatch.chdir(tmp_path)
    want = ["a.fx", "new.fx"] if in_git else ["a.fx", "gen/broken.fx", "new.fx"]
    assert collect_policies(["."]) == want
    code, _ = fx("check", ".", "--no-cache")
    assert code == (0 if in_git else 2)


@pytest.mark.parametrize("in_git", [True, False])
def test_folder_scan_reports_a_dangling_policy_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_git: bool) -> None:
    """A `*.fx` link that leads nowhere (its target moved, or a loop) is a policy that went away: a
    folder scan checks it, so it gets FX-NAM-003 as when named, and the gate fails instead of
    passing without it. A dangling link not named `*.fx`, or a `*.fx` link to a folder, is not a
    policy and stays skipped."""
    from fxverify.gate.discover import collect_policies

    _tree(tmp_path)
    (tmp_path / "gone.fx").symlink_to("moved/gone.fx")
    (tmp_path / "loop.fx").symlink_to("loop.fx")
    (tmp_path / "notes.md").symlink_to("moved/notes.md")
    (tmp_path / "dir.fx").symlink_to("lib")  # a link to a folder, named like a policy: not one
    if in_git:
        _git(tmp_path, "init", "-q")
        _git(tmp_path, "add", "a.fx", "lib/fabric.fx", "gone.fx", "notes.md", "dir.fx")  # loop.fx stays untracked
    monkeypatch.chdir(tmp_path)
    want = ["a.fx", "gone.fx", "loop.fx", "new.fx"]
    assert collect_policies(["."], ("gen",)) == want
    code, out = fx("check", ".", "--no-cache", "--exclude", "gen")
    assert code == 2 and "error[FX-NAM-003]: policy file `gone.fx` not found" in out, out
    assert "error[FX-NAM-003]: cannot read policy file `loop.fx`" in out and "notes.md" not in out, out
    assert fx("check", ".", "--no-cache", "--exclude", "gen", "--exclude", "gone.fx", "--exclude", "loop.fx")[0] == 0
    r = CliRunner().invoke(app, ["fmt", "--check", "."])  # fmt walks folders the same way
    assert r.exit_code == 2 and "cannot read `gone.fx`" in r.stderr and "notes.md" not in r.output, r.output


def test_exclude_globs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fxverify.gate.discover import collect_policies, excluded

    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert collect_policies(["."], ("gen",)) == ["a.fx", "new.fx"]
    assert collect_policies(["."], ("gen/*", "new.fx")) == ["a.fx"]
    assert collect_policies(["a.fx", "gen/broken.fx"], ("*broken*",)) == ["a.fx"]
    assert excluded("x/corpus/real/p.fx", ("corpus/real",)) and not excluded("x/corpus/p.fx", ("corpus/real",))
    assert fx("check", ".", "--no-cache")[0] == 2
    assert fx("check", ".", "--no-cache", "--exclude", "gen/")[0] == 0
    assert fx("check", ".", "--no-cache", "--exclude", "*.fx")[0] == 2  # nothing left: FX-USE-001


def test_a_named_fragment_stands_for_its_includers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pre-commit passes only the changed files: a changed fabric fragment re-checks every policy
    that includes it (here one through another fragment); an unused fragment is checked as named."""
    from fxverify.gate.discover import collect_policies

    _tree(tmp_path)
    (tmp_path / "lib/more.fx").write_text('include "fabric.fx"\n')
    (tmp_path / "b.fx").write_text(_USES_FABRIC.format(name="b", inc="lib/more.fx"))
    (tmp_path / "lone.fx").write_text(_FABRIC)
    monkeypatch.chdir(tmp_path)
    assert collect_policies(["lib/fabric.fx"]) == ["a.fx", "b.fx", "new.fx"]
    assert collect_policies(["lib/more.fx", "a.fx"]) == ["b.fx", "a.fx"]
    assert collect_policies(["lone.fx"]) == ["lone.fx"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown", "html"])
def test_a_crash_is_fx_int_001_in_every_format(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_root) -> None:
    """A check that raises is one FX-INT-001 diagnostic of that policy, shown like any finding in
    every format, beside the other policies' results; the exit code is 3 and no traceback is
    printed."""
    import fxverify.pipeline as pl

    real = pl.check

    def boom(path, *a, **k):
        if path.endswith("compress-worst-case.fx"):
            raise RuntimeError("invariant broke")
        return real(path, *a, **k)

    monkeypatch.setattr(pl, "check", boom)
    ok = "corpus/ordering/ok/kv-offload-ordered.fx"
    r = CliRunner().invoke(app, ["check", ok, "corpus/transforms/ok/compress-worst-case.fx", "--no-cache",
                                 "--format", fmt, "-o", str(tmp_path / "out")], catch_exceptions=False)
    assert r.exit_code == 3 and "Traceback" not in r.output
    text = (tmp_path / "out").read_text()
    assert "FX-INT-001" in text and "invariant broke" in text
    if fmt == "json":
        doc = json.loads(text)
        (good, bad) = doc["results"]
        assert good["verdict"] == "proved" and bad["verdict"] == "error"
        assert [d["code"] for d in bad["diagnostics"]] == ["FX-INT-001"]
        assert (doc["summary"]["internal_error"], doc["summary"]["error"], doc["summary"]["proved"]) == (1, 0, 1)
    elif fmt in ("text", "markdown"):
        assert re.search(r"internal error \|? *1 ", text) and re.search(r"input error \|? *0 ", text), text
    elif fmt == "sarif":
        import jsonschema

        log = json.loads(text)
        jsonschema.validate(log, json.loads((ROOT / "corpus/inputs/schemas/sarif-schema-2.1.0.json").read_text()))
        run = log["runs"][0]
        assert [x["ruleId"] for x in run["results"]] == ["FX-INT-001"]
        assert run["invocations"][0]["executionSuccessful"] is False
    elif fmt == "junit":
        cases = [c for c in ET.fromstring(text).iter("testcase") if c.find("error") is not None]
        assert [(c.get("classname"), c.get("name"), c.find("error").get("type")) for c in cases] == [
            ("corpus/transforms/ok/compress-worst-case.fx.internal", "check", "FX-INT-001")]


def _gate(*paths: str, **kw):
    from fxverify.gate import GateRequest, run_gate

    return run_gate(GateRequest(paths=paths, **kw))


@pytest.mark.parametrize("case", ["no policy files", "dump into a file"])
def test_problems_of_the_run_stop_it_with_their_own_codes(tmp_path: Path, case: str) -> None:
    if case == "no policy files":
        report, code = _gate(str(tmp_path)), "FX-USE-001"
    else:
        report, code = _gate(str(ROOT / RACE), dump_smt=__file__), "FX-IO-001"
    assert [p.code for p in report.problems] == [code] and report.stopped and report.exit_code == 2
    assert report.results == []


def test_conflicting_baseline_options_are_a_usage_error(tmp_path: Path) -> None:
    report = _gate(str(ROOT / RACE), baseline=str(tmp_path / "a"), write_baseline=str(tmp_path / "b"))
    assert [p.code for p in report.problems] == ["FX-USE-002"] and report.exit_code == 2
    assert not (tmp_path / "b").exists()


def test_an_unreadable_baseline_is_fx_gate_001(tmp_path: Path) -> None:
    report = _gate(str(ROOT / RACE), baseline=str(tmp_path / "missing.json"))
    assert [p.code for p in report.problems] == ["FX-GATE-001"] and "does not exist" in report.problems[0].message


def test_no_baseline_is_written_after_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fx"
    bad.write_text('policy "x"\nfabric { device gpu0 gpu hooks [launch] }\n')
    out = tmp_path / "b.json"
    report = _gate(str(bad), str(ROOT / RACE), write_baseline=str(out))
    assert report.exit_code == 2 and not out.exists()
    assert [(p.code, p.severity.value) for p in report.problems] == [("FX-GATE-002", "note")] and not report.stopped


def test_an_unwritable_baseline_is_fx_io_001(tmp_path: Path) -> None:
    report = _gate(str(ROOT / RACE), write_baseline=str(tmp_path / "no" / "b.json"))
    assert [p.code for p in report.problems] == ["FX-IO-001"] and report.exit_code == 2


def test_a_dead_worker_loses_no_result(at_root) -> None:
    """When the worker pool breaks (a worker killed or out of memory), the unfinished policies are
    checked in this process: every policy still has its result, in input order."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from fxverify.gate import executors, run as gate_run

    files = ["corpus/ordering/ok/kv-offload-ordered.fx", RACE, "corpus/transforms/ok/compress-worst-case.fx"]

    class Dying(executors.LocalExecutor):
        def submit(self, fn, task):
            if task.snapshot.root == RACE:
                fut: Future = Future()
                fut.set_exception(BrokenProcessPool("a worker died"))
                return fut
            return super().submit(fn, task)

    ex = Dying(2)
    try:
        results, _stats = gate_run.run_checks(files, gate_run.CheckOptions(), None, executor=ex)
    finally:
        ex.close()
    assert [r.path for r in results] == files
    assert [r.verdict.value for r in results] == ["proved", "refuted", "proved"]


def test_an_unwritable_dump_file_is_fx_io_001(tmp_path: Path, at_root) -> None:
    """A dump file that cannot be written (here a folder stands where the file goes) is an
    unwritable output, exit 2, never an internal error."""
    (tmp_path / "kv-offload-unordered" / "FX-ORD-001__policy.smt2").mkdir(parents=True)
    report = _gate(RACE, dump_smt=str(tmp_path), cache_dir=None)
    assert [p.code for p in report.problems] == ["FX-IO-001"] and report.exit_code == 2


def test_quiet_prints_failures_only(at_root) -> None:
    """`--quiet`: the refuted policy's finding with its trace and its summary line, one summary
    line for the run, and nothing for the proved policy (neither its line nor its families)."""
    ok, bad = "corpus/ordering/ok/kv-offload-ordered.fx", RACE
    code, loud = fx("check", ok, bad, "--no-cache")
    assert code == 1 and f"{ok}: proved" in loud
    code, out = fx("check", ok, bad, "--no-cache", "--quiet")
    assert code == 1 and ok not in out and "  ordering " not in out
    assert "error[FX-ORD-002]" in out and "trace (replayed by the concrete simulator)" in out
    lines = out.splitlines()
    assert lines[-2].startswith(f"{bad}: refuted — ")
    assert lines[-1] == "summary: 2 policies (proved 1, refuted 1, unknown 0, input error 0); " \
                        "30 obligations (proved 29, refuted 1, unknown 0)"
    code, out = fx("check", ok, "--no-cache", "-q")
    assert code == 0 and out.splitlines() == [out.strip()] and out.startswith("summary: 1 policy (proved 1,")


@pytest.mark.parametrize("color,no_color_env,styled", [("always", True, True), ("always", False, True),
                                                        ("never", False, False), ("auto", False, False)])
def test_color_option(monkeypatch: pytest.MonkeyPatch, color: str, no_color_env: bool, styled: bool) -> None:
    """`--color always` styles the text report even when piped or with NO_COLOR (a flag overrides
    the variable); `never` and `auto` off a terminal print plain text."""
    if no_color_env:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    code, out = fx("check", str(ROOT / RACE), "--no-cache", "--color", color)
    assert code == 1 and "FX-ORD-002" in out
    assert ("\x1b[" in out) is styled


def test_color_option_rejects_other_values() -> None:
    r = CliRunner().invoke(app, ["check", str(ROOT / RACE), "--color", "sometimes"])
    assert r.exit_code == 2 and "Traceback" not in r.output
