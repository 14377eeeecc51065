"""Explanations of diagnostic codes: ``fxverify explain``, ``explain --list`` and ``specs/codes.md``.

Takes the code registry (``codes.REGISTRY``), the reasons below and the corpus; produces text. Each
obligation code is explained with a failing policy from ``corpus/<family>/fail/`` and the change
that fixes it, a unified diff to its ``ok/`` twin. Those examples are taken from the corpus by
``python -m fxverify.diagnostics.explain --write``, which writes ``examples.json`` next to this
module (so an installed fxverify can explain without the repository) and ``specs/codes.md``; a test
keeps both in sync with the corpus and the registry. Input codes, which no policy of the corpus
triggers, carry a short failing line and its fix here. Emits no diagnostics.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

from fxverify.diagnostics.codes import REGISTRY, Code

_HERE = Path(__file__).resolve().parent
EXAMPLES_FILE = _HERE / "examples.json"

#: Why each code matters: what goes wrong on real hardware when the rule is broken.
WHY: dict[str, str] = {
    "FX-ORD-001": "with a cycle no edge can ever start: the flow deadlocks, and every other property holds vacuously",
    "FX-ORD-002": "a racing read sees a half-written buffer (torn KV blocks, stale activations) or two writes interleave; "
                  "such bugs appear only under some timings and are nearly impossible to reproduce",
    "FX-ORD-003": "a posted write completes at the sender before it is visible at the receiver; without a flush the "
                  "reader may see the old bytes",
    "FX-ORD-004": "in-order delivery over a link that reorders is a promise the fabric does not keep: later data can "
                  "overtake earlier data",
    "FX-ALIAS-001": "code optimised under a disjointness promise (like C `restrict`) silently corrupts data when the "
                    "footprints overlap after all",
    "FX-ALIAS-002": "an in-place operation at the wrong offset reads bytes it has already overwritten",
    "FX-ALIAS-003": "an out-of-bounds footprint reads or writes a neighbouring region: another tenant's KV cache, "
                    "or memory the device does not map at all",
    "FX-OWN-001": "a device touching a region it neither owns nor leases races with the owner and breaks "
                  "isolation between devices",
    "FX-OWN-002": "during a handoff the bytes are in flight; reading them then returns a mix of old and new data",
    "FX-OWN-003": "a handoff by a device that no longer owns the region duplicates ownership: two devices believe "
                  "they may write",
    "FX-OWN-004": "freeing, evicting or reusing memory while a copy or DMA still uses it is a use-after-free on the "
                  "fabric: the transfer reads or writes memory that now belongs to someone else",
    "FX-OWN-005": "if the final owner depends on timing, the next flow starts from an owner nobody can predict",
    "FX-MAP-001": "a `local` map lives in one device's memory; another device's program reads a different, empty copy",
    "FX-MAP-002": "concurrent non-commutative updates lose one of the writes (a lost update)",
    "FX-MAP-003": "a guard that may read a stale value lets data move before it is ready",
    "FX-MAP-004": "a per-device map holds one slot per device; reading one slot as the total undercounts",
    "FX-MAP-101": "a stronger consistency class costs synchronisation on every access; the weakest class that "
                  "still proves the policy is cheaper",
    "FX-XF-001": "compression can expand incompressible data; sizing by the average ratio overflows the destination "
                 "on the worst input",
    "FX-XF-002": "a checksum computed before a size- or value-changing transform no longer matches the bytes stored, "
                 "so corruption goes undetected or good data is rejected",
    "FX-XF-003": "a consumer that reads another dtype or layout, or only part of a multi-part layout, computes on "
                 "garbage",
    "FX-XF-004": "floating-point reductions in an unordered or mixed way give different results from run to run, and "
                 "a plain write over accumulated bytes loses the accumulation",
    "FX-HOOK-001": "a transfer with no fabric path, or driven by a device off that path, cannot be executed at all",
    "FX-HOOK-002": "a program attached to a hook the device does not have never runs",
    "FX-SMT-001": "an undecided obligation proves nothing: a gate that passed on unknown would let real bugs through",
    "FX-INT-001": "fxverify's own invariant broke, so none of its answers for this policy can be trusted",
    "FX-SUP-001": "an exception without a reason cannot be reviewed, and outlives the reason nobody wrote down",
    "FX-SUP-002": "a suppression that matches nothing hides the next finding on that line without anyone noticing",
}

_INPUT_WHY = "the policy cannot be read as written, so nothing about it can be checked until this is fixed"

#: Failing policies of the corpus and the ``ok/`` twin that fixes each (paths from the repository root).
CORPUS_PAIRS: dict[str, tuple[str, str]] = {
    "FX-ORD-001": ("corpus/ordering/fail/hb-cycle.fx", "corpus/ordering/ok/spill-then-verify.fx"),
    "FX-ORD-002": ("corpus/ordering/fail/kv-offload-unordered.fx", "corpus/ordering/ok/kv-offload-ordered.fx"),
    "FX-ORD-003": ("corpus/ordering/fail/posted-read-no-flush.fx", "corpus/ordering/ok/posted-read-after-flush.fx"),
    "FX-ORD-004": ("corpus/ordering/fail/in-order-over-unordered-link.fx", "corpus/ordering/ok/in-order-over-ordered-links.fx"),
    "FX-ALIAS-001": ("corpus/alias/fail/strided-overlap.fx", "corpus/alias/ok/interleaved-strided.fx"),
    "FX-ALIAS-002": ("corpus/alias/fail/allgather-inplace-wrong-offset.fx", "corpus/alias/ok/allgather-inplace-rank-offset.fx"),
    "FX-ALIAS-003": ("corpus/alias/fail/block-index-out-of-bounds.fx", "corpus/alias/ok/block-index-in-bounds.fx"),
    "FX-OWN-001": ("corpus/ownership/fail/dpu-reads-unleased-kv.fx", "corpus/ownership/ok/dpu-reads-leased-kv.fx"),
    "FX-OWN-002": ("corpus/ownership/fail/read-during-handoff.fx", "corpus/ownership/ok/read-after-handoff.fx"),
    "FX-OWN-003": ("corpus/ownership/fail/double-handoff.fx", "corpus/ownership/ok/handoff-round-trip.fx"),
    "FX-OWN-004": ("corpus/ownership/fail/pinned-free-before-copy.fx", "corpus/ownership/ok/pinned-free-after-copy.fx"),
    "FX-OWN-005": ("corpus/ownership/fail/final-owner-mismatch.fx", "corpus/ownership/ok/final-owner-as-declared.fx"),
    "FX-MAP-001": ("corpus/maps/fail/local-map-off-device.fx", "corpus/maps/ok/local-map-on-device.fx"),
    "FX-MAP-002": ("corpus/maps/fail/lost-owner-update.fx", "corpus/maps/ok/ordered-owner-update.fx"),
    "FX-MAP-003": ("corpus/maps/fail/eventual-guard.fx", "corpus/maps/ok/causal-guard.fx"),
    "FX-MAP-004": ("corpus/maps/fail/per-gpu-counter-read-as-one.fx", "corpus/maps/ok/per-gpu-counter-aggregated.fx"),
    "FX-XF-001": ("corpus/transforms/fail/compress-average-ratio.fx", "corpus/transforms/ok/compress-worst-case.fx"),
    "FX-XF-002": ("corpus/transforms/fail/checksum-before-compress.fx", "corpus/transforms/ok/compress-then-checksum-persist.fx"),
    "FX-XF-003": ("corpus/transforms/fail/quantize-dtype-mismatch.fx", "corpus/transforms/ok/quantize-with-scales.fx"),
    "FX-XF-004": ("corpus/transforms/fail/mixed-reduce-ops.fx", "corpus/transforms/ok/same-reduce-op.fx"),
    "FX-HOOK-001": ("corpus/hooks/fail/no-path-to-expander.fx", "corpus/hooks/ok/path-over-nvlink.fx"),
    "FX-HOOK-002": ("corpus/hooks/fail/undeclared-hook.fx", "corpus/hooks/ok/declared-hook.fx"),
    "FX-SMT-001": ("corpus/solver/fail/budget-exhausted.fx", "corpus/solver/ok/budget-sufficient.fx"),
}

#: A failing line and its fix for codes that no corpus policy triggers. They use the names of the
#: harness in tests/test_explain_init.py (devices `gpu0`, `cpu0`; regions `kv`, `host`, `pool`).
INLINE: dict[str, tuple[str, str]] = {
    "FX-SYN-001": ("edge spill move kv -> pool by gpu0.copy_done", "edge spill: move kv -> pool by gpu0.copy_done"),
    "FX-SYN-002": ("space hbm1 on gpu0 size 80 GiB $", "space hbm1 on gpu0 size 80 GiB"),
    "FX-SYN-003": ("fabric {\n  device gpu0: gpu hooks [launch", "fabric {\n  device gpu0: gpu hooks [launch]\n}"),
    "FX-SYN-004": ("(a file saved as UTF-16, or binary data)", "(save the policy as UTF-8 text)"),
    "FX-NAM-001": ("edge a: write kb by gpu0.launch", "edge a: write kv by gpu0.launch"),
    "FX-NAM-002": ("device gpu0: gpu hooks [launch]\ndevice gpu0: gpu hooks [launch]",
                   "device gpu0: gpu hooks [launch]\ndevice gpu1: gpu hooks [launch]"),
    "FX-NAM-003": ('include "fabirc.fx"', 'include "fabric.fx"'),
    "FX-NAM-004": ('include "../../shared/fabric.fx"', 'include "shared/fabric.fx"'),
    "FX-NAM-005": ('# a.fx\ninclude "b.fx"\n# b.fx\ninclude "a.fx"', '# a.fx\ninclude "b.fx"\n# b.fx (no include of a.fx)'),
    "FX-TYP-001": ("edge a: write gpu0 by gpu0.launch", "edge a: write kv by gpu0.launch"),
    "FX-TYP-002": ("region blk in hbm0 at 0x0 size 0 B owner gpu0", "region blk in hbm0 at 0x0 size 64 MiB owner gpu0"),
    "FX-TYP-003": ("space hbm1 on gpu0 size 80 Gib", "space hbm1 on gpu0 size 80 GiB"),
    "FX-TYP-004": ("for l in 0..4 {\n  edge attn[l]: write kv by gpu0.launch\n"
                   "  edge spill[l]: move kv -> pool by gpu0.copy_done after attn[l + 1]\n}",
                   "for l in 0..4 {\n  edge attn[l]: write kv by gpu0.launch\n"
                   "  edge spill[l]: move kv -> pool by gpu0.copy_done after attn[l]\n}"),
    "FX-TYP-005": ("edge spill: move kv -> pool by gpu0.copy_done bytes 1 MiB  # kv is 2 MiB",
                   "edge spill: move kv -> pool by gpu0.copy_done bytes 2 MiB"),
    "FX-LIM-001": ("for i in 0..10000000000 {\n  edge e[i]: write kv by gpu0.launch\n}",
                   "for i in 0..512 {\n  edge e[i]: write kv[i*4 KiB, +4 KiB] by gpu0.launch\n}"),
    "FX-SUP-001": ("edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-002",
                   'edge offload: move kv -> host by gpu0.copy_done  # fx: allow FX-ORD-002 reason "drained by the stream sync in step()"'),
    "FX-SUP-002": ('edge attn: write kv by gpu0.launch  # fx: allow FX-ORD-002 reason "old race, since fixed"',
                   "edge attn: write kv by gpu0.launch"),
    # Generator inputs (fxverify gen prefill): a command line or an input file, not policy text.
    "FX-GEN-001": ('fxverify gen prefill --model config.json\n# config.json: {"hidden_size": 4096 "num_hidden_layers": 32}',
                   'fxverify gen prefill --model config.json\n# config.json: {"hidden_size": 4096, "num_hidden_layers": 32, ...}'),
    "FX-GEN-002": ('# config.json: "num_attention_heads": 32, "num_key_value_heads": 7',
                   '# config.json: "num_attention_heads": 32, "num_key_value_heads": 8'),
    "FX-GEN-003": ("fxverify gen prefill --model meta-llama--Meta-Llama-3.1-70B.json --tp 2 \\\n"
                   "    --cxl cxl_test-list-BDMu-root-mem3.json --spill 1",
                   "fxverify gen prefill --model meta-llama--Meta-Llama-3.1-70B.json --tp 2 \\\n"
                   "    --cxl cxl_test-list-BDMu-root-mem3.json --spill 0.25"),
    # Lowering (fxverify lower): command lines and situations, not policy text.
    "FX-BPF-001": ("fxverify lower corpus/ordering/fail/kv-offload-unordered.fx -o out",
                   "fxverify lower corpus/ordering/ok/kv-offload-ordered.fx -o out"),
    "FX-BPF-002": ("# a map class the chosen --target has no map type for (specs/lowering.md, class table)",
                   "# pick a class the target realises, or another --target"),
    "FX-BPF-003": ("# a policy whose tables exceed the target's map layout (key type, device count, table size)",
                   "# split the policy, or narrow its key types"),
    "FX-BPF-004": ("fxverify lower p.fx -o out --kernel-verify   # a program the Linux verifier refuses",
                   "# a bug in fxverify: report it with the rewritten verifier log"),
    "FX-BPF-005": ("fxverify lower p.fx -o out   # clang fails on the emitted C",
                   "# a bug in fxverify, or a clang without the BPF target: `clang -print-targets`"),
    "FX-BPF-006": ("fxverify lower p.fx -o out --kernel-run   # a decision differs from the simulator's",
                   "# a bug in fxverify: report it with the policy"),
    "FX-BPF-007": ("# a lowering fact (a key below max_entries, a loop bound) not proved",
                   "# a bug in fxverify's tables: report it with the policy"),
    "FX-BPF-008": ("fxverify lower p.fx -o out --kernel-verify   # on a machine without clang or libbpf",
                   "apt-get install clang libbpf1   # or lower with --no-compile"),
    "FX-GEN-004": ("fxverify gen prefill --model meta-llama--Meta-Llama-3.1-8B.json --tokens 1000",
                   "fxverify gen prefill --model meta-llama--Meta-Llama-3.1-8B.json --tokens 1008"),
}


def _strip_comments(text: str) -> list[str]:
    return [ln for ln in text.splitlines(True) if not ln.lstrip().startswith("#")]


def build_examples(root: Path) -> dict[str, dict[str, str]]:
    """Read the corpus under ``root`` (the repository) and return, per code, the failing policy's
    path and text and the unified diff to its fixed twin (comment lines left out of the diff).
    Raises ``OSError`` when a corpus file is missing."""
    out: dict[str, dict[str, str]] = {}
    for code, (fail, ok) in CORPUS_PAIRS.items():
        a, b = (root / fail).read_text(encoding="utf-8"), (root / ok).read_text(encoding="utf-8")
        diff = "".join(difflib.unified_diff(_strip_comments(a), _strip_comments(b), fromfile=fail, tofile=ok, n=1))
        out[code] = {"fail_path": fail, "fail": a, "fix_path": ok, "fix_diff": diff}
    return out


def load_examples() -> dict[str, dict[str, str]]:
    """The examples shipped with fxverify (``examples.json``); ``{}`` if the file is missing."""
    try:
        return json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def why(code: Code) -> str:
    """Why ``code`` matters, in one sentence."""
    return WHY.get(code.code, _INPUT_WHY)


def explain(code: Code, examples: dict[str, dict[str, str]]) -> str:
    """The text of ``fxverify explain CODE``: the rule, why it matters, a failing example and the
    fix (from the corpus for obligation codes, inline for input codes)."""
    out = [f"{code.code}: {code.title}", f"family {code.family}, severity {code.severity.value}", "",
           f"rule: {code.rule}", f"why it matters: {why(code)}", ""]
    ex = examples.get(code.code)
    if ex is not None:
        out += [f"failing example ({ex['fail_path']}):", "", *_indent(ex["fail"]), "",
                f"fixed ({ex['fix_path']}), as a diff:", "", *_indent(ex["fix_diff"])]
    elif code.code in INLINE:
        bad, good = INLINE[code.code]
        out += ["failing example:", "", *_indent(bad), "", "fixed:", "", *_indent(good)]
    else:
        out += ["no example: this code reports a bug in fxverify, never a problem of the policy"]
    return "\n".join(out).rstrip() + "\n"


def _indent(text: str) -> list[str]:
    return ["    " + ln if ln else "" for ln in text.rstrip("\n").splitlines()]


def list_codes() -> str:
    """The text of ``fxverify explain --list``: every code with its severity and title."""
    w = max(len(c) for c in REGISTRY)
    return "".join(f"{c.code:<{w}}  {c.severity.value:<7}  {c.title}\n" for c in REGISTRY.values())


def codes_markdown(examples: dict[str, dict[str, str]]) -> str:
    """``specs/codes.md``: every code of the registry with its rule, why it matters and examples."""
    out = ["# Diagnostic codes", "",
           "Generated from the code registry (`fxverify/diagnostics/codes.py`) and the corpus by",
           "`python -m fxverify.diagnostics.explain --write`; a test keeps it in sync. `fxverify explain CODE`",
           "prints the same text.", "",
           "| code | severity | family | title |", "|---|---|---|---|"]
    out += [f"| [{c.code}](#{c.code.lower()}) | {c.severity.value} | {c.family} | {c.title} |" for c in REGISTRY.values()]
    out.append("")
    for c in REGISTRY.values():
        out += [f"## {c.code}", "", f"**{c.title}** ({c.family}, {c.severity.value})", "",
                f"Rule: {c.rule}.", "", f"Why it matters: {why(c)}.", ""]
        ex = examples.get(c.code)
        if ex is not None:
            out += [f"Failing (`{ex['fail_path']}`):", "", "```", ex["fail"].rstrip("\n"), "```", "",
                    f"Fixed (`{ex['fix_path']}`):", "", "```diff", ex["fix_diff"].rstrip("\n"), "```", ""]
        elif c.code in INLINE:
            bad, good = INLINE[c.code]
            out += ["Failing:", "", "```", bad, "```", "", "Fixed:", "", "```", good, "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    """``python -m fxverify.diagnostics.explain --write [ROOT]``: regenerate ``examples.json`` and
    ``ROOT/specs/codes.md`` from the corpus under ROOT (default: the repository of this module)."""
    if not argv or argv[0] != "--write":
        sys.stderr.write("usage: python -m fxverify.diagnostics.explain --write [ROOT]\n")
        return 2
    root = Path(argv[1]) if len(argv) > 1 else _HERE.parents[1]
    examples = build_examples(root)
    EXAMPLES_FILE.write_text(json.dumps(examples, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (root / "specs" / "codes.md").write_text(codes_markdown(examples), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
