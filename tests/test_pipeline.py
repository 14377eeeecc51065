"""One policy through the pipeline: outcomes, refutations with their witnesses, the SMT-LIB2 dump
encoding each query once, and results surviving the round trip through a stored record."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxverify import hints
from fxverify.diagnostics import codes
from fxverify.gate.serialize import result_from_record, result_to_record
from fxverify.lower.differential import counterexamples
from fxverify.obligations.base import Obligation
from fxverify.pipeline import CheckOptions, check
from fxverify.render.json import results_to_json
from fxverify.replay.simulate import Simulator
from fxverify.result import Verdict
from fxverify.smt.backend import Result, Status

from tests.conftest import ROOT, corpus_files

FAILS = corpus_files("fail")


@pytest.mark.parametrize("path", FAILS, ids=str)
def test_every_refuted_obligation_carries_a_witness_that_replays(path: Path, at_root) -> None:
    r = check(str(path))
    refuted = [o for o in r.outcomes if o.verdict is Verdict.REFUTED]
    assert [x.key for x in r.refutations] == [o.key for o in refuted]
    sim = Simulator(r.policy)
    for x in r.refutations:
        w = x.witness
        edges = tuple(w.cycle) if w.cycle else x.edges
        assert sim.confirm(x.code, edges, w.schedule, w.address, w.values, w.other_schedule) is not None, x.key


def test_the_kernel_differential_reads_the_witnesses(at_root) -> None:
    r = check("corpus/ownership/fail/pinned-free-before-copy.fx")
    cases = counterexamples(r.refutations)
    assert cases and all(code is codes.OWN_004 for code, _, _ in cases)
    assert all(sched for _, _, sched in cases)  # schedule witnesses, decoded once by the check


@pytest.mark.parametrize("path", ["corpus/ordering/fail/hb-cycle.fx", "corpus/ownership/fail/final-owner-mismatch.fx",
                                  "corpus/alias/fail/strided-overlap.fx"])
def test_results_survive_a_stored_record(path: str, at_root) -> None:
    r = check(path)
    back = result_from_record(result_to_record(r), r.sources)
    assert results_to_json([back]) == results_to_json([r])
    assert [(x.key, x.code, x.edges, x.witness) for x in back.refutations] == \
        [(x.key, x.code, x.edges, x.witness) for x in r.refutations]
    assert [(o.key, o.code, o.verdict, o.method) for o in back.outcomes] == \
        [(o.key, o.code, o.verdict, o.method) for o in r.outcomes]


def test_dump_encodes_each_query_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_root) -> None:
    """With ``--dump-smt`` every obligation is written, fast-proved or not, and each query is
    encoded once: the object written is the object the solver decides."""
    calls: dict[str, int] = {}
    for cls in _subclasses(Obligation):
        if "encode" in cls.__dict__:
            monkeypatch.setattr(cls, "encode", _wrap(cls.__dict__["encode"], calls))
    r = check("corpus/ordering/fail/kv-offload-unordered.fx", CheckOptions(dump_smt=str(tmp_path)))
    files = list(tmp_path.glob("*.smt2"))
    assert len(files) == len(r.outcomes) == len(calls)
    assert set(calls.values()) == {1}


def _subclasses(cls: type) -> list[type]:
    out = []
    for c in cls.__subclasses__():
        out += [c, *_subclasses(c)]
    return out


def _wrap(fn, calls: dict[str, int]):
    def encode(self):
        calls[self.key] = calls.get(self.key, 0) + 1
        return fn(self)
    return encode


def test_refutation_edges_name_the_primary_edges(at_root) -> None:
    r = check("corpus/ordering/fail/kv-offload-unordered.fx")
    (x,) = r.refutations
    assert x.code is codes.ORD_002
    assert [r.policy.edges[e].name for e in x.edges] == ["attn", "offload"]
    assert x.witness.address == 0x2000_0000 and x.witness.space == "hbm0"


def test_discharge_order_is_obligation_order(at_root) -> None:
    """Outcomes come in obligation order whether an obligation was proved fast or by the solver."""
    from fxverify.obligations.families import generate

    r = check("corpus/maps/fail/lost-owner-update.fx")
    _, obs = generate(r.policy)
    assert [o.key for o in r.outcomes] == [ob.key for ob in obs]


def test_the_outcome_log_keeps_order_kinds_and_counts() -> None:
    """``OutcomeLog`` (the compact outcomes of a discharge): items decode to the outcomes put in,
    in order, a reserved one reads only once decided, and its tally equals counting the decoded
    outcomes, in the same insertion order."""
    from collections import Counter

    from fxverify.result import CheckResult, Outcome, OutcomeLog

    log = OutcomeLog()
    log.append("FX-ORD-002:a#0|b#1", codes.ORD_002, Verdict.PROVED, "hb-reachability")
    i = log.reserve("FX-OWN-001:b|r")
    with pytest.raises(LookupError):
        log[i]
    log.append("FX-ALIAS-003:b#0", codes.ALIAS_003, Verdict.PROVED, "interval")
    log.decide(i, Outcome("ignored", codes.OWN_001, Verdict.REFUTED, "solver"))
    want = [Outcome("FX-ORD-002:a#0|b#1", codes.ORD_002, Verdict.PROVED, "hb-reachability"),
            Outcome("FX-OWN-001:b|r", codes.OWN_001, Verdict.REFUTED, "solver"),
            Outcome("FX-ALIAS-003:b#0", codes.ALIAS_003, Verdict.PROVED, "interval")]
    assert list(log) == want and log[-1] == want[-1] and log[1:] == want[1:] and len(log) == 3
    by_list = CheckResult("p.fx", None, None, outcomes=want, name="p").counts()  # type: ignore[arg-type]
    by_log = CheckResult("p.fx", None, None, outcomes=log, name="p").counts()  # type: ignore[arg-type]
    assert by_log == by_list and [list(c) for c in by_log.values()] == [list(c) for c in by_list.values()]
    assert list(by_log) == list(by_list) and by_log["ordering"] == Counter({"proved": 1, "by:hb-reachability": 1})


def test_a_packed_outcome_log_stores_the_record_its_decoded_outcomes_would() -> None:
    """``result_to_record`` packs an ``OutcomeLog`` without decoding it: the record must be the one
    built from the decoded outcomes, byte for byte, also when a reserved outcome is decided with a
    kind created after the kinds of later outcomes (the record lists kinds by first occurrence),
    and the unknown reasons read from the log's kinds are those of its outcomes."""
    import json

    from fxverify.result import CheckResult, Outcome, OutcomeLog

    log = OutcomeLog()
    i = log.reserve("FX-OWN-001:b|r")
    log.append("FX-ALIAS-003:b#0", codes.ALIAS_003, Verdict.PROVED, "interval")
    log.append("FX-ALIAS-003:c#0", codes.ALIAS_003, Verdict.PROVED, "interval")
    log.append("FX-ORD-002:a#0|b#1", codes.ORD_002, Verdict.UNKNOWN, "solver", "rlimit")
    with pytest.raises(LookupError):
        log.packed()
    log.decide(i, Outcome("ignored", codes.OWN_001, Verdict.UNKNOWN, "solver", "timeout"))
    packed = CheckResult("p.fx", None, None, outcomes=log, name="p")  # type: ignore[arg-type]
    listed = CheckResult("p.fx", None, None, outcomes=list(log), name="p")  # type: ignore[arg-type]
    assert json.dumps(result_to_record(packed), sort_keys=True) == json.dumps(result_to_record(listed), sort_keys=True)
    assert result_to_record(packed)["kinds"][0] == ["FX-OWN-001", "unknown", "solver", "timeout"]
    assert packed.unknown_reasons() == listed.unknown_reasons() == {"rlimit", "timeout"}
    assert result_to_record(CheckResult("e.fx", None, None, outcomes=OutcomeLog(), name="e"))["keys"] == ""  # type: ignore[arg-type]


_LAYERED_READ_BACK = """policy "layered-read-back"

fabric {{
  device gpu0: gpu hooks [launch, copy_done]
  device gpu1: gpu hooks [launch]
  link p = gpu0 -- gpu1 : pcie posted
}}
space hbm0 on gpu0 size 80 GiB
space hbm1 on gpu1 size 80 GiB init
region peer[l in 0..{n}] in hbm1 at 0x1000_0000 + l * 1 MiB size 1 MiB owner gpu0
region tmp in hbm0 at 0x1000_0000 size 1 MiB owner gpu0

flow layers {{
  for l in 0..{n} {{
    if l == 0 {{
      edge pull[l]: move peer[l] -> tmp by gpu0.copy_done
    }}
    if l > 0 {{
      edge pull[l]: move peer[l] -> tmp by gpu0.copy_done after use[l - 1]
    }}
    edge use[l]: read tmp by gpu0.launch after pull[l]
  }}
}}
"""


@pytest.mark.parametrize("layers", [2, 4, 8])
def test_pulled_buffers_need_no_flush_whoever_reads_them(tmp_path: Path, layers: int) -> None:
    """FX-ORD-003: a buffer in a GPU's own memory that every layer pulls in from the other GPU
    over a posted link and reads back: a pull's bytes cross the link as completions of its read
    requests and its own engine writes them (specs/obligations.md section 1, posted rule), so no
    posted write is in flight when it finishes and no read, by the GPU itself or by the other
    GPU, is asked for a flush. The same buffer pushed by the other GPU is (the corpus `posted-*`
    policies)."""
    path = tmp_path / "layers.fx"
    path.write_text(_LAYERED_READ_BACK.format(n=layers))
    r = check(str(path), CheckOptions(verify_hints=False))
    assert r.verdict is Verdict.PROVED
    assert not [o for o in r.outcomes if o.code == codes.ORD_003]
    path.write_text(_LAYERED_READ_BACK.format(n=layers).rstrip().rstrip("}") +
                    f"  edge peek: read tmp by gpu1.launch after use[{layers - 1}]\n}}\n")
    r = check(str(path), CheckOptions(verify_hints=False))
    assert {o.code for o in r.outcomes if o.verdict is not Verdict.PROVED} == {codes.OWN_001}  # `tmp` is not leased to gpu1
    assert not [o for o in r.outcomes if o.code == codes.ORD_003]


