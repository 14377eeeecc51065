"""Verified hints: before a refutation's hint is shown, apply it to the IR and check the policy
again; show it only when the finding is discharged and no new finding appears.

Takes the policy, its refuted findings (each with the obligation's ``Hint``: options of
``fxverify.edits``, whose words and IR change are one object), the diagnostics built for them and
a ``recheck`` function (``pipeline.discharge`` on the edited policy, without hint verification);
returns the diagnostics with each finding's ``help`` replaced by what was verified, and what each
search found (``HintCheck``). For one finding:

1. each option of its own hint is applied and the policy checked again; the options that
   discharge it are shown, joined by ``, or``, followed by ``(verified: ...)``;
2. else single candidate edits are tried, in a fixed order: the edits of its own options alone,
   the options of the other findings on the edges it shows, ``after`` between those edges (both
   ways, never closing an HB cycle) and the swap of two edges a direct ``after`` chains; the
   first that discharges it is shown;
3. else pairs of its own options and those candidates; the first pair that does is shown as "no single edit
   discharges this finding; these two together do: A, and B";
4. else no fix is shown, and ``help`` says plainly that no verified fix was found.

An edit *discharges* a finding when, in the edited policy, its obligation is proved (or no longer
generated), every obligation that was proved stays proved, and no obligation of its family (the
same code family) blames one of the edges the finding involves (those it blames and those that
explain it): a fix that moves the bug to a neighbouring finding of the same kind (another
transfer of the same batch, the next allocation of the same block) is no fix. The search is deterministic and bounded: at
most ``MAX_SINGLES`` singles and ``MAX_PAIRS`` pairs per finding, ``recheck_limit`` checks per
policy (fewer for a large one; an edit set checked once is remembered), and none above
``MAX_EDGES`` edges or past ``MAX_FINDINGS`` findings. Source: project issue 10, item 8 ("Verified hints").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import combinations

from fxverify.diagnostics.model import Diagnostic
from fxverify.edits import Edit, Hint, Option, Swap, after
from fxverify.ir import Policy
from fxverify.obligations.base import Obligation
from fxverify.result import HintCheck

#: Policies with more edges than this get no hint (each candidate is a check of the whole policy).
MAX_EDGES = 3000
#: Findings per policy whose hints are verified; later ones get no hint.
MAX_FINDINGS = 40
#: Candidate single edits and pairs of them tried per finding whose own hint does not verify.
MAX_SINGLES = 12
MAX_PAIRS = 24
#: Checks of edited policies per policy, over all its findings (cached edit sets are free): at
#: most ``MAX_RECHECKS``, and fewer for a large policy, so that the obligations discharged again
#: stay near ``RECHECK_WORK`` (each check discharges all of them), but never fewer than
#: ``MIN_RECHECKS``.
MAX_RECHECKS = 150
MIN_RECHECKS = 4
RECHECK_WORK = 1_000_000

#: The status a verified hint carries: with it applied, the policy was checked again.
VERIFIED = "verified: checked again with it applied, this finding is gone and none is new"
#: The opening of the help of a finding for which no edit verified.
NONE_FOUND = "no verified fix found"
#: The opening of a pair of edits shown because no single one verified.
PAIR = "no single edit discharges this finding; these two together do: "

#: ``recheck(policy)`` -> the obligations that are not proved (refuted or unknown): key -> (its
#: family's name, the names of the edges its finding blames).
Recheck = Callable[[Policy], dict[str, tuple[str, frozenset[str]]]]


@dataclass(frozen=True)
class Finding:
    """One refuted obligation whose hint is to be verified: its ``hint``, the edge ids its trace
    shows (``shown``: primary and context edges) and its diagnostic's index in the list."""

    ob: Obligation
    hint: Hint
    shown: tuple[int, ...]
    index: int

    def culprits(self) -> frozenset[str]:
        """Names of the edges the finding blames (its fingerprint's edges)."""
        return frozenset(self.ob.name(e) for e in self.ob.culprits())

    def involved(self) -> frozenset[str]:
        """Names of the obligation's primary edges: those it blames and those that explain it (the
        other events of a lifetime, the handoffs of an ownership rule, the flushes of a link)."""
        return frozenset(self.ob.name(e) for e in self.ob.edges)


class _Budget(Exception):
    """The policy's ``MAX_RECHECKS`` is spent."""


class Verifier:
    """Applies options to one policy and checks the result again, remembering each edit set.

    ``before`` holds the keys of the obligations that are not proved in ``policy``."""

    def __init__(self, policy: Policy, before: set[str], recheck: Recheck, limit: int = MAX_RECHECKS) -> None:
        self.policy, self.before, self.recheck, self.limit = policy, before, recheck, limit
        self.checked: dict[frozenset[Edit], dict[str, tuple[str, frozenset[str]]] | None] = {}
        self.rechecks = 0

    def unproved(self, options: tuple[Option, ...]) -> dict[str, tuple[str, frozenset[str]]] | None:
        """What stays unproved with ``options`` applied in order, or ``None`` when one does not
        apply. Raises ``_Budget`` when a new check is needed and the budget is spent."""
        key = frozenset(e for o in options for e in o.edits)
        if key in self.checked:
            return self.checked[key]
        edited: Policy | None = self.policy
        for o in options:
            edited = o.apply(edited) if edited is not None else None
        if edited is None:
            self.checked[key] = None
            return None
        if self.rechecks >= self.limit:
            raise _Budget
        self.rechecks += 1
        self.checked[key] = out = self.recheck(edited)
        return out

    def discharges(self, f: Finding, options: tuple[Option, ...]) -> bool:
        """True when ``options`` applied together discharge ``f`` and add no finding (module
        docstring)."""
        after_ = self.unproved(options)
        if after_ is None:
            return False
        mine, fam = f.involved(), f.ob.family.name
        return (f.ob.key not in after_ and set(after_) <= self.before
                and not any(fm == fam and blamed & mine for fm, blamed in after_.values()))


