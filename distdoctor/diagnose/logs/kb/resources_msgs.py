"""Accelerator and host memory, preemption notices, NVSwitch systems, NCCL's network plugins, Slurm's GRES and Gloo's
interfaces, as each component words them (codes DD1390-DD1439).

Issue 25 item 4: the areas where real logs nobody had read were missed in session 11. Each signature below is one
family of messages, mined from the component's own source (or, where the component is closed, its maintainers'
own reference), and classified by what the component says the message means:

* XLA (openxla/xla): the TPU compiler's and runtime's out-of-memory errors as XLA's own error catalogue documents
  them (docs/errors/error_1000.md E1000 "Compile Time: HBM OOM", error_1001.md E1001 vmem, error_0100.md E0100
  "Runtime: Buffer Allocation Failure", error_0101.md E0101 "Program allocation failure"), the stream executor's
  allocator (xla/stream_executor StreamExecutorMemoryAllocator::Allocate) and the rematerialization pass's warning
  (xla/service/hlo_rematerialization.cc);
* Dask distributed (dask/distributed): the nanny's memory-budget restart (distributed/worker_memory.py, before 2022
  distributed/nanny.py), the worker's pause / unmanaged-memory warnings, the nanny's death message
  (distributed/nanny.py ``_death_message``) and the scheduler's KilledWorker (distributed/scheduler.py);
* systemd-oomd (systemd/systemd src/oom/oomd-manager.c): a unit killed for memory pressure;
* TensorFlow's preemption handling (tensorflow/python/distribute/failure_handling/failure_handling.py,
  failure_handling_util.py): the lines it prints once a preemption was caught (the notice itself is DD619);
* the cloud platforms' spot interruption notices: AWS Node Termination Handler (aws/aws-node-termination-handler
  pkg/monitor/spotitn, pkg/monitor/sqsevent) and Karpenter (aws/karpenter-provider-aws, the SpotInterrupted event);
  the kubelet's graceful node shutdown manager (kubernetes/kubernetes pkg/kubelet/nodeshutdown);
* NVIDIA NVSwitch systems: CUDA's "system not ready" (cuda.h CUDA_ERROR_SYSTEM_NOT_READY = 802, which the Fabric
  Manager user guide names as the error of a node whose Fabric Manager has not initialised the fabric) and the
  NVSwitch driver's SXid errors (NVIDIA/open-gpu-kernel-modules src/common/nvswitch/kernel/inc/common_nvswitch.h
  NVSWITCH_PRINT_SXID);
* NCCL's network plugin loader (NVIDIA/nccl src/net.cc up to 2.26, src/plugin/net.cc and src/plugin/plugin_open.cc
  after): the INFO lines that say it uses its internal transports (benign), a plugin of an unsupported API version
  (context), and a NET named by NCCL_NET that no plugin provides (a cause);
* Slurm's GRES (SchedMD/slurm src/interfaces/gres.c): gres.conf missing, counts that do not match the node's
  configuration (the node is drained), invalid GRES records, a job killed for a GRES type the node lacks;
* Gloo (facebookincubator/gloo gloo/transport/tcp/device.cc) and PyTorch's Gloo process group
  (pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupGloo.cpp): an address or interface it cannot bind, the
  fallback to loopback.
* later additions beside those: PyTorch's out-of-memory errors on HIP (ROCm), MPS and XPU devices
  (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp hipified, aten/src/ATen/mps/MPSAllocator.mm,
  c10/xpu/XPUCachingAllocator.cpp); slurmd without NVML for AutoDetect=nvml (SchedMD/slurm src/interfaces/gpu.c); the
  aws-ofi-nccl network plugin (aws/aws-ofi-nccl src/nccl_ofi_net.cpp, nccl_ofi_rdma.cpp): no usable libfabric
  provider (context), a libfabric too old for EFA (a version mismatch); Compute Engine's preemption operation
  (operationType compute.instances.preempted); EC2's spot interruption notice (instance metadata
  spot/instance-action, the EventBridge warning) and Azure's Scheduled Events (EventType Preempt), as their
  documentation gives them; XLA's CUDA graph instantiation out of memory (xla/stream_executor); joblib/loky's
  TerminatedWorkerError (loky/process_executor.py) and its workers' exit codes.

Already held elsewhere and not repeated here: "Out of memory while trying to allocate" (DD986), the BFC allocator's
warning (DD636), Python's MemoryError (DD863), Ray's memory monitor (DD897), YARN's memory kill (DD830), Slurm's
oom_kill events (DD822, DD960), TensorFlow's termination notice (DD619), Kubernetes' imminent node shutdown (DD840),
Gloo's "Unable to find address for: <iface>" (DD709), NCCL's pre-2.19 "NET/Plugin : ..." lines (DD1014).
Not written: the Fabric Manager's own log lines (its source is not public, so its wording could not be checked).
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

XLA = "openxla/xla "
DASK = "dask/distributed "
TFH = "tensorflow/tensorflow tensorflow/python/distribute/failure_handling/"
NCCLSRC = "NVIDIA/nccl "
GRES = "SchedMD/slurm src/interfaces/gres.c "
_TPU_MEM = ("The program needs more accelerator memory than the device has: lower the per-device batch size or "
            "sequence length, shard parameters and activations over more devices (check the sharding of the largest "
            "buffers), donate input buffers, use bfloat16, or rematerialize (jax.checkpoint).")

# -- XLA: accelerator memory on TPUs (compile time and run time) and through the stream executor ---------------------
add("DD1390", "xla-tpu-compile-hbm-oom", C.OOM_GPU, R.CAUSE,
    ("Ran out of memory in memory space", "exceeding available bytes"),
    "XLA's TPU compiler found that the program does not fit the device's memory (HBM, vmem or another memory space)",
    regex=r"Ran out of memory in memory space \w+|Hbm usage:? \S+, SparseCore Hbm usage:? \S+, exceeding available "
          r"bytes", rank=88, remedy=_TPU_MEM,
    component="tensorflow", versions="all (XLA:TPU, TF and JAX)",
    source=XLA + "docs/errors/error_1000.md (E1000 Compile Time: HBM OOM) / error_1001.md (E1001 vmem)",
    fixture="RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 49.34G of "
            "32.00G hbm. Exceeded hbm capacity by 17.34G.")
add("DD1391", "xla-tpu-buffer-allocation", C.OOM_GPU, R.CAUSE, ("That was not possible.",),
    "The TPU runtime could not allocate a device buffer in HBM (out of memory, or fragmented)",
    regex=r"Attempting to allocate \S+\. That was not possible\. There are \S+ free", rank=86,
    remedy="The device's memory is full when the buffer is allocated: free arrays the program still holds, lower the "
    "batch size, shard parameters over more devices, donate input buffers; tpu_log_allocations_on_oom lists what "
    "holds the memory.",
    component="tensorflow", versions="all (XLA:TPU runtime)",
    source=XLA + "docs/errors/error_0100.md (E0100 Runtime: Buffer Allocation Failure)",
    fixture="ValueError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 8.00M. That was not "
            "possible. There are 6.43M free.; (0x0x1_HBM0)")
add("DD1392", "xla-tpu-program-load", C.OOM_GPU, R.CAUSE, ("That was not possible.",),
    "The TPU runtime could not load a compiled program into HBM (the buffers already there leave no room)",
    regex=r"Attempting to reserve \S+ at the bottom of memory\. That was not possible\.", rank=84,
    remedy="Buffers fill the device's memory, so the program does not fit beside them: free or shard the arrays the "
    "job holds, lower the batch size, load fewer programs at once (fewer distinct jit functions); "
    "tpu_shared_memory_percent lowers the program's temporaries.",
    component="tensorflow", versions="all (XLA:TPU runtime)",
    source=XLA + "docs/errors/error_0101.md (E0101 Program allocation failure)",
    fixture="XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program 'jit_train_step': Attempting to reserve 29.49G "
            "at the bottom of memory. That was not possible. There are 147.64M free, 0B reserved, and 147.64M "
            "reservable.")
add("DD1393", "xla-allocate-request-failed", C.OOM_GPU, R.CAUSE, ("Failed to allocate request for",),
    "XLA's device allocator could not allocate accelerator memory", rank=84,
    # the size as the allocator formats it (HumanReadableNumBytes: "12.50MiB"); the rest of the message may be
    # wrapped onto the next line where a log is pasted
    regex=r"Failed to allocate request for \d[\d.]*[KMGTPE]?i?B\b",
    remedy="The device is out of memory: lower the batch size, stop other processes on the same GPU, and lower XLA's "
    "preallocation (XLA_PYTHON_CLIENT_MEM_FRACTION, TF's memory growth) where two processes share a device.",
    component="tensorflow", versions="all (XLA stream executor)",
    source=XLA + "xla/stream_executor/stream_executor_memory_allocator.cc (StreamExecutorMemoryAllocator::Allocate: "
    "ResourceExhaustedError \"Failed to allocate request for %s (%uB) on device ordinal %d\")",
    fixture="RESOURCE_EXHAUSTED: Failed to allocate request for 2.00GiB (2147483648B) on device ordinal 0")
add("DD1394", "xla-remat-over-limit", C.OOM_GPU, R.CONTEXT, ("by rematerialization; only reduced to",),
    "XLA warns that rematerialization could not bring the program under the device's memory (an OOM usually follows)",
    rank=30,
    remedy="The program needs more device memory than the limit even after rematerialization: if an out-of-memory "
    "error follows, lower the batch size or shard more.",
    component="tensorflow", versions=">=2.4 (XLA)", source=XLA + "xla/service/hlo_rematerialization.cc (LOG(WARNING))",
    fixture="W external/xla/xla/service/hlo_rematerialization.cc:3005] Can't reduce memory use below 41.19GiB "
            "(44223270085 bytes) by rematerialization; only reduced to 48.00GiB (51539607572 bytes), down from "
            "48.00GiB (51539607572 bytes) originally")

# -- host memory: Dask's nanny and workers, systemd-oomd -----------------------------------------------------------------
add("DD1395", "dask-memory-budget-restart", C.OOM_HOST, R.CAUSE, ("memory budget. Restarting",),
    "Dask's nanny restarted a worker that went over its memory limit (95% of the budget by default)", rank=88,
    remedy="The worker needs more memory than its limit: give workers more memory (--memory-limit, fewer workers per "
    "node), use smaller partitions/batches, or find what holds memory outside Dask's managed data.",
    component="dask", versions="all (nanny.py before 2022.02, worker_memory.py after)",
    source=DASK + "distributed/worker_memory.py (NannyMemoryManager: \"Worker %s (pid=%d) exceeded %d%% memory budget. "
    "Restarting...\"); older distributed/nanny.py (\"Worker exceeded %d%% memory budget. Restarting\")",
    fixture="distributed.nanny.memory - WARNING - Worker tcp://10.0.0.5:36941 (pid=4123) exceeded 95% memory budget. "
            "Restarting...")
add("DD1396", "dask-worker-memory-warning", C.OOM_HOST, R.CONTEXT,
    ("Pausing worker.", "Unmanaged memory use is high", "Memory use is high but worker has no data to store to disk"),
    "A Dask worker warns that its memory is high (paused, or memory Dask does not manage)",
    regex=r"Worker is at \d+% memory usage\. Pausing worker|Unmanaged memory use is high|Memory use is high but worker "
          r"has no data to store to disk", rank=30,
    remedy="The worker is near its memory limit: if it is then restarted or killed, give it more memory or use smaller "
    "partitions; unmanaged memory that stays high is a leak or memory not returned to the OS.",
    component="dask", versions="all", source=DASK + "distributed/worker_memory.py (WorkerMemoryManager warnings)",
    fixture="distributed.worker.memory - WARNING - Worker is at 81% memory usage. Pausing worker.  Process memory: "
            "12.96 GiB -- Worker memory limit: 16.00 GiB")
add("DD1397", "dask-nanny-worker-killed", C.PEER_CRASHED, R.CAUSE, ("Worker process ",),
    "Dask's nanny saw its worker process die from a signal (SIGKILL: most often the kernel's OOM killer)",
    regex=r"Worker process \d+ was killed by (?:signal \d+|unknown signal)", rank=45,
    remedy="Something killed the worker: check `dmesg` for the OOM killer (signal 9) and the scheduler's events; the "
    "nanny's own memory restart says 'exceeded ... memory budget' instead.",
    component="dask", versions="all", source=DASK + "distributed/nanny.py (WorkerProcess._death_message)",
    fixture="distributed.nanny - INFO - Worker process 4123 was killed by signal 9")
add("DD1398", "dask-killed-worker", C.PEER_CRASHED, R.CAUSE,
    ("workers died while running it", "workers died while trying to run it"),
    "Dask's scheduler gave up on a task after the workers running it died repeatedly (the cause is in the worker logs)",
    rank=45,
    remedy="Read the logs of the workers that died (memory restarts, signals, segfaults): a task that kills every "
    "worker that runs it usually needs more memory than a worker has.",
    component="dask", versions="all", source=DASK + "distributed/scheduler.py (KilledWorker.__str__; 'Task %s marked "
    "as failed because %d workers died while trying to run it')",
    fixture="distributed.scheduler.KilledWorker: Attempted to run task 'train-3f2a' on 4 different workers, but all "
            "those workers died while running it. The last worker that attempt to run the task was "
            "tcp://10.0.0.7:39211.")
add("DD1399", "systemd-oomd-kill", C.OOM_HOST, R.CAUSE, ("due to memory pressure for",),
    "systemd-oomd killed a unit (a job, a container) because its memory pressure stayed over the limit",
    regex=r"(?:Killed|Marked) \S+ (?:for killing )?due to memory pressure for \S+ being [\d.]+% > [\d.]+%", rank=85,
    remedy="The node ran short of memory: give the task more memory or run fewer tasks per node; systemd-oomd acts "
    "before the kernel's OOM killer, on the unit's ManagedOOMMemoryPressure settings.",
    component="systemd", versions=">=247 (systemd-oomd)", source="systemd/systemd src/oom/oomd-manager.c (log_notice)",
    fixture="systemd-oomd[812]: Killed /system.slice/slurmstepd.scope/job_42/step_0 due to memory pressure for "
            "/system.slice being 92.13% > 80.00% for > 20s with reclaim activity")

# -- preemption: what TF prints once it caught one, the cloud's spot notices, the kubelet's node shutdown -------------
add("DD1400", "tf-preemption-handled", C.PREEMPTION, R.CAUSE,
    ("Termination caught in main thread on preempted worker", "PreemptionCheckpointHandler: checkpoint saved. Exiting",
     "Restarting cluster due to preemption", "Clearing preemption error to save checkpoint",
     "PreemptionCheckpointHandler: Starting saving a checkpoint"),
    "TensorFlow's preemption handler caught a preemption, saves a checkpoint and exits", rank=70,
    remedy="The task was preempted: the job restarts from the checkpoint the handler saved (a restart policy must "
    "bring the task back).",
    component="tensorflow", versions=">=2.8", source=TFH + "failure_handling.py (PreemptionCheckpointHandler) / "
    "failure_handling_util.py",
    fixture="INFO:tensorflow:Termination caught in main thread on preempted worker")
add("DD1401", "aws-nth-spot-interruption", C.PREEMPTION, R.CAUSE, ("Spot ITN received.",),
    "AWS Node Termination Handler received the spot instance's interruption notice and drains the node", rank=80,
    remedy="The spot instance is reclaimed (two minutes' notice): checkpoint often and restart from the last checkpoint, "
    "or run the job's pods on on-demand capacity.",
    component="cloud-platform", versions="all (aws-node-termination-handler)",
    source="aws/aws-node-termination-handler pkg/monitor/spotitn (IMDS) / pkg/monitor/sqsevent (queue mode)",
    fixture="Node successfully cordoned and drained node_name=ip-10-0-3-41.ec2.internal reason=\"Spot ITN received. "
            "Instance will be interrupted at 2025-05-16T08:31:24Z \\n\"")
add("DD1402", "karpenter-spot-interrupted", C.PREEMPTION, R.CAUSE,
    ("Spot interruption warning was triggered", "spot interruption warning was triggered for the node"),
    "Karpenter received a spot interruption warning for the node", rank=78,
    remedy="The spot node is reclaimed: restart from the last checkpoint, or put the training pods on on-demand "
    "capacity (karpenter.sh/capacity-type: on-demand).",
    component="cloud-platform", versions="all (Karpenter)",
    source="aws/karpenter-provider-aws pkg/controllers/interruption (SpotInterrupted event)",
    fixture="49m  Warning  SpotInterrupted  node/ip-10-1-3-41.ec2.internal  Spot interruption warning was triggered")
add("DD1403", "kubelet-node-shutdown", C.PREEMPTION, R.CAUSE,
    ("Shutdown manager detected", "Shutdown manager completed processing shutdown event"),
    "The kubelet saw the node begin to shut down and stops its pods (graceful node shutdown)",
    regex=r"Shutdown manager (?:detected shutdown event|completed processing shutdown event|detected new shutdown "
          r"event(?:, isNodeShuttingDownNow\"? (?:event=true|: ?true)|\"? event=\"shutdown\"))", rank=72,
    remedy="The node shut down under the pods (a spot/preemptible reclaim, maintenance, a power-off): restart from the "
    "last checkpoint; a 'cancelled' event means the shutdown did not happen.",
    component="kubernetes", versions=">=1.21 (GracefulNodeShutdown)",
    source="kubernetes/kubernetes pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go",
    fixture="I0909 17:45:37.860271     973 nodeshutdown_manager_linux.go:262] \"Shutdown manager detected new shutdown "
            "event, isNodeShuttingDownNow\" event=true")

# -- NVIDIA NVSwitch systems: fabric not initialised, NVSwitch errors ---------------------------------------------------
add("DD1404", "cuda-system-not-ready", C.OTHER, R.CAUSE,
    ("CUDA_ERROR_SYSTEM_NOT_READY", "cudaErrorSystemNotReady", "system not yet initialized"),
    "CUDA refuses to start: the system is not ready (on NVSwitch systems the Fabric Manager has not initialised the "
    "fabric)", rank=80,
    remedy="Start nvidia-fabricmanager on the node (`systemctl status nvidia-fabricmanager`), installed at exactly the "
    "driver's version; until it has initialised the NVSwitch fabric, CUDA fails on every GPU of the node.",
    component="cuda", versions=">=10.0", source="CUDA cuda.h / driver_types.h (CUDA_ERROR_SYSTEM_NOT_READY = 802: 'the "
    "system is not yet ready to start any CUDA work ... all required driver daemons are actively running')",
    fixture="E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: "
            "CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized")
add("DD1405", "nvswitch-sxid-fatal", C.OTHER, R.CAUSE, ("SXid (PCI:",),
    "The NVSwitch driver reported a fatal NVSwitch error (SXid): NVLink traffic through that switch fails",
    regex=r"SXid \(PCI:[^)]*\): \d+, Fatal", rank=78,
    remedy="A fatal NVSwitch error stops NVLink traffic on the node: drain it, reset the GPUs and switches (or reboot) "
    "and report persistent SXids to the vendor; restart the job from its checkpoint on healthy nodes.",
    component="nvidia-driver", versions="all (NVSwitch systems)",
    source="NVIDIA/open-gpu-kernel-modules src/common/nvswitch/kernel/inc/common_nvswitch.h (NVSWITCH_PRINT_SXID: "
    "\"nvidia-%s: SXid (PCI:...): %05d, \" + \"Fatal, ...\")",
    fixture="kernel: nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 30 sourcetrack timeout error")
add("DD1406", "nvswitch-sxid-nonfatal", C.OTHER, R.CONTEXT, ("SXid (PCI:",),
    "The NVSwitch driver reported a non-fatal NVSwitch error (SXid)", regex=r"SXid \(PCI:[^)]*\): \d+, Non-fatal",
    rank=20,
    remedy="Non-fatal NVSwitch errors are corrected; many of them on one link point at a failing link.",
    component="nvidia-driver", versions="all (NVSwitch systems)",
    source="NVIDIA/open-gpu-kernel-modules src/common/nvswitch/kernel/inc/common_nvswitch.h (NVSWITCH_PRINT_SXID)",
    fixture="kernel: nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate")

# -- NCCL's network plugin loader (2.19 and later wording) --------------------------------------------------------------
add("DD1407", "nccl-net-plugin-internal", C.OTHER, R.BENIGN,
    ("NET/Plugin: Could not find:", "NET/Plugin: Using internal network plugin", "NET/Plugin: No plugin found (",
     "NET/Plugin: Plugin load returned", "NET/Plugin: Most recent plugin load returned"),
    "NCCL found no external network plugin and uses its internal transports (harmless)", rank=0,
    remedy="Nothing to do: NCCL uses its built-in IB/socket transports. Install a plugin (aws-ofi-nccl, ...) only if "
    "the fabric needs one.",
    component="nccl", versions=">=2.19", source=NCCLSRC + "src/net.cc (2.19-2.26: 'NET/Plugin: Could not find:%s. "
    "Using internal network plugin.', 'NET/Plugin: Plugin load returned %d : %s when loading %s') / "
    "src/plugin/plugin_open.cc (2.27+: '%s/Plugin: Could not find:%s'), INFO(NCCL_INIT|NCCL_NET)",
    fixture="node1:2201:2260 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.")
add("DD1408", "nccl-net-plugin-unsupported", C.VERSION_MISMATCH, R.CONTEXT,
    ("External network plugin", "ncclNetPlugin symbols v4 and lower are not supported"),
    "NCCL found a network plugin of an API version it does not support and falls back to its internal transports",
    regex=r"External network plugin \S+ is unsupported|Failed to find ncclNetPlugin symbol \(>= v5\)", rank=30,
    remedy="The installed network plugin (aws-ofi-nccl, the IB SHARP plugin, ...) is older than this NCCL accepts: "
    "install the plugin release made for this NCCL, or NCCL falls back to its slower built-in transports.",
    component="nccl", versions=">=2.19", source=NCCLSRC + "src/plugin/net.cc (ncclNetPluginLoad) / src/net.cc (2.19-2.26)",
    fixture="node1:2201:2260 [0] NCCL INFO External network plugin /opt/amazon/ofi-nccl/lib/libnccl-net.so is "
            "unsupported")
add("DD1409", "nccl-net-not-found", C.OTHER, R.CAUSE, ("Error: network ", "Failed to initialize any NET plugin"),
    "NCCL cannot use the network it was told to (NCCL_NET names a transport no plugin on this node provides)",
    regex=r"NCCL WARN (?:Error: network .+ not found\.|Failed to initialize any NET plugin)", rank=74,
    remedy="NCCL_NET names a network (\"AWS Libfabric\", \"IB\", ...) whose plugin or hardware this node lacks: install "
    "the plugin on every node (on LD_LIBRARY_PATH, or NCCL_NET_PLUGIN), or unset NCCL_NET.",
    component="nccl", versions=">=2.12", source=NCCLSRC + "src/net.cc (ncclNetInit: WARN \"Error: network %s not "
    "found.\") / src/plugin/net.cc (2.27+: \"Failed to initialize any NET plugin\")",
    fixture="node1:2201:2260 [0] NCCL WARN Error: network AWS Libfabric not found.")

# -- Slurm: the node's GRES configuration ---------------------------------------------------------------------------------
add("DD1410", "slurm-gres-conf-missing", C.OTHER, R.CAUSE, ("can't stat gres.conf file", "Waiting for gres.conf file"),
    "slurmd cannot read gres.conf, so the node's GPUs (GRES) are not configured", rank=72,
    remedy="Install gres.conf (beside slurm.conf, or in the configless setup on the controller) on the node and restart "
    "slurmd; until then jobs asking for GPUs cannot run on it.",
    component="slurm", versions="all", source=GRES + "(_my_stat: fatal \"can't stat gres.conf file %s: %m\")",
    fixture="slurmd: fatal: can't stat gres.conf file /etc/slurm/gres.conf: No such file or directory")
add("DD1411", "slurm-gres-count-mismatch", C.OTHER, R.CAUSE,
    (" count reported lower than configured", " count too low (", "count changed and jobs are using them"),
    "The node has fewer GPUs (GRES) than slurm.conf says, so Slurm drains it", rank=72,
    regex=r"\S+ count (?:reported lower than configured|too low|changed and jobs are using them) \(\d+ (?:<|!=) \d+\)",
    remedy="A GPU is missing or not seen on the node (failed, hidden, driver not loaded) or slurm.conf/gres.conf "
    "count more: fix the node or the configuration, then `scontrol update nodename=... state=resume`.",
    component="slurm", versions="all", source=GRES + "(_node_config_validate / _valid_gres_types: the "
    "node's drain reason)",
    fixture="Reason=gres/gpu count reported lower than configured (3 < 4) [slurm@2024-05-02T10:11:12]")
add("DD1412", "slurm-gres-invalid-record", C.OTHER, R.CAUSE,
    ("Invalid GRES record", "Invalid GRES data for", "Invalid GRES configured on node",
     "is not a valid character or block device, fix your gres.conf", "can't parse gres.conf file record",
     "has mismatching Cores or Links from the device found on the system",
     "Discarding the following config-only GPU due to lack of File specification"),
    "Slurm refuses a GRES line of gres.conf or slurm.conf (the node's GPU configuration is invalid)", rank=70,
    remedy="Correct the GRES line it names (Name/Type/File/Count/Cores must agree with each other and with the node) in "
    "gres.conf / slurm.conf and restart slurmd.",
    component="slurm", versions="all", source=GRES + "(_parse_gres_config: fatal \"Invalid GRES record "
    "for %s, ...\", error \"Invalid GRES data for %s\"; gres_name_filter: \"Invalid GRES configured on node %s\"; "
    "\"%s is not a valid character or block device, fix your gres.conf\"); src/plugins/gres/gpu/gres_gpu.c (a GPU of "
    "gres.conf that the system's does not match, or without File=)",
    fixture="slurmd: fatal: Invalid GRES record for gpu, count does not match File value")
add("DD1413", "slurm-gres-type-missing", C.OTHER, R.CAUSE, ("Killing job",),
    "Slurm killed the job because the node lacks the GRES type it was given", rank=72,
    regex=r"Killing job \d+: gres/\S+ type \S+ not found on node", remedy="The node's gres.conf lacks the GPU type "
    "(gres/gpu:a100 ...) the job requested or slurm.conf promises: make gres.conf and slurm.conf name the same types.",
    component="slurm", versions="all", source=GRES + "(_find_invalid_job_gres_on_node: \"%s: Killing job %u: gres/%s "
    "type %s not found on node %s\")",
    fixture="error: _find_invalid_job_gres_on_node: Killing job 812345: gres/gpu type a100 not found on node gpu-07")

# -- Gloo: the address and interface it binds ------------------------------------------------------------------------------
add("DD1414", "gloo-hostname-bind-failed", C.NETWORK_UNREACHABLE, R.CAUSE, ("; bind(2) for ",),
    "Gloo cannot bind the address this host's name resolves to (the name resolves to an address of another host)",
    regex=r"Unable to find address for \S+; bind\(2\) for \S+ failed with: ", rank=70,
    remedy="The host name resolves to an address this node does not have (/etc/hosts, DNS): fix name resolution, or "
    "set GLOO_SOCKET_IFNAME to the interface the nodes share.",
    component="gloo", versions="all", source="facebookincubator/gloo gloo/transport/tcp/device.cc (lookupAddrForHostname)",
    fixture="RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:120] bind_rv == 0. Unable "
            "to find address for node-3; bind(2) for 10.0.0.7 failed with: Cannot assign requested address")
add("DD1415", "gloo-no-interface-for-address", C.NETWORK_UNREACHABLE, R.CAUSE, ("Unable to find interface for: ",),
    "Gloo cannot find the network interface that holds the address it was given", rank=66,
    remedy="The address Gloo binds is on no interface of this node: set GLOO_SOCKET_IFNAME to an interface every node "
    "has, or fix the host name's resolution.",
    component="gloo", versions="all", source="facebookincubator/gloo gloo/transport/tcp/device.cc "
    "(sockaddrToInterfaceName)",
    fixture="RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:230] ifa != nullptr. "
            "Unable to find interface for: [10.0.0.7]:0")
add("DD1416", "torch-gloo-loopback-fallback", C.NETWORK_UNREACHABLE, R.CONTEXT,
    ("Using the loopback address as fallback",),
    "PyTorch's Gloo backend binds the loopback address because the host name does not resolve (other hosts cannot "
    "connect)", rank=35,
    remedy="Harmless on one node; across nodes the peers cannot reach a loopback address: set GLOO_SOCKET_IFNAME to "
    "the interface the nodes share, or make the host name resolve to that interface's address.",
    component="pytorch", versions=">=1.4", source="pytorch/pytorch torch/csrc/distributed/c10d/"
    "ProcessGroupGloo.cpp (createDefaultDevice, TORCH_WARN_ONCE)",
    fixture="[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
            "address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. "
            "(function operator())")

# -- later additions beside the families above ------------------------------------------------------------------------
add("DD1417", "torch-non-cuda-device-oom", C.OOM_GPU, R.CAUSE,
    ("HIP out of memory", "hipErrorOutOfMemory", "MPS backend out of memory", "XPU out of memory"),
    "PyTorch (or TF on ROCm) ran out of accelerator memory on an AMD (HIP), Apple (MPS) or Intel (XPU) device",
    rank=88,
    remedy="Lower the per-device batch size, free cached memory held by other processes on the device "
    "(`rocm-smi`), and run one process per device.",
    component="pytorch", versions="all (ROCm, MPS and XPU builds)",
    source="pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (hipified for ROCm: 'HIP out of memory. Tried to "
    "allocate'), aten/src/ATen/mps/MPSAllocator.mm, c10/xpu/XPUCachingAllocator.cpp; HIP hipErrorOutOfMemory",
    fixture="torch.OutOfMemoryError: HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of "
            "63.98 GiB of which 630.00 MiB is free.")
add("DD1533", "tf-rocm-device-alloc-failed", C.OOM_GPU, R.CAUSE,
    ("hipError_t(1002)", "hipErrorMemoryAllocation"),
    "TensorFlow's ROCm build could not allocate GPU memory (HIP's memory-allocation error)", rank=88,
    regex=r"failed to allocate .*hipError_t\(1002\)|hipErrorMemoryAllocation",
    remedy="Check that no other process holds the GPU (`rocm-smi --showpids`), then lower the per-replica batch size or "
    "enable memory growth (`tf.config.experimental.set_memory_growth`).",
    component="tensorflow", versions="ROCm builds (tensorflow-rocm)",
    source="tensorflow stream_executor/rocm/rocm_driver.cc ('failed to allocate %s (%llu bytes) from device: ' with "
    "the hipError_t); HIP hip_runtime_api.h: hipErrorMemoryAllocation = 1002 (the runtime codes from 1001 up)",
    fixture="E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G (7889485824 bytes) from "
            "device: hipError_t(1002)")
add("DD1418", "slurm-nvml-not-found", C.OTHER, R.CAUSE,
    ("We were configured with nvml functionality, but that lib wasn't found",
     "We were configured to autodetect nvml functionality, but we weren't able to find that lib"),
    "slurmd cannot load NVML, so AutoDetect=nvml finds no GPUs on the node (GRES counts then fall short)", rank=62,
    remedy="Install the NVIDIA driver's libnvidia-ml.so on the node (or build Slurm with NVML), or list the GPUs in "
    "gres.conf without AutoDetect=nvml.",
    component="slurm", versions=">=19.05 (AutoDetect=nvml)",
    source="SchedMD/slurm src/interfaces/gpu.c (_get_gpu_type)",
    fixture="slurmd: We were configured with nvml functionality, but that lib wasn't found on the system. Attempted "
            "loading libnvidia-ml.so and libnvidia-ml.so.1 without success. Last error is: libnvidia-ml.so.1: cannot "
            "open shared object file: No such file or directory")
add("DD1419", "ofi-plugin-init-failed", C.OTHER, R.CONTEXT,
    ("NET/OFI Unable to find a protocol that worked", "NET/OFI OFI fi_getinfo() call failed",
     "NET/OFI Couldn't open a fabric provider"),
    "The aws-ofi-nccl network plugin found no usable libfabric provider (no EFA device in the node or container) and "
    "fails its initialisation", rank=35,
    remedy="The node or container lacks the fabric the plugin needs (EFA device not passed in, libfabric without the "
    "provider, FI_PROVIDER naming another one): expose the device and libfabric, or NCCL falls back to sockets (slow) "
    "or fails where NCCL_NET requires the plugin.",
    component="nccl", versions="all (aws-ofi-nccl)",
    source="aws/aws-ofi-nccl src/nccl_ofi_net.cpp / src/nccl_ofi_rdma.cpp / src/nccl_ofi_sendrecv.cpp (NCCL_OFI_WARN, "
    "\"NET/OFI \" prefix from include/nccl_ofi_log.h)",
    fixture="ip-10-0-3-4:901:990 [0] nccl_net_ofi_create_plugin:334 NCCL WARN NET/OFI Unable to find a protocol that "
            "worked.  Failing initialization.")
add("DD1420", "ofi-libfabric-too-old", C.VERSION_MISMATCH, R.CAUSE,
    ("EFA provider requires at least libfabric version",),
    "The aws-ofi-nccl plugin refuses the EFA provider: the libfabric in the node or image is older than it needs",
    rank=76,
    remedy="Install the libfabric (EFA installer) release the plugin needs on every node and in the image, or use "
    "the aws-ofi-nccl release built for the installed libfabric.",
    component="nccl", versions="all (aws-ofi-nccl)",
    source="aws/aws-ofi-nccl src/nccl_ofi_net.cpp (nccl_net_ofi_query_provider_capabilities)",
    fixture="ip-10-0-3-4:901:990 [0] nccl_net_ofi_query_provider_capabilities:651 NCCL WARN NET/OFI EFA provider "
            "requires at least libfabric version 1.22.0.")
add("DD1421", "gce-instance-preempted", C.PREEMPTION, R.CAUSE, ("compute.instances.preempted",),
    "Compute Engine preempted the VM (a preemptible or Spot instance reclaimed)",
    regex=r"(?<![=\"])compute\.instances\.preempted", rank=80,
    remedy="The VM was reclaimed: restart from the last checkpoint (TF's PreemptionCheckpointHandler saves one on "
    "GCE's notice), or use standard VMs for the tasks that must not stop.",
    component="cloud-platform", versions="all (Compute Engine)",
    source="Compute Engine API zone operations (operationType compute.instances.preempted, as Google's sample "
    "cloud.google.com/compute/docs/samples/compute-preemptible-history lists them)",
    fixture="systemevent-1718016004211-61a9c3e8b3d5e-2a4c9f0e-0c1b7f6a  compute.instances.preempted  "
            "us-central1-a/instances/trainer-worker-3  200  DONE  2024-06-10T03:40:04.211-07:00")
add("DD1422", "aws-spot-interruption-notice", C.PREEMPTION, R.CAUSE,
    ("EC2 Spot Instance Interruption Warning", '"action"'),
    "EC2 gave the spot instance its two-minute interruption notice (instance metadata or EventBridge)",
    regex=r'EC2 Spot Instance Interruption Warning|"action"\s*:\s*"(?:terminate|stop|hibernate)"\s*,\s*"time"\s*:',
    rank=78,
    remedy="The spot instance is reclaimed: checkpoint on the notice and restart from the last checkpoint, or run the "
    "tasks that must not stop on on-demand instances.",
    component="cloud-platform", versions="all (EC2 Spot)",
    source="docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html (instance metadata "
    "spot/instance-action; EventBridge detail-type 'EC2 Spot Instance Interruption Warning')",
    fixture='{"action": "terminate", "time": "2024-03-02T08:22:00Z"}')
add("DD1423", "azure-scheduled-event-preempt", C.PREEMPTION, R.CAUSE,
    ('"EventType"', "will change into status 'Preempt'"),
    "Azure's Scheduled Events announce the Spot VM's eviction (EventType Preempt)",
    regex=r"\"EventType\"\s*:\s*\"Preempt\"|will change into status 'Preempt'", rank=78,
    remedy="The Spot VM is evicted (about 30 seconds' notice): restart from the last checkpoint, or use regular VMs "
    "for the tasks that must not stop.",
    component="cloud-platform", versions="all (Azure Spot VMs)",
    source="learn.microsoft.com/azure/virtual-machines/linux/scheduled-events (Azure Metadata Service, EventType "
    "Preempt); fridayy/aks-node-termination-handler (the node event it writes)",
    fixture='{"DocumentIncarnation": 3, "Events": [{"EventId": "1B6A3C2E-7F0D-4C3B-9A51-2C1E0D6F8A91", '
            '"EventType": "Preempt", "ResourceType": "VirtualMachine", "Resources": ["trainer-vm-2"], '
            '"EventStatus": "Scheduled", "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT"}]}')
add("DD1424", "xla-cuda-graph-oom", C.OOM_GPU, R.CAUSE, ("ran out of memory trying to instantiate CUDA graph",),
    "XLA's CUDA graph could not be instantiated: the CUDA driver ran out of GPU memory", rank=86,
    remedy="Leave the CUDA driver more GPU memory (lower XLA_PYTHON_CLIENT_MEM_FRACTION / XLA_CLIENT_MEM_FRACTION) or "
    "disable CUDA graphs (XLA_FLAGS=--xla_gpu_enable_command_buffer=).",
    component="tensorflow", versions=">=2.15 (XLA GPU command buffers)",
    source=XLA + "xla/stream_executor/cuda (GpuCommandBuffer / CudaCommandBuffer instantiate: ResourceExhaustedError "
    "\"CUDA driver ran out of memory trying to instantiate CUDA graph with %d nodes ...\")",
    fixture="RESOURCE_EXHAUSTED: CUDA driver ran out of memory trying to instantiate CUDA graph with 412 nodes and 0 "
            "conditionals (total of 37 alive CUDA graphs in the process). You can try to (a) Give more memory to CUDA "
            "driver by reducing XLA_PYTHON_CLIENT_MEM_FRACTION (b) Disable CUDA graph with "
            "'XLA_FLAGS=--xla_gpu_enable_command_buffer=' (empty set). Original error: CUDA_ERROR_OUT_OF_MEMORY: out "
            "of memory")
_LOKY = "joblib/loky loky/process_executor.py (TerminatedWorkerError; vendored as joblib.externals.loky)"
add("DD1425", "loky-worker-sigkill", C.OOM_HOST, R.CAUSE, ("The exit codes of the workers are {",),
    "joblib/loky's worker processes were killed with SIGKILL: loky names excessive memory use as the usual reason",
    regex=r"The exit codes of the workers are \{[^}]*SIGKILL\(-9\)", rank=62,
    remedy="The workers were killed from outside, most often by the OOM killer: use fewer parallel jobs (n_jobs), "
    "smaller chunks, or more memory for the task; `dmesg` shows the OOM killer's lines.",
    component="python", versions="all (joblib >= 0.12)", source=_LOKY,
    fixture="The exit codes of the workers are {SIGKILL(-9), SIGKILL(-9)}")
add("DD1426", "loky-worker-terminated", C.PEER_CRASHED, R.CAUSE,
    ("A worker process managed by the executor was unexpectedly terminated",),
    "A joblib/loky worker process died while running a task (a segfault, or killed for memory)", rank=45,
    remedy="Read the worker's exit code on the next line (SIGKILL: memory, SIGSEGV: a native crash) and the "
    "workers' tracebacks on stderr.",
    component="python", versions="all (joblib >= 0.12)", source=_LOKY,
    fixture="joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor "
            "was unexpectedly terminated. This could be caused by a segmentation fault while calling the function or "
            "by an excessive memory usage causing the Operating System to kill the worker.")
add("DD1468", "acpi-power-key", C.PREEMPTION, R.CAUSE, ("Power key pressed",),
    "The VM's ACPI power button was pressed: a cloud provider stopping or preempting the VM (or a person stopping it)",
    regex=r"\bPower key pressed\b", rank=60,
    remedy="The VM was shut down from outside: on a preemptible or Spot VM that is its reclaim (Compute Engine sends "
    "an ACPI soft-off as its preemption notice); restart from the last checkpoint, or run the tasks that must not "
    "stop on standard VMs. Otherwise the instance's audit log says who stopped it.",
    component="systemd", versions="all",
    source="systemd src/login/logind-button.c (\"Power key pressed.\"); Compute Engine's preemption notice is an ACPI "
    "G2 soft-off (cloud.google.com/compute/docs/instances/preemptible)",
    fixture="Jan 30 10:33:08Z vm-1 systemd-logind Power key pressed.")
add("DD1469", "preempted-in-words", C.PREEMPTION, R.CAUSE, ("preempted", "pre-empted"),
    "A launcher or platform says in words that the job, its node or its cluster was preempted",
    # a statement, not a condition or a list of possibilities ("checking whether the job was preempted", "if a node is
    # preempted, ...", TF's "Either the leader task was preempted/died/restarted unexpectedly")
    # (the condition must come before the statement: "... got pre-empted. Check if the run has failed" states it)
    regex=r"^(?:(?!\b(?:whether|if|when|unless|in case|either)\b).)*?\b(?:job|cluster|node|instance|vm|worker|pod|task|"
    r"host|machine)s? (?:is|was|were|has been|have been|got) (?:being )?pre-?empted\b(?!/)", ignore_case=True, rank=85,
    remedy="The job's resources were reclaimed (a spot or preemptible cluster, a higher-priority job): resume from the "
    "last checkpoint (on storage that outlives the node), or run on capacity that is not preempted.",
    component="any", versions="all",
    source="the plain wording of launchers and platforms: SkyPilot's managed-job controller (sky/spot/controller.py, "
    "\"The cluster is preempted.\"), submitit's signal handler (\"this job is preempted\"), Ray's \"the actor's node "
    "was preempted\"",
    fixture="(bert-qa pid=920210) I 05-04 00:52:46 controller.py:100] The cluster is preempted.")
add("DD1482", "htcondor-memory-hold", C.OOM_HOST, R.CAUSE, ("due to memory usage", "gone over memory limit of"),
    "HTCondor held the job for using more memory than it requested", ignore_case=True, rank=82,
    regex=r"SYSTEM_PERIODIC_HOLD due to memory usage|job has gone over memory limit of",
    remedy="The job used more host memory than its request_memory: request more (request_memory in the submit file) "
    "or lower the job's footprint, then release it (condor_release).",
    component="htcondor", versions="all", source="HTCondor's hold reasons (the pool's SYSTEM_PERIODIC_HOLD on "
    "MemoryUsage, the Docker universe's memory limit)",
    fixture="Hold reason: Error from slot1_7@gpulab2002.chtc.wisc.edu: Docker job has gone over memory limit of 1024 Mb")
