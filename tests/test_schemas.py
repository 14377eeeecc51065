"""The JSON files fxverify writes follow the JSON Schemas in ``specs/schemas/`` (Draft 2020-12):
the JSON report of ``check`` (with traces, a baseline, stats, certificates, skipped rules and
soft-fail, input errors), the baseline file, the index of ``fxverify smt``, the five JSON files of
``fxverify lower`` and its JSON report (with the Linux verifier's figures and the kernel run when
bpf() is available), the index of ``check --pictures``, the ``gen prefill --summary-json`` file,
and every JSON answer of ``fxverify serve``'s HTTP API (a real server on port 0). The schemas are
closed where the writers are, so a field added to a writer fails here until its schema says it."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from typer.testing import CliRunner

from fxverify.cli import app
from fxverify.lower import artifacts, libbpf
from fxverify.serve.api import Api, ServeConfig

from tests.conftest import ROOT
from tests.test_serve import serving

SCHEMAS = ROOT / "specs/schemas"
RACE = "corpus/ordering/fail/kv-offload-unordered.fx"
CASES = [RACE, "corpus/ownership/fail/double-handoff.fx", "corpus/ordering/fail/hb-cycle.fx",
         "corpus/solver/fail/budget-exhausted.fx", "corpus/transforms/ok/compress-worst-case.fx"]
INPUTS = "corpus/inputs"
_ALL = [json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.schema.json"))]
#: Every schema by its ``$id``, so one schema may refer to another (``report.schema.json#/$defs/...``).
REGISTRY = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in _ALL])


def validate(doc: object, schema: str, part: str = "") -> None:
    """Validate ``doc`` against ``specs/schemas/<schema>.schema.json`` (or its subschema at the JSON
    pointer ``part``, such as ``#/$defs/check``), reporting every error."""
    v = Draft202012Validator({"$ref": f"fxverify/{schema}.schema.json{part}"}, registry=REGISTRY)
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def fx(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.schema.json")), ids=lambda p: p.name)
def test_schemas_are_valid_draft_2020_12(path: Path) -> None:
    schema = json.loads(path.read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"fxverify/{path.name}" and schema["title"]
    assert f"`{path.name}`" in (ROOT / "specs/output.md").read_text()  # listed with what it covers


def test_json_reports_follow_the_report_schema(tmp_path: Path, at_root) -> None:
    base = tmp_path / "base.json"
    assert fx("check", RACE, "--write-baseline", str(base), "--no-cache")[0] == 0
    validate(json.loads(base.read_text()), "baseline")
    fixed = tmp_path / "fixed.fx"
    fixed.write_text((ROOT / RACE).read_text().replace("stream copy  #", "stream copy after attn  #"))
    runs = [
        (*CASES, "--stats"),
        (str(fixed), "--baseline", str(base), "--certify=python"),  # a stale entry, certificates
        (RACE, "--exit-zero", "--ignore", "FX-XF"),
    ]
    bad = tmp_path / "typo.fx"
    bad.write_text('policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu1 size 1 MiB\n')
    runs.append((str(bad), RACE))
    runs.append(("corpus/ordering/ok/notify-after-batch.fx", "--stats"))  # parametric proofs
    seen, in_results = set(), set()
    for args in runs:
        _, out = fx("check", *args, "--format", "json", "--no-cache")
        doc = json.loads(out)
        validate(doc, "report")
        seen |= set(doc)
        in_results |= {k for r in doc["results"] for k, v in r.items() if v}
    assert {"stats", "skipped_rules", "soft_fail"} <= seen
    assert {"parametric", "cache", "certificates"} <= in_results


#: Refutations whose traces show every event kind a trace can hold beyond start and end.
EVENT_CASES = ["corpus/ordering/fail/cxl-unfenced-flush-loop.fx", "corpus/ordering/fail/notify-batch-in-flight.fx",
               "corpus/ownership/fail/free-before-cancel-completes.fx", "corpus/ownership/fail/double-handoff.fx"]


def test_every_trace_event_kind_follows_the_report_schema(at_root) -> None:
    """Traces with write-backs, invalidates, notifications, cancels, allocations and handoffs
    validate against the report schema, whose event enum lists every kind the trace builder
    makes (``replay/trace.py``): a kind missing there fails a consumer that validates."""
    _, out = fx("check", *EVENT_CASES, "--format", "json", "--no-cache")
    doc = json.loads(out)
    validate(doc, "report")
    seen = {e["event"] for r in doc["results"] for d in r["diagnostics"] if d.get("trace") for e in d["trace"]["events"]}
    assert {"writeback", "invalidate", "notify", "cancel", "alloc", "handoff"} <= seen, sorted(seen)


def test_smt_index_follows_its_schema(tmp_path: Path, at_root) -> None:
    assert fx("smt", RACE, "-o", str(tmp_path / "out"))[0] == 0
    validate(json.loads((tmp_path / "out/index.json").read_text()), "smt-index")


LOWERED = {"maps.json": "maps", "maps.init.json": "maps-init", "obligations.json": "obligations",
           "manifest.json": "manifest", "sourcemap.json": "sourcemap"}


@pytest.mark.parametrize(("policy", "target", "more"), [
    ("corpus/ordering/ok/kv-offload-ordered.fx", "kernel", ()),
    ("corpus/maps/ok/const-map-read-only.fx", "bpftime", ()),
    ("corpus/ordering/ok/kv-offload-ordered.fx", "bpftime", ("--cuda-kernel", "gpu0.launch=_Z4attnPf")),
    ("corpus/ownership/ok/dpu-reads-leased-kv.fx", "dputime", ()),
], ids=["kernel", "bpftime-const-map", "bpftime-cuda-kernel", "dputime-packets"])
def test_lowering_files_and_report_follow_their_schemas(tmp_path: Path, at_root, policy: str, target: str,
                                                        more: tuple[str, ...]) -> None:
    """The five JSON files of a lowering and the JSON report: bpftime adds the CUDA call bindings
    (``fx_bind``, ``fx_seq``), programs inside a CUDA kernel and device-level programs (no hook),
    a const map a read-only policy map, dputime XDP and tc programs with the packet frame."""
    code, out = fx("lower", policy, "-o", str(tmp_path / "lo"), "--no-compile", "--target", target, *more,
                   "--format", "json", "--stats")
    assert code == 0, out
    validate(json.loads(out), "lower-report")
    for name, schema in LOWERED.items():
        validate(json.loads((tmp_path / "lo" / name).read_text()), schema)
    init = json.loads((tmp_path / "lo/maps.init.json").read_text())
    assert ("fx_bind" in init) == (target == "bpftime")


def test_a_refused_lowering_reports_by_the_schema(tmp_path: Path, at_root) -> None:
    """A refuted policy (FX-BPF-001 and its findings) and one that does not load: nulls, diagnostics."""
    bad = tmp_path / "typo.fx"
    bad.write_text('policy "t"\nfabric { device gpu0: gpu hooks [launch] }\nspace s on gpu1 size 1 MiB\n')
    for policy, want in ((RACE, 1), (str(bad), 2)):
        code, out = fx("lower", policy, "-o", str(tmp_path / "lo"), "--no-compile", "--format", "json")
        doc = json.loads(out)
        assert code == want and doc["diagnostics"] and doc["output"] is None
        validate(doc, "lower-report")


@pytest.mark.skipif(artifacts.clang_path() is None, reason="clang is not installed (apt-get install clang)")
@pytest.mark.skipif(libbpf.bpf_available() is not None, reason=f"bpf() is unavailable: {libbpf.bpf_available()}")
def test_kernel_verified_lowering_reports_by_the_schema(tmp_path: Path, at_root) -> None:
    """With the Linux verifier's figures per program and the kernel run's agreement counts."""
    code, out = fx("lower", "corpus/ordering/ok/kv-offload-ordered.fx", "-o", str(tmp_path / "lo"),
                   "--kernel-verify", "--kernel-run", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["programs"] and doc["kernel_run"], out
    validate(doc, "lower-report")
    validate(json.loads((tmp_path / "lo/manifest.json").read_text()), "manifest")


def test_pictures_index_follows_its_schema(tmp_path: Path, at_root) -> None:
    pics = tmp_path / "pics"
    fx("check", *CASES[:3], "--pictures", str(pics), "--no-cache")
    doc = json.loads((pics / "index.json").read_text())
    assert len(doc["pictures"]) == 3
    validate(doc, "pictures-index")


@pytest.mark.parametrize("args", [
    ["--model", f"{INPUTS}/models/Qwen--Qwen3-8B.json", "--tokens", "64", "--layers", "2", "--tp", "2"],
    ["--model", f"{INPUTS}/models/deepseek-ai--DeepSeek-V3.json", "--topology", f"{INPUTS}/topology/azure-ndv5-topo.xml",
     "--cxl", f"{INPUTS}/cxl/cxl_test-list-BDMu-root-mem3.json", "--tokens", "64", "--layers", "4", "--tp", "8",
     "--spill", "0.5", "--disaggregate"],
    # the same listing from another server: every window is shared (`shared_with`)
    ["--model", f"{INPUTS}/models/Qwen--Qwen3-8B.json", "--cxl", f"{INPUTS}/cxl/cxl_test-list-BDMu-root-mem3.json",
     "--cxl", f"peer={INPUTS}/cxl/cxl_test-list-BDMu-root-mem3.json", "--tokens", "64", "--layers", "2"],
], ids=["dense", "moe-mla-cxl-disaggregated", "cxl-shared-with-a-peer"])
def test_prefill_summary_follows_its_schema(tmp_path: Path, at_root, args: list[str]) -> None:
    summary = tmp_path / "s.json"
    code, out = fx("gen", "prefill", *args, "-o", str(tmp_path / "p.fx"), "--summary-json", str(summary))
    assert code == 0, out
    validate(json.loads(summary.read_text()), "gen-summary")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    """``fxverify serve`` over this repository on a free loopback port."""
    yield from serving(Api(ServeConfig(ROOT)))


def ask(server: tuple[str, int], method: str, path: str, body: object = None) -> tuple[int, object]:
    """One request to ``server``: the status and the JSON answer."""
    conn = http.client.HTTPConnection(*server, timeout=60)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data is not None else {})
    r = conn.getresponse()
    assert r.getheader("Content-Type") == "application/json"
    out = r.status, json.loads(r.read())
    conn.close()
    return out


def test_serve_answers_follow_their_schema(server, at_root) -> None:
    """Each endpoint's answer against its own part of ``serve-api.schema.json`` and the whole."""
    race = (ROOT / RACE).read_text()
    answers = [
        ("lessons", "GET", "/api/lessons", None),
        ("lesson", "GET", f"/api/lesson?path={RACE}", None),
        ("lesson", "GET", "/api/lesson?path=corpus/real/llama-3.1-8b-prefill.fx", None),
        ("codes", "GET", "/api/codes", None),
        ("explain", "GET", "/api/explain?code=FX-ORD-002", None),
        ("check", "POST", "/api/check", {"source": race, "path": RACE}),
        ("check", "POST", "/api/check", {"source": 'policy "t"\nspace s on gpu1 size 1 MiB\n'}),
        ("error", "GET", "/api/explain?code=FX-ORD-999", None),
        ("error", "GET", "/api/lesson?path=../x.fx", None),
        ("error", "POST", "/api/check", b"{not json"),
        ("error", "GET", "/api/nothing", None),
    ]
    docs = []
    for part, method, path, body in answers:
        status, doc = ask(server, method, path, body)
        assert (status == 200) == (part != "error"), (path, status, doc)
        validate(doc, "serve-api", f"#/$defs/{part}")
        validate(doc, "serve-api")
        docs.append(doc)
    checked, typo = docs[5], docs[6]
    assert checked["verdict"] == "refuted" and checked["findings"][0]["trace"] and checked["findings"][0]["swimlane_svg"]
    assert typo["verdict"] == "error" and typo["findings"] and not typo["graphs"]
