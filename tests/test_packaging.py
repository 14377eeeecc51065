"""Every dependency floor declared in pyproject.toml is the version CI tests at its minimum
(``.ci/minimum-versions.txt``), and every package data file the code reads is declared."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import ROOT


def _floors() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"]) + [r for extra in meta["optional-dependencies"].values() for r in extra]
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", r.replace(" ", ""))
        assert m, f"{r}: declare a floor with >= (and test it)"
        out[m.group(1).lower()] = m.group(2)
    return out


def _pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / ".ci/minimum-versions.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            out[name.lower()] = version
    return out


def _same(floor: str, pin: str) -> bool:
    """``5.1`` and ``5.1.0.0`` name one version."""
    def parts(v: str) -> list[int]:
        xs = [int(x) for x in v.split(".")]
        while xs and xs[-1] == 0:
            xs.pop()
        return xs
    return parts(floor) == parts(pin)


def test_every_floor_is_pinned_for_the_minimum_run() -> None:
    floors, pins = _floors(), _pins()
    assert set(floors) == set(pins)
    assert {k: (floors[k], pins[k]) for k in floors if not _same(floors[k], pins[k])} == {}


def test_ci_runs_the_minimum_versions() -> None:
    run = (ROOT / ".ci/run").read_text()
    assert "-c .ci/minimum-versions.txt" in run and "pytest -n auto -m \"not slow\"" in run
