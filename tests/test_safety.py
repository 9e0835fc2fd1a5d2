"""Pure parts of distdoctor.safety and where they are used: redaction, printable text, Slack escaping, the
report's CSP, the environment filter, durations. Plain values; the real-process checks are in
tests/test_safety_run.py."""
from __future__ import annotations

import base64
import hashlib
import re

import pytest

from distdoctor.argtypes import seconds
from distdoctor.notify import AlertEvent
from distdoctor.notify.alerts import to_slack
from distdoctor.preflight.fingerprint import _env
from distdoctor.report.fmt import clean_text
from distdoctor.safety import redact_argv, redact_text, redact_url, safe_line, safe_text, secret_env_name


@pytest.mark.parametrize("argv, shown", [
    (["python", "t.py", "--api-key=S3", "--lr", "0.1"], ["python", "t.py", "--api-key=***", "--lr", "0.1"]),
    (["t.py", "--token", "S3", "--epochs", "2"], ["t.py", "--token", "***", "--epochs", "2"]),
    (["t.py", "--db-password", "S3", "--hf_token=S3", "--AUTH", "S3"],
     ["t.py", "--db-password", "***", "--hf_token=***", "--AUTH", "***"]),
    (["t.py", "--secret", "--verbose"], ["t.py", "--secret", "--verbose"]),          # a switch, no value
    (["t.py", "--data", "https://me:S3@host/x"], ["t.py", "--data", "https://me:***@host/x"]),
    (["t.py", "--author", "ann", "--keyboard", "us", "--max_keys", "S3"],
     ["t.py", "--author", "ann", "--keyboard", "us", "--max_keys", "***"]),
])
def test_secret_flag_values_and_url_passwords_are_masked(argv, shown):
    assert redact_argv(argv) == shown


def test_free_text_loses_flag_values_and_passwords():
    text = "pid 12: python t.py --api-key=S3 --token S3 --lr 0.1 s3://a:S3@b/c"
    assert "S3" not in redact_text(text).replace("s3://", "")
    assert "--lr 0.1" in redact_text(text) and "--api-key=***" in redact_text(text)


@pytest.mark.parametrize("url, shown", [
    ("http://user:S3cr3t@hook.example:8080/x", "http://user:***@hook.example:8080/x"),
    ("https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx", "https://hooks.slack.com/***"),
    ("http://am.monitoring:9093/api/v2/alerts", "http://am.monitoring:9093/api/v2/alerts"),
    ("https://h.example/hook?token=S3", "https://h.example/***"),
])
def test_alert_urls_as_shown(url, shown):
    assert redact_url(url) == shown


@pytest.mark.parametrize("name, secret", [
    ("TF_APIKEY", True), ("TF_AUTH_HEADER", True), ("NCCL_PASSWORD", True), ("TF_SESSION_ID", True),
    ("GRPC_COOKIE", True), ("TF_CREDS", True), ("TF_CPP_MIN_LOG_LEVEL", False), ("TF_USE_LEGACY_KERAS", False),
    ("NCCL_SOCKET_IFNAME", False),
])
def test_secret_environment_names(name, secret):
    assert secret_env_name(name) is secret


def test_the_fingerprint_records_no_secret_variable():
    env = _env({"TF_APIKEY": "S3", "TF_AUTH_HEADER": "S3", "GRPC_SESSION": "S3", "TF_CPP_MIN_LOG_LEVEL": "2",
                "TF_CONFIG": "{}"})
    assert env == {"TF_CPP_MIN_LOG_LEVEL": "2"}


@pytest.mark.parametrize("raw, shown", [
    ("a\x1b]52;c;aGVsbG8=\x07b", "ab"),                 # OSC 52: a clipboard write
    ("a\x1b]0;title\x1b\\b", "ab"),                     # window title, ST-terminated
    ("a\x1b[2J\x1b[Hb", "ab"),                          # clear screen, cursor home
    ("a\x9b31mb\x9d0;t\x9cc", "abc"),                   # 8-bit CSI and OSC (C1)
    ("a\x85b\x00c\x07d", "abcd"),                       # C1 NEL, NUL, BEL
    ("a\u202eb\u200bc\u2066d", "a\\u202eb\\u200bc\\u2066d"),  # bidi override, zero-width space, isolate: shown
    ("tab\tkept", "tab\tkept"), ("plain ünïcode ✓", "plain ünïcode ✓"),
])
def test_safe_text(raw, shown):
    assert safe_text(raw) == shown
    assert clean_text(raw) == shown


def test_safe_line_keeps_one_line():
    assert safe_line("a\nb\x1b[2J") == "a\\nb"


def test_slack_text_escapes_the_jobs_markup():
    ev = AlertEvent(event="task_failed", job="j<&>", at=1_800_000_000.0, status="failed", severity="critical",
                    culprit="worker:1", summary="ValueError: <!channel> see <https://evil.example|docs> & more",
                    first_failure="<@U123> \x1b]52;c;eA==\x07")
    text = to_slack(ev)["text"]
    assert "<!channel>" not in text and "<https://" not in text and "<@U123>" not in text and "\x1b" not in text
    assert "&lt;!channel&gt;" in text and "&amp; more" in text and "`j&lt;&amp;&gt;`" in text
    assert "*distdoctor*" in text   # distdoctor's own markup stays


def test_report_has_a_csp_that_allows_its_own_script_only():
    from distdoctor.report.html import _JS, csp
    policy = csp()
    assert "default-src 'none'" in policy and "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    digest = base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy


def test_a_written_report_carries_the_csp(tmp_path):
    from bundles import make_bundle
    from distdoctor.report.command import write_report
    html = open(write_report(make_bundle(str(tmp_path / "b"), 2, "stall"))).read()
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert m and "default-src 'none'" in m[1]
    script = re.search(r"<script>(.*?)</script>", html, re.S)[1]
    assert base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() in m[1]


@pytest.mark.parametrize("text", ["-5", "nan", "inf", "-0.1", "ten"])
def test_bad_durations_are_refused(text):
    import argparse
    with pytest.raises(argparse.ArgumentTypeError):
        seconds(text)


def test_good_durations():
    assert seconds("0") == 0.0 and seconds("2.5") == 2.5


def test_metrics_bind_loopback_by_default():
    import argparse
    from distdoctor.notify.options import add_arguments, config_from_args
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert config_from_args(p.parse_args(["--metrics-port", "0"]), "/tmp/b").metrics_addr == "127.0.0.1"


def test_a_report_of_an_older_bundle_shows_no_secret_flag_value(tmp_path):
    import json
    from bundles import make_bundle
    from distdoctor.report.command import write_report
    bundle = make_bundle(str(tmp_path / "b"), 2, "healthy")
    events = tmp_path / "b" / "events.jsonl"
    first = json.loads(events.read_text().splitlines()[0])
    line = {"ts": first["ts"], "task": "worker:0", "kind": "start",
            "text": "pid 7: python t.py --api-key=SECRET123 --data https://u:SECRET123@h/x"}
    events.write_text(json.dumps(line) + "\n" + events.read_text())
    html = open(write_report(bundle)).read()
    assert "SECRET123" not in html and "--api-key=***" in html
