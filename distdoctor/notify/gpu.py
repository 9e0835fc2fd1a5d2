"""GPU memory per task from NVML (``nvidia-ml-py``), where there is an NVIDIA GPU.

:func:`gpu_usage` is the pure part (plain numbers in, tested without a GPU); :class:`GpuProbe`
reads NVML and turns itself off for good at the first failure (no driver, no GPU), so a CPU
host pays one failed ``nvmlInit`` and nothing after.
"""
from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["gpu_usage", "GpuProbe"]


def gpu_usage(devices: Sequence[tuple[int, Sequence[tuple[int, int | None]]]], pids: Iterable[int]
              ) -> tuple[int, int] | None:
    """``devices``: per GPU, (total bytes, [(pid, used bytes)]). Returns (used, total) over the GPUs
    the task's processes use, or None when they use none."""
    want = set(pids)
    used = total = 0
    for dev_total, procs in devices:
        mine = [u or 0 for pid, u in procs if pid in want]
        if mine:
            used += sum(mine)
            total += dev_total
    return (used, total) if total else None


class GpuProbe:
    def __init__(self) -> None:
        self._nvml = None
        self._handles: list = []
        self._off = False

    def _start(self) -> bool:
        if self._off:
            return False
        if self._nvml is None:
            try:
                import pynvml
                pynvml.nvmlInit()
                self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
                self._nvml = pynvml
            except Exception:
                self._off = True
                return False
        return bool(self._handles)

    def devices(self) -> list[tuple[int, list[tuple[int, int | None]]]]:
        """One NVML read of every GPU: its total memory and its compute processes' use."""
        if not self._start():
            return []
        nv = self._nvml
        out = []
        try:
            for h in self._handles:
                procs = nv.nvmlDeviceGetComputeRunningProcesses(h)
                out.append((int(nv.nvmlDeviceGetMemoryInfo(h).total), [(p.pid, p.usedGpuMemory) for p in procs]))
        except Exception:
            self._off = True
            return []
        return out
