"""Reason over signature hits like an expert reading a pasted log.

The policy (tested in tests/test_reason.py and over the real-world corpus):

1. **Causes outrank symptoms.** A ``cause`` line is the failure; ``symptom``
   lines (connection reset, heartbeats, aborted collectives) are what healthy
   tasks print because of it and become its consequence evidence. A generic
   crash or exception line that is itself a symptom (its text matches one), or
   that follows a symptom on the same task within a few lines, died of the
   cascade and is demoted to a symptom.
2. **Among causes** the most specific signature wins (its ``rank``: the kernel's
   OOM verdict over the exception it caused); equal ranks go to the first line.
3. **The culprit** is the task the cause line names (``srun: error: task 4``,
   ``The replica master 0``), else the task that wrote it, else a task named by
   a line next to it; for a mismatch between tasks, the odd one out (the one
   task whose GPU failed to initialise). Symptoms point at the task they name.
4. **A hang needs positive evidence of waiting** (``wait`` lines); a fragment
   that merely ends is not a hang. A lone stall *warning* is not a failure.
5. **No evidence of a cause**: category ``other``, low confidence, the lines
   looked at, and which log would settle it. Alarming but harmless lines
   (``benign``) are not evidence.

Pure: hits and per-stream facts in, a :class:`Verdict` out.
"""
from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field

from ...model import Category, Status
from .clusters import defects, printed_clusters, startup_defect
from .demux import split_prefix
from .progress import EPOCH_LINE, progress_of
from .scan import Hit, StreamFacts
from .signature import Role
from .conclusion import Alternative, Verdict
from .safetynet import ERROR_LINE, rescue
from .priors import apply_priors
from .calibrate import calibrate

__all__ = ["Verdict", "Alternative", "reason"]

CASCADE_WINDOW = 8            # lines: a crash this close after a symptom on the same task died of the cascade
SPECIFIC_RANK = 70            # causes at or above this rank are never demoted
GENERIC_RANK = 45             # below this a cause line is generic (an exception, an exit code): a symptom's text in it wins
_MISMATCH = (Category.CONFIG_MISMATCH_ACROSS_WORKERS, Category.VERSION_MISMATCH)
_FINITE_VAL = re.compile(r"val_loss: (?!nan|inf)[\d.]")


@dataclass
class _Job:
    hits: list[Hit]
    facts: dict[str, StreamFacts]
    order: dict[int, int] = field(default_factory=dict)
    _indexed: list[Hit] | None = field(default=None, repr=False)
    _by_name: dict[str, list[tuple[int, Hit]]] = field(default_factory=dict, repr=False)
    _by_role: dict[Role, list[Hit]] = field(default_factory=dict, repr=False)

    def of(self, *names: str, role: Role | None = None) -> list[Hit]:
        if self._indexed is not self.hits:   # an index by name, rebuilt when ``hits`` is replaced: a 64-task job has
            self._indexed = self.hits        # tens of thousands of hits and the policy asks thousands of questions
            self._by_name, self._by_role = {}, {}
            for i, h in enumerate(self.hits):
                self._by_name.setdefault(h.sig.name, []).append((i, h))
                self._by_role.setdefault(h.sig.role, []).append(h)
        if not names:
            return list(self.hits) if role is None else list(self._by_role.get(role, ()))
        if len(names) == 1:
            got = self._by_name.get(names[0], ())
            return [h for _, h in got] if role is None else [h for _, h in got if h.sig.role == role]
        found = [ih for n in dict.fromkeys(names) for ih in self._by_name.get(n, ())
                 if role is None or ih[1].sig.role == role]
        if len(names) > 1:
            found.sort(key=lambda ih: ih[0])
        return [h for _, h in found]


def _key(job: _Job, h: Hit) -> tuple:
    return (h.ts if h.ts is not None else float("inf"), job.order.get(id(h), 0))


def _task_of(h: Hit) -> str | None:
    if h.sig.role == Role.CAUSE:
        return h.named or h.writer
    return h.named


def _distinct(root: Hit | None, hits) -> tuple[Hit, ...]:
    """One hit per line, none on the root's own line (several signatures can match one line)."""
    skip = {(root.stream, root.line_no)} if root is not None else set()
    best: dict[tuple, Hit] = {}
    for h in hits:
        key = (h.stream, h.line_no)
        if key in skip:
            continue
        # of several signatures on one line, the one whose role the line plays in the cascade (a symptom) speaks for it
        if key not in best or (best[key].sig.role != Role.SYMPTOM and h.sig.role == Role.SYMPTOM):
            best[key] = h
    return tuple(best.values())


