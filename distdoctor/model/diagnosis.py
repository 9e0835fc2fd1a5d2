"""The verdict on a whole job: :class:`Diagnosis`, with a :class:`TaskReport` per task and, for ``run``, its
attempts and goodput. ``run`` and ``diagnose`` write it as ``diagnosis.json``; :meth:`Diagnosis.from_json` reads
any such file back (those of earlier versions included), so every renderer and the exit-code policy take this
one object. Pure data."""
from __future__ import annotations

import signal as _signal
from dataclasses import dataclass, field
from typing import Any

from .attempts import Attempt, Goodput
from .finding import SCHEMA_VERSION, Finding, Status, _num, _str

__all__ = ["TaskReport", "Diagnosis", "SchemaError"]


class SchemaError(ValueError):
    """A document that is not a diagnosis (the message says which field, in one line)."""


@dataclass(frozen=True)
class TaskReport:
    """Per-task facts in a diagnosis."""

    exit_code: int | None = None  # the process's exit code; negative: killed by that signal
    signal: str | None = None  # the fatal signal's name (SIGKILL), when a signal ended it
    state: str = "unknown"  # its process state at the verdict (running, sleeping, stopped, disk-sleep, exited...)
    last_progress_at: float | None = None  # when it last made a training step (unix seconds)
    stack: str = ""  # its stack at the verdict (py-spy, and the in-process agent's view)
    steps: int | None = None  # training steps it completed
    pid: int | None = None  # its process id
    log: str | None = None  # its log file
    peak_rss_bytes: int | None = None  # its highest resident memory
    stopped_at_end: bool = False  # distdoctor stopped it because the job had finished (a server's normal end)
    step_calls: int | None = None  # calls entered of its step function (the agent's count; run only)
    step_calls_exact: bool = False  # that count was sent as the task's code ended: exact
    uncaught_at: float | None = None  # its code ended raising an uncaught exception then (the agent; run only)
    shm_used_bytes: int | None = None  # the most of its shared memory (/dev/shm) seen in use (run only)
    shm_size_bytes: int | None = None  # the size of that /dev/shm, as its mount namespace has it (run only)

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "signal": self.signal,
            "state": self.state,
            "last_progress_at": self.last_progress_at,
            "stack": self.stack,
            "steps": self.steps,
            "pid": self.pid,
            "log": self.log,
            "peak_rss_bytes": self.peak_rss_bytes,
            "stopped_at_end": self.stopped_at_end,
            "step_calls": self.step_calls,
            "step_calls_exact": self.step_calls_exact,
            "uncaught_at": self.uncaught_at,
            "shm_used_bytes": self.shm_used_bytes,
            "shm_size_bytes": self.shm_size_bytes,
        }

    @staticmethod
    def from_json(d: Any) -> "TaskReport":
        d = d if isinstance(d, dict) else {}

        def _int(k: str) -> int | None:
            v = d.get(k)
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        return TaskReport(exit_code=_int("exit_code"), signal=_str(d.get("signal")) or None,
                          state=_str(d.get("state")) or "unknown", last_progress_at=_num(d.get("last_progress_at")),
                          stack=_str(d.get("stack")) or "", steps=_int("steps"), pid=_int("pid"),
                          log=_str(d.get("log")) or None, peak_rss_bytes=_int("peak_rss_bytes"),
                          stopped_at_end=d.get("stopped_at_end") is True, step_calls=_int("step_calls"),
                          step_calls_exact=d.get("step_calls_exact") is True, uncaught_at=_num(d.get("uncaught_at")),
                          shm_used_bytes=_int("shm_used_bytes"), shm_size_bytes=_int("shm_size_bytes"))

    @property
    def ending(self) -> str:
        """How the task ended, in a few words: ``killed by SIGKILL``, ``exit 1``, ``stopped at the job's end`` (a
        server task distdoctor stopped once the job had finished: its signal is the normal end), or its state."""
        if self.stopped_at_end:
            return "stopped at the job's end"
        if self.signal:
            return f"killed by {self.signal}"
        if self.exit_code is not None:
            return f"exit {self.exit_code}"
        return self.state