class _Undecided:
    """A backend that decides nothing: every query comes back unknown."""

    def check(self, query):
        return Result(Status.UNKNOWN, reason="budget spent")

    def check_many(self, queries):
        return [self.check(q) for q in queries]

    def close(self) -> None:
        pass


def test_an_unknown_race_freedom_names_the_access_alone() -> None:
    """FX-ORD-002 of one access against every earlier one (``RaceFree``), left unknown, names the
    access's edge only: its message and fingerprint stay the same when one more layer writes the
    buffer before it (a fingerprint over every earlier access would change)."""
    from fxverify.diagnostics.fingerprint import fingerprint
    from fxverify.pipeline import discharge
    from tests.ir_builders import A, fp, policy, read, write

    def unknown_of(layers: int):
        ws = [write(f"w{i}", fp(A, 0x0, 0x40), after=(f"w{i - 1}",) if i else ()) for i in range(layers)]
        pol = policy(*ws, read("x", fp(A, 0x0, 0x40), device="dpu0", after=(f"w{layers - 1}",)))
        r = discharge(pol, CheckOptions(prune=False, verify_hints=False), _Undecided())
        return next(d for d in r.diagnostics if d.code is codes.SMT_001 and d.obligation == "FX-ORD-002:x#0|earlier")

    two, three = unknown_of(2), unknown_of(3)
    assert tuple(two.edges) == ("x",) and "for `x`:" in two.message
    assert (two.message, fingerprint(two)) == (three.message, fingerprint(three))


def test_a_persist_into_memory_that_is_not_persistent_is_reported_once(tmp_path: Path) -> None:
    """A persist over a posted link into a volatile space: FX-XF-003 says it cannot be durable;
    FX-ORD-003 asks for no flush (none would make it durable), so the mistake is one finding."""
    text = (CKPT.replace(" persistent\n", "\n"))
    p = tmp_path / "volatile.fx"
    p.write_text(text)
    res = check(str(p))
    assert sorted({str(d.code) for d in res.diagnostics}) == ["FX-XF-003"], [str(d.code) for d in res.diagnostics]
    assert not any(o.key.startswith("FX-ORD-003:persist:") for o in res.outcomes)
    q = tmp_path / "pmem.fx"
    q.write_text(CKPT)
    assert {str(d.code) for d in check(str(q)).diagnostics} == {"FX-ORD-003"}


CKPT = """policy "ckpt"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cxl0: cxl_mem
  link up0 = gpu0 -- cxl0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space pmem0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x1000_0000 size 2 MiB owner gpu0 dtype bf16 init
region ckpt in pmem0 at 0x80_2000_0000 size 2 MiB owner gpu0 dtype bf16
flow save {
  edge spill: move kv -> ckpt by gpu0.copy_done transform persist
}
"""


