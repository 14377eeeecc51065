"""Target profiles: how each runtime realises consistency classes, hooks and decisions.

Takes a target name, a map declaration or a (device, hook) pair; produces the BPF map type, the
programs (ELF section, attach point, role) that realise a hook, and the return value of each
decision for each program kind (``specs/lowering.md`` section 2). A class that a target cannot
realise is reported as ``Unrealisable`` (``plan`` reports it as FX-BPF-002); it is never
downgraded to a weaker map. Emits no diagnostics.

Sources of the numbers:
- kernel map types: ``enum bpf_map_type`` in ``include/uapi/linux/bpf.h`` (HASH 1, ARRAY 2,
  RINGBUF 27); the map flag ``BPF_F_RDONLY_PROG`` (``1U << 7``, same file);
- XDP actions: ``enum xdp_action`` in ``include/uapi/linux/bpf.h`` (ABORTED 0, DROP 1, PASS 2,
  TX 3, REDIRECT 4); tc actions: ``TC_ACT_*`` in ``include/uapi/linux/pkt_cls.h`` (OK 0, SHOT 2,
  REDIRECT 7);
- bpftime: ``bpftime_support.json`` (read from bpftime's sources, with their paths and commit):
  GPU map types (GPU array 1503, GPU ring buffer 1527), the sections each side attaches
  (``uprobe``/``uretprobe`` on the host, ``kprobe/NAME``/``kretprobe/NAME`` inside the CUDA kernel
  NAME) and the helpers each side implements;
- CUDA runtime API signatures: the CUDA 12 Runtime API reference (``cudaLaunchKernel``,
  ``cudaMemcpyAsync``, ``cudaMemPrefetchAsync``, ``cudaMalloc``, ``cudaFree``, ``cudaMemAdvise``,
  ``cudaStreamSynchronize``, ``cudaDeviceSynchronize``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from fxverify.ir import MapDecl, Policy
from fxverify.vocab import ClassKind, DeviceKind

# enum bpf_map_type (include/uapi/linux/bpf.h)
BPF_MAP_TYPE_HASH = 1
BPF_MAP_TYPE_ARRAY = 2
BPF_MAP_TYPE_RINGBUF = 27
# map_flags (include/uapi/linux/bpf.h): programs may only read the map
BPF_F_RDONLY_PROG = 1 << 7
# bpftime GPU map types (bpftime_support.json "map_types")
BPFTIME_GPU_ARRAY = 1503
BPFTIME_GPU_RINGBUF = 1527

#: Map type number -> its ``BPF_MAP_TYPE_*`` name (bpftime's names for its GPU types).
MAP_TYPE_NAMES: dict[int, str] = {
    BPF_MAP_TYPE_HASH: "BPF_MAP_TYPE_HASH",
    BPF_MAP_TYPE_ARRAY: "BPF_MAP_TYPE_ARRAY",
    BPF_MAP_TYPE_RINGBUF: "BPF_MAP_TYPE_RINGBUF",
    BPFTIME_GPU_ARRAY: "BPF_MAP_TYPE_GPU_ARRAY_MAP",
    BPFTIME_GPU_RINGBUF: "BPF_MAP_TYPE_GPU_RINGBUF_MAP",
}

# enum xdp_action (include/uapi/linux/bpf.h) and TC_ACT_* (include/uapi/linux/pkt_cls.h)
XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX = 0, 1, 2, 3
TC_ACT_OK, TC_ACT_SHOT, TC_ACT_REDIRECT = 0, 2, 7

#: Return value of each decision, per program kind (``specs/lowering.md`` section 2, "Decisions").
#: A syscall program returns the decision itself; an XDP program passes a frame it lets proceed to
#: the stack, drops a denied one and sends a deferred one back out of the interface it came in on,
#: turned around (``XDP_TX``: the sender retries, as after a receiver-not-ready NAK); a tc program
#: lets a frame proceed (``TC_ACT_OK``), drops a denied one (``TC_ACT_SHOT``) and redirects a
#: deferred one back to its sender (``TC_ACT_REDIRECT``). Probes' return values are ignored by
#: their runtimes; their decision is written back into the event or published as an observation.
ACTIONS: dict[str, dict[str, int]] = {
    "syscall": {"proceed": 0, "defer": 1, "deny": 2},
    "xdp": {"proceed": XDP_PASS, "defer": XDP_TX, "deny": XDP_DROP},
    "tc": {"proceed": TC_ACT_OK, "defer": TC_ACT_REDIRECT, "deny": TC_ACT_SHOT},
}
#: Action numbers -> names, for the manifest and reports.
ACTION_NAMES: dict[str, dict[int, str]] = {
    "xdp": {XDP_ABORTED: "XDP_ABORTED", XDP_DROP: "XDP_DROP", XDP_PASS: "XDP_PASS", XDP_TX: "XDP_TX"},
    "tc": {TC_ACT_OK: "TC_ACT_OK", TC_ACT_SHOT: "TC_ACT_SHOT", TC_ACT_REDIRECT: "TC_ACT_REDIRECT"},
}

#: UDP destination port of the frames that carry a ``struct fx_event`` to a dputime packet
#: program ("FX" in ASCII). Frames to other ports are not movement events and pass untouched.
FX_UDP_PORT = 0x4658

#: Library whose CUDA runtime entry points the bpftime host programs probe (its default path; an
#: application that links cudart statically is probed in its own binary: the loader's
#: ``--cuda-lib``). And the library that exports the hook functions of runtimes without a CUDA API
#: (``fx_hook_<device>__<hook>``; the loader's ``--hook-lib``).
CUDA_LIB = "libcudart.so"
HOOK_LIB = "libfxhooks.so"


@dataclass(frozen=True)
class CudaCall:
    """The CUDA runtime call that realises a GPU hook on bpftime's host side: its ``symbol``, the
    C signature (CUDA 12 Runtime API), the argument that names the movement (``handle``, read by
    the C expression ``handle_c``; the key of the binding table ``fx_bind``) and, for an
    asynchronous call, the C expression that reads its ``cudaStream_t`` (``stream_c``; ``None``
    for a synchronous call, whose return ends the edge)."""

    symbol: str
    signature: str
    handle: str
    handle_c: str
    stream_c: str | None


# The stream of cudaLaunchKernel follows two dim3 arguments, each passed in two registers, so it
# is not a register argument on x86-64 (fx_launch_stream in c/fx_cuda.c reads it per architecture).
CUDA_CALLS: dict[str, CudaCall] = {
    "launch": CudaCall("cudaLaunchKernel", "cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, "
                       "void **args, size_t sharedMem, cudaStream_t stream)", "func", "PT_REGS_PARM1(ctx)",
                       "fx_launch_stream(ctx)"),
    "copy_done": CudaCall("cudaMemcpyAsync", "cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, "
                          "enum cudaMemcpyKind kind, cudaStream_t stream)", "dst", "PT_REGS_PARM1(ctx)",
                          "PT_REGS_PARM5(ctx)"),
    "fault": CudaCall("cudaMemPrefetchAsync", "cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, "
                      "int dstDevice, cudaStream_t stream)", "devPtr", "PT_REGS_PARM1(ctx)", "PT_REGS_PARM4(ctx)"),
    "alloc": CudaCall("cudaMalloc", "cudaError_t cudaMalloc(void **devPtr, size_t size)", "size",
                      "PT_REGS_PARM2(ctx)", None),
    "free": CudaCall("cudaFree", "cudaError_t cudaFree(void *devPtr)", "devPtr", "PT_REGS_PARM1(ctx)", None),
    "evict": CudaCall("cudaMemAdvise", "cudaError_t cudaMemAdvise(const void *devPtr, size_t count, "
                      "enum cudaMemoryAdvise advice, int device)", "devPtr", "PT_REGS_PARM1(ctx)", None),
}
#: The synchronisations that end asynchronous calls: every call submitted on ``stream`` has
#: finished when ``cudaStreamSynchronize(stream)`` returns ``cudaSuccess``, every call on every
#: stream when ``cudaDeviceSynchronize()`` does (CUDA Runtime API, stream management).
STREAM_SYNC = "cudaStreamSynchronize"
DEVICE_SYNC = "cudaDeviceSynchronize"

# What the usual hooks of an NVMe controller are, named in the attach point of their programs:
# the host's write of a submission queue's tail doorbell (SQyTDBL), the controller posting a
# completion queue entry, and the end of the controller's data transfer (NVM Express Base
# Specification 2.0, the queue model and the doorbell properties). Other hooks keep the plain name.
_NVME_EVENTS: dict[str, str] = {
    "sq_doorbell": "submission queue tail doorbell write (SQyTDBL)",
    "completion": "completion queue entry posted",
    "dma_done": "controller data transfer finished",
}

# dputime: receive-side NIC/DPU hooks run as XDP, every other NIC/DPU hook as tc; `tx` is attached
# at the clsact egress hook (frames the device sends), every other tc hook at clsact ingress.
_XDP_HOOKS = frozenset({"rx"})
_EGRESS_HOOKS = frozenset({"tx"})

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def c_ident(prefix: str, name: str) -> str:
    """Mangle a policy identifier into a C identifier that cannot inject code.

    Letters, digits and ``_`` are kept; every other character (quotes, ``*/``, ``#``, non-ASCII)
    becomes ``_xHH`` per UTF-8 byte, so distinct names stay distinct. The result starts with
    ``prefix`` (with ``_`` before it when that alone would not make an identifier: an empty prefix
    before an empty name or a leading digit) and matches ``[A-Za-z_][A-Za-z0-9_]*`` (C11 6.4.2.1).
    """
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            out.append(ch)
        else:
            out.extend(f"_x{b:02x}" for b in ch.encode("utf-8"))
    ident = f"{prefix}{''.join(out)}"
    if not _C_IDENTIFIER.fullmatch(ident):
        # only with no prefix: an empty name (``policy ""``), or one that starts with a digit
        ident = f"_{ident}"
    assert _C_IDENTIFIER.fullmatch(ident), ident  # INVARIANT: only identifier characters survive
    return ident


def is_cuda_symbol(name: str) -> bool:
    """True when ``name`` can name a CUDA kernel in a ``kprobe/NAME`` section: a C identifier, as
    an Itanium-mangled C++ name or an ``extern "C"`` kernel name is."""
    return bool(_C_IDENTIFIER.fullmatch(name))


@cache
def bpftime_support() -> dict:
    """The bpftime support table (``bpftime_support.json``, package data): upstream repository and
    commit, helper ids per side (``host``, ``gpu``), sections per side and map types. Raises
    ``FileNotFoundError`` when the installation lacks the file."""
    return json.loads((resources.files("fxverify.lower") / "bpftime_support.json").read_text(encoding="utf-8"))


class Unrealisable(Exception):
    """A map's consistency class has no map type on the target. ``reason`` says why (FX-BPF-002)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class MapRealisation:
    """How one policy map is realised: numeric ``map_type``, why (``rule``, one sentence), its
    ``map_flags`` (``BPF_F_RDONLY_PROG`` for a ``const`` map, else 0) and whether it lives in GPU
    memory (``gpu``: bpftime's GPU map types, declared only in the device's ``.cuda`` object)."""

    map_type: int
    rule: str
    flags: int = 0
    gpu: bool = False

    @property
    def type_name(self) -> str:
        """The ``BPF_MAP_TYPE_*`` name of ``map_type``."""
        return MAP_TYPE_NAMES[self.map_type]


@dataclass(frozen=True)
class Section:
    """One program of a hook: its ELF ``section`` (libbpf ``SEC()`` name), its ``kind``
    (``syscall``, ``xdp``, ``tc``, ``uprobe``, ``uretprobe``, ``kprobe``, ``kretprobe``), the
    ``attach`` point in words, its ``role`` and, for probes, the probed ``symbol`` (a function, or
    a CUDA kernel for ``kprobe``/``kretprobe``).

    Roles (``specs/lowering.md`` section 2, attach contracts): ``event`` the context, frame or
    first argument carries a ``struct fx_event``; ``call`` the entry of a CUDA call, which starts
    the edge bound to its handle; ``return`` the return of a synchronous CUDA call, which ends the
    edge its entry started; ``stream-in``/``stream-sync``/``device-sync`` the entry and return of
    ``cudaStreamSynchronize`` and the return of ``cudaDeviceSynchronize``, which end the
    asynchronous calls they wait for; ``kernel-entry``/``kernel-exit`` the first thread's entry
    and the last thread's exit of a named CUDA kernel (``side`` ``gpu``: the program runs inside
    the kernel). ``egress`` says where a tc program is attached (clsact egress, else ingress)."""

    section: str
    kind: str
    attach: str
    role: str = "event"
    symbol: str | None = None
    side: str = "host"
    egress: bool = False


def _user_hooks(policy: Policy, m: MapDecl) -> set[tuple[str, str]]:
    """``(device, hook)`` of every edge that operates on map ``m``."""
    return {(e.device, e.hook) for e in policy.edges for op in e.map_ops if op.map == m.name}


def realise_map(target: str, policy: Policy, m: MapDecl,
                gpu_hooks: frozenset[tuple[str, str]] = frozenset()) -> MapRealisation:
    """Return the map type that realises ``m``'s consistency class on ``target``.

    Rules (``specs/lowering.md`` section 2): a stronger realisation than the class asks is allowed,
    a weaker one never is. ``target`` is one of ``TARGETS``; ``gpu_hooks`` are the ``(device,
    hook)`` pairs whose programs run inside a named CUDA kernel (bpftime only). On bpftime a map
    lives in GPU memory only when every edge that uses it is driven by such a hook of one GPU:
    programs on the host reach host maps, and GPU programs reach host maps through bpftime's
    host-call path. Returns the ``MapRealisation``; raises ``Unrealisable`` when no map type gives
    the class.
    """
    cls = m.cls.kind
    users = _user_hooks(policy, m)
    on_gpu = target == "bpftime" and bool(users) and users <= gpu_hooks and len({d for d, _h in users}) == 1
    if m.map_type == "ringbuf":
        if on_gpu:
            return MapRealisation(BPFTIME_GPU_RINGBUF, "ring buffer written only inside one GPU's CUDA kernels: bpftime "
                                  "GPU ring buffer (per-thread buffers, bpf_perf_event_output)", gpu=True)
        return MapRealisation(BPF_MAP_TYPE_RINGBUF, "ring buffer: BPF ring buffer (one producer order per map)")
    base = BPF_MAP_TYPE_HASH if m.map_type == "hash" else BPF_MAP_TYPE_ARRAY
    if cls is ClassKind.CONST:
        # INVARIANT: resolve refuses a const ring buffer. The same read-only table on every target:
        # no edge writes it, so no GPU-resident copy or atomic is needed.
        return MapRealisation(base, f"const map: {m.map_type} filled before the flow, read-only for programs "
                                    "(BPF_F_RDONLY_PROG)", BPF_F_RDONLY_PROG)
    if target == "bpftime":
        if on_gpu and m.map_type == "array" and cls in (ClassKind.LOCAL, ClassKind.PER_DEVICE):
            # One shared copy with one slot per device; bpftime's per-GPU-thread array (1502) would
            # split a device's slot among the threads that run the interpreter.
            return MapRealisation(BPFTIME_GPU_ARRAY, f"{cls.value} array used only inside one GPU's CUDA kernels: "
                                  "bpftime GPU array in device memory (one shared copy)", gpu=True)
        gpu_writers = {d for d, h in users if (d, h) in gpu_hooks}
        if cls is ClassKind.LINEARIZABLE and gpu_writers and len({d for d, _h in users}) > 1:
            raise Unrealisable("bpftime gives no linearizable read-modify-write between a program inside a CUDA kernel "
                               "and another device; drive the GPU's edges from host CUDA calls (no --cuda-kernel)")
        return MapRealisation(base, f"{cls.value} map: host shared-memory {m.map_type} with atomic updates")
    if cls is ClassKind.PER_DEVICE:
        if m.map_type != "array":
            raise Unrealisable("a per_device map is realised as an array of per-device slots; a hash map has no slots")
        return MapRealisation(BPF_MAP_TYPE_ARRAY, "per_device map: array whose value holds one slot per device")
    if cls is ClassKind.LOCAL:
        return MapRealisation(base, f"local map: {m.map_type} declared only in its home device's object")
    return MapRealisation(base, f"{cls.value} map: one shared {m.map_type} updated with atomic instructions "
                                "(single-copy atomic, so at least as strong as the class)")


def hook_programs(target: str, policy: Policy, device: str, hook: str, kernel: str | None = None) -> list[Section]:
    """The programs that realise ``device.hook`` on ``target`` (``specs/lowering.md`` section 2,
    "Hook -> programs"), in emission order.

    kernel: one ``syscall`` program, which the device's runtime runs with BPF_PROG_TEST_RUN (the
    one program type whose context the caller supplies). dputime: NIC/DPU ``rx`` is XDP, other
    NIC/DPU hooks tc (``tx`` at clsact egress, the rest at ingress), other devices' hooks syscall
    programs. bpftime: a GPU hook bound to the CUDA kernel ``kernel`` is a ``kprobe``/``kretprobe``
    pair inside that kernel; a usual GPU hook (``CUDA_CALLS``) is a ``uprobe`` on its CUDA runtime
    call, plus a ``uretprobe`` for a synchronous call; any other hook, on any device, is a
    ``uprobe`` on the function ``fx_hook_<device>__<hook>`` that the device's runtime calls with a
    ``struct fx_event *``. An ``nvme`` controller's attach point names the NVMe event of a usual
    hook. Returns a non-empty list; never raises for a device of ``policy``.
    """
    kind = policy.device(device).kind
    event = _NVME_EVENTS.get(hook) if kind is DeviceKind.NVME else None
    where = f"{device}.{hook}" + (f": {event}" if event else "")
    if target == "bpftime":
        if kernel is not None:
            return [Section(f"kprobe/{kernel}", "kprobe", f"entry of CUDA kernel {kernel} (first thread of the grid)",
                            "kernel-entry", kernel, "gpu"),
                    Section(f"kretprobe/{kernel}", "kretprobe", f"exit of CUDA kernel {kernel} (last thread of the grid)",
                            "kernel-exit", kernel, "gpu")]
        call = CUDA_CALLS.get(hook) if kind is DeviceKind.GPU else None
        if call is not None:
            out = [Section(f"uprobe/{CUDA_LIB}:{call.symbol}", "uprobe", f"entry of {call.symbol} ({call.handle} names the "
                           "movement)", "call", call.symbol)]
            if call.stream_c is None:
                out.append(Section(f"uretprobe/{CUDA_LIB}:{call.symbol}", "uretprobe", f"return of {call.symbol}",
                                   "return", call.symbol))
            return out
        symbol = c_ident("fx_hook_", f"{device}__{hook}")
        return [Section(f"uprobe/{HOOK_LIB}:{symbol}", "uprobe", f"entry of {symbol}(struct fx_event *ev), called by "
                        f"the runtime at {where}", "event", symbol)]
    if target == "dputime" and kind in (DeviceKind.DPU, DeviceKind.NIC):
        if hook in _XDP_HOOKS:
            return [Section("xdp", "xdp", f"{device} receive path (XDP)")]
        egress = hook in _EGRESS_HOOKS
        return [Section("tc", "tc", f"{device} {hook}: tc clsact {'egress' if egress else 'ingress'}", egress=egress)]
    return [Section("syscall", "syscall", f"{where} runtime callback")]


def device_programs(target: str, policy: Policy, device: str, kernels: dict[str, str]) -> list[Section]:
    """Programs of ``device`` that belong to no single hook: on bpftime, for a GPU device with a
    hook realised by an asynchronous CUDA call (``launch``, ``copy_done``, ``fault`` without a
    named kernel in ``kernels``, hook -> CUDA kernel), the entry and return of
    ``cudaStreamSynchronize`` and the return of ``cudaDeviceSynchronize``, which end the calls
    they wait for. Empty otherwise."""
    if target != "bpftime" or policy.device(device).kind is not DeviceKind.GPU:
        return []
    asynchronous = [h for h in policy.device(device).hooks
                    if h not in kernels and h in CUDA_CALLS and CUDA_CALLS[h].stream_c is not None]
    if not asynchronous:
        return []
    return [Section(f"uprobe/{CUDA_LIB}:{STREAM_SYNC}", "uprobe", f"entry of {STREAM_SYNC}(cudaStream_t stream)",
                    "stream-in", STREAM_SYNC),
            Section(f"uretprobe/{CUDA_LIB}:{STREAM_SYNC}", "uretprobe", f"return of {STREAM_SYNC}: the stream's calls "
                    "have finished", "stream-sync", STREAM_SYNC),
            Section(f"uretprobe/{CUDA_LIB}:{DEVICE_SYNC}", "uretprobe", f"return of {DEVICE_SYNC}: every stream's calls "
                    "have finished", "device-sync", DEVICE_SYNC)]
