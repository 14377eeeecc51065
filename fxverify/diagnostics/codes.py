"""The single registry of diagnostic codes.

Every code fxverify can emit is declared here once, with its family, default severity, a short
title and the full rule text. Obligation codes and their meaning are normative in BRIEF section 3;
input codes (FX-SYN-, FX-NAM-, FX-TYP-, FX-LIM-, FX-SUP-, FX-GEN-) are ours. ``specs/obligations.md`` and
``specs/language.md`` document each of them with examples.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxverify.diagnostics.model import Severity


@dataclass(frozen=True, slots=True)
class Code:
    """One registry entry. ``family`` groups codes for counting (``ordering``, ``alias`` ...)."""

    code: str
    family: str
    severity: Severity
    title: str
    rule: str


_E, _W, _N = Severity.ERROR, Severity.WARNING, Severity.NOTE

_ALL: tuple[Code, ...] = (
    # Ordering (BRIEF 3)
    Code("FX-ORD-001", "ordering", _E, "cyclic happens-before",
         "the happens-before constraints of the policy form a cycle, so no schedule exists"),
    Code("FX-ORD-002", "ordering", _E, "data race",
         "two conflicting accesses (one writes a shared byte) are not ordered by happens-before"),
    Code("FX-ORD-003", "ordering", _E, "posted write read before a flush",
         "bytes written over a `posted` link are read without a flush of that link in between"),
    Code("FX-ORD-004", "ordering", _E, "ordering requirement cannot be met",
         "the edge requires in-order delivery but its fabric path has an unordered or posted link"),
    # Alias sets
    Code("FX-ALIAS-001", "alias", _E, "alias sets overlap",
         "footprints promised disjoint by different alias sets share an address"),
    Code("FX-ALIAS-002", "alias", _E, "illegal in-place edge",
         "an edge's source and destination overlap and the edge is not a legal in-place operation"),
    Code("FX-ALIAS-003", "alias", _E, "footprint out of bounds",
         "a footprint touches bytes outside its region"),
    # Ownership
    Code("FX-OWN-001", "ownership", _E, "access without ownership",
         "a device accesses a region it neither owns nor leases at that time"),
    Code("FX-OWN-002", "ownership", _E, "access while in transit",
         "a region is accessed while another edge is handing it off"),
    Code("FX-OWN-003", "ownership", _E, "handoff by a non-owner",
         "a handoff is made by a device that does not own the region at that time (double handoff)"),
    Code("FX-OWN-004", "ownership", _E, "use after release",
         "a release of a region is not happens-after every access to it (release while in flight)"),
    Code("FX-OWN-005", "ownership", _E, "final owner not unique or not as declared",
         "the owner at the end of the flow differs between schedules or from the declared final owner"),
    # Maps
    Code("FX-MAP-001", "maps", _E, "local map used off its device",
         "a `local(dev)` map is accessed from a hook on another device"),
    Code("FX-MAP-002", "maps", _E, "lost map update",
         "concurrent writes to a shared map entry whose merge is not commutative and associative"),
    Code("FX-MAP-003", "maps", _E, "guard read may be stale",
         "a guard read on a class that cannot guarantee it sees the write it depends on"),
    Code("FX-MAP-004", "maps", _E, "per-device map read as one value",
         "a `per_device` map is read as one value without an aggregate after all its writers"),
    Code("FX-MAP-101", "maps", _N, "consistency class stronger than needed",
         "the declared class is stronger than the weakest class that discharges every obligation"),
    # Transforms
    Code("FX-XF-001", "transforms", _E, "destination smaller than worst-case output",
         "the destination is smaller than the worst-case output of the transform chain"),
    Code("FX-XF-002", "transforms", _E, "checksum invalidated",
         "a checksum is invalidated by a later size- or value-changing transform, or a persist "
         "has no valid checksum over its final bytes"),
    Code("FX-XF-003", "transforms", _E, "dtype, layout or byte accounting mismatch",
         "producer and consumer disagree on dtype or layout, or bytes do not add up"),
    Code("FX-XF-004", "transforms", _E, "unsafe reduction or lost accumulation",
         "a reduction with a non-commutative or non-associative operator over unordered inputs, "
         "or a plain write that overwrites accumulated bytes before anyone read them"),
    # Fabric and hooks
    Code("FX-HOOK-001", "hooks", _E, "no fabric path or driver",
         "there is no fabric path between source and destination, or the hook's device is not on it"),
    Code("FX-HOOK-002", "hooks", _E, "undeclared hook",
         "an edge is driven by a hook that its device does not declare"),
    # Solver and internals
    Code("FX-SMT-001", "solver", _E, "verdict unknown",
         "the solver returned unknown (timeout or resource limit); unknown is never a pass"),
    Code("FX-INT-001", "internal", _E, "internal error",
         "an internal invariant broke; please report it with the policy that triggered it"),
    # eBPF lowering (specs/lowering.md)
    Code("FX-BPF-001", "lowering", _E, "policy not proved",
         "only a fully proved policy is lowered; `--allow-unproved` stamps the artifacts as unproved"),
    Code("FX-BPF-002", "lowering", _E, "consistency class not realisable on the target",
         "the target has no map type that gives the map's consistency class; it is never downgraded"),
    Code("FX-BPF-003", "lowering", _E, "policy exceeds a lowering limit",
         "a key type, device count or table size has no realisation in the target's map layout"),
    Code("FX-BPF-004", "lowering", _E, "program rejected by the Linux verifier",
         "the kernel refused to load a lowered program; the verifier log points at `.fx` spans"),
    Code("FX-BPF-005", "lowering", _E, "compilation failed",
         "clang could not compile the emitted C for the BPF target"),
    Code("FX-BPF-006", "lowering", _E, "kernel and simulator disagree",
         "a program run with BPF_PROG_TEST_RUN decided differently from the concrete simulator"),
    Code("FX-BPF-007", "lowering", _E, "lowering obligation not proved",
         "a fact the emitted programs rely on (a key below `max_entries`, a loop bound) was not proved"),
    Code("FX-BPF-008", "lowering", _E, "eBPF toolchain unavailable",
         "clang, libbpf or the bpf() system call needed by the requested step is not available"),
    # Input: syntax
    Code("FX-SYN-001", "syntax", _E, "unexpected token", "the parser met a token it did not expect"),
    Code("FX-SYN-002", "syntax", _E, "unexpected character", "a character that starts no token"),
    Code("FX-SYN-003", "syntax", _E, "unexpected end of file", "the file ends inside a construct"),
    Code("FX-SYN-004", "syntax", _E, "not a text file",
         "the file is not valid UTF-8 text (binary data or a wrong encoding)"),
    # Input: names
    Code("FX-NAM-001", "names", _E, "unknown name", "a name is used that is not declared"),
    Code("FX-NAM-002", "names", _E, "duplicate name", "a name is declared twice"),
    Code("FX-NAM-003", "names", _E, "include not found", "an included file does not exist"),
    Code("FX-NAM-004", "names", _E, "include outside the repository",
         "an include resolves outside the repository that holds the policy"),
    Code("FX-NAM-005", "names", _E, "include cycle", "a file includes itself, directly or not"),
    # Input: types and values
    Code("FX-TYP-001", "types", _E, "wrong kind of name",
         "a name of one kind is used where another kind is required"),
    Code("FX-TYP-002", "types", _E, "invalid value",
         "a size, count, index range or parameter has an impossible value"),
    Code("FX-TYP-003", "types", _E, "unknown unit, dtype or operator",
         "a unit, dtype, transform, release kind or operator is not one fxverify knows"),
    Code("FX-TYP-004", "types", _E, "index out of range",
         "an index is outside the range its family declares"),
    Code("FX-TYP-005", "types", _E, "declared bytes disagree",
         "the edge's `bytes` clause disagrees with the bytes its footprint covers"),
    # Input: limits
    Code("FX-LIM-001", "limits", _E, "input too large",
         "the input exceeds a resource cap (file size, edges, family expansion or nesting)"),
    # Input: generator inputs (fxverify gen)
    Code("FX-GEN-001", "generators", _E, "malformed input file",
         "a model config, topology or CXL listing cannot be read or parsed (JSON or XML syntax)"),
    Code("FX-GEN-002", "generators", _E, "missing or contradictory field",
         "a field the generator needs is absent, has the wrong type, or contradicts another field"),
    Code("FX-GEN-003", "generators", _E, "does not fit",
         "the requested layout does not fit: too little HBM, CXL capacity or address space, or too few devices"),
    Code("FX-GEN-004", "generators", _E, "invalid generator option",
         "a generator option is out of range or conflicts with another option or input"),
    # Suppressions
    Code("FX-SUP-001", "suppressions", _E, "suppression without a reason",
         "an inline suppression must carry `reason \"...\"`"),
    Code("FX-SUP-002", "suppressions", _W, "unused suppression",
         "an inline suppression matched no finding"),
)

REGISTRY: dict[str, Code] = {c.code: c for c in _ALL}

OBLIGATION_FAMILIES: tuple[str, ...] = (
    "ordering", "alias", "ownership", "maps", "transforms", "hooks",
)


def lookup(code: str) -> Code:
    """Return the registry entry for ``code``.

    Raises ``KeyError`` for an unregistered code; that is a bug in fxverify, never user input.
    """
    return REGISTRY[code]
