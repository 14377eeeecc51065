"""Checks one policy: load (parse + resolve) -> obligations -> discharge -> replay -> diagnostics.

Takes a policy path and ``CheckOptions``; returns a ``result.CheckResult`` with one ``Outcome`` per
obligation, the witness of every refuted one, and the diagnostics to show. A blocking diagnostic
(any input error) stops later stages. Obligations are discharged by an exact non-solver proof
when one holds (unless ``prune`` is off), else by the solver in batches; a refutation is replayed
by the simulator before it becomes a diagnostic. With ``certify`` set, the certificate of every
fast proof is re-validated by the independent checker (``fxverify.certify``). Codes emitted here:
every obligation code on refutation, FX-SMT-001 for unknown verdicts, FX-INT-001 when a
counterexample does not replay or a certificate is missing or rejected, and (through
``diagnostics.suppress``) FX-SUP-002 for unused suppressions.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from fxverify import hints
from fxverify.grouping import first_findings, group_instances, group_of
from fxverify.certify import Certifier, Claim
from fxverify.certified import certified
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.diagnostics.suppress import Suppression, apply_suppressions
from fxverify.ir import Policy
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.obligations.families import obligations as family_obligations
from fxverify.obligations.families import stream
from fxverify.obligations.inputs import family_digests
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.parametric import Parametric, ProvedTogether
from fxverify.replay.refutation import refutation
from fxverify.requery import checked_guess, minimised
from fxverify.replay.simulate import Simulator
from fxverify.resolve import Limits, Loader
from fxverify.result import CheckResult, Outcome, OutcomeLog, ProvedRun, Refutation, Verdict
from fxverify.smt.backend import Backend, Query, Result, SolverOptions, Status
from fxverify.smt.caching import CachingBackend, MemoryStore, QueryCounts
from fxverify.smt.factory import missing, open_backend
from fxverify.smt.smtlib import SmtlibDump
from fxverify.smt.terms import eq, free_vars
from fxverify.source import SourceMap, Span

#: Makes the backend for a policy from its effective solver options.
BackendFactory = Callable[[SolverOptions], Backend]

#: The phases of a check, in order (``Progress.phase``).
PHASES = ("parse", "resolve", "generate", "discharge", "replay", "hints")


class Progress(Protocol):
    """Where a check reports its progress (a progress bar): each phase of ``PHASES`` as it
    starts, with its total (``None`` when unknown), and the units done in it: files read (parse),
    obligation families generated (generate), obligations discharged (discharge), refutations
    replayed by the simulator (replay), hints applied and checked again (hints)."""

    def phase(self, name: str, total: int | None = None) -> None:
        """Phase ``name`` starts, with ``total`` units to do."""
        ...

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current phase are done."""
        ...


class FamilyStore(Protocol):
    """Where a check finds and keeps the proofs of whole obligation families, by the digest of
    what the family reads of the policy (``obligations.inputs.family_digests``): after a one-edge
    edit, a family whose inputs did not change is not generated nor discharged again (issue
    "Scale", item 6). The result cache's ``families`` level is one (``gate.cache.FamilyCache``);
    its keys hold the check options and the code, so ``digest`` alone names the inputs here."""

    def get(self, family: Family, digest: str) -> ProvedRun | None:
        """The proofs stored for ``family`` with inputs ``digest``, or ``None``."""
        ...

    def put(self, family: Family, digest: str, run: ProvedRun) -> None:
        """Keep ``run``, every obligation of ``family`` proved, for inputs ``digest``."""
        ...


@dataclass(frozen=True)
class CheckOptions:
    """Options of ``check``: ``prune`` enables exact non-solver proofs (HB reachability, intervals);
    ``solver`` sets seeds and limits; ``dump_smt`` is a folder to write every query to; ``limits``
    caps the input; ``certify`` (``python`` or ``smt``, ``None``: off) re-validates the certificate
    of every fast proof (``fxverify.certify``); ``verify_hints`` applies each refutation's hint and
    checks the policy again before showing it (``fxverify.hints``); ``skip_codes`` are codes whose
    obligations are not generated (``--ignore``/``--select``: ``gate.rules``), and whose unused
    suppressions are then not reported either; ``parametric`` lets the parametric prover discharge
    an obligation once for a whole edge family (``obligations.parametric``; off, or with ``prune``
    off, every instance is discharged on its own: the same verdicts, other methods); ``minimal``
    minimises the counterexample a person reads (``Query.minimize``: the smallest times,
    addresses and indices): that of the first refutation of each group, the one a check shows
    with its trace (``group_instances``), is asked of the solver again with its objectives
    (``discharge_obligations``); every other refutation keeps the solver's first model, which
    the simulator replays all the same. Off, none is
    minimised (the hint re-checks, which need verdicts, not traces to read); the parametric
    prover's own queries keep their objectives either way."""

    prune: bool = True
    solver: SolverOptions = SolverOptions()
    dump_smt: str | None = None
    limits: Limits = Limits()
    certify: str | None = None
    verify_hints: bool = True
    skip_codes: frozenset[str] = frozenset()
    parametric: bool = True
    minimal: bool = True


