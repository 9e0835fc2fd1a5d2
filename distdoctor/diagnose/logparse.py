"""Turn raw log lines into :class:`LogEvent` s.

Pure functions over text. Handles TensorFlow's two C++ log formats (absl's
``E0000 00:00:1795280668.471203 2910 file.cc:291] msg`` -- also with a real
month/day clock -- and the older ``2021-03-04 12:00:00.123456: E tensorflow/...``),
the timestamp prefix that ``distdoctor run`` and ``kubectl logs --timestamps``
write, Python tracebacks spread over many lines (also with C++ lines
interleaved), faulthandler blocks, gRPC status blocks, coordination-service
messages, Keras progress lines (tf.keras and Keras 3, ``\\r``/backspace
progress bars), Estimator and plain ``step N ... loss`` lines, kernel
OOM-killer, Slurm and shell crash messages, ANSI colours, NULs and CR line ends.

Known noise (``failed call to cuInit`` on a host with no GPU, oneDNN notices)
never becomes an event.

Two ways in:

* :class:`TaskLogParser` -- one line at a time (the supervisor's live output);
* :class:`~distdoctor.diagnose.logs.taskscan.TaskScanner` -- byte chunks of a
  whole log (``distdoctor diagnose``): a prefilter finds the few lines that can
  matter and only those reach :class:`TaskLogParser`.

Line formats live in :mod:`.logs.formats`, step counting in :mod:`.logs.progress`, the line classifier (which
kind of event a line is: a declared table whose literals the prefilter finds) in :mod:`.logs.linekinds`.
"""
from __future__ import annotations

import re
from dataclasses import replace

from .events import EventKind, LogEvent
from .logs.formats import MAX_TEXT, _TF_FORMAT, clean_line, split_timestamp, task_from_path_text
from .logs.frames import is_own_frame, is_user_frame
from .logs.linekinds import _NOT_MEMORY, classify, classify_hits

__all__ = ["TaskLogParser", "classify", "strip_ansi", "step_time_of", "MAX_LINE"]

# Formats (diagnose.logs.formats), step counting (diagnose.logs.progress) and the byte-level scanner
# (diagnose.logs.taskscan) live in their own modules; their public names stay importable from here.
from .logs.formats import strip_ansi, MAX_LINE  # noqa: E402,F401
from .logs.progress import progress_of, step_time_of  # noqa: E402,F401


_PLAIN_EPOCH = re.compile(r"Epoch (\d+)/(\d+)[ \t]*$")
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Abort\w*)|[A-Za-z_][\w.]*\.[A-Z]\w*)(?::\s?(.*))?$")


_SYMPTOM_EXCEPTIONS = ("UnavailableError", "CancelledError", "DeadlineExceededError", "AbortedError")
_KEEP_KIND_FOR_EXCEPTION = frozenset({EventKind.PORT_IN_USE, EventKind.OOM_TENSOR, EventKind.OOM_GPU, EventKind.NAN_LOSS,
                                      EventKind.RESOURCE, EventKind.NCCL_ERROR, EventKind.CUDA_ERROR})


