"""``python -m fxverify``: the same as the ``fxverify`` console script."""

from fxverify.launch import main

# Guarded: worker processes of `check --jobs` import this module again under another name.
if __name__ == "__main__":
    main()
