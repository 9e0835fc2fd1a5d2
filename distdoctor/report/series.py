"""Time series for the report's charts: seconds per step, CPU%, downsampling, group aggregates.

Pure functions over (time, value) points; no clock, no I/O.
"""
from __future__ import annotations

import statistics
from typing import Iterable, Sequence

from dataclasses import dataclass

from .bundle import Sample

__all__ = ["Series", "step_times", "cpu_percent", "downsample", "aggregate", "MAX_POINTS"]

MAX_POINTS = 160       # points per series: a chart is ~1000 px wide, more points only cost DOM


@dataclass(frozen=True)
class Series:
    """(t, value) points; a group's series is the median with a ``low``..``high`` band (same t's)."""

    points: tuple[tuple[float, float], ...] = ()
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.points

    def peak(self) -> float | None:
        vals = self.high or tuple(v for _, v in self.points)
        return max(vals) if vals else None



def step_times(points: Iterable[tuple[float, int]], ends_at: float | None = None,
               open_end: bool = True) -> list[tuple[float, float]]:
    """Seconds per step from (time, cumulative steps) samples.

    A step's time is the time between two changes of the count divided by the
    steps done; the first change is skipped (it includes start-up and tracing).
    A slow step in the middle shows when it completes. A step that never
    completes (``open_end``: the task did not finish normally) shows as a
    line climbing with the time the step in flight has taken so far, once
    that exceeds the last step's time, so a final stall is not a gap.
    """
    out: list[tuple[float, float]] = []
    trailing: list[tuple[float, float]] = []
    last_c: int | None = None
    last_t = 0.0
    last_dt: float | None = None
    changed = False
    for t, c in points:
        if ends_at is not None and t > ends_at:
            break
        if last_c is None or c < last_c:      # first sample, or a restart
            last_c, last_t, last_dt, changed = c, t, None, False
            trailing = []
            continue
        if c > last_c:
            if changed and t > last_t:
                last_dt = (t - last_t) / (c - last_c)
                out.append((t, last_dt))
            changed = True
            last_c, last_t = c, t
            trailing = []
        elif changed and (last_dt is None or t - last_t > last_dt):
            trailing.append((t, t - last_t))   # with no completed step to compare, any wait counts
    return out + trailing if open_end else out


def cpu_percent(samples: list[Sample]) -> list[tuple[float, float]]:
    out = []
    prev = None
    for s in samples:
        if s.cpu is None:
            continue
        if prev is not None and s.ts > prev.ts and s.cpu >= prev.cpu:
            out.append((s.ts, 100.0 * (s.cpu - prev.cpu) / (s.ts - prev.ts)))
        prev = s
    return out


def downsample(points: list[tuple[float, float]], n: int = MAX_POINTS) -> tuple[tuple[float, float], ...]:
    """At most ``n`` points, keeping each bucket's maximum: peaks (OOM growth, stalls) must survive."""
    if len(points) <= n:
        return tuple(points)
    t0, t1 = points[0][0], points[-1][0]
    width = (t1 - t0) / n or 1.0
    buckets: dict[int, tuple[float, float]] = {}
    for t, v in points:
        b = min(n - 1, int((t - t0) / width))
        if b not in buckets or v > buckets[b][1]:
            buckets[b] = (t, v)
    return tuple(buckets[b] for b in sorted(buckets))


def aggregate(series: Sequence[Series], t0: float, t1: float, bins: int = 120) -> Series:
    """Median and min..max band of several members' series, on a common grid."""
    width = (t1 - t0) / bins or 1.0
    cells: dict[int, list[float]] = {}
    for s in series:
        mine: dict[int, float] = {}
        for t, v in s.points:
            b = min(bins - 1, max(0, int((t - t0) / width)))
            mine[b] = max(v, mine.get(b, v))
        for b, v in mine.items():
            cells.setdefault(b, []).append(v)
    if not cells:
        return Series()
    order = sorted(cells)
    return Series(points=tuple((t0 + (b + 0.5) * width, statistics.median(cells[b])) for b in order),
                  low=tuple(min(cells[b]) for b in order), high=tuple(max(cells[b]) for b in order))
