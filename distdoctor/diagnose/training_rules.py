"""The rules over how training went (DD205-DD209): a straggler, a non-finite loss, memory pressure, a
ParameterServerStrategy worker lost while the job went on, tasks that entered collectives of different shapes.
Pure functions of the :class:`JobObservation`.
"""
from __future__ import annotations

import re
import statistics

from ..catalogue import Rule, RuleList
from ..model import Category, Evidence, Severity
from .events import EventKind
from .hang_rules import count_evidence
from .observations import JobObservation
from .taskfacts import (chief_succeeded, completed, failed_on_its_own, events_of, evidence_of, exit_evidence,
                        signal_name)

__all__ = ["RULES"]

RULES = RuleList()
_ev = evidence_of
_of = events_of


@RULES.check(code="DD205", name="straggler", category=Category.STRAGGLER_SLOW_WORKER, title="One task is consistently slower",
             detects="A task that spends much more of each step outside the collective (input pipeline, callbacks, a slow node) than its peers.",
             why="Synchronous training runs at the pace of the slowest worker; the others wait in every all-reduce.",
             evidence="The fraction of samples each task spent outside TensorFlow functions between its first and its latest step, and step times.",
             remedy="Look at that worker: its input pipeline (prefetch, parallel reads), its callbacks, its node (CPU throttling, noisy neighbours, a slower disk).")
def _straggler(rule: Rule, job: JobObservation):
    rows = [t for t in job.ordered() if t.outside_tf_fraction is not None and not t.task.startswith("ps:")]
    if len(rows) < 2 or job.hang is not None:
        return
    paused = {p.task for p in job.pauses}  # a task that paused the job is named by DD211 (a straggler if it recurs)
    fr = {t.task: t.outside_tf_fraction for t in rows}
    for t in rows:
        others = [v for k, v in fr.items() if k != t.task]
        med = statistics.median(others)
        if fr[t.task] >= 0.35 and fr[t.task] >= 2.5 * max(med, 0.05) and t.task not in paused:
            yield rule.finding(culprit=t.task, at=t.started_at, severity=Severity.WARNING,
                               summary=f"{t.task} spent {fr[t.task]:.0%} of its training outside TensorFlow functions "
                                       f"(peers: {med:.0%}); every step waited for it",
                               evidence=[Evidence(task=k, ts=None, text=f"{v:.0%} of samples busy outside TensorFlow",
                                                  role="cause" if k == t.task else "context") for k, v in fr.items()][:6])


@RULES.check(code="DD206", rank=24, name="nan-loss", category=Category.NUMERICAL_DIVERGENCE, title="The loss became NaN or infinite",
             detects="A NaN/inf loss in Keras progress lines or reported through the callback; `TerminateOnNaN`.",
             why="Training continues (or stops) producing garbage; in multi-worker runs one task's bad batch poisons every replica.",
             evidence="The first step where the loss was not finite, per task.",
             remedy="Lower the learning rate, clip gradients, check the input data for NaN/inf, use loss scaling with mixed precision.")
def _nan(rule: Rule, job: JobObservation):
    hits = []
    for t in job.ordered():
        evs = _of(t, EventKind.NAN_LOSS)
        if evs:
            hits.append((evs[0].ts or 0, t, evs[0]))
    if not hits:
        return
    hits.sort(key=lambda x: x[0])
    _, t, e = hits[0]
    tasks = ", ".join(h[1].task for h in hits)
    step = f" at step {e.step}" if e.step is not None else ""
    yield rule.finding(culprit=t.task if len(hits) == 1 else None, at=e.ts, severity=Severity.ERROR if any(h[1].exit_code not in (0, None) for h in hits) else Severity.WARNING,
                       summary=f"the loss became non-finite{step}, first on {t.task} (seen on {tasks})",
                       evidence=[_ev(h[2]) for h in hits[:4]], candidates=tuple(h[1].task for h in hits) if len(hits) > 1 else ())


