"""``run --node``: the role of a node that is not the collector -- it mirrors its task to the collector and obeys it.

:class:`LinkSink` is a sink on the node's event stream: every line, agent sample, process sample and the exit
of its own task go over the side link. :class:`NodeRole` carries out the collector's commands (stop, signal,
send the stacks), notices a collector that falls silent (the node then supervises its task alone and judges
hangs itself), and with ``--restarts`` waits for the collector's restart-or-stop.
"""
from __future__ import annotations

import queue
import signal
import threading

from ..safety import redact_argv
from .ledger import AttemptRecord
from .nodetask import OwnTask
from .policy import Action, RestartDecision
from .runevents import AgentSampled, OutputChunk, OutputLine, ProcSampled, RunEvent, TaskExited

__all__ = ["LinkSink", "NodeRole"]

LINK_WAIT_S = 30.0          # how long a node waits for a collector that never answers, beyond --peer-timeout


class LinkSink:
    """What this node tells the collector about its own task, on the collector's side link."""

    def __init__(self, me: str, client, tracks) -> None:
        self.me, self.client, self.tracks = me, client, tracks   # tracks: () -> dict[str, TaskTrack]
        self.exit_sent = False

    def tell(self, msg: dict) -> None:
        self.client.send(msg)

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, OutputLine) and ev.task == self.me:
            self.tell({"t": "line", "ts": ev.ts, "text": ev.line})
        elif isinstance(ev, OutputChunk) and ev.task == self.me:
            for line in ev.lines():
                self.tell({"t": "line", "ts": ev.ts, "text": line})
        elif isinstance(ev, AgentSampled) and ev.sample.task == self.me:
            self.tell({"t": "agent", "s": ev.sample.__dict__})
        elif isinstance(ev, ProcSampled) and ev.task == self.me:
            self.tell({"t": "proc", "ts": ev.ts, "s": ev.sample.__dict__, "limit": ev.limit,
                       "oom": ev.oom.__dict__ if ev.oom is not None else None})
        elif isinstance(ev, TaskExited) and ev.task == self.me and not self.exit_sent:
            self.exit_sent = True
            track = self.tracks()[self.me]
            track.proc.wait_output(2.0)   # every line before the exit
            p = track.proc
            self.tell({"t": "exit", "ended_at": p.ended_at or ev.ts, "rc": p.returncode,
                       "killed": p.killed_by_supervisor, "oom": track.oom.__dict__ if track.oom else None})


