"""The acting parts of distdoctor.notify against real local endpoints (loopback), without TensorFlow:
the sender against a plain HTTP receiver (bodies, retries while it is down, giving up), --alert-cmd,
the Prometheus endpoint, TensorBoard's writer read back with TensorBoard's reader, and bad CLI input."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from notify_helpers import Receiver, free_port

from distdoctor.notify import AlertEvent, NotifyError
from distdoctor.notify.metrics import JobRow, MetricsServer, TaskRow
from distdoctor.notify.sender import AlertmanagerSink, AlertSender, CommandSink, Retry, WebhookSink

T0 = time.time()
FAST = Retry(attempts=4, timeout=1.0, wait_initial=0.2, wait_max=0.4, max_failures=2)


def ev(name="hang_declared", culprit="worker:1", **kw) -> AlertEvent:
    return AlertEvent(event=name, job="j", at=time.time(), culprit=culprit, summary=f"{name} on {culprit}", **kw)


def test_webhook_bodies_and_slack():
    rec = Receiver().start()
    try:
        sender = AlertSender([WebhookSink(rec.url), WebhookSink(rec.url.replace("/hook", "/chat"), "slack")], FAST)
        sender.submit(ev())
        sender.submit(ev("verdict", status="hung"))
        sender.close(5)
        assert [b["event"] for b in rec.bodies() if "event" in b] == ["hang_declared", "verdict"]
        chat = [b for _, path, b in rec.posts if path == "/chat"]
        assert len(chat) == 2 and "`worker:1`" in chat[0]["text"]
        assert sender.notes() == []
    finally:
        rec.stop()


def test_retries_until_the_receiver_comes_up():
    port = free_port()
    sender = AlertSender([WebhookSink(f"http://127.0.0.1:{port}/hook")], Retry(attempts=6, timeout=1.0,
                                                                               wait_initial=0.3, wait_max=0.6))
    t = time.time()
    sender.submit(ev())
    assert time.time() - t < 0.05   # submit never waits for the network
    time.sleep(0.8)                  # the first tries hit a closed port
    rec = Receiver(port=port).start()
    try:
        assert rec.wait_for(lambda: rec.bodies("hang_declared"), 6)
        sender.close(5)
        stats = next(iter(sender.stats().values()))
        assert stats["delivered"] == 1 and stats["tries"] >= 2
        assert sender.notes() == []
    finally:
        rec.stop()


def test_http_500_is_retried():
    rec = Receiver(fail_first=2).start()
    try:
        sender = AlertSender([WebhookSink(rec.url)], FAST)
        sender.submit(ev())
        sender.close(5)
        assert rec.requests == 3 and len(rec.bodies("hang_declared")) == 1
    finally:
        rec.stop()


def test_a_dead_receiver_is_given_up_and_noted_without_blocking():
    port = free_port()
    sender = AlertSender([WebhookSink(f"http://127.0.0.1:{port}/hook")], FAST)
    t = time.time()
    for i in range(5):
        sender.submit(ev(culprit=f"worker:{i}"))
    assert time.time() - t < 0.05
    sender.close(10)
    [note] = sender.notes()
    assert f"127.0.0.1:{port}" in note and "5 event(s) not delivered" in note
    assert "failed after 4 tries" in note and "given up after 2 failures" in note
    assert "refused" in note.lower()


def test_a_receiver_that_never_answers_times_out():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)               # accepts connections, never answers
    try:
        sender = AlertSender([WebhookSink(f"http://127.0.0.1:{srv.getsockname()[1]}/")],
                             Retry(attempts=2, timeout=0.5, wait_initial=0.1, wait_max=0.1, max_failures=1))
        t = time.time()
        sender.submit(ev())
        sender.close(5)
        assert time.time() - t < 3
        assert "timed out" in sender.notes()[0]
    finally:
        srv.close()


def test_queue_is_bounded():
    rec = Receiver(delay=0.5).start()
    try:
        sender = AlertSender([WebhookSink(rec.url)], Retry(queue_size=2, timeout=2))
        for _ in range(10):
            sender.submit(ev())
        sender.close(0.1)
        stats = next(iter(sender.stats().values()))
        assert stats["dropped"] >= 7
        assert "not delivered" in sender.notes()[0]
    finally:
        rec.stop()


def test_alert_cmd_gets_the_json_on_stdin(tmp_path):
    out = tmp_path / "got.json"
    bad = AlertSender([CommandSink("exit 7")], Retry(attempts=2, wait_initial=0.05, wait_max=0.05))
    bad.submit(ev())
    bad.close(5)
    assert "exit code 7" in bad.notes()[0]
    sender = AlertSender([CommandSink(f'cat > {out}; echo "$DISTDOCTOR_EVENT" > {out}.event')], FAST)
    sender.submit(ev())
    sender.close(5)
    body = json.loads(out.read_text())
    assert body["culprit"] == "worker:1" and (tmp_path / "got.json.event").read_text().strip() == "hang_declared"


def test_alertmanager_sink_posts_to_the_v2_path():
    rec = Receiver().start()
    try:
        sender = AlertSender([AlertmanagerSink(f"http://127.0.0.1:{rec.port}")], FAST)
        sender.submit(ev())
        sender.close(5)
        [(_, path, body)] = rec.posts
        assert path == "/api/v2/alerts" and body[0]["labels"]["culprit"] == "worker:1"
    finally:
        rec.stop()


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def test_metrics_endpoint():
    from prometheus_client.parser import text_string_to_metric_families
    m = MetricsServer("mnist", 0, "127.0.0.1")
    port = m.start()
    try:
        m.update((TaskRow("worker:0", True, "sleeping", step=120, last_step_at=T0, step_seconds=0.05,
                          rss_bytes=500 << 20, mem_limit_bytes=8 << 30, cpu_seconds=12.5),
                  TaskRow("worker:1", True, "running", step=119)),
                 JobRow(hang_state="suspected", suspect="worker:1", stalled_seconds=7.5, stall_threshold_seconds=10))
        m.count_crossing("worker:0", "mem")
        samples = {}
        for fam in text_string_to_metric_families(_scrape(port)):
            assert fam.name.startswith("distdoctor_")
            for s in fam.samples:
                samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
        w0 = (("job", "mnist"), ("task", "worker:0"))
        assert samples[("distdoctor_task_step", w0)] == 120
        assert samples[("distdoctor_task_resident_memory_bytes", w0)] == 500 << 20
        assert samples[("distdoctor_task_cpu_seconds_total", w0)] == 12.5
        assert samples[("distdoctor_task_state", (("job", "mnist"), ("state", "sleeping"), ("task", "worker:0")))] == 1
        assert samples[("distdoctor_task_state", (("job", "mnist"), ("state", "running"), ("task", "worker:0")))] == 0
        assert samples[("distdoctor_task_step", (("job", "mnist"), ("task", "worker:1")))] == 119
        assert samples[("distdoctor_job_hang_state", (("culprit", "worker:1"), ("job", "mnist")))] == 1
        assert samples[("distdoctor_threshold_crossings_total", (("job", "mnist"), ("task", "worker:0"),
                                                                   ("threshold", "mem")))] == 1
        m.set_verdict("hung", "hang_stalled_worker", "DD201", "worker:1")
        text = _scrape(port)
        assert 'distdoctor_job_verdict_info{category="hang_stalled_worker",code="DD201",culprit="worker:1",job="mnist",status="hung"} 1.0' in text
        with pytest.raises(NotifyError, match="choose another --metrics-port"):
            MetricsServer("other", port, "127.0.0.1").start()
    finally:
        m.close()


def test_tensorboard_events_read_back_with_tensorboards_reader(tmp_path):
    code = f"""
