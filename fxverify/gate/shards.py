"""One policy's check split into shards that run in other processes, and their merge.

A policy whose flows measure at least ``split_min_edges`` edges (``resolve.Loader.measure``) is
checked in shards when more than one worker is free. ``plan(slots)`` gives the shards: a
``Shard`` is one obligation family (the family whose module generates the obligations) and a
part of it, ``part`` of ``parts``: the obligations of that family's stream whose index ``i``
satisfies ``i % parts == part``. ``run_shard`` runs in a worker: it resolves the policy from the
gate's ``FileSnapshot`` (once per worker process and policy: the IR, its HB index and the
obligation ``Context`` are kept for the next shard of the same policy), generates its family,
discharges its part (fast proofs, certificates, solver queries with the seeds and limits of the
``CheckOptions`` it carries, replays of refutations) and returns a ``ShardOutcome``: its outcomes
as a compact record (``serialize.result_to_record``) and the keys and trace edges of its
refutations. A shard's family is generated one obligation at a time (``families.obligations``)
and only its part is discharged, so a worker's memory grows with the policy, as one process's
does. ``merge`` puts the shards back in the order of one process: family by family, index by
index; diagnostics, refutations and certificate failures in obligation order; hints verified
once all findings are known, for the first finding of each group (``pipeline.first_findings``,
``pipeline.verify_hints``, in the gate's process, which then resolves the policy itself); then
``pipeline.conclude``. The merged result renders to the
same bytes as ``pipeline.check``'s.

Emits FX-INT-001 (through ``crash``) when a shard raises or shards disagree; every other
diagnostic is the pipeline's.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from fxverify import hints
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.diagnostics.model import Diagnostic, crash
from fxverify.errors import FxError
from fxverify.gate.cache import CacheStats, ResultCache, counting
from fxverify.gate.executors import identity
from fxverify.gate.serialize import diagnostic_from_record, diagnostic_to_record, result_from_record, result_to_record
from fxverify.graph import PolicyGraph
from fxverify.ir import Policy
from fxverify.obligations.base import Context, Obligation
from fxverify.obligations.families import obligations
from fxverify.pipeline import (CheckOptions, PolicyFacts, conclude, discharge_obligations, effective_solver,
                               first_findings, kept, verify_hints)
from fxverify.resolve import Loader
from fxverify.resolve.snapshot import FileSnapshot
from fxverify.result import CheckResult, HintCheck, Outcome
from fxverify.source import SourceMap

#: A policy whose flows unroll to at least this many edges is split when workers are free. Below
#: it a check takes a few seconds (a 622-edge prefill policy: 2.5 s on a loaded 2-core machine),
#: no more than starting the workers and resolving the policy once more in each; the real
#: policies of corpus/real have 2,092 to 37,222 edges and take tens of seconds each
#: (bench/bench_jobs.py measures the split on the largest).
SPLIT_MIN_EDGES = 2000

#: Without fast proofs (``--no-prune``) every obligation is a solver query (milliseconds each
#: instead of microseconds), so much smaller policies are worth splitting.
NO_PRUNE_FACTOR = 20


def split_min_edges(options: CheckOptions, min_edges: int = SPLIT_MIN_EDGES) -> int:
    """The measured edge count from which a policy checked with ``options`` is split."""
    return min_edges if options.prune else max(1, min_edges // NO_PRUNE_FACTOR)


@dataclass(frozen=True)
class Shard:
    """Part ``part`` of ``parts`` of the obligations ``family``'s module generates."""

    family: Family
    part: int = 0
    parts: int = 1


