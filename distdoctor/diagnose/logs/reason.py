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
from dataclasses import replace
from collections import Counter

from ...model import Category, Status
from .prefixes import split_prefix
from .progress import EPOCH_LINE, progress_of
from .scan import Hit, StreamFacts
from .signature import Role
from .conclusion import Alternative, Verdict
from .jobhits import (JobHits, alternatives, distinct, looked, named_below, order_key, settle_of, summary_of,
                      task_of)
from .multiline import cluster_defect_behind, cut_traceback, multi_line_reading, nan_reading
from .safetynet import ERROR_LINE, rescue
from .priors import apply_priors
from .kb.ambiguous import cap_of
from .settle import settle_for
from .frames import last_user_frame, lines_before

__all__ = ["Verdict", "Alternative", "reason"]

CASCADE_WINDOW = 8            # lines: a crash this close after a symptom on the same task died of the cascade
SPECIFIC_RANK = 70            # causes at or above this rank are never demoted
# what a lost peer can make a task die of: a crash, an exception, a lost connection of its own -- never a program
# that could not start, another version, a wrong configuration or a resource of its own
CASCADE_CATEGORIES = frozenset({Category.SEGFAULT_CORE_DUMP, Category.USER_CODE_ERROR, Category.PEER_CRASHED,
                                Category.PEER_UNRESPONSIVE, Category.NETWORK_UNREACHABLE, Category.OTHER,
                                Category.HANG_STALLED_WORKER, Category.HANG_COLLECTIVE_MISMATCH})
GENERIC_RANK = 45             # below this a cause line is generic (an exception, an exit code): a symptom's text in it wins
_MISMATCH = (Category.CONFIG_MISMATCH_ACROSS_WORKERS, Category.VERSION_MISMATCH)



def reason(hits: list[Hit], facts: list[StreamFacts]) -> Verdict:
    lines = [h for h in hits if h.sig.name == ERROR_LINE]
    hits = [h for h in hits if h.sig.name != ERROR_LINE]
    v = _reason(hits, facts)
    v = cluster_defect_behind(v, hits) or v
    v = rescue(v, hits, lines, facts)
    return _capped(apply_priors(_at_user_frame(v, facts), hits))


_ORDER = {"low": 0, "medium": 1, "high": 2}
_WHY_LOOKALIKE = "a cause known to produce the same lines"


def _capped(v: Verdict) -> Verdict:
    """A verdict on a line with more than one usual cause (:mod:`.kb.ambiguous`) is at most as confident as that
    message allows, and lists the other usual causes first among its alternatives."""
    if v.root is None or v.category != v.root.sig.category:
        return v
    amb = cap_of(v.root.sig.name, v.root.text)
    if amb is None:
        return v
    conf = amb.cap if _ORDER[v.confidence] > _ORDER[amb.cap] else v.confidence
    new = (amb.other,) + amb.more
    alts = tuple(Alternative(c, v.culprit, amb.why if c == amb.other else _WHY_LOOKALIKE, settle=settle_for(c))
                 for c in new)
    return replace(v, confidence=conf, alternatives=alts + tuple(a for a in v.alternatives if a.category not in new))


def _at_user_frame(v: Verdict, facts: list[StreamFacts]) -> Verdict:
    """An exception in the user's code says where: the last frame of its traceback in the user's own code (file:line
    and the line's text), when the traceback is among its stream's last lines."""
    if v.root is None or v.category != Category.USER_CODE_ERROR or v.root.sig.role != Role.CAUSE:
        return v
    for f in facts:
        before = lines_before(v.root.text, f.tail) if f.name == v.root.stream else None
        frame = last_user_frame(before) if before else None
        if frame is not None:
            return replace(v, summary=f"{v.summary} (at {frame.where}" + (f": {frame.code})" if frame.code else ")"))
    return v


