"""CSV rendering (``--format csv``): one row per policy and obligation family, in the manner of
veristat's ``-o csv`` (one row per object and program, read back by ``veristat -C`` to compare
two runs); ``fxverify compare A.csv B.csv`` (``gate.compare``) reads these files.

Takes a ``gate.Report``; produces RFC 4180 CSV with the header ``COLUMNS``: for each policy, one
row per obligation family it has (``ordering``, ``alias``...) with that family's obligation counts
by verdict, how many needed the solver (``solver``) and how many a fast proof discharged
(``fast``), then one row of family ``all`` with the policy's verdict (after suppressions and the
baseline; ``error`` for input errors and crashes), its totals and its wall time. ``seconds`` is
empty without ``--stats`` (so the same input gives the same bytes); a family row's ``seconds`` is
always empty (the pipeline times policies, not families). Emits no diagnostics.
"""

from __future__ import annotations

import csv
import io

from fxverify.gate.compare import ALL, COLUMNS
from fxverify.gate.report import Report


def _family_verdict(proved: int, refuted: int, unknown: int) -> str:
    return "refuted" if refuted else "unknown" if unknown else "proved"


def report_to_csv(report: Report) -> str:
    """Render a ``gate.Report`` as CSV text (``\\n`` line ends, a header row)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in report.results:
        tot = {k: 0 for k in ("proved", "refuted", "unknown", "solver")}
        for fam, c in sorted(r.counts().items()):
            n = c["proved"] + c["refuted"] + c["unknown"]
            solver = c["by:solver"]
            w.writerow([r.path, fam, _family_verdict(c["proved"], c["refuted"], c["unknown"]), n, c["proved"],
                        c["refuted"], c["unknown"], solver, n - solver, ""])
            for k in ("proved", "refuted", "unknown"):
                tot[k] += c[k]
            tot["solver"] += solver
        n = tot["proved"] + tot["refuted"] + tot["unknown"]
        verdict = r.verdict.value if r.verdict is not None else "error"
        w.writerow([r.path, ALL, verdict, n, tot["proved"], tot["refuted"], tot["unknown"], tot["solver"],
                    n - tot["solver"], f"{r.seconds:.3f}" if report.stats else ""])
    return buf.getvalue()
