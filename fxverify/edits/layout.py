"""Edits of memory layout and data: region sizes and places, footprints, alias sets, ``init``,
dtypes, transform chains, reductions and expected accumulations (specs/language.md, "Address
spaces and regions", "Alias sets", "Transforms", "Clauses"). A declaration of a region family
(``region slot[s in 0..4] ...``) is one line of source, so ``init``, ``dtype`` and a new size
apply to every instance of the family, as an edit of that line would. Each edit is a function on
the IR (``base.Edit``); none emits diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fxverify.edits.base import Edit, edge_of, rebuilt, region_of, size_text, with_edge, with_family, with_regions
from fxverify.ir import (
    AliasSet, Checksum, Compress, Edge, EdgeAction, Expectation, Filter, Footprint, Gather, Persist, Policy, Quantize, Reduce,
    Region, Replicate, Scatter, Transform,
)
from fxverify.source import NO_SPAN


def family(policy: Policy, region: Region) -> list[Region]:
    """The instances of ``region``'s family, by base address (a plain region alone)."""
    return sorted((r for r in policy.regions if r.family == region.family), key=lambda r: (r.base, r.name))


def fp_text(fp: Footprint, region: Region) -> str:
    """``fp`` written as a reference through ``region``: ``r``, ``r[off, +len]`` or
    ``r[off, elem E, stride S, count N]`` (offsets from the region's base)."""
    off = fp.base - region.base
    o = size_text(off) if off > 0 else str(off)
    if fp.count == 1 or fp.stride == fp.elem:
        n = fp.nbytes
        return f"{region.name}" if (off, n) == (0, region.size) else f"{region.name}[{o}, +{size_text(n)}]"
    return f"{region.name}[{o}, elem {fp.elem}, stride {fp.stride}, count {fp.count}]"


def _resized(policy: Policy, new: dict[str, tuple[int, int]]) -> Policy | None:
    """``policy`` with each region of ``new`` at ``(base, size)``: footprints of its whole old
    extent (``write R``) cover the new one, others move with its base. ``None`` when a region
    would leave its space."""
    changed: dict[str, Region] = {}
    for name, (base, size) in new.items():
        r = policy.region(name)
        sp = policy.space(r.space)
        if size <= 0 or base < sp.base or base + size > sp.end:
            return None
        changed[name] = replace(r, base=base, size=size)

    def fit(fp: Footprint | None) -> Footprint | None:
        if fp is None or fp.region not in changed:
            return fp
        old, now = policy.region(fp.region), changed[fp.region]
        if (fp.base, fp.nbytes, fp.count) == (old.base, old.size, 1):
            return replace(fp, base=now.base, elem=now.size, stride=now.size)
        return replace(fp, base=fp.base + now.base - old.base)
    edges = []
    for e in policy.edges:
        src, dst = fit(e.src), fit(e.dst)
        nbytes = e.bytes
        if nbytes is not None and e.src is not None and src is not None and nbytes == e.src.nbytes:
            nbytes = src.nbytes  # `bytes` restates the source's length
        edges.append(replace(e, src=src, dst=dst, bytes=nbytes,
                             writebacks=tuple(fit(f) for f in e.writebacks),  # type: ignore[misc]
                             invalidates=tuple(fit(f) for f in e.invalidates)))  # type: ignore[misc]
    return rebuilt(policy, regions=tuple(changed.get(r.name, r) for r in policy.regions), edges=tuple(edges))


@dataclass(frozen=True)
class SizeRegion(Edit):
    """``declare `R` with `size N```: region ``region`` holds ``size`` bytes, and a footprint of its
    whole extent grows with it. For an instance of a uniform family (``family`` set), every
    instance does, and they lie ``spacing`` bytes apart from the first (as far apart as before,
    plus the growth), as an edit of the family's one declaration would make them."""

    region: str
    size: int
    family: str = ""
    spacing: int = 0

    def text(self) -> str:
        if self.family:
            return (f"declare `{self.family}[*]` with `size {size_text(self.size)}`, its instances "
                    f"{size_text(self.spacing)} apart")
        return f"declare `{self.region}` with `size {size_text(self.size)}`"

    def apply(self, policy: Policy) -> Policy | None:
        r = region_of(policy, self.region)
        if r is None or self.size <= r.size or size_region(policy, r, self.size) != self:
            return None
        inst = family(policy, r) if self.family else [r]
        return _resized(policy, {x.name: (inst[0].base + i * self.spacing, self.size) for i, x in enumerate(inst)})


def size_region(policy: Policy, region: Region, size: int) -> SizeRegion | None:
    """The ``SizeRegion`` that gives ``region`` ``size`` bytes: of its family when it has several
    instances, evenly spaced and of one size (else ``None``: no single declaration sizes them)."""
    inst = family(policy, region)
    if len(inst) == 1:
        return SizeRegion(region.name, size)
    gaps = {b.base - a.base for a, b in zip(inst, inst[1:])}
    if len(gaps) != 1 or any(x.size != region.size or x.space != region.space for x in inst):
        return None
    return SizeRegion(region.name, size, region.family, gaps.pop() + max(0, size - region.size))


