"""The supervisor's loop as one value and one pure step.

``step(state, now, observed) -> (state, effects)``: the :class:`RunState` of the attempt, the clock's reading
and what this turn observed (:class:`Observed`: the tasks that ended or were lost, the detector's
:class:`~.detect.Assessment`, a signal received) give the next state and the effects, in order: typed events
for the sinks and the actions the supervisor carries out (:mod:`.runevents`). Nothing here reads the clock,
touches a process or writes a file; tests/test_supervisor_step.py drives it with plain numbers.

Policies (unchanged from the loop it replaces):

* a task that dies non-zero is seen at once; in a synchronous job (MultiWorkerMirrored) that is the verdict's
  moment, and the others get ``failure_grace`` seconds to report their symptoms before they are stopped. In a
  ParameterServerStrategy job only the chief or a ps is fatal (a worker's failure asks for a restart of it
  alone); the job ends when the chief ends;
* :func:`.lifecycle.decide` turns the detector's reading into suspicion, clearance or a declared hang;
* :mod:`.pauses` keeps the suspicions that ended as pauses (DD211).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from . import lifecycle
from .lifecycle import LoopState, Phase
from .pauses import PauseLog
from .runevents import (Assessed, AttemptOver, HangDeclared, Journal, JudgeTaskRestart, RecordHang, RunEvent, Said,
                        StallCleared, StallSuspected, StopTasks, TaskExited, TaskFailed, TaskLost, Turned)

__all__ = ["Rules", "RunState", "ExitSeen", "ExitingSeen", "LostSeen", "Observed", "step", "enter", "fatal"]


@dataclass(frozen=True)
class Rules:
    """What the step needs of the run's configuration."""

    strategy: str = "multi_worker_mirrored"
    failure_grace: float = 10.0
    grace: float = 10.0
    exit_grace: float = 120.0     # every live task's code ended cleanly this long ago: stop what is left (0: never)


@dataclass(frozen=True)
class RunState:
    """Everything the loop carries from one turn to the next, for one attempt."""

    rules: Rules = field(default_factory=Rules)
    phase: Phase = Phase.RUNNING
    interrupted: str | None = None
    banner: str | None = None                        # what the live view shows on top
    detected_at: float | None = None                 # the verdict's moment
    first_failure: tuple[float, str] | None = None   # (when, task): the first fatal failure
    chief_done_at: float | None = None               # ParameterServerStrategy: the coordinator ended then
    hang: Any = None                                 # the declared HangVerdict
    pauses: PauseLog = field(default_factory=PauseLog)
    over: bool = False                               # the attempt ended
    told_exiting: frozenset = frozenset()            # tasks already failed for not exiting after an uncaught exception
    teardown: tuple = ()                             # ((task, when its code ended), ...): stopped in their teardown


@dataclass(frozen=True)
class ExitSeen:
    """A task whose end this turn noticed."""

    task: str
    rc: int | None
    ended_at: float | None
    how: str                      # "exit code 1", "signal SIGKILL"
    killed: bool = False          # distdoctor stopped it
    first_fault: str | None = None
    oom: Any = None               # its memory cgroup's evidence at the exit (an OomEvidence), when it was killed


@dataclass(frozen=True)
class ExitingSeen:
    """A live task whose main thread's code ended with an uncaught exception: the process is on its way out."""

    task: str
    exception: str                # the exception's type name
    since: float                  # when it was raised
    first_fault: str | None = None


@dataclass(frozen=True)
class LostSeen:
    """run --node: a task whose node supervisor this turn found lost."""

    task: str
    at: float | None              # when it was last heard from
    how: str
    host: str | None = None


@dataclass(frozen=True)
class Observed:
    """What one turn observed."""

    alive: tuple[str, ...] = ()
    exits: tuple[ExitSeen, ...] = ()
    exiting: tuple[ExitingSeen, ...] = ()
    lingering: tuple[tuple[str, float], ...] = ()   # live tasks whose code ended without an error, and when
    lost: tuple[LostSeen, ...] = ()
    assessment: Any = None               # detect.assess's reading; None when nothing runs
    interrupted: str | None = None       # a signal the supervisor received
    awaiting_peers: bool = False         # run --node: tasks started elsewhere may still join
    relaunch_pending: bool = False       # a ParameterServerStrategy worker waits for its restart
    judges_hangs: bool = True            # a node that is not the collector leaves hangs to the collector
    culprit_location: str | None = None  # where a hang's culprit is (for the alert)


