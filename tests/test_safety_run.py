"""``distdoctor run`` and ``diagnose`` with real processes and real files: no secret written, bundle files private
and never written through a planted link, one run per ``--out``, nothing harmful echoed to the terminal, the
smaller faults of issue 24 (durations, stdin floods, TF_CONFIG, the metrics address). Plain-Python tasks only."""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
ESCAPES = str(ROOT / "tests" / "workers" / "prints_terminal_escapes.py")
SECRET = "SECRET123"


def dd(*args, timeout=90, env=None, **kw):
    full = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([PY, "-m", "distdoctor", *args], capture_output=True, timeout=timeout, env=full,
                          preexec_fn=lambda: os.umask(0o022), **kw)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _files(bundle: Path) -> list[Path]:
    return [p for p in bundle.rglob("*") if p.is_file()]


def test_a_secret_on_the_command_line_or_in_the_alert_url_is_written_nowhere(tmp_path):
    out = tmp_path / "b"
    hook = f"http://alice:{SECRET}@127.0.0.1:{_closed_port()}/services/T0123ABCD/{SECRET}xyz"   # refused: delivery fails
    r = dd("run", "--workers", "2", "--no-live", "--out", str(out), "--alert", hook, "--alert-format", "slack",
           "--metrics-port", "0", "--", PY, ESCAPES, f"--api-key={SECRET}", "--token", SECRET,
           f"--data=https://bob:{SECRET}@data.example/x",
           env={"TF_CONFIG": '{"cluster": {}}', "TF_APIKEY": SECRET, "TF_AUTH_HEADER": SECRET})
    assert r.returncode == 0, r.stderr
    diag = json.loads((out / "diagnosis.json").read_text())
    assert any("not delivered" in n for n in diag["notes"]), diag["notes"]   # the failure is said ...
    leaked = [str(p) for p in _files(out) if SECRET.encode() in p.read_bytes()]
    assert not leaked                                                         # ... and no file holds the secret
    assert SECRET.encode() not in r.stdout + r.stderr
    assert "--api-key=***" in (out / "events.jsonl").read_text()
    # issue 24.8: a TF_CONFIG in the environment is replaced with a note, once; the metrics address is said
    note = b"[distdoctor] TF_CONFIG in the environment is replaced by the job's own for each task"
    assert r.stderr.count(note) == 1
    assert b"[distdoctor] Prometheus metrics on http://127.0.0.1:" in r.stdout


def test_task_output_echoed_without_terminal_escapes(tmp_path):
    r = dd("run", "--workers", "1", "--no-live", "--no-report", "--out", str(tmp_path / "b"), "--", PY, ESCAPES)
    assert r.returncode == 0, r.stderr
    shown = r.stdout.decode()
    line = next(ln for ln in shown.splitlines() if ln.startswith("[worker:0] clip"))
    for bad in ("\x1b", "\x9b", "\x07", "\u202e", "\u200b"):
        assert bad not in shown
    assert line == "[worker:0] clip  title  clear  c1  bidi \\u202e zw \\u200b end"
    # the task's own log keeps what it printed: the bundle is the record, the terminal is the one protected
    assert "\x1b]52;" in (tmp_path / "b" / "logs" / "worker-0.log").read_text()


def test_diagnose_prints_no_c1_bidi_or_escape(tmp_path):
    log = tmp_path / "worker-0.log"
    log.write_text("worker-0 starting\nTraceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                   "ValueError: bad \x9b2J value \u202e reversed \u200b \x1b]52;c;aGk=\x07 end\n")
    r = dd("diagnose", str(log))
    out = r.stdout.decode()
    assert "ValueError: bad" in out
    for bad in ("\x1b", "\x9b", "\x07", "\u202e", "\u200b"):
        assert bad not in out


def test_bundle_files_are_private(tmp_path):
    out = tmp_path / "b"
    r = dd("run", "--workers", "2", "--no-live", "--out", str(out), "--", PY, "-c", "print('hi')")
    assert r.returncode == 0, r.stderr
    modes = {str(p.relative_to(out)): stat.S_IMODE(p.stat().st_mode) for p in [out, *out.rglob("*")]}
    assert {"logs/worker-0.log", "events.jsonl", "diagnosis.json", "report.html"} <= set(modes)
    wide = {k: oct(m) for k, m in modes.items() if m & 0o077}   # nothing for the group or others, umask 022 or not
    assert not wide


