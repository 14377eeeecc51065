"""The ``fxverify`` command line (typer): reads arguments, calls one stage, renders what it returns.

Each command builds one typed request (``gate.GateRequest``, ``lower.driver.LowerOptions``,
``gen.command.PrefillRequest``), calls its stage and renders the report; problems are diagnostics
with codes of their own, rendered on standard error. Exit codes (BRIEF section 6): 0 all proved,
1 refuted or unknown, 2 usage, parse or semantic error, 3 internal error (FX-INT-001). No Python
traceback ever reaches the user.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from fxverify import __version__
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, crash, diagnostic, nearest
from fxverify.gen import KV_DTYPES
from fxverify.lower import TARGETS
from fxverify.smt.backend import SolverOptions
from fxverify.smt.solvers import SOLVERS
from fxverify.source import SourceMap

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                  help="Verify data-movement policies for GPU-DPU/NIC-CXL fabrics, then lower them to eBPF.")


class Format(str, Enum):
    """Output formats of ``check``."""

    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"
    markdown = "markdown"


class LowerFormat(str, Enum):
    """Report formats of ``lower``."""

    text = "text"
    json = "json"


class Color(str, Enum):
    """When the text report is coloured: ``auto`` (standard output is a terminal and ``NO_COLOR``
    is unset, https://no-color.org), ``always`` (a command-line flag overrides ``NO_COLOR``, as
    that convention asks) or ``never``."""

    auto = "auto"
    always = "always"
    never = "never"


class FailOn(str, Enum):
    """The least severity that fails the gate."""

    error = "error"
    warning = "warning"


class Unknown(str, Enum):
    """What an unknown verdict does to the gate."""

    fail = "fail"
    warn = "warn"


#: Solvers (``--solver``), as the solver layer defines them.
Solver = Enum("Solver", {s: s for s in SOLVERS}, type=str)  # type: ignore[misc]

_SOLVER_HELP = "Solver: z3, cvc5 (needs `pip install 'fxverify[cvc5]'`) or portfolio (both; a disagreement is unknown)."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fxverify {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """fxverify: a verifier-centric toolkit for data movement on GPU-DPU/NIC-CXL fabrics."""


def _use_color(color: Color = Color.auto) -> bool:
    if color is not Color.auto:
        return color is Color.always
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _problems(diags: list[Diagnostic], sources: SourceMap | None = None) -> None:
    """Render problems of the command itself (and generator input errors) on standard error."""
    from fxverify.render.text import render_diagnostic, to_plain

    lines = []
    for d in diags:
        lines += render_diagnostic(d, sources or SourceMap()) + ([[("", "")]] if sources is not None else [])
    sys.stderr.write(to_plain(lines))


def _stop(code: codes.Code, message: str, help: str | None = None) -> typer.Exit:
    _problems([diagnostic(code, message, help=help)])
    return typer.Exit(2)


@app.command()
def check(
    paths: list[Path] = typer.Argument(..., help="Policy files or folders (searched for *.fx)."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the report to FILE (atomically)."),
    dump_smt: Optional[Path] = typer.Option(None, "--dump-smt", help="Write every obligation as SMT-LIB2 into DIR."),
    no_prune: bool = typer.Option(False, "--no-prune", help="Send every obligation to the solver (no graph or interval proofs)."),
    solver: Solver = typer.Option(Solver("z3"), "--solver", help=_SOLVER_HELP),  # type: ignore[valid-type]
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, help="Solver resource limit per query (deterministic effort)."),
    timeout: int = typer.Option(SolverOptions.timeout_ms, "--timeout", min=1, help="Wall-clock limit per query, in ms."),
    seed: int = typer.Option(0, "--seed", min=0, help="Solver random seed."),
    stats: bool = typer.Option(False, "--stats", help="Add wall times and cache counts to the report (makes it vary between runs)."),
    fail_on: FailOn = typer.Option(FailOn.error, "--fail-on", help="Fail (exit 1) on errors only, or on warnings too."),
    unknown: Unknown = typer.Option(Unknown.fail, "--unknown", help="An unknown verdict fails the gate, or is a warning."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Report only findings not in this baseline file."),
    write_baseline: Optional[Path] = typer.Option(None, "--write-baseline", help="Record the current findings in FILE and exit 0."),
    update_baseline: Optional[Path] = typer.Option(None, "--update-baseline", help="Like --baseline, then drop stale entries from FILE."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Result cache folder (default: the user cache directory)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, envvar="FXVERIFY_JOBS", show_default="the CPUs this process may use",
                                       help="Worker processes on this machine: many policies run side by side, and a big "
                                            "policy's obligations are split over them. The report is the same for every N."),
    executor: str = typer.Option("local", "--executor", metavar="local|dask://HOST:PORT",
                                 help="Where the checks run: worker processes here (local), or the workers of an existing "
                                      "Dask cluster (needs `pip install 'fxverify[dask]'` here and on the workers)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar; the text report shows only failures "
                               "(refuted, unknown, input errors) and a one-line summary."),
    color: Color = typer.Option(Color.auto, "--color", help="Colour the text report: on a terminal without NO_COLOR (auto), always, or never."),
    exclude: list[str] = typer.Option([], "--exclude", metavar="GLOB",
                                      help="Skip files matching GLOB (their path, a trailing part or a folder on it); repeatable."),
    certify: Optional[str] = typer.Option(None, "--certify", metavar="[python|smt]",
                                          help="Re-validate the certificate of every fast (non-solver) proof with the "
                                               "independent checker: in Python (a bare `--certify`), or as SMT queries (`smt`)."),
) -> None:
    """Check policies: discharge every obligation with Z3 (or cvc5, or both) and show replayed counterexamples."""
    from fxverify.atomic import write_text
    from fxverify.certify import MODES as CERTIFY_MODES
    from fxverify.gate import GateOptions, GateRequest, run_gate
    from fxverify.gate.cache import default_cache_dir
    from fxverify.gate.executors import default_jobs
    from fxverify.pipeline import CheckOptions

    def opt(p: Optional[Path]) -> str | None:
        return None if p is None else str(p)

    if certify is not None and certify not in CERTIFY_MODES:
        raise _stop(codes.USE_005, f"`--certify {certify}` is not a mode; use `--certify` or `--certify smt`",
                    "write the mode right after `--certify`, or put `--certify` after the paths")
    req = GateRequest(
        paths=tuple(str(p) for p in paths),
        check=CheckOptions(prune=not no_prune, solver=SolverOptions(seed=seed, rlimit=rlimit, timeout_ms=timeout,
                                                                        solver=solver.value),
                           certify=certify),
        gate=GateOptions(fail_on=fail_on.value, unknown=unknown.value),
        baseline=opt(baseline), write_baseline=opt(write_baseline), update_baseline=opt(update_baseline),
        cache_dir=None if no_cache else (str(cache_dir) if cache_dir else default_cache_dir()),
        jobs=jobs if jobs is not None else default_jobs(), executor=executor, dump_smt=opt(dump_smt), stats=stats,
        exclude=tuple(exclude))
    with ProgressBar(quiet) as bar:
        report = run_gate(replace(req, progress=bar) if bar.enabled else req)
    _problems(report.problems)
    if report.stopped:
        raise typer.Exit(report.exit_code)
    text, lines = _render(report, fmt, quiet)
    if output is not None:
        read = {os.path.realpath(p) for r in report.results for p in [r.path, *r.sources.paths()]}
        if os.path.realpath(output) in read:
            raise _stop(codes.IO_002, f"`-o {output}` is a policy file this run read; nothing was written",
                        "name a report file, such as `-o report.sarif`")
        try:
            write_text(str(output), text)
        except OSError as err:
            raise _stop(codes.IO_001, f"cannot write `{output}`: {err.strerror or err}",
                        "name a file in an existing, writable folder")
    elif lines is not None and _use_color(color):
        from rich.console import Console

        from fxverify.render.text import to_rich

        forced = {"force_terminal": True, "no_color": False, "color_system": "standard"} if color is Color.always else {}
        Console(highlight=False, soft_wrap=True, **forced).print(to_rich(lines), end="")
    else:
        sys.stdout.write(text)
    raise typer.Exit(report.exit_code)


def _render(report, fmt: Format, quiet: bool = False) -> tuple[str, list | None]:
    """The report's text in ``fmt``; for ``text`` also the styled lines (for a terminal), only the
    failures when ``quiet``."""
    if fmt is Format.text:
        from fxverify.render.text import render_report, to_plain

        lines = render_report(report, quiet)
        return to_plain(lines), lines
    if fmt is Format.json:
        from fxverify.render.json import report_to_json as render
    elif fmt is Format.sarif:
        from fxverify.render.sarif import report_to_sarif as render
    elif fmt is Format.junit:
        from fxverify.render.junit import report_to_junit as render
    elif fmt is Format.github:
        from fxverify.render.github import report_to_github as render
    else:
        from fxverify.render.markdown import report_to_markdown as render
    return render(report), None


class ProgressBar:
    """A rich progress bar on stderr (policies, obligations discharged) when stderr is a terminal
    and not ``--quiet``; otherwise it shows nothing. A ``gate.Progress``."""

    def __init__(self, quiet: bool) -> None:
        self.enabled = sys.stderr.isatty() and not quiet
        self.bar = None
        self._policies = self._obligations = None

    def __enter__(self) -> "ProgressBar":
        return self

    def start(self, policies: int) -> None:
        """Show the bar for ``policies`` files."""
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.__enter__()
        self._policies = self.bar.add_task("policies", total=policies)
        self._obligations = self.bar.add_task("obligations discharged", total=None)

    def done(self, path: str) -> None:
        """One more policy checked."""
        if self.bar is not None:
            self.bar.advance(self._policies)

    def obligations(self, n: int) -> None:
        """``n`` more obligations discharged."""
        if self.bar is not None:
            self.bar.advance(self._obligations, n)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


#: Lowering targets (BRIEF section 7), as the lowering defines them.
Target = Enum("Target", {t: t for t in TARGETS}, type=str)  # type: ignore[misc]


@app.command()
def lower(
    policy: Path = typer.Argument(..., help="The policy file to lower."),
    output: Path = typer.Option(..., "-o", "--output", help="Output directory: new, empty, or a previous lowering's (replaced atomically as a whole)."),
    target: Target = typer.Option(Target("kernel"), "--target", help="Runtime to lower for."),  # type: ignore[valid-type]
    no_compile: bool = typer.Option(False, "--no-compile", help="Write C only; do not run clang."),
    kernel_verify: bool = typer.Option(False, "--kernel-verify", help="Load every program into the Linux verifier."),
    kernel_run: bool = typer.Option(False, "--kernel-run", help="Run the programs with BPF_PROG_TEST_RUN against the simulator."),
    allow_unproved: bool = typer.Option(False, "--allow-unproved", help="Lower a policy that is not proved (tests only); stamps every artifact."),
    fmt: str = typer.Option(LowerFormat.text.value, "--format", "-f", metavar="[text|json]",
                            help="Report format: text or json (the check formats are `fxverify check`'s)."),
    solver: Solver = typer.Option(Solver("z3"), "--solver", help=_SOLVER_HELP),  # type: ignore[valid-type]
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, help="Solver resource limit per query."),
    stats: bool = typer.Option(False, "--stats", help="Add stage wall times to the report."),
) -> None:
    """Lower a proved policy to per-device eBPF (C, objects, maps, obligations, manifest)."""
    from fxverify.lower.driver import LowerOptions, LowerResult, lower as run_lower
    from fxverify.render.lower import render_json, render_text

    if fmt not in {f.value for f in LowerFormat}:
        if fmt in {f.value for f in Format}:
            raise _stop(codes.USE_005, f"`lower` reports as `text` or `json`, not `{fmt}`: `{fmt}` is a format of "
                        "`fxverify check`, which `lower` would ignore",
                        f"`fxverify check {policy} --format {fmt}` reports the findings as {fmt}; "
                        "`lower --format json` gives the lowering report as JSON")
        raise _stop(codes.USE_005, f"`--format {fmt}` is not a format of `lower`; use `text` or `json`",
                    "`fxverify lower --help` lists the options")
    if no_compile and (kernel_verify or kernel_run):
        raise _stop(codes.USE_002, f"`--no-compile` writes no objects, so `{'--kernel-verify' if kernel_verify else '--kernel-run'}` "
                    "has nothing to load", "drop `--no-compile` to verify or run the programs in the kernel")
    opts = LowerOptions(target=target.value, compile=not no_compile, kernel_verify=kernel_verify,
                        kernel_run=kernel_run, allow_unproved=allow_unproved,
                        solver=SolverOptions(rlimit=rlimit, solver=solver.value))
    try:
        res = run_lower(str(policy), str(output), opts)
    except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001 in the chosen format
        res = LowerResult(str(policy), SourceMap(), diagnostics=[crash(str(policy), exc)], exit_code=3)
    render = render_json if fmt == LowerFormat.json.value else render_text
    sys.stdout.write(render(res, str(output), stats=stats))
    raise typer.Exit(res.exit_code)


@app.command()
def smt(
    policy: Path = typer.Argument(..., help="The policy file whose obligations to write."),
    output: Path = typer.Option(..., "-o", "--output", help="Output directory: new, empty, or a previous export's (replaced atomically as a whole)."),
    solver: Solver = typer.Option(Solver("z3"), "--solver", help=_SOLVER_HELP),  # type: ignore[valid-type]
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, help="Solver resource limit per query (deterministic effort)."),
    timeout: int = typer.Option(SolverOptions.timeout_ms, "--timeout", min=1, help="Wall-clock limit per query, in ms."),
    seed: int = typer.Option(0, "--seed", min=0, help="Solver random seed."),
) -> None:
    """Write every obligation (fast-proved ones included) as a standalone SMT-LIB2 file with its expected status, plus index.json."""
    from fxverify.gate.smt_export import export_smt
    from fxverify.pipeline import CheckOptions

    opts = CheckOptions(solver=SolverOptions(seed=seed, rlimit=rlimit, timeout_ms=timeout, solver=solver.value))
    res = export_smt(str(policy), str(output), opts)
    _problems(res.diagnostics, res.sources if res.diagnostics and res.sources.paths() else None)
    if res.exit_code == 0:
        sys.stdout.write(res.summary())
    raise typer.Exit(res.exit_code)


@app.command()
def explain(code: Optional[str] = typer.Argument(None, help="A code such as FX-ORD-002."),
            list_all: bool = typer.Option(False, "--list", help="List every code.")) -> None:
    """Print the rule behind a diagnostic code, why it matters, and a failing and a fixed example."""
    from fxverify.diagnostics.explain import explain as text_of, list_codes, load_examples

    if list_all:
        sys.stdout.write(list_codes())
        raise typer.Exit(0)
    if code is None:
        raise _stop(codes.USE_004, "name a code, such as `fxverify explain FX-ORD-002`, or use `--list`",
                    "`fxverify explain --list` lists every code")
    c = codes.lookup(code.upper())
    if c is None:
        near = nearest(code.upper(), codes.REGISTRY)
        raise _stop(codes.USE_003, f"unknown code `{code}`" + (f"; did you mean `{near}`?" if near else ""),
                    "`fxverify explain --list` lists every code")
    sys.stdout.write(text_of(c, load_examples()))


@app.command()
def init(directory: Path = typer.Argument(..., help="The folder of the policy repository (new, or one to add the gate to)."),
         action: Optional[str] = typer.Option(None, "--action", help="Use this fxverify GitHub Action (owner/repo@ref) "
                                              "instead of installing fxverify in the workflow."),
         force: bool = typer.Option(False, "--force", help="Replace scaffold files already there (a README is always kept).")) -> None:
    """Scaffold a policy repository: an example policy, a pre-commit config, a CI workflow, a README."""
    from fxverify.gate.scaffold import scaffold

    written, kept, problems = scaffold(str(directory), action, force)
    if problems:
        _problems(problems)
        raise typer.Exit(2)
    for p in written:
        typer.echo(f"wrote {p}")
    for p in kept:
        typer.echo(f"kept {p} (already there)")
    if action is None:
        typer.echo("then: set FXVERIFY_PACKAGE in .github/workflows/fxverify.yml to the path or git URL of fxverify")
    typer.echo(f"next: cd {directory} && fxverify check .")


gen_app = typer.Typer(add_completion=False, no_args_is_help=True,
                      help="Generate real policies from real input files.")
app.add_typer(gen_app, name="gen")


#: Dtypes of the spilled KV cache (``--kv-dtype``), as the generator defines them.
KvDtype = Enum("KvDtype", {d: d for d in KV_DTYPES}, type=str)  # type: ignore[misc]


@gen_app.command("prefill")
def gen_prefill(
    model: Path = typer.Option(..., "--model", help="Hugging Face config.json of the model."),
    topology: Optional[Path] = typer.Option(None, "--topology", help="NCCL topology XML (the NCCL_TOPO_FILE format)."),
    cxl: list[Path] = typer.Option([], "--cxl", help="`cxl list` JSON; repeat to merge listings."),
    tokens: int = typer.Option(8192, "--tokens", help="Prompt tokens of the request."),
    block_tokens: int = typer.Option(16, "--block-tokens", help="Tokens per KV-cache block."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel degree (GPUs)."),
    kv_dtype: KvDtype = typer.Option(KvDtype("fp8"), "--kv-dtype", help="Dtype of the KV spilled to CXL."),  # type: ignore[valid-type]
    spill: Optional[str] = typer.Option(None, "--spill", help="Fraction of layers whose KV spills to CXL (default: 0.25 with --cxl, else 0)."),
    disaggregate: bool = typer.Option(False, "--disaggregate", help="Send the KV to a remote decode node through a NIC or DPU."),
    unroll: bool = typer.Option(False, "--unroll", help="Emit concrete edges instead of edge families."),
    layers: Optional[int] = typer.Option(None, "--layers", help="Keep only the first N layers (quick checks)."),
    hbm_gib: int = typer.Option(80, "--hbm-gib", help="HBM per GPU in GiB (topology files do not record it)."),
    ckpt_every: Optional[int] = typer.Option(None, "--ckpt-every", help="Checkpoint the hidden states every N layers into pmem; 0 disables (default: 8, widened to fit)."),
    requests: int = typer.Option(1, "--requests", help="Prefill requests sharing one KV block pool per GPU (blocks freed and reused)."),
    name: Optional[str] = typer.Option(None, "--name", help="Policy name (default: the output file's stem)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the policy to FILE (atomically) instead of stdout."),
    summary_json: Optional[Path] = typer.Option(None, "--summary-json", help="Write a JSON summary of the sizes to FILE."),
) -> None:
    """Generate a prefill policy from a model config, and optionally a topology and CXL listings."""
    from fxverify.gen.command import PrefillRequest, run_prefill
    from fxverify.gen.prefill import PrefillOptions

    opts = PrefillOptions(tokens=tokens, block_tokens=block_tokens, tp=tp, kv_dtype=kv_dtype.value, spill=spill,
                          disaggregate=disaggregate, unroll=unroll, layers=layers, hbm_gib=hbm_gib,
                          ckpt_every=ckpt_every, name=name, requests=requests)
    req = PrefillRequest(str(model), None if topology is None else str(topology), tuple(str(p) for p in cxl), opts,
                         None if output is None else str(output), None if summary_json is None else str(summary_json))
    out = run_prefill(req)
    _problems(out.diagnostics, out.sources)
    sys.stdout.write(out.stdout)
    raise typer.Exit(out.exit_code)


def main() -> None:
    """Console entry point: run the app; a command line the parser refuses is FX-USE-004 (a missing
    argument) or FX-USE-005 (anything else), exit 2; any other escaped exception is FX-INT-001,
    exit 3."""
    try:
        code = app(args=certify_default(sys.argv[1:]), standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001
        usage = _usage_problem(exc)
        if usage is None:
            _problems([crash("<command line>", exc)])
            sys.exit(3)
        if usage.code is not codes.USE_004 and type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()  # type: ignore[attr-defined]  # the parser's own help page, as for a bare `fxverify`
        else:
            _problems([usage])
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def certify_default(argv: list[str]) -> list[str]:
    """``argv`` with a bare ``check --certify`` (no mode after it) read as ``--certify=python``:
    the option's value is optional on the command line."""
    from fxverify.certify import MODES

    if not argv or argv[0] != "check":
        return argv
    out = list(argv)
    for i, a in enumerate(out):
        if a == "--":
            break
        if a == "--certify" and (i + 1 == len(out) or out[i + 1] not in MODES):
            out[i] = "--certify=python"
    return out


def _usage_problem(exc: Exception) -> Diagnostic | None:
    """The diagnostic of a command line the parser refused (click's ``UsageError`` family, found by
    name: typer ships its own copy of click in some versions), or ``None`` for any other exception."""
    kinds = {c.__name__ for c in type(exc).__mro__}
    if "UsageError" not in kinds or not hasattr(exc, "format_message"):
        return None
    text = str(exc.format_message()).strip().rstrip(".")
    message = text[:1].lower() + text[1:]
    ctx = getattr(exc, "ctx", None)
    where = f"`{ctx.command_path} --help` lists the options" if ctx is not None else "`fxverify --help` lists the commands"
    return diagnostic(codes.USE_004 if "MissingParameter" in kinds else codes.USE_005, message, help=where)


if __name__ == "__main__":
    main()
