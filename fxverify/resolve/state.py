"""The state of one resolution: what the phases have found so far, and where problems go.

Every phase module of ``fxverify.resolve`` reads and extends one ``State``: the declarations
gathered from the files, the name tables, the resolved fabric and layout, the edge instances found
while unrolling, and the diagnostics. ``State.error`` records a diagnostic once per code and span.
``EvalError`` carries a problem that shows only when an expression is evaluated for one instance
(an index out of range, a division by zero) back to the phase that reports it. Emits nothing itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fxverify import ast, ir
from fxverify.diagnostics.codes import Code, Severity
from fxverify.diagnostics.model import Diagnostic, Label, diagnostic
from fxverify.errors import FxError
from fxverify.resolve.limits import Limits
from fxverify.resolve.snapshot import DISK, FileSource
from fxverify.source import SourceMap, Span

#: Values of the index variables in scope, by name.
Env = dict[str, int]
#: A compiled expression: its value in an environment.
Fn = Callable[[Env], Any]

#: Kinds of declared names, in the order used to explain a wrong-kind use (FX-TYP-001).
KINDS: tuple[str, ...] = ("device", "link", "space", "region", "alias set", "map", "flow", "edge")


class EvalError(FxError):
    """A value-dependent input problem found while evaluating one instance (becomes a Diagnostic)."""

    def __init__(self, code: Code, span: Span, message: str, help: str | None = None,
                 label: str = "invalid here") -> None:
        super().__init__(message)
        self.code, self.span, self.message, self.help, self.label = code, span, message, help, label


@dataclass(slots=True)
class RegionFamily:
    """A declared region (family): its index ranges and its instances in order."""

    name: str
    dims: tuple[tuple[int, int], ...]
    instances: dict[tuple[int, ...], str] = field(default_factory=dict)
    ok: bool = True


@dataclass(slots=True)
class EdgeFamily:
    """A declared edge (family): index count, first declaration, instances in edge-id order."""

    name: str
    dims: int
    span: Span
    instances: dict[tuple[int, ...], str] = field(default_factory=dict)
    all_names: tuple[str, ...] | None = None


@dataclass(slots=True)
class Instance:
    """One edge instance found while unrolling, before its ``ir.Edge`` is built."""

    decl: ast.EdgeDecl
    env: Env
    scope: tuple[str, ...]
    flow: str
    name: str


@dataclass
class State:
    """Everything one ``load_policy`` run has resolved so far (see the module docstring)."""

    path: str
    sources: SourceMap
    limits: Limits
    #: unsaved texts by real path (an editor's open buffers), read instead of the files on disk
    texts: Mapping[str, str] = field(default_factory=dict)
    #: where files are read: this machine's disk, or a snapshot of the gate's machine
    files: FileSource = DISK
    diags: list[Diagnostic] = field(default_factory=list)
    root_dir: str = ""
    #: (declaration, whether it comes from the root file), includes expanded in place
    items: list[tuple[ast.Decl, bool]] = field(default_factory=list)
    suppressions: list[ir.Suppression] = field(default_factory=list)
    load_failed: bool = False  # a file could not be read, decoded, parsed or included
    #: kind -> name -> span of the first declaration
    names: dict[str, dict[str, Span]] = field(default_factory=lambda: {k: {} for k in KINDS})
    device_decls: list[ast.DeviceDecl] = field(default_factory=list)
    link_decls: list[tuple[ast.LinkDecl, str]] = field(default_factory=list)
    space_decls: list[ast.SpaceDecl] = field(default_factory=list)
    region_decls: list[ast.RegionDecl] = field(default_factory=list)
    alias_decls: list[ast.AliasSetDecl] = field(default_factory=list)
    map_decls: list[ast.MapDecl] = field(default_factory=list)
    devices: list[ir.Device] = field(default_factory=list)
    device_index: dict[str, int] = field(default_factory=dict)
    links: list[ir.Link] = field(default_factory=list)
    link_by_pair: dict[frozenset[str], str] = field(default_factory=dict)
    #: device pair -> the names of every link joining them, in declaration order
    links_of_pair: dict[frozenset[str], list[str]] = field(default_factory=dict)
    spaces: dict[str, ir.Space] = field(default_factory=dict)
    region_fams: dict[str, RegionFamily] = field(default_factory=dict)
    regions: list[ir.Region] = field(default_factory=list)
    #: ``ir.Region`` fields per instance, until alias sets are known
    region_args: list[tuple[Any, ...]] = field(default_factory=list)
    region_pos: dict[str, int] = field(default_factory=dict)
    alias_sets: list[ir.AliasSet] = field(default_factory=list)
    maps: dict[str, ir.MapDecl] = field(default_factory=dict)
    edge_fams: dict[str, EdgeFamily] = field(default_factory=dict)
    instances: list[Instance] = field(default_factory=list)
    finals: list[tuple[ast.FinalOwnerStmt, Env, tuple[str, ...]]] = field(default_factory=list)
    _seen: set[tuple[str, str, int, int]] = field(default_factory=set)
    #: ``references.partial_set``'s groups of a family's instances by their fixed indices, per
    #: (id of the family's instance table, fixed positions): shared by every reference that
    #: fixes the same positions (each holds the table, so the id stays its own, and its size then)
    partial_groups: dict[tuple[int, tuple[int, ...]], tuple[dict, int, dict]] = field(default_factory=dict)

    def error(self, code: Code, message: str, span: Span | None, label: str = "", *,
              help: str | None = None, related: Sequence[Label] = (), notes: Sequence[str] = ()) -> None:
        """Record one diagnostic; a second one with the same code and span is dropped."""
        self.add(diagnostic(code, message, span, label, related=related, notes=notes, help=help))

    def add(self, d: Diagnostic) -> None:
        """Record a diagnostic made elsewhere (syntax, suppressions), with the same deduplication."""
        if d.primary is not None:
            key = (str(d.code), d.primary.span.file, d.primary.span.start, d.primary.span.end)
            if key in self._seen:
                return
            self._seen.add(key)
        self.diags.append(d)

    def eval_error(self, err: EvalError) -> None:
        """Report a problem found while evaluating one instance."""
        self.error(err.code, err.message, err.span, err.label, help=err.help)

    @property
    def failed(self) -> bool:
        """True once an error has been recorded."""
        return any(d.severity is Severity.ERROR for d in self.diags)


def article(kind: str) -> str:
    """``a device``, ``an alias set``."""
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def plural(n: int, one: str, many: str) -> str:
    """``one`` when ``n == 1``, else ``many``."""
    return one if n == 1 else many



def instance_name(family: str, idx: tuple[int, ...]) -> str:
    """``pool`` + ``(3, 17)`` -> ``pool[3][17]``."""
    if len(idx) == 1:
        return f"{family}[{idx[0]}]"
    if len(idx) == 2:
        return f"{family}[{idx[0]}][{idx[1]}]"
    return family + "".join(f"[{i}]" for i in idx)
