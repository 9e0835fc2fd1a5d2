"""The live view of ``distdoctor run`` on a real terminal (pexpect pseudo-terminal), real TF stall."""
import re
import sys
import time

import pytest

from conftest import OUTPUT, requires_tf, trainer

pexpect = pytest.importorskip("pexpect")

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


@pytest.mark.tf
@requires_tf
def test_live_view_shows_tasks_and_stall_banner():
    out = OUTPUT / "runs" / "live-pty"
    cmd = [sys.executable, "-m", "distdoctor", "run", "--no-report", "--out", str(out), "--"] + trainer("--fault", "stall")
    child = pexpect.spawn(cmd[0], cmd[1:], dimensions=(40, 160), encoding="utf-8", timeout=120,
                          env={"TERM": "xterm-256color", "PATH": "/usr/bin:/bin"})
    screen = ""
    deadline = time.time() + 150
    try:
        while time.time() < deadline:
            try:
                screen += child.read_nonblocking(65536, timeout=1)
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                break
        text = ANSI.sub("", screen)
    finally:
        child.close(force=True)
    assert "worker:0" in text and "worker:1" in text
    assert re.search(r"stall", text, re.I) and "worker:1" in text.split("stall", 1)[-1] + text.split("STALL", 1)[-1]
    assert "hung" in text.lower()
    (OUTPUT / "live-pty-screen.txt").write_text(text)


# A task that needs no TensorFlow: a few progress lines over ~3 s, then a clean exit.
_TICKER = ("import time\nfor i in range(1, 7):\n    print(f'{i}/6 - 0s - loss: 0.5', flush=True)\n    time.sleep(0.5)\n")
_LIVE_HEADER = re.compile(r"task\s+state\s+step\s+steps/s")


def _screen(tmp_path, extra: list[str], env: dict[str, str]) -> str:
    cmd = [sys.executable, "-m", "distdoctor", "run", "--workers", "2", "--no-report", "--out", str(tmp_path / "b"),
           *extra, "--", sys.executable, "-c", _TICKER]
    child = pexpect.spawn(cmd[0], cmd[1:], dimensions=(40, 160), encoding="utf-8", timeout=60,
                          env={"PATH": "/usr/bin:/bin", **env})
    try:
        child.expect(pexpect.EOF, timeout=90)
        return ANSI.sub("", child.before or "")
    finally:
        child.close(force=True)


def test_live_view_on_a_terminal_and_plain_streaming_otherwise(tmp_path):
    live = _screen(tmp_path / "live", [], {"TERM": "xterm-256color"})
    assert _LIVE_HEADER.search(live) and "worker:0" in live and "worker:1" in live
    for name, extra, env in (("no-live", ["--no-live"], {"TERM": "xterm-256color"}),
                             ("no-color", [], {"TERM": "xterm-256color", "NO_COLOR": "1"}),
                             ("dumb", [], {"TERM": "dumb"})):
        text = _screen(tmp_path / name, extra, env)
        assert not _LIVE_HEADER.search(text), (name, text[-2000:])
        for task in ("worker:0", "worker:1"):   # plain mode: every task's lines, prefixed
            assert f"[{task}] 6/6 - 0s - loss: 0.5" in text, (name, text[-2000:])
