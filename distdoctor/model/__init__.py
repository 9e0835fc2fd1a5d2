"""The one result schema shared by every command: findings, diagnoses, and the attempts of a restarted run.

A :class:`Finding` is what one rule of the catalogue concluded (:mod:`.finding`); a :class:`Diagnosis` is the
verdict on a whole job (:mod:`.diagnosis`): its status, the root cause (itself a finding, the one the root-cause
policy picked), every other finding, per-task facts and, for ``run``, its :class:`Attempt` records and
:class:`Goodput` (:mod:`.attempts`). ``run``, ``diagnose`` and ``check`` all emit this shape; every class writes
its JSON and reads it back, and ``docs/schema.md`` is generated from these classes (:mod:`.schemadoc`).

Data objects here do no I/O and read no clock.
"""
from __future__ import annotations

from .attempts import Action, Attempt, AttemptGoodput, AttemptOutcome, Badput, Goodput, Position, ResumePoint
from .diagnosis import Diagnosis, SchemaError, TaskReport
from .finding import (CATEGORY_DOCS, RUN_ONLY_CATEGORIES, SCHEMA_VERSION, Alternative, Category, Evidence, Finding,
                      JobEvent, Severity, Status, Weighed, format_clock, format_iso)

__all__ = [
    "Category", "CATEGORY_DOCS", "RUN_ONLY_CATEGORIES", "Severity", "Status", "Evidence", "Finding", "Alternative", "JobEvent",
    "TaskReport", "Diagnosis", "SchemaError", "Action", "Position", "AttemptOutcome", "ResumePoint", "Attempt",
    "AttemptGoodput", "Badput", "Goodput", "format_clock", "format_iso", "SCHEMA_VERSION", "Weighed",
]
