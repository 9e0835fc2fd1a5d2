"""Find a job's logs and read them: run bundles, folders, files, ``-`` (stdin).

This is the I/O edge of ``distdoctor diagnose``; everything it reads goes
through :class:`~distdoctor.diagnose.logs.taskscan.TaskScanner` in byte chunks, so
no log is ever held in memory whole (a 2 GB log and 256 tasks are normal).

Which task wrote a file comes from its name (``worker-0.log``, ``worker0.txt``,
``myjob-worker-1.log``, ``chief.log``, ``ps-0.out``, ``evaluator.log``, Slurm's
``slurm-1234_0.out``, kubectl's ``job-worker-1``) or from ``--task-map``. One
stream that interleaves tasks (``distdoctor run``'s terminal, docker compose,
Slurm ``--label``, ``kubectl logs --prefix``) is split by its line prefixes:
``[worker:1] ...``, ``worker-1 | ...``, ``1: ...``, ``[pod/job-worker-1/tf] ...``.
Names that cannot be mapped are reported, never guessed.

Folders are read with their sub-folders (``logs/worker-1/stderr``: a file whose name says nothing takes the task
from the nearest folder that names one), and ``.zip`` / ``.tar(.gz)`` archives as folders. Before scanning, every
stream is unwrapped (:mod:`~distdoctor.diagnose.logs.unwrap`): gzip and archives are told by their first bytes,
collector JSON lines, containerd records, syslog prefixes, Markdown quotes, UTF-16, ANSI colours and NUL runs are
removed, so the scanners see the program's own lines.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator, Sequence

from ..errors import InputError
from ..model import Diagnosis
from .logs import prescan
from .logs.prefixes import detect_prefix_style, split_combined
from .logs.taskscan import TaskScan, TaskScanner
from .logs.unwrap import ARCHIVE_EXTS, Unwrapper, archive_members, open_log, open_member, open_stream, unwrap_bytes

__all__ = ["LogSource", "Discovery", "discover", "parse_task_map", "task_from_name", "scan_sources",
           "CHUNK", "detect_prefix_style", "split_combined", "scan_all", "source_chunks"]

CHUNK = 4 << 20                 # bytes read at a time
SEGMENT = 512 << 10             # bytes scanned at a time: the prefilter drops the patterns a log has spent between
PARALLEL_MIN_BYTES = 48 << 20   # below this a process pool costs more than it saves
MAX_FILES = 4096
_LOG_EXTS = {"", ".log", ".txt", ".out", ".err", ".stdout", ".stderr", ".gz", ".logs"}
_SKIP_NAMES = {"diagnosis.json", "expected.json", "samples.jsonl", "events.jsonl", "report.html"}
_TASK_SPEC = re.compile(r"^([a-z_][a-z0-9_]*):(\d+)$", re.I)


@dataclass(frozen=True)
class LogSource:
    """One input stream. ``task`` is None for a combined stream (tasks come from line prefixes)."""

    path: str                 # file path, or "-" for standard input
    name: str                 # the name a person recognises (relative to the PATH given)
    task: str | None = None
    combined: bool = False
    size: int = 0
    member: str | None = None # the file inside a .zip / .tar(.gz) archive at ``path``


@dataclass(frozen=True)
class Discovery:
    """What was found under the PATHs: the sources and what could not be used."""

    sources: tuple[LogSource, ...]
    unmapped: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    bundle: str | None = None
    notes: tuple[str, ...] = ()
    task_map: dict[str, str] = field(default_factory=dict)


def parse_task_map(text: str | Sequence[str] | None) -> dict[str, str]:
    """``NAME=job:index,...`` (repeatable) into a dict; raises :class:`InputError` on bad entries."""
    if not text:
        return {}
    items = [text] if isinstance(text, str) else list(text)
    out: dict[str, str] = {}
    for item in items:
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            name, eq, task = part.rpartition("=")
            if not eq or not name.strip():
                raise InputError(f"--task-map entry {part!r} is not NAME=job:index (for example worker0.txt=worker:0)")
            task = task.strip()
            if not _TASK_SPEC.match(task):
                raise InputError(f"--task-map entry {part!r}: {task!r} is not job:index (for example worker:1, chief:0, ps:0)")
            out[name.strip()] = task.lower()
    return out


def _stem(name: str) -> str:
    from .logs.demux import file_stem
    return file_stem(name)


def task_from_name(name: str) -> str | None:
    """The task a file or prefix name stands for (``myjob-worker-1.log`` -> ``worker:1``), or None."""
    from .logs.demux import task_from_filename
    return task_from_filename(name)


def _mapped(name: str, task_map: dict[str, str]) -> str | None:
    for key in (name, os.path.basename(name), _stem(name)):
        if key in task_map:
            return task_map[key]
    task = task_from_name(name)
    if task is None:   # worker-1/stderr, pods/default_job-worker-1_0a9f/tensorflow/0.log: the nearest folder says
        for part in reversed(name.replace(os.sep, "/").split("/")[:-1]):
            if part in task_map:
                return task_map[part]
            task = task_from_name(part)
            if task is not None:
                break
    return task


# -- discovery ----------------------------------------------------------------

def _is_bundle(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "diagnosis.json")) and os.path.isdir(os.path.join(path, "logs"))


MAX_DEPTH = 4   # logs/<job>/<pod>/<container>/0.log (the kubelet's /var/log/pods layout) is four deep


def _folder_files(folder: str, depth: int = 0) -> tuple[list[str], list[str]]:
    """Log files in ``folder`` and its sub-folders (per-task folders: ``worker-0/stderr``), and the names skipped."""
    files, skipped = [], []
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise InputError(f"cannot list {folder}: {exc.strerror or exc}") from None
    for n in names:
        p = os.path.join(folder, n)
        if n.startswith("."):
            continue
        if os.path.isdir(p) and not os.path.islink(p):
            if depth < MAX_DEPTH and not (depth == 0 and n == "logs"):
                sub, sub_skipped = _folder_files(p, depth + 1)
                files += sub
                skipped += [os.path.join(n, x) for x in sub_skipped]
            continue
        if not os.path.isfile(p):
            continue
        ext = os.path.splitext(n)[1].lower()
        if n in _SKIP_NAMES or not (ext in _LOG_EXTS or ext in ARCHIVE_EXTS or re.fullmatch(r"\.\d+", ext)):
            skipped.append(n)
            continue
        files.append(p)
    return files, skipped


def _bundle_note(folder: str) -> str | None:
    try:
        with open(os.path.join(folder, "diagnosis.json"), "rb") as fh:
            d = Diagnosis.from_json(json.loads(fh.read(4 << 20)))
        return (f"this is a `distdoctor run` bundle; the run itself concluded: status {d.status.value}"
                + (f", {d.root_cause.category.value} on {d.root_cause.culprit or 'no single task'}" if d.root_cause else "")
                + " (the verdict below comes from the logs and the run's records of its processes: exit codes, "
                "signals, pids, times)")
    except (OSError, ValueError):
        return "this is a `distdoctor run` bundle; its diagnosis.json could not be read"


def discover(paths: Sequence[str], task_map: dict[str, str] | None = None) -> Discovery:
    """Turn the command line's PATHs into log sources. Raises :class:`InputError` when nothing usable is there."""
    task_map = dict(task_map or {})
    if not paths:
        raise InputError("no PATH given: name a run bundle, a folder of task logs, log files, or - for standard input")
    files: list[tuple[str, str]] = []   # (path, display name)
    skipped: list[str] = []
    notes: list[str] = []
    bundle = None
    stdin = False
    for p in paths:
        if p == "-":
            stdin = True
            continue
        if os.path.isdir(p):
            folder = p
            if _is_bundle(p):
                bundle = p
                note = _bundle_note(p)
                if note:
                    notes.append(note)
                folder = os.path.join(p, "logs")
            found, skip = _folder_files(folder)
            if not found and os.path.isdir(os.path.join(folder, "logs")):
                folder = os.path.join(folder, "logs")
                found, skip = _folder_files(folder)
            skipped += skip
            files += [(f, os.path.relpath(f, p) if folder == p else os.path.join(os.path.basename(folder),
                                                                                  os.path.relpath(f, folder)))
                      for f in found]
            if not found:
                raise InputError(f"{p}: no log files in this folder (expected files such as worker-0.log, chief.log, "
                                 f"slurm-1234_0.out{'; found only ' + ', '.join(skip[:5]) if skip else ''})")
        elif os.path.isfile(p):
            files.append((p, os.path.basename(p)))
        elif os.path.exists(p):
            raise InputError(f"{p}: not a regular file or folder")
        else:
            raise InputError(f"{p}: no such file or folder")
    if len(files) > MAX_FILES:
        raise InputError(f"{len(files)} log files: more than {MAX_FILES}; point at one job's logs")
    sources: list[LogSource] = []
    unmapped: list[str] = []
    entries: list[tuple[str, str, str | None, int]] = []   # (path, name, archive member, size)
    for path, name in files:
        try:
            size = os.path.getsize(path)
        except OSError:
            notes.append(f"{name} vanished before it could be read")
            continue
        try:
            members = archive_members(path)
        except (OSError, EOFError, ValueError, zipfile.BadZipFile, tarfile.TarError) as exc:
            notes.append(f"{name}: the archive could not be read ({exc}); nothing in it is used")
            continue
        if members is None:
            entries.append((path, name, None, size))
            continue
        for member, msize in members:
            if os.path.basename(member) in _SKIP_NAMES:
                continue
            entries.append((path, f"{name}/{member}", member, msize))
    if len(entries) > MAX_FILES:
        raise InputError(f"{len(entries)} log files: more than {MAX_FILES}; point at one job's logs")
    for path, name, member, size in entries:
        task = _mapped(name, task_map)
        if task is None:
            style = _sniff_style(path, task_map, member)
            if style:
                sources.append(LogSource(path=path, name=name, combined=True, size=size, member=member))
            else:   # read anyway: the writer may be told by the content, or stays unknown
                unmapped.append(name)
                sources.append(LogSource(path=path, name=name, size=size, member=member))
            continue
        sources.append(LogSource(path=path, name=name, task=task, size=size, member=member))
    if stdin:
        if "-" in task_map:
            sources.append(LogSource(path="-", name="<stdin>", task=task_map["-"]))
        else:
            sources.append(LogSource(path="-", name="<stdin>", combined=True))
    if unmapped:
        hint = ", ".join(f"{u}=worker:N" for u in unmapped[:3])
        notes.append(f"the names of {_names(unmapped)} do not say which task wrote them; read from their content "
                     f"(name them with --task-map {hint} if you know)")
    if not sources:
        raise InputError("no logs found in " + ", ".join(paths))
    return Discovery(sources=tuple(sources), unmapped=tuple(unmapped), skipped=tuple(skipped), bundle=bundle,
                     notes=tuple(notes), task_map=task_map)


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:6])
    return shown + (f" and {len(items) - 6} more" if len(items) > 6 else "")


