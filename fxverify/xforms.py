"""The transform chain steps of the IR (BRIEF section 1): ``Move``, ``Quantize``, ``Compress``,
``Checksum``, ``Filter``, ``Reduce``, ``Scatter``, ``Gather``, ``Replicate``, ``Persist``, their kind
(``XfKind``) and the ``Transform`` union. ``fxverify.ir`` re-exports them: an ``ir.Edge`` holds its
chain as ``Edge.transforms``. Units: bytes. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from fxverify.source import NO_SPAN, Span


class XfKind(Enum):
    """Transform kinds (BRIEF section 1)."""

    MOVE = "move"
    QUANTIZE = "quantize"
    COMPRESS = "compress"
    CHECKSUM = "checksum"
    FILTER = "filter"
    REDUCE = "reduce"
    SCATTER = "scatter"
    GATHER = "gather"
    REPLICATE = "replicate"
    PERSIST = "persist"


@dataclass(frozen=True, slots=True)
class Move:
    """``move``: the bytes pass unchanged."""

    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.MOVE


@dataclass(frozen=True, slots=True)
class Quantize:
    """``quantize(src -> dst, group G, scale S)``: elements of dtype ``src`` become ``dst``; with
    ``group``, one scale of dtype ``scale`` per ``group`` elements travels with them."""

    src: str
    dst: str
    group: int | None = None
    scale: str = "fp32"
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.QUANTIZE


@dataclass(frozen=True, slots=True)
class Compress:
    """``compress(algo)`` with a codec of ``vocab.CODECS``."""

    algo: str
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.COMPRESS


@dataclass(frozen=True, slots=True)
class Checksum:
    """``checksum(algo)`` over the bytes as they are at this step (``vocab.CHECKSUMS``)."""

    algo: str
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.CHECKSUM


@dataclass(frozen=True, slots=True)
class Filter:
    """``filter(keep P)``: at most ``keep`` percent of the bytes pass (0..100)."""

    keep: int = 100
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.FILTER


@dataclass(frozen=True, slots=True)
class Reduce:
    """``reduce(op)``: the bytes are combined with operator ``op`` (``vocab.OPERATORS``)."""

    op: str
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.REDUCE


@dataclass(frozen=True, slots=True)
class Scatter:
    """``scatter(W)``: the bytes are split ``ways`` ways; one destination receives one part."""

    ways: int
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.SCATTER


@dataclass(frozen=True, slots=True)
class Gather:
    """``gather(W, rank R)``: ``ways`` parts are collected; with ``rank``, in place at the rank's
    own slot of the destination."""

    ways: int
    rank: int | None = None
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.GATHER


@dataclass(frozen=True, slots=True)
class Replicate:
    """``replicate(W)``: the bytes are copied ``ways`` times."""

    ways: int
    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.REPLICATE


@dataclass(frozen=True, slots=True)
class Persist:
    """``persist``: the bytes are made durable in a persistent space."""

    span: Span = NO_SPAN
    kind: ClassVar[XfKind] = XfKind.PERSIST


#: One step of an edge's transform chain (BRIEF section 1); ``t.kind`` names its variant.
Transform = Move | Quantize | Compress | Checksum | Filter | Reduce | Scatter | Gather | Replicate | Persist
