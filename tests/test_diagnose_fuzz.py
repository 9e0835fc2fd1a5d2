"""No input makes the parser, the scanner or ``distdoctor diagnose`` raise anything but InputError.

Property tests (hypothesis) over random bytes, cut and huge lines, real TF
lines in random order and interleaved task prefixes; and the command line on
bad input: exit 2 with one line on stderr, never a traceback.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.logparse import TaskLogParser, classify, split_timestamp
from distdoctor.diagnose.logs.taskscan import TaskScanner
from distdoctor.diagnose.logs.prefixes import detect_prefix_style, split_combined
from distdoctor.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
REAL = [ln for case in ("sigkill-raw-logs", "segfault", "port-in-use", "peer-never-starts", "nan-loss", "port-in-use-raw",
                        "peer-never-starts-raw", "stall-tf-info", "tf-config-mismatch-raw", "nccl-cuda-error")
        for f in sorted((CORPUS / case).glob("*.log")) for ln in f.read_bytes().splitlines()]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

real_line = st.sampled_from(REAL)
noise = st.binary(max_size=300)
line = st.one_of(real_line, real_line.map(lambda b: b[: len(b) // 2]), noise,
                 st.integers(70_000, 200_000).map(lambda n: b"x" * n),
                 st.sampled_from([b"Traceback (most recent call last):", b"Fatal Python error: Aborted", b"  File \"x\"",
                                  b"\r 3/40 [=>..] - ETA: 1s - loss: nan\x08\x08", b"Epoch 9/3", b"\x1b[31m", b"\x00\x00"]))
ending = st.sampled_from([b"\n", b"\r\n", b"\r", b""])


@FAST
@given(st.lists(st.tuples(line, ending), max_size=60), st.integers(1, 5000))
def test_scanner_never_raises(lines, chunk):
    data = b"".join(a + b for a, b in lines)
    sc = TaskScanner("worker:0", year=2026)
    for i in range(0, len(data), chunk):
        sc.feed(data[i:i + chunk])
    scan = sc.close()
    assert scan.lines >= 0 and len(scan.events) <= TaskScanner.MAX_EVENTS + TaskScanner.TAIL_EVENTS


@FAST
@given(st.lists(st.text(max_size=200), max_size=40))
def test_line_parser_and_classifier_never_raise(texts):
    p = TaskLogParser("worker:1", year=2026)
    for i, t in enumerate(texts, 1):
        p.feed(i, t)
        classify(t)
        split_timestamp(t, 2026)
    p.close()


prefix = st.sampled_from([b"[worker:0] ", b"[worker:1] ", b"[chief:0] ", b"worker-1 | ", b"0: ", b"1: ", b"[distdoctor] ",
                          b"[pod/j-worker-2/tf] ", b"", b"[??] "])


@FAST
@given(st.lists(st.tuples(prefix, line), max_size=60))
def test_interleaved_prefixes_never_raise(items):
    body = b"\n".join(p + ln for p, ln in items)
    style = detect_prefix_style(body)
    if style:
        parts = split_combined(body, style, {}, {})
        assert all(isinstance(k, str) for k in parts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(line, ending), max_size=30), st.lists(st.tuples(line, ending), max_size=30))
def test_diagnose_paths_gives_a_diagnosis_or_one_line_input_error(tmp_path_factory, a, b):
    d = tmp_path_factory.mktemp("fuzz")
    (d / "worker-0.log").write_bytes(b"".join(x + y for x, y in a))
    (d / "worker-1.log").write_bytes(b"".join(x + y for x, y in b))
    try:
        diag, _ = diagnose_paths([str(d)], jobs=1, detected_at=0.0)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert diag.status.value in ("succeeded", "failed", "hung", "unknown")


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "distdoctor", "diagnose", *args], input=stdin, capture_output=True,
                          cwd=ROOT, env=env, timeout=120)


def test_cli_bad_input_exits_2_with_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "worker-0.log").write_bytes(os.urandom(200_000))
    (tmp_path / "notes.txt").write_text("just some text\nwithout any job in it\n")
    for args, stdin in ([str(tmp_path / "empty")], None), ([str(tmp_path / "missing")], None), \
            ([str(tmp_path / "worker-0.log")], None), \
            ([str(CORPUS / "sigkill-raw-logs"), "--task-map", "oops"], None), (["-"], b""), (["-"], os.urandom(5000)):
        p = _cli(*args, stdin=stdin)
        err = p.stderr.decode()
        assert p.returncode == 2, (args, p.returncode, err)
        assert err.count("\n") == 1 and err.startswith("distdoctor: error: ") and "Traceback" not in err, err
    # any readable text is diagnosed, never refused: here it shows no failure (exit 0, status unknown, category other)
    p = _cli(str(tmp_path / "notes.txt"), "--json")
    assert p.returncode == 0, p.stderr
    import json
    d = json.loads(p.stdout)
    assert d["status"] == "unknown" and d["root_cause"]["category"] == "other" and d["root_cause"]["confidence"] == "low"


def test_cli_verdicts_json_and_html(tmp_path):
    p = _cli(str(CORPUS / "sigkill-raw-logs"), "--json", "--html", str(tmp_path / "r.html"))
    assert p.returncode == 1, p.stderr
    import json
    d = json.loads(p.stdout)
    assert d["command"] == "diagnose" and d["root_cause"]["culprit"] == "worker:1"
    # --html writes the incident report page (what `distdoctor report` writes), not a copy of the terminal
    html = (tmp_path / "r.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert 'data-status="failed"' in html and 'data-culprit="worker:1"' in html
    assert 'data-task="worker:0"' in html and 'data-task="worker:1"' in html and 'id="timeline"' in html
    p = _cli(str(CORPUS / "sigkill-raw-logs"), "--html", str(tmp_path / "no-such-dir" / "x" / "r.html"))
    assert p.returncode == 1 and (tmp_path / "no-such-dir" / "x" / "r.html").is_file()
    p = _cli(str(CORPUS / "sigkill-raw-logs"), "--html", "/proc/forbidden.html")
    err = p.stderr.decode()
    assert p.returncode == 2 and err.count("\n") == 1 and "Traceback" not in err and b"FAILED" in p.stdout.upper()
    p = _cli(str(CORPUS / "healthy"))
    assert p.returncode == 0 and b"SUCCEEDED" in p.stdout.upper()
    combined = (CORPUS / "sigkill-combined-console" / "console.txt").read_bytes()
    p = _cli("-", "--json", stdin=combined)
    assert p.returncode == 1 and json.loads(p.stdout)["root_cause"]["culprit"] == "worker:1"


def test_binary_on_stdin_is_refused_whatever_its_first_bytes():
    """Standard input is sniffed like a file: the bytes put back after the gzip check come with the first read."""
    import random
    from distdoctor.diagnose.logs.unwrap import open_stream
    import io
    s = open_stream(io.BufferedReader(io.BytesIO(b"ab" + b"c" * 100)))
    assert s.read(50) == b"ab" + b"c" * 48
    for seed in range(12):
        data = random.Random(seed).randbytes(5000)
        p = _cli("-", stdin=data)
        assert p.returncode == 2 and p.stderr.decode().startswith("distdoctor: error: "), (seed, p.returncode)


def test_binary_files_are_refused_in_one_line_that_names_them(tmp_path):
    import random
    one = tmp_path / "worker-0.log"
    one.write_bytes(random.Random(1).randbytes(20000))
    p = _cli(str(one))
    err = p.stderr.decode()
    assert p.returncode == 2 and err == "distdoctor: error: worker-0.log holds binary data, not logs: nothing to diagnose\n", err
    two = tmp_path / "worker-1.log"
    two.write_bytes(random.Random(2).randbytes(20000))
    p = _cli(str(one), str(two))
    err = p.stderr.decode()
    assert p.returncode == 2 and err.count("\n") == 1 and " and the others hold binary data" in err, err
