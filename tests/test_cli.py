"""The command line as a user meets it: exit codes, bad inputs (never a traceback), output files,
formats, the SMT-LIB dump and unknown verdicts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

OK = "corpus/transforms/ok/compress-worst-case.fx"
FAIL = "corpus/ownership/fail/pinned-free-before-copy.fx"


def run(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "fxverify", *args], cwd=cwd, capture_output=True, text=True, env=e,
                          timeout=300)


def assert_clean_input_error(r: subprocess.CompletedProcess, code: str, where: str) -> None:
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    assert "Traceback" not in out
    assert f"[{code}]" in out, out
    assert where in out, out
    assert "^" in out and "help" in out, out


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("fxverify ")


def test_proved_exits_0_and_refuted_exits_1() -> None:
    assert run("check", OK).returncode == 0
    r = run("check", FAIL)
    assert r.returncode == 1
    assert "FX-OWN-004" in r.stdout and "trace (replayed" in r.stdout and ">>" in r.stdout


def test_closed_standard_streams_keep_the_verdict_exit_code() -> None:
    """``check p.fx >&- 2>&-``: Python sees no stdout or stderr; the verdict still reaches the
    caller as the exit code, with no internal error."""
    env = {**os.environ, "NO_COLOR": "1"}
    for policy, code in ((OK, 0), (FAIL, 1)):
        r = subprocess.run(["sh", "-c", 'exec "$0" -m fxverify check "$1" >&- 2>&-', sys.executable, policy],
                           cwd=ROOT, env=env, timeout=300)
        assert r.returncode == code, policy


@pytest.mark.parametrize("name,text,code,where", [
    ("truncated.fx", 'policy "t"\nfabric {\n  device gpu0: gpu hooks [launch\n', "FX-SYN-003", "truncated.fx:3:"),
    ("typo.fx", 'policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu1 size 1 MiB\n', "FX-NAM-001", "typo.fx:3:"),
    ("huge.fx", 'policy "t"\nfabric { device g: gpu hooks [launch] }\nspace s on g size 1 MiB\n'
                'region r in s at 0 size 1 MiB owner g\nflow f {\n  for i in 0..10000000000 {\n'
                '    edge e[i]: write r by g.launch\n  }\n}\n', "FX-LIM-001", "huge.fx:6:"),
    ("badtoken.fx", 'policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu0 size 1 MiB $\n',
     "FX-SYN-002", "badtoken.fx:3:"),
])
def test_bad_inputs_get_a_diagnostic_and_exit_2(tmp_path: Path, name: str, text: str, code: str, where: str) -> None:
    (tmp_path / name).write_text(text)
    assert_clean_input_error(run("check", name, cwd=tmp_path), code, where)


def test_binary_garbage(tmp_path: Path) -> None:
    (tmp_path / "garbage.fx").write_bytes(bytes(range(256)) * 8)
    r = run("check", "garbage.fx", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    assert "[FX-SYN-004]" in r.stdout + r.stderr


def test_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "p.fx").write_text('policy "t"\nfabric { device gpu0: gpu hooks [launch] }\n'
                                   'space hbm0 on gpu0 size 1 MiB\nregion kv in hbm0 at 0 size 4 KiB owner gpu0\n'
                                   'flow f { edge a: write kb by gpu0.launch }\n')
    r = run("check", "p.fx", cwd=tmp_path)
    assert r.returncode == 2 and "did you mean `kv`" in r.stdout


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    r = run("check", "nope.fx", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr


def test_json_and_output_file(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    r = run("check", FAIL, "--format", "json", "-o", str(out))
    assert r.returncode == 1 and r.stdout == ""
    doc = json.loads(out.read_text())
    res = doc["results"][0]
    assert res["verdict"] == "refuted"
    d = next(x for x in res["diagnostics"] if x["code"] == "FX-OWN-004")
    assert d["primary"]["line"] > 0 and d["trace"]["events"]
    assert any(ev["violation"] for ev in d["trace"]["events"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fxverify-")]


def test_same_input_same_bytes() -> None:
    for fmt in ("json", "text"):
        a, b = run("check", FAIL, "--format", fmt), run("check", FAIL, "--format", fmt)
        assert a.stdout == b.stdout and a.stdout


def test_dump_smt_writes_standalone_files(tmp_path: Path) -> None:
    r = run("check", FAIL, "--dump-smt", str(tmp_path / "smt"))
    files = sorted((tmp_path / "smt" / Path(FAIL).stem).glob("*.smt2"))
    assert r.returncode == 1 and files
    text = files[0].read_text()
    assert text.startswith("; fxverify obligation FX-") and "(check-sat)" in text and "policy:" in text


def test_unknown_is_never_a_pass() -> None:
    r = run("check", OK, "--no-prune", "--rlimit", "1")
    assert r.returncode == 1, r.stdout
    assert "[FX-SMT-001]" in r.stdout and "unknown" in r.stdout


@pytest.mark.parametrize("option", ["--rlimit", "--timeout", "--seed"])
def test_a_solver_parameter_past_32_bits_is_refused(option: str) -> None:
    """Z3 reads its budget, timeout and seed as 32-bit numbers and keeps the low bits of a larger
    one (2^32 + 1 would be a budget of 1, and a larger budget an unknown): FX-USE-005, exit 2."""
    r = run("check", OK, "--no-cache", option, str((1 << 32) + 1))
    assert r.returncode == 2 and "FX-USE-005" in r.stderr and option in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_policy_budget_past_32_bits_is_fx_typ_002(tmp_path: Path) -> None:
    """The policy's own `rlimit` clause has the same bound, as a diagnostic on its line."""
    p = tmp_path / "p.fx"
    p.write_text('policy "p" rlimit 4_294_967_296\nfabric {\n  device gpu0: gpu hooks [launch]\n}\n')
    r = run("check", str(p), "--no-cache")
    assert r.returncode == 2 and "error[FX-TYP-002]" in r.stdout + r.stderr and "p.fx:1:1" in r.stdout + r.stderr


