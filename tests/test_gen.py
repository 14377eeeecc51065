"""``fxverify gen prefill`` and its importers, on the real inputs under corpus/inputs/.

Numbers are checked against hand calculations written out here from the published configs, not
against the generator's own formulas. Malformed inputs are small copies made inside the tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.gen.cxl_list import load_cxl, parse_size
from fxverify.gen.hf_config import load_model
from fxverify.gen.nccl_topo import load_topology
from fxverify.gen.prefill import PrefillOptions, generate_prefill
from fxverify.pipeline import CheckOptions, check
from fxverify.replay.simulate import Simulator
from fxverify.result import Verdict
from fxverify.resolve import Limits, Loader, load_policy
from fxverify.source import SourceMap

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ROOT / "corpus/inputs"
MODELS = sorted((INPUTS / "models").glob("*.json"))
P4D = INPUTS / "topology/aws-p4d-24xl-topo.xml"
NDV5 = INPUTS / "topology/azure-ndv5-topo.xml"
BEMPU = INPUTS / "cxl/cxl_test-list-BEMPu.json"
BDMU = INPUTS / "cxl/cxl_test-list-BDMu-root-mem3.json"
REGION = INPUTS / "cxl/ndctl-create-region-example.json"
runner = CliRunner()


def model(name: str):
    spec, diags = load_model(str(INPUTS / "models" / f"{name}.json"), SourceMap())
    assert not diags and spec is not None
    return spec


def gen(stem: str, *, topo: Path | None = None, cxl: tuple[Path, ...] = (), **kw):
    spec = model(stem)
    t = load_topology(str(topo), SourceMap())[0] if topo else None
    c = load_cxl([str(p) for p in cxl], SourceMap())[0] if cxl else None
    out, diags = generate_prefill(spec, t, c, PrefillOptions(**kw))
    return out, diags


# ---- model configs: hand calculations ----------------------------------------------------------

def test_llama_8b_kv_bytes() -> None:
    m = model("meta-llama--Meta-Llama-3.1-8B")
    # 2 (K, V) x 8 KV heads x (4096 / 32 = 128) head_dim x 2 B (bf16)
    assert m.kv_bytes_per_token_per_layer == 2 * 8 * 128 * 2 == 4096
    assert m.kv_bytes_per_token == 32 * 4096 == 131072
    assert m.head_dim_source == "hidden_size / num_attention_heads"


def test_deepseek_v3_mla_latent() -> None:
    m = model("deepseek-ai--DeepSeek-V3")
    # (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B per layer, 61 layers, no separate K and V
    assert m.kv_bytes_per_token_per_layer == 576 * 2
    assert m.kv_bytes_per_token == 61 * 576 * 2 == 70272
    assert m.moe is not None and (m.moe.experts, m.moe.active, m.moe.shared, m.moe.first_dense) == (256, 8, 1, 3)
    assert m.quant is not None and m.quant.block == (128, 128) and m.quant.elem_bytes == 1


def test_mixtral_experts() -> None:
    m = model("mistralai--Mixtral-8x7B-v0.1")
    assert m.moe is not None and (m.moe.experts, m.moe.active, m.moe.shared, m.moe.first_dense) == (8, 2, 0, 0)
    assert m.kv_bytes_per_token == 32 * 2 * 8 * 128 * 2


def test_qwen3_uses_head_dim_from_config(tmp_path: Path) -> None:
    m = model("Qwen--Qwen3-8B")
    assert m.head_dim == 128 and m.head_dim_source == "head_dim"
    # head_dim may differ from hidden_size / num_attention_heads: then the config's value wins
    cfg = json.loads((INPUTS / "models/Qwen--Qwen3-8B.json").read_text())
    cfg["head_dim"] = 256
    p = tmp_path / "qwen-wide.json"
    p.write_text(json.dumps(cfg))
    spec, _ = load_model(str(p), SourceMap())
    assert spec is not None and spec.kv_bytes_per_token_per_layer == 2 * 8 * 256 * 2


def test_text_config_is_read_when_nested(tmp_path: Path) -> None:
    inner = json.loads((INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json").read_text())
    p = tmp_path / "vlm.json"
    p.write_text(json.dumps({"architectures": ["LlavaForConditionalGeneration"], "text_config": inner,
                             "vision_config": {"hidden_size": 1024}}))
    spec, diags = load_model(str(p), SourceMap())
    assert not diags and spec is not None and spec.nested
    assert spec.kv_bytes_per_token == 131072 and spec.arch == "LlavaForConditionalGeneration"


@pytest.mark.parametrize(("edit", "field"), [
    (lambda c: c.pop("num_hidden_layers"), "num_hidden_layers"),
    (lambda c: c.update(num_key_value_heads=7), "num_key_value_heads"),  # 7 does not divide 32 heads
    (lambda c: c.update(torch_dtype="float8"), "torch_dtype"),
    (lambda c: c.update(hidden_size="4096"), "hidden_size"),
    (lambda c: c.update(num_local_experts=8, n_routed_experts=16, num_experts_per_tok=2), "n_routed_experts"),
    (lambda c: c.pop("vocab_size"), "vocab_size"),
    (lambda c: c.update(tie_word_embeddings="yes"), "tie_word_embeddings"),
])
def test_bad_config_names_field_and_file(tmp_path: Path, edit, field: str) -> None:
    cfg = json.loads((INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json").read_text())
    edit(cfg)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(cfg, indent=2))
    out = tmp_path / "out.fx"
    r = runner.invoke(app, ["gen", "prefill", "--model", str(p), "-o", str(out)])
    assert r.exit_code == 2
    assert "FX-GEN-002" in r.output and f"`{field}`" in r.output and "bad.json" in r.output
    assert re.search(r"bad\.json:\d+:\d+", r.output) and "^" in r.output and "help:" in r.output
    assert not out.exists()


def test_malformed_json_points_at_the_error(tmp_path: Path) -> None:
    p = tmp_path / "broken.json"
    p.write_text('{\n  "hidden_size": 4096,\n  "num_hidden_layers": 32\n  "x": 1\n}\n')
    r = runner.invoke(app, ["gen", "prefill", "--model", str(p)])
    assert r.exit_code == 2 and "FX-GEN-001" in r.output and "broken.json:4:3" in r.output


def test_a_config_not_in_utf8_points_at_the_byte(tmp_path: Path) -> None:
    p = tmp_path / "latin1.json"
    p.write_bytes('{\n  "model_type": "caf\u00e9"\n}\n'.encode("latin-1"))
    r = runner.invoke(app, ["gen", "prefill", "--model", str(p)])
    assert r.exit_code == 2 and "FX-GEN-001" in r.output and "latin1.json:2:21" in r.output, r.output
    assert "not UTF-8" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("kind", ["fifo", "device", "deep json", "huge integer", "too large"])
def test_hostile_model_files_are_refused_quickly(tmp_path: Path, kind: str) -> None:
    """Inputs that would block, never end, or break Python's decoder are FX-GEN-001, exit 2."""
    import os

    p = tmp_path / "m.json"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "device":
        p = Path("/dev/zero")
    elif kind == "deep json":
        p.write_text("[" * 5000 + "]" * 5000)
    elif kind == "huge integer":
        p.write_text('{"hidden_size": ' + "9" * 5000 + "}")
    else:
        p.write_bytes(b" " * ((16 << 20) + 1))
    r = runner.invoke(app, ["gen", "prefill", "--model", str(p)])
    assert r.exit_code == 2 and "FX-GEN-001" in r.output and "internal error" not in r.output, r.output


