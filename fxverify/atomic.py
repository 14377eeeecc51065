"""Atomic file replacement, shared by every writer of reports, baselines and cache entries.

Takes a path and bytes; produces the file, through a temporary file in the same folder and a
rename (POSIX ``rename`` is atomic within one file system), so a reader, or a concurrent run,
never sees half a file. Emits no diagnostics; raises ``OSError`` on I/O failure.
"""

from __future__ import annotations

import os
import tempfile


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
