"""Log events: what one line (or one Python traceback) of a task's log means."""
from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["EventKind", "LogEvent", "SYMPTOM_KINDS"]


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
    CLUSTER_CONNECTED = "cluster_connected"
    PREEMPTION = "preemption"
    RESOURCE = "resource"                  # disk full, too many open files, ...
    DISTDOCTOR = "distdoctor"              # a line distdoctor's bootstrap wrote
    TF_ERROR = "tf_error"                  # other E/F-level TensorFlow line
    COLLECTIVE_MISMATCH = "collective_mismatch"  # tasks entered different collectives (shape mismatch)


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
