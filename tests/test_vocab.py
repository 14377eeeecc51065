"""The one vocabulary (``fxverify.vocab``): the documentation names every word of it, the resolver
accepts each of its codecs and checksums and refuses a word outside it (FX-TYP-003), and its facts
are consistent."""

from __future__ import annotations

import re

import pytest

from fxverify import ir, vocab

from tests.conftest import ROOT

LANGUAGE = (ROOT / "specs/language.md").read_text()
# The code in the reference: fenced blocks, then inline spans (paired left to right) of the rest.
_FENCED = re.findall(r"```.*?```", LANGUAGE, flags=re.S)
CODE = _FENCED + re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", LANGUAGE, flags=re.S))

WORDS = {
    "unit": list(vocab.UNITS), "dtype": list(vocab.DTYPES), "codec": list(vocab.CODECS),
    "checksum": list(vocab.CHECKSUMS), "operator": list(vocab.OPERATORS),
    "device kind": [k.value for k in vocab.DeviceKind], "link kind": list(vocab.LINK_KINDS),
    "link order": [o.value for o in vocab.LinkOrder], "map type": list(vocab.MAP_TYPES),
    "map scalar": list(vocab.MAP_SCALAR_BITS), "class": [c.value for c in vocab.ClassKind],
    "release kind": [r.value for r in vocab.ReleaseKind], "transform": [x.value for x in ir.XfKind],
}


@pytest.mark.parametrize("kind,word", [(k, w) for k, ws in WORDS.items() for w in ws])
def test_language_reference_names_every_word(kind: str, word: str) -> None:
    assert any(re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", c) for c in CODE), \
        f"{kind} `{word}` is not documented in specs/language.md"


_PERSIST = (ROOT / "corpus/transforms/ok/compress-then-checksum-persist.fx").read_text()


@pytest.mark.parametrize("kind,word", [("codec", w) for w in vocab.CODECS] + [("checksum", w) for w in vocab.CHECKSUMS]
                         + [("codec", "zstd9"), ("checksum", "md5")])
def test_resolver_accepts_exactly_the_words(kind: str, word: str, tmp_path) -> None:
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    src = _PERSIST.replace("deflate", word) if kind == "codec" else _PERSIST.replace("checksum(crc32c)", f"checksum({word})")
    (tmp_path / "p.fx").write_text(src)
    policy, diags = load_policy(str(tmp_path / "p.fx"), SourceMap())
    known = word in (vocab.CODECS if kind == "codec" else vocab.CHECKSUMS)
    assert (policy is not None) is known, [d.message for d in diags]
    assert [d.code for d in diags if d.is_error] == ([] if known else ["FX-TYP-003"])


def test_dtype_aliases_agree_with_their_canonical_spelling() -> None:
    for d in vocab.DTYPES.values():
        assert vocab.DTYPES[d.canonical].bits == d.bits
        assert vocab.canonical_dtype(d.canonical) == d.canonical


def test_commuting_operators_fold() -> None:
    for op in vocab.OPERATORS.values():
        assert (op.fold is not None) == op.commutes
        if op.fold is not None and op.name != "count":
            assert op.fold(op.fold(3, 5), 6) == op.fold(3, op.fold(5, 6)) and op.fold(3, 5) == op.fold(5, 3)


@pytest.mark.parametrize("codec", list(vocab.CODECS))
def test_codec_bounds_never_shrink_and_grow_with_the_input(codec: str) -> None:
    c = vocab.CODECS[codec]
    prev = -1
    for n in [0, 1, 255, 256, 4095, 4096, 131071, 131072, 131073, 1 << 20, (1 << 25) + 1]:
        assert c.bound(n) >= n and c.bound(n) >= prev
        prev = c.bound(n)
    assert c.source and c.formula
