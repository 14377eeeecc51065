"""Benchmark the targets of issue "Scale" side by side in one run, as ratios (never as timed tests).

Prints, on this machine, each figure with the reference it is a ratio to, measured in the same run:
- P1: the check of corpus/real/llama-3.1-8b-prefill.fx against parse + resolve only (target: check
  <= 3 x parse-only), in one process and with ``--jobs`` set to this machine's cores (shards on
  workers forked after the policy is resolved); the medians of ``--repeat`` rounds (default 3);
- P2: Llama-3.1-70B, TP 8 on the p4d topology, ``--disaggregate``, 8192 tokens, as ``gen prefill``
  writes it (edge families; ``--p2-layers`` keeps the first N layers), against its parse (target:
  check < 120 s and < 3 GB at 80 layers);
- P3: Llama-3.1-70B, TP 8 on the p4d topology, ``--disaggregate --unroll`` at two prompt lengths
  (default 1024 and 8192 tokens): the exponent of check time in tokens and in edges (target
  <= 1.15); ``--layers`` keeps the first N layers (80: the full model);
- P4: the P2 policy (edge families) at 8 against 80 layers, ``--p4-tokens`` prompt tokens
  (default 8192): the check's time ratio (target <= 1.5);
- P5: DeepSeek-V3 at tensor parallel 1, full size (61 layers, 8192 tokens), as ``gen prefill``
  writes it, against its parse (target: check < 20 s);
- P6: a warm re-check after a one-edge edit of the 8B policy (``check --cache-dir``: the result
  cache), against the cold check and against start-up (``fxverify --version``);
- P7: ``fxverify --version`` against a bare Python start-up (target < 0.3 s);
- the scaling curve: edges against seconds and peak memory for 70B TP 8 policies of growing size,
  from about 1k edges up to ``--max-edges`` (750k: the full-size 8192-token policy; memory
  matters, so each check runs in a fresh process whose peak RSS is read); ``family-curve`` is the
  same in edge families, which the 8 MiB input limit does not stop, up to the full size.
Every check runs in its own process (``--worker``), so figures do not share caches or memory. Wall
and CPU seconds are both printed: on a shared machine CPU time is the steadier figure. The child
processes read compiled bytecode, as an installed package does (pip compiles it at install): where
the environment forbids writing it (``PYTHONDONTWRITEBYTECODE``), they cache it in a temporary
folder (``PYTHONPYCACHEPREFIX``), compiled before the first figure, rather than compile every
module from source in each process (about 0.5 s of each figure that starts a CLI).

Run from the repository root:

    python bench/bench_scale.py                       # everything, the curve up to 40k edges
    python bench/bench_scale.py --only p1,p5,p7        # some parts
    python bench/bench_scale.py --max-edges 760000     # the curve to full size (hours, ~10 GB)
    python bench/bench_scale.py --only p2,family-curve --max-edges 700000  # P2 and the curve to full size (minutes)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from fxverify.gate.executors import usable_cores  # noqa: E402 - after the path
REAL = ROOT / "corpus/real/llama-3.1-8b-prefill.fx"
MODEL_70B = ROOT / "corpus/inputs/models/meta-llama--Meta-Llama-3.1-70B.json"
MODEL_DSV3 = ROOT / "corpus/inputs/models/deepseek-ai--DeepSeek-V3.json"
P4D = ROOT / "corpus/inputs/topology/aws-p4d-24xl-topo.xml"
#: Workers of the ``--jobs`` figure of P1: this machine's cores (those this process may use).
JOBS = usable_cores()
#: (layers, tokens) of the scaling curve, smallest first: about 1k edges to the full size
CURVE = [(2, 256), (8, 256), (8, 1024), (16, 2048), (40, 2048), (80, 2048), (40, 8192), (80, 8192)]


def _worker(path: str, mode: str) -> None:
    """Runs in a fresh process: parse + resolve (``parse``) or the whole check (``check``) of
    ``path``, with the collector thresholds the ``fxverify`` command sets; prints one JSON line
    with wall and CPU seconds, edges, obligations and peak RSS."""
    sys.path.insert(0, str(ROOT))
    import gc

    from fxverify.launch import GC_THRESHOLDS
    from fxverify.pipeline import CheckOptions, check
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    gc.set_threshold(*GC_THRESHOLDS)  # as `fxverify` runs a check (launch.main)

    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "parse":
        pol, diags = load_policy(path, SourceMap())
        out: dict = {"edges": len(pol.edges) if pol else 0}
    elif mode == "check-jobs":  # as `fxverify check --jobs N --no-cache` runs it: shards on forked workers
        from fxverify.gate.run import run_checks

        (r,), _stats = run_checks([path], CheckOptions(verify_hints=False), None, jobs=JOBS)
        pol, diags = None, r.diagnostics
        out = {"obligations": len(r.outcomes), "verdict": r.verdict.value if r.verdict else "error"}
        if r.verdict is None:
            out["problem"] = "the policy did not load"
    else:
        r = check(path, CheckOptions(verify_hints=False, parametric=mode != "check-unrolled"))
        pol, diags = r.policy, r.diagnostics
        out = {"edges": len(r.policy.edges) if r.policy else 0, "obligations": len(r.outcomes),
               "verdict": r.verdict.value if r.verdict else "error",
               "parametric": sum(c.get("by:parametric", 0) for c in r.counts().values()),
               "fell_back": sum(1 for x in r.parametric if x[5])}
    if pol is None and mode != "check-jobs":  # the input was refused (FX-LIM-001, a parse error...): nothing was measured
        first = next((d for d in diags if d.is_error), None)
        out["problem"] = f"{first.code}: {first.message}" if first is not None else "the policy did not load"
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.update(wall=time.perf_counter() - t0, cpu=time.process_time() - c0 + kids.ru_utime + kids.ru_stime,
               rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, child_rss_mib=kids.ru_maxrss / 1024)
    print(json.dumps(out))


def _run(path: Path, mode: str) -> dict:
    r = subprocess.run([sys.executable, __file__, "--worker", str(path), mode], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"worker failed on {path} ({mode}):\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _refused(layers: int, tokens: int, x: dict) -> str | None:
    """The curve's row for a policy the check refused as input (``x["problem"]``: its first
    diagnostic's code and message), or ``None`` when ``x`` is a measurement. A refused input
    measured nothing, so its row has no figures (zeros would read as an instant check)."""
    if "problem" not in x:
        return None
    return f"    {layers:>6}{tokens:>8}  not measured, the input was refused: {x['problem']}"


def _compiled_children(prefix: Path) -> None:
    """Let this run's child processes write and read bytecode, in ``prefix`` (the module docstring),
    and compile the package there now."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fxverify")], cwd=ROOT, check=True)


