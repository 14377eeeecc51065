"""Tests for fxverify.syntax (text -> lark tree -> AST) and its syntax diagnostics."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxverify import ast
from fxverify.diagnostics.codes import REGISTRY
from fxverify.syntax.parse import decode_text, parse, parser, scan_comments
from fxverify.syntax.to_ast import to_ast

from tests.conftest import ROOT

# A policy that uses every construct of the language at least once.
RICH = r'''
policy "rich \"quoted\" name"   # comment after a string
include "fabric/common.fx"
fabric {
  device gpu0: gpu hooks [launch, copy_done, free, evict, alloc, fault]
  device dpu0: dpu hooks [rx, tx, dma_done, doorbell,]
  device cxl0: cxl_mem hooks [near_mem, route]
  device host: cpu
  link gpu0 -- cxl0 : cxl ordered
  link up0 = gpu0 -- dpu0 : pcie posted
}
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent checksum crc32c
space shm0 on cxl0 base 0x90_0000_0000 size 256 MiB init noncoherent
region kv in hbm0 at 0x0 size 64 MiB owner gpu0 dtype bf16
region pool[l in 0..32] in hdm0 at 0x80_2000_0000 + l*1 MiB size 1 MiB owner gpu0
region kvb[l in 0..4, b in 0..8] in hbm0 at 1 GiB + (l*8 + b) * 64 KiB size 64 KiB owner gpu0
region spare in hbm0 at 2 GiB size 64 KiB owner gpu0 dtype bf16 pooled
alias_set kvs = [kv, pool, kvb[1][*]]
map block_owner: hash<u32, device>[4096] class linearizable
map ctr: array<u32, u64>[64] class per_device merge sum
map lm: array<u32, u32>[16] class local(gpu0)
flow prefill {
  edge a: write kv[0, +2 MiB] by gpu0.launch stream s0 require in_order via gpu0 -- cxl0
  for l in 0..4 {
    edge attn[l]: write kv[l*2 MiB, +2 MiB] by gpu0.launch
    edge spill[l]: move kv[l*2 MiB, +2 MiB] -> pool[l] by gpu0.copy_done
        after attn[l], a
        transform quantize(bf16 -> fp8, group 128, scale f32) |> checksum(crc32c) |> move
        reuse 3 MiB  rw 1:0  bytes 2 MiB  alias kvs
        handoff pool[l]: gpu0 -> cxl0
        lease kv to dpu0
        update block_owner[l] = cxl0
        map_write lm[l % 16] = -(l - 1) / 2
        map_read block_owner[l]
        guard block_owner[l] == cxl0
        aggregate ctr[0]
    if l > 0 and not (l == 3 or l >= 100) { edge chain[l]: read pool[l] by cxl0.near_mem after spill[l - 1] expects sum of spill[l - 1] }
    else if l != 0 { edge never[l]: read pool[l] by cxl0.near_mem }
    else { edge first[l]: read pool[l][0, elem 64, stride 128, count 8] by cxl0.near_mem }
  }
  edge red: reduce(sum) kvb[0][1] -> kvb[0, 2] by gpu0.launch transform reduce(sum) |> filter(keep 50)
  edge sc: read kv by dpu0.rx transform scatter(4) |> gather(4, rank 1) |> replicate(2) |> compress(zstd) |> persist
  edge ret: release kvb[3, 7] return_pool by gpu0.free after spill[*] release kv evict revoke kv from dpu0 flush up0
  edge fl: flush gpu0 -- dpu0 by gpu0.launch after a
  edge re: alloc kvb[3, 7] to gpu0 by gpu0.alloc after ret
  edge re2: write kvb[3, 6] by gpu0.launch after re alloc kvb[3][7] to dpu0
  edge wb: writeback kv[0, +64] by gpu0.launch after fl invalidate kv notifies fl, re
  edge stop: cancel sc by dpu0.rx after wb
  edge stop2: write kvb[3, 5] by dpu0.rx cancel sc, d0
  final owner pool[*] = cxl0
}
flow decode { edge d0: read kv[0, +4 KiB] by dpu0.tx }
'''


def _nodes(node: object):
    """Yield every AST dataclass node reachable from ``node``."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple | list):
            stack.extend(n)
        elif dataclasses.is_dataclass(n) and not isinstance(n, type):
            yield n
            for f in dataclasses.fields(n):
                if f.name != "span":
                    stack.append(getattr(n, f.name))


def _module(text: str) -> ast.Module:
    tree, diags = parse(text, "t.fx")
    assert diags == [], diags
    module, diags = to_ast(tree, "t.fx", text)
    assert diags == []
    return module


def test_parser_is_built_once() -> None:
    assert parser() is parser()


