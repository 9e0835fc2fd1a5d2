"""The verdict where Kubernetes shows it: every node supervisor writes the one-line verdict to its
container's termination message (``/dev/termination-log``; ``$DISTDOCTOR_TERMINATION_LOG`` here).

Two real ``distdoctor run --node`` supervisors on loopback, in an environment that looks like a pod
(``KUBERNETES_SERVICE_HOST``), around a TensorFlow-free task (tests/workers/flaky.py). The Slurm
Comment is tested under the real Slurm (tests/test_slurm.py), rank 0's last line under the real
mpirun (tests/test_openmpi.py).
"""
from __future__ import annotations

import subprocess
import sys

from mesh_helpers import ROOT, TOKEN, clean_env, free_ports, tf_config

PY = sys.executable
FLAKY = str(ROOT / "tests" / "workers" / "flaky.py")


def test_every_pod_writes_the_cluster_verdict_to_its_termination_message(tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for i in range(2):
        env = clean_env(TF_CONFIG=tf_config(cluster, f"worker:{i}"), DISTDOCTOR_TOKEN=TOKEN,
                        KUBERNETES_SERVICE_HOST="10.0.0.1", HOSTNAME=f"mnist-worker-{i}",
                        DISTDOCTOR_TERMINATION_LOG=str(tmp_path / f"termination-log-{i}"))
        argv = [PY, "-m", "distdoctor", "run", "--node", "--no-report", "--mesh-timeout", "10", "--failure-grace",
                "1", "--grace", "2", "--out", str(tmp_path / f"w{i}"), "--",
                PY, FLAKY, "--ckpt", str(tmp_path / "ckpt"), "--fault", "sigkill", "--fault-epoch", "14",
                "--epochs", "16"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                      env=env))
    outs = [p.communicate(timeout=120) for p in procs]
    assert procs[1].returncode == 137, outs[1]       # the node's exit status is still its task's
    for i in range(2):
        text = (tmp_path / f"termination-log-{i}").read_text()
        # the cluster-wide verdict on both pods, the killed one's and the survivor's
        assert text.startswith("distdoctor: status=failed category=peer_crashed culprit=worker:1 code=DD101: "), text
        assert text.count("\n") == 1
        assert "verdict written to the container's termination message" in outs[i][0]
