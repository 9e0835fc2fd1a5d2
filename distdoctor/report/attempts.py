"""The attempt ledger of a restarted run, for a person: one band per attempt and the goodput.

Input is ``diagnosis.json``'s ``attempts`` and ``goodput`` (see distdoctor/supervise/ledger.py);
nothing is printed for a run of one attempt that needed no decision.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..model import format_clock
from .fmt import clean_text

__all__ = ["render_attempts", "attempts_worth_showing", "resumed_text", "AttemptBand", "attempt_bands", "goodput_line"]


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


def attempt_bands(diag_json: dict) -> tuple[AttemptBand, ...]:
    out = []
    for a in attempts_worth_showing(diag_json):
        try:
            start, end = float(a["started_at"]), float(a["ended_at"])
        except (KeyError, TypeError, ValueError):
            continue
        rc = a.get("root_cause") or {}
        cause = f"{rc.get('category')} {rc.get('culprit') or ''}".strip() if rc else ""
        out.append(AttemptBand(int(a.get("number") or len(out) + 1), start, max(end, start), str(a.get("status") or ""),
                               cause, str(a.get("decision") or "none"), str(a.get("reason") or ""),
                               float(a.get("backoff_s") or 0.0), resumed_text(a)))
    return tuple(out)


def goodput_line(diag_json: dict) -> str | None:
    g = diag_json.get("goodput") or {}
    if g.get("ratio") is None or not attempts_worth_showing(diag_json):
        return None
    b = g.get("badput") or {}
    bad = ", ".join(f"{k.removesuffix('_s').replace('_', ' ')} {v:.1f} s" for k, v in b.items())
    return (f"goodput {g['ratio']:.0%}: {g.get('productive_s', 0):.1f} s of productive training in "
            f"{g.get('wall_s', 0):.1f} s" + (f"; badput: {bad}" if bad else ""))

_DECISION_STYLE = {"restart": "bold yellow", "stop": "bold red", "none": "green"}


def attempts_worth_showing(diag_json: dict) -> list[dict]:
    attempts = [a for a in diag_json.get("attempts") or () if isinstance(a, dict)]
    if len(attempts) > 1 or any(a.get("decision") == "restart" for a in attempts):
        return attempts
    return []


def resumed_text(a: dict) -> str:
    rf = a.get("resumed_from") or {}
    epoch = rf.get("epoch")
    where = f"epoch {epoch + 1}" if isinstance(epoch, int) else "?"
    if rf.get("checkpoint"):
        path = str(rf["checkpoint"])
        return f"{where} from {path if len(path) <= 40 else '...' + path[-37:]}"
    return f"{where}, no checkpoint" if isinstance(epoch, int) and epoch > 0 else f"{where} (fresh start)"


def render_attempts(diag_json: dict, console: Console) -> None:
    attempts = attempts_worth_showing(diag_json)
    if not attempts:
        return
    g = diag_json.get("goodput") or {}
    title = Text("Attempts", style="bold")
    if g.get("ratio") is not None:
        title.append(f"  goodput {g['ratio']:.0%}: {g.get('productive_s', 0):.1f} s of productive training in "
                     f"{g.get('wall_s', 0):.1f} s", style="bold cyan")
    console.print(title)
    t = Table(box=None, padding=(0, 1), show_header=True, header_style="dim")
    for col in ("#", "ran", "ended", "root cause", "decision", "resumed at"):
        t.add_column(col, no_wrap=col in ("#", "ran", "ended", "decision"))
    for a in attempts:
        rc = a.get("root_cause") or {}
        cause = f"{rc.get('category')} {rc.get('culprit') or ''}".strip() if rc else "-"
        d = str(a.get("decision") or "none")
        dtext = Text(d, style=_DECISION_STYLE.get(d, ""))
        if d == "restart":
            dtext.append(f" after {float(a.get('backoff_s') or 0):.1f} s")
        t.add_row(str(a.get("number")), f"{format_clock(a.get('started_at'))[:8]}-{format_clock(a.get('ended_at'))[:8]}",
                  clean_text(a.get("status") or ""), clean_text(cause), dtext, clean_text(resumed_text(a)))
    console.print(t)
    for a in attempts:
        if a.get("decision") in ("restart", "stop"):
            console.print(Text(f"  #{a.get('number')} {a.get('decision')}: " + clean_text(a.get("reason") or ""),
                               style="dim"))
    b = g.get("badput") or {}
    if b:
        console.print(Text("  badput: " + ", ".join(f"{k.removesuffix('_s').replace('_', ' ')} {v:.1f} s"
                                                     for k, v in b.items()), style="dim"))
    console.print()
