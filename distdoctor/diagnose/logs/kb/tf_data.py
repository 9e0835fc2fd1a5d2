"""TensorFlow input pipelines and state on disk: tf.data auto-sharding, tf.data service, Keras input handling,
TFRecord and checkpoint files, preemption checkpointing (codes DD660-DD679)."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

SRC = "TensorFlow source"
_SO = " (string in the 2.21 wheel's libtensorflow_framework.so.2)"
_TRIG = ", triggered on this machine"

_POLICY = ("Set the input's auto-shard policy to DATA (`options.experimental_distribute.auto_shard_policy = "
           "tf.data.experimental.AutoShardPolicy.DATA`) or OFF, or write the data as at least as many files as "
           "there are workers so that FILE sharding works.")

# AUTO falls back to DATA sharding with a warning that quotes the error (TF 2.5+: "AUTO sharding policy will apply
# DATA sharding policy ...", TF 2.3/2.4: "In AUTO-mode, and switching to DATA-based sharding ..."): not a failure.
_NOT_FALLBACK = r"^(?!.*(?:AUTO sharding policy will apply|switching to DATA-based sharding))"

# -- tf.data auto-sharding -----------------------------------------------------------------------------------
add("DD660", "tf-autoshard-unshardable", C.USER_CODE_ERROR, R.CAUSE, ("Found an unshardable source dataset",),
    "FILE auto-sharding was requested for a dataset that is not read from files",
    regex=_NOT_FALLBACK + r".*(?:Error|NOT_FOUND|tf_auto_shard failed)\b.*Found an unshardable source dataset", rank=70,
    remedy=_POLICY,
    component="tensorflow", versions=">=2.1", source=SRC + " grappler/optimizers/data/auto_shard.cc" + _TRIG,
    fixture="tensorflow.python.framework.errors_impl.NotFoundError: {{function_node __wrapped__AutoShardDataset_device_"
            "/job:localhost/replica:0/task:0/device:CPU:0}} Found an unshardable source dataset: goo.gle/debugstr")
add("DD661", "tf-autoshard-fallback-to-data", C.DATA_SHARDING_IMBALANCE, R.CONTEXT,
    ("AUTO sharding policy will apply DATA sharding policy", "switching to DATA-based sharding"),
    "Auto-sharding fell back to DATA sharding (every worker reads all the input and keeps 1/N)", rank=10,
    remedy="Harmless for correctness, but every worker reads the whole input: for large inputs shard by files (more "
    "files than workers) or set the policy to DATA explicitly to silence it.",
    component="tensorflow", versions=">=2.1", source=SRC + " auto_shard.cc" + _SO,
    fixture="W tensorflow/core/grappler/optimizers/data/auto_shard.cc:776] AUTO sharding policy will apply DATA sharding "
            "policy as it failed to apply FILE sharding policy because of the following reason: Found an unshardable "
            "source dataset: name: \"TensorSliceDataset/_2\"")
add("DD662", "tf-autoshard-too-few-files", C.DATA_SHARDING_IMBALANCE, R.CAUSE, ("Could not apply FILE based sharding",),
    "The input has fewer files than there are workers to shard them over",
    regex=_NOT_FALLBACK + r".*Could not apply FILE based sharding", rank=75, remedy=_POLICY,
    component="tensorflow", versions=">=2.1", source=SRC + " auto_shard.cc" + _TRIG,
    fixture="tensorflow.python.framework.errors_impl.InvalidArgumentError: {{function_node __wrapped__IteratorGetNext_"
            "output_types_1_device_/job:localhost/replica:0/task:0/device:CPU:0}} Could not apply FILE based sharding: "
            "the dataset only has 1 file(s), which is not enough for the required 2 shards/workers.")
add("DD663", "tf-shard-hint-misuse", C.USER_CODE_ERROR, R.CAUSE, ("Dataset.shard(SHARD_HINT, ...)` can only be used in",),
    "Dataset.shard(SHARD_HINT) was used outside a strategy's HINT sharding", rank=65,
    remedy="SHARD_HINT only works under experimental_distribute_dataset with AutoShardPolicy.HINT (or tf.data "
    "service's HINT mode): set that policy, or shard with explicit (num_workers, index).",
    component="tensorflow", versions=">=2.1", source=SRC + " shard_dataset_op.cc" + _TRIG,
    fixture="tensorflow.python.framework.errors_impl.FailedPreconditionError: {{function_node __wrapped__MakeIterator_"
            "device_/job:localhost/replica:0/task:0/device:CPU:0}} `tf.data.Dataset.shard(SHARD_HINT, ...)` can only be "
            "used in `tf.distribute.Strategy.experimental_distribute_dataset()` with "
            "`tf.data.experimental.AutoShardPolicy.HINT` policy")
add("DD664", "tf-generator-not-shardable", C.DATA_SHARDING_IMBALANCE, R.CONTEXT,
    ("does not implement the AsGraphDefInternal() method",),
    "A dataset built from a Python generator cannot be rewritten (and so cannot be auto-sharded)", rank=10,
    remedy="A from_generator input is not sharded by the strategy: every worker yields the full data unless the "
    "generator itself reads only its worker's part (use the InputContext in distribute_datasets_from_function).",
    component="tensorflow", versions=">=2.1", source=SRC + " framework/dataset.cc (printed by a real two-worker MultiWorkerMirroredStrategy run on this machine)",
    fixture="W0000 00:00:1795445738.403559   18295 dataset.cc:997] Input of GeneratorDatasetOp::Dataset will not be "
            "optimized because the dataset does not implement the AsGraphDefInternal() method needed to apply optimizations.")
add("DD665", "keras-infinite-input-no-steps", C.USER_CODE_ERROR, R.CAUSE,
    ("When providing an infinite dataset, you must specify the number of steps",
     "When providing a distributed dataset, you must specify the number of steps"),
    "Keras was given an endless (or distributed) dataset without a step count", rank=65,
    remedy="Pass steps_per_epoch (and validation_steps) to fit() for repeated or distributed datasets.",
    component="keras", versions=">=2.2 (tf.keras / tf_keras)", source="tf_keras engine/data_adapter.py" + _TRIG,
    fixture="ValueError: When providing an infinite dataset, you must specify the number of steps to run (if you did not "
            "intend to create an infinite dataset, make sure to not call `repeat()` on the dataset).")
add("DD666", "keras-not-multi-worker", C.USER_CODE_ERROR, R.CAUSE, ("is not supported in multi-worker mode",),
    "A Keras method that multi-worker training does not support was called", rank=65,
    remedy="Call that method outside the multi-worker strategy (e.g. on the chief with a single-worker strategy), or "
    "use the supported alternative.",
    component="keras", versions="2.x (tf.keras / tf_keras)", source="tf_keras engine/training.py (disable_multi_worker)",
    fixture="ValueError: evaluate_generator is not supported in multi-worker mode. Please use a non-multi-worker "
            "`tf.distribute.Strategy` such as `tf.distribute.MirroredStrategy`.")

add("DD675", "tf-autoshard-drops-cardinality", C.DATA_SHARDING_IMBALANCE, R.CONTEXT,
    ("transformation is currently not handled by the auto-shard rewrite",),
    "Auto-sharding removed an assert_cardinality: the per-worker step count becomes unknown", rank=15,
    remedy="Keras can no longer infer each worker's number of steps: pass steps_per_epoch explicitly, or shard the "
    "input yourself (distribute_datasets_from_function) so that every worker has the same number of batches.",
    component="tensorflow", versions=">=2.1", source=SRC + " auto_shard.cc" + _SO,
    fixture="W tensorflow/core/grappler/optimizers/data/auto_shard.cc:551] The `assert_cardinality` transformation is "
            "currently not handled by the auto-shard rewrite and will be removed.")

# -- tf.data service -----------------------------------------------------------------------------------------
add("DD667", "tf-data-service-worker-unlisted", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Failed to assign an index for worker", "Failed to shard dataset in tf.data service: Worker",
     "requires local tf.data workers, but no local worker is found"),
    "tf.data service: a worker is not in the dispatcher's configured worker list", rank=70,
    remedy="Static sharding needs a fixed worker pool: list every tf.data worker's host:port in the DispatcherConfig's "
    "worker_addresses, and restart a worker at the same address and port.",
    component="tensorflow", versions=">=2.3", source=SRC + " data/service/dispatcher_impl.cc" + _TRIG + " (a WorkerServer whose address the DispatcherConfig does not list)",
    fixture="RuntimeError: Failed to perform worker heartbeat: Failed to assign an index for worker localhost:53841. "
            "Configured workers list: [localhost:1]. The worker's address is not configured, or other workers are "
            "already running at the configured host. If your worker has restarted, make sure it runs at the same "
            "address and port.")
add("DD668", "tf-data-service-dispatcher-unreachable", C.NETWORK_UNREACHABLE, R.SYMPTOM,
    ("Failed to perform worker heartbeat", "Failed to get dispatcher version from dispatcher running at",
     "Failed to send heartbeat to dispatcher", "Failed to heartbeat to dispatcher"),
    "tf.data service: the dispatcher cannot be reached",
    regex=r"(?i)(?:dispatcher|worker heartbeat).{0,200}(?:unavailable|failed to connect|connection refused|deadline)",
    rank=35, remedy="Check that the dispatcher runs and that its address (service=...) is reachable from this task.",
    component="tensorflow", versions=">=2.3", source=SRC + " data/service/worker_impl.cc / grpc_util.cc" + _TRIG + " (a WorkerServer pointed at a dead dispatcher)",
    fixture="I0000 00:00:1795447010.791333   10134 grpc_util.cc:86] Failed to Worker heartbeat.: UNAVAILABLE: Failed to "
            "perform worker heartbeat: failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50569: "
            "Failed to connect to remote host: Connection refused. Will retry in 1534ms.")
add("DD669", "tf-data-service-dispatcher-restarted", C.PEER_CRASHED, R.SYMPTOM,
    ("The dispatcher is not configured to be fault tolerant",),
    "tf.data service: the dispatcher restarted and lost its state", rank=45,
    remedy="The dispatcher process restarted: find why, and give it a work_dir with fault_tolerant_mode=True so that it "
    "recovers its state.",
    component="tensorflow", versions=">=2.3", source=SRC + " data/service/dispatcher_impl.cc" + _SO,
    fixture="NOT_FOUND: Iteration client id not found: 12. The dispatcher is not configured to be fault tolerant, so this "
            "could be caused by a dispatcher restart.")

# -- files: TFRecords and checkpoints -------------------------------------------------------------------------
add("DD670", "tf-record-corrupted", C.OTHER, R.CAUSE, ("corrupted record at", "truncated record at"),
    "An input TFRecord file is corrupted or truncated",
    regex=r"^(?!.*(?:ignore_errors|[Ss]kipping)).*(?:corrupted|truncated) record at", rank=70,
    remedy="Regenerate or re-copy the named file (an interrupted copy or write truncates it); tf.data's "
    "ignore_errors() skips bad records if losing them is acceptable.",
    component="tensorflow", versions="all", source=SRC + " record_reader.cc" + _TRIG,
    fixture="tensorflow.python.framework.errors_impl.DataLossError: {{function_node __wrapped__IteratorGetNext_output_"
            "types_1_device_/job:localhost/replica:0/task:0/device:CPU:0}} corrupted record at 12 [Op:IteratorGetNext] name: ")
add("DD671", "tf-checkpoint-not-found", C.USER_CODE_ERROR, R.CAUSE,
    ("Unsuccessful TensorSliceReader constructor", "Failed to find any matching files for"),
    "The checkpoint to restore does not exist at that path on this node", rank=60,
    remedy="Every task must see the checkpoint at the same path: use shared storage (or an object store) for "
    "model_dir / the backup directory, and check the path's prefix (model.ckpt-N without a suffix).",
    component="tensorflow", versions="all", source=SRC + " tensor_slice_reader.cc / py_checkpoint_reader" + _TRIG,
    fixture="tensorflow.python.framework.errors_impl.NotFoundError: Unsuccessful TensorSliceReader constructor: Failed to "
            "find any matching files for /tmp/kb10/trig/nonexistent/model.ckpt-100")
add("DD672", "tf-checkpoint-corrupt", C.OTHER, R.CAUSE,
    ("not an sstable (bad magic number)", "Unable to open table file", "Checksum does not match: stored"),
    "A checkpoint file is corrupted or half-written", rank=70,
    remedy="The checkpoint was cut short (a task killed while saving, several tasks writing the same files): restore "
    "from the previous checkpoint and let only the chief write (others to temporary directories).",
    component="tensorflow", versions="all", source=SRC + " table.cc / tensor_bundle.cc" + _TRIG,
    fixture="tensorflow.python.framework.errors_impl.OpError: not an sstable (bad magic number)")

# -- preemption checkpointing and collectives with checkpoints --------------------------------------------------
add("DD673", "tf-preemption-handled", C.PREEMPTION, R.CAUSE,
    ("Termination caught in main thread on preempted worker", "Restarting cluster due to preemption",
     "Preemption signal received."),
    "TensorFlow's preemption handling caught a termination signal", rank=65,
    remedy="The task was preempted and its PreemptionCheckpointHandler / PreemptionWatcher reacted: restart the job "
    "(the handler's checkpoint lets it resume).",
    component="tensorflow", versions=">=2.8", source=SRC + " distribute/failure_handling/*.py",
    fixture="INFO:tensorflow:Termination caught in main thread on preempted worker")
add("DD674", "tf-collective-save-secs", C.HANG_COLLECTIVE_MISMATCH, R.CONTEXT,
    ("Collective ops may deadlock with", "Collective ops may run out of sync with"),
    "Time-based checkpointing or summaries with collectives (tasks may save at different steps)", rank=10,
    remedy="Use step-based save_checkpoints_steps / save_summaries_steps with collective strategies.",
    component="tensorflow", versions="1.x and tf.compat.v1", source=SRC + " training/monitored_session.py (TF 1.15 and 2.x)",
    fixture="WARNING:tensorflow:Collective ops may deadlock with `save_checkpoints_secs` please use "
            "`save_checkpoint_steps` instead. Clearing `save_checkpoint_secs` and setting `save_checkpoint_steps` to 1000 now.")
add("DD676", "keras-backup-restore-graph-mode", C.USER_CODE_ERROR, R.CAUSE, ("BackupAndRestore only supports eager mode",),
    "Keras' BackupAndRestore callback was used in graph mode", rank=60,
    remedy="Use BackupAndRestore with eager execution (TF2 behaviour), or in graph mode save with ModelCheckpoint and "
    "resume with load_weights() and initial_epoch.",
    component="keras", versions="2.x (tf.keras / tf_keras)", source="tf_keras callbacks.py (BackupAndRestore)",
    fixture="ValueError: BackupAndRestore only supports eager mode. In graph mode, consider using ModelCheckpoint to "
            "manually save and restore weights with `model.load_weights()` and by providing `initial_epoch` in "
            "`model.fit()` for fault tolerance.")
add("DD677", "keras-backup-restore-unbuilt", C.OTHER, R.CONTEXT, ("To use the BackupAndRestore callback, you model must be built",),
    "BackupAndRestore cannot restore an unbuilt model (a restarted job begins from scratch)", rank=10,
    remedy="Build the model (call it on a batch, or give Input shapes) before fit() so that a restarted task resumes "
    "from the backup instead of epoch 0.",
    component="keras", versions="2.x (tf.keras / tf_keras)", source="tf_keras callbacks.py (BackupAndRestore.on_train_begin)",
    fixture="WARNING:tensorflow:To use the BackupAndRestore callback, you model must be built before you call `fit()`. "
            "Model <tf_keras.src.engine.sequential.Sequential object at 0x7f3a1c2b4d50> is unbuilt. You can build it "
            "beforehand by calling it on a batch of data.")

add("DD678", "tf-too-few-elements-for-shards", C.DATA_SHARDING_IMBALANCE, R.CAUSE,
    ("enough elements in this dataset for each shard",),
    "The input has fewer elements (or files) than there are workers to shard it over", rank=75, remedy=_POLICY,
    component="tensorflow", versions="2.2-2.4", source="TensorFlow 2.2-2.4 tf.data auto-sharding (data/experimental/auto_shard_dataset_op / rebatch); the wording "
    "is as users quote it in public threads, it is not in the 2.21 wheel",
    fixture="InvalidArgumentError: There aren't enough elements in this dataset for each shard to have at least one "
            "element (# elems = 1, # shards = 2). If you are using datasets with distribution strategy, consider "
            "setting the auto sharding policy to either DATA or OFF")
add("DD1491", "tfds-fewer-files-than-pipelines", C.DATA_SHARDING_IMBALANCE, R.CAUSE,
    ("Cannot shard the pipeline with given `input_context`",),
    "The dataset's split has fewer files than there are input pipelines to shard it among", rank=85,
    remedy="Each input pipeline (worker) needs at least one file of the split: re-shard the data into more files, "
    "shard by data instead of by file (`tf.data.experimental.AutoShardPolicy.DATA`), or use fewer input pipelines.",
    component="tensorflow", versions="tensorflow-datasets >=4.0",
    source="tensorflow/datasets tensorflow_datasets/core/reader.py / shard_utils (\"Cannot shard the pipeline with given "
    "`input_context`.`num_shards=...` but `num_input_pipelines=...`\")",
    fixture="ValueError: Cannot shard the pipeline with given `input_context`.`num_shards=1` but "
            "`num_input_pipelines=2`. This means that some workers won't read any data.")
