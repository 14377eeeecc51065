"""The single registry of diagnostic codes, and everything about each code.

Every code fxverify can emit is a typed constant of this module (``codes.ORD_002``), declared once
with its family, default severity, title, rule, why it matters and its example: a failing and a
fixed corpus policy for obligation codes, a failing line and its fix for the others. A misspelt
constant fails where it is used (at import for the class attributes of obligations), and nothing
else in fxverify spells a code as a string. ``fxverify explain`` and ``specs/codes.md`` are
generated from these entries (``fxverify.diagnostics.explain``). A code's severity, family and
example shapes are ``fxverify.diagnostics.kinds``, re-exported here.

Obligation codes and their meaning are normative in BRIEF section 3; the input codes (FX-SYN-,
FX-NAM-, FX-TYP-, FX-LIM-, FX-SUP-, FX-GEN-) and the command-line codes (FX-USE-, FX-IO-,
FX-GATE-) are ours. Emits no diagnostics itself.
"""

from __future__ import annotations

from typing import Any

# Re-exported: the kinds are used as codes.X (codes.Severity, codes.Family.ORDERING).
from fxverify.diagnostics.kinds import (  # noqa: F401
    OBLIGATION_FAMILIES, CorpusExample, Family, InlineExample, Severity,
)


class Code(str):
    """A registry code. It is its identifier (``"FX-ORD-002"``) wherever a string is needed (JSON,
    SARIF, fingerprints) and carries its registry entry as attributes: ``family``, ``severity``
    (the default), ``title`` (a few words), ``rule`` (one sentence), ``why`` (what goes wrong on
    real hardware when the rule is broken) and ``example``. Immutable."""

    family: Family
    severity: Severity
    title: str
    rule: str
    why: str
    example: CorpusExample | InlineExample | None

    def __new__(cls, ident: str, family: Family, severity: Severity, title: str, rule: str, why: str,
                example: CorpusExample | InlineExample | None = None) -> Code:
        self = super().__new__(cls, ident)
        for k, v in (("family", family), ("severity", severity), ("title", title), ("rule", rule), ("why", why),
                     ("example", example)):
            object.__setattr__(self, k, v)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self} is immutable")

    def __reduce__(self) -> tuple:
        # Unpickled codes (worker processes) are the registry's own objects.
        return (lookup_strict, (str(self),))


REGISTRY: dict[str, Code] = {}


def _code(ident: str, family: Family, severity: Severity, title: str, rule: str, why: str,
          example: CorpusExample | InlineExample | None = None) -> Code:
    c = Code(ident, family, severity, title, rule, why, example)
    assert ident not in REGISTRY, ident  # INVARIANT: one declaration per code
    REGISTRY[ident] = c
    return c


def lookup(ident: str) -> Code | None:
    """The code spelt ``ident`` (user input: ``explain``, suppressions), or ``None``."""
    return REGISTRY.get(ident)


def lookup_strict(ident: str) -> Code:
    """The code spelt ``ident``; raises ``KeyError`` when it is not registered (a stored record
    from another version, which callers treat as corrupted)."""
    return REGISTRY[ident]


_E, _W, _N = Severity.ERROR, Severity.WARNING, Severity.NOTE
F = Family
_INPUT_WHY = "the policy cannot be read as written, so nothing about it can be checked until this is fixed"
_USE_WHY = "the command cannot run as asked, so it checked nothing; fix the command line"


def _ex(fail: str, fixed: str) -> CorpusExample:
    return CorpusExample(fail, fixed)


# ---- ordering (BRIEF 3) ---------------------------------------------------------------------
ORD_001 = _code(
    "FX-ORD-001", F.ORDERING, _E, "cyclic happens-before",
    "the happens-before constraints of the policy form a cycle, so no schedule exists",
    "the edges on a cycle, and every edge after them, can never start: the flow deadlocks. fxverify then checks no "
    "other obligation of the policy (edges off the cycle may still race), so a cycle always fails the check: it cannot "
    "be ignored, suppressed or baselined",
    _ex("corpus/ordering/fail/hb-cycle.fx", "corpus/ordering/ok/spill-then-verify.fx"))
ORD_002 = _code(
    "FX-ORD-002", F.ORDERING, _E, "data race",
    "two conflicting accesses (one writes a shared byte) are not ordered by happens-before",
    "a racing read sees a half-written buffer (torn KV blocks, stale activations) or two writes interleave; "
    "such bugs appear only under some timings and are nearly impossible to reproduce",
    _ex("corpus/ordering/fail/kv-offload-unordered.fx", "corpus/ordering/ok/kv-offload-ordered.fx"))
