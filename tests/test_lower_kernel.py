"""Lowered programs in the real Linux kernel: the verifier accepts every program of every proved
corpus policy and of the real Llama-3.1-8B policy, and BPF_PROG_TEST_RUN decisions agree with the
concrete simulator (proved policies in happens-before order, refuted ones along their replayed
counterexamples). Skips only when clang or the bpf() system call is unavailable, and says which."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fxverify.diagnostics import codes
from fxverify.ir import MapOpKind
from fxverify.lower import artifacts, libbpf
from fxverify.lower.driver import LowerOptions, lower
from fxverify.lower.emit_c import CFile
from fxverify.lower.kernel import verify_dir
from fxverify.pipeline import CheckOptions, check
from fxverify.result import Verdict
from tests.conftest import ROOT, corpus_files
from tests.test_cli import run

_NO_CLANG = artifacts.clang_path() is None
_NO_BPF = libbpf.bpf_available()
pytestmark = [
    pytest.mark.skipif(_NO_CLANG, reason="clang is not installed (apt-get install clang)"),
    pytest.mark.skipif(_NO_BPF is not None, reason=f"bpf() is unavailable: {_NO_BPF}"),
]

VERIFY_RUN = LowerOptions(kernel_verify=True, kernel_run=True)

# Codes whose runtime guard must refuse the event where the simulator flags the violation.
GUARDED = {"FX-ORD-002", "FX-ORD-003", "FX-XF-004", "FX-OWN-001", "FX-OWN-002", "FX-OWN-003", "FX-OWN-004",
           "FX-MAP-001", "FX-MAP-002", "FX-MAP-003", "FX-MAP-004", "FX-MAP-005", "FX-ALIAS-003", "FX-HOOK-002"}


def _reuses_blocks(path: Path) -> bool:
    """True when the policy has what lowering refuses: block lifetimes (`alloc`, `pooled`), cache
    write-backs or invalidates, a `notifies` in a refuted policy, or a `cancel`."""
    return _has_lifetimes(path) or _refused_ordering(path) or _has_cancels(path)


def _has_cancels(path: Path) -> bool:
    """True when the policy cancels a transfer."""
    return " cancel " in (ROOT / path).read_text()


def _has_lifetimes(path: Path) -> bool:
    """True when the policy has block lifetimes (`alloc`, `pooled`)."""
    text = (ROOT / path).read_text()
    return " alloc " in text or " pooled" in text


def _refused_ordering(path: Path) -> bool:
    """True when the policy writes back or invalidates cache lines, or is refuted and `notifies` or
    shares non-coherent memory."""
    text = (ROOT / path).read_text()
    refuted = "/fail/" in str(path) and (" notifies " in text or " noncoherent" in text)
    return " writeback " in text or " invalidate " in text or refuted


@pytest.mark.parametrize("path", [p for p in corpus_files("ok") + corpus_files("fail") if _refused_ordering(p)], ids=str)
def test_cache_maintenance_and_unproved_notifications_are_refused(path: Path, tmp_path: Path) -> None:
    """Write-backs and invalidates cannot be issued by hooks, and an early notification has no guard:
    lowering says so (FX-BPF-003) and writes nothing, rather than emitting guards that ignore them."""
    res = lower(str(ROOT / path), str(tmp_path / "o"), LowerOptions(allow_unproved=True))
    assert res.exit_code != 0 and any(d.code is codes.BPF_003 and ("cache" in d.message or "notifies" in d.message
                                                                            or "non-coherent" in d.message)
                                      for d in res.diagnostics)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize("path", [p for p in corpus_files("ok") + corpus_files("fail") if _has_lifetimes(p)], ids=str)
def test_block_lifetimes_are_refused_not_lowered_wrong(path: Path, tmp_path: Path) -> None:
    """Lifetimes are checked but not realised in the runtime: lowering says so (FX-BPF-003) and
    writes nothing, rather than emitting guards that ignore an `alloc`."""
    res = lower(str(ROOT / path), str(tmp_path / "o"), LowerOptions(allow_unproved=True))
    assert res.exit_code != 0 and any(d.code is codes.BPF_003 and "lifetimes" in d.message for d in res.diagnostics)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize("path", [p for p in corpus_files("ok") + corpus_files("fail") if _has_cancels(p)], ids=str)
def test_cancels_are_refused_not_lowered_wrong(path: Path, tmp_path: Path) -> None:
    """A cancel is checked but not realised in the runtime (its completion counters cannot tell a
    cancelled transfer from a finished one): lowering says so (FX-BPF-003) and writes nothing."""
    res = lower(str(ROOT / path), str(tmp_path / "o"), LowerOptions(allow_unproved=True))
    assert res.exit_code != 0 and any(d.code is codes.BPF_003 and "cancel" in d.message for d in res.diagnostics)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize("path", [p for p in corpus_files("ok") if not _reuses_blocks(p)], ids=str)
def test_ok_policy_is_accepted_and_agrees_with_the_simulator(path: Path, tmp_path: Path) -> None:
    res = lower(str(ROOT / path), str(tmp_path / "o"), VERIFY_RUN)
    assert res.exit_code == 0, [d.message for d in res.diagnostics] + [p.log[-2000:] for p in res.programs]
    assert res.programs and all(p.accepted and p.insns_processed for p in res.programs)
    rr = res.run
    assert rr is not None and rr.ok and not rr.mismatches
    assert rr.decisions_total == 2 * len(res.policy.edges) == rr.decisions_agree
    assert rr.final_total > 0 and rr.final_agree == rr.final_total
    # Every plain read's value was checked against what its map's class allows, and was allowed.
    plain = sum(1 for e in res.policy.edges for op in e.map_ops if op.kind in (MapOpKind.READ, MapOpKind.AGGREGATE))
    assert rr.reads_total == rr.reads_agree == plain and not rr.reads_unchecked


@pytest.mark.parametrize("path", [p for p in corpus_files("fail") if not _reuses_blocks(p)], ids=str)
def test_refuted_policy_guards_refuse_where_the_simulator_flags(path: Path, tmp_path: Path) -> None:
    res = lower(str(ROOT / path), str(tmp_path / "o"), LowerOptions(kernel_run=True, allow_unproved=True))
    assert res.exit_code == 0, [d.message for d in res.diagnostics]
    rr = res.run
    assert rr is not None and rr.ok, rr.mismatches
    want = {code for line in (ROOT / path).read_text().splitlines() if "# expect:" in line
            for code in re.findall(r"FX-[A-Z]+-\d{3}", line.split("# expect:")[1])}
    for c in rr.cases:
        if c.sim_step is not None:
            assert c.agree and c.kernel_step == c.sim_step and c.kernel_decision in ("defer", "deny"), c
    # Every guarded code is caught at runtime. A plain read of a per_device map is static-only, and
    # so is an accumulation a consumer `expects` (FX-XF-004 (c)-(e): no hook sees what the bytes
    # hold): FX-XF-004 leaves the runtime expectation only when all its refutations are of those;
    # FX-ORD-003 likewise when all its refutations are of persisted writes.
    if "FX-XF-004" in want and all(k.startswith("FX-XF-004:expects-") for k in _refuted(path, "FX-XF-004")):
        want.discard("FX-XF-004")
    # A persisted posted write that no flush follows shows only once the run is over (no hook).
    if "FX-ORD-003" in want and all(k.startswith("FX-ORD-003:persist:") for k in _refuted(path, "FX-ORD-003")):
        want.discard("FX-ORD-003")
    if want & (GUARDED - {"FX-MAP-004"}) or path.name == "aggregate-before-writer.fx":
        assert any(c.sim_step is not None for c in rr.cases), (rr.cases, rr.static_only)


def _refuted(path: Path, code: str) -> list[str]:
    """The keys of the refuted obligations of ``code`` in the policy at ``path``."""
    r = check(str(ROOT / path), CheckOptions(verify_hints=False))
    return [o.key for o in r.outcomes if o.verdict is Verdict.REFUTED and str(o.code) == code]


REAL_FILES = sorted(p.relative_to(ROOT) for p in (ROOT / "corpus/real").glob("*.fx"))


@pytest.fixture(scope="module", params=REAL_FILES, ids=str)
def real(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Each policy of corpus/real lowered once, verified and run, with --allow-unproved so that a
    refuted one (the `.bad` twin) has its counterexamples driven through the kernel (a proved one
    lowers as without it; refusing an unproved policy is tested on the corpus)."""
    out = tmp_path_factory.mktemp("real") / "o"
    res = lower(str(ROOT / request.param), str(out), LowerOptions(kernel_verify=True, kernel_run=True, allow_unproved=True))
    assert res.proved == (".bad." not in request.param.name)
    return res, out