def _reason(hits: list[Hit], facts: list[StreamFacts]) -> Verdict:
    benign_lines = {(h.stream, h.line_no) for h in hits if h.sig.role == Role.BENIGN}
    recovered = _ends_in_progress(facts)
    recreated = {f.name for f in facts
                 if any(_TF1_PROGRESS.search(split_prefix(t)[1]) for t in [t for t in f.tail if t.strip()][-3:])}
    harmless = _tracebacks_of_harmless_exceptions(hits, benign_lines)
    job = JobHits(hits=[h for h in hits if h.sig.role != Role.BENIGN and (h.stream, h.line_no) not in benign_lines
                     and id(h) not in harmless and not _retried_then_recovered(h, recovered)
                     and not (h.stream in recreated and _SESSION_RECREATED.search(h.text))],
               facts={f.name: f for f in facts})
    for i, h in enumerate(hits):
        job.order[id(h)] = i
    _drop_scheduling_waits_that_ended(job)
    benign = [h for h in hits if h.sig.role == Role.BENIGN]
    carried = _carry_from_task(job)
    causes, demoted = _causes(job)
    # a line that is evidence of waiting (a barrier or collective timeout) is read as the wait, not as the generic
    # DEADLINE_EXCEEDED / exception symptom its text also matches -- nor as the generic exception it was raised as
    wait_lines = {(h.stream, h.line_no) for h in job.of(role=Role.WAIT)}
    causes = [h for h in causes if h.sig.rank >= GENERIC_RANK or (h.stream, h.line_no) not in wait_lines]
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

    special = multi_line_reading(job, causes, symptoms, waits)
    if special is not None:
        return special
    if causes:
        root = max(causes, key=lambda h: (h.sig.rank, -order_key(job, h)[0], -job.order.get(id(h), 0)))
        culprit = carried.get(id(root)) or task_of(root) or _pid_owner(job, root) or _nearby_task(job, root)
        culprit = _odd_one_out(job, root, culprit)
        root = _allocation_failure_behind_abort(job, root, causes, culprit)
        cons = distinct(root, sorted(symptoms, key=lambda h: order_key(job, h)))[:6]
        conf = "high" if root.sig.rank >= SPECIFIC_RANK else ("medium" if root.sig.rank >= 45 else "low")
        alts = alternatives(job, causes, symptoms, root)
        frame = _raised_reading_the_cluster(job, root)
        if frame is not None:
            return Verdict(status=Status.FAILED, category=Category.CONFIG_TF_CONFIG, culprit=culprit, confidence="medium",
                           code=frame.sig.code, summary=f"the task raised while reading its cluster (TF_CONFIG): "
                           f"{root.text.strip()[:240]}", remedy=frame.sig.remedy, root=root, context=(frame,),
                           consequences=cons, alternatives=alts, looked_at=looked(job),
                           settle="the TF_CONFIG value the task was started with")
        oom = _killed_short_of_memory(job, root, culprit)
        if oom:
            return Verdict(status=Status.FAILED, category=Category.OOM_HOST, culprit=culprit, confidence="medium",
                           code=root.sig.code, summary=f"{culprit or 'a task'} was killed (SIGKILL) after it warned "
                           f"that its memory was nearly exhausted: most likely the OOM killer: {root.text[:200]}",
                           remedy="Give the task more memory or lower its use (batch size, shuffle/prefetch buffers, "
                                  "caches); `dmesg` on its node shows the OOM killer's record.",
                           root=root, context=tuple(oom[:3]), consequences=cons, alternatives=alts,
                           looked_at=looked(job), settle="`dmesg` (or the memory cgroup's oom_kill count) on that node")
        return Verdict(status=Status.FAILED, category=root.sig.category, culprit=culprit, confidence=conf,
                       code=root.sig.code, summary=summary_of(root, culprit), remedy=root.sig.remedy, root=root,
                       consequences=cons, alternatives=alts, looked_at=looked(job), settle=settle_of(culprit, root))
    if symptoms:
        true_symptoms = [h for h in symptoms if h.sig.role == Role.SYMPTOM] or symptoms
        root = max(true_symptoms, key=lambda h: (h.sig.rank, -job.order.get(id(h), 0)))
        named = Counter(t for t in (task_of(h) for h in symptoms) if t)
        culprit = named.most_common(1)[0][0] if named else None
        cons = distinct(root, sorted(symptoms, key=lambda h: order_key(job, h)))[:6]
        return Verdict(status=Status.FAILED, category=root.sig.category, culprit=culprit,
                       confidence="medium" if culprit else "low", code=root.sig.code,
                       summary=f"only symptoms of a failure elsewhere: {root.sig.title.lower()}"
                               + (f"; they point at {culprit}" if culprit else "; no line names the task that failed"),
                       remedy=root.sig.remedy, root=root, consequences=cons,
                       alternatives=alternatives(job, [], symptoms, root), looked_at=looked(job),
                       settle=(f"the log of {culprit}, its exit status and the node's `dmesg`" if culprit
                               else "the logs of every task (the first one to fail printed the cause)"))
    if waits:
        strong = [h for h in waits if h.sig.name != "horovod-stall"] or (waits if len(waits) > 1 else [])
        if strong:
            root = max(strong, key=lambda h: (h.sig.rank, -job.order.get(id(h), 0)))
            named = Counter(t for t in (task_of(h) for h in strong) if t)
            culprit = named.most_common(1)[0][0] if named else None
            return Verdict(status=Status.HUNG, category=root.sig.category, culprit=culprit,
                           confidence="medium" if culprit else "low", code=root.sig.code,
                           summary=f"tasks wait on each other: {root.sig.title.lower()}"
                                   + (f"; the task waited for is {culprit}" if culprit else ""),
                           remedy=root.sig.remedy, root=root, consequences=distinct(root, strong)[:5], looked_at=looked(job),
                           settle="a stack dump of each task (`py-spy dump`) at the hang")
    traceback = cut_traceback(job)
    if traceback is not None:
        return traceback
    nan = nan_reading(job)
    if nan is not None:
        return nan
    finished = bool(job.of("training-finished"))
    lines = sum(f.lines for f in facts)
    note = ("the lines that look alarming are known to be harmless: " + ", ".join(sorted({h.sig.title for h in benign}))
            if benign else "no line in these logs is evidence of a failure")
    read = f"{lines} line{'' if lines == 1 else 's'} read"
    return Verdict(status=Status.SUCCEEDED if finished else Status.UNKNOWN, category=Category.OTHER, culprit=None,
                   confidence="low", code=None,
                   summary=("the job finished training and " if finished else "") + note + f" ({read})",
                   remedy="If the job did fail, the evidence is elsewhere: the log of every task (including ones that "
                          "printed nothing), each node's `dmesg`, and the scheduler's record (`kubectl describe pod`, "
                          "`sacct`).",
                   root=None, looked_at=looked(job),
                   settle="every task's full log and the scheduler's events for the job")


