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
    # rank 0's SIGKILL, which no line sent, is the cause (most often the OOM killer: priors), not rank 1's abort
    assert (v.category, v.culprit, v.confidence) == (Category.OOM_HOST, "rank:0", "low")
    assert v.alternatives[0].category == Category.PEER_CRASHED


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


# -- behaviours added by the message-probe audit (tests/probes/messages.tsv) --------------------------------------

def test_a_barrier_timeout_is_a_wait_naming_the_late_task_not_a_deadline_symptom():
    v = verdict("tensorflow.python.framework.errors_impl.DeadlineExceededError: Barrier timed out. Id: sync. This usually "
                "happens because a task triggered the barrier too early or too slowly.\n"
                "# of tasks that reached the barrier: 1/2.\n"
                "The first task at the barrier: /job:worker/replica:0/task:0. Some timed out task names:\n"
                "/job:worker/replica:0/task:1\n")
    assert (v.status, v.category, v.culprit) == (Status.HUNG, Category.HANG_STALLED_WORKER, "worker:1")


def test_one_horovod_rank_missing_from_every_stalled_tensor_is_a_stalled_worker():
    stall = ("W horovod/common/stall_inspector.cc:107] One or more tensors were submitted to be reduced, gathered or "
             "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.\n"
             "Missing ranks:\n")
    v = verdict(stall + "1: [DistributedGradientTape_Allreduce/cond_0/HorovodAllreduce_grads_0_0]\n"
                        "1: [DistributedGradientTape_Allreduce/cond_1/HorovodAllreduce_grads_1_0]\n")
    assert (v.status, v.category, v.culprit) == (Status.HUNG, Category.HANG_STALLED_WORKER, "rank:1")
    # ranks missing on both sides submitted different tensors: a mismatch, not one late rank
    v = verdict(stall + "0: [allreduce.noname.1]\n1: [allreduce.noname.2]\n")
    assert v.category == Category.HANG_COLLECTIVE_MISMATCH


def test_a_retry_is_no_failure_when_the_log_then_goes_on_training():
    retry = ("I0000 grpc_util.cc:86] Failed to get dispatcher version from dispatcher running at d:5050: UNAVAILABLE: "
             "failed to connect to all addresses. Will retry in 1534ms.\n")
    v = verdict(retry + "Epoch 1/3\n100/100 [==============================] - 12s 98ms/step - loss: 0.69\n")
    assert v.status in (Status.UNKNOWN, Status.SUCCEEDED) and v.category == Category.OTHER
    assert verdict(retry).status == Status.FAILED      # retries with nothing after them are still evidence


def test_a_create_session_wait_answered_by_the_master_session_is_not_a_hang():
    wait = "I master.cc:267] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
    v = verdict(wait + "I master_session.cc:1192] Start master session 3f1a2b4c5d6e7f80 with config: \n"
                       "INFO:tensorflow:loss = 2.3012, step = 1\n")
    assert v.status != Status.HUNG and v.category == Category.OTHER
    assert verdict(wait).status == Status.HUNG


def test_a_sigkill_after_the_tasks_own_low_memory_warnings_is_a_host_oom():
    warn = "[1,1]<stderr>:W cpu_allocator_impl.cc:81] Allocation of 4294967296 exceeds 10% of free system memory.\n"
    kill = "mpirun noticed that process rank 1 with PID 7721 on node n1 exited on signal 9 (Killed).\n"
    v = verdict(warn + kill)
    assert (v.category, v.culprit, v.confidence) == (Category.OOM_HOST, "rank:1", "medium")
    # another task's warning says nothing about this task's kill: only the prior on a SIGKILL no line sent
    v = verdict(warn.replace("[1,1]", "[1,0]") + kill)
    assert (v.category, v.confidence) == (Category.OOM_HOST, "low")
    assert "nothing in the logs says who sent the SIGKILL" in v.summary


