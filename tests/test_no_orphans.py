"""No orphans (issue 24 item 5): whatever a task starts -- a child in its process group, a daemon in its own session
-- ends with the job, after a normal run and after a SIGKILL of the supervisor; a process that is not the job's is
never touched. Real processes, plain Python tasks."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
WORKER = str(ROOT / "tests" / "workers" / "leaves_orphans.py")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DISTDOCTOR_JOB"}
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pids(path: Path, timeout: float = 30.0) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists():
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.1)
    raise AssertionError(f"the task never wrote {path}")


def _gone(pids: list[int], within: float) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def _stranger() -> subprocess.Popen:
    """Not the job's: the same command line as the job's daemon, another job's mark."""
    return subprocess.Popen([PY, "-c", "import time; time.sleep(300)"], env=_env(DISTDOCTOR_JOB="another-job"),
                            start_new_session=True)


def test_a_normal_run_ends_what_its_task_left_behind_and_says_so(tmp_path):
    stranger = _stranger()
    try:
        r = subprocess.run([PY, "-m", "distdoctor", "run", "--workers", "1", "--no-live", "--no-report", "--out",
                            str(tmp_path / "b"), "--", PY, WORKER, str(tmp_path / "pids")],
                           capture_output=True, text=True, timeout=120, env=_env())
        assert r.returncode == 0, r.stderr[-2000:]
        task, child, daemon = _pids(tmp_path / "pids")
        assert not _gone([task, child, daemon], within=1.0)          # nothing survives the run ...
        notes = json.loads((tmp_path / "b" / "diagnosis.json").read_text())["notes"]
        note = next(n for n in notes if "outlived its tasks" in n)
        assert f"pid {daemon}" in note                                # ... and what was ended is said
        assert _alive(stranger.pid)                                   # a process that is not the job's is untouched
    finally:
        stranger.kill()
        stranger.wait()


def test_a_sigkilled_supervisor_leaves_nothing_behind(tmp_path):
    stranger = _stranger()
    sup = subprocess.Popen([PY, "-m", "distdoctor", "run", "--workers", "1", "--no-live", "--no-report", "--out",
                            str(tmp_path / "b"), "--", PY, WORKER, str(tmp_path / "pids"), "--stay"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(), start_new_session=True)
    try:
        task, child, daemon = _pids(tmp_path / "pids")
        dogs = [c.pid for c in psutil.Process(sup.pid).children() if "watchdog.py" in " ".join(c.cmdline())]
        assert dogs, "no watchdog beside the supervisor"
        os.kill(sup.pid, signal.SIGKILL)
        sup.wait()
        assert not _gone([task, child, daemon], within=10.0)
        assert not _gone(dogs, within=5.0)                            # the watchdog does not outlive its work
        assert _alive(stranger.pid)
    finally:
        for p in (sup, stranger):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_task_whose_helpers_end_by_themselves_has_nothing_ended(tmp_path):
    r = subprocess.run([PY, "-m", "distdoctor", "run", "--workers", "1", "--no-live", "--no-report", "--out",
                        str(tmp_path / "b"), "--", PY, WORKER, str(tmp_path / "pids"), "--tidy"],
                       capture_output=True, text=True, timeout=120, env=_env())
    assert r.returncode == 0, r.stderr[-2000:]
    notes = json.loads((tmp_path / "b" / "diagnosis.json").read_text())["notes"]
    assert not any("outlived its tasks" in n for n in notes) and "outlived" not in r.stdout
