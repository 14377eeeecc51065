"""Input files of the generators, with spans for diagnostics.

Takes the path and text of one input file (JSON or XML); produces ``Span`` values that point at a
key or element in it, so a problem in a model config or a topology is shown like a policy error:
``file:line:col``, the line underlined, and a hint. ``InputProblem`` carries one diagnostic, made
by ``fxverify.diagnostics.model.diagnostic()``, out of an importer or the prefill planner to its
entry point, which returns it in its diagnostics list. Emits FX-GEN-001 (a file that cannot be
read, is not UTF-8 or is not valid JSON).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.fileio import NotUtf8, decode_utf8, read_hint, read_regular
from fxverify.source import SourceMap, Span


class InputProblem(Exception):
    """One input error: ``diag`` is the diagnostic (built by ``diagnostic()``) to report.

    Raised deep inside an importer (``hf_config``, ``nccl_topo``, ``cxl_list``) or the prefill
    planner (``prefill_plan``, ``prefill_fabric``) and caught at that stage's entry point
    (``load_model``, ``load_topology``, ``load_cxl``, ``generate_prefill``), which returns
    ``diag``; it never escapes ``fxverify.gen``. Not an ``FxError``: it reports user input, not a bug."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


#: The largest input file a generator reads, in bytes: model configs, topology XML and ``cxl list``
#: output are kilobytes; 16 MiB leaves room for the largest fabrics and still refuses ``/dev/zero``.
MAX_INPUT_BYTES = 16 << 20


@dataclass
class InputFile:
    """One input file: ``path`` as the user named it and its decoded ``text``."""

    path: str
    text: str

    @classmethod
    def read(cls, path: str, sources: SourceMap, what: str) -> "InputFile":
        """Read ``path`` as UTF-8 and register it in ``sources``.

        ``what`` names the expected content in messages ("a Hugging Face config.json").
        Raises ``InputProblem`` (FX-GEN-001) when the file cannot be read or decoded, is not a
        regular file (a FIFO or device would block or never end) or is over ``MAX_INPUT_BYTES``."""
        try:
            raw = read_regular(path, MAX_INPUT_BYTES)
        except OSError as err:
            raise InputProblem(diagnostic(codes.GEN_001, f"cannot read `{path}`: {err.strerror or err}",
                                          help=read_hint(err, path) or f"pass the path of {what}")) from None
        try:
            text = decode_utf8(raw)
        except NotUtf8 as err:
            # Shown with the bad byte underlined, in the text decoded for the listing only.
            sources.add(path, err.shown)
            raise InputProblem(diagnostic(codes.GEN_001, f"`{path}` is not UTF-8 text (byte {err.offset})",
                                          cls(path, err.shown).span(err.at, err.at + 1), "not UTF-8",
                                          help=f"pass {what}, saved as UTF-8")) from None
        sources.add(path, text)
        return cls(path, text)

    def span(self, start: int, end: int | None = None) -> Span:
        """The span ``[start, end)`` in this file; ``end`` defaults to the end of the line."""
        if end is None:
            nl = self.text.find("\n", start)
            end = len(self.text) if nl < 0 else nl
        return Span(self.path, start, max(end, start + 1))

    def line_col_span(self, line: int, col: int) -> Span:
        """The span from 1-based ``line``/``col`` to the end of that line."""
        offset = 0
        for _ in range(line - 1):
            nl = self.text.find("\n", offset)
            if nl < 0:
                break
            offset = nl + 1
        return self.span(min(offset + max(col - 1, 0), len(self.text)))

    def key_span(self, path: tuple[str, ...]) -> Span:
        """The span of the JSON key ``path[-1]`` found after the keys before it (document order),
        underlined to the end of its line; the first line when a key is absent."""
        pos = 0
        for k in path:
            at = self.text.find(json.dumps(k), pos)
            if at < 0:
                return self.span(0)
            pos = at
        return self.span(pos)

    def load_json(self, what: str) -> Any:
        """Parse the text as JSON. Raises ``InputProblem`` (FX-GEN-001) at the syntax error, and for
        nesting or integers too large for Python's decoder."""
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as err:
            raise InputProblem(diagnostic(codes.GEN_001, f"`{self.path}` is not valid JSON: {err.msg}",
                                          self.line_col_span(err.lineno, err.colno), "here",
                                          help=f"pass {what}")) from None
        except RecursionError:
            raise InputProblem(diagnostic(codes.GEN_001, f"`{self.path}` nests arrays or objects too deeply to read",
                                          self.span(0), help=f"pass {what}")) from None
        except ValueError as err:  # an integer of more digits than Python converts (sys.int_info)
            raise InputProblem(diagnostic(codes.GEN_001, f"`{self.path}` is not readable JSON: {err}",
                                          self.span(0), help=f"pass {what}")) from None
