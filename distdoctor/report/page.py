"""The page model of an incident report: what the page shows, as frozen data.

:func:`distdoctor.report.data.build_page` turns the records of a bundle into a :class:`ReportPage`; renderers
(``html``, ``svg``) only draw it. Findings and evidence are the model's own (:class:`~distdoctor.model.Finding`).

Concepts:

* a **lane** is one row of the timeline: one task, or a *group* of tasks that
  behaved identically (same job, outcome, exit, final state and kinds of
  events) so that 256 workers collapse into a handful of rows. The culprit is
  never grouped and its lane comes first. A restarted run's lane holds every
  attempt of its task, each mark tagged with its attempt.
* a **mark** is one point on a lane (start, cluster connect, first step, a
  suspected stall, a fault, an exit...) with the log line that shows it.
* a **span** is a stretch of a lane in one phase (starting, connected,
  training, stalled, waiting, frozen).
* **metrics** are a lane's time series: seconds per step, RSS and CPU%.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from ..model import Finding
from .attempts import AttemptBand
from .series import Series

__all__ = ["Mark", "MARK_LABELS", "LanePhase", "TaskOutcome", "PageVerdict", "LaneMark", "Span", "Metrics", "LogLine",
           "TaskFacts", "Lane", "JobMarker", "ReportPage"]


class Mark(str, enum.Enum):
    START = "start"
    CONNECTED = "connected"
    FIRST_STEP = "first_step"
    EPOCH = "epoch"
    STALL = "stall"
    HANG = "hang"
    FAULT = "fault"
    SYMPTOM = "symptom"
    WARNING = "warning"
    SIGNAL = "signal"
    EXIT = "exit"



MARK_LABELS = {Mark.START: "started", Mark.CONNECTED: "joined the cluster", Mark.FIRST_STEP: "first step",
                Mark.EPOCH: "epoch", Mark.STALL: "stall suspected", Mark.HANG: "hang declared",
                Mark.FAULT: "fault", Mark.SYMPTOM: "symptom", Mark.WARNING: "warning",
                Mark.SIGNAL: "signal sent by distdoctor", Mark.EXIT: "exited"}


class LanePhase(str, enum.Enum):
    STARTING = "starting"     # process up, not yet in the cluster
    CONNECTED = "connected"   # in the cluster, no step yet (building the model, compiling)
    TRAINING = "training"     # making steps
    STALLED = "stalled"       # the culprit, after its progress stopped
    WAITING = "waiting"       # a healthy task after its progress stopped (waiting on the culprit)
    FROZEN = "frozen"         # process stopped or in uninterruptible sleep (from samples)


class TaskOutcome(str, enum.Enum):
    OK = "ok"                 # exited 0 on its own, or a server stopped at the job's end (its normal end)
    FAILED = "failed"         # exited non-zero or died from a signal on its own
    STOPPED = "stopped"       # stopped by distdoctor (after a hang or a peer's failure)
    RUNNING = "running"       # still alive when the record ends
    UNKNOWN = "unknown"



@dataclass(frozen=True)
class PageVerdict:
    """The top of the page. ``culprits`` is the culprit, or the candidates when it could not be decided."""

    status: str
    title: str
    headline: str
    root: Finding | None
    culprits: tuple[str, ...]
    detected_at: float | None


@dataclass(frozen=True)
class LaneMark:
    """A point on a lane. For a group, ``first``/``last`` span the members' times of this mark."""

    kind: Mark
    ts: float
    label: str
    detail: str = ""
    line: str = ""            # the task's log line that shows it, when one does
    count: int = 1            # repeated symptoms collapse into one mark
    first: float | None = None
    last: float | None = None
    attempt: int | None = None  # the attempt of a restarted run it belongs to (None: the run was not restarted)
    outcome: TaskOutcome | None = None   # an exit's: how the task ended in that attempt (None: the lane's outcome)


@dataclass(frozen=True)
class Span:
    start: float
    end: float
    phase: LanePhase


@dataclass(frozen=True)
class Metrics:
    step_time: Series = Series()   # seconds per step
    rss: Series = Series()         # bytes
    cpu: Series = Series()         # percent of one core


@dataclass(frozen=True)
class LogLine:
    clock: str
    text: str


@dataclass(frozen=True)
class TaskFacts:
    """What is known about one task at the end of the record."""

    task: str
    state: str
    outcome: TaskOutcome
    exit_code: int | None = None
    signal: str | None = None
    steps: int | None = None
    pid: int | None = None
    peak_rss: int | None = None
    last_progress_at: float | None = None
    where: str | None = None
    in_call: str | None = None
    location: str | None = None
    stack: str = ""
    log_path: str | None = None
    log_lines: int = 0
    tail: tuple[LogLine, ...] = ()

    @property
    def ending(self) -> str:
        """How the task ended, in a few words."""
        if self.signal and self.outcome == TaskOutcome.OK:
            return f"stopped at the job's end ({self.signal})"
        if self.signal:
            how = f"killed by {self.signal}"
        elif self.exit_code is not None:
            how = f"exit {self.exit_code}"
        else:
            how = self.state
        return f"stopped by distdoctor ({how})" if self.outcome == TaskOutcome.STOPPED else how


@dataclass(frozen=True)
class Lane:
    key: str                       # "worker:1", or "worker:3-63" for a group
    members: tuple[str, ...]
    culprit: bool
    outcome: TaskOutcome
    spans: tuple[Span, ...]
    marks: tuple[LaneMark, ...]
    metrics: Metrics
    facts: TaskFacts               # the (first member's) facts

    @property
    def group(self) -> bool:
        return len(self.members) > 1

    @property
    def label(self) -> str:
        return f"{self.key} ({len(self.members)} tasks, identical)" if self.group else self.key


@dataclass(frozen=True)
class JobMarker:
    """A vertical line across the timeline and charts (stall suspected, hang declared, root cause)."""

    ts: float
    kind: Mark
    label: str


@dataclass(frozen=True)
class ReportPage:
    title: str
    source: str                    # "bundle" or "logs"
    path: str
    verdict: PageVerdict
    findings: tuple[Finding, ...]  # every finding but the root cause
    lanes: tuple[Lane, ...]
    t0: float
    t1: float
    markers: tuple[JobMarker, ...] = ()
    notes: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    attempts: tuple[AttemptBand, ...] = ()   # one per attempt of a restarted run
    goodput: str | None = None

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(t for lane in self.lanes for t in lane.members)