def test_deeply_nested_topology_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "topo.xml"
    p.write_text("<system>" + "<pci busid='0'>" * 3000 + "</pci>" * 3000 + "</system>")
    t, diags = load_topology(str(p), SourceMap())
    assert t is None and [d.code for d in diags] == ["FX-GEN-001"] and "nests elements" in diags[0].message


# ---- NCCL topologies ------------------------------------------------------------------------------

def test_p4d_topology() -> None:
    t, diags = load_topology(str(P4D), SourceMap())
    assert not diags and t is not None
    assert (len(t.gpus), len(t.nics), len(t.switches), t.numa_nodes) == (8, 4, 4, 2)
    # each switch holds 2 GPUs and 1 NIC: the nearest NIC of GPUs 2k and 2k+1 is NIC k
    assert [t.nearest_nic(g.name) for g in t.gpus] == [f"nic{i // 2}" for i in range(8)]
    assert all(n.net == "eth" for n in t.nics)  # EFA: PCI class 0x020000
    assert t.gpus[0].link is not None and t.gpus[0].link.speed_gts == 8.0 and t.gpus[0].link.width == 16


def test_ndv5_topology() -> None:
    t, diags = load_topology(str(NDV5), SourceMap())
    assert not diags and t is not None
    assert (len(t.gpus), len(t.nics), t.numa_nodes) == (8, 8, 2)
    assert all(n.net == "ib" for n in t.nics)  # class 0x020700
    assert [t.nearest_nic(g.name) for g in t.gpus] == [f"nic{i}" for i in range(8)]
    # 32 GT/s x16 with 128b/130b encoding
    assert abs(t.gpus[0].link.gbps - 32 * 16 * 128 / 130 / 8) < 1e-9  # type: ignore[union-attr]


def test_nvlink_children_become_links(tmp_path: Path) -> None:
    p = tmp_path / "nv.xml"
    p.write_text('<system version="1"><cpu numaid="0">'
                 '<pci busid="0000:01:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">'
                 '<gpu dev="0"><nvlink target="0000:ff:00.0" count="6" tclass="0x068000"/></gpu></pci>'
                 '<pci busid="0000:02:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">'
                 '<gpu dev="1"><nvlink target="0000:ff:00.0" count="6" tclass="0x068000"/></gpu></pci>'
                 '</cpu></system>')
    t, diags = load_topology(str(p), SourceMap())
    assert not diags and t is not None and t.nvlinks == (("gpu0", "gpu1", 6),)


@pytest.mark.parametrize(("text", "code", "where"), [
    ('<system version="1"><cpu numaid="0"><pci busid="0:1" class="0x020700"/></cpu></system>', "FX-GEN-002", "no usable GPU"),
    ('<system version="1">\n<cpu numaid="0">\n<pci busid="0:1" class="0x030200">\n</cpu></system>', "FX-GEN-001", "nv.xml:4:3"),
    ('<system version="1"><cpu><pci busid="0:1" class="0x030200"/></cpu></system>', "FX-GEN-002", "`numaid`"),
    ('<!DOCTYPE s [<!ENTITY a "aaaa">]><system/>', "FX-GEN-001", "entities"),
])
def test_bad_topology(tmp_path: Path, text: str, code: str, where: str) -> None:
    p = tmp_path / "nv.xml"
    p.write_text(text)
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json"),
                            "--topology", str(p)])
    assert r.exit_code == 2 and code in r.output and where in r.output, r.output


# ---- cxl list ----------------------------------------------------------------------------------

def test_cxl_test_listing() -> None:
    c, diags = load_cxl([str(BEMPU), str(BDMU)], SourceMap())
    assert not diags and c is not None
    assert (len(c.host_bridges), len(c.switch_ports), len(c.memdevs)) == (2, 4, 8)
    assert [d.base for d in c.root_decoders] == [0x8020000000, 0x8030000000, 0x8050000000, 0x8060000000]
    assert [(d.size >> 20, d.persistent, d.targets) for d in c.root_decoders] == [
        (256, False, 1), (512, False, 2), (256, True, 1), (512, True, 2)]
    assert all(m.ram_bytes == m.pmem_bytes == 256 << 20 for m in c.memdevs.values())
    assert c.memdevs["mem3"].numa == 0 and c.memdevs["mem2"].numa == 1
    assert {h.name: c.port_numa(h.name) for h in c.host_bridges} == {"port5": 1, "port4": 0}


def test_region_listing() -> None:
    c, diags = load_cxl([str(REGION)], SourceMap())
    assert not diags and c is not None
    (w,) = c.regions
    assert (w.base, w.size, w.targets, w.granularity, w.persistent) == (0xC90000000, 512 << 20, 2, 1024, False)


def test_sizes() -> None:
    assert parse_size("256.00 MiB (268.44 MB)") == 256 << 20
    assert parse_size(268435456) == 268435456
    assert parse_size("0x8020000000") == 0x8020000000
    assert parse_size("lots") is None


def test_cxl_listing_without_objects(tmp_path: Path) -> None:
    p = tmp_path / "empty.json"
    p.write_text('{"provider": "cxl_test"}')
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json"),
                            "--cxl", str(p)])
    assert r.exit_code == 2 and "FX-GEN-002" in r.output


# ---- cxl list of several hosts -----------------------------------------------------------------


def _as_seen_from_another_host(src: Path, dst: Path, keep_serial: str | None, rename: str = "mem1",
                               keep_decoders: tuple[str, ...] | None = None) -> Path:
    """A copy of the real listing ``src`` edited into what a second server attached to the same
    CXL hardware would list: every memdev renamed (`mem3` -> `mem13`: each host numbers its own
    devices), every serial except ``keep_serial`` changed (`0x4` -> `0x104`: other devices), the
    serial ``keep_serial`` kept (the multi-headed device both hosts are attached to), and, with
    ``keep_decoders``, only those root decoders kept and renamed `decoder0.N` (the host-physical
    windows that host programs)."""
    doc = json.loads(src.read_text())

    def walk(o):
        if isinstance(o, dict):
            if isinstance(o.get("memdev"), str):
                o["memdev"] = rename + o["memdev"][3:]
                if o.get("serial") != keep_serial:
                    o["serial"] = "0x1" + o["serial"].removeprefix("0x").rjust(2, "0")
            if keep_decoders is not None:
                for key in [k for k in o if k.startswith("decoders:")]:
                    o[key] = [dict(d, decoder=f"decoder0.{i}") for i, d in enumerate(o[key]) if d["decoder"] in keep_decoders]
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(doc)
    dst.write_text(json.dumps(doc, indent=2))
    return dst


