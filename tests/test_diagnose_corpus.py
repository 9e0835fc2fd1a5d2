"""Diagnose every recorded (and hand-made) case in tests/corpus from its logs alone.

Each ``tests/corpus/<case>/`` holds the logs of one job (a folder of task logs, a
``distdoctor run`` bundle, or one combined stream) and ``expected.json``:
``{"status", "category", "culprit"}`` of the root cause, ``"recorded"`` (true for
logs of real TensorFlow runs, false for hand-made ones), ``"source"`` (how it was
made), optionally ``"also"`` (categories that must appear among the findings)
and ``"xfail"`` (a known gap, with the reason).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from distdoctor.diagnose.command import diagnose_paths

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.json").is_file())


def _params():
    for case in CASES:
        exp = json.loads((CORPUS / case / "expected.json").read_text())
        marks = [pytest.mark.xfail(reason=exp["xfail"], strict=False)] if exp.get("xfail") else []
        yield pytest.param(case, exp, id=case, marks=marks)


def test_corpus_is_not_empty():
    assert len(CASES) >= 10


@pytest.mark.parametrize("case, exp", list(_params()))
def test_corpus_case(case, exp):
    diag, _ = diagnose_paths([str(CORPUS / case)], jobs=1, detected_at=0.0)
    d = diag.to_json()
    rc = d["root_cause"] or {}
    assert (d["status"], rc.get("category"), rc.get("culprit")) == (exp["status"], exp["category"], exp["culprit"]), \
        json.dumps(d, indent=1)[:3000]
    cats = {f["category"] for f in d["findings"]}
    assert set(exp.get("also", ())) <= cats
    if rc and rc.get("culprit") is None and d["status"] != "succeeded":
        assert rc.get("candidates"), "an undecided root cause must list its candidates"
        if rc.get("code") == "DD150":   # ... and say what would tell them apart
            assert "stack dump of each candidate" in rc["summary"], rc["summary"]


# The schema `distdoctor run` writes (docs/schema.md): diagnose gives the same keys.
SCHEMA_KEYS = {"schema_version", "command", "status", "root_cause", "findings", "detected_at", "tasks", "notes"}
TASK_KEYS = {"exit_code", "signal", "state", "last_progress_at", "stack"}
FINDING_KEYS = {"code", "category", "culprit", "severity", "summary", "evidence", "remedy", "at"}
EVIDENCE = re.compile(r"^\[(?:[a-z_]+:\d+|job) (?:\d\d:\d\d:\d\d\.\d{3}|--:--:--\.---)\] ")


@pytest.mark.parametrize("case", CASES)
def test_same_schema_and_every_evidence_line_names_task_and_time(case):
    d = json.loads(json.dumps(diagnose_paths([str(CORPUS / case)], jobs=1, detected_at=0.0)[0].to_json()))
    assert set(d) == SCHEMA_KEYS and d["command"] == "diagnose" and d["schema_version"] == 1
    assert d["status"] in ("succeeded", "failed", "hung")
    for task, rep in d["tasks"].items():
        assert TASK_KEYS <= set(rep), (task, sorted(rep))
    for f in d["findings"] + ([d["root_cause"]] if d["root_cause"] else []):
        assert FINDING_KEYS <= set(f), sorted(f)
        for line in f["evidence"]:
            assert EVIDENCE.match(line), line


def test_plain_report_leads_with_the_root_cause():
    """The one text renderer, into a plain file (no terminal: no colours): the verdict, then the root cause."""
    import io

    from rich.console import Console

    from distdoctor.report.terminal import render_diagnosis
    diag, _ = diagnose_paths([str(CORPUS / "sigkill-raw-logs")], jobs=1, detected_at=0.0)
    buf = io.StringIO()
    render_diagnosis(diag, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "\x1b[" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert "FAILED" in lines[1]
    cause = next(i for i, line in enumerate(lines) if "Root cause" in line)
    assert "worker:1" in lines[cause] and cause < next(i for i, line in enumerate(lines) if "(consequence)" in line)
    assert any(line.split()[:2] == ["task", "ended"] for line in lines)


FOREIGN = [c for c in CASES if c.endswith("-foreign")]


@pytest.mark.parametrize("case", FOREIGN)
def test_foreign_run_evidence_quotes_the_culprits_own_log(case):
    """Raw logs of real jobs distdoctor did not supervise (tests/test_diagnose_foreign_runs.py recorded them): the
    root cause quotes a line of the culprit's own log -- even when that log just stops (its last line)."""
    exp = json.loads((CORPUS / case / "expected.json").read_text())
    if not exp["culprit"]:
        pytest.skip("no culprit")
    d = diagnose_paths([str(CORPUS / case)], jobs=1, detected_at=0.0)[0].to_json()
    own = CORPUS / case / (exp["culprit"].replace(":", "-") + ".log")
    text = own.read_text() if own.exists() else (CORPUS / case / "console.txt").read_text()
    quoted = [re.sub(r"^\[[^\]]+\] ", "", e) for e in d["root_cause"]["evidence"] if e.startswith(f"[{exp['culprit']} ")]
    assert any(q and q[:80] in text for q in quoted), d["root_cause"]["evidence"]


