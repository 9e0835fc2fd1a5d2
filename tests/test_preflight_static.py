"""Static preflight rules (``check --static``): one case per rule, the sources, and the CLI contract."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from distdoctor.rulebook import all_rules
from distdoctor.rulebook import all_rules
from distdoctor.errors import ConfigError, InputError, UsageError
from distdoctor.model import Category, Severity
from distdoctor.preflight.rules import BLOCKING_CODES, check_document
from distdoctor.cluster.slurm import expand_hostlist, expand_tasks_per_node, slurm_layout
from distdoctor.cluster.spec import (AddressError, TaskRef, load_document, parse_address,
                                       read_cluster_file, read_tf_config_text)

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def tfc(cluster=None, task=("worker", 0), **extra) -> str:
    doc = dict(extra)
    if cluster is not None:
        doc["cluster"] = cluster
    if task is not None:
        doc["task"] = {"type": task[0], "index": task[1]}
    return json.dumps(doc)


W2 = {"worker": ["w0.example:2222", "w1.example:2222"]}

# (code, TF_CONFIG text, strategy, expected culprit, expected severity)
CASES = [
    ("DD301", '{"cluster": {"worker": ["a:1",]}}', "auto", None, Severity.ERROR),
    ("DD302", tfc({"worker": "w0.example:2222"}), "auto", None, Severity.ERROR),
    ("DD303", tfc(None), "auto", None, Severity.ERROR),
    ("DD304", tfc(W2, task=None), "auto", None, Severity.ERROR),
    ("DD305", tfc(W2, task=("chief", 0)), "auto", "chief:0", Severity.ERROR),
    ("DD306", tfc(W2, task=("worker", 2)), "auto", "worker:2", Severity.ERROR),
    ("DD307", tfc({"worker": ["a.example:2222", "a.example:2222"]}), "auto", "worker:1", Severity.ERROR),
    ("DD308", tfc({"worker": ["a.example:2222", "grpc://b.example:2222"]}), "auto", "worker:1", Severity.ERROR),
    ("DD309", tfc({"worker": ["localhost:2222", "b.example:2222"]}), "auto", "worker:0", Severity.ERROR),
    ("DD310", tfc({"ps": ["p.example:2222"], "worker": ["w.example:2222"]}), "auto", "worker:0", Severity.ERROR),
    ("DD311", tfc({"chief": ["c.example:2222"], "worker": ["w.example:2222"]}), "ps", "worker:0", Severity.ERROR),
    ("DD312", tfc({"chief": ["c.example:2222"], "worker": ["w.example:2222"], "ps": ["p.example:2222"],
                   "evaluator": ["e.example:2222"]}), "auto", "evaluator:0", Severity.ERROR),
    ("DD313", tfc({"chief": ["c.example:2222", "d.example:2222"], "worker": ["w.example:2222"]}), "auto",
     "worker:0", Severity.ERROR),
    ("DD314", tfc({"chief": ["c.example:2222"], "worker": []}, task=("chief", 0)), "auto", "chief:0", Severity.ERROR),
    ("DD315", tfc({"master": ["m.example:2222"], "worker": ["w.example:2222"]}), "auto", "worker:0", Severity.ERROR),
    ("DD316", tfc({"worker": ["w.example:2222"], "evaluator": ["e.example:2222", "f.example:2222"]}), "auto",
     "worker:0", Severity.ERROR),
    ("DD317", tfc({"worker": ["w.example:2222"]}), "auto", "worker:0", Severity.INFO),
    ("DD318", '{"cluster": {"worker": ["a.example:1"], "worker": ["a.example:1", "b.example:1"]}, '
              '"task": {"type": "worker", "index": 0}}', "auto", None, Severity.WARNING),
    ("DD319", tfc(W2, Task={"type": "worker"}), "auto", None, Severity.WARNING),
    ("DD320", tfc({"worker": ["w0.example:80", "w1.example:2222"]}), "auto", "worker:0", Severity.WARNING),
    ("DD321", tfc(W2, rpc_layer="grpc+verbs"), "auto", "worker:0", Severity.WARNING),
]


def run_static(text: str, strategy: str = "auto"):
    return check_document(read_tf_config_text(text), strategy)


@pytest.mark.parametrize("code,text,strategy,culprit,severity", CASES, ids=[c[0] for c in CASES])
def test_rule_fires(code, text, strategy, culprit, severity):
    report = run_static(text, strategy)
    hits = [f for f in report.findings if f.code == code]
    assert hits, [f.code for f in report.findings]
    f = hits[0]
    assert f.culprit == culprit
    assert f.severity is severity
    assert f.category is Category.CONFIG_TF_CONFIG
    assert f.remedy and f.summary
    assert (code in BLOCKING_CODES) == bool(report.blocking and f in report.blocking)


def test_every_static_rule_has_a_case_and_a_complete_doc():
    codes = {r.code for r in all_rules() if r.code.startswith("DD3")}
    assert codes == {c[0] for c in CASES}
    for r in all_rules():
        if r.code[:3] in ("DD3", "DD4", "DD5"):
            assert all((r.title, r.detects, r.why, r.evidence, r.remedy)), r.code


def test_clean_cluster_has_no_findings():
    report = run_static(tfc({"chief": ["c.example:2222"], "worker": ["w0.example:2222", "w1.example:2222"]}))
    assert report.findings == ()
    assert str(report.spec.task) == "worker:0"
    assert [str(t) for t, _ in report.spec.tasks()] == ["chief:0", "worker:0", "worker:1"]


def test_invalid_json_reports_line_and_column():
    text = '{\n  "cluster": {"worker": ["a:1"]},\n  "task": {"type": "worker" "index": 0}\n}'
    f = run_static(text).findings[0]
    assert f.code == "DD301" and "line 3, column 29" in f.summary


def test_single_quotes_get_a_hint():
    f = run_static("{'cluster': {}}").findings[0]
    assert "json.dumps" in f.summary


def test_loopback_everywhere_is_fine_and_localhost_equals_127():
    report = run_static(tfc({"worker": ["localhost:2222", "127.0.0.1:2222"]}))
    codes = [f.code for f in report.findings]
    assert "DD309" not in codes and codes.count("DD307") == 1


@pytest.mark.parametrize("text,host,port", [("h.example:2222", "h.example", 2222), ("[fd00::1]:2222", "fd00::1", 2222),
                                            ("10.0.0.1:1", "10.0.0.1", 1)])
def test_parse_address_ok(text, host, port):
    a = parse_address(text)
    assert (a.host, a.port) == (host, port)


@pytest.mark.parametrize("text,why", [("h", "no port"), ("h:0", "out of range"), ("h:65536", "out of range"),
                                      ("h:x", "not a number"), (":2222", "no host"), ("h :1", "whitespace"),
                                      ("fd00::1:2222", "IPv6"), ("grpc://h:1", "prefix"), ("bad_host!:1", "valid host")])
def test_parse_address_rejects(text, why):
    with pytest.raises(AddressError, match=why):
        parse_address(text)


@pytest.mark.parametrize("hostlist,expected", [
    ("node[01-03,7]", ["node01", "node02", "node03", "node7"]),
    ("a1,b[2-3],c", ["a1", "b2", "b3", "c"]),
    ("rack[1-2]-n[1-2]", ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]),
    ("gpu[009-011]", ["gpu009", "gpu010", "gpu011"]),
])
def test_expand_hostlist(hostlist, expected):
    assert expand_hostlist(hostlist) == expected


@pytest.mark.parametrize("bad", ["", "n[1-", "n[3-1]", "n[a-b]", "a,,b"])
def test_expand_hostlist_rejects(bad):
    with pytest.raises(ValueError):
        expand_hostlist(bad)


def test_tasks_per_node():
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]


SLURM = {"SLURM_STEP_NODELIST": "n[02,01]", "SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "4",
         "SLURM_STEP_TASKS_PER_NODE": "2(x2)"}


def test_slurm_layout_matches_slurm_cluster_resolver():
    lay = slurm_layout(SLURM)
    assert dict(lay.jobs) == {"worker": ("n01:8888", "n01:8889", "n02:8888", "n02:8889")}
    assert (lay.task_type, lay.task_index) == ("worker", 3)
    lay = slurm_layout(dict(SLURM, DISTDOCTOR_SLURM_JOBS="chief:1,worker:3", SLURM_PROCID="0"), port_base=2222)
    assert dict(lay.jobs)["chief"] == ("n01:2222",) and (lay.task_type, lay.task_index) == ("chief", 0)


@pytest.mark.parametrize("change,match", [({"SLURM_PROCID": "4"}, "out of range"),
                                          ({"SLURM_STEP_TASKS_PER_NODE": "3,2"}, "adds up"),
                                          ({"SLURM_STEP_TASKS_PER_NODE": "2"}, "node counts"),
                                          ({"SLURM_STEP_NODELIST": "n[1-"}, "hostlist")])
def test_slurm_inconsistent_variables(change, match):
    with pytest.raises(ConfigError, match=match):
        slurm_layout(dict(SLURM, **change))


def test_sources_precedence_and_errors(tmp_path):
    env = {"TF_CONFIG": tfc(W2), **SLURM}
    assert load_document(tf_config=None, cluster_file=None, task=None, environ=env).origin == "TF_CONFIG"
    assert load_document(tf_config=None, cluster_file=None, task=None, environ=SLURM).kind == "slurm"
    with pytest.raises(UsageError, match="no cluster spec"):
        load_document(tf_config=None, cluster_file=None, task=None, environ={})
    with pytest.raises(InputError, match="does not exist"):
        load_document(tf_config="@" + str(tmp_path / "nope.json"), cluster_file=None, task=None, environ={})
    with pytest.raises(UsageError, match="JOB:INDEX"):
        TaskRef.parse("worker-1")


def test_yaml_cluster_file_bare_mapping_and_error_position(tmp_path):
    good = tmp_path / "c.yaml"
    good.write_text("chief: [c.example:2222]\nworker:\n  - w0.example:2222\n  - w1.example:2222\n")
    report = check_document(read_cluster_file(str(good), TaskRef("worker", 1)))
    assert report.findings == () and str(report.spec.task) == "worker:1"
    bad = tmp_path / "bad.yaml"
    bad.write_text("worker:\n  - a:1\n - b:2\n")
    f = check_document(read_cluster_file(str(bad), None)).findings[0]
    assert f.code == "DD301" and "YAML" in f.summary and "line 3" in f.summary


# --- the command line ------------------------------------------------------------------------------
def dd(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TF_CONFIG", "SLURM_", "DISTDOCTOR_"))}
    return subprocess.run([PY, "-m", "distdoctor", "check", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**base, **(env or {})}, timeout=60)


def assert_one_line_error(p: subprocess.CompletedProcess, *needles: str) -> None:
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("distdoctor: error:"), p.stderr
    assert "Traceback" not in p.stderr
    for n in needles:
        assert n in lines[0]


def test_cli_clean_exits_0_and_json_shape():
    p = dd("--static", "--json", "--tf-config", tfc({"worker": ["w0.example:2222", "w1.example:2222"]}))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["status"] == "ok" and doc["findings"] == [] and doc["fingerprint"] is None and doc["mesh"] is None


def test_cli_errors_exit_1_with_table():
    p = dd("--static", "--tf-config", tfc({"worker": ["localhost:2222", "b.example:2222"]}))
    assert p.returncode == 1
    assert "DD309" in p.stdout and "worker:0" in p.stdout


def test_cli_findings_json_schema():
    p = dd("--static", "--json", "--tf-config", tfc({"worker": ["a.example:2222", "a.example:2222"]}))
    f = json.loads(p.stdout)["findings"][0]
    assert set(f) >= {"code", "category", "culprit", "severity", "summary", "evidence", "remedy"}
    assert (f["code"], f["category"], f["culprit"]) == ("DD307", "config_tf_config", "worker:1")


@pytest.mark.parametrize("args,needles", [
    (["--static", "--tf-config", '{"cluster": {"worker": ["a:1",]}}'], ["line 1, column 31", "DD301"]),
    (["--static", "--tf-config", "@/nonexistent/tf.json"], ["does not exist"]),
    (["--static", "--tf-config", "/nonexistent/tf.json"], ["neither JSON nor an existing file", "@FILE"]),
    (["--static", "--tf-config", tfc(W2, task=("chief", 0))], ["'chief'", "DD305"]),
    (["--static", "--tf-config", tfc(W2, task=("worker", 5))], ["index 5", "DD306"]),
    (["--static", "--cluster", "c.json", "--task", "worker-1"], ["JOB:INDEX"]),
    (["--static"], ["no cluster spec"]),
    (["--static", "--mesh", "--tf-config", tfc(W2)], ["exclude"]),
    (["--mesh", "--tf-config", tfc(W2), "--timeout", "0"], ["--timeout"]),
    (["--bogus-flag"], ["unrecognized"]),
])
def test_cli_bad_input_is_one_line_exit_2(args, needles):
    assert_one_line_error(dd(*args), *needles)


def test_cli_tf_config_file_without_the_at_sign_is_read_as_a_file(tmp_path):
    """``--tf-config tf.json`` (the @ forgotten): the file is what the user meant, not JSON text to parse."""
    f = tmp_path / "tf.json"
    f.write_text(tfc({"worker": ["a.example:2222", "a.example:2222"]}))
    p = dd("--static", "--json", "--tf-config", str(f))
    assert p.returncode == 1, p.stderr
    assert json.loads(p.stdout)["findings"][0]["code"] == "DD307"


def test_cli_mesh_without_token_is_usage_error():
    p = dd("--mesh", "--tf-config", tfc({"worker": ["127.0.0.1:1", "127.0.0.1:2"]}))
    assert_one_line_error(p, "DISTDOCTOR_TOKEN")


def test_cli_blocking_error_still_prints_json():
    p = dd("--static", "--json", "--tf-config", "{")
    assert p.returncode == 2 and json.loads(p.stdout)["findings"][0]["code"] == "DD301"


def test_cli_reads_slurm_variables():
    p = dd("--static", "--json", env=SLURM)
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and doc["task"] == "worker:3" and doc["source"].startswith("Slurm")


def test_rules_command_lists_preflight_codes():
    p = subprocess.run([PY, "-m", "distdoctor", "rules"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0
    for code in ("DD301", "DD412", "DD502", "DD510"):
        assert code in p.stdout
    assert {"DD401", "DD506"} <= {r.code for r in all_rules()}
