"""The mesh check: every task binds its TensorFlow port, probes every other task, and they compare notes.

One :class:`MeshNode` runs per task (``check --mesh``, and ``run --node``
before it starts TensorFlow, through :func:`run_mesh`). Its life:

1. **Bind** the task's own port, on the address its cluster entry names
   (loopback stays loopback; all interfaces only where that address is not
   this host's, a service address behind NAT), with a small responder that
   accepts only peers that pass the HMAC handshake of :mod:`.wire`, behind a
   :class:`~.gate.Gate`: capped unauthenticated connections, a hello of a few
   hundred bytes, claims checked against the claimed task's address, refusals
   kept as counts.
2. **Probe** every other task's address until it answers or the probe
   deadline passes: refused connections are retried with back-off (the peer
   may not have started yet) and retried at once when that peer connects to
   us; timeouts mean dropped packets. Each answered probe is authenticated
   and timed: the handshake's two round trips and ``pings`` more (and with
   ``bandwidth``, a bulk transfer).
3. **Exchange reports**: once its own probes are settled, the task sends its
   :class:`~.meshmodel.PeerReport` (identity, cluster, fingerprint, command
   line, probes) once to every peer over one authenticated connection (either
   direction). Reports of tasks it has no connection with are asked for
   (``WANT``) from the others, so one blocked direction does not hide a task.
4. **Verdict** when it holds the report of every task known to be alive (and
   nothing new arrived for :data:`SETTLE_S`), or at the deadline; the pure
   judge (:mod:`.meshjudge`) turns the reports into findings, so every task can
   print the whole-mesh table.
5. **Release**: say ``DONE``, wait (bounded) until connected peers are done
   too, so nobody loses a relay, then close. Clients close first, so no
   TIME_WAIT is left on the ports TensorFlow is about to bind.

Time: ``timeout`` bounds the whole check per task; the last
:data:`EXCHANGE_SHARE` of it (1-10 s) is kept for the report exchange.
"""
from __future__ import annotations

import asyncio
import errno
import json
import os
import random
import socket
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import UsageError
from ..model import Finding, Severity
from ..safety.redact import redact_argv
from .fingerprint import Fingerprint
from .meshchannel import Channel
from .meshjudge import judge_mesh
from .meshmodel import MeshResult, Outcome, PeerReport, Probe, Refusal, TaskInfo
from ..cluster.spec import AddressError, ClusterSpec, TaskRef, parse_address
from .gate import Gate, host_of_peer, task_hosts
from .host import bind_findings
from .wire import Deny, Kind, Peer, ProtocolError, client_handshake, decode_json, deny, server_handshake

__all__ = ["MeshOptions", "MeshNode", "run_mesh", "EXCHANGE_SHARE"]

EXCHANGE_SHARE = 0.3         # of --timeout, clamped to [1, 10] s, kept for exchanging reports
HANDSHAKE_TIMEOUT_S = 3.0    # an accepted connection must answer the handshake within this
# Refused connections are retried with back-off up to BACKOFF_MAX_S, and at once when that peer
# connects to us. A task that could not bind is never connected to, so it retries fast instead.
BACKOFF_START_S, BACKOFF_MAX_S, UNBOUND_BACKOFF_MAX_S = 0.05, 2.0, 0.05
# After the last expected report, wait this long for processes nobody expected (a second task with
# the same index) before giving the verdict: longer than an unbound task's retry interval (with jitter).
SETTLE_S = 0.1
WANT_INTERVAL_S = 0.3
LINGER_GRACE_S = 0.5
ERROR_LINGER_S = 1.0
_UNREACHABLE = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN}


@dataclass(frozen=True)
class MeshOptions:
    """Knobs of one mesh check. ``bind_host`` None binds the address the task's cluster entry names."""

    timeout: float = 60.0
    pings: int = 1              # after the handshake's two timed round trips: 3 RTT samples per pair
    bandwidth: bool = False
    bandwidth_bytes: int = 8 << 20
    bind_host: str | None = None

    @property
    def exchange_margin(self) -> float:
        return min(max(EXCHANGE_SHARE * self.timeout, 1.0), 10.0, self.timeout / 2)

    @property
    def connect_timeout(self) -> float:
        return min(max(self.timeout / 4, 0.5), 3.0)


