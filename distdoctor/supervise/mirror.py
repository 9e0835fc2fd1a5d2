"""``run --node``: the collector's role -- a mirror of every other node's task, on the collector's clock.

Every other node supervisor sends its task's start, log lines, agent samples, process samples and exit over
the side link (:mod:`.sidelink`); :meth:`CollectorRole.on_peer` applies them as if the task ran here (a
:class:`RemoteProcess` in a :class:`~.tracking.TaskTrack`), so the collector's loop, detectors and rule
engine see the whole job. A node supervisor that falls silent (``--peer-timeout``) or whose link closes
without a goodbye is itself evidence (DD112): :meth:`CollectorRole.tick` reports it lost to the step.
"""
from __future__ import annotations

import math
import os
import shlex
from collections import Counter
import queue
import threading
import time

from ..diagnose.observations import OomEvidence
from ..safety import GuardedFile, redact_argv
from . import probe
from .channel import AgentSample
from .launch import timestamp_prefix
from .nodetask import OwnTask
from .policy import RestartDecision
from .runevents import AgentSampled, Journal, OutputLine, Said
from .step import LostSeen
from .tracking import TaskTrack

__all__ = ["RemoteProcess", "CollectorRole", "RECONNECT_GRACE_S", "LINK_WAIT_S"]

RECONNECT_GRACE_S = 3.0     # a link closed without a goodbye may come back within this
LINK_WAIT_S = 30.0          # how long the collector waits for a node that never links


class RemoteProcess:
    """A task run by another node's supervisor, seen through its messages (the shape of :class:`.launch.TaskProcess`)."""

    def __init__(self, task: str, pid: int, started_at: float, argv: list[str], log_path: str, send,
                 losses=None) -> None:
        self.task, self.pid, self.pgid, self.argv, self.log_path = task, pid, pid, argv, log_path
        self.started_at = started_at
        self.ended_at: float | None = None
        self.returncode: int | None = None
        self.last_output_at: float | None = None
        self.killed_by_supervisor = False
        self.signals_sent: list[tuple[float, int]] = []
        self.lost = False
        self._send = send
        self._exited = threading.Event()
        self._log_lock = threading.Lock()
        self._log: GuardedFile | None = GuardedFile(log_path, f"the log of {task}", losses)   # never raises

    def write_line(self, ts: float, line: str) -> None:
        self.last_output_at = ts
        with self._log_lock:
            if self._log is not None:
                self._log.write(f"{timestamp_prefix(ts)} {line}\n")

    def on_exit(self, ended_at: float, rc: int, killed: bool) -> None:
        self.killed_by_supervisor = killed
        self.ended_at = ended_at
        self.returncode = rc
        self._exited.set()

    @property
    def alive(self) -> bool:
        return self.returncode is None and not self.lost

    def drain(self, timeout: float = 5.0) -> None:
        with self._log_lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    def signal_group(self, sig: int) -> bool:
        self.signals_sent.append((time.time(), sig))
        self._send({"t": "signal", "sig": int(sig)})
        return True

    def group_alive(self) -> bool:
        return self.alive

    def terminate(self, grace: float) -> None:
        """Ask the task's own supervisor to stop it; wait for its exit (bounded)."""
        if not self.alive:
            return
        self._send({"t": "stop", "grace": grace})
        self._exited.wait(grace + 5.0)


def _oom_from(d: dict | None) -> OomEvidence | None:
    """The memory-cgroup evidence a node sent (its JSON form), or None."""
    if not d:
        return None
    return OomEvidence(**{**d, "kernel_lines": tuple(d.get("kernel_lines") or ())})


#: A node's time, on the collector's clock, may lie this far ahead of the collector's now (the offset's error)
#: and this far before the collector's supervisor started (a node starts its task as its own mesh check ends).
FUTURE_SLACK_S, PAST_SLACK_S = 2.0, 120.0


