"""The ``fxverify`` command line (typer). No logic beyond argument handling and rendering.

Exit codes (BRIEF section 6): 0 all proved, 1 refuted or unknown, 2 usage/parse/semantic error,
3 internal error (FX-INT-001). No Python traceback ever reaches the user.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from fxverify import __version__

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


class FailOn(str, Enum):
    """The least severity that fails the gate."""

    error = "error"
    warning = "warning"


class Unknown(str, Enum):
    """What an unknown verdict does to the gate."""

    fail = "fail"
    warn = "warn"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fxverify {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """fxverify: a verifier-centric toolkit for data movement on GPU-DPU/NIC-CXL fabrics."""


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename, so
    a reader never sees a half-written file. A path that exists and is not a regular file (a
    terminal, ``/dev/stdout``, a pipe) is written in place instead of being replaced.
    Raises ``OSError`` on I/O failure."""
    if os.path.exists(path) and not os.path.isfile(path):
        if os.path.isdir(path):
            raise IsADirectoryError(21, "is a directory", path)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    from fxverify.atomic import replace_atomically

    replace_atomically(path, text.encode("utf-8"))


def _use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@app.command()
def check(
    paths: list[Path] = typer.Argument(..., help="Policy files or folders (searched for *.fx)."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the report to FILE (atomically)."),
    dump_smt: Optional[Path] = typer.Option(None, "--dump-smt", help="Write every obligation as SMT-LIB2 into DIR."),
    no_prune: bool = typer.Option(False, "--no-prune", help="Send every obligation to the solver (no graph or interval proofs)."),
    rlimit: int = typer.Option(20_000_000, "--rlimit", min=1, help="Z3 resource limit per query (deterministic effort)."),
    timeout: int = typer.Option(30_000, "--timeout", min=1, help="Wall-clock limit per query, in ms."),
    seed: int = typer.Option(0, "--seed", min=0, help="Solver random seed."),
    stats: bool = typer.Option(False, "--stats", help="Add wall times and cache counts to the report (makes it vary between runs)."),
    fail_on: FailOn = typer.Option(FailOn.error, "--fail-on", help="Fail (exit 1) on errors only, or on warnings too."),
    unknown: Unknown = typer.Option(Unknown.fail, "--unknown", help="An unknown verdict fails the gate, or is a warning."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Report only findings not in this baseline file."),
    write_baseline: Optional[Path] = typer.Option(None, "--write-baseline", help="Record the current findings in FILE and exit 0."),
    update_baseline: Optional[Path] = typer.Option(None, "--update-baseline", help="Like --baseline, then drop stale entries from FILE."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Result cache folder (default: the user cache directory)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Check policies (or, for one policy, its solver queries) in N worker processes."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Check policies: discharge every obligation with Z3 and show replayed counterexamples."""
    from fxverify.gate import GateOptions
    from fxverify.pipeline import CheckOptions
    from fxverify.smt.backend import SolverOptions

    opts = CheckOptions(prune=not no_prune, solver=SolverOptions(seed=seed, rlimit=rlimit, timeout_ms=timeout))
    gate = GateOptions(fail_on=fail_on.value, unknown=unknown.value)
    code = _run_check(paths, fmt, output, dump_smt, opts, gate, stats, (baseline, write_baseline, update_baseline),
                      None if no_cache else str(cache_dir) if cache_dir else "", jobs, quiet)
    raise typer.Exit(code)


def _fail(message: str, help_text: str | None = None) -> int:
    typer.echo(f"error: {message}" + (f"\n  = help: {help_text}" if help_text else ""), err=True)
    return 2


def _run_check(paths, fmt, output, dump_smt, opts, gate, stats, baselines, cache_dir, jobs, quiet) -> int:
    from dataclasses import replace

    from fxverify.baseline import BaselineError, apply_baseline, dump_baseline, entries_from, read_baseline
    from fxverify.cache import CacheStats, default_cache_dir
    from fxverify.gate import BaselineOutcome, Report, apply_unknown_policy, exit_code, run_checks
    from fxverify.pipeline import collect_policies

    files = collect_policies([str(p) for p in paths])
    if not files:
        typer.echo(f"error[FX-NAM-003]: no policy files (*.fx) found in {', '.join(str(p) for p in paths)}", err=True)
        return 2
    if dump_smt is not None and dump_smt.exists() and not dump_smt.is_dir():
        typer.echo(f"error[FX-NAM-003]: `--dump-smt {dump_smt}` is not a directory", err=True)
        return 2
    base, write_to, update = baselines
    if sum(x is not None for x in baselines) > 1:
        return _fail("use only one of `--baseline`, `--write-baseline` and `--update-baseline`")
    known = None
    if base is not None or update is not None:
        try:
            known = read_baseline(str(base or update))
        except BaselineError as err:
            return _fail(str(err), "record one with `fxverify check --write-baseline FILE`")
    if cache_dir == "":
        cache_dir = default_cache_dir()
    if dump_smt is not None:
        dump_dirs = _dump_dirs(files, dump_smt)
        try:
            for d in dump_dirs.values():
                os.makedirs(d, exist_ok=True)
        except OSError as err:
            return _fail(f"cannot write the SMT-LIB dump into `{dump_smt}`: {err.strerror or err}")
        # One policy per option set: the dump folder differs per policy, so they run one by one.
        results, crashed, cache_stats = [], [], CacheStats()
        for f in files:
            r, c, s = run_checks([f], replace(opts, dump_smt=dump_dirs[f]), cache_dir, 1)
            results += r
            crashed += c
            cache_stats.add(s)
        seconds = sum(r.seconds for r in results)
    else:
        from time import perf_counter

        t0 = perf_counter()
        with _progress(len(files), quiet) as (on_done, on_obligations):
            results, crashed, cache_stats = run_checks(files, opts, cache_dir, jobs, on_done, on_obligations)
        seconds = perf_counter() - t0
    for msg in crashed:
        sys.stderr.write(msg)
    apply_unknown_policy(results, gate.unknown)
    report = Report(results, crashed, cache=cache_stats, seconds=seconds, stats=stats, gate=gate)
    if known is not None:
        matched, stale = apply_baseline(results, known)
        report.baseline = BaselineOutcome(str(base or update), matched, stale, updated=update is not None)
    report.exit_code = exit_code(report)
    if (write_to or update) is not None and report.exit_code >= 2:
        sys.stderr.write(f"note: `{write_to or update}` was not written: fix the errors above first\n")
    try:
        if write_to is not None and report.exit_code < 2:
            write_atomic(str(write_to), dump_baseline(entries_from(results)))
            report.exit_code = 0
        if update is not None and report.exit_code < 2:
            stale = {e.fingerprint for e in report.baseline.stale}
            write_atomic(str(update), dump_baseline([e for e in known if e.fingerprint not in stale]))
    except OSError as err:
        return _fail(f"cannot write the baseline: {err.strerror or err}", "name a file in an existing, writable folder")
    text, lines = _render(report, fmt)
    if output is not None:
        try:
            write_atomic(str(output), text)
        except OSError as err:
            return _fail(f"cannot write `{output}`: {err.strerror or err}", "name a file in an existing, writable folder")
    elif lines is not None and _use_color():
        from rich.console import Console

        from fxverify.diagnostics.render.text import to_rich

        Console(highlight=False, soft_wrap=True).print(to_rich(lines), end="")
    else:
        sys.stdout.write(text)
    return report.exit_code


def _render(report, fmt: Format) -> tuple[str, list | None]:
    """The report's text in ``fmt``; for ``text`` also the styled lines (for a terminal)."""
    if fmt is Format.text:
        from fxverify.diagnostics.render.text import render_report, to_plain

        lines = render_report(report)
        return to_plain(lines), lines
    if fmt is Format.json:
        from fxverify.diagnostics.render.json import report_to_json as render
    elif fmt is Format.sarif:
        from fxverify.diagnostics.render.sarif import report_to_sarif as render
    elif fmt is Format.junit:
        from fxverify.diagnostics.render.junit import report_to_junit as render
    elif fmt is Format.github:
        from fxverify.diagnostics.render.github import report_to_github as render
    else:
        from fxverify.diagnostics.render.markdown import report_to_markdown as render
    return render(report), None


class _progress:
    """A rich progress bar on stderr (policies, obligations discharged) when stderr is a terminal
    and not ``--quiet``; otherwise nothing. Yields ``(on_done, on_obligations)`` callbacks."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.enabled, self.bar = total, sys.stderr.isatty() and not quiet, None

    def __enter__(self):
        if not self.enabled:
            return None, None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.__enter__()
        pol = self.bar.add_task("policies", total=self.total)
        obl = self.bar.add_task("obligations discharged", total=None)
        return (lambda _path: self.bar.advance(pol)), (lambda n: self.bar.advance(obl, n))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _dump_dirs(files: list[str], root: Optional[Path]) -> dict[str, str]:
    """``--dump-smt DIR`` writes each policy's obligations into ``DIR/<policy stem>/`` (with a
    numeric suffix when two policies share a stem), so several policies never overwrite each other."""
    if root is None:
        return {}
    out: dict[str, str] = {}
    used: dict[str, int] = {}
    for f in files:
        stem = Path(f).name.removesuffix(".fx")
        used[stem] = used.get(stem, 0) + 1
        out[f] = str(root / (stem if used[stem] == 1 else f"{stem}.{used[stem]}"))
    return out


def _internal(path: str) -> None:
    from fxverify.gate import internal_error_text

    sys.stderr.write(internal_error_text(path, sys.exc_info()[1]))


class Target(str, Enum):
    """Lowering targets (BRIEF section 7)."""

    kernel = "kernel"
    bpftime = "bpftime"
    dputime = "dputime"


@app.command()
def lower(
    policy: Path = typer.Argument(..., help="The policy file to lower."),
    output: Path = typer.Option(..., "-o", "--output", help="Output directory (replaced atomically)."),
    target: Target = typer.Option(Target.kernel, "--target", help="Runtime to lower for."),
    no_compile: bool = typer.Option(False, "--no-compile", help="Write C only; do not run clang."),
    kernel_verify: bool = typer.Option(False, "--kernel-verify", help="Load every program into the Linux verifier."),
    kernel_run: bool = typer.Option(False, "--kernel-run", help="Run the programs with BPF_PROG_TEST_RUN against the simulator."),
    allow_unproved: bool = typer.Option(False, "--allow-unproved", help="Lower a policy that is not proved (tests only); stamps every artifact."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Report format."),
    rlimit: int = typer.Option(20_000_000, "--rlimit", min=1, help="Z3 resource limit per query."),
    stats: bool = typer.Option(False, "--stats", help="Add stage wall times to the report."),
) -> None:
    """Lower a proved policy to per-device eBPF (C, objects, maps, obligations, manifest)."""
    from fxverify.lower.driver import LowerOptions, lower as run_lower
    from fxverify.lower.report import render_json, render_text
    from fxverify.smt.backend import SolverOptions

    if output.exists() and not output.is_dir():
        typer.echo(f"error: `-o {output}` exists and is not a directory", err=True)
        raise typer.Exit(2)
    opts = LowerOptions(target=target.value, compile=not no_compile, kernel_verify=kernel_verify,
                        kernel_run=kernel_run, allow_unproved=allow_unproved, solver=SolverOptions(rlimit=rlimit))
    try:
        res = run_lower(str(policy), str(output), opts)
    except OSError as err:
        typer.echo(f"error: cannot write `{output}`: {err.strerror or err}", err=True)
        raise typer.Exit(2)
    except Exception:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
        _internal(str(policy))
        raise typer.Exit(3)
    render = render_json if fmt is Format.json else render_text
    sys.stdout.write(render(res, str(output), stats=stats))
    raise typer.Exit(res.exit_code)


@app.command()
def explain(code: Optional[str] = typer.Argument(None, help="A code such as FX-ORD-002."),
            list_all: bool = typer.Option(False, "--list", help="List every code.")) -> None:
    """Print the rule behind a diagnostic code, why it matters, and a failing and a fixed example."""
    from fxverify.diagnostics.codes import REGISTRY
    from fxverify.diagnostics.explain import explain as text_of, list_codes, load_examples

    if list_all:
        sys.stdout.write(list_codes())
        raise typer.Exit(0)
    if code is None:
        typer.echo("error: name a code, such as `fxverify explain FX-ORD-002`, or use `--list`", err=True)
        raise typer.Exit(2)
    c = REGISTRY.get(code.upper())
    if c is None:
        import difflib

        near = difflib.get_close_matches(code.upper(), REGISTRY, n=1)
        typer.echo(f"error: unknown code `{code}`" + (f"; did you mean `{near[0]}`?" if near else "")
                   + "\n  = help: `fxverify explain --list` lists every code", err=True)
        raise typer.Exit(2)
    sys.stdout.write(text_of(c, load_examples()))


@app.command()
def init(directory: Path = typer.Argument(..., help="The folder of the new policy repository."),
         action: Optional[str] = typer.Option(None, "--action", help="The fxverify action as owner/repo@ref.")) -> None:
    """Scaffold a policy repository: an example policy, a pre-commit config, a CI workflow, a README."""
    from fxverify.scaffold import DEFAULT_ACTION, ScaffoldError, scaffold

    try:
        written = scaffold(str(directory), action or DEFAULT_ACTION)
    except ScaffoldError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2)
    for p in written:
        typer.echo(f"wrote {p}")
    typer.echo(f"next: cd {directory} && fxverify check .")


gen_app = typer.Typer(add_completion=False, no_args_is_help=True,
                      help="Generate real policies from real input files.")
app.add_typer(gen_app, name="gen")


class KvDtype(str, Enum):
    """Dtypes of the spilled KV cache (``--kv-dtype``)."""

    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"


@gen_app.command("prefill")
def gen_prefill(
    model: Path = typer.Option(..., "--model", help="Hugging Face config.json of the model."),
    topology: Optional[Path] = typer.Option(None, "--topology", help="NCCL topology XML (the NCCL_TOPO_FILE format)."),
    cxl: list[Path] = typer.Option([], "--cxl", help="`cxl list` JSON; repeat to merge listings."),
    tokens: int = typer.Option(8192, "--tokens", help="Prompt tokens of the request."),
    block_tokens: int = typer.Option(16, "--block-tokens", help="Tokens per KV-cache block."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel degree (GPUs)."),
    kv_dtype: KvDtype = typer.Option(KvDtype.fp8, "--kv-dtype", help="Dtype of the KV spilled to CXL."),
    spill: Optional[str] = typer.Option(None, "--spill", help="Fraction of layers whose KV spills to CXL [default: 0.25 with --cxl, else 0]."),
    disaggregate: bool = typer.Option(False, "--disaggregate", help="Send the KV to a remote decode node through a NIC or DPU."),
    unroll: bool = typer.Option(False, "--unroll", help="Emit concrete edges instead of edge families."),
    layers: Optional[int] = typer.Option(None, "--layers", help="Keep only the first N layers (quick checks)."),
    hbm_gib: int = typer.Option(80, "--hbm-gib", help="HBM per GPU in GiB (topology files do not record it)."),
    ckpt_every: Optional[int] = typer.Option(None, "--ckpt-every", help="Checkpoint the hidden states every N layers into pmem; 0 disables [default: 8, widened to fit]."),
    name: Optional[str] = typer.Option(None, "--name", help="Policy name [default: the output file's stem]."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the policy to FILE (atomically) instead of stdout."),
    summary_json: Optional[Path] = typer.Option(None, "--summary-json", help="Write a JSON summary of the sizes to FILE."),
) -> None:
    """Generate a prefill policy from a model config, and optionally a topology and CXL listings."""
    raise typer.Exit(_run_gen_prefill(model, topology, cxl, tokens, block_tokens, tp, kv_dtype.value, spill, disaggregate,
                                      unroll, layers, hbm_gib, ckpt_every, name, output, summary_json))


def _run_gen_prefill(model, topology, cxl, tokens, block_tokens, tp, kv_dtype, spill, disaggregate, unroll, layers,
                     hbm_gib, ckpt_every, name, output, summary_json) -> int:
    import json
    import shlex

    from fxverify.diagnostics.render.text import render_diagnostic, to_plain
    from fxverify.gen.cxl_list import load_cxl
    from fxverify.gen.hf_config import load_model
    from fxverify.gen.nccl_topo import load_topology
    from fxverify.gen.prefill import PrefillOptions, generate_prefill
    from fxverify.source import SourceMap

    sources = SourceMap()
    spec, diags = load_model(str(model), sources)
    topo = fab = None
    if not diags and topology is not None:
        topo, diags = load_topology(str(topology), sources)
    if not diags and cxl:
        fab, diags = load_cxl([str(p) for p in cxl], sources)
    gen = None
    if not diags:
        argv = ["fxverify", "gen", "prefill", "--model", str(model)]
        argv += ["--topology", str(topology)] if topology is not None else []
        for p in cxl:
            argv += ["--cxl", str(p)]
        argv += ["--tokens", str(tokens), "--block-tokens", str(block_tokens), "--tp", str(tp), "--kv-dtype", kv_dtype]
        argv += (["--spill", spill] if spill is not None else []) + (["--disaggregate"] if disaggregate else [])
        argv += (["--unroll"] if unroll else []) + (["--layers", str(layers)] if layers is not None else [])
        argv += (["--hbm-gib", str(hbm_gib)] if hbm_gib != 80 else [])
        argv += (["--ckpt-every", str(ckpt_every)] if ckpt_every is not None else [])
        policy_name = name or (output.name.removesuffix(".fx") if output is not None else None)
        argv += ["--name", policy_name] if policy_name is not None else []  # the echo reproduces the text wherever it is written
        opts = PrefillOptions(tokens=tokens, block_tokens=block_tokens, tp=tp, kv_dtype=kv_dtype, spill=spill,
                              disaggregate=disaggregate, unroll=unroll, layers=layers, hbm_gib=hbm_gib,
                              ckpt_every=ckpt_every, name=policy_name, command=shlex.join(argv))
        gen, diags = generate_prefill(spec, topo, fab, opts)  # type: ignore[arg-type]
    if diags or gen is None:
        lines = []
        for d in diags:
            lines += render_diagnostic(d, sources) + [[("", "")]]
        sys.stderr.write(to_plain(lines))
        return 2
    if output is not None and summary_json is not None and os.path.abspath(output) == os.path.abspath(summary_json):
        typer.echo(f"error[FX-GEN-004]: -o and --summary-json both name `{output}`\n  = help: give them different files", err=True)
        return 2
    for target in (output, summary_json):  # check both targets first: never leave one file of the pair behind
        if target is None:
            continue
        why = ("no such folder" if not os.path.isdir(os.path.dirname(os.path.abspath(target)))
               else "it is a folder" if os.path.isdir(target) else None)
        if why:
            typer.echo(f"error[FX-GEN-004]: cannot write `{target}`: {why}\n  = help: name a file in an existing, writable folder",
                       err=True)
            return 2
    try:
        if output is not None:
            write_atomic(str(output), gen.text)
        else:
            sys.stdout.write(gen.text)
        if summary_json is not None:
            write_atomic(str(summary_json), json.dumps(gen.summary, indent=2, sort_keys=True) + "\n")
    except OSError as err:
        typer.echo(f"error[FX-GEN-004]: cannot write `{err.filename or output}`: {err.strerror or err}\n"
                   f"  = help: name a file in an existing, writable folder", err=True)
        return 2
    return 0


def main() -> None:
    """Console entry point: run the app and turn any escaped exception into FX-INT-001 (exit 3)."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception:  # noqa: BLE001
        _internal("<command line>")
        sys.exit(3)


if __name__ == "__main__":
    main()
