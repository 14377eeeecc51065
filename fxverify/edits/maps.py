"""Edits of maps: a map's consistency class or merge operator, and the kind of one map operation
(specs/language.md, "Maps", "Map operations"). Each is a function on the IR (``base.Edit``); none
emits diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fxverify.edits.base import Edit, edge_of, rebuilt, with_edge
from fxverify.ir import ConsistencyClass, MapOpKind, Policy
from fxverify.vocab import AC_OPS, ClassKind


@dataclass(frozen=True)
class MapClass(Edit):
    """``declare `M` `class K```: map ``map`` gets consistency class ``kind`` (not ``local``,
    which needs a device)."""

    map: str
    kind: ClassKind

    def text(self) -> str:
        return f"declare map `{self.map}` with `class {self.kind.value}`"

    def apply(self, policy: Policy) -> Policy | None:
        if not policy.has("map", self.map) or self.kind is ClassKind.LOCAL:
            return None
        m = policy.map(self.map)
        if m.cls.kind is self.kind:
            return None
        maps = tuple(replace(x, cls=ConsistencyClass(self.kind)) if x.name == m.name else x for x in policy.maps)
        return rebuilt(policy, maps=maps)


@dataclass(frozen=True)
class Merge(Edit):
    """``declare `M` with `merge OP```: map ``map``'s ``update``s combine with ``op``. A hint offers
    it only for a counter: integer values that every writer of the entry ``update``s (FX-MAP-002);
    a configuration value wants one writer at a time instead."""

    map: str
    op: str

    def text(self) -> str:
        return f"declare map `{self.map}` with `merge {self.op}`"

    def apply(self, policy: Policy) -> Policy | None:
        if not policy.has("map", self.map) or self.op not in AC_OPS:
            return None
        m = policy.map(self.map)
        if m.merge == self.op:
            return None
        return rebuilt(policy, maps=tuple(replace(x, merge=self.op) if x.name == m.name else x for x in policy.maps))


@dataclass(frozen=True)
class MapOpAs(Edit):
    """``use `KIND M[K]` on `E```: the first operation of edge ``edge`` on ``map[key]`` of another
    kind (of kind ``was``, when given) becomes ``kind`` (a plain read of a ``per_device`` entry an
    ``aggregate``, an ``aggregate`` of a ``const`` map a ``map_read``, the store of a load and
    store an atomic ``update``)."""

    edge: str
    map: str
    key: int | None
    kind: MapOpKind
    was: MapOpKind | None = None

    def text(self) -> str:
        word = {MapOpKind.READ: "map_read", MapOpKind.WRITE: "map_write"}.get(self.kind, self.kind.value)
        return f"use `{word} {self.map}[{self.key}]` on `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None:
            return None
        at = next((i for i, o in enumerate(e.map_ops) if o.map == self.map and o.key == self.key and o.kind is not self.kind
                   and (self.was is None or o.kind is self.was)), None)
        if at is None:
            return None
        ops = list(e.map_ops)
        ops[at] = replace(ops[at], kind=self.kind)
        return with_edge(policy, replace(e, map_ops=tuple(ops)))
