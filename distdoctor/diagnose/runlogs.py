"""The knowledge base over a supervised run's own task logs: `run` reads its tasks' output the way `diagnose` does.

``distdoctor run`` knows what no log says (exit statuses, signals, the memory cgroup, stacks, step counts) and
builds its diagnosis from that; ``diagnose`` knows what the lines mean (412 signatures of TensorFlow, Keras,
NCCL, MPI, Slurm, Kubernetes, ...). When the run's reading is only generic -- a task raised *some* exception
(DD104), a task exited non-zero with no exception (DD106), NCCL or CUDA said "error" (DD111), or tasks failed and
nothing named a cause (DD100) -- and the signature reading of the same logs names a specific cause on the same task
(the reasoning's verdict, else a line the reader recognised as a cause on that task, as ``run`` told it live), the
signature's reading is the root cause, with the run's as an alternative.
A task that dies on a message only the knowledge base knows is then named by that message in a live run too.
Process evidence is never overruled: any other root cause of the run stands.

The reading is incremental (:class:`~.logs.live.LiveReader`): a supervisor that feeds each task's output to a
reader as the task prints it passes that reader here, and the verdict is the one reasoning step over what it read
(nothing is read twice); without one, the bundle's ``logs/`` folder is fed through a fresh reader, file by file.
"""
from __future__ import annotations

import os
import tarfile
import zipfile

from ..errors import DistDoctorError
from ..model import Diagnosis, Status
from .logs.live import LiveReader
from .logs.verdict import GENERIC_RUN_CODES, decide

__all__ = ["refine_with_signatures", "read_logs", "GENERIC_RUN_CODES"]


def read_logs(log_dir: str) -> LiveReader:
    """A reader fed every task log under ``log_dir`` (a log that cannot be read is left out)."""
    from .logsource import discover, source_chunks
    reader = LiveReader()
    for src in discover([log_dir]).sources:
        if src.path == "-":
            continue
        try:
            reader.feed_all(src.task, source_chunks(src), stream=src.name)
        except (OSError, EOFError, ValueError, zipfile.BadZipFile, tarfile.TarError):
            continue
    return reader


def refine_with_signatures(diag: Diagnosis, log_dir: str | None = None, *, reader: LiveReader | None = None
                           ) -> Diagnosis:
    """``diag`` (the run's own), or the knowledge base's reading of the tasks' output where it names the cause
    better: the output ``reader`` read as the tasks printed it, else the logs under ``log_dir``. A job that succeeded
    keeps its verdict; with ``reader``, what its lines alarmed about is explained where the reading knows it (a
    finished peer reported as crashed at the teardown)."""
    root = diag.root_cause
    explain_only = root is None and diag.status == Status.SUCCEEDED and reader is not None
    if not explain_only and (root is None or root.code not in GENERIC_RUN_CODES):
        return diag
    if reader is None and (log_dir is None or not os.path.isdir(log_dir)):
        return diag
    try:
        reader = reader if reader is not None else read_logs(log_dir)
        v = reader.verdict()
    except (DistDoctorError, OSError, ValueError):
        return diag
    return decide(v, diag, source="run", detected_at=diag.detected_at, hits=reader.hits())
