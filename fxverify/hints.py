"""Verified hints: before a refutation's hint is shown, apply it to the IR and check the policy
again; show it only when the finding is discharged and no new finding appears.

Takes the policy, its refuted findings (each with the obligation's ``Hint``: options of
``fxverify.edits``, whose words and IR change are one object), the diagnostics built for them and
a ``recheck`` function (``pipeline.discharge`` on the edited policy, without hint verification);
returns the diagnostics with each finding's ``help`` replaced by what was verified, and what each
search found (``HintCheck``).

The candidates of one finding are its own options; the *rewrites* of the orderings across devices
among them (``observe.Observers.rewrites``: the same wait carried by edges the devices can
observe); and, in a fixed order, the edits of its own options alone, the options of the other
findings on the edges it shows, ``after`` between those edges (both ways, never closing an HB
cycle), the swap of two edges a direct ``after`` chains, and the rewrites of those. Each
candidate has a *rank* (``observe``): ``SAME`` when every ordering it adds is between edges of
one device (or already holds), ``OBSERVED`` when the waiting device can observe each edge it
waits for, ``UNOBSERVED`` otherwise. The search tries, and stops at the first step that finds a
fix:

1. its own options of rank ``SAME``; those that discharge it are shown, joined by ``, or``;
2. the rewrites of its own options of rank ``SAME`` that keep the waiting edge (it waits on an
   edge of its own device, or a signal to it, already after the one it waited for): the first
   that discharges it is shown;
3. its own options of rank ``OBSERVED`` (all that discharge it are shown);
4. the rewrites of its own options of rank ``SAME`` that move the wait onto an edge of the
   predecessor's device (the doorbell after the descriptor store): the first that discharges it;
5. the other candidates of rank ``SAME``, then ``OBSERVED``, then the rewrites among them that
   move a wait onto another edge (the first that discharges it);
6. pairs of those options and candidates; the first pair that does is shown as "no single edit
   discharges this finding; these two together do: A, and B";
7. its own options, then the candidates, then pairs, of rank ``UNOBSERVED``: a last resort, whose
   text says what must carry the ordering ("... needs a completion or notification from `X` to
   `E`");
8. else no fix is shown, and ``help`` says plainly that no verified fix was found.

An edit *discharges* a happens-before cycle (FX-ORD-001) when the edited policy has no cycle: no
other obligation was checked with the cycle, so what the edit lets be checked is not new; the help
counts the obligations it hid that are then not proved (``UNCYCLED``). An edit *discharges* any
other finding when, in the edited policy, its obligation is proved (or no longer generated), every
obligation that was proved stays proved, no obligation of its family (the same code family) blames
one of the edges the finding involves (those it blames and those that explain it): a fix that moves
the bug to a neighbouring finding of the same kind (another transfer of the same batch, the next
allocation of the same block) is no fix, unless its family form (below) discharges the finding,
which is tried for such an edit and for the options of every finding (every request evicting its
slot early; a pooled block's lifetime, refuted until every wait is fixed); and every use of a block with a lifetime stays in the
allocation it belonged to (``lifetimes.allocation``): an ordering that moves a use into the next
request's allocation proves the policy and leaks that request's data. It is rejected before any
check, as is an edit after which a read of an edge it changes reads from a write declared after
that read which did not reach it before, while another did (``Verifier.reads_later_data``: the send
of a buffer moved after its refill sends the refill). A shown ``after`` on an instance of an edge
family is written on the family's declaration (``edits.FamilyAfter``: ``after pull[b]`` on
``free[b]``, else ``after pull[*]``) when that form, applied to every instance, discharges the
finding too. The search is deterministic and bounded: at most ``MAX_SINGLES`` singles and
``MAX_PAIRS`` pairs per finding, ``recheck_limit`` checks per policy (fewer for a large one; an
edit set checked once is remembered, and checked again uncounted for a finding of another family
than the one its check decided: ``Rechecked.family``), and none above ``MAX_EDGES`` edges or past ``MAX_FINDINGS``
findings. Sources: project issue 10, item 8 ("Verified hints"); specs/output.md, "Fix hints".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import replace
from itertools import combinations

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic
from fxverify.edits import After, Edit, Hint, Option, Swap, after, family_forms
from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.obligations.base import Context
from fxverify.obligations.lifetimes import allocation, allocations
from fxverify.observe import OBSERVED, SAME, UNOBSERVED, Observers, needs, reaching_writes
from fxverify.rechecks import Finding, Recheck, Rechecked
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
#: The status of a verified fix of a happens-before cycle (FX-ORD-001): with a cycle no other
#: obligation was checked, so the check with the fix applied checks them for the first time.
UNCYCLED = "verified: checked again with it applied, no cycle is left"
#: The opening of the help of a finding for which no edit verified.
NONE_FOUND = "no verified fix found"
#: The opening of a pair of edits shown because no single one verified.
PAIR = "no single edit discharges this finding; these two together do: "



class _Budget(Exception):
    """The policy's ``MAX_RECHECKS`` is spent."""


