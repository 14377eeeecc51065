"""Diagnostics, shared by every stage: the code registry with everything about each code
(``codes``), the diagnostic and trace model with its one constructor (``model``), inline
suppressions (``suppress``), fingerprints for baselines (``fingerprint``) and the generated
explanations (``explain``). Renderers live in ``fxverify.render``."""