def test_a_peer_seen_leaving_after_both_finished_is_the_teardown_not_a_crash():
    """A real healthy run (TF 2.21): worker:1 finished and exited first, and worker:0, still shutting down, printed the
    coordination service's "The tasks have crashed" naming it. Both logs end in the last step: the job succeeded, and
    the line is read as the teardown (said as info, nothing to settle), not as a peer that crashed."""
    d = diagnose_paths([str(CORPUS / "healthy-chief-pause-teardown")], jobs=1, detected_at=0.0)[0].to_json()
    assert d["status"] == "succeeded" and d["root_cause"] is None
    assert not [f for f in d["findings"] if f["severity"] != "info"], d["findings"]
    said = [f for f in d["findings"] if f["code"] == "DD601"]
    assert said and "teardown, not a failure" in said[0]["summary"] and "worker:1 finished first" in said[0]["summary"]
    assert not [n for n in d["notes"] if n.startswith("what would settle it")], d["notes"]


def test_the_same_line_before_the_reporters_last_step_is_still_a_warning(tmp_path):
    """The teardown reading needs the line after its writer's own last step: the same logs with worker:0's report
    moved, with its time, before the first epoch (a peer lost while this task still trained) keep the warning."""
    src = CORPUS / "healthy-chief-pause-teardown"
    w0 = (src / "worker-0.log").read_text().splitlines(keepends=True)
    report = [i for i, line in enumerate(w0) if "StartAbort" in line or "The tasks have crashed" in line
              or line.rstrip().endswith("/job:worker/replica:0/task:1")]
    assert len(report) == 3 and report == list(range(report[0], report[0] + 3))
    moved = w0[report[0]:report[-1] + 1]
    rest = w0[:report[0]] + w0[report[-1] + 1:]
    first_epoch = next(i for i, line in enumerate(rest) if "Epoch 1/3" in line)
    stamp = rest[first_epoch].split(" ", 1)[0]        # the run's time-stamp prefix: the report now comes at that time
    moved = [stamp + " " + line.split(" ", 1)[1] for line in moved]
    (tmp_path / "worker-0.log").write_text("".join(rest[:first_epoch] + moved + rest[first_epoch:]))
    (tmp_path / "worker-1.log").write_text((src / "worker-1.log").read_text())
    d = diagnose_paths([str(tmp_path)], jobs=1, detected_at=0.0)[0].to_json()
    assert any(f["code"] == "DD601" and f["severity"] in ("warning", "error") for f in d["findings"]
               + ([d["root_cause"]] if d["root_cause"] else [])), d["findings"]


def test_a_worker_lost_by_a_parameter_server_job_that_finished_is_no_teardown():
    """ParameterServerStrategy goes on without a lost worker: the coordinator's report of it (recorded real run,
    worker:1 SIGKILLed mid-training) stays a warning about a job that succeeded, never the teardown."""
    d = diagnose_paths([str(CORPUS / "ps-kill-worker-foreign")], jobs=1, detected_at=0.0)[0].to_json()
    assert d["status"] == "succeeded"
    about = [f for f in d["findings"] if f["culprit"] == "worker:1"]
    assert about and all(f["severity"] == "warning" for f in about), about
    assert not any("teardown" in f["summary"] for f in d["findings"]), d["findings"]
