"""What the teaching page asks of ``fxverify serve``, and the answers, as JSON-ready values.

Takes parsed requests (a lesson path, a policy text, a code); produces dicts for the page: the
lessons in order (``serve.lessons``), one lesson with its policy text, the result of checking a
text with the real checker (``pipeline.check`` in a child process under a wall-time and memory
cap: ``isolate``), the ``fxverify explain`` text of a code, and the list of every code. Paths
are confined to the repository: a path is relative, names a ``.fx`` regular file, and resolves,
symlinks included, inside the repository root; anything else is refused with ``ApiError``
(400, 403, 404), as is a check while ``max_checks`` others run (503). A finding is answered with
its JSON (``render.json``: code, spans, trace), the terminal rendering of it (``render.text``)
and the swimlane of its trace; the answer also holds the movement and happens-before graphs of
the policy with the first finding highlighted (``serve.pictures``). Emits no diagnostics of its
own (a picture that fails is a note naming its FX-INT-001, and the verdict is still answered).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxverify.diagnostics import codes
from fxverify.diagnostics.explain import explain, load_examples
from fxverify.diagnostics.model import Diagnostic, crash, nearest
from fxverify.isolate import Caps, check_isolated
from fxverify.pipeline import CheckOptions
from fxverify.render.json import diagnostic_to_json
from fxverify.render.text import render_diagnostic, to_plain
from fxverify.result import CheckResult
from fxverify.serve import pictures
from fxverify.serve.lessons import Lesson, lessons

#: The file a text from the free editor is checked as (never written): includes resolve from the
#: repository root.
PLAYGROUND = "playground.fx"


class ApiError(Exception):
    """A request the page's API refuses: HTTP ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class ServeConfig:
    """How ``fxverify serve`` runs: the repository ``root`` (real path) whose corpus it teaches
    and outside which it reads nothing; the ``caps`` of one check (wall time in s, memory in
    bytes) and its solver ``options``; ``max_body``, the largest request body in bytes; and
    ``max_checks``, the checks that may run at once (the machine has few cores)."""

    root: Path
    caps: Caps = Caps(seconds=20.0, memory_bytes=2 << 30)
    options: CheckOptions = field(default_factory=CheckOptions)
    max_body: int = 256 << 10
    max_checks: int = 2


