"""The mesh check's wire format and handshake: small, versioned, authenticated.

Every connection starts with :data:`MAGIC` from the client, so a port held by
anything else (a TensorFlow server, a web server) is told apart from a mesh
responder at once. Frames are ``length (4 bytes, big endian) | kind (1 byte)
| payload``; payloads are JSON except for pings and bulk data.

The handshake is a mutual HMAC-SHA256 challenge over both sides' random
nonces and their task names, keyed with the job's shared token
(``DISTDOCTOR_TOKEN``). Neither side sends the token; a peer without it
cannot produce the MAC and is refused, and a responder of another job is
recognised by the client the same way.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import struct
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["MAGIC", "LINK_MAGIC", "Kind", "MAX_FRAME", "ProtocolError", "mac", "verify", "encode", "read_frame", "decode_json",
           "Peer", "ClientHandshake", "client_handshake", "server_handshake"]

MAGIC = b"DDMESH1\n"
LINK_MAGIC = b"DDLINK1\n"  # the same handshake on the side link between run --node supervisors
MAX_FRAME = 32 << 20
_HEADER = struct.Struct(">IB")


class ProtocolError(Exception):
    """The other side does not speak this protocol (or broke it)."""


class Kind:
    """Frame kinds. Numbers are part of the protocol: never reuse one."""

    HELLO = 1      # client -> server: {"task", "instance", "nonce"}
    CHALLENGE = 2  # server -> client: {"task", "instance", "nonce", "mac"}
    AUTH = 3       # client -> server: {"mac"}
    OK = 4         # server -> client: {}
    DENY = 5       # either way: {"reason"}
    PING = 6       # raw 8-byte sequence number
    PONG = 7       # the same 8 bytes back
    REPORT = 8     # a PeerReport as JSON
    WANT = 9       # {"have": [task, ...]}: send me the reports I lack
    DONE = 10      # {}: I have my verdict
    BULK = 11      # raw bytes for the throughput test
    BULK_ACK = 12  # {"bytes": n}
    BULK_START = 13  # {"bytes": n}
    LINK = 20      # run --node side link: one JSON message {"t": type, ...} (after the handshake under LINK_MAGIC)


def mac(token: bytes, role: bytes, *parts: bytes) -> str:
    """HMAC over the role (b"S"/b"C") and length-prefixed parts, so fields cannot be shifted."""
    h = hmac.new(token, role, hashlib.sha256)
    for part in parts:
        h.update(struct.pack(">I", len(part)))
        h.update(part)
    return h.hexdigest()


def verify(expected: str, got: Any) -> bool:
    return isinstance(got, str) and hmac.compare_digest(expected, got)


def encode(kind: int, payload: Any = None) -> bytes:
    """One frame; ``payload`` is bytes (sent as is) or JSON-able."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        body = bytes(payload)
    else:
        body = json.dumps({} if payload is None else payload, separators=(",", ":")).encode()
    return _HEADER.pack(len(body), kind) + body


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        raise EOFError("connection closed") from exc
    length, kind = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ProtocolError(f"frame of {length} bytes")
    try:
        return kind, await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise EOFError("connection closed mid-frame") from exc


def decode_json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"bad JSON payload: {exc}") from None
    if not isinstance(value, dict):
        raise ProtocolError("payload is not an object")
    return value


# --- the handshake ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Peer:
    """Who the other side of a connection says it is (after it proved it holds the token)."""

    task: str
    instance: str


@dataclass(frozen=True)
class ClientHandshake:
    """How the client side ended. ``failure`` is None on success, else ``wrong_token`` or ``foreign``."""

    failure: str | None
    detail: str = ""
    peer: Peer | None = None
    rtts_ms: tuple[float, ...] = ()