def plan(slots: int) -> list[Shard]:
    """The shards of one policy for ``slots`` workers, the costliest first (a free worker takes
    the next). Ordering obligations (races, posted reads, def-before-use) are most of the proof
    work of every real policy, so they are split over every worker; ownership ones over half of
    them (on the Llama-3.1-8B prefill their generation, which each part repeats, is a third of
    the check); the other four families are a few percent each and stay whole
    (bench/bench_jobs.py measures the result)."""
    slots = max(1, slots)
    parts = {Family.ORDERING: slots, Family.OWNERSHIP: max(1, slots // 2)}
    order = (Family.OWNERSHIP, Family.ORDERING, Family.TRANSFORMS, Family.ALIAS, Family.HOOKS, Family.MAPS)
    assert set(order) == set(OBLIGATION_FAMILIES)
    return [Shard(f, j, parts.get(f, 1)) for f in order for j in range(parts.get(f, 1))]


@dataclass(frozen=True)
class ShardTask:
    """What a worker needs for one shard: the policy's files, the check options (solver seeds
    and limits included), the shard, the obligation cache folder (``None``: none, as on a
    cluster, whose workers do not see the gate's disk) and whether to send back the policy's
    ``facts`` (one shard per policy does)."""

    snapshot: FileSnapshot
    options: CheckOptions
    shard: Shard
    cache_dir: str | None = None
    facts: bool = False


@dataclass
class ShardOutcome:
    """A shard's answer. ``head`` is True for the shard asked for the policy's facts; ``total``
    is the length of its family's stream (every part counts the same); ``record`` its discharge
    result (``serialize.result_to_record``; ``None`` when the policy did not load or the shard
    crashed); ``findings`` the key and trace edges of each refutation whose hint may be shown
    (when hints are verified); ``verified`` is True when the shard marked those hints itself
    (a policy past ``hints.MAX_EDGES``: no search). With ``facts`` asked: the policy's
    ``PolicyFacts``, its load diagnostics (as records) and the texts it read. ``identity`` is the
    worker's (``executors.identity``), ``crash`` the FX-INT-001 of a shard that raised."""

    shard: Shard
    head: bool = False
    total: int = 0
    record: dict | None = None
    findings: tuple[tuple[str, tuple[int, ...]], ...] = ()
    verified: bool = False
    loaded: bool = True
    facts: PolicyFacts | None = None
    load: list[dict] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    stats: CacheStats = field(default_factory=CacheStats)
    seconds: float = 0.0
    identity: str = ""
    crash: Diagnostic | None = None


@dataclass
class _Built:
    """A policy resolved in this worker, with its obligation context; ``lock`` lets one shard at
    a time use it (the context fills its indexes lazily, and Python threads would gain nothing)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    ready: bool = False
    policy: Policy | None = None
    ctx: Context | None = None
    diags: list[Diagnostic] = field(default_factory=list)
    sources: SourceMap = field(default_factory=SourceMap)


#: Policies resolved in this worker process, most recent last; a worker keeps the last few, so
#: the next shard of a policy finds it.
_BUILT: OrderedDict[str, _Built] = OrderedDict()
_BUILT_LOCK = threading.Lock()
_KEEP_BUILT = 2


def _built(task: ShardTask) -> _Built:
    key = f"{task.snapshot.digest()} {task.options.limits!r}"
    with _BUILT_LOCK:
        b = _BUILT.get(key)
        if b is None:
            b = _BUILT[key] = _Built()
            while len(_BUILT) > _KEEP_BUILT:
                _BUILT.popitem(last=False)
        else:
            _BUILT.move_to_end(key)
    return b


def run_shard(task: ShardTask) -> ShardOutcome:
    """Discharge one shard in this worker (see the module docstring). Never raises: a raise
    would lose its message, so it becomes the outcome's ``crash``."""
    t0 = time.perf_counter()
    try:
        b = _built(task)
        with b.lock:
            if not b.ready:
                loader = Loader(task.snapshot.root, b.sources, limits=task.options.limits, files=task.snapshot)
                b.policy, b.diags = loader.finish()
                if b.policy is not None:
                    b.ctx = Context(b.policy, PolicyGraph(b.policy))
                b.ready = True
            out = _discharge(b, task) if b.policy is not None else ShardOutcome(task.shard, loaded=False)
        if task.facts:
            out.head = True
            out.load = [diagnostic_to_record(d) for d in b.diags]
            out.texts = {p: b.sources.get(p).text for p in b.sources.paths()}
            out.facts = PolicyFacts.of(b.policy) if b.policy is not None else None
    except Exception as exc:  # noqa: BLE001 - reported as FX-INT-001
        out = ShardOutcome(task.shard, crash=crash(task.snapshot.root, exc))
    out.seconds, out.identity = time.perf_counter() - t0, identity(task.options.solver.solver)
    return out


def _discharge(b: _Built, task: ShardTask) -> ShardOutcome:
    policy, ctx, options, shard = b.policy, b.ctx, task.options, task.shard
    assert policy is not None and ctx is not None
    total = 0

    def mine() -> Iterator[Obligation]:
        nonlocal total
        for i, ob in enumerate(kept(obligations(ctx, (shard.family,)), options)):
            total = i + 1
            if i % shard.parts == shard.part:
                yield ob

    stats = CacheStats()
    backend = counting(ResultCache(task.cache_dir) if task.cache_dir else None, stats)(effective_solver(policy, options.solver))
    # Above hints.MAX_EDGES every hint is marked unverified, each on its own: the shard does it for
    # all its findings (the gate keeps the first of each group, as ``pipeline.first_findings``:
    # the others' diagnostics are grouped away). Below, verifying one re-checks the whole policy,
    # which the gate does once it has them all.
    here = options.verify_hints and len(policy.edges) > hints.MAX_EDGES
    try:
        found = discharge_obligations(policy, mine(), options, backend)
        if here and found.findings:
            verify_hints(policy, options, found.findings, found.result)
    finally:
        backend.close()
    sent = tuple((f.ob.key, f.shown) for f in found.findings) if options.verify_hints else ()
    return ShardOutcome(shard, total=total, record=result_to_record(found.result), findings=sent, verified=here,
                        stats=stats)


def merge(path: str, outs: Sequence[ShardOutcome], options: CheckOptions, snapshot: FileSnapshot) -> CheckResult:
    """The ``CheckResult`` of ``path`` from the outcomes of every shard of ``plan`` (any order),
    as ``pipeline.check`` would have returned it (``policy`` is ``None``, as for any result that
    crossed a process). A shard that crashed makes the policy's result that crash. Raises
    ``FxError`` when the shards disagree (a bug)."""
    for o in outs:
        if o.crash is not None:
            return CheckResult(path, None, SourceMap(), diagnostics=[o.crash])
    head = next(o for o in outs if o.head)
    sources = SourceMap()
    for p, t in head.texts.items():
        sources.add(p, t)
    load = [diagnostic_from_record(d) for d in head.load]
    if head.facts is None or not all(o.loaded for o in outs):
        return CheckResult(path, None, sources, diagnostics=load)
    shards = [(o, result_from_record(o.record, SourceMap())) for o in outs if o.record is not None]
    outcomes, where = _order(shards)
    results = [r for _o, r in shards]
    found = [(where(o, d.obligation), d) for o, r in shards for d in r.diagnostics[:len(r.diagnostics) - r.certify_rejected]]
    rejected = [(where(o, d.obligation), d) for o, r in shards for d in r.diagnostics[len(r.diagnostics) - r.certify_rejected:]]
    tally: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        for family, c in r.counts().items():
            tally[family].update(c)
    # in the order ``CheckResult.counts`` gives: families as their outcomes first appear
    ordered = {f.value: tally[f.value] for f in OBLIGATION_FAMILIES if f.value in tally}
    merged = CheckResult(path, None, sources, outcomes=outcomes, name=head.facts.name, tally=ordered,
                         diagnostics=[d for _i, d in sorted(found, key=_first)] + [d for _i, d in sorted(rejected, key=_first)],
                         refutations=[x for _i, x in sorted(((where(o, x.key), x) for o, r in shards for x in r.refutations), key=_first)],
                         solver_calls=sum(r.solver_calls for r in results))
    if options.certify:
        merged.certified = sum(r.certified or 0 for r in results)
        merged.certify_rejected = sum(r.certify_rejected for r in results)
    if any(o.findings for o, _r in shards):
        _hints(merged, shards, where, options, snapshot)
    merged.diagnostics = conclude(load + merged.diagnostics, head.facts, sources, options)
    merged.cache_hits = sum(o.stats.hits for o in outs)
    merged.solved = sum(o.stats.solved for o in outs)
    return merged


def _first(item: tuple) -> int:
    return item[0]


def _order(shards: list[tuple[ShardOutcome, CheckResult]]) -> tuple[Sequence[Outcome], Callable[[ShardOutcome, str], int]]:
    """The outcomes in the order of one process (``Interleaved``), and the position in it of a
    key of a shard: family by family, and in a family, index ``i`` is part ``i % parts``'s
    ``i // parts``-th outcome."""
    offset: dict[Family, int] = {}
    parts: list[list[Sequence[Outcome]]] = []
    n = 0
    for family in OBLIGATION_FAMILIES:
        mine = sorted(((o.shard.part, o, r) for o, r in shards if o.shard.family is family), key=_first)
        if not mine:
            raise FxError(f"no shard discharged the {family.value} family")
        k, total = mine[0][1].shard.parts, mine[0][1].total
        sizes = [len(o.record["keys"].split("\n")) if o.record and o.record["keys"] else 0 for _p, o, _r in mine]
        if [p for p, _o, _r in mine] != list(range(k)) or any(o.total != total for _p, o, _r in mine) or sum(sizes) != total:
            raise FxError(f"the shards of the {family.value} family disagree on its obligations")
        offset[family] = n
        parts.append([r.outcomes for _p, _o, r in mine])
        n += total
    index: dict[int, dict[str, int]] = {}

    def where(o: ShardOutcome, key: str) -> int:
        if id(o) not in index:
            assert o.record is not None
            index[id(o)] = {k: i for i, k in enumerate(o.record["keys"].split("\n"))}
        return offset[o.shard.family] + index[id(o)][key] * o.shard.parts + o.shard.part

    return Interleaved(parts, n), where


class Interleaved(Sequence):
    """A policy's outcomes merged from its shards, put in order on first use (a report needs
    only the counts, which the shards send): ``parts`` holds, per family in order, the outcome
    sequences of its parts; ``n`` is their total length."""

    def __init__(self, parts: list[list[Sequence[Outcome]]], n: int) -> None:
        self._parts: list[list[Sequence[Outcome]]] | None = parts
        self._n = n
        self._items: list[Outcome] = []

    def _all(self) -> list[Outcome]:
        if self._parts is not None:
            for family in self._parts:
                lists = [list(p) for p in family]
                k = len(lists)
                self._items += [lists[i % k][i // k] for i in range(sum(map(len, lists)))]
            self._parts = None
        return self._items

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self._all()[i]

    def __iter__(self):
        return iter(self._all())


@dataclass(frozen=True)
class _Later:
    """A finding a shard sent back: its obligation's ``key``, family and trace edges
    (``shown``), and ``index``, the index of its diagnostic in the merged diagnostics."""

    key: str
    family: Family
    shown: tuple[int, ...]
    index: int


def _hints(merged: CheckResult, shards: list[tuple[ShardOutcome, CheckResult]], where: Callable[[ShardOutcome, str], int],
           options: CheckOptions, snapshot: FileSnapshot) -> None:
    """The hints of ``merged``, as ``pipeline.discharge`` verifies them once it knows every
    outcome: only the first finding of each group (``pipeline.first_findings``, in obligation
    order). Past ``hints.MAX_EDGES`` the shards marked them (``ShardOutcome.verified``) and their
    checks are kept; else they are verified here, with the policy resolved from ``snapshot``
    and the findings' obligations generated again (a policy of at most ``hints.MAX_EDGES`` edges,
    so that is quick)."""
    at: dict[str, int] = {}
    for i, d in enumerate(merged.diagnostics[:len(merged.diagnostics) - merged.certify_rejected]):
        at.setdefault(d.obligation, i)
    sent = sorted(((where(o, k), k, o.shard.family, shown) for o, _r in shards for k, shown in o.findings), key=_first)
    firsts = first_findings([_Later(k, f, shown, at[k]) for _p, k, f, shown in sent], merged.diagnostics)
    if any(o.verified for o, _r in shards):
        checks: dict[str, HintCheck] = {k: c for _o, r in shards for k, c in r.hints.items()}
        merged.hints = {f.key: checks[f.key] for f in firsts}
        return
    merged.tally = None  # verifying hints reads every outcome anyway
    policy, _diags = Loader(snapshot.root, SourceMap(), limits=options.limits, files=snapshot).finish()
    if policy is None:
        raise FxError("a policy that resolved in the shards did not resolve again")
    wanted = {f.key for f in firsts}
    ctx = Context(policy, PolicyGraph(policy))
    obs = {ob.key: ob for ob in obligations(ctx, {f.family for f in firsts}) if ob.key in wanted}
    witness = {x.key: x.witness for x in merged.refutations if x.key in wanted}
    verify_hints(policy, options, [hints.Finding(obs[f.key], obs[f.key].fix(witness[f.key]), f.shown, f.index)
                                   for f in firsts], merged)
