"""The byte-level scanner of one task's log (``distdoctor diagnose``): candidate lines by a prefilter, then the
line parser (:class:`~distdoctor.diagnose.logparse.TaskLogParser`) on those only; progress sampled at epoch
boundaries and chunk ends. Its result is a :class:`TaskScan`.
"""
from __future__ import annotations

import collections
import re
from dataclasses import dataclass

from ..events import EventKind, LogEvent
from .formats import MAX_LINE, clean_line, split_timestamp
from ..logparse import TaskLogParser
from . import prescan
from .epochs import epoch_line, sample_progress
from .lookback import PROGRESS_MARKERS, TimeWalk
from .progress import step_time_of
from .linekinds import PATTERNS
from .taskfilter import _DIGITS, _NEVER_SPENT, EXPRESSIONS, candidate_lines

__all__ = ["TaskScanner", "TaskScan", "EXPRESSIONS", "PROGRESS_MARKERS"]

_OWN = frozenset(range(len(EXPRESSIONS), len(EXPRESSIONS) + len(PATTERNS)))   # the line classifier's own literals
_PLAIN_EPOCH = re.compile(rb"Epoch ([0-9]+)/([0-9]+)[ \t]*$")   # as logparse reads it (ASCII digits: its fast path)
_RECOGNIZE = re.compile(r"(?m)^(?:\S+ )?(?:[IWEF]\d{4} \d\d:\d\d:|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] )|tensorflow|"
                        r"Epoch \d+/\d+|Traceback \(most|keras|\d+/\d+ \[|\d+/\d+ - |\[distdoctor\]|Fatal Python error")
_TEXTISH = bytes(range(32, 127)) + b"\t\n\r\x1b\x08" + bytes(range(128, 256))


@dataclass(frozen=True)
class TaskScan:
    """What one log (or one task's share of a combined stream) holds.

    ``events`` are the meaningful lines, oldest first (at most
    ``TaskScanner.MAX_EVENTS``; ``events_dropped`` counts the rest). Progress
    is sampled: one PROGRESS event per finished epoch plus the latest one.
    ``steps`` sums the last step of every epoch (Keras counts restart each
    epoch); ``completed`` is true when the last epoch ran to its end.
    """

    task: str | None
    path: str | None = None
    events: tuple[LogEvent, ...] = ()
    events_dropped: int = 0
    lines_skipped: int = 0        # repeated lines of one template that were counted, not parsed
    steps: int | None = None
    step_times: tuple[float, ...] = ()
    last_progress_at: float | None = None
    first_ts: float | None = None
    last_ts: float | None = None
    lines: int = 0
    size: int = 0
    long_lines: int = 0
    recognized: bool = False
    binary: bool = False
    ends_midline: bool = False
    last_text: str = ""
    epoch: int | None = None
    epochs_total: int | None = None
    completed: bool = False