def test_an_exception_raised_reading_tf_config_is_a_config_error():
    v = verdict("  File \"/x/tfconfig_cluster_resolver.py\", line 35, in _load_tf_config\n"
                "    return json.loads(os.environ.get('TF_CONFIG', '{}'))\n"
                "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\n")
    assert v.category == Category.CONFIG_TF_CONFIG
    v = verdict("  File \"train.py\", line 9, in <module>\n    cfg = json.loads(open('c.json').read())\n"
                "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n")
    assert v.category == Category.USER_CODE_ERROR


def test_the_rank_a_launcher_line_names_is_the_culprit_of_the_crash_it_reports():
    v = verdict("mpirun noticed that process rank 1 with PID 4242 on node gpu2 exited on signal 11 (Segmentation fault).\n")
    assert (v.category, v.culprit) == (Category.SEGFAULT_CORE_DUMP, "rank:1")


def test_a_gpu_oom_on_a_local_device_names_no_task_but_a_cluster_device_does():
    base = "ResourceExhaustedError: OOM when allocating tensor with shape[64,256] and type float on {} by allocator GPU_0_bfc\n"
    assert verdict(base.format("/job:localhost/replica:0/task:0/device:GPU:0")).culprit is None
    assert verdict(base.format("/job:worker/replica:0/task:2/device:GPU:0")).culprit == "worker:2"


# -- fragments of several lines (tests/probes/fragments): reasoning over whole task logs ---------------------------

def _diagnose(tmp_path, **files):
    from distdoctor.diagnose.command import diagnose_paths
    paths = []
    for name, text in files.items():
        p = tmp_path / (name.replace("_", "-") + ".log")
        p.write_text(text)
        paths.append(str(p))
    diag, _ = diagnose_paths(sorted(paths), detected_at=0.0)
    return diag


def test_a_task_log_that_stops_on_a_peer_error_did_not_succeed(tmp_path):
    """A task's log whose last lines (after any progress) are errors about a peer: the job did not finish (the log
    stops on the error), even where the structural rules name no cause."""
    diag = _diagnose(tmp_path, worker_1="2019-05-22 03:41:17.664501: E tensorflow/core/common_runtime/executor.cc:641] "
                     "Executor failed to create kernel. Unavailable: Socket closed\n"
                     "tensorflow.python.framework.errors_impl.AbortedError: RecvTensor expects a different device "
                     "incarnation: 1 vs. 2. Your worker job that contains the device (\"/job:ps/replica:0/task:0/"
                     "device:CPU:0\") was probably restarted. Check your worker job for the reason why it was restarted.\n")
    assert diag.status == Status.FAILED and diag.root_cause.culprit == "ps:0"


def test_a_launcher_line_among_labelled_task_output_is_not_the_task_above_it():
    """srun/slurmstepd write their own lines unlabelled among ``srun --label`` task output: such a line continues no
    task's output, so the task srun names (``task 3: Out Of Memory``) is the culprit, not the task that printed last."""
    v = verdict("2: [2022-05-11 03:22:19.004711: W horovod/common/stall_inspector.cc:107] One or more tensors were "
                "submitted to be reduced, gathered or broadcasted by subset of ranks\n"
                "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=5512098.0 cgroup. Some of your processes "
                "may have been killed by the cgroup out-of-memory handler.\n"
                "srun: error: cn042: task 3: Out Of Memory\n")
    assert (v.category, v.culprit) == (Category.OOM_HOST, "rank:3")


_STALL = ("[1,0]<stderr>:[2021-01-20 12:03:11.552310: W horovod/common/stall_inspector.cc:107] One or more tensors were "
          "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks "
          "for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or "
          "that only subset of ranks is submitting tensors, which will cause deadlock.\n[1,0]<stderr>:Missing ranks:\n")