@RULES.check(code="DD207", name="memory-pressure", category=Category.RESOURCE_EXHAUSTION, title="A task's memory climbs toward its limit",
             detects="A task whose resident memory reached 85 % of its limit (its memory cgroup limit, or the host's memory).",
             why="The next allocation gets the task OOM-killed, silently; peers then blame the network.",
             evidence="RSS samples over time against the limit.",
             remedy="Give the task more memory or use less (smaller batch, shuffle buffer, prefetch; no in-memory `cache()`); look for a leak if it grows every epoch.")
def _memory(rule: Rule, job: JobObservation):
    for t in job.ordered():
        over = [m for m in t.memory if m.limit_bytes and m.rss_bytes >= 0.85 * m.limit_bytes]
        if not over:
            continue
        peak = max(over, key=lambda m: m.rss_bytes)
        first = over[0]
        yield rule.finding(culprit=t.task, at=first.ts, severity=Severity.WARNING,
                           summary=f"{t.task} used {peak.rss_bytes >> 20} MiB of a {peak.limit_bytes >> 20} MiB limit "
                                   f"({peak.rss_bytes / peak.limit_bytes:.0%})",
                           evidence=[Evidence(task=t.task, ts=first.ts, text=f"RSS {first.rss_bytes >> 20} MiB ≥ 85% of {first.limit_bytes >> 20} MiB"),
                                     Evidence(task=t.task, ts=peak.ts, text=f"peak RSS {peak.rss_bytes >> 20} MiB")])


@RULES.check(code="DD208", name="ps-worker-lost", category=Category.PEER_CRASHED, title="A ParameterServerStrategy worker was lost and the job went on",
             detects="A worker of a ParameterServerStrategy job that died while the coordinator carried on.",
             why="`ClusterCoordinator` reschedules a lost worker's functions on the others, so the job can still succeed — slower.",
             evidence="The worker's exit status; the chief's successful exit.",
             remedy="Find why the worker died (see its log and exit signal); the job survived, but capacity was lost.")
def _ps_worker_lost(rule: Rule, job: JobObservation):
    if job.strategy != "parameter_server" or not chief_succeeded(job):
        return
    chief = job.tasks["chief:0"]
    for t in job.ordered():
        lost = failed_on_its_own(t) or (job.source == "logs" and t.exit_code is None and not completed(t)
                                           and any(e.peer == t.task for o in job.ordered() for e in _of(o, EventKind.PEER_SYMPTOM)))
        if t.task.startswith("worker:") and lost:
            yield rule.finding(culprit=t.task, at=t.ended_at, severity=Severity.WARNING,
                               summary=f"{t.task} was lost ({signal_name(t.signal) or (f'exit {t.exit_code}' if t.exit_code is not None else 'its peers report it gone')}) and the coordinator finished without it",
                               evidence=[exit_evidence(t, f"ended by {signal_name(t.signal) or f'exit code {t.exit_code}'}")] if t.exit_code is not None else
                                        [_ev(e, "cause") for o in job.ordered() for e in _of(o, EventKind.PEER_SYMPTOM) if e.peer == t.task][:2]
                                        + [Evidence(task="chief:0", ts=chief.ended_at, text="chief finished training", role="context")])


_SHAPES = re.compile(r"Op at device /job:(\w+)/replica:\d+/task:(\d+)\S* expected shape \[([^\]]*)\] but another member in the group expected shape \[([^\]]*)\]")


def _outside_the_step(job: JobObservation) -> tuple[str | None, list[Evidence]]:
    """With the same step counts, the task whose failing collective was *not* the gradient all-reduce (TensorFlow's
    "defined at" frames name the optimizer's all-reduce on the others) ran another collective: its input's
    end-of-data sync (a finite or shorter shard), a metric or an end-of-epoch reduction. It left the step."""
    trainers = [t for t in job.ordered() if t.task.split(":")[0] in ("worker", "chief") and t.exit_code != 0
                and _of(t, EventKind.COLLECTIVE_MISMATCH, EventKind.PY_EXCEPTION, EventKind.PEER_SYMPTOM)]
    in_step = {t.task: _of(t, EventKind.GRADIENT_REDUCE) for t in trainers}
    odd = [n for n, evs in in_step.items() if not evs]
    if len(trainers) < 2 or len(odd) != 1:
        return None, []
    normal = [(n, evs[0]) for n, evs in in_step.items() if evs]
    ev = [Evidence(task=odd[0], ts=None, role="cause",
                   text=f"{odd[0]}'s failing collective was not the gradient all-reduce its peers were in "
                        "(another collective: its input's end-of-data sync, a metric, an end-of-epoch reduction)")]
    ev += [_ev(e, "consequence") for _, e in normal[:2]]
    return odd[0], ev


