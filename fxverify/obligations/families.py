"""Every obligation of a policy: the family modules in discharge order, and their generation.

``FAMILIES`` maps each of ``codes.OBLIGATION_FAMILIES`` to its module; ``generate`` builds the
shared ``Context`` and every obligation, family by family, deterministically. Emits no diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.obligations import alias, hooks, maps, ordering, ownership, transforms
from fxverify.obligations.base import Context, Obligation

FAMILIES: dict[Family, ModuleType] = dict(zip(OBLIGATION_FAMILIES, (ordering, alias, ownership, maps, transforms, hooks)))


def generate(policy: Policy, on_family: Callable[[Family], None] | None = None) -> tuple[Context, list[Obligation]]:
    """Build the context and every obligation of ``policy``, family by family, deterministically;
    ``on_family`` is called as each family is done (a progress bar).

    With cyclic happens-before no schedule exists: only the cycle (FX-ORD-001) and the properties
    that do not depend on schedules are generated until the cycle is fixed.
    """
    ctx = Context(policy, PolicyGraph(policy))
    obs: list[Obligation] = []
    keys: set[str] = set()
    acyclic = ctx.graph.is_acyclic()
    for family in OBLIGATION_FAMILIES:
        for ob in FAMILIES[family].generate(ctx):
            if not (acyclic or ob.schedule_free or ob.code is codes.ORD_001):
                continue
            # INVARIANT: keys identify obligations; a repeated key states the same property twice
            # (for example two identical handoff clauses on one edge), so the copy is dropped.
            if ob.key not in keys:
                keys.add(ob.key)
                obs.append(ob)
        if on_family is not None:
            on_family(family)
    return ctx, obs
