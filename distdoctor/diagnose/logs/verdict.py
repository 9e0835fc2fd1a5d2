"""Turn the signature reasoning's :class:`~.reason.Verdict` into the shared :class:`~distdoctor.model.Diagnosis`,
and decide between it and the structural log rules (step counts, exits, silences).

The structural rules (``diagnose.rules``/``log_rules``) know things a line cannot say -- which task stopped
progressing first, who ran fewer steps -- but need to know which task wrote each log. The signature reasoning
reads any fragment. Policy: a specific cause line (rank >= ``SPECIFIC_RANK``) wins; otherwise a structural
finding wins, except "the logs simply stop" (DD150) and "unattributed" (DD100), which only stand when the lines
show nothing better -- a fragment that merely ends is not a hang.
"""
from __future__ import annotations

from dataclasses import replace

from ...catalogue import RuleList
from ...model import Alternative, Category, Diagnosis, Evidence, Finding, Severity, Status
from .conclusion import Verdict
from .formats import clip
from .settle import settle_for
from . import safetynet  # noqa: F401  (registers DD160, the safety net's rule, beside DD890)
from .scan import Hit
from .signature import Role

__all__ = ["decide", "combine", "finding_of", "NO_EVIDENCE", "GENERIC_RUN_CODES", "SPECIFIC_RANK", "names_a_cause"]

RULES = RuleList()
NO_EVIDENCE = RULES.add(
    code="DD890", name="no-failure-evidence", category=Category.OTHER,
    title="No line in the logs is evidence of a failure",
    detects="Logs whose lines show no failure (only harmless or informational lines), or no end.",
    why="Inventing a cause from a log that shows none sends people to the wrong place; saying which log would settle "
        "it is more useful.",
    evidence="Every signature hit, none of them a cause, symptom or wait.",
    remedy="Collect the evidence that is missing: every task's full log, each node's `dmesg`, and the scheduler's "
           "record (`kubectl describe pod`, `sacct`).")
_WEAK_STRUCTURAL = ("DD150", "DD100")
# rules that read what distdoctor itself saw in a task's process and noted in its log (the TF_CONFIG the process
# held, DD154): the peers' lines are its consequences (a port in use, a wait), never a rival cause
_WITNESSED = ("DD154",)
SPECIFIC_RANK = 70


def _ev(h: Hit, role: str) -> Evidence:
    return Evidence(task=h.writer, ts=h.ts, text=h.text, role=role, where=f"{h.stream}:{h.line_no}")


def finding_of(v: Verdict) -> Finding:
    evidence = []
    if v.root is not None:
        evidence.append(_ev(v.root, "cause"))
    evidence += [_ev(h, "context") for h in v.context]
    evidence += [_ev(h, "consequence") for h in v.consequences]
    summary = v.summary
    return Finding(code=v.code or NO_EVIDENCE.code, category=v.category,
                   severity=Severity.ERROR if v.status in (Status.FAILED, Status.HUNG)
                   or (v.root is not None and v.category != Category.OTHER) else Severity.INFO,
                   culprit=v.culprit, summary=summary, evidence=tuple(evidence), remedy=v.remedy,
                   at=v.root.ts if v.root is not None else None, candidates=v.candidates,
                   confidence=v.confidence,
                   alternatives=tuple(a if a.settle else replace(a, settle=settle_for(a.category))
                                      for a in v.alternatives))


def _ranked_alternatives(root: Finding | None, v: Verdict) -> Finding | None:
    """A structural root cause gets the lines' own reading as its first alternative when it differs, with what settles
    it (the learned reading ranks the others: :func:`.learned.with_learned_reading`)."""
    if root is None or root.alternatives:
        return root
    alts: list[Alternative] = []
    seen = {root.category}
    if v.root is not None and v.category not in seen:
        seen.add(v.category)
        alts.append(Alternative(v.category, v.culprit, "what the lines themselves say: " + clip(v.summary, 400),
                                v.settle or settle_for(v.category)))
    return replace(root, alternatives=tuple(alts))