# -- steps of the policy -------------------------------------------------------------------------------------------

_STARTUP_WAITS = ("tf-waiting-for-tasks", "tf-example-stragglers")
# a wait, and the line that shows it answered later in the same log
_ANSWERED_BY = {"tf-waiting-for-tasks": "tf-cluster-joined", "tf-example-stragglers": "tf-cluster-joined",
                "tf-create-session-waiting": "tf1-master-session-started"}


def _unanswered(job: JobHits, waits: list[Hit]) -> list[Hit]:
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


def _drop_scheduling_waits_that_ended(job: JobHits) -> None:
    """A pod that could not be scheduled (FailedScheduling: Insufficient ...) and that the scheduler then placed
    (Scheduled: Successfully assigned, in the same events) only waited for room: that wait is over."""
    placed = job.of("k8s-pod-scheduled")
    if not placed:
        return
    def later_placed(h: Hit) -> bool:
        return any(p.stream == h.stream and p.line_no > h.line_no and (p.named or p.writer) == (h.named or h.writer)
                   for p in placed)
    job.hits = [h for h in job.hits if not (h.sig.name == "k8s-insufficient" and later_placed(h))]


def _after_training_finished(job: JobHits, h: Hit) -> bool:
    """A symptom (a connection reset, a closed socket) that a task prints after it reported its training finished is
    the teardown: the tasks that finished close their channels and the ones serving them see their peers go. (Another
    task's symptom after one task finished is not: that is a task left waiting for one that finished early.)"""
    if h.sig.role != Role.SYMPTOM:
        return False
    return any(f.stream == h.stream and f.writer == h.writer and f.line_no < h.line_no
               for f in job.of("training-finished"))


_TB_REACH = 60   # lines from a traceback's header to its exception line


def _tracebacks_of_harmless_exceptions(hits: list[Hit], benign_lines: set) -> set[int]:
    """The traceback headers whose exception line (an exception as DD860 reads one) is a known harmless line (a
    library that logs the ImportError it caught, traceback and all, and goes on): such a traceback is no failure --
    not a traceback cut before its exception either."""
    heads = sorted((h for h in hits if h.sig.name == "python-traceback"), key=lambda h: (h.stream, h.line_no))
    ends = [h for h in hits if h.sig.name == "python-exception" and (h.stream, h.line_no) in benign_lines]
    out = set()
    for i, tb in enumerate(heads):
        nxt = heads[i + 1].line_no if i + 1 < len(heads) and heads[i + 1].stream == tb.stream else None
        if any(e.stream == tb.stream and tb.line_no < e.line_no <= tb.line_no + _TB_REACH
               and (nxt is None or e.line_no < nxt) for e in ends):
            out.add(id(tb))
    return out


def _retried_then_recovered(h: Hit, recovered: set[str]) -> bool:
    """A line that says it will retry is no failure when the same log then goes on training."""
    return h.stream in recovered and bool(_RETRY.search(h.text))


def _raised_reading_the_cluster(job: JobHits, root: Hit) -> Hit | None:
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


_KILLS = ("mpirun-rank-died", "shell-killed", "exit-137", "srun-task-exited", "srun-task-exit-code",
          "launcher-first-process-failed")
_SIGKILL = re.compile(r"signal 9\b|\bKilled\b|\b137\b")


