"""A pasted `kubectl get pods` table or event names the task by its pod's name (diagnose/logs/scan.py)."""
from __future__ import annotations

import pytest

from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.model import Category

HEAD = "NAME                      READY   STATUS             RESTARTS   AGE\n"


def verdict(text: str):
    hits, facts = scan_bytes("output.log", text.encode())
    return reason(hits, [facts])


@pytest.mark.parametrize("rows, category, culprit", [
    ("dist-mnist-ps-0           1/1     Running            0          12m\n"
     "dist-mnist-worker-1       0/1     OOMKilled          4          12m\n", Category.OOM_HOST, "worker:1"),
    ("tfjob-chief-0             1/1     Running            0          3m\n"
     "tfjob-worker-0            0/1     CrashLoopBackOff   6          3m\n", Category.PEER_CRASHED, "worker:0"),
    ("pod/trainer-ps-1          0/1     Error              0          1h\n"
     "  Warning  Evicted   2m   kubelet  pod/trainer-worker-3 The node was low on resource: memory.\n",
     Category.OOM_HOST, "worker:3"),
])
def test_the_pod_name_names_the_task(rows, category, culprit):
    v = verdict(HEAD + rows)
    assert (v.category, v.culprit) == (category, culprit)


def test_a_pod_name_that_names_no_task_names_nobody():
    v = verdict(HEAD + "redis-7d9f8b-x2x       0/1     OOMKilled          1          5m\n")
    assert (v.category, v.culprit) == (Category.OOM_HOST, None)


@pytest.mark.parametrize("line", [
    "I0711 06:44:46.498604 1403160 k8s_worker_manager.py:128] Got event MODIFIED, phase Failed for pod: job-worker-0",
    "pod/job-worker-0 changed: phase: Failed",
    'INFO watcher: pod "job-worker-0" phase=Failed',
])
def test_a_pod_in_phase_failed_is_a_lost_peer_named_by_its_pod(line):
    """Kubernetes' PodPhase Failed (every container ended, one in failure) is the symptom of a crashed task; a
    watcher's line names the pod as `pod: NAME`, `pod/NAME` or `pod "NAME"`."""
    v = verdict(line + "\n")
    assert (v.category, v.culprit) == (Category.PEER_CRASHED, "worker:0"), v


@pytest.mark.parametrize("line", ["Got event MODIFIED, phase Running for pod: job-worker-0",
                                  "Got event MODIFIED, phase Succeeded for pod: job-worker-0",
                                  'status: {"phase": "Pending"}'])
def test_another_phase_is_not_read_as_failed(line):
    hits, _ = scan_bytes("output.log", (line + "\n").encode())
    assert "DD1456" not in {h.sig.code for h in hits}
    assert verdict(line + "\n").category != Category.PEER_CRASHED
