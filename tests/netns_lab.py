"""A lab of Linux network namespaces for multi-host tests on one machine.

Each test that takes the ``lab`` fixture gets its own: a bridge namespace and N
host namespaces joined to it by veth pairs, with addresses in a random
10.201.x.0/24 that exists only inside those namespaces (nothing is added to
the machine's own namespace). The fixture removes the namespaces, and with them
every interface and iptables rule, even when the test fails. Needs root, ``ip``
and ``iptables``; parametrize indirectly with the number of hosts (default 3).
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass

import pytest

PORT = 2222


def why_not() -> str | None:
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


@contextlib.contextmanager
def make_lab(n: int):
    """Build the namespaces (see the module doc); remove them on the way out, whatever happened."""
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


@pytest.fixture
def lab(request):
    reason = why_not()
    if reason:
        pytest.skip(reason)
    with make_lab(getattr(request, "param", 3)) as built:
        yield built
