"""Preflight rules: their catalogue entries (DD3xx, DD4xx, DD5xx) and the static config checks.

Every rule ``check`` can report is registered here, so ``distdoctor rules``
and ``docs/rules.md`` list them all. The checks that read a cluster spec live
here too, as pure functions of the parsed document: no DNS, no sockets, no
clock, which is what lets ``check --static`` run in CI or on a laptop. Checks
that read this host, the environment or the mesh live beside what they read
(:mod:`.host`, :mod:`.fingerprint`, :mod:`.meshjudge`) and fetch their rules
from this table.

Codes: DD3xx cluster configuration, DD4xx host and environment, DD5xx network
and mesh. Codes are never reused.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable

from ..catalogue import Rule, get, register
from ..model import Category as C
from ..model import Evidence, Finding, Severity
from ..cluster.spec import (KNOWN_JOBS, AddressError, ClusterSpec, ConfigDocument, TaskRef, parse_address)

__all__ = ["BLOCKING_CODES", "StaticReport", "interpret", "check_cluster", "check_document",
           "check_pod", "infer_strategy", "STRATEGIES"]

W, I = Severity.WARNING, Severity.INFO


def _r(code: str, name: str, category: C, title: str, detects: str, why: str, evidence: str,
       remedy: str) -> Rule:
    return register(Rule(code, name, category, title, detects, why, evidence, remedy))


# --- DD3xx: cluster configuration (static) ---------------------------------------------------
_r("DD301", "tf-config-invalid-json", C.CONFIG_TF_CONFIG, "TF_CONFIG or cluster file does not parse",
   "The cluster spec is not valid JSON (or YAML), with the line and column of the first error.",
   "TensorFlow reads TF_CONFIG with json.loads at strategy creation and dies with a bare JSONDecodeError, "
   "on every task at once.",
   "The text of TF_CONFIG, --tf-config or --cluster.",
   "Generate TF_CONFIG with json.dumps (double quotes, no trailing commas) and check it with "
   "`distdoctor check --static`.")
_r("DD302", "tf-config-bad-shape", C.CONFIG_TF_CONFIG, "Cluster spec has the wrong structure",
   "`cluster` is not a mapping of job name to a list of \"host:port\" strings, or `task` is not "
   "{\"type\": str, \"index\": int}.",
   "TensorFlow fails deep inside ClusterSpec or the strategy with a TypeError that does not name the field.",
   "The parsed document.",
   'Write TF_CONFIG as {"cluster": {"worker": ["host:port", ...]}, "task": {"type": "worker", "index": 0}}.')
_r("DD303", "cluster-missing", C.CONFIG_TF_CONFIG, "TF_CONFIG has no `cluster`",
   "A TF_CONFIG without a `cluster` key.",
   "TensorFlow then treats the job as local: each task trains alone on its own copy of the data and "
   "nothing fails, so the mistake shows only in the results.",
   "The parsed TF_CONFIG.", 'Add "cluster": {"worker": [...]} listing every task of the job.')
_r("DD304", "task-missing", C.CONFIG_TF_CONFIG, "TF_CONFIG has no `task`",
   "A TF_CONFIG that lists a cluster but not which task this process is.",
   "Strategies cannot tell which server to start; every process believes it is the same task.",
   "The parsed TF_CONFIG.", 'Add "task": {"type": "worker", "index": N}, with N different on every task.')
_r("DD305", "task-type-not-in-cluster", C.CONFIG_TF_CONFIG, "Task type is not a job of the cluster",
   "`task.type` names a job the cluster does not have (only `evaluator` may be absent).",
   "TensorFlow raises \"`task_type` ... not found in cluster_spec\" when the strategy is built.",
   "`task` and the job names of `cluster`.", "Use one of the cluster's job names as task.type.")
_r("DD306", "task-index-out-of-range", C.CONFIG_TF_CONFIG, "Task index is out of range",
   "`task.index` is negative or not smaller than the number of tasks in its job.",
   "TensorFlow raises \"The `task_id` N exceeds the maximum id\"; on Kubernetes it usually means the "
   "replica count and the cluster list disagree.",
   "`task` and the length of its job's list.", "Give each task an index from 0 to len(job)-1.")
_r("DD307", "duplicate-address", C.CONFIG_TF_CONFIG, "Two tasks share one address",
   "The same host:port (loopback spellings counted as one host) is listed for two tasks.",
   "Only one process can bind the port; the other task fails with \"address already in use\" or, worse, "
   "peers talk to the wrong task.", "The cluster lists.", "Give every task its own host:port.")
_r("DD308", "malformed-address", C.CONFIG_TF_CONFIG, "Cluster entry is not host:port",
   "An entry without a port, with a scheme (grpc://), whitespace, a bad host name or a port outside 1-65535.",
   "gRPC cannot parse the address and the task never connects; the error names no task.",
   "The cluster lists.", 'Write each entry as "host:port" (IPv6 as "[addr]:port").')
_r("DD309", "loopback-mixed", C.CONFIG_TF_CONFIG, "Loopback address in a multi-host cluster",
   "Some tasks are listed as localhost/127.x/::1/0.0.0.0 while others have real host names.",
   "From any other machine a loopback address points back at itself: peers wait forever for a task "
   "that is \"there\" (TensorFlow logs \"Waiting for 1/2 tasks to connect\").",
   "The cluster lists.", "List every task by a name or address the other hosts can reach.")
_r("DD310", "ps-without-chief", C.CONFIG_TF_CONFIG, "Parameter-server cluster without a chief",
   "A cluster with a `ps` job but no `chief`.",
   "ParameterServerStrategy's coordinator must be the chief; without one nobody dispatches steps and the "
   "workers and ps wait forever.", "The job names.", 'Add a "chief" job with one task (the coordinator).')
_r("DD311", "strategy-layout", C.CONFIG_TF_CONFIG, "Cluster does not fit the strategy",
   "ParameterServerStrategy without `ps` or `worker` tasks, or a `ps` job in a MultiWorkerMirroredStrategy job.",
   "ParameterServerStrategy raises \"There must be at least one ps/worker\"; MultiWorkerMirroredStrategy "
   "never uses ps tasks, which then sit idle or wait.", "The job names and --strategy.",
   "Match the cluster to the strategy: chief + worker (+ ps for ParameterServerStrategy).")
_r("DD312", "evaluator-in-cluster", C.CONFIG_TF_CONFIG, "Evaluator listed inside the training cluster",
   "An `evaluator` job in `cluster`.",
   "The evaluator is meant to run beside the training cluster. ParameterServerStrategy connects to every "
   "listed task at start-up (remote.connect_to_cluster), so an evaluator that runs no server keeps it "
   "waiting; under MultiWorkerMirroredStrategy it is at best ignored.",
   "The job names.", "Leave the evaluator out of the training tasks' cluster; give it its own TF_CONFIG.")
_r("DD313", "multiple-chiefs", C.CONFIG_TF_CONFIG, "More than one chief",
   "A `chief` job with more than one task.",
   "TensorFlow raises \"There must be at most one 'chief' job\".", "The cluster lists.",
   "Keep one chief; list the other tasks under `worker`.")
_r("DD314", "empty-job", C.CONFIG_TF_CONFIG, "Job with no tasks",
   "A job whose list is empty.",
   "Empty jobs usually mean a replica count of 0 or a templating bug; a task of that type cannot exist.",
   "The cluster lists.", "Remove the job or list its tasks.")
_r("DD315", "unknown-job-name", C.CONFIG_TF_CONFIG, "Job name TensorFlow does not allow",
   "A job other than chief, worker, ps or evaluator (for example the TF1 name `master`, or `workers`).",
   "TensorFlow raises \"Disallowed task type found in cluster spec\".", "The job names.",
   "Rename the job to chief, worker, ps or evaluator.")
_r("DD316", "multiple-evaluators", C.CONFIG_TF_CONFIG, "More than one evaluator",
   "An `evaluator` job with more than one task.",
   "TensorFlow raises \"There must be at most one 'evaluator' job\".", "The cluster lists.",
   "Run a single evaluator.")
_r("DD317", "single-task-cluster", C.CONFIG_TF_CONFIG, "Cluster with one training task",
   "Only one chief/worker task in the cluster.",
   "Multi-worker strategies then train on one machine; if more were intended, the cluster list is short.",
   "The cluster lists.", "List every worker in the cluster (check the replica count that generated it).")
_r("DD318", "duplicate-json-key", C.CONFIG_TF_CONFIG, "Key given twice",
   "A JSON object with the same key twice, e.g. two \"worker\" lists.",
   "JSON keeps only the last one, silently dropping the first list.", "The TF_CONFIG text.",
   "Merge the two entries into one.")
_r("DD319", "unknown-top-level-key", C.CONFIG_TF_CONFIG, "Unknown key in TF_CONFIG",
   "A top-level key other than cluster, task, rpc_layer, environment.",
   "TensorFlow ignores unknown keys; a misspelt \"Cluster\" or \"tasks\" silently means none.",
   "The parsed TF_CONFIG.", "Use the keys cluster, task, rpc_layer and environment.")
_r("DD320", "privileged-port", C.CONFIG_TF_CONFIG, "Port below 1024",
   "A task port below 1024.", "Binding it needs root or CAP_NET_BIND_SERVICE; containers usually lack both.",
   "The cluster lists.", "Use ports above 1024 (2222 is the usual choice).")
_r("DD321", "rpc-layer", C.CONFIG_TF_CONFIG, "Unusual rpc_layer",
   "An `rpc_layer` other than grpc.", "Open-source TensorFlow only serves grpc; other values fail to connect.",
   "The parsed TF_CONFIG.", 'Remove "rpc_layer" or set it to "grpc".')


# --- DD4xx: host and environment --------------------------------------------------------------
_r("DD401", "keras3-with-mwms", C.VERSION_MISMATCH, "Keras 3 under MultiWorkerMirroredStrategy",
   "Keras 3 is what tf.keras resolves to (keras>=3 installed, TF_USE_LEGACY_KERAS not 1) in a "
   "multi-worker cluster.",
   "We observed model.fit under MultiWorkerMirroredStrategy with TensorFlow 2.21 and Keras 3 fail with "
   "\"Attempt to convert a value (PerReplica...)\"; the legacy tf-keras works.",
   "Installed package versions and TF_USE_LEGACY_KERAS.",
   "pip install tf-keras==<your TF version> and set TF_USE_LEGACY_KERAS=1 on every task.")
_r("DD402", "legacy-keras-missing", C.VERSION_MISMATCH, "TF_USE_LEGACY_KERAS=1 without tf-keras",
   "TF_USE_LEGACY_KERAS asks for tf-keras but the package is not installed.",
   "`tf.keras` then fails to import on this task only.", "Installed packages and the variable.",
   "pip install tf-keras matching the TensorFlow version, or unset TF_USE_LEGACY_KERAS.")
_r("DD403", "tf-keras-version-skew", C.VERSION_MISMATCH, "tf-keras does not match TensorFlow",
   "tf-keras and TensorFlow with different major.minor versions.",
   "tf-keras is released in lock-step with TensorFlow; mixed versions fail on import or at run time.",
   "Installed package versions.", "Install tf-keras==<TensorFlow version>.")
_r("DD404", "tensorflow-missing", C.VERSION_MISMATCH, "TensorFlow is not installed here",
   "No tensorflow distribution in the Python that runs the check.",
   "The check probably runs in another environment than the training (another venv or image).",
   "Package metadata.", "Run the check with the Python that runs training.")
_r("DD405", "several-tensorflows", C.VERSION_MISMATCH, "Several TensorFlow distributions installed",
   "tensorflow, tensorflow-cpu, tf-nightly... installed side by side with different versions.",
   "They share one `tensorflow` package directory; whichever was installed last wins, file by file.",
   "Package metadata.", "Uninstall all but one TensorFlow distribution.")
_r("DD410", "own-address-not-local", C.CONFIG_TF_CONFIG, "This task's address is not this machine",
   "The host of this task's cluster entry resolves only to addresses this machine does not have.",
   "The server binds here but peers connect elsewhere: usually a wrong task index or a stale DNS entry.",
   "DNS answer and this machine's interface addresses.",
   "Give this process the task index whose address is this host (or fix the name).")
_r("DD411", "own-name-unresolved", C.NETWORK_UNREACHABLE, "This task's host name does not resolve",
   "getaddrinfo fails for this task's own host name.",
   "TensorFlow fails with \"Name or service not known\" or peers never find it.", "The resolver's error.",
   "Use a resolvable name (on Kubernetes, the headless service name the TFJob creates).")
_r("DD412", "port-in-use", C.PORT_IN_USE, "This task's port is taken",
   "Binding the task's port fails with \"address already in use\"; names the holding process.",
   "TensorFlow fails with \"Address already in use\" or, with SO_REUSEPORT, splits traffic with a stranger.",
   "A test bind and the socket table (psutil).", "Stop the holding process or pick another port.")
_r("DD413", "port-not-permitted", C.PORT_IN_USE, "Not allowed to bind this task's port",
   "Binding fails with \"permission denied\" (ports below 1024 need privileges).",
   "The TensorFlow server cannot start.", "A test bind.", "Use a port above 1024.")
_r("DD414", "low-memory", C.RESOURCE_EXHAUSTION, "Little free memory",
   "Available memory (host or cgroup limit, whichever is tighter) below 2 GiB or 10%.",
   "Training is then killed by the OOM killer mid-run, which peers see as a crash.",
   "/proc/meminfo (psutil) and the memory cgroup.", "Free memory, or request more in the pod/job spec.")
_r("DD415", "checkpoint-disk", C.RESOURCE_EXHAUSTION, "Checkpoint directory short of space or not writable",
   "The checkpoint directory's file system has under 5 GiB or 5% free, or the directory is not writable.",
   "Checkpoints fail at the first save, often hours in.", "statvfs and access(2).",
   "Point --checkpoint-dir / the training's checkpoint path at a writable disk with room.")
_r("DD416", "small-dev-shm", C.RESOURCE_EXHAUSTION, "/dev/shm is small",
   "/dev/shm smaller than 1 GiB (containers default to 64 MiB).",
   "NCCL and tf.data workers use shared memory and fail with bus errors when it runs out.", "statvfs.",
   "Mount a larger /dev/shm (docker --shm-size, an emptyDir with medium: Memory).")
_r("DD417", "low-open-file-limit", C.RESOURCE_EXHAUSTION, "Low open-file limit",
   "RLIMIT_NOFILE soft limit under 4096.",
   "gRPC channels, data shards and checkpoints each hold descriptors; \"Too many open files\" ends the job.",
   "getrlimit.", "Raise it (ulimit -n 65536, or the container runtime's nofile limit).")
_r("DD418", "core-dumps", C.SEGFAULT_CORE_DUMP, "Core dumps disabled or redirected",
   "RLIMIT_CORE is 0, or core_pattern pipes cores to a handler.",
   "A native crash in TensorFlow then leaves no core file to debug.", "getrlimit and /proc/sys/kernel/core_pattern.",
   "ulimit -c unlimited before training; look for piped cores with the named handler (coredumpctl).")
_r("DD419", "gpu-memory-taken", C.RESOURCE_EXHAUSTION, "GPU memory already in use",
   "A GPU with less than half of its memory free before training starts (NVML).",
   "Another process holds it; TensorFlow will fail with out-of-memory or fall back to less memory.",
   "NVML memory info and its process list.", "Stop the other process or pick another GPU (CUDA_VISIBLE_DEVICES).")
_r("DD420", "tfjob-pod-task-mismatch", C.CONFIG_TF_CONFIG, "TFJob pod name and TF_CONFIG disagree",
   "In a Kubeflow TFJob pod, the pod's name (`<job>-worker-1`) names another task than its TF_CONFIG's `task`.",
   "The training operator writes each pod's TF_CONFIG from its replica; a pod that holds another's (a "
   "template copied by hand, a ConfigMap shared by every pod) starts a second copy of that task, and the "
   "job hangs waiting for the one nobody started.",
   "HOSTNAME and the parsed TF_CONFIG.",
   "Let the operator set TF_CONFIG (do not set it in the pod template), or give each replica its own.")

# --- DD5xx: network and mesh ------------------------------------------------------------------
_r("DD501", "peer-refused", C.NETWORK_UNREACHABLE, "Connection refused",
   "A task's port refused connections (nothing listening at that address) while the task itself was up.",
   "TensorFlow retries forever (\"Waiting for N tasks to connect\" / UNAVAILABLE: Connection refused).",
   "The mesh probes of the tasks that tried.",
   "Check the address the others use for this task (port, host) against where it really runs.")
_r("DD502", "peer-dropped", C.FIREWALL_OR_PORT_BLOCKED, "Packets to a task's port are dropped",
   "Connections to a task's port time out with no answer and no refusal.",
   "A firewall, security group or network policy drops the traffic; TensorFlow just waits.",
   "The mesh probes of the tasks that tried.",
   "Open the port (TCP) between all tasks: security group, iptables/nftables, Kubernetes NetworkPolicy.")
_r("DD503", "no-route", C.NETWORK_UNREACHABLE, "No route to a task",
   "Connecting fails with host or network unreachable.", "The hosts cannot talk at all on this network.",
   "The mesh probes.", "Check the host is up and on a network the others can route to.")
_r("DD504", "name-unresolved", C.NETWORK_UNREACHABLE, "A task's name does not resolve",
   "The host name of a task does not resolve on the task that tried.",
   "TensorFlow fails with \"DNS resolution failed\" or waits.", "The resolver's error.",
   "Use names every host resolves (on Kubernetes the TFJob's headless services, which exist once pods run).")
_r("DD505", "token-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, "A task does not share the job's token",
   "The mesh handshake fails: the peer at that address belongs to another job or has another token.",
   "The address points at someone else's task, or this task was started with another job's settings.",
   "The failed handshakes on both sides.",
   "Give every task the same DISTDOCTOR_TOKEN and check the address is this job's task.")
_r("DD506", "peer-never-arrived", C.NETWORK_UNREACHABLE, "A task never arrived",
   "Nobody could reach a task within the timeout and it sent no report.",
   "The task did not start (pending pod, failed srun step, crashed before the check) or its host is down; "
   "TensorFlow would wait for it forever.",
   "Every task's probes and the missing report.", "Find out why that task did not start (kubectl describe, sacct).")
_r("DD507", "unauthenticated-peer", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Refused a peer without the token",
   "A connection to this task's port that could not prove it holds the job's token.",
   "Another job (or a stale task) is talking to this job's ports.", "The responder's log of refusals.",
   "Check which process at that address is connecting; give this job's tasks the same DISTDOCTOR_TOKEN.")
_r("DD508", "foreign-listener", C.PORT_IN_USE, "Something else answers at a task's port",
   "A task's address accepted the connection but did not speak the mesh protocol.",
   "Another program holds the port TensorFlow needs there.", "The mesh probe.",
   "Free the port on that host, or move the task to another port.")
_r("DD509", "wrong-task-at-address", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Another task answers at an address",
   "At the address a config lists for task A, task B answered.",
   "The tasks' cluster lists or indices disagree; collectives would pair the wrong tasks or hang.",
   "The handshake's task names.", "Generate every task's TF_CONFIG from one cluster list with distinct indices.")
_r("DD510", "cluster-lists-disagree", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Tasks disagree about the cluster",
   "The cluster lists in the tasks' TF_CONFIGs differ; the odd tasks are named (majority vote).",
   "TensorFlow connects to the addresses it is given: tasks with another list wait for peers that are "
   "not there, or form a different cluster.", "Every task's TF_CONFIG, exchanged in the mesh.",
   "Generate every task's TF_CONFIG from one cluster list.")
_r("DD511", "loopback-for-remote-peer", C.CONFIG_TF_CONFIG, "Loopback address for a task on another host",
   "A task's TF_CONFIG lists a peer at localhost/127.x although that peer runs on another host.",
   "The task connects to itself instead of the peer and waits forever.",
   "The TF_CONFIG and host names exchanged in the mesh.", "List that peer by its real host name or address.")
_r("DD512", "package-version-mismatch", C.VERSION_MISMATCH, "Package versions differ across tasks",
   "A package (or Python, or TensorFlow's CUDA build) with another version on some tasks; the odd ones are named.",
   "Different TensorFlow/Keras/protobuf versions across tasks fail collectives or checkpoint restores in "
   "ways that name no version.", "Every task's fingerprint.", "Run every task from the same image/venv.")
_r("DD513", "env-var-mismatch", C.VERSION_MISMATCH, "Environment variables differ across tasks",
   "TF_*, NCCL_*, GRPC_*, LD_LIBRARY_PATH... set differently on some tasks.",
   "These variables change TensorFlow's behaviour (Keras flavour, NCCL transport, library search path).",
   "Every task's fingerprint.", "Set the variables identically on every task.")
_r("DD514", "argv-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, "Command lines differ across tasks",
   "A task started with other arguments (batch size, data path...) than the majority.",
   "Collectives expect identical programs; a different batch size or model hangs or corrupts training.",
   "Every task's command line.", "Start every task with the same arguments.")
_r("DD515", "slow-link", C.STRAGGLER_SLOW_WORKER, "Slow link to a task",
   "Round-trip times to (or from) a task far above the others'.",
   "Every synchronous step waits for the slowest link.", "Round-trip times of the mesh probes.",
   "Check that task's network (placement, NIC, congestion).")
_r("DD516", "lossy-link", C.NETWORK_UNREACHABLE, "Lost probes on a link",
   "Mesh pings between two tasks that got no answer in time.", "Lossy links stall gRPC and collectives.",
   "The mesh pings.", "Check the link between the two hosts.")
_r("DD517", "low-throughput", C.STRAGGLER_SLOW_WORKER, "Low throughput to a task",
   "Measured throughput (--bandwidth) far below the other pairs'.", "Gradient exchange runs at the slowest link.",
   "The bulk transfer of the mesh check.", "Check that link (placement, NIC speed, congestion).")
_r("DD518", "duplicate-task", C.CONFIG_TF_CONFIG, "Two processes claim the same task",
   "Two processes both say they are the same task (the same type and index).",
   "One of them cannot bind its port or takes the other's place; another index has nobody.",
   "The identities exchanged in the mesh.", "Give every process its own task index.")
_r("DD519", "mesh-incomplete", C.NETWORK_UNREACHABLE, "Mesh check incomplete",
   "This task did not receive the reports of every reachable task within the timeout.",
   "Parts of the mesh table are missing, so some verdicts are partial.", "The reports received.",
   "Raise --timeout, or look at the tasks named.")


# --- static checks ---------------------------------------------------------------------------
#: Findings after which the task cannot be identified: ``check`` stops with exit 2.
BLOCKING_CODES = frozenset({"DD301", "DD302", "DD305", "DD306"})
STRATEGIES = ("auto", "mwms", "ps")
_TOP_KEYS = ("cluster", "task", "rpc_layer", "environment")


@dataclass(frozen=True)
class StaticReport:
    """What the static checks concluded, and the spec when the document made one."""

    findings: tuple[Finding, ...]
    spec: ClusterSpec | None

    @property
    def blocking(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.code in BLOCKING_CODES)


def _ev(text: str, task: TaskRef | None = None) -> Evidence:
    return Evidence(task=str(task) if task else None, ts=None, text=text, role="cause")


def _f(code: str, culprit: str | None, summary: str, *, severity: Severity = Severity.ERROR,
       evidence: Iterable[Evidence] = (), remedy: str | None = None) -> Finding:
    return get(code).finding(culprit=culprit, summary=summary, severity=severity, evidence=evidence, remedy=remedy)


def _shape(origin: str, what: str, remedy: str | None = None) -> Finding:
    return _f("DD302", None, f"{origin}: {what}", remedy=remedy)


def _jobs_from(cluster: Any, origin: str) -> tuple[list[tuple[str, tuple[str, ...]]] | None, list[Finding]]:
    if not isinstance(cluster, dict):
        return None, [_shape(origin, f"`cluster` is a {type(cluster).__name__}, not a mapping of job -> list")]
    jobs, out = [], []
    for name, entries in cluster.items():
        if isinstance(entries, dict):  # TensorFlow's sparse form {"0": "h:p", ...}
            keys = sorted(entries, key=lambda k: int(k) if str(k).isdigit() else -1)
            if [str(k) for k in keys] != [str(i) for i in range(len(keys))]:
                out.append(_shape(origin, f"job {name!r} is a mapping whose keys are not 0..{len(keys) - 1}"))
                continue
            entries = [entries[k] for k in keys]
        if isinstance(entries, str):
            out.append(_shape(origin, f"job {name!r} is the string {entries!r}, not a list",
                              remedy=f'write "{name}": ["{entries}"]'))
            continue
        if not isinstance(entries, list):
            out.append(_shape(origin, f"job {name!r} is a {type(entries).__name__}, not a list of \"host:port\""))
            continue
        bad = [e for e in entries if not isinstance(e, str)]
        if bad:
            out.append(_shape(origin, f"job {name!r} has non-string entries {bad[:3]!r}",
                              remedy='write each task as a "host:port" string'))
            continue
        jobs.append((str(name), tuple(entries)))
    return (None if out else jobs), out


def _task_from(task: Any, origin: str) -> tuple[TaskRef | None, list[Finding]]:
    if not isinstance(task, dict):
        return None, [_shape(origin, f"`task` is a {type(task).__name__}, not {{\"type\": ..., \"index\": ...}}")]
    ttype, index = task.get("type"), task.get("index")
    if not isinstance(ttype, str) or not ttype:
        return None, [_shape(origin, "`task.type` is missing or not a string")]
    if isinstance(index, bool) or index is None:
        return None, [_shape(origin, "`task.index` is missing", remedy='add "index": N to "task"')]
    if isinstance(index, str) and index.strip().lstrip("-").isdigit():
        index = int(index)  # TensorFlow does int(index) too
    if not isinstance(index, int):
        return None, [_shape(origin, f"`task.index` is {index!r}, not an integer")]
    return TaskRef(ttype, index), []


def interpret(doc: ConfigDocument) -> StaticReport:
    """Turn a read document into a :class:`ClusterSpec`, reporting what stops or misleads TensorFlow."""
    origin = doc.origin
    if doc.problem is not None:
        where = f" at {doc.problem.where()}" if doc.problem.line is not None else ""
        kind = "YAML" if doc.kind == "cluster_file" and not (doc.text or "").lstrip().startswith("{") else "JSON"
        return StaticReport((_f("DD301", None, f"{origin} is not valid {kind}{where}: {doc.problem.message}"),), None)
    value = doc.value
    if not isinstance(value, dict):
        return StaticReport((_shape(origin, f"the top level is a {type(value).__name__}, not an object"),), None)
    out: list[Finding] = [_f("DD318", None, f"{origin}: key {k!r} appears more than once; only the last is used",
                             severity=W) for k in dict.fromkeys(doc.duplicate_keys)]
    bare = doc.kind == "cluster_file" and "cluster" not in value and not set(value) & set(_TOP_KEYS[1:])
    cluster, task_value = (value, None) if bare else (value.get("cluster"), value.get("task"))
    if not bare:
        for key in value:
            if key not in _TOP_KEYS:
                close = difflib.get_close_matches(str(key).lower(), _TOP_KEYS, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                out.append(_f("DD319", None, f"{origin}: unknown key {key!r}{hint}; TensorFlow ignores it",
                              severity=W))
    if cluster is None:
        out.append(_f("DD303", None, f"{origin} has no `cluster`: TensorFlow would train each task alone"))
        return StaticReport(tuple(out), None)
    jobs, problems = _jobs_from(cluster, origin)
    if jobs is None:
        return StaticReport(tuple(out + problems), None)
    task: TaskRef | None = doc.task_override
    if task is None and task_value is not None:
        task, problems = _task_from(task_value, origin)
        if problems:
            return StaticReport(tuple(out + problems), None)
    elif task is None and doc.kind == "tf_config":
        out.append(_f("DD304", None, f"{origin} has a cluster but no `task`"))
    rpc = value.get("rpc_layer") if not bare else None
    if rpc is not None and not isinstance(rpc, str):
        return StaticReport(tuple(out + [_shape(origin, "`rpc_layer` is not a string")]), None)
    spec = ClusterSpec(tuple(jobs), task, origin, rpc)
    if task is not None:
        size = len(spec.job(task.type))
        if task.type not in spec.job_names and task.type != "evaluator":
            out.append(_f("DD305", str(task), f"task type {task.type!r} is not a job of the cluster "
                                              f"(jobs: {', '.join(spec.job_names) or 'none'})"))
        elif task.type in spec.job_names and not 0 <= task.index < size:
            out.append(_f("DD306", str(task), f"task index {task.index} is out of range: job {task.type!r} "
                                              f"has {size} task{'s' if size != 1 else ''} "
                                              f"(indices 0..{size - 1})"))
    return StaticReport(tuple(out), spec)


def infer_strategy(spec: ClusterSpec, strategy: str = "auto") -> str:
    """``ps`` when the cluster has a ps job (or was told so), else ``mwms``."""
    if strategy != "auto":
        return strategy
    return "ps" if "ps" in spec.job_names else "mwms"


def _host_key(addr) -> tuple[str, int]:
    return ("<loopback>" if addr.is_loopback else addr.host.lower(), addr.port)


def check_cluster(spec: ClusterSpec, strategy: str = "auto") -> tuple[Finding, ...]:
    """Every static rule over a sound cluster; pure."""
    out: list[Finding] = []
    owner = str(spec.task) if spec.task else None
    where = f" in {owner}'s config" if owner else ""
    names = spec.job_names
    for name in names:
        if name not in KNOWN_JOBS:
            close = difflib.get_close_matches(name.lower(), KNOWN_JOBS, n=1)
            hint = "chief" if name.lower() == "master" else (close[0] if close else None)
            fix = f'rename "{name}" to "{hint}"' if hint else None
            out.append(_f("DD315", owner, f"job {name!r}{where} is not one of chief, worker, ps, evaluator",
                          remedy=fix))
        if not spec.job(name):
            out.append(_f("DD314", owner, f"job {name!r}{where} lists no tasks"))
    parsed = {}
    for task, text in spec.tasks():
        try:
            parsed[task] = parse_address(text)
        except AddressError as exc:
            out.append(_f("DD308", str(task), f"{task}'s address {exc.reason}", remedy=exc.fix,
                          evidence=[_ev(f"{spec.origin}: {task.type}[{task.index}] = {text!r}", spec.task)]))
    seen: dict[tuple[str, int], TaskRef] = {}
    for task, addr in parsed.items():
        key = _host_key(addr)
        if key in seen:
            first = seen[key]
            out.append(_f("DD307", str(task), f"{task} and {first} are both listed at {addr}",
                          evidence=[_ev(f"{first.type}[{first.index}] = {spec.address_of(first)!r}", spec.task),
                                    _ev(f"{task.type}[{task.index}] = {spec.address_of(task)!r}", spec.task)]))
        else:
            seen[key] = task
    loop = [t for t, a in parsed.items() if a.is_loopback]
    remote = [t for t, a in parsed.items() if not a.is_loopback]
    if loop and remote:
        for task in loop:
            out.append(_f("DD309", str(task),
                          f"{task} is listed at {parsed[task]}{where}, a loopback address, while "
                          f"{', '.join(map(str, remote[:3]))} {'are' if len(remote) > 1 else 'is'} on other "
                          f"hosts: no other machine can reach it there",
                          evidence=[_ev(f"{task.type}[{task.index}] = {spec.address_of(task)!r}", spec.task)],
                          remedy=f"list {task} by a host name or address the other hosts can reach"))
    for task, addr in parsed.items():
        if addr.port < 1024:
            out.append(_f("DD320", str(task), f"{task} uses port {addr.port}, which needs root to bind", severity=W))
    for job, code, label in (("chief", "DD313", "chief"), ("evaluator", "DD316", "evaluator")):
        if len(spec.job(job)) > 1:
            out.append(_f(code, owner, f"{len(spec.job(job))} {label} tasks{where}; TensorFlow allows one"))
    chosen = infer_strategy(spec, strategy)
    if "evaluator" in names:
        ps_like = chosen == "ps"
        out.append(_f("DD312", "evaluator:0", f"`evaluator` is listed in the training cluster{where}",
                      severity=Severity.ERROR if ps_like else W))
    if chosen == "ps":
        if "chief" not in names:
            out.append(_f("DD310", owner, f"the cluster{where} has ps tasks but no chief (the coordinator)"))
        for job in ("ps", "worker"):
            if not spec.job(job):
                out.append(_f("DD311", owner, f"ParameterServerStrategy needs at least one {job} task; the "
                                              f"cluster{where} has none"))
    elif "ps" in names:
        out.append(_f("DD311", owner, f"MultiWorkerMirroredStrategy was named, but the cluster{where} has ps tasks "
                                      "it will never use", severity=W))
    training = len(spec.job("chief")) + len(spec.job("worker"))
    if training == 1 and chosen == "mwms":
        out.append(_f("DD317", owner, f"the cluster{where} has a single training task: it will train alone",
                      severity=I))
    if spec.rpc_layer is not None and spec.rpc_layer != "grpc":
        out.append(_f("DD321", owner, f"rpc_layer is {spec.rpc_layer!r}; open-source TensorFlow serves grpc",
                      severity=W))
    return tuple(out)


def check_pod(spec: ClusterSpec, pod) -> tuple[Finding, ...]:
    """DD420: a TFJob pod (:class:`~distdoctor.cluster.tfjob.TFJobPod`) whose name names another task. Pure."""
    if pod is None or spec.task is None or pod.task == str(spec.task):
        return ()
    return (get("DD420").finding(
        culprit=str(spec.task),
        summary=f"pod {pod.pod} is {pod.task} by its name, but its TF_CONFIG says it is {spec.task}",
        evidence=(Evidence(str(spec.task), None, f"HOSTNAME={pod.pod}", "cause"),
                  Evidence(str(spec.task), None, f"TF_CONFIG task = {spec.task} ({spec.origin})", "cause"))),)


def check_document(doc: ConfigDocument, strategy: str = "auto") -> StaticReport:
    """All static checks: the document's shape, then the cluster's rules."""
    first = interpret(doc)
    if first.spec is None:
        return first
    return StaticReport(first.findings + check_cluster(first.spec, strategy), first.spec)
