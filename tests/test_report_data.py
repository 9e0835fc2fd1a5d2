"""Unit tests of the report's page model, from small hand-built bundles (no TensorFlow, no browser)."""
from __future__ import annotations

import json
import os
import sys

import pytest

from bundles import T0, bundle_records, make_bundle, write_bundle
from distdoctor.cli import main
from distdoctor.errors import InputError
from distdoctor.report.bundle import load_bundle
from distdoctor.model import Diagnosis, Evidence
from distdoctor.report.data import GROUP_MIN_TASKS, build_page, compress_tasks
from distdoctor.report.page import LanePhase, Mark, TaskOutcome
from distdoctor.report.series import aggregate, downsample, step_times, Series


def page_of(tmp_path, n: int, scenario: str, **kw):
    return build_page(load_bundle(make_bundle(str(tmp_path / f"{scenario}-{n}"), n, scenario)), **kw)


# -- small pure pieces ------------------------------------------------------------

@pytest.mark.parametrize("raw, task, clock, text, role", [
    ("[worker:1 12:03:04.120] OOM when allocating", "worker:1", "12:03:04.120", "OOM when allocating", "cause"),
    ("[worker:0 12:03:05.001] (consequence) Socket closed", "worker:0", "12:03:05.001", "Socket closed", "consequence"),
    ("[job --:--:--.---] no timestamps", None, "--:--:--.---", "no timestamps", "cause"),
    ("free text without a prefix", None, "--:--:--.---", "free text without a prefix", "context"),
])
def test_rendered_evidence_of_older_files_is_read_back(raw, task, clock, text, role):
    """A diagnosis.json written before evidence_detail: its rendered lines give typed evidence, the time of day put
    back on the verdict's day (at or before it)."""
    from distdoctor.model import format_clock
    near = T0 + 13 * 3600.0
    e = Evidence.from_line(raw, near)
    assert (e.task, format_clock(e.ts), e.text, e.role) == (task, clock, text, role)
    assert e.ts is None or near - 86400 < e.ts <= near + 60
    if e.ts is not None:
        assert Evidence.from_line(e.render(), near) == e      # and it renders back to the same line


@pytest.mark.parametrize("tasks, expect", [
    ([f"worker:{i}" for i in range(3, 64)], "worker:3-63"),
    (["worker:0"] + [f"worker:{i}" for i in range(2, 9)], "worker:0,2-8"),
    (["worker:5", "worker:3", "worker:4", "worker:9"], "worker:3-5,9"),
    (["ps:0", "ps:1", "chief:0"], "chief:0; ps:0-1"),
])
def test_compress_tasks(tasks, expect):
    assert compress_tasks(tasks) == expect


def test_step_times_skip_startup_and_show_a_final_stall_as_a_climb():
    pts = [(0.0, 0), (5.0, 10), (6.0, 20), (7.0, 30), (8.0, 30), (9.0, 30), (12.0, 30)]
    got = step_times(pts)
    assert got[:2] == [(6.0, 0.1), (7.0, 0.1)]          # 0 -> 10 took start-up too: skipped
    assert got[2:] == [(8.0, 1.0), (9.0, 2.0), (12.0, 5.0)]   # the step in flight, growing
    assert step_times(pts, open_end=False) == got[:2]   # a task that finished normally: no climb


def test_step_times_slow_step_in_the_middle_shows_when_it_completes():
    pts = [(0.0, 1), (1.0, 2), (2.0, 3), (2.5, 3), (9.0, 4), (10.0, 5)]
    assert step_times(pts) == [(2.0, 1.0), (9.0, 7.0), (10.0, 1.0)]   # 1 -> 2 is the first change: skipped


def test_downsample_keeps_peaks():
    pts = [(float(i), 1.0) for i in range(1000)]
    pts[517] = (517.0, 99.0)
    out = downsample(pts, 50)
    assert len(out) <= 50 and max(v for _, v in out) == 99.0


def test_aggregate_gives_median_and_band():
    a = Series(((0.5, 1.0), (1.5, 1.0)))
    b = Series(((0.5, 3.0), (1.5, 5.0)))
    c = Series(((0.5, 2.0),))
    g = aggregate([a, b, c], 0.0, 2.0, bins=2)
    assert [v for _, v in g.points] == [2.0, 3.0]
    assert g.low == (1.0, 1.0) and g.high == (3.0, 5.0)


# -- pages of the three stories ------------------------------------------------------

