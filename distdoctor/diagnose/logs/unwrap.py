"""How a log reached us: the wrappings a copy picks up on its way, removed before the log is scanned.

A log is rarely read where it was written. It is compressed for an attachment (gzip), stored by a cluster's
collector as JSON lines (docker's json-file driver: ``{"log": "...\\n", "stream": "stderr", "time": ...}``; containerd's
``2021-03-04T05:06:07.123456789Z stderr F text`` lines under ``/var/log/pods``; Cloud
Logging / structured logging: ``{"message": ..., "severity": ...}``; ``journalctl -o json``: ``{"MESSAGE": ...}``),
prefixed by syslog/journald (``Mar  4 05:06:07 node3 python[1234]: ``), saved by Windows tools as UTF-16,
coloured by rich/colorlog (ANSI escapes), padded with NULs when a container died mid-write, or quoted in a GitHub
reply (``> `` before every line, or every line in Markdown's inline-code backticks). None of that is the program's
output; all of it hides line-start formats (absl's ``E1121``, Open MPI's ``[1,0]<stderr>:``) from the scanners.

:class:`Unwrapper` undoes these on byte chunks, before any scanner sees them. What a whole stream is wrapped in
is judged once, from its first chunk, so an ordinary log pays only for two ``in`` tests per chunk (an ESC, a
NUL). Line breaks are kept, so line numbers still point into the file as written (JSON lines excepted: there
they count the decoded lines). Wrappings of single lines (a ``**bold**`` line, a glued Keras progress bar) are
removed per line by :func:`~distdoctor.diagnose.logs.formats.clean_line`.
"""
from __future__ import annotations

import codecs
import gzip
import io
import json
import re
import sys
import tarfile
import time
import zipfile
from typing import BinaryIO

__all__ = ["Unwrapper", "open_log", "open_stream", "open_member", "archive_members", "ARCHIVE_EXTS", "unwrap_bytes", "GZIP_MAGIC"]

GZIP_MAGIC = b"\x1f\x8b"
SAMPLE_LINES = 200
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-_]")
# a Markdown / e-mail quote: "> ", "> > ", ">" alone on an empty quoted line
_QUOTE = re.compile(rb"(?m)^[ \t]{0,3}(?:>[ \t]?)+")
# **a whole line in bold** (a poster's emphasis of the error line)
_BOLD = re.compile(rb"(?m)^[ \t]*\*\*(?=[^\s*])(.*?[^\s*])\*\*[ \t]*(?=\r?$)")
# `a whole line as inline code` (a poster's Markdown for each pasted line, without a fenced block)
_CODE = re.compile(rb"(?m)^[ \t]*`(?!`)([^`\n]*?[^\s`])`[ \t]*(?=\r?$)")
# RFC 3164 syslog / journalctl -o short: "Mar  4 05:06:07 node3 python[1234]: "
_SYSLOG = re.compile(rb"(?m)^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]\d) (\d\d):(\d\d):(\d\d) "
                     rb"\S+ [^\s\[:]+(?:\[\d+\])?: ?")
_MONTHS = {m.encode(): i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                                 "Nov", "Dec"), 1)}
# the field that holds the text, in collectors' JSON lines (docker, fluentd/fluent-bit, Cloud Logging, journald,
# Elastic/Logstash, structured loggers)
_JSON_TEXT = ("log", "message", "textPayload", "MESSAGE", "msg", "Message")
_JSON_TIME = ("time", "timestamp", "@timestamp", "ts", "receiveTimestamp")
_JSON_HEAD = re.compile(rb'^\s*\{\s*"')
# containerd/CRI-O (the kubelet's /var/log/pods/*/*/0.log since dockershim): "TIME STREAM F|P text"; P is a part of a
# long line, continued by the next record
_CRI = re.compile(rb"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (?:stdout|stderr) ([FP]) ?")


ARCHIVE_EXTS = {".zip", ".tar", ".tgz"}     # (.tar.gz ends in .gz, a log extension already)
MAX_MEMBERS = 4096


