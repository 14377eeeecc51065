"""Render a ``LowerResult`` as plain text or JSON (formatting only; no decisions are made here).

Text: the diagnostics (with ``file:line:col`` and the underlined source line), a one-line summary,
the verification table (name, device, hook, accepted, instructions processed, peak states) and the
``--kernel-run`` agreement counts. JSON: ``{"policy", "target", "output", "proved", "programs":
[...], "kernel_run", "facts", "diagnostics", "exit_code"}`` with sorted keys. Emits no
diagnostics.
"""

from __future__ import annotations

import json

from fxverify.diagnostics.model import counted
from fxverify.lower.driver import LowerResult
from fxverify.render.json import diagnostic_to_json
from fxverify.render.text import render_diagnostic, to_plain


def _table(rows: list[list[str]]) -> list[str]:
    """``rows`` (the first one the header) as left-aligned columns indented by two spaces."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_text(r: LowerResult, out_dir: str, stats: bool = False) -> str:
    """Plain text report of ``r`` (no colour), naming ``out_dir`` as the output. ``stats`` adds
    stage wall times, which vary between runs. Returns the text, ending in a newline when not
    empty."""
    lines: list = []
    for d in r.diagnostics:
        lines += render_diagnostic(d, r.sources) + [[("", "")]]
    text = to_plain(lines)
    out: list[str] = []
    if r.plan is not None and r.written:
        p = r.plan
        stamp = "proved" if p.proved else "UNPROVED"
        out.append(f"lowered `{p.policy.name}` ({stamp}) for target `{p.target}`: {counted(len(p.programs), 'program')} on "
                   f"{counted(len(p.devices), 'device')}, {counted(len(p.edges), 'edge descriptor')}, "
                   f"{counted(len(p.ops), 'guard op')} -> {out_dir}")
        proved = sum(1 for f in r.facts if f.status == "proved")
        methods = {"z3": "z3", "count": "counting", "elf": "the objects' instructions"}
        how = ", ".join(methods[m] for m in methods if any(f.method == m for f in r.facts))
        out.append(f"lowering facts: {proved}/{len(r.facts)} proved ({how}); see obligations.json")
        if r.loader:
            out.append(f"loader: cd {out_dir} && cc -O2 -o loader loader.c -lbpf && ./loader --help")
    if r.programs:
        rows = [["program", "device", "hook", "section", "verdict", "insns processed", "peak states", "stack"]]
        for pr in r.programs:
            rows.append([pr.name, pr.device, pr.hook, pr.section, "accepted" if pr.accepted else "REJECTED",
                         str(pr.insns_processed if pr.insns_processed is not None else "-"),
                         str(pr.peak_states if pr.peak_states is not None else "-"), pr.stack_depth or "-"])
        out.append("Linux verifier:")
        out += _table(rows)
        for pr in r.programs:
            if not pr.accepted:
                out.append(f"verifier log of `{pr.name}` (C lines annotated with .fx spans):")
                out += ["    " + ln for ln in pr.log.splitlines()[-40:]]
    if r.run is not None:
        rr = r.run
        out.append(f"kernel run: decisions agree {rr.decisions_agree}/{rr.decisions_total}, "
                   f"final state agrees {rr.final_agree}/{rr.final_total}, "
                   f"plain reads agree {rr.reads_agree}/{rr.reads_total}, "
                   f"scenarios agree {sum(c.agree for c in rr.cases)}/{len(rr.cases)}")
        for c in rr.cases:
            where = "none" if c.kernel_step is None else f"event {c.kernel_step} ({c.kernel_decision}, {c.kernel_reason})"
            sim = "none" if c.sim_step is None else f"event {c.sim_step}"
            out.append(f"  {'agree   ' if c.agree else 'DISAGREE'} {c.name}: simulator flags {sim}, kernel refuses {where}")
        for s in rr.static_only:
            out.append(f"  static   {s}")
        for s in rr.reads_unchecked:
            out.append(f"  unchecked read {s}")
    if stats and r.seconds:
        out.append("time: " + ", ".join(f"{k} {v:.2f} s" for k, v in r.seconds.items()))
    return text + ("\n".join(out) + "\n" if out else "")


def render_json(r: LowerResult, out_dir: str, stats: bool = False) -> str:
    """The JSON report of ``r`` (sorted keys, two-space indent, ending in a newline; ``seconds``
    only with ``stats``); ``output`` is ``out_dir`` when the directory was written, else null."""
    obj = {
        "policy": r.policy.name if r.policy else None,
        "path": r.path,
        "target": r.plan.target if r.plan else None,
        "output": out_dir if r.written else None,
        "proved": r.proved,
        "programs": [p.row() for p in r.programs],
        "kernel_run": r.run.to_json() if r.run else None,
        "facts": [{"key": f.key, "status": f.status, "method": f.method} for f in r.facts],
        "diagnostics": [diagnostic_to_json(d, r.sources) for d in r.diagnostics],
        "exit_code": r.exit_code,
    }
    if stats:
        obj["seconds"] = r.seconds
    return json.dumps(obj, sort_keys=True, indent=2) + "\n"