def solver_problem(solver: SolverOptions) -> Diagnostic | None:
    """FX-USE-006 when the solver ``solver.solver`` names cannot be used (its Python package is
    not installed: ``smt.factory.missing``), else ``None``. Commands call it before checking, so a
    missing solver is one diagnostic and exit 2, never a traceback."""
    why = missing(solver.solver)
    if why is None:
        return None
    return diagnostic(codes.USE_006, why, help="install it, or use `--solver z3` (the default)")


def effective_solver(policy: Policy, solver: SolverOptions) -> SolverOptions:
    """The solver options for ``policy``: its own ``rlimit`` tightens the command line's, never
    loosens it."""
    if policy.rlimit is not None and policy.rlimit < solver.rlimit:
        return replace(solver, rlimit=policy.rlimit)
    return solver


def check(path: str, options: CheckOptions = CheckOptions(), *, backend: Backend | None = None,
          make: BackendFactory = open_backend, progress: Progress | None = None,
          texts: Mapping[str, str] | None = None, loader: Loader | None = None,
          families: FamilyStore | None = None) -> CheckResult:
    """Check one policy file.

    ``texts`` maps real paths to unsaved texts (an editor's buffers) read instead of those files
    (``resolve.load_policy``): a buffer is checked as it is, and nothing is written. ``loader``
    is the policy's ``resolve.Loader`` when the caller already made one (to measure the policy
    first, or to read a snapshot of another machine's files: ``gate.shards``); it replaces
    ``texts``. ``families`` keeps the proofs of each obligation family for the next check and
    reuses those whose inputs are unchanged (``discharge``).

    ``backend`` decides the queries when given (the caller closes it); otherwise ``make`` builds
    one from the policy's effective ``SolverOptions`` (the result cache wraps the solver this way)
    and it is closed before returning. ``progress`` hears of each phase and its units (a progress
    bar). Input problems are diagnostics
    (``result.input_error``). Raises only on bugs (``FxError`` or others), which the gate reports
    as FX-INT-001, and ``OSError`` when ``dump_smt`` cannot be written.
    """
    t0 = time.perf_counter()
    if loader is None:
        loader = Loader(path, SourceMap(), limits=options.limits, texts=texts)
    sources = loader.sources
    policy, diags = loader.finish(None if progress is None else progress.phase)
    result = CheckResult(path, policy, sources, diagnostics=list(diags))
    if policy is None:
        result.seconds = time.perf_counter() - t0
        return result
    own = backend is None
    solver = backend if backend is not None else make(effective_solver(policy, options.solver))
    try:
        found = discharge(policy, options, solver, progress, families=families)
    finally:
        if own:
            solver.close()
    result.outcomes, result.refutations, result.solver_calls = found.outcomes, found.refutations, found.solver_calls
    result.hints, result.reused, result.parametric = found.hints, found.reused, found.parametric
    result.certified, result.certify_rejected = found.certified, found.certify_rejected
    result.diagnostics = conclude(result.diagnostics + found.diagnostics, PolicyFacts.of(policy), sources, options)
    result.seconds = time.perf_counter() - t0
    return result


@dataclass(frozen=True)
class PolicyFacts:
    """What ``conclude`` needs of a policy: its ``name``, its inline ``suppressions`` and the
    span of each edge (``edge_spans``, by edge id), so a process that never resolved the policy
    (the gate merging shards, ``gate.shards``) concludes a check as ``check`` does."""

    name: str
    suppressions: tuple[Suppression, ...]
    edge_spans: tuple[Span, ...]

    @classmethod
    def of(cls, policy: Policy) -> PolicyFacts:
        """The facts of ``policy``."""
        return cls(policy.name, tuple(policy.suppressions), tuple(e.span for e in policy.edges))