def test_stall_page(tmp_path):
    page = page_of(tmp_path, 4, "stall")
    v = page.verdict
    assert (v.status, v.title, v.culprits) == ("hung", "Hung", ("worker:1",))
    assert "slow_input_fn" in v.headline and v.root.remedy.startswith("Look at slow_input_fn")
    assert [e.role for e in v.root.evidence] == ["cause", "cause", "consequence"]
    # the culprit's lane comes first; every task has its own lane in a small job
    assert [lane.key for lane in page.lanes] == ["worker:1", "worker:0", "worker:2", "worker:3"]
    culprit, peer = page.lanes[0], page.lanes[1]
    assert culprit.culprit and not peer.culprit
    kinds = [m.kind for m in culprit.marks]
    for k in (Mark.START, Mark.CONNECTED, Mark.FIRST_STEP, Mark.STALL, Mark.HANG, Mark.SIGNAL, Mark.EXIT):
        assert k in kinds
    assert kinds.index(Mark.START) < kinds.index(Mark.CONNECTED) < kinds.index(Mark.FIRST_STEP) < kinds.index(Mark.STALL)
    # each event carries its log line / what the task was doing
    connected = next(m for m in culprit.marks if m.kind == Mark.CONNECTED)
    assert "Enabled multi-worker collective ops" in connected.line
    stall = next(m for m in culprit.marks if m.kind == Mark.STALL)
    assert "train.py:88 in slow_input_fn" in stall.detail and "loss" in stall.line
    # phases: the culprit stalls, its peers wait
    assert [s.phase for s in culprit.spans][-1] == LanePhase.STALLED
    assert [s.phase for s in peer.spans][-1] == LanePhase.WAITING
    assert culprit.spans[-1].start == pytest.approx(T0 + 20.0, abs=0.01)
    assert culprit.outcome == peer.outcome == TaskOutcome.STOPPED
    # the step-time series climbs during the stall; job markers for stall, hang and the root cause
    assert culprit.metrics.step_time.peak() > 15
    # CPU over time: during the stall the culprit spins one core in Python, its peers sleep in the collective
    stalled_at = culprit.spans[-1].start
    late = lambda lane: [v for t, v in lane.metrics.cpu.points if t > stalled_at + 2]
    assert late(culprit) and min(late(culprit)) > 80 and late(peer) and max(late(peer)) < 20
    assert max(v for _, v in peer.metrics.cpu.points) > 120      # busy (1.6 cores) while training
    assert {m.kind for m in page.markers} == {Mark.STALL, Mark.HANG, Mark.FAULT}
    # stacks and log tails: the culprit's first, and the facts of the end
    assert "slow_input_fn" in culprit.facts.stack
    assert culprit.facts.where == "python" and culprit.facts.location == "train.py:88 in slow_input_fn"
    assert culprit.facts.tail and "\x1b" not in "".join(l.text for l in culprit.facts.tail)


def test_oom_page(tmp_path):
    page = page_of(tmp_path, 4, "oom")
    assert page.verdict.status == "failed" and page.verdict.root.category == "oom_host"
    assert [f.code for f in page.findings] == ["DD101"]        # the root cause is not repeated
    culprit = page.lanes[0]
    assert culprit.key == "worker:1" and culprit.outcome == TaskOutcome.FAILED
    assert culprit.metrics.rss.peak() > 6.5 * (1 << 30)
    assert any(m.kind == Mark.EXIT and m.label == "signal SIGKILL" and m.line == "Killed" for m in culprit.marks)
    for peer in page.lanes[1:]:
        assert peer.outcome == TaskOutcome.FAILED and peer.facts.exit_code == 1
        symptoms = [m for m in peer.marks if m.kind == Mark.SYMPTOM]
        assert symptoms and any("task:1" in m.line for m in symptoms)
        assert peer.spans[-1].phase == LanePhase.WAITING       # no progress once the culprit died


def test_healthy_page(tmp_path):
    page = page_of(tmp_path, 3, "healthy")
    v = page.verdict
    assert (v.status, v.root, v.culprits) == ("succeeded", None, ())
    assert v.headline == "All 3 tasks finished normally."
    assert page.markers == () and page.findings == ()
    for lane in page.lanes:
        assert lane.outcome == TaskOutcome.OK
        assert {s.phase for s in lane.spans} == {LanePhase.STARTING, LanePhase.CONNECTED, LanePhase.TRAINING}
        assert sum(1 for m in lane.marks if m.kind == Mark.EPOCH) == 3
        assert lane.metrics.step_time.peak() < 0.5           # no climb after a normal finish