def test_rich_example_every_node_has_a_span() -> None:
    module = _module(RICH)
    nodes = list(_nodes(module))
    kinds = {type(n) for n in nodes}
    # Every concrete node class of fxverify.ast appears in the rich example.
    expected = {
        obj for obj in vars(ast).values()
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == ast.__name__
    }
    assert expected - kinds == set()
    for n in nodes:
        span = n.span
        assert span.file == "t.fx"
        assert 0 <= span.start < span.end <= len(RICH), n


def test_spans_cover_their_text() -> None:
    module = _module(RICH)
    edges = [n for n in _nodes(module) if isinstance(n, ast.EdgeDecl)]
    spill = next(e for e in edges if e.name.name == "spill")
    text = RICH[spill.span.start:spill.span.end]
    assert text.startswith("edge spill[l]: move") and text.endswith("aggregate ctr[0]")
    assert RICH[spill.hook.span.start:spill.hook.span.end] == "copy_done"
    sizes = [n for n in _nodes(module) if isinstance(n, ast.SizeLit)]
    assert all(RICH[s.span.start:s.span.end].endswith(s.unit.name) for s in sizes)


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ('policy "a\\"b\\\\c"', lambda m: m.items[0].name == 'a"b\\c'),
        ("space s on d base 0x80_2000_0000 size 1_024 B",
         lambda m: m.items[0].base.value == 0x8020000000 and m.items[0].size.count == 1024),
        ("space s on d size 64KiB", lambda m: m.items[0].size.unit.name == "KiB"),
        ("space s on d size 1 + 2 * 3 - 4 / 2 % 3",
         lambda m: m.items[0].size.op == "-" and m.items[0].size.left.op == "+"),
        ("space s on d size -(1)", lambda m: isinstance(m.items[0].size, ast.Neg)),
        ("region r[i in 0..2, j in 1..3] in s at i size 1 owner d",
         lambda m: [p.var.name for p in m.items[0].params] == ["i", "j"]),
        ("flow f { edge e[1][2]: write r by d.h }",
         lambda m: len(m.items[0].body[0].indices) == 2),
        ("flow f { edge e[1, 2]: write r by d.h }",
         lambda m: len(m.items[0].body[0].indices) == 2),
        ("flow f { edge e: write r[0, elem 4, stride 8, count 2] by d.h }",
         lambda m: m.items[0].body[0].action.dst.groups[0].is_slice),
        ("flow f { edge e: write r[1][2] by d.h }",
         lambda m: not m.items[0].body[0].action.dst.groups[0].is_slice),
        ("flow f { edge e: flush a -- b by d.h }",
         lambda m: m.items[0].body[0].action.link.second.name == "b"),
        ("flow f { edge e: flush up0 by d.h }",
         lambda m: m.items[0].body[0].action.link.second is None),
        ("flow f { if (1) < 2 { } }", lambda m: isinstance(m.items[0].body[0].cond, ast.Compare)),
        ("flow f { if 1 < 2 or 2 < 3 and not 3 < 4 { } }",
         lambda m: m.items[0].body[0].cond.op == "or"),
        ("map m: ringbuf<u8, u64>[1] class eventual merge max",
         lambda m: m.items[0].merge.name == "max"),
        ("fabric { device d: gpu hooks [] }", lambda m: m.items[0].items[0].hooks == ()),
    ],
)
def test_constructs_parse(text: str, check) -> None:
    assert check(_module(text))


@pytest.mark.parametrize(
    "hook", ["free", "evict", "launch", "copy_done", "tx", "rx", "dma_done", "near_mem", "route",
             "alloc", "fault", "doorbell", "release", "flush", "after", "update", "move"],
)
def test_keywords_are_contextual(hook: str) -> None:
    text = (f"fabric {{ device d: gpu hooks [{hook}] }}\n"
            f"flow f {{ edge {hook}: write {hook} by d.{hook} after {hook} }}")
    module = _module(text)
    edge = module.items[1].body[0]
    assert edge.hook.name == hook and edge.name.name == hook
    assert module.items[0].items[0].hooks[0].name == hook