def test_a_memdev_two_hosts_list_makes_its_windows_shared(tmp_path: Path) -> None:
    """The machine lists mem3 (serial 0x2) behind its four root decoders; host `peer1` lists the
    same device (as `mem13`) and seven others: every window mem3 backs is shared with `peer1`."""
    peer = _as_seen_from_another_host(BEMPU, tmp_path / "peer1.json", keep_serial="0x2")
    c, diags = load_cxl([str(BEMPU), str(BDMU), f"peer1={peer}"], SourceMap())
    assert not diags and c is not None
    assert list(c.peers) == ["peer1"] and len(c.peers["peer1"].memdevs) == 8 and len(c.memdevs) == 8
    assert sorted(c.shared) == ["decoder3.0", "decoder3.1", "decoder3.2", "decoder3.3"]
    (why,) = c.shared["decoder3.0"]
    assert why.host == "peer1" and "`mem3` (serial 0x2)" in why.reason and "`mem13`" in why.reason
    # a serial no window's memdev has: nothing is shared
    other = _as_seen_from_another_host(BEMPU, tmp_path / "other.json", keep_serial=None)
    c, _ = load_cxl([str(BDMU), f"peer1={other}"], SourceMap())
    assert c is not None and c.shared == {}


def test_the_same_host_physical_range_on_two_hosts_is_not_shared(tmp_path: Path) -> None:
    """Host-physical addresses are per host: `peer2` lists other memdevs (other serials) but
    programs a decoder over the machine's [0x8030000000, +512 MiB). That is its own memory at the
    same numbers, not the machine's, so nothing is shared and no space is made `noncoherent`."""
    peer = _as_seen_from_another_host(BDMU, tmp_path / "peer2.json", keep_serial=None, keep_decoders=("decoder3.1",))
    c, diags = load_cxl([str(BDMU), f"peer2={peer}"], SourceMap())
    assert not diags and c is not None
    assert [(w.base, w.size) for w in c.peers["peer2"].root_decoders] == [(0x8030000000, 512 << 20)]
    assert c.shared == {}


def test_a_shared_device_at_another_host_physical_range_is_still_shared(tmp_path: Path) -> None:
    """The same device (serial 0x2) behind a decoder `peer2` programs at a different host-physical
    base: the machine's windows that device backs are shared, whatever the peer's numbers."""
    peer = _as_seen_from_another_host(BDMU, tmp_path / "peer2.json", keep_serial="0x2", keep_decoders=("decoder3.1",))
    doc = json.loads(peer.read_text())
    text = json.dumps(doc).replace('"0x8030000000"', '"0x4000000000"')
    assert text != json.dumps(doc)
    peer.write_text(text)
    c, diags = load_cxl([str(BDMU), f"peer2={peer}"], SourceMap())
    assert not diags and c is not None
    assert [w.base for w in c.peers["peer2"].root_decoders] == [0x4000000000]
    assert sorted(c.shared) == ["decoder3.0", "decoder3.1", "decoder3.2", "decoder3.3"]
    assert all("(serial 0x2)" in why.reason for (why,) in c.shared.values())


def test_a_peer_whose_memory_has_no_serial_is_refused(tmp_path: Path) -> None:
    """Sharing is decided by memdev serial only, so a peer that maps a window backed by no memdev
    with a serial (here a listing whose region names no memdev) cannot be told apart from shared
    memory: FX-GEN-002 at the peer's listing, never a silently coherent space. A peer whose
    memdevs all show serials is compared by them (here the same test device, serial 0x2)."""
    c, diags = load_cxl([str(BDMU), f"peer2={REGION}"], SourceMap())
    assert c is None and [d.code for d in diags] == ["FX-GEN-002"]
    assert "cannot tell whether `peer2` shares" in diags[0].message and "`region0`" in diags[0].message
    assert diags[0].primary.span.file.endswith("ndctl-create-region-example.json") and "serial" in diags[0].help
    c, diags = load_cxl([str(BDMU), f"peer2={BEMPU}"], SourceMap())
    assert not diags and c is not None and sorted(c.shared) == ["decoder3.0", "decoder3.1", "decoder3.2", "decoder3.3"]


@pytest.mark.parametrize("side", ["machine", "peer", "peer-memdev"])
def test_a_missing_serial_is_reported_in_the_listing_that_lacks_it(tmp_path: Path, side: str) -> None:
    """FX-GEN-002 for a missing serial points at the window or memdev that lacks it, in the file of
    the side that lists it: the machine's own listing when its window has no serial, never the peer's."""
    bare = tmp_path / "bare.json"
    doc = json.loads(BDMU.read_text())
    text = json.dumps(doc, indent=2)
    bare.write_text(re.sub(r'"serial": "0x2"', '"serial": ""', text) if side == "peer-memdev" else REGION.read_text())
    args = {"machine": [str(bare), f"peer2={BDMU}"], "peer": [str(BDMU), f"peer2={bare}"],
            "peer-memdev": [str(BDMU), f"peer2={bare}"]}[side]
    sources = SourceMap()
    c, diags = load_cxl(args, sources)
    assert c is None and [d.code for d in diags] == ["FX-GEN-002"]
    span = diags[0].primary.span
    assert span.file == str(bare), (side, span.file)
    line = sources.get(span.file).text[span.start:].splitlines()[0]
    want = {"machine": ("this machine's window `region0`", '"region": "region0"'),
            "peer": ("`peer2`'s window `region0`", '"region": "region0"'),
            "peer-memdev": ("`peer2` lists memdev `mem3` with no serial", '"memdev": "mem3"')}[side]
    assert want[0] in diags[0].message and line.startswith(want[1]), (diags[0].message, line)


def test_listings_labelled_with_the_machine_merge_and_a_file_with_an_equals_sign_is_a_file(tmp_path: Path) -> None:
    odd = tmp_path / "a=b.json"
    odd.write_text(BDMU.read_text())
    c, diags = load_cxl([f"here={BEMPU}", f"here={BDMU}", str(odd)], SourceMap())
    assert not diags and c is not None and c.peers == {} and len(c.root_decoders) == 4


def test_a_host_label_without_a_file_says_so() -> None:
    """`--cxl peer1=` names a valid label and no file: not "`peer1` is not a host label"."""
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/Qwen--Qwen3-8B.json"), "--cxl", "peer1="])
    assert r.exit_code == 2 and "FX-GEN-004" in r.output and "names host `peer1` but no file" in r.output, r.output
    assert "not a host label" not in r.output


@pytest.mark.parametrize("arg", ["bad label=missing.json", "9peer=missing.json", "peer-1=missing.json"])
def test_a_host_label_that_is_not_a_name_says_so(tmp_path: Path, arg: str) -> None:
    """`--cxl 'bad label=file.json'`: the label is invalid (what a label may be), not "cannot read"."""
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/Qwen--Qwen3-8B.json"), "--cxl", str(BDMU),
                            "--cxl", arg])
    label = arg.partition("=")[0]
    assert r.exit_code == 2 and "FX-GEN-004" in r.output and f"`{label}` is not a host label" in r.output, r.output
    assert "a letter or `_`" in r.output and "cannot read" not in r.output


