"""The trace pictures of a run, as files (``fxverify check --pictures DIR``).

Takes a ``gate.Report``; produces the SVG swimlane of every shown finding that has a trace
(``render.swimlane``), named ``finding-N-CODE.svg`` with ``N`` counting those findings in report
order (the order of the Markdown and SARIF reports, which link them by these names), plus an
``index.json`` that lists them and marks the folder as fxverify's, so that a later run may
replace it as a whole. Output is deterministic. Emits no diagnostics.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from fxverify import __version__
from fxverify.diagnostics.model import Diagnostic
from fxverify.gate.report import Report
from fxverify.render.swimlane import trace_to_svg

#: What a pictures folder holds: its index and the pictures.
PICTURE_NAME = re.compile(r"index\.json|finding-\d+-FX-[A-Z]+-\d{3}\.svg")
#: The marker file of a pictures folder (``atomic.foreign_entries``).
INDEX = "index.json"


def traced(report: Report) -> list[tuple[str, Diagnostic]]:
    """``(policy path, diagnostic)`` of every shown finding (not baselined) that has a trace, in
    report order."""
    return [(r.path, d) for r in report.results for d in r.diagnostics if not d.baselined and d.trace is not None]


def picture_names(report: Report) -> dict[int, str]:
    """The picture file name of each traced finding, keyed by ``id()`` of its diagnostic (the
    renderers look them up while walking the report)."""
    return {id(d): f"finding-{n}-{d.code}.svg" for n, (_p, d) in enumerate(traced(report), 1)}


def picture_files(report: Report) -> dict[str, str]:
    """File name -> text of every picture of ``report``, and ``index.json``."""
    names = picture_names(report)
    files = {names[id(d)]: trace_to_svg(d.trace, d.message) for _p, d in traced(report)}
    index = {"fxverify": __version__, "pictures": [{"file": names[id(d)], "policy": p, "code": d.code,
                                                    "obligation": d.obligation, "message": d.message}
                                                   for p, d in traced(report)]}
    files[INDEX] = json.dumps(index, indent=2, sort_keys=True) + "\n"
    return files


def picture_link(fmt: str, pictures: str | os.PathLike | None, output: str | os.PathLike | None) -> str | None:
    """How a report in ``fmt`` links the pictures folder ``pictures`` (``None``: no pictures):
    Markdown relative to the folder of the report file ``output`` (the current folder for
    standard output), so the links work where the report is read; SARIF as the folder was given,
    like the policy paths (relative to the current folder, the repository root in CI)."""
    if pictures is None:
        return None
    if fmt == "markdown":
        base = os.path.dirname(os.path.abspath(output)) if output is not None else os.getcwd()
        return Path(os.path.relpath(os.path.abspath(pictures), base)).as_posix()
    return str(pictures)


def write_pictures(report: Report, folder: str) -> Diagnostic | None:
    """Write the trace pictures of ``report`` (``picture_files``) into ``folder``, replaced as a
    whole (``atomic.replace_dir``). Returns ``None``, or FX-IO-001 when the folder cannot be written."""
    from fxverify.atomic import replace_dir
    from fxverify.diagnostics import codes
    from fxverify.diagnostics.model import diagnostic

    files = picture_files(report)

    def fill(tmp: str) -> None:
        for name, body in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
                fh.write(body)
    try:
        replace_dir(folder, fill)
    except OSError as err:
        return diagnostic(codes.IO_001, f"cannot write `--pictures {folder}`: {err.strerror or err}",
                          help="name a folder you can write")
    return None
