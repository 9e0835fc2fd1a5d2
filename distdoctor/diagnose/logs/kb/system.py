"""CUDA, native crashes, the kernel and the host."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_NATIVE = ("A native crash: get a core dump or the full stack (faulthandler, `catchsegv`, gdb); match TensorFlow, CUDA, "
           "and extension versions (Horovod, custom ops) -- an extension built against another version crashes like this.")

add("DD760", "cuda-oom", C.OOM_GPU, R.CAUSE, ("CUDA_ERROR_OUT_OF_MEMORY", "CUDA out of memory", "cudaErrorMemoryAllocation",
                                             "out of memory trying to allocate", "Cuda failure 'out of memory'"),
    "The GPU ran out of memory", rank=88,
    remedy="Lower the per-replica batch size, enable memory growth, and check that no other process (a parameter server "
    "on the same GPU, another job) holds the GPU (`nvidia-smi`).", source="CUDA driver errors as TensorFlow logs them (cuda_driver.cc)",
    fixture="E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M (536870912 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
add("DD761", "cuda-init-failed", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT,
    ("failed call to cuInit: CUDA_ERROR_UNKNOWN", "failed call to cuInit: CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "CUDA driver version is insufficient", "failed call to cuInit: CUDA_ERROR_NOT_INITIALIZED"),
    "A node could not initialise its GPU: it runs on the CPU unlike the others", rank=40,
    remedy="Fix the GPU on that node (driver, `nvidia-smi`, device plugin, CUDA_VISIBLE_DEVICES) so that every task uses "
    "the same kind of device.", source="TensorFlow cuda_diagnostics.cc / cuda_driver.cc",
    fixture="E tensorflow/stream_executor/cuda/cuda_driver.cc:397] failed call to cuInit: CUDA_ERROR_UNKNOWN")
add("DD762", "cuda-error", C.OTHER, R.CAUSE, ("CUDA_ERROR_", "cudaError", "CUBLAS_STATUS_", "CUDNN_STATUS_"),
    "A CUDA call failed", regex=r"^(?!.*cuInit).*?(?:CUDA_ERROR_(?!OUT_OF_MEMORY)\w+|cudaError\w+|CUBLAS_STATUS_(?!SUCCESS)\w+|CUDNN_STATUS_(?!SUCCESS)\w+)",
    rank=45, remedy="Check the driver and the CUDA/cuDNN versions TensorFlow was built for against the node's; run "
    "`nvidia-smi` on that node.", source="CUDA/cuBLAS/cuDNN status names",
    fixture="E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query event: CUDA_ERROR_ILLEGAL_ADDRESS")
add("DD763", "cudnn-version", C.VERSION_MISMATCH, R.CAUSE,
    ("Loaded runtime CuDNN library", "but source was compiled with", "CuDNN library major and minor version needs to match"),
    "cuDNN at run time differs from the one TensorFlow was built with", rank=85,
    remedy="Install the cuDNN version this TensorFlow was built against on every node (or use the matching container).",
    source="TensorFlow cuda_dnn.cc", fixture="E tensorflow/stream_executor/cuda/cuda_dnn.cc:318] Loaded runtime CuDNN library: 7.1.4 but source was compiled with: 7.2.1.")
add("DD764", "native-segv", C.SEGFAULT_CORE_DUMP, R.CAUSE,
    ("Segmentation fault", "SIGSEGV", "Signal: Segmentation fault", "signal 11", "Bus error", "SIGBUS", "Illegal instruction",
     "SIGILL", "Floating point exception", "SIGFPE", "Fatal Python error: Segmentation fault", "*** Received signal 11",
     "Received signal 11"),
    "A task died from a native crash (segmentation fault, bus error, ...)", rank=80,
    regex=r"(?i)segmentation fault|sigsegv|signal 11\b|bus error|sigbus|floating point exception|sigfpe|signal: segmentation",
    remedy=_NATIVE, source="kernel signal names as Python, glibc, Open MPI and shells print them",
    fixture="[HOST:12252] Signal: Segmentation fault (11)")
add("DD765", "native-abort", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("Aborted (core dumped)", "*** Received signal 6", "SIGABRT",
                                                          "terminate called after throwing", "Fatal Python error: Aborted"),
    "A task aborted (uncaught C++ exception, failed assertion)", rank=40, remedy=_NATIVE,
    source="glibc / libstdc++ / absl failure signal handler", fixture="terminate called after throwing an instance of 'std::runtime_error'")
add("DD766", "check-failed", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("Check failed:", "CHECK failed"),
    "A C++ CHECK failed inside TensorFlow (the process aborts)", rank=65,
    remedy="TensorFlow aborted on an internal invariant: the line names the failed condition; search it with your TF "
    "version, and check that every task runs the same TF build and inputs.", source="absl/TensorFlow logging CHECK macros",
    fixture="F tensorflow/core/common_runtime/device_mgr.cc:53] Check failed: devices_.empty() == false")
add("DD767", "sigill-exit-132", C.VERSION_MISMATCH, R.CAUSE,
    ("exit code 132", "exit code: 132", "Illegal instruction", "exited with code 132", "status 132"),
    "The process died of an illegal instruction (a binary built for a newer CPU)", rank=85,
    regex=r"(?i)exit(?:ed)? (?:with )?code:? 132\b|illegal instruction|status 132\b",
    remedy="The TensorFlow build uses CPU instructions (AVX/AVX2) that this node lacks: run on nodes with AVX, or use a "
    "build compiled for this CPU.", source="kernel SIGILL; exit status 128+4",
    fixture="INFO: container failed with non-zero exit code: container failed with non-zero exit code: 132 (exit code 132)")
add("DD768", "kernel-oom-killer", C.OOM_HOST, R.CAUSE,
    ("Out of memory: Killed process", "Memory cgroup out of memory", "oom-kill:", "oom_reaper", "invoked oom-killer",
     "Killed process"),
    "The kernel's OOM killer killed a process", rank=95,
    regex=r"(?i)out of memory: kill(?:ed)? process|memory cgroup out of memory|oom-kill|oom_reaper|invoked oom-killer",
    remedy="The task needs more memory than its node or cgroup gives it: raise the limit or lower the batch size, "
    "shuffle/prefetch buffers and caches; look at its memory growth before the kill.", source="Linux mm/oom_kill.c",
    fixture="[123456.789] Out of memory: Killed process 4242 (python) total-vm:20000000kB, anon-rss:15000000kB")
add("DD769", "shell-killed", C.PEER_CRASHED, R.CAUSE, ("Killed",),
    "The shell reports the process was killed (SIGKILL)", regex=r"^(?:.*?(?:line \d+: +\d+ |<stderr>:))?Killed\s*(?:\S+.*)?$",
    rank=50, remedy="Something killed the task with SIGKILL: most often the OOM killer (check `dmesg`), otherwise the "
    "scheduler (time limit, eviction) or a person.", source="bash job control message for SIGKILL", fixture="Killed")
add("DD770", "exit-137", C.PEER_CRASHED, R.CAUSE,
    ("exit code 137", "exit status 137", "status code 137", "Exit Code:    137", "exitCode: 137", "exited with code 137",
     "returned non-zero exit status 137", "exit code: 137"),
    "A process exited with status 137 (SIGKILL)", regex=r"(?i)(?:exit|status)[ a-z:]*137\b", rank=45,
    remedy="SIGKILL from outside: check `dmesg` for the OOM killer and the scheduler's events for eviction or a time limit.",
    source="128 + SIGKILL", fixture="Process 0 exit with status code 137.")
add("DD771", "exit-143-sigterm", C.PREEMPTION, R.CAUSE,
    ("exit code 143", "Exit Code:    143", "status code 143", "exited with code 143", "Terminated"),
    "A process was terminated from outside (SIGTERM)", regex=r"(?i)(?:exit|status)[ a-z:]*143\b|^(?:.*<stderr>:)?Terminated\s*$",
    rank=30, remedy="Something sent SIGTERM (a preemption, eviction, scale-down, a time limit or a person): restart from "
    "the last checkpoint; handle SIGTERM to save one (BackupAndRestore / PreemptionCheckpointHandler).",
    source="128 + SIGTERM / bash job control", fixture="Terminated")
add("DD772", "disk-full", C.RESOURCE_EXHAUSTION, R.CAUSE, ("No space left on device", "Disk quota exceeded", "ENOSPC"),
    "A disk (or /dev/shm) is full", rank=75,
    remedy="Free or enlarge the volume the task writes to (checkpoints, logs, /tmp, /dev/shm).",
    source="POSIX ENOSPC / EDQUOT", fixture="OSError: [Errno 28] No space left on device")
add("DD773", "too-many-files", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Too many open files", "Resource temporarily unavailable", "can't start new thread", "Cannot allocate memory"),
    "The task ran out of file descriptors, threads or process slots", rank=60,
    remedy="Raise the limit (`ulimit -n`, pids.max in the container) or lower parallelism (inter/intra-op threads, "
    "dataset parallel calls).", source="POSIX EMFILE / EAGAIN / ENOMEM", fixture="OSError: [Errno 24] Too many open files")
add("DD774", "cpu-feature-info", C.OTHER, R.BENIGN,
    ("Your CPU supports instructions that this TensorFlow binary was not compiled to use", "This TensorFlow binary is optimized"),
    "TensorFlow's CPU-feature notice (harmless)", rank=0, remedy="Nothing to do.", source="TensorFlow cpu_feature_guard.cc",
    fixture="I tensorflow/core/platform/cpu_feature_guard.cc:137] Your CPU supports instructions that this TensorFlow binary was not compiled to use: SSE4.1 SSE4.2 AVX")
