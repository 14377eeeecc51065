"""Every obligation of a policy: the family modules in discharge order, and their generation.

``FAMILIES`` maps each of ``codes.OBLIGATION_FAMILIES`` to its module; ``stream`` builds the
shared ``Context`` and an iterator over every obligation, family by family, deterministically,
one at a time (``generate`` puts them in a list); ``obligations`` iterates over the obligations
of chosen families of a ``Context`` already built; ``stages`` cuts a family into the parts its
module generates apart, and ``stage_obligations`` generates one (a shard of a check,
``gate.shards``, generates only its own). Emits no diagnostics.
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
from fxverify.obligations.parametric import ProvedTogether

FAMILIES: dict[Family, ModuleType] = dict(zip(OBLIGATION_FAMILIES, (ordering, alias, ownership, maps, transforms, hooks)))

#: The context caches (``Context.forget``) that a family's generation builds and no family after
#: it in ``OBLIGATION_FAMILIES`` reads: ``obligations`` drops them when the family is done, so a
#: full-size policy does not hold every family's indexes at once (the ordering sweeps' and the
#: ownership views' are together about a tenth of its peak memory). A cache read again (a hint,
#: a replay) is rebuilt: at stake is time, never a verdict.
DONE_WITH: dict[Family, tuple[str, ...]] = {
    Family.ORDERING: ("_after_all", "_conflicting", "_flushes_by_rank", "_init_ranges", "_init_index", "_recent", "_alloc_chains", "_readers_from"),
    Family.OWNERSHIP: ("_touched", "_owner_checks", "_lifetime_events", "_lifetime_chained", "_handoff_chains", "_true_handoffs"),
}


def stream(policy: Policy, on_family: Callable[[Family], None] | None = None) -> tuple[Context, Iterator[Obligation]]:
    """Build the context of ``policy`` and an iterator over every obligation, family by family,
    deterministically, made one at a time: the discharge keeps only what its report needs, so
    memory grows with the policy, not with the number of access pairs. ``on_family`` is called
    as the iterator finishes each family (a progress bar).

    With cyclic happens-before no schedule exists: only the cycle (FX-ORD-001) and the properties
    that do not depend on schedules are generated until the cycle is fixed.
    """
    ctx = Context(policy, PolicyGraph(policy))
    return ctx, obligations(ctx, on_family=on_family)


def obligations(ctx: Context, families: Iterable[Family] = OBLIGATION_FAMILIES,
                on_family: Callable[[Family], None] | None = None) -> Iterator[Obligation]:
    """The obligations of ``families`` of ``ctx``'s policy, as ``stream`` makes them (in
    ``OBLIGATION_FAMILIES`` order, whatever order the families are given in), one at a time;
    ``on_family`` is called as each family is done, after its caches are dropped (``DONE_WITH``)."""
    wanted = set(families)
    for family in OBLIGATION_FAMILIES:
        if family not in wanted:
            continue
        yield from _kept(ctx, FAMILIES[family].generate(ctx))
        ctx.forget(DONE_WITH.get(family, ()))
        if on_family is not None:
            on_family(family)


Stage = Callable[[Context], Iterator[Obligation]]


def stages(family: Family) -> tuple[Stage, ...]:
    """The parts of ``family``'s obligations that can be generated apart, in stream order: the
    module's ``STAGES`` (whose codes are disjoint), or its whole ``generate``."""
    module = FAMILIES[family]
    return tuple(getattr(module, "STAGES", (module.generate,)))


def stage_obligations(ctx: Context, family: Family, stage: int) -> Iterator[Obligation]:
    """The obligations of stage ``stage`` of ``family`` (``stages``), as ``obligations`` makes
    them: put one after the other, the stages of a family give its obligations, and nothing
    else is generated (a shard of a check, ``gate.shards``)."""
    return _kept(ctx, stages(family)[stage](ctx))


def _kept(ctx: Context, obs: Iterator[Obligation]) -> Iterator[Obligation]:
    keys: set[str] = set()
    for ob in obs:
        if isinstance(ob, ProvedTogether):  # a parametric proof (``obligations.parametric``): keys of its own
            yield ob
            continue
        # Whether HB is acyclic is asked only of an obligation that needs a schedule: a family
        # with none (hooks) does not build HB (``PolicyGraph`` builds it on first use).
        if not (ob.schedule_free or ob.code is codes.ORD_001 or ctx.graph.is_acyclic()):
            continue
        if ob.unique_key:
            yield ob
        # INVARIANT: keys identify obligations; a repeated key states the same property twice
        # (for example two identical handoff clauses on one edge), so the copy is dropped. A
        # key starts with its code and each code comes from one family's module (and one of
        # its ``STAGES``), so the obligations of one family (or stage) are the same whichever
        # others are generated.
        elif ob.key not in keys:
            keys.add(ob.key)
            yield ob


def generate(policy: Policy, on_family: Callable[[Family], None] | None = None) -> tuple[Context, list[Obligation]]:
    """``stream``, with every obligation in a list."""
    ctx, obs = stream(policy, on_family)
    return ctx, list(obs)
