"""The knowledge base over tasks' output as they print it: (task, bytes) in, signature hits out as they arrive.

:class:`LiveReader` is the incremental face of the same reading ``distdoctor diagnose`` does after the fact: one
:class:`~.scan.Scanner` per task (the one prefilter, the one signature table, the one prefix grammar), fed whatever
the task printed since the last call. :meth:`LiveReader.feed` returns the new :class:`~.scan.Hit` s -- the
signature, the task that wrote the line, the task the line names, its line number and time -- so a supervisor can
act on a cause the moment a task prints it; :meth:`LiveReader.verdict` is the one reasoning step
(:func:`.reason.reason`) over everything read so far, the same verdict ``diagnose`` gives on the same bytes.

Feeding a task's log file in chunks and feeding its lines as the task prints them (each with the time stamp its
collector writes before it) give the same hits: ``tests/test_live_reader.py`` checks that. Pure: no I/O, no clock
(the caller says when a line was printed).
"""
from __future__ import annotations

import datetime as _dt
from typing import Iterable

from .conclusion import Verdict
from .reason import reason
from .scan import Hit, Scanner, StreamFacts

__all__ = ["LiveReader", "stamp"]


def stamp(at: float) -> str:
    """The ISO time stamp a collector writes before a line printed at ``at`` (``distdoctor run``'s own format)."""
    return _dt.datetime.fromtimestamp(at).astimezone().strftime("%Y-%m-%dT%H:%M:%S.%f%z")


class LiveReader:
    """Reads each task's output incrementally; one per attempt of a job."""

    def __init__(self, *, year: int | None = None) -> None:
        self._year = year
        self._scanners: dict[str, Scanner] = {}
        self._closed: dict[str, tuple[list[Hit], StreamFacts]] = {}

    def _scanner(self, task: str | None, stream: str | None) -> Scanner:
        key = stream or task
        if key is None:
            raise ValueError("a stream without a task needs a name")
        sc = self._scanners.get(key)
        if sc is None:
            if key in self._closed:
                raise ValueError(f"{key}'s output was closed: start a new LiveReader for a new attempt")
            sc = self._scanners[key] = Scanner(key, task, year=self._year)
        return sc

    def feed(self, task: str | None, chunk: bytes, *, stream: str | None = None) -> list[Hit]:
        """Read what ``task`` printed next (any piece of its output: a partial line waits for its end); the hits of
        the lines completed by it, in order. ``stream`` names the log they go to (default: the task); a stream whose
        writer is not known (``task`` None) names its writers by its lines, as ``diagnose`` does."""
        sc = self._scanner(task, stream)
        before = len(sc.hits)
        sc.feed(chunk)
        return sc.hits[before:]

    def feed_line(self, task: str | None, at: float, line: str, *, stream: str | None = None) -> list[Hit]:
        """One line ``task`` printed at ``at`` (without its line end), read as its log file holds it: after the
        collector's time stamp."""
        return self.feed(task, f"{stamp(at)} {line}\n".encode("utf-8", "replace"), stream=stream)

    def feed_all(self, task: str | None, chunks: Iterable[bytes], *, stream: str | None = None) -> list[Hit]:
        out: list[Hit] = []
        for chunk in chunks:
            out += self.feed(task, chunk, stream=stream)
        return out

    def close(self, stream: str) -> list[Hit]:
        """The task writing ``stream`` (its name, default the task's) ended: read its last, unterminated line; the
        hits that added."""
        sc = self._scanners.pop(stream, None)
        if sc is None:
            return []
        before = len(sc.hits)
        hits, facts = sc.close()
        self._closed[stream] = (hits, facts)
        return hits[before:]

    @property
    def streams(self) -> list[str]:
        return sorted(set(self._scanners) | set(self._closed))

    def hits(self) -> list[Hit]:
        """Every hit so far, task by task in the order they were first fed."""
        out: list[Hit] = []
        for key in list(self._closed) + list(self._scanners):
            sc = self._scanners.get(key)
            out += sc.hits if sc is not None else self._closed[key][0]
        return out

    def finish(self) -> tuple[list[Hit], list[StreamFacts]]:
        """Close every task still open; all hits and per-task facts (binary output left out)."""
        for key in list(self._scanners):
            self.close(key)
        hits: list[Hit] = []
        facts: list[StreamFacts] = []
        for h, f in self._closed.values():
            hits += h
            if not f.binary:
                facts.append(f)
        return hits, facts

    def verdict(self) -> Verdict:
        """The one reasoning step over all the output read (closes the tasks still open)."""
        hits, facts = self.finish()
        return reason(hits, facts)
