"""Rules over what `run` saw happen and end well: the pauses it waited out (DD211), what it could not record (DD212).

Kept apart from :mod:`.failure_rules` and :mod:`.hang_rules`: a pause is a warning of a job that went on.
"""
from __future__ import annotations

from ..catalogue import Rule, RuleList
from ..model import Category, Evidence, Severity
from .observations import JobObservation

__all__ = ["RULES"]

RULES = RuleList()


@RULES.check(code="DD211", name="pause", category=Category.STRAGGLER_SLOW_WORKER, title="The job waited for one task that kept working",
             detects="During `run`: the peers waited in a collective while one task worked on outside TensorFlow (its CPU, file or network I/O or stack moved), then training went on. Recurring pauses of one task make it a straggler.",
             why="Chief-only evaluation, a checkpoint upload, a long first trace or filling a dataset cache stop every worker's training; that is not a hang, but it is time the whole job spends waiting.",
             evidence="Each pause: the task, where it was (file:line), what it was doing, how long, and its share of the run time.",
             remedy="If the pause is expected, nothing to do. To shorten it: evaluate on every worker (distributed evaluation) or in a sidecar evaluator, upload checkpoints in a background thread, cache the dataset before the job. `--hang-timeout S` treats any pause longer than S as a hang.")
def _pauses(rule: Rule, job: JobObservation):
    by_task: dict[str, list] = {}
    for p in job.pauses:
        by_task.setdefault(p.task, []).append(p)
    run_s = None
    if job.started_at is not None and job.ended_at is not None and job.ended_at > job.started_at:
        run_s = job.ended_at - job.started_at
    for task, ps in by_task.items():
        total = sum(p.seconds for p in ps)
        longest = max(ps, key=lambda p: p.seconds)
        share = f", {100 * total / run_s:.0f} % of the run time" if run_s else ""
        where = f" at {longest.where}" if longest.where else ""
        doing = f"; it was {longest.doing}, not stuck" if longest.doing else ""
        waited = f" while {', '.join(longest.waiting)} waited" if longest.waiting else ""
        if len(ps) >= 3:
            summary = (f"{task} paused the job {len(ps)} times ({total:.1f} s in all{share}; longest {longest.seconds:.1f} s"
                       f"{where}){waited}{doing}: a straggler that holds the other tasks back")
        else:
            summary = f"{task} paused the job for {total:.1f} s ({share[2:] or 'a pause'}){where}{waited}{doing}"
        ev = [Evidence(task=task, ts=p.since, role="cause",
                       text=f"paused {p.seconds:.1f} s" + (f" at {p.where}" if p.where else "")
                            + (f", {p.doing}" if p.doing else "")) for p in ps[:5]]
        yield rule.finding(culprit=task, at=ps[0].since, severity=Severity.WARNING, summary=summary, evidence=ev)


@RULES.check(code="DD212", name="record-incomplete", category=Category.OTHER,
             title="distdoctor could not record all of the run (a full disk, an I/O error, output too fast)",
             detects="During `run`: a write of distdoctor's own (a task's log, events.jsonl, samples.jsonl, diagnosis.json) failed with a full disk, an I/O error or a quota, or a task printed faster than distdoctor could take its output.",
             why="distdoctor never stops a job for its own records: it goes on supervising and drops what it cannot write. The bundle then lacks part of the run, and a verdict read from it may miss what was in the lost part.",
             evidence="What was not recorded, how much, and the error.",
             remedy="Give `--out` a filesystem with room (`df -h` on it), or one that is not failing; print less from the tasks (a progress bar per step, a debug log level).")
def _record_incomplete(rule: Rule, job: JobObservation):
    if job.record_losses:
        yield rule.finding(culprit=None, at=job.ended_at, severity=Severity.WARNING,
                           summary="distdoctor could not record all of the run: " + "; ".join(job.record_losses[:4]),
                           evidence=[Evidence(task=None, ts=job.ended_at, text=t) for t in job.record_losses[:8]])
