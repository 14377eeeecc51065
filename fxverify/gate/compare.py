"""``fxverify compare A.csv B.csv``: two runs side by side, as ``veristat -C`` compares two of its
CSV files.

Takes two files that ``fxverify check --format csv`` wrote (``render.csv``); produces one ``Delta``
per policy and obligation family found in either file, in the order of A and then of the rows
only B has: the verdict, obligation counts and wall time on each side, with the differences
(``None`` where a side lacks the row or the time). Times are there when the runs used
``--stats``. Emits FX-GATE-003 for a file that is missing or is not such a CSV.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.fileio import NotUtf8, decode_utf8
from fxverify.source import SourceMap, Span
#: The header of a CSV report (``render.csv`` writes it, ``read_rows`` reads it), in order.
COLUMNS = ("policy", "family", "verdict", "obligations", "proved", "refuted", "unknown", "solver", "fast", "seconds")

#: The ``family`` of a policy's total row.
ALL = "all"

#: The counts compared, besides the verdict and the time.
COUNTS = ("obligations", "proved", "refuted", "unknown", "solver")


@dataclass(frozen=True)
class Row:
    """One row of a CSV report: ``counts`` by ``COUNTS`` name, ``seconds`` (``None``: not timed)."""

    policy: str
    family: str
    verdict: str
    counts: dict[str, int]
    seconds: float | None


@dataclass(frozen=True)
class Delta:
    """One policy and family in both runs: ``a``/``b`` (``None`` when that run lacks the row)."""

    policy: str
    family: str
    a: Row | None
    b: Row | None

    def diff(self, count: str) -> int | None:
        """B's ``count`` minus A's, or ``None`` when a side lacks the row."""
        if self.a is None or self.b is None:
            return None
        return self.b.counts[count] - self.a.counts[count]

    def seconds_pct(self) -> float | None:
        """B's time relative to A's, in percent (``+12.5``), or ``None`` when either is missing
        or A's is 0."""
        if self.a is None or self.b is None or self.a.seconds is None or self.b.seconds is None or not self.a.seconds:
            return None
        return (self.b.seconds - self.a.seconds) / self.a.seconds * 100.0

    @property
    def changed(self) -> bool:
        """True when the verdict or a count differs, or the row is in one run only."""
        return self.a is None or self.b is None or self.a.verdict != self.b.verdict or self.a.counts != self.b.counts


class CompareError(Exception):
    """A CSV that cannot be compared; ``diagnostic`` is its FX-GATE-003, and ``sources`` holds the
    file's text when the diagnostic points into it (a byte that is not UTF-8, a line that is not
    a report's row), else nothing."""

    def __init__(self, diag: Diagnostic, sources: SourceMap | None = None) -> None:
        super().__init__(diag.message)
        self.diagnostic = diag
        self.sources = sources or SourceMap()


def _bad(path: str, why: str, at: tuple[str, int, int, str] | None = None, notes: tuple[str, ...] = ()) -> CompareError:
    """FX-GATE-003 for ``path``; ``at`` is (the file's text, start, end, label) of the place shown."""
    sources, span, label = None, None, ""
    if at is not None:
        text, start, end, label = at
        sources = SourceMap()
        sources.add(path, text)
        span = Span(path, start, max(end, start + 1))
    return CompareError(diagnostic(codes.GATE_003, f"`{path}` {why}", span, label, notes=notes,
                                   help="write it with `fxverify check ... --format csv=FILE` (add `--stats` for times)"),
                        sources)


def _lines(text: str, first: int, last: int) -> tuple[int, int]:
    """The character offsets of the start of 1-based line ``first`` of ``text`` and of the end of
    line ``last`` (before its newline, and before a carriage return ending it)."""
    starts = [0]
    at = 0
    while len(starts) < last + 1:
        nl = text.find("\n", at)
        if nl < 0:
            break
        at = nl + 1
        starts.append(at)
    lo = starts[min(first, len(starts)) - 1]
    hi = starts[last] - 1 if last < len(starts) else len(text)
    if hi > lo and text[hi - 1] == "\r":
        hi -= 1
    return lo, max(hi, lo)


