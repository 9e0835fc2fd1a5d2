"""Keras: tf.keras / tf_keras 2.x and Keras 3 messages about distributed training, mined from keras-team/tf-keras
(tf_keras/callbacks.py, tf_keras/engine/training.py) and keras-team/keras (keras/src/callbacks,
keras/src/distribution, keras/src/backend/*/distribution_lib.py) (codes DD990-DD999; the first Keras signatures are in
tf.py and tf_data.py)."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

K2 = "2.x (tf.keras / tf_keras)"
K3 = ">=3.0"

add("DD990", "keras-pss-batch-callbacks", C.USER_CODE_ERROR, R.CAUSE,
    ("Batch-level `Callback`s are not supported with `ParameterServerStrategy`",),
    "Keras refuses batch-level callbacks under ParameterServerStrategy", rank=70,
    remedy="Under ParameterServerStrategy only epoch-level callbacks run: drop or rewrite the batch-level hooks "
    "(on_train_batch_*), or use steps_per_execution.", component="keras", versions=K2,
    source="keras-team/tf-keras tf_keras/callbacks.py (CallbackList._disallow_batch_hooks_in_ps_strategy)",
    fixture="ValueError: Batch-level `Callback`s are not supported with `ParameterServerStrategy`. Found unsupported "
            "callbacks: [<MyLogger object at 0x7f>]")
add("DD991", "keras-pss-run-eagerly", C.USER_CODE_ERROR, R.CAUSE,
    ("with `ParameterServerStrategy`, `run_eagerly` is not supported",),
    "Keras refuses run_eagerly=True under ParameterServerStrategy", rank=70,
    remedy="Compile without run_eagerly under ParameterServerStrategy (the coordinator dispatches tf.functions).",
    component="keras", versions=K2, source="keras-team/tf-keras tf_keras/engine/training.py (Model.compile)",
    fixture="ValueError: When using `Model` with `ParameterServerStrategy`, `run_eagerly` is not supported.")
add("DD992", "keras-backup-restore-strategy", C.USER_CODE_ERROR, R.CAUSE,
    ("Currently BackupAndRestore callback only supports",),
    "BackupAndRestore does not support the distribution strategy in use", rank=70,
    remedy="BackupAndRestore supports no strategy, MirroredStrategy, MultiWorkerMirroredStrategy and TPUStrategy: with "
    "ParameterServerStrategy checkpoint with tf.train.Checkpoint / ModelCheckpoint instead.", component="keras",
    versions=K2, source="keras-team/tf-keras tf_keras/callbacks.py (BackupAndRestore.on_train_begin)",
    fixture="NotImplementedError: <class 'tensorflow.python.distribute.parameter_server_strategy_v2."
            "ParameterServerStrategyV2'> is not supported yet. Currently BackupAndRestore callback only supports empty "
            "strategy, MirroredStrategy, MultiWorkerMirroredStrategy and TPUStrategy.")
add("DD993", "keras-backup-restore-save-freq", C.USER_CODE_ERROR, R.CAUSE,
    ("Either `save_freq` or `save_before_preemption` must be set",),
    "BackupAndRestore was configured to never save", rank=65,
    remedy="Give BackupAndRestore a save_freq ('epoch' or a step count) or save_before_preemption=True.",
    component="keras", versions=">=2.11 (tf_keras)", source="keras-team/tf-keras tf_keras/callbacks.py (BackupAndRestore)",
    fixture="ValueError: Either `save_freq` or `save_before_preemption` must be set.")
add("DD994", "keras3-device-mesh-mismatch", C.USER_CODE_ERROR, R.CAUSE,
    ("Shape does not match the number of devices", "Shape and axis_names should have same size"),
    "Keras 3's DeviceMesh does not fit the devices it was given", rank=65,
    remedy="The mesh shape must multiply to the number of devices (all processes' devices in multi-host runs): build "
    "it from keras.distribution.list_devices().", component="keras", versions=K3,
    source="keras-team/keras keras/src/distribution/distribution_lib.py (DeviceMesh)",
    fixture="ValueError: Shape does not match the number of devices. Received: shape=(8,); devices.shape=(4,)")
add("DD995", "keras3-job-addresses", C.CONFIG_TF_CONFIG, R.CAUSE, ("jobs, but num_processes is",),
    "Keras 3's multi-process initialisation got a job address list of the wrong length", rank=75,
    regex=r"The provided job_addresses .* has \d+ jobs, but num_processes is \d+",
    remedy="keras.distribution.initialize(job_addresses, num_processes, process_id): the list must name one address per "
    "process, the coordinator first, the same on every process.", component="keras", versions=K3,
    source="keras-team/keras keras/src/backend/jax/distribution_lib.py (initialize)",
    fixture="ValueError: The provided job_addresses ['10.0.0.1:1234', '10.0.0.2:1234'] has 2 jobs, but num_processes "
            "is 4")
add("DD996", "keras-mesh-not-set", C.USER_CODE_ERROR, R.CAUSE,
    ("Cannot create sharding when device mesh is not set",),
    "A Keras 3 TensorLayout is used without a device mesh", rank=60,
    remedy="Create the layouts from a distribution with a DeviceMesh (ModelParallel(layout_map=...) / DataParallel) "
    "and set it (keras.distribution.set_distribution) before building the model.", component="keras", versions=K3,
    source="keras-team/keras keras/src/backend/{jax,tensorflow}/distribution_lib.py",
    fixture="ValueError: Cannot create sharding when device mesh is not set for TensorLayout.")
add("DD997", "keras-early-stopping", C.OTHER, R.CONTEXT, (": early stopping",),
    "Keras' EarlyStopping ended training", regex=r"Epoch \d+: early stopping", rank=0,
    remedy="Nothing to do: training stopped by design. On multiple workers every worker must stop at the same epoch "
    "(they see the same, reduced, metrics).", component="keras", versions="all",
    source="keras-team/keras keras/src/callbacks/early_stopping.py / tf_keras/callbacks.py (EarlyStopping)",
    fixture="Epoch 00012: early stopping")
add("DD998", "keras-checkpoint-monitor-missing", C.OTHER, R.BENIGN, ("available, skipping",),
    "ModelCheckpoint cannot see the metric it monitors and skips saving", regex=r"Can save best model only with \S+ "
    r"available, skipping", rank=0,
    remedy="Harmless for the run, but no best model is saved: monitor a metric that is logged (e.g. 'val_loss' needs "
    "validation data).", component="keras", versions="all",
    source="keras-team/keras keras/src/callbacks/model_checkpoint.py / tf_keras/callbacks.py (ModelCheckpoint)",
    fixture="WARNING:tensorflow:Can save best model only with val_acc available, skipping.")
add("DD999", "keras-unbuilt-backup-restore", C.USER_CODE_ERROR, R.CAUSE,
    ("you model must be built before you call `fit()`",),
    "BackupAndRestore needs a built model before fit() (Keras 3 raises; tf_keras only warns: DD677)", rank=50,
    regex=r"Error: To use the BackupAndRestore callback, you model must be built",
    remedy="Build the model before fit() (call it on a batch, or give the first layer an input shape) so "
    "BackupAndRestore can restore its weights.", component="keras", versions=K3,
    source="keras-team/keras keras/src/callbacks/backup_and_restore.py (_load_model)",
    fixture="ValueError: To use the BackupAndRestore callback, you model must be built before you call `fit()`. Model "
            "<Sequential name=sequential, built=False> is unbuilt. You can build it beforehand by calling it on a "
            "batch of data.")
add("DD1487", "keras-slot-variable-scope", C.USER_CODE_ERROR, R.CAUSE,
    ("Trying to create optimizer slot variable under the scope for tf.distribute.Strategy",),
    "The optimizer created its slot variables under another distribution strategy's scope than its model's", rank=85,
    remedy="Create the model and compile it (the optimizer) inside the same `strategy.scope()`, and restore a checkpoint "
    "inside it too.",
    component="keras", versions="2.x (optimizer_v2; tf-keras)", source="keras optimizer_v2/optimizer_v2.py (add_slot: "
    "\"Trying to create optimizer slot variable under the scope for tf.distribute.Strategy ({}), which is different "
    "from the scope used for the original variable ({}).\")",
    fixture="ValueError: Trying to create optimizer slot variable under the scope for tf.distribute.Strategy "
            "(<tensorflow.python.distribute.one_device_strategy.OneDeviceStrategy object at 0x7f8a>), which is different "
            "from the scope used for the original variable")