ORD_003 = _code(
    "FX-ORD-003", F.ORDERING, _E, "posted write read or persisted before a flush",
    "bytes written over a `posted` link are read without a flush of that link (or a read-back by the writer's "
    "device over the write's one route) in between, by another device, or by the writer's device over a route "
    "that may differ from the write's; or a write that `persist`s its bytes over such a link is followed by no "
    "flush of it (nor by a read-back over its one route)",
    "a posted write completes at the sender before it is visible at the receiver; without a flush the "
    "reader may see the old bytes (PCIe keeps a read behind the same requester's posted writes only along "
    "one path), and a checkpoint may never reach its persistent memory",
    _ex("corpus/ordering/fail/posted-read-no-flush.fx", "corpus/ordering/ok/posted-read-after-flush.fx"))
ORD_004 = _code(
    "FX-ORD-004", F.ORDERING, _E, "ordering requirement cannot be met",
    "the edge requires in-order delivery but its fabric path has an unordered or posted link",
    "in-order delivery over a link that reorders is a promise the fabric does not keep: later data can "
    "overtake earlier data",
    _ex("corpus/ordering/fail/in-order-over-unordered-link.fx", "corpus/ordering/ok/in-order-over-ordered-links.fx"))
INIT_001 = _code(
    "FX-INIT-001", F.ORDERING, _E, "read of bytes never written",
    "a read (a `read`, the source of a `move` or `reduce`, or the destination a `reduce` accumulates "
    "into) touches a byte that no write happens-before and that no `init` region or space declares loaded",
    "the consumer computes on whatever the memory held before: stale KV pages, missing scales, the tail "
    "of a buffer the copy never reached; nothing crashes, the output is silently wrong",
    _ex("corpus/ordering/fail/fp8-page-scales-not-moved.fx", "corpus/ordering/ok/fp8-page-scales-moved.fx"))
ORD_005 = _code(
    "FX-ORD-005", F.ORDERING, _E, "non-coherent read without write-back and invalidate",
    "bytes of a `noncoherent` space written through one cache (a host's, or the memory itself for a DMA "
    "engine or near-memory engine) are read through another, without the writer's write-back and then the "
    "reader's invalidate (each on the side that has a host cache) ordered between the write and the read",
    "hosts that share CXL memory without coherence see each other's stores only through memory: the writer's "
    "cache may still hold them (no write-back) or the reader's cache may still hold the old line (no "
    "invalidate), so the reader sees stale bytes, such as a device header two hosts initialise differently",
    _ex("corpus/ordering/fail/cxl-header-plain-stores.fx", "corpus/ordering/ok/cxl-header-writeback-invalidate.fx"))
ORD_006 = _code(
    "FX-ORD-006", F.ORDERING, _E, "notification before its transfer completes",
    "an edge that `notifies` transfers may start before one of them has finished",
    "a completion notification or doorbell carries happens-before only from transfers that have completed; "
    "a consumer woken by an early notification reads a batch that is still in flight",
    _ex("corpus/ordering/fail/notify-batch-in-flight.fx", "corpus/ordering/ok/notify-after-batch.fx"))
# ---- alias sets -------------------------------------------------------------------------------
ALIAS_001 = _code(
    "FX-ALIAS-001", F.ALIAS, _E, "alias sets overlap",
    "footprints promised disjoint by different alias sets share an address",
    "code optimised under a disjointness promise (like C `restrict`) silently corrupts data when the "
    "footprints overlap after all",
    _ex("corpus/alias/fail/strided-overlap.fx", "corpus/alias/ok/interleaved-strided.fx"))
ALIAS_002 = _code(
    "FX-ALIAS-002", F.ALIAS, _E, "illegal in-place edge",
    "an edge's source and destination overlap and the edge is not a legal in-place operation",
    "an in-place operation at the wrong offset reads bytes it has already overwritten",
    _ex("corpus/alias/fail/allgather-inplace-wrong-offset.fx", "corpus/alias/ok/allgather-inplace-rank-offset.fx"))
ALIAS_003 = _code(
    "FX-ALIAS-003", F.ALIAS, _E, "footprint out of bounds",
    "a footprint touches bytes outside its region",
    "an out-of-bounds footprint reads or writes a neighbouring region: another tenant's KV cache, "
    "or memory the device does not map at all",
    _ex("corpus/alias/fail/block-index-out-of-bounds.fx", "corpus/alias/ok/block-index-in-bounds.fx"))
# ---- ownership --------------------------------------------------------------------------------
OWN_001 = _code(
    "FX-OWN-001", F.OWNERSHIP, _E, "access without ownership",
    "a device accesses a region it neither owns nor leases at that time",
    "a device touching a region it neither owns nor leases races with the owner and breaks "
    "isolation between devices",
    _ex("corpus/ownership/fail/dpu-reads-unleased-kv.fx", "corpus/ownership/ok/dpu-reads-leased-kv.fx"))
OWN_002 = _code(
    "FX-OWN-002", F.OWNERSHIP, _E, "access while in transit",
    "a region is accessed while another edge is handing it off",
    "during a handoff the bytes are in flight; reading them then returns a mix of old and new data",
    _ex("corpus/ownership/fail/read-during-handoff.fx", "corpus/ownership/ok/read-after-handoff.fx"))