def conclude(diags: list[Diagnostic], facts: PolicyFacts, sources: SourceMap, options: CheckOptions) -> list[Diagnostic]:
    """The diagnostics a check shows, from the load diagnostics followed by the discharge's (in
    obligation order): one per family instance group (``group_instances``), then the inline
    suppressions applied (``diagnostics.suppress``: FX-SUP-002 for unused ones, except for the
    codes ``options.skip_codes`` leaves out)."""
    return apply_suppressions(group_instances(diags), facts.suppressions, sources, list(facts.edge_spans), facts.name,
                              options.skip_codes)


#: Queries decided together; bounds the memory held by encoded queries (a policy can have
#: hundreds of thousands) while giving a process pool enough work per batch.
_BATCH = 64


@dataclass
class Discharged:
    """What ``discharge_obligations`` found: the ``result`` (as ``discharge`` returns it, hints
    not yet verified) and every refutation's ``hints.Finding``, in obligation order (of those,
    ``verify_hints`` checks the first of each group: ``first_findings``)."""

    result: CheckResult
    findings: list[hints.Finding]


def discharge(policy: Policy, options: CheckOptions, backend: Backend,
              progress: Progress | None = None,
              keep: list[tuple[Obligation, Query]] | None = None,
              families: FamilyStore | None = None,
              replay_if: Callable[[CheckResult], bool] | None = None,
              stop_if: Callable[[str], bool] | None = None,
              skip_if: Callable[[Obligation], bool] | None = None) -> CheckResult:
    """Discharge every obligation of ``policy``: exact non-solver proofs first (unless
    ``options.prune`` is off), then ``backend`` in batches; then the refutations are replayed
    (each phase reported to ``progress``), then their hints verified. Returns a
    ``CheckResult`` holding the outcomes, refutations, solver calls and the diagnostics of
    refuted and unknown obligations (without sources, grouping or suppressions: ``check`` adds
    those). With ``keep`` a list, every obligation and its query (``encode()``, fast-proved ones
    included) is appended to it, in the order of ``result.outcomes``.

    With ``families``, a family whose inputs' digest (``obligations.inputs``) has stored proofs is
    neither generated nor discharged: its outcomes are the stored ones, in its place, and the
    family is named in ``result.reused``; a family discharged here whose every obligation was
    proved is stored. Not with ``keep``, ``options.dump_smt`` or ``options.certify``, which need
    every obligation. ``replay_if``, ``stop_if`` and ``skip_if``: as ``discharge_obligations``'s
    (``stop_if`` and ``skip_if`` not with ``families``). Raises ``OSError`` when ``options.dump_smt`` cannot be written."""
    if progress is not None:
        progress.phase("generate", len(OBLIGATION_FAMILIES))
    # Obligations are generated, proved fast and sent to the solver as one stream (memory grows
    # with the policy, not with the number of access pairs), so the bar counts families while it
    # runs and the discharge phase learns its total when the stream ends.
    on_family = None if progress is None else (lambda _family: progress.advance(1))
    ctx, obligations = stream(policy, on_family)
    ctx.parametric = prover = parametric_prover(policy, options, backend) if keep is None else None
    if families is not None and keep is None and not options.dump_smt and not options.certify:
        digests = family_digests(policy)
        ran: list[tuple[Family, int, int]] = []
        reused: list[Family] = []
        items = _reusing(ctx, options, families, digests, ran, reused, on_family)
        found = discharge_obligations(policy, items, options, backend, progress, keep, replay_if)
        found.result.reused = tuple(f.value for f in reused)
        for family, lo, hi in ran:
            run = found.result.outcomes.proved_run(lo, hi)  # type: ignore[attr-defined]  # a fresh OutcomeLog
            if run is not None:
                families.put(family, digests[family], replace(run, queries=prover.queries[family]) if prover else run)
    else:
        found = discharge_obligations(policy, kept(obligations, options), options, backend, progress, keep, replay_if,
                                      stop_if, skip_if)
    if options.verify_hints and found.findings:
        firsts = first_findings(found.findings, found.result.diagnostics)
        if progress is not None:
            progress.phase("hints", len(firsts))
        verify_hints(policy, options, firsts, found.result, None if progress is None else lambda: progress.advance(1))
    if prover is not None:
        found.result.parametric = prover.summary()
        found.result.solver_calls += sum(prover.queries.values())
    return found.result


