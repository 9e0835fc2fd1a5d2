"""Culprits from the logs' own structure (issue 25 item 5): the launcher's line that lists several tasks names them
(srun's ``tasks 1-3``), and a pasted ``kubectl describe pod`` names the pod whatever flags come before its name."""
from __future__ import annotations

import pytest

from logtext import diagnose_texts


@pytest.mark.parametrize("line, category, culprit", [
    ("srun: error: nid001277: tasks 1-3: Out Of Memory", "oom_host", "rank:1"),
    ("srun: error: n7: task 4: Out Of Memory", "oom_host", "rank:4"),
    ("srun: error: n1: tasks 0,2: Exited with exit code 1", "peer_crashed", "rank:0"),
])
def test_srun_names_the_first_task_of_its_list(tmp_path, line, category, culprit):
    rc = diagnose_texts({"slurm-1.out": line + "\n"}, tmp_path).root_cause
    assert (rc.category.value, rc.culprit) == (category, culprit)


@pytest.mark.parametrize("command", [
    "> kubectl describe pod -n rl agents-ppo-ant-93168c9e-worker-3ti2-1-9st9r",
    "$ kubectl -n rl describe pod agents-ppo-ant-93168c9e-worker-3ti2-1-9st9r",
    "$ kubectl describe pods --namespace=rl agents-ppo-ant-93168c9e-worker-3ti2-1-9st9r",
])
def test_a_described_pod_names_the_task_its_status_is_about(tmp_path, command):
    text = (f"{command}\n...\nStatus:         Failed\nReason:         Evicted\n"
            "Message:        The node was low on resource: memory.\n...\n")
    rc = diagnose_texts({"output.log": text}, tmp_path).root_cause
    assert (rc.category.value, rc.culprit) == ("oom_host", "worker:1")
