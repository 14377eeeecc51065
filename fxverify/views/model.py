"""The data of a policy picture, before any layout: what ``views`` builds and ``render.dot`` writes.

A ``Picture`` holds ``Node``s (in ``Cluster``s, which may nest), ``Arrow``s between them and notes.
Every element carries a ``kind`` that names what it stands for (a device, a region family, an
``after`` ordering, a posted link...), never how to draw it: the renderer maps kinds to shapes and
colours. ``focus`` marks what a highlighted finding involves. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    """A box. ``ident`` is unique in its picture; ``lines`` are its label (the first is its name);
    ``kind`` is one of ``device``, ``region``, ``regions`` (a folded family), ``edge``, ``edges``
    (a folded family), ``hook``; ``tag`` refines it (a device's kind, an edge's action);
    ``cluster`` the ident of its cluster; ``tip`` the hover text."""

    ident: str
    lines: tuple[str, ...]
    kind: str
    cluster: str | None = None
    tip: str = ""
    focus: bool = False
    tag: str = ""


@dataclass(frozen=True)
class Arrow:
    """A line from ``src`` to ``dst`` (node idents). ``kind``: a link's ordering (``ordered``,
    ``unordered``, ``posted``), a movement (``move``, ``write``, ``read``, ``reduce``), an HB
    ordering (``after``, ``stream``), or what a finding lacks (``missing``: an ordering or a
    path). ``count`` is how many instance arrows a folded arrow stands for."""

    src: str
    dst: str
    kind: str
    label: str = ""
    tip: str = ""
    focus: bool = False
    count: int = 1


@dataclass(frozen=True)
class Cluster:
    """A group drawn as a frame: a device, an address space, a device's stream."""

    ident: str
    label: str
    kind: str
    parent: str | None = None
    tip: str = ""


@dataclass(frozen=True)
class Picture:
    """One view of a policy: ``view`` is ``fabric``, ``movement`` or ``hb``; ``directed`` tells
    arrows from undirected lines (links); ``notes`` say what was folded or left out."""

    view: str
    title: str
    directed: bool
    nodes: tuple[Node, ...]
    arrows: tuple[Arrow, ...]
    clusters: tuple[Cluster, ...] = ()
    notes: tuple[str, ...] = ()
