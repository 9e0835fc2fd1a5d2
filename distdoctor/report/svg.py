"""Hand-drawn SVG for the HTML report: the timeline and the metric charts.

No charting library: a report must open offline, years later, from a mail
attachment. Everything here turns a :class:`~.data.ReportPage` into SVG
markup strings; the geometry is fixed (one ``viewBox`` width) and the browser
scales it. Every text is escaped here, at the point it enters markup.
"""
from __future__ import annotations

import math
from html import escape
from typing import Callable, Iterable, Sequence

from ..model import format_clock
from .page import JobMarker, Lane, LaneMark, LanePhase, Mark, ReportPage, TaskOutcome
from .series import Series
from .fmt import clean_text, fmt_bytes, fmt_duration, fmt_percent, fmt_step_time

__all__ = ["timeline_svg", "chart_svg", "lane_colors", "mark_glyph", "PHASE_COLORS", "CULPRIT_COLOR"]

W = 1120                 # viewBox width; the page is ~1100 px wide
LABEL_W = 210            # left column: lane labels / chart axes
X0, X1 = LABEL_W + 12, W - 18
LANE_H, GROUP_H = 26, 38
COMPACT_AFTER, COMPACT_H = 40, 20
TOP = 38                 # room for the job markers' labels
AXIS_H = 22
CHART_H = 140
CULPRIT_COLOR = "#dc2626"
_PALETTE = ("#2563eb", "#059669", "#9333ea", "#0891b2", "#ca8a04", "#db2777", "#4f46e5", "#65a30d",
            "#0f766e", "#c2410c")
_OTHER = "#94a3b8"
PHASE_COLORS = {LanePhase.STARTING: "#e2e8f0", LanePhase.CONNECTED: "#bfdbfe", LanePhase.TRAINING: "#86efac",
                LanePhase.STALLED: "#fca5a5", LanePhase.WAITING: "#fde68a", LanePhase.FROZEN: "#c4b5fd"}
_OUTCOME_COLORS = {TaskOutcome.OK: "#15803d", TaskOutcome.FAILED: "#b91c1c", TaskOutcome.STOPPED: "#475569",
                   TaskOutcome.RUNNING: "#1d4ed8", TaskOutcome.UNKNOWN: "#64748b"}


def _a(text: object) -> str:
    """An attribute value, escaped."""
    return escape(clean_text(text), quote=True)


def _t(text: object) -> str:
    return escape(clean_text(text), quote=False)


def lane_colors(lanes: Sequence[Lane]) -> dict[str, str]:
    """One colour per lane, the same in every chart; the culprit is always red, nobody else is."""
    out, i = {}, 0
    for lane in lanes:
        if lane.culprit:
            out[lane.key] = CULPRIT_COLOR
        else:
            out[lane.key] = _PALETTE[i] if i < len(_PALETTE) else _OTHER
            i += 1
    return out


class _TimeScale:
    def __init__(self, t0: float, t1: float) -> None:
        self.t0, self.t1 = t0, max(t1, t0 + 1e-6)

    def x(self, t: float) -> float:
        return X0 + (X1 - X0) * (t - self.t0) / (self.t1 - self.t0)


_TICK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def time_ticks(t0: float, t1: float, most: int = 9) -> list[float]:
    span = max(t1 - t0, 1e-6)
    step = next((s for s in _TICK_STEPS if span / s <= most), _TICK_STEPS[-1])
    first = math.ceil(t0 / step) * step
    return [first + i * step for i in range(int((t1 - first) / step) + 1)]


def _axis(scale: _TimeScale, y_top: float, y_axis: float) -> str:
    parts = [f'<line class="axis" x1="{X0}" x2="{X1}" y1="{y_axis:.1f}" y2="{y_axis:.1f}"/>']
    for t in time_ticks(scale.t0, scale.t1):
        x = scale.x(t)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{y_top:.1f}" y2="{y_axis:.1f}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{y_axis + 14:.1f}" text-anchor="middle">'
                     f'{format_clock(t)[:8]}</text>')
    return "".join(parts)


