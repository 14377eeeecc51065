"""Parametric proofs: an obligation of a whole edge family discharged once, for every index value.

A declaration inside ``for`` loops (``fxverify.shapes.EdgeShape``) unrolls to one edge per index
tuple, and each instance gets its own obligations. Where the obligation's inputs are affine in the
loop variables, ``Parametric`` states it once over symbolic indices: integer variables ranging over
the loops, constrained by the branches around the declaration, and the region's address and size
expressions (``shapes.RegionShape``) with the reference's index expressions put in for its
parameters. One solver query then decides it for every instance (specs/obligations.md,
"Parametric proofs"; issue "Scale", item 2).

Covered:

- FX-ALIAS-003 (a footprint lies inside its region), by interval bounds over the loop box when
  they suffice (``inside_by_intervals``), else by a query: it asks for loop values inside
  the loops' ranges and the branch conditions for which the footprint's bounding interval
  ``[lo, hi)`` leaves its region instance ``[at, at + size)``; unsat proves every instance, since
  the interval is tight (``Bounds.prove_fast``). The domain is exactly the loops and branches
  around the declaration (loop bounds are constants and loop variables never shadow: FX-NAM-002),
  so it holds every instance the resolver built;
- FX-HOOK-002 (the driving hook is declared): one lookup per declaration (``proved_hooks``);
- FX-OWN-001 (access without ownership), as ``static-owner`` proofs: one interval lookup per
  declaration and footprint position among the regions its device does not own for the whole
  flow (``proved_static_owners``);
- FX-XF-001/002/003: the first instance's fast proofs, when no index changes what they read
  (``invariant``).

Anything else falls back to the unrolled instances, with the reason kept for ``--stats``:

- an expression the translation does not take (a product of two index expressions, a division
  or remainder by anything but a positive constant, a ``[*]`` index): "not affine";
- a query the solver answers sat (some index tuple leaves the region: its unrolled instance is
  refuted and replayed, with the model's indices in the reason) or unknown.

The translation follows ``resolve.expressions`` exactly: ``/`` is floor division and ``%`` the
remainder in ``[0, c)``, which SMT-LIB's ``div``/``mod`` are for a positive divisor ``c``; the
property test in ``tests/obligations/test_parametric.py`` evaluates every translated term at
every instance of random families and compares it with the unrolled footprint. Emits no
diagnostics; raises nothing.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import NamedTuple

from fxverify import ir
from fxverify.diagnostics import codes
from fxverify.obligations.symbolic import (NotAffine, Symbolic, as_term, family_terms, footprint_bytes, footprint_terms,
                                           index_free, inside_by_intervals)
from fxverify.shapes import Shapes
from fxverify.smt.backend import Backend, Query, Result, Status
from fxverify.smt.terms import int_var, or_
from fxverify.source import Span

#: The method name a parametric proof gives each instance's outcome (``--stats``, JSON counts).
METHOD = "parametric"

#: Declarations with fewer instances are left to the unrolled obligations: one instance is
#: proved as fast on its own (an interval), without a solver query.
MIN_INSTANCES = 2

#: A parametric argument that asks the solver is tried only for a declaration (or a pair of
#: declarations) with this many instances or more (``Parametric.worth_a_query``): a query costs 5
#: to 150 ms (about 12 ms on average on the generated 70B TP 8 flows), an instance's fast proof
#: 10 to 20 microseconds, so a query pays from about a thousand instances. Measured (check CPU
#: time, asking from 8 instances against from 1024): 70B TP 8, 1024 tokens, 8 layers 7.2 ->
#: 1.6 s; the same at 8192 tokens 13.8 -> 8.6 s; 2 layers 1.3 -> 0.5 s; Qwen3-8B TP 2 0.27 ->
#: 0.15 s; the Llama-3.1-8B and DeepSeek-V3 policies unchanged (their big families, 4,096 and
#: 16,384 instances, are still asked).
QUERY_MIN_INSTANCES = 1024

#: At most this many proofs are held before they are yielded (``Held.add``): a ``ProvedTogether``
#: holds its keys as one string, and a run of millions (FX-OWN-001 over a 70B policy's layers)
#: would otherwise be held whole until the next unrolled obligation.
HELD_BATCH = 4096

@dataclass(frozen=True)
class ProvedTogether:
    """Obligations proved by one argument, without an ``Obligation`` object each (a parametric
    proof): their ``keys`` (newline-joined, in order, as each
    ``Obligation.key`` would be), the ``codes`` of each and the proof's ``method``. A family
    yields it among its obligations; the discharge logs a proved outcome per key. Only codes a
    check keeps are proved so (``Parametric.skip``). Raises nothing."""

    keys: str
    codes: tuple[codes.Code, ...]
    method: str

    def __len__(self) -> int:
        return len(self.codes)


class Report(NamedTuple):
    """What the parametric prover did with one obligation of one declaration, for ``--stats``
    and ``CheckResult.parametric``: ``family`` and ``where`` (``file:line:col``) name the
    declaration, ``code`` the obligation, ``position`` the access (0: the edge's first
    footprint). ``instances`` is how many unrolled obligations the declaration has for it
    (proved at once, or each on its own after a fallback). ``reason`` says why it fell back ("" when
    proved). For a pair of declarations (an HB order, ``obligations.hb_orders``), ``before`` names
    the other declaration: ``family``'s instances are ordered before its instances when proved
    (before which the order was tried when not); ``position`` is then 0 and ``instances``
    counts the pair's obligations."""

    family: str
    where: str
    code: str
    position: int
    instances: int
    reason: str = ""
    before: str = ""

    @property
    def proved(self) -> bool:
        """True when the obligation was proved for every index value."""
        return not self.reason


