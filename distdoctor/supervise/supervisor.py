"""The ``distdoctor run`` supervisor: launch every task, watch, carry out what the loop's step decides.

Each turn (four a second, on the injected :class:`~.clock.Clock`) the supervisor observes its tasks
(:class:`~.observe.Observer`), asks :func:`.detect.assess` for a reading, and hands both with the clock's
reading to the pure :func:`.step.step`, which returns the next :class:`~.step.RunState` and the turn's effects.
Events go to the sinks on the one stream (:mod:`.sinks`, :mod:`.bundle`, a node's side link); the few actions
are carried out here:

* stop the tasks (SIGTERM to each task's process group, SIGKILL after ``grace``);
* at a declared hang, record every task's stack (py-spy, else the agent's) -- and with ``--on-hang wait`` keep
  the job alive for a debugger;
* judge whether a failed ParameterServerStrategy worker restarts alone (:mod:`.restarts`).

SIGINT/SIGTERM/SIGHUP to the supervisor are forwarded (the step stops every task), so TensorFlow's
PreemptionCheckpointHandler can save; tasks carry PR_SET_PDEATHSIG and the job's mark, what outlives them is
ended at the attempt's end, and a watchdog ends it if the supervisor is SIGKILLed (:mod:`.reaper`): no orphan. With ``--restarts N`` every attempt's verdict is followed by one decision of the policy; the files of
earlier attempts move to ``attempts/<n>/`` (:mod:`.bundle`).

What differs under ``run --node`` is a *role* the supervisor is composed with (:mod:`.node`); the local run's
role is :class:`Solo`.
"""
from __future__ import annotations

import os
import random
import shlex
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from ..cluster.drift import DRIFT_MARK, tf_config_drift
from ..cluster.local import LOCAL, LocalCluster, build_local_cluster
from ..diagnose.observations import FROZEN_STATES, JobObservation
from ..model import Diagnosis
from ..report.fmt import fmt_bytes
from ..safety import WriteLosses, ensure_private_dir, redact_argv, safe_text
from . import probe
from .bundle import BundleSink
from .channel import AgentChannel
from .clock import SYSTEM_CLOCK
from .detect import assess
from .launch import TaskProcess
from .ledger import load_ledger
from .lifecycle import Phase
from .observe import Observer
from .policy import Action, RestartDecision
from .restarts import Restarts, port_free
from .runconfig import RunConfig
from .solo import Solo
from .runevents import (ACTIONS, AgentSampled, AttemptDiagnosed, AttemptOver, AttemptStarted, Bus, Journal,
                        JudgeTaskRestart, LedgerAmended, OutputChunk, OutputLine, RecordHang, RunEvent, Said, StopTasks,
                        TaskExited)
from .knowledge import KnowledgeSink
from .sinks import AlertSink, ConsoleSink, LiveSink
from .step import Observed, Rules, RunState, enter, step, teardown_notes
from .tracking import TaskTrack
from .verdict import check_startup_failure, diagnose_attempt

__all__ = ["RunConfig", "Supervisor", "Solo", "BOOTSTRAP_DIR", "wait_backoff", "TICK_S"]

BOOTSTRAP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bootstrap")
TICK_S = 0.25


