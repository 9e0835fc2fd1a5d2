"""The rules over how a task ended (DD101-DD120): a signal, a native crash, the OOM killer, an exception, an
allocation failure, an unexplained exit, a peer reported lost, a termination, distdoctor itself stopped, a taken
port, NCCL/CUDA errors, a lost node supervisor, an exhausted system resource.

Each check is a pure function of the :class:`JobObservation`; its findings carry ``at`` (when the problem began)
so the root-cause policy in :mod:`.engine` can pick the first failure.
"""
from __future__ import annotations

import signal as _signal
from dataclasses import replace

from ..catalogue import Rule, RuleList
from ..model import Alternative, Category, Evidence, Severity
from .events import EventKind, LogEvent
from .exception_reading import read_exception
from .logs.priors import SHM_REMEDY
from .logs.settle import settle_for
from .observations import JobObservation, TaskState
from .stopped import doing_when_stopped, each_task_when_stopped
from .taskfacts import (NATIVE_CRASH_SIGNALS, completed, died_of_own_failure, events_of, evidence_of, exit_evidence,
                        heard_the_abort, last_lines, oom_proved, own_events, signal_name)

__all__ = ["RULES"]

RULES = RuleList()
_ev = evidence_of
_of = events_of


@RULES.check(code="DD101", rank=63, name="task-killed", category=Category.PEER_CRASHED, title="A task was killed by a signal",
             detects="A task that died from SIGKILL (or another signal it did not raise itself) while its peers were running.",
             why="Peers then fail with `Connection reset by peer`, `stopped sending heartbeats` or hang; the dead task's own log usually says nothing.",
             evidence="The task's exit status (signal), its last log lines, the absence of OOM-killer evidence.",
             remedy="Find who sent the signal: the scheduler (eviction, time limit), a person, or a watchdog. Check `kubectl describe pod` / `sacct` for the reason, then restart the job (from a checkpoint).")
