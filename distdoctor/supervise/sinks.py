"""The effects of a run, each a sink subscribed to the one event stream (:mod:`.runevents`).

``events.jsonl`` (:class:`JournalSink`), ``samples.jsonl`` (:class:`SamplesSink`), the terminal
(:class:`ConsoleSink`), the live view (:class:`LiveSink`) and the alerts, metrics and thresholds
(:class:`AlertSink`). The bundle's files and diagnosis.json are :class:`.bundle.BundleSink`; a node's side link
to its collector is :class:`.nodelink.LinkSink`.
"""
from __future__ import annotations

import json
import threading

from ..safety import GuardedFile, WriteLosses, safe_line, safe_text
from .runevents import AgentSampled, Assessed, OutputChunk, OutputLine, ProcSampled, RunEvent, ThresholdCrossed, Turned

__all__ = ["ConsoleSink", "JournalSink", "SamplesSink", "LiveSink", "AlertSink"]


class ConsoleSink:
    """Task output as ``[task] line`` and the supervisor's own lines as ``[distdoctor] ...``, to the live view's
    log when there is one, else to ``stream`` (None: silent)."""

    def __init__(self, stream, live=None) -> None:
        self.stream, self.live = stream, live
        self._lock = threading.Lock()

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, OutputLine):
            if ev.echo:
                self.echo(f"[{ev.task}] {safe_line(ev.line)}")
            return
        if isinstance(ev, OutputChunk):
            if ev.echo:
                head = f"[{ev.task}] "
                self.echo(head + safe_text(ev.text).replace("\n", "\n" + head))
            return
        text = ev.said()
        if text:
            self.echo(f"[distdoctor] {safe_text(text)}")

    def echo(self, text: str) -> None:
        if self.live is not None:
            try:
                self.live.log(text)
            except Exception:
                pass
            return
        if self.stream is None:
            return
        with self._lock:
            try:
                self.stream.write(text + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass


class _LineFile:
    """A JSON-lines file of the current attempt: opened when it starts, closed when it ends. A write that fails
    (a full disk, an I/O error) is dropped and counted in ``losses`` (:class:`~distdoctor.safety.WriteLosses`)."""

    WHAT = "a JSON-lines file"

    def __init__(self, losses: WriteLosses | None = None) -> None:
        self._fh: GuardedFile | None = None
        self._lock = threading.Lock()
        self.losses = losses

    def open(self, path: str) -> None:
        self.close()
        self._fh = GuardedFile(path, self.WHAT, self.losses)

    def close(self) -> None:
        with self._lock:
            fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()

    def write(self, obj: dict) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.write(json.dumps(obj) + "\n")


class JournalSink(_LineFile):
    """events.jsonl: one line per event that has a journal line (:class:`.lifecycle.JobEvent`'s shape)."""

    WHAT = "events.jsonl"

    def __call__(self, ev: RunEvent) -> None:
        line = ev.journal()
        if line is not None:
            self.write(line)


class SamplesSink(_LineFile):
    """samples.jsonl: one row per process sample (the report's timeline)."""

    WHAT = "samples.jsonl"

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, ProcSampled) and ev.row:
            self.write(ev.row)


class LiveSink:
    """The live terminal view, redrawn at the end of each turn from the tracks."""

    def __init__(self, live, tracks) -> None:
        self.live, self.tracks = live, tracks   # tracks: () -> dict[str, TaskTrack]

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, Turned) and self.live is not None:
            try:
                self.live.update_from_tracks(self.tracks(), ev.ts, ev.banner)
            except Exception:
                pass


class AlertSink:
    """Alerts (hang_suspected, hang_cleared, hang_declared, task_failed, restart, gave_up), and on each reading
    of the detector the notifier's metrics and thresholds, whose crossings go back on the stream. Never blocks:
    delivery happens on the notifier's sender threads."""

    def __init__(self, notifier, clock, tracks, publish) -> None:
        self.notifier, self.clock, self.tracks, self.publish = notifier, clock, tracks, publish

    def __call__(self, ev: RunEvent) -> None:
        if self.notifier is None or isinstance(ev, (OutputLine, ProcSampled, AgentSampled)):
            return
        if isinstance(ev, Assessed):
            if self.notifier.due(ev.ts):
                from .notifyadapter import notify_tick
                for c in notify_tick(self.notifier, self.tracks(), ev.ts, ev.assessment):
                    self.publish(ThresholdCrossed(ev.ts, c.task, c.summary))
            return
        alert = ev.alert()
        if alert is not None:
            name, fields = alert
            self.notifier.event(name, self.clock.now(), **fields)
