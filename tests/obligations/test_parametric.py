"""Parametric proofs (``obligations.parametric``): FX-ALIAS-003 and FX-HOOK-002 discharged once per
edge declaration.

Soundness rests on two things, each tested against the unrolled policy the resolver builds:

- the translation: every term (the footprint's ``lo``/``hi``, the region instance's ``base``/
  ``end``) evaluated at the loop values of each instance equals the unrolled instance's, and the
  domain (loops and branches) holds exactly as many points as the declaration has instances;
- the verdicts: a check with the parametric prover has the same outcomes (keys and verdicts)
  and the same diagnostics as one without it.

Random policies are written as text (families with affine, ``/``/``%`` and non-affine index
expressions, slices of every form, branches), since shapes exist only for resolved text.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fxverify.obligations import parametric
from fxverify.obligations.parametric import METHOD, Parametric
from fxverify.obligations.symbolic import NotAffine, family_terms, footprint_terms
from fxverify.pipeline import CheckOptions, check
from fxverify.resolve import load_policy
from fxverify.shapes import Shapes
from fxverify.smt.backend import SolverOptions, Status
from fxverify.smt.factory import open_backend
from fxverify.smt.terms import Term, evaluate
from fxverify.source import SourceMap

ROOT = Path(__file__).resolve().parents[2]
FAKE = os.path.realpath(str(ROOT / "tests" / "parametric-generated.fx"))

HEAD = """policy "par"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm on gpu0 size 16 MiB
"""

MIXED = HEAD + """region blk[i in 0..8] in hbm at i * 4096 size 4096 owner gpu0
region sq[i in 0..4] in hbm at 0x100000 + i * i * 64 size 64 owner gpu0
flow f {
  for i in 0..8 {
    edge w[i]: write blk[i][i * 256, +256] by gpu0.launch
  }
  for i in 0..4 {
    edge s[i]: write sq[i] by gpu0.launch
  }
  for i in 0..8 {
    if i % 2 == 0 {
      edge r[i]: read blk[i][0, +256] by gpu0.launch after w[i]
    } else {
      edge r[i]: read blk[i][i * 512, +600] by gpu0.launch after w[i]
    }
  }
}
"""


def _load(text: str):
    policy, diags = load_policy(FAKE, SourceMap(), texts={FAKE: text})
    return policy, diags


def _check(text: str, parametric: bool = True):
    """Check ``text`` with or without the parametric prover. Fix hints are not verified: no test
    here reads them, and verifying them (re-checking each edited policy) took nine tenths of a
    refuted policy's check."""
    return check(FAKE, CheckOptions(parametric=parametric, verify_hints=False), texts={FAKE: text})


def _value(t: Term | int, env: dict[str, int]) -> int | bool | None:
    return t if isinstance(t, int) else evaluate(t, env)


def assert_terms_match_instances(policy) -> int:
    """Every translated term at every instance's loop values equals the unrolled value; returns
    how many (instance, footprint) pairs were compared."""
    shapes = Shapes.of(policy)
    if not policy.edges:
        return 0  # nothing unrolled, no shapes kept
    assert shapes is not None
    compared = 0
    for span, shape in shapes.edges.items():
        instances = [e for e in policy.edges if e.span == span]
        try:
            fam = family_terms(shape)
        except NotAffine:
            continue
        points = []
        for values in itertools.product(*(range(lp.lo, lp.hi) for lp in shape.loops)):
            env = {f"i_{lp.var}": v for lp, v in zip(shape.loops, values)}
            if all(_value(t, env) for _n, t in fam.domain):
                points.append(env)
        assert len(points) == len(instances), shape.name
        refs = [r for r in (shape.src, shape.dst) if r is not None]
        for env, e in zip(points, instances):
            for pos, ref in enumerate(refs):
                try:
                    lo, hi, base, end, facts = footprint_terms(ref, shapes.regions, fam.sym)
                except NotAffine:
                    continue
                fp = e.accesses()[pos].footprint
                region = policy.region(fp.region)
                got = tuple(_value(t, env) for t in (lo, hi, base, end))
                assert got == (fp.lo, fp.hi, region.base, region.end), (e.name, pos, got)
                assert all(_value(t, env) for _n, t in facts), e.name
                compared += 1
    return compared


def _outcomes(r) -> list[tuple[str, str]]:
    """Every outcome's key and verdict, in order: parametric proofs keep the unrolled order."""
    return [(o.key, o.verdict.value) for o in r.outcomes]


def _findings(r) -> list[tuple[str, str, str]]:
    return [(str(d.code), d.obligation or "", d.message) for d in r.diagnostics]


def _same_with_and_without_the_prover(text: str) -> None:
    """A check of ``text`` with the prover has the outcomes (keys, verdicts, in order) and the
    diagnostics of one without it (an input error is assumed away)."""
    on = _check(text)
    assume(not on.input_error)
    off = _check(text, parametric=False)
    assert _outcomes(on) == _outcomes(off)
    assert _findings(on) == _findings(off)


# ---- one policy, every case -----------------------------------------------------------------


