"""Finding and reading logs: names to tasks, bundles, combined streams, the process pool, clocks."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from distdoctor.diagnose import logsource
from distdoctor.diagnose.events import EventKind
from distdoctor.diagnose.from_logs import observation_from_scans, observe_logs
from distdoctor.diagnose.logs.taskscan import TaskScan
from distdoctor.diagnose.logsource import (detect_prefix_style, discover, parse_task_map, scan_sources, split_combined,
                                           task_from_name)
from distdoctor.errors import InputError

CORPUS = Path(__file__).parent / "corpus"
RAW = CORPUS / "sigkill-raw-logs"


@pytest.mark.parametrize("name, task", [
    ("worker-0.log", "worker:0"), ("worker0.txt", "worker:0"), ("myjob-worker-1.log", "worker:1"),
    ("chief.log", "chief:0"), ("ps-0.out", "ps:0"), ("evaluator.log", "evaluator:0"),
    ("slurm-1234_3.out", "worker:3"), ("job-worker-12", "worker:12"), ("Worker_2.LOG", "worker:2"),
    ("logs/chief-0.log", "chief:0"), ("worker-1.log.gz", "worker:1"), ("worker-3.log.1", "worker:3"),
    ("worker:4", "worker:4"), ("worker.1.log", "worker:1"), ("ps.0.txt", "ps:0"), ("worker-2.log.1", "worker:2"),
    ("workers.log", None), ("steps-0.log", None), ("train.log", None), ("slurm-1234.out", None), ("0.log", None),
])
def test_task_from_name(name, task):
    assert task_from_name(name) == task


def test_parse_task_map():
    assert parse_task_map(["a.txt=worker:0,b.txt=Worker:1", "host-c=chief:0"]) == {
        "a.txt": "worker:0", "b.txt": "worker:1", "host-c": "chief:0"}
    for bad in ("a.txt", "a.txt=worker", "=worker:0", "a=worker:x"):
        with pytest.raises(InputError):
            parse_task_map(bad)


def test_combined_styles_and_continuation_lines():
    text = (b"[distdoctor] 2 tasks (worker:0, worker:1)\n[worker:0] Epoch 1/2\n[worker:1] Traceback (most recent call last):\n"
            b'  File "a.py", line 1, in <module>\n[worker:1] ValueError: x\n')
    assert detect_prefix_style(text) == "bracket"
    parts = split_combined(text.rstrip(b"\n"), "bracket", {}, {})
    assert parts["worker:1"] == [b"Traceback (most recent call last):", b'  File "a.py", line 1, in <module>', b"ValueError: x"]
    assert detect_prefix_style(b"0: a\n1: b\n0: c\n") == "slurm"
    assert detect_prefix_style(b"worker-0  | a\nworker-1  | b\n") == "pipe"
    assert detect_prefix_style(b"host-a | x\nhost-b | y\n", {"host-a": "worker:0", "host-b": "worker:1"}) == "pipe"
    assert detect_prefix_style(b"plain\nlines\n") is None
    kubectl = b"[pod/mnist-worker-1/tensorflow] a\n[pod/mnist-chief-0/tensorflow] b\n"
    assert detect_prefix_style(kubectl) == "bracket"
    assert sorted(split_combined(kubectl.rstrip(), "bracket", {}, {})) == ["chief:0", "worker:1"]


def test_bundle_folder_and_stdin_discovery(tmp_path):
    d = discover([str(CORPUS / "sigkill-run-bundle")])
    assert d.bundle and sorted(s.task for s in d.sources) == ["worker:0", "worker:1"]
    assert any("the run itself concluded" in n for n in d.notes)
    assert discover(["-"]).sources[0].combined


def test_unmapped_names_are_reported_and_task_map_fixes_them(tmp_path):
    shutil.copy(RAW / "worker-0.log", tmp_path / "first.txt")
    shutil.copy(RAW / "worker-1.log", tmp_path / "worker-1.log")
    d = discover([str(tmp_path)])
    assert d.unmapped == ("first.txt",) and any("--task-map first.txt=worker:N" in n for n in d.notes)
    d = discover([str(tmp_path)], {"first.txt": "worker:0"})
    assert sorted(s.task for s in d.sources) == ["worker:0", "worker:1"] and not d.unmapped
    # a lone file whose name says nothing is read anyway (its writer comes from its content, or stays unknown)
    d = discover([str(tmp_path / "first.txt")])
    assert [(s.name, s.task) for s in d.sources] == [("first.txt", None)] and d.unmapped == ("first.txt",)


@pytest.mark.parametrize("setup, message", [
    (lambda p: None, "no log files"),
    (lambda p: (p / "diagnosis.json").write_text("{}"), "no log files"),
])
def test_unusable_folders(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(InputError, match=message):
        discover([str(tmp_path)])
    with pytest.raises(InputError, match="no such file"):
        discover([str(tmp_path / "missing")])


def test_pool_and_sequential_agree(tmp_path, monkeypatch):
    for i in range(4):
        shutil.copy(RAW / f"worker-{i % 2}.log", tmp_path / f"worker-{i}.log")
    disc = discover([str(tmp_path)])
    seq, _ = scan_sources(disc, jobs=1)
    monkeypatch.setattr(logsource, "PARALLEL_MIN_BYTES", 0)
    par, _ = scan_sources(disc, jobs=2)
    assert [(s.task, s.events, s.steps) for s in seq] == [(s.task, s.events, s.steps) for s in par]


def test_gzip_and_vanishing_files(tmp_path):
    with gzip.open(tmp_path / "worker-0.log.gz", "wb") as fh:
        fh.write((RAW / "worker-0.log").read_bytes())
    shutil.copy(RAW / "worker-1.log", tmp_path / "worker-1.log")
    (tmp_path / "worker-2.log").write_text("x\n")
    disc = discover([str(tmp_path)])
    (tmp_path / "worker-2.log").unlink()
    job = observe_logs(disc)
    assert job.tasks["worker:0"].steps == 400
    assert "worker:2" not in job.tasks and any("vanished" in n for n in job.notes)
    (tmp_path / "worker-3.log.gz").write_bytes(b"\x1f\x8b\x08\x00broken")
    job = observe_logs([str(tmp_path)])
    assert any("reading stopped early" in n for n in job.notes)


def test_combined_stdin_like_file(tmp_path):
    lines = [f"[worker:0] {ln}" for ln in (RAW / "worker-0.log").read_text().splitlines()]
    lines += [f"[worker:1] {ln}" for ln in (RAW / "worker-1.log").read_text().splitlines()]
    (tmp_path / "console.txt").write_text("\n".join(lines))   # no final newline
    job = observe_logs([str(tmp_path / "console.txt")])
    assert sorted(job.tasks) == ["worker:0", "worker:1"]
    assert job.tasks["worker:1"].steps == 400
    assert any(e.peer == "worker:1" for e in job.tasks["worker:0"].events)


def _scan(task, first, last, events=()):
    return TaskScan(task=task, path=f"{task}.log", events=tuple(events), first_ts=first, last_ts=last, recognized=True, size=10)


def test_clock_offsets_are_corrected_for_time_zones_and_noted_otherwise():
    job = observation_from_scans([_scan("worker:0", 1000.0, 1100.0), _scan("worker:1", 1001.0, 1090.0),
                                  _scan("worker:2", 1000.0 + 5 * 3600 + 30, 5 * 3600 + 1095.0)])
    w2 = job.tasks["worker:2"]
    assert w2.clock_offset_s == 5 * 3600 and abs(w2.last_output_at - 1095.0) < 1e-6
    assert any("worker:2's clock reads 5.0 h ahead" in n for n in job.notes)
    job = observation_from_scans([_scan("worker:0", 1000.0, 1100.0), _scan("worker:1", 1001.0, 1090.0),
                                  _scan("worker:2", 1000.0 + 1300, 2400.0)])
    assert job.tasks["worker:2"].clock_offset_s is None and any("starts 22 min after" in n for n in job.notes)


def test_nothing_usable():
    with pytest.raises(InputError, match="binary"):
        observation_from_scans([TaskScan(task="worker:0", binary=True, size=100)])
    with pytest.raises(InputError, match="empty"):
        observation_from_scans([TaskScan(task="worker:0", size=0)])
    with pytest.raises(InputError, match="does not look|looks like"):
        observation_from_scans([TaskScan(task="worker:0", size=50)])


def test_silent_logs_are_a_hang_with_candidates():
    job = observe_logs([str(CORPUS / "stall")])
    assert job.hang is not None and job.hang.kind == "silent" and not job.job_finished
    assert job.hang.culprits == () and set(job.hang.waiting) == {"worker:0", "worker:1"}
    job = observe_logs([str(RAW)])
    assert job.hang is None and not job.job_finished   # not a silent hang; its logs stop on errors: not finished either
    assert any(e.kind == EventKind.PEER_SYMPTOM for e in job.tasks["worker:0"].events)
