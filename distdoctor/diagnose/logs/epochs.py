"""The per-epoch path of :class:`~.taskscan.TaskScanner`, kept lean: a plain ``Epoch N/M`` line closes the epoch
before it -- that epoch's last progress drawing is found (:func:`~.lookback.last_progress`), timed and kept, and the
new epoch begins. A progress log runs it once per epoch (~580 times in a 4 MB log of the ``progress`` mix), so it
reads the scanner's state directly and makes its two events with :func:`~..events.quick_event`; what it does is what
``TaskScanner._on_event`` does for an epoch event, step for step.
"""
from __future__ import annotations

import re

from ..events import EventKind, LogEvent, quick_event
from .formats import MAX_TEXT
from .lookback import KERAS_MARKERS, OTHER_MARKERS, last_progress

__all__ = ["epoch_line", "sample_progress"]

_EPOCH = EventKind.EPOCH
_KERAS, _OTHER = ("keras",), ("estimator", "generic")


def epoch_line(sc, body: bytes, ls: int, le: int, line_no: int, m: re.Match[bytes]) -> None:
    """A plain ``Epoch N/M`` line (no time stamp, no prefix) at ``body[ls:le]``, line ``line_no``, read by scanner
    ``sc``: its time is the nearest one before it."""
    parser = sc.parser
    ts = sc._clock.before(body, ls - 1, 64) if ls > 0 else None
    if ts is None:
        ts = sc._known_ts
    last = parser.last_ts
    if ts is not None and (last is None or ts > last):
        parser.last_ts = last = ts
    parser.lines += 1
    epoch, total = int(m.group(1)), int(m.group(2))
    ev = quick_event(parser.task, last, _EPOCH, body[ls:le].decode("ascii").strip()[:MAX_TEXT], line_no,
                     epoch=epoch, total=total)
    if last is not None:
        known = sc._known_ts
        sc._known_ts = last if known is None or last > known else known
        if sc._first_ts is None:
            sc._first_ts = sc._first_ts_in(body) or last
    p = sample_progress(sc, body, sc._epoch_lo, ls, ls, line_no)
    if p is not None:
        sc._note_progress(p)
    sc._close_epoch()
    sc._epoch, sc._epochs_total = epoch, total
    sc._epoch_lo = min(le + 1, len(body))
    sc._last_progress_at = last or sc._last_progress_at
    sc._keep(ev)


def sample_progress(sc, body: bytes, lo: int, hi: int, ref_pos: int, ref_line: int) -> LogEvent | None:
    """The latest progress line in ``body[lo:hi]``, found from the end, as scanner ``sc``'s event.

    Keras lines win over other ``step N ... loss`` prints (a callback's or the user's own); ``ref_pos`` starts line
    number ``ref_line``.
    """
    found = last_progress(body, lo, hi, KERAS_MARKERS, _KERAS, sc._present, sc.year)
    if found is None and not sc._keras:
        found = last_progress(body, lo, hi, OTHER_MARKERS, _OTHER, sc._present, sc.year)
    if found is None:
        return None
    seg_start, ts_line, text, (kind, fields, style) = found
    if style == "keras":
        sc._keras = True
    ts = ts_line if ts_line is not None else sc._clock.before(body, seg_start, 64)
    if ts is None:
        ts = sc._known_ts
    line_no = ref_line - body.count(b"\n", seg_start, ref_pos)
    return quick_event(sc.task, ts, kind, text.strip()[:MAX_TEXT], line_no, step=fields["step"],
                       total=fields["total"], loss=fields["loss"], epoch=sc._epoch)
