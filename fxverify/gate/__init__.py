"""The pre-merge gate: one typed request in, one typed report out.

``run_gate(GateRequest)`` finds the policy files (``discover``), reads the baseline
(``baseline``), checks every policy through the result cache (``run``, ``cache``), applies the
``--unknown`` policy and the baseline, writes a new baseline when asked, and decides the exit code
(``report``). Problems of the run itself are diagnostics of their own codes in
``Report.problems``: FX-USE-001 (no policy files), FX-USE-002 (conflicting options), FX-USE-006
(a solver that is not installed), FX-USE-005 and FX-USE-009 (an ``--executor`` that is not one, or
cannot be used: ``gate.executors``), FX-IO-001
(an output that cannot be written), FX-GATE-001 (a baseline that cannot be read) and FX-GATE-002
(a note: the baseline was not written because of input errors). The caller renders the report.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from time import perf_counter

from fxverify.atomic import write_text
from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic, crash, diagnostic
from fxverify.diagnostics.outdir import missing_parent
from fxverify.gate.baseline import BaselineEntry, BaselineError, apply_baseline, dump_baseline, entries_from, read_baseline
from fxverify.gate.cache import CacheStats, ResultCache, check_cached
from fxverify.gate.discover import collect_policies
from fxverify.gate.report import BaselineOutcome, GateOptions, Report
from fxverify.gate.executors import open_executor
from fxverify.gate.run import Progress, run_checks
from fxverify.gate.shards import SPLIT_MIN_EDGES
from fxverify.gate.tasks import crashed
from fxverify.pipeline import CheckOptions, solver_problem
from fxverify.result import CheckResult

__all__ = ["BaselineOutcome", "GateOptions", "GateRequest", "Progress", "Report", "run_gate"]


@dataclass(frozen=True)
class GateRequest:
    """What ``fxverify check`` was asked: the ``paths`` (files and folders), the ``check`` options,
    the ``gate`` options, at most one of ``baseline`` (report only new findings),
    ``write_baseline`` (record the findings, exit 0) and ``update_baseline`` (like ``baseline``,
    then drop stale entries), the result cache folder (``None``: no cache), ``jobs`` worker
    processes on this machine, or the ``executor`` that runs the checks (``local``, or
    ``dask://HOST:PORT``: ``gate.executors``), ``split_from`` the edge count from which one
    policy is split over the workers (``gate.shards``), ``dump_smt`` (a folder that receives
    ``<policy stem>/<obligation>.smt2``),
    ``stats`` (wall times and cache counts in the report), where ``progress`` goes, and the
    ``exclude`` globs of files never checked (``discover.excluded``)."""

    paths: tuple[str, ...]
    check: CheckOptions = CheckOptions()
    gate: GateOptions = GateOptions()
    baseline: str | None = None
    write_baseline: str | None = None
    update_baseline: str | None = None
    cache_dir: str | None = None
    jobs: int = 1
    executor: str = "local"
    split_from: int = SPLIT_MIN_EDGES
    dump_smt: str | None = None
    stats: bool = False
    progress: Progress | None = None
    exclude: tuple[str, ...] = ()


def run_gate(req: GateRequest) -> Report:
    """Run the gate (see the module docstring). Never raises for bad input or unwritable outputs:
    those are ``Report.problems``; a check that crashes is a result holding FX-INT-001."""
    report = Report(stats=req.stats, gate=req.gate,
                    skipped_rules=tuple(c for c in codes.REGISTRY if c in req.check.skip_codes))
    files = collect_policies(list(req.paths), req.exclude)
    if not files:
        return _stop(report, diagnostic(codes.USE_001, f"no policy files (*.fx) found in {', '.join(req.paths)}",
                                        help="name policy files, or folders that hold them (files git ignores, "
                                             "and files `--exclude` matches, are skipped)"))
    if req.dump_smt is not None and os.path.exists(req.dump_smt) and not os.path.isdir(req.dump_smt):
        return _stop(report, diagnostic(codes.IO_001, f"`--dump-smt {req.dump_smt}` is not a directory",
                                        help="name a folder (it is created if missing)"))
    problem = solver_problem(req.check.solver)
    if problem is not None:
        return _stop(report, problem)
    chosen = [x for x in (req.baseline, req.write_baseline, req.update_baseline) if x is not None]
    if len(chosen) > 1:
        return _stop(report, diagnostic(codes.USE_002,
                                        "use only one of `--baseline`, `--write-baseline` and `--update-baseline`"))
    known: list[BaselineEntry] | None = None
    read_from = req.baseline or req.update_baseline
    if read_from is not None:
        try:
            known = read_baseline(read_from)
        except BaselineError as err:
            if err.span is not None and err.text is not None:
                report.sources.add(err.span.file, err.text)
            return _stop(report, diagnostic(codes.GATE_001, str(err), err.span, err.label, notes=err.notes,
                                            help="record one with `fxverify check --write-baseline FILE`"))
    if req.dump_smt is not None:
        if req.executor != "local":
            return _stop(report, diagnostic(codes.USE_002, "`--dump-smt` writes every query on this machine, so it "
                                            f"runs here: it cannot go with `--executor {req.executor}`",
                                            help="drop `--executor` to dump the queries"))
        results, cache, seconds, problem = _run_dumping(files, req)
        if problem is not None:
            return _stop(report, problem)
    else:
        executor = None
        if req.executor != "local":
            opened = open_executor(req.executor, req.jobs, req.check.solver.solver)
            if isinstance(opened, Diagnostic):
                return _stop(report, opened)
            executor = opened
        t0 = perf_counter()
        p = req.progress
        try:
            if p is not None:
                p.start(len(files))
            results, cache = run_checks(files, req.check, req.cache_dir, req.jobs, p, executor=executor,
                                        split_from=req.split_from)
        finally:
            if executor is not None:
                executor.close()
        seconds = perf_counter() - t0
    if req.cache_dir is not None and req.dump_smt is None and req.executor == "local":
        unwritable = _cache_problem(req.cache_dir)
        if unwritable is not None:
            report.problems.append(unwritable)
    if req.gate.unknown == "warn":
        _unknown_as_warning(results)
    report.results, report.cache, report.seconds = results, cache, seconds
    if known is not None:
        matched, stale = apply_baseline(results, known)
        report.baseline = BaselineOutcome(str(read_from), matched, stale, updated=req.update_baseline is not None)
    report.decide()
    _write_baseline(report, req, known)
    return report


def _cache_problem(cache_dir: str) -> Diagnostic | None:
    """A note (FX-GATE-004) when ``cache_dir`` cannot be created or written, else ``None``: the
    cache skips writes it cannot make (``ResultCache``), which would otherwise go unseen."""
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with tempfile.TemporaryFile(dir=cache_dir):
            pass
    except OSError as err:
        return diagnostic(codes.GATE_004, f"the result cache `{cache_dir}` cannot be written "
                          f"({err.strerror or err}): this run's results were not kept",
                          help="name a folder the gate can write with `--cache-dir`, or run with `--no-cache`")
    return None


def _stop(report: Report, problem: Diagnostic) -> Report:
    report.problems.append(problem)
    report.decide()
    return report


def _run_dumping(files: list[str], req: GateRequest) -> tuple[list[CheckResult], CacheStats, float, Diagnostic | None]:
    """One policy at a time, each dumping into its own folder (``dump_dirs``)."""
    assert req.dump_smt is not None
    missing = missing_parent(req.dump_smt)
    if missing is not None:
        return [], CacheStats(), 0.0, missing
    dirs = dump_dirs(files, req.dump_smt)
    try:
        for d in dirs.values():
            os.makedirs(d, exist_ok=True)
    except OSError as err:
        return [], CacheStats(), 0.0, diagnostic(
            codes.IO_001, f"cannot write the SMT-LIB dump into `{req.dump_smt}`: {err.strerror or err}",
            help="name a folder you can write")
    results: list[CheckResult] = []
    stats = CacheStats()
    store = ResultCache(req.cache_dir) if req.cache_dir else None
    for f in files:
        try:
            results.append(check_cached(f, replace(req.check, dump_smt=dirs[f]), store, stats))
        except OSError as err:
            return [], stats, 0.0, diagnostic(
                codes.IO_001, f"cannot write the SMT-LIB dump into `{dirs[f]}`: {err.strerror or err}",
                help="name a folder you can write")
        except Exception as exc:  # noqa: BLE001 - any other escape is a bug, reported as FX-INT-001
            results.append(crashed(f, crash(f, exc)))
    return results, stats, sum(r.seconds for r in results), None


def dump_dirs(files: list[str], root: str) -> dict[str, str]:
    """``--dump-smt DIR`` writes each policy's obligations into ``DIR/<policy stem>/`` (with a
    numeric suffix when two policies share a stem), so several policies never overwrite each other."""
    out: dict[str, str] = {}
    used: dict[str, int] = {}
    for f in files:
        stem = Path(f).name.removesuffix(".fx")
        used[stem] = used.get(stem, 0) + 1
        out[f] = str(Path(root) / (stem if used[stem] == 1 else f"{stem}.{used[stem]}"))
    return out


def _unknown_as_warning(results: list[CheckResult]) -> None:
    """With ``--unknown warn``, unknown verdicts (FX-SMT-001) become warnings, in every format."""
    for r in results:
        r.diagnostics = [replace(d, severity=Severity.WARNING) if d.code is codes.SMT_001 else d for d in r.diagnostics]


def _write_baseline(report: Report, req: GateRequest, known: list[BaselineEntry] | None) -> None:
    """``--write-baseline`` records every finding (and the run passes); ``--update-baseline``
    drops the stale entries. Neither is written after an input error (FX-GATE-002)."""
    target = req.write_baseline or req.update_baseline
    if target is None:
        return
    if report.exit_code >= 2:
        report.problems.append(diagnostic(codes.GATE_002, f"`{target}` was not written: fix the errors above first"))
        if report.baseline is not None:
            report.baseline = replace(report.baseline, updated=False)
        return
    try:
        if req.write_baseline is not None:
            write_text(req.write_baseline, dump_baseline(entries_from(report.results)))
            report.exit_code = 0
        elif known is not None and report.baseline is not None:
            stale = {e.fingerprint for e in report.baseline.stale}
            write_text(target, dump_baseline([e for e in known if e.fingerprint not in stale]))
    except OSError as err:
        report.problems.append(diagnostic(codes.IO_001, f"cannot write the baseline `{target}`: {err.strerror or err}",
                                          help="name a file in an existing, writable folder"))
        report.decide()
