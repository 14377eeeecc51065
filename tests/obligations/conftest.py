"""The obligation tests draw families of two to eight instances, below the size for which a check
asks the solver a parametric question (``parametric.QUERY_MIN_INSTANCES``): here it asks from two
on, so that the parametric arguments are exercised on the small families brute force can check.
``test_parametric.py::test_small_declarations_are_not_asked`` puts the default back."""

from __future__ import annotations

import pytest

from fxverify.obligations import parametric

#: ``parametric.QUERY_MIN_INSTANCES`` as fxverify ships it
DEFAULT_QUERY_MIN_INSTANCES = parametric.QUERY_MIN_INSTANCES


@pytest.fixture(autouse=True)
def _ask_for_every_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parametric, "QUERY_MIN_INSTANCES", parametric.MIN_INSTANCES)
