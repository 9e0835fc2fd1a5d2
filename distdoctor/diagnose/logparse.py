"""Turn raw log lines into :class:`LogEvent` s.

Pure functions over text. Handles TensorFlow's two C++ log formats (absl's
``E0000 00:00:1795280668.471203 2910 file.cc:291] msg`` and the older
``2021-03-04 12:00:00.123456: E tensorflow/...``), the timestamp prefix that
``distdoctor run`` writes, Python tracebacks spread over many lines, gRPC
status blocks, coordination-service messages, Keras progress lines, kernel
OOM-killer and faulthandler output, ANSI colours and CR line ends.

Known noise (``failed call to cuInit`` on a host with no GPU, oneDNN notices)
never becomes an event.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import replace

from .events import EventKind, LogEvent

__all__ = ["TaskLogParser", "split_timestamp", "strip_ansi", "task_from_path_text", "classify"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
# distdoctor's own prefix: 2026-11-21T18:03:04.120415+0000
_DD_PREFIX = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d{4}) ")
_ABSL = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:(\d{9,11}\.\d+)\s")
_ABSL_CLOCK = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s")
_OLD_TF = re.compile(r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d\.\d+): [IWEF] ")
_ISO_GENERIC = re.compile(r"^\[?(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)(Z|[+-]\d\d:?\d\d)?\]?\s")
_TASK_PATH = re.compile(r"/job:([A-Za-z_]+)/replica:\d+/task:(\d+)")

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
)

_PEER_SYMPTOMS = (
    "Connection reset by peer",
    "Socket closed",
    "failed to connect to all addresses",
    "Connection refused",
    "DEADLINE_EXCEEDED",
    "Deadline Exceeded",
    "stopped sending heartbeats",
    "The tasks have crashed",
    "RecvTensor cancelled",
    "Collective ops is aborted",
    "Additional GRPC error information from remote target",
    "is unhealthy",
    "unhealthy (stopped",
    "Cancelling all pending collectives",
    "Broken pipe",
    "Connection timed out",
    "heartbeat timeout",
    "Unable to find the relevant tensor remote_handle",
    "Coordination service has stopped",
    "has been set to ERROR",
    "UnavailableError",
)
_WAITING = re.compile(r"Waiting for (\d+)/(\d+) tasks to connect")
_PROGRESS = re.compile(r"(?:^|\r|\s)(\d+)/(\d+) (?:\[[=>.]*\]|-) .*?(?:loss: ([-+\w.]+))?")
_EPOCH = re.compile(r"^Epoch (\d+)/(\d+)\s*$")
_LOSS = re.compile(r"\bloss: ([-+]?(?:nan|inf|[\d.]+(?:e[-+]?\d+)?))", re.IGNORECASE)
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Abort\w*)|[A-Za-z_][\w.]*\.[A-Z]\w*)(?::\s?(.*))?$")


def strip_ansi(text: str) -> str:
    if "\x1b" not in text:
        return text
    return _ANSI.sub("", text)


def _parse_iso(stamp: str) -> float | None:
    try:
        return _dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    except ValueError:
        return None


def split_timestamp(line: str) -> tuple[float | None, str]:
    """Return (unix time or None, text) for one line.

    A distdoctor prefix is removed from the text; TensorFlow's own timestamps
    stay in the text (they are part of what a person reads) but are returned.
    """
    m = _DD_PREFIX.match(line)
    if m:
        return _parse_iso(m.group(1)), line[m.end():]
    m = _ABSL.match(line)
    if m:
        try:
            return float(m.group(1)), line
        except ValueError:
            return None, line
    m = _OLD_TF.match(line) or _ISO_GENERIC.match(line)
    if m:
        stamp = m.group(1).replace(" ", "T").replace(",", ".")
        try:
            return _dt.datetime.fromisoformat(stamp).timestamp(), line
        except ValueError:
            return None, line
    return None, line


def task_from_path_text(text: str) -> list[str]:
    """All tasks a TensorFlow message names, as ``job:index``."""
    return [f"{j}:{i}" for j, i in _TASK_PATH.findall(text)]


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
    if "Fatal Python error:" in text or "core dumped" in text or "*** SIG" in text or "received signal" in text.lower() and "SIG" in text:
        return EventKind.FATAL_SIGNAL, {}
    if "Check failed:" in text or "CHECK failed" in text:
        return EventKind.CHECK_FAILED, {}
    low = text.lower()
    if "out of memory: killed process" in low or "memory cgroup out of memory" in low or "oom-kill" in low or "oom_reaper" in low:
        return EventKind.OOM_KILLER, {}
    if "CUDA_ERROR_OUT_OF_MEMORY" in text or "CUDA out of memory" in text or ("OOM when allocating" in text and "GPU" in text):
        return EventKind.OOM_GPU, {}
    if "OOM when allocating" in text or "ResourceExhaustedError" in text or "std::bad_alloc" in text or text.startswith("MemoryError"):
        return EventKind.OOM_TENSOR, {}
    if "Address already in use" in text or "Failed to add port to server" in text or "Could not start gRPC server" in text:
        return EventKind.PORT_IN_USE, {}
    m = _WAITING.search(text)
    if m or "Example stragglers" in text:
        return EventKind.WAITING_FOR_TASKS, {}
    for symptom in _PEER_SYMPTOMS:
        if symptom in text:
            return EventKind.PEER_SYMPTOM, {}
    if "NCCL WARN" in text or "NCCL error" in text or "ncclSystemError" in text or "ncclInternalError" in text:
        return EventKind.NCCL_ERROR, {}
    if "CUDA_ERROR" in text or "cudaError" in text or "CUDA error" in text:
        return EventKind.CUDA_ERROR, {}
    if "Invalid loss, terminating training" in text:
        return EventKind.NAN_LOSS, {}
    if "No space left on device" in text or "Too many open files" in text or "Resource temporarily unavailable" in text or "Cannot allocate memory" in text:
        return EventKind.RESOURCE, {}
    if "Received SIGTERM" in text or "preempt" in low or "Preemption" in text:
        return EventKind.PREEMPTION, {}
    if "Started server with target" in text:
        return EventKind.SERVER_STARTED, {}
    if "has successfully connected to coordination service" in text or "MultiWorkerMirroredStrategy with cluster_spec" in text or "Enabled multi-worker collective ops" in text:
        return EventKind.CLUSTER_CONNECTED, {}
    m = _EPOCH.match(text.strip())
    if m:
        return EventKind.EPOCH, {"epoch": int(m.group(1)), "total": int(m.group(2))}
    if "/" in text and ("loss" in text or "step" in text or "[" in text):
        last = text.rsplit("\r", 1)[-1] if "\r" in text else text
        m = _PROGRESS.search(last)
        if m:
            step, total = int(m.group(1)), int(m.group(2))
            if 0 < total < 10**9 and step <= total:
                loss = None
                lm = _LOSS.search(last)
                if lm:
                    try:
                        loss = float(lm.group(1))
                    except ValueError:
                        loss = None
                if loss is not None and (loss != loss or loss in (float("inf"), float("-inf"))):
                    return EventKind.NAN_LOSS, {"step": step, "total": total, "loss": loss}
                return EventKind.PROGRESS, {"step": step, "total": total, "loss": loss}
    if len(text) > 1 and text[0] in "EF" and _ABSL.match(text) or _OLD_TF.match(text) and ": E " in text[:40]:
        return EventKind.TF_ERROR, {}
    return None


_SYMPTOM_EXCEPTIONS = ("UnavailableError", "CancelledError", "DeadlineExceededError", "AbortedError")


class TaskLogParser:
    """Streaming parser for one task's log: feed lines, collect events.

    It keeps only a bounded amount of state (the traceback being read), so a
    log of any size can be streamed through it.
    """

    MAX_FRAMES = 6

    def __init__(self, task: str | None) -> None:
        self.task = task
        self._tb: list[str] | None = None
        self._tb_ts: float | None = None
        self._last_symptom_line = -10
        self._last_symptom_text = ""
        self.last_ts: float | None = None
        self.lines = 0

    def feed(self, line_no: int, raw: str) -> list[LogEvent]:
        self.lines += 1
        line = strip_ansi(raw.rstrip("\r\n"))
        ts, text = split_timestamp(line)
        if ts is not None:
            self.last_ts = ts
        else:
            ts = self.last_ts
        out: list[LogEvent] = []
        stripped = text.strip()
        if self._tb is not None:
            if text.startswith((" ", "\t")) or not stripped:
                if stripped.startswith("File ") or (self._tb and self._tb[-1].startswith("File ")):
                    self._tb.append(stripped)
                    del self._tb[: max(0, len(self._tb) - 2 * self.MAX_FRAMES)]
                return out
            if _EXC_LINE.match(stripped) or stripped.startswith(("KeyboardInterrupt", "SystemExit")):
                out.append(self._exception_event(line_no, ts, stripped))
                self._tb = None
                return out
            if stripped.startswith("During handling") or stripped.startswith("The above exception"):
                return out
            if stripped.startswith("Traceback (most recent call last)"):
                self._tb = []
                return out
            self._tb = None  # not a traceback after all
        if stripped.startswith("Traceback (most recent call last)"):
            self._tb = []
            self._tb_ts = ts
            return out
        found = classify(stripped)
        if found is None:
            peers = task_from_path_text(stripped)
            if peers and line_no - self._last_symptom_line <= 4:
                found = (EventKind.PEER_SYMPTOM, {})
                if len(stripped) < 80 and self._last_symptom_text:
                    stripped = f"{self._last_symptom_text[-300:]} {stripped}"
            else:
                return out
        kind, fields = found
        peer = self._peer(stripped)
        if kind in (EventKind.PEER_SYMPTOM, EventKind.WAITING_FOR_TASKS):
            self._last_symptom_line = line_no
            self._last_symptom_text = stripped
        out.append(LogEvent(task=self.task, ts=ts, kind=kind, text=stripped, line_no=line_no, peer=peer, **fields))
        return out

    def _peer(self, text: str) -> str | None:
        for t in task_from_path_text(text):
            if t != self.task:
                return t
        return None

    def _exception_event(self, line_no: int, ts: float | None, text: str) -> LogEvent:
        frames = tuple(self._tb[-2 * self.MAX_FRAMES:]) if self._tb else ()
        name = text.split(":", 1)[0]
        kind = EventKind.PY_EXCEPTION
        if name.endswith(_SYMPTOM_EXCEPTIONS):
            kind = EventKind.PEER_SYMPTOM
            self._last_symptom_line = line_no
        elif name.endswith("ResourceExhaustedError") or name == "MemoryError":
            kind = EventKind.OOM_TENSOR
        return LogEvent(task=self.task, ts=ts, kind=kind, text=text, line_no=line_no, frames=frames,
                        peer=self._peer(text))

    def close(self) -> list[LogEvent]:
        """Flush a traceback cut off by the end of the log."""
        if self._tb:
            ev = LogEvent(task=self.task, ts=self.last_ts, kind=EventKind.PY_EXCEPTION,
                          text="(log ends inside a Python traceback)", line_no=self.lines,
                          frames=tuple(self._tb[-2 * self.MAX_FRAMES:]))
            self._tb = None
            return [ev]
        return []


def with_task(ev: LogEvent, task: str) -> LogEvent:
    return replace(ev, task=task)
