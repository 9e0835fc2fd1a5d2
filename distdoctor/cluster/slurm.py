"""Slurm as a cluster source: build the cluster TensorFlow's SlurmClusterResolver would.

``srun`` starts one process per task and tells each one where it stands with
``SLURM_*`` variables. TensorFlow's ``SlurmClusterResolver`` turns them into a
cluster: the step's nodes sorted by name, ``tasks-per-node`` tasks on each,
ports ``port_base + local index`` (8888 by default), ranks assigned to jobs in
sorted job-name order. We rebuild exactly that, without importing TensorFlow,
so ``check`` sees the cluster the training will see.

Everything here is a pure function of the environment mapping it is given.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from ..errors import ConfigError
from .scheduler import DEFAULT_PORT_BASE, ExitSemantics, Layout, LogPrefix, OutcomeSink, TaskIdentity

__all__ = ["expand_hostlist", "expand_tasks_per_node", "SlurmLayout", "slurm_layout", "in_slurm",
           "DEFAULT_PORT_BASE", "Slurm", "SLURM"]

def _split_top_level(text: str) -> list[str]:
    """Split at commas that are not inside ``[...]``."""
    parts, cur, depth = [], "", 0
    for ch in text:
        if ch == "[":
            if depth:
                raise ValueError("nested '['")
            depth = 1
        elif ch == "]":
            if not depth:
                raise ValueError("']' without '['")
            depth = 0
        elif ch == "," and not depth:
            if not cur:
                raise ValueError("empty host name between commas")
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if depth:
        raise ValueError("unclosed '['")
    if cur:
        parts.append(cur)
    return parts


def _expand_range(expr: str) -> list[str]:
    """``01-03,7`` -> ``01 02 03 7``; zero padding follows the first bound's width."""
    out: list[str] = []
    for piece in expr.split(","):
        bounds = piece.split("-")
        if len(bounds) == 1:
            bounds = bounds * 2
        if len(bounds) != 2 or not all(b.isdigit() for b in bounds):
            raise ValueError(f"bad range {piece!r}")
        lo, hi = int(bounds[0]), int(bounds[1])
        if hi < lo:
            raise ValueError(f"range {piece!r} runs backwards")
        if hi - lo > 100_000:
            raise ValueError(f"range {piece!r} is implausibly large")
        width = len(bounds[0])
        out.extend(str(i).zfill(width) for i in range(lo, hi + 1))
    return out


def _expand_part(part: str) -> list[str]:
    # A part is text with any number of bracket groups: rack[1-2]-n[01-02].
    pieces = re.split(r"(\[[^\]]*\])", part)
    hosts = [""]
    for piece in pieces:
        if piece.startswith("["):
            options = _expand_range(piece[1:-1])
            hosts = [h + o for h in hosts for o in options]
        else:
            hosts = [h + piece for h in hosts]
    return hosts


def expand_hostlist(hostlist: str) -> list[str]:
    """Expand a Slurm hostlist (``node[01-03,7],gpu5``) in order, keeping duplicates.

    Raises ``ValueError`` naming what is wrong; callers turn it into a
    :class:`ConfigError` that names the variable.
    """
    text = hostlist.strip()
    if not text:
        raise ValueError("empty hostlist")
    hosts: list[str] = []
    for part in _split_top_level(text):
        hosts.extend(_expand_part(part))
    return hosts


def expand_tasks_per_node(spec: str) -> list[int]:
    """``2(x3),1`` -> ``[2, 2, 2, 1]``."""
    out: list[int] = []
    for part in spec.strip().split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part.strip())
        if m is None:
            raise ValueError(f"bad element {part!r}")
        out.extend([int(m.group(1))] * int(m.group(2) or 1))
    return out


def in_slurm(environ: Mapping[str, str]) -> bool:
    """True when the environment looks like a task started by ``srun``."""
    return "SLURM_PROCID" in environ and any(
        k in environ for k in ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"))


@dataclass(frozen=True)
class SlurmLayout:
    """The cluster SlurmClusterResolver derives, and this task's place in it."""

    jobs: tuple[tuple[str, tuple[str, ...]], ...]
    task_type: str
    task_index: int
    variables: tuple[tuple[str, str], ...]  # the SLURM_* values it was built from


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str]:
    for name in names:
        if environ.get(name, "").strip():
            return name, environ[name].strip()
    raise ConfigError(f"Slurm: none of {', '.join(names)} is set; run the check inside an srun step "
                      "(or pass --tf-config/--cluster)")


def _parse_jobs(text: str, ntasks: int) -> dict[str, int]:
    """``chief:1,worker:3`` (DISTDOCTOR_SLURM_JOBS); default: every task a worker."""
    if not text.strip():
        return {"worker": ntasks}
    jobs: dict[str, int] = {}
    for item in text.split(","):
        name, _, count = item.strip().partition(":")
        if not name or not count.isdigit():
            raise ConfigError(f"DISTDOCTOR_SLURM_JOBS: {item!r} is not JOB:COUNT (e.g. chief:1,worker:3)")
        jobs[name] = int(count)
    return jobs