def test_generated_policy_marks_shared_windows_noncoherent_and_proves_the_crossing(tmp_path: Path) -> None:
    """The spilled KV in a shared window goes to the peer host, which reads it: the space is
    `noncoherent`, each spill writes its slot back and each read invalidates it first, and the
    policy is proved (FX-ORD-005 included); without the write-backs FX-ORD-005 is refuted."""
    peer = _as_seen_from_another_host(BEMPU, tmp_path / "peer1.json", keep_serial="0x2")
    c = load_cxl([str(BDMU), f"peer1={peer}"], SourceMap())[0]
    out, diags = generate_prefill(model("meta-llama--Meta-Llama-3.1-8B"), None, c,
                                  PrefillOptions(tokens=64, layers=4, spill="0.5"))
    assert not diags and out is not None
    text = out.text
    assert "space decoder3_0 on mem3 base 0x8020000000 size 256 MiB noncoherent" in text
    assert "device peer1: cpu hooks [run]" in text and "link peer1 -- mem3 : cxl ordered" in text
    assert "writeback kvs_decoder3_0_g0[l - 2, b]" in text and "invalidate kvs_decoder3_0_g0[l - 2, b]" in text
    assert [w["shared_with"] for w in out.summary["windows"]] == [["peer1"]] * 4
    p = tmp_path / "p.fx"
    p.write_text(text)
    res = check(str(p), CheckOptions(verify_hints=False))
    assert res.verdict is Verdict.PROVED, [d.message for d in res.diagnostics][:3]
    assert sum(1 for o in res.outcomes if str(o.code) == "FX-ORD-005") == 2 * 4  # 2 spilled layers x 4 blocks
    bad = tmp_path / "bad.fx"
    bad.write_text(re.sub(r" writeback kvs_\w+\[[^\]]*\]", "", text))
    res = check(str(bad), CheckOptions(verify_hints=False))
    assert res.verdict is Verdict.REFUTED and {str(d.code) for d in res.diagnostics if d.is_error} == {"FX-ORD-005"}


def test_a_spilled_block_s_coherence_involves_its_own_write_back_and_invalidate_only(tmp_path: Path) -> None:
    """Each block's FX-ORD-005 names only the write-back and the invalidate that can hold its
    bytes, not every spill of the window: a refuted block's trace shows its spill and its fetch,
    and its hint (the missing invalidate) verifies, since the other blocks' findings blame other
    edges."""
    peer = _as_seen_from_another_host(BEMPU, tmp_path / "peer1.json", keep_serial="0x2")
    c = load_cxl([str(BDMU), f"peer1={peer}"], SourceMap())[0]
    out, diags = generate_prefill(model("meta-llama--Meta-Llama-3.1-8B"), None, c,
                                  PrefillOptions(tokens=64, layers=2, spill="1"))
    assert not diags and out is not None
    bad = tmp_path / "bad.fx"
    bad.write_text(re.sub(r" invalidate kvs_\w+\[[^\]]*\]", "", out.text))
    res = check(str(bad), CheckOptions(parametric=False))  # solver calls of the unrolled obligations alone
    assert res.verdict is Verdict.REFUTED and res.solver_calls == 2 * 4  # 2 layers x 4 blocks, one query each
    [d] = [d for d in res.diagnostics if d.is_error]
    assert str(d.code) == "FX-ORD-005" and d.trace is not None
    assert {ev.edge for ev in d.trace.events} == {"spill[0][0][0]", "fetch[0][0][0]"}
    assert d.help.startswith("add `invalidate kvs_decoder3_0_g0[0][0]` to `fetch[0][0][0]`") and "(verified" in d.help


def test_a_disaggregated_spill_a_peer_reads_pins_its_route(tmp_path: Path) -> None:
    """With a decode node behind the NICs, a fabric path from a GPU to the CXL memory runs
    through a NIC and the posted RDMA link: the spill the peer host reads pins the machine's
    own route (as the sends do), and the policy is proved, FX-ORD-003 by the same requester's
    route rather than refuted for every block and every posted link."""
    peer = _as_seen_from_another_host(BEMPU, tmp_path / "peer1.json", keep_serial="0x2")
    c = load_cxl([str(BDMU), f"peer1={peer}"], SourceMap())[0]
    t = load_topology(str(P4D), SourceMap())[0]
    out, diags = generate_prefill(model("meta-llama--Meta-Llama-3.1-8B"), t, c,
                                  PrefillOptions(tokens=32, layers=1, spill="1", tp=2, disaggregate=True))
    assert not diags and out is not None
    assert "by gpu0.copy_done after kvw[l, 0, b] stream d2h" in out.text
    assert " via gpu0 -- sw0, sw0 -- cpu0, cpu0 -- mem3 writeback kvs_decoder3_0_g0[l - 0, b] " in out.text
    p = tmp_path / "p.fx"
    p.write_text(out.text)
    res = check(str(p), CheckOptions(verify_hints=False, parametric=False))  # no unrolled obligation needs the solver
    assert res.verdict is Verdict.PROVED and res.solver_calls == 0, [d.message for d in res.diagnostics][:3]


def test_host_labels_that_share_nothing_or_name_a_device(tmp_path: Path) -> None:
    other = _as_seen_from_another_host(BEMPU, tmp_path / "other.json", keep_serial=None)
    c = load_cxl([str(BDMU), f"peer9={other}"], SourceMap())[0]
    out, diags = generate_prefill(model("meta-llama--Meta-Llama-3.1-8B"), None, c, PrefillOptions(tokens=64, layers=2))
    assert out is not None and "shares no window with this machine" in out.text and "noncoherent" not in out.text
    peer = _as_seen_from_another_host(BEMPU, tmp_path / "peer1.json", keep_serial="0x2")
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json"),
                            "--cxl", str(BDMU), "--cxl", f"gpu0={peer}"])
    assert r.exit_code == 2 and "FX-GEN-004" in r.output and "host label `gpu0`" in r.output


# ---- generated policies ------------------------------------------------------------------------

