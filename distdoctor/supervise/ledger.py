"""The attempt ledger of ``distdoctor run --restarts``: one record per attempt, kept in ``diagnosis.json``.

Each record says when the attempt ran, the finding that ended it, the restart decision
and its reason, the backoff, where the attempt resumed from and how far it trained. The
ledger is read back from the bundle, so a supervisor started again with the same
``--out`` continues the restart budget. Records do no I/O; :func:`load_ledger` is the
only reader.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..model import Category, Finding, Severity
from .policy import Action, AttemptOutcome, Position

__all__ = ["ResumePoint", "AttemptRecord", "load_ledger", "finding_from_json"]


@dataclass(frozen=True)
class ResumePoint:
    """Where an attempt started: the 0-based index of its first epoch (Keras prints it as
    ``Epoch N+1/M``), the step, and the checkpoint it restored; None where unknown."""

    epoch: int | None = None
    step: int | None = None
    checkpoint: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "step": self.step, "checkpoint": self.checkpoint}


@dataclass(frozen=True)
class AttemptRecord:
    number: int
    started_at: float
    ended_at: float
    status: str
    root_cause: Finding | None
    decision: Action
    reason: str
    backoff_s: float = 0.0
    resumed_from: ResumePoint = ResumePoint()
    reached: Position = Position()
    steps: int | None = None                 # steps this attempt ran
    exit_code: int | None = None             # the culprit's
    first_step_at: float | None = None
    failed_at: float | None = None           # when the failure that ended it began
    checkpoints: tuple[str, ...] = ()        # directories the job checkpoints to
    epoch_starts: tuple[tuple[int, float, int], ...] = field(default=())  # (0-based epoch, ts, steps before)
    restart_class: str | None = None
    root_json: dict | None = None            # the finding as diagnosis.json showed it (evidence included)
    saved_step: int | None = None            # the step a preemption save recorded (PreemptionCheckpointHandler)

    def outcome(self) -> AttemptOutcome:
        return AttemptOutcome(self.number, self.root_cause, self.decision, self.reached, self.exit_code)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "status": self.status,
            "root_cause": self.root_json if self.root_json is not None else
            (self.root_cause.to_json() if self.root_cause else None),
            "decision": self.decision.value,
            "reason": self.reason,
            "backoff_s": self.backoff_s,
            "resumed_from": self.resumed_from.to_json(),
            "restart_class": self.restart_class,
            "reached": {"epoch": self.reached.epoch, "step": self.reached.step},
            "steps": self.steps,
            "exit_code": self.exit_code,
            "first_step_at": self.first_step_at,
            "failed_at": self.failed_at,
            "checkpoints": list(self.checkpoints),
            "epoch_starts": [list(e) for e in self.epoch_starts],
            "saved_step": self.saved_step,
        }

    @staticmethod
    def from_json(d: dict) -> "AttemptRecord":
        rf = d.get("resumed_from") or {}
        reached = d.get("reached") or {}
        root = d.get("root_cause")
        return AttemptRecord(
            number=int(d["number"]), started_at=float(d["started_at"]), ended_at=float(d["ended_at"]),
            status=str(d.get("status") or "failed"), root_cause=finding_from_json(root) if root else None,
            decision=Action(d["decision"]), reason=str(d.get("reason") or ""), backoff_s=float(d.get("backoff_s") or 0),
            resumed_from=ResumePoint(rf.get("epoch"), rf.get("step"), rf.get("checkpoint")),
            reached=Position(reached.get("epoch"), reached.get("step")), steps=d.get("steps"),
            exit_code=d.get("exit_code"), first_step_at=d.get("first_step_at"), failed_at=d.get("failed_at"),
            checkpoints=tuple(d.get("checkpoints") or ()),
            epoch_starts=tuple(tuple(e) for e in d.get("epoch_starts") or ()),
            restart_class=d.get("restart_class"), root_json=root, saved_step=d.get("saved_step"))


def finding_from_json(d: dict) -> Finding:
    """The parts of a finding the restart policy compares (evidence stays as text in ``root_json``)."""
    try:
        category = Category(d.get("category"))
    except ValueError:
        category = Category.OTHER
    try:
        severity = Severity(d.get("severity", "error"))
    except ValueError:
        severity = Severity.ERROR
    return Finding(code=str(d.get("code") or ""), category=category, severity=severity, culprit=d.get("culprit"),
                   summary=str(d.get("summary") or ""), remedy=str(d.get("remedy") or ""), at=d.get("at"))


def load_ledger(out_dir: str) -> list[AttemptRecord]:
    """The attempts an earlier supervisor recorded in ``out_dir/diagnosis.json`` (none if unreadable)."""
    try:
        with open(os.path.join(out_dir, "diagnosis.json")) as fh:
            data = json.load(fh)
        return [AttemptRecord.from_json(a) for a in data.get("attempts") or ()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []
