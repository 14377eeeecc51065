"""Parametric FX-OWN-001 by HB and leases (``obligations.hb_owners``): a declaration whose instances
read blocks another device leases them, or write regions their device owns until a later
handoff, proved for every index value.

The soundness property: every FX-OWN-001 obligation of an instance of a declaration proved so
has a fast proof of its own (``Unowned.prove_fast``), on random families of blocks written and
leased (at the same block, the next one, a constant one, under ``if``), reads and moves of them
by the lessee after chains with offsets and ``*``, destinations handed off before or after,
revokes, handoffs of the blocks, pools that contain them, and writes by the lessee. The verdicts
with and without the prover are compared too, and mutations of the argument (the lease's region
left unchecked, the handoffs' order dropped) are caught on fixed cases.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.graph import PolicyGraph
from fxverify.obligations import grants, hb_owners, ownership
from fxverify.obligations import parametric as parametric_mod
from fxverify.obligations.base import Context
from fxverify.obligations.hb_owners import owners_for
from fxverify.obligations.parametric import Parametric
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend

from tests.obligations.test_parametric import _check, _load, _outcomes, _same_with_and_without_the_prover

HEAD = """policy "lease"
fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device dpu0: dpu hooks [rx, tx]
  device far0: gpu hooks [launch]
  link gpu0 -- dpu0 : pcie ordered
  link dpu0 -- far0 : rdma ordered
}
space hbm on gpu0 size 16 MiB
space rem on far0 size 16 MiB
"""


@st.composite
def lease_texts(draw) -> str:
    """Blocks ``blk[0..n)`` of the GPU (perhaps inside a pool region, one alias set), written by a
    family that leases a block to the DPU (the one it writes, the next, a constant one, or the
    pool), perhaps under ``if``; a family of the DPU reading or moving a block (at ``i``, ``i +
    1``, a constant) to the far device's memory after the writes (by ``w[i]``, ``w[i - 1]``,
    ``w[*]``, a constant, or through an intermediate), or writing one; a family handing each
    destination to the far device after the moves, before them, or unordered; and now and then
    blocks the DPU owns, a revoke or a handoff of a block, or a lease to another device."""
    n = draw(st.integers(2, 5))
    lines = [HEAD + f"region blk[i in 0..{n}] in hbm at i * 4096 size 4096 owner {draw(st.sampled_from(['gpu0'] * 4 + ['dpu0']))}"]
    pool = draw(st.booleans())
    if pool:
        lines.append(f"region pool in hbm at 0 size {n * 4096} owner gpu0")
        lines.append("alias_set p = [pool, blk[*]]")
    lines.append(f"region dst[i in 0..{n}] in rem at i * 4096 size 4096 owner dpu0")
    lines.append("region flag in hbm at 0x100000 size 64 owner gpu0 init")
    lines.append("region dflag in rem at 0x100000 size 64 owner dpu0 init")
    lines.append("flow f {")
    lease = draw(st.sampled_from(["blk[i]", "blk[i]", "blk[i]", "blk[i]", f"blk[(i + 1) % {n}]", "blk[0]", *(["pool"] if pool else [])]))
    to = draw(st.sampled_from(["dpu0"] * 5 + ["far0"]))
    branch = draw(st.sampled_from([""] * 5 + [f"i != {draw(st.integers(0, n - 1))}"]))
    lines.append(f"  for i in 0..{n} {{")
    if branch:
        lines.append(f"    if {branch} {{")
        lines.append(f"      edge w[i]: write blk[i] by gpu0.launch lease {lease} to {to}")
        lines.append("    } else {")
        lines.append("      edge w[i]: write blk[i] by gpu0.launch")
        lines.append("    }")
    else:
        lines.append(f"    edge w[i]: write blk[i] by gpu0.launch lease {lease} to {to}")
    lines.append("  }")
    via = draw(st.booleans())
    if via:
        lines.append(f"  for i in 0..{n} {{")
        lines.append(f"    edge x[i]: read flag by gpu0.copy_done after {draw(st.sampled_from(['w[i]', 'w[*]', 'w[0]']))}")
        lines.append("  }")
    before = draw(st.sampled_from(["w[i]", "w[i]", "w[i]", "w[*]", "w[0]", "w[i - 1]", "w[i + 1]", "", *(["x[i]"] if via else [])]))
    lo, hi = (1, n) if before.endswith("i - 1]") else (0, n - 1) if before.endswith("i + 1]") else (0, n)
    src = draw(st.sampled_from(["blk[i]", "blk[i]", "blk[i]", "blk[i][0, +64]", f"blk[(i + 1) % {n}]", "blk[0]"]))
    action = draw(st.sampled_from(["move", "move", "move", "read", "write"]))
    hand = draw(st.sampled_from(["after", "after", "before", "unordered", "none"]))
    refs = [r for r in (before, "h[i]" if hand == "before" else "") if r]
    after = f" after {', '.join(refs)}" if refs else ""
    lines.append(f"  for i in {lo}..{hi} {{")
    if action == "move":
        lines.append(f"    edge s[i]: move {src} -> dst[i] by dpu0.tx{after}")
    elif action == "read":
        lines.append(f"    edge s[i]: read {src} by dpu0.tx{after}")
    else:
        lines.append(f"    edge s[i]: write {src} by dpu0.tx{after}")
    lines.append("  }")
    if hand != "none":
        order = f" after {draw(st.sampled_from(['s[*]', 's[i]']))}" if hand == "after" and (lo, hi) == (0, n) else ""
        lines.append(f"  for i in 0..{n} {{")
        lines.append(f"    edge h[i]: read dflag by dpu0.rx{order} handoff dst[i]: dpu0 -> far0")
        lines.append("  }")
    extra = draw(st.sampled_from([""] * 4 + ["revoke", "handoff", "alloc"]))
    k = draw(st.integers(0, n - 1))
    if extra == "revoke":
        lines.append(f"  edge rv: read flag by gpu0.copy_done revoke blk[{k}] from dpu0")
    elif extra == "handoff":
        lines.append(f"  edge gv: read flag by gpu0.copy_done handoff blk[{k}]: gpu0 -> dpu0")
    elif extra == "alloc":
        lines.append(f"  edge al: alloc dst[{k}] to dpu0 by dpu0.rx")
    lines.append("}")
    return "\n".join(lines) + "\n"


def assert_owner_proofs_hold(policy) -> tuple[int, int]:
    """Every FX-OWN-001 obligation of an instance of a declaration ``Owners`` proves has a fast
    proof (``Unowned.prove_fast``); returns how many declarations were proved and how many were
    tried."""
    ctx = Context(policy, PolicyGraph(policy))
    backend = open_backend(SolverOptions())
    try:
        ctx.parametric = Parametric(policy, backend)
        owners = owners_for(ctx)
        assert owners is not None
        tried: list = []

        def more(span, why):
            tried.append(span)
            return owners.reason(span, why)

        proved = ctx.parametric.proved_static_owners({r for r, hs in ctx.handoffs.items() if hs}, ctx.owner_checks(), more)
        plain = Context(policy, PolicyGraph(policy))
        for ob in ownership.generate(plain):
            if ob.code == codes.OWN_001 and policy.edges[ob.edges[0]].span in proved:
                assert ob.prove_fast() is not None, f"{ob.key}: proved for every index value, but its own proof fails"
        return len([s for s in tried if s in proved]), len(tried)
    finally:
        backend.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(lease_texts())
def test_every_declaration_proved_by_hb_and_leases_has_each_obligation_proved_on_its_own(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None and PolicyGraph(policy).is_acyclic())
    proved, tried = assert_owner_proofs_hold(policy)
    event(f"declarations proved by HB and leases: {'none' if not proved else 'all' if proved == tried else 'some'}")


def assert_grant_proofs_hold(policy) -> tuple[int, int]:
    """Every FX-OWN-003 lease obligation of an instance of a declaration
    ``Parametric.proved_static_grants`` proves has the fast proof ``hb-reachability``; returns how
    many declarations were proved and how many have leases."""
    ctx = Context(policy, PolicyGraph(policy))
    par = Parametric(policy, None)  # type: ignore[arg-type]  # no query is asked
    proved = par.proved_static_grants({r for r, hs in ctx.handoffs.items() if hs})
    plain = Context(policy, PolicyGraph(policy))
    for ob in grants.lease_grants(plain):
        if policy.edges[ob.edges[0]].span in proved:
            assert ob.prove_fast() == "hb-reachability", f"{ob.key}: proved for every index value, but its own proof fails"
    return len(proved), len([r for r in par.reports if r.code == "FX-OWN-003"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(lease_texts())
def test_every_lease_declaration_proved_has_each_grant_proved_on_its_own(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None)
    proved, tried = assert_grant_proofs_hold(policy)
    event(f"lease declarations proved: {'none' if not proved else 'all' if proved == tried else 'some'}")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(lease_texts())
def test_verdicts_with_owner_proofs_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


# ---- fixed cases --------------------------------------------------------------------------------

SEND = HEAD + """region blk[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0
region dst[i in 0..4] in rem at i * 4096 size 4096 owner dpu0
region dflag in rem at 0x100000 size 64 owner dpu0 init
flow f {
  for i in 0..4 {
    edge w[i]: write blk[i] by gpu0.launch lease blk[i] to dpu0
  }
  for i in 0..4 {
    edge s[i]: move blk[i] -> dst[i] by dpu0.tx after w[i]
  }
  for i in 0..4 {
    edge h[i]: read dflag by dpu0.rx after s[i] handoff dst[i]: dpu0 -> far0
  }
}
"""


def _rows(r) -> dict[str, tuple[int, str]]:
    return {f: (n, why) for f, _at, code, _pos, n, why, _before in r.parametric if code == "FX-OWN-001"}


def test_a_leased_read_and_a_write_before_its_handoff_are_proved_for_every_index_value() -> None:
    r = _check(SEND)
    assert not r.diagnostics
    assert _rows(r)["s"] == (8, "")  # each instance: its block (leased) and its destination (owned until h)
    plain = _check(SEND, parametric=False)
    assert _outcomes(r) == _outcomes(plain)
    policy, _ = _load(SEND)
    assert assert_owner_proofs_hold(policy) == (1, 2)  # `s` proved; `h` hands off, so it is not


@pytest.mark.parametrize("edit, why", [
    ("lease blk[i] to dpu0", "lease blk[(i + 1) % 4] to dpu0"),  # the next block leased: not the one read
    ("after s[i] handoff", "handoff"),  # the destination may be handed off first
])
def test_a_broken_variant_falls_back_and_is_refuted(edit: str, why: str) -> None:
    bad = SEND.replace(edit, why)
    r = _check(bad)
    assert _rows(r)["s"][1]
    assert any(d.code is codes.OWN_001 for d in r.diagnostics)
    assert _outcomes(r) == _outcomes(_check(bad, parametric=False))


def test_a_missing_region_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property can fail: were the lease's region not compared with the block read, the next
    block's lease would be taken for it, and the reads have no proof of their own."""
    bad = SEND.replace("lease blk[i] to dpu0", "lease blk[(i + 1) % 4] to dpu0")
    policy, _ = _load(bad)
    assert assert_owner_proofs_hold(policy) == (0, 2)
    monkeypatch.setattr(hb_owners, "_equal", lambda *_args: [])
    with pytest.raises(AssertionError, match="its own proof fails"):
        assert_owner_proofs_hold(policy)


def test_a_missing_handoff_order_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the handoffs' order not asked, a write of the destination after its handoff would be
    taken for the owner's."""
    bad = SEND.replace("after s[i] handoff", "handoff")
    policy, _ = _load(bad)
    assert assert_owner_proofs_hold(policy) == (0, 2)
    monkeypatch.setattr(hb_owners.Orders, "proved", lambda *_args, **_kw: True)
    with pytest.raises(AssertionError, match="its own proof fails"):
        assert_owner_proofs_hold(policy)


def test_a_grant_of_a_block_handed_off_falls_back_and_a_missing_hull_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block handed to the DPU before its lease is not the GPU's to lend: the declaration falls
    back (and the lease is refuted); were the hull lookup skipped, it would be claimed."""
    bad = SEND.replace("  for i in 0..4 {\n    edge s[i]", "  edge gv: read flag by gpu0.copy_done handoff blk[2]: gpu0 -> dpu0\n  for i in 0..4 {\n    edge s[i]", 1)
    bad = bad.replace("region dflag", "region flag in hbm at 0x100000 size 64 owner gpu0 init\nregion dflag")
    r = _check(bad)
    rows = {f: why for f, _at, code, _pos, _n, why, _b in r.parametric if code == "FX-OWN-003"}
    assert rows == {"w": "the hull of the regions it leases meets `blk[2]`, which is handed off or allocated"}
    assert any(d.code is codes.OWN_003 for d in r.diagnostics)
    assert _outcomes(r) == _outcomes(_check(bad, parametric=False))
    policy, _ = _load(bad)
    assert assert_grant_proofs_hold(policy) == (0, 1)
    monkeypatch.setattr(parametric_mod.Parametric, "not_owned", lambda *_args, **_kw: "")
    with pytest.raises(AssertionError, match="its own proof fails"):
        assert_grant_proofs_hold(policy)


def test_a_handoff_of_regions_the_declaration_never_touches_needs_no_order() -> None:
    """Another rank's destinations, in the same space, handed off with no chain from `s`: no
    region they hand off meets a footprint of `s`, so there is no pair to order (a 70B TP 8 flow
    hands each NIC's layers off on its own flush)."""
    text = SEND.replace("region dflag", "region other[i in 0..4] in rem at 0x10000 + i * 4096 size 4096 owner dpu0\nregion dflag")
    text = text.replace("flow f {\n", "flow f {\n  for i in 0..4 {\n    edge h2[i]: read dflag by dpu0.rx handoff other[i]: dpu0 -> far0\n  }\n", 1)
    r = _check(text)
    assert not r.diagnostics
    assert _rows(r)["s"] == (8, "")
    policy, _ = _load(text)
    assert assert_owner_proofs_hold(policy) == (1, 3)
