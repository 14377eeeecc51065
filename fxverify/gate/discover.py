"""Discovery: the policy files that ``fxverify check PATH...`` checks.

Takes files and folders as the user named them; returns policy files, in a deterministic order,
each once. A folder is searched recursively for ``*.fx`` regular files in sorted order. A file
found in a folder that another file there includes, and that declares no policy itself, is a
shared fragment (a fabric file, say): it is checked as part of its includers, not on its own.
Which files declare a policy and what they include is read from the grammar's own tokens
(``syntax.parse.header_decls``). Files named explicitly are always checked. Emits no diagnostics.
"""

from __future__ import annotations

import os
from pathlib import Path

from fxverify.syntax.parse import header_decls

#: Bytes of each file a folder scan reads to find its `policy` and `include` lines.
SCAN_BYTES = 1 << 20


def collect_policies(paths: list[str]) -> list[str]:
    """Expand files and folders into the policy files to check (see the module docstring). A file
    reached twice (``a.fx``, ``./a.fx``, ``d/../a.fx``, or through a folder) is checked once, under
    the first name it was reached by."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            out += _scan(p)
        else:
            out.append(p)
    seen: set[str] = set()
    once = []
    for f in out:
        real = os.path.realpath(f)
        if real not in seen:
            seen.add(real)
            once.append(f)
    return once


def _scan(folder: str) -> list[str]:
    found = sorted(str(x) for x in Path(folder).rglob("*.fx") if x.is_file())
    included: set[str] = set()
    declares: dict[str, bool] = {}
    for f in found:
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read(SCAN_BYTES)
        except OSError:
            continue
        declares[f], includes = header_decls(text)
        for inc in includes:
            included.add(os.path.normpath(os.path.join(os.path.dirname(f), inc)))
    return [f for f in found if not (os.path.normpath(f) in included and not declares.get(f, False))]
