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
* :class:`TaskScanner` -- byte chunks of a whole log (``distdoctor diagnose``).
  It does not classify every line: one translated-bytes regex over big chunks
  finds the few lines that can matter, Keras progress is sampled at epoch
  boundaries and chunk ends, and only those lines reach :class:`TaskLogParser`.
  Its result is a :class:`TaskScan`.
"""
from __future__ import annotations

import calendar
import collections
import re
from dataclasses import dataclass, replace

from .events import EventKind, LogEvent

__all__ = ["TaskLogParser", "TaskScanner", "TaskScan", "split_timestamp", "strip_ansi", "task_from_path_text",
           "classify", "step_time_of", "clean_line", "MAX_LINE"]

MAX_LINE = 64 * 1024      # characters of one line that are ever looked at
MAX_TEXT = 4000           # characters of one event's text

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
# distdoctor's own prefix (2026-11-21T18:03:04.120415+0000) and RFC 3339 collector
# prefixes (kubectl logs --timestamps: 2026-11-21T18:03:04.120415123Z): not program output.
_PREFIX_TS = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d) ")
_ABSL = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:(\d{9,11}\.\d+)\s")
_ABSL_CLOCK = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s")
_OLD_TF = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)\.(\d+): [IWEF] ")
_ISO_GENERIC = re.compile(r"^\[?(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?\]?[\s:]")
_TASK_PATH = re.compile(r"/job:([A-Za-z_]+)(?:/replica:\d+)?/task:(\d+)")
_TF_FORMAT = re.compile(r"^(?:[IWEF]\d{4} \d\d:\d\d:\d|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] )")

_NOISE = (
    "failed call to cuInit",
    "oneDNN custom operations are on",
    "Could not find cuda drivers",
    "Unable to register cu",
    "This TensorFlow binary is optimized",
    "TF-TRT Warning",
    "All log messages before absl::InitializeLog",
    "will not be optimized because the dataset does not implement",
    "computation placer already registered",
    "Check health not enabled",
    "To enable the following instructions",
    "cuda_dnn.cc",
    "Unable to register cuDNN",
)

# A symptom that says outright the failure came from elsewhere: checked before
# the cause patterns, because these lines often quote the peer's own error
# ("Collective ops is aborted by: ... OOM when allocating ...").
_FROM_PEER = (
    "Collective ops is aborted by",
    "Additional GRPC error information from remote target",
    "The following tasks are unhealthy",
    "stopped sending heartbeats",
    "The tasks have crashed",
    "heartbeat timeout",
    "RecvTensor cancelled",
    "Polled an error from coordination service",
    "Failed to send RPC to coordination service",
    "coordination service encountered an error",
    "Proceeding with agent shutdown anyway",
    "Shutdown barrier in coordination service has failed",
)
_PEER_SYMPTOMS = (
    "Connection reset by peer",
    "Socket closed",
    "failed to connect to all addresses",
    "Connection refused",
    "DEADLINE_EXCEEDED",
    "Deadline Exceeded",
    "is unhealthy",
    "Cancelling all pending collectives",
    "Broken pipe",
    "Connection timed out",
    "Unable to find the relevant tensor remote_handle",
    "Coordination service has stopped",
    "has been set to ERROR",
    "UnavailableError",
    "Collective has timed out",
    "Barrier timed out",
    "Aborting RingReduce",
    "StartAbort",
    "Local rendezvous is aborting",
)
_CONFIG_ERRORS = (
    "that is not in the cluster",
    "Unexpected task registered",
    "Duplicate task registration",
    "with a different incarnation",
    "connects to a wrong cluster",
)
_WAITING = re.compile(r"Waiting for (\d+)/(\d+) tasks to connect")
_SHELL_CRASH = re.compile(r"^(?:.*?: line \d+: +\d+ )?(Segmentation fault|Aborted|Bus error|Illegal instruction|"
                          r"Floating point exception|Trace/breakpoint trap)(?: +\(core dumped\))?(?:\s.*)?$")
_PROGRESS = re.compile(r"(?:^|\s)(\d+)/(\d+|Unknown)\s+(?:\[[=>.]*\]|-\s|━)")
_ESTIMATOR = re.compile(r"\bloss = ([-+\w.]+), step = (\d+)\b")
_GENERIC_STEP = re.compile(r"^(?:\S+\s+){0,4}?(?:global[_ ])?[Ss]tep[\s:=#\[]+(\d+)(?:\s*/\s*(\d+))?\b")
_EPOCH = re.compile(r"^Epoch (\d+)/(\d+)\s*$")
_LOSS = re.compile(r"\bloss(?::\s*|\s*=\s*|\s+)([-+]?(?:nan|inf|[\d.]+(?:e[-+]?\d+)?))", re.IGNORECASE)
_STEP_TIME = re.compile(r"(\d+(?:\.\d+)?)(s|ms|us|µs)/step")
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Abort\w*)|[A-Za-z_][\w.]*\.[A-Z]\w*)(?::\s?(.*))?$")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


def strip_ansi(text: str) -> str:
    if "\x1b" not in text:
        return text
    return _ANSI.sub("", text)


def clean_line(raw: str) -> str:
    """One physical line as a person's terminal would show it.

    Removes the line end, ANSI colours, NULs and other control characters; of a
    line redrawn with ``\\r`` (progress bars) keeps the last drawing; caps the
    length at :data:`MAX_LINE`.
    """
    line = raw.rstrip("\r\n")
    if len(line) > MAX_LINE:
        line = line[:MAX_LINE]
    if "\r" in line:
        prefix = ""
        m = _PREFIX_TS.match(line)
        if m:  # keep the collector's timestamp of a redrawn line
            prefix, line = line[:m.end()], line[m.end():]
        parts = [p for p in line.split("\r") if p.strip()]
        line = prefix + (parts[-1] if parts else "")
    line = strip_ansi(line)
    if _CTRL.search(line):
        line = _CTRL.sub("", line)
    return line


def _epoch(y: str, mo: str, d: str, h: str, mi: str, s: str, frac: str | None, tz: str | None) -> float | None:
    try:
        secs = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s), 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if not (1 <= int(mo) <= 12 and 1 <= int(d) <= 31 and int(h) < 24 and int(mi) < 60 and int(s) < 62):
        return None
    if frac:
        secs += int(frac[:6]) / 10 ** min(len(frac), 6)
    if tz and tz != "Z":
        sign = -1 if tz[0] == "+" else 1
        tz = tz[1:].replace(":", "")
        secs += sign * (int(tz[:2]) * 3600 + int(tz[2:4]) * 60)
    elif not tz:
        # No zone: the writer's local time. Read it as UTC; every task's log of
        # one job is written in the same zone, so their order is unchanged.
        pass
    return float(secs)


def split_timestamp(line: str, year: int | None = None) -> tuple[float | None, str]:
    """Return (unix time or None, text) for one line.

    A collector's prefix (distdoctor's, ``kubectl logs --timestamps``) is
    removed from the text; TensorFlow's own timestamps stay in the text (they
    are part of what a person reads) but are returned. absl's ``I1121
    18:03:04.1`` clock has no year: it is read in ``year`` when given, and
    ignored otherwise. Times without a zone are read as UTC.
    """
    c = line[:1]
    if c.isdigit():
        m = _PREFIX_TS.match(line)
        if m:
            return _epoch(*m.groups()), line[m.end():]
        m = _OLD_TF.match(line)
        if m:
            return _epoch(*m.groups(), None), line
    if c in "IWEF":
        m = _ABSL.match(line)
        if m:
            try:
                return float(m.group(1)), line
            except ValueError:
                return None, line
        if year is not None:
            m = _ABSL_CLOCK.match(line)
            if m:
                mo, d, h, mi, s, frac = m.groups()
                return _epoch(str(year), mo, d, h, mi, s, frac, None), line
        return None, line
    if c.isdigit() or c == "[":
        m = _ISO_GENERIC.match(line)
        if m:
            return _epoch(*m.groups()), line
    return None, line


def task_from_path_text(text: str) -> list[str]:
    """All tasks a TensorFlow message names, as ``job:index``."""
    return [f"{j}:{i}" for j, i in _TASK_PATH.findall(text)]


def step_time_of(text: str) -> float | None:
    """Seconds per step a Keras progress line reports (``9ms/step``), if any."""
    m = _STEP_TIME.search(text)
    if not m:
        m2 = re.search(r"global_step/sec: ([\d.]+)", text)
        if m2:
            try:
                rate = float(m2.group(1))
            except ValueError:
                return None
            return 1.0 / rate if rate > 0 else None
        return None
    value = float(m.group(1))
    return value * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}[m.group(2)]


def _loss(text: str) -> float | None:
    lm = _LOSS.search(text)
    if not lm:
        return None
    try:
        return float(lm.group(1))
    except ValueError:
        return None


def _progress(text: str) -> tuple[EventKind, dict] | None:
    found = _progress_styled(text)
    return None if found is None else found[:2]


def _progress_styled(text: str) -> tuple[EventKind, dict, str] | None:
    """(kind, fields, style): style is ``keras``, ``estimator`` or ``generic`` (a ``step N ... loss`` print)."""
    step: int | None = None
    total: int | None = None
    style = "keras"
    m = _PROGRESS.search(text)
    if m:
        step = int(m.group(1))
        total = None if m.group(2) == "Unknown" else int(m.group(2))
        if total is not None and not (0 < total < 10**9 and step <= total):
            return None
    else:
        m = _ESTIMATOR.search(text)
        if m:
            step = int(m.group(2))
            style = "estimator"
        else:
            style = "generic"
            m = _GENERIC_STEP.match(text)
            if not m or "loss" not in text.lower():
                return None
            step = int(m.group(1))
            total = int(m.group(2)) if m.group(2) else None
            if total is not None and step > total:
                return None
    if step is None or step > 10**12:
        return None
    loss = _loss(text)
    fields = {"step": step, "total": total, "loss": loss}
    if loss is not None and (loss != loss or loss in (float("inf"), float("-inf"))):
        return EventKind.NAN_LOSS, fields, style
    return EventKind.PROGRESS, fields, style


def classify(text: str) -> tuple[EventKind, dict] | None:
    """Classify one line of text (timestamp prefix already removed).

    Returns the event kind and its typed fields, or None for lines that are
    not evidence of anything.
    """
    if not text or len(text) < 3:
        return None
    for noise in _NOISE:
        if noise in text:
            return None
    if text.startswith("[distdoctor]"):
        return EventKind.DISTDOCTOR, {}
    for marker in _FROM_PEER:
        if marker in text:
            return EventKind.PEER_SYMPTOM, {}
    if ("Fatal Python error:" in text or "core dumped" in text or "*** SIG" in text or "Received signal" in text
            or ("received signal" in text.lower() and "SIG" in text) or "Caught signal" in text):
        return EventKind.FATAL_SIGNAL, {}
    if _SHELL_CRASH.match(text):
        return EventKind.FATAL_SIGNAL, {}
    if "Check failed:" in text or "CHECK failed" in text or (text[0] == "F" and _ABSL.match(text) is not None) \
            or (text[0].isdigit() and ": F " in text[:40] and _OLD_TF.match(text) is not None):
        return EventKind.CHECK_FAILED, {}
    low = text.lower()
    if ("out of memory: killed process" in low or "memory cgroup out of memory" in low or "oom-kill" in low
            or "oom_reaper" in low or "oom_kill event" in low or "oomkilled" in low or "oom killed" in low):
        return EventKind.OOM_KILLER, {}
    if "CUDA_ERROR_OUT_OF_MEMORY" in text or "CUDA out of memory" in text or ("OOM when allocating" in text and "GPU" in text):
        return EventKind.OOM_GPU, {}
    if "OOM when allocating" in text or "ResourceExhaustedError" in text or "std::bad_alloc" in text or text.startswith("MemoryError"):
        return EventKind.OOM_TENSOR, {}
    if ("Address already in use" in text or "Failed to add port to server" in text or "Could not start gRPC server" in text
            or "No address added out of total" in text):
        return EventKind.PORT_IN_USE, {}
    if "mismatch in the collective instance" in text:
        return EventKind.COLLECTIVE_MISMATCH, {}
    m = _WAITING.search(text)
    if m and m.group(1) == "0":
        return EventKind.PEER_CONNECTED, {}      # "Waiting for 0/2 tasks to connect.": every task has joined
    if m or "Example stragglers" in text:
        return EventKind.WAITING_FOR_TASKS, {}
    for marker in _CONFIG_ERRORS:
        if marker in text:
            return EventKind.TF_ERROR, {}
    if "is slow compared to the batch time" in text:
        return EventKind.TF_ERROR, {}   # Keras names this task's own callbacks as the slow part of each step
    if "Your input ran out of data" in text:
        return EventKind.TF_ERROR, {}   # a worker's data ended before its steps did (sharding imbalance)
    for symptom in _PEER_SYMPTOMS:
        if symptom in text:
            return EventKind.PEER_SYMPTOM, {}
    if "NCCL WARN" in text or "NCCL error" in text or "ncclSystemError" in text or "ncclInternalError" in text \
            or "ncclUnhandledCudaError" in text or "ncclRemoteError" in text:
        return EventKind.NCCL_ERROR, {}
    if "CUDA_ERROR" in text or "cudaError" in text or "CUDA error" in text:
        return EventKind.CUDA_ERROR, {}
    if "Invalid loss, terminating training" in text or "had NaN values" in text or "had Inf values" in text:
        return EventKind.NAN_LOSS, {}
    if ("No space left on device" in text or "Too many open files" in text or "Resource temporarily unavailable" in text
            or "Cannot allocate memory" in text or "Disk quota exceeded" in text):
        return EventKind.RESOURCE, {}
    if (("Received SIGTERM" in text or "SIGTERM received" in text or "was preempted" in low or "preemption notice" in low
         or "DUE TO PREEMPTION" in text or "termination notice" in low or "PreemptionCheckpointHandler" in text)
            and "e.g. preemption" not in text):
        return EventKind.PREEMPTION, {}
    if "CANCELLED AT" in text and "slurmstepd" in text:
        return EventKind.PREEMPTION, {}
    if "TF_CONFIG" in text and "cluster" in text and "{" in text:
        return EventKind.CLUSTER_SPEC, {}        # the task printed the cluster it believes in (before joining it)
    if "Started server with target" in text:
        return EventKind.SERVER_STARTED, {}
    if "connected to coordination service" in text and _TASK_PATH.search(text):
        # The coordination service (on its leader task only) registering a task, itself included:
        # "/job:worker/replica:0/task:1 has connected to coordination service. Incarnation: ..."
        return EventKind.PEER_CONNECTED, {}
    # This task joined the cluster. TF 2.21 prints, in order: every task's own coordination agent
    # "Coordination agent has successfully connected." (C++ INFO, hidden by TF_CPP_MIN_LOG_LEVEL>=1),
    # then, with Python INFO logging on, "Enabled multi-worker collective ops with available devices"
    # and "MultiWorkerMirroredStrategy with cluster_spec = ...".
    if ("Coordination agent has successfully connected" in text or "Enabled multi-worker collective ops" in text
            or "MultiWorkerMirroredStrategy with cluster_spec" in text
            or "has successfully connected to coordination service" in text):
        return EventKind.CLUSTER_CONNECTED, {}
    if text.startswith("Epoch"):
        m = _EPOCH.match(text.strip())
        if m:
            return EventKind.EPOCH, {"epoch": int(m.group(1)), "total": int(m.group(2))}
    if ("/" in text or "step" in low) and ("loss" in low or "step" in low or "[" in text or "━" in text):
        found = _progress(text)
        if found:
            return found
    if (text[0] == "E" and _ABSL.match(text) or _ABSL_CLOCK.match(text) and text[0] == "E") \
            or (text[0].isdigit() and ": E " in text[:40] and _OLD_TF.match(text)):
        return EventKind.TF_ERROR, {}
    return None


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
        self._tb_line = 0
        self._fault: LogEvent | None = None   # a faulthandler block being read
        self._fault_frames: list[str] = []
        self._block_lines = 0
        self._last_symptom_line = -10
        self._last_symptom_kind = EventKind.PEER_SYMPTOM
        self.last_ts: float | None = None
        self.lines = 0

    @property
    def busy(self) -> bool:
        """Inside a multi-line block (traceback, faulthandler dump)."""
        return self._tb is not None or self._fault is not None

    def wants_context(self, line_no: int) -> bool:
        """Lines right after a symptom may name the peer it is about."""
        return line_no - self._last_symptom_line < self.CONTEXT_LINES

    def feed(self, line_no: int, raw: str) -> list[LogEvent]:
        self.lines += 1
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
                if stripped.startswith("File ") or (self._tb and self._tb[-1].startswith("File ")):
                    self._tb.append(stripped[:MAX_TEXT])
                    del self._tb[: max(0, len(self._tb) - 2 * self.MAX_FRAMES)]
                return out
            elif _TF_FORMAT.match(stripped):
                pass  # a C++ thread's line printed in the middle of the traceback: read it, stay in the block
            elif _EXC_LINE.match(stripped) or stripped.startswith(("KeyboardInterrupt", "SystemExit")):
                out.append(self._exception_event(line_no, ts, stripped))
                self._tb = None
                return out
            elif stripped.startswith("During handling") or stripped.startswith("The above exception"):
                return out
            elif stripped.startswith("Traceback (most recent call last)"):
                self._tb = []
                return out
            else:
                self._tb = None  # not a traceback after all
        if stripped.startswith("Traceback (most recent call last)"):
            self._tb = []
            self._tb_ts = ts
            self._tb_line = line_no
            self._block_lines = 0
            return out
        found = classify(stripped)
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

    def _exception_event(self, line_no: int, ts: float | None, text: str) -> LogEvent:
        frames = tuple(self._tb[-2 * self.MAX_FRAMES:]) if self._tb else ()
        name = text.split(":", 1)[0]
        kind = EventKind.PY_EXCEPTION
        found = classify(text)
        fields: dict = {}
        if name.endswith(_SYMPTOM_EXCEPTIONS) or (found and found[0] == EventKind.PEER_SYMPTOM):
            kind = EventKind.PEER_SYMPTOM
            self._last_symptom_line = line_no
            self._last_symptom_kind = kind
        elif name.endswith("ResourceExhaustedError") or name == "MemoryError":
            kind = EventKind.OOM_TENSOR
        elif found and found[0] in _KEEP_KIND_FOR_EXCEPTION:
            kind = found[0]
            if kind == EventKind.NAN_LOSS:
                fields = {k: v for k, v in found[1].items() if k in ("step", "total", "loss")}
        return LogEvent(task=self.task, ts=ts if ts is not None else self._tb_ts, kind=kind, text=text[:MAX_TEXT],
                        line_no=line_no, frames=frames, peer=self._peer(text), **fields)

    def close(self) -> list[LogEvent]:
        """Flush a block cut off by the end of the log."""
        out: list[LogEvent] = []
        if self._fault is not None:
            out.append(self._flush_fault())
        if self._tb:
            out.append(LogEvent(task=self.task, ts=self.last_ts, kind=EventKind.PY_EXCEPTION,
                                text="(log ends inside a Python traceback)", line_no=self.lines,
                                frames=tuple(self._tb[-2 * self.MAX_FRAMES:])))
        self._tb = None
        return out


def with_task(ev: LogEvent, task: str) -> LogEvent:
    return replace(ev, task=task)


# --------------------------------------------------------------------------
# The byte-level scanner
# --------------------------------------------------------------------------

# Every keyword below begins with an upper-case letter other than I and W. The
# scanner maps those letters to \x01 (bytes.translate, ~1 GB/s) and searches
# the translated chunk with one regex whose every branch begins with \x01: the
# regex engine then skips with a fast literal search and only tries the
# keyword trie at upper-case letters. I and W stay themselves so that the
# INFO/WARNING prefix of nearly every TensorFlow line (I0000, W0000) is not a
# candidate, while E0000/F0000 (errors, fatal) are. False positives only cost
# time; the line is classified properly afterwards.
_KEYWORDS = (
    "Traceback (most", "Error", "Exception", "Exit", "KeyboardInterrupt", "Fatal", "Segmentation fault",
    "Bus error", "Floating point", "Aborted", "Aborting", "Abort", "Killed", "Trace/breakpoint",
    "E tensorflow/", "F tensorflow/", "E external/", "F external/",
    "SIGSEGV received", "SIGABRT received", "SIGBUS received", "Received signal", "Caught signal",
    "Received SIGTERM", "SIGTERM received", "Check failed", "CHECK failed", "OOM when", "OOMKilled",
    "Out of memory", "Memory cgroup", "Address already", "Failed", "Could not start", "No address added",
    "Example stragglers", "Connection reset", "Connection refused", "Connection timed",
    "Socket closed", "DEADLINE_EXCEEDED", "Deadline Exceeded", "Deadline exceeded",
    "The following tasks", "The tasks have", "Task /job", "RecvTensor cancel", "Cancelling", "CANCELLED AT",
    "Collective ops", "Collective has", "Coordination service", "Coordination agent", "Additional GRPC",
    "UNAVAILABLE:", "Unavailable", "Unexpected task", "Duplicate task", "Barrier timed", "Shutdown barrier",
    "Heartbeat", "Terminating", "Polled an error", "Proceeding with agent", "Local rendezvous is",
    "NCCL WARN", "NCCL error", "CUDA_ERROR", "CUDA error", "NaN",
    "No space left", "Too many open", "Resource exhausted", "Resource temporarily", "Cannot allocate",
    "Disk quota", "Preempt", "Started server", "Enabled multi", "MultiWorker", "Epoch ", "TF_CONFIG",
    "Broken pipe", "Tensor had", "Your input ran out", "Callback method", "Detected ", "Memory cgroup",
)
_UPPER = bytes(c for c in range(65, 91) if c not in b"IW")
_TABLE = bytes.maketrans(_UPPER, b"\x01" * len(_UPPER))


def _trie_regex(words: list[bytes]) -> bytes:
    """A regex matching any of ``words``, factored by common prefixes."""
    words = sorted(set(words))
    # A word that has a shorter word as prefix is redundant for a prefilter.
    kept: list[bytes] = []
    for w in words:
        if not any(w.startswith(k) for k in kept):
            kept.append(w)
    if len(kept) == 1:
        return re.escape(kept[0])
    groups: dict[bytes, list[bytes]] = collections.OrderedDict()
    for w in kept:
        groups.setdefault(w[:1], []).append(w[1:])
    alts = []
    for head, rests in groups.items():
        rests = [r for r in rests]
        if any(not r for r in rests):
            alts.append(re.escape(head))
        elif len(rests) == 1:
            alts.append(re.escape(head) + re.escape(rests[0]))
        else:
            alts.append(re.escape(head) + b"(?:" + _trie_regex(rests) + b")")
    return b"(?:" + b"|".join(alts) + b")" if len(alts) > 1 else alts[0]


def _build_prefilter() -> re.Pattern[bytes]:
    words = [k.encode().translate(_TABLE) for k in _KEYWORDS]
    if not all(w[:1] == b"\x01" for w in words):
        raise ValueError("every prefilter keyword must begin with an upper-case letter other than I and W")
    return re.compile(b"\x01" + _trie_regex([w[1:] for w in words]))


_PREFILTER = _build_prefilter()
# Severity-coded C++ lines (E/F level) anywhere: one literal-prefixed regex each (fast paths in re).
# Keywords that cannot be anchored on a translated letter: one literal-prefixed regex each (fast paths in re).
# absl's E/F lines are matched raw: "E1"/"F0" on translated bytes would match every "T1" of an ISO time stamp.
_RAW_PREFILTERS = (re.compile(rb"Waiting for \d"), re.compile(rb"I(?:nvalid loss|llegal instruction|nf values)"),
                   re.compile(rb"connected to coordination service"),
                   re.compile(rb"(?:^|[0-9Z] )[EF][01]\d{3} \d\d:\d\d:", re.M))


class _Candidates:
    """Offsets (inside lines) of every prefilter hit in a buffer: one Hyperscan pass over the keywords and the raw
    patterns when Hyperscan is installed (measured several times faster than the translated-bytes regex on real TF
    logs), else the translated-bytes regex plus the raw regexes."""

    def __init__(self) -> None:
        self._db = None
        try:
            import hyperscan
            exprs = [re.escape(k.encode()) for k in _KEYWORDS] + [rx.pattern for rx in _RAW_PREFILTERS]
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=exprs, ids=list(range(len(exprs))),
                       flags=[hyperscan.HS_FLAG_SINGLEMATCH * 0 | hyperscan.HS_FLAG_MULTILINE] * len(exprs))
            self._db = db
        except Exception:   # noqa: BLE001 -- no Hyperscan here: the pure-Python path is correct, only slower
            self._db = None

    def starts(self, body: bytes, pos: int) -> set[int]:
        if self._db is not None:
            found: set[int] = set()
            view = body[pos:] if pos else body

            def on_match(_id, _start, end, _flags, _ctx):
                found.add(pos + max(0, end - 1))
            self._db.scan(view, match_event_handler=on_match)
            return found
        tr = body.translate(_TABLE)
        out = {m.start() for m in _PREFILTER.finditer(tr, pos)}
        for rx in _RAW_PREFILTERS:
            out.update(m.start() for m in rx.finditer(body, pos))
        return out


_CANDIDATES = _Candidates()
_KERAS_MARKERS = (b"/step", b"ETA:", b"/Unknown", "━".encode())
_OTHER_MARKERS = (b"step", b"Step")
_RECOGNIZE = re.compile(r"(?m)^(?:\S+ )?(?:[IWEF]\d{4} \d\d:\d\d:|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] )|tensorflow|"
                        r"Epoch \d+/\d+|Traceback \(most|keras|\d+/\d+ \[|\d+/\d+ - |\[distdoctor\]|Fatal Python error")
_TEXTISH = bytes(range(32, 127)) + b"\t\n\r\x1b\x08" + bytes(range(128, 256))


@dataclass(frozen=True)
class TaskScan:
    """What one log (or one task's share of a combined stream) holds.

    ``events`` are the meaningful lines, oldest first (at most
    ``TaskScanner.MAX_EVENTS``; ``events_dropped`` counts the rest). Progress
    is sampled: one PROGRESS event per finished epoch plus the latest one.
    ``steps`` sums the last step of every epoch (Keras counts restart each
    epoch); ``completed`` is true when the last epoch ran to its end.
    """

    task: str | None
    path: str | None = None
    events: tuple[LogEvent, ...] = ()
    events_dropped: int = 0
    lines_skipped: int = 0        # repeated lines of one template that were counted, not parsed
    steps: int | None = None
    step_times: tuple[float, ...] = ()
    last_progress_at: float | None = None
    first_ts: float | None = None
    last_ts: float | None = None
    lines: int = 0
    size: int = 0
    long_lines: int = 0
    recognized: bool = False
    binary: bool = False
    ends_midline: bool = False
    last_text: str = ""
    epoch: int | None = None
    epochs_total: int | None = None
    completed: bool = False


class TaskScanner:
    """Scan one task's log from byte chunks of any size; :meth:`close` gives a :class:`TaskScan`.

    Memory stays bounded: a chunk, one carried partial line (capped), the
    events kept. Lines are numbered exactly (``bytes.count``), timestamps of
    lines that carry none are taken from the nearest earlier line that does.
    """

    MAX_EVENTS = 1500      # first events kept per task; then a rolling tail of the last TAIL_EVENTS
    TAIL_EVENTS = 500
    MAX_REPEATS = 200      # lines of one template (digits aside) parsed per log; the rest are only counted
    MAX_STEP_TIMES = 200
    SNIFF = 64 * 1024

    def __init__(self, task: str | None, *, path: str | None = None, year: int | None = None) -> None:
        self.task = task
        self.path = path
        self.parser = TaskLogParser(task, year=year)
        self.year = year
        self._carry = b""
        self._carry_long = False
        self._line_base = 1          # number of the first line of the next body
        self._events: list[LogEvent] = []
        self._tail: collections.deque[LogEvent] = collections.deque(maxlen=self.TAIL_EVENTS)
        self._dropped = 0
        self._known_ts: float | None = None
        self._first_ts: float | None = None
        self._steps_done = 0
        self._cur: LogEvent | None = None       # latest progress seen in the current epoch
        self._last_progress_at: float | None = None
        self._step_times: collections.deque[float] = collections.deque(maxlen=self.MAX_STEP_TIMES)
        self._nan_seen = 0
        self._epoch: int | None = None
        self._epochs_total: int | None = None
        self._epoch_lo = 0
        self._size = 0
        self._long = 0
        self._sniff = bytearray()
        self._recognized = False
        self._binary = False
        self._sniffed = False
        self._last_text = ""
        self._follow = 0            # continuation lines still to feed into the next body
        self._keras = False         # Keras progress seen: count steps from it only
        self._templates: dict[bytes, int] = {}
        self._skipped = 0

    # -- input ---------------------------------------------------------------
    @property
    def binary(self) -> bool:
        return self._binary

    def feed(self, chunk: bytes) -> None:
        if not chunk or self._binary:
            return
        self._size += len(chunk)
        if not self._sniffed:
            self._sniff += chunk[: self.SNIFF - len(self._sniff)]
            if len(self._sniff) >= self.SNIFF:
                self._judge_sniff()
                if self._binary:
                    return
        buf = self._carry + chunk if self._carry else chunk
        end = buf.rfind(b"\n")
        if end < 0:
            self._carry = self._cap_carry(buf)
            return
        body, self._carry = buf[: end + 1], self._cap_carry(buf[end + 1:])
        self._process(body)

    def _cap_carry(self, buf: bytes) -> bytes:
        # A line longer than MAX_LINE: keep its head and its tail (a \r progress
        # bar's latest drawing is at the tail), joined by a \r so that the tail
        # reads as the latest drawing.
        if len(buf) <= 3 * MAX_LINE:
            return buf
        if not self._carry_long:
            self._long += 1
        self._carry_long = True
        return buf[:MAX_LINE] + b"\r" + buf[-MAX_LINE:]

    def _judge_sniff(self) -> None:
        self._sniffed = True
        sample = bytes(self._sniff)
        if not sample:
            return
        ctrl = len(sample.translate(None, _TEXTISH))
        text = sample.decode("utf-8", "replace")
        bad = ctrl + text.count("\ufffd")
        if bad > 0.1 * len(sample) and bad > 16:
            self._binary = True
            return
        if _RECOGNIZE.search(text):
            self._recognized = True

    # -- the scan ------------------------------------------------------------
    def _line_at(self, body: bytes, start: int) -> tuple[int, bytes]:
        end = body.find(b"\n", start)
        if end < 0:
            end = len(body)
        line = body[start:end]
        if len(line) > MAX_LINE:
            self._long += 1
            cr = line.rfind(b"\r")
            if cr >= 0 and len(line) - cr <= MAX_LINE:
                line = line[:64] + line[cr:]
            else:
                line = line[:MAX_LINE]
        return end, line

    def _ts_before(self, body: bytes, pos: int, limit: int = 64) -> float | None:
        """Timestamp of the nearest line at or before ``pos`` that has one."""
        end = pos
        for _ in range(limit):
            start = body.rfind(b"\n", 0, end) + 1 if end > 0 else 0
            head = body[start:min(end, start + 80)]
            if head[:1].isdigit() or head[:1] in (b"I", b"W", b"E", b"F", b"["):
                ts, _ = split_timestamp(head.decode("ascii", "replace"), self.year)
                if ts is not None:
                    return ts
            if start == 0:
                return None
            end = start - 1
        return None

    def _process(self, body: bytes) -> None:
        base = self._line_base
        pos_done = 0           # body[:pos_done] has been read (fed or skipped)
        counted_to, line_no = 0, base
        if self._follow or self.parser.busy:
            pos_done, line_no = self._feed_run(body, 0, base, own=False)
            counted_to = pos_done
        starts = _CANDIDATES.starts(body, pos_done)
        for c in sorted(starts):
            if c < pos_done:
                continue
            ls = body.rfind(b"\n", 0, c) + 1
            if self._repeated(body, ls):
                nl = body.find(b"\n", c)
                pos_done = len(body) if nl < 0 else nl + 1
                continue
            line_no += body.count(b"\n", counted_to, ls)
            pos_done, line_no = self._feed_run(body, ls, line_no, own=True)
            counted_to = pos_done
        line_no += body.count(b"\n", counted_to)
        # Progress and clock at the end of this body.
        p = self._sample_progress(body, self._epoch_lo, len(body), len(body), line_no)
        if p is not None:
            self._note_progress(p)
        self._line_base = line_no
        self._epoch_lo = 0
        ts = self._ts_before(body, len(body) - 1)
        if ts is not None:
            self._known_ts = ts if self._known_ts is None else max(self._known_ts, ts)
            if self._first_ts is None:
                self._first_ts = self._first_ts_in(body)
        tail_start = body.rfind(b"\n", 0, max(0, len(body) - 1)) + 1
        last = body[tail_start:].strip()
        if last:
            self._last_text = clean_line(last[:2000].decode("utf-8", "replace"))

    def _repeated(self, body: bytes, start: int) -> bool:
        """A line of a template already seen MAX_REPEATS times (retry loops, error floods): skip it.

        The template is the line without digits (timestamps, ids, counts), so a
        flood of one message costs a dictionary lookup per line instead of a
        parse. Epoch lines are always read: they carry the step accounting.
        """
        end = body.find(b"\n", start, start + 512)
        head = body[start:end if end >= 0 else start + 512]
        if head.startswith(b"Epoch") or self.parser.busy:
            return False
        key = head.translate(None, b"0123456789")[-200:]
        n = self._templates.get(key, 0)
        if n >= self.MAX_REPEATS:
            self._skipped += 1
            return True
        if n or len(self._templates) < 20000:
            self._templates[key] = n + 1
        return False

    def _first_ts_in(self, body: bytes) -> float | None:
        pos = 0
        for _ in range(200):
            end = body.find(b"\n", pos)
            if end < 0:
                end = len(body)
            head = body[pos:min(end, pos + 80)]
            if head:
                ts, _ = split_timestamp(head.decode("ascii", "replace"), self.year)
                if ts is not None:
                    return ts
            pos = end + 1
            if pos >= len(body):
                break
        return self._known_ts

    def _feed_run(self, body: bytes, start: int, line_no: int, *, own: bool) -> tuple[int, int]:
        """Feed the line at ``start`` and the lines that belong with it; return (next position, next line number)."""
        pos = start
        first = own
        while pos < len(body):
            if not first and not self.parser.busy and self._repeated(body, pos):
                self._follow = 0       # a flood of one message: stop following it line by line
                nl = body.find(b"\n", pos)
                pos = len(body) if nl < 0 else nl + 1
                line_no += 1
                break
            end, line = self._line_at(body, pos)
            if first and not self.parser.busy:
                head = line[:80]
                if not (head[:1].isdigit() or head[:1] in (b"I", b"W", b"E", b"F", b"[")) or \
                        split_timestamp(head.decode("ascii", "replace"), self.year)[0] is None:
                    ts = self._ts_before(body, pos - 1) if pos > 0 else None
                    if ts is None:
                        ts = self._known_ts
                    if ts is not None and (self.parser.last_ts is None or ts > self.parser.last_ts):
                        self.parser.last_ts = ts
            first = False
            text = line.decode("utf-8", "replace")
            if self._follow:
                self._follow -= 1
            for ev in self.parser.feed(line_no, text):
                if ev.kind in (EventKind.PEER_SYMPTOM, EventKind.WAITING_FOR_TASKS) and ev.line_no == line_no:
                    self._follow = TaskLogParser.CONTEXT_LINES - 1
                self._on_event(body, pos, end, ev)
            pos = end + 1
            line_no += 1
            if not self.parser.busy and not self._follow:
                break
        return min(pos, len(body)), line_no

    def _on_event(self, body: bytes, start: int, end: int, ev: LogEvent) -> None:
        if ev.ts is not None:
            self._known_ts = ev.ts if self._known_ts is None else max(self._known_ts, ev.ts)
            if self._first_ts is None:
                self._first_ts = self._first_ts_in(body) or ev.ts
        if ev.kind == EventKind.EPOCH:
            p = self._sample_progress(body, self._epoch_lo, start, start, ev.line_no)
            if p is not None:
                self._note_progress(p)
            self._close_epoch()
            self._epoch, self._epochs_total = ev.epoch, ev.total
            self._epoch_lo = min(end + 1, len(body))
            self._last_progress_at = ev.ts or self._last_progress_at
            self._keep(ev)
            return
        if ev.kind in (EventKind.PROGRESS, EventKind.NAN_LOSS) and ev.step is not None:
            self._note_progress(ev)
            if ev.kind == EventKind.PROGRESS:
                return
        self._keep(ev)

    def _keep(self, ev: LogEvent) -> None:
        if len(self._events) < self.MAX_EVENTS:
            self._events.append(ev)
        else:
            if len(self._tail) == self._tail.maxlen:
                self._dropped += 1
            self._tail.append(ev)

    def _sample_progress(self, body: bytes, lo: int, hi: int, ref_pos: int, ref_line: int) -> LogEvent | None:
        """The latest progress line in ``body[lo:hi]``, found from the end.

        Keras lines win over other ``step N ... loss`` prints (a callback's or
        the user's own); ``ref_pos`` starts line number ``ref_line``.
        """
        found = self._find_progress(body, lo, hi, _KERAS_MARKERS, ("keras",))
        if found is None and not self._keras:
            found = self._find_progress(body, lo, hi, _OTHER_MARKERS, ("estimator", "generic"))
        if found is None:
            return None
        seg_start, ts_line, text, (kind, fields, style) = found
        if style == "keras":
            self._keras = True
        ts = ts_line if ts_line is not None else self._ts_before(body, seg_start)
        if ts is None:
            ts = self._known_ts
        line_no = ref_line - body.count(b"\n", seg_start, ref_pos)
        return LogEvent(task=self.task, ts=ts, kind=kind, text=text.strip()[:MAX_TEXT], line_no=line_no,
                        epoch=self._epoch, **fields)

    def _find_progress(self, body: bytes, lo: int, hi: int, markers_: tuple[bytes, ...], styles: tuple[str, ...]):
        markers = list(markers_)
        pos = hi
        for _ in range(24):
            best = -1
            for m in list(markers):
                i = body.rfind(m, lo, pos)
                if i < 0:
                    markers.remove(m)   # absent before pos: absent before any smaller pos too
                elif i > best:
                    best = i
            if best < 0:
                return None
            seg_start = max(lo, body.rfind(b"\n", lo, best) + 1, body.rfind(b"\r", lo, best) + 1,
                            body.rfind(b"\x08", lo, best) + 1)
            seg_end = body.find(b"\n", best, hi)
            cr = body.find(b"\r", best, hi)
            if seg_end < 0 or (0 <= cr < seg_end):
                seg_end = cr if cr >= 0 else hi
            seg = body[seg_start:min(seg_end, seg_start + 4096)]
            text = clean_line(seg.decode("utf-8", "replace"))
            ts_line, text = split_timestamp(text, self.year)
            found = _progress_styled(text) if ("/" in text or "step" in text.lower()) else None
            if found is not None and found[2] in styles:
                return seg_start, ts_line, text, found
            pos = seg_start - 1
            if pos <= lo:
                return None
        return None

    def _note_progress(self, ev: LogEvent) -> None:
        cur = self._cur
        if cur is not None and ev.step is not None and cur.step is not None and ev.step < cur.step \
                and ev.line_no > cur.line_no:
            # counts restarted without an "Epoch" line: a new epoch (or a new fit)
            self._close_epoch()
            cur = None
        if cur is None or ev.line_no >= cur.line_no:
            self._cur = ev
            if ev.ts is not None:
                self._last_progress_at = ev.ts
        if ev.kind == EventKind.NAN_LOSS and self._nan_seen < 50:
            if not any(e.kind == EventKind.NAN_LOSS and e.line_no == ev.line_no for e in self._events[-5:]):
                self._nan_seen += 1
                self._keep(ev)

    def _close_epoch(self) -> None:
        if self._cur is None:
            return
        cur = self._cur
        self._steps_done += cur.step or 0
        st = step_time_of(cur.text)
        if st is not None:
            self._step_times.append(st)
        if cur.kind == EventKind.PROGRESS:
            self._keep(cur)
        self._cur = None

    def close(self) -> TaskScan:
        """Finish the scan (the carried last line too) and return what was found."""
        if not self._sniffed:
            self._judge_sniff()
        ends_midline = False
        if self._carry and not self._binary:
            ends_midline = not self._carry.endswith(b"\n")
            carry, self._carry = self._carry, b""
            self._process(carry + b"\n")
        if self._binary:
            return TaskScan(task=self.task, path=self.path, size=self._size, binary=True)
        for ev in self.parser.close():
            self._keep(ev)
        cur = self._cur
        steps: int | None = None
        if cur is not None or self._steps_done:
            steps = self._steps_done + (cur.step or 0 if cur is not None else 0)
        step_times = list(self._step_times)
        if cur is not None:
            st = step_time_of(cur.text)
            if st is not None:
                step_times.append(st)
            if cur.kind == EventKind.PROGRESS:
                self._keep(cur)
        completed = bool(cur is not None and cur.total is not None and cur.step == cur.total
                         and (self._epochs_total is None or self._epoch == self._epochs_total))
        events = self._events + list(self._tail)
        recognized = self._recognized or bool(events) or steps is not None
        return TaskScan(task=self.task, path=self.path, events=tuple(events), events_dropped=self._dropped,
                        lines_skipped=self._skipped,
                        steps=steps, step_times=tuple(step_times[-self.MAX_STEP_TIMES:]),
                        last_progress_at=self._last_progress_at, first_ts=self._first_ts, last_ts=self._known_ts,
                        lines=self._line_base - 1, size=self._size, long_lines=self._long, recognized=recognized,
                        binary=self._binary, ends_midline=ends_midline, last_text=self._last_text[:500],
                        epoch=self._epoch, epochs_total=self._epochs_total, completed=completed)
