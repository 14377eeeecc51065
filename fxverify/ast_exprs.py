"""Expressions, conditions and references of the policy syntax tree (``fxverify.ast`` re-exports
them).

Integer expressions (sizes in bytes once resolved, by ``fxverify.resolve.env``), the conditions of
``if`` statements, and references to regions, edges, links and map keys, as written: nothing here
is evaluated or resolved. Nodes are frozen dataclasses carrying the ``Span`` of their text.
specs/language.md (Grammar, Footprints) gives their surface syntax. Emits no diagnostics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from fxverify.source import Span


@dataclass(frozen=True, slots=True)
class Ident:
    """A name as written, with its span."""

    name: str
    span: Span


# ---- expressions (integers; sizes in bytes once resolved) --------------------------------------


@dataclass(frozen=True, slots=True)
class IntLit:
    """An integer literal (decimal or hex, underscores removed)."""

    value: int
    span: Span


@dataclass(frozen=True, slots=True)
class SizeLit:
    """``COUNT UNIT`` such as ``64 KiB``; the resolver checks the unit (FX-TYP-003)."""

    count: int
    unit: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class Var:
    """A name used as a value: an index variable, or a device name where a map value is expected."""

    name: str
    span: Span


def index_text(ix: object) -> str:
    """How a fix hint writes an index expression of a family declaration again: a plain loop
    variable as its name (``l``), an integer literal as its value (``0`` in ``edge free[l, 0]``),
    ``""`` for any other expression (``l + 1``), which a hint does not write (``ir.Edge.indices``,
    ``edits.families``)."""
    if isinstance(ix, Var):
        return ix.name
    return str(ix.value) if isinstance(ix, IntLit) else ""


@dataclass(frozen=True, slots=True)
class BinOp:
    """``left OP right`` with ``op`` one of ``+ - * / %`` (``/`` is floor division)."""

    op: str
    left: "Expr"
    right: "Expr"
    span: Span


@dataclass(frozen=True, slots=True)
class Neg:
    """Unary minus."""

    operand: "Expr"
    span: Span


Expr = Union[IntLit, SizeLit, Var, BinOp, Neg]


@dataclass(frozen=True, slots=True)
class Compare:
    """``left OP right`` with ``op`` one of ``== != < <= > >=``."""

    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class BoolOp:
    """``left and right`` or ``left or right``."""

    op: str
    left: "Cond"
    right: "Cond"
    span: Span


@dataclass(frozen=True, slots=True)
class Not:
    """``not operand``."""

    operand: "Cond"
    span: Span


Cond = Union[Compare, BoolOp, Not]


# ---- references ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexItem:
    """A plain expression inside ``[...]``: an index, or the offset of a slice."""

    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class LenItem:
    """``+LEN`` inside a contiguous slice ``[OFF, +LEN]``."""

    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class KeyItem:
    """``elem E``, ``stride S`` or ``count N`` inside a strided slice; ``key`` is the keyword."""

    key: str
    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class StarItem:
    """``*``: every index of that dimension."""

    span: Span


Item = Union[IndexItem, LenItem, KeyItem, StarItem]


@dataclass(frozen=True, slots=True)
class Group:
    """One bracket group ``[item, ...]`` after a name."""

    items: tuple[Item, ...]
    span: Span

    @property
    def is_slice(self) -> bool:
        """True when the group is a slice (it holds ``+LEN`` or ``elem``/``stride``/``count``)."""
        return any(isinstance(it, (LenItem, KeyItem)) for it in self.items)


@dataclass(frozen=True, slots=True)
class Ref:
    """``NAME group*``: a region, region instance, footprint or edge instance reference."""

    name: Ident
    groups: tuple[Group, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class LinkRef:
    """``A -- B`` (``second`` set) or a link name (``second`` is ``None``)."""

    first: Ident
    second: Ident | None
    span: Span


@dataclass(frozen=True, slots=True)
class MapKey:
    """``MAP[KEY]``."""

    map: Ident
    key: Expr
    span: Span
