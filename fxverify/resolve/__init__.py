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

from collections.abc import Callable, Mapping

from fxverify import ast, ir
from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.resolve import declarations, names
from fxverify.resolve.files import expand, load_file
from fxverify.resolve.flows import Unroller, build_edges, build_finals
from fxverify.resolve.limits import Limits
from fxverify.resolve.snapshot import DISK, FileSource
from fxverify.resolve.state import State
from fxverify.shapes import EdgeShape, Shapes, region_shape
from fxverify.source import SourceMap, Span

__all__ = ["Limits", "Loader", "load_policy"]


def load_policy(path: str, sources: SourceMap, *, limits: Limits = Limits(),
                texts: Mapping[str, str] | None = None, files: FileSource = DISK,
                on_phase: Callable[[str], None] | None = None) -> tuple[ir.Policy | None, list[Diagnostic]]:
    """Read, parse and resolve the policy rooted at ``path``; ``on_phase`` hears ``parse`` (step 1)
    and ``resolve`` (steps 2 to 4) as they start (a progress bar).

    Every file read (the root and its includes) is registered in ``sources`` under its path.
    ``texts`` maps real paths (``os.path.realpath``) to unsaved texts, an editor's open buffers:
    a file named there is read from it instead of from disk (it need not exist on disk), under the
    same size limit, and its includes still resolve relative to its path; nothing is written.
    ``files`` says where the other files are read (``resolve.snapshot``: this disk, or a snapshot
    of the gate's machine). Returns ``(policy, diagnostics)``; ``policy`` is ``None`` exactly when
    a diagnostic is an error. Diagnostics are sorted by file and offset. Raises nothing for bad
    input (``NotInSnapshot`` when ``files`` is a snapshot that lacks a file); an exception
    escaping from here is a bug (FX-INT-001).
    """
    return Loader(path, sources, limits=limits, texts=texts, files=files).finish(on_phase)


class Loader:
    """One resolution in two steps, so a caller can decide how to check a policy from its size
    before paying for its unrolling: ``measure`` reads, parses and declares everything and
    measures the flows (steps 1 to 3 and the start of 4); ``finish`` unrolls and builds the
    policy (``load_policy``'s result). Arguments as ``load_policy``'s."""

    def __init__(self, path: str, sources: SourceMap, *, limits: Limits = Limits(),
                 texts: Mapping[str, str] | None = None, files: FileSource = DISK) -> None:
        self.st = State(path, sources, limits, dict(texts or {}), files)
        self.sources = sources
        self._measured = False
        self._decl: ast.PolicyDecl | None = None
        self._flows: list[ast.FlowDecl] = []
        self._unroller: Unroller | None = None
        self._fits = False
        #: An upper bound of the edge instances the flows unroll to (``Unroller.check_flow_limits``),
        #: ``None`` until measured or when the input has errors.
        self.edges: int | None = None
        self._result: tuple[ir.Policy | None, list[Diagnostic]] | None = None

    def measure(self, on_phase: Callable[[str], None] | None = None) -> int | None:
        """Read, parse and declare, and measure the flows; returns ``edges`` (``None`` when the
        input already has errors). Idempotent; ``on_phase`` as ``load_policy``'s."""
        if self._measured:
            return self.edges
        self._measured = True
        st, phase = self.st, on_phase or (lambda _phase: None)
        phase("parse")
        root = load_file(st, st.path, None)
        if root is None:
            return None
        st.root_dir = st.files.repo_root(st.path)
        real = st.files.realpath(st.path)
        expand(st, root, True, [real], {real})
        if st.load_failed:
            return None
        phase("resolve")
        self._decl = declarations.policy_decl(st)
        names.declare(st)
        declarations.resolve_devices(st)
        declarations.resolve_links(st)
        declarations.resolve_spaces(st)
        declarations.resolve_regions(st)
        declarations.resolve_alias_sets(st)
        declarations.resolve_maps(st)
        self._flows = [d for d, _ in st.items if isinstance(d, ast.FlowDecl)]
        self._unroller = Unroller(st)
        self._fits = self._unroller.check_flow_limits(self._flows)
        if self._fits and not st.failed and self._decl is not None:
            self.edges = self._unroller.measured_edges
        return self.edges

    def finish(self, on_phase: Callable[[str], None] | None = None) -> tuple[ir.Policy | None, list[Diagnostic]]:
        """Unroll and build the policy; ``(policy, diagnostics)`` as ``load_policy`` returns them
        (``on_phase`` hears the phases ``measure`` has not run yet). Called again, returns the
        same result.

        Then drops the resolution state (the syntax tree, every edge instance with its
        index environment: on a full-size policy, hundreds of MB), which the caller's check would
        otherwise hold beside the policy while it runs. The policy's ``shapes`` keep the parts of
        the syntax tree the parametric prover reads: per declaration, its loops, conditions,
        references and clauses (a few KB)."""
        if self._result is None:
            self.measure(on_phase)
            policy = self._build()
            diags = sorted(self.st.diags, key=_position)
            if any(d.severity is Severity.ERROR for d in diags):
                policy = None
            self._result = (policy, diags)
            self.st = State(self.st.path, self.sources, self.st.limits, {}, self.st.files)
            self._decl, self._flows, self._unroller = None, [], None
        return self._result

    def _build(self) -> ir.Policy | None:
        st, decl = self.st, self._decl
        if st.load_failed or self._unroller is None:
            return None
        if self._fits:
            for flow in self._flows:
                self._unroller.unroll(flow.body, {}, (), flow.name.name)
            self._unroller.finish()
            edges = build_edges(st)
            finals = build_finals(st)
        else:
            edges, finals = [], []
        if st.failed or decl is None:
            return None
        edges_t, regions_t = tuple(edges), tuple(st.regions)
        return ir.Policy(
            name=decl.name, path=st.path, devices=tuple(st.devices), links=tuple(st.links),
            spaces=tuple(st.spaces.values()), regions=regions_t, alias_sets=tuple(st.alias_sets),
            maps=tuple(st.maps.values()), edges=edges_t, final_owners=tuple(finals),
            suppressions=tuple(st.suppressions), span=decl.span, rlimit=decl.rlimit,
            shapes=self._shapes(edges_t, regions_t),
        )

    def _shapes(self, edges: tuple[ir.Edge, ...], regions: tuple[ir.Region, ...]) -> Shapes | None:
        """The shapes of this resolution (``fxverify.shapes``) for the policy's ``edges`` and
        ``regions`` tuples; ``None`` without edges to describe."""
        if not edges or self._unroller is None:
            return None
        st = self.st
        edge_shapes: dict[Span, EdgeShape] = {}
        for flow in self._flows:
            self._unroller.shapes(flow.body, out=edge_shapes)
        region_shapes = {d.name.name: region_shape(d, st.region_fams[d.name.name].dims) for d in st.region_decls
                         if d.name.name in st.region_fams and st.region_fams[d.name.name].ok}
        return Shapes(edge_shapes, region_shapes, edges, regions)


def _position(d: Diagnostic) -> tuple[str, int]:
    if d.primary is None:
        return ("", -1)
    return (d.primary.span.file, d.primary.span.start)