def archive_members(path: str) -> list[tuple[str, int]] | None:
    """The regular files in a zip or tar (plain or gzip-compressed) archive, as (name, size); None when ``path`` is
    no archive. Told by content (zip's local header, tar's ``ustar`` magic), never by name."""
    with open(path, "rb") as fh:
        head = fh.read(4)
        if head[:2] == GZIP_MAGIC:
            fh.seek(0)
            try:
                with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                    head = gz.read(512)
            except (OSError, EOFError):
                return None
        else:
            head += fh.read(508)
    if head[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(path) as zf:
            return [(i.filename, i.file_size) for i in zf.infolist()[:MAX_MEMBERS]
                    if not i.is_dir() and not _hidden(i.filename)]
    if len(head) >= 262 and head[257:262] == b"ustar":
        with tarfile.open(path, "r:*") as tf:
            out = []
            for m in tf:
                if m.isfile() and not _hidden(m.name):
                    out.append((m.name, m.size))
                    if len(out) >= MAX_MEMBERS:
                        break
            return out
    return None


def _hidden(name: str) -> bool:
    return any(part.startswith(".") for part in name.split("/") if part not in ("", "."))


def open_member(path: str, member: str) -> BinaryIO:
    """One file inside a zip or tar archive, as a byte stream (gzip inside is told by its magic bytes too)."""
    with open(path, "rb") as fh:
        is_zip = fh.read(4) == b"PK\x03\x04"
    if is_zip:
        owner = zipfile.ZipFile(path)
        raw = owner.open(member)
    else:
        owner = tarfile.open(path, "r:*")
        raw = owner.extractfile(member)
        if raw is None:
            owner.close()
            raise KeyError(f"{member} is not a regular file")
    return open_stream(raw, owner)  # type: ignore[arg-type]


def open_log(path: str) -> BinaryIO:
    """Open a log file, decompressing it when its first bytes say gzip (whatever its name says)."""
    fh = open(path, "rb")
    try:
        head = fh.read(2)
        fh.seek(0)
    except OSError:
        fh.close()
        raise
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


class _Replay(io.RawIOBase):
    """A stream that cannot seek (a pipe), with the bytes already read from it put back in front."""

    def __init__(self, head: bytes, rest: BinaryIO, owner=None) -> None:
        super().__init__()
        self._head, self._rest, self._owner = head, rest, owner

    def close(self) -> None:
        if not self.closed:
            for thing in (self._rest, self._owner):
                if thing is not None and thing is not sys.stdin.buffer:
                    try:
                        thing.close()
                    except OSError:
                        pass
        super().close()

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._head:   # the put-back bytes and, in the same read, what follows them (readers sniff the first chunk)
            out = self._head if n is None or n < 0 else self._head[:n]
            self._head = self._head[len(out):]
            want = -1 if n is None or n < 0 else n - len(out)
            if want:
                out += self._rest.read(want) or b""
            return out
        return self._rest.read(n) if n is not None else self._rest.read()

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)

    def readline(self, limit: int = -1) -> bytes:
        if self._head:
            nl = self._head.find(b"\n")
            if nl >= 0:
                return self.read(nl + 1 if limit < 0 else min(nl + 1, limit))
            return self.read(len(self._head)) + self._rest.readline(limit)
        return self._rest.readline(limit)


def open_stream(fh: BinaryIO, owner=None) -> BinaryIO:
    """A pipe (standard input) read as :func:`open_log` reads a file: gzip is told by its first bytes.

    Closing the result closes ``fh`` (never standard input) and ``owner`` (the archive ``fh`` comes from)."""
    head = fh.read(2)
    while len(head) < 2:
        more = fh.read(2 - len(head))
        if not more:
            break
        head += more
    stream = _Replay(head, fh, owner)
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    return stream  # type: ignore[return-value]


def _share(lines: list[bytes], pred) -> float:
    lines = [ln for ln in lines if ln.strip()]
    return sum(1 for ln in lines if pred(ln)) / len(lines) if lines else 0.0


