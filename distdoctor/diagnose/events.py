"""Log events: what one line (or one Python traceback) of a task's log means."""
from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["EventKind", "LogEvent", "quick_event", "SYMPTOM_KINDS", "unresolved_waits"]


class EventKind(str, enum.Enum):
    PY_EXCEPTION = "py_exception"          # last line of a Python traceback
    FATAL_SIGNAL = "fatal_signal"          # faulthandler / absl failure-signal handler / "core dumped"
    CHECK_FAILED = "check_failed"          # a TF CHECK failure (F-level line)
    OOM_TENSOR = "oom_tensor"              # ResourceExhaustedError / OOM when allocating
    OOM_GPU = "oom_gpu"                    # CUDA out of memory
    OOM_KILLER = "oom_killer"              # kernel OOM killer line
    PEER_SYMPTOM = "peer_symptom"          # a failure reported about (or because of) another task
    WAITING_FOR_TASKS = "waiting_for_tasks"  # coordination service waiting for peers
    PORT_IN_USE = "port_in_use"
    PROGRESS = "progress"                  # Keras progress line: step/total, loss
    EPOCH = "epoch"                        # "Epoch 3/10"
    NAN_LOSS = "nan_loss"
    NCCL_ERROR = "nccl_error"
    CUDA_ERROR = "cuda_error"
    SERVER_STARTED = "server_started"
    CLUSTER_CONNECTED = "cluster_connected"  # this task joined the cluster (TF 2.21: "Coordination agent has successfully connected.")
    CLUSTER_SPEC = "cluster_spec"          # the task printed the cluster it believes in (its TF_CONFIG): not yet joined
    PEER_CONNECTED = "peer_connected"      # the coordination service on this task registered ``peer``; no peer: all tasks joined
    PREEMPTION = "preemption"
    RESOURCE = "resource"                  # disk full, too many open files, ...
    DISTDOCTOR = "distdoctor"              # a line distdoctor's bootstrap wrote
    TF_ERROR = "tf_error"                  # other E/F-level TensorFlow line
    COLLECTIVE_MISMATCH = "collective_mismatch"  # tasks entered different collectives (shape or type mismatch)
    GRADIENT_REDUCE = "gradient_reduce"    # the failing collective node was defined in the gradient all-reduce


SYMPTOM_KINDS = frozenset({EventKind.PEER_SYMPTOM, EventKind.WAITING_FOR_TASKS})


@dataclass(frozen=True)
class LogEvent:
    """One meaningful line of one task's log.

    ``peer`` is the task a symptom names (``worker:1``), when it names one.
    ``step``/``total``/``loss`` are set for progress lines; ``frames`` holds the
    last frames of a Python traceback for ``PY_EXCEPTION``.
    """

    task: str | None
    ts: float | None
    kind: EventKind
    text: str
    line_no: int = 0
    peer: str | None = None
    step: int | None = None
    total: int | None = None
    loss: float | None = None
    epoch: int | None = None
    frames: tuple[str, ...] = ()

    def __reduce__(self):
        # pickled as its field values (the kind by its value) and rebuilt without the dataclass's setattr per field:
        # the scanning processes of ``diagnose`` send back ~1300 events per 4 MB log of a Keras job (half the time)
        kind = self.kind
        return _event_of, (self.task, self.ts, kind.value if type(kind) is EventKind else (kind,), self.text,
                           self.line_no, self.peer, self.step, self.total, self.loss, self.epoch, self.frames)


_new = object.__new__
_KIND_OF = {k.value: k for k in EventKind}


def _built(task, ts, kind, text, line_no, peer, step, total, loss, epoch, frames) -> LogEvent:
    ev = _new(LogEvent)
    d = ev.__dict__   # filled in the fields' order: the instance keeps the class's shared keys (as small as __init__'s)
    d["task"] = task
    d["ts"] = ts
    d["kind"] = kind
    d["text"] = text
    d["line_no"] = line_no
    d["peer"] = peer
    d["step"] = step
    d["total"] = total
    d["loss"] = loss
    d["epoch"] = epoch
    d["frames"] = frames
    return ev


def _event_of(task, ts, kind, text, line_no, peer, step, total, loss, epoch, frames) -> LogEvent:
    return _built(task, ts, _KIND_OF[kind] if type(kind) is str else kind[0], text, line_no, peer, step, total, loss,
                  epoch, frames)


def quick_event(task: str | None, ts: float | None, kind: EventKind, text: str, line_no: int, *,
                step: int | None = None, total: int | None = None, loss: float | None = None,
                epoch: int | None = None) -> LogEvent:
    """``LogEvent(...)`` with these fields (the others their defaults), built without the frozen dataclass's setattr
    per field: the same object (equal, the same repr), ~4x cheaper -- two are made per epoch of a log."""
    return _built(task, ts, kind, text, line_no, None, step, total, loss, epoch, ())


def unresolved_waits(events, joined=frozenset()) -> list[LogEvent]:
    """The ``WAITING_FOR_TASKS`` events of one task's log that were never answered.

    The coordination service prints ``Waiting for 1/2 tasks to connect ...
    Example stragglers: /job:worker/replica:0/task:1`` at every normal start-up
    while the tasks join, then ``/job:.../task:1 has connected to coordination
    service`` and ``Waiting for 0/2 tasks to connect.`` (``PEER_CONNECTED``
    events). A wait is answered by a later ``PEER_CONNECTED`` of the peer it
    names, or of every task; the lines that name no peer (``Waiting for 1/2
    ...``, ``Example stragglers:``) are answered once every straggler named so
    far has connected. A wait naming a task in ``joined`` (one whose own log
    shows it in the cluster) is answered too. ``events`` are one log's, in order.
    """
    pending: list[LogEvent] = []
    for e in events:
        if e.kind == EventKind.WAITING_FOR_TASKS:
            pending.append(e)
        elif e.kind == EventKind.PEER_CONNECTED and pending:
            pending = [] if e.peer is None else [w for w in pending if w.peer != e.peer]
            if not any(w.peer for w in pending):
                pending = []   # every straggler named so far joined: the "Waiting for N/M" lines are answered too
    return [w for w in pending if not (w.peer and w.peer in joined)]
