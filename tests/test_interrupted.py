"""A signal to distdoctor itself (Ctrl-C, SIGTERM): category ``interrupted`` (DD109), never a preemption; the verdict
says what the job was doing; the exit codes. Pure: hand-built observations."""
from __future__ import annotations

import signal

import pytest

from distdoctor.diagnose.engine import diagnose
from distdoctor.diagnose.observations import JobObservation, TaskObservation, TaskState
from distdoctor.model import Category, Status
from distdoctor.supervise.exitcodes import PERMANENT, RETRYABLE, policy_exit_status
from distdoctor.supervise.policy import RestartClass, classify

T0 = 1_700_000_000.0


def _stopped(task, **kw) -> TaskObservation:
    """A task distdoctor stopped (SIGTERM) when it was itself stopped."""
    base = dict(task=task, pid=100, started_at=T0, ended_at=T0 + 30, exit_code=-signal.SIGTERM,
                signal=signal.SIGTERM, state=TaskState.EXITED, killed_by_supervisor=True)
    base.update(kw)
    return TaskObservation(**base)


def _job(*tasks, sig="SIGINT") -> JobObservation:
    return JobObservation(tasks={t.task: t for t in tasks}, interrupted=sig, ended_at=T0 + 30, started_at=T0,
                          strategy="multi_worker_mirrored")


def test_a_peer_waiting_for_one_in_its_own_code():
    job = _job(_stopped("worker:0", where="tf", in_tf_call="CollectiveReduceV2", steps=40),
               _stopped("worker:1", where="python", location="train.py:88 in load_batch", steps=40))
    d = diagnose(job, detected_at=T0 + 31)
    rc = d.root_cause
    assert (rc.code, rc.category, rc.culprit, d.interrupted) == ("DD109", Category.INTERRUPTED, None, "SIGINT")
    assert rc.summary == ("the run was stopped by SIGINT sent to distdoctor; at that moment worker:0 waited in "
                          "TensorFlow (in CollectiveReduceV2) at step 40 for worker:1, which was elsewhere: worker:1 "
                          "in its own code at train.py:88 in load_batch at step 40")
    assert [(e.task, e.text) for e in rc.evidence] == [
        (None, "distdoctor received SIGINT"), ("worker:0", "was in TensorFlow (CollectiveReduceV2) at step 40"),
        ("worker:1", "was in its own code at train.py:88 in load_batch at step 40")]
    assert d.exit_code == 130 and d.status == Status.FAILED
    assert not any(f.category == Category.PREEMPTION for f in d.findings)


def test_all_tasks_training():
    job = _job(_stopped("worker:0", where="tf", steps=212), _stopped("worker:1", where="tf", steps=212), sig="SIGTERM")
    d = diagnose(job, detected_at=T0 + 31)
    assert d.root_cause.summary.endswith("at that moment all tasks were training (in TensorFlow) at step 212")
    assert d.exit_code == 143


def test_a_frozen_task_and_one_that_had_ended():
    job = _job(_stopped("worker:0", where="tf"), _stopped("worker:1", state=TaskState.STOPPED),
               TaskObservation(task="worker:2", exit_code=0, ended_at=T0 + 10, started_at=T0, state=TaskState.EXITED))
    s = diagnose(job, detected_at=T0 + 31).root_cause.summary
    assert "worker:0 waited in TensorFlow for worker:1, which was elsewhere: worker:1 was stopped" in s
    assert "worker:2 had already ended (exit 0)" in s


def test_a_failure_before_the_interruption_stays_the_root_cause():
    """Ctrl-C during the failure grace: the task that failed first is the cause, not the person who pressed it."""
    job = _job(TaskObservation(task="worker:1", exit_code=1, ended_at=T0 + 5, started_at=T0, state=TaskState.EXITED),
               _stopped("worker:0", where="tf"))
    d = diagnose(job, detected_at=T0 + 31)
    assert d.root_cause.culprit == "worker:1" and d.root_cause.category != Category.INTERRUPTED


@pytest.mark.parametrize("sig,code,cls", [("SIGINT", PERMANENT, RestartClass.DETERMINISTIC),
                                          ("SIGTERM", RETRYABLE, RestartClass.TRANSIENT),
                                          ("SIGHUP", RETRYABLE, RestartClass.TRANSIENT)])
def test_exit_code_policy(sig, code, cls):
    """A person's Ctrl-C is not retried; a SIGTERM to the supervisor is how a scheduler evicts or preempts."""
    d = diagnose(_job(_stopped("worker:0", where="tf"), sig=sig), detected_at=T0 + 31)
    choice = policy_exit_status(d)
    assert (choice.code, choice.restart_class) == (code, cls)
    assert classify(d.root_cause)[0] == RestartClass.DETERMINISTIC    # never a transient failure to retry
