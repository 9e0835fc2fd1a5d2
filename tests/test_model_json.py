"""The one Diagnosis model, to JSON and back: what ``run`` and ``diagnose`` write is what every renderer and the
exit-code policy read, and files written by earlier versions still load. Pure and fast."""
from __future__ import annotations

import json
import os

import pytest

from bundles import T0, bundle_records
from distdoctor.model import (Action, Alternative, Attempt, AttemptGoodput, Badput, Category, Diagnosis, Evidence,
                              Finding, Goodput, Position, ResumePoint, SchemaError, Severity, Status, TaskReport,
                              format_clock)

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


def _finding(code: str = "DD103", culprit: str | None = "worker:1") -> Finding:
    return Finding(code=code, category=Category.OOM_HOST, severity=Severity.ERROR, culprit=culprit,
                   summary="worker:1 was OOM-killed", remedy="use less memory", at=T0 + 20.0, confidence="high",
                   evidence=(Evidence("worker:1", T0 + 20.0, "Killed process 4001 (python)", "cause", "kern.log:12"),
                             Evidence("worker:0", T0 + 22.5, "UnavailableError: ... task:1", "consequence"),
                             Evidence(None, None, "no timestamp here", "context")),
                   alternatives=(Alternative(Category.PREEMPTION, "worker:1", "a SIGKILL from outside", "sacct"),))


def _run_diagnosis() -> Diagnosis:
    root = _finding()
    attempts = (
        Attempt(1, T0, T0 + 30.0, Status.FAILED, root, Action.RESTART, "a first OOM gets one restart", 10.0,
                ResumePoint(0, None, None), Position(1, 40), steps=140, exit_code=-9, first_step_at=T0 + 6.0,
                failed_at=T0 + 20.0, checkpoints=("/ckpt",), epoch_starts=((0, T0 + 5.5, 0), (1, T0 + 15.0, 100)),
                restart_class="transient", saved_step=None),
        Attempt(2, T0 + 40.0, T0 + 80.0, Status.SUCCEEDED, None, Action.NONE, "the job succeeded",
                resumed_from=ResumePoint(1, None, "/ckpt")))
    goodput = Goodput(wall_s=80.0, productive_s=50.0, ratio=0.625, badput=Badput(10.0, 5.0, 10.0, 10.0),
                      attempts=(AttemptGoodput(1, 6.0, 9.0, 5.0, 40, 10.0, 10.0, 26.0),
                                AttemptGoodput(2, 5.0, 41.0, 0.0, 0, 0.0, 0.0, None)))
    return Diagnosis(status=Status.SUCCEEDED, root_cause=None, findings=(_finding("DD207"),), detected_at=T0 + 80.0,
                     tasks={"worker:0": TaskReport(exit_code=0, state="exited", steps=300, pid=4000, log="logs/w0.log"),
                            "worker:1": TaskReport(exit_code=0, signal=None, last_progress_at=T0 + 79.0)},
                     command="run", notes=("restarted once",), attempts=attempts, goodput=goodput,
                     task_restarts=({"task": "worker:2", "decision": "restart"},))


def test_a_run_diagnosis_round_trips_through_json():
    d = _run_diagnosis()
    text = json.dumps(d.to_json())
    back = Diagnosis.from_json(json.loads(text))
    assert back == d
    assert back.attempts[0].root_cause.evidence[0].where == "kern.log:12"     # typed evidence, not text
    assert back.attempts[0].outcome().reached == Position(1, 40)


def test_json_keeps_its_fields():
    """Consumers of diagnosis.json keep what they read: the rendered evidence lines beside the typed ones."""
    j = _run_diagnosis().to_json()
    assert set(j) == {"schema_version", "command", "status", "root_cause", "findings", "detected_at", "tasks", "notes",
                      "attempts", "goodput", "task_restarts"}
    f = j["findings"][0]
    assert f["evidence"][0] == f"[worker:1 {format_clock(T0 + 20.0)}] Killed process 4001 (python)"
    assert f["evidence_detail"][1]["role"] == "consequence"
    assert j["attempts"][0]["decision"] == "restart" and j["goodput"]["badput"]["backoff_s"] == 10.0
    # a diagnose (no attempts) writes no attempt fields, as before
    assert "attempts" not in Diagnosis(Status.FAILED, None, (), T0, command="diagnose").to_json()


