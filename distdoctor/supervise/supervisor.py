"""The ``distdoctor run`` supervisor: launch every task, watch, decide, write the bundle.

Control flow only; observation lives in :mod:`.probe`/:mod:`.channel`,
decisions in :mod:`.detect` and :mod:`distdoctor.diagnose.engine`.

Policies:

* a task that dies is seen at once (its waiter thread records the exit); the
  verdict's time is that moment. In a synchronous job (MultiWorkerMirrored)
  the others are given ``failure_grace`` seconds to report their symptoms,
  then stopped. In a ParameterServerStrategy job only the chief or a ps is
  fatal; the job ends when the chief ends (workers and ps serve forever);
* a hang is declared by :func:`.detect.assess`; every task's stack is then
  recorded (py-spy, else the agent's), the diagnosis written, and the job
  stopped -- unless ``--on-hang wait``;
* SIGINT/SIGTERM/SIGHUP to the supervisor are forwarded (SIGTERM to each
  task's process group, SIGKILL after ``grace``), so TensorFlow's
  PreemptionCheckpointHandler can save; tasks also carry PR_SET_PDEATHSIG,
  so even a SIGKILLed supervisor leaves no orphan;
* with ``--restarts N`` every verdict is followed by one decision of the pure
  policy (:func:`.policy.decide_restart`): restart the whole job (a
  MultiWorkerMirrored job cannot replace one task) after a jittered
  exponential backoff, on fresh ports if the old ones are still held, or
  stop. Each attempt is a record of the ledger (:mod:`.ledger`) in
  ``diagnosis.json``; the files of earlier attempts move to
  ``attempts/<n>/``, the bundle's top level is always the latest attempt.
"""
from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import socket
import signal
import threading
import time
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..cluster.local import LOCAL, LocalCluster, build_local_cluster
from ..diagnose.engine import collect_findings, diagnose, pick_root_cause
from ..diagnose.events import EventKind
from ..diagnose.runlogs import refine_with_signatures
from ..diagnose.observations import FROZEN_STATES, HangVerdict, JobObservation, MemorySample
from ..errors import UsageError
from ..model import Diagnosis
from . import probe
from .channel import AgentChannel
from .pauses import PauseLog
from .detect import JobSnapshot, assess
from .goodput import job_goodput
from .launch import TaskProcess
from .lifecycle import (ClearStall, DeclareHang, EndAttempt, JobEvent, JobEventKind, LoopState, Phase, StopAll,
                        SuspectStall, allowed, decide)
from .ledger import AttemptRecord, ResumePoint, load_ledger
from .policy import (Action, Position, RestartClass, RestartDecision, RestartPolicy, backoff_s, classify,
                     decide_restart)
from .tracking import TaskTrack

__all__ = ["RunConfig", "Supervisor", "BOOTSTRAP_DIR", "write_json", "wait_backoff", "signal_label"]

# a hang verdict's kind -> the rule code and category the engine will give it (for the hang alert)
_HANG_KINDS = {"stalled_worker": ("DD201", "hang_stalled_worker"),
               "collective_mismatch": ("DD202", "hang_collective_mismatch"),
               "frozen": ("DD203", "peer_unresponsive"), "peer_exited": ("DD204", "data_sharding_imbalance")}
BOOTSTRAP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bootstrap")
TICK_S = 0.25
NET_LOOK_EVERY_S = 1.0   # how often sockets are looked at while a task makes no steps
STARTUP_FAIL_S = 3.0


def signal_label(rc: int | None) -> str:
    """``exit code N``, ``signal SIGKILL`` or ``signal 34`` (real-time signals have no name)."""
    if rc is None or rc >= 0:
        return f"exit code {rc or 0}"
    try:
        return f"signal {signal.Signals(-rc).name}"
    except ValueError:
        return f"signal {-rc}"


def wait_backoff(seconds: float, *, clock=time.time, sleep=time.sleep, stopped=lambda: False,
                 tick: float = TICK_S) -> bool:
    """Wait ``seconds`` unless ``stopped()`` turns true; True when the whole wait passed."""
    deadline = clock() + seconds
    while not stopped():
        left = deadline - clock()
        if left <= 0:
            return True
        sleep(min(tick, left))
    return False


