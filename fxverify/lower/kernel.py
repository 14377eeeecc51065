"""Load lowered programs into the Linux verifier and run them with BPF_PROG_TEST_RUN.

Takes a lowering directory (``manifest.json``, ``maps.init.json``, ``sourcemap.json`` and the
``.bpf.o`` objects); produces ``ProgramReport`` rows (``verify_dir``: one per program, accepted,
instructions processed, peak states, parsed from the verifier log the way veristat does) and a
``Runtime`` that holds every device's programs loaded with shared maps filled from
``maps.init.json`` (``specs/lowering.md`` sections 7 and 8). Rejected programs get their verifier
log rewritten so C lines point at ``.fx`` spans. Raises ``BpfUnavailable``/``BpfError`` (from
``libbpf``) for environment failures. Emits no diagnostics (``driver`` reports FX-BPF-004).
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.lower import libbpf
from fxverify.lower.plan import DECISIONS, REASONS
from fxverify.lower.targets import ACTIONS, FX_UDP_PORT

# Verifier log statistics (``print_verification_stats`` in kernel/bpf/verifier.c, printed with
# BPF_LOG_STATS); veristat reads the same lines. _C_LINE_INFO matches the BTF line info the
# kernel prints before an instruction at log level 1: "; <C source> @ <file>.bpf.c:<line>".
_STATS_LINE = re.compile(r"processed (\d+) insns \(limit \d+\) max_states_per_insn (\d+) total_states (\d+) "
                    r"peak_states (\d+) mark_read (\d+)")
_TIME_LINE = re.compile(r"verification time (\d+) usec")
_STACK_LINE = re.compile(r"stack depth ([0-9+]+)")
_C_LINE_INFO = re.compile(r"@ ([A-Za-z0-9_.-]+\.bpf\.c):(\d+)\s*$")

#: Verifier log levels (include/linux/bpf_verifier.h): statistics only, and every instruction.
BPF_LOG_STATS = 4
BPF_LOG_LEVEL1 = 1
#: Log buffer sizes in bytes: 64 KiB holds the statistics lines; 16 MiB a full log of a rejected
#: program (the kernel accepts up to UINT_MAX >> 2: ``bpf_verifier_log_attr_valid``, kernel/bpf/log.c).
STATS_LOG_BYTES = 1 << 16
FULL_LOG_BYTES = 16 << 20

#: ``struct fx_event`` (``c/fx_structs.h``, 24 bytes): edge, phase, decision, reason, detail, op.
FX_EVENT = struct.Struct("<6I")
#: ``struct fx_obs`` (``c/fx_structs.h``, 40 bytes): kind, edge, device, decision, reason, a, c, d.
FX_OBS = struct.Struct("<6I2Q")
#: ``FX_OBS_MAP`` (``emit_c``): a map access; ``a`` the map index, ``c`` the key, ``d`` the value.
OBS_MAP = 5
#: Addresses of the frames ``event_frame`` builds: a sender and a receiver, each a MAC, an IPv4 and
#: an IPv6 address and a UDP port (documentation ranges: RFC 7042 MACs, RFC 5737 and RFC 3849).
SENDER = (bytes.fromhex("02000000aa01"), bytes([192, 0, 2, 1]), bytes.fromhex("20010db8000000000000000000000001"), 40001)
RECEIVER = (bytes.fromhex("02000000bb02"), bytes([192, 0, 2, 2]), bytes.fromhex("20010db8000000000000000000000002"), FX_UDP_PORT)


def _ones_sum(data: bytes) -> int:
    """The 16-bit one's complement sum of ``data`` (RFC 1071), padded to an even length."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def event_frame(payload: bytes, ipv6: bool = False, vlan: int | None = None, udp_checksum: bool = True,
                src: tuple = SENDER, dst: tuple = RECEIVER, ip_options: bytes = b"") -> bytes:
    """An Ethernet II frame from ``src`` to ``dst`` carrying ``payload`` (a ``struct fx_event``)
    over UDP: IPv4 (a 20-byte header plus ``ip_options``, a multiple of 4 bytes; valid header
    checksum) or IPv6, with one 802.1Q tag ``vlan`` when given, and a valid UDP checksum (RFC 768;
    ``udp_checksum=False`` sends 0, "none", which IPv4 allows). This is the frame a dputime packet
    program finds its event in (``specs/lowering.md`` section 2)."""
    udp_len = 8 + len(payload)
    ports = struct.pack("!HH", src[3], dst[3])
    if ipv6:
        pseudo = src[2] + dst[2] + struct.pack("!IxxxB", udp_len, 17)
        ip = struct.pack("!IHBB", 6 << 28, udp_len, 17, 64) + src[2] + dst[2]
        ethertype = 0x86DD
    else:
        pseudo = src[1] + dst[1] + struct.pack("!xBH", 17, udp_len)
        hdr = struct.pack("!BBHHHBBH", 0x40 | (5 + len(ip_options) // 4), 0, 20 + len(ip_options) + udp_len, 0, 0,
                          64, 17, 0) + src[1] + dst[1] + ip_options
        ip = hdr[:10] + struct.pack("!H", 0xFFFF - _ones_sum(hdr)) + hdr[12:]
        ethertype = 0x0800
    check = 0
    if udp_checksum or ipv6:
        check = (0xFFFF - _ones_sum(pseudo + ports + struct.pack("!HH", udp_len, 0) + payload)) or 0xFFFF
    udp = ports + struct.pack("!HH", udp_len, check)
    tag = struct.pack("!HH", 0x8100, vlan) if vlan is not None else b""
    return dst[0] + src[0] + tag + struct.pack("!H", ethertype) + ip + udp + payload


def frame_parts(frame: bytes) -> dict:
    """The parts of an event frame built like ``event_frame``: MACs, IP addresses, UDP ports and
    checksum, the offset of the payload, and ``udp_ok`` (its UDP checksum verifies, or is 0 over
    IPv4). Raises ``ValueError`` for a frame of another shape."""
    off = 14
    ethertype = struct.unpack_from("!H", frame, 12)[0]
    if ethertype == 0x8100:
        ethertype = struct.unpack_from("!H", frame, 16)[0]
        off = 18
    if ethertype == 0x0800:
        ihl = (frame[off] & 0xF) * 4
        saddr, daddr = frame[off + 12:off + 16], frame[off + 16:off + 20]
        l4 = off + ihl
    elif ethertype == 0x86DD:
        saddr, daddr = frame[off + 8:off + 24], frame[off + 24:off + 40]
        l4 = off + 40
    else:
        raise ValueError(f"ethertype {ethertype:#06x} is not IPv4 or IPv6")
    sport, dport, ulen, check = struct.unpack_from("!HHHH", frame, l4)
    if ethertype == 0x0800:
        pseudo = saddr + daddr + struct.pack("!xBH", 17, ulen)
    else:
        pseudo = saddr + daddr + struct.pack("!IxxxB", ulen, 17)
    ok = (check == 0 and ethertype == 0x0800) or _ones_sum(pseudo + frame[l4:l4 + ulen]) == 0xFFFF
    return {"dst_mac": frame[0:6], "src_mac": frame[6:12], "saddr": saddr, "daddr": daddr, "sport": sport,
            "dport": dport, "udp_check": check, "udp_ok": ok, "payload": l4 + 8}


# maps.init.json rows packed as the value structs of c/fx_structs.h (fx_op, fx_region, fx_own,
# fx_edge), little-endian: the byte order of the x86_64 and aarch64 hosts the kernel steps run on.
# fx_edges is written last, as the generated loader does: until then every event is denied.
_ROW_FORMATS = {"fx_ops": "<4I2Q", "fx_regions": "<2Q", "fx_own": "<2IQ2I", "fx_edges": "<4I"}


@dataclass
class ProgramReport:
    """One program's verification: ``insns_processed``, ``peak_states``, ``total_states``,
    ``max_states_per_insn``, ``verification_usec`` and ``stack_depth`` (bytes, per subprogram,
    ``+``-joined) are ``None`` when the log does not show them. ``log`` is the (rewritten) log of a
    rejected program, empty when accepted."""

    name: str
    device: str
    hook: str
    section: str
    accepted: bool
    insns_processed: int | None = None
    peak_states: int | None = None
    total_states: int | None = None
    max_states_per_insn: int | None = None
    verification_usec: int | None = None
    stack_depth: str | None = None
    errno: int = 0
    log: str = ""
    fx_spans: list[str] = field(default_factory=list)

    def row(self) -> dict:
        """The JSON row of ``--format json`` (``log`` only when rejected)."""
        out = {k: getattr(self, k) for k in ("name", "device", "hook", "section", "accepted", "insns_processed",
                                             "peak_states", "total_states", "max_states_per_insn",
                                             "verification_usec", "stack_depth")}
        if not self.accepted:
            out.update(errno=self.errno, log=self.log, fx_spans=self.fx_spans)
        return out


def parse_stats(log: str, rep: ProgramReport) -> None:
    """Fill ``rep``'s figures (instructions, states, verification time in microseconds, stack
    depth in bytes) from the last statistics lines of a verifier log; figures the log lacks stay
    or become ``None``. Returns nothing; never raises."""
    m = None
    for m in _STATS_LINE.finditer(log):
        pass
    if m is not None:
        rep.insns_processed, rep.max_states_per_insn, rep.total_states, rep.peak_states = (
            int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)))
    t = _TIME_LINE.findall(log)
    rep.verification_usec = int(t[-1]) if t else None
    s = _STACK_LINE.findall(log)
    rep.stack_depth = s[-1] if s else None


