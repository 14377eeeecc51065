"""Grouping of findings: a check shows one diagnostic per group of instances (an edge family's
instances fail at one span) with a note counting the others, and verifies the hint of that first
one only. Takes diagnostics; emits none of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import Code
from fxverify.diagnostics.model import Diagnostic
from fxverify.source import Span


#: A finding for ``first_findings``: anything with the ``index`` of its diagnostic.
F = TypeVar("F")


def first_findings(findings: Sequence[F], diagnostics: list[Diagnostic]) -> list[F]:
    """The first finding of each group of instances (``group_key``), in order; a finding is a
    ``hints.Finding`` or anything whose ``index`` is the index of its diagnostic in
    ``diagnostics`` (``gate.shards``). ``check`` shows only that one (``group_instances``), so
    only its hint is verified."""
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key = group_key(diagnostics[f.index])
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def group_key(d: Diagnostic) -> tuple:
    """What ``group_instances`` groups by: the code, the primary and first related spans, and the
    message of an unknown verdict (unknowns of different obligations must each stay visible)."""
    return group_of(d.code, d.primary.span if d.primary else None, d.related[0].span if d.related else None,
                    d.message)


def group_of(code: Code, primary: Span | None, related: Span | None, message: str = "") -> tuple:
    """``group_key`` from its parts, before a diagnostic is made (the replay of refutations)."""
    return (code, primary, related, message if code is codes.SMT_001 else "")


#: The obligation keys a grouped diagnostic's note names, at most (``group_instances``).
GROUP_KEYS_SHOWN = 4


def group_instances(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Keep one diagnostic per (code, primary span): edge-family instances share a span, and a
    person needs the first instance's trace, plus a note on the others. The note counts the other
    instances of the edge family that fail the same way (the kept one's edges differ from
    theirs), and names, by obligation key, the findings on the kept one's own edges (another
    posted link, another access of the same edges), which are not other instances. Grouping is
    the same in every format, so the note is where those keys show (at most
    ``GROUP_KEYS_SHOWN``; ``--dump-smt`` indexes every obligation)."""
    groups: dict[tuple, list[Diagnostic]] = {}
    for d in diags:
        groups.setdefault(group_key(d), []).append(d)
    out = []
    for ds in groups.values():
        first = ds[0]
        if len(ds) > 1:
            same = [d.obligation for d in ds[1:] if d.edges == first.edges]
            instances = len(ds) - 1 - len(same)
            notes = ()
            if instances:
                notes += (f"{instances} more instance(s) of this edge family fail the same way",)
            if same:
                shown = ", ".join(same[:GROUP_KEYS_SHOWN]) + (", ..." if len(same) > GROUP_KEYS_SHOWN else "")
                notes += (f"{len(same)} more finding(s) of this code on the same edges: {shown}",)
            first = replace(first, notes=first.notes + notes)
        out.append(first)
    return out
