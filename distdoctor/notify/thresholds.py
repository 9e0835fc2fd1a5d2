"""Resource thresholds and the memory-limit forecast. Pure: time and samples are parameters.

``--threshold mem=90%,gpu_mem=95%,disk_free=5GiB,step_time=3x`` sets:

* ``mem``: a task's RSS as a share of its limit (its memory cgroup's, else the host's);
* ``gpu_mem``: a task's GPU memory as a share of its device's;
* ``disk_free``: free space on the file systems distdoctor writes to (the bundle, ``--tensorboard``);
* ``step_time``: a task's recent step time as a multiple of the job's baseline step time;
* ``mem_eta``: warn when memory, rising steadily, will reach the limit within this many seconds.

``NAME=off`` turns one off. The defaults stay quiet on a healthy job: 90 %, 95 %,
1 GiB, 5x sustained over 5 steps, 120 s.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, replace
from typing import Sequence

from .events import NotifyUsageError

__all__ = ["Thresholds", "parse_thresholds", "TaskResources", "Crossing", "judge_task", "judge_disk",
           "time_to_limit", "step_baseline", "CrossingWatch", "format_bytes"]

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
          "t": 1000**4, "tb": 1000**4, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
RECENT_STEPS = 5          # step_time compares the median of a task's last 5 step times ...
BASELINE_STEPS = 20       # ... with the job's median over its first 20 (after the first 3: tracing, warm-up)
FORECAST_WINDOW_S = 30.0  # the memory forecast fits the last 30 s of samples
FORECAST_MIN_SPAN_S = 10.0


@dataclass(frozen=True)
class Thresholds:
    mem: float | None = 0.90
    gpu_mem: float | None = 0.95
    disk_free: int | None = 1 << 30
    step_time: float | None = 5.0
    mem_eta: float | None = 120.0


def format_bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def _fraction(name: str, text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", text) or re.fullmatch(r"(0?\.\d+|1(?:\.0*)?)", text)
    if not m:
        raise NotifyUsageError(f"--threshold {name}={text}: expected a percentage such as {name}=90%")
    value = float(m.group(1)) / (100.0 if text.endswith("%") else 1.0)
    if not 0 < value <= 1:
        raise NotifyUsageError(f"--threshold {name}={text}: a percentage must be above 0 and at most 100")
    return value


def _bytes(name: str, text: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise NotifyUsageError(f"--threshold {name}={text}: expected a size such as {name}=5GiB")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def _factor(name: str, text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*x", text)
    if not m or float(m.group(1)) <= 1:
        raise NotifyUsageError(f"--threshold {name}={text}: expected a factor above 1 such as {name}=3x")
    return float(m.group(1))


def _seconds(name: str, text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m)?", text)
    if not m or float(m.group(1)) <= 0:
        raise NotifyUsageError(f"--threshold {name}={text}: expected a duration such as {name}=120s")
    return float(m.group(1)) * (60 if m.group(2) == "m" else 1)


_PARSERS = {"mem": _fraction, "gpu_mem": _fraction, "disk_free": _bytes, "step_time": _factor, "mem_eta": _seconds}


def parse_thresholds(specs: Sequence[str], base: Thresholds | None = None) -> Thresholds:
    """Each spec is ``NAME=VALUE[,NAME=VALUE...]``; later ones win. Raises :class:`NotifyUsageError`."""
    th = base or Thresholds()
    for spec in specs:
        for part in filter(None, (p.strip() for p in spec.split(","))):
            name, eq, value = part.partition("=")
            name, value = name.strip().replace("-", "_"), value.strip()
            if name not in _PARSERS:
                raise NotifyUsageError(f"--threshold {part}: unknown threshold {name!r}; known: {', '.join(_PARSERS)}")
            if not eq or not value:
                raise NotifyUsageError(f"--threshold {part}: expected NAME=VALUE")
            th = replace(th, **{name: None if value.lower() == "off" else _PARSERS[name](name, value)})
    return th


@dataclass(frozen=True)
class TaskResources:
    """One task's figures at one moment, as the thresholds read them."""

    task: str
    ts: float
    rss_bytes: int | None = None
    mem_limit_bytes: int | None = None
    gpu_mem_bytes: int | None = None
    gpu_mem_total_bytes: int | None = None
    recent_step_s: tuple[float, ...] = ()                  # the task's latest step times, oldest first
    memory: tuple[tuple[float, int], ...] = ()             # (ts, rss) history for the forecast


@dataclass(frozen=True)
class Crossing:
    """A threshold crossed now: ``value`` against ``limit`` in the threshold's own unit."""

    kind: str                # mem, gpu_mem, disk_free, step_time, mem_eta
    task: str | None
    at: float
    value: float
    limit: float
    summary: str