def parametric_prover(policy: Policy, options: CheckOptions, backend: Backend) -> Parametric | None:
    """The parametric prover (``obligations.parametric``) a check of ``policy`` with ``options``
    uses, deciding its queries with ``backend``; ``None`` when the options rule it out: off
    (``parametric``), without fast proofs (``--no-prune`` sends every obligation to the solver),
    or with ``--dump-smt`` or ``--certify`` (each obligation needs its own query or certificate).
    It proves nothing of a code ``options.skip_codes`` leaves out."""
    if not options.parametric or not options.prune or options.dump_smt or options.certify:
        return None
    return Parametric(policy, backend, options.skip_codes)


def _reusing(ctx: Context, options: CheckOptions, store: FamilyStore, digests: Mapping[Family, str],
             ran: list[tuple[Family, int, int]], reused: list[Family],
             on_family: Callable[[Family], None] | None) -> Iterator[Obligation | ProvedRun | ProvedTogether]:
    """``stream``'s obligations (``kept`` of ``options``), family by family, with each family
    ``store`` holds proofs for under its digest given as those proofs instead (one ``ProvedRun``,
    its name appended to ``reused``); each family generated here is appended to ``ran`` with the
    range of its outcomes in the log ``discharge_obligations`` fills."""
    at = 0
    for family in OBLIGATION_FAMILIES:
        run = store.get(family, digests[family])
        if run is not None:
            reused.append(family)
            at += len(run)
            yield run
            if on_family is not None:
                on_family(family)
            continue
        lo = at
        for ob in kept(family_obligations(ctx, (family,), on_family), options):
            at += len(ob) if isinstance(ob, ProvedTogether) else 1
            yield ob
        ran.append((family, lo, at))


def kept(obligations: Iterable[Obligation | ProvedTogether], options: CheckOptions) -> Iterator[Obligation | ProvedTogether]:
    """The obligations whose codes ``options.skip_codes`` does not leave out, in order, lazily (a
    ``ProvedTogether`` holds only codes the check keeps: ``Parametric.skip``)."""
    if not options.skip_codes:
        return iter(obligations)
    return (ob for ob in obligations if isinstance(ob, ProvedTogether) or ob.code not in options.skip_codes)


