"""Queries that prove, not restate (issue "Trust", item 4): the SMT query of every obligation whose
fast proof is a Python rule (layout, in-place legality, checksum walk, ownership, map classes)
states the rule over the IR's facts, so it fails when that Python would be wrong.

Two kinds of evidence: (1) with the Python rule patched to claim "fine", ``--no-prune`` (every
obligation sent to the solver) still refutes the corpus bug; (2) in the SMT-LIB text of a refuted
query, setting one fact to the value of the fixed policy flips the answer to unsat, so the answer
is computed from the facts by the solver, not fixed by a constant."""

from __future__ import annotations

import re

import pytest

from fxverify.diagnostics import codes
from fxverify.obligations import alias, maps, transforms
from fxverify.pipeline import CheckOptions, discharge
from fxverify.resolve import load_policy
from fxverify.result import Verdict
from fxverify.smt.backend import SolverOptions, Status
from fxverify.smt.factory import open_backend
from fxverify.smt.smtlib import query_to_smtlib
from fxverify.smt.z3_backend import check_smtlib
from fxverify.source import SourceMap

from tests.conftest import ROOT


def _kept(path: str, prune: bool = False):
    policy, diags = load_policy(str(ROOT / path), SourceMap())
    assert policy is not None, [d.message for d in diags]
    kept: list = []
    r = discharge(policy, CheckOptions(prune=prune, verify_hints=False), open_backend(SolverOptions()), keep=kept)
    return r, kept


def _refuted(path: str, code) -> set[str]:
    r, _ = _kept(path)
    return {v.key for v in r.outcomes if v.verdict is Verdict.REFUTED and v.code == str(code)}


PATCHES = [
    # (corpus bug, its code, object, attribute, a replacement that claims the rule holds)
    ("corpus/transforms/fail/quantize-dtype-mismatch.fx", codes.XF_003, transforms, "_layout_problems", lambda ctx, e: []),
    ("corpus/alias/fail/allgather-inplace-wrong-offset.fx", codes.ALIAS_002, alias, "_in_place_rule",
     lambda e: (True, "patched")),
    ("corpus/transforms/fail/checksum-before-compress.fx", codes.XF_002, transforms.ChecksumChain, "_walk", lambda self: None),
]


@pytest.mark.parametrize(("path", "code", "owner", "attr", "fake"), PATCHES, ids=[p[0].rsplit("/", 1)[1] for p in PATCHES])
def test_the_query_refutes_what_a_wrong_python_rule_would_prove(monkeypatch, path, code, owner, attr, fake) -> None:
    before = _refuted(path, code)
    assert before, f"{path} is not refuted with {code}"
    monkeypatch.setattr(owner, attr, fake)
    assert _refuted(path, code) == before


def test_a_per_device_read_query_finds_the_foreign_writer_itself(monkeypatch) -> None:
    path = "corpus/maps/fail/per-gpu-counter-read-as-one.fx"
    before = _refuted(path, codes.MAP_004)
    assert before
    init = maps.PerDeviceRead.__init__

    def blind(self, *args, **kw):  # the Python list of foreign writers is wrong: empty
        init(self, *args, **kw)
        self.foreign = ()
    monkeypatch.setattr(maps.PerDeviceRead, "__init__", blind)
    assert _refuted(path, codes.MAP_004) == before


FLIPS = [
    # (corpus bug, code, fact in the refuted query, the value that makes it hold: a device or class name)
    ("corpus/ownership/fail/dpu-reads-unleased-kv.fx", codes.OWN_001, "accessor", "gpu0"),
    ("corpus/ownership/fail/final-owner-mismatch.fx", codes.OWN_005, "declared_owner", "dpu0"),
    ("corpus/ownership/fail/double-handoff.fx", codes.OWN_003, None, None),
    ("corpus/maps/fail/eventual-guard.fx", codes.MAP_003, "map_class", "causal"),
    ("corpus/maps/fail/per-gpu-counter-read-as-one.fx", codes.MAP_004, "reader_device", None),
]


def _fact_value(text: str, name: str) -> str:
    """The id a header comment gives ``name`` (``device 1 = cpu0`` or ``class 3 = causal``)."""
    m = re.search(rf"^; (?:device|class) (\d+) = {re.escape(name)}$", text, re.MULTILINE)
    assert m, name
    return m.group(1)


@pytest.mark.parametrize(("path", "code", "fact", "value"), FLIPS, ids=[f[0].rsplit("/", 1)[1] for f in FLIPS])
def test_a_refuted_query_depends_on_its_facts(path, code, fact, value) -> None:
    _r, kept = _kept(path)
    refuted = [(ob, q) for ob, q in kept if ob.code is code]
    texts = [query_to_smtlib(q) for _ob, q in refuted]
    sat = [t for t in texts if check_smtlib(t) is Status.SAT]
    assert sat, f"no satisfiable {code} query in {path}"
    text = sat[0]
    if fact is None:
        # every fact of this query is a device id; no constant true/false decides it
        assert re.search(r"^\(assert \(! (true|false|\(not true\)|\(not false\)) ", text, re.MULTILINE) is None
        assert re.search(r":named A_(driver|from_0|reader_device)\)", text), text
        return
    m = re.search(rf"^\(assert \(! \(= {fact} (\d+)\) :named A_{fact}\)\)$", text, re.MULTILINE)
    assert m, text
    if value is None:  # per-device read: every writer is moved onto the reader's device
        flipped = re.sub(r"^\(assert \(! \(= (writer_device_\d+) \d+\)", rf"(assert (! (= \1 {m.group(1)})", text, flags=re.MULTILINE)
        assert flipped != text
    else:
        new = _fact_value(text, value)
        assert new != m.group(1)
        flipped = text.replace(m.group(0), m.group(0).replace(f"(= {fact} {m.group(1)})", f"(= {fact} {new})"))
    assert check_smtlib(flipped) is Status.UNSAT