def reason(hits: list[Hit], facts: list[StreamFacts]) -> Verdict:
    lines = [h for h in hits if h.sig.name == ERROR_LINE]
    hits = [h for h in hits if h.sig.name != ERROR_LINE]
    v = _reason(hits, facts)
    v = _cluster_defect_behind(v, hits) or v
    v = rescue(v, hits, lines, facts)
    return calibrate(apply_priors(v, hits), hits, facts)


def _reason(hits: list[Hit], facts: list[StreamFacts]) -> Verdict:
    benign_lines = {(h.stream, h.line_no) for h in hits if h.sig.role == Role.BENIGN}
    recovered = _ends_in_progress(facts)
    recreated = {f.name for f in facts
                 if any(_TF1_PROGRESS.search(split_prefix(t)[1]) for t in [t for t in f.tail if t.strip()][-3:])}
    job = _Job(hits=[h for h in hits if h.sig.role != Role.BENIGN and (h.stream, h.line_no) not in benign_lines
                     and not _retried_then_recovered(h, recovered)
                     and not (h.stream in recreated and _SESSION_RECREATED.search(h.text))],
               facts={f.name: f for f in facts})
    for i, h in enumerate(hits):
        job.order[id(h)] = i
    _drop_scheduling_waits_that_ended(job)
    benign = [h for h in hits if h.sig.role == Role.BENIGN]
    carried = _carry_from_task(job)
    causes, demoted = _causes(job)
    # a line that is evidence of waiting (a barrier or collective timeout) is read as the wait, not as the generic
    # DEADLINE_EXCEEDED / exception symptom its text also matches
    wait_lines = {(h.stream, h.line_no) for h in job.of(role=Role.WAIT)}
    # a probe-failure event quotes how the kubelet's probe failed (``connection refused``, a timeout): that is the
    # probe's result, not a task's failure to reach a peer
    probe_lines = {(h.stream, h.line_no) for h in job.of("k8s-probe-failed")}
    not_symptoms = wait_lines | probe_lines
    symptoms = [h for h in job.of(role=Role.SYMPTOM) + demoted if (h.stream, h.line_no) not in not_symptoms
                and not _after_training_finished(job, h)]
    if job.of("k8s-job-succeeded"):
        # the operator recorded the whole job as succeeded: the restarts and back-offs it went through were recovered
        symptoms = []
    waits = _unanswered(job, job.of(role=Role.WAIT))

    special = _special(job, causes, symptoms, waits)
    if special is not None:
        return special
    if causes:
        root = max(causes, key=lambda h: (h.sig.rank, -_key(job, h)[0], -job.order.get(id(h), 0)))
        culprit = carried.get(id(root)) or _task_of(root) or _pid_owner(job, root) or _nearby_task(job, root)
        culprit = _odd_one_out(job, root, culprit)
        root = _allocation_failure_behind_abort(job, root, causes, culprit)
        cons = _distinct(root, sorted(symptoms, key=lambda h: _key(job, h)))[:6]
        conf = "high" if root.sig.rank >= SPECIFIC_RANK else ("medium" if root.sig.rank >= 45 else "low")
        alts = _alternatives(job, causes, symptoms, root)
        frame = _raised_reading_the_cluster(job, root)
        if frame is not None:
            return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=culprit, confidence="medium",
                           code=frame.sig.code, summary=f"the task raised while reading its cluster (TF_CONFIG): "
                           f"{root.text.strip()[:240]}", remedy=frame.sig.remedy, root=root, context=(frame,),
                           consequences=cons, alternatives=alts, looked_at=_looked(job),
                           settle="the TF_CONFIG value the task was started with")
        oom = _killed_short_of_memory(job, root, culprit)
        if oom:
            return Verdict(status=Status.FAILED, category=Category.OOM_HOST, culprit=culprit, confidence="medium",
                           code=root.sig.code, summary=f"{culprit or 'a task'} was killed (SIGKILL) after it warned "
                           f"that its memory was nearly exhausted: most likely the OOM killer: {root.text[:200]}",
                           remedy="Give the task more memory or lower its use (batch size, shuffle/prefetch buffers, "
                                  "caches); `dmesg` on its node shows the OOM killer's record.",
                           root=root, context=tuple(oom[:3]), consequences=cons, alternatives=alts,
                           looked_at=_looked(job), settle="`dmesg` (or the memory cgroup's oom_kill count) on that node")
        return Verdict(status=Status.FAILED, category=root.sig.category, culprit=culprit, confidence=conf,
                       code=root.sig.code, summary=_summary(root, culprit), remedy=root.sig.remedy, root=root,
                       consequences=cons, alternatives=alts, looked_at=_looked(job), settle=_settle(culprit, root))
    if symptoms:
        true_symptoms = [h for h in symptoms if h.sig.role == Role.SYMPTOM] or symptoms
        root = max(true_symptoms, key=lambda h: (h.sig.rank, -job.order.get(id(h), 0)))
        named = Counter(t for t in (_task_of(h) for h in symptoms) if t)
        culprit = named.most_common(1)[0][0] if named else None
        cons = _distinct(root, sorted(symptoms, key=lambda h: _key(job, h)))[:6]
        return Verdict(status=Status.FAILED, category=root.sig.category, culprit=culprit,
                       confidence="medium" if culprit else "low", code=root.sig.code,
                       summary=f"only symptoms of a failure elsewhere: {root.sig.title.lower()}"
                               + (f"; they point at {culprit}" if culprit else "; no line names the task that failed"),
                       remedy=root.sig.remedy, root=root, consequences=cons,
                       alternatives=_alternatives(job, [], symptoms, root), looked_at=_looked(job),
                       settle=(f"the log of {culprit}, its exit status and the node's `dmesg`" if culprit
                               else "the logs of every task (the first one to fail printed the cause)"))
    if waits:
        strong = [h for h in waits if h.sig.name != "horovod-stall"] or (waits if len(waits) > 1 else [])
        if strong:
            root = max(strong, key=lambda h: (h.sig.rank, -job.order.get(id(h), 0)))
            named = Counter(t for t in (_task_of(h) for h in strong) if t)
            culprit = named.most_common(1)[0][0] if named else None
            return Verdict(status=Status.HUNG, category=root.sig.category, culprit=culprit,
                           confidence="medium" if culprit else "low", code=root.sig.code,
                           summary=f"tasks wait on each other: {root.sig.title.lower()}"
                                   + (f"; the task waited for is {culprit}" if culprit else ""),
                           remedy=root.sig.remedy, root=root, consequences=_distinct(root, strong)[:5], looked_at=_looked(job),
                           settle="a stack dump of each task (`py-spy dump`) at the hang")
    traceback = _cut_traceback(job)
    if traceback is not None:
        return traceback
    nan = _nan(job)
    if nan is not None:
        return nan
    finished = bool(job.of("training-finished"))
    lines = sum(f.lines for f in facts)
    note = ("the lines that look alarming are known to be harmless: " + ", ".join(sorted({h.sig.title for h in benign}))
            if benign else "no line in these logs is evidence of a failure")
    return Verdict(status=Status.SUCCEEDED if finished else Status.UNKNOWN, category=Category.OTHER, culprit=None,
                   confidence="low", code=None,
                   summary=("the job finished training and " if finished else "") + note + f" ({lines} lines read)",
                   remedy="If the job did fail, the evidence is elsewhere: the log of every task (including ones that "
                          "printed nothing), each node's `dmesg`, and the scheduler's record (`kubectl describe pod`, "
                          "`sacct`).",
                   root=None, looked_at=_looked(job),
                   settle="every task's full log and the scheduler's events for the job")


