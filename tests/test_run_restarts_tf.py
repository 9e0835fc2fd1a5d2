"""``distdoctor run --restarts`` on real MultiWorkerMirroredStrategy jobs with real faults.

* a worker SIGKILLed once (an eviction) restarts the job, which resumes from its
  BackupAndRestore backup at the saved epoch and succeeds;
* a worker that raises the same exception on every attempt gets one attempt.
"""
from __future__ import annotations

import json

import pytest

from conftest import dd_run, requires_tf, trainer

pytestmark = [pytest.mark.tf, requires_tf]


def test_a_killed_worker_restarts_and_resumes_from_backup_and_restore(tmp_path):
    backup = tmp_path / "backup"
    r = dd_run("restart-tf-kill", ["--restarts", "2", "--restart-delay", "0.5", "--failure-grace", "3"],
               trainer("--fault", "sigkill", "--fault-epoch", "2", "--fault-step", "8", "--epochs", "3",
                       "--steps", "20", "--backup", str(backup), "--fault-once", str(tmp_path / "fired")),
               timeout=400)
    d = r.diag
    assert d is not None, r.stderr[-3000:]
    a = d["attempts"]
    assert (d["status"], r.rc, len(a)) == ("succeeded", 0, 2), json.dumps(a, indent=1)[:3000]
    assert a[0]["decision"] == "restart" and a[0]["root_cause"]["culprit"] == "worker:1"
    assert a[0]["root_cause"]["category"] == "peer_crashed"
    assert a[0]["resumed_from"] == {"epoch": 0, "step": None, "checkpoint": None}
    # epoch 1 was saved; the kill came in epoch 2: attempt 2 starts at 0-based epoch 1 ("Epoch 2/3") from the backup
    assert a[1]["resumed_from"]["epoch"] == 1, a[1]
    assert a[1]["resumed_from"]["checkpoint"] == str(backup)
    assert a[1]["decision"] == "none" and a[1]["root_cause"] is None
    assert str(backup) in a[0]["checkpoints"]
    assert "the job writes no checkpoint" not in r.stderr
    first_epoch = next(ln for ln in (r.bundle / "logs" / "worker-0.log").read_text().splitlines() if "Epoch " in ln)
    assert first_epoch.endswith("Epoch 2/3")
    g = d["goodput"]
    assert g["attempts"][0]["failure_to_next_step_s"] > a[0]["backoff_s"]
    assert 0 < g["ratio"] < 1


def test_the_same_exception_on_every_attempt_gets_one_attempt(tmp_path):
    r = dd_run("restart-tf-exception", ["--restarts", "2", "--restart-delay", "0.5"],
               trainer("--fault", "exception", "--backup", str(tmp_path / "backup")), timeout=300)
    d = r.diag
    assert d is not None, r.stderr[-3000:]
    assert (d["status"], r.rc) == ("failed", 1)
    assert [x["decision"] for x in d["attempts"]] == ["stop"]
    assert d["attempts"][0]["root_cause"]["category"] == "user_code_error"
    assert "a restart would fail the same way" in d["attempts"][0]["reason"]
    assert not (r.bundle / "attempts").exists()


def test_an_outside_sigterm_saves_a_checkpoint_and_the_restart_resumes_from_it(tmp_path):
    """worker:1 gets SIGTERM (a preemption notice); TF's PreemptionCheckpointHandler saves on every worker and
    exits 42; distdoctor calls it a preemption, restarts, and the job restores the saved step."""
    ckpt = tmp_path / "ckpt"
    r = dd_run("restart-tf-sigterm", ["--restarts", "1", "--restart-delay", "0.5", "--failure-grace", "5"],
               trainer("--loop", "custom", "--fault", "sigterm", "--fault-step", "25", "--steps", "30",
                       "--preempt-dir", str(ckpt), "--fault-once", str(tmp_path / "fired")), timeout=400)
    d = r.diag
    assert d is not None, r.stderr[-3000:]
    a = d["attempts"]
    assert (d["status"], r.rc, [x["decision"] for x in a]) == ("succeeded", 0, ["restart", "none"]), \
        json.dumps(a, indent=1)[:3000]
    assert a[0]["root_cause"]["category"] == "preemption" and a[0]["root_cause"]["code"] == "DD108"
    assert "saved a checkpoint after a termination notice" in a[0]["root_cause"]["summary"]
    assert a[0]["saved_step"] == 26
    assert a[1]["resumed_from"] == {"epoch": None, "step": 26, "checkpoint": str(ckpt)}
    assert "restored at step 26" in (r.bundle / "logs" / "worker-0.log").read_text()
