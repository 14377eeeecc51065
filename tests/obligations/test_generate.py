"""``obligations.generate``: every family in discharge order, obligations that a cyclic HB makes
vacuous left out, and repeated keys dropped (hand-built IR)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fxverify.diagnostics.codes import OBLIGATION_FAMILIES
from fxverify.graph import PolicyGraph
from fxverify.ir import Compress, Footprint, Handoff
from fxverify.obligations.base import Context
from fxverify.obligations.families import DONE_WITH, FAMILIES, generate, obligations
from fxverify.obligations.alias import Bounds
from fxverify.obligations.pairs import meeting_pairs
from fxverify.obligations.hooks import NoPath, UndeclaredHook
from fxverify.obligations.maps import LocalMap, PerDeviceRead
from fxverify.obligations.ordering import HbCycle, InOrder
from fxverify.obligations.ownership import BadHandoff
from fxverify.obligations.transforms import ChecksumChain, Layout, Overflow

from fxverify.resolve import load_policy
from fxverify.source import SourceMap

from tests.ir_builders import A, B, POOL, edge, fp, handoff, mapop, move, policy, read, write

ROOT = Path(__file__).resolve().parents[2]


def cyclic():
    # w0 and w1 wait for each other (and would race on a[0x00, 0x40)); the other edges carry one
    # schedule-free obligation each, and a few schedule-dependent ones.
    return policy(
        write("w0", fp(A, 0x0, 0x40), after=("w1",), map_ops=(mapop("cnt", "update"), mapop("lin", "write"))),
        write("w1", fp(A, 0x0, 0x40), device="dpu0", hook="rx", after=("w0",),
              map_ops=(mapop("loc", "read"), mapop("cnt", "update"), mapop("lin", "write"))),
        move("m", fp(A, 0x40, 0x40), fp(POOL, 0x8000_0000, 0x40), require_in_order=True,
             transforms=(Compress("lz4"),), handoffs=handoff(POOL, "gpu0", "cxl0")),
        edge("r", "read", "gpu0", "launch", src=fp(B, 0x100, 0x10), map_ops=(mapop("cnt", "read"),)),
    )


def test_cyclic_hb_keeps_only_the_cycle_and_schedule_free_obligations() -> None:
    _ctx, obs = generate(cyclic())
    kinds = {(type(o).__name__, o.key) for o in obs}
    assert ("HbCycle", "FX-ORD-001:w0") in kinds
    assert all(o.schedule_free or type(o) is HbCycle for o in obs), sorted(kinds)
    assert {type(o) for o in obs} == {HbCycle, InOrder, Bounds, LocalMap, PerDeviceRead, Overflow, ChecksumChain,
                                      Layout, NoPath, UndeclaredHook}
    # The plain per-device read (schedule-free) is kept: w1 on dpu0 writes the entry r reads on gpu0.
    assert [o.key for o in obs if type(o) is PerDeviceRead] == ["FX-MAP-004:r#0|cnt[0]"]


def test_acyclic_keeps_every_family_in_discharge_order() -> None:
    pol = policy(*(replace(e, after=()) for e in cyclic().edges))
    _ctx, obs = generate(pol)
    families = [o.family.value for o in obs]
    order = ["ordering", "alias", "ownership", "maps", "transforms", "hooks"]
    assert families == sorted(families, key=order.index)
    assert set(families) == set(order)
    assert [o.key for o in obs if o.key.startswith("FX-ORD-001")] == ["FX-ORD-001:policy"]


def test_repeated_key_is_generated_once() -> None:
    # Two identical handoff clauses on one edge state the same FX-OWN-003 property twice.
    pol = policy(read("h", fp(A, 0x0, 0x40), handoffs=(Handoff("a", "gpu0", "dpu0"),) * 2))
    _ctx, obs = generate(pol)
    assert [o.key for o in obs if type(o) is BadHandoff] == ["FX-OWN-003:h|a"]
    assert len({o.key for o in obs}) == len(obs)


@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 40), st.integers(1, 12), st.booleans()), max_size=12),
       st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 40), st.integers(1, 12), st.booleans()), max_size=12))
def test_meeting_pairs_is_the_nested_hull_test(left, right) -> None:
    # The sweep join that finds which writes can meet which reads (intents, checksums) must give
    # exactly the pairs of the n*m nested test it replaces, in the same order.
    def fps(items):
        return [None if none else Footprint("r", space, lo, size, size, 1) for space, lo, size, none in items]
    a, b = fps(left), fps(right)
    want = [(i, j) for i, x in enumerate(a) for j, y in enumerate(b)
            if x is not None and y is not None and x.space == y.space and x.lo < y.hi and y.lo < x.hi]
    assert meeting_pairs(a, b) == want


def _present(ctx, names) -> set[str]:
    return {n for n in names if n in ctx.__dict__}


def test_a_family_drops_the_caches_no_later_family_reads() -> None:
    """``DONE_WITH`` names caches that its family really builds (a renamed cache would silently
    stay), that are gone once the family is done, and that no later family builds again (which
    would hold the memory and pay the time twice)."""
    names = {n for ns in DONE_WITH.values() for n in ns}
    built: set[str] = set()
    posted = "corpus/ordering/ok/posted-read-after-flush.fx"
    pool = "corpus/ownership/ok/pool-slot-handed-out-before-free.fx"
    for path, indexed in (("corpus/alias/ok/block-index-in-bounds.fx", True), (posted, True), (posted, False),
                          (pool, True)):
        pol, _diags = load_policy(str(ROOT / path), SourceMap())
        assert pol is not None
        g = PolicyGraph(pol)
        if not indexed:
            g.indexed = lambda: False  # as over its budget: FX-ORD-002 sweeps the access history
        ctx = Context(pol, g)
        dropped: set[str] = set()
        for family in OBLIGATION_FAMILIES:
            for ob in obligations(ctx, [family]):
                ob.prove_fast()
                built |= _present(ctx, names)
                assert not _present(ctx, dropped), f"{family.name} rebuilt a cache an earlier family dropped"
            dropped |= set(DONE_WITH.get(family, ()))
            assert not _present(ctx, dropped)
    assert built == names


def test_keys_claimed_unique_are_made_once_on_every_corpus_policy() -> None:
    """``unique_key`` lets generation skip remembering a key to drop repeats; a class that claims
    it but makes a key twice would put two outcomes under one key. Every corpus policy and a real one,
    every family, generated without the drop."""
    classes: set[str] = set()
    for path in sorted((ROOT / "corpus").glob("*/*/*.fx")) + [ROOT / "corpus/real/mixtral-8x7b-tp2-ndv5.fx"]:
        pol, _diags = load_policy(str(path), SourceMap())
        if pol is None:
            continue
        ctx = Context(pol, PolicyGraph(pol))
        seen: set[str] = set()
        for family in OBLIGATION_FAMILIES:
            for ob in FAMILIES[family].generate(ctx):
                if ob.unique_key:
                    assert ob.key not in seen, f"{path.name}: {ob.key} made twice"
                    seen.add(ob.key)
                    classes.add(type(ob).__name__)
    assert {"Bounds", "UndeclaredHook", "Overflow", "Layout", "Race"} <= classes