def _cli(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "fxverify", *args], cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - t0, r


def _gen_70b(d: Path, layers: int, tokens: int, unroll: bool = True) -> Path:
    out = d / f"llama-3.1-70b-tp8-L{layers}-T{tokens}{'' if unroll else '-families'}.fx"
    t, r = _cli("gen", "prefill", "--model", str(MODEL_70B), "--topology", str(P4D), "--tp", "8", "--tokens",
                str(tokens), "--layers", str(layers), "--disaggregate", *(("--unroll",) if unroll else ()), "-o", str(out))
    if r.returncode != 0:
        sys.exit(f"generation failed:\n{r.stderr}")
    return out


def p1(repeat: int = 3) -> None:
    """P1: parse + resolve, the check in one process and the check with ``--jobs``, each in a
    fresh process, ``repeat`` rounds of the three one after the other; the median of each
    (a machine shared with others slows single runs by a tenth and more, and the median of rounds
    taken side by side keeps the ratio steady). The check without parametric proofs, once."""
    rounds = [(_run(REAL, "parse"), _run(REAL, "check"), _run(REAL, "check-jobs")) for _ in range(max(1, repeat))]
    refused = next((x for r in rounds for x in r if "problem" in x), None)
    if refused is not None:
        print(f"P1  {REAL.relative_to(ROOT)}: not measured, the input was refused: {refused['problem']}")
        return
    parse, full, jobs = (_median([r[i] for r in rounds]) for i in range(3))
    unrolled = _run(REAL, "check-unrolled")
    spread = "" if len(rounds) == 1 else (
        f" (medians of {len(rounds)} rounds; check/parse per round: "
        + ", ".join(f"{r[1]['wall'] / r[0]['wall']:.2f}" for r in rounds) + "; with --jobs: "
        + ", ".join(f"{r[2]['wall'] / r[0]['wall']:.2f}" for r in rounds) + ")")
    print(f"P1  {REAL.relative_to(ROOT)}: {full['edges']} edges, {full['obligations']} obligations, {full['verdict']}{spread}")
    print(f"    parse+resolve {parse['wall']:.2f} s (cpu {parse['cpu']:.2f}) | check {full['wall']:.2f} s "
          f"(cpu {full['cpu']:.2f}) | check/parse {full['wall'] / parse['wall']:.2f} (cpu {full['cpu'] / parse['cpu']:.2f}) "
          f"[target <= 3] | peak {full['rss_mib']:.0f} MiB")
    print(f"    {_parametric(full)} | check without them (--no-parametric) {unrolled['wall']:.2f} s: "
          f"{full['wall'] / unrolled['wall']:.2f}x")
    print(f"    check --jobs {JOBS} (workers forked after resolving) {jobs['wall']:.2f} s (cpu {jobs['cpu']:.2f}, its "
          f"workers' included) | check/parse {jobs['wall'] / parse['wall']:.2f} [target <= 3] | {full['wall'] / jobs['wall']:.2f}x "
          f"the speed of one process | peak {jobs['rss_mib']:.0f} MiB here, {jobs['child_rss_mib']:.0f} MiB in a worker")