def discharge_obligations(policy: Policy, obligations: Iterable[Obligation | ProvedRun | ProvedTogether], options: CheckOptions, backend: Backend,
                          progress: Progress | None = None,
                          keep: list[tuple[Obligation, Query]] | None = None,
                          replay_if: Callable[[CheckResult], bool] | None = None,
                          stop_if: Callable[[str], bool] | None = None,
                          skip_if: Callable[[Obligation], bool] | None = None) -> Discharged:
    """``discharge`` for the given ``obligations`` of ``policy`` (all of them, or a shard's:
    ``gate.shards``), without verifying hints. ``obligations`` is consumed once, one at a time
    (only the pending solver queries and, under ``--certify``, the fast-proved obligations are
    held); the outcomes come in its order, kept compactly (``result.OutcomeLog``), and the
    refutations' findings are returned beside them. A ``ProvedRun`` among them (proofs a
    ``FamilyStore`` kept) adds its outcomes in its place, and its solver queries
    (``ProvedRun.solver_proofs``) to ``solver_calls``; a ``ProvedTogether`` (a parametric proof)
    adds one proof per key and no solver call: the caller adds the parametric prover's queries
    (``Parametric.queries``), once. The findings (for hints) are made only with
    ``options.verify_hints``. With ``replay_if``, the refutations are replayed only when it
    returns true for the result with every outcome decided; otherwise each refutation's diagnostic
    is left an FX-INT-001 placeholder (``_HELD``) and no finding is made: a hint's re-check whose
    verdicts alone reject the hint (``hints.Verifier.discharges``). With ``stop_if``, no further
    obligation is generated once an unproved one's key makes it true (the batch it is in is
    decided whole, and nothing is replayed): a hint's re-check that the first obligation left
    unproved by the edit already rejects. With ``skip_if``, an obligation no fast proof holds for
    and that makes it true is not decided: its outcome is unknown, method ``not-decided`` (a
    hint's re-check need not decide what its judgement cannot read). Raises as ``discharge``."""
    result = CheckResult(policy.path, policy, SourceMap())
    dump = SmtlibDump(options.dump_smt) if options.dump_smt else None
    certifier = Certifier(policy, options.certify, solver=options.solver) if options.certify else None
    claimed: dict[str, Obligation] = {}  # the obligations whose certificates the certifier holds
    outcomes = OutcomeLog()
    # (index of the outcome, obligation, its query as encoded (or its probe), the query sent:
    # without objectives, whether it is the probe, the answer when a checked guess gave it)
    pending: list[tuple[int, Obligation, Query, Query, bool, Result | None]] = []
    findings: list[hints.Finding] = []
    # Refuted obligations wait for the replay phase (their diagnostic's place held, to keep
    # obligation order): (diagnostic index, obligation, its group, query as encoded and the answer,
    # refutation index, whether the query was the probe). Only the first of each group (``group_of``) keeps
    # its query and answer, which only the trace of the one shown needs (``_again`` makes them
    # for a later one when an earlier did not replay): a pool with thousands of refutations held
    # gigabytes of queries and models.
    refuted: list[tuple[int, Obligation, tuple, tuple[Query, Result] | None, int, bool]] = []
    held: set[tuple] = set()
    stopped = False

    def flush() -> None:
        nonlocal stopped
        # Decide the pending queries as one batch, then read the answers in obligation order, so
        # outcomes and diagnostics keep their order. A probe that does not refute sends the
        # obligation's own query in the next batch (``Obligation.probe``).
        while pending:
            batch = pending[:]
            pending.clear()
            asked = [b[3] for b in batch if b[5] is None]
            answers = iter(backend.check_many(asked) if asked else ())
            for i, ob, query, sent, probing, guessed in batch:
                res = guessed if guessed is not None else next(answers)
                if probing and (res.status is Status.UNKNOWN or res.status is query.expect):
                    full = ob.encode()
                    pending.append((i, ob, full, _unminimised(full), False, None))
                    continue
                if guessed is None:
                    result.solver_calls += 1
                decided = _decided(ob, sent, res, result, "solver" if guessed is None else GUESSED)
                outcomes.decide(i, decided)
                if stop_if is not None and decided.verdict is not Verdict.PROVED and stop_if(ob.key):
                    stopped = True
                if decided.verdict is Verdict.REFUTED:
                    result.diagnostics.append(_HELD)
                    group = group_of(ob.code, ob.primary, ob.related[0].span if ob.related else None)
                    answer = None if group in held else (query, res)
                    held.add(group)
                    refuted.append((len(result.diagnostics) - 1, ob, group, answer, len(result.refutations) - 1, probing))

    def recorded(ob: Obligation) -> Query:
        # the query as encoded, written to the SMT-LIB dump and kept when they are asked for
        query = ob.encode()
        if dump is not None:
            dump.write(query)
        if keep is not None:
            keep.append((ob, query))
        return query

    count = 0
    for ob in obligations:
        if isinstance(ob, ProvedRun):
            outcomes.extend(ob)
            count += len(ob)
            result.solver_calls += ob.solver_proofs()
            continue
        if isinstance(ob, ProvedTogether):
            distinct = list(dict.fromkeys(ob.codes))
            ids = array("I", [0]) * len(ob) if len(distinct) == 1 else array("I", map(distinct.index, ob.codes))
            outcomes.extend(ProvedRun(ob.keys, tuple((str(c), ob.method) for c in distinct), ids))
            count += len(ob)
            continue
        count += 1
        method = ob.prove_fast() if options.prune else None
        if method is not None:
            if dump is not None or keep is not None:
                recorded(ob)
            outcomes.append(ob.key, ob.code, Verdict.PROVED, method)
            if certifier is not None:
                claimed[ob.key] = ob
                certifier.add(Claim(ob.key, str(ob.code), tuple(ob.edges), method), ob.certificate())
            continue
        if skip_if is not None and skip_if(ob):
            outcomes.append(ob.key, ob.code, Verdict.UNKNOWN, NOT_DECIDED)
            continue
        probe = ob.probe()
        # the whole query is dumped and kept as encoded, whichever is sent; a guess is checked
        # against the query sent (a model of the probe is one of the whole query)
        encoded = recorded(ob) if probe is None or dump is not None or keep is not None else None
        query = probe if probe is not None else encoded
        assert query is not None  # INVARIANT: encoded when there is no probe
        guessed = checked_guess(ob, query, options.prune)
        pending.append((outcomes.reserve(ob.key), ob, query, _unminimised(query), probe is not None, guessed))
        if len(pending) >= _BATCH:
            flush()
            if stopped:
                break
    flush()
    if progress is not None and count:
        progress.phase("discharge", count)
        progress.advance(count)
    # INVARIANT: flush decided every reserved outcome
    result.outcomes = outcomes
    if progress is not None and refuted:
        progress.phase("replay", len(refuted))
    # The simulator's world is built only when a refutation needs replaying: a proved policy of
    # hundreds of thousands of edges would hold it for nothing.
    if refuted and not stopped and (replay_if is None or replay_if(result)):
        sim = Simulator(policy)
        traced: set[tuple] = set()  # the groups (``group_key``) whose first replayed refutation has its trace
        for at, ob, group, answer, r_at, probing in refuted:
            # A check shows the first refutation of each group with its trace and counts the others
            # in a note (``group_instances``): every witness is replayed, but only that first one
            # is widened and drawn. The group key is the diagnostic's, known before it is made.
            first = group not in traced
            query, res = answer or (_again(ob, probing, backend, options.prune) if first else (None, _UNSHOWN))
            # only the shown one is minimised; the others are replayed on their first model
            if first and options.minimal and query is not None and query.minimize:
                res = minimised(ob, query, res, backend, result, r_at)
            d = refutation(policy, sim, ob, result.refutations[r_at].witness, res, traced=first)
            result.diagnostics[at] = d
            if d.code is ob.code:
                traced.add(group)
                # only a group's first finding has its hint verified (``first_findings``), and
                # its shown edges cost an HB path per two primary edges
                if options.verify_hints and first:
                    w = result.refutations[r_at].witness
                    findings.append(hints.Finding(ob, ob.fix(w), tuple(ob.edges) + ob.context(w), at))
            if progress is not None:
                progress.advance(1)
    if certifier is not None:
        certified(policy, claimed, certifier, result)
    return Discharged(result, findings)


