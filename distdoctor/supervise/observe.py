"""What the supervisor observes of its tasks: process samples, sockets, the memory cgroup, exits, log lines.

The edge between the processes and the loop's pure step: each turn :meth:`Observer.poll` samples the tasks
this supervisor runs (:mod:`.probe`: psutil, ``/proc/PID/io``, ``ss -ti`` while a task makes no steps, the
memory cgroup) into their :class:`~.tracking.TaskTrack`, and :meth:`Observer.exits` reports the tasks that
ended since the last turn as :class:`~.step.ExitSeen` (and :meth:`Observer.exiting` those whose code raised an
uncaught exception but that still run, as :class:`~.step.ExitingSeen`). What it sees also goes on the event stream (samples,
memory warnings, connections and faults in the log).
"""
from __future__ import annotations

import dataclasses
import os
import signal
import threading
from dataclasses import replace

from ..diagnose.events import EventKind
from ..diagnose.observations import MemorySample
from . import probe
from .detect import JobSnapshot
from .nativewait import native_summary, tf_native_wait
from .runevents import Journal, MemoryWarning, ProcSampled
from .step import ExitingSeen, ExitSeen
from .tracking import TaskTrack

__all__ = ["Observer", "signal_label", "oom_kills_since", "FAULT_KINDS", "NET_LOOK_EVERY_S"]

NET_LOOK_EVERY_S = 1.0   # how often sockets are looked at while a task makes no steps
NATIVE_QUIET_S = 3.0     # a task idle outside TensorFlow this long gets its native stack looked at (once per place)
FAULT_KINDS = (EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL, EventKind.OOM_TENSOR, EventKind.OOM_GPU,
               EventKind.CHECK_FAILED, EventKind.PORT_IN_USE, EventKind.NAN_LOSS)


def signal_label(rc: int | None) -> str:
    """``exit code N``, ``signal SIGKILL`` or ``signal 34`` (real-time signals have no name)."""
    if rc is None or rc >= 0:
        return f"exit code {rc or 0}"
    try:
        return f"signal {signal.Signals(-rc).name}"
    except ValueError:
        return f"signal {-rc}"


def oom_kills_since(oom, baseline: int):
    """``oom`` with its OOM-kill count taken relative to ``baseline`` (pure)."""
    if oom.oom_kill_count is None:
        return oom
    return replace(oom, oom_kill_count=max(0, oom.oom_kill_count - baseline))


