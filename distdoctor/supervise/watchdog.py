"""The job's watchdog: a tiny process that ends every process of the job when its supervisor dies without saying so.

``distdoctor run`` starts it (:class:`.reaper.JobReaper`) in its own session with a pipe on its standard input, and
marks every task's environment with ``DISTDOCTOR_JOB=<random id>``; every process a task starts inherits the mark,
whatever session or process group it moves to. When the supervisor ends normally it writes ``done`` and the watchdog
exits. When the pipe closes without it -- the supervisor was SIGKILLed or crashed -- the watchdog sends SIGTERM, then
SIGKILL, to every process that carries the mark (checked in ``/proc/<pid>/environ``, its start time read with it, so
a reused pid is never touched) and exits. Standard library only; run as a script, so it imports nothing else.
"""
from __future__ import annotations

import os
import signal
import sys
import time

MARK = "DISTDOCTOR_JOB"
GRACE_S = 2.0


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def marked(job: str, me: int | None = None) -> dict[int, str]:
    """{pid: start time} of the processes whose environment carries ``DISTDOCTOR_JOB=job``."""
    needle = f"{MARK}={job}".encode() + b"\0"
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = fh.read() + b"\0"
        except OSError:
            continue
        if (b"\0" + needle) in (b"\0" + env):
            started = _start_time(pid)
            if started is not None:
                out[pid] = started
    return out


def end_marked(job: str, grace: float = GRACE_S, me: int | None = None) -> dict[int, str]:
    """SIGTERM, then after ``grace`` SIGKILL, every marked process (the same process: its start time unchanged).
    Returns {pid: command name} of those signalled."""
    found = marked(job, me)
    names = {}
    for pid in found:
        try:
            with open(f"/proc/{pid}/comm") as fh:
                names[pid] = fh.read().strip()
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    end = time.monotonic() + grace
    while time.monotonic() < end and any(_start_time(p) == s for p, s in found.items()):
        time.sleep(0.05)
    for pid, started in found.items():
        if _start_time(pid) == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return names


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1]:
        print("usage: watchdog.py JOB_ID (standard input: the supervisor's pipe)", file=sys.stderr)
        return 2
    job = argv[1]
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # a Ctrl-C meant for the job is the supervisor's to handle
    said = b""
    try:
        while True:
            chunk = os.read(0, 64)
            if not chunk:
                break
            said += chunk
            if b"done" in said:
                return 0
    except OSError:
        pass
    end_marked(job, me=os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