def _markers(markers: Iterable[JobMarker], scale: _TimeScale, y_top: float, y_bottom: float, labels: bool) -> str:
    parts = []
    rows: list[list[tuple[float, float]]] = [[], []]   # label extents placed in each of two rows
    for m in markers:
        x = scale.x(m.ts)
        cls = {Mark.HANG: "jm-hang", Mark.STALL: "jm-stall", Mark.START: "jm-attempt"}.get(m.kind, "jm-cause")
        tip = f"{m.label}\n{format_clock(m.ts)}"
        parts.append(f'<line class="jm {cls}" x1="{x:.1f}" x2="{x:.1f}" y1="{y_top:.1f}" y2="{y_bottom:.1f}" '
                     f'data-tip="{_a(tip)}"/>')
        if labels:
            width = 6.6 * len(m.label) + 8          # about 6.6 px a character at 11.5 px
            anchor = "end" if x + width > X1 + 10 else "start"
            extent = (x - width, x) if anchor == "end" else (x, x + width)
            row = next((i for i, r in enumerate(rows) if all(extent[1] < a or extent[0] > b for a, b in r)), None)
            if row is None:   # both rows taken here: flip to the other side of the line, second row
                row, anchor = 1, "start" if anchor == "end" else "end"
                extent = (x - width, x) if anchor == "end" else (x, x + width)
            rows[row].append(extent)
            dx = -4 if anchor == "end" else 4
            parts.append(f'<text class="jm-label {cls}" x="{x + dx:.1f}" y="{12 + 13 * row}" '
                         f'text-anchor="{anchor}">{_t(m.label)}</text>')
    return "".join(parts)


def mark_glyph(kind: Mark, x: float, y: float, outcome: TaskOutcome | None = None) -> str:
    """The shape of one mark, centred on (x, y); its class sets the colour."""
    if kind == Mark.START:
        return f'<path d="M{x:.1f} {y - 7:.1f}v14" class="g-start"/>'
    if kind == Mark.CONNECTED:
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" class="g-connected"/>'
    if kind == Mark.FIRST_STEP:
        return f'<path d="M{x - 4:.1f} {y - 5.5:.1f}l9 5.5l-9 5.5z" class="g-first"/>'
    if kind == Mark.EPOCH:
        return f'<path d="M{x:.1f} {y - 5:.1f}v10" class="g-epoch"/>'
    if kind in (Mark.STALL, Mark.HANG):
        cls = "g-stall" if kind == Mark.STALL else "g-hang"
        return f'<path d="M{x:.1f} {y - 7:.1f}l7 7l-7 7l-7-7z" class="{cls}"/>'
    if kind == Mark.FAULT:
        return (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6.5" class="g-fault"/>'
                f'<path d="M{x - 3:.1f} {y - 3:.1f}l6 6m0-6l-6 6" class="g-fault-x"/>')
    if kind == Mark.SYMPTOM:
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" class="g-symptom"/>'
    if kind == Mark.WARNING:
        return f'<path d="M{x:.1f} {y - 6:.1f}l6 11h-12z" class="g-warning"/>'
    if kind == Mark.SIGNAL:
        return f'<path d="M{x - 4:.1f} {y - 6:.1f}h8l-4 7z" class="g-signal"/>'
    if kind == Mark.EXIT:
        cls = {TaskOutcome.OK: "g-exit-ok", TaskOutcome.FAILED: "g-exit-failed"}.get(outcome, "g-exit")
        return f'<rect x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" class="{cls}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" class="g-other"/>'


def _mark_tip(m: LaneMark, lane: Lane) -> str:
    which = f"attempt {m.attempt}: " if m.attempt is not None else ""
    lines = [f"{which}{m.label}{f' ×{m.count}' if m.count > 1 else ''} — {lane.key} at {format_clock(m.ts)}"]
    if m.first is not None and m.last is not None and lane.group:
        lines.append(f"across the {len(lane.members)} tasks: {format_clock(m.first)} – {format_clock(m.last)}")
    if m.detail:
        lines.append(m.detail)
    if m.line:
        lines.append("log: " + m.line)
    return "\n".join(lines)


