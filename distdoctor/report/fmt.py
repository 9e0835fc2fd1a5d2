"""Number and text formatting shared by the renderers (HTML, terminal, live view)."""
from __future__ import annotations

import re

from ..diagnose.logs.formats import strip_ansi

__all__ = ["fmt_bytes", "fmt_duration", "fmt_step_time", "fmt_rate", "fmt_percent", "clean_text"]

_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_text(text: object, limit: int = 4000) -> str:
    """Text safe to show: no ANSI codes, no control characters but newline and tab, bounded length."""
    s = _CTRL.sub("", strip_ansi(str(text)))
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
