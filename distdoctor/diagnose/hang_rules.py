"""The rules over a hung job (DD201-DD204): a stalled worker, collectives that cannot complete, a frozen task, a
task that ran out of data -- and the step counts that tell a task that left the training loop from one that is
stuck. Pure functions of the :class:`JobObservation` (``job.hang`` is the supervisor's or the logs' reading).
"""
from __future__ import annotations

from dataclasses import replace as _replace

from ..catalogue import Rule, RuleList
from ..model import Category, Evidence, Finding
from .observations import JobObservation
from .taskfacts import failed_on_its_own

__all__ = ["RULES", "step_counts", "left_the_loop", "behind_in_mismatch", "ran_fewer", "count_evidence"]

RULES = RuleList()


@RULES.check(code="DD201", rank=57, role="hang", name="stalled-worker", category=Category.HANG_STALLED_WORKER, title="Peers wait for one stalled worker",
             detects="No task progresses; some wait inside a TensorFlow collective while one task is stuck outside it (its own code, its input pipeline, a callback).",
             why="TensorFlow waits in the all-reduce forever and prints nothing: the job hangs silently.",
             evidence="Every task's stack at the hang (the culprit's first), where each main thread is, and CPU use.",
             remedy="Look at the culprit's stack: a deadlock or a blocking call in a callback, a slow or exhausted input pipeline, a lock, or I/O on that worker; add timeouts there.")
