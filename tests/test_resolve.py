"""Tests for fxverify.resolve: AST -> ir.Policy, includes, names, units, unrolling, limits."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxverify.diagnostics.codes import REGISTRY
from fxverify.diagnostics.codes import Severity
from fxverify.diagnostics.model import Diagnostic
from fxverify.ir import (
    Compress, EdgeAction, Filter, Footprint, Gather, Handoff, Lease, MapOp, MapOpKind, Move, Persist, Policy, Quantize, Reduce,
    Release, Replicate, Scatter, XfKind,
)
from fxverify.resolve import Limits, Loader, load_policy
from fxverify.source import NO_SPAN, SourceMap, Span
from fxverify.vocab import ClassKind, LinkOrder, ReleaseKind

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
HDM = 0x80_2000_0000

COMMON = """\
fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device dpu0: dpu hooks [rx, tx, dma_done]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
  link up0 = gpu0 -- dpu0 : pcie posted
}
"""

HAPPY = """\
policy "happy"
include "../fabric/common.fx"
include "../fabric/common.fx"   # a second include of the same file is a no-op
space hbm0 on gpu0 size 80 GiB
space hdm0 on cxl0 base 0x80_2000_0000 size 256 MiB persistent
region kv in hbm0 at 0x0 size 64 MiB owner gpu0 dtype bf16
region pool[l in 0..32] in hdm0 at 0x80_2000_0000 + l*1 MiB size 1 MiB owner gpu0
region kvb[l in 0..32, b in 0..512] in hbm0 at 1 GiB + (l*512 + b) * 64 KiB size 64 KiB owner gpu0
alias_set kvs = [kv, pool]
map block_owner: hash<u32, device>[4096] class linearizable
map ctr: array<u32, u64>[64] class per_device merge sum
map lm: array<u32, u32>[16] class local(gpu0)
flow prefill {
  edge a: write kv[0, +2 MiB] by gpu0.launch stream s0 require in_order
  for l in 0..32 {
    edge attn[l]: write kv[l*2 MiB, +2 MiB] by gpu0.launch
    edge spill[l]: move kv[l*2 MiB, +2 MiB] -> pool[l] by gpu0.copy_done
        after attn[l]
        transform quantize(bf16 -> fp8, group 128, scale f32) |> checksum(crc32c)
        reuse 3 MiB  rw 1:0  bytes 2 MiB  alias kvs
        handoff pool[l]: gpu0 -> cxl0
        update block_owner[l] = cxl0
        map_write lm[l % 16] = l * 2
    if l > 0 { edge chain[l]: read pool[l] by cxl0.near_mem after spill[l - 1] }
  }
  edge gat: read kvb[3, 0][0, elem 4 KiB, stride 16 KiB, count 4] by gpu0.launch
      transform gather(4, rank 1) |> compress(lz4)
  edge red: reduce(max) kvb[0][1] -> kvb[0, 2] by gpu0.launch
      transform reduce(max) |> filter(keep 50) |> scatter(2) |> replicate(3) |> persist |> move
  edge ret: release kvb[3, 17] return_pool by gpu0.free after spill[*] lease kv to dpu0 revoke kvb[3][*] from dpu0 flush up0
  edge fl: flush gpu0 -- dpu0 by gpu0.launch after a
      guard block_owner[7] == dpu0  aggregate ctr[1]  map_read block_owner[0]
  final owner pool[*] = cxl0
}
flow decode { edge d0: read kv[0, +4 KiB] by dpu0.dma_done after ret }
# fx: allow FX-ORD-002 reason "decode reads a stable prefix"
"""

# A small self-contained prefix for error cases: devices gpu0 (0), cxl0 (1), one link, two spaces,
# a plain region `kv`, a family `pool[0..4]`, a map `m` with 16 entries and an alias set.
HEAD = """\
policy "p"
fabric {
  device gpu0: gpu hooks [launch, copy_done, free]
  device cxl0: cxl_mem hooks [near_mem]
  link gpu0 -- cxl0 : cxl ordered
}
space hbm0 on gpu0 size 1 GiB
region kv in hbm0 at 0 size 64 MiB owner gpu0
region pool[l in 0..4] in hbm0 at 512 MiB + l * 1 MiB size 1 MiB owner gpu0
map m: hash<u32, device>[16] class linearizable
alias_set kvs = [kv]
"""

TWO_HOPS = HEAD.replace("  link gpu0 -- cxl0 : cxl ordered\n", "  device sw0: cxl_switch hooks [route]\n"
                        "  link gpu0 -- sw0 : cxl ordered\n  link sw0 -- cxl0 : cxl ordered\n") + \
    "space hdm0 on cxl0 base 0x80_0000_0000 size 1 GiB\nregion blk in hdm0 at 0x80_0000_0000 size 64 MiB owner gpu0\n"


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")


def _load(root: Path, files: dict[str, str | bytes], main: str, *, repo: bool = True,
          limits: Limits = Limits()) -> tuple[Policy | None, list[Diagnostic], SourceMap]:
    if repo:
        (root / ".git").mkdir(exist_ok=True)
    _write(root, files)
    sources = SourceMap()
    policy, diags = load_policy(str(root / main), sources, limits=limits)
    return policy, diags, sources


def _text(sources: SourceMap, span: Span) -> str:
    sf = sources.get(span.file)
    assert sf is not None, span.file
    return sf.text[span.start:span.end]


@pytest.fixture(scope="module")
def happy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Policy, SourceMap, Path]:
    root = tmp_path_factory.mktemp("happy")
    policy, diags, sources = _load(root, {"fabric/common.fx": COMMON, "pol/happy.fx": HAPPY},
                                   "pol/happy.fx")
    assert diags == []
    assert policy is not None
    return policy, sources, root


# ---- the happy path: every construct resolves to the expected IR values -----------------------


def test_fabric_spaces_regions_maps(happy) -> None:
    p, sources, root = happy
    assert p.name == "happy"
    assert [d.name for d in p.devices] == ["gpu0", "dpu0", "cxl0"]
    assert p.device("gpu0").hooks == ("launch", "copy_done", "free")
    assert [(ln.name, ln.a, ln.b, ln.kind, ln.order) for ln in p.links] == [
        ("gpu0--cxl0", "gpu0", "cxl0", "cxl", LinkOrder.ORDERED),
        ("up0", "gpu0", "dpu0", "pcie", LinkOrder.POSTED),
    ]
    hdm = p.space("hdm0")
    assert (hdm.device, hdm.base, hdm.size, hdm.persistent) == ("cxl0", HDM, 256 * MiB, True)
    assert p.space("hbm0").base == 0 and p.space("hbm0").size == 80 * GiB
    assert len(p.regions) == 1 + 32 + 32 * 512
    kv = p.region("kv")
    assert (kv.family, kv.base, kv.size, kv.owner, kv.dtype, kv.alias_set) == \
        ("kv", 0, 64 * MiB, "gpu0", "bf16", "kvs")
    pool3 = p.region("pool[3]")
    assert (pool3.family, pool3.space, pool3.base, pool3.size, pool3.alias_set) == \
        ("pool", "hdm0", HDM + 3 * MiB, MiB, "kvs")
    kvb = p.region("kvb[3][17]")
    assert (kvb.family, kvb.base, kvb.size, kvb.alias_set) == \
        ("kvb", GiB + (3 * 512 + 17) * 64 * KiB, 64 * KiB, None)
    assert p.regions[1].name == "pool[0]" and p.regions[33].name == "kvb[0][0]"
    assert p.regions[34].name == "kvb[0][1]", "families unroll row-major"
    assert p.alias_sets[0].regions == ("kv",) + tuple(f"pool[{i}]" for i in range(32))
    assert p.map("lm").cls.kind is ClassKind.LOCAL and p.map("lm").cls.device == "gpu0"
    assert p.map("ctr").merge == "sum" and p.map("ctr").max_entries == 64
    assert p.map("block_owner").value_type == "device"
    # Included declarations keep spans in the included file, which is registered for rendering.
    common = os.path.normpath(str(root / "pol" / "../fabric/common.fx"))
    assert p.device("gpu0").span.file == common
    assert sources.get(common) is not None


def test_edges_unroll_in_declaration_order(happy) -> None:
    p, _, _ = happy
    names = [e.name for e in p.edges]
    assert names[:4] == ["a", "attn[0]", "spill[0]", "attn[1]"]
    assert names[4:6] == ["spill[1]", "chain[1]"]
    assert "chain[0]" not in names
    assert names[-5:] == ["gat", "red", "ret", "fl", "d0"]
    assert len(p.edges) == 1 + 32 * 2 + 31 + 5
    assert [e.eid for e in p.edges] == list(range(len(p.edges)))
    assert p.edge("spill[3]").family == "spill" and p.edge("spill[3]").flow == "prefill"
    assert p.edge("d0").flow == "decode" and p.edge("d0").after == ("ret",)


def test_contiguous_and_whole_footprints(happy) -> None:
    p, sources, _ = happy
    attn = p.edge("attn[3]")
    assert attn.action is EdgeAction.WRITE and attn.src is None
    assert attn.dst == Footprint("kv", "hbm0", 6 * MiB, 2 * MiB, 2 * MiB, 1, attn.dst.span)
    spill = p.edge("spill[3]")
    assert spill.action is EdgeAction.MOVE
    assert (spill.src.region, spill.src.base, spill.src.nbytes) == ("kv", 6 * MiB, 2 * MiB)
    assert spill.dst == Footprint("pool[3]", "hdm0", HDM + 3 * MiB, MiB, MiB, 1, spill.dst.span)
    assert _text(sources, spill.src.span) == "kv[l*2 MiB, +2 MiB]"
    assert _text(sources, spill.dst.span) == "pool[l]"


def test_strided_footprint(happy) -> None:
    p, _, _ = happy
    gat = p.edge("gat")
    fp = gat.src
    assert (fp.region, fp.space) == ("kvb[3][0]", "hbm0")
    assert (fp.base, fp.elem, fp.stride, fp.count) == (GiB + 3 * 512 * 64 * KiB, 4 * KiB, 16 * KiB, 4)
    assert not fp.contiguous and fp.nbytes == 16 * KiB


def test_clauses_of_one_edge(happy) -> None:
    p, sources, _ = happy
    e = p.edge("spill[3]")
    assert e.after == ("attn[3]",)
    assert (e.reuse, e.rw, e.bytes, e.alias) == (3 * MiB, (1, 0), 2 * MiB, "kvs")
    assert [t.kind for t in e.transforms] == [XfKind.QUANTIZE, XfKind.CHECKSUM]
    assert replace(e.transforms[0], span=NO_SPAN) == Quantize("bf16", "fp8", 128, "f32")
    assert e.transforms[1].algo == "crc32c"
    assert e.handoffs == (Handoff("pool[3]", "gpu0", "cxl0", e.handoffs[0].span),)
    # Map values that name a device become the device's index in Policy.devices (cxl0 is 2).
    assert e.map_ops == (
        MapOp("block_owner", MapOpKind.UPDATE, 3, 2, e.map_ops[0].span),
        MapOp("lm", MapOpKind.WRITE, 3, 6, e.map_ops[1].span),
    )
    assert p.edge("spill[20]").map_ops[1].key == 4
    assert _text(sources, e.span).startswith("edge spill[l]: move")
    assert _text(sources, e.span).endswith("map_write lm[l % 16] = l * 2")
    assert _text(sources, e.hook_span) == "copy_done"
    assert _text(sources, e.handoffs[0].span) == "handoff pool[l]: gpu0 -> cxl0"
    assert _text(sources, e.transforms[0].span) == "quantize(bf16 -> fp8, group 128, scale f32)"
    assert _text(sources, e.map_ops[0].span) == "update block_owner[l] = cxl0"
    a = p.edge("a")
    assert a.stream == "s0" and a.require_in_order and p.edge("attn[0]").stream is None


def test_after_refs_with_star_and_arithmetic(happy) -> None:
    p, _, _ = happy
    assert p.edge("chain[1]").after == ("spill[0]",)
    assert p.edge("chain[31]").after == ("spill[30]",)
    assert p.edge("ret").after == tuple(f"spill[{i}]" for i in range(32))
    assert p.edge("fl").after == ("a",)


def test_transforms_params(happy) -> None:
    p, _, _ = happy
    gat, red = p.edge("gat").transforms, p.edge("red").transforms
    assert [replace(t, span=NO_SPAN) for t in gat] == [Gather(4, 1), Compress("lz4")]
    assert [replace(t, span=NO_SPAN) for t in red] == [Reduce("max"), Filter(50), Scatter(2), Replicate(3), Persist(), Move()]


def test_reuse_is_a_release_kind_and_a_reuse_distance(tmp_path: Path) -> None:
    """`reuse` is both the release kind (action and clause) and the reuse-distance clause keyword."""
    text = HEAD + ("flow f {\n  edge w: write kv by gpu0.launch reuse 3 MiB\n"
                   "  edge r: release pool[0] reuse by gpu0.free after w\n"
                   "  edge c: write pool[1] by gpu0.launch after r release pool[1] reuse reuse 1 MiB\n}\n")
    policy, diags, sources = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert policy is not None, [(d.code, d.message) for d in diags]
    r, c = policy.edge("r"), policy.edge("c")
    assert r.action is EdgeAction.RELEASE and [x.kind for x in r.releases] == [ReleaseKind.REUSE]
    assert [(x.region, x.kind) for x in c.releases] == [("pool[1]", ReleaseKind.REUSE)]
    assert (policy.edge("w").reuse, c.reuse) == (3 << 20, 1 << 20)
    assert _text(sources, r.releases[0].span) == "release pool[0] reuse"


def test_reduce_release_lease_flush(happy) -> None:
    p, sources, _ = happy
    red = p.edge("red")
    assert (red.action, red.reduce_op, red.src.region, red.dst.region) == \
        (EdgeAction.REDUCE, "max", "kvb[0][1]", "kvb[0][2]")
    ret = p.edge("ret")
    assert ret.action is EdgeAction.RELEASE and ret.src is None and ret.dst is None
    assert ret.releases == (Release("kvb[3][17]", ReleaseKind.RETURN_POOL, ret.releases[0].span),)
    assert ret.leases == (Lease("kv", "dpu0", ret.leases[0].span),)
    assert [(x.region, x.device) for x in ret.revokes] == [(f"kvb[3][{b}]", "dpu0") for b in range(len(ret.revokes))]
    assert ret.revokes and _text(sources, ret.revokes[0].span) == "revoke kvb[3][*] from dpu0"
    assert ret.flushes == ("up0",)
    assert _text(sources, ret.releases[0].span) == "release kvb[3, 17] return_pool"
    fl = p.edge("fl")
    assert fl.action is EdgeAction.FLUSH and fl.flushes == ("up0",), "endpoints resolve to the named link"
    assert [(m.map, m.kind, m.key, m.value) for m in fl.map_ops] == [
        ("block_owner", MapOpKind.GUARD, 7, 1),
        ("ctr", MapOpKind.AGGREGATE, 1, None),
        ("block_owner", MapOpKind.READ, 0, None),
    ]


def test_space_attributes_come_in_any_order(tmp_path: Path) -> None:
    """`persistent`, `noncoherent`, `checksum ALGO` and `init` mean the same in every order."""
    import itertools
    attrs = ["persistent", "noncoherent", "checksum crc32c", "init"]
    want = None
    for order in itertools.permutations(attrs):
        text = HEAD + f"space s2 on cxl0 base 2 GiB size 1 MiB {' '.join(order)}\n"
        policy, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
        assert policy is not None, (order, diags)
        sp = replace(policy.space("s2"), span=NO_SPAN)
        assert (sp.persistent, sp.noncoherent, sp.checksum, sp.init) == (True, True, "crc32c", True)
        assert want is None or sp == want
        want = sp


def test_cancels_name_edge_instances(tmp_path: Path) -> None:
    """`cancel` as an action and as a clause: one `ir.Cancel` per named instance, each once, in
    written order; a cancel action touches no byte."""
    text = HEAD + """flow f {
  for i in 0..3 { edge pull[i]: move pool[i] -> kv[i * 1 MiB, +1 MiB] by gpu0.copy_done }
  edge stop: cancel pull[*], pull[1] by gpu0.copy_done
  edge stop1: write kv[8 MiB, +4] by gpu0.copy_done after stop cancel pull[2] cancel pull[0]
}
"""
    policy, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert policy is not None, diags
    stop, stop1 = policy.edge("stop"), policy.edge("stop1")
    assert stop.action is EdgeAction.CANCEL and stop.accesses() == ()
    assert [c.edge for c in stop.cancels] == ["pull[0]", "pull[1]", "pull[2]"]
    assert [c.edge for c in stop1.cancels] == ["pull[2]", "pull[0]"] and stop1.action is EdgeAction.WRITE


def test_final_owners_and_suppressions(happy) -> None:
    p, _, root = happy
    assert [(f.region, f.device) for f in p.final_owners] == [(f"pool[{i}]", "cxl0") for i in range(32)]
    (sup,) = p.suppressions
    assert (sup.code, sup.reason) == ("FX-ORD-002", "decode reads a stable prefix")
    assert sup.file == str(root / "pol/happy.fx") and sup.line == HAPPY.count("\n")


def test_deterministic(tmp_path: Path) -> None:
    files = {"fabric/common.fx": COMMON, "pol/happy.fx": HAPPY}
    p1, d1, _ = _load(tmp_path, files, "pol/happy.fx")
    p2, d2, _ = _load(tmp_path, files, "pol/happy.fx")
    assert p1 is not None and p2 is not None and d1 == d2 == []
    assert p1.edges == p2.edges and p1.regions == p2.regions and p1.final_owners == p2.final_owners


def test_init_regions_and_spaces(tmp_path: Path) -> None:
    """`init` on a space or region (every family instance) reaches the IR; without it, nothing is."""
    text = HEAD + """\