def test_internal_errors_exit_3_without_traceback(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import fxverify.pipeline as pl
    from fxverify import cli

    def boom(*a, **k):
        raise RuntimeError("invariant broke")

    monkeypatch.setattr(pl, "check", boom)
    monkeypatch.setattr(sys, "argv", ["fxverify", "check", OK, "--no-cache"])
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as exc:
        cli.main()
    err = capsys.readouterr()
    assert exc.value.code == 3
    # A crash is a diagnostic in the report, like any finding: here the text report on stdout.
    assert "error[FX-INT-001]: internal error while checking" in err.out and "invariant broke" in err.out
    assert "Traceback" not in err.err + err.out


@pytest.mark.parametrize("where", ["command", "around"])
def test_ctrl_c_exits_130_with_a_line_saying_so(monkeypatch: pytest.MonkeyPatch, capsys, where: str) -> None:
    """Ctrl-C inside a command (typer answers it with exit 130) or around one (while the command
    line is read) prints ``interrupted`` on standard error, no traceback, and exits 130."""
    import fxverify.pipeline as pl
    from fxverify import cli

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    if where == "command":
        monkeypatch.setattr(pl, "check", interrupted)
    else:
        monkeypatch.setattr(cli, "app", interrupted)
    monkeypatch.setattr(sys, "argv", ["fxverify", "check", OK, "--no-cache", "--jobs", "1"])
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as exc:
        cli.main()
    err = capsys.readouterr()
    assert exc.value.code == 130
    assert err.err.endswith("interrupted\n") and "Traceback" not in err.err + err.out


def test_ctrl_c_while_the_command_line_loads(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A Ctrl-C in the half second ``launch.main`` spends importing the command line prints
    ``interrupted`` and exits 130, with no traceback (a stand-in module raises it)."""
    import types

    from fxverify import launch

    fake = types.ModuleType("fxverify.cli")

    def interrupted() -> None:
        raise KeyboardInterrupt

    fake.main = interrupted  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fxverify.cli", fake)
    monkeypatch.setattr(sys, "argv", ["fxverify", "check", OK])
    with pytest.raises(SystemExit) as exc:
        launch.main()
    err = capsys.readouterr().err
    assert exc.value.code == 130 and err == "interrupted\n"


@pytest.mark.parametrize("command", ["check", "parse", "fmt"])
def test_an_empty_path_is_a_usage_error(command: str) -> None:
    """``fxverify check ""`` (an unset shell variable) is FX-USE-005, exit 2: not the current
    folder, which the parser would make of it."""
    r = run(command, "", OK)
    assert r.returncode == 2 and "error[FX-USE-005]: an empty path was given" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("argv", [
    ("check", str(ROOT / OK), "-o", ""), ("check", str(ROOT / OK), "--baseline="), ("check", str(ROOT / OK), "--dump-smt", ""),
    ("lower", "", "-o", "out"), ("lower", str(ROOT / OK), "-o", ""), ("smt", str(ROOT / OK), "-o", ""),
    ("graph", str(ROOT / OK), "-o", ""),
    ("gen", "prefill", "--model", ""), ("gen", "prefill", "--model", "m.json", "--cxl", ""), ("init", ""),
], ids=lambda a: " ".join(Path(x).name if "/" in x else x or '""' for x in a))
def test_an_empty_path_option_is_a_usage_error(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """Every path option and argument refuses an empty value (FX-USE-005, exit 2) and names
    itself: click would read it as `.`, and `check -o ""` said that `.` is a folder."""
    r = run(*argv, cwd=tmp_path)
    assert r.returncode == 2 and "error[FX-USE-005]" in r.stderr and "an empty path was given" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not list(tmp_path.iterdir())


def test_explain() -> None:
    r = run("explain", "FX-OWN-004")
    assert r.returncode == 0 and "release" in r.stdout
    assert run("explain", "FX-OWN-04").returncode == 2
    r = run("explain", "")  # an unset shell variable: the prefix of every family, not a listing of every code
    assert r.returncode == 2 and "FX-USE-004" in r.stderr and "an empty code" in r.stderr and not r.stdout


def test_dump_smt_keeps_policies_apart(tmp_path: Path) -> None:
    run("check", "corpus/ordering/ok", "corpus/transforms/ok", "--dump-smt", str(tmp_path / "d"))
    dirs = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert len(dirs) == len(list((ROOT / "corpus/ordering/ok").glob("*.fx"))) + len(list((ROOT / "corpus/transforms/ok").glob("*.fx")))


def test_output_errors_are_user_errors(tmp_path: Path) -> None:
    r = run("check", OK, "-o", str(tmp_path / "missing" / "out.txt"))
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("option", ["-o", "--format=sarif="])
def test_a_missing_output_folder_stops_check_before_it_runs(tmp_path: Path, option: str) -> None:
    """`-o` and `--format FMT=PATH` name their missing folder before checking (here a policy that
    does not exist would be an input error), in one wording."""
    target = str(tmp_path / "missing" / "out.sarif")
    args = [option, target] if option == "-o" else [option + target]
    r = run("check", str(tmp_path / "absent.fx"), *args)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.splitlines()[0] == f"error[FX-IO-001]: cannot write `{target}`: no such folder `{tmp_path / 'missing'}`"
    assert "FX-NAM" not in r.stderr and "name a file in an existing, writable folder" in r.stderr


def test_folder_scan_skips_directories_named_like_policies(tmp_path: Path) -> None:
    (tmp_path / "d.fx").mkdir()
    (tmp_path / "p.fx").write_text((ROOT / OK).read_text())
    assert run("check", str(tmp_path)).returncode == 0


def test_folder_scan_leaves_included_fragments_to_their_includers(tmp_path: Path) -> None:
    (tmp_path / "common.fx").write_text('fabric { device gpu0: gpu hooks [launch] }\n')
    (tmp_path / "main.fx").write_text('policy "m"\ninclude "common.fx"\nspace s on gpu0 size 1 MiB\n'
                                      'region r in s at 0 size 4 KiB owner gpu0\nflow f { edge w: write r by gpu0.launch }\n')
    r = run("check", str(tmp_path))
    assert r.returncode == 0, r.stdout
    assert "common.fx:" not in r.stdout.split("main.fx")[-1]


@pytest.mark.parametrize("args,code,words", [
    (["check"], "FX-USE-004", "missing argument"),
    (["check", OK, "--format", "xml"], "FX-USE-005", "`xml` is not a format"),
    (["check", OK, "--bogus"], "FX-USE-005", "no such option"),
    (["lower", OK, "-o", "out", "--format", "sarif"], "FX-USE-005", "`sarif` is a format of `fxverify check`"),
    (["lower", OK, "-o", "out", "--format", "xml"], "FX-USE-005", "`--format xml` is not a format of `lower`"),
    (["explain"], "FX-USE-004", "name a code"),
    (["explain", "FX-ORD-02"], "FX-USE-003", "did you mean `FX-ORD-002`"),
    (["explain", "FX-NOPE"], "FX-USE-003", "unknown code `FX-NOPE`\n"),  # no look-alike: no suggestion
])
def test_command_line_problems_have_codes(args: list[str], code: str, words: str, tmp_path: Path) -> None:
    """A command line the parser refuses is a diagnostic of its own code, exit 2, no traceback
    (and nothing written)."""
    args = [str(tmp_path / a) if a == "out" else a for a in args]
    r = run(*args)
    assert not (tmp_path / "out").exists()
    assert r.returncode == 2 and f"error[{code}]: " in r.stderr and words in r.stderr, r.stderr
    assert "= help: " in r.stderr and "Traceback" not in r.stdout + r.stderr


def test_lower_crash_is_fx_int_001_in_the_chosen_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from fxverify import cli
    from fxverify.lower import driver

    def boom(*a, **k):
        raise RuntimeError("invariant broke")

    monkeypatch.setattr(driver, "lower", boom)
    monkeypatch.setattr(sys, "argv", ["fxverify", "lower", str(ROOT / OK), "-o", str(tmp_path / "o"), "--format", "json"])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    assert exc.value.code == 3
    doc = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in doc["diagnostics"]] == ["FX-INT-001"] and doc["exit_code"] == 3


def test_header_scan_resumes_after_a_stray_character() -> None:
    """A byte no token starts with does not hide the ``policy`` and ``include`` after it."""
    from fxverify.syntax.parse import header_decls

    assert header_decls('$ policy "p"\ninclude "a.fx"\n') == (True, ["a.fx"])
    assert header_decls('include "a.fx" ` include "b.fx"\n') == (False, ["a.fx", "b.fx"])
    assert header_decls('fabric { device g: gpu hooks [launch] }\n') == (False, [])


def test_check_never_writes_its_report_over_a_policy(tmp_path: Path) -> None:
    """``-o`` naming a file the run read (the policy or one it includes) is FX-IO-002, exit 2."""
    p = tmp_path / "p.fx"
    p.write_text((ROOT / OK).read_text())
    r = run("check", str(p), "-o", str(p))
    assert r.returncode == 2 and "error[FX-IO-002]" in r.stderr, r.stderr
    assert p.read_text() == (ROOT / OK).read_text()


def test_crlf_source_lines_are_quoted_without_the_carriage_return(tmp_path: Path) -> None:
    p = tmp_path / "p.fx"
    p.write_bytes((ROOT / FAIL).read_bytes().replace(b"\n", b"\r\n"))
    r = run("check", str(p), "--no-cache")
    assert r.returncode == 1 and "FX-OWN" in r.stdout and "\r" not in r.stdout and "\ufffd" not in r.stdout


def test_a_fifo_policy_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "fifo.fx")
    r = subprocess.run([sys.executable, "-m", "fxverify", "check", str(tmp_path / "fifo.fx")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "FX-NAM-003" in r.stdout + r.stderr and "not a regular file" in r.stdout + r.stderr


def test_a_symlink_loop_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "loop.fx").symlink_to("loop.fx")
    r = run("check", "loop.fx", cwd=tmp_path)
    assert r.returncode == 2 and "error[FX-NAM-003]: cannot read policy file `loop.fx`" in r.stdout
    assert "link loop" in r.stdout and "permissions" not in r.stdout
    r = run("fmt", "--check", "loop.fx", cwd=tmp_path)
    assert r.returncode == 2 and "link loop" in r.stderr and "0 unchanged, 1 not read or not parsed" in r.stdout
    r = run("gen", "prefill", "--model", "loop.fx", "-o", "x.fx", cwd=tmp_path)
    assert r.returncode == 2 and "error[FX-GEN-001]" in r.stderr and "link loop" in r.stderr


# Tests run as root, who reads any file: an unreadable file is simulated in the child, where the
# parser's readability test (os.access) and the reader's open(2) both refuse `unr.fx`.
_UNREADABLE = """
import errno, os, sys
real_access, real_open = os.access, os.open
os.access = lambda p, m, **k: False if str(p).endswith("unr.fx") else real_access(p, m, **k)
def refuse(p, *a, **k):
    if str(p).endswith("unr.fx"):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(p))
    return real_open(p, *a, **k)
os.open = refuse
from fxverify.cli import main
sys.argv = ["fxverify", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("args", [["check", "unr.fx"], ["lower", "unr.fx", "-o", "out"]])
def test_an_unreadable_file_is_a_read_error_not_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    shutil.copy(ROOT / "corpus/ordering/ok/kv-offload-ordered.fx", tmp_path / "unr.fx")
    r = subprocess.run([sys.executable, "-c", _UNREADABLE, *args], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "NO_COLOR": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "FX-USE-005" not in out and "Traceback" not in out, out
    assert "[FX-NAM-003]: cannot read policy file `unr.fx`: Permission denied" in out, out
    assert "chmod u+r" in out, out


@pytest.mark.parametrize("expr", ["0x" + "f" * 5000, " * ".join(["9" * 999] * 5)])
def test_huge_values_are_a_limit_not_a_crash(tmp_path: Path, expr: str) -> None:
    """Values past 2^128 are FX-LIM-001 at the expression, whether literal or computed."""
    p = tmp_path / "p.fx"
    p.write_text('policy "p"\nfabric { device g: gpu hooks [launch] }\nspace s on g size 1 MiB\n'
                 'region r in s at 0 size 4 KiB owner g\n'
                 f'flow f {{ edge w: write r[0, +{expr}] by g.launch }}\n')
    r = run("check", str(p), "--no-cache")
    assert r.returncode == 2 and "error[FX-LIM-001]" in r.stdout and "exceeds the limit of 2^128" in r.stdout, r.stdout


def test_lower_without_objects_cannot_verify_them(tmp_path: Path) -> None:
    r = run("lower", OK, "-o", str(tmp_path / "o"), "--no-compile", "--kernel-verify")
    assert r.returncode == 2 and "error[FX-USE-002]" in r.stderr and not (tmp_path / "o").exists()


_WITHOUT_CVC5 = "import sys; sys.modules['cvc5'] = None; sys.argv = ['fxverify', *sys.argv[1:]]; " \
                "from fxverify.cli import main; main()"


@pytest.mark.parametrize("args", [("check", OK, "--solver", "cvc5", "--no-cache"),
                                  ("check", OK, "--solver", "portfolio", "--jobs", "2"),
                                  ("lower", OK, "-o", "out", "--solver", "cvc5", "--no-compile")])
def test_a_solver_that_is_not_installed_is_a_diagnostic(tmp_path: Path, args: tuple[str, ...]) -> None:
    """``--solver cvc5`` without the cvc5 package: FX-USE-006 naming the package and how to
    install it, exit 2, no traceback and nothing written."""
    r = subprocess.run([sys.executable, "-c", _WITHOUT_CVC5, *[str(ROOT / a) if a == OK else a for a in args]], check=False,
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    assert "[FX-USE-006]" in out and "pip install 'cvc5'" in out, out
    assert "Traceback" not in out
    assert not (tmp_path / "out").exists()


def test_the_solver_is_chosen_on_the_command_line() -> None:
    """The same verdict and report from cvc5 and the portfolio as from Z3 on a refuted policy."""
    z3 = run("check", FAIL, "--no-cache")
    for solver in ("cvc5", "portfolio"):
        r = run("check", FAIL, "--no-cache", "--solver", solver)
        assert (r.returncode, r.stdout) == (z3.returncode, z3.stdout), solver
    bad = run("check", FAIL, "--solver", "yices")
    assert bad.returncode == 2 and "[FX-USE-005]" in bad.stderr


def test_version_answers_without_loading_the_command_line() -> None:
    """``fxverify --version`` prints the version and exits 0 without importing typer, the IR or
    the solver layer (what makes it fast is what it leaves out; bench/ measures the time)."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "fxverify", "--version"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == f"fxverify {__import__('fxverify').__version__}\n"
    loaded = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "fxverify.launch" in loaded and not loaded & {"typer", "fxverify.cli", "fxverify.ir", "fxverify.smt.backend"}


def test_check_help_names_the_config_table_shows_flags_plain_and_the_true_jobs_default() -> None:
    """`check --help`: the config table's name is printed whole at every typer and rich version
    (no square brackets, which rich markup eats and older typer prints escaped), flags show no
    `<bool>` value (`--help` included), and `--jobs` defaults to this machine's
    cores, as the README says."""
    r = run("check", "--help", env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("│ --")]
    assert "pyproject.toml with a tool.fxverify table" in r.stdout and "\\[" not in r.stdout
    assert [ln.split()[1] for ln in rows if "<bool>" in ln] == [], rows
    (jobs,) = [i for i, ln in enumerate(r.stdout.splitlines()) if ln.startswith("│ --jobs")]
    shown = " ".join(ln.strip("│ ") for ln in r.stdout.splitlines()[jobs:jobs + 4])
    assert "this machine's cores" in shown.split("[default:", 1)[1].split("]", 1)[0], shown
    assert "`--jobs N` (worker processes, default: this machine's cores;" in (ROOT / "README.md").read_text().replace("\n  ", " ")



@pytest.mark.parametrize("args", [(), ("lower",), ("gen",), ("gen", "prefill"), ("explain",), ("compare",)])
def test_no_help_screen_shows_a_value_type_for_a_flag(args: tuple[str, ...]) -> None:
    """`--help` takes no value, so no help screen shows it a type: newer typers make the help
    option a typer option and print `--help <bool>` unless its metavar is set (cli.common.Group)."""
    r = run(*args, "--help", env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert r.returncode == 0 and "--help" in r.stdout and "<bool>" not in r.stdout, r.stdout + r.stderr

@pytest.mark.parametrize("args", [
    ("lower", str(ROOT / OK), "-o", "{out}"),
    ("check", str(ROOT / OK), "--dump-smt", "{out}"),
    ("check", str(ROOT / OK), "--pictures", "{out}"),
])
def test_an_output_folder_under_a_missing_folder_is_refused_and_nothing_is_made(tmp_path: Path, args: tuple) -> None:
    """An output folder is made, not the folders above it (as `check -o FILE` refuses a file in a
    missing folder): a typo in a parent's name is FX-IO-001 before any work, and no tree appears.
    A new folder inside an existing one is still made."""
    extra = ("--no-cache",) if args[0] == "check" else ()
    (tmp_path / "afile").write_text("")
    for bad, why in ((tmp_path / "typo" / "out", "no such folder"), (f"{tmp_path}/typo/../out", "no such folder"),
                     (tmp_path / "afile" / "out", "is not a folder")):
        r = run(*(a.format(out=bad) for a in args), *extra)
        out = r.stdout + r.stderr
        assert r.returncode == 2 and "[FX-IO-001]" in out and why in out, out
        assert not (tmp_path / "typo").exists() and not (tmp_path / "out").exists() and "Traceback" not in out
    r = run(*(a.format(out=tmp_path / "new") for a in args), *extra)
    assert r.returncode == 0 and (tmp_path / "new").is_dir(), r.stdout + r.stderr