def test_mixed_families_are_proved_where_affine_and_true_and_unrolled_elsewhere() -> None:
    r = _check(MIXED)
    rows = {(f, int(at.split(":")[-2]), pos): (n, why) for f, at, code, pos, n, why, _before in r.parametric if code == "FX-ALIAS-003"}
    assert rows == {
        ("w", 10, 0): (8, ""),
        ("s", 13, 0): (4, "not affine: a product of two index expressions"),
        ("r", 17, 0): (4, ""),
        ("r", 19, 0): (4, "fails at i=7"),  # the smallest odd i with i * 512 + 600 > 4096
    }
    counts = r.counts()["alias"]
    assert counts[f"by:{METHOD}"] == 12  # w (8) and the even r (4)
    refuted = [o.key for o in r.outcomes if o.verdict.value == "refuted" and o.code == "FX-ALIAS-003"]
    assert refuted == ["FX-ALIAS-003:r[7]#0"]
    plain = _check(MIXED, parametric=False)
    assert _outcomes(r) == _outcomes(plain) and _findings(r) == _findings(plain)
    assert f"by:{METHOD}" not in plain.counts()["alias"] and plain.parametric == ()


def test_a_hook_is_proved_once_per_declaration_and_an_undeclared_one_unrolled() -> None:
    text = MIXED.replace("by gpu0.launch after w[i]\n    }\n  }", "by gpu0.lunch after w[i]\n    }\n  }")
    r = _check(text)
    rows = {(f, int(at.split(":")[-2])): (n, why) for f, at, code, _pos, n, why, _before in r.parametric if code == "FX-HOOK-002"}
    assert rows == {("w", 10): (8, ""), ("s", 13): (4, ""), ("r", 17): (4, ""),
                    ("r", 19): (4, "`lunch` is not declared on `gpu0`")}
    refuted = [o.key for o in r.outcomes if o.verdict.value == "refuted" and o.code == "FX-HOOK-002"]
    assert refuted == [f"FX-HOOK-002:r[{i}]" for i in (1, 3, 5, 7)]
    plain = _check(text, parametric=False)
    assert _outcomes(r) == _outcomes(plain) and _findings(r) == _findings(plain)


def test_skipped_codes_get_no_parametric_proofs() -> None:
    r = check(FAKE, CheckOptions(skip_codes=frozenset({"FX-HOOK-002"})), texts={FAKE: MIXED})
    assert {code for _f, _at, code, *_ in r.parametric} == {"FX-ALIAS-003", "FX-INIT-001", "FX-OWN-001"}
    assert "hooks" not in r.counts() or "by:parametric" not in r.counts()["hooks"]
    r = check(FAKE, CheckOptions(skip_codes=frozenset({"FX-OWN-001", "FX-INIT-001"})), texts={FAKE: MIXED})
    assert {code for _f, _at, code, *_ in r.parametric} == {"FX-ALIAS-003", "FX-HOOK-002"}
    assert "by:parametric" not in r.counts().get("ownership", {})
    moves = HEAD + """region s[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0 dtype bf16
region d[i in 0..4] in hbm at 0x100000 + i * 8192 size 8192 owner gpu0
flow f {
  for i in 0..4 {
    edge m[i]: move s[i] -> d[i] by gpu0.launch transform compress(lz4)
  }
}
"""
    assert {c for _f, _at, c, *_ in _check(moves).parametric} >= {"FX-XF-001", "FX-XF-002", "FX-XF-003"}
    # One transform code left out: the others are discharged per instance (their proofs are one argument).
    r = check(FAKE, CheckOptions(skip_codes=frozenset({"FX-XF-002"})), texts={FAKE: moves})
    assert not {c for _f, _at, c, *_ in r.parametric} & {"FX-XF-001", "FX-XF-002", "FX-XF-003"}
    assert "by:parametric" not in r.counts()["transforms"]
    assert not any(o.code == "FX-XF-002" for o in r.outcomes)


def test_terms_of_the_mixed_policy_match_its_instances() -> None:
    policy, diags = _load(MIXED)
    assert policy is not None, diags
    assert assert_terms_match_instances(policy) == 8 + 8  # w and r (s is not affine)


def test_a_wrong_translation_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: with ``-`` translated as ``+``, it finds the instance."""
    from fxverify.obligations import symbolic
    text = HEAD + """region blk[i in 0..8] in hbm at 0x10000 - i * 4096 size 4096 owner gpu0
flow f {
  for i in 0..8 {
    edge w[i]: write blk[i] by gpu0.launch
  }
}
"""
    policy, _ = _load(text)
    assert assert_terms_match_instances(policy) == 8
    monkeypatch.setattr(symbolic, "sub", symbolic.add)
    with pytest.raises(AssertionError):
        assert_terms_match_instances(policy)


def test_single_instances_and_edited_policies_are_left_unrolled() -> None:
    text = HEAD + """region a in hbm at 0 size 4096 owner gpu0
