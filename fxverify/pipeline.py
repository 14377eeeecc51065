"""Runs the stages: load (parse + resolve) -> graph -> obligations -> discharge -> replay -> trace.

Takes a policy path and options; returns a ``CheckResult`` with one ``Verdict`` per obligation and
the diagnostics to show. A blocking diagnostic (any input error) stops later stages. Codes emitted
here: every obligation code on refutation, FX-SMT-001 for unknown verdicts, FX-INT-001 when a
counterexample does not replay, FX-SUP-002 for unused suppressions.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from fxverify.diagnostics.codes import lookup
from fxverify.diagnostics.model import Diagnostic, Label, Severity
from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.obligations import ALL_FAMILIES
from fxverify.obligations.base import Context, Obligation
from fxverify.resolve import Limits, load_policy
from fxverify.simulate import Simulator
from fxverify.smt.backend import Backend, Query, Result, SolverOptions, Status
from fxverify.smt.smtlib import query_to_smtlib
from fxverify.source import SourceMap, Span
from fxverify.trace import build_trace


class Status3(Enum):
    """The three verdicts (BRIEF section 1). ``unknown`` is never a pass."""

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    """The verdict of one obligation: ``method`` names how it was discharged (``solver``,
    ``hb-reachability``, ``interval``...); ``reason`` explains ``unknown``."""

    key: str
    code: str
    family: str
    status: Status3
    method: str
    reason: str = ""


@dataclass
class CheckResult:
    """Everything ``check`` learned about one policy file.

    ``name`` is the declared policy name, ``None`` when the input could not be loaded. ``policy``
    is the resolved IR when this process computed the result, ``None`` when the result came from
    the result cache or a worker process (``fxverify.record``). ``solver_calls`` counts the queries
    the pipeline needed (the same whether the cache answered them or not); ``cache_hits`` and
    ``solved`` say how many of them the obligation cache answered and how many Z3 decided.
    ``from_cache`` is True when the whole result came from the policy cache.
    """

    path: str
    policy: Policy | None
    sources: SourceMap
    verdicts: list[Verdict] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0
    solver_calls: int = 0
    name: str | None = None
    cache_hits: int = 0
    solved: int = 0
    from_cache: bool = False
    tally: dict[str, Counter] | None = None

    def __post_init__(self) -> None:
        if self.name is None and self.policy is not None:
            self.name = self.policy.name

    @property
    def input_error(self) -> bool:
        """True when the input could not be loaded (exit code 2)."""
        return self.name is None

    @property
    def internal_error(self) -> bool:
        """True when an internal invariant broke (exit code 3)."""
        return any(d.code == "FX-INT-001" for d in self.diagnostics)

    @property
    def verdict(self) -> Status3 | None:
        """Overall verdict: refuted if any obligation is (not suppressed nor baselined), else
        unknown if any is (whatever severity ``--unknown`` gave it), else proved. ``None`` for
        input errors."""
        if self.input_error:
            return None
        if any(d.is_error and d.code != "FX-SMT-001" for d in self.diagnostics):
            return Status3.REFUTED
        if any(d.active and d.code == "FX-SMT-001" for d in self.diagnostics):
            return Status3.UNKNOWN
        return Status3.PROVED

    def counts(self) -> dict[str, Counter]:
        """Per family: a counter of statuses and methods. ``tally``, when a record round trip set
        it, is the same counts computed before."""
        if self.tally is not None:
            return self.tally
        out: dict[str, Counter] = {}
        for v in self.verdicts:
            c = out.setdefault(v.family, Counter())
            c[v.status.value] += 1
            c[f"by:{v.method}"] += 1
        return out


@dataclass(frozen=True)
class CheckOptions:
    """Options of ``check``: ``prune`` enables exact non-solver proofs (HB reachability, intervals);
    ``solver`` sets seeds and limits; ``dump_smt`` is a directory to write every query to."""

    prune: bool = True
    solver: SolverOptions = SolverOptions()
    dump_smt: str | None = None
    limits: Limits = Limits()


_POLICY_LINE = re.compile(r'^\s*policy\s+"', re.MULTILINE)
_INCLUDE_LINE = re.compile(r'^\s*include\s+"((?:[^"\\\n]|\\.)*)"', re.MULTILINE)


def collect_policies(paths: list[str]) -> list[str]:
    """Expand files and folders into the policy files to check, in a deterministic order, once each.

    Folders are searched recursively for ``*.fx`` regular files, in sorted order; a file reached
    twice (by another name, or through a folder) is checked once. A file found in a folder that
    another file there includes, and that names no policy itself, is a shared fragment (a fabric
    file, say): it is checked as part of its includers, not on its own. Files named explicitly are
    always checked.
    """
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(str(x) for x in Path(p).rglob("*.fx") if x.is_file())
            included: set[str] = set()
            texts: dict[str, str] = {}
            for f in found:
                try:
                    with open(f, encoding="utf-8", errors="replace") as fh:
                        texts[f] = fh.read(1 << 20)
                except OSError:
                    continue
                for inc in _INCLUDE_LINE.findall(texts[f]):
                    included.add(os.path.normpath(os.path.join(os.path.dirname(f), inc)))
            out += [f for f in found if not (os.path.normpath(f) in included and not _POLICY_LINE.search(texts.get(f, "")))]
        else:
            out.append(p)
    # Each file once, under the first name it was reached by (`a.fx`, `./a.fx` and `d/../a.fx`
    # are one file).
    seen: set[str] = set()
    once = []
    for f in out:
        real = os.path.realpath(f)
        if real not in seen:
            seen.add(real)
            once.append(f)
    return once


def make_backend(options: SolverOptions) -> Backend:
    """Return the Z3 backend (imported lazily: loading z3 costs time even for input errors)."""
    from fxverify.smt.z3_backend import Z3Backend

    return Z3Backend(options)


def generate(policy: Policy) -> tuple[Context, list[Obligation]]:
    """Build the context and every obligation of ``policy``, family by family, deterministically."""
    ctx = Context(policy, PolicyGraph(policy))
    obs: list[Obligation] = []
    keys: set[str] = set()
    acyclic = ctx.graph.is_acyclic()
    for fam in ALL_FAMILIES:
        for ob in fam.generate(ctx):
            # With cyclic HB no schedule exists: only the cycle (FX-ORD-001) and the properties
            # that do not depend on schedules are meaningful until the cycle is fixed.
            if not (acyclic or ob.schedule_free or ob.code == "FX-ORD-001"):
                continue
            # INVARIANT: keys identify obligations; a repeated key states the same property twice
            # (for example two identical handoff clauses on one edge), so the copy is dropped.
            if ob.key not in keys:
                keys.add(ob.key)
                obs.append(ob)
    return ctx, obs


def effective_solver(policy: Policy, solver: SolverOptions) -> SolverOptions:
    """The solver options for ``policy``: its own ``rlimit`` tightens the command line's, never
    loosens it."""
    if policy.rlimit is not None and policy.rlimit < solver.rlimit:
        return SolverOptions(seed=solver.seed, rlimit=policy.rlimit, timeout_ms=solver.timeout_ms)
    return solver


def check(path: str, options: CheckOptions = CheckOptions(), backend: Backend | None = None,
          progress: Callable[[int], None] | None = None,
          make: Callable[[SolverOptions], Backend] | None = None) -> CheckResult:
    """Check one policy file.

    ``backend`` overrides the Z3 backend (tests); otherwise ``make`` (default ``make_backend``)
    builds one from the policy's effective ``SolverOptions`` (the result cache wraps Z3 this
    way). ``progress`` is called with
    the number of obligations discharged since its previous call (for a progress bar).
    Returns a ``CheckResult``; input problems are diagnostics (``result.input_error``).
    Raises only on bugs (``FxError`` or others), which the CLI reports as FX-INT-001.
    """
    t0 = time.perf_counter()
    sources = SourceMap()
    policy, diags = load_policy(path, sources, limits=options.limits)
    result = CheckResult(path, policy, sources, diagnostics=list(diags))
    if policy is None:
        result.seconds = time.perf_counter() - t0
        return result
    if backend is None:
        backend = (make or make_backend)(effective_solver(policy, options.solver))
    verdicts, found, calls = discharge(policy, options, backend, progress)
    result.verdicts, result.solver_calls = verdicts, calls
    result.diagnostics += found
    _group_instances(result)
    _apply_suppressions(policy, result)
    result.seconds = time.perf_counter() - t0
    return result


_PROGRESS_EVERY = 4096


def discharge(policy: Policy, options: CheckOptions, backend: Backend,
              progress: Callable[[int], None] | None = None) -> tuple[list[Verdict], list[Diagnostic], int]:
    """Discharge every obligation of ``policy``: exact non-solver proofs first (unless
    ``options.prune`` is off), then the solver; refutations are replayed by the simulator.
    ``progress`` (if given) is called with counts of obligations discharged, in batches.

    Returns ``(verdicts, diagnostics, solver_calls)``.
    """
    _ctx, obligations = generate(policy)
    sim = Simulator(policy)
    dump = _Dumper(options.dump_smt) if options.dump_smt else None
    slots: list[Verdict | None] = []
    diags: list[Diagnostic] = []
    pending: list[tuple[int, Obligation, Query]] = []
    calls = 0

    def flush() -> None:
        # Decide the pending queries as one batch (a pool backend spreads it over processes),
        # then read the answers in obligation order, so verdicts and diagnostics keep their order.
        nonlocal calls
        for (i, ob, query), res in zip(pending, solve_batch(backend, [q for _, _, q in pending])):
            calls += 1
            family = lookup(ob.code).family
            if res.status is Status.UNKNOWN:
                slots[i] = Verdict(ob.key, ob.code, family, Status3.UNKNOWN, "solver", res.reason)
                diags.append(_unknown(ob, res.reason))
            elif res.status is query.expect:
                slots[i] = Verdict(ob.key, ob.code, family, Status3.PROVED, "solver")
            else:
                slots[i] = Verdict(ob.key, ob.code, family, Status3.REFUTED, "solver")
                diags.append(_refutation(policy, sim, ob, res))
        pending.clear()

    for i, ob in enumerate(obligations):
        if progress is not None and i and i % _PROGRESS_EVERY == 0:
            progress(_PROGRESS_EVERY)
        if dump is not None:
            dump.write(ob)
        method = ob.prove_fast() if options.prune else None
        if method is not None:
            slots.append(Verdict(ob.key, ob.code, lookup(ob.code).family, Status3.PROVED, method))
            continue
        slots.append(None)
        pending.append((i, ob, ob.encode()))
        if len(pending) >= _BATCH:
            flush()
    flush()
    if progress is not None and obligations:
        progress(len(obligations) - (len(obligations) - 1) // _PROGRESS_EVERY * _PROGRESS_EVERY)  # the rest
    verdicts: list[Verdict] = slots  # type: ignore[assignment]  # INVARIANT: flush filled every slot
    return verdicts, diags, calls


#: Queries decided together; bounds the memory held by encoded queries (a policy can have
#: hundreds of thousands) while giving a process pool enough work per batch.
_BATCH = 64


def solve_batch(backend: Backend, queries: list[Query]) -> list[Result]:
    """Decide ``queries`` with ``backend``: through its ``check_many`` when it has one (a process
    pool, the result cache), else one by one. Returns results in input order."""
    many = getattr(backend, "check_many", None)
    return many(queries) if many is not None else [backend.check(q) for q in queries]


def _unknown(ob: Obligation, reason: str) -> Diagnostic:
    return Diagnostic(
        "FX-SMT-001", Severity.ERROR,
        f"could not decide {ob.code} for {', '.join(f'`{ob.name(e)}`' for e in ob.edges[:2]) or 'the policy'}: {reason}",
        Label(ob.primary, lookup(ob.code).title),
        help="raise the policy's `rlimit` or the command line's `--rlimit`/`--timeout`, or split the flow; "
             "unknown is never a pass",
        policy=ob.ctx.policy.name, obligation=ob.key, edges=tuple(ob.name(e) for e in ob.edges),
        witness=f"unknown:{ob.code}")


def _refutation(policy: Policy, sim: Simulator, ob: Obligation, res) -> Diagnostic:
    w = ob.decode(res)
    edges = tuple(w.cycle) if w.cycle else ob.edges
    confirmed = sim.confirm(ob.code, edges, w.schedule, w.address, w.values)
    if confirmed is None:
        return Diagnostic(
            "FX-INT-001", Severity.ERROR,
            f"the counterexample for {ob.code} ({ob.key}) did not replay in the simulator",
            Label(ob.primary, "here"),
            notes=(f"witness schedule {sorted(w.schedule.items())}, address {w.address}",),
            help="this is a bug in fxverify; please report it with this policy",
            policy=policy.name, obligation=ob.key)
    trace = build_trace(policy, ob.code, ob.edges, w, confirmed, ob.why(w), ob.fix(w), sim)
    return Diagnostic(ob.code, Severity.ERROR, ob.message(w), Label(ob.primary, lookup(ob.code).title),
                      related=ob.related, help=trace.fix, trace=trace, policy=policy.name, obligation=ob.key,
                      edges=tuple(policy.edges[e].name for e in edges), witness=_witness_kind(w, trace))


def _witness_kind(w, trace) -> str:
    """The shape of a witness, without its values: ``cycle``, ``static`` (schedule-independent
    facts) or ``schedule:<event>`` with the kind of the violating step (``release``, ``map``...)."""
    if w.cycle:
        return "cycle"
    if not w.schedule:
        return "static"
    kind = next((ev.kind for ev in trace.events if ev.violation), "")
    return f"schedule:{kind}"


def _group_instances(result: CheckResult) -> None:
    """Keep one diagnostic per (code, primary span): edge-family instances share a span, and a
    person needs the first instance's trace, plus how many other instances fail the same way."""
    groups: dict[tuple, list[Diagnostic]] = {}
    order: list[tuple] = []
    for d in result.diagnostics:
        key = (d.code, d.primary.span if d.primary else None, d.related[0].span if d.related else None,
               # unknown verdicts of different obligations must each stay visible
               d.message if d.code == "FX-SMT-001" else "")
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(d)
    out = []
    for key in order:
        ds = groups[key]
        first = ds[0]
        if len(ds) > 1:
            first = replace(first, notes=first.notes
                            + (f"{len(ds) - 1} more instance(s) of this edge family fail the same way",))
        out.append(first)
    result.diagnostics = out