def write_json(path: str, data: dict) -> None:
    """Write ``data`` so that a reader never sees half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(data, fh, indent=2)
    os.replace(tmp, path)


@dataclass
class RunConfig:
    argv: list[str]
    cluster: LocalCluster
    out_dir: str
    hang_timeout: float | None = None
    on_hang: str = "stop"               # "stop" or "wait"
    grace: float = 10.0                 # SIGTERM -> SIGKILL
    failure_grace: float = 10.0         # after a fatal failure, time for peers to report
    sample_s: float = 0.5
    stream: object = None               # where task output is echoed (None: no echo)
    live: object = None                 # a LiveView-like object with update(rows, banner, lines)
    extra_env: dict[str, str] = field(default_factory=dict)
    notify: object = None               # a notify.hub.NotifyConfig: alerts, metrics, thresholds, TensorBoard
    restarts: int = 0                   # --restarts: the restart budget (0: stop at the first failure)
    restart_delay: float = 10.0         # the first backoff, doubling ...
    restart_delay_max: float = 360.0    # ... up to this
    rng: object = None                  # random.Random-like, for the backoff's jitter (tests inject one)


class Supervisor:
    def __init__(self, cfg: RunConfig) -> None:
        self.cfg = cfg
        self.tracks: dict[str, TaskTrack] = {}
        self.interrupted: str | None = None
        self._signals = 0
        self._out_lock = threading.Lock()
        self._events_fh = None
        self._samples_fh = None
        self.channel: AgentChannel | None = None
        self.detected_at: float | None = None
        self.hang: HangVerdict | None = None
        self.banner: str | None = None
        self._first_failure: tuple[float, str] | None = None
        self._chief_done_at: float | None = None
        self.notifier = None
        self.phase = Phase.IDLE
        self.ledger: list[AttemptRecord] = []
        self._attempt_started_at = time.time()
        self._ckpt_at_start: dict[str, bool] = {}
        self._ckpt_warned = False
        self._rng = cfg.rng if cfg.rng is not None else random.Random()
        self._notes: list[str] = []
        self._task_restarts: list[dict] = []       # PSS workers restarted alone (all attempts of this run)
        self._relaunch_at: dict[str, float] = {}
        self._oom_baselines: dict[str | None, int] = {}
        self._net_look_at = 0.0
        self.pauses = PauseLog()                   # suspicions, and the pauses they turned out to be
        self._oom_since_start(probe.read_cgroup_memory(probe.cgroup_of(os.getpid())))  # tasks start in ours

    # -- output ---------------------------------------------------------
    def _echo(self, text: str) -> None:
        if self.cfg.live is not None:
            try:
                self.cfg.live.log(text)
            except Exception:
                pass
            return
        stream = self.cfg.stream
        if stream is None:
            return
        with self._out_lock:
            try:
                stream.write(text + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass

    def _event(self, ts: float, task: str | None, kind: JobEventKind | str, text: str) -> None:
        """Append one :class:`.lifecycle.JobEvent` to events.jsonl (kinds are :class:`JobEventKind`)."""
        try:
            kind = JobEventKind(kind)
        except ValueError:
            pass  # a kind outside the enum (lifecycle_error) is still written
        if self._events_fh is not None:
            line = JobEvent(ts, task, kind, text).to_json() if isinstance(kind, JobEventKind) else \
                {"ts": ts, "task": task, "kind": kind, "text": text}
            with self._out_lock:
                self._events_fh.write(json.dumps(line) + "\n")
                self._events_fh.flush()

    def _say(self, text: str) -> None:
        self._echo(f"[distdoctor] {text}")

    def _on_line(self, task: str, ts: float, line: str, echo: bool = True) -> None:
        track = self.tracks.get(task)
        if track is not None:
            self._parse_line(track, ts, line)
        if echo:
            self._echo(f"[{task}] {line}")

    _FAULT_KINDS = (EventKind.PY_EXCEPTION, EventKind.FATAL_SIGNAL, EventKind.OOM_TENSOR, EventKind.OOM_GPU,
                    EventKind.CHECK_FAILED, EventKind.PORT_IN_USE, EventKind.NAN_LOSS)

    def _parse_line(self, track: TaskTrack, ts: float, line: str) -> None:
        """Feed one line to the task's parser; connections and faults also go to events.jsonl."""
        for e in track.on_line(ts, line):
            if e.kind == EventKind.CLUSTER_CONNECTED:
                self._event(ts, track.task, "connected", e.text)
            elif e.kind in self._FAULT_KINDS:
                self._event(ts, track.task, "fault", e.text)

    # -- launch ---------------------------------------------------------
    def _env(self, task: str) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("DISTDOCTOR_AGENT_PID", None)
        env.update(self.cfg.extra_env)
        env.update(LOCAL.task_environ(self.cfg.cluster, task))
        env["DISTDOCTOR_SOCK"] = self.channel.path if self.channel else ""
        env["DISTDOCTOR_SAMPLE_S"] = str(self.cfg.sample_s)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = BOOTSTRAP_DIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def _launch(self) -> None:
        logs = os.path.join(self.cfg.out_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        for task in self._own_tasks():
            job, _, idx = task.partition(":")
            path = os.path.join(logs, f"{job}-{idx}.log")
            proc = TaskProcess(task, self.cfg.argv, self._env(task), path, self._on_line)
            self.tracks[task] = TaskTrack(task, proc)
            self._event(proc.started_at, task, "start", f"pid {proc.pid}: {shlex.join(self.cfg.argv)}")

    def _own_tasks(self) -> tuple[str, ...]:
        """The tasks this supervisor starts itself (all of them, except under ``run --node``)."""
        return tuple(self.cfg.cluster.tasks)

    # -- hooks for run --node ---------------------------------------------
    def _tick(self, now: float) -> None:
        """Once per loop turn, before exits are handled: the node supervisor exchanges news here."""

    def _awaiting_peers(self, now: float) -> bool:
        """Whether tasks started elsewhere may still join (``run --node``'s collector)."""
        return False

    def _detects_hangs(self) -> bool:
        """Whether this supervisor may declare a hang (a node that is not the collector leaves it to the collector)."""
        return True

    def _stack_of(self, track: TaskTrack) -> str:
        """The task's stacks at a hang: py-spy from outside, and the agent's last sample."""
        pid = track.agent_pid or track.proc.pid
        text = None
        if track.proc.alive:
            text = probe.py_spy_dump(pid, nonblocking=track.state in FROZEN_STATES)
        agent = track.agent.stack_text() if track.agent else ""
        return "\n\n".join(x for x in (text and f"py-spy dump of pid {pid}:\n{text}", agent) if x)

    # -- notifications (alerts, metrics, thresholds, TensorBoard) ---------
    def _start_notifier(self) -> None:
        if self.cfg.notify is None or self.notifier is not None:  # one notifier across attempts
            return
        from ..notify.hub import Notifier
        self.notifier = Notifier(self.cfg.notify, bundle=self.cfg.out_dir,
                                 report=os.path.join(self.cfg.out_dir, "report.html"))
        self.notifier.start()
        if self.notifier.metrics is not None:
            self._say(f"Prometheus metrics on http://{self.cfg.notify.metrics_addr}:{self.notifier.metrics.port}/metrics")

    def _notify(self, event: str, **fields) -> None:
        """Tell the sinks about an event (hang_suspected, hang_declared, task_failed, restart, gave_up,
        threshold, verdict); never blocks: delivery happens on the sender's threads."""
        if self.notifier is not None:
            self.notifier.event(event, time.time(), **fields)

    def _notify_decision(self, event: str, root, attempt: int, backoff: float, reason: str, **extra) -> None:
        """A restart decision (``restart``) or the end of the budget (``gave_up``) as an alert event."""
        self._notify(event, category=root.category.value if root else None, code=root.code if root else None,
                     culprit=root.culprit if root else None, summary=reason, attempt=attempt,
                     backoff_s=round(backoff, 3), **extra)

    def _notify_tick(self, now: float, assessment) -> None:
        if self.notifier is None or not self.notifier.due(now):
            return
        from .notifyadapter import notify_tick
        for c in notify_tick(self.notifier, self.tracks, now, assessment):
            self._say(f"warning: {c.summary}")
            self._event(now, c.task, "threshold", c.summary)

    # -- signals --------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:
        self._signals += 1
        self.interrupted = signal.Signals(signum).name
        if self._signals >= 2:
            for t in self.tracks.values():
                t.proc.signal_group(signal.SIGKILL)

    def _install_signals(self) -> dict:
        old = {}
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                old[s] = signal.signal(s, self._on_signal)
        return old

    # -- observation ----------------------------------------------------
    def _poll(self, now: float) -> None:
        host_total = probe.host_memory_limit()
        sockets = self._look_at_sockets(now)
        for task in self._own_tasks():
            track = self.tracks.get(task)
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
            oom = self._oom_since_start(probe.read_cgroup_memory(track.cgroup))
            limit = host_total
            if oom is not None and oom.limit_bytes:
                limit = min(limit, oom.limit_bytes)
            self._apply_sample(track, s, oom, limit, now)
        if self._samples_fh is not None:
            self._samples_fh.flush()

    def _look_at_sockets(self, now: float) -> dict | None:
        """Every TCP socket's byte counters, once a second while one of this supervisor's tasks has made no step
        for 2 s (a task that downloads or uploads while its peers wait is working, not stuck); else None."""
        if now - self._net_look_at < NET_LOOK_EVERY_S:
            return None
        quiet = [t for t in (self.tracks.get(n) for n in self._own_tasks()) if t is not None and t.proc.alive
                 and now - (t.last_progress_at or t.proc.started_at) >= 2.0]
        if not quiet:
            return None
        self._net_look_at = now
        return probe.tcp_bytes()

    def _apply_sample(self, track: TaskTrack, s: probe.ProcSample, oom, limit: int, now: float) -> None:
        """Record one process sample of a task (taken here, or by a remote node supervisor)."""
        track.last_proc = s
        if s.state != track.state:
            track.state, track.state_since = s.state, now
        track.cpu_hist.append((now, s.cpu_seconds))
        with track.lock:
            track.activity.on_proc(now, s.cpu_seconds, s.io_bytes)
            if s.net is not None:
                track.activity.on_net(now, {tuple(k): int(b) for k, b in s.net})
        if oom is not None:
            track.oom = oom
        with track.lock:
            if len(track.memory) >= track.MAX_MEMORY_SAMPLES:
                track.memory = track.memory[::2]
            track.memory.append(MemorySample(ts=now, rss_bytes=s.rss_bytes, limit_bytes=limit))
        if s.rss_bytes >= 0.85 * limit and not track.memory_warned:
            track.memory_warned = True
            self._say(f"warning: {track.task} uses {s.rss_bytes >> 20} MiB, {s.rss_bytes / limit:.0%} of its "
                      f"{limit >> 20} MiB limit; it may be OOM-killed")
            self._event(now, track.task, "memory_warning", f"RSS {s.rss_bytes >> 20} MiB of {limit >> 20} MiB")
        if self._samples_fh is not None:
            a = track.agent
            row = {"ts": round(now, 3), "task": track.task, "state": track.state, "rss": s.rss_bytes, "limit": limit,
                   "cpu": round(s.cpu_seconds, 3), "calls": a.calls if a else 0, "steps": track.steps(),
                   "in_call": a.in_call if a else None, "where": track.where(), "location": track.location()}
            with self._out_lock:
                self._samples_fh.write(json.dumps(row) + "\n")

    def _handle_exits(self, now: float) -> None:
        for track in self.tracks.values():
            p = track.proc
            if p.alive or track.exit_handled:
                continue
            track.exit_handled = True
            rc = p.returncode
            oom = self._oom_since_start(probe.read_cgroup_memory(track.cgroup))
            if oom is not None:
                lines = tuple(probe.kernel_oom_lines({p.pid, track.agent_pid or p.pid})) if rc and rc < 0 else ()
                track.oom = oom if not lines else type(oom)(**{**oom.__dict__, "kernel_lines": lines})
            how = signal_label(rc)
            self._event(p.ended_at or now, track.task, "exit", how)
            if p.killed_by_supervisor:
                continue
            self._say(f"{track.task} ended ({how})")
            if rc != 0 and not self._fatal(track.task):
                # a lost ParameterServerStrategy worker: the coordinator goes on; hang detection and the
                # grace stop stay armed for a later fatal failure (_first_failure is only a fatal one)
                self._event(now, track.task, "fault", f"{track.task} failed ({how})")
                self._say(f"{track.task} failed ({how}); ParameterServerStrategy goes on without it")
                self._notify("task_failed", culprit=track.task, summary=f"{track.task} failed ({how})",
                             since=p.ended_at or now)
                self._maybe_restart_task(track, now)
            elif rc != 0 and self._first_failure is None:
                self._first_failure = (p.ended_at or now, track.task)
                self.detected_at = now
                self._event(now, track.task, "fault", f"{track.task} failed ({how})")
                faults = [e.text for e in track.events if e.kind in self._FAULT_KINDS]
                self._notify("task_failed", culprit=track.task, summary=f"{track.task} failed ({how})",
                             first_failure=faults[0] if faults else None, since=p.ended_at or now)
                self.banner = f"{track.task} failed ({how}); the job cannot complete"
                self._say(self.banner + f"; waiting up to {self.cfg.failure_grace:.0f} s for the other tasks")
            if track.task == "chief:0" and self.cfg.cluster.strategy == "parameter_server":
                self._chief_done_at = now

    # -- ParameterServerStrategy: a lost worker restarts alone -----------------
    def _restarts_used(self) -> int:
        return sum(1 for r in self.ledger if r.decision == Action.RESTART) + \
            sum(1 for r in self._task_restarts if r["decision"] == "restart")

    def _maybe_restart_task(self, track: TaskTrack, now: float) -> None:
        """Judge a lost PSS worker alone (its own findings) and schedule its relaunch if a restart can fix it."""
        if self.cfg.restarts <= 0 or self.interrupted:
            return
        findings = [f for f in collect_findings(self.observation()) if f.culprit == track.task]
        root = pick_root_cause(findings) or (findings[0] if findings else None)
        record = {"task": track.task, "at": now, "root_cause": root.to_json() if root else None,
                  "attempt": len(self.ledger) + 1, "backoff_s": 0.0}
        used = self._restarts_used()
        if root is None:
            record.update(decision="stop", reason="no finding explains the worker's exit; not restarting blindly")
        else:
            cls, why = classify(root, ())
            if cls == RestartClass.DETERMINISTIC:
                record.update(decision="stop", reason=why)
            elif used >= self.cfg.restarts:
                record.update(decision="stop", reason=f"{why}; but the restart budget is spent ({used} of {self.cfg.restarts})")
            else:
                wait = backoff_s(used + 1, RestartPolicy(self.cfg.restarts, self.cfg.restart_delay,
                                                         self.cfg.restart_delay_max), self._rng)
                record.update(decision="restart", reason=f"{why} (restart {used + 1} of {self.cfg.restarts})", backoff_s=wait)
                self._relaunch_at[track.task] = now + wait
        self._task_restarts.append(record)
        if record["decision"] == "restart":
            self._say(f"restarting {track.task} alone in {record['backoff_s']:.1f} s: {record['reason']}")
            self._notify_decision("restart", root, record["attempt"], record["backoff_s"], record["reason"],
                                  task=track.task)
        else:
            self._say(f"not restarting {track.task}: {record['reason']}")

    def _relaunch_due(self, now: float) -> None:
        for task, when in list(self._relaunch_at.items()):
            if now < when:
                continue
            del self._relaunch_at[task]
            if self.interrupted or self._first_failure is not None or self._chief_done_at is not None:
                continue
            old = self.tracks[task]
            old.proc.drain(2.0)
            old.close_log()
            n = sum(1 for r in self._task_restarts if r["task"] == task and r["decision"] == "restart")
            base, ext = os.path.splitext(old.proc.log_path)
            try:
                os.replace(old.proc.log_path, f"{base}.before-restart-{n}{ext}")
            except OSError:
                pass
            proc = TaskProcess(task, self.cfg.argv, self._env(task), old.proc.log_path, self._on_line)
            self.tracks[task] = TaskTrack(task, proc)
            self._event(proc.started_at, task, "start", f"pid {proc.pid}: restarted alone ({n})")
            last = next(r for r in reversed(self._task_restarts) if r["task"] == task)
            cause = (last.get("root_cause") or {}).get("summary") or "it failed"
            self._notes.append(f"{task} was restarted alone while the job went on ({cause})")
            self._say(f"{task} restarted (pid {proc.pid})")

    def _oom_since_start(self, oom):
        """The cgroup's OOM-kill counter is cumulative (earlier jobs, other processes): count only kills
        since distdoctor first read that cgroup, so a plain SIGKILL is not called an OOM."""
        if oom is None:
            return None
        return oom_kills_since(oom, self._oom_baselines.setdefault(oom.cgroup, oom.oom_kill_count or 0))

    def _fatal(self, task: str) -> bool:
        if self.cfg.cluster.strategy != "parameter_server":
            return True
        return not task.startswith("worker:")

    def _snapshot(self, now: float) -> JobSnapshot:
        snaps = tuple(t.snapshot() for t in self.tracks.values())
        intervals: list[float] = []
        for t in self.tracks.values():
            intervals.extend(t.step_intervals)
        started = min(t.proc.started_at for t in self.tracks.values())
        return JobSnapshot(tasks=snaps, step_intervals=tuple(intervals[-100:]), started_at=started,
                           hang_timeout=self.cfg.hang_timeout)

    def _capture_stacks(self) -> None:
        def one(track: TaskTrack) -> None:
            track.stack = self._stack_of(track)

        with ThreadPoolExecutor(max_workers=min(8, len(self.tracks))) as pool:
            list(pool.map(one, self.tracks.values()))

    def _live_update(self, now: float, assessment) -> None:
        if self.cfg.live is None:
            return
        try:
            self.cfg.live.update_from_tracks(self.tracks, now, self.banner)
        except Exception:
            pass

    # -- main -----------------------------------------------------------
    def run(self) -> tuple[Diagnosis, JobObservation]:
        os.makedirs(self.cfg.out_dir, exist_ok=True)
        self._start_notifier()  # a taken --metrics-port is a usage error, before anything starts
        self.ledger = load_ledger(self.cfg.out_dir) if self.cfg.restarts > 0 else []
        if self.ledger:
            used = sum(1 for r in self.ledger if r.decision == Action.RESTART)
            self._say(f"continuing the {len(self.ledger)} attempt(s) recorded in {self.cfg.out_dir} "
                      f"({used} of {self.cfg.restarts} restarts used)")
        self.channel = AgentChannel(on_sample=self._on_agent)
        old = self._install_signals()
        attempts_here = 0
        try:
            while True:
                diag, job = self._run_attempt()
                attempts_here += 1
                decision = self._decide(diag, job)
                if decision.action != Action.RESTART or not self._between_attempts(decision):
                    break
        finally:
            self.channel.close()
            for s, h in old.items():
                signal.signal(s, h)
        diag = self._with_ledger(diag)   # the whole run: every attempt and the goodput
        if self.notifier is not None:
            lost = self.notifier.finish(diag, time.time())  # sends the verdict, waits for the queues
            if lost:  # alerts that could not be delivered, the verdict's own included
                from dataclasses import replace
                diag = self._write_json_with_ledger(replace(diag, notes=diag.notes + tuple(lost)))
        if attempts_here == 1:
            self._check_startup_failure(job)
        return diag, job

    def _run_attempt(self) -> tuple[Diagnosis, JobObservation]:
        """One attempt: launch every task, watch, stop, and diagnose it."""
        self._start_attempt()
        try:
            self._launch()
            self._loop()
        finally:
            self._stop_all(reason="cleanup")
            for t in self.tracks.values():
                t.proc.drain(5.0)
                t.close_log()
        result = self._finish()
        self._enter(Phase.DONE)
        return result

    def _start_attempt(self) -> None:
        self._enter(Phase.LAUNCHING)
        out = self.cfg.out_dir
        if self.ledger and os.path.isdir(os.path.join(out, "logs")):
            self._archive(self.ledger[-1].number)
        self.tracks = {}
        self.detected_at = self.hang = self.banner = None
        self._first_failure = self._chief_done_at = None
        self._relaunch_at = {}
        self.pauses = PauseLog()
        self._attempt_started_at = time.time()
        known = {d for r in self.ledger for d in r.checkpoints}
        self._ckpt_at_start = {d: _non_empty(d) for d in known}
        self._events_fh = open(os.path.join(out, "events.jsonl"), "w")
        self._samples_fh = open(os.path.join(out, "samples.jsonl"), "w")
        if self.ledger:
            self._event(self._attempt_started_at, None, "attempt", f"attempt {len(self.ledger) + 1} starts")

    def _archive(self, number: int) -> None:
        """Move attempt ``number``'s files to ``attempts/<number>/``: the top level is the latest attempt."""
        out = self.cfg.out_dir
        dst = os.path.join(out, "attempts", str(number))
        os.makedirs(dst, exist_ok=True)
        for name in ("logs", "events.jsonl", "samples.jsonl"):
            src = os.path.join(out, name)
            if os.path.exists(src) and not os.path.exists(os.path.join(dst, name)):
                os.replace(src, os.path.join(dst, name))
        if os.path.exists(os.path.join(out, "diagnosis.json")):
            shutil.copyfile(os.path.join(out, "diagnosis.json"), os.path.join(dst, "diagnosis.json"))

    # -- restarts -------------------------------------------------------
    def _lead_tracks(self, culprit: str | None) -> list[TaskTrack]:
        """The culprit first (where the failure happened), then the others in cluster order."""
        tracks = list(self.tracks.values())
        return sorted(tracks, key=lambda t: t.task != culprit)

    def _position(self, culprit: str | None) -> tuple[Position, int | None]:
        """How far the attempt trained: the culprit's position when there is one, else the furthest task's."""
        best, steps = Position(), None
        for t in self._lead_tracks(culprit):
            p = Position(*t.position())
            if t.task == culprit and (p.epoch is not None or p.step is not None):
                return p, t.steps()
            if p.key() > best.key():
                best, steps = p, t.steps()
        return best, steps

    def _resume_point(self, culprit: str | None) -> tuple[ResumePoint, tuple[str, ...], tuple]:
        marks, dirs = (), []
        for t in self._lead_tracks(culprit):
            if t.epoch_marks and not marks:
                marks = tuple(t.epoch_marks)
            for _kind, d in t.checkpoints:
                if d and d not in dirs:
                    dirs.append(d)
        for r in self.ledger:
            for d in r.checkpoints:
                if d not in dirs:
                    dirs.append(d)
        dirs = [d for d in dirs if "/workertemp_" not in d]  # TF's scratch copies on non-chief workers
        epoch = marks[0][0] if marks else None
        restored = next((d for d in dirs if self._ckpt_at_start.get(d) or (epoch and d)), None)
        step = self.ledger[-1].saved_step if restored and self.ledger and self.ledger[-1].saved_step else None
        return ResumePoint(epoch=epoch, step=step, checkpoint=restored), tuple(dirs), marks

    def _saved_step(self) -> int | None:
        """The step a preemption save recorded (the agent's line after PreemptionCheckpointHandler saved)."""
        for t in self.tracks.values():
            for e in t.events:
                m = _SAVED_RUN.search(e.text) if e.kind == EventKind.PREEMPTION else None
                if m:
                    return int(m.group(1))
        return None

    def _decide(self, diag: Diagnosis, job: JobObservation) -> RestartDecision:
        """Ask the policy, record the attempt in the ledger, rewrite diagnosis.json, say why."""
        number = len(self.ledger) + 1
        root = diag.root_cause
        reached, steps = self._position(root.culprit if root is not None else None)
        culprit = diag.tasks.get(root.culprit) if root is not None and root.culprit else None
        exit_code = culprit.exit_code if culprit is not None else None
        policy = RestartPolicy(max_restarts=max(0, self.cfg.restarts - sum(
            1 for r in self._task_restarts if r["decision"] == "restart")), delay_s=self.cfg.restart_delay,
            delay_max_s=self.cfg.restart_delay_max)
        decision = decide_restart(root, [r.outcome() for r in self.ledger], policy, self._rng,
                                  succeeded=diag.status.value == "succeeded", reached=reached, exit_code=exit_code,
                                  interrupted=self.interrupted)
        if self.hang is not None and self.cfg.on_hang == "wait" and decision.action == Action.RESTART:
            decision = RestartDecision(Action.STOP, "--on-hang wait kept the hung job for debugging; not restarting it",
                                       restart_class=decision.restart_class)
        veto = self._restart_veto(root) if decision.action == Action.RESTART else None
        if veto:
            decision = RestartDecision(Action.STOP, veto, restart_class=decision.restart_class)
        resumed, dirs, marks = self._resume_point(root.culprit if root is not None else None)
        firsts = [t.first_step_at for t in self.tracks.values() if t.first_step_at is not None]
        ended = max((t.proc.ended_at or 0 for t in self.tracks.values()), default=0) or time.time()
        failed_at = root.at if root is not None and root.at is not None else (self.detected_at if root else None)
        record = AttemptRecord(
            number=number, started_at=self._attempt_started_at, ended_at=ended, status=diag.status.value,
            root_cause=root, decision=decision.action, reason=decision.reason, backoff_s=decision.backoff_s,
            resumed_from=resumed, reached=reached, steps=steps, exit_code=exit_code,
            first_step_at=min(firsts) if firsts else None, failed_at=failed_at, checkpoints=dirs,
            epoch_starts=marks[-1000:], restart_class=decision.restart_class.value if decision.restart_class else None,
            saved_step=self._saved_step())
        self.ledger.append(record)
        if decision.action == Action.RESTART and not dirs and (steps or reached.epoch):
            self._warn_no_checkpoint(reached)
        self._write_json_with_ledger(diag)
        if decision.action == Action.RESTART:
            self._say(f"attempt {number} ended ({diag.status.value}); restarting every task in "
                      f"{decision.backoff_s:.1f} s: {decision.reason}")
            self._notify_decision("restart", root, number, decision.backoff_s, decision.reason)
        elif decision.action == Action.STOP and (self.cfg.restarts > 0 or len(self.ledger) > 1):
            self._say(f"attempt {number} ended ({diag.status.value}); not restarting: {decision.reason}")
            self._notify_decision("gave_up", root, number, 0.0, decision.reason)
        return decision

    def _restart_veto(self, root) -> str | None:
        """Why a restart the policy allows cannot happen here (``run --node``: a node whose host is gone)."""
        return None

    def _warn_no_checkpoint(self, reached: Position) -> None:
        if self._ckpt_warned:
            return
        self._ckpt_warned = True
        text = (f"the job writes no checkpoint (no BackupAndRestore, CheckpointManager or PreemptionCheckpointHandler "
                f"was seen): the restart starts from the beginning and trains again up to {reached.describe()}. "
                "Fix: model.fit(..., callbacks=[tf.keras.callbacks.BackupAndRestore(backup_dir=\"/shared/backup\")])")
        self._say("warning: " + text)
        self._notes.append(text)

    def _between_attempts(self, decision: RestartDecision) -> bool:
        """The backoff, then fresh ports if the old ones are still held; False when interrupted."""
        self._enter(Phase.BACKOFF)
        if not wait_backoff(decision.backoff_s, stopped=lambda: self.interrupted is not None):
            last = self.ledger[-1]
            from dataclasses import replace as _replace
            self.ledger[-1] = _replace(last, decision=Action.STOP,
                                       reason=f"distdoctor received {self.interrupted} during the backoff; "
                                              "run it again with the same --out to continue the restart budget")
            self._say(f"received {self.interrupted} during the backoff: not restarting")
            self._rewrite_ledger()
            return False
        self._fresh_ports_if_held()
        return True

    def _fresh_ports_if_held(self) -> None:
        cluster = self.cfg.cluster
        if not isinstance(cluster, LocalCluster):
            return
        held = [a for addrs in cluster.jobs.values() for a in addrs if not _port_free(a)]
        if not held:
            return
        jobs = cluster.jobs
        self.cfg.cluster = build_local_cluster(len(jobs.get("worker", ())), len(jobs.get("ps", ())), "chief" in jobs)
        self._say(f"port(s) {', '.join(held)} are still held: the restart uses fresh ports")

    def _with_ledger(self, diag: Diagnosis) -> Diagnosis:
        """``diag`` with this run's notes, every attempt so far, the goodput and the PSS task restarts."""
        notes = tuple(diag.notes) + tuple(n for n in self._notes if n not in diag.notes)
        return dataclasses.replace(diag, notes=notes, attempts=tuple(self.ledger), goodput=job_goodput(self.ledger),
                                   task_restarts=tuple(self._task_restarts))

    def _write_json_with_ledger(self, diag: Diagnosis) -> Diagnosis:
        full = self._with_ledger(diag)
        write_json(os.path.join(self.cfg.out_dir, "diagnosis.json"), full.to_json())
        return full

    def _rewrite_ledger(self) -> None:
        path = os.path.join(self.cfg.out_dir, "diagnosis.json")
        try:
            with open(path) as fh:
                data = Diagnosis.from_json(json.load(fh))
        except (OSError, ValueError):
            return
        write_json(path, dataclasses.replace(data, attempts=tuple(self.ledger),
                                             goodput=job_goodput(self.ledger)).to_json())

    def _on_agent(self, sample) -> None:
        track = self.tracks.get(sample.task)
        if track is not None:
            first = track.agent is None
            track.on_agent(sample)
            if first:
                self._event(sample.ts, sample.task, "agent", f"agent reporting from pid {sample.pid}")

    def _loop(self) -> None:
        """Observe, ask :func:`.lifecycle.decide`, carry its actions out; until it ends the attempt."""
        self._enter(Phase.RUNNING)
        while True:
            now = time.time()
            a = None
            if not self.interrupted:
                self._tick(now)
                self._poll(now)
                self._handle_exits(now)
                self._relaunch_due(now)
                if self._first_failure is not None:
                    self._enter(Phase.FAILING)
                if any(t.proc.alive for t in self.tracks.values()):
                    a = assess(self._snapshot(now), now)
                    self.pauses.follow(a)
                    self._notify_tick(now, a)
            if self._carry_out(decide(self._loop_state(now, a), now), now, a):
                return
            self._live_update(now, a)
            time.sleep(TICK_S)

    def _loop_state(self, now: float, a) -> LoopState:
        fatal = self._first_failure is not None and self._fatal(self._first_failure[1])
        return LoopState(
            interrupted=self.interrupted, alive=tuple(t.task for t in self.tracks.values() if t.proc.alive),
            awaiting_peers=self._awaiting_peers(now), relaunch_pending=bool(self._relaunch_at),
            fatal_failure_at=self.detected_at if fatal else None, failure_grace=self.cfg.failure_grace,
            chief_done_at=self._chief_done_at, hang_allowed=self._first_failure is None and self._detects_hangs(),
            assessment=a.status if a is not None else "ok", has_verdict=bool(a is not None and a.verdict is not None),
            still=self.pauses.still(a, now),
            banner=self.banner)

    def _carry_out(self, actions, now: float, a) -> bool:
        """Do what :func:`decide` said; True when the attempt is over."""
        for act in actions:
            if isinstance(act, SuspectStall):
                self.banner = f"stall suspected: {a.reason}"
                self._say(self.banner)
                self._event(now, a.suspect, JobEventKind.STALL_SUSPECTED, a.reason)
                self._notify("hang_suspected", culprit=a.suspect, summary=a.reason, since=now - a.stalled_for,
                             stalled_s=f"{a.stalled_for:.1f}", threshold_s=f"{a.threshold:.1f}")
                self.pauses.suspect(a, now)
            elif isinstance(act, ClearStall):
                self._clear_stall(now, a)
            elif isinstance(act, DeclareHang):
                self.pauses.drop()
                self._declare_hang(a, now)
            elif isinstance(act, StopAll):
                if act.reason == self.interrupted:
                    self._say(f"received {self.interrupted}: stopping every task (SIGTERM, SIGKILL after "
                              f"{self.cfg.grace:.0f} s)")
                    self.detected_at = now
                elif act.say:
                    self._say(act.say)
                self._enter(Phase.STOPPING)
                self._stop_all(reason=act.reason)
            elif isinstance(act, EndAttempt):
                return True
        return False

    def _clear_stall(self, now: float, a) -> None:
        """Progress resumed: the suspicion ends (an event and an alert) and becomes a pause of the run."""
        self.banner = None
        p = self.pauses.clear(a, now)
        text = "progress resumed"
        if p is not None:
            text = (f"progress resumed after {p.seconds:.1f} s: {p.task} " + (f"was {p.doing} " if p.doing else "")
                    + (f"at {p.where}" if p.where else "outside TensorFlow"))
        self._say(f"stall cleared: {text}")
        self._event(now, p.task if p else None, JobEventKind.STALL_CLEARED, text)
        self._notify("hang_cleared", summary=text)

    def _declare_hang(self, a, now: float) -> None:
        self._enter(Phase.HUNG)
        self.hang = a.verdict
        self.detected_at = now
        self.banner = f"HANG: {a.reason}"
        self._say(f"hang declared: {a.reason}")
        self._event(now, a.suspect, JobEventKind.HANG_DECLARED, a.reason)
        v = a.verdict
        code, category = _HANG_KINDS.get(v.kind, (None, None))
        culprit_track = self.tracks.get(v.culprits[0]) if v.culprits else None
        self._notify("hang_declared", culprit=v.culprits[0] if v.culprits else None, summary=a.reason,
                     category=category, code=code, since=v.since, status="hung",
                     first_failure=culprit_track.location() if culprit_track else None,
                     waiting=",".join(v.waiting))
        for t in self.tracks.values():
            t.freeze()
        self._capture_stacks()
        if self.cfg.on_hang == "wait":
            self._write_diagnosis()
            pids = ", ".join(f"{t.task}={t.agent_pid or t.proc.pid}" for t in self.tracks.values() if t.proc.alive)
            self._say(f"--on-hang wait: the job is kept alive for debugging ({pids}); "
                      "attach with `py-spy dump --pid PID` or gdb; Ctrl-C ends it")
            while not self.interrupted and any(t.proc.alive for t in self.tracks.values()):
                time.sleep(TICK_S)
            self.interrupted = None  # ending a kept-alive hang is not a new verdict

    def _enter(self, phase: Phase) -> None:
        """Move to ``phase``; a move the table forbids is recorded (a supervisor bug), never fatal to the run."""
        if not allowed(self.phase, phase):
            self._event(time.time(), None, "lifecycle_error", f"{self.phase.value} -> {phase.value} is not allowed")
        self.phase = phase

    def _stop_all(self, reason: str) -> None:
        live = [t for t in self.tracks.values() if t.proc.group_alive()]
        if not live:
            return
        for t in live:
            self._event(time.time(), t.task, "signal_sent", f"SIGTERM ({reason})")
        with ThreadPoolExecutor(max_workers=min(16, len(live))) as pool:
            list(pool.map(lambda t: t.proc.terminate(self.cfg.grace), live))

    # -- verdict --------------------------------------------------------
    def observation(self) -> JobObservation:
        notes = []
        if self.hang is not None and self.cfg.on_hang == "wait":
            notes.append("the hung job was kept alive for debugging (--on-hang wait)")
        return JobObservation(tasks={k: t.observation() for k, t in self.tracks.items()},
                              strategy=self.cfg.cluster.strategy, source="run", hang=self.hang,
                              interrupted=self.interrupted, ended_at=time.time(), notes=tuple(notes),
                              pauses=self.pauses.all(time.time(), self.hang is not None),
                              started_at=self._attempt_started_at)

    def observes_all_logs(self) -> bool:
        """Whether this supervisor's bundle holds every task's log (a node that is not the collector does not)."""
        return True

    def _write_diagnosis(self) -> tuple[Diagnosis, JobObservation]:
        job = self.observation()
        detected = self.detected_at or time.time()
        diag = diagnose(job, detected_at=detected, command="run")
        if self.observes_all_logs():  # the knowledge base reads the tasks' output too (a generic reading only)
            diag = refine_with_signatures(diag, os.path.join(self.cfg.out_dir, "logs"))
        if self.notifier is not None:  # threshold crossings: warnings beside the engine's findings
            from dataclasses import replace
            from ..notify.rules import threshold_findings
            diag = replace(diag, findings=diag.findings + tuple(threshold_findings(self.notifier.crossings())))
        self._write_json_with_ledger(diag)
        return diag, job

    def _finish(self) -> tuple[Diagnosis, JobObservation]:
        for fh in (self._events_fh, self._samples_fh):
            try:
                fh.close()
            except Exception:
                pass
        self._events_fh = self._samples_fh = None
        return self._write_diagnosis()

    def _check_startup_failure(self, job: JobObservation) -> None:
        """A command that fails at once on every task is a usage error, not a training failure."""
        if self.hang or self.interrupted:
            return
        quick = []
        for t in job.tasks.values():
            if t.exit_code in (None, 0) or t.ended_at is None or t.started_at is None:
                return
            if t.ended_at - t.started_at > STARTUP_FAIL_S or self.tracks[t.task].agent and self.tracks[t.task].agent.tf_loaded:
                return
            quick.append(t)
        if not quick:
            return
        t = quick[0]
        last = ""
        try:
            with open(t.log_path, errors="replace") as fh:
                lines = [ln.split(" ", 1)[-1].strip() for ln in fh if ln.strip()]
            last = lines[-1] if lines else ""
        except OSError:
            pass
        raise UsageError(f"the command exited at once with code {t.exit_code} on every task"
                         + (f": {last[:200]}" if last else "") + f" (logs in {os.path.dirname(t.log_path)})")


_SAVED_RUN = re.compile(r"PreemptionCheckpointHandler saved a checkpoint .*\(run (\d+)\)")


def oom_kills_since(oom, baseline: int):
    """``oom`` with its OOM-kill count taken relative to ``baseline`` (pure)."""
    if oom.oom_kill_count is None:
        return oom
    from dataclasses import replace as _replace
    return _replace(oom, oom_kill_count=max(0, oom.oom_kill_count - baseline))


def _non_empty(path: str) -> bool:
    try:
        return any(True for _ in os.scandir(path))
    except OSError:
        return False


def _port_free(address: str) -> bool:
    """Whether a restarted task could bind ``host:port`` (gRPC binds with SO_REUSEADDR: only a listener blocks it)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1" if host in ("localhost", "") else host, int(port)))
        return True
    except (OSError, ValueError):
        return False
