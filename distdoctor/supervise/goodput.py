"""Goodput of a restarted run: how much of the wall-clock time trained the model.

The vocabulary is Google's ML Goodput (``ml-goodput-measurement``): *productive
training time* over the job's total time is the goodput ratio; the rest is badput,
split here into *program startup* (an attempt's start to its first step), *wasted
progress from disruption* (steps trained after the checkpoint the next attempt resumed
from: they are recomputed), *disruption* (from the failure to the end of the attempt:
detection, the peers' grace, the stop) and *backoff* (the wait before a restart).

Pure: the numbers come from :class:`~.ledger.AttemptRecord` values.
"""
from __future__ import annotations

from typing import Sequence

from ..model import AttemptGoodput, Badput, Goodput
from .ledger import AttemptRecord

__all__ = ["AttemptGoodput", "attempt_goodput", "job_goodput"]


def _wasted(a: AttemptRecord, nxt: AttemptRecord | None, end: float) -> tuple[float, int | None]:
    """Training of ``a`` that ``nxt`` did again: everything after the epoch ``nxt`` resumed at."""
    if nxt is None or a.first_step_at is None:
        return 0.0, 0
    r = nxt.resumed_from.epoch
    if r is None:  # no epochs printed: without a checkpoint everything is recomputed, with one we cannot tell
        return (max(0.0, end - a.first_step_at), a.steps) if nxt.resumed_from.checkpoint is None else (0.0, None)
    for epoch, ts, steps_before in a.epoch_starts:
        if epoch == r:
            steps = None if a.steps is None else max(0, a.steps - steps_before)
            return max(0.0, end - max(ts, a.first_step_at)), steps
    return 0.0, 0  # it never reached that epoch: nothing is done twice


def attempt_goodput(records: Sequence[AttemptRecord]) -> list[AttemptGoodput]:
    out = []
    for i, a in enumerate(records):
        nxt = records[i + 1] if i + 1 < len(records) else None
        fail = a.failed_at if a.failed_at is not None and a.started_at <= a.failed_at <= a.ended_at else None
        end = fail if fail is not None else a.ended_at
        startup = None if a.first_step_at is None else max(0.0, a.first_step_at - a.started_at)
        trained = 0.0 if a.first_step_at is None else max(0.0, end - a.first_step_at)
        wasted, steps = _wasted(a, nxt, end)
        wasted = min(wasted, trained)
        if wasted > 0 and not steps:
            steps = None  # Keras printed no per-step lines (verbose=2): the steps inside the epoch are unknown
        to_next = None
        if nxt is not None and nxt.first_step_at is not None:
            to_next = max(0.0, nxt.first_step_at - end)
        out.append(AttemptGoodput(a.number, startup, trained - wasted, wasted, steps,
                                  max(0.0, a.ended_at - end), a.backoff_s if a.decision.value == "restart" else 0.0,
                                  to_next))
    return out


def job_goodput(records: Sequence[AttemptRecord]) -> Goodput | None:
    """The whole job: wall time, productive time, the ratio and the badput by category."""
    if not records:
        return None
    per = attempt_goodput(records)
    wall = max(0.0, records[-1].ended_at - records[0].started_at)
    productive = sum(g.productive_s for g in per)
    return Goodput(
        wall_s=round(wall, 3), productive_s=round(productive, 3),
        ratio=round(productive / wall, 4) if wall > 0 else None,
        badput=Badput(program_startup_s=round(sum(g.program_startup_s or 0.0 for g in per), 3),
                      wasted_progress_s=round(sum(g.wasted_progress_s for g in per), 3),
                      disruption_s=round(sum(g.disruption_s for g in per), 3),
                      backoff_s=round(sum(g.backoff_s for g in per[:-1]), 3)),
        attempts=tuple(per))
