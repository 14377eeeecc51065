"""The teaching server, ``fxverify serve``, over real HTTP: the lessons in order, the real checker
behind the Check button, explain for every code, and every way a request can be wrong (a path
outside the repository, through ``..`` or a symlink; malformed JSON; a body over the cap or
without a length; a request line that is not HTTP; a foreign ``Host``): each gets a JSON error,
and the server answers the next request as before."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fxverify.diagnostics import codes
from fxverify.isolate import Caps
from fxverify.serve.api import Api, ServeConfig
from fxverify.serve.http import make_server

from tests.conftest import ROOT

RACE = "corpus/ordering/fail/kv-offload-unordered.fx"
FIXED = "corpus/ordering/ok/kv-offload-ordered.fx"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one lesson pair, an unpaired lesson, and a symlink that leads out."""
    root = tmp_path / "repo"
    for rel in (RACE, FIXED, "corpus/alias/ok/interleaved-strided.fx"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    (tmp_path / "secret.fx").write_text('policy "secret"\n')
    (root / "corpus/ordering/fail/leak.fx").symlink_to(tmp_path / "secret.fx")
    return root


def serving(api: Api) -> Iterator[tuple[str, int]]:
    """Serve ``api`` on a free loopback port in a thread; yields its ``(host, port)`` once, then stops it."""
    server = make_server(api, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[:2]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def addr(repo: Path) -> Iterator[tuple[str, int]]:
    yield from serving(Api(ServeConfig(repo, max_body=64 << 10)))


def _req(addr: tuple[str, int], method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection(*addr, timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        res = conn.getresponse()
        return res.status, json.loads(res.read())
    finally:
        conn.close()


def _raw(addr: tuple[str, int], data: bytes) -> tuple[int, dict]:
    """Send ``data`` as is and read the status and JSON body of the answer."""
    with socket.create_connection(addr, timeout=30) as s:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may refuse before reading everything
        got = b""
        while b"\r\n\r\n" not in got or len(got.split(b"\r\n\r\n", 1)[1]) < _length(got):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _length(got: bytes) -> int:
    for line in got.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


def test_lessons_in_teaching_order_with_twins_side_by_side(addr) -> None:
    status, doc = _req(addr, "GET", "/api/lessons")
    assert status == 200
    assert [(x["path"], x["twin"]) for x in doc["lessons"]] == [
        (RACE, FIXED), (FIXED, RACE), ("corpus/alias/ok/interleaved-strided.fx", None)]
    race = doc["lessons"][0]
    assert race["kind"] == "fail" and race["expects"] == ["FX-ORD-002"]
    assert race["text"].startswith("A KV block is offloaded to host memory on a separate copy stream")
    status, one = _req(addr, "GET", f"/api/lesson?path={RACE}")
    assert status == 200 and one["source"] == (ROOT / RACE).read_text()


def test_check_runs_the_real_checker(addr, repo: Path) -> None:
    text = (ROOT / RACE).read_text()
    status, r = _req(addr, "POST", "/api/check", json.dumps({"source": text, "path": RACE}).encode())
    assert status == 200 and r["verdict"] == "refuted" and r["path"] == RACE
    (f,) = r["findings"]
    assert f["code"] == "FX-ORD-002" and f["primary"]["file"] == RACE and f["primary"]["line"] == 19
    assert [e["violation"] for e in f["trace"]["events"]] == [False, True, False, False]
    assert f["text"].startswith("error[FX-ORD-002]: data race") and "(verified:" in f["help"]
    assert f["swimlane_svg"].startswith("<svg") and "offload" in f["swimlane_svg"]
    assert [g["view"] for g in r["graphs"]] == ["movement", "hb"] and all(g["svg"].startswith("<svg") for g in r["graphs"])
    assert r["graph_note"].startswith("highlighted: FX-ORD-002")
    # the edited text is what is checked, and it is never written; the free editor has no path
    fixed = text.replace("stream copy", "stream copy after attn")
    status, r = _req(addr, "POST", "/api/check", json.dumps({"source": fixed, "path": RACE}).encode())
    assert (status, r["verdict"], r["findings"], r["obligations"]["refuted"]) == (200, "proved", [], 0)
    status, r = _req(addr, "POST", "/api/check", json.dumps({"source": text}).encode())
    assert (status, r["verdict"], r["path"]) == (200, "refuted", "playground.fx")
    assert (repo / RACE).read_text() == text and not (repo / "playground.fx").exists()


def test_explain_every_code(addr) -> None:
    status, doc = _req(addr, "GET", "/api/codes")
    assert status == 200 and [c["code"] for c in doc["codes"]] == list(codes.REGISTRY)
    status, x = _req(addr, "GET", "/api/explain?code=fx-ord-002")
    assert status == 200 and x["title"] == "data race" and "rule: two conflicting accesses" in x["text"]
    assert _req(addr, "GET", "/api/explain?code=FX-ORD-02") == (
        404, {"error": "unknown code `FX-ORD-02`; did you mean `FX-ORD-002`?", "status": 404})


@pytest.mark.parametrize("path, status", [
    ("../secret.fx", 403),                          # `..` out of the repository
    ("corpus/ordering/fail/leak.fx", 403),          # a symlink out of it
    ("/etc/passwd", 400),                           # absolute
    ("corpus/ordering/fail/missing.fx", 404),
    ("corpus/ordering", 400),                       # not a .fx file
])
def test_paths_outside_the_repository_are_refused(addr, path: str, status: int) -> None:
    got, doc = _req(addr, "GET", f"/api/lesson?path={path}")
    assert (got, doc["status"]) == (status, status) and doc["error"]
    got, doc = _req(addr, "POST", "/api/check", json.dumps({"source": "x", "path": path}).encode())
    assert got == status
    assert all("leak" not in x["path"] for x in _req(addr, "GET", "/api/lessons")[1]["lessons"])


@pytest.mark.parametrize("data, status, words", [
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n{bad}", 400, "not JSON"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\n[42]", 400, "JSON object"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\n\xff\xfe{}", 400, "not JSON"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 411, "Content-Length"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 104857600\r\n\r\n{", 413, "over the limit"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -3\r\n\r\n", 400, "negative"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n", 400, "not a number"),
    (b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411, "Content-Length"),
    (b"GET /api/lessons HTTP/1.1\r\nHost: rebind.example:8642\r\n\r\n", 403, "loopback"),
    (b"DELETE /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405, "POST only"),
    (b"GET /static/../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "no page"),
    (b"NOT HTTP AT ALL\r\n\r\n", 400, ""),
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414, ""),
])
def test_bad_requests_get_a_json_error_and_the_server_goes_on(addr, data: bytes, status: int, words: str) -> None:
    got, doc = _raw(addr, data)
    assert got == status and doc["status"] == status and words in doc["error"]
    assert _req(addr, "GET", "/api/lessons")[0] == 200


@pytest.mark.parametrize("data", [
    b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"b" * 70000 + b"\r\n\r\n",
    b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\n\r\n{" + b"c" * 70000,
])
def test_a_client_that_hangs_up_mid_request_leaves_no_traceback(addr, data: bytes, capfd) -> None:
    """The client sends and resets the connection (SO_LINGER 0) before the answer: the server's
    read or write fails with ECONNRESET/EPIPE, which is routine, not a bug to print."""
    for _ in range(3):
        with socket.create_connection(addr, timeout=30) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            try:
                s.sendall(data)
            except OSError:
                pass
    assert _req(addr, "GET", "/api/lessons")[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err and err == ""


def test_a_hang_up_is_one_line_when_verbose(repo: Path, capfd) -> None:
    server = make_server(Api(ServeConfig(repo)), "127.0.0.1", 0, quiet=False)
    try:
        raise BrokenPipeError(32, "Broken pipe")
    except BrokenPipeError:
        server.handle_error(None, ("127.0.0.1", 5))
    try:
        raise KeyError("bug")
    except KeyError:
        server.handle_error(None, ("127.0.0.1", 5))
    server.server_close()
    err = capfd.readouterr().err
    assert err.splitlines() == ["127.0.0.1 - client went away: BrokenPipeError: [Errno 32] Broken pipe",
                                "127.0.0.1 - FX-INT-001: internal error while checking 127.0.0.1: KeyError: 'bug'"]


def test_a_check_past_its_cap_is_unknown(repo: Path) -> None:
    for addr in serving(Api(ServeConfig(repo, caps=Caps(seconds=1e-6)))):
        status, r = _req(addr, "POST", "/api/check", json.dumps({"source": (ROOT / RACE).read_text(), "path": RACE}).encode())
        assert status == 200 and r["verdict"] == "unknown"
        assert [f["code"] for f in r["findings"]] == ["FX-SMT-001"] and "did not finish" in r["findings"][0]["message"]


def test_serve_refuses_a_host_that_is_not_loopback() -> None:
    done = subprocess.run([sys.executable, "-m", "fxverify", "serve", "--host", "0.0.0.0"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 2 and "error[FX-USE-005]: `--host 0.0.0.0` is not a loopback address" in done.stderr
