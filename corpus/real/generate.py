"""Generate the real Llama-3.1-8B prefill policy and its one-bug twin from the real inputs.

Every byte count is derived here from the model's Hugging Face config and the CXL root-decoder
windows of a `cxl list` listing (both copied under corpus/inputs/); nothing is typed by hand.
Run from the repository root:

    python corpus/real/generate.py            # rewrite both policies
    python corpus/real/generate.py --check    # exit 1 if the committed files are stale

Scenario: prefill of one 8192-token request on one GPU (gpu0), one DPU (dpu0) and one CXL memory
expander (cxl0). Per layer the GPU streams attention and FFN weights, writes the layer's KV cache
in 16-token blocks, reduces attention and FFN outputs into the residual stream, and (every 8th
layer) checkpoints the hidden states, lz4-compressed, into CXL memory. The last quarter of the
layers spill their KV blocks to CXL as fp8 (quantize with per-128 scales, then crc32c) and hand them
to the expander. The DPU sends every KV block to a remote decode node over a posted RDMA link,
flushes the link per layer, and hands the remote layer buffer to the decode node. Each HBM block
returns to the pool once attention, the spill and the send are done.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "corpus/inputs/models/meta-llama--Meta-Llama-3.1-8B.json"
CXL = ROOT / "corpus/inputs/cxl/cxl_test-list-BDMu-root-mem3.json"
OUT_OK = ROOT / "corpus/real/llama-3.1-8b-prefill.fx"
OUT_BAD = ROOT / "corpus/real/llama-3.1-8b-prefill.bad.fx"

TOKENS = 8192
BLOCK_TOKENS = 16
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
SPILL_FRACTION = 4  # the last 1/4 of the layers spill their KV to CXL
QUANT_GROUP = 128  # fp8 elements per fp32 scale
CKPT_EVERY = 8  # checkpoint the hidden states after every 8th layer
PAGE = 4096


def lz4_bound(n: int) -> int:
    """LZ4_COMPRESSBOUND(n) from lz4.h: the worst case for incompressible input."""
    return n + n // 255 + 16


def round_up(n: int, a: int) -> int:
    return -(-n // a) * a


def mib(n: int) -> str:
    return f"{n // (1 << 20)} MiB" if n % (1 << 20) == 0 else f"{n} B"


def windows() -> dict[str, tuple[int, int, bool]]:
    """Root-decoder windows: name -> (base, size in bytes, persistent)."""
    doc = json.loads(CXL.read_text())
    out = {}
    for key, decs in doc.items():
        if not key.startswith("decoders:"):
            continue
        for d in decs:
            m = re.match(r"([0-9.]+) (KiB|MiB|GiB)", d["size"])
            assert m, d["size"]
            size = int(float(m.group(1)) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(2)])
            out[d["decoder"]] = (int(d["resource"], 16), size, bool(d.get("pmem_capable")))
    return out


def derive(tokens: int = TOKENS, layers: int | None = None) -> dict[str, int]:
    """Every size of the scenario, in bytes, from the model config (``layers`` overrides the
    config's layer count; benchmarks use it to build smaller variants)."""
    cfg = json.loads(MODEL.read_text())
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    head_dim = cfg.get("head_dim") or hidden // heads
    d = {
        "layers": layers or cfg["num_hidden_layers"], "hidden": hidden, "heads": heads, "kv_heads": cfg["num_key_value_heads"],
        "head_dim": head_dim, "inter": cfg["intermediate_size"], "dtype": DTYPE_BYTES[cfg["torch_dtype"]],
    }
    d["kv_tok_layer"] = 2 * d["kv_heads"] * head_dim * d["dtype"]
    d["kv_tok"] = d["kv_tok_layer"] * d["layers"]
    d["block"] = BLOCK_TOKENS * d["kv_tok_layer"]
    d["tokens"] = tokens
    d["blocks"] = tokens // BLOCK_TOKENS
    d["layer_kv"] = d["block"] * d["blocks"]
    q = hidden * heads * head_dim
    kv = 2 * hidden * d["kv_heads"] * head_dim
    o = heads * head_dim * hidden
    d["w_attn"] = (q + kv + o) * d["dtype"]
    d["w_ffn"] = 3 * hidden * d["inter"] * d["dtype"]
    d["act"] = tokens * hidden * d["dtype"]
    d["inter_act"] = tokens * d["inter"] * d["dtype"]
    elems = d["block"] // d["dtype"]
    d["spill_block"] = elems * 1 + -(-elems // QUANT_GROUP) * 4
    d["spill_layers"] = d["layers"] // SPILL_FRACTION
    d["ckpt"] = round_up(lz4_bound(d["act"]), PAGE)
    d["ckpts"] = d["layers"] // CKPT_EVERY
    return d


def render(bad: bool, tokens: int = TOKENS, layers: int | None = None) -> str:
    """The policy text; ``bad`` adds the one-line bug (an early return of a KV block to the pool)."""
    d = derive(tokens, layers)
    TOKENS = d["tokens"]  # noqa: N806 - the f-strings below read it
    win = windows()
    kv_base, kv_size, _ = win["decoder3.0"]
    ck_base, ck_size, _ = win["decoder3.1"]
    L, B = d["layers"], d["blocks"]
    first_spill = L - d["spill_layers"]
    assert d["spill_layers"] * B * d["spill_block"] <= kv_size, "KV spill does not fit decoder3.0"
    assert d["ckpts"] * d["ckpt"] <= ck_size, "checkpoints do not fit decoder3.1"
    w_total = (d["w_attn"] + d["w_ffn"]) * L
    hbm = 80 << 30
    kv_at = 0
    w_at = kv_at + L * d["layer_kv"]
    act_at = w_at + w_total
    tmp_at = act_at + d["act"]
    inter_at = tmp_at + d["act"]
    assert inter_at + d["inter_act"] <= hbm
    name = "llama-3.1-8b-prefill" + (".bad" if bad else "")
    bug = bug_end = ""
    if bad:
        # The one realistic bug: the last block is returned to the pool once attention and the spill
        # are done, forgetting the DPU's send, which may still be reading it.
        bug = (f"        if l == {L - 1} and b == {B - 1} {{\n"
               f"          # BUG: returned to the pool while the DPU's send of the block may be in flight\n"
               f"          edge free_kv[l, b]: release kvb[l, b] return_pool by gpu0.free after attn[l], spill[l, b]"
               f"  # expect: FX-OWN-004\n"
               f"        }} else {{\n  ")
        bug_end = "        }\n"
    lines = f'''# Llama-3.1-8B prefill of one {TOKENS}-token request on one GPU, one DPU and one CXL expander.
# GENERATED by corpus/real/generate.py from corpus/inputs/models/meta-llama--Meta-Llama-3.1-8B.json
# and corpus/inputs/cxl/cxl_test-list-BDMu-root-mem3.json; do not edit by hand.
#
# Derivation (from the config):
#   head_dim = hidden_size / num_attention_heads = {d["hidden"]} / {d["heads"]} = {d["head_dim"]}
#   KV per token per layer = 2 (K,V) x {d["kv_heads"]} kv_heads x {d["head_dim"]} x {d["dtype"]} B = {d["kv_tok_layer"]} B
#   KV per token, all {L} layers = {d["kv_tok"]} B ({d["kv_tok"] // 1024} KiB)
#   KV block = {BLOCK_TOKENS} tok x {d["kv_tok_layer"]} B = {d["block"]} B ({d["block"] // 1024} KiB); {TOKENS} / {BLOCK_TOKENS} = {B} blocks per layer
#   KV block writes = {L} layers x {B} blocks = {L * B}
#   attention weights per layer = (q {d["hidden"]}x{d["heads"] * d["head_dim"]} + k,v 2x{d["hidden"]}x{d["kv_heads"] * d["head_dim"]} + o) x {d["dtype"]} B = {d["w_attn"]} B
#   FFN weights per layer = 3 x {d["hidden"]} x {d["inter"]} x {d["dtype"]} B = {d["w_ffn"]} B
#   hidden states = {TOKENS} x {d["hidden"]} x {d["dtype"]} B = {d["act"]} B; FFN intermediate = {TOKENS} x {d["inter"]} x {d["dtype"]} B = {d["inter_act"]} B
#   fp8 spill block = {d["block"] // d["dtype"]} elems x 1 B + ceil({d["block"] // d["dtype"]} / {QUANT_GROUP}) fp32 scales x 4 B = {d["spill_block"]} B
#   lz4 checkpoint slot = LZ4_COMPRESSBOUND({d["act"]}) rounded to {PAGE} B = {d["ckpt"]} B
policy "{name}"

fabric {{
  device gpu0: gpu hooks [launch, copy_done, free]
  device dpu0: dpu hooks [rx, tx, dma_done]
  device cxl0: cxl_mem hooks [near_mem]
  device decode0: gpu hooks [launch]
  link gpu0 -- cxl0 : cxl ordered
  link gpu0 -- dpu0 : pcie ordered
  link dpu0 -- decode0 : rdma posted
}}

space hbm0 on gpu0 size 80 GiB
space hdm_kv on cxl0 base {kv_base:#x} size {mib(kv_size)}      # decoder3.0, volatile
space hdm_ckpt on cxl0 base {ck_base:#x} size {mib(ck_size)}    # decoder3.1, volatile
space rhbm on decode0 size 80 GiB

region kvl[l in 0..{L}] in hbm0 at {kv_at:#x} + l * {d["layer_kv"]} size {d["layer_kv"]} owner gpu0 dtype bf16
region kvb[l in 0..{L}, b in 0..{B}] in hbm0 at {kv_at:#x} + (l * {B} + b) * {d["block"]} size {d["block"]} owner gpu0 dtype bf16
region wattn[l in 0..{L}] in hbm0 at {w_at:#x} + l * {d["w_attn"] + d["w_ffn"]} size {d["w_attn"]} owner gpu0 dtype bf16
region wffn[l in 0..{L}] in hbm0 at {w_at + d["w_attn"]:#x} + l * {d["w_attn"] + d["w_ffn"]} size {d["w_ffn"]} owner gpu0 dtype bf16
region act in hbm0 at {act_at:#x} size {d["act"]} owner gpu0 dtype bf16
region tmp in hbm0 at {tmp_at:#x} size {d["act"]} owner gpu0 dtype bf16
region inter in hbm0 at {inter_at:#x} size {d["inter_act"]} owner gpu0 dtype bf16
region kvs[i in 0..{d["spill_layers"]}, b in 0..{B}] in hdm_kv at {kv_base:#x} + (i * {B} + b) * {d["spill_block"]} size {d["spill_block"]} owner gpu0 dtype fp8
region ackpt[i in 0..{d["ckpts"]}] in hdm_ckpt at {ck_base:#x} + i * {d["ckpt"]} size {d["ckpt"]} owner gpu0
region rkv[l in 0..{L}] in rhbm at l * {d["layer_kv"]} size {d["layer_kv"]} owner dpu0 dtype bf16
alias_set kvcache = [kvl, kvb]          # a layer's view and its blocks are the same bytes

map block_owner: hash<u32, device>[{L * B}] class linearizable
map kv_sent: array<u32, u64>[{L}] class per_device merge sum
map layer_done: array<u32, u32>[{L}] class causal
map gpu_stats: array<u32, u64>[4] class local(gpu0) merge sum

flow prefill {{
  edge embed: write act by gpu0.launch stream compute
  for l in 0..{L} {{
    if l == 0 {{
      edge wq[l]: read wattn[l] by gpu0.launch after embed stream compute reuse {mib(d["w_attn"])} rw 1:0
    }} else {{
      if (l - 1) % {CKPT_EVERY} == {CKPT_EVERY - 1} {{
        # the next layer overwrites the hidden states, so it waits for their checkpoint copy
        edge wq[l]: read wattn[l] by gpu0.launch after ffn_down[l - 1], ckpt[l - 1] stream compute reuse {mib(d["w_attn"])} rw 1:0
            guard layer_done[l - 1] == 1
      }} else {{
        edge wq[l]: read wattn[l] by gpu0.launch after ffn_down[l - 1] stream compute reuse {mib(d["w_attn"])} rw 1:0
            guard layer_done[l - 1] == 1
      }}
    }}
    for b in 0..{B} {{
      # one {d["block"] // 1024} KiB KV block: {BLOCK_TOKENS} tokens x {d["kv_tok_layer"]} B
      edge kvw[l, b]: write kvb[l, b] by gpu0.launch after wq[l]
          lease kvb[l, b] to dpu0
          update gpu_stats[0] = 1
      edge send[l, b]: move kvb[l, b] -> rkv[l][b * {d["block"]}, +{d["block"]}] by dpu0.tx after kvw[l, b]
          update kv_sent[l] = 1
    }}
    # attention reads the layer's whole KV cache and writes its output
    edge attn[l]: move kvl[l] -> tmp by gpu0.launch after kvw[l, *] bytes {d["layer_kv"]} reuse {d["layer_kv"]} rw 1:1
    edge resid1[l]: reduce(sum) tmp -> act by gpu0.launch after attn[l] stream compute
    edge wffn_s[l]: read wffn[l] by gpu0.launch after resid1[l] stream compute reuse {mib(d["w_ffn"])} rw 1:0
    edge ffn_up[l]: write inter by gpu0.launch after wffn_s[l] stream compute
    edge ffn_down[l]: reduce(sum) inter[0, +{d["act"]}] -> act by gpu0.launch after ffn_up[l] stream compute
          map_write layer_done[l] = 1
    if l % {CKPT_EVERY} == {CKPT_EVERY - 1} {{
      # a compressible intermediate: the slot is sized by the lz4 worst case, not the average ratio
      edge ckpt[l]: move act -> ackpt[l / {CKPT_EVERY}] by gpu0.copy_done after ffn_down[l]
          transform compress(lz4) |> checksum(crc32c)
          handoff ackpt[l / {CKPT_EVERY}]: gpu0 -> cxl0
    }}
    edge flush_kv[l]: flush dpu0 -- decode0 by dpu0.tx after send[l, *]
          aggregate kv_sent[l]
          handoff rkv[l]: dpu0 -> decode0
    edge decode_load[l]: read rkv[l] by decode0.launch after flush_kv[l]
  }}
  for l in {first_spill}..{L} {{
    for b in 0..{B} {{
      edge spill[l, b]: move kvb[l, b] -> kvs[l - {first_spill}, b] by gpu0.copy_done after kvw[l, b] stream d2h
          transform quantize(bf16 -> fp8, group {QUANT_GROUP}, scale fp32) |> checksum(crc32c)
          handoff kvs[l - {first_spill}, b]: gpu0 -> cxl0
          update block_owner[l * {B} + b] = cxl0
    }}
  }}
  for l in 0..{L} {{
    for b in 0..{B} {{
      if l >= {first_spill} {{
{bug}        edge free_kv[l, b]: release kvb[l, b] return_pool by gpu0.free after attn[l], send[l, b], spill[l, b]
{bug_end}      }} else {{
        edge free_kv[l, b]: release kvb[l, b] return_pool by gpu0.free after attn[l], send[l, b]
      }}
    }}
  }}
'''
    lines += f'''  final owner kvs[*] = cxl0
  final owner ackpt[*] = cxl0
  final owner rkv[*] = decode0
}}
'''
    return lines


def main(argv: list[str]) -> int:
    outputs = {OUT_OK: render(False), OUT_BAD: render(True)}
    if "--check" in argv:
        stale = [str(p.relative_to(ROOT)) for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        if stale:
            print("stale: " + ", ".join(stale) + " (run python corpus/real/generate.py)")
            return 1
        return 0
    for p, text in outputs.items():
        p.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
