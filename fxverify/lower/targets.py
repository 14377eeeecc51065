"""Target profiles: how each runtime realises consistency classes and hooks (``specs/lowering.md``).

Takes a target name, a map declaration or a (device, hook) pair; produces the BPF map type, the
ELF section of a program and its attach point. A class that a target cannot realise is reported as
``Unrealisable`` (``plan`` reports it as FX-BPF-002); it is never downgraded to a weaker map.
Emits no diagnostics.

Sources of the numeric map types:
- kernel map types: ``enum bpf_map_type`` in ``include/uapi/linux/bpf.h`` (HASH 1, ARRAY 2,
  PERCPU_ARRAY 6, RINGBUF 27);
- the map flag ``BPF_F_RDONLY_PROG`` (``1U << 7``, ``include/uapi/linux/bpf.h``): programs may
  read the map but not write it, which the kernel verifier enforces; the syscall side still fills
  it before the flow (``const`` maps);
- bpftime GPU map types: bpftime's ``bpf_map_type`` extension (per-GPU-thread array 1502, GPU
  array 1503, GPU ring buffer 1527), as BRIEF section 7 names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxverify.ir import MapDecl, Policy
from fxverify.vocab import ClassKind, DeviceKind

# enum bpf_map_type (include/uapi/linux/bpf.h)
BPF_MAP_TYPE_HASH = 1
BPF_MAP_TYPE_ARRAY = 2
BPF_MAP_TYPE_RINGBUF = 27
# map_flags (include/uapi/linux/bpf.h): programs may only read the map
BPF_F_RDONLY_PROG = 1 << 7
# bpftime GPU map types (BRIEF section 7)
BPFTIME_PERGPUTD_ARRAY = 1502
BPFTIME_GPU_ARRAY = 1503
BPFTIME_GPU_RINGBUF = 1527

#: Map type number -> its ``BPF_MAP_TYPE_*`` name (bpftime's names for its GPU types).
MAP_TYPE_NAMES: dict[int, str] = {
    BPF_MAP_TYPE_HASH: "BPF_MAP_TYPE_HASH",
    BPF_MAP_TYPE_ARRAY: "BPF_MAP_TYPE_ARRAY",
    BPF_MAP_TYPE_RINGBUF: "BPF_MAP_TYPE_RINGBUF",
    BPFTIME_PERGPUTD_ARRAY: "BPF_MAP_TYPE_PERGPUTD_ARRAY_MAP",
    BPFTIME_GPU_ARRAY: "BPF_MAP_TYPE_GPU_ARRAY_MAP",
    BPFTIME_GPU_RINGBUF: "BPF_MAP_TYPE_GPU_RINGBUF_MAP",
}

# bpftime attaches GPU hooks to CUDA entry points: a launch is the entry of cudaLaunchKernel, a
# finished copy the return of cudaMemcpyAsync, a free the entry of cudaFree (CUDA runtime API).
_CUDA_SYMBOL: dict[str, tuple[str, str]] = {
    "launch": ("kprobe", "cudaLaunchKernel"),
    "exit": ("kretprobe", "cudaLaunchKernel"),
    "copy_done": ("kretprobe", "cudaMemcpyAsync"),
    "fault": ("kprobe", "cudaMemPrefetchAsync"),
    "alloc": ("kprobe", "cudaMalloc"),
    "free": ("kprobe", "cudaFree"),
    "evict": ("kprobe", "cudaMemAdvise"),
}

# What the usual hooks of an NVMe controller are, named in the attach point of their programs:
# the host's write of a submission queue's tail doorbell (SQyTDBL), the controller posting a
# completion queue entry, and the end of the controller's data transfer (NVM Express Base
# Specification 2.0, the queue model and the doorbell properties). Other hooks keep the plain name.
_NVME_EVENTS: dict[str, str] = {
    "sq_doorbell": "submission queue tail doorbell write (SQyTDBL)",
    "completion": "completion queue entry posted",
    "dma_done": "controller data transfer finished",
}

# dputime: receive-side NIC/DPU hooks run as XDP, every other NIC/DPU hook as tc (BRIEF section 7).
_XDP_HOOKS = frozenset({"rx"})


class Unrealisable(Exception):
    """A map's consistency class has no map type on the target. ``reason`` says why (FX-BPF-002)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class MapRealisation:
    """How one policy map is realised: numeric ``map_type``, why (``rule``, one sentence) and its
    ``map_flags`` (``BPF_F_RDONLY_PROG`` for a ``const`` map, else 0)."""

    map_type: int
    rule: str
    flags: int = 0

    @property
    def type_name(self) -> str:
        """The ``BPF_MAP_TYPE_*`` name of ``map_type``."""
        return MAP_TYPE_NAMES[self.map_type]


@dataclass(frozen=True)
class Section:
    """Where a program goes: its ELF ``section`` (libbpf ``SEC()`` name), its ``kind``
    (``syscall``, ``xdp``, ``tc``, ``kprobe``, ``kretprobe``) and the ``attach`` point."""

    section: str
    kind: str
    attach: str


