"""TensorFlow's own runtime (1.x and 2.x): coordination service, collectives, sessions, servers, Keras."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_TASK = r"/job:(?P<job>[A-Za-z_]+)(?:/replica:\d+)?/task:(?P<index>\d+)"
SRC = "TensorFlow source"
_RESTART = "Restart the job from its last checkpoint once the failed task's own cause (listed first) is fixed."
_PEER = ("This task only reports that a peer failed. Look at the named peer's own log (and its exit status, "
         "`dmesg` for the OOM killer, the scheduler's events) for the first error.")

# -- coordination service (TF 2.x) ---------------------------------------------------------------------------
add("DD600", "tf-heartbeat-lost", C.PEER_CRASHED, R.SYMPTOM, ("stopped sending heartbeats", "heartbeat timeout"),
    "The coordination service lost a task's heartbeats",
    names=_TASK, rank=40, expect="worker:1", remedy=_PEER,
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service.cc",
    fixture="UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):\n/job:worker/replica:0/task:1")
add("DD601", "tf-tasks-crashed", C.PEER_CRASHED, R.SYMPTOM, ("The tasks have crashed",),
    "The coordination service reports that tasks crashed", names=_TASK, rank=45, expect="worker:1", remedy=_PEER,
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service_agent.cc",
    fixture="UNAVAILABLE: The tasks have crashed. Check the task logs for an earlier error to debug further. /job:worker/replica:0/task:1")
add("DD602", "tf-collective-aborted", C.PEER_CRASHED, R.SYMPTOM, ("Collective ops is aborted by",),
    # rank 36: the collective was under way, so its peers had connected; a connect failure quoted after "aborted by"
    # (rank 35 on its own) is a peer that went away, not one that was never reachable
    "A collective was aborted because of an error elsewhere", names=_TASK, rank=36, remedy=_PEER,
    component="tensorflow", versions=">=2.4", source=SRC + " collective_ops_utils / base_collective_executor.cc",
    fixture="Collective ops is aborted by: The following tasks are unhealthy (stopped sending heartbeats): /job:worker/replica:0/task:1",
    expect="worker:1")
add("DD603", "tf-ring-abort", C.PEER_CRASHED, R.SYMPTOM, ("Aborting RingReduce", "Aborting RingGather"),
    "A ring all-reduce was aborted", names=_TASK, rank=30, remedy=_PEER,
    component="tensorflow", versions=">=2.1", source=SRC + " ring_alg.cc",
    fixture="E0000 00:00:1795293256.862381   17317 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: recvmsg:Connection reset by peer")
add("DD604", "tf-start-abort", C.PEER_CRASHED, R.SYMPTOM, ("BaseCollectiveExecutor::StartAbort",),
    "The collective executor is aborting", rank=25, remedy=_PEER,
    component="tensorflow", versions=">=2.1", source=SRC + " base_collective_executor.cc",
    fixture="W tensorflow/core/common_runtime/base_collective_executor.cc:216] BaseCollectiveExecutor::StartAbort Cancelled: [_Derived_]Cancelled")
add("DD605", "tf-coordination-error-polled", C.PEER_CRASHED, R.SYMPTOM,
    ("Polled an error from coordination service", "coordination service encountered an error",
     "Coordination service has stopped", "Shutdown barrier in coordination service has failed"),
    "The coordination service reported an error from another task", names=_TASK, rank=30, remedy=_PEER,
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service_agent.cc",
    fixture="E1121 18:03:04.120000 2910 coordination_service_agent.cc:332] Polled an error from coordination service (this can be an error from this or another task).")
add("DD606", "tf-recv-cancelled", C.PEER_CRASHED, R.SYMPTOM, ("RecvTensor cancelled", "RecvBuf cancelled"),
    "A tensor transfer from a peer was cancelled", names=_TASK, rank=25, remedy=_PEER,
    component="tensorflow", versions="all", source=SRC + " rpc_rendezvous_mgr.cc",
    fixture="CancelledError: RecvTensor cancelled for 0;/job:worker/replica:0/task:1/device:CPU:0")
add("DD607", "tf-waiting-for-tasks", C.NETWORK_UNREACHABLE, R.WAIT, ("Waiting for", "tasks to connect"),
    "The coordination service waits for tasks that never joined", regex=r"Waiting for [1-9]\d*/\d+ tasks to connect",
    rank=40, remedy="Start the missing task (see 'Example stragglers'), or fix its address in TF_CONFIG; check that its "
    "pod/step is scheduled and its port is reachable.",
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service.cc",
    fixture="I0000 00:00:1795280668.471203 2910 coordination_service.cc:651] Waiting for 1/2 tasks to connect.")
add("DD608", "tf-example-stragglers", C.NETWORK_UNREACHABLE, R.WAIT, ("Example stragglers",),
    "The coordination service names a task that never joined", names=_TASK, rank=45, expect="worker:2",
    remedy="Start the missing task, or fix its address in TF_CONFIG; check its pod/step and port.",
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service.cc", fixture="Example stragglers:\n/job:worker/replica:0/task:2")
add("DD609", "tf-create-session-waiting", C.PEER_UNRESPONSIVE, R.WAIT, ("createsession still waiting",),
    "A session waits for a task that does not answer", ignore_case=True, names=_TASK, rank=50, expect="worker:0",
    remedy="The named task is not serving: it exited, never started, or its address in the cluster spec is wrong or "
    "blocked. Check that task's pod/log and the port between them.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " master.cc",
    fixture="CreateSession still waiting for response from worker: /job:worker/replica:0/task:0")
add("DD610", "tf-unexpected-task", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Unexpected task registered", "that is not in the cluster", "connects to a wrong cluster",
     "Duplicate task registration"),
    "Tasks disagree about the cluster", names=_TASK, rank=75,
    remedy="Give every task the same cluster in TF_CONFIG (same jobs, same addresses, same order); only `task` differs.",
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service.cc",
    fixture="INVALID_ARGUMENT: Unexpected task registered with task_name=/job:worker/replica:0/task:3")
add("DD611", "tf-collective-shape-mismatch", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE,
    ("Inconsistent output shapes", "Shape mismatch in the collective instance", "mismatch in the collective instance"),
    "Tasks contributed tensors of different shapes to one collective", rank=80,
    remedy="Every worker must run the same collectives with the same shapes: pad variable-length features, use dense "
    "gradients, and give every worker the same steps_per_epoch.",
    component="tensorflow", versions=">=2.1", source=SRC + " collective_param_resolver / ring_alg.cc",
    fixture="Aborting RingReduce with Internal: Inconsistent output shapes, got [4], but expected is [2].")
add("DD612", "tf-collective-timeout", C.HANG_STALLED_WORKER, R.WAIT,
    ("Collective has timed out", "Barrier timed out", "barrier timed out", "DEADLINE_EXCEEDED: Barrier"),
    "A collective or barrier timed out waiting for a task", names=_TASK, rank=50,
    remedy="One task did not reach the collective: look at the named task's stack (py-spy dump) and input pipeline.",
    component="tensorflow", versions=">=2.4", source=SRC + " collective_ops / coordination barrier",
    fixture="DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PreemptionSyncManager. Timed out task names:\n/job:worker/replica:0/task:1")
add("DD613", "tf-end-of-sequence-in-collective", C.USER_CODE_ERROR, R.CAUSE, ("End of sequence",),
    "A worker's input pipeline ended inside a collective step", regex=r"^(?!.*OP_REQUIRES failed at iterator_ops)(?:.*)(?:Aborting Ring|StartAbort|OutOfRange|Out of range).*End of sequence",
    # (the iterator kernel's own "OP_REQUIRES failed at iterator_ops.cc: Out of range: End of sequence" is how every
    # finite iterator ends -- an evaluation, a for loop over a dataset: the caller catches it -- and is no failure)
    rank=60, remedy="The dataset yields fewer batches than steps_per_epoch x epochs asks for: add .repeat(), lower "
    "steps_per_epoch, or shard so that every worker has the same number of batches.",
    component="tensorflow", versions=">=2.1", source=SRC + " ring_alg.cc / iterator ops",
    fixture="E tensorflow/core/common_runtime/ring_alg.cc:279] Aborting RingReduce with Out of range: [_Derived_]End of sequence")
add("DD614", "tf-input-ran-out", C.DATA_SHARDING_IMBALANCE, R.CAUSE, ("Your input ran out of data",),
    "A worker's input ran out before its steps did", rank=55,
    remedy="Make every worker's input long enough for steps_per_epoch x epochs (.repeat()), or let Keras infer the steps; "
    "with per-worker data, give each worker the same number of batches.",
    component="keras", versions=">=2.2 (tf.keras / tf_keras)", source="Keras training loop (tf_keras/src/engine/training.py)",
    fixture="WARNING:tensorflow:Your input ran out of data; interrupting training. Make sure that your dataset or generator can generate at least `steps_per_epoch * epochs` batches (in this case, 1000 batches).")
add("DD615", "tf-server-bind-failed", C.PORT_IN_USE, R.CAUSE,
    ("Failed to add port to server", "No address added out of total", "Could not start gRPC server", "Address already in use",
     "Only one usage of each socket address", "address already in use", "[Errno 98]", "EADDRINUSE"),
    "The task could not bind its gRPC port", rank=85,
    remedy="Another process holds the port (`ss -ltnp | grep PORT`): stop it, or give the task a free port in TF_CONFIG.",
    component="tensorflow", versions="all", source=SRC + " grpc_server_lib.cc / gRPC server_chttp2.cc",
    fixture="UNKNOWN: Could not start gRPC server")
add("DD616", "tf-invalid-tf-config", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("TF_CONFIG", "cluster_spec", "ClusterSpec"),
    "TensorFlow rejected the cluster configuration",
    regex=r"(?:Invalid|invalid|not found in|is not a valid|must (?:be|have)|Missing|missing|Unknown task type|is out of range|"
          r"Could not parse|JSONDecodeError|Expecting value).{0,80}(?:TF_CONFIG|cluster_spec|ClusterSpec|task type|task_type)|"
          r"(?:TF_CONFIG|ClusterSpec|cluster_spec).{0,80}(?:is invalid|not found|must|Expecting|could not|missing)",
    rank=80, remedy="Fix TF_CONFIG: valid JSON with `cluster` (every task's host:port) and `task` (this task's type and "
    "index, present in the cluster); `distdoctor check --static` validates it.",
    component="tensorflow", versions="all", source=SRC + " cluster_resolver / multi_worker_util.py",
    fixture="ValueError: Task type 'worker' is not found in cluster_spec {'chief': ['localhost:2222']}")
add("DD617", "tf-task-not-in-cluster", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("not found in cluster", "is not in cluster", "not found in the cluster", "index is out of range", "task_id is out of range",
     "Task index", "Invalid task_id", "Unrecognized task_type", "Unrecognized task type"),
    "The task's own type or index is not in its cluster spec",
    regex=r"(?i)(?:task[ _](?:type|index|id)|job)\b.{0,60}(?:not found in|is not in|out of range|invalid)|(?:not found in|not in) (?:the )?cluster|unrecognized task[ _]type",
    rank=80, remedy="The task's `task.type`/`task.index` must name an entry of `cluster` in its TF_CONFIG (an evaluator "
    "needs its own entry where the strategy expects one).",
    component="tensorflow", versions=">=2.0", source=SRC + " multi_worker_util.py",
    fixture="ValueError: Task type 'evaluator' is not found in cluster_spec.")
add("DD618", "tf-lame-workers", C.PREEMPTION, R.CAUSE, ("lame workers found",),
    "TPUEstimator's shutdown hook found the TPU worker lost (preempted)", names=_TASK, rank=60, expect="worker:0",
    remedy="The TPU (or its host) went away, most often a preemption of a preemptible TPU: restart from the last checkpoint "
    "(TPUEstimator resumes), or use non-preemptible capacity.",
    component="tensorflow", versions="1.x (TPU session_support)", source=SRC + " session_support.py (ShutdownHook)",
    fixture="INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)")
add("DD619", "tf-preemption-notice", C.PREEMPTION, R.CAUSE,
    ("Member /job:", "received termination notice", "termination notice", "PreemptionCheckpointHandler: We",
     "Received preemption", "preemption signal", "Preemption notice"),
    "TensorFlow's preemption handler received a termination notice",
    regex=r"(?i)(?:termination notice|preemption (?:signal|notice)|received preemption)", names=_TASK, rank=70,
    remedy="The task was preempted: restart from the checkpoint the preemption handler saved (BackupAndRestore / "
    "PreemptionCheckpointHandler resume automatically).",
    component="tensorflow", versions=">=2.8", source=SRC + " failure_handling.py / preemption_notifier",
    fixture="INFO:tensorflow:Member /job:worker/replica:0/task:1 has received termination notice.", expect="worker:1")
add("DD620", "tf-uninitialized-variables-wait", C.USER_CODE_ERROR, R.CAUSE,
    ("Variables not initialized",),
    "Non-chief tasks wait for variables that the chief never initializes", rank=55,
    remedy="Variables that only some tasks create (per-worker state) must go into LOCAL_VARIABLES or be initialized by "
    "every task's local_init_op; otherwise the non-chief tasks wait forever for the chief to initialize them.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " session_manager.py",
    fixture="INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  Variables not initialized: beta1_power, beta2_power, ready: None")
add("DD621", "tf-cannot-colocate", C.OTHER, R.CAUSE,
    ("Cannot colocate nodes", "Cannot merge devices with incompatible jobs", "Cannot assign a device for operation"),
    "TensorFlow cannot place the graph's ops on the cluster's devices", rank=65,
    remedy="An op and the variable it reads must be placeable together: pin the op's device or let the strategy place "
    "variables (replica_device_setter / ParameterServerStrategy), and check device names against the cluster.",
    component="tensorflow", versions="all", source=SRC + " colocation_graph.cc / placer.cc",
    fixture="InvalidArgumentError (see above for traceback): Cannot colocate nodes 'a/embeddings' and 'b/Shape': Cannot merge devices with incompatible jobs: '/job:ps/task:0' and '/job:worker/task:0'")
add("DD622", "tf-restore-shape-mismatch", C.OTHER, R.CAUSE,
    ("Assign requires shapes of both tensors to match", "Shape mismatch in tuple component", "doesn't match the shape in checkpoint",
     "not found in checkpoint"),
    "The checkpoint does not fit the graph being restored", rank=65,
    remedy="The checkpoint was written by a different graph or cluster size (e.g. a different number of workers for "
    "SyncReplicas' per-worker variables): restore into the same configuration, or start a fresh model directory.",
    component="tensorflow", versions="all", source=SRC + " saver.py / assign_op.h",
    fixture="InvalidArgumentError: Assign requires shapes of both tensors to match. lhs shape= [4] rhs shape= [3] [[Node: save/Assign_103 = Assign[]]]")
add("DD623", "tf-nan-check", C.NUMERICAL_DIVERGENCE, R.CAUSE,
    ("Tensor had NaN values", "Tensor had Inf values", "NaN loss during training", "Model diverged with loss = NaN",
     "CheckNumerics", "Invalid loss, terminating training", "Nan in summary histogram for"),
    "Training diverged: a tensor became NaN/Inf",
    regex=r"NaN values|Inf values|NaN loss|diverged with loss|CheckNumerics.*(?:NaN|Inf)|Invalid loss, terminating training"
          r"|Nan in summary histogram",
    rank=80, remedy="Lower the learning rate (scale it with the global batch carefully), clip gradients, check the input "
    "for NaN, and use a larger per-replica batch for batch norm.",
    component="tensorflow", versions="all", source=SRC + " check_numerics_op.cc / basic_session_run_hooks.py",
    fixture="InvalidArgumentError: Gradient for resnet101/batch_normalization_10/gamma:0 is NaN : Tensor had NaN values")
add("DD624", "tf-session-create-retry", C.CONFIG_TF_CONFIG, R.SYMPTOM,
    ("An error was raised while a session was being created",),
    "Session creation failed and is being retried", rank=20,
    remedy="The task cannot open its session with the cluster as configured: most often an address in the cluster spec "
    "(TF_CONFIG) is wrong or a listed task was never started; otherwise a peer is down. Check every task's address.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " monitored_session.py",
    fixture="INFO:tensorflow:An error was raised while a session was being created. This may be due to a preemption of a connected worker or parameter server. A new session will be created.")
add("DD625", "tf-ps-lost-ps-strategy", C.PEER_CRASHED, R.SYMPTOM,
    ("is unavailable; will retry", "Worker /job:", "PS task", "failed to connect to ps", "The worker is unavailable"),
    "ParameterServerStrategy's coordinator lost a worker or parameter server",
    regex=r"(?:Worker|worker|PS task|ps) " + _TASK + r".{0,80}(?:unavailable|failed|lost)", rank=35, expect="worker:1",
    remedy=_PEER, component="tensorflow", versions=">=2.4", source=SRC + " cluster_coordinator.py",
    fixture="WARNING:tensorflow:Worker /job:worker/replica:0/task:1 has been temporarily unavailable: failed to connect")
add("DD626", "tf-collective-param-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Mismatched ALLREDUCE", "Mismatched ALLGATHER", "Mismatched BROADCAST", "Mismatched allreduce",
     "Mismatched CPU/GPU", "group_size mismatch", "different group_key", "Expected group_size",
     "is joining a group with size", " but that group has size ", " but that group has type "),   # (TF >= 2.5, before)
    "Tasks started one collective with different parameters (device, dtype, group)", rank=75,
    remedy="Every task must run the same collective on the same kind of device with the same dtype: check that each "
    "node sees its GPUs (`nvidia-smi`, CUDA_VISIBLE_DEVICES) and runs the same code.",
    component="tensorflow", versions=">=2.1", source=SRC + " collective_param_resolver_local.cc / Horovod operations.cc",
    fixture="FailedPreconditionError: Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device CPU, but another rank specified device GPU.")
add("DD627", "tf-unknown-device", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("unknown device", "Unknown device", "is not available in this cluster", "no devices matching"),
    "A task refers to a device the cluster does not have", names=_TASK, rank=60,
    remedy="The cluster seen by this task lacks the named task/device: check TF_CONFIG (loopback or wrong address for a "
    "remote peer, a missing job).",
    component="tensorflow", versions="all", source=SRC + " device_mgr / collective_param_resolver_distributed.cc",
    fixture="INVALID_ARGUMENT: Unable to find the relevant tensor remote_handle: unknown device /job:worker/replica:0/task:1")
add("DD628", "tf-keras3-mwms", C.VERSION_MISMATCH, R.CAUSE,
    ("Keras 3 is not supported", "MultiWorkerMirroredStrategy is not supported with Keras 3", "use tf_keras",
     "TF_USE_LEGACY_KERAS"),
    "Keras 3 is used where only tf-keras (Keras 2) works", regex=r"not supported.*Keras 3|Keras 3.*not supported|TF_USE_LEGACY_KERAS.*(?:set|=)",
    rank=60, remedy="Install tf-keras matching TensorFlow and set TF_USE_LEGACY_KERAS=1 on every task.",
    component="tensorflow", versions=">=2.16 (Keras 3 default)", source="TensorFlow 2.16+ release notes / keras distribution errors",
    fixture="ValueError: MultiWorkerMirroredStrategy is not supported with Keras 3. Please set TF_USE_LEGACY_KERAS=1 and use tf_keras.")
add("DD629", "tf-estimator-needs-chief", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("If \"cluster\" is set in TF_CONFIG, it must have one \"chief\" node", "must have one \"chief\" node",
     "must have one \"chief\"", "If `TF_CONFIG` has", "chief node is required"),
    "The Estimator needs a chief task in the cluster", rank=80,
    remedy="Add a chief (or master) replica to the job: Estimator's train_and_evaluate needs exactly one.",
    component="tensorflow", versions="1.x-2.15 (tf.estimator)", source=SRC + " estimator/run_config.py",
    fixture="ValueError: If \"cluster\" is set in TF_CONFIG, it must have one \"chief\" node.")
add("DD630", "tf-graph-devices-unset", C.USER_CODE_ERROR, R.CAUSE,
    ("all Variables must have their device set",),
    "Between-graph replication needs every variable placed on a parameter server", rank=65,
    remedy="Build the graph under tf.train.replica_device_setter (or set a device for every variable) before the Supervisor.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/supervisor.py",
    fixture="ValueError: When using replicas, all Variables must have their device set: name: \"global_step\"")
add("DD631", "tf-skip-training-max-steps", C.USER_CODE_ERROR, R.CAUSE,
    ("Skipping training since max_steps has already saved",),
    "The Estimator skipped training: the checkpoint already reached max_steps", rank=45,
    remedy="The model directory holds a checkpoint at max_steps already: raise max_steps or use a fresh model_dir "
    "(feeders waiting for this task will otherwise wait forever).",
    component="tensorflow", versions="1.x-2.15 (tf.estimator)", source=SRC + " estimator.py",
    fixture="INFO:tensorflow:Skipping training since max_steps has already saved.")
add("DD632", "tf-grpc-unavailable-oserror", C.PEER_CRASHED, R.SYMPTOM, ("UnavailableError", "UNAVAILABLE:", "Unavailable: OS Error"),
    "A remote call failed: the peer is unavailable", names=_TASK, rank=15, remedy=_PEER,
    component="tensorflow", versions="all", source=SRC + " errors_impl.py / grpc_util.h", fixture="tensorflow.python.framework.errors_impl.UnavailableError: OS Error")
add("DD633", "tf-from-remote-task", C.PEER_CRASHED, R.SYMPTOM, ("From /job:",),
    "An error raised on another task", regex=r"From " + _TASK, names=_TASK, rank=10, expect="worker:0", remedy=_PEER,
    component="tensorflow", versions="all", source=SRC + " (errors carry the task where they were raised)",
    fixture="tensorflow.python.framework.errors_impl.InvalidArgumentError: From /job:worker/replica:0/task:0:")
add("DD634", "tf-oom-tensor-gpu", C.OOM_GPU, R.CAUSE, ("OOM when allocating",),
    "A tensor allocation ran out of accelerator memory", regex=r"OOM when allocating.*(?:GPU|gpu|TPU|device:XLA)", rank=85,
    names=r"/job:(?P<job>(?!localhost\b)[A-Za-z_]+)(?:/replica:\d+)?/task:(?P<index>\d+)/device:(?:GPU|gpu|TPU)",
    expect="worker:0",
    remedy="Lower the per-replica batch size, enable memory growth (tf.config.experimental.set_memory_growth), and make "
    "sure no other process (a parameter server, another job) holds the same GPU.",
    component="tensorflow", versions="all", source=SRC + " bfc_allocator.cc / op_kernel.cc",
    fixture="ResourceExhaustedError: OOM when allocating tensor with shape[256,1024,1024] and type float on /job:worker/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
add("DD635", "tf-oom-tensor-host", C.OOM_HOST, R.CAUSE, ("OOM when allocating", "ResourceExhaustedError"),
    "A tensor allocation ran out of host memory", rank=70,
    # TF maps ENOSPC, EDQUOT, EMFILE and ENFILE to RESOURCE_EXHAUSTED too: a ResourceExhaustedError whose message names
    # a full disk or the file-descriptor limit is not memory
    regex=r"OOM when allocating|ResourceExhaustedError(?!.*(?:No space left on device|Disk quota exceeded|Too many open files))",
    remedy="Lower the batch size or the input pipeline's buffers (shuffle, prefetch, cache), or give the task more memory.",
    component="tensorflow", versions="all", source=SRC + " cpu_allocator / op_kernel.cc",
    fixture="ResourceExhaustedError: OOM when allocating tensor with shape[1000000,1000] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu")
add("DD636", "tf-allocator-warning", C.OOM_HOST, R.CONTEXT, ("exceeds 10% of free system memory", "Allocator (GPU_0_bfc) ran out of memory trying"),
    "An allocation warning: memory is tight", rank=10,
    remedy="Memory is close to its limit: lower the batch size or buffers before the OOM killer acts.",
    component="tensorflow", versions="all", source=SRC + " cpu_allocator_impl.cc", fixture="W tensorflow/core/framework/cpu_allocator_impl.cc:80] Allocation of 400000000 exceeds 10% of free system memory.")
add("DD637", "tf-gcs-retry", C.RESOURCE_EXHAUSTION, R.CONTEXT, ("will be automatically retried",),
    "A cloud-storage operation failed and is being retried", rank=10,
    remedy="A retried storage call is normal; many of them, or 429/410 answers, mean the bucket's rate limits are hit "
    "(e.g. every worker writing the same checkpoint object): write checkpoints from the chief only.",
    component="tensorflow", versions="all", source=SRC + " platform/cloud/retrying_utils.cc",
    fixture="I tensorflow/core/platform/cloud/retrying_utils.cc:77] The operation failed and will be automatically retried in 1.49778 seconds (attempt 1 out of 10)")
add("DD638", "tf-checkpoint-rate-limited", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("\"code\": 429", "rateLimitExceeded", "usageLimits", "The total number of changes to the object"),
    "Cloud storage refused writes: rate limit exceeded", rank=55,
    remedy="Too many writes to one object (several workers saving the same checkpoint): save from the chief only, or "
    "slow the checkpoint rate.",
    component="tensorflow", versions="all", source="Google Cloud Storage JSON API errors as TensorFlow's GCS filesystem logs them",
    fixture="\"message\": \"The total number of changes to the object gs://b/model.ckpt-8000_temp exceeds the rate limit.\"")
add("DD639", "tf-keras-slow-callback", C.STRAGGLER_SLOW_WORKER, R.CONTEXT, ("is slow compared to the batch time",),
    "Keras callbacks take longer than the training step", rank=20,
    remedy="A callback on this task slows every synchronous step: make it cheaper or run it less often.",
    component="keras", versions="all", source="Keras callbacks.py",
    fixture="WARNING:tensorflow:Callback method `on_train_batch_end` is slow compared to the batch time (batch time: 0.0010s vs `on_train_batch_end` time: 0.5011s). Check your callbacks.")
add("DD640", "tf-nan-progress", C.NUMERICAL_DIVERGENCE, R.CONTEXT,
    (": nan", ":nan", "= nan", "=nan", "  nan", ": inf", ":inf", "= inf", "=inf", ": -inf", "= -inf", " is nan",
     " is inf", "tensor(nan", "tensor(inf"), "The reported loss (or perplexity, or gradient norm) is NaN/Inf",
    regex=r"(?:loss|perplexity|\bppl|\bgrad(?:ient)?[ _]norm)\w*'?\s*(?:[:=]|\bis\b)\s*(?:tensor\()?(?:nan|[-+]?inf)\b",
    ignore_case=True, rank=30, remedy="Lower the learning rate, clip gradients, check the input for NaN. (A finite "
    "val_loss beside it points at a metric-reporting problem instead.)",
    component="keras", versions="all", source="Keras progress bar / Estimator logging hook (and a PyTorch loss dict: "
    "'loss_cls': tensor(nan, ...)", fixture="469/469 - 28s 45ms/step - loss: nan - accuracy: 0.10")
add("DD641", "tf-cluster-joined", C.OTHER, R.CONTEXT,
    ("connected to coordination service", "Coordination agent has successfully connected", "Enabled multi-worker collective ops",
     "MultiWorkerMirroredStrategy with cluster_spec", "Waiting for 0/"),
    "Tasks joined the cluster (a start-up wait was answered)", rank=0, remedy="Nothing to do.",
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service.cc / collective_all_reduce_strategy.py",
    fixture="I0000 00:00:1795280668.487521 2910 coordination_service.cc:631] /job:worker/replica:0/task:1 has connected to coordination service. Incarnation: 123")

# -- coordination service, restarts, cluster health (TF 2.x runtime) ------------------------------------------
_RT = SRC + " (string in the 2.21 wheel's libtensorflow_framework.so.2 / _pywrap_tensorflow_internal.so)"
_RESTARTED = ("A peer restarted (its process died and came back, e.g. a pod restart) while this task still held state "
              "from its old incarnation. Find why the named task restarted: its previous log (`kubectl logs "
              "--previous`), exit status, the OOM killer; then restart the whole job together.")
add("DD642", "tf-coordination-rpc-failed", C.PEER_CRASHED, R.SYMPTOM, ("Failed to send RPC to coordination service",),
    "A task lost the coordination service's leader", rank=35,
    remedy="The coordination leader (the chief, or worker 0 without a chief) died, was preempted or restarted, or the "
    "network to it broke: read that task's log and the scheduler's events first.",
    component="tensorflow", versions=">=2.9", source=_RT + " coordination_service_agent.cc",
    fixture="E0000 00:00:1795445737.973712 18295 coordination_service_agent.cc:512] Failed to send RPC to coordination "
            "service. Either the leader task was preempted/died/restarted unexpectedly or this task is experiencing "
            "network issues. Check earlier logs from 1) this task, 2) the leader (usually slice 0 task 0), and 3) cluster "
            "scheduler to debug further.")
add("DD643", "tf-coordination-task-restarted", C.PEER_CRASHED, R.SYMPTOM,
    ("It has likely restarted", "The task has restarted and likely crashed earlier", "Leader incarnation ID mismatch",
     "Incarnation ID mismatch", "must be registered before sending heartbeat messages"),
    "The coordination service saw a task (or its leader) restart", names=_TASK, rank=45, expect="worker:1",
    remedy=_RESTARTED,
    component="tensorflow", versions=">=2.9", source=_RT + " coordination_service.cc; this line was triggered on this machine by killing "
    "worker 1 of a running two-worker MultiWorkerMirroredStrategy job (kill -9) and starting it again",
    fixture="E0000 00:00:1795446158.107784    1412 coordination_service.cc:681] /job:worker/replica:0/task:1 unexpectedly "
            "tried to connect with a different incarnation. It has likely restarted.")
add("DD644", "tf-worker-session-restarted", C.PEER_CRASHED, R.SYMPTOM,
    ("just restarted", "was probably restarted", "this master has restarted", "This normally means the server has restarted",
     "the remote worker has restarted"),
    "A worker lost its session state: the worker restarted", names=_TASK, rank=45,
    regex=r"Possibly,? this (?:worker|master)\b.*restarted|was probably restarted|This normally means the server has restarted"
          r"|the remote worker has restarted",
    expect="worker:1", remedy=_RESTARTED,
    component="tensorflow", versions=">=2.0", source=_RT + " worker.cc / graph_mgr.cc / master.cc (TF 1.15 and 2.x)",
    fixture="AbortedError: Session handle is not found: 3ce7d9c2a7b6e4d1. Possibly this worker "
            "(\"/job:worker/replica:0/task:1\") just restarted.")
add("DD645", "tf-eager-context-lost", C.PEER_CRASHED, R.SYMPTOM, ("Unable to find a context_id matching the specified one",),
    "A remote eager worker no longer knows this client's context (it restarted)", names=_TASK, rank=40,
    remedy=_RESTARTED + " With ParameterServerStrategy the coordinator must reconnect (it does for workers, not for PS).",
    component="tensorflow", versions=">=2.0", source=_RT + " eager_service_impl.cc",
    fixture="InvalidArgumentError: Unable to find a context_id matching the specified one (8390493627415216093). Perhaps "
            "the worker was restarted, or the context was GC'd?")
add("DD646", "tf-check-alive-failed", C.PEER_CRASHED, R.SYMPTOM, ("Cluster check alive failed", "cluster check alive failed"),
    "MultiWorkerMirroredStrategy's health check found a peer down", names=_TASK, rank=50, expect="worker:1", remedy=_PEER,
    component="tensorflow", versions=">=2.4", source=SRC + " collective_all_reduce_strategy.py (_check_health)",
    fixture="ERROR:tensorflow:Cluster check alive failed, /job:worker/replica:0/task:1 is down, aborting collectives: "
            "failed to connect to all addresses")
add("DD647", "tf-peer-seems-down", C.PEER_CRASHED, R.CONTEXT, ("seems down, retrying",),
    "MultiWorkerMirroredStrategy's health check could not reach a peer (retrying)", names=_TASK, rank=10, expect="worker:1",
    remedy="A retry of the health check; it matters only if 'Cluster check alive failed' follows.",
    component="tensorflow", versions=">=2.4", source=SRC + " collective_all_reduce_strategy.py (_check_health)",
    fixture="WARNING:tensorflow:/job:worker/replica:0/task:1 seems down, retrying 1/3")
add("DD648", "tf-cluster-wait-timeout", C.NETWORK_UNREACHABLE, R.CAUSE, ("Timeout waiting for the cluster, timeout is",),
    "A worker gave up waiting for its peers to join the cluster", rank=60,
    remedy="Some task never joined within the strategy's initial timeout: start every task, check each address in "
    "TF_CONFIG resolves and is reachable from this node, or raise the timeout.",
    component="tensorflow", versions=">=2.4", source=SRC + " collective_all_reduce_strategy.py (_start_check_health_thread)",
    fixture="RuntimeError: Timeout waiting for the cluster, timeout is 60 seconds")
add("DD649", "tf-pss-ps-failure", C.PEER_CRASHED, R.SYMPTOM, ("Parameter server failure detected at PS task", "PSUnavailableError"),
    "ParameterServerStrategy's coordinator lost a parameter server (not recoverable)",
    names=r"(?i)(?P<job>ps) task (?P<index>\d+)|/job:(?P<job2>ps)(?:/replica:\d+)?/task:(?P<index2>\d+)", rank=50,
    expect="ps:0", remedy="A parameter server died, and ClusterCoordinator cannot recover from that: find why the PS "
    "died (its log, OOM killer, eviction), then restart the job from the last checkpoint.",
    component="tensorflow", versions=">=2.4", source=SRC + " distribute/coordinator/cluster_coordinator.py",
    fixture="INFO:tensorflow:Parameter server failure detected at PS task 0")
add("DD650", "tf-pss-worker-failed", C.PEER_CRASHED, R.SYMPTOM, ("Worker /job:",),
    "ParameterServerStrategy's coordinator saw a worker fail (it waits for the worker to come back)",
    regex=r"Worker " + _TASK + r"\S* failed with", rank=35, expect="worker:2", remedy=_PEER,
    component="tensorflow", versions=">=2.4", source=SRC + " distribute/coordinator/cluster_coordinator.py",
    fixture="ERROR:tensorflow:Worker /job:worker/replica:0/task:2/device:CPU:0 failed with UnavailableError():Socket closed")
add("DD651", "tf-coordinator-watchdog", C.HANG_STALLED_WORKER, R.WAIT, ("No activity for ClusterCoordinator for",),
    "ParameterServerStrategy's coordinator made no progress for its watchdog timeout", rank=40,
    remedy="No scheduled function finished for the whole timeout: read the stack traces it dumped next, then the "
    "workers' and parameter servers' state (a hung worker, a PS that stopped answering, an input pipeline stuck).",
    component="tensorflow", versions=">=2.5", source=SRC + " distribute/coordinator/watchdog.py",
    fixture="WARNING:tensorflow:No activity for ClusterCoordinator for 1800 seconds. Dumping stack traces.")
add("DD652", "tf-collective-configured-late", C.USER_CODE_ERROR, R.CAUSE, ("Collective ops must be configured at program startup",),
    "The multi-worker strategy was created after TensorFlow had already started", rank=70,
    remedy="Create the MultiWorkerMirroredStrategy (or call configure_collective_ops) at the very start of the program, "
    "before any other TensorFlow op or device query.",
    component="tensorflow", versions=">=2.0", source=SRC + " eager/context.py (triggered on this machine)",
    fixture="RuntimeError: Collective ops must be configured at program startup")
add("DD653", "tf-gpus-per-worker-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Mismatched number of GPUs per worker", "All workers should have the same number of GPUs"),
    "Workers have different numbers of GPUs", rank=80,
    remedy="Give every worker the same number of visible GPUs (resources, CUDA_VISIBLE_DEVICES); a node whose GPUs "
    "failed to initialise shows up as one with none.",
    component="tensorflow", versions=">=2.4", source=SRC + " parameter_server_strategy_v2.py / mirrored_strategy.py",
    fixture="ValueError: Mismatched number of GPUs per worker")
add("DD654", "tf-server-job-undefined", C.CONFIG_TF_CONFIG, R.CAUSE, ("was not defined in cluster", "was not defined in job"),
    "The gRPC server's own job or task is not in its cluster definition", rank=80,
    remedy="The task's job name/index must be in the cluster it is given (TF_CONFIG `task` vs `cluster`, or the "
    "job_name/task_index passed to tf.distribute.Server).",
    component="tensorflow", versions="all", source=SRC + " grpc_server_lib.cc (triggered on this machine)",
    fixture="E0000 00:00:1795445495.662101   32525 grpc_server_lib.cc:618] INTERNAL: Task 3 was not defined in job \"worker\"")
add("DD655", "tf-clusterspec-no-job", C.CONFIG_TF_CONFIG, R.CAUSE, ("No such job in cluster", "No task with index"),
    "A ClusterSpec lookup for a job or task that the cluster does not have", rank=80,
    remedy="The cluster spec lacks the job or task index the code asks for: compare TF_CONFIG's `cluster` with the "
    "job names (chief/worker/ps) and indices the program uses.",
    component="tensorflow", versions="all", source=SRC + " training/server_lib.py (TF 1.15 and 2.x; triggered on this machine)",
    fixture="ValueError: No task with index 2 in job 'worker'")
add("DD656", "tf-disallowed-task-type", C.CONFIG_TF_CONFIG, R.CAUSE,
    ("Disallowed task type found in cluster spec", "There is no id for task_type", "There must be at most one 'chief' job",
     "There must be at most one 'evaluator' job", "Unexpected `task_type`", "The cluster spec needs to have `ps` jobs",
     "Cluster spec must be non-empty in", "There must be at least one ps.", "There must be at least one worker."),
    "The cluster spec does not have the jobs the strategy needs (an unknown, missing or repeated job)", rank=80,
    remedy="TF_CONFIG's jobs must be named chief, worker, ps or evaluator (and the task's own type must be one of them), "
    "with at most one chief and one evaluator; ParameterServerStrategy needs at least one ps and one worker.",
    component="tensorflow", versions=">=2.0", source=SRC + " distribute/multi_worker_util.py (triggered on this machine), "
    "distribute/parameter_server_strategy.py / parameter_server_strategy_v2.py (_verify_args_and_config; 2.21 wheel)",
    fixture="ValueError: Disallowed task type found in cluster spec. Allowed types are ('chief', 'worker', 'evaluator', "
            "'ps', None) and the cluster spec is ClusterSpec({'trainer': ['localhost:12346'], 'worker': ['localhost:12345']}).")
add("DD657", "tf-strategy-mixing", C.USER_CODE_ERROR, R.CAUSE,
    ("Mixing different tf.distribute.Strategy objects", "Must not nest tf.distribute.Strategy scopes"),
    "Two distribution strategies are used together", rank=65,
    remedy="Create one strategy per program and build the model, optimizer and checkpoint under its scope only.",
    component="tensorflow", versions=">=2.0", source=SRC + " distribute/distribute_lib.py (triggered on this machine)",
    fixture="RuntimeError: Mixing different tf.distribute.Strategy objects: <tensorflow.python.distribute.one_device_strategy"
            ".OneDeviceStrategy object at 0x7fc606ad2d90> is not <tensorflow.python.distribute.mirrored_strategy"
            ".MirroredStrategy object at 0x7fc650a2cb90>")
add("DD658", "tf-global-batch-not-divisible", C.USER_CODE_ERROR, R.CAUSE, ("is not divisible by `num_replicas_in_sync`",),
    "The global batch size does not split evenly over the replicas", rank=65,
    remedy="Choose a global batch size that is a multiple of the number of replicas (workers x devices per worker).",
    component="tensorflow", versions=">=2.0", source=SRC + " distribute/distribute_lib.py InputContext (triggered on this machine)",
    fixture="ValueError: The `global_batch_size` 64 is not divisible by `num_replicas_in_sync` 3 ")
add("DD659", "tf-nccl-without-gpus", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT,
    ("Enabled NCCL communication but no GPUs detected/specified", "NCCL is not supported when using virtual GPUs",
     "Nccl kernel is not found, not using nccl allreduce"),
    "NCCL was asked for but this task has no usable GPU", rank=25,
    remedy="This task runs without GPUs while its communication options ask for NCCL: check that the node sees its "
    "GPUs (`nvidia-smi`, the device plugin, CUDA_VISIBLE_DEVICES) like the other nodes.",
    component="tensorflow", versions=">=2.0", source=SRC + " collective_all_reduce_strategy.py / cross_device_ops.py",
    fixture="WARNING:tensorflow:Enabled NCCL communication but no GPUs detected/specified.")
add("DD690", "tf-grpc-remote-target", C.PEER_CRASHED, R.SYMPTOM, ("error information from remote target",),
    "A remote call to the named task failed", names=_TASK, rank=20, expect="worker:1", remedy=_PEER,
    component="tensorflow", versions="all", source=SRC + " grpc_util.h (FromGrpcStatus: 'Additional GRPC error information from remote target')",
    fixture="Additional GRPC error information from remote target /job:worker/replica:0/task:1 while calling /tensorflow.WorkerService/RecvBuf:")
add("DD691", "tf-shutdown-disconnect", C.OTHER, R.BENIGN,
    ("Failed to disconnect from coordination service", "Shutdown barrier in coordination service has passed"),
    "A task could not say goodbye to the coordination service at shutdown (its leader had already exited)", rank=0,
    remedy="Nothing to do when the job finished: the leader left first. If the job failed, the cause is earlier.",
    component="tensorflow", versions=">=2.9", source=SRC + " coordination_service_agent.cc (Shutdown)",
    fixture="E0000 00:00:1795293256.1 1 coordination_service_agent.cc:490] Failed to disconnect from coordination service with status: DEADLINE_EXCEEDED: Deadline Exceeded")
add("DD899", "tf-channel-cache", C.CONFIG_TF_CONFIG, R.CONTEXT, ("Initialize GrpcChannelCache for job",),
    "A task's gRPC server lists the addresses of one job of its cluster", rank=0,
    remedy="Nothing by itself; the cluster it lists is checked with the preflight rules (diagnose/logs/clusters.py).",
    component="tensorflow", versions="all", source=SRC + " grpc_channel.cc (GrpcChannelCache)",
    fixture="2020-01-15 19:13:45.012345: I tensorflow/core/distributed_runtime/rpc/grpc_channel.cc:300] Initialize GrpcChannelCache for job worker -> {0 -> localhost:2000, 1 -> 10.1.2.3:2001}")

# -- coverage audit (message probes, tests/probes/messages.tsv) ------------------------------------------------
add("DD692", "tf-remote-handle-lost", C.PEER_CRASHED, R.SYMPTOM, ("Unable to find the relevant tensor remote_handle",),
    "A remote worker no longer holds a tensor this task asked for (the worker restarted)", names=_TASK, rank=40,
    expect="worker:2", remedy=_RESTARTED + " ParameterServerStrategy's coordinator treats this error as a worker failure "
    "and retries the function on another worker.",
    component="tensorflow", versions=">=2.4", source=_RT + " eager/remote_mgr.cc; distribute/coordinator/cluster_coordinator.py (_is_worker_failure) lists it",
    fixture="InvalidArgumentError: Unable to find the relevant tensor remote_handle: Op ID: 3187, Output num: 0 "
            "/job:worker/replica:0/task:2")
add("DD693", "tf-barrier-timed-out-tasks", C.HANG_STALLED_WORKER, R.WAIT, ("Some timed out task names:",),
    "A coordination barrier names the tasks that never reached it", rank=55,
    remedy="The named tasks did not reach the barrier in time: look at their stacks (py-spy dump), input pipelines "
    "and logs; a task that crashed earlier shows up here too.",
    component="tensorflow", versions=">=2.9", source=_RT + " coordination_service.cc (barrier timeout)",
    names=r"Some timed out task names:\s*/job:(?P<job>[A-Za-z_]+)(?:/replica:\d+)?/task:(?P<index>\d+)",
    fixture="The first task at the barrier: /job:worker/replica:0/task:0. Some timed out task names:\n/job:worker/replica:0/task:1",
    expect="worker:1")
add("DD694", "tf-cluster-registration-failed", C.NETWORK_UNREACHABLE, R.CAUSE, ("as cluster registration failed",),
    "The coordination service gave up: not every task registered in time", rank=60,
    remedy="Some task never connected to the coordination leader: it crashed before connecting, was never scheduled, or "
    "cannot reach the leader's address. Check every task's pod/step and that TF_CONFIG's addresses are reachable.",
    component="tensorflow", versions=">=2.9", source=_RT + " coordination_service.cc",
    fixture="E0000 00:00:1712000000.1 991 coordination_service.cc:1187] Stopping coordination service as cluster "
            "registration failed. This may be due to 1) some tasks crashed earlier before connecting, 2) some tasks "
            "were never scheduled, or 3) scheduling delays.")
add("DD695", "tf-op-not-registered", C.VERSION_MISMATCH, R.CAUSE,
    ("Op type not registered", "No OpKernel was registered to support Op", "OpKernel for 'GPU' devices compatible with node"),
    "An op in the graph is not in this process's TensorFlow build", rank=70,
    remedy="The graph uses an op (or a kernel for this device) that this TensorFlow binary lacks: a graph built by a "
    "newer TF, an extension (Horovod, custom ops, tf.contrib) not loaded or built for this TF, or a CPU-only build "
    "where a GPU kernel is needed. Run the same TensorFlow and extensions on every task.",
    component="tensorflow", versions="all", source=_RT + " op_registry / op_kernel.cc ('Op type not registered ', 'No OpKernel was registered to support Op ')",
    fixture="NotFoundError: Op type not registered 'NcclAllReduce' in binary running on worker-1. Make sure the Op and "
            "Kernel are registered in the binary running in this process.")
add("DD696", "tf-graphdef-version-skew", C.VERSION_MISMATCH, R.CAUSE,
    ("GraphDef-interpreting binary is up to date", "NodeDef mentions attr"),
    "A graph written by another TensorFlow version uses attributes this binary does not know", rank=75,
    remedy="The task that built the graph runs a newer TensorFlow than the task executing it (TF1 ps/worker: the "
    "parameter servers or workers differ): run the same TensorFlow version on every task.",
    component="tensorflow", versions="all", source=SRC + " framework/node_def_util.cc",
    fixture="InvalidArgumentError: NodeDef mentions attr 'explicit_paddings' not in Op<name=Conv2D; ...>; NodeDef: "
            "{{node conv2d/Conv2D}}. (Check whether your GraphDef-interpreting binary is up to date with your "
            "GraphDef-generating binary.).")
add("DD697", "tf-session-without-cluster", C.CONFIG_TF_CONFIG, R.CAUSE, ("but available devices are",),
    "The graph is pinned to a cluster job, but the session only has this process's local devices",
    regex=r"explicitly assigned to /job:(?!localhost\b)\w+.*available devices are \[ ?/job:localhost", rank=70,
    remedy="The session was not created against the cluster: pass the tf.distribute.Server's target to the session "
    "(MonitoredTrainingSession(master=server.target)) and start the server from a cluster spec (TF_CONFIG) that lists "
    "the jobs the graph uses.",
    component="tensorflow", versions="all", source=SRC + " placer.cc / colocation_graph.cc ('but available devices are [ ')",
    fixture="InvalidArgumentError: Cannot assign a device for operation 'global_step': Operation was explicitly assigned "
            "to /job:ps/task:0 but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the "
            "device specification refers to a valid device.")
add("DD698", "tf-api-missing", C.VERSION_MISMATCH, R.CAUSE, ("has no attribute",),
    "The code uses a TensorFlow API that this TensorFlow version does not have",
    regex=r"module 'tensorflow(?:\.[\w.]+)?' has no attribute '\w+'", rank=60,
    remedy="The code was written for another TensorFlow version (TF 1.x APIs such as ConfigProto, Session or contrib on "
    "TF 2.x, or a newer API on an older TF): use tf.compat.v1 or port the code, or install the version it was written "
    "for, on every task.",
    component="tensorflow", versions=">=2.0", source="CPython AttributeError on the tensorflow module (TF 2.x removed the 1.x top-level APIs)",
    fixture="AttributeError: module 'tensorflow' has no attribute 'ConfigProto'")
add("DD699", "keras-empty-logs", C.DATA_SHARDING_IMBALANCE, R.CAUSE, ("Unexpected result of `train_function` (Empty logs)",),
    "Keras got not one batch from this task's dataset: its input is empty", rank=60,
    remedy="This task's input yielded nothing: under a multi-worker strategy its shard is empty (fewer files than "
    "workers with FILE sharding, a filter or take() that leaves nothing for it); shard by DATA or give every worker "
    "files.",
    component="keras", versions=">=2.2 (tf.keras / tf_keras)", source="Keras Model.fit (keras/engine/training.py)",
    fixture="ValueError: Unexpected result of `train_function` (Empty logs). This could be due to issues in input "
            "pipeline that resulted in an empty dataset. Otherwise, please use `Model.compile(..., run_eagerly=True)`")
