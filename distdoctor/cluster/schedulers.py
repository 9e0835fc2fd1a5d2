"""The registry of schedulers: one list, in the order they are detected.

Open MPI comes before Slurm: ``mpirun`` inside an ``sbatch`` allocation starts its ranks through
Slurm, and they inherit ``SLURM_*`` variables that describe Slurm's step, not the ranks. Kubernetes
comes before a hand-written ``TF_CONFIG``, which every TFJob pod also has; so does ``distdoctor run``'s own
launcher (:mod:`.local`), which names each task it starts besides handing it a ``TF_CONFIG``. A new scheduler is one
module implementing :class:`~.scheduler.Scheduler` and one line in :data:`SCHEDULERS`.
"""
from __future__ import annotations

from typing import Mapping

from .local import LOCAL
from .openmpi import OPENMPI
from .scheduler import Scheduler, TaskIdentity
from .slurm import SLURM
from .tfconfig import TF_CONFIG_SCHEDULER
from .tfjob import TFJOB, tf_config_task

__all__ = ["SCHEDULERS", "detect", "by_name", "identity", "task_label"]

#: Every scheduler distdoctor knows, in detection order.
SCHEDULERS: tuple[Scheduler, ...] = (OPENMPI, SLURM, TFJOB, LOCAL, TF_CONFIG_SCHEDULER)


def detect(environ: Mapping[str, str]) -> Scheduler | None:
    """The scheduler that started this task, or None (a plain shell)."""
    for scheduler in SCHEDULERS:
        if scheduler.detect(environ):
            return scheduler
    return None


def by_name(name: str) -> Scheduler:
    for scheduler in SCHEDULERS:
        if scheduler.name == name:
            return scheduler
    raise KeyError(name)


def identity(environ: Mapping[str, str]) -> TaskIdentity | None:
    scheduler = detect(environ)
    return scheduler.identity(environ) if scheduler is not None else None


def task_label(environ: Mapping[str, str]) -> str:
    """A short name for this task, for bundle folders: ``worker-1`` (TF_CONFIG's task, whoever wrote it),
    else the scheduler's (``worker-1`` from a TFJob pod's name, ``slurm-3``, ``rank-3``); empty when nothing says."""
    task = tf_config_task(environ)
    if task is not None:
        return f"{task[0]}-{task[1]}"
    ident = identity(environ)
    return ident.label if ident is not None else ""