def _task_names(f: Finding, structural: Diagnosis) -> Finding:
    """A launcher's ``task N`` (srun, mpirun: ``rank:N``) is ``worker:N`` in a job whose logs are named by TF task."""
    tasks = set(structural.tasks)
    if f.culprit and f.culprit.startswith("rank:") and f.culprit not in tasks:
        as_worker = "worker:" + f.culprit.split(":", 1)[1]
        if as_worker in tasks and not any(t.startswith("rank:") for t in tasks):
            return replace(f, culprit=as_worker)
    return f


def _specific(v: Verdict) -> bool:
    return v.root is not None and v.root.sig.role == Role.CAUSE and v.root.sig.rank >= SPECIFIC_RANK


_GENERIC_EXCEPTION = "DD104"    # the structural rule that knows only that a task raised an exception


_MESSAGE_LINES = 4   # how far under an exception's line its message may go on (a blank line, a second sentence)


def _quotes_the_line(root: Finding, v: Verdict) -> bool:
    """The structural rule read the very line the signature reading stands on (it quotes it) and placed it with what
    no single line shows -- steps each task ran, the shapes each offered: the signature's culprit is only that line's
    writer, which of two tasks printed first, so the structural reading is richer. (A collective's shape mismatch
    is printed by both ends; which end's line comes first in the logs is the order the supervisor read them.)"""
    if v.root is None:
        return False
    line = v.root.text.strip()[:200]
    return bool(line) and any(e.task == v.root.writer and e.text.strip()[:200] == line for e in root.evidence)


def _reads_the_exception(root: Finding, v: Verdict, hits=()) -> bool:
    """The structural rules saw only that a task raised; a cause signature on the exception's own line says what the
    exception means (a GPU out of memory in disguise, a version skew), so its category stands. The verdict's line may
    be the exception's own, or -- when a cause signature reads the exception's own line too (``hits``: it means more
    than "the code raised") -- a line of its message a few lines under it (loky's "exit codes ... SIGKILL" below its
    TerminatedWorkerError) that says more. A wait read on the exception's own line is what the exception means too:
    a ``RuntimeError: Timed out initializing process group ...`` is the peers that never came, not the code's bug."""
    if root.code != _GENERIC_EXCEPTION or v.root is None:
        return False
    wait = v.root.sig.role == Role.WAIT and v.root.sig.rank >= 40
    if not wait and (v.root.sig.role != Role.CAUSE or v.root.sig.rank < 45):
        return False
    if v.category == root.category:
        return False
    line = v.root.text.strip()
    own = [e.text.strip() for e in root.evidence if e.text and e.task == v.root.writer]
    # the cause line itself, or -- the signature matched the traceback's ``raise X("...")`` source line -- the
    # exception's own line, which the same signature matches
    if any(e.text and (e.text.strip() == line or (e.task == v.root.writer and v.root.sig.match(e.text)))
           for e in root.evidence):
        return True
    if wait:
        return False
    return any(h.writer == v.root.writer and h.stream == v.root.stream and names_a_cause(h.sig)
               and 0 < v.root.line_no - h.line_no <= _MESSAGE_LINES and any(o.startswith(h.text.strip()) for o in own)
               for h in hits)


# The structural readings that know only that a task was lost or failed, not why: an exit with no exception (DD106),
# peers that report a task lost (DD107, DD156), NCCL or CUDA said "error" (DD111), a task crashed in native code
# (DD102: the signal, not what raised it -- a SIGBUS on a /dev/shm page without backing, an illegal instruction of a
# build for another CPU).
_LOST_OR_UNEXPLAINED = ("DD102", "DD106", "DD107", "DD111", "DD156")


def _names_the_loss(root: Finding, v: Verdict) -> bool:
    """The structural rules saw a task fail or its peers lose it; the task's own line names a specific cause (a
    library of another version, say): that cause is why it was lost, so its category stands -- as ``run`` reads the
    same task (:func:`_refine_run`)."""
    return (root.code in _LOST_OR_UNEXPLAINED and root.culprit is not None and _specific(v)
            and v.category != root.category and v.culprit == root.culprit and v.root.writer == root.culprit)


