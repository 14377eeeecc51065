"""Files: reading the root policy and its includes, confined to the repository.

``load_file`` reads one file (a regular file of at most ``Limits.max_file_bytes``, from
``State.files``: this machine's disk or a snapshot of the gate's, ``resolve.snapshot``; or the
unsaved text an editor holds for it: ``State.texts``), registers its
text in the ``SourceMap``, reads its suppression comments and parses it to an AST.
``expand`` appends a module's declarations to the state, expanding each ``include`` in place:
includes resolve relative to the including file and must stay inside the repository that holds
the root policy (the nearest ancestor folder with ``.git``). Emits FX-NAM-003 (a file that cannot
be read: missing, a folder, a FIFO, unreadable, a symbolic link loop; the hint fits the cause),
FX-NAM-004 (include outside the repository), FX-NAM-005 (include cycle), FX-LIM-001 (file too large), the syntax codes of ``fxverify.syntax``
and the suppression codes of ``fxverify.diagnostics.suppress``.
"""

from __future__ import annotations

import errno
import os

from fxverify import ast
from fxverify.diagnostics import codes
from fxverify.diagnostics.suppress import read_suppressions
from fxverify.fileio import NotRegularFile, TooLarge, read_hint
from fxverify.resolve.state import State
from fxverify.source import Span
from fxverify.syntax.parse import decode_text, parse, scan_comments
from fxverify.syntax.to_ast import to_ast


def load_file(st: State, path: str, at: Span | None, written: str | None = None) -> ast.Module | None:
    """Read, decode, register, parse and convert one file; ``None`` after reporting why not.

    ``at`` is the span of the ``include`` that names it (``None`` for the root) and ``written``
    the path as the include spells it.
    """
    what = "include" if at is not None else "policy file"
    limit = st.limits.max_file_bytes
    try:
        data = _read(st, path, limit)
    except NotRegularFile as err:
        kind = "a directory" if err.errno == errno.EISDIR else "not a regular file"
        st.error(codes.NAM_003, f"{what} `{path}` is {kind}", at, "not a file", help="name a policy file")
        return None
    except TooLarge as err:
        st.error(codes.LIM_001, f"`{path}` is {err.size} bytes, over the limit of {limit} bytes", at, "too large",
                 help="split the policy into smaller included files")
        return None
    except OSError as err:
        base = os.path.dirname(at.file) if at is not None else os.getcwd()
        shown = written if written is not None else path
        if err.errno == errno.ENOENT:
            hint = f"the path is relative to `{base or '.'}`" if not os.path.isabs(shown) else "check the path"
            st.error(codes.NAM_003, f"{what} `{shown}` not found", at, "no such file", help=hint,
                     notes=(f"`{path}`: {err.strerror or err}",))
        else:
            st.error(codes.NAM_003, f"cannot read {what} `{shown}`: {err.strerror or err}", at, "unreadable",
                     help=read_hint(err, shown) or "check that the file exists and is readable")
        return None
    text, diags = decode_text(data, path)
    sf = st.sources.add(path, text)
    if diags:
        st.diags.extend(diags)
        return None
    sups, diags = read_suppressions(sf, scan_comments(text))
    st.suppressions += sups
    for d in diags:
        st.add(d)
    tree, diags = parse(text, path, max_depth=st.limits.max_depth)
    if tree is None:
        st.diags.extend(diags)
        return None
    module, diags = to_ast(tree, path, text)
    if diags:
        st.diags.extend(diags)
        return None
    return module


def _read(st: State, path: str, limit: int) -> bytes:
    """The bytes of ``path``: its unsaved text when ``st.texts`` holds one (under the same size
    limit as a file), else the file's (``st.files``). Raises as ``fileio.read_regular``."""
    text = st.texts.get(os.path.realpath(path)) if st.texts else None
    if text is None:
        return st.files.read(path, limit)
    # an editor's buffer is text already; lone surrogates cannot come from a file, so replace them
    data = text.encode("utf-8", errors="replace")
    if len(data) > limit:
        raise TooLarge(path, len(data), limit)
    return data


def expand(st: State, module: ast.Module, is_root: bool, stack: list[str], done: set[str]) -> None:
    """Append ``module``'s declarations to ``st.items``, expanding includes in place. ``stack``
    holds the real paths of the files being expanded (a cycle), ``done`` every file read so far."""
    for item in module.items:
        if not isinstance(item, ast.IncludeDecl):
            st.items.append((item, is_root))
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(module.path), item.path))
        real = st.files.realpath(target)
        if os.path.commonpath([real, st.root_dir]) != st.root_dir:
            st.error(codes.NAM_004, f"include `{item.path}` resolves outside the repository", item.span,
                     f"resolves to `{real}`", help=f"includes must stay inside `{st.root_dir}`")
            st.load_failed = True
            continue
        if real in stack:
            cycle = [os.path.relpath(p, st.root_dir) for p in stack[stack.index(real):]]
            chain = " -> ".join(f"`{p}`" for p in cycle + [cycle[0]])
            st.error(codes.NAM_005, f"include cycle: {chain}", item.span, "includes itself",
                     help="move the shared declarations into a file that both include")
            st.load_failed = True
            continue
        if real in done:
            continue  # INVARIANT: a file is parsed and declared once, even if included twice
        done.add(real)
        sub = load_file(st, target, item.span, item.path)
        if sub is None:
            st.load_failed = True
        else:
            expand(st, sub, False, stack + [real], done)
