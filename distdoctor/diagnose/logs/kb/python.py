"""Python exceptions and generic lines."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_EXC = r"^(?:[\w.]*\.)?(?P<exc>[A-Z]\w*(?:Error|Exception|Exit|Failure|Interrupt))(?::\s*(?P<msg>.*))?\s*$"

add("DD860", "python-exception", C.USER_CODE_ERROR, R.CAUSE, ("Error", "Exception"),
    "A Python exception ended the task", regex=_EXC, rank=35,
    remedy="Fix the error the traceback ends with (its last frame in your code is where to look); it happens on every "
    "attempt, so a restart will not help.", component="python", versions="all", source="CPython traceback format",
    fixture="RuntimeError: check_rank and exit epoch=1 batch=0 start_rank=0 rank=0")
add("DD861", "python-traceback", C.USER_CODE_ERROR, R.CONTEXT, ("Traceback (most recent call last)",),
    "A Python traceback begins", rank=5, remedy="Read the exception at the traceback's end.",
    component="python", versions="all", source="CPython traceback format",
    fixture="Traceback (most recent call last):")
add("DD862", "python-import", C.VERSION_MISMATCH, R.CAUSE,
    ("ModuleNotFoundError", "ImportError", "undefined symbol", "No module named", "cannot import name",
     "version `GLIBC", "was compiled against", "compiled using NumPy 1.x cannot be run in", "compiled against API version",
     "Descriptors cannot be created directly"),
    "A module or shared library does not load: the environment differs from what the code needs",
    regex=r"ModuleNotFoundError|ImportError|undefined symbol|No module named|cannot import name|version `GLIBC|was compiled against"
          r"|compiled using NumPy|compiled against API version|Descriptors cannot be created directly",
    rank=60, remedy="Install the same packages (TensorFlow, tf-keras, extensions such as Horovod) in every task's "
    "environment; rebuild extensions against the installed TensorFlow.",
    component="python", versions="all", source="CPython import system / the dynamic loader",
    fixture="ImportError: /usr/lib/python3/dist-packages/horovod/tensorflow/mpi_lib.so: undefined symbol: _ZN10tensorflow8OpKernel")
add("DD863", "python-memoryerror", C.OOM_HOST, R.CAUSE, ("MemoryError", "std::bad_alloc"),
    "The process could not allocate host memory", regex=r"(?:^|:\s+)(?:\w+\.)*(?:_Array)?MemoryError\b|std::bad_alloc", rank=75,
    remedy="Lower the batch size, shuffle/prefetch buffers and caches, or give the task more memory.",
    component="python", versions="all", source="CPython MemoryError (also re-raised wrapped: \"Exception: MemoryError()\") / libstdc++", fixture="MemoryError: Unable to allocate 7.45 GiB for an array")
add("DD864", "python-network", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("URLError", "ConnectionRefusedError", "socket.gaierror", "gaierror", "ConnectionResetError", "urlopen error",
     "NewConnectionError", "Max retries exceeded with url"),
    "A network call from the task's own code failed", rank=50,
    regex=r"URLError|ConnectionRefusedError|gaierror|urlopen error|NewConnectionError|Max retries exceeded",
    remedy="The task cannot reach an outside address (a dataset download, a storage or metadata endpoint): check DNS, "
    "proxies, egress rules and sidecars; pre-stage data where possible.",
    component="python", versions="all", source="CPython urllib / socket / requests",
    fixture="urllib.error.URLError: <urlopen error [Errno 111] Connection refused>")
add("DD865", "tf-cancelled-aborted", C.PEER_CRASHED, R.SYMPTOM, ("CancelledError", "AbortedError", "Cancelled: [_Derived_]"),
    "An operation was cancelled or aborted because of an error elsewhere",
    regex=r"(?:CancelledError|AbortedError|Cancelled: \[_Derived_\])", rank=10,
    remedy="A consequence: look for the first error on any task.",
    component="tensorflow", versions="all", source="TensorFlow errors_impl.py",
    fixture="tensorflow.python.framework.errors_impl.CancelledError: [_Derived_]Cancelled")
add("DD866", "python-keyboard-interrupt", C.PREEMPTION, R.CAUSE, ("KeyboardInterrupt",),
    "The task was interrupted (SIGINT)", regex=r"^KeyboardInterrupt\s*$", rank=30,
    remedy="Someone or something sent SIGINT (Ctrl-C, a launcher stopping the job).",
    component="python", versions="all", source="CPython",
    fixture="KeyboardInterrupt")
# a permission is no cluster configuration: outside the catalogue (the real corpus labels all five such cases other)
add("DD867", "python-permission", C.OTHER, R.CAUSE, ("PermissionError", "PermissionDeniedError", "Permission denied"),
    "The task may not read or write a path it needs", regex=r"PermissionError|PermissionDeniedError|Permission denied", rank=45,
    remedy="Give the task's user access to the path (model_dir, data, /dev/shm), or use another path.",
    component="python", versions="all", source="CPython PermissionError / TensorFlow PermissionDeniedError",
    fixture="tensorflow.python.framework.errors_impl.PermissionDeniedError: /mnt/ckpt; Permission denied")
add("DD868", "tf-not-found-path", C.USER_CODE_ERROR, R.CAUSE, ("NotFoundError", "No such file or directory"),
    "A file the task needs does not exist on its node",
    regex=r"^(?!.*(?:dlerror|Could not load dynamic library)).*(?:NotFoundError|No such file or directory)", rank=45,
    remedy="The path must exist on every node (a shared file system or object store), not only where you tested.",
    component="tensorflow", versions="all", source="TensorFlow NotFoundError / POSIX ENOENT", fixture="tensorflow.python.framework.errors_impl.NotFoundError: /data/train-00000; No such file or directory")

# -- context facts other rules read ------------------------------------------------------------------------------
add("DD870", "training-finished", C.OTHER, R.CONTEXT,
    ("Loss for final step", "Training finished", "Finished training", "training finished", "Training completed",
     "Training complete"),
    "A task reports it finished training", rank=0, remedy="Nothing to do.",
    component="tensorflow", versions="all", source="Estimator / Keras / common scripts",
    fixture="INFO:tensorflow:Loss for final step: 3.3031716.")
add("DD871", "checkpoint-save", C.OTHER, R.CONTEXT,
    ("saving model to", "Saving checkpoints for", "Saving checkpoint", "Saving model", "saving checkpoint"),
    "A task saves a checkpoint", rank=0, remedy="Nothing to do.",
    component="keras", versions="all", source="Keras ModelCheckpoint / Estimator CheckpointSaverHook",
    fixture="Epoch 00001: val_loss improved from inf to 10.37603, saving model to models/weights-01-10.38.hdf5")
add("DD872", "cluster-config-printed", C.CONFIG_TF_CONFIG, R.CONTEXT, ("TF_CONFIG", "cluster_spec", "ClusterSpec"),
    "A task prints its cluster configuration", rank=0, remedy="Nothing by itself; rules check it.",
    component="tensorflow", versions="all", source="TensorFlow distribute_coordinator.py / user scripts",
    fixture="INFO:tensorflow:TF_CONFIG environment variable: {'cluster': {'ps': ['ps-0:2222'], 'worker': ['worker-0:2222']}, 'task': {'index': 1, 'type': 'ps'}}")
add("DD873", "python-network-frame", C.NETWORK_UNREACHABLE, R.CONTEXT,
    ("urlretrieve", "urlopen", "urllib/request.py", "http/client.py", "socket.py", "requests/adapters.py",
     "urllib3/connection"),
    "A traceback frame inside a network call", rank=0,
    remedy="The task was waiting on the network when it failed: check what it connects to and what may block it.",
    component="python", versions="all", source="CPython urllib / http.client / socket and requests frames",
    fixture='  File "/usr/lib/python2.7/urllib.py", line 98, in urlretrieve')
add("DD874", "python-broken-process-pool", C.PEER_CRASHED, R.CAUSE, ("A process in the process pool was terminated abruptly",),
    "A child process of the task died (a worker of a multiprocessing pool)", rank=50,
    remedy="A pool worker was killed, usually by the OOM killer (`dmesg`): lower the pool size or per-process memory "
    "(e.g. Keras use_multiprocessing / workers).",
    component="python", versions=">=3.3", source="CPython concurrent/futures/process.py",
    fixture="concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or pending.")
add("DD898", "python-cluster-config-frame", C.CONFIG_TF_CONFIG, R.CONTEXT,
    ("multi_worker_util.py", "tfconfig_cluster_resolver.py", "run_config.py", "in _make_cluster_def"),
    "A traceback frame inside TensorFlow's code that reads and validates the cluster (TF_CONFIG)", rank=0,
    regex=r"File \".*(?:multi_worker_util\.py\", line \d+, in (?:_validate_cluster_spec|normalize_cluster_spec|"
          r"task_count|worker_count|id_in_cluster|is_chief|collective_leader|coordination_leader)"
          r"|tfconfig_cluster_resolver\.py\", line \d+, in (?:_load_tf_config|_get_value_in_tfconfig|cluster_spec|"
          r"task_type|task_id)"
          r"|run_config\.py\", line \d+, in (?:__init__|_validate_properties|_validate_task_type_and_task_id|"
          r"_init_distributed_setting_from_environment_var|_count_ps|_count_worker|_get_session_master|"
          r"_get_eval_session_master)"
          r"|server_lib\.py\", line \d+, in _make_cluster_def)",
    remedy="The task failed while TensorFlow read its cluster: fix TF_CONFIG (jobs, task type and index, addresses) "
    "for that task.",
    component="tensorflow", versions="all", source="TensorFlow distribute/multi_worker_util.py, cluster_resolver/tfconfig_cluster_resolver.py, "
    "training/server_lib.py, estimator/run_config.py (the functions that parse and validate TF_CONFIG)",
    fixture='  File "/usr/local/lib/python3.8/dist-packages/tensorflow/python/distribute/multi_worker_util.py", line 82, in _validate_cluster_spec')
add("DD875", "python-tf-config-frame", C.CONFIG_TF_CONFIG, R.CONTEXT,
    ("environ['TF_CONFIG']", 'environ["TF_CONFIG"]', "environ.get('TF_CONFIG'",
     'environ.get("TF_CONFIG"', "getenv('TF_CONFIG'", 'getenv("TF_CONFIG"'),
    "A traceback source line of a script that reads TF_CONFIG", rank=0,
    remedy="An exception raised right below this frame was raised while reading TF_CONFIG: fix the variable (valid "
    "JSON with `cluster` and `task`; `distdoctor check --static` validates it).",
    component="python", versions="all", source="user training scripts as their tracebacks quote them (TF's own frames: DD898)",
    fixture="    return json.loads(os.environ.get('TF_CONFIG', '{}'))")
# Any line that reads as an error (a glog E/F level, ERROR/FATAL, an exception's name, "failed", a non-zero exit, a
# stall, NCCL's WARN level): the safety net (safetynet.py) quotes the first such line that no other signature claims,
# so that a failing log whose message the knowledge base lacks is never "no evidence of a failure". Lines at a
# warning, info or debug level are not errors (NCCL's WARN is its only error level).
add("DD1012", "error-line", C.OTHER, R.CONTEXT,
    ("E0", "E1", "F0", "F1", ": E ", "] E ", ": F ", "] F ", "ERROR", "FATAL", "CRITICAL", "PANIC", "rror", "xception",
     "failed", "Failed", "FAILED", "failure", "Failure", "Killed", "bort", "BORT", "exit code", "exit status",
     "Exit Code", "Exit code", "exited with", "non-zero", "nonzero", "stall", "Stall", "timed out", "Timed out",
     "WARN", "panic", "fault"),
    "A line that reads as an error", rank=0,
    regex=r"^(?!.*\b(?:no|0|zero|without) (?:errors?|failures?|failed)\b)"
          r"(?!(?:.*[\s\]:])?[IWD]\d{4} \d\d:\d\d:\d\d)(?!(?:.*(?::|\]) )?[IWD] [\w/.-]+:\d+\])"
          r"(?!.*\b(?:INFO|WARNING|DEBUG|NOTICE|[Ww]arning:)(?![A-Za-z]))"
          r".*(?:(?:^|[\s\]:])[EF]\d{4} \d\d:\d\d:\d\d|(?:^|: |\] )[EF] [\w/.-]+:\d+\]"
          r"|\b(?:ERROR|FATAL|CRITICAL|PANIC)\b|\b[Ee]rror\b|[a-z](?:Error|Exception)\b|\b(?:[Ff]ail(?:ed|ure)|FAILED)\b"
          r"|\bKilled\b|\b[Aa]bort(?:ed|ing)?\b|\bABORT|\bnon-?zero\b|[Ee]xit(?:ed with)? (?:[Cc]ode|status)[:= ]*-?[1-9]"
          r"|\b[Ss]tall(?:ed)?\b|\b[Tt]imed out\b|\bNCCL WARN\b|\.(?:cc|h|cpp):\d+ WARN\b|\bpanic\b|\bfault\b)",
    remedy="Not in the knowledge base: read the quoted line and the lines just before it.",
    component="any", versions="all",
    source="the error levels of glog (E/F), Python's logging (ERROR, CRITICAL), NCCL (WARN), and the words programs "
    "use to report a failure",
    fixture="2020-02-11 10:12:44.301210: E tensorflow/core/kernels/example_kernel.cc:120] something went wrong")
# Keras 3 (tf.keras from TF 2.16 on) does not take tf.distribute's per-replica values: model.fit under a
# tf.distribute strategy fails converting one to a tensor; the legacy tf-keras (TF_USE_LEGACY_KERAS=1) does
add("DD1011", "keras3-per-replica", C.VERSION_MISMATCH, R.CAUSE, ("PerReplica",),
    "A tf.distribute per-replica value reached a tensor conversion (Keras 3 under a tf.distribute strategy)", rank=60,
    regex=r"unsupported type \(<class 'tensorflow\.python\.distribute\.values\.PerReplica'>\)|"
          r"Attempt to convert a value \(PerReplica:",
    remedy="With TF >= 2.16, tf.keras is Keras 3, which does not train under a tf.distribute strategy such as "
    "MultiWorkerMirroredStrategy this way: run `pip install tf_keras` (the release matching TensorFlow's, e.g. "
    "tf_keras~=2.21 for TF 2.21) and set TF_USE_LEGACY_KERAS=1 in every task's environment (before TensorFlow is "
    "imported; `distdoctor run` passes it on), so that tf.keras is the legacy Keras 2; or pin TF < 2.16. In custom "
    "loops, reduce per-replica results (strategy.reduce / experimental_local_results) before using them as tensors.",
    component="tensorflow", versions=">=2.16 (tf.keras is Keras 3)",
    source="TensorFlow tensor conversion error (constant_op / tensor_conversion_registry) with tf.distribute values",
    fixture="ValueError: Attempt to convert a value (PerReplica:{ 0: <tf.Tensor: shape=(), dtype=float32, numpy=1.0> }) "
            "with an unsupported type (<class 'tensorflow.python.distribute.values.PerReplica'>) to a Tensor.")
add("DD1484", "argparse-unrecognized-arguments", C.USER_CODE_ERROR, R.CAUSE, (": error: unrecognized arguments:",),
    "The script was started with arguments its parser does not take", rank=70,
    remedy="The command line (the job script, the launcher) passes arguments the script does not define: fix the "
    "command, or add them to the script's parser (a launcher's own argument, e.g. torch.distributed.launch's "
    "--local_rank, must be accepted or the launcher changed).",
    component="python", versions="all", source="CPython Lib/argparse.py (parse_args: \"%(prog)s: error: unrecognized "
    "arguments: %s\")",
    fixture="train.py: error: unrecognized arguments: --gpus [2,3,4,6]")
# PyTorch 2.0's torch.distributed.launch passes "--local-rank=N" where 1.x passed "--local_rank=N": a script written for
# 1.x that parses "--local_rank" refuses the new spelling -- the script and the installed launcher are of different
# releases (a script that takes no such argument at all is DD1484's: the command line is wrong)
add("DD1506", "torch-launch-local-rank-spelling", C.VERSION_MISMATCH, R.CAUSE, ("unrecognized arguments:",),
    "The script refuses torch.distributed.launch's --local-rank (PyTorch 2.0's spelling; 1.x passed --local_rank)",
    regex=r": error: unrecognized arguments:.*--local-rank=\d+", rank=80,
    remedy="PyTorch >= 2.0 passes --local-rank (a hyphen) to the script; the script parses --local_rank: accept both "
    "(`parser.add_argument('--local-rank', '--local_rank', type=int)`), read LOCAL_RANK from the environment "
    "(torchrun), or run the PyTorch release the script was written for.",
    component="pytorch", versions=">=2.0 (torch.distributed.launch)", source="pytorch/pytorch "
    "torch/distributed/run.py (the argument passed to the script when --use-env is off: '--local-rank=%d' since 2.0, "
    "'--local_rank=%d' before); CPython Lib/argparse.py (\"%(prog)s: error: unrecognized arguments: %s\")",
    fixture="main.py: error: unrecognized arguments: --local-rank=1")
# CPython's error for a name a module does not define ("module 'X' has no attribute 'Y'", Python 2: "'module' object
# has no attribute 'Y'"): the code was written against a release of X that has Y; the installed one has not (TensorFlow's
# own modules: DD698). The corpus' cases with these lines: 2 version skews (Horovod's TF1 hooks, a TPU API), 2 PyTorch
# builds without distributed support (DD1512 reads those)
add("DD1511", "python-module-name-missing", C.VERSION_MISMATCH, R.CAUSE, ("has no attribute",),
    "The code uses a name that the installed release of a module does not define",
    regex=r"module '(?!tensorflow\b)[\w.]+' has no attribute '\w+'|'module' object has no attribute '\w+'", rank=55,
    remedy="The code was written for another release of that module (a name added later, or removed): install the "
    "release it was written for, the same on every task, or port the call.",
    component="python", versions="all", source="CPython Objects/moduleobject.c (module_getattro: \"module '%U' has no "
    "attribute '%U'\"; Python 2: \"'module' object has no attribute '%.400s'\")",
    fixture="AttributeError: module 'horovod.tensorflow' has no attribute 'BroadcastGlobalVariablesHook'")
# CPython's AttributeError for an object's missing attribute ("'X' object has no attribute 'Y'"): the code asks an
# object of a library's class for what the class does not have -- a caller and a library of different releases, a
# library's own defect, or a slip in the code; the line does not say which. (A builtin value or a tensor asked for
# what it never has -- 'str'.joinpath, a symbolic Tensor's .numpy() -- is the code passing the wrong kind of value.)
# The reading names the skew, the actionable one (the corpus' 11 cases with such a line: 7 a library's defect, 4 a
# version skew, none the user's code), at most medium with the defect next (kb/ambiguous.py)
add("DD1514", "python-object-attribute-missing", C.VERSION_MISMATCH, R.CAUSE, ("object has no attribute",),
    "The code asks an object for an attribute its class does not have",
    regex=r"^(?:[\w.]*\.)?AttributeError: '(?!(?:str|int|float|bool|bytes|list|dict|tuple|set|NoneType|function|"
          r"method|module|Tensor|EagerTensor|SymbolicTensor|KerasTensor)')[\w.]+' object has no attribute '\w+'",
    rank=40,
    remedy="Compare the release the calling code was written for with the installed one of the object's library "
    "(the same on every task); if they match, the traceback's last frame says whose code asked.",
    component="python", versions="all", source="CPython Objects/object.c (PyObject_GenericGetAttr: \"'%.100s' object "
    "has no attribute '%U'\")",
    fixture="AttributeError: 'TrainingArguments' object has no attribute 'distributed_state'")
# DistributedDataParallel and DataParallel wrap the model: nn.Module.__getattr__ finds only what the wrapper itself
# registered (its parameters, buffers and the submodule ``module``), so the wrapped model's own attributes and methods
# must be reached through ``.module``. Code that reads them from the wrapper (a training script or a library written
# for one process, run under DDP) fails this way on every rank; which code asked, the traceback's last frames say
add("DD1529", "ddp-wrapper-attribute", C.USER_CODE_ERROR, R.CAUSE, ("DataParallel' object has no attribute",),
    "The code asks the DDP/DataParallel wrapper for an attribute of the model it wraps",
    regex=r"'(?:Distributed)?DataParallel' object has no attribute '\w+'", rank=62,
    remedy="The model is wrapped for data parallelism: reach its own attributes and methods through `model.module` "
    "(`getattr(model, 'module', model)` where the code runs both wrapped and unwrapped; accelerate's "
    "`accelerator.unwrap_model(model)`). If the access is in a library's code, that library was not written for "
    "wrapped models: update it or unwrap before calling it.",
    component="pytorch", versions="all", source="pytorch/pytorch torch/nn/modules/module.py (Module.__getattr__: "
    "AttributeError(\"'{}' object has no attribute '{}'\"); DistributedDataParallel and DataParallel register the "
    "wrapped model as the submodule 'module')",
    fixture="AttributeError: 'DistributedDataParallel' object has no attribute 'generate'")
