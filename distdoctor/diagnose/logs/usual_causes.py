"""The usual causes of what a log shows when it does not show the cause itself.

Two kinds of verdict rest on no line from the failure's own source, and their alternatives are the causes known to
produce what the log does show, each with what would settle it (:mod:`.settle`) -- not the categories the words of
healthy lines happen to resemble:

* **Only symptoms** (:func:`of_symptom`): lines that healthy tasks, launchers and clients print *because* something
  failed elsewhere (a peer that went away, mpirun's abort banner, a remote that forgot this client). The symptom says
  what broke, never why; the causes that usually produce it come from how the component that prints it behaves:

  - a launcher's report that a process *returned a non-zero exit code* (an exit status, not a signal): the process
    ended itself -- an exception in the training code, a GPU out of memory (which raises), or a node set up
    differently from the others (the classic "works on one node, fails on several"). A SIGKILL (the host's OOM
    killer) would have been reported as a signal, so it is not among them;
  - a remote eager runtime that does not know the client's context or handles: it restarted, or it is a runtime of
    another TensorFlow version (a Cloud TPU's or a remote worker's started from another release), which does not
    share the client's protocol;
  - a peer that refused the connection ("Connection refused"): its host answered, so the network is not the
    usual cause; the peer's process was not serving (still starting, or died) or the address names another port;
  - any other lost peer: the usual reasons a process dies without a line of its own (the host's OOM killer, the
    scheduler's preemption) or the network between the tasks; where the logs show no task of the job at all besides
    the one that reports it, the remote may be a service outside the job (a managed accelerator runtime, a storage or
    metadata server): ``other``.

* **A traceback cut before its exception** (:func:`of_cut_traceback`): its last frames still say where it failed.
  In TensorFlow's session set-up (the Supervisor, the SessionManager or a MonitoredSession creating, preparing or
  waiting for the session across the cluster), the usual causes are the cluster's: a task started with another
  cluster spec, task index or flags than the others, or a task the others cannot reach.

* **No line is evidence of a failure** (:func:`of_silence`): what the log's shape says --

  - it ends in the distributed runtime's set-up (a server started, a strategy or cluster configured, NCCL's
    bootstrap) with no training step after it: the tasks stopped while connecting to each other, most often because
    one task of the cluster never started or is configured with a wrong address, or a port between them is blocked;
  - a multi-worker strategy that says it runs with a single worker: in a job of several workers, that task did not
    see the cluster (TF_CONFIG);
  - otherwise, the causes that leave no line in a task's own log: the kernel's OOM killer (it writes only to the
    kernel's log), the scheduler's preemption (its own record), a stall (a stuck task prints nothing).

Pure: a verdict, the hits and the per-stream facts in; ranked alternatives out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...model import Category as C
from .conclusion import Alternative, Verdict
from .prefixes import split_prefix
from .progress import EPOCH_LINE, progress_of
from .scan import Hit, StreamFacts
from .settle import settle_for

__all__ = ["of_symptom", "of_silence", "of_cut_traceback", "ends_in_setup", "ends_in_nccl_setup", "MIN_RESEMBLANCE"]

# a word-model guess below this says nothing (a uniform guess over 20 categories is 5 %); the usual causes of what
# the log shows rank above such guesses
MIN_RESEMBLANCE = 0.2

_SIGNAL = re.compile(r"signal \d+|\bSIG[A-Z]+\b|\bKilled\b|exit(?:ed)? code:? (?:9|1[34]\d)\b|status 1[34]\d\b", re.I)


@dataclass(frozen=True)
class _Family:
    names: frozenset[str]               # the symptom signatures of this family
    causes: tuple[C, ...]               # their usual causes, most usual first
    why: str


_EXITED = _Family(frozenset({"mpi-job-aborted", "launcher-first-process-failed", "mpi-process-name"}),
                  (C.USER_CODE_ERROR, C.OOM_GPU, C.CONFIG_MISMATCH_ACROSS_WORKERS),
                  "the launcher saw a process return an error status (not a signal): the process ended itself")
_FORGOT = _Family(frozenset({"tf-eager-context-lost", "tf-remote-handle-lost"}),
                  (C.VERSION_MISMATCH, C.OOM_HOST, C.PREEMPTION),
                  "a remote runtime that does not know the client's context restarted, or runs another TensorFlow "
                  "version than the client")
# "Connection refused" (ECONNREFUSED): the peer's host answered, and no process listens on that port -- the network
# delivered the packet. The peer's process is not up (not started yet, still starting, crashed and not restarted) or
# the address names another port than the one it serves
_REFUSED = re.compile(r"Connection refused|ECONNREFUSED|connection refused", re.I)
_REFUSED_CAUSES = (C.PEER_UNRESPONSIVE, C.PEER_CRASHED, C.CONFIG_TF_CONFIG)
_LOST_PEER = (C.OOM_HOST, C.PREEMPTION, C.NETWORK_UNREACHABLE)
_WHY_LOST = "a usual reason a peer goes away without a line of its own"
_WHY_CAUSE = {
    C.USER_CODE_ERROR: "an exception in the training code ends the process with an error status",
    C.OOM_GPU: "a GPU out of memory raises, and the process exits with an error status",
    C.CONFIG_MISMATCH_ACROSS_WORKERS: "a process that fails where others run is often on a node set up differently "
                                      "(libraries, interfaces, environment)",
    C.VERSION_MISMATCH: "a remote runtime of another TensorFlow version (a Cloud TPU's, a remote worker's) does not "
                        "share the client's contexts",
    C.OOM_HOST: "the kernel's OOM killer ends a process without a line in its own log",
    C.PREEMPTION: "a scheduler that preempts or evicts a task records it only in its own events",
    C.NETWORK_UNREACHABLE: "the network between the tasks failed, not a task",
    C.OTHER: "no task of the job besides this one is in the logs: the remote may be a service outside the job "
             "(a managed accelerator runtime, a storage or metadata server)",
}
_WHY_REFUSED = {
    C.PEER_UNRESPONSIVE: "'Connection refused' means the peer's host answered but nothing listens on the port yet: "
                         "its process has not started serving (still starting, waiting on something of its own)",
    C.PEER_CRASHED: "'Connection refused' also follows a peer process that died and was not restarted",
    C.CONFIG_TF_CONFIG: "'Connection refused' also comes from an address whose port is not the one the peer serves "
                        "(the cluster spec)",
}


def _alt(cat: C, culprit: str | None, why: str) -> Alternative:
    return Alternative(cat, culprit, why, settle=settle_for(cat))


def _no_other_task(v: Verdict, hits: list[Hit], facts: list[StreamFacts]) -> bool:
    return (v.culprit is None and not any(h.named or h.writer for h in hits)
            and not any(f.writer or f.writers for f in facts))


def of_symptom(v: Verdict, hits: list[Hit], facts: list[StreamFacts]) -> list[Alternative]:
    """The usual causes of the symptom ``v`` rests on, most usual first."""
    if v.root is None:
        return []
    name = v.root.sig.name
    if name in _EXITED.names and not any(_SIGNAL.search(h.text) for h in hits):
        return [_alt(c, v.culprit, _WHY_CAUSE[c]) for c in _EXITED.causes]
    if name in _FORGOT.names:
        return [_alt(c, v.culprit, _FORGOT.why if c == C.VERSION_MISMATCH else _WHY_CAUSE[c]) for c in _FORGOT.causes]
    if v.category == C.NETWORK_UNREACHABLE and _REFUSED.search(v.root.text):
        return [_alt(c, v.culprit, _WHY_REFUSED[c]) for c in _REFUSED_CAUSES]
    if v.category != C.PEER_CRASHED:
        return []
    causes = list(_LOST_PEER)
    if _no_other_task(v, hits, facts):
        causes = [C.OOM_HOST, C.NETWORK_UNREACHABLE, C.OTHER]
    return [_alt(c, v.culprit, _WHY_CAUSE.get(c, _WHY_LOST)) for c in causes]


# -- a traceback cut before its exception ----------------------------------------------------------------------------

_SESSION_SETUP_FRAME = re.compile(r'File "[^"]*(?:supervisor|session_manager|monitored_session)\.py", line \d+, in '
                                  r'(?:prepare_or_wait_for_session|prepare_session|wait_for_session|recover_session|'
                                  r'_?create_session)\b')
_CLUSTER = (C.CONFIG_TF_CONFIG, C.CONFIG_MISMATCH_ACROSS_WORKERS, C.NETWORK_UNREACHABLE)


def of_cut_traceback(v: Verdict, facts: list[StreamFacts]) -> list[Alternative]:
    """The usual causes of a failure at the place a cut traceback's last frames show."""
    if v.root is None or v.root.sig.name != "python-traceback":
        return []
    tail = [t for f in facts if f.name == v.root.stream for t in f.tail]
    if not any(_SESSION_SETUP_FRAME.search(t) for t in tail):
        return []
    return [_alt(c, v.culprit, "the traceback ends in TensorFlow's session set-up across the cluster: the tasks "
                 "disagree on the cluster (a task started with another spec, index or flags) or cannot reach each other")
            for c in _CLUSTER]


