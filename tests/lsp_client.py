"""A minimal JSON-RPC client for the language server tests: LSP base-protocol framing
(``Content-Length`` headers) over a subprocess's standard input and output.

``LspClient`` starts the server command, reads its messages on a thread, answers the server's
own requests (configuration, capability registration, progress) with ``null``, and offers
``request`` (waits for the response), ``notify`` and ``wait_for`` (waits for a notification that
matches a predicate). Every wait has a timeout, and ``close`` ends the server (``shutdown``,
``exit``, then a kill if it does not stop).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any


class LspError(Exception):
    """The server answered a request with an error, or did not answer in time."""


class LspClient:
    """Speaks LSP to ``cmd`` (a list, run with ``cwd``) over its stdio."""

    def __init__(self, cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self._next = 0
        self._responses: dict[int, dict] = {}
        self._notes: list[dict] = []
        self._cv = threading.Condition()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    with self._cv:
                        self._cv.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode("ascii").partition(":")
                headers[k.strip().lower()] = v.strip()
            body = json.loads(out.read(int(headers["content-length"])))
            if "id" in body and "method" in body:  # a request of the server's own
                self._send({"jsonrpc": "2.0", "id": body["id"], "result": None})
                continue
            with self._cv:
                if "id" in body:
                    self._responses[body["id"]] = body
                else:
                    self._notes.append(body)
                self._cv.notify_all()

    def _send(self, msg: dict[str, Any]) -> None:
        data = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        """Send a request and return its result; raises ``LspError`` on an error or a timeout."""
        with self._cv:
            self._next += 1
            rid = self._next
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        end = time.monotonic() + timeout
        with self._cv:
            while rid not in self._responses:
                left = end - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise LspError(f"no answer to {method} (server exit code {self.proc.poll()})")
                self._cv.wait(left)
            answer = self._responses.pop(rid)
        if "error" in answer:
            raise LspError(f"{method}: {answer['error']}")
        return answer.get("result")

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, method: str, match: Callable[[Any], bool] = lambda _p: True, timeout: float = 60.0) -> Any:
        """The params of the first notification ``method`` not yet consumed that ``match``es
        (it and every earlier one of that method are consumed); raises ``LspError`` on timeout."""
        end = time.monotonic() + timeout
        with self._cv:
            while True:
                for i, n in enumerate(self._notes):
                    if n.get("method") == method and match(n.get("params")):
                        self._notes = [x for j, x in enumerate(self._notes) if j > i or x.get("method") != method]
                        return n.get("params")
                left = end - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    seen = [n.get("method") for n in self._notes]
                    raise LspError(f"no {method} notification matched in time (seen: {seen})")
                self._cv.wait(left)

    def close(self) -> int:
        """Shut the server down and return its exit code."""
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=10)
                self.notify("exit", None)
            return self.proc.wait(timeout=10)
        except (LspError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            return self.proc.wait(timeout=10)
