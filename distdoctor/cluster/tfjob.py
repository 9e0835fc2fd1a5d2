"""A Kubeflow TFJob pod's environment: which replica the pod is, as its name says.

The training operator names each pod ``<job>-<replica>-<index>`` (``mnist-worker-1``), sets
``HOSTNAME`` to it, and writes the cluster and the pod's task into ``TF_CONFIG``. Reading the pod
name gives the task without parsing TF_CONFIG, and a second, independent account of it: a pod
named ``…-worker-1`` whose TF_CONFIG says ``worker:0`` was given another pod's configuration.

Pure functions of the environment mapping they are given.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Mapping

__all__ = ["TFJobPod", "tfjob_pod", "in_kubernetes", "task_label", "REPLICA_TYPES"]

#: TFJob replica types, as they appear (lower-cased) in pod names and TF_CONFIG.
REPLICA_TYPES = ("chief", "master", "worker", "ps", "evaluator")
_POD = re.compile(r"^(?P<job>[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)-(?P<replica>" + "|".join(REPLICA_TYPES)
                  + r")-(?P<index>\d+)$")


@dataclass(frozen=True)
class TFJobPod:
    """The TFJob, replica type and index a pod's name gives."""

    pod: str
    job_name: str
    replica: str
    index: int

    @property
    def task(self) -> str:
        return f"{self.replica}:{self.index}"


def in_kubernetes(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("KUBERNETES_SERVICE_HOST"))


def tfjob_pod(environ: Mapping[str, str]) -> TFJobPod | None:
    """The pod's place in its TFJob, from ``HOSTNAME``; None outside Kubernetes or for another name."""
    if not in_kubernetes(environ):
        return None
    m = _POD.match(environ.get("HOSTNAME", "").strip().lower())
    if m is None:
        return None
    return TFJobPod(m.group(0), m.group("job"), m.group("replica"), int(m.group("index")))


def task_label(environ: Mapping[str, str]) -> str:
    """A short name for this task, for bundle folders: ``worker-1`` (TF_CONFIG, else the TFJob pod's
    name), ``slurm-3`` (SLURM_PROCID); empty when nothing says."""
    try:
        task = json.loads(environ.get("TF_CONFIG", "")).get("task", {})
        return f"{task['type']}-{int(task['index'])}"
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    pod = tfjob_pod(environ)
    if pod is not None:
        return f"{pod.replica}-{pod.index}"
    procid = environ.get("SLURM_PROCID", "")
    return f"slurm-{procid}" if procid.isdigit() else ""