class TaskScanner:
    """Scan one task's log from byte chunks of any size; :meth:`close` gives a :class:`TaskScan`.

    Memory stays bounded: a chunk, one carried partial line (capped), the
    events kept. Lines are numbered exactly (``bytes.count``), timestamps of
    lines that carry none are taken from the nearest earlier line that does.
    """

    MAX_EVENTS = 1500      # first events kept per task; then a rolling tail of the last TAIL_EVENTS
    TAIL_EVENTS = 500
    MAX_REPEATS = 20       # lines of one template (digits aside) parsed per log; the rest are only counted
    MAX_STEP_TIMES = 200
    SNIFF = 64 * 1024

    def __init__(self, task: str | None, *, path: str | None = None, year: int | None = None) -> None:
        self.task = task
        self.path = path
        self.parser = TaskLogParser(task, year=year)
        self.year = year
        self._carry = b""
        self._carry_long = False
        self._line_base = 1          # number of the first line of the next body
        self._events: list[LogEvent] = []
        self._tail: collections.deque[LogEvent] = collections.deque(maxlen=self.TAIL_EVENTS)
        self._dropped = 0
        self._known_ts: float | None = None
        self._first_ts: float | None = None
        self._steps_done = 0
        self._cur: LogEvent | None = None       # latest progress seen in the current epoch
        self._last_progress_at: float | None = None
        self._step_times: collections.deque[float] = collections.deque(maxlen=self.MAX_STEP_TIMES)
        self._nan_seen = 0
        self._epoch: int | None = None
        self._epochs_total: int | None = None
        self._epoch_lo = 0
        self._size = 0
        self._long = 0
        self._sniff = bytearray()
        self._recognized = False
        self._binary = False
        self._sniffed = False
        self._last_text = ""
        self._follow = 0            # continuation lines still to feed into the next body
        self._keras = False         # Keras progress seen: count steps from it only
        self._templates: dict[bytes, int] = {}
        self._skipped = 0
        self._present: frozenset[bytes] | None = None    # progress markers in the body being read, when known
        self._clock = TimeWalk(year)   # the nearest time stamp before a place, the last walk remembered
        # Prefilter patterns that found only one message (one template) on MAX_REPEATS lines: a flood. They are spent:
        # left out of the scan from the next body on, so the flood's further lines are neither read nor counted.
        self.spent: set[int] = set()
        self._pattern_tpl: dict[int, bytes | None] = {}   # pattern -> the one template seen with it (None: several)
        self._pattern_n: dict[int, int] = {}
        # patterns no longer counted: never spent, several messages, or spent already; and the line classifier's own
        # literals (a candidate line's pattern ids may hold them: :mod:`.prescan`), never counted, never spent
        self._settled: set[int] = set(_NEVER_SPENT) | {-1} | _OWN
        self._spent_or_own: set[int] = set(_OWN)

    # -- input ---------------------------------------------------------------
    @property
    def binary(self) -> bool:
        return self._binary

    def feed(self, chunk: bytes, candidates: list[tuple[int, int, list[int]]] | None = None,
             markers: frozenset[bytes] | None = None) -> None:
        """Read ``chunk``; ``candidates`` are its candidate lines (start, end, prefilter pattern ids), in order, and
        ``markers`` the progress markers it holds, when the caller ran the prefilter already (one pass for both
        scanners: :mod:`.prescan`); they are used when ``chunk`` is the body."""
        if not chunk or self._binary:
            return
        self._size += len(chunk)
        if not self._sniffed:
            self._sniff += chunk[: self.SNIFF - len(self._sniff)]
            if len(self._sniff) >= self.SNIFF:
                self._judge_sniff()
                if self._binary:
                    return
        buf = self._carry + chunk if self._carry else chunk
        end = buf.rfind(b"\n")
        if end < 0:
            self._carry = self._cap_carry(buf)
            return
        body, self._carry = buf[: end + 1], self._cap_carry(buf[end + 1:])
        if body is chunk:
            self._present = markers
            try:
                self._process(body, candidates)
            finally:
                self._present = None
        else:
            self._process(body)

    def count_withheld(self, n: int) -> None:
        """``n`` lines of templates read enough times were withheld by the prefilter (:mod:`.prescan`): counted as
        skipped repetitions."""
        self._skipped += n

    def _cap_carry(self, buf: bytes) -> bytes:
        # A line longer than MAX_LINE: keep its head and its tail (a \r progress
        # bar's latest drawing is at the tail), joined by a \r so that the tail
        # reads as the latest drawing.
        if len(buf) <= 3 * MAX_LINE:
            return buf
        if not self._carry_long:
            self._long += 1
        self._carry_long = True
        return buf[:MAX_LINE] + b"\r" + buf[-MAX_LINE:]

    def _judge_sniff(self) -> None:
        self._sniffed = True
        sample = bytes(self._sniff)
        if not sample:
            return
        ctrl = len(sample.translate(None, _TEXTISH))
        text = sample.decode("utf-8", "replace")
        bad = ctrl + text.count("\ufffd")
        if bad > 0.1 * len(sample) and bad > 16:
            self._binary = True
            return
        if _RECOGNIZE.search(text):
            self._recognized = True

    # -- the scan ------------------------------------------------------------
    def _line_at(self, body: bytes, start: int) -> tuple[int, bytes]:
        end = body.find(b"\n", start)
        if end < 0:
            end = len(body)
        line = body[start:end]
        if len(line) > MAX_LINE:
            self._long += 1
            cr = line.rfind(b"\r")
            if cr >= 0 and len(line) - cr <= MAX_LINE:
                line = line[:64] + line[cr:]
            else:
                line = line[:MAX_LINE]
        return end, line

    def _ts_before(self, body: bytes, pos: int, limit: int = 64) -> float | None:
        """Timestamp of the nearest line at or before ``pos`` that has one, within ``limit`` lines."""
        return self._clock.before(body, pos, limit)

    def _process(self, body: bytes, candidates: list[tuple[int, int, list[int]]] | None = None) -> None:
        base = self._line_base
        pos_done = 0           # body[:pos_done] has been read (fed or skipped)
        counted_to, line_no = 0, base
        if self._follow or self.parser.busy:
            pos_done, line_no = self._feed_run(body, 0, base, own=False)
            counted_to = pos_done
        if candidates is None:   # fed alone (a task split out of a combined stream, a live task): its own pass
            joint = prescan.get()
            lines = joint.task_lines(body, pos_done) if joint is not None else candidate_lines(body, pos_done)
        else:
            lines = candidates
        # The flood gate (see _repeated), inlined: a line's template is its first 512 bytes without digits, of which
        # the last 200. The templates of all candidate lines are taken at once, and the lines of templates already
        # read MAX_REPEATS times (most lines of a flood) go the short way.
        spent, settled, templates, most = self.spent, self._settled, self._templates, self.MAX_REPEATS
        parser, n = self.parser, len(body)
        keys = [body[ls:le if le - ls <= 512 else ls + 512].translate(None, _DIGITS)[-200:] for ls, le, _, _ in lines]
        full = {k for k in set(keys) if templates.get(k, 0) >= most and b"Epoch" not in k}
        for at, ((ls, le, pids, _), key) in enumerate(zip(lines, keys)):
            if ls < pos_done:
                continue
            if body.startswith(b"Epoch ", ls) and not self._follow and not parser.busy:
                m = _PLAIN_EPOCH.match(body, ls, le)
                if m:   # "Epoch 3/60" as Keras prints it: read here, as _feed_run would, without its machinery
                    line_no += body.count(b"\n", counted_to, ls)
                    self._epoch_line(body, ls, le, line_no, m)
                    pos_done = counted_to = le + 1 if le < n else n
                    line_no += 1
                    continue
            if spent and self._spent_or_own.issuperset(pids):
                continue      # only spent patterns (the scan was run before they were spent): as if not found
            if key in full:
                if not settled.issuperset(pids):
                    self._note_patterns(pids, key)
                self._skipped += 1
                pos_done = le + 1 if le < n else n
                continue
            if not parser.busy and b"Epoch" not in body[ls:ls + 72]:
                if not settled.issuperset(pids):
                    self._note_patterns(pids, key)
                k = templates.get(key, 0)
                if k >= most:
                    self._skipped += 1
                    pos_done = le + 1 if le < n else n
                    continue
                if k or len(templates) < 20000:
                    templates[key] = k + 1
            line_no += body.count(b"\n", counted_to, ls)
            pos_done, line_no = self._feed_run(body, ls, line_no, own=True, cands=lines, at=at)
            counted_to = pos_done
        line_no += body.count(b"\n", counted_to)
        # Progress and clock at the end of this body.
        p = self._sample_progress(body, self._epoch_lo, len(body), len(body), line_no)
        if p is not None:
            self._note_progress(p)
        self._line_base = line_no
        self._epoch_lo = 0
        ts = self._ts_before(body, len(body) - 1)
        if ts is not None:
            self._known_ts = ts if self._known_ts is None else max(self._known_ts, ts)
            if self._first_ts is None:
                self._first_ts = self._first_ts_in(body)
        tail_start = body.rfind(b"\n", 0, max(0, len(body) - 1)) + 1
        last = body[tail_start:].strip()
        if last:
            self._last_text = clean_line(last[:2000].decode("utf-8", "replace"))

    def _epoch_line(self, body: bytes, ls: int, le: int, line_no: int, m: re.Match[bytes]) -> None:
        """A plain ``Epoch N/M`` line (no time stamp, no prefix): its time is the nearest one before it."""
        epoch_line(self, body, ls, le, line_no, m)

    def _repeated(self, body: bytes, start: int) -> bool:
        """A line of a template already seen MAX_REPEATS times (retry loops, error floods): skip it.

        The template is the line without digits (timestamps, ids, counts), so a
        flood of one message costs a dictionary lookup per line
        instead of a parse. Epoch lines are always read: they carry the step
        accounting. (:meth:`_process` inlines the same test for candidate lines.)
        """
        end = body.find(b"\n", start, start + 512)
        head = body[start:end if end >= 0 else start + 512]
        if b"Epoch" in head[:72] or self.parser.busy:   # "Epoch 3/60", after a collector's time stamp or not
            return False
        key = head.translate(None, _DIGITS)[-200:]
        n = self._templates.get(key, 0)
        if n >= self.MAX_REPEATS:
            self._skipped += 1
            return True
        if n or len(self._templates) < 20000:
            self._templates[key] = n + 1
        return False

    def _note_patterns(self, pids: list[int], key: bytes) -> None:
        """Count the lines each pattern found, while it found one template only; at MAX_REPEATS it is spent."""
        tpl, cnt = self._pattern_tpl, self._pattern_n
        for pid in pids:
            if pid in self._settled:
                continue
            seen = tpl.get(pid, key)
            if seen != key:
                self._settled.add(pid)   # more than one message: never spent
                continue
            tpl[pid] = key
            n = cnt[pid] = cnt.get(pid, 0) + 1
            if n >= self.MAX_REPEATS:
                self.spent.add(pid)
                self._spent_or_own.add(pid)
                self._settled.add(pid)

    def _first_ts_in(self, body: bytes) -> float | None:
        pos = 0
        for _ in range(200):
            end = body.find(b"\n", pos)
            if end < 0:
                end = len(body)
            head = body[pos:min(end, pos + 80)]
            if head:
                ts, _ = split_timestamp(head.decode("ascii", "replace"), self.year)
                if ts is not None:
                    return ts
            pos = end + 1
            if pos >= len(body):
                break
        return self._known_ts

    def _feed_run(self, body: bytes, start: int, line_no: int, *, own: bool, cands: list | None = None,
                  at: int = 0) -> tuple[int, int]:
        """Feed the line at ``start`` and the lines that belong with it; return (next position, next line number).
        ``cands``: the body's candidate lines, ``cands[at]`` the first at or after ``start``; a line fed that is one
        of them comes with the line classifier's literals the prefilter found in it (:mod:`.linekinds`)."""
        pos = start
        first = own
        n_cands = len(cands) if cands is not None else 0
        while pos < len(body):
            if not first and not self.parser.busy and self._repeated(body, pos):
                self._follow = 0       # a flood of one message: stop following it line by line
                nl = body.find(b"\n", pos)
                pos = len(body) if nl < 0 else nl + 1
                line_no += 1
                break
            end, line = self._line_at(body, pos)
            found = None
            if at < n_cands:
                while at < n_cands and cands[at][0] < pos:
                    at += 1
                # the literals found are those of the whole line: of no use for a line cut short
                if at < n_cands and cands[at][0] == pos and end - pos == len(line):
                    found = cands[at][3]
            if first and not self.parser.busy:
                head = line[:80]
                if not (head[:1].isdigit() or head[:1] in (b"I", b"W", b"E", b"F", b"[")) or head[:6] == b"Epoch " \
                        or split_timestamp(head.decode("ascii", "replace"), self.year)[0] is None:
                    ts = self._ts_before(body, pos - 1) if pos > 0 else None
                    if ts is None:
                        ts = self._known_ts
                    if ts is not None and (self.parser.last_ts is None or ts > self.parser.last_ts):
                        self.parser.last_ts = ts
            first = False
            text = line.decode("utf-8", "replace")
            if self._follow:
                self._follow -= 1
            for ev in self.parser.feed(line_no, text, found):
                if ev.kind in (EventKind.PEER_SYMPTOM, EventKind.WAITING_FOR_TASKS) and ev.line_no == line_no:
                    self._follow = TaskLogParser.CONTEXT_LINES - 1
                self._on_event(body, pos, end, ev)
            pos = end + 1
            line_no += 1
            if not self.parser.busy and not self._follow:
                break
        return min(pos, len(body)), line_no

    def _on_event(self, body: bytes, start: int, end: int, ev: LogEvent) -> None:
        if ev.ts is not None:
            self._known_ts = ev.ts if self._known_ts is None else max(self._known_ts, ev.ts)
            if self._first_ts is None:
                self._first_ts = self._first_ts_in(body) or ev.ts
        if ev.kind == EventKind.EPOCH:
            p = self._sample_progress(body, self._epoch_lo, start, start, ev.line_no)
            if p is not None:
                self._note_progress(p)
            self._close_epoch()
            self._epoch, self._epochs_total = ev.epoch, ev.total
            self._epoch_lo = min(end + 1, len(body))
            self._last_progress_at = ev.ts or self._last_progress_at
            self._keep(ev)
            return
        if ev.kind in (EventKind.PROGRESS, EventKind.NAN_LOSS) and ev.step is not None:
            self._note_progress(ev)
            if ev.kind == EventKind.PROGRESS:
                return
        self._keep(ev)

    def _keep(self, ev: LogEvent) -> None:
        if len(self._events) < self.MAX_EVENTS:
            self._events.append(ev)
        else:
            if len(self._tail) == self._tail.maxlen:
                self._dropped += 1
            self._tail.append(ev)

    def _sample_progress(self, body: bytes, lo: int, hi: int, ref_pos: int, ref_line: int) -> LogEvent | None:
        """The latest progress line in ``body[lo:hi]``, found from the end (:func:`.epochs.sample_progress`)."""
        return sample_progress(self, body, lo, hi, ref_pos, ref_line)

    def _note_progress(self, ev: LogEvent) -> None:
        cur = self._cur
        if cur is not None and ev.step is not None and cur.step is not None and ev.step < cur.step \
                and ev.line_no > cur.line_no:
            # counts restarted without an "Epoch" line: a new epoch (or a new fit)
            self._close_epoch()
            cur = None
        if cur is None or ev.line_no >= cur.line_no:
            self._cur = ev
            if ev.ts is not None:
                self._last_progress_at = ev.ts
        if ev.kind == EventKind.NAN_LOSS and self._nan_seen < 50:
            if not any(e.kind == EventKind.NAN_LOSS and e.line_no == ev.line_no for e in self._events[-5:]):
                self._nan_seen += 1
                self._keep(ev)

    def _close_epoch(self) -> None:
        if self._cur is None:
            return
        cur = self._cur
        self._steps_done += cur.step or 0
        st = step_time_of(cur.text)
        if st is not None:
            self._step_times.append(st)
        if cur.kind == EventKind.PROGRESS:
            self._keep(cur)
        self._cur = None

    def close(self) -> TaskScan:
        """Finish the scan (the carried last line too) and return what was found."""
        if not self._sniffed:
            self._judge_sniff()
        ends_midline = False
        if self._carry and not self._binary:
            ends_midline = not self._carry.endswith(b"\n")
            carry, self._carry = self._carry, b""
            self._process(carry + b"\n")
        if self._binary:
            return TaskScan(task=self.task, path=self.path, size=self._size, binary=True)
        for ev in self.parser.close():
            self._keep(ev)
        cur = self._cur
        steps: int | None = None
        if cur is not None or self._steps_done:
            steps = self._steps_done + (cur.step or 0 if cur is not None else 0)
        step_times = list(self._step_times)
        if cur is not None:
            st = step_time_of(cur.text)
            if st is not None:
                step_times.append(st)
            if cur.kind == EventKind.PROGRESS:
                self._keep(cur)
        completed = bool(cur is not None and cur.total is not None and cur.step == cur.total
                         and (self._epochs_total is None or self._epoch == self._epochs_total))
        events = self._events + list(self._tail)
        recognized = self._recognized or bool(events) or steps is not None
        return TaskScan(task=self.task, path=self.path, events=tuple(events), events_dropped=self._dropped,
                        lines_skipped=self._skipped,
                        steps=steps, step_times=tuple(step_times[-self.MAX_STEP_TIMES:]),
                        last_progress_at=self._last_progress_at, first_ts=self._first_ts, last_ts=self._known_ts,
                        lines=self._line_base - 1, size=self._size, long_lines=self._long, recognized=recognized,
                        binary=self._binary, ends_midline=ends_midline, last_text=self._last_text[:500],
                        epoch=self._epoch, epochs_total=self._epochs_total, completed=completed)