import sys, time
from distdoctor.notify.tensorboard import TensorBoardWriter
w = TensorBoardWriter({str(tmp_path)!r})
for i in range(4):
    w.scalars("worker:0", time.time(), 10 * i, {{"step_time_seconds": 0.05 * (i + 1), "rss_bytes": 1e8, "cpu_cores": None}})
w.text("distdoctor/verdict", "**HUNG** culprit worker:1", time.time())
w.close()
print("tensorflow" in sys.modules)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "False"   # the writer does not load TensorFlow
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util.tensor_util import make_ndarray
    acc = EventAccumulator(str(tmp_path / "distdoctor"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    assert set(acc.Tags()["scalars"]) == {"worker:0/step_time_seconds", "worker:0/rss_bytes"}
    assert [(e.step, round(e.value, 3)) for e in acc.Scalars("worker:0/step_time_seconds")] == \
        [(0, 0.05), (10, 0.1), (20, 0.15), (30, 0.2)]
    [t] = acc.Tensors("distdoctor/verdict/text_summary")
    assert make_ndarray(t.tensor_proto).item() == b"**HUNG** culprit worker:1"


@pytest.mark.parametrize("args,msg", [
    (["--threshold", "mem=200%"], "at most 100"),
    (["--threshold", "cpu=3"], "unknown threshold"),
    (["--alert", "hooks.example/x"], "expected an http"),
    (["--alertmanager", "ftp://am:9093"], "expected an http"),
    (["--metrics-port", "70000"], "not a port"),
])
def test_bad_notify_options_are_one_line_errors(tmp_path, args, msg):
    r = subprocess.run([sys.executable, "-m", "distdoctor", "run", "--out", str(tmp_path / "b"), *args, "--",
                        sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_taken_metrics_port_is_a_usage_error(tmp_path):
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen(1)
    try:
        r = subprocess.run([sys.executable, "-m", "distdoctor", "run", "--no-live", "--out", str(tmp_path / "b"),
                            "--metrics-port", str(s.getsockname()[1]), "--", sys.executable, "-c", "pass"],
                           capture_output=True, text=True, timeout=60)
    finally:
        s.close()
    assert r.returncode == 2 and "choose another --metrics-port" in r.stderr and "Traceback" not in r.stderr


def test_a_failing_job_alerts_and_serves_metrics_without_tensorflow(tmp_path):
    """A real (non-TF) supervised job: task_failed and verdict reach the receiver, metrics show each task."""
    rec = Receiver().start()
    port = free_port()
    seen: list[str] = []

    def scrape_while_running():
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                text = _scrape(port)
                if 'task="worker:0"' in text and 'task="worker:1"' in text:
                    seen.append(text)
                    return
            except OSError:
                pass
            time.sleep(0.2)

    th = threading.Thread(target=scrape_while_running)
    th.start()
    try:
        code = "import os, sys, time; time.sleep(3); sys.exit(5 if os.environ['DISTDOCTOR_TASK'] == 'worker:1' else 0)"
        r = subprocess.run([sys.executable, "-m", "distdoctor", "run", "--json", "--out", str(tmp_path / "b"),
                            "--alert", rec.url, "--metrics-port", str(port), "--metrics-addr", "127.0.0.1",
                            "--job-name", "tiny", "--", sys.executable, "-c", code],
                           capture_output=True, text=True, timeout=90)
        th.join()
        assert r.returncode == 1, r.stderr[-2000:]
        assert seen, "the metrics endpoint never showed both tasks"
        assert "distdoctor_task_up" in seen[0]
        events = [b["event"] for b in rec.bodies()]
        assert events == ["task_failed", "verdict"], events
        failed, verdict = rec.bodies()
        assert failed["culprit"] == "worker:1" and failed["job"] == "tiny" and "exit code 5" in failed["summary"]
        assert verdict["status"] == "failed" and verdict["culprit"] == "worker:1"
        assert verdict["bundle"] == str(tmp_path / "b") and verdict["report"].endswith("report.html")
    finally:
        rec.stop()


def test_under_run_node_only_the_collector_alerts(tmp_path):
    """Two `run --node` supervisors on loopback (no TensorFlow), both given --alert and --metrics-port:
    one set of alerts, and the collector's /metrics has both tasks."""
    rec = Receiver().start()
    p0, p1, mport = free_port(), free_port(), free_port()
    seen: list[str] = []

    def scrape():
        deadline = time.time() + 40
        while time.time() < deadline and not seen:
            try:
                text = _scrape(mport)
                if 'distdoctor_task_up{job="nodes",task="worker:1"} 1.0' in text and 'task="worker:0"' in text:
                    seen.append(text)
            except OSError:
                pass
            time.sleep(0.2)

    scraper = threading.Thread(target=scrape, daemon=True)
    scraper.start()
    cluster = {"worker": [f"127.0.0.1:{p0}", f"127.0.0.1:{p1}"]}
    code = ("import json, os, sys, time; time.sleep(4); "
            "sys.exit(4 if json.loads(os.environ['TF_CONFIG'])['task']['index'] == 1 else 0)")
    procs = []
    try:
        for i in (0, 1):
            env = dict(__import__("os").environ, DISTDOCTOR_TOKEN="5e1f0c2a9b8d7e6f5a4b3c2d1e0f9a8b",
                       TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}))
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distdoctor", "run", "--node", "--no-live", "--out", str(tmp_path / f"n{i}"),
                 "--alert", rec.url, "--metrics-port", str(mport), "--metrics-addr", "127.0.0.1", "--job-name", "nodes",
                 "--mesh-timeout", "20", "--", sys.executable, "-c", code],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        outs = [p.communicate(timeout=90)[0] for p in procs]
        assert [p.returncode for p in procs] == [0, 4], outs
        assert "come from the collector worker:0" in outs[1]
        scraper.join(5)
        assert seen, "the collector's /metrics never showed worker:1 (a task of another node) alive"
        events = [(b["event"], b["culprit"]) for b in rec.bodies()]
        assert events == [("task_failed", "worker:1"), ("verdict", "worker:1")], events
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        rec.stop()


def test_tensorboard_missing_is_a_one_line_error(tmp_path):
    code = ("import sys; sys.modules['tensorboard'] = None; from distdoctor.cli import main; "
            f"sys.exit(main(['run', '--no-live', '--out', {str(tmp_path / 'b')!r}, '--tensorboard', {str(tmp_path / 'tb')!r}, "
            "'--', sys.executable, '-c', 'pass']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "pip install tensorboard" in r.stderr and "Traceback" not in r.stderr


def test_memory_climbing_toward_the_limit_is_forecast(tmp_path):
    """A real process that allocates 40 MB/s: with mem_eta=3600s the host limit is "near", and the
    forecast (fitted over the supervisor's real samples) becomes a threshold alert and a DD210 warning."""
    rec = Receiver().start()
    code = ("import time\nhog = []\nfor _ in range(60):\n    hog.append(bytearray(10 * 1000 * 1000))\n"
            "    time.sleep(0.25)\n")
    try:
        r = subprocess.run([sys.executable, "-m", "distdoctor", "run", "--json", "--workers", "1",
                            "--out", str(tmp_path / "b"), "--alert", rec.url, "--threshold", "mem_eta=3600s",
                            "--", sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        [alert] = [b for b in rec.bodies("threshold") if not b["resolved"]]
        assert alert["culprit"] == "worker:0" and alert["details"]["threshold"] == "mem_eta"
        assert "worker:0 reaches its memory limit" in alert["summary"] and "at the current rate" in alert["summary"]
        diag = json.loads(r.stdout)
        assert [f["culprit"] for f in diag["findings"] if f["code"] == "DD210"] == ["worker:0"]
    finally:
        rec.stop()
