"""Reading a task's log body backwards, from a place: the nearest time stamp before it (:class:`TimeWalk`, which
remembers its last walk) and the last progress bar drawing before it (:func:`last_progress`). Pure; used by
:class:`~.taskscan.TaskScanner` at each epoch's end.
"""
from __future__ import annotations

from .formats import clean_line, split_timestamp
from .progress import _progress_styled

__all__ = ["TimeWalk", "last_progress", "KERAS_MARKERS", "OTHER_MARKERS", "PROGRESS_MARKERS"]

KERAS_MARKERS = (b"/step", b"ETA:", b"/Unknown", "━".encode())
OTHER_MARKERS = (b"step", b"Step")
PROGRESS_MARKERS = KERAS_MARKERS + OTHER_MARKERS   # the prefilter says which of them a body holds (.prescan)
_NEAR = 2048   # bytes before a place where a progress marker (or a drawing's start) is looked for first


class TimeWalk:
    """The time stamp of the nearest line before a place in a body, walking back line by line."""

    def __init__(self, year: int | None) -> None:
        self.year = year
        self._memo: tuple | None = None   # the last walk: (body, from, down to, its answer, final)
        self._heads: dict[int, float | None] = {}   # time stamps of line heads of ``_of`` read: (start, length) -> it
        self._of: bytes | None = None

    def before(self, body: bytes, pos: int, limit: int = 64) -> float | None:
        """Timestamp of the nearest line at or before ``pos`` that has one, within ``limit`` lines.

        The last walk over a body is remembered (from where, down to which line, what it found): a walk that reaches
        the span an earlier one read skips it at C speed (its lines counted, not read again) -- in a log without
        time stamps every Epoch line and every epoch's last progress line would otherwise walk back ``limit`` lines.
        """
        memo = self._memo
        if memo is not None and memo[0] is not body:
            memo = None
        if self._of is not body:
            self._of, self._heads = body, {}
        heads, year = self._heads, self.year
        end, n = pos, 0
        if memo is not None and not memo[2] + 80 < pos <= memo[1]:
            memo = None if pos <= memo[1] else memo    # a walk from inside the span's first line: read it again
        while n < limit:
            if memo is not None and memo[2] <= end <= memo[1]:   # the span an earlier walk read
                _, _, to, ts, final = memo
                lines = body.count(b"\n", to, end) + 1    # from the line at ``end`` down to the line at ``to``
                memo = None
                if ts is not None or final or n + lines >= limit:
                    self._memo = (body, pos, to, ts, final)   # what the lines hold, whatever this walk's reach
                    return ts if n + lines <= limit else None
                n, end = n + lines, to - 1                 # none in it: go on below it
                if end < 0:
                    break
                continue
            start = body.rfind(b"\n", 0, end) + 1 if end > 0 else 0
            n += 1
            head = body[start:min(end, start + 80)]
            # every time stamp split_timestamp reads starts with a digit, [IWEF] or "[", then a digit: a head that
            # does not ("Epoch 3/5", a progress bar, "INFO:...") is passed without reading it
            if head[1:2].isdigit() and (head[:1].isdigit() or head[:1] in (b"I", b"W", b"E", b"F", b"[")):
                key = start * 81 + len(head)    # the same line's head of the same length: the same answer
                ts = heads.get(key, heads)
                if ts is heads:
                    ts = heads[key] = split_timestamp(head.decode("ascii", "replace"), year)[0]
                if ts is not None:
                    self._memo = (body, pos, start, ts, True)
                    return ts
            if start == 0:
                self._memo = (body, pos, 0, None, True)
                return None
            end = start - 1
        self._memo = (body, pos, max(end + 1, 0), None, end < 0)
        return None


def last_progress(body: bytes, lo: int, hi: int, markers_: tuple[bytes, ...], styles: tuple[str, ...],
                  present: frozenset[bytes] | None, year: int | None):
    """The last progress drawing of one of ``styles`` in ``body[lo:hi]``, found from the end by its ``markers_``:
    (where it starts, its time stamp or None, its text, (kind, fields, style)), or None. ``present``: the markers the
    body holds, when the prefilter said (the others need no search)."""
    markers = list(markers_) if present is None else [m for m in markers_ if m in present]
    pos = hi
    rfind = body.rfind
    for _ in range(24):
        best = -1
        near = max(lo, pos - _NEAR)   # the markers' last places are near the end, most often: looked for there first
        for m in markers:
            i = rfind(m, near, pos)
            if i > best:
                best = i
        if best < 0 and near > lo:
            for m in list(markers):
                i = rfind(m, lo, near + len(m) - 1)
                if i < 0:
                    markers.remove(m)   # absent before pos: absent before any smaller pos too
                elif i > best:
                    best = i
        if best < 0:
            return None
        near = max(lo, best - _NEAR)  # where this drawing begins: after the last line end, \r or \b before it
        seg_start = max(rfind(b"\n", near, best), rfind(b"\r", near, best), rfind(b"\x08", near, best)) + 1
        if seg_start == 0 or seg_start < lo:
            seg_start = max(lo, rfind(b"\n", lo, best) + 1, rfind(b"\r", lo, best) + 1, rfind(b"\x08", lo, best) + 1)
        seg_end = body.find(b"\n", best, hi)
        cr = body.find(b"\r", best, hi)
        if seg_end < 0 or (0 <= cr < seg_end):
            seg_end = cr if cr >= 0 else hi
        seg = body[seg_start:min(seg_end, seg_start + 4096)]
        text = clean_line(seg.decode("utf-8", "replace"))
        ts_line, text = split_timestamp(text, year)
        found = _progress_styled(text) if ("/" in text or "step" in text.lower()) else None
        if found is not None and found[2] in styles:
            return seg_start, ts_line, text, found
        pos = seg_start - 1
        if pos <= lo:
            return None
    return None