def fatal(rules: Rules, task: str) -> bool:
    """Whether ``task``'s failure ends the job (ParameterServerStrategy goes on without a worker)."""
    return rules.strategy != "parameter_server" or not task.startswith("worker:")


def enter(s: RunState, phase: Phase, now: float) -> tuple[RunState, tuple[RunEvent, ...]]:
    """Move to ``phase``; a move the table forbids is recorded (a supervisor bug), never fatal to the run."""
    out: tuple[RunEvent, ...] = ()
    if not lifecycle.allowed(s.phase, phase):
        out = (Journal(now, None, "lifecycle_error", f"{s.phase.value} -> {phase.value} is not allowed"),)
    return replace(s, phase=phase), out


def _failures(s: RunState, now: float, o: Observed, out: list) -> RunState:
    for lost in o.lost:
        out.append(TaskLost(now, lost.task, lost.how, lost.host))
        if s.first_failure is None and fatal(s.rules, lost.task):   # a lost PSS worker leaves detection armed
            banner = f"{lost.task}'s node is lost ({lost.how}); the job cannot complete"
            s = replace(s, first_failure=(lost.at or now, lost.task), detected_at=now, banner=banner)
            out.append(Said(banner + f"; waiting up to {s.rules.failure_grace:.0f} s for the other tasks"))
    for e in o.exits:
        out.append(TaskExited(e.ended_at or now, e.task, e.how, e.killed, e.oom))
        if e.killed:
            continue
        since = e.ended_at or now
        if e.rc != 0 and not fatal(s.rules, e.task):
            # a lost ParameterServerStrategy worker: the coordinator goes on; hang detection and the grace stop
            # stay armed for a later fatal failure (first_failure is only a fatal one)
            out += [TaskFailed(now, e.task, e.how, False, since), JudgeTaskRestart(e.task, now)]
        elif e.rc != 0 and s.first_failure is None:
            banner = f"{e.task} failed ({e.how}); the job cannot complete"
            s = replace(s, first_failure=(since, e.task), detected_at=now, banner=banner)
            out.append(TaskFailed(now, e.task, e.how, True, since, e.first_fault, banner, s.rules.failure_grace))
        if e.task == "chief:0" and s.rules.strategy == "parameter_server":
            s = replace(s, chief_done_at=now)
    return _stuck_exiting(s, now, o, out)


def _stuck_exiting(s: RunState, now: float, o: Observed, out: list) -> RunState:
    """A task whose code raised an uncaught exception and that has not exited a failure grace later has failed: its
    own code ended it, and TensorFlow's teardown can wait forever for a peer that waits for it (a collective, a
    tf.data iterator's threads). It is failed like a task that exited, so the job ends instead of hanging."""
    for x in o.exiting:
        if x.task in s.told_exiting or now - x.since < s.rules.failure_grace:
            continue
        s = replace(s, told_exiting=s.told_exiting | {x.task})
        how = f"raised {x.exception} and has not exited {now - x.since:.0f} s later"
        if not fatal(s.rules, x.task):
            out.append(TaskFailed(now, x.task, how, False, x.since))
        elif s.first_failure is None:
            banner = f"{x.task} failed ({how}); the job cannot complete"
            s = replace(s, first_failure=(x.since, x.task), detected_at=now, banner=banner)
            out.append(TaskFailed(now, x.task, how, True, x.since, x.first_fault, banner, s.rules.failure_grace))
    return s


def teardown_notes(s: RunState) -> list[str]:
    """What the diagnosis says of each task stopped in its exit teardown (``s.teardown``)."""
    return [f"{task}'s code ended without an error, but its process sat in its exit teardown, doing nothing, for "
            f"{s.rules.exit_grace:.0f} s (TensorFlow's destructors can wait for ever: a tf.data iterator's threads, a "
            "coordination service whose peers left): distdoctor stopped it once the job's work was done (--exit-grace)"
            for task, _ in s.teardown]


