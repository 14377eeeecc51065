"""Names: the tables of declared names, and every lookup of a name by its kind.

``declare`` is the first pass over the declarations: it registers every device, link, space,
region, alias set, map, flow and edge family so that forward references resolve, and keeps each
declaration for the phase that resolves it. ``known`` checks a use against the tables, with a
did-you-mean. Emits FX-NAM-001 (unknown name), FX-NAM-002 (duplicate name) and FX-TYP-001 (a name
of the wrong kind).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fxverify import ast
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label, nearest
from fxverify.resolve.state import KINDS, EdgeFamily, State, article


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """Return ``did you mean `x`?`` for the closest candidate, or ``None``."""
    match = nearest(name, candidates)
    return f"did you mean `{match}`?" if match else None


def choices(name: str, candidates: Sequence[str]) -> str:
    """A help text listing ``candidates``, with a did-you-mean for ``name`` when one is close."""
    hint = suggest(name, candidates)
    listing = "one of: " + ", ".join(f"`{c}`" for c in candidates)
    return f"{hint} expected {listing}" if hint else f"expected {listing}"


def declare_hint(kind: str) -> str:
    """How to declare a name of ``kind`` (the help of FX-NAM-001 when nothing is close)."""
    return {
        "device": "declare it in `fabric { device NAME: KIND hooks [...] }`",
        "link": "declare it in `fabric { link NAME = A -- B : KIND ORDER }`",
        "space": "declare it with `space NAME on DEV size SIZE`",
        "region": "declare it with `region NAME in SPACE at ADDR size SIZE owner DEV`",
        "alias set": "declare it with `alias_set NAME = [REGION, ...]`",
        "map": "declare it with `map NAME: hash<u32, u64>[N] class CLASS`",
        "edge": "declare it in a flow with `edge NAME: ACTION by DEV.HOOK`",
    }.get(kind, "declare it first")


def register(st: State, kind: str, ident: ast.Ident, what: str | None = None) -> bool:
    """Declare ``ident`` as a ``kind``; FX-NAM-002 (with the first declaration) if taken."""
    table = st.names[kind]
    first = table.get(ident.name)
    if first is not None:
        st.error(codes.NAM_002, f"duplicate {what or kind} `{ident.name}`", ident.span,
                 "declared again here", related=(Label(first, "first declared here"),),
                 help=f"rename one of the two {kind}s")
        return False
    table[ident.name] = ident.span
    return True


def declare(st: State) -> None:
    """Pass 1: register every declared name so that forward references resolve."""
    for decl, _ in st.items:
        if isinstance(decl, ast.FabricDecl):
            for sub in decl.items:
                if isinstance(sub, ast.DeviceDecl):
                    if register(st, "device", sub.name):
                        st.device_decls.append(sub)
                else:
                    _declare_link(st, sub)
        elif isinstance(decl, ast.SpaceDecl):
            if register(st, "space", decl.name):
                st.space_decls.append(decl)
        elif isinstance(decl, ast.RegionDecl):
            if register(st, "region", decl.name):
                st.region_decls.append(decl)
        elif isinstance(decl, ast.AliasSetDecl):
            if register(st, "alias set", decl.name):
                st.alias_decls.append(decl)
        elif isinstance(decl, ast.MapDecl):
            if register(st, "map", decl.name):
                st.map_decls.append(decl)
        elif isinstance(decl, ast.FlowDecl):
            register(st, "flow", decl.name)
            _declare_edges(st, decl.body)


def _declare_link(st: State, sub: ast.LinkDecl) -> None:
    name = sub.name.name if sub.name else f"{sub.a.name}--{sub.b.name}"
    ident = sub.name or ast.Ident(name, sub.a.span.join(sub.b.span))
    table = st.names["link"]
    if name in table:
        help_ = None if sub.name else "give one link an explicit name: " \
            f"`link up0 = {sub.a.name} -- {sub.b.name} : ...`"
        st.error(codes.NAM_002, f"duplicate link `{name}`", ident.span, "declared again here",
                 related=(Label(table[name], "first declared here"),),
                 help=help_ or "rename one of the two links")
    else:
        table[name] = ident.span
        st.link_decls.append((sub, name))


def _declare_edges(st: State, stmts: Iterable[ast.Stmt]) -> None:
    for s in stmts:
        if isinstance(s, ast.EdgeDecl):
            fam = st.edge_fams.get(s.name.name)
            if fam is None:
                st.edge_fams[s.name.name] = EdgeFamily(s.name.name, len(s.indices), s.name.span)
                st.names["edge"][s.name.name] = s.name.span
            elif fam.dims != len(s.indices):
                # The same family may be declared in several places (if/else branches) only
                # with the same number of indices; a plain name is declared once.
                st.error(codes.NAM_002, f"duplicate edge `{s.name.name}`", s.name.span,
                         "declared again here", related=(Label(fam.span, "first declared here"),),
                         help="edge names are global across flows; rename one of them")
        elif isinstance(s, ast.ForStmt):
            _declare_edges(st, s.body)
        elif isinstance(s, ast.IfStmt):
            _declare_edges(st, s.then)
            _declare_edges(st, s.orelse)


def known(st: State, ident: ast.Ident, kind: str, *, extra: Iterable[str] = ()) -> bool:
    """True if ``ident`` names a ``kind``; otherwise FX-TYP-001 or FX-NAM-001 (did you mean)."""
    if ident.name in st.names[kind]:
        return True
    for other in KINDS:
        if other != kind and ident.name in st.names[other]:
            near = nearest(ident.name, st.names[kind])
            hint = (f"did you mean {article(kind)} `{near}`?" if near
                    else f"name {article(kind)} here; `{ident.name}` is declared as {article(other)}")
            st.error(codes.TYP_001, f"`{ident.name}` is {article(other)}, not {article(kind)}",
                     ident.span, f"expected {article(kind)}", help=hint,
                     related=(Label(st.names[other][ident.name], f"declared as {article(other)} here"),))
            return False
    candidates = list(st.names[kind]) + list(extra)
    st.error(codes.NAM_001, f"unknown {kind} `{ident.name}`", ident.span, "not declared",
             help=suggest(ident.name, candidates) or declare_hint(kind))
    return False


def device(st: State, ident: ast.Ident) -> str | None:
    """The device ``ident`` names, or ``None`` after reporting it."""
    return ident.name if known(st, ident, "device") else None
