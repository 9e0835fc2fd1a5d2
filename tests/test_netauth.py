"""``run --node`` on a network with strangers on it: real processes, real sockets (loopback; a namespace where a
second host is needed). No TensorFlow: the tasks are plain Python.

A stranger here knows the protocol but not the token. It claims tasks with wrong MACs, claims tasks the cluster
does not have, claims a task from another address (127.0.0.2 on loopback), and floods the ports with hellos of
32 MiB. The job must not notice beyond a count in its diagnosis.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import psutil
import pytest

from distdoctor.preflight.wire import LINK_MAGIC, MAGIC, Kind, Peer, Sealer, client_handshake, encode
from distdoctor.safety.secret import token_problem
from distdoctor.supervise.mirror import CollectorRole
from distdoctor.supervise.nodetask import NodeCluster, OwnTask
from distdoctor.supervise.sidelink import LinkClient, LinkHub
from mesh_helpers import ROOT, TOKEN, clean_env, free_ports, tf_config, until as _until
from netns_lab import PORT, lab  # noqa: F401 (lab is a fixture)

PY = sys.executable
STRANGER_NAME = "intruder-name-xyzzy"   # a task name only the stranger uses: it must appear nowhere


# --- the stranger --------------------------------------------------------------------------------
def _hello(task: str) -> bytes:
    return encode(Kind.HELLO, {"task": task, "instance": "abcdef", "nonce": os.urandom(16).hex()})


def _knock(port: int, magic: bytes, task: str, source: str = "127.0.0.1") -> None:
    """Claim ``task`` and answer the challenge with a MAC made of the wrong token."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(source, 0)) as s:
            s.sendall(magic + _hello(task))
            s.recv(4096)
            s.sendall(encode(Kind.AUTH, {"mac": "00" * 32}))
            s.recv(4096)
    except OSError:
        pass


def _big_hello(port: int, magic: bytes) -> None:
    """A hello that says it is 32 MiB long, and then sends them."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(magic + struct.pack(">IB", (32 << 20) - 1, Kind.HELLO))
            chunk = b"\x41" * (1 << 20)
            for _ in range(32):
                s.sendall(chunk)
    except OSError:
        pass


class Stranger:
    """Threads that keep knocking at ``ports`` (magic per port) until stopped."""

    def __init__(self, ports: dict[int, bytes]) -> None:
        self.ports, self.stop, self.threads = ports, threading.Event(), []
        self.attempts = 0

    def _loop(self, fn) -> None:
        while not self.stop.is_set():
            for port, magic in self.ports.items():
                fn(port, magic)
                self.attempts += 1
            time.sleep(0.01)

    def __enter__(self) -> "Stranger":
        kinds = [lambda p, m: _knock(p, m, "worker:1"), lambda p, m: _knock(p, m, f"{STRANGER_NAME}:7"),
                 lambda p, m: _knock(p, m, "worker:1", source="127.0.0.2")]
        kinds += [_big_hello] * 8
        for fn in kinds:
            t = threading.Thread(target=self._loop, args=(fn,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(10)


def _node(cluster: dict, task: str, out: str, cmd: list[str], *extra: str) -> subprocess.Popen:
    env = clean_env(TF_CONFIG=tf_config(cluster, task), DISTDOCTOR_TOKEN=TOKEN)
    return subprocess.Popen([PY, "-m", "distdoctor", "run", "--node", "--no-report", "--json", "--out", out,
                             "--mesh-timeout", "20", *extra, "--", *cmd],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def test_a_stranger_cannot_stop_the_job_nor_grow_the_collector(tmp_path):
    """Wrong MACs, unknown claims, a claim from another address and 32 MiB hellos at both TF ports and the side
    link, for the whole run: both tasks run and exit 0, the collector stays small, only counts are kept, and
    the token is in neither task's environment."""
    ports = free_ports(3)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports[:2]]}
    side = ports[2]
    script = ("import os, sys, time; env = open('/proc/self/environ', 'rb').read(); "
              "open(sys.argv[1], 'wb').write(env); print('step', flush=True); time.sleep(4)")
    procs = [_node(cluster, f"worker:{i}", str(tmp_path / f"w{i}"),
                   [PY, "-c", script, str(tmp_path / f"environ-{i}")], "--side-port", str(side)) for i in range(2)]
    peak = 0
    collector = psutil.Process(procs[0].pid)
    with Stranger({ports[0]: MAGIC, ports[1]: MAGIC, side: LINK_MAGIC}) as stranger:
        while any(p.poll() is None for p in procs):
            try:
                peak = max(peak, collector.memory_info().rss)
            except psutil.Error:
                pass
            time.sleep(0.05)
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-3000:] for _, err in results]
    print(f"stranger attempts {stranger.attempts}, collector peak RSS {peak / 2**20:.0f} MiB")
    assert stranger.attempts > 100
    assert peak < 100 << 20, f"collector RSS peaked at {peak >> 20} MiB"
    diag = json.loads(results[0][0])
    assert diag["status"] == "succeeded" and set(diag["tasks"]) == {"worker:0", "worker:1"}
    assert any("the side link refused" in n for n in diag["notes"]), diag["notes"]
    check = (tmp_path / "w0" / "check.json").read_text()
    bundle = check + (tmp_path / "w0" / "diagnosis.json").read_text()
    assert STRANGER_NAME not in bundle and "AAAA" not in bundle
    assert len(bundle) < 1 << 20
    refusals = json.loads(check)["mesh"]["refusals"]
    assert refusals and all(r["claimed"] is None for r in refusals)
    # the token is the supervisors' alone; the in-task agent still had its socket
    for i in range(2):
        env = (tmp_path / f"environ-{i}").read_bytes()
        assert TOKEN.encode() not in env and b"DISTDOCTOR_TOKEN" not in env and b"DISTDOCTOR_SOCK=" in env


