"""Start one task in its own process group and capture every line it prints.

Each line goes to ``logs/<job>-<index>.log`` prefixed with a wall-clock
timestamp, is handed to a line callback (terminal streaming, log parsing) and
is flushed at once, so the log is complete even when the task dies by SIGKILL
(the pipe still holds what it wrote; the reader drains it to EOF).
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

__all__ = ["TaskProcess", "timestamp_prefix"]

_PR_SET_PDEATHSIG = 1


def timestamp_prefix(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%dT%H:%M:%S.%f%z")


def _child_setup() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


class TaskProcess:
    """One launched task. Thread-safe accessors; the process is ours to signal."""

    def __init__(self, task: str, argv: list[str], env: dict[str, str], log_path: str,
                 on_line: Callable[[str, float, str], None], cwd: str | None = None) -> None:
        self.task = task
        self.argv = argv
        self.log_path = log_path
        self.on_line = on_line
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.returncode: int | None = None
        self.last_output_at: float | None = None
        self.killed_by_supervisor = False
        self.signals_sent: list[tuple[float, int]] = []
        self._log = open(log_path, "w", encoding="utf-8", errors="replace", buffering=1)
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
        try:
            for raw in iter(stream.readline, b""):
                now = time.time()
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                if len(line) > 65536:
                    line = line[:65536] + " [line cut by distdoctor]"
                self.last_output_at = now
                try:
                    self._log.write(f"{timestamp_prefix(now)} {line}\n")
                except (OSError, ValueError):
                    pass
                try:
                    self.on_line(self.task, now, line)
                except Exception:
                    pass
        finally:
            try:
                self._log.flush()
            except (OSError, ValueError):
                pass

    def note(self, text: str) -> None:
        """A line of distdoctor's own in the task's log (``[distdoctor] ...``), read like the task's lines: what the
        supervisor learned about the task that its output does not say (the log stays the whole record)."""
        now = time.time()
        line = f"[distdoctor] {text}"
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
