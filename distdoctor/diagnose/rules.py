"""The rule checks over recorded job observations (``run`` and ``diagnose``).

Each check is a pure function ``(JobObservation) -> list[Finding]`` registered
with its :class:`~distdoctor.catalogue.Rule` metadata. Findings carry ``at``
(when the problem began) so the root-cause policy in :mod:`.engine` can pick
the first failure.
"""
from __future__ import annotations

import re

import signal as _signal
import statistics
from dataclasses import replace as _replace
from typing import Callable, Iterable

from ..catalogue import Rule, register
from ..model import Category, Evidence, Finding, Severity
from .events import EventKind, LogEvent
from .observations import JobObservation, TaskObservation, TaskState

__all__ = ["CHECKS", "signal_name", "NATIVE_CRASH_SIGNALS", "rule_registrar", "evidence_of", "events_of",
           "completed", "chief_succeeded", "heard_the_abort", "PROPAGATED_ABORT"]

NATIVE_CRASH_SIGNALS = {_signal.SIGSEGV, _signal.SIGABRT, _signal.SIGBUS, _signal.SIGFPE, _signal.SIGILL}
CHECKS: list[tuple[Rule, Callable[[JobObservation], list[Finding]]]] = []


def signal_name(num: int | None) -> str | None:
    if num is None:
        return None
    try:
        return _signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def rule_registrar(checks: list) -> Callable:
    """A decorator factory: ``@rule(code=..., ...)`` registers the Rule and appends its check to ``checks``."""
    def rule(**kw) -> Callable:
        registered = register(Rule(**kw))

        def deco(fn: Callable[[Rule, JobObservation], Iterable[Finding]]):
            checks.append((registered, lambda job: list(fn(registered, job))))
            return fn
        return deco
    return rule


_rule = rule_registrar(CHECKS)


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


def _died_of_own_failure(t: TaskObservation) -> bool:
    return t.exit_code is not None and t.exit_code != 0 and not t.killed_by_supervisor


def _oom_proved(t: TaskObservation) -> tuple[bool, list[str]]:
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


def _exit_evidence(t: TaskObservation, what: str) -> Evidence:
    return Evidence(task=t.task, ts=t.ended_at, text=what, role="cause")


@_rule(code="DD101", rank=9, name="task-killed", category=Category.PEER_CRASHED, title="A task was killed by a signal",
       detects="A task that died from SIGKILL (or another signal it did not raise itself) while its peers were running.",
       why="Peers then fail with `Connection reset by peer`, `stopped sending heartbeats` or hang; the dead task's own log usually says nothing.",
       evidence="The task's exit status (signal), its last log lines, the absence of OOM-killer evidence.",
       remedy="Find who sent the signal: the scheduler (eviction, time limit), a person, or a watchdog. Check `kubectl describe pod` / `sacct` for the reason, then restart the job (from a checkpoint).")