def rewrite_log(log: str, sourcemap: dict) -> tuple[str, list[str]]:
    """Rewrite a verifier log: each ``; <C> @ file.bpf.c:LINE`` line (BTF line info) gets the
    ``.fx`` location the source map gives that C line, or the nearest mapped line above it.
    ``sourcemap`` is the parsed ``sourcemap.json``. Returns the new log and the distinct ``.fx``
    locations (``file:line:col``) named, in first-seen order."""
    index: dict[str, list[tuple[int, list | None, str]]] = {
        f: sorted((ln, where, what) for ln, where, what in rows) for f, rows in sourcemap.get("c", {}).items()}
    out, spans = [], []
    for line in log.splitlines():
        out.append(line)
        m = _C_LINE_INFO.search(line)
        if not m:
            continue
        rows = index.get(m.group(1), [])
        cl = int(m.group(2))
        best = None
        for ln, where, what in rows:
            if ln <= cl:
                best = (where, what)
            else:
                break
        if best is None:
            continue
        where, what = best
        loc = f"{where[0]}:{where[1]}:{where[2]}" if where else "fxverify runtime"
        note = f"    --> {loc} ({what})"
        out.append(note)
        if where and loc not in spans:
            spans.append(loc)
    return "\n".join(out) + ("\n" if log.endswith("\n") else ""), spans