def step(s: RunState, now: float, o: Observed) -> tuple[RunState, tuple[RunEvent, ...]]:
    """One turn: the tasks that ended, the detector's reading, then :func:`.lifecycle.decide`'s actions."""
    out: list[RunEvent] = []
    s = _failures(replace(s, interrupted=o.interrupted), now, o, out)
    if s.first_failure is not None:
        s, errs = enter(s, Phase.FAILING, now)
        out += errs
    a = o.assessment
    if a is not None:
        s = replace(s, pauses=s.pauses.follow(a))
        out.append(Assessed(now, a))
    is_fatal = s.first_failure is not None and fatal(s.rules, s.first_failure[1])
    ended = dict(o.lingering)
    # every task still running has ended its code without an error and nothing failed: the job's work is done, and
    # what is left is the processes' exit teardown (TensorFlow's destructors can wait for ever: a tf.data iterator's
    # threads at interpreter exit, a coordination service whose peers left). Only a supervisor that sees every task
    # says so (run, run --node's collector): a node alone cannot know that its peers' code ended too.
    teardown_since = (max(ended[t] for t in o.alive) if o.alive and set(o.alive) <= set(ended) and s.first_failure is None
                      and s.hang is None and not o.awaiting_peers and not o.relaunch_pending and o.judges_hangs
                      and s.rules.exit_grace > 0 else None)
    view = LoopState(
        interrupted=s.interrupted, alive=o.alive, awaiting_peers=o.awaiting_peers,
        relaunch_pending=o.relaunch_pending, fatal_failure_at=s.detected_at if is_fatal else None,
        failure_grace=s.rules.failure_grace, chief_done_at=s.chief_done_at,
        hang_allowed=s.first_failure is None and o.judges_hangs, assessment=a.status if a is not None else "ok",
        has_verdict=bool(a is not None and a.verdict is not None), still=s.pauses.still(a, now), banner=s.banner,
        teardown_since=teardown_since, exit_grace=s.rules.exit_grace)
    for act in lifecycle.decide(view, now):
        if isinstance(act, lifecycle.SuspectStall):
            s = replace(s, banner=f"stall suspected: {a.reason}", pauses=s.pauses.suspect(a, now))
            out.append(StallSuspected(now, a.suspect, a.reason, a.stalled_for, a.threshold))
        elif isinstance(act, lifecycle.ClearStall):
            pauses, p = s.pauses.clear(a, now)
            s = replace(s, banner=None, pauses=pauses)
            text = "progress resumed"
            if p is not None:
                text = (f"progress resumed after {p.seconds:.1f} s: {p.task} " + (f"was {p.doing} " if p.doing else "")
                        + (f"at {p.where}" if p.where else "outside TensorFlow"))
            out.append(StallCleared(now, p.task if p else None, text))
        elif isinstance(act, lifecycle.DeclareHang):
            s, errs = enter(replace(s, pauses=s.pauses.drop()), Phase.HUNG, now)
            s = replace(s, hang=a.verdict, detected_at=now, banner=f"HANG: {a.reason}")
            out += [*errs, HangDeclared(now, a.suspect, a.reason, a.verdict, o.culprit_location), RecordHang()]
        elif isinstance(act, lifecycle.StopAll):
            if act.reason == s.interrupted:
                out.append(Said(f"received {s.interrupted}: stopping every task (SIGTERM, SIGKILL after "
                                f"{s.rules.grace:.0f} s)"))
                s = replace(s, detected_at=now)
            elif act.reason == lifecycle.TEARDOWN:
                s = replace(s, teardown=tuple((t, ended[t]) for t in o.alive))
                out.append(Said(", ".join(o.alive) + (" has" if len(o.alive) == 1 else " have")
                                + f" not exited {now - teardown_since:.0f} s after "
                                + ("its" if len(o.alive) == 1 else "their") + " code ended without an error (the exit "
                                "teardown does not end); the job's work is done: stopping "
                                + ("it" if len(o.alive) == 1 else "them") + f" (--exit-grace {s.rules.exit_grace:.0f})"))
            elif act.say:
                out.append(Said(act.say))
            s, errs = enter(s, Phase.STOPPING, now)
            out += [*errs, StopTasks(act.reason)]
        elif isinstance(act, lifecycle.EndAttempt):
            out.append(AttemptOver())
            return replace(s, over=True), tuple(out)
    out.append(Turned(now, s.banner))
    return s, tuple(out)
