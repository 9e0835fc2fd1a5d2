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
from typing import IO

__all__ = ["FILE_MODE", "DIR_MODE", "OutLock", "OutLockError", "ensure_private_dir", "open_fresh", "write_fresh"]

FILE_MODE = 0o600
DIR_MODE = 0o700
_FRESH = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


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
