"""``fxverify graph``: load a policy, optionally find one of its findings, and build its pictures.

Takes a ``GraphRequest`` (policy path, views, ``--unfold`` names, ``--finding CODE[:KEY]``);
produces a ``GraphBuild``: the ``model.Picture`` of each view, the focus, and diagnostics with an
exit code (BRIEF section 6: 2 for bad input). A finding is looked up by checking the policy
(``pipeline.check``, the same findings ``fxverify check`` shows); ``CODE`` alone picks the first
finding of that code, ``CODE:KEY`` the one whose obligation key is ``CODE:KEY``. Emits the load
diagnostics of the policy (FX-SYN-, FX-NAM-, ...), and FX-USE-005 for a ``--finding`` that names
no finding of the policy, or an ``--unfold`` name that names no edge or region, or that would
draw more than ``MAX_UNFOLDED`` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic, diagnostic, nearest
from fxverify.graph import PolicyGraph
from fxverify.pipeline import CheckOptions, check
from fxverify.resolve import load_policy
from fxverify.source import SourceMap
from fxverify.views.fabric import fabric_view
from fxverify.views.families import matches, unmatched
from fxverify.views.focus import Focus, focus_of
from fxverify.views.hb import hb_view
from fxverify.views.model import Picture
from fxverify.views.movement import movement_view

#: The views, in the order a page shows them.
VIEWS = ("fabric", "movement", "hb")
#: The most instances ``--unfold`` may draw one by one (Graphviz lays out a few thousand nodes in
#: seconds; tens of thousands take minutes and cannot be read).
MAX_UNFOLDED = 2000


@dataclass(frozen=True)
class GraphRequest:
    """What to draw: ``views`` (of ``VIEWS``) of the policy at ``path``, with the families or
    instances ``unfold`` names drawn one by one, and ``finding`` (``CODE`` or ``CODE:KEY``)
    highlighted; ``check`` are the options of the check that finds it."""

    path: str
    views: tuple[str, ...] = VIEWS
    unfold: tuple[str, ...] = ()
    finding: str | None = None
    check: CheckOptions = CheckOptions()


@dataclass
class GraphBuild:
    """The pictures of one policy (by view name), its declared ``name``, the highlighted
    finding's ``focus``, the ``sources`` read, diagnostics and the exit code (0, or 2 for bad
    input)."""

    path: str
    sources: SourceMap
    name: str = ""
    pictures: dict[str, Picture] = field(default_factory=dict)
    focus: Focus | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    exit_code: int = 0


def build_pictures(req: GraphRequest) -> GraphBuild:
    """Build the pictures ``req`` asks for (see the module docstring). Raises only on bugs."""
    out = GraphBuild(req.path, SourceMap())
    policy, diags = load_policy(req.path, out.sources, limits=req.check.limits)
    out.diagnostics = list(diags)
    if policy is None:
        out.exit_code = 2
        return out
    problem = _unfold_problem(req.unfold, [e.name for e in policy.edges] + [r.name for r in policy.regions],
                              [e.family for e in policy.edges] + [r.family for r in policy.regions])
    if problem is not None:
        out.diagnostics.append(problem)
        out.exit_code = 2
        return out
    out.name = policy.name
    graph = PolicyGraph(policy)
    notes: list[str] = []
    if req.finding is not None:
        result = check(req.path, req.check)
        refs = {x.key: x for x in result.refutations}
        found = [d for d in result.diagnostics if d.obligation in refs and d.trace is not None]
        chosen = _choose(req.finding, found)
        if chosen is None:
            out.diagnostics.append(_no_finding(req.finding, req.path, found))
            out.exit_code = 2
            return out
        out.focus = focus_of(policy, graph, refs[chosen.obligation], chosen, result.hints.get(chosen.obligation))
        same = [d.obligation for d in found if d.code is chosen.code and d is not chosen]
        notes.append(f"finding {chosen.obligation}: {chosen.message}")
        if same and ":" not in req.finding:
            notes.append(f"{len(same)} more of {chosen.code}: {', '.join(same[:3])}{' ...' if len(same) > 3 else ''} "
                         "(--finding CODE:KEY picks one)")
    makers = {"fabric": lambda: fabric_view(policy, out.focus),
              "movement": lambda: movement_view(policy, out.sources, req.unfold, out.focus),
              "hb": lambda: hb_view(policy, graph, out.sources, req.unfold, out.focus)}
    for view in req.views:
        pic = makers[view]()
        out.pictures[view] = Picture(pic.view, pic.title, pic.directed, pic.nodes, pic.arrows, pic.clusters,
                                     tuple(notes) + pic.notes)
    return out


def _choose(wanted: str, found: list[Diagnostic]) -> Diagnostic | None:
    """The finding ``--finding`` names: by obligation key (``CODE:KEY``), else the first of a code."""
    code = wanted.split(":", 1)[0].upper()
    rest = wanted.split(":", 1)[1] if ":" in wanted else None
    for d in found:
        if d.code == code and (rest is None or d.obligation == f"{code}:{rest}"):
            return d
    return None


def _no_finding(wanted: str, path: str, found: list[Diagnostic]) -> Diagnostic:
    """FX-USE-005 for a ``--finding`` that names no finding of the policy."""
    if not found:
        return diagnostic(codes.USE_005, f"`--finding {wanted}` names no finding: `{path}` has none with a trace",
                          help=f"`fxverify check {path}` shows its verdict; draw it without `--finding`")
    keys = [d.obligation for d in found]
    near = nearest(wanted, keys)
    shown = ", ".join(f"`{k}`" for k in keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    return diagnostic(codes.USE_005, f"`--finding {wanted}` names no finding of `{path}`"
                      + (f"; did you mean `{near}`?" if near else ""),
                      help=f"its findings are {shown}: give `CODE` or `CODE:KEY`")


def _unfold_problem(patterns: tuple[str, ...], names: list[str], families: list[str]) -> Diagnostic | None:
    """FX-USE-005 for an ``--unfold`` name that selects nothing, or that selects more than
    ``MAX_UNFOLDED`` instances."""
    bad = unmatched(patterns, names, families)
    if bad:
        near = nearest(bad[0], set(families))
        return diagnostic(codes.USE_005, f"`--unfold {bad[0]}` names no edge or region family or instance"
                          + (f"; did you mean `{near}`?" if near else ""),
                          help="name a family (`kvw`), an instance (`kvw[3][0][17]`) or an index prefix (`kvw[3]`)")
    for p in patterns:
        n = sum(matches(p, name, fam) for name, fam in zip(names, families))
        if n > MAX_UNFOLDED:
            return diagnostic(codes.USE_005, f"`--unfold {p}` would draw {n:,} nodes, more than {MAX_UNFOLDED:,}",
                              help=f"unfold part of it with an index prefix, such as `--unfold {p}[0]`")
    return None
