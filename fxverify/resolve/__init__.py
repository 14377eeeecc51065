"""Resolution: the AST of a root policy file and its includes -> ``ir.Policy``.

``load_policy`` runs the phases in order, one module each, over one shared ``state.State``:

1. ``files``: read the root file and its includes (confined to the repository), register every
   text in the ``SourceMap``, read suppression comments, parse;
2. ``names``: register every declared name, so that forward references resolve;
3. ``declarations``: the policy line, devices, links, spaces, regions (families expanded), alias
   sets and maps, checking words against ``fxverify.vocab`` (``vocabulary``) and evaluating
   constant ``expressions``;
4. ``flows``: measure the flows against the ``limits`` before anything is expanded, unroll loops
   and branches into edge instances, then build every edge (``edges``, with its ``references``)
   and final owner.

The result has every name bound to its declaration, every size in bytes, every address absolute
in its space, every family unrolled into instances (``pool[3]``, ``kvb[3][17]``), map keys and
values evaluated (a device name becomes its index in ``Policy.devices``). The language is
specified in specs/language.md. Out-of-region footprints and undeclared hooks are not resolution
errors: the FX-ALIAS-003 and FX-HOOK-002 obligations report them.

Emits: FX-SYN-001..004 (through ``fxverify.syntax``), FX-NAM-001..005, FX-TYP-001..005, FX-LIM-001,
FX-SUP-001; each phase module says which of them it emits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from fxverify import ast, ir
from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.resolve import declarations, names
from fxverify.resolve.files import expand, load_file, repo_root
from fxverify.resolve.flows import Unroller, build_edges, build_finals
from fxverify.resolve.limits import Limits
from fxverify.resolve.state import State
from fxverify.source import SourceMap

__all__ = ["Limits", "load_policy"]


def load_policy(path: str, sources: SourceMap, *, limits: Limits = Limits(),
                texts: Mapping[str, str] | None = None,
                on_phase: Callable[[str], None] | None = None) -> tuple[ir.Policy | None, list[Diagnostic]]:
    """Read, parse and resolve the policy rooted at ``path``; ``on_phase`` hears ``parse`` (step 1)
    and ``resolve`` (steps 2 to 4) as they start (a progress bar).

    Every file read (the root and its includes) is registered in ``sources`` under its path.
    ``texts`` maps real paths (``os.path.realpath``) to unsaved texts, an editor's open buffers:
    a file named there is read from it instead of from disk (it need not exist on disk), under the
    same size limit, and its includes still resolve relative to its path; nothing is written.
    Returns ``(policy, diagnostics)``; ``policy`` is ``None`` exactly when a diagnostic is an error.
    Diagnostics are sorted by file and offset. Raises nothing for bad input; an exception escaping
    from here is a bug (FX-INT-001).
    """
    st = State(path, sources, limits, dict(texts or {}))
    policy = _run(st, on_phase or (lambda _phase: None))
    diags = sorted(st.diags, key=_position)
    if any(d.severity is Severity.ERROR for d in diags):
        policy = None
    return policy, diags


def _run(st: State, on_phase: Callable[[str], None]) -> ir.Policy | None:
    on_phase("parse")
    root = load_file(st, st.path, None)
    if root is None:
        return None
    st.root_dir = repo_root(st.path)
    real = os.path.realpath(st.path)
    expand(st, root, True, [real], {real})
    if st.load_failed:
        return None
    on_phase("resolve")
    decl = declarations.policy_decl(st)
    names.declare(st)
    declarations.resolve_devices(st)
    declarations.resolve_links(st)
    declarations.resolve_spaces(st)
    declarations.resolve_regions(st)
    declarations.resolve_alias_sets(st)
    declarations.resolve_maps(st)
    flows = [d for d, _ in st.items if isinstance(d, ast.FlowDecl)]
    unroller = Unroller(st)
    if unroller.check_flow_limits(flows):
        for flow in flows:
            unroller.unroll(flow.body, {}, (), flow.name.name)
        unroller.finish()
        edges = build_edges(st)
        finals = build_finals(st)
    else:
        edges, finals = [], []
    if st.failed or decl is None:
        return None
    return ir.Policy(
        name=decl.name, path=st.path, devices=tuple(st.devices), links=tuple(st.links),
        spaces=tuple(st.spaces.values()), regions=tuple(st.regions), alias_sets=tuple(st.alias_sets),
        maps=tuple(st.maps.values()), edges=tuple(edges), final_owners=tuple(finals),
        suppressions=tuple(st.suppressions), span=decl.span, rlimit=decl.rlimit,
    )


def _position(d: Diagnostic) -> tuple[str, int]:
    if d.primary is None:
        return ("", -1)
    return (d.primary.span.file, d.primary.span.start)
