"""Build the TF_CONFIG of every task of a local cluster.

TensorFlow has no launcher: each process must be told the whole cluster and
its own place in it through the ``TF_CONFIG`` environment variable.

:data:`TF_CONFIG_SCHEDULER` is the :class:`~.scheduler.Scheduler` of a task started by hand (ssh,
systemd, a script) with a ``TF_CONFIG`` of its own: the cluster is that variable, and there is no
place beside the task's own output to show the job's outcome.
"""
from __future__ import annotations

import json
import socket
from dataclasses import dataclass

from typing import Mapping

from ..errors import UsageError
from .scheduler import DEFAULT_PORT_BASE, ExitSemantics, Layout, OutcomeSink, TaskIdentity
from .tfjob import tf_config_task

__all__ = ["LocalCluster", "pick_free_ports", "build_local_cluster", "task_name", "parse_task_name",
           "TFConfigScheduler", "TF_CONFIG_SCHEDULER"]


def task_name(job: str, index: int) -> str:
    return f"{job}:{index}"


def parse_task_name(name: str) -> tuple[str, int]:
    job, sep, idx = name.partition(":")
    if not sep or not idx.isdigit() or not job:
        raise UsageError(f"task name {name!r} is not of the form job:index (e.g. worker:1)")
    return job, int(idx)


def pick_free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """Ask the kernel for ``n`` distinct free ports.

    All sockets are held open until every port is chosen, so the same port is
    never handed out twice; there is still a small window before TensorFlow
    binds it, which is why ``port_in_use`` remains a diagnosable failure.
    """
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass(frozen=True)
class LocalCluster:
    """A cluster whose tasks all run on this machine."""

    jobs: dict[str, tuple[str, ...]]  # job -> addresses, in index order

    @property
    def tasks(self) -> list[str]:
        order = ["chief", "worker", "ps", "evaluator"]
        out = []
        for job in sorted(self.jobs, key=lambda j: (order.index(j) if j in order else 9, j)):
            out += [task_name(job, i) for i in range(len(self.jobs[job]))]
        return out

    @property
    def strategy(self) -> str:
        return "parameter_server" if "ps" in self.jobs else "multi_worker_mirrored"

    def tf_config(self, task: str) -> str:
        job, idx = parse_task_name(task)
        return json.dumps({"cluster": {j: list(a) for j, a in self.jobs.items()},
                           "task": {"type": job, "index": idx}})


def build_local_cluster(workers: int, ps: int = 0, chief: bool = False, host: str = "localhost") -> LocalCluster:
    if workers < 1:
        raise UsageError(f"--workers must be at least 1 (got {workers})")
    if ps < 0:
        raise UsageError(f"--ps must be 0 or more (got {ps})")
    if workers + ps > 256:
        raise UsageError(f"{workers + ps} tasks is more than this machine should run (max 256)")
    if ps and not chief:
        chief = True  # ParameterServerStrategy needs a coordinator
    n = workers + ps + (1 if chief else 0)
    ports = iter(pick_free_ports(n))
    jobs: dict[str, tuple[str, ...]] = {}
    if chief:
        jobs["chief"] = (f"{host}:{next(ports)}",)
    jobs["worker"] = tuple(f"{host}:{next(ports)}" for _ in range(workers))
    if ps:
        jobs["ps"] = tuple(f"{host}:{next(ports)}" for _ in range(ps))
    return LocalCluster(jobs=jobs)


class TFConfigScheduler:
    """A task started by hand with its own ``TF_CONFIG``, as a :class:`~.scheduler.Scheduler`."""

    name = "tf_config"
    title = "TF_CONFIG"
    log_prefixes = ()
    exit_codes = ExitSemantics(note="no scheduler reads the exit status: whoever started the task does")

    def detect(self, environ: Mapping[str, str]) -> bool:
        return "TF_CONFIG" in environ

    def identity(self, environ: Mapping[str, str]) -> TaskIdentity:
        task = tf_config_task(environ)
        return TaskIdentity(self.name, f"{task[0]}-{task[1]}" if task else "")

    def layout(self, environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> Layout | None:
        return None

    def outcome_sink(self, environ: Mapping[str, str]) -> OutcomeSink | None:
        return None


#: The one instance the registry (:mod:`.schedulers`) lists.
TF_CONFIG_SCHEDULER = TFConfigScheduler()
