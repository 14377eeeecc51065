"""Obligations (BRIEF section 3): one module per family (``ordering``, ``alias``, ``ownership``,
``maps``, ``transforms``, ``hooks``; the larger families keep some rules in modules of their own:
``races`` and ``defined`` for ordering, ``reductions`` for transforms...), their shared model (``base``), the encoding of IR facts into
solver-neutral terms (``encode``), the fabric-cut encoding (``fabric``), the decoded counterexample
(``witness``) and the generation of every obligation of a policy (``families``). The package itself
imports nothing, so importing ``witness`` does not load the families.
"""
