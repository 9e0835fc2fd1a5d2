"""What the rest of the logs says about a verdict's root line (distdoctor/diagnose/logs/hindsight.py), and the
confidence caps of lines that several causes produce (kb/ambiguous.py: a lost GPU, a SIGABRT exit, Hydra's firewall
hint).

Every log here is written for this test from the components' own wording (the training operator's conditions,
kube-scheduler's events, TensorFlow's gRPC server and CHECK lines, Open MPI's and srun's exit reports, Horovod's stall
inspector and controller, the NVIDIA driver's Xid), not taken from the corpus or a probe set. Each rule is tested
with a control: the same line without the fact that changes its reading."""
from __future__ import annotations

from pathlib import Path

from logtext import diagnose_texts


def diagnose(files: dict[str, str], tmp: Path):
    return diagnose_texts(files, tmp).root_cause


def reading(files: dict[str, str], tmp: Path):
    """The hand-written reading's verdict, before the learned reading bands its confidence by the calibrated
    probability (which may lower it where the real corpus holds no case like it: tests/test_learned.py)."""
    return diagnose_texts(files, tmp, learned=False).root_cause


def cats(rc) -> list[str]:
    return [rc.category.value] + [a.category.value for a in rc.alternatives]


# -- a job its controller then recorded as succeeded -----------------------------------------------------------------

_SCHED = ("LAST SEEN   TYPE      REASON             OBJECT                 MESSAGE\n"
          "12m         Warning   FailedScheduling   pod/resnet-ps-worker-3   0/6 nodes are available: 6 Insufficient "
          "cpu. preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod.\n")


def test_a_scheduling_wait_in_a_job_recorded_as_succeeded_is_no_failure(tmp_path):
    text = _SCHED + "1m          Normal    TFJobSucceeded     tfjob/resnet-ps          TFJob ml/resnet-ps successfully completed.\n"
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "other" and rc.confidence != "high", rc
    assert "resource_exhaustion" in cats(rc)[1:], cats(rc)


def test_the_same_wait_without_a_success_record_stays_a_shortage(tmp_path):
    rc = diagnose({"output.log": _SCHED}, tmp_path)
    assert rc.category.value == "resource_exhaustion", rc