flow f {
  edge w: write a by gpu0.launch
  for i in 0..1 {
    edge v[i]: write a[i * 8, +8] by gpu0.launch after w
  }
}
"""
    r = _check(text)
    assert r.parametric == () and f"by:{METHOD}" not in r.counts()["alias"]
    policy, _ = _load(MIXED)
    assert Shapes.of(policy) is not None
    assert Shapes.of(replace(policy, edges=policy.edges[:-1])) is None
    assert Shapes.of(replace(policy, regions=policy.regions[:-1] + policy.regions[-1:])) is None  # equal, not the same


def test_parametric_queries_are_unsat_for_cvc5_too() -> None:
    """Each proof is a solver query; an independent solver re-checks them (the 8B policy's)."""
    policy, _ = load_policy(str(ROOT / "corpus" / "real" / "llama-3.1-8b-prefill.fx"), SourceMap())
    shapes = Shapes.of(policy)
    prover = Parametric(policy, None)  # type: ignore[arg-type]  # asks nothing: the queries are only built
    queries = [q for _k, q in prover.bounds_queries(shapes.edges) if not isinstance(q, str)]
    assert len(queries) >= 20
    cvc5 = open_backend(SolverOptions(solver="cvc5"))
    try:
        assert {r.status for r in cvc5.check_many(queries)} == {Status.UNSAT}
    finally:
        cvc5.close()


# ---- random families --------------------------------------------------------------------------


@st.composite
def family_texts(draw) -> str:
    """A policy of one region family (1 or 2 dimensions, affine placement, possibly with ``/`` and
    ``%``) and up to three edge declarations over it, in loops and branches, with footprints of
    every form. Index expressions may leave the family's range (an input error: assumed away)
    and footprints their regions (refuted)."""
    n = draw(st.integers(2, 6))
    two = draw(st.booleans())
    m = draw(st.integers(1, 3)) if two else 1
    size = draw(st.sampled_from([64, 256, 4096]))
    gap = draw(st.sampled_from([0, 64, 4096]))
    if two:
        at = f"0x1000 + i * {(size + gap) * m} + j * {size + gap}"
        params = f"i in 0..{n}, j in 0..{m}"
    elif draw(st.booleans()):
        at = f"0x1000 + (i / 2) * {2 * (size + gap)} + (i % 2) * {size + gap}"
        params = f"i in 0..{n}"
    else:
        at = f"0x1000 + i * {size + gap}"
        params = f"i in 0..{n}"
    lines = [HEAD + f"region blk[{params}] in hbm at {at} size {size} owner gpu0", "flow f {"]

    def index(var: str) -> str:
        return draw(st.sampled_from([var, f"{var} / 2", f"({var} + 1) % {n}", f"{n - 1} - {var}"]))

    def ref(var: str) -> str:
        idx = f"blk[{index(var)}, {draw(st.integers(0, m - 1))}]" if two else f"blk[{index(var)}]"
        form = draw(st.sampled_from(["whole", "len", "strided", "strided-var", "nonaffine"]))
        k = draw(st.sampled_from([0, 8, 32, 64]))
        if form == "whole":
            return idx
        if form == "len":
            return f"{idx}[{var} * {k}, +{draw(st.sampled_from([8, 64, size - 32, size]))}]"
        if form == "strided":
            return f"{idx}[{k}, elem 8, stride {draw(st.sampled_from([8, 16, 32]))}, count {draw(st.integers(1, 4))}]"
        if form == "strided-var":
            return f"{idx}[{var} * 8, elem 8, stride 16, count {var} + 1]"
        return f"{idx}[{var} * {var}, +8]"

    def hook() -> str:
        return draw(st.sampled_from(["launch", "launch", "launch", "copy_done"]))  # copy_done: undeclared

    for d in range(draw(st.integers(1, 3))):
        lo = draw(st.integers(0, n - 2))
        hi = draw(st.integers(lo + 2, n))
        lines.append(f"  for i{d} in {lo}..{hi} {{")
        action = draw(st.sampled_from(["write", "read"]))
        if draw(st.booleans()):
            k = draw(st.integers(2, 3))
            lines.append(f"    if i{d} % {k} == {draw(st.integers(0, k - 1))} {{")
            lines.append(f"      edge e{d}[i{d}]: {action} {ref(f'i{d}')} by gpu0.{hook()}")
            lines.append("    } else {")
            lines.append(f"      edge e{d}[i{d}]: {action} {ref(f'i{d}')} by gpu0.{hook()}")
            lines.append("    }")
        else:
            lines.append(f"    edge e{d}[i{d}]: {action} {ref(f'i{d}')} by gpu0.{hook()}")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family_texts())
def test_translated_terms_agree_with_every_unrolled_instance(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None)
    assert_terms_match_instances(policy)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family_texts())
def test_parametric_verdicts_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


# ---- branches: the domain is exactly the instances ----------------------------------------------

_CMP = ("==", "!=", "<", "<=", ">", ">=")


