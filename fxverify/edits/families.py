"""Orderings written on an edge family's declaration: an ``after`` that a fix verified on one
instance (``free[0]``) can only be written in the policy on the declaration of its family
(``edge free[b]: ...``), where it holds for every instance of that declaration. This module
says how such an ordering is written (``generalise``) and makes it an edit (``FamilyAfter``)
that adds it to every instance, so the hint shows the form a policy author pastes into the loop
and ``fxverify.hints`` verifies exactly that form (specs/output.md, "Fix hints").

Takes instance names (``pull[3]``, ``kvb[1][2]``) and the index variables of a declaration
(``ir.Edge.indices``); produces reference text in the language's syntax (``pull[b]``,
``pull[b + 1]``, ``save[*]``) and edited policies. Emits no diagnostics; the language server
writes the same text (``lsp.actions``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from fxverify.edits.base import Edit, edge_of, rebuilt
from fxverify.edits.order import After
from fxverify.ir import Edge, Policy

_INSTANCE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[-?\d+\])*)$")
_ITEM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?: ([+-]) (\d+))?$")


def instance_index(name: str) -> tuple[str, tuple[int, ...]] | None:
    """``("pull", (3,))`` for ``pull[3]`` (``(name, ())`` for a plain name); ``None`` for a
    name that is not an instance name."""
    m = _INSTANCE.match(name)
    if m is None:
        return None
    return m.group(1), tuple(int(x) for x in re.findall(r"-?\d+", m.group(2)))


def generalise(indices: tuple[str, ...], instance: str, pred: str, fixed: Collection[int] = (),
               positional: bool = False) -> str | None:
    """``pred`` written with the index variables ``indices`` of the declaration of edge instance
    ``instance`` (``ir.Edge.indices``: a variable, an integer literal, or ``""`` for another
    expression), as seen from that instance. An index of ``pred`` at a position in ``fixed``
    (one that every instance of its family has the same value at: ``fixed_positions``) stays a
    number. Else an index in the place of one of the declaration's is written as that one when it
    has the same value there (``attn[l, 0]`` on ``edge free[l, 0]``); else an index equal to the
    value a variable has at ``instance`` becomes that variable, another one becomes ``VAR + d``
    (``VAR - d``) when the declaration has a single variable, else it stays a number. With
    ``positional``, and ``pred`` of as many indices as ``instance``, an index in the place of a
    variable of the declaration is written as that variable with an offset before any other
    variable of the same value is tried (``free[q - 2, l, 0]`` on ``take[2][0][0]`` of ``edge
    take[q, l, 0]``, where ``l`` happens to be 0 too). ``after pull[3]`` on ``free[3]`` of ``edge
    free[b]`` is written ``pull[b]``. ``None`` when a name is not an instance name or
    ``instance`` has another number of indices than ``indices``."""
    mine, theirs = instance_index(instance), instance_index(pred)
    if mine is None or theirs is None or len(mine[1]) != len(indices):
        return None
    env = {n: v for n, v in zip(indices, mine[1]) if n and not _number(n)}
    if not theirs[1]:
        return theirs[0]
    parts = []
    for i, v in enumerate(theirs[1]):
        here = indices[i] if i < len(indices) else ""
        same = next((n for n, x in env.items() if x == v), None)
        if i in fixed:
            parts.append(str(v))
        elif here and mine[1][i] == v:
            parts.append(here)
        elif positional and here in env and len(theirs[1]) == len(indices):
            d = v - env[here]
            parts.append(f"{here} + {d}" if d > 0 else f"{here} - {-d}")
        elif same is not None:
            parts.append(same)
        elif len(env) == 1:
            n, x = next(iter(env.items()))
            parts.append(f"{n} + {v - x}" if v > x else f"{n} - {x - v}")
        else:
            parts.append(str(v))
    return f"{theirs[0]}[{', '.join(parts)}]"


def fixed_positions(policy: Policy, family: str) -> frozenset[int]:
    """The index positions at which every instance of edge family ``family`` has the same value
    (the rank ``0`` of ``attn[l][0]``, every position of a family of one instance): a hint keeps
    them numbers (``generalise``)."""
    seen: dict[int, set[int]] = {}
    for e in policy.edges:
        got = instance_index(e.name) if e.family == family and e.name != family else None
        if got is not None:
            for i, v in enumerate(got[1]):
                seen.setdefault(i, set()).add(v)
    return frozenset(i for i, vs in seen.items() if len(vs) == 1)


def _number(item: str) -> bool:
    return item.lstrip("-").isdigit()


def declaration(policy: Policy, instance: Edge) -> list[Edge]:
    """The instances declared by the declaration of ``instance`` (same family and source span),
    in edge order."""
    return [e for e in policy.edges if e.family == instance.family and e.span == instance.span]


def written(e: Edge) -> str | None:
    """How the declaration of ``e`` names it: ``free[b]`` for an instance of ``edge free[b]``,
    the name of a plain edge; ``None`` when one of its declaration's indices is neither a plain
    variable nor an integer literal."""
    if not e.indices:
        return None if e.name != e.family else e.name
    return f"{e.family}[{', '.join(e.indices)}]" if all(e.indices) else None


@dataclass(frozen=True)
class FamilyAfter(Edit):
    """``add `after P` to `E[i]```, written on a family declaration: every instance of the
    declaration of instance ``edge`` runs after the instances that the reference ``pred`` (the
    family ``pred_family`` with ``pred_index``: each item a variable of the declaration, ``VAR +
    N``, ``VAR - N``, a number, or ``*`` for every instance; empty for a plain edge) names at
    that instance. ``origin`` is the instance ordering it generalises (``after origin`` on
    ``edge``), which the graph focus draws. Does not apply when some instance would wait on an
    instance that does not exist or on itself, or when every instance already has the
    ordering."""

    edge: str
    pattern: str
    pred_family: str
    pred_index: tuple[str, ...]
    origin: str

    def pred(self) -> str:
        """The predecessor as written (``pull[b]``, ``save1[*]``, ``abort``)."""
        return f"{self.pred_family}[{', '.join(self.pred_index)}]" if self.pred_index else self.pred_family

    def text(self) -> str:
        return f"add `after {self.pred()}` to `{self.pattern}`"

    def instance(self) -> After:
        """The instance ordering this edit generalises."""
        return After(self.edge, (self.origin,))

    def _preds(self, policy: Policy, e: Edge) -> tuple[str, ...] | None:
        """The instances ``pred`` names at instance ``e``, or ``None`` when one does not exist."""
        if not self.pred_index:
            return (self.pred_family,) if policy.has("edge", self.pred_family) else None
        if self.pred_index == ("*",) * len(self.pred_index):
            out = tuple(x.name for x in policy.edges if x.family == self.pred_family and x.name != x.family)
            return out or None
        mine = instance_index(e.name)
        if mine is None:
            return None
        env = dict(zip(e.indices, mine[1]))
        values = []
        for item in self.pred_index:
            m = _ITEM.match(item)
            if _number(item):
                values.append(int(item))
            elif m is not None and m.group(1) in env:
                d = int(m.group(3) or 0)
                values.append(env[m.group(1)] + (d if m.group(2) == "+" else -d))
            else:
                return None
        name = self.pred_family + "".join(f"[{v}]" for v in values)
        return (name,) if policy.has("edge", name) else None

    def apply(self, policy: Policy) -> Policy | None:
        e = edge_of(policy, self.edge)
        if e is None or written(e) != self.pattern:
            return None
        edges = list(policy.edges)
        changed = False
        for inst in declaration(policy, e):
            preds = self._preds(policy, inst)
            if preds is None or inst.name in preds:
                return None
            add = tuple(p for p in preds if p not in inst.after)
            if add:
                edges[inst.eid] = replace(inst, after=inst.after + add)
                changed = True
        return rebuilt(policy, edges=tuple(edges)) if changed else None


def family_forms(policy: Policy, ed: After) -> list[FamilyAfter]:
    """The ways to write ``ed`` on the declaration of its edge, most specific first. With
    predecessors that are every instance of one family of one index (``save1[0], save1[1]``),
    that family's ``P[*]``; else, on an instance of a family declaration and with one
    predecessor, the predecessor generalised index by index (``generalise``, then again with
    ``positional``; those that relate every instance to its predecessors as the verified pair
    is related, ``_alike``, first), then, when it is an instance of a family of one index,
    ``P[*]``. Empty when ``ed`` cannot be written so, or is on
    a plain edge and names anything else than a whole family."""
    if not ed.preds or not policy.has("edge", ed.edge) or not all(policy.has("edge", p) for p in ed.preds):
        return []
    e = policy.edge(ed.edge)
    pattern = written(e)
    if pattern is None:
        return []
    fams = {policy.edge(p).family for p in ed.preds}
    if len(fams) == 1:
        fam = next(iter(fams))
        whole = [x.name for x in policy.edges if x.family == fam and x.name != fam]
        one = all(len((instance_index(n) or ("", ()))[1]) == 1 for n in whole)
        if len(whole) > 1 and one and sorted(whole) == sorted(ed.preds):
            return [FamilyAfter(e.name, pattern, fam, ("*",), ed.preds[0])]
    if len(ed.preds) != 1 or not e.indices:
        return []
    p = policy.edge(ed.preds[0])
    got = instance_index(p.name)
    if got is None:
        return []
    fam, fixed = got[0], fixed_positions(policy, p.family)
    out: list[FamilyAfter] = []
    for positional in (False, True):
        general = generalise(e.indices, e.name, p.name, fixed, positional)
        if general is not None:
            items = tuple(x.strip() for x in general[len(fam) + 1:-1].split(",")) if got[1] else ()
            form = FamilyAfter(e.name, pattern, fam, items, p.name)
            if form not in out:
                out.append(form)
    # a form that relates some instance to a predecessor the way the verified pair is not related
    # (the block it frees is not the one the instance allocates) comes after those that do not
    out.sort(key=lambda form: not _alike(policy, e, form))
    if out and len(got[1]) == 1:
        star = FamilyAfter(e.name, pattern, fam, ("*",), p.name)
        if star != out[0]:
            out.append(star)
    return out


def _alike(policy: Policy, e: Edge, form: FamilyAfter) -> bool:  # the form relates the same blocks
    """True when ``form`` names, at every instance of ``e``'s declaration, predecessors that share
    a region with it (``_shared``) exactly when the pair it generalises (``e`` after
    ``form.origin``) does: ``after free[q - 2, l]`` on the allocation ``take[q, l]`` of the block
    that ``free[q - 2, l]`` frees, not ``free[l, l]``, which frees another block and only verified
    because requests run one after the other."""
    want = _shared(policy, e, policy.edge(form.origin))
    for inst in declaration(policy, e):
        preds = form._preds(policy, inst)
        if preds is None or any(_shared(policy, inst, policy.edge(x)) != want for x in preds):
            return False
    return True


def _shared(policy: Policy, a: Edge, b: Edge) -> bool:
    """True when edges ``a`` and ``b`` name a common region in an ``alloc``, release, handoff or
    lease, or when the extents ``[lo, hi)`` of their footprints (and of the regions they name)
    meet in one space. Extents, not bytes: a strided footprint counts the gaps between its
    elements, so interleaved views of one block relate (what a hint's form is ranked by, never a
    verdict)."""
    def named(e: Edge) -> set[str]:
        return {x.region for x in (*e.allocs, *e.releases, *e.handoffs, *e.leases)}

    if named(a) & named(b):
        return True
    fa = [f for f in (a.src, a.dst) if f is not None] + [policy.region(r).whole() for r in named(a)]
    fb = [f for f in (b.src, b.dst) if f is not None] + [policy.region(r).whole() for r in named(b)]
    return any(x.space == y.space and x.lo < y.hi and y.lo < x.hi for x in fa for y in fb)
