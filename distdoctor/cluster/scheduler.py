"""The scheduler contract: what a scheduler tells the task it starts, in one protocol.

A scheduler (Slurm's ``srun``, Open MPI's ``mpirun``, Kubeflow's TFJob, a hand-written
``TF_CONFIG``) starts one ``distdoctor run --node`` per task. Everything distdoctor needs to know
about it is one object implementing :class:`Scheduler`:

* :meth:`~Scheduler.detect` -- whether this environment is one of its tasks;
* :meth:`~Scheduler.identity` -- this task's identity (rank, size, local rank, host, a label);
* :meth:`~Scheduler.layout` -- the cluster's layout and ports, as TensorFlow will see it
  (``None`` when the scheduler leaves that to ``TF_CONFIG``);
* :attr:`~Scheduler.log_prefixes` -- the prefixes it puts on its tasks' output lines;
* :attr:`~Scheduler.exit_codes` -- how it reads a task's exit status (retry or give up);
* :meth:`~Scheduler.outcome_sink` -- where it shows a job's outcome (a job comment, a
  termination message, the launcher's last line), done by :mod:`distdoctor.supervise.outcome`.

One module per scheduler implements it (:mod:`.slurm`, :mod:`.openmpi`, :mod:`.tfjob`,
:mod:`.tfconfig`); :mod:`.schedulers` lists them, in the order they are detected. Adding a
scheduler is one module here and one line there.

Pure: every method is a function of the environment mapping it is given (``identity`` may ask
the operating system for the host name when the environment does not say).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, runtime_checkable

__all__ = ["Scheduler", "TaskIdentity", "Layout", "LogPrefix", "ExitSemantics", "OutcomeSink",
           "DEFAULT_PORT_BASE", "add_port_base_argument"]

#: The first port on every node when a scheduler's layout numbers ports per node (8888, as
#: TensorFlow's SlurmClusterResolver does).
DEFAULT_PORT_BASE = 8888


@dataclass(frozen=True)
class TaskIdentity:
    """Who this task is, as its scheduler says."""

    scheduler: str                 # the scheduler's name ("slurm", "openmpi", ...)
    label: str                     # a short name for bundle folders: worker-1, slurm-3, rank-1
    rank: int | None = None        # the global rank, where the scheduler numbers tasks
    size: int | None = None        # how many tasks it started
    local_rank: int | None = None  # the rank among the tasks on this host
    host: str | None = None        # this task's host, as the scheduler (or the OS) names it


@dataclass(frozen=True)
class Layout:
    """The cluster a scheduler's variables describe, and this task's place in it."""

    jobs: tuple[tuple[str, tuple[str, ...]], ...]   # (job, addresses in index order), jobs sorted
    task_type: str
    task_index: int
    origin: str                    # what it was built from, for messages ("Open MPI (OMPI_COMM_WORLD_RANK=1, ...)")

    def tf_config(self) -> dict:
        return {"cluster": {name: list(addrs) for name, addrs in self.jobs},
                "task": {"type": self.task_type, "index": self.task_index}}


@dataclass(frozen=True)
class LogPrefix:
    """A prefix the scheduler (or its launcher, with an option) puts before its tasks' lines."""

    pattern: str                   # a regular expression matching the prefix at a line's start (``re.match``); its
    #                                group ``label`` is the part that names the task
    example: str                   # "[1,0]<stdout>:" -- rank 0's line
    option: str = ""               # the launcher option that adds it ("--tag-output"), if not always there
    # How ``diagnose`` reads it (``diagnose/logs/prefixes.py`` builds its table from these declarations):
    style: str = ""                # the name the line splitter reports ("mpi", "srun", ...)
    family: str = "bracket"        # what a stream of such lines looks like: bracket ``[..]``, slurm ``N: ``, pipe ``.. |``
    names: str = "task"            # what the label is: "rank" (a number), "task" (``worker:1``), "pod" (a pod's name)
    strict: bool = True            # unambiguous on a single line; else read only where most of a stream's lines carry it
    splits: bool = True            # a stream of such lines is split into one log per task for the structural reader


@dataclass(frozen=True)
class ExitSemantics:
    """How the scheduler reads a task's exit status."""

    retryable: tuple[int, ...] = ()    # statuses its restart policy retries
    permanent: tuple[int, ...] = ()    # statuses that fail the job for good
    ends_job_on_failure: bool = False  # it kills the other tasks as soon as one exits non-zero
    note: str = ""


@dataclass(frozen=True)
class OutcomeSink:
    """Where the scheduler shows a job's outcome, and which task writes it there.

    ``kind``: ``command`` (run ``argv`` with ``{verdict}`` replaced by the one-line verdict),
    ``file`` (write it to ``path``) or ``stdout`` (print it last). ``writer``: ``collector``
    (the task that holds the cluster-wide verdict) or ``every`` (each node supervisor).
    """

    kind: str
    writer: str
    argv: tuple[str, ...] = ()
    path: str = ""
    where: str = ""                # for messages: "the job's Comment (scontrol show job 42)"
    limit: int = 0                 # the longest verdict it takes (0: no limit)
    create: bool = False           # ``file``: create it (a path the user named); else only an existing, writable one


@runtime_checkable
class Scheduler(Protocol):
    """What a scheduler tells a task (see the module doc). One instance per scheduler module."""

    name: str
    title: str
    log_prefixes: tuple[LogPrefix, ...]
    exit_codes: ExitSemantics

    def detect(self, environ: Mapping[str, str]) -> bool:
        """True when ``environ`` is the environment of a task this scheduler started."""

    def identity(self, environ: Mapping[str, str]) -> TaskIdentity:
        """This task's identity (call only after :meth:`detect` said yes)."""

    def layout(self, environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> Layout | None:
        """The cluster from the scheduler's variables, or None when ``TF_CONFIG`` carries it.

        Inconsistent variables raise :class:`~distdoctor.errors.ConfigError` naming them."""

    def outcome_sink(self, environ: Mapping[str, str]) -> OutcomeSink | None:
        """Where the job's outcome is shown, or None when this scheduler has no such place here."""


def add_port_base_argument(group) -> None:
    """``--port-base`` (alias ``--slurm-port-base``): the one definition, for ``check`` and ``run --node``."""
    group.add_argument("--port-base", "--slurm-port-base", dest="port_base", type=int, default=DEFAULT_PORT_BASE,
                       metavar="PORT",
                       help="first port on each node when the cluster comes from the scheduler's variables "
                            f"(Slurm, Open MPI): port_base + the task's index on its node (default {DEFAULT_PORT_BASE}, "
                            "as SlurmClusterResolver)")
