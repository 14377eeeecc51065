"""Swimlane pictures of replayed traces, as standalone SVG.

Takes a ``diagnostics.model.Trace``; produces SVG text (``trace_to_svg``) with one lane per device
and stream (two streams of one device run concurrently, BRIEF section 2, so they get two lanes), a
time axis, each edge's interval ``[s, f)`` as a bar (bars of one lane that overlap in time get
rows of their own, so overlapping intervals are drawn overlapping), every event as a numbered
badge on its edge's bar, handoffs as arrows to the new owner's lane, and the violating step (the
text trace's ``>>``) in red with a line across every lane. Hovering a bar or badge shows its
edge, times and byte ranges (``<title>``). Under the lanes, the steps are listed as in the text
trace, so the picture reads on its own. The axis has one column per distinct event time, in
order, labelled in ns: columns keep every before, after and overlap of the schedule, without
stretching a trace whose times run from 0 to thousands.

A cycle (FX-ORD-001) and a missing fabric path (FX-HOOK-001) are not schedules; they are drawn by
``render.figures``. Any other schedule-independent trace becomes a board: one lane per device,
each fact as a card. Renderers only format; output is deterministic. Emits no diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Trace, TraceEvent
from fxverify.render import figures
from fxverify.render.figures import PAD as _PAD, header, label, owners, step_list
from fxverify.render.svgtext import (FILLS, GRID, INK, MONO, MUTED, RED, STROKES, arrow_marker, document, line, lines,
                                     rect, text, text_width, title, wrap)

#: Geometry, in px.
_ROW = 30          # one row of bars
_BAR = 22          # bar height
_BADGE = 9         # badge radius
_MIN_COL = 140     # narrowest time column
_MIN_WIDTH = 640


Lane = tuple[str, str | None]


def lane_label(lane: Lane) -> tuple[str, str]:
    """The two lines naming a lane: the device, and its stream (``no stream``: edges of the device
    that are not on a stream, which may overlap one another)."""
    dev, stream = lane
    return dev, (f"stream {stream}" if stream is not None else "no stream")


def lanes_of(trace: Trace) -> list[Lane]:
    """The lanes of a trace: ``(device, stream)`` of every event, devices in order of first
    appearance and each device's streams together, then the devices that only receive a handoff."""
    devices: list[str] = []
    by_device: dict[str, list[str | None]] = {}
    for ev in trace.events:
        if ev.device not in by_device:
            devices.append(ev.device)
            by_device[ev.device] = []
        if ev.stream not in by_device[ev.device]:
            by_device[ev.device].append(ev.stream)
    for ev in trace.events:
        for dev in (ev.owner_before, ev.owner_after):
            if dev and "," not in dev and dev not in by_device:
                devices.append(dev)
                by_device[dev] = [None]
    return [(d, s) for d in devices for s in by_device[d]]


@dataclass
class _Bar:
    """One edge's interval on its lane, with its events."""

    edge: str
    lane: Lane
    start: int
    end: int
    events: list[TraceEvent] = field(default_factory=list)
    row: int = 0

    @property
    def violating(self) -> bool:
        return any(ev.violation for ev in self.events)


def _bars(trace: Trace) -> list[_Bar]:
    """Bars in order of first event; rows assigned per lane so that overlapping bars never share
    one (greedy by start time; intervals are half-open, so a bar may start where another ends)."""
    bars: dict[tuple[str, Lane], _Bar] = {}
    for ev in trace.events:
        assert ev.time is not None  # INVARIANT: a schedule trace times every event
        key = (ev.edge, (ev.device, ev.stream))
        b = bars.get(key)
        if b is None:
            b = bars[key] = _Bar(ev.edge, key[1], ev.time, ev.time)
        b.start, b.end = min(b.start, ev.time), max(b.end, ev.time)
        b.events.append(ev)
    rows_end: dict[Lane, list[int]] = {}
    for b in sorted(bars.values(), key=lambda b: (b.start, b.end, b.events[0].step)):
        ends = rows_end.setdefault(b.lane, [])
        free = next((i for i, e in enumerate(ends) if e <= b.start), None)
        if free is None:
            ends.append(b.end)
            b.row = len(ends) - 1
        else:
            ends[free] = max(b.end, b.start + 1)
            b.row = free
    return list(bars.values())


def trace_to_svg(trace: Trace, heading: str = "", steps: bool = True, caption: bool = True) -> str:
    """The picture of ``trace`` as a standalone SVG document.

    ``heading`` is a first line (the finding's message); ``steps`` lists every step under the
    picture (leave it out when the page shows the steps as a table); ``caption`` draws the code,
    heading, rule and witness above it (leave it out when the page shows them). Schedules become swimlanes,
    a cycle or a missing path their own figure (``render.figures``), other facts a board.
    """
    if trace.code is codes.ORD_001 and trace.events and all(ev.kind == "fact" for ev in trace.events):
        return figures.cycle_svg(trace, heading, steps, caption)
    facts = dict(trace.facts)
    if trace.code is codes.HOOK_001 and {"from", "to"} <= facts.keys():
        return figures.missing_path_svg(trace, heading, steps, caption)
    if not trace.events or any(ev.time is None for ev in trace.events):
        return _board(trace, heading, steps, caption)
    return _swimlanes(trace, heading, steps, caption)


