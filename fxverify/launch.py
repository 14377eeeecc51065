"""The console entry point (``fxverify`` and ``python -m fxverify``).

Takes the command line; answers ``fxverify --version`` at once, from ``fxverify.__version__``
alone, and hands every other command line to ``cli.main``. The command line module imports typer,
the IR, the solver layer and the certificate checker (about half a second), which a version query
that tools and CI scripts run on every call should not pay (issue "Scale", target P7: under
0.3 s). Emits no diagnostics itself.
"""

from __future__ import annotations

import gc
import os
import sys

#: Allocations between young-generation collections (CPython's default is 700), and how many
#: collections of each generation trigger one of the next. A check keeps millions of long-lived
#: objects (the IR, the HB index, the outcome log), so the default thresholds spend a tenth of a
#: big check re-scanning them; mypy raises them for the same reason (``gc.set_threshold(200 *
#: 1000, 30, 30)`` in mypy's ``build.py``). Measured on a 70B TP8 8-layer policy: 37.7 s -> 33.1 s.
GC_THRESHOLDS = (200_000, 30, 30)


def main() -> None:
    """Print ``fxverify VERSION`` and exit 0 for exactly ``--version``; otherwise run
    ``fxverify.cli.main`` (which never returns: it exits with the command's code). A Ctrl-C
    while the command line module is imported prints ``interrupted`` and exits 130, as
    ``cli.main`` does for one later.

    A standard stream the caller closed (``fxverify check p.fx >&-``: Python then sets it to
    ``None``) is replaced by the null device, as a write to a closed descriptor goes nowhere:
    the exit code still gives the verdict, as it does with ``>/dev/null``."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 (lives as long as the process)
    if sys.argv[1:] == ["--version"]:
        from fxverify import __version__

        sys.stdout.write(f"fxverify {__version__}\n")
        sys.exit(0)
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        from fxverify.cli import main as cli_main  # half a second of imports: Ctrl-C may land here

        cli_main()
    except KeyboardInterrupt:  # ``cli.main`` handles one once it runs; this is one before
        sys.stderr.write("interrupted\n")
        sys.exit(130)