class Parametric:
    """The parametric prover of one check: proves the obligations it covers for each edge
    declaration of ``policy`` with ``backend`` (one batch, on first use), and keeps a ``Report``
    per declaration and obligation. Built by ``pipeline.discharge`` when the check allows it
    (``CheckOptions.parametric``); the obligation families ask it through ``Context.parametric``."""

    def __init__(self, policy: ir.Policy, backend: Backend, skip: Container[str] = ()) -> None:
        self.policy = policy
        self.backend = backend
        self.skip = skip  # codes the check leaves out: nothing is proved for them
        self.reports: list[Report] = []
        self.queries: Counter[codes.Family] = Counter()  # solver queries asked, by the family asking
        self._bounds: dict[tuple[Span, int], str] | None = None  # proved, or the fallback reason
        self._families: dict[Span, tuple[ir.Edge, int]] | None = None
        self._worth: frozenset[Span] | None = None
        self._owned: dict[tuple[str, str], Intervals] | None = None  # (space, owner) -> its regions

    def summary(self) -> tuple[Report, ...]:
        """The reports, in the order they were made (``CheckResult.parametric``)."""
        return tuple(self.reports)

    def bounds_queries(self, wanted: Container[Span]) -> Iterator[tuple[tuple[Span, int], Query | str]]:
        """Per declaration in ``wanted`` and footprint position, the FX-ALIAS-003 query over its
        whole family (unsat: every instance's footprint lies in its region), or why there is none."""
        shapes = Shapes.of(self.policy)
        if shapes is None:
            return
        for span, shape in shapes.edges.items():
            if span not in wanted:
                continue
            refs = [r for r in (shape.src, shape.dst) if r is not None]
            if not refs:
                continue
            try:
                fam = family_terms(shape)
            except NotAffine as err:
                for pos in range(len(refs)):
                    yield (span, pos), f"not affine: {err}"
                continue
            for pos, ref in enumerate(refs):
                try:
                    lo, hi, base, end, facts = footprint_terms(ref, shapes.regions, fam.sym)
                except NotAffine as err:
                    yield (span, pos), f"not affine: {err}"
                    continue
                out = or_(as_term(lo) < base, as_term(hi) > end)
                name = f"{codes.ALIAS_003}:{shape.name}#{pos}@{span.file}:{span.start}"
                yield (span, pos), Query(name, fam.domain + tuple(facts) + (("outside_region", out),),
                                         minimize=fam.vars,
                                         header=(f"{codes.ALIAS_003} for every instance of `{shape.name}` "
                                                 f"(footprint {pos}), over its loop indices",))

    def bounds(self, wanted: Container[Span]) -> dict[tuple[Span, int], str]:
        """``(declaration span, footprint position) -> ""`` for each FX-ALIAS-003 obligation of a
        declaration in ``wanted`` proved for every index value, or the reason it was not (the
        instances are then unrolled). A query that interval bounds over the loop box already
        decide (``inside_by_intervals``) is not sent to the solver. Computed once."""
        if self._bounds is None:
            found: dict[tuple[Span, int], str] = {}
            asked: list[tuple[tuple[Span, int], Query]] = []
            shapes = Shapes.of(self.policy)
            for key, q in self.bounds_queries(wanted):
                if isinstance(q, str):
                    found[key] = q
                elif shapes is not None and self._inside(shapes, *key):
                    found[key] = ""  # the loop box keeps every footprint inside: no solver call
                else:
                    asked.append((key, q))
            results = self.backend.check_many([q for _, q in asked]) if asked else []
            self.queries[codes.ALIAS_003.family] += len(asked)
            for (key, q), res in zip(asked, results):
                found[key] = solver_reason(q, res)
            self._bounds = found
        return self._bounds

    @staticmethod
    def _inside(shapes: Shapes, span: Span, pos: int) -> bool:
        shape = shapes.edges[span]
        return inside_by_intervals(shape, [r for r in (shape.src, shape.dst) if r is not None][pos], shapes.regions)

    def families(self) -> dict[Span, tuple[ir.Edge, int]]:
        """Per edge declaration with ``MIN_INSTANCES`` instances or more: its first instance and
        how many it has, in declaration order (empty without shapes). Computed once."""
        if self._families is None:
            shapes = Shapes.of(self.policy)
            first = shapes.instances() if shapes is not None else {}
            self._families = {span: v for span, v in first.items() if v[1] >= MIN_INSTANCES}
        return self._families

    def worth_a_query(self, *spans: Span) -> bool:
        """True when one of the declarations ``spans`` has ``QUERY_MIN_INSTANCES`` instances or
        more, so that a solver query about it costs less than its instances' own fast proofs."""
        worth = self._worth
        if worth is None:  # asked once per unrolled obligation: the declarations are found once
            worth = self._worth = frozenset(s for s, (_e, n) in self.families().items() if n >= QUERY_MIN_INSTANCES)
        return any(s in worth for s in spans)

    def proved_bounds(self) -> set[tuple[Span, int]]:
        """The ``(declaration span, footprint position)`` pairs whose FX-ALIAS-003 obligations are
        proved for every index value (``alias.generate`` leaves their instances out, and logs them
        with ``Held``); records a ``Report`` per declaration and position the prover took up."""
        if str(codes.ALIAS_003) in self.skip:
            return set()
        return self._reported(codes.ALIAS_003, self.bounds(self.families()))

    def proved_hooks(self) -> set[Span]:
        """The declaration spans whose FX-HOOK-002 obligation (the driving hook is declared on its
        device) holds for every index value: the declaration names its device and hook
        (``EdgeShape.device``/``hook``), which no index changes, so one lookup decides every
        instance. Records a ``Report`` per declaration of ``families``."""
        shapes = Shapes.of(self.policy)
        if shapes is None or str(codes.HOOK_002) in self.skip:
            return set()
        found: dict[tuple[Span, int], str] = {}
        for span in self.families():
            shape = shapes.edges.get(span)
            if shape is not None:
                hooks = self.policy.device(shape.device).hooks
                found[(span, 0)] = "" if shape.hook in hooks else f"`{shape.hook}` is not declared on `{shape.device}`"
        return {span for span, _pos in self._reported(codes.HOOK_002, found)}

    def proved_static_owners(self, handed: Container[str], checks: Mapping[int, Sized],
                             more: Callable[[Span, str], str] | None = None) -> set[Span]:
        """The declaration spans whose FX-OWN-001 obligations hold for every index value as
        ``static-owner`` proofs: every region an instance's footprints can touch is owned by the
        declaration's device and never changes owner (not in ``handed``: the regions with a
        handoff or an ``alloc``, ``Context.handoffs``), and no instance releases, revokes or hands
        off anything (its owner checks are then exactly the regions it touches). The regions an
        instance touches lie in its footprints' spaces and meet them (``Context.touched``), so
        they meet, per footprint position, the hull ``[min lo, max hi)`` of the instances'
        footprints: one interval lookup per declaration and position against the regions of the
        space that are not statically the device's decides every instance. ``checks``: the regions
        each edge (by id) is checked against (``Context.owner_checks``), one obligation each.
        ``more`` tries a declaration this argument leaves another way (``hb_owners.Owners.reason``:
        by HB and leases), given the reason it was left: "" when that proves it. Records a
        ``Report`` per declaration of ``families``."""
        fams = self.families()
        if str(codes.OWN_001) in self.skip or not fams:
            return set()
        spans = list(fams)
        number = {span: n for n, span in enumerate(spans)}  # a span hashes in Python: once per edge
        hull: dict[tuple[int, int], tuple[str, int, int]] = {}  # (declaration, position) -> (space, lo, hi), bytes
        why: dict[int, tuple[str, int]] = {}  # the reason and the footprint position it is about
        keys = [0] * len(spans)
        for e in self.policy.edges:
            n = number.get(e.span)
            if n is None:
                continue
            checked = checks.get(e.eid, ())
            # one key per region checked, but the owner's handoff edge's own region (FX-OWN-003's)
            keys[n] += len(checked) if not e.handoffs else sum(
                1 for r in checked if not any(h.region == r and h.src == e.device for h in e.handoffs))
            if n in why:
                continue
            # Releases and revokes add owner checks beyond the touched regions; a handoff's region
            # is in ``handed`` already (the guard is conservative, and keeps the loop's skip of
            # the handing edge's own region out of the argument).
            if e.releases or e.revokes or e.handoffs:
                why[n] = ("an instance releases, revokes or hands off a region", 0)
                continue
            for pos, a in enumerate(e.accesses()):
                fp = a.footprint
                space, lo, hi = hull.get((n, pos), (fp.space, fp.lo, fp.hi))
                if space != fp.space:
                    why[n] = ("its instances' footprints lie in different spaces", pos)
                hull[(n, pos)] = (space, min(lo, fp.lo), max(hi, fp.hi))
        handed_in = _by_space([r for r in self.policy.regions if r.name in handed])
        for (n, pos), (space, lo, hi) in hull.items():
            if n not in why:
                other = self.not_owned(space, fams[spans[n]][0].device, lo, hi, handed_in)
                if other:
                    why[n] = (other, pos)
        for n, span in enumerate(spans):
            reason, pos = why.get(n, ("", 0))
            if reason and more is not None:
                reason = more(span, reason)
                if not reason:
                    del why[n]
                    pos = 0
            self.report(span, codes.OWN_001, reason, pos, obligations=keys[n])
        return {span for n, span in enumerate(spans) if n not in why}

    def proved_static_grants(self, handed: Container[str]) -> set[Span]:
        """The declaration spans whose FX-OWN-003 lease obligations (``grants.LeaseByNonOwner``:
        the grantor owns what it leases when the edge starts) hold for every index value: every
        region an instance's ``lease`` clause names is the declaration's device's for the whole
        flow (not in ``handed``, as ``proved_static_owners``). The named region lies in the
        clause's space and inside the hull of that clause's regions over every instance, so one
        interval lookup per declaration and clause decides every instance; each obligation's own
        proof would be ``hb-reachability`` with no handoff to order (``owners.owned_by_hb``).
        Records a ``Report`` per declaration of ``families`` with a lease."""
        fams = self.families()
        if str(codes.OWN_003) in self.skip or not fams:
            return set()
        hull: dict[tuple[Span, int], tuple[str, int, int]] = {}  # (declaration, clause) -> (space, lo, hi), bytes
        why: dict[Span, tuple[str, int]] = {}
        keys: Counter[Span] = Counter()
        for e in self.policy.edges:
            if not e.leases or e.span not in fams:
                continue
            keys[e.span] += len(e.leases)
            for k, ls in enumerate(e.leases):
                r = self.policy.region(ls.region)
                space, lo, hi = hull.get((e.span, k), (r.space, r.base, r.end))
                if space != r.space:
                    why.setdefault(e.span, ("its instances lease regions of different spaces", k))
                hull[(e.span, k)] = (space, min(lo, r.base), max(hi, r.end))
        handed_in = _by_space([r for r in self.policy.regions if r.name in handed])
        for (span, k), (space, lo, hi) in hull.items():
            if span not in why:
                other = self.not_owned(space, fams[span][0].device, lo, hi, handed_in, "the hull of the regions it leases")
                if other:
                    why[span] = (other, k)
        for span in keys:
            reason, k = why.get(span, ("", 0))
            self.report(span, codes.OWN_003, reason, k, obligations=keys[span])
        return {span for span in keys if span not in why}

    def not_owned(self, space: str, device: str, lo: int, hi: int,
                  handed: Mapping[tuple[str, str], Intervals] | None = None, hull: str = "its footprints' hull") -> str:
        """Why some region of ``space`` meeting ``[lo, hi)`` (bytes) is not ``device``'s for the
        whole flow (another device owns it when the flow starts, or it is in ``handed``, by space
        and owner), or "" when none is; the reason calls ``[lo, hi)`` ``hull``. ``O(owners * log n)``: one ``Intervals`` per space and
        owner, built once."""
        if self._owned is None:
            self._owned = _by_space(self.policy.regions)
        found = [(r.base, r.end, r.name, f"owned by `{r.owner}`") for (sp, owner), iv in self._owned.items()
                 if sp == space and owner != device and (r := iv.meeting(lo, hi)) is not None]
        found += [(r.base, r.end, r.name, "which is handed off or allocated") for (sp, _o), iv in (handed or {}).items()
                  if sp == space and (r := iv.meeting(lo, hi)) is not None]
        if not found:
            return ""
        _base, _end, name, what = min(found)  # the lowest address: the same whichever grouping
        return f"{hull} meets `{name}`, {what}"

    def invariant(self, span: Span, clause_kinds: tuple[type, ...]) -> str:
        """Why the obligations of declaration ``span`` that read only its footprints' sizes, their
        regions' families (dtype, space) and its ``clause_kinds`` clauses may differ between its
        instances, or "" when every instance has the same such inputs, so a proof of one instance
        proves them all: those clauses mention no loop variable, and each footprint's size
        (``footprint_bytes``) is a constant. The region family a reference names, hence its
        dtype and its space, is the same for every instance."""
        shapes = Shapes.of(self.policy)
        shape = shapes.edges.get(span) if shapes is not None else None
        if shape is None:
            return "no shape"
        loop_vars = {lp.var for lp in shape.loops}
        for c in shape.clauses:
            if isinstance(c, clause_kinds) and not index_free(c, loop_vars):
                return f"a `{_clause_word(c)}` clause depends on the indices"
        sym = Symbolic({lp.var: int_var(f"i_{lp.var}") for lp in shape.loops})
        for ref in (shape.src, shape.dst):
            if ref is None:
                continue
            try:
                size = footprint_bytes(ref, shapes.regions, sym)
            except NotAffine as err:
                return f"not affine: {err}"
            if not isinstance(size, int):
                return f"the size of `{ref.name.name}`'s footprint depends on the indices"
        return ""

    def report(self, span: Span, code: codes.Code, why: str, position: int = 0, obligations: int | None = None) -> None:
        """Record a ``Report`` of ``code`` at footprint ``position`` for declaration ``span`` (one of
        ``families``): a proof of every instance at once when ``why`` is empty, else why its
        instances are discharged one by one. ``obligations``: how many unrolled obligations that
        is, when not one per instance. Raises ``KeyError`` when ``span`` is not one of
        ``families`` and ``obligations`` is not given."""
        shapes = Shapes.of(self.policy)
        shape = shapes.edges.get(span) if shapes is not None else None
        n = self.families()[span][1] if obligations is None else obligations
        self.reports.append(Report(shape.name if shape else "", shape.where if shape else "", str(code), position, n, why))

    def _reported(self, code: codes.Code, found: dict[tuple[Span, int], str]) -> set[tuple[Span, int]]:
        """Report each of ``found`` (in source order) and return the keys proved."""
        for (span, pos), why in sorted(found.items(), key=lambda kv: (kv[0][0].file, kv[0][0].start, kv[0][1])):
            self.report(span, code, why, pos)
        return {k for k, why in found.items() if not why}


