"""Delivery of alert events, off the supervision thread.

Each sink (a webhook, Alertmanager, a command) has its own thread and a
bounded queue, so a dead or slow receiver delays neither supervision nor the
other sinks. :meth:`AlertSender.submit` never blocks: when a queue is full the
event is dropped and counted. A delivery is tried ``attempts`` times with
exponential backoff (stamina); a sink that fails ``max_failures`` events in a
row is given up, and :meth:`AlertSender.notes` says so in the diagnosis.
"""
from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from ..safety.redact import redact_text, redact_url
from .alerts import to_alertmanager, to_json, to_slack
from .events import AlertEvent

__all__ = ["DeliveryError", "WebhookSink", "AlertmanagerSink", "CommandSink", "Retry", "AlertSender"]


class DeliveryError(Exception):
    """One try to deliver an event failed (connection refused, timeout, non-2xx, non-zero exit)."""


def _post(url: str, body: object, timeout: float) -> None:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json", "User-Agent": "distdoctor"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            resp.read(65536)
    except urllib.error.HTTPError as exc:
        raise DeliveryError(f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        raise DeliveryError(getattr(reason, "strerror", None) or str(reason)) from None
    except (OSError, ValueError) as exc:  # timeouts, resets, a malformed URL
        raise DeliveryError(str(exc) or type(exc).__name__) from None


class WebhookSink:
    """``--alert URL``: POST one JSON object per event (``fmt="slack"``: a chat-ready text body)."""

    def __init__(self, url: str, fmt: str = "json") -> None:
        self.url, self.fmt = url, fmt
        self.name = f"alert {redact_url(url)}"

    def send(self, ev: AlertEvent, timeout: float) -> None:
        _post(self.url, to_slack(ev) if self.fmt == "slack" else to_json(ev), timeout)


class AlertmanagerSink:
    """``--alertmanager URL``: POST to Alertmanager's v2 API."""

    def __init__(self, url: str) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/api/v2/alerts") else base + "/api/v2/alerts"
        self.name = f"alertmanager {redact_url(url)}"

    def send(self, ev: AlertEvent, timeout: float) -> None:
        _post(self.url, to_alertmanager(ev), timeout)


class CommandSink:
    """``--alert-cmd CMD``: run ``sh -c CMD`` with the JSON body on stdin and ``DISTDOCTOR_EVENT`` set."""

    def __init__(self, cmd: str) -> None:
        self.cmd = cmd
        self.name = f"alert-cmd {redact_text(cmd)!r}"

    def send(self, ev: AlertEvent, timeout: float) -> None:
        import os
        env = dict(os.environ, DISTDOCTOR_EVENT=ev.event)
        try:
            r = subprocess.run(["sh", "-c", self.cmd], input=json.dumps(to_json(ev)).encode(), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise DeliveryError(f"still running after {timeout:g} s") from None
        except OSError as exc:
            raise DeliveryError(str(exc)) from None
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip().splitlines()
            raise DeliveryError(f"exit code {r.returncode}" + (f": {err[-1][:200]}" if err else ""))


@dataclass(frozen=True)
class Retry:
    """How hard to try. Defaults: 4 tries over about 3.5 s, 5 s per try, a sink given up after 3 lost events."""

    attempts: int = 4
    timeout: float = 5.0          # per try (HTTP request, command)
    wait_initial: float = 0.5
    wait_max: float = 4.0
    max_failures: int = 3
    queue_size: int = 64


class _SinkWorker:
    def __init__(self, sink, retry: Retry) -> None:
        self.sink = sink
        self.retry = retry
        self.queue: queue.Queue = queue.Queue(maxsize=retry.queue_size)
        self.delivered = 0
        self.failed = 0
        self.dropped = 0
        self.tries = 0
        self.consecutive = 0
        self.given_up = False
        self.last_error = ""
        self.thread = threading.Thread(target=self._run, name=f"dd-{sink.name}"[:40], daemon=True)
        self.thread.start()

    def submit(self, ev: AlertEvent) -> bool:
        if self.given_up:
            self.dropped += 1
            return False
        try:
            self.queue.put_nowait(ev)
            return True
        except queue.Full:
            self.dropped += 1
            return False

    def _run(self) -> None:
        while True:
            ev = self.queue.get()
            if ev is None:
                return
            if self.given_up:
                self.dropped += 1
                continue
            if self._deliver(ev):
                self.delivered += 1
                self.consecutive = 0
            else:
                self.failed += 1
                self.consecutive += 1
                if self.consecutive >= self.retry.max_failures:
                    self.given_up = True

    def _deliver(self, ev: AlertEvent) -> bool:
        import stamina
        r = self.retry
        try:
            for attempt in stamina.retry_context(on=DeliveryError, attempts=r.attempts, timeout=None,
                                                 wait_initial=r.wait_initial, wait_max=r.wait_max,
                                                 wait_jitter=r.wait_initial / 2):
                with attempt:
                    self.tries += 1
                    self.sink.send(ev, r.timeout)
            return True
        except DeliveryError as exc:
            self.last_error = redact_text(str(exc))
            return False

    def close(self, deadline: float) -> None:
        try:
            self.queue.put(None, timeout=max(0.0, deadline - time.monotonic()))
        except queue.Full:
            pass
        self.thread.join(max(0.0, deadline - time.monotonic()))


class AlertSender:
    """Fan events out to every sink without ever blocking the caller."""

    def __init__(self, sinks, retry: Retry | None = None) -> None:
        import stamina.instrumentation
        # stamina logs each retry as a WARNING through logging (and counts it in the default
        # Prometheus registry); the supervisor's terminal is not the place: notes() reports failures.
        stamina.instrumentation.set_on_retry_hooks([])
        self.retry = retry or Retry()
        self._workers = [_SinkWorker(s, self.retry) for s in sinks]
        self._closed = False

    def submit(self, ev: AlertEvent) -> None:
        if self._closed:
            return
        for w in self._workers:
            w.submit(ev)

    def close(self, timeout: float = 10.0) -> None:
        """Let queued events go out for up to ``timeout`` seconds, then give up on the rest."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        for w in self._workers:
            w.close(deadline)

    def stats(self) -> dict[str, dict[str, int]]:
        return {w.sink.name: {"delivered": w.delivered, "failed": w.failed, "dropped": w.dropped, "tries": w.tries,
                              "pending": w.queue.qsize()} for w in self._workers}

    def notes(self) -> list[str]:
        """One line per sink that lost events, for the diagnosis."""
        out = []
        for w in self._workers:
            pending = sum(1 for e in list(w.queue.queue) if e is not None)
            lost = w.failed + w.dropped + pending
            if not lost:
                continue
            msg = f"{w.sink.name}: {lost} event(s) not delivered"
            if w.failed:
                msg += f" ({w.failed} failed after {w.retry.attempts} tries each; last error: {w.last_error})"
            if w.given_up:
                msg += f"; given up after {w.retry.max_failures} failures in a row"
            if pending:
                msg += f"; {pending} still queued at exit"
            out.append(msg)
        return out
