"""fxverify: a verifier for data-movement policies on GPU-DPU/NIC-CXL fabrics.

The stages, in the order data flows through them (each module's path names its stage):

- ``source``, ``vocab``, ``errors``, ``atomic``, ``diagnostics``: shared by every stage (spans,
  the vocabulary of the language, the exception root, atomic writes, the code registry and the
  diagnostic model);
- ``syntax`` (text -> tree) and ``ast`` (tree -> AST);
- ``resolve`` (AST -> IR, one module per phase) and ``ir`` (the semantic movement graph);
- ``graph`` (happens-before reachability and fabric paths);
- ``obligations`` (one module per family; the encoding of IR facts into terms; witnesses);
- ``smt`` (solver-neutral terms, the backend protocol, Z3, SMT-LIB2);
- ``replay`` (the independent concrete simulator, and traces of replayed counterexamples);
- ``result`` (verdicts, outcomes, refutations) and ``pipeline`` (one policy, end to end);
- ``gate`` (many policies: discovery, cache, baselines, workers, the exit code), and beside it
  ``lower`` (eBPF) and ``gen`` (policies from real input files);
- ``render`` (every output format) and ``cli`` (arguments in, rendering out).

See ``specs/`` for the user documentation.
"""

__version__ = "0.1.0"