# -- a log with no failure line --------------------------------------------------------------------------------------

_NCCL_SETUP = re.compile(r"NCCL INFO (?:Bootstrap|NET/|NCCL_SOCKET_IFNAME|Using network|Channel \d+/\d+ :|Trees|"
                         r"Ring \d+|Setting affinity|comm 0x|cudaDriverVersion|NCCL version)")
# TensorFlow's distributed set-up, in its own words: a server started, a cluster or a strategy configured
_TF_SETUP = re.compile(r"Started server with target:|Initialize GrpcChannelCache for job|"
                       r"(?:CollectiveAllReduce|MultiWorkerMirrored|ParameterServer)Strategy(?:V\d)? with |"
                       r"Distribute Coordinator|\bTF_CONFIG\b|ClusterSpec\(|cluster_spec|"
                       r"Enabled multi-worker collective ops")
_SINGLE_WORKER = re.compile(r"Single-worker MultiWorkerMirroredStrategy")
_NCCL_STALL = (C.FIREWALL_OR_PORT_BLOCKED, C.NETWORK_UNREACHABLE, C.HANG_COLLECTIVE_MISMATCH)
_SETUP_STALL = (C.CONFIG_TF_CONFIG, C.FIREWALL_OR_PORT_BLOCKED, C.NETWORK_UNREACHABLE)
_SILENT = (C.OOM_HOST, C.PREEMPTION, C.HANG_STALLED_WORKER)


