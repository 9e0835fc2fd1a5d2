"""``run --node --restarts``: the collector decides, every node restarts its task; and ``--exit-code-policy``.

Two real ``distdoctor run --node`` supervisors on loopback around a TensorFlow-free task
(tests/workers/flaky.py: Keras-like epochs, resumes from the epoch saved in its --ckpt, fails on
the first attempt only). The real-TensorFlow, real-Slurm version is in tests/test_slurm.py.
"""
from __future__ import annotations

import json
import subprocess
import sys

from mesh_helpers import ROOT, TOKEN, clean_env, free_ports, tf_config

PY = sys.executable
FLAKY = str(ROOT / "tests" / "workers" / "flaky.py")


def _pair(tmp_path, flaky_args: list[str], dd_args: list[str]) -> list[tuple[int, str, str]]:
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for i in range(2):
        env = clean_env(TF_CONFIG=tf_config(cluster, f"worker:{i}"), DISTDOCTOR_TOKEN=TOKEN)
        argv = [PY, "-m", "distdoctor", "run", "--node", "--no-report", "--mesh-timeout", "10", "--failure-grace", "1",
                "--grace", "2", *dd_args, "--out", str(tmp_path / f"w{i}"), "--",
                PY, FLAKY, "--ckpt", str(tmp_path / "ckpt"), *flaky_args]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                      env=env))
    outs = [p.communicate(timeout=180) for p in procs]
    return [(p.returncode, o, e) for p, (o, e) in zip(procs, outs)]


def _diag(tmp_path, i: int) -> dict:
    return json.loads((tmp_path / f"w{i}" / "diagnosis.json").read_text())


def test_a_killed_task_restarts_on_every_node_and_resumes(tmp_path):
    res = _pair(tmp_path, ["--fault", "sigkill", "--fault-epoch", "2"],
                ["--restarts", "2", "--restart-delay", "0.2", "--exit-code-policy"])
    assert [r[0] for r in res] == [0, 0], res
    d0 = _diag(tmp_path, 0)
    assert d0["status"] == "succeeded", d0
    a = d0["attempts"]
    assert [x["decision"] for x in a] == ["restart", "none"], a
    assert a[0]["root_cause"]["category"] == "peer_crashed" and a[0]["root_cause"]["culprit"] == "worker:1"
    assert a[1]["resumed_from"]["epoch"] == 1, a[1]       # epoch 1 was saved; "Epoch 2/4" again
    # every node's bundle: the cluster ledger, and the first attempt's files archived
    d1 = _diag(tmp_path, 1)
    assert [x["decision"] for x in d1["attempts"]] == ["restart", "none"]
    for i in range(2):
        assert (tmp_path / f"w{i}" / "attempts" / "1" / "logs" / f"worker-{i}.log").exists()
    assert "Epoch 4/4" in (tmp_path / "w0" / "logs" / "worker-1.log").read_text()   # the mirror of attempt 2
    assert "restarts the job: attempt 2" in res[1][1]


def test_a_deterministic_failure_is_not_restarted_and_exits_permanent(tmp_path):
    res = _pair(tmp_path, ["--fault", "exception-always", "--fault-epoch", "16", "--epochs", "20"],
                ["--restarts", "2", "--restart-delay", "0.2", "--exit-code-policy"])
    assert [r[0] for r in res] == [1, 1], res
    d0 = _diag(tmp_path, 0)
    assert len(d0["attempts"]) == 1 and d0["attempts"][0]["decision"] == "stop"
    assert d0["root_cause"]["category"] == "user_code_error"
    assert all("exit code 1 (permanent" in r[1] for r in res), res


def test_a_transient_failure_without_restarts_exits_retryable(tmp_path):
    late = ["--fault", "sigkill", "--fault-epoch", "14", "--epochs", "16"]   # past the start-up check (3 s)
    res = _pair(tmp_path, late, ["--exit-code-policy"])
    assert [r[0] for r in res] == [143, 143], res     # both nodes: the scheduler retries
    res_off = _pair(tmp_path / "off", late, [])
    assert res_off[1][0] == 137, res_off           # without the policy: the task's own status (SIGKILL)


def test_a_lost_host_is_not_restarted_in_place(tmp_path):
    """DD112 is transient (the scheduler may replace the node) but cannot be restarted inside the allocation."""
    from distdoctor.model import Category, Finding, Severity
    from distdoctor.supervise.node import NodeCluster, node_supervisor
    from distdoctor.supervise.supervisor import RunConfig
    cfg = RunConfig(argv=["true"], cluster=NodeCluster("worker:0", ("worker:0", "worker:1"), "multi_worker_mirrored",
                                                       None), out_dir=str(tmp_path), restarts=2)
    sup = node_supervisor(cfg, collector="worker:0", expected=("worker:0", "worker:1"))
    lost = Finding(code="DD112", category=Category.PEER_UNRESPONSIVE, severity=Severity.ERROR, culprit="worker:1", summary="lost")
    assert "cannot be restarted in place" in sup.role.veto(lost)
    crashed = Finding(code="DD101", category=Category.PEER_CRASHED, severity=Severity.ERROR, culprit="worker:1", summary="killed")
    assert sup.role.veto(crashed) is None


def test_a_lost_node_stops_the_job_for_the_scheduler(tmp_path):
    """worker:1's supervisor freezes (SIGSTOP): DD112; with --restarts the collector does not restart in place,
    and exits 143 so that the scheduler replaces the node."""
    import os
    import signal
    import time
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for i in range(2):
        env = clean_env(TF_CONFIG=tf_config(cluster, f"worker:{i}"), DISTDOCTOR_TOKEN=TOKEN)
        argv = [PY, "-m", "distdoctor", "run", "--node", "--no-report", "--mesh-timeout", "10", "--failure-grace",
                "1", "--grace", "2", "--peer-timeout", "3", "--restarts", "2", "--restart-delay", "0.2",
                "--exit-code-policy", "--out", str(tmp_path / f"w{i}"), "--",
                PY, FLAKY, "--ckpt", str(tmp_path / "ckpt"), "--epochs", "80"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                      env=env))
    deadline = time.time() + 30
    while not (tmp_path / "ckpt" / "epoch-worker:1").exists() and time.time() < deadline:
        time.sleep(0.1)
    os.kill(procs[1].pid, signal.SIGSTOP)
    try:
        out0, err0 = procs[0].communicate(timeout=60)
    finally:
        os.kill(procs[1].pid, signal.SIGCONT)
    procs[1].communicate(timeout=60)
    assert procs[0].returncode == 143, out0[-3000:] + err0[-2000:]
    d0 = _diag(tmp_path, 0)
    assert d0["root_cause"]["code"] == "DD112" and d0["root_cause"]["culprit"] == "worker:1", d0["root_cause"]
    assert len(d0["attempts"]) == 1 and d0["attempts"][0]["decision"] == "stop"
    assert "cannot be restarted in place" in d0["attempts"][0]["reason"]