OWN_003 = _code(
    "FX-OWN-003", F.OWNERSHIP, _E, "handoff by a non-owner",
    "a handoff is made by a device that does not own the region at that time (double handoff), "
    "or one edge hands a region's bytes to two owners",
    "a handoff by a device that no longer owns the region duplicates ownership: two devices believe "
    "they may write",
    _ex("corpus/ownership/fail/double-handoff.fx", "corpus/ownership/ok/handoff-round-trip.fx"))
OWN_004 = _code(
    "FX-OWN-004", F.OWNERSHIP, _E, "use after release",
    "a release of a region is not happens-after every access to it (release while in flight)",
    "freeing, evicting or reusing memory while a copy or DMA still uses it is a use-after-free on the "
    "fabric: the transfer reads or writes memory that now belongs to someone else",
    _ex("corpus/ownership/fail/pinned-free-before-copy.fx", "corpus/ownership/ok/pinned-free-after-copy.fx"))
OWN_005 = _code(
    "FX-OWN-005", F.OWNERSHIP, _E, "final owner not unique or not as declared",
    "the owner at the end of the flow differs between schedules or from the declared final owner",
    "if the final owner depends on timing, the next flow starts from an owner nobody can predict",
    _ex("corpus/ownership/fail/final-owner-mismatch.fx", "corpus/ownership/ok/final-owner-as-declared.fx"))
OWN_006 = _code(
    "FX-OWN-006", F.OWNERSHIP, _E, "allocation or release out of order",
    "the allocations and releases of a region are not ordered by happens-before, or do not alternate "
    "(an `alloc` of an allocated region, two releases with no `alloc` between, a release of a pooled "
    "region before its first `alloc`)",
    "a block pool hands a block to one request at a time; a block allocated again before its last "
    "request released it is shared by two requests, and a double free returns it to the pool twice",
    _ex("corpus/ownership/fail/realloc-before-free.fx", "corpus/ownership/ok/block-pool-reuse.fx"))
# ---- maps -------------------------------------------------------------------------------------
MAP_001 = _code(
    "FX-MAP-001", F.MAPS, _E, "local map used off its device",
    "a `local(dev)` map is accessed from a hook on another device",
    "a `local` map lives in one device's memory; another device's program reads a different, empty copy",
    _ex("corpus/maps/fail/local-map-off-device.fx", "corpus/maps/ok/local-map-on-device.fx"))
MAP_002 = _code(
    "FX-MAP-002", F.MAPS, _E, "lost map update",
    "concurrent writes to a shared map entry whose merge is not commutative and associative",
    "concurrent non-commutative updates lose one of the writes (a lost update)",
    _ex("corpus/maps/fail/lost-owner-update.fx", "corpus/maps/ok/ordered-owner-update.fx"))
MAP_003 = _code(
    "FX-MAP-003", F.MAPS, _E, "guard read may be stale",
    "a guard read on a class that cannot guarantee it sees the write it depends on",
    "a guard that may read a stale value lets data move before it is ready",
    _ex("corpus/maps/fail/eventual-guard.fx", "corpus/maps/ok/causal-guard.fx"))
MAP_004 = _code(
    "FX-MAP-004", F.MAPS, _E, "per-device map read as one value",
    "a `per_device` map is read as one value without an aggregate after all its writers",
    "a per-device map holds one slot per device; reading one slot as the total undercounts",
    _ex("corpus/maps/fail/per-gpu-counter-read-as-one.fx", "corpus/maps/ok/per-gpu-counter-aggregated.fx"))
MAP_005 = _code(
    "FX-MAP-005", F.MAPS, _E, "const map written by an edge",
    "an edge writes, updates or aggregates a `const` map, whose entries are set before the flow",
    "a `const` map is loaded read-only for programs (BPF_F_RDONLY_PROG): the kernel verifier rejects "
    "a program that writes it, and every reader relies on seeing the value loaded before the flow",
    _ex("corpus/maps/fail/const-map-written.fx", "corpus/maps/ok/const-map-read-only.fx"))
MAP_101 = _code(
    "FX-MAP-101", F.MAPS, _N, "consistency class stronger than needed",
    "the declared class is stronger than the weakest class that discharges every obligation",
    "a stronger consistency class costs synchronisation on every access; the weakest class that "
    "still proves the policy is cheaper")
# ---- transforms -------------------------------------------------------------------------------
XF_001 = _code(
    "FX-XF-001", F.TRANSFORMS, _E, "destination smaller than worst-case output",
    "the destination is smaller than the worst-case output of the transform chain",
    "compression can expand incompressible data; sizing by the average ratio overflows the destination "
    "on the worst input",
    _ex("corpus/transforms/fail/compress-average-ratio.fx", "corpus/transforms/ok/compress-worst-case.fx"))
