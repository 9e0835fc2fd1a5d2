"""Build a :class:`JobObservation` from task logs alone (``distdoctor diagnose``).

:func:`observation_from_scans` is pure: it merges per-file
:class:`~distdoctor.diagnose.logs.taskscan.TaskScan` s into one observation per
task, puts every task on one time line (a task whose clock is off by whole
half-hours -- a time zone -- is shifted, and said so in ``notes``), and asks
:func:`~distdoctor.diagnose.log_rules.judge_silence` whether the logs simply
stop (``job.hang``, ``job_finished=False``). :func:`observe_logs` is the thin
I/O wrapper that discovers and scans the files first.

Process fields (pid, exit code, signal, stacks) stay ``None``: logs do not
know them, and the rules must not pretend they do.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import replace
from typing import Sequence

from ..errors import InputError
from .bundlefacts import RecordedRun, apply_recorded
from .events import EventKind, LogEvent
from .log_rules import CAUSE_KINDS, TERMINAL_KINDS, ended_with_error, judge_silence
from .logs.formats import split_timestamp
from .logs.taskscan import TaskScan, TaskScanner
from .logsource import Discovery, discover, scan_sources
from .observations import JobObservation, TaskObservation
from .taskfacts import PROPAGATED_ABORT

__all__ = ["observe_logs", "observation_from_scans", "CLOCK_NOTE_S"]

CLOCK_NOTE_S = 600.0   # tasks of one job start within minutes of each other; beyond this, say so
_TZ_STEP_S = 1800.0    # time zones differ by whole half-hours
# A last line that closes a run (custom loops print no epochs): "final loss 0.1", "Training finished". Only phrases
# that say *training* ended: a last line with a bare "done" or "complete" ("step 10 done") is not the end of a run.
_CLOSING = re.compile(r"\b(?:training (?:is )?(?:finished|complete[d]?|done|over)|finished training|"
                      r"final (?:loss|accuracy|step|metrics?)|loss for final step|saved (?:the )?(?:final )?model)\b",
                      re.IGNORECASE)
_TZ_SLACK_S = 120.0
# A last line that reports a finished epoch's results, as custom loops print them (TensorFlow's multi_worker_with_ctl
# tutorial: "Epoch: 2, accuracy: 0.83, train_loss: 0.41."; its custom-training guide: "Epoch 5, Loss: 0.3, Accuracy:
# 91"): the task ended an epoch and printed nothing after it -- a run that ended there, or one between epochs; either
# way a log that merely ends, not a hang; parameter_server_training's "Finished epoch 3, accuracy is 0.41." likewise.
# Keras' "Epoch 3/3" header reports nothing and is not one.
_EPOCH_RESULT = re.compile(r"^\W{0,3}(?:finished |end of |completed )?epoch\b[:\s#]*\d+(?:\s*/\s*\d+)?\s*[,:;|\-]\s*"
                           r".{0,200}?\b(?:\w*loss|acc(?:uracy)?)\b\s*(?:[:=]|is)?\s*[-+]?(?:\d|nan|inf)", re.IGNORECASE)


def observe_logs(sources: Sequence[str] | Discovery, task_map: dict[str, str] | None = None, *,
                 jobs: int | None = None) -> JobObservation:
    """Discover (when given paths), scan and assemble; raises :class:`InputError` for unusable input."""
    disc = sources if isinstance(sources, Discovery) else discover(list(sources), task_map)
    scans, notes = scan_sources(disc, jobs=jobs)
    return observation_from_scans(scans, notes=list(disc.notes) + notes)


def _usable(scans: Sequence[TaskScan], notes: list[str]) -> list[TaskScan]:
    good = []
    binary = [s for s in scans if s.binary]
    for s in binary:
        notes.append(f"{_name(s)} is not text (binary data); ignored")
    for s in scans:
        if s.binary:
            continue
        good.append(s)
    if not good:
        if binary:
            raise InputError(f"{_name(binary[0])}{' and the others hold' if len(binary) > 1 else ' holds'} "
                             "binary data, not logs: nothing to diagnose")
        problems = [n for n in notes if "vanished" in n or "could not" in n or "no task prefix" in n or "stopped early" in n
                    or "is empty" in n]
        raise InputError(problems[-1] if problems else "nothing was read: every log vanished or could not be opened")
    if not any(s.recognized for s in good):
        if all(s.size == 0 for s in good):
            raise InputError("every log is empty: nothing to diagnose")
        raise InputError("none of these files looks like output of a TensorFlow job (no TensorFlow, Keras or Python "
                         "error lines, no progress lines): nothing to diagnose")
    return good


def _name(s: TaskScan) -> str:
    return s.path or str(s.task)


def _merge(task: str, scans: list[TaskScan]) -> TaskObservation:
    scans = sorted(scans, key=lambda s: (s.first_ts is None, s.first_ts or 0))
    events: list[LogEvent] = []
    for s in scans:
        events.extend(s.events)
    if len(scans) > 1:
        events.sort(key=lambda e: (e.ts is None, e.ts or 0))
    steps = [s.steps for s in scans if s.steps is not None]
    prog = [s.last_progress_at for s in scans if s.last_progress_at is not None]
    out = [s.last_ts for s in scans if s.last_ts is not None]
    times = tuple(x for s in scans for x in s.step_times)
    return TaskObservation(task=task, events=tuple(events), steps=max(steps) if steps else None, step_times=times[-200:],
                           last_progress_at=max(prog) if prog else None, last_output_at=max(out) if out else None,
                           log_path=", ".join(s.path for s in scans if s.path) or None,
                           last_line=scans[-1].last_text or None)


def _shift(t: TaskObservation, offset: float) -> TaskObservation:
    def mv(x: float | None) -> float | None:
        return None if x is None else x - offset
    return replace(t, events=tuple(replace(e, ts=mv(e.ts)) for e in t.events), last_progress_at=mv(t.last_progress_at),
                   last_output_at=mv(t.last_output_at), clock_offset_s=offset)


def _clock(tasks: dict[str, TaskObservation], first: dict[str, float], notes: list[str]) -> dict[str, TaskObservation]:
    """Shift tasks whose clock is off by a time zone; note other large start gaps."""
    if len(first) < 2:
        return tasks
    med = statistics.median(first.values())
    out = dict(tasks)
    for task, ts in sorted(first.items()):
        off = ts - med
        if abs(off) < CLOCK_NOTE_S:
            continue
        zone = round(off / _TZ_STEP_S) * _TZ_STEP_S
        hours = f"{abs(off) / 3600:.1f} h" if abs(off) >= 3600 else f"{abs(off) / 60:.0f} min"
        if zone and abs(off - zone) <= _TZ_SLACK_S:
            out[task] = _shift(tasks[task], zone)
            notes.append(f"{task}'s clock reads {hours} {'ahead of' if off > 0 else 'behind'} the others' (its first "
                         f"line is that far from theirs, a whole number of half-hours: a time zone or a wrong clock); "
                         f"its times were shifted by {-zone:+.0f} s to put every task on one time line")
        else:
            notes.append(f"{task}'s log starts {hours} {'after' if off > 0 else 'before'} the others': it was "
                         f"(re)started at another time, or its clock is off; its times were left as written")
    return out


def _peers_as_ranks(tasks: dict[str, TaskObservation]) -> dict[str, TaskObservation]:
    """Logs named only by launcher rank (``srun --label``'s task id, ``mpirun --tag-output``): a TF task that the
    lines name as a peer (``/job:worker/replica:0/task:1``) is the rank of that index -- MultiWorkerMirroredStrategy
    under Slurm or MPI numbers its workers by rank (SlurmClusterResolver and TF_CONFIG builders use SLURM_PROCID /
    the MPI rank) -- so the rules see that peer's own log instead of a missing one."""
    if not tasks or not all(t.startswith("rank:") for t in tasks):
        return tasks

    def alias(peer: str | None) -> str | None:
        if peer and peer.startswith("worker:") and "rank:" + peer.split(":", 1)[1] in tasks:
            return "rank:" + peer.split(":", 1)[1]
        return peer
    out = {}
    for name, t in tasks.items():
        if any(alias(e.peer) != e.peer for e in t.events):
            t = replace(t, events=tuple(replace(e, peer=alias(e.peer)) for e in t.events))
        out[name] = t
    return out


_PROGRESS_KINDS = frozenset({EventKind.PROGRESS, EventKind.EPOCH})


def _stopped_on_error(t: TaskObservation) -> bool:
    """The task's log shows an error (an uncaught exception, a crash, a failure about a peer) after its last progress."""
    last = max((e.line_no for e in t.events if e.kind in _PROGRESS_KINDS), default=-1)
    return any(e.line_no > last and (e.kind in TERMINAL_KINDS or e.kind == EventKind.PEER_SYMPTOM) for e in t.events)


def _ends_its_run(s: TaskScan) -> bool:
    """The log's last line closes the run: its last epoch ran to the end, a closing phrase, or an epoch's results."""
    text = split_timestamp(s.last_text)[1].strip()   # less a collector's time stamp (run bundles, kubectl)
    return s.completed or _CLOSING.search(text) is not None or _EPOCH_RESULT.match(text) is not None


_RACE_KINDS = frozenset({EventKind.PEER_SYMPTOM, EventKind.TF_ERROR})
_OWN_FAILURE = CAUSE_KINDS | {EventKind.NAN_LOSS, EventKind.COLLECTIVE_MISMATCH}


def _shutdown_race(job: JobObservation, finished: frozenset[str], notes: list[str]
                   ) -> tuple[JobObservation, frozenset[str]]:
    """MultiWorkerMirroredStrategy trains in lock-step, so when one task ran its training to the end every task ran
    every step. At the end the tasks leave in some order, and the ones still shutting down report the ones that left
    as lost. Two shapes of this shutdown race, both with nothing of the reporting task's own:

    - a worker loses the chief (``chief:0``, else ``worker:0``, whose process holds the coordination service) after
      the chief ran its training to the end and its log shows no error: it lost a chief that had left;
    - a task reports a peer as crashed or lost after its own last step (TF 2.21's coordination service: "The
      following tasks are unhealthy (stopped sending heartbeats) ... The tasks have crashed",
      tensorflow/tensorflow#58434), every peer it names ran its training to the end and printed no error, and the
      report aborted nothing on it (a task still training has a collective in flight, which the report aborts and
      raises: a traceback, "Collective ops is aborted").

    The reporting task finished as well; its peer errors are set aside (said in ``notes``), so no rule reads them as
    a crash."""
    if job.strategy != "multi_worker_mirrored":
        return job, finished
    chief = "chief:0" if "chief:0" in job.tasks else "worker:0"

    def clean(name: str) -> bool:
        t = job.tasks.get(name)
        return t is not None and name in finished and not any(e.kind in _OWN_FAILURE or e.kind in _RACE_KINDS
                                                              for e in t.events)

    tasks = dict(job.tasks)
    raced = []
    for name, t in job.tasks.items():
        if name in finished or t.exit_code not in (None, 0):
            continue
        lost = [e for e in t.events if e.kind in _RACE_KINDS]
        if not lost or any(e.kind in _OWN_FAILURE or (e.kind == EventKind.PEER_SYMPTOM and e.frames) for e in t.events):
            continue
        peers = {e.peer for e in lost}
        lost_the_chief = name != chief and clean(chief) and peers <= {None, chief}
        last_step = max((e.line_no for e in t.events if e.kind in _PROGRESS_KINDS), default=-1)
        named = peers - {None}     # the report's other lines ("The tasks have crashed.") name no task
        saw_them_leave = (bool(named) and name not in named and all(clean(p) for p in named)
                          and all(e.line_no > last_step and PROPAGATED_ABORT not in e.text for e in lost))
        if not (lost_the_chief or saw_them_leave):
            continue
        tasks[name] = replace(t, events=tuple(e for e in t.events if e.kind not in _RACE_KINDS))
        raced.append((name, lost[0] if lost_the_chief else next(e for e in lost if e.peer), lost_the_chief))
    if not raced:
        return job, finished
    for name, e, lost_the_chief in raced:
        if lost_the_chief:
            notes.append(f"{name} reported losing its peers after {chief} ran its training to the end (the shutdown "
                         f"race: {chief}'s process, which holds the coordination service, exits first): not a failure "
                         f"({name}:{e.line_no}: {e.text.strip()[:160]})")
        else:
            notes.append(f"{name}'s report of {e.peer} as lost came after both had run their training to the end: "
                         f"the shutdown race ({e.peer} left first), not a failure ({name}:{e.line_no})")
    return replace(job, tasks=tasks), finished | frozenset(name for name, _, _ in raced)


def observation_from_scans(scans: Sequence[TaskScan], *, notes: Sequence[str] = (),
                           recorded: RecordedRun | None = None) -> JobObservation:
    """Assemble the job's observation from its scans (pure). Raises :class:`InputError` when nothing is usable.

    ``recorded``: a run bundle's process facts (exit codes, signals, pids, times), put on the tasks before any
    judgement: a task that exited 0 finished, whatever its last line."""
    notes = list(notes)
    good = _usable(scans, notes)
    by_task: dict[str, list[TaskScan]] = {}
    for s in good:
        if s.task:
            by_task.setdefault(s.task, []).append(s)
    tasks = {task: _merge(task, ss) for task, ss in by_task.items()}
    for task, ss in by_task.items():
        if len(ss) > 1:
            notes.append(f"{task}: {len(ss)} logs read as one ({', '.join(_name(s) for s in ss)})")
        if any(s.events_dropped for s in ss):
            notes.append(f"{task}: {sum(s.events_dropped for s in ss)} repeated events beyond the first and last "
                         "few thousand were not kept")
        if any(s.lines_skipped for s in ss):
            notes.append(f"{task}: messages repeated more than {TaskScanner.MAX_REPEATS} times were read "
                         f"{TaskScanner.MAX_REPEATS} times each ({sum(s.lines_skipped for s in ss)} repetitions counted "
                         "and skipped; a long flood's later lines are not even counted)")
        if any(s.long_lines for s in ss):
            notes.append(f"{task}: {sum(s.long_lines for s in ss)} line(s) longer than 64 KiB were cut")
    first = {task: min(s.first_ts for s in ss if s.first_ts is not None)
             for task, ss in by_task.items() if any(s.first_ts is not None for s in ss)}
    tasks = _clock(tasks, first, notes)
    tasks = _peers_as_ranks(tasks)
    strategy = "unknown"
    if any(t.startswith("ps:") for t in tasks):
        strategy = "parameter_server"
    elif any(e.kind == EventKind.CLUSTER_CONNECTED and "MultiWorkerMirrored" in e.text
             for t in tasks.values() for e in t.events) or (tasks and all(t.startswith(("worker:", "chief:")) for t in tasks)):
        strategy = "multi_worker_mirrored"
    job = JobObservation(tasks=tasks, strategy=strategy, source="logs", notes=tuple(notes))
    if recorded is not None:
        job = apply_recorded(job, recorded)
        tasks = job.tasks
    ended = [t.last_output_at for t in tasks.values() if t.last_output_at is not None]
    finished = frozenset(task for task, ss in by_task.items() if any(_ends_its_run(s) for s in ss))
    finished |= frozenset(name for name, t in tasks.items() if t.exit_code == 0)
    if strategy == "parameter_server" and "chief:0" in finished:
        # the coordinator ran its training to the end: the workers and parameter servers serve until they are
        # stopped, and their logs simply stop
        finished |= frozenset(tasks)
    job, finished = _shutdown_race(job, finished, notes)
    tasks = job.tasks
    recorded_hang = job.hang   # a run bundle's: the hang its supervisor declared
    # the processes' own word settles it: the job ran to its end, a task died by itself, or distdoctor was stopped
    # (a job that failed or was interrupted is no silent hang: its hang, if any, is the one the run declared)
    settled = recorded is not None and (recorded.succeeded() or bool(recorded.failed_tasks())
                                        or recorded.interrupted is not None)
    hang = recorded_hang or (None if settled else judge_silence(job, finished))
    if hang is not None and recorded_hang is None:
        silent = [t.task for t in job.ordered() if not ended_with_error(t)]
        notes.append("the logs simply stop: no task reports an error and not every task finished"
                     + (f" ({', '.join(silent[:8])}{'...' if len(silent) > 8 else ''})" if silent else ""))
    # a log that stops on an error (its last lines after any progress are an exception or a peer's failure) is not a
    # task that finished: with no hang and no rule naming the cause, the outcome is for the lines to say, never
    # "succeeded"
    # (errors after a task's training ran to its end are its shut-down; a ParameterServerStrategy job is done when its
    # coordinator's training is, whatever the workers and ps print as they are torn down)
    from .rules import chief_succeeded, completed
    stopped = not chief_succeeded(job) and any(_stopped_on_error(t) for name, t in tasks.items()
                                               if name not in finished and not completed(t))
    return replace(job, hang=hang, job_finished=hang is None and not stopped, ran_to_end=finished,
                   ended_at=job.ended_at if job.ended_at is not None else max(ended) if ended else None,
                   notes=tuple(notes))