def test_tail_is_longer_for_the_culprit(tmp_path):
    rec = bundle_records(3, "stall")
    rec["logs"] = {name: [f"2026-11-21T18:00:{i % 60:02d}.000000+0000 line {i} <x> & y" for i in range(500)]
                   for name in rec["logs"]}
    page = build_page(load_bundle(write_bundle(str(tmp_path / "b"), rec)))
    culprit, other = page.lanes[0], page.lanes[1]
    assert len(culprit.facts.tail) == 200 and len(other.facts.tail) == 40
    assert culprit.facts.tail[-1].text == "line 499 <x> & y" and culprit.facts.log_lines == 500


# -- grouping ----------------------------------------------------------------------------

def test_256_tasks_collapse_into_groups(tmp_path):
    page = page_of(tmp_path, 256, "stall")
    assert len(page.tasks) == 256 and len(set(page.tasks)) == 256
    assert [lane.label for lane in page.lanes] == ["worker:1", "worker:0,2-255 (255 tasks, identical)"]
    group = page.lanes[1]
    assert group.group and group.facts.task == "worker:0" and len(group.members) == 255
    start = next(m for m in group.marks if m.kind == Mark.START)
    assert start.first is not None and start.last - start.first > 3.0   # the members' start times spread
    assert group.metrics.rss.high and len(group.metrics.rss.low) == len(group.metrics.rss.points)


def test_groups_split_by_behaviour(tmp_path):
    rec = bundle_records(64, "oom")
    for i in range(40, 64):          # these exited 2 instead of 1: a different story, a different lane
        rec["diagnosis"]["tasks"][f"worker:{i}"]["exit_code"] = 2
    page = build_page(load_bundle(write_bundle(str(tmp_path / "b"), rec)))
    assert [lane.label for lane in page.lanes] == ["worker:1", "worker:0,2-39 (39 tasks, identical)",
                                                    "worker:40-63 (24 tasks, identical)"]


def test_small_jobs_keep_one_lane_per_task(tmp_path):
    page = page_of(tmp_path, GROUP_MIN_TASKS, "healthy")
    assert len(page.lanes) == GROUP_MIN_TASKS and not any(lane.group for lane in page.lanes)


# -- degraded and bad input ---------------------------------------------------------------------

def test_bundle_without_samples_or_events_still_builds(tmp_path):
    d = write_bundle(str(tmp_path / "b"), bundle_records(3, "oom"), parts=("diagnosis", "logs"))
    page = build_page(load_bundle(d))
    assert any("samples.jsonl" in c for c in page.caveats) and any("events.jsonl" in c for c in page.caveats)
    culprit = page.lanes[0]
    kinds = {m.kind for m in culprit.marks}
    assert {Mark.START, Mark.CONNECTED, Mark.FIRST_STEP, Mark.EXIT} <= kinds   # rebuilt from the log
    assert culprit.metrics.rss.empty and not culprit.metrics.step_time.empty   # steps from progress lines


def test_torn_jsonl_lines_are_skipped(tmp_path):
    d = make_bundle(str(tmp_path / "b"), 2, "healthy")
    with open(os.path.join(d, "samples.jsonl"), "a") as fh:
        fh.write('{"ts": 17952840\n[1, 2]\n')
    data = load_bundle(d)
    assert any("skipped 2" in c for c in data.caveats)


@pytest.mark.parametrize("setup, message", [
    (lambda d: None, "no such folder"),
    (lambda d: open(d, "w").close(), "not a folder"),
    (lambda d: os.makedirs(d), "no diagnosis.json"),
    (lambda d: (os.makedirs(d), open(os.path.join(d, "diagnosis.json"), "w").write("{not json")), "not valid JSON"),
    (lambda d: (os.makedirs(d), open(os.path.join(d, "diagnosis.json"), "w").write('{"status": "fine"}')), "'status'"),
    (lambda d: (os.makedirs(d), open(os.path.join(d, "diagnosis.json"), "w").write("[1]")), "JSON object"),
])
def test_bad_bundles_raise_input_error(tmp_path, setup, message):
    d = str(tmp_path / "bundle")
    setup(d)
    with pytest.raises(InputError, match=message):
        load_bundle(d)


# -- the command ----------------------------------------------------------------------------------

def test_report_command_writes_into_the_bundle(tmp_path, capsys):
    d = make_bundle(str(tmp_path / "b"), 2, "stall")
    assert main(["report", d]) == 0
    assert os.path.isfile(os.path.join(d, "report.html"))
    assert "culprit worker:1" in capsys.readouterr().out
    out = str(tmp_path / "elsewhere" / "r.html")
    assert main(["report", d, "--html", out]) == 0 and os.path.isfile(out)


