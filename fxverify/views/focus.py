"""What a highlighted finding involves, in IR terms (``fxverify graph --finding CODE[:KEY]``).

Takes the policy, its graph, one refutation (its witness) and the diagnostic made from it;
produces a ``Focus``: the edges the trace shows, the regions that hold the witness byte (or that
the culprits touch), the devices and links the edges' bytes may cross, the orderings the verified
fix adds (its ``After`` edits, or the instance of a ``FamilyAfter``: the missing ordering) or, for a race with no such fix, the two
edges that may overlap, and for a missing path (FX-HOOK-001) its two ends and what the fabric reaches. Emits
no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic
from fxverify.edits import After, FamilyAfter
from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.result import HintCheck, Refutation


@dataclass(frozen=True)
class Focus:
    """A finding to highlight.

    ``key`` is the obligation key; ``edges`` the ids of every edge its trace shows (culprits
    first in ``culprits``); ``regions`` region instance names; ``address``/``space`` the witness
    byte; ``missing`` ``(before, after, label)`` orderings (edge ids) the fix adds;
    ``overlap`` pairs of edge ids that may overlap in time; ``devices`` and ``links`` (names) the
    edges' bytes may cross; ``no_path`` the two devices no fabric path joins and ``reach`` the
    devices reachable from the first (FX-HOOK-001).
    """

    diagnostic: Diagnostic
    key: str
    culprits: tuple[int, ...]
    edges: frozenset[int]
    regions: frozenset[str]
    address: int | None = None
    space: str | None = None
    missing: tuple[tuple[int, int, str], ...] = ()
    overlap: tuple[tuple[int, int], ...] = ()
    devices: frozenset[str] = frozenset()
    links: frozenset[str] = frozenset()
    no_path: tuple[str, str] | None = None
    reach: frozenset[str] = frozenset()

    @property
    def label(self) -> str:
        """``FX-ORD-002 data race (write-read) on ...``: the code and message."""
        return f"{self.diagnostic.code} {self.diagnostic.message}"


def focus_of(policy: Policy, graph: PolicyGraph, ref: Refutation, d: Diagnostic, fix: HintCheck | None = None) -> Focus:
    """The ``Focus`` of refutation ``ref`` and its diagnostic ``d`` (the one the pipeline made
    from it); ``fix`` is what verifying its hint found (``CheckResult.hints``), whose ``after``
    edits are the missing orderings."""
    w = ref.witness
    culprits = tuple(w.cycle) if w.cycle else tuple(ref.edges)
    edges = set(culprits) | set(w.schedule)
    if d.trace is not None:
        edges |= {policy.edge(ev.edge).eid for ev in d.trace.events if policy.has("edge", ev.edge)}
    regions: set[str] = set()
    for eid in edges:
        for acc in policy.edges[eid].accesses():
            fp = acc.footprint
            if w.address is None and eid in culprits or (fp.space == w.space and fp.contains(w.address or -1)):
                regions.add(fp.region)
    if d.trace is not None:
        regions |= {ev.edge for ev in d.trace.events if ev.kind == "region" and policy.has("region", ev.edge)}
    named = w.values.get("region")
    if isinstance(named, str) and policy.has("region", named):
        regions.add(named)
    missing = []
    # A family-form fix draws the instance ordering it generalises (``FamilyAfter.instance``).
    shown = (e.instance() if isinstance(e, FamilyAfter) else e for o in (fix.shown if fix is not None else ()) for e in o.edits)
    for ed in (e for e in shown if isinstance(e, After)):
        for pred in ed.preds:
            if policy.has("edge", ed.edge) and policy.has("edge", pred):
                missing.append((policy.edge(pred).eid, policy.edge(ed.edge).eid, f"missing: after {pred}"))
    overlap = []
    if not missing and ref.code in (codes.ORD_002, codes.ORD_003) and len(culprits) == 2 and graph.is_acyclic():
        a, b = sorted(culprits, key=lambda e: (w.schedule.get(e, (0, 0)), e))
        if not graph.ordered(a, b):
            overlap.append((a, b))
    devices: set[str] = set()
    links: set[str] = set()
    for eid in culprits:
        e = policy.edges[eid]
        devices |= {e.device, *graph.transfer_endpoints(e)}
        links |= {ln.name for ln in graph.transfer_links(e)}
    no_path = None
    reach: frozenset[str] = frozenset()
    if ref.code is codes.HOOK_001 and {"from", "to"} <= w.values.keys():
        no_path = (str(w.values["from"]), str(w.values["to"]))
        reach = frozenset(str(w.values.get("cut", no_path[0])).split(","))
        links = set()
    return Focus(d, ref.key, culprits, frozenset(edges), frozenset(regions), w.address, w.space, tuple(missing),
                 tuple(overlap), frozenset(devices), frozenset(links), no_path, reach)
