"""The vocabulary of the policy language: every fixed word and the facts attached to it.

Defined once here and used by the resolver (which checks words against it), the obligations, the
simulator, the lowering, the generators and the documentation (specs/language.md):
- size units (``KiB``...) in bytes;
- dtypes with their bit widths and canonical spellings;
- codecs with their worst-case output bound and the source of each formula;
- checksum algorithms;
- operators of reductions and map merges, and which of them are associative and commutative;
- device kinds, link kinds and link orders, address-space words;
- BPF map types, key and value scalars with their widths, consistency classes;
- release kinds.

Emits no diagnostics; a word not found here is an input error the resolver reports (FX-TYP-003).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

# ---- sizes ------------------------------------------------------------------------------------

KIB, MIB, GIB, TIB = 1 << 10, 1 << 20, 1 << 30, 1 << 40

#: Size units and their value in bytes: IEC binary prefixes and SI decimal ones (IEC 80000-13).
UNITS: dict[str, int] = {
    "B": 1, "KiB": KIB, "MiB": MIB, "GiB": GIB, "TiB": TIB,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
}

#: One past the largest byte address: spaces, regions and footprints are 64-bit.
U64_END = 1 << 64

#: The largest solver budget, timeout (ms) and seed: Z3 reads its ``rlimit``, ``timeout`` and
#: ``random_seed`` parameters as unsigned 32-bit integers (``z3 -pd``: type ``unsigned int``) and
#: keeps the low 32 bits of a larger value, so 2^32 + 1 would mean 1.
SOLVER_PARAM_MAX = (1 << 32) - 1


def size_text(n: int) -> str:
    """A byte count as ``64 KiB`` / ``80 GiB`` when it is an exact multiple, else ``12345 B``."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} B"


def in_unit(n: int, unit: int, name: str, digits: int = 1) -> str:
    """``n`` bytes as a decimal count of ``unit`` bytes named ``name`` (``"78.6 GiB"``), rounded
    half to even to ``digits`` decimals (as ``format(n / unit, ".1f")`` rounds) in integer
    arithmetic: a float quotient loses digits past 2^53 (``4577636718750002.77`` would print as
    ``...003.0``)."""
    scale = 10 ** digits
    q, r = divmod(n * scale, unit)
    if 2 * r > unit or (2 * r == unit and q % 2):
        q += 1
    whole, frac = divmod(q, scale)
    return f"{whole}.{frac:0{digits}d} {name}" if digits else f"{whole} {name}"


# ---- dtypes -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Dtype:
    """An element type: its ``bits`` per element and the ``canonical`` spelling its aliases share."""

    name: str
    bits: int
    canonical: str


def _dtypes(*rows: tuple[str, int, str | None]) -> dict[str, Dtype]:
    return {name: Dtype(name, bits, canon or name) for name, bits, canon in rows}


#: Element types in the order the help texts list them. Aliases name the same format: ``fp8`` is
#: OCP FP8 E4M3 (OCP 8-bit Floating Point Specification 1.0), the format Hopper-class GPUs and
#: DeepSeek-V3's weights use.
DTYPES: dict[str, Dtype] = _dtypes(
    ("bf16", 16, None), ("fp16", 16, None), ("f16", 16, "fp16"), ("fp32", 32, None), ("f32", 32, "fp32"),
    ("fp64", 64, None), ("f64", 64, "fp64"), ("fp8", 8, "fp8_e4m3"), ("fp8_e4m3", 8, None), ("fp8_e5m2", 8, None),
    ("int8", 8, None), ("int4", 4, None), ("uint8", 8, None), ("int16", 16, None), ("int32", 32, None),
    ("int64", 64, None),
)


def dtype_bits(name: str) -> int:
    """Bits per element of dtype ``name``; raises ``KeyError`` for a word the resolver rejected."""
    return DTYPES[name].bits


def canonical_dtype(name: str) -> str:
    """The canonical spelling of a dtype (``f32`` -> ``fp32``, ``fp8`` -> ``fp8_e4m3``); a word that
    is not a dtype is returned unchanged."""
    d = DTYPES.get(name)
    return d.canonical if d is not None else name


# ---- codecs -----------------------------------------------------------------------------------


class Arith(Protocol):
    """The two operations beyond ``+``, ``-`` and ``*`` that a bound formula needs, so one formula
    evaluates over Python integers (``INT_ARITH``) and over SMT terms (the obligations' own)."""

    def div(self, a: Any, c: int) -> Any:
        """``floor(a / c)`` for a positive constant ``c``."""
        ...

    def ite(self, cond: Any, then: Any, other: Any) -> Any:
        """``then`` if ``cond`` else ``other``."""
        ...


