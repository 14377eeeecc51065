"""The SMT layer, solver-neutral: terms (``terms``), queries, results and the backend protocol
(``backend``), the one factory of backends (``factory``), the Z3 backend (``z3_backend``, the only
module that imports ``z3``), a process pool of it (``pool``), the SMT-LIB2 writer (``smtlib``) and
wrappers that implement the whole protocol: the result cache (``caching``) and the SMT-LIB2
recorder (``recording``). Nothing here knows the IR: the encoding of IR facts into terms lives
with the obligations (``fxverify.obligations.encode``)."""
