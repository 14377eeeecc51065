"""Happens-before as a policy's edges state it: the ``after`` clauses and the serial streams
(BRIEF section 2, execution model), as adjacency lists on edge ids. A foundation: the resolver
asks it of the edges it built (a ``cancel`` that happens-before the transfer it names), and
``graph.PolicyGraph`` builds its reachability index on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxverify.ir import Edge


def hb_adjacency(edges: Sequence[Edge], strict: bool = True) -> tuple[list[list[int]], list[list[int]]]:
    """``(preds, succs)``: per edge id, the edges HB puts directly before it and directly after it
    (``a -> b``: ``f(a) <= s(b)``, BRIEF section 2), each once. ``preds[b]`` lists its ``after``
    clauses' edges, then its stream predecessor, as first written; ``succs[a]`` lists the edges
    naming ``a`` in increasing id order. Built in declaration order, so its orders (and the
    searches that follow them) are the same however often it is built, and are those of the
    networkx graph ``graph.hb_digraph`` makes of them. ``edges``: a policy's, whose ids are their
    positions. Raises ``KeyError`` for an ``after`` that names no edge among them, unless
    ``strict`` is false (the resolver's edges, some of which may have failed to resolve): then it
    is skipped. O(edges + clauses)."""
    n = len(edges)
    eid = {e.name: e.eid for e in edges}
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    last_on_stream: dict[tuple[str, str], int] = {}
    for e in edges:
        before = [eid[name] for name in e.after if strict or name in eid]
        if e.stream is not None:
            key = (e.device, e.stream)
            prev = last_on_stream.get(key)
            if prev is not None:
                before.append(prev)
            last_on_stream[key] = e.eid
        before = list(dict.fromkeys(before)) if len(before) > 1 else before  # one edge per pair
        preds[e.eid] = before
        for a in before:
            succs[a].append(e.eid)
    return preds, succs
