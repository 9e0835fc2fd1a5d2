"""Number and text formatting shared by the renderers (HTML, terminal, live view)."""
from __future__ import annotations

from typing import Iterable

from ..model import Evidence, format_clock
from ..safety import safe_text

__all__ = ["fmt_bytes", "fmt_duration", "fmt_step_time", "fmt_rate", "fmt_percent", "clean_text", "evidence_clock",
           "task_sort_key", "compress_tasks"]


def clean_text(text: object, limit: int = 4000) -> str:
    """Text safe to show (:func:`..safety.safe_text`: no escape sequences or controls but newline and tab, bidi and
    zero-width characters shown escaped), bounded length."""
    s = safe_text(str(text))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "–"
    n = float(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            v = n / size
            return f"{v:.1f} {unit}".replace(".0 ", " ") if v < 100 else f"{v:.0f} {unit}"
    return f"{n:.0f} B"


def fmt_duration(s: float | None) -> str:
    """A duration for people: 0.42 s, 12 s, 3 min 05 s, 1 h 02 min."""
    if s is None:
        return "–"
    if s < 10:
        return f"{s:.2g} s" if s < 1 else f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        m, sec = divmod(int(round(s)), 60)
        return f"{m} min {sec:02d} s"
    h, m = divmod(int(round(s)) // 60, 60)
    return f"{h} h {m:02d} min"


def fmt_step_time(s: float | None) -> str:
    if s is None:
        return "–"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    return f"{s:.3g} s"


def fmt_rate(steps_per_s: float | None) -> str:
    if steps_per_s is None:
        return "–"
    if steps_per_s >= 100:
        return f"{steps_per_s:.0f}/s"
    return f"{steps_per_s:.3g}/s"


def fmt_percent(p: float | None) -> str:
    return "–" if p is None else f"{p:.0f}%"


def evidence_clock(e: Evidence) -> str:
    """When an evidence line was written (time of day), else where it was read from; "" when neither is known."""
    return format_clock(e.ts) if e.ts is not None else (e.where or "")


_JOB_ORDER = {"chief": 0, "master": 0, "worker": 1, "ps": 2, "evaluator": 3}


def task_sort_key(task: str) -> tuple:
    job, _, idx = task.partition(":")
    return (_JOB_ORDER.get(job, 9), job, int(idx) if idx.isdigit() else 0, idx)


def compress_tasks(tasks: Iterable[str]) -> str:
    """``worker:3..63`` as ``worker:3-63``; gaps as ``worker:3-5,7,9-63``; several jobs joined by ``; ``."""
    by_job: dict[str, list] = {}
    for t in sorted(tasks, key=task_sort_key):
        job, _, idx = t.partition(":")
        by_job.setdefault(job, []).append(int(idx) if idx.isdigit() else idx)
    parts = []
    for job, idxs in by_job.items():
        nums = [i for i in idxs if isinstance(i, int)]
        runs: list[str] = []
        i = 0
        while i < len(nums):
            j = i
            while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
                j += 1
            runs.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
            i = j + 1
        runs += [str(x) for x in idxs if not isinstance(x, int)]
        parts.append(f"{job}:{','.join(runs)}")
    return "; ".join(parts)
