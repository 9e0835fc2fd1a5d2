"""The side link between ``run --node`` supervisors.

Every node supervisor keeps one TCP connection to the *collector* (the
supervisor of ``chief:0``, or of ``worker:0`` where there is no chief), which
writes the cluster-wide diagnosis. The connection starts with the mesh check's
mutual HMAC handshake (:mod:`distdoctor.preflight.wire`) under its own magic,
keyed with the job's shared token (``DISTDOCTOR_TOKEN``): a peer without the
token is refused and never heard. After that, each frame is one JSON message
``{"t": type, ...}``, sealed with the connection's own keys (HMAC-SHA256 over a
sequence number, :class:`~distdoctor.preflight.wire.Sealer`): a frame that is
forged, replayed or out of order ends the link.

The hub listens on the collector's own address (the one its cluster entry
names), behind a :class:`~distdoctor.preflight.gate.Gate` (capped
unauthenticated connections, a hello of a few hundred bytes, a claimed task
must connect from its own address, refusals kept as counts). One link per
task: a second connection that claims a task whose link is alive is refused
(:data:`~distdoctor.preflight.wire.Deny.TAKEN`); it may replace a link only
once that link closed or fell silent for :data:`STALE_S`.

Both ends send a heartbeat every :data:`HEARTBEAT_S`; a heartbeat carries the
sender's clock, so the collector can put every node's timestamps on its own
clock (the smallest observed delay wins, as in NTP's filter). Silence is
judged by the owner of the link (:mod:`.node`), not here: this module only
moves messages and keeps ``last_heard``.

Each end runs its own asyncio loop in a daemon thread; ``send`` may be called
from any thread and never blocks.
"""
from __future__ import annotations

import asyncio
import collections
import errno
import math
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

from ..preflight.gate import Gate, RefusalCount, host_of_peer
from .loopthread import LoopThread as _LoopThread
from ..preflight.wire import (LINK_MAGIC, Deny, Kind, Opener, Peer, ProtocolError, Sealer, accept_frame,
                              client_handshake, decode_json, deny, server_handshake)

__all__ = ["HEARTBEAT_S", "LinkHub", "LinkClient", "PeerState"]

HEARTBEAT_S = 1.0
HANDSHAKE_TIMEOUT_S = 5.0
MAX_OUTBOX = 200_000   # messages kept while the link is down (then the oldest lines are dropped)
STALE_S = 3 * HEARTBEAT_S   # a link silent this long may be replaced by the same task's new connection

OnMessage = Callable[[str, dict], None]