class Verifier:
    """Applies options to one policy and checks the result again, remembering each edit set.

    ``before`` holds the keys of the obligations that are not proved in ``policy``; ``ctx`` is
    the obligations' ``Context`` of ``policy`` (built when not given)."""

    def __init__(self, policy: Policy, before: set[str], recheck: Recheck, limit: int = MAX_RECHECKS,
                 ctx: Context | None = None) -> None:
        self.policy, self.before, self.recheck, self.limit = policy, before, recheck, limit
        self.checked: dict[frozenset[Edit], Rechecked | None] = {}
        self.rechecks = 0
        #: The edit sets rejected because they move a use of a block into another allocation.
        self.moved: set[frozenset[Edit]] = set()
        #: The edit sets rejected because a read would read a later write's data.
        self.later: set[frozenset[Edit]] = set()
        self._ctx = ctx
        self._obs: Observers | None = None
        self._allocs: dict[tuple[str, str], frozenset[str] | None] | None = None
        self._ranks: dict[frozenset[Edit], tuple[int, list[tuple[str, str]]]] = {}

    def ctx(self) -> Context:
        """The obligations' ``Context`` of the policy as written."""
        if self._ctx is None:
            self._ctx = Context(self.policy, PolicyGraph(self.policy))
        return self._ctx

    def observers(self) -> Observers:
        """What each device of the policy as written can observe (``observe.Observers``)."""
        if self._obs is None:
            self._obs = Observers(self.policy, self.ctx().graph)
        return self._obs

    def rank(self, options: tuple[Option, ...]) -> tuple[int, list[tuple[str, str]]]:
        """``observe.Observers.rank`` of ``options`` applied together (``SAME`` when they do not
        apply)."""
        key = frozenset(e for o in options for e in o.edits)
        if key not in self._ranks:
            edits = [e for o in options for e in o.edits]
            obs = self.observers()
            if all(o.edits for o in options) and all(type(e) is After for e in edits):
                # only orderings added (most candidates): ranked without rebuilding the policy
                new = obs.added_orderings(edits)  # type: ignore[arg-type]
                self._ranks[key] = (SAME, []) if new is None else obs.rank_orderings(self.policy, new)
            else:
                edited = _applied(self.policy, options)
                self._ranks[key] = (SAME, []) if edited is None else obs.rank(edited)
        return self._ranks[key]

    def same_allocations(self, edited: Policy, graph: PolicyGraph | None = None) -> bool:
        """True when every use of a block with a lifetime in the policy as written belongs in
        ``edited`` to the allocation it belonged to (``lifetimes.allocation``; one of them when
        HB left several, any when it placed the use in none). ``graph``: ``edited``'s, when the
        caller has it."""
        if self._allocs is None:
            self._allocs = allocations(self.ctx())
        if not self._allocs:
            return True
        ctx = Context(edited, graph or PolicyGraph(edited))
        if not ctx.graph.is_acyclic():
            return True  # FX-ORD-001 in the check again rejects it
        for (region, name), was in self._allocs.items():
            if not was or not edited.has("edge", name) or not edited.has("region", region):
                continue  # HB placed the use in no allocation (the finding itself): any will do
            now = allocation(ctx, region, edited.edge(name).eid)
            if now is None or not now or not now <= was:
                return False
        return True

    def reads_later_data(self, edited: Policy, graph: PolicyGraph | None = None) -> bool:
        """True when, in ``edited``, a read of an edge the edit changed reads bytes from a write
        declared after that read which did not reach it in the policy as written, while some
        write did reach it there (``reaching_writes``), or no longer from any write that reached
        it there (``step after zero`` reads the zeroed gradients, not their sum). Such an edit trades a race for reading the
        next iteration's data (``send0 after send1``: the send of the first buffer then sends the
        refill it raced with), which changes what the flow means; the other order of the same two
        edges (the refill after the send) keeps it. ``graph``: ``edited``'s, when the caller has
        it."""
        changed = [e for e in edited.edges if self.policy.has("edge", e.name) and self.policy.edge(e.name) != e]
        if not changed:
            return False
        graph = graph or PolicyGraph(edited)
        if not graph.is_acyclic():
            return False  # FX-ORD-001 in the check again rejects it
        order = {e.name: e.eid for e in self.policy.edges}
        for e in changed:
            was = reaching_writes(self.policy, self.ctx().graph, self.policy.edge(e.name).eid)
            now = reaching_writes(edited, graph, e.eid)
            for pos, writers in now.items():
                before = {self.policy.edges[w].name for w in was.get(pos, ())}
                now_names = {edited.edges[w].name for w in writers}
                if before and any(order.get(name, -1) > order[e.name] for name in now_names - before):
                    return True
                if before and now_names and not before & now_names:
                    return True  # every write it read from is overwritten first: other data
        return False

    def unproved(self, options: tuple[Option, ...], f: Finding | None = None) -> Rechecked | None:
        """What stays unproved with ``options`` applied in order, or ``None`` when one does not
        apply, the result moves a use into another allocation (``same_allocations``) or makes a
        read read a later write's data (``reads_later_data``). The refutations are replayed
        (``Rechecked.blamed``) when judging finding ``f`` needs the edges they blame
        (``needs_blame``; always without ``f``); an edit set checked before without them is
        checked again when it does, which the budget does not count (it counts edit sets).
        Raises ``_Budget`` when a new edit set needs a check and the budget is spent."""
        key = frozenset(e for o in options for e in o.edits)
        hit = self.checked.get(key, False)
        if hit is not False and (hit is None or self._judges(hit, f) and (
                hit.blamed is not None or not self.needs_blame(f, hit.unproved))):
            return hit
        edited = _applied(self.policy, options)
        if edited is None:
            self.checked[key] = None
            return None
        graph = PolicyGraph(edited)  # one HB graph of the edited policy for both filters
        if not self.same_allocations(edited, graph):
            self.moved.add(key)
            self.checked[key] = None
            return None
        if self.reads_later_data(edited, graph):
            self.later.add(key)
            self.checked[key] = None
            return None
        if hit is False:
            # the budget counts edit sets: checking one again to replay it is not a new one
            if self.rechecks >= self.limit:
                raise _Budget
            self.rechecks += 1
        self.checked[key] = out = self.recheck(edited, lambda unproved: self.needs_blame(f, unproved), self._stop(f),
                                               self._decided_family(f))
        return out

    @staticmethod
    def _decided_family(f: Finding | None) -> str | None:
        """The family whose obligations unproved before a re-check judging ``f`` decides again:
        ``f``'s. ``discharges`` reads the others' only as unproved keys the policy had (which
        never reject an edit), so they need no solver; ``None`` (all) for a cycle, whose help
        counts what stays unproved, and without ``f``."""
        return None if f is None or f.ob.code is codes.ORD_001 else f.ob.family.name

    def _stop(self, f: Finding | None) -> Callable[[str], bool] | None:
        """Where a re-check judging ``f`` may stop: at an unproved obligation the policy proved, or
        ``f``'s own (either rejects the edit); ``None`` (a whole check) for a cycle, whose help
        counts what stays unproved, and without ``f``."""
        if f is None or f.ob.code is codes.ORD_001:
            return None
        own, before = f.ob.key, self.before
        return lambda k: k == own or k not in before

    def _judges(self, hit: Rechecked, f: Finding | None) -> bool:
        """Re-check ``hit`` judges ``f``: it decided ``f``'s family (``Rechecked.family``), and it
        ran whole or stopped at a key rejecting ``f``'s edits."""
        if hit.family is not None and hit.family != self._decided_family(f):
            return False
        return hit.stopped is None or f is not None and f.ob.code is not codes.ORD_001 and (
            hit.stopped == f.ob.key or hit.stopped not in self.before)

    def needs_blame(self, f: Finding | None, unproved: Collection[str]) -> bool:
        """Whether judging ``f`` on a re-check that left ``unproved`` (keys) needs the edges its
        refutations blame: not for a cycle (``discharges``), nor when the verdicts alone reject
        the edit (``f`` still refuted, or an obligation proved before is not); always without
        ``f``."""
        if f is None:
            return True
        return f.ob.code is not codes.ORD_001 and f.ob.key not in unproved and all(k in self.before for k in unproved)

    def discharges(self, f: Finding, options: tuple[Option, ...], siblings: bool = True) -> bool:
        """True when ``options`` applied together discharge ``f`` and add no finding (module
        docstring); with ``siblings`` false, even when obligations of ``f``'s family still blame
        its edges (an edit of one instance of a family whose every instance has the bug: its
        family form is then tried, ``verify``)."""
        after_ = self.unproved(options, f)
        if after_ is None:
            return False
        if f.ob.code is codes.ORD_001:
            # With a cycle nothing else was checked: what the edit lets be checked is not new. The
            # edit must leave no cycle at all; the findings then shown are told apart (``_shown``).
            return not any(k.startswith(f"{codes.ORD_001}:") for k in after_.unproved)
        if f.ob.key in after_.unproved or not set(after_.unproved) <= self.before:
            return False
        if not siblings:
            return True
        mine, fam = f.involved(), f.ob.family.name
        # INVARIANT: ``unproved`` replays the refutations when ``needs_blame`` holds, as it does here
        assert after_.blamed is not None
        return not any(fm == fam and after_.blamed.get(k, frozenset()) & mine for k, fm in after_.unproved.items())