def test_summary_matches_hand_calculation() -> None:
    out, diags = gen("meta-llama--Meta-Llama-3.1-8B", cxl=(BDMU,), disaggregate=True)
    assert not diags and out is not None
    s = out.summary
    for key in ("model", "layers", "kv_bytes_per_token", "kv_bytes_per_token_per_layer", "blocks_per_layer",
                "devices", "edges", "regions"):
        assert key in s
    assert (s["layers"], s["kv_bytes_per_token"], s["kv_bytes_per_token_per_layer"], s["blocks_per_layer"]) == (
        32, 131072, 4096, 8192 // 16)
    # once: the embedding read and the write of the hidden states; per layer: 512 KV writes,
    # 512 sends, 1 flush, 1 decode read, 1 free and 8 compute edges (wq, attn, attn_out, 2 reduces,
    # wf, up, down); 8 of 32 layers spill 512 blocks; 4 checkpoints
    assert s["edges"] == 2 + 32 * (512 + 512 + 1 + 1 + 1 + 8) + 8 * 512 + 4
    assert "# 16 tok x 4096 B = 65536 B" in out.text or "KV block = 16 tok x 4096 B = 65536 B (64 KiB)" in out.text


def test_deepseek_summary() -> None:
    out, diags = gen("deepseek-ai--DeepSeek-V3", tokens=256, tp=8)
    assert not diags and out is not None
    s = out.summary
    assert s["kv_bytes_per_token"] == 70272 and s["kv_replicas"] == 8 and s["kv_heads_per_rank"] == 1
    assert (s["experts"], s["active_experts"], s["moe_layers"]) == (256, 8, 58)


def test_mixtral_summary() -> None:
    out, diags = gen("mistralai--Mixtral-8x7B-v0.1", tokens=256, tp=2)
    assert not diags and out is not None
    assert (out.summary["experts"], out.summary["active_experts"]) == (8, 2)
    assert "replicate(2) |> scatter(2)" in out.text and "reduce(sum) ye0" in out.text


def test_deterministic() -> None:
    a, _ = gen("mistralai--Mixtral-8x7B-v0.1", topo=P4D, cxl=(BEMPU, BDMU), tokens=128, tp=2, disaggregate=True)
    b, _ = gen("mistralai--Mixtral-8x7B-v0.1", topo=P4D, cxl=(BEMPU, BDMU), tokens=128, tp=2, disaggregate=True)
    assert a is not None and b is not None and a.text == b.text and a.summary == b.summary


def _resolved(text: str, path: Path):
    path.write_text(text)
    pol, diags = load_policy(str(path), SourceMap())
    assert pol is not None, diags
    return pol


def test_unrolled_declares_the_same_edges(tmp_path: Path) -> None:
    kw = dict(topo=NDV5, cxl=(BEMPU, BDMU), tokens=64, tp=2, layers=5, disaggregate=True)
    fam, _ = gen("deepseek-ai--DeepSeek-V3", **kw)
    unr, _ = gen("deepseek-ai--DeepSeek-V3", unroll=True, **kw)
    assert fam is not None and unr is not None and "for l in" in fam.text and "for l in" not in unr.text
    a = _resolved(fam.text, tmp_path / "a.fx")
    b = _resolved(unr.text, tmp_path / "b.fx")
    assert len(a.edges) == len(b.edges) == fam.summary["edges"] == unr.summary["edges"]
    def key(e) -> str:  # everything but source positions
        return re.sub(r"span=Span\([^)]*\)", "", repr((e.name, e.action, e.device, e.hook, e.src, e.dst, e.after, e.bytes,
                                                        e.transforms, e.handoffs, e.leases, e.releases, e.map_ops)))
    assert sorted(map(key, a.edges)) == sorted(map(key, b.edges))


def test_regions_disjoint_inside_windows(tmp_path: Path) -> None:
    out, _ = gen("meta-llama--Meta-Llama-3.1-70B", topo=P4D, cxl=(BEMPU, BDMU), tokens=256, tp=8, layers=8, spill="0.5",
                 disaggregate=True)
    assert out is not None
    pol = _resolved(out.text, tmp_path / "p.fx")
    by_space: dict[str, list] = {}
    for r in pol.regions:
        sp = pol.space(r.space)
        assert sp.base <= r.base and r.end <= sp.base + sp.size, r.name
        if r.alias_set is None:
            by_space.setdefault(r.space, []).append(r)
    for regs in by_space.values():
        regs.sort(key=lambda r: r.base)
        for x, y in zip(regs, regs[1:]):
            assert x.end <= y.base, (x.name, y.name)
    windows = {s.name: s for s in pol.spaces if s.base >= 0x8000000000}
    assert {s.base for s in windows.values()} == {0x8020000000, 0x8030000000, 0x8050000000, 0x8060000000}
    assert {s.name for s in windows.values() if s.persistent} == {"decoder3_2", "decoder3_3"}


def test_too_little_cxl_is_an_error() -> None:
    # 80 layers x 512 blocks x (32768 fp8 B + 256 scales x 4 B) = 1.29 GiB; the volatile windows hold 768 MiB
    out, diags = gen("meta-llama--Meta-Llama-3.1-70B", cxl=(BDMU,), spill="1", tp=2)
    assert out is None and diags[0].code == "FX-GEN-003" and "too little CXL capacity" in diags[0].message


def test_byte_counts_past_two_to_the_53_stay_exact() -> None:
    """10^12 tokens: the bytes one rank needs are far past 2^53 (and below 2^64); the count is an
    exact multiple of the 2 MiB alignment and its GiB figure is the exact quotient, not a float's
    rounding."""
    out, diags = gen("meta-llama--Meta-Llama-3.1-8B", tokens=10**12)
    assert out is None and diags[0].code == "FX-GEN-003"
    m = re.search(r"one rank needs (\d+) B \((\d+)\.(\d) GiB\)", diags[0].message)
    assert m, diags[0].message
    used = int(m.group(1))
    assert used > 2**53 and used % (2 << 20) == 0
    tenths, rest = divmod(used * 10, 1 << 30)
    tenths += 2 * rest > 1 << 30 or (2 * rest == 1 << 30 and tenths % 2)
    assert (int(m.group(2)), int(m.group(3))) == divmod(tenths, 10)


@pytest.mark.parametrize("tokens", [99999999999999999984, 10**20])
def test_hbm_past_64_bit_addresses_is_said_so(tokens: int) -> None:
    """A 20-digit --tokens: one rank's HBM would pass 2^64 B, which no --hbm-gib can hold (its
    range ends below 2^64 B), so the error is the 64-bit one other spaces get, with no GiB figure
    of 17 digits and no advice to pass --hbm-gib; on the command line it exits 2."""
    out, diags = gen("meta-llama--Meta-Llama-3.1-8B", tokens=tokens)
    assert out is None and [d.code for d in diags] == ["FX-GEN-003"], diags
    assert "beyond 64-bit addresses" in diags[0].message and "GiB" not in diags[0].message, diags[0].message
    assert "--hbm-gib" not in (diags[0].help or ""), diags[0].help
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json"),
                            "--tokens", str(tokens)])
    assert r.exit_code == 2 and "FX-GEN-003" in r.output and "beyond 64-bit addresses" in r.output, r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize(("kw", "code"), [
    (dict(tokens=100), "FX-GEN-004"),                      # not a multiple of 16
    (dict(tp=3), "FX-GEN-004"),                             # 3 divides neither 8 KV heads nor is a multiple
    (dict(spill="0.5"), "FX-GEN-004"),                      # spill without CXL
    (dict(spill="2"), "FX-GEN-004"),
    (dict(topo=P4D, tp=16), "FX-GEN-003"),                  # p4d has 8 GPUs
    (dict(layers=40), "FX-GEN-004"),
    (dict(hbm_gib=1), "FX-GEN-003"),
    (dict(requests=0), "FX-GEN-004"),
    (dict(requests=2, cxl=(BDMU,)), "FX-GEN-004"),         # per-request CXL slots are not laid out yet
    (dict(name=""), "FX-GEN-004"),                          # not the default name: an empty one
    (dict(name="  "), "FX-GEN-004"),
    (dict(name=" llama"), "FX-GEN-004"),
])
def test_bad_options(kw, code: str) -> None:
    out, diags = gen("meta-llama--Meta-Llama-3.1-8B", **kw)
    assert out is None and diags and diags[0].code == code


