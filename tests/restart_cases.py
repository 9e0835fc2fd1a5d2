"""The labelled restart-decision table (tests/data/restart_decisions.json) turned into policy inputs.

Shared by tests/test_restart_policy.py and benchmarks/bench_restart_policy.py.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from distdoctor.model import Category, Finding, Severity
from distdoctor.supervise.policy import (Action, AttemptOutcome, Position, RestartDecision, RestartPolicy,
                                         decide_restart)

TABLE = Path(__file__).resolve().parent / "data" / "restart_decisions.json"


@dataclass(frozen=True)
class Case:
    id: str
    expect: Action
    decision: RestartDecision
    note: str = ""


def _finding(row) -> Finding | None:
    if row is None:
        return None
    code, cat, culprit, summary = row
    return Finding(code=code, category=Category(cat), severity=Severity.ERROR, culprit=culprit, summary=summary)


def _pos(pair) -> Position:
    return Position(epoch=pair[0], step=pair[1])


def load_cases(path: Path = TABLE) -> list[Case]:
    out = []
    for c in json.loads(path.read_text())["cases"]:
        history = [AttemptOutcome(number=i + 1, root_cause=_finding(h["root"]), decision=Action(h["decision"]),
                                  reached=_pos(h["reached"])) for i, h in enumerate(c.get("history", []))]
        policy = RestartPolicy(max_restarts=c.get("max_restarts", 3), delay_s=10, delay_max_s=360)
        d = decide_restart(_finding(c["root"]), history, policy, random.Random(0), succeeded=c.get("succeeded", False),
                           reached=_pos(c["reached"]), exit_code=c.get("exit_code"), interrupted=c.get("interrupted"))
        out.append(Case(c["id"], Action(c["expect"]), d, c.get("note", "")))
    return out
