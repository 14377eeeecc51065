"""Completion: the names and words that fit where the cursor is.

Takes the policy's ``index.Index`` (its declared names by kind) and the text of the line up to the
cursor; produces ``Item`` values. The words before the cursor decide what fits, following the
grammar (specs/language.md): after ``by`` a device, after ``by DEV.`` that device's hooks, after
``after``/``notifies``/``cancel``/``of`` an edge, after an action keyword or ``->`` a region, after ``alias``
an alias set, after a map clause keyword a map, after ``owner``/``to``/``from``/``on`` a device,
after ``in`` a space, after ``via``/``flush`` a link, after a number a size unit, and the words of
``fxverify.vocab`` where a kind, order, class, dtype or transform is expected. Elsewhere every
keyword of the grammar and every declared name. Emits nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fxverify.lsp.index import Index
from fxverify.syntax.parse import keywords
from fxverify.vocab import CHECKSUMS, CODECS, DTYPES, LINK_KINDS, MAP_TYPES, OPERATORS, UNITS, ClassKind, DeviceKind, LinkOrder, ReleaseKind
from fxverify.xforms import XfKind


@dataclass(frozen=True, slots=True)
class Item:
    """One completion: the ``label`` inserted, its ``kind`` (``keyword``, ``word`` or a symbol
    kind: ``device``, ``region``...) and a short ``detail``."""

    label: str
    kind: str
    detail: str = ""


_W = r"[A-Za-z_][A-Za-z0-9_]*"

#: (pattern the text before the cursor ends with, what fits there). The first match wins.
_CONTEXTS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p + r"$"), k) for p, k in (
    (rf"\bby\s+({_W})\.\w*", "hook"),
    (r"\bby\s+\w*", "device"),
    (rf"\bhandoff\s+[^:]+:\s*(?:{_W}\s*->\s*)?\w*", "device"),
    (r"\bquantize\s*\((?:\w+\s*->\s*)?\w*", "word:dtype"),
    (r"\bfinal\s+owner\s+\S+\s*=\s*\w*", "device"),
    (r"\bfinal\s+owner\s+\w*", "region"),
    (r"\b(?:after|notifies|cancel|of)\s+(?:[^:]*,\s*)?\w*", "edge"),
    (r"\b(?:write|read|move|writeback|invalidate|handoff|lease|revoke|release|alloc)\s+\w*", "region"),
    (r"->\s*\w*", "region"),
    (r"\balias\s+\w*", "alias set"),
    (r"\balias_set\s+\w+\s*=\s*\[(?:[^\]]*,\s*)?\w*", "region"),
    (r"\b(?:map_read|map_write|update|guard|aggregate)\s+\w*", "map"),
    (r"\b(?:owner|to|from|on)\s+\w*", "device"),
    (rf"\blink\s+(?:{_W}\s*=\s*)?(?:{_W}\s*--\s*)?\w*", "device"),
    (r"\bregion\s+\w+(?:\[[^\]]*\])?\s+in\s+\w*", "space"),
    (r"\b(?:via|flush)\s+(?:[^:]*,\s*)?\w*", "link"),
    (r"\bdevice\s+\w+\s*:\s*\w*", "word:device kind"),
    (rf"\blink\s+[^:]*:\s*{_W}\s+\w*", "word:link order"),
    (r"\blink\s+[^:]*:\s*\w*", "word:link kind"),
    (r"\bclass\s+\w*", "word:consistency class"),
    (r"\bdtype\s+\w*", "word:dtype"),
    (r"\bmap\s+\w+\s*:\s*\w*", "word:map type"),
    (r"\b(?:transform|\|>)\s*\w*", "word:transform"),
    (r"\bcompress\s*\(\w*", "word:codec"),
    (r"\bchecksum\s*(?:\(\s*)?\w*", "word:checksum"),
    (r"\b(?:reduce\s*\(|merge\s+|expects\s+)\w*", "word:operator"),
    (r"\brelease\s+\S+\s+\w*", "word:release kind"),
    (r"\d\s+\w*", "word:unit"),
))

_WORDS: dict[str, tuple[str, ...]] = {
    "device kind": tuple(k.value for k in DeviceKind),
    "link kind": LINK_KINDS,
    "link order": tuple(o.value for o in LinkOrder),
    "consistency class": tuple(c.value for c in ClassKind),
    "dtype": tuple(DTYPES),
    "map type": MAP_TYPES,
    "transform": tuple(x.value for x in XfKind),
    "codec": tuple(CODECS),
    "checksum": CHECKSUMS,
    "operator": tuple(OPERATORS),
    "release kind": tuple(r.value for r in ReleaseKind),
    "unit": tuple(UNITS),
}

_KINDS = ("edge", "region", "device", "space", "map", "link", "alias set", "flow")


def context(before: str) -> str:
    """What fits after ``before`` (the line up to the cursor): a symbol kind, ``hook:DEV``,
    ``word:WHAT`` or ``any``."""
    for pattern, kind in _CONTEXTS:
        m = pattern.search(before)
        if m is not None:
            return f"hook:{m.group(1)}" if kind == "hook" else kind
    return "any"


def complete(idx: Index | None, before: str) -> list[Item]:
    """The completions for a cursor after ``before`` (the line's text up to it), in order."""
    where = context(before)
    if where.startswith("word:"):
        what = where[5:]
        return [Item(w, "word", what) for w in _WORDS[what]]
    if idx is None:
        return [Item(k, "keyword") for k in keywords()] if where == "any" else []
    if where.startswith("hook:"):
        dev = where[5:]
        return [Item(n.split(".", 1)[1], "hook", f"hook of {dev}") for n in idx.names("hook") if n.startswith(dev + ".")]
    if where != "any":
        return [Item(n, where, _detail(idx, where, n)) for n in idx.names(where)]
    names = [Item(n, k, _detail(idx, k, n)) for k in _KINDS for n in idx.names(k)]
    return names + [Item(k, "keyword") for k in keywords()]


def _detail(idx: Index, kind: str, name: str) -> str:
    """A one-line description: the kind, with the device, space or size the IR gives."""
    pol = idx.policy
    if pol is None:
        return kind
    if kind == "region":
        regs = [r for r in pol.regions if r.family == name]
        if regs:
            n = f"{len(regs)} x " if len(regs) > 1 else ""
            return f"region in {regs[0].space}, {n}{regs[0].size:,} B"
    if kind == "device" and pol.has("device", name):
        return f"device ({pol.device(name).kind.value})"
    if kind == "space" and pol.has("space", name):
        return f"space on {pol.space(name).device}, {pol.space(name).size:,} B"
    if kind == "edge":
        es = [e for e in pol.edges if e.family == name]
        if es:
            return f"edge, {es[0].action.value} by {es[0].device}.{es[0].hook}" + (f" ({len(es)} instances)" if len(es) > 1 else "")
    return kind
