"""Replay: the independent concrete simulator and the traces of replayed counterexamples.

``simulate.Simulator`` executes the execution model of BRIEF section 2 on concrete schedules
(``world`` recomputes happens-before, routes and owners; ``schedule_rules`` and ``static_rules``
are the rules it checks). It imports nothing from ``fxverify.smt`` or ``fxverify.obligations``
but the ``Witness`` it replays; the facts it shares with the encoder are the vocabulary's
(``fxverify.vocab``: dtype widths, codec bounds, commuting operators). ``trace.build_trace``
turns a replayed counterexample into the events a person reads, and ``refutation.refutation``
the diagnostic of a refuted obligation once its counterexample replays (it reads the obligation
and the solver's result through their methods, imported for types only).
"""
