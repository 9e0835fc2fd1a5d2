"""Pure parts of distdoctor.notify: event formats, thresholds, the memory forecast. Plain numbers."""
from __future__ import annotations

import datetime as dt

import pytest

from distdoctor.notify import AlertEvent, NotifyUsageError
from distdoctor.notify.alerts import alert_name, iso8601, to_alertmanager, to_json, to_slack
from distdoctor.notify.thresholds import (Crossing, CrossingWatch, TaskResources, Thresholds, judge_disk, judge_task,
                                          parse_thresholds, step_baseline, time_to_limit)

GiB = 1 << 30
T0 = 1_800_000_000.0

HANG = AlertEvent(event="hang_declared", job="mnist", at=T0 + 20, since=T0, status="hung", severity="critical",
                  category="hang_stalled_worker", code="DD201", culprit="worker:1",
                  summary="1 task(s) wait in a TensorFlow collective while worker:1 is idle outside TensorFlow",
                  first_failure="train.py:93 in inject", bundle="/runs/x", report="/runs/x/report.html",
                  details=(("waiting", "worker:0"),))


def test_json_body_has_every_field_and_a_zoned_time():
    body = to_json(HANG)
    assert {"event", "job", "status", "category", "code", "culprit", "summary", "first_failure", "at", "bundle",
            "report"} <= set(body)
    assert body["culprit"] == "worker:1" and body["event"] == "hang_declared" and body["details"] == {"waiting": "worker:0"}
    at = dt.datetime.fromisoformat(body["at"])
    assert at.tzinfo is not None and at.timestamp() == pytest.approx(T0 + 20)


def test_slack_text_names_culprit_category_and_bundle():
    text = to_slack(HANG)["text"]
    assert "*HANG*" in text and "`worker:1`" in text and "hang_stalled_worker" in text and "/runs/x" in text
    assert "> train.py:93 in inject" in text


def test_alertmanager_payload_labels_and_times():
    [alert] = to_alertmanager(HANG)
    assert alert["labels"] == {"alertname": "DistdoctorHangDeclared", "job": "mnist", "severity": "critical",
                               "event": "hang_declared", "culprit": "worker:1", "category": "hang_stalled_worker",
                               "code": "DD201"}
    assert alert["startsAt"] == iso8601(T0) and "endsAt" not in alert
    assert alert["annotations"]["first_failure"] == "train.py:93 in inject"
    resolved = AlertEvent(event="threshold", job="j", at=T0 + 60, since=T0, resolved=True, culprit="worker:0",
                          details=(("threshold", "mem"),))
    [a] = to_alertmanager(resolved)
    assert a["endsAt"] == iso8601(T0 + 60) and a["labels"]["threshold"] == "mem"


def test_unknown_event_is_rejected():
    with pytest.raises(ValueError):
        AlertEvent(event="bogus", job="j", at=T0)
    assert alert_name("gave_up") == "DistdoctorGaveUp"


@pytest.mark.parametrize("spec,field,value", [
    ("mem=80%", "mem", 0.8), ("mem=0.5", "mem", 0.5), ("gpu_mem=95%", "gpu_mem", 0.95),
    ("disk_free=5GiB", "disk_free", 5 * GiB), ("disk_free=500MB", "disk_free", 500_000_000),
    ("step_time=3x", "step_time", 3.0), ("mem_eta=2m", "mem_eta", 120.0), ("mem=off", "mem", None),
])
def test_parse_thresholds(spec, field, value):
    assert getattr(parse_thresholds([spec]), field) == value


def test_parse_many_and_defaults():
    th = parse_thresholds(["mem=90%,gpu_mem=95%,disk_free=5GiB,step_time=3x"])
    assert (th.mem, th.gpu_mem, th.disk_free, th.step_time, th.mem_eta) == (0.9, 0.95, 5 * GiB, 3.0, 120.0)
    assert parse_thresholds([]) == Thresholds()


