"""Obligation families (BRIEF section 3): one module each.

Each module exposes ``generate(ctx) -> Iterator[Obligation]``. ``ALL_FAMILIES`` lists them in the
order the pipeline discharges them.
"""

from fxverify.obligations import alias, hooks, maps, ordering, ownership, transforms

ALL_FAMILIES = (ordering, alias, ownership, maps, transforms, hooks)
