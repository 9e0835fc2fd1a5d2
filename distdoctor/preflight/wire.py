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

Nothing costs before the peer is authenticated: the handshake's frames are at
most :data:`MAX_HELLO` bytes (a bigger length is refused from the header,
before any payload is read), a claimed task name must look like one
(``job:index``), and the server may refuse a claim (an unknown task, a task
that does not connect from its own address) before it computes anything.
A refusal is one of the fixed :class:`Deny` categories: nothing the other
side sent is kept.

Both sides derive two session keys (one per direction) from the token, both
nonces and both task names (:func:`session_keys`). The side link seals every
frame after the handshake with them (:class:`Sealer`, :class:`Opener`): an
HMAC-SHA256 over an implicit sequence number, the kind and the payload, so a
frame cannot be forged, replayed, reordered or moved to another connection.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import struct
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

__all__ = ["MAGIC", "LINK_MAGIC", "Kind", "MAX_FRAME", "MAX_HELLO", "ProtocolError", "mac", "verify", "encode",
           "read_frame", "decode_json", "Peer", "ClientHandshake", "ServerHandshake", "Deny", "client_handshake",
           "server_handshake", "accept_frame", "deny", "session_keys", "Sealer", "Opener", "valid_task_name"]

MAGIC = b"DDMESH1\n"
LINK_MAGIC = b"DDLINK1\n"  # the same handshake on the side link between run --node supervisors
MAX_FRAME = 32 << 20     # after authentication (a cluster diagnosis, a bulk test's chunk)
MAX_HELLO = 2048         # any handshake frame: a task name, an instance id, a nonce, a MAC
TAG = 32                 # a sealed frame's HMAC-SHA256
_TASK = re.compile(r"[A-Za-z0-9_.-]{1,64}:[0-9]{1,6}")
_INSTANCE = re.compile(r"[0-9a-f]{0,32}")
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


async def read_frame(reader: asyncio.StreamReader, limit: int = MAX_FRAME) -> tuple[int, bytes]:
    """One frame; a length over ``limit`` is refused from the header, before its payload is read."""
    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        raise EOFError("connection closed") from exc
    length, kind = _HEADER.unpack(header)
    if length > limit:
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
def valid_task_name(name: object) -> bool:
    """``job:index`` of a sane length: what a claim must look like before it is looked at."""
    return isinstance(name, str) and _TASK.fullmatch(name) is not None


@dataclass(frozen=True)
class Peer:
    """Who the other side of a connection says it is (after it proved it holds the token)."""

    task: str
    instance: str


class Deny:
    """Why the server turned a connection away: a fixed set of words, never the other side's text."""

    SILENT = "not-the-protocol"        # no magic, a bad frame, a timeout, a frame over MAX_HELLO
    MALFORMED = "malformed-hello"      # the protocol's magic, then a hello that is not one
    UNKNOWN = "unknown-task"           # claimed a task this cluster does not have
    SOURCE = "wrong-source-address"    # claimed a task from an address that is not that task's
    BUSY = "busy"                      # too many unauthenticated connections (from that address)
    BAD_MAC = "no-token"               # could not prove it holds the token
    OUR_MAC = "refused-our-token"      # said it could not verify ours (another token, another job)
    TAKEN = "task-already-linked"      # authenticated, but that task's link is alive (the side link)


@dataclass(frozen=True)
class ClientHandshake:
    """How the client side ended. ``failure`` is None on success, else an :class:`~.meshmodel.Outcome` value:
    ``wrong_token``, ``foreign`` or ``error``; ``retry`` is set where trying again later may succeed (a busy responder,
    or one that accepted and then closed or stayed silent: a slow or closing mesh responder looks like that once)."""

    failure: str | None
    detail: str = ""
    peer: Peer | None = None
    rtts_ms: tuple[float, ...] = ()
    keys: tuple[bytes, bytes] | None = None   # (ours to send with, theirs to check with)
    retry: bool = False
    reason: str = ""                          # the server's DENY reason (a Deny word), when it sent one


@dataclass(frozen=True)
class ServerHandshake:
    """How the server side ended: ``peer`` and ``keys`` when accepted, else ``refusal`` (a :class:`Deny` word)."""

    peer: Peer | None
    refusal: str | None
    keys: tuple[bytes, bytes] | None = None   # (ours to send with, theirs to check with)
    admitted: str | None = None   # refused after ``admit`` let its claim in: that (known) task's name


