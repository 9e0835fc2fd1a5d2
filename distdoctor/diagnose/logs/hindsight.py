"""Hindsight: what the rest of the logs says about a verdict's root line.

A root line can be read right and still not be the answer, because another line of the same logs says what came of
it or what produced it. Each rule here rewrites a :class:`~.conclusion.Verdict` on such a line, from how the
components that print them behave:

* **A job that its controller then recorded as succeeded** (the training operator's ``JobSucceeded`` condition):
  whatever failed before it -- a pod that waited for room (``FailedScheduling ... Insufficient``), a replica that was
  restarted -- was recovered from. The job did not fail; the line explains a delay or a restart. ``other``, the
  line as context, its own reading as the alternative.
* **A bind failure under a cluster that lists two tasks at one address**: a task that cannot bind its port
  ("Address already in use", "Could not start gRPC server") because the cluster spec gives two tasks the same
  ``host:port`` collides with its twin, not with a stranger: the cluster spec (TF_CONFIG) is the cause.
* **An abort whose reason a line states**: a process exits on SIGABRT (``exited on signal 6 (Aborted)``,
  ``terminate called ...``, a failed ``CHECK``) because something before it failed; when a line says that was a
  resource running out (``pthread_create() failed``, ``Resource temporarily unavailable``, an allocation), the
  resource is the cause and the abort only how the process ended. Likewise the C++ exception that libstdc++
  reports before it aborts (``terminate called after throwing an instance of 'T'``, then ``what(): M``): M is
  the exception's own message, so when M reads as a known line -- a peer's socket closed, a timeout waiting for a
  peer, a refused connection, a resource -- that reading is the cause, and a peer it blames is not this task.
* **A GPU lost while its task's process stays alive**: the NVIDIA driver's "GPU has fallen off the bus" (Xid 79)
  leaves the process that used it hanging inside the driver more often than dead; when no line says any task
  exited or crashed and the tasks are seen alive (a wait, their pods Running), the job is hung on that task, its
  peers waiting in a collective.
* **Horovod's stall report with ranks on both sides**: the stall inspector lists, per rank, the tensors that rank
  has not submitted while other ranks have. When two ranks each miss tensors the other submitted (disjoint lists),
  the ranks wait in different collectives: a collective mismatch ("different ranks are trying to submit different
  tensors"), not one stuck rank; the shutdown and "Horovod has been shut down" errors after it are consequences.
* **A step that srun cancelled after a task failed**: slurmstepd's ``*** STEP ... CANCELLED AT ... ***`` with no
  ``DUE TO`` reason, printed after srun reported a task's non-zero exit (or after a task called ``MPI_Abort``,
  which exits it non-zero) and terminated the step, is srun's own teardown of the other tasks, not a preemption;
  the failed task's own line is the cause.
* **A broadcast of different shapes** (Horovod's "Mismatched BROADCAST tensor shapes"): the model's variables are
  broadcast from the root rank, so the ranks built different models (arguments, sizes read from data that differs
  between nodes), rather than calling different collectives.
* **A file or module that some tasks find and others do not**: the same "not found" error on several tasks while
  other tasks of the job run is nodes set up differently (a local disk, a package on some nodes only).
* **A JSON error raised while reading the cluster**: a JSON decode error under a frame that reads TF_CONFIG is
  TF_CONFIG that is not valid JSON.

The rules run in order, each on what the one before made of the verdict; the job recorded as succeeded last.

Pure: a verdict and the hits in, a verdict (or None: the rule does not apply) out.
"""
from __future__ import annotations

import re
from dataclasses import replace

from ...model import Category as C, Status
from .clusters import defects, printed_clusters
from .conclusion import Alternative, Verdict
from .scan import Hit
from .settle import settle_for
from .signature import Role

__all__ = ["RULES", "recovered_job", "bind_failure_on_a_shared_address", "abort_with_a_stated_reason",
           "gpu_lost_while_running", "stall_report_of_different_collectives", "step_cancelled_by_srun",
           "broadcast_of_different_models", "missing_on_some_nodes", "invalid_json_in_tf_config"]


