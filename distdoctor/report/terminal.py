"""The human text report printed at the end of ``distdoctor run`` and ``diagnose``.

Root cause first: the verdict line, the root cause with its culprit, summary,
evidence and remedy; then the other findings; then a short per-task table
(the culprit and the tasks that ended badly first, the rest summarised, so
256 tasks still fit on a screen). Input is the :class:`~distdoctor.model.Diagnosis`
every command makes (``diagnosis.json`` read back with ``Diagnosis.from_json``).
Every text is a :class:`rich.text.Text`, never markup, so log lines with
``[brackets]`` print as they are. This is the one text rendering of a diagnosis.

Texts wrap, never crop: summary, evidence, alternatives and remedy are whole at any width from
``MIN_WIDTH`` columns, also on a console made with ``soft_wrap=True`` (``diagnose`` makes one, so that a
long line of the task table is not broken): every print here says ``soft_wrap=False``.
"""
from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..model import Diagnosis, Finding, Status, TaskReport, format_clock
from .attempts import render_attempts
from .fmt import clean_text, evidence_clock, fmt_bytes, task_sort_key

__all__ = ["render_diagnosis", "MAX_TASK_ROWS", "MIN_WIDTH"]

MIN_WIDTH = 60         # the narrowest terminal the report is laid out for (tests render at 60, 80 and 120)
MAX_TASK_ROWS = 12     # beyond this the table summarises: the point is the few tasks that differ
_STATUS_STYLE = {"succeeded": "bold white on green", "failed": "bold white on red", "hung": "bold black on yellow",
                 "running": "bold white on blue"}
_BORDER = {"succeeded": "green", "failed": "red", "hung": "yellow", "running": "blue"}
_SEV_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}
_STAMP_MAX = 34        # an evidence line's "[task time]" column: a longer one (a file:line) folds


def _s(value: Any, limit: int = 2000) -> str:
    return clean_text("" if value is None else value, limit)


def render_diagnosis(diag: Diagnosis, console: Console) -> None:
    """Print the diagnosis for a person onto ``console``: the one text rendering of a diagnosis (``run``,
    ``run --node`` and ``diagnose`` all print it; ``console`` may be a plain file: no colours then)."""
    def show(*what) -> None:
        console.print(*what, soft_wrap=False)     # wrap, never crop, whatever the console's default

    status = diag.status.value
    root = diag.root_cause
    culprits = diag.culprits

    head = Table.grid(padding=(0, 2))
    head.add_column(no_wrap=True)
    head.add_column()
    shown = "interrupted" if diag.interrupted and status == "failed" else status   # a person's Ctrl-C, said so
    head.add_row(Text(f" {shown.upper()} ", style=_STATUS_STYLE.get(status, "bold reverse")),
                 Text(_headline(diag), style="bold"))
    body: list = [head]
    if root is not None:
        body.append(Text(""))
        body.append(_root_cause(root, culprits))
    show(Panel(Group(*body), border_style=_BORDER.get(status, "white"), title="distdoctor",
               title_align="left", padding=(0, 1)))

    others = diag.others()
    if others:
        show(Text("Other findings", style="bold"))
        for f in others:
            line = Text()
            sev = f.severity.value
            line.append(f"{sev:<8}", style=_SEV_STYLE.get(sev, "bold"))
            line.append(f"{_s(f.code)} ", style="dim")
            line.append(f.category.value, style="cyan")
            if f.culprit:
                line.append(f" {_s(f.culprit)}", style="bold")
            line.append("  " + _s(f.summary))
            show(Padding(line, (0, 0, 0, 2)))
        show()
    render_attempts(diag, console)
    if diag.tasks:
        show(_task_table(diag.tasks, culprits))
    for note in diag.notes:
        show(Text("note: " + _s(note), style="dim"))


def _headline(diag: Diagnosis) -> str:
    if diag.root_cause is not None and diag.root_cause.summary:
        return _s(diag.root_cause.summary)
    if diag.status == Status.SUCCEEDED:
        return _s(diag.finished_line)
    return "No root cause was identified; see the findings and the task logs."


