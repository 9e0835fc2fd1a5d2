"""Open MPI's ``mpirun`` as a scheduler: ``mpirun -np N distdoctor run --node -- python train.py``.

``mpirun`` starts N processes and tells each its place with ``OMPI_COMM_WORLD_*`` variables:
``RANK`` (0..N-1), ``SIZE`` (N), ``LOCAL_RANK`` (its index among the ranks on its host). It does
not say where the other ranks run, so the hosts come from

* ``DISTDOCTOR_MPI_HOSTS``, in ``mpirun --host``'s own syntax (``node1:2,node2:2``; a host
  without ``:N`` has one slot), read as mpirun's default by-slot mapping places ranks: the first
  host's slots take the first ranks, and so on -- pass the same value to both:
  ``mpirun --host $H -x DISTDOCTOR_MPI_HOSTS=$H ...``;
* otherwise, when every rank runs on this host (``OMPI_COMM_WORLD_LOCAL_SIZE`` equals the size),
  this host's name (``PMIX_HOSTNAME``, else the operating system's).

Every rank is a worker (``worker:RANK``, so rank 0 is the collector) on port
``port_base + LOCAL_RANK`` of its host, as the Slurm path numbers ports per node; ``run --node``
hands the training the matching ``TF_CONFIG``.

Pure functions of the environment mapping they are given, except the host-name fallback.
"""
from __future__ import annotations

import re
import socket
from typing import Mapping

from ..errors import ConfigError
from .scheduler import DEFAULT_PORT_BASE, ExitSemantics, Layout, LogPrefix, OutcomeSink, TaskIdentity

__all__ = ["OpenMPI", "OPENMPI", "in_openmpi", "parse_hosts", "rank_hosts"]

_HOST_ENTRY = re.compile(r"^(?P<host>[A-Za-z0-9_.\-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<slots>\d+))?$")


def in_openmpi(environ: Mapping[str, str]) -> bool:
    """True when the environment is a process started by Open MPI's ``mpirun``."""
    return "OMPI_COMM_WORLD_RANK" in environ and "OMPI_COMM_WORLD_SIZE" in environ


def parse_hosts(text: str) -> list[tuple[str, int]]:
    """``node1:2,node2`` -> ``[("node1", 2), ("node2", 1)]`` (``mpirun --host``'s syntax)."""
    out: list[tuple[str, int]] = []
    for item in text.split(","):
        item = item.strip()
        m = _HOST_ENTRY.match(item)
        if m is None:
            raise ConfigError(f"Open MPI: DISTDOCTOR_MPI_HOSTS: {item!r} is not HOST or HOST:SLOTS "
                              "(mpirun --host's syntax, e.g. node1:2,node2:2)")
        slots = int(m.group("slots") or 1)
        if slots < 1:
            raise ConfigError(f"Open MPI: DISTDOCTOR_MPI_HOSTS: {item!r} has no slots")
        out.append((m.group("host").strip("[]"), slots))
    return out


def rank_hosts(hosts: list[tuple[str, int]], size: int) -> list[str]:
    """The host of each rank under mpirun's default by-slot mapping (a host's slots fill first)."""
    per_rank = [host for host, slots in hosts for _ in range(slots)]
    if len(per_rank) < size:
        raise ConfigError(f"Open MPI: DISTDOCTOR_MPI_HOSTS has {len(per_rank)} slots for "
                          f"OMPI_COMM_WORLD_SIZE={size} ranks")
    return per_rank[:size]


def _int(environ: Mapping[str, str], name: str) -> int:
    value = environ.get(name, "").strip()
    if not value.isdigit():
        raise ConfigError(f"Open MPI: {name}={value!r} is not a non-negative integer")
    return int(value)


def _own_host(environ: Mapping[str, str]) -> str:
    return environ.get("PMIX_HOSTNAME", "").strip() or socket.gethostname()


