"""Hover texts: what an editor shows over a name, a literal or a diagnostic code.

Takes an ``index.Index`` entry (an ``Occurrence``, ``Include`` or ``Number``), or a code written in
the text, and produces Markdown: for a region its space, address range, size in bytes, owner,
dtype and alias set (a family: its instances); for an edge its action, hook, and the footprints
its instances read and write (hex ranges, bytes, strided element layout), its orderings and
ownership actions; for a region named inside an edge, that edge's footprint on it; for devices,
hooks, links, spaces, maps (entry layout in bytes) and index variables their declarations; for a
size literal its bytes; for a code (``FX-ORD-002``) the ``fxverify explain`` text. Values come
from the resolved ``ir.Policy``; without one (the policy does not resolve yet) a name shows its
declaration line. Emits no diagnostics.
"""

from __future__ import annotations

import re

from fxverify import ir
from fxverify.diagnostics import codes
from fxverify.diagnostics.explain import explain, load_examples
from fxverify.lsp.index import Include, Index, Number, Occurrence, Symbol
from fxverify.source import SourceMap
from fxverify.vocab import MAP_SCALAR_BITS, UNITS, size_text

#: A diagnostic code as written in text (``# expect: FX-ORD-002``, ``# fx: allow ...``).
CODE_RE = re.compile(r"FX-[A-Z]+-\d{3}")

#: Instances of a family listed one by one in a hover; more are summarised.
SHOWN_INSTANCES = 4


def code_at(line: str, col: int) -> str | None:
    """The registry code written in ``line`` around 0-based character ``col``, or ``None``."""
    for m in CODE_RE.finditer(line):
        if m.start() <= col <= m.end() and codes.lookup(m.group()) is not None:
            return m.group()
    return None


def code_text(code: str) -> str:
    """The ``fxverify explain CODE`` text of ``code``, as Markdown."""
    c = codes.lookup(code)
    if c is None:
        return f"`{code}` is not an fxverify code"
    return f"**{c}** {c.title}\n\n```text\n{explain(c, load_examples())}```"


def code_summary(code: str) -> str:
    """One paragraph on ``code``: its title, rule and why it matters (a diagnostic's hover)."""
    c = codes.lookup(code)
    if c is None:
        return ""
    return f"**{c}** {c.title}: {c.rule}.\n\n*Why it matters:* {c.why}.\n\n`fxverify explain {c}` shows examples."


def hover(idx: Index, entry: object, sources: SourceMap) -> str | None:
    """The Markdown hover of ``entry`` (found by ``Index.at``), or ``None`` when it has none."""
    if isinstance(entry, Number):
        return _number(entry)
    if isinstance(entry, Include):
        return f"include `{entry.written}`: `{entry.target}`"
    if not isinstance(entry, Occurrence):
        return None
    sym = idx.symbol(entry)
    if sym is None:
        return f"{entry.kind} `{entry.name}`: not declared"
    pol = idx.policy
    body = _facts(pol, sym) if pol is not None else None
    if body is None:
        body = f"```fx\n{_decl_line(sources, sym)}\n```"
    else:
        body = f"**{sym.kind}** `{sym.shown}`\n\n{body}"
    if pol is not None and entry.kind == "region" and entry.edge is not None:
        here = _footprints_in_edge(pol, entry.edge, entry.name)
        if here:
            body += "\n\nin this edge: " + "; ".join(here)
    return body


def _decl_line(sources: SourceMap, sym: Symbol) -> str:
    sf = sources.get(sym.decl.file)
    if sf is None:
        return f"{sym.kind} {sym.shown}"
    line, _ = sf.line_col(sym.decl.start)
    return sf.line_text(line).strip()


def _number(n: Number) -> str:
    if n.unit is None:
        return f"{n.value:,} = {n.value:#x}"
    per = UNITS.get(n.unit)
    if per is None:
        return f"`{n.unit}` is not a size unit; units: " + ", ".join(UNITS)
    total = n.value * per
    return f"{n.value} {n.unit} = {total:,} B ({total:#x})"


def _bytes(n: int) -> str:
    return f"{size_text(n)} ({n:,} B)" if size_text(n) != f"{n} B" else f"{n:,} B"


def footprint_text(fp: ir.Footprint) -> str:
    """A footprint as a hover shows it: region, hex range, bytes, and the element layout of a
    strided one (``{base + k*stride + o : 0 <= k < count, 0 <= o < elem}``)."""
    rng = f"[{fp.lo:#x}, {fp.hi:#x})"
    if fp.count == 1 or fp.stride == fp.elem:
        return f"`{fp.region}` {rng} in `{fp.space}`, {_bytes(fp.nbytes)}"
    return (f"`{fp.region}` {fp.count} elements of {_bytes(fp.elem)} every {_bytes(fp.stride)} in {rng} "
            f"of `{fp.space}`, {_bytes(fp.nbytes)}")