XF_002 = _code(
    "FX-XF-002", F.TRANSFORMS, _E, "checksum invalidated",
    "a checksum is invalidated by a later size- or value-changing transform, a persist into a space that "
    "declares `checksum ALGO` has no valid checksum of it over its final bytes, or a write lands on "
    "checksummed bytes after the checksum was taken and before anyone consumed them",
    "a checksum computed before a size- or value-changing transform, or before the last write to its "
    "bytes, no longer matches the bytes stored, so corruption goes undetected or good data is rejected",
    _ex("corpus/transforms/fail/checksum-before-compress.fx", "corpus/transforms/ok/compress-then-checksum-persist.fx"))
XF_003 = _code(
    "FX-XF-003", F.TRANSFORMS, _E, "dtype, layout or byte accounting mismatch",
    "producer and consumer disagree on dtype or layout, or bytes do not add up",
    "a consumer that reads another dtype or layout, or only part of a multi-part layout, computes on "
    "garbage",
    _ex("corpus/transforms/fail/quantize-dtype-mismatch.fx", "corpus/transforms/ok/quantize-with-scales.fx"))
XF_004 = _code(
    "FX-XF-004", F.TRANSFORMS, _E, "unsafe reduction or lost accumulation",
    "a reduction with a non-commutative or non-associative operator over unordered inputs, "
    "a plain write that overwrites accumulated bytes before anyone read them, or an accumulation a "
    "consumer `expects` that a producer does not reach (another operator, too late, or overwritten)",
    "floating-point reductions in an unordered or mixed way give different results from run to run, and "
    "a plain write over accumulated bytes loses the accumulation",
    _ex("corpus/transforms/fail/mixed-reduce-ops.fx", "corpus/transforms/ok/same-reduce-op.fx"))
# ---- fabric and hooks -------------------------------------------------------------------------
HOOK_001 = _code(
    "FX-HOOK-001", F.HOOKS, _E, "no fabric path or driver",
    "there is no fabric path between source and destination, or the hook's device is not on it",
    "a transfer with no fabric path, or driven by a device off that path, cannot be executed at all",
    _ex("corpus/hooks/fail/no-path-to-expander.fx", "corpus/hooks/ok/path-over-nvlink.fx"))
HOOK_002 = _code(
    "FX-HOOK-002", F.HOOKS, _E, "undeclared hook",
    "an edge is driven by a hook that its device does not declare",
    "a program attached to a hook the device does not have never runs",
    _ex("corpus/hooks/fail/undeclared-hook.fx", "corpus/hooks/ok/declared-hook.fx"))
# ---- solver and internals ---------------------------------------------------------------------
SMT_001 = _code(
    "FX-SMT-001", F.SOLVER, _E, "verdict unknown",
    "the solver returned unknown (timeout or resource limit); unknown is never a pass",
    "an undecided obligation proves nothing: a gate that passed on unknown would let real bugs through",
    _ex("corpus/solver/fail/budget-exhausted.fx", "corpus/solver/ok/budget-sufficient.fx"))
INT_001 = _code(
    "FX-INT-001", F.INTERNAL, _E, "internal error",
    "an internal invariant broke; please report it with the policy that triggered it",
    "fxverify's own invariant broke, so none of its answers for this policy can be trusted")
# ---- eBPF lowering (specs/lowering.md) --------------------------------------------------------
BPF_001 = _code(
    "FX-BPF-001", F.LOWERING, _E, "policy not proved",
    "only a fully proved policy is lowered; `--allow-unproved` stamps the artifacts as unproved",
    "programs lowered from an unproved policy enforce rules that the checker found broken",
    InlineExample("fxverify lower corpus/ordering/fail/kv-offload-unordered.fx -o out",
                  "fxverify lower corpus/ordering/ok/kv-offload-ordered.fx -o out", "command"))
BPF_002 = _code(
    "FX-BPF-002", F.LOWERING, _E, "consistency class not realisable on the target",
    "the target has no map type that gives the map's consistency class; it is never downgraded",
    "a map type weaker than the declared class lets the programs see stale or lost values that the proof ruled out",
    InlineExample("# a map class the chosen --target has no map type for (specs/lowering.md, class table)",
                  "# pick a class the target realises, or another --target", "situation"))
BPF_003 = _code(
    "FX-BPF-003", F.LOWERING, _E, "policy exceeds a lowering limit",
    "a key type, device count or table size has no realisation in the target's map layout",
    "tables that do not fit the target's maps cannot be loaded, or would be cut short",
    InlineExample("# a policy whose tables exceed the target's map layout (key type, device count, table size)",
                  "# split the policy, or narrow its key types", "situation"))
BPF_004 = _code(
    "FX-BPF-004", F.LOWERING, _E, "program rejected by the Linux verifier",
    "the kernel refused to load a lowered program; the verifier log points at `.fx` spans",
    "a program the kernel refuses never runs, so none of its guards protect the transfers",
    InlineExample("fxverify lower p.fx -o out --kernel-verify   # a program the Linux verifier refuses",
                  "# a bug in fxverify: report it with the rewritten verifier log", "command"))
BPF_005 = _code(
    "FX-BPF-005", F.LOWERING, _E, "compilation failed",
    "clang could not compile the emitted C for the BPF target",
    "without an object file there is nothing to load or run",
    InlineExample("fxverify lower p.fx -o out   # clang fails on the emitted C",
                  "# a bug in fxverify, or a clang without the BPF target: `clang -print-targets`", "command"))