def _applied(policy: Policy, options: tuple[Option, ...]) -> Policy | None:
    """``policy`` with ``options`` applied in order, or ``None`` when one does not apply."""
    edited: Policy | None = policy
    for o in options:
        edited = o.apply(edited) if edited is not None else None
    return edited


def _unique(options: list[Option], skip: set[frozenset[Edit]]) -> list[Option]:
    """``options`` without repeats (by edit set) and without those whose edit set is in ``skip``
    (which collects the sets kept)."""
    out = []
    for o in options:
        if o.key() not in skip:
            skip.add(o.key())
            out.append(o)
    return out


def rewritten(obs: Observers, o: Option) -> list[Option]:
    """The options made from ``o`` by replacing its one ordering across devices (an ``After``
    with one predecessor) with each of its rewrites (``Observers.rewrites``), its other edits
    kept; empty when ``o`` has no such ordering or several."""
    afters = [(i, e) for i, e in enumerate(o.edits) if isinstance(e, After)]
    if len(afters) != 1:
        return []
    i, ed = afters[0]
    return [Option(o.edits[:i] + (r,) + o.edits[i + 1:], o.why) for r in obs.rewrites(ed) if r not in o.edits]


def candidates(f: Finding, others: list[Finding], obs: Observers | None = None) -> list[Option]:
    """Single candidate edits for ``f`` beyond its own options, in trying order before ranking
    (module docstring), without repeats or ``f``'s own options: with ``obs``, the rewrites of
    its own options first (``_candidates``)."""
    own_rw, rest, _carried = _candidates(f, others, obs)
    return own_rw + rest


