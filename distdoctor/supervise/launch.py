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

import collections
import ctypes
import fcntl
import datetime as _dt
import os
import signal
import subprocess
import threading
import time
from typing import Callable

from ..safety import GuardedFile

__all__ = ["TaskProcess", "timestamp_prefix", "last_drawing", "cut_line", "compact_pending", "MAX_LINE", "MAX_PENDING",
           "MAX_BACKLOG"]

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


READ_SIZE = 1 << 20          # the most read from the pipe at once
MAX_LINE = 65536             # characters of one line kept in the log (a longer one keeps its head and its tail)
MAX_PENDING = 1 << 20        # bytes of an unfinished line held: past this, earlier drawings of a \r line go
PIPE_SIZE = 1 << 20          # the task's pipe (Linux's default most for a user: /proc/sys/fs/pipe-max-size)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
MAX_BACKLOG = 64 << 20       # bytes read from the pipe and not yet written: past this, output is dropped, not waited for
_CUT = " [... {n} characters cut by distdoctor ...] "


def cut_size(line: str) -> int:
    """How many characters :func:`cut_line` leaves out of ``line``."""
    return max(0, len(line) - 2 * (MAX_LINE // 2)) if len(line) > MAX_LINE else 0


def cut_line(line: str) -> str:
    """A line of at most about :data:`MAX_LINE` characters: its head and its tail (a progress bar's last state)."""
    n = cut_size(line)
    if not n:
        return line
    half = MAX_LINE // 2
    return line[:half] + _CUT.format(n=n) + line[-half:]


def compact_pending(pending: bytearray) -> int:
    """Shrink an unfinished line past :data:`MAX_PENDING` in place; the bytes dropped. A line redrawn with ``\r``
    keeps its newest drawings (the last state); any other keeps its head and its tail."""
    if len(pending) <= MAX_PENDING:
        return 0
    before = len(pending)
    cr = pending.rfind(b"\r")
    if cr > 0:
        prev = pending.rfind(b"\r", 0, cr)
        keep_from = prev if prev >= 0 and cr - prev <= MAX_PENDING // 2 else cr
        if before - keep_from <= MAX_PENDING // 2:
            del pending[:keep_from]
            return before - len(pending)
    half = MAX_PENDING // 4
    del pending[half:len(pending) - half]
    pending[half:half] = b"\r"   # what follows is the line's tail: a later state, as a redrawn line's
    return before - len(pending)


class TaskProcess:
    """One launched task. Thread-safe accessors; the process is ours to signal.

    Two threads: ``dd-read`` drains the task's pipe into a bounded backlog at once, whatever happens downstream
    (a full disk, a blocked terminal, a slow reader), so the task never waits on distdoctor; ``dd-log`` takes the
    backlog a chunk at a time, writes the chunk's lines to the log with one time stamp (one write) and hands them
    on. ``on_chunk(task, ts, text, data)`` takes the chunk's whole lines (``text``, no final newline) and the bytes
    written to the log for them (``data``); without it ``on_line(task, ts, line)`` takes them one by one."""

    def __init__(self, task: str, argv: list[str], env: dict[str, str], log_path: str,
                 on_line: Callable[[str, float, str], None] | None, cwd: str | None = None,
                 on_redraw: Callable[[str, float, str], None] | None = None,
                 on_chunk: Callable[[str, float, str, bytes], None] | None = None, losses=None,
                 hold: bool = False) -> None:
        self.task = task
        self.argv = argv
        self.log_path = log_path
        self.on_line = on_line
        self.on_redraw = on_redraw
        self.on_chunk = on_chunk
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.returncode: int | None = None
        self.last_output_at: float | None = None
        self.killed_by_supervisor = False
        self.signals_sent: list[tuple[float, int]] = []
        self.dropped_bytes = 0      # output dropped because distdoctor fell behind (the backlog was full)
        self.cut_bytes = 0          # bytes (characters, once decoded) of over-long lines left out of the log
        self.unread_chunks = 0      # pieces of output in the log that the live reading failed on (an internal error)
        self.unread_error: str | None = None
        self.losses = losses
        self._log = GuardedFile(log_path, f"the log of {task}", losses)
        self._emit_lock = threading.Lock()
        self._cv = threading.Condition()
        self._backlog: collections.deque[tuple[float, bytes]] = collections.deque()
        self._backlog_bytes = 0
        self._eof = False
        # ``hold``: the lines wait (in the backlog) until :meth:`release` -- the caller registers what reads them
        # first, so that no line the task prints at once goes by unread
        self._released = threading.Event()
        if not hold:
            self._released.set()
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=_child_setup)
        self.pid = self.proc.pid
        self.pgid = self.pid
        self._pump = threading.Thread(target=self._drain_pipe, name=f"dd-read-{task}", daemon=True)
        self._pump.start()
        self._reader = threading.Thread(target=self._read, name=f"dd-log-{task}", daemon=True)
        self._reader.start()
        self._waiter = threading.Thread(target=self._wait, name=f"dd-wait-{task}", daemon=True)
        self._waiter.start()

    def _drain_pipe(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        try:   # a larger pipe: the task writes on while this thread waits for the GIL (up to 5 ms a switch)
            fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:
            pass
        try:
            while True:
                try:
                    chunk = os.read(fd, READ_SIZE)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                now = time.time()
                self.last_output_at = now
                with self._cv:
                    if self._backlog_bytes + len(chunk) > MAX_BACKLOG:
                        self.dropped_bytes += len(chunk)
                    else:
                        self._backlog.append((now, chunk))
                        self._backlog_bytes += len(chunk)
                    self._cv.notify()
        finally:
            with self._cv:
                self._eof = True
                self._cv.notify()

    def _next(self) -> tuple[float, bytes] | None:
        """The backlog so far, as one chunk (None at the end of the output)."""
        with self._cv:
            while not self._backlog and not self._eof:
                self._cv.wait()
            if not self._backlog:
                return None
            now = self._backlog[-1][0]
            data = b"".join(c for _, c in self._backlog) if len(self._backlog) > 1 else self._backlog[0][1]
            self._backlog.clear()
            self._backlog_bytes = 0
            return now, data

    def release(self) -> None:
        """Hand the task's lines on from now (a ``hold`` process keeps them in its backlog until then)."""
        self._released.set()

    def _read(self) -> None:
        self._released.wait()
        pending = bytearray()
        shown = None
        said_dropped = 0
        while True:
            got = self._next()
            if got is None:
                break
            now, chunk = got
            if self.dropped_bytes > said_dropped:
                n, said_dropped = self.dropped_bytes - said_dropped, self.dropped_bytes
                self._note_loss(now, f"{n} bytes of output dropped: distdoctor could not keep up with the task")
            start = len(pending)
            pending += chunk
            cut = pending.rfind(b"\n", start)
            if cut >= 0:
                body = bytes(pending[:cut])
                del pending[:cut + 1]
                self._lines(now, body)
                shown = None
            if len(pending) > MAX_PENDING:
                self.cut_bytes += compact_pending(pending)
            if self.on_redraw is not None and b"\r" in chunk:
                drawing = last_drawing(pending)
                if drawing is not None and drawing != shown:
                    shown = drawing
                    try:
                        self.on_redraw(self.task, now, drawing.decode("utf-8", errors="replace"))
                    except Exception:
                        pass
        if pending:
            self._lines(time.time(), bytes(pending))

    def _note_loss(self, now: float, text: str) -> None:
        if self.losses is not None:
            what = f"the output of {self.task}"
            self.losses.lost(what, 0, text)
        self._emit(now, f"[distdoctor] {text}")

    def note(self, text: str) -> None:
        """A line of distdoctor's own in the task's log (``[distdoctor] ...``), read like the task's lines: what the
        supervisor learned about the task that its output does not say (the log stays the whole record)."""
        self._emit(time.time(), f"[distdoctor] {text}")

    def _lines(self, now: float, body: bytes) -> None:
        """Whole lines (``body`` without its last newline) printed by ``now``: to the log, then on."""
        text = body.decode("utf-8", errors="replace")
        if len(text) > MAX_LINE:
            parts = text.split("\n")
            if max(map(len, parts)) > MAX_LINE:
                self.cut_bytes += sum(map(cut_size, parts))
                text = "\n".join(map(cut_line, parts))
        self._emit(now, text)

    def _emit(self, now: float, text: str) -> None:
        prefix = timestamp_prefix(now) + " "
        data = (prefix + text.replace("\n", "\n" + prefix) + "\n").encode("utf-8", "replace")
        with self._emit_lock:   # the reader's lines and the supervisor's notes, one at a time
            self._log.write(data)
            if self.on_chunk is not None:
                try:
                    self.on_chunk(self.task, now, text, data)
                except Exception as exc:   # the task goes on; the verdict says its reading missed lines
                    self._unread(exc)
            elif self.on_line is not None:
                for line in text.split("\n"):
                    try:
                        self.on_line(self.task, now, line)
                    except Exception as exc:
                        self._unread(exc)

    def _unread(self, exc: Exception) -> None:
        self.unread_chunks += 1
        if self.unread_error is None:
            self.unread_error = f"{type(exc).__name__}: {str(exc)[:160]}"

    def _wait(self) -> None:
        rc = self.proc.wait()
        self.ended_at = time.time()
        self.returncode = rc

    @property
    def alive(self) -> bool:
        return self.returncode is None

    def wait_output(self, timeout: float) -> None:
        """Wait (bounded) until the reader has seen the end of the task's output."""
        self.release()
        self._reader.join(timeout)

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until every line the task wrote is in the log."""
        self.release()
        self._reader.join(timeout)
        self._log.close()

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
