"""Bytes shared by footprints, enumerated exactly (strided footprints included), for the simulator.

Takes ``ir.Footprint`` values; returns addresses and intervals. Written from the footprint
definition of BRIEF section 1 (``{base + k*stride + o : 0 <= k < count, 0 <= o < elem}``), not
from the SMT encoding. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterator

from fxverify.ir import Footprint


def elements(fp: Footprint, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """Element intervals of ``fp`` that meet ``[lo, hi)``, clipped to it, in address order."""
    if fp.stride <= 0 or fp.count == 1 or fp.stride <= fp.elem:
        a, b = max(lo, fp.lo), min(hi, fp.hi)
        if a < b:
            yield a, b
        return
    k = max(0, (lo - fp.base - fp.elem) // fp.stride + 1)
    while k < fp.count:
        start = fp.base + k * fp.stride
        if start >= hi:
            return
        a, b = max(lo, start), min(hi, start + fp.elem)
        if a < b:
            yield a, b
        k += 1


def intersections(a: Footprint, b: Footprint) -> Iterator[tuple[int, int]]:
    """Maximal-per-element intervals of bytes in both footprints, in address order."""
    if a.space != b.space:
        return
    for lo, hi in elements(a, a.lo, a.hi):
        yield from elements(b, lo, hi)


def shared_byte(a: Footprint, b: Footprint) -> int | None:
    """Return the lowest byte in both footprints, or ``None``."""
    for lo, _hi in intersections(a, b):
        return lo
    return None