@pytest.mark.parametrize(
    ("text", "code", "message", "help_part"),
    [
        ('policy "p"\nfabric {\n  device gpu0: gpu hooks [launch,', "FX-SYN-003",
         "unexpected end of file", "a name"),
        ('policy "p"\nflow f {', "FX-SYN-003", "unexpected end of file", "`edge`"),
        ("policy $", "FX-SYN-002", "unexpected character `$`", "a string"),
        ('policy "never closed', "FX-SYN-002", "unterminated string", '`"`'),
        ("flow f { edge a: write kv gpu0.launch }", "FX-SYN-001", "missing `by`", "by gpu0.launch"),
        ("flow f { edge a: move x -> y[0] gpu0.launch }", "FX-SYN-001", "missing `by`", None),
        ("flow f { edge a write kv by gpu0.launch }", "FX-SYN-001", "missing `:` after the edge name",
         "edge NAME:"),
        ("flow f { edge a[0] write kv by gpu0.launch }", "FX-SYN-001", "missing `:`", None),
        ("flow f { for i in 0...4 { } }", "FX-SYN-001", "malformed range", "`LO..HI`"),
        ("flow f { for i in 0:4 { } }", "FX-SYN-001", "malformed range", None),
        ("region r[i in 0:4] in s at 0 size 1 owner d", "FX-SYN-001", "malformed range", None),
        ("device gpu0: gpu", "FX-SYN-001", "unexpected `device`", "`fabric`"),
        ("flow f { edge a: write kv by gpu0.launch after }", "FX-SYN-001", "unexpected `}`",
         "expected one of: a name"),
        ("space s on d size 4 4", "FX-SYN-001", "unexpected number `4`", "a name"),
        ("flow 3", "FX-SYN-001", "unexpected number `3`", "a name"),
        ("fabric {\n  device gpü0: gpu\n}", "FX-SYN-002", "unexpected character `ü`",
         "names are ASCII letters, digits and `_`"),
        ("flow f { edge é: write kv by gpu0.launch }", "FX-SYN-002", "unexpected character `é`", "ASCII letters"),
        # A space that is not ASCII (pasted from a page) is named, and the help says to replace it.
        ("space s on d size\u00a04", "FX-SYN-002", "unexpected character `U+00A0 NO-BREAK SPACE`",
         "with an ASCII space"),
        ("flow f { edge a:\u202ewrite kv by gpu0.launch }", "FX-SYN-002",
         "unexpected character `U+202E RIGHT-TO-LEFT OVERRIDE`", "expected one of"),
        # A misspelt keyword is named (the full list becomes a note); an unrelated name is not.
        ("flow f { edge a: write kv by gpu0.launch leese kv to gpu1 }", "FX-SYN-001", "unexpected name `leese`",
         "did you mean `lease`?"),
        ("flow f { edge a: wrte kv by gpu0.launch }", "FX-SYN-001", "unexpected name `wrte`", "did you mean `write`?"),
        ("flow f { edge a: zzz kv by gpu0.launch }", "FX-SYN-001", "unexpected name `zzz`", "expected one of: `alloc`"),
    ],
)
def test_syntax_errors(text: str, code: str, message: str, help_part: str | None) -> None:
    tree, diags = parse(text, "bad.fx")
    assert tree is None
    assert len(diags) == 1, "only the first syntax error is reported"
    d = diags[0]
    assert d.code == code and d.code in REGISTRY
    assert message in d.message
    assert d.message == d.message.lower() or "`" in d.message
    assert not d.message.endswith(".")
    assert d.primary is not None and d.primary.span.file == "bad.fx"
    if help_part is not None:
        assert d.help is not None and help_part in d.help, d.help


def test_end_of_file_span_points_at_the_end() -> None:
    text = "flow f {\n  \n"
    _, diags = parse(text, "t.fx")
    assert diags[0].primary.span.start == len(text.rstrip())


@pytest.mark.parametrize(
    ("data", "note"),
    [
        (b'policy "p"\n\x00\x01\x02\x03', "NUL"),
        (b'policy "p"\n\xff\xfe\x00garbage', "0xff"),
        (bytes(range(256)) * 4, "0x80"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "0x89"),
    ],
)
def test_binary_garbage_is_not_text(data: bytes, note: str) -> None:
    text, diags = decode_text(data, "bin.fx")
    assert [d.code for d in diags] == ["FX-SYN-004"]
    assert any(note in n for n in diags[0].notes)
    assert diags[0].primary.span.start <= len(text)


def test_decode_accepts_utf8() -> None:
    text, diags = decode_text('policy "café"'.encode(), "u.fx")
    assert diags == [] and text == 'policy "café"'


@pytest.mark.parametrize(
    "body", ["-" * 400 + "1", "+".join(["1"] * 400)],
)
def test_deep_nesting_is_a_limit_not_a_crash(body: str) -> None:
    text = f"space s on d size {body}"
    tree, diags = parse(text, "deep.fx", max_depth=200)
    assert tree is None and [d.code for d in diags] == ["FX-LIM-001"]


def test_deep_parentheses_do_not_nest_the_tree() -> None:
    text = "space s on d size " + "(" * 150 + "1" + ")" * 150
    assert _module(text).items[0].size.value == 1