class CollectorRole:
    """The collector's part of a :class:`~.supervisor.Supervisor`: its own task, and the mirror of the others."""

    observes_all_logs = True   # every task's log is mirrored to the collector

    def __init__(self, own: OwnTask, *, hub, expected: tuple[str, ...], peer_timeout: float) -> None:
        self.own = own
        self.hub = hub
        self.peer_timeout = peer_timeout
        self.expected = tuple(t for t in expected if t != own.me)
        self.sup = None
        self._notes: list[str] = []
        self._remote: dict[str, TaskTrack] = {}          # written by the link thread
        self._pending: queue.Queue = queue.Queue()       # remote tracks for the main loop to adopt
        self._stacks: dict[str, str] = {}
        self._stack_events: dict[str, threading.Event] = {}
        self._unlinked_noted: set[str] = set()
        self._restart_msg: dict | None = None
        self._started_wall = 0.0
        self._clamped: Counter[str] = Counter()

    def attach(self, sup) -> None:
        self.sup = sup
        self._started_wall = sup.clock.now()

    def _now(self) -> float:
        return self.sup.clock.now()

    def _time(self, task: str, value, offset: float) -> float:
        """A node's timestamp on our clock, kept within [our start - PAST_SLACK_S, now + FUTURE_SLACK_S].

        A time outside (a forged or broken one: the future, before this run, not a number) is clamped to
        the nearest bound, or now, and counted: the diagnosis says how many there were.
        """
        now = self._now()
        try:
            t = float(value) - offset
        except (TypeError, ValueError):
            t = math.nan
        if value is None:
            return now
        lo, hi = self._started_wall - PAST_SLACK_S, now + FUTURE_SLACK_S
        if math.isfinite(t) and lo <= t <= hi:
            return t
        self._clamped[task] += 1
        return min(max(t, lo), now) if math.isfinite(t) else now

    # -- news from the nodes (the link thread) ----------------------------------------------------
    def on_peer(self, task: str, msg: dict) -> None:
        """News from a node, applied as if the task ran here."""
        if task not in self.expected:
            return
        t = msg.get("t")
        off = self.hub.offset(task) if self.hub is not None else 0.0
        sup = self.sup
        if t == "start":
            if task in self._remote:   # a restarted node supervisor: its first task's record stands
                return
            job, _, idx = task.partition(":")
            path = os.path.join(sup.cfg.out_dir, "logs", f"{job}-{idx}.log")
            proc = RemoteProcess(task, int(msg.get("pid") or 0), self._time(task, msg.get("started_at"), off),
                                 [str(a) for a in msg.get("argv") or ()], path,
                                 lambda m, task=task: self.hub.send(task, m), losses=getattr(sup, "losses", None))
            track = TaskTrack(task, proc)
            track.host = str(msg.get("host") or "") or None
            self._remote[task] = track
            self._pending.put(track)
            sup.publish(Journal(proc.started_at, task, "start", f"pid {proc.pid} on {track.host}: {shlex.join(redact_argv(proc.argv))}"))
            return
        track = self._remote.get(task)
        if track is None:
            return
        if t == "line":
            ts = self._time(task, msg.get("ts"), off)
            text = str(msg.get("text", ""))
            track.proc.write_line(ts, text)
            sup.observer.parse_line(track, ts, text)
            sup.publish(OutputLine(ts, task, text, echo=False))   # a remote line: read, not echoed
        elif t == "agent":
            try:
                d = dict(msg["s"])
                for k in ("ts", "call_since", "step_ts"):
                    d[k] = self._time(task, d[k], off) if d.get(k) is not None else None
                sample = AgentSample.from_json(d)
            except (KeyError, TypeError, ValueError):
                return
            if sample.task == task:
                first = track.agent is None
                track.on_agent(sample)
                sup.publish(AgentSampled(sample, first))
        elif t == "proc":
            try:
                s = probe.ProcSample(**{**msg["s"], "ts": self._time(task, msg["s"]["ts"], off)})
                oom = _oom_from(msg.get("oom"))
                limit = int(msg.get("limit") or 0) or probe.host_memory_limit()
            except (KeyError, TypeError, ValueError):
                return
            if track.proc.alive:
                sup.observer.apply_sample(track, s, oom, limit, self._time(task, msg.get("ts"), off))
        elif t == "exit":
            try:
                track.oom = _oom_from(msg.get("oom")) or track.oom
            except (TypeError, ValueError):
                pass
            rc = msg.get("rc")
            track.proc.on_exit(self._time(task, msg.get("ended_at"), off), int(rc) if rc is not None else 1,
                               bool(msg.get("killed")))
        elif t == "stack":
            self._stacks[task] = str(msg.get("text", ""))
            ev = self._stack_events.get(task)
            if ev is not None:
                ev.set()

    # -- each turn ------------------------------------------------------------------------------
    def tick(self, now: float) -> tuple[LostSeen, ...]:
        """Adopt the tasks that started elsewhere; report the nodes found lost."""
        while True:
            try:
                track = self._pending.get_nowait()
            except queue.Empty:
                break
            self.sup.tracks[track.task] = track
        return self._watch_peers(now)

    def _watch_peers(self, now: float) -> tuple[LostSeen, ...]:
        peers = self.hub.peers() if self.hub is not None else {}
        lost = []
        for task in self.expected:
            track = self.sup.tracks.get(task)
            st = peers.get(task)
            if track is None:
                if task not in self._unlinked_noted and now - self._started_wall > LINK_WAIT_S:
                    self._unlinked_noted.add(task)
                    why = "it never connected" if st is None else "it connected but never reported its task"
                    self._notes.append(f"no side link from the supervisor of {task} within {LINK_WAIT_S:.0f} s "
                                       f"({why}): its task is not in this diagnosis")
                    self.sup.publish(Said(f"no side link from {task}'s supervisor ({why}); is its side port reachable?"))
                continue
            if not track.proc.alive or track.exit_handled or st is None:
                continue
            how = None
            if not st.connected and st.closed_at is not None and now - st.closed_at > RECONNECT_GRACE_S:
                how = "its link closed without a goodbye and did not come back"
            elif st.last_heard is not None and now - st.last_heard > self.peer_timeout:
                how = f"no heartbeat for {now - st.last_heard:.0f} s"
            if how is None:
                continue
            track.proc.lost = True
            track.exit_handled = True
            track.lost_at, track.lost_how = st.last_heard, how
            lost.append(LostSeen(task, st.last_heard, how, st.host))
        return tuple(lost)

    def awaiting(self, now: float) -> bool:
        return any(t not in self.sup.tracks and t not in self._unlinked_noted for t in self.expected) \
            or not self._pending.empty()

    def judges_hangs(self) -> bool:
        return True

    def stack_of(self, track: TaskTrack) -> str | None:
        if track.task == self.own.me or not isinstance(track.proc, RemoteProcess):
            return None
        if not track.proc.alive:
            return track.agent.stack_text() if track.agent else ""
        ev = self._stack_events.setdefault(track.task, threading.Event())
        ev.clear()
        self.hub.send(track.task, {"t": "stacks"})
        ev.wait(15.0)
        return self._stacks.get(track.task) or (track.agent.stack_text() if track.agent else "")

    def notes(self) -> list[str]:
        notes = list(self._notes)
        if self.hub is not None:
            for task, st in sorted(self.hub.peers().items()):
                if st.offset_s is not None and abs(st.offset_s) > 0.5:
                    notes.append(f"{task}'s clock is {st.offset_s:+.2f} s off the collector's; its times were "
                                 "corrected to the collector's clock")
            notes += self.hub.refusals
        for task, n in sorted(self._clamped.items()):
            notes.append(f"{n} timestamp(s) from {task} lay outside the collector's clock (in the future or before "
                         "this run, after its clock offset) and were clamped")
        return notes

    # -- attempts -------------------------------------------------------------------------------
    def launched(self) -> None:
        if self._restart_msg is not None and self.hub is not None:
            self.hub.broadcast(self._restart_msg)   # once this attempt's bundle files are in place
            self._restart_msg = None
        self.own.launched(self.sup)

    @staticmethod
    def veto(root) -> str | None:
        """Why a restart the policy allows cannot happen here: a node whose host is gone."""
        if root is not None and root.code == "DD112":
            return (f"{root.culprit}'s node supervisor is lost (its host is gone or cut off): it cannot be restarted "
                    "in place; stopping so that the scheduler replaces the node")
        return None

    def decide(self, judge) -> RestartDecision:
        return judge(self.veto)

    def between(self, decision: RestartDecision, backoff) -> bool:
        """After the backoff every node is told to restart (from :meth:`launched`)."""
        if not backoff():
            return False
        self._remote = {}
        while not self._pending.empty():
            self._pending.get_nowait()
        self._stacks = {}
        last = self.sup.ledger[-1]
        self._restart_msg = {"t": "restart", "number": last.number + 1, "reason": last.reason,
                             "attempts": [r.to_json() for r in self.sup.ledger]}
        self._started_wall = self._now()
        self.own.wait_port(self.sup.clock, self.sup.say)
        return True
