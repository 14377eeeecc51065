"""Regenerate the real prefill policies under corpus/real/ with `fxverify gen prefill`.

Every policy here is the generator's output on the real inputs under corpus/inputs/ (Hugging
Face configs, NCCL topologies, `cxl list` listings); nothing is written by hand. The one exception
is the `.bad.fx` twin: the Llama-3.1-8B policy with one realistic bug put in by `bug()` below.
Run from anywhere:

    python corpus/real/generate.py            # rewrite every policy
    python corpus/real/generate.py --check    # exit 1 if a committed file is stale
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path("corpus/real")
MODELS = "corpus/inputs/models"
P4D = "corpus/inputs/topology/aws-p4d-24xl-topo.xml"
NDV5 = "corpus/inputs/topology/azure-ndv5-topo.xml"
BEMPU = "corpus/inputs/cxl/cxl_test-list-BEMPu.json"
BDMU = "corpus/inputs/cxl/cxl_test-list-BDMu-root-mem3.json"

# output file -> generator arguments (paths relative to the repository root, as in the headers)
POLICIES: dict[str, list[str]] = {
    # One GPU, one DPU to a decode node, CXL windows of the cxl_test listing: the README's example.
    "llama-3.1-8b-prefill.fx": ["--model", f"{MODELS}/meta-llama--Meta-Llama-3.1-8B.json", "--cxl", BDMU,
                                "--disaggregate"],
    # Mixtral on two GPUs of an Azure ND H100 v5, KV sent through the GPUs' own InfiniBand NICs.
    "mixtral-8x7b-tp2-ndv5.fx": ["--model", f"{MODELS}/mistralai--Mixtral-8x7B-v0.1.json", "--topology", NDV5,
                                 "--cxl", BEMPU, "--cxl", BDMU, "--tp", "2", "--tokens", "512", "--disaggregate"],
    # DeepSeek-V3 (MLA, 256 experts, fp8 weights) over the 8 GPUs (A100 40 GB) of a p4d.24xlarge:
    # the latent is replicated on every rank, so one rank spills and sends it. The first 12 layers
    # (3 dense, 9 MoE) keep the check of every pull request short; bench/bench_gen.py runs all 61.
    "deepseek-v3-tp8-p4d.fx": ["--model", f"{MODELS}/deepseek-ai--DeepSeek-V3.json", "--topology", P4D,
                               "--cxl", BEMPU, "--cxl", BDMU, "--tp", "8", "--tokens", "256", "--layers", "12",
                               "--hbm-gib", "40", "--disaggregate"],
    # Qwen3-8B, unrolled: every edge written out, no families.
    "qwen3-8b-tp2-unrolled.fx": ["--model", f"{MODELS}/Qwen--Qwen3-8B.json", "--tp", "2", "--tokens", "256",
                                 "--unroll"],
}
BAD = "llama-3.1-8b-prefill.bad.fx"
BUG_IF = "    if (l - 1) % 8 == 7 {"
BUG_IF_TO = ("    # BUG: layer 24 starts without waiting for checkpoint 2, whose copy may still be reading the hidden states\n"
             "    if (l - 1) % 8 == 7 and l != 24 {")
BUG_AT = "edge ckpt[i]: move act0 -> ck_decoder3_2[i] by gpu0.copy_done after rs_f[i * 8 + 7, 0, 0]"


def generate(name: str, args: list[str], out: Path) -> str:
    """Run `fxverify gen prefill ARGS -o OUT` from the repository root; return the text."""
    cmd = [sys.executable, "-m", "fxverify", "gen", "prefill", *args, "--name", name.removesuffix(".fx"), "-o", str(out)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"generation of {name} failed:\n{r.stderr}")
    return out.read_text()


def bug(text: str) -> str:
    """The one-bug twin: layer 24 stops waiting for checkpoint 2 before it changes the hidden
    states, so the checkpoint copy races with the residual reductions (FX-ORD-002, reported on the
    checkpoint edge, the read whose value can be torn)."""
    assert text.count(BUG_IF) == 1 and text.count(BUG_AT) == 1, "the generated flow moved; update BUG_IF/BUG_AT"
    # The expectation goes at the end of the checkpoint edge's line (its clauses run on after BUG_AT).
    at = text.index(BUG_AT)
    end = text.index("\n", at)
    text = text[:end] + "  # expect: FX-ORD-002" + "".join(
        f"\n    # ^ data race (write-read) on `act0`: `{rs}[24][0][0]` and `ckpt[2]` may overlap in time"
        for rs in ("rs_a", "rs_f")) + text[end:]
    text = text.replace(BUG_IF, BUG_IF_TO)
    text = text.replace('policy "llama-3.1-8b-prefill"', 'policy "llama-3.1-8b-prefill.bad"')
    return "# ONE-BUG TWIN of llama-3.1-8b-prefill.fx (see corpus/real/generate.py, bug()).\n" + text


def render_all(tmp: Path) -> dict[Path, str]:
    """Every file of corpus/real/ as the generator makes it now, by repository-relative path."""
    out = {HERE / name: generate(name, args, tmp / name) for name, args in POLICIES.items()}
    out[HERE / BAD] = bug(out[HERE / "llama-3.1-8b-prefill.fx"])
    return out


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as d:
        files = render_all(Path(d))
    if "--check" in argv:
        stale = [str(p) for p, text in files.items() if not (ROOT / p).exists() or (ROOT / p).read_text() != text]
        if stale:
            print("stale: " + ", ".join(stale) + " (run python corpus/real/generate.py)")
            return 1
        return 0
    for p, text in files.items():
        tmp = ROOT / p.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, ROOT / p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
