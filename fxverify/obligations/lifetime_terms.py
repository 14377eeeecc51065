"""The SMT terms of the lifetime obligations (``obligations.lifetimes``): a schedule that breaks
a region's lifetime order (FX-OWN-006), and one in which a use lies outside every allocation
(FX-OWN-004), over the start and finish times of the edges (``encode.start``, ``encode.finish``,
ns). specs/obligations.md section 1, lifetimes and cancellation. Builds terms only: no
obligation, no diagnostic.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxverify.obligations.encode import finish, overlap, start, touch_overlap, touches
from fxverify.smt.terms import TRUE, Term, and_, not_, or_

#: A lifetime event: ``(edge id, "alloc" or "release")``.
Event = tuple[int, str]


def order_violation(evs: list[Event], first: str) -> Term:
    """Some schedule breaks the lifetime order of ``evs``: two events overlap, the first in time is
    not of kind ``first``, or two consecutive ones are of the same kind. Its size is cubic in the
    events (``LifetimeOrder.probe`` tries some of its disjuncts first)."""
    alts: list[Term] = []
    for i, (x, _kx) in enumerate(evs):
        for y, _ky in evs[i + 1:]:
            alts.append(overlapping(x, y))
    for x, kx in evs:
        if kx != first:
            alts.append(first_in_time(evs, (x, kx)))
    for x, kx in evs:
        for y, ky in evs:
            if x != y and kx == ky:
                alts.append(consecutive(evs, x, y))
    return or_(*alts)


def overlapping(x: int, y: int) -> Term:
    """A disjunct of ``order_violation``: events of edges ``x`` and ``y`` overlap in time."""
    return TRUE if x == y else overlap(x, y)


def first_in_time(evs: list[Event], ev: Event) -> Term:
    """A disjunct of ``order_violation``: event ``ev`` comes first in time of all ``evs``."""
    x, _k = ev
    return and_(*[finish(x) <= start(y) for y, k in evs if (y, k) != ev])


def consecutive(evs: list[Event], x: int, y: int) -> Term:
    """A disjunct of ``order_violation``: the event of ``y`` follows that of ``x`` with no other
    event of ``evs`` between them."""
    return and_(finish(x) <= start(y), *[not_(and_(finish(x) <= start(z), finish(z) <= start(y)))
                                         for z, _ in evs if z not in (x, y)])


def outside_violation(u: int, evs: list[Event], pooled: bool, cancels: Sequence[int] = ()) -> Term:
    """``u`` may lie outside every allocation: an event other than ``u`` overlaps it, or a release
    finished by ``s(u)`` has no ``alloc`` after it finished by ``s(u)``, or (``pooled``) no event
    finished by ``s(u)``. ``cancels`` are the edges that cancel ``u``: it touches its bytes only
    until the first of them finishes, and none at all when one finished by ``s(u)``
    (specs/obligations.md section 1, cancellation). Without cancels the terms are the plain ones."""
    others = [(x, k) for x, k in evs if x != u]
    allocs = [x for x, k in others if k == "alloc"]
    alts = [touch_overlap(u, cancels, x, ()) if cancels else overlap(u, x) for x, _ in others]
    early: list[Term] = []
    if pooled:
        early.append(and_(*[not_(finish(x) <= start(u)) for x, _ in others]))
    for r, k in others:
        if k == "release":
            early.append(and_(finish(r) <= start(u), *[not_(and_(finish(r) <= start(a), finish(a) <= start(u))) for a in allocs]))
    if cancels and early:
        early = [and_(touches(u, cancels), or_(*early))]
    return or_(*alts, *early)