def test_persist_only_into_pmem(tmp_path: Path) -> None:
    out, _ = gen("meta-llama--Meta-Llama-3.1-8B", cxl=(BDMU,), tokens=256)
    assert out is not None and "|> persist" in out.text
    pol = _resolved(out.text, tmp_path / "p.fx")
    for e in pol.edges:
        if any(t.kind.value == "persist" for t in e.transforms):
            assert pol.space(e.dst.space).persistent, e.name


def _matrix():
    cases = []
    for m in MODELS:
        stem = m.stem
        layers = 5 if "DeepSeek" in stem else 3  # DeepSeek's first 3 layers are dense
        for tp in (1, 2, 8):
            cases.append(pytest.param(stem, tp, None, (), False, layers, id=f"{stem}-tp{tp}"))
            cases.append(pytest.param(stem, tp, P4D, (BEMPU, BDMU), True, layers, id=f"{stem}-tp{tp}-p4d-cxl-disagg"))
        cases.append(pytest.param(stem, 8, NDV5, (), True, layers, id=f"{stem}-tp8-ndv5-disagg"))
        cases.append(pytest.param(stem, 1, None, (BDMU, REGION), False, layers, id=f"{stem}-tp1-cxl"))
    return cases


@pytest.mark.parametrize(("stem", "tp", "topo", "cxl", "disagg", "layers"), _matrix())
def test_generated_policy_is_proved(tmp_path: Path, stem: str, tp: int, topo, cxl, disagg: bool, layers: int) -> None:
    out, diags = gen(stem, topo=topo, cxl=cxl, tp=tp, tokens=64, layers=layers, disaggregate=disagg, spill="0.5" if cxl else None)
    assert out is not None, diags
    p = tmp_path / "p.fx"
    p.write_text(out.text)
    res = check(str(p))
    assert res.verdict is Verdict.PROVED, [d.message for d in res.diagnostics][:3]
    if tp > 1 and disagg and stem.startswith("deepseek"):
        assert "replicate(" in out.text  # the single MLA latent is replicated over the ranks


def test_cli_writes_policy_and_summary(tmp_path: Path) -> None:
    out, summ = tmp_path / "p.fx", tmp_path / "s.json"
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/Qwen--Qwen3-8B.json"), "--tokens", "64",
                            "--layers", "2", "--tp", "2", "-o", str(out), "--summary-json", str(summ)])
    assert r.exit_code == 0, r.output
    s = json.loads(summ.read_text())
    assert s["policy"] == "p" and s["kv_bytes_per_token_per_layer"] == 2 * 8 * 128 * 2
    assert out.read_text().startswith("# Qwen--Qwen3-8B prefill")


# ---- odd but plausible inputs: diagnostics, never a crash --------------------------------------

_LLAMA = json.loads((INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json").read_text())


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda c: c.update(torch_dtype=["bfloat16"]), "`torch_dtype`"),
    (lambda c: c.update(architectures={"x": 1}), "`architectures`"),
    (lambda c: c.update(num_local_experts=[8], num_experts_per_tok=2), "`num_local_experts`"),
    (lambda c: c.update(num_local_experts=8, num_experts_per_tok=2, interleave_moe_layer_step=2), "interleave"),
    (lambda c: c.update(quantization_config={"quant_method": "fp8", "weight_block_size": [128, True]}), "weight_block_size"),
])
def test_odd_configs_are_diagnosed(tmp_path: Path, edit, needle: str) -> None:
    cfg = json.loads(json.dumps(_LLAMA))
    edit(cfg)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(cfg, indent=2))
    r = runner.invoke(app, ["gen", "prefill", "--model", str(p), "--tokens", "64", "--layers", "1"])
    assert r.exit_code == 2 and "FX-GEN-002" in r.output and needle in r.output, r.output


_GPU = '<pci busid="0000:01:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"{}>'


def _gen_from(tmp_path: Path, option: str, name: str, text: str, ok: bool, *extra: str) -> None:
    """Generate a small Llama-3.1-8B policy with ``option`` pointing at ``text``: either it is
    proved, or the input is refused with FX-GEN-002 and no policy is written."""
    p = tmp_path / name
    p.write_text(text)
    out = tmp_path / "o.fx"
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/meta-llama--Meta-Llama-3.1-8B.json"),
                            option, str(p), *extra, "--tokens", "64", "--layers", "1", "-o", str(out)])
    if ok:
        assert r.exit_code == 0, r.output
        assert check(str(out)).verdict is Verdict.PROVED
    else:
        assert r.exit_code == 2 and "FX-GEN-002" in r.output and not out.exists()


@pytest.mark.parametrize(("xml", "ok"), [
    # a bare <nic> (a network plugin device with no PCI entry) and a sysfs "Unknown" speed are fine
    (f'<system><cpu numaid="0">{_GPU.format("/")}<nic><net name="mlx5_0"/></nic></cpu></system>', True),
    ('<system><cpu numaid="0"><pci busid="0:1" class="0x030200" link_speed="Unknown" link_width="16"/></cpu></system>', True),
    (f'<system><cpu numaid="0">{_GPU.format("")}<gpu dev="0"><nvlink target="0:2" count="2" tclass="068000"/></gpu>'
     '</pci></cpu></system>', False),
    (f'<system><cpu numaid="-1">{_GPU.format("/")}</cpu></system>', False),
])
def test_odd_topologies(tmp_path: Path, xml: str, ok: bool) -> None:
    _gen_from(tmp_path, "--topology", "t.xml", xml, ok)


def test_nvswitch_links_sum_over_switches(tmp_path: Path) -> None:
    # two GPUs on three NVSwitches with 2 links each: NCCL counts 6 NVLinks between them
    gpus = "".join(_GPU.format("").replace("01:00", f"0{i}:00") + f'<gpu dev="{i}">'
                   + "".join(f'<nvlink target="0000:c{k}:00.0" count="2" tclass="0x068000"/>' for k in range(3))
                   + "</gpu></pci>" for i in (1, 2))
    p = tmp_path / "nv.xml"
    p.write_text(f'<system><cpu numaid="0">{gpus}</cpu></system>')
    t, diags = load_topology(str(p), SourceMap())
    assert not diags and t is not None and t.nvlinks == (("gpu0", "gpu1", 6),)


