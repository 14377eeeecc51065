"""Certificates of fast proofs and their independent checker (``check --certify``).

Every method ``prove_fast`` can return has a certificate kind; the whole corpus certifies in both
modes; one tampered certificate per kind is rejected in both modes; random policies' certificates
all validate; a rejected certificate is FX-INT-001 (exit 3) naming the obligation.
"""

from __future__ import annotations

import ast
import dataclasses
import glob
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxverify.certificate import KINDS, METHOD_KINDS, Certificate, ChecksumWalk, FabricHop, HbPath
from fxverify.certify import MODES, Claim, certify
from fxverify.diagnostics import codes
from fxverify.ir import Policy
from fxverify.obligations.families import generate
from fxverify.pipeline import CheckOptions, check, discharge
from fxverify.resolve import load_policy
from fxverify.result import Verdict
from fxverify.smt.backend import SolverOptions
from fxverify.smt.factory import open_backend
from fxverify.source import SourceMap
from tests.conftest import ROOT
from tests.policies import policies

CORPUS = sorted(glob.glob(str(ROOT / "corpus/*/*/*.fx")))

# Small policies for the kinds no corpus policy proves fast.
EXTRA = {
    "read-cover": """policy "read-between"
fabric {
  device gpu0: gpu hooks [launch]
}
space hbm0 on gpu0 size 80 GiB
region g0 in hbm0 at 0x1000_0000 size 8 MiB owner gpu0 dtype fp32
region g1 in hbm0 at 0x1100_0000 size 8 MiB owner gpu0 dtype fp32
region acc in hbm0 at 0x1200_0000 size 8 MiB owner gpu0 dtype fp32
flow accumulate {
  edge mb0: reduce(sum) g0 -> acc by gpu0.launch stream main
  edge step: read acc by gpu0.launch stream main
  edge mb1: move g1 -> acc by gpu0.launch stream main
}
""",
    "one-destination": """policy "one-owner"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device nic0: nic hooks [rx, tx]
  link gpu0 -- nic0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
region stage in hbm0 at 0x6000_0000 size 1 MiB owner gpu0 dtype bf16
region half in hbm0 at 0x6000_0000 size 512 KiB owner gpu0 dtype bf16
flow ship {
  edge give: read stage by gpu0.copy_done handoff stage: gpu0 -> nic0
      handoff half: gpu0 -> nic0
}
""",
    "own-slot": """policy "own-slot"
fabric {
  device gpu0: gpu hooks [launch, copy_done]
}
space hbm0 on gpu0 size 80 GiB
region kv0 in hbm0 at 0x2000_0000 size 4 MiB owner gpu0 dtype bf16
region st in hbm0 at 0x3000_0000 size 4 KiB owner gpu0
map kv_sent: array<u32, u64>[8] class per_device merge sum
flow step {
  edge send0: write kv0 by gpu0.launch update kv_sent[0] = 4 MiB
  edge report: write st by gpu0.copy_done after send0 map_read kv_sent[0]
}
""",
}


def _items(policy: Policy) -> list[tuple[Claim, Certificate | None]]:
    _ctx, obs = generate(policy)
    out = []
    for ob in obs:
        method = ob.prove_fast()
        if method is not None:
            out.append((Claim(ob.key, str(ob.code), tuple(ob.edges), method), ob.certificate()))
    return out


def _load(path: str) -> Policy:
    pol, diags = load_policy(path, SourceMap())
    assert pol is not None, diags
    return pol


@pytest.fixture(scope="module")
def extra_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("certify")
    for kind, text in EXTRA.items():
        (d / f"{kind}.fx").write_text(text)
    return d


def _methods_in_source() -> set[str]:
    """Every string a ``prove_fast`` of the obligation modules can return (directly, or through
    the shared ``Obligation.order_method``)."""
    out: set[str] = set()
    for path in (ROOT / "fxverify/obligations").glob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, ast.FunctionDef) and fn.name in ("prove_fast", "order_method"):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Return) and node.value is not None:
                        for c in ast.walk(node.value):
                            if isinstance(c, ast.Constant) and isinstance(c.value, str):
                                out.add(c.value)
    return out


