"""``fxverify lsp``: the language server for ``.fx`` policies.

``server`` speaks LSP over stdio (pygls) and checks unsaved texts with the real pipeline in child
processes (``fxverify.isolate``); ``index`` finds declarations and uses of names, ``hover`` and
``complete`` answer from it, ``convert`` turns diagnostics into LSP ones, and ``actions`` writes
verified hints as text edits.
"""