class _IntArith:
    def div(self, a: int, c: int) -> int:
        return a // c

    def ite(self, cond: bool, then: int, other: int) -> int:
        return then if cond else other


INT_ARITH: Arith = _IntArith()


@dataclass(frozen=True)
class Codec:
    """A compression codec and its worst-case output size for ``n`` input bytes: an expansion
    bound from the codec's own header, never an average ratio (BRIEF section 3, FX-XF-001).

    ``formula`` is the bound as documentation prints it, ``source`` where it comes from, and
    ``bound_with(n, arith)`` evaluates it over integers or terms.
    """

    name: str
    formula: str
    source: str
    bound_with: Callable[[Any, Arith], Any]

    def bound(self, n: int) -> int:
        """Worst-case output bytes for ``n >= 0`` input bytes."""
        return self.bound_with(n, INT_ARITH)


_KIB128 = 128 * KIB

#: Codecs by name, in the order the help texts list them.
CODECS: dict[str, Codec] = {c.name: c for c in (
    Codec("lz4", "n + n/255 + 16", "LZ4_COMPRESSBOUND, lz4.h",
          lambda n, a: n + a.div(n, 255) + 16),
    Codec("zstd", "n + n/256 + (n < 128 KiB ? (128 KiB - n)/2048 : 0)", "ZSTD_COMPRESSBOUND, zstd.h",
          lambda n, a: n + a.div(n, 256) + a.ite(n < _KIB128, a.div(_KIB128 - n, 2048), 0)),
    Codec("deflate", "n + n/4096 + n/16384 + n/33554432 + 13", "compressBound, zlib's compress.c",
          lambda n, a: n + a.div(n, 4096) + a.div(n, 16384) + a.div(n, 33554432) + 13),
    Codec("snappy", "32 + n + n/6", "MaxCompressedLength, snappy.cc",
          lambda n, a: n + a.div(n, 6) + 32),
)}

#: Checksum algorithms: a checksum travels in the edge's descriptor, not in the destination.
CHECKSUMS: tuple[str, ...] = ("crc32c", "crc32", "xxh64", "adler32")

# ---- operators --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operator:
    """A reduction or map-merge operator. ``commutes`` when it is associative and commutative, so
    concurrent uses commute (Regent-style reduction privileges, BRIEF section 2). ``fold(old, v)``
    is the value an ``update`` leaves, for the operators that commute."""

    name: str
    commutes: bool
    fold: Callable[[int, int], int] | None = None


OPERATORS: dict[str, Operator] = {o.name: o for o in (
    Operator("sum", True, lambda a, b: a + b), Operator("add", True, lambda a, b: a + b),
    Operator("max", True, max), Operator("min", True, min), Operator("prod", True, lambda a, b: a * b),
    Operator("and", True, lambda a, b: a & b), Operator("or", True, lambda a, b: a | b),
    Operator("xor", True, lambda a, b: a ^ b), Operator("count", True, lambda a, _b: a + 1),
    Operator("last", False), Operator("first", False), Operator("sub", False), Operator("avg", False),
)}

#: Operators that are associative and commutative.
AC_OPS: frozenset[str] = frozenset(o.name for o in OPERATORS.values() if o.commutes)

# ---- fabric -----------------------------------------------------------------------------------


class DeviceKind(Enum):
    """Device kinds of BRIEF section 1 (plus ``pcie_switch``, which NCCL topologies list, and
    ``npu`` and ``nvme``, issue 10).

    ``npu``: an AI accelerator that is not a CUDA GPU (Gaudi, Ascend, TPU-like); its hooks are
    those of a GPU (kernel launch/exit, copy done, fault) but no CUDA entry point realises them.
    ``nvme``: an NVMe controller; its hooks are the submission queue tail doorbell write
    (``SQyTDBL``), the posting of a completion queue entry and the end of its DMA (NVM Express
    Base Specification 2.0: the queue model and the controller's doorbell properties). Its
    namespaces are non-volatile memory, so a space on it may be ``persistent``; its controller
    memory buffer is not, so ``persistent`` stays explicit.
    """

    GPU = "gpu"
    DPU = "dpu"
    NIC = "nic"
    CPU = "cpu"
    CXL_MEM = "cxl_mem"
    CXL_SWITCH = "cxl_switch"
    PCIE_SWITCH = "pcie_switch"
    NPU = "npu"
    NVME = "nvme"


#: Link kinds: ``smp`` is the inter-socket interconnect (QPI/UPI/xGMI: NCCL's SYS path).
LINK_KINDS: tuple[str, ...] = ("nvlink", "pcie", "cxl", "rdma", "ethernet", "smp")