# -- steps of the policy -------------------------------------------------------------------------------------------

_STARTUP_WAITS = ("tf-waiting-for-tasks", "tf-example-stragglers")
# a wait, and the line that shows it answered later in the same log
_ANSWERED_BY = {"tf-waiting-for-tasks": "tf-cluster-joined", "tf-example-stragglers": "tf-cluster-joined",
                "tf-create-session-waiting": "tf1-master-session-started"}


def _unanswered(job: _Job, waits: list[Hit]) -> list[Hit]:
    """A start-up wait for peers that the same log later shows answered (tasks joined, the master session started)
    is a normal start."""
    out = []
    last: dict[tuple[str, str], int] = {}    # (answer, stream) -> the last line that answers
    for answer in set(_ANSWERED_BY.values()):
        for j in job.of(answer):
            last[(answer, j.stream)] = max(last.get((answer, j.stream), -1), j.line_no)
    for w in waits:
        answer = _ANSWERED_BY.get(w.sig.name)
        if answer and last.get((answer, w.stream), -1) > w.line_no:
            continue
        out.append(w)
    return out


_RETRY = re.compile(r"(?i)\bwill retry\b|\bretrying\b")
# TF1's MonitoredSession closes a session that failed and creates a new one from the last checkpoint; its training
# then goes on with the hooks' progress lines ("loss = x, step = n", "global_step/sec")
_SESSION_RECREATED = re.compile(r"(?i)a new session will be created")
_TF1_PROGRESS = re.compile(r"\bloss = [-+\w.]+, step = \d+|global_step/sec: [\d.]+")


def _ends_in_progress(facts: list[StreamFacts]) -> set[str]:
    """Streams whose last lines are training progress (epochs, steps): whatever they retried before, they recovered."""
    out = set()
    for f in facts:
        # a launcher's prefix (``[1,0]<stdout>:``, srun's ``0: ``) is not part of the line the task printed
        last = [split_prefix(t)[1] for t in f.tail if t.strip()][-3:]
        if any(progress_of(t) is not None or EPOCH_LINE.match(t.strip()) for t in last):
            out.add(f.name)
    return out