BPF_006 = _code(
    "FX-BPF-006", F.LOWERING, _E, "kernel and simulator disagree",
    "a program run with BPF_PROG_TEST_RUN decided differently from the concrete simulator",
    "when the kernel decides differently from the simulator, the programs do not enforce what was proved",
    InlineExample("fxverify lower p.fx -o out --kernel-run   # a decision differs from the simulator's",
                  "# a bug in fxverify: report it with the policy", "command"))
BPF_007 = _code(
    "FX-BPF-007", F.LOWERING, _E, "lowering obligation not proved",
    "a fact the emitted programs rely on (a key below `max_entries`, a loop bound) was not proved",
    "the programs index maps and loop as these facts say; an unproved fact may be an out-of-bounds access or a guard that misfires",
    InlineExample("# a lowering fact (a key below max_entries, a loop bound) not proved",
                  "# a bug in fxverify's tables: report it with the policy", "situation"))
BPF_008 = _code(
    "FX-BPF-008", F.LOWERING, _E, "eBPF toolchain unavailable",
    "clang, libbpf or the bpf() system call needed by the requested step is not available",
    "the requested step needs clang, libbpf or the bpf() call; without them nothing was compiled or loaded",
    InlineExample("fxverify lower p.fx -o out --kernel-verify   # on a machine without clang or libbpf",
                  "apt-get install clang libbpf1   # or lower with --no-compile", "command"))
BPF_009 = _code(
    "FX-BPF-009", F.LOWERING, _W, "lowered without a proof",
    "`--allow-unproved` lowered a policy that is not proved; every artifact is stamped UNPROVED",
    "such programs enforce rules the checker found broken; they are for tests and experiments only",
    InlineExample("fxverify lower corpus/ordering/fail/kv-offload-unordered.fx -o out --allow-unproved",
                  "fxverify lower corpus/ordering/ok/kv-offload-ordered.fx -o out", "command"))
BPF_010 = _code(
    "FX-BPF-010", F.LOWERING, _W, "objects not compiled",
    "clang is not installed, so only the C sources were written; or bpftool is not, so no skeleton "
    "headers or loader were written",
    "without objects nothing can be loaded, and without skeletons the generated loader cannot be built; "
    "the C can still be reviewed or compiled elsewhere",
    InlineExample("fxverify lower p.fx -o out   # on a machine without clang or bpftool",
                  "apt-get install clang bpftool   # or pass --no-compile to ask for C only", "command"))
BPF_011 = _code(
    "FX-BPF-011", F.LOWERING, _E, "map size the target cannot create",
    "every map's entries, key, value and total size fit the kernel's map limits (u32 max_entries of at "
    "least 1, 4 MiB values, 512-byte hash keys, at most 2^27 hash entries, under 4 GiB per map)",
    "the kernel refuses to create such a map, so no program that uses it loads; checked before compiling, "
    "so the refusal names the map declaration instead of an empty verifier log",
    InlineExample("fxverify lower p.fx -o out   # p.fx: map counts: array<u32, u64>[4294967296] class linearizable",
                  "fxverify lower p.fx -o out   # p.fx: map counts: array<u32, u64>[65536] class linearizable",
                  "command"))
# ---- input: syntax ----------------------------------------------------------------------------
SYN_001 = _code(
    "FX-SYN-001", F.SYNTAX, _E, "unexpected token", "the parser met a token it did not expect", _INPUT_WHY,
    InlineExample("edge spill move kv -> pool by gpu0.copy_done", "edge spill: move kv -> pool by gpu0.copy_done"))
SYN_002 = _code(
    "FX-SYN-002", F.SYNTAX, _E, "unexpected character", "a character that starts no token", _INPUT_WHY,
    InlineExample("space hbm1 on gpu0 size 80 GiB $", "space hbm1 on gpu0 size 80 GiB"))
SYN_003 = _code(
    "FX-SYN-003", F.SYNTAX, _E, "unexpected end of file", "the file ends inside a construct", _INPUT_WHY,
    InlineExample("fabric {\n  device gpu0: gpu hooks [launch", "fabric {\n  device gpu0: gpu hooks [launch]\n}"))
SYN_004 = _code(
    "FX-SYN-004", F.SYNTAX, _E, "not a text file",
    "the file is not valid UTF-8 text (binary data or a wrong encoding)", _INPUT_WHY,
    InlineExample("(a file saved as UTF-16, or binary data)", "(save the policy as UTF-8 text)", "situation"))
# ---- input: names -----------------------------------------------------------------------------
NAM_001 = _code(
    "FX-NAM-001", F.NAMES, _E, "unknown name", "a name is used that is not declared", _INPUT_WHY,
    InlineExample("edge a: write kb by gpu0.launch", "edge a: write kv by gpu0.launch"))
