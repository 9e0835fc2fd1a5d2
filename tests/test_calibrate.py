"""Calibration where the log lacks the deciding line (distdoctor/diagnose/logs/calibrate.py, usual_causes.py): such a
verdict is low confidence, and its alternatives are the usual causes of what the log does show, each with what
settles it -- never the categories healthy words happen to resemble at 0 %.

Every log here is written for this test from the components' own wording (Open MPI's abort banner, TensorFlow's
runtime and session messages), not taken from the corpus."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from logtext import diagnose_texts
from distdoctor.diagnose.logs.usual_causes import MIN_RESEMBLANCE


def diagnose(files: dict[str, str], tmp: Path):
    """The hand-written calibration's reading (``diagnose`` re-ranks the alternatives by the learned reading after
    it: tests/test_learned.py)."""
    return diagnose_texts(files, tmp, learned=False).root_cause


def alts(rc) -> list[str]:
    return [a.category.value for a in rc.alternatives]


def assert_well_formed(rc) -> None:
    """At most three alternatives, none the verdict's own category, each with what settles it, and no word-model
    guess below the floor."""
    assert len(rc.alternatives) <= 3 and rc.category.value not in alts(rc), rc
    for a in rc.alternatives:
        assert a.settle, a
        m = re.search(r"resemble \w+ \((\d+)%\)", a.why)
        assert m is None or int(m.group(1)) >= round(MIN_RESEMBLANCE * 100), a


# -- only symptoms -------------------------------------------------------------------------------------------------

_MPI_EXIT = ("-------------------------------------------------------\n"
             "Primary job  terminated normally, but 2 processes returned\n"
             "non-zero exit codes. Per user-direction, the job has been aborted.\n"
             "-------------------------------------------------------\n")


def test_a_process_that_returned_an_error_status_lists_what_ends_a_process_itself(tmp_path):
    """An exit status, not a signal: the process ended itself (an exception, a GPU OOM, a node set up differently);
    the host's OOM killer would have shown as a signal."""
    rc = diagnose({"output.log": "[1,3]<stdout>:step 10 loss 2.31\n" + _MPI_EXIT}, tmp_path)
    assert rc.confidence == "low", rc
    assert alts(rc) == ["user_code_error", "oom_gpu", "config_mismatch_across_workers"], alts(rc)
    assert_well_formed(rc)


def test_the_same_abort_after_a_sigkill_ranks_the_oom_killer_first(tmp_path):
    text = ("mpirun noticed that process rank 3 with PID 4411 on node gpu-b exited on signal 9 (Killed).\n" + _MPI_EXIT)
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.confidence == "low" and rc.category.value in ("peer_crashed", "oom_host"), rc
    if rc.category.value == "peer_crashed":
        assert alts(rc)[0] == "oom_host", alts(rc)
    assert "user_code_error" not in alts(rc)[:1]


