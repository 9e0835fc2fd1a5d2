"""The supervisor's life cycle as data: phases, their allowed transitions, typed events, and one pure decision.

Each turn the loop's pure step (:mod:`.step`) freezes its state and what it observed into a
:class:`LoopState` and asks :func:`decide` what to do; the step turns the answer into typed events
and actions (:mod:`.runevents`). Time is a parameter. Tested with plain numbers in
tests/test_lifecycle.py.

The phases of one run (``run --restarts`` loops through them once per attempt)::

    IDLE -> LAUNCHING -> RUNNING -> FAILING (a fatal failure: the peers get ``failure_grace``) -> STOPPING -> DONE
                        \\-> HUNG (stacks captured) -> STOPPING -> DONE
    DONE -> BACKOFF -> LAUNCHING   (a restart)
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from ..model import JobEvent   # one line of events.jsonl: one class, shared with its reader (report/bundle.py)

__all__ = ["Phase", "TRANSITIONS", "allowed", "LifecycleError", "JobEventKind", "JobEvent", "LoopState",
           "StopAll", "EndAttempt", "DeclareHang", "SuspectStall", "ClearStall", "Action", "decide"]


class LifecycleError(Exception):
    """A transition the table does not allow: a supervisor bug."""


class Phase(str, enum.Enum):
    IDLE = "idle"            # nothing launched yet
    LAUNCHING = "launching"
    RUNNING = "running"
    FAILING = "failing"      # a fatal failure was seen; the others may still report it
    HUNG = "hung"            # a hang was declared
    STOPPING = "stopping"    # distdoctor is stopping the tasks still running
    DONE = "done"            # the attempt ended and is diagnosed
    BACKOFF = "backoff"      # waiting before a restart


TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.IDLE: frozenset({Phase.LAUNCHING}),
    Phase.LAUNCHING: frozenset({Phase.RUNNING, Phase.STOPPING}),
    Phase.RUNNING: frozenset({Phase.FAILING, Phase.HUNG, Phase.STOPPING, Phase.DONE}),
    Phase.FAILING: frozenset({Phase.STOPPING, Phase.DONE}),
    Phase.HUNG: frozenset({Phase.STOPPING, Phase.DONE}),
    Phase.STOPPING: frozenset({Phase.DONE}),
    Phase.DONE: frozenset({Phase.BACKOFF}),
    Phase.BACKOFF: frozenset({Phase.LAUNCHING, Phase.DONE}),
}


def allowed(a: Phase, b: Phase) -> bool:
    return a == b or b in TRANSITIONS[a]


class JobEventKind(str, enum.Enum):
    """The kinds of lines in the bundle's ``events.jsonl``."""

    START = "start"
    AGENT = "agent"
    CONNECTED = "connected"
    FAULT = "fault"
    RECOGNISED = "recognised"     # a line the knowledge base knows as a specific cause (supervise/knowledge.py)
    STALL_SUSPECTED = "stall_suspected"
    STALL_CLEARED = "stall_cleared"
    HANG_DECLARED = "hang_declared"
    EXIT = "exit"
    SIGNAL_SENT = "signal_sent"
    MEMORY_WARNING = "memory_warning"
    ATTEMPT = "attempt"
    SUPERVISOR_LOST = "supervisor_lost"


@dataclass(frozen=True)
class LoopState:
    """What one turn of the loop observed (no clock inside: ``now`` is passed to :func:`decide`)."""

    interrupted: str | None = None
    alive: tuple[str, ...] = ()              # tasks still running
    awaiting_peers: bool = False             # run --node: tasks started elsewhere may still join
    relaunch_pending: bool = False           # a PSS worker waits for its restart
    fatal_failure_at: float | None = None    # when the first fatal failure was detected
    failure_grace: float = 10.0
    chief_done_at: float | None = None       # ParameterServerStrategy: the coordinator ended then
    hang_allowed: bool = True                # no fatal failure yet, and this supervisor judges hangs
    assessment: str = "ok"                   # detect.assess: "ok", "suspect" or "hung"
    still: bool = False                      # no step since the suspicion began (a suspicion ends on progress only)
    has_verdict: bool = False                # the assessment carries a hang verdict
    banner: str | None = None
    teardown_since: float | None = None      # every live task's code ended without an error (the last of them then)
    exit_grace: float = 120.0                # how long such tasks may sit in their exit teardown


@dataclass(frozen=True)
class StopAll:
    reason: str
    say: str | None = None


@dataclass(frozen=True)
class EndAttempt:
    pass


@dataclass(frozen=True)
class DeclareHang:
    pass


@dataclass(frozen=True)
class SuspectStall:
    pass


@dataclass(frozen=True)
class ClearStall:
    pass


Action = StopAll | EndAttempt | DeclareHang | SuspectStall | ClearStall
CHIEF_LINGER_S = 1.0   # after a PSS chief ends, workers and ps (which serve forever) are stopped this much later
TEARDOWN = "teardown"  # StopAll's reason: the job's code ended everywhere, a process's exit teardown did not


def decide(s: LoopState, now: float) -> tuple[Action, ...]:
    """What the supervisor does this turn, in order."""
    if s.interrupted:
        return (StopAll(s.interrupted, f"received {s.interrupted}: stopping every task"), EndAttempt())
    if not s.alive and not s.awaiting_peers and not s.relaunch_pending:
        return (EndAttempt(),)
    if s.fatal_failure_at is not None:
        if now - s.fatal_failure_at >= s.failure_grace:
            return (StopAll("failure", "stopping the tasks that are still running: " + ", ".join(s.alive)), EndAttempt())
    if s.chief_done_at is not None and now - s.chief_done_at >= CHIEF_LINGER_S \
            and all(t.split(":")[0] in ("worker", "ps") for t in s.alive):
        return (StopAll("chief finished"), EndAttempt())
    if s.teardown_since is not None and now - s.teardown_since >= s.exit_grace:
        return (StopAll(TEARDOWN), EndAttempt())
    out: list[Action] = []
    if s.assessment == "suspect" and not s.banner:
        out.append(SuspectStall())
    elif s.assessment == "ok" and s.banner and s.banner.startswith("stall suspected") and not s.still:
        out.append(ClearStall())
    if s.assessment == "hung" and s.has_verdict and s.hang_allowed:
        out += [DeclareHang(), StopAll("hang"), EndAttempt()]
    return tuple(out)