def _drop_scheduling_waits_that_ended(job: _Job) -> None:
    """A pod that could not be scheduled (FailedScheduling: Insufficient ...) and that the scheduler then placed
    (Scheduled: Successfully assigned, in the same events) only waited for room: that wait is over."""
    placed = job.of("k8s-pod-scheduled")
    if not placed:
        return
    def later_placed(h: Hit) -> bool:
        return any(p.stream == h.stream and p.line_no > h.line_no and (p.named or p.writer) == (h.named or h.writer)
                   for p in placed)
    job.hits = [h for h in job.hits if not (h.sig.name == "k8s-insufficient" and later_placed(h))]


def _after_training_finished(job: _Job, h: Hit) -> bool:
    """A symptom (a connection reset, a closed socket) that a task prints after it reported its training finished is
    the teardown: the tasks that finished close their channels and the ones serving them see their peers go. (Another
    task's symptom after one task finished is not: that is a task left waiting for one that finished early.)"""
    if h.sig.role != Role.SYMPTOM:
        return False
    return any(f.stream == h.stream and f.writer == h.writer and f.line_no < h.line_no
               for f in job.of("training-finished"))


def _retried_then_recovered(h: Hit, recovered: set[str]) -> bool:
    """A line that says it will retry is no failure when the same log then goes on training."""
    return h.stream in recovered and bool(_RETRY.search(h.text))


def _raised_reading_the_cluster(job: _Job, root: Hit) -> Hit | None:
    """A generic exception (``ValueError: ...``) raised right below a frame that reads the cluster -- a script's
    ``os.environ['TF_CONFIG']`` or TensorFlow's own cluster-reading code -- was raised by TF_CONFIG's content. The
    frame is the last one of the same traceback (after its header when the fragment has one), a few lines up."""
    if root.sig.name != "python-exception":
        return None
    heads = [h.line_no for h in job.of("python-traceback") if h.stream == root.stream and h.line_no < root.line_no]
    start = max(heads, default=0)
    near = [h for h in job.of("python-tf-config-frame", "python-cluster-config-frame")
            if h.stream == root.stream and start < h.line_no < root.line_no and root.line_no - h.line_no <= 6]
    return near[-1] if near else None


_KILLS = ("mpirun-rank-died", "shell-killed", "exit-137", "srun-task-exited", "launcher-first-process-failed")
_SIGKILL = re.compile(r"signal 9\b|\bKilled\b|\b137\b")


def _killed_short_of_memory(job: _Job, root: Hit, culprit: str | None) -> list[Hit]:
    """A task killed (SIGKILL) after it warned that host memory was nearly exhausted was, most likely, OOM-killed:
    the warnings it printed before the kill, else nothing."""
    if root.sig.name not in _KILLS or not _SIGKILL.search(root.text):
        return []
    at = job.order.get(id(root), 0)
    return [h for h in job.of("tf-allocator-warning") if "free system memory" in h.text
            and job.order.get(id(h), 0) < at and (culprit is None or h.writer in (None, culprit))]


def _carry_from_task(job: _Job) -> dict[int, str]:
    """A cause printed right after ``From /job:X/...:`` happened on X (TensorFlow re-raises remote errors so)."""
    out: dict[int, str] = {}
    froms = [h for h in job.hits if h.sig.name == "tf-from-remote-task" and h.named]
    for c in job.hits:
        if c.sig.role != Role.CAUSE:
            continue
        for f in froms:
            if f.stream == c.stream and 0 <= c.line_no - f.line_no <= 3:
                out[id(c)] = f.named
    return out


def _causes(job: _Job) -> tuple[list[Hit], list[Hit]]:
    symptoms = job.of(role=Role.SYMPTOM)
    sym_lines = {(h.stream, h.line_no) for h in symptoms}
    by_writer: dict[tuple[str, str | None], list[int]] = {}
    for h in symptoms:
        by_writer.setdefault((h.stream, h.writer), []).append(h.line_no)
    for near in by_writer.values():
        near.sort()
    causes, demoted = [], []
    for h in job.of(role=Role.CAUSE):
        if h.sig.rank < SPECIFIC_RANK:
            if (h.stream, h.line_no) in sym_lines and h.sig.rank < GENERIC_RANK:
                demoted.append(h)
                continue
            near = by_writer.get((h.stream, h.writer), [])
            i = bisect.bisect_left(near, h.line_no - CASCADE_WINDOW)   # a symptom in the window before the line
            if i < len(near) and near[i] < h.line_no:
                demoted.append(h)
                continue
        causes.append(h)
    return causes, demoted


_KILLED_PID = re.compile(r"(?:Killed process|Kill process|reaped process) (\d+)")
_RANK_PID = re.compile(r"rank (\d+) with PID (\d+)")


