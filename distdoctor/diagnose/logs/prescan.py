"""One prefilter pass over a body for both scanners of a task's log.

:class:`~.scan.Scanner` (the knowledge base's literals and the writer clues) and
:class:`~.taskscan.TaskScanner` (the structural parser's keywords and raw patterns) each need the lines of a body
that hold one of their patterns. With Hyperscan, one database holds all of them and one pass over the body answers
both. Patterns that a stream has spent -- a signature with all the hits it may keep, a keyword that found one
message a flood of times -- are left out of the database for the stream's next bodies, so a flood of one INFO line
costs nothing per line once it is known. The databases for each set of spent patterns are compiled once per
process and kept (a job's logs spend the same patterns: the first log pays, the others reuse).

**Each line shape is scanned once.** A log repeats a few hundred messages with other numbers in them: the body's
lines, digits read as 0, are deduplicated (``bytes.translate``, ``split``, a dict: C speed) and the patterns that
cannot tell one digit from another run over the distinct shapes only; the few that can (a literal ``137``) run
over the raw body. A stream hands the readers at most :data:`SHAPE_BUDGET` lines of one shape when all that
shape's patterns ignore digit values: a signature keeps 32 hits (``scan.MAX_HITS_PER_SIG``) and the structural
parser reads 20 lines of a template (``TaskScanner.MAX_REPEATS``, a coarser template), so the lines withheld are
lines both readers skip anyway -- a flood costs no Python per line at all. Lines that may say more than their
patterns (an ``Epoch`` line, a prefix naming a writer, a ``\r`` progress bar, a kubectl session) are never
withheld. Bodies whose lines are mostly distinct skip the deduplication (:class:`Shapes` decides per stream).

The same compiled databases answer each scanner alone (:meth:`Prescan.sig_lines` for the signature scanner of a
combined stream or a live task, :meth:`Prescan.task_lines` for a task split out of a combined stream): this module
is the one place the prefilter's patterns are compiled. Without Hyperscan (no x86-64), :func:`get` returns None and
each scanner runs its own fallback prefilter (RE2 or ``re`` for the literals, translated bytes for the structural
keywords).
"""
from __future__ import annotations

import collections
import itertools
import re
import threading

__all__ = ["Prescan", "Shapes", "get", "SHAPE_BUDGET", "scratch_for", "more_than"]

_THREAD = threading.local()


def scratch_for(db):
    """This thread's Hyperscan scratch space for ``db``. A database's own scratch serves one scan at a time: two
    threads scanning with it at once (the tasks' readers of ``run``, each printing its traceback as the job fails)
    make one of the scans fail (``ScratchInUseError``) and its lines go unread."""
    cache = getattr(_THREAD, "scratch", None)
    if cache is None:
        cache = _THREAD.scratch = {}
    got = cache.get(id(db))
    if got is None or got[0] is not db:
        import hyperscan
        if len(cache) >= 4 * _KEEP:
            cache.clear()
        got = cache[id(db)] = (db, hyperscan.Scratch(db))
    return got[1]

_KEEP = 32     # compiled databases kept per process
SHAPE_BUDGET = 32          # lines of one shape handed to the readers per stream (>= MAX_HITS_PER_SIG, MAX_REPEATS)
SMALL_BODY = 128 << 10     # a body shorter than this reuses a compiled database rather than compile its own
MAX_SHAPES = 20000         # shapes counted per stream; lines of shapes past it are always handed over
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_ZERO_CLASS = re.compile(r"\[\^?[^\]]*0[^\]]*\]")   # a class that accepts 0 matches a zeroed digit wherever it did one
# never withheld: lines that can tell more than their patterns' matches (see scan.Scanner._process)
_TELLING = re.compile(rb"Epoch|\r|Name:|logs|describe|^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?"
                      rb"(?:Z|[+-]\d\d:?\d\d)\s+)?(?:\[| {0,5}\d{1,5}: |[A-Za-z][\w.-]{0,80}?\s+\| |[ \t]*[>*]|\xef\xbb\xbf)")