def test_grouped_findings_tell_instances_from_other_links(tmp_path: Path) -> None:
    """Findings of one code on one span are shown once: the note counts the other instances of an
    edge family apart from the findings on the shown instance's own edges (its other posted
    links), which it names by key; nothing is called an instance that is not one."""
    fabric = ("  link up0 = gpu0 -- cxl0 : pcie posted\n  link up1 = gpu0 -- dpu0 : pcie posted\n"
              "  link up2 = dpu0 -- cxl0 : pcie posted\n  device dpu0: dpu hooks [rx, tx]\n")
    text = CKPT.replace("  link up0 = gpu0 -- cxl0 : pcie posted\n", fabric)
    p = tmp_path / "links.fx"
    p.write_text(text)
    (d,) = check(str(p)).diagnostics
    assert d.notes == ("2 more finding(s) of this code on the same edges: FX-ORD-003:persist:spill#1|up1, "
                       "FX-ORD-003:persist:spill#1|up2",), d.notes
    fam = CKPT.replace("region kv in hbm0 at 0x1000_0000 size 2 MiB", "region kv in hbm0 at 0x1000_0000 size 6 MiB").replace(
        "size 2 MiB owner gpu0 dtype bf16\n", "size 6 MiB owner gpu0 dtype bf16\n").replace(
        "  edge spill: move kv -> ckpt by gpu0.copy_done transform persist\n",
        "  for i in 0..3 {\n    edge spill[i]: move kv[i * 2 MiB, +2 MiB] -> ckpt[i * 2 MiB, +2 MiB] by gpu0.copy_done"
        " transform persist\n  }\n")
    q = tmp_path / "family.fx"
    q.write_text(fam)
    (d,) = check(str(q)).diagnostics
    assert d.notes == ("2 more instance(s) of this edge family fail the same way",), d.notes


def test_a_persist_finding_offers_to_pin_a_read_back_that_follows_the_write() -> None:
    """An unpinned read of the checkpoint that already follows the write becomes a read-back when
    pinned to the write's one route; the verified hint offers it after the flush."""
    r = check(str(ROOT / "corpus/ordering/fail/persist-read-back-other-route.fx"))
    (d,) = [d for d in r.diagnostics if d.obligation.startswith("FX-ORD-003:persist:")]
    assert d.trace is not None and d.trace.fix.startswith("add `flush up0` to `spill`, or pin `via up0` on `verify`"), \
        d.trace.fix


@pytest.mark.parametrize("path", ["corpus/incidents/fail/pd-prefill-frees-blocks-on-send-post.fx",
                                  "corpus/ordering/fail/notify-batch-in-flight.fx",
                                  "corpus/incidents/fail/pd-request-aborted-mid-transfer.fx"])
