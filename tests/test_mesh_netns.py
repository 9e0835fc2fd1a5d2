"""Multi-host mesh checks on one machine: each "host" is a Linux network namespace of our own.

Every test builds its own lab: a bridge namespace and N host namespaces joined
to it by veth pairs, with addresses in a random 10.201.x.0/24 that exists only
inside those namespaces (nothing is added to the machine's own namespace). The
fixture removes the namespaces, and with them every interface and iptables
rule, even when the test fails. Needs root, ``ip`` and ``iptables``.
"""
from __future__ import annotations

import subprocess

import pytest

from mesh_helpers import PY, ROOT, clean_env, finish, kill_all, start_task, tf_config
from netns_lab import PORT, Lab, lab, sh  # noqa: F401 (lab is a fixture)

pytestmark = pytest.mark.netns


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
        assert {c for c, cul in r.codes().items() if c.startswith("DD5")} == {"DD502"}, r.doc["mesh"]["pairs"]
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
