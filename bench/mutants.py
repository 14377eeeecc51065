"""Mutation score of the checker: semantic mutations of proved policies, each checked again.

Takes every proved corpus policy (``corpus/<family>/ok/*.fx``) and a few reduced real policies
that ``fxverify gen prefill`` writes into a temporary folder from the real inputs of
``corpus/inputs/``, applies semantic mutation operators to each (drop an `after`, drop a flush,
shift or widen a footprint, move a region between alias sets, change an owner, remove a handoff or
a lease, move a release earlier, change a reduce to a move or to a non-commutative operator,
weaken a map class, change a final owner, shrink a destination, remove a checksum, change a hook's
device, ...), checks each mutant in-process with ``fxverify.pipeline.check`` and classifies it:

- ``invalid``: the mutant no longer loads (an input diagnostic, exit 2);
- ``killed``: refuted; ``unknown`` (FX-SMT-001) and ``internal`` (FX-INT-001, a counterexample
  that did not replay, or a crash) also count as killed, since the checker did not say proved,
  but they are counted and listed apart: unknown is never a pass, and an internal error is a bug;
- ``survived``: still proved, and not reviewed yet;
- ``equivalent``: still proved, and ``bench/mutants-equivalent.toml`` records it (with its
  description) as a correct policy, with the reviewed reason: every property of
  ``specs/obligations.md`` still holds, so a sound and complete checker proves it too;
- ``weakness``: still proved, and the same file records it as a reviewed checker weakness: the
  mutant breaks a property (or the intent of one) and the checker misses it. It counts as a
  survivor in the score, and stays listed until the checker is fixed.

Mutations are edits of the source text at the spans of the syntax tree, so every mutant is a
readable ``.fx`` file and its diff shows what changed. Ids are ``<file>:<operator>:<n>``: ``n``
counts the operator's mutants of that file in source order. Prints one row per operator and the
score ``killed / (generated - invalid - equivalent)``, then every survivor (with ``--diff`` its
diff, and for small policies what the simulator's brute force finds in it). Not a timed test.

Run from the repository root:

    python bench/mutants.py                        # every mutant
    python bench/mutants.py --sample 60 --seed 1   # a deterministic subset
    python bench/mutants.py --only corpus/maps --operator weaken-map-class --diff
    python bench/mutants.py --json                 # the table, the score and every mutant as JSON
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import random
import re
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fxverify import ast
from fxverify.diagnostics import codes
from fxverify.pipeline import check
from fxverify.result import Verdict
from fxverify.source import Span
from fxverify.syntax.parse import parse
from fxverify.syntax.to_ast import to_ast
from fxverify.vocab import AC_OPS

EQUIVALENTS = ROOT / "bench" / "mutants-equivalent.toml"
IN = "corpus/inputs"
CXL = [f"{IN}/cxl/cxl_test-list-BEMPu.json", f"{IN}/cxl/cxl_test-list-BDMu-root-mem3.json"]

#: Reduced real policies: label -> (model config, topology or None, generator options). Few layers
#: and tokens, so each check takes well under a second, but every feature of the generator:
#: KV blocks and their layer views, spills to CXL (fp8 + crc32c), lz4 checkpoints into pmem,
#: posted RDMA sends to a decode node with per-layer flushes, per-device, causal and linearizable
#: maps, and for DeepSeek-V3 MLA and an MoE layer (experts streamed from host memory).
REDUCED: dict[str, tuple[str, str | None, dict]] = {
    "gen/llama-3.1-8b-l3.fx": (f"{IN}/models/meta-llama--Meta-Llama-3.1-8B.json", None,
                               {"tokens": 32, "layers": 3, "spill": "0.5", "ckpt_every": 2, "disaggregate": True}),
    "gen/deepseek-v3-l4.fx": (f"{IN}/models/deepseek-ai--DeepSeek-V3.json", None,
                              {"tokens": 32, "layers": 4, "spill": "0.5", "ckpt_every": 2, "disaggregate": True}),
}

#: Merge operators that do not commute (``vocab.OPERATORS``): what a commutative reduce becomes.
NON_COMMUTATIVE = ("sub", "last")

#: ``weaken-map-class``: each class and the weaker classes it becomes (BRIEF section 1: a
#: linearizable read sees every finished write, a causal one only writes that happen-before it, an
#: eventual one no write at all; a per-device map loses its slots when it becomes one replicated
#: map). ``local`` moves to another device.
WEAKER = {"linearizable": ("causal", "eventual"), "causal": ("eventual",), "per_device": ("eventual",)}


# ---- mutants -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """Replace the characters ``[start, end)`` of a policy's text with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``id`` (``<file>:<operator>:<n>``), the ``file`` label it mutates, its
    ``operator``, a one-line ``description`` and the mutated ``text``; ``original`` is the
    unmutated text (for the diff)."""

    id: str
    file: str
    operator: str
    description: str
    text: str
    original: str = field(repr=False, compare=False)

    def diff(self) -> str:
        """The unified diff of the original and the mutant (3 lines of context)."""
        return "".join(difflib.unified_diff(self.original.splitlines(True), self.text.splitlines(True),
                                            f"a/{self.file}", f"b/{self.file}"))


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with every edit applied. Raises ``ValueError`` when two edits overlap."""
    out, last = [], len(text)
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if e.end > last:
            raise ValueError(f"overlapping edits at {e.start}")
        out.append(text[e.end:last])
        out.append(e.text)
        last = e.start
    out.append(text[:last])
    return "".join(reversed(out))


# ---- the policy under mutation -----------------------------------------------------------------


