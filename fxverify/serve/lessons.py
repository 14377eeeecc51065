"""The lessons of the teaching page: the corpus policies, in teaching order, each with its text.

Takes the repository root; reads ``corpus/<family>/fail|ok/*.fx``. A corpus policy's opening
comment is its lesson (the convention of ``corpus/``: what the policy does, why it is refuted or
proved, and the fix). Lessons come family by family, in the order a reader meets the ideas
(ordering, alias sets, ownership, maps, transforms, hooks, the solver's budget, then the
incidents written after public bugs), and within a family each refuted policy is followed by its
proved twin: the file of the same name in the other folder, or the one its comment names
(``see ok/kv-offload-ordered.fx``), or the one whose comment names it (``Fixed twin of
fail/posted-read-no-flush.fx``). Emits no diagnostics.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

#: Families in teaching order; any other corpus family follows, by name.
FAMILY_ORDER = ("ordering", "alias", "ownership", "maps", "transforms", "hooks", "solver", "incidents")

_EXPECT = re.compile(r"#\s*expect:\s*((?:FX-[A-Z]+-\d{3}[ ,]*)+)")
_TWIN = re.compile(r"\b(ok|fail)/([A-Za-z0-9_.-]+\.fx)\b")


@dataclass(frozen=True)
class Lesson:
    """One corpus policy as a lesson: ``path`` relative to the repository (``corpus/ordering/fail/
    kv-offload-unordered.fx``), its ``family``, ``kind`` (``fail``: refuted, ``ok``: proved),
    ``title`` (its file name in words), ``text`` (its opening comment), the codes its ``# expect:``
    lines name, and the path of its ``twin`` (``None`` when it has none)."""

    path: str
    family: str
    kind: str
    title: str
    text: str
    expects: tuple[str, ...]
    twin: str | None

    def as_json(self) -> dict[str, object]:
        """The lesson as the page reads it."""
        return {"path": self.path, "family": self.family, "kind": self.kind, "title": self.title, "text": self.text,
                "expects": list(self.expects), "twin": self.twin}


def opening_comment(text: str) -> str:
    """The comment lines a policy opens with, without their ``#``, joined into paragraphs (a
    blank comment line starts a new one)."""
    paras: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        body = line[1:].strip()
        if body:
            paras[-1].append(body)
        elif paras[-1]:
            paras.append([])
    return "\n\n".join(" ".join(p) for p in paras if p)


def _title(path: Path) -> str:
    return path.stem.replace("-", " ")


def _read(root: Path, path: Path) -> Lesson:
    text = path.read_text(encoding="utf-8", errors="replace")
    rel = path.relative_to(root).as_posix()
    family, kind = path.parent.parent.name, path.parent.name
    expects = sorted({c for m in _EXPECT.finditer(text) for c in re.findall(r"FX-[A-Z]+-\d{3}", m.group(1))})
    other = "ok" if kind == "fail" else "fail"
    twin = path.parent.parent / other / path.name
    if not twin.is_file():
        named = [m for m in _TWIN.finditer(opening_comment(text)) if m.group(1) == other]
        twin = path.parent.parent / other / named[0].group(2) if named else None
    return Lesson(rel, family, kind, _title(path), opening_comment(text), tuple(expects),
                  twin.relative_to(root).as_posix() if twin is not None and twin.is_file() else None)


def _inside(root: Path, path: Path) -> bool:
    """True for a regular file that resolves, symlinks included, inside ``root`` (a real path)."""
    real = os.path.realpath(path)
    return os.path.commonpath([real, str(root)]) == str(root) and os.path.isfile(real)


def lessons(root: Path) -> list[Lesson]:
    """Every lesson under ``root/corpus`` (a real path), in teaching order (see the module
    docstring); ``[]`` when there is no corpus. A file that resolves outside ``root`` (a symlink
    out of the repository) is no lesson. Raises ``OSError`` when a corpus file cannot be read."""
    corpus = root / "corpus"
    if not corpus.is_dir():
        return []
    families = sorted((d.name for d in corpus.iterdir() if (d / "fail").is_dir() or (d / "ok").is_dir()),
                      key=lambda f: (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER), f))
    out: list[Lesson] = []
    for fam in families:
        found = {p.relative_to(root).as_posix(): _read(root, p)
                 for kind in ("fail", "ok") for p in sorted((corpus / fam / kind).glob("*.fx")) if _inside(root, p)}
        # a twin that names its other half (``Fixed twin of fail/x.fx``) is that half's twin too
        for path, lesson in list(found.items()):
            if lesson.twin in found and found[lesson.twin].twin is None:
                found[lesson.twin] = replace(found[lesson.twin], twin=path)
        placed: set[str] = set()
        for path, lesson in found.items():
            if path in placed:
                continue
            placed.add(path)
            out.append(lesson)
            if lesson.kind == "fail" and lesson.twin in found and lesson.twin not in placed:
                placed.add(lesson.twin)
                out.append(found[lesson.twin])
    return out
