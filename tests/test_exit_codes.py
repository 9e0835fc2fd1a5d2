"""``--exit-code-policy`` with plain verdicts, and ``distdoctor policy`` snippets that parse and name its codes."""
from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from distdoctor.cli import main
from distdoctor.model import Diagnosis
from distdoctor.supervise.exitcodes import (PERMANENT, RETRYABLE, TFJOB_PERMANENT, TFJOB_RETRYABLE, USAGE,
                                            policy_exit_status, task_exit_status)
from distdoctor.supervise.schedpolicy import snippet


def _diag(category: str | None, code: str = "DD101", culprit: str = "worker:1", status: str = "failed",
          summary: str = "", exit_code: int | None = None, attempts: list | None = None) -> Diagnosis:
    """The policy takes the model: a diagnosis.json document read back, as ``run`` hands it over."""
    d = {"status": status, "root_cause": None, "tasks": {culprit: {"exit_code": exit_code}}}
    if category:
        d["root_cause"] = {"code": code, "category": category, "culprit": culprit, "summary": summary,
                           "severity": "error"}
    if attempts is not None:
        d["attempts"] = [{"started_at": 0.0, "ended_at": 1.0, "decision": "restart", **a} for a in attempts]
    return Diagnosis.from_json(d)


def test_the_codes_are_tfjobs():
    assert RETRYABLE in TFJOB_RETRYABLE and PERMANENT in TFJOB_PERMANENT and USAGE in TFJOB_PERMANENT


@pytest.mark.parametrize("diag,code", [
    (_diag(None, status="succeeded"), 0),
    (_diag("peer_crashed", exit_code=-9), RETRYABLE),                     # eviction
    (_diag("preemption", "DD103", exit_code=-15), RETRYABLE),
    (_diag("peer_unresponsive", "DD112"), RETRYABLE),                      # a lost host: the scheduler replaces it
    (_diag("network_unreachable", "DD301"), RETRYABLE),                    # a peer not up yet
    (_diag("user_code_error", "DD102", summary="ValueError: bad record"), PERMANENT),
    (_diag("user_code_error", "DD102", summary="tensorflow.python.framework.errors_impl.UnavailableError: "
                                               "socket closed"), RETRYABLE),
    (_diag("version_mismatch", "DD512"), PERMANENT),
    (_diag("config_tf_config", "DD201"), PERMANENT),
    (_diag("numerical_divergence", "DD402"), PERMANENT),
    (_diag("other", "DD106", exit_code=3), PERMANENT),                    # an unexplained permanent exit code
    (_diag("other", "DD106", exit_code=137), RETRYABLE),
    (_diag("segfault_core_dump", "DD104", exit_code=-11), RETRYABLE),     # once: a flaky node
    (_diag("hang_collective_mismatch", "DD131", status="hung"), PERMANENT),
])
def test_verdict_to_exit_code(diag, code):
    assert policy_exit_status(diag).code == code


def test_the_ledgers_last_decision_wins():
    """A segfault repeated at the same place was judged deterministic by the restart policy: permanent."""
    attempts = [{"number": 1, "restart_class": "transient", "reason": "a first segfault"},
                {"number": 2, "restart_class": "deterministic", "reason": "the same failure as attempt 1"}]
    choice = policy_exit_status(_diag("segfault_core_dump", "DD104", attempts=attempts))
    assert choice.code == PERMANENT and "same failure" in choice.reason
    # a budget spent on a transient cause: retryable, the scheduler gets its turn
    spent = [{"number": 1, "restart_class": "transient", "reason": "peer_crashed; but the restart budget is spent"}]
    assert policy_exit_status(_diag("peer_crashed", attempts=spent)).code == RETRYABLE


def test_no_root_cause_follows_the_tasks_own_status():
    assert policy_exit_status(_diag(None), own_rc=-9).code == RETRYABLE
    assert policy_exit_status(_diag(None), own_rc=1).code == PERMANENT
    assert policy_exit_status(_diag(None), own_rc=None).code == PERMANENT


def test_task_exit_status():
    assert task_exit_status(-9) == 137 and task_exit_status(0) == 0 and task_exit_status(None) == 1


def _codes(node) -> list[int]:
    """Every onExitCodes value list in a parsed document."""
    found = []
    if isinstance(node, dict):
        if "onExitCodes" in node:
            found.append(node)
        for v in node.values():
            found += _codes(v)
    elif isinstance(node, list):
        for v in node:
            found += _codes(v)
    return found


def test_tfjob_snippet():
    doc = yaml.safe_load(snippet("tfjob"))
    worker = doc["spec"]["tfReplicaSpecs"]["Worker"]
    assert doc["kind"] == "TFJob" and worker["restartPolicy"] == "ExitCode"
    args = worker["template"]["spec"]["containers"][0]["args"][0]
    assert "--exit-code-policy" in args and "run --node" in args


def test_jobset_snippet_keys_the_pod_failure_policy_on_our_codes():
    doc = yaml.safe_load(snippet("jobset"))
    job = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["template"]["spec"]["restartPolicy"] == "Never"        # required by podFailurePolicy
    rules = {r["action"]: r for r in job["podFailurePolicy"]["rules"]}
    assert set(rules["FailJob"]["onExitCodes"]["values"]) == {PERMANENT, USAGE}
    assert rules["Count"]["onExitCodes"]["values"] == [RETRYABLE]
    assert rules["FailJob"]["onExitCodes"]["containerName"] == job["template"]["spec"]["containers"][0]["name"]
    assert doc["spec"]["failurePolicy"]["rules"][0]["onJobFailureReasons"] == ["PodFailurePolicy"]


def test_slurm_snippet_requeues_on_the_retryable_code():
    text = snippet("slurm")
    assert "#SBATCH --requeue" in text and f'"$rc" -eq {RETRYABLE}' in text and "scontrol requeue" in text
    assert f"RequeueExit={RETRYABLE}" in text and "--exit-code-policy" in text
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


def test_policy_command_prints_and_rejects(capsys):
    assert main(["policy", "jobset"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["kind"] == "JobSet"
    p = subprocess.run([sys.executable, "-m", "distdoctor", "policy", "borg"], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_local_run_with_the_policy(tmp_path):
    """`run --exit-code-policy`: a killed worker (transient) exits 143; an exception (deterministic) exits 1."""
    from mesh_helpers import ROOT, clean_env
    flaky = str(ROOT / "tests" / "workers" / "flaky.py")
    codes = []
    for fault in ("sigkill", "exception-always"):
        p = subprocess.run([sys.executable, "-m", "distdoctor", "run", "--workers", "2", "--no-live", "--no-report",
                            "--failure-grace", "1", "--grace", "2", "--exit-code-policy",
                            "--out", str(tmp_path / fault), "--", sys.executable, flaky, "--ckpt",
                            str(tmp_path / f"ckpt-{fault}"), "--fault", fault, "--fault-epoch", "14", "--epochs", "16"],
                           capture_output=True, text=True, cwd=ROOT, env=clean_env(), timeout=120)
        codes.append(p.returncode)
        assert "--exit-code-policy" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    assert codes == [RETRYABLE, PERMANENT]