class TaskLogParser:
    """Streaming parser for one task's log: feed lines, collect events.

    It keeps only a bounded amount of state (the traceback or faulthandler
    block being read), so a log of any size can be streamed through it.
    ``busy`` is true while it is inside such a block: the lines that follow
    belong to it. ``year`` dates absl's month/day clock.
    """

    MAX_FRAMES = 6
    MAX_BLOCK_LINES = 3000
    CONTEXT_LINES = 4

    def __init__(self, task: str | None, *, year: int | None = None) -> None:
        self.task = task
        self.year = year
        self._tb: list[str] | None = None
        self._tb_ts: float | None = None
        self._own = False                     # the frame being read is distdoctor's own: left out with its code
        self._user: tuple[str, ...] = ()      # the last frame in the user's code (and its code line)
        self._detail: _Detail | None = None   # an exception whose message follows on the next lines
        self._fault: LogEvent | None = None   # a faulthandler block being read
        self._fault_frames: list[str] = []
        self._block_lines = 0
        self._last_symptom_line = -10
        self._last_symptom_kind = EventKind.PEER_SYMPTOM
        self.last_ts: float | None = None
        self.lines = 0

    @property
    def busy(self) -> bool:
        """Inside a multi-line block (traceback, faulthandler dump, an exception's message on the lines after it)."""
        return self._tb is not None or self._fault is not None or self._detail is not None

    def wants_context(self, line_no: int) -> bool:
        """Lines right after a symptom may name the peer it is about."""
        return line_no - self._last_symptom_line < self.CONTEXT_LINES

    def feed(self, line_no: int, raw: str, hits=None) -> list[LogEvent]:
        """Read one line; ``hits``, when given, are every structural prefilter pattern found in ``raw`` (ids: see
        :func:`.logs.linekinds.classify_hits`), so that only the rows of the line classifier they lead to are tried.

        An exception whose message is on the lines after it (TensorFlow's ``Graph execution error:``) is held until
        its message has been read: the lines in between are read as usual, their events handed out after it."""
        detail = self._detail
        if detail is None:
            return self._feed(line_no, raw, hits)
        taken = detail.take(split_timestamp(clean_line(raw), self.year)[1])
        if taken is False:   # the line is not the message's: the exception is whole, the line read as usual
            return self._flush_detail() + self._feed(line_no, raw, hits)
        detail.pending.extend(self._feed(line_no, raw, hits))
        return self._flush_detail() if taken == "last" else []

    def _flush_detail(self) -> list[LogEvent]:
        d, self._detail = self._detail, None
        if d is None:
            return []
        return [d.event()] + d.pending

    def _feed(self, line_no: int, raw: str, hits=None) -> list[LogEvent]:
        self.lines += 1
        if raw[:6] == "Epoch " and self._tb is None and self._fault is None:
            m = _PLAIN_EPOCH.match(raw)   # "Epoch 3/60" as printed: nothing to clean, no time stamp, names no task
            if m:
                return [LogEvent(task=self.task, ts=self.last_ts, kind=EventKind.EPOCH, text=raw.strip()[:MAX_TEXT],
                                 line_no=line_no, epoch=int(m.group(1)), total=int(m.group(2)))]
        line = clean_line(raw)
        ts, text = split_timestamp(line, self.year)
        if ts is not None:
            self.last_ts = ts
        else:
            ts = self.last_ts
        out: list[LogEvent] = []
        stripped = text.strip()
        if self._fault is not None:
            done = self._fault_line(text, stripped)
            if not done:
                return out
            out.append(self._flush_fault())
            if done == "consumed":
                return out
        if self._tb is not None:
            self._block_lines += 1
            if self._block_lines > self.MAX_BLOCK_LINES:
                self._tb = None
            elif text.startswith((" ", "\t")) or not stripped:
                if stripped.startswith("File "):
                    self._own = is_own_frame(stripped)   # distdoctor's bootstrap is no part of the failure
                    if self._own:
                        return out
                    if is_user_frame(stripped):
                        self._user = (stripped[:MAX_TEXT],)
                elif self._own or not (self._tb and self._tb[-1].startswith("File ")):
                    return out
                elif len(self._user) == 1 and self._tb[-1] == self._user[0] and stripped:
                    self._user += (stripped[:MAX_TEXT],)
                self._tb.append(stripped[:MAX_TEXT])
                del self._tb[: max(0, len(self._tb) - 2 * self.MAX_FRAMES)]
                return out
            elif _TF_FORMAT.match(stripped):
                pass  # a C++ thread's line printed in the middle of the traceback: read it, stay in the block
            elif _EXC_LINE.match(stripped) or stripped.startswith(("KeyboardInterrupt", "SystemExit")):
                ev = self._exception_event(line_no, ts, stripped)
                self._tb = None
                depth = _depth(stripped.partition(":")[2])
                if _MESSAGE_FOLLOWS.search(stripped) or depth > 0:
                    self._detail = _Detail(ev, depth)
                else:
                    out.append(ev)
                return out
            elif stripped.startswith("During handling") or stripped.startswith("The above exception"):
                return out
            elif stripped.startswith("Traceback (most recent call last)"):
                self._tb = []         # a chained exception's own traceback: its frames are the ones that count
                self._own = False
                self._user = ()
                return out
            else:
                self._tb = None  # not a traceback after all
        if stripped.startswith("Traceback (most recent call last)"):
            self._tb = []
            self._own = False
            self._user = ()
            self._tb_ts = ts
            self._block_lines = 0
            return out
        # the prefilter's hits are the raw line's: they hold every literal of the text when the text is a piece of it
        found = classify(stripped) if hits is None or stripped not in raw else classify_hits(stripped, hits)
        if found is None:
            peers = task_from_path_text(stripped)
            if peers and self.wants_context(line_no) and line_no > self._last_symptom_line:
                found = (self._last_symptom_kind, {})
            else:
                return out
        kind, fields = found
        if kind == EventKind.PEER_CONNECTED:
            named = task_from_path_text(stripped)
            peer = named[0] if named else None   # the task that joined, this one included
        else:
            peer = self._peer(stripped)
        if kind in (EventKind.PEER_SYMPTOM, EventKind.WAITING_FOR_TASKS):
            self._last_symptom_line = line_no
            self._last_symptom_kind = kind
        ev = LogEvent(task=self.task, ts=ts, kind=kind, text=stripped[:MAX_TEXT], line_no=line_no, peer=peer, **fields)
        if kind == EventKind.FATAL_SIGNAL and stripped.startswith("Fatal Python error:"):
            self._fault = ev          # collect the Python stack faulthandler prints next
            self._fault_frames = []
            self._block_lines = 0
            return out
        out.append(ev)
        return out

    def _fault_line(self, text: str, stripped: str) -> str | bool:
        """Read one line of a faulthandler dump. False: still inside; else how it ended."""
        self._block_lines += 1
        if self._block_lines > 400:
            return "next"
        if not stripped or stripped.startswith(("Current thread", "Thread 0x", "<no Python frame>", "Stack (most recent")):
            if stripped.startswith("Current thread"):
                self._fault_frames = []   # the crashing thread's stack is the one we want
            return False
        if text.startswith((" ", "\t")) and stripped.startswith("File "):
            self._fault_frames.append(stripped[:MAX_TEXT])
            return False
        if stripped.startswith("Extension modules:"):
            return "consumed"
        return "next"

    def _flush_fault(self) -> LogEvent:
        ev = replace(self._fault, frames=tuple(self._fault_frames[: 2 * self.MAX_FRAMES]))
        self._fault = None
        self._fault_frames = []
        return ev

    def _peer(self, text: str) -> str | None:
        for t in task_from_path_text(text):
            if t != self.task:
                return t
        return None

    def _frames(self) -> tuple[str, ...]:
        """The traceback's last frames; the last frame in the user's code first when it is not among them."""
        frames = tuple(self._tb[-2 * self.MAX_FRAMES:]) if self._tb else ()
        if self._user and self._user[0] not in frames:
            frames = self._user + frames
        return frames

    def _exception_event(self, line_no: int, ts: float | None, text: str) -> LogEvent:
        frames = self._frames()
        name = text.split(":", 1)[0]
        kind = EventKind.PY_EXCEPTION
        found = classify(text)
        fields: dict = {}
        if name.endswith(_SYMPTOM_EXCEPTIONS) or (found and found[0] == EventKind.PEER_SYMPTOM):
            kind = EventKind.PEER_SYMPTOM
            self._last_symptom_line = line_no
            self._last_symptom_kind = kind
        elif (name.endswith("ResourceExhaustedError") and not _NOT_MEMORY.search(text)) or name == "MemoryError":
            kind = EventKind.OOM_TENSOR
        elif found and found[0] in _KEEP_KIND_FOR_EXCEPTION:
            kind = found[0]
            if kind == EventKind.NAN_LOSS:
                fields = {k: v for k, v in found[1].items() if k in ("step", "total", "loss")}
        return LogEvent(task=self.task, ts=ts if ts is not None else self._tb_ts, kind=kind, text=text[:MAX_TEXT],
                        line_no=line_no, frames=frames, peer=self._peer(text), **fields)

    def close(self) -> list[LogEvent]:
        """Flush a block cut off by the end of the log."""
        out: list[LogEvent] = self._flush_detail()
        if self._fault is not None:
            out.append(self._flush_fault())
        if self._tb:
            out.append(LogEvent(task=self.task, ts=self.last_ts, kind=EventKind.PY_EXCEPTION,
                                text="(log ends inside a Python traceback)", line_no=self.lines,
                                frames=self._frames()))
        self._tb = None
        return out


