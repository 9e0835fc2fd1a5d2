"""The marks and spans of one task's lane, from its lifecycle events, its log and its samples (pure).

``events.jsonl`` says when distdoctor saw a task start, join, stall, fault and exit; the log adds what the task
said (its faults, its peers' symptoms, epochs); samples add what a log cannot show (a process frozen by SIGSTOP or
in uninterruptible sleep). What events.jsonl lacks (older bundles, plain logs) comes from samples and the log.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Iterable

from ..diagnose.events import EventKind, LogEvent, unresolved_waits
from ..diagnose.logparse import classify
from ..model import JobEvent, TaskReport
from .bundle import CONNECT_KINDS, FAULT_KINDS, SYMPTOM_KINDS, Sample, TaskLog
from .page import MARK_LABELS, LaneMark, LanePhase, Mark, Span

__all__ = ["EVENT_MARKS", "task_marks", "task_spans", "joined_tasks", "line_before"]

_FROZEN_STATES = frozenset({"stopped", "disk-sleep", "tracing-stop"})
FROZEN_MIN_DISK_SLEEP_S = 3.0   # shorter D-state stretches are I/O (imports at start-up), not a frozen task
EVENT_MARKS = {"start": Mark.START, "connected": Mark.CONNECTED, "first_step": Mark.FIRST_STEP,
                "stall_suspected": Mark.STALL, "hang_declared": Mark.HANG, "fault": Mark.FAULT, "recognised": Mark.FAULT,
                "signal_sent": Mark.SIGNAL, "exit": Mark.EXIT, "memory_warning": Mark.WARNING,
                "threshold": Mark.WARNING}


def line_before(log: TaskLog | None, ts: float) -> str:
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


def joined_tasks(logs: dict[str, TaskLog], events: dict[str, list[JobEvent]]) -> frozenset[str]:
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


def task_marks(events: list[JobEvent], log: TaskLog | None, samples: list[Sample],
                rep: TaskReport, window: float, joined: frozenset[str] = frozenset()) -> list[LaneMark]:
    log_events = log.events if log is not None else ()
    marks: list[LaneMark] = []
    have = set()
    for ev in events:
        kind = EVENT_MARKS.get(ev.kind)
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
            line = line_before(log, ev.ts)
        label = ev.text if kind == Mark.EXIT and ev.text else MARK_LABELS[kind]
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
            marks.append(LaneMark(Mark.START, ts, MARK_LABELS[Mark.START]))
    if Mark.CONNECTED not in have:
        e = _connected(log_events)
        if e is not None:
            label = MARK_LABELS[Mark.CONNECTED] if e.kind == EventKind.CLUSTER_CONNECTED else "started its server"
            marks.append(LaneMark(Mark.CONNECTED, e.ts, label, line=e.text))
    if Mark.FIRST_STEP not in have:
        e = _first(log_events, {EventKind.PROGRESS})
        s = next((s for s in samples if (s.steps or s.calls)), None)
        if e is not None and (s is None or e.ts <= s.ts):
            marks.append(LaneMark(Mark.FIRST_STEP, e.ts, MARK_LABELS[Mark.FIRST_STEP], line=e.text))
        elif s is not None:
            marks.append(LaneMark(Mark.FIRST_STEP, s.ts, MARK_LABELS[Mark.FIRST_STEP]))
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
    if Mark.EXIT not in have and (rep.exit_code is not None or rep.signal):
        # No exit event: the task lived at least until its last sample and its last log line.
        seen = [t for t in (samples[-1].ts if samples else None, log.last_ts if log is not None else None)
                if t is not None]
        ts = max(seen) if seen else None
        if ts is not None:
            how = f"signal {rep.signal}" if rep.signal else f"exit code {rep.exit_code}"
            marks.append(LaneMark(Mark.EXIT, ts, how, line=line_before(log, ts)))
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


def task_spans(marks: list[LaneMark], samples: list[Sample], culprit: bool, idle_at_end: bool,
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