_ABORT = re.compile(r"(?i)signal 6\b|\bSIGABRT\b|\(Aborted\)|Signal: Aborted")


def _allocation_failure_behind_abort(job: _Job, root: Hit, causes: list[Hit], culprit: str | None) -> Hit:
    """A SIGABRT of a task whose allocator failed just before (``std::bad_alloc`` reaching std::terminate, which
    aborts) is that memory failure: the abort is how it ended the process."""
    if root.sig.category != Category.SEGFAULT_CORE_DUMP or not _ABORT.search(root.text) or culprit is None:
        return root
    oom = [h for h in causes if h.sig.category in (Category.OOM_HOST, Category.OOM_GPU) and _task_of(h) == culprit]
    return min(oom, key=lambda h: _key(job, h)) if oom else root


def _pid_owner(job: _Job, root: Hit) -> str | None:
    """The kernel's OOM record names the PID it killed; mpirun names the PID of each rank it lost: the same PID is
    that rank."""
    m = _KILLED_PID.search(root.text)
    if not m:
        return None
    for h in job.hits:
        r = _RANK_PID.search(h.text)
        if r and r.group(2) == m.group(1):
            return f"rank:{int(r.group(1))}"
    return None


def _nearby_task(job: _Job, root: Hit) -> str | None:
    """A task named by a line near the root (a scheduler's record of the same container) or by its other hits."""
    same = [h for h in job.hits if h.sig.code == root.sig.code and _task_of(h)]
    if same:
        return _task_of(same[0])
    near = [h for h in job.hits if h.stream == root.stream and h.named and 0 <= h.line_no - root.line_no <= 3
            and h is not root]
    return near[0].named if near else None


def _odd_one_out(job: _Job, root: Hit, culprit: str | None) -> str | None:
    """For a mismatch between tasks, the culprit is the one task that differs, not the one that reported it."""
    if root.sig.category not in _MISMATCH:
        return culprit
    odd = {h.writer for h in job.of("cuda-init-failed") if h.writer}
    if len(odd) == 1:
        return next(iter(odd))
    return culprit


