"""This host: can the task start here, and will it keep running?

Two halves, kept apart on purpose. :func:`collect_host_facts` touches the
machine (DNS, a test bind, the socket table, statvfs, rlimits, NVML) and
returns a :class:`HostFacts`; :func:`judge_host` is a pure function of those
facts, so every threshold is unit-tested with plain numbers.

Nothing here needs a GPU: NVML is used only when ``pynvml`` imports and
initialises.
"""
from __future__ import annotations

import concurrent.futures
import errno
import ipaddress
import os
import resource
import shutil
import socket
import time
from dataclasses import dataclass

from ..catalogue import get
from . import host_rules  # noqa: F401  (registers the codes fetched with get)
from ..model import Evidence, Finding, Severity
from ..cluster.spec import Address

__all__ = ["ProcessRef", "PortProbe", "Resolution", "Gpu", "HostFacts", "collect_host_facts", "judge_host",
           "probe_port", "port_holders", "resolve", "local_addresses", "GIB"]

GIB = 1 << 30
# Thresholds. Memory: TensorFlow itself plus one input pipeline needs ~2 GiB
# before the model; under 10% the OOM killer is one spike away.
MIN_MEMORY_BYTES, MIN_MEMORY_FRACTION = 2 * GIB, 0.10
# Checkpoints of mid-sized models are GiBs; 5 GiB / 5% leaves one or two saves.
MIN_DISK_BYTES, MIN_DISK_FRACTION = 5 * GIB, 0.05
# Docker's default /dev/shm is 64 MiB; NCCL wants hundreds of MiB per GPU.
MIN_SHM_BYTES = 1 * GIB
# Each gRPC peer, data shard and checkpoint file holds descriptors.
MIN_NOFILE = 4096
# A GPU under half free before training starts is shared with someone else.
MIN_GPU_FREE_FRACTION = 0.5
RESOLVE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ProcessRef:
    """A process seen holding something (a port, GPU memory); ``detail`` is its command line or usage."""

    pid: int | None
    name: str | None
    detail: str | None = None

    def describe(self) -> str:
        if self.pid is None:
            return "a process this user cannot see (another user or network namespace)"
        cmd = f" ({self.detail[:120]})" if self.detail else ""
        return f"pid {self.pid} {self.name or '?'}{cmd}"


@dataclass(frozen=True)
class PortProbe:
    port: int
    bindable: bool
    error: str | None = None          # errno name: EADDRINUSE, EACCES, ...
    holders: tuple[ProcessRef, ...] = ()


@dataclass(frozen=True)
class Resolution:
    host: str
    addresses: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    total_bytes: int
    free_bytes: int
    processes: tuple[ProcessRef, ...] = ()


@dataclass(frozen=True)
class HostFacts:
    """Everything :func:`judge_host` reads. ``None`` means "could not be measured"."""

    task: str | None = None
    address: Address | None = None
    resolution: Resolution | None = None
    local_addresses: tuple[str, ...] = ()
    port: PortProbe | None = None
    mem_total: int | None = None
    mem_available: int | None = None
    cgroup_limit: int | None = None
    cgroup_usage: int | None = None
    checkpoint_dir: str | None = None
    disk_total: int | None = None
    disk_free: int | None = None
    disk_writable: bool | None = None
    shm_total: int | None = None
    nofile_soft: int | None = None
    nofile_hard: int | None = None
    core_soft: int | None = None
    core_pattern: str | None = None
    gpus: tuple[Gpu, ...] = ()
    nvml: str = "absent"               # "ok", "absent" (no pynvml / no driver), or the error

    def to_json(self) -> dict:
        return {
            "task": self.task, "address": str(self.address) if self.address else None,
            "resolves_to": list(self.resolution.addresses) if self.resolution else None,
            "port_free": self.port.bindable if self.port else None,
            "memory": {"total": self.mem_total, "available": self.mem_available,
                       "cgroup_limit": self.cgroup_limit, "cgroup_usage": self.cgroup_usage},
            "checkpoint_dir": {"path": self.checkpoint_dir, "total": self.disk_total, "free": self.disk_free,
                               "writable": self.disk_writable},
            "dev_shm_total": self.shm_total, "nofile": [self.nofile_soft, self.nofile_hard],
            "core": {"rlimit": self.core_soft, "pattern": self.core_pattern},
            "gpus": [{"index": g.index, "name": g.name, "total": g.total_bytes, "free": g.free_bytes}
                     for g in self.gpus],
            "nvml": self.nvml,
        }


