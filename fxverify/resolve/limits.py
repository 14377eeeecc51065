"""Input limits (BRIEF section 9, "Input limits"): the resource caps on one policy.

Each cap is applied where its input is read, before anything is expanded, and exceeding one is
FX-LIM-001: file size in ``resolve.files`` (and the syntax tree's depth, in ``fxverify.syntax``),
region instances and range lengths in ``resolve.declarations`` and ``resolve.expressions``, flow
nesting, edge instances and loop iterations in ``resolve.flows`` (measured on the AST first).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource caps on one policy; exceeding one is FX-LIM-001.

    ``max_file_bytes``: size of any one file, in bytes. ``max_edges``: edge instances (and final
    owner instances, and loop iterations) over all flows. ``max_regions``: region instances.
    ``max_nesting``: nested ``for``/``if`` blocks in a flow. ``max_range``: iterations of one loop or
    one region family dimension. ``max_depth``: depth of the syntax tree (deep expressions).
    """

    max_file_bytes: int = 8 * 1024 * 1024
    max_edges: int = 2_000_000
    max_regions: int = 2_000_000
    max_nesting: int = 16
    max_range: int = 10_000_000
    max_depth: int = 200