class Observer:
    """Samples the tasks into their tracks; ``publish`` puts what it sees on the event stream."""

    def __init__(self, publish) -> None:
        self.publish = publish
        self._oom_baselines: dict[str | None, int] = {}
        self._net_look_at = 0.0
        self._py_spy = probe.py_spy_path() is not None
        self.oom_since_start(probe.read_cgroup_memory(probe.cgroup_of(os.getpid())))  # tasks start in ours

    def oom_since_start(self, oom):
        """The cgroup's OOM-kill counter is cumulative (earlier jobs, other processes): count only kills
        since distdoctor first read that cgroup, so a plain SIGKILL is not called an OOM."""
        if oom is None:
            return None
        return oom_kills_since(oom, self._oom_baselines.setdefault(oom.cgroup, oom.oom_kill_count or 0))

    # -- log lines ------------------------------------------------------------------------------
    def parse_line(self, track: TaskTrack, ts: float, line: str) -> None:
        """Feed one line to the task's parser; connections and faults also go to events.jsonl."""
        for e in track.on_line(ts, line):
            if e.kind == EventKind.CLUSTER_CONNECTED:
                self.publish(Journal(ts, track.task, "connected", e.text))
            elif e.kind in FAULT_KINDS:
                self.publish(Journal(ts, track.task, "fault", e.text))

    def parse_chunk(self, track: TaskTrack, ts: float, text: str) -> None:
        """Lines printed together, read through the prefilter (:meth:`.tracking.TaskTrack.on_chunk`)."""
        for e in track.on_chunk(ts, text):
            if e.kind == EventKind.CLUSTER_CONNECTED:
                self.publish(Journal(ts, track.task, "connected", e.text))
            elif e.kind in FAULT_KINDS:
                self.publish(Journal(ts, track.task, "fault", e.text))

    # -- process samples --------------------------------------------------------------------------
    def poll(self, tracks: dict[str, TaskTrack], own: tuple[str, ...], now: float) -> None:
        host_total = probe.host_memory_limit()
        sockets = self._look_at_sockets(tracks, own, now)
        for task in own:
            track = tracks.get(task)
            if track is None or not track.proc.alive:
                continue
            s = probe.sample_tree(track.proc.pid, track.agent_pid, now)
            if s is None:
                continue
            if sockets is not None:
                mine = {k: b for pid in s.pids for k, b in sockets.get(pid, {}).items()}
                s = dataclasses.replace(s, net=tuple((k, b) for k, b in mine.items()))
            if s.cgroup:
                track.cgroup = s.cgroup
            oom = self.oom_since_start(probe.read_cgroup_memory(track.cgroup))
            limit = host_total
            if oom is not None and oom.limit_bytes:
                limit = min(limit, oom.limit_bytes)
            self.apply_sample(track, s, oom, limit, now)

    def look_native(self, tracks: dict[str, TaskTrack], own: tuple[str, ...], suspect: str | None,
                    now: float) -> None:
        """Look at the native stack of the task the detector suspects of a stall (idle outside TensorFlow by its
        Python frames, not a pause), once per place, in a thread (py-spy takes 1-3 s): the detector does not
        declare it stalled before, and not at all when it waits inside TensorFlow's runtime (:mod:`.nativewait`)."""
        for task in own:
            t = tracks.get(task)
            if t is None:
                continue
            t.native_possible = self._py_spy
            if t.native_look is not None and t.native_look[2] and not t.native_said:
                t.native_said = True
                self.publish(Journal(now, task, "native_wait",
                                     f"{task} waits inside TensorFlow: {t.native_look[2]} (py-spy --native: "
                                     f"{t.native_frames})"))
            if (task != suspect or not self._py_spy or t.native_pending or not t.proc.alive
                    or t.where() != "python"):
                continue
            if now - (t.last_progress_at or t.proc.started_at) < NATIVE_QUIET_S:
                continue
            looked, _ = t.native_view()
            if looked:
                continue
            t.native_pending = True
            t.native_said = False
            threading.Thread(target=self._native_look, args=(t, t.location(), now), daemon=True,
                             name=f"native-look-{task}").start()

    @staticmethod
    def _native_look(track: TaskTrack, place: str | None, at: float) -> None:
        try:
            dump = probe.py_spy_dump(track.agent_pid or track.proc.pid, native=True, timeout=10.0)
            with track.lock:
                track.native_look = (place, at, tf_native_wait(dump))
                track.native_frames = native_summary(dump)
        finally:
            track.native_pending = False

    def _look_at_sockets(self, tracks, own, now: float) -> dict | None:
        """Every TCP socket's byte counters, once a second while one of this supervisor's tasks has made no step
        for 2 s (a task that downloads or uploads while its peers wait is working, not stuck); else None."""
        if now - self._net_look_at < NET_LOOK_EVERY_S:
            return None
        quiet = [t for t in (tracks.get(n) for n in own) if t is not None and t.proc.alive
                 and now - (t.last_progress_at or t.proc.started_at) >= 2.0]
        if not quiet:
            return None
        self._net_look_at = now
        return probe.tcp_bytes()

    def apply_sample(self, track: TaskTrack, s: probe.ProcSample, oom, limit: int, now: float) -> None:
        """Record one process sample of a task (taken here, or by a remote node supervisor)."""
        track.last_proc = s
        if s.state != track.state and not track.native_pending:
            # (while py-spy looks at it, the task is stopped by ptrace: that state is ours, not the task's)
            track.state, track.state_since = s.state, now
        track.cpu_hist.append((now, s.cpu_seconds))
        with track.lock:
            track.activity.on_proc(now, s.cpu_seconds, s.io_bytes)
            if s.net is not None:
                track.activity.on_net(now, {tuple(k): int(b) for k, b in s.net})
        if oom is not None:
            track.oom = oom
        if s.shm:
            used, size = (int(x) for x in s.shm)
            if track.shm is None or used >= track.shm[0] or size != track.shm[1]:
                track.shm = (used, size)
        with track.lock:
            if len(track.memory) >= track.MAX_MEMORY_SAMPLES:
                track.memory = track.memory[::2]
            track.memory.append(MemorySample(ts=now, rss_bytes=s.rss_bytes, limit_bytes=limit))
        if s.rss_bytes >= 0.85 * limit and not track.memory_warned:
            track.memory_warned = True
            self.publish(MemoryWarning(now, track.task, s.rss_bytes, limit))
        a = track.agent
        row = {"ts": round(now, 3), "task": track.task, "state": track.state, "rss": s.rss_bytes, "limit": limit,
               "cpu": round(s.cpu_seconds, 3), "calls": a.calls if a else 0, "steps": track.steps(),
               "in_call": a.in_call if a else None, "where": track.where(), "location": track.location()}
        self.publish(ProcSampled(now, track.task, s, oom, limit, row))

    # -- exits ------------------------------------------------------------------------------------
    def exits(self, tracks: dict[str, TaskTrack], now: float) -> tuple[ExitSeen, ...]:
        """The tasks that ended since the last turn, with their memory-cgroup evidence read now."""
        out = []
        for track in tracks.values():
            p = track.proc
            if p.alive or track.exit_handled:
                continue
            track.exit_handled = True
            rc = p.returncode
            oom = self.oom_since_start(probe.read_cgroup_memory(track.cgroup))
            if oom is not None:
                lines = tuple(probe.kernel_oom_lines({p.pid, track.agent_pid or p.pid})) if rc and rc < 0 else ()
                track.oom = oom if not lines else type(oom)(**{**oom.__dict__, "kernel_lines": lines})
            faults = [e.text for e in track.events if e.kind in FAULT_KINDS]
            out.append(ExitSeen(track.task, rc, p.ended_at, signal_label(rc), p.killed_by_supervisor,
                                faults[0] if faults else None, track.oom if rc is not None and rc < 0 else None))
        return tuple(out)

    @staticmethod
    def lingering(tracks: dict[str, TaskTrack]) -> tuple[tuple[str, float], ...]:
        """The live tasks whose main code ended without an uncaught exception (the agent's last sample, sent as it
        ended), with since when they did nothing: their processes are in the exit teardown. A task that still
        computes, reads or writes (an exit handler's upload), or whose own threads still run (the interpreter joins
        non-daemon threads at exit: an upload, an asynchronous checkpoint), has not been idle since."""
        return tuple((k, max(t.code_ended_at, t.activity.at or 0.0, t.threads_busy_at or 0.0)) for k, t in tracks.items()
                     if t.proc.alive and t.code_ended_at is not None and t.agent is not None and t.agent.uncaught is None)

    @staticmethod
    def exiting(tracks: dict[str, TaskTrack]) -> tuple[ExitingSeen, ...]:
        """The live tasks whose agent said their main thread's code ended with an uncaught exception."""
        out = []
        for track in tracks.values():
            s = track.agent
            if s is None or s.uncaught is None or not track.proc.alive:
                continue
            faults = [e.text for e in track.events if e.kind in FAULT_KINDS]
            out.append(ExitingSeen(track.task, s.uncaught[0], s.uncaught[1], faults[0] if faults else None))
        return tuple(out)

    @staticmethod
    def snapshot(tracks: dict[str, TaskTrack], hang_timeout: float | None) -> JobSnapshot:
        snaps = tuple(t.snapshot() for t in tracks.values())
        intervals: list[float] = []
        for t in tracks.values():
            intervals.extend(t.step_intervals)
        started = min(t.proc.started_at for t in tracks.values())
        return JobSnapshot(tasks=snaps, step_intervals=tuple(intervals[-100:]), started_at=started,
                           hang_timeout=hang_timeout)