# --- reading the machine -----------------------------------------------------------------------
def resolve(host: str, timeout: float = RESOLVE_TIMEOUT_S) -> Resolution:
    """getaddrinfo in a thread, so a dead resolver costs ``timeout`` and not 30 s."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        infos = pool.submit(socket.getaddrinfo, host, None, 0, socket.SOCK_STREAM).result(timeout)
    except concurrent.futures.TimeoutError:
        return Resolution(host, error=f"no answer from the resolver within {timeout:.0f} s")
    except (socket.gaierror, UnicodeError, OSError) as exc:
        return Resolution(host, error=str(exc))
    finally:
        pool.shutdown(wait=False)
    return Resolution(host, tuple(dict.fromkeys(i[4][0] for i in infos)))


def local_addresses() -> tuple[str, ...]:
    import psutil
    out = []
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family in (socket.AF_INET, socket.AF_INET6):
                out.append(a.address.split("%")[0])
    return tuple(dict.fromkeys(out))


def port_holders(port: int) -> tuple[ProcessRef, ...]:
    """Processes with a socket bound to ``port`` (needs root to see other users' pids)."""
    import psutil
    holders: dict[int | None, ProcessRef] = {}
    try:
        conns = psutil.net_connections(kind="inet")
    except (psutil.AccessDenied, OSError):
        return ()
    for c in conns:
        if not c.laddr or c.laddr.port != port or (c.raddr and c.status != psutil.CONN_LISTEN):
            continue
        if c.pid in holders:
            continue
        name = cmd = None
        if c.pid is not None:
            try:
                proc = psutil.Process(c.pid)
                name, cmd = proc.name(), " ".join(proc.cmdline())
            except (psutil.Error, OSError):
                pass
        holders[c.pid] = ProcessRef(c.pid, name, cmd)
    return tuple(holders.values())


HOLDER_LOOKS = 6
HOLDER_LOOK_S = 0.1


def probe_port(port: int, family: int = socket.AF_INET) -> PortProbe:
    """Bind the port as TensorFlow's server would (all interfaces, SO_REUSEADDR), then let go."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
        sock.listen(1)
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, str(exc))
        holders: tuple[ProcessRef, ...] = ()
        if exc.errno == errno.EADDRINUSE:
            # Another process's own bind-and-let-go probe can hold the port for an instant and be gone by the
            # time we look; the process that keeps it shows up a moment later. Look a few times, briefly.
            for _ in range(HOLDER_LOOKS):
                holders = port_holders(port)
                if holders:
                    break
                time.sleep(HOLDER_LOOK_S)
        return PortProbe(port, False, name, holders)
    finally:
        sock.close()
    return PortProbe(port, True)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _cgroup_memory() -> tuple[int | None, int | None]:
    """(limit, usage) of this process's memory cgroup, v2 or v1; None where unlimited/unknown."""
    rel = "/"
    for line in (_read("/proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and (parts[1] == "" or "memory" in parts[1].split(",")):
            rel = parts[2]
            if parts[1]:
                break
    candidates = [("/sys/fs/cgroup" + rel, "memory.max", "memory.current"), ("/sys/fs/cgroup", "memory.max",
                  "memory.current"), ("/sys/fs/cgroup/memory" + rel, "memory.limit_in_bytes",
                  "memory.usage_in_bytes"), ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes")]
    for base, lim_name, use_name in candidates:
        lim = _read(os.path.join(base, lim_name))
        if lim is None:
            continue
        use = _read(os.path.join(base, use_name))
        limit = int(lim) if lim.isdigit() and int(lim) < (1 << 60) else None
        return limit, (int(use) if use and use.isdigit() else None)
    return None, None


def _gpus() -> tuple[tuple[Gpu, ...], str]:
    try:
        import pynvml
    except ImportError:
        return (), "absent"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded...: no GPU here
        return (), "absent" if "NotFound" in type(exc).__name__ or "Driver" in type(exc).__name__ else str(exc)
    try:
        import psutil
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            name = pynvml.nvmlDeviceGetName(h)
            procs = []
            try:
                for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                    try:
                        pname = psutil.Process(p.pid).name()
                    except (psutil.Error, OSError):
                        pname = None
                    used = getattr(p, "usedGpuMemory", None)
                    procs.append(ProcessRef(p.pid, pname, f"{(used or 0) / GIB:.1f} GiB" if used else None))
            except pynvml.NVMLError:
                pass
            gpus.append(Gpu(i, name.decode() if isinstance(name, bytes) else str(name), int(mem.total),
                            int(mem.free), tuple(procs)))
        return tuple(gpus), "ok"
    except Exception as exc:
        return (), f"NVML error: {exc}"
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def collect_host_facts(task: str | None, address: Address | None, checkpoint_dir: str) -> HostFacts:
    """Read this machine. ``address`` is this task's own cluster entry (None: skip DNS/port)."""
    import psutil
    resolution = locals_ = port = None
    if address is not None:
        resolution = resolve(address.host)
        locals_ = local_addresses()
        family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
        port = probe_port(address.port, family)
    vm = psutil.virtual_memory()
    limit, usage = _cgroup_memory()
    path = os.path.abspath(checkpoint_dir)
    probe_path = path
    while not os.path.exists(probe_path) and os.path.dirname(probe_path) != probe_path:
        probe_path = os.path.dirname(probe_path)
    try:
        du = shutil.disk_usage(probe_path)
        total, free = du.total, du.free
    except OSError:
        total = free = None
    shm = None
    if os.path.isdir("/dev/shm"):
        try:
            shm = shutil.disk_usage("/dev/shm").total
        except OSError:
            shm = None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    core_soft, _ = resource.getrlimit(resource.RLIMIT_CORE)
    gpus, nvml = _gpus()
    return HostFacts(task=task, address=address, resolution=resolution, local_addresses=locals_ or (),
                     port=port, mem_total=vm.total, mem_available=vm.available, cgroup_limit=limit,
                     cgroup_usage=usage, checkpoint_dir=path, disk_total=total, disk_free=free,
                     disk_writable=os.access(probe_path, os.W_OK), shm_total=shm,
                     nofile_soft=None if soft == resource.RLIM_INFINITY else soft,
                     nofile_hard=None if hard == resource.RLIM_INFINITY else hard,
                     core_soft=None if core_soft == resource.RLIM_INFINITY else core_soft,
                     core_pattern=_read("/proc/sys/kernel/core_pattern"), gpus=gpus, nvml=nvml)


# --- judging -------------------------------------------------------------------------------------
def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"


def _is_local(resolved: tuple[str, ...], local: tuple[str, ...]) -> bool:
    for a in resolved:
        try:
            ip = ipaddress.ip_address(a)
        except ValueError:
            continue
        if ip.is_loopback or a in local:
            return True
    return False


def judge_host(f: HostFacts) -> tuple[Finding, ...]:
    """Findings about this host from measured facts. Pure."""
    out: list[Finding] = []
    t = f.task

    def add(code: str, summary: str, severity: Severity = Severity.ERROR, remedy: str | None = None,
            evidence: tuple[str, ...] = ()) -> None:
        out.append(get(code).finding(culprit=t, summary=summary, severity=severity, remedy=remedy,
                                     evidence=[Evidence(t, None, e) for e in evidence]))

    if f.address is not None and f.resolution is not None:
        r = f.resolution
        if r.error:
            add("DD411", f"{t}'s own host name {r.host!r} does not resolve here: {r.error}")
        elif not _is_local(r.addresses, f.local_addresses):
            add("DD410", f"{t} is listed at {f.address}, but {r.host} resolves to {', '.join(r.addresses)}, "
                         f"which is not an address of this machine ({', '.join(f.local_addresses[:6])})",
                evidence=(f"getaddrinfo({r.host!r}) = {list(r.addresses)}",))
    if f.port is not None and not f.port.bindable:
        p = f.port
        if p.error == "EACCES":
            add("DD413", f"{t} may not bind port {p.port} here (permission denied)")
        else:
            who = "; ".join(h.describe() for h in p.holders) or "a process we could not identify"
            pids = [str(h.pid) for h in p.holders if h.pid is not None]
            fix = (f"stop {who} (kill {' '.join(pids)}) or give {t} another port" if pids
                   else f"free port {p.port} or give {t} another port")
            add("DD412", f"port {p.port} of {t} is already in use ({p.error}) by {who}", remedy=fix,
                evidence=tuple(f"port {p.port} held by {h.describe()}" for h in p.holders))
    if f.mem_available is not None and f.mem_total:
        avail, total = f.mem_available, f.mem_total
        if f.cgroup_limit is not None and f.cgroup_usage is not None:
            avail, total = min(avail, max(f.cgroup_limit - f.cgroup_usage, 0)), min(total, f.cgroup_limit)
        if avail < MIN_MEMORY_BYTES or avail < MIN_MEMORY_FRACTION * total:
            add("DD414", f"only {_gib(avail)} of {_gib(total)} memory available", Severity.WARNING)
    if f.disk_writable is False:
        add("DD415", f"checkpoint directory {f.checkpoint_dir} is not writable",
            remedy="make it writable for this user or choose another --checkpoint-dir")
    elif f.disk_free is not None and f.disk_total:
        if f.disk_free < MIN_DISK_BYTES or f.disk_free < MIN_DISK_FRACTION * f.disk_total:
            add("DD415", f"only {_gib(f.disk_free)} free of {_gib(f.disk_total)} where checkpoints go "
                         f"({f.checkpoint_dir})", Severity.WARNING)
    if f.shm_total is not None and f.shm_total < MIN_SHM_BYTES:
        add("DD416", f"/dev/shm is {f.shm_total / (1 << 20):.0f} MiB", Severity.WARNING)
    if f.nofile_soft is not None and f.nofile_soft < MIN_NOFILE:
        hard = "unlimited" if f.nofile_hard is None else str(f.nofile_hard)
        add("DD417", f"open-file limit is {f.nofile_soft} (hard limit {hard})",
            Severity.WARNING if f.nofile_soft < 1024 else Severity.INFO,
            remedy=f"ulimit -n {min(65536, f.nofile_hard or 65536)} before starting training")
    if f.core_soft == 0:
        add("DD418", "core dumps are off (ulimit -c is 0): a native crash will leave no core", Severity.INFO)
    elif f.core_pattern and f.core_pattern.startswith("|"):
        handler = f.core_pattern[1:].split()[0]
        add("DD418", f"cores are piped to {handler} (core_pattern), not written next to the job", Severity.INFO,
            remedy="find them with the handler's tools (e.g. coredumpctl for systemd-coredump), not in the cwd")
    for g in f.gpus:
        if g.total_bytes and g.free_bytes < MIN_GPU_FREE_FRACTION * g.total_bytes:
            who = ", ".join(h.describe() for h in g.processes) or "unknown processes"
            add("DD419", f"GPU {g.index} ({g.name}) has {_gib(g.free_bytes)} free of {_gib(g.total_bytes)}; "
                         f"held by {who}", Severity.WARNING)
    return tuple(out)


def bind_findings(me: str, address: str | None, bind_error: str) -> list:
    """Name the holder when the mesh check's responder could not bind (``run --node`` calls it without host
    checks)."""
    from ..cluster.spec import AddressError, parse_address
    if not bind_error.startswith(("EADDRINUSE", "EACCES")) or address is None:
        return []
    try:
        addr = parse_address(address)
    except AddressError:
        return []
    err = bind_error.split(":")[0]
    holders: tuple[ProcessRef, ...] = port_holders(addr.port) if err == "EADDRINUSE" else ()
    return list(judge_host(HostFacts(task=me, port=PortProbe(addr.port, False, err, holders))))
