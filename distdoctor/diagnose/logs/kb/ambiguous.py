"""Messages with more than one usual cause: knowledge about a signature's line, beside the signatures.

A signature's rank says how specific its line is, but some specific lines have more than one usual cause: the line
names an effect (a damaged checkpoint: damaged by what?), or the component that prints it says so itself (NCCL's
"remote process exited or there was a network error"). A verdict on such a line is at most ``cap`` confident, and
the other usual cause is listed first among its alternatives (the learned reading ranks the rest:
:func:`..learned.with_learned_reading`). ``high`` is kept for lines whose cause is the message itself.

Each entry is a fact about one message, written from the component's own text or its maintainers' word; the table is
read by :func:`cap_of` (:mod:`..reason` applies it). Pure data and one lookup.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ....model import Category as C

__all__ = ["Ambiguous", "AMBIGUOUS", "cap_of"]


@dataclass(frozen=True)
class Ambiguous:
    """A signature whose line has another usual cause: the cap on the verdict's confidence and that cause."""

    cap: str
    other: C
    why: str
    when: str | None = None          # a pattern the root line must match for the cap to apply (None: always)
    more: tuple[C, ...] = ()         # further usual causes, listed after ``other``


# "Requested node configuration is not available": no node of the partition can ever run the request as written
# (more CPUs, memory or GPUs per node than any node has, a feature none has): the job script's mistake as much as
# a shortage
_UNSATISFIABLE = Ambiguous("medium", C.USER_CODE_ERROR, "no node can ever satisfy the request as written: the job "
                           "script asks for what the partition does not have",
                           when=r"Requested node configuration is not available")

# A line that says what broke but not what broke it: the verdict's category is decided by a cause the line does not
# contain. A checkpoint that fails its checksum was cut or overwritten -- by a writer killed while saving, a full disk,
# or a task reading while another rewrites or deletes it -- and only the other logs say which. A file that is no
# table at all is as often a path that names something other than a checkpoint (its .meta or .index file, another
# format) as a damaged one.
_DAMAGED_CHECKPOINT = (
    Ambiguous("low", C.USER_CODE_ERROR, "the path may name a file that is not a checkpoint (its .meta, .index or a "
              "data file instead of the checkpoint's prefix, or another format)",
              when=r"not an sstable|Unable to open table file", more=(C.RESOURCE_EXHAUSTION, C.PEER_CRASHED)),
    Ambiguous("low", C.RESOURCE_EXHAUSTION, "a checkpoint is cut short when the disk or quota fills while it is "
              "written", more=(C.PEER_CRASHED, C.OOM_HOST)),
)
# A line whose words name neither the resource nor the fault, read as GPU memory exhaustion only by association
# (issue threads traced it there): the line that names the cause (the allocator's) is not in the log. The CUDA
# library errors ("failed to create cublas handle", cuDNN's failed initialisation) have a second usual cause, a
# CUDA/cuDNN build that does not match the driver or the GPU; lines that say the allocation failed are left alone.
_GPU_DISGUISED = (
    Ambiguous("low", C.VERSION_MISMATCH, "the same error comes from a CUDA or cuDNN library that does not match the "
              "driver or the GPU", when=r"WhereOp: Race condition"),
    Ambiguous("medium", C.VERSION_MISMATCH, "the same error comes from a CUDA or cuDNN library that does not match "
              "the driver or the GPU", when=r"^(?!.*(?:ALLOC_FAILED|Dst tensor is not initialized))"),
)

# The NVIDIA driver's "GPU has fallen off the bus" (Xid 79) and NVML's lost GPU name a hardware fault, not what the job
# did: the task that used the GPU most often hangs inside the driver (its peers wait for it), or dies with it
# a job still running at its time limit (any scheduler's) was most often one that had stopped progressing
_TIME_LIMIT = Ambiguous("medium", C.HANG_STALLED_WORKER, "a job that runs into its time limit has often stopped making "
                        "progress long before")
_GPU_LOST = Ambiguous("medium", C.HANG_STALLED_WORKER, "a process whose GPU fell off the bus most often hangs inside "
                      "the driver while its peers wait for it in a collective", more=(C.PEER_CRASHED,))
