"""The page model of an incident report: what the page shows, as frozen data.

:func:`build_page` turns the records of a bundle (:class:`~.bundle.BundleData`)
into a :class:`ReportPage`; renderers (``html``, ``terminal``) only draw it.
Building is a pure function: no files, no clock, no processes, so it is
tested from hand-built records in milliseconds.

Concepts:

* a **lane** is one row of the timeline: one task, or a *group* of tasks that
  behaved identically (same job, outcome, exit, final state and kinds of
  events) so that 256 workers collapse into a handful of rows. The culprit is
  never grouped and its lane comes first.
* a **mark** is one point on a lane (start, cluster connect, first step, a
  suspected stall, a fault, an exit...) with the log line that shows it.
* a **span** is a stretch of a lane in one phase (starting, connected,
  training, stalled, waiting, frozen).
* **metrics** are a lane's time series: seconds per step, RSS and CPU%.
"""
from __future__ import annotations

import enum
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Iterable

from ..diagnose.events import EventKind, LogEvent, unresolved_waits
from ..diagnose.logparse import classify
from ..model import format_clock
from .series import Series, aggregate, cpu_percent, downsample, step_times
from .attempts import attempt_bands, goodput_line
from .bundle import CONNECT_KINDS, FAULT_KINDS, SYMPTOM_KINDS, BundleData, JobEvent, Sample, TaskLog

__all__ = [
    "Mark", "LanePhase", "TaskOutcome", "EvidenceLine", "FindingView", "PageVerdict", "LaneMark", "Span", "Series",
    "Metrics", "LogLine", "TaskFacts", "Lane", "JobMarker", "ReportPage", "build_page", "parse_evidence",
    "task_sort_key", "compress_tasks", "GROUP_MIN_TASKS",
]

GROUP_MIN_TASKS = 12   # up to this many tasks every task keeps its own lane: small jobs read best task by task
TAIL_CULPRIT = 200     # log lines shown for the culprit (all the bundle keeps)
TAIL_OTHER = 40        # ... and for every other task
MAX_STACK_LINES = 200
_RUNNING_STATES = frozenset({"running", "sleeping", "stopped", "disk-sleep", "idle", "tracing-stop"})
_FROZEN_STATES = frozenset({"stopped", "disk-sleep", "tracing-stop"})
FROZEN_MIN_DISK_SLEEP_S = 3.0   # shorter D-state stretches are I/O (imports at start-up), not a frozen task


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


_EVENT_MARKS = {"start": Mark.START, "connected": Mark.CONNECTED, "first_step": Mark.FIRST_STEP,
                "stall_suspected": Mark.STALL, "hang_declared": Mark.HANG, "fault": Mark.FAULT,
                "signal_sent": Mark.SIGNAL, "exit": Mark.EXIT, "memory_warning": Mark.WARNING,
                "threshold": Mark.WARNING}
