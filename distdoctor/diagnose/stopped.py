"""What a job was doing when distdoctor itself was stopped (Ctrl-C, SIGTERM to the supervisor): who waited in
TensorFlow for whom, who was in its own code and where, the step each had reached. Pure: it reads the tasks'
observations as the supervisor froze them the moment the signal came (:meth:`TaskTrack.freeze`).
"""
from __future__ import annotations

from .observations import FROZEN_STATES, JobObservation, TaskObservation, TaskState

__all__ = ["doing_when_stopped", "each_task_when_stopped"]


def _at_step(t: TaskObservation) -> str:
    return f" at step {t.steps}" if t.steps else ""


def _own_code(t: TaskObservation) -> str:
    return f"in its own code at {t.location}" if t.location else "in its own code"


def _names(ts: list[TaskObservation]) -> str:
    return ", ".join(t.task for t in ts)


def doing_when_stopped(job: JobObservation) -> str:
    """One sentence: the job's state at the interruption (the tasks it stopped; those that had ended before it are
    said apart)."""
    stopped = [t for t in job.ordered() if t.exit_code is None or t.killed_by_supervisor]
    ended = [t for t in job.ordered() if t not in stopped]
    parts = []
    frozen = [t for t in stopped if t.state in FROZEN_STATES or t.state == TaskState.DISK_SLEEP]
    waiting = [t for t in stopped if t not in frozen and (t.in_tf_call or t.where == "tf")]
    serving = [t for t in stopped if t not in frozen and t.where == "serving"]
    own = [t for t in stopped if t not in frozen and t.where == "python"]
    unknown = [t for t in stopped if t not in frozen + waiting + serving + own]
    if waiting and (own or frozen):
        behind = own + frozen
        late = "; ".join(f"{t.task} {_own_code(t) if t in own else 'was ' + str(t.state)}{_at_step(t)}"
                         for t in behind)
        call = {t.in_tf_call for t in waiting if t.in_tf_call}
        inside = f" (in {call.pop()})" if len(call) == 1 else ""
        parts.append(f"{_names(waiting)} waited in TensorFlow{inside}{_at_step(waiting[0])} for "
                     f"{_names(behind)}, which {'was' if len(behind) == 1 else 'were'} elsewhere: {late}")
    elif waiting:
        steps = {t.steps for t in waiting}
        who = "all tasks" if len(waiting) == len(stopped) and len(stopped) > 1 else _names(waiting)
        if len(steps) == 1 and None not in steps:
            parts.append(f"{who} {'were' if len(waiting) > 1 else 'was'} training (in TensorFlow) at step {steps.pop()}")
        else:
            parts.append(f"{who} {'were' if len(waiting) > 1 else 'was'} training (in TensorFlow): "
                         + ", ".join(f"{t.task}{_at_step(t)}" for t in waiting))
    elif own:
        parts.append("; ".join(f"{t.task} was {_own_code(t)}{_at_step(t)}" for t in own))
    if frozen and not waiting:
        parts.append(", ".join(f"{t.task} was {t.state}" for t in frozen))
    if serving:
        parts.append(f"{_names(serving)} {'was' if len(serving) == 1 else 'were'} serving (a server's join)")
    if unknown:
        parts.append(f"{_names(unknown)} {'was' if len(unknown) == 1 else 'were'} running (no sample of where)")
    if ended:
        parts.append("; ".join(f"{t.task} had already ended ({'exit ' + str(t.exit_code)})" for t in ended))
    return "; ".join(parts) if parts else "no task was running"


def each_task_when_stopped(job: JobObservation) -> list[tuple[str, str]]:
    """Each task and, in a few words, what it was doing when distdoctor was stopped (the verdict's evidence)."""
    out = []
    for t in job.ordered():
        if not (t.exit_code is None or t.killed_by_supervisor):
            what = f"had already ended (exit {t.exit_code})"
        elif t.state in FROZEN_STATES or t.state == TaskState.DISK_SLEEP:
            what = f"was {t.state}"
        elif t.in_tf_call or t.where == "tf":
            what = f"was in TensorFlow{f' ({t.in_tf_call})' if t.in_tf_call else ''}"
        elif t.where == "serving":
            what = "was serving (a server's join)"
        elif t.where == "python":
            what = f"was {_own_code(t)}"
        else:
            what = "was running (no sample of where)"
        out.append((t.task, what + _at_step(t)))
    return out
