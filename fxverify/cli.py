"""The ``fxverify`` command line (typer). No logic beyond argument handling and rendering.

Exit codes (BRIEF section 6): 0 all proved, 1 refuted or unknown, 2 usage/parse/semantic error,
3 internal error (FX-INT-001). No Python traceback ever reaches the user.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
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
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".fxverify-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    stats: bool = typer.Option(False, "--stats", help="Add wall times to the report (makes it vary between runs)."),
) -> None:
    """Check policies: discharge every obligation with Z3 and show replayed counterexamples."""
    code = _run_check(paths, fmt, output, dump_smt, no_prune, rlimit, timeout, seed, stats)
    raise typer.Exit(code)


def _run_check(paths, fmt, output, dump_smt, no_prune, rlimit, timeout, seed, stats) -> int:
    from fxverify.diagnostics.render.json import results_to_json
    from fxverify.diagnostics.render.text import render_diagnostic, render_summary, to_plain, to_rich
    from fxverify.pipeline import CheckOptions, CheckResult, Status3, check as run, collect_policies
    from fxverify.smt.backend import SolverOptions

    files = collect_policies([str(p) for p in paths])
    if not files:
        typer.echo(f"error[FX-NAM-003]: no policy files (*.fx) found in {', '.join(str(p) for p in paths)}", err=True)
        return 2
    if dump_smt is not None and dump_smt.exists() and not dump_smt.is_dir():
        typer.echo(f"error[FX-NAM-003]: `--dump-smt {dump_smt}` is not a directory", err=True)
        return 2
    solver = SolverOptions(seed=seed, rlimit=rlimit, timeout_ms=timeout)
    results: list[CheckResult] = []
    crashed = False
    dump_dirs = _dump_dirs(files, dump_smt)
    for f in files:
        opts = CheckOptions(prune=not no_prune, solver=solver, dump_smt=dump_dirs.get(f))
        try:
            results.append(run(f, opts))
        except OSError as err:
            typer.echo(f"error: cannot write the SMT-LIB dump for {f}: {err.strerror or err}", err=True)
            return 2
        except Exception:  # noqa: BLE001 - any escape is a bug, reported as FX-INT-001
            _internal(f)  # and go on: the other files' reports are still worth having
            crashed = True
    if fmt is Format.json:
        text = results_to_json(results, stats=stats)
        lines = None
    else:
        lines = []
        for r in results:
            for d in r.diagnostics:
                lines += render_diagnostic(d, r.sources) + [[("", "")]]
            lines += render_summary(r, stats=stats)
        text = to_plain(lines)
    if output is not None:
        try:
            write_atomic(str(output), text)
        except OSError as err:
            typer.echo(f"error: cannot write `{output}`: {err.strerror or err}\n"
                       f"  = help: name a file in an existing, writable folder", err=True)
            return 2
    elif lines is not None and _use_color():
        from rich.console import Console

        Console(highlight=False, soft_wrap=True).print(to_rich(lines), end="")
    else:
        sys.stdout.write(text)
    if crashed or any(r.internal_error for r in results):
        return 3
    if any(r.input_error for r in results):
        return 2
    return 0 if all(r.verdict is Status3.PROVED for r in results) else 1


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
    where = traceback.extract_tb(sys.exc_info()[2])[-1]
    exc = sys.exc_info()[1]
    sys.stderr.write(
        f"error[FX-INT-001]: internal error while checking {path}: {type(exc).__name__}: {exc}\n"
        f"  = note: at {os.path.basename(where.filename)}:{where.lineno} in {where.name}\n"
        f"  = help: this is a bug in fxverify; please report it with the policy that triggered it\n")


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
def explain(code: str = typer.Argument(..., help="A code such as FX-ORD-002.")) -> None:
    """Print the rule behind a diagnostic code."""
    from fxverify.diagnostics.codes import REGISTRY

    c = REGISTRY.get(code.upper())
    if c is None:
        import difflib

        near = difflib.get_close_matches(code.upper(), REGISTRY, n=1)
        typer.echo(f"error: unknown code `{code}`" + (f"; did you mean `{near[0]}`?" if near else ""), err=True)
        raise typer.Exit(2)
    typer.echo(f"{c.code} ({c.family}, {c.severity.value}): {c.title}\n\n{c.rule}")


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
