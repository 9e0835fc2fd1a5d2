"""Receive the bootstrap agent's samples over a Unix datagram socket."""
from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
from dataclasses import dataclass

__all__ = ["AgentSample", "AgentChannel"]


@dataclass(frozen=True)
class AgentSample:
    task: str
    pid: int
    ts: float
    calls: int
    in_call: str | None
    call_since: float | None
    steps: int | None
    step_ts: float | None
    loss: float | None
    stack: tuple[tuple[str, int, str], ...]
    location: tuple[str, int, str] | None
    user_threads: tuple[dict, ...]
    tf_loaded: bool
    checkpoints: tuple[tuple[str, str | None], ...] = ()   # (class, directory) the job checkpoints with
    step_calls: int | None = None    # calls entered of the task's most-called TF function (its step function)
    step_fn: str | None = None       # that function's name
    final: bool = False              # sent as the task's Python exited: the counts are those at its end
    tf_config: str | None = None     # the TF_CONFIG the process holds now (a wrapper may have changed it)
    uncaught: tuple[str, float] | None = None   # (exception type, when): its main thread's code ended raising it
    joining: int | None = None       # the job's non-daemon threads still alive (the interpreter waits for them at exit)

    @staticmethod
    def from_json(d: dict) -> "AgentSample":
        loc = d.get("location")
        return AgentSample(
            task=str(d["task"]), pid=int(d["pid"]), ts=float(d["ts"]), calls=int(d.get("calls") or 0),
            in_call=d.get("in_call"), call_since=d.get("call_since"), steps=d.get("steps"),
            step_ts=d.get("step_ts"), loss=d.get("loss"),
            stack=tuple(tuple(f) for f in d.get("stack") or ()),
            location=tuple(loc) if loc else None,
            user_threads=tuple(d.get("user_threads") or ()), tf_loaded=bool(d.get("tf_loaded")),
            checkpoints=tuple((str(k), v if v is None else str(v)) for k, v in (d.get("checkpoints") or ())),
            step_calls=_top_calls(d)[1], step_fn=_top_calls(d)[0], final=d.get("final") is True,
            tf_config=d["tf_config"] if isinstance(d.get("tf_config"), str) else None,
            uncaught=_uncaught(d.get("uncaught")),
            joining=d["joining"] if isinstance(d.get("joining"), int) and not isinstance(d.get("joining"), bool) else None,
        )

    def stack_text(self) -> str:
        lines = ["Python stack of the main thread (most recent call last), from the distdoctor agent:"]
        for fn, ln, name in self.stack:
            lines.append(f'  File "{fn}", line {ln}, in {name}')
        for t in self.user_threads:
            lines.append("Another thread, busy in user code:")
            for fn, ln, name in t.get("stack", []):
                lines.append(f'  File "{fn}", line {ln}, in {name}')
        return "\n".join(lines)


def _top_calls(d: dict) -> tuple[str | None, int | None]:
    """The most-called TF function in a sample's ``fn_calls`` ([[name, count], ...]) and its count."""
    try:
        rows = [(str(n), int(c)) for n, c in d.get("fn_calls") or ()]
    except (TypeError, ValueError):
        return None, None
    if not rows:
        return None, None
    name, count = max(rows, key=lambda r: r[1])
    return name, count


def _uncaught(v) -> tuple[str, float] | None:
    """A sample's ``uncaught`` ([type name, when]) or None when it is absent or malformed."""
    try:
        name, at = v
        return str(name)[:200], float(at)
    except (TypeError, ValueError):
        return None


class AgentChannel:
    """Bound datagram socket; keeps the latest sample of each task and a callback per sample."""

    def __init__(self, on_sample=None) -> None:
        self._dir = tempfile.mkdtemp(prefix="distdoctor-")
        self.path = os.path.join(self._dir, "agent.sock")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(self.path)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
        self._sock.settimeout(0.2)
        self.latest: dict[str, AgentSample] = {}
        self.on_sample = on_sample
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="dd-agent-channel", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                sample = AgentSample.from_json(json.loads(data))
            except (ValueError, KeyError, TypeError):
                continue
            with self._lock:
                self.latest[sample.task] = sample
            if self.on_sample:
                try:
                    self.on_sample(sample)
                except Exception:
                    pass

    def get(self, task: str) -> AgentSample | None:
        with self._lock:
            return self.latest.get(task)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        try:
            self._sock.close()
            os.unlink(self.path)
            os.rmdir(self._dir)
        except OSError:
            pass
