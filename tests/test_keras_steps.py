"""Keras draws one progress line per epoch, redrawn with ``\\r`` at each step; ``run``'s step count moves during the
epoch (not only when its line ends) and adds the epochs up. Recorded output of ``model.fit(ds, epochs=3,
steps_per_epoch=70)`` under Keras 3 and tf-keras (tests/data/keras_progress/), replayed by a real child process
through the launcher and a task's track, as ``run`` reads a task."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from distdoctor.diagnose.logs.formats import clean_line
from distdoctor.diagnose.logs.progress import progress_of
from distdoctor.supervise.launch import TaskProcess, last_drawing
from distdoctor.supervise.tracking import TaskTrack

DATA = Path(__file__).parent / "data" / "keras_progress"
PAUSE_S = 2.0

# the child: write the recording piece by piece (each \r starts a piece), as Keras flushes each drawing; pause after
# piece number PAUSE_AT, mid-epoch 2
REPLAY = r"""
import sys, time
data = open(sys.argv[1], "rb").read()
pause_at, pause = int(sys.argv[2]), float(sys.argv[3])
time.sleep(0.3)
for i, piece in enumerate(data.replace(b"\r", b"\0\r").split(b"\0")):
    sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()
    time.sleep(0.002)
    if i == pause_at:
        time.sleep(pause)
"""


def _pieces(data: bytes) -> list[bytes]:
    return data.replace(b"\r", b"\0\r").split(b"\0")


def _mid_epoch_2(data: bytes) -> tuple[int, int]:
    """(piece index, the step its drawing shows): a drawing about half way through the second epoch."""
    pieces = _pieces(data)
    seen = b""
    for i, p in enumerate(pieces):
        seen += p
        if seen.count(b"Epoch 2/3") and b"\n" not in p:
            found = progress_of(clean_line(last_drawing(p) and last_drawing(p).decode() or ""))
            if found and 30 <= found[1]["step"] <= 50:
                return i, found[1]["step"]
    raise AssertionError("no drawing half way through epoch 2")


def test_last_drawing():
    assert last_drawing(b"Epoch 1/3") is None
    assert last_drawing(b"\r 1/70 [..] - loss: 1.0\x08\x08\r 5/70 [=.]") == b" 5/70 [=.]"
    assert last_drawing(b"\r 1/70 [..] - loss: 1.0\x08\x08\r") == b" 1/70 [..] - loss: 1.0"


@pytest.mark.parametrize("flavour", ["keras3", "tf_keras"])
def test_steps_move_during_an_epoch_and_add_up(flavour, tmp_path):
    path = DATA / f"{flavour}.out"
    data = path.read_bytes()
    pause_at, step = _mid_epoch_2(data)
    holder: dict[str, TaskTrack] = {}
    proc = TaskProcess("worker:0", [sys.executable, "-c", REPLAY, str(path), str(pause_at), str(PAUSE_S)],
                       dict(os.environ), str(tmp_path / "worker-0.log"),
                       lambda task, ts, line: holder["t"].on_line(ts, line),
                       on_redraw=lambda task, ts, drawing: holder["t"].on_redraw(ts, drawing))
    track = holder["t"] = TaskTrack("worker:0", proc)
    seen = []
    deadline = time.time() + 30
    while proc.alive and time.time() < deadline:
        seen.append(track.steps())
        time.sleep(0.02)
    proc.wait_output(10)
    assert not proc.alive
    seen.append(track.steps())
    counts = [s for s in seen if s is not None]
    assert counts == sorted(counts), "the count never goes back"
    # while the child paused mid-epoch 2 the count showed epoch 1's 70 steps and the drawing's own
    assert seen.count(70 + step) >= int(PAUSE_S / 0.02 / 2), (step, sorted(set(counts)))
    assert counts[-1] == 210 and track.position() == (2, 70)
    # the log holds the lines as the task wrote them, each once
    log = (tmp_path / "worker-0.log").read_text()
    assert log.count("Epoch ") == 3 and log.count("70/70") == 3
