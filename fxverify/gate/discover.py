"""Discovery: the policy files that ``fxverify check PATH...`` checks.

Takes files and folders as the user named them, and ``--exclude`` globs; returns policy files, in a
deterministic order, each once. A folder is searched recursively for ``*.fx`` regular files in
sorted order, and for ``*.fx`` symbolic links that lead nowhere (a missing target, a loop): such a
link is a policy that went away, so it is checked, and reported FX-NAM-003 as when named. Inside a
git work tree only the files git would track are searched (tracked ones and untracked ones that no
``.gitignore`` rule ignores: ``git ls-files --cached --others --exclude-standard``), outside one (or
without git) every file is. A file found in a folder that another file there includes, and that
declares no policy itself, is a shared fragment (a fabric file, say): it is checked as part of its
includers, not on its own. A fragment named explicitly (pre-commit passes the changed files) stands
for the policies under the current folder that include it, directly or through other fragments; with
no includer it is checked as named (and reported as declaring no policy). Which files declare a
policy and what they include is read from the grammar's own tokens (``syntax.parse.header_decls``).
Other files named explicitly are always checked. A file matching an ``--exclude`` glob is never
checked. Emits no diagnostics.
"""

from __future__ import annotations

import os
import subprocess
from fnmatch import fnmatchcase
from pathlib import Path

from fxverify.syntax.parse import header_decls

#: Bytes of each file a folder scan reads to find its `policy` and `include` lines.
SCAN_BYTES = 1 << 20

#: Seconds ``git ls-files`` may take before the scan walks the folder instead.
GIT_TIMEOUT_S = 60


def collect_policies(paths: list[str], exclude: tuple[str, ...] = ()) -> list[str]:
    """Expand files and folders into the policy files to check (see the module docstring), less
    those an ``exclude`` glob matches (``excluded``). A file reached twice (``a.fx``, ``./a.fx``,
    ``d/../a.fx``, or through a folder) is checked once, under the first name it was reached by.
    Never raises for unreadable files (they are checked, and reported, as named)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            out += [f for f in _scan(p) if not excluded(os.path.relpath(f, p), exclude)]
        elif _is_fragment(p):
            out += includers(p) or [p]
        else:
            out.append(p)
    seen: set[str] = set()
    once = []
    for f in out:
        real = os.path.realpath(f)
        if real not in seen and not excluded(f, exclude):
            seen.add(real)
            once.append(f)
    return once


def excluded(path: str, globs: tuple[str, ...]) -> bool:
    """True when a glob (``fnmatch`` syntax, ``*`` also crossing ``/``) matches ``path``, one of its
    trailing parts (``*.bad.fx``, ``gen/*.fx``) or one of the folders on it (``vendor``,
    ``corpus/real``): any run of its ``/``-separated parts."""
    if not globs:
        return False
    parts = Path(os.path.normpath(path)).parts
    names = {"/".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}
    return any(fnmatchcase(n, g.rstrip("/")) for g in globs for n in names)


def policy_files(folder: str) -> list[str]:
    """The ``*.fx`` regular files and dangling ``*.fx`` links (``_is_policy``) under ``folder``,
    sorted, as ``folder/relative/path``: in a git work tree those git does not ignore, else all of
    them."""
    listed = _git_files(folder)
    if listed is None:
        return sorted(str(x) for x in Path(folder).rglob("*.fx") if _is_policy(x))
    return sorted({str(Path(folder) / rel) for rel in listed if rel.endswith(".fx") and _is_policy(Path(folder) / rel)})


def _is_policy(path: Path) -> bool:
    """True when ``path`` is a regular file (through links), or a link that leads nowhere (its
    target missing, or a loop): skipping that would drop a policy from the gate without a word,
    while checking it reports FX-NAM-003. False for folders, devices and FIFOs."""
    return path.is_file() or (path.is_symlink() and not path.exists())


def _git_files(folder: str) -> list[str] | None:
    """Paths relative to ``folder`` that git tracks or would track there; ``None`` outside a work
    tree, without git, or when git fails."""
    try:
        done = subprocess.run(["git", "-C", folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [p for p in done.stdout.decode("utf-8", errors="surrogateescape").split("\0") if p]


def _headers(files: list[str]) -> dict[str, tuple[bool, list[str]]]:
    """Per readable file: whether it declares a policy, and the normalised paths it includes."""
    out: dict[str, tuple[bool, list[str]]] = {}
    for f in files:
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read(SCAN_BYTES)
        except OSError:
            continue
        declares, includes = header_decls(text)
        out[f] = declares, [os.path.normpath(os.path.join(os.path.dirname(f), inc)) for inc in includes]
    return out


def _scan(folder: str) -> list[str]:
    found = policy_files(folder)
    heads = _headers(found)
    included = {inc for _, incs in heads.values() for inc in incs}
    return [f for f in found if not (os.path.normpath(f) in included and not heads.get(f, (False, []))[0])]


def _is_fragment(path: str) -> bool:
    """True when ``path`` is a readable file that declares no policy."""
    heads = _headers([path]) if os.path.isfile(path) else {}
    return path in heads and not heads[path][0]


def includers(fragment: str, root: str = ".") -> list[str]:
    """The policy files under ``root`` (found as ``policy_files`` finds them) that include
    ``fragment``, directly or through other fragments, sorted; empty when none does."""
    heads = {os.path.normpath(f): v for f, v in _headers(policy_files(root)).items()}
    target = os.path.realpath(fragment)
    reaches: dict[str, bool] = {}

    def reach(f: str, path: frozenset[str]) -> bool:
        real = os.path.realpath(f)
        if real == target:
            return True
        if real in path or f not in heads:  # an include cycle is FX-NAM's to report, not ours
            return False
        if f not in reaches:
            reaches[f] = any(reach(inc, path | {real}) for inc in heads[f][1])
        return reaches[f]

    return [f for f, (declares, _) in heads.items() if declares and reach(f, frozenset())]


def fx_files(paths: list[str], fragments: bool) -> list[str]:
    """The ``.fx`` files of ``paths``, each once: with ``fragments`` (``fxverify fmt``) the named
    files and every ``.fx`` file found in the folders, shared fragments included; without
    (``fxverify parse``) the policies ``collect_policies`` finds."""
    if not fragments:
        return collect_policies(paths)
    out: list[str] = []
    for p in paths:
        out += policy_files(p) if os.path.isdir(p) else [p]
    return list(dict.fromkeys(out))
