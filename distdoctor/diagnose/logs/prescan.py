"""One prefilter pass over a body for both scanners of a task's log.

:class:`~.scan.Scanner` (the knowledge base's literals and the writer clues) and
:class:`~.taskscan.TaskScanner` (the structural parser's keywords and raw patterns) each need the lines of a body
that hold one of their patterns. With Hyperscan, one database holds all of them and one pass over the body answers
both. Patterns that a stream has spent -- a signature with all the hits it may keep, a keyword that found one
message a flood of times -- are left out of the database for the stream's next bodies, so a flood of one INFO line
costs nothing per line once it is known. The databases for each set of spent patterns are compiled once per
process and kept (a job's logs spend the same patterns: the first log pays, the others reuse).

Without Hyperscan (no x86-64), :func:`get` returns None and each scanner runs its own prefilter.
"""
from __future__ import annotations

import collections
import re

__all__ = ["Prescan", "get"]

_KEEP = 32     # compiled databases kept per process


class Prescan:
    """The joint Hyperscan database: ids ``[0, n)`` are the signature scanner's literals, ``[n, n + m)`` the task
    scanner's patterns."""

    def __init__(self) -> None:
        import hyperscan
        from .scan import _get
        from .taskfilter import EXPRESSIONS
        from .taskscan import PROGRESS_MARKERS
        self._hs = hyperscan
        pf = _get()
        self.n_sig = len(pf.literals)
        self.n_task = self.n_sig + len(EXPRESSIONS)      # ids from here on: progress markers, reported once a pass
        self.markers = PROGRESS_MARKERS
        self._exprs = ([re.escape(x.decode()).encode() for x in pf.literals] + list(EXPRESSIONS)
                       + [re.escape(m) for m in PROGRESS_MARKERS])
        self._flags = ([hyperscan.HS_FLAG_CASELESS if c else 0 for c in pf.caseless]
                       + [hyperscan.HS_FLAG_MULTILINE] * len(EXPRESSIONS)
                       + [hyperscan.HS_FLAG_SINGLEMATCH] * len(PROGRESS_MARKERS))
        self._dbs: collections.OrderedDict[frozenset[int], object] = collections.OrderedDict()
        self.compiled = 0
        self._db(frozenset())

    def _db(self, left_out: frozenset[int]):
        db = self._dbs.get(left_out)
        if db is not None:
            self._dbs.move_to_end(left_out)
            return db
        ids = [i for i in range(len(self._exprs)) if i not in left_out]
        db = self._hs.Database(mode=self._hs.HS_MODE_BLOCK)
        if ids:
            db.compile(expressions=[self._exprs[i] for i in ids], ids=ids, flags=[self._flags[i] for i in ids])
        else:
            db = None
        self.compiled += 1
        self._dbs[left_out] = db
        if len(self._dbs) > _KEEP:
            self._dbs.popitem(last=False)
        return db

    def scan(self, body: bytes, sig_spent: frozenset[int] = frozenset(), task_spent: frozenset[int] = frozenset()
             ) -> tuple[dict[int, set[int]], list[tuple[int, int, list[int]]], frozenset[bytes]]:
        """The candidate lines of ``body``: ({line start: signature literal ids}, [(line start, line end, task pattern
        ids)] in order), and the progress markers it holds."""
        n, m = self.n_sig, self.n_task
        left_out = sig_spent | frozenset(n + i for i in task_spent) if task_spent else sig_spent
        db = self._db(left_out)
        found: list[tuple[int, int]] = []
        marks: list[int] = []
        add, mark = found.append, marks.append

        def on_match(i, _start, end, _flags, _ctx):
            if i < m:
                add((end, i))
            else:
                mark(i - m)
        if db is not None:
            db.scan(body, match_event_handler=on_match)
        got = _group(body, found, n)
        if got is None:           # Hyperscan reported out of end order: put them in order first
            found.sort()
            got = _group(body, found, n)
        return got[0], got[1], frozenset(self.markers[i] for i in marks)


def _group(body: bytes, found: list[tuple[int, int]], n: int):
    starts: dict[int, set[int]] = {}
    lines: list[tuple[int, int, list[int]]] = []
    rfind, find, size = body.rfind, body.find, len(body)
    le, ls, sig_ids, task_ids = -1, 0, None, None
    for end, i in found:
        if end > le:          # a match that ends past the current line: the next candidate line
            ls = rfind(b"\n", 0, end) + 1
            le = find(b"\n", end)
            if le < 0:
                le = size
            sig_ids = task_ids = None
        elif end <= ls:       # on an earlier line: the matches are not in the order of their ends
            return None
        if i < n:
            if sig_ids is None:
                sig_ids = starts[ls] = set()
            sig_ids.add(i)
        else:
            if task_ids is None:
                task_ids = []
                lines.append((ls, le, task_ids))
            task_ids.append(i - n)
    return starts, lines


_PRESCAN: Prescan | None = None
_TRIED = False


def get() -> Prescan | None:
    """The process's joint prefilter, or None without Hyperscan."""
    global _PRESCAN, _TRIED
    if not _TRIED:
        _TRIED = True
        try:
            _PRESCAN = Prescan()
        except Exception:   # noqa: BLE001 -- no Hyperscan (not x86-64, or no SIMD): each scanner prefilters alone
            _PRESCAN = None
    return _PRESCAN