def _read_json(out_dir: str, name: str) -> dict:
    """The parsed JSON file ``name`` of lowering directory ``out_dir``."""
    with open(os.path.join(out_dir, name), encoding="utf-8") as fh:
        return json.load(fh)


def lowering_files(out_dir: str) -> tuple[dict, dict]:
    """The parsed ``manifest.json`` and ``maps.init.json`` of lowering directory ``out_dir``
    (what ``Runtime`` loads and fills from). Raises ``OSError`` or ``ValueError`` when a file is
    missing or not JSON."""
    return _read_json(out_dir, "manifest.json"), _read_json(out_dir, "maps.init.json")


def verify_dir(out_dir: str) -> list[ProgramReport]:
    """Load every program of lowering directory ``out_dir`` on its own (BPF_PROG_LOAD through
    ``bpf_object__load``) and report it. A rejected program is loaded again with
    ``BPF_LOG_LEVEL1`` to get the full log, which is rewritten to ``.fx`` spans. Returns one
    ``ProgramReport`` per ``manifest.json`` program, in manifest order. Raises ``BpfUnavailable``
    without libbpf, ``BpfError`` when an object cannot be opened, ``OSError`` for missing files."""
    manifest = _read_json(out_dir, "manifest.json")
    smap = _read_json(out_dir, "sourcemap.json")
    out = []
    for p in manifest["programs"]:
        path = os.path.join(out_dir, p["object"])
        rep = ProgramReport(p["name"], p["device"], p["hook"], p["section"], False)
        with libbpf.BpfObject(path) as obj:
            buf = obj.only(p["name"], BPF_LOG_STATS, STATS_LOG_BYTES)
            err = obj.load()
            log = buf.value.decode("utf-8", "replace")
        rep.accepted = err == 0
        rep.errno = err
        if not rep.accepted:
            with libbpf.BpfObject(path) as obj:
                buf = obj.only(p["name"], BPF_LOG_LEVEL1 | BPF_LOG_STATS, FULL_LOG_BYTES)
                obj.load()
                log = buf.value.decode("utf-8", "replace") or log
            rep.log, rep.fx_spans = rewrite_log(log, smap)
        parse_stats(log, rep)
        out.append(rep)
    return out