def _listening_socket(host: str | None, port: int) -> socket.socket:
    """One socket on ``host`` (the collector's own address), else on every interface (IPv6 dual-stack where
    there is IPv6), so port 0 means one port.

    ``asyncio.start_server(host=None, port=0)`` would bind IPv4 and IPv6 separately, each on its own
    ephemeral port, and the port we advertise could be the one the peers' IPv4 connection does not reach.
    A ``host`` that is not this machine's (a service address behind NAT) falls back to every interface.
    """
    if host:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except (OSError, UnicodeError):
            infos = []
        for family, _, _, _, addr in infos:   # the first of the host's addresses that is this machine's
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(addr)
                sock.listen(128)
                sock.setblocking(False)
                return sock
            except OSError as exc:
                sock.close()
                if exc.errno not in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    raise
    if socket.has_ipv6:
        try:
            sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            addr = ("::", port)
        except OSError:
            sock, addr = socket.socket(socket.AF_INET, socket.SOCK_STREAM), ("0.0.0.0", port)
    else:
        sock, addr = socket.socket(socket.AF_INET, socket.SOCK_STREAM), ("0.0.0.0", port)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError:
            if sock.family != socket.AF_INET6:
                raise
            sock.close()   # IPv6 present but unusable (disabled on the interfaces): IPv4 alone
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("0.0.0.0", port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def _read_message(reader: asyncio.StreamReader, opener: Opener) -> dict:
    kind, body = await opener.read(reader)
    if kind != Kind.LINK:
        raise ProtocolError(f"unexpected frame kind {kind} on the side link")
    msg = decode_json(body)
    if not isinstance(msg.get("t"), str):
        raise ProtocolError("side-link message without a type")
    return msg


class _OpenGate(Gate):
    """The hub's gate without a cluster (tests, a lone hub): caps and counts, but any task from anywhere."""

    async def admit(self, task: str, ip: str) -> str | None:
        return None


@dataclass
class PeerState:
    """What the collector knows about one node supervisor's link."""

    task: str
    host: str = ""
    connected: bool = False
    connected_at: float | None = None
    last_heard: float | None = None
    offset_s: float | None = None    # that node's clock minus ours
    said_bye: bool = False
    closed_at: float | None = None   # the link closed without a goodbye at this time


class LinkHub:
    """The collector's end: accepts authenticated node supervisors, one live link per task.

    ``hosts`` (task -> the host its cluster entry names) says which tasks may link and from where;
    None accepts any task from any address (a hub without a cluster: tests).
    """

    def __init__(self, token: str, me: str, on_message: OnMessage | None = None, *, host: str | None = None,
                 port: int = 0, clock: Callable[[], float] = time.time, hosts=None) -> None:
        self.token, self.me, self.on_message, self.clock = token.encode(), me, on_message, clock
        self._backlog: list[tuple[str, dict]] = []   # what arrived before a handler was attached
        self.host, self.port = host, port
        self.instance = os.urandom(6).hex()
        self._peers: dict[str, PeerState] = {}
        self._writers: dict[str, tuple[asyncio.StreamWriter, Sealer]] = {}
        self._lock = threading.Lock()
        self.gate = Gate(hosts) if hosts is not None else _OpenGate({})
        self._lt: _LoopThread | None = None
        self._server = None
        self.bound_to = ""

    def start(self) -> int:
        """Bind (``host``, else all interfaces) and serve; returns the port."""
        self._lt = _LoopThread("dd-link-hub")
        try:
            sock = _listening_socket(self.host, self.port)
            self._server = self._lt.run(asyncio.start_server(self._serve, sock=sock), 10.0)
        except Exception:
            self._lt.stop()
            raise
        name = self._server.sockets[0].getsockname()
        self.port, self.bound_to = name[1], name[0]
        self._lt.spawn(self._heartbeat())
        self._lt.spawn(self.gate.prepare())   # the tasks' addresses, in the background
        return self.port

    def offset(self, task: str) -> float:
        """That node's clock minus ours (0 while unknown): subtract it from the node's timestamps."""
        with self._lock:
            st = self._peers.get(task)
            return st.offset_s if st is not None and st.offset_s is not None else 0.0

    def peers(self) -> dict[str, PeerState]:
        with self._lock:
            return {k: PeerState(**v.__dict__) for k, v in self._peers.items()}

    def refusal_counts(self) -> tuple[RefusalCount, ...]:
        with self._lock:
            return self.gate.counts()

    @property
    def refusals(self) -> list[str]:
        """The refused connections, one line per source address and reason (counts only)."""
        return [f"the side link refused {c.count} connection(s) from {c.source}: {c.reason}"
                for c in self.refusal_counts()]

    def _refuse(self, ip: str, reason: str) -> None:
        with self._lock:
            self.gate.refuse(ip, reason)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ip = host_of_peer(writer.get_extra_info("peername"))
        with self._lock:
            entered = self.gate.enter(ip)
        if not entered:
            deny(writer, Deny.BUSY)
            writer.close()
            return
        try:
            hs = await server_handshake(reader, writer, self.token, Peer(self.me, self.instance),
                                        HANDSHAKE_TIMEOUT_S, magic=LINK_MAGIC, confirm=False,
                                        admit=lambda task: self.gate.admit(task, ip))
        finally:
            with self._lock:
                self.gate.leave(ip)
        if hs.refusal is not None:
            self._refuse(ip, hs.refusal)
            writer.close()
            return
        task = hs.peer.task
        now = self.clock()
        with self._lock:
            st = self._peers.get(task)
            live = (task in self._writers and st is not None and st.connected
                    and now - (st.last_heard or 0.0) < STALE_S)
        if live:   # the task's link is alive: a second connection does not replace it
            self._refuse(ip, Deny.TAKEN)
            deny(writer, Deny.TAKEN)
            writer.close()
            return
        old = self._writers.get(task)
        if old is not None:  # the node reconnected after its link closed or fell silent: the new one replaces it
            old[0].close()
        accept_frame(writer)
        send_key, recv_key = hs.keys
        self._writers[task] = (writer, Sealer(send_key))
        opener = Opener(recv_key)
        with self._lock:
            st = self._peers.setdefault(task, PeerState(task))
            st.host, st.connected, st.connected_at, st.last_heard, st.closed_at = ip, True, now, now, None
        self._deliver(task, {"t": "linked", "host": ip})
        try:
            while True:
                msg = await _read_message(reader, opener)
                now = self.clock()
                with self._lock:
                    st.last_heard = now
                    sent = msg.get("sent")
                    if isinstance(sent, (int, float)) and math.isfinite(sent):
                        skew = float(sent) - now     # their clock - ours - delay: the largest is the best
                        st.offset_s = skew if st.offset_s is None else max(st.offset_s, skew)
                    if msg["t"] == "bye":
                        st.said_bye = True
                if msg["t"] != "hb":
                    self._deliver(task, msg)
        except (EOFError, ProtocolError, ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            if self._writers.get(task, (None,))[0] is writer:
                del self._writers[task]
                with self._lock:
                    st.connected = False
                    if not st.said_bye:
                        st.closed_at = self.clock()
            writer.close()

    def _deliver(self, task: str, msg: dict) -> None:
        """On the loop thread only, so messages reach the handler in the order they came."""
        if self.on_message is None:
            self._backlog.append((task, msg))
            return
        try:
            self.on_message(task, msg)
        except Exception:
            pass

    def attach(self, on_message: OnMessage) -> None:
        """Hand every message, those that came before first, to ``on_message`` (on the link's thread)."""
        def attach_now() -> None:
            self.on_message = on_message
            backlog, self._backlog = self._backlog, []
            for task, msg in backlog:
                self._deliver(task, msg)
        if self._lt is None:
            self.on_message = on_message
        else:
            self._lt.call(attach_now)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            self._write_all({"t": "hb", "sent": self.clock()})

    @staticmethod
    def _put(entry: tuple[asyncio.StreamWriter, Sealer], msg: dict) -> None:
        w, sealer = entry
        if not w.is_closing():
            try:
                w.write(sealer.seal(Kind.LINK, msg))
            except (OSError, RuntimeError):
                pass

    def _write(self, task: str, msg: dict) -> None:
        entry = self._writers.get(task)
        if entry is not None:
            self._put(entry, msg)

    def _write_all(self, msg: dict) -> None:
        for entry in list(self._writers.values()):
            self._put(entry, msg)

    def send(self, task: str, msg: dict) -> None:
        if self._lt is not None:
            self._lt.call(self._write, task, msg)

    def broadcast(self, msg: dict) -> None:
        if self._lt is not None:
            self._lt.call(self._write_all, msg)

    def flush(self, timeout: float = 3.0) -> None:
        """Wait (bounded) until what was sent is handed to the kernel."""
        async def drain() -> None:
            await asyncio.gather(*(w.drain() for w, _ in list(self._writers.values()) if not w.is_closing()),
                                 return_exceptions=True)
        if self._lt is not None:
            try:
                self._lt.run(asyncio.wait_for(drain(), timeout), timeout + 1)
            except Exception:
                pass

    def close(self) -> None:
        if self._lt is None:
            return
        self.flush(2.0)

        async def shut() -> None:
            if self._server is not None:
                self._server.close()
            for w, _ in list(self._writers.values()):
                w.close()
        try:
            self._lt.run(shut(), 3.0)
        except Exception:
            pass
        self._lt.stop()
        self._lt = None


class LinkClient:
    """A node's end: connects to the collector (retrying), sends its news, hears commands."""

    def __init__(self, token: str, me: str, host: str, port: int, on_message: OnMessage, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.token, self.me, self.host, self.port = token.encode(), me, host, port
        self.on_message, self.clock = on_message, clock
        self.instance = os.urandom(6).hex()
        self.connected = False
        self.ever_connected = False
        self.last_heard: float | None = None
        self.last_error = ""
        self.refused: str | None = None
        self.dropped = 0
        self._outbox: collections.deque[dict] = collections.deque()
        self._wake: asyncio.Event | None = None
        self._closing = False
        self._lt: _LoopThread | None = None
        self._writer: asyncio.StreamWriter | None = None

    def start(self) -> None:
        self._lt = _LoopThread("dd-link-client")
        self._wake = self._lt.run(self._make_event(), 5.0)
        self._lt.spawn(self._run())

    @staticmethod
    async def _make_event() -> asyncio.Event:
        return asyncio.Event()

    def send(self, msg: dict) -> None:
        if self._lt is None or self.refused:
            return
        if len(self._outbox) >= MAX_OUTBOX:
            self._outbox.popleft()
            self.dropped += 1
        self._outbox.append(msg)
        self._lt.call(self._wake.set)

    async def _run(self) -> None:
        backoff = 0.1
        while not self._closing:
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(self.host, self.port), 3.0)
            except (OSError, asyncio.TimeoutError) as exc:
                self.last_error = str(exc) or type(exc).__name__
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            hs = await client_handshake(reader, writer, self.token, Peer(self.me, self.instance), HANDSHAKE_TIMEOUT_S,
                                        magic=LINK_MAGIC)
            if hs.failure is not None:
                writer.close()
                self.last_error = hs.detail
                if hs.failure == "wrong_token" or hs.reason in (Deny.SOURCE, Deny.UNKNOWN):
                    self.refused = hs.detail
                    self._outbox.clear()
                    return
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.1
            self.connected = self.ever_connected = True
            self.last_heard = self.clock()
            self._writer = writer
            try:
                await self._session(reader, writer, Sealer(hs.keys[0]), Opener(hs.keys[1]))
            finally:
                self.connected = False
                self._writer = None
                writer.close()

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sealer: Sealer,
                       opener: Opener) -> None:
        async def pump() -> None:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._outbox:
                    writer.write(sealer.seal(Kind.LINK, self._outbox.popleft()))
                await writer.drain()

        async def beat() -> None:
            while True:
                self.send({"t": "hb", "sent": self.clock()})
                await asyncio.sleep(HEARTBEAT_S)

        async def listen() -> None:
            try:
                while True:
                    msg = await _read_message(reader, opener)
                    self.last_heard = self.clock()
                    if msg["t"] != "hb":
                        try:
                            self.on_message(self.me, msg)
                        except Exception:
                            pass
            except (EOFError, ProtocolError, ConnectionError, OSError, asyncio.IncompleteReadError) as exc:
                self.last_error = str(exc) or type(exc).__name__

        tasks = [asyncio.ensure_future(c) for c in (pump(), beat(), listen())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def flush(self, timeout: float = 3.0) -> bool:
        """Wait (bounded) until the outbox is written; False if the link could not take it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._outbox and self.connected:
                w = self._writer
                if w is None or w.transport is None or w.transport.get_write_buffer_size() == 0:
                    return True
            time.sleep(0.02)
        return not self._outbox

    def close(self, flush_timeout: float = 3.0) -> None:
        if self._lt is None:
            return
        if self.connected:
            self.flush(flush_timeout)
        self._closing = True
        self._lt.stop()
        self._lt = None
