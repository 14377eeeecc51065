"""Edits of ordering and visibility: ``after`` clauses added or removed, flushes of posted links,
pinned routes, and write-backs and invalidates of non-coherent memory (specs/language.md,
"Clauses"). Each is a function on the IR (``base.Edit``); none emits diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from fxverify.edits.base import Edit, edge_of, rebuilt, region_of, with_edge
from fxverify.ir import Edge, EdgeAction, Policy
from fxverify.source import NO_SPAN


@dataclass(frozen=True)
class After(Edit):
    """``add `after P, Q` to `E```: edge instance ``edge`` starts only once each of ``preds`` has
    finished. Does not apply when a predecessor is missing, is the edge itself, or is already in
    its ``after`` list."""

    edge: str
    preds: tuple[str, ...]

    def text(self) -> str:
        return f"add `after {', '.join(self.preds)}` to `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or not self.preds or len(set(self.preds)) != len(self.preds):
            return None
        if any(p == self.edge or p in e.after or not policy.has("edge", p) for p in self.preds):
            return None
        return with_edge(policy, replace(e, after=e.after + self.preds))


def after(edge: str, *preds: str) -> After:
    """``After(edge, preds)``."""
    return After(edge, tuple(preds))


@dataclass(frozen=True)
class DropAfter(Edit):
    """``remove `after P` from `E```: the ordering ``edge`` after ``pred`` is dropped."""

    edge: str
    pred: str

    def text(self) -> str:
        return f"remove `after {self.pred}` from `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or self.pred not in e.after:
            return None
        return with_edge(policy, replace(e, after=tuple(p for p in e.after if p != self.pred)))


@dataclass(frozen=True)
class Swap(Edit):
    """``swap `A` and `B```, where ``B`` runs ``after A``: ``B`` takes over ``A``'s ``after``
    list (without ``A``, keeping its own other predecessors), ``A`` runs ``after B`` alone, and
    every edge that ran ``after B`` runs ``after A`` instead, so the chain ``... -> A -> B -> ...``
    becomes ``... -> B -> A -> ...`` (a read before the write it needs, a release before the
    last use, a checksum before the last fragment)."""

    first: str
    then: str

    def text(self) -> str:
        return f"swap `{self.first}` and `{self.then}` in their chain (`{self.then}` first, `{self.first}` after it)"

    def apply(self, policy: Policy) -> Policy | None:
        a, b = edge_of(policy, self.first), edge_of(policy, self.then)
        if a is None or b is None or a.name not in b.after or b.name in a.after:
            return None
        edges = list(policy.edges)
        for z in policy.edges:
            if z.eid not in (a.eid, b.eid) and b.name in z.after:
                edges[z.eid] = replace(z, after=tuple(dict.fromkeys(a.name if p == b.name else p for p in z.after)))
        edges[b.eid] = replace(b, after=tuple(dict.fromkeys(a.after + tuple(p for p in b.after if p != a.name))))
        edges[a.eid] = replace(a, after=(b.name,))
        return rebuilt(policy, edges=tuple(edges))


@dataclass(frozen=True)
class Flush(Edit):
    """``add `flush L` to `E```: edge ``edge`` flushes link ``link`` when it finishes, after its
    own writes (its device must be at an end of the link: FX-HOOK-001)."""

    edge: str
    link: str

    def text(self) -> str:
        return f"add `flush {self.link}` to `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or not policy.has("link", self.link) or self.link in e.flushes:
            return None
        return with_edge(policy, replace(e, flushes=e.flushes + (self.link,)))


@dataclass(frozen=True)
class FlushEdge(Edit):
    """``add `edge N: flush L by D.H after W` and `after N` to `R```: a new edge flushes link
    ``link`` between writer ``writer`` and reader ``reader``."""

    name: str
    link: str
    device: str
    hook: str
    writer: str
    reader: str

    def text(self) -> str:
        return (f"add `edge {self.name}: flush {self.link} by {self.device}.{self.hook} after {self.writer}` "
                f"and `after {self.name}` to `{self.reader}`")

    def apply(self, policy: Policy) -> Policy | None:
        w, r = edge_of(policy, self.writer), edge_of(policy, self.reader)
        if (w is None or r is None or policy.has("edge", self.name) or not policy.has("link", self.link)
                or not policy.has("device", self.device) or self.hook not in policy.device(self.device).hooks):
            return None
        new = Edge(len(policy.edges), self.name, self.name, EdgeAction.FLUSH, self.device, self.hook,
                   after=(self.writer,), flushes=(self.link,), flow=w.flow)
        edges = list(policy.edges) + [new]
        edges[r.eid] = replace(r, after=r.after + (self.name,))
        return rebuilt(policy, edges=tuple(edges))


def flush_edge(policy: Policy, link: str, writer: Edge, reader: Edge) -> FlushEdge | None:
    """The ``FlushEdge`` a hint proposes for a write over posted ``link`` read by ``reader``: driven
    by the reader's hook when its device is at an end of the link, else by the writer's, else by
    the first hook of the link's first end; named ``flush_<link>`` (made unique). ``None`` when
    no end of the link declares a hook."""
    ln = policy.link(link)
    ends = (ln.a, ln.b)
    pick = next(((e.device, e.hook) for e in (reader, writer) if e.device in ends), None)
    if pick is None:
        dev = next((d for d in ends if policy.device(d).hooks), None)
        if dev is None:
            return None
        pick = (dev, policy.device(dev).hooks[0])
    stem = "flush_" + "".join(c if c.isalnum() else "_" for c in link)
    name, k = stem, 1
    while policy.has("edge", name):
        k += 1
        name = f"{stem}_{k}"
    return FlushEdge(name, link, pick[0], pick[1], writer.name, reader.name)


@dataclass(frozen=True)
class Via(Edit):
    """``pin `via L1, L2` on `E```: edge ``edge``'s bytes take exactly this route (FX-ORD-003,
    FX-ORD-004). Does not apply to an edge that pins a route already."""

    edge: str
    links: tuple[str, ...]

    def text(self) -> str:
        return f"pin `via {', '.join(self.links)}` on `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or e.via is not None or not self.links or not all(policy.has("link", n) for n in self.links):
            return None
        return with_edge(policy, replace(e, via=self.links))


@dataclass(frozen=True)
class _CacheClause(Edit):
    """A ``writeback``/``invalidate`` clause (``kind``) of region ``region`` added to ``edge``."""

    edge: str
    region: str
    kind: ClassVar[str] = ""

    def text(self) -> str:
        return f"add `{self.kind} {self.region}` to `{self.edge}`"

    def apply(self, policy: Policy) -> Policy | None:
        e, r = edge_of(policy, self.edge), region_of(policy, self.region)
        field = f"{self.kind}s"
        if e is None or r is None or replace(r.whole(), span=NO_SPAN) in [replace(f, span=NO_SPAN) for f in getattr(e, field)]:
            return None
        return with_edge(policy, replace(e, **{field: getattr(e, field) + (r.whole(),)}))


@dataclass(frozen=True)
class Writeback(_CacheClause):
    """``add `writeback R` to `E```: edge ``edge``'s device writes back its cache lines of region
    ``region`` when the edge finishes (FX-ORD-005)."""

    kind: ClassVar[str] = "writeback"


@dataclass(frozen=True)
class Invalidate(_CacheClause):
    """``add `invalidate R` to `E```: edge ``edge``'s device drops its cache lines of region
    ``region`` when the edge starts (FX-ORD-005)."""

    kind: ClassVar[str] = "invalidate"
