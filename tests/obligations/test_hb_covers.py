"""Parametric def-before-use (``obligations.hb_covers.Covers``): every instance of a read
declaration reads bytes that are ``init`` or that one write HB-before it defines, proved once for
every index value (FX-INIT-001).

The soundness property: every unrolled read whose declaration ``Covers`` proves has the unrolled
fast proof (``defined.Unwritten``, ``hb-cover``), on random families of writes (whole blocks,
halves, the next block, strided, moves from smaller sources, compressing moves, reductions, some
under ``if``), chains through intermediates (``w[i]``, ``w[i + 1]``, ``w[*]``, constants), reads
of whole blocks, parts, the next block, strided parts and ``init`` bytes, with or without an
``alloc`` or a ``cancel`` in the space. The verdicts with and without the prover are compared
too, and mutations (the containment left out, an intermediate's domain dropped, a compressing
move taken for one that keeps the length) are caught.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fxverify.graph import PolicyGraph
from fxverify.obligations import hb_covers as covers_mod
from fxverify.obligations import hb_orders as orders_mod
from fxverify.obligations.base import Context
from fxverify.obligations.defined import Unwritten, reads
from fxverify.obligations.hb_covers import Covers
from fxverify.obligations.parametric import Parametric
from fxverify.shapes import Shapes
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend
from fxverify.smt.terms import and_, free_vars, or_

from tests.obligations.test_parametric import _check, _load, _same_with_and_without_the_prover

HEAD = """policy "init"
fabric {
  device gpu0: gpu hooks [launch, copy_done, free, alloc]
}
space hbm on gpu0 size 16 MiB
space rom on gpu0 base 0x1000000 size 1 MiB init
"""


@st.composite
def read_texts(draw) -> str:
    """Blocks ``blk[0..n)`` (perhaps ``init``), sources of a whole block or half of one, bytes in
    an ``init`` space; one or two write families, each a whole block, half of one, the next
    block, a strided part, a move from a source, a compressing move or a reduction, perhaps under
    ``if``; perhaps intermediates after them; read families after a write or an intermediate by
    ``[i]``, ``[i + 1]``, ``[*]`` or a constant, of a whole block, a part, the next block, a
    strided part or ``init`` bytes, or a reduction into a block; perhaps an ``alloc`` of a block
    or a ``cancel`` of a write family."""
    n = draw(st.integers(2, 4))
    loaded = " init" if draw(st.integers(0, 4)) == 0 else ""
    pooled = not loaded and draw(st.integers(0, 5)) == 0
    lines = [HEAD + f"region blk[i in 0..{n}] in hbm at i * 4096 size 4096 owner gpu0{' pooled' if pooled else ''}{loaded}",
             f"region src[i in 0..{n}] in hbm at 0x100000 + i * 8192 size {draw(st.sampled_from([4096, 2048]))} owner gpu0 init",
             f"region c[i in 0..{n}] in rom at 0x1000000 + i * 4096 size 4096 owner gpu0",
             "region flag in hbm at 0x200000 size 64 owner gpu0 init",
             "flow f {"]
    writers: list[str] = []
    for k in range(draw(st.integers(1, 2))):
        act = draw(st.sampled_from(["write blk[i]", "write blk[i][0, +2048]", f"write blk[(i + 1) % {n}]",
                                    "write blk[i][0, elem 64, stride 128, count 32]", "move src[i] -> blk[i]",
                                    "move src[i] -> blk[i] |compress", "reduce(sum) src[i] -> blk[i]"]))
        act, _, xf = act.partition(" |")
        after = f" after {writers[-1]}[i]" if writers and draw(st.booleans()) else ""
        after += f" transform {xf}(lz4)" if xf else ""
        lines.append(f"  for i in 0..{n} {{")
        if draw(st.integers(0, 3)) == 0:
            lines.append(f"    if i != {draw(st.integers(0, n - 1))} {{")
            lines.append(f"      edge w{k}[i]: {act} by gpu0.launch{after}")
            lines.append("    }")
        else:
            lines.append(f"    edge w{k}[i]: {act} by gpu0.launch{after}")
        lines.append("  }")
        writers.append(f"w{k}")
    names = list(writers)
    if draw(st.booleans()):
        w = draw(st.sampled_from(writers))
        ref = draw(st.sampled_from([f"{w}[i]", f"{w}[i + 1]", f"{w}[*]", f"{w}[0]"]))
        hi = n - 1 if ref.endswith("i + 1]") else n
        lines.append(f"  for i in 0..{hi} {{")
        lines.append(f"    edge x[i]: read flag by gpu0.copy_done after {ref}")
        lines.append("  }")
        names.append("x")
    for k in range(draw(st.integers(1, 3))):
        src = draw(st.sampled_from(names))
        ref = draw(st.sampled_from([f"{src}[i]", f"{src}[i]", f"{src}[i + 1]", f"{src}[*]", f"{src}[0]", ""]))
        lo, hi = (0, n - 1) if ref.endswith("i + 1]") else (0, n)
        target = draw(st.sampled_from(["read blk[i]", "read blk[i][0, +64]", "read blk[i][2048, +64]",
                                       f"read blk[(i + 1) % {n}]", "read blk[0]", "read c[i]", "read c[i][64, +64]",
                                       "read blk[i][0, elem 64, stride 1024, count 3]", "reduce(sum) flag -> blk[i]"]))
        lines.append(f"  for i in {lo}..{hi} {{")
        lines.append(f"    edge r{k}[i]: {target} by gpu0.copy_done{' after ' + ref if ref else ''}")
        lines.append("  }")
    if pooled:
        lines.append("  edge take: alloc blk[0] to gpu0 by gpu0.alloc")
    if draw(st.integers(0, 5)) == 0:
        lines.append(f"  edge stop: cancel {writers[0]}[*] by gpu0.copy_done")
    lines.append("}")
    return "\n".join(lines) + "\n"


def assert_proved_covers_hold(policy) -> tuple[int, int]:
    """Every unrolled read access whose declaration ``Covers`` proves has the unrolled fast proof
    (``Unwritten.prove_fast``); returns how many read accesses were proved and how many there are."""
    backend = open_backend(SolverOptions())
    try:
        ctx = Context(policy, PolicyGraph(policy))
        covers = Covers(ctx, Parametric(policy, backend), Shapes.of(policy))
        plain = Context(policy, PolicyGraph(policy))
        proved = total = 0
        for e in policy.edges:
            for pos, a in enumerate(e.accesses()):
                if not reads(a):
                    continue
                total += 1
                if covers.proved(e.span, pos):
                    proved += 1
                    assert Unwritten(plain, e.eid, pos).prove_fast() == "hb-cover", \
                        f"{e.name}#{pos}: proved for every index value, but its bytes are not all defined before it"
        return proved, total
    finally:
        backend.close()


#: The policy generators: chains to single writes, and tiles behind two-dimensional intermediates.
TEXTS = pytest.mark.parametrize("texts", ["read_texts", "tile_texts"])


@TEXTS
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_read_proved_for_its_declaration_is_defined_at_each_unrolled_instance(texts: str, data: st.DataObject) -> None:
    policy, _diags = _load(data.draw(globals()[texts]()))
    assume(policy is not None and policy.edges and PolicyGraph(policy).is_acyclic())
    proved, total = assert_proved_covers_hold(policy)
    event(f"reads proved: {'none' if not proved else 'all' if proved == total else 'some'}")


@pytest.mark.slow
@TEXTS
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_verdicts_with_parametric_covers_equal_the_unrolled_ones(texts: str, data: st.DataObject) -> None:
    _same_with_and_without_the_prover(data.draw(globals()[texts]()))


# ---- fixed cases --------------------------------------------------------------------------------

BLOCKS = HEAD + """region blk[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0
region src[i in 0..4] in hbm at 0x100000 + i * 8192 size 4096 owner gpu0 init
region flag in hbm at 0x200000 size 64 owner gpu0 init
"""

HALF = BLOCKS + """flow f {
  for i in 0..4 {
    if i != 2 {
      edge w[i]: write blk[i] by gpu0.launch
    } else {
      edge w[i]: write blk[i][0, +2048] by gpu0.launch
    }
  }
  for i in 0..4 {
    edge x[i]: read flag by gpu0.copy_done after w[i]
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after x[i]
  }
}
"""


def _rows(r) -> dict[tuple[str, int], tuple[int, str]]:
    return {(f, pos): (n, why) for f, _at, code, pos, n, why, _before in r.parametric if code == "FX-INIT-001"}


def test_a_read_through_a_chain_is_proved_and_one_half_written_falls_back_and_is_refuted() -> None:
    r = _check(HALF)
    assert [str(d.code) for d in r.diagnostics] == ["FX-INIT-001"]
    assert _rows(r)[("r", 0)] == (4, "fails at r.i=2"), _rows(r)
    fixed = _check(HALF.replace("write blk[i][0, +2048]", "write blk[i]"))
    assert not fixed.diagnostics
    assert _rows(fixed)[("r", 0)] == (4, "")
    assert sum(1 for o in fixed.outcomes if o.code == "FX-INIT-001" and o.method == "parametric") == 8  # x and r


def _last(text: str, line: str) -> str:
    """``text`` with ``line`` added as the flow's last statement."""
    head, _, tail = text.rpartition("}")
    return f"{head}  {line}\n}}{tail}"


def test_init_bytes_are_proved_and_an_alloc_or_a_cancel_in_the_space_leaves_the_reads_unrolled() -> None:
    text = BLOCKS + """flow f {
  for i in 0..4 {
    edge w[i]: move src[i] -> blk[i] by gpu0.launch
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after w[i]
  }
}
"""
    r = _check(text)
    assert not r.diagnostics and _rows(r) == {("w", 0): (4, ""), ("r", 0): (4, "")}
    pooled = _last(text.replace("size 4096 owner gpu0\n", "size 4096 owner gpu0 pooled\n", 1),
                   "edge take: alloc blk[0] to gpu0 by gpu0.alloc after r[*]")
    got = _check(pooled)
    assert "`alloc` or a cancelled write" in _rows(got)[("r", 0)][1]
    cancelled = _last(text, "edge stop: cancel w[*] by gpu0.copy_done after r[*]")
    got = _check(cancelled)
    assert "`alloc` or a cancelled write" in _rows(got)[("r", 0)][1]


def test_a_compressing_move_defines_no_byte_and_is_no_cover() -> None:
    text = BLOCKS + """flow f {
  for i in 0..4 {
    edge w[i]: move src[i] -> blk[i] by gpu0.launch transform compress(lz4)
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after w[i]
  }
}
"""
    r = _check(text)
    assert "FX-INIT-001" in [str(d.code) for d in r.diagnostics]
    assert _rows(r)[("r", 0)][1].startswith("not `init`"), _rows(r)


def test_leaving_out_the_containment_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    policy, _ = _load(HALF)
    assert assert_proved_covers_hold(policy) == (4, 8)  # x's reads of `flag` (init); r[2] is half written
    monkeypatch.setattr(covers_mod, "_within", lambda *_bounds: and_())  # any write on a path would do
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(policy)


def test_dropping_an_intermediate_s_domain_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # x[1] follows no write (the other branch), so r[1] reads bytes nothing wrote before it
    text = HALF.replace("write blk[i][0, +2048]", "write blk[i]").replace(
        "    edge x[i]: read flag by gpu0.copy_done after w[i]",
        "    if i != 1 {\n      edge x[i]: read flag by gpu0.copy_done after w[i]\n    } else {\n"
        "      edge x[i]: read flag by gpu0.copy_done\n    }")
    policy, _ = _load(text)
    assert assert_proved_covers_hold(policy) == (3, 8)  # the `then` x's reads of `flag` (init) only
    monkeypatch.setattr(orders_mod, "domain", lambda shape, sym, label="": ())
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(policy)


def test_taking_compress_for_a_length_keeping_step_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    text = BLOCKS + """flow f {
  for i in 0..4 {
    edge w[i]: move src[i] -> blk[i] by gpu0.launch transform compress(lz4)
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after w[i]
  }
}
"""
    policy, _ = _load(text)
    assert assert_proved_covers_hold(policy) == (4, 8)  # the moves' init sources only
    monkeypatch.setattr(covers_mod, "_KEEPS_LENGTH", frozenset({"move", "checksum", "persist", "compress"}))
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(policy)


def test_every_cover_query_is_one_per_declaration_and_access() -> None:
    r = _check(HALF.replace("write blk[i][0, +2048]", "write blk[i]"))
    assert sorted(_rows(r)) == [("r", 0), ("x", 0)]
    assert all(n == 4 for n, _why in _rows(r).values())
    # one per read declaration, not per instance; none for `x`, a read of an `init` flag that
    # interval bounds keep inside its region
    assert r.solver_calls == 1


def test_a_move_from_a_smaller_source_taken_for_a_whole_write_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    text = BLOCKS.replace("0x100000 + i * 8192 size 4096", "0x100000 + i * 8192 size 2048") + """flow f {
  for i in 0..4 {
    edge w[i]: move src[i] -> blk[i] by gpu0.launch
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after w[i]
  }
}
"""
    policy, _ = _load(text)
    assert assert_proved_covers_hold(policy) == (4, 8)  # the moves' init sources; r reads 2048 bytes never written
    monkeypatch.setattr(covers_mod, "footprint_bytes", lambda *_args: 1)  # "source >= destination" always
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(policy)


def test_ignoring_an_unordered_alloc_in_the_space_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # the alloc of blk[0] may come between w[0] and r[0]: the bytes r[0] reads may be the next owner's
    text = _last(BLOCKS.replace("size 4096 owner gpu0\n", "size 4096 owner gpu0 pooled\n", 1) + """flow f {
  for i in 0..4 {
    edge w[i]: write blk[i] by gpu0.launch
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after w[i]
  }
}
""", "edge take: alloc blk[0] to gpu0 by gpu0.alloc")
    policy, _ = _load(text)
    assert assert_proved_covers_hold(policy) == (0, 4)
    made = Covers.__init__

    def blind(self, *args) -> None:
        made(self, *args)
        self.stale = set()

    monkeypatch.setattr(Covers, "__init__", blind)
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(policy)


# ---- tiles: one read defined by every instance a `*` names -------------------------------------


@st.composite
def tile_texts(draw) -> str:
    """Blocks ``blk[0..n)`` and a two-dimensional write family ``t[i, j]`` (``j`` in ``0..m``),
    each instance a tile of block ``i``: exact tiles, tiles with gaps, overlapping tiles that
    stop short, tiles in reverse order, tiles of the next block, moves from half-size sources,
    compressing moves, perhaps one tile left out (``if j != c``) or a second declaration of the
    family; perhaps a two-dimensional intermediate ``x[i, j]`` after ``t[i, *]`` or ``t[i, 0]``;
    reads of a whole block, its first or last bytes, or the next block, after ``t[i, *]``,
    ``t[*, *]``, ``x[i, *]`` or ``t[i, 0]``."""
    n, m = draw(st.integers(2, 3)), draw(st.sampled_from([2, 4]))
    size = 4096 // m
    tile = draw(st.sampled_from([f"blk[i][j * {size}, +{size}]", f"blk[i][j * {size}, +{size // 2}]",
                                 f"blk[i][j * {size // 2}, +{size}]", f"blk[i][({m - 1} - j) * {size}, +{size}]",
                                 f"blk[(i + 1) % {n}][j * {size}, +{size}]"]))
    act = draw(st.sampled_from([f"write {tile} by gpu0.launch", f"move half[j] -> {tile} by gpu0.launch",
                                f"move src[j] -> {tile} by gpu0.launch",
                                f"move src[j] -> {tile} by gpu0.launch transform compress(lz4)"]))
    lines = [HEAD + f"region blk[i in 0..{n}] in hbm at i * 4096 size 4096 owner gpu0",
             f"region src[j in 0..{m}] in hbm at 0x100000 + j * 4096 size {size} owner gpu0 init",
             f"region half[j in 0..{m}] in hbm at 0x180000 + j * 4096 size {size // 2} owner gpu0 init",
             "region flag in hbm at 0x200000 size 64 owner gpu0 init",
             "flow f {",
             f"  for i in 0..{n} {{",
             f"    for j in 0..{m} {{"]
    hole = draw(st.integers(0, 4))
    if hole < m and draw(st.booleans()):
        lines += [f"      if j != {hole} {{", f"        edge t[i, j]: {act}", "      }"]
    else:
        lines.append(f"      edge t[i, j]: {act}")
    lines += ["    }", "  }"]
    if draw(st.integers(0, 4)) == 0:  # the family has a second declaration: one more instance
        lines.append(f"  edge t[{n}, 0]: write flag by gpu0.launch")
    names = ["t[i, *]", "t[*, *]", "t[i, 0]"]
    if draw(st.booleans()):
        ref = draw(st.sampled_from(["t[i, *]", "t[i, 0]", "t[i, 1]"]))
        lines += [f"  for i in 0..{n} {{", f"    for j in 0..{m} {{"]
        if draw(st.integers(0, 3)) == 0:
            lines += ["      if j != 0 {", f"        edge x[i, j]: read flag by gpu0.copy_done after {ref}", "      }"]
        else:
            lines.append(f"      edge x[i, j]: read flag by gpu0.copy_done after {ref}")
        lines += ["    }", "  }"]
        names += ["x[i, *]", "x[i, 0]"]
    for k in range(draw(st.integers(1, 2))):
        target = draw(st.sampled_from(["blk[i]", "blk[i][0, +64]", "blk[i][4032, +64]", f"blk[(i + 1) % {n}]"]))
        lines += [f"  for i in 0..{n} {{", f"    edge r{k}[i]: read {target} by gpu0.copy_done after {draw(st.sampled_from(names))}",
                  "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


TILES = BLOCKS + """flow f {
  for i in 0..4 {
    for j in 0..4 {
      edge t[i, j]: write blk[i][j * 1024, +1024] by gpu0.launch
    }
  }
  for i in 0..4 {
    for j in 0..2 {
      edge x[i, j]: read flag by gpu0.copy_done after t[i, *]
    }
  }
  for i in 0..4 {
    edge r[i]: read blk[i] by gpu0.copy_done after x[i, *]
  }
}
"""


def test_a_read_defined_by_every_tile_a_star_names_is_proved_and_a_gap_falls_back() -> None:
    r = _check(TILES)
    assert not r.diagnostics and _rows(r)[("r", 0)] == (4, ""), _rows(r)
    gap = _check(TILES.replace("write blk[i][j * 1024, +1024]", "write blk[i][j * 1024, +512]"))
    assert [str(d.code) for d in gap.diagnostics] == ["FX-INIT-001"]
    assert _rows(gap)[("r", 0)][1] == "fails at r.i=0", _rows(gap)
    hole = _check(TILES.replace("      edge t[i, j]: write blk[i][j * 1024, +1024] by gpu0.launch",
                                "      if j != 3 {\n        edge t[i, j]: write blk[i][j * 1024, +1024] by gpu0.launch\n      }"))
    assert [str(d.code) for d in hole.diagnostics] == ["FX-INIT-001"] and _rows(hole)[("r", 0)][1] == "fails at r.i=0"


def test_dropping_the_tiling_or_the_existence_of_each_tile_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # the first and the last tile hold the read's ends, but not the bytes between the tiles
    gap, _ = _load(TILES.replace("write blk[i][j * 1024, +1024]", "write blk[i][j * 1024, +512]")
                   .replace("read blk[i] by", "read blk[i][0, +3584] by"))
    assert assert_proved_covers_hold(gap) == (8, 12)  # x's reads of `flag` (init) only
    real_between = covers_mod.between
    monkeypatch.setattr(covers_mod, "between", lambda x, lo, hi: or_())  # "for every b" holds of no b
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(gap)
    monkeypatch.setattr(covers_mod, "between", real_between)
    hole, _ = _load(TILES.replace("      edge t[i, j]: write blk[i][j * 1024, +1024] by gpu0.launch",
                                  "      if j != 3 {\n        edge t[i, j]: write blk[i][j * 1024, +1024] by gpu0.launch\n      }"))
    assert assert_proved_covers_hold(hole) == (8, 12)
    real_domain = covers_mod.domain
    monkeypatch.setattr(covers_mod, "domain", lambda shape, sym, label="": real_domain(shape, sym, label)[:len(shape.loops)])
    with pytest.raises(AssertionError, match="not all defined"):
        assert_proved_covers_hold(hole)


def test_a_reduction_five_steps_after_the_previous_layer_s_is_proved() -> None:
    # rs[l] reduces into `act`, which rs[l - 1] (or, for l = 0, `emb`) defined five `after` steps before
    text = HEAD + """region act in hbm at 0 size 4096 owner gpu0
region tmp in hbm at 0x10000 size 4096 owner gpu0
region flag in hbm at 0x20000 size 64 owner gpu0 init
flow f {
  edge emb: write act by gpu0.launch
  for l in 0..1 {
    edge q[l]: read flag by gpu0.launch after emb
  }
  for l in 1..4 {
    edge q[l]: read flag by gpu0.launch after rs[l - 1]
  }
  for l in 0..4 {
    for b in 0..2 {
      edge k[l, b]: read flag by gpu0.launch after q[l]
    }
    edge a[l]: write tmp by gpu0.launch after k[l, *]
    edge o[l]: read flag by gpu0.launch after a[l]
    edge rs[l]: reduce(sum) tmp -> act by gpu0.launch after o[l]
  }
}
"""
    r = _check(text)
    assert not r.diagnostics and _rows(r)[("rs", 1)] == (4, ""), _rows(r)
    broken = _check(text.replace("after rs[l - 1]", "after o[l - 1]").replace("edge emb: write act", "edge emb: write tmp"))
    assert "FX-INIT-001" in [str(d.code) for d in broken.diagnostics]


def test_each_tiles_disjunct_has_its_own_for_every_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Soundness of ``_tiles`` rests on each disjunct's "for every b" variables being its own: two
    tilings failing at different values of one shared variable would make the query unsat."""
    text = TILES.replace("  for i in 0..4 {\n    for j in 0..2 {", """  for i in 0..4 {
    for j in 0..4 {
      edge u[i, j]: write blk[i][j * 1024, +1024] by gpu0.launch after t[i, j]
    }
  }
  for i in 0..4 {
    for j in 0..2 {""", 1).replace("after t[i, *]", "after t[i, *], u[i, *]")
    asked: list = []
    real = covers_mod.decide
    monkeypatch.setattr(covers_mod, "decide", lambda prover, code, q: asked.append(q) or real(prover, code, q))
    r = _check(text)
    assert not r.diagnostics and _rows(r)[("r", 0)] == (4, ""), _rows(r)
    (query,) = [q for q in asked if q.name.startswith("FX-INIT-001:r#")]
    names = {v.name for v in free_vars([t for _, t in query.assertions]) if v.name.startswith("tiles")}
    assert len(names) == 4 and {n.rpartition(".")[2] for n in names} == {"every", "next"}, names
