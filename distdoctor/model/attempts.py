"""The attempts of a restarted run and its goodput, as ``diagnosis.json`` carries them.

``run --restarts`` records one :class:`Attempt` per attempt (the ledger, :mod:`distdoctor.supervise.ledger`),
decided by the restart policy (:mod:`distdoctor.supervise.policy`, whose vocabulary -- :class:`Action`,
:class:`Position`, :class:`AttemptOutcome` -- lives here so that the diagnosis can carry it), and measures the
job's :class:`Goodput` (:mod:`distdoctor.supervise.goodput`). Pure data with its JSON form both ways.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .finding import Finding, Status, _num, _str

__all__ = ["Action", "Position", "AttemptOutcome", "ResumePoint", "Attempt", "AttemptGoodput", "Badput", "Goodput"]


class Action(str, enum.Enum):
    """The restart policy's decision at the end of an attempt."""

    RESTART = "restart"
    STOP = "stop"
    NONE = "none"      # the attempt succeeded: nothing to decide


def _int(v: Any) -> int | None:
    f = _num(v)
    return None if f is None else int(f)


@dataclass(frozen=True)
class Position:
    """Where training was: the 0-based epoch index and the steps done (in that epoch when known)."""

    epoch: int | None = None  # 0-based epoch index
    step: int | None = None  # steps done (in that epoch when known)

    def key(self) -> tuple[int, int]:
        return (-1 if self.epoch is None else self.epoch, self.step or 0)

    def describe(self) -> str:
        if self.epoch is not None:
            return f"epoch {self.epoch + 1}" + (f", step {self.step}" if self.step else "")
        return f"step {self.step}" if self.step is not None else "an unknown step"

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "step": self.step}

    @staticmethod
    def from_json(d: Any) -> "Position":
        d = d if isinstance(d, dict) else {}
        return Position(_int(d.get("epoch")), _int(d.get("step")))


@dataclass(frozen=True)
class AttemptOutcome:
    """How one attempt ended, as the restart policy needs it (the :class:`Attempt` keeps more)."""

    number: int
    root_cause: Finding | None
    decision: Action = Action.NONE
    reached: Position = Position()      # the furthest point the attempt trained to
    exit_code: int | None = None        # the culprit's exit code (negative: the signal)


@dataclass(frozen=True)
class ResumePoint:
    """Where an attempt started: the 0-based index of its first epoch (Keras prints it as
    ``Epoch N+1/M``), the step, and the checkpoint it restored; None where unknown."""

    epoch: int | None = None  # 0-based index of its first epoch (Keras prints it as ``Epoch N+1/M``)
    step: int | None = None  # the step it resumed at
    checkpoint: str | None = None  # the checkpoint it restored

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "step": self.step, "checkpoint": self.checkpoint}

    @staticmethod
    def from_json(d: Any) -> "ResumePoint":
        d = d if isinstance(d, dict) else {}
        return ResumePoint(_int(d.get("epoch")), _int(d.get("step")), _str(d.get("checkpoint")))

    def describe(self) -> str:
        """``epoch 3 from /ckpt``, ``epoch 2, no checkpoint``, ``epoch 1 (fresh start)``."""
        where = f"epoch {self.epoch + 1}" if self.epoch is not None else "?"
        if self.checkpoint:
            path = self.checkpoint
            return f"{where} from {path if len(path) <= 40 else '...' + path[-37:]}"
        return f"{where}, no checkpoint" if self.epoch is not None and self.epoch > 0 else f"{where} (fresh start)"


