"""The live terminal view during ``distdoctor run``.

One line per task: state, step (with a progress bar when the total is known),
steps/s, RSS, CPU, time since the last progress and what the task is doing;
a red banner naming the task the moment a stall is suspected; the last few
log lines under it. The supervisor owns the numbers and calls
:meth:`LiveView.update`; this module only draws.

Plain prefixed log streaming stays the default wherever a live view would be
noise: :func:`live_enabled` says no when the stream is not a terminal, when
``NO_COLOR`` is set (https://no-color.org: present and not empty) or when
``TERM=dumb``.
"""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.padding import Padding
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from .fmt import clean_text, fmt_bytes, fmt_duration, fmt_percent, fmt_rate

__all__ = ["LiveRow", "LiveView", "live_enabled", "build_live", "stall_banner", "SLOW_PROGRESS_S"]

SLOW_PROGRESS_S = 10.0     # a task this long without progress is shown in yellow before any verdict
_STATE_STYLE = {"running": "green", "sleeping": "green", "stopped": "bold magenta", "disk-sleep": "bold magenta",
                "zombie": "red", "exited": "dim", "starting": "cyan", "connecting": "cyan"}


@dataclass(frozen=True)
class LiveRow:
    """One task's line. Unknown values are None."""

    task: str
    state: str
    step: int | None = None
    total: int | None = None
    steps_per_s: float | None = None
    rss_bytes: int | None = None
    cpu_percent: float | None = None
    last_progress_age_s: float | None = None
    where: str | None = None          # "tf", "python", "serving" or None
    location: str | None = None       # innermost user frame, "train.py:88 in slow_input_fn"


def live_enabled(stream, env: Mapping[str, str] | None = None) -> bool:
    """Whether a live view may be drawn on ``stream``."""
    env = os.environ if env is None else env
    try:
        if not stream.isatty():
            return False
    except (AttributeError, ValueError, OSError):
        return False
    if env.get("NO_COLOR", "") != "":
        return False
    return env.get("TERM", "") != "dumb"


def stall_banner(row: LiveRow, reason: str | None = None) -> str:
    """The banner text for a suspected stall: the task, how long, and what it is doing."""
    age = f" for {fmt_duration(row.last_progress_age_s)}" if row.last_progress_age_s is not None else ""
    text = f"STALL SUSPECTED: {row.task} has made no progress{age}"
    doing = _doing(row)
    if doing:
        text += f"; it is {doing}"
    if reason:
        text += f" ({reason})"
    return text


def _doing(row: LiveRow) -> str:
    where = {"tf": "inside TensorFlow", "python": "in Python code", "serving": "serving its peers"}.get(row.where or "", row.where or "")
    if row.location:
        return f"{where} at {row.location}" if where else f"at {row.location}"
    return where


def _state_style(state: str) -> str:
    if state.startswith("exit"):      # "exit 0", "exit 1", "exit -9" from the supervisor
        return "green" if state.strip() == "exit 0" else "bold red"
    return _STATE_STYLE.get(state, "")


def _step_cell(row: LiveRow) -> RenderableType:
    if row.step is None:
        return Text("–", style="dim")
    if row.total:
        bar = Table.grid(padding=(0, 1))
        bar.add_column(width=10)
        bar.add_column(no_wrap=True)
        bar.add_row(ProgressBar(total=row.total, completed=min(row.step, row.total), width=10),
                    Text(f"{row.step}/{row.total}"))
        return bar
    return Text(str(row.step))


def _interesting(rows: Sequence[LiveRow], banner: str | None, limit: int) -> list[LiveRow]:
    """The rows to show when they do not all fit: named in the banner, then unusual, then stalest."""
    def rank(r: LiveRow):
        named = bool(banner) and _names(banner, r.task)
        unusual = r.state not in ("running", "sleeping")
        return (not named, not unusual, -(r.last_progress_age_s or 0.0))
    keep = {id(r) for r in sorted(rows, key=rank)[:limit]}
    return [r for r in rows if id(r) in keep]


def _names(banner: str, task: str) -> bool:
    i = banner.find(task)
    while i >= 0:   # "worker:1" must not match inside "worker:12"
        end = i + len(task)
        if end == len(banner) or not banner[end].isdigit():
            return True
        i = banner.find(task, end)
    return False


