"""The HTTP side of ``fxverify serve``: a threading HTTP server of the standard library, bound to
the loopback interface, that serves the teaching page and its JSON API (``serve.api``).

Takes HTTP requests; produces the page (``static/``: one HTML file, its script and style, no
URL outside the server) and JSON answers. Routes: ``GET /`` and ``/static/NAME``; ``GET
/api/lessons``, ``/api/lesson?path=P``, ``/api/codes``, ``/api/explain?code=C``; ``POST /api/check``
with ``{"source": TEXT, "path": P}``. Every refusal is a JSON ``{"error", "status"}``: 400 for
malformed JSON, a missing field or a bad path, 403 for a path outside the repository or a
``Host`` header that is not the loopback name it was reached by (DNS rebinding), 404, 405, 411
for a body without ``Content-Length``, 413 for a body over ``ServeConfig.max_body`` (read no
further), 503 when every check slot is busy, and 500 (FX-INT-001 in the message) for a bug; none
of them stops the server. A slow client is cut off after ``TIMEOUT_S``; a client that hangs up
mid-request is dropped quietly (one line with ``--verbose``), never with a traceback. Emits no
diagnostics.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fxverify.diagnostics.model import crash
from fxverify.serve.api import Api, ApiError

#: Seconds a client may take to send its request (slowloris), per socket operation.
TIMEOUT_S = 10.0

_STATIC = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
           "style.css": "text/css; charset=utf-8"}


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and the loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _static(name: str) -> bytes:
    return resources.files("fxverify.serve").joinpath("static", name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    """One request (see the module docstring); ``api`` and ``quiet`` are set by ``make_server``."""

    server_version = "fxverify-serve"
    protocol_version = "HTTP/1.1"
    # a request line that is not HTTP still gets a status line and headers, not HTTP/0.9's bare body
    default_request_version = "HTTP/1.0"
    timeout = TIMEOUT_S
    api: Api
    quiet = True

    # ---- answers --------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, sort_keys=True).encode("utf-8"), "application/json")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (a request line or header too long, a bad
        method...) as JSON too."""
        self.close_connection = True
        try:
            text = message or HTTPStatus(code).phrase
        except ValueError:
            text = message or "error"
        self._json(code, {"error": text, "status": code})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the standard library's name
        if not self.quiet:
            sys.stderr.write("%s - %s\n" % (self.address_string(), format % args))

    # ---- requests -------------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        """The ``Host`` header names a loopback host (or the server was bound elsewhere on purpose)."""
        if not is_loopback(self.server.server_address[0]):
            return True
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return is_loopback(name)

    def _run(self, method: str) -> None:
        try:
            if not self._host_ok():
                raise ApiError(403, "this server answers only requests addressed to the loopback host")
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query, max_num_fields=8).items()}
            self._route(method, url.path, query)
        except ApiError as err:
            self.close_connection = self.close_connection or err.status in (411, 413)
            self._json(err.status, {"error": err.message, "status": err.status})
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 (FX-INT-001); the server goes on
            self.close_connection = True
            d = crash(self.path, exc)
            self._json(500, {"error": f"{d.code}: {d.message}", "status": 500})

    def _route(self, method: str, path: str, query: dict[str, str]) -> None:
        if path == "/" or path.startswith("/static/"):
            name = "index.html" if path == "/" else path.removeprefix("/static/")
            if name not in _STATIC:
                raise ApiError(404, f"no page `{path}`")
            self._need(method, "GET")
            self._send(200, _static(name), _STATIC[name])
            return
        routes = {"/api/lessons": ("GET", lambda: self.api.lessons()),
                  "/api/lesson": ("GET", lambda: self.api.lesson(query.get("path"))),
                  "/api/codes": ("GET", lambda: self.api.codes()),
                  "/api/explain": ("GET", lambda: self.api.explain(query.get("code"))),
                  "/api/check": ("POST", lambda: self.api.check(self._body()))}
        if path not in routes:
            raise ApiError(404, f"no route `{path}`")
        want, answer = routes[path]
        self._need(method, want)
        self._json(200, answer())

    def _need(self, method: str, want: str) -> None:
        if method != want and not (method == "HEAD" and want == "GET"):
            raise ApiError(405, f"`{self.path}` answers {want} only")

    def _body(self) -> Any:
        """The request's JSON body; refuses a body without a length, over the cap, not UTF-8 or
        not JSON, before or instead of reading it."""
        if self.headers.get("Transfer-Encoding"):
            raise ApiError(411, "send the body with a Content-Length, not a transfer encoding")
        length = self.headers.get("Content-Length")
        if length is None:
            raise ApiError(411, "a request body needs a Content-Length")
        try:
            n = int(length)
        except ValueError:
            raise ApiError(400, f"Content-Length `{length[:40]}` is not a number") from None
        cap = self.api.config.max_body
        if n < 0:
            raise ApiError(400, f"Content-Length {n} is negative")
        if n > cap:
            raise ApiError(413, f"the request body is {n} bytes, over the limit of {cap} bytes (FX-LIM-001)")
        data = self.rfile.read(n)
        if len(data) < n:
            raise ApiError(400, "the request body ended before its Content-Length")
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise ApiError(400, f"the request body is not JSON: {err}") from None

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self._run("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._run("HEAD")

    def do_POST(self) -> None:  # noqa: N802
        self._run("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._run("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._run("DELETE")


class Server(ThreadingHTTPServer):
    """The threading server; worker threads do not keep the process alive on shutdown. ``quiet``
    is set by ``make_server``."""

    daemon_threads = True
    request_queue_size = 64
    quiet = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """What escapes a request's handler: a client that hung up or stalled mid-request (its
        socket raised ``ConnectionError`` or ``TimeoutError`` while we read or wrote) is routine,
        a one-line note with ``--verbose`` and nothing otherwise; anything else is a bug, one
        FX-INT-001 line. Never the standard library's traceback on standard error."""
        exc = sys.exc_info()[1]
        where = client_address[0] if isinstance(client_address, tuple) else client_address
        if isinstance(exc, (ConnectionError, TimeoutError)):
            if not self.quiet:
                sys.stderr.write(f"{where} - client went away: {type(exc).__name__}: {exc}\n")
            return
        d = crash(str(where), exc if isinstance(exc, BaseException) else RuntimeError("unknown error"))
        sys.stderr.write(f"{where} - {d.code}: {d.message}\n")


def make_server(api: Api, host: str = "127.0.0.1", port: int = 0, quiet: bool = True) -> Server:
    """A server for ``api`` bound to ``host:port`` (port 0: any free one; read it from
    ``server.server_address``). Raises ``OSError`` when the address cannot be bound."""
    handler = type("BoundHandler", (Handler,), {"api": api, "quiet": quiet})
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server_cls = type("BoundServer", (Server,), {"address_family": family, "quiet": quiet})
    return server_cls((host, port), handler)