class OpenMPI:
    """Open MPI's ``mpirun`` as a :class:`~.scheduler.Scheduler`."""

    name = "openmpi"
    title = "Open MPI"
    #: ``horovodrun`` prints the same with the rank alone (``[0]<stderr>:``). A stream of them stays whole (the ranks'
    #: lines are read one by one beside the launcher's own): split per rank, the structural reader would take a rank's
    #: segfault for the cause of a cascade mpirun reports.
    log_prefixes = (LogPrefix(r"\[(?:\d+,)?(?P<label>\d+)\]<(?:stdout|stderr)>:", "[1,0]<stdout>:",
                              "mpirun --tag-output (Open MPI), horovodrun", style="mpi", names="rank", splits=False),)
    exit_codes = ExitSemantics(
        ends_job_on_failure=True,
        note="mpirun aborts the whole job as soon as one process exits non-zero, and exits with that status; it "
             "restarts nothing")

    def detect(self, environ: Mapping[str, str]) -> bool:
        return in_openmpi(environ)

    def identity(self, environ: Mapping[str, str]) -> TaskIdentity:
        def num(name: str) -> int | None:
            value = environ.get(name, "").strip()
            return int(value) if value.isdigit() else None
        rank = num("OMPI_COMM_WORLD_RANK")
        return TaskIdentity(self.name, f"rank-{rank}" if rank is not None else "", rank=rank,
                            size=num("OMPI_COMM_WORLD_SIZE"), local_rank=num("OMPI_COMM_WORLD_LOCAL_RANK"),
                            host=_own_host(environ))

    def layout(self, environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> Layout:
        rank, size = _int(environ, "OMPI_COMM_WORLD_RANK"), _int(environ, "OMPI_COMM_WORLD_SIZE")
        if size < 1 or rank >= size:
            raise ConfigError(f"Open MPI: OMPI_COMM_WORLD_RANK={rank} is out of range for OMPI_COMM_WORLD_SIZE={size}")
        used = [f"OMPI_COMM_WORLD_RANK={rank}", f"OMPI_COMM_WORLD_SIZE={size}"]
        text = environ.get("DISTDOCTOR_MPI_HOSTS", "").strip()
        if text:
            per_rank = rank_hosts(parse_hosts(text), size)
            used.append(f"DISTDOCTOR_MPI_HOSTS={text}")
        else:
            local_size = environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", "").strip()
            if local_size != str(size):
                raise ConfigError(f"Open MPI: the {size} ranks run on more than one host "
                                  f"(OMPI_COMM_WORLD_LOCAL_SIZE={local_size or 'unset'}) and DISTDOCTOR_MPI_HOSTS "
                                  "does not say which: pass mpirun's --host list to it too "
                                  "(mpirun --host $H -x DISTDOCTOR_MPI_HOSTS=$H ...)")
            host = _own_host(environ)
            per_rank = [host] * size
            used.append(f"host {host}")
        local: list[int] = []
        seen: dict[str, int] = {}
        for h in per_rank:
            local.append(seen.get(h, 0))
            seen[h] = seen.get(h, 0) + 1
        own_local = environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "").strip()
        if own_local.isdigit() and int(own_local) != local[rank]:
            raise ConfigError(f"Open MPI: rank {rank} is local rank {own_local} on its host, but by-slot mapping of "
                              f"DISTDOCTOR_MPI_HOSTS puts it at {local[rank]} on {per_rank[rank]}: the ranks were "
                              "mapped differently (--map-by slot is what the list assumes)")
        if any(port_base + i > 65535 for i in local):
            raise ConfigError(f"Open MPI: port base {port_base} + {max(local)} is past 65535")
        addrs = tuple(f"{h}:{port_base + i}" for h, i in zip(per_rank, local))
        return Layout((("worker", addrs),), "worker", rank, "Open MPI (" + ", ".join(used) + ")")

    def outcome_sink(self, environ: Mapping[str, str]) -> OutcomeSink | None:
        """Rank 0 (the collector) prints the verdict as its last line; mpirun relays it."""
        return OutcomeSink("stdout", "collector", where="rank 0's last line of output")


#: The one instance the registry (:mod:`.schedulers`) lists.
OPENMPI = OpenMPI()