def _killed_short_of_memory(job: JobHits, root: Hit, culprit: str | None) -> list[Hit]:
    """A task killed (SIGKILL) after it warned that host memory was nearly exhausted was, most likely, OOM-killed:
    the warnings it printed before the kill, else nothing."""
    if root.sig.name not in _KILLS or not _SIGKILL.search(root.text):
        return []
    at = job.order.get(id(root), 0)
    return [h for h in job.of("tf-allocator-warning") if "free system memory" in h.text
            and job.order.get(id(h), 0) < at and (culprit is None or h.writer in (None, culprit))]


# lines that head a block about one task: TensorFlow re-raises a remote error under ``From /job:X/...:``; Hydra's
# BAD TERMINATION block names ``RANK N PID M RUNNING AT host`` above the rank's EXIT CODE / KILLED BY SIGNAL
_TASK_HEADERS = frozenset({"tf-from-remote-task", "hydra-process-header"})


def _carry_from_task(job: JobHits) -> dict[int, str]:
    """A cause printed right after a line that heads a block about task X (:data:`_TASK_HEADERS`) happened on X."""
    out: dict[int, str] = {}
    froms = [h for h in job.hits if h.sig.name in _TASK_HEADERS and h.named]
    for c in job.hits:
        if c.sig.role != Role.CAUSE:
            continue
        for f in froms:
            if f.stream == c.stream and 0 <= c.line_no - f.line_no <= 3:
                out[id(c)] = f.named
    return out


# mpirun prints its abort notice ("Primary job terminated normally, but 1 process returned ...") and then which rank
# died and how ("mpirun noticed that process rank N ... exited on signal 9"): one event, the second line its detail
_LAUNCHER_OWN = {"mpirun-rank-died": frozenset({"mpi-job-aborted"})}


def _causes(job: JobHits) -> tuple[list[Hit], list[Hit]]:
    symptoms = job.of(role=Role.SYMPTOM)
    sym_lines = {(h.stream, h.line_no) for h in symptoms}
    by_writer: dict[tuple[str, str | None], list[int]] = {}
    for h in symptoms:
        by_writer.setdefault((h.stream, h.writer), []).append(h.line_no)
    for near in by_writer.values():
        near.sort()
    causes, demoted = [], []
    for h in job.of(role=Role.CAUSE):
        if h.sig.rank < SPECIFIC_RANK and h.sig.category in CASCADE_CATEGORIES:
            if (h.stream, h.line_no) in sym_lines and h.sig.rank < GENERIC_RANK:
                demoted.append(h)
                continue
            near = by_writer.get((h.stream, h.writer), [])
            if h.sig.name in _LAUNCHER_OWN:
                own = {g.line_no for g in symptoms if g.stream == h.stream and g.sig.name in _LAUNCHER_OWN[h.sig.name]}
                near = [n for n in near if n not in own]
            i = bisect.bisect_left(near, h.line_no - CASCADE_WINDOW)   # a symptom in the window before the line
            if i < len(near) and near[i] < h.line_no:
                demoted.append(h)
                continue
        causes.append(h)
    return causes, demoted


_KILLED_PID = re.compile(r"(?:Killed process|Kill process|reaped process) (\d+)")
_RANK_PID = re.compile(r"rank (\d+) with PID (\d+)")


_ABORT = re.compile(r"(?i)signal 6\b|\bSIGABRT\b|\(Aborted\)|Signal: Aborted")


def _allocation_failure_behind_abort(job: JobHits, root: Hit, causes: list[Hit], culprit: str | None) -> Hit:
    """A SIGABRT of a task whose allocator failed just before (``std::bad_alloc`` reaching std::terminate, which
    aborts) is that memory failure: the abort is how it ended the process."""
    if root.sig.category != Category.SEGFAULT_CORE_DUMP or not _ABORT.search(root.text) or culprit is None:
        return root
    oom = [h for h in causes if h.sig.category in (Category.OOM_HOST, Category.OOM_GPU) and task_of(h) == culprit]
    return min(oom, key=lambda h: order_key(job, h)) if oom else root


def _pid_owner(job: JobHits, root: Hit) -> str | None:
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


def _nearby_task(job: JobHits, root: Hit) -> str | None:
    """A task named by a line near the root (a scheduler's record of the same container) or by its other hits."""
    same = [h for h in job.hits if h.sig.code == root.sig.code and task_of(h)]
    if same:
        return task_of(same[0])
    return named_below(job.hits, root)


def _odd_one_out(job: JobHits, root: Hit, culprit: str | None) -> str | None:
    """For a mismatch between tasks, the culprit is the one task that differs, not the one that reported it."""
    if root.sig.category not in _MISMATCH:
        return culprit
    odd = {h.writer for h in job.of("cuda-init-failed") if h.writer}
    if len(odd) == 1:
        return next(iter(odd))
    return culprit

