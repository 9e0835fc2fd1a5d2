"""The fast path: bytes in, signature hits and per-stream facts out.

A literal prefilter (Hyperscan when installed, else one compiled regular
expression of the escaped literals) runs over big byte chunks and yields the
offsets of lines that contain some signature's literal; only those lines are
decoded, demultiplexed and matched against the full patterns. Memory is
bounded by the chunk size plus the hits kept (capped per signature).

A flood costs no Python per line once it is known: a literal whose signatures
have all the hits they may keep is *spent* (left out of the next prefilter
pass, :mod:`.prescan`, or skipped by a set test), and a line whose shape
already matched none of its (digit-blind) signatures is not read again.
"""
from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from typing import Iterable

from .formats import clean_line, split_timestamp
from . import kb  # noqa: F401  (registers the knowledge base)
from .demux import WriterGuess, task_from_filename
from .prefixes import split_prefix
from .literals import _CLUES, _IDENTITY_CLUES, _SUBJECT_CLUES, _has_digit, literal_table  # noqa: F401
from .signature import SIGNATURES, Role, Signature

__all__ = ["Hit", "StreamFacts", "Scanner", "prefilter_engine", "scan_bytes", "Prefilter"]


SNIFF = 64 * 1024
_TEXTISH = bytes(range(32, 127)) + b"\t\n\r\x1b\x08" + bytes(range(128, 256))
MAX_HITS_PER_SIG = 32      # per stream; a log that repeats one error a million times says it once (was 64: the
#                            reasoning and the hand-over from the scanning pool cost in proportion, for no other verdict)
MAX_MISSES = 4096          # line shapes remembered per stream as matching none of their signatures
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
TAIL_LINES = 12
# A line that may carry a writer's prefix (split_prefix: an ISO stamp, then [..], srun's "N: ", compose's "name | ")
# or a wrapping clean_line removes: always read, whatever its literals, since it can tell who wrote the lines after it.
_PREFIXISH = re.compile(rb"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\s+)?"
                        rb"(?:\[| {0,5}\d{1,5}: |[A-Za-z][\w.-]{0,80}?\s+\| |[ \t]*[>*]|\xef\xbb\xbf)")


@dataclass(frozen=True)
class Hit:
    """One line that matched one signature."""

    sig: Signature
    stream: str            # the file (or stdin) it came from
    writer: str | None     # the task that wrote the line, when known
    named: str | None      # the task the line itself names, when it names one
    line_no: int
    ts: float | None
    text: str


@dataclass
class StreamFacts:
    """What one input stream showed besides its hits."""

    name: str
    writer: str | None = None
    lines: int = 0
    bytes: int = 0
    tail: list[str] = field(default_factory=list)
    writers: set[str] = field(default_factory=set)     # every task a prefix named
    guess: WriterGuess = field(default_factory=WriterGuess)
    dropped: int = 0                  # hits beyond MAX_HITS_PER_SIG among the lines read (spent lines are not read)
    binary: bool = False              # the first bytes are not text: not a log
    on_kubernetes: bool = False       # a pasted kubectl session (kubectl logs/describe, Name: POD)


