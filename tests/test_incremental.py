"""Incremental re-checks (issue "Scale", item 6): after an edit, the result cache's families
level gives the proofs of each obligation family whose inputs did not change
(``obligations.inputs``), and the check must be the same as a fresh one: same outcomes in the
same order, same diagnostics, same solver call count. A reuse that is not the same is a proof
kept after the edit that broke it."""

from __future__ import annotations

import re
from dataclasses import fields, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.gate.cache import CacheStats, FamilyCache, ResultCache, check_cached
from fxverify.ir import Edge
from fxverify.obligations import inputs
from fxverify.pipeline import CheckOptions, discharge
from fxverify.result import CheckResult, OutcomeLog, ProvedRun, Verdict
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend

from tests import ir_builders as ib
from tests.conftest import ROOT
from tests.policies import DEVICES, policies

BACKEND = open_backend(SolverOptions())
OPTIONS = CheckOptions(verify_hints=False)


class MemoryStore:
    """A ``pipeline.FamilyStore`` in a dict, counting what it served."""

    def __init__(self) -> None:
        self.runs: dict[tuple[Family, str], ProvedRun] = {}

    def get(self, family: Family, digest: str) -> ProvedRun | None:
        return self.runs.get((family, digest))

    def put(self, family: Family, digest: str, run: ProvedRun) -> None:
        self.runs[(family, digest)] = run


def _seen(r: CheckResult) -> tuple:
    """What a user sees of a result: every outcome in order, the diagnostics, the solver calls."""
    return ([(o.key, str(o.code), o.verdict, o.method, o.reason) for o in r.outcomes],
            [(str(d.code), d.message, d.obligation, tuple(d.edges)) for d in r.diagnostics], r.solver_calls)


def _incremental_equals_fresh(before, after, options: CheckOptions = OPTIONS) -> CheckResult:
    store = MemoryStore()
    discharge(before, options, BACKEND, families=store)
    again = discharge(after, options, BACKEND, families=store)
    assert _seen(again) == _seen(discharge(after, options, BACKEND))
    return again


def test_every_edge_field_is_placed():
    """A new ``ir.Edge`` field is read by every family unless ``inputs.NARROW`` says otherwise;
    this list makes adding one a decision (is it read by fewer?), not an accident."""
    assert {f.name for f in fields(Edge)} == {
        "eid", "name", "family", "action", "device", "hook", "src", "dst", "reduce_op", "reduce_atomic", "after",
        "stream", "flushes", "require_in_order", "via", "alias", "bytes", "reuse", "rw", "transforms", "handoffs",
        "leases", "revokes", "releases", "allocs", "map_ops", "expects", "writebacks", "invalidates", "notifies",
        "cancels", "indices", "span", "hook_span", "flow",
        "_accesses"}  # a cache of ``accesses()``, derived from the fields above: left out of digests
    assert set(inputs.NARROW) <= {f.name for f in fields(Edge)}


def _edit(data: st.DataObject, policy):
    """One edit of one edge of ``policy``: its hook (a declared one or not), its `after` clause,
    its stream, its alias set, its footprint's offset, or the lowering's `reuse`/`rw`."""
    i = data.draw(st.integers(0, len(policy.edges) - 1))
    e = policy.edges[i]
    kind = data.draw(st.sampled_from(["hook", "hook", "hook", "after", "stream", "alias", "footprint", "reuse", "rw"]))
    if kind == "hook":
        hooks = [h for d in DEVICES if d.name == e.device for h in d.hooks] + ["nosuch"]
        e = replace(e, hook=data.draw(st.sampled_from(hooks)))
    elif kind == "after":
        names = [f"e{j}" for j in range(len(policy.edges)) if j != i]
        e = replace(e, after=tuple(data.draw(st.lists(st.sampled_from(names), unique=True, max_size=2))) if names else ())
    elif kind == "stream":
        e = replace(e, stream=data.draw(st.sampled_from([None, "s0", "s1"])))
    elif kind == "alias":
        e = replace(e, alias=data.draw(st.sampled_from([None, "x", "y"])))
    elif kind == "footprint" and (e.dst or e.src):
        fp = e.dst or e.src
        moved = replace(fp, base=fp.base + data.draw(st.sampled_from([0, 16, 64])))
        e = replace(e, dst=moved) if e.dst else replace(e, src=moved)
    elif kind == "reuse":
        e = replace(e, reuse=data.draw(st.sampled_from([None, 64, 4096])))
    elif kind == "rw":
        e = replace(e, rw=data.draw(st.sampled_from([None, (1, 1), (3, 1)])))
    return replace(policy, edges=policy.edges[:i] + (e,) + policy.edges[i + 1:])


