"""The bundle's files: private, fresh, and one run's alone.

* folders are made 0700 and files 0600 (the user's umask may narrow them, never widen them);
* a file is always written as a *fresh* file: whatever is at its path (a symlink or hard link planted in the
  bundle to make a privileged run overwrite ``/etc/...``) is unlinked first, and the file is created with
  ``O_EXCL | O_NOFOLLOW``, so no link inside the bundle is ever followed;
* :class:`OutLock` holds an exclusive ``flock`` on ``OUT/.lock`` for the life of the run: a second run with the
  same ``--out`` is refused while the first lives, and may reuse a dead run's folder.
"""
from __future__ import annotations

import errno
import fcntl
import os
import threading
from typing import IO

__all__ = ["FILE_MODE", "DIR_MODE", "OutLock", "OutLockError", "ensure_private_dir", "open_fresh", "write_fresh",
           "WriteLosses", "GuardedFile", "DEGRADED_ERRNOS", "error_text"]

FILE_MODE = 0o600
DIR_MODE = 0o700
_FRESH = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


# A write that fails with one of these (a full disk, an I/O error, a quota) costs what it was writing, never the
# run: distdoctor's own records must not stop the job they record.
DEGRADED_ERRNOS = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EROFS})


class WriteLosses:
    """What distdoctor could not record: per file kind, the bytes dropped and the first error. Thread-safe.

    ``on_first(text)`` is called once, at the first loss of the whole run (one line on stderr); :meth:`summary`
    gives one sentence per kind for the diagnosis (rule DD212)."""

    def __init__(self, on_first=None) -> None:
        self._lock = threading.Lock()
        self._by: dict[str, list] = {}     # what -> [bytes dropped, first error text]
        self._on_first = on_first
        self._said = False

    def lost(self, what: str, nbytes: int, why: str) -> None:
        with self._lock:
            rec = self._by.setdefault(what, [0, why])
            rec[0] += max(0, int(nbytes))
            first, self._said = not self._said, True
        if first and self._on_first is not None:
            try:
                self._on_first(f"could not write {what} ({why}): distdoctor goes on supervising, and drops what it "
                               "cannot record; the diagnosis says what was lost")
            except Exception:
                pass

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._by)

    def summary(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(f"{what}: {_size(n)} not recorded ({why})" if n else f"{what}: not recorded ({why})"
                         for what, (n, why) in sorted(self._by.items()))


def _size(n: int) -> str:
    return f"{n} bytes" if n < 10_000 else f"{n / 1e6:.1f} MB"


def error_text(exc: BaseException) -> str:
    """``[Errno 28] No space left on device`` without the path."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"[Errno {exc.errno}] {exc.strerror or os.strerror(exc.errno)}"
    return str(exc) or type(exc).__name__


class GuardedFile:
    """A bundle file written unbuffered (one ``os.write`` per call) that never raises: a failed write is counted in
    ``losses`` under ``what`` and the next write tries again (space may come back). ``open`` failing (no inode left)
    gives a file that drops everything."""

    def __init__(self, path: str, what: str, losses: WriteLosses | None) -> None:
        self.path, self.what, self.losses = path, what, losses
        self._lock = threading.Lock()
        try:
            _unlink(path)
            self._fd: int | None = os.open(path, _FRESH, FILE_MODE)
        except OSError as exc:
            self._fd = None
            self._lose(0, exc)

    def _lose(self, n: int, exc: BaseException) -> None:
        if self.losses is not None:
            self.losses.lost(self.what, n, error_text(exc))

    def write(self, data: bytes | str) -> int:
        """Write all of ``data`` (or drop what does not fit); the bytes written."""
        if isinstance(data, str):
            data = data.encode("utf-8", "replace")
        with self._lock:
            if self._fd is None:
                if self.losses is not None and data:
                    self.losses.lost(self.what, len(data), "the file could not be opened")
                return 0
            view, done = memoryview(data), 0
            while done < len(data):
                try:
                    done += os.write(self._fd, view[done:])
                except InterruptedError:
                    continue
                except OSError as exc:
                    self._lose(len(data) - done, exc)
                    break
            return done

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError as exc:
                self._lose(0, exc)


class OutLockError(OSError):
    """Another live run holds the bundle folder."""


def ensure_private_dir(path: str) -> str:
    """A folder inside the bundle, made 0700; a symlink planted in its place is removed, never followed."""
    if os.path.islink(path):
        os.unlink(path)
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    if os.path.islink(path) or not os.path.isdir(path):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", path)
    return path


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def open_fresh(path: str, mode: str = "w", *, encoding: str | None = "utf-8", errors: str | None = None,
               buffering: int = -1) -> IO:
    """Open a new file at ``path`` for writing, mode 0600: what was there goes (a link's target untouched)."""
    _unlink(path)
    fd = os.open(path, _FRESH, FILE_MODE)
    if "b" in mode:
        return os.fdopen(fd, mode, buffering=buffering)
    return os.fdopen(fd, mode, buffering=buffering, encoding=encoding, errors=errors)


def write_fresh(path: str, data: str | bytes, *, errors: str = "strict") -> None:
    """Write ``data`` to ``path`` so that a reader never sees half a file, through a fresh temporary file."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open_fresh(tmp, "wb" if isinstance(data, bytes) else "w", errors=errors) as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


class OutLock:
    """An exclusive lock on a bundle folder, held until :meth:`release` (or the process's end)."""

    NAME = ".lock"

    def __init__(self, out: str) -> None:
        self.out = out
        self.path = os.path.join(out, self.NAME)
        self.reused = any(os.path.lexists(os.path.join(out, n)) for n in ("events.jsonl", "diagnosis.json"))
        if os.path.islink(self.path):
            os.unlink(self.path)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(self._fd, 32, 0).decode(errors="replace").strip()
            os.close(self._fd)
            self._fd = None
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise OutLockError(exc.errno, f"another distdoctor run{f' (pid {holder})' if holder else ''} "
                                              f"is writing to {out}", out) from None
            raise
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