def _sniff_style(path: str, task_map: dict[str, str], member: str | None = None) -> str | None:
    try:
        with (open_member(path, member) if member else _open(path)) as fh:
            return detect_prefix_style(unwrap_bytes(fh.read(256 << 10), _year_of(path)), task_map)
    except (OSError, EOFError, gzip.BadGzipFile, zipfile.BadZipFile, tarfile.TarError):
        return None


# -- reading --------------------------------------------------------------------

def _open(path: str) -> BinaryIO:
    return open_log(path)   # gzip by its magic bytes, whatever the name says


def _year_of(path: str) -> int:
    try:
        return time.gmtime(os.stat(path).st_mtime).tm_year
    except OSError:
        return time.gmtime().tm_year


def source_chunks(src: LogSource) -> Iterator[bytes]:
    """The text of one source (a file, an archive member), unwrapped, in pieces that end at a line end. Raises
    OSError (and the archive and gzip errors) when it cannot be read."""
    fh = open_member(src.path, src.member) if src.member else _open(src.path)
    try:
        yield from _unwrapped(_read_chunks(fh), Unwrapper(_year_of(src.path)))
    finally:
        fh.close()


@dataclass(frozen=True)
class _FileResult:
    scans: tuple[TaskScan, ...]
    notes: tuple[str, ...] = ()
    hits: tuple = ()                 # signature hits (diagnose.logs.scan.Hit)
    facts: object | None = None      # diagnose.logs.scan.StreamFacts


class BinaryFlood(EOFError):
    """A stream that has turned into binary data (``/dev/zero``, a core dump): reading stops."""


# control bytes no log holds (NUL and the like; tab, newline, \r, backspace and ESC are a log's own)
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\x08\x0b\x0c\x1b")
BINARY_CHUNKS = 4   # chunks in a row (16 MiB) with more than 1 % control bytes: the rest is not a log


def _read_chunks(fh: BinaryIO) -> Iterable[bytes]:
    """``fh`` in chunks that end at a line end; a stream that turns binary for :data:`BINARY_CHUNKS` chunks in a row
    (``diagnose - < /dev/zero`` would never end) stops with :class:`BinaryFlood`."""
    binary = 0
    while True:
        data = fh.read(CHUNK)
        if not data:
            return
        binary = binary + 1 if prescan.more_than(data, _CONTROL_BYTES, len(data) // 100) else 0
        if binary >= BINARY_CHUNKS:
            raise BinaryFlood(f"{BINARY_CHUNKS * CHUNK >> 20} MiB of binary data in a row (NUL or control bytes): "
                              "not a log")
        if not data.endswith(b"\n"):
            rest = fh.readline(1 << 20)   # finish the line: the scanner then needs no carry
            if rest:
                data += rest
        yield data


def _segments(data: bytes) -> Iterable[bytes]:
    """``data`` in pieces of about SEGMENT bytes, each ending at a line end (the last one as ``data`` does)."""
    if len(data) <= SEGMENT + (SEGMENT >> 1):
        yield data
        return
    pos = 0
    while pos < len(data):
        cut = data.find(b"\n", pos + SEGMENT)
        if cut < 0 or len(data) - cut < (SEGMENT >> 1):
            yield data[pos:] if pos else data
            return
        yield data[pos:cut + 1]
        pos = cut + 1


def _unwrapped(chunks: Iterable[bytes], unwrap: Unwrapper) -> Iterable[bytes]:
    for data in chunks:
        data = unwrap.feed(data)
        if data:
            yield data
    rest = unwrap.close()
    if rest:
        yield rest


def _scan_file(src: LogSource, task_map: dict[str, str]) -> _FileResult:
    """Scan one source (a per-task file or a combined stream). Never raises for I/O trouble."""
    notes: list[str] = []
    year = _year_of(src.path) if src.path != "-" else time.gmtime().tm_year
    from .logs.scan import Scanner
    scanners: dict[str, TaskScanner] = {}
    single = None if (src.combined or src.task is None) else TaskScanner(src.task, path=src.path, year=year)
    legacy = src.combined or src.task is not None
    sig = Scanner(src.name, src.task, year=year)
    state: dict = {}
    style = None
    pending = b""
    try:
        if src.path == "-":
            fh = open_stream(sys.stdin.buffer)
        else:
            fh = open_member(src.path, src.member) if src.member else _open(src.path)
    except FileNotFoundError:
        return _FileResult((), (f"{src.name} vanished before it could be read",))
    except (KeyError, zipfile.BadZipFile, tarfile.TarError) as exc:
        return _FileResult((), (f"{src.name} could not be read from its archive: {exc}",))
    except OSError as exc:
        return _FileResult((), (f"{src.name} could not be opened: {exc.strerror or exc}",))
    unwrap = Unwrapper(year)
    try:
        joint = prescan.get() if single is not None else None
        shapes = prescan.Shapes()
        for data in _unwrapped(_read_chunks(fh), unwrap):
            if legacy and single is not None:
                for seg in _segments(data):
                    if joint is not None and not single.binary:
                        starts, cands, markers = joint.scan(seg, sig.spent(), frozenset(single.spent), shapes)
                        sig.feed(seg, starts)
                        single.feed(seg, cands, markers)
                    else:
                        sig.feed(seg)
                        single.feed(seg)
                if single.binary:
                    legacy = False
                continue
            sig.feed(data)
            if not legacy:
                continue
            if style is None:
                style = detect_prefix_style(data, task_map, cut=len(data) >= CHUNK)
                if style is None:   # no task prefixes: the signature scanner reads it alone
                    legacy = False
                    continue
            data = pending + data if pending else data
            end = data.rfind(b"\n")
            if end < 0:
                pending = data[-CHUNK:]
                continue
            body, pending = data[:end], data[end + 1:][-CHUNK:]
            _route(split_combined(body, style, task_map, state), scanners, src, year)
    except (OSError, EOFError, gzip.BadGzipFile, zipfile.BadZipFile, tarfile.TarError) as exc:
        what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        notes.append(f"{src.name}: reading stopped early ({what}); what was read before is used")
    finally:
        if src.path != "-":
            try:
                fh.close()
            except OSError:
                pass
    if pending and style is not None:
        _route(split_combined(pending, style, task_map, state), scanners, src, year)
    hits, facts = sig.close()
    if facts.bytes == 0 and not notes:
        notes.append(f"{src.name} is empty: nothing was read")
    if unwrap.shapes:   # say how it was read: line numbers of JSON lines count the decoded lines
        notes.append(f"{src.name} was read as {' and '.join(unwrap.shapes)}: its wrapping was removed before reading")
    if state.get("unknown"):
        labels = sorted(state["unknown"])
        notes.append(f"{src.name}: lines from {_names(labels)} could not be tied to a task; "
                     f"name them with --task-map {labels[0]}=worker:N")
    if single is not None:
        single.count_withheld(shapes.withheld)
        return _FileResult((single.close(),), tuple(notes), tuple(hits), facts)
    return _FileResult(tuple(sc.close() for sc in scanners.values()), tuple(notes), tuple(hits), facts)


def _route(parts: dict[str, list[bytes]], scanners: dict[str, TaskScanner], src: LogSource, year: int) -> None:
    for task, lines in parts.items():
        sc = scanners.get(task)
        if sc is None:
            sc = scanners[task] = TaskScanner(task, path=src.path, year=year)
        sc.feed(b"\n".join(lines) + b"\n")


def _scan_job(args: tuple[LogSource, dict[str, str]]) -> _FileResult:
    return _scan_file(*args)


def scan_sources(disc: Discovery, jobs: int | None = None) -> tuple[list[TaskScan], list[str]]:
    """Scan every source (in a pool of ``jobs`` processes when worth it); return the scans and notes."""
    scans, notes, _, _ = scan_all(disc, jobs)
    return scans, notes


def scan_all(disc: Discovery, jobs: int | None = None) -> tuple[list[TaskScan], list[str], list, list]:
    """Scan every source once: the task scans, notes, signature hits and per-stream facts."""
    sources = list(disc.sources)
    if jobs is None:
        jobs = min(2, os.cpu_count() or 1)
    files = [s for s in sources if s.path != "-"]
    total = sum(s.size for s in files)
    results: list[_FileResult] = []
    if jobs > 1 and len(files) >= 2 and total >= PARALLEL_MIN_BYTES:
        prescan.get()   # compiled once here, before the pool's processes fork, instead of once in each of them
        order = sorted(files, key=lambda s: -s.size)   # largest first: the pool stays balanced
        try:
            with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
                by_path = dict(zip((s.path for s in order),
                                   pool.map(_scan_job, [(s, disc.task_map) for s in order], chunksize=1)))
            results = [by_path[s.path] for s in files]
        except (OSError, RuntimeError):   # no processes to be had here: read them one by one
            results = [_scan_file(s, disc.task_map) for s in files]
    else:
        results = [_scan_file(s, disc.task_map) for s in files]
    results += [_scan_file(s, disc.task_map) for s in sources if s.path == "-"]
    scans: list[TaskScan] = []
    notes: list[str] = []
    hits: list = []
    facts: list = []
    for r in results:
        scans.extend(r.scans)
        notes.extend(r.notes)
        hits.extend(r.hits)
        if r.facts is not None:
            facts.append(r.facts)
    return scans, notes, hits, facts