@st.composite
def branch_texts(draw) -> str:
    """One to three nested loops (ranges may be negative or empty) around ``if``/``else if``/``else``
    trees of edge declarations, each family indexed by every loop variable. Conditions use every
    comparator, ``and``/``or``/``not`` and parentheses over expressions with unary minus, ``/`` and
    ``%`` (of negative values too), products by constants, sizes with units and, now and then, a
    product of two indices (not affine). Each edge reads ``a[v * 8, +8]`` of a 40-byte region, so a
    domain that is too large or too small changes FX-ALIAS-003's verdicts."""
    names = ["i", "j", "k"][: draw(st.integers(1, 3))]
    loops = []
    for v in names:
        lo = draw(st.integers(-4, 3))
        loops.append((v, lo, lo + draw(st.integers(0, 5))))

    def expr(depth: int) -> str:
        v = draw(st.sampled_from(names))
        forms = ["var", "int", "neg", "div", "mod", "mul", "unit"] + (["sum", "diff", "paren"] if depth else []) + ["square"]
        form = draw(st.sampled_from(forms))
        if form == "var":
            return v
        if form == "int":
            n = draw(st.integers(-3, 6))
            return str(n) if n >= 0 else f"-{-n}"
        if form == "neg":
            return f"-{v}"
        if form in ("div", "mod"):
            return f"{v} {'/' if form == 'div' else '%'} {draw(st.integers(1, 3))}"
        if form == "mul":
            return f"{draw(st.integers(-2, 3))} * {v}" if draw(st.booleans()) else f"{v} * {draw(st.integers(0, 3))}"
        if form == "unit":
            return f"{v} * 512 + {draw(st.sampled_from(['1 KiB', '0 B', '2 KiB']))}"
        if form == "square":
            return f"{v} * {draw(st.sampled_from(names))}"
        if form == "paren":
            return f"({expr(depth - 1)})"
        return f"{expr(depth - 1)} {'+' if form == 'sum' else '-'} {expr(depth - 1)}"

    def cond(depth: int) -> str:
        form = draw(st.sampled_from(["cmp", "cmp", "and", "or", "not"] if depth else ["cmp"]))
        if form == "cmp":
            return f"{expr(1)} {draw(st.sampled_from(_CMP))} {expr(1)}"
        if form == "not":
            return f"not ({cond(depth - 1)})"
        return f"({cond(depth - 1)}) {form} {cond(depth - 1)}"

    counter = itertools.count()

    def leaf(pad: str) -> list[str]:
        v = draw(st.sampled_from(names))
        idx = "".join(f"[{n}]" for n in names)
        return [f"{pad}edge e{next(counter)}{idx}: read a[{v} * 8, +8] by gpu0.launch"]

    def block(pad: str, depth: int) -> list[str]:
        out: list[str] = []
        for _ in range(draw(st.integers(1, 2))):
            if depth and draw(st.booleans()):
                out.append(f"{pad}if {cond(2)} {{")
                out += block(pad + "  ", depth - 1)
                while draw(st.booleans()):
                    out.append(f"{pad}}} else if {cond(2)} {{")
                    out += block(pad + "  ", depth - 1)
                if draw(st.booleans()):
                    out.append(f"{pad}}} else {{")
                    out += block(pad + "  ", depth - 1)
                out.append(f"{pad}}}")
            else:
                out += leaf(pad)
        return out

    lines = [HEAD + "region a in hbm at 0 size 40 owner gpu0", "flow f {"]
    pad = "  "
    for v, lo, hi in loops:
        lines.append(f"{pad}for {v} in {lo}..{hi} {{")
        pad += "  "
    lines += block(pad, 2)
    for _ in loops:
        pad = pad[:-2]
        lines.append(f"{pad}}}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def assert_domains_are_the_instances(policy) -> int:
    """Each declaration's domain (its loops and branches, translated) holds exactly the index
    tuples the resolver built instances for; returns how many declarations were compared."""
    shapes = Shapes.of(policy)
    if shapes is None:
        return 0
    compared = 0
    for span, shape in shapes.edges.items():
        try:
            fam = family_terms(shape)
        except NotAffine:
            continue
        built = {tuple(int(x) for x in e.name[e.name.index("[") + 1:-1].split("][")) for e in policy.edges if e.span == span}
        points = set()
        for values in itertools.product(*(range(lp.lo, lp.hi) for lp in shape.loops)):
            env = {f"i_{lp.var}": v for lp, v in zip(shape.loops, values)}
            if all(_value(t, env) for _n, t in fam.domain):
                points.add(values)
        assert points == built, (shape.name, sorted(points ^ built))
        compared += 1
    return compared


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branch_texts())
def test_the_domain_of_every_declaration_is_exactly_its_instances(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None)
    assert_domains_are_the_instances(policy)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branch_texts())
def test_parametric_verdicts_under_branches_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


#: One declaration per comparator and connective over ``i`` in ``-3..4``, the six comparisons
#: against 1 each picking a different set of ``i``: any comparator translated as another, ``and``
#: as ``or``, or ``not`` dropped changes some declaration's domain.
EVERY_CONDITION = HEAD + """region a in hbm at 0 size 4096 owner gpu0
flow f {
  for i in -3..4 {
    if i == 1 { edge c0[i]: read a by gpu0.launch }
    if i != 1 { edge c1[i]: read a by gpu0.launch }
    if i < 1 { edge c2[i]: read a by gpu0.launch }
    if i <= 1 { edge c3[i]: read a by gpu0.launch }
    if i > 1 { edge c4[i]: read a by gpu0.launch }
    if i >= 1 { edge c5[i]: read a by gpu0.launch }
    if i > -2 and i < 2 { edge c6[i]: read a by gpu0.launch }
    if not (i < 0 or -i < -2) { edge c7[i]: read a by gpu0.launch }
    if i * 512 < 1 KiB { edge c8[i]: read a by gpu0.launch } else if i % 3 == 2 { edge c9[i]: read a by gpu0.launch }
  }
}
"""


def _mutations():
    from fxverify.obligations import symbolic
    for op in _CMP:
        for other in _CMP:
            if other != op:
                yield f"{op} as {other}", "_COMPARE", {**symbolic._COMPARE, op: symbolic._COMPARE[other]}
    yield "and as or", "and_", symbolic.or_
    yield "or as and", "or_", symbolic.and_
    yield "not dropped", "not_", lambda t: t


@pytest.mark.parametrize("what,name,value", list(_mutations()), ids=[m[0] for m in _mutations()])
def test_a_wrong_condition_translation_is_caught(monkeypatch: pytest.MonkeyPatch, what: str, name: str, value) -> None:
    """The domain comparison can fail: any comparator, connective or negation mistranslated makes
    some declaration's domain differ from its instances."""
    from fxverify.obligations import symbolic
    policy, diags = _load(EVERY_CONDITION)
    assert policy is not None, diags
    assert assert_domains_are_the_instances(policy) == 10
    monkeypatch.setattr(symbolic, name, value)
    with pytest.raises(AssertionError):
        assert_domains_are_the_instances(policy)