@dataclass(frozen=True)
class EdgeSite:
    """An edge declaration with the index variables of the loops around it."""

    decl: ast.EdgeDecl
    loop_vars: frozenset[str]


def nodes(node: object) -> Iterator[object]:
    """Every syntax node under ``node`` (itself included), depth first, in field order."""
    if isinstance(node, tuple):
        for x in node:
            yield from nodes(x)
    elif dataclasses.is_dataclass(node) and not isinstance(node, Span):
        yield node
        for f in dataclasses.fields(node):
            yield from nodes(getattr(node, f.name))


def var_names(node: object) -> set[str]:
    """The names of the ``Var`` nodes under ``node`` (index variables, or device names in map
    values)."""
    return {n.name for n in nodes(node) if isinstance(n, ast.Var)}


class Source:
    """One policy under mutation: its ``label``, ``text`` and syntax tree, with indexes of its
    declarations. Raises ``ValueError`` when the text does not parse (every input is a proved
    policy, so that is a bug of the bench's inputs)."""

    def __init__(self, label: str, text: str) -> None:
        self.label, self.text = label, text
        tree, diags = parse(text, label)
        if tree is None:
            raise ValueError(f"{label} does not parse: {diags[0].message}")
        self.module, _ = to_ast(tree, label, text)
        items = self.module.items
        self.devices = [d for f in items if isinstance(f, ast.FabricDecl) for d in f.items
                        if isinstance(d, ast.DeviceDecl)]
        self.links = [d for f in items if isinstance(f, ast.FabricDecl) for d in f.items if isinstance(d, ast.LinkDecl)]
        self.regions = {r.name.name: r for r in items if isinstance(r, ast.RegionDecl)}
        self.alias_sets = [a for a in items if isinstance(a, ast.AliasSetDecl)]
        self.maps = [m for m in items if isinstance(m, ast.MapDecl)]
        self.edges: list[EdgeSite] = []
        self.finals: list[ast.FinalOwnerStmt] = []
        for flow in (f for f in items if isinstance(f, ast.FlowDecl)):
            self._walk(flow.body, frozenset())
        live = _instantiated(label, text)
        # INVARIANT: only declarations with an instance are mutated; a declaration in a branch
        # no index reaches (`if l >= 5` in a reduced policy) is dead code, and so is its mutant
        self.edges = [s for s in self.edges if any(s.decl.span.start <= p < s.decl.span.end for p in live)]
        self.by_name: dict[str, EdgeSite] = {}
        for site in self.edges:
            self.by_name.setdefault(site.decl.name.name, site)

    def _walk(self, body: tuple[ast.Stmt, ...], loop_vars: frozenset[str]) -> None:
        for st in body:
            if isinstance(st, ast.EdgeDecl):
                self.edges.append(EdgeSite(st, loop_vars))
            elif isinstance(st, ast.ForStmt):
                self._walk(st.body, loop_vars | {st.var.name})
            elif isinstance(st, ast.IfStmt):
                self._walk(st.then, loop_vars)
                self._walk(st.orelse, loop_vars)
            elif isinstance(st, ast.FinalOwnerStmt):
                self.finals.append(st)

    def of(self, node: object) -> str:
        """The source text of a node."""
        span = node.span  # type: ignore[attr-defined]
        return self.text[span.start:span.end]

    def edge_label(self, decl: ast.EdgeDecl) -> str:
        """The edge's name as declared, with its indices: ``attn``, ``wq[l, 0]``."""
        colon = self.text.rfind(":", decl.name.span.start, decl.action.span.start)
        return self.text[decl.name.span.start:colon].strip()

    def active_devices(self) -> list[str]:
        """Devices that take part in the movement (drive an edge, own a region, give, receive or
        lease one, or end as a final owner), in declaration order: the alternatives an owner or a
        driver can be changed to. A device the policy never uses would only be a cheap kill."""
        used = {s.decl.device.name for s in self.edges} | {r.owner.name for r in self.regions.values()}
        used |= {f.device.name for f in self.finals}
        for n in nodes(tuple(s.decl for s in self.edges)):
            if isinstance(n, ast.HandoffClause):
                used |= {n.src.name, n.dst.name}
            elif isinstance(n, (ast.LeaseClause, ast.RevokeClause)):
                used.add(n.device.name)
        return [d.name.name for d in self.devices if d.name.name in used]

    def clauses(self, kind: type) -> Iterator[tuple[EdgeSite, object]]:
        """Every clause of type ``kind``, with its edge, in source order."""
        for site in self.edges:
            for c in site.decl.clauses:
                if isinstance(c, kind):
                    yield site, c

    def remove(self, node: object) -> Edit:
        """Remove a clause or a declaration and the blank before it. Removing the
        newline before a clause keeps a comment that ends the line before it intact."""
        span = node.span  # type: ignore[attr-defined]
        start = span.start
        while start > 0 and self.text[start - 1] in " \t\r\n":
            start -= 1
        return Edit(start, span.end, "")

    def remove_item(self, items: tuple, i: int, sep: str = ",") -> Edit:
        """Remove item ``i`` of a separated list (``after a, b``; ``[kv, pool]``; a chain of
        transform steps joined by ``|>``) with its separator."""
        if i > 0:
            return Edit(items[i - 1].span.end, items[i].span.end, "")
        return Edit(items[0].span.start, items[1].span.start, "")


def _instantiated(label: str, text: str) -> list[int]:
    """Where the edge instances of the policy ``text`` start (offsets of their spans). Raises
    ``ValueError`` when it does not load."""
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    with tempfile.TemporaryDirectory(prefix="fx-mutants-src-") as d:
        path = Path(d) / Path(label).name
        path.write_text(text)
        policy, diags = load_policy(str(path), SourceMap())
    if policy is None:
        raise ValueError(f"{label} does not load: {diags[0].message if diags else '?'}")
    return sorted({e.span.start for e in policy.edges})


