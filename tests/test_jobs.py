"""``check --jobs N`` and ``check --executor dask://``: one policy split into shards over worker
processes, many policies over the workers of a Dask cluster, and the report the same bytes (text,
JSON, SARIF) as one process gives; the snapshot of files a worker resolves from; the executor's
diagnostics (FX-USE-005, FX-USE-009) and what happens when a worker is lost.

Splitting is forced on small policies here (``split_from=1``) so the corpus exercises it; real
runs split only policies of ``shards.SPLIT_MIN_EDGES`` edges or more."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, Family
from fxverify.gate import GateOptions, GateRequest, Report, run_gate
from fxverify.gate import executors, forked
from fxverify.gate.executors import LocalExecutor, open_executor
from fxverify.gate.run import run_checks
from fxverify.gate.shards import ShardTask, merge, plan, run_shard
from fxverify.graph import PolicyGraph
from fxverify.obligations.base import Context
from fxverify.obligations.families import obligations, stage_obligations, stages
from fxverify.gate.tasks import Big, NeedFiles, PolicyOutcome, PolicyTask, run_policy, take_snapshot
from fxverify.pipeline import CheckOptions
from fxverify.render.json import report_to_json
from fxverify.render.sarif import report_to_sarif
from fxverify.render.text import render_report, to_plain
from fxverify.resolve import Limits, load_policy
from fxverify.resolve.snapshot import FileSnapshot
from fxverify.result import CheckResult
from fxverify.source import SourceMap

from tests.conftest import ROOT

CORPUS = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("corpus/*/*/*.fx"))
#: The first and the last policy of every corpus folder (family and kind; the real policies
#: aside): proofs, refutations with traces and hints, unknowns and input errors, in every family.
#: (Every corpus policy gave the same bytes when this was written; running them all twice more
#: would cost the CI run about as much as the corpus test itself.)
_FOLDERS: dict[str, list[str]] = {}
for _p in CORPUS:
    if "/real/" not in _p:
        _FOLDERS.setdefault(_p.rsplit("/", 1)[0], []).append(_p)
SAMPLE = sorted({ps[k] for ps in _FOLDERS.values() for k in (0, -1)})
RACE = "corpus/ordering/fail/kv-offload-unordered.fx"
#: A policy with cyclic happens-before: the ordering stages after FX-ORD-004/001 generate nothing.
CYCLE = "corpus/ordering/fail/hb-cycle.fx"


def renders(results: list[CheckResult]) -> tuple[str, str, str]:
    """The text, JSON and SARIF reports of ``results``, as the gate writes them."""
    report = Report(results=results, gate=GateOptions())
    report.decide()
    return to_plain(render_report(report)), report_to_json(report), report_to_sarif(report)


def serial(files: list[str], options: CheckOptions = CheckOptions()) -> tuple[str, str, str]:
    return renders(run_checks(files, options, None, jobs=1)[0])


@pytest.fixture(scope="module")
def pool():
    """Two local worker processes shared by the module's tests (each test passing its own
    executor, the gate neither starts nor stops them)."""
    ex = LocalExecutor(2)
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def mid_policy(tmp_path_factory) -> str:
    """A mid-size generated prefill policy (4 layers, 1,024 tokens: 622 edges, 8,000 obligations)."""
    from fxverify.gen.cxl_list import load_cxl
    from fxverify.gen.hf_config import load_model
    from fxverify.gen.prefill import PrefillOptions, generate_prefill

    model, _ = load_model(str(ROOT / "corpus/inputs/models/meta-llama--Meta-Llama-3.1-8B.json"), SourceMap())
    cxl, _ = load_cxl([str(ROOT / "corpus/inputs/cxl/cxl_test-list-BDMu-root-mem3.json")], SourceMap())
    out, diags = generate_prefill(model, None, cxl, PrefillOptions(tokens=1024, layers=4, disaggregate=True, name="mid"))
    assert out is not None, diags
    path = tmp_path_factory.mktemp("mid") / "mid.fx"
    path.write_text(out.text)
    return str(path)


# ---- the plan and the default -------------------------------------------------------------------


def test_plan_covers_every_stage_of_every_family_once() -> None:
    shards = plan()
    assert sorted((OBLIGATION_FAMILIES.index(s.family), s.stage) for s in shards) == [
        (i, j) for i, f in enumerate(OBLIGATION_FAMILIES) for j in range(len(stages(f)))]
    assert all(s.stages == len(stages(s.family)) for s in shards)
    assert len(stages(Family.ORDERING)) > 1


@pytest.mark.parametrize("path", sorted(set(SAMPLE) | {CYCLE}))
def test_the_stages_of_a_family_are_its_obligations(path: str) -> None:
    """A shard generates one stage of a family: put together, the stages give the family's
    obligations, keys and order (repeated keys dropped the same way: no code in two stages)."""
    policy, _diags = load_policy(str(ROOT / path), SourceMap())
    if policy is None:
        pytest.skip("an input error: no obligations")
    ctx = Context(policy, PolicyGraph(policy))
    for family in OBLIGATION_FAMILIES:
        whole = [ob.key for ob in obligations(ctx, (family,))]
        staged = [ob.key for j in range(len(stages(family))) for ob in stage_obligations(ctx, family, j)]
        assert staged == whole, family


def test_jobs_defaults_to_the_machines_cores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without `--jobs` (and without FXVERIFY_JOBS or `jobs` in the configuration file) the gate
    runs as many workers as this process may use CPUs (issue "Scale", item 4); the environment,
    the file and the flag each set another number."""
    seen: list[GateRequest] = []

    def fake_gate(req: GateRequest) -> Report:
        seen.append(req)
        return Report()

    monkeypatch.delenv("FXVERIFY_JOBS", raising=False)
    monkeypatch.setattr("fxverify.gate.run_gate", fake_gate)
    monkeypatch.setattr(executors.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3, 4}, raising=False)
    monkeypatch.chdir(tmp_path)
    policy = str(ROOT / RACE)
    CliRunner().invoke(app, ["check", policy])
    (tmp_path / "pyproject.toml").write_text("[tool.fxverify]\njobs = 4\n")
    CliRunner().invoke(app, ["check", policy])
    monkeypatch.setenv("FXVERIFY_JOBS", "3")
    CliRunner().invoke(app, ["check", policy])
    CliRunner().invoke(app, ["check", policy, "--jobs", "2"])
    assert [r.jobs for r in seen] == [5, 4, 3, 2]
    assert executors.usable_cores() == 5


