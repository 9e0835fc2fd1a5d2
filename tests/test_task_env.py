"""The task's own environment: the fingerprint comes from the command's interpreter, not distdoctor's.

Pure parts first (which interpreter a command names, the fingerprint built from the probe's facts,
the judge on two tasks with no majority, each task the authority on its own address), then real
processes: a task whose command runs the second venv ``.venv-tf220`` (TensorFlow 2.20, prepared by
``scripts/setup.sh --test``) beside one on this venv's TensorFlow 2.21 is named version_mismatch by
``check --mesh`` and ``run --node`` refuses to start either task.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PY, ROOT
from distdoctor.model import Category, Severity
from distdoctor.preflight.fingerprint import collect_for, from_probe, interpreter_of
from distdoctor.preflight.meshjudge import judge_mesh
from mesh_helpers import TOKEN, clean_env, finish, free_ports, kill_all, start_task, tf_config
from test_mesh import fp, report

TF220 = ROOT / ".venv-tf220" / "bin" / "python"


def _tf220_version() -> str | None:
    if not TF220.exists():
        return None
    p = subprocess.run([str(TF220), "-c", "import importlib.metadata as m; print(m.version('tensorflow-cpu'))"],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


requires_tf220 = pytest.mark.skipif(
    not (_tf220_version() or "").startswith("2.20."),
    reason=".venv-tf220 with tensorflow-cpu 2.20 is missing (scripts/setup.sh --test prepares it)")


# --- which interpreter -----------------------------------------------------------------------------
def _exe(path: Path, text: str = "") -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_interpreter_of_a_command(tmp_path):
    py = _exe(tmp_path / "python3.11")
    env = {"PATH": str(tmp_path)}
    assert interpreter_of(["python3.11", "train.py"], env) == py
    assert interpreter_of([py, "-m", "pkg"], env) == py
    assert interpreter_of(["env", "TF_X=1", "-u", "python3.11", "train.py"], env) == py
    script = _exe(tmp_path / "train", "#!/usr/bin/env python3.11\nprint(1)\n")
    assert interpreter_of([script, "--epochs", "3"], env) == py
    assert interpreter_of(["train"], env) == py                       # found on the task's PATH
    assert interpreter_of([_exe(tmp_path / "run.sh", "#!/bin/bash\n")], env) is None
    assert interpreter_of(["bash", "-c", "python train.py"], env) is None
    assert interpreter_of(["python9"], env) is None                   # not on the PATH
    assert interpreter_of([], env) is None


def test_fingerprint_from_the_probe_uses_the_task_environment():
    raw = {"executable": "/venv/bin/python", "python": "3.10.4", "platform": "Linux", "hostname": "h",
           "tf_build": {"cuda_version": "12.2"}, "nvidia_driver": "550.1",
           "packages": {"tensorflow-cpu": "2.20.0", "tf-keras": "2.20.1", "keras": "3.9.0",
                        "nvidia-nccl-cu12": "2.21.5"}}
    f = from_probe(raw, {"TF_USE_LEGACY_KERAS": "1", "NCCL_DEBUG": "INFO", "DISTDOCTOR_TOKEN": "x", "HOME": "/r"})
    assert (f.python, f.tensorflow, f.interpreter) == ("3.10.4", "2.20.0", "/venv/bin/python")
    assert f.keras_flavour == "tf-keras (legacy)" and f.nccl == "2.21.5" and dict(f.tf_build) == {"cuda_version": "12.2"}
    assert dict(f.env) == {"TF_USE_LEGACY_KERAS": "1", "NCCL_DEBUG": "INFO"}


def test_probe_runs_in_another_interpreter_without_distdoctor(tmp_path):
    """The probe is stdlib only: an interpreter that cannot import distdoctor (-I ignores PYTHONPATH) reads itself."""
    wrapper = _exe(tmp_path / "python", f"#!/bin/sh\nexec {sys.executable} -I \"$@\"\n")
    f, note = collect_for([wrapper, "train.py"], {"PATH": os.environ["PATH"]})
    assert note is None, note
    assert f.interpreter == sys.executable and f.python  # the probe's own report of itself


def test_a_command_that_names_no_python_falls_back_and_says_so():
    f, note = collect_for(["bash", "-c", "python train.py"], dict(os.environ))
    assert f.interpreter == sys.executable and "names no Python" in note


def test_a_broken_interpreter_falls_back_and_says_so(tmp_path):
    bad = _exe(tmp_path / "python", "#!/bin/sh\necho boom >&2; exit 3\n")
    f, note = collect_for([bad, "train.py"], dict(os.environ))
    assert f.interpreter == sys.executable and "probe failed" in note and "boom" in note


# --- the judge ---------------------------------------------------------------------------------------
TWO = (("worker", ("h0:2222", "h1:2222")),)


def _two(**changes):
    names = ("worker:0", "worker:1")
    return [report(names[0], cluster=TWO), report(names[1], cluster=TWO, finger=fp(**changes))]


def test_two_tasks_on_different_tensorflow_name_both_with_their_values():
    reps = _two(tensorflow="2.20.0", tensorflow_distributions=(("tensorflow", "2.20.0"),),
                packages=(("numpy", "2.4.6"), ("tensorflow", "2.20.0")))
    found = [f for f in judge_mesh(reps, me="worker:0") if f.code == "DD512"]
    assert len(found) == 1
    f = found[0]
    assert f.severity is Severity.ERROR and f.category is Category.VERSION_MISMATCH
    assert set(f.candidates) == {"worker:0", "worker:1"}
    assert "tensorflow (worker:0=2.21.0, worker:1=2.20.0)" in f.summary, f.summary


def test_odd_python_among_three_is_named_first():
    names = ("worker:0", "worker:1", "worker:2")
    reps = [report(n, finger=fp(python="3.10.12", packages=(("numpy", "1.0"), ("tensorflow", "2.21.0"))))
            if n == "worker:1" else report(n) for n in names]
    f = next(f for f in judge_mesh(reps, me="worker:0") if f.code == "DD512")
    assert f.culprit == "worker:1" and f.severity is Severity.ERROR
    assert f.summary.split(": ", 1)[1].startswith("python=3.10.12"), f.summary


def test_each_task_is_the_authority_on_its_own_address():
    """Two tasks, no majority: worker:1 lists worker:0 at another port than worker:0's own entry."""
    wrong = (("worker", ("h0:2299", "h1:2222")),)
    reps = [report("worker:0", cluster=TWO), report("worker:1", cluster=wrong)]
    f = next(f for f in judge_mesh(reps, me="worker:0") if f.code == "DD510")
    assert f.culprit == "worker:1" and "lists worker:0 at h0:2299 where worker:0 itself has h0:2222" in f.summary


