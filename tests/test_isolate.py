"""Checks in a child process (``fxverify.isolate``): the real checker's verdict comes back, the
caps give an unknown verdict (FX-SMT-001, never a pass), and a cancelled check gives nothing."""

from __future__ import annotations

import os

from fxverify.diagnostics import codes
from fxverify.isolate import Caps, IsolatedCheck, check_isolated
from fxverify.result import Verdict

from tests.conftest import ROOT

RACE = str(ROOT / "corpus/ordering/fail/kv-offload-unordered.fx")


def test_the_child_returns_the_checkers_result_for_the_unsaved_text() -> None:
    r = check_isolated(RACE)
    assert r.verdict is Verdict.REFUTED and [d.code for d in r.diagnostics] == [codes.ORD_002]
    assert "(verified:" in (r.diagnostics[0].help or "") and r.diagnostics[0].trace is not None
    fixed = open(RACE).read().replace("stream copy", "stream copy after attn")
    r = check_isolated(RACE, texts={os.path.realpath(RACE): fixed})
    assert r.verdict is Verdict.PROVED and r.diagnostics == [] and r.sources.get(RACE).text == fixed


def test_caps_give_unknown_never_a_pass() -> None:
    late = check_isolated(RACE, caps=Caps(seconds=1e-6))
    assert late.verdict is Verdict.UNKNOWN and [d.code for d in late.diagnostics] == [codes.SMT_001]
    assert "did not finish within 1e-06 s" in late.diagnostics[0].message
    small = check_isolated(RACE, caps=Caps(memory_bytes=32 << 20))
    assert small.verdict is Verdict.UNKNOWN and [d.code for d in small.diagnostics] == [codes.SMT_001]
    assert "memory cap of 32 MiB" in small.diagnostics[0].message


def test_a_cancelled_check_gives_nothing() -> None:
    job = IsolatedCheck(RACE)
    job.cancel()
    assert job.wait() is None and job.cancelled


def test_a_child_reuses_the_proofs_an_earlier_child_kept(tmp_path) -> None:
    """The language server's checks share the result cache's families level: after a hook edit
    of the unsaved text, the next child takes every family but hooks from it."""
    ok = ROOT / "corpus/ordering/ok/grad-bucket-all-producers.fx"
    text = ok.read_text()
    first = check_isolated(str(ok), cache_dir=str(tmp_path))
    assert first.verdict is Verdict.PROVED and first.reused == ()
    edited = text.replace("edge bw_side: write bucket[16 MiB, +16 MiB] by gpu0.launch",
                          "edge bw_side: write bucket[16 MiB, +16 MiB] by gpu0.copy_done")
    assert edited != text
    again = check_isolated(str(ok), texts={os.path.realpath(ok): edited}, cache_dir=str(tmp_path))
    assert again.verdict is Verdict.PROVED and "hooks" not in again.reused and "ordering" in again.reused
    assert [(o.key, o.verdict, o.method) for o in again.outcomes] == \
        [(o.key, o.verdict, o.method) for o in check_isolated(str(ok), texts={os.path.realpath(ok): edited}).outcomes]
