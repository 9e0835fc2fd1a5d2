"""The supervisor's clock, injected: the loop reads the time and sleeps only through it (tests pass a fake one)."""
from __future__ import annotations

import time

__all__ = ["Clock", "SYSTEM_CLOCK"]


class Clock:
    """Wall-clock seconds (the tasks' log lines and samples carry the same clock) and a sleep."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK = Clock()
