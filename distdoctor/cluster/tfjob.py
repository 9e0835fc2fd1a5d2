"""A Kubeflow TFJob pod's environment: which replica the pod is, as its name says.

The training operator names each pod ``<job>-<replica>-<index>`` (``mnist-worker-1``), sets
``HOSTNAME`` to it, and writes the cluster and the pod's task into ``TF_CONFIG``. Reading the pod
name gives the task without parsing TF_CONFIG, and a second, independent account of it: a pod
named ``…-worker-1`` whose TF_CONFIG says ``worker:0`` was given another pod's configuration.

As a :class:`~.scheduler.Scheduler` (:data:`TFJOB`): the cluster comes from the TF_CONFIG the
operator wrote; the job's outcome goes to each container's termination message
(``/dev/termination-log``, which ``kubectl describe pod`` and the TFJob's status show).

Pure functions of the environment mapping they are given.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Mapping

from .scheduler import DEFAULT_PORT_BASE, ExitSemantics, Layout, LogPrefix, OutcomeSink, TaskIdentity

__all__ = ["TFJobPod", "tfjob_pod", "in_kubernetes", "tf_config_task", "REPLICA_TYPES", "TFJob", "TFJOB",
           "TFJOB_PERMANENT", "TFJOB_RETRYABLE", "TERMINATION_LOG", "TERMINATION_LOG_ENV"]

#: restartPolicy: ExitCode -- the training operator's permanent and retryable exit statuses.
TFJOB_PERMANENT = (1, 2, 126, 127, 128, 139)
TFJOB_RETRYABLE = (130, 137, 143)
#: The container's termination message (terminationMessagePath's default), and the variable that moves it.
TERMINATION_LOG = "/dev/termination-log"
TERMINATION_LOG_ENV = "DISTDOCTOR_TERMINATION_LOG"

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


def tf_config_task(environ: Mapping[str, str]) -> tuple[str, int] | None:
    """The ``task`` of ``TF_CONFIG`` as (type, index); None when it is missing or malformed."""
    try:
        task = json.loads(environ.get("TF_CONFIG", "")).get("task", {})
        return str(task["type"]), int(task["index"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


class TFJob:
    """A Kubeflow TFJob's pod (any pod on Kubernetes) as a :class:`~.scheduler.Scheduler`."""

    name = "tfjob"
    title = "Kubernetes (TFJob)"
    log_prefixes = (LogPrefix(r"\[pod/(?P<label>[^/\]\s]+)(?:/[^\]\s]*)?\] ?", "[pod/mnist-worker-1/tensorflow] ",
                              "kubectl logs --prefix", style="kubectl", names="pod"),)
    exit_codes = ExitSemantics(retryable=TFJOB_RETRYABLE, permanent=TFJOB_PERMANENT,
                               note="restartPolicy: ExitCode restarts a pod on a retryable status and fails the "
                                    "job on a permanent one")

    def detect(self, environ: Mapping[str, str]) -> bool:
        return in_kubernetes(environ)

    def identity(self, environ: Mapping[str, str]) -> TaskIdentity:
        pod = tfjob_pod(environ)
        task = tf_config_task(environ)
        label = f"{task[0]}-{task[1]}" if task else f"{pod.replica}-{pod.index}" if pod else ""
        return TaskIdentity(self.name, label, host=environ.get("HOSTNAME") or None)

    def layout(self, environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> Layout | None:
        return None   # the operator writes TF_CONFIG

    def outcome_sink(self, environ: Mapping[str, str]) -> OutcomeSink | None:
        """Each node writes the verdict to its container's termination message."""
        path = environ.get(TERMINATION_LOG_ENV, "").strip()
        return OutcomeSink("file", "every", path=path or TERMINATION_LOG, create=bool(path), limit=4096,
                           where=f"the container's termination message ({path or TERMINATION_LOG})")


#: The one instance the registry (:mod:`.schedulers`) lists.
TFJOB = TFJob()