def _stalled(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "stalled_worker" or left_the_loop(job):
        return
    yield _hang_finding(rule, job, h)


def _hang_finding(rule: Rule, job: JobObservation, h, summary: str | None = None, category: Category | None = None) -> Finding:
    culprit = h.culprits[0] if len(h.culprits) == 1 else None
    ev = [Evidence(task=None, ts=h.declared_at, text=f"no task made progress since {h.declared_at - h.since:.1f} s: {h.reason}")]
    for name in list(h.culprits) + [n for n in h.waiting if n not in h.culprits]:
        t = job.tasks.get(name)
        if t is None:
            continue
        role = "cause" if name in h.culprits else "consequence"
        where = t.location or t.in_tf_call or t.where or "unknown"
        doing = f"waiting in TensorFlow function {t.in_tf_call}" if t.in_tf_call else f"at {where}"
        ev.append(Evidence(task=name, ts=h.declared_at, role=role,
                           text=f"state {t.state}, {doing}, last progress " + _progress_age(h.declared_at, t.last_progress_at)))
    return rule.finding(culprit=culprit, at=h.since, evidence=ev, category=category,
                        summary=summary or (f"the job hung: {h.reason}"), candidates=h.culprits if culprit is None else ())


def _progress_age(declared_at: float, last: float | None) -> str:
    if last is None:
        return "never"
    if last > declared_at:  # a step finished while the hang was being declared (its last sample was older)
        return f"{last - declared_at:.1f} s after the hang was declared"
    return f"{declared_at - last:.1f} s earlier"


@RULES.check(code="DD202", rank=51, role="hang", name="collective-mismatch", category=Category.HANG_COLLECTIVE_MISMATCH, title="Every task waits in a collective that cannot complete",
             detects="All tasks are blocked inside TensorFlow collectives, idle, and none is busy elsewhere.",
             why="Tasks that run different collectives (different models, branches, step counts or group sizes) wait for each other forever.",
             evidence="Every task's stack and the TensorFlow function it is inside; the odd one when tasks disagree.",
             remedy="Make every task run the same sequence of collectives: same model, same number of steps (`steps_per_epoch`), no task-dependent branches around `strategy.run`/`reduce`.")
def _mismatch(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "collective_mismatch" or left_the_loop(job) or behind_in_mismatch(job):
        return
    if not h.culprits:
        # Nobody is outside the collective. The odd one out is the task whose step count differs from all the
        # others' (it ran another sequence of collectives); otherwise every waiting task is a candidate.
        waiting = list(h.waiting) or [t.task for t in job.ordered()]
        steps = {n: job.tasks[n].steps for n in waiting if n in job.tasks and job.tasks[n].steps is not None}
        odd = [n for n, s in steps.items() if list(steps.values()).count(s) == 1]
        culprits = tuple(odd) if len(odd) == 1 and len(steps) >= 3 else tuple(waiting)
        if len(steps) == 2 and len(set(steps.values())) == 2:
            culprits = (min(steps, key=lambda n: steps[n]),)   # of two, the one behind never reached the collective
        h = _replace(h, culprits=culprits)
    yield _hang_finding(rule, job, h)


@RULES.check(code="DD203", rank=72, role="hang", name="frozen-task", category=Category.PEER_UNRESPONSIVE, title="A task is frozen",
             detects="A task that is alive but stopped (SIGSTOP, state T) or stuck in uninterruptible sleep (state D, I/O).",
             why="After 10-15 s TensorFlow reports it as 'crashed', which it is not, and leaves the frozen process behind.",
             evidence="The process state from /proc and how long it has been in it.",
             remedy="Find who stopped the process (a debugger, job control, a cgroup freezer) or which I/O it waits on (`cat /proc/PID/stack`, NFS/disk health) on that node.")
def _frozen(rule: Rule, job: JobObservation):
    h = job.hang
    if h is None or h.kind != "frozen":
        return
    yield _hang_finding(rule, job, h, summary=f"the job hung: {h.reason}")


@RULES.check(code="DD204", rank=54, role="hang", name="sharding-imbalance", category=Category.DATA_SHARDING_IMBALANCE, title="A task ran out of data before its peers",
             detects="A task that ran fewer steps than its peers and finished early, or left the step loop (exit 0) while its peers wait in a collective for it, which then hangs or fails.",
             why="Uneven shards (files per worker, `take`, filters) make one worker leave the synchronous loop early; the others hang or fail in the all-reduce it never joins. A custom loop over each worker's own `tf.data` dataset is the common case.",
             evidence="Step counts per task (the agent's count of each task's step-function calls, taken at its exit), exit times, the peers' failed collective.",
             remedy="Make every worker run the same number of steps: set `steps_per_epoch`, `repeat()` the dataset and loop a fixed number of steps, shard by files evenly or use `tf.data.experimental.AutoShardPolicy.DATA`. In a custom loop, iterate `strategy.experimental_distribute_dataset(ds)` (or `distribute_datasets_from_function`), not the worker's own dataset: TF then keeps every worker in the loop until all inputs are exhausted.")
def _imbalance(rule: Rule, job: JobObservation):
    counts = step_counts(job)
    h = job.hang
    if h is not None and h.kind == "peer_exited":
        f = _hang_finding(rule, job, h, summary=f"the job hung: {h.reason}")
        fewer = [n for n in h.culprits if n in counts]
        if fewer:
            f = _replace(f, evidence=f.evidence + tuple(count_evidence(counts, fewer)))
        yield f
        return
    behind = behind_in_mismatch(job)
    if behind:
        names = [n for n, _, _ in behind]
        most = behind[0][2]
        lead = [t for t in job.ordered() if t.step_calls == most]
        into = {job.tasks[n].in_tf_call for n in names} - {None}
        summary = (f"the job hung: {', '.join(names)} ran {behind[0][1]} steps, {most - behind[0][1]} fewer than "
                   f"{', '.join(t.task for t in lead)} ({most}), then entered another collective"
                   + (f" ({', '.join(sorted(into))})" if into else "")
                   + f" while {', '.join(t.task for t in lead)} wait in step {most} for it: its data ran out first")
        f = _hang_finding(rule, job, _replace(h, culprits=tuple(names)), summary=summary)
        counts = {t.task: (t.step_calls, True) for t in job.ordered() if t.step_calls is not None}
        yield _replace(f, evidence=f.evidence + tuple(count_evidence(counts, names)))
        return
    left = left_the_loop(job)
    if h is not None and left:
        f = _hang_finding(rule, job, _replace(h, culprits=tuple(left)),
                          summary=f"the job hung: {', '.join(left)} left the training loop after "
                                  f"{counts[left[0]][0]} steps (its training code ended) while "
                                  f"{_waiters(h, left)} in a collective it will never join")
        yield _replace(f, evidence=f.evidence + tuple(count_evidence(counts, left)))
        return
    for task, bad, most in ran_fewer(counts):
        t = job.tasks[task]
        failed_after = [o for o in job.ordered() if o.task != task and failed_on_its_own(o)
                        and (o.ended_at is None or t.ended_at is None or o.ended_at >= t.ended_at)]
        ev = count_evidence(counts, [task])
        if failed_after:
            names = ", ".join(o.task for o in failed_after)
            summary = (f"{task} left the training loop after {bad} steps (its input ran out; exit 0) while "
                       f"{names} went on to step {most} and failed in the collective {task} never joined")
        else:
            summary = f"{task} ran {bad} steps, {most - bad} fewer than its peers ({most}), and finished early"
        yield rule.finding(culprit=task, at=t.ended_at, evidence=ev, summary=summary,
                           category=Category.DATA_SHARDING_IMBALANCE)


def step_counts(job: JobObservation) -> dict[str, tuple[int, bool]]:
    """Steps per training task, and whether that count is exact (the task's own final count).

    The agent's count of each task's step-function calls is used when every training task has one: it is
    per call, and exact when the agent sent it as the task's code ended (and it did not fail on its own). Otherwise the steps from progress lines
    or the agent's periodic samples, exact only for a task that exited 0 (or, from logs, whose log ended):
    a sample taken before a task's end is a lower bound, never evidence that it ran fewer."""
    tasks = [t for t in job.ordered() if t.task.split(":")[0] in ("worker", "chief")]
    if job.strategy != "parameter_server" and len(tasks) >= 2 and all(t.step_calls is not None for t in tasks):
        # a task that failed on its own (an exception, sys.exit(1)) also sends a final count: it ran fewer steps
        # because it failed, which other rules name; only one that ended cleanly can have run out of data
        return {t.task: (t.step_calls, t.step_calls_exact and not failed_on_its_own(t)) for t in tasks}
    return {t.task: (t.steps, t.exit_code == 0 or job.source == "logs") for t in tasks if t.steps is not None}


def _waiters(h, left: list[str]) -> str:
    names = [n for n in h.waiting if n not in left]
    return f"{', '.join(names)} {'waits' if len(names) == 1 else 'wait'}" if names else "its peers wait"


def left_the_loop(job: JobObservation) -> list[str]:
    """Tasks of a hung job whose training code ended (their final step count is known) after fewer steps than
    a peer's: they left the synchronous loop and the peers wait for them in a collective.

    Only a final count proves it: a live task stuck in a callback at step 8 has the same counts (8 against a
    waiting peer's 9) as one that left the loop, and stays a stalled worker."""
    if job.hang is None or job.hang.kind not in ("stalled_worker", "collective_mismatch"):
        return []
    return [n for n, _, _ in ran_fewer(step_counts(job)) if job.tasks[n].step_calls_exact]


def behind_in_mismatch(job: JobObservation) -> list[tuple[str, int, int]]:
    """(task, its steps, the most) for each task of a collective mismatch whose step function ran fewer times
    than a peer's: every task waits idle, so the counts no longer move, and unequal counts mean the one behind
    left the step loop and entered another collective (an end-of-epoch reduce of a metric or a step count)."""
    h = job.hang
    if h is None or h.kind != "collective_mismatch" or job.source != "run":
        return []
    tasks = [t for t in job.ordered() if t.task.split(":")[0] in ("worker", "chief") and t.exit_code is None]
    if len(tasks) < 2 or any(t.step_calls is None for t in tasks):
        return []
    most = max(t.step_calls for t in tasks)
    fewer = [(t.task, t.step_calls, most) for t in tasks if t.step_calls < most]
    return fewer if fewer and len(fewer) < len(tasks) else []


def ran_fewer(counts: dict[str, tuple[int, bool]]) -> list[tuple[str, int, int]]:
    """(task, its steps, the most any task ran) for each task whose exact count is below another's.

    A lower bound on the side with more steps is still proof; an inexact count on the side with fewer is not.
    Log counts are as coarse as the progress lines, so they must differ by 2 % (at least one step)."""
    if len(counts) < 2:
        return []
    most = max(c for c, _ in counts.values())
    return [(n, c, most) for n, (c, exact) in counts.items()
            if exact and c < most and most - c >= max(1, int(0.02 * most))]


def count_evidence(counts: dict[str, tuple[int, bool]], fewer: list[str]) -> list[Evidence]:
    ev = []
    for n in sorted(counts, key=lambda n: (n not in fewer, counts[n][0])):
        c, exact = counts[n]
        ev.append(Evidence(task=n, ts=None, role="cause" if n in fewer else "context",
                           text=f"ran {c} steps" + ("" if exact else " (at least; counted before it ended)")))
    return ev[:6]
