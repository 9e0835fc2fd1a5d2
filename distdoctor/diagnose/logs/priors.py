"""Priors: what a line means beyond its words, from how the component that prints it behaves.

Each rule here rewrites a :class:`~.conclusion.Verdict` whose root line is known to be ambiguous or to be read too
strongly by itself:

* **A SIGKILL with no sender** (a shell's ``Killed``, exit status 137, "signal 9", Hydra's ``EXIT CODE: 9``, a Python
  launcher's return code -9) and no line from whoever sent it (the OOM killer, a scheduler's eviction, preemption,
  time limit or cancel): the kernel's OOM killer is by far the most common sender (in the real corpus, 25 of the 27
  cases with a SIGKILL line; 7 of the 8 where no line names a sender), and it writes only to the kernel's log. The
  verdict is ``oom_host`` at low confidence (the log does not say who killed it), with what settles it; "killed from
  outside" (``peer_crashed``) is the first alternative.
* **A SIGBUS with no reason** (``Bus error``, "signal 7", a launcher's exit code -7, ``SIGBUS``) and no line that
  says why: in containers a bus error is most often shared memory that ran out -- a page of a segment mapped from
  a full /dev/shm cannot be backed (the kernel's BUS_ADRERR; PyTorch's DataLoader and NCCL map their buffers
  there) -- rather than a defect in native code (in the real corpus, all 7 cases with a SIGBUS line). The verdict
  is ``resource_exhaustion`` at low confidence, the native crash its first alternative.
* **Slurm's "Exceeded step/job memory limit at some point"** is printed at the end of a step whose memory cgroup
  reached its limit at some time (page cache counts): the step may well have completed. Without a line that says a
  task was killed, it is no failure by itself: ``other``, low confidence, ``oom_host`` the first alternative.
* **An image pull that failed on the network** (a timeout, an unresolved or unreachable registry) is the network's
  failure, not a wrong image name.
* **A native stack dumped from a live process** (``pstack``, gdb attached, py-spy) is where a stuck task waits,
  not a crash.
* **ssh asked to resolve ``host:N``**: the launcher passed a ``host:slots`` entry to ssh as a host name: it does not
  read that syntax (Open MPI before 3.0, older launchers), a version matter rather than a network one.

Pure: a verdict and the hits in, a verdict out.
"""
from __future__ import annotations

import re
from dataclasses import replace

from ...model import Category, Status
from .conclusion import Alternative, Verdict
from .scan import Hit
from .settle import settle_for
from . import hindsight

__all__ = ["apply_priors", "SIGKILL", "SIGBUS", "SHM_REMEDY"]

SIGKILL = re.compile(r"signal 9\b|\bSIGKILL\b|(?-i:\bKilled\b)(?! process)|(?:exit|status|code)[ a-z:]*137\b"
                     r"|EXIT CODE: 9\b|(?:exitcode\s*:|return code =|exit status)\s*-9\b", re.I)
# lines from a sender of a SIGKILL: the OOM killer, a scheduler evicting, preempting, cancelling or timing out
_SENDERS = (Category.OOM_HOST, Category.PREEMPTION)
# lines that say who stopped the task although their category is the loss itself: the kubelet reports exit 137 for a
# container it could no longer find when its pod was deleted
_SENDER_LINES = frozenset({"k8s-container-status-unknown"})
SIGBUS = re.compile(r"\bbus error\b|\bSIGBUS\b|signal 7\b|(?:exitcode\s*[:=]\s*|return code = |exit status )-7\b",
                    re.I)
# what to do about a /dev/shm that ran out (the log reading's prior and the run's rules DD102/DD113 alike)
SHM_REMEDY = ("Check /dev/shm on that node (`df -h /dev/shm` in the task's container): data loader workers, NCCL and "
              "MPI map their buffers there. Give it more (`--shm-size`, `--ipc=host`, a memory-backed emptyDir on "
              "Kubernetes) or use fewer loader workers.")