def test_only_the_first_refutation_of_a_group_is_drawn_and_the_check_shows_the_same(
        path: str, at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every witness is replayed, but only the first refutation of each group (the one a check
    shows, the rest counted in its note) is widened and drawn as a trace: what the check shows is
    the same as when every refutation is drawn, byte for byte in JSON."""
    import fxverify.pipeline as pipeline
    from fxverify.replay import refutation as module

    confirmed: list[str] = []
    real_confirm = Simulator.confirm

    def counting(self, code, *args, **kwargs):  # type: ignore[no-untyped-def]
        confirmed.append(str(code))
        return real_confirm(self, code, *args, **kwargs)

    drawn: list[str] = []
    real_draw = module.build_trace

    def drawing(policy, code, *args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(str(code))
        return real_draw(policy, code, *args, **kwargs)

    monkeypatch.setattr(Simulator, "confirm", counting)
    monkeypatch.setattr(module, "build_trace", drawing)
    grouped = check(path, CheckOptions(verify_hints=False))
    shown = [d for d in grouped.diagnostics if d.trace is not None]
    assert grouped.refutations and len(confirmed) >= len(grouped.refutations)  # every witness replayed
    assert len(drawn) == len(shown) < len(grouped.refutations)  # only the shown ones drawn
    every = module.refutation
    monkeypatch.setattr(pipeline, "refutation", lambda *a, traced=True, **k: every(*a, traced=True, **k))
    everything = check(path, CheckOptions(verify_hints=False))
    assert len(drawn) == len(shown) + len(everything.refutations)
    assert results_to_json([grouped]) == results_to_json([everything])


@pytest.mark.parametrize("path", FAILS, ids=str)
def test_minimising_only_the_shown_witness_shows_the_same_as_minimising_every_one(
        path: str, at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each obligation's query goes to the solver without its objectives; only the first
    refutation of each group, the one shown with its trace, is asked again with them. What the
    check shows (witnesses, blamed edges, notes, hints) is the same as when every query carries
    its objectives, as before, byte for byte in JSON."""
    import fxverify.pipeline as pipeline

    first = check(str(path))
    monkeypatch.setattr(pipeline, "_unminimised", lambda query: query)
    every = check(str(path))
    assert results_to_json([first]) == results_to_json([every])


@pytest.mark.parametrize("path", ["corpus/incidents/fail/pd-prefill-frees-blocks-on-send-post.fx",
                                  "corpus/ordering/fail/notify-batch-in-flight.fx"])
def test_only_the_shown_refutation_of_a_group_is_asked_for_a_minimal_witness(path: str, at_root) -> None:
    """The batch of queries carries no objective; one query with objectives follows per group
    shown, fewer than the refutations, for the obligation shown; ``solver_calls`` counts the
    obligations' queries only."""
    from fxverify.smt.backend import SolverOptions
    from fxverify.smt.factory import open_backend

    batched: list = []
    asked: list = []
    backend = open_backend(SolverOptions())
    real_many, real_one = backend.check_many, backend.check
    backend.check_many = lambda queries: batched.extend(queries) or real_many(queries)  # type: ignore[method-assign]
    # (the batch's own ``check_many`` calls ``check`` too: only queries with objectives are kept)
    backend.check = lambda query: (query.minimize and asked.append(query)) or real_one(query)  # type: ignore[method-assign]
    r = check(path, CheckOptions(verify_hints=False, parametric=False), backend=backend)  # no queries of its own
    shown = [d for d in r.diagnostics if d.trace is not None]
    assert batched and not any(q.minimize for q in batched)
    assert len(asked) == len(shown) < len(r.refutations)
    assert r.solver_calls == len(batched)
    assert [q.name for q in asked] == [d.obligation for d in shown]


@pytest.mark.parametrize("path", FAILS, ids=str)
def test_hint_rechecks_without_minimal_witnesses_verify_the_same_hints(path: str, at_root,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A hint's re-check asks the solver for no minimal witness (``pipeline.RECHECK_MINIMAL``):
    each refutation keeps the solver's first model, which the simulator replays all the same (a
    re-check with one that does not verifies no hint). The hints a check shows, and all else it
    shows, are those of re-checks with minimal witnesses, byte for byte in JSON."""
    import fxverify.pipeline as pipeline

    rechecks: list[tuple[bool, list]] = []
    real = pipeline.discharge_obligations

    def spying(policy, obligations, options, *args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(policy, obligations, options, *args, **kwargs)
        if not options.verify_hints:  # a re-check (a refutation it did not need to replay holds its place)
            rechecks.append((options.minimal, [d.code for d in out.result.diagnostics if d is not pipeline._HELD]))
        return out

    monkeypatch.setattr(pipeline, "discharge_obligations", spying)
    plain = check(str(path))
    assert all(not minimal for minimal, _ in rechecks)
    assert not [d for d in plain.diagnostics if d.code is codes.INT_001]
    assert not [c for _, found in rechecks for c in found if c is codes.INT_001]
    rechecks.clear()
    monkeypatch.setattr(pipeline, "RECHECK_MINIMAL", True)
    reference = check(str(path))
    assert all(minimal for minimal, _ in rechecks)
    assert results_to_json([plain]) == results_to_json([reference])


def test_hint_rechecks_run_on_the_corpus(at_root) -> None:
    """The comparison above is not empty: hints are re-checked, without minimal witnesses, on a
    fail policy whose finding has a verified fix."""
    import fxverify.pipeline as pipeline

    seen: list[bool] = []
    real = pipeline.discharge_obligations

    def spying(policy, obligations, options, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not options.verify_hints:
            seen.append(options.minimal)
        return real(policy, obligations, options, *args, **kwargs)

    pipeline.discharge_obligations = spying  # type: ignore[assignment]
    try:
        r = check("corpus/ownership/fail/free-before-dpu-send.fx")
    finally:
        pipeline.discharge_obligations = real  # type: ignore[assignment]
    assert seen and not any(seen)
    assert any("verified" in (d.help or "") for d in r.diagnostics), [d.help for d in r.diagnostics]


def _judged(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record each answer of ``hints.Verifier.needs_blame`` (whether a re-check replays)."""
    asked: list[bool] = []
    real = hints.Verifier.needs_blame

    def spying(self, f, unproved):  # type: ignore[no-untyped-def]
        asked.append(real(self, f, unproved))
        return asked[-1]

    monkeypatch.setattr(hints.Verifier, "needs_blame", spying)
    return asked


@pytest.mark.parametrize("path", FAILS, ids=str)
def test_hint_rechecks_replay_only_what_a_hint_is_judged_by_and_verify_the_same_hints(
        path: str, at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hint's re-check whose verdicts alone reject the hint (its finding still refuted, or an
    obligation proved before not proved) replays none of its refutations
    (``hints.Verifier.needs_blame``). The hints a check shows, and all else it shows, are those of
    re-checks that replay every refutation, byte for byte in JSON; also when the bound on checks
    per policy is reached (an edit set checked again to be replayed is not a new check)."""
    judged = hints.Verifier.needs_blame
    for limit in (hints.recheck_limit, lambda _obligations: 2):
        monkeypatch.setattr(hints, "recheck_limit", limit)
        monkeypatch.setattr(hints.Verifier, "needs_blame", judged)
        lazy = check(str(path))
        monkeypatch.setattr(hints.Verifier, "needs_blame", lambda self, f, unproved: True)
        every = check(str(path))
        assert results_to_json([lazy]) == results_to_json([every]), limit


@pytest.mark.parametrize("path", FAILS, ids=str)
def test_hint_rechecks_of_one_family_verify_the_same_hints_as_whole_ones(path: str, at_root,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A hint's re-check decides again only its finding's family's unproved obligations
    (``pipeline.undecided_outside``, ``hints.Verifier._decided_family``): the hints a check shows,
    and all else it shows, are those of re-checks that decide every obligation, byte for byte in
    JSON."""
    one = check(str(path))
    monkeypatch.setattr(hints.Verifier, "_decided_family", staticmethod(lambda f: None))
    whole = check(str(path))
    assert results_to_json([one]) == results_to_json([whole])


def _guessing_classes(cls: type = Obligation) -> list[type]:
    """Every obligation class that defines its own ``guess``."""
    return [c for sub in cls.__subclasses__() for c in ([sub] if "guess" in sub.__dict__ else []) + _guessing_classes(sub)]


@pytest.mark.parametrize("path", FAILS, ids=str)
def test_checked_guesses_change_no_verdict_trace_or_hint(path: str, at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refutations by a checked guess (``Obligation.guess``) against refutations by the solver:
    the same verdicts, counts, diagnostics, traces and hints in JSON; only the methods and the
    solver-call count differ."""
    import json

    def shown(r) -> list:  # type: ignore[no-untyped-def]
        out = json.loads(results_to_json([r]))["results"]
        for x in out:
            x.pop("solver_calls", None)
            for fam in x.get("obligations", {}).values():
                for k in [k for k in fam if k.startswith("by:")]:
                    del fam[k]
        return out
    guessed = check(str(path))
    classes = _guessing_classes()
    assert classes, "no obligation makes guesses"
    for c in classes:
        monkeypatch.setattr(c, "guess", lambda self: None)
    assert shown(check(str(path))) == shown(guessed)


def test_hint_rechecks_leave_refutations_unreplayed_on_the_corpus(at_root, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above is not empty: on a fail policy with a verified hint, some re-checks
    are judged on their verdicts alone, and some are replayed."""
    asked = _judged(monkeypatch)
    r = check("corpus/ownership/fail/free-before-dpu-send.fx")
    assert any("verified" in (d.help or "") for d in r.diagnostics)
    assert True in asked and False in asked


def test_a_check_without_minimal_witnesses_asks_for_none_and_gives_the_same_verdicts(at_root) -> None:
    """``CheckOptions(minimal=False)`` sends no minimisation objective with an obligation's query
    (this policy has no parametric proof, whose queries keep theirs), and every verdict and every
    replayed refutation's code is that of the minimised check."""
    from fxverify.smt.backend import SolverOptions
    from fxverify.smt.factory import open_backend

    sent: list = []
    backend = open_backend(SolverOptions())
    real_many = backend.check_many

    def recording(queries):  # type: ignore[no-untyped-def]
        sent.extend(queries)
        return real_many(queries)

    backend.check_many = recording  # type: ignore[method-assign]
    path = "corpus/incidents/fail/pd-prefill-frees-blocks-on-send-post.fx"
    plain = check(path, CheckOptions(verify_hints=False, minimal=False), backend=backend)
    minimal = check(path, CheckOptions(verify_hints=False))
    assert sent and not any(q.minimize for q in sent)
    assert [(o.key, o.verdict) for o in plain.outcomes] == [(o.key, o.verdict) for o in minimal.outcomes]
    assert [d.code for d in plain.diagnostics] == [d.code for d in minimal.diagnostics]
    assert codes.INT_001 not in {d.code for d in plain.diagnostics}