def _lane(lane: Lane, y: float, h: float, scale: _TimeScale, stripe: bool) -> str:
    cy = y + h / 2
    members = " ".join(lane.members)
    attrs = (f'class="lane{" culprit" if lane.culprit else ""}{" group" if lane.group else ""}" '
             f'data-task="{_a(lane.key)}" data-label="{_a(lane.label)}" data-outcome="{lane.outcome.value}" '
             f'data-count="{len(lane.members)}" data-members="{_a(members)}"')
    out = [f'<g {attrs}>']
    bg = "lane-bg culprit-bg" if lane.culprit else ("lane-bg alt" if stripe else "lane-bg")
    out.append(f'<rect class="{bg}" x="0" y="{y:.1f}" width="{W}" height="{h:.1f}"/>')
    key = lane.key if len(lane.key) <= 22 else lane.key[:21] + "…"
    ty = cy + 4 if not lane.group else cy - 2
    out.append(f'<text class="lane-label" x="10" y="{ty:.1f}" data-open="{_a(task_anchor(lane.key))}" '
               f'data-tip="{_a(lane.label)}">{_t(key)}</text>')
    if lane.group:
        out.append(f'<text class="lane-sub" x="10" y="{cy + 11:.1f}">{len(lane.members)} tasks, identical</text>')
    elif lane.culprit:
        out.append(f'<text class="lane-sub culprit-tag" x="{18 + 7.9 * len(key):.1f}" y="{cy + 3.5:.1f}">culprit</text>')
    ending = _short_ending(lane)
    out.append(f'<text class="lane-end" x="{LABEL_W - 4}" y="{cy + 4:.1f}" text-anchor="end" '
               f'fill="{_OUTCOME_COLORS[lane.outcome]}">{_t(ending)}</text>')
    for s in lane.spans:
        x0, x1 = scale.x(s.start), scale.x(s.end)
        tip = f"{s.phase.value} — {format_clock(s.start)} → {format_clock(s.end)} ({fmt_duration(s.end - s.start)})"
        fill = "url(#hatch)" if s.phase == LanePhase.STALLED else PHASE_COLORS[s.phase]
        out.append(f'<rect class="span sp-{s.phase.value}" x="{x0:.1f}" y="{cy - 6:.1f}" width="{max(1.0, x1 - x0):.1f}" '
                   f'height="12" rx="2" fill="{fill}" data-tip="{_a(tip)}"/>')
    for m in lane.marks:
        x = scale.x(m.ts)
        if m.first is not None and m.last is not None and m.last - m.first > 0:
            out.append(f'<path class="spread" d="M{scale.x(m.first):.1f} {cy + 9:.1f}H{scale.x(m.last):.1f}"/>')
        attempt = f' data-attempt="{m.attempt}"' if m.attempt is not None else ""
        out.append(f'<g class="mark mk-{m.kind.value}" data-kind="{m.kind.value}"{attempt} data-tip="{_a(_mark_tip(m, lane))}">'
                   f'{mark_glyph(m.kind, x, cy, m.outcome or lane.outcome)}</g>')
    out.append("</g>")
    return "".join(out)


def _short_ending(lane: Lane) -> str:
    f = lane.facts
    if f.outcome == TaskOutcome.STOPPED:
        return "stopped"
    if f.signal:
        return f.signal
    if f.exit_code is not None:
        return f"exit {f.exit_code}"
    return f.state


def task_anchor(key: str) -> str:
    return "task-" + "".join(c if c.isalnum() else "-" for c in key)


def timeline_svg(page: ReportPage) -> str:
    scale = _TimeScale(page.t0, page.t1)
    # Many distinct lanes (no identical groups) get thinner: the whole job should fit a few screens.
    lane_h = LANE_H if len(page.lanes) <= COMPACT_AFTER else COMPACT_H
    heights = [GROUP_H if lane.group else lane_h for lane in page.lanes]
    total = TOP + sum(heights) + AXIS_H + 4
    out = [f'<svg class="timeline" viewBox="0 0 {W} {total}" width="100%" role="img" '
           f'aria-label="timeline, one lane per task" data-t0="{page.t0:.3f}" data-t1="{page.t1:.3f}">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
           f'<rect width="6" height="6" fill="{PHASE_COLORS[LanePhase.STALLED]}"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#ef4444" stroke-width="2.5"/></pattern></defs>']
    y_axis = TOP + sum(heights)
    out.append(_axis(scale, TOP, y_axis))
    y = TOP
    for i, (lane, h) in enumerate(zip(page.lanes, heights)):
        out.append(_lane(lane, y, h, scale, stripe=i % 2 == 1))
        y += h
    out.append(_markers(page.markers, scale, TOP - 6, y_axis, labels=True))
    out.append("</svg>")
    return "".join(out)


# -- charts ---------------------------------------------------------------

class _ValueScale:
    def __init__(self, lo: float, hi: float, log: bool, y0: float, y1: float) -> None:
        self.log = log
        if log:
            lo, hi = math.log10(lo), math.log10(hi)
        if hi <= lo:
            hi = lo + 1.0
        self.lo, self.hi, self.y0, self.y1 = lo, hi, y0, y1

    def y(self, v: float) -> float:
        if self.log:
            v = math.log10(max(v, 10 ** self.lo))
        return self.y1 - (self.y1 - self.y0) * (v - self.lo) / (self.hi - self.lo)

    def ticks(self, unit: float = 1.0) -> list[float]:
        """Round values inside the scale; ``unit`` makes them round in that unit (MiB, GiB)."""
        if self.log:
            out = []
            for e in range(math.floor(self.lo), math.ceil(self.hi) + 1):
                for m in (1, 2, 5) if self.hi - self.lo < 3 else (1,):
                    v = m * 10.0 ** e
                    if self.lo - 1e-9 <= math.log10(v) <= self.hi + 1e-9:
                        out.append(v)
            return out
        lo, hi = self.lo / unit, self.hi / unit
        raw = (hi - lo) / 4
        mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        first = math.ceil(lo / step) * step
        return [(first + i * step) * unit for i in range(int((hi - first) / step + 1e-9) + 1)]


