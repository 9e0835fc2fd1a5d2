"""The frames of a Python traceback: whose code each one is, and where the user's code ends.

A traceback quoted in a log holds three kinds of frame:

* **distdoctor's own**: the bootstrap that ``run`` puts on every task's ``PYTHONPATH``
  (``distdoctor/supervise/bootstrap/sitecustomize.py``: its ``call_function`` wraps TensorFlow's, so it sits in every
  TensorFlow traceback of a supervised task) and the package's helpers a script may call (``distdoctor.keras``,
  ``distdoctor.step``). They are not part of the failure: a quoted traceback leaves them out
  (:func:`is_own_frame`);
* **libraries'**: the interpreter's standard library, installed packages (``site-packages``, ``dist-packages``),
  frozen modules (``<frozen runpy>``), autograph's generated code;
* **the user's**: every other file. The last of them is where to look (:func:`last_user_frame`).

Frames are the stripped ``File "...", line N, in name`` lines; the line of code a frame shows follows its frame line.
Pure.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Sequence

from .prefixes import split_prefix

__all__ = ["UserFrame", "is_own_frame", "is_user_frame", "last_user_frame", "frame_path", "lines_before"]

# a frame line; distdoctor's evidence may append the frame's code after ": "
_FILE = re.compile(r'^File "(?P<path>[^"]+)", line (?P<line>\d+)(?:,? in (?P<func>[^:]+?))?(?::\s.*)?\s*$')
# distdoctor's bootstrap (the sitecustomize ``run`` puts on PYTHONPATH) and the helpers a script calls
_OWN = re.compile(r'[/\\]distdoctor[/\\](?:supervise[/\\]|keras\.py$|__init__\.py$)')
# (autograph's generated copies of a tf.function live in a temporary file: the user's line is quoted after "in user
# code:" instead)
_LIBRARY = re.compile(r'[/\\](?:site-packages|dist-packages)[/\\]|[/\\]lib[/\\]python\d[\d.]*[/\\]|[/\\]Lib[/\\]|^<|'
                      r'__autograph_generated_file')


@dataclass(frozen=True)
class UserFrame:
    """The last frame of a traceback in the user's own code: its file, line, function and the line's text."""

    path: str
    line: int
    func: str | None = None
    code: str | None = None

    @property
    def where(self) -> str:
        """``train.py:3`` (the file's name, not its folder: the folder is in the evidence)."""
        return f"{os.path.basename(self.path) or self.path}:{self.line}"

    def describe(self) -> str:
        """``train.py:3 in <module>: print(1 / x)``."""
        out = self.where + (f" in {self.func}" if self.func else "")
        return out + (f": {self.code}" if self.code else "")


def frame_path(frame: str) -> str | None:
    """The file a ``File "...", line N`` line names, else None."""
    m = _FILE.match(frame.strip())
    return m.group("path") if m else None


def is_own_frame(frame: str) -> bool:
    """A frame of distdoctor's own code (its bootstrap, its helpers): never part of a task's failure."""
    path = frame_path(frame)
    return path is not None and bool(_OWN.search(path))


def is_user_frame(frame: str) -> bool:
    """A frame in the user's own code: neither distdoctor's, nor the standard library's, nor an installed package's."""
    path = frame_path(frame)
    return path is not None and not _OWN.search(path) and not _LIBRARY.search(path)


def last_user_frame(frames: Sequence[str]) -> UserFrame | None:
    """The last frame in the user's code of a traceback's ``frames`` (frame lines, each maybe followed by its code
    line), with its code line when the traceback shows it."""
    for i in range(len(frames) - 1, -1, -1):
        f = frames[i].strip()
        if not is_user_frame(f):
            continue
        m = _FILE.match(f)
        if m is None:
            continue
        nxt = frames[i + 1].strip() if i + 1 < len(frames) else ""
        code = nxt if nxt and not nxt.startswith("File ") else None
        return UserFrame(m.group("path"), int(m.group("line")), (m.group("func") or "").strip() or None, code)
    return None


def lines_before(line: str, tail: Sequence[str]) -> list[str] | None:
    """The lines of a stream's ``tail`` before the last one that reads ``line`` (a task's or a time stamp's prefix
    removed, each stripped), from the traceback that ends there when it begins in the tail; None when the tail does
    not hold the line."""
    lines = [split_prefix(t)[1].strip() for t in tail]
    want = line.strip()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i] == want:
            starts = [j for j in range(i) if lines[j].startswith("Traceback (most recent call last)")]
            return lines[starts[-1] if starts else 0:i]
    return None