# ---- shards on local worker processes -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", SAMPLE)
def test_shards_give_the_bytes_of_one_process(path: str, pool: LocalExecutor, at_root) -> None:
    """Every corpus policy split over two workers (shards of every family) renders as checked in one process."""
    split = run_checks([path], CheckOptions(), None, executor=pool, split_from=1)[0]
    assert renders(split) == serial([path])


def test_shards_of_a_refuted_policy_verify_its_hints_once(pool: LocalExecutor, at_root) -> None:
    """A refuted policy split into shards: the hint is verified in the gate (it needs every
    outcome), the trace and the witness are the shard's, and the bytes are one process's."""
    split = run_checks([RACE], CheckOptions(), None, executor=pool, split_from=1)[0]
    assert renders(split) == serial([RACE])
    (d,) = [d for d in split[0].diagnostics if d.code == "FX-ORD-002"]
    assert "(verified:" in (d.help or "") and d.trace is not None


def test_shards_with_certificates(pool: LocalExecutor, at_root) -> None:
    """`--certify` in shards: every fast proof's certificate is checked in its shard, and the
    counts add up to one process's."""
    files = ["corpus/ordering/ok/kv-offload-ordered.fx", "corpus/ownership/fail/double-handoff.fx"]
    options = CheckOptions(certify="python")
    split = run_checks(files, options, None, executor=pool, split_from=1)[0]
    one = run_checks(files, options, None, jobs=1)[0]
    assert renders(split) == renders(one)
    assert [r.certified for r in split] == [r.certified for r in one] and all(r.certified for r in split)


def test_shards_leave_out_ignored_rules(pool: LocalExecutor, at_root) -> None:
    """`--ignore` in shards: the ignored codes are left out of every shard's stream before it is
    split, so the merge is one process's (and no suppression of them is reported unused)."""
    files = [RACE, "corpus/ownership/fail/double-handoff.fx"]
    options = CheckOptions(skip_codes=frozenset({"FX-ORD-002", "FX-OWN-003"}))
    split = run_checks(files, options, None, executor=pool, split_from=1)[0]
    assert renders(split) == serial(files, options) and all(r.verdict.value == "proved" for r in split)


class InProcess:
    """An executor that runs each task here, at once, as a worker of this installation would
    (so a test can change a module constant the shards read)."""

    name, slots = "local", 2

    def submit(self, fn, arg) -> Future:
        fut: Future = Future()
        fut.set_result(fn(arg))
        return fut

    def check_identity(self, got: str) -> bool:
        return True

    def close(self) -> None:
        pass


def _all_shards(path: str, options: CheckOptions) -> tuple[list, FileSnapshot]:
    """Every shard of ``plan`` of ``path`` run here, the first carrying the facts (as the gate
    sends them); and the snapshot they ran on."""
    snap = take_snapshot(path, options.limits)
    return [run_shard(ShardTask(snap, options, s, facts=n == 0)) for n, s in enumerate(plan())], snap


def _spoil_a_key(outs: list) -> list:
    """The refuted shard's record with the key of its refuted obligation renamed: its diagnostic
    then names an obligation the shard did not generate."""
    o = next(o for o in outs if o.findings)
    key = o.findings[0][0]
    spoiled = dataclasses.replace(o, record=dict(o.record, keys=o.record["keys"].replace(key, key + "#other")))
    return [spoiled if x is o else x for x in outs]