#: The answer a refutation not shown replays with: ``refutation`` reads none without a trace.
_UNSHOWN = Result(Status.SAT)


def _again(ob: Obligation, probing: bool, backend: Backend, prune: bool) -> tuple[Query, Result]:
    """The query of refuted ``ob`` (its probe when ``probing``) and its first answer, made again:
    for the refutation shown first in its group after an earlier one did not replay, whose
    query and answer were not kept. With ``prune``, its checked guess when the query accepts it
    (``Obligation.guess``: what refuted it, no solver asked); else the solver's answer, with a
    fresh solver, so the answer is the one that refuted it."""
    query = ob.probe() if probing else ob.encode()
    assert query is not None  # INVARIANT: an obligation refuted by its probe has one
    return query, checked_guess(ob, query, prune) or backend.check(_unminimised(query))


def _unminimised(query: Query) -> Query:
    """``query`` without its minimisation objectives (every query's first answer). A variable
    only an objective mentions is still asserted equal to itself, so that a refuting model fixes
    it as before (``Result.int``: the witness reads it). A query without objectives is itself."""
    if not query.minimize:
        return query
    asserted = {v.name for v in free_vars([t for _, t in query.assertions])}
    only = [v for v in free_vars(list(query.minimize)) if v.name not in asserted]
    return replace(query, minimize=(), assertions=query.assertions + tuple((None, eq(v, v)) for v in only))




#: Holds the place of a refutation's diagnostic until the replay phase makes it.
_HELD = diagnostic(codes.INT_001, "refutation not replayed yet")


#: Whether a hint's re-check minimises its counterexamples. It needs each obligation's verdict and
#: blamed edges, not a witness a person reads: the minimisation (an Optimize query per refutation)
#: was most of the time of hint verification (86 s of a 75-edge policy with one race, then 9 s).
#: tests/test_pipeline.py checks that the hints shown are those of minimised re-checks.
RECHECK_MINIMAL = False


