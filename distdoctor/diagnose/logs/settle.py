"""What would settle each root-cause category: the record an engineer would look at to confirm or rule it out.

Every ranked alternative of a verdict carries one (see :func:`.learned.with_learned_reading`); the texts name real records -- the
kernel's log, the pod's last state, Slurm's accounting -- never a guess."""
from __future__ import annotations

from ...model import Category as C

__all__ = ["SETTLES", "settle_for"]

SETTLES: dict[C, str] = {
    C.PEER_CRASHED: "the failed task's own log and its exit status (the scheduler's record: `kubectl describe pod`, "
                    "`sacct`, mpirun's summary)",
    C.SEGFAULT_CORE_DUMP: "the exit signal (SIGSEGV/SIGABRT in the exit status or the pod's last state) and a core "
                          "dump or native stack of that task",
    C.OOM_HOST: "the node's kernel log (`dmesg` / `journalctl -k`: an 'Out of memory: Killed process' record), the "
                "pod's last state (OOMKilled), or `sacct -j JOB --format=State,MaxRSS,ReqMem` (OUT_OF_MEMORY)",
    C.OOM_GPU: "the GPU memory in use when it failed (`nvidia-smi`, the allocator's 'ran out of memory' line) and "
               "whether another process shared the GPU",
    C.USER_CODE_ERROR: "the exception at the end of the task's traceback and the frame of the training code above it",
    C.HANG_STALLED_WORKER: "a stack dump of every task during the stall (`py-spy dump`), and each task's last step",
    C.HANG_COLLECTIVE_MISMATCH: "the collectives each task submitted (a stall report's tensor names, or a stack dump "
                                "of each task)",
    C.PEER_UNRESPONSIVE: "whether the silent task's process was alive (its state in `ps`, a stack dump) when the "
                         "others gave up on it",
    C.DATA_SHARDING_IMBALANCE: "each task's step count at the end, and how the input was split between tasks",
    C.STRAGGLER_SLOW_WORKER: "each task's step times over the run (one task consistently slower)",
    C.NETWORK_UNREACHABLE: "whether the peer's address resolves and answers from the failing node (`getent hosts`, "
                           "`nc -vz HOST PORT`), and the peer's own log",
    C.FIREWALL_OR_PORT_BLOCKED: "a connection test to the peer's port from the failing node (`nc -vz HOST PORT`) and "
                                "the network policy, security group or firewall between them",
    C.PORT_IN_USE: "which process holds the port on that node (`ss -ltnp`)",
    C.CONFIG_TF_CONFIG: "the TF_CONFIG (or cluster spec) each task was started with (`distdoctor check --static`)",
    C.CONFIG_MISMATCH_ACROSS_WORKERS: "a diff of the command line, arguments and environment of each task",
    C.VERSION_MISMATCH: "the versions each node runs (`pip freeze`, the driver and CUDA versions, the image tag) "
                        "against what the code was built for",
    C.RESOURCE_EXHAUSTION: "the resource's use and limit on that node (`df`, /dev/shm, `ulimit -a`, the scheduler's "
                           "quota or the request it refused)",
    C.NUMERICAL_DIVERGENCE: "the loss curve before the first NaN/Inf (learning rate, input data of that step)",
    C.PREEMPTION: "the scheduler's record of who stopped the task (`kubectl get events`, `sacct`'s State, the cloud "
                  "provider's preemption notice)",
    C.OTHER: "the full logs of every task and the scheduler's record of the job",
}


def settle_for(category: C) -> str:
    return SETTLES.get(category, SETTLES[C.OTHER])