@pytest.mark.parametrize("spoil, expect", [
    (lambda outs: outs[1:], "shard `ordering` stage 2 of 5 is missing"),  # the one with the facts
    (lambda outs: [o for o in outs if o.shard.family is not Family.HOOKS], "shard `hooks` is missing"),
    (lambda outs: outs + [outs[-1]], "came 2 times"),
    (lambda outs: [dataclasses.replace(o, head=False) for o in outs], "no shard carries the policy's facts"),
    (lambda outs: [dataclasses.replace(o, record=None) if o.shard.family is Family.MAPS else o for o in outs],
     "shard `maps` loaded the policy but sent no outcomes"),
    (lambda outs: [dataclasses.replace(o, loaded=False, record=None) if o.shard.family is Family.ALIAS else o
                   for o in outs], "shard `alias` did not load the policy"),
    (_spoil_a_key, "which is not one of its obligations"),
], ids=["head-missing", "family-missing", "twice", "no-head", "no-record", "not-loaded", "foreign-key"])
def test_shards_that_do_not_fit_together_are_fx_int_001(spoil, expect: str, at_root) -> None:
    """An internal invariant of the split (every shard of the plan once, one with the facts, each
    answering only for its own obligations) that breaks is the policy's FX-INT-001 naming the
    shard at fault, never a StopIteration or KeyError, nor a result with obligations missing."""
    options = CheckOptions()
    outs, snap = _all_shards(RACE, options)
    whole = merge(RACE, outs, options, snap)
    assert "FX-INT-001" not in {str(d.code) for d in whole.diagnostics} and whole.outcomes
    r = merge(RACE, spoil(list(outs)), options, snap)
    (d,) = r.diagnostics
    assert str(d.code) == "FX-INT-001" and expect in d.message and "shards do not fit together" in d.message, d.message
    assert r.outcomes == [] and d.help and "report" in d.help


GROUPED = ["corpus/incidents/fail/pd-prefill-frees-blocks-on-send-post.fx", "corpus/ordering/fail/notify-batch-in-flight.fx"]


@pytest.mark.parametrize("past_bound", [False, True], ids=["verified-in-gate", "marked-in-shards"])
def test_shards_show_the_hint_of_the_first_finding_of_each_group(past_bound: bool, monkeypatch: pytest.MonkeyPatch,
                                                                  at_root) -> None:
    """Policies whose refutations group (several instances of one edge family, spread over the
    shards of a policy): only the first of each group gets its hint checked, as in one process,
    whether the gate verifies them or the shards mark them (past ``hints.MAX_EDGES``)."""
    if past_bound:
        monkeypatch.setattr("fxverify.hints.MAX_EDGES", 1)
    split = run_checks(GROUPED, CheckOptions(), None, executor=InProcess(), split_from=1)[0]
    one = run_checks(GROUPED, CheckOptions(), None, jobs=1)[0]
    assert renders(split) == renders(one)
    assert [list(r.hints) for r in split] == [list(r.hints) for r in one]
    assert all(0 < len(r.hints) < len(r.refutations) for r in one)
    assert all(c.status == "skipped" for r in split for c in r.hints.values()) == past_bound


@pytest.mark.slow
def test_jobs_two_on_a_mid_size_policy(mid_policy: str, tmp_path: Path) -> None:
    """A 622-edge generated policy, split over two workers through the gate (as `--jobs 2` does
    above the threshold): the same text, JSON and SARIF."""
    one = run_gate(GateRequest(paths=(mid_policy,), jobs=1))
    two = run_gate(GateRequest(paths=(mid_policy,), jobs=2, split_from=1))
    assert renders(two.results) == renders(one.results) and two.exit_code == one.exit_code == 0


def test_jobs_two_on_a_small_folder_checks_in_this_process_first(at_root) -> None:
    """A few small policies with `--jobs 2`: the gate measures and checks them itself while the
    workers start; same report as `--jobs 1`."""
    files = ["corpus/ordering/ok/kv-offload-ordered.fx", RACE, "corpus/transforms/ok/compress-worst-case.fx"]
    two = run_gate(GateRequest(paths=tuple(files), jobs=2))
    assert renders(two.results) == serial(files)


# ---- shards on workers forked after the policy is resolved --------------------------------------

