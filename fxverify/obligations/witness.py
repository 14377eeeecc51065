"""The decoded counterexample of a refuted obligation, in IR terms.

An obligation turns a refuting solver model into a ``Witness`` (``Obligation.witness``); the
simulator replays it (``fxverify.replay``), the trace is built from it, and the lowering's
kernel differential drives it. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Witness:
    """A decoded counterexample.

    ``schedule`` maps edge ids to ``(start, finish)`` in ns. ``address``/``space`` locate a shared
    byte; ``elements`` maps edge ids to the element index of their footprint containing it.
    ``values`` carries named extras (input bytes, owners, map keys). ``cycle`` lists edge ids of an
    HB cycle (FX-ORD-001). ``other_schedule`` is a second schedule, for a violation that needs two
    (a final owner that differs between schedules, FX-OWN-005). ``elided`` lists edges that
    ``schedule`` times only because a shown edge waits for them (``Simulator.close``), in groups,
    one per gap of the timeline they fill: the trace summarises each group in one line.
    """

    schedule: dict[int, tuple[int, int]] = field(default_factory=dict)
    address: int | None = None
    space: str | None = None
    elements: dict[int, int] = field(default_factory=dict)
    values: dict[str, int | str] = field(default_factory=dict)
    cycle: list[int] = field(default_factory=list)
    other_schedule: dict[int, tuple[int, int]] = field(default_factory=dict)
    elided: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class Step:
    """The violating event of a counterexample, the step a trace marks with ``>>``.

    ``edge`` is the edge id; ``kind`` a trace event kind (``start``, ``release``, ``revoke``,
    ``lease``, ``handoff``, ``map``); ``clause`` names which of the edge's clauses of that kind:
    a region name for ``release``/``revoke``/``lease``/``handoff``, the position in
    ``Edge.map_ops`` for ``map``, ``None`` for ``start``. ``Obligation.violating`` gives it.
    """

    edge: int
    kind: str
    clause: str | int | None = None