def footprints(site: EdgeSite) -> list[tuple[str, ast.Ref]]:
    """The footprint references of an edge's action, as ``(role, ref)``: ``src`` and ``dst``."""
    a = site.decl.action
    out = []
    if isinstance(a, (ast.ReadAction, ast.MoveAction, ast.ReduceAction)):
        out.append(("src", a.src))
    if isinstance(a, (ast.WriteAction, ast.MoveAction, ast.ReduceAction)):
        out.append(("dst", a.dst))
    return out


def paren(text: str) -> str:
    """``text`` as an operand: parenthesised unless it is one literal or name."""
    t = text.strip()
    return t if re.fullmatch(r"[A-Za-z0-9_]+|[0-9][0-9A-Fa-fx_]*\s*[A-Za-z]+", t) else f"({t})"


def is_zero(text: str) -> bool:
    """True when an offset is written as zero (``0``, ``0x0``, ``0x0_0000``)."""
    return re.fullmatch(r"0(x[0_]+)?", text.strip()) is not None


@dataclass(frozen=True)
class Slice:
    """A footprint reference read as a slice: the ``ref``, its slice group (``None`` for a whole
    region or family instance), and the texts of its offset, length, elem, stride and count."""

    ref: ast.Ref
    group: ast.Group | None
    items: dict[str, ast.IndexItem | ast.LenItem | ast.KeyItem]


def as_slice(ref: ast.Ref) -> Slice:
    """Read ``ref`` as a slice (see ``Slice``)."""
    group = ref.groups[-1] if ref.groups and ref.groups[-1].is_slice else None
    items: dict = {}
    if group is not None:
        for it in group.items:
            if isinstance(it, ast.IndexItem):
                items["off"] = it
            elif isinstance(it, ast.LenItem):
                items["len"] = it
            elif isinstance(it, ast.KeyItem):
                items[it.key] = it
    return Slice(ref, group, items)


def region_size(src: Source, ref: ast.Ref) -> str | None:
    """The size expression of the region ``ref`` names, when it uses no family parameter (so it
    can be copied into a slice), else ``None``."""
    r = src.regions.get(ref.name.name)
    if r is None or var_names(r.size):
        return None
    return src.of(r.size)


def whole_slice(src: Source, ref: ast.Ref, off: str, length: str) -> Edit:
    """Turn a whole-region reference into the slice ``[off, +length]`` of it."""
    return Edit(ref.span.end, ref.span.end, f"[{off}, +{length}]")


# ---- operators ---------------------------------------------------------------------------------

#: An operator yields ``(description, edits)`` pairs for one policy, in source order.
Operator = Callable[[Source], Iterator[tuple[str, list[Edit]]]]
OPERATORS: dict[str, Operator] = {}


def operator(name: str) -> Callable[[Operator], Operator]:
    """Register an operator under ``name`` (the order of registration is the order of the table)."""
    def deco(fn: Operator) -> Operator:
        OPERATORS[name] = fn
        return fn
    return deco


