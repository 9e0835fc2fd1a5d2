"""The supervisor's one stream of typed events, and the bus its sinks subscribe to.

Every effect of a run is a sink on this stream (:mod:`.sinks`, :mod:`.bundle`, the node's side link):
``events.jsonl`` takes each event's :meth:`~RunEvent.journal` line, the terminal its :meth:`~RunEvent.said`
line, the alert sinks its :meth:`~RunEvent.alert`. The loop's pure step (:mod:`.step`) returns these events
with the few *actions* the supervisor itself carries out (stop the tasks, record the stacks of a hang, judge a
lost worker's restart, end the attempt): actions are events too, so one ordered tuple keeps their order.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from ..model import JobEvent

__all__ = ["RunEvent", "Said", "Journal", "OutputLine", "OutputChunk", "Recognised", "AgentSampled", "ProcSampled", "MemoryWarning",
           "TaskExited", "TaskFailed", "TaskLost", "StallSuspected", "StallCleared", "HangDeclared", "Assessed",
           "ThresholdCrossed", "Turned", "Alert", "AttemptStarted", "AttemptDiagnosed", "LedgerAmended",
           "StopTasks", "RecordHang", "JudgeTaskRestart", "AttemptOver", "ACTIONS", "Bus"]


class RunEvent:
    """Base of the stream: what each sink may take from an event (None: nothing for it)."""

    def journal(self) -> dict[str, Any] | None:       # a line of events.jsonl
        return None

    def said(self) -> str | None:                      # a "[distdoctor] ..." line for the person watching
        return None

    def alert(self) -> tuple[str, dict[str, Any]] | None:   # (notify event, fields) for the alert sinks
        return None


def _line(ts: float, task: str | None, kind: str, text: str) -> dict[str, Any]:
    return JobEvent(ts, task, kind, text).to_json()   # kinds: JobEventKind, and a few outside it (lifecycle_error)


@dataclass(frozen=True)
class Said(RunEvent):
    text: str

    def said(self):
        return self.text


@dataclass(frozen=True)
class Journal(RunEvent):
    """A plain line of events.jsonl (start, agent, connected, fault, signal_sent, attempt, lifecycle_error)."""

    ts: float
    task: str | None
    kind: str
    text: str

    def journal(self):
        return _line(self.ts, self.task, self.kind, self.text)


@dataclass(frozen=True)
class OutputLine(RunEvent):
    """A line a task printed (``echo`` False: a remote task's line, mirrored, not shown)."""

    ts: float
    task: str
    line: str
    echo: bool = True


@dataclass(frozen=True)
class OutputChunk(RunEvent):
    """Lines a task printed together (one read of its pipe): ``text`` holds them without the last newline,
    ``data`` the bytes its log got for them (each line after the collector's time stamp)."""

    ts: float
    task: str
    text: str
    data: bytes
    echo: bool = True

    def lines(self) -> list[str]:
        return self.text.split("\n")


@dataclass(frozen=True)
class Recognised(RunEvent):
    """A task printed a line the knowledge base knows as a specific cause."""

    ts: float
    task: str
    code: str
    category: str
    title: str
    text: str

    def journal(self):
        return _line(self.ts, self.task, "recognised", f"{self.code} {self.category}: {self.text[:300]}")

    def said(self):
        return f"{self.task} printed a known cause: {self.code} {self.category} ({self.title})"


@dataclass(frozen=True)
class AgentSampled(RunEvent):
    sample: Any
    first: bool

    def journal(self):
        if not self.first:
            return None
        return _line(self.sample.ts, self.sample.task, "agent", f"agent reporting from pid {self.sample.pid}")


@dataclass(frozen=True)
class ProcSampled(RunEvent):
    """One process sample of a task: ``row`` is its line of samples.jsonl."""

    ts: float
    task: str
    sample: Any
    oom: Any
    limit: int
    row: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryWarning(RunEvent):
    ts: float
    task: str
    rss: int
    limit: int

    def said(self):
        return (f"warning: {self.task} uses {self.rss >> 20} MiB, {self.rss / self.limit:.0%} of its "
                f"{self.limit >> 20} MiB limit; it may be OOM-killed")

    def journal(self):
        return _line(self.ts, self.task, "memory_warning", f"RSS {self.rss >> 20} MiB of {self.limit >> 20} MiB")


@dataclass(frozen=True)
class TaskExited(RunEvent):
    ts: float
    task: str
    how: str
    killed: bool          # stopped by distdoctor: not news
    oom: Any = None       # a killed task's memory-cgroup evidence (OomEvidence), when there is any

    def journal(self):
        # a kill's memory evidence travels with the line: `diagnose BUNDLE` reads it (diagnose/bundlefacts.py)
        line = _line(self.ts, self.task, "exit", self.how)
        o = self.oom
        if o is not None and (o.oom_kill_count or o.kernel_lines or o.under_oom or o.failcnt):
            line["oom"] = {k: v for k, v in vars(o).items() if k != "kernel_lines"} | {"kernel_lines": list(o.kernel_lines)}
        return line

    def said(self):
        return None if self.killed else f"{self.task} ended ({self.how})"


@dataclass(frozen=True)
class TaskFailed(RunEvent):
    """A task exited non-zero, or raised an uncaught exception and did not exit within the failure grace: ``fatal``
    (the job cannot complete) or a ParameterServerStrategy worker."""

    ts: float
    task: str
    how: str
    fatal: bool
    since: float
    first_fault: str | None = None
    banner: str | None = None
    grace: float = 0.0

    def journal(self):
        return _line(self.ts, self.task, "fault", f"{self.task} failed ({self.how})")

    def said(self):
        if not self.fatal:
            return f"{self.task} failed ({self.how}); ParameterServerStrategy goes on without it"
        return f"{self.banner}; waiting up to {self.grace:.0f} s for the other tasks"

    def alert(self):
        extra = {"first_failure": self.first_fault} if self.fatal else {}
        return "task_failed", {"culprit": self.task, "summary": f"{self.task} failed ({self.how})", **extra,
                               "since": self.since}


@dataclass(frozen=True)
class TaskLost(RunEvent):
    """run --node: a node supervisor fell silent or its link closed without a goodbye."""

    ts: float
    task: str
    how: str
    host: str | None

    def journal(self):
        return _line(self.ts, self.task, "supervisor_lost", self.how)

    def said(self):
        return f"the supervisor of {self.task} ({self.host}) is lost: {self.how}"


@dataclass(frozen=True)
class StallSuspected(RunEvent):
    ts: float
    task: str | None
    reason: str
    stalled_for: float
    threshold: float

    def said(self):
        return f"stall suspected: {self.reason}"

    def journal(self):
        return _line(self.ts, self.task, "stall_suspected", self.reason)

    def alert(self):
        return "hang_suspected", {"culprit": self.task, "summary": self.reason, "since": self.ts - self.stalled_for,
                                  "stalled_s": f"{self.stalled_for:.1f}", "threshold_s": f"{self.threshold:.1f}"}


@dataclass(frozen=True)
class StallCleared(RunEvent):
    ts: float
    task: str | None
    text: str

    def said(self):
        return f"stall cleared: {self.text}"

    def journal(self):
        return _line(self.ts, self.task, "stall_cleared", self.text)

    def alert(self):
        return "hang_cleared", {"summary": self.text}


# a hang verdict's kind -> the rule code and category the engine will give it (for the hang alert)
HANG_KINDS = {"stalled_worker": ("DD201", "hang_stalled_worker"),
              "collective_mismatch": ("DD202", "hang_collective_mismatch"),
              "frozen": ("DD203", "peer_unresponsive"), "peer_exited": ("DD204", "data_sharding_imbalance")}


@dataclass(frozen=True)
class HangDeclared(RunEvent):
    ts: float
    task: str | None
    reason: str
    verdict: Any
    culprit_location: str | None = None

    def said(self):
        return f"hang declared: {self.reason}"

    def journal(self):
        # the verdict's shape travels with the line: `diagnose BUNDLE` reads the hang the run saw (bundlefacts.py)
        v = self.verdict
        hang = {"kind": v.kind, "since": v.since, "culprits": list(v.culprits), "waiting": list(v.waiting)} \
            if v is not None else None
        return {**_line(self.ts, self.task, "hang_declared", self.reason), "hang": hang}

    def alert(self):
        v = self.verdict
        code, category = HANG_KINDS.get(v.kind, (None, None))
        return "hang_declared", {"culprit": v.culprits[0] if v.culprits else None, "summary": self.reason,
                                 "category": category, "code": code, "since": v.since, "status": "hung",
                                 "first_failure": self.culprit_location, "waiting": ",".join(v.waiting)}


@dataclass(frozen=True)
class Assessed(RunEvent):
    """The detector's reading of this turn (the notifier's metrics and thresholds follow it)."""

    ts: float
    assessment: Any


@dataclass(frozen=True)
class ThresholdCrossed(RunEvent):
    ts: float
    task: str | None
    summary: str

    def said(self):
        return f"warning: {self.summary}"

    def journal(self):
        return _line(self.ts, self.task, "threshold", self.summary)


@dataclass(frozen=True)
class Turned(RunEvent):
    """A turn of the loop ended and the attempt goes on (the live view redraws)."""

    ts: float
    banner: str | None


@dataclass(frozen=True)
class Alert(RunEvent):
    """An alert with no other effect (restart, gave_up)."""

    name: str
    fields: dict

    def alert(self):
        return self.name, dict(self.fields)


@dataclass(frozen=True)
class AttemptStarted(RunEvent):
    ts: float
    number: int
    archive: int | None      # the attempt whose files move to attempts/<n>/ first (None: nothing to move)

    def journal(self):
        return _line(self.ts, None, "attempt", f"attempt {self.number} starts") if self.number > 1 else None


@dataclass(frozen=True)
class AttemptDiagnosed(RunEvent):
    """The attempt's :class:`~distdoctor.model.Diagnosis`, with the run's attempts and goodput: diagnosis.json is
    written from it, once (``interim``: the early one of a hang kept alive by --on-hang wait, for whoever debugs
    it meanwhile)."""

    diagnosis: Any
    interim: bool = False


@dataclass(frozen=True)
class LedgerAmended(RunEvent):
    """The last attempt's decision changed after diagnosis.json was written (interrupted during the backoff)."""

    ledger: tuple


# -- actions: events the supervisor itself carries out ---------------------------------------------------
@dataclass(frozen=True)
class StopTasks(RunEvent):
    reason: str


@dataclass(frozen=True)
class RecordHang(RunEvent):
    """Freeze every track and record the stacks (py-spy, the agent's); with --on-hang wait, keep the job alive."""


@dataclass(frozen=True)
class JudgeTaskRestart(RunEvent):
    """A ParameterServerStrategy worker failed alone: judge whether a restart of it alone can fix it."""

    task: str
    ts: float


@dataclass(frozen=True)
class AttemptOver(RunEvent):
    pass


ACTIONS = (StopTasks, RecordHang, JudgeTaskRestart, AttemptOver)


class Bus:
    """One stream; each sink takes the events of the types it subscribed to, in the order they were published.

    Sinks run on the publisher's thread (the loop, a task's reader thread, the agent channel or a side link), so
    each sink guards its own state.
    """

    def __init__(self) -> None:
        self._subs: list[tuple[tuple[type, ...], Callable[[RunEvent], None]]] = []
        self._lock = threading.Lock()

    def subscribe(self, fn: Callable[[RunEvent], None], *types: type) -> None:
        with self._lock:
            self._subs.append((types or (RunEvent,), fn))

    def publish(self, ev: RunEvent) -> None:
        for types, fn in list(self._subs):
            if isinstance(ev, types):
                fn(ev)