def _with_cause_line(root: Finding | None, v: Verdict, structural: Diagnosis) -> Finding | None:
    """The structural root keeps its reading, but when the lines' own cause was written by the same culprit (a shell's
    "Killed" at the end of that task's log, say) and the root does not quote it, quote it first."""
    if root is None or root.culprit is None or v.root is None or v.root.sig.role != Role.CAUSE:
        return root
    writer = v.root.writer
    if writer and writer.startswith("rank:") and writer not in structural.tasks:   # srun's task N is worker:N
        writer = "worker:" + writer.split(":", 1)[1]
    if writer != root.culprit or v.culprit is None or _task_names(finding_of(v), structural).culprit != root.culprit:
        return root
    if any(e.text == v.root.text or e.text.startswith(v.root.text.rstrip()) for e in root.evidence):
        return root    # quoted already (the parser's event holds the whole message the line begins)
    return replace(root, evidence=(replace(_ev(v.root, "cause"), task=writer),) + tuple(root.evidence))


def _device_of_the_oom(root: Finding | None, v: Verdict) -> Finding | None:
    """The structural rule tells host from GPU memory by the word GPU in the allocation error; when the lines of the
    same task say the GPU's allocator ran out (a GPU_0_bfc or CUDA out-of-memory line), the device is the GPU."""
    if root is None or root.category != Category.OOM_HOST or root.code != "DD105" or v.category != Category.OOM_GPU \
            or not _specific(v) or v.culprit != root.culprit:
        return root
    return replace(root, category=Category.OOM_GPU, summary=root.summary.replace("host memory", "GPU memory"))


def _abort_after_allocation_failure(root: Finding | None, v: Verdict) -> bool:
    """A task that died of SIGABRT right after its allocator failed (``std::bad_alloc`` through std::terminate, an
    out-of-memory abort) ran out of memory: the signal is how the allocation failure ended the process."""
    return (root is not None and root.category == Category.SEGFAULT_CORE_DUMP and v.root is not None
            and v.root.sig.role == Role.CAUSE and v.category in (Category.OOM_HOST, Category.OOM_GPU)
            and _specific(v) and v.culprit is not None and v.culprit == root.culprit)


def _oom_victim(v: Verdict, root: Finding | None) -> bool:
    """A kernel OOM-kill record no task wrote (a ``dmesg`` excerpt beside the logs, a node's journal) and a task
    whose peers lost it while its own log ends without an error: the OOM killer's SIGKILL is silent in its victim's
    log, so that task is the victim."""
    return (_specific(v) and v.category == Category.OOM_HOST and v.culprit is None and root is not None
            and root.category == Category.PEER_CRASHED and root.culprit is not None)


def _attribute_oom(f: Finding, structural: Diagnosis, *, detected_at: float, notes: tuple[str, ...]) -> Diagnosis:
    root = structural.root_cause
    assert root is not None and root.culprit is not None
    seen = {e.text for e in root.evidence}
    evidence = f.evidence[:1] + tuple(root.evidence) + tuple(e for e in f.evidence[1:] if e.text not in seen)
    f = replace(f, culprit=root.culprit, candidates=(), evidence=evidence[:10], confidence="medium",
                summary=f"{root.culprit} was killed by the kernel's OOM killer: the kernel's log records an OOM kill, "
                        f"and {root.culprit} is the task its peers lost while its own log ends without an error")
    findings = (f,) + tuple(x for x in structural.findings if x is not root)
    return Diagnosis(status=Status.FAILED, root_cause=f, findings=findings, detected_at=detected_at,
                     tasks=structural.tasks, command="diagnose",
                     notes=tuple(structural.notes) + tuple(n for n in notes if n not in structural.notes))


def _own_failure_of_a_task_that_did_not_train(v: Verdict, structural: Diagnosis,
                                              ran_to_end: frozenset[str] = frozenset()) -> bool:
    """The structural rules call a job finished when every task that showed training finished; a task that never
    showed a step (it died at start-up) and whose own log ends in its failure was not part of that reading. (A
    custom loop shows no steps either, but its log that ends in its last epoch's results ran to its end: a line
    before them did not stop it.)"""
    if v.status != Status.FAILED or v.root is None or not v.culprit or v.root.writer != v.culprit \
            or v.culprit in ran_to_end:
        return False
    report = structural.tasks.get(v.culprit)
    return report is not None and report.steps is None and v.root.sig.role in (Role.CAUSE, Role.CONTEXT)