@dataclass
class _State:
    """A node's bookkeeping: the only mutable state, owned by one event loop."""

    reports: dict[str, PeerReport] = field(default_factory=dict)
    raw: dict[tuple[str, str], bytes] = field(default_factory=dict)   # (task, instance) -> REPORT body
    extra: list[PeerReport] = field(default_factory=list)              # duplicates of a task name
    channels: dict[str, list[Channel]] = field(default_factory=dict)
    reported_to: set[tuple[str, str]] = field(default_factory=set)  # (task, instance)
    instances: dict[str, set[str]] = field(default_factory=dict)       # task -> processes seen claiming it
    alive: set[tuple[str, str]] = field(default_factory=set)             # (task, instance) known to be up
    version: int = 0                                                     # bumped by anything the judge reads


class MeshNode:
    """The mesh check of one task. Use :func:`run_mesh` unless you already run an event loop."""

    def __init__(self, spec: ClusterSpec, task: TaskRef, token: str, options: MeshOptions, *,
                 argv: Sequence[str] = (), fingerprint: Fingerprint | None = None,
                 local_findings: Sequence[Finding] = (), clock: Callable[[], float] = time.time,
                 side_port: int | None = None):
        if not token:
            raise UsageError("the mesh check needs the job's shared token (DISTDOCTOR_TOKEN)")
        self.spec, self.task, self.me = spec, task, str(task)
        self.token, self.opt, self.clock = token.encode(), options, clock
        # the command line goes to every peer (DD514 compares them): never a secret flag's value
        self.argv, self.fingerprint, self.local_findings = tuple(redact_argv(argv)), fingerprint, tuple(local_findings)
        self.side_port = side_port
        self.instance = os.urandom(6).hex()
        self.peers = {str(t): a for t, a in spec.tasks() if t != task}
        self.state = _State()
        self.changed = asyncio.Event()
        self._arrived: dict[str, asyncio.Event] = {p: asyncio.Event() for p in self.peers}
        self._bw_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task] = []
        self._bound = False
        self.gate = Gate(task_hosts(spec))
        self.bound_to = ""         # the address the responder listens on

    # -- responder ------------------------------------------------------------------------------
    async def _listen(self) -> tuple[asyncio.AbstractServer | None, str]:
        own = self.spec.address_of(self.task)
        try:
            addr = parse_address(own)
        except AddressError as exc:
            return None, f"own address unusable: {exc.reason}"
        hosts = [self.opt.bind_host] if self.opt.bind_host else [addr.host, "::" if ":" in addr.host else "0.0.0.0"]
        for i, host in enumerate(hosts):
            try:
                server = await asyncio.start_server(self._serve, host, addr.port, reuse_address=True,
                                                    backlog=max(128, 2 * len(self.peers)))
            except OSError as exc:
                # the cluster names an address that is not this host's (a service's, behind NAT): every interface
                if i + 1 < len(hosts) and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    continue
                if isinstance(exc, socket.gaierror) and i + 1 < len(hosts):
                    continue
                return None, f"{errno.errorcode.get(exc.errno or 0, 'error')}: {exc.strerror or exc}"
            self.bound_to = host
            return server, ""
        return None, "no address to bind"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ip = host_of_peer(writer.get_extra_info("peername"))
        if not self.gate.enter(ip):
            deny(writer, Deny.BUSY)
            writer.close()
            self.state.version += 1
            return
        try:
            hs = await server_handshake(reader, writer, self.token, Peer(self.me, self.instance),
                                        HANDSHAKE_TIMEOUT_S, admit=lambda task: self.gate.admit(task, ip))
        finally:
            self.gate.leave(ip)
        if hs.refusal is not None:
            self.gate.refuse(ip, hs.refusal)
            self.state.version += 1
            writer.close()
            if hs.admitted in self._arrived:
                # something at that task's own address failed the handshake: probe it now, while it is there
                # (our own probe, of the address the cluster lists, is what may judge its token: DD505)
                self._arrived[hs.admitted].set()
            return
        peer = hs.peer
        ch = Channel(self, reader, writer, peer.task, peer.instance, outbound=False)
        self._add_channel(ch)
        if peer.task in self._arrived:
            self._arrived[peer.task].set()
        await ch.run()

    def _refusals(self) -> list[Refusal]:
        """What the gate refused, as counts (nothing the other side sent)."""
        return [Refusal(c.source, None, c.reason, c.count) for c in self.gate.counts()]

    def _add_channel(self, ch: Channel) -> None:
        self.state.channels.setdefault(ch.peer, []).append(ch)
        self.state.instances.setdefault(ch.peer, set()).add(ch.instance)
        self.state.alive.add((ch.peer, ch.instance))
        self.state.version += 1
        if self.me in self.state.reports:     # our report is out already: late channels get it too
            self._send_report_to(ch.peer)
        self.changed.set()

    # -- prober -------------------------------------------------------------------------------
    async def _connect(self, addr, deadline: float) -> tuple[Outcome | None, str, tuple | None]:
        loop = asyncio.get_running_loop()
        timeout = min(self.opt.connect_timeout, max(deadline - loop.time(), 0.05))
        try:
            rw = await asyncio.wait_for(asyncio.open_connection(addr.host, addr.port), timeout)
        except asyncio.TimeoutError:
            return Outcome.DROPPED, f"no answer within {timeout:.1f} s (neither accepted nor refused)", None
        except ConnectionRefusedError:
            return Outcome.REFUSED, "connection refused (nothing listening)", None
        except socket.gaierror as exc:
            return Outcome.UNRESOLVED, f"{addr.host!r} does not resolve: {exc.strerror or exc}", None
        except OSError as exc:
            if exc.errno in _UNREACHABLE:
                return Outcome.UNREACHABLE, exc.strerror or str(exc), None
            return Outcome.ERROR, exc.strerror or str(exc), None
        return None, "", rw

    async def _wait_or_wake(self, peer: str, delay: float) -> None:
        ev = self._arrived[peer]
        try:
            await asyncio.wait_for(ev.wait(), delay)
        except asyncio.TimeoutError:
            pass
        ev.clear()

    async def _probe(self, peer: str, address: str, deadline: float) -> Probe:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        try:
            addr = parse_address(address)
        except AddressError as exc:
            return Probe(self.me, peer, address, Outcome.ERROR, f"address {exc.reason}")
        attempts, backoff = 0, BACKOFF_START_S
        outcome, detail = Outcome.REFUSED, "never tried"
        while loop.time() < deadline:
            attempts += 1
            outcome, detail, rw = await self._connect(addr, deadline)
            if rw is None:
                if outcome is Outcome.DROPPED:
                    continue  # the timeout already waited
                await self._wait_or_wake(peer, min(backoff * (0.5 + random.random()), max(deadline - loop.time(), 0)))
                cap = min(BACKOFF_MAX_S, max(self.opt.timeout / 10, 0.2)) if self._bound else UNBOUND_BACKOFF_MAX_S
                backoff = min(backoff * 1.6, cap)
                continue
            reader, writer = rw
            hs = await client_handshake(reader, writer, self.token, Peer(self.me, self.instance),
                                        min(HANDSHAKE_TIMEOUT_S, max(deadline - loop.time(), 0.5)))
            if hs.failure is not None:
                writer.close()
                if hs.retry:   # busy (a flood at its door), slow or closing: try again, like a refusal
                    outcome, detail = Outcome(hs.failure), hs.detail
                    await asyncio.sleep(min(backoff * (0.5 + random.random()), max(deadline - loop.time(), 0)))
                    backoff = min(backoff * 1.6, BACKOFF_MAX_S)
                    continue
                return Probe(self.me, peer, address, Outcome(hs.failure), hs.detail, attempts,
                             hs.peer.task if hs.peer else None, elapsed_s=loop.time() - t0)
            ch = Channel(self, reader, writer, hs.peer.task, hs.peer.instance, outbound=True)
            self._tasks.append(asyncio.ensure_future(ch.run()))
            self._add_channel(ch)
            return await self._measure(ch, peer, address, attempts, list(hs.rtts_ms), t0, deadline)
        return Probe(self.me, peer, address, outcome, detail, attempts, elapsed_s=loop.time() - t0)

    async def _measure(self, ch: Channel, peer: str, address: str, attempts: int, rtts: list[float], t0: float,
                       deadline: float) -> Probe:
        """Pings after the handshake (whose round trips already count as samples), then bulk data."""
        loop = asyncio.get_running_loop()
        lost = 0
        for seq in range(self.opt.pings):
            rtt = await ch.ping(seq, max(min(1.0, deadline - loop.time()), 0.2))
            if rtt is None:
                lost += 1
            else:
                rtts.append(rtt)
        mbps = None
        if self.opt.bandwidth and not ch.closed:
            async with self._bw_lock:  # one transfer at a time per task: measure the link, not ourselves
                mbps = await ch.throughput(self.opt.bandwidth_bytes, max(deadline - loop.time(), 0.5))
        outcome = Outcome.OK if ch.peer == peer else Outcome.WRONG_TASK
        detail = "" if outcome is Outcome.OK else f"{ch.peer} answered at the address listed for {peer}"
        return Probe(self.me, peer, address, outcome, detail, attempts, ch.peer, tuple(rtts), self.opt.pings,
                     lost, mbps, loop.time() - t0, ch.instance)

    # -- report exchange ----------------------------------------------------------------------
    def receive_report(self, body: bytes) -> None:
        """A report arrived (from its author or relayed). Parsed once; kept raw for relaying."""
        try:
            report = PeerReport.from_json(decode_json(body))
        except (KeyError, TypeError, ValueError, ProtocolError):
            return
        key = (report.task, report.info.instance)
        if key in self.state.raw:
            return
        self._keep(key, body, report)
        known = self.state.reports.get(report.task)
        if known is None:
            self.state.reports[report.task] = report
        elif known.info.instance != report.info.instance:
            # a second process claims this task: rare and serious, so tell everyone we talk to
            self.state.extra.append(report)
            for peer in list(self.state.channels):
                for ch in self._live(peer):
                    if ch.instance != report.info.instance:
                        ch.send(Kind.REPORT, body)
        self.changed.set()

    def _keep(self, key: tuple[str, str], body: bytes, report: PeerReport) -> None:
        self.state.version += 1
        self.state.raw[key] = body
        self.state.alive.add(key)
        self.state.alive.update(report.answered())

    def answer_want(self, ch: Channel, want: dict) -> None:
        """Relay the reports a peer lacks (it has no connection to their authors)."""
        have = set(map(str, want.get("have", ())))
        for (task, inst), body in list(self.state.raw.items()):
            if f"{task}/{inst}" not in have:
                ch.send(Kind.REPORT, body)

    def _live(self, peer: str) -> list[Channel]:
        chans = [c for c in self.state.channels.get(peer, []) if not c.closed]
        return sorted(chans, key=lambda c: not c.outbound)

    def _send_report_to(self, peer: str) -> None:
        """Our report, once to every process of ``peer`` (there may be two claiming one task)."""
        for ch in self._live(peer):
            key = (peer, ch.instance)
            if key in self.state.reported_to or ch.instance == self.instance:
                continue
            ch.send(Kind.REPORT, self.state.raw[(self.me, self.instance)])
            self.state.reported_to.add(key)

    def _missing_keys(self) -> set[tuple[str, str]]:
        """Processes known to be up (reported, connected, or reached by anyone) whose report we lack."""
        return {k for k in self.state.alive if k not in self.state.raw}

    def _missing(self) -> set[str]:
        """Tasks with a process known to be alive whose report we lack."""
        return {t for t, _ in self._missing_keys()}

    # -- the whole life -----------------------------------------------------------------------
    async def run(self) -> MeshResult:
        loop = asyncio.get_running_loop()
        started_at, t0 = self.clock(), loop.time()
        probe_deadline = t0 + self.opt.timeout - self.opt.exchange_margin
        final = t0 + self.opt.timeout
        self._tasks.append(asyncio.ensure_future(self.gate.prepare()))   # the tasks' addresses, in the background
        server, bind_error = await self._listen()
        self._bound = server is not None
        try:
            probes = await asyncio.gather(*(self._probe(p, a, probe_deadline) for p, a in self.peers.items()))
            probed_at = self.clock()
            own = PeerReport.of(self._info(server is not None, bind_error), probes, self._refusals())
            body = json.dumps(own.to_json(), separators=(",", ":")).encode()
            self._keep((self.me, self.instance), body, own)
            self.state.reports[self.me] = own
            for peer in list(self.state.channels):
                self._send_report_to(peer)
            missing, reports, findings, exchanged_at = await self._exchange(final, own)
            verdict_at = self.clock()
            told = set()
            for peer in self.state.channels:  # once per peer process, on its preferred channel
                for ch in self._live(peer):
                    if ch.instance not in told:
                        told.add(ch.instance)
                        ch.send(Kind.DONE)
            await self._linger(final + LINGER_GRACE_S)
            if any(f.severity is Severity.ERROR for f in findings):
                # stay reachable a little: a peer whose probe of us is still under way sees our answer, not a
                # closed port (a token mismatch is judged from probes, never from who knocked at our door)
                await asyncio.sleep(max(min(ERROR_LINGER_S, final - loop.time()), 0))
        finally:
            await self._release(server)
        return MeshResult(self.me, reports, findings, not missing, missing, started_at, verdict_at, self.clock(),
                          probed_at=probed_at, exchanged_at=exchanged_at)

    async def _exchange(self, final: float, own: PeerReport):
        """Wait for the reports we lack (asking others to relay them), then a short settle period.

        The verdict is judged as soon as the reports are complete, while we settle (the CPU is
        idle then), and judged again only if anything arrived in the meantime.
        Returns (missing, reports, findings, when the reports were complete).
        """
        loop = asyncio.get_running_loop()
        last_want = loop.time()
        settled_at = early = None
        complete_at = None
        while loop.time() < final:
            now = loop.time()
            if self._missing():
                settled_at = None
                if now - last_want >= WANT_INTERVAL_S:
                    self._want()
                    last_want = now
                wait = WANT_INTERVAL_S
            else:
                if settled_at is None:
                    settled_at, complete_at = now, self.clock()
                if early is None or early[0] != self.state.version:
                    early = (self.state.version, self._judge(own))
                    continue  # judging took time: look again before waiting
                if now - settled_at >= min(SETTLE_S, self.opt.timeout / 20):
                    break
                wait = SETTLE_S - (now - settled_at)
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(min(wait, final - now), 0.01))
            except asyncio.TimeoutError:
                pass
        if early is None or early[0] != self.state.version:
            early = (self.state.version, self._judge(own))
        return (*early[1], complete_at or self.clock())

    def _judge(self, own: PeerReport):
        missing = tuple(sorted(self._missing()))
        # refusals that came in after our report went out still count for our own verdict
        self.state.reports[self.me] = PeerReport.of(own.info, own.probes, self._refusals())
        reports = tuple(self.state.reports.values()) + tuple(self.state.extra)
        findings = judge_mesh(reports, me=self.me, expected=tuple(self.peers) + (self.me,), missing=missing,
                              timeout=self.opt.timeout)
        return missing, reports, findings

    def _want(self) -> None:
        """Ask a few connected peers for reports of processes we have no connection with."""
        missing = [f"{t}/{i}" for t, i in self._missing_keys()
                   if not any(c.instance == i for c in self._live(t))]
        if not missing:
            return
        peers = [p for p in self.state.channels if self._live(p)]
        random.shuffle(peers)
        have = [f"{t}/{i}" for t, i in self.state.raw]
        for p in peers[:3]:
            self._live(p)[0].send(Kind.WANT, {"have": have, "missing": missing})

    async def _linger(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            groups: dict[tuple[str, str], list[Channel]] = {}
            for chans in self.state.channels.values():
                for c in chans:
                    groups.setdefault((c.peer, c.instance), []).append(c)
            # per process, not per task name: a second process claiming a task may still need relays
            waiting = [k for k, chans in groups.items()
                       if not any(c.done for c in chans) and any(not c.closed for c in chans)]
            if not waiting:
                return
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(until - loop.time(), 0.01))
            except asyncio.TimeoutError:
                return

    async def _release(self, server) -> None:
        chans = [c for cs in self.state.channels.values() for c in cs]
        for c in chans:
            if c.outbound:
                c.close()
        if server is not None:
            server.close()
        loop = asyncio.get_running_loop()
        end = loop.time() + 0.3
        while any(not c.closed for c in chans if not c.outbound) and loop.time() < end:
            await asyncio.sleep(0.01)  # let clients close first: their FIN, our passive close
        for c in chans:
            if not c.outbound and not c.closed:
                c.close(abort=True)
        for t in self._tasks:
            t.cancel()
        await asyncio.sleep(0)
        if server is not None:
            try:
                await asyncio.wait_for(server.wait_closed(), 0.5)
            except asyncio.TimeoutError:
                pass

    def _info(self, bound: bool, bind_error: str) -> TaskInfo:
        local = list(self.local_findings)
        if not bound and not any(f.code in ("DD412", "DD413") for f in local):
            local.extend(bind_findings(self.me, self.spec.address_of(self.task), bind_error))
        return TaskInfo(task=self.me, instance=self.instance, hostname=socket.gethostname(), pid=os.getpid(),
                        address=self.spec.address_of(self.task), bound=bound, bind_error=bind_error,
                        cluster=self.spec.jobs, fingerprint=self.fingerprint, argv=self.argv,
                        findings=tuple(local), side_port=self.side_port)


def run_mesh(spec: ClusterSpec, task: TaskRef, token: str, timeout: float = 60.0, *, argv: Sequence[str] = (),
             fingerprint: Fingerprint | None = None, local_findings: Sequence[Finding] = (),
             bandwidth: bool = False, pings: int = 1, bind_host: str | None = None,
             clock: Callable[[], float] = time.time, side_port: int | None = None) -> MeshResult:
    """Run this task's mesh check to its verdict and release the port. Blocking; never raises for
    network trouble (that is what the findings are for). ``run --node`` calls this before TensorFlow.
    """
    node = MeshNode(spec, task, token, MeshOptions(timeout=timeout, pings=pings, bandwidth=bandwidth,
                                                   bind_host=bind_host),
                    argv=argv, fingerprint=fingerprint, local_findings=local_findings, clock=clock,
                    side_port=side_port)
    return asyncio.run(node.run())
