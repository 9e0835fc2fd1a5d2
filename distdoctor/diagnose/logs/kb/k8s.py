"""Kubernetes (kubelet, scheduler, job controller) and the Kubeflow training operator: messages mined from their
sources (codes DD845-DD859, DD876-DD889, DD1456; the first Kubernetes signatures are in platform.py).

Kubernetes wording is from kubernetes/kubernetes (pkg/kubelet/eviction/helpers.go, pkg/kubelet/events/event.go,
pkg/kubelet/lifecycle/predicate.go, pkg/kubelet/oom/oom_watcher_linux.go, pkg/controller/job/job_controller.go,
pkg/controller/tainteviction) and kubernetes/api (core/v1 and batch/v1 reasons); the training operator's from
kubeflow/training-operator (pkg/controller.v1/*/..._controller.go, pkg/controller.v1/common/{job,pod}.go, v0.5-v1.8).
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

K8S = "kubernetes"
OP = "training-operator"
_EVICT = "kubernetes/kubernetes pkg/kubelet/eviction/helpers.go"
_OP_SRC = "kubeflow/training-operator pkg/controller.v1/"
_PLACE = ("No node can take the pod as it is specified: fix the pod's placement constraints (nodeSelector, affinity, "
          "tolerations) or the nodes' labels and taints, so that nodes with the resources the job needs match.")

# -- kubelet: evictions and admission ------------------------------------------------------------------------------
add("DD845", "k8s-emptydir-limit", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Usage of EmptyDir volume",),
    "Kubernetes evicted the pod: an emptyDir volume outgrew its sizeLimit", rank=88,
    remedy="The pod wrote more into an emptyDir (often /dev/shm as a memory-backed emptyDir, or a scratch dir) than its "
    "sizeLimit: raise the limit, or write large files to a persistent volume.",
    component=K8S, versions=">=1.8", source=_EVICT + " (emptyDirLimitEvictionMessageFmt)",
    fixture='Warning  Evicted  1m  kubelet  Usage of EmptyDir volume "dshm" exceeds the limit "1Gi".')
add("DD846", "k8s-container-ephemeral-limit", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("exceeded its local ephemeral storage limit",),
    "Kubernetes evicted the pod: a container wrote more to local disk than its ephemeral-storage limit", rank=88,
    remedy="The container's writable layer and logs outgrew limits.ephemeral-storage: write checkpoints and data to a "
    "volume, or raise the limit.", component=K8S, versions=">=1.8",
    source=_EVICT + " (containerEphemeralStorageMessageFmt)",
    fixture='Warning  Evicted  4m  kubelet  Container tensorflow exceeded its local ephemeral storage limit "20Gi".')
add("DD847", "k8s-system-oom", C.OOM_HOST, R.CAUSE, ("System OOM encountered",),
    "The kubelet saw the node's kernel OOM killer kill a process", rank=93,
    regex=r"System OOM encountered(?:, victim process: (?P<proc>\S+), pid: (?P<pid>\d+))?",
    remedy="The node ran out of memory (not only the container's limit): set memory requests equal to limits so the "
    "scheduler does not overcommit the node, and lower the task's memory use.",
    component=K8S, versions=">=1.5", source="kubernetes/kubernetes pkg/kubelet/oom/oom_watcher_linux.go (SystemOOM event)",
    fixture="Warning  SystemOOM  3m  kubelet  System OOM encountered, victim process: python, pid: 31337")
add("DD848", "k8s-memory-pressure", C.OOM_HOST, R.CAUSE, ("The node had condition: [MemoryPressure]",
                                                          "The node was low on resource: [MemoryPressure]"),
    "Kubernetes evicted or refused the pod because its node is under memory pressure", rank=90,
    remedy="The node is short of memory: set memory requests equal to limits for the job's pods (pods above their "
    "request are evicted first), and keep other memory-hungry pods off the training nodes.",
    component=K8S, versions="all ('low on resource: [MemoryPressure]' <=1.8)",
    source=_EVICT + " / pkg/kubelet/lifecycle/predicate.go (node condition message)",
    fixture="Warning  Evicted  6m  kubelet  The node had condition: [MemoryPressure].")
add("DD849", "k8s-pid-pressure", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("The node had condition: [PIDPressure]", "The node was low on resource: pids"),
    "Kubernetes evicted the pod because its node ran out of process ids", rank=90,
    remedy="Too many processes or threads on the node (data-loader workers, thread pools): lower parallelism, and set "
    "the pod's pid limit so one pod cannot exhaust the node.",
    component=K8S, versions=">=1.14", source=_EVICT + " (PIDPressure)",
    fixture="Warning  Evicted  2m  kubelet  The node was low on resource: pids.")
add("DD850", "k8s-admission-out-of-resource", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("OutOfnvidia.com/gpu", "OutOfcpu", "OutOfmemory", "Node didn't have enough resource:",
     "requested number of devices unavailable for", "UnexpectedAdmissionError"),
    "The kubelet refused to run the pod: the node lacked the CPU, memory or devices it asks for", rank=75,
    remedy="The node could not give the pod what it requests (often GPUs still held by a terminating pod, or a device "
    "plugin that lost its devices): free the devices or restart the device plugin, and recreate the pod.",
    component=K8S, versions=">=1.10", source="kubernetes/kubernetes pkg/kubelet/lifecycle/predicate.go / "
    "pkg/kubelet/cm/devicemanager/manager.go",
    fixture="Warning  UnexpectedAdmissionError  30s  kubelet  Allocate failed due to requested number of devices "
            "unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")
add("DD851", "k8s-image-pull-backoff", C.OTHER, R.CAUSE,
    ("Back-off pulling image", "ErrImageNeverPull", "InvalidImageName", "manifest unknown"),
    "A pod's image cannot be pulled (back-off, invalid name, or not present)", rank=70,
    remedy="Fix the image reference (name, tag, registry) or the pull secret; with imagePullPolicy Never the image must "
    "already be on every node.", component=K8S, versions="all",
    source="kubernetes/kubernetes pkg/kubelet/images/image_manager.go / pkg/kubelet/events/event.go",
    fixture='Normal   BackOff  2m (x6 over 4m)  kubelet  Back-off pulling image "registry.local/train:2.21"')
add("DD852", "k8s-sandbox-network", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("failed to setup network for sandbox", "failed to set up sandbox container", "networkPlugin cni failed",
     "plugin type=", "failed to set up pod network"),
    "Kubernetes could not give the pod its network (the CNI plugin failed)", rank=65,
    regex=r"failed to set ?up (?:network for sandbox|sandbox container|pod network)|networkPlugin cni failed|"
          r"plugin type=\"\S+\" \S* ?failed",
    remedy="The node's network plugin (CNI) failed: the pod never got an address. Check the CNI pods on that node "
    "(calico/flannel/cilium), IP address exhaustion of the node's pod CIDR, and cordon the node if it persists.",
    component=K8S, versions="all", source="kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_sandbox.go / "
    "containerd CRI (FailedCreatePodSandBox)",
    fixture='Warning  FailedCreatePodSandBox  1m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = '
            'failed to setup network for sandbox "4f1c": plugin type="calico" failed (add): connection is unauthorized')
add("DD853", "k8s-sandbox-failed", C.OTHER, R.CAUSE, ("Failed to create pod sandbox",),
    "Kubernetes could not create the pod's sandbox", rank=50,
    remedy="The container runtime on that node failed to start the pod: read the event's message (runtime, cgroup or "
    "network errors) and the kubelet's log on the node.", component=K8S, versions="all",
    source="kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (FailedCreatePodSandBox)",
    fixture="Warning  FailedCreatePodSandBox  12s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = "
            "failed to create containerd task: failed to create shim task: OCI runtime create failed")
add("DD854", "k8s-multi-attach", C.OTHER, R.CAUSE, ("Multi-Attach error for volume",),
    "A ReadWriteOnce volume is still attached to another node", rank=66,
    remedy="The volume can be attached to one node at a time: give each replica its own volume (volumeClaimTemplates), "
    "use a ReadWriteMany storage class for shared data, or wait for the old pod's node to release it.",
    component=K8S, versions="all", source="kubernetes/kubernetes pkg/controller/volume/attachdetach/reconciler",
    fixture='Warning  FailedAttachVolume  3m  attachdetach-controller  Multi-Attach error for volume "pvc-8f2c" Volume '
            'is already used by pod(s) dist-worker-0')
add("DD855", "k8s-startup-probe-failed", C.PEER_UNRESPONSIVE, R.CONTEXT, ("Startup probe failed",),
    "A container's startup probe failed", rank=15,
    remedy="The container did not become ready in the startup probe's window: slow start (data download, compilation) "
    "needs a larger failureThreshold x periodSeconds.", component=K8S, versions=">=1.16",
    source="kubernetes/kubernetes pkg/kubelet/prober/prober.go (Unhealthy events)",
    fixture='Warning  Unhealthy  40s (x10 over 2m)  kubelet  Startup probe failed: Get "http://10.1.0.7:8080/ready": '
            'dial tcp 10.1.0.7:8080: connect: connection refused')
add("DD856", "k8s-quota-exceeded", C.RESOURCE_EXHAUSTION, R.CAUSE, ("exceeded quota:",),
    "The namespace's ResourceQuota refused to create a pod", rank=72,
    remedy="The namespace's quota (GPUs, CPU, memory or pod count) is used up: free it (old jobs still running), raise "
    "the quota, or ask for less.", component=K8S, versions="all",
    source="kubernetes/kubernetes plugin/pkg/admission/resourcequota/controller.go",
    fixture='Warning  FailedCreate  1m  tfjob-controller  Error creating: pods "mnist-worker-1" is forbidden: exceeded '
            'quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: '
            'requests.nvidia.com/gpu=4', expect="worker:1")
add("DD857", "k8s-unbound-pvc", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("unbound immediate PersistentVolumeClaims", "persistentvolumeclaim \""),
    "The pod waits for a PersistentVolumeClaim that is not bound (or does not exist)", rank=77,
    regex=r"unbound immediate PersistentVolumeClaims|persistentvolumeclaim \"[^\"]+\" not found",
    remedy="The job's volume claim has no volume (no matching PersistentVolume or storage class) or a different name: "
    "create or fix the claim the pod spec names.", component=K8S, versions="all",
    source="kubernetes/kubernetes pkg/scheduler/framework/plugins/volumebinding (ErrReasonBindConflict / unbound claims)",
    fixture="Warning  FailedScheduling  20s  default-scheduler  0/3 nodes are available: 3 pod has unbound immediate "
            "PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
add("DD858", "k8s-node-selector-mismatch", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("didn't match Pod's node affinity", "didn't match node selector", "didn't match pod affinity rules",
     "didn't match pod anti-affinity rules"),
    # below k8s-insufficient (75): a FailedScheduling that also names Insufficient resources is a capacity problem on
    # the nodes that do match
    "No node matches the pod's node selector or affinity", rank=74, remedy=_PLACE, component=K8S, versions=">=1.18",
    source="kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity / interpodaffinity",
    fixture="Warning  FailedScheduling  5m  default-scheduler  0/4 nodes are available: 4 node(s) didn't match Pod's "
            "node affinity/selector.")
add("DD859", "k8s-untolerated-taint", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("had untolerated taint", "that the pod didn't tolerate"),
    "Every node has a taint the pod does not tolerate", rank=73, remedy=_PLACE, component=K8S, versions="all",
    source="kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration",
    fixture="Warning  FailedScheduling  1m  default-scheduler  0/2 nodes are available: 2 node(s) had untolerated taint "
            "{nvidia.com/gpu: present}.")

# -- pod and container states ----------------------------------------------------------------------------------------
add("DD876", "k8s-container-status-unknown", C.PEER_CRASHED, R.CAUSE,
    ("ContainerStatusUnknown", "The container could not be located when the pod was"),
    "Kubernetes lost track of a container (its node or runtime went away)", rank=40,
    remedy="The container's state is unknown: its node was lost, drained or its runtime restarted; check the node and "
    "restart the job from its last checkpoint.", component=K8S, versions=">=1.22",
    source="kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (ContainerStatusUnknown)",
    fixture="      Message:      The container could not be located when the pod was terminated")
add("DD877", "k8s-start-error", C.VERSION_MISMATCH, R.CAUSE,
    # the reason (StartError, ContainerCannotRun) alone says no more than that the runtime failed: the message says why
    ("executable file not found in $PATH", "exec format error"),
    "Kubernetes could not start the container's program (not in the image, or built for another CPU)", rank=65,
    remedy="The command is missing from the image (or built for another CPU architecture, 'exec format error'): fix the "
    "command/args or the image so every replica runs the same, working entrypoint.", component=K8S, versions=">=1.0",
    source="kubernetes/kubernetes pkg/kubelet/kuberuntime (StartError / ContainerCannotRun reasons) with runc messages",
    fixture='Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: '
            'runc create failed: unable to start container process: exec: "pyhton": executable file not found in $PATH: '
            'unknown')
add("DD878", "k8s-pod-deadline", C.PREEMPTION, R.CAUSE, ("Pod was active on the node longer than the specified deadline",),
    "Kubernetes stopped the pod at its activeDeadlineSeconds", rank=80,
    remedy="The pod ran past spec.activeDeadlineSeconds: raise it, or checkpoint and resume.",
    component=K8S, versions="all", source="kubernetes/kubernetes pkg/kubelet/active_deadline.go (DeadlineExceeded)",
    fixture="Normal   DeadlineExceeded  1m  kubelet  Pod was active on the node longer than the specified deadline")
add("DD879", "k8s-disruption-target", C.PREEMPTION, R.CAUSE,
    ("PreemptionByScheduler", "PreemptionByKubeScheduler", "DeletionByTaintManager", "EvictionByEvictionAPI",
     "DeletionByPodGC", "TerminationByKubelet"),
    "Kubernetes records why the pod was disrupted (preempted, evicted, deleted by a taint or the garbage collector)",
    rank=80, remedy="The cluster removed the pod (a higher-priority pod, a drain, a NoExecute taint, a node that went "
    "away): restart from the last checkpoint; give the job a priority class or reserved capacity.",
    component=K8S, versions=">=1.26", source="kubernetes/api core/v1 types.go (DisruptionTarget condition reasons)",
    fixture="    DisruptionTarget   True    EvictionByEvictionAPI   Eviction API: evicting")
add("DD880", "k8s-taint-eviction", C.PREEMPTION, R.CAUSE, ("Marking for deletion Pod",),
    "Kubernetes' taint manager deletes the pod: its node got a NoExecute taint (not ready, unreachable, drained)",
    rank=72, remedy="The node became unreachable or not ready (or was tainted by hand): its pods are deleted after their "
    "toleration; check the node, and restart the job from the last checkpoint.", component=K8S, versions=">=1.13",
    source="kubernetes/kubernetes pkg/controller/tainteviction (TaintManagerEviction event)",
    fixture="Normal   TaintManagerEviction  2m  taint-eviction-controller  Marking for deletion Pod default/dist-worker-1")
add("DD881", "k8s-pod-failure-policy", C.PEER_CRASHED, R.SYMPTOM, ("matching FailJob rule at index",),
    "The Job controller failed the job by its podFailurePolicy after a container's exit", rank=22,
    remedy="A consequence: the container's own log says why it exited with the code the policy matched.",
    component=K8S, versions=">=1.26", source="kubernetes/kubernetes pkg/controller/job/pod_failure_policy.go",
    fixture="Container main for pod default/train-worker-2 failed with exit code 42 matching FailJob rule at index 0")
add("DD882", "k8s-failed-indexes", C.PEER_CRASHED, R.SYMPTOM, ("Job has failed indexes", "MaxFailedIndexesExceeded",
                                                              "FailedIndexes"),
    "The Job controller failed an indexed job because some indexes failed", rank=20,
    remedy="A consequence: the failed indexes' pods say why they failed.", component=K8S, versions=">=1.28",
    source="kubernetes/kubernetes pkg/controller/job/job_controller.go (backoffLimitPerIndex)",
    fixture="Warning  FailedIndexes  1m  job-controller  Job has failed indexes")

add("DD1456", "k8s-pod-phase-failed", C.PEER_CRASHED, R.SYMPTOM,
    ("phase Failed", "phase: Failed", "phase=Failed", '"phase":"Failed"', '"phase": "Failed"'),
    "A pod reached phase Failed: its containers ended and at least one failed", rank=20,
    regex=r"""\bphase(?::|=|"?:)? ?"?Failed\b""",
    remedy="A consequence: the failed container's own log (`kubectl logs --previous POD`) and its last state "
    "(`kubectl describe pod POD`: the reason, OOMKilled or Error, and the exit code) say why it ended.",
    component=K8S, versions="all", source="kubernetes/api core/v1 types.go (PodPhase PodFailed: all containers in the "
    "pod have terminated, and at least one container has terminated in a failure)",
    fixture="I0711 06:44:46.498604 140316069484288 k8s_worker_manager.py:128] Got event MODIFIED, phase Failed for pod: "
            "train-worker-0")

# -- Kubeflow training operator (TFJob, MPIJob, PyTorchJob ...) -------------------------------------------------------
add("DD883", "tfjob-restarting", C.PEER_CRASHED, R.SYMPTOM, ("is restarting because",),
    "The training operator restarts a replica that failed", regex=r"is restarting because (?:\d+ )?\"?\w+\"? replica\(s\) failed",
    rank=18, remedy="A consequence: the failed replica's previous log (`kubectl logs --previous`) says why it failed.",
    component=OP, versions="all", source=_OP_SRC + "tensorflow/tfjob_controller.go / mpi/mpijob_controller.go",
    fixture="TFJob default/dist-mnist is restarting because 1 Worker replica(s) failed.")
add("DD884", "tfjob-backoff-limit", C.PEER_CRASHED, R.SYMPTOM,
    ("has failed because it has reached the specified backoff limit",),
    "The training operator gave up on the job after its backoff limit of restarts", rank=20,
    remedy="A consequence: the replicas' own failures (their previous logs) say why they kept failing.",
    component=OP, versions=">=0.5", source=_OP_SRC + "common/job.go",
    fixture="Job dist-mnist has failed because it has reached the specified backoff limit")
add("DD885", "tfjob-active-deadline", C.PREEMPTION, R.CAUSE,
    ("has failed because it was active longer than specified deadline",),
    "The training operator stopped the job at runPolicy.activeDeadlineSeconds", rank=80,
    remedy="The job ran past runPolicy.activeDeadlineSeconds: raise it, or checkpoint and resume.",
    component=OP, versions=">=0.5", source=_OP_SRC + "common/job.go",
    fixture="TFJob dist-mnist has failed because it was active longer than specified deadline")
add("DD886", "tfjob-exited-with-code", C.PEER_CRASHED, R.CONTEXT, ("ExitedWithCode", "exited with code"),
    "The training operator records a replica pod's exit code",
    regex=r"Pod: \S+ exited with code (?P<code>-?\d+)", rank=10,
    remedy="Read the code: 137 SIGKILL (OOM/eviction), 143 SIGTERM, 139 SIGSEGV, 1 an error in the program.",
    component=OP, versions=">=1.0", source=_OP_SRC + "common/pod.go (exitedWithCodeReason)",
    fixture="Normal   ExitedWithCode  3m  tfjob-controller  Pod: default.dist-mnist-worker-1 exited with code 137")
add("DD887", "tfjob-failed-condition", C.PEER_CRASHED, R.SYMPTOM, ("JobFailed",),
    "The training operator marks the job failed", regex=r"\b(?:TF|MPI|PyTorch|MX|XGBoost|Paddle|JAX)?JobFailed\b(?!Validation)",
    rank=15, remedy="A consequence: the condition's message names the failed replicas; read their logs.",
    component=OP, versions="all", source=_OP_SRC + "*/..._controller.go (NewReason(kind, JobFailedReason))",
    fixture='{"lastTransitionTime":"2024-05-02T10:11:12Z","message":"TFJob default/dist-mnist has failed because 1 '
            'Worker replica(s) failed.","reason":"TFJobFailed","status":"True","type":"Failed"}')
add("DD888", "tfjob-failed-validation", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("failed validation because", "ReplicaSpec is not valid", "ReplicaSpecs is not valid", "JobSpec is not valid",
     "FailedValidation"),
    "The training operator rejected the job's spec", rank=80,
    regex=r"(?:TF|MPI|PyTorch|MX|XGBoost|Paddle)Job failed validation because|(?:Replica|Job)Specs? is not valid"
          r"|\b\w*JobFailedValidation\b",
    remedy="The job's replica specs are invalid (no container named for the framework, no image, a missing "
    "launcher/chief): fix the manifest as the message says.",
    component=OP, versions=">=1.0", source="kubeflow/training-operator pkg/apis/kubeflow.org/v1/*_validation.go / "
    "pkg/controller.v1/mpi/mpijob_controller.go",
    fixture="Warning  MPIJobFailedValidation  5s  mpi-operator  MPIJob failed validation because MPIReplicaSpec is not "
            "valid: There must be only 1 launcher replica")
