"""The reasoning policy over fragments (diagnose/logs/reason.py), one behaviour per test, on short real-format logs."""
from __future__ import annotations

from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.model import Category, Status


def verdict(text: str, name: str = "output.log", writer: str | None = None):
    hits, facts = scan_bytes(name, text.encode(), writer)
    return reason(hits, [facts])


def test_the_first_cause_outranks_cascade_symptoms_and_names_their_peer_as_consequence():
    v = verdict("E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M (536870912 bytes) "
                "from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
                "UNAVAILABLE: recvmsg:Connection reset by peer\n"
                "AbortedError: Horovod has been shut down. This was caused by an exception on one of the ranks\n")
    assert (v.status, v.category) == (Status.FAILED, Category.OOM_GPU)
    assert v.consequences and all(h.sig.role.value == "symptom" for h in v.consequences)


def test_symptoms_alone_point_at_the_task_they_name():
    v = verdict("tensorflow.python.framework.errors_impl.UnavailableError: The following tasks are unhealthy "
                "(stopped sending heartbeats):\n/job:worker/replica:0/task:2\n")
    assert v.category == Category.PEER_CRASHED and v.culprit == "worker:2" and v.confidence == "medium"


def test_a_fragment_that_merely_ends_is_not_a_hang():
    v = verdict("Epoch 1/10\n100/100 - 3s - loss: 0.52 - 30ms/step\nEpoch 2/10\n")
    assert v.status == Status.UNKNOWN and v.category == Category.OTHER and v.confidence == "low"
    assert v.settle   # it says which log would settle it


def test_positive_evidence_of_waiting_is_a_hang_naming_the_awaited_task():
    v = verdict("I0000 master.cc:260] CreateSession still waiting for response from worker: /job:worker/replica:0/task:3\n")
    assert (v.status, v.culprit) == (Status.HUNG, "worker:3")


def test_an_answered_start_up_wait_is_not_a_hang():
    v = verdict("I0000 coordination_service.cc:502] Waiting for 1/2 tasks to connect.\n"
                "I0000 coordination_service.cc:505] Example stragglers:\n/job:worker/replica:0/task:1\n"
                "I0000 coordination_service.h:529] /job:worker/replica:0/task:1 has connected to coordination service.\n")
    assert v.status == Status.UNKNOWN


def test_an_alarming_but_harmless_log_is_not_a_failure():
    v = verdict("E1229 15:07:06.653634946   11024 ev_epollex_linux.cc:1482]   Skipping epollex becuase GRPC_LINUX_EPOLL is not defined.\n"
                "[96c7e3d99641:24984] Read -1, expected 122880, errno = 1\n")
    assert v.status == Status.UNKNOWN and v.category == Category.OTHER


def test_a_crash_right_after_a_lost_peer_died_of_the_cascade():
    v = verdict("[0]<stderr>:Killed\n"
                "[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'\n"
                "[1]<stderr>:  what():  [pair.cc:589] Read error [127.0.0.1]:3977: Connection reset by peer\n"
                "[1]<stderr>:Aborted (core dumped)\n")
    assert (v.category, v.culprit) == (Category.PEER_CRASHED, "rank:0")


def test_a_launcher_line_names_the_task():
    v = verdict("slurmstepd: error: Detected 1 oom-kill event(s) in step 3495064.0 cgroup.\n"
                "srun: error: node7: task 4: Out Of Memory\n")
    assert (v.category, v.culprit) == (Category.OOM_HOST, "rank:4")


def test_kubectl_describe_names_the_pod_it_is_about():
    v = verdict("Name:         mnist-worker-1\nNamespace:    default\n    State:          Terminated\n"
                "      Reason:       OOMKilled\n      Exit Code:    137\n")
    assert (v.category, v.culprit) == (Category.OOM_HOST, "worker:1")


def test_a_mismatch_blames_the_odd_task_not_the_reporter():
    v = verdict("[1,1]<stderr>:E tensorflow/stream_executor/cuda/cuda_driver.cc:397] failed call to cuInit: CUDA_ERROR_UNKNOWN\n"
                "[1,0]<stderr>:tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched ALLREDUCE "
                "CPU/GPU device selection: One rank specified device CPU, but another rank specified device GPU.\n")
    assert (v.category, v.culprit) == (Category.CONFIG_MISMATCH_ACROSS_WORKERS, "rank:1")


def test_a_remote_error_is_attributed_to_the_task_tensorflow_names():
    v = verdict("tensorflow.python.framework.errors_impl.InvalidArgumentError: From /job:worker/replica:0/task:3:\n"
                "Gradient for dense/kernel:0 is NaN : Tensor had NaN values\n", writer="chief:0")
    assert (v.category, v.culprit) == (Category.NUMERICAL_DIVERGENCE, "worker:3")


def test_a_cut_traceback_after_a_defective_cluster_spec_is_the_config():
    v = verdict("INFO:tensorflow:TF_CONFIG environment variable: {'cluster': {'ps': ['ps-0:2222'], 'worker': ['w-0:2222']}, "
                "'task': {'type': 'ps', 'index': 0}}\nTraceback (most recent call last):\n  File \"task.py\", line 9, in <module>\n",
                name="ps-0.log", writer="ps:0")
    assert (v.category, v.culprit) == (Category.CONFIG_TF_CONFIG, "ps:0")


def test_every_failed_verdict_has_confidence_and_a_quoted_first_line():
    v = verdict("RuntimeError: boom\n", writer="worker:0")
    assert v.status == Status.FAILED and v.root is not None and v.root.line_no == 1 and v.confidence == "low"


def test_a_traceback_cut_inside_a_network_call_is_the_network_and_on_kubernetes_a_block():
    tb = ("Traceback (most recent call last):\n  File \"train.py\", line 110, in main\n"
          "  File \"/usr/lib/python2.7/urllib.py\", line 98, in urlretrieve\n")
    assert verdict(tb).category == Category.NETWORK_UNREACHABLE
    assert verdict("kubectl logs -f job-ps-1 tensorflow\n" + tb).category == Category.FIREWALL_OR_PORT_BLOCKED


def test_the_remote_target_of_a_failed_call_is_the_peer():
    v = verdict("tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n"
                "Additional GRPC error information from remote target /job:ps/replica:0/task:0:\n")
    assert (v.category, v.culprit) == (Category.PEER_CRASHED, "ps:0")


def test_shutdown_noise_is_not_a_failure():
    v = verdict("E0000 00:00:1.0 1 coordination_service_agent.cc:490] Failed to disconnect from coordination service "
                "with status: DEADLINE_EXCEEDED: Deadline Exceeded\n")
    assert v.status == Status.UNKNOWN