def read_rows(path: str) -> list[Row]:
    """The rows of a CSV report, in file order. Raises ``CompareError`` (FX-GATE-003), pointing
    at the lines of the row at fault where there is one. Reads what ``path`` names whatever it is,
    so a pipe (``<(...)``) works."""
    try:
        with open(path, "rb") as fh:
            text = decode_utf8(fh.read())
        reader = csv.reader(io.StringIO(text, newline=""))
        rows: list[tuple[list[str], int, int]] = []  # (cells, first line, last line): a quoted cell may span lines
        for cells in reader:
            rows.append((cells, rows[-1][2] + 1 if rows else 1, reader.line_num))
    except FileNotFoundError:
        raise _bad(path, "does not exist") from None
    except NotUtf8 as err:
        raise _bad(path, "is not UTF-8 text", (err.shown, err.at, err.at + 1, "not UTF-8"),
                   (f"found {err.found}",)) from None
    except (OSError, csv.Error) as err:
        raise _bad(path, f"cannot be read: {getattr(err, 'strerror', None) or err}") from None
    if not rows or tuple(rows[0][0]) != COLUMNS:
        raise _bad(path, "is not an fxverify CSV report (its header is not `" + ",".join(COLUMNS) + "`)",
                   (text, *_lines(text, rows[0][1], rows[0][2]), "this header") if rows else None)
    out = []
    for cells, first, last in rows[1:]:
        if len(cells) != len(COLUMNS):
            raise _bad(path, f"line {first} has {len(cells)} cells, not {len(COLUMNS)}",
                       (text, *_lines(text, first, last), "this row"))
        rec = dict(zip(COLUMNS, cells))
        try:
            counts = {k: int(rec[k]) for k in COUNTS}
            seconds = float(rec["seconds"]) if rec["seconds"] else None
        except ValueError:
            raise _bad(path, f"line {first} has a count or time that is not a number",
                       (text, *_lines(text, first, last), "this row")) from None
        out.append(Row(rec["policy"], rec["family"], rec["verdict"], counts, seconds))
    return out


def compare(a_path: str, b_path: str) -> list[Delta]:
    """The ``Delta`` of every policy and family of the two reports (see the module docstring).
    Raises ``CompareError``."""
    a, b = read_rows(a_path), read_rows(b_path)
    in_b = {(r.policy, r.family): r for r in b}
    out = [Delta(r.policy, r.family, r, in_b.get((r.policy, r.family))) for r in a]
    seen = {(r.policy, r.family) for r in a}
    out += [Delta(r.policy, r.family, None, r) for r in b if (r.policy, r.family) not in seen]
    return out


def _num(v: int | float | None, fmt: str = "{}") -> str:
    return "-" if v is None else fmt.format(v)


def _signed(v: int | None) -> str:
    return "-" if v is None else f"{v:+d}"


#: Columns of the comparison, as ``veristat -C`` names them: ``X (A)``, ``X (B)``, ``X (DIFF)``.
HEADER = ("policy", "family", "verdict (A)", "verdict (B)", "obligations (A)", "obligations (B)",
          "obligations (DIFF)", "refuted (A)", "refuted (B)", "refuted (DIFF)", "unknown (A)", "unknown (B)",
          "unknown (DIFF)", "solver (A)", "solver (B)", "solver (DIFF)", "seconds (A)", "seconds (B)", "seconds (DIFF)")


def delta_cells(d: Delta) -> list[str]:
    """One row of the comparison, as strings in ``HEADER`` order."""
    cells = [d.policy, d.family, d.a.verdict if d.a else "-", d.b.verdict if d.b else "-"]
    for k in ("obligations", "refuted", "unknown", "solver"):
        cells += [_num(d.a.counts[k] if d.a else None), _num(d.b.counts[k] if d.b else None), _signed(d.diff(k))]
    pct = d.seconds_pct()
    cells += [_num(d.a.seconds if d.a else None, "{:.3f}"), _num(d.b.seconds if d.b else None, "{:.3f}"),
              "-" if pct is None else f"{pct:+.1f}%"]
    return cells


def table(deltas: list[Delta], csv_format: bool = False) -> str:
    """The comparison as text: an aligned table (names left, numbers right), or CSV, with the
    ``HEADER`` row first."""
    rows = [list(HEADER), *(delta_cells(d) for d in deltas)]
    if csv_format:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        return buf.getvalue()
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    return "".join("  ".join(c.rjust(widths[i]) if i >= 4 else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() + "\n"
                   for r in rows)
