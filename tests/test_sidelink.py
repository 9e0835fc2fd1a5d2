"""The side link between ``run --node`` supervisors, and ``run --node``'s edges, on loopback (no TensorFlow)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from distdoctor.supervise.node import collector_of
from distdoctor.supervise.nodecommand import node_exit_status
from distdoctor.supervise.sidelink import LinkClient, LinkHub
from mesh_helpers import OTHER_TOKEN, ROOT, TOKEN, clean_env, free_ports, tf_config, until as _until

PY = sys.executable


@pytest.fixture
def hub():
    got: list = []
    h = LinkHub("secret", "worker:0", port=0)
    h.port = h.start()
    h.got = got
    yield h
    h.close()


def test_messages_flow_both_ways_in_order_and_early_ones_are_kept(hub):
    c = LinkClient("secret", "worker:1", "127.0.0.1", hub.port, lambda _t, m: commands.append(m))
    commands: list = []
    c.start()
    try:
        for i in range(200):
            c.send({"t": "line", "n": i})
        assert _until(lambda: "worker:1" in hub.peers())
        time.sleep(0.2)
        hub.attach(lambda task, msg: hub.got.append((task, msg)))   # after the messages came: none is lost
        assert _until(lambda: len([m for _, m in hub.got if m["t"] == "line"]) == 200)
        lines = [m["n"] for t, m in hub.got if m["t"] == "line"]
        assert lines == list(range(200)) and {t for t, _ in hub.got} == {"worker:1"}
        hub.send("worker:1", {"t": "stop", "grace": 3})
        assert _until(lambda: commands == [{"t": "stop", "grace": 3}])
        st = hub.peers()["worker:1"]
        assert st.connected and st.host == "127.0.0.1"
        assert st.offset_s is not None and abs(st.offset_s) < 0.5    # same clock: offset about zero
    finally:
        c.close()
    assert _until(lambda: not hub.peers()["worker:1"].connected)


def test_a_peer_without_the_token_is_refused_and_never_heard(hub):
    hub.attach(lambda task, msg: hub.got.append((task, msg)))
    bad = LinkClient("not-the-secret", "worker:1", "127.0.0.1", hub.port, lambda *_: None)
    bad.start()
    try:
        bad.send({"t": "line", "text": "should never arrive"})
        assert _until(lambda: bad.refused is not None)
        assert "token" in bad.refused
        assert _until(lambda: hub.refusals)
        # a count per source address: nothing the refused peer claimed is kept
        assert "127.0.0.1" in hub.refusals[0] and "refused 1 connection" in hub.refusals[0]
        assert "worker:1" not in " ".join(hub.refusals)
        assert hub.got == [] and "worker:1" not in hub.peers()
    finally:
        bad.close()


def test_clock_offset_of_a_node_is_measured():
    hub = LinkHub("s", "chief:0")
    port = hub.start()
    skewed = LinkClient("s", "worker:0", "127.0.0.1", port, lambda *_: None, clock=lambda: time.time() + 42.0)
    skewed.start()
    try:
        assert _until(lambda: hub.peers().get("worker:0") and hub.peers()["worker:0"].offset_s is not None)
        assert abs(hub.peers()["worker:0"].offset_s - 42.0) < 0.5
    finally:
        skewed.close()
        hub.close()


def test_a_closed_link_is_seen_and_a_reconnect_replaces_it(hub):
    hub.attach(lambda task, msg: hub.got.append((task, msg)))
    c = LinkClient("secret", "worker:2", "127.0.0.1", hub.port, lambda *_: None)
    c.start()
    assert _until(lambda: hub.peers().get("worker:2") and hub.peers()["worker:2"].connected)
    c.close()
    assert _until(lambda: hub.peers()["worker:2"].closed_at is not None)   # no goodbye: closed_at is set
    c2 = LinkClient("secret", "worker:2", "127.0.0.1", hub.port, lambda *_: None)
    c2.start()
    try:
        assert _until(lambda: hub.peers()["worker:2"].connected and hub.peers()["worker:2"].closed_at is None)
    finally:
        c2.send({"t": "bye"})
        c2.close()
    assert _until(lambda: hub.peers()["worker:2"].said_bye)


def test_collector_and_exit_status():
    assert collector_of(["worker:0", "worker:1", "chief:0", "ps:0"]) == "chief:0"
    assert collector_of(["worker:1", "worker:0"]) == "worker:0"
    assert node_exit_status(0) == 0 and node_exit_status(3) == 3 and node_exit_status(-9) == 137
    assert node_exit_status(None) == 1


# --- the command's edges: one-line errors, the preflight stops a broken cluster ------------------
def _node(cluster: dict, task: str, *args: str, token: str | None = TOKEN, cmd: list[str] | None = None,
          out: str | None = None) -> subprocess.Popen:
    env = clean_env(TF_CONFIG=tf_config(cluster, task))
    if token is not None:
        env["DISTDOCTOR_TOKEN"] = token
    argv = [PY, "-m", "distdoctor", "run", "--node", "--no-report", *args]
    if out:
        argv += ["--out", out]
    argv += ["--", *(cmd or [PY, "-c", "print('task ran')"])]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


@pytest.mark.parametrize("extra,token,needle", [
    ((), None, "DISTDOCTOR_TOKEN"),
    (("--workers", "2"), TOKEN, "drop --workers"),
    (("--mesh-timeout", "0"), TOKEN, "--mesh-timeout must be positive"),
    ((), "a", "too weak"),
    ((), "my-job-2024-secret", "too weak"),
])
def test_usage_errors_are_one_line(tmp_path, extra, token, needle):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    p = _node(cluster, "worker:0", *extra, token=token, out=str(tmp_path / "b"))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unknown_task_type_is_a_one_line_error(tmp_path):
    env = clean_env(TF_CONFIG=json.dumps({"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "wrker", "index": 0}}),
                    DISTDOCTOR_TOKEN=TOKEN)
    p = subprocess.run([PY, "-m", "distdoctor", "run", "--node", "--out", str(tmp_path / "b"), "--", PY, "-c", "1"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert p.returncode == 2 and "wrker" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_preflight_errors_keep_the_task_from_starting(tmp_path):
    """Two tasks disagree about the cluster: both name it, neither starts its task (exit 1)."""
    ports = free_ports(3)
    good = {"worker": [f"127.0.0.1:{p}" for p in ports[:2]]}
    odd = {"worker": [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}", f"127.0.0.1:{ports[2]}"]}
    marker = tmp_path / "started"
    cmd = [PY, "-c", f"open({str(marker)!r}, 'a').write('x')"]
    procs = [_node(good, "worker:0", "--mesh-timeout", "4", cmd=cmd, out=str(tmp_path / "w0")),
             _node(odd, "worker:1", "--mesh-timeout", "4", cmd=cmd, out=str(tmp_path / "w1"))]
    results = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [1, 1], results
    assert not marker.exists()
    for i in range(2):
        diag = json.loads((tmp_path / f"w{i}" / "diagnosis.json").read_text())
        assert diag["status"] == "failed" and "was not started" in diag["notes"][0]
        assert diag["root_cause"]["category"] in ("config_mismatch_across_workers", "network_unreachable"), diag
        assert (tmp_path / f"w{i}" / "check.json").exists()


def test_token_mismatch_is_a_usage_error(tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = [_node(cluster, "worker:0", "--mesh-timeout", "4", token=TOKEN, out=str(tmp_path / "w0")),
             _node(cluster, "worker:1", "--mesh-timeout", "4", token=OTHER_TOKEN, out=str(tmp_path / "w1"))]
    results = [p.communicate(timeout=90) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 2, (out, err)
        assert "token mismatch" in err.strip().splitlines()[-1] and "Traceback" not in err


def test_a_healthy_pair_of_nodes_shares_one_verdict(tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    cmd = [PY, "-c", "import os, time; print('hello from', os.getpid(), flush=True); time.sleep(1)"]
    procs = [_node(cluster, f"worker:{i}", "--json", "--mesh-timeout", "10", cmd=cmd, out=str(tmp_path / f"w{i}"))
             for i in range(2)]
    results = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    docs = [json.loads(out) for out, _ in results]
    for d in docs:
        assert d["status"] == "succeeded" and set(d["tasks"]) == {"worker:0", "worker:1"}
    mirrored = (tmp_path / "w0" / "logs" / "worker-1.log").read_text()
    assert "hello from" in mirrored
    assert os.path.exists(tmp_path / "w1" / "node-diagnosis.json")
