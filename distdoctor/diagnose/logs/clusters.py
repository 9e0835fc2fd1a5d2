"""The cluster a log printed, judged by the same static rules as ``distdoctor check``.

Tasks print their cluster in several shapes: a ``TF_CONFIG`` (user scripts, Estimator's ``TF_CONFIG environment
variable: {...}``), MultiWorkerMirroredStrategy's ``cluster_spec = {...}``, the distribute coordinator's line, and
the gRPC server's ``Initialize GrpcChannelCache for job worker -> {0 -> host:port, 1 -> ...}`` (one line per job).
When a log shows tasks failing to reach each other, the printed cluster often says why: a peer listed at
``localhost`` while the others are on other hosts, two tasks at one address, a task index past the end of its job.
Those are the preflight rules (``preflight/rules.py``: DD305-DD309, DD313, DD314), applied here to what the log
printed; rules that depend on the strategy or the TensorFlow version (a ps job without a chief, an evaluator in the
cluster) are left to the reasoning that knows the version's habits.

Pure: hits in, findings out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...cluster.spec import ConfigDocument, TaskRef
from ...model import Finding, Severity
from ...preflight.rules import check_document
from .demux import parse_cluster
from .scan import Hit

__all__ = ["PrintedCluster", "printed_clusters", "defects", "startup_defect"]

# a defect of the cluster itself, whatever the strategy or TensorFlow version
STATIC_CODES = frozenset({"DD305", "DD306", "DD307", "DD308", "DD309", "DD313", "DD314"})
_LOOPBACK = re.compile(r"^(?:localhost|127\.\d+\.\d+\.\d+|\[?::1\]?|0\.0\.0\.0):\d+$")
_CHANNEL_CACHE = re.compile(r"Initialize GrpcChannelCache for job (?P<job>\w+) -> \{(?P<body>[^}]*)\}")


@dataclass(frozen=True)
class PrintedCluster:
    jobs: dict[str, list[str]]
    own: str | None          # the task whose cluster this is (its TF_CONFIG's task, or the writer of the lines)
    hits: tuple[Hit, ...]    # the lines that printed it
    whole: bool = True       # printed whole (a TF_CONFIG, a cluster_spec), not assembled from per-job cache lines


def _channel_job(text: str) -> tuple[str, list[str]] | None:
    m = _CHANNEL_CACHE.search(text)
    if not m:
        return None
    by_index = {}
    for part in m.group("body").split(","):
        idx, _, addr = part.partition("->")
        if idx.strip().isdigit() and addr.strip():
            by_index[int(idx)] = addr.strip()
    if sorted(by_index) != list(range(len(by_index))):
        return None   # a sparse cache (a task's view of its peers only) is not the whole job
    job = m.group("job").lower()
    # TensorFlow's server lists its own task as localhost:PORT in its channel cache (TF 1.x and early 2.x): a
    # loopback entry there may be the writer itself, so it is not judged as an address the others must reach
    return job, [f"this-task-{job}-{i}:{by_index[i].rsplit(':', 1)[-1]}" if _LOOPBACK.match(by_index[i])
                 else by_index[i] for i in range(len(by_index))]


def printed_clusters(hits: list[Hit]) -> list[PrintedCluster]:
    """Every cluster the logs printed: whole specs as printed, channel caches merged per stream and writer."""
    out: list[PrintedCluster] = []
    caches: dict[tuple[str, str | None], tuple[dict[str, list[str]], list[Hit]]] = {}
    for h in hits:
        if h.sig.name == "tf-channel-cache":
            job = _channel_job(h.text)
            if job:
                jobs, lines = caches.setdefault((h.stream, h.writer), ({}, []))
                jobs[job[0]] = job[1]
                lines.append(h)
        elif h.sig.name == "cluster-config-printed":
            spec, own = parse_cluster(h.text)
            if spec:
                out.append(PrintedCluster(spec, own or h.writer, (h,)))
    for (_, writer), (jobs, lines) in caches.items():
        out.append(PrintedCluster(jobs, writer, tuple(lines), whole=False))
    return out


def defects(pc: PrintedCluster) -> list[Finding]:
    """The preflight rules' errors over one printed cluster (TF1's ``master`` is read as the chief)."""
    jobs = {k: v for k, v in pc.jobs.items()}
    if "master" in jobs and "chief" not in jobs:
        jobs["chief"] = jobs.pop("master")
    value: dict = {"cluster": jobs}
    if pc.own and not pc.own.startswith("rank:"):   # a launcher's rank is no TF task type (srun's task N)
        t = TaskRef.parse(pc.own)
        value["task"] = {"type": "chief" if t.type == "master" else t.type, "index": t.index}
    doc = ConfigDocument(origin="the cluster printed in the log", kind="cluster_file", value=value)
    report = check_document(doc)
    return [f for f in report.findings if f.code in STATIC_CODES and f.severity == Severity.ERROR]


def startup_defect(pc: PrintedCluster, task: str | None) -> str | None:
    """Why a task that crashed at start-up right after printing this whole cluster was refused by the code that reads
    it (TF 1.x Estimator's RunConfig and the distribute coordinator): a cluster without the task's own job, a ps job
    with no chief/master, a multi-worker Estimator cluster with an evaluator and no chief. These depend on the TF
    version and strategy, so they explain such a crash but are not judged on their own (that is :func:`defects`)."""
    jobs = {j.lower() for j in pc.jobs}
    if task:
        job = task.split(":")[0]
        if job not in jobs and job != "rank":
            return f"does not list this task's own job ({job})"
    if "ps" in jobs and not ({"chief", "master"} & jobs):
        return "has parameter servers but no chief/master task"
    if jobs and jobs <= {"worker", "evaluator"} and "evaluator" in jobs and len(pc.jobs.get("worker", [])) > 1:
        return "has no chief for a multi-worker Estimator job"
    return None