def build_live(rows: Sequence[LiveRow], banner: str | None = None, log_lines: Sequence[str] = (),
               max_rows: int = 40, max_log_lines: int = 6, title: str | None = None) -> RenderableType:
    """The live view's renderable for one moment. Pure: the same input draws the same screen."""
    parts: list[RenderableType] = []
    if banner:
        parts.append(Padding(Text(clean_text(banner, 400), style="bold white on red"), (0, 1), style="on red",
                             expand=True))
    shown = list(rows) if len(rows) <= max_rows else _interesting(rows, banner, max_rows)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold dim", expand=False,
                  title=title, title_justify="left", title_style="bold")
    # Fixed minimum widths: the numbers must never be squeezed into "…"; "doing" takes what is left.
    task_w = max([len(r.task) for r in shown] + [4])
    step_w = max([len(f"{r.step}/{r.total}") + 11 if r.total else len(str(r.step)) for r in shown] + [4])
    table.add_column("task", no_wrap=True, min_width=task_w)
    table.add_column("state", no_wrap=True, min_width=8)
    table.add_column("step", no_wrap=True, min_width=step_w)
    table.add_column("steps/s", justify="right", no_wrap=True, min_width=7)
    table.add_column("RSS", justify="right", no_wrap=True, min_width=8)
    table.add_column("CPU", justify="right", no_wrap=True, min_width=5)
    table.add_column("progress", justify="right", no_wrap=True, min_width=9)
    table.add_column("doing", no_wrap=True, overflow="ellipsis", max_width=60)
    for r in shown:
        named = bool(banner) and _names(banner, r.task)
        age = r.last_progress_age_s
        age_style = "bold red" if named else "yellow" if age is not None and age >= SLOW_PROGRESS_S else ""
        table.add_row(
            Text(r.task, style="bold red" if named else "bold"),
            Text(r.state, style=_state_style(r.state)),
            _step_cell(r),
            fmt_rate(r.steps_per_s),
            fmt_bytes(r.rss_bytes),
            fmt_percent(r.cpu_percent),
            Text(f"{fmt_duration(age)} ago" if age is not None else "–", style=age_style),
            Text(clean_text(" ".join(x for x in (r.where, r.location) if x), 200), style="dim"),
        )
    parts.append(table)
    if len(shown) < len(rows):
        hidden = [r for r in rows if r not in shown]
        rates = [r.steps_per_s for r in hidden if r.steps_per_s is not None]
        more = f"… {len(hidden)} more tasks"
        if rates:
            more += f", median {fmt_rate(statistics.median(rates))} steps"
        parts.append(Text(more, style="dim"))
    lines = [clean_text(x, 300) for x in list(log_lines)[-max_log_lines:]]
    if lines:
        log = Text(no_wrap=True, overflow="ellipsis", style="dim")
        log.append("\n".join(lines))
        parts.append(Padding(log, (1, 0, 0, 0)))
    return Group(*parts)


class LiveView:
    """Context manager around :class:`rich.live.Live` showing :func:`build_live`.

    ``with LiveView(console) as view: view.update(rows, banner, log_lines)``.
    With no console, one for stdout is made. The view never takes over
    stdout/stderr: the supervisor keeps writing its logs to files.
    """

    def __init__(self, console: Console | None = None, refresh_per_second: float = 4.0,
                 max_log_lines: int = 6, title: str | None = "distdoctor run", transient: bool = False) -> None:
        self.console = console or Console()
        self.max_log_lines = max_log_lines
        self.title = title
        self._rows: list[LiveRow] = []
        self._banner: str | None = None
        self._log: list[str] = []
        self._live = Live(self._render(), console=self.console, refresh_per_second=refresh_per_second,
                          transient=transient, redirect_stdout=False, redirect_stderr=False, auto_refresh=False)

    def _max_rows(self) -> int:
        # Keep the view inside the screen: banner, header, summary and log lines take the rest.
        return max(4, self.console.size.height - self.max_log_lines - 6)

    def _render(self) -> RenderableType:
        return build_live(self._rows, self._banner, self._log, max_rows=self._max_rows(),
                          max_log_lines=self.max_log_lines, title=self.title)

    def update(self, rows: Sequence[LiveRow], banner: str | None = None, log_lines: Sequence[str] = ()) -> None:
        self._rows, self._banner, self._log = list(rows), banner, list(log_lines)[-self.max_log_lines:]
        self._live.update(self._render(), refresh=True)

    def __enter__(self) -> "LiveView":
        self._live.start(refresh=True)
        return self

    def __exit__(self, *exc) -> None:
        self._live.stop()
