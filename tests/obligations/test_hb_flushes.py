"""Parametric FX-ORD-003 (``obligations.hb_flushes``): every read of bytes a family wrote over a
posted link follows a flush of the link after the write, proved once for a pair of declarations.

The soundness property: every FX-ORD-003 read obligation of a pair of declarations ``Flushed``
proves has a fast proof of its own (``PostedRead.prove_fast``), on random families of NIC writes
over a posted RDMA link (to the block written, the next one, a constant one), flushes after
them (per block, per layer, one for all, one too early, none, or a writer that flushes the link
itself), and reads after the flushes, after the writes alone, through an intermediate, of the
block flushed or another. The verdicts with and without the prover are compared too, and
mutations (a chain without a flush accepted, the flushes' declarations taken from the wrong
link) are caught on fixed cases.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.graph import PolicyGraph
from fxverify.obligations import hb_orders, posted
from fxverify.obligations.base import Context
from fxverify.obligations.hb_flushes import flushed_for
from fxverify.obligations.parametric import Parametric
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend

from tests.obligations.test_parametric import _check, _load, _outcomes, _same_with_and_without_the_prover

HEAD = """policy "posted"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: dpu hooks [tx, rx]
  device far0: gpu hooks [launch]
  link gpu0 -- nic0 : pcie ordered
  link nic0 -- far0 : rdma posted
}
space hbm on gpu0 size 16 MiB
space rem on far0 size 16 MiB
"""


@st.composite
def flush_texts(draw) -> str:
    """Blocks ``blk[0..n)`` the NIC moves to the far device's ``dst`` over the posted link (the
    block's own slot, the next one, a constant one), perhaps flushing the link itself; a family
    of flushes after the moves (``s[i]``, ``s[*]``, ``s[i + 1]``, one before them, or none);
    perhaps an intermediate after the flushes; and reads of the far copies (``dst[i]``, the next
    one, a constant one, all) after the flushes, the intermediate, the moves alone or nothing."""
    n = draw(st.integers(2, 5))
    lines = [HEAD + f"region blk[i in 0..{n}] in hbm at i * 4096 size 4096 owner gpu0 init",
             f"region dst[i in 0..{n}] in rem at i * 4096 size 4096 owner far0 init",
             f"region all in rem at 0 size {n * 4096} owner far0", "alias_set d = [all, dst[*]]",
             "flow f {"]
    slot = draw(st.sampled_from(["i", "i", "i", f"(i + 1) % {n}", "0"]))
    itself = draw(st.sampled_from(["", "", "", " flush nic0 -- far0"]))
    lines += [f"  for i in 0..{n} {{", f"    edge s[i]: move blk[i] -> dst[{slot}] by nic0.tx{itself}", "  }"]
    flush = draw(st.sampled_from(["s[i]", "s[i]", "s[*]", "s[i + 1]", "early", "none"]))
    if flush == "early":
        lines.append("  edge fl0: flush nic0 -- far0 by nic0.tx")
        lines += [f"  for i in 0..{n} {{", "    edge fl[i]: read blk[i][0, +64] by nic0.rx after fl0", "  }"]
    elif flush != "none":
        lo, hi = (0, n - 1) if flush == "s[i + 1]" else (0, n)
        lines += [f"  for i in {lo}..{hi} {{", f"    edge fl[i]: flush nic0 -- far0 by nic0.tx after {flush}", "  }"]
    names = ["s"] + (["fl"] if flush != "none" else [])
    if draw(st.booleans()) and flush not in ("none", "s[i + 1]"):
        lines += [f"  for i in 0..{n} {{", f"    edge x[i]: read blk[i][0, +64] by gpu0.copy_done after {draw(st.sampled_from(['fl[i]', 'fl[*]']))}", "  }"]
        names.append("x")
    src = draw(st.sampled_from(names))
    before = draw(st.sampled_from([f"{src}[i]", f"{src}[i]", f"{src}[*]", f"{src}[0]", ""]))
    if src == "fl" and flush == "s[i + 1]" and before == "fl[i]":
        before = "fl[*]"  # fl[n - 1] does not exist
    target = draw(st.sampled_from(["dst[i]", "dst[i]", f"dst[(i + 1) % {n}]", "dst[0]", "all", "dst[i][0, +64]"]))
    after = f" after {before}" if before else ""
    lines += [f"  for i in 0..{n} {{", f"    edge r[i]: read {target} by far0.launch{after}", "  }", "}"]
    return "\n".join(lines) + "\n"


def assert_flush_proofs_hold(policy, keep_everything: bool = False) -> tuple[int, int]:
    """Every FX-ORD-003 read obligation whose pair of declarations ``Flushed`` proves has a fast
    proof (``PostedRead.prove_fast``); returns how many obligations were proved so and how many
    were compared."""
    ctx = Context(policy, PolicyGraph(policy))
    backend = open_backend(SolverOptions())
    try:
        ctx.parametric = Parametric(policy, backend)
        flushed = flushed_for(ctx)
        assert flushed is not None
        plain = Context(policy, PolicyGraph(policy))
        proved = compared = 0
        for ob in posted.generate(plain):
            if not isinstance(ob, posted.PostedRead):
                continue
            w, r = ob.edges[:2]
            ew, er = policy.edges[w], policy.edges[r]
            pw, pr = ew.accesses().index(ob.acc_w), er.accesses().index(ob.acc_r)
            compared += 1
            if flushed.proved(ew.span, pw, er.span, pr, ob.link):
                proved += 1
                assert ob.prove_fast() is not None, f"{ob.key}: proved for every index value, but its own proof fails"
        return proved, compared
    finally:
        backend.close()


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(flush_texts())
def test_every_read_of_a_pair_proved_flushed_has_its_own_proof(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None and PolicyGraph(policy).is_acyclic())
    proved, compared = assert_flush_proofs_hold(policy)
    event(f"posted reads proved: {'none' if not proved else 'all' if proved == compared else 'some'}")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(flush_texts())
def test_verdicts_with_flush_proofs_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


# ---- fixed cases --------------------------------------------------------------------------------

LAYERS = HEAD + """region blk[l in 0..2, b in 0..4] in hbm at (l * 4 + b) * 4096 size 4096 owner nic0 init
region dst[l in 0..2] in rem at l * 16384 size 16384 owner nic0 init
flow f {
  for l in 0..2 {
    for b in 0..4 {
      edge s[l, b]: move blk[l, b] -> dst[l][b * 4096, +4096] by nic0.tx
    }
  }
  for l in 0..2 {
    edge fl[l]: flush nic0 -- far0 by nic0.tx after s[l, *] handoff dst[l]: nic0 -> far0
    edge r[l]: read dst[l] by far0.launch after fl[l]
  }
}
"""


def _rows(r) -> dict[str, str]:
    return {f"{f}<{b}": why for f, _at, code, _pos, _n, why, b in r.parametric if code == "FX-ORD-003"}


def test_a_layer_flushed_after_its_writes_is_proved_for_every_index_value() -> None:
    r = _check(LAYERS)
    assert not r.diagnostics
    assert _rows(r) == {"s<r": ""}
    assert _outcomes(r) == _outcomes(_check(LAYERS, parametric=False))
    policy, _ = _load(LAYERS)
    assert assert_flush_proofs_hold(policy) == (8, 8)


@pytest.mark.parametrize("edit, why", [
    ("after fl[l]\n", "after s[l, *]\n"),  # read after the writes, no flush between
    ("after s[l, *] handoff", "after s[0, *] handoff"),  # layer 1's flush may come before its writes end
])
def test_a_broken_variant_falls_back_and_is_refuted(edit: str, why: str) -> None:
    bad = LAYERS.replace(edit, why)
    r = _check(bad)
    assert _rows(r)["s<r"]
    assert any(d.code is codes.ORD_003 for d in r.diagnostics)
    assert _outcomes(r) == _outcomes(_check(bad, parametric=False))


def test_a_chain_without_a_flush_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property can fail: were every chain accepted, a read right after the writes would be
    called flushed, and its obligations have no proof of their own."""
    bad = LAYERS.replace("after fl[l]\n", "after s[l, *]\n")
    policy, _ = _load(bad)
    assert assert_flush_proofs_hold(policy) == (0, 8)
    query = hb_orders.Paths.query
    monkeypatch.setattr(hb_orders.Paths, "query", lambda self, *a, keep=None, via="": query(self, *a))
    with pytest.raises(AssertionError, match="its own proof fails"):
        assert_flush_proofs_hold(policy)
