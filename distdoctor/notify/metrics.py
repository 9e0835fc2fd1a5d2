"""``--metrics-port``: the supervisor's view as Prometheus metrics (prometheus_client).

Names follow Prometheus's conventions: ``distdoctor_`` prefix, base units
(seconds, bytes), ``_total`` for counters, ``_info`` for the verdict; every
series carries ``job`` (the distdoctor job name) and per-task ones ``task``
(``worker:1``). A scrape config should set ``honor_labels: true`` so that the
``job`` label is the training job's, not the scrape job's (docs/alerts.md).

The collector reads the latest rows the supervisor pushed with :meth:`update`;
the supervisor never waits on a scrape.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from ..diagnose.observations import TaskState
from .events import NotifyError

__all__ = ["TaskRow", "JobRow", "MetricsServer", "HANG_STATES", "TASK_STATES"]

HANG_STATES = {"ok": 0, "suspected": 1, "declared": 2}
TASK_STATES = tuple(s.value for s in TaskState if s not in (TaskState.UNKNOWN, TaskState.DEAD, TaskState.IDLE))


@dataclass(frozen=True)
class TaskRow:
    task: str
    alive: bool
    state: str
    step: int | None = None
    last_step_at: float | None = None
    step_seconds: float | None = None
    rss_bytes: int | None = None
    mem_limit_bytes: int | None = None
    cpu_seconds: float | None = None
    gpu_mem_bytes: int | None = None
    mem_limit_eta_seconds: float | None = None


@dataclass(frozen=True)
class JobRow:
    hang_state: str = "ok"            # ok, suspected, declared
    suspect: str | None = None
    stalled_seconds: float = 0.0
    stall_threshold_seconds: float = 0.0
    attempt: int = 1
    restarts: int = 0


class _Collector:
    def __init__(self, job: str) -> None:
        self.job = job
        self.lock = threading.Lock()
        self.tasks: tuple[TaskRow, ...] = ()
        self.job_row = JobRow()
        self.verdict = {"status": "running", "category": "", "code": "", "culprit": ""}
        self.threshold_crossings: dict[tuple[str, str], int] = {}

    def describe(self):
        return []  # the metric set depends on the job's tasks: collected, not described

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
        with self.lock:
            tasks, jr, verdict = self.tasks, self.job_row, dict(self.verdict)
            crossings = dict(self.threshold_crossings)
        j = self.job
        L = ["job", "task"]

        def per_task(name, doc, attr, counter=False):
            fam = (CounterMetricFamily if counter else GaugeMetricFamily)(name, doc, labels=L)
            for t in tasks:
                v = getattr(t, attr)
                if v is not None:
                    fam.add_metric([j, t.task], float(v))
            return fam

        up = GaugeMetricFamily("distdoctor_task_up", "1 while the task's process is alive", labels=L)
        state = GaugeMetricFamily("distdoctor_task_state", "1 for the task's current process state", labels=L + ["state"])
        for t in tasks:
            up.add_metric([j, t.task], 1.0 if t.alive else 0.0)
            cur = t.state if t.state in TASK_STATES else "other"
            for s in TASK_STATES + (("other",) if cur == "other" else ()):
                state.add_metric([j, t.task, s], 1.0 if s == cur else 0.0)
        yield up
        yield state
        yield per_task("distdoctor_task_step", "the task's training step (Keras progress, DoctorCallback, or TF function calls)", "step")
        yield per_task("distdoctor_task_last_step_timestamp_seconds", "when the task last made progress (Unix time)", "last_step_at")
        yield per_task("distdoctor_task_step_duration_seconds", "the task's median recent step time", "step_seconds")
        yield per_task("distdoctor_task_resident_memory_bytes", "RSS of the task's process tree", "rss_bytes")
        yield per_task("distdoctor_task_memory_limit_bytes", "the task's memory limit (its cgroup's, else the host's)", "mem_limit_bytes")
        yield per_task("distdoctor_task_cpu_seconds", "CPU time used by the task's process tree", "cpu_seconds", counter=True)
        if any(t.gpu_mem_bytes is not None for t in tasks):
            yield per_task("distdoctor_task_gpu_memory_bytes", "GPU memory used by the task's processes", "gpu_mem_bytes")
        yield per_task("distdoctor_task_memory_limit_eta_seconds",
                       "predicted seconds until the task's memory reaches its limit at the current rate", "mem_limit_eta_seconds")

        hang = GaugeMetricFamily("distdoctor_job_hang_state", "0 no hang, 1 stall suspected, 2 hang declared",
                                 labels=["job", "culprit"])
        hang.add_metric([j, jr.suspect or ""], float(HANG_STATES.get(jr.hang_state, 0)))
        yield hang
        yield _gauge("distdoctor_job_stalled_seconds", "seconds since any task last made progress", j, jr.stalled_seconds)
        yield _gauge("distdoctor_job_stall_threshold_seconds", "the hang detector's current stall threshold", j,
                     jr.stall_threshold_seconds)
        yield _gauge("distdoctor_job_attempt", "the job's attempt number (1 before any restart)", j, jr.attempt)
        restarts = CounterMetricFamily("distdoctor_job_restarts", "restarts of the job by distdoctor", labels=["job"])
        restarts.add_metric([j], float(jr.restarts))
        yield restarts
        th = CounterMetricFamily("distdoctor_threshold_crossings", "resource threshold crossings",
                                 labels=["job", "task", "threshold"])
        for (task, kind), n in sorted(crossings.items()):
            th.add_metric([j, task, kind], float(n))
        yield th
        info = InfoMetricFamily("distdoctor_job_verdict", "the job's verdict (status running until the end)",
                                labels=["job"])
        info.add_metric([j], verdict)
        yield info


def _gauge(name: str, doc: str, job: str, value: float):
    from prometheus_client.core import GaugeMetricFamily
    fam = GaugeMetricFamily(name, doc, labels=["job"])
    fam.add_metric([job], float(value))
    return fam


class MetricsServer:
    """A ``/metrics`` endpoint on its own registry and thread."""

    def __init__(self, job: str, port: int, addr: str = "127.0.0.1") -> None:
        self.job, self.port, self.addr = job, port, addr
        self._collector = _Collector(job)
        self._server = None

    def start(self) -> int:
        try:
            from prometheus_client import CollectorRegistry, start_http_server
        except ImportError:
            raise NotifyError("--metrics-port needs the prometheus_client package: pip install prometheus-client") from None
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self._collector)
        try:
            self._server, _thread = start_http_server(self.port, addr=self.addr, registry=registry)
        except OSError as exc:
            raise NotifyError(f"cannot serve metrics on port {self.port}: {exc.strerror or exc}; "
                              "choose another --metrics-port") from None
        self.port = self._server.server_port
        return self.port

    def update(self, tasks: tuple[TaskRow, ...], job: JobRow) -> None:
        with self._collector.lock:
            self._collector.tasks = tuple(tasks)
            self._collector.job_row = job

    def count_crossing(self, task: str | None, kind: str) -> None:
        with self._collector.lock:
            key = (task or "", kind)
            self._collector.threshold_crossings[key] = self._collector.threshold_crossings.get(key, 0) + 1

    def set_verdict(self, status: str, category: str | None, code: str | None, culprit: str | None) -> None:
        with self._collector.lock:
            self._collector.verdict = {"status": status, "category": category or "", "code": code or "",
                                       "culprit": culprit or ""}

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
