"""A healthy job's logs are neither a hang nor a failure: recorded custom-loop runs, their shutdown race, and the
process records of run bundles (:mod:`distdoctor.diagnose.bundlefacts`).

The bare logs in tests/data/bare-ctl are real (see its README); the shutdown race is that recording with the lines
TensorFlow 2.21's coordination agent prints when the leader's process has gone, appended after worker:1's last epoch.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from distdoctor.diagnose.bundlefacts import RecordedRun, RecordedTask, apply_recorded, read_recorded_run
from distdoctor.diagnose.command import diagnose_paths
from distdoctor.diagnose.observations import HangVerdict, JobObservation, TaskObservation

DATA = Path(__file__).resolve().parent / "data"
ROOT_CORPUS = Path(__file__).resolve().parent / "corpus"
BARE = sorted((DATA / "bare-ctl").glob("run-*"))
RACE = ("E0000 00:00:{t:.6f}   23301 coordination_service_agent.cc:534] Failed to send heartbeat to coordination "
        "service: UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:40123: Failed "
        "to connect to remote host: Connection refused\n"
        "E0000 00:00:{t2:.6f}   23301 coordination_service_agent.cc:366] Polled an error from coordination service "
        "(this can be an error from this or another task).\n")


def _reading(path: Path):
    d, _ = diagnose_paths([str(path)])
    r = d.root_cause
    return d.status.value, (r.category.value if r else None), (r.culprit if r else None), d


@pytest.mark.parametrize("run", BARE, ids=lambda p: p.name)
def test_a_healthy_custom_loop_that_prints_epoch_results_succeeded(run):
    status, cat, culprit, _ = _reading(run)
    assert (status, cat, culprit) == ("succeeded", None, None)


@pytest.mark.parametrize("name", ["ctl-healthy-tutorial", "ps-healthy-tutorial"])
def test_the_logs_of_a_healthy_tutorial_run_read_alone_succeeded(name):
    # the bundle's logs folder without its records: what a user has who ran the tutorial without distdoctor
    status, cat, culprit, _ = _reading(DATA / "bundles" / name / "logs")
    assert (status, cat, culprit) == ("succeeded", None, None)


def _raced(tmp_path: Path, *, chief_cut: bool = False, own_error: str = "") -> Path:
    out = tmp_path / "race"
    shutil.copytree(BARE[-1], out)
    w1 = out / "worker-1.log"
    last = max(float(ln.split()[1].split(":")[-1]) for ln in w1.read_text().splitlines() if ln.startswith("I0000"))
    w1.write_text(w1.read_text() + RACE.format(t=last + 30, t2=last + 30.001) + own_error)
    if chief_cut:   # worker:0's log stops inside its first epoch: it never reported a result
        w0 = out / "worker-0.log"
        w0.write_text("".join(ln for ln in w0.read_text().splitlines(keepends=True) if not ln.startswith("Epoch:")))
    return out


def test_a_peer_that_loses_the_chief_after_the_chief_finished_is_the_shutdown_race(tmp_path):
    status, cat, culprit, d = _reading(_raced(tmp_path))
    assert (status, cat, culprit) == ("succeeded", None, None)
    assert any("shutdown race" in n for n in d.notes), d.notes


def test_losing_the_chief_before_the_chief_finished_is_no_race(tmp_path):
    status, _, _, d = _reading(_raced(tmp_path, chief_cut=True))
    assert status == "failed" and not any("shutdown race" in n for n in d.notes)


def test_a_peer_that_raised_is_no_race(tmp_path):
    tb = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
          "ValueError: bad record\n")
    status, cat, culprit, _ = _reading(_raced(tmp_path, own_error=tb))
    assert (status, culprit) == ("failed", "worker:1")


# What worker:0 (the coordination service's holder) printed at exit in a real healthy run of TF 2.21, 7 s after
# worker:1 had finished and left (tests/corpus/healthy-chief-pause-teardown/worker-0.log, less its time stamps)
LEFT_FIRST = "".join(ln.split(" ", 1)[1] for ln in (ROOT_CORPUS / "healthy-chief-pause-teardown" / "worker-0.log")
                     .read_text().splitlines(keepends=True)[-3:])
ABORTED = ("E0000 00:00:1795838600.000000   26098 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: Collective "
           "ops is aborted by: Error reported from /job:worker/task:1: The following tasks are unhealthy (stopped "
           "sending heartbeats):\n")


def _left_first(tmp_path: Path, *, extra: str = "", worker1_cut: bool = False) -> Path:
    out = tmp_path / "left"
    shutil.copytree(BARE[-1], out)
    w0 = out / "worker-0.log"
    w0.write_text(w0.read_text() + LEFT_FIRST + extra)
    if worker1_cut:   # worker:1's log stops inside its first epoch: it never reported a result
        w1 = out / "worker-1.log"
        w1.write_text("".join(ln for ln in w1.read_text().splitlines(keepends=True) if not ln.startswith("Epoch:")))
    return out


def test_the_service_holder_reporting_a_finished_peer_as_crashed_is_the_shutdown_race(tmp_path):
    """The mirror of the race above: worker:0 outlives worker:1 and reports it as crashed (tensorflow#58434); both
    printed their last epoch's results and worker:0's report aborted nothing: succeeded, said as the teardown."""
    assert "The tasks have crashed" in LEFT_FIRST
    status, cat, culprit, d = _reading(_left_first(tmp_path))
    assert (status, cat, culprit) == ("succeeded", None, None)
    assert any("shutdown race (worker:1 left first)" in n for n in d.notes), d.notes
    said = [f for f in d.findings if f.code == "DD601"]
    assert said and said[0].severity.value == "info" and "teardown, not a failure" in said[0].summary
    assert not [n for n in d.notes if n.startswith("what would settle it")], d.notes


@pytest.mark.parametrize("extra, worker1_cut", [
    (ABORTED, False),                                                          # a collective was in flight: training
    ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
     "tensorflow.python.framework.errors_impl.UnavailableError: The tasks have crashed.\n", False),   # it raised
    ("", True),                                                                # the peer never finished an epoch
], ids=["aborted-a-collective", "raised", "peer-never-finished"])
def test_a_report_that_aborted_training_or_names_an_unfinished_peer_is_no_race(tmp_path, extra, worker1_cut):
    status, cat, culprit, d = _reading(_left_first(tmp_path, extra=extra, worker1_cut=worker1_cut))
    assert status == "failed" and not any("shutdown race" in n for n in d.notes), (status, cat, culprit, d.notes)


def test_a_line_read_as_an_error_before_a_custom_loops_last_results_did_not_stop_it(tmp_path):
    """A custom loop shows no steps; a line that only the safety net reads as an error (a chief's own message with
    "fault" in it, as the tutorial tests' chief prints) came before worker:0's last epoch results: its log ran to
    its end, and the job succeeded (the line stays, as a warning). The same line as the log's last: no success."""
    out = tmp_path / "mid"
    shutil.copytree(BARE[-1], out)
    w0 = out / "worker-0.log"
    lines = w0.read_text().splitlines(keepends=True)
    last_epoch = max(i for i, ln in enumerate(lines) if ln.startswith("Epoch:"))
    w0.write_text("".join(lines[:last_epoch] + ["worker:0: fault extra_eager\n"] + lines[last_epoch:]))
    status, cat, culprit, d = _reading(out)
    assert (status, cat, culprit) == ("succeeded", None, None), [f.summary for f in d.findings]
    assert any(f.code == "DD160" and f.severity.value == "warning" for f in d.findings)
    w0.write_text("".join(lines + ["worker:0: fault extra_eager\n"]))
    status, cat, culprit, _ = _reading(out)
    assert status != "succeeded"


def _job(**tasks: TaskObservation) -> JobObservation:
    hang = HangVerdict(kind="silent", declared_at=10.0, since=5.0)
    return JobObservation(tasks=tasks, source="logs", hang=hang, job_finished=False)


def test_recorded_exits_of_zero_finish_a_job_whose_logs_just_stop():
    job = _job(**{"worker:0": TaskObservation(task="worker:0")})
    run = RecordedRun(tasks={"worker:0": RecordedTask("worker:0", exit_code=0, pid=7, started_at=1.0, ended_at=9.0),
                             "worker:1": RecordedTask("worker:1", exit_code=0, pid=8, started_at=1.0, ended_at=9.5)})
    out = apply_recorded(job, run)
    assert out.hang is None and out.job_finished and set(out.tasks) == {"worker:0", "worker:1"}
    assert (out.tasks["worker:1"].exit_code, out.tasks["worker:1"].pid, out.ended_at) == (0, 8, 9.5)
    assert run.span() == (1.0, 9.5) and run.pids() == {7: "worker:0", 8: "worker:1"}


def test_a_task_the_supervisor_stopped_did_not_exit_zero_by_itself():
    run = RecordedRun(tasks={"worker:0": RecordedTask("worker:0", exit_code=0),
                             "worker:1": RecordedTask("worker:1", exit_code=-15, signal=15, killed_by_supervisor=True)})
    out = apply_recorded(_job(), run)
    assert not run.all_exited_zero() and out.hang is not None and not out.job_finished


def test_the_hang_a_run_declared_is_read_back_from_its_bundle():
    run = read_recorded_run(str(DATA / "bundles" / "stall"))
    assert run is not None and run.hang is not None
    assert (run.hang.kind, run.hang.culprits, run.hang.waiting) == ("stalled_worker", ("worker:1",), ("worker:0",))
    doc = json.loads((DATA / "bundles" / "stall" / "diagnosis.json").read_text())
    assert {t: r.pid for t, r in run.tasks.items()} == {t: v["pid"] for t, v in doc["tasks"].items()}
    assert all(r.killed_by_supervisor for r in run.tasks.values())


def test_a_bundle_whose_tasks_all_exited_zero_is_never_hung_or_failed(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(DATA / "bundles" / "healthy-not-tf", bundle)
    for log in (bundle / "logs").iterdir():   # the logs alone now read as a lost peer: the exits still say 0
        log.write_text(log.read_text() + "2026-11-28T03:34:23.000000+0000 UnavailableError: Connection reset by peer\n")
    status, _, _, _ = _reading(bundle)
    assert status == "succeeded"


def test_a_killed_tasks_memory_evidence_is_read_back_from_its_exit_line(tmp_path):
    # the sigkill bundle's worker:1 exit line, as a run writes it when the task's memory cgroup counted an OOM kill
    bundle = tmp_path / "b"
    shutil.copytree(DATA / "bundles" / "sigkill", bundle)
    events = [json.loads(ln) for ln in (bundle / "events.jsonl").read_text().splitlines()]
    for e in events:
        if e["kind"] == "exit" and e["task"] == "worker:1":
            e["oom"] = {"cgroup": "/distdoctor-test", "limit_bytes": 900 << 20, "usage_bytes": None,
                        "max_usage_bytes": 900 << 20, "failcnt": 160, "oom_kill_count": 1, "under_oom": False,
                        "kernel_lines": []}
    (bundle / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    run = read_recorded_run(str(bundle))
    assert run.tasks["worker:1"].oom.oom_kill_count == 1 and run.tasks["worker:0"].oom is None
    status, cat, culprit, _ = _reading(bundle)
    assert (status, cat, culprit) == ("failed", "oom_host", "worker:1")
    assert _reading(DATA / "bundles" / "sigkill")[:3] == ("failed", "peer_crashed", "worker:1")


def test_a_bundle_with_a_task_that_died_is_failed_not_a_silent_hang(tmp_path):
    # worker:1 killed mid-epoch, its peer (no collective) ran to its end: the logs alone simply stop
    bundle = tmp_path / "b"
    shutil.copytree(DATA / "bundles" / "sigkill", bundle)
    w0 = bundle / "logs" / "worker-0.log"
    w0.write_text("".join(ln for ln in w0.read_text().splitlines(keepends=True)
                          if "Error" not in ln and "error" not in ln and "Traceback" not in ln and "File" not in ln))
    status, _, culprit, _ = _reading(bundle)
    assert (status, culprit) == ("failed", "worker:1")