@dataclass(frozen=True)
class SizeFootprint(Edit):
    """``make the destination of `E` `R[off, +N]```: edge ``edge``'s contiguous destination covers
    ``size`` bytes from its base (its region must hold them: FX-ALIAS-003)."""

    edge: str
    size: int

    def text(self) -> str:
        return f"make the destination of `{self.edge}` {size_text(self.size)} long"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or e.dst is None or not e.dst.contiguous or e.dst.nbytes == self.size:
            return None
        return with_edge(policy, replace(e, dst=replace(e.dst, elem=self.size, stride=self.size, count=1)))


@dataclass(frozen=True)
class Narrow(Edit):
    """``shrink the footprint of `E` to `R[...]```: access ``pos`` of edge ``edge`` keeps its
    base and becomes ``count`` elements of ``elem`` bytes, ``stride`` apart; ``to`` is the new
    reference as the text writes it (``fp_text``)."""

    edge: str
    pos: int
    elem: int
    stride: int
    count: int
    to: str

    def text(self) -> str:
        return f"shrink the footprint of `{self.edge}` to `{self.to}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or self.pos >= len(e.accesses()) or min(self.elem, self.count) <= 0:
            return None
        fp = e.accesses()[self.pos].footprint
        new = replace(fp, elem=self.elem, stride=self.stride, count=self.count)
        if new == fp:
            return None
        field = "src" if e.src is fp else "dst"
        described = "src" if e.src is not None else "dst"  # the footprint a `bytes` clause restates
        nbytes = new.nbytes if e.bytes is not None and field == described else e.bytes
        return with_edge(policy, replace(e, bytes=nbytes, **{field: new}))


def narrow(policy: Policy, e: Edge, pos: int, fp: Footprint) -> Narrow:
    """The ``Narrow`` that turns access ``pos`` of ``e`` into ``fp`` (same base)."""
    return Narrow(e.name, pos, fp.elem, fp.stride, fp.count, fp_text(fp, policy.region(fp.region)))


def clipped(fp: Footprint, r: Region) -> Footprint | None:
    """``fp`` cut back to end inside ``r``, or ``None`` when it starts outside ``r`` or would be
    empty. A stride-0 footprint (every element over the same bytes) keeps its count and gets
    shorter elements. Raises nothing."""
    if fp.lo < r.base or fp.lo >= r.end:
        return None
    if fp.count == 1 or fp.stride == fp.elem:
        return replace(fp, elem=r.end - fp.base, stride=r.end - fp.base, count=1)
    if fp.stride == 0:  # every element is the same bytes: shorten them all
        return replace(fp, elem=r.end - fp.base)
    count = (r.end - fp.base - fp.elem) // fp.stride + 1
    return replace(fp, count=count) if count > 0 else None


@dataclass(frozen=True)
class Widen(Edit):
    """``make `E` `move S -> D```: edge ``edge`` moves every byte of region ``src`` to region
    ``dst`` (of one size): a multi-part layout (quantized data and its scales) moved whole
    rather than part by part (FX-INIT-001, FX-XF-003)."""

    edge: str
    src: str
    dst: str

    def text(self) -> str:
        return f"make `{self.edge}` `move {self.src} -> {self.dst}`"

    def apply(self, policy: Policy) -> Policy | None:
        e, s, d = edge_of(policy, self.edge), region_of(policy, self.src), region_of(policy, self.dst)
        if e is None or s is None or d is None or e.action is not EdgeAction.MOVE or s.size != d.size:
            return None
        if e.src is None or e.dst is None or (e.src.region, e.dst.region) == (s.name, d.name):
            return None
        return with_edge(policy, replace(e, src=s.whole(), dst=d.whole(), bytes=None if e.bytes is None else s.size))


@dataclass(frozen=True)
class MoveRegion(Edit):
    """``place `R` at A``: region ``region`` starts at address ``base`` of its space; the footprints
    made through it move with it."""

    region: str
    base: int

    def text(self) -> str:
        return f"place `{self.region}` at {self.base:#x}"

    def apply(self, policy: Policy) -> Policy | None:
        r = region_of(policy, self.region)
        if r is None or r.base == self.base:
            return None
        return _resized(policy, {r.name: (self.base, r.size)})


@dataclass(frozen=True)
class JoinAlias(Edit):
    """``add `B` to `alias_set S``` (or declare a new set of both): regions ``a`` and ``b`` may
    overlap. Does not apply when both are in different sets already."""

    a: str
    b: str
    name: str

    def text(self) -> str:
        return f"add `{self.b}` to `alias_set {self.name}`"

    def apply(self, policy: Policy) -> Policy | None:
        ra, rb = region_of(policy, self.a), region_of(policy, self.b)
        if ra is None or rb is None or rb.alias_set is not None or ra.alias_set not in (None, self.name):
            return None
        sets = list(policy.alias_sets)
        at = next((i for i, s in enumerate(sets) if s.name == self.name), None)
        if at is None:
            sets.append(AliasSet(self.name, (ra.name, rb.name)))
        else:
            sets[at] = replace(sets[at], regions=sets[at].regions + (rb.name,))
        out = with_regions(policy, {ra.name: replace(ra, alias_set=self.name), rb.name: replace(rb, alias_set=self.name)})
        return rebuilt(out, alias_sets=tuple(sets))


