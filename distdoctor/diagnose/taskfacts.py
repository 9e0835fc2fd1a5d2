"""What a task's recorded observation shows, read the same way by every rule module: its exit signal, its events of
a kind, whether it failed on its own, ran to the end, was OOM-killed, heard another task's abort. Pure.
"""
from __future__ import annotations

import signal as _signal

from ..model import Evidence
from .events import EventKind, LogEvent
from .observations import JobObservation, TaskObservation

__all__ = ["signal_name", "NATIVE_CRASH_SIGNALS", "evidence_of", "events_of", "completed", "chief_succeeded",
           "heard_the_abort", "PROPAGATED_ABORT", "died_of_own_failure", "failed_on_its_own", "oom_proved", "exit_evidence", "last_lines",
           "stop_cutoff", "own_events"]

NATIVE_CRASH_SIGNALS = {_signal.SIGSEGV, _signal.SIGABRT, _signal.SIGBUS, _signal.SIGFPE, _signal.SIGILL}


def signal_name(num: int | None) -> str | None:
    if num is None:
        return None
    try:
        return _signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def evidence_of(e: LogEvent, role: str = "cause") -> Evidence:
    return Evidence(task=e.task, ts=e.ts, text=e.text, role=role)


_BY_KIND: dict[int, tuple[tuple, dict]] = {}   # id(events) -> (events, {kind: positions}); a 64-task job asks ~1000 times


def events_of(t: TaskObservation, *kinds: EventKind) -> list[LogEvent]:
    evs = t.events
    if type(evs) is not tuple:   # noqa: E721 -- only an immutable sequence can be indexed once
        return [e for e in evs if e.kind in kinds]
    got = _BY_KIND.get(id(evs))
    if got is None or got[0] is not evs:
        index: dict = {}
        for i, e in enumerate(evs):
            index.setdefault(e.kind, []).append(i)
        if len(_BY_KIND) >= 256:
            _BY_KIND.clear()
        got = _BY_KIND[id(evs)] = (evs, index)
    index = got[1]
    if len(kinds) == 1:
        return [evs[i] for i in index.get(kinds[0], ())]
    return [evs[i] for i in sorted(i for k in set(kinds) for i in index.get(k, ()))]


_ev = evidence_of
_of = events_of


def completed(t: TaskObservation) -> bool:
    """The task's log shows its training ran to the end (last epoch, last step, or TerminateOnNaN stopped it)."""
    if any(e.kind == EventKind.NAN_LOSS and "terminating training" in e.text for e in t.events):
        return True
    epochs = _of(t, EventKind.EPOCH)
    prog = [e for e in t.events if e.kind in (EventKind.PROGRESS, EventKind.NAN_LOSS) and e.step is not None]
    if not prog:
        return False
    last = prog[-1]
    if last.total is None or last.step != last.total:
        return False
    if epochs and epochs[-1].epoch != epochs[-1].total:
        return False
    return not epochs or last.line_no > epochs[-1].line_no


def chief_succeeded(job: JobObservation) -> bool:
    """The ParameterServerStrategy coordinator finished: exit 0, or (logs only) its training ran to the end."""
    chief = job.tasks.get("chief:0")
    if chief is None:
        return False
    if chief.exit_code is not None:
        return chief.exit_code == 0
    return job.source == "logs" and completed(chief) and not _of(chief, EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL)


PROPAGATED_ABORT = "Collective ops is aborted by"


def heard_the_abort(t: TaskObservation) -> bool:
    """The task's log shows it alive when the job failed: it received another task's abort."""
    return any(e.kind == EventKind.PEER_SYMPTOM and PROPAGATED_ABORT in e.text for e in t.events)


def died_of_own_failure(t: TaskObservation) -> bool:
    return t.exit_code is not None and t.exit_code != 0 and not t.killed_by_supervisor


def failed_on_its_own(t: TaskObservation) -> bool:
    """It died of its own failure, or its code raised an uncaught exception (the supervisor may then have had to stop
    a process whose teardown never ended)."""
    return died_of_own_failure(t) or t.uncaught_at is not None


def oom_proved(t: TaskObservation) -> tuple[bool, list[str]]:
    """Was this SIGKILL the OOM killer's? Returns (verdict, reasons)."""
    why: list[str] = []
    oom = t.oom
    if oom is not None:
        if oom.oom_kill_count:
            why.append(f"memory cgroup {oom.cgroup} counts {oom.oom_kill_count} OOM kill(s) (memory.oom_control oom_kill)")
        if oom.limit_bytes and oom.max_usage_bytes and oom.max_usage_bytes >= 0.97 * oom.limit_bytes:
            why.append(f"cgroup peak usage {oom.max_usage_bytes >> 20} MiB reached its limit {oom.limit_bytes >> 20} MiB"
                       + (f" (failcnt {oom.failcnt})" if oom.failcnt else ""))
        for line in oom.kernel_lines:
            why.append(f"kernel: {line}")
    if t.memory:
        last = t.memory[-1]
        if last.limit_bytes and last.rss_bytes >= 0.9 * last.limit_bytes:
            why.append(f"RSS just before death {last.rss_bytes >> 20} MiB of a {last.limit_bytes >> 20} MiB limit")
    for e in _of(t, EventKind.OOM_KILLER):
        why.append(e.text)
    strong = bool(oom and (oom.oom_kill_count or oom.kernel_lines)) or bool(_of(t, EventKind.OOM_KILLER))
    return (strong or len(why) >= 2), why


def exit_evidence(t: TaskObservation, what: str) -> Evidence:
    return Evidence(task=t.task, ts=t.ended_at, text=what, role="cause")
def stop_cutoff(job: JobObservation, t: TaskObservation) -> float | None:
    """For a task the supervisor stopped: the moment before which what it printed is its own.

    At a hang, the declaration; after another task's failure, the first such failure (what made the supervisor
    stop this one). None when neither is known (nothing it printed can then be told apart from the stop).
    """
    if job.hang is not None:
        return job.hang.declared_at
    ends = [o.ended_at for o in job.tasks.values()
            if o.task != t.task and o.ended_at is not None and o.exit_code not in (None, 0) and not o.killed_by_supervisor]
    ends += [o.uncaught_at for o in job.tasks.values() if o.task != t.task and o.uncaught_at is not None]
    return min(ends) if ends else None


def own_events(job: JobObservation, t: TaskObservation, events: list[LogEvent]) -> list[LogEvent]:
    """``events`` of ``t`` that are its own failure: all of them, or for a task the supervisor stopped, those
    printed before the stop's cause (a task stopped after failing on its own keeps that failure)."""
    if not t.killed_by_supervisor or t.uncaught_at is not None:
        return events
    cutoff = stop_cutoff(job, t)
    return [e for e in events if cutoff is not None and e.ts is not None and e.ts < cutoff]


def last_lines(t: TaskObservation, n: int = 2) -> list[Evidence]:
    evs = [e for e in t.events if e.kind not in (EventKind.PROGRESS, EventKind.EPOCH)]
    return [_ev(e, "context") for e in evs[-n:]]
