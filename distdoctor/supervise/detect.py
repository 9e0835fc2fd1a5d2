"""Judge, from one snapshot of every task, whether the job is hung. Pure.

A hang is declared only when tasks wait on each other:

* **frozen**: a task is stopped (SIGSTOP, ``T``) for a few seconds, or sits in
  uninterruptible sleep (``D``) while no task progresses;
* **stalled worker**: no task progressed for the stall threshold, at least one
  task waits inside a TensorFlow function (a collective) while another is not
  in TensorFlow at all -- and that one made no progress of its own either (its
  CPU time, file or network I/O and stack all stood still: :mod:`.activity`);
* **collective mismatch**: every live task waits inside TensorFlow, idle, and
  none is busy elsewhere.

A task whose Python frame is plain code but whose main thread is blocked inside TensorFlow's native library
(``py-spy dump --native``: destroying the last epoch's iterator, a tf.data ``GetNext``; :mod:`.nativewait`)
waits on TensorFlow like its peers: it is never the stalled culprit. A stalled worker idle outside TensorFlow is
declared only after that look was taken. When every task waits inside TensorFlow and one of them outside a
collective, TensorFlow's runtime is busy with something of its own (the last epoch's iterator torn down: 40 s
measured here after a chief-only pause, with the tutorial's 60,000-element shuffle buffer; longer with larger
ones): like a pause, it is never declared by default, only past ``--hang-timeout`` when the user set one.

A task that keeps making progress of its own while its peers wait (chief-only
evaluation, a slow upload, filling a dataset cache) is a **pause**: it is
suspected early (named within ``threshold / 2``) and never declared, unless the
user set ``hang_timeout``, which bounds every pause (before the job's first step,
never under the start-up allowance a stall gets there). A pause in which nobody
waits on anybody (every worker saving a checkpoint, sleeping in a callback) is
never a hang, however long: a worker that wakes from it a moment before its
peers and waits for them in the next collective is not suspected before it has
waited ``SUSPECT_AFTER_S`` itself, nor declared before it has waited the
threshold (a culprit's stillness counts only while somebody waits on it). The
stall threshold adapts to the job's observed step time; ``hang_timeout``
overrides it. Time is a parameter: nothing here reads the clock.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from ..diagnose.observations import FROZEN_STATES, HangVerdict, TaskState

__all__ = ["TaskSnapshot", "JobSnapshot", "Assessment", "stall_threshold", "assess",
           "FROZEN_AFTER_S", "MIN_STALL_S", "MAX_STALL_S"]

FROZEN_AFTER_S = 3.0   # SIGSTOP is unambiguous; TF calls a frozen peer "crashed" after ~10-15 s
MIN_STALL_S = 10.0     # below this, scheduling noise on a loaded 2-core host looks like a stall
MAX_STALL_S = 20.0     # keeps "stall declared within 30 s" with default settings
RECENT_S = 3.0         # a task whose own progress is this recent is working now (samples: 0.5 s, sockets: 1 s)
SUSPECT_AFTER_S = 7.0  # a suspect is named by then at the latest (half the threshold when that is sooner):
                       # within 10 s of a stall's start, sampling and the loop's tick included
IDLE_CPU = 0.15        # cores: a task waiting in a collective uses almost none
AGENT_STALE_S = 5.0    # an agent silent this long (10 samples) no longer tells what its task is doing
CONFIG_WAIT_S = 30.0   # a task with a wrong TF_CONFIG and a job that never made a step since: it cannot start


@dataclass(frozen=True)
class TaskSnapshot:
    task: str
    alive: bool
    exit_code: int | None
    state: str                       # running, sleeping, stopped, disk-sleep, ...
    state_since: float
    has_agent: bool                  # the bootstrap agent reports for this task
    tf_loaded: bool
    in_call: str | None              # TF function the main thread is inside
    call_since: float | None
    calls: int
    location: str | None             # innermost user frame
    in_tf_code: bool                 # innermost frame is inside the tensorflow package
    serving: bool                    # main thread in server.join() (ParameterServerStrategy worker/ps)
    user_thread_busy: bool
    last_progress_at: float | None
    cpu_rate: float | None           # cores used over the recent window
    started_at: float
    agent_ts: float | None = None    # when the agent last reported (None: not known, trusted as fresh)
    own_progress_at: float | None = None  # when its CPU, I/O, network or stack last moved (:mod:`.activity`)
    activity: str = ""               # what moved then
    native_wait: str | None = None   # TensorFlow's native code its main thread waits in (py-spy --native), if any
    native_looked: bool = True       # that look was taken for its current place (or cannot be taken)
    config_problem: str | None = None  # its process holds a TF_CONFIG other than the job's, wrong thus
    config_since: float | None = None
    ended: bool = False              # its agent's last sample was sent as its main code ended (the exit teardown)


@dataclass(frozen=True)
class JobSnapshot:
    tasks: tuple[TaskSnapshot, ...]
    step_intervals: tuple[float, ...]  # recent seconds between TF calls (all tasks)
    started_at: float
    hang_timeout: float | None = None


@dataclass(frozen=True)
class Assessment:
    status: str                      # "ok", "suspect", "hung"
    threshold: float
    stalled_for: float
    verdict: HangVerdict | None = None
    suspect: str | None = None       # task named in the banner
    reason: str = ""
    pause: bool = False              # the suspect still makes progress of its own: a pause, not (yet) a stall
    where: str | None = None         # the suspect's file:line
    doing: str = ""                  # what the suspect was seen doing, in a pause
    waiting: tuple[str, ...] = ()    # who waits for it


def stall_threshold(step_intervals: tuple[float, ...], hang_timeout: float | None) -> float:
    if hang_timeout is not None:
        return hang_timeout
    if not step_intervals:
        return MAX_STALL_S
    med = statistics.median(step_intervals)
    worst = max(step_intervals)
    return min(MAX_STALL_S, max(MIN_STALL_S, 10 * med, 3 * worst))


def _fresh(t: TaskSnapshot, now: float) -> bool:
    """Whether the agent's view of the task is current. It samples every 0.5 s from its own thread,
    which runs while the main thread waits in TensorFlow; when it falls silent the process holds
    the GIL somewhere (TensorFlow's shutdown at exit, a C extension), and its last sample -- maybe
    mid-step, "in a TF function" -- no longer says what the task is doing."""
    return t.agent_ts is None or now - t.agent_ts <= AGENT_STALE_S


def _waiting(t: TaskSnapshot, now: float) -> bool:
    return t.alive and _fresh(t, now) and (t.in_call is not None or (t.in_tf_code and not t.serving))


def _idle(t: TaskSnapshot) -> bool:
    return t.cpu_rate is not None and t.cpu_rate < IDLE_CPU


def _still_for(t: TaskSnapshot, last: float, now: float) -> float:
    """How long the task has made no progress: no step of the job, nothing of its own (computing now counts)."""
    if t.cpu_rate is not None and t.cpu_rate >= IDLE_CPU:
        return 0.0
    return now - max(last, t.own_progress_at if t.own_progress_at is not None else last)


def _doing(t: TaskSnapshot) -> str:
    if t.cpu_rate is not None and t.cpu_rate >= IDLE_CPU:
        return f"computing ({t.cpu_rate:.2f} cores)"
    return t.activity or "working"


def _judge(kind: str, culprits: list[TaskSnapshot], waiting: list[TaskSnapshot], reason: str, need: float,
           threshold: float, stalled_for: float, last: float, now: float, hang_timeout: float | None,
           waited: float | None = None) -> Assessment:
    """Suspect, or declare: only when the culprits made no progress of their own for ``need`` (a stall) while
    a peer ``waited`` on them as long; a culprit that still works makes a pause, declared only past
    ``hang_timeout`` when the user set one."""
    suspect = culprits[0] if culprits else None
    still = min((_still_for(t, last, now) for t in culprits), default=stalled_for)
    working = [t for t in culprits if _still_for(t, last, now) < need]           # not stalled (yet)
    working_now = [t for t in working if _still_for(t, last, now) < RECENT_S]  # a pause: it works right now
    where = suspect.location if suspect else None
    if working_now:
        w = working_now[0]
        reason = f"{reason}; {w.task} is still {_doing(w)}: a pause, not a stall"
    elif suspect is not None:
        reason = f"{reason}; it has done nothing of its own (CPU, I/O, network, code) for {still:.0f} s"
    verdict = HangVerdict(kind=kind, declared_at=now, since=last, culprits=tuple(t.task for t in culprits),
                          waiting=tuple(t.task for t in waiting if t not in culprits), reason=reason)
    if not working and still >= need and (waited is None or waited >= need):
        return Assessment("hung", threshold, stalled_for, verdict, suspect.task if suspect else None, reason,
                          where=where)
    # ``need`` is the user's --hang-timeout, but never under the start-up allowance before the job's first step:
    # a worker still building its model while a peer waits is start-up, not a pause to bound
    if working and hang_timeout is not None and stalled_for >= need:
        reason = f"{reason} (bounded by --hang-timeout {hang_timeout:g} s)"
        verdict = HangVerdict(kind=kind, declared_at=now, since=last, culprits=verdict.culprits,
                              waiting=verdict.waiting, reason=reason)
        return Assessment("hung", threshold, stalled_for, verdict, suspect.task if suspect else None, reason,
                          where=where)
    return Assessment("suspect", threshold, stalled_for, None, suspect.task if suspect else None, reason,
                      pause=bool(working_now), where=where, doing=_doing(working_now[0]) if working_now else "",
                      waiting=verdict.waiting)


def _majority_odd(tasks: list[TaskSnapshot]) -> list[str]:
    """Tasks whose waiting call (name, count) differs from the majority's."""
    if len(tasks) < 3:
        keys = {(t.in_call, t.calls) for t in tasks}
        return [] if len(keys) <= 1 else []
    counts: dict[tuple, int] = {}
    for t in tasks:
        counts[(t.in_call, t.calls)] = counts.get((t.in_call, t.calls), 0) + 1
    common = max(counts.values())
    if list(counts.values()).count(common) > 1:
        return []
    major = [k for k, v in counts.items() if v == common][0]
    return [t.task for t in tasks if (t.in_call, t.calls) != major]


def assess(job: JobSnapshot, now: float) -> Assessment:
    threshold = stall_threshold(job.step_intervals, job.hang_timeout)
    live = [t for t in job.tasks if t.alive]
    progress = [t.last_progress_at for t in job.tasks if t.last_progress_at is not None]
    last = max(progress) if progress else job.started_at
    stalled_for = max(0.0, now - last)

    # 1. frozen tasks: stopped for a few seconds, or in D state while nothing moves.
    for t in live:
        if t.state in FROZEN_STATES and now - t.state_since >= min(FROZEN_AFTER_S, threshold):
            verdict = HangVerdict(kind="frozen", declared_at=now, since=t.state_since, culprits=(t.task,),
                                  waiting=tuple(w.task for w in live if w is not t),
                                  reason=f"{t.task} has been stopped (state T) for {now - t.state_since:.1f} s")
            return Assessment("hung", threshold, stalled_for, verdict, t.task, verdict.reason)
        if t.state == TaskState.DISK_SLEEP and now - t.state_since >= threshold and stalled_for >= threshold:
            verdict = HangVerdict(kind="frozen", declared_at=now, since=t.state_since, culprits=(t.task,),
                                  waiting=tuple(w.task for w in live if w is not t),
                                  reason=f"{t.task} has been in uninterruptible sleep (state D) for {now - t.state_since:.1f} s")
            return Assessment("hung", threshold, stalled_for, verdict, t.task, verdict.reason)

    # 2. a task holds a TF_CONFIG other than the job's (a wrapper changed it) and nobody ever made a step
    wrong = [t for t in live if t.config_problem]
    if wrong and not progress:
        t = wrong[0]
        waited = now - max(job.started_at, t.config_since or job.started_at)
        reason = f"{t.task} runs with a TF_CONFIG other than the job's: {t.config_problem}"
        verdict = HangVerdict(kind="config", declared_at=now, since=job.started_at, culprits=(t.task,),
                              waiting=tuple(w.task for w in live if w is not t), reason=reason)
        if waited >= CONFIG_WAIT_S:
            return Assessment("hung", threshold, stalled_for, verdict, t.task, reason)
        return Assessment("suspect", threshold, stalled_for, None, t.task, reason)

    training = [t for t in live if t.has_agent and t.tf_loaded and not t.serving]
    # waiting needs someone to wait for: a lone training task (a ParameterServerStrategy
    # coordinator) waits on servers, whose freezing is caught above.
    finished = [t for t in job.tasks if not t.alive and t.exit_code == 0 and t.has_agent and not t.serving]
    if len(training) + len(finished) < 2 or not training or stalled_for < min(threshold / 2, SUSPECT_AFTER_S):
        return Assessment("ok", threshold, stalled_for)
    waiting = [t for t in training if _waiting(t, now)]
    # a task inside TensorFlow that computes (a long trace or compile, a slow op) is not waiting: the idle ones
    # wait for it
    working_in_tf = [t for t in waiting if not _idle(t)]
    waiting = [t for t in waiting if _idle(t)]
    if not waiting:
        return Assessment("ok", threshold, stalled_for)
    first_call = all(t.calls == 0 for t in training)
    need = threshold if not first_call else max(threshold, 3 * MAX_STALL_S)
    others = [t for t in training if not _waiting(t, now)] + working_in_tf
    exited_early = [t for t in job.tasks if not t.alive and t.exit_code == 0]
    # outside TensorFlow by its Python frames, inside it by its native ones: it waits on TensorFlow too
    native = [t for t in others if t.native_wait and t not in working_in_tf and _idle(t)]
    if native:
        others = [t for t in others if t not in native]
        waiting = waiting + native
        if not others:
            n = native[0]
            reason = (f"every task waits inside TensorFlow; {n.task} waits in {n.native_wait} at "
                      f"{n.location or 'Python code'}, not in a collective")
            verdict = HangVerdict(kind="collective_mismatch", declared_at=now, since=last,
                                  culprits=tuple(t.task for t in native),
                                  waiting=tuple(t.task for t in waiting if t not in native), reason=reason)
            if job.hang_timeout is not None and stalled_for >= need:
                reason = f"{reason} (bounded by --hang-timeout {job.hang_timeout:g} s)"
                return Assessment("hung", threshold, stalled_for, replace(verdict, reason=reason), n.task, reason,
                                  where=n.location)
            return Assessment("suspect", threshold, stalled_for, None, n.task, reason, where=n.location,
                              waiting=verdict.waiting)

    if others:
        # how long a task has waited in its collective: a peer that woke from the same pause a moment sooner
        # (every worker sleeping in a callback, the wake-ups a second apart) waits for nobody stalled
        waited = max(now - t.call_since if t.call_since is not None else stalled_for for t in waiting)
        if waited < min(threshold / 2, SUSPECT_AFTER_S):
            return Assessment("ok", threshold, stalled_for)
        idle = [t for t in others if _idle(t)]
        culprits = idle or others
        names = ", ".join(t.task for t in culprits)
        where = culprits[0].location or "Python code"
        if not _fresh(culprits[0], now):
            where += (f" (its agent has been silent for {now - culprits[0].agent_ts:.0f} s: the process holds "
                      "Python's GIL somewhere)")
        inside = "inside" if culprits[0] in working_in_tf else "outside"
        reason = (f"{len(waiting)} task(s) wait in a TensorFlow collective while {names} is "
                  f"{'idle' if idle else 'busy'} {inside} TensorFlow at {where}")
        a = _judge("stalled_worker", culprits, waiting, reason, need, threshold, stalled_for, last, now,
                   job.hang_timeout, waited=waited)
        if a.status == "hung" and inside == "outside" and not all(t.native_looked for t in culprits):
            # its Python frame says idle: not declared before its native frames were looked at
            return replace(a, status="suspect", verdict=None)
        return a

    busy_thread = [t for t in waiting if t.user_thread_busy]
    if busy_thread:
        culprits = busy_thread
        kind = "stalled_worker"
        reason = (f"every task waits in TensorFlow; {culprits[0].task}'s own input thread is busy in user code "
                  f"({culprits[0].location or 'a Python thread'}) while the others wait on it")
    elif exited_early and all(_at_the_end(t, e) for t in waiting for e in exited_early):
        # the job's end: a peer finished the same steps and exited; the others are in TensorFlow's shutdown
        # (outside any step function), which waits up to a minute for the coordination service
        return Assessment("ok", threshold, stalled_for)
    elif exited_early:
        culprits = exited_early
        kind = "peer_exited"
        reason = (f"{', '.join(t.task for t in exited_early)} finished early (exit 0) while "
                  f"{', '.join(t.task for t in waiting)} wait in a collective for it")
        return _exited(kind, culprits, waiting, reason, need, threshold, stalled_for, last, now)
    else:
        culprits = [t for t in waiting if t.task in _majority_odd(waiting)]
        reason = "every task waits inside a TensorFlow collective and none can complete"
        # nobody is outside TensorFlow: every waiting task must have stood still, not only the odd one
        return _mismatch("collective_mismatch", culprits, waiting, reason, need, threshold, stalled_for, last, now,
                         job.hang_timeout)
    return _judge(kind, culprits, waiting, reason, need, threshold, stalled_for, last, now, job.hang_timeout)


def _at_the_end(t: TaskSnapshot, e: TaskSnapshot) -> bool:
    """Whether task ``t``, outside any step function, is at the job's end after its peer ``e`` exited 0 -- not in a
    collective waiting for it. So when both ran as many TF calls; when ``t``'s own code has ended (its agent's last
    sample came as it did: it is in the exit teardown); and when ``e`` left without its last sample (``os._exit``,
    a job's usual cure for a hang at exit), its count being then up to a period and a GIL hold old."""
    return t.in_call is None and (t.calls == e.calls or t.ended or (not e.ended and e.calls <= t.calls))


def _exited(kind, culprits, waiting, reason, need, threshold, stalled_for, last, now) -> Assessment:
    """A peer that exited cannot resume: the waiting tasks are stuck once they stood still for ``need``."""
    verdict = HangVerdict(kind=kind, declared_at=now, since=last, culprits=tuple(t.task for t in culprits),
                          waiting=tuple(t.task for t in waiting), reason=reason)
    if stalled_for >= need:
        return Assessment("hung", threshold, stalled_for, verdict, culprits[0].task, reason)
    return Assessment("suspect", threshold, stalled_for, None, culprits[0].task, reason)


def _mismatch(kind, culprits, waiting, reason, need, threshold, stalled_for, last, now, hang_timeout) -> Assessment:
    a = _judge(kind, waiting, waiting, reason, need, threshold, stalled_for, last, now, hang_timeout)
    suspect = culprits[0].task if culprits else None
    verdict = a.verdict
    if verdict is not None:
        verdict = HangVerdict(kind=kind, declared_at=now, since=last, culprits=tuple(t.task for t in culprits),
                              waiting=tuple(t.task for t in waiting if t not in culprits), reason=verdict.reason)
    return Assessment(a.status, threshold, stalled_for, verdict, suspect, a.reason, pause=a.pause,
                      where=culprits[0].location if culprits else None, doing=a.doing, waiting=a.waiting)