def _killed(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if not _died_of_own_failure(t) or t.signal is None:
            continue
        if t.signal in NATIVE_CRASH_SIGNALS or t.signal == _signal.SIGTERM:
            continue
        if t.signal == _signal.SIGKILL and _oom_proved(t)[0]:
            continue
        yield rule.finding(culprit=t.task, at=t.ended_at,
                           summary=f"{t.task} was killed by {signal_name(t.signal)}; no out-of-memory evidence was found",
                           evidence=[_exit_evidence(t, f"process {t.pid} ended by {signal_name(t.signal)}")] + _last_lines(t))


def stop_cutoff(job: JobObservation, t: TaskObservation) -> float | None:
    """For a task the supervisor stopped: the moment before which what it printed is its own.

    At a hang, the declaration; after another task's failure, the first such failure (what made the supervisor
    stop this one). None when neither is known (nothing it printed can then be told apart from the stop).
    """
    if job.hang is not None:
        return job.hang.declared_at
    ends = [o.ended_at for o in job.tasks.values()
            if o.task != t.task and o.ended_at is not None and o.exit_code not in (None, 0) and not o.killed_by_supervisor]
    return min(ends) if ends else None


def own_events(job: JobObservation, t: TaskObservation, events: list[LogEvent]) -> list[LogEvent]:
    """``events`` of ``t`` that are its own failure: all of them, or for a task the supervisor stopped, those
    printed before the stop's cause (a task stopped after failing on its own keeps that failure)."""
    if not t.killed_by_supervisor:
        return events
    cutoff = stop_cutoff(job, t)
    return [e for e in events if cutoff is not None and e.ts is not None and e.ts < cutoff]


def _last_lines(t: TaskObservation, n: int = 2) -> list[Evidence]:
    evs = [e for e in t.events if e.kind not in (EventKind.PROGRESS, EventKind.EPOCH)]
    return [_ev(e, "context") for e in evs[-n:]]


@_rule(code="DD102", rank=1, role="own_failure", name="native-crash", category=Category.SEGFAULT_CORE_DUMP, title="A task crashed in native code",
       detects="A task that died from SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL, or whose log shows a fatal signal, `Check failed` or `core dumped`.",
       why="A native crash in TensorFlow, a custom op or a library (CUDA, NCCL, protobuf) kills the task at once; peers report only a lost connection.",
       evidence="Exit signal, faulthandler's `Fatal Python error` with the Python stack, TensorFlow `Check failed` lines.",
       remedy="Read the Python stack faulthandler printed for that task; look for version mismatches of TensorFlow/CUDA/protobuf on that node; enable core dumps (`ulimit -c unlimited`) and open the core with gdb.")
def _native(rule: Rule, job: JobObservation):
    for t in job.ordered():
        logs = _of(t, EventKind.FATAL_SIGNAL, EventKind.CHECK_FAILED)
        by_signal = _died_of_own_failure(t) and t.signal in NATIVE_CRASH_SIGNALS
        if not by_signal and not (logs and (t.exit_code is None or t.exit_code != 0) and not t.killed_by_supervisor):
            continue
        ev = []
        if by_signal:
            ev.append(_exit_evidence(t, f"process {t.pid} ended by {signal_name(t.signal)}"))
        ev += [_ev(e) for e in logs[:3]]
        at = t.ended_at if by_signal else (logs[0].ts if logs else None)
        what = signal_name(t.signal) if by_signal else "a fatal signal"
        yield rule.finding(culprit=t.task, at=at, evidence=ev,
                           summary=f"{t.task} crashed with {what} (a native crash, core dumped where enabled)")


@_rule(code="DD103", rank=0, role="own_failure", name="oom-killed", category=Category.OOM_HOST, title="A task was killed for lack of host memory",
       detects="A task killed by the kernel's OOM killer or its memory cgroup limit.",
       why="The kernel sends SIGKILL; nothing is printed by the task itself and peers blame the network.",
       evidence="The memory cgroup's OOM counters and peak usage, the kernel log, the task's RSS just before death.",
       remedy="Give the task more memory (the pod's/job's memory limit) or use less: a smaller per-worker batch, a smaller shuffle buffer or prefetch, fewer parallel calls in tf.data, no dataset `cache()` in memory.")
def _oom(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if t.killed_by_supervisor:
            continue
        killed = t.signal == _signal.SIGKILL and t.exit_code is not None and t.exit_code != 0
        proved, why = _oom_proved(t)
        log_only = bool(_of(t, EventKind.OOM_KILLER))
        if not ((killed and proved) or log_only):
            continue
        ev = [_exit_evidence(t, f"process {t.pid} ended by SIGKILL")] if killed else []
        line_ts = {e.text: e.ts for e in _of(t, EventKind.OOM_KILLER)}   # a log's OOM line keeps its own time
        ev += [Evidence(task=t.task, ts=t.ended_at if t.ended_at is not None else line_ts.get(w), text=w, role="cause")
               for w in why]
        first_oom = next((e.ts for e in _of(t, EventKind.OOM_KILLER) if e.ts is not None), None)
        yield rule.finding(culprit=t.task, at=t.ended_at or first_oom or (t.events[-1].ts if t.events else None), evidence=ev,
                           summary=f"{t.task} was killed by the out-of-memory killer" +
                                   (f" (limit {t.oom.limit_bytes >> 20} MiB)" if t.oom and t.oom.limit_bytes else ""))


@_rule(code="DD104", rank=7, role="own_failure", name="python-exception", category=Category.USER_CODE_ERROR, title="A task raised a Python exception",
       detects="A task that ended with a Python traceback whose exception is not a symptom of a lost peer.",
       why="The first exception anywhere is usually the cause; peers then fail with `UnavailableError` or hang in a collective.",
       evidence="The exception line and the last frames of its traceback.",
       remedy="Fix the exception in the training code at the frame shown; if it depends on the task (data path, index), check that task's arguments.")
def _exception(rule: Rule, job: JobObservation):
    for t in job.ordered():
        excs = _of(t, EventKind.PY_EXCEPTION)
        if not excs or _of(t, EventKind.COLLECTIVE_MISMATCH):
            continue
        excs = own_events(job, t, excs)   # only an exception raised before distdoctor stopped the task is its own
        if not excs:
            continue
        if t.exit_code == 0:
            continue
        e = excs[-1]
        frames = [f for f in e.frames if f.startswith("File ")][-3:]
        ev = [Evidence(task=t.task, ts=e.ts, text=f, role="cause") for f in frames] + [_ev(e)]
        name = e.text.split(":", 1)[0]
        yield rule.finding(culprit=t.task, at=e.ts or t.ended_at, evidence=ev,
                           summary=f"{t.task} raised {name}: {e.text.partition(':')[2].strip()[:200]}")


@_rule(code="DD105", rank=2, role="own_failure", name="tensor-oom", category=Category.OOM_GPU, title="A task could not allocate a tensor",
       detects="`ResourceExhaustedError: OOM when allocating tensor`, `CUDA_ERROR_OUT_OF_MEMORY`, `MemoryError`.",
       why="An allocation failure in one task aborts its step; peers then see a broken collective.",
       evidence="The allocation error lines, with the device named in them.",
       remedy="Reduce the per-replica batch size or model size on that device, or enable memory growth (`tf.config.experimental.set_memory_growth`); check that no other process holds the GPU.")
def _tensor_oom(rule: Rule, job: JobObservation):
    for t in job.ordered():
        evs = own_events(job, t, _of(t, EventKind.OOM_TENSOR, EventKind.OOM_GPU))
        if not evs:
            continue
        gpu = any(e.kind == EventKind.OOM_GPU or "GPU" in e.text for e in evs)
        yield rule.finding(culprit=t.task, at=evs[0].ts, evidence=[_ev(e) for e in evs[:3]],
                           category=Category.OOM_GPU if gpu else Category.OOM_HOST,
                           summary=f"{t.task} ran out of {'GPU' if gpu else 'host'} memory allocating a tensor")


@_rule(code="DD106", rank=20, name="unexplained-exit", category=Category.OTHER, title="A task exited with an error and no explanation",
       detects="A non-zero exit code with no exception, signal or symptom in the task's log.",
       why="Something in the task called `sys.exit(n)` or a wrapper script failed; peers will fail or hang after it.",
       evidence="The exit code and the task's last log lines.",
       remedy="Read the end of that task's log; run its command by hand with the same TF_CONFIG to see why it exits.")
def _unexplained(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if not _died_of_own_failure(t) or t.signal is not None:
            continue
        if _of(t, EventKind.PY_EXCEPTION, EventKind.PEER_SYMPTOM, EventKind.OOM_TENSOR, EventKind.OOM_GPU,
               EventKind.FATAL_SIGNAL, EventKind.CHECK_FAILED, EventKind.PORT_IN_USE, EventKind.OOM_KILLER):
            continue
        yield rule.finding(culprit=t.task, at=t.ended_at,
                           summary=f"{t.task} exited with code {t.exit_code} without an exception or signal",
                           evidence=[_exit_evidence(t, f"exit code {t.exit_code}")] + _last_lines(t, 3))


@_rule(code="DD107", rank=19, name="peer-reported-lost", category=Category.PEER_CRASHED, title="Peers report a task as lost",
       detects="Healthy tasks report a specific peer as crashed, unhealthy, unreachable or resetting connections, while that peer's own log explains nothing.",
       why="The task named by its peers is where the failure began, even if its own log is silent (SIGKILL, node loss).",
       evidence="Coordination-service and gRPC lines on the other tasks that name the peer (`/job:worker/replica:0/task:1`); from logs, the last line of the peer's own log (where it stopped).",
       remedy="Look at what happened to the named task's process or node at that time (OOM killer, eviction, node failure); restart from a checkpoint.")
def _peer_reported(rule: Rule, job: JobObservation):
    named: dict[str, list[LogEvent]] = {}
    for t in job.ordered():
        for e in _of(t, EventKind.PEER_SYMPTOM):
            if e.peer and e.peer in job.tasks and e.peer != t.task:
                named.setdefault(e.peer, []).append(e)
    if job.source == "logs" and len(named) > 1:
        # Several peers named (a parameter server's loss reaches the chief also through the workers that were
        # reading from it: "remote target /job:worker/..." relays its error). A named task whose own log reports
        # the failure too was alive and heard it; when some named task's log is silent, that one was lost.
        silent = {p for p in named if not _of(job.tasks[p], EventKind.PEER_SYMPTOM)}
        if silent:
            named = {p: evs for p, evs in named.items() if p in silent}
    for peer, evs in named.items():
        target = job.tasks[peer]
        if target.exit_code is not None or _of(target, EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL, EventKind.OOM_TENSOR):
            continue  # its own record explains it; other rules speak
        if completed(target):
            continue  # it finished training; peers' complaints at shutdown are noise
        if heard_the_abort(target):
            continue  # its own log received the abort: it was alive when the job failed (DD158 may say who could not reach it)
        if job.source == "run" and target.exit_code is None and target.state not in (TaskState.STOPPED, TaskState.DISK_SLEEP, TaskState.UNKNOWN):
            continue
        evs = sorted(evs, key=lambda e: e.ts or 0)
        seen: set[tuple[str, str]] = set()   # a gRPC error repeats its line once per failed RPC: quote each once
        evs = [e for e in evs if (e.task, e.text) not in seen and not seen.add((e.task, e.text))]
        # from logs alone, the lost task's own record is where its log stops: quote its last line (no error there
        # is itself evidence: SIGKILL, the OOM killer, a frozen process or a lost node print nothing)
        last = []
        if job.source == "logs" and (target.last_line or target.events):
            ev = target.events[-1] if target.events else None
            last = [_ev(ev, "context") if ev is not None and ev.text == (target.last_line or ev.text)
                    else Evidence(task=peer, ts=None, text=target.last_line or "", role="context")]
        yield rule.finding(culprit=peer, at=evs[0].ts, severity=Severity.ERROR,
                           summary=f"{len({e.task for e in evs})} task(s) report {peer} as lost; its own log "
                                   + ("ends without an error" if last else "does not say why"),
                           evidence=last + [_ev(e, "consequence") for e in evs[:4]])


@_rule(code="DD108", rank=8, name="terminated", category=Category.PREEMPTION, title="A task was terminated from outside",
       detects="A task that received SIGTERM (or logged a preemption notice) that distdoctor did not send.",
       why="Schedulers preempt and evict with SIGTERM; the job then fails on every other task.",
       evidence="The exit signal and preemption lines.",
       remedy="Use checkpoints and `tf.distribute.experimental.PreemptionCheckpointHandler` (or BackupAndRestore) so a preempted job resumes; ask the scheduler why it was preempted.")
def _terminated(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if _died_of_own_failure(t) and t.signal == _signal.SIGTERM:
            yield rule.finding(culprit=t.task, at=t.ended_at, summary=f"{t.task} was terminated by SIGTERM from outside distdoctor",
                               evidence=[_exit_evidence(t, f"process {t.pid} ended by SIGTERM")] + [_ev(e) for e in _of(t, EventKind.PREEMPTION)[:2]])
            continue
        saved = [e for e in _of(t, EventKind.PREEMPTION) if "saved a checkpoint" in e.text]
        if saved and _died_of_own_failure(t) and t.signal is None:
            # TF's PreemptionCheckpointHandler saves on a termination notice, then exits (code 42 by default)
            yield rule.finding(culprit=t.task, at=saved[0].ts or t.ended_at, evidence=[_ev(saved[0]), _exit_evidence(t, f"exit code {t.exit_code}")],
                               summary=f"{t.task} saved a checkpoint after a termination notice (SIGTERM, preemption) "
                                       f"and exited with code {t.exit_code}")
    if job.interrupted:
        yield rule.finding(culprit=None, at=job.ended_at, summary=f"the run was interrupted ({job.interrupted}); every task was stopped",
                           evidence=[Evidence(task=None, ts=job.ended_at, text=f"distdoctor received {job.interrupted}")])


@_rule(code="DD110", rank=3, name="port-in-use", category=Category.PORT_IN_USE, title="A task's gRPC port was already in use",
       detects="`Address already in use` / `Failed to add port to server` when TensorFlow starts its server.",
       why="The task cannot start its server; its peers wait for it to connect.",
       evidence="The bind error in the task's log.",
       remedy="Free the port (find the holder with `ss -ltnp`), or give that task another port in TF_CONFIG; run `distdoctor check` before starting.")
def _port(rule: Rule, job: JobObservation):
    for t in job.ordered():
        evs = _of(t, EventKind.PORT_IN_USE)
        if evs:
            yield rule.finding(culprit=t.task, at=evs[0].ts, summary=f"{t.task} could not bind its port: it is already in use",
                               evidence=[_ev(e) for e in evs[:3]])


@_rule(code="DD111", rank=18, name="accelerator-error", category=Category.OTHER, title="NCCL or CUDA reported an error",
       detects="NCCL WARN/error lines and CUDA errors (other than out-of-memory).",
       why="A failing collective library or device aborts the step on that task.",
       evidence="The NCCL/CUDA lines.",
       remedy="Check driver/CUDA/NCCL versions on that node (`distdoctor check`), `NCCL_DEBUG=INFO`, and the interconnect (`NCCL_SOCKET_IFNAME`).")
def _accel(rule: Rule, job: JobObservation):
    for t in job.ordered():
        evs = _of(t, EventKind.NCCL_ERROR, EventKind.CUDA_ERROR)
        if evs and (t.exit_code not in (None, 0) or job.source == "logs"):
            yield rule.finding(culprit=t.task, at=evs[0].ts, summary=f"{t.task}: {evs[0].text[:160]}",
                               evidence=[_ev(e) for e in evs[:3]], severity=Severity.ERROR if t.exit_code else Severity.WARNING)


@_rule(code="DD112", rank=10, name="supervisor-lost", category=Category.PEER_UNRESPONSIVE,
       title="A task's node supervisor stopped answering (host down or network cut)",
       detects="Under `run --node`, the side link to another task's supervisor went silent or closed without a goodbye while its task was running.",
       why="Supervisors send each other a heartbeat every second and their task's exit the moment it happens; silence means that node can no longer be heard: it went down, was cut off, or its supervisor was killed (which also kills its task).",
       evidence="When the supervisor was last heard from, how it was lost, and the task's last lines and progress before that.",
       remedy="Look at that node: is it up (`kubectl get pod -o wide`, `sinfo`/`scontrol show node`), can the others reach it (`distdoctor check --mesh`), did the kernel or the scheduler kill processes there (`dmesg`, pod events)?")
def _supervisor_lost(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if t.supervisor_lost_at is None or t.exit_code is not None:
            continue
        others = [o for o in job.tasks.values() if o.task != t.task]
        others_ok = bool(others) and all(o.exit_code == 0 for o in others)
        on = f" on {t.host}" if t.host else ""
        yield rule.finding(
            culprit=t.task, at=t.supervisor_lost_at, severity=Severity.WARNING if others_ok else Severity.ERROR,
            summary=f"the supervisor of {t.task}{on} stopped answering ({t.supervisor_lost}); its host went down, "
                    "the network to it was cut, or it was killed" + ("; the other tasks finished, so its outcome is "
                                                                     "unknown" if others_ok else ""),
            evidence=[Evidence(task=t.task, ts=t.supervisor_lost_at, text=f"last heard from the supervisor of "
                               f"{t.task}{on}; then {t.supervisor_lost}")] + _last_lines(t))


@_rule(code="DD120", rank=17, name="resource-exhausted", category=Category.RESOURCE_EXHAUSTION, title="A task ran out of a system resource",
       detects="`No space left on device`, `Too many open files`, `Cannot allocate memory`, `Resource temporarily unavailable`.",
       why="Checkpoints, logs and threads fail in ways that look like TensorFlow errors.",
       evidence="The error lines in the task's log.",
       remedy="Free disk where checkpoints go, raise `ulimit -n`, or reduce threads (`tf.data` parallelism, inter-op threads).")
def _resource(rule: Rule, job: JobObservation):
    for t in job.ordered():
        evs = _of(t, EventKind.RESOURCE)
        if evs:
            sev = Severity.ERROR if t.exit_code not in (None, 0) else Severity.WARNING
            yield rule.finding(culprit=t.task, at=evs[0].ts, severity=sev, summary=f"{t.task}: {evs[0].text[:160]}",
                               evidence=[_ev(e) for e in evs[:3]])


@_rule(code="DD201", rank=11, role="hang", name="stalled-worker", category=Category.HANG_STALLED_WORKER, title="Peers wait for one stalled worker",
       detects="No task progresses; some wait inside a TensorFlow collective while one task is stuck outside it (its own code, its input pipeline, a callback).",
       why="TensorFlow waits in the all-reduce forever and prints nothing: the job hangs silently.",
       evidence="Every task's stack at the hang (the culprit's first), where each main thread is, and CPU use.",
       remedy="Look at the culprit's stack: a deadlock or a blocking call in a callback, a slow or exhausted input pipeline, a lock, or I/O on that worker; add timeouts there.")
def _stalled(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "stalled_worker" or left_the_loop(job):
        return
    yield _hang_finding(rule, job, h)


def _hang_finding(rule: Rule, job: JobObservation, h, summary: str | None = None, category: Category | None = None) -> Finding:
    culprit = h.culprits[0] if len(h.culprits) == 1 else None
    ev = [Evidence(task=None, ts=h.declared_at, text=f"no task made progress since {h.declared_at - h.since:.1f} s: {h.reason}")]
    for name in list(h.culprits) + [n for n in h.waiting if n not in h.culprits]:
        t = job.tasks.get(name)
        if t is None:
            continue
        role = "cause" if name in h.culprits else "consequence"
        where = t.location or t.in_tf_call or t.where or "unknown"
        doing = f"waiting in TensorFlow function {t.in_tf_call}" if t.in_tf_call else f"at {where}"
        ev.append(Evidence(task=name, ts=h.declared_at, role=role,
                           text=f"state {t.state}, {doing}, last progress " + _progress_age(h.declared_at, t.last_progress_at)))
    return rule.finding(culprit=culprit, at=h.since, evidence=ev, category=category,
                        summary=summary or (f"the job hung: {h.reason}"), candidates=h.culprits if culprit is None else ())


def _progress_age(declared_at: float, last: float | None) -> str:
    if last is None:
        return "never"
    if last > declared_at:  # a step finished while the hang was being declared (its last sample was older)
        return f"{last - declared_at:.1f} s after the hang was declared"
    return f"{declared_at - last:.1f} s earlier"


@_rule(code="DD202", rank=13, role="hang", name="collective-mismatch", category=Category.HANG_COLLECTIVE_MISMATCH, title="Every task waits in a collective that cannot complete",
       detects="All tasks are blocked inside TensorFlow collectives, idle, and none is busy elsewhere.",
       why="Tasks that run different collectives (different models, branches, step counts or group sizes) wait for each other forever.",
       evidence="Every task's stack and the TensorFlow function it is inside; the odd one when tasks disagree.",
       remedy="Make every task run the same sequence of collectives: same model, same number of steps (`steps_per_epoch`), no task-dependent branches around `strategy.run`/`reduce`.")
def _mismatch(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "collective_mismatch" or left_the_loop(job) or behind_in_mismatch(job):
        return
    if not h.culprits:
        # Nobody is outside the collective. The odd one out is the task whose step count differs from all the
        # others' (it ran another sequence of collectives); otherwise every waiting task is a candidate.
        waiting = list(h.waiting) or [t.task for t in job.ordered()]
        steps = {n: job.tasks[n].steps for n in waiting if n in job.tasks and job.tasks[n].steps is not None}
        odd = [n for n, s in steps.items() if list(steps.values()).count(s) == 1]
        culprits = tuple(odd) if len(odd) == 1 and len(steps) >= 3 else tuple(waiting)
        if len(steps) == 2 and len(set(steps.values())) == 2:
            culprits = (min(steps, key=lambda n: steps[n]),)   # of two, the one behind never reached the collective
        from dataclasses import replace as _replace
        h = _replace(h, culprits=culprits)
    yield _hang_finding(rule, job, h)


@_rule(code="DD203", rank=6, role="hang", name="frozen-task", category=Category.PEER_UNRESPONSIVE, title="A task is frozen",
       detects="A task that is alive but stopped (SIGSTOP, state T) or stuck in uninterruptible sleep (state D, I/O).",
       why="After 10-15 s TensorFlow reports it as 'crashed', which it is not, and leaves the frozen process behind.",
       evidence="The process state from /proc and how long it has been in it.",
       remedy="Find who stopped the process (a debugger, job control, a cgroup freezer) or which I/O it waits on (`cat /proc/PID/stack`, NFS/disk health) on that node.")
def _frozen(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "frozen":
        return
    yield _hang_finding(rule, job, h, summary=f"the job hung: {h.reason}")


@_rule(code="DD204", rank=12, role="hang", name="sharding-imbalance", category=Category.DATA_SHARDING_IMBALANCE, title="A task ran out of data before its peers",
       detects="A task that ran fewer steps than its peers and finished early, or left the step loop (exit 0) while its peers wait in a collective for it, which then hangs or fails.",
       why="Uneven shards (files per worker, `take`, filters) make one worker leave the synchronous loop early; the others hang or fail in the all-reduce it never joins. A custom loop over each worker's own `tf.data` dataset is the common case.",
       evidence="Step counts per task (the agent's count of each task's step-function calls, taken at its exit), exit times, the peers' failed collective.",
       remedy="Make every worker run the same number of steps: set `steps_per_epoch`, `repeat()` the dataset and loop a fixed number of steps, shard by files evenly or use `tf.data.experimental.AutoShardPolicy.DATA`. In a custom loop, iterate `strategy.experimental_distribute_dataset(ds)` (or `distribute_datasets_from_function`), not the worker's own dataset: TF then keeps every worker in the loop until all inputs are exhausted.")
def _imbalance(rule: Rule, job: JobObservation):
    counts = step_counts(job)
    h = job.hang
    if h is not None and h.kind == "peer_exited":
        f = _hang_finding(rule, job, h, summary=f"the job hung: {h.reason}")
        fewer = [n for n in h.culprits if n in counts]
        if fewer:
            f = _replace(f, evidence=f.evidence + tuple(_count_evidence(counts, fewer)))
        yield f
        return
    behind = behind_in_mismatch(job)
    if behind:
        names = [n for n, _, _ in behind]
        most = behind[0][2]
        lead = [t for t in job.ordered() if t.step_calls == most]
        into = {job.tasks[n].in_tf_call for n in names} - {None}
        summary = (f"the job hung: {', '.join(names)} ran {behind[0][1]} steps, {most - behind[0][1]} fewer than "
                   f"{', '.join(t.task for t in lead)} ({most}), then entered another collective"
                   + (f" ({', '.join(sorted(into))})" if into else "")
                   + f" while {', '.join(t.task for t in lead)} wait in step {most} for it: its data ran out first")
        f = _hang_finding(rule, job, _replace(h, culprits=tuple(names)), summary=summary)
        counts = {t.task: (t.step_calls, True) for t in job.ordered() if t.step_calls is not None}
        yield _replace(f, evidence=f.evidence + tuple(_count_evidence(counts, names)))
        return
    left = left_the_loop(job)
    if h is not None and left:
        f = _hang_finding(rule, job, _replace(h, culprits=tuple(left)),
                          summary=f"the job hung: {', '.join(left)} left the training loop after "
                                  f"{counts[left[0]][0]} steps (its training code ended) while "
                                  f"{_waiters(h, left)} in a collective it will never join")
        yield _replace(f, evidence=f.evidence + tuple(_count_evidence(counts, left)))
        return
    for task, bad, most in ran_fewer(counts):
        t = job.tasks[task]
        failed_after = [o for o in job.ordered() if o.task != task and _died_of_own_failure(o)
                        and (o.ended_at is None or t.ended_at is None or o.ended_at >= t.ended_at)]
        ev = _count_evidence(counts, [task])
        if failed_after:
            names = ", ".join(o.task for o in failed_after)
            summary = (f"{task} left the training loop after {bad} steps (its input ran out; exit 0) while "
                       f"{names} went on to step {most} and failed in the collective {task} never joined")
        else:
            summary = f"{task} ran {bad} steps, {most - bad} fewer than its peers ({most}), and finished early"
        yield rule.finding(culprit=task, at=t.ended_at, evidence=ev, summary=summary,
                           category=Category.DATA_SHARDING_IMBALANCE)


def step_counts(job: JobObservation) -> dict[str, tuple[int, bool]]:
    """Steps per training task, and whether that count is exact (the task's own final count).

    The agent's count of each task's step-function calls is used when every training task has one: it is
    per call, and exact when the agent sent it as the task's code ended (and it did not fail on its own). Otherwise the steps from progress lines
    or the agent's periodic samples, exact only for a task that exited 0 (or, from logs, whose log ended):
    a sample taken before a task's end is a lower bound, never evidence that it ran fewer."""
    tasks = [t for t in job.ordered() if t.task.split(":")[0] in ("worker", "chief")]
    if job.strategy != "parameter_server" and len(tasks) >= 2 and all(t.step_calls is not None for t in tasks):
        # a task that failed on its own (an exception, sys.exit(1)) also sends a final count: it ran fewer steps
        # because it failed, which other rules name; only one that ended cleanly can have run out of data
        return {t.task: (t.step_calls, t.step_calls_exact and not _died_of_own_failure(t)) for t in tasks}
    return {t.task: (t.steps, t.exit_code == 0 or job.source == "logs") for t in tasks if t.steps is not None}


def _waiters(h, left: list[str]) -> str:
    names = [n for n in h.waiting if n not in left]
    return f"{', '.join(names)} {'waits' if len(names) == 1 else 'wait'}" if names else "its peers wait"


def left_the_loop(job: JobObservation) -> list[str]:
    """Tasks of a hung job whose training code ended (their final step count is known) after fewer steps than
    a peer's: they left the synchronous loop and the peers wait for them in a collective.

    Only a final count proves it: a live task stuck in a callback at step 8 has the same counts (8 against a
    waiting peer's 9) as one that left the loop, and stays a stalled worker."""
    if job.hang is None or job.hang.kind not in ("stalled_worker", "collective_mismatch"):
        return []
    return [n for n, _, _ in ran_fewer(step_counts(job)) if job.tasks[n].step_calls_exact]


def behind_in_mismatch(job: JobObservation) -> list[tuple[str, int, int]]:
    """(task, its steps, the most) for each task of a collective mismatch whose step function ran fewer times
    than a peer's: every task waits idle, so the counts no longer move, and unequal counts mean the one behind
    left the step loop and entered another collective (an end-of-epoch reduce of a metric or a step count)."""
    h = job.hang
    if h is None or h.kind != "collective_mismatch" or job.source != "run":
        return []
    tasks = [t for t in job.ordered() if t.task.split(":")[0] in ("worker", "chief") and t.exit_code is None]
    if len(tasks) < 2 or any(t.step_calls is None for t in tasks):
        return []
    most = max(t.step_calls for t in tasks)
    fewer = [(t.task, t.step_calls, most) for t in tasks if t.step_calls < most]
    return fewer if fewer and len(fewer) < len(tasks) else []


def ran_fewer(counts: dict[str, tuple[int, bool]]) -> list[tuple[str, int, int]]:
    """(task, its steps, the most any task ran) for each task whose exact count is below another's.

    A lower bound on the side with more steps is still proof; an inexact count on the side with fewer is not.
    Log counts are as coarse as the progress lines, so they must differ by 2 % (at least one step)."""
    if len(counts) < 2:
        return []
    most = max(c for c, _ in counts.values())
    return [(n, c, most) for n, (c, exact) in counts.items()
            if exact and c < most and most - c >= max(1, int(0.02 * most))]


def _count_evidence(counts: dict[str, tuple[int, bool]], fewer: list[str]) -> list[Evidence]:
    ev = []
    for n in sorted(counts, key=lambda n: (n not in fewer, counts[n][0])):
        c, exact = counts[n]
        ev.append(Evidence(task=n, ts=None, role="cause" if n in fewer else "context",
                           text=f"ran {c} steps" + ("" if exact else " (at least; counted before it ended)")))
    return ev[:6]


@_rule(code="DD205", name="straggler", category=Category.STRAGGLER_SLOW_WORKER, title="One task is consistently slower",
       detects="A task that spends much more of each step outside the collective (input pipeline, callbacks, a slow node) than its peers.",
       why="Synchronous training runs at the pace of the slowest worker; the others wait in every all-reduce.",
       evidence="The fraction of samples each task spent outside TensorFlow functions, and step times.",
       remedy="Look at that worker: its input pipeline (prefetch, parallel reads), its callbacks, its node (CPU throttling, noisy neighbours, a slower disk).")
def _straggler(rule: Rule, job: JobObservation):
    rows = [t for t in job.ordered() if t.outside_tf_fraction is not None and not t.task.startswith("ps:")]
    if len(rows) < 2 or job.hang is not None:
        return
    paused = {p.task for p in job.pauses}  # a task that paused the job is named by DD211 (a straggler if it recurs)
    fr = {t.task: t.outside_tf_fraction for t in rows}
    for t in rows:
        others = [v for k, v in fr.items() if k != t.task]
        med = statistics.median(others)
        if fr[t.task] >= 0.35 and fr[t.task] >= 2.5 * max(med, 0.05) and t.task not in paused:
            yield rule.finding(culprit=t.task, at=t.started_at, severity=Severity.WARNING,
                               summary=f"{t.task} spent {fr[t.task]:.0%} of the run outside TensorFlow functions "
                                       f"(peers: {med:.0%}); every step waited for it",
                               evidence=[Evidence(task=k, ts=None, text=f"{v:.0%} of samples busy outside TensorFlow",
                                                  role="cause" if k == t.task else "context") for k, v in fr.items()][:6])


@_rule(code="DD206", rank=22, name="nan-loss", category=Category.NUMERICAL_DIVERGENCE, title="The loss became NaN or infinite",
       detects="A NaN/inf loss in Keras progress lines or reported through the callback; `TerminateOnNaN`.",
       why="Training continues (or stops) producing garbage; in multi-worker runs one task's bad batch poisons every replica.",
       evidence="The first step where the loss was not finite, per task.",
       remedy="Lower the learning rate, clip gradients, check the input data for NaN/inf, use loss scaling with mixed precision.")
def _nan(rule: Rule, job: JobObservation):
    hits = []
    for t in job.ordered():
        evs = _of(t, EventKind.NAN_LOSS)
        if evs:
            hits.append((evs[0].ts or 0, t, evs[0]))
    if not hits:
        return
    hits.sort(key=lambda x: x[0])
    _, t, e = hits[0]
    tasks = ", ".join(h[1].task for h in hits)
    step = f" at step {e.step}" if e.step is not None else ""
    yield rule.finding(culprit=t.task if len(hits) == 1 else None, at=e.ts, severity=Severity.ERROR if any(h[1].exit_code not in (0, None) for h in hits) else Severity.WARNING,
                       summary=f"the loss became non-finite{step}, first on {t.task} (seen on {tasks})",
                       evidence=[_ev(h[2]) for h in hits[:4]], candidates=tuple(h[1].task for h in hits) if len(hits) > 1 else ())


@_rule(code="DD207", name="memory-pressure", category=Category.RESOURCE_EXHAUSTION, title="A task's memory climbs toward its limit",
       detects="A task whose resident memory reached 85 % of its limit (its memory cgroup limit, or the host's memory).",
       why="The next allocation gets the task OOM-killed, silently; peers then blame the network.",
       evidence="RSS samples over time against the limit.",
       remedy="Give the task more memory or use less (smaller batch, shuffle buffer, prefetch; no in-memory `cache()`); look for a leak if it grows every epoch.")
def _memory(rule: Rule, job: JobObservation):
    for t in job.ordered():
        over = [m for m in t.memory if m.limit_bytes and m.rss_bytes >= 0.85 * m.limit_bytes]
        if not over:
            continue
        peak = max(over, key=lambda m: m.rss_bytes)
        first = over[0]
        yield rule.finding(culprit=t.task, at=first.ts, severity=Severity.WARNING,
                           summary=f"{t.task} used {peak.rss_bytes >> 20} MiB of a {peak.limit_bytes >> 20} MiB limit "
                                   f"({peak.rss_bytes / peak.limit_bytes:.0%})",
                           evidence=[Evidence(task=t.task, ts=first.ts, text=f"RSS {first.rss_bytes >> 20} MiB ≥ 85% of {first.limit_bytes >> 20} MiB"),
                                     Evidence(task=t.task, ts=peak.ts, text=f"peak RSS {peak.rss_bytes >> 20} MiB")])


@_rule(code="DD208", name="ps-worker-lost", category=Category.PEER_CRASHED, title="A ParameterServerStrategy worker was lost and the job went on",
       detects="A worker of a ParameterServerStrategy job that died while the coordinator carried on.",
       why="`ClusterCoordinator` reschedules a lost worker's functions on the others, so the job can still succeed — slower.",
       evidence="The worker's exit status; the chief's successful exit.",
       remedy="Find why the worker died (see its log and exit signal); the job survived, but capacity was lost.")
def _ps_worker_lost(rule: Rule, job: JobObservation):
    if job.strategy != "parameter_server" or not chief_succeeded(job):
        return
    chief = job.tasks["chief:0"]
    for t in job.ordered():
        lost = _died_of_own_failure(t) or (job.source == "logs" and t.exit_code is None and not completed(t)
                                           and any(e.peer == t.task for o in job.ordered() for e in _of(o, EventKind.PEER_SYMPTOM)))
        if t.task.startswith("worker:") and lost:
            yield rule.finding(culprit=t.task, at=t.ended_at, severity=Severity.WARNING,
                               summary=f"{t.task} was lost ({signal_name(t.signal) or (f'exit {t.exit_code}' if t.exit_code is not None else 'its peers report it gone')}) and the coordinator finished without it",
                               evidence=[_exit_evidence(t, f"ended by {signal_name(t.signal) or f'exit code {t.exit_code}'}")] if t.exit_code is not None else
                                        [_ev(e, "cause") for o in job.ordered() for e in _of(o, EventKind.PEER_SYMPTOM) if e.peer == t.task][:2]
                                        + [Evidence(task="chief:0", ts=chief.ended_at, text="chief finished training", role="context")])


_SHAPES = re.compile(r"Op at device /job:(\w+)/replica:\d+/task:(\d+)\S* expected shape \[([^\]]*)\] but another member in the group expected shape \[([^\]]*)\]")


@_rule(code="DD209", rank=5, role="own_failure", name="collective-shape-mismatch", category=Category.DATA_SHARDING_IMBALANCE,
       title="Tasks entered different collectives: one left the step loop early",
       detects="`Shape mismatch in the collective instance`: one task runs an end-of-epoch or metric reduction (a scalar) while its peers still all-reduce gradients.",
       why="Each worker computed its own number of steps (from the size of its own shard); the one with fewer batches leaves the loop first and the collectives no longer match.",
       evidence="TensorFlow's shape-mismatch message naming the task and both shapes; step counts.",
       remedy="Give every worker the same number of steps per epoch: compute `steps_per_epoch` from the global dataset size (not the local shard), or `repeat()` the data and set it explicitly; shard files evenly.")
def _shape_mismatch(rule: Rule, job: JobObservation):
    hits = []
    for t in job.ordered():
        hits += _of(t, EventKind.COLLECTIVE_MISMATCH)
    if not hits:
        return
    hits.sort(key=lambda e: e.ts or 0)
    culprit = None
    cands: list[str] = []
    for e in hits:
        m = _SHAPES.search(e.text)
        if m:
            task = f"{m.group(1)}:{m.group(2)}"
            mine, other = m.group(3).strip(), m.group(4).strip()
            if mine == "" and other != "":
                culprit = task  # the scalar reduction: the task that already left the step loop
            elif other == "" and mine != "":
                cands.append(task)
            break
    if culprit is None and cands:
        others = [t for t in job.tasks if t not in cands]
        culprit = others[0] if len(others) == 1 else None
    counts = {t.task: t.step_calls for t in job.ordered()
              if t.task.split(":")[0] in ("worker", "chief") and t.step_calls is not None}
    count_ev: list[Evidence] = []
    if len(counts) >= 2 and len(set(counts.values())) > 1:
        # the shapes do not say who left the loop (two tensors, not a scalar against gradients): the step counts
        # do -- the task whose step function ran fewer times entered the other collective
        fewest = min(counts.values())
        behind = [n for n, c in counts.items() if c == fewest]
        if culprit is None and len(behind) == 1:
            culprit = behind[0]
        count_ev = _count_evidence({n: (c, True) for n, c in counts.items()}, behind)
    category = Category.DATA_SHARDING_IMBALANCE if culprit else Category.HANG_COLLECTIVE_MISMATCH
    ran = f" ({counts[culprit]} steps against {max(counts.values())})" if culprit in counts and count_ev else ""
    yield rule.finding(culprit=culprit, at=hits[0].ts, category=category,
                       candidates=() if culprit else tuple(job.tasks),
                       summary=(f"{culprit} left the training loop early (it ran fewer steps{ran}) and its collectives no "
                                "longer match its peers'" if culprit else "tasks entered collectives of different shapes"),
                       evidence=[_ev(e, "cause" if e.task == culprit else "consequence") for e in hits[:3]] + count_ev)