class Shapes:
    """Per stream: how many lines of each shape were handed to the readers, and whether its bodies repeat enough
    for the shape pass to pay."""

    DENSE = 0.15               # candidate lines per line of a plain pass above which shapes are tried

    def __init__(self) -> None:
        self.handed: dict[bytes, int] = {}
        self.withheld = 0          # lines withheld (of shapes whose budget was spent)
        self._on = True            # read by shape (the first body tells whether that pays)
        self._cool = 0             # bodies to read the plain way before trying shapes again

    def worth_it(self) -> bool:
        if self._cool:
            self._cool -= 1
            return False
        return self._on

    def plain(self, body: bytes, candidates: int) -> None:
        """A plain pass over ``body`` found ``candidates`` lines: is the next body worth reading by shape?"""
        self.dense(candidates, body.count(b"\n"))

    def dense(self, candidates: int, lines: int) -> None:
        """``candidates`` of ``lines`` hold a pattern not spent: a flood the plain pass cannot leave out?"""
        self._on = candidates > self.DENSE * lines

    def distinct(self) -> None:
        self._on, self._cool = False, 8


class Prescan:
    """The joint Hyperscan database: ids ``[0, n)`` are the signature scanner's literals, ``[n, n + m)`` the task
    scanner's patterns."""

    def __init__(self) -> None:
        import hyperscan
        from .linekinds import PATTERNS
        from .literals import literal_table
        from .lookback import PROGRESS_MARKERS
        from .taskfilter import EXPRESSIONS
        self._hs = hyperscan
        pf = literal_table()
        self.n_sig = len(pf.literals)
        self.n_kw = self.n_sig + len(EXPRESSIONS)        # ids from here on: the line classifier's own literals
        self.n_task = self.n_kw + len(PATTERNS)          # ids from here on: progress markers, reported once a pass
        self.markers = PROGRESS_MARKERS
        self._exprs = ([re.escape(x.decode()).encode() for x in pf.literals] + list(EXPRESSIONS)
                       + [re.escape(x).encode() for x, _ in PATTERNS] + [re.escape(m) for m in PROGRESS_MARKERS])
        self._flags = ([hyperscan.HS_FLAG_CASELESS if c else 0 for c in pf.caseless]
                       + [hyperscan.HS_FLAG_MULTILINE] * len(EXPRESSIONS)
                       + [hyperscan.HS_FLAG_CASELESS if c else 0 for _, c in PATTERNS]
                       + [hyperscan.HS_FLAG_SINGLEMATCH] * len(PROGRESS_MARKERS))
        self._kinds = frozenset(range(self.n_kw, self.n_task))
        from .literals import _has_digit
        # patterns whose matches on a line's shape (digits read as 0) include their matches on the line itself
        self._on_shape = [not _has_digit(_ZERO_CLASS.sub("", e.decode("latin-1"))) for e in self._exprs]
        if not all(self._on_shape[self.n_sig:self.n_task]):   # a line's structural patterns are its shape's
            raise ValueError("a structural prefilter pattern that tells digits apart")
        # signature literals whose lines a shape decides (see scan._Prefilter.blind), and every structural pattern:
        # the parser's flood gate is a template without digits
        self._sig_blind = frozenset(pf.blind)
        self._not_sig = frozenset(range(self.n_sig, len(self._exprs)))                 # all but the literals
        self._not_task = frozenset(range(self.n_sig)) | frozenset(range(self.n_task, len(self._exprs)))
        self._dbs: collections.OrderedDict[tuple, object] = collections.OrderedDict()
        self.compiled = 0
        for part in ("all", "shape", "raw"):   # compiled before a pool forks: its workers share them
            self._db(frozenset(), part)

    def _db(self, left_out: frozenset[int], part: str = "all"):
        key = (left_out, part)
        if key in self._dbs:
            self._dbs.move_to_end(key)
            return self._dbs[key]
        ids = [i for i in range(len(self._exprs)) if i not in left_out
               and (part == "all" or self._on_shape[i] == (part == "shape"))]
        db = self._hs.Database(mode=self._hs.HS_MODE_BLOCK)
        if ids:
            db.compile(expressions=[self._exprs[i] for i in ids], ids=ids, flags=[self._flags[i] for i in ids])
        else:
            db = None
        self.compiled += 1
        self._dbs[key] = db
        if len(self._dbs) > _KEEP:
            self._dbs.popitem(last=False)
        return db

    def _near(self, left_out: frozenset[int]) -> tuple[object, frozenset[int]]:
        """A plain database already compiled that leaves out part of ``left_out``: (it, what it still reports)."""
        best, have = None, frozenset()
        for (out, part), db in self._dbs.items():
            if part == "all" and out <= left_out and (best is None or len(out) > len(have)):
                best, have = db, out
        return best, left_out - have

    def scan(self, body: bytes, sig_spent: frozenset[int] = frozenset(), task_spent: frozenset[int] = frozenset(),
             shapes: Shapes | None = None) -> tuple[dict[int, set[int]], list[tuple], frozenset[bytes]]:
        """The candidate lines of ``body``: ({line start: signature literal ids}, [(line start, line end, task pattern
        ids, every structural pattern id or None)] in order), and the progress markers it holds. With ``shapes``
        (the stream's), lines are scanned by shape and a shape's lines past its budget are withheld.

        A line is the structural parser's candidate when it holds one of its prefilter patterns; the line classifier's
        hits come with it (:mod:`.linekinds`: every structural pattern on the line, the keywords standing for the
        table's literals that hold them, then the table's own literals), all of them, or None: once the stream has
        spent a prefilter pattern (a flood), the plain pass leaves the table's own literals out too (a flood costs no
        match per line) and the parser classifies those lines the full way."""
        n, m = self.n_sig, self.n_task
        left_out = sig_spent | frozenset(n + i for i in task_spent) | self._kinds if task_spent else sig_spent
        if shapes is not None and shapes.worth_it():
            got = self._scan_shapes(body, left_out, shapes)
            if got is not None:
                return got
        extra: frozenset[int] = frozenset()
        if len(body) >= SMALL_BODY or (left_out, "all") in self._dbs:
            db = self._db(left_out)
        else:   # a short body (a log's last piece) is not worth a compilation: the nearest database, filtered
            db, extra = self._near(left_out)
        found: list[tuple[int, int]] = []
        marks: list[int] = []
        add, mark = found.append, marks.append

        def on_match(i, _start, end, _flags, _ctx):
            if i in extra:
                return
            if i < m:
                add((end, i))
            else:
                mark(i - m)
        if db is not None:
            db.scan(body, match_event_handler=on_match, scratch=scratch_for(db))
        k, known = self.n_kw, not task_spent
        got = _group(body, found, n, k, known)
        if got is None:           # Hyperscan reported out of end order: put them in order first
            found.sort()
            got = _group(body, found, n, k, known)
        if shapes is not None:
            shapes.plain(body, len(got[0]) + len(got[1]))
        return got[0], got[1], frozenset(self.markers[i] for i in marks)


    def sig_lines(self, body: bytes) -> dict[int, set[int]]:
        """{line start: signature literal ids} of ``body``, for the signature scanner alone (a combined stream, a live
        task's lines): the joint database without the structural patterns."""
        n = self.n_sig
        found: list[tuple[int, int]] = []
        add = found.append

        def on_match(i, _start, end, _flags, _ctx):
            add((end, i))
        db = self._db(self._not_sig, "all")
        if db is not None:
            db.scan(body, match_event_handler=on_match, scratch=scratch_for(db))
        got = _group(body, found, n, self.n_kw, False)
        if got is None:
            found.sort()
            got = _group(body, found, n, self.n_kw, False)
        return got[0]

    def task_lines(self, body: bytes, pos: int = 0) -> list[tuple]:
        """The structural parser's candidate lines of ``body`` from ``pos`` (a line start) on: (start, end, its
        pattern ids, every structural pattern found), in order, for the parser alone (a task split out of a combined
        stream, a live task): the joint database without the signature literals and the progress markers."""
        n, m = self.n_sig, self.n_task
        found: list[tuple[int, int]] = []
        add = found.append
        view = body[pos:] if pos else body

        def on_match(i, _start, end, _flags, _ctx):
            add((pos + end, i))
        db = self._db(self._not_task, "all")
        if db is not None:
            db.scan(view, match_event_handler=on_match, scratch=scratch_for(db))
        got = _group(body, found, n, self.n_kw, True)
        if got is None:
            found.sort()
            got = _group(body, found, n, self.n_kw, True)
        return got[1]

    def _scan_shapes(self, body: bytes, left_out: frozenset[int], shapes: Shapes):
        zeroed = body.translate(_ZEROS)
        lines = zeroed.split(b"\n")
        distinct = dict.fromkeys(lines)
        if len(distinct) > 0.5 * len(lines):
            shapes.distinct()     # mostly distinct lines: the plain pass is cheaper
            return None
        n, m, kw = self.n_sig, self.n_task, self.n_kw
        # 1. the patterns a shape decides, over the distinct shapes
        joined = b"\n".join(distinct)
        found: list[tuple[int, int]] = []
        marks: list[int] = []
        add, mark = found.append, marks.append

        def on_match(i, _start, end, _flags, _ctx):
            if i < m:
                add((end, i))
            else:
                mark(i - m)
        db = self._db(frozenset(), "shape")   # all patterns: the distinct shapes are few, a spent one costs little
        if db is not None:
            db.scan(joined, match_event_handler=on_match, scratch=scratch_for(db))
        per_shape: dict[bytes, list[int]] = {}
        found.sort()
        le, ids = -1, None
        for end, i in found:
            if end > le:
                ls = joined.rfind(b"\n", 0, end) + 1
                le = joined.find(b"\n", end)
                if le < 0:
                    le = len(joined)
                ids = per_shape.setdefault(joined[ls:le], [])
            ids.append(i)
        # 2. the patterns that tell digits apart, over the raw body (few lines hold a literal digit)
        raw: list[tuple[int, int]] = []
        db = self._db(frozenset(), "raw")     # few lines hold a literal digit: spent ones are dropped below
        if db is not None:
            add = raw.append

            def on_raw(i, _start, end, _flags, _ctx):
                if i < m:
                    add((end, i))
                else:
                    mark(i - m)
            db.scan(body, match_event_handler=on_raw, scratch=scratch_for(db))
            raw = sorted(x for x in raw if x[1] not in left_out)
        starts, out = _group(body, raw, n, kw, False) if raw else ({}, [])
        # the structural patterns tell no digit apart: a line's are its shape's (all of them: nothing is left out)
        by_start = {ls: (le, ids, [i - n for i in per_shape.get(zeroed[ls:le], ()) if i >= n])
                    for ls, le, ids, _ in out}
        # 3. the lines of each candidate shape; each reader's patterns on the first SHAPE_BUDGET lines of a shape
        # only, where the shape decides what they find (the signatures': patterns blind to digit values, a line that
        # tells nothing more; the structural parser's: any but an Epoch line, its gate is a template without digits)
        handed, telling = shapes.handed, _TELLING.search
        counts = collections.Counter(lines)
        room = len(handed) < MAX_SHAPES
        live = 0                                   # lines a plain pass (spent patterns left out) would find
        plan: dict[bytes, list] = {}               # shape -> [signature ids, task ids, capped?, capped?, lines handed]
        for shape, pids in per_shape.items():
            sig_ids = {i for i in pids if i < n and i not in left_out}
            task_ids = [i - n for i in pids if n <= i < kw and i not in left_out]
            if not sig_ids and not task_ids:
                continue
            live += counts[shape]
            k = handed.get(shape, -1)
            if k < 0 and room:
                k = 0
            sig_cap = k >= 0 and bool(sig_ids) and self._sig_blind.issuperset(sig_ids) and not telling(shape)
            task_cap = k >= 0 and bool(task_ids) and b"Epoch" not in shape
            if k >= SHAPE_BUDGET:
                if sig_cap:
                    sig_ids = set()
                if task_cap:
                    task_ids = []
                    shapes.withheld += counts[shape]
                if not sig_ids and not task_ids:
                    continue
            plan[shape] = [sig_ids, task_ids, sig_cap, task_cap, k, [i - n for i in pids if i >= n]]
        if plan:
            ends = list(itertools.accumulate(map(len, lines)))   # line i starts at ends[i - 1] + i
            get = plan.get
            for i in [i for i, shape in enumerate(lines) if shape in plan]:
                e = get(lines[i])
                sig_ids, task_ids = e[0], e[1]
                ls = ends[i - 1] + i if i else 0
                if sig_ids:
                    starts.setdefault(ls, set()).update(sig_ids)
                if task_ids:
                    old = by_start.get(ls)
                    by_start[ls] = (ends[i] + i, (old[1] + task_ids) if old else list(task_ids), e[5])
                if e[4] >= 0:
                    e[4] += 1
                    if e[4] == SHAPE_BUDGET:   # a reader's budget for this shape is spent: the rest is withheld
                        if e[2]:
                            e[0] = set()
                        if e[3]:
                            e[1] = []
            for shape, e in plan.items():
                if e[4] >= 0:
                    if e[3] and e[4] >= SHAPE_BUDGET:
                        shapes.withheld += counts[shape] - (SHAPE_BUDGET - handed.get(shape, 0))
                    handed[shape] = min(e[4], SHAPE_BUDGET) if e[2] or e[3] else e[4]
        shapes.dense(live, len(lines))
        cands = [(ls, le, ids, cls) for ls, (le, ids, cls) in sorted(by_start.items())]
        return starts, cands, frozenset(self.markers[i] for i in marks)


