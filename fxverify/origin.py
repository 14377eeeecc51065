"""Where this copy of fxverify came from: its git repository and commit, when they can be known.

fxverify is not published on a package index, so the only honest way to name it in a scaffolded
repository (``fxverify init``), and the only stable place for the rule documentation that SARIF
links to (``helpUri``), is its git repository at the exact commit that is running. ``origin()``
finds them, first match wins:

1. pip's record of a VCS install (``direct_url.json`` of the installed distribution, PEP 610):
   ``pip install git+URL@REF`` stores the URL and the resolved commit id;
2. a git work tree holding the package (a checkout, or an editable install of one): its ``HEAD``
   and the URL of its ``origin`` remote (``git remote get-url origin``).

Either part may be unknown (a checkout without a remote has a commit but no URL; an install from a
wheel or a folder has neither). Nothing here touches the network. Emits no diagnostics.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

#: Seconds a ``git`` query may take before the answer counts as unknown.
GIT_TIMEOUT_S = 10

_SCP = re.compile(r"^(?P<user>[\w.-]+)@(?P<host>[\w.-]+):(?P<path>[^/].*)$")  # git@host:owner/repo.git
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Origin:
    """The repository ``url`` (as git takes it: ``https://host/owner/repo.git``,
    ``ssh://git@host/owner/repo.git`` or ``git@host:owner/repo.git``) and the ``commit`` (40 hex
    digits) of this fxverify; ``None`` for what is unknown."""

    url: str | None = None
    commit: str | None = None

    @property
    def known(self) -> bool:
        """True when both the repository and the commit are known."""
        return self.url is not None and self.commit is not None

    def pip_url(self) -> str | None:
        """The pip requirement that installs exactly this fxverify (PEP 508 direct reference:
        ``fxverify @ git+https://host/owner/repo.git@COMMIT``), or ``None`` when not ``known``."""
        if not self.known:
            return None
        url = self.url
        m = _SCP.match(url)
        if m:  # pip needs a URL: scp-like syntax becomes ssh://
            url = f"ssh://{m['user']}@{m['host']}/{m['path']}"
        return f"fxverify @ git+{url}@{self.commit}"

    def web(self) -> str | None:
        """The repository's web address (``https://host/owner/repo``), or ``None`` when the URL is
        unknown or is a local path."""
        if self.url is None:
            return None
        url = self.url
        m = _SCP.match(url)
        if m:
            url = f"https://{m['host']}/{m['path']}"
        url = re.sub(r"^(ssh|git)://([^@/]+@)?", "https://", url)
        url = re.sub(r"^https?://[^@/]+@", "https://", url)  # credentials never leave the machine
        if not url.startswith(("https://", "http://")):
            return None
        return url.removesuffix("/").removesuffix(".git")

    def blob(self, path: str, fragment: str = "") -> str | None:
        """The web address of ``path`` (relative to the repository root) at this commit, such as
        ``https://github.com/o/r/blob/COMMIT/specs/codes.md#fx-ord-002`` (the ``/blob/`` form that
        GitHub, GitLab and Gitea serve), or ``None`` when the web address or commit is unknown."""
        web = self.web()
        if web is None or self.commit is None:
            return None
        return f"{web}/blob/{self.commit}/{path}" + (f"#{fragment}" if fragment else "")


@functools.cache
def origin() -> Origin:
    """This fxverify's ``Origin`` (see the module docstring); computed once per process."""
    found = _from_direct_url()
    if found is not None:
        return found
    return _from_work_tree(Path(__file__).resolve().parents[1])


def _from_direct_url() -> Origin | None:
    """PEP 610: pip writes ``direct_url.json`` for an install from a URL; a VCS one has
    ``{"url": ..., "vcs_info": {"vcs": "git", "commit_id": ...}}``."""
    try:
        text = metadata.distribution("fxverify").read_text("direct_url.json")
    except (metadata.PackageNotFoundError, OSError):
        return None
    if not text:
        return None
    try:
        doc = json.loads(text)
        vcs = doc.get("vcs_info") or {}
        if vcs.get("vcs") == "git" and _COMMIT.match(str(vcs.get("commit_id", ""))):
            return Origin(str(doc["url"]), str(vcs["commit_id"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def _from_work_tree(root: Path) -> Origin:
    """The commit and ``origin`` remote of the git work tree at ``root``, when it is one and
    fxverify's package folder is part of it (not a site-packages folder inside some other tree)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root:
        return Origin()
    commit = _git(root, "rev-parse", "HEAD")
    return Origin(_git(root, "remote", "get-url", "origin"),
                  commit if commit is not None and _COMMIT.match(commit) else None)
