"""Code actions: a finding's verified hint as a text edit of the policy.

Takes a refutation ``Diagnostic``, what verifying its hint found (``result.HintCheck``: the
options ``fxverify.hints`` applied and checked again, the finding gone and none new), the
policy's ``index.Index`` and its sources; produces ``Fix`` values, each a title and the text edits
that write the verified edits into the edge declarations. The edits are the objects that were
checked, never read back from the hint's words. The edits fxverify writes as text are orderings
(``edits.After``, ``edits.FamilyAfter``): ``, P`` is appended to the edge's ``after`` clause, or `` after P`` inserted
after its ``by DEV.HOOK``; a fix with any other edit is not offered (applied in part, it is not
the fix that was verified).

An edit to a plain edge writes exactly the ordering the hint verified. An edit to one instance of
an edge family (``spill[3]``) can only be written on the family's declaration, where it holds for
every instance; the predecessor is then written with the family's index variables
(``after attn[l]`` for ``attn[3]`` when ``l`` is 3 at ``spill[3]``), and such a fix is offered only
once the edited text itself has been checked again (``Fix.needs_check``). A ``FamilyAfter`` was
verified on the IR in the form it is written, but its text is read back by the resolver (a second
implementation of the index arithmetic), so it is checked again too. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxverify import ast
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Diagnostic
from fxverify.edits import After, FamilyAfter, fixed_positions, generalise
from fxverify.lsp.index import Index
from fxverify.result import CheckResult, HintCheck, Verdict
from fxverify.source import SourceMap, Span

@dataclass(frozen=True)
class TextEdit:
    """Replace ``[span.start, span.end)`` of ``span.file`` with ``text`` (an insertion when empty)."""

    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    """A code action: ``title``, the ``edits`` that apply it, the ``diagnostic`` it fixes, and
    ``needs_check``: True when the text edits are written on a family declaration, so the edited
    text must be checked again before the fix is offered."""

    title: str
    edits: tuple[TextEdit, ...]
    diagnostic: Diagnostic
    needs_check: bool = False


def verified(check: HintCheck | None) -> bool:
    """True when a hint's check found a fix (one option, or a pair of them)."""
    return check is not None and check.status in ("verified", "pair") and bool(check.shown)


def fix_of(d: Diagnostic, idx: Index, check: HintCheck | None) -> Fix | None:
    """The fix that writes the verified edits of ``d`` (``check``: ``CheckResult.hints`` of its
    obligation) into the policy text: the first verified option that is all orderings, or a
    verified pair when both are; ``None`` when nothing verified is made only of orderings, or an
    edge's declaration is not in the index."""
    if not verified(check) or idx.policy is None:
        return None
    assert check is not None  # INVARIANT: verified() checked it
    groups = [check.shown] if check.status == "pair" else [(o,) for o in check.shown]
    chosen = next((g for g in groups if all(isinstance(e, (After, FamilyAfter)) for o in g for e in o.edits)), None)
    if chosen is None:
        return None  # the verified edit holds only as a whole: one fxverify cannot write as text spoils it
    eds = [e for o in chosen for e in o.edits if isinstance(e, (After, FamilyAfter))]
    out: list[TextEdit] = []
    general = False
    for ed in eds:
        for pred in ed.preds if isinstance(ed, After) else (ed.origin,):
            made = _after_edit(idx, ed.edge, pred, ed.pred() if isinstance(ed, FamilyAfter) else None)
            if made is None:
                return None
            edit, family = made
            out.append(edit)
            # Any text written on a family declaration is checked again before it is offered: the
            # verified edit acted on the IR, and the text is read back by the resolver, a second
            # implementation of the same index arithmetic.
            general |= family
    title = "Apply the verified hint: " + "; ".join(ed.text() for ed in eds)
    return Fix(title, tuple(_merge(out)), d, general)


def _after_edit(idx: Index, edge: str, pred: str, written: str | None = None) -> tuple[TextEdit, bool] | None:
    """The text edit adding ``after pred`` to the declaration of edge instance ``edge``, and
    whether it is written on a family (generalised). ``written``: the predecessor as the
    declaration writes it when a verified ``edits.FamilyAfter`` says so (no generalising)."""
    pol = idx.policy
    assert pol is not None
    if not pol.has("edge", edge) or not pol.has("edge", pred):
        return None
    e = pol.edge(edge)
    decl = idx.edge_decls.get(e.span)
    if decl is None:
        return None
    family = bool(decl.indices)
    if written is not None:
        pred = written
    elif family:
        general = generalise(tuple(ast.index_text(ix) for ix in decl.indices), e.name, pred,
                             fixed_positions(pol, pol.edge(pred).family))
        if general is None:
            return None
        pred = general
    after = next((c for c in decl.clauses if isinstance(c, ast.AfterClause) and not c.notifies), None)
    if after is not None:
        end = after.refs[-1].span.end
        return TextEdit(Span(decl.span.file, end, end), f", {pred}"), family
    end = decl.hook.span.end
    return TextEdit(Span(decl.span.file, end, end), f" after {pred}"), family


def _merge(edits: list[TextEdit]) -> list[TextEdit]:
    """Edits at the same insertion point joined into one, in order (two orderings on one edge)."""
    out: list[TextEdit] = []
    for ed in edits:
        if out and out[-1].span == ed.span:
            prev = out[-1]
            add = ed.text.removeprefix(" after ")
            out[-1] = TextEdit(prev.span, prev.text + (f", {add}" if add != ed.text else ed.text))
        else:
            out.append(ed)
    return out


def apply(text: str, file: str, edits: tuple[TextEdit, ...]) -> str:
    """``text`` (the contents of ``file``) with the ``edits`` on that file applied."""
    for ed in sorted((e for e in edits if e.span.file == file), key=lambda e: e.span.start, reverse=True):
        text = text[:ed.span.start] + ed.text + text[ed.span.end:]
    return text


def files_of(edits: tuple[TextEdit, ...]) -> list[str]:
    """The files ``edits`` change, in order."""
    return list(dict.fromkeys(e.span.file for e in edits))


def apply_all(sources: SourceMap, edits: tuple[TextEdit, ...]) -> dict[str, str]:
    """The edited texts of the files ``edits`` change, by path (texts from ``sources``)."""
    out = {}
    for f in files_of(edits):
        sf = sources.get(f)
        if sf is not None:
            out[f] = apply(sf.text, f, edits)
    return out


def holds(before: CheckResult, d: Diagnostic, after: CheckResult) -> bool:
    """True when ``after`` (the check of the text with a fix applied) discharges the finding ``d``
    of ``before`` without a new one: the edited policy loads, ``d``'s obligation is proved, and
    every obligation not proved now was not proved before either (keys name edge instances, so
    they survive the edit)."""
    if after.name is None or after.internal_error or after.verdict is None:
        return False
    was = {o.key for o in before.outcomes if o.verdict is not Verdict.PROVED}
    now = {o.key for o in after.outcomes if o.verdict is not Verdict.PROVED}
    stopped = any(x.code is codes.SMT_001 and not x.obligation for x in after.diagnostics)
    return not stopped and d.obligation not in now and now <= was
