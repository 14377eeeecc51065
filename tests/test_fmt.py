"""``fxverify fmt`` and ``fxverify parse``: the formatter keeps every token and comment, is
idempotent, leaves the verdicts and the `# expect:` lines of every corpus policy as they were, and
round-trips grammar-generated policies; ``parse`` counts or reports input errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.syntax.fmt import format_text, shape
from fxverify.syntax.parse import parse, scan_comments
from fxverify.syntax.to_ast import to_ast

from tests.conftest import ROOT
from tests.fuzzing import policy_texts

# The generated real policies are large (seconds each to parse twice): slow tests.
CORPUS = [pytest.param(p, marks=pytest.mark.slow) if p.startswith("corpus/real/") else p
          for p in sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("corpus/**/*.fx"))]


def _code(line: str) -> str:
    """A line's code without its comment, whitespace removed (what the formatter may not change)."""
    return re.sub(r"\s+", "", re.sub(r'#[^"\n]*$', "", line))


def _findings(path: Path) -> list[tuple[str, str, str]]:
    """Each finding as (code, its primary line's code, that line's comment)."""
    from fxverify.pipeline import CheckOptions, check

    r = check(str(path), CheckOptions(verify_hints=False))
    out = []
    for d in r.diagnostics:
        if d.primary is None:
            out.append((d.code, "", ""))
            continue
        line = r.sources.get(d.primary.span.file).line_text(r.sources.location(d.primary.span)[0])
        out.append((d.code, _code(line), line[line.find("#"):] if "#" in line else ""))
    return sorted(out)


@pytest.mark.parametrize("path", CORPUS)
def test_fmt_on_the_corpus(path: str, tmp_path: Path) -> None:
    """Idempotent, the same tokens on the same lines with the same comments, and (where the text
    changed) the same findings on the same code lines, `# expect:` comments included."""
    text = (ROOT / path).read_text()
    out, diags = format_text(text, path)
    assert out is not None, [d.message for d in diags]
    assert format_text(out, path)[0] == out
    code_in = [_code(ln) for ln in text.splitlines() if _code(ln)]
    code_out = [_code(ln) for ln in out.splitlines() if _code(ln)]
    assert code_in == code_out
    # Every `# expect:` stays at the end of the same code line.
    expects = [(_code(ln), ln[ln.index("# expect:"):]) for ln in text.splitlines() if "# expect:" in ln]
    assert expects == [(_code(ln), ln[ln.index("# expect:"):]) for ln in out.splitlines() if "# expect:" in ln]
    if out == text or "/real/" in path:
        return  # nothing to re-check (the real policies are large; their text is unchanged anyway)
    a, b = tmp_path / "a" / Path(path).name, tmp_path / "b" / Path(path).name
    for p, t in ((a, text), (b, out)):
        p.parent.mkdir()
        p.write_text(t)
    for sibling in (ROOT / path).parent.glob("*.fx"):  # includes resolve beside the file
        for d in (a.parent, b.parent):
            if not (d / sibling.name).exists():
                (d / sibling.name).write_text(sibling.read_text())
    assert _findings(a) == _findings(b)


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
    assert out == ('# head\n\npolicy "x"\nfabric {\n  device g : gpu hooks [launch, copy_done]\n}\n'
                   'space s on g size 1 MiB\nregion kv in s at 0 size 1 MiB owner g\nflow f {\n  for l in 0..4 {\n'
                   '    edge a[l]: write kv[l*4 KiB, +4 KiB] by g.launch\n    # about b\n    edge b[l]: read kv by g.copy_done\n'
                   '        after a[l]  # expect: FX-ORD-002\n        # ^ a message\n'
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
