"""``run --restarts``: the run's ledger of attempts and its restart decisions.

After each attempt one decision of the pure policy (:func:`.policy.decide_restart`): restart the whole job (a
MultiWorkerMirrored job cannot replace one task) after a jittered exponential backoff, or stop; each attempt is
a record of the ledger (:mod:`.ledger`) in ``diagnosis.json``. In a ParameterServerStrategy job a failed worker
is judged alone (its own findings) and restarted alone while the job goes on. What is decided goes on the
event stream (said, and alerted as ``restart`` or ``gave_up``).
"""
from __future__ import annotations

import os
import re
import socket
from dataclasses import replace

from ..diagnose.events import EventKind
from ..model import Diagnosis
from .goodput import job_goodput
from .ledger import AttemptRecord, ResumePoint
from .policy import (Action, Position, RestartClass, RestartDecision, RestartPolicy, backoff_s, classify,
                     decide_restart)
from .runevents import Alert, RunEvent, Said
from .tracking import TaskTrack

__all__ = ["Restarts", "port_free"]

_SAVED_RUN = re.compile(r"PreemptionCheckpointHandler saved a checkpoint .*\(run (\d+)\)")


def _decision_alert(event: str, root, attempt: int, backoff: float, reason: str, **extra) -> Alert:
    """A restart decision (``restart``) or the end of the budget (``gave_up``) as an alert event."""
    return Alert(event, dict(category=root.category.value if root else None, code=root.code if root else None,
                             culprit=root.culprit if root else None, summary=reason, attempt=attempt,
                             backoff_s=round(backoff, 3), **extra))


def _non_empty(path: str) -> bool:
    try:
        return any(True for _ in os.scandir(path))
    except OSError:
        return False


