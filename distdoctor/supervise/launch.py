"""Start one task in its own process group and capture every line it prints.

Each line goes to ``logs/<job>-<index>.log`` prefixed with a wall-clock
timestamp, is handed to a line callback (terminal streaming, log parsing) and
is flushed at once, so the log is complete even when the task dies by SIGKILL
(the pipe still holds what it wrote; the reader drains it to EOF). A line still
being redrawn with ``\r`` (a Keras progress bar, one line per epoch) goes to the
log when it ends; each of its drawings is handed to a redraw callback as it comes,
so the step count moves during an epoch, not only at its end.
"""
from __future__ import annotations

import ctypes
import datetime as _dt
import os
import signal
import subprocess
import threading
import time
from typing import Callable

__all__ = ["TaskProcess", "timestamp_prefix", "last_drawing"]

_PR_SET_PDEATHSIG = 1


def timestamp_prefix(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%dT%H:%M:%S.%f%z")


def _child_setup() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


def last_drawing(pending: bytes | bytearray) -> bytes | None:
    """The newest drawing of a line being redrawn (after its last ``\r``, or before it when nothing follows yet),
    backspaces removed; None when the line has not been redrawn. A drawing still arriving is cut short, which a
    progress bar survives: ``40/7`` is no step of 70, ``40/70 [==`` is step 40."""
    end = len(pending)
    for _ in range(2):
        cr = pending.rfind(b"\r", 0, end)
        if cr < 0:
            return None
        drawing = bytes(pending[cr + 1:end]).replace(b"\x08", b"")
        if drawing.strip():
            return drawing
        end = cr
    return None


class TaskProcess:
    """One launched task. Thread-safe accessors; the process is ours to signal."""

    def __init__(self, task: str, argv: list[str], env: dict[str, str], log_path: str,
                 on_line: Callable[[str, float, str], None], cwd: str | None = None,
                 on_redraw: Callable[[str, float, str], None] | None = None) -> None:
        self.task = task
        self.argv = argv
        self.log_path = log_path
        self.on_line = on_line
        self.on_redraw = on_redraw
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.returncode: int | None = None
        self.last_output_at: float | None = None
        self.killed_by_supervisor = False
        self.signals_sent: list[tuple[float, int]] = []
        self._log = open(log_path, "w", encoding="utf-8", errors="replace", buffering=1)
        self._emit_lock = threading.Lock()
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=_child_setup)
        self.pid = self.proc.pid
        self.pgid = self.pid
        self._reader = threading.Thread(target=self._read, name=f"dd-read-{task}", daemon=True)
        self._reader.start()
        self._waiter = threading.Thread(target=self._wait, name=f"dd-wait-{task}", daemon=True)
        self._waiter.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stream = self.proc.stdout
        pending = bytearray()
        shown = None
        try:
            while True:
                chunk = stream.read1(65536)
                if not chunk:
                    break
                now = time.time()
                start = len(pending)
                pending += chunk
                cut = pending.rfind(b"\n", start)
                if cut >= 0:
                    lines, pending = bytes(pending[:cut]).split(b"\n"), pending[cut + 1:]
                    for raw in lines:
                        self._line(now, raw)
                    shown = None
                if self.on_redraw is not None and b"\r" in chunk:
                    drawing = last_drawing(pending)
                    if drawing is not None and drawing != shown:
                        shown = drawing
                        self.last_output_at = now
                        try:
                            self.on_redraw(self.task, now, drawing.decode("utf-8", errors="replace"))
                        except Exception:
                            pass
            if pending:
                self._line(time.time(), bytes(pending))
        finally:
            try:
                self._log.flush()
            except (OSError, ValueError):
                pass

    def note(self, text: str) -> None:
        """A line of distdoctor's own in the task's log (``[distdoctor] ...``), read like the task's lines: what the
        supervisor learned about the task that its output does not say (the log stays the whole record)."""
        self._emit(time.time(), f"[distdoctor] {text}")

    def _line(self, now: float, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace")
        if len(line) > 65536:
            line = line[:65536] + " [line cut by distdoctor]"
        self.last_output_at = now
        self._emit(now, line)

    def _emit(self, now: float, line: str) -> None:
        with self._emit_lock:   # the reader's lines and the supervisor's notes, one at a time
            try:
                self._log.write(f"{timestamp_prefix(now)} {line}\n")
            except (OSError, ValueError):
                pass
            try:
                self.on_line(self.task, now, line)
            except Exception:
                pass

    def _wait(self) -> None:
        rc = self.proc.wait()
        self.ended_at = time.time()
        self.returncode = rc

    @property
    def alive(self) -> bool:
        return self.returncode is None

    def wait_output(self, timeout: float) -> None:
        """Wait (bounded) until the reader has seen the end of the task's output."""
        self._reader.join(timeout)

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until every line the task wrote is in the log."""
        self._reader.join(timeout)
        try:
            self._log.close()
        except OSError:
            pass

    def signal_group(self, sig: int) -> bool:
        """Send ``sig`` to the task's whole process group (only ours)."""
        self.signals_sent.append((time.time(), sig))
        try:
            os.killpg(self.pgid, sig)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def group_alive(self) -> bool:
        try:
            os.killpg(self.pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def terminate(self, grace: float) -> None:
        """SIGTERM the group, SIGKILL after ``grace`` seconds; also resume stopped ones."""
        if not self.group_alive():
            return
        self.killed_by_supervisor = self.alive or self.killed_by_supervisor
        self.signal_group(signal.SIGTERM)
        self.signal_group(signal.SIGCONT)  # a stopped process cannot act on SIGTERM
        deadline = time.time() + grace
        while time.time() < deadline and self.group_alive():
            if self.returncode is not None and not self._group_has_members():
                break
            time.sleep(0.05)
        if self.group_alive():
            self.signal_group(signal.SIGKILL)
        self._waiter.join(5.0)

    def _group_has_members(self) -> bool:
        return self.group_alive()
