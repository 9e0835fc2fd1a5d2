"""The collector's mirror of another node's task, fed by hand (no network, no TensorFlow)."""
from __future__ import annotations

import time

from distdoctor.diagnose.engine import diagnose
from distdoctor.supervise.node import NodeCluster, RemoteProcess, node_supervisor
from distdoctor.supervise.sidelink import PeerState
from distdoctor.supervise.supervisor import RunConfig, Supervisor

SKEW = 42.0   # worker:1's clock runs 42 s ahead of the collector's


class FakeHub:
    def __init__(self) -> None:
        self.state = {"worker:1": PeerState("worker:1", host="10.0.0.2", connected=True, last_heard=time.time(),
                                            offset_s=SKEW)}
        self.sent: list = []
        self.refusals: list = []

    def offset(self, task):
        return self.state[task].offset_s

    def peers(self):
        return dict(self.state)

    def send(self, task, msg):
        self.sent.append((task, msg))


def collector(tmp_path, hub) -> Supervisor:
    (tmp_path / "logs").mkdir()
    cfg = RunConfig(argv=["python", "train.py"], out_dir=str(tmp_path),
                    cluster=NodeCluster("worker:0", ("worker:0", "worker:1"), "multi_worker_mirrored", "{}"))
    return node_supervisor(cfg, collector="worker:0", hub=hub, expected=("worker:0", "worker:1"), peer_timeout=5)


def test_a_remote_task_is_mirrored_on_the_collectors_clock(tmp_path):
    hub = FakeHub()
    sup = collector(tmp_path, hub)
    t0 = time.time() + SKEW - 5                     # 5 s ago on worker:1's clock (its news is never ahead of ours)
    sup.role.on_peer("worker:1", {"t": "start", "pid": 77, "started_at": t0, "argv": ["python", "train.py"], "host": "h1"})
    sup.role.on_peer("worker:1", {"t": "line", "ts": t0 + 1, "text": "Epoch 1/2"})
    sup.role.on_peer("worker:1", {"t": "start", "pid": 78, "started_at": t0 + 2, "argv": [], "host": "h1"})  # a restart
    sup.role.on_peer("worker:1", {"t": "exit", "ended_at": t0 + 3, "rc": -9, "killed": False,
                                  "oom": {"cgroup": "v1:/job", "limit_bytes": 1 << 30, "oom_kill_count": 1,
                                          "kernel_lines": ["Killed process 77 (python)"]}})
    sup.turn(time.time())
    track = sup.tracks["worker:1"]
    proc = track.proc
    assert isinstance(proc, RemoteProcess) and proc.pid == 77 and track.host == "h1"
    assert abs(proc.started_at - (t0 - SKEW)) < 1e-6 and abs(proc.last_output_at - (t0 + 1 - SKEW)) < 1e-6
    assert abs(proc.ended_at - (t0 + 3 - SKEW)) < 1e-6 and proc.returncode == -9 and not proc.alive
    assert track.oom.oom_kill_count == 1 and track.oom.kernel_lines == ("Killed process 77 (python)",)
    proc.drain()
    log = (tmp_path / "logs" / "worker-1.log").read_text()
    assert log.count("Epoch 1/2") == 1                # the restart's "start" did not truncate it
    # the engine reads the mirrored exit and OOM evidence like a local one
    obs = sup.observation()
    assert any("+42.00 s off the collector's" in n for n in obs.notes)
    d = diagnose(obs, detected_at=time.time()).to_json()
    assert (d["root_cause"]["category"], d["root_cause"]["culprit"]) == ("oom_host", "worker:1")


def test_a_link_closed_without_a_goodbye_makes_the_node_lost(tmp_path):
    hub = FakeHub()
    sup = collector(tmp_path, hub)
    now = time.time()
    sup.role.on_peer("worker:1", {"t": "start", "pid": 77, "started_at": now + SKEW - 10, "argv": [], "host": "h1"})
    sup.turn(now)
    assert sup.tracks["worker:1"].proc.alive and sup.state.first_failure is None
    hub.state["worker:1"] = PeerState("worker:1", host="10.0.0.2", connected=False, last_heard=now - 6,
                                      closed_at=now - 5, offset_s=SKEW)
    sup.turn(now)
    track = sup.tracks["worker:1"]
    assert not track.proc.alive and track.lost_at == now - 6 and "without a goodbye" in track.lost_how
    assert sup.state.first_failure == (now - 6, "worker:1")
    track.proc.drain()
    d = diagnose(sup.observation(), detected_at=now).to_json()
    rc = d["root_cause"]
    assert (rc["code"], rc["culprit"], rc["category"]) == ("DD112", "worker:1", "peer_unresponsive")


def test_a_stop_asks_the_node_and_waits_for_its_exit(tmp_path):
    hub = FakeHub()
    sup = collector(tmp_path, hub)
    sup.role.on_peer("worker:1", {"t": "start", "pid": 77, "started_at": time.time() + SKEW, "argv": [], "host": "h1"})
    sup.turn(time.time())
    proc = sup.tracks["worker:1"].proc
    import threading
    threading.Timer(0.2, lambda: sup.role.on_peer("worker:1", {"t": "exit", "ended_at": time.time() + SKEW, "rc": -15,
                                                           "killed": True})).start()
    t = time.time()
    proc.terminate(grace=3)
    assert time.time() - t < 2 and hub.sent == [("worker:1", {"t": "stop", "grace": 3})]
    assert proc.killed_by_supervisor and proc.returncode == -15
    proc.drain()
