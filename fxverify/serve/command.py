"""The driver of ``fxverify serve``: check the request, bind the server, serve until interrupted.

Takes a ``ServeRequest`` (address, repository, caps); binds ``http.make_server`` and serves the
page until Ctrl-C. Emits FX-USE-005 for a ``--host`` that is not loopback without
``--allow-remote``, or a ``--root`` that is not a folder, and FX-IO-001 for an address that cannot
be bound; each with exit code 2 and nothing served.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic
from fxverify.isolate import Caps
from fxverify.resolve.snapshot import repo_root
from fxverify.serve.api import Api, ServeConfig
from fxverify.serve.http import is_loopback, make_server


@dataclass(frozen=True)
class ServeRequest:
    """``fxverify serve``'s options: bind ``host:port`` (loopback unless ``allow_remote``), teach
    from the repository ``root`` (``None``: the one holding the current folder), cap each check
    with ``caps``, log requests when ``verbose``."""

    host: str = "127.0.0.1"
    port: int = 8642
    allow_remote: bool = False
    root: str | None = None
    caps: Caps = Caps(seconds=20.0, memory_bytes=2 << 30)
    verbose: bool = False


def run_serve(req: ServeRequest) -> tuple[list[Diagnostic], int]:
    """Serve the page for ``req`` until interrupted; returns ``([], 0)`` then, or the problem that
    stopped it before serving and exit code 2. The address served is printed on standard error."""
    if not is_loopback(req.host) and not req.allow_remote:
        return [diagnostic(codes.USE_005, f"`--host {req.host}` is not a loopback address; the page runs the checker "
                           "for anyone who reaches it",
                           help="keep the default 127.0.0.1, or add `--allow-remote` if you mean it")], 2
    where = Path(req.root) if req.root is not None else Path(repo_root(os.path.join(os.getcwd(), "x")))
    if not where.is_dir():
        return [diagnostic(codes.USE_005, f"`--root {where}` is not a folder", help="name the repository to teach from")], 2
    api = Api(ServeConfig(where, caps=req.caps))
    try:
        server = make_server(api, req.host, req.port, quiet=not req.verbose)
    except OSError as err:
        return [diagnostic(codes.IO_001, f"cannot listen on {req.host}:{req.port}: {err.strerror or err}",
                           help="choose another `--port`, or `--port 0` for any free one")], 2
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"fxverify serve: http://{shown}:{port}/ ({len(api.lessons()['lessons'])} lessons from {api.root}); "
                     "Ctrl-C stops it\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return [], 0