@pytest.mark.slow  # three checks of 150 random policies: the latest-versions pass runs it
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(), st.data(), st.booleans())
def test_a_reused_check_equals_a_fresh_one(policy, data, prune):
    """Random policy, one random edit: the check of the edited policy with the families level
    filled by the first check equals a fresh check of it, with and without fast proofs. (Measured
    once: of 150 examples, 120 reused a family, and in 31 the edit changed a verdict.)"""
    _incremental_equals_fresh(policy, _edit(data, policy), CheckOptions(prune=prune, verify_hints=False))


def _two_writes(after: tuple[str, ...], hook: str = "launch"):
    return ib.policy(ib.write("w0", ib.whole(ib.A), hook=hook), ib.write("w1", ib.whole(ib.A), after=after))


def test_a_hook_edit_reuses_every_family_but_hooks():
    before, after = _two_writes(("w0",)), _two_writes(("w0",), hook="copy_done")
    r = _incremental_equals_fresh(before, after)
    assert set(r.reused) == {f.value for f in OBLIGATION_FAMILIES} - {"hooks"}


def test_an_after_edit_reuses_nothing_and_finds_the_race():
    r = _incremental_equals_fresh(_two_writes(("w0",)), _two_writes(()))
    assert r.reused == ()
    assert any(o.verdict is Verdict.REFUTED and o.code == "FX-ORD-002" for o in r.outcomes)


def test_a_field_wrongly_declared_narrow_keeps_a_broken_proof(monkeypatch):
    """The comparison above can fail: were `after` read by no family (a wrong ``NARROW``
    entry), the race the edit makes would be hidden behind the stored proofs."""
    monkeypatch.setitem(inputs.NARROW, "after", frozenset())
    inputs._reducers.cache_clear()
    store = MemoryStore()
    discharge(_two_writes(("w0",)), OPTIONS, BACKEND, families=store)
    stale = discharge(_two_writes(()), OPTIONS, BACKEND, families=store)
    assert all(o.verdict is Verdict.PROVED for o in stale.outcomes)
    assert any(o.verdict is Verdict.REFUTED for o in discharge(_two_writes(()), OPTIONS, BACKEND).outcomes)
    monkeypatch.undo()
    inputs._reducers.cache_clear()


def test_refuted_families_are_not_stored():
    store = MemoryStore()
    discharge(_two_writes(()), OPTIONS, BACKEND, families=store)
    assert Family.ORDERING not in {f for f, _d in store.runs}
    assert Family.HOOKS in {f for f, _d in store.runs}


def test_digests_ignore_source_positions_only():
    pol = _two_writes(("w0",))
    moved = replace(pol, edges=tuple(replace(e, span=replace(e.span, start=e.span.start + 7, end=e.span.end + 9))
                                     for e in pol.edges))
    assert inputs.family_digests(moved) == inputs.family_digests(pol)
    from fxverify.diagnostics.suppress import Suppression
    allowed = replace(pol, suppressions=(Suppression("FX-ORD-002", "measured", "p.fx", 3),))
    moved_down = replace(pol, suppressions=(Suppression("FX-ORD-002", "measured", "p.fx", 9),))
    assert inputs.family_digests(allowed) == inputs.family_digests(moved_down) == inputs.family_digests(pol)
    renamed = replace(pol, edges=(pol.edges[0], replace(pol.edges[1], device="dpu0")))
    assert all(a != b for a, b in zip(inputs.family_digests(renamed).values(), inputs.family_digests(pol).values()))


def test_proved_run_round_trip():
    log = OutcomeLog()
    from fxverify.diagnostics import codes
    log.append("FX-ORD-002:a|b", codes.ORD_002, Verdict.PROVED, "hb-reachability")
    log.append("FX-HOOK-001:a", codes.HOOK_001, Verdict.PROVED, "declared")
    log.append("FX-HOOK-001:b", codes.HOOK_001, Verdict.PROVED, "solver")
    log.append("FX-HOOK-001:c", codes.HOOK_001, Verdict.REFUTED, "solver")
    assert log.proved_run(0, 4) is None
    run = log.proved_run(1, 3)
    assert run is not None and run.solver_proofs() == 1 and len(run) == 2
    again = OutcomeLog()
    again.append("FX-ORD-002:x", codes.ORD_002, Verdict.PROVED, "hb-reachability")
    again.extend(run)
    again.extend(log.proved_run(2, 2))
    assert list(again)[1:] == list(log)[1:3]
    assert again.proved_run(0, 3) is not None


