"""JUnit XML rendering (``--format junit``), for CI test reports.

Takes a ``gate.Report``; produces one ``<testsuites>`` document in the widely read JUnit XML shape
(the Ant/Surefire schema that Jenkins, GitLab and GitHub test reporters parse): one
``<testsuite>`` per policy file. Proved obligations are grouped: one passing ``<testcase>`` per
obligation family key (the key with every ``[index]`` read as ``[*]``), whose ``<system-out>``
counts the obligations it stands for and how they were discharged; a real policy has hundreds of
thousands of obligations, and one test case each made reports of tens of MB, over what CI test
reporters accept (GitLab refuses more than 30 MB). Every obligation that is not proved, or that
carries a finding, keeps a test case of its own, named by its key. A family's refuted instances
share one diagnostic (with its trace) in the first instance's test case; the others fail with a
pointer to it. A refuted obligation is a ``<failure>`` whose body is the plain-text diagnostic with
its replayed trace; an unknown verdict is an ``<error>``; a suppressed finding is ``<skipped>``
with its reason; warnings fail only with ``--fail-on warning``. Input errors are an ``<error>`` of
a ``load`` test case. Each suite's properties give its obligation counts. Times appear only with
``--stats``. With ``per_obligation`` (``--junit-per-obligation``) every obligation is a test case
of its own, as before grouping: for tools that track single obligations, at the cost of size (a
real prefill policy then takes tens of MB). Output is deterministic.
"""

from __future__ import annotations

import re
from collections import Counter
import xml.etree.ElementTree as ET

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.gate.report import Report
from fxverify.render.text import render_diagnostic, to_plain
from fxverify.result import CheckResult

_INDEX = re.compile(r"\[\d+\]")

#: The verdicts counted in each suite's properties (``obligations_<verdict>``).
STATUSES = ("proved", "refuted", "unknown")


def family_key(key: str) -> str:
    """An obligation key with every ``[index]`` replaced by ``[*]``: the key of its test case."""
    return _INDEX.sub("[*]", key)


def _outcome(case: ET.Element, d: Diagnostic, sources, fail_on_warning: bool) -> None:
    body = to_plain(render_diagnostic(d, sources))
    if d.suppressed_reason is not None:
        ET.SubElement(case, "skipped", message=f"suppressed {d.code}: {d.suppressed_reason}")
        return
    if d.severity is Severity.ERROR or (d.severity is Severity.WARNING and fail_on_warning):
        tag = "error" if d.code in (codes.SMT_001, codes.INT_001) or not d.policy else "failure"
        el = ET.SubElement(case, tag, message=d.message, type=d.code)
        el.text = body
    else:
        out = case.find("system-out")
        if out is None:
            out = ET.SubElement(case, "system-out")
            out.text = ""
        out.text += body


def _suite(r: CheckResult, fail_on_warning: bool, stats: bool, per_obligation: bool = False) -> ET.Element:
    suite = ET.Element("testsuite", name=r.path)
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="policy", value=r.name or "")
    ET.SubElement(props, "property", name="verdict", value=r.verdict.value if r.verdict else "error")
    counts = Counter(v.verdict.value for v in r.outcomes)
    for name, n in (("obligations", len(r.outcomes)), *((f"obligations_{k}", counts[k]) for k in STATUSES)):
        ET.SubElement(props, "property", name=name, value=str(n))
    cases: dict[str, ET.Element] = {}  # obligation key, or family key of a proved group -> its test case
    status: dict[str, str] = {}
    groups: dict[str, Counter] = {}  # family key -> methods of its proved obligations
    noted = {d.obligation for d in r.diagnostics if d.obligation and not d.baselined}
    for v in r.outcomes:
        key = v.key
        if v.verdict.value == "proved" and key not in noted and not per_obligation:
            key = family_key(v.key)
            groups.setdefault(key, Counter())[v.method] += 1
        if key not in cases:
            cases[key] = ET.Element("testcase", classname=f"{r.path}.{v.family.value}", name=key)
            status[key] = v.verdict.value
            if per_obligation and v.verdict.value == "proved" and key not in noted:
                ET.SubElement(cases[key], "system-out").text = f"proved ({v.method})\n"
    for key, methods in groups.items():
        n = sum(methods.values())
        by = ", ".join(f"{m} {k}" for m, k in sorted(methods.items()))
        ET.SubElement(cases[key], "system-out").text = f"{n} obligation{'' if n == 1 else 's'} proved ({by})\n"
    extra: list[ET.Element] = []
    shown: dict[str, Diagnostic] = {}  # family key -> the diagnostic that stands for its instances
    for d in r.diagnostics:
        if d.baselined:
            continue
        case = cases.get(d.obligation) if d.obligation else None
        if case is None:
            kind = "internal" if d.code is codes.INT_001 else "input" if not d.policy else "suppressions"
            name = "load" if kind == "input" else "check" if kind == "internal" else f"{d.code}: {d.message}"
            case = ET.Element("testcase", classname=f"{r.path}.{kind}", name=name)
            extra.append(case)
        else:
            shown.setdefault(family_key(d.obligation), d)
        _outcome(case, d, r.sources, fail_on_warning)
    # Instances of a family share one diagnostic (its first instance, with "n more instances");
    # every other refuted or unknown instance still fails its own test case, pointing at it.
    for key, case in cases.items():
        d = shown.get(family_key(key))
        if d is None or status[key] == "proved" or len(case):
            continue
        if d.suppressed_reason is not None:
            ET.SubElement(case, "skipped", message=f"suppressed {d.code}: {d.suppressed_reason}")
        elif d.severity is Severity.ERROR or fail_on_warning:
            tag = "error" if d.code in (codes.SMT_001, codes.INT_001) else "failure"
            el = ET.SubElement(case, tag, message=f"another instance of: {d.message}", type=d.code)
            el.text = f"same finding as `{d.obligation}`; its trace is in that test case\n"
    all_cases = list(cases.values()) + extra
    for c in all_cases:
        suite.append(c)
    suite.set("tests", str(len(all_cases)))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attr, str(sum(1 for c in all_cases if c.find(tag) is not None)))
    if stats:
        suite.set("time", f"{r.seconds:.3f}")
    return suite


def report_to_junit(report: Report, per_obligation: bool = False) -> str:
    """Render a ``gate.Report`` as JUnit XML text (UTF-8, two-space indent); ``per_obligation``:
    one test case per obligation (see the module docstring)."""
    root = ET.Element("testsuites", name="fxverify")
    suites = [_suite(r, report.gate.fail_on == "warning", report.stats, per_obligation) for r in report.results]
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    if report.stats:
        root.set("time", f"{report.seconds:.3f}")
    root.extend(suites)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
