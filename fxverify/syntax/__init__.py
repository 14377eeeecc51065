"""The policy language's concrete syntax.

``grammar.lark`` is the LALR grammar; ``fxverify.syntax.parse`` turns text into a lark tree with
syntax diagnostics (FX-SYN-001..004); ``fxverify.syntax.to_ast`` turns that tree into
``fxverify.ast`` nodes. Import the functions from those modules (the package re-exports nothing,
so ``fxverify.syntax.parse`` stays the module).
"""
