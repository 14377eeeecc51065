"""``z3`` is imported in one module only: ``fxverify/smt/z3_backend.py`` (STYLE.md)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_z3_is_imported_only_by_the_backend() -> None:
    pattern = re.compile(r"^\s*(import z3|from z3[ .])", re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "fxverify").rglob("*.py")
                 if pattern.search(p.read_text()) and p.relative_to(ROOT).as_posix() != "fxverify/smt/z3_backend.py"]
    assert offenders == []