def verify_hints(policy: Policy, options: CheckOptions, findings: list[hints.Finding], result: CheckResult,
                 on_each: Callable[[], None] | None = None) -> None:
    """Verify the hints of ``findings`` (``hints.verify_all``) on a solver of their own, with the
    policy's solver options, behind an in-memory result cache (an edited policy repeats most of
    the policy's queries): the re-checks are not the policy's queries, so they go neither into
    its SMT-LIB dump nor through the gate's result cache and its counts. ``on_each`` is called
    after each finding (a progress bar)."""
    again = replace(options, verify_hints=False, certify=None, dump_smt=None, minimal=RECHECK_MINIMAL)
    before = {o.key for o in result.outcomes if o.verdict is not Verdict.PROVED}
    solver_options = effective_solver(policy, options.solver)
    solver = CachingBackend(open_backend(solver_options), MemoryStore(), solver_options, QueryCounts())

    def unproved_in(r: CheckResult) -> dict[str, str]:
        return {o.key: o.code.family.name for o in r.outcomes if o.verdict is not Verdict.PROVED}

    def recheck(edited: Policy, blame: Callable[[Collection[str]], bool], stop: Callable[[str], bool] | None,
                family: str | None) -> hints.Rechecked:
        # the refutations are replayed only when the hint's judgement needs the edges they blame;
        # with ``family``, an obligation of another family the policy left unproved is not decided
        hit: list[str] = []  # the key that stopped the check

        def stopping(key: str) -> bool:
            if stop is not None and stop(key):
                hit.append(key)
                return True
            return False
        r = discharge(edited, again, solver, replay_if=lambda done: blame(unproved_in(done)),
                      stop_if=None if stop is None else stopping,
                      skip_if=None if family is None else undecided_outside(before, family))
        unproved = unproved_in(r)
        if hit:
            return hints.Rechecked(unproved, None, hit[0], family)
        if not blame(unproved):
            return hints.Rechecked(unproved, None, family=family)
        if any(d.code is codes.INT_001 for d in r.diagnostics):
            # a witness that did not replay blames no edge: the re-check proves nothing of the hint
            unproved[f"{codes.INT_001}:re-check"] = "INTERNAL"
        return hints.Rechecked(unproved, {d.obligation: frozenset(d.edges) for d in r.diagnostics if d.obligation}, family=family)
    try:
        result.diagnostics, result.hints = hints.verify_all(policy, findings, result.diagnostics, before, recheck,
                                                            len(result.outcomes), on_each)
    finally:
        solver.close()


#: The method of an obligation ``skip_if`` left undecided (unknown): never in a check's result.
NOT_DECIDED = "not-decided"


def undecided_outside(before: Collection[str], family: str) -> Callable[[Obligation], bool]:
    """The ``skip_if`` of a hint's re-check judging a finding of ``family`` (a family's name):
    an obligation of another family whose key is in ``before`` (those the policy left unproved).
    ``Verifier.discharges`` reads them only as unproved before, which neither verifies nor rejects
    an edit. One effect: such an obligation is not replayed, so a witness of it that would not
    replay (FX-INT-001, a checker bug) no longer rejects the hint (specs/output.md, Fix hints)."""
    return lambda ob: ob.key in before and ob.code.family.name != family

#: The method of a refutation by a checked guess (``Obligation.guess``): a model made from the IR
#: that satisfies every assertion of the query (``Query.model_of``), with no solver call.
GUESSED = "concrete-witness"


def _decided(ob: Obligation, query: Query, res: Result, result: CheckResult, method: str = "solver") -> Outcome:
    """The outcome of a query the solver answered (or a checked guess: ``method``); an unknown
    one adds its diagnostic to ``result``, a refuted one its witness (its diagnostic comes from
    the replay phase)."""
    if res.status is Status.UNKNOWN:
        result.diagnostics.append(_unknown(ob, res.reason))
        return Outcome(ob.key, ob.code, Verdict.UNKNOWN, "solver", res.reason)
    if res.status is query.expect:
        return Outcome(ob.key, ob.code, Verdict.PROVED, "solver")
    w = ob.witness(res)  # first: it may narrow ``ob.edges`` to what the model shows (``RaceFree``)
    result.refutations.append(Refutation(ob.key, ob.code, tuple(ob.edges), w))
    return Outcome(ob.key, ob.code, Verdict.REFUTED, method)


def _unknown(ob: Obligation, reason: str) -> Diagnostic:
    named = ob.undecided()
    return diagnostic(
        codes.SMT_001,
        f"could not decide {ob.code} for {', '.join(f'`{ob.name(e)}`' for e in named[:2]) or 'the policy'}: {reason}",
        ob.primary, ob.code.title,
        help="raise the policy's `rlimit` or the command line's `--rlimit`/`--timeout`, or split the flow; "
             "unknown is never a pass",
        policy=ob.ctx.policy.name, obligation=ob.key, edges=[ob.name(e) for e in named],
        witness=f"unknown:{ob.code}")
