"""The training frameworks' and platforms' messages of kb/training_msgs.py, and the readings extended beside them (a
NaN loss under any name, any library's symbol version, Ray's older memory-monitor wording): each written from the
component's format, with the lines that must not read as them."""
from __future__ import annotations

import pytest

from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.model import Category, Status


def _read(text: str):
    hits, facts = scan_bytes("worker-0.log", (text + "\n").encode())
    return hits, reason(hits, [facts])


def _codes(text: str) -> set[str]:
    return {h.sig.code for h in _read(text)[0]}


@pytest.mark.parametrize("line", [
    "469/469 - 28s 45ms/step - loss: nan - accuracy: 0.10",                      # Keras
    "INFO:tensorflow:loss = nan, step = 1200",                                     # Estimator
    "\t averaged_loss = nan",                                                      # a loss under another name
    "=> STEP  750   lr: 0.000600   giou_loss:  nan   conf_loss: 10.89   total_loss:  nan",
    "Train: 4 [ 300/5004 (  6%)]  Loss:       nan (   nan)  Time: 3.225s",         # timm, padded
    "step 40 | train_loss=inf | lr 3e-4",
    "epoch 2: Loss: -inf",
    "INFO:tensorflow:Evaluation result for step 435000: loss = 148890.718750 ; perplexity = inf",   # OpenNMT-tf
    "| valid | epoch 003 | loss 14.2 | ppl=inf",
])
def test_a_nan_or_inf_loss_under_any_name_reads_as_divergence(line):
    hits, v = _read(line)
    assert "DD640" in {h.sig.code for h in hits}
    assert v.category == Category.NUMERICAL_DIVERGENCE


@pytest.mark.parametrize("line", [
    "469/469 - 28s 45ms/step - loss: 0.3512 - accuracy: 0.90",
    "I1129 00:01:02.000 collective timing: 1200 nanoseconds per step",
    "INFO  loss_scale: 65536 infinite_check: enabled",
    "loss: nano-batch 3 of 12",
    "WARNING: loss = infeasible constraint ignored",
    "apple = nan",
    "perplexity = 23.81",
])
def test_finite_losses_and_other_words_are_not_nan(line):
    assert "DD640" not in _codes(line)


def test_any_librarys_symbol_version_the_loader_misses_is_a_version_mismatch():
    line = ("NCCL INFO NET/Plugin : dlerror=/opt/amazon/efa/lib/libfabric.so.1: version `FABRIC_1.7' not found "
            "(required by /usr/local/lib/libnccl-net.so)")
    hits, v = _read(line)
    assert "DD1366" in {h.sig.code for h in hits} and v.category == Category.VERSION_MISMATCH
    # the loader's sentence needs its "(required by": another tool's "version `x' not found" is not the loader's
    assert "DD1366" not in _codes("helm: version `v3' not found in the chart index")


def test_rays_older_memory_monitor_wording_is_the_oom_killer_of_ray():
    line = ("(raylet) node_manager.cc:2966: System memory low at node with IP 10.0.3.9. Used memory (29.80GB) / total "
            "capacity (31.00GB) (0.96) exceeds threshold 0.95, killing latest task with name train()")
    _, v = _read(line)
    assert v.code == "DD897" and v.category == Category.OOM_HOST


def test_the_watchdogs_timeout_is_a_wait_that_a_cause_on_another_rank_explains():
    wait = ("[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600123 "
            "milliseconds before timing out.")
    _, alone = _read(wait)
    assert alone.code == "DD1440" and alone.category == Category.HANG_STALLED_WORKER
    assert alone.confidence != "high"          # a wait names no cause of its own
    oom = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total)"
    _, both = _read(oom + "\n" + wait)
    assert both.category == Category.OOM_GPU


@pytest.mark.parametrize("line", [
    "ERROR: (gcloud.compute.instances.create) The zone 'projects/p/zones/us-central1-a' does not have enough "
    "resources available to fulfill the request.  Try a different zone, or try again later.",
    "code: ZONE_RESOURCE_POOL_EXHAUSTED",
    "FailureReason: CapacityError: Unable to provision requested ML compute capacity. Please retry using a different "
    "ML instance type.",
    "An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation: We currently do not "
    "have sufficient p4d.24xlarge capacity in the Availability Zone you requested (us-east-1a).",
    "Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0 globally.",
    "   1234   gpu  job  bob PD  0:00  2 (ReqNodeNotAvail, UnavailableNodes:gpu[01-02])",
])
def test_the_clouds_and_schedulers_refusals_are_resource_exhaustion(line):
    hits, v = _read(line)
    assert v.status == Status.FAILED and v.category == Category.RESOURCE_EXHAUSTION, (v.code, [h.sig.code for h in hits])


def test_a_quota_line_needs_the_quota_errors_shape():
    # the prefilter's literal is there, the Compute Engine shape (an upper-case metric, a number, its scope) is not
    assert "DD1444" not in _codes("user's quota 'home' exceeded. Limit: 50G")