#: Run in a fresh process (this one may run threads left by other tests, and then the gate does
#: not fork): check each policy of argv alone with `--jobs N` and a forced split, the gate's
#: ``fork_split`` watched, optionally with forked workers that die once they have taken a shard,
#: and a result cache folder ("-": none); print, per policy, its reports, whether it was checked
#: by forked workers, the families whose proofs came from the cache, whether the cache held
#: proofs of one, and the workers lost. The gate is told it has N cores and room for every
#: worker, so that it forks N - 1 of them on any machine (``forked.workers_for``).
_FORKED = """
import json, os, sys
from fxverify.gate import cache, forked, run
from fxverify.gate.run import run_checks
from fxverify.pipeline import CheckOptions
from tests.test_jobs import renders
jobs, die, store, paths = int(sys.argv[1]), sys.argv[2] == "die", sys.argv[3], sys.argv[4:]
forked.usable_cores = lambda: jobs
forked.room_for = lambda workers, meminfo="": workers
if die:
    forked._worker = lambda tasks, queue, *rest: (os.read(queue, 2), os._exit(9))  # takes a shard, dies
seen, held = [], []
real_split, real_held = run.fork_split, cache.FamilyCache.held
def spy(*args, **kwargs):
    r = real_split(*args, **kwargs)
    seen.append(r is not None)
    return r
def spy_held(self, family, digest):
    h = real_held(self, family, digest)
    held.append(h)
    return h
run.fork_split, cache.FamilyCache.held = spy, spy_held
out = {}
for p in paths:
    # each policy in a fresh child of this process, which has made no solver query (a solver's
    # timer threads would keep the gate from forking: forked.can_fork)
    r_fd, w_fd = os.pipe()
    if os.fork() == 0:
        os.close(r_fd)
        (r,), stats = run_checks([p], CheckOptions(), None if store == "-" else store, jobs=jobs, split_from=1)
        os.write(w_fd, json.dumps([renders([r]), seen, list(r.reused), any(held), stats.workers_lost]).encode())
        os._exit(0)
    os.close(w_fd)
    with os.fdopen(r_fd, "rb") as fh:
        out[p] = json.loads(fh.read())
    os.wait()
print(json.dumps(out))
"""