def _teardown_seen(v: Verdict, structural: Diagnosis | None) -> str | None:
    """Every task's log ends in success (the structural reading: the reporting task's own steps, or its lost-peer
    lines set aside as the shutdown race), and the lines' only reading is a symptom that a task printed after its own
    last step, naming a peer that finished its training too: the peer finished first and left, and the task still
    shutting down saw it go. TensorFlow's coordination service calls that departure a crash ("The following tasks
    are unhealthy (stopped sending heartbeats) ... The tasks have crashed", tensorflow/tensorflow#58434; seen here
    with TF 2.21 after a chief's long epoch-end work and at a healthy mpirun job's end). What it says, or None where
    the reading is anything else."""
    if structural is None or structural.status != Status.SUCCEEDED or structural.root_cause is not None:
        return None
    h = v.root
    if h is None or h.sig.role != Role.SYMPTOM or not v.culprit or not h.writer or h.writer == v.culprit:
        return None
    named, writer = structural.tasks.get(v.culprit), structural.tasks.get(h.writer)
    if named is None or writer is None or (None not in (h.ts, writer.last_progress_at)
                                           and h.ts < writer.last_progress_at):
        return None
    if any(t.startswith("ps:") for t in structural.tasks) or named.stopped_at_end or named.exit_code not in (None, 0):
        # ParameterServerStrategy: its coordinator goes on without a lost worker, and its servers are stopped at the
        # end; a task that failed is no teardown
        return None
    return (f"{h.writer} reported {v.culprit} as failed after both had finished training ({h.sig.title.lower()}): "
            f"{v.culprit} finished first and left, and {h.writer}, still shutting down, saw it go. This is the "
            "job's teardown, not a failure (TensorFlow's coordination service reports a task that exits before its "
            "peers as crashed: tensorflow/tensorflow#58434)")


def _recorded_success(structural: Diagnosis) -> bool:
    """A run bundle's records say the job succeeded: its exit codes are on the tasks only then (logs alone record
    none; see ``bundlefacts.apply_recorded``): every task exited 0, or the ParameterServerStrategy coordinator did."""
    tasks = structural.tasks
    if not tasks or any(r.exit_code is None for r in tasks.values()):
        return False
    chief = tasks.get("chief:0")
    return all(r.exit_code == 0 for r in tasks.values()) or (chief is not None and chief.exit_code == 0)


def combine(v: Verdict, structural: Diagnosis | None, *, detected_at: float, notes: tuple[str, ...] = (),
            hits=(), ran_to_end: frozenset[str] = frozenset()) -> Diagnosis:
    """One diagnosis from the signature verdict and the structural rules' diagnosis (None when they could not run)."""
    sig_finding = finding_of(v)
    if structural is not None and _oom_victim(v, structural.root_cause):
        return _attribute_oom(sig_finding, structural, detected_at=detected_at, notes=notes)
    teardown = _teardown_seen(v, structural)
    if teardown is not None:
        # a finished task's departure, not a failure: no record would settle anything
        sig_finding = replace(sig_finding, severity=Severity.INFO, summary=teardown, remedy="")
    elif v.settle:
        notes = tuple(notes) + (f"what would settle it: {v.settle}",)
    if structural is not None:
        root = structural.root_cause
        keep_structural = False
        if root is not None and root.code in _WITNESSED:
            keep_structural = True   # distdoctor saw it in the process itself: no line of a peer outweighs it
        elif root is not None and root.code not in _WEAK_STRUCTURAL:
            # the structural rules also saw steps and exits: when they agree on the task, their reading is richer
            keep_structural = (not _specific(v) or (root.culprit is not None and root.culprit == v.culprit)
                               or _quotes_the_line(root, v))
            if keep_structural and (_reads_the_exception(root, v, hits) or _names_the_loss(root, v)):
                keep_structural = False
        elif root is not None:   # DD150/DD100: only when the lines show nothing better (the safety net's reading of
            # a line no signature knows is not better than a task seen to stop)
            keep_structural = v.root is None or v.status == Status.UNKNOWN or v.code == safetynet.SAFETY_NET.code
        elif structural.status == Status.SUCCEEDED:   # every trainer's log ends in success: only a specific cause
            # overturns it, or a task that never showed training and whose own log ends in its failure; never where
            # the run recorded every task's exit 0 (a line cannot undo an exit status)
            keep_structural = _recorded_success(structural) or (
                (v.status not in (Status.FAILED, Status.HUNG) or not _specific(v))
                and not _own_failure_of_a_task_that_did_not_train(v, structural, ran_to_end))
        if keep_structural and _abort_after_allocation_failure(root, v):
            keep_structural = False
        if keep_structural:
            root = _with_cause_line(root, v, structural)
            root = _device_of_the_oom(root, v)
            root = _ranked_alternatives(root, v)
            if root is not None and root.confidence is None:
                conf = "low" if root.code in _WEAK_STRUCTURAL else (
                    v.confidence if v.root is not None and v.category == root.category else "medium")
                if conf == "low" and root.code not in _WEAK_STRUCTURAL and v.root is not None \
                        and (v.category, v.culprit) == (root.category, root.culprit):
                    conf = "medium"   # two readings (the lines, the steps and exits) agree on cause and task
                root = replace(root, confidence=conf)
            if root is None and sig_finding.severity == Severity.ERROR:
                # the job succeeded (every task's log ends in success): what the lines show did not fail it
                sig_finding = replace(sig_finding, severity=Severity.WARNING)
            findings = tuple(structural.findings) + ((sig_finding,) if v.root is not None else ())
            return replace(structural, root_cause=root, findings=findings,
                           notes=tuple(structural.notes) + tuple(n for n in notes if n not in structural.notes))
        sig_finding = _task_names(sig_finding, structural)
        findings = (sig_finding,) + tuple(f for f in structural.findings if f is not structural.root_cause)
        status = v.status
        return Diagnosis(status=status, root_cause=sig_finding, findings=findings, detected_at=detected_at,
                         tasks=structural.tasks, command="diagnose",
                         notes=tuple(structural.notes) + tuple(n for n in notes if n not in structural.notes))
    return Diagnosis(status=v.status, root_cause=sig_finding, findings=(sig_finding,), detected_at=detected_at,
                     tasks={}, command="diagnose", notes=tuple(notes))


