"""Edits as JSON-ready records, so the fix a hint verified survives the result cache and the
process boundary (``gate.serialize``): a language server offers the very edits that were checked,
never edits read back from the hint's words.

Takes ``Option``s (of any ``Edit``); produces nested lists and dicts of strings, integers and
booleans, and back. A value is written as itself (``str``, ``int``, ``bool``, ``None``), a tuple
as ``{"tuple": [...]}``, an enum as ``{"enum": CLASS, "value": ...}`` and a dataclass (an edit,
a transform step) as ``{"data": CLASS, "fields": {...}}`` without its source span. Emits no
diagnostics; ``from_record`` raises ``ValueError`` on a record it cannot read (a stored result
from another version: the caller treats that as a cache miss or a bug).
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from fxverify import edits as _edits
from fxverify import xforms
from fxverify.edits.base import Edit, Option
from fxverify.vocab import ClassKind, LinkOrder
from fxverify.ir import MapOpKind

_ENUMS: dict[str, type[Enum]] = {k.__name__: k for k in (ClassKind, LinkOrder, MapOpKind)}


def _classes() -> dict[str, type]:
    """Every dataclass a record may name: the edits ``fxverify.edits`` exports and the transform
    steps."""
    out: dict[str, type] = {}
    for name in _edits.__all__:
        c = getattr(_edits, name)
        if isinstance(c, type) and issubclass(c, Edit) and dataclasses.is_dataclass(c):
            out[c.__name__] = c
    for c in (xforms.Move, xforms.Quantize, xforms.Compress, xforms.Checksum, xforms.Filter, xforms.Reduce,
              xforms.Scatter, xforms.Gather, xforms.Replicate, xforms.Persist):
        out[c.__name__] = c
    return out


def _encode(v: Any) -> Any:
    if isinstance(v, Enum):
        return {"enum": type(v).__name__, "value": v.value}
    if isinstance(v, tuple):
        return {"tuple": [_encode(x) for x in v]}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {"data": type(v).__name__, "fields": {f.name: _encode(getattr(v, f.name)) for f in dataclasses.fields(v)
                                                      if f.name != "span" and f.init}}
    if v is None or isinstance(v, (str, int, bool)):
        return v
    raise ValueError(f"cannot record {type(v).__name__}")


def _decode(v: Any, classes: dict[str, type]) -> Any:
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(_decode(x, classes) for x in v["tuple"])
        if "enum" in v:
            return _ENUMS[v["enum"]](v["value"])
        if "data" in v and v["data"] in classes:
            return classes[v["data"]](**{k: _decode(x, classes) for k, x in v["fields"].items()})
        raise ValueError(f"unknown record {sorted(v)}")
    return v


def to_record(o: Option) -> dict[str, Any]:
    """``o`` as a record: ``{"edits": [...], "why": ...}``."""
    return {"edits": [_encode(e) for e in o.edits], "why": o.why}


def from_record(v: dict[str, Any]) -> Option:
    """The ``Option`` of record ``v`` (``to_record``). Raises ``ValueError`` when ``v`` names an
    edit or a value this version does not know."""
    classes = _classes()
    try:
        out = tuple(_decode(e, classes) for e in v["edits"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"unreadable edit record: {exc}") from exc
    if not all(isinstance(e, Edit) for e in out):
        raise ValueError("an option record holds something that is not an edit")
    return Option(out, str(v.get("why", "")))