_STEP_MEMORY = re.compile(r"Exceeded (?:job|step) memory limit", re.I)
_PULL_NETWORK = re.compile(r"(?i)timeout|timed out|i/o timeout|dial tcp|no such host|connection refused|"
                           r"request canceled while waiting for connection|network is unreachable|no route to host|"
                           r"TLS handshake")
_SSH_HOST_SLOTS = re.compile(r"ssh: Could not resolve hostname [\w.-]+:\d+\b")


def _sigkill_with_no_sender(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.category != Category.PEER_CRASHED or not SIGKILL.search(v.root.text):
        return None
    if any((h.sig.category in _SENDERS or h.sig.name in _SENDER_LINES) and h.sig.role.value == "cause" for h in hits):
        return None
    killed = Alternative(Category.PEER_CRASHED, v.culprit, "something else sent the SIGKILL: a scheduler's time limit "
                         "or eviction, a person, a launcher tearing the job down",
                         settle="the scheduler's record of the job (`sacct`, `kubectl describe pod`, the launcher's "
                                "first error) for who stopped it")
    alts = (killed,) + tuple(a for a in v.alternatives if a.category not in (Category.OOM_HOST, Category.PEER_CRASHED))
    return replace(v, category=Category.OOM_HOST, confidence="low", alternatives=alts[:3],
                   summary=v.summary + "; nothing in the logs says who sent the SIGKILL: most often the kernel's OOM "
                                       "killer, which writes only to the kernel's log (`dmesg` on the node, the pod's "
                                       "last state, or `sacct` settles it)",
                   remedy="Find who sent the SIGKILL: most often the kernel's OOM killer (`dmesg -T | grep -i oom` on "
                          "the node, the pod's `OOMKilled`, `sacct -o State,MaxRSS`); then lower the task's host memory "
                          "(data loader workers, shuffle buffers, pinned or offloaded tensors) or give it more.",
                   settle=settle_for(Category.OOM_HOST))


def _sigbus_with_no_reason(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.category != Category.SEGFAULT_CORE_DUMP or not SIGBUS.search(v.root.text):
        return None
    crash = Alternative(Category.SEGFAULT_CORE_DUMP, v.culprit, "a defect in native code (an unaligned access, a "
                        "truncated mapped file) raises SIGBUS too", settle=settle_for(Category.SEGFAULT_CORE_DUMP))
    alts = (crash,) + tuple(a for a in v.alternatives
                            if a.category not in (Category.SEGFAULT_CORE_DUMP, Category.RESOURCE_EXHAUSTION))
    return replace(v, category=Category.RESOURCE_EXHAUSTION, confidence="low", alternatives=alts[:3],
                   summary=v.summary + "; a bus error is most often shared memory that ran out: a page mapped from a "
                                       "full /dev/shm cannot be backed",
                   remedy=SHM_REMEDY,
                   settle="`df -h /dev/shm` in the task's container during the run, and the kernel's log for the "
                          "SIGBUS (`dmesg`)")


def _step_memory_warning(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.root.sig.name != "slurm-oom" or not _STEP_MEMORY.search(v.root.text):
        return None
    killed = [h for h in hits if h.sig.role.value == "cause" and not _STEP_MEMORY.search(h.text)
              and (h.sig.category in _SENDERS or SIGKILL.search(h.text) or h.sig.category == Category.PEER_CRASHED)]
    if killed:
        return None
    alts = (Alternative(Category.OOM_HOST, v.culprit, "the step reached its memory limit; if a task of it was killed, "
                        "that was the memory cgroup's OOM killer", settle=settle_for(Category.OOM_HOST)),
            Alternative(Category.RESOURCE_EXHAUSTION, v.culprit, "the step ran at its memory limit (page cache "
                        "included): slow, swapping, close to being killed", settle=settle_for(Category.RESOURCE_EXHAUSTION)))
    return replace(v, status=Status.UNKNOWN, category=Category.OTHER, confidence="low", alternatives=alts,
                   summary="Slurm says the step's memory reached its limit at some point (its cgroup counts page "
                           f"cache too), but no line says a task was killed: by itself no failure: {v.root.text[:200]}",
                   settle="the job's state in Slurm's accounting: `sacct -j JOB --format=State,ExitCode,MaxRSS,ReqMem` "
                          "(COMPLETED, or OUT_OF_MEMORY)")


def _image_pull_on_the_network(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.root.sig.name != "k8s-image-pull" or not _PULL_NETWORK.search(v.root.text):
        return None
    alts = (Alternative(v.category, v.culprit, "the image name or the registry's credentials", settle="`docker pull` "
                        "of the same image from the node"),) + v.alternatives[:2]
    return replace(v, category=Category.NETWORK_UNREACHABLE, confidence="medium", alternatives=alts,
                   summary="the node could not reach the image registry (the pull failed on the network): "
                           + v.root.text[:220], settle=settle_for(Category.NETWORK_UNREACHABLE))


def _ssh_given_host_slots(v: Verdict, hits: list[Hit]) -> Verdict | None:
    if v.root is None or v.root.sig.name != "ssh-launch-failed" or not _SSH_HOST_SLOTS.search(v.root.text):
        return None
    alts = (Alternative(Category.CONFIG_TF_CONFIG, v.culprit, "the host list's syntax", settle="the launcher's host "
                        "list (-H / hostfile) and its documented syntax"),
            Alternative(Category.NETWORK_UNREACHABLE, v.culprit, v.summary[:160], settle=settle_for(v.category)))
    return replace(v, category=Category.VERSION_MISMATCH, confidence="medium", alternatives=alts,
                   summary="the launcher passed a `host:slots` entry to ssh as a host name: this launcher version does "
                           "not read that syntax (Open MPI before 3.0 reads -H host:N as a name; use a hostfile with "
                           "slots=N or a newer launcher): " + v.root.text[:200],
                   settle="the launcher's version (`mpirun --version`) and how it was given the hosts")


def _stack_of_a_live_process(v: Verdict, hits: list[Hit]) -> Verdict | None:
    """A native stack dumped from a live process (``pstack PID``, gdb attached, py-spy) shows where a stuck task
    waits, not a crash."""
    if v.root is None or v.root.sig.name != "native-backtrace":
        return None
    live = [h for h in hits if h.sig.name == "live-stack-dump" and h.stream == v.root.stream
            and h.line_no < v.root.line_no]
    if not live:
        return None
    alts = (Alternative(Category.SEGFAULT_CORE_DUMP, v.culprit, "a stack like this is also what a core dump shows",
                        settle=settle_for(Category.SEGFAULT_CORE_DUMP)),)
    return replace(v, category=Category.HANG_STALLED_WORKER, status=Status.HUNG, confidence="low",
                   context=tuple(live[-1:]), alternatives=alts,
                   summary=f"a stack dumped from a live process ({live[-1].text.strip()[:80]}): the task was alive and "
                           f"waiting here: {v.root.text.strip()[:160]}",
                   settle=settle_for(Category.HANG_STALLED_WORKER))


_RULES = (_stack_of_a_live_process, _step_memory_warning, _sigkill_with_no_sender, _sigbus_with_no_reason,
          _image_pull_on_the_network, _ssh_given_host_slots)


def apply_priors(v: Verdict, hits: list[Hit]) -> Verdict:
    """The first prior that applies to the verdict's root line, then :mod:`.hindsight`'s rules in turn (what the rest
    of the logs says about that line)."""
    for rule in _RULES:
        out = rule(v, hits)
        if out is not None:
            v = out
            break
    for rule in hindsight.RULES:
        v = rule(v, hits) or v
    return v