def session_keys(token: bytes, nonce_c: bytes, nonce_s: bytes, client: str, server: str) -> tuple[bytes, bytes]:
    """(client -> server key, server -> client key): fresh per connection, bound to both tasks' names."""
    base = mac(token, b"K", nonce_c, nonce_s, client.encode(), server.encode())
    return (hmac.new(bytes.fromhex(base), b"client->server", hashlib.sha256).digest(),
            hmac.new(bytes.fromhex(base), b"server->client", hashlib.sha256).digest())


def _deny_reason(body: bytes) -> str:
    try:
        reason = decode_json(body).get("reason")
    except ProtocolError:
        return ""
    return reason if isinstance(reason, str) and len(reason) <= 40 else ""


async def client_handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: bytes, me: Peer,
                           timeout: float, magic: bytes = MAGIC) -> ClientHandshake:
    """Prove we hold the token and check the server does. Its two round trips double as RTT samples."""
    nonce_c = os.urandom(16)
    rtts: list[float] = []
    peer = None
    t = time.perf_counter()
    writer.write(magic + encode(Kind.HELLO, {"task": me.task, "instance": me.instance, "nonce": nonce_c.hex()}))
    try:
        kind, body = await asyncio.wait_for(read_frame(reader, MAX_HELLO), timeout)
        rtts.append((time.perf_counter() - t) * 1000.0)
        if kind == Kind.DENY:
            return _denied_early(_deny_reason(body))
        if kind != Kind.CHALLENGE:
            return ClientHandshake("foreign", "answered, but not with the mesh handshake")
        chal = decode_json(body)
        if not valid_task_name(chal.get("task")) or not _INSTANCE.fullmatch(str(chal.get("instance", ""))):
            return ClientHandshake("foreign", "answered a mesh handshake that names no task")
        peer = Peer(str(chal.get("task")), str(chal.get("instance", "")))
        nonce_s = bytes.fromhex(str(chal.get("nonce", "")))
        if len(nonce_s) != 16 or not verify(mac(token, b"S", nonce_c, nonce_s, peer.task.encode()), chal.get("mac")):
            writer.write(encode(Kind.DENY, {"reason": Deny.OUR_MAC}))
            return ClientHandshake("wrong_token", f"a mesh responder claiming {peer.task} answered but could not "
                                   "prove it holds this job's token", peer, tuple(rtts))
        t = time.perf_counter()
        writer.write(encode(Kind.AUTH, {"mac": mac(token, b"C", nonce_s, nonce_c, me.task.encode())}))
        kind, body = await asyncio.wait_for(read_frame(reader, MAX_HELLO), timeout)
        rtts.append((time.perf_counter() - t) * 1000.0)
    except asyncio.TimeoutError:
        # a mesh responder that is slow (a loaded host) or shutting down looks the same once: try again while the
        # deadline allows, and call it foreign only if it keeps doing so
        return ClientHandshake("foreign", "accepted the connection but never answered the mesh handshake", peer,
                               retry=True)
    except (EOFError, ConnectionError, OSError):
        return ClientHandshake("foreign", "accepted the connection, then closed it without the mesh handshake", peer,
                               retry=True)
    except (ProtocolError, ValueError) as exc:
        return ClientHandshake("foreign", f"answered something that is not the mesh protocol ({exc})", peer)
    if kind == Kind.DENY:
        reason = _deny_reason(body)
        if reason == Deny.TAKEN:
            return ClientHandshake("error", f"{peer.task} holds a live link for this task already", peer,
                                   retry=True, reason=reason)
        return ClientHandshake("wrong_token", f"{peer.task} refused our token (it holds another one)", peer,
                               reason=reason)
    if kind != Kind.OK:
        return ClientHandshake("foreign", "broke the mesh handshake", peer)
    c2s, s2c = session_keys(token, nonce_c, nonce_s, me.task, peer.task)
    return ClientHandshake(None, "", peer, tuple(rtts), keys=(c2s, s2c))


def _denied_early(reason: str) -> ClientHandshake:
    """The server refused our hello before its challenge: too busy, or our claim does not fit its cluster."""
    if reason == Deny.BUSY:
        return ClientHandshake("error", "the responder is busy (too many unauthenticated connections)", retry=True,
                               reason=reason)
    if reason == Deny.SOURCE:
        return ClientHandshake("error", "refused: this connection does not come from the address the cluster gives "
                               "our task (NAT, a service address in TF_CONFIG, or a multi-homed host)", reason=reason)
    if reason == Deny.UNKNOWN:
        return ClientHandshake("error", "refused: our task is not in the responder's cluster", reason=reason)
    return ClientHandshake("foreign", "refused our hello", reason=reason)


Admit = Callable[[str], Awaitable[Optional[str]]]


