"""What a ``distdoctor run`` bundle recorded about its processes, for ``distdoctor diagnose BUNDLE``.

A run bundle holds more than its logs: ``diagnosis.json`` records each task's exit code, fatal signal and pid, and
``events.jsonl`` when each task started and ended and which tasks the supervisor itself stopped. Those are facts no
log line can contradict -- a task that exited 0 ran to its end, whatever its last line says -- so ``diagnose`` reads
them beside the logs (:func:`read_recorded_run`, the I/O) and puts them on the logs' observation
(:func:`apply_recorded`, pure). The run's *verdict* is not taken: ``diagnose`` still reasons from the logs and these
facts, and ``tests/agreement.py`` checks that the two readings agree.

Only process facts travel: exit codes, signals, pids, times, a killed task's memory-cgroup evidence (the OOM-kill
count, the kernel's lines), and the hang the supervisor declared (its kind, culprits and waiters, which it saw in
stacks, CPU and I/O that no log shows). Stacks, states and the run's findings stay in the
bundle's own ``diagnosis.json``.
"""
from __future__ import annotations

import json
import os
import re
import signal as _signal
from dataclasses import dataclass, field, replace

from .observations import HangVerdict, JobObservation, OomEvidence, TaskObservation, TaskState

__all__ = ["RecordedTask", "RecordedRun", "read_recorded_run", "apply_recorded", "observation_of_record"]

_MAX_EVENTS_BYTES = 16 << 20   # events.jsonl of a long run with restarts stays far below this
_STOPPED_BY = re.compile(r"^SIG[A-Z]+ \((SIG[A-Z]+)\)$")   # signal_sent's "SIGTERM (reason)": a signal is the reason


@dataclass(frozen=True)
class RecordedTask:
    """One task's process as the run recorded it. Unknown fields are None."""

    task: str
    exit_code: int | None = None          # negative: killed by that signal (as the run writes it)
    signal: int | None = None             # the fatal signal's number
    pid: int | None = None
    started_at: float | None = None
    ended_at: float | None = None
    killed_by_supervisor: bool = False    # the run stopped it (a declared hang, the failure grace, Ctrl-C)
    oom: OomEvidence | None = None        # its memory cgroup's evidence when it was killed (the OOM-kill count...)
    step_calls: int | None = None         # its step function's calls, as the agent counted them
    step_calls_exact: bool = False        # counted to the task's end
    uncaught_at: float | None = None      # its code raised an uncaught exception then (its process may not have exited)
    shm: tuple[int, int] | None = None    # the fullest its /dev/shm was seen: (bytes used, size)


@dataclass(frozen=True)
class RecordedRun:
    """The process facts of a run bundle: every task the run launched."""

    tasks: dict[str, RecordedTask] = field(default_factory=dict)
    hang: HangVerdict | None = None       # the hang the supervisor declared (from stacks, CPU, I/O: no log says it)
    interrupted: str | None = None        # the signal (SIGINT, SIGTERM) that stopped distdoctor itself, and so the job

    def all_exited_zero(self) -> bool:
        """Every task the run launched ended by itself with exit code 0."""
        return bool(self.tasks) and all(t.exit_code == 0 and not t.killed_by_supervisor for t in self.tasks.values())

    def failed_tasks(self) -> list[str]:
        """Tasks that ended by themselves with a non-zero exit status or a signal."""
        return [t.task for t in self.tasks.values() if t.exit_code not in (None, 0) and not t.killed_by_supervisor]

    def succeeded(self) -> bool:
        """The processes say the job ran to its end: every task exited 0, or -- ParameterServerStrategy -- the
        coordinator (``chief:0``) exited 0 and the run stopped the workers and parameter servers it left running
        (they serve until they are stopped)."""
        if self.all_exited_zero():
            return True
        chief = self.tasks.get("chief:0")
        return (chief is not None and chief.exit_code == 0 and any(t.startswith("ps:") for t in self.tasks)
                and all(t.exit_code == 0 or t.killed_by_supervisor for t in self.tasks.values()))

    def span(self) -> tuple[float, float] | None:
        """From the first task's start to the last task's end (unix seconds), when the run recorded both."""
        starts = [t.started_at for t in self.tasks.values() if t.started_at is not None]
        ends = [t.ended_at for t in self.tasks.values() if t.ended_at is not None]
        return (min(starts), max(ends)) if starts and ends else None

    def pids(self) -> dict[int, str]:
        return {t.pid: t.task for t in self.tasks.values() if t.pid is not None}


def _signum(name: object) -> int | None:
    if not isinstance(name, str) or not name:
        return None
    try:
        return int(_signal.Signals[name])
    except KeyError:
        return None


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _events(folder: str) -> list[dict]:
    path = os.path.join(folder, "events.jsonl")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_EVENTS_BYTES)
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue   # a line cut short by a killed supervisor
        if isinstance(obj, dict) and isinstance(obj.get("task"), str) and _num(obj.get("ts")) is not None:
            out.append(obj)
    return out


