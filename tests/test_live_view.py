"""The live view, drawn into a recorded console (the pty test of `distdoctor run` is separate)."""
from __future__ import annotations

from io import StringIO

import pytest
from rich.console import Console

from distdoctor.report.live import LiveRow, LiveView, build_live, live_enabled, stall_banner


def rows(n: int, stalled: str | None = None) -> list[LiveRow]:
    out = []
    for i in range(n):
        task = f"worker:{i}"
        if task == stalled:
            out.append(LiveRow(task, "running", 118, 500, 0.0, 390 << 20, 99.0, 42.0, "python",
                               "train.py:88 in slow_input_fn"))
        else:
            out.append(LiveRow(task, "sleeping", 120, 500, 10.2, 380 << 20, 3.0, 0.4, "tf", None))
    return out


def console(width: int = 120, height: int = 40) -> Console:
    return Console(file=StringIO(), width=width, height=height, record=True, force_terminal=True,
                   color_system="truecolor")


def test_every_task_and_the_banner_appear():
    c = console()
    rs = rows(8, stalled="worker:5")
    with LiveView(c) as view:
        view.update(rs[:], None, ["[worker:0] Epoch 1/3"])
        view.update(rs, stall_banner(rs[5]), ["[worker:3] 120/500 [=====>....] - loss: 0.31", "[worker:5] <x> & y"])
    text = c.export_text()
    for i in range(8):
        assert f"worker:{i}" in text
    assert "STALL SUSPECTED: worker:5 has made no progress for 42 s" in text
    assert "train.py:88 in slow_input_fn" in text
    assert "120/500" in text and "390 MiB" in text and "10.2/s" in text
    assert "[worker:5] <x> & y" in text       # log lines are text, never markup


def test_banner_is_red_and_names_the_task():
    c = console()
    c.print(build_live(rows(3, stalled="worker:1"), "STALL SUSPECTED: worker:1 has made no progress"))
    html = c.export_html(inline_styles=True, clear=False)
    assert "STALL SUSPECTED: worker:1" in c.export_text()
    banner = next(span for span in html.split("<span") if "STALL SUSPECTED" in span)
    assert "background-color: #800000" in banner        # rich's "red" background


def test_progress_bar_only_when_total_known():
    c = console()
    c.print(build_live([LiveRow("worker:0", "running", 7, None, 1.0), LiveRow("worker:1", "running", 7, 10, 1.0)]))
    text = c.export_text()
    assert "7/10" in text and "━" in text
    assert "7/None" not in text


def test_too_many_rows_keep_the_stalled_task_and_summarise_the_rest():
    c = console(height=30)
    rs = rows(64, stalled="worker:37")
    c.print(build_live(rs, stall_banner(rs[37]), max_rows=10))
    text = c.export_text()
    assert "worker:37" in text and "… 54 more tasks" in text


def test_stall_banner_names_task_and_activity():
    b = stall_banner(rows(3, stalled="worker:2")[2], reason="peers wait in all-reduce")
    assert b.startswith("STALL SUSPECTED: worker:2") and "in Python code at train.py:88" in b
    assert b.endswith("(peers wait in all-reduce)")


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty, env, expect", [
    (True, {"TERM": "xterm-256color"}, True),
    (False, {"TERM": "xterm-256color"}, False),
    (True, {"TERM": "xterm", "NO_COLOR": "1"}, False),
    (True, {"TERM": "xterm", "NO_COLOR": ""}, True),      # no-color.org: only a non-empty value counts
    (True, {"TERM": "dumb"}, False),
])
def test_live_enabled(tty, env, expect):
    assert live_enabled(_Stream(tty), env) is expect


def test_live_enabled_on_odd_streams():
    assert live_enabled(object(), {}) is False
    assert live_enabled(StringIO(), {}) is False
