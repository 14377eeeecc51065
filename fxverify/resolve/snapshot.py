"""Where resolution reads its files: this machine's disk, or a snapshot of another machine's.

Takes paths as the loader names them (the root policy and each include, relative to the including
file); produces their bytes, their real paths and the repository root. ``DISK`` reads this
machine's files (``fileio.read_regular``, ``os.path.realpath``, ``repo_root``). A
``FileSnapshot`` holds what the machine that runs the gate read, so a worker elsewhere (a Dask
cluster, ``check --executor``) resolves the same policy to the same IR, byte for byte, with the
same spans and the same FX-NAM-003/004 and FX-LIM-001 diagnostics, without seeing that disk. A
path the snapshot lacks raises ``NotInSnapshot`` (not an ``OSError``, so no loader turns it into a
diagnostic): the worker names the path, the gate adds it (``FileSnapshot.add``) and asks again.
Emits no diagnostics.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Protocol

from fxverify.fileio import NotRegularFile, TooLarge, read_regular


class FileSource(Protocol):
    """The three questions resolution asks about files (``resolve.files``)."""

    def read(self, path: str, limit: int | None) -> bytes:
        """The bytes of the regular file ``path`` (``fileio.read_regular``'s contract and errors)."""
        ...

    def realpath(self, path: str) -> str:
        """``os.path.realpath(path)`` on the machine whose files these are."""
        ...

    def repo_root(self, path: str) -> str:
        """The repository root of the root policy ``path`` (``repo_root``)."""
        ...


def repo_root(path: str) -> str:
    """The nearest ancestor directory of ``path`` holding ``.git``, else the file's directory."""
    start = os.path.dirname(os.path.realpath(path))
    cur = start
    while True:
        if os.path.exists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return start
        cur = parent


class Disk:
    """This machine's files."""

    def read(self, path: str, limit: int | None) -> bytes:
        """``fileio.read_regular(path, limit)``."""
        return read_regular(path, limit)

    def realpath(self, path: str) -> str:
        """``os.path.realpath(path)``."""
        return os.path.realpath(path)

    def repo_root(self, path: str) -> str:
        """``repo_root(path)``."""
        return repo_root(path)


#: The disk of the machine this process runs on.
DISK = Disk()


class NotInSnapshot(Exception):
    """Resolution asked for ``path``, which the snapshot does not hold yet."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


@dataclass(frozen=True)
class FileEntry:
    """One path as the gate's machine saw it: its real path and either its ``data`` or the
    error reading it gave (``kind`` ``not-regular``, ``too-large`` or ``os``, with ``errno``,
    ``strerror`` and, for ``too-large``, the file's ``size`` in bytes)."""

    real: str
    data: bytes | None = None
    kind: str = ""
    errno: int = 0
    strerror: str = ""
    size: int = 0


@dataclass
class FileSnapshot:
    """The files one policy's resolution reads, taken on the gate's machine: ``root`` is the
    policy path as named, ``repo`` its repository root, ``limit`` the byte limit every file was
    read with (``Limits.max_file_bytes``) and ``files`` each path read so far."""

    root: str
    repo: str
    limit: int | None
    files: dict[str, FileEntry] = field(default_factory=dict)

    @classmethod
    def take(cls, path: str, limit: int | None, source: FileSource = DISK) -> FileSnapshot:
        """A snapshot holding ``path`` (read from ``source``); includes are added as they are asked for."""
        snap = cls(path, source.repo_root(path), limit)
        snap.add(path, source)
        return snap

    def add(self, path: str, source: FileSource = DISK) -> None:
        """Read ``path`` from ``source`` into the snapshot, or record why it cannot be read."""
        real = source.realpath(path)
        try:
            self.files[path] = FileEntry(real, source.read(path, self.limit))
        except NotRegularFile as err:
            self.files[path] = FileEntry(real, None, "not-regular", err.errno or 0, err.strerror or "")
        except TooLarge as err:
            self.files[path] = FileEntry(real, None, "too-large", err.errno or 0, err.strerror or "", err.size)
        except OSError as err:
            self.files[path] = FileEntry(real, None, "os", err.errno or 0, err.strerror or str(err))

    def texts(self) -> dict[str, bytes]:
        """The bytes of every path read without error."""
        return {p: e.data for p, e in self.files.items() if e.data is not None}

    def digest(self) -> str:
        """SHA-256 over everything the snapshot holds: two snapshots with one digest resolve to one IR."""
        h = hashlib.sha256(f"{self.root}\0{self.repo}\0{self.limit}\0".encode())
        for p, e in sorted(self.files.items()):
            h.update(f"{p}\0{e.real}\0{e.kind}\0{e.errno}\0{e.strerror}\0{e.size}\0".encode())
            h.update(hashlib.sha256(e.data).digest() if e.data is not None else b"-")
        return h.hexdigest()

    # -- FileSource ---------------------------------------------------------------------------
    def _entry(self, path: str) -> FileEntry:
        e = self.files.get(path)
        if e is None:
            raise NotInSnapshot(path)
        return e

    def read(self, path: str, limit: int | None) -> bytes:
        """The bytes the gate's machine read for ``path``, or the error it got, raised again."""
        e = self._entry(path)
        if limit != self.limit:
            raise NotInSnapshot(path)  # INVARIANT: the worker resolves with the gate's limits
        if e.data is not None:
            return e.data
        if e.kind == "not-regular":
            raise NotRegularFile(e.errno, e.strerror, path)
        if e.kind == "too-large":
            assert limit is not None
            raise TooLarge(path, e.size, limit)
        raise OSError(e.errno, e.strerror, path)

    def realpath(self, path: str) -> str:
        """The real path of ``path`` on the gate's machine."""
        return self._entry(path).real

    def repo_root(self, path: str) -> str:
        """The repository root of the root policy."""
        if path != self.root:
            raise NotInSnapshot(path)
        return self.repo


class Recording:
    """Reads from ``source`` (this machine's disk by default) and keeps everything it read in
    ``snapshot``, so a policy resolved here can be resolved again elsewhere from the same bytes."""

    def __init__(self, snapshot: FileSnapshot, source: FileSource = DISK) -> None:
        self.snapshot, self.source = snapshot, source

    def _have(self, path: str) -> None:
        if path not in self.snapshot.files:
            self.snapshot.add(path, self.source)

    def read(self, path: str, limit: int | None) -> bytes:
        """The bytes of ``path``, read once and kept."""
        self._have(path)
        return self.snapshot.read(path, limit)

    def realpath(self, path: str) -> str:
        """The real path of ``path``, kept with its bytes."""
        self._have(path)
        return self.snapshot.realpath(path)

    def repo_root(self, path: str) -> str:
        """The snapshot's repository root (the root policy's)."""
        return self.snapshot.repo_root(path)