def test_planted_symlinks_in_the_bundle_are_never_followed(tmp_path):
    out, victim = tmp_path / "b", tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / "logs").mkdir(parents=True)
    for name in ("logs/worker-0.log", "events.jsonl", "diagnosis.json", "diagnosis.json.tmp", "report.html"):
        os.symlink(victim, out / name)
    os.link(victim, out / "samples.jsonl")                      # a hard link: truncating it would truncate the victim
    r = dd("run", "--workers", "1", "--no-live", "--out", str(out), "--", PY, "-c", "print('hello from the task')")
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    for name in ("logs/worker-0.log", "events.jsonl", "diagnosis.json", "report.html", "samples.jsonl"):
        assert not (out / name).is_symlink() and (out / name).stat().st_nlink == 1, name
    assert "hello from the task" in (out / "logs" / "worker-0.log").read_text()


def test_a_planted_logs_folder_link_is_replaced(tmp_path):
    out, elsewhere = tmp_path / "b", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    os.symlink(elsewhere, out / "logs")
    r = dd("run", "--workers", "1", "--no-live", "--no-report", "--out", str(out), "--", PY, "-c", "print('x')")
    assert r.returncode == 0, r.stderr
    assert not list(elsewhere.iterdir()) and (out / "logs" / "worker-0.log").is_file()


def test_two_runs_never_share_one_out(tmp_path):
    out = tmp_path / "b"
    first = subprocess.Popen([PY, "-m", "distdoctor", "run", "--workers", "1", "--no-live", "--no-report",
                              "--out", str(out), "--", PY, "-c", "import time; time.sleep(4)"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        deadline = time.monotonic() + 30
        while not (out / "events.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        second = dd("run", "--workers", "1", "--no-live", "--out", str(out), "--", PY, "-c", "pass")
        assert second.returncode == 2
        err = second.stderr.decode().strip()
        assert len(err.splitlines()) == 1 and "another distdoctor run" in err and f"pid {first.pid}" in err, err
        assert "Traceback" not in err
        assert first.wait(60) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    events = [json.loads(ln) for ln in (out / "events.jsonl").read_text().splitlines()]   # not interleaved
    assert events
    third = dd("run", "--workers", "1", "--no-live", "--no-report", "--out", str(out), "--", PY, "-c", "pass")
    assert third.returncode == 0, third.stderr
    assert b"holds an earlier run's bundle" in third.stdout


@pytest.mark.parametrize("args", [
    ["run", "--grace", "-5", "--", PY, "-c", "pass"],
    ["run", "--hang-timeout", "nan", "--", PY, "-c", "pass"],
    ["run", "--failure-grace", "-1", "--", PY, "-c", "pass"],
    ["run", "--restart-delay", "inf", "--", PY, "-c", "pass"],
    ["run", "--node", "--peer-timeout", "-3", "--", PY, "-c", "pass"],
    ["check", "--static", "--timeout", "-1"],
])
def test_negative_or_nan_durations_are_usage_errors(args, tmp_path):
    r = dd(*args, cwd=tmp_path)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "seconds" in err, err
    assert not (tmp_path / "distdoctor-runs").exists()


def test_diagnose_of_an_endless_binary_stdin_ends_with_one_line():
    with open("/dev/zero", "rb") as zero:
        r = dd("diagnose", "-", stdin=zero, timeout=60)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "binary" in err, err


def test_a_log_then_a_binary_flood_gives_a_verdict_on_the_log(tmp_path):
    log = tmp_path / "worker-0.log"
    with open(log, "wb") as fh:
        fh.write(b"Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                 b"ValueError: the real cause\n")
        fh.write(b"\0" * (20 << 20))
    r = dd("diagnose", "--json", str(log))
    diag = json.loads(r.stdout)
    assert "ValueError" in json.dumps(diag) and any("binary" in n for n in diag["notes"]), diag["notes"]


def test_a_report_of_a_command_that_is_not_utf8(tmp_path):
    folder = tmp_path / "scripts"
    folder.mkdir()
    script = os.path.join(os.fsencode(folder), b"task-\xff.py")
    with open(script, "w") as fh:
        fh.write("print('ok')\n")
    out = tmp_path / "b"
    r = subprocess.run([PY, "-m", "distdoctor", "run", "--workers", "1", "--no-live", "--out", str(out), "--",
                        PY, script], capture_output=True, timeout=90, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr
    assert b"could not write report.html" not in r.stderr
    assert (out / "report.html").stat().st_size > 1000
    assert not [p for p in out.iterdir() if ".tmp" in p.name]
