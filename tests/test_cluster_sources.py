"""cluster/: a TFJob pod's environment, and the task label every command derives from the sources. Pure."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import PY, ROOT
from distdoctor.cluster.spec import load_document
from distdoctor.cluster.schedulers import task_label
from distdoctor.cluster.tfjob import tfjob_pod
from distdoctor.preflight.rules import check_document, check_pod
from mesh_helpers import clean_env

K8S = {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
TF_CONFIG = json.dumps({"cluster": {"worker": ["mnist-worker-0.ns.svc:2222", "mnist-worker-1.ns.svc:2222"]},
                        "task": {"type": "worker", "index": 0}})


@pytest.mark.parametrize("hostname,task", [
    ("mnist-worker-1", "worker:1"), ("my-job-2-chief-0", "chief:0"), ("x-ps-12", "ps:12"),
    ("MNIST-Worker-3", "worker:3"),
])
def test_tfjob_pod_name_gives_the_task(hostname, task):
    pod = tfjob_pod({**K8S, "HOSTNAME": hostname})
    assert pod is not None and pod.task == task


@pytest.mark.parametrize("env", [{"HOSTNAME": "mnist-worker-1"}, {**K8S, "HOSTNAME": "web-7d9f8-abcde"},
                                 {**K8S}])
def test_not_a_tfjob_pod(env):
    assert tfjob_pod(env) is None


def test_task_label_from_each_source():
    assert task_label({"TF_CONFIG": TF_CONFIG, **K8S, "HOSTNAME": "mnist-worker-1"}) == "worker-0"
    assert task_label({**K8S, "HOSTNAME": "mnist-worker-1"}) == "worker-1"
    assert task_label({"SLURM_PROCID": "3", "SLURM_JOB_NODELIST": "n[1-4]"}) == "slurm-3"
    assert task_label({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}) == "rank-3"
    assert task_label({"TF_CONFIG": "{bad"}) == ""


def _spec(tf_config: str):
    return check_document(load_document(tf_config=tf_config, cluster_file=None, task=None, environ={})).spec


def test_pod_holding_another_pods_tf_config_is_named():
    f = check_pod(_spec(TF_CONFIG), tfjob_pod({**K8S, "HOSTNAME": "mnist-worker-1"}))
    assert [x.code for x in f] == ["DD420"] and f[0].culprit == "worker:0"
    assert "mnist-worker-1 is worker:1 by its name" in f[0].summary
    assert check_pod(_spec(TF_CONFIG), tfjob_pod({**K8S, "HOSTNAME": "mnist-worker-0"})) == ()


def test_check_static_reports_it():
    env = clean_env(TF_CONFIG=TF_CONFIG, HOSTNAME="mnist-worker-1", **K8S)
    p = subprocess.run([PY, "-m", "distdoctor", "check", "--static", "--json"], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=60)
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["DD420"], doc