@dataclass(frozen=True)
class Diagnosis:
    """The verdict: the job's status, the root cause (the finding the root-cause policy picked), every finding,
    per-task facts, and -- for ``run`` -- each attempt, the goodput and the ParameterServerStrategy workers
    restarted alone (``task_restarts``, the supervisor's records as written)."""

    status: Status  # how the job ended
    root_cause: Finding | None  # the finding the root-cause policy picked; null when nothing failed
    findings: tuple[Finding, ...]  # every finding, the root cause included
    detected_at: float  # when distdoctor reached its verdict (unix seconds)
    tasks: dict[str, TaskReport] = field(default_factory=dict)  # per task (``worker:0``), its facts
    command: str = "run"  # the command that wrote it: run or diagnose
    notes: tuple[str, ...] = ()  # what a person should know about how it was reached
    attempts: tuple[Attempt, ...] = ()  # ``run``: one record per attempt (written when there is one)
    goodput: Goodput | None = None  # ``run``: the job's goodput (with ``attempts``)
    task_restarts: tuple[dict, ...] = ()  # ``run --restarts`` under ParameterServerStrategy: workers restarted alone
    interrupted: str | None = None  # ``run``: the signal distdoctor itself received that ended the run (SIGINT...)

    def to_json(self) -> dict[str, Any]:
        rc = None
        if self.root_cause is not None:
            rc = self.root_cause.to_json()
        out = {
            "schema_version": SCHEMA_VERSION,
            "command": self.command,
            "status": self.status.value,
            "root_cause": rc,
            "findings": [f.to_json() for f in self.findings],
            "detected_at": self.detected_at,
            "tasks": {k: v.to_json() for k, v in self.tasks.items()},
            "notes": list(self.notes),
        }
        if self.attempts:
            out["attempts"] = [a.to_json() for a in self.attempts]
            out["goodput"] = self.goodput.to_json() if self.goodput is not None else None
        if self.task_restarts:
            out["task_restarts"] = [dict(r) for r in self.task_restarts]
        if self.interrupted:
            out["interrupted"] = self.interrupted
        return out

    @staticmethod
    def from_json(d: Any) -> "Diagnosis":
        """The diagnosis a ``diagnosis.json`` document holds; :class:`SchemaError` (one line) when it is none.

        Tolerant of what earlier versions wrote: evidence as rendered lines only, no attempts, missing fields.
        """
        if not isinstance(d, dict):
            raise SchemaError(f"expected a JSON object with a 'status', found {type(d).__name__}")
        status = d.get("status")
        if status not in {s.value for s in Status}:
            raise SchemaError(f"'status' is {status!r}, expected one of {', '.join(s.value for s in Status)}")
        for key, kind in (("tasks", dict), ("findings", list), ("attempts", list), ("notes", list)):
            if key in d and d[key] is not None and not isinstance(d[key], kind):
                raise SchemaError(f"'{key}' should be a JSON {'object' if kind is dict else 'array'}")
        rc = d.get("root_cause")
        if rc is not None and not isinstance(rc, dict):
            raise SchemaError("'root_cause' should be an object or null")
        detected = _num(d.get("detected_at"))
        attempts = []
        for a in d.get("attempts") or ():
            try:
                attempts.append(Attempt.from_json(a))
            except (KeyError, TypeError, ValueError, IndexError):
                continue     # a record cut short: the others still tell the story
        goodput = d.get("goodput")
        return Diagnosis(
            status=Status(status), root_cause=Finding.from_json(rc, detected) if rc else None,
            findings=tuple(Finding.from_json(f, detected) for f in d.get("findings") or () if isinstance(f, dict)),
            detected_at=detected if detected is not None else 0.0,
            tasks={str(k): TaskReport.from_json(v) for k, v in (d.get("tasks") or {}).items()},
            command=_str(d.get("command")) or "run", notes=tuple(str(n) for n in d.get("notes") or ()),
            attempts=tuple(attempts), goodput=Goodput.from_json(goodput) if isinstance(goodput, dict) else None,
            task_restarts=tuple(r for r in d.get("task_restarts") or () if isinstance(r, dict)),
            interrupted=_str(d.get("interrupted")) or None)

    @property
    def exit_code(self) -> int:
        """0 succeeded, 1 failed, 3 hung; a run distdoctor was stopped in: 128 + the signal, as a shell says it
        (130 after Ctrl-C)."""
        if self.interrupted:
            try:
                return 128 + _signal.Signals[self.interrupted].value
            except KeyError:
                return 1
        return {Status.SUCCEEDED: 0, Status.UNKNOWN: 0, Status.FAILED: 1, Status.HUNG: 3}.get(self.status, 1)

    @property
    def culprits(self) -> tuple[str, ...]:
        """The root cause's culprit, or its candidates when it could not be decided; () without a root cause."""
        return self.root_cause.culprits if self.root_cause is not None else ()

    def others(self) -> tuple[Finding, ...]:
        """Every finding but the root cause itself."""
        rc = self.root_cause
        return tuple(f for f in self.findings
                     if rc is None or (f.code, f.culprit, f.summary) != (rc.code, rc.culprit, rc.summary))

    @property
    def finished_line(self) -> str:
        """A succeeded job's headline: every task finished normally, or -- where distdoctor stopped the server tasks
        once the job was done (ParameterServerStrategy) -- which tasks ran to their end and which were stopped."""
        n = len(self.tasks)
        at_end = [k for k, r in self.tasks.items() if r.stopped_at_end]
        if not at_end:
            return f"All {n} tasks finished normally." if n != 1 else "The task finished normally."
        ran = [k for k in self.tasks if k not in at_end]
        return (f"The job finished: {', '.join(ran) or 'no task'} ran to the end; {', '.join(at_end)} "
                f"{'was' if len(at_end) == 1 else 'were'} stopped at the job's end (the normal end of a server).")

    def restarted(self) -> tuple[Attempt, ...]:
        """The attempts worth showing a person: all of them when there was more than one or a restart was
        decided; none for a run of one attempt that needed no decision."""
        if len(self.attempts) > 1 or any(a.decision.value == "restart" for a in self.attempts):
            return self.attempts
        return ()
