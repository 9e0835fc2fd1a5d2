"""Culprits from the logs' own structure (issue 25 item 5): the launcher's line that lists several tasks names them
(srun's ``tasks 1-3``), and a pasted ``kubectl describe pod`` names the pod whatever flags come before its name."""
from __future__ import annotations

import pytest

from logtext import diagnose_texts


@pytest.mark.parametrize("line, category, culprit", [
    ("srun: error: nid001277: tasks 1-3: Out Of Memory", "oom_host", "rank:1"),
    ("srun: error: n7: task 4: Out Of Memory", "oom_host", "rank:4"),
    ("srun: error: n1: tasks 0,2: Exited with exit code 1", None, "rank:0"),   # the cause: the learned reading's
])
def test_srun_names_the_first_task_of_its_list(tmp_path, line, category, culprit):
    rc = diagnose_texts({"slurm-1.out": line + "\n"}, tmp_path).root_cause
    assert (category or rc.category.value, rc.culprit) == (rc.category.value, culprit)


def test_hydras_rank_header_names_the_rank_whose_signal_it_reports(tmp_path):
    # MPICH's Hydra (mpiexec): the BAD TERMINATION block names the rank above its EXIT CODE / KILLED BY SIGNAL line
    block = ("=" * 83 + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 3 PID 4121 RUNNING AT gpu-node-7\n"
             "=   KILLED BY SIGNAL: 11 (Segmentation fault)\n" + "=" * 83 + "\n")
    rc = diagnose_texts({"output.log": "epoch 1 step 40 loss 0.51\n" + block}, tmp_path).root_cause
    assert (rc.category.value, rc.culprit) == ("segfault_core_dump", "rank:3"), rc
    older = block.replace("RANK 3 PID", "PID")   # Hydra before 3.3 names no rank
    assert diagnose_texts({"output.log": older}, tmp_path).root_cause.culprit is None


def test_an_abort_notice_below_an_unknown_error_names_its_rank(tmp_path):
    # a program's own error line no signature knows, then MPICH's notice of the rank that called MPI_Abort
    text = ("ERROR on proc 2: cannot open restart file ./restart.40000 (src/read_restart.cpp:96)\n"
            "Abort(1) on node 2 (rank 2 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 2\n")
    rc = diagnose_texts({"output.log": text}, tmp_path).root_cause
    assert rc.code == "DD160" and rc.culprit == "rank:2", rc
    far = text.replace("\nAbort", "\n" + "step 1 done\n" * 5 + "Abort")   # not the notice of that error
    assert diagnose_texts({"output.log": far}, tmp_path).root_cause.culprit is None


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
