"""The human text report printed at the end of ``distdoctor run`` and ``diagnose``.

Root cause first: the verdict line, the root cause with its culprit, summary,
evidence and remedy; then the other findings; then a short per-task table
(the culprit and the tasks that ended badly first, the rest summarised, so
256 tasks still fit on a screen). Input is the diagnosis JSON object, the one
shape every command emits. Every text is a :class:`rich.text.Text`, never
markup, so log lines with ``[brackets]`` print as they are.
"""
from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..model import format_clock
from .attempts import render_attempts
from .data import evidence_lines, task_sort_key
from .fmt import clean_text, fmt_bytes

__all__ = ["render_diagnosis", "MAX_TASK_ROWS"]

MAX_TASK_ROWS = 12     # beyond this the table summarises: the point is the few tasks that differ
_STATUS_STYLE = {"succeeded": "bold white on green", "failed": "bold white on red", "hung": "bold black on yellow",
                 "running": "bold white on blue"}
_BORDER = {"succeeded": "green", "failed": "red", "hung": "yellow", "running": "blue"}
_SEV_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}


def _s(value: Any, limit: int = 2000) -> str:
    return clean_text("" if value is None else value, limit)


def render_diagnosis(diag_json: dict, console: Console) -> None:
    """Print the diagnosis for a person onto ``console``."""
    status = str(diag_json.get("status") or "unknown")
    root = diag_json.get("root_cause") if isinstance(diag_json.get("root_cause"), dict) else None
    tasks = diag_json.get("tasks") if isinstance(diag_json.get("tasks"), dict) else {}
    culprits = _culprits(root)

    head = Table.grid(padding=(0, 2))
    head.add_column(no_wrap=True)
    head.add_column()
    head.add_row(Text(f" {status.upper()} ", style=_STATUS_STYLE.get(status, "bold reverse")),
                 Text(_headline(status, root, len(tasks)), style="bold"))
    body: list = [head]
    if root is not None:
        body.append(Text(""))
        body.append(_root_cause(root, culprits))
    console.print(Panel(Group(*body), border_style=_BORDER.get(status, "white"), title="distdoctor",
                        title_align="left", padding=(0, 1)))

    others = [f for f in diag_json.get("findings") or () if isinstance(f, dict) and not _same(f, root)]
    if others:
        console.print(Text("Other findings", style="bold"))
        for f in others:
            line = Text("  ")
            sev = _s(f.get("severity") or "info")
            line.append(f"{sev:<8}", style=_SEV_STYLE.get(sev, "bold"))
            line.append(f"{_s(f.get('code'))} ", style="dim")
            line.append(f"{_s(f.get('category'))}", style="cyan")
            if f.get("culprit"):
                line.append(f" {_s(f.get('culprit'))}", style="bold")
            line.append("  " + _s(f.get("summary")))
            console.print(line)
        console.print()
    render_attempts(diag_json, console)
    if tasks:
        console.print(_task_table(tasks, culprits))
    for note in diag_json.get("notes") or ():
        console.print(Text("note: " + _s(note), style="dim"))


def _culprits(root: dict | None) -> tuple[str, ...]:
    if root is None:
        return ()
    if isinstance(root.get("culprit"), str) and root["culprit"]:
        return (root["culprit"],)
    return tuple(str(c) for c in root.get("candidates") or () if isinstance(c, str))


def _same(f: dict, root: dict | None) -> bool:
    return root is not None and all(f.get(k) == root.get(k) for k in ("code", "culprit", "summary"))


def _headline(status: str, root: dict | None, n: int) -> str:
    if root is not None and root.get("summary"):
        return _s(root["summary"])
    if status == "succeeded":
        return f"All {n} tasks finished normally." if n != 1 else "The task finished normally."
    return "No root cause was identified; see the findings and the task logs."