def _candidates(f: Finding, others: list[Finding],
                obs: Observers | None) -> tuple[list[Option], list[Option], set[frozenset[Edit]]]:
    """``(rewrites of f's own options, the other candidates, carried)``, each list at most
    ``MAX_SINGLES``, without repeats or ``f``'s own options. The others, in order: the edits of
    its own options alone, the options of the other findings on its edges, ``after`` both ways
    between its edges (never closing an HB cycle), swaps of two edges a direct ``after`` chains,
    each followed by its rewrites (with ``obs``). ``carried``: the edit sets of the rewrites that
    move the wait onto another edge (``Observers.rewrites``, first kind)."""
    ob = f.ob
    pol, g = ob.ctx.policy, ob.ctx.graph
    ids = sorted(set(ob.culprits()) | set(f.shown))
    names = {pol.edges[i].name for i in ids}
    out: list[Option] = [Option((e,)) for o in f.hint.options if len(o.edits) > 1 for e in o.edits]
    for x in others:
        if x is not f and (x.culprits() | {pol.edges[i].name for i in x.shown}) & names:
            # Without their reasons: a condition for another finding ("only if it needs no more
            # than the bytes written before it") is not this finding's.
            out += [Option(o.edits) if x.ob.code != f.ob.code else o for o in x.hint.options]
    if g.is_acyclic():
        for a in ids:
            for b in ids:
                if a != b and not g.hb_before(a, b) and not g.hb_before(b, a):
                    out.append(Option((after(pol.edges[b].name, pol.edges[a].name),)))
        for a in ids:
            for b in ids:
                if pol.edges[a].name in pol.edges[b].after:
                    out.append(Option((Swap(pol.edges[a].name, pol.edges[b].name),)))
    seen = {o.key() for o in f.hint.options}
    if obs is None:
        return [], _unique(out, seen)[:MAX_SINGLES], set()
    carried: set[frozenset[Edit]] = set()

    def rws(o: Option) -> list[Option]:
        made = rewritten(obs, o)
        waits = {e.edge for e in o.edits if isinstance(e, After)}
        carried.update(r.key() for r in made if any(isinstance(e, After) and e.edge not in waits for e in r.edits))
        return made

    own = _unique([r for o in f.hint.options for r in rws(o)], seen)[:MAX_SINGLES]
    rest = _unique([r for o in out for r in (o, *rws(o))], seen)
    return own, rest, carried