def read_recorded_run(folder: str) -> RecordedRun | None:
    """The process facts of the run bundle at ``folder``; None when its ``diagnosis.json`` cannot be read or records
    no task. Only the latest attempt counts: ``events.jsonl`` and ``diagnosis.json`` at the top are that attempt's."""
    try:
        with open(os.path.join(folder, "diagnosis.json"), "rb") as fh:
            doc = json.loads(fh.read(4 << 20))
    except (OSError, ValueError):
        return None
    tasks_doc = doc.get("tasks") if isinstance(doc, dict) else None
    if not isinstance(tasks_doc, dict) or not tasks_doc:
        return None
    started: dict[str, float] = {}
    ended: dict[str, float] = {}
    stopped: set[str] = set()
    hang = None
    interrupted = None
    ooms: dict[str, OomEvidence] = {}
    for e in _events(folder):
        task, kind, ts = e["task"], e.get("kind"), float(e["ts"])
        if kind == "hang_declared":
            hang = _hang(e, ts) or hang
        elif kind == "start":
            started[task] = ts          # a PSS worker restarted alone: its latest start
            ended.pop(task, None)
            stopped.discard(task)
        elif kind == "exit":
            ended[task] = ts
            if isinstance(e.get("oom"), dict):
                ooms[task] = _oom(e["oom"])
        elif kind == "signal_sent":
            stopped.add(task)
            m = _STOPPED_BY.search(str(e.get("text") or ""))
            if m:   # the supervisor stops every task with the signal it received as the reason: "SIGTERM (SIGINT)"
                interrupted = m.group(1)
    tasks = {}
    for name, t in tasks_doc.items():
        if not isinstance(t, dict):
            continue
        code = _int(t.get("exit_code"))
        tasks[str(name)] = RecordedTask(
            task=str(name), exit_code=code, signal=_signum(t.get("signal")), pid=_int(t.get("pid")),
            started_at=started.get(name), ended_at=ended.get(name),
            killed_by_supervisor=name in stopped and code != 0, oom=ooms.get(name),
            step_calls=_int(t.get("step_calls")), step_calls_exact=t.get("step_calls_exact") is True,
            uncaught_at=_num(t.get("uncaught_at")), shm=_shm(t))
    return RecordedRun(tasks=tasks, hang=hang, interrupted=interrupted) if tasks else None


def _shm(t: dict) -> tuple[int, int] | None:
    used, size = _int(t.get("shm_used_bytes")), _int(t.get("shm_size_bytes"))
    return (used, size) if used is not None and size else None


def _oom(d: dict) -> OomEvidence:
    """The memory evidence of an ``exit`` line (written for a killed task whose cgroup saw an OOM kill or pressure)."""
    return OomEvidence(cgroup=d.get("cgroup") if isinstance(d.get("cgroup"), str) else None,
                       limit_bytes=_int(d.get("limit_bytes")), usage_bytes=_int(d.get("usage_bytes")),
                       max_usage_bytes=_int(d.get("max_usage_bytes")), failcnt=_int(d.get("failcnt")),
                       oom_kill_count=_int(d.get("oom_kill_count")), under_oom=d.get("under_oom") is True,
                       kernel_lines=tuple(str(x) for x in d.get("kernel_lines") or () if isinstance(x, str)))


def _hang(e: dict, ts: float) -> HangVerdict | None:
    """The hang of a ``hang_declared`` line (None for lines of older runs, which carry only its words)."""
    h = e.get("hang")
    if not isinstance(h, dict) or not isinstance(h.get("kind"), str):
        return None
    names = lambda k: tuple(str(x) for x in h.get(k) or () if isinstance(x, str))  # noqa: E731
    since = _num(h.get("since"))
    return HangVerdict(kind=h["kind"], declared_at=ts, since=since if since is not None else ts,
                       culprits=names("culprits"), waiting=names("waiting"), reason=str(e.get("text") or ""))


def _with_record(t: TaskObservation, r: RecordedTask, exits: bool) -> TaskObservation:
    t = replace(t, pid=r.pid, exit_code=r.exit_code, signal=r.signal, killed_by_supervisor=r.killed_by_supervisor,
                oom=r.oom or t.oom, state=TaskState.EXITED if r.exit_code is not None else t.state,
                uncaught_at=r.uncaught_at, shm=r.shm or t.shm)
    if r.step_calls is not None:   # the agent's count of the step function's calls: what no log line says
        t = replace(t, step_calls=r.step_calls, step_calls_exact=r.step_calls_exact)
    return replace(t, started_at=r.started_at, ended_at=r.ended_at) if exits else t


def observation_of_record(run: RecordedRun, notes: tuple[str, ...] = ()) -> JobObservation:
    """A job seen only through the run's records (its logs hold nothing a TensorFlow reading recognises): every exit
    status travels, failed ones too -- there are no lines to read the failure from."""
    tasks = {name: TaskObservation(task=name) for name in run.tasks}
    return apply_recorded(JobObservation(tasks=tasks, source="logs", notes=notes), run, exits=True)


def apply_recorded(job: JobObservation, run: RecordedRun, *, exits: bool | None = None) -> JobObservation:
    """``job`` (read from the logs) with the run's process facts on its tasks (pure).

    Pids, exit statuses, signals and a killed task's memory-cgroup evidence always travel: they are the processes'
    own word, and the exit rules read them as ``run`` does. Times (each task's start and end) travel only when the
    run succeeded: for a failed run the lines' own times order its failures -- a task's recorded end alone would make
    it the first failure of rules that order by time (a worker that ran fewer steps before another was killed). When
    the run succeeded (:meth:`RecordedRun.succeeded`) a log that stops without an error is no hang, and a task's error
    lines (a peer that vanished at shutdown) did not fail the job. The hang the run declared is the job's hang. A task
    the run launched but whose log holds nothing is added."""
    exits = run.succeeded() if exits is None else exits
    tasks = dict(job.tasks)
    for name, r in run.tasks.items():
        tasks[name] = _with_record(tasks.get(name) or TaskObservation(task=name), r, exits)
    out = replace(job, tasks=tasks)
    span = run.span()
    if exits and span is not None:
        out = replace(out, started_at=span[0], ended_at=span[1])
    if run.interrupted:
        out = replace(out, interrupted=run.interrupted)
    if run.succeeded():
        out = replace(out, hang=None, job_finished=True)
    elif run.hang is not None:
        out = replace(out, hang=run.hang, job_finished=False)
    return out