class _Prefilter:
    """Offsets of the literal hits in a buffer, and which literal each one is."""

    def __init__(self, prefer: tuple[str, ...] = ("hyperscan", "re2", "re")) -> None:
        t = literal_table()
        self.literals, self.caseless, self.sigs = t.literals, t.caseless, t.sigs
        self.identity, self.subject, self.blind, self.ids_of = t.identity, t.subject, t.blind, t.ids_of
        self.engine = "re"
        self._joint = False    # Hyperscan: the joint prefilter's databases (.prescan), compiled there once
        self._prefer = prefer
        try:
            if "hyperscan" not in prefer:
                raise ImportError("hyperscan not wanted")
            import hyperscan
            hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(expressions=[b"a"], ids=[0], flags=[0])
            self._joint = True
            self.engine = "hyperscan"
        except Exception:   # noqa: BLE001 -- no Hyperscan (not x86-64, or no SIMD): RE2, else Python's re
            self._fallback()

    def _fallback(self) -> None:
        self._joint = False
        alts = [b"(?i:" + re.escape(x) + b")" if c else re.escape(x) for x, c in zip(self.literals, self.caseless)]
        pattern = b"|".join(sorted(alts, key=len, reverse=True))
        try:
            if "re2" not in self._prefer:
                raise ImportError("re2 not wanted")
            import re2
            opts = re2.Options()
            opts.max_mem = 256 << 20
            self._rx = re2.compile(pattern, options=opts)
            self.engine = "re2"
        except Exception:   # noqa: BLE001 -- measured ~1 MB/s: correct, but only a last resort
            self._rx = re.compile(pattern)
            self.engine = "re"

    def line_starts(self, buf: bytes) -> dict[int, set[int]]:
        """{start offset of a line: literal ids found in it}."""
        out: dict[int, set[int]] = {}
        if self._joint:
            from . import prescan
            joint = prescan.get()
            if joint is not None:
                return joint.sig_lines(buf)
            self._fallback()   # Hyperscan imports but its databases could not be built
        # An alternation reports one literal per position (leftmost-first): find the lines, then every literal in them.
        for m in self._rx.finditer(buf):
            out.setdefault(buf.rfind(b"\n", 0, m.start()) + 1, set())
        for ls in out:
            le = buf.find(b"\n", ls)
            line = buf[ls:le if le >= 0 else len(buf)]
            low = line.lower()
            out[ls] = {i for i, (x, c) in enumerate(zip(self.literals, self.caseless)) if x in (low if c else line)}
        return out


Prefilter = _Prefilter
_PREFILTER: _Prefilter | None = None


def prefilter_engine() -> str:
    return _get().engine


def _get() -> _Prefilter:
    global _PREFILTER
    if _PREFILTER is None:
        _PREFILTER = _Prefilter()
    return _PREFILTER


_TASK_PATH = re.compile(r"/job:(?P<job>[A-Za-z_]+)(?:/replica:\d+)?/task:(?P<index>\d+)")
# A pasted kubectl session says whose output follows: `kubectl logs POD`, `kubectl describe pod POD`, `Name:  POD`.
# a line the launcher itself wrote (Slurm's srun/slurmstepd, Open MPI's mpirun), a kernel log line (dmesg, with or
# without -T) or a shell prompt the user pasted: among a task's prefixed lines it is no continuation of the task's
# output, whatever task wrote the line above it
_LAUNCHER_LINE = re.compile(r"(?:srun|slurmstepd(?:-[\w.-]+)?|salloc|sbatch|mpirun|mpiexec|prterun|horovodrun): "
                            r"|(?:mpirun|mpiexec|prterun) (?:noticed|detected|has exited|was unable)"
                            r"|\[\s*\d+\.\d{6}\] |\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\] "
                            r"|\$ \S")
# (flags before or after the verb: `kubectl -n NS logs POD`, `kubectl describe pod -n NS POD`, `kubectl logs -c C POD`)
_KFLAGS = r"(?:(?:-n|--namespace|-c|--container|--context)(?:=|\s+)\S+\s+|-f\s+|--previous\s+|-p\s+|--tail[= ]\S+\s+)*"
_SUBJECT = re.compile(r"^Name:\s{2,}(?P<a>\S+)\s*$|(?:^|\s)(?:kubectl|k)\s+" + _KFLAGS + r"(?:logs|describe\s+pods?)"
                      r"\s+" + _KFLAGS + r"(?:pod/)?(?P<b>[a-z0-9][\w.-]*)")


_POD_ROW = re.compile(r"^\s*(?:pod/)?(?P<pod>[a-z0-9][a-z0-9.-]*)\s+\d+/\d+\s+[A-Za-z:]+\s+\d+")   # NAME READY STATUS RESTARTS
_POD_REF = re.compile(r"\bpods?(?:/| \"|: )(?P<pod>[a-z0-9][a-z0-9.-]*)")