@dataclass(frozen=True)
class Observation:
    """One ``struct fx_obs`` record a program wrote to its device's ``fx_events`` ring buffer:
    ``kind`` (``FX_OBS_*``), the edge, device id, decision, reason and the operands ``a``, ``c``,
    ``d`` (for ``FX_OBS_MAP``: map index, key, value; ``specs/lowering.md`` section 3)."""

    kind: int
    edge: int
    device: int
    decision: int
    reason: int
    a: int
    c: int
    d: int


@dataclass
class Decision:
    """One test run: the event, the decision (``DECISIONS``), the reason (``REASONS``), the
    detail operand, the op index inside the edge's slice, and the observation events the run
    wrote, in order."""

    edge: int
    phase: int
    decision: str
    reason: str
    detail: int
    op: int
    observations: tuple[Observation, ...] = ()


class Runtime:
    """Every device object of a lowering directory loaded at once, maps shared by name (each device
    keeps its own ``fx_events``) and filled from ``maps.init.json`` (``specs/lowering.md`` section
    8; ``fill=False`` leaves the tables empty, as a loader that never ran would; ``files``, when
    given, is the directory's ``lowering_files`` already parsed, read only and shareable between
    runtimes of one directory). Use as a context
    manager, which loads on entry and raises ``BpfError`` when an object does not load; ``fire``
    runs one event: a syscall program on the event itself, an XDP or tc program on an
    Ethernet/IPv4/UDP frame that carries it (``event_frame``)."""

    def __init__(self, out_dir: str, fill: bool = True, files: tuple[dict, dict] | None = None) -> None:
        self.dir = out_dir
        self.manifest, self.init = files or lowering_files(out_dir)
        self.fill = fill
        self.objects: list[libbpf.BpfObject] = []
        self.fds: dict[str, int] = {}
        self.progs: dict[tuple[int, int], tuple[int, str]] = {}
        self.rings: dict[int, libbpf.RingBuffer] = {}

    def __enter__(self) -> "Runtime":
        try:
            self._load()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every ring buffer reader and object (the kernel frees programs and maps)."""
        for ring in self.rings.values():
            ring.close()
        self.rings.clear()
        for obj in self.objects:
            obj.close()
        self.objects.clear()

    def _load(self) -> None:
        """Load the objects in device order, each reusing the maps the earlier ones created."""
        objs = sorted({p["object"] for p in self.manifest["programs"]}, key=lambda x: self.manifest["devices"].index(x.split(".")[0]))
        for name in objs:
            obj = libbpf.BpfObject(os.path.join(self.dir, name))
            self.objects.append(obj)
            obj.reuse({k: v for k, v in self.fds.items() if k != "fx_events"})
            err = obj.load()
            if err:
                raise libbpf.BpfError(f"cannot load `{name}` (run --kernel-verify for the verifier log)", err)
            fds = obj.map_fds()
            for k, v in fds.items():
                self.fds.setdefault(k, v)
            self.rings[self.manifest["devices"].index(name.split(".")[0])] = libbpf.RingBuffer(fds["fx_events"])
            for p in self.manifest["programs"]:
                if p["object"] == name:
                    self.progs[(p["device_id"], p["hook_id"])] = (obj.prog_fd(p["name"]), p["kind"])
        if self.fill:
            self._fill()

    def _fill(self) -> None:
        """Write the initial rows and counter values of ``maps.init.json`` into the shared maps,
        the descriptors (``fx_edges``) last."""
        for name in ("fx_countdown", "fx_flags"):
            vals = self.init[name]["values"]
            libbpf.update_batch(self.fds[name], b"".join(struct.pack("<I", i) for i in range(len(vals))),
                                b"".join(struct.pack("<I", v) for v in vals), len(vals))
        for name, fmt in _ROW_FORMATS.items():
            rows = self.init[name]["rows"]
            s = struct.Struct(fmt)
            keys = b"".join(struct.pack("<I", i) for i in range(len(rows)))
            vals = b"".join(s.pack(*r) for r in rows)
            libbpf.update_batch(self.fds[name], keys, vals, len(rows))

    def fire(self, edge: int, phase: int) -> Decision:
        """Run the program of ``edge``'s hook for its start (0) or end (1). An edge whose hook has
        no program (an undeclared hook) is reported as denied with FX-HOOK-002 without a run.
        Returns the ``Decision`` with the observation events the run wrote (drained from the
        device's ring buffer after each run, so none is dropped); raises ``BpfError`` when the run
        fails, a record is not a ``struct fx_obs``, the program's return value is not the action
        of the decision it wrote, or (packet programs) the frame it left has a wrong UDP checksum
        or was not turned around when deferred."""
        rows = self.init["fx_edges"]["rows"]
        dev, hook = rows[edge][:2] if edge < len(rows) else (0, 0)
        fd, kind = self.progs.get((dev, hook), (None, ""))
        if fd is None:
            return Decision(edge, phase, "deny", codes.HOOK_002, hook, 0)
        ev = FX_EVENT.pack(edge, phase, 0, 0, 0, 0)
        if kind == "syscall":
            ret, out = libbpf.test_run(fd, ev)
        else:
            ret, out = self._fire_frame(fd, kind, ev)
        _e, _p, dec, reason, detail, op = FX_EVENT.unpack(out)
        want = ACTIONS.get(kind, ACTIONS["syscall"]).get(DECISIONS[dec] if dec < len(DECISIONS) else "", -1)
        if ret != want:
            raise libbpf.BpfError(f"program returned {ret} but wrote decision {dec} (action {want})", errno.EPROTO)
        records = self.rings[dev].drain() if dev in self.rings else []
        if any(len(r) != FX_OBS.size for r in records):
            raise libbpf.BpfError(f"an observation record is not {FX_OBS.size} bytes", errno.EPROTO)
        return Decision(edge, phase, DECISIONS[dec] if dec < len(DECISIONS) else str(dec),
                        REASONS[reason] if reason < len(REASONS) else str(reason), detail, op,
                        tuple(Observation(*FX_OBS.unpack(r)) for r in records))

    @staticmethod
    def _fire_frame(fd: int, kind: str, ev: bytes) -> tuple[int, bytes]:
        """Run packet program ``fd`` on an event frame carrying ``ev``; return the action and the
        event as the program wrote it back, after checking the frame it left: a valid UDP checksum,
        and turned around (source and destination swapped) exactly when it was deferred."""
        frame = event_frame(ev)
        ret, out = libbpf.test_run_frame(fd, frame)
        before, after = frame_parts(frame), frame_parts(out)
        got = out[after["payload"]:after["payload"] + FX_EVENT.size]
        if not after["udp_ok"]:
            raise libbpf.BpfError(f"the {kind} program left a frame whose UDP checksum does not verify", errno.EPROTO)
        turned = (after["src_mac"], after["saddr"], after["sport"]) == (before["dst_mac"], before["daddr"], before["dport"])
        if turned != (ret == ACTIONS[kind]["defer"]):
            raise libbpf.BpfError(f"the {kind} program returned {ret} but {'turned' if turned else 'did not turn'} "
                                  "the frame around", errno.EPROTO)
        return ret, got

    def read_u32s(self, name: str, n: int, value_size: int = 4) -> list[int]:
        """Read entries ``0..n-1`` of array map ``name`` (values of ``value_size`` bytes): the u32
        at the start of each value, 0 for a missing entry. Raises ``KeyError`` for an unknown map."""
        fd = self.fds[name]
        out = []
        for i in range(n):
            v = libbpf.lookup(fd, struct.pack("<I", i), value_size) or bytes(value_size)
            out.append(int.from_bytes(v[:4], "little"))
        return out

    def read_policy_map(self, c_name: str, key: int, key_size: int, value_size: int) -> bytes | None:
        """Raw value (``value_size`` bytes) of entry ``key`` (``key_size`` bytes, little-endian) of
        the policy map whose C name is ``c_name``, or ``None`` when absent."""
        k = key.to_bytes(key_size, "little")
        return libbpf.lookup(self.fds[c_name], k, value_size)