@pytest.mark.parametrize("spec,msg", [
    ("mem=150%", "at most 100"), ("mem=lots", "percentage"), ("disk_free=5 parsecs", "size"),
    ("step_time=0.5x", "above 1"), ("cpu=90%", "unknown threshold"), ("mem", "NAME=VALUE"), ("mem_eta=-3s", "duration"),
])
def test_bad_threshold_is_a_usage_error(spec, msg):
    with pytest.raises(NotifyUsageError, match=msg):
        parse_thresholds([spec])


def test_memory_share_and_gpu_memory():
    th = Thresholds()
    ok = TaskResources("worker:0", T0, rss_bytes=8 * GiB, mem_limit_bytes=10 * GiB)
    assert judge_task(ok, th, None) == []
    hot = TaskResources("worker:1", T0, rss_bytes=int(9.5 * GiB), mem_limit_bytes=10 * GiB,
                        gpu_mem_bytes=79 * GiB, gpu_mem_total_bytes=80 * GiB)
    kinds = {c.kind: c for c in judge_task(hot, th, None)}
    assert set(kinds) == {"mem", "gpu_mem"}
    assert "95%" in kinds["mem"].summary and "worker:1" in kinds["mem"].summary


def test_step_time_needs_a_sustained_slowdown():
    th = Thresholds(step_time=3.0)
    base = step_baseline([[0.5, 0.3, 0.2] + [0.1] * 20, [0.1] * 23])
    assert base == pytest.approx(0.1)
    one_slow = TaskResources("worker:0", T0, recent_step_s=(0.1, 0.1, 0.1, 0.1, 0.9))
    assert judge_task(one_slow, th, base) == []
    slow = TaskResources("worker:0", T0, recent_step_s=(0.35, 0.4, 0.3, 0.5, 0.4))
    [c] = judge_task(slow, th, base)
    assert c.kind == "step_time" and c.value == pytest.approx(4.0)
    assert step_baseline([[0.1] * 5]) is None  # too few steps yet


def test_forecast_of_a_steady_climb():
    # 20 MiB/s from 1 GiB, sampled every 0.5 s for 20 s; limit 2 GiB
    series = [(T0 + i * 0.5, GiB + int(i * 0.5 * 20 * (1 << 20))) for i in range(41)]
    now = series[-1][0]
    eta = time_to_limit(series, 2 * GiB, now)
    assert eta == pytest.approx((2 * GiB - series[-1][1]) / (20 * (1 << 20)), rel=0.01)
    r = TaskResources("worker:1", now, rss_bytes=series[-1][1], mem_limit_bytes=2 * GiB, memory=tuple(series))
    [c] = judge_task(r, Thresholds(), None)
    assert c.kind == "mem_eta" and "worker:1 reaches its memory limit" in c.summary and "in about 31 s" in c.summary


@pytest.mark.parametrize("series", [
    [(T0 + i, GiB) for i in range(30)],                                            # flat
    [(T0 + i, GiB + (i % 2) * 200 * (1 << 20)) for i in range(30)],                # sawtooth of a healthy job
    [(T0 + i, GiB - i * (1 << 20)) for i in range(30)],                            # falling
    [(T0 + i, GiB + i * (1 << 20)) for i in range(5)],                             # too short
])
def test_no_forecast_without_a_steady_climb(series):
    assert time_to_limit(series, 2 * GiB, series[-1][0]) is None


def test_slow_climb_is_beyond_the_horizon():
    series = [(T0 + i, GiB + i * (1 << 20)) for i in range(30)]  # 1 MiB/s, 1 GiB left: ~17 min
    r = TaskResources("worker:0", series[-1][0], mem_limit_bytes=2 * GiB, memory=tuple(series))
    assert judge_task(r, Thresholds(), None) == []


def test_disk_free():
    assert judge_disk("/runs", 10 * GiB, Thresholds(), T0) == []
    [c] = judge_disk("/runs", 200 << 20, Thresholds(disk_free=5 * GiB), T0)
    assert c.kind == "disk_free" and "200.0 MiB free" in c.summary


def test_watch_reports_episodes_once():
    w = CrossingWatch()
    a = Crossing("mem", "worker:0", T0, 0.95, 0.9, "x")
    a2 = Crossing("mem", "worker:0", T0 + 1, 0.96, 0.9, "x")
    assert w.update([a]) == ([a], [])
    assert w.update([a2]) == ([], [])
    assert w.update([]) == ([], [a])        # the episode's opening crossing
    assert w.first[("mem", "worker:0")] is a