def _lines(f: StreamFacts) -> list[str]:
    return [split_prefix(t)[1].strip() for t in f.tail if t.strip() and t.strip() not in ("[...]", "...")]


def _progress(text: str) -> bool:
    return progress_of(text) is not None or bool(EPOCH_LINE.match(text))


def ends_in_nccl_setup(facts: list[StreamFacts]) -> bool:
    """A log whose last lines are NCCL's communicator set-up (bootstrap, transports, rings) and nothing after: the
    tasks stopped while connecting to each other, which is most often the network between the nodes (a port NCCL
    picked is blocked, or NCCL chose an interface the peer cannot reach)."""
    for f in facts:
        last = [t for t in f.tail if t.strip() and t.strip() not in ("[...]", "...")][-3:]
        if last and _NCCL_SETUP.search(last[-1]) and not any("Init COMPLETE" in t for t in last):
            return True
    return False


def ends_in_setup(facts: list[StreamFacts]) -> bool:
    """A log whose last lines set up TensorFlow's distributed runtime (a server, a cluster, a multi-worker strategy)
    and show no training step: the job stopped before its first step."""
    seen = False
    for f in facts:
        lines = _lines(f)
        if any(_progress(t) for t in lines):
            return False
        seen = seen or any(_TF_SETUP.search(t) and not _SINGLE_WORKER.search(t) for t in lines)
    return seen


def of_silence(facts: list[StreamFacts]) -> tuple[list[Alternative], list[Alternative]]:
    """The usual causes of a failure that left no line in these logs, most usual first: those the logs' shape points
    at (a set-up they stopped in, a single-worker strategy), and those that leave no line anywhere in a task's log."""
    shape: list[Alternative] = []
    if any(_SINGLE_WORKER.search(t) for f in facts for t in f.tail):
        shape.append(_alt(C.CONFIG_TF_CONFIG, None, "a multi-worker strategy ran with a single worker: in a job of "
                          "several workers, this task did not see the cluster (TF_CONFIG)"))
    if ends_in_nccl_setup(facts):
        shape += [_alt(c, None, "the log ends in NCCL's communicator set-up: the tasks stopped while connecting to "
                       "each other") for c in _NCCL_STALL]
    elif ends_in_setup(facts):
        shape += [_alt(c, None, "the log ends in the distributed runtime's set-up, before any training step: the "
                       "tasks stopped while connecting to each other (a task never started, a wrong address, a blocked "
                       "port)") for c in _SETUP_STALL]
    silent = [_alt(c, None, "a cause that leaves no line in a task's own log: " + _WHY_CAUSE.get(c, "a stuck task "
                   "prints nothing")) for c in _SILENT]
    return shape, silent
