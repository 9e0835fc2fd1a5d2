"""``distdoctor diagnose PATH...``: the root cause of a finished (or stuck) job, from its logs alone.

The pure entry point (:func:`diagnose_paths`); the command line and the rendering (terminal, JSON, HTML) live at
the edge (:mod:`distdoctor.report.diagnose_cli`), so ``diagnose`` never imports ``report``.

PATH is a ``distdoctor run`` bundle, a folder of per-task logs, log files, or
``-`` for one combined stream on standard input. Any readable text is
diagnosed. Exit codes: 0 the job succeeded or the logs show no failure
(status ``unknown``), 1 it failed, 3 it hung (positive evidence of waiting),
2 the input is unreadable (said in one line).
"""
from __future__ import annotations

import os
import time
from dataclasses import replace

from ..errors import DistDoctorError, InputError
from ..model import Diagnosis
from .observations import JobObservation

__all__ = ["diagnose_paths"]


def diagnose_paths(paths: list[str], task_map: dict[str, str] | None = None, *, jobs: int | None = None,
                   detected_at: float | None = None) -> tuple[Diagnosis, JobObservation]:
    """Read the logs under ``paths`` and diagnose them. Raises :class:`InputError` for unusable input."""
    now = time.time() if detected_at is None else detected_at
    try:
        from .engine import diagnose
        from .from_logs import observation_from_scans
        from .logs.reason import reason
        from .logs.verdict import decide
        from .logsource import discover, scan_all
        disc = discover(list(paths), task_map)
        scans, notes, hits, facts = scan_all(disc, jobs=jobs)
        if not facts or all(f.bytes == 0 for f in facts):
            problems = [n for n in notes if "vanished" in n or "could not" in n or "stopped early" in n]
            raise InputError(problems[-1] if problems else "every log is empty: nothing to diagnose")
        text = [f for f in facts if not f.binary]
        if not text:
            raise InputError(f"{facts[0].name}{' and the others' if len(facts) > 1 else ''} hold binary data, not "
                             "logs: nothing to diagnose")
        verdict = reason(hits, text)
        structural = None
        try:
            job = observation_from_scans(scans, notes=list(disc.notes) + notes)
            structural = diagnose(job, detected_at=now, command="diagnose")
        except InputError:   # no task could be named, or no TF lines: the signature reading stands alone
            job = JobObservation(tasks={}, source="logs", notes=tuple(list(disc.notes) + notes))
        diag = decide(verdict, structural, source="diagnose", detected_at=now, notes=tuple(job.notes))
    except DistDoctorError:
        raise
    except RecursionError as exc:  # pathological input nesting: still one line, never a traceback
        raise InputError(f"could not read these logs: {exc}") from None
    except Exception as exc:  # noqa: BLE001 -- the contract is one line, never a traceback
        if os.environ.get("DISTDOCTOR_DEBUG"):
            raise
        raise InputError(f"could not diagnose these logs: internal error {type(exc).__name__}: {str(exc)[:200]} "
                         "(set DISTDOCTOR_DEBUG=1 for the traceback and report it)") from None
    missing = tuple(n for n in job.notes if n not in diag.notes)
    if missing:
        diag = replace(diag, notes=tuple(diag.notes) + missing)
    return diag, job