def _special(job: _Job, causes: list[Hit], symptoms: list[Hit], waits: list[Hit]) -> Verdict | None:
    """Readings that need more than one line."""
    # Horovod initialised alone in several processes: they never formed one job.
    alone = job.of("horovod-size-one")
    if len(alone) >= 2 and not causes:
        root = alone[0]
        return Verdict(status=Status.FAILED, category=Category.VERSION_MISMATCH, culprit=None, confidence="medium",
                       code=root.sig.code, summary=f"{len(alone)} processes each initialised Horovod as rank 0 of size 1: "
                       "they trained alone instead of as one job", remedy=root.sig.remedy, root=root,
                       consequences=tuple(alone[1:4]), looked_at=_looked(job),
                       settle="`horovodrun --check-build` and the launcher command on each node")
    stalls = job.of("horovod-stall")
    if stalls and not causes:
        # Horovod's stall inspector warns after 60 s of waiting and lists, per missing rank, the tensors waited for.
        # Warnings that keep naming the same one rank but different tensors each time mean the collectives in between
        # completed: that rank is slow every step, not stuck (a stuck rank is missing the same tensors every time)
        per = _missing_per_stall(job, stalls)
        ranks = {r for listed, _ in per for r in listed}
        tensors = [t for _, t in per]
        if len(per) >= 2 and len(ranks) == 1 and all(listed for listed, _ in per) \
                and all(a != b for a, b in zip(tensors, tensors[1:])):
            rank = ranks.pop()
            first = min(stalls, key=lambda h: job.order.get(id(h), 0))
            return Verdict(status=Status.FAILED, category=Category.STRAGGLER_SLOW_WORKER, culprit=rank,
                           confidence="low", code=first.sig.code,
                           summary=f"the other ranks waited for {rank} {len(per)} times, each time in different "
                                   f"collectives (training went on in between): {rank} is slower than its peers and "
                                   "holds every step back",
                           remedy="Find why that rank is slow (its GPU's clocks and temperature, its input pipeline, "
                                  "a busier or slower node) and fix or exclude that node.",
                           root=first, consequences=_distinct(first, stalls)[:5], looked_at=_looked(job),
                           settle=f"step times per rank (Horovod timeline) and `nvidia-smi -q` on {rank}'s node")
        if _stall_resolved(job, stalls):
            stalls = []    # training finished after the last warning: the wait ended, it was no hang
    if stalls and not causes:
        first = min(stalls, key=lambda h: job.order.get(id(h), 0))
        finished = [h for h in job.of("training-finished") if job.order.get(id(h), 0) < job.order.get(id(first), 0)]
        if finished:
            missing = _missing_ranks(job)
            return Verdict(status=Status.HUNG, category=Category.DATA_SHARDING_IMBALANCE, culprit=None,
                           candidates=tuple(missing), confidence="medium", code=first.sig.code,
                           summary="some ranks finished their data and left training while the others wait for them "
                                   "in a collective" + (f" (missing: {', '.join(missing)})" if missing else ""),
                           remedy="Give every rank the same number of steps: shard the data evenly, or stop all ranks "
                                  "at the shortest shard.", root=first, context=tuple(finished[:3]),
                           looked_at=_looked(job), settle="each rank's step count when the stall began")
        saves = [h for h in job.of("checkpoint-save") if h.stream == first.stream and 0 < first.line_no - h.line_no <= 5]
        if saves:
            culprit = saves[-1].writer or "rank:0"
            return Verdict(status=Status.HUNG, category=Category.HANG_STALLED_WORKER, culprit=culprit, confidence="low",
                           code=first.sig.code, summary=f"{culprit} was saving a checkpoint (outside the collective) "
                           "while the other ranks waited for it", remedy="Saving on one rank stalls the others: save "
                           "less often, to faster storage, or asynchronously; raise the collective timeouts.",
                           root=first, context=tuple(saves[-1:]), looked_at=_looked(job),
                           settle="how long the save took (the checkpoint file's timestamps)")
        if _missing_ranks(job) and len(stalls) >= 1 and not symptoms:
            missing = _missing_ranks(job)
            if len(missing) == 1 and missing[0].startswith("rank:"):
                # one rank missing from every stalled tensor, the others missing from none: that rank submitted
                # nothing (stuck or behind), rather than something else (a mismatch lists ranks on both sides)
                return Verdict(status=Status.HUNG, category=Category.HANG_STALLED_WORKER, culprit=missing[0],
                               confidence="low", code=first.sig.code,
                               summary=f"every other rank waits in a collective that {missing[0]} never joined: it is "
                                       "stuck or far behind", remedy="Look at what that rank was doing (a stack dump: "
                               "py-spy dump, its input pipeline, I/O, a checkpoint it was writing).", root=first,
                               looked_at=_looked(job), settle=f"a stack dump of {missing[0]} during the stall")
            nums = sorted(int(t.split(":")[1]) for t in missing if t.startswith("rank:"))
            # ranks missing different tensors are on both sides of the mismatch (each waits for what the other never
            # submits): no block of ranks that runs other code
            one_side = len({h.text.split("[", 1)[-1] for h in job.of("horovod-missing-rank-entry")}) <= 1
            if len(nums) >= 4 and nums == list(range(nums[0], nums[-1] + 1)) and one_side:
                return Verdict(status=Status.HUNG, category=Category.CONFIG_MISMATCH_ACROSS_WORKERS, culprit=None,
                               candidates=tuple(missing), confidence="low", code=first.sig.code,
                               summary=f"a contiguous block of ranks ({nums[0]}-{nums[-1]}, a whole node's worth) never "
                                       "submitted a collective the other ranks did: those nodes run different code or "
                                       "arguments", remedy="Run identical code, arguments and environment on every node "
                                       "(one image, one command).", root=first, looked_at=_looked(job),
                               settle="a diff of the code and command line on each node")
            return Verdict(status=Status.HUNG, category=Category.HANG_COLLECTIVE_MISMATCH, culprit=None,
                           candidates=tuple(missing), confidence="low", code=first.sig.code,
                           summary="ranks submitted different collectives: some never submitted what the others wait "
                                   f"for (missing: {', '.join(missing[:8])})", remedy=first.sig.remedy, root=first,
                           looked_at=_looked(job), settle="the code and arguments each rank runs")
    # TensorFlowOnSpark reservations: two TF tasks placed in one executor process.
    dup = _tfos_shared_process(job)
    if dup is not None and not causes:
        return dup
    return None


def _stall_resolved(job: _Job, stalls: list[Hit]) -> bool:
    """A task reports training finished after the last stall warning."""
    last = max(job.order.get(id(h), 0) for h in stalls)
    return any(job.order.get(id(h), 0) > last for h in job.of("training-finished"))


def _missing_per_stall(job: _Job, stalls: list[Hit]) -> list[tuple[set[str], str]]:
    """For each stall warning, the ranks it lists as missing (the ``N: [tensor, ...]`` entries below it) and the
    tensors listed."""
    marks = sorted(job.order.get(id(h), 0) for h in stalls)
    per: list[tuple[set[str], list[str]]] = [(set(), []) for _ in marks]
    for h in job.of("horovod-missing-rank-entry"):
        at = job.order.get(id(h), 0)
        idx = max((i for i, m in enumerate(marks) if m < at), default=None)
        if idx is not None and h.named:
            per[idx][0].add(h.named)
            per[idx][1].append(h.text.split("[", 1)[-1])
    return [(ranks, " ".join(sorted(t))) for ranks, t in per]