def slurm_layout(environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> SlurmLayout:
    """Build the cluster from ``SLURM_*`` variables, as SlurmClusterResolver does.

    Step variables win over job variables (a step may use fewer nodes than
    the allocation). Inconsistent variables raise :class:`ConfigError`.
    """
    used: dict[str, str] = {}
    name, nodelist = _first(environ, ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"))
    used[name] = nodelist
    try:
        nodes = expand_hostlist(nodelist)
    except ValueError as exc:
        raise ConfigError(f"Slurm: {name}={nodelist!r} is not a valid hostlist: {exc}") from None
    pname, procid = _first(environ, ("SLURM_PROCID",))
    used[pname] = procid
    nname, ntasks_text = _first(environ, ("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"))
    used[nname] = ntasks_text
    if not procid.isdigit() or not ntasks_text.isdigit():
        raise ConfigError(f"Slurm: {pname}={procid!r} and {nname}={ntasks_text!r} must be integers")
    rank, ntasks = int(procid), int(ntasks_text)
    tname = next((n for n in ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE") if environ.get(n)), None)
    if tname is None:
        if ntasks % len(nodes):
            raise ConfigError(f"Slurm: SLURM_STEP_TASKS_PER_NODE is not set and {ntasks} tasks do not "
                              f"divide evenly over {len(nodes)} nodes")
        per_node = [ntasks // len(nodes)] * len(nodes)
    else:
        used[tname] = environ[tname]
        try:
            per_node = expand_tasks_per_node(environ[tname])
        except ValueError as exc:
            raise ConfigError(f"Slurm: {tname}={environ[tname]!r} is not a tasks-per-node list: {exc}") from None
    if len(per_node) != len(nodes):
        raise ConfigError(f"Slurm: {tname} gives {len(per_node)} node counts but {name} lists "
                          f"{len(nodes)} nodes; the variables come from different steps")
    if sum(per_node) != ntasks:
        raise ConfigError(f"Slurm: {tname} adds up to {sum(per_node)} tasks but {nname}={ntasks}")
    if rank >= ntasks:
        raise ConfigError(f"Slurm: {pname}={rank} is out of range for {nname}={ntasks}")
    # SlurmClusterResolver sorts nodes by name and numbers ports per node.
    task_list: list[str] = []
    for host, count in sorted(dict(zip(nodes, per_node)).items()):
        task_list.extend(f"{host}:{port_base + i}" for i in range(count))
    jobs = _parse_jobs(environ.get("DISTDOCTOR_SLURM_JOBS", ""), ntasks)
    if sum(jobs.values()) != len(task_list):
        raise ConfigError(f"DISTDOCTOR_SLURM_JOBS asks for {sum(jobs.values())} tasks but the step has "
                          f"{len(task_list)} (duplicate node names in the hostlist?)")
    out: list[tuple[str, tuple[str, ...]]] = []
    start, my_type, my_index = 0, "", 0
    for job, count in sorted(jobs.items()):
        out.append((job, tuple(task_list[start:start + count])))
        if start <= rank < start + count:
            my_type, my_index = job, rank - start
        start += count
    return SlurmLayout(jobs=tuple(out), task_type=my_type, task_index=my_index,
                       variables=tuple(sorted(used.items())))


def _int(environ: Mapping[str, str], *names: str) -> int | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


class Slurm:
    """Slurm's ``srun`` as a :class:`~.scheduler.Scheduler`."""

    name = "slurm"
    title = "Slurm"
    #: The second is the same label read loosely: in a stream of them a task may print a number first.
    log_prefixes = (LogPrefix(r" {0,5}(?P<label>\d{1,5}): (?!\d)", "0: ", "srun --label", style="srun",
                              family="slurm", names="rank"),
                    LogPrefix(r" *(?P<label>\d{1,6}): ", "0: 2021-03-04 12:00:00.000: E ", "srun --label",
                              style="slurm", family="slurm", names="rank", strict=False))
    exit_codes = ExitSemantics(
        note="srun without --kill-on-bad-exit lets the other tasks run on; Slurm requeues a job only when the batch "
             "script does (scontrol requeue) or the administrator's RequeueExit lists the status "
             "(`distdoctor policy slurm`)")

    def detect(self, environ: Mapping[str, str]) -> bool:
        return in_slurm(environ)

    def identity(self, environ: Mapping[str, str]) -> TaskIdentity:
        rank = _int(environ, "SLURM_PROCID")
        return TaskIdentity(self.name, f"slurm-{rank}" if rank is not None else "", rank=rank,
                            size=_int(environ, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"),
                            local_rank=_int(environ, "SLURM_LOCALID"),
                            host=environ.get("SLURMD_NODENAME") or None)

    def layout(self, environ: Mapping[str, str], port_base: int = DEFAULT_PORT_BASE) -> Layout:
        lay = slurm_layout(environ, port_base)
        origin = "Slurm (" + ", ".join(f"{k}={v}" for k, v in lay.variables) + ")"
        return Layout(lay.jobs, lay.task_type, lay.task_index, origin)

    def outcome_sink(self, environ: Mapping[str, str]) -> OutcomeSink | None:
        """The job's Comment (``scontrol show job``, ``squeue -o %k``), written by the collector."""
        job = environ.get("SLURM_JOB_ID", "").strip()
        if not job.isdigit():
            return None
        return OutcomeSink("command", "collector", argv=("scontrol", "update", f"JobId={job}", "Comment={verdict}"),
                           where=f"job {job}'s Comment (scontrol show job {job})", limit=250)


#: The one instance the registry (:mod:`.schedulers`) lists.
SLURM = Slurm()
