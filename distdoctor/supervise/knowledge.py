"""The knowledge base reading each task's output as the task prints it: a sink on the run's event stream.

Every :class:`~.runevents.OutputLine` goes through one :class:`~distdoctor.diagnose.logs.live.LiveReader` per
attempt -- the same prefilter, signatures and reasoning ``distdoctor diagnose`` uses -- so a task whose line
names a specific cause (a cause signature of rank 45 and up other than "the code raised": a library of another
CUDA, a full ``/dev/shm``, an NCCL error) is recognised the moment it prints it: a ``recognised`` line in events.jsonl and a
``[distdoctor]`` line for the person watching. At the end of the attempt the same reader's verdict refines a
generic run verdict (:func:`distdoctor.diagnose.runlogs.refine_with_signatures`), without reading the logs again.
"""
from __future__ import annotations

import threading

from ..diagnose.logs.live import LiveReader
from ..diagnose.logs.verdict import names_a_cause
from .runevents import AttemptStarted, OutputChunk, OutputLine, Recognised, RunEvent

__all__ = ["KnowledgeSink", "stream_of"]


def stream_of(task: str) -> str:
    """The log file a task's lines go to (``worker:1`` -> ``worker-1.log``), as the launcher names it."""
    job, _, idx = task.partition(":")
    return f"{job}-{idx}.log"


class KnowledgeSink:
    """Feeds every task line to the attempt's :class:`LiveReader`; publishes :class:`Recognised` once per task and
    signature. Lines arrive on the tasks' reader threads: one lock guards the reader."""

    def __init__(self, publish) -> None:
        self._publish = publish
        self._lock = threading.Lock()
        self._reader: LiveReader | None = LiveReader()   # None: the attempt's verdict took it
        self._told: set[tuple[str, str]] = set()

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, AttemptStarted):
            with self._lock:
                self._reader, self._told = LiveReader(), set()
            return
        if not isinstance(ev, (OutputLine, OutputChunk)):
            return
        with self._lock:
            if self._reader is None:    # the attempt's reading is over (its verdict took the reader)
                return
            if isinstance(ev, OutputChunk):   # the bytes of the log, read a chunk at a time (the prefilter's pace)
                hits = self._reader.feed(ev.task, ev.data, stream=stream_of(ev.task))
            else:
                hits = self._reader.feed_line(ev.task, ev.ts, ev.line, stream=stream_of(ev.task))
            new = []
            strongest: dict[tuple, object] = {}   # one line, one recognition: the most specific cause it names
            for h in hits:
                if names_a_cause(h.sig):
                    k = (h.stream, h.line_no)
                    if k not in strongest or h.sig.rank > strongest[k].sig.rank:
                        strongest[k] = h
            for h in strongest.values():
                key = (ev.task, h.sig.code)
                if key not in self._told:
                    self._told.add(key)
                    new.append(h)
        for h in new:
            self._publish(Recognised(ev.ts, ev.task, h.sig.code, h.sig.category.value, h.sig.title, h.text))

    def take_reader(self) -> LiveReader:
        """The attempt's reader, for its verdict (call once the tasks' output is drained; later lines are ignored
        until the next attempt starts)."""
        with self._lock:
            reader, self._reader = self._reader, None
            return reader if reader is not None else LiveReader()
