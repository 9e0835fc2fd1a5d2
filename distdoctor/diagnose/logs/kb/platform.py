"""Schedulers and platforms: Kubernetes (kubectl describe/get/events, TFJob), Slurm, YARN/Spark, TonY, launchers."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_K8S_OOM = ("The container exceeded its memory limit: raise `resources.limits.memory` (and requests) of that replica, "
            "or lower the batch size and input buffers.")

add("DD800", "k8s-oomkilled", C.OOM_HOST, R.CAUSE, ("OOMKilled",),
    "Kubernetes: the container was OOM-killed", rank=95, remedy=_K8S_OOM,
    component="kubernetes", versions="all", source="Kubernetes container status reason",
    fixture="      Reason:       OOMKilled")
add("DD801", "k8s-node-low-memory", C.OOM_HOST, R.CAUSE,
    ("The node was low on resource: memory", "low on resource: memory", "Memory cgroup out of memory"),
    "Kubernetes evicted the pod: its node ran low on memory", rank=90, remedy=_K8S_OOM + " Node-pressure eviction also "
    "hits pods without a memory request first: set requests equal to limits.",
    component="kubernetes", versions="all", source="kubelet eviction manager",
    fixture="Warning  Evicted  2m  kubelet  The node was low on resource: memory.")
add("DD802", "k8s-evicted", C.PREEMPTION, R.CAUSE, ("Evicted", "Preempting", "preempted by", "Preempted"),
    # above the scheduler's FailedScheduling: a pod removed from its node and then not rescheduled (the preemptor holds
    # the room) was preempted first
    "Kubernetes evicted or preempted the pod", regex=r"\bEvicted\b|\bPreempt(?:ing|ed)\b|preempted by", rank=78,
    remedy="The pod was removed by the cluster (node pressure, a higher-priority pod, a drain): restart from the last "
    "checkpoint; give the job a priority class or reserved capacity.",
    component="kubernetes", versions="all", source="kubelet / kube-scheduler event reasons",
    fixture="Warning  Preempting  5m  default-scheduler  Preempted by default/high-prio-pod on node n1")
add("DD803", "k8s-insufficient", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("FailedScheduling", "Insufficient nvidia.com/gpu", "Insufficient cpu", "Insufficient memory", "nodes are available"),
    "Kubernetes cannot schedule the pod: no node has the resources",
    # a FailedScheduling whose only reasons are placement rules (selectors, taints, claims) is k8s.py's, not capacity
    # (platform_msgs.py holds the host-port and volume-topology reasons)
    regex=r"Insufficient [\w./]+|^(?!.*(?:didn't match|untolerated taint|didn't tolerate|unbound immediate|"
          r"didn't have free ports|volume node affinity conflict|didn't find available persistent volumes))"
          r".*(?:FailedScheduling|nodes are available)",
    rank=75, remedy="No node has the requested GPUs/CPU/memory free: free capacity (old pods/jobs still holding GPUs), add "
    "nodes, or request less.", component="kubernetes", versions="all", source="kube-scheduler FailedScheduling events",
    fixture="Warning  FailedScheduling  2s (x57 over 15m)  default-scheduler  0/6 nodes are available: 6 Insufficient nvidia.com/gpu.")
add("DD804", "k8s-backoff", C.PEER_CRASHED, R.SYMPTOM, ("CrashLoopBackOff", "Back-off restarting failed container", "BackOff"),
    "Kubernetes keeps restarting a crashing container", rank=30,
    remedy="The container crashes at start: read its previous log (`kubectl logs --previous`) for the first error.",
    component="kubernetes", versions="all", source="kubelet BackOff events", fixture="Warning  BackOff  1m  kubelet  Back-off restarting failed container")
add("DD805", "k8s-killing-container", C.OOM_HOST, R.CONTEXT, ("Killing container with id", "Need to kill Pod"),
    "Kubernetes killed a container", rank=20, remedy="See the event's reason (eviction, OOM, a failed probe).",
    component="kubernetes", versions="<=1.14 (dockershim wording)", source="kubelet events", fixture="Killing container with id docker://notebook:Need to kill Pod")
add("DD806", "k8s-exit-code", C.PEER_CRASHED, R.CONTEXT, ("Exit Code:",), "kubectl describe: a container's exit code",
    regex=r"Exit Code:\s+(?P<code>\d+)", rank=10, remedy="Read the code: 137 SIGKILL (OOM/eviction), 143 SIGTERM, 139 SIGSEGV, 1 an error.",
    component="kubernetes", versions="all", source="kubectl describe pod", fixture="      Exit Code:    137")
add("DD807", "k8s-api-unreachable", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("Failed to list *v1.", "dial tcp", "Failed to watch *v1."),
    "A pod cannot reach the Kubernetes API server", regex=r"Failed to (?:list|watch) \*v1\.\w+.*(?:connection refused|i/o timeout|no route)|dial tcp [\d.]+:443",
    rank=70, remedy="Traffic from this pod to the API server is blocked (a network policy, a service mesh sidecar not yet "
    "ready, a firewall): allow it, or disable sidecar injection for the job's pods.",
    component="kubernetes", versions="all", source="client-go reflector errors",
    fixture="Failed to list *v1.Pod: Get https://10.43.0.1:443/api/v1/namespaces/a/pods: dial tcp 10.43.0.1:443: connect: connection refused")
add("DD808", "k8s-replica-oom", C.OOM_HOST, R.CAUSE, ("ran out-of-memory and exited", "ran out of memory and exited",
                                                     "out-of-memory and exited with a non-zero status"),
    "The platform reports a replica ran out of memory", regex=r"replica (?P<job>\w+) (?P<index>\d+) ran out",
    rank=95, remedy=_K8S_OOM,
    component="cloud-platform", versions="all", source="Cloud ML Engine / Vertex AI job status",
    fixture="The replica master 0 ran out-of-memory and exited with a non-zero status of 247.", expect="master:0")
add("DD809", "k8s-image-pull", C.OTHER, R.CAUSE, ("ErrImagePull", "ImagePullBackOff", "Failed to pull image"),
    "A pod's image cannot be pulled", rank=70, remedy="Fix the image name/tag or the registry credentials.",
    component="kubernetes", versions="all", source="kubelet image events", fixture="Warning  Failed  1m  kubelet  Failed to pull image \"tf:2.21\": not found")
add("DD810", "k8s-pod-running", C.OTHER, R.BENIGN, ("1/1       Running", "1/1     Running"),
    "kubectl get pods: a pod running", rank=0, remedy="Nothing to do.",
    component="kubernetes", versions="all", source="kubectl get pods",
    fixture="kf-tfbenchmarks-1-worker-0   1/1     Running   0          172m")


# -- more Kubernetes (kubelet / controller events) ------------------------------------------------------------------
add("DD811", "k8s-liveness-restart", C.PEER_UNRESPONSIVE, R.CAUSE, ("failed liveness probe, will be restarted", "failed startup probe, will be restarted"),
    "Kubernetes restarted a container because its liveness probe kept failing", rank=60,
    remedy="The task stopped answering its probe (frozen, overloaded, or blocked in a long collective/checkpoint) or "
    "the probe is too strict: check the task's state, and give the probe a longer timeout/failureThreshold.",
    component="kubernetes", versions=">=1.16", source="kubelet (kuberuntime) Killing event",
    fixture="Normal   Killing    2m    kubelet  Container tensorflow failed liveness probe, will be restarted")
add("DD837", "k8s-probe-failed", C.PEER_UNRESPONSIVE, R.CONTEXT, ("Liveness probe failed", "Readiness probe failed"),
    "A container's liveness or readiness probe failed once", rank=15,
    remedy="One failed probe is not a restart; repeated ones are (see 'failed liveness probe, will be restarted').",
    component="kubernetes", versions="all", source="kubelet prober Unhealthy events",
    fixture="Warning  Unhealthy  2m (x3 over 3m)  kubelet  Liveness probe failed: Get \"http://10.1.2.3:8080/healthz\": "
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
add("DD812", "k8s-mount-failed", C.OTHER, R.CAUSE,
    ("MountVolume.SetUp failed for volume", "Unable to attach or mount volumes", "MountVolume.MountDevice failed"),
    "Kubernetes could not mount a volume for the pod", rank=65,
    remedy="The volume (PVC, NFS, secret, configMap) the pod needs is missing or cannot be attached on that node: check "
    "the volume's name, its access mode (ReadWriteOnce cannot be shared across nodes) and the storage driver.",
    component="kubernetes", versions="all", source="kubelet volume manager events",
    fixture="Warning  FailedMount  1m  kubelet  MountVolume.SetUp failed for volume \"data\" : configmap \"train-config\" not found")
add("DD813", "k8s-node-not-ready", C.PEER_CRASHED, R.CAUSE, ("NodeNotReady", "Node is not ready"),
    "The node running a task stopped reporting to Kubernetes", rank=60,
    remedy="The node itself failed (kubelet down, network partition, power): its pods are lost; restart the job from "
    "the last checkpoint and check the node.",
    component="kubernetes", versions="all", source="node lifecycle controller events",
    fixture="Warning  NodeNotReady  3m  node-controller  Node is not ready")
add("DD814", "k8s-job-deadline", C.PREEMPTION, R.CAUSE, ("Job was active longer than specified deadline",),
    "Kubernetes stopped the job at its activeDeadlineSeconds", rank=80,
    remedy="The job ran past activeDeadlineSeconds (or runPolicy.activeDeadlineSeconds of a TFJob): raise it, or "
    "checkpoint and resume.",
    component="kubernetes", versions="all", source="Kubernetes job controller (DeadlineExceeded)",
    fixture="Warning  DeadlineExceeded  1m  job-controller  Job was active longer than specified deadline")
add("DD815", "k8s-backoff-limit", C.PEER_CRASHED, R.SYMPTOM, ("Job has reached the specified backoff limit", "BackoffLimitExceeded"),
    "Kubernetes gave up restarting the job's failing pods", rank=20,
    remedy="A consequence: the pods' own failures (their previous logs) say why they failed.",
    component="kubernetes", versions="all", source="Kubernetes job controller (BackoffLimitExceeded)",
    fixture="Warning  BackoffLimitExceeded  1m  job-controller  Job has reached the specified backoff limit")
add("DD816", "k8s-ephemeral-storage", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("low on resource: ephemeral-storage", "ephemeral local storage usage exceeds"),
    "Kubernetes evicted the pod for local disk usage", rank=90,
    remedy="The pod wrote more to its local disk (logs, checkpoints, /tmp, caches) than allowed: write to a volume, "
    "or raise the ephemeral-storage request/limit.",
    component="kubernetes", versions=">=1.8", source="kubelet eviction manager",
    fixture="Warning  Evicted  5m  kubelet  The node was low on resource: ephemeral-storage. Container worker was using 52Gi, which exceeds its request of 0.")
# the job's pod spec names what this cluster does not have (a Secret, a ConfigMap, a key): the job's configuration is
# wrong for the cluster, the same class of fault as an image that cannot be pulled (DD809)
add("DD817", "k8s-container-config", C.CONFIG_TF_CONFIG, R.CAUSE, ("CreateContainerConfigError", "CreateContainerError"),
    "Kubernetes could not create the container from its spec", rank=65,
    remedy="A referenced configMap/secret/key is missing or the container spec is invalid: `kubectl describe pod` gives "
    "the message.", component="kubernetes", versions="all", source="kubelet container status reasons",
    fixture="worker-1   0/1     CreateContainerConfigError   0          2m")
add("DD818", "gpu-container-runtime", C.OTHER, R.CAUSE,
    ("nvidia-container-cli: initialization error", "nvidia-container-cli: device error",
     "could not select device driver \"\" with capabilities: [[gpu]]"),
    "The container runtime could not give the container its GPU", rank=70,
    remedy="That node's NVIDIA driver / container toolkit is broken or missing: fix it (`nvidia-smi` on the host, the "
    "device plugin) or keep the job off that node.",
    component="container-runtime", versions="all", source="NVIDIA container toolkit (libnvidia-container) / Docker; category from the real corpus: "
    "its three cases were a host's setup (no driver loaded, no container toolkit, host GPU indices inside an "
    "allocation), not tasks that disagree",
    fixture="OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: "
            "container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: "
            "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown")
add("DD819", "tfjob-replica-failed", C.PEER_CRASHED, R.SYMPTOM, ("replica(s) failed",),
    "The training operator marked the TFJob failed because replicas failed",
    regex=r"(?:is|has) fail(?:ed|ing) because (?:\d+ )?\"?(?P<replica>\w+)\"? replica\(s\) failed", rank=30,
    remedy="A consequence: read the failed replica's own log (`kubectl logs --previous`) and its pod's events.",
    component="training-operator", versions="all", source="Kubeflow training-operator TFJob controller status message",
    fixture="TFJob default/mnist is failed because 1 Worker replica(s) failed.")

# -- Slurm ---------------------------------------------------------------------------------------------------
add("DD820", "slurm-time-limit", C.PREEMPTION, R.CAUSE, ("DUE TO TIME LIMIT",),
    "Slurm cancelled the job at its time limit", rank=85,
    remedy="The job hit its time limit: ask for more time (`--time`), or checkpoint and resubmit (`--requeue`, "
    "`--signal=USR1@120` to save before the kill).",
    component="slurm", versions="all", source="slurmstepd", fixture="slurmstepd: error: *** JOB 1234 ON n1 CANCELLED AT 2023-01-01T00:00:00 DUE TO TIME LIMIT ***")
add("DD821", "slurm-preemption", C.PREEMPTION, R.CAUSE, ("DUE TO PREEMPTION", "CANCELLED AT"),
    "Slurm cancelled the job step (preemption or scancel)", regex=r"\*\*\* (?:JOB|STEP) [\d.]+ ON \S+ CANCELLED AT (?!\S+ DUE TO TASK FAILURE)\S+(?: DUE TO (?P<why>[A-Z ]+))?",
    # slurmstepd's own record of why the step ended: srun's "Job step aborted" printed just before it is its effect
    rank=70, remedy="The step was cancelled from outside (preemption, scancel, a node failure): resubmit with `--requeue` "
    "and resume from the last checkpoint.", component="slurm", versions="all", source="slurmstepd",
    fixture="slurmstepd: error: *** STEP 4714782.0 ON ib12gpu-001 CANCELLED AT 2023-11-29T15:47:21 ***")
add("DD822", "slurm-oom", C.OOM_HOST, R.CAUSE, ("oom-kill event", "Out Of Memory", "OUT_OF_MEMORY", "Exceeded job memory limit",
                                               "Exceeded step memory limit"),
    "Slurm's cgroup OOM handler killed a task", regex=r"tasks? (?P<rank>\d+)(?:[-,]\d+)*: Out Of Memory|oom-kill event|\bOUT_OF_MEMORY\b|Exceeded (?:job|step) memory limit",
    rank=95, remedy="The step exceeded its memory: ask for more (`--mem`, `--mem-per-cpu`), run `--exclusive`, or lower "
    "the batch size and buffers.", component="slurm", versions="all", source="slurmstepd / srun", expect="rank:4",
    fixture="srun: error: Orion-01-01: task 4: Out Of Memory")
add("DD823", "srun-task-exited", C.PEER_CRASHED, R.CAUSE, ("srun: error:",),
    "srun reports a task that a signal ended", regex=r"srun: error: \S+: tasks? (?P<rank>\d+)(?:[-,]\d+)*: (?:Killed|Terminated|Segmentation)",
    rank=40, remedy="That task failed first: read its own output (`srun --label` prefixes) for the cause.",
    component="slurm", versions="all", source="srun", expect="rank:1", fixture="srun: error: node1: task 1: Killed")
# the same report when the task exited on its own with a non-zero status: which task, not why (the learned reading
# decides its category: learned.DECIDED_BY_MODEL)
add("DD1510", "srun-task-exit-code", C.PEER_CRASHED, R.CAUSE, ("srun: error:",),
    "srun reports a task that exited with a non-zero status",
    regex=r"srun: error: \S+: tasks? (?P<rank>\d+)(?:[-,]\d+)*: Exited with exit code", rank=40,
    remedy="That task failed first: read its own output (`srun --label` prefixes) for the cause.",
    component="slurm", versions="all", source="srun (Slurm src/srun: \"%s: task %s: Exited with exit code %d\")",
    expect="rank:1", fixture="srun: error: node1: task 1: Exited with exit code 1")
add("DD824", "slurm-terminating-step", C.PEER_CRASHED, R.SYMPTOM, ("srun: Terminating job step", "srun: Job step aborted",
                                                                  "Force Terminated job step", "Force Terminated StepId=",
                                                                  "srun: Terminating StepId="),
    "srun tears the step down after a task failed", rank=10,
    remedy="A consequence: the first failing task is named by an earlier line.",
    component="slurm", versions="all", source="srun",
    fixture="srun: Terminating job step 3495064.0")
add("DD825", "slurm-node-failure", C.PEER_CRASHED, R.CAUSE, ("srun: error: Node failure on",),
    "Slurm lost a node of the job step", rank=70,
    remedy="The node failed (Slurm marks it DOWN): resubmit (--requeue / --no-kill) and resume from the last checkpoint.",
    component="slurm", versions="all", source="srun (Slurm src/srun)", fixture="srun: error: Node failure on node12")
add("DD826", "slurm-unable-to-allocate", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Unable to allocate resources", "Batch job submission failed"),
    "Slurm refused the job's resource request", rank=65,
    remedy="The request cannot be met (node configuration, GPUs per node, partition or QOS limits): ask for what the "
    "partition has (`sinfo -o '%P %G %m %c'`).", component="slurm", versions="all", source="srun / sbatch",
    fixture="srun: error: Unable to allocate resources: Requested nodes are busy")
add("DD827", "slurm-execve-failed", C.OTHER, R.CAUSE, ("execve():", "Slurmd could not execve job"),
    "Slurm could not execute the task's program on a node",
    regex=r"execve\(\): \S+: (?:No such file or directory|Permission denied)|Slurmd could not execve job",
    rank=65, remedy="The program (python, the script) is missing at that path on the node: install the same environment "
    "on every node, or use absolute paths on shared storage.",
    component="slurm", versions="all", source="slurmstepd (exec_task); category from the real corpus: its three "
    "cases were a node's spool directory, a site module that wraps python, and a launcher wrapper's command line, "
    "none a version",
    fixture="slurmstepd: error: execve(): python3: No such file or directory")
add("DD828", "slurm-step-creation-disabled", C.RESOURCE_EXHAUSTION, R.CONTEXT, ("Job step creation temporarily disabled",),
    "srun waits for resources to start a job step", rank=10,
    remedy="Another step holds the allocation's resources: if it never proceeds, an earlier step is still running "
    "(or was not cleaned up).",
    component="slurm", versions="all", source="srun", fixture="srun: Job step creation temporarily disabled, retrying (Requested nodes are busy)")
add("DD829", "tf-slurm-resolver", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("Not running inside a SLURM step", "Requested more GPUs per node than available", "were assigned."),
    "TensorFlow's SlurmClusterResolver cannot build the cluster from the Slurm environment",
    regex=r"Not running inside a SLURM step|Requested more GPUs per node than available|Requested \d+ tasks but only \d+ were assigned",
    rank=70, remedy="Run the program inside a Slurm step (srun), with as many tasks as the resolver's jobs ask for and "
    "no more GPUs per task than the nodes have.",
    component="tensorflow", versions=">=1.14", source="TensorFlow distribute/cluster_resolver/slurm_cluster_resolver.py (triggered on this machine)",
    fixture="RuntimeError: SLURM_PROCID not found in environment. Not running inside a SLURM step?")

# -- YARN / Spark / TonY / TensorFlowOnSpark / Determined ------------------------------------------------------------
add("DD830", "yarn-memory-kill", C.OOM_HOST, R.CAUSE, ("Container killed by YARN for", "exceeding memory limits",
                                                      "is running beyond physical memory limits"),
    "YARN killed the container for exceeding its memory limit", rank=95,
    remedy="Raise the container's memory (spark.executor.memory / spark.yarn.executor.memoryOverhead, TonY's "
    "<job>.memory) or lower the batch size and buffers.",
    component="yarn", versions="all", source="Hadoop YARN NodeManager / Spark YarnAllocator",
    fixture="WARN YarnAllocator: Container killed by YARN for exceeding memory limits. 12.0 GB of 12 GB physical memory used.")
add("DD831", "yarn-lost-node", C.PEER_CRASHED, R.CAUSE, ("Container released on a *lost* node", "exitStatus = -100",
                                                        "on a *lost* node"),
    "YARN lost the node that ran a container", rank=70,
    remedy="The node hosting that task dropped out of the cluster (NodeManager lost): restart the job from its last "
    "checkpoint; check the node's health.",
    component="yarn", versions="all", source="Hadoop YARN ContainerExitStatus.ABORTED (-100)",
    fixture="ERROR ApplicationMaster:1000 - Container released on a *lost* node")
add("DD832", "tony-task-exit", C.PEER_CRASHED, R.CONTEXT, ("for task ", "exited with"),
    "TonY: a task's container finished with a status",
    regex=r"for task (?P<job>\w+):(?P<index>\d+) finished with exitStatus (?P<code>-?\d+)|Job (?P<job2>\w+):(?P<index2>\d+) exited with (?P<code2>-?\d+)",
    rank=15, remedy="Read the first task that exited with a non-zero status.",
    component="tony", versions="all", source="TonY ApplicationMaster",
    fixture="INFO  TonySession:252 - Job worker:5 exited with -100", expect="worker:5")
add("DD833", "spark-lost-executor", C.PEER_CRASHED, R.SYMPTOM, ("Lost executor",),
    "Spark lost an executor (and the TF node it hosted)", rank=30,
    remedy="The executor died: its reason follows on the same line (memory limits, a lost node).",
    component="spark", versions="all", source="Spark scheduler",
    fixture="ERROR YarnClusterScheduler: Lost executor 1 on hdpdatanode36: Container killed by YARN for exceeding memory limits.")
add("DD834", "container-nonzero-exit", C.PEER_CRASHED, R.CONTEXT, ("container failed with non-zero exit code",),
    "A container exited with a non-zero code", rank=15, remedy="Read the code: 137 SIGKILL, 139 SIGSEGV, 132 SIGILL, 1 an error.",
    component="container-runtime", versions="all", source="Determined / container runtimes", fixture="INFO: container failed with non-zero exit code: 1 (exit code 1)")
add("DD835", "tfos-reservation", C.CONFIG_TF_CONFIG, R.CONTEXT, ("'job_name':",),
    "TensorFlowOnSpark: a cluster reservation (which executor hosts which TF task)",
    regex=r"'host': '[^']+', 'ppid': \d+, 'job_name': '\w+'", rank=0,
    remedy="Each TF task needs its own executor: set num_executors to the cluster size and one task per executor "
    "(spark.executor.cores = spark.task.cpus).",
    component="tfos", versions="all", source="TensorFlowOnSpark TFCluster reservations",
    fixture="{'addr': ('worker1', 33132), 'task_index': 0, 'port': 50483, 'host': 'worker1', 'ppid': 25378, 'job_name': 'ps', 'tb_pid': 0}")

# -- coverage audit (message probes, tests/probes/messages.tsv) ------------------------------------------------------
add("DD838", "k8s-disk-pressure", C.RESOURCE_EXHAUSTION, R.CAUSE, ("The node had condition: [DiskPressure]",
                                                                   "The node was low on resource: [DiskPressure]"),
    "Kubernetes evicted the pod because its node ran low on disk", rank=90,
    remedy="The node's disk (images, container logs, emptyDir, checkpoints on local disk) is full: write large files to a "
    "volume, set ephemeral-storage requests/limits, and clean the node.",
    component="kubernetes", versions="all", source="kubelet eviction manager (node condition message)",
    fixture="Warning  Evicted  12m  kubelet  The node had condition: [DiskPressure].")
add("DD839", "slurm-node-fail", C.PEER_CRASHED, R.CAUSE, ("DUE TO NODE FAILURE",),
    "Slurm cancelled the job because one of its nodes failed", rank=72,   # the cancel record that names its reason
    remedy="A node of the allocation failed (Slurm marked it DOWN): the job lost that host, not its own fault; resubmit "
    "(`--requeue`, `--no-kill` to keep the rest) and resume from the last checkpoint.",
    component="slurm", versions="all", source="slurmstepd",
    fixture="slurmstepd: error: *** JOB 812345 ON gpu-node06 CANCELLED AT 2023-04-02T11:20:31 DUE TO NODE FAILURE, SEE "
            "SLURMCTLD LOG FOR DETAILS ***")
add("DD836", "gpu-driver-too-old", C.VERSION_MISMATCH, R.CAUSE,
    ("nvidia-container-cli: requirement error", "CUDA driver version is insufficient for CUDA runtime version",
     "Error: unsupported CUDA version: driver"),
    "The node's NVIDIA driver is older than the CUDA version the container or TensorFlow needs", rank=80,
    remedy="Update the driver on that node (or use an image built for an older CUDA); every node that runs the job "
    "needs a driver at least as new as the image's CUDA.",
    component="container-runtime", versions="all", source="NVIDIA container toolkit / CUDA runtime error strings; "
    "nvidia-docker 1.x (\"unsupported CUDA version: driver %s < image %s\")",
    fixture="nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.8, please update your driver to a "
            "newer version, or use an earlier cuda container: unknown")
add("DD840", "k8s-node-shutdown", C.PREEMPTION, R.CAUSE, ("imminent node shutdown", "the node is shutting down"),
    "Kubernetes stopped the pod because its node is shutting down (spot/preemptible reclaim, maintenance)", rank=75,
    remedy="The node went away under the pod (a preemptible/spot node reclaimed, or maintenance): restart from the last "
    "checkpoint; handle SIGTERM to save one in the grace period.",
    component="kubernetes", versions=">=1.21", source="kubelet graceful node shutdown",
    fixture="Message: Pod was terminated in response to imminent node shutdown.")
add("DD841", "k8s-pod-error-row", C.PEER_CRASHED, R.CAUSE, ("Error",),
    "kubectl get pods: a pod's container exited with an error",
    regex=r"^\s*(?:pod/)?[a-z0-9][a-z0-9.-]*\s+\d+/\d+\s+Error\s+\d+", rank=30,
    remedy="The container exited non-zero by itself (an OOM kill would read OOMKilled, an eviction Evicted): read its "
    "log (`kubectl logs POD --previous`) for the first error.",
    component="kubernetes", versions="all", source="kubectl get pods STATUS column (container "
    "terminated with reason Error)", fixture="pss-worker-1        0/1     Error     2          41m")
add("DD842", "k8s-job-succeeded", C.OTHER, R.CONTEXT, ("JobSucceeded", "successfully completed"),
    "The training operator records the job as succeeded",
    regex=r"\b(?:TF|MPI|PyTorch|MX|XGBoost|Paddle)?JobSucceeded\b|(?:TF|MPI|PyTorch)?Job \S+ successfully completed",
    rank=0, remedy="Nothing to do: restarts and back-offs before it were recovered from.",
    component="training-operator", versions="all", source="Kubeflow training-operator job conditions (reason TFJobSucceeded / JobSucceeded)",
    fixture='{"message":"TFJob default/mnist successfully completed.","reason":"TFJobSucceeded","status":"True","type":"Succeeded"}')
add("DD843", "k8s-pod-scheduled", C.OTHER, R.CONTEXT, ("Successfully assigned",),
    "The scheduler placed the pod on a node", rank=0,
    # the pod it placed (NAMESPACE/POD, the training operator's <job>-<replica type>-<index>), so that the
    # FailedScheduling wait of the same pod reads as over
    names=r"Successfully assigned (?:[\w.-]+/)?[\w.-]*?-(?P<job>chief|master|worker|ps|evaluator|launcher)-(?P<index>\d+)\b",
    remedy="Nothing to do: a FailedScheduling before it was a wait for room that ended.",
    component="kubernetes", versions="all", source="kube-scheduler Scheduled event", fixture="Normal   Scheduled   12m   default-scheduler  Successfully assigned default/dist-worker-1 to gpu-node-2")
add("DD844", "slurm-step-resources", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Unable to create step for job",),
    "Slurm cannot create the job step: the allocation lacks the memory or CPUs the step asks for",
    regex=r"Unable to create step for job \d+: (?:Memory required by task is not available|More processors requested "
          r"than permitted)", rank=75,
    remedy="The step asks for more than the job's allocation holds: lower --mem-per-cpu/--cpus-per-task of the srun, "
    "or ask sbatch for more (--mem, --cpus-per-task, more nodes).",
    component="slurm", versions="all", source="Slurm srun step creation errors",
    fixture="srun: error: Unable to create step for job 771332: Memory required by task is not available")
add("DD1010", "yarn-invalid-resource-request", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("InvalidResourceRequestException", "requested memory > max configured", "requested virtual cores > max configured"),
    "YARN refused a container request larger than the cluster's maximum allocation", rank=75,
    remedy="Ask for no more than the scheduler's maximum per container (yarn.scheduler.maximum-allocation-mb/-vcores, "
    "the GPU resource's maximum), or raise that maximum.",
    component="yarn", versions=">=2.2", source="apache/hadoop hadoop-yarn-server-resourcemanager SchedulerUtils.java (InvalidResourceRequestException)",
    fixture="org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException: Invalid resource request, requested "
            "memory < 0, or requested memory > max configured, requestedMemory=20480, maxMemory=8192")
add("DD1009", "ray-node-preempted", C.PREEMPTION, R.CAUSE, ("node was preempted",),
    "Ray reports that an actor's node was preempted", rank=85, regex=r"the actor's node was preempted",
    remedy="The node was taken away (a spot instance, a drain): restart from the last checkpoint; Ray Train's "
    "FailureConfig(max_failures=...) retries on another node.", component="ray", versions=">=2.10 (NodeDeathInfo)",
    source="ray-project/ray python/ray/exceptions.py (ActorDiedError with NodeDeathInfo)",
    fixture="(TrainController pid=79312) \tthe actor's node was preempted: preemption_integration_demo: simulating node drain")
# google-api-python-client's discovery cache: with oauth2client >= 4 or google-auth its file cache is unavailable, and it
# logs the ImportError it caught, traceback and all, at WARNING -- then goes on without the cache (every TPU and GCS
# client of that era printed it)
add("DD1520", "googleapiclient-file-cache", C.OTHER, R.BENIGN, ("file_cache is unavailable when using oauth2client",),
    "google-api-python-client's discovery cache is off (harmless: the client goes on without it)", rank=0,
    remedy="Nothing to do (pass cache_discovery=False to discovery.build to silence it).", component="cloud-platform",
    versions="google-api-python-client 1.6-1.12", source="googleapis/google-api-python-client "
    "googleapiclient/discovery_cache/file_cache.py (raise ImportError('file_cache is unavailable when using "
    "oauth2client >= 4.0.0 or google-auth')), logged by discovery_cache/__init__.py autodetect",
    fixture="ImportError: file_cache is unavailable when using oauth2client >= 4.0.0 or google-auth")
