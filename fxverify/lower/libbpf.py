"""A thin ctypes binding over ``libbpf.so.1``: open, load, share maps, fill maps, test-run.

Takes ELF object paths and byte buffers; produces file descriptors, verifier logs and test-run
results. Only the libbpf 1.x API documented in ``libbpf.h``/``bpf.h`` is used (functions return
``NULL``/negative values and set ``errno`` on error, the libbpf 1.0 convention). Raises
``BpfUnavailable`` when the library or the ``bpf()`` system call cannot be used, and ``BpfError``
for a failed call. Emits no diagnostics.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

from fxverify.errors import FxError

_LIBRARY: ctypes.CDLL | None = None


class BpfUnavailable(FxError):
    """libbpf is missing, or the kernel refuses ``bpf()`` (no permission, no BPF support)."""


class BpfError(FxError):
    """A libbpf call failed; ``errno`` is the positive error number."""

    def __init__(self, what: str, errno: int) -> None:
        super().__init__(f"{what}: {os.strerror(errno)} (errno {errno})")
        self.errno = errno


class _TestRunOpts(ctypes.Structure):
    """``struct bpf_test_run_opts`` (libbpf 1.x ``bpf.h``), field for field."""

    _fields_ = [("sz", ctypes.c_size_t), ("data_in", ctypes.c_void_p), ("data_out", ctypes.c_void_p),
                ("data_size_in", ctypes.c_uint32), ("data_size_out", ctypes.c_uint32),
                ("ctx_in", ctypes.c_void_p), ("ctx_out", ctypes.c_void_p),
                ("ctx_size_in", ctypes.c_uint32), ("ctx_size_out", ctypes.c_uint32),
                ("retval", ctypes.c_uint32), ("repeat", ctypes.c_int), ("duration", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("cpu", ctypes.c_uint32), ("batch_size", ctypes.c_uint32)]


class _BatchOpts(ctypes.Structure):
    """``struct bpf_map_batch_opts`` (libbpf ``bpf.h``), field for field."""

    _fields_ = [("sz", ctypes.c_size_t), ("elem_flags", ctypes.c_uint64), ("flags", ctypes.c_uint64)]


#: ``ring_buffer_sample_fn`` (libbpf ``libbpf.h``): ``int (*)(void *ctx, void *data, size_t size)``.
_SAMPLE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


def lib() -> ctypes.CDLL:
    """Load ``libbpf.so.1`` once, declare the signatures used here and silence libbpf's own
    printing (``libbpf_set_print(NULL)``). Returns the loaded library; raises ``BpfUnavailable``
    when it is not installed."""
    global _LIBRARY
    if _LIBRARY is not None:
        return _LIBRARY
    name = "libbpf.so.1"
    try:
        libbpf_so = ctypes.CDLL(name, use_errno=True)
    except OSError:
        found = ctypes.util.find_library("bpf")
        if found is None:
            raise BpfUnavailable("libbpf.so.1 is not installed (Debian/Ubuntu package libbpf1)") from None
        libbpf_so = ctypes.CDLL(found, use_errno=True)
    vp, i, u32, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_size_t
    sigs = {
        "libbpf_set_print": (vp, [vp]),
        "bpf_object__open_file": (vp, [ctypes.c_char_p, vp]),
        "bpf_object__load": (i, [vp]),
        "bpf_object__close": (None, [vp]),
        "bpf_object__next_program": (vp, [vp, vp]),
        "bpf_object__next_map": (vp, [vp, vp]),
        "bpf_program__name": (ctypes.c_char_p, [vp]),
        "bpf_program__set_autoload": (i, [vp, ctypes.c_bool]),
        "bpf_program__set_log_level": (i, [vp, u32]),
        "bpf_program__set_log_buf": (i, [vp, ctypes.c_char_p, sz]),
        "bpf_program__fd": (i, [vp]),
        "bpf_map__name": (ctypes.c_char_p, [vp]),
        "bpf_map__fd": (i, [vp]),
        "bpf_map__reuse_fd": (i, [vp, i]),
        "bpf_map__set_pin_path": (i, [vp, ctypes.c_char_p]),
        "bpf_obj_get": (i, [ctypes.c_char_p]),
        "bpf_map_update_elem": (i, [i, vp, vp, ctypes.c_uint64]),
        "bpf_map_lookup_elem": (i, [i, vp, vp]),
        "bpf_map_update_batch": (i, [i, vp, vp, ctypes.POINTER(u32), ctypes.POINTER(_BatchOpts)]),
        "bpf_prog_test_run_opts": (i, [i, ctypes.POINTER(_TestRunOpts)]),
        "ring_buffer__new": (vp, [i, _SAMPLE_FN, vp, vp]),
        "ring_buffer__consume": (i, [vp]),
        "ring_buffer__free": (None, [vp]),
    }
    for fn, (res, args) in sigs.items():
        f = getattr(libbpf_so, fn)
        f.restype, f.argtypes = res, args
    libbpf_so.libbpf_set_print(None)
    _LIBRARY = libbpf_so
    return libbpf_so


def _last_errno() -> int:
    """The ``errno`` the last libbpf call left, or 1 (EPERM) when it left none."""
    return ctypes.get_errno() or 1


def _errno_of(rc: int) -> int:
    """libbpf 1.x returns ``-errno``; fall back to ``errno`` for plain ``-1``."""
    return -rc if rc < -1 else _last_errno()


class BpfObject:
    """One opened ELF object (``bpf_object__open_file``). Close it with ``close`` (or use
    ``with``). Raises ``BpfError`` when ``path`` cannot be opened as a BPF object."""

    def __init__(self, path: str) -> None:
        libbpf_so = lib()
        ctypes.set_errno(0)
        self.ptr = libbpf_so.bpf_object__open_file(path.encode(), None)
        if not self.ptr:
            raise BpfError(f"cannot open `{path}`", _last_errno())
        # INVARIANT: libbpf keeps only a pointer to each log buffer until load; holding them here
        # keeps them alive that long.
        self._bufs: list = []
        # The objects pin their shared maps by name (LIBBPF_PIN_BY_NAME) for the generated loader;
        # fxverify's own loads share maps by fd and must leave nothing in the bpf filesystem.
        for m in self.maps().values():
            libbpf_so.bpf_map__set_pin_path(m, None)

    def __enter__(self) -> "BpfObject":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the object: its programs and the maps it created are released by the kernel
        once no other object reuses them."""
        if self.ptr:
            lib().bpf_object__close(self.ptr)
            self.ptr = None

    def _walk(self, next_fn: str, name_fn: str) -> dict[str, int]:
        """Name -> pointer of every item the libbpf iterator ``next_fn`` yields, in ELF order."""
        libbpf_so, out, item = lib(), {}, None
        while True:
            item = getattr(libbpf_so, next_fn)(self.ptr, item)
            if not item:
                return out
            out[getattr(libbpf_so, name_fn)(item).decode()] = item

    def programs(self) -> dict[str, int]:
        """Program name -> ``bpf_program`` pointer, in ELF order."""
        return self._walk("bpf_object__next_program", "bpf_program__name")

    def maps(self) -> dict[str, int]:
        """Map name -> ``bpf_map`` pointer."""
        return self._walk("bpf_object__next_map", "bpf_map__name")

    def only(self, name: str, log_level: int, log_size: int) -> ctypes.Array:
        """Load only program ``name`` (others not autoloaded) and capture its verifier log at
        ``log_level`` (1 instructions, 2 more detail, 4 statistics: ``BPF_LOG_*`` in bpf.h) into a
        buffer of ``log_size`` bytes, which is returned."""
        libbpf_so = lib()
        buf = ctypes.create_string_buffer(log_size)
        for pname, p in self.programs().items():
            libbpf_so.bpf_program__set_autoload(p, pname == name)
            if pname == name:
                libbpf_so.bpf_program__set_log_level(p, log_level)
                libbpf_so.bpf_program__set_log_buf(p, buf, log_size)
        self._bufs.append(buf)
        return buf

    def reuse(self, fds: dict[str, int]) -> None:
        """Before load: make maps of these names use existing map fds (shared across objects,
        ``bpf_map__reuse_fd``). Raises ``BpfError`` when libbpf refuses one."""
        libbpf_so = lib()
        for name, m in self.maps().items():
            if name in fds:
                rc = libbpf_so.bpf_map__reuse_fd(m, fds[name])
                if rc:
                    raise BpfError(f"cannot reuse map `{name}`", _errno_of(rc))

    def load(self) -> int:
        """``bpf_object__load``: create maps and load programs. Returns 0 or a positive errno."""
        ctypes.set_errno(0)
        rc = lib().bpf_object__load(self.ptr)
        return 0 if rc == 0 else _errno_of(rc)

    def prog_fd(self, name: str) -> int:
        """File descriptor of loaded program ``name`` (negative when it is not loaded). Raises
        ``KeyError`` for a name the object does not hold."""
        return lib().bpf_program__fd(self.programs()[name])

    def map_fds(self) -> dict[str, int]:
        """Map name -> file descriptor (after load; negative for a map not created)."""
        libbpf_so = lib()
        return {n: libbpf_so.bpf_map__fd(m) for n, m in self.maps().items()}


