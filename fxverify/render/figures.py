"""Trace pictures that are not schedules, and the parts every trace picture shares.

Takes a ``diagnostics.model.Trace``; produces standalone SVG text:
- ``cycle_svg``: a happens-before cycle (FX-ORD-001) as the cycle itself, each edge a box and
  each ``after`` an arrow "must finish before", the closing arrow (the violating step) marked;
- ``missing_path_svg``: a missing fabric path (FX-HOOK-001) as the devices reachable from the
  source (the witness's ``cut``), the device that cannot be reached, and the missing link between
  them, crossed out;
and the shared header (code, heading, rule, witness facts) and step list (``header``,
``step_list``, ``step_rows``). Only the trace is read (never the policy: a result read back from
the cache has none). Output is deterministic. Emits no diagnostics.
"""

from __future__ import annotations

from fxverify.diagnostics.model import Trace, TraceEvent
from fxverify.render.svgtext import (FILLS, INK, MONO, MUTED, RED, STROKES, arrow_marker, document, line, rect, text,
                                     text_width, title, wrap)

#: Outer padding, in px.
PAD = 16
_MIN_WIDTH = 640


def owners(ev: TraceEvent) -> str:
    """`` [owner a -> b]`` for a handoff step, else nothing (as the text trace writes it)."""
    return f" [owner {ev.owner_before} -> {ev.owner_after}]" if ev.owner_before is not None else ""


def label(trace: Trace, heading: str) -> str:
    """The picture's accessible name: the code and the heading."""
    return f"{trace.code}: {heading}" if heading else f"trace of {trace.code}"


def header(body: list[str], trace: Trace, heading: str, width: int) -> int:
    """Append the code and heading, the rule (``why``) and the witness's named facts, wrapped to
    ``width`` px; returns the y below them."""
    y = PAD + 14
    first = f"{trace.code}  {heading}" if heading else str(trace.code)
    for row in wrap(first, width - 2 * PAD, 14):
        body.append(text(PAD, y, row, 14, INK, weight="bold"))
        y += 20
    if trace.why:
        for row in wrap("why: " + trace.why, width - 2 * PAD, 12):
            body.append(text(PAD, y, row, 12, INK))
            y += 17
    facts = [f"{k} = {v}" for k, v in trace.facts]
    if facts:
        for row in wrap("witness: " + ", ".join(facts), width - 2 * PAD, 12):
            body.append(text(PAD, y, row, 12, MUTED, family=MONO))
            y += 17
    return y + 16


def step_rows(trace: Trace) -> list[tuple[str, str, str, str, str, str, str]]:
    """The steps as rows ``(mark, step, t(ns), where, edge, event, what)`` as the text trace
    shows them (``>>`` marks the violating step; ``where`` is ``device.hook``, then `` / stream``
    when the edge is on one); shared by the SVG step list and the HTML tables."""
    out = []
    for ev in trace.events:
        where = f"{ev.device}.{ev.hook}" if ev.hook else ev.device
        if ev.stream is not None:
            where += f" / {ev.stream}"
        out.append((">>" if ev.violation else "", str(ev.step), "-" if ev.time is None else str(ev.time),
                    where, ev.edge, ev.kind, ev.detail + owners(ev)))
    return out


def step_list(body: list[str], trace: Trace, width: int, y: int) -> int:
    """Append the steps in monospace from ``y``, each wrapped to ``width`` px; returns the y below."""
    rows = step_rows(trace)
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    body.append(text(PAD, y, "steps", 12, INK, weight="bold"))
    y += 18
    for r in rows:
        head = "  ".join(r[i].ljust(widths[i]) for i in range(6)) + "  "
        room = width - 2 * PAD - text_width(head, 11)
        what = wrap(r[6], max(room, 200), 11)
        ink = RED if r[0] else INK
        body.append(text(PAD, y, head + what[0], 11, ink, family=MONO, xml_space="preserve",
                         weight="bold" if r[0] else None))
        for more in what[1:]:
            y += 15
            body.append(text(PAD, y, " " * len(head) + more, 11, ink, family=MONO, xml_space="preserve"))
        y += 15
    return y