def _facts(pol: ir.Policy, sym: Symbol) -> str | None:
    kind, name = sym.kind, sym.name
    if kind == "region":
        return _region(pol, name)
    if kind == "edge":
        return _edge_family(pol, name)
    if kind == "space" and pol.has("space", name):
        s = pol.space(name)
        flags = [f for f, on in (("persistent", s.persistent), ("noncoherent", s.noncoherent), ("init", s.init)) if on]
        flags += [f"checksum {s.checksum}"] if s.checksum else []
        return (f"on `{s.device}`: [{s.base:#x}, {s.end:#x}), {_bytes(s.size)}"
                + (f"; {', '.join(flags)}" if flags else ""))
    if kind == "device" and pol.has("device", name):
        d = pol.device(name)
        links = [f"`{ln.name}` ({ln.kind} {ln.order.value})" for ln in pol.links if name in (ln.a, ln.b)]
        return (f"{d.kind.value}; hooks: {', '.join(f'`{h}`' for h in d.hooks) or 'none'}"
                + (f"\n\nlinks: {', '.join(links)}" if links else ""))
    if kind == "hook":
        dev, _, hook = name.partition(".")
        runs = [e.name for e in pol.edges if e.device == dev and e.hook == hook]
        return f"hook `{hook}` of `{dev}`; edges driven here: {_list(runs)}"
    if kind == "link" and pol.has("link", name):
        ln = pol.link(name)
        return f"`{ln.a}` -- `{ln.b}`: {ln.kind}, {ln.order.value}"
    if kind == "alias set":
        a = next((a for a in pol.alias_sets if a.name == name), None)
        return None if a is None else f"regions that may overlap one another: {_list(list(a.regions))}"
    if kind == "map" and pol.has("map", name):
        m = pol.map(name)
        kb, vb = MAP_SCALAR_BITS.get(m.key_type, 0) // 8, MAP_SCALAR_BITS.get(m.value_type, 0) // 8
        cls = m.cls.kind.value + (f"({m.cls.device})" if m.cls.device else "")
        return (f"{m.map_type}<{m.key_type}, {m.value_type}>, {m.max_entries:,} entries of {kb} + {vb} B "
                f"(at most {_bytes(m.max_entries * (kb + vb))} of keys and values); class {cls}"
                + (f", merge {m.merge}" if m.merge else ""))
    return None


def _list(names: list[str]) -> str:
    if not names:
        return "none"
    shown = ", ".join(f"`{n}`" for n in names[:SHOWN_INSTANCES])
    return shown + (f" and {len(names) - SHOWN_INSTANCES} more" if len(names) > SHOWN_INSTANCES else "")


def _region(pol: ir.Policy, family: str) -> str | None:
    regs = [r for r in pol.regions if r.family == family]
    if not regs:
        return None
    r = regs[0]
    flags = [f for f, on in (("init", r.init), ("pooled", r.pooled)) if on]
    one = (f"[{r.base:#x}, {r.end:#x}) in `{r.space}`, {_bytes(r.size)}; owner `{r.owner}`"
           + (f", dtype {r.dtype}" if r.dtype else "") + (f", {', '.join(flags)}" if flags else "")
           + (f"; alias set `{r.alias_set}`" if r.alias_set else ""))
    if len(regs) == 1:
        return one
    total = sum(x.size for x in regs)
    return (f"{len(regs):,} instances, {_bytes(total)} in all; first `{r.name}`: {one}; "
            f"last `{regs[-1].name}`: [{regs[-1].base:#x}, {regs[-1].end:#x})")


def _edge_family(pol: ir.Policy, family: str) -> str | None:
    edges = [e for e in pol.edges if e.family == family]
    if not edges:
        return None
    head = f"{len(edges):,} instances; first " if len(edges) > 1 else ""
    return head + _edge(edges[0])


def _edge(e: ir.Edge) -> str:
    lines = [f"`{e.name}` in flow `{e.flow}`: {e.action.value} by `{e.device}.{e.hook}`"
             + (f", stream `{e.stream}`" if e.stream else "")]
    if e.src is not None:
        lines.append(f"reads {footprint_text(e.src)}")
    if e.dst is not None:
        op = e.reduce_op if e.reduce_atomic else f"{e.reduce_op}, non-atomic"
        verb = {ir.EdgeAction.REDUCE: f"reduces ({op}) into", ir.EdgeAction.READ: "reads"}.get(e.action, "writes")
        lines.append(f"{verb} {footprint_text(e.dst)}")
    if e.bytes is not None:
        lines.append(f"declared bytes: {_bytes(e.bytes)}")
    if e.transforms:
        lines.append("transforms: " + " |> ".join(type(t).__name__.lower() for t in e.transforms))
    if e.after:
        lines.append(f"after {_list(list(e.after))}")
    for h in e.handoffs:
        lines.append(f"hands `{h.region}` from `{h.src}` to `{h.dst}`")
    for ls in e.leases:
        lines.append(f"leases `{ls.region}` to `{ls.device}`")
    for rv in e.revokes:
        lines.append(f"revokes `{rv.region}` from `{rv.device}`")
    for rl in e.releases:
        lines.append(f"releases `{rl.region}` ({rl.kind.value})")
    for al in e.allocs:
        lines.append(f"allocates `{al.region}` to `{al.device}`")
    if e.flushes:
        lines.append(f"flushes {_list(list(e.flushes))}")
    return "\n\n".join(lines)


def _footprints_in_edge(pol: ir.Policy, decl: object, family: str) -> list[str]:
    """The footprints on regions of ``family`` of the first instance of the edge declared at
    ``decl``."""
    e = next((x for x in pol.edges if x.span == decl), None)
    if e is None:
        return []
    regs = {r.name for r in pol.regions if r.family == family}
    fps = [fp for fp in (e.src, e.dst, *e.writebacks, *e.invalidates) if fp is not None and fp.region in regs]
    return [f"`{e.name}`: " + footprint_text(fp) for fp in fps]