def _alt(cat: C, culprit: str | None, why: str) -> Alternative:
    return Alternative(cat, culprit, why, settle=settle_for(cat))


def _same_line(a: Hit, b: Hit) -> bool:
    return (a.stream, a.line_no) == (b.stream, b.line_no)


# -- a job its controller recorded as succeeded ----------------------------------------------------------------------

_JOB_SUCCEEDED = ("k8s-job-succeeded",)


def recovered_job(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.status not in (Status.FAILED, Status.HUNG):
        return None
    done = [h for h in hits if h.sig.name in _JOB_SUCCEEDED]
    if not done:
        return None
    why = "what the line shows, had the job not recovered from it: " + v.summary[:160]
    alts = (_alt(v.category, v.culprit, why),) + tuple(a for a in v.alternatives if a.category not in (v.category, C.OTHER))
    return replace(v, status=Status.SUCCEEDED, category=C.OTHER, confidence="medium", code=None, root=None,
                   context=(v.root,) + tuple(v.context), consequences=(), alternatives=alts[:3],
                   summary="the job's controller recorded it as succeeded (" + done[-1].text.strip()[:120] + "): what "
                           "the logs show before it was recovered from and did not fail the job: "
                           + v.root.text.strip()[:160],
                   remedy="Nothing failed. The line explains a delay or a restart the job recovered from; act on it "
                          "only if that delay matters.",
                   settle="the job's final state in its controller (`kubectl get tfjob`, the Succeeded condition)")


# -- a bind failure under a cluster that lists two tasks at one address ------------------------------------------------

_SHARED_ADDRESS = "DD307"


def bind_failure_on_a_shared_address(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.category != C.PORT_IN_USE:
        return None
    for pc in printed_clusters(hits):
        shared = [f for f in defects(pc) if f.code == _SHARED_ADDRESS]
        if not shared:
            continue
        f = shared[0]
        alts = (_alt(C.PORT_IN_USE, v.culprit, "another process on that node may hold the port as well"),)
        return replace(v, category=C.CONFIG_TF_CONFIG, confidence="medium", code=f.code, culprit=v.culprit,
                       context=pc.hits[:1] + tuple(v.context), alternatives=alts + v.alternatives[:2],
                       summary=f"the cluster printed in the log lists two tasks at one address ({f.summary}): the "
                               f"second task cannot bind the port its twin holds: {v.root.text.strip()[:160]}",
                       remedy=f.remedy or "Give every task its own host:port in TF_CONFIG (two tasks on one machine "
                                          "need two ports).",
                       settle=settle_for(C.CONFIG_TF_CONFIG))
    return None


# -- an abort whose reason a line states ---------------------------------------------------------------------------

_ABORT = re.compile(r"signal 6\b|\bSIGABRT\b|\(Aborted\)|Aborted \(core dumped\)|terminate called|Check failed", re.I)
_ABORT_SIGS = ("native-segv", "native-abort", "check-failed", "mpirun-rank-died", "srun-task-exited",
               "srun-task-exit-code")
_SHORT_OF = (C.RESOURCE_EXHAUSTION, C.OOM_HOST, C.OOM_GPU)
_REASON_RANK = 60


_TERMINATE = re.compile(r"terminate called after throwing an instance of")
_WHAT = re.compile(r"\bwhat\(\):")
_THROWN = (Role.CAUSE, Role.SYMPTOM, Role.WAIT)
_THROWN_ROOTS = _ABORT_SIGS + ("mpi-process-received-signal",)   # Open MPI's report of the signal, then libstdc++'s
_NEAR = 3   # lines from the abort's root to libstdc++'s report, and from the report to its what()


def _thrown_reason(v: Verdict, hits: list[Hit]) -> Hit | None:
    """The strongest reading of the ``what():`` line of the C++ exception whose ``terminate called after throwing``
    is (or follows within :data:`_NEAR` lines) the verdict's root line; None when there is none or it reads only as
    the abort itself."""
    root = v.root
    terms = [h for h in hits if h.stream == root.stream and 0 <= h.line_no - root.line_no <= _NEAR
             and _TERMINATE.search(h.text)]
    if not terms:
        return None
    at = min(h.line_no for h in terms)
    said = [h for h in hits if h.stream == root.stream and 0 <= h.line_no - at <= _NEAR and _WHAT.search(h.text)
            and h.sig.role in _THROWN and h.sig.category not in (C.SEGFAULT_CORE_DUMP, C.OTHER)]
    return max(said, key=lambda h: (h.sig.rank, -h.line_no)) if said else None


def abort_with_a_stated_reason(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.category not in (C.SEGFAULT_CORE_DUMP, C.PEER_CRASHED):
        return None
    thrown = _thrown_reason(v, hits) if v.category == C.SEGFAULT_CORE_DUMP and v.root.sig.name in _THROWN_ROOTS \
        else None
    if thrown is not None:
        mine = thrown.sig.role == Role.CAUSE     # a peer lost or waited for: the peer, not this task
        culprit = (v.culprit or thrown.named or thrown.writer) if mine else thrown.named
        alts = (_alt(C.SEGFAULT_CORE_DUMP, v.culprit, "the abort itself: an uncaught exception in native code "
                     "ends a process on SIGABRT whatever its message"),) + tuple(
            a for a in v.alternatives if a.category not in (thrown.sig.category, C.SEGFAULT_CORE_DUMP))
        return replace(v, category=thrown.sig.category, confidence="medium", code=thrown.sig.code, culprit=culprit,
                       root=thrown, context=(v.root,), alternatives=alts[:3],
                       summary=f"{thrown.sig.title}; the C++ exception that says so was not caught, and the process "
                               f"aborted (SIGABRT) on it: {thrown.text.strip()[:200]}",
                       remedy=thrown.sig.remedy, settle=settle_for(thrown.sig.category))
    if v.root.sig.name not in _ABORT_SIGS or not _ABORT.search(v.root.text):
        return None
    reasons = [h for h in hits if h.sig.role == Role.CAUSE and h.sig.category in _SHORT_OF
               and h.sig.rank >= _REASON_RANK and not _same_line(h, v.root)]
    if not reasons:
        return None
    why = max(reasons, key=lambda h: h.sig.rank)
    culprit = v.culprit or why.named or why.writer
    alts = (_alt(C.SEGFAULT_CORE_DUMP, culprit, "the abort itself: a failed check or an uncaught exception in native "
                 "code ends a process the same way"),) + tuple(a for a in v.alternatives
                                                                if a.category not in (why.sig.category, C.SEGFAULT_CORE_DUMP))
    return replace(v, category=why.sig.category, confidence="medium", code=why.sig.code, culprit=culprit,
                   root=why, context=(v.root,), alternatives=alts[:3],
                   summary=f"{why.sig.title}; the process then aborted (SIGABRT) on it: {why.text.strip()[:200]}",
                   remedy=why.sig.remedy, settle=settle_for(why.sig.category))


# -- a GPU lost while its task's process stays alive -----------------------------------------------------------------

_GPU_LOST = ("nvml-gpu-lost", "nvidia-xid")
_ENDED = (C.PEER_CRASHED, C.SEGFAULT_CORE_DUMP, C.OOM_HOST, C.OOM_GPU, C.PREEMPTION, C.USER_CODE_ERROR)


def gpu_lost_while_running(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.root.sig.name not in _GPU_LOST or v.category != C.OTHER:
        return None
    ended = [h for h in hits if h.sig.role in (Role.CAUSE, Role.SYMPTOM) and h.sig.category in _ENDED]
    # a hang needs positive evidence that the tasks are alive: a wait, or their pods listed Running
    alive = [h for h in hits if h.sig.role == Role.WAIT or h.sig.name == "k8s-pod-running"]
    if ended or not alive:
        return None
    alts = (_alt(C.PEER_CRASHED, v.culprit, "a process whose GPU fell off the bus may also die with it (its exit "
                 "status says)"),
            _alt(C.OTHER, v.culprit, "the hardware fault itself: the node needs draining and the GPU replacing"))
    return replace(v, status=Status.HUNG, category=C.HANG_STALLED_WORKER, confidence="medium", alternatives=alts,
                   summary=f"{v.culprit or 'a task'}'s GPU fell off the bus and no line says any task exited: its "
                           "process hangs inside the driver and its peers wait for it in a collective: "
                           + v.root.text.strip()[:160],
                   remedy="Drain the node and replace or reset the GPU (`nvidia-smi -r`, a reboot); restart the job "
                          "from its last checkpoint on healthy nodes.",
                   settle="the state of that task's process (`ps`, a stack dump) and the node's `dmesg` (Xid 79)")


# -- Horovod's stall report with ranks on both sides ------------------------------------------------------------------

_TENSORS = re.compile(r"\[(?P<body>[^\]]*)\]")


def _tensors(text: str) -> frozenset[str]:
    m = _TENSORS.search(text.split(":", 1)[-1] if "]" in text else text)
    if not m:
        return frozenset()
    return frozenset(t.strip().rstrip(".").strip() for t in m.group("body").replace(" ...", "").split(",") if t.strip())


def _reports(hits: list[Hit]) -> list[dict[str, frozenset[str]]]:
    """Each stall report's entries: rank -> the tensors it has not submitted."""
    stalls = sorted((h for h in hits if h.sig.name == "horovod-stall"), key=lambda h: (h.stream, h.line_no))
    out: dict[tuple[str, int], dict[str, frozenset[str]]] = {}
    for e in hits:
        if e.sig.name != "horovod-missing-rank-entry" or not e.named:
            continue
        heads = [s for s in stalls if s.stream == e.stream and s.line_no < e.line_no]
        if heads:
            out.setdefault((heads[-1].stream, heads[-1].line_no), {})[e.named] = _tensors(e.text)
    return list(out.values())


def stall_report_of_different_collectives(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is not None and v.root.sig.role == Role.CAUSE and v.root.sig.rank >= 70:
        return None
    if v.category == C.HANG_COLLECTIVE_MISMATCH:
        return None
    for report in _reports(hits):
        ranks = sorted(report)
        split = [(a, b) for i, a in enumerate(ranks) for b in ranks[i + 1:]
                 if report[a] and report[b] and not (report[a] & report[b])]
        if not split:
            continue
        stall = [h for h in hits if h.sig.name == "horovod-stall"][0]
        a, b = split[0]
        alts = (_alt(C.HANG_STALLED_WORKER, None, "a rank stuck before a collective is also listed as missing it"),
                _alt(C.CONFIG_MISMATCH_ACROSS_WORKERS, None, "ranks that run different code or arguments submit "
                     "different collectives too"))
        cons = ((v.root,) if v.root is not None else ()) + tuple(v.consequences)
        return replace(v, status=Status.HUNG, category=C.HANG_COLLECTIVE_MISMATCH, culprit=None,
                       candidates=tuple(ranks), confidence="medium", code=stall.sig.code, root=stall,
                       consequences=cons[:6], context=(), alternatives=alts,
                       summary=f"Horovod's stall report lists ranks on both sides: {a} has not submitted "
                               f"{', '.join(sorted(report[a]))[:80]} while {b} has not submitted "
                               f"{', '.join(sorted(report[b]))[:80]}: the ranks wait in different collectives",
                       remedy="Make every rank submit the same collectives in the same order: a collective inside a "
                              "branch that only some ranks take (a metric, a callback, an if on the rank or on local "
                              "data) deadlocks; move it out of the branch or make the branch the same on every rank.",
                       settle=settle_for(C.HANG_COLLECTIVE_MISMATCH))
    return None


# -- a step that srun cancelled after a task failed ---------------------------------------------------------------------

_NO_REASON_CANCEL = re.compile(r"CANCELLED AT (?!.*DUE TO)")
_EXITED_NON_ZERO = re.compile(r"Exited with exit code [1-9]\d*")
_TEARDOWN = ("slurm-preemption", "srun-task-exited", "srun-task-exit-code", "slurm-terminating-step")
# a task that called MPI_Abort exits non-zero, and srun then ends the step: MPICH / Intel MPI's "Abort(N) on node R",
# Open MPI's "MPI_ABORT was invoked on rank R"
_ABORTED = ("mpich-abort-on-node", "mpi-job-aborted")


def step_cancelled_by_srun(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.root.sig.name != "slurm-preemption" or not _NO_REASON_CANCEL.search(v.root.text):
        return None
    exits = [h for h in hits if (h.sig.name == "srun-task-exit-code" and _EXITED_NON_ZERO.search(h.text)
                                 or h.sig.name in _ABORTED) and h.stream == v.root.stream
             and h.line_no < v.root.line_no]
    if not exits:
        return None
    own = [h for h in hits if h.sig.role == Role.CAUSE and h.sig.name not in _TEARDOWN
           and (h.stream != v.root.stream or h.line_no < v.root.line_no)]   # (an abort's error stack follows it)
    root = max(own, key=lambda h: (h.sig.rank, -h.line_no)) if own else exits[0]
    culprit = root.named or root.writer or exits[0].named
    alts = (_alt(C.PREEMPTION, None, "a step cancelled with no reason given may also have been cancelled by a person "
                 "or the scheduler"),) + tuple(a for a in v.alternatives if a.category not in (root.sig.category,
                                                                                              C.PREEMPTION))
    return replace(v, category=root.sig.category, culprit=culprit, confidence="medium" if own else "low",
                   code=root.sig.code, root=root, context=(exits[0],), consequences=(v.root,) + tuple(v.consequences[:4]),
                   alternatives=alts[:3],
                   summary=f"srun ended the step because a task exited with an error ({exits[0].text.strip()[:80]}); "
                           f"the step's cancellation is srun's teardown of the others: {root.sig.title}: "
                           f"{root.text.strip()[:160]}",
                   remedy=root.sig.remedy, settle=settle_for(root.sig.category))


# -- a broadcast of differently built models ------------------------------------------------------------------------

_BROADCAST_SHAPES = re.compile(r"(?i)Mismatched BROADCAST tensor shapes")


def broadcast_of_different_models(v: Verdict, hits: list[Hit]) -> Verdict | None:
    """Horovod broadcasts the model's state from the root rank (``broadcast_variables``, the initial-state callback):
    the same variables on every rank. A broadcast whose shapes differ between ranks says the ranks built different
    models -- different arguments, or a size read from data that differs between nodes (a vocabulary, a label file)
    -- not that they called different collectives."""
    if v.root is None or v.category != C.HANG_COLLECTIVE_MISMATCH or not _BROADCAST_SHAPES.search(v.root.text):
        return None
    alts = (_alt(C.HANG_COLLECTIVE_MISMATCH, v.culprit, "a broadcast of a tensor whose shape the code computes "
                 "per rank (not a model variable) mismatches the same way"),) + tuple(
        a for a in v.alternatives if a.category not in (C.HANG_COLLECTIVE_MISMATCH, C.CONFIG_MISMATCH_ACROSS_WORKERS))
    return replace(v, category=C.CONFIG_MISMATCH_ACROSS_WORKERS, confidence="medium", alternatives=alts[:3],
                   summary="the ranks built models of different shapes (Horovod's broadcast of the model's variables "
                           "found them different): they run with different arguments or read different data: "
                           + v.root.text.strip()[:200],
                   remedy="Build the same model on every rank: the same arguments, and any size read from data "
                          "(vocabulary, label count) from the same files on every node.",
                   settle=settle_for(C.CONFIG_MISMATCH_ACROSS_WORKERS))


# -- a file or module that some tasks find and others do not ----------------------------------------------------------

_NOT_FOUND = ("tf-not-found-path", "python-import")
_TASK = re.compile(r"^(?:rank|worker|chief|ps|evaluator|master):\d+$")


def _message(text: str) -> str:
    m = re.search(r"(\w+(?:Error|Exception): .*)$", text)
    return (m.group(1) if m else text).strip()


def missing_on_some_nodes(v: Verdict, hits: list[Hit]) -> Verdict | None:
    """The same "not found" error (a file, a module, a shared library) raised by several tasks of a job while other
    tasks of the same job show no such error: the path exists where those others run and not where these do -- the
    nodes are set up differently (a local disk instead of a shared one, a package installed on some nodes only)."""
    if v.root is None or v.root.sig.name not in _NOT_FOUND:
        return None
    msg = _message(v.root.text)
    same = [h for h in hits if h.sig.name == v.root.sig.name and _message(h.text) == msg]
    failing = {h.writer for h in same if h.writer and _TASK.match(h.writer)}
    if len(failing) < 2:
        return None
    others = {t for h in hits for t in (h.writer, h.named) if t and _TASK.match(t)} - failing
    if not others:
        return None
    ordered = tuple(sorted(failing, key=lambda t: (t.split(":")[0], int(t.split(":")[1]))))
    alts = (_alt(v.category, v.culprit, v.summary[:160]),) + tuple(
        a for a in v.alternatives if a.category not in (v.category, C.CONFIG_MISMATCH_ACROSS_WORKERS))
    return replace(v, category=C.CONFIG_MISMATCH_ACROSS_WORKERS, confidence="medium", culprit=ordered[0],
                   candidates=ordered, alternatives=alts[:3],
                   summary=f"{', '.join(ordered[:8])} cannot find what the other tasks of the job "
                           f"({', '.join(sorted(others)[:4])}) do: those nodes are set up differently: {msg[:160]}",
                   remedy="Make every node the same: the data on a file system every node mounts (or copied to each), "
                          "the same environment and packages on every node (one image, one module set).",
                   settle=settle_for(C.CONFIG_MISMATCH_ACROSS_WORKERS))


# -- a JSON error raised while reading the cluster ----------------------------------------------------------------------

_JSON_ERROR = re.compile(r"JSONDecodeError|Expecting (?:property name|value|',' delimiter|':' delimiter)|"
                         r"Extra data: line \d+|Unterminated string starting at|Invalid control character at")
_CLUSTER_FRAMES = ("python-cluster-config-frame", "python-tf-config-frame")


def invalid_json_in_tf_config(v: Verdict, hits: list[Hit]) -> Verdict | None:
    """A JSON decode error whose traceback passes through a frame that reads the cluster (TensorFlow's TF_CONFIG
    resolver, a script's ``json.loads(os.environ['TF_CONFIG'])``): the JSON that failed to parse is TF_CONFIG --
    single quotes (a Python dict's ``str``), a shell that ate the quotes, a value cut short."""
    if v.root is None or v.category == C.CONFIG_TF_CONFIG or not _JSON_ERROR.search(v.root.text):
        return None
    heads = [h.line_no for h in hits if h.sig.name == "python-traceback" and h.stream == v.root.stream
             and h.line_no < v.root.line_no]
    start = max(heads, default=0)
    frames = [h for h in hits if h.sig.name in _CLUSTER_FRAMES and h.stream == v.root.stream
              and start < h.line_no < v.root.line_no]
    if not frames:
        return None
    alts = (_alt(v.category, v.culprit, v.summary[:160]),) + tuple(
        a for a in v.alternatives if a.category not in (v.category, C.CONFIG_TF_CONFIG))
    return replace(v, category=C.CONFIG_TF_CONFIG, confidence="medium", context=(frames[-1],) + tuple(v.context),
                   alternatives=alts[:3],
                   summary="TF_CONFIG is not valid JSON (the error was raised while the task read its cluster): "
                           + v.root.text.strip()[:200],
                   remedy="Set TF_CONFIG to valid JSON (double quotes: json.dumps, not str() of a dict; quote it whole "
                          "in the shell); `distdoctor check --static` validates it.",
                   settle="the TF_CONFIG value the task was started with (`echo \"$TF_CONFIG\"` in its environment)")


# applied in order, each to what the one before made of the verdict; a job recorded as succeeded is judged last
RULES = (step_cancelled_by_srun, bind_failure_on_a_shared_address, abort_with_a_stated_reason, gpu_lost_while_running,
         stall_report_of_different_collectives, broadcast_of_different_models, missing_on_some_nodes, invalid_json_in_tf_config, recovered_job)
