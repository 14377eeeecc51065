"""Rule selection: which obligation codes ``fxverify check`` checks (``--select``, ``--ignore``).

Takes selectors as the user wrote them: a code (``FX-OWN-004``), a prefix of codes (``FX-ORD``,
``FX-OWN-00``, as ruff reads rule prefixes) or an obligation family (``ordering``, ``maps``),
several per argument separated by commas. Produces the set of codes whose obligations are not
generated (``CheckOptions.skip_codes``). The rules are the obligation codes (the six families of
BRIEF section 3); input errors, unknown verdicts and internal errors are not rules and are always
reported. Two rules are never skipped:

- FX-ORD-001 (cyclic happens-before): with a cycle no schedule exists and every schedule
  obligation holds vacuously, so the pipeline generates only the cycle's obligation
  (``obligations.families.generate``); skipping it would let a deadlocked policy pass;
- FX-SMT-001 is no rule but a verdict: unknown is never a pass (``--unknown warn`` is the way to
  let it through as a warning).

``--select`` keeps only the rules it names (FX-ORD-001 always); ``--ignore`` then drops rules.
Emits FX-USE-005 for a selector that names no rule.
"""

from __future__ import annotations

from collections.abc import Iterable

from fxverify.diagnostics import codes
from fxverify.diagnostics.codes import OBLIGATION_FAMILIES, REGISTRY, Code
from fxverify.diagnostics.model import Diagnostic, diagnostic, nearest

#: The codes ``--select`` and ``--ignore`` choose among, in registry order.
RULES: tuple[Code, ...] = tuple(c for c in REGISTRY.values() if c.family in OBLIGATION_FAMILIES)

#: Rules that are checked whatever the selection (see the module docstring).
ALWAYS: frozenset[str] = frozenset({codes.ORD_001})


def split(values: Iterable[str]) -> list[str]:
    """Selectors from option values: each value may hold several, separated by commas or spaces
    (``--select FX-ORD,FX-OWN-004``, ``FXVERIFY_SELECT="FX-ORD FX-XF"``)."""
    return [part for v in values for part in v.replace(",", " ").split()]


def matching(selector: str) -> list[Code]:
    """The rules ``selector`` names: a family name, or a prefix of codes (case-insensitive)."""
    s = selector.strip()
    fams = {f.value for f in OBLIGATION_FAMILIES}
    if s.lower() in fams:
        return [c for c in RULES if c.family.value == s.lower()]
    return [c for c in RULES if c.startswith(s.upper())]


def _unknown(selector: str, option: str) -> Diagnostic:
    s = selector.upper()
    other = [c for c in REGISTRY if c.startswith(s)]
    if other:
        why = (f"`{option} {selector}` names {other[0]}{', ...' if len(other) > 1 else ''}, which is not a rule: "
               "input errors, unknown verdicts and internal errors are always reported")
        return diagnostic(codes.USE_005, why, help="select obligation codes (FX-ORD-, FX-ALIAS-, FX-OWN-, FX-MAP-, "
                                                   "FX-XF-, FX-HOOK-) or families such as `ordering`")
    near = nearest(selector.lower(), [str(c).lower() for c in RULES] + [f.value for f in OBLIGATION_FAMILIES])
    near = near.upper() if near is not None and near.startswith("fx-") else near
    return diagnostic(codes.USE_005, f"`{option} {selector}` names no rule" + (f"; did you mean `{near}`?" if near else ""),
                      help="`fxverify explain --list` lists every code; a prefix such as `FX-ORD` or a family "
                           "such as `ordering` names several")


def skipped(select: Iterable[str], ignore: Iterable[str]) -> tuple[frozenset[str], list[Diagnostic]]:
    """The codes whose obligations are not generated under ``select`` and ``ignore`` (selector
    lists as ``split`` reads them), and the problems: FX-USE-005 for a selector that names no
    rule, an empty ``select`` value (``--select ''``), or an ignore of a rule that is always
    checked (``ALWAYS``)."""
    problems: list[Diagnostic] = []
    select = list(select)
    if any(not split([v]) for v in select):
        # an empty selector would select nothing, and no selector means every rule: refuse it
        # rather than check everything while the user meant a narrower run
        problems.append(diagnostic(codes.USE_005, "`--select` is empty: it names no rule",
                                   help="name codes, prefixes or families (`--select FX-ORD,ownership`), or leave "
                                        "`--select` out to check every rule"))
    sel, ign = split(select), split(ignore)
    kept = {str(c) for c in RULES} if not sel else set(ALWAYS)
    for s in sel:
        found = matching(s)
        if not found:
            problems.append(_unknown(s, "--select"))
        kept |= {str(c) for c in found}
    for s in ign:
        found = matching(s)
        if not found:
            problems.append(_unknown(s, "--ignore"))
        if found == [codes.ORD_001]:
            problems.append(diagnostic(
                codes.USE_005, f"`--ignore {s}` cannot skip FX-ORD-001: with cyclic happens-before every other "
                "schedule obligation holds vacuously, so a deadlocked policy would pass",
                help="fix the cycle (`fxverify explain FX-ORD-001`); it is checked whatever the selection"))
        kept -= {str(c) for c in found} - ALWAYS
    return frozenset(str(c) for c in RULES if str(c) not in kept), problems
