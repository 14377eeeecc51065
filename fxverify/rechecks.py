"""What a hint's verification works on: the refuted ``Finding`` whose hint is checked, and the
``Rechecked`` answer of a check of an edited policy (``Recheck``, which ``pipeline`` provides and
``hints`` calls). Takes nothing; emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from fxverify.edits import Hint
from fxverify.ir import Policy
from fxverify.obligations.base import Obligation


@dataclass(frozen=True)
class Rechecked:
    """What a check of an edited policy left unproved: ``unproved``, the key of each obligation
    refuted or unknown -> its family's name; ``blamed``, the names of the edges each refutation
    blames once replayed, or ``None`` when its refutations were not replayed (the verdicts alone
    decided the hint asking: ``Verifier.needs_blame``). A refutation that did not replay is the
    key ``FX-INT-001:re-check``, which no policy had before: the check verifies no hint.
    ``stopped``: the key of the unproved obligation at which the check stopped (``Recheck``'s
    ``stop``); ``unproved`` then holds only the verdicts found by then. ``family``: the one
    family whose obligations the policy left unproved were decided again (``Recheck``'s
    ``family``); those of the others are in ``unproved`` undecided. ``None``: all were."""

    unproved: dict[str, str]
    blamed: dict[str, frozenset[str]] | None
    stopped: str | None = None
    family: str | None = None


#: ``recheck(policy, blame, stop, family)`` -> the ``Rechecked`` of ``policy``, whose refutations
#: are replayed when ``blame`` of its unproved keys is true; with ``stop``, the check may stop at
#: the first unproved obligation whose key makes it true (``Rechecked.stopped``); with ``family``
#: (a family's name), an obligation of another family that the unedited policy left unproved is
#: not decided, and counts as unproved (``Rechecked.family``).
Recheck = Callable[[Policy, Callable[[Collection[str]], bool], Callable[[str], bool] | None, str | None], Rechecked]


@dataclass(frozen=True)
class Finding:
    """One refuted obligation whose hint is to be verified: its ``hint``, the edge ids its trace
    shows (``shown``: primary and context edges) and its diagnostic's index in the list."""

    ob: Obligation
    hint: Hint
    shown: tuple[int, ...]
    index: int

    def culprits(self) -> frozenset[str]:
        """Names of the edges the finding blames (its fingerprint's edges)."""
        return frozenset(self.ob.name(e) for e in self.ob.culprits())

    def involved(self) -> frozenset[str]:
        """Names of the obligation's primary edges: those it blames and those that explain it (the
        other events of a lifetime, the handoffs of an ownership rule, the flushes of a link)."""
        return frozenset(self.ob.name(e) for e in self.ob.edges)