def _root_cause(root: dict, culprits: tuple[str, ...]) -> Group:
    parts: list = []
    line = Text("Root cause  ", style="bold")
    line.append(f"{_s(root.get('code'))} ", style="dim")
    line.append(_s(root.get("category")), style="cyan")
    if culprits:
        line.append("  culprit ", style="dim")
        line.append(", ".join(culprits) if len(culprits) == 1 else "one of " + ", ".join(culprits), style="bold red")
    if isinstance(root.get("at"), (int, float)):
        line.append(f"  began {format_clock(root['at'])}", style="dim")
    if isinstance(root.get("confidence"), str):
        line.append(f"  confidence {root['confidence']}", style="dim")
    parts.append(line)
    evidence = evidence_lines(root)
    if evidence:
        parts.append(Text("Evidence", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for e in evidence:
            stamp = Text(f"[{e.task or 'job'} {e.clock}]" if e.clock else "", style="dim" if e.consequence else "bold")
            text = Text()
            if e.consequence:
                text.append("(consequence) ", style="dim italic")
            text.append(_s(e.text, 500), style="dim" if e.consequence else "")
            grid.add_row(stamp, text)
        parts.append(Padding(grid, (0, 0, 0, 2)))
    alts = [a for a in root.get("alternatives") or () if isinstance(a, dict)]
    if alts:
        parts.append(Text("Also possible", style="bold"))
        for a in alts[:3]:
            parts.append(Padding(Text(f"{_s(a.get('category'))}" + (f" on {_s(a.get('culprit'))}" if a.get("culprit") else "")
                                      + f": {_s(a.get('why'), 200)}", style="dim"), (0, 0, 0, 2)))
    if root.get("remedy"):
        parts.append(Text("What to do", style="bold green"))
        parts.append(Padding(Text(_s(root["remedy"])), (0, 0, 0, 2)))
    return Group(*parts)


def _ending(rep: dict) -> tuple[str, str]:
    code, sig, state = rep.get("exit_code"), rep.get("signal"), rep.get("state") or "unknown"
    if sig:
        return f"killed by {_s(sig)}", "red"
    if isinstance(code, int):
        return f"exit {code}", "green" if code == 0 else "red"
    return _s(state), "yellow"


def _task_table(tasks: dict, culprits: tuple[str, ...]) -> Table:
    names = sorted(tasks, key=task_sort_key)
    bad = [n for n in names if n not in culprits and _ending(tasks[n] if isinstance(tasks[n], dict) else {})[1] != "green"]
    ordered = [n for n in culprits if n in tasks] + bad + [n for n in names if n not in culprits and n not in bad]
    shown, rest = ordered[:MAX_TASK_ROWS], ordered[MAX_TASK_ROWS:]
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold dim", title_justify="left")
    for col, kw in (("task", {}), ("ended", {}), ("steps", {"justify": "right"}), ("peak RSS", {"justify": "right"}),
                    ("last progress", {}), ("", {})):
        table.add_column(col, no_wrap=True, **kw)
    for n in shown:
        rep = tasks[n] if isinstance(tasks[n], dict) else {}
        ending, style = _ending(rep)
        steps = rep.get("steps")
        last = rep.get("last_progress_at")
        table.add_row(Text(n, style="bold red" if n in culprits else "bold"), Text(ending, style=style),
                      str(steps) if isinstance(steps, int) else "–",
                      fmt_bytes(rep.get("peak_rss_bytes")) if isinstance(rep.get("peak_rss_bytes"), int) else "–",
                      format_clock(last) if isinstance(last, (int, float)) else "–",
                      Text("culprit", style="bold red") if n in culprits else "")
    if rest:
        counts: dict[str, int] = {}
        for n in rest:
            ending, _ = _ending(tasks[n] if isinstance(tasks[n], dict) else {})
            counts[ending] = counts.get(ending, 0) + 1
        summary = ", ".join(f"{c} {e}" for e, c in sorted(counts.items(), key=lambda x: -x[1]))
        table.add_row(Text(f"… {len(rest)} more", style="dim"), Text(summary, style="dim"), "", "", "", "")
    return table