def test_slurm_that_cannot_resolve_a_host_is_the_network_not_a_version():
    _, v = _read('srun: error: Unable to resolve "mgmt": Unknown host\nsrun: error: Unable to establish control machine '
                 'address')
    assert v.code == "DD1449" and v.category == Category.NETWORK_UNREACHABLE
    assert "DD1449" not in _codes('WARNING: Unable to resolve "latest" tag, using the cached image')


def test_tfs_older_group_size_wording_is_tasks_that_disagree_about_the_cluster():
    """collective_param_resolver_local.cc before TF 2.5: "Collective Op C has group_size N and group_key K but that
    group has size M" -- one node with another device count; the issue's own miss (it read as the user's code)."""
    _, v = _read("tensorflow.python.framework.errors_impl.InternalError: Collective Op CollectiveReduceV2 has "
                 "group_size 4 and group_key 1 but that group has size 2")
    assert v.code == "DD626" and v.category == Category.CONFIG_MISMATCH_ACROSS_WORKERS


def test_pytorchs_store_that_no_one_reached_is_the_network_and_its_retries_are_no_failure():
    retries = ("[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-0]:29500 (errno: 111 - "
               "Connection refused).\n") * 3
    _, healthy = _read(retries + "Epoch 1/3\n100/100 - 3s 30ms/step - loss: 0.41")
    assert healthy.status != Status.FAILED          # rank 0 was not listening yet; the job went on
    _, v = _read(retries + "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while "
                 "trying to connect to (10.1.2.3, 29500).")
    assert v.code == "DD1451" and v.category == Category.NETWORK_UNREACHABLE


def test_a_process_group_that_not_every_rank_joined_is_a_peer_that_never_answered():
    _, v = _read("RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
                 "store_based_barrier_key:1 (world_size=8, worker_count=1, timeout=0:30:00)")
    assert v.code == "DD1450" and v.category == Category.PEER_UNRESPONSIVE


def test_the_heartbeat_monitor_is_a_hang_that_a_named_cause_explains():
    stuck = ("[rank3]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] Heartbeat monitor timed out! Process will be "
             "terminated after dumping debug info. workMetaList_.size()=1")
    _, alone = _read(stuck)
    assert alone.code == "DD1453" and alone.category == Category.HANG_STALLED_WORKER
    # the GPU that fell off the bus (Xid 79) is why the NCCL call hung: its reading, not the monitor's, is the verdict
    _, both = _read("NVRM: Xid (PCI:0000:3b:00): 79, pid=2211, GPU has fallen off the bus.\n" + stuck)
    assert both.code == "DD977", both.code


def test_a_rank_that_raised_the_barriers_timeout_raised_the_wait_not_a_bug_of_its_code(tmp_path):
    """In a task's own log the structural rules see a task that raised; the exception's own line is the wait."""
    from logtext import diagnose_texts
    tb = ("Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    dist.init_process_group("
          "\"nccl\")\nRuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
          "store_based_barrier_key:1 (world_size=8, worker_count=1, timeout=0:30:00)\n")
    diag = diagnose_texts({"worker-0.log": tb, "worker-1.log": "Epoch 1/3\n"}, tmp_path)
    assert diag.root_cause.code == "DD1450" and diag.root_cause.category == Category.PEER_UNRESPONSIVE


@pytest.mark.parametrize("line, preempted", [
    ("D 02-23 07:24:47 backend_utils.py:1404] TPU VM head-tpu is in PREEMPTED state. Skipping IP query...", True),
    ("state: PREEMPTED", True),
    ("INFO preemption policy: PREEMPTED jobs are requeued", False),
])
def test_a_tpu_in_the_preempted_state_is_a_preemption(line, preempted):
    assert ("DD1454" in _codes(line)) == preempted


def test_a_wait_at_the_c10d_store_that_timed_out_is_the_writer_busy_alone():
    """TCPStore's doWait ends in "Socket Timeout": the rank that writes the key (rank 0 unless the line names another)
    was busy alone or stuck; never high, a dead writer the other usual cause."""
    from distdoctor.diagnose.logs.reason import reason
    from distdoctor.diagnose.logs.scan import scan_bytes
    from distdoctor.model import Category
    for text, culprit in (("[7] is setting up NCCL communicator and retrieving ncclUniqueId from [2] via c10d key-value "
                           "store by key '0', but store->get('0') got error: Socket Timeout", "rank:2"),
                          ("RuntimeError: Socket Timeout\nException raised from doWait at "
                           "../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call first):", None)):
        hits, facts = scan_bytes("output.log", (text + "\n").encode())
        v = reason(hits, [facts])
        assert (v.category, v.code) == (Category.HANG_STALLED_WORKER, "DD1475") and v.confidence != "high", v.summary
        assert Category.PEER_CRASHED in [a.category for a in v.alternatives]
        assert v.culprit == culprit
    hits, _ = scan_bytes("output.log", b"java.net.SocketTimeoutException: socket timeout while reading\n")
    assert "DD1475" not in {h.sig.code for h in hits}
