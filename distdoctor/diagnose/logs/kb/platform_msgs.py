"""Control-plane refusals mined from the platforms' own sources (codes DD1240-DD1269): what the Kubernetes API
server, its admission plugins and scheduler, the container runtime, Volcano, the Kubeflow training operator and YARN
print when they refuse or kill a job's pods and containers.

Each message is classified once, by what it means rather than by the case it was first seen in:

* a refusal because capacity or a quota is used up (Volcano's overused cluster or queue, a gang that cannot be
  placed, a cordoned node, a full node) is ``resource_exhaustion``;
* a refusal because the platform is not set up for the request (RBAC denies the job's service account, a quota
  demands requests/limits the spec lacks, a queue that is closed, a YARN resource type the cluster does not define,
  an API object the server rejects as invalid, an image that is not in the registry) is ``other``: the fix is in the
  platform's configuration or the manifest, not in the training program or its TF_CONFIG;
* a kind that the API server does not serve in the manifest's apiVersion is ``version_mismatch`` (the manifest and
  the installed CRDs/operator are of different releases);
* a kill for exceeding memory is ``oom_host``; a host port already taken on every node is ``port_in_use``.

Sources (the text of each message is the component's own literal; ``source`` names file and function):
kubernetes/kubernetes (staging/src/k8s.io/apiserver, staging/src/k8s.io/apimachinery, plugin/pkg/admission/resourcequota,
pkg/scheduler/framework/plugins, pkg/kubelet/images), opencontainers/runc (libcontainer), moby/moby (distribution),
containerd/containerd (CRI image pull), volcano-sh/volcano (pkg/scheduler/plugins, pkg/webhooks/admission; at ed72c7c),
kubeflow/training-operator (pkg/controller.v1; at v1.8.1) and apache/hadoop (hadoop-yarn-api Resource.java).
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

K8S = "kubernetes"
VOLCANO = "volcano"
OP = "training-operator"
RT = "container-runtime"
_APISERVER = "kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go"
_APIERRS = "kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go"
_QUOTA = "kubernetes/kubernetes plugin/pkg/admission/resourcequota/controller.go (checkRequest)"
_SCHED = "kubernetes/kubernetes pkg/scheduler/framework/plugins/"
_VC = "volcano-sh/volcano pkg/scheduler/plugins/"
_OP_SRC = "kubeflow/training-operator pkg/controller.v1/"
_VC_QUEUE = ("The Volcano queue the job is submitted to has no room: wait for other jobs in the queue to finish, lower "
             "the job's request or minAvailable, or raise the queue's capability/deserved share.")

# -- Kubernetes API server: authorization, admission, discovery, validation ------------------------------------------
add("DD1240", "k8s-rbac-forbidden", C.OTHER, R.CAUSE, ("is forbidden: User ",),
    "The Kubernetes API server refused a request: the user or service account lacks the RBAC permission", rank=72,
    regex=r"is forbidden: User \"(?P<user>[^\"]*)\" (?:groups \[[^\]]*\] )?cannot (?P<verb>\w+)",
    remedy="The service account that made the request (an operator, a launcher, the job's pods) is not allowed that "
    "verb on that resource: grant it with a Role/ClusterRole and a binding (the operator's own manifests ship them), "
    "or run the job under a service account that has it.", component=K8S, versions="all (wording of >=1.11)",
    source=_APISERVER + " (forbiddenMessage, wrapped by apimachinery NewForbidden)",
    fixture='Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:kubeflow:default" cannot '
            'create resource "pods" in API group "" in the namespace "kubeflow"')
add("DD1241", "k8s-quota-needs-requests", C.OTHER, R.CAUSE, ("failed quota:", "Failed quota:"),
    "A namespace ResourceQuota refused a pod that does not declare the requests or limits the quota tracks", rank=74,
    regex=r"[Ff]ailed quota: [\w.-]+: must specify",
    remedy="The namespace has a ResourceQuota on cpu/memory (or limits.*): every pod must then declare those requests/"
    "limits. Set resources on every container of the job (or a LimitRange that gives defaults).",
    component=K8S, versions="all", source=_QUOTA + " / pkg/quota/v1/evaluator/core/pods.go (Constraints: must specify)",
    fixture='Error creating: pods "mnist-worker-0" is forbidden: failed quota: compute-quota: must specify '
            'limits.cpu,limits.memory')
add("DD1242", "k8s-quota-status-unknown", C.OTHER, R.CAUSE, ("status unknown for quota:", "Status unknown for quota:"),
    "A namespace ResourceQuota refused a pod because the quota's usage is not yet computed", rank=55,
    remedy="The quota controller has not yet computed the quota's usage (a quota just created, or the controller "
    "manager is down): retry, and check kube-controller-manager.", component=K8S, versions="all",
    source=_QUOTA, fixture='Error creating: pods "mnist-ps-0" is forbidden: status unknown for quota: gpu-quota')
# "no matches for kind": the server serves no such kind in the version asked. For a pre-release version (v1alpha2,
# v1beta1) the usual reason is a manifest older than the installed operator, which dropped that version; for a stable
# one (v1), that the CRD is not installed at all (API groups do not remove stable versions): the message is read by
# the version it names.
_NOKIND = "kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/meta/errors.go (NoKindMatchError.Error)"
add("DD1243", "k8s-no-kind-match-prerelease", C.VERSION_MISMATCH, R.CAUSE, ("no matches for kind",),
    "The API server does not serve the manifest's kind in its pre-release apiVersion (an older manifest)", rank=72,
    regex=r"no matches for kind \"(?P<kind>[^\"]+)\" in versions? \[?\"?[^\"\]]*/v\d+(?:alpha|beta)\d*",
    remedy="The manifest's apiVersion is an alpha/beta version that the installed operator no longer serves: rewrite "
    "the manifest for the installed version (`kubectl api-resources | grep -i KIND`; TFJob moved from "
    "kubeflow.org/v1alpha1/v1alpha2/v1beta* to kubeflow.org/v1).", component=K8S, versions=">=1.7", source=_NOKIND,
    fixture='error: unable to recognize "tfjob.yaml": no matches for kind "TFJob" in version "kubeflow.org/v1alpha2"')
add("DD1262", "k8s-no-kind-match", C.OTHER, R.CAUSE, ("no matches for kind", "the server doesn't have a resource type"),
    "The API server does not know the kind at all: the CRD (the operator that defines it) is not installed", rank=66,
    regex=r"no matches for kind \"[^\"]+\" in (?:group|versions? \[?\"?[^\"\]]*/v\d+\")"
          r"|the server doesn't have a resource type",
    remedy="The cluster has no CustomResourceDefinition for this kind: install the operator (its CRDs) before "
    "submitting the job (`kubectl get crd | grep -i KIND`).", component=K8S, versions=">=1.7",
    source=_NOKIND + " / staging/src/k8s.io/cli-runtime/pkg/resource/builder.go (mappingFor)",
    fixture='error: unable to recognize "tfjob.yaml": no matches for kind "TFJob" in version "kubeflow.org/v1"')
add("DD1244", "k8s-object-invalid", C.OTHER, R.CAUSE, ("is invalid:",),
    "The API server rejected an object of the job (a pod, service, or the job itself) as invalid", rank=58,
    regex=r"\"[^\"]+\" is invalid: \[?[\w.\[\]]+: (?:Required value|Invalid value|Unsupported value|Forbidden|"
          r"Duplicate value|Too long|Too many|Not found|Internal error)",
    remedy="The object the operator or client tried to create fails validation: the message names the field (a "
    "missing image, an invalid name, a bad port); fix it in the manifest.", component=K8S, versions="all",
    source=_APIERRS + " (NewInvalid) with apimachinery/pkg/util/validation/field/errors.go (ErrorType strings)",
    fixture='error syncing \'default/bench\': Pod "bench-launcher" is invalid: spec.containers[0].image: '
            'Required value')

# -- Kubernetes scheduler: filter plugins' failure reasons (beside Insufficient/affinity/taint in k8s.py) -------------
add("DD1245", "k8s-sched-host-ports", C.PORT_IN_USE, R.CAUSE, ("didn't have free ports for the requested pod ports",),
    "No node has the pod's hostPort free", rank=72,
    remedy="The pod asks for a hostPort (or hostNetwork) that another pod already holds on the nodes: drop hostPort, "
    "give each replica its own port, or spread replicas so that two never share a node.",
    component=K8S, versions="all", source=_SCHED + "nodeports/node_ports.go (ErrReason)",
    fixture="Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 node(s) didn't have free "
            "ports for the requested pod ports.")
add("DD1246", "k8s-sched-volume-node-conflict", C.OTHER, R.CAUSE,
    ("had volume node affinity conflict", "didn't find available persistent volumes to bind"),
    "No node can reach the pod's persistent volume (its zone or node affinity) or a volume to bind", rank=70,
    remedy="The pod's volume lives in a zone or on a node the pod cannot run on (or no PersistentVolume matches the "
    "claim): use a StorageClass with volumeBindingMode WaitForFirstConsumer, or schedule the pod where the volume is.",
    component=K8S, versions=">=1.11", source=_SCHED + "volumebinding/binder.go (ErrReasonNodeConflict, ErrReasonBindConflict)",
    fixture="Warning  FailedScheduling  1m  default-scheduler  0/4 nodes are available: 4 node(s) had volume node "
            "affinity conflict.")
add("DD1247", "k8s-sched-nodes-unschedulable", C.RESOURCE_EXHAUSTION, R.CAUSE, ("node(s) were unschedulable",),
    "The nodes the pod could use are cordoned (unschedulable)", rank=62,
    remedy="The matching nodes are cordoned (drain, maintenance, autoscaler scale-down): uncordon them or add nodes; "
    "the job waits until capacity returns.", component=K8S, versions="all",
    source=_SCHED + "nodeunschedulable/node_unschedulable.go (ErrReasonUnschedulable)",
    fixture="Warning  FailedScheduling  30s  default-scheduler  0/2 nodes are available: 2 node(s) were unschedulable.")
add("DD1248", "k8s-sched-too-many-pods", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Too many pods",),
    "The nodes hold as many pods as they allow (maxPods)", rank=70, regex=r"\d+ Too many pods",
    remedy="Every node is at its pod limit: add nodes, or free pods (finished jobs' pods still counted).",
    component=K8S, versions="all", source=_SCHED + "noderesources/fit.go (Too many pods)",
    fixture="Warning  FailedScheduling  1m  default-scheduler  0/3 nodes are available: 3 Too many pods.")

# -- container runtime: images and container start --------------------------------------------------------------------
add("DD1249", "runtime-init-oom", C.OOM_HOST, R.CAUSE, ("container init was OOM-killed",),
    "The container was OOM-killed while starting: its memory limit is too low for the runtime's init", rank=92,
    remedy="The container's memory limit is below what starting it needs (the runtime's init, or /dev/shm pages "
    "counted against it): raise limits.memory.", component=RT, versions="runc >=1.1",
    source="opencontainers/runc libcontainer/process_linux.go (initProcess.start: OOM during init)",
    fixture='Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create '
            'failed: unable to start container process: container init was OOM-killed (memory limit too low?): unknown')
add("DD1250", "runtime-image-not-found", C.OTHER, R.CAUSE,
    ("failed to pull and unpack image", "does not exist or no pull access", "pull access denied for",
     "manifest unknown", "repository does not exist"),
    "The image the pod names does not exist in the registry (or the pull secret cannot see it)", rank=72,
    regex=r"failed to pull and unpack image .*(?:: not found|manifest unknown|401 Unauthorized|403 Forbidden)"
          r"|repository \S+ not found: does not exist or no pull access|pull access denied for \S+"
          r"|manifest unknown|repository does not exist",
    remedy="The registry has no such image or tag (a typo, a tag never pushed) or refuses this node's credentials: "
    "fix the image reference or push the tag, and give the pod an imagePullSecret for a private registry.",
    component=RT, versions="containerd >=1.3 / Docker >=1.13",
    source="containerd/containerd pkg/cri/server/image_pull.go (PullImage: failed to pull and unpack image) / moby/moby "
    "distribution/errors.go (repository not found / pull access denied)",
    fixture='Failed to pull image "docker.io/acme/train:v9": rpc error: code = NotFound desc = failed to pull and '
            'unpack image "docker.io/acme/train:v9": failed to resolve reference "docker.io/acme/train:v9": '
            'docker.io/acme/train:v9: not found')
add("DD1251", "k8s-registry-unavailable", C.NETWORK_UNREACHABLE, R.CAUSE, ("RegistryUnavailable",),
    "The kubelet could not reach the image registry", rank=66,
    remedy="The node cannot reach the registry (DNS, proxy, firewall, registry down): check from the node with "
    "`crictl pull IMAGE`, or mirror the image into a reachable registry.", component=K8S, versions="all",
    source="kubernetes/kubernetes pkg/kubelet/images/types.go (ErrRegistryUnavailable)",
    fixture="Warning  Failed  20s  kubelet  Error: RegistryUnavailable")

# -- Volcano batch scheduler ------------------------------------------------------------------------------------------
add("DD1252", "volcano-cluster-overused", C.RESOURCE_EXHAUSTION, R.CAUSE, ("resource in cluster is overused",),
    "Volcano keeps the job out of the queue: the cluster's resources are used up", rank=76,
    remedy="The cluster has no room for the job's minimum resources (overcommit plugin): wait for running jobs, lower "
    "minAvailable or the requests, or add nodes.", component=VOLCANO, versions=">=1.0",
    source=_VC + "overcommit/overcommit.go (JobEnqueueable: RecordPodGroupEvent Unschedulable)",
    fixture="Normal   Unschedulable  17s (x13 over 29s)  volcano  resource in cluster is overused")
add("DD1253", "volcano-queue-quota-insufficient", C.RESOURCE_EXHAUSTION, R.CAUSE, ("resource quota insufficient",),
    "Volcano keeps the job out: its queue's (or namespace's) share of resources is used up", rank=76,
    remedy=_VC_QUEUE, component=VOLCANO, versions=">=1.0",
    source=_VC + "proportion/proportion.go, capacity/capacity.go (JobEnqueueable: queue resource quota insufficient), "
    "resourcequota/resourcequota.go (JobEnqueueable: resource quota insufficient)",
    fixture="Normal   Unschedulable  40s  volcano  queue resource quota insufficient: insufficient nvidia.com/gpu")
add("DD1254", "volcano-queue-overused", C.RESOURCE_EXHAUSTION, R.CAUSE, ("is overused",),
    "Volcano skips the job's queue: the queue already uses more than its deserved share", rank=70,
    regex=r"Queue <[^>]+> is overused", remedy=_VC_QUEUE, component=VOLCANO, versions=">=0.4",
    source=_VC[:-len("plugins/")] + "actions/allocate/allocate.go, actions/reclaim/reclaim.go (Queue <%s> is overused)",
    fixture="I0515 08:12:01.123456       1 allocate.go:295] Queue <default> is overused, ignore it.")
add("DD1255", "volcano-gang-unschedulable", C.RESOURCE_EXHAUSTION, R.CAUSE, ("tasks in gang unschedulable",),
    "Volcano cannot place the job's gang: fewer than minAvailable tasks fit on the nodes", rank=58,
    regex=r"(?P<n>\d+)/(?P<of>\d+) tasks in gang unschedulable",
    remedy="Not all of the job's minAvailable pods fit at once (gang scheduling): the message's fit errors say what is "
    "short (GPUs, CPU, memory, a selector); free capacity or lower minAvailable.", component=VOLCANO, versions=">=0.4",
    source=_VC + "gang/gang.go (OnSessionClose: NotEnoughResources condition)",
    fixture="Warning  Unschedulable  18s (x12 over 29s)  volcano  1/1 tasks in gang unschedulable: pod group is not "
            "ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable")
add("DD1256", "volcano-not-enough-resources", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("NotEnoughResources", "node(s) resource fit failed", "node group resource limit exceeded"),
    "Volcano reports that the nodes (or the node group) lack the resources the job asks for", rank=60,
    remedy="The nodes cannot hold the job's pods: free or add capacity, or ask for less.",
    component=VOLCANO, versions=">=0.4",
    source="volcano-sh/volcano staging/src/volcano.sh/apis/pkg/apis/scheduling/types.go (NotEnoughResourcesReason) / "
    "pkg/scheduler/api/unschedule_info.go (NodeResourceFitFailed) / pkg/scheduler/plugins/nodegroup/errors.go "
    "(errNodeGroupResourceLimitExceeded)",
    fixture="    Reason:                NotEnoughResources")
add("DD1257", "volcano-queue-not-open", C.OTHER, R.CAUSE, ("to queue with state `Open`",),
    "Volcano's admission refused the job: its queue is closed or closing", rank=74,
    remedy="The job names a queue that is not Open (closed by an admin, or being deleted): submit to an open queue, or "
    "open it (`vcctl queue operate -n QUEUE -a open`).", component=VOLCANO, versions=">=1.0",
    source="volcano-sh/volcano pkg/webhooks/admission/jobs/validate/admit_job.go / podgroups/validate/"
    "validate_podgroup.go (checkQueueState)",
    fixture='admission webhook "validatejob.volcano.sh" denied the request: can only submit job to queue with state '
            '`Open`, queue `research` status is `Closed`')

# -- Kubeflow training operator ---------------------------------------------------------------------------------------
add("DD1258", "mpijob-workers-evicted", C.PREEMPTION, R.CAUSE, ("workers are evicted",),
    "The MPI operator saw the MPIJob's worker pods evicted", rank=62, regex=r"\d+/\d+ workers are evicted",
    remedy="Kubernetes evicted the workers (node pressure, a drain, preemption): the pods' events say which; restart "
    "from the last checkpoint, and set requests equal to limits so the pods are evicted last.",
    component=OP, versions=">=1.0", source=_OP_SRC + "mpi/mpijob_controller.go (mpiJobEvict event)",
    fixture="Warning  Evict  1m  mpijob-controller  2/4 workers are evicted")
add("DD1259", "operator-resource-exists", C.OTHER, R.CAUSE, ("already exists and is not managed by",),
    "The training operator will not adopt an object of the same name that another owner created", rank=62,
    remedy="An object with the name the operator wants (a service, config map, launcher job) exists and belongs to "
    "something else, often a previous job of the same name: delete it, or rename the job.",
    component=OP, versions=">=1.0", source=_OP_SRC + "mpi/mpijob.go (MessageResourceExists, ErrResourceExists event)",
    fixture='Warning  ErrResourceExists  5s  mpi-operator  Resource "bench-config" of MPIJobKind "MPIJob" already exists '
            'and is not managed by MPIJob')
add("DD1260", "operator-restart-policy-overwritten", C.OTHER, R.BENIGN,
    ("Restart policy in pod template will be overwritten by restart policy in replica spec",),
    "The training operator notes that it uses the replica spec's restart policy (harmless)", rank=0,
    remedy="Nothing to do: set restartPolicy in the replica spec instead of the pod template to silence it.",
    component=OP, versions=">=1.0", source=_OP_SRC + "common/pod.go (SetPodTemplateRestartPolicy event)",
    fixture="Warning  SetPodTemplateRestartPolicy  1m  tfjob-controller  Restart policy in pod template will be "
            "overwritten by restart policy in replica spec")

add("DD1522", "platform-spawn-not-found", C.OTHER, R.CAUSE, ("Failed to spawn child process",),
    "The platform's job runtime could not start the job's program: it is not installed or not on PATH in the image",
    regex=r"Failed to spawn child process '(?P<prog>[^']+)' because: Os \{ code: 2, kind: NotFound", rank=72,
    remedy="The image lacks the program the job starts (a launcher such as mpirun, or python) on PATH: install it, "
    "or put its directory on PATH in the image (`which <prog>` inside the image settles it).",
    component="cloud-platform", versions="all (Azure Machine Learning's job runtime)",
    source="Azure Machine Learning job runtime (SpawnExecutionError.SpawnChildError; the Os { code, kind } text is "
    "Rust's std::io::Error of a spawn whose program was not found, ENOENT)",
    fixture="UserError: Failed to spawn child process 'mpirun' because: Os { code: 2, kind: NotFound, message: \"No "
            "such file or directory\" }")

# -- YARN --------------------------------------------------------------------------------------------------------------
add("DD1261", "yarn-unknown-resource", C.OTHER, R.CAUSE, ("Known resources are",),
    "YARN does not know the resource type the application asks for (e.g. yarn.io/gpu not configured)", rank=72,
    regex=r"Unknown resource '(?P<res>[^']+)'\. Known resources are",
    remedy="The cluster does not define that resource type: add it to resource-types.xml (yarn.resource-types, with the "
    "GPU plugin for yarn.io/gpu) on the ResourceManager and NodeManagers and restart them, or do not ask for it.",
    component="yarn", versions=">=3.0", source="apache/hadoop hadoop-yarn-project/hadoop-yarn/hadoop-yarn-api "
    "org/apache/hadoop/yarn/api/records/Resource.java (getResourceInformation: ResourceNotFoundException)",
    fixture="org.apache.hadoop.yarn.exceptions.ResourceNotFoundException: Unknown resource 'yarn.io/gpu'. Known "
            "resources are [name: memory-mb, units: Mi, type: COUNTABLE, value: 8192, minimum allocation: 0, "
            "maximum allocation: 9223372036854775807]")
