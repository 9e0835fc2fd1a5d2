"""Reading a run bundle (or plain logs) into plain records: the report's only I/O.

A bundle is the folder ``distdoctor run`` writes: ``diagnosis.json``,
``logs/<job>-<index>.log``, ``samples.jsonl`` and ``events.jsonl``. Only
``diagnosis.json`` is required; a bundle from an older run, or one cut short,
may lack the rest, and the report then shows what it can (a caveat says what
is missing).

Everything read is bounded so that a 256-task, hour-long run stays cheap: a
log contributes its last :data:`TAIL_MAX` lines and its *notable* events
(lifecycle, faults, a capped number of symptoms, a thinned progress
trajectory), never all of its lines. The page itself is computed from these
records by the pure :func:`distdoctor.report.data.build_page`.
"""
from __future__ import annotations

import json
import math
import os
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..diagnose.events import EventKind, LogEvent
from ..diagnose.logparse import TaskLogParser, strip_ansi
from ..errors import InputError
from ..model import Diagnosis, JobEvent, SchemaError, TaskReport
from ..safety import redact_text

__all__ = ["Sample", "JobEvent", "TaskLog", "AttemptFiles", "BundleData", "load_bundle", "read_log",
           "bundle_from_observation",
           "is_bundle", "TAIL_MAX"]

TAIL_MAX = 200           # lines kept from the end of each log (the culprit shows all of them)
MAX_SYMPTOMS = 30        # symptom events kept per task: repeated symptoms say nothing new
MAX_FAULTS = 50          # fault lines kept per task (a log can repeat one error thousands of times)
MAX_PROGRESS = 600       # progress points kept per task (thinned evenly beyond that)
MAX_EPOCHS = 200
MAX_PEER_JOINS = 600     # "task:N has connected" lines kept per log (the coordination leader's: one per task)
MAX_SAMPLES = 1500       # samples kept per task: an hour at 2 Hz is thinned to one every ~2.4 s
_LOG_NAME = re.compile(r"^([A-Za-z_]+)-(\d+)\.log$")

# Log events a report shows on a lane; everything else in a log is context.
FAULT_KINDS = frozenset({EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL, EventKind.CHECK_FAILED, EventKind.OOM_TENSOR,
                         EventKind.OOM_GPU, EventKind.OOM_KILLER, EventKind.PORT_IN_USE, EventKind.NAN_LOSS,
                         EventKind.NCCL_ERROR, EventKind.CUDA_ERROR, EventKind.RESOURCE, EventKind.PREEMPTION})
SYMPTOM_KINDS = frozenset({EventKind.PEER_SYMPTOM, EventKind.WAITING_FOR_TASKS, EventKind.TF_ERROR})
CONNECT_KINDS = frozenset({EventKind.CLUSTER_CONNECTED, EventKind.SERVER_STARTED})


@dataclass(frozen=True, slots=True)
class Sample:
    """One periodic sample of one task (a line of ``samples.jsonl``)."""

    ts: float
    task: str
    state: str = "unknown"
    rss: int | None = None
    cpu: float | None = None          # cumulative CPU seconds
    calls: int | None = None          # TF function calls completed
    steps: int | None = None
    in_call: str | None = None
    where: str | None = None
    location: str | None = None


@dataclass(frozen=True)
class TaskLog:
    """What a report keeps of one task's log."""

    path: str
    tail: tuple[tuple[float | None, str], ...] = ()  # last lines as (time, text), newest last; text
                                                     # without distdoctor's prefix, ANSI codes or CRs
    lines: int = 0                    # lines in the whole log
    events: tuple[LogEvent, ...] = ()  # notable events only, in order
    progress: tuple[tuple[float, int], ...] = ()  # (ts, cumulative step) from progress lines, thinned
    first_ts: float | None = None
    last_ts: float | None = None


@dataclass(frozen=True)
class AttemptFiles:
    """The records of one earlier attempt of a restarted run: the bundle's ``attempts/<number>/``."""

    number: int
    samples: tuple[Sample, ...] = ()
    events: tuple[JobEvent, ...] = ()
    logs: dict[str, TaskLog] = field(default_factory=dict)
    tasks: dict[str, TaskReport] = field(default_factory=dict)   # its diagnosis.json's, where it was kept