def test_stall_warnings_for_one_rank_over_different_tensors_are_a_straggler():
    """The same one rank missing in every warning, but each time from other tensors: the collectives in between
    completed, so that rank is slow, not stuck."""
    v = verdict("".join(_STALL + f"[1,0]<stderr>:3: [DistributedGradientTape_Allreduce/cond_{i}/HorovodAllreduce_grads_{i}_0]\n"
                        f"[1,0]<stdout>:Iter #{i}: 30.1 img/sec per GPU\n" for i in (12, 40, 7)))
    assert (v.category, v.culprit) == (Category.STRAGGLER_SLOW_WORKER, "rank:3")


def test_stall_warnings_for_one_rank_over_the_same_tensors_are_a_stuck_rank():
    v = verdict(_STALL * 1 + "[1,0]<stderr>:0: [DistributedGradientTape_Allreduce/cond_0/HorovodAllreduce_grads_0]\n"
                + _STALL + "[1,0]<stderr>:0: [DistributedGradientTape_Allreduce/cond_0/HorovodAllreduce_grads_0]\n")
    assert (v.status, v.category, v.culprit) == (Status.HUNG, Category.HANG_STALLED_WORKER, "rank:0")


def test_a_stall_warning_followed_by_the_end_of_training_is_no_hang():
    v = verdict("[1,0]<stdout>:Saving checkpoint ./checkpoint-1.h5\n" + _STALL
                + "[1,0]<stderr>:0: [DistributedGradientTape_Allreduce/cond_0/HorovodAllreduce_grads_0]\n"
                "[1,0]<stdout>:Epoch 3/3\n[1,0]<stdout>:Training finished in 1022.5 s\n")
    assert v.category == Category.OTHER and v.status != Status.HUNG


def test_retries_then_progress_under_a_launcher_prefix_recovered():
    """A retried connection is no failure when the log then goes on training, also when every line carries mpirun's
    ``[1,N]<stdout>:`` prefix (the prefix is not part of the progress line)."""
    v = verdict("[1,1]<stderr>:E0405 10:00:11 socket.cc:...] Connect failed: UNAVAILABLE: failed to connect to all "
                "addresses; retrying\n[1,0]<stdout>:Epoch 1/3\n"
                "[1,0]<stdout>:938/938 [==============================] - 62s 64ms/step - loss: 0.3014\n")
    assert v.category == Category.OTHER


def test_horovod_benchmark_iterations_are_progress():
    from distdoctor.diagnose.logs.progress import progress_of
    assert progress_of("Iter #15: 30.1 img/sec per GPU")[1]["step"] == 15


def test_connection_errors_a_task_prints_after_its_training_finished_are_its_teardown():
    v = verdict("INFO:tensorflow:Loss for final step: 0.0831.\n"
                "2019-12-11 09:58:17.303011: E tensorflow/core/distributed_runtime/rpc/grpc_worker_service.cc:1] "
                "RecvTensor: Connection reset by peer\n"
                "2019-12-11 09:58:17.303520: W tensorflow/core/distributed_runtime/rpc/grpc_remote_worker.cc:1] Socket closed\n")
    assert v.category == Category.OTHER and v.status != Status.FAILED


def test_a_job_the_operator_records_as_succeeded_is_not_failed_by_its_past_back_offs():
    v = verdict('{"message":"TFJob default/mnist successfully completed.","reason":"TFJobSucceeded","status":"True"}\n'
                "  Warning  BackOff  47m                kubelet  Back-off restarting failed container\n")
    assert v.category == Category.OTHER and v.status != Status.FAILED


def test_a_pod_in_error_is_the_peer_the_coordinator_lost():
    """kubectl shows worker-1's container exited with an error; the coordinator's connection failures to worker 1 are
    what followed (a crash, not a network fault)."""
    v = verdict("NAME                 READY   STATUS    RESTARTS   AGE\n"
                "pss-worker-0         1/1     Running   0          41m\n"
                "pss-worker-1         0/1     Error     2          41m\n"
                "ERROR:tensorflow:Remote function on worker /job:worker/replica:0/task:1 failed with "
                "UnavailableError():failed to connect to all addresses\n")
    assert (v.category, v.culprit) == (Category.PEER_CRASHED, "worker:1")


