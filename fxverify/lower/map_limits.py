"""Map sizes the target can create: checked on a ``Plan`` before any C is compiled or loaded.

Takes a ``Plan``; returns one FX-BPF-011 diagnostic per map (policy or runtime) whose declared size
the kernel's map constructors refuse, with the reason and the map declaration's ``.fx`` span, so a
map of 2^32 entries is reported at its declaration instead of as a verifier rejection with an empty
log. The rules are the kernel's (``kernel/bpf/syscall.c``, ``arraymap.c``, ``hashtab.c``,
``ringbuf.c``); bpftime and the DPU runtime take the same ``union bpf_attr`` map attributes, so the
same bounds apply to every target:

- every map: ``max_entries`` is a ``__u32`` field of ``union bpf_attr`` (``BPF_MAP_CREATE``) and must
  be at least 1; ``key_size`` and ``value_size`` are ``__u32`` too;
- array (``array_map_alloc_check``): ``key_size`` is 4, ``value_size`` is 1 .. ``KMALLOC_MAX_SIZE``
  (``MAX_VALUE_BYTES``, the smallest across configurations), and the element storage,
  ``max_entries * round_up(value_size, 8)`` plus the header, stays below ``U32_MAX - PAGE_SIZE``
  (``array_map_alloc``: "make sure there is no u32 overflow later in round_up()");
- hash (``htab_map_alloc_check``, ``htab_map_alloc``): ``key_size + value_size`` below
  ``KMALLOC_MAX_SIZE - sizeof(struct htab_elem)``; the key at most ``MAX_BPF_STACK`` (512) bytes,
  since a program passes it from its stack; ``max_entries`` at most 2^31, and its bucket array,
  ``roundup_pow_of_two(max_entries) * sizeof(struct bucket)`` (16 bytes on 64-bit), within
  ``U32_MAX``: at most 2^27 entries. Hash maps are preallocated (no ``BPF_F_NO_PREALLOC``), so
  every element (``sizeof(struct htab_elem)`` + key + value, each rounded to 8) is allocated at
  creation; fxverify holds that storage to ``MAX_MAP_BYTES`` like an array's (the kernel itself
  only fails such an allocation when memory runs out, so this bound is fxverify's own);
- ring buffer (``ringbuf_map_alloc``): ``max_entries`` is the data size in bytes, a power of two
  and a multiple of the page size; as a ``__u32`` the largest is 2^31.

Emits FX-BPF-011.
"""

from __future__ import annotations

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.lower.emit_c import RINGBUF_BYTES, is_ringbuf, ringbuf_bytes
from fxverify.lower.plan import MapPlan, Plan
from fxverify.lower.targets import BPF_MAP_TYPE_HASH
from fxverify.source import NO_SPAN, Span

#: ``union bpf_attr`` map fields are ``__u32`` (``include/uapi/linux/bpf.h``).
U32_MAX = (1 << 32) - 1
#: Page size the limits assume (x86-64, arm64 with 4 KiB pages): the smallest, so the strictest.
PAGE_SIZE = 4096
#: ``KMALLOC_MAX_SIZE`` with the smallest common configuration (SLUB, ``MAX_PAGE_ORDER`` 10, 4 KiB
#: pages: ``1 << (10 + 12)``): the largest value one element may have.
MAX_VALUE_BYTES = 1 << 22
#: ``MAX_BPF_STACK`` (``include/linux/filter.h``): a hash key is built on the program's stack.
MAX_KEY_BYTES = 512
#: ``sizeof(struct htab_elem)`` on 64-bit kernels (``kernel/bpf/hashtab.c``), and of ``struct bucket``.
HTAB_ELEM_BYTES = 48
BUCKET_BYTES = 16
#: Largest element storage of one map, in bytes: the array check ``array_size >= U32_MAX - PAGE_SIZE``
#: refuses it from there (``array_map_alloc``), and preallocated hash maps are held to the same.
MAX_MAP_BYTES = U32_MAX - PAGE_SIZE
#: Largest hash map: 2^31 entries (``htab_map_alloc``), and a bucket array within ``U32_MAX`` bytes.
MAX_HASH_ENTRIES = 1 << 27
#: Header of ``struct bpf_array`` before its values (a bound from above; the exact size varies).
_ARRAY_HEADER = 4096


def _round8(n: int) -> int:
    return (n + 7) // 8 * 8