# A process that exits on SIGABRT ended itself: a failed check, an uncaught C++ exception, or an allocation that
# failed (memory, threads) ends the same way; the abort names none of them
_ABORTED = Ambiguous("medium", C.RESOURCE_EXHAUSTION, "an allocation that failed (threads, memory, file handles) "
                     "aborts the process the same way", when=r"(?i)signal 6\b|\(Aborted\)|SIGABRT",
                     more=(C.OOM_HOST,))

AMBIGUOUS: dict[str, Ambiguous | tuple[Ambiguous, ...]] = {
    "nvml-gpu-lost": _GPU_LOST,
    "nvidia-xid": _GPU_LOST,
    "native-segv": _ABORTED,
    # Hydra's proxy names a firewall as the usual reason it cannot connect back to mpiexec; a route missing between
    # the nodes fails the same connect (its "unable to connect from ... (No route to host)" line just before is the
    # same for both when a firewall answers with an ICMP reject)
    "hydra-proxy-upstream-refused": Ambiguous("medium", C.NETWORK_UNREACHABLE, "a route missing between the nodes "
                                              "fails the same connect"),
    "tf-checkpoint-corrupt": _DAMAGED_CHECKPOINT,
    "gpu-oom-disguised": _GPU_DISGUISED,
    # SIGILL is a native crash as much as a CPU-feature mismatch: the exit status alone cannot tell them apart; on one
    # node of several it is that node's older CPU (the nodes differ)
    "sigill-exit-132": Ambiguous("medium", C.SEGFAULT_CORE_DUMP, "an illegal instruction is also how a corrupted "
                                 "jump or a bad native extension crashes", more=(C.CONFIG_MISMATCH_ACROSS_WORKERS,)),
    # a job still running at its time limit, or cancelled by a person, was most often one that stopped progressing
    "slurm-time-limit": _TIME_LIMIT,
    "lsf-run-limit": _TIME_LIMIT,
    "lsf-killed-by-request": Ambiguous("medium", C.HANG_STALLED_WORKER, "a job killed by its owner was most often "
                                       "killed because it had stopped progressing"),
    # a cloud VM's ACPI power button is how its provider's stop or preemption reaches the guest, and a person's stop too
    "acpi-power-key": Ambiguous("medium", C.OTHER, "a person or an autoscaler stopping the VM presses the same button"),
    "slurm-preemption": Ambiguous("medium", C.HANG_STALLED_WORKER, "a step cancelled with no reason given was "
                                  "cancelled by a person (`scancel`), most often because it had stopped progressing",
                                  when=r"CANCELLED AT (?!.*DUE TO)"),
    # Horovod reports the same tensor with different shapes or types: the ranks run different arguments or code
    "horovod-mismatched-shapes": Ambiguous("medium", C.CONFIG_MISMATCH_ACROSS_WORKERS, "ranks that submit one tensor "
                                           "with different shapes run with different arguments (batch size, model)"),
    "horovod-mismatched-dtypes": Ambiguous("medium", C.CONFIG_MISMATCH_ACROSS_WORKERS, "ranks that submit one tensor "
                                           "with different types run different code or environments"),
    # NCCL picks its own ports: an address in use there is an exhausted or reserved ephemeral range more than a
    # second process on a port someone chose
    # (a task's server that cannot bind because the cluster spec gives its twin the same host:port is
    # :mod:`..hindsight`'s: the printed spec says so; without one, another process holding the port is the usual cause)
    "tf-server-bind-failed": Ambiguous("low", C.RESOURCE_EXHAUSTION, "NCCL binds ports it picks itself: a port "
                                       "already in use there means the ephemeral range is exhausted or reserved",
                                       when=r"NCCL WARN"),
    "slurm-unable-to-allocate": _UNSATISFIABLE,
    "slurm-cpu-count": _UNSATISFIABLE,          # the vocab branch's signature for the same Slurm message
    # NCCL's InfiniBand retry counter ran out: the peer's side never acknowledged. NCCL itself says "remote process
    # exited or there was a network error": the fabric between the nodes, or a peer that died (its own log says which)
    "nccl-ib-retry-exceeded": Ambiguous("medium", C.PEER_CRASHED, "a peer process that died stops acknowledging too "
                                        "(NCCL: 'remote process exited or there was a network error')"),
    # a collective truncated on receive: ranks with different buffers, or a library that orders its collectives
    # differently on different ranks (its own defect, netket#1479)
    "mpi-truncated-in-collective": Ambiguous("medium", C.OTHER, "a library that issues its collectives in a different "
                                             "order on each rank truncates them the same way (its own defect)"),
    # a symbol missing from a CUDA library's binary: a build without this GPU's architecture, or the library's own bug
    "cuda-symbol-not-found": Ambiguous("medium", C.OTHER, "a library's own build or loading defect reads the same"),
    # a rank's wait at the c10d store timed out: the writer busy alone or stuck (the corpus' usual case), or dead
    "c10d-store-wait-timeout": Ambiguous("medium", C.PEER_CRASHED, "a rank 0 that died never writes the key either "
                                         "(its own log says so)"),
    # TF1's session manager on a non-chief task waits for the chief to initialize the variables: either some variables
    # are not the chief's to initialize (per-worker state), or no running task is the chief (is_chief / TF_CONFIG)
    "tf-uninitialized-variables-wait": Ambiguous("low", C.CONFIG_TF_CONFIG, "the chief that initializes the "
                                                 "variables may not be running, or no task is configured as chief"),
    # ncclSystemError: a system call failed, NCCL's own troubleshooting names shared memory first (a container's
    # /dev/shm, 64 MB by default, too small for its shm transport), then sockets and the network interface
    "nccl-unhandled-system": Ambiguous("medium", C.RESOURCE_EXHAUSTION, "NCCL's shared-memory transport fails the same "
                                       "way when /dev/shm is too small (a container's 64 MB default: --shm-size, an "
                                       "emptyDir of medium Memory)"),
    # DDP's reducer sees a gradient twice when a layer runs in several reentrant backward passes: activation
    # checkpointing that a library switches on around shared layers does it as often as the user's own code
    "ddp-variable-ready-twice": Ambiguous("medium", C.OTHER, "a library that wraps the model (gradient checkpointing, "
                                          "adapters) reuses its parameters across reentrant backward passes itself"),
    # Open MPI takes the job for an srun direct launch whenever it finds Slurm's environment: a program started
    # without mpirun inside an allocation (a test, a script calling the binary) reads the same as a build without
    # Slurm's PMI, and so does a fault in the PMI component itself
    "ompi-direct-launch-no-pmi": Ambiguous("medium", C.USER_CODE_ERROR, "a program started without mpirun inside a "
                                           "Slurm allocation is taken for an srun direct launch too",
                                           more=(C.OTHER,)),
    # Gloo takes one concrete interface name: a launcher or library that sets GLOO_SOCKET_IFNAME itself (a hard-coded
    # name, NCCL's '^lo,docker' exclusion syntax) fails as a node without that interface does
    "gloo-no-address": Ambiguous("medium", C.OTHER, "a launcher or library that sets the interface name itself (a "
                                 "hard-coded name, NCCL's exclusion syntax given to Gloo) fails the same way",
                                 more=(C.CONFIG_MISMATCH_ACROSS_WORKERS,)),
    # SIGSEGV names how the process died, not why: a native defect, but as often memory it mapped that could not be
    # backed (a full /dev/shm, a stack limit), an extension built against another release, code that hands a library
    # bad memory (the corpus' 18 segfault verdicts: 11 a native crash)
    "native-segv": Ambiguous("medium", C.RESOURCE_EXHAUSTION, "memory the process mapped could not be backed (a full "
                             "/dev/shm, the stack limit) ends it on the same signal",
                             more=(C.VERSION_MISMATCH,)),
    # CPython's AttributeError on an object: the caller and the object's class disagree -- releases apart, or a
    # library's own defect (a path the maintainers left without the attribute), the line does not say which
    "python-object-attribute-missing": Ambiguous("medium", C.OTHER, "a library's own defect (one of its code paths "
                                                 "asks its own object for what it lacks) reads the same",
                                                 more=(C.USER_CODE_ERROR,)),
}


def cap_of(sig_name: str, text: str) -> Ambiguous | None:
    """The usual-cause entry that applies to a root line ``text`` of the signature ``sig_name``, or None."""
    entry = AMBIGUOUS.get(sig_name)
    for amb in (entry if isinstance(entry, tuple) else (entry,) if entry else ()):
        if not amb.when or re.search(amb.when, text.strip()):
            return amb
    return None