def _median(runs: list[dict]) -> dict:
    """The run of ``runs`` whose wall time is the median (the lower middle one of an even count),
    whole: its CPU seconds and peak memory go with it."""
    return sorted(runs, key=lambda r: r["wall"])[(len(runs) - 1) // 2]


def _parametric(x: dict) -> str:
    return (f"proved parametrically {x['parametric']} of {x['obligations']} obligations "
            f"({x['fell_back']} declarations fell back to their instances)")


def _beside_parse(part: str, what: str, path: Path, targets: str) -> None:
    """Check ``path`` and parse it, each in a fresh process, and print the figures of ``part``
    (``P2``...) with its ``targets`` (a refused input prints its diagnostic instead)."""
    parse, x = _run(path, "parse"), _run(path, "check")
    if "problem" in x:
        print(f"{part}  not measured, the input was refused: {x['problem']}")
        return
    print(f"{part}  {what}: {x['edges']} edges, {x['obligations']} obligations, {x['verdict']}")
    print(f"    parse+resolve {parse['wall']:.2f} s (cpu {parse['cpu']:.2f}) | check {x['wall']:.2f} s (cpu {x['cpu']:.2f}) "
          f"| peak {x['rss_mib']:.0f} MiB [{targets}] | check/parse {x['wall'] / parse['wall']:.2f}")
    print(f"    {_parametric(x)}")


def p2(d: Path, layers: int) -> None:
    """The 70B TP8 p4d ``--disaggregate`` 8192-token policy as ``gen prefill`` writes it (edge
    families, unrolled by the checker: the file of the unrolled form exceeds the 8 MiB input
    limit), ``layers`` of its 80 layers, checked in a fresh process beside its parse."""
    _beside_parse("P2", f"70B TP8 p4d --disaggregate, 8192 tokens, {layers} layers (edge families)",
                  _gen_70b(d, layers, 8192, unroll=False), "target at 80 layers: < 120 s, < 3072 MiB")


def p4(d: Path, tokens: int, small: int = 8, large: int = 80) -> None:
    """P4: the 70B TP8 p4d ``--disaggregate`` policy as ``gen prefill`` writes it (edge families),
    ``small`` against ``large`` layers at ``tokens`` prompt tokens, each checked in a fresh
    process: the time ratio (target <= 1.5, which a check proving families without unrolling
    them would meet), beside the ratio of edges the checker unrolls and of parametric proofs."""
    a, b = (_run(_gen_70b(d, n, tokens, unroll=False), "check") for n in (small, large))
    if "problem" in a or "problem" in b:
        print(f"P4  not measured, the input was refused: {(a if 'problem' in a else b)['problem']}")
        return
    print(f"P4  70B TP8 p4d --disaggregate, {tokens} tokens, edge families: {small} against {large} layers")
    for n, x in ((small, a), (large, b)):
        print(f"    {n:>3} layers: {x['edges']:>8} edges, {x['obligations']:>9} obligations, {x['wall']:8.2f} s "
              f"(cpu {x['cpu']:.2f}), {x['rss_mib']:.0f} MiB, {x['verdict']}; {_parametric(x)}")
    print(f"    time ratio {b['wall'] / a['wall']:.2f} (cpu {b['cpu'] / a['cpu']:.2f}) [target <= 1.5] | edges "
          f"{b['edges'] / a['edges']:.2f}x, obligations {b['obligations'] / a['obligations']:.2f}x (the checker "
          "unrolls edge families)")


def p5(d: Path, tokens: int) -> None:
    """DeepSeek-V3 at TP 1 (one GPU: MLA latent KV, 58 MoE layers of 256 routed experts), all 61
    layers, ``tokens`` prompt tokens, as ``gen prefill`` writes it, checked in a fresh process
    beside its parse."""
    path = d / f"deepseek-v3-tp1-T{tokens}.fx"
    _t, r = _cli("gen", "prefill", "--model", str(MODEL_DSV3), "--tp", "1", "--tokens", str(tokens), "-o", str(path))
    if r.returncode != 0:
        sys.exit(f"generation failed:\n{r.stderr}")
    _beside_parse("P5", f"DeepSeek-V3 TP1, {tokens} tokens, 61 layers", path, "target at 8192 tokens: < 20 s")


#: (layers, tokens) of the curve of ``gen prefill``'s own output (edge families), about 1k edges
#: to the full-size 8192-token policy (672k edges)
FAMILY_CURVE = [(2, 256), (8, 1024), (8, 8192), (16, 8192), (32, 8192), (80, 8192)]


def family_curve(d: Path, max_edges: int) -> None:
    print("scaling curve: 70B TP8 p4d --disaggregate, edge families (each check in a fresh process)")
    print(f"    {'layers':>6}{'tokens':>8}{'edges':>9}{'obligations':>13}{'check s':>9}{'cpu':>8}{'peak MiB':>10}{'s per 100k edges':>18}")
    for layers, tokens in FAMILY_CURVE:
        path = _gen_70b(d, layers, tokens, unroll=False)
        x = _run(path, "check")
        refused = _refused(layers, tokens, x)
        if refused is not None:
            print(refused)
            break
        print(f"    {layers:>6}{tokens:>8}{x['edges']:>9}{x['obligations']:>13}{x['wall']:>9.2f}{x['cpu']:>8.2f}"
              f"{x['rss_mib']:>10.0f}{x['cpu'] / x['edges'] * 1e5:>18.2f}")
        path.unlink()
        if x["edges"] > max_edges:
            print("    (larger policies not checked: --max-edges)")
            break


def p3(d: Path, layers: int, t1: int, t2: int) -> None:
    a, b = _run(_gen_70b(d, layers, t1), "check"), _run(_gen_70b(d, layers, t2), "check")
    if "problem" in a or "problem" in b:
        print(f"P3  not measured, the input was refused: {(a if 'problem' in a else b)['problem']}")
        return
    tok, edges = math.log(t2 / t1), math.log(b["edges"] / a["edges"])
    print(f"P3  70B TP8 p4d --disaggregate --unroll, {layers} layers")
    for t, x in ((t1, a), (t2, b)):
        print(f"    {t:>6} tokens: {x['edges']:>8} edges, {x['obligations']:>9} obligations, {x['wall']:8.2f} s "
              f"(cpu {x['cpu']:.2f}), {x['rss_mib']:.0f} MiB, {x['verdict']}")
    print(f"    time exponent in tokens {math.log(b['wall'] / a['wall']) / tok:.2f} (cpu {math.log(b['cpu'] / a['cpu']) / tok:.2f}), "
          f"in edges {math.log(b['wall'] / a['wall']) / edges:.2f} (cpu {math.log(b['cpu'] / a['cpu']) / edges:.2f}) [target <= 1.15]")


def p6(d: Path) -> None:
    """Cold check into an empty result cache, warm re-check of the same file, then a re-check
    after one edge's edit of the hook that drives it (the hooks family reads it, the others take
    their proofs from the cache's families level), and one after its `after` clause is dropped
    (the flow's order: every family reads it, so all run again)."""
    pol = d / "llama-3.1-8b-prefill.fx"
    pol.write_text(REAL.read_text())
    cache = d / "cache"
    args = ("check", str(pol), "--quiet", "--cache-dir", str(cache))
    t_up, _ = _cli("--version")
    t_cold, _ = _cli(*args)
    t_warm, _ = _cli(*args)
    text = pol.read_text()
    edit = "  edge embed[0]: write act0 by gpu0.launch after emb[0]\n"
    assert text.count(edit) == 1, "the 8B policy changed: update the edited line"
    pol.write_text(text.replace(edit, edit.replace("by gpu0.launch", "by gpu0.copy_done")))
    t_edit, _ = _cli(*args)
    pol.write_text(text.replace(edit, edit.replace(" after emb[0]", "")))
    t_order, _ = _cli(*args)
    print("P6  8B warm re-check after a one-edge edit (result cache)")
    print(f"    start-up {t_up:.2f} s | cold {t_cold:.2f} s | warm, unchanged {t_warm:.2f} s | warm, one edge's hook edited "
          f"{t_edit:.2f} s: {t_edit - t_up:.2f} s beyond start-up [target < 1], {t_edit / t_cold:.2f} x cold | "
          f"warm, one edge's `after` edited {t_order:.2f} s, {t_order / t_cold:.2f} x cold")


def p7() -> None:
    runs = 5
    bare = min(_timed([sys.executable, "-c", "pass"]) for _ in range(runs))
    version = min(_timed([sys.executable, "-m", "fxverify", "--version"]) for _ in range(runs))
    print(f"P7  fxverify --version {version:.3f} s (best of {runs}) [target < 0.3] | bare python {bare:.3f} s | "
          f"ratio {version / bare:.2f}")


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
    return time.perf_counter() - t0


def curve(d: Path, max_edges: int) -> None:
    print("scaling curve: 70B TP8 p4d --disaggregate --unroll (each check in a fresh process)")
    print(f"    {'layers':>6}{'tokens':>8}{'edges':>9}{'obligations':>13}{'parse s':>9}{'cpu':>7}{'check s':>9}{'cpu':>7}"
          f"{'check/parse':>12}{'cpu':>7}{'peak MiB':>10}")
    for layers, tokens in CURVE:
        path = _gen_70b(d, layers, tokens)
        parse = _run(path, "parse")
        refused = _refused(layers, tokens, parse)
        if refused is None and parse["edges"] <= max_edges:
            x = _run(path, "check")
            refused = _refused(layers, tokens, x)
        if refused is not None:
            print(refused)
            print("    (larger policies not checked)")
            break
        if parse["edges"] > max_edges:
            print(f"    {layers:>6}{tokens:>8}{parse['edges']:>9}  (over --max-edges, not checked)")
            break
        print(f"    {layers:>6}{tokens:>8}{x['edges']:>9}{x['obligations']:>13}{parse['wall']:>9.2f}{parse['cpu']:>7.2f}"
              f"{x['wall']:>9.2f}{x['cpu']:>7.2f}{x['wall'] / parse['wall']:>12.2f}{x['cpu'] / parse['cpu']:>7.2f}"
              f"{x['rss_mib']:>10.0f}")
        path.unlink()


def _two_layer_counts(text: str) -> tuple[int, int]:
    """``--p4-layers``: two positive layer counts, ``SMALL,LARGE``; exits with a message otherwise."""
    try:
        small, large = (int(x) for x in text.split(","))
    except ValueError:
        sys.exit(f"--p4-layers takes two layer counts, SMALL,LARGE (such as 8,80), not `{text}`")
    if not 0 < small < large:
        sys.exit(f"--p4-layers: the counts must be positive and the first smaller, not `{text}`")
    return small, large


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--only", default="p1,p3,p5,p6,p7,curve",
                    help="comma-separated parts: p1, p2, p3, p4, p5, p6, p7, curve, family-curve (p2, p4 and family-curve "
                         "take minutes)")
    ap.add_argument("--p2-layers", type=int, default=80, help="layers of the P2 policy (80: the full model)")
    ap.add_argument("--layers", type=int, default=4, help="layers of the P3 policies (80: the full model)")
    ap.add_argument("--tokens", default="1024,8192", help="the two prompt lengths of P3")
    ap.add_argument("--p4-tokens", type=int, default=8192, help="prompt tokens of the P4 policies (8192: full size)")
    ap.add_argument("--p4-layers", default="8,80", help="the two layer counts P4 compares")
    ap.add_argument("--p5-tokens", type=int, default=8192, help="prompt tokens of the P5 policy (8192: full size)")
    ap.add_argument("--max-edges", type=int, default=40_000, help="largest policy of the scaling curve")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of P1's three measurements, side by side (the medians are printed)")
    a = ap.parse_args()
    if a.worker:
        _worker(*a.worker)
        return 0
    parts = set(a.only.split(","))
    with tempfile.TemporaryDirectory(prefix="fxverify-bench-scale-") as tmp:
        d = Path(tmp)
        _compiled_children(d / "pycache")
        if "p7" in parts:
            p7()
        if "p1" in parts:
            p1(a.repeat)
        if "p2" in parts:
            p2(d, a.p2_layers)
        if "p3" in parts:
            t1, t2 = (int(x) for x in a.tokens.split(","))
            p3(d, a.layers, t1, t2)
        if "p4" in parts:
            p4(d, a.p4_tokens, *_two_layer_counts(a.p4_layers))
        if "p5" in parts:
            p5(d, a.p5_tokens)
        if "p6" in parts:
            p6(d)
        if "curve" in parts:
            curve(d, a.max_edges)
        if "family-curve" in parts:
            family_curve(d, a.max_edges)
    return 0


if __name__ == "__main__":
    sys.exit(main())