def forked_checks(paths: list[str], jobs: int = 2, die: bool = False,
                  cache: Path | None = None) -> dict[str, tuple[tuple[str, str, str], list[bool], list[str], bool, int]]:
    """Each of ``paths`` checked alone with ``jobs`` (split forced) in a fresh process, with the
    result cache in ``cache`` (``None``: none): its reports, the gate's forked checks of it
    (``[True]``: by forked workers), the families whose proofs came from the cache, whether
    the gate found proofs of one of its families stored, and the workers lost
    (``CacheStats.workers_lost``)."""
    r = subprocess.run([sys.executable, "-c", _FORKED, str(jobs), "die" if die else "live", str(cache or "-"), *paths],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return {p: (tuple(x), seen, reused, held, lost) for p, (x, seen, reused, held, lost) in json.loads(r.stdout).items()}


@pytest.fixture(scope="module")
def forked_sample() -> dict[str, tuple[tuple[str, str, str], list[bool], list[str], bool, int]]:
    return forked_checks(sorted(set(SAMPLE) | {CYCLE}))


@pytest.mark.parametrize("path", sorted(set(SAMPLE) | {CYCLE}))
def test_forked_shards_give_the_bytes_of_one_process(path: str, forked_sample, at_root) -> None:
    """A lone policy with `--jobs 2` (split forced): the gate resolves it, forks a worker and both
    take shards; the merge renders as one process does. A policy that loads is checked that way
    (the gate's ``fork_split`` answered), one refused as input in the gate's process."""
    reports, seen, _reused, _held, lost = forked_sample[path]
    assert reports == serial([path]) and lost == 0
    loaded = '"verdict": "error"' not in reports[1]
    assert seen == [True] if loaded else seen in ([], [False])


def test_a_forked_worker_that_dies_loses_no_shard(at_root) -> None:
    """Forked workers that die before they answer (killed, out of memory), each with a shard
    taken: the gate runs every shard it did not receive, and the report is one process's;
    ``--stats`` counts the two workers lost."""
    got = forked_checks([RACE], jobs=3, die=True)[RACE]
    assert got == (serial([RACE]), [True], [], False, 2)


def test_forked_shards_store_proofs_a_re_check_takes(tmp_path: Path, at_root) -> None:
    """With the result cache, a split stores each family whose shards proved it, as one process
    does; after a one-edge edit of a hook the re-check forks nothing and takes every other
    family from the cache. Both reports are one process's, and so are the families reused."""
    text = (ROOT / "corpus/ordering/ok/kv-offload-ordered.fx").read_text()
    edit = "edge offload: move kv_blk -> kv_host by gpu0.copy_done"
    assert edit in text
    pol = tmp_path / "p.fx"
    runs = []
    for jobs, cache in ((2, tmp_path / "forked"), (1, tmp_path / "one")):
        pol.write_text(text)
        if jobs == 1:
            cold = run_checks([str(pol)], CheckOptions(), str(cache), jobs=1)[0]
        else:
            (cold_reports, seen, reused, held, _lost), = forked_checks([str(pol)], jobs, cache=cache).values()
            assert seen == [True] and not reused and not held
            assert any(p.parent.parent.name == "families" for p in cache.rglob("*.json.gz"))
        pol.write_text(text.replace(edit, edit.replace("gpu0.copy_done", "gpu0.launch")))
        if jobs == 1:
            warm = run_checks([str(pol)], CheckOptions(), str(cache), jobs=1)[0]
            runs.append((renders(cold), renders(warm), list(warm[0].reused)))
        else:
            (warm_reports, seen, reused, held, _lost), = forked_checks([str(pol)], jobs, cache=cache).values()
            assert seen == [False] and held  # declined because the cache holds families
            runs.append((cold_reports, warm_reports, reused))
    assert runs[0] == runs[1] and "hooks" not in runs[0][2] and "ordering" in runs[0][2]


@pytest.mark.skipif(not Path(f"/proc/self/task/{os.getpid()}/children").exists(),
                    reason="reads the process tree from /proc/PID/task/TID/children (Linux, CONFIG_PROC_CHILDREN)")
@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
@pytest.mark.skipif(executors.usable_cores() < 2, reason="one CPU: a forked split forks no worker (forked.workers_for)")
def test_no_forked_worker_outlives_its_gate(how: signal.Signals) -> None:
    """A gate stopped while its forked workers run (Ctrl-C, or killed outright as a CI runner
    cancels a job): within seconds no worker is left. Ctrl-C exits 130 (a Ctrl-C in a Z3 query
    is raised again by the backend: tests/test_smt.py), or 0: once in CI the check ran to its
    end after the signal (where it landed is not known; this test is about the workers)."""
    gate = subprocess.Popen([sys.executable, "-m", "fxverify", "check", "corpus/real/llama-3.1-8b-prefill.fx",
                             "--no-cache", "--quiet", "--jobs", "2"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not workers and gate.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = _children(gate.pid)
        assert workers, "the gate forked no worker"
        time.sleep(0.5)
        gate.send_signal(how)
        _out, err = gate.communicate(timeout=60)
        assert gate.returncode in ((130, 0) if how is signal.SIGINT else (-signal.SIGKILL,)), err
        if gate.returncode == 130:
            assert err.endswith("interrupted\n"), err
        assert "Traceback" not in err
        deadline = time.monotonic() + 30
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)]
    finally:
        for pid in [gate.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        gate.wait()


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                for c in (t / "children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("available_kb, fits", [(64, 0), (1 << 40, 3), (None, 3)], ids=["tight", "ample", "unknown"])
def test_workers_are_forked_only_where_they_fit_in_memory(available_kb: int | None, fits: int, tmp_path: Path) -> None:
    """Each forked worker is counted as large as the gate: of three wanted, as many are forked
    as fit in the memory available (none: the gate checks in its own process); a machine that
    does not say gets all three."""
    meminfo = tmp_path / "meminfo"
    if available_kb is not None:
        meminfo.write_text(f"MemTotal:       {2 * available_kb} kB\nMemAvailable:   {available_kb} kB\n")
    assert forked.room_for(3, str(meminfo)) == fits


@pytest.mark.parametrize("jobs, cores, forks", [(8, 2, 1), (2, 2, 1), (3, 8, 2), (4, 1, 0)])
def test_no_more_processes_than_cores(jobs: int, cores: int, forks: int, monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    """``--jobs`` above this process's cores forks no more workers than the cores take, the gate
    being one of them (one core: none, the gate checks alone)."""
    monkeypatch.setattr(forked, "usable_cores", lambda: cores)
    assert forked.workers_for(jobs, str(tmp_path / "no-meminfo")) == forks


def test_no_fork_beside_another_thread() -> None:
    """A thread holding a lock at a fork would leave it held in the child: with any other thread
    running, ``can_fork`` says no (the gate then spawns its workers). That it says yes in a
    process with one thread, the forked tests above show (``fork_split`` forked there)."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not forked.can_fork()
    finally:
        stop.set()
        t.join()


def test_the_progress_bar_pauses_its_thread_for_a_fork() -> None:
    """The progress bar's refresh thread stops inside ``paused`` (the gate forks there), and
    runs again after it."""
    from rich.console import Console

    from fxverify.render.progress import ProgressBar

    with ProgressBar(False, console=Console(file=io.StringIO(), force_terminal=True)) as bar:
        bar.start(1)
        first = bar.bar.live._refresh_thread
        assert first is not None and first.is_alive()
        with bar.paused():
            assert not first.is_alive() and first not in threading.enumerate()
        again = bar.bar.live._refresh_thread
        assert again is not None and again.is_alive()
        bar.done("x")


# ---- workers lost or not the same ---------------------------------------------------------------


class Broken:
    """An executor whose workers die on every task (or answer as another fxverify would). Like a
    local pool broken by a dead worker, it fails every task with one error."""

    name, slots = "broken", 2

    def __init__(self, same: bool = False) -> None:
        self.same = same
        self.error = RuntimeError("worker lost")

    def submit(self, fn, arg) -> Future:
        fut: Future = Future()
        if self.same:
            fut.set_result(fn(arg))
        else:
            fut.set_exception(self.error)
        return fut

    def check_identity(self, got: str) -> bool:
        return False

    def close(self) -> None:
        pass


@pytest.mark.parametrize("how", ["lost", "other-fxverify"])
def test_lost_or_foreign_workers_lose_no_result(how: str, at_root) -> None:
    """Policies whose worker was lost, or answered as another fxverify, are checked in this
    process; the one error of a broken pool counts one worker lost (``CacheStats.workers_lost``),
    however many policies it held, and a foreign worker none."""
    files = [RACE, "corpus/ordering/ok/kv-offload-ordered.fx"]
    results, stats = run_checks(files, CheckOptions(), None, executor=Broken(same=how != "lost"), split_from=1)
    assert renders(results) == serial(files)
    assert stats.workers_lost == (1 if how == "lost" else 0)


# ---- the snapshot a worker resolves from ----------------------------------------------------------


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "lib").mkdir()
    (repo / "lib" / "fabric.fx").write_text("fabric {\n  device gpu0: gpu hooks [launch, copy_done]\n}\n")
    return repo


@pytest.mark.parametrize("include,code", [("lib/fabric.fx", None), ("lib/missing.fx", "FX-NAM-003"),
                                          ("../outside.fx", "FX-NAM-004"), ("lib", "FX-NAM-003")])
def test_a_snapshot_resolves_as_the_disk_does(tmp_path: Path, include: str, code: str | None) -> None:
    """Resolving from the gate's snapshot gives the IR and the diagnostics (missing include, one
    outside the repository, a folder) that resolving from the disk gives, byte for byte."""
    repo = _repo(tmp_path)
    (tmp_path / "outside.fx").write_text("fabric {\n  device cpu0: cpu\n}\n")
    pol = repo / "p.fx"
    pol.write_text(f'policy "p"\ninclude "{include}"\nspace hbm0 on gpu0 size 1 GiB\n')
    disk = load_policy(str(pol), SourceMap())
    snap = take_snapshot(str(pol), Limits())
    assert set(snap.files) >= {str(pol)}
    mine = load_policy(str(pol), SourceMap(), files=snap)
    assert [(d.code, d.message) for d in mine[1]] == [(d.code, d.message) for d in disk[1]]
    assert mine[0] == disk[0]
    assert (code is None) == (mine[0] is not None) and (code is None or code in {d.code for d in mine[1]})


def test_a_worker_asks_for_files_the_snapshot_lacks(tmp_path: Path) -> None:
    """An include the gate did not guess: the worker names it (`NeedFiles`), the gate adds it and
    the next answer is the check; a big policy is answered with `Big` before it is unrolled."""
    repo = _repo(tmp_path)
    pol = repo / "p.fx"
    pol.write_text('policy "p"\ninclude "lib/fabric.fx"\nspace hbm0 on gpu0 size 1 GiB\n')
    snap = FileSnapshot.take(str(pol), Limits().max_file_bytes)  # the root only, no guesses
    first = run_policy(PolicyTask(snap, CheckOptions()))
    assert isinstance(first, NeedFiles) and first.path == str(repo / "lib" / "fabric.fx")
    snap.add(first.path)
    second = run_policy(PolicyTask(snap, CheckOptions()))
    assert isinstance(second, PolicyOutcome) and second.result().verdict is not None
    big = run_policy(PolicyTask(take_snapshot(str(ROOT / RACE), Limits()), CheckOptions(), split_from=1))
    assert isinstance(big, Big) and big.edges >= 2


# ---- Dask ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """A light ``distributed.LocalCluster``: two single-threaded workers in this process, over TCP
    (the gate connects to it as to any scheduler: `--executor dask://HOST:PORT`)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                  dashboard_address=None) as c:
        yield c.scheduler_address.replace("tcp://", "dask://")


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_dask_folder_gives_the_bytes_of_one_process(cluster: str, at_root) -> None:
    """Corpus folders checked on the cluster, one policy per task: the same text, JSON and SARIF
    as `--jobs 1`; and through the command line, the same JSON."""
    paths = ("corpus/ownership", "corpus/solver")
    one = run_gate(GateRequest(paths=paths, jobs=1))
    many = run_gate(GateRequest(paths=paths, executor=cluster))
    assert many.problems == [] and renders(many.results) == renders(one.results) and many.exit_code == one.exit_code == 1
    args = ["check", "corpus/solver", "--no-cache", "--format", "json"]
    assert _cli(*args, "--executor", cluster) == _cli(*args, "--jobs", "1")


def test_dask_one_policy_in_obligation_batches(cluster: str, mid_policy: str, at_root) -> None:
    """One policy split into shards that the cluster runs (its workers resolve it from the
    snapshot the gate sends): the same bytes as one process, for a refuted and a bigger policy."""
    for paths in ((RACE,), (mid_policy,)):
        one = run_gate(GateRequest(paths=paths, jobs=1))
        many = run_gate(GateRequest(paths=paths, executor=cluster, split_from=1))
        assert many.problems == [] and renders(many.results) == renders(one.results)


def test_dask_without_distributed_is_fx_use_007(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    code, out, err = _cli("check", str(ROOT / RACE), "--executor", "dask://localhost:8786")
    assert code == 2 and out == "" and "[FX-USE-009]" in err and "pip install distributed" in err
    assert "Traceback" not in err


def test_an_unreachable_scheduler_is_fx_use_007(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 1)
    code, out, err = _cli("check", str(ROOT / RACE), "--executor", "dask://127.0.0.1:9")
    assert code == 2 and out == "" and "[FX-USE-009]" in err and "cannot reach the Dask scheduler" in err
    assert "dask scheduler" in err and "Traceback" not in err


#: How each fake peer answers a connection: not at all (held open), with an HTTP error (whose
#: first bytes a Dask comm reads as a frame length), with bytes that are no frame at all, or by
#: closing at once.
_PEERS = {
    "silent": b"",
    "http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    "garbage": b"\xff" * 16 + b"not a dask frame" * 8,
    "closes": None,
}


@pytest.fixture
def not_dask(request: pytest.FixtureRequest) -> Iterator[str]:
    """A plain TCP server on a free loopback port that speaks no Dask protocol (``_PEERS``); its
    ``dask://`` address. Connections are held for at most 20 s, so a client without a deadline
    fails its test instead of hanging it."""
    answer = _PEERS[request.param]
    srv = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        held = []
        srv.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            if answer is None:
                conn.close()
                continue
            if answer:
                conn.sendall(answer)
            held.append(conn)
        for conn in held:
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    limit = threading.Timer(20, done.set)
    limit.start()
    try:
        yield f"dask://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        limit.cancel()
        done.set()
        t.join()
        srv.close()


@pytest.mark.parametrize("not_dask", sorted(_PEERS), indirect=True)
def test_a_peer_that_speaks_no_dask_is_fx_use_009(not_dask: str, monkeypatch: pytest.MonkeyPatch,
                                                  request: pytest.FixtureRequest) -> None:
    """A port where something else listens: a clean FX-USE-009 with a hint within the connect
    deadline (a silent peer must not hold the gate), exit 2, no traceback, nothing on stdout."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 1)
    code, out, err = _cli("check", str(ROOT / RACE), "--executor", not_dask)
    assert code == 2 and out == "" and "[FX-USE-009]" in err and "FX-INT-001" not in err, err
    assert f"cannot reach the Dask scheduler at `{not_dask}`" in err and "dask scheduler" in err
    assert "Traceback" not in err and "Exception ignored" not in err
    if request.node.callspec.params["not_dask"] == "silent":
        assert "no answer within 1 s" in err


def test_a_worker_address_is_not_a_scheduler(cluster: str) -> None:
    """`--executor` given a worker's address (a plausible slip): FX-USE-009 saying so."""
    from distributed import Client

    with Client(cluster.replace("dask://", "tcp://"), set_as_default=False) as c:
        worker = sorted(c.scheduler_info()["workers"])[0]
    d = open_executor(worker.replace("tcp://", "dask://"), 1, "z3")
    assert d.code == "FX-USE-009" and "is a Dask worker, not the scheduler" in d.message, d


def test_a_handshake_that_breaks_off_is_fx_use_009(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduler answered the probe, then the client's handshake raised: FX-USE-009, and the
    client is closed."""
    distributed = pytest.importorskip("distributed")

    class Breaks(FakeClient):
        closed = False

        def wait_for_workers(self, n: int, timeout: float) -> None:
            raise RuntimeError("scheduler sent an unexpected message")

        def close(self) -> None:
            Breaks.closed = True

    monkeypatch.setattr(executors, "_probe", lambda spec, address: None)
    monkeypatch.setattr(distributed, "Client", lambda *a, **k: Breaks({}))
    d = open_executor("dask://127.0.0.1:1", 1, "z3")
    assert d.code == "FX-USE-009" and "stopped answering during the handshake" in d.message and Breaks.closed
    assert "unexpected message" in d.message and d.help


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as srv:
        return srv.getsockname()[1]


def test_a_refused_port_says_so_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens on the port: "connection refused", from a plain connect that does not wait
    out the deadline (distributed's own connect retries a refused port until it times out)."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 1)
    d = open_executor(f"dask://127.0.0.1:{_free_port()}", 1, "z3")
    assert d.code == "FX-USE-009" and "connection refused" in d.message and "within" not in d.message, d


@pytest.mark.parametrize("not_dask", ["silent"], indirect=True)
def test_the_flag_and_the_environment_word_a_time_out_alike(not_dask: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--executor` and `FXVERIFY_EXECUTOR` give the same words for a peer that never answers, and
    every deadline (the socket's, distributed's connect and handshake, the overall one) reads as
    "no answer within N s"."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 1)
    flag = _cli("check", str(ROOT / RACE), "--executor", not_dask)
    monkeypatch.setenv("FXVERIFY_EXECUTOR", not_dask)
    env = _cli("check", str(ROOT / RACE))
    assert flag == env and flag[0] == 2 and "no answer within 1 s" in flag[2], (flag, env)
    for err in (TimeoutError("timed out"), OSError("Timed out trying to connect to tcp://h:1 after 1 s"),
                OSError("Timed out during handshake while connecting to tcp://h:1 after 1 s"), asyncio.TimeoutError()):
        assert executors._unreachable("dask://h:1", err).message == "cannot reach the Dask scheduler at `dask://h:1`: no answer within 1 s"


@pytest.mark.parametrize("spec,words", [
    ("dask://127.0.0.1:abc", "`abc` is not a TCP port"),
    ("dask://127.0.0.1:0", "`0` is not a TCP port"),
    ("dask://127.0.0.1:65536", "`65536` is not a TCP port"),
    ("dask://no-such-host.invalid:8786", "the host name `no-such-host.invalid` does not resolve"),
])
def test_an_address_that_names_no_scheduler_is_refused_up_front(spec: str, words: str) -> None:
    d = open_executor(spec, 1, "z3")
    assert d.code == "FX-USE-009" and words in d.message and d.help, d


@pytest.mark.parametrize("kind", ["Proxy", None, "Scheduler "])
def test_only_a_scheduler_identity_is_a_scheduler(kind, monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer that speaks Dask's protocol but whose identity is not a Scheduler's (another
    server, no `type`, a look-alike) is FX-USE-009, never handed to the client."""
    distributed = pytest.importorskip("distributed")

    class Comm:
        async def write(self, msg) -> None:
            pass

        async def read(self):
            return {} if kind is None else {"type": kind}

        def abort(self) -> None:
            pass

    async def connect(address, timeout):
        return Comm()

    monkeypatch.setattr(executors, "_tcp_refused", lambda spec, address: None)
    monkeypatch.setattr(distributed.comm, "connect", connect)
    monkeypatch.setattr(distributed, "Client", lambda *a, **k: pytest.fail("a non-scheduler reached the client"))
    d = open_executor("dask://127.0.0.1:8786", 1, "z3")
    assert d.code == "FX-USE-009" and "does not answer as a Dask scheduler" in d.message and "8786" in d.help, d


def test_only_connection_errors_of_the_client_are_fx_use_009(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a good probe, the client's OSError (CommClosedError included) and TimeoutError are the
    scheduler going away (FX-USE-009); anything else is a bug and is not dressed up as one."""
    distributed = pytest.importorskip("distributed")
    from distributed.comm.core import CommClosedError

    monkeypatch.setattr(executors, "_probe", lambda spec, address: None)
    for err in (OSError("gone"), TimeoutError(), CommClosedError("closed")):
        monkeypatch.setattr(distributed, "Client", lambda *a, _e=err, **k: (_ for _ in ()).throw(_e))
        d = open_executor("dask://127.0.0.1:1", 1, "z3")
        assert d.code == "FX-USE-009" and "cannot reach the Dask scheduler" in d.message
    monkeypatch.setattr(distributed, "Client", lambda *a, **k: (_ for _ in ()).throw(KeyError("bug")))
    with pytest.raises(KeyError):
        open_executor("dask://127.0.0.1:1", 1, "z3")


@pytest.mark.parametrize("spec", ["dask://", "dask:/host:1", "ray://host:1", "tcp://host:8786", "dask://host"])
def test_a_malformed_executor_is_fx_use_005(spec: str) -> None:
    code, out, err = _cli("check", str(ROOT / RACE), "--executor", spec)
    assert code == 2 and "[FX-USE-005]" in err and "dask://HOST:PORT" in err


def test_dump_smt_runs_here_only(tmp_path: Path) -> None:
    code, _out, err = _cli("check", str(ROOT / RACE), "--dump-smt", str(tmp_path / "d"), "--executor", "dask://h:1")
    assert code == 2 and "[FX-USE-002]" in err


class FakeClient:
    """What the handshake asks of a ``distributed.Client``."""

    def __init__(self, seen: dict[str, str] | Exception) -> None:
        self.seen = seen

    def wait_for_workers(self, n: int, timeout: float) -> None:
        pass

    def run(self, fn, *args):
        if isinstance(self.seen, Exception):
            raise self.seen
        return self.seen

    def nthreads(self) -> dict[str, int]:
        return {"tcp://w1:1": 1, "tcp://w2:1": 2}


def test_workers_with_another_fxverify_are_refused() -> None:
    """Workers must compute the gate's bytes: another fxverify (or solver) is FX-USE-009 naming
    the worker and both identities; workers that cannot import fxverify too."""
    me = executors.identity("z3")
    ok = executors._workers_problem("dask://s:1", FakeClient({"tcp://w1:1": me, "tcp://w2:1": me}), "z3")
    assert ok == (3, me)
    bad = executors._workers_problem("dask://s:1", FakeClient({"tcp://w1:1": me, "tcp://w2:1": "fxverify 0.0.9"}), "z3")
    assert bad.code == "FX-USE-009" and "tcp://w2:1" in bad.message and "fxverify 0.0.9" in bad.message
    assert "install the commit the gate runs" in (bad.help or "")
    gone = executors._workers_problem("dask://s:1", FakeClient(ModuleNotFoundError("No module named 'fxverify'")), "z3")
    assert gone.code == "FX-USE-009" and "cannot run fxverify" in gone.message


def test_open_executor_local_and_cluster(cluster: str) -> None:
    assert isinstance(open_executor("local", 3, "z3"), LocalExecutor)
    ex = open_executor(cluster, 1, "z3")
    try:
        assert ex.slots == 2 and ex.check_identity(executors.identity("z3")) and not ex.check_identity("other")
    finally:
        ex.close()
