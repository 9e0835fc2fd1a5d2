"""The control planes' refusals mined from their sources (kb/platform_msgs.py): a message gets the category of what it
means, whichever job it comes from.

Each line below is the component's own message (the wording of the source the signature cites), set among ordinary
output; `distdoctor diagnose` must give the category of its cause. The fixture checks in test_signatures.py cover the
scanner and the lone-line verdict; these go through the command a user runs."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import PY, ROOT
from distdoctor.diagnose.logs.kb import SIGNATURES
from distdoctor.diagnose.logs.signature import by_code

MINE = [s for s in SIGNATURES if 1240 <= int(s.code[2:]) <= 1269]

CASES = [
    # apiserver forbiddenMessage, pre-1.11 wording (no 'resource', no API group): RBAC, a platform setting
    ("rbac-old-wording", 'E0110 11:10:03.455096 1 leaderelection.go:226] error retrieving resource lock kubeflow/tf-operator: '
     'endpoints "tf-operator" is forbidden: User "system:serviceaccount:kubeflow:tf-operator" cannot get endpoints in '
     'the namespace "kubeflow"', "other"),
    # apimachinery NoKindMatchError on an alpha version the installed operator dropped
    ("no-kind-alpha", 'error: unable to recognize "dist.yaml": no matches for kind "TFJob" in version '
     '"kubeflow.org/v1alpha2"', "version_mismatch"),
    # the same error on a stable version: the CRD is not installed
    ("no-kind-stable", 'error: unable to recognize "dist.yaml": no matches for kind "PyTorchJob" in version '
     '"kubeflow.org/v1"', "other"),
    # Volcano gang plugin: the job's gang does not fit
    ("volcano-gang", "Warning  Unschedulable  2m  volcano  3/4 tasks in gang unschedulable: pod group is not ready, "
     "4 Pending, 4 minAvailable; Pending: 3 Unschedulable, 1 Schedulable", "resource_exhaustion"),
    # runc: the container's memory limit is too low to start it
    ("runc-init-oom", "Warning  Failed  1m  kubelet  Error: failed to create containerd task: failed to create shim task: "
     "OCI runtime create failed: runc create failed: unable to start container process: container init was OOM-killed "
     "(memory limit too low?): unknown", "oom_host"),
    # Docker daemon: the image is not in the registry (not a TF_CONFIG problem)
    ("image-missing", 'Failed to pull image "acme/trainer:2.21": rpc error: code = Unknown desc = Error response from '
     "daemon: repository acme/trainer not found: does not exist or no pull access", "other"),
    # scheduler nodeports plugin: a hostPort held on every node
    ("host-port", "Warning  FailedScheduling  3m  default-scheduler  0/2 nodes are available: 2 node(s) didn't have "
     "free ports for the requested pod ports.", "port_in_use"),
    # YARN SchedulerUtils without the exception's class name on the line
    ("yarn-max-alloc", "Invalid resource request, requested memory < 0, or requested memory > max configured, "
     "requestedMemory=16384, maxMemory=8192", "resource_exhaustion"),
]


@pytest.mark.parametrize("name,text,category", CASES, ids=[c[0] for c in CASES])
def test_diagnose_names_the_cause_the_message_means(tmp_path, name, text, category):
    log = tmp_path / "output.log"
    log.write_text("starting job\nEpoch 1/3\n" + text + "\n")
    out = subprocess.run([PY, "-m", "distdoctor", "diagnose", "--json", str(log)], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode in (0, 1, 3), out.stderr
    rc = json.loads(out.stdout)["root_cause"]
    assert rc["category"] == category, (rc["code"], rc["summary"])


def test_no_kind_match_is_read_by_the_version_it_names():
    old, new = by_code("DD1243"), by_code("DD1262")
    for line, sig in [('no matches for kind "MPIJob" in versions ["kubeflow.org/v1beta2"]', old),
                      ('no matches for kind "TFJob" in version "tensorflow.org/v1alpha1"', old),
                      ('no matches for kind "TFJob" in version "kubeflow.org/v1"', new),
                      ('no matches for kind "Job" in group "batch.volcano.sh"', new)]:
        assert sig.match(line), line
        assert not (old if sig is new else new).match(line), line


def test_every_platform_signature_cites_its_source():
    assert 15 <= len(MINE) <= 40
    repos = ("kubernetes/kubernetes", "volcano-sh/volcano", "kubeflow/training-operator", "apache/hadoop",
             "opencontainers/runc", "containerd/containerd", "moby/moby")
    for s in MINE:
        assert any(s.source.startswith(r) for r in repos), (s.code, s.source)
        assert s.source.rstrip().endswith(")"), (s.code, "no function named")
        assert s.remedy and s.fixture and s.versions