class Intervals:
    """Half-open byte intervals ``[lo, hi)`` of one space (absolute addresses), each with a region:
    ``items`` are ``(lo, hi, region)``. Answers "which meets ``[lo, hi)``?" in ``O(log n)``: sorted
    by ``lo``, with the running maximum of ``hi`` (``reach``, never decreasing). Raises nothing."""

    def __init__(self, items: list[tuple[int, int, ir.Region]]) -> None:
        self.items = sorted(items, key=lambda it: (it[0], it[1]))
        self.los = [lo for lo, _hi, _r in self.items]
        self.reach = list(itertools.accumulate((hi for _lo, hi, _r in self.items), max))

    def meeting(self, lo: int, hi: int) -> ir.Region | None:
        """The first region (by ``lo``) that starts before ``hi`` and ends after ``lo`` (an empty
        one strictly inside counts: cautious), or ``None`` when none does."""
        k = bisect.bisect_left(self.los, hi)  # items[:k] start before hi
        j = bisect.bisect_right(self.reach, lo, 0, k)  # the first of them whose reach passes lo
        return self.items[j][2] if j < k else None


def _by_space(regions: Sequence[ir.Region]) -> dict[tuple[str, str], Intervals]:
    """``regions`` as ``Intervals`` by space and owner."""
    groups: defaultdict[tuple[str, str], list[tuple[int, int, ir.Region]]] = defaultdict(list)
    for r in regions:
        groups[(r.space, r.owner)].append((r.base, r.end, r))
    return {k: Intervals(v) for k, v in groups.items()}


