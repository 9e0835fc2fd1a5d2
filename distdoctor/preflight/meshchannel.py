"""One authenticated mesh connection, usable in both directions once the handshake is done.

Whichever side opened it, a :class:`Channel` answers pings, times its own
pings, carries reports, report requests, ``DONE`` and the bulk transfer, and
hands what concerns the node to a :class:`ChannelOwner`.
"""
from __future__ import annotations

import asyncio
import socket
import struct
import time
from typing import Protocol

from .wire import Kind, ProtocolError, decode_json, encode, read_frame

__all__ = ["Channel", "ChannelOwner"]


class ChannelOwner(Protocol):
    """What a channel tells the node it belongs to."""

    changed: asyncio.Event

    def receive_report(self, body: bytes) -> None: ...

    def answer_want(self, channel: "Channel", want: dict) -> None: ...


class Channel:
    """Invariant: ``peer``/``instance`` were proven by the handshake; ``closed`` only goes False -> True."""

    def __init__(self, owner: ChannelOwner, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 peer: str, instance: str, outbound: bool):
        self.owner, self.reader, self.writer = owner, reader, writer
        self.peer, self.instance, self.outbound = peer, instance, outbound
        self.closed = False
        self.done = False          # the peer has its verdict
        self._pongs: dict[int, asyncio.Future] = {}
        self._bulk_expected = self._bulk_got = 0
        self._bulk_ack: asyncio.Future | None = None

    def send(self, kind: int, payload=None) -> None:
        if self.closed:
            return
        try:
            self.writer.write(encode(kind, payload))
        except (OSError, RuntimeError):
            self.closed = True

    async def ping(self, seq: int, timeout: float) -> float | None:
        """One timed round trip in milliseconds; None when no answer came within ``timeout``."""
        fut = asyncio.get_running_loop().create_future()
        self._pongs[seq] = fut
        t0 = time.perf_counter()
        self.send(Kind.PING, struct.pack(">Q", seq))
        try:
            await asyncio.wait_for(fut, timeout)
        except (asyncio.TimeoutError, ConnectionError):
            return None
        finally:
            self._pongs.pop(seq, None)
        return (time.perf_counter() - t0) * 1000.0

    async def throughput(self, total: int, timeout: float) -> float | None:
        """Send ``total`` bytes and wait for the peer's receipt: Mbit/s, or None."""
        loop = asyncio.get_running_loop()
        self._bulk_ack = loop.create_future()
        chunk = b"\0" * (1 << 20)
        t0 = time.perf_counter()
        self.send(Kind.BULK_START, {"bytes": total})
        sent = 0
        try:
            while sent < total:
                piece = chunk[:min(len(chunk), total - sent)]
                self.send(Kind.BULK, piece)
                sent += len(piece)
                await self.writer.drain()
            await asyncio.wait_for(self._bulk_ack, timeout)
        except (asyncio.TimeoutError, ConnectionError, OSError):
            return None
        return total * 8 / 1e6 / max(time.perf_counter() - t0, 1e-9)

    async def run(self) -> None:
        """Read frames until the peer closes; answer what is ours, hand the rest to the owner."""
        try:
            while True:
                kind, body = await read_frame(self.reader)
                if kind == Kind.PING:
                    self.send(Kind.PONG, body)
                elif kind == Kind.PONG:
                    fut = self._pongs.get(struct.unpack(">Q", body)[0]) if len(body) == 8 else None
                    if fut is not None and not fut.done():
                        fut.set_result(None)
                elif kind == Kind.REPORT:
                    self.owner.receive_report(body)
                elif kind == Kind.WANT:
                    self.owner.answer_want(self, decode_json(body))
                elif kind == Kind.DONE:
                    self.done = True
                    self.owner.changed.set()
                elif kind == Kind.BULK_START:
                    self._bulk_expected, self._bulk_got = int(decode_json(body).get("bytes", 0)), 0
                elif kind == Kind.BULK:
                    self._bulk_got += len(body)
                    if self._bulk_got >= self._bulk_expected > 0:
                        self.send(Kind.BULK_ACK, {"bytes": self._bulk_got})
                        self._bulk_expected = 0
                elif kind == Kind.BULK_ACK:
                    if self._bulk_ack is not None and not self._bulk_ack.done():
                        self._bulk_ack.set_result(None)
        except (EOFError, ProtocolError, ConnectionError, OSError, ValueError):
            pass
        finally:
            self.closed = True
            for fut in self._pongs.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("closed"))
            self.owner.changed.set()

    def close(self, abort: bool = False) -> None:
        """FIN, or with ``abort`` an RST (SO_LINGER 0), which leaves no TIME_WAIT on our port."""
        self.closed = True
        try:
            if abort:
                sock = self.writer.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.writer.close()
        except (OSError, RuntimeError):
            pass