def _say_stderr(text: str) -> None:
    try:
        print(f"[distdoctor] {safe_text(text)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def wait_backoff(seconds: float, *, clock=None, sleep=None, stopped=lambda: False, tick: float = TICK_S) -> bool:
    """Wait ``seconds`` unless ``stopped()`` turns true; True when the whole wait passed."""
    clock = clock or SYSTEM_CLOCK.now
    sleep = sleep or SYSTEM_CLOCK.sleep
    deadline = clock() + seconds
    while not stopped():
        left = deadline - clock()
        if left <= 0:
            return True
        sleep(min(tick, left))
    return False


class Supervisor:
    def __init__(self, cfg: RunConfig, role=None) -> None:
        self.cfg = cfg
        self.clock = cfg.clock or SYSTEM_CLOCK
        self.role = role or Solo()
        self.tracks: dict[str, TaskTrack] = {}
        self._given_tf_config: dict[str, str] = {}   # task -> the TF_CONFIG it was launched with
        self._last_assessment = None                 # the detector's reading of the previous turn
        self.interrupted: str | None = None       # set by the signal handler (or a collector's stop)
        self._signals = 0
        self.state = RunState(self._rules(), phase=Phase.IDLE)
        self.channel: AgentChannel | None = None
        self.reaper = None             # JobReaper: the job's mark, the subreaper, the watchdog (run())
        self._leftover_notes: list[str] = []
        self.notifier = None
        self.restarts = Restarts(cfg, cfg.rng if cfg.rng is not None else random.Random(), [])
        self._attempt_started_at = self.clock.now()
        self.bus = Bus()
        # what distdoctor could not record (a full disk, an I/O error, output it could not keep up with): said once
        # on stderr, and in the diagnosis (DD212); never a reason to stop the job
        self.losses = WriteLosses(on_first=lambda text: _say_stderr(text))
        self.bundle = BundleSink(cfg.out_dir, self.losses)
        self.observer = Observer(self.bus.publish)
        self.knowledge = KnowledgeSink(self.bus.publish)
        for sink in (self.bundle, self.bundle.journal, self.bundle.samples, ConsoleSink(cfg.stream, cfg.live),
                     LiveSink(cfg.live, lambda: self.tracks), self.knowledge):
            self.bus.subscribe(sink)
        self.role.attach(self)

    def _rules(self) -> Rules:
        return Rules(self.cfg.cluster.strategy, self.cfg.failure_grace, self.cfg.grace, self.cfg.exit_grace)

    def publish(self, ev: RunEvent) -> None:
        self.bus.publish(ev)

    def say(self, text: str) -> None:
        self.publish(Said(text))

    @property
    def ledger(self):
        return self.restarts.ledger

    # -- what the tasks send --------------------------------------------------------------------
    def on_line(self, task: str, ts: float, line: str) -> None:
        """A task's output line (its reader thread)."""
        track = self.tracks.get(task)
        if track is not None:
            self.observer.parse_line(track, ts, line)
        self.publish(OutputLine(ts, task, line))

    def on_chunk(self, task: str, ts: float, text: str, data: bytes) -> None:
        """Lines a task printed together (its log thread): ``text`` the lines, ``data`` the bytes its log got."""
        track = self.tracks.get(task)
        if track is not None:
            self.observer.parse_chunk(track, ts, text)
        self.publish(OutputChunk(ts, task, text, data))

    def on_redraw(self, task: str, ts: float, drawing: str) -> None:
        """A drawing of a task's progress bar whose line has not ended yet (its reader thread)."""
        track = self.tracks.get(task)
        if track is not None:
            track.on_redraw(ts, drawing)

    def on_agent(self, sample) -> None:
        """A bootstrap agent's sample (the agent channel's thread)."""
        track = self.tracks.get(sample.task)
        if track is not None:
            first = track.agent is None
            track.on_agent(sample)
            self.publish(AgentSampled(sample, first))
            given = self._given_tf_config.get(sample.task)
            if sample.tf_config and given and sample.tf_config != track.tf_config_seen:
                track.tf_config_seen = sample.tf_config
                problem = tf_config_drift(sample.task, given, sample.tf_config)
                if problem:
                    track.config_problem = (problem, sample.ts)
                    track.proc.note(f"{sample.task} {DRIFT_MARK}: {problem}. TF_CONFIG in this process: "
                                    f"{sample.tf_config}")

    # -- launch ---------------------------------------------------------------------------------
    def _env(self, task: str) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("DISTDOCTOR_AGENT_PID", None)
        # the job's token is the supervisors' alone: a task that held it could speak for any task on the side link
        env.pop("DISTDOCTOR_TOKEN", None)
        env.update(self.cfg.extra_env)
        given = LOCAL.task_environ(self.cfg.cluster, task)
        env.update(given)
        if given.get("TF_CONFIG"):
            self._given_tf_config[task] = given["TF_CONFIG"]
        if self.reaper is not None:
            env.update(self.reaper.env())
        env["DISTDOCTOR_SOCK"] = self.channel.path if self.channel else ""
        env["DISTDOCTOR_SAMPLE_S"] = str(self.cfg.sample_s)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = BOOTSTRAP_DIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def _start(self, task: str, log_path: str) -> TaskProcess:
        return TaskProcess(task, self.cfg.argv, self._env(task), log_path, self.on_line, on_redraw=self.on_redraw,
                           on_chunk=self.on_chunk, losses=self.losses, hold=True)

    def _launch(self) -> None:
        logs = ensure_private_dir(os.path.join(self.cfg.out_dir, "logs"))
        for task in self.own_tasks():
            job, _, idx = task.partition(":")
            proc = self._start(task, os.path.join(logs, f"{job}-{idx}.log"))
            self.tracks[task] = TaskTrack(task, proc)
            proc.release()   # its lines reach the parser only now that its track is there to read them
            self.publish(Journal(proc.started_at, task, "start", f"pid {proc.pid}: {shlex.join(redact_argv(self.cfg.argv))}"))
        self.role.launched()

    def own_tasks(self) -> tuple[str, ...]:
        """The tasks this supervisor starts itself (all of them, except under ``run --node``)."""
        return tuple(self.cfg.cluster.tasks)

    def _relaunch_due(self, now: float) -> None:
        """ParameterServerStrategy: start again the workers whose restart alone is due."""
        for task, n, cause in self.restarts.due(now):
            s = self.state
            if self.interrupted or s.first_failure is not None or s.chief_done_at is not None:
                continue
            old = self.tracks[task]
            old.proc.drain(2.0)
            old.close_log()
            base, ext = os.path.splitext(old.proc.log_path)
            try:
                os.replace(old.proc.log_path, f"{base}.before-restart-{n}{ext}")
            except OSError:
                pass
            proc = self._start(task, old.proc.log_path)
            self.tracks[task] = TaskTrack(task, proc)
            proc.release()
            self.publish(Journal(proc.started_at, task, "start", f"pid {proc.pid}: restarted alone ({n})"))
            self.restarts.notes.append(f"{task} was restarted alone while the job went on ({cause})")
            self.say(f"{task} restarted (pid {proc.pid})")

    # -- signals --------------------------------------------------------------------------------
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

    # -- the loop -------------------------------------------------------------------------------
    def observe(self, now: float) -> Observed:
        """One turn's observations (sampling the tasks as a side effect); nothing when a signal came."""
        lost, exits, exiting, lingering, a, where = (), (), (), (), None, None
        if not self.interrupted:
            lost = tuple(self.role.tick(now))
            self.observer.poll(self.tracks, self.own_tasks(), now)
            exits = self.observer.exits(self.tracks, now)
            exiting, lingering = self.observer.exiting(self.tracks), self.observer.lingering(self.tracks)
            if any(t.proc.alive for t in self.tracks.values()):
                prev = self._last_assessment
                self.observer.look_native(self.tracks, self.own_tasks(),
                                          prev.suspect if prev and prev.status == "suspect" and not prev.pause
                                          else None, now)
                a = self._last_assessment = assess(self.observer.snapshot(self.tracks, self.cfg.hang_timeout), now)
                if a.status == "hung" and a.verdict is not None and a.verdict.culprits:
                    culprit = self.tracks.get(a.verdict.culprits[0])
                    where = culprit.location() if culprit else None
        return Observed(alive=tuple(t.task for t in self.tracks.values() if t.proc.alive), exits=exits, exiting=exiting,
                        lingering=lingering, lost=lost, assessment=a, interrupted=self.interrupted,
                        awaiting_peers=self.role.awaiting(now), relaunch_pending=bool(self.restarts.relaunch_at),
                        culprit_location=where, judges_hangs=self.role.judges_hangs())

    def turn(self, now: float) -> bool:
        """Observe, step, carry the effects out; True when the attempt is over."""
        self.state, effects = step(self.state, now, self.observe(now))
        if self.carry_out(effects, now):
            return True
        self._relaunch_due(now)
        return False

    def carry_out(self, effects: tuple[RunEvent, ...], now: float) -> bool:
        """Publish the step's events in order and do its actions; True at :class:`~.runevents.AttemptOver`."""
        for ev in effects:
            if not isinstance(ev, ACTIONS):
                self.publish(ev)
            elif isinstance(ev, StopTasks):
                if self.interrupted:   # the verdict says what the job was doing when distdoctor was stopped
                    for t in self.tracks.values():
                        if t.frozen_view is None:
                            t.freeze()
                self.stop_all(ev.reason)
            elif isinstance(ev, RecordHang):
                self._record_hang()
            elif isinstance(ev, JudgeTaskRestart):
                if self.cfg.restarts > 0 and not self.interrupted:
                    from ..diagnose.engine import collect_findings
                    for e in self.restarts.judge_task(ev.task, collect_findings(self.observation()), ev.ts):
                        self.publish(e)
            elif isinstance(ev, AttemptOver):
                return True
        return False

    def _loop(self) -> None:
        while not self.turn(self.clock.now()):
            self.clock.sleep(TICK_S)

    def _enter(self, phase: Phase) -> None:
        self.state, errs = enter(self.state, phase, self.clock.now())
        for e in errs:
            self.publish(e)

    def stop_all(self, reason: str) -> None:
        live = [t for t in self.tracks.values() if t.proc.group_alive()]
        if not live:
            return
        for t in live:
            self.publish(Journal(self.clock.now(), t.task, "signal_sent", f"SIGTERM ({reason})"))
        with ThreadPoolExecutor(max_workers=min(16, len(live))) as pool:
            list(pool.map(lambda t: t.proc.terminate(self.cfg.grace), live))

    # -- a declared hang ------------------------------------------------------------------------
    def stack_of(self, track: TaskTrack) -> str:
        """The task's stacks at a hang: py-spy from outside, and the agent's last sample."""
        text = self.role.stack_of(track)
        if text is not None:
            return text
        pid = track.agent_pid or track.proc.pid
        text = None
        if track.proc.alive:
            text = probe.py_spy_dump(pid, nonblocking=track.state in FROZEN_STATES)
        agent = track.agent.stack_text() if track.agent else ""
        return "\n\n".join(x for x in (text and f"py-spy dump of pid {pid}:\n{text}", agent) if x)

    def _record_hang(self) -> None:
        for t in self.tracks.values():
            t.freeze()

        def one(track: TaskTrack) -> None:
            track.stack = self.stack_of(track)

        with ThreadPoolExecutor(max_workers=min(8, len(self.tracks))) as pool:
            list(pool.map(one, self.tracks.values()))
        if self.cfg.on_hang != "wait":
            return
        diag = self.restarts.annotate(self._diagnose(self.observation(), final=False))
        self.publish(AttemptDiagnosed(diag, interim=True))
        pids = ", ".join(f"{t.task}={t.agent_pid or t.proc.pid}" for t in self.tracks.values() if t.proc.alive)
        self.say(f"--on-hang wait: the job is kept alive for debugging ({pids}); "
                 "attach with `py-spy dump --pid PID` or gdb; Ctrl-C ends it")
        while not self.interrupted and any(t.proc.alive for t in self.tracks.values()):
            self.clock.sleep(TICK_S)
        self.interrupted = None  # ending a kept-alive hang is not a new verdict
        self.state = replace(self.state, interrupted=None)

    # -- verdict --------------------------------------------------------------------------------
    def observation(self) -> JobObservation:
        s = self.state
        notes = list(self._leftover_notes)
        notes += [f"distdoctor failed to read {t.proc.unread_chunks} piece(s) of {k}'s output as it was printed "
                  f"({t.proc.unread_error}); they are in its log, and `distdoctor diagnose` on this bundle reads them"
                  for k, t in self.tracks.items() if getattr(t.proc, "unread_chunks", 0)]   # (a remote task's: none)
        notes += [f"{fmt_bytes(t.proc.cut_bytes)} of {k}'s over-long lines were left out of its log (each keeps its "
                  "head and its tail, a redrawn progress line its last state)"
                  for k, t in self.tracks.items() if getattr(t.proc, "cut_bytes", 0)]
        if s.hang is not None and self.cfg.on_hang == "wait":
            notes.append("the hung job was kept alive for debugging (--on-hang wait)")
        notes += teardown_notes(s)
        now = self.clock.now()
        return JobObservation(tasks={k: t.observation() for k, t in self.tracks.items()},
                              strategy=self.cfg.cluster.strategy, source="run", hang=s.hang,
                              interrupted=self.interrupted, ended_at=now, notes=tuple(notes + self.role.notes()),
                              pauses=s.pauses.all(now, s.hang is not None), started_at=self._attempt_started_at,
                              record_losses=self.losses.summary())

    def _diagnose(self, job: JobObservation, *, final: bool = True) -> Diagnosis:
        """The attempt's diagnosis; ``final``: its tasks' output is drained, so the knowledge base's live reading
        of it is complete (an interim diagnosis, of a hang kept alive, reads the log files as they are)."""
        logs = os.path.join(self.cfg.out_dir, "logs") if self.role.observes_all_logs else None
        crossings = self.notifier.crossings() if self.notifier is not None else ()
        reader = self.knowledge.take_reader() if final and logs is not None else None
        return diagnose_attempt(job, self.state.detected_at or self.clock.now(), logs, crossings, reader=reader)

    # -- main -----------------------------------------------------------------------------------
    def _start_notifier(self) -> None:
        if self.cfg.notify is None or self.notifier is not None:  # one notifier across attempts
            return
        from ..notify.hub import Notifier
        self.notifier = Notifier(self.cfg.notify, bundle=self.cfg.out_dir,
                                 report=os.path.join(self.cfg.out_dir, "report.html"))
        self.notifier.start()
        self.bus.subscribe(AlertSink(self.notifier, self.clock, lambda: self.tracks, self.publish))
        if self.notifier.metrics is not None:
            self.say(f"Prometheus metrics on http://{self.cfg.notify.metrics_addr}:{self.notifier.metrics.port}/metrics")

    def run(self) -> tuple[Diagnosis, JobObservation]:
        os.makedirs(self.cfg.out_dir, mode=0o700, exist_ok=True)
        self._start_notifier()  # a taken --metrics-port is a usage error, before anything starts
        self.restarts.ledger = load_ledger(self.cfg.out_dir) if self.cfg.restarts > 0 else []
        if self.ledger:
            used = sum(1 for r in self.ledger if r.decision == Action.RESTART)
            self.say(f"continuing the {len(self.ledger)} attempt(s) recorded in {self.cfg.out_dir} "
                     f"({used} of {self.cfg.restarts} restarts used)")
        self.channel = AgentChannel(on_sample=self.on_agent)
        from .reaper import JobReaper
        self.reaper = JobReaper()
        old = self._install_signals()
        attempts_here = 0
        try:
            while True:
                job = self._run_attempt()
                attempts_here += 1
                diag = self._diagnose(job)
                decision = self.role.decide(lambda veto: self._judge(diag, veto))
                diag = self.restarts.annotate(diag)   # the whole run: every attempt and the goodput
                last = decision.action != Action.RESTART
                if last and self.notifier is not None:   # the verdict's alert, before the file is written
                    lost = self.notifier.finish(diag, self.clock.now())   # waits for the queues
                    if lost:  # alerts that could not be delivered, the verdict's own included
                        diag = replace(diag, notes=diag.notes + tuple(lost))
                self.publish(AttemptDiagnosed(diag))
                if last or not self._between_attempts(decision):
                    break
        finally:
            self.bundle.close()
            self.channel.close()
            self.reaper.close()
            for s, h in old.items():
                signal.signal(s, h)
        if attempts_here == 1:
            check_startup_failure(job, lambda t: bool(self.tracks[t].agent and self.tracks[t].agent.tf_loaded))
        return diag, job

    def _judge(self, diag: Diagnosis, veto) -> RestartDecision:
        decision, events = self.restarts.judge(
            diag, self.tracks, started_at=self._attempt_started_at, now=self.clock.now(),
            detected_at=self.state.detected_at, interrupted=self.interrupted, hung=self.state.hang is not None,
            veto=veto)
        for e in events:
            self.publish(e)
        return decision

    def _run_attempt(self) -> JobObservation:
        """One attempt: launch every task, watch, stop; what was observed."""
        self._enter(Phase.LAUNCHING)
        self._attempt_started_at = self.clock.now()
        self.tracks = {}
        self._last_assessment = None
        self.state = RunState(self._rules(), phase=self.state.phase)
        self.restarts.begin_attempt()
        self.publish(AttemptStarted(self._attempt_started_at, len(self.ledger) + 1,
                                    self.ledger[-1].number if self.ledger else None))
        try:
            self._launch()
            self._enter(Phase.RUNNING)
            self._loop()
        finally:
            self.stop_all(reason="cleanup")
            self._journal_last_exits()
            for t in self.tracks.values():
                t.proc.drain(5.0)
                t.close_log()
            self._end_leftovers()
        job = self.observation()
        self._enter(Phase.DONE)
        return job

    def _journal_last_exits(self) -> None:
        """The ends no turn saw: the tasks stopped as the attempt ended (a failure's grace ran out, a signal came),
        or that exited in its last moment. Every task's end is in the journal, as the live run knew it."""
        now = self.clock.now()
        for e in self.observer.exits(self.tracks, now):
            self.publish(TaskExited(e.ended_at or now, e.task, e.how, e.killed, e.oom))

    def _end_leftovers(self) -> None:
        """The processes the attempt's tasks left behind (a setsid daemon, a child in the task's group that outlived
        it): ended, and said."""
        if self.reaper is None:
            return
        ended = self.reaper.end_leftovers()
        if ended:
            note = (f"{len(ended)} process(es) the job started outlived its tasks and were ended at its end: "
                    + ", ".join(ended[:8]) + (" ..." if len(ended) > 8 else ""))
            self._leftover_notes.append(note)
            self.say(note)

    def _between_attempts(self, decision: RestartDecision) -> bool:
        """The role's wait before a restart (the local run's: the backoff); False: no restart."""
        self._enter(Phase.BACKOFF)
        return self.role.between(decision, lambda: self.backoff(decision))

    def backoff(self, decision: RestartDecision) -> bool:
        """The backoff, then fresh ports if the old ones are still held; False when interrupted."""
        if not wait_backoff(decision.backoff_s, clock=self.clock.now, sleep=self.clock.sleep,
                            stopped=lambda: self.interrupted is not None):
            for e in self.restarts.stopped_in_backoff(self.interrupted):
                self.publish(e)
            self.publish(LedgerAmended(tuple(self.ledger)))
            return False
        self._fresh_ports_if_held()
        return True

    def _fresh_ports_if_held(self) -> None:
        cluster = self.cfg.cluster
        if not isinstance(cluster, LocalCluster):
            return
        held = [a for addrs in cluster.jobs.values() for a in addrs if not port_free(a)]
        if not held:
            return
        jobs = cluster.jobs
        self.cfg.cluster = build_local_cluster(len(jobs.get("worker", ())), len(jobs.get("ps", ())), "chief" in jobs)
        self.say(f"port(s) {', '.join(held)} are still held: the restart uses fresh ports")
