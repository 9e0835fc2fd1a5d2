"""``diagnose FAILED --baseline GOOD`` (issue 25 item 6): a line the good run printed too is set aside, one new in the
failed run weighs fully; a run bundle's earlier attempt that succeeded is its baseline without being asked. The
command line as a user runs it, and two real ``distdoctor run`` bundles (plain-Python tasks) for the attempt."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from distdoctor.diagnose.logs.baseline import BaselineShapes, shape_of

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent

# a start-up connection reset that every run of this job prints (the peer was not up yet; gRPC retried) ...
NOISE = ("{d} 10:00:00.000001: E tensorflow/core/distributed_runtime/rpc/grpc_remote_worker.cc:120] RecvTensor "
         "failed: UNAVAILABLE: Connection reset by peer\n"
         "{d} 10:00:00.500001: I tensorflow/core/distributed_runtime/coordination/coordination_service_agent.cc:300]"
         " Coordination agent has successfully connected.\n")
GOOD = NOISE.format(d="2026-01-01") + ("Epoch 1/2\n100/100 [==============================] - 3s 30ms/step - loss: 0.5\n"
                                       "Epoch 2/2\n100/100 [==============================] - 3s 30ms/step - loss: 0.3\n")
# ... and a failed run whose loss went to NaN, which then stopped
BAD = NOISE.format(d="2026-01-02") + (
    "Epoch 1/2\n 40/100 [=======>......................] - ETA: 2s - loss: 0.7\n"
    " 41/100 [=======>......................] - ETA: 2s - loss: nan\n"
    "Epoch 2/2\n  1/100 [>.............................] - ETA: 2s - loss: nan\n")


def dd(*args, timeout=90):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([PY, "-m", "distdoctor", *args], capture_output=True, text=True, timeout=timeout, env=env)


def _logs(tmp_path: Path) -> tuple[Path, Path]:
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, text in ((good, GOOD), (bad, BAD)):
        folder.mkdir()
        (folder / "worker-0.log").write_text(text)
    return good, bad


def test_a_line_both_runs_print_compares_equal_whatever_its_numbers():
    a = "[worker:1] 2026-01-01T10:00:00Z step 1200 took 0.31s on 10.0.0.7:2222 (pid 4242, id 0xdeadbeef)"
    b = "[worker:0] 2026-02-03T11:12:13Z step 40 took 1.5s on 10.0.0.9:2223 (pid 17, id 0xfeedface)"
    assert shape_of(a) == shape_of(b)
    assert shape_of("ValueError: shapes differ") != shape_of("ValueError: loss is NaN")
    assert not BaselineShapes.of_hits([], "x").shapes
    seen = BaselineShapes({shape_of(NOISE.format(d="2020-05-05").splitlines()[0])}, "good")
    assert NOISE.format(d="2026-01-02").splitlines()[0] in seen


def test_the_good_runs_lines_are_set_aside_and_the_new_ones_decide(tmp_path):
    good, bad = _logs(tmp_path)
    alone = json.loads(dd("diagnose", "--json", str(bad)).stdout)
    # the start-up reset, read alone, looks like a peer that went away
    assert alone["root_cause"]["category"] != "numerical_divergence"
    r = dd("diagnose", "--json", str(bad), "--baseline", str(good))
    assert r.returncode == 1, r.stderr
    diag = json.loads(r.stdout)
    assert diag["root_cause"]["category"] == "numerical_divergence", diag["root_cause"]
    note = next(n for n in diag["notes"] if n.startswith("compared with the good run"))
    assert "line(s) it printed too were set aside" in note and "Connection reset" not in json.dumps(
        diag["root_cause"]["evidence"])


def test_an_unreadable_baseline_is_one_line_and_exit_2(tmp_path):
    _, bad = _logs(tmp_path)
    r = dd("diagnose", str(bad), "--baseline", str(tmp_path / "missing"))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "--baseline" in r.stderr and "Traceback" not in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "worker-0.log").write_text("")
    r = dd("diagnose", str(bad), "--baseline", str(empty))
    assert r.returncode == 2 and "--baseline" in r.stderr and "Traceback" not in r.stderr


def _run(out: Path, script: str) -> None:
    r = dd("run", "--workers", "1", "--no-live", "--no-report", "--out", str(out), "--", PY, "-c", script)
    assert (out / "diagnosis.json").exists(), r.stderr


def test_a_bundles_earlier_attempt_that_succeeded_is_its_baseline(tmp_path):
    noise = "import sys; print('W0101 10:00:00.000000 1 cfg.cc:1] could not open config file /etc/x.cfg: " \
            "No such file or directory', file=sys.stderr, flush=True); "
    good, bad = tmp_path / "good", tmp_path / "bad"
    _run(good, noise + "print('training done')")
    _run(bad, noise + "import time; time.sleep(0.2); raise SystemExit('loss is nan at step 3')")
    assert json.loads((good / "diagnosis.json").read_text())["status"] == "succeeded"
    # the bundle layout `run --restarts` leaves: the earlier attempt under attempts/<n>/
    shutil.copytree(good / "logs", bad / "attempts" / "1" / "logs")
    shutil.copy(good / "diagnosis.json", bad / "attempts" / "1" / "diagnosis.json")
    diag = json.loads(dd("diagnose", "--json", str(bad)).stdout)
    notes = [n for n in diag["notes"] if n.startswith("compared with the good run")]
    assert notes and "attempt 1 of this run, which succeeded" in notes[0], diag["notes"]
