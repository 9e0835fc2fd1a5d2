"""A real MultiWorkerMirroredStrategy job with Keras progress bars, stopped by Ctrl-C while its peers wait: the
verdict is ``interrupted`` and says who waited for whom; the step counts include the epoch in progress."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest

from conftest import OUTPUT, PY, WORKERS, requires_tf

pytestmark = [pytest.mark.tf, requires_tf]


def test_ctrl_c_while_a_worker_sleeps_mid_epoch():
    bundle = OUTPUT / "runs" / "interrupted-mid-epoch"
    shutil.rmtree(bundle, ignore_errors=True)
    # worker:1 sleeps in a callback at step 40 of epoch 2 (of 70 a epoch); worker:0 waits for it in the all-reduce
    proc = subprocess.Popen([PY, "-m", "distdoctor", "run", "--json", "--no-report", "--out", str(bundle),
                             "--hang-timeout", "300", "--grace", "3", "--", PY, str(WORKERS / "trainer.py"),
                             "--epochs", "3", "--steps", "70", "--verbose", "1", "--fault", "sleep",
                             "--fault-task", "worker:1", "--fault-epoch", "2", "--fault-step", "40"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        log = bundle / "logs" / "worker-1.log"
        deadline = time.time() + 180
        while time.time() < deadline and not (log.exists() and "sleeping forever" in log.read_text()):
            time.sleep(0.5)
        assert log.exists() and "sleeping forever" in log.read_text(), "worker:1 never reached its sleep"
        time.sleep(4)                                   # the agents' samples show where each task is
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    d = json.loads(out)
    rc = d["root_cause"]
    assert (rc["code"], rc["category"], d["interrupted"]) == ("DD109", "interrupted", "SIGINT")
    assert "worker:0 waited in TensorFlow" in rc["summary"] and "for worker:1, which was elsewhere" in rc["summary"]
    assert "trainer.py:" in rc["summary"] and "in inject" in rc["summary"], rc["summary"]
    # epoch 1's 70 steps and most of the 40 of epoch 2 (a bar is drawn every few steps), not 70
    steps = {t: v["steps"] for t, v in d["tasks"].items()}
    assert all(100 <= s <= 111 for s in steps.values()), steps