@pytest.mark.parametrize(("doc", "ok"), [
    # flat `cxl list -P` from hardware: a top-level port is a host bridge
    ([{"port": "port1", "host": "pci0000:34", "ports:port1": [{"port": "port2", "host": "0000:35:00.0"}]}], True),
    # grouped `cxl list -D`
    ([{"root decoders": [{"decoder": "decoder0.0", "resource": "0x4000000000", "size": "1.00 GiB (1.07 GB)",
                          "volatile_capable": True, "nr_targets": 1}]}], True),
    # -u rounding lost the byte count
    ({"decoder": "decoder0.0", "resource": "0x4000000000", "size": "1.33 GiB (1.43 GB)", "volatile_capable": True}, False),
    ({"region": "region0", "resource": "0xc90000000", "size": 536870912, "interleave_ways": "x"}, False),
])
def test_odd_cxl_listings(tmp_path: Path, doc, ok: bool) -> None:
    _gen_from(tmp_path, "--cxl", "c.json", json.dumps(doc), ok, "--cxl", str(BDMU))


def test_no_half_written_pair(tmp_path: Path) -> None:
    summ = tmp_path / "s.json"
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/Qwen--Qwen3-8B.json"), "--tokens", "64",
                            "--summary-json", str(summ), "-o", str(tmp_path / "missing" / "p.fx")])
    assert r.exit_code == 2 and not summ.exists()
    assert f"cannot write `{tmp_path / 'missing' / 'p.fx'}`: no such folder `{tmp_path / 'missing'}`" in r.output


def test_policy_names_cannot_break_the_text() -> None:
    out, diags = gen("Qwen--Qwen3-8B", tokens=64, layers=1, name='my "x" policy')
    assert out is None and diags[0].code == "FX-GEN-004"