# --- real processes ------------------------------------------------------------------------------------
@requires_tf220
def test_check_mesh_names_tensorflow_2_20_beside_2_21():
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    runs = [start_task(cluster, "worker:0", timeout=8, argv=[PY, "train.py"]),
            start_task(cluster, "worker:1", timeout=8, argv=[str(TF220), "train.py"])]
    try:
        finish(runs, 60)
    finally:
        kill_all(runs)
    for r in runs:
        assert r.rc == 1, r.stderr
        f = r.finding("DD512")
        assert f["category"] == "version_mismatch" and f["severity"] == "error", f
        assert "worker:0=2.21" in f["summary"] and "worker:1=2.20" in f["summary"], f["summary"]
        assert r.doc["findings"][0]["code"] == "DD512", [x["code"] for x in r.doc["findings"]]
    assert runs[1].doc["fingerprint"]["interpreter"] == str(TF220)
    assert runs[1].doc["fingerprint"]["tensorflow"].startswith("2.20.")


@requires_tf220
def test_run_node_refuses_to_start_a_task_on_another_tensorflow(tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    marker = tmp_path / "started"
    code = f"open({str(marker)!r}, 'a').write('x')"
    procs = []
    for i, py in enumerate((PY, str(TF220))):
        env = clean_env(TF_CONFIG=tf_config(cluster, f"worker:{i}"), DISTDOCTOR_TOKEN=TOKEN)
        procs.append(subprocess.Popen(
            [PY, "-m", "distdoctor", "run", "--node", "--no-report", "--mesh-timeout", "10",
             "--out", str(tmp_path / f"w{i}"), "--", py, "-c", code],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env))
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [1, 1], results
    assert not marker.exists()  # training never started: the skew was found before
    for i in range(2):
        diag = json.loads((tmp_path / f"w{i}" / "diagnosis.json").read_text())
        rc = diag["root_cause"]
        assert diag["status"] == "failed" and "was not started" in diag["notes"][0]
        assert rc["category"] == "version_mismatch" and rc["code"] == "DD512", rc
        assert "tensorflow (worker:0=2.21" in rc["summary"] and "worker:1=2.20" in rc["summary"], rc["summary"]


def test_real_tasks_the_one_with_a_wrong_view_of_its_peer_is_named():
    """Two real ``check --mesh`` tasks: worker:1's TF_CONFIG lists worker:0 at a port worker:0 does not use."""
    ports = free_ports(3)
    good = {"worker": [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}"]}
    wrong = {"worker": [f"127.0.0.1:{ports[2]}", f"127.0.0.1:{ports[1]}"]}
    runs = [start_task(good, "worker:0", timeout=4), start_task(wrong, "worker:1", timeout=4)]
    try:
        finish(runs, 60)
    finally:
        kill_all(runs)
    for r in runs:
        assert r.rc == 1, r.stderr
        assert r.codes().get("DD510") == {"worker:1"}, r.doc and r.doc["findings"]
        assert f"lists worker:0 at 127.0.0.1:{ports[2]} where worker:0 itself has 127.0.0.1:{ports[0]}" \
            in r.finding("DD510")["summary"]