def test_family_cache_round_trip_and_bad_entries(tmp_path):
    cache = ResultCache(str(tmp_path))
    fc = FamilyCache(cache, OPTIONS)
    log = OutcomeLog()
    from fxverify.diagnostics import codes
    log.append("FX-HOOK-001:a", codes.HOOK_001, Verdict.PROVED, "declared")
    log.append("FX-HOOK-001:b", codes.HOOK_001, Verdict.PROVED, "declared")
    run = replace(log.proved_run(0, 2), queries=3)  # three parametric queries behind them
    fc.put(Family.HOOKS, "d" * 64, run)
    assert fc.get(Family.HOOKS, "d" * 64) == run and run.solver_proofs() == 3
    assert fc.get(Family.HOOKS, "e" * 64) is None
    assert fc.get(Family.ORDERING, "d" * 64) is None  # another family: another key
    # A different check (another rlimit) never reads it.
    assert FamilyCache(cache, CheckOptions(solver=SolverOptions(rlimit=7), verify_hints=False)).get(Family.HOOKS, "d" * 64) is None
    (entry,) = (tmp_path / "v1" / "families").rglob("*.json.gz")
    entry.write_bytes(entry.read_bytes()[:20])
    assert fc.get(Family.HOOKS, "d" * 64) is None


def test_a_one_hook_edit_of_a_corpus_policy_through_the_cache(tmp_path):
    """The command's path (``check_cached``): a hook edit re-checks the hooks family alone, and
    the report equals a check without a cache."""
    src = ROOT / "corpus/ordering/ok/grad-bucket-all-producers.fx"
    pol = tmp_path / "p.fx"
    pol.write_text(src.read_text())
    cache = ResultCache(str(tmp_path / "cache"))
    first = check_cached(str(pol), OPTIONS, cache, CacheStats())
    assert first.reused == ()
    text = pol.read_text()
    edited, n = re.subn(r"(edge bw_side: .*? by gpu0\.)launch", r"\1copy_done", text)
    assert n == 1
    pol.write_text(edited)
    again = check_cached(str(pol), OPTIONS, cache, CacheStats())
    fresh = check_cached(str(pol), OPTIONS, None, CacheStats())
    assert set(again.reused) == {f.value for f in OBLIGATION_FAMILIES} - {"hooks"}
    assert _seen(again) == _seen(fresh) and again.verdict is Verdict.PROVED


FAMILIES = """policy "inc"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm on gpu0 size 16 MiB
region blk[i in 0..8] in hbm at i * 4096 size 4096 owner gpu0
region s[i in 0..4] in hbm at 0x100000 + i * 4096 size 4096 owner gpu0 dtype bf16
region d[i in 0..4] in hbm at 0x200000 + i * 8192 size 8192 owner gpu0
flow f {
  for i in 0..8 {
    edge w[i]: write blk[i] by gpu0.launch
  }
  for i in 0..8 {
    edge r[i]: read blk[i][i * 256 - (i / 2) * 512, +256] by gpu0.launch after w[i]
  }
  for i in 0..4 {
    edge p[i]: write s[i] by gpu0.launch
  }
  for i in 0..4 {
    edge m[i]: move s[i] -> d[i] by gpu0.launch after p[i] transform compress(lz4)
  }
  edge last: write blk[0][0, +64] by gpu0.HOOK after r[0]
}
"""


def test_families_proved_parametrically_are_stored_and_reused_in_place(tmp_path):
    """Parametric proofs (``ProvedTogether``: one item, many outcomes) in the alias, transforms
    and hooks families: each family's stored range of outcomes must count every key of them, or
    a later family's stored proofs would be another family's outcomes. The prover's queries are
    solver calls, stored with the family that asked them. A hook edit re-runs hooks alone, and
    the result equals a fresh check's, solver calls included."""
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap
    path = str(tmp_path / "inc.fx")

    def load(hook):
        policy, diags = load_policy(path, SourceMap(), texts={path: FAMILIES.replace("HOOK", hook)})
        assert policy is not None, diags
        return policy

    store = MemoryStore()
    first = discharge(load("launch"), OPTIONS, BACKEND, families=store)
    assert first.verdict is Verdict.PROVED
    assert {code for _f, _at, code, *_ in first.parametric} >= {"FX-ALIAS-003", "FX-XF-001", "FX-HOOK-002"}
    # one FX-ALIAS-003 query: `r`'s offset, 256 * (i % 2), is beyond the interval bounds (the
    # other footprints are decided by them); no FX-INIT-001 cover query (`r`'s eight instances
    # are below ``parametric.QUERY_MIN_INSTANCES``: they are proved on their own)
    assert first.solver_calls == 1
    for (family, _d), run in store.runs.items():
        stored = OutcomeLog()
        stored.extend(run)
        assert [o.key for o in stored] == [o.key for o in first.outcomes if o.code.family is family], family
    again = discharge(load("copy_done"), OPTIONS, BACKEND, families=store)
    assert set(again.reused) == {f.value for f in OBLIGATION_FAMILIES} - {"hooks"}
    assert _seen(again) == _seen(discharge(load("copy_done"), OPTIONS, BACKEND))
