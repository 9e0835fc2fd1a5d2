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
import struct
from typing import Any

__all__ = ["MAGIC", "Kind", "MAX_FRAME", "ProtocolError", "mac", "verify", "encode", "read_frame", "decode_json"]

MAGIC = b"DDMESH1\n"
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