def test_tp_shards_attention_weights_by_hand() -> None:
    m = model("meta-llama--Meta-Llama-3.1-8B")
    h, hd = 4096, 128
    # tp 2: q and o split by 32 heads, k and v by 8 KV heads
    assert m.attn_weight_bytes(2) == 2 * (h * 16 * hd + 2 * h * 4 * hd + 16 * hd * h)
    # tp 16 > 8 KV heads: each rank keeps one whole KV head
    assert m.attn_weight_bytes(16) == 2 * (h * 2 * hd + 2 * h * 1 * hd + 2 * hd * h)
    d = model("deepseek-ai--DeepSeek-V3")
    # MLA at tp 8, fp8 with one fp32 scale per 128x128 block: q_a and kv_a replicated, the rest split
    def fp8(r: int, c: int) -> int:
        return r * c + 4 * (-(-r // 128)) * (-(-c // 128))
    want = (fp8(7168, 1536) + fp8(7168, 576) + fp8(1536, 16 * 192) + fp8(512, 16 * 256) + fp8(16 * 128, 7168))
    assert d.attn_weight_bytes(8) == want


def test_output_pair_checked_before_writing(tmp_path: Path) -> None:
    base = ["gen", "prefill", "--model", str(INPUTS / "models/Qwen--Qwen3-8B.json"), "--tokens", "64", "--layers", "1"]
    p = tmp_path / "p.fx"
    r = runner.invoke(app, base + ["-o", str(p), "--summary-json", str(tmp_path)])  # a folder
    assert r.exit_code == 2 and "FX-IO-001" in r.output and not p.exists()
    r = runner.invoke(app, base + ["-o", str(p), "--summary-json", str(p)])
    assert r.exit_code == 2 and "FX-GEN-004" in r.output and not p.exists()
    r = runner.invoke(app, base + ["-o", str(p)])
    assert r.exit_code == 0 and p.stat().st_mode & 0o644 == 0o644  # the umask's mode, not mkstemp's 0600


@pytest.mark.parametrize("flag", ["--model", "--topology", "--cxl", "--cxl-labelled"])
@pytest.mark.parametrize("out", ["-o", "--summary-json"])
def test_an_output_that_is_an_input_is_refused_before_reading(tmp_path: Path, flag: str, out: str) -> None:
    """`-o m.json` (or `--summary-json`) naming one of the inputs, under another spelling or through a
    link, is FX-IO-002 before anything is read or written: the input keeps its bytes."""
    files = {"--model": INPUTS / "models/Qwen--Qwen3-8B.json", "--topology": P4D, "--cxl": BDMU, "--cxl-labelled": BDMU}
    copies = {f: tmp_path / f"{f.strip('-')}{p.suffix}" for f, p in files.items()}
    for f, p in files.items():
        copies[f].write_bytes(p.read_bytes())
    link = tmp_path / "sub" / "link"
    link.parent.mkdir()
    link.symlink_to(copies[flag])
    argv = ["gen", "prefill", "--model", str(copies["--model"]), "--topology", str(copies["--topology"]),
            "--cxl", str(copies["--cxl"]), "--cxl", f"peer1={copies['--cxl-labelled']}", "--tokens", "64", "--layers", "1"]
    before = copies[flag].read_bytes()
    r = runner.invoke(app, argv + [out, str(link) if flag == "--topology" else str(tmp_path / "sub" / ".." / copies[flag].name)])
    assert r.exit_code == 2 and "FX-IO-002" in r.output and f"the file `{flag.removesuffix('-labelled')}` reads" in r.output
    assert copies[flag].read_bytes() == before and copies[flag].is_file() and not copies[flag].is_symlink()


def test_addresses_stay_64_bit() -> None:
    out, diags = gen("Qwen--Qwen3-8B", tokens=64, layers=1, hbm_gib=1 << 40)
    assert out is None and diags[0].code == "FX-GEN-004"


def test_the_readme_generator_example_runs_and_is_proved(tmp_path: Path) -> None:
    """The commands of the README's "Generate a policy" block, as a user pastes them."""
    import shlex
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Generate a policy.*?```\n(.*?)```", text, flags=re.S).group(1)
    commands = [shlex.split(c) for c in block.replace("\\\n", " ").splitlines() if c.strip()]
    assert [c[:2] for c in commands] == [["fxverify", "gen"], ["fxverify", "check"]]
    for c in commands:
        args = [str(ROOT / a) if a.startswith("corpus/") else a for a in c[1:]]
        r = subprocess.run([sys.executable, "-m", "fxverify", *args, *(["--no-cache"] if c[1] == "check" else [])],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    assert "deepseek.fx: proved" in r.stdout


# ---- several requests through one KV block pool ------------------------------------------------

REQUESTS = dict(tokens=32, layers=2, disaggregate=True, requests=4)


def _check_text(text: str, path: Path):
    path.write_text(text)
    return check(str(path))


@pytest.mark.parametrize(("stem", "kw"), [
    pytest.param("Qwen--Qwen3-8B", {}, id="qwen3-tp1"),
    pytest.param("Qwen--Qwen3-8B", dict(topo=NDV5, tp=2), id="qwen3-tp2-ndv5"),
    pytest.param("meta-llama--Meta-Llama-3.1-8B", dict(hbm_gib=3, layers=4), id="llama-streamed-weights"),
    pytest.param("mistralai--Mixtral-8x7B-v0.1", dict(tp=2, layers=3, requests=3), id="mixtral-moe-tp2"),
])
def test_requests_sharing_one_kv_pool_are_proved(tmp_path: Path, stem: str, kw) -> None:
    out, diags = gen(stem, **(REQUESTS | kw))
    assert out is not None, diags
    n = out.summary["requests"]
    assert out.summary["kv_pool_slots"] == 2 < n  # fewer slots than requests: blocks are reused
    assert " pooled" in out.text and "alloc kvl0[q % 2, l] to gpu0" in out.text and "after free[q - 2, l, 0]" in out.text
    if out.summary["weights"] == "streamed":
        assert "edge wload[q, l, 0]: move whost0[l] -> wslot0[l % 2] by gpu0.copy_done stream h2d after head[q - 1, *]" \
            in out.text
    res = _check_text(out.text, tmp_path / "p.fx")
    assert res.verdict is Verdict.PROVED, [d.message for d in res.diagnostics][:3]
    assert any(o.code == "FX-OWN-006" for o in res.outcomes)  # the pool's lifetimes are checked


def test_free_before_the_send_of_its_block_is_refuted_and_replays(tmp_path: Path) -> None:
    """Request 1 returns layer 0's blocks before the DPU has sent them; request 3 takes the same
    slot and overwrites them while the send may still read them."""
    out, _ = gen("Qwen--Qwen3-8B", unroll=True, **REQUESTS)
    assert out is not None
    good = "edge free[1, 0, 0]: release kvl0[1, 0] return_pool by gpu0.free after attn[1, 0, 0], send[1, 0, 0, *]\n"
    assert good in out.text
    bad = out.text.replace(good, good.replace(", send[1, 0, 0, *]", ""))
    res = _check_text(bad, tmp_path / "bad.fx")
    codes_ = {d.code for d in res.diagnostics}
    assert res.verdict is Verdict.REFUTED and "FX-OWN-004" in codes_ and "FX-INT-001" not in codes_, codes_
    own = [x for x in res.refutations if x.code == "FX-OWN-004"]
    assert own and all("kvl0[1][0]" in x.key and "send[1][0][0]" in x.key for x in own), [x.key for x in own]
    sim = Simulator(res.policy)
    for x in res.refutations:  # every counterexample replays in the independent simulator
        w = x.witness
        assert sim.confirm(x.code, tuple(w.cycle) if w.cycle else x.edges, w.schedule, w.address, w.values,
                           w.other_schedule) is not None, x.key


@pytest.mark.parametrize("kw", [dict(tokens=4096, layers=2),
                                dict(tokens=4096, layers=1, tp=2, topo=NDV5, disaggregate=True)],  # with final owners
                         ids=["one-gpu", "tp2-disaggregated"])
def test_more_requests_than_a_check_accepts_are_refused_before_anything_is_written(tmp_path: Path, kw) -> None:
    """`gen` applies the edge limit of `check` (FX-LIM-001: edge and final-owner instances) up
    front, with the count of requests that fit: a policy `check` would refuse is never written,
    and a million requests are refused at once (the count stops at the cap)."""
    cap = Limits().max_edges
    out, diags = gen("Qwen--Qwen3-8B", requests=1_000_000, **kw)
    assert out is None and [d.code for d in diags] == ["FX-GEN-003"], diags
    m = re.search(r"each request unrolls to (\d+) edge instances, so at most (\d+) requests fit", diags[0].message)
    assert m, diags[0].message
    per, fit = int(m.group(1)), int(m.group(2))
    ok, diags = gen("Qwen--Qwen3-8B", requests=fit, **kw)
    assert ok is not None, diags
    # what `check` measures of the largest policy `gen` writes fits, and one more request would not
    path = tmp_path / "p.fx"
    path.write_text(ok.text)
    loader = Loader(str(path), SourceMap())
    measured = loader.measure()
    assert measured is not None and measured <= cap < measured + per, [d.message for d in loader.st.diags]
    over, diags = gen("Qwen--Qwen3-8B", requests=fit + 1, **kw)
    assert over is None and diags[0].code == "FX-GEN-003"
    args = ["--tokens", str(kw["tokens"]), "--layers", str(kw["layers"])]
    r = runner.invoke(app, ["gen", "prefill", "--model", str(INPUTS / "models/Qwen--Qwen3-8B.json"), *args,
                            "--requests", str(fit + 1), "-o", str(tmp_path / "big.fx")] + (
                                ["--tp", "2", "--topology", str(NDV5), "--disaggregate"] if "tp" in kw else []))
    assert r.exit_code == 2 and "FX-GEN-003" in r.output and not (tmp_path / "big.fx").exists(), r.output


@pytest.mark.parametrize("kw", [dict(requests=3), dict(requests=3, tp=2, topo=NDV5, disaggregate=True)],
                         ids=["one-gpu", "tp2-disaggregated"])
def test_gen_counts_against_the_limit_exactly_what_check_measures(tmp_path: Path, kw) -> None:
    """The edge limit `gen` applies counts what `check` measures, edges and final owners alike:
    with the cap at the measure of the written policy it passes, one below it is refused."""
    from fxverify.gen.prefill import _too_many_edges
    from fxverify.gen.prefill_plan import plan_prefill

    out, diags = gen("Qwen--Qwen3-8B", tokens=64, layers=2, **kw)
    assert out is not None, diags
    path = tmp_path / "p.fx"
    path.write_text(out.text)
    measured = Loader(str(path), SourceMap()).measure()
    assert measured is not None
    spec = model("Qwen--Qwen3-8B")
    topo = load_topology(str(kw["topo"]), SourceMap())[0] if "topo" in kw else None
    plan = plan_prefill(spec, topo, None, PrefillOptions(tokens=64, layers=2, **{k: v for k, v in kw.items() if k != "topo"}))
    assert _too_many_edges(plan, cap=measured) is None
    assert _too_many_edges(plan, cap=measured - 1) is not None


def test_one_request_over_the_edge_limit_is_not_told_to_lower_requests() -> None:
    """A flow over the limit for one request alone says so, and does not suggest `--requests 0`."""
    out, diags = gen("Qwen--Qwen3-8B", tokens=262144, block_tokens=1, requests=2, hbm_gib=100000)
    assert out is None and diags[0].code == "FX-GEN-003", diags
    assert "for one request" in diags[0].message and "--requests" not in diags[0].help, diags[0]


def test_one_request_is_the_default() -> None:
    kw = dict(topo=NDV5, cxl=(BEMPU, BDMU), tokens=64, tp=2, layers=3, disaggregate=True)
    a, _ = gen("mistralai--Mixtral-8x7B-v0.1", **kw)
    b, _ = gen("mistralai--Mixtral-8x7B-v0.1", requests=1, **kw)
    assert a is not None and b is not None and a.text == b.text and a.summary == b.summary
    assert "--requests" not in a.text and " pooled" not in a.text and a.summary["requests"] == 1