def test_a_pod_placed_after_its_scheduling_wait_is_matched_by_name(tmp_path):
    """kube-scheduler's Scheduled event names NAMESPACE/POD: the FailedScheduling of the same pod was a wait that
    ended (no success record needed)."""
    text = _SCHED + ("9m          Normal    Scheduled          pod/resnet-ps-worker-3   Successfully assigned "
                     "ml/resnet-ps-worker-3 to node-c7\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc is None or rc.category.value != "resource_exhaustion", rc


# -- a bind failure under a cluster that lists two tasks at one address --------------------------------------------------

_BIND = ("E1107 09:00:01.000000 3121 server_chttp2.cc:40] {\"created\":\"@1699347601.0\",\"description\":\"No address "
         "added out of total 1 resolved\"}\n"
         "tensorflow.python.framework.errors_impl.UnknownError: Could not start gRPC server\n")


def test_a_bind_failure_under_a_cluster_with_two_tasks_at_one_address_is_the_cluster_spec(tmp_path):
    spec = ("TF_CONFIG={\"cluster\": {\"worker\": [\"10.0.0.5:2222\", \"10.0.0.5:2222\", \"10.0.0.6:2222\"]}, "
            "\"task\": {\"type\": \"worker\", \"index\": 1}}\n")
    rc = diagnose({"output.log": spec + _BIND}, tmp_path)
    assert rc.category.value == "config_tf_config" and rc.confidence == "medium", rc
    assert "port_in_use" in cats(rc)[1:], cats(rc)


def test_a_bind_failure_under_a_cluster_of_distinct_addresses_stays_a_port_in_use(tmp_path):
    spec = ("TF_CONFIG={\"cluster\": {\"worker\": [\"10.0.0.5:2222\", \"10.0.0.5:2223\"]}, "
            "\"task\": {\"type\": \"worker\", \"index\": 1}}\n")
    rc = diagnose({"output.log": spec + _BIND}, tmp_path)
    assert rc.category.value == "port_in_use", rc


# -- an abort whose reason a line states ------------------------------------------------------------------------------

_ABORT = ("-------------------------------------------------------\n"
          "mpirun noticed that process rank 2 with PID 7781 on node cpu-a exited on signal 6 (Aborted).\n"
          "-------------------------------------------------------\n")


def test_an_abort_after_a_failed_thread_creation_is_the_exhausted_resource(tmp_path):
    text = ("[1,2]<stderr>:2025-01-09 10:00:00.000001: F tensorflow/tsl/platform/default/env.cc:74] Check failed: "
            "ret == 0 (11 vs. 0)Thread tf_inter_op creation via pthread_create() failed.\n" + _ABORT)
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "resource_exhaustion" and rc.confidence in ("medium", "low"), rc
    assert reading({"output.log": text}, tmp_path).confidence == "medium"
    assert "segfault_core_dump" in cats(rc)[1:], cats(rc)


# libstdc++'s report of an uncaught C++ exception, then the exception's own message (Gloo's pair.cc and
# unbound_buffer.cc, Horovod's mpi_operations.cc), as a rank prints them under horovodrun
_THROW = ("[1]<stderr>:terminate called after throwing an instance of '{t}'\n"
          "[1]<stderr>:  what():  {what}\n"
          "[1]<stderr>:Aborted (core dumped)\n")


def test_an_uncaught_exception_that_names_a_lost_peer_is_the_peer_not_a_native_crash(tmp_path):
    text = _THROW.format(t="gloo::EnforceNotMet", what="[../third_party/gloo/gloo/transport/tcp/pair.cc:201] Socket "
                         "unexpectedly closed [10.0.0.7]:41133")
    rc = reading({"output.log": text}, tmp_path)
    assert (rc.category.value, rc.confidence) == ("peer_crashed", "medium"), rc
    assert rc.culprit is None, rc       # the rank that aborted (rank:1) is not the one that was lost, unnamed here
    assert "what():" in rc.evidence[0].text and "segfault_core_dump" in cats(rc)[1:], (rc.evidence, cats(rc))


def test_an_uncaught_timeout_waiting_for_a_peer_is_a_stalled_peer(tmp_path):
    text = _THROW.format(t="gloo::IoException", what="[/tmp/pip/gloo/transport/tcp/unbound_buffer.cc:136] Timed out "
                         "waiting 600000ms for send operation to complete")
    assert reading({"output.log": text}, tmp_path).category.value == "hang_stalled_worker"


def test_an_uncaught_exception_whose_message_reads_as_nothing_known_stays_an_abort(tmp_path):
    text = _THROW.format(t="std::out_of_range", what="basic_string::replace: __pos (which is 18) > this->size() "
                         "(which is 4)")
    assert reading({"output.log": text}, tmp_path).category.value == "segfault_core_dump"


def test_a_what_line_far_from_the_abort_is_not_its_message(tmp_path):
    text = (_THROW.format(t="std::out_of_range", what="basic_string::replace") + "step 1\nstep 2\nstep 3\nstep 4\n"
            "[1]<stderr>:  what():  [../third_party/gloo/gloo/transport/tcp/pair.cc:201] Socket unexpectedly closed "
            "[10.0.0.7]:41133\n")
    assert reading({"output.log": text}, tmp_path).category.value == "segfault_core_dump"


def test_a_bare_sigabrt_exit_is_not_a_confident_segfault(tmp_path):
    rc = diagnose({"output.log": _ABORT}, tmp_path)
    assert rc.confidence != "high", rc
    assert "resource_exhaustion" in cats(rc), cats(rc)


def test_a_sigsegv_exit_stays_a_native_crash_but_not_a_confident_one(tmp_path):
    """SIGSEGV names how the process died: a native crash, read so, but at most medium (kb/ambiguous.py: memory that
    could not be backed, another build's extension end a process the same way; the corpus' 18: 11 a native crash)."""
    text = _ABORT.replace("signal 6 (Aborted)", "signal 11 (Segmentation fault)")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "segfault_core_dump" and rc.confidence != "high", rc
    assert "resource_exhaustion" in cats(rc), cats(rc)


# -- a GPU lost while the tasks stay alive -----------------------------------------------------------------------------

_XID = "[Mon Mar  3 02:11:09 2025] NVRM: Xid (PCI:0000:b1:00): 79, pid=5512, name=python, GPU has fallen off the bus.\n"


def test_a_lost_gpu_while_every_pod_runs_is_a_stalled_task(tmp_path):
    pods = ("NAME              READY   STATUS    RESTARTS   AGE\n"
            "gpt-worker-0      1/1     Running   0          9h\n"
            "gpt-worker-1      1/1     Running   0          9h\n")
    rc = diagnose({"output.log": pods + _XID}, tmp_path)
    assert rc.category.value == "hang_stalled_worker" and rc.confidence in ("medium", "low"), rc
    assert reading({"output.log": pods + _XID}, tmp_path).confidence == "medium"


def test_a_lost_gpu_alone_is_not_high_and_lists_the_hang(tmp_path):
    rc = diagnose({"output.log": _XID}, tmp_path)
    assert rc.confidence != "high", rc
    assert "hang_stalled_worker" in cats(rc), cats(rc)


# -- Horovod's stall report ------------------------------------------------------------------------------------------

_STALL = ("[1,0]<stderr>:[2025-02-01 08:00:00.000000: W horovod/common/stall_inspector.cc:107] One or more tensors were "
          "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks "
          "for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or "
          "that only subset of ranks is submitting tensors, which will cause deadlock. \n"
          "[1,0]<stderr>:Missing ranks:\n")
_SHUTDOWN = ("[1,0]<stderr>:tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down. This was "
             "caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor "
             "after one of the ranks finished execution.\n")


def test_a_stall_report_with_ranks_on_both_sides_is_a_collective_mismatch(tmp_path):
    text = (_STALL + "[1,0]<stderr>:0!: [DistributedSGD_Allreduce/HorovodAllreduce_grads_0]\n"
            "[1,0]<stderr>:1!: [eval_accuracy_sum]\n" + _SHUTDOWN)
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "hang_collective_mismatch", rc


def test_a_stall_report_with_one_rank_missing_everything_is_not_read_as_a_mismatch(tmp_path):
    text = (_STALL + "[1,0]<stderr>:3: [DistributedSGD_Allreduce/HorovodAllreduce_grads_0, "
            "DistributedSGD_Allreduce/HorovodAllreduce_grads_1_0]\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value != "hang_collective_mismatch", rc


def test_a_broadcast_of_different_shapes_is_ranks_that_built_different_models(tmp_path):
    text = ("[1,1]<stderr>:tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched BROADCAST tensor "
            "shapes: One rank sent a tensor with dimension 1 equal to 512, but another rank sent a tensor with "
            "dimension 1 equal to 520.\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "config_mismatch_across_workers", rc
    allreduce = text.replace("BROADCAST", "ALLREDUCE")
    assert diagnose({"output.log": allreduce}, tmp_path).category.value == "hang_collective_mismatch"


# -- srun's teardown, files missing on some nodes ----------------------------------------------------------------------

def test_a_step_cancelled_after_a_task_failed_is_not_a_preemption(tmp_path):
    text = ("2: Traceback (most recent call last):\n"
            "2:   File \"/home/u/train.py\", line 12, in <module>\n"
            "2: ValueError: could not convert string to float: 'n/a'\n"
            "srun: error: cn07: task 2: Exited with exit code 1\n"
            "srun: Terminating StepId=90210.0\n"
            "slurmstepd: error: *** STEP 90210.0 ON cn06 CANCELLED AT 2025-05-05T05:05:05 ***\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "user_code_error" and rc.culprit == "rank:2", rc


def test_a_step_cancelled_after_a_rank_called_mpi_abort_is_not_a_preemption(tmp_path):
    # MPICH / Intel MPI under srun --label: the rank's abort notice, then srun's teardown and slurmstepd's cancel
    text = ("37: Abort(1) on node 37 (rank 37 in comm 0): Fatal error in PMPI_Bcast: Invalid count, error stack:\n"
            "37: PMPI_Bcast(432): MPI_Bcast(buf=0x7f, count=-12, MPI_BYTE, root=0, MPI_COMM_WORLD) failed\n"
            "   0: slurmstepd: error: *** STEP 4411.0 ON cn01 CANCELLED AT 2025-05-05T05:05:05 ***\n"
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
            "srun: error: cn09: tasks 40-79: Killed\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value != "preemption" and rc.culprit == "rank:37", rc
    assert "preemption" in cats(rc), rc   # a person's scancel stays possible
    # the control: the same cancel with no task's failure before it
    alone = text.split("\n", 2)[2]
    assert diagnose({"output.log": alone}, tmp_path).category.value == "preemption"


def test_a_module_missing_on_some_ranks_only_is_nodes_set_up_differently(tmp_path):
    text = ("[1,0]<stdout>:step 100 loss 1.02\n[1,1]<stdout>:step 100 loss 1.03\n"
            "[1,2]<stderr>:ModuleNotFoundError: No module named 'sentencepiece'\n"
            "[1,3]<stderr>:ModuleNotFoundError: No module named 'sentencepiece'\n"
            "[1,0]<stderr>:tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down. This was "
            "caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor "
            "after one of the ranks finished execution.\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "config_mismatch_across_workers", rc
    assert set(rc.candidates) >= {"rank:2", "rank:3"}, rc


def test_a_module_missing_on_the_only_rank_shown_is_not_read_as_a_node_difference(tmp_path):
    rc = diagnose({"output.log": "[1,2]<stderr>:ModuleNotFoundError: No module named 'sentencepiece'\n"}, tmp_path)
    assert rc.category.value != "config_mismatch_across_workers", rc


# -- TF_CONFIG that is not JSON, SIGTERM, Hydra --------------------------------------------------------------------

def test_a_json_error_under_the_tf_config_resolver_is_the_tf_config(tmp_path):
    text = ("Traceback (most recent call last):\n"
            "  File \"/app/run.py\", line 8, in <module>\n"
            "    strategy = tf.distribute.MultiWorkerMirroredStrategy()\n"
            "  File \"/usr/lib/python3/site-packages/tensorflow/python/distribute/cluster_resolver/"
            "tfconfig_cluster_resolver.py\", line 61, in _load_tf_config\n"
            "    return json.loads(os.environ.get(_TF_CONFIG_ENV, '{}'))\n"
            "  File \"/usr/lib/python3.10/json/__init__.py\", line 346, in loads\n"
            "    return _default_decoder.decode(s)\n"
            "  File \"/usr/lib/python3.10/json/decoder.py\", line 337, in decode\n"
            "    obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n"
            "  File \"/usr/lib/python3.10/json/decoder.py\", line 353, in raw_decode\n"
            "    obj, end = self.scan_once(s, idx)\n"
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 12 (char 11)\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "config_tf_config", rc


def test_a_task_that_says_it_received_sigterm_was_stopped_from_outside(tmp_path):
    rc = diagnose({"worker-1.log": "step 5100 loss 0.31\nCaught SIGTERM, saving and exiting\n"}, tmp_path)
    assert rc.category.value == "preemption" and rc.culprit == "worker:1", rc


def test_hydras_firewall_hint_is_a_blocked_port_at_medium_confidence(tmp_path):
    text = ("[proxy:0:1@hpc-b] HYDU_sock_connect (lib/utils/sock.c:145): unable to connect from \"hpc-b\" to \"hpc-a\" "
            "(No route to host)\n"
            "[proxy:0:1@hpc-b] main (proxy/pmip.c:101): unable to connect to server hpc-a at port 39211 (check for "
            "firewalls!)\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "firewall_or_port_blocked" and rc.confidence in ("medium", "low"), rc
    assert "network_unreachable" in cats(rc)[1:], cats(rc)
    # the reading's own band; the printed one is its calibrated probability's when lower (0.49 with the 540 model)
    assert reading({"output.log": text}, tmp_path).confidence == "medium"


def test_a_throttled_gpu_is_a_slow_worker(tmp_path):
    text = ("    Clocks Event Reasons\n        Idle                              : Not Active\n"
            "        HW Slowdown                       : Active\n"
            "            HW Thermal Slowdown           : Active\n")
    rc = diagnose({"output.log": text}, tmp_path)
    assert rc.category.value == "straggler_slow_worker", rc


# -- a collective timeout is a wait, not a lost peer (log_rules DD156) -----------------------------------------------

def test_a_collective_timeout_is_read_as_a_hang_not_as_a_lost_peer(tmp_path):
    """TensorFlow's CommunicationOptions timeout fires when a peer never joins the collective: stalled, or waiting in
    another collective -- the verdict and one of its alternatives (the reasoning's own other reading is listed third
    where the learned ones rank others first); no line says a peer was lost."""
    text = ("step 300 loss 0.912\nstep 400 loss 0.877\n"
            "2025-04-04 04:04:04.000001: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
            "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Collective has timed out during execution.\n"
            "Traceback (most recent call last):\n"
            "  File \"/job/loop.py\", line 77, in <module>\n"
            "    total = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)\n"
            "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out during execution. "
            "[Op:CollectiveReduceV2]\n")
    rc = diagnose({"worker-1.log": text}, tmp_path)
    assert cats(rc)[:3] and rc.category.value != "peer_crashed", rc
    assert rc.category.value in ("hang_stalled_worker", "hang_collective_mismatch"), cats(rc)
    assert {"hang_stalled_worker", "hang_collective_mismatch"} <= set(cats(rc)), cats(rc)
