"""Runs over policy files that check nothing: ``fxverify parse`` (parse and resolve only) and
``fxverify fmt`` (the canonical layout, ``syntax.fmt``).

Takes paths as the user named them (files and folders, found as ``gate.discover`` finds them);
produces a ``Run``: what to print, the problems to show on standard error (with the sources
they point into), and the exit code. Emits FX-USE-001 (no ``.fx`` file), FX-NAM-003 (a file that
cannot be read), FX-IO-001 (a file that cannot be written), and the input diagnostics of
``resolve`` and ``syntax`` (FX-SYN-, FX-NAM-, FX-TYP-, FX-LIM-, FX-SUP-).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from fxverify.atomic import write_text
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, counted, crash, diagnostic
from fxverify.fileio import read_hint, read_regular
from fxverify.gate.discover import fx_files
from fxverify.resolve import load_policy
from fxverify.source import SourceMap
from fxverify.syntax.fmt import format_text
from fxverify.syntax.parse import decode_text


@dataclass
class Run:
    """The outcome of a run: ``stdout`` text, ``problems`` (diagnostics and the sources they
    point into, for standard error) and ``exit_code``."""

    stdout: str = ""
    problems: list[tuple[list[Diagnostic], SourceMap | None]] = field(default_factory=list)
    exit_code: int = 0


def _none_found(paths: list[str]) -> Run:
    return Run(problems=[([diagnostic(codes.USE_001, f"no policy files (*.fx) found in {', '.join(paths)}",
                                      help="name policy files, or folders that hold them")], None)], exit_code=2)


def parse_only(paths: list[str]) -> Run:
    """Parse and resolve each policy of ``paths``: its counts of devices, regions and edges
    (families unrolled), or its input errors (problems, exit 2). A crash is FX-INT-001, exit 3."""
    files = fx_files(paths, fragments=False)
    if not files:
        return _none_found(paths)
    run = Run()
    for f in files:
        sources = SourceMap()
        try:
            policy, diags = load_policy(f, sources)
        except Exception as exc:  # noqa: BLE001 - a bug, reported as FX-INT-001
            run.problems.append(([crash(f, exc)], None))
            run.exit_code = 3
            return run
        if diags:
            run.problems.append((diags, sources))
        if policy is None:
            run.exit_code = 2
            run.stdout += f"{f}: input error\n"
            continue
        run.stdout += (f"{f}: {counted(len(policy.devices), 'device')}, {counted(len(policy.regions), 'region')}, "
                       f"{counted(len(policy.edges), 'edge')}\n")
    return run


def format_files(paths: list[str], check_only: bool = False, diff: bool = False) -> Run:
    """Lay out every ``.fx`` file of ``paths`` (fragments included) canonically. ``check_only``
    writes nothing and lists the files that would change; ``diff`` prints the changes as unified
    diffs. Exit 2 when a file could not be read or parsed, else 1 when ``check_only`` or ``diff``
    found changes, else 0."""
    files = fx_files(paths, fragments=True)
    if not files:
        return _none_found(paths)
    run = Run()
    changed: list[str] = []
    failed = 0
    for f in files:
        try:
            text, diags = decode_text(read_regular(f), f)
        except OSError as err:
            run.problems.append(([diagnostic(codes.NAM_003, f"cannot read `{f}`: {err.strerror or err}",
                                             help=read_hint(err, f) or "name a readable policy file")], None))
            run.exit_code = 2
            failed += 1
            continue
        sources = SourceMap()
        sources.add(f, text)
        out, more = (None, diags) if diags else format_text(text, f)
        if out is None:
            run.problems.append((more, sources))
            run.exit_code = 2
            failed += 1
            continue
        if out == text:
            continue
        changed.append(f)
        if diff:
            run.stdout += "".join(difflib.unified_diff(text.splitlines(True), out.splitlines(True), f, f))
        elif check_only:
            run.stdout += f"would reformat {f}\n"
        else:
            try:
                write_text(f, out)
            except OSError as err:
                run.problems.append(([diagnostic(codes.IO_001, f"cannot write `{f}`: {err.strerror or err}")], None))
                run.exit_code = 2
                continue
            run.stdout += f"reformatted {f}\n"
    verb = "would be reformatted" if check_only or diff else "reformatted"
    run.stdout += (f"{counted(len(changed), 'file')} {verb}, {len(files) - len(changed) - failed} unchanged"
                   + (f", {failed} not read or not parsed" if failed else "") + "\n")
    if run.exit_code == 0 and changed and (check_only or diff):
        run.exit_code = 1
    return run