def test_a_grpc_connect_that_times_out_is_a_blocked_port():
    """Refused: nothing listens; no route: no path; timed out: the packets were dropped on the way (a firewall)."""
    v = verdict("UNAVAILABLE: failed to connect to all addresses\n"
                ':{"created":"@1638389129.31","description":"Failed to connect to remote host: Connection timed out",'
                '"errno":110,"os_error":"Connection timed out","syscall":"connect","target_address":"ipv4:34.91.40.7:2222"}\n')
    assert v.category == Category.FIREWALL_OR_PORT_BLOCKED


def test_a_parameter_servers_log_that_stops_after_start_up_is_no_hang(tmp_path):
    """A ps blocks in server.join() and prints nothing after its server started: its log ending there is normal."""
    diag = _diagnose(tmp_path, ps_0="2021-05-17 06:40:14.012301: I tensorflow/core/distributed_runtime/rpc/"
                     "grpc_channel.cc:301] Initialize GrpcChannelCache for job ps -> {0 -> localhost:2222}\n"
                     "2021-05-17 06:40:14.013106: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:411] "
                     "Started server with target: grpc://localhost:2222\n")
    assert diag.status != Status.HUNG


def test_a_resource_exhausted_error_that_names_a_full_disk_is_not_memory(tmp_path):
    """TF reports ENOSPC (and EMFILE) as RESOURCE_EXHAUSTED: the message says which resource ran out."""
    diag = _diagnose(tmp_path, chief_0="INFO:tensorflow:Saving checkpoints for 52000 into /data/model/model.ckpt.\n"
                     "Traceback (most recent call last):\n  File \"task.py\", line 201, in <module>\n[...]\n"
                     "tensorflow.python.framework.errors_impl.ResourceExhaustedError: /data/model/model.ckpt-52000_temp/"
                     "part-00000-of-00001.data-00000-of-00001.tempstate9120; No space left on device\n")
    assert diag.root_cause.category == Category.RESOURCE_EXHAUSTION
    v = verdict("tensorflow.python.framework.errors_impl.ResourceExhaustedError: /mnt/data/shard-08811.jpg; "
                "Too many open files\n")
    assert v.category == Category.RESOURCE_EXHAUSTION


def test_a_full_disk_is_not_nccl_shared_memory():
    v = verdict("OSError: [Errno 28] No space left on device: '/output/ckpt-3.data'\n")
    assert v.category == Category.RESOURCE_EXHAUSTION and "shared memory" not in v.summary.lower().split(":")[0]


def test_a_kernel_oom_record_is_the_rank_whose_pid_mpirun_lost():
    """dmesg lines pasted below mpirun output are the kernel's, not the last rank's; the PID the OOM killer names is the
    PID mpirun reports for the rank it lost."""
    v = verdict("[1,2]<stderr>:tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down.\n"
                "mpirun noticed that process rank 1 with PID 48213 on node gpu-b exited on signal 9 (Killed).\n"
                "$ ssh gpu-b dmesg | tail -2\n"
                "[1203344.117702] Out of memory: Killed process 48213 (python) total-vm:98412332kB, anon-rss:61022116kB\n")
    assert (v.category, v.culprit) == (Category.OOM_HOST, "rank:1")


def test_the_error_a_failed_probe_event_quotes_is_the_probes_not_a_tasks():
    v = verdict('  Warning  Unhealthy  49m   kubelet  Readiness probe failed: Get "http://10.4.2.8:8080/ready": dial tcp '
                "10.4.2.8:8080: connect: connection refused\n")
    assert v.category == Category.OTHER and v.status != Status.FAILED