def test_a_remote_that_forgot_the_clients_context_lists_a_version_skew(tmp_path):
    text = ("INFO:tensorflow:Connecting to remote worker grpc://10.2.0.4:8470\n"
            "tensorflow.python.framework.errors_impl.InvalidArgumentError: Unable to find a context_id matching the "
            "specified one (4410298831). Perhaps the worker was restarted, or the context was GC'd?\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "peer_crashed" and rc.confidence == "low", rc
    assert "version_mismatch" in alts(rc) and "oom_host" in alts(rc), alts(rc)
    assert_well_formed(rc)


def test_a_lost_remote_with_no_task_of_the_job_in_sight_may_be_a_service_outside_it(tmp_path):
    text = ("Epoch 3/10\n"
            "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "peer_crashed" and rc.confidence == "low", rc
    assert alts(rc) == ["oom_host", "network_unreachable", "other"], alts(rc)
    assert_well_formed(rc)


def test_a_lost_peer_of_a_job_whose_tasks_are_known_is_not_read_as_an_outside_service(tmp_path):
    files = {"worker-0.log": "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n",
             "worker-1.log": "INFO:tensorflow:global_step/sec: 4.1\n"}
    rc = diagnose(files, tmp_path)
    assert rc.category.value == "peer_crashed", rc
    assert "other" not in alts(rc) and "oom_host" in alts(rc), alts(rc)


# -- a traceback cut before its exception ---------------------------------------------------------------------------

_TB = "Traceback (most recent call last):\n  File \"launch_ps.py\", line 51, in <module>\n    run()\n"


def test_a_traceback_cut_in_the_session_set_up_lists_the_clusters_configuration(tmp_path):
    text = (_TB + "  File \"/usr/lib/python3/site-packages/tensorflow/python/training/monitored_session.py\", line 647, "
                  "in create_session\n    return self._sess_creator.create_session()\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.confidence == "low", rc
    assert alts(rc) == ["config_tf_config", "config_mismatch_across_workers", "network_unreachable"], alts(rc)
    assert_well_formed(rc)


def test_a_traceback_cut_in_the_training_code_keeps_its_lookalikes(tmp_path):
    text = _TB + "  File \"model/blocks.py\", line 88, in residual\n    y = conv(x)\n"
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.confidence == "low" and "config_mismatch_across_workers" not in alts(rc), (rc, alts(rc))


# -- no line is evidence of a failure --------------------------------------------------------------------------------

_SETUP = ("I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:467] Started server with target: "
          "grpc://trainer-2:2222\n"
          "INFO:tensorflow:MultiWorkerMirroredStrategy with cluster_spec = {'worker': ['trainer-1:2222', "
          "'trainer-2:2222']}, task_type = 'worker', task_id = 1, num_workers = 2\n")


def test_a_log_that_stops_in_the_distributed_set_up_lists_the_cluster_first(tmp_path):
    rc = diagnose({"output.log": _SETUP}, tmp_path)
    assert rc.category.value == "other" and rc.confidence == "low", rc
    assert alts(rc)[:2] == ["config_tf_config", "firewall_or_port_blocked"], alts(rc)
    assert_well_formed(rc)


def test_a_log_that_trained_and_then_went_quiet_lists_the_causes_that_leave_no_line(tmp_path):
    text = _SETUP + "".join(f"INFO:tensorflow:loss = 0.{9 - i}1, step = {100 * i}\n" for i in range(1, 5))
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "other" and rc.confidence == "low", rc
    assert not any("set-up" in a.why for a in rc.alternatives), rc.alternatives
    assert {"oom_host", "preemption"} <= set(alts(rc)), alts(rc)
    assert_well_formed(rc)


def test_a_multi_worker_strategy_running_single_worker_lists_tf_config(tmp_path):
    text = ("INFO:tensorflow:Single-worker MultiWorkerMirroredStrategy with local_devices = ('/device:GPU:0',), "
            "communication = CommunicationImplementation.AUTO\n"
            "Epoch 1/2\n20/20 [==============================] - 3s 9ms/step - loss: 0.52\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert alts(rc)[0] == "config_tf_config", alts(rc)


# -- confidence caps for lines that do not contain their cause -------------------------------------------------------

@pytest.mark.parametrize("line, first", [
    ("tensorflow.python.framework.errors_impl.DataLossError: Checksum does not match: stored 81 vs. calculated on "
     "the restored bytes 17", "resource_exhaustion"),
    ("tensorflow.python.framework.errors_impl.DataLossError: Unable to open table file ./ckpt/model.ckpt-300.meta: "
     "Data loss: not an sstable (bad magic number): perhaps your file is in a different file format",
     "user_code_error"),
])
def test_a_damaged_checkpoint_is_low_with_what_damages_one(tmp_path, line, first):
    rc = diagnose({"output.log": line + "\n"}, tmp_path)
    assert rc.category.value == "other" and rc.confidence == "low", rc
    assert alts(rc)[0] == first and "peer_crashed" in alts(rc), alts(rc)
    assert_well_formed(rc)


def test_an_error_read_as_gpu_memory_only_by_association_is_low(tmp_path):
    line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: WhereOp: Race condition between counting "
            "the number of true elements and writing them.  When counting, saw 402 elements; but when writing their "
            "indices, saw 9 elements.\n")
    rc = diagnose({"worker-0.log": line}, tmp_path)
    assert rc.category.value == "oom_gpu" and rc.confidence == "low", rc
    assert alts(rc)[0] == "version_mismatch", alts(rc)


def test_a_cuda_library_that_says_its_allocation_failed_is_not_capped_as_a_disguise(tmp_path):
    rc = diagnose({"worker-0.log": "E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas "
                                   "handle: CUBLAS_STATUS_ALLOC_FAILED\n"}, tmp_path)
    assert rc.category.value == "oom_gpu" and rc.confidence in ("medium", "high"), rc
    assert alts(rc)[:1] != ["version_mismatch"], alts(rc)


# -- what a refused connection and an illegal instruction usually mean (blind set 3's kinds) -------------------------

def test_a_refused_connection_lists_a_peer_not_serving_before_the_network(tmp_path):
    """ECONNREFUSED: the peer's host answered and nothing listens on the port -- a peer not serving yet or dead, or
    another port in the cluster spec; the network delivered the packet."""
    text = ("2025-06-06 06:06:06.000001: W tensorflow/core/distributed_runtime/coordination/coordination_service_agent.cc"
            ":420] Failed to connect to the coordination service at trainer-0.jobs.svc:9000: UNAVAILABLE: "
            "ipv4:10.8.1.4:9000: Failed to connect to remote host: Connection refused\n")
    rc = diagnose({"trainer-1.log": text}, tmp_path)
    assert rc.confidence == "low", rc
    assert alts(rc)[:2] == ["peer_unresponsive", "peer_crashed"], alts(rc)
    assert_well_formed(rc)


def test_an_illegal_instruction_lists_a_node_that_differs(tmp_path):
    rc = diagnose({"output.log": "srun: error: cn-b12: task 5: Illegal instruction (core dumped)\n"}, tmp_path)
    assert rc.confidence != "high", rc
    assert "config_mismatch_across_workers" in alts(rc)[:2], alts(rc)    # among the first two: top-3 with the verdict
    assert_well_formed(rc)