_RANKS = re.compile(r"missing ranks: ([\d, ]+)", re.I)
_RANK_LINE = re.compile(r"^(\d+): \[")


def _missing_ranks(job: _Job) -> list[str]:
    out: list[str] = [h.named for h in job.of("horovod-missing-rank-entry") if h.named]
    for h in job.of("horovod-missing-ranks"):
        m = _RANKS.search(h.text)
        if m:
            out += [f"rank:{int(x)}" for x in m.group(1).replace(" ", "").split(",") if x.isdigit()]
        elif h.text.strip().lower().startswith("missing ranks") and not job.of("horovod-missing-rank-entry"):
            out.append("(listed)")    # a header whose entries (`1: [tensor, ...]`) were not recognised
    return sorted(set(out), key=lambda t: (len(t), t))


_TFOS = re.compile(r"'host': '(?P<host>[^']+)', 'ppid': (?P<ppid>\d+), 'job_name': '(?P<job>\w+)'")
_TFOS_IDX = re.compile(r"'task_index': (?P<index>\d+)")


def _tfos_shared_process(job: _Job) -> Verdict | None:
    """Two TF tasks reserved by one executor process (same host and parent pid) cannot both run."""
    seen: dict[tuple[str, str], str] = {}
    for h in job.of("tfos-reservation"):
        m, mi = _TFOS.search(h.text), _TFOS_IDX.search(h.text)
        if not (m and mi):
            continue
        task = f"{m.group('job').lower()}:{int(mi.group('index'))}"
        key = (m.group("host"), m.group("ppid"))
        if key in seen:
            first = seen[key]
            return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=first,
                           candidates=(first, task), confidence="medium", code=h.sig.code,
                           summary=f"{first} and {task} were reserved in the same executor process (host {key[0]}, "
                                   f"ppid {key[1]}): one Spark executor cannot host two TensorFlow tasks",
                           remedy=h.sig.remedy, root=h, looked_at=_looked(job),
                           settle="the Spark executor count against the TF cluster size")
        seen[key] = task
    return None


def _cut_traceback(job: _Job) -> Verdict | None:
    """A traceback whose exception line is missing: judge by what the task printed before it."""
    tbs = job.of("python-traceback")
    if not tbs:
        return None
    tb = tbs[-1]
    culprit = tb.writer
    for pc in printed_clusters(job.hits):
        if not pc.whole or pc.hits[0].stream != tb.stream:
            continue
        who = pc.own or culprit
        defect = startup_defect(pc, who)
        if defect:
            return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=who, confidence="low",
                           code="DD872", summary=f"the task crashed at start-up right after printing its cluster "
                           f"configuration, which {defect}", remedy="Fix the cluster in TF_CONFIG (the operator's "
                           "replica specs): the strategy this task runs expects that entry.", root=tb,
                           context=pc.hits[:1], looked_at=_looked(job),
                           settle="the exception line at the end of the traceback")
    cfg = [h for h in job.of("python-tf-config-frame", "python-cluster-config-frame")
           if h.stream == tb.stream and h.line_no > tb.line_no]
    if cfg:
        return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=culprit, confidence="low",
                       code=cfg[-1].sig.code, summary="the task died inside TensorFlow's code that reads its cluster "
                       "(its traceback ends in " + cfg[-1].text.strip()[:160] + ")", remedy=cfg[-1].sig.remedy,
                       root=tb, context=tuple(cfg[-1:]), looked_at=_looked(job),
                       settle="the exception line at the end of the traceback")
    net = [h for h in job.of("python-network-frame") if h.stream == tb.stream and h.line_no > tb.line_no]
    if net:
        # the task died inside a network call; on Kubernetes an outbound call that fails at start-up is most often
        # blocked (a network policy, a service-mesh sidecar not yet ready), elsewhere the address is unreachable
        k8s = _on_kubernetes(job)
        return Verdict(status=Status.FAILED,
                       category=Category.FIREWALL_OR_PORT_BLOCKED if k8s else Category.NETWORK_UNREACHABLE,
                       culprit=culprit, confidence="low", code=net[-1].sig.code,
                       summary="the task died inside a network call (its traceback ends in " + net[-1].text.strip()[:120]
                               + ")" + ("; on Kubernetes such calls are most often blocked by a network policy or a "
                                        "sidecar that is not ready yet" if k8s else ""),
                       remedy="Check that the task may reach that address from where it runs: DNS, egress rules, "
                              "proxies; on Kubernetes network policies and service-mesh sidecars (Istio: "
                              "`sidecar.istio.io/inject: \"false\"` on the job's pods, or holdApplicationUntilProxyStarts).",
                       root=tb, context=tuple(net[-1:]), looked_at=_looked(job), settle="the exception line at the end of the traceback")
    return Verdict(status=Status.FAILED, category=Category.USER_CODE_ERROR, culprit=culprit, confidence="low",
                   code=tb.sig.code, summary="a Python traceback ended the task, but its exception line is not in the "
                   "log", remedy="Read the exception at the end of the full traceback; its last frame in your code is "
                   "where to look.", root=tb, looked_at=_looked(job),
                   settle="the end of the traceback (the exception line)")


