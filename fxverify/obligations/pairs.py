"""Pairs of accesses that may share a byte: the candidates of every pairwise obligation.

``overlapping_pairs`` gives every pair of accesses of different edges whose bounding intervals
``[lo, hi)`` share a byte, by one sweep per address space over the accesses sorted by ``lo``
(``Context.accesses_by_space``). ``pairs_where`` gives the subset of them one of whose accesses
passes one test and the other another (a reduction and anything, a write over a posted link and
a read...), by a sweep that never visits the other pairs: a buffer that every layer reuses has a
number of pairs that grows with the square of the layers, and a family that needs only a few of
them should not pay for all. ``meeting_pairs`` is the same sweep for two lists of footprints.
Hull overlap is a filter: the obligations decide the exact, strided bytes. Emits no diagnostics.
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict
from collections.abc import Callable, Container, Iterator, MutableSequence, Sequence

from fxverify.ir import Access, AccessMode, Footprint
from fxverify.obligations.base import Context
from fxverify.vocab import AC_OPS

#: A test of one access: ``(edge id, position, access) -> bool``.
AccessTest = Callable[[int, int, Access], bool]


class Pairs:
    """Access pairs ``(eid_a, pos_a, eid_b, pos_b)``, each packed in one integer of an array (8
    bytes a pair instead of a tuple's 90): a policy whose buffers every layer reuses has millions.
    Iterating yields the tuples in ascending order; ``len`` counts pairs."""

    def __init__(self, packed: Sequence[int], shift: int) -> None:
        self._packed, self._shift = packed, shift

    @staticmethod
    def shift_for(edges: int) -> int:
        """Bits of one packed half (an edge id, then 8 bits of access position: an edge has at most
        two accesses): 32 while edge ids fit in 24 bits, so a pair fits in 64."""
        return max(24, edges.bit_length()) + 8

    @staticmethod
    def store(shift: int) -> MutableSequence[int]:
        """An empty buffer for packed pairs of ``shift``: a 64-bit array while a pair fits in 63
        bits (8 bytes a pair, where a list of Python ints takes 40), else a list."""
        return array("q") if 2 * shift < 64 else []

    @staticmethod
    def pack(found: MutableSequence[int], shift: int) -> Pairs:
        """The pairs of the packed integers ``found`` (a ``store``), sorted."""
        if isinstance(found, array):
            found = array("q", sorted(found))
        else:
            found.sort()
        return Pairs(found, shift)

    @staticmethod
    def union(parts: Sequence[Pairs], edges: int) -> Pairs:
        """The pairs in any of ``parts`` (of a policy of ``edges`` edges), each once, sorted: a
        merge of the sorted parts, with no set of every pair in between (a buffer that every
        layer reuses has millions)."""
        shift = Pairs.shift_for(edges)
        out = Pairs.store(shift)
        last = None
        for x in heapq.merge(*(p._packed for p in parts)):
            if x != last:
                out.append(x)
                last = x
        return Pairs(out, shift)

    def __len__(self) -> int:
        return len(self._packed)

    def __iter__(self) -> Iterator[tuple[int, int, int, int]]:
        shift, mask = self._shift, (1 << self._shift) - 1
        for x in self._packed:
            hi, lo = x >> shift, x & mask
            yield hi >> 8, hi & 0xFF, lo >> 8, lo & 0xFF

    def halves(self) -> Iterator[tuple[int, int]]:
        """Each pair as its two accesses packed ``edge << 8 | position`` (lower edge id first), in
        ascending order: what ``__iter__`` yields, unpacked less, for loops over millions."""
        shift, mask = self._shift, (1 << self._shift) - 1
        for x in self._packed:
            yield x >> shift, x & mask


def _packed(eid: int, pos: int, eid2: int, pos2: int, shift: int) -> int:
    """One pair as an integer that sorts as the tuple ``(eid_a, pos_a, eid_b, pos_b)`` does, the
    lower edge id first."""
    a, b = ((eid2 << 8) | pos2, (eid << 8) | pos) if eid2 < eid else ((eid << 8) | pos, (eid2 << 8) | pos2)
    return (a << shift) | b


def overlapping_pairs(ctx: Context, reads: bool = False) -> Pairs:
    """All pairs of accesses of different edges whose bounding intervals share a byte, found by a
    sweep over each address space (O(n log n + pairs)).

    Returns ``(eid_a, pos_a, eid_b, pos_b)`` with ``eid_a < eid_b``, sorted. Read-read pairs are
    skipped (they never conflict) unless ``reads`` is set: alias-set disjointness (FX-ALIAS-001,
    BRIEF section 3) is about footprints, whatever their mode. Cached on the context, per flag.
    """
    cache = f"_pairs_{reads}"
    hit = ctx.__dict__.get(cache)
    if hit is None:
        hit = ctx.__dict__[cache] = _sweep(ctx, reads)
    return hit


def _sweep(ctx: Context, reads: bool) -> Pairs:
    shift = Pairs.shift_for(len(ctx.policy.edges))
    found = Pairs.store(shift)
    for _space, items in sorted(ctx.accesses_by_space().items()):
        active: list[tuple[int, int, int, Access]] = []  # (hi, eid, pos, access)
        for eid, pos, acc in items:
            lo = acc.footprint.lo
            active = [t for t in active if t[0] > lo]
            for _hi2, eid2, pos2, acc2 in active:
                if eid2 == eid:
                    continue
                if not reads and acc.mode is AccessMode.READ and acc2.mode is AccessMode.READ:
                    continue
                found.append(_packed(eid, pos, eid2, pos2, shift))
            active.append((acc.footprint.hi, eid, pos, acc))
    return Pairs.pack(found, shift)


def pairs_where(ctx: Context, first: AccessTest, second: AccessTest, *, reads: bool = False,
                spaces: Container[str] | None = None) -> Pairs:
    """The pairs of ``overlapping_pairs(ctx, reads)`` one of whose accesses passes ``first`` and
    the other ``second`` (either way round), in the same order, and only in ``spaces`` when
    given: exactly that subset, found without visiting the other pairs.

    One sweep per address space over the accesses sorted by ``lo``, as ``overlapping_pairs``,
    with one list of open accesses per test: an access is paired with the open accesses of the
    other test, and only the lists it reads are pruned of the accesses closed by then (each is
    pruned once). Cost: O(n log n + the pairs returned). Not cached: each caller passes its own
    tests."""
    shift = Pairs.shift_for(len(ctx.policy.edges))
    found = Pairs.store(shift)
    for space, items in sorted(ctx.accesses_by_space().items()):
        if spaces is not None and space not in spaces:
            continue
        # Each test is asked once per access, before the sweep: a space where no access passes
        # one of them holds no pair, and is not swept (a family that pairs the few reductions
        # of a policy with its writes sweeps only the spaces holding a reduction).
        passes = [(first(eid, pos, acc), second(eid, pos, acc)) for eid, pos, acc in items]
        if not (any(f for f, _s in passes) and any(s for _f, s in passes)):
            continue
        # Open accesses: (hi, edge id, packed access ``edge << 8 | position``, reads, passes the
        # other test too). Packed halves compare as their edge ids do when the edges differ, so
        # a pair is packed lower edge first without unpacking (``_packed``).
        open_first: list[tuple[int, int, int, bool, bool]] = []
        open_second: list[tuple[int, int, int, bool, bool]] = []
        for (eid, pos, acc), (f, s) in zip(items, passes):
            if not (f or s):
                continue
            fp = acc.footprint
            lo = fp.base
            partners: list[tuple[int, int, int, bool, bool]] = []
            if f and open_second:
                open_second[:] = [t for t in open_second if t[0] > lo]
                partners += open_second
            if s and open_first:
                open_first[:] = [t for t in open_first if t[0] > lo]
                # an open access that passes both tests is already among the partners when this
                # one passes ``first``: take it once
                partners += [t for t in open_first if not (f and t[4])] if f else open_first
            me, is_read = eid << 8 | pos, acc.mode is AccessMode.READ
            if partners:
                skip_reads = is_read and not reads
                for _hi2, eid2, other, read2, _both in partners:
                    if eid2 == eid or (skip_reads and read2):
                        continue
                    found.append(me << shift | other if me < other else other << shift | me)
            hi = fp.base + (fp.count - 1) * fp.stride + fp.elem  # INVARIANT: ``Footprint.hi``, inline
            if f:
                open_first.append((hi, eid, me, is_read, s))
            if s:
                open_second.append((hi, eid, me, is_read, f))
    return Pairs.pack(found, shift)


def _commutes(acc: Access) -> bool:
    """An atomic reduction with an associative and commutative operator: it commutes with the
    atomic reductions of the same operator (``base.conflict_kind``)."""
    return acc.mode is AccessMode.REDUCE and acc.atomic and acc.op in AC_OPS


def conflicting_reductions(ctx: Context) -> Pairs:
    """The pairs of ``overlapping_pairs(ctx)`` of two reductions that do not commute
    (``base.conflict_kind`` is not ``None``): one of them not atomic or its operator not in
    ``vocab.AC_OPS``, or two atomic ones with different operators. Sorted. Commuting pairs are
    never visited: one sweep pairs the non-commuting reductions with every reduction, and one per
    two operators pairs their commuting reductions."""
    reduction = (lambda _e, _p, acc: acc.mode is AccessMode.REDUCE)
    parts = [pairs_where(ctx, lambda _e, _p, acc: reduction(_e, _p, acc) and not _commutes(acc), reduction)]
    ops = sorted({acc.op for items in ctx.accesses_by_space().values() for _e, _p, acc in items
                  if _commutes(acc) and acc.op is not None})
    for i, op in enumerate(ops):
        for other in ops[i + 1:]:
            parts.append(pairs_where(ctx, lambda _e, _p, acc, op=op: _commutes(acc) and acc.op == op,
                                     lambda _e, _p, acc, other=other: _commutes(acc) and acc.op == other))
    return Pairs.union(parts, len(ctx.policy.edges))


def conflicting_pairs(ctx: Context) -> Pairs:
    """The pairs of ``overlapping_pairs(ctx)`` whose accesses conflict (``base.conflict_kind`` is
    ``"race"``: one writes, or a reduction meets a plain read, or a reduction is not atomic), and
    no other: commuting reductions (an all-reduce's buffer, reduced into by every layer) and
    reductions that do not commute (FX-XF-004's) are never visited. Sorted. Cached."""
    hit = ctx.__dict__.get("_conflicting")
    if hit is None:
        writes = (lambda _e, _p, acc: acc.mode is AccessMode.WRITE or (acc.mode is AccessMode.REDUCE and not acc.atomic))
        anything = (lambda _e, _p, _acc: True)
        reduction = (lambda _e, _p, acc: acc.mode is AccessMode.REDUCE)
        plain_read = (lambda _e, _p, acc: acc.mode is AccessMode.READ)
        hit = ctx.__dict__["_conflicting"] = Pairs.union(
            [pairs_where(ctx, writes, anything), pairs_where(ctx, reduction, plain_read)], len(ctx.policy.edges))
    return hit


def meeting_pairs(left: list[Footprint | None], right: list[Footprint | None]) -> list[tuple[int, int]]:
    """The index pairs ``(i, j)`` such that ``left[i]`` and ``right[j]`` lie in the same address
    space and their hulls ``[lo, hi)`` share a byte (a cheap filter: obligations decide the exact,
    strided bytes). ``None`` entries meet nothing.

    A sweep over each space's interval starts, as ``_sweep`` does for accesses: O((n + m) log(n +
    m) + pairs + the overlaps of the active lists), instead of the n * m hull tests of nested
    loops. Returns the pairs sorted ascending."""
    events: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)  # space -> (lo, side, index, hi)
    for side, fps in enumerate((left, right)):
        for i, fp in enumerate(fps):
            if fp is not None:
                events[fp.space].append((fp.lo, side, i, fp.hi))
    out: list[tuple[int, int]] = []
    for _space, evs in sorted(events.items()):
        evs.sort()
        active: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])  # per side: (hi, index)
        for lo, side, i, hi in evs:
            other = [t for t in active[1 - side] if t[0] > lo]
            active[1 - side][:] = other
            out.extend((i, j) if side == 0 else (j, i) for _h, j in other)
            active[side].append((hi, i))
    out.sort()
    return out
