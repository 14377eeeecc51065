"""Renderers: full-text goldens of the plain rendering (no colour, repository-relative paths),
styled rich output, and the JSON document's shape. ``pytest --update-goldens`` rewrites goldens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxverify.render.json import results_to_json
from fxverify.render.text import render_diagnostic, render_summary, to_plain, to_rich
from fxverify.pipeline import check

from tests.conftest import ROOT

CASES = [
    "corpus/ordering/fail/kv-offload-unordered.fx",
    "corpus/alias/fail/strided-overlap.fx",
    "corpus/ownership/fail/double-handoff.fx",
    "corpus/transforms/fail/compress-average-ratio.fx",
    "corpus/ordering/fail/hb-cycle.fx",
]


def _lines(path: str):
    r = check(path)
    lines = []
    for d in r.diagnostics:
        lines += render_diagnostic(d, r.sources) + [[("", "")]]
    return r, lines + render_summary(r)


@pytest.mark.parametrize("path", CASES)
def test_plain_rendering_matches_golden(path: str, at_root, update_goldens: bool) -> None:
    _, lines = _lines(path)
    text = to_plain(lines)
    gold = ROOT / "tests/goldens" / (Path(path).stem + ".txt")
    if update_goldens:
        gold.write_text(text)
    assert text == gold.read_text()
    assert "\x1b[" not in text


def test_rich_rendering_is_styled(at_root) -> None:
    _, lines = _lines(CASES[0])
    rich_text = to_rich(lines)
    assert rich_text.plain.rstrip("\n") == to_plain(lines).rstrip("\n")
    styles = {str(span.style) for span in rich_text.spans}
    assert "bold red" in styles


def test_json_document_shape(at_root) -> None:
    r, _ = _lines(CASES[1])
    doc = json.loads(results_to_json([r]))
    res = doc["results"][0]
    assert res["verdict"] == "refuted" and "seconds" not in res
    d = next(x for x in res["diagnostics"] if x["code"] == "FX-ALIAS-001")
    assert d["trace"]["witness"]["address"].startswith("0x")
    assert {"step", "time_ns", "device", "hook", "edge", "event", "detail", "violation"} <= set(d["trace"]["events"][0])


def test_counts_take_the_number_of_their_noun() -> None:
    """Every count in a summary agrees with its noun: `1 solver call`, `1 obligation`, `2 policies`."""
    from collections import Counter

    from fxverify.diagnostics.model import counted
    from fxverify.result import CheckResult
    from fxverify.source import SourceMap

    assert [counted(n, "solver call") for n in (0, 1, 2)] == ["0 solver calls", "1 solver call", "2 solver calls"]
    assert counted(1, "policy", "policies") == "1 policy" and counted(3, "entry", "entries") == "3 entries"
    one = CheckResult("p.fx", None, SourceMap(), solver_calls=1, name="p", certified=1,
                      tally={"ordering": Counter({"proved": 1, "by:solver": 1})})
    head = to_plain(render_summary(one)[:1])
    assert head == "p.fx: proved — 1 obligation, 1 solver call, 1 certificate checked\n"


_HOSTILE = 'policy "e"\ninclude "\x1b]0;pwned\x07\u202e.fx"\n'


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_message_never_carries_a_control_character_to_the_terminal(tmp_path: Path, fmt: str) -> None:
    """An include path with an OSC escape sequence (it would retitle the terminal), a BEL and a
    bidirectional override: the message names it with each such character as ``U+XXXX``, in
    plain text, forced colour and GitHub annotations alike; only the colour codes are ESC."""
    import subprocess
    import sys
    (tmp_path / "e.fx").write_text(_HOSTILE, encoding="utf-8")
    for extra in (["--color", "never"], ["--color", "always"]) if fmt == "text" else ([],):
        r = subprocess.run([sys.executable, "-m", "fxverify", "check", "e.fx", "--format", fmt, *extra],
                           cwd=tmp_path, capture_output=True, text=True)
        out = r.stdout + r.stderr
        assert r.returncode == 2 and "include `U+001B]0;pwnedU+0007U+202E.fx` not found" in out, out
        assert "\x07" not in out and "\u202e" not in out and "\x1b]" not in out
        assert "\x1b" not in out.replace("\x1b[", "") if extra == ["--color", "always"] else "\x1b" not in out


@pytest.mark.parametrize("ch,shown", [("\u00a0", "\u2423"), ("\u3000", "\u2423"), ("\x1b", "\ufffd"),
                                      ("\u202e", "\ufffd"), ("\u200b", "\ufffd"), ("\t", " ")])
def test_a_quoted_line_shows_odd_characters_safely_and_in_place(ch: str, shown: str) -> None:
    """The quoted source line never carries a control or format character to the terminal
    (escape sequences, bidirectional overrides: U+FFFD), shows a space that is not ASCII as `␣`
    where it stands (not as a sign of a broken encoding), and keeps the underline under it."""
    from fxverify.diagnostics import codes
    from fxverify.diagnostics.model import diagnostic
    from fxverify.source import SourceMap, Span

    text = f"space s on d size{ch}4\n"
    sources = SourceMap()
    sources.add("p.fx", text)
    at = text.index(ch)
    out = to_plain(render_diagnostic(diagnostic(codes.SYN_002, "x", Span("p.fx", at, at + 1), "here"), sources))
    quoted = next(ln for ln in out.splitlines() if ln.startswith("1 |"))
    caret = next(ln for ln in out.splitlines() if ln.strip().startswith("|") and "^" in ln)
    assert quoted == f"1 | space s on d size{shown}4" and caret.index("^") == quoted.index("size") + 4, out
