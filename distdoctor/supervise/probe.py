"""Look at a task from outside: /proc via psutil, its memory cgroup, the kernel log, py-spy.

Every function here returns plain data and swallows the races of processes
that come and go; none of them decides anything.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import psutil

from ..diagnose.observations import OomEvidence, TaskState

__all__ = ["ProcSample", "sample_tree", "shm_usage", "tcp_bytes", "parse_ss", "cgroup_of", "read_cgroup_memory", "kernel_oom_lines", "py_spy_dump", "py_spy_path", "host_memory_limit"]

_STATE_NAMES = {
    psutil.STATUS_RUNNING: TaskState.RUNNING, psutil.STATUS_SLEEPING: TaskState.SLEEPING,
    psutil.STATUS_DISK_SLEEP: TaskState.DISK_SLEEP, psutil.STATUS_STOPPED: TaskState.STOPPED,
    psutil.STATUS_TRACING_STOP: TaskState.TRACING_STOP, psutil.STATUS_ZOMBIE: TaskState.ZOMBIE,
    psutil.STATUS_DEAD: TaskState.DEAD, psutil.STATUS_IDLE: TaskState.IDLE,
}


@dataclass(frozen=True)
class ProcSample:
    ts: float
    pid: int                 # the process we consider the task's main one
    state: str               # of that process
    rss_bytes: int           # whole process tree
    cpu_seconds: float       # whole process tree, user+system
    cgroup: str | None       # memory cgroup path of the main process
    num_threads: int
    io_bytes: int | None = None  # whole tree: bytes through read()/write() (rchar + wchar; files and pipes)
    pids: tuple[int, ...] = ()   # the tree's processes
    net: tuple | None = None     # ((fd, local, peer), bytes moved) per TCP socket of the tree, when looked at
    shm: tuple | None = None     # (bytes used, size) of the /dev/shm the main process sees (its mount namespace's)


def cgroup_of(pid: int) -> str | None:
    """The memory cgroup of ``pid`` (``v1:/path`` or ``v2:/path``)."""
    return _cgroup_of(pid)


def _cgroup_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cgroup") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    v2 = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if "memory" in parts[1].split(","):
            return "v1:" + parts[2]
        if parts[0] == "0" and parts[1] == "":
            v2 = "v2:" + parts[2]
    return v2


def shm_usage(pid: int) -> tuple[int, int] | None:
    """(bytes used, size) of the shared memory ``/dev/shm`` that ``pid`` sees -- its own mount namespace's (a
    container's is 64 MiB by default in Docker), through ``/proc/PID/root``; None where it has none or it cannot be
    read. Data loader workers, NCCL and MPI map their buffers there; a page that a full one cannot back is a SIGBUS."""
    try:
        st = os.statvfs(f"/proc/{pid}/root/dev/shm")
    except OSError:
        return None
    size = st.f_blocks * st.f_frsize
    return (size - st.f_bfree * st.f_frsize, size) if size > 0 else None


def sample_tree(leader_pid: int, main_pid: int | None, ts: float) -> ProcSample | None:
    """Sample the task's process tree (leader and descendants)."""
    try:
        leader = psutil.Process(leader_pid)
        procs = [leader] + leader.children(recursive=True)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    main = None
    rss = 0
    cpu = 0.0
    threads = 0
    io: int | None = None
    pids = []
    for p in procs:
        try:
            with p.oneshot():
                rss += p.memory_info().rss
                ct = p.cpu_times()
                cpu += ct.user + ct.system
                threads += p.num_threads()
                pids.append(p.pid)
                try:
                    c = p.io_counters()
                    io = (io or 0) + getattr(c, "read_chars", c.read_bytes) + getattr(c, "write_chars", c.write_bytes)
                except (psutil.AccessDenied, AttributeError, NotImplementedError):
                    pass
                if main_pid is not None and p.pid == main_pid:
                    main = p
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    if main is None:
        # the deepest python-looking process, else the leader
        main = leader
        for p in procs[1:]:
            try:
                if "python" in p.name():
                    main = p
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
    try:
        state = _STATE_NAMES.get(main.status(), main.status())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        state = TaskState.EXITED
    return ProcSample(ts=ts, pid=main.pid, state=state, rss_bytes=rss, cpu_seconds=cpu,
                      cgroup=_cgroup_of(main.pid), num_threads=threads, io_bytes=io, pids=tuple(pids),
                      shm=shm_usage(main.pid))


_SS_USER = re.compile(r"pid=(\d+),fd=(\d+)")


