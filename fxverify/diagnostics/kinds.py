"""The kinds a diagnostic code is described by: its ``Severity``, its ``Family`` (the six
obligation families of BRIEF section 3 first, in discharge order) and the shapes of its example
(``CorpusExample``, ``InlineExample``).

The codes themselves, and their registry, are ``fxverify.diagnostics.codes``, which re-exports
these names (``codes.Severity``). Emits no diagnostics itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(Enum):
    """How bad a diagnostic is. Errors fail the run; warnings and notes do not (unless
    ``--fail-on warning``)."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Family(Enum):
    """What a code is about. The six obligation families (BRIEF section 3) come first, in the
    order the pipeline discharges them; their findings, and unknown verdicts (``solver``), can be
    suppressed with a reason; no other family can."""

    ORDERING = "ordering"
    ALIAS = "alias"
    OWNERSHIP = "ownership"
    MAPS = "maps"
    TRANSFORMS = "transforms"
    HOOKS = "hooks"
    SOLVER = "solver"
    INTERNAL = "internal"
    LOWERING = "lowering"
    SYNTAX = "syntax"
    NAMES = "names"
    TYPES = "types"
    LIMITS = "limits"
    GENERATORS = "generators"
    SUPPRESSIONS = "suppressions"
    USAGE = "usage"
    IO = "io"
    GATE = "gate"

    @property
    def suppressible(self) -> bool:
        """True for obligation findings and unknown verdicts; input and internal errors are not."""
        return self in OBLIGATION_FAMILIES or self is Family.SOLVER


#: The obligation families, in discharge order (``fxverify.obligations`` has one module each).
OBLIGATION_FAMILIES: tuple[Family, ...] = (
    Family.ORDERING, Family.ALIAS, Family.OWNERSHIP, Family.MAPS, Family.TRANSFORMS, Family.HOOKS,
)


@dataclass(frozen=True, slots=True)
class CorpusExample:
    """A failing corpus policy (``fail``, with ``# expect:`` of the code) and its fixed ``ok`` twin,
    as paths from the repository root."""

    fail: str
    fixed: str


@dataclass(frozen=True, slots=True)
class InlineExample:
    """A short failing example and its fix. ``kind`` says what they are: ``policy`` text that the
    tests place in a small policy, a ``command`` line, or a ``situation`` described in words."""

    bad: str
    good: str
    kind: str = "policy"
