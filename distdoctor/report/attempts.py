"""The attempt ledger of a restarted run, for a person: one band per attempt and the goodput.

Input is the :class:`~distdoctor.model.Diagnosis`' ``attempts`` and ``goodput`` (recorded by
distdoctor/supervise/ledger.py); nothing is printed for a run of one attempt that needed no decision.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..model import Attempt, Diagnosis, format_clock
from .fmt import clean_text

__all__ = ["render_attempts", "AttemptBand", "attempt_bands", "goodput_line", "attempt_cause"]


@dataclass(frozen=True)
class AttemptBand:
    """One attempt of a restarted run, as the HTML report draws it (a band on a shared time axis)."""

    number: int
    start: float
    end: float
    status: str
    cause: str
    decision: str
    reason: str
    backoff_s: float
    resumed: str


def attempt_cause(a: Attempt) -> str:
    rc = a.root_cause
    return f"{rc.category.value} {rc.culprit or ''}".strip() if rc is not None else ""


def attempt_bands(diag: Diagnosis) -> tuple[AttemptBand, ...]:
    return tuple(AttemptBand(a.number, a.started_at, max(a.ended_at, a.started_at), a.status.value, attempt_cause(a),
                             a.decision.value, a.reason, a.backoff_s, a.resumed_from.describe())
                 for a in diag.restarted())


def _badput(diag: Diagnosis) -> str:
    g = diag.goodput
    return ", ".join(f"{k} {v:.1f} s" for k, v in g.badput.parts()) if g is not None else ""


def goodput_line(diag: Diagnosis) -> str | None:
    g = diag.goodput
    if g is None or g.ratio is None or not diag.restarted():
        return None
    bad = _badput(diag)
    return g.line() + (f"; badput: {bad}" if bad else "")


_DECISION_STYLE = {"restart": "bold yellow", "stop": "bold red", "none": "green"}


def render_attempts(diag: Diagnosis, console: Console) -> None:
    attempts = diag.restarted()
    if not attempts:
        return
    g = diag.goodput
    title = Text("Attempts", style="bold")
    if g is not None and g.ratio is not None:
        title.append("  " + g.line(), style="bold cyan")
    console.print(title)
    t = Table(box=None, padding=(0, 1), show_header=True, header_style="dim")
    for col in ("#", "ran", "ended", "root cause", "decision", "resumed at"):
        t.add_column(col, no_wrap=col in ("#", "ran", "ended", "decision"))
    for a in attempts:
        d = a.decision.value
        dtext = Text(d, style=_DECISION_STYLE.get(d, ""))
        if d == "restart":
            dtext.append(f" after {a.backoff_s:.1f} s")
        t.add_row(str(a.number), f"{format_clock(a.started_at)[:8]}-{format_clock(a.ended_at)[:8]}",
                  a.status.value, clean_text(attempt_cause(a) or "-"), dtext, clean_text(a.resumed_from.describe()))
    console.print(t)
    for a in attempts:
        if a.decision.value in ("restart", "stop"):
            console.print(Text(f"  #{a.number} {a.decision.value}: " + clean_text(a.reason), style="dim"))
    bad = _badput(diag)
    if bad:
        console.print(Text("  badput: " + bad, style="dim"))
    console.print()