@operator("drop-after")
def drop_after(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Drop one predecessor from an `after` clause (the whole clause when it names one)."""
    for site, c in src.clauses(ast.AfterClause):
        for i, ref in enumerate(c.refs):
            edit = src.remove(c) if len(c.refs) == 1 else src.remove_item(c.refs, i)
            yield f"drop `{src.of(ref)}` from the `after` of `{src.edge_label(site.decl)}`", [edit]


@operator("drop-stream")
def drop_stream(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Take an edge off its serial stream (stream order is the other source of happens-before).
    A stream that holds one edge instance orders nothing, so leaving it is no mutation: only
    streams of a device declared on several edges, or on an edge family, are mutated."""
    queues: dict[tuple[str, str], int] = {}
    for site, c in src.clauses(ast.StreamClause):
        key = (site.decl.device.name, c.name.name)
        queues[key] = queues.get(key, 0) + (2 if site.loop_vars else 1)
    for site, c in src.clauses(ast.StreamClause):
        if queues[(site.decl.device.name, c.name.name)] > 1:
            yield f"take `{src.edge_label(site.decl)}` off stream `{c.name.name}`", [src.remove(c)]


def link_names(src: Source) -> list[str]:
    """How each link can be named in a flush: its name, else ``A -- B``."""
    return [ln.name.name if ln.name else f"{ln.a.name} -- {ln.b.name}" for ln in src.links]


def same_link(src: Source, ref: ast.LinkRef, name: str) -> bool:
    """True when the link reference ``ref`` names the link called ``name`` (either direction)."""
    if ref.second is None:
        return ref.first.name == name or any(
            ln.name and ln.name.name == ref.first.name and f"{ln.a.name} -- {ln.b.name}" == name for ln in src.links)
    ends = {ref.first.name, ref.second.name}
    for ln in src.links:
        if {ln.a.name, ln.b.name} == ends and name in (f"{ln.a.name} -- {ln.b.name}", ln.name.name if ln.name else ""):
            return True
    return False


@operator("drop-flush")
def drop_flush(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Drop a `flush` clause; for a `flush` edge, flush another link instead, or (when it does
    nothing but flush) remove the edge and let its successors wait for its predecessors."""
    for site, c in src.clauses(ast.FlushClause):
        yield f"drop `{src.of(c)}` from `{src.edge_label(site.decl)}`", [src.remove(c)]
    for site in src.edges:
        a = site.decl.action
        if not isinstance(a, ast.FlushAction):
            continue
        label = src.edge_label(site.decl)
        for name in link_names(src):
            if not same_link(src, a.link, name):
                yield f"`{label}` flushes `{name}` instead of `{src.of(a.link)}`", [Edit(a.link.span.start, a.link.span.end, name)]
        if any(not isinstance(c, (ast.AfterClause, ast.StreamClause)) for c in site.decl.clauses):
            continue
        preds = [src.of(r) for c in site.decl.clauses if isinstance(c, ast.AfterClause) for r in c.refs]
        edits = [src.remove(site.decl)]
        ok = True
        for other, c in src.clauses(ast.AfterClause):
            for i, ref in enumerate(c.refs):
                if ref.name.name != site.decl.name.name:
                    continue
                # INVARIANT: the bypass copies predecessor references verbatim, so it is faithful
                # only where the reference names the same instance with the same variables
                if src.of(ref) != label or not var_names(site.decl.clauses) <= other.loop_vars:
                    ok = False
                if preds:
                    edits.append(Edit(ref.span.start, ref.span.end, ", ".join(preds)))
                else:
                    edits.append(src.remove(c) if len(c.refs) == 1 else src.remove_item(c.refs, i))
        if ok:
            yield f"remove the flush edge `{label}`; its successors wait for its predecessors instead", edits


@operator("shift-footprint")
def shift_footprint(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Shift a footprint: by its length (half and whole, forward and, when it does not start at
    0, back); a strided footprint by one element; a whole region by half its size."""
    for s, what in access_slices(src):
        if s.group is None:
            size = region_size(src, s.ref)
            if size is not None:
                yield f"shift {what} by half its size", [whole_slice(src, s.ref, f"{paren(size)} / 2", size)]
            continue
        off = s.items.get("off")
        if off is None:
            continue
        o = src.of(off.expr)
        if "len" in s.items:
            n = src.of(s.items["len"].expr)
            steps = [(f"{paren(n)} / 2", "+"), (n, "+")] + ([(n, "-")] if not is_zero(o) else [])
        elif "elem" in s.items:
            steps = [(src.of(s.items["elem"].expr), "+")]
        else:
            continue
        for by, sign in steps:
            new = f"{paren(o)} {sign} {paren(by)}" if not is_zero(o) or sign == "-" else by
            yield f"shift {what} by {sign}{by}", [Edit(off.expr.span.start, off.expr.span.end, new)]


def access_slices(src: Source) -> Iterator[tuple[Slice, str]]:
    """Every footprint of every edge's action read as a slice, with how to name it in a
    description (``the src `kv[0, +4 KiB]` of `attn```)."""
    for site in src.edges:
        for role, ref in footprints(site):
            yield as_slice(ref), f"the {role} `{src.of(ref)}` of `{src.edge_label(site.decl)}`"


@operator("widen-footprint")
def widen_footprint(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Widen a footprint: double a slice's length, a strided footprint's element, add one element
    to its count; a whole region reads or writes one byte past its end."""
    for s, what in access_slices(src):
        if s.group is None:
            size = region_size(src, s.ref)
            if size is not None:
                yield f"widen {what} by one byte past its end", [whole_slice(src, s.ref, "0", f"{paren(size)} + 1")]
            continue
        for key, how in (("len", "* 2"), ("elem", "* 2"), ("count", "+ 1")):
            it = s.items.get(key)
            if it is not None:
                t = src.of(it.expr)
                yield f"widen {what}: {key} {t} -> {paren(t)} {how}", [Edit(it.expr.span.start, it.expr.span.end,
                                                                        f"{paren(t)} {how}")]


@operator("move-alias")
def move_alias(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Move a region between alias sets: from its set to another one, or out of its set (a
    region in no alias set aliases nothing); drop or change an edge's `alias` clause.

    A region in no alias set is not put into one: in a proved policy it overlaps no other region
    (FX-ALIAS-001 at region level treats it as its own set), so joining a set changes nothing."""
    for a in src.alias_sets:
        for i, m in enumerate(a.members):
            out = src.remove_item(a.members, i) if len(a.members) > 1 else None
            if out is not None:
                yield f"take `{src.of(m)}` out of alias set `{a.name.name}`", [out]
            for b in src.alias_sets:
                if b is a:
                    continue
                into = Edit(b.members[-1].span.end, b.members[-1].span.end, f", {src.of(m)}")
                if out is None:
                    desc = f"move `{src.of(m)}` from alias set `{a.name.name}` into `{b.name.name}` (removing the emptied set)"
                    yield desc, [src.remove(a), into]
                else:
                    yield f"move `{src.of(m)}` from alias set `{a.name.name}` into `{b.name.name}`", [out, into]
    for site, c in src.clauses(ast.AliasClause):
        label = src.edge_label(site.decl)
        yield f"drop `alias {c.name.name}` from `{label}`", [src.remove(c)]
        for b in src.alias_sets:
            if b.name.name != c.name.name:
                yield f"`{label}` claims alias set `{b.name.name}` instead of `{c.name.name}`", [
                    Edit(c.name.span.start, c.name.span.end, b.name.name)]


def retarget(src: Source, device: ast.Ident, describe: Callable[[str], str]) -> Iterator[tuple[str, list[Edit]]]:
    """Name each other active device where ``device`` stands, described by ``describe(new)``."""
    for d in src.active_devices():
        if d != device.name:
            yield describe(d), [Edit(device.span.start, device.span.end, d)]


@operator("change-owner")
def change_owner(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Change a region's initial owner, or the device a handoff says it gives the region from."""
    for r in src.regions.values():
        yield from retarget(src, r.owner, lambda d, r=r: f"region `{r.name.name}` is first owned by `{d}` instead of "
                                                         f"`{r.owner.name}`")
    for site, c in src.clauses(ast.HandoffClause):
        for d in src.active_devices():
            if d not in (c.src.name, c.dst.name):
                yield f"`{src.edge_label(site.decl)}` hands `{src.of(c.ref)}` off from `{d}` instead of `{c.src.name}`", [
                    Edit(c.src.span.start, c.src.span.end, d)]


@operator("drop-handoff")
def drop_handoff(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Remove a handoff."""
    for site, c in src.clauses(ast.HandoffClause):
        yield f"drop `{src.of(c)}` from `{src.edge_label(site.decl)}`", [src.remove(c)]


@operator("drop-lease")
def drop_lease(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Remove a lease."""
    for site, c in src.clauses(ast.LeaseClause):
        yield f"drop `{src.of(c)}` from `{src.edge_label(site.decl)}`", [src.remove(c)]


def predecessors(src: Source, site: EdgeSite) -> Iterator[tuple[ast.AfterClause, int, EdgeSite]]:
    """The edges an edge names in its `after` clauses: ``(clause, position, predecessor)``."""
    for c in site.decl.clauses:
        if isinstance(c, ast.AfterClause):
            for i, ref in enumerate(c.refs):
                pred = src.by_name.get(ref.name.name)
                if pred is not None:
                    yield c, i, pred


def to_predecessors(src: Source, site: EdgeSite, kind: type) -> Iterator[tuple[str, list[Edit]]]:
    """Move each clause of type ``kind`` of an edge onto each predecessor of the edge (whose loop
    variables bind the clause's)."""
    label = src.edge_label(site.decl)
    for c in site.decl.clauses:
        if not isinstance(c, kind):
            continue
        for _, _, pred in predecessors(src, site):
            if var_names(c) <= pred.loop_vars:
                end = pred.decl.span.end
                yield f"move `{src.of(c)}` from `{label}` to its predecessor `{src.edge_label(pred.decl)}`", [
                    src.remove(c), Edit(end, end, f" {src.of(c)}")]


@operator("revoke-earlier")
def revoke_earlier(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Move a revoke earlier: a `revoke` clause onto a predecessor of its edge, where it may end a
    lease before the lessee's last read. (Dropping a revoke is no operator: a revoke only takes a
    permission away, so a proved policy stays proved without it.)"""
    for site in src.edges:
        yield from to_predecessors(src, site, ast.RevokeClause)


@operator("release-earlier")
def release_earlier(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Move a release earlier: a `release` clause onto a predecessor of its edge; a `release` edge
    to start with a predecessor (waiting for that predecessor's own predecessors instead)."""
    for site in src.edges:
        label = src.edge_label(site.decl)
        yield from to_predecessors(src, site, ast.ReleaseClause)
        if not isinstance(site.decl.action, ast.ReleaseAction):
            continue
        for c, i, pred in predecessors(src, site):
            grand = [r for pc in pred.decl.clauses if isinstance(pc, ast.AfterClause) for r in pc.refs]
            if not var_names(tuple(grand)) <= site.loop_vars:
                continue
            ref = c.refs[i]
            if grand:
                edit = Edit(ref.span.start, ref.span.end, ", ".join(src.of(r) for r in grand))
            else:
                edit = src.remove(c) if len(c.refs) == 1 else src.remove_item(c.refs, i)
            yield f"`{label}` starts alongside `{src.of(ref)}` instead of after it", [edit]


def reduce_steps(src: Source) -> Iterator[tuple[EdgeSite, ast.TransformClause, int, ast.XfStep]]:
    """Every `reduce(OP)` step of a transform chain."""
    for site, c in src.clauses(ast.TransformClause):
        for i, step in enumerate(c.steps):
            if step.kind.name == "reduce":
                yield site, c, i, step


@operator("reduce-to-move")
def reduce_to_move(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Change a reduce into a move (an accumulation becomes an overwrite)."""
    for site in src.edges:
        a = site.decl.action
        if isinstance(a, ast.ReduceAction):
            yield f"`{src.edge_label(site.decl)}` moves instead of `reduce({a.op.name})`", [
                Edit(a.span.start, a.span.end, f"move {src.of(a.src)} -> {src.of(a.dst)}")]
    for site, _, _, step in reduce_steps(src):
        yield f"the `{src.of(step)}` step of `{src.edge_label(site.decl)}` becomes `move`", [
            Edit(step.span.start, step.span.end, "move")]


@operator("reduce-non-commutative")
def reduce_non_commutative(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Change a commutative reduce operator (of a `reduce` edge, a `reduce` step or a map's
    `merge`) into a non-commutative one."""
    def swaps(op: ast.Ident) -> Iterator[tuple[str, Edit]]:
        if op.name in AC_OPS:
            for new in NON_COMMUTATIVE:
                yield new, Edit(op.span.start, op.span.end, new)
    for site in src.edges:
        a = site.decl.action
        if isinstance(a, ast.ReduceAction):
            for new, e in swaps(a.op):
                yield f"`{src.edge_label(site.decl)}` reduces with `{new}` instead of `{a.op.name}`", [e]
    for site, _, _, step in reduce_steps(src):
        for arg in step.args:
            if isinstance(arg, ast.ValueArg) and isinstance(arg.value, ast.Var):
                for new, e in swaps(ast.Ident(arg.value.name, arg.value.span)):
                    yield f"the `{src.of(step)}` step of `{src.edge_label(site.decl)}` reduces with `{new}`", [e]
    for m in src.maps:
        if m.merge is not None:
            for new, e in swaps(m.merge):
                yield f"map `{m.name.name}` merges with `{new}` instead of `{m.merge.name}`", [e]


@operator("weaken-map-class")
def weaken_map_class(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Weaken a map's consistency class (``WEAKER``), or move a `local` map to another device."""
    for m in src.maps:
        # the class with its `(DEV)`, up to and with the `)`
        cls_end = src.text.index(")", m.cls_arg.span.end) + 1 if m.cls_arg is not None else m.cls.span.end
        for new in WEAKER.get(m.cls.name, ()):
            merge = "" if m.merge is not None else " merge max"
            yield f"map `{m.name.name}` is `{new}` instead of `{m.cls.name}`", [Edit(m.cls.span.start, cls_end,
                                                                                    new + merge)]
        if m.cls.name == "local" and m.cls_arg is not None:
            yield from retarget(src, m.cls_arg, lambda d, m=m: f"map `{m.name.name}` is `local({d})` instead of "
                                                                f"`local({m.cls_arg.name})`")


@operator("change-final-owner")
def change_final_owner(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Declare another final owner."""
    for f in src.finals:
        yield from retarget(src, f.device, lambda d, f=f: f"`final owner {src.of(f.ref)}` is `{d}` instead of "
                                                          f"`{f.device.name}`")


@operator("shrink-destination")
def shrink_destination(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Shrink the destination of a move or reduce (which has a source to fit): by one byte and to
    half (a slice's length, a strided footprint's count, a whole region's size)."""
    for site in src.edges:
        a = site.decl.action
        if not isinstance(a, (ast.MoveAction, ast.ReduceAction)):
            continue
        s, label = as_slice(a.dst), src.edge_label(site.decl)
        what = f"the destination `{src.of(a.dst)}` of `{label}`"
        if s.group is None:
            size = region_size(src, a.dst)
            if size is not None:
                for how in ("- 1", "/ 2"):
                    yield f"shrink {what}: {size} -> {paren(size)} {how}", [whole_slice(src, a.dst, "0", f"{paren(size)} {how}")]
            continue
        key = "len" if "len" in s.items else "count" if "count" in s.items else None
        if key is None:
            continue
        it = s.items[key]
        t = src.of(it.expr)
        for how in (("- 1", "/ 2") if key == "len" else ("- 1",)):
            if t.strip() == "1" and key == "count":
                continue
            yield f"shrink {what}: {key} {t} -> {paren(t)} {how}", [Edit(it.expr.span.start, it.expr.span.end,
                                                                     f"{paren(t)} {how}")]


@operator("drop-checksum")
def drop_checksum(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Remove a checksum step (the whole `transform` clause when it is the only step)."""
    for site, c in src.clauses(ast.TransformClause):
        for i, step in enumerate(c.steps):
            if step.kind.name == "checksum":
                edit = src.remove(c) if len(c.steps) == 1 else src.remove_item(c.steps, i)
                yield f"drop `{src.of(step)}` from the transform of `{src.edge_label(site.decl)}`", [edit]


@operator("change-hook-device")
def change_hook_device(src: Source) -> Iterator[tuple[str, list[Edit]]]:
    """Drive an edge from the same hook of another device: every other active device that
    declares the hook, else the first other active device (an undeclared hook)."""
    devices = src.active_devices()
    hooks = {d.name.name: {h.name for h in d.hooks} for d in src.devices}
    for site in src.edges:
        dev = site.decl.device
        others = [d for d in devices if d != dev.name]
        alike = [d for d in others if site.decl.hook.name in hooks[d]]
        for d in alike or others[:1]:
            if d != dev.name:
                yield f"`{src.edge_label(site.decl)}` runs on `{d}.{site.decl.hook.name}` instead of `{dev.name}`", [
                    Edit(dev.span.start, dev.span.end, d)]


def mutants_of(src: Source, operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mutant of ``src`` by the given operators (all when ``None``), in operator and then
    source order. A mutant whose text equals the original or an earlier mutant's is skipped (its
    number is not reused, so the ids of the others stay stable)."""
    out: list[Mutant] = []
    seen = {src.text}
    for name in operators or OPERATORS:
        for n, (desc, edits) in enumerate(OPERATORS[name](src)):
            text = apply_edits(src.text, edits)
            if text in seen:
                continue
            seen.add(text)
            out.append(Mutant(f"{src.label}:{name}:{n}", src.label, name, desc, text, src.text))
    return out


# ---- the policies ------------------------------------------------------------------------------


def corpus_sources() -> list[Source]:
    """Every proved corpus policy, labelled by its repository-relative path."""
    return [Source(p.relative_to(ROOT).as_posix(), p.read_text())
            for p in sorted((ROOT / "corpus").glob("*/ok/*.fx"))]


def reduced_sources() -> list[Source]:
    """The reduced real policies of ``REDUCED``, generated in memory from ``corpus/inputs/``.
    Raises ``RuntimeError`` when one cannot be generated."""
    from fxverify.gen.cxl_list import load_cxl
    from fxverify.gen.hf_config import load_model
    from fxverify.gen.nccl_topo import load_topology
    from fxverify.gen.prefill import PrefillOptions, generate_prefill
    from fxverify.source import SourceMap

    out = []
    for label, (model, topo, opts) in REDUCED.items():
        m, d1 = load_model(str(ROOT / model), SourceMap())
        t = load_topology(str(ROOT / topo), SourceMap())[0] if topo else None
        c, _ = load_cxl([str(ROOT / p) for p in CXL], SourceMap())
        name = Path(label).stem
        gen, diags = generate_prefill(m, t, c, PrefillOptions(name=name, **opts)) if m is not None else (None, d1)
        if gen is None:
            raise RuntimeError(f"cannot generate {label}: {diags[0].message if diags else 'no model'}")
        out.append(Source(label, gen.text))
    return out


def all_mutants(real: bool = True, only: str = "", operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mutant of the corpus (and, with ``real``, of the reduced real policies) whose file
    label contains ``only``."""
    sources = corpus_sources() + (reduced_sources() if real else [])
    return [m for s in sources if only in s.label for m in mutants_of(s, operators)]


def sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    """A deterministic subset of ``n`` mutants (all when ``n`` is ``None`` or too large), in the
    original order."""
    if n is None or n >= len(mutants):
        return list(mutants)
    keep = set(random.Random(seed).sample(range(len(mutants)), n))
    return [m for i, m in enumerate(mutants) if i in keep]


# ---- checking ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reviewed:
    """A reviewed surviving mutant: its ``id``, the ``mutant`` description it had when reviewed
    (so a renumbering cannot silently point the entry at another mutant), its ``kind``
    (``equivalent`` or ``weakness``) and the ``reason``."""

    id: str
    mutant: str
    kind: str
    reason: str


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, Reviewed]:
    """The reviewed survivors by id: ``[[equivalent]]`` and ``[[weakness]]`` tables with ``id``,
    ``mutant`` and ``reason``. Raises ``ValueError`` for an entry without a reason or a
    description, or an id listed twice."""
    if not path.exists():
        return {}
    out: dict[str, Reviewed] = {}
    data = tomllib.loads(path.read_text())
    for kind in ("equivalent", "weakness"):
        for e in data.get(kind, []):
            if not str(e.get("reason", "")).strip() or not str(e.get("mutant", "")).strip():
                raise ValueError(f"{kind} {e.get('id')} needs a `mutant` description and a `reason`")
            if e["id"] in out:
                raise ValueError(f"{e['id']} is listed twice")
            out[e["id"]] = Reviewed(e["id"], e["mutant"], kind, e["reason"])
    return out


@dataclass
class Checked:
    """A mutant and how the checker answered: ``status`` is ``invalid``, ``killed``, ``unknown``,
    ``internal``, ``survived`` or ``equivalent``; ``codes`` the error codes it reported;
    ``seconds`` the check time."""

    mutant: Mutant
    status: str
    codes: list[str]
    seconds: float
    reason: str = ""


def check_mutant(m: Mutant, folder: Path) -> Checked:
    """Write ``m`` under ``folder`` (at its file label) and check it in-process."""
    path = folder / m.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(m.text)
    t0 = time.perf_counter()
    try:
        r = check(str(path))
    except Exception as exc:  # noqa: BLE001 - a crash of the checker is a finding, not a reason to stop the bench
        return Checked(m, "internal", ["FX-INT-001"], time.perf_counter() - t0, f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - t0
    found = sorted({str(d.code) for d in r.diagnostics if d.is_error})
    if r.internal_error:
        return Checked(m, "internal", found, seconds)
    if r.input_error:
        return Checked(m, "invalid", found, seconds)
    if r.verdict is Verdict.REFUTED:
        return Checked(m, "killed", found, seconds)
    if r.verdict is Verdict.UNKNOWN or any(str(d.code) == str(codes.SMT_001) for d in r.diagnostics):
        return Checked(m, "unknown", found, seconds)
    return Checked(m, "survived", found, seconds)


def run(mutants: list[Mutant], equivalents: dict[str, Reviewed]) -> list[Checked]:
    """Check every mutant; a survivor recorded in ``equivalents`` (same id and description)
    becomes ``equivalent`` or ``weakness``, as reviewed."""
    out = []
    with tempfile.TemporaryDirectory(prefix="fx-mutants-") as d:
        for m in mutants:
            c = check_mutant(m, Path(d))
            eq = equivalents.get(m.id)
            if c.status == "survived" and eq is not None and eq.mutant == m.description:
                c.status, c.reason = eq.kind, eq.reason
            out.append(c)
    return out


STATUSES = ("invalid", "killed", "unknown", "internal", "survived", "weakness", "equivalent")
#: Statuses that count as killed in the score (unknown and internal are listed apart as well).
KILLED = ("killed", "unknown", "internal")


def table(results: list[Checked]) -> dict[str, dict[str, int]]:
    """Per operator (and ``total``): ``generated`` and the count of each status."""
    rows: dict[str, dict[str, int]] = {}
    for c in results:
        for key in (c.mutant.operator, "total"):
            row = rows.setdefault(key, dict.fromkeys(("generated", *STATUSES), 0))
            row["generated"] += 1
            row[c.status] += 1
    ordered = {op: rows[op] for op in OPERATORS if op in rows}
    if "total" in rows:
        ordered["total"] = rows["total"]
    return ordered


def score(row: dict[str, int]) -> float | None:
    """``killed / (generated - invalid - equivalent)`` with unknown and internal counted as
    killed; ``None`` when nothing is left to score."""
    denom = row["generated"] - row["invalid"] - row["equivalent"]
    return sum(row[k] for k in KILLED) / denom if denom else None


def stale_equivalents(results: list[Checked], equivalents: dict[str, Reviewed]) -> list[str]:
    """Entries of the equivalents file that no longer hold, among the mutants checked: the mutant
    no longer exists, its description changed, or it does not survive any more."""
    by_id = {c.mutant.id: c for c in results}
    out = []
    for eq in equivalents.values():
        c = by_id.get(eq.id)
        if c is None:
            continue
        if c.mutant.description != eq.mutant:
            out.append(f"{eq.id}: now `{c.mutant.description}`, reviewed as `{eq.mutant}`")
        elif c.status != eq.kind:
            out.append(f"{eq.id}: {c.status} ({', '.join(c.codes)}), no longer survives")
    return out


def simulate(m: Mutant, max_edges: int = 8) -> str:
    """What the simulator's brute force finds in a (small) mutant: the violated codes, ``none``,
    or why it was not run."""
    from fxverify.replay.simulate import Simulator
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    with tempfile.TemporaryDirectory(prefix="fx-mutant-sim-") as d:
        path = Path(d) / Path(m.file).name
        path.write_text(m.text)
        policy, _ = load_policy(str(path), SourceMap())
    if policy is None:
        return "not loaded"
    if len(policy.edges) > max_edges:
        return f"not run ({len(policy.edges)} edges)"
    found = sorted({str(code) for code, _ in Simulator(policy).explore_violations()})
    return ", ".join(found) if found else "none"


def report(results: list[Checked], equivalents: dict[str, Reviewed], seconds: float, diff: bool) -> str:
    """The text report: the table, the score, survivors, unknown and internal mutants, stale
    equivalents."""
    rows = table(results)
    head = f"{'operator':<24}{'generated':>10}{'invalid':>8}{'killed':>8}{'unknown':>8}{'internal':>9}{'survived':>9}{'weak':>6}{'equiv':>7}{'score':>8}"
    lines = [head]
    for op, row in rows.items():
        sc = score(row)
        lines.append(f"{op:<24}{row['generated']:>10}{row['invalid']:>8}{row['killed']:>8}{row['unknown']:>8}"
                     f"{row['internal']:>9}{row['survived']:>9}{row['weakness']:>6}{row['equivalent']:>7}"
                     f"{'-' if sc is None else f'{sc:.1%}':>8}")
    total = rows.get("total")
    if total:
        sc = score(total)
        lines.append(f"\nscore = killed / (generated - invalid - equivalent) = "
                     f"{sum(total[k] for k in KILLED)} / {total['generated'] - total['invalid'] - total['equivalent']}"
                     f" = {'-' if sc is None else f'{sc:.2%}'} (unknown and internal counted as killed), "
                     f"{seconds:.1f} s")
    for status, title in (("survived", "survivors (proved after mutation; not reviewed in the equivalents file)"),
                          ("weakness", "reviewed checker weaknesses (proved after mutation, but they should not be)"),
                          ("unknown", "unknown (killed, but unknown is never a pass: the solver gave up)"),
                          ("internal", "internal errors (killed, but a checker bug)")):
        picked = [c for c in results if c.status == status]
        if picked:
            lines.append(f"\n{title}:")
            for c in picked:
                extra = f"  [{', '.join(c.codes)}]" if c.codes else ""
                sim = f"  simulator: {simulate(c.mutant)}" if status in ("survived", "weakness") else ""
                lines.append(f"  {c.mutant.id}  {c.mutant.description}{extra}{sim}{'  ' + c.reason if c.reason else ''}")
                if diff:
                    lines.append("    " + c.mutant.diff().rstrip().replace("\n", "\n    "))
    stale = stale_equivalents(results, equivalents)
    if stale:
        lines.append("\nstale entries of the equivalents file:")
        lines += [f"  {s}" for s in stale]
    return "\n".join(lines)


def as_json(results: list[Checked], equivalents: dict[str, Reviewed], seconds: float) -> dict:
    """The JSON report: ``table`` (per operator), ``score``, ``seconds``, ``stale_equivalents``
    and ``mutants`` (id, file, operator, description, status, codes, seconds, reason, and the
    diff of every mutant that was not killed)."""
    rows = table(results)
    return {
        "table": rows,
        "score": score(rows["total"]) if "total" in rows else None,
        "seconds": round(seconds, 3),
        "stale_equivalents": stale_equivalents(results, equivalents),
        "mutants": [{"id": c.mutant.id, "file": c.mutant.file, "operator": c.mutant.operator,
                     "description": c.mutant.description, "status": c.status, "codes": c.codes,
                     "seconds": round(c.seconds, 4), "reason": c.reason,
                     **({"diff": c.mutant.diff()} if c.status in ("survived", "weakness", "equivalent", "internal") else {})}
                    for c in results],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the bench; exit 1 when a mutant survives outside the equivalents file or an entry of
    it is stale, else 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=None, help="check a deterministic subset of N mutants")
    ap.add_argument("--seed", type=int, default=0, help="seed of the subset")
    ap.add_argument("--only", default="", help="only files whose label contains this text")
    ap.add_argument("--operator", action="append", choices=list(OPERATORS), help="only this operator (repeatable)")
    ap.add_argument("--no-real", action="store_true", help="skip the reduced real policies")
    ap.add_argument("--list", action="store_true", help="list the mutants without checking them")
    ap.add_argument("--diff", action="store_true", help="print the diff of every survivor")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    mutants = sample(all_mutants(not args.no_real, args.only, args.operator), args.sample, args.seed)
    if args.list:
        for m in mutants:
            print(f"{m.id}  {m.description}")
        return 0
    equivalents = load_equivalents()
    t0 = time.perf_counter()
    results = run(mutants, equivalents)
    seconds = time.perf_counter() - t0
    if args.json:
        print(json.dumps(as_json(results, equivalents, seconds), indent=2))
    else:
        print(report(results, equivalents, seconds, args.diff))
    bad = any(c.status == "survived" for c in results) or stale_equivalents(results, equivalents)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
