"""The language server, ``fxverify lsp``, driven as an editor drives it: a JSON-RPC client
(``tests/lsp_client.py``) starts it over stdio and sends initialize, didOpen, didChange, hover,
definition, completion and codeAction; the answers are checked against the policy's text. An
unsaved change to the included fabric file re-checks the policy that includes it.

The policy under test includes a shared fabric file, so definitions cross files; its race
(FX-ORD-002) is the README's. The unsaved text is checked in memory: the files on disk never
change and no file appears beside them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.lsp_client import LspClient, LspError

FABRIC = """\
# the shared fabric
fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
"""

POLICY = """\
# a KV block offloaded while the attention kernel may still write it
policy "kv-offload"
include "fabric.fx"
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv_blk in hbm0 at 0x2000_0000 size 2 MiB owner gpu0 dtype bf16 init
region kv_host in host0 at 0x1_4000_0000 size 2 MiB owner gpu0 dtype bf16

flow decode_step {
  edge attn: write kv_blk by gpu0.launch stream compute
  edge offload: move kv_blk -> kv_host by gpu0.copy_done stream copy  # expect: FX-ORD-002
}
"""


def _pos(text: str, word: str, nth: int = 0, into: int = 1) -> dict[str, int]:
    """The LSP position ``into`` characters into the ``nth`` occurrence of ``word`` (ASCII text:
    UTF-16 columns are characters)."""
    k = 0
    for i, line in enumerate(text.splitlines()):
        j = line.find(word)
        while j >= 0:
            if k == nth:
                return {"line": i, "character": j + into}
            k += 1
            j = line.find(word, j + 1)
    raise AssertionError(f"`{word}` #{nth} not in the text")


def _apply(text: str, edit: dict) -> str:
    """``text`` with one LSP TextEdit applied (ASCII text)."""
    lines = text.splitlines(keepends=True)

    def off(p: dict) -> int:
        return sum(len(x) for x in lines[: p["line"]]) + p["character"]
    r = edit["range"]
    return text[: off(r["start"])] + edit["newText"] + text[off(r["end"]):]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # includes are confined to the repository
    (tmp_path / "fabric.fx").write_text(FABRIC)
    (tmp_path / "p.fx").write_text(POLICY)
    return tmp_path


@pytest.fixture
def client(repo: Path):
    c = LspClient([sys.executable, "-m", "fxverify", "lsp"], str(repo), env={**os.environ, "NO_COLOR": "1"})
    yield c
    assert c.close() == 0, b"".join(c.stderr).decode()[-2000:]


def _diagnostics(client: LspClient, uri: str, version: int, nonempty: bool | None = None) -> list[dict]:
    params = client.wait_for("textDocument/publishDiagnostics",
                             lambda p: p["uri"] == uri and p.get("version") == version
                             and (nonempty is None or bool(p["diagnostics"]) == nonempty), timeout=120)
    return params["diagnostics"]


def test_lsp_answers_before_any_check(client: LspClient, repo: Path) -> None:
    """Initialize, then a document that does not parse: its syntax diagnostic comes from the load
    alone (no check process), and hover explains a code written in it."""
    client.request("initialize", {"processId": os.getpid(), "rootUri": repo.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    uri = (repo / "q.fx").as_uri()
    text = 'policy "q"  # expect: FX-SYN-001\nfabric {\n  device gpu0 gpu\n}\n'
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fx", "version": 7, "text": text}})
    (syn,) = _diagnostics(client, uri, 7, nonempty=True)
    assert syn["code"] == "FX-SYN-001" and syn["range"]["start"] == _pos(text, "gpu", 1, 0)
    h = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": _pos(text, "FX-SYN-001", 0, 3)})
    assert h["contents"]["value"].startswith("**FX-SYN-001**")
    assert not (repo / "q.fx").exists()


def test_every_request_gets_an_answer_and_no_traceback(client: LspClient, repo: Path) -> None:
    """Bad requests from a client: a hover on a file that was never opened and does not exist
    answers null, a negative position answers -32602, a body that is not JSON is skipped; the
    server goes on and never prints a traceback."""
    client.request("initialize", {"processId": os.getpid(), "rootUri": repo.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    gone = (repo / "nowhere.fx").as_uri()
    assert client.request("textDocument/hover", {"textDocument": {"uri": gone}, "position": {"line": 999, "character": 9}}) is None
    assert client.request("textDocument/definition", {"textDocument": {"uri": gone}, "position": {"line": 0, "character": 0}}) is None
    with pytest.raises(LspError, match="-32602"):
        client.request("textDocument/hover", {"textDocument": {"uri": (repo / "p.fx").as_uri()},
                                              "position": {"line": -1, "character": -5}}, timeout=30)
    body = b"{this is not json"
    assert client.proc.stdin is not None
    client.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    client.proc.stdin.flush()
    uri = (repo / "p.fx").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fx", "version": 1, "text": POLICY}})
    h = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": _pos(POLICY, "FX-ORD-002", 0, 3)})
    assert h["contents"]["value"].startswith("**FX-ORD-002**")
    assert client.close() == 0
    err = b"".join(client.stderr).decode()
    assert "Traceback" not in err and all(line.startswith("fxverify lsp: ") for line in err.splitlines()), err


@pytest.mark.slow
def test_lsp_session(client: LspClient, repo: Path) -> None:
    caps = client.request("initialize", {"processId": os.getpid(), "rootUri": repo.as_uri(), "capabilities": {}})["capabilities"]
    assert caps["hoverProvider"] and caps["definitionProvider"]
    assert caps["codeActionProvider"]["codeActionKinds"] == ["quickfix"] and "." in caps["completionProvider"]["triggerCharacters"]
    client.notify("initialized", {})
    uri, text = (repo / "p.fx").as_uri(), POLICY
    before = sorted(os.listdir(repo))
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fx", "version": 1, "text": text}})

    # diagnostics: code, primary span, related span, trace steps and the verified hint
    (race,) = _diagnostics(client, uri, 1, nonempty=True)
    assert race["code"] == "FX-ORD-002" and race["source"] == "fxverify" and race["severity"] == 1
    assert race["range"] == {"start": _pos(text, "edge offload", into=0),
                             "end": {"line": 10, "character": len("  edge offload: move kv_blk -> kv_host by gpu0.copy_done stream copy")}}
    related = {(r["location"]["range"]["start"]["line"], r["message"]) for r in race["relatedInformation"]}
    assert (9, "`attn` writes here") in related
    assert any(m.startswith(">> step 2 t=0 ns gpu0.copy_done `offload` start: reads `kv_blk`") for _, m in related)
    assert "help: add `after attn` to `offload` (verified:" in race["message"]

    def hover(word: str, nth: int = 0) -> str:
        h = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": _pos(text, word, nth)})
        return h["contents"]["value"] if h else ""

    def definition(word: str, nth: int = 0) -> dict | None:
        return client.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": _pos(text, word, nth)})

    # hover: a code (the explain text), a region (computed bytes), an edge (its footprints), a size
    assert "rule: two conflicting accesses" in hover("FX-ORD-002")
    region = hover("kv_blk", 2)  # the use in `offload`
    assert "[0x20000000, 0x20200000) in `hbm0`, 2 MiB (2,097,152 B); owner `gpu0`" in region
    assert "in this edge: `offload`: `kv_blk` [0x20000000, 0x20200000)" in region
    edge = hover("offload:")
    assert "reads `kv_blk` [0x20000000, 0x20200000) in `hbm0`, 2 MiB" in edge and "writes `kv_host` [0x140000000, 0x140200000)" in edge
    assert "FX-ORD-002** data race" in edge  # the diagnostic under the cursor, summarised
    assert hover("2 MiB") == "2 MiB = 2,097,152 B (0x200000)"
    assert "16 GiB (17,179,869,184 B)" in hover("host0", 0)

    # definition: a region, a device and a hook of the included fabric, the include itself
    assert definition("kv_blk", 2) == {"uri": uri, "range": {"start": _pos(text, "kv_blk", 0, 0),
                                                             "end": _pos(text, "kv_blk", 0, len("kv_blk"))}}
    fabric_uri = (repo / "fabric.fx").as_uri()
    assert definition("gpu0", 3) == {"uri": fabric_uri, "range": {"start": _pos(FABRIC, "gpu0", 0, 0),
                                                                  "end": _pos(FABRIC, "gpu0", 0, 4)}}
    assert definition("copy_done")["range"]["start"] == _pos(FABRIC, "copy_done", 0, 0)
    assert definition("fabric.fx")["uri"] == fabric_uri
    assert definition("attn", 0)["range"]["start"] == _pos(text, "attn", 0, 0)

    # completion: devices after `by`, that device's hooks after `by gpu0.`, names and keywords elsewhere
    def labels(pos: dict[str, int]) -> set[str]:
        items = client.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": pos})
        return {i["label"] for i in items["items"]}
    assert labels(_pos(text, "gpu0.launch", 0, 0)) == {"gpu0", "cpu0"}
    assert labels(_pos(text, "launch", 0, 0)) == {"launch", "copy_done"}
    assert labels(_pos(text, "kv_host", 1, 0)) == {"kv_blk", "kv_host"}  # after `->`
    assert {"attn", "offload", "kv_blk", "hbm0", "edge", "after", "handoff"} <= labels({"line": 8, "character": 0})

    # code action: the verified hint as an edit; applied as the user would, the race is gone
    (action,) = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": race["range"],
                                                           "context": {"diagnostics": [race]}})
    assert action["kind"] == "quickfix" and action["title"] == "Apply the verified hint: add `after attn` to `offload`"
    (edit,) = action["edit"]["changes"][uri]
    assert edit == {"range": {"start": _pos(text, "gpu0.copy_done", 0, len("gpu0.copy_done")),
                              "end": _pos(text, "gpu0.copy_done", 0, len("gpu0.copy_done"))}, "newText": " after attn"}
    fixed = _apply(text, edit)
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"range": edit["range"], "text": edit["newText"]}]})
    assert _diagnostics(client, uri, 2) == []

    # typing: a broken line is a syntax diagnostic at once; the last version is what is shown
    broken = fixed.replace("stream compute", "stream compute by by")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": broken}]})
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": broken}]})
    (syn,) = _diagnostics(client, uri, 4, nonempty=True)
    assert syn["code"].startswith("FX-SYN-") and syn["range"]["start"]["line"] == 9

    # an unsaved change to the included fabric re-checks the policy that includes it
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"text": fixed}]})
    assert _diagnostics(client, uri, 5) == []
    renamed = FABRIC.replace("copy_done]", "copy_end]")
    client.notify("textDocument/didOpen", {"textDocument": {"uri": fabric_uri, "languageId": "fx", "version": 1, "text": renamed}})
    hook = _diagnostics(client, uri, 5, nonempty=True)
    assert {d["code"] for d in hook} == {"FX-HOOK-002"}
    assert hook[0]["range"]["start"]["line"] == 10 and "`copy_done`" in hook[0]["message"]

    # the unsaved texts were checked in memory: nothing on disk changed or appeared
    assert sorted(os.listdir(repo)) == before and (repo / "p.fx").read_text() == POLICY
    assert (repo / "fabric.fx").read_text() == FABRIC
