"""Tests for fxverify.source: spans."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

from fxverify.source import Span

from tests.conftest import ROOT


def test_a_span_sent_to_another_process_hashes_as_its_fields_do_there() -> None:
    """``Span`` keeps its hash, so it must not carry it in a pickle: a string's hash differs
    between processes (PYTHONHASHSEED), and a stale one would miss every dictionary lookup of a
    spawned worker."""
    span = Span("policy.fx", 3, 17)
    assert pickle.loads(pickle.dumps(span)) == span and hash(pickle.loads(pickle.dumps(span))) == hash(span)
    code = ("import pickle, sys; from fxverify.source import Span; s = pickle.loads(sys.stdin.buffer.read()); "
            "print(hash(s) == hash(Span('policy.fx', 3, 17)) and {s: 1}.get(Span('policy.fx', 3, 17)) == 1)")
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(span), capture_output=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}, cwd=ROOT)
        assert out.stdout.decode().strip() == "True", out.stderr.decode()
