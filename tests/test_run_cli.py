"""``distdoctor run`` edge cases that need no TensorFlow: bad input, signals, orphans."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

PY = sys.executable


def dd(*args, timeout=60, **kw):
    return subprocess.run([PY, "-m", "distdoctor", *args], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.mark.parametrize("args,needle", [
    (["run", "--workers", "0", "--", PY, "-c", "pass"], "--workers"),
    (["run", "--", "no-such-command-xyz"], "command not found"),
    (["run", "--", PY, "/nonexistent/train.py"], "script not found"),
    (["run"], "no command"),
    (["run", "--workers", "two", "--", "true"], "invalid int"),
    (["run", "--out", "/proc/forbidden", "--", PY, "-c", "pass"], "cannot write"),
])
def test_bad_input_is_one_line_exit_2(args, needle, tmp_path):
    r = dd(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_script_that_exits_at_once(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import sys\nprint('missing --data argument')\nsys.exit(2)\n")
    r = dd("run", "--out", str(tmp_path / "b"), "--no-report", "--", PY, str(script), cwd=tmp_path)
    assert r.returncode == 2
    assert "exited at once" in r.stderr and "missing --data argument" in r.stderr
    assert "Traceback" not in r.stderr
    # nothing the user ran is lost: logs and diagnosis are written
    assert (tmp_path / "b" / "logs" / "worker-0.log").read_text().strip()
    assert json.loads((tmp_path / "b" / "diagnosis.json").read_text())["status"] == "failed"


def test_default_out_is_timestamped_under_distdoctor_runs(tmp_path):
    r = dd("run", "--workers", "1", "--no-report", "--", PY, "-c", "import time; time.sleep(3.5); print('hi')", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = list((tmp_path / "distdoctor-runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "logs" / "worker-0.log").read_text().endswith("hi\n")
    assert "[worker:0] hi" in r.stdout


SLEEPER = "import os, sys, time\nprint('pid', os.getpid(), flush=True)\ntime.sleep(600)\n"


def _pids_from_logs(bundle: Path, n: int, timeout=20) -> list[int]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        pids = []
        for log in sorted((bundle / "logs").glob("*.log")) if (bundle / "logs").exists() else []:
            for line in log.read_text().splitlines():
                if " pid " in line:
                    pids.append(int(line.rsplit(" ", 1)[1]))
        if len(pids) >= n:
            return pids
        time.sleep(0.2)
    raise AssertionError("tasks did not start")


def _all_gone(pids, timeout=20) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_signalled_supervisor_leaves_no_orphans(sig, tmp_path):
    bundle = tmp_path / "b"
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    proc = subprocess.Popen([PY, "-m", "distdoctor", "run", "--workers", "3", "--grace", "2", "--no-report",
                             "--out", str(bundle), "--", PY, str(tmp_path / "sleeper.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pids = _pids_from_logs(bundle, 3)
        time.sleep(2.0)                      # the tasks' agents have sent where they are
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert _all_gone(pids), "task processes survived the supervisor"
        if sig != signal.SIGKILL:
            # a signal to distdoctor itself is the run's end, not a task's preemption: 128 + the signal, as a
            # shell says it, and the verdict says what each task was doing (the sleeper's own line)
            assert proc.returncode == 128 + sig
            d = json.loads((bundle / "diagnosis.json").read_text())
            rc = d["root_cause"]
            assert d["status"] == "failed" and rc["category"] == "interrupted" and rc["code"] == "DD109"
            assert d["interrupted"] == sig.name and rc["culprit"] is None
            assert f"stopped by {sig.name} sent to distdoctor" in rc["summary"]
            assert "worker:0 was in its own code at " in rc["summary"] and "sleeper.py:3" in rc["summary"], rc["summary"]
            assert all(t["signal"] == "SIGTERM" and not t["stopped_at_end"] for t in d["tasks"].values())
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_to_a_task_is_still_a_preemption(tmp_path):
    """Only a signal to distdoctor is an interruption: a SIGTERM that reaches a task from outside is a preemption."""
    bundle = tmp_path / "b"
    proc = subprocess.Popen([PY, "-m", "distdoctor", "run", "--workers", "2", "--grace", "2", "--no-report",
                             "--failure-grace", "2", "--out", str(bundle), "--", PY, "-c", SLEEPER],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pids = _pids_from_logs(bundle, 2)
        time.sleep(3.5)                      # past the start-up check: a training job that was preempted
        os.kill(pids[1], signal.SIGTERM)
        proc.wait(timeout=40)
        d = json.loads((bundle / "diagnosis.json").read_text())
        assert d["root_cause"]["category"] == "preemption" and d["root_cause"]["code"] == "DD108"
        assert "interrupted" not in d and proc.returncode == 1
    finally:
        if proc.poll() is None:
            proc.kill()


def test_task_ignoring_sigterm_is_killed_after_grace(tmp_path):
    code = "import signal, time, os\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('pid', os.getpid(), flush=True)\ntime.sleep(600)\n"
    bundle = tmp_path / "b"
    proc = subprocess.Popen([PY, "-m", "distdoctor", "run", "--workers", "1", "--grace", "1", "--no-report",
                             "--out", str(bundle), "--", PY, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids = _pids_from_logs(bundle, 1)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    assert _all_gone(pids, timeout=5)
