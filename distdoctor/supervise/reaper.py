"""No orphans: every process a job starts ends with the job, in any session or process group.

Three layers, from the cheapest:

* each task is its own process group with ``PR_SET_PDEATHSIG`` (:mod:`.launch`): the group ends at the job's end;
* every task's environment carries ``DISTDOCTOR_JOB=<random id>``, which every process it starts inherits (a
  ``setsid`` daemon, a double fork); at the end of each attempt the processes still carrying it are ended
  (SIGTERM, then SIGKILL) and named in the diagnosis. The supervisor is also a child subreaper
  (``PR_SET_CHILD_SUBREAPER``): the job's orphans are re-parented to it, not to init, and those it ends are reaped;
* a watchdog process (:mod:`.watchdog`, its own session) holds a pipe from the supervisor: if the supervisor dies
  without saying ``done`` (SIGKILL), the watchdog ends every marked process and exits.

A process that is not the job's is never touched: the mark is a random id checked in ``/proc/<pid>/environ``, with
the process's start time, so a reused pid is left alone. (A cgroup per job would also catch a process that clears
its environment; this machine's cgroup v1 hierarchy is the memory-limit tests' and is not used for this.)
"""
from __future__ import annotations

import ctypes
import os
import secrets
import subprocess
import sys

from . import watchdog

__all__ = ["JobReaper", "MARK"]

MARK = watchdog.MARK
_PR_SET_CHILD_SUBREAPER = 36


def _subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class JobReaper:
    """The job's mark, the subreaper, the watchdog; ends what the job left behind."""

    def __init__(self) -> None:
        self.job_id = secrets.token_hex(12)
        self.subreaper = _subreaper()
        self.ended: list[str] = []          # "name (pid N)" of every leftover ended, all attempts
        env = {k: v for k, v in os.environ.items() if k != MARK}
        self._dog: subprocess.Popen | None
        try:
            self._dog = subprocess.Popen([sys.executable, "-I", "-S", watchdog.__file__, self.job_id],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True, close_fds=True, env=env)
        except OSError:
            self._dog = None

    def env(self) -> dict[str, str]:
        return {MARK: self.job_id}

    def end_leftovers(self) -> list[str]:
        """End the processes of the job still alive once its tasks have ended; ``["name (pid N)", ...]``."""
        names = watchdog.end_marked(self.job_id, me=os.getpid())
        for pid in names:   # re-parented to us (the subreaper): reap them
            try:
                os.waitpid(pid, os.WNOHANG)
            except OSError:
                pass
        got = [f"{n or '?'} (pid {p})" for p, n in sorted(names.items())]
        self.ended += got
        return got

    def close(self) -> None:
        """The job is over: the watchdog can go."""
        dog, self._dog = self._dog, None
        if dog is None:
            return
        try:
            dog.stdin.write(b"done\n")
            dog.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            dog.wait(5.0)
        except subprocess.TimeoutExpired:
            dog.kill()
            dog.wait()
