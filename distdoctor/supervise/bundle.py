"""The run's bundle as a sink: each attempt's events.jsonl and samples.jsonl, the earlier attempts under
``attempts/<n>/``, and diagnosis.json -- written once per attempt, from the diagnosis and the run's ledger.

A bundle holds ``logs/`` (one file per task), ``events.jsonl`` (:class:`.sinks.JournalSink`), ``samples.jsonl``
(:class:`.sinks.SamplesSink`) and ``diagnosis.json``; with ``--restarts`` its top level is always the latest
attempt.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

from ..safety import WriteLosses, ensure_private_dir, error_text, write_fresh
from .goodput import job_goodput
from .runevents import AttemptDiagnosed, AttemptStarted, LedgerAmended, RunEvent
from .sinks import JournalSink, SamplesSink

__all__ = ["BundleSink", "write_json", "write_diagnosis", "small_diagnosis", "archive_attempt"]


def write_json(path: str, data: dict) -> None:
    """Write ``data`` so that a reader never sees half a file."""
    write_fresh(path, json.dumps(data, indent=2))


def small_diagnosis(data: dict) -> dict:
    """The diagnosis without what can be large (each finding's evidence past its first three, the tasks' details):
    what is written when the whole does not fit."""
    small = {k: v for k, v in data.items() if k not in ("tasks", "timeline", "samples")}
    for key in ("findings", "root_cause"):
        v = small.get(key)
        if isinstance(v, list):
            small[key] = [{**f, "evidence": (f.get("evidence") or [])[:3]} if isinstance(f, dict) else f for f in v]
        elif isinstance(v, dict):
            small[key] = {**v, "evidence": (v.get("evidence") or [])[:3]}
    return small


def write_diagnosis(path: str, data: dict, losses: WriteLosses | None, stream=None) -> str:
    """diagnosis.json, whatever the disk does: whole, else small (compact), else on ``stream`` (stderr).
    Where it went: "file", "small" or "stderr"."""
    try:
        write_json(path, data)
        return "file"
    except OSError as exc:
        why = error_text(exc)
    small = small_diagnosis(data)
    try:
        write_fresh(path, json.dumps(small, separators=(",", ":")))
        if losses is not None:
            losses.lost("diagnosis.json", 0, f"{why}: written small, without the tasks' details")
        return "small"
    except OSError:
        pass
    if losses is not None:
        losses.lost("diagnosis.json", 0, f"{why}: printed on stderr instead")
    try:
        stream = stream if stream is not None else sys.stderr
        print("[distdoctor] diagnosis.json could not be written; the diagnosis: "
              + json.dumps(small, separators=(",", ":")), file=stream, flush=True)
    except (OSError, ValueError):
        pass
    return "stderr"


def archive_attempt(out: str, number: int) -> None:
    """Move attempt ``number``'s files to ``attempts/<number>/``: the top level is the latest attempt."""
    dst = ensure_private_dir(os.path.join(ensure_private_dir(os.path.join(out, "attempts")), str(number)))
    for name in ("logs", "events.jsonl", "samples.jsonl"):
        src = os.path.join(out, name)
        if os.path.exists(src) and not os.path.exists(os.path.join(dst, name)):
            os.replace(src, os.path.join(dst, name))
    if os.path.exists(os.path.join(out, "diagnosis.json")):
        with open(os.path.join(out, "diagnosis.json"), "rb") as fh:
            write_fresh(os.path.join(dst, "diagnosis.json"), fh.read())


class BundleSink:
    """Opens each attempt's files (archiving the previous attempt's first) and writes its diagnosis.json. No write
    failure stops the run: what could not be written is counted in ``losses`` (DD212)."""

    def __init__(self, out: str, losses: WriteLosses | None = None) -> None:
        self.out = out
        self.losses = losses
        self.journal = JournalSink(losses)
        self.samples = SamplesSink(losses)
        self.last = None   # the latest Diagnosis written, which a ledger amendment rewrites
        self.written = None   # where the last diagnosis went: "file", "small" or "stderr"

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, AttemptStarted):
            if ev.archive is not None and os.path.isdir(os.path.join(self.out, "logs")):
                try:
                    archive_attempt(self.out, ev.archive)
                except OSError as exc:
                    if self.losses is not None:
                        self.losses.lost(f"attempts/{ev.archive}", 0, error_text(exc))
            self.journal.open(os.path.join(self.out, "events.jsonl"))
            self.samples.open(os.path.join(self.out, "samples.jsonl"))
        elif isinstance(ev, AttemptDiagnosed):
            if not ev.interim:
                self.close()
            self.last = ev.diagnosis
            self.written = write_diagnosis(self.path, ev.diagnosis.to_json(), self.losses)
        elif isinstance(ev, LedgerAmended) and self.last is not None:   # rewritten from the model, not the file
            self.last = replace(self.last, attempts=tuple(ev.ledger), goodput=job_goodput(ev.ledger))
            self.written = write_diagnosis(self.path, self.last.to_json(), self.losses)

    @property
    def path(self) -> str:
        return os.path.join(self.out, "diagnosis.json")

    def close(self) -> None:
        self.journal.close()
        self.samples.close()
