"""``distdoctor run --node``: one supervisor per task, started by the cluster's scheduler.

Each node supervisor wraps its own task exactly as the local ``run`` does
(process group, timestamped log, bootstrap agent, psutil/cgroup samples,
py-spy at a hang). On top of that:

* before TensorFlow starts, the mesh check (:func:`~distdoctor.preflight.mesh.run_mesh`)
  runs on the task's own port; with errors the task is not started
  (``--preflight warn`` starts it anyway);
* the supervisor of ``chief:0`` -- ``worker:0`` where there is no chief -- is the
  *collector*: it opens the side link (:mod:`.sidelink`) and advertises its port
  in its mesh report; every other node connects to it and mirrors its task to
  it: every log line, agent sample, process sample and the exit, on the
  collector's clock;
* the collector therefore sees the whole job as if it had launched it, runs the
  same detectors and the same rule engine, and writes the one cluster-wide
  ``diagnosis.json`` whose culprit is the first task to fail anywhere; it asks
  the nodes to stop their tasks after a fatal failure or a hang, and to send
  their stacks at a hang; the verdict is sent back to every node, which writes
  it into its own bundle and prints it;
* a node supervisor that falls silent (``--peer-timeout``) or whose link closes
  without a goodbye is itself evidence (rule DD112): its host went down, the
  network to it was cut, or it was killed. A node that loses the collector keeps
  supervising its own task alone and says so.

With ``--restarts N`` the collector decides after each verdict (the local run's policy and
ledger); after the backoff it sends ``restart`` over the side link and every node archives its
attempt and starts its task again, on the same port once free. A lost node (DD112) is not
restarted in place: the job stops and the scheduler acts (``--exit-code-policy``).

The node's exit status is its task's (128+N for a signal), so the scheduler's
restart policy sees what it would see without distdoctor; 1 when the preflight
stopped the task before it started, 2 for usage errors.
"""
from __future__ import annotations

import os
import queue
import signal
import socket
import threading
import time
from dataclasses import dataclass

from ..diagnose.observations import OomEvidence
from . import probe
from .channel import AgentSample
from .launch import timestamp_prefix
from .ledger import AttemptRecord
from .policy import Action, RestartDecision
from .supervisor import RunConfig, Supervisor, _port_free
from .tracking import TaskTrack

__all__ = ["NodeCluster", "RemoteProcess", "NodeSupervisor", "collector_of", "RECONNECT_GRACE_S"]

RECONNECT_GRACE_S = 3.0     # a link closed without a goodbye may come back within this
LINK_WAIT_S = 30.0          # how long the collector waits for a node that never links


def collector_of(tasks: list[str]) -> str:
    """The task whose supervisor writes the cluster-wide diagnosis."""
    for t in ("chief:0", "worker:0"):
        if t in tasks:
            return t
    return sorted(tasks)[0]


@dataclass(frozen=True)
class NodeCluster:
    """The one task this node runs, in its cluster (the shape of :class:`~distdoctor.cluster.local.LocalCluster`)."""

    task: str
    all_tasks: tuple[str, ...]
    strategy: str
    tf_config_text: str | None   # None: leave the task's TF_CONFIG as the scheduler set it

    @property
    def tasks(self) -> list[str]:
        return [self.task]

    def tf_config(self, task: str) -> str:
        return self.tf_config_text or os.environ.get("TF_CONFIG", "")


class RemoteProcess:
    """A task run by another node's supervisor, seen through its messages (the shape of :class:`.launch.TaskProcess`)."""

    def __init__(self, task: str, pid: int, started_at: float, argv: list[str], log_path: str, send) -> None:
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
        self._log = open(log_path, "w", encoding="utf-8", errors="replace", buffering=1)

    def write_line(self, ts: float, line: str) -> None:
        self.last_output_at = ts
        with self._log_lock:
            if self._log is not None:
                try:
                    self._log.write(f"{timestamp_prefix(ts)} {line}\n")
                except (OSError, ValueError):
                    pass

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


def _shift(value, offset: float):
    return None if value is None else float(value) - offset