def _problem(name: str, what: str, span: Span, reason: str, help: str) -> Diagnostic:
    where = span if span != NO_SPAN else None
    return diagnostic(codes.BPF_011, f"map `{name}` cannot be created: {reason}", where, what, help=help)


def map_problems(hash_map: bool, max_entries: int, key_size: int, value_size: int) -> list[str]:
    """Why the kernel refuses a hash map (``hash_map``) or an array (every other map type but ring
    buffers, which ``ringbuf_problem`` checks) of ``max_entries`` entries and ``key_size`` and
    ``value_size`` bytes: one reason per broken rule of the module docstring, empty when it can be
    created."""
    out = []
    if max_entries < 1:
        out.append(f"max_entries {max_entries} is not positive (the kernel refuses an empty map)")
    elif max_entries > U32_MAX:
        out.append(f"max_entries {max_entries} does not fit the kernel's u32 max_entries (at most {U32_MAX})")
    if hash_map:
        if key_size > MAX_KEY_BYTES:
            out.append(f"a {key_size}-byte key exceeds the {MAX_KEY_BYTES}-byte BPF stack it is built on")
        if key_size + value_size >= MAX_VALUE_BYTES - HTAB_ELEM_BYTES:
            out.append(f"key and value of {key_size + value_size} bytes exceed the kernel's largest element "
                       f"({MAX_VALUE_BYTES - HTAB_ELEM_BYTES} bytes)")
        if 1 <= max_entries <= U32_MAX and max_entries > MAX_HASH_ENTRIES:
            out.append(f"max_entries {max_entries} exceeds the {MAX_HASH_ENTRIES} entries whose bucket array fits "
                       "the kernel's u32 bound")
        elem = HTAB_ELEM_BYTES + _round8(key_size) + _round8(value_size)
    else:
        if value_size > MAX_VALUE_BYTES:
            out.append(f"a {value_size}-byte value exceeds KMALLOC_MAX_SIZE ({MAX_VALUE_BYTES} bytes)")
        elem = _round8(value_size)
    total = max_entries * elem + (0 if hash_map else _ARRAY_HEADER)
    if 1 <= max_entries <= U32_MAX and total >= MAX_MAP_BYTES and not any("bucket" in r for r in out):
        out.append(f"{max_entries} entries of {elem} bytes need {total} bytes, over the kernel's bound of "
                   f"{MAX_MAP_BYTES} bytes for one map")
    return out


def ringbuf_problem(data_bytes: int) -> str | None:
    """Why the kernel refuses a ring buffer of ``data_bytes`` bytes, or ``None``."""
    if data_bytes > 1 << 31:
        return f"a ring buffer of {data_bytes} bytes does not fit the kernel's u32 max_entries (at most 2^31 bytes)"
    if data_bytes < PAGE_SIZE or data_bytes & (data_bytes - 1):
        return f"a ring buffer of {data_bytes} bytes is not a power-of-two multiple of the {PAGE_SIZE}-byte page"
    return None


def _policy_map(m: MapPlan) -> list[str]:
    if is_ringbuf(m):
        reason = ringbuf_problem(ringbuf_bytes(m))
        return [f"{reason} ({m.decl.max_entries} records of 16 bytes)"] if reason else []
    return map_problems(m.realisation.map_type == BPF_MAP_TYPE_HASH, m.decl.max_entries, m.key_size, m.value_size)


def plan_map_problems(plan: Plan) -> list[Diagnostic]:
    """FX-BPF-011 for every map of ``plan`` the target cannot create: policy maps at their
    declaration, the runtime's tables (sized by the policy's edges, ops and regions) at the policy
    declaration. Empty when every map can be created."""
    from fxverify.lower.artifacts import RUNTIME_MAPS, struct_size

    out = []
    for m in plan.maps:
        for reason in _policy_map(m):
            out.append(_problem(m.decl.name, "declared here", m.decl.span, reason,
                                "declare fewer entries, or split the map; the kernel's map limits are in "
                                "`fxverify explain FX-BPF-011`"))
    for name, value, _what in RUNTIME_MAPS:
        vsize = struct_size(value) if isinstance(value, str) else value
        for reason in map_problems(False, plan.max_entries(name), 4, vsize):
            out.append(_problem(name, "policy", plan.policy.span, reason,
                                "the runtime table grows with the policy's edges and regions: split the policy"))
    reason = ringbuf_problem(RINGBUF_BYTES)
    assert reason is None, reason  # INVARIANT: the events ring buffer has a valid fixed size
    return out