NAM_002 = _code(
    "FX-NAM-002", F.NAMES, _E, "duplicate name", "a name is declared twice", _INPUT_WHY,
    InlineExample("device gpu0: gpu hooks [launch]\ndevice gpu0: gpu hooks [launch]",
                  "device gpu0: gpu hooks [launch]\ndevice gpu1: gpu hooks [launch]"))
NAM_003 = _code(
    "FX-NAM-003", F.NAMES, _E, "file not found",
    "the policy file or a file it includes does not exist or cannot be read", _INPUT_WHY,
    InlineExample('include "fabirc.fx"', 'include "fabric.fx"'))
NAM_004 = _code(
    "FX-NAM-004", F.NAMES, _E, "include outside the repository",
    "an include resolves outside the repository that holds the policy", _INPUT_WHY,
    InlineExample('include "../../shared/fabric.fx"', 'include "shared/fabric.fx"', "situation"))
NAM_005 = _code(
    "FX-NAM-005", F.NAMES, _E, "include cycle", "a file includes itself, directly or not", _INPUT_WHY,
    InlineExample('# a.fx\ninclude "b.fx"\n# b.fx\ninclude "a.fx"', '# a.fx\ninclude "b.fx"\n# b.fx (no include of a.fx)',
                  "situation"))
NAM_006 = _code(
    "FX-NAM-006", F.NAMES, _E, "ambiguous link",
    "a link is named by its two devices while several links join them", _INPUT_WHY,
    InlineExample("fabric {\n  device gpu0: gpu hooks [launch]\n  device dpu0: dpu hooks [rx]\n"
                  "  link up0 = gpu0 -- dpu0 : pcie posted\n  link nv0 = gpu0 -- dpu0 : nvlink ordered\n}\n"
                  "flow f {\n  edge fl: flush gpu0 -- dpu0 by gpu0.launch\n}",
                  "fabric {\n  device gpu0: gpu hooks [launch]\n  device dpu0: dpu hooks [rx]\n"
                  "  link up0 = gpu0 -- dpu0 : pcie posted\n  link nv0 = gpu0 -- dpu0 : nvlink ordered\n}\n"
                  "flow f {\n  edge fl: flush up0 by gpu0.launch\n}"))
# ---- input: types and values ------------------------------------------------------------------
TYP_001 = _code(
    "FX-TYP-001", F.TYPES, _E, "wrong kind of name",
    "a name of one kind is used where another kind is required", _INPUT_WHY,
    InlineExample("edge a: write gpu0 by gpu0.launch", "edge a: write kv by gpu0.launch"))
TYP_002 = _code(
    "FX-TYP-002", F.TYPES, _E, "invalid value",
    "a size, count, index range or parameter has an impossible value", _INPUT_WHY,
    InlineExample("region blk in hbm0 at 0x0 size 0 B owner gpu0", "region blk in hbm0 at 0x0 size 64 MiB owner gpu0"))
TYP_003 = _code(
    "FX-TYP-003", F.TYPES, _E, "unknown unit, dtype or operator",
    "a unit, dtype, transform, release kind or operator is not one fxverify knows", _INPUT_WHY,
    InlineExample("space hbm1 on gpu0 size 80 Gib", "space hbm1 on gpu0 size 80 GiB"))
TYP_004 = _code(
    "FX-TYP-004", F.TYPES, _E, "index out of range",
    "an index is outside the range its family declares", _INPUT_WHY,
    InlineExample("for l in 0..4 {\n  edge attn[l]: write kv by gpu0.launch\n"
                  "  edge spill[l]: move kv -> pool by gpu0.copy_done after attn[l + 1]\n}",
                  "for l in 0..4 {\n  edge attn[l]: write kv by gpu0.launch\n"
                  "  edge spill[l]: move kv -> pool by gpu0.copy_done after attn[l]\n}"))
TYP_005 = _code(
    "FX-TYP-005", F.TYPES, _E, "declared bytes disagree",
    "the edge's `bytes` clause disagrees with the bytes its footprint covers", _INPUT_WHY,
    InlineExample("edge spill: move kv -> pool by gpu0.copy_done bytes 1 MiB  # kv is 2 MiB",
                  "edge spill: move kv -> pool by gpu0.copy_done bytes 2 MiB"))
TYP_006 = _code(
    "FX-TYP-006", F.TYPES, _E, "route is not a path",
    "the links of a `via` clause do not form a simple path from where the edge's bytes come from to "
    "where they go", _INPUT_WHY,
    InlineExample("edge put: move host -> pool by gpu0.copy_done via gpu0 -- cpu0",
                  "edge put: move kv -> pool by gpu0.copy_done via gpu0 -- cpu0"))
# ---- input: limits ----------------------------------------------------------------------------
LIM_001 = _code(
    "FX-LIM-001", F.LIMITS, _E, "input too large",
    "the input exceeds a resource cap (file size, edges, family expansion or nesting)", _INPUT_WHY,
    InlineExample("for i in 0..10000000000 {\n  edge e[i]: write kv by gpu0.launch\n}",
                  "for i in 0..512 {\n  edge e[i]: write kv[i*4 KiB, +4 KiB] by gpu0.launch\n}"))
