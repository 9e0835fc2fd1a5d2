"""An attempt's verdict: the rule engine over what the supervisor observed, and the start-up failure check."""
from __future__ import annotations

import os
from dataclasses import replace

from ..diagnose.engine import diagnose
from ..diagnose.observations import JobObservation
from ..diagnose.runlogs import refine_with_signatures
from ..errors import UsageError
from ..model import Diagnosis

__all__ = ["diagnose_attempt", "check_startup_failure", "STARTUP_FAIL_S"]

STARTUP_FAIL_S = 3.0


def diagnose_attempt(job: JobObservation, detected_at: float, logs_dir: str | None, crossings=(), *,
                     reader=None) -> Diagnosis:
    """The engine's diagnosis; the knowledge base also reads the tasks' output (``reader``: what it read as the
    tasks printed it, else the logs under ``logs_dir``; ``logs_dir`` None where this supervisor does not hold every
    task's log), and the notifier's threshold crossings are warnings beside it."""
    diag = diagnose(job, detected_at=detected_at, command="run")
    if logs_dir is not None:   # a generic reading only
        diag = refine_with_signatures(diag, logs_dir, reader=reader)
    if crossings:
        from ..notify.rules import threshold_findings
        diag = replace(diag, findings=diag.findings + tuple(threshold_findings(crossings)))
    return diag


def check_startup_failure(job: JobObservation, tf_loaded) -> None:
    """A command that fails at once on every task is a usage error, not a training failure (a task distdoctor had
    to stop did not fail at once: the job's verdict says why the others did).
    ``tf_loaded(task)``: whether the task's agent saw TensorFlow imported."""
    if job.hang or job.interrupted:
        return
    quick = []
    for t in job.tasks.values():
        if t.killed_by_supervisor:   # distdoctor stopped it (another task failed): not every task failed at once
            return
        if t.exit_code in (None, 0) or t.ended_at is None or t.started_at is None:
            return
        if t.ended_at - t.started_at > STARTUP_FAIL_S or tf_loaded(t.task):
            return
        quick.append(t)
    if not quick:
        return
    t = quick[0]
    last = ""
    try:
        with open(t.log_path, errors="replace") as fh:
            lines = [ln.split(" ", 1)[-1].strip() for ln in fh if ln.strip()]
        last = lines[-1] if lines else ""
    except OSError:
        pass
    raise UsageError(f"the command exited at once with code {t.exit_code} on every task"
                     + (f": {last[:200]}" if last else "") + f" (logs in {os.path.dirname(t.log_path)})")