def _named(sig: Signature, text: str, m) -> str | None:
    for rx_match in ((m if isinstance(m, re.Match) else None),
                     (sig.names_compiled.search(text) if sig.names_compiled is not None else None)):
        if rx_match is None:
            continue
        gd = rx_match.groupdict()
        job = gd.get("job") or gd.get("job2")
        idx = gd.get("index") or gd.get("index2")
        if job and idx is not None:
            return f"{job.lower()}:{int(idx)}"
        rank = gd.get("rank") or gd.get("rank2")
        if rank is not None:
            return f"rank:{int(rank)}"
    # a signature's own `names` pattern is authoritative for task paths; without one, a symptom or wait names the
    # task path it quotes
    if sig.names_compiled is None and sig.role in (Role.SYMPTOM, Role.WAIT):
        mm = _TASK_PATH.search(text)
        if mm:
            return f"{mm.group('job').lower()}:{int(mm.group('index'))}"
    if sig.role in (Role.CAUSE, Role.SYMPTOM):
        pm = _POD_ROW.match(text) or _POD_REF.search(text)
        if pm:   # a `kubectl get pods` row or an event about pod/NAME: the pod's name names the task
            return task_from_filename(pm.group("pod"))
    return None


class Scanner:
    """Scan one stream from byte chunks; :meth:`close` gives ``(hits, facts)``."""

    def __init__(self, name: str, writer: str | None = None, *, year: int | None = None,
                 prefilter: "_Prefilter | None" = None) -> None:
        self.facts = StreamFacts(name=name, writer=writer)
        self.hits: list[Hit] = []
        self._pf = prefilter or _get()
        self._carry = b""
        self._line_base = 1
        self._year = year
        self._per_sig: collections.Counter[str] = collections.Counter()
        self._tail: collections.deque[bytes] = collections.deque(maxlen=TAIL_LINES)
        self._last_writer: str | None = None
        self._subject: str | None = None      # the pod a pasted kubectl session is about
        # Literal ids that need no reading any more: every signature they lead to was seen MAX_HITS_PER_SIG times in
        # this stream, and they are no clue still wanted (identity clues are moot once the writer is known). A line
        # whose literals are all spent is skipped without decoding -- a flood of one INFO message costs a set test
        # per line -- unless it may carry a writer's prefix or, while the writer is unknown, a self-description.
        # Lines that matched none of their literals' signatures, by their shape (every digit read as 0): a line of the
        # same shape cannot match them either, for signatures whose patterns name no digit (``Prefilter.blind``) --
        # "Error in PredictCost() for the op ..." repeated ten thousand times is matched against DD860 once.
        self._misses: dict[bytes, frozenset[int]] = {}
        # Lines (writer known, no line of the stream read for its writer) that gave no hit, byte for byte: their signatures missed them or had all the
        # hits they may keep; the same bytes again give nothing either (a crash-looping task prints its start-up block
        # again and again) and are counted as dropped as often as the first time. {line: (literals, dropped)}
        self._exact_misses: dict[bytes, tuple[frozenset[int], int]] = {}
        self._spent: set[int] = {i for i in self._pf.identity if not self._pf.sigs[i]} \
            if writer is not None else set()

    def feed(self, chunk: bytes, starts: dict[int, set[int]] | None = None) -> None:
        """Read ``chunk``; ``starts`` are the prefilter's candidate lines in it ({line start: literal ids}), when the
        caller ran the prefilter already (:mod:`.prescan`); they are used when ``chunk`` is the body."""
        if not chunk or self.facts.binary:
            return
        if self.facts.bytes == 0:
            sample = chunk[:SNIFF]
            bad = len(sample.translate(None, _TEXTISH)) + sample.decode("utf-8", "replace").count("\ufffd")
            if bad > 0.1 * len(sample) and bad > 16:
                self.facts.binary = True
                self.facts.bytes += len(chunk)
                return
        self.facts.bytes += len(chunk)
        buf = self._carry + chunk if self._carry else chunk
        end = buf.rfind(b"\n")
        if end < 0:
            self._carry = buf[-(1 << 20):]
            return
        body, self._carry = buf[:end + 1], buf[end + 1:]
        self._process(body, starts if body is chunk else None)

    def close(self) -> tuple[list[Hit], StreamFacts]:
        if self._carry:
            self._process(self._carry + b"\n")
            self._carry = b""
        f = self.facts
        f.tail = [clean_line(x.decode("utf-8", "replace")) for x in self._tail]
        if f.writer is None and not f.writers:
            f.writer = f.guess.task()
            if f.writer is not None:
                self.hits = [h if h.writer is not None else _with_writer(h, f.writer) for h in self.hits]
        return self.hits, f

    # -- per body ----------------------------------------------------------------------------------------
    def spent(self) -> frozenset[int]:
        """The literals a prefilter may leave out of its next pass over this stream: the spent ones, while no line is
        read for who wrote it (the writer is known from the file's name and no line carried a writer's prefix);
        otherwise none, and spent lines are skipped one by one."""
        if self.facts.writer is None or self.facts.writers or self._last_writer is not None:
            return frozenset()
        return frozenset(self._spent)

    def _process(self, body: bytes, starts: dict[int, set[int]] | None = None) -> None:
        if starts is None:
            starts = self._pf.line_starts(body)
        # the last lines of the stream, for "what the log ends with"
        tail_from = len(body)
        for _ in range(TAIL_LINES):
            p = body.rfind(b"\n", 0, tail_from - 1 if tail_from > 0 else 0)
            if p < 0:
                tail_from = 0
                break
            tail_from = p + 1
        for ln in body[tail_from:].split(b"\n"):
            if ln.strip():
                self._tail.append(ln[:2000])
        pos_counted, line_no = 0, self._line_base
        spent, blind, misses = self._spent, self._pf.blind, self._misses
        known = self.facts.writer is not None
        for ls in sorted(starts):
            ids = starts[ls]
            le = body.find(b"\n", ls)
            raw = body[ls:le if le >= 0 else len(body)]
            key = None
            live = ids - spent if spent else ids   # a spent literal's signatures can keep no more hits
            if live and live <= blind:
                # a line of a shape that missed before (that shape passed the tests below: they ignore digits)
                key = raw.translate(_ZEROS)
                missed = misses.get(key)
                if missed is not None and live <= missed:
                    continue
            if live <= blind and not _PREFIXISH.match(raw) and b"\r" not in raw \
                    and (known or (b"task" not in raw and b"Horovod" not in raw)) \
                    and b"Name:" not in raw and b"logs" not in raw and b"describe" not in raw:
                # a line that can tell nothing but its signatures' matches (no writer's prefix, no self-description)
                if not live:
                    continue
            else:
                key = None
            exact = known and b"\r" not in raw and not self.facts.writers and self._last_writer is None
            if exact:
                seen = self._exact_misses.get(raw)
                if seen is not None and live <= seen[0]:
                    self.facts.dropped += seen[1]
                    continue
            line_no += body.count(b"\n", pos_counted, ls)
            pos_counted = ls
            n_hits, n_dropped = len(self.hits), self.facts.dropped
            matched = self._line(raw, line_no, live, body, ls)
            if not matched and key is not None and len(misses) < MAX_MISSES:
                misses[key] = live | misses.get(key, frozenset())
            elif exact and len(self.hits) == n_hits and len(self._exact_misses) < MAX_MISSES:
                # the line gave nothing new: its signatures missed, or each has all the hits it may keep
                old = self._exact_misses.get(raw)
                self._exact_misses[raw] = (live | (old[0] if old else frozenset()), self.facts.dropped - n_dropped)
        n_lines = (line_no - self._line_base) + body.count(b"\n", pos_counted)
        self._line_base += n_lines
        self.facts.lines += n_lines

    def _writer_before(self, body: bytes, ls: int) -> str | None:
        end = ls - 1
        for _ in range(50):
            if end <= 0:
                return self._last_writer
            start = body.rfind(b"\n", 0, end) + 1
            head = body[start:min(end, start + 120)].decode("utf-8", "replace")
            w, _, style = split_prefix(head)
            if style is not None:
                return w
            if head.startswith("$ "):
                return None    # the output of a command the user ran, not of the task above the prompt
            end = start - 1
        return None

    def _line(self, raw: bytes, line_no: int, lit_ids: set[int], body: bytes, ls: int) -> bool:
        """Read one candidate line; whether any of its signatures matched it (kept as a hit or not)."""
        text = clean_line(raw.decode("utf-8", "replace"))
        unprefixed = text
        writer, text, style = split_prefix(text)
        f = self.facts
        if style is not None:
            if writer:
                f.writers.add(writer)
                self._last_writer = writer
        elif (f.writers or self._last_writer) and not _LAUNCHER_LINE.match(text):
            writer = self._writer_before(body, ls)
        if writer is None:
            writer = f.writer
        ts, text = split_timestamp(text, self._year)
        text = text.strip()
        if f.writer is None:   # who wrote the stream is told by its lines only when its name does not say
            f.guess.see(text)
        sm = _SUBJECT.search(text) if ("Name:" in text or "logs" in text or "describe" in text) else None
        if sm:
            self._subject = task_from_filename(sm.group("a") or sm.group("b"))
            f.on_kubernetes = True
        if writer is None:
            writer = self._subject
        seen: set[str] = set()
        matched = False
        for lit_id in lit_ids:
            for sig in self._pf.sigs[lit_id]:
                if sig.code in seen:
                    continue
                seen.add(sig.code)
                m = sig.match(text)
                if not m and style == "srun":   # "3: [allreduce...]" is Horovod's list, not an srun label
                    m = sig.match(unprefixed)
                if not m:
                    continue
                matched = True
                if self._per_sig[sig.code] >= MAX_HITS_PER_SIG:
                    f.dropped += 1
                    continue
                self._per_sig[sig.code] += 1
                if self._per_sig[sig.code] == MAX_HITS_PER_SIG:
                    self._spend(sig.code)
                named = _named(sig, text, m)
                if named is None and sig.role in (Role.SYMPTOM, Role.WAIT):
                    named = _next_line_task(body, ls)   # TF lists the tasks on the lines after the message
                self.hits.append(Hit(sig=sig, stream=f.name, writer=writer, named=named,
                                     line_no=line_no, ts=ts, text=text[:2000]))
        return matched


    def _spend(self, code: str) -> None:
        """``code`` has all the hits it may keep: its literals are spent where no other use is left for them."""
        pf = self._pf
        known = self.facts.writer is not None
        for i in pf.ids_of.get(code, ()):
            if i in pf.subject or (i in pf.identity and not known):
                continue
            if all(self._per_sig[s.code] >= MAX_HITS_PER_SIG for s in pf.sigs[i]):
                self._spent.add(i)


def _next_line_task(body: bytes, ls: int) -> str | None:
    end = body.find(b"\n", ls)
    if end < 0:
        return None
    nxt = body[end + 1:end + 400]
    nl = nxt.find(b"\n")
    line = (nxt if nl < 0 else nxt[:nl]).decode("utf-8", "replace")
    m = _TASK_PATH.search(line)
    if m and line.lstrip(" \t\"'[").startswith("/job:") or (m and "<stderr>:/job:" in line):
        return f"{m.group('job').lower()}:{int(m.group('index'))}"
    return None


def _with_writer(h: Hit, writer: str) -> Hit:
    return Hit(sig=h.sig, stream=h.stream, writer=writer, named=h.named, line_no=h.line_no, ts=h.ts, text=h.text)


def scan_bytes(name: str, data: bytes | Iterable[bytes], writer: str | None = None, *,
               prefilter: "_Prefilter | None" = None) -> tuple[list[Hit], StreamFacts]:
    """Scan a whole stream held in memory (tests, stdin fragments)."""
    s = Scanner(name, writer, prefilter=prefilter)
    if isinstance(data, (bytes, bytearray)):
        s.feed(bytes(data))
    else:
        for chunk in data:
            s.feed(chunk)
    return s.close()
