"""What the reasoning over signature hits concludes: a :class:`Verdict` and its ranked :class:`Alternative` readings.

Shared by the reasoning steps (:mod:`.reason`, :mod:`.safetynet`, :mod:`.priors`) and turned
into the shared :class:`~distdoctor.model.Finding` by :mod:`.verdict`."""
from __future__ import annotations

from dataclasses import dataclass

from ...model import Alternative, Category, Status
from .scan import Hit

__all__ = ["Alternative", "Verdict"]   # Alternative: the one in distdoctor.model, re-exported


@dataclass(frozen=True)
class Verdict:
    """Invariant: ``confidence`` is high, medium or low; at most three ``alternatives``, none with the verdict's own
    category and culprit."""

    status: Status
    category: Category
    culprit: str | None
    confidence: str                      # high, medium, low
    code: str | None                     # the signature (or reasoning rule) that decided
    summary: str
    remedy: str
    root: Hit | None
    consequences: tuple[Hit, ...] = ()
    context: tuple[Hit, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    candidates: tuple[str, ...] = ()
    looked_at: tuple[str, ...] = ()
    settle: str | None = None