def _pairs(singles: list[Option], limit: int = MAX_PAIRS) -> Iterator[tuple[Option, Option]]:
    """Pairs of singles that share no edit, in order, at most ``limit``."""
    n = 0
    for a, b in combinations(singles, 2):
        if a.key() & b.key():
            continue
        if n == limit:
            return
        n += 1
        yield a, b


def verify(v: Verifier, f: Finding, others: list[Finding]) -> tuple[str, HintCheck]:
    """``(help, check)`` for finding ``f``: the first step of the ranked search (module
    docstring) that finds a fix, written on family declarations where that verifies too and
    with what must carry an unobserved ordering, else the plain statement that none was found."""
    tried = 0
    obs = v.observers()

    def rank(*opts: Option) -> int:
        return v.rank(opts)[0]

    moved = later = False

    def carried(o: Option) -> bool:
        # A rewrite that moves the wait onto another edge (the doorbell after the descriptor
        # store) orders two edges the finding did not wait between: it comes after an ordering
        # the waiting device observes as written (a completion it polls, data landing in it).
        return o.key() in moves

    def ok(*opts: Option, own: bool = False) -> bool:
        nonlocal tried, moved, later
        tried += 1
        good = v.discharges(f, opts)
        key = frozenset(e for o in opts for e in o.edits)
        moved |= key in v.moved
        later |= key in v.later
        if not good and (own or key in theirs or v.discharges(f, opts, siblings=False)):
            # its family form counts (module docstring); that checked form is shown (``as_passed``)
            form = next((c for c in _family(v.policy, opts) if v.discharges(f, c)), None)
            if form is not None:
                passed[key] = form
                good = True
        return good

    passed: dict[frozenset[Edit], tuple[Option, ...]] = {}  # family forms that passed for their edit sets

    as_passed = lambda *opts: passed.get(frozenset(e for o in opts for e in o.edits), opts)  # noqa: E731
    theirs = {frozenset(o.edits) for x in others if x is not f for o in x.hint.options}  # other findings' edit sets
    try:
        own = list(f.hint.options)
        own_rw, rest, moves = _candidates(f, others, obs)
        # INVARIANT: sorted is stable: candidates of one rank (and size) keep their trying order
        own_rw = sorted(own_rw, key=lambda o: len(o.edits))
        rest = sorted(rest, key=rank)[:MAX_SINGLES]
        steps: list[tuple[bool, list[Option]]] = [
            (True, [o for o in own if rank(o) == SAME]),
            (False, [o for o in own_rw if rank(o) == SAME and not carried(o)]),
            (True, [o for o in own if rank(o) == OBSERVED]),
            (False, [o for o in own_rw if rank(o) == SAME and carried(o)]),
            (False, [o for o in rest if rank(o) == SAME and not carried(o)]
             + [o for o in own_rw + rest if rank(o) == OBSERVED and not carried(o)]
             + [o for o in rest if rank(o) <= OBSERVED and carried(o)]),
        ]
        for every, opts in steps:
            if every:
                good = [o for o in opts if ok(o, own=True)]
                if good:
                    return _shown(v, f, tuple(x for o in good for x in as_passed(o)), "verified", tried)
                continue
            for o in opts:
                if ok(o):
                    return _shown(v, f, as_passed(o), "verified", tried)
        pairs = list(_pairs(own + own_rw + rest, len(own + own_rw + rest) ** 2))
        low = [(a, b) for a, b in pairs if max(rank(a), rank(b)) <= OBSERVED][:MAX_PAIRS]
        for a, b in low:
            if ok(a, b):
                return _shown(v, f, as_passed(a, b), "pair", tried)
        good = [o for o in own if rank(o) == UNOBSERVED and ok(o, own=True)]
        if good:
            return _shown(v, f, tuple(x for o in good for x in as_passed(o)), "verified", tried)
        for o in own_rw + rest:
            if rank(o) == UNOBSERVED and ok(o):
                return _shown(v, f, as_passed(o), "verified", tried)
        high = [(a, b) for a, b in pairs if max(rank(a), rank(b)) == UNOBSERVED][:MAX_PAIRS - len(low)]
        for a, b in high:
            if ok(a, b):
                return _shown(v, f, as_passed(a, b), "pair", tried)
        bound = ""
    except _Budget:
        bound = f", when the bound of {v.limit} checks per policy was reached"
    if not tried:
        return f"{NONE_FOUND}: fxverify has no edit to propose for this finding", HintCheck("none", (), 0)
    what = "the one edit fxverify applied and checked again does not discharge" if tried == 1 else (
        f"none of the {tried} edits and pairs of edits fxverify applied and checked again discharges")
    note = ""
    if moved:
        note = (" (an edit that would move a use of a block into another of its allocations, where it reads another "
                 "request's data, is never proposed)")
    elif later:
        note = " (an edit that would make a read read the data of a write declared after it is never proposed)"
    return (f"{NONE_FOUND}: {what} this finding without leaving another of its family on its edges or adding "
            f"a new one{bound}{note}", HintCheck("none", (), tried))


