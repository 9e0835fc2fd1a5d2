"""The verdict where the scheduler shows it: one line, in the job's Comment, the pod's termination
message, or the launcher's last line.

Users ask their scheduler why a job failed (``scontrol show job``, ``kubectl describe pod``, the
end of ``mpirun``'s output) and get "1 Worker replica failed". :func:`verdict_line` (pure) turns
the cluster-wide diagnosis into one line -- status, category, culprit, code and the summary --
and :func:`show_outcome` puts it where the scheduler's :class:`~distdoctor.cluster.scheduler.OutcomeSink`
says. Showing it is a courtesy: a failure to do so is said in one line and changes nothing else.
"""
from __future__ import annotations

import os
import re
import subprocess

from ..cluster.scheduler import OutcomeSink
from ..model import Diagnosis

__all__ = ["verdict_line", "show_outcome", "VERDICT_PREFIX"]

VERDICT_PREFIX = "distdoctor:"
_SPACE = re.compile(r"\s+")


def verdict_line(diagnosis: Diagnosis, limit: int = 0) -> str:
    """``distdoctor: status=failed category=peer_crashed culprit=worker:1 code=DD101: worker:1 was killed ...``

    One line, whitespace collapsed; with ``limit`` the summary is cut (``...``) so that the line fits. Pure.
    """
    parts = [VERDICT_PREFIX, f"status={diagnosis.status.value}"]
    root = diagnosis.root_cause
    summary = ""
    if root is not None:
        parts += [f"category={root.category.value}", f"culprit={root.culprit or 'unknown'}", f"code={root.code or '-'}"]
        summary = root.summary
    elif diagnosis.tasks:
        parts.append(f"tasks={len(diagnosis.tasks)}")
    if len(diagnosis.attempts) > 1:
        parts.append(f"attempts={len(diagnosis.attempts)}")
    head = _SPACE.sub(" ", " ".join(parts)).strip()
    summary = _SPACE.sub(" ", summary).strip()
    if not summary:
        return head[:limit] if limit else head
    line = f"{head}: {summary}"
    if limit and len(line) > limit:
        room = limit - len(head) - 2
        line = f"{head}: {summary[:room - 3]}..." if room > 3 else head[:limit]
    return line


def show_outcome(sink: OutcomeSink | None, diagnosis: Diagnosis, *, collector: bool, stream) -> str | None:
    """Write the verdict to ``sink`` when this task is its writer. Returns what was done, or why not
    (a line for the node's own output), or None when there was nothing to do."""
    if sink is None or (sink.writer == "collector" and not collector):
        return None
    line = verdict_line(diagnosis, sink.limit)
    if sink.kind == "stdout":
        print(line, file=stream, flush=True)
        return None
    if sink.kind == "file":
        if not sink.create and not (os.path.exists(sink.path) and os.access(sink.path, os.W_OK)):
            return None     # not in a container with a termination message
        try:
            with open(sink.path, "w", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError as exc:
            return f"could not write the verdict to {sink.where}: {exc.strerror or exc}"
        return f"verdict written to {sink.where}"
    if sink.kind == "command":
        argv = [a.replace("{verdict}", line) for a in sink.argv]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"could not write the verdict to {sink.where}: {argv[0]}: {getattr(exc, 'strerror', None) or exc}"
        if proc.returncode != 0:
            err = _SPACE.sub(" ", (proc.stderr or proc.stdout or "").strip())[:200]
            return f"could not write the verdict to {sink.where}: {argv[0]} exited {proc.returncode}: {err}"
        return f"verdict written to {sink.where}"
    return None