space host0 on gpu0 base 0x1_0000_0000 size 1 GiB init
region w[l in 0..2] in hbm0 at l * 1 MiB size 1 MiB owner gpu0 dtype bf16 init
region x in hbm0 at 4 MiB size 1 MiB owner gpu0 init   # inputs
region y in hbm0 at 8 MiB size 1 MiB owner gpu0
flow f {
  edge r: read w[1] by gpu0.launch
}
"""
    p, diags, _ = _load(tmp_path, {"init.fx": text}, "init.fx")
    assert diags == [] and p is not None
    assert [(r.name, r.init) for r in p.regions][-4:] == [("w[0]", True), ("w[1]", True), ("x", True), ("y", False)]
    assert [(s.name, s.init) for s in p.spaces] == [("hbm0", False), ("host0", True)]



@pytest.mark.parametrize("size,dtype,whole", [
    ("3", "bf16", False), ("1 MiB + 1", "bf16", False), ("6", "fp32", False), ("2 + l", "bf16", None),
    ("4", "bf16", True), ("8", "fp32", True), ("3", "int4", True), ("3", "fp8", True), ("12", "fp64", False),
])
def test_a_region_of_a_dtype_holds_whole_elements(tmp_path: Path, size: str, dtype: str, whole: bool | None) -> None:
    """FX-TYP-002 on a region whose byte size is not a whole number of its dtype's elements (an
    odd byte count on a bf16 region: a size given in elements, or a typo); int4 packs two per byte.
    ``None``: a family whose instance 1 (3 bytes) is the bad one, named in the message."""
    text = HEAD + f"region w[l in 0..2] in hbm0 at 4 MiB + l * 1 MiB size {size} owner gpu0 dtype {dtype}\n"
    p, diags, sources = _load(tmp_path, {"t.fx": text}, "t.fx")
    if whole:
        assert diags == [] and p is not None
        return
    (d,) = diags
    assert p is None and d.code == "FX-TYP-002" and f"of dtype `{dtype}`" in d.message and "elements" in d.message
    assert _text(sources, d.primary.span) == size and ("`w[1]`" in d.message if whole is None else "`w[0]`" in d.message)

def test_large_family_unrolls(tmp_path: Path) -> None:
    text = HEAD + """\
