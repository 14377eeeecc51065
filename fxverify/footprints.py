"""The bytes an access touches (``Footprint``, part of the IR: ``fxverify.ir`` re-exports it), and
their geometry: bounds, membership, and the bytes two footprints share, exact for strided ones.
All values are bytes. Emits no diagnostics; raises nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxverify.source import NO_SPAN, Span


@dataclass(frozen=True, slots=True)
class Footprint:
    """The bytes an access touches: ``{base + k*stride + o : 0 <= k < count, 0 <= o < elem}``.

    ``base`` is absolute in ``space``; ``region`` names the region instance the access is made
    through. A contiguous range has ``count == 1`` and ``stride == elem``. All values are bytes.
    """

    region: str
    space: str
    base: int
    elem: int
    stride: int
    count: int
    span: Span = NO_SPAN

    @property
    def nbytes(self) -> int:
        """Bytes covered, ``elem * count`` (elements never overlap: specs/language.md, Footprints)."""
        return self.elem * self.count

    @property
    def lo(self) -> int:
        """Lowest address touched."""
        return self.base

    @property
    def hi(self) -> int:
        """One past the highest address touched."""
        return self.base + (self.count - 1) * self.stride + self.elem

    @property
    def contiguous(self) -> bool:
        """True when the footprint is exactly the interval ``[lo, hi)``."""
        return self.count == 1 or self.stride <= self.elem

    def contains(self, addr: int) -> bool:
        """True when byte ``addr`` belongs to the footprint (exact, also for strided ones)."""
        return self.element_of(addr) is not None

    def meets(self, lo: int, hi: int) -> bool:
        """True when some byte of the footprint lies in ``[lo, hi)`` (exact for strided ones)."""
        if hi <= lo or hi <= self.lo or lo >= self.hi:
            return False
        if self.contiguous:
            return True
        # First element whose end passes lo; it meets the range iff it starts before hi.
        k = max(0, (lo - self.base - self.elem) // self.stride + 1)
        return k < self.count and self.base + k * self.stride < hi

    def first_byte_from(self, addr: int) -> int | None:
        """The lowest byte of the footprint at or above ``addr``, or ``None`` when there is none."""
        if addr <= self.lo or addr >= self.hi or self.contains(addr):
            return self.lo if addr <= self.lo else addr if addr < self.hi else None
        k = (addr - self.base) // self.stride + 1  # ``addr`` is in the gap after an element
        return self.base + k * self.stride if k < self.count else None

    def shared_byte(self, other: Footprint, steps: int = 256) -> int | None:
        """The lowest byte of both footprints, by leapfrogging each one's next byte over the
        other's, or ``None`` when they share none or ``steps`` leaps did not settle it (strided
        footprints whose elements interleave a long way before they meet)."""
        at = max(self.lo, other.lo)
        for _ in range(steps):
            mine = self.first_byte_from(at)
            theirs = None if mine is None else other.first_byte_from(mine)
            if theirs is None or theirs == mine:
                return theirs
            at = theirs
        return None

    def element_of(self, addr: int) -> int | None:
        """Return the smallest element index ``k`` whose bytes include ``addr``, or ``None``."""
        rel = addr - self.base
        if rel < 0 or addr >= self.hi:
            return None
        if self.stride <= 0:
            return 0 if rel < self.elem else None
        k_hi = min(rel // self.stride, self.count - 1)
        # With stride < elem several elements can cover addr; the smallest one is wanted.
        k = k_hi
        while k >= 0 and rel - k * self.stride < self.elem:
            k -= 1
        k += 1
        return k if k <= k_hi and rel - k * self.stride < self.elem else None
