"""The live view of ``distdoctor run`` on a real terminal (pexpect pseudo-terminal), real TF stall."""
import re
import sys
import time

import pytest

from conftest import OUTPUT, requires_tf, trainer

pexpect = pytest.importorskip("pexpect")
pytestmark = [pytest.mark.tf, requires_tf]

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


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