class Unwrapper:
    """Feed byte chunks of one stream (each ending at a line end, except perhaps the last); get the program's text.

    ``year`` dates syslog lines, which carry none.
    """

    def __init__(self, year: int | None = None) -> None:
        self.year = year if year is not None else time.gmtime().tm_year
        self._first = True
        self._decoder = None              # UTF-16 text
        self._json = False
        self._json_open = False           # docker split a long line: the next record continues it
        self._quote = self._bold = self._code = self._syslog = False
        self._cri = self._cri_open = False
        self._carry = b""
        self.shapes: list[str] = []       # what was removed, for a note

    def feed(self, data: bytes) -> bytes:
        if not data:
            return data
        if self._first:
            data = self._start(data)
        elif self._decoder is not None:
            data = self._decoder.decode(data).encode("utf-8", "replace")
        if b"\x00" in data:               # a crashed writer's pre-allocated tail, or UTF-16 without a BOM
            data = data.replace(b"\x00", b"")
        if b"\x1b" in data:
            data = _ANSI.sub(b"", data)
        if self._json:
            data = self._carry + data
            end = data.rfind(b"\n") + 1
            data, self._carry = data[:end], data[end:]
            data = self._from_json(data)
        elif self._cri:
            data = self._from_cri(data)
        return self._lines(data)

    def close(self) -> bytes:
        rest, self._carry = self._carry, b""
        if self._decoder is not None:
            rest += self._decoder.decode(b"", final=True).encode("utf-8", "replace")
        if not rest:
            return b""
        if self._json:
            rest = self._from_json(rest + b"\n")
        elif self._cri:
            rest = self._from_cri(rest)
        return self._lines(rest)

    # -- judging the stream ----------------------------------------------------------------------------------------
    def _start(self, data: bytes) -> bytes:
        self._first = False
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            self._decoder = codecs.getincrementaldecoder("utf-16")("replace")
            data = self._decoder.decode(data).encode("utf-8", "replace")
            self.shapes.append("UTF-16")
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        lines = data[:256 << 10].split(b"\n")[:SAMPLE_LINES]
        if _share(lines, lambda ln: _JSON_HEAD.match(ln) is not None) >= 0.5 and self._json_sample(lines):
            self._json = True
            self.shapes.append("JSON lines")
            lines = self._from_json(b"\n".join(lines[:-1]) + b"\n").split(b"\n")
            self._json_open = False
        if not self._json and _share(lines, lambda ln: _CRI.match(ln) is not None) >= 0.5:
            self._cri = True
            self.shapes.append("CRI")
            lines = self._from_cri(b"\n".join(lines[:-1]) + b"\n").split(b"\n")
            self._cri_open = False
        if _share(lines, lambda ln: ln.lstrip(b" \t")[:1] == b">") >= 0.6:
            self._quote = True
            self.shapes.append("quoted")
            lines = [_QUOTE.sub(b"", ln) for ln in lines]
        if _share(lines, lambda ln: _BOLD.match(ln) is not None) >= 0.6:
            self._bold = True
        if _share(lines, lambda ln: _CODE.match(ln) is not None) >= 0.6:
            self._code = True
            self.shapes.append("Markdown inline code")
        if _share(lines, lambda ln: _SYSLOG.match(ln) is not None) >= 0.5:
            self._syslog = True
            self.shapes.append("syslog")
        return data

    def _json_sample(self, lines: list[bytes]) -> bool:
        for ln in lines:
            if ln.strip():
                try:
                    obj = json.loads(ln)
                except ValueError:
                    continue
                return isinstance(obj, dict) and _text_of(obj) is not None
        return False

    # -- undoing ---------------------------------------------------------------------------------------------------
    def _lines(self, data: bytes) -> bytes:
        if self._quote:
            data = _QUOTE.sub(b"", data)
        if self._bold:
            data = _BOLD.sub(rb"\1", data)
        if self._code:
            data = _CODE.sub(rb"\1", data)
        if self._syslog:
            data = _SYSLOG.sub(self._iso, data)
        return data

    def _iso(self, m: re.Match) -> bytes:
        mon, day, h, mi, s = m.groups()
        return b"%04d-%02d-%02dT%s:%s:%sZ " % (self.year, _MONTHS[mon], int(day), h, mi, s)

    def _from_json(self, data: bytes) -> bytes:
        out: list[str] = []
        for ln in data.split(b"\n"):
            if not ln.strip():
                continue
            try:
                obj = json.loads(ln)
            except ValueError:
                obj = None
            text = _text_of(obj) if isinstance(obj, dict) else None
            if text is None:             # not a record: keep the line as it is
                out.append(ln.decode("utf-8", "replace") + "\n")
                self._json_open = False
                continue
            stamp = None if self._json_open else _time_of(obj)
            if stamp and text.strip():
                text = stamp + " " + text
            # docker ends each record with the line's "\n"; a record without one continues on the next record
            self._json_open = obj.get("log") is not None and not text.endswith("\n")
            out.append(text if text.endswith("\n") or self._json_open else text + "\n")
        return "".join(out).encode("utf-8", "replace")


    def _from_cri(self, data: bytes) -> bytes:
        out: list[bytes] = []
        for ln in data.split(b"\n"):
            m = _CRI.match(ln)
            if m is None:
                if ln:
                    out.append(ln + b"\n")
                continue
            text = ln[m.end():]
            head = b"" if self._cri_open else m.group(1) + b" "
            self._cri_open = m.group(2) == b"P"
            out.append(head + text + (b"" if self._cri_open else b"\n"))
        return b"".join(out)


def _text_of(obj: dict) -> str | None:
    for key in _JSON_TEXT:
        v = obj.get(key)
        if isinstance(v, str):
            return v
    payload = obj.get("jsonPayload")
    if isinstance(payload, dict):
        return _text_of(payload)
    return None


def _time_of(obj: dict) -> str | None:
    """The record's time as an RFC 3339 prefix (which the line scanners read as a collector's stamp)."""
    for key in _JSON_TIME:
        v = obj.get(key)
        if isinstance(v, str) and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)$", v):
            return v
    v = obj.get("__REALTIME_TIMESTAMP")      # journald: microseconds since the epoch
    if isinstance(v, str) and v.isdigit():
        secs = int(v) / 1e6
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + ".%06dZ" % (int(v) % 1_000_000)
    return None


def unwrap_bytes(data: bytes, year: int | None = None) -> bytes:
    """A whole buffer unwrapped (tests, small inputs)."""
    u = Unwrapper(year)
    return u.feed(data) + u.close()

