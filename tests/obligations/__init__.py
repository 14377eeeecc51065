"""Unit tests of the six obligation families on small IRs built by hand (``tests.ir_builders``).

Each family module tests, for every obligation class: a situation proved by its fast proof (and
the solver agreeing), one the fast proof leaves to the solver, a refutation whose witness is
checked field by field and replayed in the concrete simulator, and situations where the
obligation must not be generated at all.
"""