# ---- input: generator inputs (fxverify gen) ---------------------------------------------------
GEN_001 = _code(
    "FX-GEN-001", F.GENERATORS, _E, "malformed input file",
    "a model config, topology or CXL listing cannot be read or parsed (JSON or XML syntax)", _INPUT_WHY,
    InlineExample('fxverify gen prefill --model config.json\n# config.json: {"hidden_size": 4096 "num_hidden_layers": 32}',
                  'fxverify gen prefill --model config.json\n# config.json: {"hidden_size": 4096, "num_hidden_layers": 32, ...}',
                  "command"))
GEN_002 = _code(
    "FX-GEN-002", F.GENERATORS, _E, "missing or contradictory field",
    "a field the generator needs is absent, has the wrong type, or contradicts another field", _INPUT_WHY,
    InlineExample('# config.json: "num_attention_heads": 32, "num_key_value_heads": 7',
                  '# config.json: "num_attention_heads": 32, "num_key_value_heads": 8', "command"))
GEN_003 = _code(
    "FX-GEN-003", F.GENERATORS, _E, "does not fit",
    "the requested layout does not fit: too little HBM, CXL capacity or address space, too few devices, or more edge "
    "instances than a check accepts",
    _INPUT_WHY,
    InlineExample("fxverify gen prefill --model meta-llama--Meta-Llama-3.1-70B.json --tp 2 \\\n"
                  "    --cxl cxl_test-list-BDMu-root-mem3.json --spill 1",
                  "fxverify gen prefill --model meta-llama--Meta-Llama-3.1-70B.json --tp 2 \\\n"
                  "    --cxl cxl_test-list-BDMu-root-mem3.json --spill 0.25", "command"))
GEN_004 = _code(
    "FX-GEN-004", F.GENERATORS, _E, "invalid generator option",
    "a generator option is out of range or conflicts with another option or input", _INPUT_WHY,
    InlineExample("fxverify gen prefill --model meta-llama--Meta-Llama-3.1-8B.json --tokens 1000",
                  "fxverify gen prefill --model meta-llama--Meta-Llama-3.1-8B.json --tokens 1008", "command"))
# ---- suppressions -----------------------------------------------------------------------------
SUP_001 = _code(
    "FX-SUP-001", F.SUPPRESSIONS, _E, "suppression without a reason",
    "an inline suppression must carry `reason \"...\"`",
    "an exception without a reason cannot be reviewed, and outlives the reason nobody wrote down",
    InlineExample("edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-002",
                  'edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-002 reason "drained by the '
                  'stream sync in step()"'))
SUP_002 = _code(
    "FX-SUP-002", F.SUPPRESSIONS, _W, "unused suppression",
    "an inline suppression matched no finding",
    "a suppression that matches nothing hides the next finding on that line without anyone noticing",
    InlineExample('edge attn: write kv by gpu0.launch  # fx: allow FX-ORD-002 reason "old race, since fixed"',
                  "edge attn: write kv by gpu0.launch"))
SUP_003 = _code(
    "FX-SUP-003", F.SUPPRESSIONS, _E, "malformed suppression",
    "an inline suppression cannot be read, names a code that does not exist, or names a code that cannot be "
    "suppressed (only obligation findings can: never an unknown verdict, FX-SMT-001)",
    "a suppression that does not say exactly what it accepts is either ignored or accepts the wrong thing",
    InlineExample('edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-02 reason "drained"',
                  'edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-002 reason "drained"'))
# ---- command line and gate --------------------------------------------------------------------
USE_001 = _code(
    "FX-USE-001", F.USAGE, _E, "no policy files",
    "the paths given to `check` hold no policy file (`*.fx`)", _USE_WHY,
    InlineExample("fxverify check docs/", "fxverify check policies/", "command"))
USE_002 = _code(
    "FX-USE-002", F.USAGE, _E, "conflicting options",
    "two options that cannot be used together were given, or an option does not apply to the others", _USE_WHY,
    InlineExample("fxverify check . --baseline old.json --write-baseline new.json",
                  "fxverify check . --baseline old.json", "command"))
USE_003 = _code(
    "FX-USE-003", F.USAGE, _E, "unknown diagnostic code",
    "`explain` was given a code that fxverify does not have", _USE_WHY,
    InlineExample("fxverify explain FX-ORD-02", "fxverify explain FX-ORD-002", "command"))
USE_004 = _code(
    "FX-USE-004", F.USAGE, _E, "missing argument",
    "a command needs an argument that was not given", _USE_WHY,
    InlineExample("fxverify explain", "fxverify explain FX-ORD-002   # or: fxverify explain --list", "command"))
USE_005 = _code(
    "FX-USE-005", F.USAGE, _E, "invalid command line",
    "an option or argument is unknown, or its value is not one the command accepts", _USE_WHY,
    InlineExample("fxverify check . --format xml", "fxverify check . --format junit", "command"))
