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
  resource is the cause and the abort only how the process ended.
* **A GPU lost while its task's process stays alive**: the NVIDIA driver's "GPU has fallen off the bus" (Xid 79)
  leaves the process that used it hanging inside the driver more often than dead; when no line says any task
  exited or crashed, the job is hung on that task, its peers waiting in a collective.
* **Horovod's stall report with ranks on both sides**: the stall inspector lists, per rank, the tensors that rank
  has not submitted while other ranks have. When two ranks each miss tensors the other submitted (disjoint lists),
  the ranks wait in different collectives: a collective mismatch ("different ranks are trying to submit different
  tensors"), not one stuck rank; the shutdown and "Horovod has been shut down" errors after it are consequences.
* **A step that srun cancelled after a task failed**: slurmstepd's ``*** STEP ... CANCELLED AT ... ***`` with no
  ``DUE TO`` reason, printed after srun reported a task's non-zero exit and terminated the step, is srun's own
  teardown of the other tasks, not a preemption; the failed task's own line is the cause.

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
           "gpu_lost_while_running", "stall_report_of_different_collectives", "step_cancelled_by_srun"]


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
_ABORT_SIGS = ("native-segv", "native-abort", "check-failed", "mpirun-rank-died", "srun-task-exited")
_SHORT_OF = (C.RESOURCE_EXHAUSTION, C.OOM_HOST, C.OOM_GPU)
_REASON_RANK = 60


def abort_with_a_stated_reason(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.category not in (C.SEGFAULT_CORE_DUMP, C.PEER_CRASHED):
        return None
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
    if ended:
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
_TEARDOWN = ("slurm-preemption", "srun-task-exited", "slurm-terminating-step")


def step_cancelled_by_srun(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.root.sig.name != "slurm-preemption" or not _NO_REASON_CANCEL.search(v.root.text):
        return None
    exits = [h for h in hits if h.sig.name == "srun-task-exited" and _EXITED_NON_ZERO.search(h.text)
             and h.stream == v.root.stream and h.line_no < v.root.line_no]
    if not exits:
        return None
    own = [h for h in hits if h.sig.role == Role.CAUSE and h.sig.name not in _TEARDOWN
           and h.sig.category != C.OTHER and h.line_no < exits[0].line_no]
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


RULES = (recovered_job, bind_failure_on_a_shared_address, abort_with_a_stated_reason, gpu_lost_while_running,
         stall_report_of_different_collectives, step_cancelled_by_srun)
