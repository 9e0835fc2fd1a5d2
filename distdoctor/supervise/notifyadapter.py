"""The supervisor's task tracks as the notifier's plain rows (metrics, thresholds, TensorBoard)."""
from __future__ import annotations

import statistics

from ..diagnose.observations import TaskState
from ..notify.gpu import gpu_usage
from ..notify.metrics import TaskRow
from ..notify.thresholds import RECENT_STEPS, TaskResources
from .launch import TaskProcess
from .tracking import TaskTrack

__all__ = ["notify_tick"]

FORECAST_SAMPLES = 240  # the memory history handed to the forecast (60 s at the 4 Hz tick)


def notify_tick(notifier, tracks: dict[str, TaskTrack], now: float, assessment) -> list:
    """One notifier tick from the tracks; returns the threshold crossings new in this run."""
    rows, resources, history, cores = [], [], [], {}
    gpus = notifier.gpu.devices()
    for t in tracks.values():
        # GPU use by pid: only for processes on this host (run --node mirrors remote tasks' pids)
        gpu = gpu_usage(gpus, {t.proc.pid, t.agent_pid or t.proc.pid}) if gpus and isinstance(t.proc, TaskProcess) else None
        with t.lock:
            p = t.last_proc
            intervals = list(t.step_intervals)
            memory = t.memory[-FORECAST_SAMPLES:]
            alive = t.proc.alive
            rows.append(TaskRow(
                task=t.task, alive=alive, state=t.state if alive else TaskState.EXITED, step=t.steps(),
                last_step_at=t.last_progress_at,
                step_seconds=statistics.median(intervals[-RECENT_STEPS:]) if intervals else None,
                rss_bytes=p.rss_bytes if p else None, mem_limit_bytes=memory[-1].limit_bytes if memory else None,
                cpu_seconds=p.cpu_seconds if p else None, gpu_mem_bytes=gpu[0] if gpu else None))
        history.append(intervals)
        cores[t.task] = t.cpu_rate()
        if alive:
            resources.append(TaskResources(
                task=t.task, ts=now, rss_bytes=p.rss_bytes if p else None,
                mem_limit_bytes=memory[-1].limit_bytes if memory else None,
                gpu_mem_bytes=gpu[0] if gpu else None, gpu_mem_total_bytes=gpu[1] if gpu else None,
                recent_step_s=tuple(intervals[-RECENT_STEPS:]),
                memory=tuple((m.ts, m.rss_bytes) for m in memory)))
    return notifier.tick(now, rows, resources, history, cores,
                         stalled_for=assessment.stalled_for if assessment else 0.0,
                         stall_threshold=assessment.threshold if assessment else 0.0)
