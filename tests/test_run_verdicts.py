"""``run``'s verdict against real (TensorFlow-free) tasks: a library's fatal line names the cause over a generic exit,
and ``diagnose`` on the bundle agrees; the server tasks of a finished ParameterServerStrategy job were stopped at
its end, not killed."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading

import pytest

from conftest import PY, WORKERS, dd_run

HOROVOD = ("HorovodVersionMismatchError: Framework tensorflow installed with version 2.3.0 but found version "
           "2.4.1.")


def _diagnose(bundle) -> dict:
    r = subprocess.run([PY, "-m", "distdoctor", "diagnose", str(bundle), "--json"], capture_output=True, text=True,
                       timeout=60)
    return json.loads(r.stdout)


def test_a_fatal_library_line_names_the_cause_and_diagnose_agrees():
    """worker:1 prints Horovod's version mismatch and exits 1 (no traceback: an exit the run alone calls DD106);
    worker:0 then reports it lost as TensorFlow's collectives do (which `diagnose` alone called peer_crashed)."""
    r = dd_run("fatal-line", ["--workers", "2"],
               [PY, str(WORKERS / "fatal_line.py"), "--line", HOROVOD, "--after", "3.5", "--wait", "5", "--peer-lost"])
    assert r.diag is not None, r.stderr[-2000:]
    assert "worker:1 printed a known cause: DD723 version_mismatch" in r.stderr
    rc = r.diag["root_cause"]
    assert (r.diag["status"], rc["code"], rc["category"], rc["culprit"]) == \
        ("failed", "DD723", "version_mismatch", "worker:1"), json.dumps(rc)[:2000]
    assert rc["alternatives"][0]["category"] == "other"          # the run's own reading, kept beside it
    assert any(e["text"] == HOROVOD for e in rc["evidence_detail"])
    d = _diagnose(r.bundle)
    assert (d["status"], d["root_cause"]["category"], d["root_cause"]["culprit"]) == \
        ("failed", "version_mismatch", "worker:1"), json.dumps(d["root_cause"])[:2000]


