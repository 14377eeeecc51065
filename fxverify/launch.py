"""The console entry point (``fxverify`` and ``python -m fxverify``).

Takes the command line; answers ``fxverify --version`` at once, from ``fxverify.__version__``
alone, and hands every other command line to ``cli.main``. The command line module imports typer,
the IR, the solver layer and the certificate checker (about half a second), which a version query
that tools and CI scripts run on every call should not pay (issue "Scale", target P7: under
0.3 s). Emits no diagnostics itself.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Print ``fxverify VERSION`` and exit 0 for exactly ``--version``; otherwise run
    ``fxverify.cli.main`` (which never returns: it exits with the command's code)."""
    if sys.argv[1:] == ["--version"]:
        from fxverify import __version__

        sys.stdout.write(f"fxverify {__version__}\n")
        sys.exit(0)
    from fxverify.cli import main as cli_main

    cli_main()
