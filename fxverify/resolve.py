"""AST -> ``ir.Policy``: files, includes, names, units, family unrolling, limits and suppressions.

Takes the path of a root policy file (read from disk, every file registered in the ``SourceMap``)
and produces a resolved ``fxverify.ir.Policy``: every name bound to its declaration, every size in
bytes, every address absolute in its space, every region and edge family unrolled into instances
(``pool[3]``, ``kvb[3][17]``), map values and keys evaluated (a device name becomes its index in
``Policy.devices``). The language is specified in specs/language.md.

Emits: FX-SYN-001..004 (through ``fxverify.syntax``), FX-NAM-001 (unknown name, with a did-you-mean),
FX-NAM-002 (duplicate name), FX-NAM-003 (file or include not found), FX-NAM-004 (include outside the
repository), FX-NAM-005 (include cycle), FX-TYP-001 (wrong kind of name), FX-TYP-002 (invalid
value), FX-TYP-003 (unknown unit, kind, dtype, transform or operator), FX-TYP-004 (index out of
range), FX-TYP-005 (declared bytes disagree), FX-LIM-001 (input too large; checked before anything
is expanded), FX-SUP-001 (suppression without a reason).

Out-of-region footprints and undeclared hooks are not resolve errors: the FX-ALIAS-003 and
FX-HOOK-002 obligations report them.
"""

from __future__ import annotations