@dataclass(frozen=True)
class BundleData:
    """Everything a report is built from. ``diagnosis`` is ``diagnosis.json`` read back; the top-level records
    are the latest attempt's, ``earlier`` the attempts before it (a restarted run), oldest first."""

    path: str
    diagnosis: Diagnosis
    samples: tuple[Sample, ...] = ()
    events: tuple[JobEvent, ...] = ()
    logs: dict[str, TaskLog] | None = None
    source: str = "bundle"            # "bundle" or "logs"
    caveats: tuple[str, ...] = ()
    earlier: tuple[AttemptFiles, ...] = ()


def is_bundle(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "diagnosis.json"))


def load_bundle(path: str) -> BundleData:
    """Read a run bundle folder; raise :class:`InputError` when it is not one."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such folder; expected a run bundle written by `distdoctor run`")
    if not os.path.isdir(path):
        raise InputError(f"{path}: not a folder; expected a run bundle (a folder with diagnosis.json)")
    diag_path = os.path.join(path, "diagnosis.json")
    if not os.path.isfile(diag_path):
        raise InputError(f"{path}: no diagnosis.json, so this is not a run bundle; "
                         "pass the bundle folder of `distdoctor run`, or the log files themselves")
    try:
        with open(diag_path, encoding="utf-8", errors="replace") as fh:
            diagnosis = json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(f"{diag_path}: not valid JSON ({exc.msg} at line {exc.lineno}); "
                         "the run may have been cut off while writing it") from None
    except OSError as exc:
        raise InputError(f"{diag_path}: cannot read it ({exc.strerror or exc})") from None
    diagnosis = _model(diagnosis, diag_path)
    caveats: list[str] = []
    samples, bad_s = _read_jsonl(os.path.join(path, "samples.jsonl"), _sample, per_task_cap=MAX_SAMPLES)
    events, bad_e = _read_jsonl(os.path.join(path, "events.jsonl"), _event)
    if samples is None:
        caveats.append("no samples.jsonl: step time, memory and CPU charts are not available")
    if events is None:
        caveats.append("no events.jsonl: the timeline is rebuilt from the logs")
    if bad_s or bad_e:
        caveats.append(f"skipped {bad_s + bad_e} unreadable line(s) in samples.jsonl/events.jsonl")
    logs = _bundle_logs(path, diagnosis)
    if not logs:
        caveats.append("no task logs in the bundle: log tails are not available")
    return BundleData(path=os.path.abspath(path), diagnosis=diagnosis, samples=tuple(samples or ()),
                      events=tuple(events or ()), logs=logs, source="bundle", caveats=tuple(caveats),
                      earlier=_earlier_attempts(path))


def _earlier_attempts(path: str) -> tuple[AttemptFiles, ...]:
    """``attempts/<n>/`` of a restarted run (``run`` moves each attempt's files there), oldest first."""
    top = os.path.join(path, "attempts")
    try:
        numbers = sorted(int(n) for n in os.listdir(top) if n.isdigit() and os.path.isdir(os.path.join(top, n)))
    except OSError:
        return ()
    out = []
    for n in numbers:
        d = os.path.join(top, str(n))
        samples, _ = _read_jsonl(os.path.join(d, "samples.jsonl"), _sample, per_task_cap=MAX_SAMPLES)
        events, _ = _read_jsonl(os.path.join(d, "events.jsonl"), _event)
        tasks: dict[str, TaskReport] = {}
        try:
            with open(os.path.join(d, "diagnosis.json"), encoding="utf-8", errors="replace") as fh:
                tasks = Diagnosis.from_json(json.load(fh)).tasks
        except (OSError, ValueError):
            pass
        logs = {}
        if os.path.isdir(os.path.join(d, "logs")):
            for name in sorted(os.listdir(os.path.join(d, "logs"))):
                m = _LOG_NAME.match(name)
                if m:
                    task = f"{m.group(1)}:{m.group(2)}"
                    logs[task] = read_log(os.path.join(d, "logs", name), task)
        out.append(AttemptFiles(n, tuple(samples or ()), tuple(events or ()), logs, tasks))
    return tuple(out)


def _model(doc: Any, where: str) -> Diagnosis:
    """The diagnosis a ``diagnosis.json`` document holds; what was wrong with it in one line."""
    try:
        return Diagnosis.from_json(doc)
    except SchemaError as exc:
        raise InputError(f"{where}: {exc}") from None


def _read_jsonl(path: str, convert, per_task_cap: int | None = None) -> tuple[list | None, int]:
    """Records of a JSON-lines file (None when absent) and the count of lines skipped.

    A run killed mid-write leaves a torn last line; one bad line must not cost
    the whole report, so bad lines are counted and skipped. With
    ``per_task_cap``, each task's records are thinned (every other one, but
    never a change of state) whenever they pass twice the cap, so memory stays
    bounded however long the run was.
    """
    if not os.path.isfile(path):
        return None, 0
    by_task: dict[Any, list] = {}
    bad = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    rec = convert(json.loads(line))
                except (ValueError, TypeError, KeyError):
                    rec = None
                if rec is None:
                    bad += 1
                    continue
                recs = by_task.setdefault(rec.task, [])
                recs.append(rec)
                if per_task_cap is not None and len(recs) > 2 * per_task_cap:
                    by_task[rec.task] = _thin(recs)
    except OSError:
        return None, 0
    out = [r for recs in by_task.values() for r in recs]
    out.sort(key=lambda r: r.ts)
    return out, bad


def _thin(recs: list) -> list:
    keep = [r for i, r in enumerate(recs) if i % 2 == 0 or r.state != recs[i - 1].state]
    if keep[-1] is not recs[-1]:
        keep.append(recs[-1])
    return keep


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _int(v: Any) -> int | None:
    f = _num(v)
    return None if f is None else int(f)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _sample(obj: Any) -> Sample | None:
    if not isinstance(obj, dict) or _num(obj.get("ts")) is None or not isinstance(obj.get("task"), str):
        return None
    return Sample(ts=_num(obj["ts"]), task=obj["task"], state=_str(obj.get("state")) or "unknown",
                  rss=_int(obj.get("rss")), cpu=_num(obj.get("cpu")), calls=_int(obj.get("calls")),
                  steps=_int(obj.get("steps")), in_call=_str(obj.get("in_call")), where=_str(obj.get("where")),
                  location=_str(obj.get("location")))


def _event(obj: Any) -> JobEvent | None:
    if not isinstance(obj, dict) or _num(obj.get("ts")) is None or not isinstance(obj.get("kind"), str):
        return None
    # redacted again: a bundle written before secrets were redacted, or a line that quotes a command, shows none
    return JobEvent(ts=_num(obj["ts"]), task=_str(obj.get("task")), kind=obj["kind"],
                    text=redact_text(str(obj.get("text") or "")))


def _bundle_logs(path: str, diagnosis: Diagnosis) -> dict[str, TaskLog]:
    """Find each task's log: the path diagnosis.json names, else ``logs/<job>-<index>.log``."""
    found: dict[str, str] = {}
    logdir = os.path.join(path, "logs")
    if os.path.isdir(logdir):
        for name in sorted(os.listdir(logdir)):
            m = _LOG_NAME.match(name)
            if m:
                found[f"{m.group(1)}:{m.group(2)}"] = os.path.join(logdir, name)
    for task, rep in diagnosis.tasks.items():
        log = rep.log
        if log:
            cand = log if os.path.isabs(log) else os.path.join(path, log)
            if os.path.isfile(cand):
                found[task] = cand
    return {task: read_log(p, task) for task, p in found.items()}


def read_log(path: str, task: str | None) -> TaskLog:
    """Stream one log once: keep its tail, its notable events and a thinned step trajectory."""
    parser = TaskLogParser(task)
    keep = _Keeper()
    tail: deque[tuple[float | None, str]] = deque(maxlen=TAIL_MAX)
    first_ts = None
    n = 0
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            for n, raw in enumerate(_lines(fh), start=1):
                keep.add(parser.feed(n, raw))
                tail.append((parser.last_ts, _PREFIX.sub("", _clean(raw), count=1)))
                if first_ts is None and parser.last_ts is not None:
                    first_ts = parser.last_ts
        keep.add(parser.close())
    except OSError:
        return TaskLog(path=path)
    return TaskLog(path=path, tail=tuple(tail), lines=n, events=tuple(keep.events), progress=keep.trajectory(),
                   first_ts=first_ts, last_ts=parser.last_ts)


def _lines(fh) -> Iterable[str]:
    # Keras redraws its progress bar with CR: keep the last state of a CR-joined line.
    for raw in fh:
        if "\r" in raw.rstrip("\r\n"):
            parts = [p for p in raw.rstrip("\r\n").split("\r") if p.strip()]
            yield parts[-1] if parts else ""
        else:
            yield raw


_PREFIX = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d{4} ")
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clean(raw: str) -> str:
    return _CTRL.sub("", strip_ansi(raw.rstrip("\r\n")))[:2000]


class _Keeper:
    """Bounded selection of one log's events while it is streamed."""

    def __init__(self) -> None:
        self.events: list[LogEvent] = []
        self.progress: list[tuple[float, int]] = []
        self._symptoms = 0
        self._faults = 0
        self._epochs = 0
        self._offset = 0
        self._last_step = 0
        self._seen_progress = False
        self._joins = 0

    def add(self, evs: Iterable[LogEvent]) -> None:
        for e in evs:
            if e.kind in (EventKind.PROGRESS, EventKind.NAN_LOSS) and e.step is not None:
                if e.step < self._last_step:       # a new epoch restarts Keras' count
                    self._offset += self._last_step
                self._last_step = e.step
                if e.ts is not None:
                    self.progress.append((e.ts, self._offset + e.step))
                    if len(self.progress) > 2 * MAX_PROGRESS:
                        self.progress = self.progress[::2]
                if not self._seen_progress or e.kind == EventKind.NAN_LOSS:
                    self._seen_progress = True
                    self.events.append(e)
            elif e.kind == EventKind.EPOCH:
                self._epochs += 1
                if self._epochs <= MAX_EPOCHS:
                    self.events.append(e)
            elif e.kind in SYMPTOM_KINDS:
                self._symptoms += 1
                if self._symptoms <= MAX_SYMPTOMS:
                    self.events.append(e)
            elif e.kind in FAULT_KINDS:
                self._faults += 1
                if self._faults <= MAX_FAULTS:
                    self.events.append(e)
            elif e.kind in CONNECT_KINDS:
                self.events.append(e)
            elif e.kind == EventKind.PEER_CONNECTED:
                # kept so that the start-up "Waiting for 1/2 tasks to connect" they answer is not shown as a symptom
                self._joins += 1
                if self._joins <= MAX_PEER_JOINS:
                    self.events.append(e)

    def trajectory(self) -> tuple[tuple[float, int], ...]:
        pts = self.progress
        if len(pts) > MAX_PROGRESS:
            step = len(pts) / MAX_PROGRESS
            pts = [pts[int(i * step)] for i in range(MAX_PROGRESS)] + [pts[-1]]
        return tuple(pts)


def bundle_from_observation(diagnosis: Diagnosis, observation: Any, path: str) -> BundleData:
    """Records for a report on plain logs, from ``diagnose``'s diagnosis and observations.

    Logs carry no process samples; memory samples that the observation holds
    become RSS-only samples, and the rest of the page is rebuilt from the logs.
    """
    logs: dict[str, TaskLog] = {}
    samples: list[Sample] = []
    for task, obs in (getattr(observation, "tasks", None) or {}).items():
        log_path = getattr(obs, "log_path", None) or (diagnosis.tasks[task].log if task in diagnosis.tasks else None)
        if isinstance(log_path, str) and os.path.isfile(log_path):
            logs[task] = read_log(log_path, task)
        for m in getattr(obs, "memory", ()) or ():
            samples.append(Sample(ts=m.ts, task=task, state="running", rss=m.rss_bytes))
    samples.sort(key=lambda s: s.ts)
    caveats = ("report built from logs alone: no process samples, so no CPU chart and no process states",)
    return BundleData(path=path, diagnosis=diagnosis, samples=tuple(samples), events=(), logs=logs,
                      source="logs", caveats=caveats)
