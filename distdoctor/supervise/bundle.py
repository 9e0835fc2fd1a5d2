"""The run's bundle as a sink: each attempt's events.jsonl and samples.jsonl, the earlier attempts under
``attempts/<n>/``, and diagnosis.json -- written once per attempt, from the diagnosis and the run's ledger.

A bundle holds ``logs/`` (one file per task), ``events.jsonl`` (:class:`.sinks.JournalSink`), ``samples.jsonl``
(:class:`.sinks.SamplesSink`) and ``diagnosis.json``; with ``--restarts`` its top level is always the latest
attempt.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace

from ..safety import ensure_private_dir, write_fresh
from .goodput import job_goodput
from .runevents import AttemptDiagnosed, AttemptStarted, LedgerAmended, RunEvent
from .sinks import JournalSink, SamplesSink

__all__ = ["BundleSink", "write_json", "archive_attempt"]


def write_json(path: str, data: dict) -> None:
    """Write ``data`` so that a reader never sees half a file."""
    write_fresh(path, json.dumps(data, indent=2))


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
    """Opens each attempt's files (archiving the previous attempt's first) and writes its diagnosis.json."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.journal = JournalSink()
        self.samples = SamplesSink()
        self.last = None   # the latest Diagnosis written, which a ledger amendment rewrites

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, AttemptStarted):
            if ev.archive is not None and os.path.isdir(os.path.join(self.out, "logs")):
                archive_attempt(self.out, ev.archive)
            self.journal.open(os.path.join(self.out, "events.jsonl"))
            self.samples.open(os.path.join(self.out, "samples.jsonl"))
        elif isinstance(ev, AttemptDiagnosed):
            if not ev.interim:
                self.close()
            self.last = ev.diagnosis
            write_json(self.path, ev.diagnosis.to_json())
        elif isinstance(ev, LedgerAmended) and self.last is not None:   # rewritten from the model, not the file
            self.last = replace(self.last, attempts=tuple(ev.ledger), goodput=job_goodput(ev.ledger))
            write_json(self.path, self.last.to_json())

    @property
    def path(self) -> str:
        return os.path.join(self.out, "diagnosis.json")

    def close(self) -> None:
        self.journal.close()
        self.samples.close()
