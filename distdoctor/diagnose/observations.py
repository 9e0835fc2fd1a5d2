"""Recorded observations of a job: the only input the rule catalogue reads.

``distdoctor run`` fills these from its processes, its bootstrap samples and
the logs; ``distdoctor diagnose`` fills them from logs alone (process fields
left ``None``). Frozen dataclasses, no I/O.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .events import LogEvent

__all__ = ["TaskState", "FROZEN_STATES", "OomEvidence", "MemorySample", "TaskObservation", "HangVerdict", "Pause",
           "JobObservation"]


class TaskState(enum.StrEnum):
    """A task's process state, as /proc (psutil) reports it, plus the supervisor's own ``starting``/``exited``.

    A ``StrEnum``: it is its value in JSON, in text and in comparisons, so bundles and reports read the same.
    """

    STARTING = "starting"          # launched, no sample yet
    RUNNING = "running"
    SLEEPING = "sleeping"
    DISK_SLEEP = "disk-sleep"      # uninterruptible (D): I/O, a stuck mount
    STOPPED = "stopped"            # SIGSTOP, job control (T)
    TRACING_STOP = "tracing-stop"  # a debugger (t)
    ZOMBIE = "zombie"
    DEAD = "dead"
    IDLE = "idle"
    EXITED = "exited"
    UNKNOWN = "unknown"            # logs only: no process data


FROZEN_STATES = frozenset({TaskState.STOPPED, TaskState.TRACING_STOP})


@dataclass(frozen=True)
class OomEvidence:
    """What the memory cgroup and the kernel said about a task's memory."""

    cgroup: str | None = None
    limit_bytes: int | None = None
    usage_bytes: int | None = None
    max_usage_bytes: int | None = None
    failcnt: int | None = None
    oom_kill_count: int | None = None      # memory.oom_control's oom_kill (cgroup v1) / memory.events (v2)
    under_oom: bool = False
    kernel_lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class MemorySample:
    ts: float
    rss_bytes: int
    limit_bytes: int | None = None  # the tighter of the cgroup limit and host memory


@dataclass(frozen=True)
class TaskObservation:
    """Everything recorded about one task. Unknown fields are None."""

    task: str                                  # "worker:1"
    events: tuple[LogEvent, ...] = ()
    pid: int | None = None
    started_at: float | None = None
    ended_at: float | None = None
    exit_code: int | None = None               # None: still running or unknown
    signal: int | None = None                  # fatal signal number, if killed by one
    state: str = TaskState.UNKNOWN             # a TaskState (a str: logs and bundles may carry others)
    state_since: float | None = None
    last_progress_at: float | None = None
    last_output_at: float | None = None
    steps: int | None = None                   # steps completed (callback, bootstrap or progress lines)
    step_times: tuple[float, ...] = ()         # recent step durations, seconds
    step_calls: int | None = None              # calls the task entered of its step function (the agent's count)
    step_calls_exact: bool = False             # that count was sent as the task's Python code ended: final
    in_tf_call: str | None = None              # name of the TF function the main thread is inside
    in_tf_since: float | None = None
    where: str | None = None                   # "tf", "python", "serving", or None
    user_thread_busy: bool = False             # a non-main Python thread is inside user code
    outside_tf_fraction: float | None = None   # share of training-time samples spent outside TF functions
    stack: str = ""                            # best stack we have (py-spy or bootstrap)
    location: str | None = None                # innermost user frame "file:line in func"
    cpu_busy: bool | None = None               # used CPU during the suspected stall
    memory: tuple[MemorySample, ...] = ()
    oom: OomEvidence | None = None
    shm: tuple[int, int] | None = None         # run: the fullest its /dev/shm was seen (bytes used, size)
    killed_by_supervisor: bool = False
    uncaught_at: float | None = None           # its code ended raising an uncaught exception then (the agent saw it),
    #                                            whatever ended the process after (a teardown that never ends)
    log_path: str | None = None
    last_line: str | None = None               # from logs: the last line of its log (where a silent death shows)
    clock_offset_s: float | None = None        # for logs whose clock disagrees with the others
    host: str | None = None                    # run --node: the machine the task ran on
    supervisor_lost_at: float | None = None    # run --node: when its supervisor was last heard from, if lost
    supervisor_lost: str = ""                  # ... and how it was lost (silence, closed link)


@dataclass(frozen=True)
class HangVerdict:
    """The supervisor's (or the logs') judgement that the job stopped making progress."""

    kind: str                                  # "stalled_worker", "collective_mismatch", "frozen", "silent"
    declared_at: float
    since: float                               # when progress stopped
    culprits: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()              # tasks blocked in a collective
    reason: str = ""


@dataclass(frozen=True)
class Pause:
    """A stretch in which the peers waited for one task that still made progress of its own, then went on."""

    task: str
    since: float                               # when the job's last step before it was made
    until: float                               # when progress resumed
    where: str | None = None                   # the task's file:line during the pause
    doing: str = ""                            # what it was seen doing (computing, writing files, the network)
    waiting: tuple[str, ...] = ()              # who waited for it

    @property
    def seconds(self) -> float:
        return max(0.0, self.until - self.since)


@dataclass(frozen=True)
class JobObservation:
    tasks: dict[str, TaskObservation]
    strategy: str = "unknown"                  # "multi_worker_mirrored", "parameter_server", "unknown"
    source: str = "run"                        # "run" (process data present) or "logs"
    hang: HangVerdict | None = None
    interrupted: str | None = None             # "SIGINT"/"SIGTERM" when the user or scheduler stopped the run
    ended_at: float | None = None
    job_finished: bool = True                  # False when logs simply stop
    ran_to_end: frozenset[str] = frozenset()   # logs: the tasks whose logs end their run (last epoch, closing line)
    pauses: tuple[Pause, ...] = ()             # run: pauses the job waited out (not hangs)
    started_at: float | None = None            # run: when the attempt began (a pause's share of the run time)
    notes: tuple[str, ...] = field(default_factory=tuple)
    record_losses: tuple[str, ...] = ()        # run: what distdoctor could not record (its own writes failed)

    def ordered(self) -> list[TaskObservation]:
        order = {"chief": 0, "worker": 1, "ps": 2, "evaluator": 3}

        def key(t: TaskObservation):
            job, _, idx = t.task.partition(":")
            return (order.get(job, 9), job, int(idx) if idx.isdigit() else 0)

        return sorted(self.tasks.values(), key=key)
