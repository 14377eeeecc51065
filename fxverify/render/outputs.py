"""The outputs of one ``fxverify check`` run: which formats go where, and their texts.

Takes the ``--format`` values as written (``FMT`` for standard output, or ``-o FILE``; ``FMT=PATH``
for another output of the same run, repeatable) and a ``gate.Report``; produces the list of
``Output``s and each one's text. One run can so write SARIF for code scanning, Markdown for the job
summary and annotations for the log without checking twice. Emits FX-USE-005 (a format that does
not exist) and FX-USE-002 (two formats for standard output, or two outputs to one file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic, nearest
from fxverify.gate.report import Report

#: The formats of ``fxverify check`` (specs/output.md).
FORMATS = ("text", "json", "sarif", "junit", "github", "markdown", "html", "csv")


@dataclass(frozen=True)
class Output:
    """One output of a run: its format, and its file (``None``: standard output)."""

    fmt: str
    path: str | None = None


@dataclass(frozen=True)
class RenderOptions:
    """What changes a format's text besides the report: ``quiet`` (text: failures only),
    ``junit_per_obligation`` (JUnit: one test case per obligation instead of per family key) and
    ``elsewhere`` (GitHub annotations: where the full report of this run went, for the line that
    counts the annotations left out), ``pictures`` (Markdown and SARIF: the link to the folder of
    trace pictures of ``--pictures``, as ``render.pictures.picture_link`` makes it)."""

    quiet: bool = False
    junit_per_obligation: bool = False
    elsewhere: tuple[str, ...] = ()
    pictures: str | None = None


def parse_outputs(values: list[str], output: str | None) -> tuple[list[Output], list[Diagnostic]]:
    """The outputs ``--format`` values ask for (``text`` on standard output when none, or on
    ``output`` with ``-o``); the main one (standard output or ``-o``) comes first. Returns the
    outputs and the problems (FX-USE-005, FX-USE-002)."""
    problems: list[Diagnostic] = []
    main: list[str] = []
    extra: list[Output] = []
    for v in values:
        fmt, eq, path = v.partition("=")
        fmt = fmt.strip().lower()
        if fmt not in FORMATS:
            near = nearest(fmt, FORMATS)
            problems.append(diagnostic(codes.USE_005, f"`--format {v}`: `{fmt}` is not a format" +
                                       (f"; did you mean `{near}`?" if near else ""),
                                       help="formats: " + ", ".join(FORMATS) + "; write FMT=PATH to also write FMT to PATH"))
        elif eq and not path:
            problems.append(diagnostic(codes.USE_005, f"`--format {v}` names no file after `=`",
                                       help=f"write `--format {fmt}=PATH`, or `--format {fmt}` for standard output"))
        elif eq:
            extra.append(Output(fmt, path))
        else:
            main.append(fmt)
    if len(main) > 1:
        problems.append(diagnostic(codes.USE_002, f"only one format goes to {'`-o`' if output else 'standard output'}, "
                                   f"not {', '.join(f'`{m}`' for m in main)}",
                                   help="write the others to files: `--format sarif=fxverify.sarif`"))
    outs = [Output(main[0] if main else "text", output), *extra]
    seen: dict[str, str] = {}
    for o in outs:
        if o.path is None:
            continue
        real = os.path.realpath(o.path)
        if real in seen:
            problems.append(diagnostic(codes.USE_002, f"two outputs write `{o.path}` ({seen[real]} and {o.fmt})",
                                       help="give each format a file of its own"))
        seen[real] = o.fmt
    return outs, problems


def render(report: Report, fmt: str, options: RenderOptions = RenderOptions()) -> tuple[str, list | None]:
    """The report's text in ``fmt``; for ``text`` also the styled lines (for a terminal)."""
    if fmt == "text":
        from fxverify.render.text import render_report, to_plain

        lines = render_report(report, options.quiet)
        return to_plain(lines), lines
    if fmt == "json":
        from fxverify.render.json import report_to_json

        return report_to_json(report), None
    if fmt == "sarif":
        from fxverify.render.sarif import report_to_sarif

        return report_to_sarif(report, options.pictures), None
    if fmt == "html":
        from fxverify.render.html import report_to_html

        return report_to_html(report), None
    if fmt == "junit":
        from fxverify.render.junit import report_to_junit

        return report_to_junit(report, per_obligation=options.junit_per_obligation), None
    if fmt == "github":
        from fxverify.render.github import report_to_github

        return report_to_github(report, elsewhere=options.elsewhere), None
    if fmt == "csv":
        from fxverify.render.csv import report_to_csv

        return report_to_csv(report), None
    from fxverify.render.markdown import report_to_markdown

    return report_to_markdown(report, options.pictures), None


def describe(o: Output, environ: dict[str, str] | None = None) -> str:
    """Where output ``o`` went, for a reader of the annotations: the job summary when its file is
    ``$GITHUB_STEP_SUMMARY``, else the file and its format."""
    env = os.environ if environ is None else environ
    summary = env.get("GITHUB_STEP_SUMMARY")
    if o.path is not None and summary and os.path.realpath(o.path) == os.path.realpath(summary):
        return "the job summary"
    return f"`{o.path}` ({o.fmt})" if o.path is not None else f"standard output ({o.fmt})"


def run_link(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """In a GitHub Actions job, the address of the workflow run (its log and job summary), from
    the variables the runner sets (GitHub docs, "Variables": ``GITHUB_SERVER_URL``,
    ``GITHUB_REPOSITORY``, ``GITHUB_RUN_ID``); else nothing."""
    env = os.environ if environ is None else environ
    server, repo, run = (env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return (f"the workflow run {server}/{repo}/actions/runs/{run}",) if server and repo and run else ()