async def client_handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: bytes, me: Peer,
                           timeout: float, magic: bytes = MAGIC) -> ClientHandshake:
    """Prove we hold the token and check the server does. Its two round trips double as RTT samples."""
    nonce_c = os.urandom(16)
    rtts: list[float] = []
    peer = None
    t = time.perf_counter()
    writer.write(magic + encode(Kind.HELLO, {"task": me.task, "instance": me.instance, "nonce": nonce_c.hex()}))
    try:
        kind, body = await asyncio.wait_for(read_frame(reader), timeout)
        rtts.append((time.perf_counter() - t) * 1000.0)
        if kind != Kind.CHALLENGE:
            return ClientHandshake("foreign", "answered, but not with the mesh handshake")
        chal = decode_json(body)
        peer = Peer(str(chal.get("task")), str(chal.get("instance", "")))
        nonce_s = bytes.fromhex(str(chal.get("nonce", "")))
        if not verify(mac(token, b"S", nonce_c, nonce_s, peer.task.encode()), chal.get("mac")):
            writer.write(encode(Kind.DENY, {"reason": "bad token"}))
            return ClientHandshake("wrong_token", f"a mesh responder claiming {peer.task} answered but could not "
                                   "prove it holds this job's token", peer, tuple(rtts))
        t = time.perf_counter()
        writer.write(encode(Kind.AUTH, {"mac": mac(token, b"C", nonce_s, nonce_c, me.task.encode())}))
        kind, body = await asyncio.wait_for(read_frame(reader), timeout)
        rtts.append((time.perf_counter() - t) * 1000.0)
    except asyncio.TimeoutError:
        return ClientHandshake("foreign", "accepted the connection but never answered the mesh handshake", peer)
    except (EOFError, ConnectionError, OSError):
        return ClientHandshake("foreign", "accepted the connection, then closed it without the mesh handshake", peer)
    except (ProtocolError, ValueError) as exc:
        return ClientHandshake("foreign", f"answered something that is not the mesh protocol ({exc})", peer)
    if kind == Kind.DENY:
        return ClientHandshake("wrong_token", f"{peer.task} refused our token (it holds another one)", peer)
    if kind != Kind.OK:
        return ClientHandshake("foreign", "broke the mesh handshake", peer)
    return ClientHandshake(None, "", peer, tuple(rtts))


async def server_handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: bytes, me: Peer,
                           timeout: float, magic: bytes = MAGIC) -> tuple[Peer | None, str | None]:
    """Accept a client that proves it holds the token.

    Returns (peer, None) on success; (claimed peer or None, why) when refused; (None, "") for a
    connection that is not a mesh client at all (a port scanner, a stray gRPC client).
    """
    claimed = None
    try:
        if await asyncio.wait_for(reader.readexactly(len(magic)), timeout) != magic:
            return None, ""
        kind, body = await asyncio.wait_for(read_frame(reader), timeout)
        hello = decode_json(body)
        if kind != Kind.HELLO:
            return None, ""
        claimed = Peer(str(hello.get("task")), str(hello.get("instance", "")))
        nonce_c, nonce_s = bytes.fromhex(str(hello.get("nonce", ""))), os.urandom(16)
        writer.write(encode(Kind.CHALLENGE, {"task": me.task, "instance": me.instance, "nonce": nonce_s.hex(),
                                             "mac": mac(token, b"S", nonce_c, nonce_s, me.task.encode())}))
        kind, body = await asyncio.wait_for(read_frame(reader), timeout)
        if kind == Kind.DENY:
            return claimed, "it could not verify our token: it holds another token or belongs to another job"
        if kind != Kind.AUTH or not verify(mac(token, b"C", nonce_s, nonce_c, claimed.task.encode()),
                                           decode_json(body).get("mac")):
            writer.write(encode(Kind.DENY, {"reason": "bad token"}))
            return claimed, "it did not prove it holds this job's token"
        writer.write(encode(Kind.OK))
    except (asyncio.TimeoutError, EOFError, ProtocolError, ConnectionError, OSError, ValueError, AttributeError):
        return None, ""
    return claimed, None
