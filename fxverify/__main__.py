"""``python -m fxverify``: the same as the ``fxverify`` console script."""

from fxverify.cli import main

main()
