"""The notifier: one object the supervisor talks to, fanning out to alerts, metrics and TensorBoard.

The supervisor calls :meth:`Notifier.event` for each event, :meth:`Notifier.tick`
once per loop turn with the tasks' figures, and :meth:`Notifier.finish` with the
diagnosis. Nothing here blocks the supervisor: alerts go through the sender's
queues, metrics are read by the scrape thread, TensorBoard's writer has its own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..model import Diagnosis
from .events import EVENTS, AlertEvent
from .gpu import GpuProbe
from .metrics import JobRow, MetricsServer, TaskRow
from .sender import AlertmanagerSink, AlertSender, CommandSink, Retry, WebhookSink
from .thresholds import (Crossing, CrossingWatch, TaskResources, Thresholds, judge_disk, judge_task,
                         step_baseline)

__all__ = ["NotifyConfig", "Notifier"]

TICK_EVERY_S = 1.0  # thresholds, metrics rows and TensorBoard scalars: once a second is plenty
SEVERITY = {"hang_suspected": "warning", "hang_cleared": "info", "hang_declared": "critical", "task_failed": "critical",
            "restart": "warning", "gave_up": "critical", "threshold": "warning"}
_EVENT_FIELDS = {"status", "severity", "category", "code", "culprit", "summary", "first_failure", "since", "resolved"}


@dataclass(frozen=True)
class NotifyConfig:
    job: str
    alerts: tuple[str, ...] = ()
    alert_format: str = "json"                 # json or slack
    alertmanagers: tuple[str, ...] = ()
    alert_cmds: tuple[str, ...] = ()
    metrics_port: int | None = None
    metrics_addr: str = "127.0.0.1"
    thresholds: Thresholds = field(default_factory=Thresholds)
    tensorboard: str | None = None
    retry: Retry = field(default_factory=Retry)
    flush_s: float = 10.0                      # how long the end of the run waits for alerts to go out

    @property
    def sends(self) -> bool:
        return bool(self.alerts or self.alertmanagers or self.alert_cmds)


class Notifier:
    def __init__(self, cfg: NotifyConfig, bundle: str, report: str | None = None) -> None:
        self.cfg = cfg
        self.bundle, self.report = bundle, report
        self.sender: AlertSender | None = None
        self.metrics: MetricsServer | None = None
        self.tensorboard = None
        self.watch = CrossingWatch()
        self.gpu = GpuProbe()
        self.baseline: float | None = None
        self.hang_state = "ok"
        self.suspect: str | None = None
        self.suspect_since: float | None = None
        self.attempt, self.restarts = 1, 0
        self._last_tick: float | None = None
        self._fired: set[tuple[str, str | None]] = set()
        self._rows: tuple[TaskRow, ...] = ()
        self._stall = (0.0, 0.0)
        self._disks = tuple(dict.fromkeys(p for p in (bundle, cfg.tensorboard) if p))

    # -- life cycle -------------------------------------------------------
    def start(self) -> None:
        """Bind the metrics port and open the event file; raises NotifyError (a usage error) on failure."""
        if self.cfg.metrics_port is not None:
            self.metrics = MetricsServer(self.cfg.job, self.cfg.metrics_port, self.cfg.metrics_addr)
            self.metrics.start()
        if self.cfg.tensorboard:
            from .tensorboard import TensorBoardWriter
            self.tensorboard = TensorBoardWriter(self.cfg.tensorboard)
        sinks = ([WebhookSink(u, self.cfg.alert_format) for u in self.cfg.alerts]
                 + [AlertmanagerSink(u) for u in self.cfg.alertmanagers] + [CommandSink(c) for c in self.cfg.alert_cmds])
        if sinks:
            self.sender = AlertSender(sinks, self.cfg.retry)

    # -- events -----------------------------------------------------------
    def event(self, name: str, now: float, **fields) -> AlertEvent | None:
        """Build and send one event; unknown ``fields`` become its details (e.g. ``attempt=2``)."""
        if name not in EVENTS:
            return None
        known = {k: v for k, v in fields.items() if k in _EVENT_FIELDS and v is not None}
        details = tuple(sorted((k, str(v)) for k, v in fields.items() if k not in _EVENT_FIELDS and v is not None))
        known.setdefault("severity", SEVERITY.get(name, "info"))
        if name == "hang_cleared":
            # it ends the suspicion: the same culprit and start, so Alertmanager resolves that alert
            known.setdefault("culprit", self.suspect)
            known.setdefault("since", self.suspect_since)
            known["resolved"] = True
            known = {k: v for k, v in known.items() if v is not None}
        if name == "hang_suspected" and known.get("resolved") and "culprit" not in known:
            # the same labels as the suspicion it ends, so Alertmanager resolves that alert
            known["culprit"] = self.suspect
            known.setdefault("since", self.suspect_since)
            known = {k: v for k, v in known.items() if v is not None}
        ev = AlertEvent(event=name, job=self.cfg.job, at=now, bundle=self.bundle, report=self.report,
                        details=details, **known)
        self._track(ev)
        if self.sender is not None:
            self.sender.submit(ev)
        return ev

    def _track(self, ev: AlertEvent) -> None:
        if ev.event in ("hang_suspected", "hang_cleared"):
            self.hang_state = "ok" if ev.resolved else "suspected"
            self.suspect = None if ev.resolved else ev.culprit
            self.suspect_since = None if ev.resolved else ev.at
        elif ev.event == "hang_declared":
            self.hang_state, self.suspect = "declared", ev.culprit
        elif ev.event == "restart":
            self.restarts += 1
            attempt = ev.detail("attempt")
            self.attempt = int(attempt) if attempt and attempt.isdigit() else self.restarts + 1
            self.hang_state, self.suspect = "ok", None
        if self.metrics is not None:
            self.metrics.update(self._rows, self._job_row(0.0, 0.0))

    def _job_row(self, stalled: float, threshold: float) -> JobRow:
        return JobRow(hang_state=self.hang_state, suspect=self.suspect, stalled_seconds=stalled or self._stall[0],
                      stall_threshold_seconds=threshold or self._stall[1], attempt=self.attempt, restarts=self.restarts)

    # -- ticks ------------------------------------------------------------
    def due(self, now: float) -> bool:
        return self._last_tick is None or now - self._last_tick >= TICK_EVERY_S

    def tick(self, now: float, rows: list[TaskRow], resources: list[TaskResources], step_history: list[list[float]],
             cpu_cores: dict[str, float | None], stalled_for: float, stall_threshold: float,
             disk_free: dict[str, int] | None = None) -> list[Crossing]:
        """Judge thresholds, refresh the metrics and TensorBoard; returns the crossings new in this run."""
        self._last_tick = now
        if self.baseline is None:
            self.baseline = step_baseline(step_history)
        th = self.cfg.thresholds
        crossings: list[Crossing] = []
        for r in resources:
            crossings.extend(judge_task(r, th, self.baseline))
        for path, free in (disk_free if disk_free is not None else self._disk_free()).items():
            crossings.extend(judge_disk(path, free, th, now))
        new, gone = self.watch.update(crossings)
        fresh = []
        for c in new:
            if self.metrics is not None:
                self.metrics.count_crossing(c.task, c.kind)
            if (c.kind, c.task) in self._fired:   # one alert per threshold and task per run
                continue
            self._fired.add((c.kind, c.task))
            fresh.append(c)
            self.event("threshold", now, culprit=c.task, summary=c.summary, since=c.at, category="resource_exhaustion",
                       code="DD210", threshold=c.kind, value=f"{c.value:.4g}", limit=f"{c.limit:.4g}")
        for c in gone:
            if (c.kind, c.task) in self._fired:
                self.event("threshold", now, culprit=c.task, summary=c.summary, since=c.at, category="resource_exhaustion",
                           code="DD210", resolved=True, threshold=c.kind)
        eta = {c.task: c.value for c in crossings if c.kind == "mem_eta"}
        self._rows = tuple(_with_eta(r, eta.get(r.task)) for r in rows)
        self._stall = (stalled_for, stall_threshold)
        if self.metrics is not None:
            self.metrics.update(self._rows, self._job_row(stalled_for, stall_threshold))
        if self.tensorboard is not None:
            for r in self._rows:
                if r.alive:
                    self.tensorboard.scalars(r.task, now, r.step, {
                        "step_time_seconds": r.step_seconds, "rss_bytes": r.rss_bytes, "cpu_cores": cpu_cores.get(r.task)})
        return fresh

    def _disk_free(self) -> dict[str, int]:
        out = {}
        for path in self._disks:
            try:
                st = os.statvfs(path)
            except OSError:
                continue
            out[path] = st.f_bavail * st.f_frsize
        return out

    def crossings(self) -> list[Crossing]:
        """The first crossing of each threshold and task, in order."""
        return sorted(self.watch.first.values(), key=lambda c: c.at)

    # -- the end ----------------------------------------------------------
    def finish(self, diag: Diagnosis, now: float) -> list[str]:
        """Send the verdict, resolve what is still firing, close every sink. Returns notes for the diagnosis."""
        rc = diag.root_cause
        status = diag.status.value
        first = rc.evidence[0].render() if rc is not None and rc.evidence else None
        for c in list(self.watch.active.values()):
            if (c.kind, c.task) in self._fired:
                self.event("threshold", now, culprit=c.task, summary=c.summary, since=c.at, code="DD210",
                           category="resource_exhaustion", resolved=True, threshold=c.kind)
        if self.hang_state == "suspected":
            self.event("hang_suspected", now, culprit=self.suspect, since=self.suspect_since, resolved=True,
                       summary="the job ended")
        category = rc.category.value if rc is not None else None
        code, culprit = (rc.code, rc.culprit) if rc is not None else (None, None)
        self.event("verdict", now, status=status, severity="info" if status == "succeeded" else "critical",
                   category=category, code=code, culprit=culprit,
                   summary=(rc.summary if rc is not None else "") or f"the job {status}", first_failure=first)
        if self.metrics is not None:
            self.metrics.set_verdict(status, category, code, culprit)
        if self.tensorboard is not None:
            self.tensorboard.text("distdoctor/verdict", _verdict_markdown(diag), now)
            if diag.findings:
                self.tensorboard.text("distdoctor/findings", "\n".join(
                    f"* **{f.code}** `{f.category.value}` {f.culprit or ''}: {f.summary}" for f in diag.findings), now)
            self.tensorboard.close()
        notes: list[str] = []
        if self.sender is not None:
            self.sender.close(self.cfg.flush_s)   # the metrics endpoint stays up meanwhile: one more scrape
            notes = self.sender.notes()
        if self.metrics is not None:
            self.metrics.close()
        return notes

    def notes(self) -> list[str]:
        return self.sender.notes() if self.sender is not None else []


def _with_eta(r: TaskRow, eta: float | None) -> TaskRow:
    if eta is None:
        return r
    from dataclasses import replace
    return replace(r, mem_limit_eta_seconds=eta)


def _verdict_markdown(d: Diagnosis) -> str:
    rc = d.root_cause
    head = f"**{d.status.value.upper()}**"
    if rc is None:
        return head
    head += f" {rc.code} `{rc.category.value}` culprit **{rc.culprit or 'unknown'}**: {rc.summary}"
    ev = "\n".join(f"    {e.render()}" for e in rc.evidence[:8])
    return head + ("\n\n" + ev if ev else "")