def test_every_fast_method_has_a_certificate_kind() -> None:
    methods = _methods_in_source()
    assert len(methods) >= 14, methods
    assert methods <= set(METHOD_KINDS), f"methods without a certificate kind: {sorted(methods - set(METHOD_KINDS))}"
    assert set().union(*METHOD_KINDS.values()) == set(KINDS)
    for cls in KINDS.values():
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(Path(p).relative_to(ROOT)))
def test_corpus_certifies(path: str, mode: str) -> None:
    """Every fast proof of the corpus (ok files and the proved obligations of fail files) has a
    certificate the checker accepts."""
    r = check(path, CheckOptions(certify=mode, verify_hints=False))
    assert r.policy is not None, "a corpus policy must load"
    fast = sum(1 for o in r.outcomes if o.verdict is Verdict.PROVED and o.method != "solver")
    assert r.certified == fast and r.certify_rejected == 0
    assert not [d.message for d in r.diagnostics if d.code is codes.INT_001]


def _sample(kind: str, extra: Path) -> tuple[Policy, Claim, Certificate]:
    """The first certificate of ``kind`` in the corpus (or the extra policies); for paths and
    routes, one whose evidence has something to tamper with."""
    for path in [str(extra / f"{kind}.fx")] * (kind in EXTRA) + CORPUS:
        pol = _load(path)
        for claim, cert in _items(pol):
            if cert is None or cert.kind != kind:
                continue
            ev = cert.evidence
            if kind == "fabric-path" and not any(h.links for h in ev.hops):
                continue
            if kind == "every-path" and (ev.pinned or not ev.carriers):
                continue
            if kind == "topological-order" and not any(e.after or e.stream for e in pol.edges):
                continue
            if kind == "within-allocation" and not ev.order:
                continue
            if kind == "same-requester" and not ev.route:
                continue
            if kind == "flush-after" and ev.before is None:
                continue
            return pol, claim, cert
    raise AssertionError(f"no certificate of kind {kind}")


def _reverse(p: HbPath) -> HbPath:
    return HbPath(tuple(reversed(p.edges)))


def _other_device(pol: Policy, name: str) -> str:
    return next(d.name for d in pol.devices if d.name != name) if len(pol.devices) > 1 else "nowhere"