def port_free(address: str) -> bool:
    """Whether a restarted task could bind ``host:port`` (gRPC binds with SO_REUSEADDR: only a listener blocks it)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1" if host in ("localhost", "") else host, int(port)))
        return True
    except (OSError, ValueError):
        return False


def _lead(tracks: dict[str, TaskTrack], culprit: str | None) -> list[TaskTrack]:
    """The culprit first (where the failure happened), then the others in cluster order."""
    return sorted(tracks.values(), key=lambda t: t.task != culprit)


def _position(tracks, culprit: str | None) -> tuple[Position, int | None]:
    """How far the attempt trained: the culprit's position when there is one, else the furthest task's."""
    best, steps = Position(), None
    for t in _lead(tracks, culprit):
        p = Position(*t.position())
        if t.task == culprit and (p.epoch is not None or p.step is not None):
            return p, t.steps()
        if p.key() > best.key():
            best, steps = p, t.steps()
    return best, steps


def _saved_step(tracks) -> int | None:
    """The step a preemption save recorded (the agent's line after PreemptionCheckpointHandler saved)."""
    for t in tracks.values():
        for e in t.events:
            m = _SAVED_RUN.search(e.text) if e.kind == EventKind.PREEMPTION else None
            if m:
                return int(m.group(1))
    return None


class Restarts:
    """The run's restart budget, its ledger of attempts, and the ParameterServerStrategy workers restarted alone."""

    def __init__(self, cfg, rng, ledger: list[AttemptRecord]) -> None:
        self.cfg, self.rng = cfg, rng
        self.ledger = ledger
        self.task_restarts: list[dict] = []       # PSS workers restarted alone (all attempts of this run)
        self.relaunch_at: dict[str, float] = {}
        self.notes: list[str] = []
        self._ckpt_at_start: dict[str, bool] = {}
        self._ckpt_warned = False

    def begin_attempt(self) -> None:
        self.relaunch_at = {}
        self._ckpt_at_start = {d: _non_empty(d) for r in self.ledger for d in r.checkpoints}

    def used(self) -> int:
        return sum(1 for r in self.ledger if r.decision == Action.RESTART) + \
            sum(1 for r in self.task_restarts if r["decision"] == "restart")

    # -- the whole job ----------------------------------------------------------------------------
    def _resume_point(self, tracks, culprit: str | None) -> tuple[ResumePoint, tuple[str, ...], tuple]:
        marks, dirs = (), []
        for t in _lead(tracks, culprit):
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

    def judge(self, diag: Diagnosis, tracks: dict[str, TaskTrack], *, started_at: float, now: float,
              detected_at: float | None, interrupted: str | None, hung: bool,
              veto=None) -> tuple[RestartDecision, list[RunEvent]]:
        """Ask the policy, record the attempt in the ledger, say why."""
        number = len(self.ledger) + 1
        root = diag.root_cause
        culprit_name = root.culprit if root is not None else None
        reached, steps = _position(tracks, culprit_name)
        culprit = diag.tasks.get(root.culprit) if root is not None and root.culprit else None
        exit_code = culprit.exit_code if culprit is not None else None
        alone = sum(1 for r in self.task_restarts if r["decision"] == "restart")
        policy = RestartPolicy(max_restarts=max(0, self.cfg.restarts - alone), delay_s=self.cfg.restart_delay,
                               delay_max_s=self.cfg.restart_delay_max)
        decision = decide_restart(root, [r.outcome() for r in self.ledger], policy, self.rng,
                                  succeeded=diag.status.value == "succeeded", reached=reached, exit_code=exit_code,
                                  interrupted=interrupted)
        if hung and self.cfg.on_hang == "wait" and decision.action == Action.RESTART:
            decision = RestartDecision(Action.STOP, "--on-hang wait kept the hung job for debugging; not restarting it",
                                       restart_class=decision.restart_class)
        why_not = veto(root) if veto is not None and decision.action == Action.RESTART else None
        if why_not:
            decision = RestartDecision(Action.STOP, why_not, restart_class=decision.restart_class)
        resumed, dirs, marks = self._resume_point(tracks, culprit_name)
        firsts = [t.first_step_at for t in tracks.values() if t.first_step_at is not None]
        ended = max((t.proc.ended_at or 0 for t in tracks.values()), default=0) or now
        failed_at = root.at if root is not None and root.at is not None else (detected_at if root else None)
        self.ledger.append(AttemptRecord(
            number=number, started_at=started_at, ended_at=ended, status=diag.status.value,
            root_cause=root, decision=decision.action, reason=decision.reason, backoff_s=decision.backoff_s,
            resumed_from=resumed, reached=reached, steps=steps, exit_code=exit_code,
            first_step_at=min(firsts) if firsts else None, failed_at=failed_at, checkpoints=dirs,
            epoch_starts=marks[-1000:], restart_class=decision.restart_class.value if decision.restart_class else None,
            saved_step=_saved_step(tracks)))
        out: list[RunEvent] = []
        if decision.action == Action.RESTART and not dirs and (steps or reached.epoch):
            out += self._warn_no_checkpoint(reached)
        if decision.action == Action.RESTART:
            out += [Said(f"attempt {number} ended ({diag.status.value}); restarting every task in "
                         f"{decision.backoff_s:.1f} s: {decision.reason}"),
                    _decision_alert("restart", root, number, decision.backoff_s, decision.reason)]
        elif decision.action == Action.STOP and (self.cfg.restarts > 0 or len(self.ledger) > 1):
            out += [Said(f"attempt {number} ended ({diag.status.value}); not restarting: {decision.reason}"),
                    _decision_alert("gave_up", root, number, 0.0, decision.reason)]
        return decision, out

    def _warn_no_checkpoint(self, reached: Position) -> list[RunEvent]:
        if self._ckpt_warned:
            return []
        self._ckpt_warned = True
        text = (f"the job writes no checkpoint (no BackupAndRestore, CheckpointManager or PreemptionCheckpointHandler "
                f"was seen): the restart starts from the beginning and trains again up to {reached.describe()}. "
                "Fix: model.fit(..., callbacks=[tf.keras.callbacks.BackupAndRestore(backup_dir=\"/shared/backup\")])")
        self.notes.append(text)
        return [Said("warning: " + text)]

    def annotate(self, diag: Diagnosis) -> Diagnosis:
        """``diag`` with this run's notes, every attempt so far, the goodput and the PSS task restarts."""
        notes = tuple(diag.notes) + tuple(n for n in self.notes if n not in diag.notes)
        return replace(diag, notes=notes, attempts=tuple(self.ledger), goodput=job_goodput(self.ledger),
                       task_restarts=tuple(self.task_restarts))

    def stopped_in_backoff(self, interrupted: str) -> list[RunEvent]:
        """A signal during the backoff: the last decision becomes a stop."""
        self.ledger[-1] = replace(self.ledger[-1], decision=Action.STOP,
                                  reason=f"distdoctor received {interrupted} during the backoff; "
                                         "run it again with the same --out to continue the restart budget")
        return [Said(f"received {interrupted} during the backoff: not restarting")]

    # -- a ParameterServerStrategy worker alone ---------------------------------------------------
    def judge_task(self, task: str, findings: list, now: float) -> list[RunEvent]:
        """Judge a lost PSS worker alone (its own findings) and schedule its relaunch if a restart can fix it."""
        from ..diagnose.engine import pick_root_cause
        findings = [f for f in findings if f.culprit == task]
        root = pick_root_cause(findings) or (findings[0] if findings else None)
        record = {"task": task, "at": now, "root_cause": root.to_json() if root else None,
                  "attempt": len(self.ledger) + 1, "backoff_s": 0.0}
        used = self.used()
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
                                                         self.cfg.restart_delay_max), self.rng)
                record.update(decision="restart", reason=f"{why} (restart {used + 1} of {self.cfg.restarts})", backoff_s=wait)
                self.relaunch_at[task] = now + wait
        self.task_restarts.append(record)
        if record["decision"] != "restart":
            return [Said(f"not restarting {task}: {record['reason']}")]
        return [Said(f"restarting {task} alone in {record['backoff_s']:.1f} s: {record['reason']}"),
                _decision_alert("restart", root, record["attempt"], record["backoff_s"], record["reason"], task=task)]

    def due(self, now: float) -> list[tuple[str, int, str]]:
        """The workers whose relaunch is due: (task, how many times restarted, why)."""
        out = []
        for task, when in list(self.relaunch_at.items()):
            if now < when:
                continue
            del self.relaunch_at[task]
            n = sum(1 for r in self.task_restarts if r["task"] == task and r["decision"] == "restart")
            last = next(r for r in reversed(self.task_restarts) if r["task"] == task)
            out.append((task, n, (last.get("root_cause") or {}).get("summary") or "it failed"))
        return out
