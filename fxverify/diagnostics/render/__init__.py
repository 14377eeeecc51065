"""Renderers: ``text`` (plain text, or styled for rich on a terminal) and ``json``.

Renderers only format: they take ``CheckResult``/``Diagnostic``/``Trace`` values and return text.
"""