def _shown(v: Verifier, f: Finding, options: tuple[Option, ...], status: str, tried: int) -> tuple[str, HintCheck]:
    """``(help, check)`` showing ``options`` (each discharging ``f`` alone, or a ``pair``): each
    ``after`` on a family instance written on its declaration when that form discharges ``f``
    too (``_family``), and each option whose rank is ``UNOBSERVED`` followed by what must carry
    its orderings (``observe.needs``)."""
    try:
        if status == "verified":
            options = tuple(_smallest(v, f, o) for o in options)
        if status == "pair":
            fam = _family(v.policy, options)
            options = next((c for c in fam if v.discharges(f, c)), options)
        else:
            options = tuple(next((c[0] for c in _family(v.policy, (o,)) if v.discharges(f, c)), o) for o in options)
    except _Budget:
        pass
    out = []
    for o in options:
        worst, bad = v.rank((o,))
        if worst == UNOBSERVED:
            edited = _applied(v.policy, (o,))
            assert edited is not None  # INVARIANT: a shown option applies
            note = needs(v.policy, edited, bad, o)
            o = Option(o.edits, f"{o.why}; {note}" if o.why else note)
        out.append(o)
    shown = tuple(out)
    said = VERIFIED
    if f.ob.code is codes.ORD_001:
        # The fixes that leave the fewest failing obligations of those the cycle hid, and how many.
        def failing(opts: tuple[Option, ...]) -> int:
            got = v.checked.get(frozenset(e for o in opts for e in o.edits))
            return len(got.unproved) if got else 0
        if status != "pair":
            least = min(failing((o,)) for o in shown)
            shown = tuple(o for o in shown if failing((o,)) == least)
        n = failing(shown)
        said = UNCYCLED + (f"; {n} of the obligations the cycle hid are not proved" if n else "; every obligation the cycle hid holds")
    if status == "pair":
        text = f"{PAIR}{shown[0].text()}, and {shown[1].text()} ({said})"
    else:
        text = Hint(shown).text() + f" ({said})"
    return text, HintCheck(status, shown, tried)


