"""The door of a listening port: who may knock, how many at once, and what is kept of those turned away.

The mesh responder and the side link's hub put a :class:`Gate` in front of their handshake:

* **before a byte is read**, :meth:`Gate.enter` caps the connections that have not authenticated yet, in all
  (:data:`MAX_PENDING`) and per source address (:data:`MAX_PENDING_PER_SOURCE`), and throttles a source that
  is no task's address once its attempts keep failing (a token bucket of :data:`REFUSAL_BURST` refusals,
  refilled at :data:`REFUSAL_RATE` per second). A task's own host is never throttled: a stranger there
  cannot be told from the task before it authenticates, and throttling the address would shut the task
  out with it. A connection over a cap is told ``busy`` and closed: a task of this job retries, a stranger
  gets nothing;
* **after the hello** (a few hundred bytes), :meth:`Gate.admit` refuses a claim of a task this cluster does
  not have, or of a task that does not connect from its own address (the host its cluster entry names, or
  loopback for a task listed on loopback);
* **of a refusal** only a count is kept, per source address and :class:`~.wire.Deny` word
  (:meth:`Gate.refuse`, :meth:`Gate.counts`): never a name or a byte the other side sent. Past
  :data:`MAX_SOURCES` addresses the rest are counted together as ``other``.

A refused stranger never decides anything: only a task that proved it holds the token can disagree with
this one (about the token, the cluster or anything else).
"""
from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping

from ..cluster.spec import AddressError, parse_address
from .wire import Deny

__all__ = ["Gate", "RefusalCount", "MAX_PENDING", "MAX_PENDING_PER_SOURCE", "host_of_peer", "task_hosts"]

MAX_PENDING = 64                 # unauthenticated connections at once (each reads at most a few KiB) ...
MAX_PENDING_PER_SOURCE = 16      # ... from one address; both at least twice the tasks (on that host)
REFUSAL_BURST = 200              # refused attempts a stranger's address may make at once ...
REFUSAL_RATE = 50.0              # ... and per second after that, before its connections are told "busy"
MAX_SOURCES = 64                 # addresses counted one by one; the rest together as "other"
NEGATIVE_TTL_S = 1.0             # a host that did not resolve is tried again after this long
_LOOPBACK = frozenset({"127.0.0.1", "::1"})


@dataclass(frozen=True)
class RefusalCount:
    """How many connections from ``source`` (an address, or ``other``) were refused, and why (a Deny word)."""

    source: str
    reason: str
    count: int


def host_of_peer(peername) -> str:
    """The address of a connection's other end, IPv4 as IPv4 on a dual-stack socket."""
    ip = peername[0] if isinstance(peername, tuple) and peername else ""
    return ip[7:] if isinstance(ip, str) and ip.startswith("::ffff:") else str(ip)


def task_hosts(spec) -> dict[str, str]:
    """Every task's host, as its cluster entry names it: where its connections must come from."""
    out = {}
    for t, a in spec.tasks():
        try:
            out[str(t)] = parse_address(a).host
        except (AddressError, TypeError):
            continue
    return out


def _is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class Gate:
    """Caps, address checks and refusal counts for one listening port. Used from one event loop only."""

    def __init__(self, hosts: Mapping[str, str], *, clock: Callable[[], float] = time.monotonic,
                 max_pending: int = MAX_PENDING, max_pending_per_source: int = MAX_PENDING_PER_SOURCE) -> None:
        self.hosts = dict(hosts)            # task -> the host its cluster entry names
        self.clock = clock
        # a big cluster's tasks all knock at once at its start (every probe, every node's link): room for two
        # connections per task, and per host for two per task on that host (all of them on loopback)
        per_host = Counter(self.hosts.values())
        self.max_pending = max(max_pending, 2 * len(self.hosts))
        self.max_per_source = max(max_pending_per_source, 2 * max(per_host.values(), default=0))
        self.pending: Counter[str] = Counter()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._buckets: dict[str, tuple[float, float]] = {}      # source -> (tokens, at)
        self._resolved: dict[str, frozenset[str]] = {}
        self._failed: dict[str, float] = {}
        self._tasks_ips: set[str] = set()     # every address a task's host resolved to so far

    # -- before a byte is read --------------------------------------------------------------------
    def enter(self, ip: str) -> bool:
        """A new connection from ``ip``: True to go on (call :meth:`leave` when its handshake ends)."""
        if (sum(self.pending.values()) >= self.max_pending or self.pending[ip] >= self.max_per_source
                or (ip not in self._tasks_ips and self._tokens(ip) < 1.0)):
            self._count(ip, Deny.BUSY)
            return False
        self.pending[ip] += 1
        return True

    def leave(self, ip: str) -> None:
        self.pending[ip] -= 1
        if self.pending[ip] <= 0:
            del self.pending[ip]

    async def prepare(self) -> None:
        """Resolve every task's host (best effort), so that their addresses are known before they knock."""
        await asyncio.gather(*(self._addresses(h) for h in set(self.hosts.values())), return_exceptions=True)

    # -- after the hello --------------------------------------------------------------------------
    async def admit(self, task: str, ip: str) -> str | None:
        """None when ``task`` is one of ours and ``ip`` is its address; else the Deny word."""
        host = self.hosts.get(task)
        if host is None:
            return Deny.UNKNOWN
        return None if ip in await self._addresses(host) else Deny.SOURCE

    async def _addresses(self, host: str) -> frozenset[str]:
        if host in self._resolved:
            return self._resolved[host]
        if self.clock() - self._failed.get(host, -1e9) < NEGATIVE_TTL_S:
            return frozenset()
        try:
            infos = await asyncio.wait_for(asyncio.get_running_loop().getaddrinfo(host, None,
                                                                                  type=socket.SOCK_STREAM), 2.0)
        except (OSError, asyncio.TimeoutError, UnicodeError):
            self._failed[host] = self.clock()
            return frozenset()
        ips = frozenset(host_of_peer(info[4]) for info in infos)
        if any(_is_loopback(i) for i in ips):
            ips |= _LOOPBACK
        self._resolved[host] = ips
        self._tasks_ips |= ips
        return ips

    # -- what is kept ------------------------------------------------------------------------------
    def refuse(self, ip: str, reason: str) -> None:
        """Count a refused connection (and charge its source's bucket)."""
        self._count(ip, reason)
        tokens, at = self._bucket(ip)
        self._buckets[ip] = (tokens - 1.0, at)

    def counts(self) -> tuple[RefusalCount, ...]:
        return tuple(RefusalCount(src, why, n) for (src, why), n in sorted(self._counts.items()))

    def refused(self) -> int:
        return sum(self._counts.values())

    def _count(self, ip: str, reason: str) -> None:
        key = ip if any(k[0] == ip for k in self._counts) or len({k[0] for k in self._counts}) < MAX_SOURCES \
            else "other"
        self._counts[(key, reason)] += 1

    def _bucket(self, ip: str) -> tuple[float, float]:
        now = self.clock()
        tokens, at = self._buckets.get(ip, (float(REFUSAL_BURST), now))
        return min(float(REFUSAL_BURST), tokens + (now - at) * REFUSAL_RATE), now

    def _tokens(self, ip: str) -> float:
        if ip not in self._buckets:
            return float(REFUSAL_BURST)
        tokens, at = self._bucket(ip)
        self._buckets[ip] = (tokens, at)
        if len(self._buckets) > 4 * MAX_SOURCES:   # forget the full buckets: they are the default
            self._buckets = {k: v for k, v in self._buckets.items() if v[0] < REFUSAL_BURST}
        return tokens