@pytest.mark.parametrize("args", [["report", "/nonexistent/bundle"], ["report", "{tmp}/empty"]])
def test_report_command_bad_input_is_one_line(tmp_path, capsys, args):
    os.makedirs(tmp_path / "empty")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("distdoctor: error:") and err.count("\n") == 1 and "Traceback" not in err


def test_report_from_plain_logs_uses_diagnose(tmp_path, monkeypatch, capsys):
    """A fake ``diagnose_paths`` that honours its contract: (Diagnosis, JobObservation)."""
    import types
    from distdoctor.diagnose.observations import JobObservation, MemorySample, TaskObservation
    from distdoctor.model import Category, Diagnosis, Finding, Severity, Status, TaskReport

    d = make_bundle(str(tmp_path / "b"), 2, "oom")
    logs = [os.path.join(d, "logs", n) for n in ("worker-0.log", "worker-1.log")]

    def diagnose_paths(paths, task_map=None):
        assert sorted(paths) == sorted(logs)
        finding = Finding(code="DD103", category=Category.OOM_HOST, severity=Severity.ERROR, culprit="worker:1",
                          summary="worker:1 ran out of memory", remedy="Use less memory.", at=T0 + 20)
        diag = Diagnosis(status=Status.FAILED, root_cause=finding, findings=(finding,), detected_at=T0 + 30,
                         tasks={"worker:0": TaskReport(exit_code=1, log=logs[0]),
                                "worker:1": TaskReport(signal="SIGKILL", log=logs[1])}, command="diagnose")
        obs = JobObservation(tasks={
            "worker:0": TaskObservation(task="worker:0", log_path=logs[0]),
            "worker:1": TaskObservation(task="worker:1", log_path=logs[1],
                                        memory=(MemorySample(T0 + 10, 1 << 30), MemorySample(T0 + 19, 5 << 30))),
        }, source="logs")
        return diag, obs

    fake = types.ModuleType("distdoctor.diagnose.command")
    fake.diagnose_paths = diagnose_paths
    fake.register_cli = lambda sub: None
    monkeypatch.setitem(sys.modules, "distdoctor.diagnose.command", fake)
    monkeypatch.chdir(tmp_path)
    assert main(["report", *logs]) == 0
    html = (tmp_path / "distdoctor-report.html").read_text()
    assert 'data-status="failed"' in html and 'data-task="worker:1"' in html and "ran out of memory" in html
    assert "report built from logs alone" in html
    assert "distdoctor-report.html" in capsys.readouterr().out


def test_write_report_default_path(tmp_path):
    from distdoctor.report.command import write_report
    d = make_bundle(str(tmp_path / "b"), 2, "healthy")
    path = write_report(d)
    assert path == os.path.join(d, "report.html")
    with open(path) as fh:
        assert 'data-status="succeeded"' in fh.read()
    with pytest.raises(InputError):
        write_report(str(tmp_path / "missing"))
    json.loads(open(os.path.join(d, "diagnosis.json")).read())   # the bundle itself is left as it was


def test_report_from_logs_without_diagnose_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distdoctor.diagnose.command", None)   # as if not installed
    log = tmp_path / "worker-0.log"
    log.write_text("hello\n")
    assert main(["report", str(log)]) == 2
    err = capsys.readouterr().err
    assert "needs `distdoctor diagnose`" in err and err.count("\n") == 1


def test_logs_without_timestamps_still_make_a_page(tmp_path):
    from distdoctor.diagnose.observations import JobObservation, TaskObservation
    from distdoctor.report.command import write_logs_report
    log = tmp_path / "w0.log"
    log.write_text("Epoch 1/2\nTraceback (most recent call last):\n  File \"t.py\", line 1, in <module>\nValueError: bad <input>\n")
    diag = {"schema_version": 1, "command": "diagnose", "status": "failed", "detected_at": T0,
            "root_cause": {"code": "DD104", "category": "user_code_error", "culprit": "worker:0", "severity": "error",
                           "summary": "worker:0 raised ValueError", "evidence": ["[worker:0 --:--:--.---] ValueError: bad <input>"],
                           "remedy": "Fix the code.", "at": None},
            "findings": [], "tasks": {"worker:0": {"exit_code": None, "state": "unknown", "log": str(log)}}, "notes": []}
    obs = JobObservation(tasks={"worker:0": TaskObservation(task="worker:0", log_path=str(log))}, source="logs")
    out = write_logs_report(Diagnosis.from_json(diag), obs, str(tmp_path / "r.html"))
    html = open(out).read()
    assert 'data-status="failed"' in html and 'data-task="worker:0"' in html and "bad &lt;input&gt;" in html