#: Link kinds over which a read request cannot pass the posted writes before it on the same path,
#: so that its completion pushes them to their memory (a read-back: FX-ORD-003's read and persist
#: rules). PCIe Base Specification, section 2.4.1 (a read request does not pass a posted request).
#: Not ``cxl``: a host's load of CXL memory (CXL.mem) may be served from its own cache and need not
#: reach the device, and CXL.mem orders a read only after writes to the same address; nor the
#: other kinds, for which no such rule is cited.
READ_BACK_KINDS: frozenset[str] = frozenset({"pcie"})

#: Link kinds whose memory writes are posted whatever order the link is declared with: a PCIe
#: Memory Write Request is a posted request, complete at its sender before it reaches memory
#: (PCIe Base Specification, section 2.4.1, "Ordering Rules Summary", posted requests), so a
#: ``pcie`` link declared ``unordered`` (Relaxed Ordering on: a write may also pass another) needs
#: a flush before a reader on another device as a ``posted`` one does (FX-ORD-003), and keeps no
#: order for the rules that rest on one. ``graph.is_posted`` (and the simulator's posted rule).
POSTED_WRITE_KINDS: frozenset[str] = frozenset({"pcie"})

#: Link kinds that carry network packets, not memory transactions: the device at either end of
#: one terminates the transport (an RDMA NIC, InfiniBand Architecture Specification vol. 1, ch. 9;
#: RoCE over Ethernet) and issues the memory reads and writes on its other side with its own
#: engine. A third-party transfer whose only path crosses such a link at its driver is therefore
#: moved by the driver's engine on that side (``PolicyGraph.effective_via``, the simulator's
#: ``world.pinned_route``, the certificate checker's ``routes._leg``).
NETWORK_KINDS: frozenset[str] = frozenset({"rdma", "ethernet"})

#: Link kinds over which posted writes of one requester along one path arrive in the order they
#: were sent, so that a completion entry written after a transfer brings it (FX-ORD-003's
#: completion entries): PCIe Base Specification, section 2.4.1 (a posted request does not pass a
#: posted request). Not ``rdma``: the InfiniBand specification does not promise an RDMA WRITE's data
#: is in memory when a later RDMA WRITE's is; nor ``cxl`` (CXL.cache orders no writes to different
#: addresses), nor the other kinds, for which no such rule is cited.
ENTRY_KINDS: frozenset[str] = frozenset({"pcie"})

#: The bytes a device writes as one posted request, whole or not at all, for a reader that saw any
#: of them (FX-ORD-003's completion entries, an entry's own bytes): in host memory one naturally
#: aligned 64-byte block (a cache line: a completion queue entry, which drivers poll by an owner or
#: phase bit inside it, mlx5's 64 B CQE, NVMe's 16 B one, then read whole); elsewhere (GPU memory,
#: which CUDA lets see third-party writes out of order) one naturally aligned 8-byte word.
ENTRY_BLOCK_HOST = 64
ENTRY_BLOCK_OTHER = 8


class LinkOrder(Enum):
    """Ordering semantics of a link (BRIEF section 1).

    ``ORDERED``: completions in submission order. ``UNORDERED``: none. ``POSTED``: a write completes
    at the sender before it is visible at the receiver; only a flush of the link makes it visible.
    """

    ORDERED = "ordered"
    UNORDERED = "unordered"
    POSTED = "posted"


# ---- maps -------------------------------------------------------------------------------------

MAP_TYPES: tuple[str, ...] = ("hash", "array", "ringbuf")

#: Map key and value scalars and their widths in bits; a ``device`` value is a device index (u32).
MAP_SCALAR_BITS: dict[str, int] = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "device": 32}


class ClassKind(Enum):
    """Consistency classes (BRIEF section 1), weakest first except ``LOCAL``; then ``CONST``
    (issue 10): entries set before the flow and never written by an edge, so every read sees the
    initial value. Ids are positions in this order (the map queries' ``map_class`` facts), so a
    new class goes last."""

    LOCAL = "local"
    PER_DEVICE = "per_device"
    EVENTUAL = "eventual"
    CAUSAL = "causal"
    LINEARIZABLE = "linearizable"
    CONST = "const"


# ---- ownership --------------------------------------------------------------------------------


class ReleaseKind(Enum):
    """Ways a region's use ends (BRIEF section 1, FX-OWN-004)."""

    FREE = "free"
    EVICT = "evict"
    UNLOCK = "unlock"
    RETURN_POOL = "return_pool"
    REUSE = "reuse"