import difflib
import errno
import itertools
import operator
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fxverify import ast, ir
from fxverify.diagnostics.codes import REGISTRY, lookup
from fxverify.diagnostics.model import Diagnostic, Label, Severity
from fxverify.errors import FxError
from fxverify.source import SourceMap, Span
from fxverify.syntax.parse import decode, parse, scan_comments
from fxverify.syntax.to_ast import to_ast


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource caps on one policy (BRIEF section 9, "Input limits"); exceeding one is FX-LIM-001.

    ``max_file_bytes``: size of any one file, in bytes. ``max_edges``: edge instances (and final
    owner instances, and loop iterations) over all flows. ``max_regions``: region instances.
    ``max_nesting``: nested ``for``/``if`` blocks in a flow. ``max_range``: iterations of one loop or
    one region family dimension. ``max_depth``: depth of the syntax tree (deep expressions).
    """

    max_file_bytes: int = 8 * 1024 * 1024
    max_edges: int = 2_000_000
    max_regions: int = 2_000_000
    max_nesting: int = 16
    max_range: int = 10_000_000
    max_depth: int = 200


# ---- vocabularies (specs/language.md) -----------------------------------------------------------

UNITS: dict[str, int] = {
    "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
}
LINK_KINDS: tuple[str, ...] = ("nvlink", "pcie", "cxl", "rdma", "ethernet", "smp")
DTYPES: tuple[str, ...] = (
    "bf16", "fp16", "f16", "fp32", "f32", "fp64", "f64", "fp8", "fp8_e4m3", "fp8_e5m2",
    "int8", "int4", "uint8", "int16", "int32", "int64",
)
COMPRESS_ALGOS: tuple[str, ...] = ("lz4", "zstd", "deflate", "snappy")
CHECKSUM_ALGOS: tuple[str, ...] = ("crc32c", "crc32", "xxh64", "adler32")
MERGE_OPS: tuple[str, ...] = (
    "sum", "add", "max", "min", "prod", "and", "or", "xor", "count", "last", "first", "sub", "avg",
)
MAP_TYPES: tuple[str, ...] = ("hash", "array", "ringbuf")
MAP_SCALARS: tuple[str, ...] = ("u8", "u16", "u32", "u64", "device")
U64_END = 1 << 64

# Kinds of declared names, in the order used to explain a wrong-kind use (FX-TYP-001).
_KINDS: tuple[str, ...] = ("device", "link", "space", "region", "alias set", "map", "flow", "edge")

_Env = dict[str, int]
_Fn = Callable[[_Env], Any]

_SUPPRESS_RE = re.compile(r"^\s*fx:\s*(?P<rest>.*)$")
_ALLOW_RE = re.compile(
    r'^allow\s+(?P<codes>[^\s,"]+(?:\s*,\s*[^\s,"]+)*)'
    r'(?:\s+reason\s+"(?P<reason>(?:\\.|[^"\\])*)")?\s*(?P<tail>.*)$'
)


# Findings of the obligation families, and unknown verdicts, can be accepted with a reason; input
# errors and internal errors cannot.
_SUPPRESSIBLE = frozenset({"ordering", "alias", "ownership", "maps", "transforms", "hooks", "solver"})


class _EvalError(FxError):
    """A value-dependent input problem found while evaluating one instance (becomes a Diagnostic)."""

    def __init__(self, code: str, span: Span, message: str, help: str | None = None,
                 label: str = "invalid here") -> None:
        super().__init__(message)
        self.code, self.span, self.message, self.help, self.label = code, span, message, help, label


def load_policy(
    path: str, sources: SourceMap, *, limits: Limits = Limits()
) -> tuple[ir.Policy | None, list[Diagnostic]]:
    """Read, parse and resolve the policy rooted at ``path``.

    Every file read (the root and its includes) is registered in ``sources`` under its path.
    Returns ``(policy, diagnostics)``; ``policy`` is ``None`` exactly when a diagnostic is an error.
    Diagnostics are sorted by file and offset. Raises nothing for bad input; an exception escaping
    from here is a bug (FX-INT-001).
    """
    resolver = _Resolver(path, sources, limits)
    policy = resolver.run()
    diags = sorted(resolver.diags, key=_diag_key)
    if any(d.severity is Severity.ERROR for d in diags):
        policy = None
    return policy, diags


def _diag_key(d: Diagnostic) -> tuple[str, int]:
    if d.primary is None:
        return ("", -1)
    return (d.primary.span.file, d.primary.span.start)


def _suggest(name: str, candidates: Iterable[str]) -> str | None:
    """Return ``did you mean `x`?`` for the closest candidate, or ``None``."""
    # 0.5 rather than difflib's 0.6 so that short names (`kx` for `kv`) still get a suggestion.
    match = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.5)
    return f"did you mean `{match[0]}`?" if match else None


def _choices(name: str, candidates: Sequence[str]) -> str:
    hint = _suggest(name, candidates)
    listing = "one of: " + ", ".join(f"`{c}`" for c in candidates)
    return f"{hint} expected {listing}" if hint else f"expected {listing}"


def _instance_name(family: str, idx: tuple[int, ...]) -> str:
    """``pool`` + ``(3, 17)`` -> ``pool[3][17]``."""
    if len(idx) == 1:
        return f"{family}[{idx[0]}]"
    if len(idx) == 2:
        return f"{family}[{idx[0]}][{idx[1]}]"
    return family + "".join(f"[{i}]" for i in idx)


_TupleFn = Callable[[_Env], tuple[Any, ...]]


def _concat(fns: Sequence[_TupleFn], dedupe: bool = False) -> _TupleFn:
    """Return ``env -> the concatenation of f(env) for f in fns`` (optionally without repeats)."""
    if not fns:
        return lambda env: ()
    if len(fns) == 1:
        return fns[0]
    fs = tuple(fns)
    if dedupe:
        return lambda env: tuple(dict.fromkeys(x for f in fs for x in f(env)))
    return lambda env: tuple(x for f in fs for x in f(env))


def _collect(fns: Sequence[_Fn]) -> Callable[[_Env], tuple[Any, ...]]:
    """Return ``env -> tuple(f(env) for f in fns)``."""
    if not fns:
        return lambda env: ()
    if len(fns) == 1:
        f0 = fns[0]
        return lambda env: (f0(env),)
    fs = tuple(fns)
    return lambda env: tuple([f(env) for f in fs])


def _tuple_fn(fns: Sequence[_Fn]) -> Callable[[_Env], tuple[int, ...]]:
    """Return ``env -> tuple(f(env) for f in fns)``, unrolled for the common 1 and 2 indices."""
    if len(fns) == 1:
        f0 = fns[0]
        return lambda env: (f0(env),)
    if len(fns) == 2:
        f0, f1 = fns
        return lambda env: (f0(env), f1(env))
    fs = tuple(fns)
    return lambda env: tuple(f(env) for f in fs)


def _const_fn(value: Any) -> _Fn:
    return lambda env: value


@dataclass(slots=True)
class _RegionFamily:
    """A declared region (family): its index variables, ranges and instances in order."""

    name: str
    dims: tuple[tuple[int, int], ...]
    instances: dict[tuple[int, ...], str] = field(default_factory=dict)
    ok: bool = True


@dataclass(slots=True)
class _EdgeFamily:
    """A declared edge (family): index count, first declaration, instances in eid order."""

    name: str
    dims: int
    span: Span
    instances: dict[tuple[int, ...], str] = field(default_factory=dict)
    all_names: tuple[str, ...] | None = None


@dataclass(slots=True)
class _Instance:
    """One edge instance found while unrolling, before its Edge is built."""

    decl: ast.EdgeDecl
    env: _Env
    scope: tuple[str, ...]
    flow: str
    name: str


@dataclass(frozen=True, slots=True)
class _XfSpec:
    """Parameters a transform kind accepts (specs/language.md, "Transforms")."""

    arrow: bool = False
    positional: tuple[tuple[str, str], ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    required: tuple[str, ...] = ()


_XF_SPECS: dict[ir.XfKind, _XfSpec] = {
    ir.XfKind.MOVE: _XfSpec(),
    ir.XfKind.PERSIST: _XfSpec(),
    ir.XfKind.QUANTIZE: _XfSpec(arrow=True, keys=(("group", "posint"), ("scale", "dtype"))),
    ir.XfKind.COMPRESS: _XfSpec(positional=(("algo", "compress"),), required=("algo",)),
    ir.XfKind.CHECKSUM: _XfSpec(positional=(("algo", "checksum"),), required=("algo",)),
    ir.XfKind.FILTER: _XfSpec(positional=(("keep", "percent"),)),
    ir.XfKind.REDUCE: _XfSpec(positional=(("op", "op"),), required=("op",)),
    ir.XfKind.SCATTER: _XfSpec(positional=(("ways", "posint"),), required=("ways",)),
    ir.XfKind.REPLICATE: _XfSpec(positional=(("ways", "posint"),), required=("ways",)),
    ir.XfKind.GATHER: _XfSpec(
        positional=(("ways", "posint"),), keys=(("rank", "nonneg"),), required=("ways",)
    ),
}
_NAME_VOCAB: dict[str, tuple[str, tuple[str, ...]]] = {
    "dtype": ("dtype", DTYPES),
    "compress": ("compression algorithm", COMPRESS_ALGOS),
    "checksum": ("checksum algorithm", CHECKSUM_ALGOS),
    "op": ("operator", MERGE_OPS),
}


class _Resolver:
    """Holds the state of one ``load_policy`` run; ``run`` does the work in pipeline order."""

    def __init__(self, path: str, sources: SourceMap, limits: Limits) -> None:
        self.path = path
        self.sources = sources
        self.limits = limits
        self.diags: list[Diagnostic] = []
        self._seen: set[tuple[str, str, int, int]] = set()
        self.root_dir = ""
        self.items: list[tuple[ast.Decl, bool]] = []  # (declaration, from the root file)
        self.suppressions: list[ir.Suppression] = []
        # name tables: kind -> name -> span of the first declaration
        self.names: dict[str, dict[str, Span]] = {k: {} for k in _KINDS}
        self.devices: list[ir.Device] = []
        self.device_index: dict[str, int] = {}
        self.links: list[ir.Link] = []
        self.link_by_pair: dict[frozenset[str], str] = {}
        self.spaces: dict[str, ir.Space] = {}
        self.region_fams: dict[str, _RegionFamily] = {}
        self.regions: list[ir.Region] = []
        self._region_args: list[tuple[Any, ...]] = []  # Region fields, until alias sets are known
        self.region_pos: dict[str, int] = {}
        self.alias_sets: list[ir.AliasSet] = []
        self.maps: dict[str, ir.MapDecl] = {}
        self.edge_fams: dict[str, _EdgeFamily] = {}
        self.instances: list[_Instance] = []
        self.finals: list[tuple[ast.FinalOwnerStmt, _Env, tuple[str, ...]]] = []
        self._ranges: dict[int, tuple[int, int]] = {}
        self._plans: dict[int, Any] = {}
        self._edge_idx: dict[int, list[_Fn] | None] = {}
        self._conds: dict[int, _Fn | None] = {}
        self._reported_dup: set[tuple[int, int]] = set()
        self._eid_of: dict[str, int] = {}
        self._load_failed = False  # a file could not be read, decoded, parsed or included

    # ---- diagnostics -------------------------------------------------------------------------

    def error(
        self,
        code: str,
        message: str,
        span: Span | None,
        label: str = "",
        *,
        help: str | None = None,
        related: Sequence[Label] = (),
        notes: Sequence[str] = (),
    ) -> None:
        """Record one diagnostic; a second one with the same code and span is dropped."""
        if span is not None:
            key = (code, span.file, span.start, span.end)
            if key in self._seen:
                return
            self._seen.add(key)
        self.diags.append(
            Diagnostic(
                code=code,
                severity=lookup(code).severity,
                message=message,
                primary=Label(span, label) if span is not None else None,
                related=tuple(related),
                notes=tuple(notes),
                help=help,
            )
        )

    def _eval_error(self, err: _EvalError) -> None:
        self.error(err.code, err.message, err.span, err.label, help=err.help)

    @property
    def failed(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diags)

    # ---- driver ------------------------------------------------------------------------------

    def run(self) -> ir.Policy | None:
        root = self._load(self.path, None)
        if root is None:
            return None
        self.root_dir = _repo_root(self.path)
        self._expand(root, True, [os.path.realpath(self.path)], {os.path.realpath(self.path)})
        if self._load_failed:
            return None
        policy_decl = self._policy_decl()
        self._declare()
        self._resolve_devices()
        self._resolve_links()
        self._resolve_spaces()
        self._resolve_regions()
        self._resolve_alias_sets()
        self._resolve_maps()
        flows = [d for d, _ in self.items if isinstance(d, ast.FlowDecl)]
        if self._check_flow_limits(flows):
            for flow in flows:
                self._unroll(flow.body, {}, (), flow.name.name)
            self._finish_edge_families()
            edges = self._build_edges()
            finals = self._build_finals()
        else:
            edges, finals = [], []
        if self.failed or policy_decl is None:
            return None
        return ir.Policy(
            name=policy_decl.name,
            path=self.path,
            devices=tuple(self.devices),
            links=tuple(self.links),
            spaces=tuple(self.spaces.values()),
            regions=tuple(self.regions),
            alias_sets=tuple(self.alias_sets),
            maps=tuple(self.maps.values()),
            edges=tuple(edges),
            final_owners=tuple(finals),
            suppressions=tuple(self.suppressions),
            span=policy_decl.span,
            rlimit=policy_decl.rlimit,
        )

    # ---- files and includes --------------------------------------------------------------------

    def _load(self, path: str, at: Span | None, written: str | None = None) -> ast.Module | None:
        """Read, decode, register, parse and convert one file.

        ``at`` is the span of the ``include`` that names it (``None`` for the root) and ``written``
        the path as the include spells it.
        """
        what = "include" if at is not None else "policy file"
        try:
            if os.path.isdir(path):
                self.error("FX-NAM-003", f"{what} `{path}` is a directory", at, "not a file",
                           help="name a policy file")
                return None
            if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
                # A FIFO or device would block or never end; policies are regular files.
                self.error("FX-NAM-003", f"{what} `{path}` is not a regular file", at, "not a file",
                           help="name a policy file")
                return None
            size = os.path.getsize(path)
            if size > self.limits.max_file_bytes:
                self.error("FX-LIM-001", f"`{path}` is {size} bytes, over the limit of "
                           f"{self.limits.max_file_bytes} bytes", at, "too large",
                           help="split the policy into smaller included files")
                return None
            with open(path, "rb") as fh:
                data = fh.read(self.limits.max_file_bytes + 1)
        except OSError as err:
            base = os.path.dirname(at.file) if at is not None else os.getcwd()
            shown = written if written is not None else path
            if err.errno == errno.ENOENT:
                hint = (f"the path is relative to `{base or '.'}`" if not os.path.isabs(shown)
                        else "check the path")
                self.error("FX-NAM-003", f"{what} `{shown}` not found", at, "no such file", help=hint,
                           notes=(f"`{path}`: {err.strerror or err}",))
            else:
                self.error("FX-NAM-003", f"cannot read {what} `{shown}`: {err.strerror or err}", at,
                           "unreadable", help="check the file's permissions")
            return None
        if len(data) > self.limits.max_file_bytes:  # grew after the size check
            self.error("FX-LIM-001", f"`{path}` is over the limit of "
                       f"{self.limits.max_file_bytes} bytes", at, "too large")
            return None
        text, diags = decode(data, path)
        self.sources.add(path, text)
        if diags:
            self.diags.extend(diags)
            return None
        self._scan_suppressions(path, text)
        tree, diags = parse(text, path, max_depth=self.limits.max_depth)
        if tree is None:
            self.diags.extend(diags)
            return None
        module, diags = to_ast(tree, path, text)
        if diags:
            self.diags.extend(diags)
            return None
        return module

    def _expand(self, module: ast.Module, is_root: bool, stack: list[str], done: set[str]) -> None:
        """Append ``module``'s declarations to ``self.items``, expanding includes in place."""
        for item in module.items:
            if not isinstance(item, ast.IncludeDecl):
                self.items.append((item, is_root))
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(module.path), item.path))
            real = os.path.realpath(target)
            if os.path.commonpath([real, self.root_dir]) != self.root_dir:
                self.error("FX-NAM-004", f"include `{item.path}` resolves outside the repository",
                           item.span, f"resolves to `{real}`",
                           help=f"includes must stay inside `{self.root_dir}`")
                self._load_failed = True
                continue
            if real in stack:
                cycle = [os.path.relpath(p, self.root_dir) for p in stack[stack.index(real):]]
                chain = " -> ".join(f"`{p}`" for p in cycle + [cycle[0]])
                self.error("FX-NAM-005", f"include cycle: {chain}", item.span, "includes itself",
                           help="move the shared declarations into a file that both include")
                self._load_failed = True
                continue
            if real in done:
                continue  # INVARIANT: a file is parsed and declared once, even if included twice
            done.add(real)
            sub = self._load(target, item.span, item.path)
            if sub is None:
                self._load_failed = True
            else:
                self._expand(sub, False, stack + [real], done)

    def _scan_suppressions(self, path: str, text: str) -> None:
        """Record ``# fx: allow CODE[, CODE] reason "..."`` comments (FX-SUP-001, FX-TYP-003)."""
        sf = self.sources.get(path)
        for start, end, body in scan_comments(text):
            m = _SUPPRESS_RE.match(body)
            if m is None:
                continue
            span = Span(path, start, end)
            line = sf.line_col(start)[0] if sf is not None else 0
            a = _ALLOW_RE.match(m.group("rest"))
            form = '`# fx: allow FX-ORD-002 reason "why this finding is safe"`'
            if a is None or a.group("tail"):
                self.error("FX-SUP-001", "malformed suppression", span, "cannot read this",
                           help=f"write {form}")
                continue
            codes = [c.strip() for c in a.group("codes").split(",")]
            reason = a.group("reason")
            if reason is None or not reason.strip():
                self.error("FX-SUP-001", f"suppression of `{codes[0]}` has no reason", span,
                           "reason missing", help=f"write {form}")
                continue
            reason = re.sub(r"\\(.)", r"\1", reason)
            for code in codes:
                if code not in REGISTRY:
                    self.error("FX-TYP-003", f"unknown diagnostic code `{code}`", span,
                               "not a fxverify code",
                               help=_suggest(code, REGISTRY) or "`fxverify explain` lists the codes")
                    continue
                if REGISTRY[code].family not in _SUPPRESSIBLE:
                    self.error("FX-SUP-001", f"`{code}` cannot be suppressed", span, "not a finding",
                               help="only obligation findings (and unknown verdicts) can be suppressed; "
                                    "fix input errors, and report internal errors")
                    continue
                self.suppressions.append(ir.Suppression(code, reason, path, line, span))

    def _policy_decl(self) -> ast.PolicyDecl | None:
        found: ast.PolicyDecl | None = None
        for decl, is_root in self.items:
            if not isinstance(decl, ast.PolicyDecl):
                continue
            if not is_root:
                self.error("FX-SYN-001", "unexpected `policy` in an included file", decl.span,
                           "only the root file names the policy",
                           help="remove this line; the including policy names itself")
            elif found is not None:
                self.error("FX-NAM-002", "duplicate `policy` declaration", decl.span,
                           "declared again here", related=(Label(found.span, "first declared here"),),
                           help="a policy file names its policy once")
            else:
                found = decl
                if decl.rlimit is not None and decl.rlimit <= 0:
                    self.error("FX-TYP-002", f"solver budget `rlimit {decl.rlimit}` must be positive", decl.span,
                               "not positive", help="write a positive resource limit, for example `rlimit 1_000_000`")
        if found is None:
            span = Span(self.path, 0, 0)
            self.error("FX-NAM-001", f"`{self.path}` declares no policy", span, "no `policy` line",
                       help='start the file with `policy "name"`')
        return found

    # ---- declarations ------------------------------------------------------------------------

    def _register(self, kind: str, ident: ast.Ident, what: str | None = None) -> bool:
        """Declare ``ident`` as a ``kind``; FX-NAM-002 (with the first declaration) if taken."""
        table = self.names[kind]
        first = table.get(ident.name)
        if first is not None:
            self.error("FX-NAM-002", f"duplicate {what or kind} `{ident.name}`", ident.span,
                       "declared again here", related=(Label(first, "first declared here"),),
                       help=f"rename one of the two {kind}s")
            return False
        table[ident.name] = ident.span
        return True

    def _declare(self) -> None:
        """Pass 1: register every declared name so that forward references resolve."""
        self._device_decls: list[ast.DeviceDecl] = []
        self._link_decls: list[tuple[ast.LinkDecl, str]] = []
        self._space_decls: list[ast.SpaceDecl] = []
        self._region_decls: list[ast.RegionDecl] = []
        self._alias_decls: list[ast.AliasSetDecl] = []
        self._map_decls: list[ast.MapDecl] = []
        for decl, _ in self.items:
            if isinstance(decl, ast.FabricDecl):
                for sub in decl.items:
                    if isinstance(sub, ast.DeviceDecl):
                        if self._register("device", sub.name):
                            self._device_decls.append(sub)
                    else:
                        name = sub.name.name if sub.name else f"{sub.a.name}--{sub.b.name}"
                        ident = sub.name or ast.Ident(name, sub.a.span.join(sub.b.span))
                        table = self.names["link"]
                        if name in table:
                            help_ = None if sub.name else "give one link an explicit name: " \
                                f"`link up0 = {sub.a.name} -- {sub.b.name} : ...`"
                            self.error("FX-NAM-002", f"duplicate link `{name}`", ident.span,
                                       "declared again here",
                                       related=(Label(table[name], "first declared here"),),
                                       help=help_ or "rename one of the two links")
                        else:
                            table[name] = ident.span
                            self._link_decls.append((sub, name))
            elif isinstance(decl, ast.SpaceDecl):
                if self._register("space", decl.name):
                    self._space_decls.append(decl)
            elif isinstance(decl, ast.RegionDecl):
                if self._register("region", decl.name):
                    self._region_decls.append(decl)
            elif isinstance(decl, ast.AliasSetDecl):
                if self._register("alias set", decl.name):
                    self._alias_decls.append(decl)
            elif isinstance(decl, ast.MapDecl):
                if self._register("map", decl.name):
                    self._map_decls.append(decl)
            elif isinstance(decl, ast.FlowDecl):
                self._register("flow", decl.name)
                self._declare_edges(decl.body)

    def _declare_edges(self, stmts: Iterable[ast.Stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.EdgeDecl):
                fam = self.edge_fams.get(s.name.name)
                if fam is None:
                    self.edge_fams[s.name.name] = _EdgeFamily(s.name.name, len(s.indices), s.name.span)
                    self.names["edge"][s.name.name] = s.name.span
                elif fam.dims != len(s.indices):
                    # The same family may be declared in several places (if/else branches) only
                    # with the same number of indices; a plain name is declared once.
                    self.error("FX-NAM-002", f"duplicate edge `{s.name.name}`", s.name.span,
                               "declared again here", related=(Label(fam.span, "first declared here"),),
                               help="edge names are global across flows; rename one of them")
            elif isinstance(s, ast.ForStmt):
                self._declare_edges(s.body)
            elif isinstance(s, ast.IfStmt):
                self._declare_edges(s.then)
                self._declare_edges(s.orelse)

    def _known(self, ident: ast.Ident, kind: str, *, extra: Iterable[str] = ()) -> bool:
        """True if ``ident`` names a ``kind``; otherwise FX-TYP-001 or FX-NAM-001 (did you mean)."""
        if ident.name in self.names[kind]:
            return True
        for other in _KINDS:
            if other != kind and ident.name in self.names[other]:
                near = difflib.get_close_matches(ident.name, list(self.names[kind]), n=1, cutoff=0.5)
                hint = (f"did you mean {_article(kind)} `{near[0]}`?" if near
                        else f"name {_article(kind)} here; `{ident.name}` is declared as {_article(other)}")
                self.error("FX-TYP-001", f"`{ident.name}` is {_article(other)}, not {_article(kind)}",
                           ident.span, f"expected {_article(kind)}", help=hint,
                           related=(Label(self.names[other][ident.name],
                                          f"declared as {_article(other)} here"),))
                return False
        candidates = list(self.names[kind]) + list(extra)
        self.error("FX-NAM-001", f"unknown {kind} `{ident.name}`", ident.span, "not declared",
                   help=_suggest(ident.name, candidates) or _declare_hint(kind))
        return False

    def _vocab(self, ident: ast.Ident, what: str, choices: Sequence[str]) -> bool:
        """Check ``ident`` against a fixed vocabulary; FX-TYP-003 with a did-you-mean otherwise."""
        if ident.name in choices:
            return True
        self.error("FX-TYP-003", f"unknown {what} `{ident.name}`", ident.span, f"not a {what}",
                   help=_choices(ident.name, choices))
        return False

    # ---- fabric and layout ---------------------------------------------------------------------

    def _resolve_devices(self) -> None:
        kinds = [k.value for k in ir.DeviceKind]
        for d in self._device_decls:
            seen: dict[str, Span] = {}
            for h in d.hooks:
                if h.name in seen:
                    self.error("FX-NAM-002", f"duplicate hook `{h.name}` on `{d.name.name}`", h.span,
                               "listed again here", related=(Label(seen[h.name], "first listed here"),),
                               help="list each hook once")
                seen.setdefault(h.name, h.span)
            if not self._vocab(d.kind, "device kind", kinds):
                continue
            self.device_index[d.name.name] = len(self.devices)
            self.devices.append(ir.Device(d.name.name, ir.DeviceKind(d.kind.name), tuple(seen), d.span))

    def _resolve_links(self) -> None:
        orders = [o.value for o in ir.LinkOrder]
        for ln, name in self._link_decls:
            ok = self._known(ln.a, "device") & self._known(ln.b, "device")
            if ok and ln.a.name == ln.b.name:
                self.error("FX-TYP-002", f"link `{name}` connects `{ln.a.name}` to itself", ln.span,
                           "a link joins two devices", help="name two different devices")
                ok = False
            ok &= self._vocab(ln.kind, "link kind", LINK_KINDS)
            ok &= self._vocab(ln.order, "link order", orders)
            if not ok:
                continue
            self.links.append(ir.Link(name, ln.a.name, ln.b.name, ln.kind.name,
                                      ir.LinkOrder(ln.order.name), ln.span))
            self.link_by_pair.setdefault(frozenset((ln.a.name, ln.b.name)), name)

    def _resolve_spaces(self) -> None:
        for s in self._space_decls:
            ok = self._known(s.device, "device")
            base = self._const(s.base, "a space base") if s.base is not None else 0
            size = self._const(s.size, "a space size")
            if base is None or size is None or not ok:
                continue
            if size <= 0:
                self.error("FX-TYP-002", f"space `{s.name.name}` has size {size}", _span(s.size),
                           "must be positive", help="give the space a positive size, such as `80 GiB`")
                continue
            if base < 0 or base + size > U64_END:
                self.error("FX-TYP-002", f"space `{s.name.name}` does not fit in 64-bit addresses",
                           s.span, f"covers [{base:#x}, {base + size:#x})",
                           help="addresses run from 0 to 2^64 - 1")
                continue
            self.spaces[s.name.name] = ir.Space(s.name.name, s.device.name, base, size,
                                                s.persistent, s.span)

    def _resolve_regions(self) -> None:
        total = 0
        for r in self._region_decls:
            fam = _RegionFamily(r.name.name, ())
            self.region_fams[r.name.name] = fam
            ok = self._known(r.space, "space") & self._known(r.owner, "device")
            if r.dtype is not None:
                ok &= self._vocab(r.dtype, "dtype", DTYPES)
            dims: list[tuple[int, int]] = []
            vars_: list[str] = []
            for p in r.params:
                if p.var.name in vars_:
                    self.error("FX-NAM-002", f"duplicate index variable `{p.var.name}`", p.var.span,
                               "declared again here", help="give each dimension its own variable")
                    ok = False
                vars_.append(p.var.name)
                rng = self._range(p.lo, p.hi, p.span)
                if rng is None:
                    ok = False
                    continue
                dims.append(rng)
            fam.dims = tuple(dims)
            count = 1
            for lo, hi in dims:
                count *= hi - lo
            total += count
            if ok and total > self.limits.max_regions:
                self.error("FX-LIM-001", f"region instances exceed the limit of "
                           f"{self.limits.max_regions}", r.name.span,
                           f"`{r.name.name}` has {count} instances",
                           help="raise the limit with care or use fewer, larger regions")
                ok = False
            at_fn = self._compile(r.at, tuple(vars_))
            size_fn = self._compile(r.size, tuple(vars_))
            space = self.spaces.get(r.space.name)
            if not ok or at_fn is None or size_fn is None or space is None:
                fam.ok = False
                continue
            self._expand_region(r, fam, tuple(vars_), at_fn, size_fn, space)

    def _expand_region(self, r: ast.RegionDecl, fam: _RegionFamily, vars_: tuple[str, ...],
                       at_fn: _Fn, size_fn: _Fn, space: ir.Space) -> None:
        family = r.name.name
        dtype = r.dtype.name if r.dtype is not None else None
        for idx in itertools.product(*(range(lo, hi) for lo, hi in fam.dims)):
            env = dict(zip(vars_, idx))
            name = _instance_name(family, idx)
            try:
                base, size = at_fn(env), size_fn(env)
            except _EvalError as err:
                self._eval_error(err)
                fam.ok = False
                return
            if size <= 0:
                self.error("FX-TYP-002", f"region `{name}` has size {size}", _span(r.size),
                           "must be positive", help="give the region a positive size")
                fam.ok = False
                return
            if base < space.base or base + size > space.end:
                self.error("FX-TYP-002", f"region `{name}` lies outside space `{space.name}`", r.span,
                           f"covers [{base:#x}, {base + size:#x})",
                           notes=(f"`{space.name}` covers [{space.base:#x}, {space.end:#x})",),
                           help="`at` is an absolute address in the space; check the base and size")
                fam.ok = False
                return
            fam.instances[idx] = name
            self.region_pos[name] = len(self._region_args)
            self._region_args.append((name, family, space.name, base, size, r.owner.name, dtype, r.span))

    def _resolve_alias_sets(self) -> None:
        member_of: dict[str, tuple[str, Span]] = {}
        for a in self._alias_decls:
            names: list[str] = []
            for ref in a.members:
                fn = self._region_set(ref, (), "an alias set")
                if fn is None:
                    continue
                try:
                    found = fn({})
                except _EvalError as err:
                    self._eval_error(err)
                    continue
                for name in found:
                    prev = member_of.get(name)
                    if prev is not None:
                        self.error("FX-NAM-002", f"region `{name}` is already in alias set `{prev[0]}`",
                                   ref.span, "listed again here",
                                   related=(Label(prev[1], "first listed here"),),
                                   help="a region belongs to at most one alias set")
                        continue
                    member_of[name] = (a.name.name, ref.span)
                    names.append(name)
            self.alias_sets.append(ir.AliasSet(a.name.name, tuple(names), a.span))
        # INVARIANT: Region objects are built only now, once their alias set is known.
        alias_of = {name: set_name for name, (set_name, _) in member_of.items()}
        self.regions = [
            ir.Region(name, family, space, base, size, owner, alias_of.get(name), dtype, span)
            for name, family, space, base, size, owner, dtype, span in self._region_args
        ]

    def _resolve_maps(self) -> None:
        classes = [c.value for c in ir.ClassKind]
        for m in self._map_decls:
            ok = self._vocab(m.map_type, "map type", MAP_TYPES)
            ok &= self._vocab(m.key_type, "key type", MAP_SCALARS)
            ok &= self._vocab(m.value_type, "value type", MAP_SCALARS)
            ok &= self._vocab(m.cls, "consistency class", classes)
            if m.merge is not None:
                ok &= self._vocab(m.merge, "merge operator", MERGE_OPS)
            entries = self._const(m.max_entries, "a map size")
            if entries is not None and entries <= 0:
                self.error("FX-TYP-002", f"map `{m.name.name}` has {entries} entries",
                           _span(m.max_entries), "must be positive", help="give the map at least one entry")
                ok = False
            device = None
            if ok and m.cls.name == "local":
                if m.cls_arg is None:
                    self.error("FX-TYP-002", "class `local` needs a device", m.cls.span, "which device?",
                               help=f"write `class local(gpu0)`")
                    ok = False
                else:
                    ok &= self._known(m.cls_arg, "device")
                    device = m.cls_arg.name
            elif ok and m.cls_arg is not None:
                self.error("FX-TYP-002", f"class `{m.cls.name}` takes no device", m.cls_arg.span,
                           "not expected", help="only `local(DEV)` names a device")
                ok = False
            if not ok or entries is None:
                continue
            cls = ir.ConsistencyClass(ir.ClassKind(m.cls.name), device)
            self.maps[m.name.name] = ir.MapDecl(
                m.name.name, m.map_type.name, m.key_type.name, m.value_type.name, entries, cls,
                m.merge.name if m.merge else None, m.span,
            )

    # ---- expressions -------------------------------------------------------------------------

    def _compile(self, e: ast.Expr, scope: tuple[str, ...], *, devices: bool = False,
                 outer: tuple[str, ...] = ()) -> _Fn | None:
        """Compile an integer expression to a closure ``env -> int``; ``None`` after a static error.

        ``scope`` holds the index variables in scope. With ``devices``, a name that is not a
        variable may be a device (its index in ``Policy.devices``). ``outer`` holds variables that
        exist but may not be used (loop variables in constant range bounds).
        """
        ok = [True]
        fn = self._c(e, scope, devices, outer, ok)
        if not ok[0]:
            return None
        if isinstance(fn, int):
            return _const_fn(fn)
        return fn

    def _c(self, e: ast.Expr, scope: tuple[str, ...], devices: bool, outer: tuple[str, ...],
           ok: list[bool]) -> Any:
        """Compile helper: returns an ``int`` for constants (folded) or a closure."""
        if isinstance(e, ast.IntLit):
            return e.value
        if isinstance(e, ast.SizeLit):
            unit = UNITS.get(e.unit.name)
            if unit is None:
                self.error("FX-TYP-003", f"unknown unit `{e.unit.name}`", e.unit.span, "not a unit",
                           help=_choices(e.unit.name, tuple(UNITS)))
                ok[0] = False
                return 0
            return e.count * unit
        if isinstance(e, ast.Var):
            name = e.name
            if name in scope:
                return operator.itemgetter(name)
            if devices and name in self.device_index:
                return self.device_index[name]
            if name in outer:
                self.error("FX-TYP-002", f"index variable `{name}` in a constant expression", e.span,
                           "not constant", help="range bounds are constant expressions")
            elif devices and name in self.names["device"]:
                pass  # INVARIANT: a device whose declaration failed was already reported
            else:
                for other in _KINDS:
                    if name in self.names[other]:
                        self.error("FX-TYP-001", f"`{name}` is {_article(other)}, not a number", e.span,
                                   "expected a number" + (" or a device" if devices else ""),
                                   help="use a number, a size such as `4 KiB`, or a loop variable"
                                   + (", or a device name" if devices else ""),
                                   related=(Label(self.names[other][name], "declared here"),))
                        break
                else:
                    cands = list(scope) + (list(self.device_index) if devices else [])
                    what = "name" if devices else "index variable"
                    self.error("FX-NAM-001", f"unknown {what} `{name}`", e.span, "not declared",
                               help=_suggest(name, cands) or ("no index variable is in scope here"
                                                              if not scope else None))
            ok[0] = False
            return 0
        if isinstance(e, ast.Neg):
            inner = self._c(e.operand, scope, devices, outer, ok)
            if isinstance(inner, int):
                return -inner
            return lambda env: -inner(env)
        assert isinstance(e, ast.BinOp)
        left = self._c(e.left, scope, devices, outer, ok)
        right = self._c(e.right, scope, devices, outer, ok)
        op, span = e.op, e.span
        if isinstance(left, int) and isinstance(right, int):
            if op in "/%" and right == 0:
                self.error("FX-TYP-002", "division by zero", span, "divides by zero")
                ok[0] = False
                return 0
            return _arith(op, left, right, span)
        lf = _const_fn(left) if isinstance(left, int) else left
        rf = _const_fn(right) if isinstance(right, int) else right
        if op == "+":
            return lambda env: lf(env) + rf(env)
        if op == "-":
            return lambda env: lf(env) - rf(env)
        if op == "*":
            return lambda env: lf(env) * rf(env)
        return lambda env: _arith(op, lf(env), rf(env), span)

    def _const(self, e: ast.Expr, what: str, outer: tuple[str, ...] = ()) -> int | None:
        """Evaluate a constant expression (no variables); ``None`` after reporting an error."""
        fn = self._compile(e, (), outer=outer)
        if fn is None:
            return None
        try:
            return fn({})
        except _EvalError as err:
            self._eval_error(err)
            return None

    def _range(self, lo_e: ast.Expr, hi_e: ast.Expr, span: Span,
               outer: tuple[str, ...] = ()) -> tuple[int, int] | None:
        """Evaluate a constant half-open range ``lo..hi`` and check it against ``max_range``."""
        lo = self._const(lo_e, "a range bound", outer)
        hi = self._const(hi_e, "a range bound", outer)
        if lo is None or hi is None:
            return None
        if hi < lo:
            self.error("FX-TYP-002", f"range {lo}..{hi} runs backwards", span, "empty range",
                       help="ranges are half-open `LO..HI` with `LO <= HI`")
            return None
        if hi - lo > self.limits.max_range:
            self.error("FX-LIM-001", f"range of {hi - lo} iterations exceeds the limit of "
                       f"{self.limits.max_range}", span, "too many iterations",
                       help="split the family or raise the limit")
            return None
        return lo, hi

    def _cond(self, c: ast.Cond, scope: tuple[str, ...]) -> _Fn | None:
        """Compile a condition to a closure ``env -> bool``; ``None`` after a static error."""
        if isinstance(c, ast.Compare):
            lf, rf = self._compile(c.left, scope), self._compile(c.right, scope)
            if lf is None or rf is None:
                return None
            cmp = _CMP[c.op]
            return lambda env: cmp(lf(env), rf(env))
        if isinstance(c, ast.Not):
            inner = self._cond(c.operand, scope)
            return None if inner is None else (lambda env: not inner(env))
        left, right = self._cond(c.left, scope), self._cond(c.right, scope)
        if left is None or right is None:
            return None
        if c.op == "and":
            return lambda env: left(env) and right(env)
        return lambda env: left(env) or right(env)

    # ---- references --------------------------------------------------------------------------

    def _split(self, ref: ast.Ref, dims: int, family: str, what: str, *, stars: bool,
               slices: bool) -> tuple[list[ast.Item], ast.Group | None] | None:
        """Split a reference's groups into ``dims`` index items and an optional slice group.

        A bare family name stands for every instance when ``stars`` is allowed.
        """
        groups = list(ref.groups)
        items, gi = _index_items(groups, dims)
        if dims and not items:
            if not stars:
                self.error("FX-TYP-004", f"`{family}` is a family; {what} needs one instance",
                           ref.span, f"`{family}` needs {dims} {_plural(dims, 'index', 'indices')}",
                           help=f"name an instance, such as `{family}{'[0]' * dims}`")
                return None
            items = [ast.StarItem(ref.name.span)] * dims
        if len(items) != dims:
            where = groups[gi - 1].span if gi else ref.span
            self.error("FX-TYP-004", f"`{family}` takes {dims} {_plural(dims, 'index', 'indices')}, "
                       f"found {len(items)}", where, "wrong number of indices",
                       help=f"write `{family}{_index_pattern(dims)}`")
            return None
        for it in items:
            if isinstance(it, ast.StarItem) and not stars:
                self.error("FX-TYP-004", f"`[*]` in {what}", it.span, "names every instance",
                           help=f"{what} needs one instance; `[*]` is for sets of instances")
                return None
        rest = groups[gi:]
        if not rest:
            return items, None
        if dims == 0 and not rest[0].is_slice:
            self.error("FX-TYP-004", f"`{family}` is not a family", rest[0].span, "no indices declared",
                       help=f"a slice is written `{family}[OFF, +LEN]`")
            return None
        if not slices:
            self.error("FX-TYP-002", f"{what} names whole regions, not slices", rest[0].span,
                       "not expected here", help=f"write `{ref.name.name}` without the slice")
            return None
        if len(rest) > 1 or not rest[0].is_slice:
            bad = rest[0] if not rest[0].is_slice else rest[1]
            self.error("FX-TYP-002", "malformed slice", bad.span, "expected one slice group",
                       help="a slice is `[OFF, +LEN]` or `[OFF, elem E, stride S, count N]`")
            return None
        return items, rest[0]

    def _index_fns(self, items: Sequence[ast.Item], scope: tuple[str, ...]) -> list[_Fn | None] | None:
        """Compile index items; ``None`` entries are stars. ``None`` after a static error."""
        out: list[_Fn | None] = []
        for it in items:
            if isinstance(it, ast.StarItem):
                out.append(None)
                continue
            assert isinstance(it, ast.IndexItem)
            fn = self._compile(it.expr, scope)
            if fn is None:
                return None
            out.append(fn)
        return out

    def _region_family(self, ident: ast.Ident) -> _RegionFamily | None:
        if not self._known(ident, "region"):
            return None
        fam = self.region_fams.get(ident.name)
        return fam if fam is not None and fam.ok else None

    def _footprint(self, ref: ast.Ref, scope: tuple[str, ...]) -> Callable[[_Env], ir.Footprint] | None:
        """Compile a footprint reference to a closure ``env -> Footprint`` (absolute addresses)."""
        fam = self._region_family(ref.name)
        if fam is None:
            return None
        split = self._split(ref, len(fam.dims), fam.name, "a footprint", stars=False, slices=True)
        if split is None:
            return None
        items, group = split
        idx_fns = self._index_fns(items, scope)
        if idx_fns is None:
            return None
        shape = self._slice(group, scope) if group is not None else ()
        if shape is None:
            return None
        instance = self._instance_fn(fam, idx_fns, ref.span)
        regions, pos, span = self.regions, self.region_pos, ref.span
        if not shape:
            def whole(env: _Env) -> ir.Footprint:
                r = regions[pos[instance(env)]]
                return ir.Footprint(r.name, r.space, r.base, r.size, r.size, 1, span)
            return whole
        off_fn, elem_fn, stride_fn, count_fn, spans = shape

        def sliced(env: _Env) -> ir.Footprint:
            r = regions[pos[instance(env)]]
            off, elem = off_fn(env), elem_fn(env)
            stride = stride_fn(env) if stride_fn is not None else elem
            count = count_fn(env) if count_fn is not None else 1
            if elem <= 0:
                raise _EvalError("FX-TYP-002", spans[0], f"slice length {elem} is not positive",
                                 "lengths and element sizes must be at least 1 byte", "not positive")
            if stride < 0:
                raise _EvalError("FX-TYP-002", spans[1], f"stride {stride} is negative",
                                 "strides are 0 or more bytes", "negative")
            if count <= 0:
                raise _EvalError("FX-TYP-002", spans[2], f"element count {count} is not positive",
                                 "a strided slice has at least one element", "not positive")
            return ir.Footprint(r.name, r.space, r.base + off, elem, stride, count, span)
        return sliced

    def _slice(self, g: ast.Group, scope: tuple[str, ...]) -> tuple | None:
        """Compile ``[OFF, +LEN]`` or ``[OFF, elem E, stride S, count N]``."""
        form = "a slice is `[OFF, +LEN]` or `[OFF, elem E, stride S, count N]`"
        first, rest = g.items[0], g.items[1:]
        if not isinstance(first, ast.IndexItem):
            self.error("FX-TYP-002", "a slice starts with its offset", first.span, "offset expected",
                       help=form)
            return None
        off_fn = self._compile(first.expr, scope)
        if len(rest) == 1 and isinstance(rest[0], ast.LenItem):
            len_fn = self._compile(rest[0].expr, scope)
            if off_fn is None or len_fn is None:
                return None
            return off_fn, len_fn, None, None, (rest[0].span, rest[0].span, rest[0].span)
        keys: dict[str, ast.KeyItem] = {}
        for it in rest:
            if not isinstance(it, ast.KeyItem) or it.key in keys:
                self.error("FX-TYP-002", "malformed slice", it.span, "not expected here", help=form)
                return None
            keys[it.key] = it
        missing = [k for k in ("elem", "stride", "count") if k not in keys]
        if missing:
            self.error("FX-TYP-002", "strided slice without " + ", ".join(f"`{k}`" for k in missing),
                       g.span, "incomplete slice", help=form)
            return None
        fns = [self._compile(keys[k].expr, scope) for k in ("elem", "stride", "count")]
        if off_fn is None or any(f is None for f in fns):
            return None
        return (off_fn, fns[0], fns[1], fns[2],
                (keys["elem"].span, keys["stride"].span, keys["count"].span))

    def _instance_fn(self, fam: _RegionFamily, idx_fns: list[_Fn | None],
                     span: Span) -> Callable[[_Env], str]:
        """Return ``env -> instance name`` for fully indexed references (FX-TYP-004 if absent)."""
        instances = fam.instances
        if not idx_fns:
            name = instances[()]
            return lambda env: name
        index = _tuple_fn([f for f in idx_fns if f is not None])

        def instance(env: _Env) -> str:
            idx = index(env)
            name = instances.get(idx)
            if name is None:
                raise _EvalError("FX-TYP-004", span,
                                 f"`{_instance_name(fam.name, idx)}` is out of range",
                                 f"`{fam.name}` is declared over " + _dims_text(fam.dims), "out of range")
            return name
        return instance

    def _region_set(self, ref: ast.Ref, scope: tuple[str, ...], what: str) -> _TupleFn | None:
        """Compile a region reference that may name several instances (``pool[*]``, ``pool``)."""
        fam = self._region_family(ref.name)
        if fam is None:
            return None
        split = self._split(ref, len(fam.dims), fam.name, what, stars=True, slices=False)
        if split is None:
            return None
        idx_fns = self._index_fns(split[0], scope)
        if idx_fns is None:
            return None
        if all(f is None for f in idx_fns) and idx_fns:
            every = tuple(fam.instances.values())
            return lambda env: every
        if all(f is not None for f in idx_fns):
            one = self._instance_fn(fam, idx_fns, ref.span)
            return lambda env: (one(env),)
        return self._partial(fam.name, fam.instances, idx_fns, ref.span)

    @staticmethod
    def _partial(family: str, instances: dict[tuple[int, ...], str], idx_fns: list[_Fn | None],
                 span: Span) -> Callable[[_Env], tuple[str, ...]]:
        """``kvb[3][*]``: every instance whose fixed indices match (FX-TYP-004 if none).

        Results are cached per combination of fixed indices, so every edge that names
        ``w[3][*]`` shares one tuple.
        """
        fixed = [i for i, f in enumerate(idx_fns) if f is not None]
        key_of = _tuple_fn([f for f in idx_fns if f is not None])
        groups: dict[tuple[int, ...], tuple[str, ...]] = {}

        def matching(env: _Env) -> tuple[str, ...]:
            if not groups:
                # Built on first use, when every instance is known: one pass over the family.
                lists: dict[tuple[int, ...], list[str]] = {}
                for idx, n in instances.items():
                    lists.setdefault(tuple([idx[i] for i in fixed]), []).append(n)
                groups.update((k, tuple(v)) for k, v in lists.items())
            found = groups.get(key_of(env))
            if found is None:
                raise _EvalError("FX-TYP-004", span, f"no instance of `{family}` matches",
                                 "an index is out of the family's range", "matches no instance")
            return found
        return matching

    def _device(self, ident: ast.Ident) -> str | None:
        return ident.name if self._known(ident, "device") else None

    def _link(self, lr: ast.LinkRef) -> str | None:
        if lr.second is None:
            if lr.first.name in self.names["device"] and lr.first.name not in self.names["link"]:
                self.error("FX-TYP-001", f"`{lr.first.name}` is a device, not a link", lr.first.span,
                           "expected a link", help=f"flush a link by its endpoints: `{lr.first.name} -- DEV`")
                return None
            return lr.first.name if self._known(lr.first, "link") else None
        if not (self._known(lr.first, "device") & self._known(lr.second, "device")):
            return None
        name = self.link_by_pair.get(frozenset((lr.first.name, lr.second.name)))
        if name is None:
            if f"{lr.first.name}--{lr.second.name}" in self.names["link"] or \
                    f"{lr.second.name}--{lr.first.name}" in self.names["link"]:
                return None  # INVARIANT: the link's own declaration error was reported
            self.error("FX-NAM-001", f"no link between `{lr.first.name}` and `{lr.second.name}`",
                       lr.span, "not in the fabric",
                       help=f"declare `link {lr.first.name} -- {lr.second.name} : KIND ORDER` in `fabric`")
        return name

    # ---- flows: limits and unrolling -----------------------------------------------------------

    def _check_flow_limits(self, flows: Sequence[ast.FlowDecl]) -> bool:
        """Check nesting, ranges and the unrolled size before anything is expanded (FX-LIM-001)."""
        ok = True
        total_edges = 0
        total_iters = 0
        for flow in flows:
            res = self._measure(flow.body, 1, ())
            if res is None:
                ok = False
                continue
            edges, iters = res
            total_edges += edges
            total_iters += iters
            if total_edges > self.limits.max_edges:
                self.error("FX-LIM-001", f"flows unroll to {total_edges} edges, over the limit of "
                           f"{self.limits.max_edges}", flow.name.span, "too many edge instances",
                           help="use smaller ranges, or raise the limit with care")
                return False
            if total_iters > self.limits.max_edges:
                self.error("FX-LIM-001", f"flows run {total_iters} loop iterations, over the limit of "
                           f"{self.limits.max_edges}", flow.name.span, "too many loop iterations",
                           help="use smaller ranges, or raise the limit with care")
                return False
        return ok

    def _measure(self, stmts: Sequence[ast.Stmt], depth: int,
                 scope: tuple[str, ...]) -> tuple[int, int] | None:
        """Return an upper bound of (statement instances, loop iterations) for ``stmts``."""
        edges = iters = 0
        ok = True
        for s in stmts:
            if isinstance(s, (ast.EdgeDecl, ast.FinalOwnerStmt)):
                edges += 1
                continue
            if depth > self.limits.max_nesting:
                self.error("FX-LIM-001", f"blocks nested deeper than the limit of "
                           f"{self.limits.max_nesting}", s.span, "nested too deeply",
                           help="flatten the loops (one loop can range over a product)")
                return None
            if isinstance(s, ast.ForStmt):
                if s.var.name in scope:
                    self.error("FX-NAM-002", f"index variable `{s.var.name}` shadows an outer one",
                               s.var.span, "already in scope", help="pick another name")
                    ok = False
                    continue
                rng = self._range(s.lo, s.hi, Span(s.span.file, s.lo.span.start, s.hi.span.end),
                                  outer=scope)
                if rng is None:
                    ok = False
                    continue
                self._ranges[id(s)] = rng
                inner = self._measure(s.body, depth + 1, scope + (s.var.name,))
                if inner is None:
                    return None
                n = rng[1] - rng[0]
                edges += n * inner[0]
                iters += n * (1 + inner[1])
            else:
                assert isinstance(s, ast.IfStmt)
                a = self._measure(s.then, depth + 1, scope)
                b = self._measure(s.orelse, depth + 1, scope)
                if a is None or b is None:
                    return None
                edges += max(a[0], b[0])
                iters += max(a[1], b[1])
        return (edges, iters) if ok else None

    def _unroll(self, stmts: Sequence[ast.Stmt], env: _Env, scope: tuple[str, ...], flow: str) -> None:
        """Enumerate edge instances in declaration order, loops in index order."""
        for s in stmts:
            if isinstance(s, ast.EdgeDecl):
                self._unroll_edge(s, env, scope, flow)
            elif isinstance(s, ast.ForStmt):
                lo, hi = self._ranges[id(s)]
                var = s.var.name
                inner = scope + (var,)
                for v in range(lo, hi):
                    env[var] = v
                    self._unroll(s.body, env, inner, flow)
                env.pop(var, None)
            elif isinstance(s, ast.IfStmt):
                key = id(s)
                if key not in self._conds:
                    self._conds[key] = self._cond(s.cond, scope)
                cond = self._conds[key]
                if cond is None:
                    continue
                try:
                    taken = cond(env)
                except _EvalError as err:
                    self._eval_error(err)
                    continue
                self._unroll(s.then if taken else s.orelse, env, scope, flow)
            else:
                assert isinstance(s, ast.FinalOwnerStmt)
                self.finals.append((s, dict(env), scope))

    def _unroll_edge(self, d: ast.EdgeDecl, env: _Env, scope: tuple[str, ...], flow: str) -> None:
        key = id(d)
        if key not in self._edge_idx:
            fns: list[_Fn] | None = []
            for e in d.indices:
                fn = self._compile(e, scope)
                if fn is None:
                    fns = None
                    break
                fns.append(fn)
            self._edge_idx[key] = fns
        fns = self._edge_idx[key]
        fam = self.edge_fams[d.name.name]
        if fns is None or fam.dims != len(d.indices):
            return
        try:
            idx = tuple([f(env) for f in fns])
        except _EvalError as err:
            self._eval_error(err)
            return
        name = _instance_name(fam.name, idx) if idx else fam.name
        if idx in fam.instances:
            first = self.instances[self._eid_of[name]].decl
            pair = (id(first), id(d))
            if pair not in self._reported_dup:
                self._reported_dup.add(pair)
                self.error("FX-NAM-002", f"duplicate edge `{name}`", d.name.span, "declared again here",
                           related=(Label(first.name.span, "first declared here"),),
                           help="each edge instance is declared once; check the indices")
            return
        fam.instances[idx] = name
        self._eid_of[name] = len(self.instances)
        self.instances.append(_Instance(d, dict(env), scope, flow, name))

    def _finish_edge_families(self) -> None:
        for fam in self.edge_fams.values():
            fam.all_names = tuple(fam.instances.values())

    # ---- edges -------------------------------------------------------------------------------

    def _build_edges(self) -> list[ir.Edge]:
        edges: list[ir.Edge] = []
        for inst in self.instances:
            key = id(inst.decl)
            if key not in self._plans:
                self._plans[key] = self._edge_plan(inst.decl, inst.scope)
            plan = self._plans[key]
            if plan is None:
                continue
            try:
                edges.append(plan(inst.env, len(edges), inst.name, inst.flow))
            except _EvalError as err:
                self._eval_error(err)
        return edges

    def _edge_plan(self, d: ast.EdgeDecl, scope: tuple[str, ...]) -> Callable[..., ir.Edge] | None:
        """Compile one edge declaration once; the result builds an ``ir.Edge`` per instance."""
        ok = self._known(d.device, "device")
        src_fn = dst_fn = None
        reduce_op: str | None = None
        flushes: list[str] = []
        release_fns: list[Callable[[_Env], tuple[ir.Release, ...]]] = []
        a = d.action
        if isinstance(a, ast.WriteAction):
            action, dst_fn = "write", self._footprint(a.dst, scope)
            ok &= dst_fn is not None
        elif isinstance(a, ast.ReadAction):
            action, src_fn = "read", self._footprint(a.src, scope)
            ok &= src_fn is not None
        elif isinstance(a, (ast.MoveAction, ast.ReduceAction)):
            action = "move" if isinstance(a, ast.MoveAction) else "reduce"
            src_fn, dst_fn = self._footprint(a.src, scope), self._footprint(a.dst, scope)
            ok &= src_fn is not None and dst_fn is not None
            if isinstance(a, ast.ReduceAction):
                ok &= self._vocab(a.op, "reduction operator", MERGE_OPS)
                reduce_op = a.op.name
        elif isinstance(a, ast.ReleaseAction):
            action = "release"
            fn = self._release(a.ref, a.kind, scope, a.span)
            ok &= fn is not None
            if fn is not None:
                release_fns.append(fn)
        else:
            assert isinstance(a, ast.FlushAction)
            action = "flush"
            link = self._link(a.link)
            ok &= link is not None
            if link is not None:
                flushes.append(link)

        after_fns: list[Callable[[_Env], tuple[str, ...]]] = []
        single: dict[str, tuple[ast.Clause, Any]] = {}
        xf_fns: list[Callable[[_Env], ir.Transform]] = []
        handoff_fns: list[Callable[[_Env], tuple[ir.Handoff, ...]]] = []
        lease_fns: list[Callable[[_Env], tuple[ir.Lease, ...]]] = []
        mapop_fns: list[Callable[[_Env], ir.MapOp]] = []
        for c in d.clauses:
            if isinstance(c, ast.AfterClause):
                for ref in c.refs:
                    fn = self._after(ref, scope)
                    ok &= fn is not None
                    if fn is not None:
                        after_fns.append(fn)
            elif isinstance(c, (ast.StreamClause, ast.BytesClause, ast.ReuseClause, ast.RwClause,
                                ast.AliasClause, ast.RequireClause)):
                kw = _CLAUSE_WORD[type(c)]
                if kw in single:
                    self.error("FX-TYP-002", f"`{kw}` given twice", c.span, "given again here",
                               related=(Label(single[kw][0].span, "first given here"),),
                               help=f"an edge takes one `{kw}` clause")
                    ok = False
                    continue
                value = self._single_clause(c, scope, dst_fn or src_fn, action)
                ok &= value is not None
                single[kw] = (c, value)
            elif isinstance(c, ast.TransformClause):
                for step in c.steps:
                    fn = self._transform(step, scope)
                    ok &= fn is not None
                    if fn is not None:
                        xf_fns.append(fn)
            elif isinstance(c, ast.HandoffClause):
                fn = self._handoff(c, scope)
                ok &= fn is not None
                if fn is not None:
                    handoff_fns.append(fn)
            elif isinstance(c, ast.LeaseClause):
                fn = self._lease(c, scope)
                ok &= fn is not None
                if fn is not None:
                    lease_fns.append(fn)
            elif isinstance(c, ast.ReleaseClause):
                fn = self._release(c.ref, c.kind, scope, c.span)
                ok &= fn is not None
                if fn is not None:
                    release_fns.append(fn)
            elif isinstance(c, ast.FlushClause):
                link = self._link(c.link)
                ok &= link is not None
                if link is not None:
                    flushes.append(link)
            else:
                assert isinstance(c, ast.MapOpClause)
                fn = self._map_op(c, scope)
                ok &= fn is not None
                if fn is not None:
                    mapop_fns.append(fn)
        if not ok:
            return None

        device, hook, family = d.device.name, d.hook.name, d.name.name
        span, hook_span = d.span, d.hook.span
        flush_t = tuple(dict.fromkeys(flushes))
        stream = single["stream"][1] if "stream" in single else None
        alias = single["alias"][1] if "alias" in single else None
        in_order = "require" in single
        bytes_c = single.get("bytes")
        reuse_fn = single["reuse"][1] if "reuse" in single else None
        rw_fn = single["rw"][1] if "rw" in single else None
        after_of = _concat(after_fns, dedupe=True)
        transforms_of, map_ops_of = _collect(xf_fns), _collect(mapop_fns)
        handoffs_of, leases_of = _concat(handoff_fns), _concat(lease_fns)
        releases_of = _concat(release_fns)

        def build(env: _Env, eid: int, name: str, flow: str) -> ir.Edge:
            src = src_fn(env) if src_fn is not None else None
            dst = dst_fn(env) if dst_fn is not None else None
            nbytes = None
            if bytes_c is not None:
                nbytes = bytes_c[1](env)
                fp = src if src is not None else dst
                if fp is not None and nbytes != fp.nbytes:
                    raise _EvalError("FX-TYP-005", bytes_c[0].span,
                                     f"`bytes` says {nbytes} but the footprint covers {fp.nbytes}",
                                     f"the {'source' if src is not None else 'destination'} "
                                     f"`{fp.region}` covers {fp.nbytes} bytes",
                                     "disagrees with the footprint")
            return ir.Edge(
                eid=eid, name=name, family=family, action=action, device=device, hook=hook,
                src=src, dst=dst, reduce_op=reduce_op, after=after_of(env), stream=stream,
                flushes=flush_t, require_in_order=in_order, alias=alias, bytes=nbytes,
                reuse=reuse_fn(env) if reuse_fn is not None else None,
                rw=rw_fn(env) if rw_fn is not None else None,
                transforms=transforms_of(env), handoffs=handoffs_of(env), leases=leases_of(env),
                releases=releases_of(env), map_ops=map_ops_of(env),
                flow=flow, span=span, hook_span=hook_span,
            )
        return build

    def _single_clause(self, c: ast.Clause, scope: tuple[str, ...], fp_fn: Any, action: str) -> Any:
        """Compile a clause that may appear once: stream, bytes, reuse, rw, alias, require."""
        if isinstance(c, ast.StreamClause):
            return c.name.name
        if isinstance(c, ast.AliasClause):
            return c.name.name if self._known(c.name, "alias set") else None
        if isinstance(c, ast.RequireClause):
            return True
        if isinstance(c, ast.BytesClause):
            if fp_fn is None:
                self.error("FX-TYP-005", f"`bytes` on a `{action}` edge", c.span, "no footprint",
                           help="only edges that read or write bytes declare `bytes`")
                return None
            return self._checked(c.value, scope, 1, "`bytes`")
        if isinstance(c, ast.ReuseClause):
            return self._checked(c.value, scope, 0, "`reuse`")
        assert isinstance(c, ast.RwClause)
        r = self._checked(c.read, scope, 0, "a read share")
        w = self._checked(c.write, scope, 0, "a write share")
        if r is None or w is None:
            return None
        return lambda env: (r(env), w(env))

    def _checked(self, e: ast.Expr, scope: tuple[str, ...], minimum: int, what: str,
                 maximum: int | None = None, *, fold: bool = False) -> Any:
        """Compile ``e`` with a check ``minimum <= value [<= maximum]`` (FX-TYP-002).

        Returns a closure ``env -> int``, or with ``fold`` the ``int`` itself when ``e`` is
        constant; ``None`` after a static error.
        """
        fn = self._compile(e, scope)
        if fn is None:
            return None
        span = _span(e)
        bound = f"at least {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        if fold and not _uses_vars(e):
            v = fn({})
            if v < minimum or (maximum is not None and v > maximum):
                self.error("FX-TYP-002", f"{what} is {v}", span, "invalid value",
                           help=f"{what} must be {bound}")
                return None
            return v

        def checked(env: _Env) -> int:
            v = fn(env)
            if v < minimum or (maximum is not None and v > maximum):
                raise _EvalError("FX-TYP-002", span, f"{what} is {v}", f"{what} must be {bound}",
                                 "invalid value")
            return v
        return checked

    def _after(self, ref: ast.Ref, scope: tuple[str, ...]) -> Callable[[_Env], tuple[str, ...]] | None:
        """Compile an edge reference of an ``after`` clause to ``env -> instance names``."""
        if not self._known(ref.name, "edge"):
            return None
        fam = self.edge_fams[ref.name.name]
        items, gi = _index_items(list(ref.groups), fam.dims)
        items += [it for g in ref.groups[gi:] for it in g.items]
        for g in ref.groups:
            if g.is_slice:
                self.error("FX-TYP-002", "`after` names edges, not slices", g.span, "not expected",
                           help=f"write `{fam.name}[i]`")
                return None
        if len(items) != fam.dims:
            if fam.dims and not items:
                self.error("FX-TYP-004", f"`{fam.name}` is an edge family", ref.span,
                           f"needs {fam.dims} {_plural(fam.dims, 'index', 'indices')}",
                           help=f"write `{fam.name}{'[*]' * fam.dims}` for every instance or "
                                f"`{fam.name}{_index_pattern(fam.dims)}` for one")
            else:
                self.error("FX-TYP-004", f"`{fam.name}` takes {fam.dims} "
                           f"{_plural(fam.dims, 'index', 'indices')}, found {len(items)}", ref.span,
                           "wrong number of indices")
            return None
        idx_fns = self._index_fns(items, scope)
        if idx_fns is None:
            return None
        if not idx_fns:
            if () not in fam.instances:
                self.error("FX-TYP-004", f"edge `{fam.name}` has no instance", ref.span,
                           "never declared", help="its declaration sits in a branch that is never taken")
                return None
            return _const_fn((fam.name,))
        if all(f is None for f in idx_fns):
            return lambda env: fam.all_names or ()
        if any(f is None for f in idx_fns):
            return self._partial(fam.name, fam.instances, idx_fns, ref.span)
        index = _tuple_fn([f for f in idx_fns if f is not None])
        instances, span = fam.instances, ref.span

        def one(env: _Env) -> tuple[str, ...]:
            idx = index(env)
            name = instances.get(idx)
            if name is None:
                first = next(iter(instances.values()), None)
                help_ = (f"`{fam.name}` has {len(instances)} instances, the first is `{first}`"
                         if first else f"`{fam.name}` has no instances")
                raise _EvalError("FX-TYP-004", span,
                                 f"`{_instance_name(fam.name, idx)}` is not an instance of `{fam.name}`",
                                 help_, "no such edge instance")
            return (name,)
        return one

    def _transform(self, step: ast.XfStep, scope: tuple[str, ...]) -> Callable[[_Env], ir.Transform] | None:
        """Compile one transform step and its parameters (specs/language.md, "Transforms")."""
        kinds = [k.value for k in ir.XfKind]
        if not self._vocab(step.kind, "transform", kinds):
            return None
        kind = ir.XfKind(step.kind.name)
        spec = _XF_SPECS[kind]
        types = dict(spec.positional) | dict(spec.keys)
        params: dict[str, Any] = {}
        ok = True
        pos = 0

        def put(key: str, value: Any, span: Span) -> None:
            nonlocal ok
            if key in params:
                self.error("FX-TYP-002", f"`{kind.value}` parameter `{key}` given twice", span,
                           "given again here", help="give each parameter once")
                ok = False
            params[key] = value

        for arg in step.args:
            if isinstance(arg, ast.ArrowArg):
                if not spec.arrow:
                    self.error("FX-TYP-002", f"`{kind.value}` takes no `A -> B` argument", arg.span,
                               "not expected", help=_xf_usage(kind))
                    ok = False
                    continue
                ok &= self._vocab(arg.src, "dtype", DTYPES) & self._vocab(arg.dst, "dtype", DTYPES)
                put("src", arg.src.name, arg.span)
                put("dst", arg.dst.name, arg.span)
            elif isinstance(arg, ast.KeyArg):
                key = arg.key.name
                if key not in types:
                    self.error("FX-TYP-002", f"`{kind.value}` has no parameter `{key}`", arg.key.span,
                               "unknown parameter",
                               help=_suggest(key, types) or _xf_usage(kind))
                    ok = False
                    continue
                put(key, self._xf_value(arg.value, types[key], key, scope), arg.span)
            else:
                if pos >= len(spec.positional):
                    self.error("FX-TYP-002", f"too many arguments to `{kind.value}`", arg.span,
                               "not expected", help=_xf_usage(kind))
                    ok = False
                    continue
                key, typ = spec.positional[pos]
                pos += 1
                put(key, self._xf_value(arg.value, typ, key, scope), arg.span)
        if spec.arrow and "src" not in params:
            self.error("FX-TYP-002", f"`{kind.value}` needs its dtypes", step.span, "`SRC -> DST` missing",
                       help=_xf_usage(kind))
            ok = False
        for key in spec.required:
            if key not in params:
                self.error("FX-TYP-002", f"`{kind.value}` needs `{key}`", step.span, f"`{key}` missing",
                           help=_xf_usage(kind))
                ok = False
        if not ok or any(v is None for v in params.values()):
            return None
        order = (["src", "dst"] if spec.arrow else []) + [k for k, _ in spec.positional] + \
            [k for k, _ in spec.keys]
        fixed = [(k, params[k]) for k in order if k in params]
        span = step.span
        if all(not callable(v) for _, v in fixed):
            xf = ir.Transform(kind, tuple(fixed), span)
            return lambda env: xf
        return lambda env: ir.Transform(
            kind, tuple((k, v(env) if callable(v) else v) for k, v in fixed), span
        )

    def _xf_value(self, e: ast.Expr, typ: str, key: str, scope: tuple[str, ...]) -> Any:
        """A transform parameter: a name from a vocabulary, or a checked integer closure."""
        if typ in _NAME_VOCAB:
            what, choices = _NAME_VOCAB[typ]
            if not isinstance(e, ast.Var):
                self.error("FX-TYP-002", f"`{key}` expects {_article(what)}", _span(e),
                           f"expected {_article(what)}", help=_choices("", choices))
                return None
            return e.name if self._vocab(ast.Ident(e.name, e.span), what, choices) else None
        if typ == "percent":
            return self._checked(e, scope, 0, f"`{key}`", 100, fold=True)
        return self._checked(e, scope, 1 if typ == "posint" else 0, f"`{key}`", fold=True)

    def _handoff(self, c: ast.HandoffClause, scope: tuple[str, ...]) -> _TupleFn | None:
        regions = self._region_set(c.ref, scope, "a handoff")
        src, dst = self._device(c.src), self._device(c.dst)
        if regions is None or src is None or dst is None:
            return None
        span = c.span
        return lambda env: tuple([ir.Handoff(r, src, dst, span) for r in regions(env)])

    def _lease(self, c: ast.LeaseClause, scope: tuple[str, ...]) -> _TupleFn | None:
        regions = self._region_set(c.ref, scope, "a lease")
        device = self._device(c.device)
        if regions is None or device is None:
            return None
        span = c.span
        return lambda env: tuple([ir.Lease(r, device, span) for r in regions(env)])

    def _release(self, ref: ast.Ref, kind: ast.Ident, scope: tuple[str, ...],
                 span: Span) -> Callable[[_Env], tuple[ir.Release, ...]] | None:
        ok = self._vocab(kind, "release kind", [k.value for k in ir.ReleaseKind])
        regions = self._region_set(ref, scope, "a release")
        if not ok or regions is None:
            return None
        rk = ir.ReleaseKind(kind.name)
        return lambda env: tuple([ir.Release(r, rk, span) for r in regions(env)])

    def _map_op(self, c: ast.MapOpClause, scope: tuple[str, ...]) -> Callable[[_Env], ir.MapOp] | None:
        ok = self._known(c.target.map, "map")
        key_fn = self._compile(c.target.key, scope, devices=True)
        val_fn = self._compile(c.value, scope, devices=True) if c.value is not None else None
        m = self.maps.get(c.target.map.name)
        if not ok or m is None or key_fn is None or (c.value is not None and val_fn is None):
            return None
        kind, span, key_span = ir.MapOpKind(c.kind), c.span, _span(c.target.key)
        name, entries = m.name, m.max_entries
        value_type = m.value_type
        # Values must fit the declared value type (`device` values are device indices, u32 wide).
        bits = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "device": 32}.get(value_type, 64)
        val_span = _span(c.value) if c.value is not None else span

        def op(env: _Env) -> ir.MapOp:
            key = key_fn(env)
            if not 0 <= key < entries:
                raise _EvalError("FX-TYP-004", key_span, f"key {key} is out of range for map `{name}`",
                                 f"`{name}` has {entries} entries, keys 0..{entries - 1}", "out of range")
            value = val_fn(env) if val_fn is not None else None
            if value is not None and not 0 <= value < (1 << bits):
                raise _EvalError("FX-TYP-002", val_span, f"value {value} does not fit `{value_type}` of map `{name}`",
                                 f"`{value_type}` holds 0..{(1 << bits) - 1}", "out of range")
            return ir.MapOp(name, kind, key, value, span)
        return op

    def _build_finals(self) -> list[ir.FinalOwner]:
        out: list[ir.FinalOwner] = []
        plans: dict[int, Any] = {}
        for s, env, scope in self.finals:
            key = id(s)
            if key not in plans:
                regions = self._region_set(s.ref, scope, "a final owner")
                device = self._device(s.device)
                plans[key] = None if regions is None or device is None else (regions, device)
            plan = plans[key]
            if plan is None:
                continue
            try:
                out.extend(ir.FinalOwner(r, plan[1], s.span) for r in plan[0](env))
            except _EvalError as err:
                self._eval_error(err)
        return out