def test_docs_quote_the_monitoring_files_and_the_tools_accept_them():
    import shutil
    import subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "alerts.md").read_text()
    rules = root / "deploy" / "monitoring" / "distdoctor.rules.yml"
    route = root / "deploy" / "monitoring" / "alertmanager.yml"
    for f in (rules, route):
        assert f.read_text() in doc, f"docs/alerts.md must quote {f.name} as it is"
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    if shutil.which("amtool"):
        r = subprocess.run(["amtool", "check-config", str(route)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def test_gpu_usage_sums_the_tasks_processes_on_their_gpus():
    from distdoctor.notify.gpu import gpu_usage
    devices = [(80 * GiB, [(100, 30 * GiB), (200, 10 * GiB)]), (80 * GiB, [(101, 5 * GiB), (300, None)])]
    assert gpu_usage(devices, {100, 101}) == (35 * GiB, 160 * GiB)
    assert gpu_usage(devices, {200}) == (10 * GiB, 80 * GiB)
    assert gpu_usage(devices, {300}) == (0, 80 * GiB)        # NVML may not know the amount
    assert gpu_usage(devices, {999}) is None


def test_gpu_probe_without_a_gpu_is_quiet():
    from distdoctor.notify.gpu import GpuProbe
    probe = GpuProbe()
    assert isinstance(probe.devices(), list)   # [] on a host without an NVIDIA driver, never an exception


def test_notifier_resolves_the_suspicion_it_raised_and_counts_restarts(tmp_path):
    from distdoctor.notify.hub import Notifier, NotifyConfig
    n = Notifier(NotifyConfig(job="j"), bundle=str(tmp_path))
    n.start()
    n.event("hang_suspected", T0, culprit="worker:1", summary="stall")
    assert (n.hang_state, n.suspect) == ("suspected", "worker:1")
    ev = n.event("hang_suspected", T0 + 3, resolved=True, summary="progress resumed")
    assert ev.culprit == "worker:1" and ev.since == T0 and ev.resolved and n.hang_state == "ok"
    [a] = to_alertmanager(ev)
    assert a["labels"]["culprit"] == "worker:1" and a["endsAt"] == iso8601(T0 + 3)
    n.event("restart", T0 + 10, attempt=2, reason="worker:1 failed")
    assert (n.attempt, n.restarts) == (2, 1)
    assert n.event("not_an_event", T0) is None


def test_hang_cleared_is_its_own_event_and_resolves_the_suspicions_alert(tmp_path):
    from distdoctor.notify.alerts import to_json, to_slack
    from distdoctor.notify.hub import Notifier, NotifyConfig
    n = Notifier(NotifyConfig(job="j"), bundle=str(tmp_path))
    n.start()
    sus = n.event("hang_suspected", T0, culprit="chief:0", summary="chief:0 is still computing: a pause, not a stall")
    ev = n.event("hang_cleared", T0 + 45, summary="progress resumed after 45.0 s: chief:0 was computing")
    assert (ev.event, ev.culprit, ev.since, ev.resolved, ev.severity) == ("hang_cleared", "chief:0", T0, True, "info")
    assert n.hang_state == "ok" and n.suspect is None
    assert to_json(ev)["event"] == "hang_cleared" and "hang cleared" in to_slack(ev)["text"]
    [a] = to_alertmanager(ev)
    [s] = to_alertmanager(sus)
    assert a["labels"] == s["labels"] and a["startsAt"] == s["startsAt"] and a["endsAt"] == iso8601(T0 + 45)


def test_forecast_counts_only_changes():
    # allocates every second, sampled 4 times a second: 3 of 4 samples unchanged, still a steady climb
    series = [(T0 + i * 0.25, GiB + (i // 4) * 50 * (1 << 20)) for i in range(80)]
    eta = time_to_limit(series, 2 * GiB, series[-1][0])
    assert eta is not None and 0 < eta < 30
