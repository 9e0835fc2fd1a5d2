"""Building the page of an incident report (:func:`build_page`) from a bundle's records.

:func:`build_page` turns the :class:`~.bundle.BundleData` of a run (or of plain logs) into a
:class:`~.page.ReportPage`: the verdict from the :class:`~distdoctor.model.Diagnosis`, one lane per task (or
per group of identical tasks) with its marks and spans (:mod:`.marks`) across every attempt of a restarted run,
and each lane's metrics. Pure: no files, no clock, no processes, so it is tested from hand-built records in
milliseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from ..model import Diagnosis, JobEvent, Status, TaskReport, format_clock
from .attempts import attempt_bands, goodput_line
from .bundle import BundleData, Sample, TaskLog
from .fmt import compress_tasks, task_sort_key
from .marks import EVENT_MARKS, joined_tasks, task_marks, task_spans
from .page import (MARK_LABELS, JobMarker, Lane, LaneMark, LogLine, Mark, Metrics, PageVerdict, ReportPage, Span,
                   TaskFacts, TaskOutcome)
from .series import Series, aggregate, cpu_percent, downsample, step_times

__all__ = ["build_page", "GROUP_MIN_TASKS", "task_sort_key", "compress_tasks"]

GROUP_MIN_TASKS = 12   # up to this many tasks every task keeps its own lane: small jobs read best task by task
TAIL_CULPRIT = 200     # log lines shown for the culprit (all the bundle keeps)
TAIL_OTHER = 40        # ... and for every other task
MAX_STACK_LINES = 200
_RUNNING_STATES = frozenset({"running", "sleeping", "stopped", "disk-sleep", "idle", "tracing-stop"})
_TITLES = {"succeeded": "Succeeded", "failed": "Failed", "hung": "Hung", "running": "Running", "unknown": "No failure found"}


def _verdict(diag: Diagnosis, n_tasks: int) -> PageVerdict:
    status = diag.status.value
    root = diag.root_cause
    if root is not None and root.summary:
        headline = root.summary
    elif diag.status == Status.SUCCEEDED:
        headline = diag.finished_line if diag.tasks else \
            (f"All {n_tasks} tasks finished normally." if n_tasks != 1 else "The task finished normally.")
    elif diag.status == Status.RUNNING:
        headline = "The job is still running."
    else:
        headline = "No root cause was identified; see the findings and logs below."
    return PageVerdict(status=status, title=_TITLES.get(status, status.title()), headline=headline, root=root,
                       culprits=diag.culprits, detected_at=diag.detected_at or None)


def _outcome(rep: TaskReport, stopped_by_us: bool, last_state: str | None) -> TaskOutcome:
    if rep.stopped_at_end:     # a server stopped once the job was done: its normal end
        return TaskOutcome.OK
    if stopped_by_us:
        return TaskOutcome.STOPPED
    if rep.signal or (rep.exit_code is not None and rep.exit_code != 0):
        return TaskOutcome.FAILED
    if rep.exit_code == 0:
        return TaskOutcome.OK
    state = rep.state if rep.state != "unknown" else last_state
    if state in _RUNNING_STATES:
        return TaskOutcome.RUNNING
    return TaskOutcome.UNKNOWN


def _tail(log: TaskLog | None, n: int) -> tuple[LogLine, ...]:
    if log is None:
        return ()
    return tuple(LogLine(clock=format_clock(ts) if ts is not None else "", text=text) for ts, text in log.tail[-n:])


def _stack(text: str) -> str:
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



# -- the page ---------------------------------------------------------------------

@dataclass(frozen=True)
class _Records:
    """One attempt's records, by task: the latest attempt is the bundle's top level."""

    number: int | None              # None: the run was not restarted
    samples: dict[str, list[Sample]]
    events: dict[str, list[JobEvent]]
    logs: dict[str, TaskLog]
    tasks: dict[str, TaskReport]
    culprits: tuple[str, ...]
    end: float | None               # when the attempt ended (from the ledger)

    @staticmethod
    def of(number: int | None, samples: Iterable[Sample], events: Iterable[JobEvent], logs: dict[str, TaskLog],
           tasks: dict[str, TaskReport], culprits: tuple[str, ...], end: float | None) -> "_Records":
        by_s: dict[str, list[Sample]] = {}
        for s in samples:
            by_s.setdefault(s.task, []).append(s)
        by_e: dict[str, list[JobEvent]] = {}
        for e in events:
            if e.task:
                by_e.setdefault(e.task, []).append(e)
        return _Records(number, by_s, by_e, logs, tasks, culprits, end)

    def names(self) -> set[str]:
        return set(self.tasks) | set(self.logs) | set(self.samples) | set(self.events)


def _attempts(data: BundleData) -> list[_Records]:
    """Every attempt's records, oldest first; an earlier attempt's culprit and end come from the ledger."""
    diag = data.diagnosis
    ledger = {a.number: a for a in diag.attempts}
    out = []
    for f in data.earlier:
        a = ledger.get(f.number)
        culprits = a.root_cause.culprits if a is not None and a.root_cause is not None else ()
        out.append(_Records.of(f.number, f.samples, f.events, f.logs, f.tasks, culprits,
                               a.ended_at if a is not None else None))
    number = (diag.attempts[-1].number if diag.attempts else len(out) + 1) if out else None
    out.append(_Records.of(number, data.samples, data.events, data.logs or {}, diag.tasks, diag.culprits, None))
    return out


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


def _lane_of(name: str, att: _Records, window: float, t1: float, joined: frozenset[str]):
    """One attempt of one task: its marks, spans, the facts' raw parts."""
    rep = att.tasks.get(name, TaskReport())
    ss, evs, log = att.samples.get(name, []), att.events.get(name, []), att.logs.get(name)
    last = ss[-1] if ss else None
    stopped = any(e.kind == "signal_sent" for e in evs)
    outcome = _outcome(rep, stopped, last.state if last else None)
    marks = task_marks(evs, log, ss, rep, window, joined)
    if att.number is not None:
        marks = [replace(m, attempt=att.number, outcome=outcome if m.kind == Mark.EXIT else None) for m in marks]
    end = att.end if att.end is not None else t1
    spans = task_spans(marks, ss, name in att.culprits, outcome != TaskOutcome.OK, rep.last_progress_at, end)
    return rep, ss, log, last, outcome, marks, spans