class RingBuffer:
    """A reader of one ``BPF_MAP_TYPE_RINGBUF`` map (``ring_buffer__new`` on its file descriptor).
    ``drain`` returns the records written since the last call, oldest first; close it with
    ``close``. Raises ``BpfError`` when libbpf cannot map the buffer."""

    def __init__(self, fd: int) -> None:
        self._records: list[bytes] = []

        def sample(_ctx: int | None, data: int | None, size: int) -> int:
            self._records.append(ctypes.string_at(data, size) if data else b"")
            return 0

        # INVARIANT: libbpf calls back through this pointer until ring_buffer__free; holding it
        # here keeps the ctypes thunk alive that long.
        self._cb = _SAMPLE_FN(sample)
        ctypes.set_errno(0)
        self.ptr = lib().ring_buffer__new(fd, self._cb, None, None)
        if not self.ptr:
            raise BpfError("cannot map the ring buffer", _last_errno())

    def drain(self) -> list[bytes]:
        """Every record available now (``ring_buffer__consume``), in the order they were written.
        Raises ``BpfError`` when consuming fails."""
        rc = lib().ring_buffer__consume(self.ptr)
        if rc < 0:
            raise BpfError("cannot read the ring buffer", _errno_of(rc))
        out, self._records = self._records, []
        return out

    def close(self) -> None:
        """Unmap the buffer (``ring_buffer__free``); safe to call twice."""
        if self.ptr:
            lib().ring_buffer__free(self.ptr)
            self.ptr = None


