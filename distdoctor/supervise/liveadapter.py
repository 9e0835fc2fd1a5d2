"""Feed the supervisor's task tracks into the live terminal view (distdoctor.report.live)."""
from __future__ import annotations

import collections

from ..report.live import LiveRow, LiveView

__all__ = ["LiveAdapter", "window_rate"]

RATE_WINDOW_S = 10.0


def window_rate(hist: "collections.deque[tuple[float, int]]", now: float, steps: int,
                window: float = RATE_WINDOW_S) -> float | None:
    """Steps per second over the last ``window`` seconds; ``hist`` holds (time, steps) and is updated.

    A rate between two nearby refreshes read 0/s whenever the step counter (updated per agent
    sample or per Keras line) had not moved in between; over a window it does not flicker.
    """
    if hist and steps < hist[-1][1]:
        hist.clear()  # a restarted task counts from 0 again
    hist.append((now, steps))
    while len(hist) > 2 and now - hist[1][0] >= window:
        hist.popleft()
    t0, s0 = hist[0]
    if now - t0 < 0.5:
        return None
    return max(0.0, (steps - s0) / (now - t0))


class LiveAdapter:
    """Owns a :class:`LiveView`; turns tracks into rows, keeps the last log lines."""

    def __init__(self, stream) -> None:
        from rich.console import Console
        self.view = LiveView(Console(file=stream))
        self.lines: collections.deque[str] = collections.deque(maxlen=12)
        self._hist: dict[str, collections.deque] = {}

    def __enter__(self):
        self.view.__enter__()
        return self

    def __exit__(self, *exc):
        return self.view.__exit__(*exc)

    def log(self, text: str) -> None:
        self.lines.append(text)

    def update_from_tracks(self, tracks: dict, now: float, banner: str | None) -> None:
        rows = []
        for name, t in tracks.items():
            a = t.agent
            steps = t.steps() if t.steps() is not None else (a.calls if a else None)
            rate = None
            if steps is not None:
                rate = window_rate(self._hist.setdefault(name, collections.deque()), now, steps)
            proc = t.last_proc
            state = t.state if t.proc.alive else f"exit {t.proc.returncode}"
            rows.append(LiveRow(task=name, state=state, step=steps, total=None, steps_per_s=rate,
                                rss_bytes=proc.rss_bytes if proc else None, cpu_percent=(t.cpu_rate() or 0.0) * 100,
                                last_progress_age_s=(now - t.last_progress_at) if t.last_progress_at else None,
                                where=t.where(), location=t.location()))
        self.view.update(rows, banner, list(self.lines))