def _smallest(v: Verifier, f: Finding, o: Option) -> Option:
    """``o`` without each edit whose removal still discharges ``f`` (one at a time, in order):
    a lease or a clause the ordering beside it makes unneeded is not shown."""
    eds = list(o.edits)
    i = 0
    while len(eds) > 1 and i < len(eds):
        fewer = Option(tuple(eds[:i] + eds[i + 1:]), o.why)
        if v.rank((fewer,))[0] <= v.rank((Option(tuple(eds)),))[0] and v.discharges(f, (fewer,)):
            eds = list(fewer.edits)
        else:
            i += 1
    return o if len(eds) == len(o.edits) else Option(tuple(eds), o.why)


def _family(policy: Policy, options: tuple[Option, ...]) -> list[tuple[Option, ...]]:
    """``options`` with every ``after`` on an instance of an edge family of ``policy`` written on
    its declaration (``edits.family_forms``): first each predecessor generalised index by index,
    then with ``[*]``; empty when no edit of ``options`` is on a family instance."""
    out: list[tuple[Option, ...]] = []
    for k in (0, 1):
        changed = False
        made = []
        for o in options:
            eds: list[Edit] = []
            for e in o.edits:
                forms = family_forms(policy, e) if isinstance(e, After) else []
                if forms:
                    eds.append(forms[min(k, len(forms) - 1)])
                    changed = True
                else:
                    eds.append(e)
            made.append(Option(tuple(eds), o.why))
        if changed and tuple(made) not in out:
            out.append(tuple(made))
    return out


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
    v = Verifier(policy, before, recheck, recheck_limit(obligations), findings[0].ob.ctx if findings else None)
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
