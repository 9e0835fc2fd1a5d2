"""Log line formats: ANSI colours, control characters, time stamps (absl, TF 1.x, ISO/RFC 3339 collector prefixes).

Pure functions over one line of text; no notion of tasks or events.
"""
from __future__ import annotations

import calendar
import re

__all__ = ["MAX_LINE", "MAX_TEXT", "strip_ansi", "clean_line", "split_timestamp", "task_from_path_text", "clip"]

MAX_LINE = 64 * 1024      # characters of one line that are ever looked at
MAX_TEXT = 4000           # characters of one event's text

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
# distdoctor's own prefix (2026-11-21T18:03:04.120415+0000) and RFC 3339 collector
# prefixes (kubectl logs --timestamps: 2026-11-21T18:03:04.120415123Z): not program output.
_PREFIX_TS = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d) ")
_ABSL = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:(\d{9,11}\.\d+)\s")
_ABSL_CLOCK = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s")
_OLD_TF = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)\.(\d+): [IWEF] ")
_ISO_GENERIC = re.compile(r"^\[?(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?\]?[\s:]")
_TASK_PATH = re.compile(r"/job:([A-Za-z_]+)(?:/replica:\d+)?/task:(\d+)")
_TF_FORMAT = re.compile(r"^(?:[IWEF]\d{4} \d\d:\d\d:\d|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] )")

_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")
# A tf.keras progress bar cut short by a message printed on its line (a terminal copy, or stdout and stderr in one
# file): "  3/100 [>.....] - ETA: 3s - loss: 0.2003Traceback (most recent call last):". Keras prints every metric
# with exactly 4 decimals ("%.4f" / "%.4e"), so where the bar ends is known.
_GLUED_BAR = re.compile(r"^\s*\d+/(?:\d+|Unknown)\s*(?:\[[=>.]*\]|\u2501+)?"
                        r"(?:\s+-?\s*(?:ETA: [\d:]+s?|\d+[mu]?s(?:/step|/epoch|/sample)?(?: \d+[mu]?s/step)?|"
                        r"[A-Za-z_][\w]*: (?:-?\d+\.\d{4}(?:e[+-]\d\d)?|nan|inf)))+")
# A line a poster put in bold, or quoted, when pasting it into a GitHub comment or an e-mail.
_WRAPPED = re.compile(r"^\s{0,3}(?:>\s?)+|^\s*\*\*(?=[^\s*])(.*?[^\s*])\*\*\s*$")


def clip(text: str, limit: int) -> str:
    """``text`` whole when it fits in ``limit`` characters, else cut at the last word boundary before it and ended with
    "…": a reader sees that something was left out, never a word cut in two."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + " …"


def strip_ansi(text: str) -> str:
    if "\x1b" not in text:
        return text
    return _ANSI.sub("", text)


def clean_line(raw: str) -> str:
    """One physical line as a person's terminal would show it.

    Removes the line end, ANSI colours, NULs and other control characters; of a
    line redrawn with ``\\r`` (progress bars) keeps the last drawing; caps the
    length at :data:`MAX_LINE`.
    """
    line = raw.rstrip("\r\n")
    if len(line) > MAX_LINE:
        line = line[:MAX_LINE]
    if "\r" in line:
        prefix = ""
        m = _PREFIX_TS.match(line)
        if m:  # keep the collector's timestamp of a redrawn line
            prefix, line = line[:m.end()], line[m.end():]
        parts = [p for p in line.split("\r") if p.strip()]
        line = prefix + (parts[-1] if parts else "")
    line = strip_ansi(line)
    if not line.isprintable() and _CTRL.search(line):   # a printable line holds no control character
        line = _CTRL.sub("", line)
    c = line[:1]
    if c == "\ufeff":
        line = line[1:]
        c = line[:1]
    if c in (">", "*", " ") and (">" in line or "**" in line):   # _WRAPPED needs one or the other
        line = _unwrap(line)
    if (c.isdigit() or c == " ") and "/" in line[:24]:
        m = _GLUED_BAR.match(line)
        if m and m.end() < len(line) and line[m.end()] not in " \t/-.,;:":
            line = line[m.end():]
    return line


def _unwrap(line: str) -> str:
    for _ in range(3):      # "> **text**"
        m = _WRAPPED.match(line)
        if not m:
            return line
        line = m.group(1) if m.group(1) is not None else line[m.end():]
    return line


def _epoch(y: str, mo: str, d: str, h: str, mi: str, s: str, frac: str | None, tz: str | None) -> float | None:
    try:
        secs = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s), 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if not (1 <= int(mo) <= 12 and 1 <= int(d) <= 31 and int(h) < 24 and int(mi) < 60 and int(s) < 62):
        return None
    if frac:
        secs += int(frac[:6]) / 10 ** min(len(frac), 6)
    if tz and tz != "Z":
        sign = -1 if tz[0] == "+" else 1
        tz = tz[1:].replace(":", "")
        secs += sign * (int(tz[:2]) * 3600 + int(tz[2:4]) * 60)
    elif not tz:
        # No zone: the writer's local time. Read it as UTC; every task's log of
        # one job is written in the same zone, so their order is unchanged.
        pass
    return float(secs)


def split_timestamp(line: str, year: int | None = None) -> tuple[float | None, str]:
    """Return (unix time or None, text) for one line.

    A collector's prefix (distdoctor's, ``kubectl logs --timestamps``) is
    removed from the text; TensorFlow's own timestamps stay in the text (they
    are part of what a person reads) but are returned. absl's ``I1121
    18:03:04.1`` clock has no year: it is read in ``year`` when given, and
    ignored otherwise. Times without a zone are read as UTC.
    """
    c = line[:1]
    if c.isdigit():
        if line[4:5] != "-":    # every stamp that starts with a digit starts with its year: "2026-"
            return None, line
        m = _PREFIX_TS.match(line)
        if m:
            return _epoch(*m.groups()), line[m.end():]
        m = _OLD_TF.match(line)
        if m:
            return _epoch(*m.groups(), None), line
    if c in "IWEF":
        m = _ABSL.match(line)
        if m:
            try:
                return float(m.group(1)), line
            except ValueError:
                return None, line
        if year is not None:
            m = _ABSL_CLOCK.match(line)
            if m:
                mo, d, h, mi, s, frac = m.groups()
                return _epoch(str(year), mo, d, h, mi, s, frac, None), line
        return None, line
    if c.isdigit() or c == "[":
        m = _ISO_GENERIC.match(line)
        if m:
            return _epoch(*m.groups()), line
    return None, line


def task_from_path_text(text: str) -> list[str]:
    """All tasks a TensorFlow message names, as ``job:index``."""
    return [f"{j}:{i}" for j, i in _TASK_PATH.findall(text)]