_K8S_MARKS = ("k8s-oomkilled", "k8s-backoff", "k8s-evicted", "k8s-exit-code", "k8s-pod-running",
              "k8s-api-unreachable", "k8s-insufficient", "k8s-killing-container", "k8s-image-pull")


def _on_kubernetes(job: _Job) -> bool:
    return any(h.sig.name in _K8S_MARKS for h in job.hits) or any(f.on_kubernetes for f in job.facts.values())


_UNREACHED = (Category.PEER_UNRESPONSIVE, Category.NETWORK_UNREACHABLE, Category.FIREWALL_OR_PORT_BLOCKED)


def _cluster_defect_behind(v: Verdict, hits: list[Hit]) -> Verdict | None:
    """Tasks that cannot reach each other (or a log that shows nothing else) under a cluster the log printed with a
    static defect -- a peer at ``localhost`` among remote hosts, two tasks at one address, an index past its job:
    the defect is the cause, the waiting and the refused connections are its consequences (same rules as `check`)."""
    reached = v.root is None or v.root.sig.role in (Role.SYMPTOM, Role.WAIT) or v.category in _UNREACHED
    if not reached:
        return None
    for pc in printed_clusters(hits):
        found = defects(pc)
        if not found:
            continue
        f = found[0]
        cons = ((v.root,) if v.root is not None else ()) + tuple(v.consequences)
        seen = v.status in (Status.FAILED, Status.HUNG)
        return Verdict(status=v.status if seen else Status.UNKNOWN, category=Category.CONFIG_TF_CONFIG,
                       culprit=f.culprit or v.culprit,
                       confidence="medium" if seen else "low", code=f.code,
                       summary=f"the cluster printed in the log: {f.summary}"
                               + (f"; the other lines are what that causes ({v.summary})" if seen else ""),
                       remedy=f.remedy or "Fix the addresses in TF_CONFIG (or the operator's replica specs) so "
                                          "that every task is listed at an address the others can reach.",
                       root=pc.hits[0], context=pc.hits[1:3], consequences=_distinct(pc.hits[0], cons)[:6],
                       alternatives=((Alternative(v.category, v.culprit, v.summary[:200]),) if v.root is not None
                                     else ()) + v.alternatives[:2],
                       looked_at=v.looked_at, settle=None if seen else "whether the job failed: every task's log")
    return None


def _nan(job: _Job) -> Verdict | None:
    nans = job.of("tf-nan-progress")
    if not nans:
        return None
    real = [h for h in nans if not _FINITE_VAL.search(h.text)]
    if not real:
        return None
    root = real[0]
    return Verdict(status=Status.FAILED, category=Category.NUMERICAL_DIVERGENCE, culprit=root.writer, confidence="medium",
                   code=root.sig.code, summary="the training loss became NaN/Inf", remedy=root.sig.remedy, root=root,
                   consequences=tuple(real[1:4]), looked_at=_looked(job), settle="the loss curve before the first NaN")


def _alternatives(job: _Job, causes: list[Hit], symptoms: list[Hit], root: Hit) -> tuple[Alternative, ...]:
    seen = {(root.sig.category, _task_of(root))}
    out: list[Alternative] = []
    for h in sorted(causes, key=lambda h: -h.sig.rank) + sorted(symptoms, key=lambda h: -h.sig.rank):
        if (h.stream, h.line_no) == (root.stream, root.line_no) and h.sig.rank < root.sig.rank:
            continue
        key = (h.sig.category, _task_of(h))
        if key in seen:
            continue
        seen.add(key)
        out.append(Alternative(h.sig.category, _task_of(h), f"{h.sig.code} {h.sig.title}: {h.text[:160]}"))
        if len(out) >= 3:
            break
    return tuple(out)


def _summary(root: Hit, culprit: str | None) -> str:
    where = f" on {culprit}" if culprit else ""
    return f"{root.sig.title}{where}: {root.text[:240]}"


def _settle(culprit: str | None, root: Hit) -> str | None:
    if culprit is None:
        return "the log of the task that printed this line (its writer is not named in the input)"
    return None


def _looked(job: _Job) -> tuple[str, ...]:
    return tuple(f"{h.stream}:{h.line_no} [{h.sig.code} {h.sig.role.value}] {h.text[:160]}"
                 for h in sorted(job.hits, key=lambda h: job.order.get(id(h), 0))[:12])
