"""The policy-level cache key covers everything a verdict depends on: change any one of them and
the next check is a miss that computes a fresh verdict, never the cached one.

What a verdict depends on: the files read (the policy and each include, hashed in the entry),
where they are (the resolved path of the policy and of each include, and the repository root that
confines includes), the check options (pruning, solver seed, rlimit, timeout, input limits),
the solver's version, fxverify's version and its code. The gate options (``--unknown``,
``--fail-on``) are applied to the result after the cache, so a hit must still follow them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

import fxverify
from fxverify.gate import GateOptions, GateRequest, run_gate
from fxverify.gate import cache as cache_mod
from fxverify.gate.cache import CacheStats, ResultCache, check_cached
from fxverify.pipeline import CheckOptions
from fxverify.resolve import Limits
from fxverify.result import Verdict
from tests.conftest import ROOT

LIB = ROOT / "corpus/transforms/ok/compress-worst-case.fx"
UNKNOWN = ROOT / "corpus/solver/fail/budget-exhausted.fx"


def _repo(tmp_path: Path) -> Path:
    """A repository with ``p.fx`` including ``shared/lib.fx`` (a proved policy's declarations)."""
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "lib.fx").write_text(LIB.read_text().replace('policy "compress-worst-case"', ""))
    (tmp_path / "p.fx").write_text('policy "uses-lib"\ninclude "shared/lib.fx"\n')
    return tmp_path / "p.fx"


def _check(pol: Path, store: ResultCache | None, options: CheckOptions | None = None):
    stats = CacheStats()
    return check_cached(str(pol), options or CheckOptions(), store, stats), stats


def _edit_policy(pol: Path, _o: CheckOptions) -> CheckOptions:
    pol.write_text(pol.read_text() + "# a comment changes the text, not the verdict\n")
    return _o


def _edit_include(pol: Path, _o: CheckOptions) -> CheckOptions:
    lib = pol.parent / "shared" / "lib.fx"
    lib.write_text(lib.read_text() + "\n")
    return _o


def _new_root(pol: Path, o: CheckOptions) -> CheckOptions:
    # `p.fx` moves into a sub-repository: `../shared/lib.fx` now lies outside it.
    sub = pol.parent / "sub"
    sub.mkdir()
    (sub / "p.fx").write_text('policy "uses-lib"\ninclude "../shared/lib.fx"\n')
    pol.unlink()
    os.symlink(sub / "p.fx", pol)
    (sub / ".git").mkdir()
    return o


def _include_points_outside(pol: Path, o: CheckOptions) -> CheckOptions:
    # The same bytes, but the include is now a symlink to a file outside the repository.
    outside = pol.parent.parent / "outside"
    outside.mkdir()
    lib = pol.parent / "shared" / "lib.fx"
    (outside / "lib.fx").write_bytes(lib.read_bytes())
    lib.unlink()
    os.symlink(outside / "lib.fx", lib)
    return o


def _include_folder_points_outside(pol: Path, o: CheckOptions) -> CheckOptions:
    outside = pol.parent.parent / "outside"
    outside.mkdir()
    (outside / "lib.fx").write_bytes((pol.parent / "shared" / "lib.fx").read_bytes())
    os.rename(pol.parent / "shared", pol.parent / "old-shared")
    os.symlink(outside, pol.parent / "shared")
    return o


def _option(**kw) -> Callable[[Path, CheckOptions], CheckOptions]:
    def change(_pol: Path, o: CheckOptions) -> CheckOptions:
        solver = {k: v for k, v in kw.items() if k in ("seed", "rlimit", "timeout_ms")}
        rest = {k: v for k, v in kw.items() if k not in solver}
        return replace(o, solver=replace(o.solver, **solver), **rest)
    return change


CHANGES: dict[str, Callable[[Path, CheckOptions], CheckOptions]] = {
    "policy text": _edit_policy,
    "included file": _edit_include,
    "repository root": _new_root,
    "include resolves outside": _include_points_outside,
    "include folder resolves outside": _include_folder_points_outside,
    "prune": _option(prune=False),
    "seed": _option(seed=7),
    "rlimit": _option(rlimit=19_999_999),
    "timeout": _option(timeout_ms=29_999),
    "limits": _option(limits=replace(Limits(), max_edges=1)),
}


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_changing_what_a_verdict_depends_on_is_a_miss(tmp_path: Path, what: str) -> None:
    pol = _repo(tmp_path / "repo")
    store = ResultCache(str(tmp_path / "cache"))
    first, stats = _check(pol, store)
    assert first.verdict is Verdict.PROVED and stats.policy_misses == 1
    again, stats = _check(pol, store)
    assert again.from_cache and stats.policy_hits == 1  # unchanged: a hit
    options = CHANGES[what](pol, CheckOptions())
    fresh, stats = _check(pol, store, options)
    assert not fresh.from_cache and (stats.policy_hits, stats.policy_misses) == (0, 1), what
    # The fresh verdict is the one a check without any cache gives.
    plain, _ = _check(pol, None, options)
    assert (fresh.verdict, sorted(map(str, (d.code for d in fresh.diagnostics)))) == \
        (plain.verdict, sorted(map(str, (d.code for d in plain.diagnostics))))


@pytest.mark.parametrize("what", ["solver version", "fxverify version", "fxverify code"])
def test_another_solver_or_fxverify_is_a_miss(tmp_path: Path, what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pol = _repo(tmp_path / "repo")
    store = ResultCache(str(tmp_path / "cache"))
    _check(pol, store)
    assert _check(pol, store)[1].policy_hits == 1
    if what == "solver version":
        monkeypatch.setattr(cache_mod, "solver_version", lambda name="z3": f"{name} 99.0.0")
    elif what == "fxverify version":
        monkeypatch.setattr(fxverify, "__version__", "99.0.0")
    else:
        monkeypatch.setattr(cache_mod, "_CODE_HASH", "0" * 64)
    fresh, stats = _check(pol, store)
    assert not fresh.from_cache and stats.policy_misses == 1


def test_the_gate_options_apply_to_a_cached_result(tmp_path: Path) -> None:
    """``--unknown`` and ``--fail-on`` are not in the key: they are applied to the result after
    the cache, so a hit follows the options of the run that reads it."""
    cache = str(tmp_path / "cache")
    unknown = tmp_path / "unknown.fx"
    unknown.write_text(UNKNOWN.read_text())
    warned = tmp_path / "warned.fx"
    warned.write_text(LIB.read_text() + '# fx: allow FX-ORD-002 reason "nothing races here"\n')

    def gate(path: Path, **kw) -> tuple[int, int]:
        r = run_gate(GateRequest(paths=(str(path),), gate=GateOptions(**kw), cache_dir=cache))
        return r.exit_code, r.cache.policy_hits

    assert gate(unknown) == (1, 0)
    assert gate(unknown, unknown="warn") == (0, 1)
    assert gate(unknown) == (1, 1)
    assert gate(warned) == (0, 0)
    assert gate(warned, fail_on="warning") == (1, 1)
    assert gate(warned) == (0, 1)
