"""Shared fixtures, the ``--update-goldens`` and ``--update-expect`` switches (they rewrite golden
files and the corpus's expected messages for review). The ``slow`` marker (declared in
pyproject.toml) marks tests of the real policies; CI runs them too, ``-m "not slow"`` skips them
while editing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite golden files (obligations/, tests/goldens/) instead of comparing")
    parser.addoption("--update-expect", action="store_true", default=False,
                     help="rewrite the `# ^ message` lines of the corpus's fail policies instead of comparing")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the run should rewrite goldens."""
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture
def update_expect(request: pytest.FixtureRequest) -> bool:
    """True when the run should rewrite the corpus's expected messages."""
    return bool(request.config.getoption("--update-expect"))


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from the repository root, so policy paths in outputs are repository-relative."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    return ROOT


def corpus_files(kind: str) -> list[Path]:
    """``corpus/<family>/<kind>/*.fx`` relative to the root, sorted."""
    return sorted(p.relative_to(ROOT) for p in ROOT.glob(f"corpus/*/{kind}/*.fx"))


os.environ.setdefault("NO_COLOR", "1")
# `check --jobs` defaults to every CPU; the suite's many small checks run faster in one process
# (each pool of workers takes seconds to start). Tests of `--jobs` pass it explicitly.
os.environ.setdefault("FXVERIFY_JOBS", "1")


def pytest_configure(config: pytest.Config) -> None:
    """The result cache's default folder comes from platformdirs, which follows XDG_CACHE_HOME:
    keep the suite's entries out of the user's cache, in one folder per session."""
    import tempfile

    config._fx_cache = tempfile.mkdtemp(prefix="fxverify-test-cache-")  # type: ignore[attr-defined]
    os.environ["XDG_CACHE_HOME"] = config._fx_cache  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first, in their collected order, then the rest: under ``-n`` (with the
    work-stealing scheduler set in pyproject.toml) a test of minutes that starts last would run
    alone while the other workers idle. No test depends on another's having run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    shutil.rmtree(getattr(config, "_fx_cache", ""), ignore_errors=True)

# CI runs are derandomized so that a landing never depends on luck; local runs keep exploring.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
