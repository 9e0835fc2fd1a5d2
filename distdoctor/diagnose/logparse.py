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

Line formats live in :mod:`.logs.formats`, step counting in :mod:`.logs.progress`.
"""
from __future__ import annotations

import re
from dataclasses import replace

from .events import EventKind, LogEvent
from .logs.formats import MAX_TEXT, _ABSL, _ABSL_CLOCK, _OLD_TF, _TASK_PATH, _TF_FORMAT, clean_line, split_timestamp, task_from_path_text
from .logs.progress import _EPOCH, _progress

__all__ = ["TaskLogParser", "classify", "strip_ansi", "step_time_of", "MAX_LINE"]

# Formats (diagnose.logs.formats), step counting (diagnose.logs.progress) and the byte-level scanner
# (diagnose.logs.taskscan) live in their own modules; their public names stay importable from here.
from .logs.formats import strip_ansi, MAX_LINE  # noqa: E402,F401
from .logs.progress import step_time_of  # noqa: E402,F401


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
    "connects to a wrong cluster",
)
_WAITING = re.compile(r"Waiting for (\d+)/(\d+) tasks to connect")
_PLAIN_EPOCH = re.compile(r"Epoch (\d+)/(\d+)[ \t]*$")
_SHELL_CRASH = re.compile(r"^(?:.*?: line \d+: +\d+ )?(Segmentation fault|Aborted|Bus error|Illegal instruction|"
                          r"Floating point exception|Trace/breakpoint trap)(?: +\(core dumped\))?(?:\s.*)?$")
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Abort\w*)|[A-Za-z_][\w.]*\.[A-Z]\w*)(?::\s?(.*))?$")


# TF reports ENOSPC, EDQUOT, EMFILE and ENFILE as RESOURCE_EXHAUSTED too: such a ResourceExhaustedError is no memory
_NOT_MEMORY = re.compile(r"No space left on device|Disk quota exceeded|Too many open files")

def classify(text: str) -> tuple[EventKind, dict] | None:
    """Classify one line of text (timestamp prefix already removed).

    Returns the event kind and its typed fields, or None for lines that are
    not evidence of anything.
    """
    if not text or len(text) < 3:
        return None
    if text[0] == "E" and text.startswith("Epoch"):   # "Epoch 3/60" and nothing else: no other branch can match it
        m = _EPOCH.match(text.strip())
        if m:
            return EventKind.EPOCH, {"epoch": int(m.group(1)), "total": int(m.group(2))}
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
    if "ResourceExhaustedError" in text and _NOT_MEMORY.search(text):
        return EventKind.RESOURCE, {}
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
        out: list[LogEvent] = []
        if self._fault is not None:
            out.append(self._flush_fault())
        if self._tb:
            out.append(LogEvent(task=self.task, ts=self.last_ts, kind=EventKind.PY_EXCEPTION,
                                text="(log ends inside a Python traceback)", line_no=self.lines,
                                frames=tuple(self._tb[-2 * self.MAX_FRAMES:])))
        self._tb = None
        return out


