"""Feed the supervisor's task tracks into the live terminal view (distdoctor.report.live)."""
from __future__ import annotations

import collections

from ..report.live import LiveRow, LiveView

__all__ = ["LiveAdapter"]


class LiveAdapter:
    """Owns a :class:`LiveView`; turns tracks into rows, keeps the last log lines."""

    def __init__(self, stream) -> None:
        from rich.console import Console
        self.view = LiveView(Console(file=stream))
        self.lines: collections.deque[str] = collections.deque(maxlen=12)
        self._prev: dict[str, tuple[float, int]] = {}

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
                prev = self._prev.get(name)
                if prev and now > prev[0]:
                    rate = max(0.0, (steps - prev[1]) / (now - prev[0]))
                if prev is None or now - prev[0] >= 2.0:
                    self._prev[name] = (now, steps)
            proc = t.last_proc
            state = t.state if t.proc.alive else f"exit {t.proc.returncode}"
            rows.append(LiveRow(task=name, state=state, step=steps, total=None, steps_per_s=rate,
                                rss_bytes=proc.rss_bytes if proc else None, cpu_percent=(t.cpu_rate() or 0.0) * 100,
                                last_progress_age_s=(now - t.last_progress_at) if t.last_progress_at else None,
                                where=t.where(), location=t.location()))
        self.view.update(rows, banner, list(self.lines))