# TensorFlow's errors from a graph (``Graph execution error:``) print their message after the frames of the op
# that failed: "Detected at node X defined at (most recent call last):", its frames (or "<stack traces
# unavailable>"), in TF 2.10-2.11 "Node: 'X'", then the message, ending in "[[{{node X}}]] [Op:__inference_...]".
# An error while tracing a tf.function says "in user code:", the user's frames, then the exception, all indented.
_MESSAGE_FOLLOWS = re.compile(r"(?:Graph execution error|in user code):\s*$")
_DETAIL_HEAD = re.compile(r"^(?:Detected at node|Node: |<stack traces unavailable>)")
_DETAIL_END = re.compile(r"\[\[\{\{node |\[Op:\w+\]")
# the lines of a value printed inside an exception's message: a numpy array's rows, a dict's entries, its closing
_VALUE_LINE = re.compile(r"^(?:[\[\](){}<>\d.+\-…]|array\(|\.\.\.)")
_INDENTED_EXCEPTION = re.compile(r"^(?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception): ")


class _Detail:
    """An exception line whose message is on the lines after it, being read: its frames' section, then the message
    lines up to TensorFlow's ``[[{{node ...}}]]`` line (or a blank line); or, for a message that opened a bracket
    (``Attempt to convert a value (PerReplica:{``), its lines until the bracket closes: the value printed in between
    (a tensor's numbers) is left out as ``…``, the message's words before and after it kept."""

    MAX_HEAD = 400
    MAX_MESSAGE = 8
    MAX_OPEN = 500        # lines of a message whose brackets are still open (a value printed over several lines)

    def __init__(self, ev: LogEvent, depth: int = 0) -> None:
        self.ev = ev
        self.depth = depth                 # brackets the message opened and has not closed (PerReplica:{ ...)
        self.message: list[str] = []
        self.pending: list[LogEvent] = []
        self.head = 0
        self.user: tuple[str, ...] = ()    # the last frame in the user's code that the frames' section names
        self.after_frame = False           # the line before was such a frame: this one may be its code

    def take(self, text: str) -> bool | str:
        """Whether the line ``text`` (its time stamp removed) is part of the message (``"last"``: its last line);
        False: the exception ended before it. The frames' section is indented; the message is not."""
        line = text.strip()
        if line and progress_of(line):
            return False          # training goes on: whatever the message was, it has ended
        if self.depth > 0:
            if line and (_TF_FORMAT.match(line) or not (text[:1] in (" ", "\t") or _VALUE_LINE.match(line))
                         or line.startswith("Traceback (most recent call last)")):
                return False      # not a printed value's line: the message ended unclosed
            self.head += 1
            self.depth += _depth(line)
            if self.depth <= 0:                  # "}) with an unsupported type (...) to a Tensor.": the message's end
                self.message = ["…", line] if self.head > 1 else [line]
                return "last"
            return "last" if self.head >= self.MAX_OPEN else True
        if not self.message:
            self.head += 1
            if self.head > self.MAX_HEAD or line.startswith("Traceback (most recent call last)"):
                return False
            if text[:1] in (" ", "\t") and _INDENTED_EXCEPTION.match(line):
                self.message.append(line)     # "in user code:" ... "    ValueError: Cannot reshape ..."
                return True
            after_frame, self.after_frame = self.after_frame, False
            if line.startswith("File "):
                frame = line.rstrip(" *")     # autograph marks the user's frames with " *"
                if is_user_frame(frame):
                    self.user = (frame[:MAX_TEXT],)
                    self.after_frame = True
            elif after_frame and line and text[:1] in (" ", "\t"):
                self.user += (line[:MAX_TEXT],)   # the frame's line of code (TF 2.10-2.11, "in user code:")
            if not line or text[:1] in (" ", "\t") or _DETAIL_HEAD.match(line) or _TF_FORMAT.match(line):
                return True
        elif not line or _TF_FORMAT.match(line) or line.startswith("Traceback (most recent call last)"):
            return False
        self.message.append(line)
        return "last" if _DETAIL_END.search(line) or len(self.message) >= self.MAX_MESSAGE else True

    def event(self) -> LogEvent:
        """The exception with its message; the user's frame the section named is its last user frame."""
        frames = self.ev.frames
        if self.user and self.user[0] not in frames:
            frames = frames + self.user
        text = " ".join((self.ev.text,) + tuple(self.message))
        return replace(self.ev, text=text[:MAX_TEXT], frames=frames)



def _depth(text: str) -> int:
    """Brackets ``text`` opens and leaves open: an exception message that prints a value over several lines."""
    return sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
