"""Fix edits: the changes a hint proposes, each a function on the IR.

Takes an ``ir.Policy``; every edit returns the edited policy, or ``None`` when it does not apply,
and says itself as policy source (``text()``), so a hint's words and the edit that
``fxverify.hints`` applies and checks again are one object. Obligations build their ``fix`` hints
from these (``Hint``, ``Option``, ``hint``). Emits no diagnostics.

Modules: ``base`` (the shape of edits, options and hints), ``order`` (``after``, flushes, routes,
write-backs), ``families`` (an ``after`` written on a family's declaration), ``layout`` (sizes, places, alias sets, ``init``, dtypes, chains, reductions),
``owners`` (leases, handoffs, releases, drivers, hooks, links), ``maps`` (classes, merges, map
operations).
"""

from fxverify.edits.base import Edit, Hint, Option, hint, size_text
from fxverify.edits.layout import (
    Chain, DropExpected, Dtype, EdgeAlias, Init, JoinAlias, MoveRegion, Narrow, SetAction, SizeFootprint,
    SizeRegion, Widen, clipped, fp_text, narrow, size_region, xf_text,
)
from fxverify.edits.families import FamilyAfter, family_forms, fixed_positions, generalise
from fxverify.edits.maps import MapClass, MapOpAs, Merge
from fxverify.edits.order import After, DropAfter, Flush, FlushEdge, Invalidate, Swap, Via, Writeback, after, flush_edge
from fxverify.edits.owners import (
    AddHandoff, AddLease, AddLink, DeclareHook, Drive, DropHandoff, DropRelease, Pooled, Rehand, SetFinalOwner, drive,
)

__all__ = [
    "AddHandoff", "AddLease", "AddLink", "After", "Chain", "DeclareHook", "Drive", "DropAfter", "DropExpected",
    "DropHandoff", "DropRelease", "Dtype", "Edit", "EdgeAlias", "FamilyAfter", "Flush", "FlushEdge", "Hint", "Init", "Invalidate",
    "JoinAlias", "MapClass", "MapOpAs", "Merge", "MoveRegion", "Narrow", "Option", "Pooled", "Rehand", "SetAction",
    "SetFinalOwner", "SizeFootprint", "SizeRegion", "Swap", "Via", "Widen", "Writeback", "after", "clipped", "drive",
    "family_forms", "fixed_positions", "flush_edge", "fp_text", "generalise", "hint", "narrow", "size_region", "size_text", "xf_text",
]