@RULES.check(code="DD209", rank=75, role="own_failure", name="collective-shape-mismatch", category=Category.DATA_SHARDING_IMBALANCE,
             title="Tasks entered different collectives: one left the step loop early",
             detects="`Shape mismatch in the collective instance`, or `Collective instance N expected type .. and data_type A but got .. data_type B`: one task runs an end-of-epoch, metric or end-of-data reduction while its peers still all-reduce gradients. The culprit: the task that ran fewer steps, or, with equal counts, the one whose failing collective was not the gradient all-reduce (TensorFlow's `defined at` frames).",
             why="Each worker computed its own number of steps (from the size of its own shard); the one with fewer batches leaves the loop first and the collectives no longer match.",
             evidence="TensorFlow's shape-mismatch message naming the task and both shapes; step counts.",
             remedy="Give every worker the same number of steps per epoch: compute `steps_per_epoch` from the global dataset size (not the local shard), or `repeat()` the data and set it explicitly; shard files evenly.")
def _shape_mismatch(rule: Rule, job: JobObservation):
    hits = []
    for t in job.ordered():
        hits += _of(t, EventKind.COLLECTIVE_MISMATCH)
    if not hits:
        return
    hits.sort(key=lambda e: e.ts or 0)
    culprit = None
    cands: list[str] = []
    for e in hits:
        m = _SHAPES.search(e.text)
        if m:
            task = f"{m.group(1)}:{m.group(2)}"
            mine, other = m.group(3).strip(), m.group(4).strip()
            if mine == "" and other != "":
                culprit = task  # the scalar reduction: the task that already left the step loop
            elif other == "" and mine != "":
                cands.append(task)
            break
    if culprit is None and cands:
        others = [t for t in job.tasks if t not in cands]
        culprit = others[0] if len(others) == 1 else None
    counts = {t.task: t.step_calls for t in job.ordered()
              if t.task.split(":")[0] in ("worker", "chief") and t.step_calls is not None}
    count_ev: list[Evidence] = []
    if len(counts) >= 2 and len(set(counts.values())) > 1:
        # the shapes do not say who left the loop (two tensors, not a scalar against gradients): the step counts
        # do -- the task whose step function ran fewer times entered the other collective
        fewest = min(counts.values())
        behind = [n for n, c in counts.items() if c == fewest]
        if culprit is None and len(behind) == 1:
            culprit = behind[0]
        count_ev = count_evidence({n: (c, True) for n, c in counts.items()}, behind)
    grad_ev: list[Evidence] = []
    if culprit is None:
        culprit, grad_ev = _outside_the_step(job)
    category = Category.DATA_SHARDING_IMBALANCE if culprit else Category.HANG_COLLECTIVE_MISMATCH
    ran = f" ({counts[culprit]} steps against {max(counts.values())})" if culprit in counts and count_ev else ""
    if grad_ev:
        summary = (f"{culprit} entered another collective than its peers' gradient all-reduce: its input ended "
                   "first or its shard differs (a shorter or finite dataset on one worker)")
    elif culprit:
        summary = f"{culprit} left the training loop early (it ran fewer steps{ran}) and its collectives no longer match its peers'"
    else:
        summary = "tasks entered collectives of different shapes or types"
    quoted = [_ev(e, "cause" if e.task == culprit else "consequence") for e in hits[:3]]
    quoted.sort(key=lambda e: e.role != "cause")
    yield rule.finding(culprit=culprit, at=hits[0].ts, category=category,
                       candidates=() if culprit else tuple(job.tasks), summary=summary,
                       evidence=grad_ev[:1] + quoted + count_ev + grad_ev[1:])