@pytest.mark.slow
def test_real_policy_programs_are_accepted(real) -> None:
    res, out = real
    assert res.exit_code == 0, [d.message for d in res.diagnostics]
    man = json.loads((out / "manifest.json").read_text())
    assert len(res.programs) == len(man["programs"]) == sum(len(d.hooks) for d in res.policy.devices)
    for p in res.programs:
        assert p.accepted and p.insns_processed and p.peak_states
        # The verifier's work does not grow with the 53k descriptors: they are map rows.
        assert p.insns_processed < 50_000


@pytest.mark.slow
def test_real_policy_kernel_run_agrees(real) -> None:
    res, _out = real
    rr = res.run
    assert rr is not None and rr.ok, rr.mismatches
    if res.proved:
        assert rr.decisions_total == 2 * len(res.policy.edges) == rr.decisions_agree
        assert rr.final_agree == rr.final_total >= len(res.policy.regions) + len(res.policy.edges)
    else:
        assert rr.cases and all(c.agree and c.kernel_step == c.sim_step is not None for c in rr.cases)


def test_rejected_program_log_points_at_fx_spans(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert lower(str(ROOT / "corpus/maps/ok/causal-guard.fx"), str(out), LowerOptions()).exit_code == 0
    c = (out / "gpu0.bpf.c").read_text()
    # Break the policy-map accessor: use a lookup result without its NULL check.
    broken = c.replace("\t\tif (!v)\n\t\t\treturn 0;", "", 1)
    assert broken != c
    r = artifacts.compile_c(CFile("gpu0", broken))
    assert r.ok, r.log
    (out / "gpu0.bpf.o").write_bytes(r.obj)
    reps = [p for p in verify_dir(str(out)) if p.device == "gpu0"]
    assert reps and all(not p.accepted for p in reps)
    assert any("causal-guard.fx:" in s for s in reps[0].fx_spans), reps[0].fx_spans
    assert "-->" in reps[0].log and "map_value_or_null" in reps[0].log


def test_const_map_is_read_only_for_programs(tmp_path: Path) -> None:
    """A `const` map is created with BPF_F_RDONLY_PROG: the lowered programs, which only read it,
    are accepted; the same C with one store into the map is rejected by the kernel verifier."""
    out = tmp_path / "o"
    assert lower(str(ROOT / "corpus/maps/ok/const-map-read-only.fx"), str(out), LowerOptions()).exit_code == 0
    maps = {m["name"]: m for m in json.loads((out / "maps.json").read_text())["maps"]}
    assert maps["spill_home"]["map_flags"] == 1 << 7 and maps["block_home"]["map_flags"] == 0
    assert all(p.accepted for p in verify_dir(str(out)))
    c = (out / "gpu0.bpf.c").read_text()
    lookup = "*v = bpf_map_lookup_elem(&pm_spill_home, &k);\n\n\t\tif (!v)\n\t\t\treturn 0;"
    assert c.count(lookup) == 1 and "&pm_spill_home, &k, &zero" not in c  # read, never written
    r = artifacts.compile_c(CFile("gpu0", c.replace(lookup, lookup + "\n\t\tv->slot[0] = 1;")))
    assert r.ok, r.log
    (out / "gpu0.bpf.o").write_bytes(r.obj)
    reps = [p for p in verify_dir(str(out)) if p.device == "gpu0"]
    assert reps and all(not p.accepted for p in reps)
    assert "write into map forbidden" in reps[0].log, reps[0].log[-2000:]


def test_cli_kernel_verify_json(tmp_path: Path) -> None:
    r = run("lower", "corpus/ownership/ok/handoff-round-trip.fx", "-o", str(tmp_path / "o"), "--kernel-verify",
            "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["programs"] and doc["exit_code"] == 0
    for p in doc["programs"]:
        assert {"name", "device", "hook", "section", "accepted", "insns_processed", "peak_states"} <= set(p)
        assert p["accepted"] is True and p["insns_processed"] > 0


# A release declared before the edge that uses its region, with nothing ordering them: the
# solver's witness starts both at time 0, and the drive order breaks that tie by edge id, so the
# release runs first. The kernel defers it there (its user has not finished), and the simulator
# must flag that same event, not the user's start that follows it.
RELEASE_TIE = """policy "release-tie"

fabric {
  device gpu0: gpu hooks [launch]
  device cpu0: cpu hooks [launch, free]
  link gpu0 -- cpu0 : pcie ordered
}
space host0 on cpu0 base 0x1_0000_0000 size 64 GiB
region pinned in host0 at 0x1_2000_0000 size 8 MiB owner cpu0 dtype bf16

flow f {
  edge free_pinned: release pinned free by cpu0.free
  edge fill: write pinned by cpu0.launch
}
"""


def test_release_first_at_a_start_tie_agrees(tmp_path: Path) -> None:
    src = tmp_path / "release-tie.fx"
    src.write_text(RELEASE_TIE)
    res = lower(str(src), str(tmp_path / "o"), LowerOptions(kernel_run=True, allow_unproved=True))
    rr = res.run
    assert rr is not None and rr.ok and res.exit_code == 0, (rr and rr.mismatches, [d.message for d in res.diagnostics])
    (case,) = rr.cases
    # The release (edge 0) starts first and is the refused event on both sides.
    assert case.name.startswith("FX-OWN-004") and case.sim_step == case.kernel_step == 0, case


def test_plain_reads_on_causal_and_linearizable_maps_agree(tmp_path: Path) -> None:
    # `peek` reads both maps while writers may be in flight, `audit` after them: four values the
    # kernel observed, each inside what the map's class allows in the driven schedule.
    res = lower(str(ROOT / "corpus/maps/ok/plain-reads-by-class.fx"), str(tmp_path / "o"), LowerOptions(kernel_run=True))
    rr = res.run
    assert res.exit_code == 0 and rr is not None and rr.ok, rr and rr.mismatches
    assert {m.cls.kind.value for m in res.policy.maps} == {"causal", "linearizable"}
    assert rr.reads_total == rr.reads_agree == 4 and not rr.reads_unchecked
