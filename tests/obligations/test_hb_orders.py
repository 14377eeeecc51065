"""Parametric happens-before (``obligations.hb_orders``): a pair of declarations ordered for every
index value, and the FX-OWN-004, FX-OWN-002 and FX-MAP-004 obligations it proves at once.

The soundness property: every unrolled pair (a use and a release, a use and a handoff, a write
of a map entry and its ``aggregate``) whose declarations ``Orders`` proves ordered is ordered in
the unrolled HB graph (``graph.hb_before``), on random families of uses and updates, chains of
``after`` references (offsets, ``*``, branches), handoffs, and releases of blocks and
overlapping views. The verdicts with and without the prover are compared too, and
mutations of the path translation (an intermediate's domain dropped, an equation left out) are caught.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics import codes
from fxverify.graph import PolicyGraph
from fxverify.obligations import hb_orders as orders_mod
from fxverify.obligations import maps, ownership
from fxverify.obligations.base import Context
from fxverify.obligations.hb_orders import Orders, footprint_refs, handoff_refs, meeting, released_refs, same_entry, touched_refs
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
    block off (uses before and after it), strided footprints, leases, updates of a per-device
    map's entries, perhaps a two-dimensional family and a family labelled ``y[i + 1]`` after it,
    families ``after`` them by ``x[i]``, ``x[i - 1]``, ``x[i + 1]``, ``x[*]``, ``v[i, *]`` or a
    constant (some under ``if``), and a family
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
        target = draw(st.sampled_from(["blk[i]", "blk[i][0, +64]", "blk[0]", f"blk[(i + 1) % {n}]",
                                       "blk[i][64, elem 64, stride 1024, count 3]"]))
        action = draw(st.sampled_from(["read", "write"]))
        choices = [f"{x}[i]" for x in names] + [f"{x}[*]" for x in names] + [f"{x}[0]" for x in names]
        refs = draw(st.lists(st.sampled_from(choices), max_size=2)) if choices else []
        after = f" after {', '.join(dict.fromkeys(refs))}" if refs else ""
        after += draw(st.sampled_from(["", "", " update cnt[i] = 1", " update cnt[0] = 1", " update cnt[i % 2] = 1",
                                       " lease blk[i] to dpu0"]))
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
    if draw(st.booleans()):  # two dimensions, and a label with an offset: solved from either side
        src = draw(st.sampled_from(names))
        lines.append(f"  for i in 0..{n} {{")
        lines.append("    for k in 0..2 {")
        lines.append(f"      edge v[i, k]: read blk[i][k * 64, +64] by gpu0.copy_done after {src}[i]")
        lines.append("    }")
        lines.append("  }")
        lines.append(f"  for i in 0..{n - 1} {{")
        lines.append(f"    edge y[i + 1]: read flag by gpu0.copy_done after {draw(st.sampled_from(['v[i, *]', 'v[i, 1]', 'v[*, 0]']))}")
        lines.append("  }")
        lines.append(f"  for i in 1..{n} {{")
        lines.append(f"    edge z[i]: read flag by gpu0.copy_done after {draw(st.sampled_from(['y[i]', 'y[*]']))}")
        lines.append("  }")
        names += ["v", "y", "z"]
    for c in range(draw(st.integers(0, 2))):
        src = draw(st.sampled_from([x for x in names if x not in ("v", "y", "z")]))
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
                                         [f"{x}[*]" for x in names] + [f"{x}[0]" for x in names if x.startswith("u")] +
                                         (["v[j, *]", "v[*, 0]", "v[j, 1]"] if "v" in names else [])),
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

#: Four blocks and a flag every family may read.
BLOCKS = OWN_HEAD + """region blk[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0
region flag in hbm at 0x100000 size 64 owner gpu0 init
"""

CHAIN = BLOCKS + """flow f {
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
    assert assert_proved_orders_hold(policy) == (0, 4)
    # the intermediates' domains dropped (the ends' come from ``family_terms``): x[2] would seem to exist
    monkeypatch.setattr(orders_mod, "domain", lambda shape, sym, label="": ())
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


TRANSIT = BLOCKS + """flow f {
  for i in 0..4 {
    edge w[i]: write blk[i] by gpu0.launch
  }
  for i in 0..4 {
    edge give[i]: read flag by gpu0.launch handoff blk[i]: gpu0 -> dpu0 after w[i]
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by dpu0.rx after give[i]
  }
}
"""


def _pairs(r, code: str) -> dict[tuple[str, str], tuple[int, str]]:
    return {(f, before): (n, why) for f, _at, c, _pos, n, why, before in r.parametric if c == code}


def test_a_use_and_a_handoff_are_ordered_either_way_round() -> None:
    # w[i] before give[i], and give[i] before r[i]: the second pair is reported the other way round
    r = _check(TRANSIT)
    assert not r.diagnostics
    assert _pairs(r, "FX-OWN-002") == {("w", "give"): (4, ""), ("give", "r"): (4, "")}
    # r[i] waits for the next block's handoff, not its own: no order either way for that pair
    gap = _check(TRANSIT.replace("after give[i]", "after give[(i + 1) % 4]"))
    assert "FX-OWN-002" in {str(d.code) for d in gap.diagnostics}
    (row,) = [v for k, v in _pairs(gap, "FX-OWN-002").items() if "r" in k]
    assert row[1].startswith("no chain") and "; the other way round, fails at" in row[1], row


AGGREGATE = BLOCKS + """map cnt: array<u32, u64>[8] class per_device merge sum
flow f {
  for i in 0..4 {
    edge u[i]: write blk[i] by gpu0.launch update cnt[i % 2] = 1
  }
  for j in 0..2 {
    edge agg[j]: read flag by gpu0.launch after u[*] aggregate cnt[j]
  }
}
"""


def test_the_writes_of_an_entry_before_its_aggregate_are_proved_per_pair() -> None:
    r = _check(AGGREGATE)
    assert not r.diagnostics
    assert _pairs(r, "FX-MAP-004") == {("u", "agg"): (4, "")}
    early = _check(AGGREGATE.replace("after u[*]", "after u[j]"))  # u[2] and u[3] are not waited for
    assert [str(d.code) for d in early.diagnostics] == ["FX-MAP-004"]
    assert _pairs(early, "FX-MAP-004")[("u", "agg")][1].startswith("fails at")


SHIFTED = BLOCKS + """flow f {
  for i in 0..4 {
    edge w[i]: write blk[i] by gpu0.launch
  }
  for i in 0..3 {
    edge y[i + 1]: read flag by gpu0.copy_done after w[i]
  }
  for j in 1..4 {
    edge free[j]: release blk[j - 1] free by gpu0.free after y[j]
  }
}
"""


def test_an_intermediate_labelled_with_an_offset_is_solved_from_its_label() -> None:
    # free[j] follows y[j], which is the instance y[i + 1] with i = j - 1, after w[j - 1]
    r = _check(SHIFTED)
    assert not r.diagnostics
    assert _pairs(r, "FX-OWN-004") == {("w", "free"): (3, "")}
    policy, _ = _load(SHIFTED)
    assert assert_proved_orders_hold(policy) == (3, 3)


def test_no_orders_are_asked_under_an_hb_cycle_for_any_code() -> None:
    cycle = "  edge c1: read flag by gpu0.launch after c2\n  edge c2: read flag by gpu0.launch after c1\n}\n"
    for text in (TRANSIT, AGGREGATE, CHAIN):
        r = _check(text.removesuffix("}\n") + cycle)
        assert "FX-ORD-001" in {str(d.code) for d in r.diagnostics}
        assert not [p for p in r.parametric if p.before], text


def test_pairs_are_shown_in_text_json_and_records(tmp_path) -> None:
    from typer.testing import CliRunner

    from fxverify.cli import app
    from fxverify.gate.serialize import result_from_record, result_to_record
    from tests.test_schemas import validate

    path = tmp_path / "chain.fx"
    path.write_text(CHAIN)
    run = CliRunner().invoke(app, ["check", str(path), "--stats", "--no-cache"], catch_exceptions=False)
    assert "FX-OWN-004: 0 of 1 declaration pairs proved" in run.stdout
    assert "unrolled `w` before `free` (" in run.stdout and "FX-OWN-004: fails at w.i=2, free.j=2" in run.stdout
    run = CliRunner().invoke(app, ["check", str(path), "--stats", "--no-cache", "--format", "json"], catch_exceptions=False)
    doc = json.loads(run.stdout)
    validate(doc, "report")
    assert {p["before"] for p in doc["results"][0]["parametric"] if "before" in p} == {"free"}
    r = _check(TRANSIT)
    back = result_from_record(json.loads(json.dumps(result_to_record(r))), r.sources)
    assert back.parametric == r.parametric and any(p.before for p in back.parametric)