class NodeRole:
    """A node's part of a :class:`~.supervisor.Supervisor`: its one task, mirrored to the collector."""

    observes_all_logs = False   # the collector's bundle holds every task's log; this one only its own

    def __init__(self, own: OwnTask, *, collector: str, client, peer_timeout: float, decision_wait: float) -> None:
        self.own = own
        self.collector = collector
        self.client = client
        self.peer_timeout = peer_timeout
        self.decision_wait = decision_wait     # how long a node waits for the collector's restart-or-stop
        self.sup = None
        self.link: LinkSink | None = None
        self.final: dict | None = None
        self.collector_lost = False
        self._notes: list[str] = []
        self._commands: queue.Queue = queue.Queue()
        self._decisions: queue.Queue = queue.Queue()
        self._final_event = threading.Event()
        self._started_wall = 0.0

    def attach(self, sup) -> None:
        self.sup = sup
        self._started_wall = sup.clock.now()
        if self.client is not None:
            self.link = LinkSink(self.own.me, self.client, lambda: sup.tracks)
            sup.bus.subscribe(self.link)

    # -- what the collector tells this node (the link thread) -------------------------------------
    def on_command(self, _me: str, msg: dict) -> None:
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
        sup = self.sup
        while True:
            try:
                msg = self._commands.get_nowait()
            except queue.Empty:
                return
            track = sup.tracks.get(self.own.me)
            if track is None:
                continue
            t = msg["t"]
            if t == "stacks":
                track.freeze()
                self.link.tell({"t": "stack", "text": sup.stack_of(track)})
            elif t == "signal":
                track.proc.signal_group(int(msg.get("sig", signal.SIGKILL)))
            elif t == "stop" and track.proc.alive:
                sup.say(f"the collector ({self.collector}) stops this task: the job cannot complete")
                sup.interrupted = sup.interrupted or f"stopped by the collector {self.collector}"
                sup.stop_all(reason="collector")

    def _watch_collector(self, now: float) -> None:
        c = self.client
        if c is None or self.collector_lost:
            return
        if c.refused:
            self.collector_lost = True
            self.sup.say(f"the collector ({self.collector}) refused this node: {c.refused}; supervising this task alone")
            return
        heard = c.last_heard or self._started_wall
        if now - heard > self.peer_timeout + (0 if c.ever_connected else LINK_WAIT_S):
            self.collector_lost = True
            how = (f"never answered at {c.host}:{c.port}" + (f": {c.last_error}" if c.last_error else "")
                   if not c.ever_connected else f"silent for {now - heard:.0f} s")
            self._notes.append(f"the collector's supervisor ({self.collector}) was lost ({how}); this node "
                               "supervised its task alone")
            self.sup.say(f"lost the collector ({self.collector}, {how}); supervising this task alone")

    # -- each turn ------------------------------------------------------------------------------
    def tick(self, now: float) -> tuple:
        self._obey()
        self._watch_collector(now)
        return ()

    def awaiting(self, now: float) -> bool:
        return False

    def judges_hangs(self) -> bool:
        return self.collector_lost or self.client is None

    def stack_of(self, track) -> str | None:
        return None

    def notes(self) -> list[str]:
        return list(self._notes)

    # -- attempts -------------------------------------------------------------------------------
    def launched(self) -> None:
        self.own.launched(self.sup)
        if self.link is not None:
            track = self.sup.tracks[self.own.me]
            self.link.tell({"t": "start", "pid": track.proc.pid, "started_at": track.proc.started_at,
                            "argv": redact_argv(self.sup.cfg.argv), "host": self.own.hostname})

    def decide(self, judge) -> RestartDecision:
        """The collector decides; this node waits (bounded) for its restart or its verdict."""
        clock = self.sup.clock
        if self.sup.cfg.restarts <= 0 or self.client is None or self.collector_lost:
            return RestartDecision(Action.STOP, "this node does not restart on its own")
        deadline = clock.now() + self.decision_wait + self.sup.cfg.restart_delay_max
        while clock.now() < deadline:
            try:
                msg = self._decisions.get(timeout=0.25)
            except queue.Empty:
                heard = self.client.last_heard or self._started_wall
                if clock.now() - heard > self.peer_timeout:
                    break
                continue
            if msg.get("t") == "final":
                return RestartDecision(Action.STOP, "the collector stopped the job")
            try:
                self.sup.restarts.ledger = [AttemptRecord.from_json(a) for a in msg.get("attempts") or ()]
            except (KeyError, TypeError, ValueError):
                pass
            self.sup.say(f"the collector ({self.collector}) restarts the job: attempt {msg.get('number')}")
            return RestartDecision(Action.RESTART, str(msg.get("reason") or "the collector restarts the job"))
        return RestartDecision(Action.STOP, "no decision from the collector")

    def between(self, decision: RestartDecision, backoff) -> bool:
        """No backoff of its own (the collector sent ``restart`` after its own); a signal of its own stops it."""
        sup = self.sup
        if sup.interrupted and sup.interrupted.startswith("stopped by the collector"):
            sup.interrupted = None
        elif sup.interrupted:
            return False
        while True:
            try:
                self._commands.get_nowait()   # commands meant for the attempt that ended
            except queue.Empty:
                break
        if self.link is not None:
            self.link.exit_sent = False
        self._started_wall = sup.clock.now()
        self.own.wait_port(sup.clock, sup.say)
        return True

    # -- the end --------------------------------------------------------------------------------
    def wait_final(self, timeout: float) -> dict | None:
        """A node waits (bounded) for the collector's verdict after its own task ended."""
        if self.client is None or self.collector_lost or self.client.refused:
            return None
        clock = self.sup.clock
        deadline = clock.now() + timeout
        while clock.now() < deadline:
            if self._final_event.wait(0.25):
                return self.final
            heard = self.client.last_heard or self._started_wall
            if clock.now() - heard > self.peer_timeout:
                return None
        return None