# ---- transforms: proofs of one instance carried to every instance ------------------------------


@st.composite
def transform_texts(draw) -> str:
    """Moves from a region family to another, or writes to one, through a transform chain, with
    or without a ``bytes`` clause; the chain, the ``bytes`` clause or the footprints' sizes may
    depend on the loop index (then the instances' obligations differ and must not be proved from
    the first one), in a persistent space or not."""
    n = draw(st.integers(2, 6))
    size = draw(st.sampled_from([256, 4096]))
    dsize = draw(st.sampled_from([size // 2, size, size + 64, 2 * size]))
    sdt = draw(st.sampled_from(["bf16", "fp16"]))
    pers = draw(st.sampled_from(["", " persistent", " persistent"]))
    chain = draw(st.sampled_from([
        "compress(lz4)", "compress(lz4) |> checksum(crc32c) |> persist", "checksum(crc32c) |> compress(lz4)",
        f"quantize({sdt} -> fp8, group 128, scale f32)", "persist", "gather(2)", "gather(2, rank (i % 2))",
        "gather(2, rank i)", "scatter(2)", "scatter(i + 1)"]))
    ddt = draw(st.sampled_from(["fp8" if chain.startswith("quantize") else sdt] * 3 + ["bf16"]))
    text = HEAD.replace("space hbm on gpu0 size 16 MiB\n", f"space hbm on gpu0 size 16 MiB\nspace pm on gpu0 base 0x10000000 size 16 MiB{pers}\n")
    text += (f"region s[i in 0..{n}] in hbm at i * {size} size {size} owner gpu0 dtype {sdt}\n"
             f"region d[i in 0..{n}] in pm at 0x10000000 + i * {2 * size} size {dsize} owner gpu0 dtype {ddt}\n")
    src, src_bytes = draw(st.sampled_from([("s[i]", str(size)), ("s[i][0, +128]", "128"),
                                           ("s[i][0, +i * 64 + 64]", "i * 64 + 64"), (f"s[(i + 1) % {n}]", str(size))]))
    dst, dst_bytes = draw(st.sampled_from([("d[i]", str(dsize)), ("d[i][0, +128]", "128"), ("d[i][0, +256]", "256")]))
    move = draw(st.booleans())
    action, nbytes = (f"move {src} -> {dst}", src_bytes) if move else (f"write {dst}", dst_bytes)
    nbytes = draw(st.sampled_from(["", "", f" bytes {nbytes}", f" bytes {nbytes} + i * 0"]))  # the last: written with i
    return text + (f"flow f {{\n  for i in 0..{n} {{\n    edge m[i]: {action} by gpu0.launch{nbytes} transform {chain}\n"
                   "  }\n}\n")


def _inputs(policy, e) -> tuple:
    """What the per-edge transform obligations read of edge ``e`` (``transforms``: ``_per_edge``)."""
    dt = [policy.region(fp.region).dtype if fp is not None else None for fp in (e.src, e.dst)]
    spaces = [policy.space(fp.space) if fp is not None else None for fp in (e.src, e.dst)]
    return (e.transforms, e.bytes, *(fp.nbytes if fp is not None else None for fp in (e.src, e.dst)), *dt, *spaces)


def _obligations(ctx, e) -> list[tuple]:
    """Edge ``e``'s per-edge transform obligations as the check states them: code, fast proof and
    every assertion of the query in SMT-LIB2 (the query's name and header, which name the
    instance, left out)."""
    from fxverify.obligations.transforms import _per_edge
    from fxverify.smt.smtlib import term_to_smtlib
    return [(str(ob.code), ob.prove_fast(), tuple((n, term_to_smtlib(t)) for n, t in ob.encode().assertions))
            for ob in _per_edge(ctx, e)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transform_texts())
def test_an_invariant_declaration_gives_every_instance_the_same_obligations(text: str) -> None:
    """Where ``invariant`` says a declaration's instances read the same, they have the same inputs
    and the very same obligations (fast proof and query), so the first one's proofs are each
    one's."""
    from fxverify.graph import PolicyGraph
    from fxverify.obligations.base import Context
    from fxverify.obligations.transforms import _READS
    policy, _ = _load(text)
    assume(policy is not None)
    par = Parametric(policy, None)  # type: ignore[arg-type]  # no query is asked
    ctx = Context(policy, PolicyGraph(policy))
    for span in Shapes.of(policy).edges:
        insts = [e for e in policy.edges if e.span == span]
        if not par.invariant(span, _READS):
            assert len({_inputs(policy, e) for e in insts}) == 1
            first = _obligations(ctx, insts[0])
            assert first and all(_obligations(ctx, e) == first for e in insts[1:])


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transform_texts())
def test_transform_proofs_carried_from_one_instance_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


def test_transform_families_are_proved_once_only_when_every_instance_reads_the_same() -> None:
    base = HEAD + """region s[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0 dtype bf16
region d[i in 0..4] in hbm at 0x100000 + i * 8192 size 8192 owner gpu0
flow f {
  for i in 0..4 {
    edge m[i]: move SRC -> d[i] by gpu0.launch transform CHAIN
  }
}
"""
    def rows(src: str, chain: str) -> set[tuple[str, str]]:
        r = _check(base.replace("SRC", src).replace("CHAIN", chain))
        plain = _check(base.replace("SRC", src).replace("CHAIN", chain), parametric=False)
        assert _outcomes(r) == _outcomes(plain) and _findings(r) == _findings(plain)
        return {(code, why) for _f, _at, code, _p, _n, why, _before in r.parametric if code.startswith("FX-XF")}

    assert rows("s[i]", "compress(lz4)") == {("FX-XF-001", ""), ("FX-XF-002", ""), ("FX-XF-003", "")}
    dep = "a `transform` clause depends on the indices"
    assert rows("s[i]", "gather(4, rank i)") == {(c, dep) for c in ("FX-XF-001", "FX-XF-002", "FX-XF-003")}
    size = "the size of `s`'s footprint depends on the indices"
    assert rows("s[i][0, +i * 64 + 64]", "compress(lz4)") == {(c, size) for c in ("FX-XF-001", "FX-XF-002", "FX-XF-003")}
    # lz4's worst case for 4096 B is 4096 + 4096 / 255 + 16 B, which fits the 8192 B of `d`: proved above.
    # A chain the first instance fails: every instance is discharged on its own (and refuted).
    open_ = "its first instance has no fast proof of FX-XF-003"
    assert ("FX-XF-003", open_) in rows("s[i]", "quantize(fp16 -> fp8, group 128, scale f32)")


def test_the_invariance_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the clause check, a chain that reads the index would be called invariant, and the
    instances' inputs differ: the property above would see it."""
    from fxverify.obligations import parametric
    from fxverify.obligations.transforms import _READS
    text = HEAD + """region s[i in 0..2] in hbm at i * 4096 size 4096 owner gpu0
region d[i in 0..2] in hbm at 0x100000 + i * 8192 size 8192 owner gpu0
flow f {
  for i in 0..2 {
    edge m[i]: move s[i] -> d[i] by gpu0.launch transform gather(2, rank i)
  }
}
"""
    policy, _ = _load(text)
    (span,) = Shapes.of(policy).edges
    assert parametric.Parametric(policy, None).invariant(span, _READS) == "a `transform` clause depends on the indices"  # type: ignore[arg-type]
    monkeypatch.setattr(parametric, "index_free", lambda _node, _names: True)
    assert parametric.Parametric(policy, None).invariant(span, _READS) == ""  # type: ignore[arg-type]
    assert len({_inputs(policy, e) for e in policy.edges}) == 2


# ---- FX-OWN-001: regions the device owns for the whole flow -------------------------------------

OWN_HEAD = """policy "own"
fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device dpu0: dpu hooks [rx, tx]
  link gpu0 -- dpu0 : pcie ordered
}
space hbm on gpu0 size 16 MiB
"""


@st.composite
def owner_texts(draw) -> str:
    """A block family and perhaps an overlapping view (one alias set), each owned by the GPU or
    the DPU, and families of reads and writes of blocks, block slices and view slices by either
    device, with now and then a handoff, an ``alloc``, a lease or a release of a block, so that
    some declarations touch only what their device owns for the whole flow and others do not,
    and now and then an HB cycle."""
    n = draw(st.integers(2, 6))
    owner = draw(st.sampled_from(["gpu0", "gpu0", "dpu0"]))
    lines = [OWN_HEAD + f"region blk[i in 0..{n}] in hbm at i * 4096 size 4096 owner {owner} init"]
    view = draw(st.booleans())
    if view:
        at = draw(st.one_of(st.integers(0, n * 4096 - 1), st.integers(1, n).map(lambda b: b * 4096 - 1)))  # last bytes too
        lines.append(f"region view in hbm at {at} size {draw(st.sampled_from([1, 64, 4096, 8192]))} "
                     f"owner {draw(st.sampled_from(['gpu0', 'dpu0']))} init")
        lines.append("alias_set v = [view, blk[*]]")
    lines.append(f"region far in hbm at 0x100000 size 4096 owner {draw(st.sampled_from(['gpu0', 'dpu0']))} init")
    lines.append("flow f {")
    k = draw(st.integers(0, n - 1))
    extra = draw(st.sampled_from(["", "handoff", "lease", "alloc", "release", "cycle"]))
    if extra == "handoff":
        lines.append(f"  edge h: read blk[{k}] by {owner}.{'launch' if owner == 'gpu0' else 'rx'} handoff blk[{k}]: "
                     f"{owner} -> {'dpu0' if owner == 'gpu0' else 'gpu0'}")
    elif extra == "lease":
        lines.append(f"  edge g: read blk[{k}] by {owner}.{'launch' if owner == 'gpu0' else 'rx'} lease blk[{k}] to "
                     f"{'dpu0' if owner == 'gpu0' else 'gpu0'}")
    elif extra == "alloc":
        lines.append(f"  edge a: alloc blk[{k}] to gpu0 by gpu0.launch")
    elif extra == "cycle":  # FX-ORD-001: the FX-OWN-001 obligations are not generated
        lines.append("  edge c1: read far by gpu0.launch after c2")
        lines.append("  edge c2: read far by gpu0.launch after c1")
    for d in range(draw(st.integers(1, 3))):
        lo = draw(st.integers(0, n - 2))
        hi = draw(st.integers(lo + 2, n))
        dev = draw(st.sampled_from(["gpu0.launch", "gpu0.copy_done", "dpu0.rx"]))
        target = draw(st.sampled_from([f"blk[i{d}]", f"blk[i{d}][0, +64]", f"blk[i{d}][4032, +64]", "far",
                                       *([f"view[i{d} * 0, +64]", f"view[0, +{64}]"] if view else [])]))
        action = draw(st.sampled_from(["read", "write"]))
        lines.append(f"  for i{d} in {lo}..{hi} {{")
        lines.append(f"    edge e{d}[i{d}]: {action} {target} by {dev}")
        lines.append("  }")
    if extra == "release":
        lines.append(f"  for j in 0..{n} {{")
        lines.append("    edge free[j]: release blk[j] free by gpu0.free")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def assert_static_owner_proofs_hold(policy) -> int:
    """Each declaration the prover proves has, for every instance, only FX-OWN-001 obligations
    among its first ownership obligations, each with the fast proof ``static-owner``; returns
    how many such obligations were compared."""
    from fxverify.graph import PolicyGraph
    from fxverify.obligations import ownership
    from fxverify.obligations.base import Context
    ctx = Context(policy, PolicyGraph(policy))
    par = Parametric(policy, None)  # type: ignore[arg-type]  # no query is asked
    proved = par.proved_static_owners({r for r, hs in ctx.handoffs.items() if hs}, ctx.owner_checks())
    plain = Context(policy, PolicyGraph(policy))
    compared = 0
    for ob in ownership.generate(plain):
        if ob.code in ("FX-OWN-001", "FX-OWN-002") and policy.edges[ob.edges[0]].span in proved:
            assert ob.code == "FX-OWN-001", f"{ob.key}: an instance of a proved declaration touches a region in transit"
            assert ob.prove_fast() == "static-owner", ob.key
            compared += 1
    return compared


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(owner_texts())
def test_declarations_proved_static_owners_have_only_static_owner_proofs(text: str) -> None:
    policy, _diags = _load(text)
    assume(policy is not None)
    assert_static_owner_proofs_hold(policy)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(owner_texts())
def test_static_owner_verdicts_equal_the_unrolled_ones(text: str) -> None:
    _same_with_and_without_the_prover(text)


OWNERS = OWN_HEAD + """region blk[i in 0..8] in hbm at i * 4096 size 4096 owner gpu0 init
region view in hbm at 0x6000 size 64 owner dpu0 init
alias_set v = [view, blk[*]]
region far in hbm at 0x100000 size 4096 owner gpu0 init
flow f {
  edge h: read blk[5] by gpu0.launch handoff blk[5]: gpu0 -> dpu0
  for i in 0..4 {
    edge low[i]: write blk[i][0, +64] by gpu0.launch
  }
  for i in 4..8 {
    edge high[i]: read blk[i][0, +64] by gpu0.launch
  }
  for i in 0..2 {
    edge edge0[i]: read blk[i][4032, +64] by gpu0.copy_done
  }
  for i in 2..4 {
    edge mid[i]: read blk[i][4032, +64] by gpu0.copy_done
  }
  for i in 0..3 {
    edge d[i]: read far by dpu0.rx
  }
}
"""


def test_static_owners_are_proved_per_declaration_and_the_others_unrolled() -> None:
    r = _check(OWNERS)
    rows = {f: (n, why) for f, _at, code, _pos, n, why, _before in r.parametric if code == "FX-OWN-001"}
    assert rows == {
        "low": (4, ""),
        # only blk[5] is: high[5] alone needs it; neither HB (the DPU's view) nor a lease (none) proves all
        "high": (4, "its footprints' hull meets `blk[5]`, which is handed off or allocated; by HB, its footprints' hull "
                    "meets `view`, owned by `dpu0`; by a lease, no chain of at most 3 `after` references names a lease "
                    "of `blk` to `gpu0` for its instances"),
        "edge0": (2, ""),
        # blk[2][4032, +64] is 0x2fc0..0x3000 and blk[3]'s is 0x3fc0..0x4000: the hull 0x2fc0..0x4000
        # misses the DPU's view at 0x6000, but the hull of 0..4 would not: the argument is per declaration.
        "mid": (2, ""),
        "d": (3, "its footprints' hull meets `far`, owned by `gpu0`; by a lease, no chain of at most 3 `after` "
                 "references names a lease of `far` to `dpu0` for its instances"),
    }
    plain = _check(OWNERS, parametric=False)
    assert _outcomes(r) == _outcomes(plain) and _findings(r) == _findings(plain)
    policy, _ = _load(OWNERS)
    assert assert_static_owner_proofs_hold(policy) == 4 + 2 + 2


def test_a_missing_interval_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: were no region found in a declaration's hull, the DPU's
    view inside the GPU's blocks would be called the GPU's, and its obligation has no
    ``static-owner`` proof."""
    from fxverify.obligations import parametric
    text = OWNERS.replace("region view in hbm at 0x6000 size 64", "region view in hbm at 0x1000 size 64")
    policy, diags = _load(text)
    assert policy is not None, diags
    assert assert_static_owner_proofs_hold(policy) > 0
    monkeypatch.setattr(parametric.Intervals, "meeting", lambda _self, _lo, _hi: None)
    with pytest.raises(AssertionError):
        assert_static_owner_proofs_hold(policy)


def test_the_hull_reaches_each_footprint_s_last_byte() -> None:
    """A one-byte region of the DPU's at the last byte of the second block, and a 64-byte one
    past its start: the hull must end where the last footprint ends (a hull cut short would
    call `x` the GPU's, which the property above would see), and the count is per region."""
    text = OWN_HEAD + """region blk[i in 0..2] in hbm at i * 4096 size 4096 owner gpu0 init
region tail in hbm at 0x1fff size 1 owner dpu0 init
region mid in hbm at 0x1040 size 64 owner dpu0 init
alias_set v = [tail, mid, blk[*]]
flow f {
  for i in 0..2 {
    edge x[i]: read blk[i] by gpu0.launch
  }
  for i in 0..2 {
    edge y[i]: read blk[0][i * 64, +64] by gpu0.launch
  }
}
"""
    r = _check(text)
    rows = {f: (n, why) for f, _at, code, _pos, n, why, _before in r.parametric if code == "FX-OWN-001"}
    unleased = "; by a lease, no chain of at most 3 `after` references names a lease of `blk` to `gpu0` for its instances"
    assert rows == {"x": (4, "its footprints' hull meets `mid`, owned by `dpu0`" + unleased), "y": (2, "")}
    plain = _check(text, parametric=False)
    assert _outcomes(r) == _outcomes(plain) and _findings(r) == _findings(plain)
    policy, _ = _load(text)
    assert assert_static_owner_proofs_hold(policy) == 2
    for cut in (text.replace("region mid in hbm at 0x1040 size 64", "region mid in hbm at 0x3000 size 64"),):
        r = _check(cut)
        assert {f: why for f, _at, code, _p, _n, why, _before in r.parametric if code == "FX-OWN-001"}["x"] == (
            "its footprints' hull meets `tail`, owned by `dpu0`" + unleased)


def test_no_static_owner_proofs_under_an_hb_cycle() -> None:
    """With an HB cycle (FX-ORD-001) no FX-OWN-001 obligation is generated, unrolled or not."""
    text = OWNERS.replace("flow f {\n", "flow f {\n  edge c1: read far by gpu0.launch after c2\n  edge c2: read far by gpu0.launch after c1\n")
    r = _check(text)
    assert not [x for x in r.parametric if x.code == "FX-OWN-001"]
    assert not [o for o in r.outcomes if o.code == "FX-OWN-001"]
    plain = _check(text, parametric=False)
    assert _outcomes(r) == _outcomes(plain) and _findings(r) == _findings(plain)


def test_fallback_rows_name_the_footprint_and_count_the_obligations_generated() -> None:
    """A move's destination in the DPU's memory makes it fall back at position 1; a family that
    hands off what it writes has no FX-OWN-001 obligation for it (FX-OWN-003 checks the owner's
    handoff), so its row counts none."""
    text = OWN_HEAD + """space ddr on dpu0 size 1 MiB
region blk[i in 0..4] in hbm at i * 4096 size 4096 owner gpu0 init
region far[i in 0..4] in ddr at i * 4096 size 4096 owner dpu0 init
flow f {
  for i in 0..4 {
    edge m[i]: move blk[i] -> far[i] by gpu0.copy_done
  }
  for i in 0..4 {
    edge h[i]: write blk[i] by gpu0.launch after m[i] handoff blk[i]: gpu0 -> dpu0
  }
}
"""
    r = _check(text.replace("handoff blk[i]: gpu0 -> dpu0", ""))
    rows = {f: (pos, n, why) for f, _at, code, pos, n, why, _before in r.parametric if code == "FX-OWN-001"}
    assert rows == {"m": (1, 8, "its footprints' hull meets `far[0]`, owned by `dpu0`"), "h": (0, 4, "")}
    r = _check(text)
    rows = {f: (pos, n, why) for f, _at, code, pos, n, why, _before in r.parametric if code == "FX-OWN-001"}
    assert rows["h"] == (0, 0, "an instance releases, revokes or hands off a region")
    assert not [o for o in r.outcomes if o.code == "FX-OWN-001" and o.key.startswith("FX-OWN-001:h[")]


def test_runs_cut_into_batches_keep_the_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Held`` yields its proofs every ``HELD_BATCH`` keys (bounded memory); cut into runs of
    three, the outcomes are the unrolled ones, in order."""
    from fxverify.obligations import parametric
    whole = _check(MIXED)
    monkeypatch.setattr(parametric, "HELD_BATCH", 3)
    cut = _check(MIXED)
    assert _outcomes(cut) == _outcomes(whole) == _outcomes(_check(MIXED, parametric=False))
    assert cut.counts() == whole.counts()


def test_small_declarations_are_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """As shipped, the solver is asked about a declaration (or a pair) only from
    ``QUERY_MIN_INSTANCES`` instances on: the pair below, one instance short, is left to its
    instances, reported nowhere, with the same verdicts; with that many it is asked and proved."""
    from tests.obligations.conftest import DEFAULT_QUERY_MIN_INSTANCES
    monkeypatch.setattr(parametric, "QUERY_MIN_INSTANCES", DEFAULT_QUERY_MIN_INSTANCES)
    assert DEFAULT_QUERY_MIN_INSTANCES == 1024
    text = OWN_HEAD + """region blk[i in 0..N] in hbm at i * 4096 size 4096 owner gpu0
flow f {
  for i in 0..N {
    edge w[i]: write blk[i] by gpu0.launch
    edge r[i]: read blk[i] by gpu0.launch after w[i]
  }
  for i in 0..N {
    edge free[i]: release blk[i] free by gpu0.free after r[i]
  }
}
"""
    for n, asked in ((DEFAULT_QUERY_MIN_INSTANCES - 1, False), (DEFAULT_QUERY_MIN_INSTANCES, True)):
        r = _check(text.replace("N", str(n)))
        rows = {(f, code) for f, _at, code, _pos, _n, why, _before in r.parametric if not why}
        assert (("w", "FX-OWN-004") in rows) is asked, n
        assert (("r", "FX-INIT-001") in rows) is asked, n
        assert (r.solver_calls > 0) is asked, n
        assert _outcomes(r) == _outcomes(_check(text.replace("N", str(n)), parametric=False))
