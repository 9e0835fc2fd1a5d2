"""Slurm (slurmstepd, srun, the mpi/pmix plugin) and PMIx messages mined from SchedMD/slurm (17.11-25.x) and
openpmix/openpmix (v3-v5) (codes DD960-DD974; the first Slurm signatures are in platform.py)."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

SLURM = "slurm"
PMIX = "pmix"
_MEM = ("The step exceeded its memory: ask for more (`--mem`, `--mem-per-cpu`), run `--exclusive`, or lower the batch "
        "size and buffers.")
_PEER = ("A symptom of a process or daemon that went away: find the task that failed first (its output, exit status, "
         "the OOM killer, the scheduler's record).")

# -- memory: the wordings of the cgroup OOM record and of the accounting-based kill ------------------------------------
add("DD960", "slurm-oom-kill-event-new", C.OOM_HOST, R.CAUSE, ("oom_kill event",),
    "Slurm's cgroup plugin saw the kernel OOM-kill a task of the step (Slurm 23.02+ wording)",
    regex=r"Detected \d+ oom_kill events? in", rank=95, remedy=_MEM, component=SLURM, versions=">=23.02",
    source="SchedMD/slurm src/plugins/task/cgroup/task_cgroup_memory.c (the pre-23.02 'oom-kill event(s)' is DD822)",
    fixture="slurmstepd: error: Detected 1 oom_kill event in StepId=4714782.0. Some of the step tasks have been OOM "
            "Killed.")
add("DD961", "slurm-exceeded-memory-limit", C.OOM_HOST, R.CAUSE,
    ("exceeded memory limit", "exceeded virtual memory limit"),
    "Slurm's accounting saw the job exceed its memory limit and killed it",
    regex=r"exceeded (?:virtual )?memory limit \(\d+ ?> ?\d+\), (?:being killed|cancelling it)", rank=92, remedy=_MEM,
    component=SLURM, versions="all (JobAcctGatherParams=OverMemoryKill)",
    source="SchedMD/slurm src/interfaces/jobacct_gather.c / src/slurmd/slurmd/job_mem_limit.c",
    fixture="slurmstepd: error: StepId=1234.0 exceeded memory limit (33554432 > 32768000), being killed")

# -- cancellations the cancel record names (slurmstepd req.c / step_terminate_monitor.c) ------------------------------
add("DD962", "slurm-cancel-task-failure", C.PEER_CRASHED, R.SYMPTOM, ("DUE TO TASK FAILURE",),
    "Slurm cancelled the job because one of its tasks failed (--kill-on-bad-exit)", rank=25,
    remedy="A consequence: the task that failed first is named by an earlier srun line or its own output.",
    component=SLURM, versions=">=20.11", source="SchedMD/slurm src/slurmd/slurmstepd/req.c",
    fixture="slurmstepd: error: *** STEP 812345.0 ON gpu-node06 CANCELLED AT 2023-04-02T11:20:31 DUE TO TASK FAILURE ***")
add("DD963", "slurm-cancel-requeue", C.PREEMPTION, R.CAUSE, ("DUE TO JOB REQUEUE", "DUE to SIGNAL"),
    "Slurm stopped the job to requeue it, or on a signal sent to it", rank=72,
    remedy="The job was requeued (preemption with requeue, a node failure, scontrol requeue) or signalled (scancel "
    "--signal): resume from the last checkpoint.", component=SLURM, versions=">=21.08",
    source="SchedMD/slurm src/slurmd/slurmstepd/req.c",
    fixture="slurmstepd: error: *** JOB 4714782 ON gpu-001 CANCELLED AT 2023-11-29T15:47:21 DUE TO JOB REQUEUE ***")
add("DD964", "slurm-unkillable-step", C.PEER_UNRESPONSIVE, R.CAUSE,
    ("DUE TO JOB NOT ENDING WITH SIGNALS", "Kill task failed"),
    "Slurm could not kill the step's processes: they are stuck in the kernel", rank=60,
    remedy="The processes ignore SIGKILL (uninterruptible sleep on I/O: a hung network file system or GPU driver): "
    "the node is drained; check its storage mounts and the driver.", component=SLURM, versions="all",
    source="SchedMD/slurm src/slurmd/slurmstepd/step_terminate_monitor.c / src/common/slurm_errno.c",
    fixture="slurmstepd: error: *** JOB 1234 STEPD TERMINATED ON gpu-007 AT 2024-02-01T10:00:00 DUE TO JOB NOT "
            "ENDING WITH SIGNALS ***")

# -- srun / step launch ------------------------------------------------------------------------------------------------
add("DD965", "slurm-socket-timeout", C.PEER_UNRESPONSIVE, R.CONTEXT, ("Socket timed out on send/recv operation",),
    "A Slurm daemon (slurmctld/slurmd) did not answer in time", rank=15,
    remedy="The controller or a node daemon is overloaded or unreachable: repeated ones delay launches and can fail "
    "steps; report to the cluster's administrators.", component=SLURM, versions="all",
    source="SchedMD/slurm src/common/slurm_errno.c (SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT)",
    fixture="srun: error: slurm_receive_msg: Socket timed out on send/recv operation")
add("DD966", "slurm-credential-expired", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Job credential expired", "Munge decode failed: Expired credential", "Munge decode failed: Rewound credential",
     "Munge decode failed: Invalid credential", "Invalid job credential"),
    "Slurm refused a launch credential: nodes' clocks or munge keys differ", rank=70,
    remedy="The nodes disagree on the time (NTP) or have different munge keys: fix clock sync / the key on the "
    "node named, and resubmit.", component=SLURM, versions="all",
    source="SchedMD/slurm src/common/slurm_errno.c (ESLURMD_CREDENTIAL_EXPIRED) / src/plugins/auth/munge/auth_munge.c",
    fixture="srun: error: Task launch for StepId=1234.0 failed on node gpu-03: Job credential expired")
add("DD967", "slurm-launch-failed", C.PEER_CRASHED, R.CAUSE, ("Application launch failed:", "Task launch for"),
    "srun could not launch the step's tasks on a node",
    regex=r"Application launch failed: (?!Invalid job credential|Job credential expired)|Task launch for \S+ failed on node \S+: "
          r"(?!Job credential expired|Invalid job credential|Slurmd could not execve job)", rank=45,
    remedy="The node refused or failed the launch (the reason follows the colon): check that node's slurmd and its "
    "state (`scontrol show node`).", component=SLURM, versions="all", source="SchedMD/slurm src/srun/launch.c / "
    "src/api/step_launch.c",
    fixture="srun: error: Application launch failed: Invalid node name specified")
add("DD968", "slurm-step-wait-timeout", C.PEER_UNRESPONSIVE, R.CONTEXT, ("Timed out waiting for job step to complete",),
    "srun gave up waiting for the step's tasks to end", rank=20,
    remedy="Some tasks did not exit after the step ended (stuck in I/O or a collective): look at which node still "
    "runs them.", component=SLURM, versions="all", source="SchedMD/slurm src/api/step_launch.c",
    fixture="srun: error: Timed out waiting for job step to complete")
add("DD969", "slurm-cpu-count", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("CPU count per node can not be satisfied", "Requested node configuration is not available",
     "Node count specification invalid", "More processors requested than permitted"),
    "Slurm cannot satisfy the job's CPU/node request", rank=66,
    remedy="The request cannot fit the partition's nodes (too many CPUs or GPUs per node, too many tasks per node): "
    "ask for what the nodes have (`sinfo -o '%P %c %G %m'`).", component=SLURM, versions="all",
    source="SchedMD/slurm src/slurmctld/node_scheduler.c / src/common/slurm_errno.c",
    fixture="sbatch: error: CPU count per node can not be satisfied")
add("DD970", "slurm-qos-limit", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Job violates accounting/QOS policy", "QOSMaxGRESPerUser", "QOSMaxGRESPerJob", "AssocGrpGRES",
     "MaxGRESPerAccount"),
    "Slurm refuses or holds the job: it exceeds an account or QOS limit", rank=66,
    remedy="The job asks for more than the account/QOS allows (GPUs, CPUs, wall time): ask for less, or use a QOS/"
    "partition that allows it (`sacctmgr show qos`).", component=SLURM, versions="all",
    source="SchedMD/slurm src/common/slurm_errno.c (ESLURM_ACCOUNTING_POLICY) / job pending reasons",
    fixture="srun: error: Unable to allocate resources: Job violates accounting/QOS policy (job submit limit, user's "
            "size and/or time limits)")

# -- the mpi/pmix plugin of slurmstepd ---------------------------------------------------------------------------------
add("DD971", "slurm-pmix-collective-timeout", C.HANG_STALLED_WORKER, R.WAIT, ("collective timeout seq=",),
    "Slurm's PMIx plugin timed out in a collective (a fence): some tasks never reached it", rank=30,
    regex=r"pmixp_coll\w*: .*collective timeout seq=\d+|collective timeout seq=\d+",
    remedy="Some tasks of the step never joined PMIx's fence (MPI_Init / a barrier): they crashed, are stuck before "
    "MPI_Init, or run on a node that cannot reach the others; raise PMIxTimeout only if start-up is just slow.",
    component=SLURM, versions=">=17.11", source="SchedMD/slurm src/plugins/mpi/pmix/pmixp_coll_ring.c / pmixp_coll_tree.c",
    fixture="slurmstepd: error:  mpi/pmix_v3: pmixp_coll_ring_reset_if_to: gpu-01 [0]: pmixp_coll_ring.c:742: "
            "0x15301c010ef0: collective timeout seq=0")
add("DD972", "slurm-pmix-not-involved", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("No process controlled by this slurmstepd is involved in this collective",),
    "Slurm's PMIx plugin got a collective for processes it does not host", rank=65,
    remedy="The tasks disagree on the job's layout (processes from another step or a wrong rank/size): run one MPI "
    "job per step with matching PMIx versions on every node.", component=SLURM, versions=">=17.11",
    source="SchedMD/slurm src/plugins/mpi/pmix/pmixp_coll.c",
    fixture="slurmstepd: error:  mpi/pmix_v4: pmixp_coll_belong_chk: node1 [0]: pmixp_coll.c:280: No process "
            "controlled by this slurmstepd is involved in this collective.")

# -- PMIx (as Open MPI, PRRTE and Slurm print its status names: v3 'UNREACHABLE', v4+ 'PMIX_ERR_UNREACH') -------------
add("DD973", "pmix-unreachable", C.NETWORK_UNREACHABLE, R.SYMPTOM,
    ("PMIX ERROR: UNREACHABLE", "PMIX ERROR: PMIX_ERR_UNREACH", "PMIX_ERR_UNREACH"),
    "A PMIx client or server cannot reach its peer (the local server or daemon is gone)", rank=30,
    remedy="The process cannot reach its PMIx server (the launcher daemon died or is on another PMIx version): find why "
    "the daemon went away, and use matching PMIx versions (`srun --mpi=list`).", component=PMIX,
    versions="all (v3 prints UNREACHABLE, v4+ PMIX_ERR_UNREACH)",
    source="openpmix/openpmix src/util/error.c (v3) / src/util/pmix_error.h + pmix_event_strings (v4+)",
    fixture="[node1:04242] PMIX ERROR: UNREACHABLE in file ../../../../../../src/mca/ptl/tcp/ptl_tcp.c at line 790")
add("DD974", "pmix-lost-connection", C.PEER_CRASHED, R.SYMPTOM,
    ("LOST_CONNECTION_TO_SERVER", "LOST-CONNECTION-TO-SERVER", "PMIX_ERR_LOST_CONNECTION", "LOST-CONNECTION-TO-CLIENT",
     "PMIX ERROR: PROC-ABORTED", "PMIX_ERR_PROC_ABORTED"),
    "PMIx lost the connection between a process and its server (one of them died)", rank=28, remedy=_PEER,
    component=PMIX, versions="all", source="openpmix/openpmix src/util/error.c / pmix_event_strings",
    fixture="[gpu-02:31337] PMIX ERROR: LOST_CONNECTION_TO_SERVER in file client/pmix_client.c at line 231")
