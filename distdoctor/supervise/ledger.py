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

from ..model import Attempt, ResumePoint

__all__ = ["ResumePoint", "AttemptRecord", "load_ledger"]


AttemptRecord = Attempt            # the ledger's record is the model's Attempt (one class, carried by the Diagnosis)


def load_ledger(out_dir: str) -> list[AttemptRecord]:
    """The attempts an earlier supervisor recorded in ``out_dir/diagnosis.json`` (none if unreadable)."""
    try:
        with open(os.path.join(out_dir, "diagnosis.json")) as fh:
            data = json.load(fh)
        return [AttemptRecord.from_json(a) for a in data.get("attempts") or ()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []
