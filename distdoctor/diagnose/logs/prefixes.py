"""Task prefixes: the one grammar of "which task wrote this line" in a combined stream.

Launchers and schedulers that gather several tasks' output into one stream put a prefix before each line.
:data:`PREFIXES` holds every prefix read here, once: who prints it, a line that shows it, the pattern (after an
optional ISO time stamp, which ``kubectl logs --timestamps`` and ``distdoctor run``'s collector put first) and how
its label names a task. A scheduler's prefixes are declared by the scheduler itself (``cluster/*.py``'s
``log_prefixes``: Open MPI's ``[1,0]<stderr>:``, Slurm's ``0: ``, a TFJob pod's ``[pod/NAME/CONTAINER] ``,
``distdoctor run``'s ``[worker:1] ``) and read from :data:`~distdoctor.cluster.schedulers.SCHEDULERS`; only the
prefixes no scheduler of ours prints (any launcher's ``[name]`` or ``name |``, docker compose's) are declared here.
Two readers use that one table:

* :func:`split_prefix` -- one line at a time (the signature scan, the reasoning over tails): only the prefixes that
  are unambiguous on a single line (``strict``);
* :func:`detect_prefix_style` / :func:`split_combined` -- a whole stream: the *family* of prefixes most of its
  lines carry (``bracket``, ``pipe``, ``slurm``), then every line routed to its task, the looser members of the
  family included (any ``[label]`` or ``label |`` a task map or the label's own words name).

Prefixes nest when one launcher's output is relayed by another (``kubectl logs --prefix`` of an MPIJob launcher
pod prints ``[pod/job-launcher/mpi] [1,3]<stderr>:...``): the innermost one names the process that wrote the line
(rank 3), so it wins. Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ...cluster.schedulers import SCHEDULERS
from .demux import normalise_task, task_from_filename

__all__ = ["Prefix", "PREFIXES", "split_prefix", "detect_prefix_style", "split_combined", "label_task"]

_LEAD = r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\s+)?"
# horovodrun --prefix-output-with-timestamp: time.asctime() glued before its ``[0]<stderr>:`` prefix
_ASCTIME_LEAD = re.compile(r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                           r"[ \d]\d \d\d:\d\d:\d\d \d{4}(?=\[\d)")
JOB_LEVEL_LABELS = {"distdoctor"}   # `distdoctor run`'s own lines in its terminal output: no task wrote them
SAMPLE_LINES = 400


def _rank(label: str) -> str | None:
    return f"rank:{int(label)}"


def _spec(label: str) -> str | None:
    job, _, idx = label.partition(":")
    return normalise_task(job, idx)


def _named(label: str) -> str | None:
    task = task_from_filename(label)
    if task is None and "/" in label:   # kubectl --prefix: [pod/NAME/CONTAINER]
        for part in label.split("/"):
            task = task_from_filename(part)
            if task:
                break
    return task


@dataclass(frozen=True)
class Prefix:
    style: str                       # the name split_prefix reports
    family: str                      # what a whole stream of such lines looks like: bracket, pipe, slurm
    pattern: str                     # after the optional time stamp; group ``label`` names the writer
    task: Callable[[str], str | None]
    printed_by: str
    example: str
    strict: bool = True              # unambiguous on one line; else only where most of a stream's lines carry it
    splits: bool = True              # a stream of such lines is split into one log per task for the structural reader
    rx: re.Pattern[str] = field(init=False, repr=False, compare=False)
    brx: re.Pattern[bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rx", re.compile(self.pattern))
        object.__setattr__(self, "brx", re.compile((_LEAD + self.pattern).encode()))   # a stream's lines: stamp kept


# The prefixes no scheduler of ours prints: PyTorch jobs' rank prefix, any launcher's bracketed name or name and bar,
# docker compose's.
_OTHERS: tuple[Prefix, ...] = (
    # the rank-prefixed lines of PyTorch 2.x jobs as users post them ("[rank3]: Traceback ...", "[rank0]:[E
    # ProcessGroupNCCL.cpp:...]"); torchrun's log-line prefix template ("[${rank}]:" style, TORCHELASTIC_LOG_LINE_
    # PREFIX_TEMPLATE) writes the same shape. The label is the global rank.
    Prefix("torch-rank", "bracket", r"\[rank(?P<label>\d{1,6})\]: ?", _rank,
           "PyTorch's rank-prefixed lines (torchrun's log-line prefix)", "[rank3]: "),
    Prefix("bracket", "bracket", r"\[(?P<label>[^\]\s]{1,200})\] ?", _named,
           "any launcher that brackets a task's name", "[host-a] ", strict=False),
    Prefix("compose", "pipe", r"(?P<label>[A-Za-z][\w.-]{0,80}?)\s+\| ", task_from_filename,
           "docker compose", "worker-1  | "),
    Prefix("pipe", "pipe", r"(?P<label>[A-Za-z][\w.:-]{0,120}?)\s*\| ?", _named,
           "any launcher that writes a task's name and a bar", "host-a | ", strict=False),
)
_NAMES: dict[str, Callable[[str], str | None]] = {"rank": _rank, "task": _spec, "pod": task_from_filename}
_FAMILY_ORDER = ("bracket", "slurm", "pipe")


def _from_schedulers() -> tuple[Prefix, ...]:
    """Each scheduler's own declaration (``cluster/*.py``'s ``log_prefixes``) read as a :class:`Prefix`."""
    out = []
    for s in SCHEDULERS:
        for lp in s.log_prefixes:
            printed_by = lp.option if lp.option else s.title
            out.append(Prefix(lp.style or s.name, lp.family, lp.pattern, _NAMES[lp.names], printed_by, lp.example,
                              strict=lp.strict, splits=lp.splits))
    return tuple(out)


def _table() -> tuple[Prefix, ...]:
    """The schedulers' prefixes, then the others; per family (the first family that reads as many of a stream's
    lines names it), each scheduler's before any looser reading of the same family."""
    ours, others = _from_schedulers(), _OTHERS
    return tuple(sorted(ours + others, key=lambda p: (_FAMILY_ORDER.index(p.family), p in others)))


PREFIXES: tuple[Prefix, ...] = _table()
_STRICT = tuple(p for p in PREFIXES if p.strict)
_INNER = next(p for p in PREFIXES if p.style == "mpi")    # a relayed rank's prefix
_FAMILIES: dict[str, tuple[Prefix, ...]] = {}
for _p in PREFIXES:   # an mpirun stream stays whole (its ranks' lines are read one by one, the launcher's own
    if _p.splits:    # lines beside them): split per rank, the structural reader takes a rank's segfault for the cause
        _FAMILIES[_p.family] = _FAMILIES.get(_p.family, ()) + (_p,)   # of a cascade mpirun reports (dev_034)
_ISO = re.compile(_LEAD)


def label_task(p: Prefix, label: str, task_map: dict[str, str] | None = None) -> str | None:
    """The task a prefix's label names: the task map's entry for it, else the label's own words."""
    if task_map and label in task_map:
        return task_map[label]
    try:
        return p.task(label)
    except ValueError:
        return None


# -- one line ------------------------------------------------------------------------------------------------------

def split_prefix(line: str) -> tuple[str | None, str, str | None]:
    """(writer or None, the line without its prefix, the prefix's style or None), by the strict prefixes."""
    writer, rest, style = _split_prefix(line)
    if style is not None and style != "mpi" and rest[:1] == "[":
        inner, rest2, style2 = _split_prefix(rest)
        if style2 == "mpi":
            return inner, rest2, style2
    return writer, rest, style


def _from_step_daemon(p: Prefix, line: str | bytes, end: int) -> bool:
    """Whether ``line`` is the step daemon's own, relayed through whichever task's stream ``srun --label`` labelled it
    with: it names its task itself when it means one ("task 302: Out Of Memory"), so the label says nothing of the
    writer."""
    return p.family == "slurm" and line[end:end + 10] in ("slurmstepd", b"slurmstepd")


def _split_prefix(line: str) -> tuple[str | None, str, str | None]:
    lead, pos = "", 0
    m = _ISO.match(line)
    if m and m.end():   # kubectl --timestamps / our own collector stamp before a prefix
        lead, pos = line[:m.end()], m.end()
    elif line[:1] in "MTWFS" and (m := _ASCTIME_LEAD.match(line)):
        pos = m.end()   # horovodrun's asctime: dropped with the prefix (no line format starts with it)
    c = line[pos:pos + 1]
    if not c or not (c in "[ " or c.isalnum()):
        return None, line, None
    for p in _STRICT:
        m = p.rx.match(line, pos)
        if m is None:
            continue
        task = label_task(p, m.group("label"))
        if task is not None and _from_step_daemon(p, line, m.end()):
            return None, lead + line[m.end():], p.style
        if task is not None or p.family == "bracket":   # a pod's name that names no task: the prefix still goes
            return task, lead + line[m.end():], p.style
    return None, line, None


# -- a whole stream ------------------------------------------------------------------------------------------------

def _match_family(family: tuple[Prefix, ...], line: bytes, task_map: dict[str, str]):
    """(prefix, match, task) of the first member of ``family`` at the start of ``line`` that names a task, else of the
    first that matched at all (task None), else None."""
    first = None
    for p in family:
        m = p.brx.match(line)
        if m is None:
            continue
        task = label_task(p, m.group("label").decode("utf-8", "replace"), task_map)
        if task is not None:
            return p, m, task
        if first is None:
            first = (p, m, None)
    return first


def detect_prefix_style(sample: bytes, task_map: dict[str, str] | None = None, *, cut: bool = False) -> str | None:
    """Which prefix family most lines of ``sample`` carry, or None when they carry none (``cut``: its last line may
    be cut short)."""
    task_map = task_map or {}
    lines = [ln for ln in sample.split(b"\n")[:SAMPLE_LINES] if ln.strip()]
    if cut and lines:
        lines = lines[:-1]
    if not lines:
        return None
    best, best_n = None, 0
    for name, family in _FAMILIES.items():
        n = 0
        for ln in lines:
            got = _match_family(family, ln, task_map)
            if got is not None and got[2] is not None:
                n += 1
        if n > best_n:
            best, best_n = name, n
    if best is None or best_n < max(2, 0.5 * len(lines)):
        return None
    return best


def split_combined(body: bytes, style: str, task_map: dict[str, str], state: dict) -> dict[str, list[bytes]]:
    """Split complete lines of a combined stream by task (pure; ``state`` carries the last task and unknown labels).

    A line without a prefix belongs to the task of the line before it (tracebacks and wrapped lines are printed
    that way). The prefix is taken off each line (an ISO time stamp before it stays).
    """
    family = _FAMILIES[style]
    out: dict[str, list[bytes]] = {}
    last = state.get("last")
    unknown: set[str] = state.setdefault("unknown", set())
    for line in body.split(b"\n"):
        got = _match_family(family, line, task_map)
        task = None
        if got is not None:
            p, m, task = got
            label = m.group("label").decode("utf-8", "replace")
            if task is None and label in JOB_LEVEL_LABELS:
                continue
            if task is not None and _from_step_daemon(p, line, m.end()):
                continue   # read by the whole stream's scan; no task's output
            if task is None:
                if len(unknown) < 50:
                    unknown.add(label)
            else:
                ts = m.group("ts") or b""
                line = ts + line[m.end():]
                if p is not _INNER:
                    inner = _INNER.brx.match(line, len(ts))
                    if inner:   # a launcher relays its ranks' lines: [pod/job-launcher/mpi] [1,3]<stderr>:...
                        task = _rank(inner.group("label").decode())
                        line = ts + line[inner.end():]
                last = task
        if task is None:
            task = last
        if task is None:
            continue
        out.setdefault(task, []).append(line)
    state["last"] = last
    return out