@dataclass(frozen=True)
class Attempt:
    """One attempt of a run: when it ran, the finding that ended it, the restart decision and its reason, the
    backoff, where it resumed from and how far it trained."""

    number: int  # 1, 2, ...
    started_at: float  # when its tasks were launched (unix seconds)
    ended_at: float  # when its last task ended
    status: Status  # how it ended
    root_cause: Finding | None  # the finding that ended it (null: it succeeded)
    decision: Action  # restart, stop, or none (it succeeded)
    reason: str  # why, in words
    backoff_s: float = 0.0  # the wait before the next attempt
    resumed_from: ResumePoint = ResumePoint()  # where it started: epoch, step, restored checkpoint
    reached: Position = Position()  # the furthest point it trained to
    steps: int | None = None                 # steps this attempt ran
    exit_code: int | None = None             # the culprit's
    first_step_at: float | None = None  # its first training step
    failed_at: float | None = None           # when the failure that ended it began
    checkpoints: tuple[str, ...] = ()        # directories the job checkpoints to
    epoch_starts: tuple[tuple[int, float, int], ...] = field(default=())  # (0-based epoch, ts, steps before)
    restart_class: str | None = None         # supervise.policy.RestartClass' value: transient / deterministic
    saved_step: int | None = None            # the step a preemption save recorded (PreemptionCheckpointHandler)

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))
        if not isinstance(self.decision, Action):
            object.__setattr__(self, "decision", Action(self.decision))

    def outcome(self) -> AttemptOutcome:
        return AttemptOutcome(self.number, self.root_cause, self.decision, self.reached, self.exit_code)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "status": self.status.value,
            "root_cause": self.root_cause.to_json() if self.root_cause else None,
            "decision": self.decision.value,
            "reason": self.reason,
            "backoff_s": self.backoff_s,
            "resumed_from": self.resumed_from.to_json(),
            "restart_class": self.restart_class,
            "reached": self.reached.to_json(),
            "steps": self.steps,
            "exit_code": self.exit_code,
            "first_step_at": self.first_step_at,
            "failed_at": self.failed_at,
            "checkpoints": list(self.checkpoints),
            "epoch_starts": [list(e) for e in self.epoch_starts],
            "saved_step": self.saved_step,
        }

    @staticmethod
    def from_json(d: dict) -> "Attempt":
        """Raises KeyError, TypeError or ValueError for a record without its number, times or decision."""
        root = d.get("root_cause")
        status = d.get("status")
        return Attempt(
            number=int(d["number"]), started_at=float(d["started_at"]), ended_at=float(d["ended_at"]),
            status=Status(status) if status in {s.value for s in Status} else Status.FAILED,
            root_cause=Finding.from_json(root) if isinstance(root, dict) else None,
            decision=Action(d["decision"]), reason=str(d.get("reason") or ""), backoff_s=_num(d.get("backoff_s")) or 0.0,
            resumed_from=ResumePoint.from_json(d.get("resumed_from")), reached=Position.from_json(d.get("reached")),
            steps=_int(d.get("steps")), exit_code=_int(d.get("exit_code")), first_step_at=_num(d.get("first_step_at")),
            failed_at=_num(d.get("failed_at")), checkpoints=tuple(str(c) for c in d.get("checkpoints") or ()),
            epoch_starts=tuple((int(e[0]), float(e[1]), int(e[2])) for e in d.get("epoch_starts") or ()),
            restart_class=_str(d.get("restart_class")), saved_step=_int(d.get("saved_step")))


@dataclass(frozen=True)
class AttemptGoodput:
    """One attempt's share of the job's time (seconds)."""

    number: int  # the attempt
    program_startup_s: float | None   # start -> first step
    productive_s: float               # trained and kept
    wasted_progress_s: float          # trained, then recomputed by the next attempt
    recomputed_steps: int | None  # steps done again (null: unknown)
    disruption_s: float               # failure -> attempt ended
    backoff_s: float  # the wait after it, before a restart
    failure_to_next_step_s: float | None  # this attempt's failure -> the next attempt's first step

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items()}

    @staticmethod
    def from_json(d: dict) -> "AttemptGoodput":
        return AttemptGoodput(int(d["number"]), _num(d.get("program_startup_s")), _num(d.get("productive_s")) or 0.0,
                              _num(d.get("wasted_progress_s")) or 0.0, _int(d.get("recomputed_steps")),
                              _num(d.get("disruption_s")) or 0.0, _num(d.get("backoff_s")) or 0.0,
                              _num(d.get("failure_to_next_step_s")))


@dataclass(frozen=True)
class Badput:
    """The job's time that did not train the model, by cause (seconds)."""

    program_startup_s: float = 0.0  # attempts' start to their first step
    wasted_progress_s: float = 0.0  # training done again after a restart
    disruption_s: float = 0.0  # failure to the end of its attempt: detection, grace, the stop
    backoff_s: float = 0.0  # the waits between attempts

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def parts(self) -> tuple[tuple[str, float], ...]:
        """(``program startup``, seconds), ... in the order of the fields."""
        return tuple((k.removesuffix("_s").replace("_", " "), v) for k, v in self.__dict__.items())


@dataclass(frozen=True)
class Goodput:
    """Productive training time over the job's wall-clock time (Google's ML Goodput vocabulary)."""

    wall_s: float  # the job's wall-clock time, first start to last end
    productive_s: float  # time that trained the model and was kept
    ratio: float | None  # productive over wall time
    badput: Badput = Badput()  # the rest, by cause
    attempts: tuple[AttemptGoodput, ...] = ()  # each attempt's share

    def to_json(self) -> dict[str, Any]:
        return {"wall_s": self.wall_s, "productive_s": self.productive_s, "ratio": self.ratio,
                "badput": self.badput.to_json(), "attempts": [a.to_json() for a in self.attempts]}

    @staticmethod
    def from_json(d: dict) -> "Goodput":
        b = d.get("badput") if isinstance(d.get("badput"), dict) else {}
        return Goodput(wall_s=_num(d.get("wall_s")) or 0.0, productive_s=_num(d.get("productive_s")) or 0.0,
                       ratio=_num(d.get("ratio")),
                       badput=Badput(*(_num(b.get(k)) or 0.0 for k in ("program_startup_s", "wasted_progress_s",
                                                                        "disruption_s", "backoff_s"))),
                       attempts=tuple(AttemptGoodput.from_json(a) for a in d.get("attempts") or ()
                                      if isinstance(a, dict) and "number" in a))

    def line(self) -> str:
        """``goodput 62%: 30.0 s of productive training in 48.4 s``."""
        ratio = f"{self.ratio:.0%}" if self.ratio is not None else "?"
        return f"goodput {ratio}: {self.productive_s:.1f} s of productive training in {self.wall_s:.1f} s"
