"""Schedulers and platforms: Kubernetes (kubectl describe/get/events, TFJob), Slurm, YARN/Spark, TonY, launchers."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_K8S_OOM = ("The container exceeded its memory limit: raise `resources.limits.memory` (and requests) of that replica, "
            "or lower the batch size and input buffers.")

add("DD800", "k8s-oomkilled", C.OOM_HOST, R.CAUSE, ("OOMKilled",),
    "Kubernetes: the container was OOM-killed", rank=95, remedy=_K8S_OOM, source="Kubernetes container status reason",
    fixture="      Reason:       OOMKilled")
add("DD801", "k8s-node-low-memory", C.OOM_HOST, R.CAUSE,
    ("The node was low on resource: memory", "low on resource: memory", "Memory cgroup out of memory"),
    "Kubernetes evicted the pod: its node ran low on memory", rank=90, remedy=_K8S_OOM + " Node-pressure eviction also "
    "hits pods without a memory request first: set requests equal to limits.", source="kubelet eviction manager",
    fixture="Warning  Evicted  2m  kubelet  The node was low on resource: memory.")
add("DD802", "k8s-evicted", C.PREEMPTION, R.CAUSE, ("Evicted", "Preempting", "preempted by", "Preempted"),
    "Kubernetes evicted or preempted the pod", regex=r"\bEvicted\b|\bPreempt(?:ing|ed)\b|preempted by", rank=70,
    remedy="The pod was removed by the cluster (node pressure, a higher-priority pod, a drain): restart from the last "
    "checkpoint; give the job a priority class or reserved capacity.", source="kubelet / kube-scheduler event reasons",
    fixture="Warning  Preempting  5m  default-scheduler  Preempted by default/high-prio-pod on node n1")
add("DD803", "k8s-insufficient", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("FailedScheduling", "Insufficient nvidia.com/gpu", "Insufficient cpu", "Insufficient memory", "nodes are available"),
    "Kubernetes cannot schedule the pod: no node has the resources", regex=r"Insufficient [\w./]+|FailedScheduling|nodes are available",
    rank=75, remedy="No node has the requested GPUs/CPU/memory free: free capacity (old pods/jobs still holding GPUs), add "
    "nodes, or request less.", source="kube-scheduler FailedScheduling events",
    fixture="Warning  FailedScheduling  2s (x57 over 15m)  default-scheduler  0/6 nodes are available: 6 Insufficient nvidia.com/gpu.")
add("DD804", "k8s-backoff", C.PEER_CRASHED, R.SYMPTOM, ("CrashLoopBackOff", "Back-off restarting failed container", "BackOff"),
    "Kubernetes keeps restarting a crashing container", rank=30,
    remedy="The container crashes at start: read its previous log (`kubectl logs --previous`) for the first error.",
    source="kubelet BackOff events", fixture="Warning  BackOff  1m  kubelet  Back-off restarting failed container")
add("DD805", "k8s-killing-container", C.OOM_HOST, R.CONTEXT, ("Killing container with id", "Need to kill Pod"),
    "Kubernetes killed a container", rank=20, remedy="See the event's reason (eviction, OOM, a failed probe).",
    source="kubelet events", fixture="Killing container with id docker://notebook:Need to kill Pod")
add("DD806", "k8s-exit-code", C.PEER_CRASHED, R.CONTEXT, ("Exit Code:",), "kubectl describe: a container's exit code",
    regex=r"Exit Code:\s+(?P<code>\d+)", rank=10, remedy="Read the code: 137 SIGKILL (OOM/eviction), 143 SIGTERM, 139 SIGSEGV, 1 an error.",
    source="kubectl describe pod", fixture="      Exit Code:    137")
add("DD807", "k8s-api-unreachable", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("Failed to list *v1.", "dial tcp", "Failed to watch *v1."),
    "A pod cannot reach the Kubernetes API server", regex=r"Failed to (?:list|watch) \*v1\.\w+.*(?:connection refused|i/o timeout|no route)|dial tcp [\d.]+:443",
    rank=70, remedy="Traffic from this pod to the API server is blocked (a network policy, a service mesh sidecar not yet "
    "ready, a firewall): allow it, or disable sidecar injection for the job's pods.", source="client-go reflector errors",
    fixture="Failed to list *v1.Pod: Get https://10.43.0.1:443/api/v1/namespaces/a/pods: dial tcp 10.43.0.1:443: connect: connection refused")
add("DD808", "k8s-replica-oom", C.OOM_HOST, R.CAUSE, ("ran out-of-memory and exited", "ran out of memory and exited",
                                                     "out-of-memory and exited with a non-zero status"),
    "The platform reports a replica ran out of memory", regex=r"replica (?P<job>\w+) (?P<index>\d+) ran out",
    rank=95, remedy=_K8S_OOM, source="Cloud ML Engine / Vertex AI job status",
    fixture="The replica master 0 ran out-of-memory and exited with a non-zero status of 247.", expect="master:0")
add("DD809", "k8s-image-pull", C.CONFIG_TF_CONFIG, R.CAUSE, ("ErrImagePull", "ImagePullBackOff", "Failed to pull image"),
    "A pod's image cannot be pulled", rank=70, remedy="Fix the image name/tag or the registry credentials.",
    source="kubelet image events", fixture="Warning  Failed  1m  kubelet  Failed to pull image \"tf:2.21\": not found")
add("DD810", "k8s-pod-running", C.OTHER, R.BENIGN, ("1/1       Running", "1/1     Running"),
    "kubectl get pods: a pod running", rank=0, remedy="Nothing to do.", source="kubectl get pods",
    fixture="kf-tfbenchmarks-1-worker-0   1/1     Running   0          172m")

# -- Slurm ---------------------------------------------------------------------------------------------------
add("DD820", "slurm-time-limit", C.PREEMPTION, R.CAUSE, ("DUE TO TIME LIMIT",),
    "Slurm cancelled the job at its time limit", rank=85,
    remedy="The job hit its time limit: ask for more time (`--time`), or checkpoint and resubmit (`--requeue`, "
    "`--signal=USR1@120` to save before the kill).", source="slurmstepd", fixture="slurmstepd: error: *** JOB 1234 ON n1 CANCELLED AT 2023-01-01T00:00:00 DUE TO TIME LIMIT ***")
add("DD821", "slurm-preemption", C.PREEMPTION, R.CAUSE, ("DUE TO PREEMPTION", "CANCELLED AT", "DUE TO NODE FAILURE"),
    "Slurm cancelled the job step (preemption, node failure or scancel)", regex=r"\*\*\* (?:JOB|STEP) [\d.]+ ON \S+ CANCELLED AT \S+(?: DUE TO (?P<why>[A-Z ]+))?",
    rank=60, remedy="The step was cancelled from outside (preemption, scancel, a node failure): resubmit with `--requeue` "
    "and resume from the last checkpoint.", source="slurmstepd",
    fixture="slurmstepd: error: *** STEP 4714782.0 ON ib12gpu-001 CANCELLED AT 2023-11-29T15:47:21 ***")
add("DD822", "slurm-oom", C.OOM_HOST, R.CAUSE, ("oom-kill event", "Out Of Memory", "OUT_OF_MEMORY", "Exceeded job memory limit",
                                               "Exceeded step memory limit"),
    "Slurm's cgroup OOM handler killed a task", regex=r"task (?P<rank>\d+): Out Of Memory|oom-kill event|\bOUT_OF_MEMORY\b|Exceeded (?:job|step) memory limit",
    rank=95, remedy="The step exceeded its memory: ask for more (`--mem`, `--mem-per-cpu`), run `--exclusive`, or lower "
    "the batch size and buffers.", source="slurmstepd / srun", expect="rank:4",
    fixture="srun: error: Orion-01-01: task 4: Out Of Memory")
add("DD823", "srun-task-exited", C.PEER_CRASHED, R.CAUSE, ("srun: error:",),
    "srun reports a task that exited with an error", regex=r"srun: error: \S+: tasks? (?P<rank>\d+)(?:[-,]\d+)*: (?:Exited with exit code|Killed|Terminated|Segmentation)",
    rank=40, remedy="That task failed first: read its own output (`srun --label` prefixes) for the cause.",
    source="srun", expect="rank:1", fixture="srun: error: node1: task 1: Exited with exit code 1")
add("DD824", "slurm-terminating-step", C.PEER_CRASHED, R.SYMPTOM, ("srun: Terminating job step", "srun: Job step aborted",
                                                                  "Force Terminated job step"),
    "srun tears the step down after a task failed", rank=10,
    remedy="A consequence: the first failing task is named by an earlier line.", source="srun",
    fixture="srun: Terminating job step 3495064.0")

# -- YARN / Spark / TonY / TensorFlowOnSpark / Determined ------------------------------------------------------------
add("DD830", "yarn-memory-kill", C.OOM_HOST, R.CAUSE, ("Container killed by YARN for", "exceeding memory limits",
                                                      "is running beyond physical memory limits"),
    "YARN killed the container for exceeding its memory limit", rank=95,
    remedy="Raise the container's memory (spark.executor.memory / spark.yarn.executor.memoryOverhead, TonY's "
    "<job>.memory) or lower the batch size and buffers.", source="Hadoop YARN NodeManager / Spark YarnAllocator",
    fixture="WARN YarnAllocator: Container killed by YARN for exceeding memory limits. 12.0 GB of 12 GB physical memory used.")
add("DD831", "yarn-lost-node", C.PEER_CRASHED, R.CAUSE, ("Container released on a *lost* node", "exitStatus = -100",
                                                        "on a *lost* node"),
    "YARN lost the node that ran a container", rank=70,
    remedy="The node hosting that task dropped out of the cluster (NodeManager lost): restart the job from its last "
    "checkpoint; check the node's health.", source="Hadoop YARN ContainerExitStatus.ABORTED (-100)",
    fixture="ERROR ApplicationMaster:1000 - Container released on a *lost* node")
add("DD832", "tony-task-exit", C.PEER_CRASHED, R.CONTEXT, ("for task ", "exited with"),
    "TonY: a task's container finished with a status",
    regex=r"for task (?P<job>\w+):(?P<index>\d+) finished with exitStatus (?P<code>-?\d+)|Job (?P<job2>\w+):(?P<index2>\d+) exited with (?P<code2>-?\d+)",
    rank=15, remedy="Read the first task that exited with a non-zero status.", source="TonY ApplicationMaster",
    fixture="INFO  TonySession:252 - Job worker:5 exited with -100", expect="worker:5")
add("DD833", "spark-lost-executor", C.PEER_CRASHED, R.SYMPTOM, ("Lost executor",),
    "Spark lost an executor (and the TF node it hosted)", rank=30,
    remedy="The executor died: its reason follows on the same line (memory limits, a lost node).", source="Spark scheduler",
    fixture="ERROR YarnClusterScheduler: Lost executor 1 on hdpdatanode36: Container killed by YARN for exceeding memory limits.")
add("DD834", "container-nonzero-exit", C.PEER_CRASHED, R.CONTEXT, ("container failed with non-zero exit code",),
    "A container exited with a non-zero code", rank=15, remedy="Read the code: 137 SIGKILL, 139 SIGSEGV, 132 SIGILL, 1 an error.",
    source="Determined / container runtimes", fixture="INFO: container failed with non-zero exit code: 1 (exit code 1)")
add("DD835", "tfos-reservation", C.CONFIG_TF_CONFIG, R.CONTEXT, ("'job_name':",),
    "TensorFlowOnSpark: a cluster reservation (which executor hosts which TF task)",
    regex=r"'host': '[^']+', 'ppid': \d+, 'job_name': '\w+'", rank=0,
    remedy="Each TF task needs its own executor: set num_executors to the cluster size and one task per executor "
    "(spark.executor.cores = spark.task.cpus).", source="TensorFlowOnSpark TFCluster reservations",
    fixture="{'addr': ('worker1', 33132), 'task_index': 0, 'port': 50483, 'host': 'worker1', 'ppid': 25378, 'job_name': 'ps', 'tb_pid': 0}")