def _tamper(kind: str, pol: Policy, ev):
    r = dataclasses.replace
    if kind == "hb-order":
        return r(ev, path=_reverse(ev.path))
    if kind == "hb-before-all":  # claim the access comes before the earlier ones
        return r(ev, earlier=tuple(r(y, path=_reverse(y.path)) for y in ev.earlier))
    if kind == "cancel-order":  # claim the other edge finishes before the cancel starts
        return r(ev, path=_reverse(ev.path))
    if kind in ("flush-between", "read-back-between", "host-read-between"):  # claim the reader runs before the flush or read
        return r(ev, after=_reverse(ev.after))
    if kind in ("flush-after", "read-back-after"):  # claim the flush or read-back runs before the persisted write
        return r(ev, before=_reverse(ev.before))
    if kind in ("owner-chain", "lease-chain", "one-owner"):
        return r(ev, device=_other_device(pol, ev.device))
    if kind == "final-owner":
        return r(ev, owner=_other_device(pol, ev.owner))
    if kind == "topological-order":
        return r(ev, order=tuple(reversed(ev.order)))
    if kind == "interval":
        return r(ev, end=ev.lo + (ev.hi - ev.lo) // 2)
    if kind == "in-place":
        return r(ev, rank=ev.rank + 1)
    if kind == "fabric-path":
        hops = tuple(FabricHop(h.src, h.dst, h.links[:-1]) for h in ev.hops)
        return r(ev, hops=hops)
    if kind == "every-path":
        return r(ev, carriers=ev.carriers[:-1])
    if kind == "declared-hook":
        return r(ev, hook=ev.hook + "_x")
    if kind == "link-endpoint":
        return r(ev, device=_other_device(pol, ev.device))
    if kind == "one-destination":
        return r(ev, dst=_other_device(pol, ev.dst))
    if kind == "local-class":
        return r(ev, device=_other_device(pol, ev.device))
    if kind == "own-slot":
        return r(ev, key=(ev.key or 0) + 1)
    if kind == "size-bound":
        return r(ev, capacity=ev.sizes[-1] - 1)
    if kind == "checksum-walk":
        return r(ev, valid=ev.valid[:-1] + (not ev.valid[-1],))
    if kind == "layout":
        return r(ev, nbytes=ev.nbytes + 1)
    if kind == "read-cover":
        return r(ev, reads=())
    if kind == "lifetime-chain":  # claim the chain starts with the other kind
        return r(ev, kinds=("alloc" if ev.kinds[0] == "release" else "release",) + ev.kinds[1:])
    if kind == "within-allocation":  # leave an event unordered with the use
        return r(ev, order=ev.order[:-1])
    if kind == "defined-cover":
        return r(ev, writes=(), inits=())
    if kind == "written-back":  # claim the invalidate comes first
        return r(ev, between=_reverse(ev.between))
    if kind == "same-requester":  # claim the bytes are in the device's own memory
        return r(ev, route=())
    if kind == "notified":  # claim the entry was written before the block, or waited for by its writer
        return r(ev, before=_reverse(ev.before)) if ev.before is not None else r(ev, consumer=ev.notification)
    raise AssertionError(kind)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_tampered_certificate_is_rejected(kind: str, mode: str, extra_dir: Path) -> None:
    pol, claim, cert = _sample(kind, extra_dir)
    assert certify(pol, [(claim, cert)], mode).failures == []  # the untouched one validates
    bad = dataclasses.replace(cert, evidence=_tamper(kind, pol, cert.evidence))
    assert bad != cert
    failures = certify(pol, [(claim, bad)], mode).failures
    assert [f.key for f in failures] == [claim.key]


@pytest.mark.parametrize("mode", MODES)
def test_lease_chain_without_its_revoke_orderings_is_rejected(mode: str) -> None:
    """A lease chain must order every revoke of the region from the lessee before the lease or
    after the read: dropping the revoke entries, or reversing a revoke's path, is rejected."""
    pol = _load(str(ROOT / "corpus/ownership/ok/read-after-revoke.fx"))
    claim, cert = next((c, x) for c, x in _items(pol) if x is not None and x.kind == "lease-chain" and x.evidence.revokes)
    assert certify(pol, [(claim, cert)], mode).failures == []
    ev = cert.evidence
    rv = ev.revokes[0]
    for bad_ev in (dataclasses.replace(ev, revokes=()),
                   dataclasses.replace(ev, revokes=(dataclasses.replace(rv, path=_reverse(rv.path)),) + ev.revokes[1:]),
                   dataclasses.replace(ev, revokes=ev.revokes + (dataclasses.replace(rv, handoff=ev.at),))):
        bad = dataclasses.replace(cert, evidence=bad_ev)
        assert [f.key for f in certify(pol, [(claim, bad)], mode).failures] == [claim.key]


@pytest.mark.parametrize("tamper", ["none", "device", "edge", "via"])
@pytest.mark.parametrize("mode", MODES)
def test_lease_chain_of_an_enclosing_lease_needs_its_grantors_ownership(mode: str, tamper: str) -> None:
    """A lease of a pool lends a block inside it only while the grantor owns the block: the chain
    of a read under such a lease must show the grantor's ownership when the lease starts. Without
    it, or with a chain for another device, another edge or through the handoff that took the
    block away, it is rejected."""
    pol = _load(str(ROOT / "corpus/ownership/ok/lease-of-pool-lends-no-foreign-block.fx"))
    claim, cert = next((c, x) for c, x in _items(pol) if c.key == "FX-OWN-001:send1|blk1")
    assert certify(pol, [(claim, cert)], mode).failures == []
    ev = cert.evidence
    g = ev.grantor
    assert g is not None and g.via == pol.edge("back").eid  # the handoff `back` gave `blk1` to the GPU
    bad_grantor = {"none": None, "device": dataclasses.replace(g, device="cxl0"), "edge": dataclasses.replace(g, at=ev.at),
                   "via": dataclasses.replace(g, via=pol.edge("offload").eid)}[tamper]
    bad = dataclasses.replace(cert, evidence=dataclasses.replace(ev, grantor=bad_grantor))
    assert [f.key for f in certify(pol, [(claim, bad)], mode).failures] == [claim.key]


@pytest.mark.parametrize("mode", MODES)
def test_path_with_a_dropped_step_or_a_swapped_endpoint_is_rejected(mode: str) -> None:
    pol, claim, cert = next((pol, c, x) for path in CORPUS for pol in [_load(path)] for c, x in _items(pol)
                            if x is not None and x.kind == "hb-order" and len(x.evidence.path.edges) < len(pol.edges))
    ev = cert.evidence
    dropped = HbPath(ev.path.edges[:-1]) if len(ev.path.edges) > 2 else HbPath(ev.path.edges[:1])
    other = next(e.eid for e in pol.edges if e.eid not in ev.path.edges)
    swapped = HbPath(ev.path.edges[:-1] + (other,))
    for p in (dropped, swapped):
        bad = dataclasses.replace(cert, evidence=dataclasses.replace(ev, path=p))
        assert [f.key for f in certify(pol, [(claim, bad)], mode).failures] == [claim.key]


@pytest.mark.parametrize("mode", MODES)
def test_in_order_legs_of_a_third_party_copy_are_certified_leg_by_leg(mode: str) -> None:
    """A copy the GPU's engine drives inside the expander requires in-order delivery: one
    ``every-path`` certificate per leg (into the engine, out of it). Each is accepted; one leg's
    evidence for the other leg's key, and the one obligation over the endpoints (which the bytes
    never take alone) are rejected."""
    pol = _load(str(ROOT / "corpus/ordering/ok/in-order-compaction-over-ordered-links.fx"))
    legs = [(c, x) for c, x in _items(pol) if x is not None and x.kind == "every-path"]
    assert sorted(c.key for c, _ in legs) == ["FX-ORD-004:compact:in_order:cxl0>gpu0", "FX-ORD-004:compact:in_order:gpu0>cxl0"]
    assert certify(pol, legs, mode).failures == []
    (c1, x1), (c2, x2) = legs
    swapped = [(c1, dataclasses.replace(x2, key=x1.key)), (c2, dataclasses.replace(x1, key=x2.key))]
    assert sorted(f.key for f in certify(pol, swapped, mode).failures) == sorted([c1.key, c2.key])
    whole = "FX-ORD-004:compact:in_order"
    ends = dataclasses.replace(x1, key=whole, evidence=dataclasses.replace(x1.evidence, src="cxl0", dst="cxl0", carriers=()))
    assert [f.key for f in certify(pol, [(dataclasses.replace(c1, key=whole), ends)], mode).failures] == [whole]


@pytest.mark.parametrize("mode", MODES)
def test_a_certificate_of_another_obligation_or_none_is_rejected(mode: str) -> None:
    pol = _load(str(ROOT / "corpus/ordering/ok/kv-offload-ordered.fx"))
    (c1, x1), (c2, _x2) = _items(pol)[:2]
    got = certify(pol, [(c1, None), (c2, x1)], mode).failures
    assert [f.key for f in got] == [c1.key, c2.key]
    assert "no certificate" in got[0].reason


def test_a_rejected_certificate_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline turns a bad certificate into FX-INT-001 naming the key; the obligation is no
    longer proved; exit 3."""
    from fxverify.obligations.alias import Bounds

    real = Bounds.evidence

    def lying(self):
        ev = real(self)
        return None if ev is None else dataclasses.replace(ev, base=ev.base + 1)

    monkeypatch.setattr(Bounds, "evidence", lying)
    path = str(ROOT / "corpus/ordering/ok/kv-offload-ordered.fx")
    r = check(path, CheckOptions(certify="python", verify_hints=False))
    bad = [d for d in r.diagnostics if d.code is codes.INT_001]
    assert bad and all("FX-ALIAS-003:" in d.message and "certificate" in d.message for d in bad)
    assert r.certify_rejected == len(bad) and r.internal_error
    assert all(o.verdict.value == "unknown" for o in r.outcomes if o.key.startswith("FX-ALIAS-003"))
    assert check(path).diagnostics == []  # without --certify nothing changes


def test_cli_certify(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    path = str(ROOT / "corpus/ordering/ok/kv-offload-ordered.fx")
    out = subprocess.run([sys.executable, "-m", "fxverify", "check", "--no-cache", "--certify", path],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    assert "15 certificates checked" in out.stdout and "certificates of fast proofs: 15 checked, 0 rejected" in out.stdout
    out = subprocess.run([sys.executable, "-m", "fxverify", "check", "--no-cache", path, "--certify", "smt", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    doc = json.loads(out.stdout)
    assert doc["summary"]["certificates_checked"] == 15 and doc["results"][0]["certificates"] == {"checked": 15, "rejected": 0}
    plain = subprocess.run([sys.executable, "-m", "fxverify", "check", "--no-cache", path, "--format", "json"],
                           capture_output=True, text=True, cwd=ROOT, check=False)
    assert "certificates" not in plain.stdout


BACKEND = open_backend(SolverOptions())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(max_edges=5))
def test_every_fast_proof_of_random_policies_certifies(policy: Policy) -> None:
    items = _items(policy)
    assert all(cert is not None for _c, cert in items)
    for mode in MODES:
        report = certify(policy, items, mode, backend=BACKEND)
        assert report.checked == len(items) and report.failures == [], report.failures
    r = discharge(policy, CheckOptions(certify="python", verify_hints=False), BACKEND)
    assert r.certified == len(items) and r.certify_rejected == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=9), st.integers(0, 4), st.integers(0, 4))
def test_the_checker_finds_the_links_on_paths_as_the_prover_does(pairs, u, v) -> None:
    """Two algorithms for "which links lie on some simple path between two devices" agree: the
    prover's block-cut tree (``graph.possible_links``) and the checker's disjoint-paths flow
    (``certify.static.on_simple_path``)."""
    from fxverify.certify.facts import Facts
    from fxverify.certify.static import on_simple_path
    from fxverify.graph import PolicyGraph
    from fxverify.ir import Device, Link
    from fxverify.vocab import DeviceKind, LinkOrder

    devs = tuple(Device(f"d{i}", DeviceKind.PCIE_SWITCH, ("route",)) for i in range(5))
    links = tuple(Link(f"l{k}", f"d{a}", f"d{b}", "pcie", LinkOrder.ORDERED) for k, (a, b) in enumerate(pairs) if a != b)
    pol = Policy("p", "p.fx", devs, links, (), (), (), (), ())
    if u == v:
        return
    prover = {ln.name for ln in PolicyGraph(pol).possible_links(f"d{u}", f"d{v}")}
    checker = {ln.name for ln in links if on_simple_path(Facts(pol), ln.name, f"d{u}", f"d{v}")}
    assert prover == checker


@pytest.mark.parametrize("mode", MODES)
def test_checksum_walk_for_a_persist_its_space_refuses_is_rejected(mode: str) -> None:
    """A `checksum-walk` whose validity column is right is still rejected when the persisted space
    declares `checksum crc32c` and the chain persists without one, or with another algorithm: the
    checker reads the declared algorithm from the IR, not from the certificate."""
    text = (ROOT / "corpus/transforms/ok/persist-without-checksum.fx").read_text()
    for chain, space in (("persist", "persistent checksum crc32c"),
                         ("checksum(xxh64) |> persist", "persistent checksum crc32c")):
        src = text.replace("transform persist", f"transform {chain}").replace("persistent\n", f"{space}\n", 1)
        pol = load_policy_text(src)
        e = next(x for x in pol.edges if x.transforms)
        valid = [False]
        for t in e.transforms:
            valid.append(valid[-1] or t.kind.value == "checksum")
        cert = Certificate(f"FX-XF-002:{e.name}", "FX-XF-002", "chain-walk", (e.eid,), ChecksumWalk(tuple(valid)))
        claim = Claim(cert.key, cert.code, cert.edges, cert.method)
        assert [f.key for f in certify(pol, [(claim, cert)], mode).failures] == [claim.key]
        free = load_policy_text(src.replace(space, "persistent"))
        assert certify(free, [(claim, cert)], mode).failures == []


def load_policy_text(src: str) -> Policy:
    """Resolve policy text written to a temporary file (asserts it resolves)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "p.fx"
        p.write_text(src)
        return _load(str(p))


@pytest.mark.parametrize("mode", MODES)
def test_written_back_tampers_are_rejected(mode: str) -> None:
    """A write-back certificate (FX-ORD-005) must name a write-back by the writer's device and an
    invalidate by the reader's, each covering the shared bytes, ordered write -> write-back ->
    invalidate -> read: every other claim is rejected."""
    pol = _load(str(ROOT / "corpus/ordering/ok/cxl-fenced-flush-loop.fx"))
    claim, cert = next((c, x) for c, x in _items(pol) if x is not None and x.kind == "written-back"
                       and x.evidence.before is not None)
    assert certify(pol, [(claim, cert)], mode).failures == []
    ev = cert.evidence
    r = dataclasses.replace
    for bad_ev in (r(ev, hi=ev.hi - 1), r(ev, lo=ev.lo + 1), r(ev, before=None),
                   r(ev, before=_reverse(ev.before)), r(ev, after=None) if ev.after is not None else r(ev, inv_pos=1),
                   r(ev, writeback=ev.invalidate, wb_pos=ev.inv_pos),  # the reader's edge: another device
                   r(ev, wb_pos=ev.wb_pos + 1), r(ev, invalidate=ev.writeback, inv_pos=ev.wb_pos)):
        bad = dataclasses.replace(cert, evidence=bad_ev)
        assert [f.key for f in certify(pol, [(claim, bad)], mode).failures] == [claim.key], bad_ev


@pytest.mark.parametrize("mode", MODES)
def test_written_back_needs_two_hosts_on_a_noncoherent_space(mode: str) -> None:
    """The written-back checker re-derives what makes FX-ORD-005 apply: a write and a read of one
    `noncoherent` space by two different hosts. The same certificate against an IR where the
    space is coherent, the reader is a DMA device, or both accesses are reads, is rejected."""
    from fxverify.ir import AccessMode, EdgeAction
    from fxverify.vocab import DeviceKind
    pol = _load(str(ROOT / "corpus/ordering/ok/cxl-fenced-flush-loop.fx"))
    claim, cert = next((c, x) for c, x in _items(pol) if x is not None and x.kind == "written-back")
    assert certify(pol, [(claim, cert)], mode).failures == []
    w, r = cert.edges[0], cert.edges[1]
    space = pol.edges[w].accesses()[0].footprint.space
    reader = pol.edges[r].device
    ew = pol.edges[w]
    assert ew.action is EdgeAction.WRITE and ew.accesses()[0].mode is AccessMode.WRITE
    variants = [
        dataclasses.replace(pol, spaces=tuple(dataclasses.replace(sp, noncoherent=False) if sp.name == space else sp
                                              for sp in pol.spaces), _index={}),
        dataclasses.replace(pol, devices=tuple(dataclasses.replace(d, kind=DeviceKind.DPU) if d.name == reader else d
                                               for d in pol.devices), _index={}),
        dataclasses.replace(pol, edges=tuple(dataclasses.replace(e, action=EdgeAction.READ, src=e.dst, dst=None)
                                             if e.eid == w else e for e in pol.edges), _index={}),
    ]
    for other in variants:
        assert [f.key for f in certify(other, [(claim, cert)], mode).failures] == [claim.key]


@pytest.mark.parametrize("mode", MODES)
def test_notification_order_tampers_are_rejected(mode: str) -> None:
    """An early-notification proof (FX-ORD-006) is an HB path from the transfer to the notifying
    edge: the reversed path, or a path from another transfer, is rejected."""
    pol = _load(str(ROOT / "corpus/ordering/ok/notify-after-batch.fx"))
    items = [(c, x) for c, x in _items(pol) if x is not None and c.code == "FX-ORD-006"]
    assert len(items) == 4
    (claim, cert), (_, other) = items[0], items[1]
    assert certify(pol, [(claim, cert)], mode).failures == []
    for bad_ev in (dataclasses.replace(cert.evidence, path=_reverse(cert.evidence.path)), other.evidence):
        bad = dataclasses.replace(cert, evidence=bad_ev)
        assert [f.key for f in certify(pol, [(claim, bad)], mode).failures] == [claim.key]


@pytest.mark.parametrize("mode", MODES)
def test_same_requester_needs_one_route_for_the_write_and_the_read(mode: str) -> None:
    """A same-requester proof (FX-ORD-003 without a flush) holds only when the write and the read
    can each take one route, the same one: the certificate of the pinned hairpin is rejected for
    the twin whose transfers name no route (either PCIe function may carry them), and a route
    that skips the posted link or runs elsewhere is rejected."""
    ok = _load(str(ROOT / "corpus/ordering/ok/posted-read-back-one-function.fx"))
    claim, cert = next((c, x) for c, x in _items(ok) if x is not None and x.kind == "same-requester")
    assert cert.evidence.route == ("pf0",)
    assert certify(ok, [(claim, cert)], mode).failures == []
    bad = _load(str(ROOT / "corpus/ordering/fail/posted-read-back-over-another-function.fx"))
    assert [f.key for f in certify(bad, [(claim, cert)], mode).failures] == [claim.key]
    for route in (("pf1", "upi0"), ("pf0", "upi0"), ()):
        tampered = dataclasses.replace(cert, evidence=dataclasses.replace(cert.evidence, route=route))
        assert [f.key for f in certify(ok, [(claim, tampered)], mode).failures] == [claim.key], route


@pytest.mark.parametrize("mode", MODES)
def test_a_third_party_read_back_certifies_only_its_part_of_the_route(mode: str) -> None:
    """The responder NIC's flushing READ after its WRITE, both copies between two hosts pinned
    through it (corpus/ordering/ok/persist-rdma-read-same-function.fx): the same-requester and
    read-back certificates name the part of the routes between the NIC and the persistent memory.
    Each is rejected for the twin whose READ goes through the other function, and with the whole
    route, the other function, or the host's side of the NIC as the route."""
    ok = _load(str(ROOT / "corpus/ordering/ok/persist-rdma-read-same-function.fx"))
    bad = _load(str(ROOT / "corpus/ordering/fail/persist-rdma-read-other-function.fx"))
    items = {x.kind: (c, x) for c, x in _items(ok) if x is not None and x.kind in ("same-requester", "read-back-after")}
    assert set(items) == {"same-requester", "read-back-after"}
    for claim, cert in items.values():
        assert cert.evidence.route == ("pf0",)
        assert certify(ok, [(claim, cert)], mode).failures == []
        assert [f.key for f in certify(bad, [(claim, cert)], mode).failures] == [claim.key]
        for route in (("pf0", "wire", "host"), ("pf1",), ("wire", "host")):
            tampered = dataclasses.replace(cert, evidence=dataclasses.replace(cert.evidence, route=route))
            assert [f.key for f in certify(ok, [(claim, tampered)], mode).failures] == [claim.key], route


@pytest.mark.parametrize("mode", MODES)
def test_a_completion_entry_proves_a_read_only_from_host_memory_over_the_only_path(mode: str) -> None:
    """A `notified` proof (FX-ORD-003: the reader waits for a completion entry that followed the
    posted write) holds only for bytes in host memory, over the one path from the writer's device
    to it: the certificate of the host twin is rejected for the twin with a second PCIe link
    (either may carry the entry), for the twin whose memory is the GPU's, and with a route that
    skips the posted link or a consumer that does not wait for the entry."""
    ok = _load(str(ROOT / "corpus/ordering/ok/rdma-read-into-host-then-cqe.fx"))
    claim, cert = next((c, x) for c, x in _items(ok) if x is not None and x.kind == "notified")
    assert cert.evidence.route == ("pcie0",) and certify(ok, [(claim, cert)], mode).failures == []
    for twin in ("rdma-read-cqe-over-another-path", "rdma-read-into-gpu-then-flag"):
        bad = _load(str(ROOT / f"corpus/ordering/fail/{twin}.fx"))
        assert [e.name for e in bad.edges][1:] in (["cqe", "use"], ["flag", "attn"]), twin
        key = claim.key.replace("|use#", "|attn#") if "gpu" in twin else claim.key
        moved = dataclasses.replace(cert, key=key)
        assert [f.key for f in certify(bad, [(Claim(key, claim.code, claim.edges, claim.method), moved)], mode).failures] == [key], twin
    for ev in (dataclasses.replace(cert.evidence, route=("wire",)),
               dataclasses.replace(cert.evidence, consumer=cert.evidence.notification)):
        tampered = dataclasses.replace(cert, evidence=ev)
        assert [f.key for f in certify(ok, [(claim, tampered)], mode).failures] == [claim.key], ev


@pytest.mark.parametrize("mode", MODES)
def test_a_host_read_proves_a_read_only_over_the_only_path(mode: str) -> None:
    """A `host-read-between` proof (FX-ORD-003: the host reads the NIC's status register between
    the NIC's posted write and the host's read of the bytes) holds only over the one path between
    the two: the certificate of corpus/ordering/ok/posted-status-read-before-host-read.fx is
    rejected for the twin whose host reaches the NIC over two functions, with a route that is
    no path, with the reader or the writer named as the host read, and once an edge cancels the
    host read (it may never be issued)."""
    path = ROOT / "corpus/ordering/ok/posted-status-read-before-host-read.fx"
    ok = _load(str(path))
    claim, cert = next((c, x) for c, x in _items(ok) if x is not None and x.kind == "host-read-between")
    assert cert.evidence.route == ("pcie0",) and certify(ok, [(claim, cert)], mode).failures == []
    bad = _load(str(ROOT / "corpus/ordering/fail/posted-status-read-over-another-function.fx"))
    assert [e.name for e in bad.edges] == [e.name for e in ok.edges]
    key = claim.key.replace("|pcie0", "|pf0")
    moved = dataclasses.replace(cert, key=key, evidence=dataclasses.replace(cert.evidence, link="pf0", route=("pf0",)))
    assert [f.key for f in certify(bad, [(Claim(key, claim.code, claim.edges, claim.method), moved)], mode).failures] == [key]
    names = {e.name: e.eid for e in ok.edges}
    for ev in (dataclasses.replace(cert.evidence, route=("wire",)), dataclasses.replace(cert.evidence, reader=names["use"]),
               dataclasses.replace(cert.evidence, reader=names["land"])):
        tampered = dataclasses.replace(cert, evidence=ev)
        assert [f.key for f in certify(ok, [(claim, tampered)], mode).failures] == [claim.key], ev
    src = path.read_text().replace("hooks [irq]", "hooks [irq, abort]").rstrip()
    assert src.endswith("}")
    cancelled = load_policy_text(src[:-1] + "  edge watchdog: cancel status by cpu0.abort after land\n}\n")
    assert [f.key for f in certify(cancelled, [(claim, cert)], mode).failures] == [claim.key]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("good", "bad", "why"), [
    ("ordering/ok/posted-status-read-third-party-pinned.fx", ("via g0, p0 ", ""), "the copy pins no route"),
    ("ordering/fail/posted-host-read-after-host-stores.fx", ("device cpu1: nic", "device cpu1: cpu"), "the writer is a host"),
])
def test_a_host_read_certificate_needs_the_writes_route_and_a_device_writer(good: str, bad: tuple[str, str], why: str,
                                                                           mode: str) -> None:
    """A `host-read-between` certificate that validates where the rule holds is rejected where
    the write is a third-party copy that pins no route (its writes may also cross the links
    between its ends), and where the writer is itself a `cpu` (its stores are no DMA)."""
    text = (ROOT / "corpus" / good).read_text()
    if "device cpu1: cpu" in text:  # the failing twin: make the writer a device to get a proof
        text = text.replace("device cpu1: cpu", "device cpu1: nic")
    ok = load_policy_text(text)
    claims = [(c, x) for c, x in _items(ok) if x is not None and x.kind == "host-read-between"]
    assert claims, why
    assert bad[0] in text, bad[0]
    broken = load_policy_text(text.replace(*bad))
    for claim, cert in claims:
        assert certify(ok, [(claim, cert)], mode).failures == []
        assert [f.key for f in certify(broken, [(claim, cert)], mode).failures] == [claim.key], why


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("twin", "kinds"), [("posted-status-read-unordered-hop", {"host-read-between"}),
                                             ("rdma-cqe-over-unordered-hop", {"notified"}),
                                             ("posted-flushing-read-unordered-hop", {"same-requester", "read-back-between"})])
