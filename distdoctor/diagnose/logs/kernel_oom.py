"""Whether a kernel OOM-killer record belongs to the job: its pid, or its time.

A user follows the advice and adds the node's ``dmesg`` to a job's logs; the kernel's log holds every OOM kill since
boot, most of them of other processes. ``Out of memory: Killed process 4242 (python)``, ``oom-kill:... pid=4242``,
``Memory cgroup out of memory: ...`` is evidence about a task only when it is about that task's process or happened
while the job ran:

* its pid is one of the job's (a run bundle's records, a launcher's ``rank 1 with PID 4242``, a shell's
  ``line 1:  4242 Killed``): it **belongs**;
* its time (``dmesg -T``'s ``[Mon Nov 23 17:40:56 2026]``, syslog's ``Nov 23 17:40:56 host kernel:``, an ISO time)
  falls inside the job's span, with ``SLACK_S`` either side: it **belongs**;
* its pid is none of the job's known pids, or its time is outside the span: it is **unrelated** and is not read;
* neither can be checked (``[1203344.117]``, seconds since a boot nobody recorded; no pid known for any task): it is
  **unchecked** and may stand, never as high-confidence evidence.

A time outside the span by close to a whole number of half-hours is unchecked, not unrelated: ``dmesg -T`` prints
the node's local time, the logs are often UTC. Pure: the span and the pids are passed in.
"""
from __future__ import annotations

import calendar
import enum
import re
import time
from typing import Iterable, Sequence

from .scan import Hit

__all__ = ["Relation", "KERNEL_OOM", "is_kernel_record", "SLACK_S", "pid_of", "time_of", "relation", "pids_in_lines", "sort_kernel_ooms"]

KERNEL_OOM = "kernel-oom-killer"     # the signature (DD768) of the kernel's OOM-killer lines
SLACK_S = 90.0                        # a kill just before the victim's first line or after the peers' last one
_TZ_STEP_S = 1800.0                  # time zones differ by whole half-hours
_TZ_SLACK_S = 120.0
_RECORD_LINES = 40                   # one OOM kill's record: the invoking line, the task table, the kill


class Relation(enum.StrEnum):
    BELONGS = "belongs"
    UNRELATED = "unrelated"
    UNCHECKED = "unchecked"


# the kernel's own words (mm/oom_kill.c, mm/memcontrol.c), whichever signature a line matched first
_KERNEL_LINE = re.compile(r"(?i)out of memory: kill(?:ed)? process|memory cgroup out of memory|oom-kill:|oom_reaper|"
                          r"invoked oom-killer")
_PID = re.compile(r"(?:Kill(?:ed)? process|reaped process)\s+(\d+)|\bpid=(\d+)")
_DMESG_T = re.compile(r"\[(?:\w{3} )?(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]")
_ISO = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,]\d+)?(Z|[+-]\d\d:?\d\d)?")
_SYSLOG = re.compile(r"^(?:<\d+>)?(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)\b")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), 1)}
# lines that give a task's pid: Open MPI's notice, a shell's job report in the task's own log
_RANK_PID = re.compile(r"process rank (\d+) with PID (\d+)")
_SHELL_PID = re.compile(r"line \d+: +(\d+) (?:Killed|Aborted|Segmentation fault)")


_KERNEL_WORDS = ("out of memory: kill", "memory cgroup out of memory", "oom-kill:", "oom_reaper", "invoked oom-killer")


def is_kernel_record(h: Hit) -> bool:
    """A line of the kernel's OOM-killer record (DD768's, or another signature's match of the kernel's words)."""
    if h.sig.name == KERNEL_OOM:
        return True
    low = h.text.lower()   # the words first: a case-blind alternation costs ~20x more, on every hit of a job's logs
    return any(w in low for w in _KERNEL_WORDS) and _KERNEL_LINE.search(h.text) is not None


def pid_of(text: str) -> int | None:
    m = _PID.search(text)
    return int(m.group(1) or m.group(2)) if m else None


def _utc(year: int, month: int, day: int, h: int, mi: int, s: int) -> float | None:
    try:
        return float(calendar.timegm((year, month, day, h, mi, s, 0, 0, 0)))
    except (ValueError, OverflowError):
        return None


