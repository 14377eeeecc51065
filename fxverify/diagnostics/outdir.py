"""Whether a command may write its outputs: an output file into its folder (``check -o FILE``,
``check --format FMT=PATH``, ``gen prefill -o FILE``), and an output folder as a whole
(``lower -o DIR``, ``smt -o DIR``).

Takes the folder and a function listing what in it the command did not write
(``atomic.foreign_entries``); returns ``None`` when the folder is missing, empty or a previous
output of the same command, else the diagnostic that refuses it: FX-IO-001 (not a folder, or it
cannot be listed) or FX-IO-002 (it holds the current folder, or files the command did not write).
``unwritable_file`` checks an output file before the command runs: FX-IO-001 for a missing folder
or a path that is a folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic


def unwritable_file(path: str) -> Diagnostic | None:
    """FX-IO-001 when the output file ``path`` cannot be written for a reason known before any work
    is done (its folder does not exist, or ``path`` is a folder), else ``None``. Commands check
    every output with it up front, so a run never ends, after all its work, on a typo in a folder
    name; a write that still fails (permissions, a full disk) is reported when it happens."""
    folder = os.path.dirname(os.path.abspath(path))
    why = (f"no such folder `{os.path.dirname(path) or '.'}`" if not os.path.isdir(folder)
           else "it is a folder" if os.path.isdir(path) else None)
    if why is None:
        return None
    return diagnostic(codes.IO_001, f"cannot write `{path}`: {why}", help="name a file in an existing, writable folder")


def missing_parent(out_dir: str) -> Diagnostic | None:
    """FX-IO-001 when the folder above the output folder ``out_dir`` does not exist or is not a
    folder, else ``None``. A command makes its output folder, not the folders above it: as
    ``unwritable_file`` for an output file, a typo in a parent's name is refused before any work,
    not made into a new tree. The path is taken as written (``nope/../out`` needs ``nope``), as
    the system resolves it."""
    stripped = out_dir.rstrip(os.sep) or out_dir
    parent = os.path.dirname(stripped) or "."
    if os.path.isdir(parent):
        return None
    why = f"`{parent}` is not a folder" if os.path.exists(parent) else f"no such folder `{parent}`"
    return diagnostic(codes.IO_001, f"cannot write `{out_dir}`: {why}",
                      help="name a new folder inside an existing one, or an existing folder")


def refuse_replacing(out_dir: str, foreign: Callable[[str], list[str]], writer: str, command: str,
                     example: str, option: str = "-o") -> Diagnostic | None:
    """The diagnostic refusing to replace ``out_dir``, or ``None`` when it may be replaced (or
    made: a new folder inside an existing one; the folder above it missing is FX-IO-001).

    ``foreign(out_dir)`` lists the entries ``writer`` (``a lowering``) did not write; ``command``
    (``fxverify lower``), ``example`` (a folder name for the hint) and ``option`` (the option that
    named the folder) word the messages."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        return diagnostic(codes.IO_001, f"`{option} {out_dir}` exists and is not a directory", help="name a folder, new or existing")
    if not os.path.isdir(out_dir):
        return missing_parent(out_dir)
    cwd, out = os.path.realpath(os.getcwd()), os.path.realpath(out_dir)
    if cwd == out or cwd.startswith(out + os.sep):
        return diagnostic(codes.IO_002, f"`{option} {out_dir}` holds the current folder; nothing was written",
                          help=f"the output folder is replaced as a whole: name a new folder, such as `{option} {example}`")
    try:
        found = foreign(out_dir)
    except OSError as err:
        return diagnostic(codes.IO_001, f"cannot read `{out_dir}`: {err.strerror or err}", help="name a folder you can write")
    if not found:
        return None
    shown = ", ".join(f"`{n}`" for n in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return diagnostic(codes.IO_002, f"`{option} {out_dir}` holds {shown}, which {writer} did not write; nothing was written",
                      help="the output folder is replaced as a whole: name a new or empty folder, or one a previous "
                           f"`{command}` wrote")


def cannot_write(out_dir: str, err: OSError) -> Diagnostic:
    """FX-IO-001 for an output folder that could not be written (``err`` from ``atomic.replace_dir``)."""
    return diagnostic(codes.IO_001, f"cannot write `{out_dir}`: {err.strerror or err}", help="name a folder you can write")