def _swimlanes(trace: Trace, heading: str, steps: bool, caption: bool) -> str:
    lanes = lanes_of(trace)
    bars = _bars(trace)
    times = sorted({ev.time for ev in trace.events if ev.time is not None})
    label_w = max([text_width(t, 13) for ln in lanes for t in lane_label(ln)] + [90]) + 2 * _PAD
    # A column is wide enough for the longest edge name plus the badges at both ends of its bar.
    need = max([(text_width(b.edge, 12) + 2 * _badges_at_end(b) * (2 * _BADGE + 4) + 24) // max(1, _span(b, times))
                for b in bars] + [_MIN_COL])
    col = min(need, 320)
    x0 = label_w + _PAD
    width = max(_MIN_WIDTH, x0 + (len(times) - 1) * col + 2 * _PAD + 60)
    xs = {t: x0 + i * col for i, t in enumerate(times)}

    body: list[str] = []
    y = header(body, trace, heading, width) if caption else _PAD + 8
    axis_y = y + 18
    body.append(text(_PAD, axis_y, "time (ns)", 12, MUTED, weight="bold"))
    for t in times:
        body.append(text(xs[t], axis_y, f"t={t}", 12, MUTED, anchor="middle"))
    top = axis_y + 10
    rows = {ln: 1 + max([b.row for b in bars if b.lane == ln], default=0) for ln in lanes}
    lane_y: dict[Lane, int] = {}
    yy = top
    for i, ln in enumerate(lanes):
        h = rows[ln] * _ROW + 16
        lane_y[ln] = yy
        body.append(rect(0, yy, width, h, "#f6f8fa" if i % 2 == 0 else "#ffffff"))
        dev, sub = lane_label(ln)
        body.append(text(_PAD, yy + h // 2 - 2, dev, 13, INK, weight="bold"))
        body.append(text(_PAD, yy + h // 2 + 14, sub, 12, MUTED))
        yy += h
    bottom = yy
    body.append(line(label_w, top, label_w, bottom, GRID))
    for t in times:
        body.append(line(xs[t], top, xs[t], bottom, GRID, stroke_dasharray="2 4"))
    for ev in trace.events:
        if ev.violation and ev.time is not None:  # behind the bars: it must not hide a badge
            x = xs[ev.time]
            body.append(line(x, top - 2, x, bottom, RED, 2, stroke_dasharray="6 4"))
            body.append(text(x, top - 22, f">> step {ev.step}: the rule breaks", 12, RED, anchor="middle", weight="bold"))
    color = {ln: i % len(FILLS) for i, ln in enumerate(dict.fromkeys(d for d, _ in lanes))}
    marks: list[str] = []
    for b in bars:
        c = color[b.lane[0]]
        by = lane_y[b.lane] + 8 + b.row * _ROW + (_ROW - _BAR) // 2
        x1, x2 = xs[b.start], max(xs[b.end], xs[b.start] + 2 * _BADGE + 8)
        tip = _bar_tip(b)
        # The bar spans exactly [x(s), x(f)): bars of one stream that follow each other meet at a tick.
        body.append(rect(x1 + 1, by, x2 - x1 - 2, _BAR, FILLS[c], RED if b.violating else STROKES[c],
                         rx=5, tip=tip, stroke_width=2 if b.violating else 1))
        body.append(text((x1 + x2) // 2, by + _BAR // 2 + 4, b.edge, 12, INK, anchor="middle", weight="bold")
                    [:-7] + title(tip) + "</text>")
        marks += _badges(b, xs, by + _BAR // 2, STROKES[c], lane_y, rows)
    body += marks
    y = bottom + 22
    body.append(text(_PAD, y, "bar: an edge's interval [start, end) in the schedule; badge: a step; hover for bytes",
                     11, MUTED))
    for el in trace.elided:  # HB predecessors the schedule times but the picture leaves out
        y += 16
        body.append(text(_PAD, y, f"before step {el.before}: {el.summary()}", 11, MUTED))
    y += 10
    if steps:
        y = step_list(body, trace, width, y + 14)
    return document(width, y + _PAD, body, label(trace, heading), [arrow_marker("fx-arrow", INK)])


def _span(b: _Bar, times: list[int]) -> int:
    return times.index(b.end) - times.index(b.start)


def _badges_at_end(b: _Bar) -> int:
    at_start = sum(ev.time == b.start for ev in b.events)
    return max(at_start, len(b.events) - at_start)


def _badge_x(ev: TraceEvent, b: _Bar, xs: dict[int, int]) -> int:
    """Badges at a bar's start go right from its left end, those at its end left from its right end."""
    same = [e for e in b.events if e.time == ev.time]
    k = same.index(ev)
    step = 2 * _BADGE + 4
    if ev.time == b.start and b.start != b.end:
        return xs[b.start] + _BADGE + 3 + k * step
    return max(xs[b.end], xs[b.start] + 2 * _BADGE + 8) - _BADGE - 3 - (len(same) - 1 - k) * step


def _badges(b: _Bar, xs: dict[int, int], cy: int, stroke: str, lane_y: dict[Lane, int], rows: dict[Lane, int]) -> list[str]:
    out = []
    for ev in b.events:
        x = _badge_x(ev, b, xs)
        tip = f"step {ev.step}, t={ev.time} ns: {ev.edge} {ev.kind}: {ev.detail}" + owners(ev)
        if ev.kind == "handoff" and ev.owner_after and ev.owner_after != ev.owner_before:
            target = next((ln for ln in lane_y if ln[0] == ev.owner_after), None)
            if target is not None and target != b.lane:
                ty = lane_y[target] + 8 + rows[target] * _ROW // 2
                y1, y2 = (cy + _BADGE, ty - 4) if ty > cy else (cy - _BADGE, ty + 4)
                out.append(line(x, y1, x, y2, INK, 1, marker_end="url(#fx-arrow)"))
                out.append(text(x + 6, (y1 + y2) // 2 + 4, f"hands to {ev.owner_after}", 11, INK))
        fill, ink = (RED, "#ffffff") if ev.violation else ("#ffffff", INK)
        ring = f'<circle cx="{x}" cy="{cy}" r="{_BADGE + 4}" fill="none" stroke="{RED}" stroke-width="2"/>' if ev.violation else ""
        out.append(f'<g class="step" data-step="{ev.step}">{title(tip)}{ring}<circle cx="{x}" cy="{cy}" r="{_BADGE}" fill="{fill}" stroke="{RED if ev.violation else stroke}" '
                   f'stroke-width="1.5"/>{text(x, cy + 4, str(ev.step), 10, ink, anchor="middle", weight="bold")}</g>')
    return out


def _bar_tip(b: _Bar) -> str:
    dev, sub = lane_label(b.lane)
    head = f"{b.edge} on {dev}, {sub}: [{b.start}, {b.end}) ns"
    details = [f"step {ev.step} {ev.kind}: {ev.detail}" for ev in b.events if ev.kind not in ("end",)]
    return "\n".join([head] + details)


def _board(trace: Trace, heading: str, steps: bool, caption: bool) -> str:
    """Schedule-independent facts: one lane per device, each fact a card in step order."""
    devices = list(dict.fromkeys(ev.device for ev in trace.events))
    card_w, gap = 300, 16
    label_w = max([text_width(d, 13) for d in devices] + [90]) + 2 * _PAD
    most = max(sum(ev.device == d for ev in trace.events) for d in devices)
    width = max(_MIN_WIDTH, label_w + most * (card_w + gap) + _PAD)
    body: list[str] = []
    y = header(body, trace, heading, width) if caption else _PAD + 8
    body.append(text(_PAD, y, "facts that hold in every schedule, in step order (no time axis)", 12, MUTED, weight="bold"))
    y += 12
    cards = {ev.step: wrap(ev.detail, card_w - 20, 11) for ev in trace.events}
    for i, dev in enumerate(devices):
        mine = [ev for ev in trace.events if ev.device == dev]
        h = max(len(cards[ev.step]) for ev in mine) * 15 + 44
        body.append(rect(0, y, width, h + 16, "#f6f8fa" if i % 2 == 0 else "#ffffff"))
        body.append(text(_PAD, y + (h + 16) // 2 + 4, dev, 13, INK, weight="bold"))
        for j, ev in enumerate(mine):
            x = label_w + j * (card_w + gap)
            stroke = RED if ev.violation else STROKES[i % len(STROKES)]
            tip = f"step {ev.step}: {ev.edge} {ev.kind}: {ev.detail}"
            body.append(rect(x, y + 8, card_w, h, FILLS[i % len(FILLS)], stroke, rx=6, tip=tip,
                             stroke_width=3 if ev.violation else 1))
            mark = ">> " if ev.violation else ""
            body.append(text(x + 10, y + 27, f"{mark}{ev.step}. {ev.edge} ({ev.kind})", 12, RED if ev.violation else INK,
                             weight="bold"))
            body.append(lines(x + 10, y + 46, cards[ev.step], 11, INK, gap=4, family=MONO))
        y += h + 16
    y += 8
    if steps:
        y = step_list(body, trace, width, y + 14)
    return document(width, y + _PAD, body, label(trace, heading))
