"""Parametric happens-before (``obligations.orders``): a pair of declarations ordered for every
index value, and the FX-OWN-004, FX-OWN-002 and FX-MAP-004 obligations it proves at once.

The soundness property: every unrolled pair (a use and a release, a use and a handoff, a write
of a map entry and its ``aggregate``) whose declarations ``Orders`` proves ordered is ordered in
the unrolled HB graph (``graph.hb_before``), on random families of uses and updates, chains of
``after`` references (offsets, ``*``, branches), handoffs, and releases of blocks and
overlapping views. The verdicts with and without the prover are compared too, and
mutations of the path translation (an intermediate's domain dropped, a wrong offset) are caught.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.graph import PolicyGraph
from fxverify.obligations import orders as orders_mod
from fxverify.obligations import maps, ownership
from fxverify.obligations.base import Context
from fxverify.obligations.orders import Orders, footprint_refs, handoff_refs, meeting, released_refs, same_entry, touched_refs
from fxverify.obligations.parametric import Parametric
from fxverify.shapes import Shapes
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend
from fxverify.smt.terms import and_

from tests.obligations.test_parametric import OWN_HEAD, _check, _load, _same_with_and_without_the_prover


@st.composite
def release_texts(draw) -> str:
    """Blocks ``blk[0..n)`` (and perhaps a view over two of them, in one alias set), families of
    reads and writes of blocks at ``i``, ``i + 1`` or a constant, perhaps a family handing each
    block off (uses before and after it), updates of a per-device map's entries, families
    ``after`` them by
    ``x[i]``, ``x[i - 1]``, ``x[i + 1]``, ``x[*]`` or a constant (some under ``if``), and a family
    releasing each block (or the view) after some of them, perhaps aggregating an entry: some
    uses are ordered before their release by a chain, some only for some indices, some not at
    all."""
    n = draw(st.integers(2, 5))
    lines = [OWN_HEAD + f"region blk[i in 0..{n}] in hbm at i * 4096 size 4096 owner gpu0"]
    view = draw(st.booleans())
    if view:
        lines.append(f"region view in hbm at {draw(st.integers(0, n - 2))} * 4096 + 2048 size 4096 owner gpu0")
        lines.append("alias_set v = [view, blk[*]]")
    lines.append(f"region flag in hbm at {n} * 4096 size 64 owner gpu0 init")
    lines.append("map cnt: array<u32, u64>[8] class per_device merge sum")
    lines.append("flow f {")
    names: list[str] = []  # families with an instance for every i in 0..n
    uses = draw(st.integers(1, 3))
    give = draw(st.sampled_from([None, *range(uses + 1)]))  # a family handing each block off, after that many uses
    for d in range(uses + 1):
        if d == give:
            choices = [f"{x}[i]" for x in names] + [f"{x}[*]" for x in names]
            refs = draw(st.lists(st.sampled_from(choices), max_size=2)) if choices else []
            after = f" after {', '.join(dict.fromkeys(refs))}" if refs else ""
            lines.append(f"  for i in 0..{n} {{")
            lines.append(f"    edge give[i]: read flag by gpu0.launch handoff blk[i]: gpu0 -> dpu0{after}")
            lines.append("  }")
            names.append("give")
        if d == uses:
            break
        target = draw(st.sampled_from(["blk[i]", "blk[i][0, +64]", "blk[0]", f"blk[(i + 1) % {n}]"]))
        action = draw(st.sampled_from(["read", "write"]))
        choices = [f"{x}[i]" for x in names] + [f"{x}[*]" for x in names] + [f"{x}[0]" for x in names]
        refs = draw(st.lists(st.sampled_from(choices), max_size=2)) if choices else []
        after = f" after {', '.join(dict.fromkeys(refs))}" if refs else ""
        after += draw(st.sampled_from(["", "", " update cnt[i] = 1", " update cnt[0] = 1", " update cnt[i % 2] = 1"]))
        branch = draw(st.sampled_from(["", "", f"i != {draw(st.integers(0, n - 1))}", "i % 2 == 0"]))
        lines.append(f"  for i in 0..{n} {{")
        if branch:
            lines.append(f"    if {branch} {{")
            lines.append(f"      edge u{d}[i]: {action} {target} by gpu0.launch{after}")
            lines.append("    } else {")
            lines.append(f"      edge u{d}[i]: read blk[0][0, +1] by gpu0.copy_done{after}")
            lines.append("    }")
        else:
            lines.append(f"    edge u{d}[i]: {action} {target} by gpu0.launch{after}")
        lines.append("  }")
        names.append(f"u{d}")
    for c in range(draw(st.integers(0, 2))):
        src = draw(st.sampled_from(names))
        ref = draw(st.sampled_from([f"{src}[i]", f"{src}[*]", f"{src}[i - 1]", f"{src}[i + 1]", f"{src}[0]"]))
        lo, hi = (1, n) if ref.endswith("i - 1]") else (0, n - 1) if ref.endswith("i + 1]") else (0, n)
        cond = draw(st.sampled_from(["", f"i != {draw(st.integers(lo, hi - 1))}"]))
        lines.append(f"  for i in {lo}..{hi} {{")
        lines.append(f"    if {cond or 'i >= 0'} {{")
        lines.append(f"      edge x{c}[i]: read blk[0][0, +1] by gpu0.copy_done after {ref}")
        lines.append("    }")
        lines.append("  }")
        names.append(f"x{c}")
    released = "view" if view and draw(st.booleans()) else "blk[j]"
    refs = draw(st.lists(st.sampled_from([f"{x}[j]" for x in names if x.startswith("u")] +
                                         [f"{x}[*]" for x in names] + [f"{x}[0]" for x in names if x.startswith("u")]),
                         min_size=0, max_size=3))
    after = f" after {', '.join(dict.fromkeys(refs))}" if refs else ""
    after += draw(st.sampled_from(["", " aggregate cnt[j]", " aggregate cnt[0]", " aggregate cnt[j % 2]"]))
    if released == "view":
        lines.append(f"  edge free: release view free by gpu0.free{after.replace('[j]', '[0]').replace('[j % 2]', '[1]')}")
    else:
        lines.append(f"  for j in 0..{n} {{")
        lines.append(f"    edge free[j]: release blk[j] free by gpu0.free{after}")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def assert_proved_orders_hold(policy) -> tuple[int, int]:
    """Every unrolled FX-OWN-004 pair (a use, a release), FX-OWN-002 pair (a use, a handoff) and
    FX-MAP-004 pair (a write of an entry, its ``aggregate``) whose declarations ``Orders`` proves
    ordered is HB-ordered in the unrolled graph (the use before the release; the use and the
    handoff one way or the other; the write before the aggregate); returns how many pairs were
    proved and how many compared."""
    ctx = Context(policy, PolicyGraph(policy))
    backend = open_backend(SolverOptions())
    try:
        orders = Orders(Parametric(policy, backend))
        spaces = {r.family: r.space for r in policy.regions}
        release = meeting(Shapes.of(policy), spaces, touched_refs, released_refs)
        transit = meeting(Shapes.of(policy), spaces, footprint_refs, handoff_refs)
        proved = compared = 0
        plain = Context(policy, PolicyGraph(policy))
        for ob in itertools.chain(ownership.generate(plain), maps.generate(plain)):
            code = getattr(ob, "code", None)
            if code == codes.OWN_004 and ob.edges[0] != ob.edges[1]:
                r, u = ob.edges[:2]
                claimed = orders.proved(codes.OWN_004, policy.edges[u].span, policy.edges[r].span, release)
                holds = ctx.graph.hb_before(u, r)
            elif code == codes.MAP_004 and len(ob.edges) == 2:
                r, w = ob.edges
                claimed = orders.proved(codes.MAP_004, policy.edges[w].span, policy.edges[r].span, same_entry)
                holds = ctx.graph.hb_before(w, r)
            elif code == codes.OWN_002:
                e, h = ob.edges[:2]
                claimed = orders.proved(codes.OWN_002, policy.edges[e].span, policy.edges[h].span, transit, either=True)
                holds = ctx.graph.ordered(e, h)
            else:
                continue
            compared += 1
            if claimed:
                proved += 1
                assert holds, f"{ob.key}: proved for every index value, but not HB-ordered"
        return proved, compared
    finally:
        backend.close()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(release_texts())
def test_every_order_proved_for_a_pair_of_declarations_holds_for_each_unrolled_pair(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None and PolicyGraph(policy).is_acyclic())
    proved, compared = assert_proved_orders_hold(policy)
    event(f"pairs proved: {'none' if not proved else 'all' if proved == compared else 'some'}")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(release_texts())
def test_verdicts_with_parametric_orders_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


# ---- fixed cases --------------------------------------------------------------------------------

CHAIN = OWN_HEAD + """region blk[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0
region flag in hbm at 0x100000 size 64 owner gpu0 init
flow f {
  for i in 0..4 {
    edge w[i]: write blk[i] by gpu0.launch
  }
  for i in 0..4 {
    if i != 2 {
      edge x[i]: read flag by gpu0.copy_done after w[i]
    }
  }
  for j in 0..4 {
    edge free[j]: release blk[j] free by gpu0.free after x[*]
  }
}
"""


def test_a_chain_through_every_instance_is_proved_and_one_with_a_gap_falls_back() -> None:
    # every x[i] but x[2] follows w[i], so w[2] is not ordered before free[2]: the unrolled
    # obligation is refuted, and the pair query is sat (falls back) with the gap's indices
    r = _check(CHAIN)
    assert [str(d.code) for d in r.diagnostics] == ["FX-OWN-004"]
    rows = {(f, before): (n, why) for f, _at, code, _pos, n, why, before in r.parametric if code == "FX-OWN-004"}
    assert rows[("w", "free")] == (4, "fails at w.i=2, free.j=2"), rows
    fixed = _check(CHAIN.replace("if i != 2", "if i >= 0"))
    assert not fixed.diagnostics
    rows = {(f, before): (n, why) for f, _at, code, _pos, n, why, before in fixed.parametric if code == "FX-OWN-004"}
    assert rows[("w", "free")] == (4, "")
    assert sum(1 for o in fixed.outcomes if o.code == "FX-OWN-004" and o.method == "parametric") == 4


def test_dropping_an_intermediate_s_domain_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    policy, _ = _load(CHAIN)
    real = orders_mod._domain
    # the intermediate's domain (prefix p<n>_<step>) dropped: x[2] would seem to exist
    monkeypatch.setattr(orders_mod, "_domain", lambda shape, sym, prefix: () if prefix.startswith("p") else real(shape, sym, prefix))
    with pytest.raises(AssertionError, match="not HB-ordered"):
        assert_proved_orders_hold(policy)


def test_a_reference_s_equation_left_out_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # free[j] follows x[j], which follows w[j + 1]: w[j] itself is before no release of blk[j]
    text = CHAIN.replace("if i != 2", "if i >= 0").replace("after w[i]", "after w[i + 1]").replace(
        "for i in 0..4 {\n    if", "for i in 0..3 {\n    if").replace("after x[*]", "after x[j]").replace(
        "for j in 0..4 {", "for j in 0..3 {")
    policy, _ = _load(text)
    assert assert_proved_orders_hold(policy) == (0, 3)
    monkeypatch.setattr(orders_mod, "eq", lambda a, b: and_())  # x's index is solved, w's equation dropped
    with pytest.raises(AssertionError, match="not HB-ordered"):
        assert_proved_orders_hold(policy)


def test_no_orders_are_asked_under_an_hb_cycle() -> None:
    text = CHAIN.replace("edge w[i]: write blk[i] by gpu0.launch", "edge w[i]: write blk[i] by gpu0.launch after free[i]")
    r = _check(text)
    assert not [p for p in r.parametric if p.code == "FX-OWN-004"]
