"""The one root of fxverify's exceptions.

Exceptions are only for bugs and environment failures (STYLE.md, "Diagnostics"). Anything the user
can cause becomes a ``Diagnostic`` instead. The command line turns an escaped ``FxError`` (or any
other exception) into FX-INT-001 and exit code 3.
"""


class FxError(Exception):
    """Root of every exception fxverify raises on purpose."""