def _root_cause(root: Finding, culprits: tuple[str, ...]) -> Group:
    parts: list = []
    line = Text("Root cause  ", style="bold")
    line.append(f"{_s(root.code)} ", style="dim")
    line.append(root.category.value, style="cyan")
    if culprits:
        line.append("  culprit ", style="dim")
        line.append(", ".join(culprits) if len(culprits) == 1 else "one of " + ", ".join(culprits), style="bold red")
    if root.at is not None:
        line.append(f"  began {format_clock(root.at)}", style="dim")
    if root.confidence:
        line.append(f"  confidence {root.confidence}" + (f" ({root.probability:.0%})" if root.probability is not None
                    else ""), style="dim")
    parts.append(line)
    if root.evidence:
        parts.append(Text("Evidence", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(max_width=_STAMP_MAX, overflow="fold")
        grid.add_column(overflow="fold")
        for e in root.evidence:
            consequence = e.role == "consequence"
            clock = evidence_clock(e)
            # a line with no time and no place still says whose it is (a step count, a process fact)
            label = f"[{e.task or 'job'} {clock}]" if clock else (f"[{e.task}]" if e.task else "")
            stamp = Text(label, style="dim" if consequence else "bold")
            text = Text()
            if consequence:
                text.append("(consequence) ", style="dim italic")
            text.append(_s(e.text, 4000), style="dim" if consequence else "")
            grid.add_row(stamp, text)
        parts.append(Padding(grid, (0, 0, 0, 2)))
    if root.weighed:
        parts.append(Text("Weighed most", style="bold").append(" (the learned probability of this cause without the line)",
                                                               style="dim"))
        for w in root.weighed:
            line = Text(f"-{w.weight * 100:.0f} pts  ", style="dim")
            if w.where or w.task:
                line.append(f"{_s(w.where or w.task)}  ", style="dim")
            line.append(_s(w.text, 400))
            parts.append(Padding(line, (0, 0, 0, 2)))
    if root.alternatives:
        parts.append(Text("Also possible", style="bold"))
        for a in root.alternatives[:3]:
            alt = Text(a.category.value + (f" on {_s(a.culprit)}" if a.culprit else ""), style="cyan")
            alt.append(f": {_s(a.why)}", style="dim")
            if a.settle:
                alt.append(f"; settled by {_s(a.settle)}", style="dim italic")
            parts.append(Padding(alt, (0, 0, 0, 2)))
    if root.remedy:
        parts.append(Text("What to do", style="bold green"))
        parts.append(Padding(Text(_s(root.remedy), overflow="fold"), (0, 0, 0, 2)))
    return Group(*parts)


def _ending(rep: TaskReport) -> tuple[str, str]:
    if rep.stopped_at_end:
        return "stopped at the job's end", "green"
    if rep.signal:
        return f"killed by {_s(rep.signal)}", "red"
    if rep.exit_code is not None:
        return f"exit {rep.exit_code}", "green" if rep.exit_code == 0 else "red"
    return _s(rep.state), "yellow"


def _task_table(tasks: dict[str, TaskReport], culprits: tuple[str, ...]) -> Table:
    names = sorted(tasks, key=task_sort_key)
    bad = [n for n in names if n not in culprits and _ending(tasks[n])[1] != "green"]
    ordered = [n for n in culprits if n in tasks] + bad + [n for n in names if n not in culprits and n not in bad]
    shown, rest = ordered[:MAX_TASK_ROWS], ordered[MAX_TASK_ROWS:]
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold dim", title_justify="left")
    for col, kw in (("task", {}), ("ended", {}), ("steps", {"justify": "right"}), ("peak RSS", {"justify": "right"}),
                    ("last progress", {}), ("", {})):
        table.add_column(col, no_wrap=True, **kw)
    for n in shown:
        rep = tasks[n]
        ending, style = _ending(rep)
        table.add_row(Text(n, style="bold red" if n in culprits else "bold"), Text(ending, style=style),
                      str(rep.steps) if rep.steps is not None else "–",
                      fmt_bytes(rep.peak_rss_bytes) if rep.peak_rss_bytes is not None else "–",
                      format_clock(rep.last_progress_at) if rep.last_progress_at is not None else "–",
                      Text("culprit", style="bold red") if n in culprits else "")
    if rest:
        counts: dict[str, int] = {}
        for n in rest:
            ending, _ = _ending(tasks[n])
            counts[ending] = counts.get(ending, 0) + 1
        summary = ", ".join(f"{c} {e}" for e, c in sorted(counts.items(), key=lambda x: -x[1]))
        table.add_row(Text(f"… {len(rest)} more", style="dim"), Text(summary, style="dim"), "", "", "", "")
    return table
