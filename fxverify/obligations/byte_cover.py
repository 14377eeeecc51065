"""Byte cover arithmetic of def-before-use (FX-INIT-001, ``obligations.defined``): whether pieces
(intervals ``[lo, hi)`` and footprints, strided ones exactly) cover a footprint (``first_gap``),
and what of a footprint lies outside some intervals (``clip``). Pure functions of their
arguments; emit no diagnostics.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace

from fxverify.ir import Footprint

#: The most cover steps (pieces visited, times strided writers scanned) the fast proof spends on
#: one read before it leaves the read to the solver.
COVER_BUDGET = 1 << 17


def first_gap(target: Footprint, pieces: Sequence[tuple[int, int] | Footprint], budget: int = COVER_BUDGET
              ) -> int | None:
    """The lowest byte of ``target`` in none of ``pieces`` (intervals ``[lo, hi)`` or footprints,
    strided ones exactly), or ``None`` when they cover it. Walks ``target`` piece by piece: the
    contiguous pieces merged and bisected, the strided ones scanned. Raises ``OverflowError``
    after ``budget`` steps (a step scans every strided piece once)."""
    spans, strided = [], []
    for p in pieces:
        if isinstance(p, Footprint) and not p.contiguous:
            strided.append(p)
        else:
            spans.append((p.lo, p.hi) if isinstance(p, Footprint) else p)
    merged: list[list[int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        elif lo < hi:
            merged.append([lo, hi])
    los = [m[0] for m in merged]
    cost = 1 + len(strided)
    x, steps = target.lo, 0
    while x < target.hi:
        steps += cost
        if steps > budget:
            raise OverflowError("cover budget exhausted")
        if not target.contiguous and (x - target.base) % target.stride >= target.elem:
            x = target.base + ((x - target.base) // target.stride + 1) * target.stride
            continue
        end = x
        i = bisect.bisect_right(los, x) - 1
        if i >= 0 and merged[i][1] > x:
            end = merged[i][1]
        for p in strided:
            k = p.element_of(x)
            if k is not None:
                end = max(end, p.base + k * p.stride + p.elem)
        if end == x:
            return x
        x = end
    return None


def clip(fp: Footprint | tuple[int, int], kills: Sequence[tuple[int, int]]) -> list[Footprint | tuple[int, int]]:
    """The bytes of ``fp`` (a footprint, strided ones exactly, or an interval ``[lo, hi)``) outside
    every interval of ``kills``, as footprints and intervals (``first_gap`` pieces)."""
    lo, hi = (fp.lo, fp.hi) if isinstance(fp, Footprint) else fp
    gaps, x = [], lo
    for klo, khi in sorted(kills):
        if klo > x:
            gaps.append((x, min(klo, hi)))
        x = max(x, khi)
        if x >= hi:
            break
    if x < hi:
        gaps.append((x, hi))
    gaps = [(a, b) for a, b in gaps if a < b]
    if not isinstance(fp, Footprint) or fp.contiguous:
        return list(gaps)
    out: list[Footprint | tuple[int, int]] = []
    for a, b in gaps:
        first = max(0, -(-(a - fp.base) // fp.stride))           # first element starting at or after a
        last = min(fp.count - 1, (b - fp.elem - fp.base) // fp.stride)  # last element ending by b
        if first <= last:
            out.append(replace(fp, base=fp.base + first * fp.stride, count=last - first + 1))
        for k in {(a - fp.base) // fp.stride, (b - 1 - fp.base) // fp.stride}:  # the cut elements
            if 0 <= k < fp.count:
                e0 = fp.base + k * fp.stride
                if max(e0, a) < min(e0 + fp.elem, b):
                    out.append((max(e0, a), min(e0 + fp.elem, b)))
    return out