def _user_devices(policy: Policy, m: MapDecl) -> set[str]:
    """Devices whose edges operate on map ``m``."""
    return {e.device for e in policy.edges for op in e.map_ops if op.map == m.name}


def realise_map(target: str, policy: Policy, m: MapDecl) -> MapRealisation:
    """Return the map type that realises ``m``'s consistency class on ``target``.

    Rules (``specs/lowering.md`` section 2): a stronger realisation than the class asks is allowed,
    a weaker one never is. ``target`` is one of ``TARGETS``. Returns the ``MapRealisation``;
    raises ``Unrealisable`` when no map type gives the class.
    """
    cls = m.cls.kind
    if m.map_type == "ringbuf":
        if target == "bpftime" and _gpu_only(policy, m):
            return MapRealisation(BPFTIME_GPU_RINGBUF, "ring buffer written only from GPU hooks: bpftime GPU ring buffer")
        return MapRealisation(BPF_MAP_TYPE_RINGBUF, "ring buffer: BPF ring buffer (one producer order per map)")
    base = BPF_MAP_TYPE_HASH if m.map_type == "hash" else BPF_MAP_TYPE_ARRAY
    if cls is ClassKind.CONST:
        # INVARIANT: resolve refuses a const ring buffer. The same read-only table on every target:
        # no edge writes it, so no GPU-resident copy or atomic is needed.
        return MapRealisation(base, f"const map: {m.map_type} filled before the flow, read-only for programs "
                                    "(BPF_F_RDONLY_PROG)", BPF_F_RDONLY_PROG)
    if target == "bpftime":
        gpu_users = _gpu_only(policy, m)
        if cls is ClassKind.PER_DEVICE and gpu_users:
            return MapRealisation(BPFTIME_PERGPUTD_ARRAY, "per_device map used from GPU hooks: one slot per GPU thread")
        if cls is ClassKind.LOCAL and policy.device(str(m.cls.device)).kind is DeviceKind.GPU:
            if m.map_type != "array":
                raise Unrealisable(f"bpftime has no GPU-resident hash map for `local({m.cls.device})`; declare it an array")
            return MapRealisation(BPFTIME_GPU_ARRAY, "local map of a GPU: bpftime GPU array in device memory")
        writers_on_gpu = any(policy.device(d).kind is DeviceKind.GPU for d in _user_devices(policy, m))
        if cls is ClassKind.LINEARIZABLE and writers_on_gpu and len(_user_devices(policy, m)) > 1:
            raise Unrealisable("bpftime GPU maps give no linearizable read-modify-write shared between a GPU "
                               "and another device")
        return MapRealisation(base, f"{cls.value} map: host shared-memory {m.map_type} with atomic updates")
    if cls is ClassKind.PER_DEVICE:
        if m.map_type != "array":
            raise Unrealisable("a per_device map is realised as an array of per-device slots; a hash map has no slots")
        return MapRealisation(BPF_MAP_TYPE_ARRAY, "per_device map: array whose value holds one slot per device")
    if cls is ClassKind.LOCAL:
        return MapRealisation(base, f"local map: {m.map_type} declared only in its home device's object")
    return MapRealisation(base, f"{cls.value} map: one shared {m.map_type} updated with atomic instructions "
                                "(single-copy atomic, so at least as strong as the class)")


def _gpu_only(policy: Policy, m: MapDecl) -> bool:
    """True when map ``m`` is used, and only from GPU devices' hooks."""
    devs = _user_devices(policy, m)
    return bool(devs) and all(policy.device(d).kind is DeviceKind.GPU for d in devs)


def section_for(target: str, policy: Policy, device: str, hook: str) -> Section:
    """Return the ELF section and attach point of the program for ``device.hook`` on ``target``.

    kernel: every hook is a ``syscall`` program that the device's runtime runs with
    BPF_PROG_TEST_RUN-style invocation (the one program type whose context the caller supplies).
    bpftime: GPU hooks are kprobe/kretprobe on CUDA runtime symbols; others are syscall programs.
    dputime: NIC/DPU ``rx`` hooks are XDP, other NIC/DPU hooks tc; others are syscall programs.
    An ``npu`` is never a CUDA device, so its hooks are syscall programs on every target (its
    runtime calls them); an ``nvme`` controller's are syscall programs whose attach point names
    the NVMe event of a usual hook (``_NVME_EVENTS``).
    (``specs/lowering.md`` section 2, "Hook -> section".) Returns the ``Section``; never raises for
    a device of ``policy``.
    """
    kind = policy.device(device).kind
    if target == "bpftime" and kind is DeviceKind.GPU:
        probe, sym = _CUDA_SYMBOL.get(hook, ("kprobe", f"fx_hook_{hook}"))
        return Section(f"{probe}/{sym}", probe, sym)
    if target == "dputime" and kind in (DeviceKind.DPU, DeviceKind.NIC):
        if hook in _XDP_HOOKS:
            return Section("xdp", "xdp", f"{device} receive path")
        return Section("tc", "tc", f"{device} {hook} queue")
    event = _NVME_EVENTS.get(hook) if kind is DeviceKind.NVME else None
    return Section("syscall", "syscall", f"{device}.{hook} runtime callback" + (f": {event}" if event else ""))
