"""``fxverify explain``, ``specs/codes.md`` kept in sync with the registry and the corpus,
``fxverify init``, the pre-commit hook and the GitHub Action, and the progress bar."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import REGISTRY, CorpusExample, InlineExample
from fxverify.diagnostics.explain import build_examples, codes_markdown, load_examples

from tests.conftest import ROOT


def test_codes_md_and_examples_are_in_sync() -> None:
    """If this fails, run `python -m fxverify.diagnostics.explain --write` and review the diff."""
    examples = build_examples(ROOT)
    assert load_examples() == examples
    assert (ROOT / "specs/codes.md").read_text() == codes_markdown(examples)


def test_obligation_semantics_headings_use_the_registry_titles() -> None:
    """specs/obligations.md names each code it explains by the title ``fxverify explain`` prints."""
    import re

    text = (ROOT / "specs/obligations.md").read_text()
    headings = re.findall(r"^#+ .*?(FX-[A-Z]+-\d+) ([^\n]*)", text, flags=re.M)
    assert headings
    wrong = [(c, t) for c, t in headings if not t.lower().startswith(REGISTRY[c].title.lower())]
    assert not wrong, wrong


def test_every_code_has_a_failing_and_a_fixed_example() -> None:
    missing = [c for c in REGISTRY.values() if c.example is None and c not in (codes.INT_001, codes.MAP_101)]
    assert not missing
    for code in REGISTRY.values():
        if isinstance(code.example, CorpusExample):
            assert f"# expect: {code}" in (ROOT / code.example.fail).read_text(), code.example.fail
            assert "/ok/" in code.example.fixed and (ROOT / code.example.fixed).is_file()


def test_explain_prints_rule_why_and_examples() -> None:
    r = CliRunner().invoke(app, ["explain", "fx-ord-002"])
    assert r.exit_code == 0
    for part in ("FX-ORD-002: data race", "rule:", "why it matters:", "failing example (corpus/ordering/fail/",
                 "# expect: FX-ORD-002", "+  edge offload: move kv_blk -> kv_host by gpu0.copy_done stream copy after attn"):
        assert part in r.stdout
    r = CliRunner().invoke(app, ["explain", "FX-OWN-04"])
    assert r.exit_code == 2 and "did you mean `FX-OWN-004`" in r.stderr


def test_explain_of_a_family_lists_its_codes() -> None:
    """``explain FX-ORD`` (or ``fx-ord-``) lists the family's codes, not one guessed code."""
    for arg in ("FX-ORD", "fx-ord-"):
        r = CliRunner().invoke(app, ["explain", arg])
        assert r.exit_code == 0, r.stderr
        assert [ln.split()[0] for ln in r.stdout.splitlines()] == [c for c in REGISTRY if c.startswith("FX-ORD-")]
    r = CliRunner().invoke(app, ["explain", "FX-OR"])  # no family: the nearest code, exit 2
    assert r.exit_code == 2 and "did you mean" in r.stderr


def test_explain_list_has_every_code() -> None:
    r = CliRunner().invoke(app, ["explain", "--list"])
    assert r.exit_code == 0
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == list(REGISTRY)


def _run_entry(entry: str, cwd: Path, files: list[str]) -> subprocess.CompletedProcess:
    """Run a hook's ``entry`` as pre-commit does with ``pass_filenames: true``: the files last."""
    argv = shlex.split(entry) + files
    assert argv[0] == "fxverify"
    return subprocess.run([sys.executable, "-m", "fxverify", *argv[1:]], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "NO_COLOR": "1"})


