"""Verified hints: every hint shown as verified discharges its finding when applied, independently
of the pipeline's own re-check, and never creates a new finding (every fail file of the corpus);
a hint that keeps the bug is replaced by one that does not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fxverify import hints
from fxverify.obligations.families import generate
from fxverify.pipeline import CheckOptions, check, discharge
from fxverify.result import Verdict
from fxverify.resolve import load_policy
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend
from fxverify.source import SourceMap
from tests.conftest import ROOT, corpus_files

VERIFIED = f"({hints.VERIFIED})"


def _unproved(policy) -> set[str]:
    backend = open_backend(SolverOptions())
    try:
        r = discharge(policy, CheckOptions(verify_hints=False, prune=False), backend)
    finally:
        backend.close()
    return {o.key for o in r.outcomes if o.verdict is not Verdict.PROVED}


@pytest.mark.parametrize("path", corpus_files("fail"), ids=str)
def test_verified_hints_discharge_their_finding_and_add_none(path: Path) -> None:
    r = check(str(ROOT / path))
    assert r.policy is not None
    before = {o.key for o in r.outcomes if o.verdict is not Verdict.PROVED}
    for d in r.diagnostics:
        if d.trace is None:
            continue
        # Every refutation says whether its hint was verified.
        assert d.help is not None and (d.help.endswith(VERIFIED) or "(not verified: " in d.help), d.help
        if not d.help.endswith(VERIFIED):
            continue
        edits = hints.parse(d.help)
        assert edits, d.help
        edited = hints.apply(r.policy, edits)
        assert edited is not None, d.help
        after = _unproved(edited)  # solver on every obligation: no fast path shared with the pipeline
        assert d.obligation not in after, (d.help, d.obligation)
        assert after <= before, (d.help, sorted(after - before))


def test_a_hint_that_keeps_the_bug_is_replaced() -> None:
    """In realloc-before-free, ordering `attn0` after the second alloc discharges the use's own
    finding but leaves the double allocation of the same block: not a fix. The search finds the
    one that is (the second alloc after the free)."""
    path = str(ROOT / "corpus/ownership/fail/realloc-before-free.fx")
    policy, diags = load_policy(path, SourceMap())
    assert policy is not None and not diags
    _ctx, obs = generate(policy)
    ob = next(o for o in obs if o.key == "FX-OWN-004:attn0|blk[1]")
    before = _unproved(policy)
    again = CheckOptions(verify_hints=False)

    def recheck(p):
        backend = open_backend(SolverOptions())
        try:
            res = discharge(p, again, backend)
        finally:
            backend.close()
        blamed = {x.key: frozenset(x.edges) for x in res.refutations}
        return {o.key: (o.code.family.name, blamed.get(o.key, frozenset())) for o in res.outcomes if o.verdict is not Verdict.PROVED}
    bad = "add `after take1` to `attn0`"
    assert not hints.discharges(policy, before, ob, hints.parse(bad), recheck)
    help_, status = hints.verified(policy, before, ob, tuple(ob.edges), bad, recheck)
    assert help_ == "add `after free0` to `take1`" and status == hints.VERIFIED


def test_parse_and_apply() -> None:
    assert hints.parse("add `after a, b` to `c`; or add `after d` to `e`") == (
        hints.After("c", "a"), hints.After("c", "b"), hints.After("e", "d"))
    policy, _ = load_policy(str(ROOT / "corpus/ordering/fail/kv-offload-unordered.fx"), SourceMap())
    assert policy is not None
    assert hints.apply(policy, (hints.After("offload", "nope"),)) is None
    edited = hints.apply(policy, (hints.After("offload", "attn"),))
    assert edited is not None and "attn" in edited.edge("offload").after
    assert hints.apply(edited, (hints.After("offload", "attn"),)) is None  # already there
    assert replace(policy) == policy