USE_006 = _code(
    "FX-USE-006", F.USAGE, _E, "solver not installed",
    "`--solver` names a solver whose Python package is not installed (cvc5, and so the portfolio, "
    "are optional: `pip install cvc5`)", _USE_WHY,
    InlineExample("fxverify check . --solver cvc5   # without the cvc5 package",
                  "pip install cvc5 && fxverify check . --solver cvc5", "command"))
USE_007 = _code(
    "FX-USE-007", F.USAGE, _E, "Graphviz not installed",
    "`fxverify graph --format svg|html` lays pictures out with Graphviz's `dot` program, which is not installed "
    "or not on `PATH` (`--format dot` needs no Graphviz)", _USE_WHY,
    InlineExample("fxverify graph policy.fx --format svg -o policy.svg   # without Graphviz",
                  "apt-get install graphviz && fxverify graph policy.fx --format svg -o policy.svg", "command"))
USE_008 = _code(
    "FX-USE-008", F.USAGE, _E, "bad configuration file",
    "the configuration file (`.fxverify.toml`, or `[tool.fxverify]` in `pyproject.toml`) is not valid TOML, "
    "has a key that is not a setting, or a value of the wrong type", _USE_WHY,
    InlineExample('[tool.fxverify]\nfail-on = "never"\njobs = "2"', '[tool.fxverify]\nfail-on = "warning"\njobs = 2',
                  "situation"))
USE_009 = _code(
    "FX-USE-009", F.USAGE, _E, "executor unavailable",
    "`--executor dask://HOST:PORT` cannot be used: the `distributed` package is not installed "
    "(`pip install distributed`, or `pip install '.[dask]'` in a checkout of fxverify), the port is not a TCP port "
    "or the host name does not resolve, the scheduler refuses the connection or cannot be reached, does not answer as a Dask scheduler (another service or a worker on that port, or a handshake that "
    "breaks off) or has no workers, or a worker runs another fxverify or solver than the gate (its report would not "
    "be the same bytes)", _USE_WHY,
    InlineExample("fxverify check policies/ --executor dask://scheduler:8786   # no scheduler listens there",
                  "dask scheduler --port 8786 &  dask worker scheduler:8786 &\n"
                  "fxverify check policies/ --executor dask://scheduler:8786", "command"))
IO_001 = _code(
    "FX-IO-001", F.IO, _E, "cannot write output",
    "an output file or folder cannot be written (missing folder, not a folder, no permission)",
    "nothing was written, so no stale or half-written report is left where the next step reads it",
    InlineExample("fxverify check . -o reports/missing/out.sarif --format sarif",
                  "mkdir -p reports && fxverify check . -o reports/out.sarif --format sarif", "command"))
IO_002 = _code(
    "FX-IO-002", F.IO, _E, "output exists",
    "a command never replaces files it did not write: `lower` and `smt` an output folder holding anything but "
    "their own previous output, `check --pictures` a folder holding anything but its pictures, `check -o` (or "
    "`--format FMT=PATH`) one of the policies it reads, `gen prefill -o` (or `--summary-json`) one of its input files",
    "overwriting someone's files without asking loses their work",
    InlineExample("fxverify check p.fx --format sarif -o p.fx", "fxverify check p.fx --format sarif -o p.sarif", "command"))
GATE_001 = _code(
    "FX-GATE-001", F.GATE, _E, "baseline unreadable",
    "a baseline file is missing, is not JSON or is not an fxverify baseline",
    "without its baseline the gate cannot tell known findings from new ones, so it refuses to guess",
    InlineExample("fxverify check . --baseline missing.json",
                  "fxverify check . --write-baseline fxverify-baseline.json   # once, then --baseline", "command"))
GATE_002 = _code(
    "FX-GATE-002", F.GATE, _N, "baseline not written",
    "a baseline is recorded only from a run without input errors",
    "a baseline written while some policies could not be read would forget their findings",
    InlineExample("fxverify check . --write-baseline b.json   # while a policy has a syntax error",
                  "# fix the input errors, then write the baseline", "command"))
GATE_003 = _code(
    "FX-GATE-003", F.GATE, _E, "comparison input unreadable",
    "a file given to `fxverify compare` is missing or is not a CSV report of `fxverify check --format csv`",
    "two runs can be compared only row by row, policy and family; a file of another shape would be misread",
    InlineExample("fxverify compare before.json after.json",
                  "fxverify check . --stats --format csv=after.csv && fxverify compare before.csv after.csv", "command"))
GATE_004 = _code(
    "FX-GATE-004", F.GATE, _N, "result cache not writable",
    "the folder given to `--cache-dir` cannot be created or written, so the run keeps none of its results",
    "a gate that cannot write its cache checks every policy from scratch on every run, silently slower",
    InlineExample("fxverify check . --cache-dir /read-only/cache",
                  "fxverify check . --cache-dir .fxverify-cache   # a folder the gate can write", "command"))