class Held:
    """The keys of parametric proofs a family has passed over and not yet yielded, so they come
    out where their instances would have: ``hold`` one (key and code) in generation order,
    yielding what it returns (the held batch, once full: ``add`` and ``flush`` in one), and
    ``flush`` before yielding any unrolled obligation (and at the end). Raises nothing."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.codes: list[codes.Code] = []

    def add(self, key: str, code: codes.Code) -> bool:
        """Hold the proof of the obligation ``key`` of ``code``; True when ``HELD_BATCH`` are held:
        the caller then yields them (``flush``), so memory stays bounded over a long run of
        proved instances (the run is cut in two, in order: the outcomes are the same)."""
        self.keys.append(key)
        self.codes.append(code)
        return len(self.keys) >= HELD_BATCH

    def hold(self, key: str, code: codes.Code) -> tuple[ProvedTogether, ...]:
        """``add``, and return the held proofs (``flush``) when the batch is full, else ``()``:
        the caller yields them in place of the instance's obligation. Eager, so the key is held
        whether or not the caller iterates."""
        return tuple(self.flush()) if self.add(key, code) else ()

    def flush(self) -> Iterator[ProvedTogether]:
        """The held proofs as one ``ProvedTogether`` (nothing when none are held); empties."""
        if self.keys:
            yield ProvedTogether("\n".join(self.keys), tuple(self.codes), METHOD)
            self.keys, self.codes = [], []


def _clause_word(c: object) -> str:
    return type(c).__name__.removesuffix("Clause").lower()


def solver_reason(q: Query, res: Result) -> str:
    """"" when ``res`` proves ``q`` (unsat), else the fallback reason: the model's values of
    ``q.minimize`` (sat) or the solver's reason (unknown)."""
    if res.status is Status.UNSAT:
        return ""
    if res.status is Status.SAT:
        at = ", ".join(f"{v.name[2:]}={res.int(v)}" for v in q.minimize)
        return f"fails at {at}" if at else "fails"
    return f"solver unknown: {res.reason or 'no reason given'}"
