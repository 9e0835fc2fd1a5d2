"""Multi-host mesh checks on one machine: each "host" is a Linux network namespace of our own.

Every test builds its own lab: a bridge namespace and N host namespaces joined
to it by veth pairs, with addresses in a random 10.201.x.0/24 that exists only
inside those namespaces (nothing is added to the machine's own namespace). The
fixture removes the namespaces, and with them every interface and iptables
rule, even when the test fails. Needs root, ``ip`` and ``iptables``.
"""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass

import pytest

from mesh_helpers import PY, ROOT, clean_env, finish, kill_all, start_task, tf_config

pytestmark = pytest.mark.netns
PORT = 2222


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "iptables"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (apt-get install -y iproute2 iptables)"
    return None


def sh(*cmd: str) -> None:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")


@dataclass
class Lab:
    hosts: list[str]          # namespace names, one per task
    addresses: list[str]      # their 10.201.x.y addresses

    def cluster(self) -> dict:
        return {"worker": [f"{a}:{PORT}" for a in self.addresses]}


@pytest.fixture
def lab(request):
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    n = getattr(request, "param", 3)
    tag = secrets.token_hex(3)
    net = 10 + secrets.randbelow(240)
    bridge = f"dd-{tag}-br"
    hosts = [f"dd-{tag}-h{i}" for i in range(n)]
    created: list[str] = []
    try:
        sh("ip", "netns", "add", bridge)
        created.append(bridge)
        sh("ip", "-n", bridge, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", bridge, "link", "set", "br0", "up")
        addresses = []
        for i, ns in enumerate(hosts):
            sh("ip", "netns", "add", ns)
            created.append(ns)
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", f"p{i}", "netns", bridge)
            sh("ip", "-n", bridge, "link", "set", f"p{i}", "master", "br0", "up")
            addr = f"10.201.{net}.{i + 1}"
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            addresses.append(addr)
        yield Lab(hosts, addresses)
    finally:
        for ns in reversed(created):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def run_lab(lab: Lab, configs: dict[str, dict], timeout: float = 4.0) -> list:
    runs = [start_task(cluster, task, netns=lab.hosts[int(task.split(":")[1])], timeout=timeout)
            for task, cluster in configs.items()]
    try:
        return finish(runs, 60)
    finally:
        kill_all(runs)


def test_lab_hosts_reach_each_other(lab):
    runs = run_lab(lab, {f"worker:{i}": lab.cluster() for i in range(3)})
    for r in runs:
        assert r.doc and r.doc["mesh"]["complete"], r.stderr
        assert [p["outcome"] for p in r.doc["mesh"]["pairs"]] == ["ok"] * 6


def test_dropped_port_is_a_firewall_on_that_task(lab):
    sh("ip", "netns", "exec", lab.hosts[1], "iptables", "-A", "INPUT", "-p", "tcp", "--dport", str(PORT), "-j", "DROP")
    runs = run_lab(lab, {f"worker:{i}": lab.cluster() for i in range(3)}, timeout=4)
    for r in runs:
        assert r.rc == 1 and r.doc, r.stderr
        f = r.finding("DD502")
        assert f["culprit"] == "worker:1" and f["category"] == "firewall_or_port_blocked", r.doc["findings"]
        assert {c for c, cul in r.codes().items() if c.startswith("DD5")} == {"DD502"}
        assert r.doc["mesh"]["verdict_at"] - r.doc["mesh"]["started_at"] <= 4.0


def test_localhost_for_a_remote_peer(lab):
    good = lab.cluster()
    bad = {"worker": [good["worker"][0], f"localhost:{PORT}", good["worker"][2]]}
    runs = run_lab(lab, {"worker:0": bad, "worker:1": good, "worker:2": good})
    for r in runs:
        assert r.rc == 1 and r.doc, r.stderr
        f = r.finding("DD511")
        assert f["culprit"] == "worker:0" and f["category"] == "config_tf_config", r.doc["findings"]
        assert "worker:1" in f["summary"] and "localhost" in f["summary"]
    static = subprocess.run(["ip", "netns", "exec", lab.hosts[0], PY, "-m", "distdoctor", "check", "--static", "--json",
                             "--tf-config", tf_config(bad, "worker:0")], capture_output=True, text=True, cwd=ROOT,
                            env=clean_env(), timeout=60)
    assert '"DD309"' in static.stdout and '"config_tf_config"' in static.stdout