class Api:
    """The page's API over one repository (see the module docstring)."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.root = Path(os.path.realpath(config.root))
        self._lessons: list[Lesson] = lessons(self.root)
        self._slots = threading.BoundedSemaphore(config.max_checks)

    def confine(self, rel: object) -> Path:
        """The real path of ``rel``, a repository-relative ``.fx`` file; raises ``ApiError``: 400
        for a path that is not such a string, 403 for one outside the repository, 404 for one
        that names no regular file."""
        if not isinstance(rel, str) or not rel or "\0" in rel or len(rel) > 1024:
            raise ApiError(400, "`path` must be a repository-relative path of a `.fx` file")
        if os.path.isabs(rel) or not rel.endswith(".fx"):
            raise ApiError(400, f"`{rel}` is not a repository-relative path of a `.fx` file")
        real = Path(os.path.realpath(self.root / rel))
        if os.path.commonpath([real, self.root]) != str(self.root):
            raise ApiError(403, f"`{rel}` resolves outside the repository; only its files are served")
        if not real.is_file():
            raise ApiError(404, f"`{rel}` is not a file of the repository")
        return real

    def lessons(self) -> dict[str, Any]:
        """Every lesson, in teaching order, and the repository's name."""
        return {"repository": self.root.name, "lessons": [x.as_json() for x in self._lessons]}

    def lesson(self, rel: object) -> dict[str, Any]:
        """One policy file: its lesson (when it is one) and its text."""
        real = self.confine(rel)
        size = real.stat().st_size
        if size > self.config.max_body:
            raise ApiError(413, f"`{rel}` is {size} bytes, over the page's limit of {self.config.max_body} bytes")
        known = next((x for x in self._lessons if (self.root / x.path) == real), None)
        out = known.as_json() if known else {"path": str(rel), "title": str(rel), "text": "", "expects": [], "twin": None}
        out["source"] = real.read_text(encoding="utf-8", errors="replace")
        return out

    def check(self, body: object) -> dict[str, Any]:
        """Check ``body["source"]`` (the editor's text) as the file ``body["path"]`` (a lesson's
        path; without one, ``PLAYGROUND`` at the repository root) with the real checker."""
        if not isinstance(body, dict) or not isinstance(body.get("source"), str):
            raise ApiError(400, 'the body must be a JSON object with a string `source` (and an optional `path`)')
        path = self.confine(body["path"]) if body.get("path") is not None else self.root / PLAYGROUND
        texts = {os.path.realpath(path): body["source"]}
        if not self._slots.acquire(timeout=self.config.caps.seconds):
            raise ApiError(503, "every check slot is busy; try again in a moment")
        try:
            result = check_isolated(str(path), self.config.options, texts, self.config.caps)
            return self.answer(result, path, texts)
        finally:
            self._slots.release()

    def answer(self, r: CheckResult, path: Path, texts: dict[str, str]) -> dict[str, Any]:
        """``r`` (the result of checking ``texts``) as the page shows it, with the graphs of the
        policy; file names relative to the repository."""
        counts = {"proved": 0, "refuted": 0, "unknown": 0}
        for c in r.counts().values():
            for k in counts:
                counts[k] += c.get(k, 0)
        try:
            svgs, note = pictures.graphs(str(path), texts, r, self.config.options.limits)
        except Exception as exc:  # noqa: BLE001 - a picture's bug must not hide the verdict
            svgs, note = {}, f"no graph: {crash(str(path), exc).message}"
        return {"path": self.relative(str(path)), "policy": r.name, "verdict": r.verdict.value if r.verdict else "error",
                "obligations": counts, "solver_calls": r.solver_calls, "seconds": round(r.seconds, 3),
                "findings": [self.finding(d, r, n) for n, d in enumerate(r.diagnostics)],
                "graphs": [{"view": v, "title": pictures.VIEWS[v], "svg": svg} for v, svg in svgs.items()],
                "graph_note": note}

    def finding(self, d: Diagnostic, r: CheckResult, n: int = 0) -> dict[str, Any]:
        """One diagnostic (the ``n``-th): its JSON, its terminal rendering, its code's title, and
        the swimlane of its trace."""
        out = diagnostic_to_json(d, r.sources)
        for lab in [out.get("primary"), *out.get("related", []),
                    *[e.get("location") for e in (out.get("trace") or {}).get("events", [])]]:
            if lab:
                lab["file"] = self.relative(lab["file"])
        out["title"] = d.code.title
        out["text"] = to_plain(render_diagnostic(d, r.sources)).replace(str(self.root) + os.sep, "")
        try:
            out["swimlane_svg"] = pictures.swimlane(d, f"lane{n}")
        except Exception as exc:  # noqa: BLE001 - a picture's bug must not hide the finding
            out["swimlane_svg"], out["swimlane_note"] = None, f"no picture: {crash(r.path, exc).message}"
        return out

    def relative(self, path: str) -> str:
        """``path`` relative to the repository root when it is inside it."""
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return path

    def explain(self, code: object) -> dict[str, Any]:
        """``fxverify explain CODE``; 404 with a did-you-mean for an unknown code."""
        c = codes.lookup(code.upper()) if isinstance(code, str) else None
        if c is None:
            near = nearest(str(code).upper(), codes.REGISTRY)
            raise ApiError(404, f"unknown code `{code}`" + (f"; did you mean `{near}`?" if near else ""))
        return {"code": str(c), "title": c.title, "family": c.family.value, "severity": c.severity.value,
                "text": explain(c, load_examples())}

    def codes(self) -> dict[str, Any]:
        """Every code of the registry: code, title, family, severity."""
        return {"codes": [{"code": str(c), "title": c.title, "family": c.family.value, "severity": c.severity.value}
                          for c in codes.REGISTRY.values()]}
