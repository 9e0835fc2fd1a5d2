"""``distdoctor run``'s own launcher, as a scheduler: every task of the cluster on this machine.

TensorFlow has no launcher: each process must be told the whole cluster and its own place in it
through ``TF_CONFIG``. Without ``--node``, ``distdoctor run`` is that launcher: it picks a free port
per task (:func:`build_local_cluster`), hands each task its ``TF_CONFIG`` and name
(:meth:`LocalScheduler.task_environ`), prints every task's lines behind ``[job:index]`` and stops the
other tasks once a verdict is final. :data:`LOCAL` says so through the same
:class:`~.scheduler.Scheduler` contract as Slurm, Open MPI and TFJob, so a task it started knows
itself (``DISTDOCTOR_TASK``) and ``diagnose`` reads its terminal output's prefixes from here.
"""
from __future__ import annotations

import json
import random
import socket
from dataclasses import dataclass
from typing import Mapping

from ..errors import UsageError
from .scheduler import DEFAULT_PORT_BASE, ExitSemantics, Layout, LogPrefix, OutcomeSink, TaskIdentity
from .tfconfig import parse_task_name, task_name

__all__ = ["LocalCluster", "pick_free_ports", "ephemeral_low", "build_local_cluster", "LocalScheduler", "LOCAL", "TASK_ENV"]

#: The variable the launcher sets to a task's name (``worker:1``) in that task's environment.
TASK_ENV = "DISTDOCTOR_TASK"

_JOB_ORDER = ("chief", "worker", "ps", "evaluator")


def ephemeral_low(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> int:
    """The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read)."""
    try:
        with open(path) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int, host: str) -> socket.socket | None:
    """A socket bound to ``port`` on ``host`` and held (so the port is not picked twice), or None where the port
    is taken there or on the wildcard address (a task may listen on either)."""
    if host != "0.0.0.0":
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                return None
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((host, port))
    except OSError:
        s.close()
        return None
    return s


def pick_free_ports(n: int, host: str = "127.0.0.1", consecutive: bool = False,
                    rng: random.Random | None = None) -> list[int]:
    """``n`` distinct free ports (``consecutive``: ``base, base+1, …``), drawn at random below the kernel's
    ephemeral range, where users' fixed ports are (2222, 12345).

    A task binds its port seconds later, after importing TensorFlow. A port the kernel chose (``bind(0)``) comes
    from the ephemeral range, and in that window the kernel can hand the same port to any process that connects
    out or asks for a port of its own — the task then dies of ``port_in_use`` for nothing. Below the range only a
    process that names the port itself can take it. Each port must bind on ``host`` and on every address; the
    chosen ones are held until all are chosen, so none is handed out twice. Where no such port is found (a
    crowded range) the kernel chooses.
    """
    rng = rng or random.Random()
    low = ephemeral_low()
    socks: list[socket.socket] = []
    try:
        if low - 10000 > 4 * n:
            for _ in range(400):
                if consecutive:
                    base = rng.randrange(10000, low - n)
                    got = [_bindable(p, host) for p in range(base, base + n)]
                    if all(got):
                        socks = got
                        break
                    for s in got:
                        if s is not None:
                            s.close()
                else:
                    port = rng.randrange(10000, low)
                    if any(s.getsockname()[1] == port for s in socks):
                        continue
                    s = _bindable(port, host)
                    if s is not None:
                        socks.append(s)
                        if len(socks) == n:
                            break
        if len(socks) < n:
            if consecutive:
                raise OSError(f"no {n} consecutive free ports below the ephemeral range")
            while len(socks) < n:
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
        out = []
        for job in sorted(self.jobs, key=lambda j: (_JOB_ORDER.index(j) if j in _JOB_ORDER else 9, j)):
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


class LocalScheduler:
    """``distdoctor run`` launching every task itself, as a :class:`~.scheduler.Scheduler`."""

    name = "local"
    title = "distdoctor run (every task on this machine)"
    #: ``distdoctor run`` prints each task's lines behind its name: ``[worker:1] Epoch 1/3``.
    #: (``master:N``, the TF 1 name of the chief, is read the same way.)
    log_prefixes = (LogPrefix(r"\[(?P<label>(?:chief|worker|ps|evaluator|master):\d+)\] ?", "[worker:0] ",
                              "distdoctor run's terminal output", style="distdoctor"),)
    exit_codes = ExitSemantics(ends_job_on_failure=True,
                               note="distdoctor run stops the other tasks once its verdict is final; "
                                    "--restart reads the verdict's category, not the exit status")

    def detect(self, environ: Mapping[str, str]) -> bool:
        return bool(environ.get(TASK_ENV)) and "TF_CONFIG" in environ

    def identity(self, environ: Mapping[str, str]) -> TaskIdentity:
        job, index = parse_task_name(environ[TASK_ENV])
        return TaskIdentity(self.name, f"{job}-{index}", rank=index if job == "worker" else None,
                            host=socket.gethostname())

    def layout(self, environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> Layout | None:
        return None   # the launcher wrote each task's TF_CONFIG

    def outcome_sink(self, environ: Mapping[str, str]) -> OutcomeSink | None:
        return None   # the launcher prints the diagnosis itself and writes diagnosis.json

    @staticmethod
    def plan(workers: int, ps: int = 0, chief: bool = False, host: str = "localhost") -> LocalCluster:
        """The cluster ``distdoctor run --workers N [--ps M] [--chief]`` starts (free ports picked now)."""
        return build_local_cluster(workers, ps, chief, host)

    @staticmethod
    def task_environ(cluster: LocalCluster, task: str) -> dict[str, str]:
        """What the launcher tells ``task``: its ``TF_CONFIG`` and its name."""
        return {"TF_CONFIG": cluster.tf_config(task), TASK_ENV: task}


#: The one instance the registry (:mod:`.schedulers`) lists.
LOCAL = LocalScheduler()