@pytest.mark.parametrize("open_, close", [("(", ")"), ("[", "]"), ("([", "])"), ("{", "}")])
def test_deep_brackets_are_the_depth_limit_before_parsing(open_: str, close: str) -> None:
    """50,000 nested parentheses (or brackets, or braces) are refused by the bracket scan (the
    parser took 13 s on the parentheses); the span is the first bracket past the limit."""
    head = "space s on d size "
    text = head + open_ * 25_000 + "1" + close * 25_000
    tree, diags = parse(text, "deep.fx", max_depth=200)
    assert tree is None and [d.code for d in diags] == ["FX-LIM-001"]
    assert diags[0].primary.span.start == len(head) + 200


def test_brackets_in_strings_and_comments_do_not_count() -> None:
    text = 'policy "' + "(" * 300 + '"  # ' + "[" * 300 + "\nspace s on d size (((1)))\n"
    tree, diags = parse(text, "ok.fx", max_depth=200)
    assert diags == [] and tree is not None


def test_huge_decimal_literal_is_a_limit() -> None:
    text = "space s on d size " + "9" * 5000
    tree, diags = parse(text, "big.fx")
    assert diags == []
    _, diags = to_ast(tree, "big.fx", text)
    assert [d.code for d in diags] == ["FX-LIM-001"]


def test_scan_comments_skips_strings() -> None:
    text = 'policy "a # not a comment" # real\n# fx: allow FX-ORD-002 reason "x # y"\n'
    bodies = [body for _, _, body in scan_comments(text)]
    assert bodies == [" real", ' fx: allow FX-ORD-002 reason "x # y"']


_FUZZ_PIECES = list('abe01_ x[]{}(),.:+-*/%<>=!"#\n\x7f') + [
    "edge ", "flow ", "for ", " in ", "..", "->", "by ", "write ", "policy ", "MiB", "0x1f", "|>",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FUZZ_PIECES), max_size=60).map("".join))
def test_parse_never_raises(text: str) -> None:
    tree, diags = parse(text, "fuzz.fx")
    assert (tree is None) == bool(diags)
    assert len(diags) <= 1
    if tree is not None:
        to_ast(tree, "fuzz.fx", text)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(RICH)), st.integers(1, 40))
def test_truncations_and_cuts_never_raise(start: int, length: int) -> None:
    for text in (RICH[:start], RICH[:start] + RICH[start + length:]):
        tree, diags = parse(text, "cut.fx")
        assert (tree is None) == bool(diags)
        if tree is not None:
            to_ast(tree, "cut.fx", text)


def _doc_blocks() -> list[str]:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "specs" / "language.md"
    if not doc.exists():
        return []
    return re.findall(r"```fx\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("block", _doc_blocks() or [pytest.param("", marks=pytest.mark.skip)])
def test_language_reference_examples_parse(block: str) -> None:
    _module(block)


def test_a_parser_loaded_from_its_kept_tables_parses_as_a_built_one(tmp_path, monkeypatch) -> None:
    """The parser's LALR tables are kept between runs (``parse._tables``): a parser loaded from
    them gives the same AST, spans and syntax errors as one built from the grammar."""
    from fxverify.syntax import parse as parse_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    good = (ROOT / "corpus/ordering/ok/grad-bucket-all-producers.fx").read_text()
    bad = good.replace("after bw_main", "after after bw_main")

    def results():
        tree, _ = parse(good, "p.fx")
        _, errors = parse(bad, "p.fx")
        return to_ast(tree, "p.fx", good), [(d.code, d.message, d.primary) for d in errors]

    parse_module.parser.cache_clear()
    built = results()
    assert list((tmp_path / "fxverify" / "grammar").glob("parser.lark-tables"))
    parse_module.parser.cache_clear()
    loaded = results()
    parse_module.parser.cache_clear()
    assert loaded == built and built[1]


def test_a_long_operator_chain_is_told_how_to_group_its_terms() -> None:
    """A flat sum of 250 terms nests one level per `+` and passes the depth limit: the help says
    to group the terms in parentheses, and the grouped sum of the same terms parses."""
    terms = ["1 MiB"] * 250
    tree, diags = parse(f"space s on d size {' + '.join(terms)}", "deep.fx", max_depth=200)
    assert tree is None and [d.code for d in diags] == ["FX-LIM-001"] and "group its terms in parentheses" in diags[0].help
    grouped = " + ".join("(" + " + ".join(terms[i:i + 25]) + ")" for i in range(0, 250, 25))
    tree, diags = parse(f"space s on d size {grouped}", "deep.fx", max_depth=200)
    assert tree is not None and diags == []
    for deep in ("-" * 400 + "1", "1 + " + "-" * 400 + "1"):  # a unary chain, and one under a short sum
        _tree, diags = parse(f"space s on d size {deep}", "deep.fx", max_depth=200)
        assert [d.code for d in diags] == ["FX-LIM-001"] and "group its terms" not in (diags[0].help or "")