def _group(body: bytes, found: list[tuple[int, int]], n: int, k: int, known: bool):
    """({line start: signature ids}, [(line start, line end, structural pattern ids, the same or None)]): ids ``[0, n)``
    are signature literals, ``[n, k)`` the structural prefilter's patterns, from ``k`` on the line classifier's own
    literals. A line is a candidate of the structural parser by a prefilter pattern only; with ``known`` (the pass
    left none of them out) its list holds every structural pattern found on it, the line classifier's hits, and is
    handed twice; otherwise the hits are None."""
    starts: dict[int, set[int]] = {}
    lines: list[tuple] = []
    rfind, find, size = body.rfind, body.find, len(body)
    le, ls, sig_ids, task_ids, pend = -1, 0, None, None, None
    for end, i in found:
        if end > le:          # a match that ends past the current line: the next candidate line
            ls = rfind(b"\n", 0, end) + 1
            le = find(b"\n", end)
            if le < 0:
                le = size
            sig_ids = task_ids = pend = None
        elif end <= ls:       # on an earlier line: the matches are not in the order of their ends
            return None
        if i < n:
            if sig_ids is None:
                sig_ids = starts[ls] = set()
            sig_ids.add(i)
        elif i < k:
            if task_ids is None:
                task_ids = pend if pend is not None else []
                lines.append((ls, le, task_ids, task_ids if known else None))
            task_ids.append(i - n)
        elif known:           # the line classifier's own literal: the line is no candidate by it
            if task_ids is not None:
                task_ids.append(i - n)
            elif pend is None:
                pend = [i - n]
            else:
                pend.append(i - n)
    return starts, lines


def more_than(data: bytes, chars: bytes, limit: int) -> bool:
    """Whether more than ``limit`` bytes of ``data`` are bytes of ``chars`` (a log's control bytes): one Hyperscan pass
    over a byte class that stops at the one past ``limit`` (~7x faster than deleting them with ``translate``), or
    ``translate`` without Hyperscan."""
    db = _CLASS_DBS.get(chars)
    if db is None and get() is not None:
        import hyperscan
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[b"[" + b"".join(b"\\x%02x" % c for c in chars) + b"]"], ids=[0], flags=[0])
        _CLASS_DBS[chars] = db
    if db is None:
        return len(data) - len(data.translate(None, chars)) > limit
    seen = [0]

    def on_match(*_):
        seen[0] += 1
        return seen[0] > limit   # true: the scan stops
    try:
        db.scan(data, match_event_handler=on_match, scratch=scratch_for(db))
    except get()._hs.ScanTerminated:
        pass
    return seen[0] > limit


_CLASS_DBS: dict[bytes, object] = {}
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