class NodeSupervisor(Supervisor):
    """A :class:`Supervisor` for one task of a cluster; the collector also mirrors every other task."""

    def observes_all_logs(self) -> bool:
        return self.is_collector   # every task's log is mirrored to the collector

    def __init__(self, cfg: RunConfig, *, collector: str, hub=None, client=None, peer_timeout: float = 15.0,
                 expected: tuple[str, ...] = (), decision_wait: float = 60.0) -> None:
        super().__init__(cfg)
        self.me = cfg.cluster.task
        self.collector = collector
        self.is_collector = self.me == collector
        self.hub, self.client = hub, client
        self.peer_timeout = peer_timeout
        self.expected = tuple(t for t in expected if t != self.me)
        self.hostname = socket.gethostname()
        self.final: dict | None = None
        self._final_event = threading.Event()
        self._commands: queue.Queue = queue.Queue()
        self._remote: dict[str, TaskTrack] = {}          # written by the link thread
        self._pending: queue.Queue = queue.Queue()       # remote tracks for the main loop to adopt
        self._stacks: dict[str, str] = {}
        self._stack_events: dict[str, threading.Event] = {}
        self._exit_sent = False
        self._collector_lost = False
        self._unlinked_noted: set[str] = set()
        self._started_wall = time.time()
        self.notes: list[str] = []
        self.decision_wait = decision_wait          # how long a node waits for the collector's restart-or-stop
        self._decisions: queue.Queue = queue.Queue()
        self._restart_msg: dict | None = None

    # -- what this node tells the collector ------------------------------------------------
    def _tell(self, msg: dict) -> None:
        if self.client is not None:
            self.client.send(msg)

    def _launch(self) -> None:
        super()._launch()
        if self._restart_msg is not None and self.hub is not None:
            self.hub.broadcast(self._restart_msg)
            self._restart_msg = None
        track = self.tracks[self.me]
        track.host = self.hostname
        self._tell({"t": "start", "pid": track.proc.pid, "started_at": track.proc.started_at,
                    "argv": list(self.cfg.argv), "host": self.hostname})

    def _on_line(self, task: str, ts: float, line: str, echo: bool = True) -> None:
        super()._on_line(task, ts, line, echo)
        if task == self.me:
            self._tell({"t": "line", "ts": ts, "text": line})

    def _on_agent(self, sample) -> None:
        super()._on_agent(sample)
        if sample.task == self.me:
            self._tell({"t": "agent", "s": sample.__dict__})

    def _handle_exits(self, now: float) -> None:
        super()._handle_exits(now)
        track = self.tracks.get(self.me)
        if track is not None and track.exit_handled and not self._exit_sent and self.client is not None:
            self._exit_sent = True
            track.proc.wait_output(2.0)   # every line before the exit
            p = track.proc
            self._tell({"t": "exit", "ended_at": p.ended_at or now, "rc": p.returncode,
                        "killed": p.killed_by_supervisor, "oom": track.oom.__dict__ if track.oom else None})

    # -- what the collector tells this node -------------------------------------------------
    def on_command(self, _me: str, msg: dict) -> None:
        """Link thread of a node: commands from the collector."""
        t = msg.get("t")
        if t == "final":
            self.final = msg
            self._final_event.set()
            self._decisions.put(msg)
        elif t == "restart":
            self._decisions.put(msg)
        elif t in ("stop", "signal", "stacks"):
            self._commands.put(msg)

    def _obey(self) -> None:
        while True:
            try:
                msg = self._commands.get_nowait()
            except queue.Empty:
                return
            track = self.tracks.get(self.me)
            if track is None:
                continue
            t = msg["t"]
            if t == "stacks":
                track.freeze()
                self._tell({"t": "stack", "text": self._stack_of(track)})
            elif t == "signal":
                track.proc.signal_group(int(msg.get("sig", signal.SIGKILL)))
            elif t == "stop" and track.proc.alive:
                self._say(f"the collector ({self.collector}) stops this task: the job cannot complete")
                self.interrupted = self.interrupted or f"stopped by the collector {self.collector}"
                self._stop_all(reason="collector")

    # -- the collector's mirror of the other tasks ------------------------------------------
    def on_peer(self, task: str, msg: dict) -> None:
        """Link thread of the collector: news from a node, applied as if the task ran here."""
        if task not in self.expected:
            return
        t = msg.get("t")
        off = self._offset(task)
        if t == "start":
            if task in self._remote:   # a restarted node supervisor: its first task's record stands
                return
            job, _, idx = task.partition(":")
            path = os.path.join(self.cfg.out_dir, "logs", f"{job}-{idx}.log")
            proc = RemoteProcess(task, int(msg.get("pid") or 0), _shift(msg.get("started_at"), off) or time.time(),
                                 [str(a) for a in msg.get("argv") or ()], path,
                                 lambda m, task=task: self.hub.send(task, m))
            track = TaskTrack(task, proc)
            track.host = str(msg.get("host") or "") or None
            self._remote[task] = track
            self._pending.put(track)
            self._event(proc.started_at, task, "start", f"pid {proc.pid} on {track.host}: {' '.join(proc.argv)}")
            return
        track = self._remote.get(task)
        if track is None:
            return
        if t == "line":
            ts = _shift(msg.get("ts"), off) or time.time()
            track.proc.write_line(ts, str(msg.get("text", "")))
            self._parse_line(track, ts, str(msg.get("text", "")))   # a remote line: parsed, not echoed
        elif t == "agent":
            try:
                d = dict(msg["s"])
                for k in ("ts", "call_since", "step_ts"):
                    d[k] = _shift(d.get(k), off)
                sample = AgentSample.from_json(d)
            except (KeyError, TypeError, ValueError):
                return
            if sample.task == task:
                first = track.agent is None
                track.on_agent(sample)
                if first:
                    self._event(sample.ts, task, "agent", f"agent reporting from pid {sample.pid}")
        elif t == "proc":
            try:
                s = probe.ProcSample(**{**msg["s"], "ts": _shift(msg["s"]["ts"], off)})
                oom = _oom_from(msg.get("oom"))
                limit = int(msg.get("limit") or 0) or probe.host_memory_limit()
            except (KeyError, TypeError, ValueError):
                return
            if track.proc.alive:
                self._apply_sample(track, s, oom, limit, _shift(msg.get("ts"), off) or time.time())
        elif t == "exit":
            try:
                track.oom = _oom_from(msg.get("oom")) or track.oom
            except (TypeError, ValueError):
                pass
            rc = msg.get("rc")
            track.proc.on_exit(_shift(msg.get("ended_at"), off) or time.time(), int(rc) if rc is not None else 1,
                               bool(msg.get("killed")))
        elif t == "stack":
            self._stacks[task] = str(msg.get("text", ""))
            ev = self._stack_events.get(task)
            if ev is not None:
                ev.set()

    def _offset(self, task: str) -> float:
        return self.hub.offset(task) if self.hub is not None else 0.0

    def _apply_sample(self, track, s, oom, limit, now) -> None:
        super()._apply_sample(track, s, oom, limit, now)
        if track.task == self.me:
            self._tell({"t": "proc", "ts": now, "s": s.__dict__, "limit": limit,
                        "oom": oom.__dict__ if oom is not None else None})

    # -- loop hooks --------------------------------------------------------------------------
    def _tick(self, now: float) -> None:
        if not self.is_collector:
            self._obey()
            self._watch_collector(now)
            return
        while True:
            try:
                track = self._pending.get_nowait()
            except queue.Empty:
                break
            self.tracks[track.task] = track
        self._watch_peers(now)

    def _watch_collector(self, now: float) -> None:
        c = self.client
        if c is None or self._collector_lost:
            return
        if c.refused:
            self._collector_lost = True
            self._say(f"the collector ({self.collector}) refused this node: {c.refused}; supervising this task alone")
            return
        heard = c.last_heard or self._started_wall
        if now - heard > self.peer_timeout + (0 if c.ever_connected else LINK_WAIT_S):
            self._collector_lost = True
            how = (f"never answered at {c.host}:{c.port}" + (f": {c.last_error}" if c.last_error else "")
                   if not c.ever_connected else f"silent for {now - heard:.0f} s")
            self.notes.append(f"the collector's supervisor ({self.collector}) was lost ({how}); this node "
                              "supervised its task alone")
            self._say(f"lost the collector ({self.collector}, {how}); supervising this task alone")

    def _watch_peers(self, now: float) -> None:
        peers = self.hub.peers() if self.hub is not None else {}
        for task in self.expected:
            track = self.tracks.get(task)
            st = peers.get(task)
            if track is None:
                if task not in self._unlinked_noted and now - self._started_wall > LINK_WAIT_S:
                    self._unlinked_noted.add(task)
                    why = "it never connected" if st is None else "it connected but never reported its task"
                    self.notes.append(f"no side link from the supervisor of {task} within {LINK_WAIT_S:.0f} s "
                                      f"({why}): its task is not in this diagnosis")
                    self._say(f"no side link from {task}'s supervisor ({why}); is its side port reachable?")
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
            self._event(now, task, "supervisor_lost", how)
            self._say(f"the supervisor of {task} ({st.host}) is lost: {how}")
            if self._first_failure is None and self._fatal(task):  # a lost PSS worker leaves detection armed
                self._first_failure = (st.last_heard or now, task)
                self.detected_at = now
                if self._fatal(task):
                    self.banner = f"{task}'s node is lost ({how}); the job cannot complete"
                    self._say(self.banner + f"; waiting up to {self.cfg.failure_grace:.0f} s for the other tasks")

    def _awaiting_peers(self, now: float) -> bool:
        if not self.is_collector:
            return False
        return any(t not in self.tracks and t not in self._unlinked_noted for t in self.expected) \
            or not self._pending.empty()

    def _detects_hangs(self) -> bool:
        return self.is_collector or self._collector_lost or self.client is None

    def _stack_of(self, track: TaskTrack) -> str:
        if track.task == self.me or not isinstance(track.proc, RemoteProcess):
            return super()._stack_of(track)
        if not track.proc.alive:
            return track.agent.stack_text() if track.agent else ""
        ev = self._stack_events.setdefault(track.task, threading.Event())
        ev.clear()
        self.hub.send(track.task, {"t": "stacks"})
        ev.wait(15.0)
        return self._stacks.get(track.task) or (track.agent.stack_text() if track.agent else "")

    def observation(self):
        job = super().observation()
        from dataclasses import replace
        notes = list(job.notes) + self.notes
        if self.hub is not None:
            for task, st in sorted(self.hub.peers().items()):
                if st.offset_s is not None and abs(st.offset_s) > 0.5:
                    notes.append(f"{task}'s clock is {st.offset_s:+.2f} s off the collector's; its times were "
                                 "corrected to the collector's clock")
            notes += self.hub.refusals
        return replace(job, notes=tuple(notes))

    # -- restarts inside the allocation (--restarts) -------------------------------------------
    # The collector decides with the same policy as the local run; every node stops its task
    # (the collector's "stop"), waits for "restart" (sent after the backoff), archives its
    # attempt and starts its task again, on the same port once it is free.
    def _restart_veto(self, root) -> str | None:
        if root is not None and root.code == "DD112":
            return (f"{root.culprit}'s node supervisor is lost (its host is gone or cut off): it cannot be restarted "
                    "in place; stopping so that the scheduler replaces the node")
        return None

    def _decide(self, diag, job) -> RestartDecision:
        if self.is_collector:
            return super()._decide(diag, job)
        if self.cfg.restarts <= 0 or self.client is None or self._collector_lost:
            return RestartDecision(Action.STOP, "this node does not restart on its own")
        deadline = time.time() + self.decision_wait + self.cfg.restart_delay_max
        while time.time() < deadline:
            try:
                msg = self._decisions.get(timeout=0.25)
            except queue.Empty:
                heard = self.client.last_heard or self._started_wall
                if time.time() - heard > self.peer_timeout:
                    break
                continue
            if msg.get("t") == "final":
                return RestartDecision(Action.STOP, "the collector stopped the job")
            try:
                self.ledger = [AttemptRecord.from_json(a) for a in msg.get("attempts") or ()]
            except (KeyError, TypeError, ValueError):
                pass
            self._write_json_with_ledger_file()
            self._say(f"the collector ({self.collector}) restarts the job: attempt {msg.get('number')}")
            return RestartDecision(Action.RESTART, str(msg.get("reason") or "the collector restarts the job"))
        return RestartDecision(Action.STOP, "no decision from the collector")

    def _write_json_with_ledger_file(self) -> None:
        """Put the collector's ledger into this node's diagnosis.json (its view of the attempt that ended)."""
        self._rewrite_ledger()

    def _between_attempts(self, decision: RestartDecision) -> bool:
        if self.is_collector:
            if not super()._between_attempts(decision):
                return False
            self._remote = {}
            while not self._pending.empty():
                self._pending.get_nowait()
            self._stacks = {}
            last = self.ledger[-1]
            # sent from _launch, once this attempt's bundle files are in place
            self._restart_msg = {"t": "restart", "number": last.number + 1, "reason": last.reason,
                                 "attempts": [r.to_json() for r in self.ledger]}
        else:
            if self.interrupted and self.interrupted.startswith("stopped by the collector"):
                self.interrupted = None
            elif self.interrupted:
                return False
        while True:
            try:
                self._commands.get_nowait()   # commands meant for the attempt that ended
            except queue.Empty:
                break
        self._exit_sent = False
        self._started_wall = time.time()
        self._wait_own_port()
        return True

    def _wait_own_port(self, timeout: float = 30.0) -> None:
        """The task restarts on its own port: wait (bounded) until no old process listens on it."""
        import json
        try:
            tf = json.loads(self.cfg.cluster.tf_config(self.me) or "{}")
            job, _, idx = self.me.partition(":")
            address = tf["cluster"][job][int(idx)]
        except (ValueError, KeyError, IndexError, TypeError):
            return
        port = address.rpartition(":")[2]
        deadline = time.time() + timeout
        while not _port_free(f":{port}") and time.time() < deadline:
            time.sleep(0.2)
        if not _port_free(f":{port}"):
            self._say(f"port {address} is still held after {timeout:.0f} s; starting {self.me} anyway")

    # -- the end -----------------------------------------------------------------------------
    def wait_final(self, timeout: float) -> dict | None:
        """A node waits (bounded) for the collector's verdict after its own task ended."""
        if self.client is None or self._collector_lost or self.client.refused:
            return None
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self._final_event.wait(0.25):
                return self.final
            heard = self.client.last_heard or self._started_wall
            if time.time() - heard > self.peer_timeout:
                return None
        return None
