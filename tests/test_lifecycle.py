"""The supervisor's life cycle: the transition table and the pure loop decision, with plain numbers."""
from __future__ import annotations

import pytest

from distdoctor.supervise.lifecycle import (TRANSITIONS, ClearStall, DeclareHang, EndAttempt, JobEvent, JobEventKind,
                                            LoopState, Phase, StopAll, SuspectStall, allowed, decide)

NOW = 1000.0
W = ("worker:0", "worker:1")


def kinds(actions):
    return [type(a).__name__ + (f"({a.reason})" if isinstance(a, StopAll) else "") for a in actions]


@pytest.mark.parametrize("state,expected", [
    (LoopState(alive=W), []),
    (LoopState(interrupted="SIGINT", alive=W), ["StopAll(SIGINT)", "EndAttempt"]),
    (LoopState(alive=()), ["EndAttempt"]),
    (LoopState(alive=(), awaiting_peers=True), []),
    (LoopState(alive=(), relaunch_pending=True), []),
    (LoopState(alive=("worker:0",), fatal_failure_at=NOW - 9.9, failure_grace=10), []),
    (LoopState(alive=("worker:0",), fatal_failure_at=NOW - 10, failure_grace=10), ["StopAll(failure)", "EndAttempt"]),
    (LoopState(alive=("worker:0", "ps:0"), chief_done_at=NOW - 0.5), []),
    (LoopState(alive=("worker:0", "ps:0"), chief_done_at=NOW - 1.0), ["StopAll(chief finished)", "EndAttempt"]),
    (LoopState(alive=W, assessment="suspect"), ["SuspectStall"]),
    (LoopState(alive=W, assessment="suspect", banner="stall suspected: x"), []),
    (LoopState(alive=W, assessment="ok", banner="stall suspected: x"), ["ClearStall"]),
    (LoopState(alive=W, assessment="ok", banner="worker:1 failed"), []),
    (LoopState(alive=W, assessment="hung", has_verdict=True), ["DeclareHang", "StopAll(hang)", "EndAttempt"]),
    (LoopState(alive=W, assessment="hung", has_verdict=True, hang_allowed=False), []),
    (LoopState(alive=W, assessment="hung", has_verdict=False), []),
], ids=lambda v: "" if isinstance(v, list) else None)
def test_decide(state, expected):
    assert kinds(decide(state, NOW)) == expected


def test_the_transition_table_covers_every_phase_and_has_the_restart_cycle():
    assert set(TRANSITIONS) == set(Phase)
    path = [Phase.IDLE, Phase.LAUNCHING, Phase.RUNNING, Phase.FAILING, Phase.STOPPING, Phase.DONE, Phase.BACKOFF,
            Phase.LAUNCHING, Phase.RUNNING, Phase.HUNG, Phase.STOPPING, Phase.DONE]
    assert all(allowed(a, b) for a, b in zip(path, path[1:]))
    assert not allowed(Phase.DONE, Phase.RUNNING) and not allowed(Phase.HUNG, Phase.FAILING)
    assert not allowed(Phase.IDLE, Phase.RUNNING)


def test_job_events_are_typed_and_serialise_as_before():
    e = JobEvent(1.5, "worker:1", JobEventKind.HANG_DECLARED, "r")
    assert e.to_json() == {"ts": 1.5, "task": "worker:1", "kind": "hang_declared", "text": "r"}
    assert {k.value for k in JobEventKind} >= {"start", "exit", "fault", "signal_sent", "connected"}
    assert [type(a) for a in (StopAll("x"), EndAttempt(), DeclareHang(), SuspectStall(), ClearStall())]


def test_a_suspicion_ends_only_when_the_job_steps_again():
    """A suspect that enters TensorFlow to trace (busy) turns the assessment "ok" without any step: the
    suspicion (and the pause it measures) goes on until progress resumes."""
    from distdoctor.supervise.lifecycle import ClearStall, LoopState, decide
    base = dict(alive=("worker:0", "worker:1"), assessment="ok", banner="stall suspected: worker:0 is busy")
    assert not any(isinstance(a, ClearStall) for a in decide(LoopState(still=True, **base), 100.0))
    assert any(isinstance(a, ClearStall) for a in decide(LoopState(still=False, **base), 100.0))