region kvw[l in 0..32, b in 0..512] in hbm0 at (l*512 + b) * 4 KiB size 4 KiB owner gpu0
flow big {
  for l in 0..32 {
    for b in 0..512 {
      edge w[l][b]: write kvw[l][b][0, +1 KiB] by gpu0.launch after w[l][*]
    }
  }
}
"""
    p, diags, _ = _load(tmp_path, {"big.fx": text}, "big.fx")
    assert diags == [] and p is not None
    assert len(p.edges) == 32 * 512
    e = p.edge("w[3][17]")
    assert e.eid == 3 * 512 + 17 and e.dst.region == "kvw[3][17]"
    assert e.dst.base == (3 * 512 + 17) * 4 * KiB
    assert len(e.after) == 512 and e.after[0] == "w[3][0]"
    assert e.after is p.edge("w[3][0]").after, "star expansions are shared, not copied"


def test_if_else_branches_may_share_a_family(tmp_path: Path) -> None:
    text = HEAD + """\
flow f {
  for i in 0..4 {
    if i == 0 { edge x[i]: write kv by gpu0.launch }
    else if i % 2 == 1 { edge x[i]: read kv by gpu0.launch }
    else { edge x[i]: read pool[i] by gpu0.launch after x[i - 1] }
  }
}
"""
    p, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert diags == [] and p is not None
    assert [(e.name, e.action.value) for e in p.edges] == [
        ("x[0]", "write"), ("x[1]", "read"), ("x[2]", "read"), ("x[3]", "read")]
    assert p.edge("x[2]").after == ("x[1]",) and p.edge("x[2]").src.region == "pool[2]"


def test_out_of_region_footprint_and_undeclared_hook_are_not_resolve_errors(tmp_path: Path) -> None:
    text = HEAD + "flow f { edge a: write kv[63 MiB, +2 MiB] by gpu0.nohook }"
    p, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert diags == [] and p is not None
    assert p.edge("a").hook == "nohook" and p.edge("a").dst.hi > p.region("kv").end


# ---- error cases ---------------------------------------------------------------------------------

ERRORS = [
    # (id, policy text, code, message part, help part, underlined text)
    ("unknown-region", HEAD + "flow f { edge a: write kx[0, +4] by gpu0.launch }",
     "FX-NAM-001", "unknown region `kx`", "did you mean `kv`?", "kx"),
    ("unknown-device", HEAD + "flow f { edge a: write kv by gpu1.launch }",
     "FX-NAM-001", "unknown device `gpu1`", "did you mean `gpu0`?", "gpu1"),
    ("unknown-edge", HEAD + "flow f { edge attn: write kv by gpu0.launch\n edge b: read kv by gpu0.launch after atn }",
     "FX-NAM-001", "unknown edge `atn`", "did you mean `attn`?", "atn"),
    ("unknown-map", HEAD + "flow f { edge a: write kv by gpu0.launch update mm[0] = 1 }",
     "FX-NAM-001", "unknown map `mm`", "did you mean `m`?", "mm"),
    ("unknown-alias", HEAD + "flow f { edge a: write kv by gpu0.launch alias kvz }",
     "FX-NAM-001", "unknown alias set `kvz`", "did you mean `kvs`?", "kvz"),
    ("unknown-var", HEAD + "flow f { for layer in 0..2 { edge a[layer]: write kv[layr, +4] by gpu0.launch } }",
     "FX-NAM-001", "unknown index variable `layr`", "did you mean `layer`?", "layr"),
    ("unknown-map-value", HEAD + "flow f { edge a: write kv by gpu0.launch update m[0] = cxl1 }",
     "FX-NAM-001", "unknown name `cxl1`", "did you mean `cxl0`?", "cxl1"),
    ("no-link", HEAD.replace("  link gpu0 -- cxl0 : cxl ordered\n", "")
     + "flow f { edge a: flush gpu0 -- cxl0 by gpu0.launch }",
     "FX-NAM-001", "no link between `gpu0` and `cxl0`", "link gpu0 -- cxl0", "gpu0 -- cxl0"),
    ("revoke-unknown-region", HEAD + "flow f { edge a: write kv by gpu0.launch revoke kx from cxl0 }",
     "FX-NAM-001", "unknown region `kx`", "did you mean `kv`?", "kx"),
    ("revoke-unknown-device", HEAD + "flow f { edge a: write kv by gpu0.launch revoke kv from cxl1 }",
     "FX-NAM-001", "unknown device `cxl1`", "did you mean `cxl0`?", "cxl1"),
    ("revoke-own-lease", HEAD + "flow f { edge a: write pool[1] by gpu0.launch lease pool[*] to cxl0 revoke pool[1] from cxl0 }",
     "FX-TYP-002", "`a` revokes the lease it grants: `pool[1]` to `cxl0`", "on a later edge", "revoke pool[1] from cxl0"),
    ("space-attribute-twice", HEAD + "space s2 on cxl0 base 2 GiB size 1 MiB checksum crc32c persistent checksum xxh64",
     "FX-TYP-002", "`checksum` given twice on space `s2`", "at most once, in any order", "checksum xxh64"),
    ("cancel-itself", HEAD + "flow f { edge a: write kv by gpu0.launch cancel a }",
     "FX-TYP-002", "`a` cancels itself", "another edge of the issuing device", "cancel a"),
    ("overlapping-elements", HEAD + "flow f { edge a: write kv[0, elem 16, stride 0, count 4] by gpu0.launch }",
     "FX-TYP-002", "the elements overlap: stride 0 is less than the element size 16", "at least 16 bytes", "stride 0"),
    ("cancel-issued-before", HEAD + "flow f { edge b: cancel a by gpu0.launch\n edge a: write kv by gpu0.launch after b }",
     "FX-TYP-002", "`b` cancels `a`, which starts only after `b` finishes", "still in flight", "cancel a"),
    ("cancel-before-on-a-stream", HEAD + "flow f { edge b: cancel a by gpu0.launch stream s\n"
     " edge m: write kv[0, +64] by gpu0.launch stream s\n edge a: write kv by gpu0.launch after m }",
     "FX-TYP-002", "`b` cancels `a`, which starts only after `b` finishes", "still in flight", "cancel a"),
    ("cancel-unknown-edge", HEAD + "flow f { edge a: write kv by gpu0.launch\n edge b: cancel aa by gpu0.launch }",
     "FX-NAM-001", "unknown edge `aa`", "did you mean `a`?", "aa"),
    ("cancel-from-another-device", HEAD + "flow f { edge a: write kv by gpu0.launch\n edge b: cancel a by cxl0.near_mem }",
     "FX-TYP-002", "`b` runs on `cxl0` but cancels `a`, which `gpu0` issues", "a hook of `gpu0`", "cancel a"),
    ("cancel-a-reduction", HEAD + "flow f { edge a: reduce(sum) pool[0] -> kv[0, +1 MiB] by gpu0.launch\n"
     " edge b: cancel a by gpu0.copy_done }", "FX-TYP-002", "`b` cancels `a`, a `reduce` edge", "only transfers", "cancel a"),
    ("cancel-a-handoff", HEAD + "flow f { edge a: write pool[1] by gpu0.launch handoff pool[1]: gpu0 -> cxl0\n"
     " edge b: write kv by gpu0.copy_done cancel a }", "FX-TYP-002", "`b` cancels `a`, which carries `handoff`",
     "onto an edge of its own, `after a`", "cancel a"),
    ("cancel-an-expected-producer", HEAD + "flow f { edge a: move pool[0] -> kv[0, +1 MiB] by gpu0.launch\n"
     " edge b: cancel a by gpu0.copy_done\n edge c: read kv[0, +1 MiB] by gpu0.launch after a expects sum of a }",
     "FX-TYP-002", "`c` expects the contribution of `a`, which `b` cancels", "drop it from `expects`", "expects sum of a"),
    ("expects-itself", HEAD + "flow f { edge a: write kv[0, +1 MiB] by gpu0.launch\n"
     " edge c: read kv[0, +1 MiB] by gpu0.launch after a expects sum of c }",
     "FX-TYP-002", "`c` expects its own contribution", "name the edges that write", "expects sum of c"),
    ("notifies-itself", HEAD + "flow f { edge a: write kv[0, +1 MiB] by gpu0.launch\n"
     " edge n: write kv[1 MiB, +64] by gpu0.launch after a notifies a, n }",
     "FX-TYP-002", "`n` notifies its own completion", "an edge of its own, `after n`", "notifies a, n"),
    ("no-policy", HEAD.replace('policy "p"\n', ""), "FX-NAM-001", "declares no policy", 'policy "name"', ""),
    ("device-as-region", HEAD + "flow f { edge a: write gpu0 by gpu0.launch }",
     "FX-TYP-001", "`gpu0` is a device, not a region", None, "gpu0"),
    ("region-as-device", HEAD + "flow f { edge a: write kv by kv.launch }",
     "FX-TYP-001", "`kv` is a region, not a device", None, "kv"),
    ("region-as-link", HEAD + "flow f { edge a: flush kv by gpu0.launch }",
     "FX-TYP-001", "`kv` is a region, not a link", None, "kv"),
    ("dup-device", HEAD.replace("  device cxl0:", "  device gpu0: gpu\n  device cxl0:"),
     "FX-NAM-002", "duplicate device `gpu0`", "rename", "gpu0"),
    ("dup-region", HEAD + "region kv in hbm0 at 0 size 1 owner gpu0",
     "FX-NAM-002", "duplicate region `kv`", None, "kv"),
    ("dup-map", HEAD + "map m: array<u32, u32>[1] class causal", "FX-NAM-002", "duplicate map `m`", None, "m"),
    ("dup-link", HEAD.replace("  link gpu0", "  link gpu0 -- cxl0 : pcie posted\n  link gpu0"),
     "FX-NAM-002", "duplicate link `gpu0--cxl0`", "explicit name", "gpu0 -- cxl0"),
    ("dup-edge", HEAD + "flow f { edge a: write kv by gpu0.launch }\nflow g { edge a: read kv by gpu0.launch }",
     "FX-NAM-002", "duplicate edge `a`", None, "a"),
    ("dup-edge-instance", HEAD + "flow f { for i in 0..2 { edge a[0]: write kv by gpu0.launch } }",
     "FX-NAM-002", "duplicate edge `a[0]`", "check the indices", "a"),
    ("dup-policy", HEAD + 'policy "again"', "FX-NAM-002", "duplicate `policy`", None, 'policy "again"'),
    ("dup-alias-member", HEAD + "alias_set other = [kv]", "FX-NAM-002",
     "region `kv` is already in alias set `kvs`", None, "kv"),
    ("shadow", HEAD + "flow f { for i in 0..2 { for i in 0..2 { edge a[i]: write kv by gpu0.launch } } }",
     "FX-NAM-002", "index variable `i` shadows", None, "i"),
    ("after-out-of-range", HEAD + "flow f { for i in 0..2 { edge a[i]: write kv by gpu0.launch after a[i - 1] } }",
     "FX-TYP-004", "`a[-1]` is not an instance of `a`", "2 instances", "a[i - 1]"),
    ("after-bare-family", HEAD + "flow f { for i in 0..2 { edge a[i]: write kv by gpu0.launch }\n"
     " edge b: read kv by gpu0.launch after a }", "FX-TYP-004", "`a` is an edge family", "`a[*]`", "a"),
    ("region-index-out-of-range", HEAD + "flow f { edge a: write pool[4] by gpu0.launch }",
     "FX-TYP-004", "`pool[4]` is out of range", "0..4", "pool[4]"),
    ("region-wrong-arity", HEAD + "flow f { edge a: write pool[1, 2] by gpu0.launch }",
     "FX-TYP-004", "`pool` takes 1 index, found 2", None, "[1, 2]"),
    ("star-in-footprint", HEAD + "flow f { edge a: write pool[*] by gpu0.launch }",
     "FX-TYP-004", "`[*]` in a footprint", None, "*"),
    ("bare-family-footprint", HEAD + "flow f { edge a: write pool by gpu0.launch }",
     "FX-TYP-004", "`pool` is a family", "`pool[0]`", "pool"),
    ("not-a-family", HEAD + "flow f { edge a: write kv[3] by gpu0.launch }",
     "FX-TYP-004", "`kv` is not a family", "kv[OFF, +LEN]", "[3]"),
    ("map-key-out-of-range", HEAD + "flow f { edge a: write kv by gpu0.launch update m[16] = cxl0 }",
     "FX-TYP-004", "key 16 is out of range for map `m`", "16 entries", "16"),
    ("bytes-disagree", HEAD + "flow f { edge a: move kv[0, +4 KiB] -> pool[0] by gpu0.launch bytes 8 KiB }",
     "FX-TYP-005", "`bytes` says 8192 but the footprint covers 4096", "4096 bytes", "bytes 8 KiB"),
    ("bytes-no-footprint", HEAD + "flow f { edge a: release kv free by gpu0.launch bytes 8 }",
     "FX-TYP-005", "`bytes` on a `release` edge", None, "bytes 8"),
    ("unit", HEAD + "flow f { edge a: write kv[0, +4 Kib] by gpu0.launch }",
     "FX-TYP-003", "unknown unit `Kib`", "did you mean `KiB`?", "Kib"),
    ("dtype", HEAD + "flow f { edge a: write kv by gpu0.launch transform quantize(bf16 -> fp9) }",
     "FX-TYP-003", "unknown dtype `fp9`", "did you mean `fp8`?", "fp9"),
    ("region-dtype", HEAD + "region r in hbm0 at 0 size 1 owner gpu0 dtype bf61",
     "FX-TYP-003", "unknown dtype `bf61`", "did you mean `bf16`?", "bf61"),
    ("transform", HEAD + "flow f { edge a: write kv by gpu0.launch transform quantise(bf16 -> fp8) }",
     "FX-TYP-003", "unknown transform `quantise`", "did you mean `quantize`?", "quantise"),
    ("algo", HEAD + "flow f { edge a: write kv by gpu0.launch transform compress(zstdd) }",
     "FX-TYP-003", "unknown compression algorithm `zstdd`", "did you mean `zstd`?", "zstdd"),
    ("release-kind", HEAD + "flow f { edge a: release kv fre by gpu0.launch }",
     "FX-TYP-003", "unknown release kind `fre`", "did you mean `free`?", "fre"),
    ("device-kind", HEAD.replace("cxl0: cxl_mem", "cxl0: cxl_memory"),
     "FX-TYP-003", "unknown device kind `cxl_memory`", "did you mean `cxl_mem`?", "cxl_memory"),
    ("link-order", HEAD.replace("cxl ordered", "cxl ordred"),
     "FX-TYP-003", "unknown link order `ordred`", "did you mean `ordered`?", "ordred"),
    ("reduce-op", HEAD + "flow f { edge a: reduce(summ) kv -> kv by gpu0.launch }",
     "FX-TYP-003", "unknown reduction operator `summ`", "did you mean `sum`?", "summ"),
    ("map-class", HEAD + "map n: hash<u32, u32>[4] class linearisable",
     "FX-TYP-003", "unknown consistency class `linearisable`", "did you mean `linearizable`?", "linearisable"),
    ("local-without-device", HEAD + "map n: hash<u32, u32>[4] class local",
     "FX-TYP-002", "class `local` needs a device", "local(gpu0)", "local"),
    ("const-ringbuf", HEAD + "map n: ringbuf<u32, u64>[4] class const",
     "FX-TYP-002", "a `const` map cannot be a ring buffer", "`hash` or `array`", "ringbuf"),
    ("const-merge", HEAD + "map n: array<u32, u64>[4] class const merge sum",
     "FX-TYP-002", "a `const` map cannot be merged", "without `merge`", "sum"),
    ("const-device", HEAD + "map n: array<u32, u64>[4] class const(gpu0)",
     "FX-TYP-002", "class `const` takes no device", "only `local(DEV)`", "gpu0"),
    ("region-outside-space", HEAD + "region big in hbm0 at 1 GiB size 1 owner gpu0",
     "FX-TYP-002", "region `big` lies outside space `hbm0`", "absolute address", None),
    ("family-outside-space", HEAD + "region fam[i in 0..8] in hbm0 at 1 GiB - 4 KiB + i * 1 KiB size 1 KiB owner gpu0",
     "FX-TYP-002", "region `fam[4]` lies outside space `hbm0`", None, None),
    ("zero-length", HEAD + "flow f { edge a: write kv[0, +0] by gpu0.launch }",
     "FX-TYP-002", "slice length 0 is not positive", None, "+0"),
    ("negative-stride", HEAD + "flow f { edge a: write kv[0, elem 4, stride -8, count 2] by gpu0.launch }",
     "FX-TYP-002", "stride -8 is negative", None, "stride -8"),
    ("incomplete-stride", HEAD + "flow f { edge a: write kv[0, elem 4, count 2] by gpu0.launch }",
     "FX-TYP-002", "strided slice without `stride`", None, "[0, elem 4, count 2]"),
    ("space-size-zero", HEAD + "space z on gpu0 size 0", "FX-TYP-002", "space `z` has size 0", None, "0"),
    ("space-overlap", HEAD + "space act on gpu0 base 512 MiB size 1 GiB",
     "FX-TYP-002", "space `act` overlaps space `hbm0` on `gpu0`", "`base` at or past 0x40000000",
     "space act on gpu0 base 512 MiB size 1 GiB"),
    ("space-too-big", HEAD + "space z on gpu0 base 0xffff_ffff_ffff_f000 size 1 MiB",
     "FX-TYP-002", "does not fit in 64-bit addresses", None, None),
    ("keep-percent", HEAD + "flow f { edge a: write kv by gpu0.launch transform filter(keep 120) }",
     "FX-TYP-002", "`keep` is 120", "between 0 and 100", "120"),
    ("xf-unknown-param", HEAD + "flow f { edge a: write kv by gpu0.launch transform quantize(bf16 -> fp8, grup 4) }",
     "FX-TYP-002", "`quantize` has no parameter `grup`", "did you mean `group`?", "grup"),
    ("xf-missing-arg", HEAD + "flow f { edge a: write kv by gpu0.launch transform checksum }",
     "FX-TYP-002", "`checksum` needs `algo`", "crc32c", "checksum"),
    ("division-by-zero", HEAD + "flow f { for i in 0..2 { edge a[i]: write kv[0, +4 / i] by gpu0.launch } }",
     "FX-TYP-002", "division by zero", "nonzero over the index range", "4 / i"),
    ("division-by-constant-zero", HEAD + "flow f { edge a: write kv[0, +4 / 0] by gpu0.launch }",
     "FX-TYP-002", "division by zero", "nonzero", "4 / 0"),
    ("non-constant-range", HEAD + "flow f { for i in 0..2 { for j in 0..i { } } }",
     "FX-TYP-002", "index variable `i` in a constant expression", "constant", "i"),
    ("backwards-range", HEAD + "flow f { for i in 4..2 { } }", "FX-TYP-002", "range 4..2 runs backwards", None, "4..2"),
    ("clause-twice", HEAD + "flow f { edge a: write kv by gpu0.launch stream s stream t }",
     "FX-TYP-002", "`stream` given twice", None, "stream t"),
    ("self-link", HEAD.replace("gpu0 -- cxl0 : cxl", "gpu0 -- gpu0 : cxl"),
     "FX-TYP-002", "connects `gpu0` to itself", None, None),
    ("suppression-no-reason", HEAD + "# fx: allow FX-ORD-002\n",
     "FX-SUP-001", "suppression of `FX-ORD-002` has no reason", 'reason "', "# fx: allow FX-ORD-002"),
    ("suppression-empty-reason", HEAD + '# fx: allow FX-ORD-002 reason ""\n',
     "FX-SUP-001", "has no reason", None, None),
    ("suppression-malformed", HEAD + "# fx: allow\n", "FX-SUP-003", "malformed suppression", None, None),
    ("suppression-unknown-code", HEAD + '# fx: allow FX-ORD-009 reason "x"\n',
     "FX-SUP-003", "unknown diagnostic code `FX-ORD-009`", "did you mean", None),
    ("suppression-lower-case", HEAD + '# fx: allow fx-ord-002 reason "x"\n',
     "FX-SUP-003", "unknown diagnostic code `fx-ord-002`", "did you mean `FX-ORD-002`", None),
    ("huge-range", HEAD + "flow f { for i in 0..10000000000 { edge a[i]: write kv by gpu0.launch } }",
     "FX-LIM-001", "range of 10000000000 iterations exceeds the limit", None, "0..10000000000"),
    ("huge-product", HEAD + "flow f { for i in 0..100000 { for j in 0..100000 { edge a[i][j]: write kv by gpu0.launch } } }",
     "FX-LIM-001", "flows unroll to 10000000000 edges", None, "f"),
    ("empty-loops", HEAD + "flow f { for i in 0..10000000 { for j in 0..10000000 { } } }",
     "FX-LIM-001", "loop iterations", None, "f"),
    ("huge-region-family", HEAD + "region big[i in 0..100000000] in hbm0 at i size 1 owner gpu0",
     "FX-LIM-001", "range of 100000000 iterations", None, None),
    ("deep-nesting", HEAD + "flow f {" + "".join(f" for i{k} in 0..1 {{" for k in range(20)) + "}" * 20 + " }",
     "FX-LIM-001", "nested deeper than the limit of 16", "flatten", None),
    ("policy-syntax", HEAD + "flow f { edge a: write kv gpu0.launch }", "FX-SYN-001", "missing `by`", None, "gpu0"),
    ("ambiguous-link", HEAD.replace("  link gpu0", "  link up1 = gpu0 -- cxl0 : pcie posted\n  link gpu0")
     + "flow f { edge a: flush gpu0 -- cxl0 by gpu0.launch }",
     "FX-NAM-006", "names 2 links: `up1`, `gpu0--cxl0`", "name the link", "gpu0 -- cxl0"),
    ("via-same-device", HEAD + "flow f { edge a: move kv -> pool[0] by gpu0.launch via gpu0 -- cxl0 }",
     "FX-TYP-006", "stay on `gpu0`", "drop the `via` clause", "via gpu0 -- cxl0"),
    ("via-on-a-flush", HEAD + "flow f { edge a: flush gpu0 -- cxl0 by gpu0.launch via gpu0 -- cxl0 }",
     "FX-TYP-006", "the edge moves no bytes, so there is no route to pin", "names its link directly",
     "via gpu0 -- cxl0"),
    ("flush-of-a-self-link", HEAD + "flow f { edge a: flush gpu0 -- gpu0 by gpu0.launch }",
     "FX-NAM-001", "no link joins `gpu0` to itself", "by its two ends (`gpu0 -- DEV`)", "gpu0 -- gpu0"),
    ("via-not-from-source", TWO_HOPS + "flow f { edge a: move kv -> blk by gpu0.launch via sw0 -- cxl0, gpu0 -- sw0 }",
     "FX-TYP-006", "reaches `gpu0`, but link `sw0--cxl0` joins `sw0` and `cxl0`", "in order", "via sw0 -- cxl0, gpu0 -- sw0"),
    ("via-short", TWO_HOPS + "flow f { edge a: move kv -> blk by gpu0.launch via gpu0 -- sw0 }",
     "FX-TYP-006", "ends at `sw0`, not at `cxl0`", "continue the route", None),
    ("via-loop", TWO_HOPS + "flow f { edge a: move kv -> blk by gpu0.launch via gpu0 -- sw0, sw0 -- gpu0, gpu0 -- sw0 }",
     "FX-TYP-006", "visits `gpu0` twice", "simple path", None),
    ("via-past-the-end", TWO_HOPS.replace("  link sw0 -- cxl0 : cxl ordered\n", "  link sw0 -- cxl0 : cxl ordered\n  link cxl0 -- dpu0 : cxl ordered\n  device dpu0: dpu hooks [rx]\n")
     + "flow f { edge a: move kv -> blk by gpu0.launch via gpu0 -- sw0, sw0 -- cxl0, cxl0 -- dpu0 }",
     "FX-TYP-006", "reaches `cxl0` before its last link", "end the route", None),
    ("via-around-the-driver", TWO_HOPS.replace("  link sw0 -- cxl0 : cxl ordered\n",
                                               "  link sw0 -- cxl0 : cxl ordered\n  link gpu0 -- cxl0 : cxl ordered\n")
     + "flow f { edge a: move kv -> blk by sw0.route via gpu0 -- cxl0 }",
     "FX-TYP-006", "route from `gpu0` to `cxl0` leaves out `sw0`, whose engine moves the bytes", "through `sw0`",
     "via gpu0 -- cxl0"),
    ("via-twice", TWO_HOPS + "flow f { edge a: move kv -> blk by gpu0.launch via gpu0 -- sw0, sw0 -- cxl0 via gpu0 -- sw0, sw0 -- cxl0 }",
     "FX-TYP-002", "`via` given twice", "one `via`", None),
]


@pytest.mark.parametrize(("text", "code", "message", "help_part", "underlined"),
                         [case[1:] for case in ERRORS], ids=[case[0] for case in ERRORS])
def test_errors(tmp_path: Path, text: str, code: str, message: str, help_part: str | None,
                underlined: str | None) -> None:
    policy, diags, sources = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert policy is None
    matching = [d for d in diags if d.code == code and message in d.message]
    assert matching, [(d.code, d.message) for d in diags]
    d = matching[0]
    assert d.code in REGISTRY and d.severity is Severity.ERROR
    assert not d.message.endswith(".") and d.message[0] == d.message[0].lower()
    assert d.primary is not None
    if help_part is not None:
        assert d.help is not None and help_part in d.help, d.help
    if underlined is not None:
        assert _text(sources, d.primary.span) == underlined


def test_duplicates_point_at_the_first_declaration(tmp_path: Path) -> None:
    text = HEAD + "region kv in hbm0 at 0 size 1 owner gpu0\n"
    _, diags, sources = _load(tmp_path, {"p.fx": text}, "p.fx")
    (d,) = diags
    (related,) = d.related
    assert related.message == "first declared here"
    assert related.span.start < d.primary.span.start
    assert _text(sources, related.span) == "kv"


def test_spaces_of_one_device_may_touch_and_other_devices_may_reuse_addresses(tmp_path: Path) -> None:
    """Overlapping spaces are an error only on one device: a space that starts where another of
    its device ends, or one on another device at the same addresses (other memory), is fine."""
    text = HEAD + "space act on gpu0 base 1 GiB size 1 GiB\nspace far on cxl0 size 1 GiB\n"
    policy, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert policy is not None and not diags


def test_huge_range_is_not_expanded(tmp_path: Path) -> None:
    # Would take hours and gigabytes if the limit were checked after expanding.
    text = HEAD + "flow f { for i in 0..10000000000 { for j in 0..10000000000 { edge a[i][j]: write kv by gpu0.launch } } }"
    policy, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert policy is None and {d.code for d in diags} == {"FX-LIM-001"}


def test_limits_are_configurable(tmp_path: Path) -> None:
    text = HEAD + "flow f { for i in 0..10 { edge a[i]: write kv by gpu0.launch } }"
    ok, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert ok is not None and diags == []
    for limits in (Limits(max_edges=5), Limits(max_range=5), Limits(max_regions=3),
                   Limits(max_file_bytes=100), Limits(max_nesting=0)):
        policy, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx", limits=limits)
        assert policy is None and [d.code for d in diags][:1] == ["FX-LIM-001"], limits


def test_value_errors_in_loops_are_reported_once(tmp_path: Path) -> None:
    text = HEAD + "flow f { for i in 0..100 { edge a[i]: write pool[i] by gpu0.launch } }"
    _, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert [d.code for d in diags] == ["FX-TYP-004"]


def test_diagnostics_sorted_by_file_and_offset(tmp_path: Path) -> None:
    text = HEAD + ("flow f { edge a: write kx by gpu1.launch\n edge b: write kv by gpuX.launch }\n"
                   "# fx: allow FX-ORD-002\n")
    _, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    keys = [(d.primary.span.file, d.primary.span.start) for d in diags]
    assert keys == sorted(keys) and len(diags) == 4


# ---- files and includes --------------------------------------------------------------------------


def test_include_escaping_repo(tmp_path: Path) -> None:
    (tmp_path / "outside.fx").write_text("space s on gpu0 size 1 MiB\n")
    files = {"repo/p.fx": 'policy "p"\ninclude "../outside.fx"\n'}
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".git").mkdir()
    _write(tmp_path, files)
    sources = SourceMap()
    policy, diags = load_policy(str(tmp_path / "repo/p.fx"), sources)
    assert policy is None and [d.code for d in diags] == ["FX-NAM-004"]
    assert "resolves outside the repository" in diags[0].message
    assert str(tmp_path / "repo") in (diags[0].help or "")


def test_include_through_symlink_escaping_repo(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.fx"
    outside.write_text("space s on gpu0 size 1 MiB\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "link.fx").symlink_to(outside)
    (repo / "p.fx").write_text('policy "p"\ninclude "link.fx"\n')
    policy, diags = load_policy(str(repo / "p.fx"), SourceMap())
    assert policy is None and [d.code for d in diags] == ["FX-NAM-004"]


def test_without_git_the_root_is_the_policy_directory(tmp_path: Path) -> None:
    files = {"a/b/p.fx": 'policy "p"\ninclude "../common.fx"\n', "a/common.fx": COMMON}
    policy, diags, _ = _load(tmp_path, files, "a/b/p.fx", repo=False)
    if any(parent.joinpath(".git").exists() for parent in tmp_path.parents):
        pytest.skip("the temporary directory lies inside a git repository")
    assert [d.code for d in diags] == ["FX-NAM-004"]


def test_include_cycle(tmp_path: Path) -> None:
    files = {
        "p.fx": 'policy "p"\ninclude "inc/a.fx"\n',
        "inc/a.fx": 'include "b.fx"\n',
        "inc/b.fx": 'include "a.fx"\n',
    }
    policy, diags, _ = _load(tmp_path, files, "p.fx")
    assert policy is None and [d.code for d in diags] == ["FX-NAM-005"]
    assert diags[0].message == "include cycle: `inc/a.fx` -> `inc/b.fx` -> `inc/a.fx`"
    assert diags[0].primary.span.file.endswith("b.fx")


def test_self_include_is_a_cycle(tmp_path: Path) -> None:
    policy, diags, _ = _load(tmp_path, {"p.fx": 'policy "p"\ninclude "p.fx"\n'}, "p.fx")
    assert policy is None and [d.code for d in diags] == ["FX-NAM-005"]


def test_include_missing(tmp_path: Path) -> None:
    policy, diags, sources = _load(tmp_path, {"p.fx": 'policy "p"\ninclude "nope.fx"\n'}, "p.fx")
    assert policy is None and [d.code for d in diags] == ["FX-NAM-003"]
    assert diags[0].message == "include `nope.fx` not found"
    assert _text(sources, diags[0].primary.span) == 'include "nope.fx"'


def test_root_file_missing(tmp_path: Path) -> None:
    policy, diags = load_policy(str(tmp_path / "absent.fx"), SourceMap())
    assert policy is None and [d.code for d in diags] == ["FX-NAM-003"]


def test_policy_in_included_file(tmp_path: Path) -> None:
    files = {"p.fx": 'policy "p"\ninclude "inc.fx"\n', "inc.fx": 'policy "other"\n'}
    policy, diags, _ = _load(tmp_path, files, "p.fx")
    assert policy is None and [d.code for d in diags] == ["FX-SYN-001"]
    assert diags[0].primary.span.file.endswith("inc.fx")


def test_syntax_error_in_included_file_is_registered(tmp_path: Path) -> None:
    files = {"p.fx": 'policy "p"\ninclude "inc.fx"\n', "inc.fx": "fabric { device gpu0 gpu }\n"}
    policy, diags, sources = _load(tmp_path, files, "p.fx")
    assert policy is None and [d.code for d in diags] == ["FX-SYN-001"]
    span = diags[0].primary.span
    assert span.file.endswith("inc.fx") and _text(sources, span) == "gpu"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (HAPPY[: HAPPY.index("transform quantize")], "FX-SYN-003"),
        (HAPPY[: HAPPY.index("0x80_2000_0000 size")] + "0x80_2000_0000", "FX-SYN-003"),
        (b'policy "p"\n\x00\x01\x02\xff\xfe', "FX-SYN-004"),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), "FX-SYN-004"),
        ('policy "p" \u00a7', "FX-SYN-002"),
    ],
    ids=["truncated-in-flow", "truncated-in-space", "nul-bytes", "elf-binary", "stray-character"],
)
def test_broken_files(tmp_path: Path, content: str | bytes, code: str) -> None:
    policy, diags, sources = _load(tmp_path, {"p.fx": content}, "p.fx")
    assert policy is None and [d.code for d in diags] == [code]
    assert sources.get(str(tmp_path / "p.fx")) is not None


def test_every_error_code_used_is_registered(tmp_path: Path) -> None:
    for _, text, code, *_ in ERRORS:
        assert code in REGISTRY


# ---- robustness: no input makes the front end raise ----------------------------------------------

SINGLE = HAPPY.replace('include "../fabric/common.fx"\n', COMMON).replace(
    'include "../fabric/common.fx"   # a second include of the same file is a no-op\n', "")
_PIECES = ["[*]", "[0]", "[99]", "0", "-1", "0x0", " kv", " pool", " kvb", "[", "]", ",", "+", " elem 0",
           " gpu0", " cxl0", "}", "{", " after a", " bytes 0", " / 0", " % 0", " for i in 0..3 {", " if ",
           " spill[*]", "..", " 1 GiB", " Kib", " release kv free", " flush up0", " final owner kv = gpu0",
           "\n# fx: allow FX-ORD-001\n", '"', "\x00", "\u00e9", " map_read m[0]", " update ctr[999] = 1"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(SINGLE)), st.integers(0, 30), st.sampled_from(_PIECES))
def test_mutated_policies_never_raise(tmp_path_factory_module: Path, at: int, cut: int, piece: str) -> None:
    text = SINGLE[:at] + piece + SINGLE[at + cut:]
    path = tmp_path_factory_module / "m.fx"
    path.write_text(text, encoding="utf-8")
    policy, diags = load_policy(str(path), SourceMap())
    assert (policy is None) == any(d.severity is Severity.ERROR for d in diags)
    assert all(d.code in REGISTRY and d.primary is None or d.primary.span.file for d in diags)
    keys = [_diag_order(d) for d in diags]
    assert keys == sorted(keys)


def _diag_order(d: Diagnostic) -> tuple[str, int]:
    return ("", -1) if d.primary is None else (d.primary.span.file, d.primary.span.start)


@pytest.fixture(scope="module")
def tmp_path_factory_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_internal_and_input_codes_cannot_be_suppressed(tmp_path) -> None:
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    p = tmp_path / "s.fx"
    p.write_text('policy "s"\nfabric { device g: gpu hooks [launch] }  # fx: allow FX-INT-001 reason "x"\n'
                 '# fx: allow FX-NAM-001 reason "y"\n')
    pol, diags = load_policy(str(p), SourceMap())
    assert pol is None
    assert [(d.code, d.message) for d in diags] == [
        ("FX-SUP-003", "`FX-INT-001` cannot be suppressed"), ("FX-SUP-003", "`FX-NAM-001` cannot be suppressed")]


def test_map_values_must_fit_their_type(tmp_path) -> None:
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    p = tmp_path / "v.fx"
    p.write_text('policy "v"\nfabric { device g: gpu hooks [launch] }\nspace s on g size 1 MiB\n'
                 'region r in s at 0 size 4 KiB owner g\nmap tbl: array<u32, u8>[4] class local(g)\n'
                 'flow f { edge w: write r by g.launch map_write tbl[1] = 256 }\n')
    pol, diags = load_policy(str(p), SourceMap())
    assert pol is None and [d.code for d in diags] == ["FX-TYP-002"]
    assert "does not fit `u8`" in diags[0].message


def test_map_keys_must_fit_their_type(tmp_path) -> None:
    """An array of 1000 entries with `u8` keys: key 255 fits, key 999 is in range of the entries
    but not of the key type (FX-TYP-002), as a value is checked against its type."""
    from fxverify.resolve import load_policy
    from fxverify.source import SourceMap

    p = tmp_path / "k.fx"
    text = ('policy "k"\nfabric { device g: gpu hooks [launch] }\nspace s on g size 1 MiB\n'
            'region r in s at 0 size 4 KiB owner g\nmap tbl: array<u8, u8>[1000] class local(g)\n'
            'flow f { edge w: write r by g.launch map_write tbl[KEY] = 1 }\n')
    p.write_text(text.replace("KEY", "255"))
    assert load_policy(str(p), SourceMap())[0] is not None
    p.write_text(text.replace("KEY", "999"))
    pol, diags = load_policy(str(p), SourceMap())
    assert pol is None and [d.code for d in diags] == ["FX-TYP-002"]
    assert diags[0].message == "key 999 does not fit `u8`, the key type of map `tbl`"


def test_via_resolves_to_link_names_in_path_order(tmp_path: Path) -> None:
    text = TWO_HOPS + "flow f { edge a: move kv -> blk by gpu0.launch via gpu0 -- sw0, sw0 -- cxl0\n edge b: read blk by gpu0.launch }"
    policy, diags, _ = _load(tmp_path, {"p.fx": text}, "p.fx")
    assert policy is not None, [(d.code, d.message) for d in diags]
    assert policy.edge("a").via == ("gpu0--sw0", "sw0--cxl0")
    assert policy.edge("b").via is None


def test_a_finished_loader_keeps_its_result_and_drops_its_state() -> None:
    """A caller holds its ``Loader`` while it checks the policy (the gate measures first): once
    finished, the loader keeps the policy and diagnostics, not the instances and syntax tree it
    resolved them from, and finishing again returns the same result."""
    path = Path(__file__).resolve().parents[1] / "corpus/ordering/ok/spill-then-free.fx"
    loader = Loader(str(path), SourceMap())
    assert loader.measure() is not None and loader.st.items
    policy, diags = loader.finish()
    assert policy is not None and policy.edges
    assert not loader.st.instances and not loader.st.items and not loader.st.edge_fams
    again = loader.finish()
    assert again[0] is policy and again[1] is diags