def test_an_unordered_link_on_the_route_rejects_the_proofs_that_rest_on_order(twin: str, kinds: set[str], mode: str) -> None:
    """The proofs that a posted write is visible without a flush because something followed it
    along one path (a host read, a completion entry, a read-back, the writer's own read) rest on
    that path keeping order: each certificate of the policy with the switch's upstream link
    `ordered` validates there, and is rejected for the corpus twin where it is `unordered`."""
    path = ROOT / f"corpus/ordering/fail/{twin}.fx"
    text = path.read_text()
    assert text.count("pcie unordered") == 1
    ordered = load_policy_text(text.replace("pcie unordered", "pcie ordered"))
    bad = _load(str(path))
    items = [(c, x) for c, x in _items(ordered) if x is not None and x.kind in kinds]
    assert {x.kind for _c, x in items} == kinds
    for claim, cert in items:
        assert "up0" in cert.evidence.route
        assert certify(ordered, [(claim, cert)], mode).failures == []
        assert [f.key for f in certify(bad, [(claim, cert)], mode).failures] == [claim.key], cert.evidence.kind


@pytest.mark.parametrize("mode", MODES)
def test_a_read_back_that_an_edge_cancels_is_rejected(mode: str) -> None:
    """A `read-back-after` certificate names a read that pushes the persisted writes; once an edge
    cancels that read (it may never be issued), the same certificate is rejected: the checker
    reads the cancels from the IR."""
    text = (ROOT / "corpus/ordering/ok/persist-read-back-same-route.fx").read_text()
    pol = _load(str(ROOT / "corpus/ordering/ok/persist-read-back-same-route.fx"))
    claim, cert = next((c, x) for c, x in _items(pol) if x is not None and x.kind == "read-back-after")
    assert certify(pol, [(claim, cert)], mode).failures == []
    src = text.replace("hooks [launch, copy_done]", "hooks [launch, copy_done, abort]").rstrip()
    assert src.endswith("}")
    cancelled = load_policy_text(src[:-1] + "  edge watchdog: cancel verify by gpu0.abort after spill\n}\n")
    assert [e.name for e in cancelled.edges][:len(pol.edges)] == [e.name for e in pol.edges]
    assert [f.key for f in certify(cancelled, [(claim, cert)], mode).failures] == [claim.key]


def test_every_certificate_kind_is_documented() -> None:
    """specs/certificates.md has a row per certificate kind, which users read to audit a proof."""
    text = (ROOT / "specs/certificates.md").read_text()
    missing = [k for k in sorted(KINDS) if f"| `{k}` |" not in text]
    assert not missing, f"kinds without a row in specs/certificates.md: {missing}"
