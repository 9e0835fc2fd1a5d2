"""Recorded logs of the tutorial-shaped workers (tests/workers/tutorial_keras.py, tutorial_ctl.py) with one worker's
input cut short (``dataset.take(20)``): TensorFlow 2.21 prints "Collective instance N expected type 0 and data_type A
but got type 0 and data_type B" on both tasks, and both ran the same number of steps. The task whose failing
collective was not the gradient all-reduce (TensorFlow's "defined at" frames name the optimizer's on its peer) is the
culprit of a data_sharding_imbalance. The same runs, live, are in tests/test_run_tutorials.py."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "tutorial"


@pytest.mark.parametrize("case", ["k-short", "c-short"])
def test_a_type_mismatch_names_the_worker_outside_the_step(case):
    out = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", str(DATA / case), "--json"],
                         capture_output=True, text=True, timeout=120)
    d = json.loads(out.stdout)
    r = d["root_cause"]
    assert (d["status"], r["code"], r["category"], r["culprit"]) == ("failed", "DD209", "data_sharding_imbalance",
                                                                      "worker:1"), json.dumps(r, indent=1)[:2000]
    assert r["evidence"][0].startswith("[worker:1") and "gradient all-reduce" in r["evidence"][0]
    assert any("expected type 0 and data_type" in e for e in r["evidence"])


def test_without_the_gradient_frames_no_culprit_is_guessed(tmp_path):
    """Remove the "defined at" frames: equal step counts and no frame to tell them apart -- no culprit."""
    for f in (DATA / "k-short").iterdir():
        (tmp_path / f.name).write_text("".join(ln for ln in f.read_text().splitlines(True)
                                               if "_all_reduce_sum_fn" not in ln))
    out = subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout)["root_cause"]
    assert r["category"] != "data_sharding_imbalance" or r["culprit"] is None, r
