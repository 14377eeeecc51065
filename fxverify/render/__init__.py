"""Renderers: ``text`` (plain text, or styled for rich on a terminal), ``json``, ``sarif``,
``junit``, ``github`` and ``markdown`` (the formats of ``fxverify check --format``; specs/output.md),
and ``lower`` (the report of ``fxverify lower``, text or JSON).

Renderers only format: they take ``CheckResult``/``Diagnostic``/``Trace`` values, or a whole
``gate.Report``, and return text. They never see solver objects. A crashed check is a result
holding its FX-INT-001 diagnostic, rendered like any other.
"""
