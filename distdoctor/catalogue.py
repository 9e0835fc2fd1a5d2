"""The one catalogue of diagnosis rules, shared by ``run``, ``diagnose`` and ``check``.

A rule is a small unit with a stable code (``DDnnn`` or ``DDnnnn``), a title, a category
slug, a doc (what it detects, why it matters, what evidence it uses, the
remedy) and a lifecycle. Codes are retired, never reused.

Code ranges: DD1xx task failures, DD2xx hangs and performance, DD3xx cluster
configuration (``check --static``), DD4xx host and environment, DD5xx network
and mesh, DD600-DD999 and DD1000-DD1999 log signatures (diagnose/logs/kb).

Rule *checks* live next to what they read (``diagnose.rules`` for recorded
job observations, ``preflight.*`` for configs and hosts); they all register
their metadata here, so ``docs/rules.md`` and ``distdoctor rules`` come from
this one table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .model import Category, Evidence, Finding, Severity

__all__ = ["Rule", "register", "RULES", "get", "codes_with_role", "priority",
           "code_key", "CODE_FORMAT"]

# a rule's code: DD and three or four digits (the log signatures took every three-digit code of DD600-DD999)
CODE_FORMAT = r"DD\d{3,4}"


def code_key(code: str) -> tuple[int, str]:
    """Catalogue order of codes: by number (DD999 before DD1000), not as strings."""
    digits = code[2:]
    return (int(digits), code) if digits.isdigit() else (1 << 30, code)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    category: Category
    title: str
    detects: str
    why: str
    evidence: str
    remedy: str
    lifecycle: str = "stable"  # stable, preview, deprecated, removed
    # The root-cause policy's view of the rule (diagnose/engine.py): ``rank`` orders findings of the same moment
    # (lower = more direct evidence; None = ranked after every ranked rule); ``role`` is ``cause``, ``own_failure``
    # (a failure of the task itself, which explains a hang it is the culprit of) or ``hang``.
    rank: int | None = None
    role: str = "cause"

    def finding(self, *, culprit: str | None, summary: str, evidence: Iterable[Evidence] = (),
                severity: Severity = Severity.ERROR, at: float | None = None,
                remedy: str | None = None, category: Category | None = None,
                candidates: Iterable[str] = ()) -> Finding:
        return Finding(code=self.code, category=category or self.category, severity=severity,
                       culprit=culprit, summary=summary, evidence=tuple(evidence),
                       remedy=remedy if remedy is not None else self.remedy, at=at,
                       candidates=tuple(candidates))


RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    """Add a rule to the catalogue; a code may be registered only once."""
    if rule.code in RULES and RULES[rule.code] != rule:
        raise ValueError(f"rule code {rule.code} registered twice")
    RULES[rule.code] = rule
    return rule


def get(code: str) -> Rule:
    return RULES[code]


def priority() -> list[str]:
    """Codes of the ranked rules, most direct evidence first (the engine's tie-break between same-moment findings)."""
    ranked = (r for r in RULES.values() if r.rank is not None)
    return [r.code for r in sorted(ranked, key=lambda r: (r.rank, code_key(r.code)))]


def codes_with_role(role: str) -> frozenset[str]:
    return frozenset(r.code for r in RULES.values() if r.role == role)