def update_batch(fd: int, keys: bytes, values: bytes, count: int) -> None:
    """Write ``count`` entries at once (``BPF_MAP_UPDATE_BATCH``, kernel 5.6+); ``keys`` and
    ``values`` are packed arrays of ``count`` equal-sized keys and values. Falls back to one update
    per entry when batching is refused; raises ``BpfError`` when an update fails."""
    libbpf_so = lib()
    if count == 0:
        return
    kbuf, vbuf = ctypes.create_string_buffer(keys, len(keys)), ctypes.create_string_buffer(values, len(values))
    n = ctypes.c_uint32(count)
    opts = _BatchOpts(ctypes.sizeof(_BatchOpts), 0, 0)
    ctypes.set_errno(0)
    rc = libbpf_so.bpf_map_update_batch(fd, kbuf, vbuf, ctypes.byref(n), ctypes.byref(opts))
    if rc == 0 and n.value == count:
        return
    ks, vs = len(keys) // count, len(values) // count
    for i in range(count):
        update(fd, keys[i * ks:(i + 1) * ks], values[i * vs:(i + 1) * vs])


def update(fd: int, key: bytes, value: bytes) -> None:
    """``bpf_map_update_elem(fd, key, value, BPF_ANY)``. Raises ``BpfError``."""
    ctypes.set_errno(0)
    rc = lib().bpf_map_update_elem(fd, key, value, 0)
    if rc:
        raise BpfError("map update failed", _errno_of(rc))