def time_of(text: str, year: int | None = None) -> float | None:
    """The wall-clock time a kernel line carries (read as UTC when it has no zone); None for ``[seconds since boot]``
    and for a syslog time when no ``year`` is known."""
    m = _DMESG_T.search(text)
    if m:
        mon = _MONTHS.get(m.group(1).lower())
        return _utc(int(m.group(6)), mon, *map(int, m.group(2, 3, 4, 5))) if mon else None
    m = _ISO.search(text[:60])
    if m:
        t = _utc(*map(int, m.group(1, 2, 3, 4, 5, 6)))
        zone = m.group(7)
        if t is not None and zone and zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            t -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
        return t
    m = _SYSLOG.match(text)
    if m and year is not None:
        mon = _MONTHS.get(m.group(1).lower())
        return _utc(year, mon, *map(int, m.group(2, 3, 4, 5))) if mon else None
    return None


def relation(text: str, pids: dict[int, str | None], span: tuple[float, float] | None) -> tuple[Relation, str | None]:
    """How the kernel line ``text`` relates to a job whose tasks had ``pids`` and ran during ``span``; with the task
    whose pid it names, when it names one."""
    pid = pid_of(text)
    if pid is not None and pid in pids:
        return Relation.BELONGS, pids[pid]
    year = time.gmtime(span[0]).tm_year if span else None
    at = time_of(text, year)
    if at is not None and span is not None:
        lo, hi = span[0] - SLACK_S, span[1] + SLACK_S
        if lo <= at <= hi:
            return Relation.BELONGS, None
        # a kill ends its victim, so a local-time line of a job's own kill sits whole half-hours from its start or end
        near_zone = any(round(d / _TZ_STEP_S) != 0 and abs(d - round(d / _TZ_STEP_S) * _TZ_STEP_S) <= _TZ_SLACK_S
                        for d in (at - span[1], at - span[0]))
        return (Relation.UNCHECKED if near_zone else Relation.UNRELATED), None
    if pid is not None and pids:
        return Relation.UNRELATED, None
    return Relation.UNCHECKED, None


def pids_in_lines(hits: Iterable[Hit]) -> dict[int, str | None]:
    """Task pids the lines themselves state: Open MPI's ``process rank R with PID P`` (rank R is ``rank:R``) and a
    shell's ``line 1:  P Killed`` (in a task's log, that task's; in a pasted log, the job's, task unknown)."""
    out: dict[int, str | None] = {}
    for h in hits:
        m = _RANK_PID.search(h.text)
        if m:
            out[int(m.group(2))] = h.writer if h.writer and not h.writer.startswith("rank:") else f"rank:{m.group(1)}"
            continue
        m = _SHELL_PID.search(h.text)
        if m:   # the job's own process, even where no task is named (one pasted log)
            out[int(m.group(1))] = h.writer
    return out


def sort_kernel_ooms(hits: Sequence[Hit], pids: dict[int, str | None], span: tuple[float, float] | None
                     ) -> tuple[list[Hit], list[Hit], list[Hit]]:
    """``hits`` less the kernel OOM records that are unrelated to the job; those unrelated ones; and the kept
    records that could not be checked."""
    kept, unrelated, unchecked = [], [], []
    ooms = [h for h in hits if is_kernel_record(h)]
    for h in hits:
        if not is_kernel_record(h):
            kept.append(h)
            continue
        rel, _ = relation(h.text, pids, span)
        if rel == Relation.UNCHECKED and pid_of(h.text) is None:
            # "python invoked oom-killer" opens the record whose "Killed process P" follows: one kill, one reading
            near = [o for o in ooms if o.stream == h.stream and 0 < o.line_no - h.line_no <= _RECORD_LINES
                    and pid_of(o.text) is not None]
            if near:
                rel, _ = relation(near[0].text, pids, span)
        if rel == Relation.UNRELATED:
            unrelated.append(h)
            continue
        kept.append(h)
        if rel == Relation.UNCHECKED:
            unchecked.append(h)
    return kept, unrelated, unchecked
