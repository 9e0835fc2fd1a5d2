"""The local launcher's port picker: free ports below the kernel's ephemeral range, never one that is taken."""
from __future__ import annotations

import random
import socket

import pytest

from distdoctor.cluster import local
from distdoctor.cluster.local import build_local_cluster, ephemeral_low, pick_free_ports


def _binds(port: int) -> bool:
    for host in ("0.0.0.0", "127.0.0.1"):
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def test_ports_are_distinct_free_and_below_the_ephemeral_range():
    low = ephemeral_low()
    for _ in range(20):
        ports = pick_free_ports(6)
        assert len(set(ports)) == 6
        assert all(10000 <= p < low for p in ports), ports
        assert all(_binds(p) for p in ports)


def test_consecutive_ports_for_a_port_base():
    base, nxt, third = pick_free_ports(3, consecutive=True)
    assert (nxt, third) == (base + 1, base + 2)
    assert base + 2 < ephemeral_low()


def test_a_port_taken_on_any_address_is_never_chosen():
    # The seeded draw's first candidates are taken: one listened on by a stranger on the wildcard address, one
    # on loopback; the picker must step past both.
    low = ephemeral_low()
    draw = random.Random(7)
    first, second = draw.randrange(10000, low), draw.randrange(10000, low)
    held = []
    for host, port in (("0.0.0.0", first), ("127.0.0.1", second)):
        s = socket.socket()
        try:
            s.bind((host, port))
        except OSError:
            s.close()
            pytest.skip(f"port {port} is in use on this machine already")
        s.listen()
        held.append(s)
    try:
        ports = pick_free_ports(2, rng=random.Random(7))
        assert first not in ports and second not in ports
        assert len(ports) == 2 and all(_binds(p) for p in ports)
    finally:
        for s in held:
            s.close()


def test_a_crowded_range_falls_back_to_the_kernels_choice(monkeypatch):
    monkeypatch.setattr(local, "ephemeral_low", lambda: 10003)
    ports = pick_free_ports(3)
    assert len(set(ports)) == 3 and all(p >= 1024 for p in ports)
    with pytest.raises(OSError):
        pick_free_ports(3, consecutive=True)


def test_the_range_is_read_from_the_kernel(tmp_path):
    f = tmp_path / "range"
    f.write_text("20000\t60999\n")
    assert ephemeral_low(str(f)) == 20000
    assert ephemeral_low(str(tmp_path / "missing")) == 32768


def test_the_local_cluster_gets_its_ports_from_the_picker():
    cluster = build_local_cluster(3, 1, False)
    ports = [int(a.rsplit(":", 1)[1]) for addrs in cluster.jobs.values() for a in addrs]
    assert len(set(ports)) == 5 and all(p < ephemeral_low() for p in ports)  # a chief comes with a ps