@dataclass(frozen=True)
class EdgeAlias(Edit):
    """``add `alias S` to `E```: every footprint of edge ``edge`` is in alias set ``name``."""

    edge: str
    name: str

    def text(self) -> str:
        return f"add `alias {self.name}` to `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or e.alias == self.name or not any(s.name == self.name for s in policy.alias_sets):
            return None
        return with_edge(policy, replace(e, alias=self.name))


@dataclass(frozen=True)
class Init(Edit):
    """``declare `R` `init```: the bytes of region family ``family`` are loaded before the flow
    starts (FX-INIT-001)."""

    family: str

    def text(self) -> str:
        return f"declare region `{self.family}` `init` (loaded before the flow)"

    def apply(self, policy: Policy) -> Policy | None:
        return with_family(policy, self.family, init=True)


@dataclass(frozen=True)
class Dtype(Edit):
    """``declare `R` with `dtype D```: region family ``family`` holds elements of ``dtype``
    (FX-XF-003)."""

    family: str
    dtype: str

    def text(self) -> str:
        return f"declare region `{self.family}` with `dtype {self.dtype}`"

    def apply(self, policy: Policy) -> Policy | None:
        return with_family(policy, self.family, dtype=self.dtype)


def xf_text(t: Transform) -> str:
    """One transform step as a policy writes it (specs/language.md, "Transforms")."""
    if isinstance(t, Quantize):
        extra = (f", group {t.group}" + (f", scale {t.scale}" if t.scale != "fp32" else "")) if t.group else ""
        return f"quantize({t.src} -> {t.dst}{extra})"
    if isinstance(t, (Compress, Checksum)):
        return f"{t.kind.value}({t.algo})"
    if isinstance(t, Filter):
        return f"filter(keep {t.keep})"
    if isinstance(t, Reduce):
        return f"reduce({t.op})"
    if isinstance(t, (Scatter, Replicate)):
        return f"{t.kind.value}({t.ways})"
    if isinstance(t, Gather):
        return f"gather({t.ways}" + (f", rank {t.rank})" if t.rank is not None else ")")
    return t.kind.value if not isinstance(t, Persist) else "persist"


@dataclass(frozen=True)
class Chain(Edit):
    """``write the chain of `E` as `transform a |> b```: edge ``edge``'s transform chain becomes
    ``steps`` (FX-XF-002, FX-XF-003)."""

    edge: str
    steps: tuple[Transform, ...]

    def __post_init__(self) -> None:
        # A chain is its steps, not where they were written: two chains of the same steps are
        # the same edit (and one read back from a record equals the one written).
        object.__setattr__(self, "steps", tuple(replace(t, span=NO_SPAN) for t in self.steps))

    def text(self) -> str:
        if not self.steps:
            return f"drop the `transform` clause of `{self.edge}`"
        return f"write the chain of `{self.edge}` as `transform {' |> '.join(xf_text(t) for t in self.steps)}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or tuple(replace(t, span=NO_SPAN) for t in e.transforms) == self.steps:
            return None
        return with_edge(policy, replace(e, transforms=self.steps))


@dataclass(frozen=True)
class SetAction(Edit):
    """``make `E` a `reduce(OP)``` or ``make `E` a `move```: a ``move`` accumulates its source into
    its destination with ``op``, a ``reduce`` takes another operator, or (``op`` ``None``) a
    ``reduce`` overwrites its destination instead (FX-XF-004, FX-INIT-001: the first contribution
    initialises). Does not apply to an edge with no source (a ``write`` has nothing to
    accumulate)."""

    edge: str
    op: str | None

    def text(self) -> str:
        return f"make `{self.edge}` a `reduce({self.op})`" if self.op else f"make `{self.edge}` a `move`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or e.src is None or e.dst is None or e.action not in (EdgeAction.MOVE, EdgeAction.REDUCE):
            return None
        action = EdgeAction.REDUCE if self.op else EdgeAction.MOVE
        if (e.action, e.reduce_op) == (action, self.op):
            return None
        return with_edge(policy, replace(e, action=action, reduce_op=self.op))


@dataclass(frozen=True)
class DropExpected(Edit):
    """``drop `P` from `expects` on `C```: consumer ``edge`` no longer expects ``producer``'s
    contribution (the clause goes when it was the last)."""

    edge: str
    producer: str

    def text(self) -> str:
        return f"drop `{self.producer}` from `expects` on `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or e.expects is None or self.producer not in e.expects.producers:
            return None
        rest = tuple(p for p in e.expects.producers if p != self.producer)
        ex: Expectation | None = replace(e.expects, producers=rest) if rest else None
        return with_edge(policy, replace(e, expects=ex))
