"""Every obligation of a policy: the family modules in discharge order, and their generation.

``FAMILIES`` maps each of ``codes.OBLIGATION_FAMILIES`` to its module; ``generate`` builds the
shared ``Context`` and every obligation, family by family, deterministically; ``stream`` yields the
obligations of chosen families one by one (a shard of a check, ``gate.shards``, generates only
its own). Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from types import ModuleType

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.obligations import alias, hooks, maps, ordering, ownership, transforms
from fxverify.obligations.base import Context, Obligation

FAMILIES: dict[Family, ModuleType] = dict(zip(OBLIGATION_FAMILIES, (ordering, alias, ownership, maps, transforms, hooks)))


def generate(policy: Policy, on_family: Callable[[Family], None] | None = None) -> tuple[Context, list[Obligation]]:
    """Build the context and every obligation of ``policy``, family by family, deterministically
    (``stream`` over every family); ``on_family`` is called as each family is done (a progress bar)."""
    ctx = Context(policy, PolicyGraph(policy))
    return ctx, [ob for _family, ob in stream(ctx, on_family=on_family)]


def stream(ctx: Context, families: Iterable[Family] = OBLIGATION_FAMILIES,
           on_family: Callable[[Family], None] | None = None) -> Iterator[tuple[Family, Obligation]]:
    """The obligations of ``families`` (in ``OBLIGATION_FAMILIES`` order, whatever order they
    are given in), each with the family whose module generated it, lazily; ``on_family`` is
    called as each family is done.

    With cyclic happens-before no schedule exists: only the cycle (FX-ORD-001) and the properties
    that do not depend on schedules are generated until the cycle is fixed.
    """
    wanted = set(families)
    keys: set[str] = set()
    acyclic = ctx.graph.is_acyclic()
    for family in OBLIGATION_FAMILIES:
        if family not in wanted:
            continue
        for ob in FAMILIES[family].generate(ctx):
            if not (acyclic or ob.schedule_free or ob.code is codes.ORD_001):
                continue
            # INVARIANT: keys identify obligations; a repeated key states the same property twice
            # (for example two identical handoff clauses on one edge), so the copy is dropped. A
            # key starts with its code and each code comes from one family's module, so the
            # obligations of one family are the same whichever other families are generated.
            if ob.key not in keys:
                keys.add(ob.key)
                yield family, ob
        if on_family is not None:
            on_family(family)
