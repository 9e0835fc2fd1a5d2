"""What a task's uncaught exception says, read in full: its whole message, the last frame in the user's code, and --
when the knowledge base knows the exception -- that exception's own remedy.

Used by DD104 (:mod:`.failure_rules`), which ``run`` and ``diagnose`` both reach: the generic reading ("a task raised
an exception") still says where to look (``train.py:3``, the line's text) and what to do when the exception is a known
one (a Keras 3 model under a tf.distribute strategy, DD1011), even where the verdict stays generic. Pure.
"""
from __future__ import annotations

from ..model import Evidence
from .events import LogEvent
from .logs.formats import clip
from .logs.frames import UserFrame, is_own_frame, last_user_frame

__all__ = ["ExceptionReading", "read_exception", "MAX_MESSAGE"]

MAX_MESSAGE = 1500   # characters of an exception's message in a summary: whole, unless it dumps a tensor's values


class ExceptionReading:
    """One exception event read in full. ``name`` is the exception's class without its module path."""

    def __init__(self, task: str, event: LogEvent) -> None:
        self.task = task
        self.event = event
        head, _, msg = event.text.partition(":")
        self.name = head.strip().rsplit(".", 1)[-1] or head.strip()
        self.message = msg.strip()
        frames = tuple(f for f in event.frames if f)
        self.frames = frames
        self.user: UserFrame | None = last_user_frame(frames)

    def summary(self) -> str:
        """``worker:1 raised ZeroDivisionError at train.py:3 (print(1 / x)): division by zero``: where, then the
        whole message (last: it may be long)."""
        out = f"{self.task} raised {self.name}"
        if self.user is not None:
            out += f" at {self.user.where}" + (f" ({self.user.code})" if self.user.code else "")
        return out + (f": {clip(self.message, MAX_MESSAGE)}" if self.message else "")

    def evidence(self, ts: float | None, exception: Evidence) -> list[Evidence]:
        """The last frame in the user's code (with its line), the frame that raised when it is a library's, and the
        exception line; distdoctor's own frames are never quoted."""
        files = [i for i, f in enumerate(self.frames) if f.startswith("File ") and not is_own_frame(f)]
        out: list[Evidence] = []
        if self.user is not None:
            text = next(self.frames[i] for i in files if self.frames[i].startswith(f'File "{self.user.path}", '
                                                                                   f"line {self.user.line}"))
            out.append(Evidence(task=self.task, ts=ts, text=text + (f": {self.user.code}" if self.user.code else ""),
                                role="cause"))
        last = [self.frames[i] for i in files[-1:]]
        if last and (not out or not out[0].text.startswith(last[0])):
            out.append(Evidence(task=self.task, ts=ts, text=last[0], role="cause"))
        if not out:
            out = [Evidence(task=self.task, ts=ts, text=self.frames[i], role="cause") for i in files[-3:]]
        return out + [exception]

    def known_remedy(self, generic: str) -> str:
        """The knowledge base's remedy for this exception when a cause signature knows its line, else ``generic``."""
        from .logs.kb import SIGNATURES        # the knowledge base: registered on first use
        from .logs.signature import Role
        from .logs.verdict import EXCEPTION_MEANING_RANK    # the rank from which `run` adopts such a reading
        line = self.event.text
        known = [s for s in SIGNATURES if s.role == Role.CAUSE and s.rank >= EXCEPTION_MEANING_RANK and s.match(line)]
        if not known:
            return generic
        sig = max(known, key=lambda s: s.rank)
        return f"{sig.remedy} (a known exception, {sig.code}: {sig.title}.)"


def read_exception(task: str, event: LogEvent) -> ExceptionReading:
    return ExceptionReading(task, event)