def build_page(data: BundleData, group_min_tasks: int = GROUP_MIN_TASKS, title: str | None = None) -> ReportPage:
    """The page for one bundle's records. Pure: reads nothing but ``data``."""
    diag = data.diagnosis
    attempts = _attempts(data)
    current = attempts[-1]
    names = sorted(set().union(*(a.names() for a in attempts)), key=task_sort_key)
    verdict = _verdict(diag, len(names))

    t0, t1 = _time_range(data)
    window = max(1.0, (t1 - t0) / 100)   # symptoms closer than 1% of the width are one mark
    joined = [joined_tasks(a.logs, a.events) for a in attempts]
    tasks: dict[str, _Task] = {}
    for name in names:
        culprit = name in verdict.culprits
        marks: list[LaneMark] = []
        spans: list[Span] = []
        for att, j in zip(attempts, joined):
            rep, ss, log, last, outcome, m, s = _lane_of(name, att, window, t1, j)
            marks += m
            spans += s
        # the facts, the log tail and the metrics are the latest attempt's
        ended = next((m.ts for m in reversed(marks) if m.kind == Mark.EXIT and m.attempt == current.number), None)
        peak = rep.peak_rss_bytes
        if peak is None and any(x.rss is not None for x in ss):
            peak = max(x.rss for x in ss if x.rss is not None)
        facts = TaskFacts(
            task=name, state=rep.state if name in current.tasks else (last.state if last else "unknown"),
            outcome=outcome, exit_code=rep.exit_code, signal=rep.signal,
            steps=rep.steps if rep.steps is not None else (last.steps if last else None),
            pid=rep.pid, peak_rss=peak, last_progress_at=rep.last_progress_at, where=last.where if last else None,
            in_call=last.in_call if last else None, location=last.location if last else None,
            stack=_stack(rep.stack), log_path=log.path if log is not None else rep.log,
            log_lines=log.lines if log is not None else 0,
            tail=_tail(log, TAIL_CULPRIT if culprit else TAIL_OTHER))
        metrics = _metrics(ss, log, ended, open_end=facts.outcome != TaskOutcome.OK)
        tasks[name] = _Task(facts, tuple(marks), tuple(spans), metrics, culprit)

    lanes = _lanes(tasks, names, group_min_tasks, t0, t1)
    return ReportPage(title=title or f"distdoctor report: {verdict.title.lower()}", source=data.source,
                      path=data.path, verdict=verdict, findings=diag.others(), lanes=lanes, t0=t0, t1=t1,
                      markers=_markers(data, verdict, t0, t1), notes=diag.notes, caveats=data.caveats,
                      attempts=attempt_bands(diag), goodput=goodput_line(diag))


def _time_range(data: BundleData) -> tuple[float, float]:
    parts: list[tuple[Iterable[Sample], Iterable[JobEvent], Iterable[TaskLog]]] = [
        (f.samples, f.events, f.logs.values()) for f in data.earlier]
    parts.append((data.samples, data.events, (data.logs or {}).values()))
    times: list[float] = []
    for samples, events, logs in parts:
        times += [s.ts for s in samples] + [e.ts for e in events]
        for log in logs:
            times += [t for t in (log.first_ts, log.last_ts) if t is not None]
    detected = data.diagnosis.detected_at or None
    if data.source == "bundle" and detected is not None and times:
        times.append(detected)
    if not times:
        d = detected or 0.0
        return d, d + 1.0
    t0, t1 = min(times), max(times)
    return t0, max(t1, t0 + 1.0)


def _markers(data: BundleData, verdict: PageVerdict, t0: float, t1: float) -> tuple[JobMarker, ...]:
    """Stall suspected and hang declared (the first of each per attempt), each restart, and when the problem began."""
    out = []
    for number, events in [(f.number, f.events) for f in data.earlier] + [(None, data.events)]:
        seen = set()
        for e in events:
            kind = EVENT_MARKS.get(e.kind)
            if kind in (Mark.STALL, Mark.HANG) and kind not in seen:
                seen.add(kind)
                who = f" ({e.task})" if e.task else ""
                out.append(JobMarker(e.ts, kind, MARK_LABELS[kind] + who))
            elif e.kind == "attempt" and e.task is None and data.earlier:
                out.append(JobMarker(e.ts, Mark.START, e.text or "a new attempt starts"))
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
            m = replace(m, first=min(ts), last=max(ts))
        marks.append(m)
    metrics = Metrics(step_time=aggregate([t.metrics.step_time for t in members], t0, t1),
                      rss=aggregate([t.metrics.rss for t in members], t0, t1),
                      cpu=aggregate([t.metrics.cpu for t in members], t0, t1))
    names = tuple(t.facts.task for t in members)
    return Lane(compress_tasks(names), names, False, rep.facts.outcome, rep.spans, tuple(marks), metrics, rep.facts)
