"""Preflight's cluster-configuration rules (DD3xx, and DD420 for a TFJob pod) and the static config checks.

The checks read a cluster spec as pure functions of the parsed document: no DNS, no sockets, no clock, which is
what lets ``check --static`` run in CI or on a laptop, and ``diagnose`` judge a cluster printed in a log. The
other rules ``check`` can report live in their own lists: host and environment (DD401-DD419,
:mod:`.host_rules`, checked by :mod:`.host` and :mod:`.fingerprint`) and network and mesh (DD5xx,
:mod:`.mesh_rules`, judged by :mod:`.meshjudge`).

Codes are never reused.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable

from ..catalogue import RuleList, get
from ..model import Category as C
from ..model import Evidence, Finding, Severity
from ..cluster.spec import (KNOWN_JOBS, AddressError, ClusterSpec, ConfigDocument, TaskRef, parse_address)

__all__ = ["RULES", "BLOCKING_CODES", "StaticReport", "interpret", "check_cluster", "check_document",
           "check_pod", "infer_strategy", "STRATEGIES"]

W, I = Severity.WARNING, Severity.INFO
RULES = RuleList()


# --- DD3xx: cluster configuration (static) ---------------------------------------------------
RULES.add("DD301", "tf-config-invalid-json", C.CONFIG_TF_CONFIG, "TF_CONFIG or cluster file does not parse",
          "The cluster spec is not valid JSON (or YAML), with the line and column of the first error.",
          "TensorFlow reads TF_CONFIG with json.loads at strategy creation and dies with a bare JSONDecodeError, "
          "on every task at once.",
          "The text of TF_CONFIG, --tf-config or --cluster.",
          "Generate TF_CONFIG with json.dumps (double quotes, no trailing commas) and check it with "
          "`distdoctor check --static`.")
RULES.add("DD302", "tf-config-bad-shape", C.CONFIG_TF_CONFIG, "Cluster spec has the wrong structure",
          "`cluster` is not a mapping of job name to a list of \"host:port\" strings, or `task` is not "
          "{\"type\": str, \"index\": int}.",
          "TensorFlow fails deep inside ClusterSpec or the strategy with a TypeError that does not name the field.",
          "The parsed document.",
          'Write TF_CONFIG as {"cluster": {"worker": ["host:port", ...]}, "task": {"type": "worker", "index": 0}}.')
RULES.add("DD303", "cluster-missing", C.CONFIG_TF_CONFIG, "TF_CONFIG has no `cluster`",
          "A TF_CONFIG without a `cluster` key.",
          "TensorFlow then treats the job as local: each task trains alone on its own copy of the data and "
          "nothing fails, so the mistake shows only in the results.",
          "The parsed TF_CONFIG.", 'Add "cluster": {"worker": [...]} listing every task of the job.')
RULES.add("DD304", "task-missing", C.CONFIG_TF_CONFIG, "TF_CONFIG has no `task`",
          "A TF_CONFIG that lists a cluster but not which task this process is.",
          "Strategies cannot tell which server to start; every process believes it is the same task.",
          "The parsed TF_CONFIG.", 'Add "task": {"type": "worker", "index": N}, with N different on every task.')
RULES.add("DD305", "task-type-not-in-cluster", C.CONFIG_TF_CONFIG, "Task type is not a job of the cluster",
          "`task.type` names a job the cluster does not have (only `evaluator` may be absent).",
          "TensorFlow raises \"`task_type` ... not found in cluster_spec\" when the strategy is built.",
          "`task` and the job names of `cluster`.", "Use one of the cluster's job names as task.type.")
RULES.add("DD306", "task-index-out-of-range", C.CONFIG_TF_CONFIG, "Task index is out of range",
          "`task.index` is negative or not smaller than the number of tasks in its job.",
          "TensorFlow raises \"The `task_id` N exceeds the maximum id\"; on Kubernetes it usually means the "
          "replica count and the cluster list disagree.",
          "`task` and the length of its job's list.", "Give each task an index from 0 to len(job)-1.")
RULES.add("DD307", "duplicate-address", C.CONFIG_TF_CONFIG, "Two tasks share one address",
          "The same host:port (loopback spellings counted as one host) is listed for two tasks.",
          "Only one process can bind the port; the other task fails with \"address already in use\" or, worse, "
          "peers talk to the wrong task.", "The cluster lists.", "Give every task its own host:port.")
RULES.add("DD308", "malformed-address", C.CONFIG_TF_CONFIG, "Cluster entry is not host:port",
          "An entry without a port, with a scheme (grpc://), whitespace, a bad host name or a port outside 1-65535.",
          "gRPC cannot parse the address and the task never connects; the error names no task.",
          "The cluster lists.", 'Write each entry as "host:port" (IPv6 as "[addr]:port").')
RULES.add("DD309", "loopback-mixed", C.CONFIG_TF_CONFIG, "Loopback address in a multi-host cluster",
          "Some tasks are listed as localhost/127.x/::1/0.0.0.0 while others have real host names.",
          "From any other machine a loopback address points back at itself: peers wait forever for a task "
          "that is \"there\" (TensorFlow logs \"Waiting for 1/2 tasks to connect\").",
          "The cluster lists.", "List every task by a name or address the other hosts can reach.")
RULES.add("DD310", "ps-without-chief", C.CONFIG_TF_CONFIG, "Parameter-server cluster without a chief",
          "A cluster with a `ps` job but no `chief`.",
          "ParameterServerStrategy's coordinator must be the chief; without one nobody dispatches steps and the "
          "workers and ps wait forever.", "The job names.", 'Add a "chief" job with one task (the coordinator).')
RULES.add("DD311", "strategy-layout", C.CONFIG_TF_CONFIG, "Cluster does not fit the strategy",
          "ParameterServerStrategy without `ps` or `worker` tasks, or a `ps` job in a MultiWorkerMirroredStrategy job.",
          "ParameterServerStrategy raises \"There must be at least one ps/worker\"; MultiWorkerMirroredStrategy "
          "never uses ps tasks, which then sit idle or wait.", "The job names and --strategy.",
          "Match the cluster to the strategy: chief + worker (+ ps for ParameterServerStrategy).")
RULES.add("DD312", "evaluator-in-cluster", C.CONFIG_TF_CONFIG, "Evaluator listed inside the training cluster",
          "An `evaluator` job in `cluster`.",
          "The evaluator is meant to run beside the training cluster. ParameterServerStrategy connects to every "
          "listed task at start-up (remote.connect_to_cluster), so an evaluator that runs no server keeps it "
          "waiting; under MultiWorkerMirroredStrategy it is at best ignored.",
          "The job names.", "Leave the evaluator out of the training tasks' cluster; give it its own TF_CONFIG.")
RULES.add("DD313", "multiple-chiefs", C.CONFIG_TF_CONFIG, "More than one chief",
          "A `chief` job with more than one task.",
          "TensorFlow raises \"There must be at most one 'chief' job\".", "The cluster lists.",
          "Keep one chief; list the other tasks under `worker`.")
RULES.add("DD314", "empty-job", C.CONFIG_TF_CONFIG, "Job with no tasks",
          "A job whose list is empty.",
          "Empty jobs usually mean a replica count of 0 or a templating bug; a task of that type cannot exist.",
          "The cluster lists.", "Remove the job or list its tasks.")
RULES.add("DD315", "unknown-job-name", C.CONFIG_TF_CONFIG, "Job name TensorFlow does not allow",
          "A job other than chief, worker, ps or evaluator (for example the TF1 name `master`, or `workers`).",
          "TensorFlow raises \"Disallowed task type found in cluster spec\".", "The job names.",
          "Rename the job to chief, worker, ps or evaluator.")
RULES.add("DD316", "multiple-evaluators", C.CONFIG_TF_CONFIG, "More than one evaluator",
          "An `evaluator` job with more than one task.",
          "TensorFlow raises \"There must be at most one 'evaluator' job\".", "The cluster lists.",
          "Run a single evaluator.")
RULES.add("DD317", "single-task-cluster", C.CONFIG_TF_CONFIG, "Cluster with one training task",
          "Only one chief/worker task in the cluster.",
          "Multi-worker strategies then train on one machine; if more were intended, the cluster list is short.",
          "The cluster lists.", "List every worker in the cluster (check the replica count that generated it).")
RULES.add("DD318", "duplicate-json-key", C.CONFIG_TF_CONFIG, "Key given twice",
          "A JSON object with the same key twice, e.g. two \"worker\" lists.",
          "JSON keeps only the last one, silently dropping the first list.", "The TF_CONFIG text.",
          "Merge the two entries into one.")
RULES.add("DD319", "unknown-top-level-key", C.CONFIG_TF_CONFIG, "Unknown key in TF_CONFIG",
          "A top-level key other than cluster, task, rpc_layer, environment.",
          "TensorFlow ignores unknown keys; a misspelt \"Cluster\" or \"tasks\" silently means none.",
          "The parsed TF_CONFIG.", "Use the keys cluster, task, rpc_layer and environment.")
RULES.add("DD320", "privileged-port", C.CONFIG_TF_CONFIG, "Port below 1024",
          "A task port below 1024.", "Binding it needs root or CAP_NET_BIND_SERVICE; containers usually lack both.",
          "The cluster lists.", "Use ports above 1024 (2222 is the usual choice).")
RULES.add("DD321", "rpc-layer", C.CONFIG_TF_CONFIG, "Unusual rpc_layer",
          "An `rpc_layer` other than grpc.", "Open-source TensorFlow only serves grpc; other values fail to connect.",
          "The parsed TF_CONFIG.", 'Remove "rpc_layer" or set it to "grpc".')


RULES.add("DD420", "tfjob-pod-task-mismatch", C.CONFIG_TF_CONFIG, "TFJob pod name and TF_CONFIG disagree",
          "In a Kubeflow TFJob pod, the pod's name (`<job>-worker-1`) names another task than its TF_CONFIG's `task`.",
          "The training operator writes each pod's TF_CONFIG from its replica; a pod that holds another's (a "
          "template copied by hand, a ConfigMap shared by every pod) starts a second copy of that task, and the "
          "job hangs waiting for the one nobody started.",
          "HOSTNAME and the parsed TF_CONFIG.",
          "Let the operator set TF_CONFIG (do not set it in the pod template), or give each replica its own.")

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
