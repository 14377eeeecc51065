"""``fxverify fmt`` and ``fxverify parse``: the formatter keeps every token and comment, is
idempotent and canonical (whitespace-shuffled corpus files format to the same bytes, and every
corpus file is formatted), and round-trips grammar-generated policies; ``parse`` counts or reports
input errors."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.syntax.fmt import format_text, shape
from fxverify.syntax.parse import _lexer, parse, scan_comments
from fxverify.syntax.to_ast import to_ast

from tests.conftest import ROOT
from tests.fuzzing import policy_texts

# The generated real policies are large (seconds each to parse twice): slow tests.
CORPUS = [pytest.param(p, marks=pytest.mark.slow) if p.startswith("corpus/real/") else p
          for p in sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("corpus/**/*.fx"))]


@pytest.mark.parametrize("path", CORPUS)
def test_fmt_on_the_corpus(path: str) -> None:
    """Every corpus file is already in its canonical layout (its `# expect:` lines included), so
    `fxverify fmt --check corpus` passes; the generated ones come out of `gen prefill` that way."""
    text = (ROOT / path).read_text()
    out, diags = format_text(text, path)
    assert out is not None, [d.message for d in diags]
    assert out == text, f"{path} is not formatted: run fxverify fmt {path}"


def _perturb(text: str, rnd: random.Random) -> str:
    """``text`` with the whitespace between its tokens changed where that keeps the tokens, their
    comments and the blank lines: a gap becomes nothing (where the two tokens still lex apart),
    spaces, a tab or a line break. Gaps next to a comment (which ends its line or stands on one)
    and blank lines are kept."""
    toks = list(_lexer().lex(text, dont_ignore=True))
    out: list[str] = []
    for i, tok in enumerate(toks):
        prev = toks[i - 1] if i else None
        if tok.type == "WS":
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            if prev is None or nxt is None or "COMMENT" in (prev.type, nxt.type) or tok.value.count("\n") > 1:
                out.append(tok.value)
            else:
                out.append(_gap_for(prev.value, nxt.value, rnd))
            continue
        if prev is not None and prev.type != "WS" and "COMMENT" not in (prev.type, tok.type):
            out.append(_gap_for(prev.value, tok.value, rnd))  # whitespace where the source had none
        out.append(tok.value)
    return "".join(out)


def _gap_for(a: str, b: str, rnd: random.Random) -> str:
    gap = rnd.choice(["", "", " ", "   ", "\t", "\n", "\n      ", " \n"])
    if gap == "" and [t.value for t in _lexer().lex(a + b)] != [a, b]:
        return " "  # the two tokens would merge (`gpu` `0`, `-` `-1`): some whitespace is required
    return gap


SMALL = [p for p in CORPUS if isinstance(p, str)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SMALL), st.randoms(use_true_random=False))
def test_fmt_is_canonical(path: str, rnd: random.Random) -> None:
    """Equivalent token streams format to the same bytes: a corpus file with its optional
    whitespace and line breaks shuffled formats to the file itself (it is formatted), and parses
    to the same syntax tree."""
    text = (ROOT / path).read_text()
    messy = _perturb(text, rnd)
    out, diags = format_text(messy, path)
    assert out is not None, [d.message for d in diags]
    assert out == text
    tree, _ = parse(messy, path)
    assert shape(to_ast(tree, path, messy)[0].items) == shape(to_ast(parse(text, path)[0], path, text)[0].items)


def test_fmt_canonical_on_equivalent_spellings() -> None:
    """The spellings of one device, one link and one size that users write all format alike."""
    one = 'policy "a"\nfabric {\n  device gpu0: gpu hooks [launch]\n  device cpu0: cpu\n  link gpu0 -- cpu0 : pcie ordered\n}\n' \
          'space s on gpu0 size 80 GiB\n'
    for variant in ('policy "a"\nfabric { device gpu0 : gpu hooks [launch] device cpu0:cpu link gpu0--cpu0:pcie ordered }\n'
                    'space s on gpu0 size 80GiB',
                    'policy "a" fabric {\ndevice gpu0:gpu hooks[launch]\n\tdevice cpu0\n:\ncpu link gpu0 --cpu0 :pcie\nordered}'
                    ' space s on gpu0\nsize 80\nGiB\n'):
        assert format_text(variant, "p.fx")[0] == one


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(policy_texts())
def test_fmt_round_trips_grammar_generated_policies(text: str) -> None:
    """parse -> fmt -> parse gives the same syntax tree and the same comments, and fmt is idempotent."""
    tree, diags = parse(text, "p.fx")
    if tree is None:
        return  # the grammar's strings do not always pass the contextual lexer
    out, problems = format_text(text, "p.fx")
    assert out is not None, [d.message for d in problems]
    again, _ = parse(out, "p.fx")
    assert shape(to_ast(again, "p.fx", out)[0].items) == shape(to_ast(tree, "p.fx", text)[0].items)
    assert [c.rstrip() for *_x, c in scan_comments(text)] == [c for *_x, c in scan_comments(out)]
    assert format_text(out, "p.fx")[0] == out


def test_fmt_layout() -> None:
    messy = ('\ufeff# head\n\n\npolicy   "x"\nfabric{\ndevice g : gpu hooks [ launch ,copy_done ]\n}\r\n'
             'space s on g size 1 MiB\nregion kv in s at 0 size 1 MiB owner g\nflow f {\nfor l in 0 .. 4 {\n'
             'edge a[l]: write kv[ l*4 KiB, +4 KiB ] by g . launch\n# about b\n      edge b[l]: read kv by g.copy_done\n'
             'after a[l]   # expect: FX-ORD-002\n  # ^ a message\ntransform quantize(bf16->fp8)|>checksum(crc32c)\n}\n}\n\n\n')
    out, _ = format_text(messy, "p.fx")
    assert out == ('# head\n\npolicy "x"\nfabric {\n  device g: gpu hooks [launch, copy_done]\n}\n'
                   'space s on g size 1 MiB\nregion kv in s at 0 size 1 MiB owner g\nflow f {\n  for l in 0..4 {\n'
                   '    edge a[l]: write kv[l * 4 KiB, +4 KiB] by g.launch\n    # about b\n'
                   '    edge b[l]: read kv by g.copy_done after a[l]  # expect: FX-ORD-002\n    # ^ a message\n'
                   '        transform quantize(bf16 -> fp8) |> checksum(crc32c)\n  }\n}\n')


def test_fmt_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.fx").write_text('policy "a"\nfabric{\ndevice g: gpu hooks [launch]\n}\n')
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/fabric.fx").write_text("fabric {\n    device h: gpu hooks [launch]\n}\n")  # a fragment
    (tmp_path / "bad.fx").write_text('policy "b"\nfabric {\n')
    r = CliRunner().invoke(app, ["fmt", "a.fx", "lib", "--check"])
    assert r.exit_code == 1 and "would reformat a.fx" in r.stdout and "would reformat lib/fabric.fx" in r.stdout
    assert "fabric{" in (tmp_path / "a.fx").read_text()  # --check writes nothing
    r = CliRunner().invoke(app, ["fmt", "a.fx", "--diff"])
    assert r.exit_code == 1 and "+fabric {" in r.stdout
    r = CliRunner().invoke(app, ["fmt", "."])
    assert r.exit_code == 2 and "FX-SYN-003" in r.stderr and "reformatted a.fx" in r.stdout
    assert (tmp_path / "bad.fx").read_text() == 'policy "b"\nfabric {\n'  # a file that does not parse is left alone
    r = CliRunner().invoke(app, ["fmt", "a.fx", "lib", "--check"])
    assert r.exit_code == 0 and "0 files would be reformatted, 2 unchanged" in r.stdout


def test_parse_command(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["parse", str(ROOT / "corpus/ordering/fail/kv-offload-unordered.fx")])
    assert r.exit_code == 0 and r.stdout.endswith(": 2 devices, 2 regions, 2 edges\n")
    real = CliRunner().invoke(app, ["parse", str(ROOT / "corpus/real/llama-3.1-8b-prefill.fx")])
    m = re.search(r"(\d+) devices, (\d+) regions, (\d+) edges\n$", real.stdout)
    assert real.exit_code == 0 and m and int(m[3]) > 30_000
    (tmp_path / "bad.fx").write_text('policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu1 size 1 MiB\n')
    r = CliRunner().invoke(app, ["parse", str(tmp_path / "bad.fx")])
    assert r.exit_code == 2 and "error[FX-NAM-001]" in r.stderr and "bad.fx:3:" in r.stderr and "input error" in r.stdout
    assert CliRunner().invoke(app, ["parse", str(tmp_path / "none")]).exit_code == 2
