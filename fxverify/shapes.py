"""The symbolic forms of a policy's families, as written, beside their unrolled instances.

``resolve`` unrolls every family into ``ir`` instances; it also keeps, per edge declaration, the
loops and branches around it and its footprint references (``EdgeShape``), and per region
family its index ranges and its address and size expressions (``RegionShape``). The parametric
prover (``obligations.parametric``) reads them to discharge an obligation once for every index
value instead of once per instance (specs/obligations.md, "Parametric proofs").

A ``Shapes`` describes exactly the edges and regions it was built with: ``Shapes.of`` gives it
for a policy only when the policy still holds those very tuples (``is``), so a policy edited
after resolution (a hint's re-check, ``dataclasses.replace``) is never judged by the shapes of
another. Emits no diagnostics; raises nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from fxverify import ast
from fxverify.source import Span


class Resolved(Protocol):
    """What ``Shapes.of`` reads of a policy (an ``ir.Policy``; ``ir`` comes after this module)."""

    edges: tuple
    regions: tuple
    shapes: Shapes | None


@dataclass(frozen=True, slots=True)
class Loop:
    """``for var in lo..hi`` around a declaration: ``var`` takes ``lo <= var < hi``."""

    var: str
    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class EdgeShape:
    """One edge declaration as written. ``span`` is the declaration's, which is the ``span`` of
    every ``ir.Edge`` it unrolls to. ``loops``: the ``for`` loops around it, outermost first;
    ``conds``: the ``if`` conditions around it, each with the branch it lies in (``True``: the
    ``then`` branch). ``src``/``dst``: its footprint references, as ``ir.Edge.src``/``dst`` are
    built from them (``None`` where the edge has none). ``device``/``hook``: the hook that drives
    it, as written (``by gpu0.launch``): names, the same for every instance. ``clauses``: its
    clauses as written. ``index``: its instance index expressions over the loop variables
    (``edge kvw[l, 0, b]``); ``action``: its action as written (an ``ast.Action``)."""

    name: str
    span: Span
    where: str
    loops: tuple[Loop, ...]
    conds: tuple[tuple[ast.Cond, bool], ...]
    src: ast.Ref | None
    dst: ast.Ref | None
    device: str
    hook: str
    clauses: tuple[ast.Clause, ...] = ()
    index: tuple[ast.Expr, ...] = ()
    action: ast.Action | None = None


@dataclass(frozen=True, slots=True)
class RegionShape:
    """One region declaration as written: its index variables and their half-open ranges
    (``dims``), its address (``at``, bytes, absolute in its space) and ``size`` (bytes)."""

    name: str
    vars: tuple[str, ...]
    dims: tuple[tuple[int, int], ...]
    at: ast.Expr
    size: ast.Expr


@dataclass(frozen=True, slots=True)
class Shapes:
    """The shapes of one resolution: ``edges`` by declaration span, ``regions`` by family name
    (only families whose every instance was built). ``policy_edges``/``policy_regions`` are the
    very tuples of the ``ir.Policy`` built beside them."""

    edges: dict[Span, EdgeShape]
    regions: dict[str, RegionShape]
    policy_edges: tuple
    policy_regions: tuple
    _instances: dict[Span, tuple[Any, int]] | None = field(default=None, init=False, compare=False, repr=False)

    def instances(self) -> dict[Span, tuple[Any, int]]:
        """Per edge declaration (its span), its first instance among ``policy_edges`` (an
        ``ir.Edge``: this module sits below the IR, so it is not named in the type) and how
        many instances it has, in declaration order. Computed once and shared (do not modify
        it): every shard of a check asks (``obligations.parametric.Parametric.families``), and
        the walk of the Llama-3.1-8B prefill's 37,222 edges took about 10 ms each time (2-core
        machine); the edges never change."""
        got = self._instances
        if got is None:
            got = {}
            for e in self.policy_edges:
                first = got.get(e.span)
                got[e.span] = (e, 1) if first is None else (first[0], first[1] + 1)
            object.__setattr__(self, "_instances", got)  # frozen: set once, as a cache
        return got

    @staticmethod
    def of(policy: Resolved) -> Shapes | None:
        """The shapes of ``policy``, or ``None`` when it has none or was edited after resolution
        (its edges or regions are not the tuples the shapes were built with)."""
        s = policy.shapes
        if s is None or s.policy_edges is not policy.edges or s.policy_regions is not policy.regions:
            return None
        return s


def region_shape(d: ast.RegionDecl, dims: tuple[tuple[int, int], ...]) -> RegionShape:
    """The ``RegionShape`` of region declaration ``d`` with its resolved ranges ``dims``."""
    return RegionShape(d.name.name, tuple(p.var.name for p in d.params), dims, d.at, d.size)


def edge_refs(d: ast.EdgeDecl) -> tuple[ast.Ref | None, ast.Ref | None]:
    """The source and destination footprint references of ``d``, as ``resolve.edges`` reads its
    action: ``write`` has a destination only, ``read`` a source only (``ir.Edge.src``), ``move``
    and ``reduce`` both; any other action touches no footprint."""
    a = d.action
    if isinstance(a, ast.WriteAction):
        return None, a.dst
    if isinstance(a, ast.ReadAction):
        return a.src, None
    if isinstance(a, (ast.MoveAction, ast.ReduceAction)):
        return a.src, a.dst
    return None, None
