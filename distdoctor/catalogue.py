"""The one catalogue of diagnosis rules, shared by ``run``, ``diagnose`` and ``check``.

A rule is a small unit with a stable code (``DDnnn`` or ``DDnnnn``), a title, a category
slug, a doc (what it detects, why it matters, what evidence it uses, the
remedy) and a lifecycle. Codes are retired, never reused.

Code ranges: DD1xx task failures, DD2xx hangs and performance, DD3xx cluster
configuration (``check --static``), DD4xx host and environment, DD5xx network
and mesh, DD600-DD999 and DD1000-DD1999 log signatures (diagnose/logs/kb).

One way in: every module that defines rules keeps them in its own explicit list,
``RULES = RuleList()``, and adds each with ``@RULES.check(code=..., ...)`` (a rule
with its check over job observations, which the engine runs) or
``RULES.add(code=..., ...)`` (a rule whose findings another part of the code makes:
the preflight checks, the log knowledge base, the verdict). Nothing else registers
(``tests/test_catalogue.py`` checks it); :mod:`distdoctor.rulebook` lists the
modules and renders the whole table (``docs/rules.md``, ``distdoctor rules``).

One rank direction: a rule's ``rank`` (and a log signature's) is *higher = stronger*,
the more direct evidence considered first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .model import Category, Evidence, Finding, Severity

__all__ = ["Rule", "RuleList", "get", "codes_with_role", "priority",
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
    # (higher = more direct evidence, considered first -- the direction of the log signatures' rank; None = after
    # every ranked rule); ``role`` is ``cause``, ``own_failure``
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


_BY_CODE: dict[str, Rule] = {}   # every rule by code, the index ``get`` reads: filled only by RuleList.add


def _register(rule: Rule) -> Rule:
    if rule.code in _BY_CODE and _BY_CODE[rule.code] != rule:
        raise ValueError(f"rule code {rule.code} registered twice")
    _BY_CODE[rule.code] = rule
    return rule


Check = Callable[[object], list[Finding]]


class RuleList:
    """One module's explicit list of its rules, the one way a rule enters the catalogue.

    ``RULES = RuleList()`` at the top of the module, then per rule either ``@RULES.check(code=..., ...)`` on a
    function ``(rule, job) -> Iterable[Finding]`` (the engine runs it; ``checks`` lists them in order) or
    ``NAME = RULES.add(code=..., ...)`` for a rule whose findings are made elsewhere. Arguments are
    :class:`Rule`'s fields; a code may be registered only once.
    """

    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.checks: list[tuple[Rule, Check]] = []

    def add(self, *fields, **kw) -> Rule:
        rule = _register(Rule(*fields, **kw))
        self.rules.append(rule)
        return rule

    def check(self, **kw) -> Callable:
        rule = self.add(**kw)

        def deco(fn: Callable[[Rule, object], Iterable[Finding]]):
            self.checks.append((rule, lambda job: list(fn(rule, job))))
            return fn
        return deco

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)


def get(code: str) -> Rule:
    return _BY_CODE[code]


def priority() -> list[str]:
    """Codes of the ranked rules, highest rank (most direct evidence) first: the engine's tie-break between
    same-moment findings."""
    ranked = (r for r in _BY_CODE.values() if r.rank is not None)
    return [r.code for r in sorted(ranked, key=lambda r: (-r.rank, code_key(r.code)))]


def codes_with_role(role: str) -> frozenset[str]:
    return frozenset(r.code for r in _BY_CODE.values() if r.role == role)