def test_the_iterators_own_end_of_sequence_at_the_end_of_an_evaluation_is_no_failure():
    v = verdict("INFO:tensorflow:Evaluation [20/100]\n"
                "2019-08-30 07:12:58.100221: W tensorflow/core/framework/op_kernel.cc:1502] OP_REQUIRES failed at "
                "iterator_ops.cc:988 : Out of range: End of sequence\n"
                "INFO:tensorflow:Finished evaluation at 2019-08-30-07:12:58\n")
    assert v.category == Category.OTHER


def test_a_process_the_kernel_reports_blocked_is_why_the_collective_timed_out():
    v = verdict("BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Collective has timed out waiting for other workers.\n"
                "[Tue Nov 30 04:14:02 2021] INFO: task python3:30991 blocked for more than 120 seconds.\n")
    assert v.category == Category.PEER_UNRESPONSIVE


def test_a_pod_preempted_and_then_unschedulable_was_preempted():
    v = verdict("2m    Normal    Preempted   pod/train-worker-0     Preempted by prod/llm-serving-7d9f on node gpu-node-4\n"
                "2m    Warning   FailedScheduling   pod/train-worker-0   0/6 nodes are available: 6 Insufficient "
                "nvidia.com/gpu.\n")
    assert (v.category, v.culprit) == (Category.PREEMPTION, "worker:0")


def test_ssh_that_cannot_resolve_a_node_name_is_the_network_not_a_missing_orted():
    v = verdict("ssh: Could not resolve hostname tf-mpi-worker-1.tf-mpi-worker: Name or service not known\n"
                "ORTE was unable to reliably start one or more daemons.\n")
    assert v.category == Category.NETWORK_UNREACHABLE


def test_a_failed_scheduling_that_the_scheduler_then_placed_is_over():
    v = verdict("$ kubectl describe pod dist-worker-1\n"
                "  Warning  FailedScheduling  14m (x5 over 18m)  default-scheduler  0/4 nodes are available: 4 "
                "Insufficient nvidia.com/gpu.\n"
                "  Normal   Scheduled         12m                default-scheduler  Successfully assigned "
                "default/dist-worker-1 to gpu-node-2\n")
    assert v.category == Category.OTHER


def test_an_allocation_error_without_a_device_is_the_gpus_when_its_bfc_allocator_ran_out(tmp_path):
    diag = _diagnose(tmp_path, worker_1="Epoch 1/4\n"
                     "2023-02-02 13:13:00.991882: W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) "
                     "ran out of memory trying to allocate 9.31GiB (rounded to 10000000000)requested by op \n"
                     "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:\n"
                     "Out of memory while trying to allocate 10000000000 bytes.\n")
    assert (diag.root_cause.category, diag.root_cause.culprit) == (Category.OOM_GPU, "worker:1")


def test_a_pod_spec_naming_a_missing_secret_is_the_jobs_configuration():
    v = verdict("rec-chief-0         0/1     CreateContainerConfigError   0          3m\n"
                '  Warning  Failed     2m (x12 over 3m)  kubelet            Error: secret "gcs-credentials" not found\n')
    assert v.category == Category.CONFIG_TF_CONFIG


def test_srun_that_cannot_create_a_step_for_lack_of_memory_is_resource_exhaustion():
    v = verdict("srun: error: Unable to create step for job 771332: Memory required by task is not available\n")
    assert v.category == Category.RESOURCE_EXHAUSTION


def test_missing_ranks_waiting_for_different_tensors_are_a_mismatch_not_a_block_of_ranks():
    v = verdict(_STALL + "[1,0]<stderr>:0: [DistributedGradientTape_Allreduce/cond_0/HorovodAllreduce_grads_0]\n"
                "[1,0]<stderr>:1: [HorovodAllreduce_val_auc_0]\n[1,0]<stderr>:2: [HorovodAllreduce_val_auc_0]\n"
                "[1,0]<stderr>:3: [HorovodAllreduce_val_auc_0]\n")
    assert v.category == Category.HANG_COLLECTIVE_MISMATCH