def test_interrupted_and_stopped_at_end_round_trip():
    """The signal distdoctor received, and a server stopped at the job's end, read back as written; an older file
    (without them) reads as not interrupted, nothing stopped at the end."""
    d = Diagnosis(Status.FAILED, None, (), T0, tasks={"ps:0": TaskReport(exit_code=-15, signal="SIGTERM",
                                                                        stopped_at_end=True)}, interrupted="SIGINT")
    back = Diagnosis.from_json(json.loads(json.dumps(d.to_json())))
    assert back == d and back.exit_code == 130 and back.tasks["ps:0"].ending == "stopped at the job's end"
    assert Diagnosis.from_json({"status": "failed", "tasks": {"ps:0": {"signal": "SIGTERM"}}}).interrupted is None
    assert TaskReport(exit_code=-15, signal="SIGTERM").ending == "killed by SIGTERM"


def test_an_old_run_bundle_diagnosis_loads():
    """tests/corpus/sigkill-run-bundle/diagnosis.json was written before evidence_detail and attempts existed."""
    with open(os.path.join(CORPUS, "sigkill-run-bundle", "diagnosis.json")) as fh:
        raw = json.load(fh)
    assert "evidence_detail" not in raw["root_cause"] and "attempts" not in raw
    d = Diagnosis.from_json(raw)
    rc = d.root_cause
    assert (d.status, rc.category, rc.culprit) == (Status.FAILED, Category.PEER_CRASHED, "worker:1")
    assert [e.render() for e in rc.evidence] == raw["root_cause"]["evidence"]      # read back as written
    assert rc.evidence[0].task == "worker:1" and rc.evidence[1].role == "consequence"
    assert all(e.ts is None or d.detected_at - 86400 < e.ts <= d.detected_at + 60 for e in rc.evidence)
    assert d.attempts == () and d.goodput is None and d.restarted() == ()
    assert Diagnosis.from_json(d.to_json()) == d


def test_an_old_ledger_loads():
    """Attempt records as the first ledger wrote them: root causes with rendered evidence only, fields missing."""
    old = bundle_records(2, "oom")["diagnosis"]
    old["attempts"] = [{"number": 1, "started_at": T0, "ended_at": T0 + 30, "status": "failed",
                        "root_cause": dict(old["root_cause"]), "decision": "restart", "reason": "one restart",
                        "backoff_s": 10, "resumed_from": {"epoch": 0}},
                       {"number": 2, "started_at": T0 + 40, "decision": "stop"}]        # cut short: skipped
    old["goodput"] = {"wall_s": 40, "productive_s": 20, "ratio": 0.5, "badput": {"backoff_s": 10}}
    d = Diagnosis.from_json(old)
    assert [a.number for a in d.attempts] == [1] and d.attempts[0].decision == Action.RESTART
    assert d.attempts[0].root_cause.evidence[0].task == "worker:1"
    assert d.goodput.badput.backoff_s == 10.0 and d.goodput.badput.disruption_s == 0.0
    assert d.restarted() == d.attempts


@pytest.mark.parametrize("doc, message", [
    ([], "expected a JSON object"),
    ({"status": "exploded"}, "'status' is 'exploded'"),
    ({"status": "failed", "tasks": []}, "'tasks' should be a JSON object"),
    ({"status": "failed", "root_cause": "oom"}, "'root_cause' should be an object or null"),
    ({"status": "failed", "attempts": {}}, "'attempts' should be a JSON array"),
])
def test_what_is_not_a_diagnosis_is_said_in_one_line(doc, message):
    with pytest.raises(SchemaError, match=message) as exc:
        Diagnosis.from_json(doc)
    assert "\n" not in str(exc.value)


def test_a_calibrated_probability_round_trips_and_a_bad_one_is_dropped():
    """``probability`` (diagnose's calibrated probability of the cause) reads back as written; a value that is no
    probability (out of 0..1, a string, a bool) reads as absent, never as a number the report would print."""
    f = Finding("DD760", Category.OOM_GPU, Severity.ERROR, None, "s", confidence="high", probability=0.873)
    assert Finding.from_json(json.loads(json.dumps(f.to_json()))) == f
    for bad in (1.7, -0.1, "0.9", True):
        assert Finding.from_json({**f.to_json(), "probability": bad}).probability is None
    assert "probability" not in Finding("DD1", Category.OTHER, Severity.INFO, None, "s").to_json()