def test_long_runs_are_thinned_but_keep_state_changes(tmp_path):
    from distdoctor.report.bundle import MAX_SAMPLES
    rec = bundle_records(1, "healthy")
    n = 5 * MAX_SAMPLES
    rec["samples"] = [{"ts": T0 + i, "task": "worker:0", "state": "stopped" if i == 3001 else "running",
                       "rss": 1 << 20, "cpu": i * 0.5, "calls": i, "steps": i} for i in range(n)]
    data = load_bundle(write_bundle(str(tmp_path / "b"), rec))
    assert MAX_SAMPLES <= len(data.samples) <= 2 * MAX_SAMPLES + 2
    assert data.samples[-1].ts == T0 + n - 1
    assert any(s.state == "stopped" for s in data.samples)


# -- recorded runs: cluster connect ---------------------------------------------------

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


def _connects(page):
    return {lane.key: [m for m in lane.marks if m.kind == Mark.CONNECTED] for lane in page.lanes}


def _logs_page(case: str, *parts: str):
    from distdoctor.diagnose.command import diagnose_paths
    from distdoctor.report.bundle import bundle_from_observation
    path = os.path.join(CORPUS, case, *parts)
    diag, obs = diagnose_paths([path], jobs=1)
    return build_page(bundle_from_observation(diag, obs, path))


def test_recorded_healthy_run_has_one_connect_mark_per_task():
    # Real `distdoctor run` bundle of TF 2.21 with its INFO lines on (TF_CPP_MIN_LOG_LEVEL=0). Its events.jsonl
    # holds three "connected" events for worker:0 (the coordination leader also logs worker:1 registering).
    bundle_page = build_page(load_bundle(os.path.join(CORPUS, "healthy-tf-info")))
    logs_page = _logs_page("healthy-tf-info", "logs")
    for page in (bundle_page, logs_page):
        assert page.verdict.status == "succeeded"
        connects = _connects(page)
        assert sorted(connects) == ["worker:0", "worker:1"]
        for task, marks in connects.items():
            assert len(marks) == 1, (task, marks)
            m = marks[0]
            assert m.label == "joined the cluster"
            assert m.line.endswith("coordination_service_agent.cc:245] Coordination agent has successfully connected.")
        lane = {lane.key: lane for lane in page.lanes}
        # worker:0 joined at 20:27:40.800, worker:1 at 20:27:40.818 (their agents' lines)
        assert connects["worker:0"][0].ts == pytest.approx(1795292860.80, abs=0.01)
        assert connects["worker:1"][0].ts == pytest.approx(1795292860.818, abs=0.01)
        for l in lane.values():
            kinds = [m.kind for m in l.marks]
            assert kinds.index(Mark.START) < kinds.index(Mark.CONNECTED) < kinds.index(Mark.FIRST_STEP)
            assert LanePhase.CONNECTED in {s.phase for s in l.spans}
            # the start-up "Waiting for 1/2 tasks to connect" was answered: no symptom on a healthy lane
            assert not [m for m in l.marks if m.kind == Mark.SYMPTOM]


def test_recorded_stall_shows_connects_and_no_startup_straggler():
    page = _logs_page("stall-tf-info")
    assert page.verdict.status == "hung" and set(page.verdict.culprits) == {"worker:0", "worker:1"}
    for task, marks in _connects(page).items():
        assert len(marks) == 1 and "Coordination agent has successfully connected" in marks[0].line
    assert not [m for lane in page.lanes for m in lane.marks if m.label == "waiting for peers"]


def test_default_tf_log_level_has_no_connect_line_and_none_is_invented():
    # TF_CPP_MIN_LOG_LEVEL=1 (set by the recorded workers): TF 2.21 prints nothing when a task joins.
    page = _logs_page("healthy")
    assert all(marks == [] for marks in _connects(page).values())


def test_report_command_on_recorded_logs_and_open(tmp_path, monkeypatch, capsys):
    import webbrowser
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    out = tmp_path / "r.html"
    assert main(["report", os.path.join(CORPUS, "sigkill-raw-logs"), "--html", str(out), "--open"]) == 0
    html = out.read_text()
    assert 'data-status="failed"' in html and 'data-culprit="worker:1"' in html
    assert opened == ["file://" + str(out)]
    assert "culprit worker:1" in capsys.readouterr().out