# --- the side link: one live link per task, every frame sealed --------------------------------------
@pytest.fixture
def hub():
    h = LinkHub(TOKEN, "worker:0", host="127.0.0.1",
                hosts={"worker:0": "127.0.0.1", "worker:1": "127.0.0.1", "worker:2": "127.0.0.1"})
    h.start()
    h.got = []
    h.attach(lambda task, msg: h.got.append((task, msg)))
    yield h
    h.close()


def test_a_live_link_cannot_be_replaced_nor_its_exit_forged(hub):
    real = LinkClient(TOKEN, "worker:1", "127.0.0.1", hub.port, lambda *_: None)
    real.start()
    try:
        assert _until(lambda: hub.peers().get("worker:1") and hub.peers()["worker:1"].connected)
        # a second connection with the token, claiming the same task, while the first lives
        thief = LinkClient(TOKEN, "worker:1", "127.0.0.1", hub.port, lambda *_: None)
        thief.start()
        thief.send({"t": "exit", "ended_at": time.time(), "rc": 137, "killed": False, "oom": None})
        try:
            assert _until(lambda: any(c.reason == "task-already-linked" for c in hub.refusal_counts()))
            time.sleep(1.5)
            assert not thief.connected and "live link" in thief.last_error
        finally:
            thief.close()
        real.send({"t": "line", "ts": time.time(), "text": "still training"})
        assert _until(lambda: ("worker:1", {"t": "line", "ts": pytest.approx(time.time(), abs=5),
                                            "text": "still training"}) in hub.got)
        assert not [m for _, m in hub.got if m["t"] == "exit"]
        assert hub.peers()["worker:1"].connected
    finally:
        real.close()


def _raw_link(port: int, task: str):
    """A token holder's own connection, after the handshake: (socket, our sealer)."""
    import asyncio

    async def go():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        hs = await client_handshake(reader, writer, TOKEN.encode(), Peer(task, "abcdef"), 5.0, magic=LINK_MAGIC)
        assert hs.failure is None, hs.detail
        sock = writer.get_extra_info("socket").dup()
        writer.transport.abort()
        return sock, hs.keys

    sock, keys = asyncio.run(go())
    sock.setblocking(True)
    return sock, Sealer(keys[0])


@pytest.mark.parametrize("attack", ["unsealed", "replayed", "wrong-key"])
def test_a_frame_that_is_not_sealed_for_this_link_ends_it(hub, attack):
    sock, sealer = _raw_link(hub.port, "worker:2")
    try:
        assert _until(lambda: hub.peers().get("worker:2") and hub.peers()["worker:2"].connected)
        good = sealer.seal(Kind.LINK, {"t": "line", "ts": time.time(), "text": "one"})
        forger = Sealer(os.urandom(32))   # right sequence number, not this link's key
        forger.seq = 1
        bad = {"unsealed": encode(Kind.LINK, {"t": "exit", "rc": 137}),
               "replayed": good,
               "wrong-key": forger.seal(Kind.LINK, {"t": "exit", "rc": 137})}[attack]
        sock.sendall(good + bad)
        assert _until(lambda: not hub.peers()["worker:2"].connected)
        assert [m["text"] for _, m in hub.got if m["t"] == "line"] == ["one"]
        assert not [m for _, m in hub.got if m["t"] == "exit"]
    finally:
        sock.close()


def test_forged_timestamps_are_clamped_to_the_collectors_clock():
    """A node's times are put on our clock; one in the future, before the run or not a number is clamped and
    counted (the time is passed in: the role reads it from its supervisor's clock)."""
    now = 1_000_000.0

    class Clock:
        def now(self):
            return now

    role = CollectorRole(OwnTask(NodeCluster("worker:0", ("worker:0", "worker:1"), "x", "{}")), hub=None,
                         expected=("worker:0", "worker:1"), peer_timeout=5)
    role.sup = type("Sup", (), {"clock": Clock()})()
    role._started_wall = now - 60
    assert role._time("worker:1", now - 10 + 42, 42.0) == now - 10          # on our clock, as it came
    assert role._time("worker:1", now + 3600, 0.0) == now                   # the future: now
    assert role._time("worker:1", 12.0, 0.0) == now - 60 - 120              # before the run: its start
    assert role._time("worker:1", float("nan"), 0.0) == now
    assert role._time("worker:1", "soon", 0.0) == now
    assert any("4 timestamp(s) from worker:1" in n and "clamped" in n for n in role.notes())


