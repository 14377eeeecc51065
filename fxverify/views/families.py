"""Folding edge and region families into one picture node each.

Takes instance names (``kvw[3][0][17]``), their family names (``kvw``), the declaration text of
each family (for its index variables: ``edge kvw[l, 0, b]`` names ``l`` and ``b``) and the
``--unfold`` names; produces ``Group``s: one per family with its index ranges
(``kvw[l, 0, b]`` with ``l in 0..32, b in 0..512``), or one per instance for what was unfolded.
Ranges use the policy language's half-open ``a..b`` (specs/language.md, families). Emits no
diagnostics (``views.command`` checks the ``--unfold`` names with ``unmatched``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fxverify.source import SourceMap, Span

_INDEX = re.compile(r"\[(-?\d+)\]")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_GENERIC = ("i", "j", "k", "m", "n", "p", "q")


def indices(name: str, family: str) -> tuple[int, ...]:
    """The integer indices of an instance name: ``kvw[3][0][17]`` of family ``kvw`` is ``(3, 0, 17)``."""
    return tuple(int(x) for x in _INDEX.findall(name[len(family):]))


def declaration(sources: SourceMap, span: Span) -> str:
    """The start of the source text of a declaration (for ``declared_vars``); empty when the
    file is unknown."""
    sf = sources.get(span.file)
    return "" if sf is None else sf.text[span.start:min(span.end, span.start + 240)]


def declared_vars(decl: str, keyword: str, family: str) -> tuple[str | None, ...] | None:
    """The index variable of each index position in a family's declaration text: ``edge
    kvw[l, 0, b]: ...`` gives ``("l", None, "b")`` (``None`` where the index is an expression),
    ``region kvb0[l in 0..32, b in 0..512] ...`` gives ``("l", "b")``; ``None`` when the text
    does not declare ``family`` with indices."""
    m = re.search(rf"\b{keyword}\s+{re.escape(family)}\s*\[([^\]]*)\]", decl)
    if m is None:
        return None
    out: list[str | None] = []
    for part in (p.strip() for p in m[1].split(",")):
        head = part.split(" in ")[0].strip() if keyword == "region" else part
        out.append(head if _IDENT.fullmatch(head) else None)
    return tuple(out)


@dataclass(frozen=True)
class Group:
    """One node's worth of instances. ``members`` are positions in the instance list; ``folded``
    when it stands for a family (or what is left of one after unfolding some instances);
    ``pattern`` is ``kvw[l, 0, b]`` (or the instance name), ``ranges`` ``l in 0..32, b in 0..512``;
    ``dims`` names each index position (``None``: constant over the group)."""

    key: str
    family: str
    members: tuple[int, ...]
    folded: bool
    pattern: str
    ranges: str
    dims: tuple[str | None, ...] = ()

    @property
    def size(self) -> int:
        """How many instances the group stands for."""
        return len(self.members)


def matches(pattern: str, name: str, family: str) -> bool:
    """True when an ``--unfold`` name selects instance ``name`` of ``family``: the family's name
    (every instance), the instance's own name, or an index prefix of it (``kvw[3]`` selects
    ``kvw[3][0][17]``)."""
    return pattern in (family, name) or (pattern.endswith("]") and name.startswith(pattern))


def unmatched(patterns: Sequence[str], names: Sequence[str], families: Sequence[str]) -> list[str]:
    """The ``--unfold`` names that select no instance."""
    return [p for p in patterns if not any(matches(p, n, f) for n, f in zip(names, families))]


def _dim_text(var: str, values: list[int]) -> str:
    lo, hi = values[0], values[-1]
    if hi - lo + 1 == len(values):
        return f"{var} in {lo}..{hi + 1}"
    if len(values) <= 5:
        return f"{var} in {{{', '.join(map(str, values))}}}"
    return f"{var}: {len(values)} values in {lo}..{hi + 1}"


def describe(family: str, index: Sequence[tuple[int, ...]], names: tuple[str | None, ...] | None) -> tuple[str, str, tuple]:
    """``(pattern, ranges, dims)`` of a folded group whose members have ``index`` tuples; ``names``
    are the declared index variables (``declared_vars``)."""
    arity = {len(t) for t in index}
    if len(arity) != 1 or not index:
        return f"{family}[…]", "", ()
    n = arity.pop()
    if names is None or len(names) != n:
        names = (None,) * n
    used: set[str] = {v for v in names if v}
    spare = [g for g in _GENERIC if g not in used]
    parts, ranges, dims = [], [], []
    for d in range(n):
        values = sorted({t[d] for t in index})
        if len(values) == 1:
            parts.append(str(values[0]))
            dims.append(None)
            continue
        var = names[d] or spare.pop(0)
        parts.append(var)
        ranges.append(_dim_text(var, values))
        dims.append(var)
    return f"{family}[{', '.join(parts)}]", ", ".join(ranges), tuple(dims)


def fold(prefix: str, names: Sequence[str], families: Sequence[str], unfold: Sequence[str],
         decl: Callable[[int], str], keyword: str) -> tuple[list[Group], list[int]]:
    """Group instances by family, in order of first appearance; instances an ``--unfold`` name
    selects get a group each. ``decl(i)`` is the declaration text of instance ``i`` (for the index
    variables), ``keyword`` ``edge`` or ``region``. Returns the groups and, per instance, the
    position of its group. Group keys are ``prefix`` + a number, in order."""
    by_family: dict[str, list[int]] = {}
    singles: list[int] = []
    order: list[tuple[int, str | int]] = []  # (first member, family name or single instance)
    for i, (name, fam) in enumerate(zip(names, families)):
        if any(matches(p, name, fam) for p in unfold) or name == fam:
            singles.append(i)
            order.append((i, i))
        else:
            if fam not in by_family:
                by_family[fam] = []
                order.append((i, fam))
            by_family[fam].append(i)
    groups: list[Group] = []
    where = [0] * len(names)
    for _first, what in sorted(order, key=lambda t: t[0]):
        if isinstance(what, int) or len(by_family[what]) == 1:
            i = what if isinstance(what, int) else by_family[what][0]
            g = Group(f"{prefix}{len(groups)}", families[i], (i,), False, names[i], "")
        else:
            members = by_family[what]
            first = members[0]
            pattern, ranges, dims = describe(what, [indices(names[i], what) for i in members],
                                             declared_vars(decl(first), keyword, what))
            g = Group(f"{prefix}{len(groups)}", what, tuple(members), True, pattern, ranges, dims)
        for i in g.members:
            where[i] = len(groups)
        groups.append(g)
    return groups, where


def relation(a: Group, b: Group, pairs: Sequence[tuple[tuple[int, ...], tuple[int, ...]]]) -> str:
    """How the indices of the instance pairs ``(a's index, b's index)`` behind a folded arrow
    relate, in the variables both groups share: ``same l`` (equal), ``l+1`` (b's is a's plus one),
    or ``""`` when they share none or the difference is not constant."""
    out = []
    for d_a, var in enumerate(a.dims):
        if var is None or var not in b.dims:
            continue
        d_b = b.dims.index(var)
        deltas = {tb[d_b] - ta[d_a] for ta, tb in pairs if len(ta) > d_a and len(tb) > d_b}
        if len(deltas) != 1:
            return ""
        delta = deltas.pop()
        out.append(f"same {var}" if delta == 0 else f"{var}{delta:+d}")
    return ", ".join(out)


_NUMBERED = re.compile(r"(.*?)(\d+)")

#: The widest line a node's device list takes, in characters: Graphviz sizes a node from its
#: widest line, and a short line keeps a picture of many devices narrow enough to read.
LINE_CHARS = 44


def device_runs(devices: Sequence[str]) -> list[str]:
    """Device names, sorted by number, with runs of three or more of one prefix numbered without a
    gap folded: ``gpu0..gpu7`` (the usual shape of a tensor-parallel group), ``nic0..nic2, nic4``."""
    names = sorted(set(devices), key=lambda d: (m[1], int(m[2])) if (m := _NUMBERED.fullmatch(d)) else (d, -1))
    parts: list[str] = []
    run: list[tuple[str, int]] = []

    def close() -> None:
        if len(run) >= 3:
            parts.append(f"{run[0][0]}{run[0][1]}..{run[-1][0]}{run[-1][1]}")
        else:
            parts.extend(f"{p}{n}" for p, n in run)
        run.clear()

    for d in names:
        m = _NUMBERED.fullmatch(d)
        if m and run and run[-1][0] == m[1] and run[-1][1] + 1 == int(m[2]):
            run.append((m[1], int(m[2])))
            continue
        close()
        if m:
            run.append((m[1], int(m[2])))
        else:
            parts.append(d)
    close()
    return parts


def hooks_lines(action: str, hooks: Sequence[tuple[str, str]]) -> list[str]:
    """The ``ACTION by DEVICE.HOOK`` lines of a node for ``(device, hook)`` pairs: devices that
    fire the same hook are folded into runs (``read by gpu0..gpu7.launch (8 devices)``), and the
    entries are wrapped after commas into lines of at most ``LINE_CHARS`` characters where they can
    be (Graphviz sizes the node from its widest line)."""
    by_hook: dict[str, list[str]] = {}
    for device, hook in sorted(set(hooks)):
        by_hook.setdefault(hook, []).append(device)
    entries = []
    for hook, devices in sorted(by_hook.items()):
        parts = device_runs(devices)
        entries += [f"{part}.{hook}" for part in parts]
        if len(parts) == 1 and len(devices) >= 3:
            entries[-1] += f" ({len(devices)} devices)"
    words = f"{action} by {', '.join(entries)}".split(" ")
    lines = [words[0]]
    for w in words[1:]:
        if len(lines[-1]) + 1 + len(w) > LINE_CHARS and lines[-1].endswith(","):
            lines.append(w)
        else:
            lines[-1] += " " + w
    return lines
