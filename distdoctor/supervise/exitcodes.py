"""``--exit-code-policy``: the exit status that makes the scheduler's own policy do the right thing.

When a job stops for good (it succeeded, its failure is deterministic, the restart budget is
spent, or the node cannot be restarted in place), each supervisor exits with one of three
codes, chosen from the verdict by :func:`.policy.classify` (pure, tested with plain verdicts):

* ``0`` -- the job succeeded;
* ``143`` (:data:`RETRYABLE`) -- a transient failure: a restart can fix it. TFJob's
  ``restartPolicy: ExitCode`` restarts the pod (130, 137 and 143 are its retryable codes), a
  Job's ``podFailurePolicy`` counts it against ``backoffLimit``, Slurm requeues on it;
* ``1`` (:data:`PERMANENT`) -- a deterministic failure: TFJob fails the job (1, 2, 126, 127,
  128 and 139 are its permanent codes), a ``podFailurePolicy`` rule ``FailJob`` on 1 ends it
  at once, Slurm does not requeue.

Usage errors keep exit 2 (also permanent). A run distdoctor itself was stopped in (category
``interrupted``) is permanent after Ctrl-C (SIGINT: a person ended it) and retryable after SIGTERM or
SIGHUP (how a scheduler evicts or preempts). Without the policy (the default) each node exits
with its task's own status, as the scheduler would see it without distdoctor; ``run`` exits
128 + the signal it received (130 after Ctrl-C), as a shell would.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..cluster.tfjob import TFJOB_PERMANENT, TFJOB_RETRYABLE
from ..model import Diagnosis, Status
from .policy import RestartClass, classify, RETRYABLE_EXIT_CODES

__all__ = ["PERMANENT", "RETRYABLE", "USAGE", "ExitChoice", "policy_exit_status", "task_exit_status"]

PERMANENT = 1
RETRYABLE = 143
USAGE = 2
# TFJOB_PERMANENT and TFJOB_RETRYABLE: the TFJob scheduler's exit semantics (cluster/tfjob.py)


@dataclass(frozen=True)
class ExitChoice:
    code: int
    restart_class: RestartClass | None
    reason: str


def task_exit_status(rc: int | None) -> int:
    """A task's own status, as a shell reports it: 128+N for signal N; 1 when unknown."""
    if rc is None:
        return 1
    if rc < 0:
        return 128 + (-rc)
    return rc


def _interrupted(sig: str) -> ExitChoice:
    """distdoctor itself was stopped. Ctrl-C is a person ending the run on purpose: not retried. A SIGTERM (or
    SIGHUP) to the supervisor is how a scheduler stops a pod or a step -- an eviction, a preemption, a time limit --
    and a job it deleted on purpose reads no exit code: retryable."""
    if sig == "SIGINT":
        return ExitChoice(PERMANENT, RestartClass.DETERMINISTIC,
                          "distdoctor received SIGINT (Ctrl-C): a person stopped the run; not asking for a retry")
    how = f"distdoctor received {sig}" if sig.startswith("SIG") else sig
    return ExitChoice(RETRYABLE, RestartClass.TRANSIENT,
                      f"{how}: the scheduler stopped the run (eviction, preemption, a time limit); a retry resumes it")


def policy_exit_status(diagnosis: Diagnosis, own_rc: int | None = None) -> ExitChoice:
    """The exit code for a job that stops for good with ``diagnosis`` (the run's, attempts included).

    The last attempt's ``restart_class`` in the ledger wins (it is the decision the restart
    policy took, repeats included); otherwise the root cause is classified afresh.
    """
    if diagnosis.status in (Status.SUCCEEDED, Status.UNKNOWN):
        return ExitChoice(0, None, "the job succeeded")
    if diagnosis.interrupted:
        return _interrupted(diagnosis.interrupted)
    attempts = diagnosis.attempts
    last_class = attempts[-1].restart_class if attempts else None
    root = diagnosis.root_cause
    if last_class in (RestartClass.TRANSIENT.value, RestartClass.DETERMINISTIC.value) and root:
        cls = RestartClass(last_class)
        why = attempts[-1].reason
    elif root:
        culprit = diagnosis.tasks.get(root.culprit or "")
        code = culprit.exit_code if culprit is not None else None
        history = [a.outcome() for a in attempts[:-1]]
        cls, why = classify(root, history, reached=None, exit_code=code)
    else:
        shell = task_exit_status(own_rc)
        if own_rc is not None and (own_rc in RETRYABLE_EXIT_CODES or shell in TFJOB_RETRYABLE):
            return ExitChoice(RETRYABLE, RestartClass.TRANSIENT,
                              f"no root cause; the task's exit status {shell} is retryable (TFJob's ExitCode policy)")
        return ExitChoice(PERMANENT, RestartClass.DETERMINISTIC, "no root cause to judge; not asking for a retry")
    code = RETRYABLE if cls == RestartClass.TRANSIENT else PERMANENT
    return ExitChoice(code, cls, why)