def lookup(fd: int, key: bytes, value_size: int) -> bytes | None:
    """``bpf_map_lookup_elem``: the ``value_size`` value bytes, or ``None`` when the key is absent
    (or the lookup fails)."""
    out = ctypes.create_string_buffer(value_size)
    ctypes.set_errno(0)
    rc = lib().bpf_map_lookup_elem(fd, key, out)
    return None if rc else out.raw


def _test_run(prog_fd: int, **fields: object) -> _TestRunOpts:
    """``bpf_prog_test_run_opts`` with the given ``struct bpf_test_run_opts`` fields set; returns
    the options as the kernel filled them. Raises ``BpfError`` when the run itself fails."""
    opts = _TestRunOpts()
    opts.sz = ctypes.sizeof(_TestRunOpts)
    for name, value in fields.items():
        setattr(opts, name, value)
    ctypes.set_errno(0)
    rc = lib().bpf_prog_test_run_opts(prog_fd, ctypes.byref(opts))
    if rc:
        raise BpfError("BPF_PROG_TEST_RUN failed", _errno_of(rc))
    return opts


def test_run(prog_fd: int, ctx: bytes) -> tuple[int, bytes]:
    """Run a syscall program once with ``BPF_PROG_TEST_RUN`` on context ``ctx``. The kernel copies
    the context back into the input buffer (``bpf_prog_test_run_syscall`` refuses ``ctx_out``).
    Returns ``(retval, ctx after the run)``. Raises ``BpfError`` when the run itself fails."""
    cin = ctypes.create_string_buffer(ctx, len(ctx))
    opts = _test_run(prog_fd, ctx_in=ctypes.cast(cin, ctypes.c_void_p), ctx_size_in=len(ctx))
    return opts.retval, cin.raw


def test_run_frame(prog_fd: int, frame: bytes) -> tuple[int, bytes]:
    """Run an XDP or tc program once with ``BPF_PROG_TEST_RUN`` on the packet ``frame`` (an
    Ethernet frame; ``bpf_prog_test_run_xdp``/``bpf_prog_test_run_skb`` in net/bpf/test_run.c).
    Returns ``(retval, the frame after the run)``: the action and the bytes as the program left
    them. Raises ``BpfError`` when the run itself fails."""
    din = ctypes.create_string_buffer(frame, len(frame))
    dout = ctypes.create_string_buffer(len(frame) + 256)
    opts = _test_run(prog_fd, data_in=ctypes.cast(din, ctypes.c_void_p), data_size_in=len(frame),
                     data_out=ctypes.cast(dout, ctypes.c_void_p), data_size_out=len(dout))
    return opts.retval, dout.raw[:opts.data_size_out]


def obj_get(path: str) -> int:
    """File descriptor of the program or map pinned at ``path`` in a bpf filesystem
    (``bpf_obj_get``). Raises ``BpfError`` when nothing is pinned there."""
    ctypes.set_errno(0)
    fd = lib().bpf_obj_get(path.encode())
    if fd < 0:
        raise BpfError(f"nothing pinned at `{path}`", _errno_of(fd))
    return fd


def bpf_available() -> str | None:
    """``None`` when libbpf loads and the kernel lets this process create a map; otherwise the
    reason (used to skip kernel steps and tests honestly). Never raises."""
    try:
        lib()
    except BpfUnavailable as err:
        return str(err)
    # BPF_MAP_CREATE (command 0) of a 1-entry array through the raw syscall (bpf(2); the layout of
    # union bpf_attr in include/uapi/linux/bpf.h, zero past the fields used). __NR_bpf is 321 on
    # x86_64 (arch/x86/entry/syscalls/syscall_64.tbl) and 280 on aarch64 (asm-generic/unistd.h).
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 30)()
    attr[0], attr[1], attr[2], attr[3] = 2, 4, 4, 1  # map_type ARRAY, key 4, value 4, 1 entry
    nr = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
    if nr is None:
        return None  # unknown syscall number: let the real load report
    fd = libc.syscall(nr, 0, ctypes.byref(attr), ctypes.sizeof(attr))
    if fd < 0:
        return f"the bpf() system call is refused: {os.strerror(ctypes.get_errno())}"
    os.close(fd)
    return None
