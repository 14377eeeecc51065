"""The shape of the package: stages that import one way, solver-neutral ``smt/``, one way to make
a diagnostic, codes only as typed constants, and modules and classes of a readable size.

The import graph is read from the source (every ``import`` statement, those under
``TYPE_CHECKING`` and inside functions included: a cycle of types is still a cycle of ideas).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fxverify.diagnostics import codes

from tests.conftest import ROOT

PKG = ROOT / "fxverify"
MODULES = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
           for p in sorted(PKG.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The fxverify modules that module ``name`` imports: the deepest module each import names, and
    the packages above it (importing ``a.b.c`` runs ``a/b/__init__.py`` too), but not the packages
    ``name`` itself lives in."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            while t and t != "fxverify":
                if t != name and not name.startswith(t + "."):
                    out.add(t)
                t = t.rpartition(".")[0]
    return out


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(GRAPH[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles() -> None:
    assert _cycles() == []


def _reaches(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for t in GRAPH[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("fxverify.smt")))
def test_smt_is_solver_neutral(module: str) -> None:
    """``smt/`` knows terms, queries, backends and SMT-LIB, and nothing of the IR or the stages."""
    allowed = {m for m in MODULES if m.startswith("fxverify.smt")} | {"fxverify.atomic", "fxverify.fileio"}
    assert _reaches(module) <= allowed


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("fxverify.replay.")
                                          and m.split(".")[-1] in ("world", "simulate", "schedule_rules", "static_rules")))
def test_simulator_is_independent_of_the_encoding(module: str) -> None:
    """The simulator replays counterexamples; it must not share the solver encoding it checks."""
    assert not {m for m in _reaches(module) if m.startswith(("fxverify.smt", "fxverify.obligations"))}


def _third_party(path: Path) -> set[str]:
    """Top-level names of the non-fxverify, non-standard-library modules a file imports."""
    import sys

    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
        out |= {n.split(".")[0] for n in names if n.split(".")[0] not in sys.stdlib_module_names | {"fxverify"}}
    return out


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("fxverify.certify")) + ["fxverify.certificate"])
def test_certificate_checker_shares_no_code_with_the_prover(module: str) -> None:
    """The certificate checker re-derives every fact from the IR: it reaches only the IR (and what
    the IR itself imports), the certificate data model and the solver-neutral ``smt/``; never the
    obligations, the graph, the simulator or the pipeline, nor networkx."""
    allowed = ({"fxverify.ir", "fxverify.vocab", "fxverify.source", "fxverify.certificate", "fxverify.diagnostics",
                "fxverify.diagnostics.codes"} | _reaches("fxverify.ir")
               | {m for m in MODULES if m.startswith(("fxverify.smt", "fxverify.certify"))} | {"fxverify.atomic", "fxverify.fileio"})
    assert _reaches(module) - {module} <= allowed
    assert not {m for m in _reaches(module) if m.startswith(("fxverify.obligations", "fxverify.graph", "fxverify.replay",
                                                             "fxverify.pipeline", "fxverify.result"))}
    assert _third_party(MODULES[module]) == set()
    if module == "fxverify.certificate":
        assert GRAPH[module] == set()  # the data contract imports nothing of fxverify


# Foundation modules that every stage may use; a stage may also use the stages before it.
_STAGES = ["source", "vocab", "xforms", "footprints", "errors", "fileio", "atomic", "origin", "diagnostics", "ast_exprs", "ast", "syntax",
           "resolve", "shapes", "ir", "hb", "certificate", "edits", "graph", "smt", "obligations", "replay", "result", "requery", "certify", "observe", "rechecks", "hints", "grouping", "certified",
           "pipeline", "views", "gate", "isolate", "lower", "gen", "render", "lsp", "serve", "cli", "launch"]
_FOUNDATION = {"source", "vocab", "xforms", "footprints", "errors", "atomic", "fileio", "diagnostics", "ast_exprs", "ast", "shapes", "ir", "hb", "certificate"}


def _stage(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "fxverify" and _stage(m) not in ("__main__",)))
def test_data_flows_one_way(module: str) -> None:
    """A module imports only foundations and earlier stages (``lower`` and ``gen`` sit beside the
    gate: they may not import each other or the gate)."""
    mine = _stage(module)
    order = {s: i for i, s in enumerate(_STAGES)}
    bad = []
    for t in GRAPH[module]:
        theirs = _stage(t)
        if theirs == mine or theirs in _FOUNDATION and mine not in _FOUNDATION:
            continue
        side = {"gate", "lower", "gen"}
        if mine in side and theirs in side:
            bad.append(t)
        elif order[theirs] > order[mine]:
            bad.append(t)
    assert bad == []


_SIZE_EXEMPT: set[str] = set()


@pytest.mark.parametrize("path", sorted(MODULES.values()), ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_classes_stay_readable(path: Path) -> None:
    """No module over about 600 lines and no class over about 300 (one idea each)."""
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= 620, f"{path.name}: {text.count(chr(10))} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            n = node.end_lineno - node.lineno + 1
            assert n <= 310, f"class {node.name}: {n} lines"


def test_z3_is_imported_only_by_the_backend() -> None:
    z3_users = {m for m, p in MODULES.items()
                if re.search(r"^\s*(import z3|from z3[ .])", p.read_text(), re.MULTILINE)}
    assert z3_users == {"fxverify.smt.z3_backend"}


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


@pytest.mark.parametrize("path", sorted(p for m, p in MODULES.items() if m != "fxverify.diagnostics.codes"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_codes_are_typed_constants(path: Path) -> None:
    """A code is never spelt as a string outside the registry: ``codes.ORD_002``, not
    ``"FX-ORD-002"`` (a misspelt constant fails where it is used; a misspelt string never does)."""
    spelt = [(line, s) for line, s in _string_constants(path) if re.fullmatch(r"FX-[A-Z]+-\d{3}", s)]
    assert spelt == []
    # Inside longer text (messages, help, f-strings, scaffolded files) a code may be spelt out, but
    # it must be one the registry has: a renamed or misspelt code in prose fails here.
    unknown = [(line, c) for line, s in _string_constants(path) for c in re.findall(r"FX-[A-Z]+-\d{3}", s)
               if c not in codes.REGISTRY]
    assert unknown == []


@pytest.mark.parametrize("path", sorted(MODULES.values()), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_constant_used_exists(path: Path) -> None:
    """Every ``codes.X`` a module names is registered (what a type checker would find)."""
    used = set(re.findall(r"\bcodes\.([A-Z]+_\d{3})\b", path.read_text(encoding="utf-8")))
    assert {u for u in used if not hasattr(codes, u)} == set()


def test_one_constructor_of_diagnostics() -> None:
    """Only the model (its ``diagnostic()``) and the deserialiser of stored results build a
    ``Diagnostic`` directly; everything else calls ``diagnostic()``, which takes the severity from
    the code's registry entry."""
    makers = {m for m, p in MODULES.items() if re.search(r"(?<![\w.])Diagnostic\(", p.read_text())}
    assert makers == {"fxverify.diagnostics.model", "fxverify.gate.serialize"}