def _series_path(points: Sequence[tuple[float, float]], scale: _TimeScale, vs: _ValueScale, gap: float) -> str:
    d, prev_t = [], None
    for t, v in points:
        cmd = "M" if prev_t is None or t - prev_t > gap else "L"
        d.append(f"{cmd}{scale.x(t):.1f} {vs.y(v):.1f}")
        prev_t = t
    return "".join(d)


def _band_path(s: Series, scale: _TimeScale, vs: _ValueScale) -> str:
    ts = [t for t, _ in s.points]
    fwd = [f"{scale.x(t):.1f} {vs.y(v):.1f}" for t, v in zip(ts, s.high)]
    back = [f"{scale.x(t):.1f} {vs.y(v):.1f}" for t, v in zip(reversed(ts), reversed(s.low))]
    return "M" + "L".join(fwd + back) + "Z"


_METRICS: dict[str, tuple[str, Callable[[float], str]]] = {
    "step_time": ("Time per step", fmt_step_time),
    "rss": ("Memory (RSS)", fmt_bytes),
    "cpu": ("CPU (% of a core)", fmt_percent),
}


_EMPTY = {"step_time": "no completed steps recorded", "rss": "no memory samples recorded",
          "cpu": "no CPU samples recorded"}


def chart_svg(page: ReportPage, metric: str, colors: dict[str, str]) -> str:
    """One metric for every lane on the timeline's time axis; the culprit drawn last, on top."""
    title, fmt = _METRICS[metric]
    series = [(lane, getattr(lane.metrics, metric)) for lane in page.lanes]
    series = [(lane, s) for lane, s in series if not s.empty]
    top, bottom = 12, 12 + CHART_H
    total = bottom + AXIS_H + 4
    head = (f'<svg class="chart" data-metric="{metric}" viewBox="0 0 {W} {total}" width="100%" role="img" '
            f'aria-label="{_a(title)}">')
    label = f'<text class="chart-title" x="10" y="{top + 12}">{_t(title)}</text>'
    if not series:
        return (head + label + f'<text class="empty" x="{(X0 + X1) / 2:.0f}" y="{(top + bottom) / 2:.0f}" '
                f'text-anchor="middle">{_t(_EMPTY[metric])}</text></svg>')
    vals = [v for _, s in series for v in (s.high or tuple(v for _, v in s.points))]
    lows = [v for _, s in series for v in (s.low or tuple(v for _, v in s.points))]
    hi = max(vals)
    lo = 0.0
    log = False
    if metric == "step_time":
        pos = [v for v in lows if v > 0]
        lo_pos = min(pos) if pos else hi / 10
        if hi / max(lo_pos, 1e-9) > 30:   # a stall dwarfs normal steps: log scale keeps both readable
            log, lo = True, 10 ** math.floor(math.log10(lo_pos))
            hi = 10 ** math.ceil(math.log10(hi))
    if metric == "cpu":
        hi = max(hi, 100.0)
    if not log:
        hi = hi * 1.08 or 1.0
    vs = _ValueScale(lo, hi, log, top, bottom)
    scale = _TimeScale(page.t0, page.t1)
    out = [head, label]
    if log:
        out.append(f'<text class="chart-sub" x="10" y="{top + 27}">log scale</text>')
    out.append(f'<line class="axis" x1="{X0}" x2="{X0}" y1="{top}" y2="{bottom}"/>')
    unit = 1.0
    if metric == "rss":
        unit = float(1 << 30) if hi >= (1 << 30) else float(1 << 20)
    for v in vs.ticks(unit):
        y = vs.y(v)
        out.append(f'<line class="grid" x1="{X0}" x2="{X1}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text class="tick" x="{X0 - 6}" y="{y + 4:.1f}" text-anchor="end">{_t(fmt(v))}</text>')
    out.append(_axis(scale, top, bottom))
    out.append(_markers(page.markers, scale, top, bottom, labels=False))
    gap = max(3.0, (page.t1 - page.t0) / 40)   # longer silences break the line instead of bridging them
    ordered = sorted(series, key=lambda ls: ls[0].culprit)
    for lane, s in ordered:
        color = colors.get(lane.key, _OTHER)
        if s.high:
            out.append(f'<path class="band" d="{_band_path(s, scale, vs)}" fill="{color}"/>')
    for lane, s in ordered:
        color = colors.get(lane.key, _OTHER)
        values = [v for _, v in s.points]
        med = sorted(values)[len(values) // 2]
        tip = f"{lane.label}\n{title}: median {fmt(med)}, peak {fmt(s.peak() or med)}"
        cls = "line culprit-line" if lane.culprit else "line"
        out.append(f'<path class="{cls}" data-task="{_a(lane.key)}" d="{_series_path(s.points, scale, vs, gap)}" '
                   f'stroke="{color}" data-tip="{_a(tip)}"/>')
    out.append("</svg>")
    return "".join(out)
