"""CUDA, native crashes, the kernel and the host."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_NATIVE = ("A native crash: get a core dump or the full stack (faulthandler, `catchsegv`, gdb); match TensorFlow, CUDA, "
           "and extension versions (Horovod, custom ops) -- an extension built against another version crashes like this.")

add("DD760", "cuda-oom", C.OOM_GPU, R.CAUSE, ("CUDA_ERROR_OUT_OF_MEMORY", "CUDA out of memory", "cudaErrorMemoryAllocation",
                                             "out of memory trying to allocate", "Cuda failure 'out of memory'"),
    "The GPU ran out of memory", rank=88,
    # the BFC allocator's retry warning says itself that it is no failure
    regex=r"^(?!.*The caller indicates that this is not a failure)",
    remedy="Lower the per-replica batch size, enable memory growth, and check that no other process (a parameter server "
    "on the same GPU, another job) holds the GPU (`nvidia-smi`).",
    component="cuda", versions="all", source="CUDA driver errors as TensorFlow logs them (cuda_driver.cc)",
    fixture="E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M (536870912 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
add("DD761", "cuda-init-failed", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT,
    ("failed call to cuInit: CUDA_ERROR_UNKNOWN", "failed call to cuInit: CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "Failed call to cuInit: UNKNOWN ERROR", "failed call to cuInit: UNKNOWN ERROR",
     "CUDA driver version is insufficient", "failed call to cuInit: CUDA_ERROR_NOT_INITIALIZED"),
    "A node could not initialise its GPU: it runs on the CPU unlike the others", rank=40,
    remedy="Fix the GPU on that node (driver, `nvidia-smi`, device plugin, CUDA_VISIBLE_DEVICES) so that every task uses "
    "the same kind of device.",
    component="cuda", versions="all", source="TensorFlow cuda_diagnostics.cc / cuda_driver.cc",
    fixture="E tensorflow/stream_executor/cuda/cuda_driver.cc:397] failed call to cuInit: CUDA_ERROR_UNKNOWN")
add("DD762", "cuda-error", C.OTHER, R.CAUSE, ("CUDA_ERROR_", "cudaError", "CUBLAS_STATUS_", "CUDNN_STATUS_"),
    "A CUDA call failed", regex=r"^(?!.*cuInit).*?(?:CUDA_ERROR_(?!OUT_OF_MEMORY)\w+|cudaError\w+|CUBLAS_STATUS_(?!SUCCESS)\w+|CUDNN_STATUS_(?!SUCCESS)\w+)",
    rank=45, remedy="Check the driver and the CUDA/cuDNN versions TensorFlow was built for against the node's; run "
    "`nvidia-smi` on that node.", component="cuda", versions="all", source="CUDA/cuBLAS/cuDNN status names",
    fixture="E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query event: CUDA_ERROR_ILLEGAL_ADDRESS")
add("DD763", "cudnn-version", C.VERSION_MISMATCH, R.CAUSE,
    ("Loaded runtime CuDNN library", "but source was compiled with", "CuDNN library major and minor version needs to match",
     "DNN library is not found"),
    "cuDNN at run time differs from the one TensorFlow was built with (or is missing)", rank=85,
    remedy="Install the cuDNN version this TensorFlow was built against on every node (or use the matching container).",
    component="cudnn", versions="all", source="TensorFlow cuda_dnn.cc; conv_ops / dnn.h ('DNN library is not found.', GPU builds only)", fixture="E tensorflow/stream_executor/cuda/cuda_dnn.cc:318] Loaded runtime CuDNN library: 7.1.4 but source was compiled with: 7.2.1.")
add("DD764", "native-segv", C.SEGFAULT_CORE_DUMP, R.CAUSE,
    ("Segmentation fault", "SIGSEGV", "Signal: Segmentation fault", "signal 11", "Bus error", "SIGBUS", "Illegal instruction",
     "SIGILL", "Floating point exception", "SIGFPE", "Fatal Python error: Segmentation fault", "*** Received signal 11",
     "Received signal 11", "exited on signal 6", "exited on signal 7", "exited on signal 8"),
    "A task died from a native crash (segmentation fault, bus error, ...)", rank=80,
    regex=r"(?i)segmentation fault|sigsegv|signal 11\b|bus error|sigbus|floating point exception|sigfpe|signal: segmentation"
          r"|exited on signal [678]\b",
    remedy=_NATIVE,
    component="kernel", versions="all", source="kernel signal names as Python, glibc, Open MPI and shells print them",
    fixture="[HOST:12252] Signal: Segmentation fault (11)")
# an abort: the process ended itself (SIGABRT) on an error it detected -- an uncaught C++ exception, a failed assertion:
# the line says how it ended, not why (the learned reading decides the cause: learned.DECIDED_BY_MODEL; hindsight's
# abort_with_a_stated_reason takes a known line that states it); glibc's heap checks are a native defect (DD1518)
add("DD765", "native-abort", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("Aborted (core dumped)", "*** Received signal 6", "SIGABRT",
                                                          "terminate called after throwing", "Fatal Python error: Aborted",
                                                          "terminate called without an active exception"),
    "A task aborted (an uncaught C++ exception, a failed assertion)", rank=40,
    remedy="The process ended itself on an error it detected: the lines just before the abort (the exception's what(), "
    "a failed check, an error message) say which; if none does, get the full stack (faulthandler, gdb on the core) "
    "and match TensorFlow, CUDA and extension versions on every task.",
    component="glibc", versions="all", source="glibc abort() / libstdc++ std::terminate / absl failure signal handler",
    fixture="terminate called after throwing an instance of 'std::runtime_error'")
add("DD1518", "heap-corruption", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("double free or corruption", "free(): invalid pointer",
                                                               "malloc(): corrupted", "corrupted size vs. prev_size"),
    "glibc found the heap corrupted (a double free, an invalid pointer) and aborted the task", rank=45, remedy=_NATIVE,
    component="glibc", versions="all", source="glibc malloc/malloc.c (malloc_printerr: \"double free or corruption\", "
    "\"free(): invalid pointer\", \"malloc(): corrupted top size\", \"corrupted size vs. prev_size\")",
    fixture="*** glibc detected *** ./examples/cpi: double free or corruption (fasttop): 0x09b39378 ***")
add("DD766", "check-failed", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("Check failed:", "CHECK failed"),
    "A C++ CHECK failed inside TensorFlow (the process aborts)", rank=65,
    remedy="TensorFlow aborted on an internal invariant: the line names the failed condition; search it with your TF "
    "version, and check that every task runs the same TF build and inputs.",
    component="tensorflow", versions="all", source="absl/TensorFlow logging CHECK macros",
    fixture="F tensorflow/core/common_runtime/device_mgr.cc:53] Check failed: devices_.empty() == false")
add("DD767", "sigill-exit-132", C.VERSION_MISMATCH, R.CAUSE,
    ("exit code 132", "exit code: 132", "Illegal instruction", "exited with code 132", "status 132"),
    "The process died of an illegal instruction (a binary built for a newer CPU)", rank=85,
    regex=r"(?i)exit(?:ed)? (?:with )?code:? 132\b|illegal instruction|status 132\b",
    remedy="The TensorFlow build uses CPU instructions (AVX/AVX2) that this node lacks: run on nodes with AVX, or use a "
    "build compiled for this CPU.", component="kernel", versions="all", source="kernel SIGILL; exit status 128+4",
    fixture="INFO: container failed with non-zero exit code: container failed with non-zero exit code: 132 (exit code 132)")
add("DD768", "kernel-oom-killer", C.OOM_HOST, R.CAUSE,
    ("Out of memory: Killed process", "Memory cgroup out of memory", "oom-kill:", "oom_reaper", "invoked oom-killer",
     "Killed process"),
    "The kernel's OOM killer killed a process", rank=95,
    regex=r"(?i)out of memory: kill(?:ed)? process|memory cgroup out of memory|oom-kill|oom_reaper|invoked oom-killer",
    remedy="The task needs more memory than its node or cgroup gives it: raise the limit or lower the batch size, "
    "shuffle/prefetch buffers and caches; look at its memory growth before the kill.",
    component="kernel", versions="all", source="Linux mm/oom_kill.c",
    fixture="[123456.789] Out of memory: Killed process 4242 (python) total-vm:20000000kB, anon-rss:15000000kB")
add("DD769", "shell-killed", C.PEER_CRASHED, R.CAUSE, ("Killed",),
    "The shell reports the process was killed (SIGKILL)", regex=r"^(?:.*?(?:line \d+: +\d+ |<stderr>:))?Killed\s*(?:\S+.*)?$",
    rank=50, remedy="Something killed the task with SIGKILL: most often the OOM killer (check `dmesg`), otherwise the "
    "scheduler (time limit, eviction) or a person.",
    component="shell", versions="all", source="bash job control message for SIGKILL", fixture="Killed")
add("DD770", "exit-137", C.PEER_CRASHED, R.CAUSE,
    ("exit code 137", "exit status 137", "status code 137", "Exit Code:    137", "exitCode: 137", "exited with code 137",
     "returned non-zero exit status 137", "exit code: 137"),
    "A process exited with status 137 (SIGKILL)", regex=r"(?i)(?:exit|status)[ a-z:]*137\b", rank=45,
    remedy="SIGKILL from outside: check `dmesg` for the OOM killer and the scheduler's events for eviction or a time limit.",
    component="shell", versions="all", source="128 + SIGKILL", fixture="Process 0 exit with status code 137.")
add("DD771", "exit-143-sigterm", C.PREEMPTION, R.CAUSE,
    ("exit code 143", "Exit Code:    143", "status code 143", "exited with code 143", "Terminated"),
    "A process was terminated from outside (SIGTERM)", regex=r"(?i)(?:exit|status)[ a-z:]*143\b|^(?:.*<stderr>:)?Terminated\s*$",
    rank=30, remedy="Something sent SIGTERM (a preemption, eviction, scale-down, a time limit or a person): restart from "
    "the last checkpoint; handle SIGTERM to save one (BackupAndRestore / PreemptionCheckpointHandler).",
    component="shell", versions="all", source="128 + SIGTERM / bash job control", fixture="Terminated")
# Python's subprocess convention: a child killed by signal N has return code -N; the launchers written in Python say so
# (torch.distributed.elastic's agent and its ChildFailedError table, DeepSpeed's launcher, CalledProcessError)
_PY_LAUNCHERS = ("Python subprocess returncode -N; torch/distributed/elastic/multiprocessing/api.py \"failed (exitcode: "
                 "%s) local_rank: %s\" and errors/__init__.py's table (\"exitcode  : %s\", \"Signal %d (%s) received "
                 "by PID %d\"); deepspeed/launcher/launch.py sigkill_handler \"exits with return code = %s\"; "
                 "subprocess.CalledProcessError \"died with <Signals.%s: %d>\"")
add("DD1018", "child-killed-sigkill", C.PEER_CRASHED, R.CAUSE,
    ("exitcode: -9", "exitcode  : -9", "return code = -9", "exit status -9", "<Signals.SIGKILL: 9>",
     "Signal 9 (SIGKILL) received by PID"),
    "A Python launcher reports its child was killed by SIGKILL (return code -9)",
    regex=r"exitcode\s*:\s*-9\b|return code = -9\b|exit status -9\b|<Signals\.SIGKILL: 9>|Signal 9 \(SIGKILL\) received by PID",
    rank=45, remedy="SIGKILL from outside: check `dmesg` for the OOM killer (host memory: the data loader's workers, "
    "pinned or offloaded tensors) and the scheduler's events for eviction or a time limit.",
    component="python", versions="all", source=_PY_LAUNCHERS,
    fixture="[2024-03-02 10:00:34,590] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) "
            "local_rank: 1 (pid: 4242) of binary: /usr/bin/python3")
add("DD1019", "child-killed-crash-signal", C.SEGFAULT_CORE_DUMP, R.CAUSE,
    ("exitcode: -", "exitcode  : -", "return code = -", "exit status -", "<Signals.SIG", ") received by PID"),
    "A Python launcher reports its child died of a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE)",
    regex=r"(?:exitcode\s*:\s*|return code = |exit status )-(?:11|6|7|4|8)\b"
          r"|<Signals\.SIG(?:SEGV|ABRT|BUS|ILL|FPE): \d+>|Signal (?:11|6|7|4|8) \(SIG(?:SEGV|ABRT|BUS|ILL|FPE)\) received by PID",
    rank=45, remedy=_NATIVE, component="python", versions="all", source=_PY_LAUNCHERS,
    fixture="  exitcode  : -11 (pid: 56213)")
# a process that says it got SIGTERM was stopped from outside, like exit 143, but in its own log: the task that
# printed it is the one that was stopped
add("DD1015", "sigterm-received", C.PREEMPTION, R.CAUSE, ("SIGTERM", "signal 15", "Signal 15"),
    "A task reports that it received SIGTERM (it was stopped from outside)",
    regex=r"(?i)\b(?:received|receiving|got|caught|handling)\s+(?:a\s+)?(?:signal\s+)?(?:SIGTERM|signal\s+15)\b"
          r"|\*\*\* SIGTERM received at time=",
    rank=38, remedy="Something sent SIGTERM (a preemption, eviction, drain, scale-down, a time limit or a person): the "
    "scheduler's record says who; restart from the last checkpoint and handle SIGTERM to save one "
    "(BackupAndRestore / PreemptionCheckpointHandler).",
    component="python", versions="all",
    source="SIGTERM handlers as training scripts and runtimes word them (Python signal.signal(SIGTERM, ...) handlers; "
           "absl failure_signal_handler.cc '*** %s received at time=%ld on cpu %d ***')",
    fixture="I1029 05:25:30.990125 140311 train.py:231] received SIGTERM, exiting")
add("DD772", "disk-full", C.RESOURCE_EXHAUSTION, R.CAUSE, ("No space left on device", "Disk quota exceeded", "ENOSPC"),
    "A disk (or /dev/shm) is full", rank=75,
    remedy="Free or enlarge the volume the task writes to (checkpoints, logs, /tmp, /dev/shm).",
    component="kernel", versions="all", source="POSIX ENOSPC / EDQUOT", fixture="OSError: [Errno 28] No space left on device")
add("DD773", "too-many-files", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Too many open files", "Resource temporarily unavailable", "can't start new thread", "Cannot allocate memory"),
    "The task ran out of file descriptors, threads or process slots", rank=60,
    remedy="Raise the limit (`ulimit -n`, pids.max in the container) or lower parallelism (inter/intra-op threads, "
    "dataset parallel calls).",
    component="kernel", versions="all", source="POSIX EMFILE / EAGAIN / ENOMEM", fixture="OSError: [Errno 24] Too many open files")
add("DD774", "cpu-feature-info", C.OTHER, R.BENIGN,
    ("Your CPU supports instructions that this TensorFlow binary was not compiled to use", "This TensorFlow binary is optimized"),
    "TensorFlow's CPU-feature notice (harmless)", rank=0, remedy="Nothing to do.",
    component="tensorflow", versions=">=1.6", source="TensorFlow cpu_feature_guard.cc",
    fixture="I tensorflow/core/platform/cpu_feature_guard.cc:137] Your CPU supports instructions that this TensorFlow binary was not compiled to use: SSE4.1 SSE4.2 AVX")

# -- the kernel's own records (dmesg / journal) -------------------------------------------------------------------
add("DD775", "kernel-segfault", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("segfault at",),
    "The kernel logged a process's segmentation fault", regex=r"\bsegfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error",
    rank=85, remedy=_NATIVE + " The library named after 'in' is where it crashed.",
    component="kernel", versions="all", source="Linux arch/x86/mm/fault.c (show_signal_msg)",
    fixture="[98765.432100] python[4242]: segfault at 0 ip 00007f3a1c2b4d5e sp 00007ffd9a8b7c60 error 4 in "
            "libtensorflow_framework.so.2[7f3a1a000000+2c00000]")
add("DD776", "kernel-invalid-opcode", C.VERSION_MISMATCH, R.CAUSE, ("trap invalid opcode",),
    "The kernel logged an illegal instruction: a binary built for a newer CPU", rank=85,
    remedy="The TensorFlow (or extension) build uses CPU instructions (AVX/AVX2/AVX-512) this node lacks: run on nodes "
    "with those instructions, or use a build for this CPU.",
    component="kernel", versions="all", source="Linux arch/x86/kernel/traps.c (do_trap)",
    fixture="traps: python[4242] trap invalid opcode ip:7f3a1c2b4d5e sp:7ffd9a8b7c60 error:0 in "
            "_pywrap_tensorflow_internal.so[7f3a10000000+9000000]")
add("DD777", "kernel-general-protection", C.SEGFAULT_CORE_DUMP, R.CAUSE, ("general protection fault",),
    "The kernel logged a general protection fault in a process", regex=r"traps: \S+\[\d+\] general protection fault",
    rank=80, remedy=_NATIVE, component="kernel", versions="all", source="Linux arch/x86/kernel/traps.c",
    fixture="traps: python[4242] general protection fault ip:7f3a1c2b4d5e sp:7ffd9a8b7c60 error:0 in libc.so.6[7f3a2a000000+195000]")
add("DD778", "kernel-hung-task", C.PEER_UNRESPONSIVE, R.WAIT, ("blocked for more than",),
    "The kernel reports a task stuck in uninterruptible sleep", regex=r"task \S+:\d+ blocked for more than \d+ seconds",
    # a process frozen in the kernel is why its peers' collectives time out: it outranks their waits
    rank=55, remedy="The process is stuck in the kernel (D state), usually on I/O: a hung network file system, a dying "
    "disk or a GPU driver; check the storage and `dmesg` around it.",
    component="kernel", versions="all", source="Linux kernel/hung_task.c",
    fixture="INFO: task python:4242 blocked for more than 120 seconds.")
add("DD779", "nfs-not-responding", C.PEER_UNRESPONSIVE, R.CONTEXT, ("not responding, still trying", "not responding, timed out"),
    "The NFS server stopped answering: I/O on it hangs", regex=r"nfs: server \S+ not responding", rank=35,
    remedy="Tasks reading data or writing checkpoints on that NFS mount hang until it answers: check the NFS server "
    "and the network to it ('nfs: server ... OK' marks its return).",
    component="kernel", versions="all", source="Linux fs/nfs / net/sunrpc",
    fixture="nfs: server filer01 not responding, still trying")
add("DD780", "nvidia-xid", C.OTHER, R.CAUSE, ("NVRM: Xid",),
    "The NVIDIA driver reported a GPU fault (Xid)", regex=r"NVRM: Xid \(PCI:[^)]*\): (?P<xid>\d+)", rank=80,
    remedy="A GPU hardware or driver fault on that node (79: fell off the bus, 48/63/64: ECC errors, 31/43: a fault in "
    "the program's kernels): drain the node, reset or replace the GPU, update the driver.",
    component="nvidia-driver", versions="all", source="NVIDIA kernel driver (nvidia.ko) Xid messages",
    fixture="NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.")
add("DD781", "conntrack-table-full", C.NETWORK_UNREACHABLE, R.CAUSE, ("nf_conntrack: table full, dropping packet",),
    "The kernel's connection-tracking table is full and drops packets", rank=60,
    remedy="New connections on this node are dropped: raise net.netfilter.nf_conntrack_max, or reduce the number of "
    "connections (many tasks x many peers).",
    component="kernel", versions="all", source="Linux net/netfilter/nf_conntrack_core.c",
    fixture="nf_conntrack: nf_conntrack: table full, dropping packet")

# -- TensorFlow on GPU nodes ------------------------------------------------------------------------------------------
add("DD782", "cudnn-handle-failed", C.OOM_GPU, R.CAUSE, ("Could not create cudnn handle",),
    "cuDNN could not initialise: usually no GPU memory was left for it", rank=60,
    remedy="Another process (or TensorFlow's own up-front allocation) holds the GPU's memory: enable memory growth, "
    "keep one process per GPU, and check the cuDNN version matches the build.",
    component="cudnn", versions="all", source="TensorFlow cuda_dnn.cc",
    fixture="E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR")
add("DD783", "tf-gpu-libraries-missing", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT,
    ("Cannot dlopen some GPU libraries", "Could not load dynamic library 'libcu", "Could not find cuda drivers on your machine"),
    "TensorFlow found no usable CUDA libraries or driver on this node (it will run on the CPU)", rank=30,
    remedy="If this node should use its GPUs, install the CUDA/cuDNN libraries and driver this TensorFlow needs (or use "
    "the matching container) so that it runs like the other nodes.",
    component="tensorflow", versions=">=2.1", source="TensorFlow dso_loader.cc / gpu_device.cc / cudart_stub.cc (the last printed on this machine)",
    fixture="I0000 00:00:1795445455.862541   32166 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.")
add("DD784", "tf-cuda-compute-capability", C.VERSION_MISMATCH, R.CONTEXT,
    ("was not built with CUDA kernel binaries compatible with compute capability",),
    "The TensorFlow build has no kernels for this GPU's architecture (slow JIT start, or failures)", rank=20,
    remedy="Use a TensorFlow build that supports this GPU's compute capability, on every node alike.",
    component="tensorflow", versions=">=2.0", source="TensorFlow gpu_device.cc (string in the 2.21 wheel)",
    fixture="W tensorflow/core/common_runtime/gpu/gpu_device.cc:2211] TensorFlow was not built with CUDA kernel binaries "
            "compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which could take 30 "
            "minutes or longer.")

# -- coverage audit (message probes, tests/probes/messages.tsv) -------------------------------------------------------
add("DD785", "gpu-oom-disguised", C.OOM_GPU, R.CAUSE,
    ("WhereOp: Race condition between counting", "Dst tensor is not initialized", "Failed to get convolution algorithm",
     "failed to create cublas handle", "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED", "Blas GEMM launch failed",
     "Attempting to perform BLAS operation using StreamExecutor without BLAS support"),
    "An error that TensorFlow raises when the GPU's memory is exhausted, often by another process on the same GPU",
    rank=60,
    remedy="GPU memory was exhausted, often by another process on the same GPU (a parameter server or a second worker "
    "not hidden from it): start processes that need no GPU (parameter servers) with CUDA_VISIBLE_DEVICES='', enable "
    "memory growth (tf.config.experimental.set_memory_growth / allow_growth), and run one process per GPU; check "
    "`nvidia-smi` for other holders.",
    component="tensorflow", versions="all", source="TensorFlow where_op.cc (TF issues #6378 and #6760 traced it to a parameter server holding the same GPU), "
    "gpu_util.cc ('Dst tensor is not initialized.'), conv_ops.cc, cuda_blas.cc ('failed to create cublas handle: '), "
    "cuda_dnn.cc, stream_executor/stream.cc ('Attempting to perform BLAS operation using StreamExecutor without BLAS support', GPU builds) (strings in the 2.21 wheel's libtensorflow_cc.so.2 / libtensorflow_framework.so.2)",
    fixture="tensorflow.python.framework.errors.InvalidArgumentError: WhereOp: Race condition between counting the number "
            "of true elements and writing them.  When counting, saw 1363 elements; but when writing their indices, saw "
            "12 elements.")
add("DD786", "thread-create-failed", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("pthread_create() failed", "pthread_create failed", "Thread creation via pthread_create"),
    "The task could not create a thread (process or thread limit reached)", rank=70,
    remedy="The task hit its thread limit (`ulimit -u`, the container's pids.max) or ran out of memory for stacks: raise "
    "the limit, or lower inter/intra-op and tf.data parallelism.",
    component="tensorflow", versions="all", source="TensorFlow platform/default/env.cc (CHECK on pthread_create)",
    fixture="F tensorflow/core/platform/default/env.cc:73] Check failed: ret == 0 (11 vs. 0)Thread creation via "
            "pthread_create() failed.")
# The kernel prints a memory cgroup's usage, limit and failure count only when that cgroup hits an OOM
add("DD1008", "kernel-memcg-oom-usage", C.OOM_HOST, R.CAUSE, ("memory: usage ",),
    "The kernel reports a memory cgroup at its limit during an OOM", rank=90,
    regex=r"memory: usage \d+kB, limit \d+kB, failcnt \d+",
    remedy="The container's memory cgroup ran out: raise its limit or lower the task's memory use; the kernel's log "
    "around this line names the process it killed.", component="kernel", versions="all (cgroup v1 wording; v2 prints memory usage per counter)",
    source="Linux mm/memcontrol.c (mem_cgroup_print_oom_meminfo)",
    fixture="[Thu Aug 16 09:05:19 2018] memory: usage 184320000kB, limit 184320000kB, failcnt 2316326")
add("DD1004", "mpich-gethostbyname-failed", C.NETWORK_UNREACHABLE, R.CAUSE, ("gethostbyname failed",),
    "MPICH could not resolve a host name (its TCP netmod looks up every node's name)", rank=80,
    regex=r"gethostbyname failed, \S+ \(errno -?\d+\)",
    remedy="Make every node's host name resolve on every node (DNS or /etc/hosts), or name the interface to use "
    "(MPICH: MPIR_CVAR_CH3_INTERFACE_HOSTNAME / -iface).", component="mpich", versions="ch3 (<=3.4 default; also Intel MPI before 2019)",
    source="pmodels/mpich src/mpid/ch3/channels/nemesis/netmod/tcp (MPID_nem_tcp_init)",
    fixture="MPID_nem_tcp_init(379).............: gethostbyname failed, ac922 (errno 1)")
# a native stack as gdb prints it (``bt`` on a core file, or on a live process: see DD1006)
add("DD1005", "native-backtrace", C.SEGFAULT_CORE_DUMP, R.CAUSE,
    tuple(f"#{i}  0x" for i in range(10)), "A native stack (gdb's backtrace) of a crashed or stuck process", rank=30,
    regex=r"^#\d+\s+0x[0-9a-f]+ in \S", remedy=_NATIVE, component="gdb", versions="all",
    source="gdb backtrace format (stack.c print_frame)",
    fixture="#0  0x00007fff2dd36224 in hwloc_bitmap_and ()")
add("DD1006", "live-stack-dump", C.HANG_STALLED_WORKER, R.CONTEXT,
    ("pstack ", "gdb -p", "gdb --pid", "gdb attach", "py-spy dump"),
    "A stack dumped from a live process (pstack, gdb attached, py-spy dump): what a stuck task was doing", rank=0,
    regex=r"(?:^|\$ |\s)(?:pstack \d+|gdb (?:-p|--pid[= ]|attach) ?\d*|py-spy dump)",
    remedy="The frames show where the live process waits.", component="shell", versions="all",
    source="pstack / gdb / py-spy command lines as a shell echoes them",
    fixture="$ pstack 106165")
# NVML's generic failure inside a container that saw the GPU before: the container lost access to the GPU's device
# nodes (its device cgroup reset, e.g. by a systemd daemon-reload on the host with runc's systemd cgroup driver)
add("DD1007", "nvml-init-unknown-error", C.OTHER, R.CAUSE, ("Failed to initialize NVML: Unknown Error",),
    "NVML cannot reach the GPU: most often the container lost access to the GPU's device nodes", rank=44,
    remedy="Restart the pod (its device access is restored at creation); on the node, avoid `systemctl daemon-reload` "
    "under running GPU pods or use the NVIDIA container toolkit's workaround (device nodes created for runc's "
    "systemd cgroup driver).", component="nvml", versions="all", source="NVML (nvmlInit: NVML_ERROR_UNKNOWN) as nvidia-smi prints it; NVIDIA "
    "container toolkit notice on device cgroups reset by systemd",
    fixture="Failed to initialize NVML: Unknown Error")
# the kernel's OOM kill said in words by whatever watched the process (a container runtime, a supervisor, a scheduler's
# step daemon: "Some of the step tasks have been OOM Killed", "Container was OOM killed by the kernel")
add("DD1513", "oom-killed-in-words", C.OOM_HOST, R.CAUSE, ("oom killed", "oom-killed"),
    "The kernel's OOM killer ended a process (said by what watched it)", ignore_case=True,
    regex=r"(?i)\boom[- ]killed\b", rank=85,
    remedy="The process used more memory than its node or cgroup allows: lower the batch size, buffers and caches, or "
    "give the task more memory; `dmesg` on the node names the process and its usage.",
    component="kernel", versions="all", source="the wording of the kernel's OOM kill by container runtimes (Docker's "
    "\"OOM killed\"), Slurm's slurmstepd (\"Some of the step tasks have been OOM Killed\") and job supervisors",
    fixture="12:22:38  Container was OOM killed by the kernel   (exit 137)")
# a connection to an address no peer can have: an IPv4 netmask (255.255.x.x, as IPv6-mapped "::ffff:255.255.0.0" too)
# or the unspecified address -- the master/coordinator address the launcher was given is a mask or unset (a script
# that parsed ifconfig's "Mask:" column, an empty MASTER_ADDR read as 0.0.0.0), not a network that does not route
add("DD1515", "connect-to-mask-address", C.CONFIG_TF_CONFIG, R.CAUSE, ("255.255.", "0.0.0.0]:", "0.0.0.0:"),
    "A task connects to an address no peer can have (a netmask, the unspecified address)",
    regex=r"(?i)(?:fail(?:ed)? to connect|connect(?:ing)? to|connection to)\s+\[?(?:::ffff:)?"
          r"(?:255\.255\.\d{1,3}\.\d{1,3}|0\.0\.0\.0)\]?:\d+", rank=72,
    remedy="The address the task was told to connect to is a netmask or unset: fix how the launch script finds the "
    "master's address (MASTER_ADDR, the coordinator in TF_CONFIG): a host name or the node's routable IP, not a "
    "field of ifconfig's output that happens to be the mask.",
    component="kernel", versions="all", source="RFC 1122 (0.0.0.0 is no destination); IPv4 netmasks (255.255.0.0 is "
    "no host); c10d socket.cpp's connect warning (\"The client socket has failed to connect to [ADDR]:PORT\")",
    fixture="[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 "
            "(errno: 110 - Connection timed out).")
# a service mesh's sidecar refused the connection: Envoy's RBAC filter (Istio's AuthorizationPolicy) denies traffic
# no ALLOW rule matches -- between a job's pods too, when the mesh injects sidecars into them
add("DD1516", "envoy-rbac-denied", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("rbac_access_denied_matched_policy", "RBAC: access denied", "enforced denied"),
    "A service mesh's sidecar (Envoy's RBAC filter: an Istio AuthorizationPolicy) denied the connection",
    regex=r"rbac_access_denied_matched_policy\[|RBAC: access denied|\brbac\b.*enforced denied", rank=80,
    remedy="The mesh's authorization policy does not allow the job's own traffic between its pods: allow the "
    "training ports (rendezvous, gRPC, NCCL) in an AuthorizationPolicy, or keep the sidecar out of the job's pods "
    "(the annotation sidecar.istio.io/inject: \"false\").", component="envoy", versions="all (RBAC filter)",
    source="envoyproxy/envoy source/extensions/filters/common/rbac/utility.cc (responseDetail: "
    "\"rbac_access_denied_matched_policy[{}]\"), the HTTP filter's 403 body \"RBAC: access denied\" and its debug "
    "log \"enforced denied\"", fixture="rbac_access_denied_matched_policy[none]")
# HDF5 (>= 1.10) locks a file it opens for writing; EAGAIN (errno 11, 35 on macOS) is a lock another process holds:
# several tasks writing one file -- every worker of a job saving the same Keras .h5 checkpoint or weights
add("DD1519", "hdf5-file-locked", C.USER_CODE_ERROR, R.CAUSE, ("unable to lock file",),
    "Another process holds the HDF5 file this task opens for writing (several tasks write one file)",
    regex=r"unable to lock file, errno = (?:11|35)\b", rank=70,
    remedy="Only one process may write an HDF5 file: save from one task (the chief, rank 0) or give each task its own "
    "path (a per-worker temporary directory, as TensorFlow's multi-worker tutorial does for ModelCheckpoint).",
    component="python", versions="HDF5 >= 1.10 (file locking)", source="HDF5 src/H5FDsec2.c (H5FD__sec2_lock: "
    "\"unable to lock file, errno = %d, error message = '%s'\"), as h5py raises it",
    fixture="OSError: Unable to create file (unable to lock file, errno = 11, error message = 'Resource temporarily "
            "unavailable')")
add("DD1525", "stale-file-handle", C.OTHER, R.CAUSE, ("Stale file handle", "Stale NFS file handle"),
    "A file on a shared file system (NFS) changed under this task: its handle is stale (ESTALE)", rank=72,
    remedy="Another node removed or replaced the file this task had open on the shared file system (two nodes "
    "writing one cache or build directory, a job's files cleaned while it ran), or the server lost it: give each node "
    "its own copy (a node-local cache directory: TRITON_CACHE_DIR, TMPDIR, a per-rank build folder), or let one task "
    "write and the others wait.",
    component="kernel", versions="all (NFS clients)", source="Linux errno ESTALE (strerror: \"Stale file handle\", "
    "\"Stale NFS file handle\" in older glibc): NFS's reply NFS3ERR_STALE / NFS4ERR_STALE for a handle the server no "
    "longer knows",
    fixture="ImportError: /home/u/.triton/cache/ab12/__triton_launcher.so: cannot stat shared object: Stale file handle")
# the kernel's own record of a packet a firewall dropped: ufw logs "[UFW BLOCK]", firewalld (LogDenied) its zone's
# "_REJECT:" / "_DROP:" prefix, each with the packet's ports (DPT= the port the job needed)
add("DD1508", "netfilter-logged-drop", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("[UFW BLOCK]", "_REJECT: IN=", "_DROP: IN=", "FINAL_REJECT: "),
    "The node's firewall logged a packet it dropped (ufw, firewalld)", rank=82,
    regex=r"\[UFW BLOCK\]|\b(?:FINAL|filter_\w+?)_(?:REJECT|DROP): (?:IN=|.*\bDPT=\d+)",
    remedy="The node's firewall drops the job's traffic: the logged DPT is the port it needed (a gRPC server, NCCL's or "
    "Gloo's ports, MPI's, a scheduler daemon's). Open the ports the job uses between its nodes (`ufw allow from "
    "<subnet>`, `firewall-cmd --zone=trusted --add-source=<subnet>`), or pin the job's ports to an opened range.",
    component="kernel", versions="all", source="ufw /etc/ufw/before.rules ('--log-prefix \"[UFW BLOCK] \"'); firewalld "
    "LogDenied (zone rules' '--log-prefix \"filter_IN_<zone>_REJECT: \"', 'FINAL_REJECT: '); the kernel's LOG target "
    "(IN= OUT= SRC= DST= ... SPT= DPT=)",
    fixture="hpc-worker-02 kernel: [43351.006693] [UFW BLOCK] IN=eth0 OUT= SRC=10.0.0.5 DST=10.0.0.7 PROTO=TCP SPT=55926 "
            "DPT=6818 WINDOW=64240 RES=0x00 SYN URGP=0")
# SELinux refuses a process's bind or connect on a port its policy does not allow (an MPI library's listener, a
# gRPC server on an unlabelled port): the audit log's AVC denial, or the caller's own EACCES
add("DD1509", "selinux-denied-port", C.FIREWALL_OR_PORT_BLOCKED, R.CAUSE,
    ("avc:  denied", "avc: denied", "bind() failed: Permission denied"),
    "SELinux (or another security policy) refused a port to the job's process", rank=76,
    regex=r"avc:\s+denied\s+\{ (?:name_bind|name_connect)[^}]*\}|create_listen\] bind\(\) failed: Permission "
    r"denied \(13\)",
    remedy="A security policy forbids the process the port (`ausearch -m avc -ts recent`, `sealert -a "
    "/var/log/audit/audit.log`): allow it (`semanage port -a -t <type> -p tcp <port>`, a local policy module from "
    "`audit2allow`), or run the job where the policy allows its ports.",
    component="kernel", versions="all", source="SELinux AVC denial records (audit: 'avc:  denied  { name_bind } for "
    "pid=... comm=... src=PORT'); open-mpi/ompi opal/mca/btl/tcp/btl_tcp_component.c (mca_btl_tcp_component_create_"
    "listen: 'bind() failed: %s (%d)')",
    fixture="type=AVC msg=audit(1580000000.123:456): avc:  denied  { name_bind } for  pid=4242 comm=\"orted\" src=1024 "
            "scontext=system_u:system_r:unconfined_service_t:s0 tclass=tcp_socket permissive=0")