async def server_handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: bytes, me: Peer,
                           timeout: float, magic: bytes = MAGIC, admit: Admit | None = None,
                           confirm: bool = True) -> ServerHandshake:
    """Accept a client that proves it holds the token.

    Reads at most ``len(magic)`` + 2 x :data:`MAX_HELLO` bytes from a client that has not authenticated.
    ``admit(claimed task)`` may refuse the claim (a :class:`Deny` word) before we compute anything; the
    client is told (``DENY``), since the refusal costs nothing and helps a misconfigured task of this job.
    With ``confirm`` False the caller sends the last word itself (:func:`accept_frame` or :func:`deny`), after
    checks that need the proven peer.
    """
    try:
        if await asyncio.wait_for(reader.readexactly(len(magic)), timeout) != magic:
            return ServerHandshake(None, Deny.SILENT)
        kind, body = await asyncio.wait_for(read_frame(reader, MAX_HELLO), timeout)
        if kind != Kind.HELLO:
            return ServerHandshake(None, Deny.MALFORMED)
        hello = decode_json(body)
        task, instance = hello.get("task"), str(hello.get("instance", ""))
        nonce_c = bytes.fromhex(str(hello.get("nonce", "")))
        if not valid_task_name(task) or not _INSTANCE.fullmatch(instance) or len(nonce_c) != 16:
            return ServerHandshake(None, Deny.MALFORMED)
        claimed = Peer(task, instance)
        why = await admit(task) if admit is not None else None
        if why is not None:
            writer.write(encode(Kind.DENY, {"reason": why}))
            return ServerHandshake(None, why)
        nonce_s = os.urandom(16)
        writer.write(encode(Kind.CHALLENGE, {"task": me.task, "instance": me.instance, "nonce": nonce_s.hex(),
                                             "mac": mac(token, b"S", nonce_c, nonce_s, me.task.encode())}))
        kind, body = await asyncio.wait_for(read_frame(reader, MAX_HELLO), timeout)
        if kind == Kind.DENY:
            return ServerHandshake(None, Deny.OUR_MAC, admitted=task if admit is not None else None)
        if kind != Kind.AUTH or not verify(mac(token, b"C", nonce_s, nonce_c, claimed.task.encode()),
                                           decode_json(body).get("mac")):
            writer.write(encode(Kind.DENY, {"reason": Deny.BAD_MAC}))
            return ServerHandshake(None, Deny.BAD_MAC, admitted=task if admit is not None else None)
    except (asyncio.TimeoutError, EOFError, ProtocolError, ConnectionError, OSError, ValueError, AttributeError):
        return ServerHandshake(None, Deny.SILENT)
    if confirm:
        accept_frame(writer)
    c2s, s2c = session_keys(token, nonce_c, nonce_s, claimed.task, me.task)
    return ServerHandshake(claimed, None, keys=(s2c, c2s))


def accept_frame(writer: asyncio.StreamWriter) -> None:
    """The server's last word of a handshake it accepts (after its own checks of the proven peer)."""
    writer.write(encode(Kind.OK))


def deny(writer: asyncio.StreamWriter, reason: str) -> None:
    try:
        writer.write(encode(Kind.DENY, {"reason": reason}))
    except (OSError, RuntimeError):
        pass


# --- sealed frames (the side link after its handshake) ---------------------------------------------
class Sealer:
    """Seals the frames one side sends: ``payload | HMAC(key, seq | kind | payload)``; ``seq`` counts frames."""

    def __init__(self, key: bytes) -> None:
        self.key, self.seq = key, 0

    def seal(self, kind: int, payload: Any = None) -> bytes:
        frame = encode(kind, payload)
        body = frame[_HEADER.size:]
        tag = hmac.new(self.key, struct.pack(">QB", self.seq, kind) + body, hashlib.sha256).digest()
        self.seq += 1
        return _HEADER.pack(len(body) + TAG, kind) + body + tag


class Opener:
    """Checks the frames the other side sends, in order: a forged, replayed, reordered or dropped frame fails."""

    def __init__(self, key: bytes) -> None:
        self.key, self.seq = key, 0

    async def read(self, reader: asyncio.StreamReader, limit: int = MAX_FRAME) -> tuple[int, bytes]:
        kind, payload = await read_frame(reader, limit + TAG)
        if len(payload) < TAG:
            raise ProtocolError("a frame without its seal")
        body, tag = payload[:-TAG], payload[-TAG:]
        want = hmac.new(self.key, struct.pack(">QB", self.seq, kind) + body, hashlib.sha256).digest()
        if not hmac.compare_digest(want, tag):
            raise ProtocolError(f"frame {self.seq} failed its seal (forged, replayed or out of order)")
        self.seq += 1
        return kind, body