def _killed(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if not died_of_own_failure(t) or t.signal is None:
            continue
        if t.signal in NATIVE_CRASH_SIGNALS or t.signal == _signal.SIGTERM:
            continue
        if t.signal == _signal.SIGKILL and oom_proved(t)[0]:
            continue
        yield rule.finding(culprit=t.task, at=t.ended_at,
                           summary=f"{t.task} was killed by {signal_name(t.signal)}; no out-of-memory evidence was found",
                           evidence=[exit_evidence(t, f"process {t.pid} ended by {signal_name(t.signal)}")] + last_lines(t))


@RULES.check(code="DD102", rank=87, role="own_failure", name="native-crash", category=Category.SEGFAULT_CORE_DUMP, title="A task crashed in native code",
             detects="A task that died from SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL, or whose log shows a fatal signal, `Check failed` or `core dumped`.",
             why="A native crash in TensorFlow, a custom op or a library (CUDA, NCCL, protobuf) kills the task at once; peers report only a lost connection.",
             evidence="Exit signal, faulthandler's `Fatal Python error` with the Python stack, TensorFlow `Check failed` lines.",
             remedy="Read the Python stack faulthandler printed for that task; look for version mismatches of TensorFlow/CUDA/protobuf on that node; enable core dumps (`ulimit -c unlimited`) and open the core with gdb.")
def _native(rule: Rule, job: JobObservation):
    for t in job.ordered():
        logs = _of(t, EventKind.FATAL_SIGNAL, EventKind.CHECK_FAILED)
        by_signal = died_of_own_failure(t) and t.signal in NATIVE_CRASH_SIGNALS
        if not by_signal and not (logs and (t.exit_code is None or t.exit_code != 0) and not t.killed_by_supervisor):
            continue
        ev = []
        if by_signal:
            ev.append(exit_evidence(t, f"process {t.pid} ended by {signal_name(t.signal)}"))
        ev += [_ev(e) for e in logs[:3]]
        at = t.ended_at if by_signal else (logs[0].ts if logs else None)
        what = signal_name(t.signal) if by_signal else "a fatal signal"
        summary, remedy = f"{t.task} crashed with {what} (a native crash, core dumped where enabled)", None
        if by_signal and t.signal == _signal.SIGBUS:   # most often a page of a full /dev/shm (priors.py: all 7 real cases)
            summary = (f"{t.task} crashed with {what}: a bus error is most often shared memory that ran out (a page "
                       "mapped from a full /dev/shm cannot be backed), else a native defect")
            remedy = SHM_REMEDY + " " + rule.remedy
        yield rule.finding(culprit=t.task, at=at, evidence=ev, summary=summary, remedy=remedy)


_SHM_FULL = 0.9            # of its size in use at the fullest look: it ran out
_SHM_SMALL = 128 << 20     # a /dev/shm this size or smaller (Docker's default is 64 MiB) is too small for loaders


@RULES.check(code="DD113", rank=89, role="own_failure", name="shm-exhausted", category=Category.RESOURCE_EXHAUSTION,
             title="A task died of a bus error with its shared memory (/dev/shm) full or tiny",
             detects="A task that died from SIGBUS while the /dev/shm it sees (its container's) was seen at least 90 % "
                     "full, or is 128 MiB or smaller.",
             why="Data loader workers, NCCL and MPI map their buffers in /dev/shm; a page of a mapping that a full "
                 "tmpfs cannot back raises SIGBUS, and the task dies as if it had crashed in native code.",
             evidence="The exit signal, and the most of its /dev/shm distdoctor saw in use with its size (sampled "
                      "through /proc/PID/root while it ran).",
             remedy=SHM_REMEDY)
def _shm_exhausted(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if not (died_of_own_failure(t) and t.signal == _signal.SIGBUS and t.shm):
            continue
        used, size = t.shm
        full = used >= _SHM_FULL * size
        if not full and size > _SHM_SMALL:
            continue
        seen = (f"its /dev/shm was {100 * used / size:.0f} % full at the fullest look ({used / 2**20:.1f} of "
                f"{size / 2**20:.0f} MiB)")
        yield rule.finding(culprit=t.task, at=t.ended_at,
                           evidence=[exit_evidence(t, f"process {t.pid} ended by SIGBUS"),
                                     Evidence(task=t.task, ts=t.ended_at, text=seen, role="cause")],
                           summary=f"{t.task} died of a bus error: " + (seen if full else f"{seen}; a /dev/shm of "
                                   f"{size / 2**20:.0f} MiB is too small for data loaders, NCCL or MPI buffers"))


@RULES.check(code="DD103", rank=90, role="own_failure", name="oom-killed", category=Category.OOM_HOST, title="A task was killed for lack of host memory",
             detects="A task killed by the kernel's OOM killer or its memory cgroup limit.",
             why="The kernel sends SIGKILL; nothing is printed by the task itself and peers blame the network.",
             evidence="The memory cgroup's OOM counters and peak usage, the kernel log, the task's RSS just before death.",
             remedy="Give the task more memory (the pod's/job's memory limit) or use less: a smaller per-worker batch, a smaller shuffle buffer or prefetch, fewer parallel calls in tf.data, no dataset `cache()` in memory.")
def _oom(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if t.killed_by_supervisor:
            continue
        killed = t.signal == _signal.SIGKILL and t.exit_code is not None and t.exit_code != 0
        proved, why = oom_proved(t)
        log_only = bool(_of(t, EventKind.OOM_KILLER))
        if not ((killed and proved) or log_only):
            continue
        ev = [exit_evidence(t, f"process {t.pid} ended by SIGKILL")] if killed else []
        line_ts = {e.text: e.ts for e in _of(t, EventKind.OOM_KILLER)}   # a log's OOM line keeps its own time
        ev += [Evidence(task=t.task, ts=t.ended_at if t.ended_at is not None else line_ts.get(w), text=w, role="cause")
               for w in why]
        first_oom = next((e.ts for e in _of(t, EventKind.OOM_KILLER) if e.ts is not None), None)
        yield rule.finding(culprit=t.task, at=t.ended_at or first_oom or (t.events[-1].ts if t.events else None), evidence=ev,
                           summary=f"{t.task} was killed by the out-of-memory killer" +
                                   (f" (limit {t.oom.limit_bytes >> 20} MiB)" if t.oom and t.oom.limit_bytes else ""))


@RULES.check(code="DD104", rank=69, role="own_failure", name="python-exception", category=Category.USER_CODE_ERROR, title="A task raised a Python exception",
             detects="A task that ended with a Python traceback whose exception is not a symptom of a lost peer.",
             why="The first exception anywhere is usually the cause; peers then fail with `UnavailableError` or hang in a collective.",
             evidence="The exception line with its whole message (for TensorFlow's `Graph execution error:`, the message on the lines after it), the last frame of its traceback in the user's code with that line's text, and the frame that raised it.",
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
        exc = read_exception(t.task, excs[-1])
        yield rule.finding(culprit=t.task, at=excs[-1].ts or t.ended_at, evidence=exc.evidence(excs[-1].ts, _ev(excs[-1])),
                           summary=exc.summary(), remedy=exc.known_remedy(rule.remedy))


@RULES.check(code="DD105", rank=84, role="own_failure", name="tensor-oom", category=Category.OOM_GPU, title="A task could not allocate a tensor",
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


@RULES.check(code="DD106", rank=30, name="unexplained-exit", category=Category.OTHER, title="A task exited with an error and no explanation",
             detects="A non-zero exit code with no exception, signal or symptom in the task's log.",
             why="Something in the task called `sys.exit(n)` or a wrapper script failed; peers will fail or hang after it.",
             evidence="The exit code and the task's last log lines.",
             remedy="Read the end of that task's log; run its command by hand with the same TF_CONFIG to see why it exits.")
def _unexplained(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if not died_of_own_failure(t) or t.signal is not None:
            continue
        if _of(t, EventKind.PY_EXCEPTION, EventKind.PEER_SYMPTOM, EventKind.OOM_TENSOR, EventKind.OOM_GPU,
               EventKind.FATAL_SIGNAL, EventKind.CHECK_FAILED, EventKind.PORT_IN_USE, EventKind.OOM_KILLER):
            continue
        yield rule.finding(culprit=t.task, at=t.ended_at,
                           summary=f"{t.task} exited with code {t.exit_code} without an exception or signal",
                           evidence=[exit_evidence(t, f"exit code {t.exit_code}")] + last_lines(t, 3))


@RULES.check(code="DD107", rank=33, name="peer-reported-lost", category=Category.PEER_CRASHED, title="Peers report a task as lost",
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
        f = rule.finding(culprit=peer, at=evs[0].ts, severity=Severity.ERROR,
                         summary=f"{len({e.task for e in evs})} task(s) report {peer} as lost; its own log "
                                 + ("ends without an error" if last else "does not say why"),
                         evidence=last + [_ev(e, "consequence") for e in evs[:4]])
        if last:
            # a process that stops mid-line without a word was most often SIGKILLed, by the kernel's OOM killer first
            # of all (logs/priors.py's SIGKILL with no sender): what would settle it is the node's kernel log
            f = replace(f, alternatives=(Alternative(
                Category.OOM_HOST, peer, f"{peer} stopped without a word: most often a SIGKILL, most often from the "
                "kernel's OOM killer, which writes only to the node's kernel log", settle=settle_for(Category.OOM_HOST)),))
        yield f


@RULES.check(code="DD108", rank=66, name="terminated", category=Category.PREEMPTION, title="A task was terminated from outside",
             detects="A task that received SIGTERM (or logged a preemption notice) that distdoctor did not send.",
             why="Schedulers preempt and evict with SIGTERM; the job then fails on every other task.",
             evidence="The exit signal and preemption lines.",
             remedy="Use checkpoints and `tf.distribute.experimental.PreemptionCheckpointHandler` (or BackupAndRestore) so a preempted job resumes; ask the scheduler why it was preempted.")
def _terminated(rule: Rule, job: JobObservation):
    for t in job.ordered():
        if died_of_own_failure(t) and t.signal == _signal.SIGTERM:
            yield rule.finding(culprit=t.task, at=t.ended_at, summary=f"{t.task} was terminated by SIGTERM from outside distdoctor",
                               evidence=[exit_evidence(t, f"process {t.pid} ended by SIGTERM")] + [_ev(e) for e in _of(t, EventKind.PREEMPTION)[:2]])
            continue
        saved = [e for e in _of(t, EventKind.PREEMPTION) if "saved a checkpoint" in e.text]
        if saved and died_of_own_failure(t) and t.signal is None:
            # TF's PreemptionCheckpointHandler saves on a termination notice, then exits (code 42 by default)
            yield rule.finding(culprit=t.task, at=saved[0].ts or t.ended_at, evidence=[_ev(saved[0]), exit_evidence(t, f"exit code {t.exit_code}")],
                               summary=f"{t.task} saved a checkpoint after a termination notice (SIGTERM, preemption) "
                                       f"and exited with code {t.exit_code}")


def _how_stopped(interrupted: str) -> str:
    """``by SIGINT sent to distdoctor``; a stop that came another way (a node's collector) says its own words."""
    return f"by {interrupted} sent to distdoctor" if interrupted.startswith("SIG") else f"({interrupted})"


@RULES.check(code="DD109", rank=65, name="interrupted", category=Category.INTERRUPTED, title="distdoctor itself was stopped",
             detects="A run ended because distdoctor received Ctrl-C (SIGINT), SIGTERM or SIGHUP: a person or the scheduler stopped it, not a task's failure.",
             why="A stopped run is not a preempted task: calling it a preemption sends people to the scheduler, and a retry policy would start again a run someone ended on purpose. What the job was doing at that moment is the useful part: a person usually presses Ctrl-C on a job that looks stuck.",
             evidence="The signal distdoctor received, and each task's state at that moment (in a TensorFlow call or in its own code, where, its step).",
             remedy="Nothing failed by itself. If the job looked stuck, the verdict says who waited for whom; run it again with `--hang-timeout` to let distdoctor name a stall, or `--on-hang wait` to keep it alive for a debugger.")
def _interrupted(rule: Rule, job: JobObservation):
    if job.interrupted:
        doing = doing_when_stopped(job)
        yield rule.finding(culprit=None, at=job.ended_at,
                           summary=f"the run was stopped {_how_stopped(job.interrupted)}; at that moment {doing}",
                           evidence=[Evidence(task=None, ts=job.ended_at, text=f"distdoctor received {job.interrupted}"
                                              if job.interrupted.startswith("SIG") else job.interrupted)]
                           + [Evidence(task=task, ts=job.ended_at, text=what, role="context")
                              for task, what in each_task_when_stopped(job)[:8]])


@RULES.check(code="DD110", rank=81, name="port-in-use", category=Category.PORT_IN_USE, title="A task's gRPC port was already in use",
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


@RULES.check(code="DD111", rank=36, name="accelerator-error", category=Category.OTHER, title="NCCL or CUDA reported an error",
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


@RULES.check(code="DD112", rank=60, name="supervisor-lost", category=Category.PEER_UNRESPONSIVE,
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
                               f"{t.task}{on}; then {t.supervisor_lost}")] + last_lines(t))


@RULES.check(code="DD120", rank=39, name="resource-exhausted", category=Category.RESOURCE_EXHAUSTION, title="A task ran out of a system resource",
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