def test_servers_stopped_at_a_finished_jobs_end_are_not_killed():
    """ParameterServerStrategy: the chief finishes, its servers (ps, workers in server.join()) never exit by
    themselves; distdoctor stops them. That is their normal end: said so, the signal kept."""
    r = dd_run("pss-stopped-at-end", ["--workers", "2", "--ps", "1"],
               [PY, str(WORKERS / "roles.py"), "--chief-s", "4"])
    assert r.diag is not None and r.rc == 0, r.stderr[-2000:]
    assert r.diag["status"] == "succeeded" and r.diag["root_cause"] is None
    tasks = r.diag["tasks"]
    assert tasks["chief:0"]["exit_code"] == 0 and not tasks["chief:0"]["stopped_at_end"]
    for t in ("worker:0", "worker:1", "ps:0"):
        assert tasks[t]["signal"] == "SIGTERM" and tasks[t]["stopped_at_end"], tasks[t]
    # the human report: the table and the headline, from the same diagnosis
    out = subprocess.run([PY, "-m", "distdoctor", "report", str(r.bundle), "--html", str(r.bundle / "r.html")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    html = (r.bundle / "r.html").read_text()
    assert "stopped at the job&#x27;s end (SIGTERM)" in html or "stopped at the job's end (SIGTERM)" in html
    assert "killed by SIGTERM" not in html
    assert "chief:0 ran to the end; worker:0, worker:1, ps:0 were stopped at the job" in html


def test_a_task_distdoctor_stopped_did_not_fail_at_once():
    """worker:1 dies on its fatal line at once, worker:0 keeps running until distdoctor stops it: that is a
    training failure with a cause (not the usage error of a command that fails at once on every task, whose message
    quoted the SIGTERM distdoctor sent worker:0)."""
    r = dd_run("fatal-line-at-once", ["--workers", "2", "--failure-grace", "1", "--grace", "2"],
               [PY, str(WORKERS / "fatal_line.py"), "--line", HOROVOD, "--after", "0.2", "--wait", "60"])
    assert "exited at once" not in r.stderr and r.diag is not None, r.stderr[-2000:]
    assert (r.diag["root_cause"]["category"], r.diag["root_cause"]["culprit"]) == ("version_mismatch", "worker:1")


def test_a_task_stuck_in_its_exit_teardown_is_stopped_once_the_jobs_work_is_done():
    """worker:0's code ends without an error, then its process waits for ever in an exit handler (as TensorFlow's
    destructors sometimes do); worker:1 exits 0. The job's work is done: --exit-grace later distdoctor stops
    worker:0, says why, and the job succeeded (exit 0, worker:0 stopped at the end, not failed)."""
    r = dd_run("stuck-at-exit", ["--workers", "2", "--exit-grace", "3"],
               [PY, str(WORKERS / "stuck_at_exit.py"), "--stuck", "worker:0"], timeout=120)
    assert r.diag is not None, r.stderr[-2000:]
    assert (r.rc, r.diag["status"], r.diag["root_cause"]) == (0, "succeeded", None), r.stderr[-2000:]
    w0 = r.diag["tasks"]["worker:0"]
    assert w0["stopped_at_end"] and w0["exit_code"] != 0, w0
    assert r.diag["tasks"]["worker:1"]["exit_code"] == 0
    assert "worker:0 has not exited" in r.stderr and "--exit-grace 3" in r.stderr, r.stderr[-2000:]
    assert any("sat in its exit teardown" in n for n in r.diag["notes"]), r.diag["notes"]
    assert r.wall_s < 60, r.wall_s
    d = _diagnose(r.bundle)
    assert (d["status"], d["root_cause"]) == ("succeeded", None), json.dumps(d)[:2000]


def test_an_upload_at_exit_is_not_stopped():
    """An exit handler that uploads slowly over the network (64 KiB every 0.25 s, to a loopback sink this test
    holds): almost no CPU, and /proc/PID/io does not count a socket's bytes. Its sockets' counters (``ss``) are
    activity, so distdoctor lets the upload end and stops the task only 3 s of idleness after it."""
    got = []
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        port = srv.getsockname()[1]

        def sink():
            conn, _ = srv.accept()
            with conn:
                while chunk := conn.recv(1 << 16):
                    got.append(len(chunk))
        threading.Thread(target=sink, daemon=True).start()
        r = dd_run("upload-at-exit", ["--workers", "2", "--exit-grace", "3"],
                   [PY, str(WORKERS / "stuck_at_exit.py"), "--stuck", "worker:0", "--upload", "8",
                    "--sink", str(port)], timeout=120)
    assert r.diag is not None, r.stderr[-2000:]
    assert (r.rc, r.diag["status"]) == (0, "succeeded"), r.stderr[-2000:]
    assert r.diag["tasks"]["worker:0"]["stopped_at_end"]
    log = (r.bundle / "logs" / "worker-0.log").read_text()
    assert "exit handler uploaded" in log, log[-1000:]
    assert sum(got) >= 8 * 4 * (64 << 10) * 0.8, sum(got)
    events = [json.loads(x) for x in (r.bundle / "events.jsonl").read_text().splitlines()]
    stop = [e["ts"] for e in events if e["kind"] == "signal_sent" and e["task"] == "worker:0"]
    start = min(e["ts"] for e in events if e["kind"] == "start" and e["task"] == "worker:0")
    assert stop and stop[0] - start >= 1 + 8 + 3 - 0.5, (stop, start)


@pytest.mark.parametrize("how", ["--busy-exit", "--thread"])
def test_work_at_exit_is_not_stopped(how):
    """The same task, but at exit it first works for 6 s: its exit handler computes (``--busy-exit``), or a thread
    of its own that the interpreter joins sleeps, as an upload waiting on the network does (``--thread``). The
    grace counts from when that work ended, so distdoctor stops the task only 3 s of idleness after it."""
    r = dd_run(f"work-at-exit{how}", ["--workers", "2", "--exit-grace", "3"],
               [PY, str(WORKERS / "stuck_at_exit.py"), "--stuck", "worker:0", how, "6"], timeout=120)
    assert r.diag is not None, r.stderr[-2000:]
    assert (r.rc, r.diag["status"]) == (0, "succeeded"), r.stderr[-2000:]
    log = (r.bundle / "logs" / "worker-0.log").read_text()
    assert ("upload thread done" if how == "--thread" else "exit handler waits") in log, log[-1000:]
    events = [json.loads(x) for x in (r.bundle / "events.jsonl").read_text().splitlines()]
    stop = [e["ts"] for e in events if e["kind"] == "signal_sent" and e["task"] == "worker:0"]
    start = min(e["ts"] for e in events if e["kind"] == "start" and e["task"] == "worker:0")
    assert stop and stop[0] - start >= 1 + 6 + 3 - 0.5, (stop, start)


def _can_mount_a_tmpfs() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        "mount -t tmpfs -o size=1m tmpfs /dev/shm"], capture_output=True, timeout=30)
    return r.returncode == 0


@pytest.mark.skipif(not _can_mount_a_tmpfs(), reason="needs root and unshare -m (a mount namespace of its own)")
def test_a_bus_error_from_a_full_dev_shm_is_named_with_its_size():
    """Each task runs in a mount namespace of its own whose /dev/shm is a 4 MiB tmpfs (a container's, small); worker:1
    writes a mapping of 64 MiB there, 256 KiB every 0.2 s, until the kernel cannot back a page and sends SIGBUS.
    distdoctor samples the /dev/shm each task sees (through /proc/PID/root) and names the exhausted shared memory,
    with its size, not a native crash; ``diagnose`` on the bundle agrees."""
    wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs -o size=4m tmpfs /dev/shm && exec "$0" "$@"']
    r = dd_run("shm-full", ["--workers", "2"], wrap + [PY, str(WORKERS / "shm_fill.py"), "--fill", "worker:1"],
               timeout=120)
    assert r.diag is not None, r.stderr[-2000:]
    rc = r.diag["root_cause"]
    assert (r.diag["status"], rc["code"], rc["category"], rc["culprit"]) == \
        ("failed", "DD113", "resource_exhaustion", "worker:1"), json.dumps(rc)[:2000]
    assert any("/dev/shm" in e and "of 4 MiB" in e for e in rc["evidence"]), rc["evidence"]
    w1 = r.diag["tasks"]["worker:1"]
    assert (w1["signal"], w1["shm_size_bytes"]) == ("SIGBUS", 4 << 20), w1
    assert w1["shm_used_bytes"] >= 3 << 20, w1
    assert "filled 3 MiB" in (r.bundle / "logs" / "worker-1.log").read_text()
    d = _diagnose(r.bundle)
    assert (d["root_cause"]["code"], d["root_cause"]["culprit"]) == ("DD113", "worker:1"), json.dumps(d)[:2000]