_MARK_LABELS = {Mark.START: "started", Mark.CONNECTED: "joined the cluster", Mark.FIRST_STEP: "first step",
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
    OK = "ok"                 # exited 0 on its own
    FAILED = "failed"         # exited non-zero or died from a signal on its own
    STOPPED = "stopped"       # stopped by distdoctor (after a hang or a peer's failure)
    RUNNING = "running"       # still alive when the record ends
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class EvidenceLine:
    """One evidence line of a finding, split for display."""

    task: str | None
    clock: str
    text: str
    consequence: bool = False
    where: str | None = None     # file:line of the log the line was read from


@dataclass(frozen=True)
class FindingView:
    code: str
    category: str
    severity: str
    culprit: str | None
    summary: str
    remedy: str
    evidence: tuple[EvidenceLine, ...] = ()
    at: float | None = None
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageVerdict:
    """The top of the page. ``culprits`` is the culprit, or the candidates when it could not be decided."""

    status: str
    title: str
    headline: str
    root: FindingView | None
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
    findings: tuple[FindingView, ...]   # every finding but the root cause
    lanes: tuple[Lane, ...]
    t0: float
    t1: float
    markers: tuple[JobMarker, ...] = ()
    notes: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    attempts: tuple = ()               # report.attempts.AttemptBand, one per attempt of a restarted run
    goodput: str | None = None

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(t for lane in self.lanes for t in lane.members)


# -- evidence and findings ------------------------------------------------

_EVIDENCE = re.compile(r"^\[(\S+) ([0-9:.\-]+)\](?: \((consequence|context|cause)\))?\s?(.*)$", re.S)


def parse_evidence(raw: str) -> EvidenceLine:
    """Split ``[worker:1 12:03:04.120] (consequence) text`` into its parts."""
    m = _EVIDENCE.match(raw)
    if not m:
        return EvidenceLine(task=None, clock="", text=raw)
    task = None if m.group(1) == "job" else m.group(1)
    return EvidenceLine(task=task, clock=m.group(2), text=m.group(4), consequence=m.group(3) == "consequence")


def evidence_lines(obj: dict) -> tuple[EvidenceLine, ...]:
    """A finding's evidence: the typed ``evidence_detail`` when present, else the rendered strings parsed back."""
    detail = obj.get("evidence_detail")
    if isinstance(detail, list) and detail and all(isinstance(d, dict) for d in detail):
        out = []
        for d in detail:
            ts = _num(d.get("ts"))
            where = d.get("where") if isinstance(d.get("where"), str) else None
            out.append(EvidenceLine(task=d.get("task") if isinstance(d.get("task"), str) else None,
                                    clock=format_clock(ts) if ts is not None else (where or ""),
                                    text=str(d.get("text") or ""), consequence=d.get("role") == "consequence",
                                    where=where))
        return tuple(out)
    return tuple(parse_evidence(str(e)) for e in obj.get("evidence") or [] if isinstance(e, (str, int, float)))


def _finding(obj: Any) -> FindingView | None:
    if not isinstance(obj, dict):
        return None
    return FindingView(code=str(obj.get("code") or ""), category=str(obj.get("category") or "other"),
                       severity=str(obj.get("severity") or "error"),
                       culprit=obj.get("culprit") if isinstance(obj.get("culprit"), str) else None,
                       summary=str(obj.get("summary") or ""), remedy=str(obj.get("remedy") or ""),
                       evidence=evidence_lines(obj),
                       at=_num(obj.get("at")),
                       candidates=tuple(str(c) for c in obj.get("candidates") or () if isinstance(c, str)))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


_TITLES = {"succeeded": "Succeeded", "failed": "Failed", "hung": "Hung", "running": "Running", "unknown": "No failure found"}


def _verdict(diag: dict, n_tasks: int) -> tuple[PageVerdict, tuple[FindingView, ...]]:
    status = diag["status"]
    root = _finding(diag.get("root_cause"))
    findings = [f for f in (_finding(x) for x in diag.get("findings") or ()) if f is not None]
    others = tuple(f for f in findings if root is None or (f.code, f.culprit, f.summary) != (root.code, root.culprit, root.summary))
    culprits: tuple[str, ...] = ()
    if root is not None:
        culprits = (root.culprit,) if root.culprit else root.candidates
    if root is not None and root.summary:
        headline = root.summary
    elif status == "succeeded":
        headline = f"All {n_tasks} tasks finished normally." if n_tasks != 1 else "The task finished normally."
    elif status == "running":
        headline = "The job is still running."
    else:
        headline = "No root cause was identified; see the findings and logs below."
    return PageVerdict(status=status, title=_TITLES.get(status, status.title()), headline=headline, root=root,
                   culprits=culprits, detected_at=_num(diag.get("detected_at"))), others


# -- tasks ------------------------------------------------------------------

_JOB_ORDER = {"chief": 0, "master": 0, "worker": 1, "ps": 2, "evaluator": 3}


def task_sort_key(task: str) -> tuple:
    job, _, idx = task.partition(":")
    return (_JOB_ORDER.get(job, 9), job, int(idx) if idx.isdigit() else 0, idx)


def compress_tasks(tasks: Iterable[str]) -> str:
    """``worker:3..63`` as ``worker:3-63``; gaps as ``worker:3-5,7,9-63``; several jobs joined by ``; ``."""
    by_job: dict[str, list] = {}
    for t in sorted(tasks, key=task_sort_key):
        job, _, idx = t.partition(":")
        by_job.setdefault(job, []).append(int(idx) if idx.isdigit() else idx)
    parts = []
    for job, idxs in by_job.items():
        nums = [i for i in idxs if isinstance(i, int)]
        runs: list[str] = []
        i = 0
        while i < len(nums):
            j = i
            while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
                j += 1
            runs.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
            i = j + 1
        runs += [str(x) for x in idxs if not isinstance(x, int)]
        parts.append(f"{job}:{','.join(runs)}")
    return "; ".join(parts)


def _outcome(rep: dict, stopped_by_us: bool, last_state: str | None) -> TaskOutcome:
    code, sig = rep.get("exit_code"), rep.get("signal")
    if stopped_by_us:
        return TaskOutcome.STOPPED
    if sig or (isinstance(code, int) and code != 0):
        return TaskOutcome.FAILED
    if code == 0:
        return TaskOutcome.OK
    state = rep.get("state") or last_state
    if state in _RUNNING_STATES:
        return TaskOutcome.RUNNING
    return TaskOutcome.UNKNOWN


def _tail(log: TaskLog | None, n: int) -> tuple[LogLine, ...]:
    if log is None:
        return ()
    return tuple(LogLine(clock=format_clock(ts) if ts is not None else "", text=text) for ts, text in log.tail[-n:])


def _line_before(log: TaskLog | None, ts: float) -> str:
    """The task's last log line at or before ``ts`` (what it said last before a stall)."""
    if log is None:
        return ""
    best = ""
    for t, text in log.tail:
        if t is not None and t > ts:
            break
        if text.strip():
            best = text
    return best


def _stack(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    lines = text.splitlines()
    if len(lines) > MAX_STACK_LINES:
        lines = lines[:MAX_STACK_LINES] + [f"... ({len(lines) - MAX_STACK_LINES} more lines)"]
    return "\n".join(lines)


def _metrics(samples: list[Sample], log: TaskLog | None, ended: float | None, open_end: bool) -> Metrics:
    live = [s for s in samples if s.state != "exited"]
    # One counter per task, the finer one: ``steps`` may move only at epoch ends (Keras verbose=2)
    # while ``calls`` (TF function calls) moves every step, or the other way round.
    by_steps = [(s.ts, s.steps) for s in live if s.steps is not None]
    by_calls = [(s.ts, s.calls) for s in live if s.calls is not None]
    counts = max((by_steps, by_calls), key=lambda pts: len({c for _, c in pts}))
    if len({c for _, c in counts}) < 2 and log is not None and log.progress:
        counts = list(log.progress)
    steps = step_times(counts, ends_at=ended, open_end=open_end)
    rss = [(s.ts, float(s.rss)) for s in samples if s.rss is not None and s.state != "exited"]
    return Metrics(step_time=Series(downsample(steps)), rss=Series(downsample(rss)),
                   cpu=Series(downsample(cpu_percent(samples))))


# -- marks and spans ------------------------------------------------------------

def _log_mark(e: LogEvent) -> LaneMark | None:
    if e.ts is None:
        return None
    if e.kind in FAULT_KINDS:
        return LaneMark(Mark.FAULT, e.ts, e.kind.value.replace("_", " "), line=e.text)
    if e.kind in SYMPTOM_KINDS:
        return LaneMark(Mark.SYMPTOM, e.ts, "peer symptom" if e.kind == EventKind.PEER_SYMPTOM else
                        "waiting for peers" if e.kind == EventKind.WAITING_FOR_TASKS else "TensorFlow error or warning",
                        line=e.text)
    if e.kind == EventKind.EPOCH:
        return LaneMark(Mark.EPOCH, e.ts, f"epoch {e.epoch}/{e.total}", line=e.text)
    return None


def _first(events: Iterable[LogEvent], kinds) -> LogEvent | None:
    return next((e for e in events if e.kind in kinds and e.ts is not None), None)


def _connected(events: Iterable[LogEvent]) -> LogEvent | None:
    """The line that shows a task joined the cluster (a started server is the next best thing)."""
    return _first(events, {EventKind.CLUSTER_CONNECTED}) or _first(events, CONNECT_KINDS)


def _joins(text: str) -> bool:
    """``text`` (a "connected" event's log line) says that this task joined the cluster.

    Bundles of older runs also hold "connected" events for lines that do not:
    a printed TF_CONFIG, or the coordination leader registering another task.
    """
    found = classify(text.strip())
    return found is not None and found[0] == EventKind.CLUSTER_CONNECTED


def _joined(logs: dict[str, TaskLog], events: dict[str, list[JobEvent]]) -> frozenset[str]:
    """Tasks whose own records show them in the cluster (joined it, or made steps)."""
    out = set()
    for task, log in logs.items():
        if any(e.kind in (EventKind.CLUSTER_CONNECTED, EventKind.PROGRESS) for e in log.events) or log.progress:
            out.add(task)
    for task, evs in events.items():
        if any((e.kind == "connected" and _joins(e.text)) or e.kind == "first_step" for e in evs):
            out.add(task)
    return frozenset(out)


def _collapse_symptoms(marks: list[LaneMark], window: float) -> list[LaneMark]:
    out: list[LaneMark] = []
    for m in marks:
        prev = out[-1] if out else None
        if m.kind == Mark.SYMPTOM and prev is not None and prev.kind == Mark.SYMPTOM and m.ts - prev.ts <= window:
            out[-1] = LaneMark(prev.kind, prev.ts, prev.label, prev.detail, prev.line, prev.count + 1)
        else:
            out.append(m)
    return out


def _task_marks(events: list[JobEvent], log: TaskLog | None, samples: list[Sample],
                rep: dict, window: float, joined: frozenset[str] = frozenset()) -> list[LaneMark]:
    log_events = log.events if log is not None else ()
    marks: list[LaneMark] = []
    have = set()
    for ev in events:
        kind = _EVENT_MARKS.get(ev.kind)
        if kind is None:
            continue
        line = ""
        if kind == Mark.CONNECTED:
            # One mark per task: its first line that says it joined.
            if Mark.CONNECTED in have or not _joins(ev.text):
                continue
            e = next((x for x in log_events if x.kind == EventKind.CLUSTER_CONNECTED and ev.text.strip() in x.text),
                     None)
            line = e.text if e is not None else ev.text
        elif kind == Mark.FIRST_STEP:
            e = _first(log_events, {EventKind.PROGRESS})
            line = e.text if e is not None else ""
        elif kind in (Mark.STALL, Mark.HANG, Mark.EXIT, Mark.SIGNAL):
            line = _line_before(log, ev.ts)
        label = ev.text if kind == Mark.EXIT and ev.text else _MARK_LABELS[kind]
        detail = "" if label == ev.text or (line and ev.text in line) else ev.text
        if kind in (Mark.STALL, Mark.HANG):
            doing = _doing_at(samples, ev.ts)
            detail = f"{detail} ({doing})" if doing and detail else detail or doing
        marks.append(LaneMark(kind, ev.ts, label, detail, line))
        have.add(kind)
    # What events.jsonl lacks (older bundles, plain logs) comes from samples and the log.
    if Mark.START not in have:
        ts = samples[0].ts if samples else (log.first_ts if log is not None else None)
        if ts is not None:
            marks.append(LaneMark(Mark.START, ts, _MARK_LABELS[Mark.START]))
    if Mark.CONNECTED not in have:
        e = _connected(log_events)
        if e is not None:
            label = _MARK_LABELS[Mark.CONNECTED] if e.kind == EventKind.CLUSTER_CONNECTED else "started its server"
            marks.append(LaneMark(Mark.CONNECTED, e.ts, label, line=e.text))
    if Mark.FIRST_STEP not in have:
        e = _first(log_events, {EventKind.PROGRESS})
        s = next((s for s in samples if (s.steps or s.calls)), None)
        if e is not None and (s is None or e.ts <= s.ts):
            marks.append(LaneMark(Mark.FIRST_STEP, e.ts, _MARK_LABELS[Mark.FIRST_STEP], line=e.text))
        elif s is not None:
            marks.append(LaneMark(Mark.FIRST_STEP, s.ts, _MARK_LABELS[Mark.FIRST_STEP]))
    # A start-up "Waiting for 1/2 tasks to connect" that the stragglers answered is no symptom.
    open_waits = {id(w) for w in unresolved_waits(log_events, joined)}
    for e in log_events:
        if e.kind == EventKind.WAITING_FOR_TASKS and id(e) not in open_waits:
            continue
        m = _log_mark(e)
        if m is None:
            continue
        twin = next((i for i, f in enumerate(marks) if f.kind == Mark.FAULT and not f.line and f.detail
                     and abs(f.ts - m.ts) <= 2.0 and (f.detail in m.line or m.line in f.detail)), None)
        if twin is not None:   # events.jsonl already has this fault: one mark, with its log line
            f = marks[twin]
            marks[twin] = LaneMark(f.kind, f.ts, m.label, f.detail if f.detail != m.line else "", m.line)
            continue
        marks.append(m)
    if Mark.EXIT not in have and (rep.get("exit_code") is not None or rep.get("signal")):
        # No exit event: the task lived at least until its last sample and its last log line.
        seen = [t for t in (samples[-1].ts if samples else None, log.last_ts if log is not None else None)
                if t is not None]
        ts = max(seen) if seen else None
        if ts is not None:
            how = f"signal {rep['signal']}" if rep.get("signal") else f"exit code {rep['exit_code']}"
            marks.append(LaneMark(Mark.EXIT, ts, how, line=_line_before(log, ts)))
    marks.sort(key=lambda m: (m.ts, list(Mark).index(m.kind)))
    return _collapse_symptoms(marks, window)


def _doing_at(samples: list[Sample], ts: float) -> str:
    """What the last sample at or before ``ts`` says the task was doing."""
    i = bisect_right([s.ts for s in samples], ts) - 1
    if i < 0:
        return ""
    s = samples[i]
    parts = []
    if s.where:
        parts.append({"tf": "inside TensorFlow", "python": "in Python code", "serving": "serving peers"}.get(s.where, s.where))
    if s.in_call:
        parts.append(f"call {s.in_call}")
    if s.location:
        parts.append(f"at {s.location}")
    return ", ".join(parts)


def _spans(marks: list[LaneMark], samples: list[Sample], culprit: bool, idle_at_end: bool,
           last_progress: float | None, end: float) -> tuple[Span, ...]:
    """Phases of one task between its marks. ``idle_at_end``: it sat without progress until stopped."""
    at = {m.kind: m.ts for m in reversed(marks)}   # first occurrence of each kind
    start = at.get(Mark.START)
    if start is None:
        return ()
    ended = at.get(Mark.EXIT, end)
    cuts: list[tuple[float, LanePhase]] = [(start, LanePhase.STARTING)]
    if Mark.CONNECTED in at:
        cuts.append((at[Mark.CONNECTED], LanePhase.CONNECTED))
    if Mark.FIRST_STEP in at:
        cuts.append((at[Mark.FIRST_STEP], LanePhase.TRAINING))
    stall = at.get(Mark.STALL, at.get(Mark.HANG))
    if Mark.FIRST_STEP in at and last_progress is not None and (idle_at_end or stall is not None):
        # Progress stopped at the last step (never before the first one, which samples may see late),
        # which is often well before anyone noticed.
        stopped = max(last_progress, at[Mark.FIRST_STEP])
        if stall is None or stopped < stall:
            stall = stopped
    if stall is not None:
        cuts.append((stall, LanePhase.STALLED if culprit else LanePhase.WAITING))
    cuts.sort(key=lambda c: c[0])
    spans = []
    for (t, phase), (t_next, _) in zip(cuts, cuts[1:] + [(ended, None)]):
        t_end = min(t_next, ended)
        if t_end > t:
            spans.append(Span(t, t_end, phase))
    # Frozen stretches (SIGSTOP, D state) from the samples, drawn over the rest. Uninterruptible sleep
    # alone is normal for a moment (reading files while importing at start-up): only a long one is frozen.
    run_start, stopped = None, False
    for s in samples:
        if s.state in _FROZEN_STATES:
            if run_start is None:
                run_start, stopped = s.ts, False
            stopped = stopped or s.state != "disk-sleep"
        elif run_start is not None:
            if stopped or s.ts - run_start >= FROZEN_MIN_DISK_SLEEP_S:
                spans.append(Span(run_start, s.ts, LanePhase.FROZEN))
            run_start = None
    if run_start is not None and (stopped or max(ended, run_start) - run_start >= FROZEN_MIN_DISK_SLEEP_S):
        spans.append(Span(run_start, max(ended, run_start), LanePhase.FROZEN))
    return tuple(spans)


# -- the page ---------------------------------------------------------------------

@dataclass(frozen=True)
class _Task:
    facts: TaskFacts
    marks: tuple[LaneMark, ...]
    spans: tuple[Span, ...]
    metrics: Metrics
    culprit: bool

    def signature(self) -> tuple:
        f = self.facts
        kinds = tuple(sorted({m.kind.value for m in self.marks}))
        return (f.task.partition(":")[0], f.outcome, f.exit_code, f.signal, f.state, kinds)


def build_page(data: BundleData, group_min_tasks: int = GROUP_MIN_TASKS, title: str | None = None) -> ReportPage:
    """The page for one bundle's records. Pure: reads nothing but ``data``."""
    diag = data.diagnosis
    reps = {k: v for k, v in (diag.get("tasks") or {}).items() if isinstance(v, dict)}
    logs = data.logs or {}
    samples: dict[str, list[Sample]] = {}
    for s in data.samples:
        samples.setdefault(s.task, []).append(s)
    events: dict[str, list[JobEvent]] = {}
    for e in data.events:
        if e.task:
            events.setdefault(e.task, []).append(e)
    names = sorted(set(reps) | set(logs) | set(samples) | set(events), key=task_sort_key)
    verdict, others = _verdict(diag, len(names))

    t0, t1 = _time_range(data, logs)
    window = max(1.0, (t1 - t0) / 100)   # symptoms closer than 1% of the width are one mark
    joined = _joined(logs, events)
    tasks: dict[str, _Task] = {}
    for name in names:
        rep = reps.get(name, {})
        ss, log = samples.get(name, []), logs.get(name)
        evs = events.get(name, [])
        culprit = name in verdict.culprits
        stopped = any(e.kind == "signal_sent" for e in evs)
        last = ss[-1] if ss else None
        marks = _task_marks(evs, log, ss, rep, window, joined)
        ended = next((m.ts for m in marks if m.kind == Mark.EXIT), None)
        last_progress = _num(rep.get("last_progress_at"))
        exit_code = rep.get("exit_code") if isinstance(rep.get("exit_code"), int) else None
        peak = rep.get("peak_rss_bytes") if isinstance(rep.get("peak_rss_bytes"), int) else None
        if peak is None and any(s.rss is not None for s in ss):
            peak = max(s.rss for s in ss if s.rss is not None)
        facts = TaskFacts(
            task=name, state=str(rep.get("state") or (last.state if last else "unknown")),
            outcome=_outcome(rep, stopped, last.state if last else None), exit_code=exit_code,
            signal=str(rep["signal"]) if rep.get("signal") else None,
            steps=rep.get("steps") if isinstance(rep.get("steps"), int) else (last.steps if last else None),
            pid=rep.get("pid") if isinstance(rep.get("pid"), int) else None, peak_rss=peak,
            last_progress_at=last_progress, where=last.where if last else None,
            in_call=last.in_call if last else None, location=last.location if last else None,
            stack=_stack(rep.get("stack")), log_path=log.path if log is not None else rep.get("log"),
            log_lines=log.lines if log is not None else 0,
            tail=_tail(log, TAIL_CULPRIT if culprit else TAIL_OTHER))
        spans = _spans(marks, ss, culprit, facts.outcome != TaskOutcome.OK, last_progress, t1)
        metrics = _metrics(ss, log, ended, open_end=facts.outcome != TaskOutcome.OK)
        tasks[name] = _Task(facts, tuple(marks), spans, metrics, culprit)

    lanes = _lanes(tasks, names, group_min_tasks, t0, t1)
    return ReportPage(title=title or f"distdoctor report: {verdict.title.lower()}", source=data.source,
                      path=data.path, verdict=verdict, findings=others, lanes=lanes, t0=t0, t1=t1,
                      markers=_markers(data.events, verdict, t0, t1),
                      notes=tuple(str(n) for n in diag.get("notes") or ()), caveats=data.caveats,
                      attempts=attempt_bands(diag), goodput=goodput_line(diag))


def _time_range(data: BundleData, logs: dict[str, TaskLog]) -> tuple[float, float]:
    times = [s.ts for s in data.samples] + [e.ts for e in data.events]
    for log in logs.values():
        times += [t for t in (log.first_ts, log.last_ts) if t is not None]
    if data.source == "bundle" and _num(data.diagnosis.get("detected_at")) is not None and times:
        times.append(float(data.diagnosis["detected_at"]))
    if not times:
        d = _num(data.diagnosis.get("detected_at")) or 0.0
        return d, d + 1.0
    t0, t1 = min(times), max(times)
    return t0, max(t1, t0 + 1.0)


def _markers(events: Iterable[JobEvent], verdict: PageVerdict, t0: float, t1: float) -> tuple[JobMarker, ...]:
    out = []
    seen = set()
    for e in events:
        kind = _EVENT_MARKS.get(e.kind)
        if kind in (Mark.STALL, Mark.HANG) and kind not in seen:
            seen.add(kind)
            who = f" ({e.task})" if e.task else ""
            out.append(JobMarker(e.ts, kind, _MARK_LABELS[kind] + who))
    root = verdict.root
    if root is not None and root.at is not None and t0 <= root.at <= t1:
        who = f" on {root.culprit}" if root.culprit else ""
        out.append(JobMarker(root.at, Mark.FAULT, f"problem began{who}"))
    return tuple(sorted(out, key=lambda m: m.ts))


def _lanes(tasks: dict[str, _Task], names: list[str], group_min: int, t0: float, t1: float) -> tuple[Lane, ...]:
    groups: dict[tuple, list[str]] = {}
    singles: list[str] = []
    for name in names:
        t = tasks[name]
        if t.culprit or len(names) <= group_min:
            singles.append(name)
        else:
            groups.setdefault(t.signature(), []).append(name)
    lanes: list[tuple[tuple, Lane]] = []
    for name in singles:
        t = tasks[name]
        lanes.append(((0 if t.culprit else 1, task_sort_key(name)),
                      Lane(name, (name,), t.culprit, t.facts.outcome, t.spans, t.marks, t.metrics, t.facts)))
    for members in groups.values():
        rep = tasks[members[0]]
        if len(members) == 1:
            lane = Lane(members[0], tuple(members), False, rep.facts.outcome, rep.spans, rep.marks, rep.metrics,
                        rep.facts)
        else:
            lane = _group_lane([tasks[m] for m in members], t0, t1)
        lanes.append(((1, task_sort_key(members[0])), lane))
    lanes.sort(key=lambda x: x[0])
    return tuple(lane for _, lane in lanes)


def _group_lane(members: list[_Task], t0: float, t1: float) -> Lane:
    rep = members[0]
    firsts: dict[Mark, list[float]] = {}
    for t in members:
        seen = set()
        for m in t.marks:
            if m.kind not in seen:
                seen.add(m.kind)
                firsts.setdefault(m.kind, []).append(m.ts)
    marks = []
    done = set()
    for m in rep.marks:
        if m.kind not in done and len(firsts.get(m.kind, ())) > 1:
            done.add(m.kind)
            ts = firsts[m.kind]
            m = LaneMark(m.kind, m.ts, m.label, m.detail, m.line, m.count, min(ts), max(ts))
        marks.append(m)
    metrics = Metrics(step_time=aggregate([t.metrics.step_time for t in members], t0, t1),
                      rss=aggregate([t.metrics.rss for t in members], t0, t1),
                      cpu=aggregate([t.metrics.cpu for t in members], t0, t1))
    names = tuple(t.facts.task for t in members)
    return Lane(compress_tasks(names), names, False, rep.facts.outcome, rep.spans, tuple(marks), metrics, rep.facts)