def parse_ss(text: str) -> dict[int, dict[tuple, int]]:
    """``ss -tinpH`` output -> {pid: {(fd, local, peer): bytes sent + received}}. Pure.

    Each socket is a line with its addresses and owners (``users:(("python",pid=12,fd=5))``) followed
    by an indented line of TCP_INFO counters; bytes_acked stands in for bytes_sent on older kernels."""
    out: dict[int, dict[tuple, int]] = {}
    owners: list[tuple[int, tuple]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            parts = line.split()
            addrs = tuple(parts[2:4]) if len(parts) >= 4 else ()
            owners = [(int(pid), (int(fd),) + addrs) for pid, fd in _SS_USER.findall(line)]
            continue
        vals = dict(re.findall(r"\bbytes_(sent|acked|received):(\d+)", line))
        total = int(vals.get("sent", vals.get("acked", 0))) + int(vals.get("received", 0))
        for pid, key in owners:
            out.setdefault(pid, {})[key] = total
        owners = []
    return out


def tcp_bytes(timeout: float = 2.0) -> dict[int, dict[tuple, int]] | None:
    """Bytes moved so far over every TCP socket of this host's processes, by pid (``ss`` from iproute2);
    None where ``ss`` is missing or fails. Python's sockets use send()/recv(), which /proc/PID/io does not count."""
    exe = shutil.which("ss")
    if not exe:
        return None
    try:
        res = subprocess.run([exe, "-tinpH"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return parse_ss(res.stdout)


def _read_int(path: str) -> int | None:
    try:
        with open(path) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _read_kv(path: str) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open(path) as fh:
            for line in fh:
                k, _, v = line.strip().partition(" ")
                if v.strip().lstrip("-").isdigit():
                    out[k] = int(v)
    except OSError:
        pass
    return out


def read_cgroup_memory(cgroup: str | None) -> OomEvidence | None:
    """Memory limit, usage and OOM counters of a memory cgroup (v1 or v2)."""
    if not cgroup:
        return None
    version, _, rel = cgroup.partition(":")
    if version == "v1":
        base = os.path.join("/sys/fs/cgroup/memory", rel.lstrip("/"))
        if not os.path.isdir(base):
            return None
        limit = _read_int(os.path.join(base, "memory.limit_in_bytes"))
        if limit is not None and limit >= 1 << 60:
            limit = None
        ctl = _read_kv(os.path.join(base, "memory.oom_control"))
        return OomEvidence(cgroup=rel, limit_bytes=limit,
                           usage_bytes=_read_int(os.path.join(base, "memory.usage_in_bytes")),
                           max_usage_bytes=_read_int(os.path.join(base, "memory.max_usage_in_bytes")),
                           failcnt=_read_int(os.path.join(base, "memory.failcnt")),
                           oom_kill_count=ctl.get("oom_kill"), under_oom=bool(ctl.get("under_oom")))
    base = os.path.join("/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup",
                        rel.lstrip("/"))
    if not os.path.isdir(base):
        return None
    try:
        with open(os.path.join(base, "memory.max")) as fh:
            raw = fh.read().strip()
        limit = None if raw == "max" else int(raw)
    except (OSError, ValueError):
        limit = None
    events = _read_kv(os.path.join(base, "memory.events"))
    return OomEvidence(cgroup=rel, limit_bytes=limit, usage_bytes=_read_int(os.path.join(base, "memory.current")),
                       max_usage_bytes=_read_int(os.path.join(base, "memory.peak")),
                       failcnt=events.get("max"), oom_kill_count=events.get("oom_kill"))


def host_memory_limit() -> int:
    return psutil.virtual_memory().total


_OOM_RE = re.compile(r"(Out of memory|Memory cgroup out of memory|oom-kill|Killed process)", re.IGNORECASE)


def kernel_oom_lines(pids: set[int]) -> list[str]:
    """Kernel log lines about the OOM killer that name one of ``pids`` (where dmesg is readable)."""
    exe = shutil.which("dmesg")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "--ctime"], capture_output=True, text=True, timeout=3).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    lines = []
    for line in out.splitlines()[-2000:]:
        if _OOM_RE.search(line) and any(re.search(rf"\b(?:pid[= ]|process ){p}\b", line) for p in pids):
            lines.append(line.strip())
    return lines[-5:]


def py_spy_path() -> str | None:
    """The py-spy executable (on PATH, or beside this interpreter), or None."""
    exe = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    return exe if os.path.exists(exe) else None


def py_spy_dump(pid: int, native: bool = False, timeout: float = 8.0, nonblocking: bool = False) -> str | None:
    """``py-spy dump`` of a process (needs ptrace rights: root, or the same user)."""
    exe = py_spy_path()
    if exe is None:
        return None
    argv = [exe, "dump", "--pid", str(pid)]
    if native:
        argv.append("--native")
    if nonblocking:
        argv.append("--nonblocking")
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (res.stdout or "").strip()
    return text or None