def _box(x: int, y: int, w: int, h: int, name: str, sub: str, i: int, tip: str, stroke: str | None = None,
         thick: bool = False) -> list[str]:
    """A named box (bold name, muted second line) with a tooltip."""
    return [rect(x, y, w, h, FILLS[i % len(FILLS)], stroke or STROKES[i % len(STROKES)], rx=6, tip=tip,
                 stroke_width=3 if thick else 1.5),
            text(x + w // 2, y + h // 2 - 2, name, 13, INK, anchor="middle", weight="bold"),
            text(x + w // 2, y + h // 2 + 15, sub, 11, MUTED, anchor="middle")]


def cycle_svg(trace: Trace, heading: str = "", steps: bool = True, caption: bool = True) -> str:
    """An HB cycle: event ``i`` says its edge must start after the previous event's edge
    finishes (``replay.trace``), so the edges in event order, with an arrow from each to the next
    and one from the last back to the first, are the cycle. Boxes stand in a row; the closing
    arrow runs under them."""
    evs = list(trace.events)
    n = len(evs)
    names = [ev.edge for ev in evs]
    subs = [f"{ev.device}.{ev.hook}" if ev.hook else ev.device for ev in evs]
    bw = max([text_width(s, 13) for s in names + subs] + [110]) + 24
    gap, bh = 150, 52
    width = max(_MIN_WIDTH, 2 * PAD + 40 + n * bw + (n - 1) * gap)
    body: list[str] = []
    y = header(body, trace, heading, width) if caption else PAD + 8
    body.append(text(PAD, y, "happens-before cycle: each edge must finish before the next starts, so none can start",
                     12, MUTED, weight="bold"))
    top = y + 44
    xs = [PAD + 40 + i * (bw + gap) for i in range(n)]
    for i, ev in enumerate(evs):
        body += _box(xs[i], top, bw, bh, names[i], subs[i], i, f"step {ev.step}: {ev.detail}", RED if ev.violation else None,
                     ev.violation)
    cy = top + bh // 2
    for i in range(n - 1):
        nxt = evs[i + 1]
        x1, x2 = xs[i] + bw, xs[i + 1]
        thick = 3 if nxt.violation else 2
        body.append(f"<g>{title(nxt.detail)}" + line(x1 + 2, cy, x2 - 4, cy, RED, thick, marker_end="url(#fx-red)") + "</g>")
        body.append(text((x1 + x2) // 2, cy - 10, "must finish", 11, INK, anchor="middle"))
        body.append(text((x1 + x2) // 2, cy + 20, "before start", 11, INK, anchor="middle"))
    # the closing arrow: from the last box's bottom back to the first box's bottom
    first = evs[0]
    lx, fx = xs[-1] + bw // 2, xs[0] + bw // 2
    low = top + bh + 56
    thick = 3 if first.violation else 2
    path = f"M {lx} {top + bh + 2} C {lx} {low}, {fx} {low}, {fx} {top + bh + 6}"
    body.append(f'<g>{title(first.detail)}<path d="{path}" fill="none" stroke="{RED}" stroke-width="{thick}" '
                f'marker-end="url(#fx-red)"/></g>')
    mark = ">> " if first.violation else ""
    body.append(text((lx + fx) // 2, low - 4, f"{mark}{first.edge} must start after {evs[-1].edge} finishes", 12,
                     RED if first.violation else INK, anchor="middle", weight="bold" if first.violation else None))
    y = low + 30
    if steps:
        y = step_list(body, trace, width, y)
    return document(width, y + PAD, body, label(trace, heading), [arrow_marker("fx-red", RED)])


def missing_path_svg(trace: Trace, heading: str = "", steps: bool = True, caption: bool = True) -> str:
    """A missing fabric path: the witness names the transfer's ends (``from``, ``to``) and the
    devices the fabric reaches from ``from`` (``cut``). Those stand in one dashed group; ``to``
    stands outside it, and the link the transfer needs is a red dashed arrow, crossed out."""
    facts = dict(trace.facts)
    src, dst = facts["from"], facts["to"]
    reach = [d for d in facts.get("cut", src).split(",") if d] or [src]
    reach = [src] + [d for d in reach if d != src]
    ev = next((e for e in trace.events if e.violation), trace.events[0] if trace.events else None)
    bw = max([text_width(d, 13) for d in reach + [dst]] + [110]) + 32
    bh, gap = 50, 16
    width = max(_MIN_WIDTH, 2 * PAD + bw + 48 + 260 + bw + 24)
    body: list[str] = []
    y = header(body, trace, heading, width) if caption else PAD + 8
    if ev is not None:
        where = f"{ev.device}.{ev.hook}" if ev.hook else ev.device
        for row in wrap(f"edge {ev.edge} ({where}): {ev.detail}", width - 2 * PAD, 12):
            body.append(text(PAD, y, row, 12, INK, family=MONO))
            y += 17
    top = y + 24
    group_h = len(reach) * (bh + gap) + gap + 24
    gx = PAD
    body.append(rect(gx, top, bw + 48, group_h, "#f6f8fa", MUTED, rx=10, stroke_dasharray="6 4",
                     tip="devices the fabric's links reach from " + src))
    body.append(text(gx + 12, top + 18, f"reachable from {src}", 12, MUTED, weight="bold"))
    for i, d in enumerate(reach):
        by = top + 28 + i * (bh + gap)
        body += _box(gx + 24, by, bw, bh, d, "source" if d == src else "reachable", i, f"{d}: reachable from {src}")
    tx = gx + bw + 48 + 260
    ty = top + 28
    body += _box(tx, ty, bw, bh, dst, "unreachable", 4, f"{dst}: no fabric path from {src}", RED, True)
    y1 = top + 28 + bh // 2
    x1, x2 = gx + 24 + bw + 4, tx - 6
    body.append(line(x1, y1, x2, y1, RED, 3, stroke_dasharray="8 6", marker_end="url(#fx-red)"))
    mx = (x1 + x2) // 2
    body.append(line(mx - 10, y1 - 10, mx + 10, y1 + 10, RED, 3))
    body.append(line(mx - 10, y1 + 10, mx + 10, y1 - 10, RED, 3))
    body.append(text(mx, y1 - 18, ">> no fabric path", 12, RED, anchor="middle", weight="bold"))
    body.append(text(mx, y1 + 30, f"no link joins {src} to {dst}", 11, INK, anchor="middle"))
    y = top + max(group_h, bh + 60) + 30
    if steps:
        y = step_list(body, trace, width, y)
    return document(width, y + PAD, body, label(trace, heading), [arrow_marker("fx-red", RED)])
