"""Task names and the scheduler of a task started by hand with its own ``TF_CONFIG``.

TensorFlow has no launcher: each process must be told the whole cluster and
its own place in it through the ``TF_CONFIG`` environment variable.

:data:`TF_CONFIG_SCHEDULER` is the :class:`~.scheduler.Scheduler` of a task started by hand (ssh,
systemd, a script) with a ``TF_CONFIG`` of its own: the cluster is that variable, and there is no
place beside the task's own output to show the job's outcome.
"""
from __future__ import annotations

from typing import Mapping

from ..errors import UsageError
from .scheduler import DEFAULT_PORT_BASE, ExitSemantics, Layout, OutcomeSink, TaskIdentity
from .tfjob import tf_config_task

__all__ = ["task_name", "parse_task_name", "TFConfigScheduler", "TF_CONFIG_SCHEDULER"]


def task_name(job: str, index: int) -> str:
    return f"{job}:{index}"


def parse_task_name(name: str) -> tuple[str, int]:
    job, sep, idx = name.partition(":")
    if not sep or not idx.isdigit() or not job:
        raise UsageError(f"task name {name!r} is not of the form job:index (e.g. worker:1)")
    return job, int(idx)


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
