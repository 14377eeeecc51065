"""Atomic file and folder replacement, shared by every writer of reports, baselines, cache entries
and output folders (``lower -o``, ``smt -o``).

Takes a path and bytes (or a function that fills a folder); produces the file or folder through a
temporary one beside it and a rename (POSIX ``rename`` is atomic within one file system), so a
reader, or a concurrent run, never sees half of it. Emits no diagnostics; raises ``OSError`` on
I/O failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable

from fxverify.fileio import read_regular

#: The largest marker file (``manifest.json``, ``index.json``) read to tell a previous output (bytes).
MAX_MARKER_BYTES = 16 << 20


def replace_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; the temporary file is removed on any failure. The
    file gets the mode a plain ``open`` would give (0666 less the umask), not mkstemp's 0600.
    Raises ``OSError`` (for example a missing or read-only folder)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".fxverify-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (``replace_atomically``). A path that exists
    and is not a regular file (a terminal, ``/dev/stdout``, a pipe) is written in place instead of
    being replaced. Raises ``OSError`` on I/O failure (``IsADirectoryError`` for a folder)."""
    if os.path.exists(path) and not os.path.isfile(path):
        if os.path.isdir(path):
            raise IsADirectoryError(21, "is a directory", path)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    replace_atomically(path, text.encode("utf-8"))


def stage_dir(out_dir: str, fill: Callable[[str], None]) -> str:
    """A new temporary sibling folder of ``out_dir``, filled by ``fill(tmp)``; ``out_dir`` itself
    is untouched. ``swap_in`` then puts it in place, or ``discard`` removes it (a command that
    checks its output before publishing it, such as ``lower --kernel-verify``). Raises ``OSError``
    on I/O failure, and whatever ``fill`` raises; nothing is left behind."""
    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".fxverify-new-")
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)
    except BaseException:
        discard(tmp)
        raise
    return tmp


def swap_in(staged: str, out_dir: str) -> None:
    """Replace ``out_dir`` by the folder ``staged`` (from ``stage_dir``) by rename (an old
    ``out_dir`` is moved aside first and deleted after): a reader sees either the old folder or
    the complete new one. Raises ``OSError`` on I/O failure, after which ``out_dir`` is as it was
    and ``staged`` is removed."""
    out = os.path.abspath(out_dir)
    try:
        if os.path.isdir(out):
            old = tempfile.mkdtemp(dir=os.path.dirname(out), prefix=".fxverify-old-")
            try:
                os.rename(out, os.path.join(old, "x"))
                try:
                    os.rename(staged, out)
                except BaseException:
                    os.rename(os.path.join(old, "x"), out)  # put the previous output back
                    raise
            finally:
                shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staged, out)
    except BaseException:
        discard(staged)
        raise


def discard(staged: str) -> None:
    """Remove a folder ``stage_dir`` made that will not be published. Never raises."""
    shutil.rmtree(staged, ignore_errors=True)


def replace_dir(out_dir: str, fill: Callable[[str], None]) -> None:
    """Make the folder ``out_dir`` atomically: ``stage_dir`` then ``swap_in``. On any failure the
    temporary folder is removed and ``out_dir`` is as it was. Raises ``OSError`` on I/O failure,
    and whatever ``fill`` raises."""
    swap_in(stage_dir(out_dir, fill), out_dir)


def foreign_entries(out_dir: str, marker: str, ours: re.Pattern[str]) -> list[str]:
    """What in the existing folder ``out_dir`` a command that replaces it as a whole
    (``replace_dir``) did not write, sorted: entries whose names do not match ``ours``, subfolders,
    or everything when the JSON file ``marker`` is missing or has no string ``fxverify`` field (the
    version that wrote it). An empty folder gives ``[]``. Raises ``OSError`` when the folder cannot
    be listed."""
    names = sorted(os.listdir(out_dir))
    if not names:
        return []
    try:
        # Through ``read_regular``: a FIFO or device named like the marker is not ours, and never blocks.
        raw = read_regular(os.path.join(out_dir, marker), MAX_MARKER_BYTES)
        mine = isinstance(json.loads(raw).get("fxverify"), str)
    except (OSError, ValueError, AttributeError, RecursionError):
        mine = False
    if not mine:
        return names
    return [n for n in names if not ours.fullmatch(n) or not os.path.isfile(os.path.join(out_dir, n))]
