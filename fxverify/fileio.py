"""Reading input files without blocking: the one reader of policies, includes, baselines, cache
dependencies and generator inputs.

Takes a path and a byte limit; returns the file's bytes. The file is opened with ``O_NONBLOCK``
and checked with ``fstat`` on the open descriptor, so a FIFO, a socket or a device such as
``/dev/zero`` is refused before any read (opening a FIFO for reading would otherwise wait for a
writer forever, and a device may never end), with no window between the check and the read.
Emits no diagnostics; callers turn the ``OSError`` into their own code, with ``read_hint`` for
its help text.
"""

from __future__ import annotations

import errno
import os
import stat


class NotRegularFile(OSError):
    """The path names a FIFO, socket, device or folder, not a regular file (``errno`` EINVAL, or
    EISDIR for a folder)."""


class NotUtf8(ValueError):
    """A file's bytes are not UTF-8 (``decode_utf8``): ``offset`` is the first bad byte's offset
    in bytes and ``byte`` its value; ``at`` is its offset in characters of ``shown``, the text
    decoded with U+FFFD for each bad byte, which is only good for quoting the line."""

    def __init__(self, shown: str, at: int, offset: int, byte: int) -> None:
        super().__init__(f"byte 0x{byte:02x} at byte offset {offset} is not UTF-8")
        self.shown, self.at, self.offset, self.byte = shown, at, offset, byte

    @property
    def found(self) -> str:
        """``byte 0xff at byte offset 9``: what a diagnostic's note says was found."""
        return f"byte 0x{self.byte:02x} at byte offset {self.offset}"


def decode_utf8(data: bytes) -> str:
    """``data`` decoded as UTF-8. Raises ``NotUtf8``, which locates the first bad byte so that a
    caller can underline it in its diagnostic."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        shown = data.decode("utf-8", errors="replace")
        raise NotUtf8(shown, len(data[:err.start].decode("utf-8")), err.start, data[err.start]) from None


class TooLarge(OSError):
    """The file holds more than the caller's limit; ``size`` is its size in bytes (``fstat``)."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, over the limit of {limit} bytes", path)
        self.size, self.limit = size, limit


def read_regular(path: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` bytes (``None``: no limit).
    Raises ``NotRegularFile`` for anything but a regular file, ``TooLarge`` when the file is longer
    than ``limit``, and ``OSError`` for every other failure (missing, unreadable)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL
            raise NotRegularFile(kind, "not a regular file", path)
        if limit is not None and st.st_size > limit:
            raise TooLarge(path, st.st_size, limit)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
        if limit is not None and len(data) > limit:  # grew while we read it
            raise TooLarge(path, len(data), limit)
        return data
    finally:
        os.close(fd)


def read_hint(err: OSError, shown: str) -> str | None:
    """The help for a file ``shown`` (as the user named it) that exists but could not be read,
    by the ``errno`` of open(2); ``None`` when the error says nothing more specific."""
    if err.errno == errno.ELOOP:
        return f"`{shown}` is a symbolic link that leads back to itself (a link loop); point it at a real file"
    if err.errno in (errno.EACCES, errno.EPERM):
        return f"this user may not read `{shown}`; make it readable (`chmod u+r`) or run as its owner"
    if err.errno == errno.ENOTDIR:
        return f"a folder on the path `{shown}` is a file; check the path"
    return None
