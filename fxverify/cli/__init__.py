"""The ``fxverify`` command line (typer): reads arguments, calls one stage, renders what it returns.

Each command builds one typed request (``gate.GateRequest``, ``lower.driver.LowerOptions``,
``gen.command.PrefillRequest``), calls its stage and renders the report; problems are diagnostics
with codes of their own, rendered on standard error. Exit codes (BRIEF section 6): 0 all proved,
1 refuted or unknown, 2 usage, parse or semantic error, 3 internal error (FX-INT-001). No Python
traceback ever reaches the user. The commands around checking (explain, init, lsp, serve, gen)
live in ``cli.tools``; what every command shares in ``cli.common``.
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
from fxverify.cli import tools
from fxverify.cli.common import EMPTY_PATH, Command as _Command, Group as _Group, problems as _problems, stop as _stop
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, crash, diagnostic
from fxverify.lower import TARGETS
from fxverify.render.outputs import FORMATS as CHECK_FORMATS
from fxverify.smt.backend import SolverOptions
from fxverify.smt.solvers import SOLVERS
from fxverify.source import SourceMap
from fxverify.vocab import SOLVER_PARAM_MAX


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True, cls=_Group,
                  help="Verify data-movement policies for GPU-DPU/NIC-CXL fabrics, then lower them to eBPF.")


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

_SOLVER_HELP = "Solver: z3, cvc5 (needs `pip install cvc5`) or portfolio (both; a disagreement is unknown)."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fxverify {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """fxverify: a verifier-centric toolkit for data movement on GPU-DPU/NIC-CXL fabrics."""


def _use_color(color: Color = Color.auto) -> bool:
    if color is not Color.auto:
        return color is Color.always
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _env(key: str) -> str:
    """The environment variable of configuration key ``key`` (``gate.config.Setting.env``)."""
    return "FXVERIFY_" + key.upper().replace("-", "_")


# Flags take `metavar=""`: newer typers show a flag's type (`<bool>`) where it takes no value.
# Help texts are rich markup: a literal `[` before a letter is written `\\[`.
# Policy paths are strings, checked by ``_inputs``: typer would read an empty argument as the
# path `.` (the current folder), and the parser's own readability test would refuse an
# unreadable file as a usage error (FX-USE-005); the reader reports it as FX-NAM-003 with its file.
def _inputs(paths: list[str]) -> list[str]:
    """``paths`` as given; an empty one (an unset shell variable, ``fxverify check "$FILES"``)
    is FX-USE-005, exit 2, instead of the current folder. Raises ``typer.Exit``."""
    if any(not p for p in paths):
        raise _stop(codes.USE_005, EMPTY_PATH, help="name a policy file or folder")
    return paths


@app.command(cls=_Command)
def check(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(..., help="Policy files or folders (searched for *.fx)."),
    fmt: list[str] = typer.Option([], "--format", "-f", metavar="FMT[=PATH]",
                                  help="Output format: text, json, sarif, junit, github, markdown, html or csv. FMT=PATH also "
                                       "writes FMT to PATH; repeat for several outputs from one run."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the report to FILE (atomically)."),
    dump_smt: Optional[Path] = typer.Option(None, "--dump-smt", help="Write every obligation as SMT-LIB2 into DIR."),
    no_prune: bool = typer.Option(False, "--no-prune", metavar="", envvar=_env("no-prune"),
                                  help="Send every obligation to the solver (no graph or interval proofs)."),
    no_parametric: bool = typer.Option(False, "--no-parametric", metavar="", envvar=_env("no-parametric"),
                                       help="Discharge every instance of an edge family on its own (no proofs for all "
                                            "index values at once; the same verdicts)."),
    solver: Solver = typer.Option(Solver("z3"), "--solver", envvar=_env("solver"), help=_SOLVER_HELP),  # type: ignore[valid-type]
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, max=SOLVER_PARAM_MAX, envvar=_env("rlimit"),
                               help="Solver resource limit per query (deterministic effort)."),
    timeout: int = typer.Option(SolverOptions.timeout_ms, "--timeout", min=1, max=SOLVER_PARAM_MAX, envvar=_env("timeout"),
                                help="Wall-clock limit per query, in ms."),
    seed: int = typer.Option(0, "--seed", min=0, max=SOLVER_PARAM_MAX, envvar=_env("seed"), help="Solver random seed."),
    stats: bool = typer.Option(False, "--stats", metavar="", help="Add wall times and cache counts to the report (makes it vary between runs)."),
    fail_on: FailOn = typer.Option(FailOn.error, "--fail-on", envvar=_env("fail-on"),
                                   help="Fail (exit 1) on errors only, or on warnings too."),
    unknown: Unknown = typer.Option(Unknown.fail, "--unknown", envvar=_env("unknown"),
                                    help="An unknown verdict fails the gate, or is a warning."),
    exit_zero: bool = typer.Option(False, "--exit-zero", "--soft-fail", metavar="", envvar=_env("exit-zero"),
                                   help="Soft-fail: report every finding, but exit 0 where findings would fail the gate "
                                        "(input and internal errors still exit 2 and 3)."),
    select: list[str] = typer.Option([], "--select", metavar="RULES", envvar=_env("select"),
                                     help="Check only these rules: codes, prefixes (FX-ORD) or families (ordering), "
                                          "comma-separated; repeatable. FX-ORD-001 is always checked."),
    ignore: list[str] = typer.Option([], "--ignore", metavar="RULES", envvar=_env("ignore"),
                                     help="Do not check these rules (codes, prefixes or families); repeatable."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", readable=False, envvar=_env("baseline"),
                                            help="Report only findings not in this baseline file."),
    write_baseline: Optional[Path] = typer.Option(None, "--write-baseline", help="Record the current findings in FILE and exit 0."),
    update_baseline: Optional[Path] = typer.Option(None, "--update-baseline", readable=False, help="Like --baseline, then drop stale entries from FILE."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", envvar=_env("cache-dir"),
                                             help="Result cache folder (default: the user cache directory)."),
    no_cache: bool = typer.Option(False, "--no-cache", metavar="", envvar=_env("no-cache"), help="Neither read nor write the result cache."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, envvar=_env("jobs"), show_default="this machine's cores",
                                       help="Worker processes here; a big policy is split over them (same report for any N)."),
    executor: str = typer.Option("local", "--executor", metavar="local|dask://HOST:PORT", envvar=_env("executor"),
                                 help="Run the checks here (local), or on the workers of an existing Dask cluster."),
    quiet: bool = typer.Option(False, "--quiet", "-q", metavar="", envvar=_env("quiet"),
                               help="No progress bar; the text report shows only failures "
                                    "(refuted, unknown, input errors) and a one-line summary."),
    color: Color = typer.Option(Color.auto, "--color", envvar=_env("color"),
                                help="Colour the text report: on a terminal without NO_COLOR (auto), always, or never."),
    exclude: list[str] = typer.Option([], "--exclude", metavar="GLOB", envvar=_env("exclude"),
                                      help="Skip files matching GLOB (their path, a trailing part or a folder on it); repeatable."),
    junit_per_obligation: bool = typer.Option(False, "--junit-per-obligation", metavar="", envvar=_env("junit-per-obligation"),
                                              help="JUnit: one test case per obligation (default: one per obligation "
                                                   "family key, with its count)."),
    config: Optional[Path] = typer.Option(None, "--config", readable=False, envvar=_env("config"),
                                          help="Settings file (default: the nearest .fxverify.toml, or pyproject.toml "
                                               "with a tool.fxverify table, from here up to the repository root)."),
    certify: Optional[str] = typer.Option(None, "--certify", metavar="[python|smt]",
                                          help="Re-validate the certificate of every fast (non-solver) proof with the "
                                               "independent checker: in Python (a bare `--certify`), or as SMT queries (`smt`)."),
    pictures: Optional[Path] = typer.Option(None, "--pictures", metavar="DIR",
                                            help="Write each trace as an SVG swimlane into DIR (replaced as a whole); "
                                                 "Markdown and SARIF reports link them."),
) -> None:
    """Check policies: discharge every obligation with Z3 (or cvc5, or both) and show replayed counterexamples."""
    from fxverify.atomic import write_text
    from fxverify.certify import MODES as CERTIFY_MODES
    from fxverify.diagnostics.outdir import unwritable_file
    from fxverify.gate import GateOptions, GateRequest, run_gate
    from fxverify.gate.cache import default_cache_dir
    from fxverify.gate.executors import usable_cores
    from fxverify.gate.rules import skipped
    from fxverify.pipeline import CheckOptions
    from fxverify.render.outputs import RenderOptions, describe, parse_outputs, render, run_link
    from fxverify.render.pictures import picture_link

    def opt(p: Optional[Path]) -> str | None:
        return None if p is None else str(p)

    if certify is not None and certify not in CERTIFY_MODES:
        raise _stop(codes.USE_005, f"`--certify {certify}` is not a mode; use `--certify` or `--certify smt`",
                    "write the mode right after `--certify`, or put `--certify` after the paths")
    # Settings the command line and the environment left at their defaults come from the file.
    given = dict(no_prune=no_prune, no_parametric=no_parametric, solver=solver.value, rlimit=rlimit, timeout=timeout, seed=seed,
                 fail_on=fail_on.value, unknown=unknown.value, exit_zero=exit_zero, select=list(select),
                 ignore=list(ignore), baseline=opt(baseline), cache_dir=opt(cache_dir), no_cache=no_cache, jobs=jobs,
                 executor=executor, quiet=quiet, color=color.value, exclude=list(exclude), junit_per_obligation=junit_per_obligation)
    from fxverify.gate.config import ConfigError, settings

    try:
        # By name: typer ships its own copy of click in some versions, with its own enum.
        s = settings(given, opt(config), lambda name: getattr(ctx.get_parameter_source(name), "name", None))
    except ConfigError as err:
        _problems(err.diagnostics, err.sources)
        raise typer.Exit(2) from None
    color_choice = Color(s["color"])
    outputs, problems = parse_outputs(list(fmt), opt(output))
    skip, rule_problems = skipped(s["select"], s["ignore"])
    if not problems:  # before checking: a typo in a folder name never costs a whole run
        problems = [p for p in (unwritable_file(o.path) for o in outputs if o.path is not None) if p is not None]
    if problems or rule_problems:
        _problems(problems + rule_problems)
        raise typer.Exit(2)
    if pictures is not None:
        _pictures_refused(str(pictures))
    req = GateRequest(
        paths=tuple(_inputs(paths)),
        check=CheckOptions(prune=not s["no_prune"], solver=SolverOptions(seed=s["seed"], rlimit=s["rlimit"],
                                                                          timeout_ms=s["timeout"], solver=s["solver"]),
                           certify=certify, skip_codes=skip, parametric=not s["no_parametric"]),
        gate=GateOptions(fail_on=s["fail_on"], unknown=s["unknown"], exit_zero=s["exit_zero"]),
        baseline=s["baseline"], write_baseline=opt(write_baseline), update_baseline=opt(update_baseline),
        cache_dir=None if s["no_cache"] else (s["cache_dir"] or default_cache_dir()),
        jobs=s["jobs"] or usable_cores(), executor=s["executor"], dump_smt=opt(dump_smt), stats=stats, exclude=tuple(s["exclude"]))
    from fxverify.render.progress import ProgressBar

    with ProgressBar(s["quiet"]) as bar:
        report = run_gate(replace(req, progress=bar) if bar.enabled else req)
    _problems(report.problems, report.sources if report.sources.paths() else None)
    if report.stopped:
        raise typer.Exit(report.exit_code)
    if pictures is not None:
        from fxverify.render.pictures import write_pictures

        problem = write_pictures(report, str(pictures))
        if problem is not None:
            _problems([problem])
            raise typer.Exit(2)
    read = {os.path.realpath(p) for r in report.results for p in [r.path, *r.sources.paths()]}
    for o in outputs:
        if o.path is not None and os.path.realpath(o.path) in read:
            raise _stop(codes.IO_002, f"`{o.path}` is a policy file this run read; nothing was written",
                        "name a report file, such as `-o report.sarif`")
    for i, o in enumerate(outputs):
        others = tuple(describe(x) for j, x in enumerate(outputs) if j != i and x.fmt != "github")
        text, lines = render(report, o.fmt, RenderOptions(quiet=s["quiet"], junit_per_obligation=s["junit_per_obligation"],
                                                          elsewhere=others + run_link(),
                                                          pictures=picture_link(o.fmt, pictures, o.path)))
        if o.path is not None:
            try:
                write_text(o.path, text)
            except OSError as err:
                raise _stop(codes.IO_001, f"cannot write `{o.path}`: {err.strerror or err}",
                            "name a file in an existing, writable folder")
        elif lines is not None and _use_color(color_choice):
            from rich.console import Console

            from fxverify.render.text import to_rich

            forced = {"force_terminal": True, "no_color": False, "color_system": "standard"} if color_choice is Color.always else {}
            Console(highlight=False, soft_wrap=True, **forced).print(to_rich(lines), end="")
        else:
            sys.stdout.write(text)
    raise typer.Exit(report.exit_code)


def _pictures_refused(folder: str) -> None:
    """Stop (exit 2) before checking when ``--pictures DIR`` cannot be replaced as a whole."""
    from fxverify.atomic import foreign_entries
    from fxverify.diagnostics.outdir import refuse_replacing
    from fxverify.render.pictures import INDEX, PICTURE_NAME

    problem = refuse_replacing(folder, lambda d: foreign_entries(d, INDEX, PICTURE_NAME), "fxverify",
                               "fxverify check --pictures", "pictures", option="--pictures")
    if problem is not None:
        _problems([problem])
        raise typer.Exit(2)


#: Lowering targets (BRIEF section 7), as the lowering defines them.
Target = Enum("Target", {t: t for t in TARGETS}, type=str)  # type: ignore[misc]


@app.command(cls=_Command)
def lower(
    policy: Path = typer.Argument(..., readable=False, help="The policy file to lower."),
    output: Path = typer.Option(..., "-o", "--output", help="Output directory: new, empty, or a previous lowering's (replaced atomically as a whole)."),
    target: Target = typer.Option(Target("kernel"), "--target", help="Runtime to lower for."),  # type: ignore[valid-type]
    no_compile: bool = typer.Option(False, "--no-compile", metavar="", help="Write C only; do not run clang."),
    kernel_verify: bool = typer.Option(False, "--kernel-verify", metavar="", help="Load every program into the Linux verifier."),
    kernel_run: bool = typer.Option(False, "--kernel-run", metavar="", help="Run the programs with BPF_PROG_TEST_RUN against the simulator."),
    allow_unproved: bool = typer.Option(False, "--allow-unproved", metavar="", help="Lower a policy that is not proved (tests only); stamps every artifact."),
    cuda_kernel: list[str] = typer.Option([], "--cuda-kernel", metavar="DEVICE.HOOK=KERNEL",
                                          help="bpftime: drive a GPU hook from the entry and exit of a CUDA kernel (its mangled symbol); repeatable."),
    fmt: str = typer.Option(LowerFormat.text.value, "--format", "-f", metavar="[text|json]",
                            help="Report format: text or json (the check formats are `fxverify check`'s)."),
    solver: Solver = typer.Option(Solver("z3"), "--solver", help=_SOLVER_HELP),  # type: ignore[valid-type]
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, max=SOLVER_PARAM_MAX, help="Solver resource limit per query."),
    stats: bool = typer.Option(False, "--stats", metavar="", help="Add stage wall times to the report."),
) -> None:
    """Lower a proved policy to per-device eBPF (C, objects, maps, obligations, manifest)."""
    from fxverify.lower.driver import LowerOptions, LowerResult, lower as run_lower
    from fxverify.render.lower import render_json, render_text

    if fmt not in {f.value for f in LowerFormat}:
        if fmt in CHECK_FORMATS:
            raise _stop(codes.USE_005, f"`lower` reports as `text` or `json`, not `{fmt}`: `{fmt}` is a format of "
                        "`fxverify check`, which `lower` would ignore",
                        f"`fxverify check {policy} --format {fmt}` reports the findings as {fmt}; "
                        "`lower --format json` gives the lowering report as JSON")
        raise _stop(codes.USE_005, f"`--format {fmt}` is not a format of `lower`; use `text` or `json`",
                    "`fxverify lower --help` lists the options")
    if no_compile and (kernel_verify or kernel_run):
        raise _stop(codes.USE_002, f"`--no-compile` writes no objects, so `{'--kernel-verify' if kernel_verify else '--kernel-run'}` "
                    "has nothing to load", "drop `--no-compile` to verify or run the programs in the kernel")
    kernels = []
    for spec in cuda_kernel:
        where, _eq, symbol = spec.partition("=")
        dev, _dot, hook = where.partition(".")
        if not (dev and hook and symbol):
            raise _stop(codes.USE_005, f"`--cuda-kernel {spec}` is not DEVICE.HOOK=KERNEL",
                        "for example `--cuda-kernel gpu0.launch=_Z9vectorAddPKfS0_Pf`")
        kernels.append((dev, hook, symbol))
    opts = LowerOptions(target=target.value, compile=not no_compile, kernel_verify=kernel_verify,
                        kernel_run=kernel_run, allow_unproved=allow_unproved, cuda_kernels=tuple(kernels),
                        solver=SolverOptions(rlimit=rlimit, solver=solver.value))
    try:
        res = run_lower(str(policy), str(output), opts)
    except Exception as exc:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001 in the chosen format
        res = LowerResult(str(policy), SourceMap(), diagnostics=[crash(str(policy), exc)], exit_code=3)
    render = render_json if fmt == LowerFormat.json.value else render_text
    sys.stdout.write(render(res, str(output), stats=stats))
    raise typer.Exit(res.exit_code)


@app.command(cls=_Command)
def smt(
    policy: Path = typer.Argument(..., readable=False, help="The policy file whose obligations to write."),
    output: Path = typer.Option(..., "-o", "--output", help="Output directory: new, empty, or a previous export's (replaced atomically as a whole)."),
    solver: Solver = typer.Option(Solver("z3"), "--solver", help=_SOLVER_HELP),  # type: ignore[valid-type]
    rlimit: int = typer.Option(SolverOptions.rlimit, "--rlimit", min=1, max=SOLVER_PARAM_MAX, help="Solver resource limit per query (deterministic effort)."),
    timeout: int = typer.Option(SolverOptions.timeout_ms, "--timeout", min=1, max=SOLVER_PARAM_MAX, help="Wall-clock limit per query, in ms."),
    seed: int = typer.Option(0, "--seed", min=0, max=SOLVER_PARAM_MAX, help="Solver random seed."),
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


class GraphFormat(str, Enum):
    """Output formats of ``graph``."""

    dot = "dot"
    svg = "svg"
    html = "html"


class GraphView(str, Enum):
    """Views of ``graph`` (``views.command.VIEWS``), or all of them."""

    fabric = "fabric"
    movement = "movement"
    hb = "hb"
    all = "all"


_SUFFIX_FORMAT = {".dot": GraphFormat.dot, ".gv": GraphFormat.dot, ".svg": GraphFormat.svg,
                  ".html": GraphFormat.html, ".htm": GraphFormat.html}


@app.command(cls=_Command)
def graph(
    policy: Path = typer.Argument(..., readable=False, help="The policy file to draw."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the picture to FILE (atomically)."),
    fmt: Optional[GraphFormat] = typer.Option(None, "--format", "-f",
                                              help="dot, svg (laid out by Graphviz) or html (one self-contained page); "
                                                   "default: from the suffix of -o, else dot."),
    view: Optional[GraphView] = typer.Option(None, "--view", help="fabric, movement (edges between regions), hb "
                                             "(happens-before) or all; default: all for html, movement otherwise."),
    unfold: list[str] = typer.Option([], "--unfold", metavar="NAME",
                                     help="Draw this family (or instance, or index prefix such as `kvw[3]`) one "
                                          "instance at a time; repeatable."),
    finding: Optional[str] = typer.Option(None, "--finding", metavar="CODE[:KEY]",
                                          help="Check the policy and highlight this finding: its edges, bytes and "
                                               "the missing ordering or path."),
) -> None:
    """Draw a policy: its fabric, movement graph or happens-before graph, families folded, a finding highlighted."""
    from fxverify.atomic import write_text
    from fxverify.render.dot import GraphvizMissing
    from fxverify.render.graph import draw_graph
    from fxverify.views.command import VIEWS, GraphRequest, build_pictures

    suffix = output.suffix.lower() if output is not None else ""
    if fmt is None and suffix and suffix not in _SUFFIX_FORMAT:
        raise _stop(codes.USE_002, f"`-o {output}`: fxverify writes DOT, SVG or HTML, and cannot tell which from "
                    f"`{suffix}`; nothing was written",
                    "name a .dot, .svg or .html file, or give `--format`; for a PNG, run Graphviz on the DOT "
                    f"(`fxverify graph {policy} -f dot | dot -Tpng -o {output}`)")
    fmt = fmt or _SUFFIX_FORMAT.get(suffix, GraphFormat.dot)
    chosen = view or (GraphView.all if fmt is GraphFormat.html else GraphView.movement)
    if chosen is GraphView.all and fmt is not GraphFormat.html:
        raise _stop(codes.USE_002, f"a {fmt.value.upper()} file holds one picture, and `--view all` asks for three",
                    "name one view (`--view fabric|movement|hb`), or use `--format html` for a page with all of them")
    if output is not None and os.path.realpath(output) == os.path.realpath(policy):
        raise _stop(codes.IO_002, f"`-o {output}` is the policy file; nothing was written",
                    "name a picture file, such as `-o policy.svg`")
    views = VIEWS if chosen is GraphView.all else (chosen.value,)
    try:
        built = build_pictures(GraphRequest(str(policy), views, tuple(unfold), finding))
        _problems(built.diagnostics, built.sources if built.sources.paths() else None)
        if built.exit_code:
            raise typer.Exit(built.exit_code)
        text = draw_graph(built, fmt.value)
    except GraphvizMissing:
        raise _stop(codes.USE_007, f"Graphviz's `dot` program is not installed, so `--format {fmt.value}` cannot lay "
                    "the picture out", "install Graphviz (`apt-get install graphviz`, `brew install graphviz`), "
                    "or write DOT with `--format dot`")
    except typer.Exit:
        raise
    except Exception as exc:  # noqa: BLE001 - any escape is a bug: FX-INT-001, exit 3
        _problems([crash(str(policy), exc)])
        raise typer.Exit(3)
    if output is None:
        sys.stdout.write(text)
        raise typer.Exit(0)
    try:
        write_text(str(output), text)
    except OSError as err:
        raise _stop(codes.IO_001, f"cannot write `{output}`: {err.strerror or err}",
                    "name a file in an existing, writable folder")


@app.command(cls=_Command)
def parse(paths: list[str] = typer.Argument(..., help="Policy files or folders (searched for *.fx).")) -> None:
    """Parse and resolve only (no obligations): input errors with exit 2, else each policy's counts of devices,
    regions and edges (families unrolled), exit 0."""
    from fxverify.gate.sources import parse_only

    _finish(parse_only(_inputs(paths)))


@app.command(cls=_Command)
def fmt(paths: list[str] = typer.Argument(..., help="Policy files or folders (every *.fx, shared fragments too)."),
        check_only: bool = typer.Option(False, "--check", metavar="", help="Write nothing; exit 1 when a file is not formatted (CI)."),
        diff: bool = typer.Option(False, "--diff", metavar="", help="Print what would change, as a unified diff; write nothing.")) -> None:
    """Lay out policy files canonically (indentation, spacing, blank lines), keeping every comment on its line."""
    from fxverify.gate.sources import format_files

    _finish(format_files(_inputs(paths), check_only, diff))


def _finish(run) -> None:
    """Print a ``gate.sources.Run`` (its problems on standard error) and exit with its code."""
    for diags, sources in run.problems:
        _problems(diags, sources)
    sys.stdout.write(run.stdout)
    raise typer.Exit(run.exit_code)


class CompareFormat(str, Enum):
    """Formats of ``compare``."""

    text = "text"
    csv = "csv"


@app.command(cls=_Command)
def compare(
    a: Path = typer.Argument(..., readable=False, help="The CSV report of the first run (`fxverify check --format csv=A.csv`)."),
    b: Path = typer.Argument(..., readable=False, help="The CSV report of the second run."),
    fmt: CompareFormat = typer.Option(CompareFormat.text, "--format", "-f", help="A table (text) or CSV."),
    changed: bool = typer.Option(False, "--changed", metavar="", help="Show only rows whose verdict or counts differ."),
) -> None:
    """Compare two runs per policy and obligation family, as `veristat -C` does: verdicts,
    obligation counts and times (runs with --stats) side by side, with their differences."""
    from fxverify.gate.compare import CompareError, compare as run_compare, table

    try:
        deltas = run_compare(str(a), str(b))
    except CompareError as err:
        _problems([err.diagnostic], err.sources if err.sources.paths() else None)
        raise typer.Exit(2) from None
    sys.stdout.write(table([d for d in deltas if d.changed or not changed], csv_format=fmt is CompareFormat.csv))
    raise typer.Exit(0)


# The commands around checking live in ``cli.tools``; registered here in the order of ``--help``.
app.command(cls=_Command)(tools.explain)
app.command(cls=_Command)(tools.init)
app.command(cls=_Command)(tools.lsp)
app.command(cls=_Command)(tools.serve)
gen_app = typer.Typer(add_completion=False, no_args_is_help=True, cls=_Group,
                      help="Generate real policies from real input files.")
gen_app.command("prefill", cls=_Command)(tools.gen_prefill)
app.add_typer(gen_app, name="gen")


#: The exit code of a command stopped by Ctrl-C: 128 + SIGINT, as a shell reports it. typer
#: answers a ``KeyboardInterrupt`` raised inside a command with ``Exit(130)`` (``typer.core``,
#: 0.16 and later), which ``app(standalone_mode=False)`` returns; no command of ours exits so.
INTERRUPTED = 130


def main() -> None:
    """Console entry point: run the app; a command line the parser refuses is FX-USE-004 (a missing
    argument) or FX-USE-005 (anything else), exit 2; any other escaped exception is FX-INT-001,
    exit 3. Ctrl-C prints ``interrupted`` on standard error and exits ``INTERRUPTED``, whether it
    lands inside a command or around it."""
    try:
        code = app(args=certify_default(sys.argv[1:]), standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        code = INTERRUPTED
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
    if code == INTERRUPTED:
        sys.stdout.flush()  # what the command wrote before the signal, then the line
        sys.stderr.write("interrupted\n")
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