# -- run: its own reading (exits, signals, cgroup, stacks) refined by what its tasks printed -----------------------

# The run's readings that know only *that* a task failed, not why: tasks failed and nothing named a cause (DD100), a
# task raised some exception (DD104), a task exited non-zero with no exception or signal (DD106), NCCL or CUDA said
# "error" (DD111). A line that names the cause on that task says more; any other reading is process evidence.
GENERIC_RUN_CODES = ("DD100", "DD104", "DD106", "DD111")
EXCEPTION_MEANING_RANK = 45
_GENERIC_CATEGORIES = frozenset({Category.USER_CODE_ERROR, Category.OTHER})


def names_a_cause(sig) -> bool:
    """A signature that names a cause beyond "the code raised" or "it failed": what an exception or an exit means
    (a library of another version, memory of the GPU) reads from rank 45. ``run`` recognises such a line live and
    its verdict takes it over a generic reading."""
    return sig.role == Role.CAUSE and sig.rank >= EXCEPTION_MEANING_RANK and sig.category not in _GENERIC_CATEGORIES


def _of_hit(h: Hit) -> Verdict:
    """A verdict of one recognised line (its signature's own reading, on the task that wrote it)."""
    where = f" on {h.writer}" if h.writer else ""
    return Verdict(status=Status.FAILED, category=h.sig.category, culprit=h.writer, confidence="medium",
                   code=h.sig.code, summary=f"{h.sig.title}{where}: {h.text.strip()[:300]}", remedy=h.sig.remedy, root=h)


def _takes_over(root: Finding, v: Verdict) -> bool:
    """Whether the signature reading ``v`` names the cause of the run's generic ``root`` on the same task."""
    if v.root is None or v.status not in (Status.FAILED, Status.HUNG) or v.category == root.category:
        return False
    # an exception's or an exit's own meaning (a GPU out of memory in disguise, a library of another version)
    # reads from rank 45, as `diagnose` reads it; a failure nobody could place needs a specific cause
    if not (names_a_cause(v.root.sig) if root.code != "DD100" else _specific(v)):
        return False
    culprit = v.culprit or v.root.writer
    return root.culprit is None or culprit == root.culprit


