"""A task's own progress, read from outside: does it still do something while its peers wait? Pure.

A task that makes no TensorFlow steps can still be working: evaluating in Python (its CPU time
grows), saving or reading files (its I/O counters grow), downloading or uploading (its sockets move
bytes), or walking through code (its main thread's stack reaches places it has not been since the
pause began). :class:`Activity` keeps, per task, when any of these last moved and how; the hang
detector declares a task *stalled* only when none did for its threshold. Time is a parameter.

The thresholds are set above what a blocked task does anyway: a process waiting in a collective
uses a few hundredths of a core (TensorFlow's and the agent's threads), its gRPC heartbeats move a
few hundred bytes every few seconds, and a deadlocked thread's stack never changes.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass

__all__ = ["Activity", "CPU_BUSY", "IO_MIN_BYTES", "NET_MIN_BYTES", "MAX_STACKS"]

CPU_BUSY = 0.15            # cores over the window: computing, not waiting
CPU_WINDOW_S = 1.5     # short: a stalled task's input threads may fill their prefetch buffers for a moment
IO_MIN_BYTES = 64 << 10    # read/written through files (or pipes) since the previous sample
NET_MIN_BYTES = 32 << 10   # sent/received over TCP since the previous look
MAX_STACKS = 512           # distinct stacks remembered per pause


@dataclass(frozen=True)
class Moved:
    at: float
    how: str


class Activity:
    """When a task last made progress of its own, and what moved."""

    def __init__(self) -> None:
        self.last: Moved | None = None
        self._cpu: collections.deque[tuple[float, float]] = collections.deque(maxlen=40)
        self._io: int | None = None
        self._net: dict[tuple, int] | None = None
        self._stacks: set = set()

    @property
    def at(self) -> float | None:
        return self.last.at if self.last else None

    @property
    def how(self) -> str:
        return self.last.how if self.last else ""

    def _moved(self, now: float, how: str) -> None:
        self.last = Moved(now, how)

    def cpu_rate(self) -> float | None:
        if len(self._cpu) < 2:
            return None
        t1, c1 = self._cpu[-1]
        t0, c0 = self._cpu[0]
        for t, c in self._cpu:
            if t1 - t <= CPU_WINDOW_S:
                t0, c0 = t, c
                break
        if t1 - t0 <= 0.2:
            return None
        return max(0.0, (c1 - c0) / (t1 - t0))

    def on_proc(self, now: float, cpu_seconds: float, io_bytes: int | None) -> None:
        """A process sample: CPU seconds and bytes through read/write (``/proc/PID/io`` rchar + wchar) of the tree."""
        self._cpu.append((now, cpu_seconds))
        rate = self.cpu_rate()
        if rate is not None and rate >= CPU_BUSY:
            self._moved(now, f"computing ({rate:.2f} cores)")
        if io_bytes is not None:
            if self._io is not None and io_bytes - self._io >= IO_MIN_BYTES:
                self._moved(now, f"reading or writing files ({(io_bytes - self._io) / 2**20:.1f} MiB since the last sample)")
            self._io = io_bytes

    def on_net(self, now: float, sockets: dict[tuple, int]) -> None:
        """Bytes moved so far over each of the task's TCP sockets (``ss -ti``). The first look is the baseline;
        later, a socket's growth and a new socket's bytes count (a socket that closed counts nothing)."""
        if self._net is not None:
            moved = sum(max(0, b - self._net.get(k, 0)) for k, b in sockets.items())
            if moved >= NET_MIN_BYTES:
                self._moved(now, f"sending or receiving over the network ({moved / 2**20:.1f} MiB since the last look)")
        self._net = dict(sockets)

    def on_stack(self, now: float, fingerprint: tuple) -> None:
        """The main thread's stack (and its busy user threads'), from the agent: a place not seen since the
        last step is progress through code; cycling through the same few places (a poll loop) is not."""
        if fingerprint in self._stacks:
            return
        if len(self._stacks) < MAX_STACKS:
            self._stacks.add(fingerprint)
        self._moved(now, "running through new code")

    def on_step(self) -> None:
        """The task made a step (the job made progress): forget the places seen, and the network baseline
        (it is looked at only while the job stands still)."""
        self._stacks.clear()
        self._net = None
