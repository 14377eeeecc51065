"""The shape of a fix: ``Edit`` (one change to the IR), ``Option`` (edits made together, one way
to fix a finding) and ``Hint`` (the options an obligation proposes), and the helpers every edit
uses to build an edited ``Policy``.

An edit is a frozen dataclass: its ``text()`` is what a hint says, written as policy source, and
its ``apply(policy)`` is the same change made to the IR, so the two never disagree. ``apply``
returns the edited policy, or ``None`` when the edit does not apply (a name the policy lacks, a
clause already there, a change that would not resolve). Emits no diagnostics; ``fxverify.hints``
applies options and checks the edited policy again before a hint is shown.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any

from fxverify.ir import Edge, Footprint, Policy, Region


class Edit(ABC):
    """One change to a policy that a fix hint proposes (subclasses are frozen dataclasses)."""

    @abstractmethod
    def text(self) -> str:
        """The change as a hint says it, in policy source terms (names in backticks)."""

    @abstractmethod
    def apply(self, policy: Policy) -> Policy | None:
        """``policy`` with the change made, or ``None`` when it does not apply to ``policy``."""

    def order(self) -> tuple[str, str]:
        """A total order on edits (kind, then text), so searches and caches are deterministic."""
        return (type(self).__name__, self.text())


@dataclass(frozen=True)
class Option:
    """One way to fix a finding: ``edits`` made together, and ``why`` (shown after a colon) when
    the reason is not obvious from the edits."""

    edits: tuple[Edit, ...]
    why: str = ""

    def text(self) -> str:
        """``edit and edit: why``."""
        body = " and ".join(e.text() for e in self.edits)
        return f"{body}: {self.why}" if self.why else body

    def apply(self, policy: Policy) -> Policy | None:
        """``policy`` with every edit made in order, or ``None`` when one does not apply."""
        out: Policy | None = policy
        for e in self.edits:
            out = e.apply(out) if out is not None else None
        return out if self.edits else None

    def key(self) -> frozenset[Edit]:
        """The set of edits (options that make the same edits are the same fix)."""
        return frozenset(self.edits)


@dataclass(frozen=True)
class Hint:
    """The options an obligation proposes for one finding, best first; ``text()`` joins them
    with ``, or``. An empty hint proposes nothing."""

    options: tuple[Option, ...] = ()

    def text(self) -> str:
        """``option, or option``."""
        return ", or ".join(o.text() for o in self.options)

    def __bool__(self) -> bool:
        return bool(self.options)


def hint(*options: Edit | Option | tuple[Edit, ...] | None) -> Hint:
    """A ``Hint`` of ``options``: an ``Edit`` is an option of one edit, a tuple of edits one
    option of them together; ``None`` entries (an option that does not apply here) are dropped,
    and so are repeats."""
    out: list[Option] = []
    for o in options:
        if o is None:
            continue
        opt = o if isinstance(o, Option) else Option(o if isinstance(o, tuple) else (o,))
        if opt.edits and all(opt.key() != x.key() for x in out):
            out.append(opt)
    return Hint(tuple(out))


def rebuilt(policy: Policy, **fields: Any) -> Policy:
    """``policy`` with ``fields`` replaced and its name index rebuilt."""
    return replace(policy, _index={}, **fields)


def with_edge(policy: Policy, edge: Edge) -> Policy:
    """``policy`` with the edge of ``edge.eid`` replaced by ``edge``."""
    edges = list(policy.edges)
    edges[edge.eid] = edge
    return rebuilt(policy, edges=tuple(edges))


def edge_of(policy: Policy, name: str) -> Edge | None:
    """The edge instance called ``name``, or ``None``."""
    return policy.edge(name) if policy.has("edge", name) else None


def region_of(policy: Policy, name: str) -> Region | None:
    """The region instance called ``name``, or ``None``."""
    return policy.region(name) if policy.has("region", name) else None


def with_regions(policy: Policy, changed: dict[str, Region], shift: dict[str, int] | None = None) -> Policy:
    """``policy`` with the regions of ``changed`` (by name) replaced and, for each region of
    ``shift``, every footprint made through it moved by that many bytes (a region placed
    elsewhere carries its accesses along)."""
    regions = tuple(changed.get(r.name, r) for r in policy.regions)
    if not shift:
        return rebuilt(policy, regions=regions)

    def moved(fp: Footprint | None) -> Footprint | None:
        if fp is None or fp.region not in shift:
            return fp
        return replace(fp, base=fp.base + shift[fp.region])
    edges = tuple(replace(e, src=moved(e.src), dst=moved(e.dst),
                          writebacks=tuple(moved(f) for f in e.writebacks),  # type: ignore[misc]
                          invalidates=tuple(moved(f) for f in e.invalidates))  # type: ignore[misc]
                  for e in policy.edges)
    return rebuilt(policy, regions=regions, edges=edges)


def with_family(policy: Policy, family: str, **changes: Any) -> Policy | None:
    """``policy`` with ``changes`` made to every instance of region family ``family`` (its one
    declaration), or ``None`` when it has no instance or every instance has them already."""
    inst = [r for r in policy.regions if r.family == family]
    if not inst or all(all(getattr(r, k) == v for k, v in changes.items()) for r in inst):
        return None
    return with_regions(policy, {r.name: replace(r, **changes) for r in inst})


def size_text(n: int) -> str:
    """``n`` bytes as a policy writes a size: ``2 MiB`` when it divides, else ``N B``."""
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"
