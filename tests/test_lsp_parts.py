"""The parts of the language server, in this process: unsaved texts read instead of files, the
symbol index on every proved corpus policy, completion by grammar position, and the code action
that writes a verified hint (an instance's ordering generalised to its family holds only once the
edited text is checked again)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from fxverify.diagnostics import codes
from fxverify.edits import AddLease, After, Option, after
from fxverify.lsp import actions
from fxverify.lsp.complete import complete, context
from fxverify.lsp.index import build
from fxverify.pipeline import CheckOptions, check
from fxverify.resolve import Limits, load_policy
from fxverify.source import SourceMap

from tests.conftest import ROOT

OK = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("corpus/*/ok/*.fx"))


def test_unsaved_texts_are_read_instead_of_files(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "fabric.fx").write_text("fabric {\n  device gpu0: gpu hooks [launch]\n}\n")
    root = tmp_path / "p.fx"  # never written: the editor's buffer is all there is
    text = ('policy "p"\ninclude "fabric.fx"\nspace hbm0 on gpu0 size 1 GiB\n'
            "region kv in hbm0 at 0 size 2 MiB owner gpu0\nflow f {\n  edge w: write kv by gpu0.copy_done\n}\n")
    sources = SourceMap()
    pol, diags = load_policy(str(root), sources, texts={str(root): text})
    assert pol is not None and [d.code for d in diags] == [] and sources.get(str(root)).text == text
    # an unsaved include counts too: its buffer declares the hook the policy uses
    fabric = "fabric {\n  device gpu0: gpu hooks [launch, copy_done]\n}\n"
    r = check(str(root), texts={str(root): text, os.path.realpath(tmp_path / "fabric.fx"): fabric})
    assert r.verdict is not None and all(d.code is not codes.HOOK_002 for d in r.diagnostics)
    assert codes.HOOK_002 in {d.code for d in check(str(root), texts={str(root): text}).diagnostics}
    _, diags = load_policy(str(root), SourceMap(), limits=Limits(max_file_bytes=64), texts={str(root): text})
    assert [d.code for d in diags] == [codes.LIM_001]
    assert sorted(os.listdir(tmp_path)) == [".git", "fabric.fx"]


@pytest.mark.parametrize("path", OK)
def test_every_name_of_a_proved_policy_is_indexed(path: str) -> None:
    """Every name used resolves to its declaration, and the index declares exactly the policy's
    edge families, region families, devices, spaces and maps."""
    sources = SourceMap()
    pol, _ = load_policy(str(ROOT / path), sources)
    assert pol is not None
    idx = build(sources, pol)
    unresolved = [(o.kind, o.name) for f in sources.paths() for o in idx.occurrences(f) if idx.symbol(o) is None]
    assert unresolved == []
    assert set(idx.names("edge")) == {e.family for e in pol.edges}
    assert set(idx.names("region")) == {r.family for r in pol.regions}
    assert set(idx.names("device")) == {d.name for d in pol.devices}
    assert set(idx.names("space")) == {s.name for s in pol.spaces}
    assert set(idx.names("map")) == {m.name for m in pol.maps}
    for e in pol.edges:  # an edge instance's declaration is in the index
        assert e.span in idx.edge_decls


@pytest.mark.parametrize("before, fits", [
    ("  edge x: move kv -> ", "region"),
    ("  edge y: write kv by ", "device"),
    ("  edge y: write kv by gpu0.", "hook:gpu0"),
    ("  edge y: write kv by gpu0.launch after a, ", "edge"),
    ("  edge s: cancel ", "edge"),
    ("  edge f: release a by gpu0.launch cancel pull, ", "edge"),
    ("region r in ", "space"),
    ("  final owner pool[*] = ", "device"),
    ("  edge x: move a -> b by g.c handoff b: gpu0 -> ", "device"),
    ("  edge x: move a -> b by g.c transform quantize(bf16 -> ", "word:dtype"),
    ("region r in s at 0 size 2 ", "word:unit"),
    ("link gpu0 -- cpu0 : pcie ", "word:link order"),
    ("  edge e: read m by d.h map_read ", "map"),
    ("", "any"),
])
def test_completion_follows_the_grammar(before: str, fits: str) -> None:
    assert context(before) == fits


def test_completion_offers_declared_names() -> None:
    sources = SourceMap()
    pol, _ = load_policy(str(ROOT / "corpus/ordering/fail/kv-offload-unordered.fx"), sources)
    idx = build(sources, pol)
    assert {(i.label, i.detail) for i in complete(idx, "  edge z: move ")} == {
        ("kv_blk", "region in hbm0, 2,097,152 B"), ("kv_host", "region in host0, 2,097,152 B")}
    assert [i.label for i in complete(idx, "  edge z: move kv_blk -> kv_host by gpu0.")] == ["copy_done", "launch"]
    assert {"ordered", "unordered", "posted"} == {i.label for i in complete(idx, "  link a -- b : pcie ")}


@pytest.mark.slow
def test_a_family_fix_is_offered_once_its_text_is_checked_again() -> None:
    """The hint on `free0[0]` (an instance) is verified on the family `free0[b]` as `after
    pull[b]`; like an instance's ordering generalised by the code action itself, text written on
    a family declaration is offered only once the edited text is checked again (the resolver reads
    it back), which confirms `after pull[b]` and refuses a wrong generalisation."""
    path = str(ROOT / "corpus/incidents/fail/pd-prefill-frees-blocks-on-send-post.fx")
    before = check(path)
    idx = build(before.sources, before.policy)
    (d,) = [d for d in before.diagnostics if d.code is codes.OWN_004]
    c = before.hints[d.obligation]
    fix = actions.fix_of(d, idx, c)
    assert fix is not None and fix.needs_check
    assert fix.title == "Apply the verified hint: add `after pull[b]` to `free0[b]`"
    instance = actions.fix_of(d, idx, replace(c, shown=(Option((After("free0[0]", ("pull[0]",)),)),)))
    assert instance is not None and instance.needs_check and instance.edits == fix.edits
    (edit,) = fix.edits
    text = before.sources.get(path).text
    assert text[:edit.span.start].endswith("by gpu_p.free after attn0[b]") and edit.text == ", pull[b]"
    edited = actions.apply_all(before.sources, fix.edits)
    after = check(path, CheckOptions(verify_hints=False), texts={os.path.realpath(path): edited[path]})
    assert actions.holds(before, d, after)
    wrong = {os.path.realpath(path): actions.apply(text, path, (actions.TextEdit(edit.span, ", attn0[b]"),))}
    assert not actions.holds(before, d, check(path, CheckOptions(verify_hints=False), texts=wrong))


def test_a_plain_edge_fix_writes_the_verified_ordering() -> None:
    path = str(ROOT / "corpus/ordering/fail/double-offload-same-host-block.fx")
    r = check(path)
    idx = build(r.sources, r.policy)
    fixes = [f for f in (actions.fix_of(d, idx, r.hints.get(d.obligation)) for d in r.diagnostics) if f is not None]
    assert fixes and not fixes[0].needs_check
    (edit,) = fixes[0].edits
    assert edit.text == " after off0" and r.sources.get(path).text[:edit.span.start].endswith("by gpu0.copy_done")
    # the edits come from what was verified, never from the hint's words: no verified fix, or one
    # that is not made of orderings, is no code action
    d = next(d for d in r.diagnostics if actions.fix_of(d, idx, r.hints.get(d.obligation)) is not None)
    c = r.hints[d.obligation]
    assert actions.fix_of(d, idx, replace(c, status="none", shown=())) is None
    assert actions.fix_of(d, idx, None) is None
    lease = Option((AddLease("off1", "hbuf", "cpu0"), after("off1", "off0")))
    assert actions.fix_of(d, idx, replace(c, shown=(lease,))) is None


def _hover_at(path: str, needle: str, into: int = 1) -> str | None:
    from fxverify.lsp.hover import hover

    sources = SourceMap()
    pol, _ = load_policy(str(ROOT / path), sources)
    idx = build(sources, pol)
    text = sources.get(str(ROOT / path)).text
    return hover(idx, idx.at(str(ROOT / path), text.index(needle) + into), sources)


def test_hover_gives_computed_bytes_and_footprints() -> None:
    strided = _hover_at("corpus/alias/ok/interleaved-strided.fx", "page[64")
    assert "in this edge: `put_v`: `page` 512 elements of 64 B every 128 B in [0x10000040, 0x10010000) of `hbm0`, " \
           "32 KiB (32,768 B)" in strided
    assert _hover_at("corpus/maps/ok/causal-guard.fx", "layer_done:") == (
        "**map** `layer_done`\n\narray<u32, u32>, 32 entries of 4 + 4 B (at most 256 B of keys and values); class causal, "
        "merge max")
    assert "regions that may overlap one another: `k_new`" in _hover_at("corpus/alias/ok/interleaved-strided.fx", "k_lanes =")
    assert _hover_at("corpus/alias/ok/interleaved-strided.fx", "64 KiB") == "64 KiB = 65,536 B (0x10000)"


def test_a_query_that_raises_answers_its_fx_int_001_without_a_traceback() -> None:
    from pygls.exceptions import JsonRpcInternalError

    from fxverify.lsp.server import _answers

    @_answers
    def broken(ls: object, params: object) -> None:
        raise KeyError("no such name")

    with pytest.raises(JsonRpcInternalError) as got:
        broken(None, None)
    assert got.value.message.startswith("FX-INT-001: internal error") and "KeyError" in got.value.message
    assert got.value.to_response_error().data is None