def time_to_limit(series: Sequence[tuple[float, int]], limit: int, now: float,
                  window: float = FORECAST_WINDOW_S) -> float | None:
    """Seconds until a steadily rising memory series reaches ``limit`` at its current rate, else None.

    Least squares over the last ``window`` seconds; "steadily" means at least 10 s of samples, a
    positive slope, and of the samples that changed, at least 80 % went up (the sawtooth of a
    healthy job -- batches allocated and freed -- is not a trend).
    """
    pts = [(t, float(v)) for t, v in series if now - window <= t <= now]
    if len(pts) < 5 or pts[-1][0] - pts[0][0] < FORECAST_MIN_SPAN_S or not limit:
        return None
    rises = sum(1 for (_, a), (_, b) in zip(pts, pts[1:]) if b > a)
    falls = sum(1 for (_, a), (_, b) in zip(pts, pts[1:]) if b < a)
    if rises < 4 or falls > 0.2 * (rises + falls):  # unchanged samples (sampled faster than it allocates) don't count
        return None
    mt = statistics.fmean(t for t, _ in pts)
    mv = statistics.fmean(v for _, v in pts)
    den = sum((t - mt) ** 2 for t, _ in pts)
    if den <= 0:
        return None
    slope = sum((t - mt) * (v - mv) for t, v in pts) / den  # bytes per second
    current = pts[-1][1]
    if slope <= 0 or current >= limit:
        return None if slope <= 0 else 0.0
    return (limit - current) / slope


def step_baseline(per_task: Sequence[Sequence[float]]) -> float | None:
    """The job's normal step time: the median of every task's first steps after warm-up (the
    first 3: tracing, the first all-reduce), None until there are enough of them."""
    pooled = [x for steps in per_task for x in list(steps)[3:3 + BASELINE_STEPS]]
    if len(pooled) < BASELINE_STEPS // 2:
        return None
    return statistics.median(pooled)


def judge_task(r: TaskResources, th: Thresholds, baseline_step_s: float | None) -> list[Crossing]:
    out: list[Crossing] = []
    if th.mem is not None and r.rss_bytes is not None and r.mem_limit_bytes:
        share = r.rss_bytes / r.mem_limit_bytes
        if share >= th.mem:
            out.append(Crossing("mem", r.task, r.ts, share, th.mem,
                                f"{r.task} uses {format_bytes(r.rss_bytes)}, {share:.0%} of its "
                                f"{format_bytes(r.mem_limit_bytes)} memory limit (threshold {th.mem:.0%})"))
    if th.gpu_mem is not None and r.gpu_mem_bytes is not None and r.gpu_mem_total_bytes:
        share = r.gpu_mem_bytes / r.gpu_mem_total_bytes
        if share >= th.gpu_mem:
            out.append(Crossing("gpu_mem", r.task, r.ts, share, th.gpu_mem,
                                f"{r.task} uses {format_bytes(r.gpu_mem_bytes)}, {share:.0%} of its GPU's "
                                f"{format_bytes(r.gpu_mem_total_bytes)} (threshold {th.gpu_mem:.0%})"))
    if th.step_time is not None and baseline_step_s and len(r.recent_step_s) >= RECENT_STEPS:
        recent = statistics.median(r.recent_step_s[-RECENT_STEPS:])
        if recent >= th.step_time * baseline_step_s:
            out.append(Crossing("step_time", r.task, r.ts, recent / baseline_step_s, th.step_time,
                                f"{r.task}'s steps take {recent * 1000:.0f} ms, {recent / baseline_step_s:.1f}x the "
                                f"job's usual {baseline_step_s * 1000:.0f} ms (threshold {th.step_time:g}x)"))
    if th.mem_eta is not None and r.mem_limit_bytes and r.memory:
        eta = time_to_limit(r.memory, r.mem_limit_bytes, r.ts)
        if eta is not None and eta <= th.mem_eta:
            out.append(Crossing("mem_eta", r.task, r.ts, eta, th.mem_eta,
                                f"{r.task} reaches its memory limit ({format_bytes(r.mem_limit_bytes)}) in about "
                                f"{eta:.0f} s at the current rate (now {format_bytes(r.memory[-1][1])})"))
    return out


def judge_disk(path: str, free_bytes: int, th: Thresholds, now: float) -> list[Crossing]:
    if th.disk_free is None or free_bytes >= th.disk_free:
        return []
    return [Crossing("disk_free", None, now, float(free_bytes), float(th.disk_free),
                     f"only {format_bytes(free_bytes)} free on the file system of {path} "
                     f"(threshold {format_bytes(th.disk_free)})")]


class CrossingWatch:
    """Which crossings are new and which are over, tick after tick (one alert per episode)."""

    def __init__(self) -> None:
        self.active: dict[tuple[str, str | None], Crossing] = {}  # the crossing that opened each live episode
        self.first: dict[tuple[str, str | None], Crossing] = {}   # the first crossing of each (kind, task)

    def update(self, crossings: Sequence[Crossing]) -> tuple[list[Crossing], list[Crossing]]:
        """Returns (crossings that open an episode, the opening crossings of episodes now over)."""
        now = {(c.kind, c.task): c for c in crossings}
        new = [c for k, c in now.items() if k not in self.active]
        gone = [c for k, c in self.active.items() if k not in now]
        self.active = {k: self.active.get(k, c) for k, c in now.items()}
        for c in new:
            self.first.setdefault((c.kind, c.task), c)
        return new, gone