def candidates(f: Finding, others: list[Finding]) -> list[Option]:
    """Single candidate edits for ``f`` whose own options did not verify, in trying order
    (module docstring, step 2), without repeats or ``f``'s own options."""
    ob = f.ob
    pol, g = ob.ctx.policy, ob.ctx.graph
    ids = sorted(set(ob.culprits()) | set(f.shown))
    names = {pol.edges[i].name for i in ids}
    out: list[Option] = [Option((e,)) for o in f.hint.options if len(o.edits) > 1 for e in o.edits]
    for x in others:
        if x is not f and (x.culprits() | {pol.edges[i].name for i in x.shown}) & names:
            out += x.hint.options
    if g.is_acyclic():
        for a in ids:
            for b in ids:
                if a != b and not g.hb_before(a, b) and not g.hb_before(b, a):
                    out.append(Option((after(pol.edges[b].name, pol.edges[a].name),)))
        for a in ids:
            for b in ids:
                if pol.edges[a].name in pol.edges[b].after:
                    out.append(Option((Swap(pol.edges[a].name, pol.edges[b].name),)))
    own = {o.key() for o in f.hint.options}
    seen: set[frozenset[Edit]] = set()
    uniq = []
    for o in out:
        if o.key() not in own and o.key() not in seen:
            seen.add(o.key())
            uniq.append(o)
    return uniq[:MAX_SINGLES]


def _pairs(singles: list[Option]) -> Iterator[tuple[Option, Option]]:
    """Pairs of singles that share no edit, in order, at most ``MAX_PAIRS``."""
    n = 0
    for a, b in combinations(singles, 2):
        if a.key() & b.key():
            continue
        if n == MAX_PAIRS:
            return
        n += 1
        yield a, b


def verify(v: Verifier, f: Finding, others: list[Finding]) -> tuple[str, HintCheck]:
    """``(help, check)`` for finding ``f``: its verified options, else the first verified single,
    else the first verified pair, else the plain statement that none was found (module
    docstring)."""
    tried = 0
    try:
        good = []
        for o in f.hint.options:
            tried += 1
            if v.discharges(f, (o,)):
                good.append(o)
        if good:
            return Hint(tuple(good)).text() + f" ({VERIFIED})", HintCheck("verified", tuple(good), tried)
        singles = candidates(f, others)
        for o in singles:
            tried += 1
            if v.discharges(f, (o,)):
                return f"{o.text()} ({VERIFIED})", HintCheck("verified", (o,), tried)
        for a, b in _pairs(list(f.hint.options) + singles):
            tried += 1
            if v.discharges(f, (a, b)):
                return f"{PAIR}{a.text()}, and {b.text()} ({VERIFIED})", HintCheck("pair", (a, b), tried)
        bound = ""
    except _Budget:
        bound = f", when the bound of {v.limit} checks per policy was reached"
    if not tried:
        return f"{NONE_FOUND}: fxverify has no edit to propose for this finding", HintCheck("none", (), 0)
    what = "the one edit fxverify applied and checked again does not discharge" if tried == 1 else (
        f"none of the {tried} edits and pairs of edits fxverify applied and checked again discharges")
    return (f"{NONE_FOUND}: {what} this finding without leaving another of its family on its edges or adding "
            f"a new one{bound}", HintCheck("none", (), tried))


def recheck_limit(obligations: int) -> int:
    """How many edited policies may be checked again for a policy of ``obligations`` obligations
    (``MAX_RECHECKS``, ``RECHECK_WORK``, ``MIN_RECHECKS``)."""
    return max(MIN_RECHECKS, min(MAX_RECHECKS, RECHECK_WORK // max(1, obligations)))


def verify_all(policy: Policy, findings: list[Finding], diagnostics: list[Diagnostic], before: set[str],
               recheck: Recheck, obligations: int = 0, on_each: Callable[[], None] | None = None
               ) -> tuple[list[Diagnostic], dict[str, HintCheck]]:
    """``diagnostics`` with the ``help`` (and trace ``fix``) of each finding replaced by what
    ``verify`` found, and that per obligation key; ``obligations`` (the policy's count) sets the
    bound on checks (``recheck_limit``). Findings past the bounds (``MAX_EDGES``,
    ``MAX_FINDINGS``) get no hint, and say why. ``on_each`` is called after each finding (a
    progress bar)."""
    out, checks = list(diagnostics), {}
    v = Verifier(policy, before, recheck, recheck_limit(obligations))
    for n, f in enumerate(findings):
        if on_each is not None and n:
            on_each()
        d = out[f.index]
        if len(policy.edges) > MAX_EDGES or n >= MAX_FINDINGS:
            why = f"this policy has {len(policy.edges)}" if len(policy.edges) > MAX_EDGES else f"this is finding {n + 1}"
            text = (f"{NONE_FOUND}: fxverify checks hints again only on policies of at most {MAX_EDGES} edges, "
                    f"for their first {MAX_FINDINGS} findings, and {why}")
            check = HintCheck("skipped", (), 0)
        else:
            text, check = verify(v, f, findings)
        checks[f.ob.key] = check
        out[f.index] = replace(d, help=text, trace=replace(d.trace, fix=text) if d.trace is not None else None)
    if on_each is not None and findings:
        on_each()
    return out, checks