def test_an_evaluators_log_that_stops_after_its_metrics_is_no_hang(tmp_path):
    """An evaluator evaluates each checkpoint and waits for the next; 'Saving dict for global step N' is the
    checkpoint's step it evaluated, not a training step of its own."""
    from distdoctor.diagnose.logs.progress import progress_of
    assert progress_of("INFO:tensorflow:Saving dict for global step 3000: accuracy = 0.88, global_step = 3000, "
                       "loss = 0.3011") is None
    diag = _diagnose(tmp_path, evaluator_0="INFO:tensorflow:Starting evaluation at 2019-03-03T10:00:05Z\n"
                     "INFO:tensorflow:Finished evaluation at 2019-03-03-10:01:12\n"
                     "INFO:tensorflow:Saving dict for global step 3000: accuracy = 0.8812, global_step = 3000, "
                     "loss = 0.3011\n")
    assert diag.status != Status.HUNG


def test_slurms_cancel_record_is_the_cause_of_the_step_abort_srun_printed_before_it():
    v = verdict("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
                "slurmstepd: error: *** STEP 660412.0 ON gpu22 CANCELLED AT 2023-07-19T15:31:02 ***\n"
                "srun: error: gpu22: tasks 0-1: Terminated\n")
    assert v.category == Category.PREEMPTION


def test_an_abort_after_std_bad_alloc_is_host_memory():
    v = verdict("[1,1]<stderr>:terminate called after throwing an instance of 'std::bad_alloc'\n"
                "[1,1]<stderr>:  what():  std::bad_alloc\n"
                "mpirun noticed that process rank 1 with PID 0 on node node-b exited on signal 6 (Aborted).\n")
    assert (v.category, v.culprit) == (Category.OOM_HOST, "rank:1")


def test_the_sender_of_a_failed_recv_is_the_peer_that_went_away():
    v = verdict("tensorflow.python.framework.errors_impl.UnavailableError: Endpoint read failed\n"
                '\t [[Node: emb/lookup_S41 = _Recv[client_terminated=false, recv_device="/job:worker/replica:0/task:0/'
                'device:CPU:0", send_device="/job:ps/replica:0/task:1/device:CPU:0", send_device_incarnation=-57, '
                'tensor_name="edge_88", tensor_type=DT_FLOAT, _device="/job:worker/replica:0/task:0/device:CPU:0"]()]]\n')
    assert v.culprit == "ps:1"


def test_keras_empty_logs_is_an_empty_input_shard():
    v = verdict("ValueError: Unexpected result of `train_function` (Empty logs). This could be due to issues in input "
                "pipeline that resulted in an empty dataset.\n", writer="worker:1")
    assert (v.category, v.culprit) == (Category.DATA_SHARDING_IMBALANCE, "worker:1")


def test_a_monitored_session_that_recreated_its_session_and_trains_on_recovered():
    v = verdict("INFO:tensorflow:An error was raised. This may be due to a preemption in a connected worker or parameter "
                "server. The current session will be closed and a new session will be created. Error: OS Error\n"
                "INFO:tensorflow:Restoring parameters from gs://bucket/run2/model.ckpt-90000\n"
                "INFO:tensorflow:loss = 0.3150, step = 90100 (23.1 sec)\nINFO:tensorflow:global_step/sec: 8.44\n")
    assert v.category == Category.OTHER


def test_a_program_that_cannot_start_is_not_a_consequence_of_a_lost_peer():
    """Only what a lost peer can make a task die of (a crash, an exception) is demoted to the cascade: a container
    whose program cannot start, right after a crash-loop status, is the cause (reason.CASCADE_CATEGORIES)."""
    v = verdict("trainer-worker-1   0/1   CrashLoopBackOff   7   12m\n"
                "exec /usr/local/bin/python: exec format error\n")
    assert v.category == Category.VERSION_MISMATCH, (v.category, v.summary)
