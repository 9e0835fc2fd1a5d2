"""The catalogue entries of ``check``'s host and environment rules (DD401-DD419).

This host's checks (:mod:`.host`) and the environment's (:mod:`.fingerprint`) make their findings; DD420 (a TFJob
pod's name against its TF_CONFIG) is checked statically, beside the cluster rules (:mod:`.rules`).
"""
from __future__ import annotations

from ..catalogue import RuleList
from ..model import Category as C

__all__ = ["RULES"]

RULES = RuleList()

RULES.add("DD401", "keras3-with-mwms", C.VERSION_MISMATCH, "Keras 3 under MultiWorkerMirroredStrategy",
          "Keras 3 is what tf.keras resolves to (keras>=3 installed, TF_USE_LEGACY_KERAS not 1) in a "
          "multi-worker cluster.",
          "We observed model.fit under MultiWorkerMirroredStrategy with TensorFlow 2.21 and Keras 3 fail with "
          "\"Attempt to convert a value (PerReplica...)\"; the legacy tf-keras works.",
          "Installed package versions and TF_USE_LEGACY_KERAS.",
          "pip install tf-keras==<your TF version> and set TF_USE_LEGACY_KERAS=1 on every task.")
RULES.add("DD402", "legacy-keras-missing", C.VERSION_MISMATCH, "TF_USE_LEGACY_KERAS=1 without tf-keras",
          "TF_USE_LEGACY_KERAS asks for tf-keras but the package is not installed.",
          "`tf.keras` then fails to import on this task only.", "Installed packages and the variable.",
          "pip install tf-keras matching the TensorFlow version, or unset TF_USE_LEGACY_KERAS.")
RULES.add("DD403", "tf-keras-version-skew", C.VERSION_MISMATCH, "tf-keras does not match TensorFlow",
          "tf-keras and TensorFlow with different major.minor versions.",
          "tf-keras is released in lock-step with TensorFlow; mixed versions fail on import or at run time.",
          "Installed package versions.", "Install tf-keras==<TensorFlow version>.")
RULES.add("DD404", "tensorflow-missing", C.VERSION_MISMATCH, "TensorFlow is not installed here",
          "No tensorflow distribution in the Python that runs the check.",
          "The check probably runs in another environment than the training (another venv or image).",
          "Package metadata.", "Run the check with the Python that runs training.")
RULES.add("DD405", "several-tensorflows", C.VERSION_MISMATCH, "Several TensorFlow distributions installed",
          "tensorflow, tensorflow-cpu, tf-nightly... installed side by side with different versions.",
          "They share one `tensorflow` package directory; whichever was installed last wins, file by file.",
          "Package metadata.", "Uninstall all but one TensorFlow distribution.")
RULES.add("DD410", "own-address-not-local", C.CONFIG_TF_CONFIG, "This task's address is not this machine",
          "The host of this task's cluster entry resolves only to addresses this machine does not have.",
          "The server binds here but peers connect elsewhere: usually a wrong task index or a stale DNS entry.",
          "DNS answer and this machine's interface addresses.",
          "Give this process the task index whose address is this host (or fix the name).")
RULES.add("DD411", "own-name-unresolved", C.NETWORK_UNREACHABLE, "This task's host name does not resolve",
          "getaddrinfo fails for this task's own host name.",
          "TensorFlow fails with \"Name or service not known\" or peers never find it.", "The resolver's error.",
          "Use a resolvable name (on Kubernetes, the headless service name the TFJob creates).")
RULES.add("DD412", "port-in-use", C.PORT_IN_USE, "This task's port is taken",
          "Binding the task's port fails with \"address already in use\"; names the holding process.",
          "TensorFlow fails with \"Address already in use\" or, with SO_REUSEPORT, splits traffic with a stranger.",
          "A test bind and the socket table (psutil).", "Stop the holding process or pick another port.")
RULES.add("DD413", "port-not-permitted", C.PORT_IN_USE, "Not allowed to bind this task's port",
          "Binding fails with \"permission denied\" (ports below 1024 need privileges).",
          "The TensorFlow server cannot start.", "A test bind.", "Use a port above 1024.")
RULES.add("DD414", "low-memory", C.RESOURCE_EXHAUSTION, "Little free memory",
          "Available memory (host or cgroup limit, whichever is tighter) below 2 GiB or 10%.",
          "Training is then killed by the OOM killer mid-run, which peers see as a crash.",
          "/proc/meminfo (psutil) and the memory cgroup.", "Free memory, or request more in the pod/job spec.")
RULES.add("DD415", "checkpoint-disk", C.RESOURCE_EXHAUSTION, "Checkpoint directory short of space or not writable",
          "The checkpoint directory's file system has under 5 GiB or 5% free, or the directory is not writable.",
          "Checkpoints fail at the first save, often hours in.", "statvfs and access(2).",
          "Point --checkpoint-dir / the training's checkpoint path at a writable disk with room.")
RULES.add("DD416", "small-dev-shm", C.RESOURCE_EXHAUSTION, "/dev/shm is small",
          "/dev/shm smaller than 1 GiB (containers default to 64 MiB).",
          "NCCL and tf.data workers use shared memory and fail with bus errors when it runs out.", "statvfs.",
          "Mount a larger /dev/shm (docker --shm-size, an emptyDir with medium: Memory).")
RULES.add("DD417", "low-open-file-limit", C.RESOURCE_EXHAUSTION, "Low open-file limit",
          "RLIMIT_NOFILE soft limit under 4096.",
          "gRPC channels, data shards and checkpoints each hold descriptors; \"Too many open files\" ends the job.",
          "getrlimit.", "Raise it (ulimit -n 65536, or the container runtime's nofile limit).")
RULES.add("DD418", "core-dumps", C.SEGFAULT_CORE_DUMP, "Core dumps disabled or redirected",
          "RLIMIT_CORE is 0, or core_pattern pipes cores to a handler.",
          "A native crash in TensorFlow then leaves no core file to debug.", "getrlimit and /proc/sys/kernel/core_pattern.",
          "ulimit -c unlimited before training; look for piped cores with the named handler (coredumpctl).")
RULES.add("DD419", "gpu-memory-taken", C.RESOURCE_EXHAUSTION, "GPU memory already in use",
          "A GPU with less than half of its memory free before training starts (NVML).",
          "Another process holds it; TensorFlow will fail with out-of-memory or fall back to less memory.",
          "NVML memory info and its process list.", "Stop the other process or pick another GPU (CUDA_VISIBLE_DEVICES).")
