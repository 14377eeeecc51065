"""Source files and spans.

Takes policy text as read from disk and produces ``SourceFile`` objects and ``Span`` values
(file path + byte offsets). Line and column numbers are computed only when rendering, so spans stay
cheap and stable. Emits no diagnostics.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range ``[start, end)`` of character offsets in one source file.

    ``file`` is the path as the user named it (or as an include resolved it). Offsets count
    characters of the decoded text, not bytes.
    """

    file: str
    start: int
    end: int
    #: ``hash((file, start, end))``, computed once: spans key the dictionaries of the parametric
    #: proofs, which a check of a big policy reads once per unrolled obligation (over a million
    #: hashes on the Llama-3.1-8B prefill). Not pickled (``__reduce__``): a string's hash differs
    #: from one process to the next.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.file, self.start, self.end)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Span], tuple[str, int, int]]:
        """Pickle the span by its fields alone; the receiving process hashes them anew."""
        return (Span, (self.file, self.start, self.end))

    def join(self, other: "Span") -> "Span":
        """Return the smallest span covering ``self`` and ``other`` (same file assumed)."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))


NO_SPAN = Span("<builtin>", 0, 0)


@dataclass(slots=True)
class SourceFile:
    """The text of one policy file, with a line index for offset -> (line, col) conversion."""

    path: str
    text: str
    _line_starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        starts = [0]
        for i, ch in enumerate(self.text):
            if ch == "\n":
                starts.append(i + 1)
        self._line_starts = starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based ``(line, column)`` of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        """Return the text of a 1-based line, without its line ending (``\n`` or ``\r\n``; "" when
        out of range)."""
        if line < 1 or line > len(self._line_starts):
            return ""
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return (self.text[start:] if end < 0 else self.text[start:end]).removesuffix("\r")


class SourceMap:
    """All source files of one run, by path. Renderers use it to turn spans into lines."""

    def __init__(self) -> None:
        self._files: dict[str, SourceFile] = {}

    def add(self, path: str, text: str) -> SourceFile:
        """Register ``text`` under ``path`` and return its ``SourceFile``."""
        sf = SourceFile(path, text)
        self._files[path] = sf
        return sf

    def get(self, path: str) -> SourceFile | None:
        """Return the file registered under ``path``, or ``None``."""
        return self._files.get(path)

    def paths(self) -> list[str]:
        """Return the registered paths, in registration order (the policy file first)."""
        return list(self._files)

    def location(self, span: Span) -> tuple[int, int]:
        """Return the 1-based ``(line, col)`` where ``span`` starts; ``(0, 0)`` for unknown files."""
        sf = self._files.get(span.file)
        return sf.line_col(span.start) if sf else (0, 0)
