"""The syntax tree of one policy file.

``fxverify.syntax.to_ast`` produces these nodes from a lark parse tree; ``fxverify.resolve`` reads
them and produces ``fxverify.ir.Policy``. Nodes are frozen dataclasses and every node carries the
``Span`` of the text it came from (character offsets in its file). Nothing here is resolved: names
are plain identifiers, sizes keep their unit, expressions are unevaluated. specs/language.md
describes the surface syntax of each node. Emits no diagnostics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from fxverify.ast_exprs import (  # noqa: F401  (re-exported: the syntax tree is one namespace)
    Ident, IntLit, SizeLit, Var, BinOp, Neg, Compare, BoolOp, Not, IndexItem, LenItem, KeyItem, StarItem,
    Group, Ref, LinkRef, MapKey, Expr, Cond, Item, index_text,
)
from fxverify.source import Span


# ---- top-level declarations --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PolicyDecl:
    """``policy "name" [rlimit N]``: ``rlimit`` caps the solver's effort per obligation."""

    name: str
    span: Span
    rlimit: int | None = None


@dataclass(frozen=True, slots=True)
class IncludeDecl:
    """``include "path"`` (relative to the including file)."""

    path: str
    span: Span


@dataclass(frozen=True, slots=True)
class DeviceDecl:
    """``device NAME: KIND hooks [H, ...]``."""

    name: Ident
    kind: Ident
    hooks: tuple[Ident, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class LinkDecl:
    """``link [NAME =] A -- B : KIND ORDER``."""

    name: Ident | None
    a: Ident
    b: Ident
    kind: Ident
    order: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class FabricDecl:
    """``fabric { ... }``: devices and links in declaration order."""

    items: tuple[DeviceDecl | LinkDecl, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class SpaceDecl:
    """``space NAME on DEV [base E] size E ATTR*``, the attributes ``persistent``,
    ``noncoherent``, ``checksum ALGO`` and ``init`` each at most once, in any order;
    ``noncoherent``: hosts share it without cross-host coherence; ``checksum``: every persist into
    it needs one; ``init``: every byte holds data before the flow starts."""

    name: Ident
    device: Ident
    base: Expr | None
    size: Expr
    persistent: bool
    span: Span
    init: bool = False
    checksum: Ident | None = None
    noncoherent: bool = False


@dataclass(frozen=True, slots=True)
class IndexParam:
    """``VAR in LO..HI`` in a region family declaration (half-open)."""

    var: Ident
    lo: Expr
    hi: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class RegionDecl:
    """``region NAME[params]? in SPACE at ADDR size SIZE owner DEV [dtype T] [init] [pooled]``;
    ``init``: the region's bytes hold data before the flow starts (weights, inputs loaded
    earlier); ``pooled``: it starts in its pool, unallocated, until an ``alloc`` of it."""

    name: Ident
    params: tuple[IndexParam, ...]
    space: Ident
    at: Expr
    size: Expr
    owner: Ident
    dtype: Ident | None
    span: Span
    init: bool = False
    pooled: bool = False


@dataclass(frozen=True, slots=True)
class AliasSetDecl:
    """``alias_set NAME = [REF, ...]``."""

    name: Ident
    members: tuple[Ref, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class MapDecl:
    """``map NAME: TYPE<KEY, VALUE>[N] class CLS[(DEV)] [merge OP]``."""

    name: Ident
    map_type: Ident
    key_type: Ident
    value_type: Ident
    max_entries: Expr
    cls: Ident
    cls_arg: Ident | None
    merge: Ident | None
    span: Span


# ---- flows -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteAction:
    """``write FP``."""

    dst: Ref
    span: Span


@dataclass(frozen=True, slots=True)
class ReadAction:
    """``read FP``."""

    src: Ref
    span: Span


@dataclass(frozen=True, slots=True)
class MoveAction:
    """``move FP -> FP``."""

    src: Ref
    dst: Ref
    span: Span


@dataclass(frozen=True, slots=True)
class ReduceAction:
    """``reduce(OP) FP -> FP`` (an atomic accumulate), or ``reduce(OP, nonatomic) FP -> FP``
    (``atomic`` false: a plain read-modify-write)."""

    op: Ident
    src: Ref
    dst: Ref
    span: Span
    atomic: bool = True


@dataclass(frozen=True, slots=True)
class ReleaseAction:
    """``release REF KIND``."""

    ref: Ref
    kind: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class FlushAction:
    """``flush LINKREF``."""

    link: LinkRef
    span: Span


@dataclass(frozen=True, slots=True)
class CacheOp:
    """``writeback REF`` or ``invalidate REF`` (``kind``), as an action or a clause."""

    kind: str
    ref: Ref
    span: Span


Action = Union[WriteAction, ReadAction, MoveAction, ReduceAction, ReleaseAction, "AllocClause", FlushAction, CacheOp,
               "CancelClause"]


@dataclass(frozen=True, slots=True)
class AfterClause:
    """``after REF, ...`` (edge instance references); ``notifies REF, ...`` when ``notifies``."""

    refs: tuple[Ref, ...]
    span: Span
    notifies: bool = False


@dataclass(frozen=True, slots=True)
class ExpectsClause:
    """``expects OP of REF, ...``: the edge reads the ``OP``-accumulation of these producer edges."""

    op: Ident
    refs: tuple[Ref, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class StreamClause:
    """``stream NAME``."""

    name: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class BytesClause:
    """``bytes SIZE``."""

    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ReuseClause:
    """``reuse SIZE``."""

    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class RwClause:
    """``rw R:W``."""

    read: Expr
    write: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class AliasClause:
    """``alias NAME`` (an alias set)."""

    name: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class RequireClause:
    """``require in_order``; ``what`` is the requirement keyword."""

    what: str
    span: Span


@dataclass(frozen=True, slots=True)
class ArrowArg:
    """``A -> B`` inside a transform's arguments (``quantize(bf16 -> fp8)``)."""

    src: Ident
    dst: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class KeyArg:
    """``KEY VALUE`` inside a transform's arguments (``group 128``)."""

    key: Ident
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ValueArg:
    """A positional transform argument (``crc32c``, ``4``)."""

    value: Expr
    span: Span


XfArg = Union[ArrowArg, KeyArg, ValueArg]


@dataclass(frozen=True, slots=True)
class XfStep:
    """One transform ``NAME`` or ``NAME(ARG, ...)``."""

    kind: Ident
    args: tuple[XfArg, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class TransformClause:
    """``transform XF |> XF ...``."""

    steps: tuple[XfStep, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class HandoffClause:
    """``handoff REF: SRC -> DST``."""

    ref: Ref
    src: Ident
    dst: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class LeaseClause:
    """``lease REF to DEV``."""

    ref: Ref
    device: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class RevokeClause:
    """``revoke REF from DEV``."""

    ref: Ref
    device: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class ReleaseClause:
    """``release REF KIND`` as a clause."""

    ref: Ref
    kind: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class AllocClause:
    """``alloc REF to DEV``, as a clause or as the edge's action."""

    ref: Ref
    device: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class CancelClause:
    """``cancel REF, ...`` (edge instance references), as a clause or as the edge's action."""

    refs: tuple[Ref, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class FlushClause:
    """``flush LINKREF`` as a clause."""

    link: LinkRef
    span: Span


@dataclass(frozen=True, slots=True)
class ViaClause:
    """``via LINKREF, ...``: the links that carry the edge's bytes, in path order."""

    links: tuple[LinkRef, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class MapOpClause:
    """``map_read``/``map_write``/``update``/``guard``/``aggregate`` ``M[K] [= V]``: ``kind`` is the
    ``ir.MapOpKind`` value (``read``, ``write``, ``update``, ``guard``, ``aggregate``); ``value`` is set
    for write, update and guard."""

    kind: str
    target: MapKey
    value: Expr | None
    span: Span


Clause = Union[AfterClause, ExpectsClause, StreamClause, BytesClause, ReuseClause, RwClause, AliasClause, RequireClause,
               TransformClause, HandoffClause, LeaseClause, RevokeClause, ReleaseClause, AllocClause, FlushClause,
               ViaClause, MapOpClause, CacheOp, CancelClause]


@dataclass(frozen=True, slots=True)
class EdgeDecl:
    """``edge NAME[IDX]*: ACTION by DEV.HOOK CLAUSE*``; ``indices`` flattens every index group."""

    name: Ident
    indices: tuple[Expr, ...]
    action: Action
    device: Ident
    hook: Ident
    clauses: tuple[Clause, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ForStmt:
    """``for VAR in LO..HI { ... }`` (half-open, constant bounds)."""

    var: Ident
    lo: Expr
    hi: Expr
    body: tuple["Stmt", ...]
    span: Span


@dataclass(frozen=True, slots=True)
class IfStmt:
    """``if COND { ... } [else { ... }]``; ``else if`` becomes a one-statement ``orelse``."""

    cond: Cond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    span: Span


@dataclass(frozen=True, slots=True)
class FinalOwnerStmt:
    """``final owner REF = DEV``."""

    ref: Ref
    device: Ident
    span: Span


Stmt = Union[EdgeDecl, ForStmt, IfStmt, FinalOwnerStmt]


@dataclass(frozen=True, slots=True)
class FlowDecl:
    """``flow NAME { STMT* }``."""

    name: Ident
    body: tuple[Stmt, ...]
    span: Span


Decl = Union[PolicyDecl, IncludeDecl, FabricDecl, SpaceDecl, RegionDecl, AliasSetDecl, MapDecl, FlowDecl]


@dataclass(frozen=True, slots=True)
class Module:
    """One parsed file: its top-level declarations in source order."""

    path: str
    items: tuple[Decl, ...]
    span: Span
