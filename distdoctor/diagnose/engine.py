"""Run the rule catalogue over a job and apply the root-cause policy.

The policy, explicit and tested (tests/test_engine.py):

1. Only ``error`` findings can be the root cause; warnings and info are listed.
2. The root cause is the *first* failure: the error finding with the earliest
   ``at``. Findings within ``SAME_MOMENT_S`` of the first are the same moment
   seen from different places (clocks, polling), and are ranked by how direct
   their evidence is (``PRIORITY``): the kernel's OOM verdict beats a bare
   SIGKILL, a native crash beats the exception it caused, a task's own record
   beats what its peers say about it.
3. Symptoms on other tasks (connection reset, heartbeats, aborted
   collectives) are attached to the root cause as ``consequence`` evidence.
4. In a ParameterServerStrategy job whose chief succeeded, lost workers are
   warnings: the coordinator survives them by design.
5. When tasks failed and no rule names a cause, the root cause has no culprit
   and lists the candidates -- distdoctor never invents one.
"""
from __future__ import annotations

from dataclasses import replace

from ..catalogue import RuleList, codes_with_role, priority
from ..model import Category, Diagnosis, Evidence, Finding, Severity, Status, TaskReport
from .events import EventKind
from .observations import JobObservation
from .rules import CHECKS, chief_succeeded, signal_name

__all__ = ["diagnose", "collect_findings", "pick_root_cause", "PRIORITY", "SAME_MOMENT_S"]

SAME_MOMENT_S = 2.0
# Every rule module with a check is imported through .rules: the ranks are all registered here.
PRIORITY = priority()

RULES = RuleList()   # the rule the engine itself reports
_UNATTRIBUTED = RULES.add(
    code="DD100", name="unattributed-failure", category=Category.OTHER, title="Tasks failed and the evidence names no cause",
    detects="A job that failed where no rule could point at the task where the failure began.",
    why="Guessing a culprit sends people to the wrong machine; the candidates and what would tell them apart are more useful.",
    evidence="Every failed task's exit status and last lines.",
    remedy="Collect the missing evidence: the logs of every task (including ones that printed nothing), the kernel log of each node (`dmesg`), and the scheduler's record of each pod/step.")


def collect_findings(job: JobObservation) -> list[Finding]:
    findings: list[Finding] = []
    for rule, check in CHECKS:
        findings.extend(check(job))
    if job.strategy == "parameter_server":
        if chief_succeeded(job):
            findings = [replace(f, severity=Severity.WARNING)
                        if f.culprit and f.culprit.startswith("worker:") and f.severity == Severity.ERROR else f
                        for f in findings]
            lost = {f.culprit for f in findings if f.code == "DD208"}
            findings = [f for f in findings if f.code == "DD208" or f.culprit not in lost or f.category != Category.PEER_CRASHED]
    return findings


def _rank(f: Finding) -> int:
    return PRIORITY.index(f.code) if f.code in PRIORITY else len(PRIORITY)


def pick_root_cause(findings: list[Finding]) -> Finding | None:
    errors = [f for f in findings if f.severity == Severity.ERROR]
    if not errors:
        return None
    timed = [f.at for f in errors if f.at is not None]
    first = min(timed) if timed else None

    def key(f: Finding):
        if f.at is None or first is None:
            bucket = 1
        else:
            bucket = 0 if f.at - first <= SAME_MOMENT_S else 2
        return (bucket, _rank(f), f.at or 0)

    return sorted(errors, key=key)[0]


_HANG_CODES = codes_with_role("hang")
_OWN_FAILURE_CODES = codes_with_role("own_failure")


def _explain_hang(findings: list[Finding], root: Finding | None, job: JobObservation) -> Finding | None:
    """A hang whose culprit failed on its own first (printed a traceback, crashed) is that failure.

    E.g. a worker raises in a callback but its process lingers in TensorFlow's shutdown while
    the peers wait in the all-reduce: the root cause is the exception, not "a stall".
    """
    if root is None or root.code not in _HANG_CODES or job.hang is None:
        return root
    since = job.hang.since - SAME_MOMENT_S
    # only a failure of a task the hang is about (its culprit, or a candidate when it names none) explains it
    about = {root.culprit} if root.culprit else set(root.candidates or job.hang.culprits or ())
    own = [f for f in findings if f.code in _OWN_FAILURE_CODES and f.severity == Severity.ERROR
           and (f.at is None or f.at >= since) and (not about or f.culprit in about)]
    if not own:
        return root
    return sorted(own, key=lambda f: (_rank(f), f.at or 0))[0]


