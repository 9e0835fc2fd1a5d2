"""A cross-job diff: the lines a failed run printed that a good run of the same job printed too.

``distdoctor diagnose FAILED --baseline GOOD`` (and, in a run bundle, an earlier attempt that succeeded) reads both.
A line the good run printed as well -- a deprecation warning, a harmless ``E`` line, a retried connection at start-up
-- cannot be what made this run fail, so it is set aside before the reasoning; a line that is new in the failed run
keeps its full weight. Lines are compared by their *shape*: the task prefix and time stamp removed, numbers,
addresses and hex ids replaced by one placeholder, so ``step 1200`` and ``step 40`` or two pids compare equal. Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .prefixes import split_prefix

__all__ = ["shape_of", "BaselineShapes", "split_by_baseline"]

_TS = re.compile(r"^\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?|"
                 r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+:\d+\])\s*")
_VARIABLE = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b|\d+(?:\.\d+)*")
_SPACE = re.compile(r"\s+")


def shape_of(text: str) -> str:
    """The line with what changes from run to run (prefix, time stamp, numbers, ids) taken out."""
    _, body, _ = split_prefix(text.rstrip("\n"))
    body = _TS.sub("", body, count=1)
    return _SPACE.sub(" ", _VARIABLE.sub("#", body)).strip()[:400]


@dataclass
class BaselineShapes:
    """The shapes of the lines a good run printed (its signature hits and its error-like lines)."""

    shapes: set[str] = field(default_factory=set)
    source: str = ""

    def __contains__(self, text: str) -> bool:
        return shape_of(text) in self.shapes

    @classmethod
    def of_hits(cls, hits: list, source: str) -> "BaselineShapes":
        return cls({shape_of(h.text) for h in hits}, source)


def split_by_baseline(hits: list, baseline: BaselineShapes) -> tuple[list, list]:
    """``(new, seen)``: the failed run's hits the good run did not print, and those it printed too."""
    new, seen = [], []
    for h in hits:
        (seen if h.text in baseline else new).append(h)
    return new, seen