# --- the token ------------------------------------------------------------------------------------
@pytest.mark.parametrize("token,ok", [("a", False), ("tok-a", False), ("a" * 64, False), ("my-job-2024-secret", False),
                                      ("0123456789" * 3, False), (TOKEN, True),
                                      ("8KLFrrG4TTCiudlH7yX0rw==", True), ("eJbAGwvNl3341Dpg1CoaSw", True)])
def test_token_strength(token, ok):
    assert (token_problem(token) is None) is ok


@pytest.mark.parametrize("cmd", [["run", "--node", "--", PY, "-c", "1"], ["check", "--mesh"]])
def test_a_short_token_is_a_one_line_error(tmp_path, cmd):
    port = free_ports(1)[0]
    env = clean_env(TF_CONFIG=tf_config({"worker": [f"127.0.0.1:{port}"]}, "worker:0"), DISTDOCTOR_TOKEN="a")
    p = subprocess.run([PY, "-m", "distdoctor", *cmd[:2], "--out", str(tmp_path / "b"), *cmd[2:]]
                       if cmd[0] == "run" else [PY, "-m", "distdoctor", *cmd],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "too weak" in p.stderr and "Traceback" not in p.stderr


# --- where it listens -----------------------------------------------------------------------------
def test_the_side_link_listens_on_the_collectors_address_only(hub):
    assert hub.bound_to == "127.0.0.1"
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", hub.port), timeout=2).close()


def test_a_claim_from_another_address_is_refused_and_told(hub):
    """worker:1 is listed on 127.0.0.1: a connection from 127.0.0.2 cannot speak for it, token or not."""
    import asyncio

    async def go():
        reader, writer = await asyncio.open_connection("127.0.0.1", hub.port, local_addr=("127.0.0.2", 0))
        hs = await client_handshake(reader, writer, TOKEN.encode(), Peer("worker:1", "abcdef"), 5.0,
                                    magic=LINK_MAGIC)
        writer.close()
        return hs

    hs = asyncio.run(go())
    assert hs.failure == "error" and hs.reason == "wrong-source-address"
    assert _until(lambda: any(c.source == "127.0.0.2" and c.reason == "wrong-source-address"
                              for c in hub.refusal_counts()))
    assert "worker:1" not in hub.peers()


# --- a stranger on another host (network namespaces) ------------------------------------------------
_STRANGER_SCRIPT = r'''
import json, os, socket, struct, sys, time
deadline = time.time() + float(sys.argv[1])   # then PORT@HOST ...
def frame(kind, obj):
    b = json.dumps(obj).encode()
    return struct.pack(">IB", len(b), kind) + b
n = 0
while time.time() < deadline:
    for port, host in [p.split("@") for p in sys.argv[2:]]:
        try:
            with socket.create_connection((host, int(port)), timeout=1) as s:
                s.sendall(b"DDMESH1\n" + frame(1, {"task": "worker:1", "instance": "ab", "nonce": os.urandom(16).hex()}))
                s.recv(4096)
                s.sendall(frame(3, {"mac": "00" * 32}))
                s.recv(4096)
                n += 1
        except OSError:
            pass
    time.sleep(0.005)
print(n)
'''


@pytest.mark.netns
@pytest.mark.parametrize("lab", [3], indirect=True)
def test_a_stranger_on_another_host_claiming_a_task_is_refused_by_address(lab, tmp_path):
    """worker:0 and worker:1 on two hosts, a stranger on a third claims worker:1 at both: both run and exit 0,
    and what they kept of it is a count under the stranger's address."""
    cluster = lab.cluster()
    cluster["worker"] = cluster["worker"][:2]
    stranger = subprocess.Popen(["ip", "netns", "exec", lab.hosts[2], PY, "-c", _STRANGER_SCRIPT, "12",
                                 *(f"{PORT}@{a}" for a in lab.addresses[:2])],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    procs = []
    for i in range(2):
        env = clean_env(TF_CONFIG=tf_config(cluster, f"worker:{i}"), DISTDOCTOR_TOKEN=TOKEN)
        procs.append(subprocess.Popen(["ip", "netns", "exec", lab.hosts[i], PY, "-m", "distdoctor", "run", "--node",
                                       "--no-report", "--json", "--out", str(tmp_path / f"w{i}"), "--mesh-timeout", "10",
                                       "--", PY, "-c", "import time; time.sleep(1)"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env))
    try:
        results = [p.communicate(timeout=90) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        stranger.kill()
        stranger.communicate()
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in results]
    refused = [r for i in range(2) for r in json.loads((tmp_path / f"w{i}" / "check.json").read_text())["mesh"]["refusals"]]
    assert refused and {r["peer"] for r in refused} == {lab.addresses[2]}, refused
    assert {r["reason"] for r in refused} <= {"wrong-source-address", "busy"} and all(r["claimed"] is None for r in refused)
