"""The knowledge base over a supervised run's own task logs: `run` reads its tasks' output the way `diagnose` does.

``distdoctor run`` knows what no log says (exit statuses, signals, the memory cgroup, stacks, step counts) and
builds its diagnosis from that; ``diagnose`` knows what the lines mean (412 signatures of TensorFlow, Keras,
NCCL, MPI, Slurm, Kubernetes, ...). When the run's reading is only generic -- a task raised *some* exception
(DD104), or tasks failed and nothing named a cause (DD100) -- and the signature reading of the same logs names a
specific cause on the same task, the signature's reading is the root cause, with the run's as an alternative.
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
from dataclasses import replace

from ..errors import DistDoctorError
from ..model import Alternative, Diagnosis, Status
from .logs.live import LiveReader

__all__ = ["refine_with_signatures", "read_logs", "GENERIC_RUN_CODES"]

GENERIC_RUN_CODES = ("DD104", "DD100")
EXCEPTION_MEANING_RANK = 45


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
    better: the output ``reader`` read as the tasks printed it, else the logs under ``log_dir``."""
    root = diag.root_cause
    if root is None or root.code not in GENERIC_RUN_CODES:
        return diag
    if reader is None and (log_dir is None or not os.path.isdir(log_dir)):
        return diag
    try:
        v = (reader if reader is not None else read_logs(log_dir)).verdict()
    except (DistDoctorError, OSError, ValueError):
        return diag
    from .logs.signature import Role
    from .logs.verdict import SPECIFIC_RANK, finding_of
    # an exception's own meaning (a GPU out of memory in disguise, a library of another version) reads from rank 45,
    # as `diagnose` reads it; a failure nobody named needs a specific cause
    need = EXCEPTION_MEANING_RANK if root.code == "DD104" else SPECIFIC_RANK
    if v.root is None or v.status not in (Status.FAILED, Status.HUNG) or v.root.sig.role != Role.CAUSE \
            or v.root.sig.rank < need or v.category == root.category:
        return diag
    culprit = v.culprit or v.root.writer
    if root.culprit is not None and culprit != root.culprit:
        return diag
    f = finding_of(v)
    alt = Alternative(root.category, root.culprit, f"the run's own reading: {root.summary[:160]}",
                      "the task's traceback and exit status in the bundle")
    f = replace(f, culprit=culprit or root.culprit, at=root.at if root.at is not None else f.at,
                evidence=tuple(f.evidence) + tuple(e for e in root.evidence if e not in f.evidence)[:4],
                alternatives=(alt,) + tuple(a for a in f.alternatives if a.category != root.category)[:2],
                summary=f"{f.summary} (knowledge base: {v.code})")
    return replace(diag, root_cause=f, findings=(f,) + tuple(diag.findings))