# ---- small helpers ------------------------------------------------------------------------------

_CMP: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}

_CLAUSE_WORD: dict[type, str] = {
    ast.StreamClause: "stream", ast.BytesClause: "bytes", ast.ReuseClause: "reuse",
    ast.RwClause: "rw", ast.AliasClause: "alias", ast.RequireClause: "require",
}


def _arith(op: str, a: int, b: int, span: Span) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise _EvalError("FX-TYP-002", span, "division by zero", "the divisor evaluates to 0 here",
                         "divides by zero")
    return a // b if op == "/" else a % b


def _uses_vars(e: ast.Expr) -> bool:
    """True when the expression names a variable (so it is not a constant)."""
    if isinstance(e, ast.Var):
        return True
    if isinstance(e, ast.BinOp):
        return _uses_vars(e.left) or _uses_vars(e.right)
    if isinstance(e, ast.Neg):
        return _uses_vars(e.operand)
    return False


def _span(e: Any) -> Span:
    return e.span


def _article(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _index_items(groups: Sequence[ast.Group], dims: int) -> tuple[list[ast.Item], int]:
    """Collect up to ``dims`` index items from leading non-slice groups.

    Returns the items and the number of groups used. A lone ``[*]`` as the last index group stands
    for every remaining dimension, so ``kvb[*]`` names every instance of a 2-D family and
    ``kvb[3][*]`` every instance whose first index is 3.
    """
    items: list[ast.Item] = []
    gi = 0
    while len(items) < dims and gi < len(groups) and not groups[gi].is_slice:
        g = groups[gi]
        last = gi + 1 == len(groups) or groups[gi + 1].is_slice
        if last and len(g.items) == 1 and isinstance(g.items[0], ast.StarItem):
            items.extend([g.items[0]] * (dims - len(items)))
        else:
            items.extend(g.items)
        gi += 1
    return items, gi


def _index_pattern(dims: int) -> str:
    """``[i]``, ``[i][j]``, ... for a help text."""
    return "".join(f"[{v}]" for v in "ijklmnopqrstuvwxyz"[:dims]) if dims <= 18 else "[i]" * dims


def _dims_text(dims: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(f"{lo}..{hi}" for lo, hi in dims)


def _declare_hint(kind: str) -> str:
    return {
        "device": "declare it in `fabric { device NAME: KIND hooks [...] }`",
        "link": "declare it in `fabric { link NAME = A -- B : KIND ORDER }`",
        "space": "declare it with `space NAME on DEV size SIZE`",
        "region": "declare it with `region NAME in SPACE at ADDR size SIZE owner DEV`",
        "alias set": "declare it with `alias_set NAME = [REGION, ...]`",
        "map": "declare it with `map NAME: hash<u32, u64>[N] class CLASS`",
        "edge": "declare it in a flow with `edge NAME: ACTION by DEV.HOOK`",
    }.get(kind, "declare it first")


def _xf_usage(kind: ir.XfKind) -> str:
    return {
        ir.XfKind.MOVE: "write `move`",
        ir.XfKind.PERSIST: "write `persist`",
        ir.XfKind.QUANTIZE: "write `quantize(bf16 -> fp8, group 128, scale f32)`; "
                            "group and scale are optional",
        ir.XfKind.COMPRESS: "write `compress(ALGO)` with ALGO one of " + ", ".join(COMPRESS_ALGOS),
        ir.XfKind.CHECKSUM: "write `checksum(ALGO)` with ALGO one of " + ", ".join(CHECKSUM_ALGOS),
        ir.XfKind.FILTER: "write `filter(keep N)` with N a percentage 0..100",
        ir.XfKind.REDUCE: "write `reduce(OP)`, such as `reduce(sum)`",
        ir.XfKind.SCATTER: "write `scatter(N)`",
        ir.XfKind.REPLICATE: "write `replicate(N)`",
        ir.XfKind.GATHER: "write `gather(N)` or `gather(N, rank R)`",
    }[kind]


def _repo_root(path: str) -> str:
    """The nearest ancestor directory of ``path`` holding ``.git``, else the file's directory."""
    start = os.path.dirname(os.path.realpath(path))
    cur = start
    while True:
        if os.path.exists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return start
        cur = parent
