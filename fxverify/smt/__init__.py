"""The SMT layer: solver-neutral terms (``terms``), the backend protocol (``backend``), the Z3
backend (``z3_backend``, the only module that imports ``z3``) and the SMT-LIB2 writer (``smtlib``)."""
