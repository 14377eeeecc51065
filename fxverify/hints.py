"""Verified hints: before a refutation's hint is shown, apply it to the IR and check the policy
again; show it as verified only when the finding is discharged and no new finding appears.

Takes the policy, the refuted obligations with their witnesses and the diagnostics built for them,
and a ``recheck`` function (``pipeline.discharge`` on the edited policy, without hint
verification); returns the diagnostics with their hints replaced by the verified ones, each
followed by its status: ``(verified: ...)`` or ``(not verified: why)``. The edits it can apply are orderings, ``add `after P` to `E```: the
hint text names them (every obligation's ``fix`` writes them that way), and when the shown hint
does not discharge the finding, single orderings between the finding's edges (and the edges its
trace shows) are tried, then pairs of them. An edit applies to the edge instance it names
(``spill[3]``); in a ``for`` family, write it on the family so that it holds for that instance.

A hint that is not an ordering (a lease, a size, a declaration) is kept and marked as not
verified. Verification is skipped, and the hint so marked, above ``MAX_EDGES`` edges or beyond
``MAX_FINDINGS`` findings per policy, so output stays deterministic and the check stays
bounded. Source: issue "Verdicts that match how real systems move memory", item 8.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from itertools import combinations

from fxverify.diagnostics.model import Diagnostic
from fxverify.ir import Policy
from fxverify.obligations.base import Obligation

#: Policies with more edges than this keep their hints unverified (each candidate is a re-check).
MAX_EDGES = 3000
#: Findings per policy whose hints are verified; the rest keep theirs unverified.
MAX_FINDINGS = 40
#: Candidate orderings tried alone, and pairs of them, per finding.
MAX_SINGLES = 12
MAX_PAIRS = 24

#: The status a verified hint carries: with it applied, the policy was checked again.
VERIFIED = "verified: checked again with it applied, this finding is gone and none is new"

_AFTER = re.compile(r"add `after ([^`]+)` to `([^`]+)`")

#: ``recheck(policy)`` -> the obligations that are not proved (refuted or unknown): key -> (its
#: family's name, the ids of the edges it blames; empty for an unknown).
Recheck = Callable[[Policy], dict[str, tuple[str, frozenset[int]]]]


@dataclass(frozen=True)
class After:
    """The edit ``add `after pred` to `edge```: edge instance ``edge`` starts only once edge
    instance ``pred`` has finished."""

    edge: str
    pred: str

    def text(self) -> str:
        """The edit as a hint says it."""
        return f"add `after {self.pred}` to `{self.edge}`"


def parse(hint: str) -> tuple[After, ...]:
    """The orderings a hint text asks for (each ``add `after A, B` to `E``` gives one per
    predecessor), in order; ``()`` when it asks for none."""
    out: list[After] = []
    for preds, edge in _AFTER.findall(hint):
        out += [After(edge, p.strip()) for p in preds.split(",") if p.strip()]
    return tuple(out)


def apply(policy: Policy, edits: Iterable[After]) -> Policy | None:
    """``policy`` with each edit's predecessor added to its edge's ``after``; ``None`` when an
    edit names an edge the policy does not have, or asks for an ordering already there."""
    by_name = {e.name: e for e in policy.edges}
    edges = list(policy.edges)
    for ed in edits:
        e, p = by_name.get(ed.edge), by_name.get(ed.pred)
        if e is None or p is None or e.eid == p.eid or ed.pred in edges[e.eid].after:
            return None
        edges[e.eid] = replace(edges[e.eid], after=edges[e.eid].after + (ed.pred,))
    return replace(policy, edges=tuple(edges), _index={})


def discharges(policy: Policy, before: set[str], ob: Obligation, edits: tuple[After, ...], recheck: Recheck) -> bool:
    """True when applying ``edits`` to ``policy`` discharges the finding of ``ob`` and its family:
    ``ob`` is proved (or no longer generated), every obligation that was proved stays proved (the
    unproved keys are a subset of ``before``, the unproved keys of ``policy``), and no obligation
    of ``ob``'s family that blames one of ``ob``'s edges stays unproved (a hint that only moves
    the bug to a neighbouring finding of the same kind is no fix)."""
    edited = apply(policy, edits)
    if edited is None:
        return False
    after = recheck(edited)
    mine, fam = set(ob.edges), ob.family.name
    return (ob.key not in after and set(after) <= before
            and not any(f == fam and edges & mine for f, edges in after.values()))


def _candidates(ob: Obligation, shown: tuple[int, ...]) -> list[After]:
    """Orderings between the finding's edges and the edges its trace shows, in both directions,
    that are not already HB orderings and that would not close an HB cycle."""
    g, pol = ob.ctx.graph, ob.ctx.policy
    ids = sorted(set(ob.edges) | set(shown))
    out = []
    for a in ids:
        for b in ids:
            if a != b and g.is_acyclic() and not g.hb_before(a, b) and not g.hb_before(b, a):
                out.append(After(pol.edges[b].name, pol.edges[a].name))
    return out[:MAX_SINGLES]


def verified(policy: Policy, before: set[str], ob: Obligation, shown: tuple[int, ...], hint: str,
             recheck: Recheck) -> tuple[str, str]:
    """``(help, status)`` for the finding of ``ob`` whose hint is ``hint``: the hint itself when
    applying it discharges the finding without a new one, else the first single ordering that
    does, else the first pair, else the hint with the reason it is not verified; ``status`` is
    ``VERIFIED`` or starts with ``not verified:``."""
    edits = parse(hint)
    if edits and discharges(policy, before, ob, edits, recheck):
        return hint, VERIFIED
    singles = [c for c in _candidates(ob, shown) if (c,) != edits]
    for c in singles:
        if discharges(policy, before, ob, (c,), recheck):
            return c.text(), VERIFIED
    for a, b in list(combinations(singles, 2))[:MAX_PAIRS]:
        if a.edge == b.pred and a.pred == b.edge:
            continue
        if discharges(policy, before, ob, (a, b), recheck):
            return f"no single edit discharges this finding; these two together do: {a.text()}, and {b.text()}", VERIFIED
    if not edits:
        return hint, "not verified: not an ordering, the only edit fxverify applies and checks again"
    return hint, ("not verified: applied (as every single ordering and pair between the edges shown) it leaves this "
                  "finding, or another of its family on its edges, or adds one")


def verify_all(policy: Policy, findings: list[tuple[Obligation, tuple[int, ...], int]], diagnostics: list[Diagnostic],
               before: set[str], recheck: Recheck, on_each: Callable[[], None] | None = None) -> list[Diagnostic]:
    """``diagnostics`` with the hint of each finding ``(obligation, shown edges, index into
    diagnostics)`` verified (``verified``) and followed by its status in parentheses; findings
    past the bounds keep their hints, marked as not verified. ``on_each`` is called after each
    finding (a progress bar)."""
    out = list(diagnostics)
    for n, (ob, shown, i) in enumerate(findings):
        if on_each is not None and n:
            on_each()
        d = out[i]
        if d.help is None:
            continue
        if len(policy.edges) > MAX_EDGES or n >= MAX_FINDINGS:
            why = f"more than {MAX_EDGES} edges" if len(policy.edges) > MAX_EDGES else f"more than {MAX_FINDINGS} findings"
            help_, status = d.help, f"not verified: the policy has {why}"
        else:
            help_, status = verified(policy, before, ob, shown, d.help, recheck)
        text = f"{help_} ({status})"
        out[i] = replace(d, help=text, trace=replace(d.trace, fix=text) if d.trace is not None else None)
    if on_each is not None and findings:
        on_each()
    return out