def _lines(sources: SourceMap, span: Span) -> tuple[int, int]:
    """First and last line of ``span`` (``(0, -1)`` when its file is unknown)."""
    sf = sources.get(span.file)
    if sf is None:
        return 0, -1
    return sf.line_col(span.start)[0], sf.line_col(max(span.start, span.end - 1))[0]


def _annotated(policy: Policy, sources: SourceMap, sup) -> list[Span]:
    """The spans a suppression annotates: the line it is on (trailing) or, alone on its line, the
    next line; and every edge declaration that contains that line or starts on it."""
    sf = sources.get(sup.file)
    if sf is None:
        return []
    alone = sf.line_text(sup.line).lstrip().startswith("#")
    target = sup.line + 1 if alone else sup.line
    out = []
    for span in dict.fromkeys(e.span for e in policy.edges if e.span.file == sup.file):
        l0, l1 = _lines(sources, span)
        if l0 <= target <= l1:
            out.append(span)
    return out


def _apply_suppressions(policy: Policy, result: CheckResult) -> None:
    """Mark findings matched by an inline suppression (specs/output.md): a finding of the
    suppression's code whose primary span includes the suppression's line (or, for a suppression
    alone on its line, the next line), or lies inside the edge declaration that the suppression
    annotates (for example a `handoff` clause of that edge on a later line)."""
    if not policy.suppressions:
        return
    edges = [_annotated(policy, result.sources, sup) for sup in policy.suppressions]
    used: set[int] = set()
    out = []
    for d in result.diagnostics:
        if d.primary is None or d.code in ("FX-INT-001",):
            out.append(d)
            continue
        p = d.primary.span
        l0, l1 = _lines(result.sources, p)
        match = None
        for i, sup in enumerate(policy.suppressions):
            if sup.code != d.code or sup.file != p.file:
                continue
            target = sup.line + 1 if result.sources.get(p.file).line_text(sup.line).lstrip().startswith("#") else sup.line
            if l0 <= target <= l1 or any(e.start <= p.start and p.end <= e.end for e in edges[i]):
                match = (i, sup)
                break
        if match is None:
            out.append(d)
            continue
        used.add(match[0])
        out.append(replace(d, suppressed_reason=match[1].reason))
    for i, sup in enumerate(policy.suppressions):
        if i not in used:
            out.append(Diagnostic("FX-SUP-002", Severity.WARNING, f"suppression of {sup.code} matched no finding",
                                  Label(sup.span, "unused"), help="remove it, or move it onto the line of the finding",
                                  policy=policy.name))
    result.diagnostics = out


class _Dumper:
    """Writes each obligation's query as ``<dir>/<code>__<key>.smt2`` (atomically)."""

    def __init__(self, directory: str) -> None:
        import os

        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.names: Counter = Counter()

    def write(self, ob: Obligation) -> None:
        import hashlib

        from fxverify.atomic import replace_atomically

        q = ob.encode()
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", ob.key.split(":", 1)[-1]).strip("_")
        if len(slug) > 100:
            slug = slug[:80] + "_" + hashlib.sha1(slug.encode()).hexdigest()[:12]
        name = f"{ob.code}__{slug}"
        self.names[name] += 1
        if self.names[name] > 1:
            name += f"__{self.names[name]}"
        replace_atomically(os.path.join(self.dir, name + ".smt2"), query_to_smtlib(q).encode("utf-8"))