def test_init_scaffolds_a_repository_whose_hook_passes(tmp_path: Path) -> None:
    repo = tmp_path / "policies-repo"
    spec = "fxverify @ git+https://example.org/acme/fxverify.git@" + "ab" * 20
    r = CliRunner().invoke(app, ["init", str(repo), "--action", "acme/fxverify@v9", "--package", spec])
    assert r.exit_code == 0, r.output
    cfg = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    (hook,) = cfg["repos"][0]["hooks"]
    wf = yaml.safe_load((repo / ".github/workflows/fxverify.yml").read_text())
    steps = wf["jobs"]["check"]["steps"]
    assert any(s.get("uses") == "acme/fxverify@v9" for s in steps)
    assert "README.md" in os.listdir(repo) and "fxverify check" in (repo / "README.md").read_text()
    assert hook["pass_filenames"] is True and hook["files"] == r"\.fx$"
    # The hook installs fxverify itself (pre-commit's python language), from the given requirement.
    assert hook["language"] == "python" and hook["additional_dependencies"] == [spec]
    done = _run_entry(hook["entry"], repo, ["policies/example.fx"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "proved" in done.stdout
    # Break the example: the same hook now fails the commit.
    ex = repo / "policies/example.fx"
    ex.write_text(ex.read_text().replace(" after attn", ""))
    done = _run_entry(hook["entry"], repo, ["policies/example.fx"])
    assert done.returncode == 1 and "FX-ORD-002" in done.stdout
    # init adds what is missing and keeps what is there (saying so), unless --force; never a README.
    (repo / ".github/workflows/fxverify.yml").unlink()
    r = CliRunner().invoke(app, ["init", str(repo), "--package", spec])
    assert r.exit_code == 0 and "wrote" in r.stdout and "fxverify.yml" in r.stdout
    assert "kept" in r.stdout and "policies/example.fx (already there; `--force` replaces it)" in r.stdout
    assert "add the `fxverify` hook" in r.stdout and "copy_done after attn" not in ex.read_text()
    (repo / "README.md").write_text("# mine\n")
    r = CliRunner().invoke(app, ["init", str(repo), "--force", "--package", spec])
    assert r.exit_code == 0 and "README.md (already there; a README is never replaced)" in r.stdout
    assert (repo / "README.md").read_text() == "# mine\n" and "copy_done after attn" in ex.read_text()


def test_init_names_this_fxverify_by_its_repository_and_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `--package`, the hook and the workflow install the fxverify that ran `init`: its git
    repository at its commit (pip's record of a VCS install, or the checkout it runs from)."""
    import fxverify.gate.scaffold as scaffold
    from fxverify.origin import Origin

    monkeypatch.setattr(scaffold, "origin", lambda: Origin("git@example.org:acme/fxverify.git", "cd" * 20))
    r = CliRunner().invoke(app, ["init", str(tmp_path)])
    assert r.exit_code == 0, r.output
    spec = f"fxverify @ git+ssh://git@example.org/acme/fxverify.git@{'cd' * 20}"
    assert f"fxverify installs from: {spec}" in r.stdout
    hook = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"][0]
    assert hook["additional_dependencies"] == [spec]
    job = yaml.safe_load((tmp_path / ".github/workflows/fxverify.yml").read_text())["jobs"]["check"]
    assert job["env"]["FXVERIFY_PACKAGE"] == spec


def test_init_adds_the_gate_to_a_folder_with_a_readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository that has a README (most do) is not refused: the README is kept; the other
    files are written. No reference in the scaffold points at something that does not exist: no
    package index install, no published action or tag, and every third-party action is pinned by
    a full commit (the tag in a comment); with no known origin, the workflow's install is a
    placeholder that fails the job with a message until it is filled in."""
    import re

    import fxverify.gate.scaffold as scaffold
    from fxverify.origin import Origin

    monkeypatch.setattr(scaffold, "origin", lambda: Origin())
    (tmp_path / "README.md").write_text("# ours\n")
    r = CliRunner().invoke(app, ["init", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "README.md").read_text() == "# ours\n" and "FXVERIFY_PACKAGE" in r.stdout
    texts = {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    for p, text in texts.items():
        assert "pip install fxverify" not in text and "rev:" not in text, p
        assert "fxverify/fxverify@" not in text, p
    cfg = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())
    (repo,) = cfg["repos"]
    assert repo["repo"] == "local" and repo["hooks"][0]["language"] == "python"
    wf = yaml.safe_load((tmp_path / ".github/workflows/fxverify.yml").read_text())
    job = wf["jobs"]["check"]
    for step in job["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    wf_text = (tmp_path / ".github/workflows/fxverify.yml").read_text()
    for name, (sha, tag) in scaffold.PINNED.items():
        if name in wf_text:
            assert f"{name}@{sha}  # {tag}" in wf_text
    run = next(s["run"] for s in job["steps"] if s.get("name") == "Check policies")
    assert run.count("fxverify check") == 1 and "sarif=" in run and "GITHUB_STEP_SUMMARY" in run
    assert job["env"]["FXVERIFY_PACKAGE"] == ""
    install = next(s["run"] for s in job["steps"] if s.get("name") == "Install fxverify")
    assert "exit 1" in install and '"$FXVERIFY_PACKAGE"' in install
    done = subprocess.run(["bash", "-c", install], capture_output=True, text=True, env={**os.environ, "FXVERIFY_PACKAGE": ""})
    assert done.returncode == 1 and "set FXVERIFY_PACKAGE" in done.stdout


def test_published_hook_and_action_definitions(tmp_path: Path) -> None:
    import re

    from fxverify.gate.scaffold import PINNED

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "fxverify" and hook["files"] == r"\.fx$" and hook["pass_filenames"] is True
    assert hook["language"] == "python"  # pre-commit installs the fxverify repository for the hook
    CliRunner().invoke(app, ["init", str(tmp_path)])
    assert _run_entry(hook["entry"], tmp_path, ["policies/example.fx"]).returncode == 0
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    script = next(s["run"] for s in steps if s.get("id") == "check")
    # One check writes annotations, SARIF and the job summary.
    assert script.count("fxverify check") == 1
    assert "--format github" in script and "sarif=" in script and "markdown=$GITHUB_STEP_SUMMARY" in script
    assert "${{" not in script  # inputs reach the script through the environment only
    text = (ROOT / "action.yml").read_text()
    for step in steps:
        if "uses" in step:  # third-party actions pinned by the commit of the tag named beside it
            name, _, sha = step["uses"].partition("@")
            assert re.fullmatch(r"[0-9a-f]{40}", sha) and PINNED[name][0] == sha
            assert f"{step['uses']}  # {PINNED[name][1]}" in text
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    check_env = next(s for s in steps if s.get("id") == "check")["env"]
    assert cache["with"]["path"] == check_env["FXVERIFY_CACHE_DIR"]


@pytest.mark.parametrize("tty,quiet,shown", [(True, False, True), (True, True, False), (False, False, False)])
def test_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tty: bool, quiet: bool, shown: bool) -> None:
    from fxverify.render import progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty, raising=False)
    with progress.ProgressBar(quiet) as bar:
        assert bar.enabled is shown
        bar.start(3)
        assert (bar.bar is not None) is shown
        bar.policy("p.fx")
        bar.phase("discharge", 10)
        bar.advance(10)
        bar.done("p.fx")


def test_progress_bar_names_each_phase_with_its_total() -> None:
    """The bar names the policy and its phase, with units done out of the phase's total; phases
    whose total is unknown (parse, resolve) show no `0/?`."""
    import io

    from rich.console import Console

    from fxverify.render import progress
    from fxverify.gate import GateRequest, run_gate

    class Recorder(progress.ProgressBar):
        def phase(self, name: str, total: int | None = None) -> None:
            super().phase(name, total)
            self.bar.refresh()

        def advance(self, n: int = 1) -> None:
            super().advance(n)
            self.bar.refresh()

    console = Console(file=io.StringIO(), force_terminal=True, width=150, color_system=None)
    with Recorder(False, console) as bar:
        run_gate(GateRequest(paths=(str(ROOT / "corpus/ordering/fail/kv-offload-unordered.fx"),), cache_dir=None,
                             progress=bar))
    screen = console.file.getvalue()
    for phase, total in (("parse", None), ("resolve", None), ("generate", 6), ("discharge", 15), ("replay", 1), ("hints", 1)):
        assert f"kv-offload-unordered.fx: {phase}" in screen, phase
        if total is not None:
            assert f"{total}/{total}" in screen
    assert "/?" not in screen and "policies" in screen


_HARNESS = """policy "t"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [launch]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv in hbm0 at 0x2000_0000 size 2 MiB owner gpu0 dtype bf16
region host in host0 at 0x1_4000_0000 size 2 MiB owner gpu0 dtype bf16
region pool in host0 at 0x1_8000_0000 size 2 MiB owner gpu0 dtype bf16
"""


def _inline_policy(snippet: str) -> str:
    """Place an inline example where it belongs: a whole fabric, a device of the fabric, a
    declaration, or a statement of the flow."""
    if snippet.startswith("fabric"):
        return 'policy "t"\n' + snippet + "\n"
    if snippet.startswith("device"):
        return 'policy "t"\nfabric {\n' + snippet + "\n}\n"
    if snippet.startswith(("edge", "for")):
        return _HARNESS + "flow f {\n" + snippet + "\n}\n"
    return _HARNESS + snippet + "\nflow f {\nedge w: write kv by gpu0.launch\n}\n"


_POLICY_EXAMPLES = sorted(str(c) for c in REGISTRY.values()
                          if isinstance(c.example, InlineExample) and c.example.kind == "policy")


@pytest.mark.parametrize("code", _POLICY_EXAMPLES)
def test_inline_examples_fail_and_their_fixes_do_not(tmp_path: Path, code: str) -> None:
    """Each inline example of `fxverify explain` that is policy text raises its code, and its fix
    does not. (Situations such as binary files and include trees, FX-SYN-004/NAM-004/NAM-005, are
    covered by test_resolve; command-line examples of the generator, the lowering and the gate by
    test_gen, the lowering tests and test_gate.)"""
    from fxverify.pipeline import check

    (tmp_path / "fabric.fx").write_text("# a shared fragment\n")
    ex = REGISTRY[code].example
    bad, good = ex.bad, ex.good
    for text, should in ((bad, True), (good, False)):
        p = tmp_path / "p.fx"
        p.write_text(_inline_policy(text))
        codes = {d.code for d in check(str(p)).diagnostics}
        assert (code in codes) is should, (code, text, codes)