def _consequences(job: JobObservation, root: Finding) -> tuple[Evidence, ...]:
    if root.culprit is None:
        return ()
    extra: list[Evidence] = []
    for t in job.ordered():
        if t.task == root.culprit:
            continue
        evs = [e for e in t.events if e.kind == EventKind.PEER_SYMPTOM]
        if root.at is not None:
            evs = [e for e in evs if e.ts is None or e.ts >= root.at - SAME_MOMENT_S]
        picked = [e for e in evs if e.peer == root.culprit][:1] + [e for e in evs if "aborted" in e.text or "heartbeat" in e.text or "reset by peer" in e.text][:1]
        if not picked:
            picked = evs[:1]
        seen = set()
        for e in picked:
            if e.text in seen:
                continue
            seen.add(e.text)
            extra.append(Evidence(task=t.task, ts=e.ts, text=e.text, role="consequence"))
    have = {(e.task, e.text) for e in root.evidence}
    return tuple(e for e in extra if (e.task, e.text) not in have)[:8]


def _frozen(root: Finding | None) -> bool:
    """A frozen task (SIGSTOP, a stuck host) failed the job: the others wait for a peer that is gone, not hung."""
    return root is not None and root.category == Category.PEER_UNRESPONSIVE


def _task_reports(job: JobObservation, succeeded: bool) -> dict[str, TaskReport]:
    """Each task's facts; in a job that succeeded, a task distdoctor stopped (a parameter server, a worker serving
    in ``server.join()`` once the chief finished) ended the normal way: its signal is kept, and said so."""
    out = {}
    for t in job.ordered():
        peak = max((m.rss_bytes for m in t.memory), default=None)
        out[t.task] = TaskReport(exit_code=t.exit_code, signal=signal_name(t.signal), state=t.state,
                                 last_progress_at=t.last_progress_at, stack=t.stack, steps=t.steps, pid=t.pid,
                                 log=t.log_path, peak_rss_bytes=peak,
                                 stopped_at_end=succeeded and t.killed_by_supervisor, step_calls=t.step_calls,
                                 step_calls_exact=t.step_calls_exact, uncaught_at=t.uncaught_at,
                                 shm_used_bytes=t.shm[0] if t.shm else None, shm_size_bytes=t.shm[1] if t.shm else None)
    return out


def _all_exited_zero(job: JobObservation) -> bool:
    """Every task ran to exit 0 by itself (``run`` knows exit codes, and so does ``diagnose`` of its bundle; logs
    alone do not: their exit codes stay None)."""
    tasks = list(job.ordered())
    return bool(tasks) and job.hang is None and not job.interrupted and \
        all(t.exit_code == 0 and not t.killed_by_supervisor for t in tasks)


def diagnose(job: JobObservation, *, detected_at: float, command: str = "run") -> Diagnosis:
    findings = collect_findings(job)
    if _all_exited_zero(job):
        # A job whose tasks all exit 0 is never failed: what the rules call errors (a peer that vanished at
        # shutdown, a shard that ran out early) are warnings about a job that succeeded.
        findings = [replace(f, severity=Severity.WARNING) if f.severity == Severity.ERROR else f for f in findings]
    root = _explain_hang(findings, pick_root_cause(findings), job)
    failed_tasks = [t for t in job.ordered() if t.exit_code not in (None, 0) and not t.killed_by_supervisor]
    if job.strategy == "parameter_server" and chief_succeeded(job):
        failed_tasks = [t for t in failed_tasks if not t.task.startswith("worker:")]
    if job.hang is not None and (root is None or root.code in _HANG_CODES) and not _frozen(root):
        status = Status.HUNG
    elif root is not None or failed_tasks or job.interrupted:
        status = Status.FAILED
    elif not job.job_finished:
        status = Status.HUNG
    else:
        status = Status.SUCCEEDED
    if status == Status.FAILED and root is None:
        cands = tuple(t.task for t in failed_tasks)
        root = _UNATTRIBUTED.finding(
            culprit=None, candidates=cands, at=min((t.ended_at for t in failed_tasks if t.ended_at), default=None),
            summary=("tasks failed but the evidence does not show where it began; candidates: " + ", ".join(cands)
                     + ". Their kernel logs and scheduler events would tell them apart.") if cands else "the job failed without evidence of why",
            evidence=[Evidence(task=t.task, ts=t.ended_at, text=f"exit code {t.exit_code}" + (f" ({signal_name(t.signal)})" if t.signal else ""))
                      for t in failed_tasks[:6]])
        findings.append(root)
    if root is not None:
        rooted = replace(root, evidence=root.evidence + _consequences(job, root))
        findings = [rooted if f is root else f for f in findings]
        root = rooted
    sev = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    findings.sort(key=lambda f: (f is not root, sev[f.severity], f.at or 0))
    return Diagnosis(status=status, root_cause=root, findings=tuple(findings), detected_at=detected_at,
                     tasks=_task_reports(job, status == Status.SUCCEEDED), command=command, notes=job.notes,
                     interrupted=job.interrupted if job.source == "run" else None)