def _recognised_on(root: Finding, hits) -> Verdict | None:
    """The strongest line recognised as a cause on the run's culprit (the first of them at equal rank): what the
    live reader told the person watching, when the reasoning over every line chose another reading."""
    mine = [h for h in hits if names_a_cause(h.sig) and h.writer is not None
            and (root.culprit is None or h.writer == root.culprit)]
    if root.culprit is None and len({h.writer for h in mine}) != 1:
        return None       # a failure nobody could place is placed only by one task's own line
    if not mine:
        return None
    return _of_hit(min(mine, key=lambda h: (-h.sig.rank, h.ts if h.ts is not None else float("inf"), h.line_no)))


def _refine_run(diag: Diagnosis, v: Verdict, hits=()) -> Diagnosis:
    """``run`` knows what no log says; when its reading is only generic and the signature reading of the same tasks'
    output names a specific cause on the same task -- the reasoning's verdict, else a line recognised as a cause on
    that task (``hits``: every hit of the reading) -- the signature's reading is the root cause, the run's its
    alternative. Process evidence is never overruled: any other root cause of the run stands."""
    root = diag.root_cause
    if root is None:
        teardown = _teardown_seen(v, diag)
        if teardown is None:
            return diag
        # a finished peer reported as crashed by the task still shutting down: said, as info (the run's own verdict,
        # succeeded, stands; what the person watching saw printed is explained)
        said = replace(finding_of(v), severity=Severity.INFO, summary=teardown, remedy="")
        return replace(diag, findings=tuple(diag.findings) + (said,))
    if root.code not in GENERIC_RUN_CODES:
        return diag
    if not _takes_over(root, v):
        v = _recognised_on(root, hits)
        if v is None or not _takes_over(root, v):
            return diag
    culprit = v.culprit or v.root.writer
    f = _whole_message(finding_of(v), v, root)
    alt = Alternative(root.category, root.culprit, f"the run's own reading: {clip(root.summary, 400)}",
                      "the task's traceback and exit status in the bundle")
    f = replace(f, culprit=culprit or root.culprit, at=root.at if root.at is not None else f.at,
                evidence=tuple(f.evidence) + tuple(e for e in root.evidence if e not in f.evidence)[:4],
                alternatives=(alt,) + tuple(a for a in f.alternatives if a.category != root.category)[:2],
                summary=f"{f.summary} (knowledge base: {v.code})")
    return replace(diag, root_cause=f, findings=(f,) + tuple(diag.findings))


def _whole_message(f: Finding, v: Verdict, root: Finding) -> Finding:
    """The signature matched the first line of an exception whose message goes on (``(PerReplica:{`` ...); the run's
    own evidence holds the whole message: the summary says it, and the line is not quoted twice."""
    line = v.root.text.strip() if v.root is not None else ""
    whole = next((e.text for e in root.evidence if line and e.text != line and e.text.startswith(line)), None)
    if whole is None:
        return f
    return replace(f, summary=f.summary.replace(line, clip(whole, 1000), 1),
                   evidence=tuple(e for e in f.evidence if e.text.strip() != line))


def decide(v: Verdict, structural: Diagnosis | None, *, source: str, detected_at: float,
           notes: tuple[str, ...] = (), hits=(), ran_to_end: frozenset[str] = frozenset()) -> Diagnosis:
    """The one step that chooses a job's root cause between its two readings: ``v``, the signature reading of what
    its tasks printed (:func:`.reason.reason`), and ``structural``, the rule engine's reading of exits, steps and
    silences (:func:`distdoctor.diagnose.engine.diagnose`, None when it could not run).

    ``source`` says where the structural reading came from, and so how much it knows: ``"diagnose"`` -- the same
    logs, read for steps and exits (:func:`combine`: the richer reading wins where both name the task, a specific
    cause line overrules a generic one); ``"run"`` -- the processes themselves, which no line can contradict
    (:func:`_refine_run`: only a generic reading is replaced, by the verdict or by a line of ``hits`` -- the
    reading's hits -- recognised as a cause on the same task). ``ran_to_end``: the tasks whose logs end their run
    (``JobObservation.ran_to_end``)."""
    if source == "run":
        if structural is None:
            raise ValueError("run's reading is the processes' own: it is never missing")
        return _refine_run(structural, v, hits)
    if source != "diagnose":
        raise ValueError(f"unknown source {source!r}")
    return combine(v, structural, detected_at=detected_at, notes=notes, hits=hits, ran_to_end=ran_to_end)
