"""GPUs: NVML / nvidia-smi, CUDA runtime error strings, the NVIDIA driver and XLA's GPU allocator (codes DD975-DD989;
the first CUDA signatures are in system.py).

NVML strings are pynvml's (nvidia-ml-py 13.x, NVMLError._errcode_to_string); CUDA runtime strings are
cudaGetErrorString's (the CUDA runtime API's error names are public); TensorFlow/XLA strings are from the
TF 2.21 wheel (libtensorflow_cc.so.2) and openxla/xla.
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

_NODE = ("A fault of that node's GPU or driver, not of the program: drain the node (or exclude it), reset or replace "
         "the GPU, and restart the job from its last checkpoint.")
_CUDART = "CUDA runtime cudaGetErrorString"

# -- NVML / nvidia-smi -------------------------------------------------------------------------------------------------
add("DD975", "nvml-version-mismatch", C.VERSION_MISMATCH, R.CAUSE,
    ("Driver/library version mismatch", "NVML/RM version mismatch", "NVMLError_LibRmVersionMismatch",
     "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "nvml error: driver/library version mismatch",
     "NVRM: API mismatch: the client has the version"),
    "The node's NVIDIA kernel driver and its user-space library differ (driver updated without a reboot)", rank=85,
    remedy="Reboot the node (or reload the nvidia kernel modules) so the running driver matches the installed "
    "libraries; in containers, mount the host's driver libraries rather than shipping your own.",
    component="nvml", versions="all", source="nvidia-ml-py pynvml.py (NVML_ERROR_LIB_RM_VERSION_MISMATCH) / nvidia-smi; "
    "NVIDIA/libnvidia-container (\"nvml error: %s\", the error string as the container hook prints it); the "
    "kernel module's own words in the kernel log (\"NVRM: API mismatch: the client has the version X, but this kernel "
    "module has the version Y\", dmesg / journalctl)",
    fixture="Failed to initialize NVML: Driver/library version mismatch")
add("DD976", "nvml-driver-not-loaded", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "NVMLError_DriverNotLoaded",
     "NVML Shared Library Not Found", "NVMLError_LibraryNotFound"),
    "No NVIDIA driver is usable on this node (or in this container)", rank=70,
    remedy="That node's driver is not loaded or not mounted into the container: fix the driver (`nvidia-smi` on the "
    "host) or the container runtime (--gpus / the device plugin), or keep the job off the node.",
    component="nvml", versions="all", source="nvidia-ml-py pynvml.py (NVML_ERROR_DRIVER_NOT_LOADED / "
    "LIBRARY_NOT_FOUND) / nvidia-smi",
    fixture="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
            "NVIDIA driver is installed and running.")
# nvidia-smi -q's clock reasons (NVML's nvmlClocksThrottleReasonHwSlowdown, ...HwThermalSlowdown,
# ...HwPowerBrakeSlowdown, ...SwThermalSlowdown): the GPU runs its clocks down because it is too hot or its power is cut
# -- one node like this makes every synchronous step wait for it
add("DD1017", "nvml-clock-slowdown", C.STRAGGLER_SLOW_WORKER, R.CAUSE,
    ("HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown", "SW Thermal Slowdown"),
    "A GPU runs slowed down by the hardware (too hot, or its power brake engaged): its task is slower than the others",
    regex=r"(?:HW (?:Thermal |Power Brake )?Slowdown|SW Thermal Slowdown)\s*:\s*Active\b", rank=55,
    remedy="Cool the node (fans, airflow, inlet temperature) or fix its power supply, or run on other nodes: a "
    "synchronous job goes at the speed of its slowest GPU.",
    component="nvml", versions="driver >= 418 (the split HW reasons); 'Clocks Event Reasons' since 535",
    source="nvidia-smi -q -d PERFORMANCE ('Clocks Throttle Reasons' / 'Clocks Event Reasons', NVML "
           "nvmlDeviceGetCurrentClocksThrottleReasons)",
    fixture="            HW Thermal Slowdown               : Active")
add("DD977", "nvml-gpu-lost", C.OTHER, R.CAUSE, ("GPU is lost", "NVMLError_GpuIsLost", "GPU has fallen off the bus"),
    "A GPU stopped responding to the driver (lost / fallen off the bus)", rank=82, remedy=_NODE,
    component="nvml", versions="all", source="nvidia-ml-py pynvml.py (NVML_ERROR_GPU_IS_LOST) / NVIDIA driver NVRM",
    fixture="Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this "
            "GPU")
add("DD978", "nvml-reset-required", C.OTHER, R.CAUSE, ("GPU requires restart", "NVMLError_ResetRequired"),
    "A GPU needs a reset before it can be used again", rank=75, remedy=_NODE, component="nvml", versions="all",
    source="nvidia-ml-py pynvml.py (NVML_ERROR_RESET_REQUIRED)",
    fixture="pynvml.NVMLError_ResetRequired: GPU requires restart")
add("DD979", "nvml-inforom", C.OTHER, R.CONTEXT, ("Corrupted infoROM", "infoROM is corrupted"),
    "A GPU's infoROM is corrupted (ECC and health data unreliable)", rank=20, remedy=_NODE, component="nvml",
    versions="all", source="nvidia-ml-py pynvml.py (NVML_ERROR_CORRUPTED_INFOROM) / nvidia-smi",
    fixture="WARNING: infoROM is corrupted at gpu 0000:3B:00.0")

# -- CUDA runtime error strings ----------------------------------------------------------------------------------------
add("DD980", "cuda-no-device", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CONTEXT,
    ("no CUDA-capable device is detected", "cudaErrorNoDevice"),
    "The CUDA runtime sees no GPU in this process", rank=40,
    remedy="The process sees no GPU (CUDA_VISIBLE_DEVICES empty or wrong, the container started without --gpus, a "
    "missing device plugin): give every task the GPUs it expects.", component="cuda", versions="all",
    source=_CUDART + " (cudaErrorNoDevice)", fixture="RuntimeError: cudaGetDeviceCount failed: no CUDA-capable device is detected")
add("DD981", "cuda-devices-busy", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("all CUDA-capable devices are busy or unavailable", "cudaErrorDevicesUnavailable", "CUDA_ERROR_DEVICE_UNAVAILABLE"),
    "The GPU is held by another process (exclusive-process compute mode) or unavailable", rank=75,
    remedy="Another process owns the GPU in exclusive mode (a leftover task, a second job on the node): kill it or "
    "give each process its own GPU (CUDA_VISIBLE_DEVICES).", component="cuda", versions="all",
    source=_CUDART + " (cudaErrorDevicesUnavailable)",
    fixture="CUDA error: all CUDA-capable devices are busy or unavailable")
add("DD982", "cuda-illegal-address", C.OTHER, R.CAUSE,
    ("an illegal memory access was encountered", "cudaErrorIllegalAddress"),
    "A GPU kernel accessed invalid memory (the CUDA context is now unusable)", rank=55,
    remedy="A kernel (a custom op, an XLA/cuDNN bug, or bad indices) read out of bounds: run with CUDA_LAUNCH_BLOCKING=1 "
    "to find the op, and check the TF/CUDA/cuDNN versions match; on one node only, suspect its GPU.",
    component="cuda", versions="all", source=_CUDART + " (cudaErrorIllegalAddress)",
    fixture="2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_event.cc:29] Error polling "
            "for event status: failed to query event: an illegal memory access was encountered")
add("DD983", "cuda-ecc", C.OTHER, R.CAUSE, ("uncorrectable ECC error encountered", "CUDA_ERROR_ECC_UNCORRECTABLE",
                                           "cudaErrorECCUncorrectable"),
    "The GPU's memory had an uncorrectable ECC error", rank=82, remedy=_NODE, component="cuda", versions="all",
    source=_CUDART + " (cudaErrorECCUncorrectable)",
    fixture="CUDA error: uncorrectable ECC error encountered")
add("DD984", "cuda-launch-failure", C.OTHER, R.CAUSE, ("unspecified launch failure", "cudaErrorLaunchFailure",
                                                                  "CUDA_ERROR_LAUNCH_FAILED"),
    "A GPU kernel failed (unspecified launch failure)", rank=50,
    remedy="A kernel crashed on the GPU: if it happens on one node only, suspect the GPU (check `nvidia-smi -q` and "
    "Xid messages); otherwise a kernel bug (update drivers / TF).", component="cuda", versions="all",
    source=_CUDART + " (cudaErrorLaunchFailure)",
    fixture="E tensorflow/stream_executor/cuda/cuda_driver.cc:1010] failed to synchronize the stop event: unspecified "
            "launch failure")
add("DD985", "cuda-runtime-oom", C.OOM_GPU, R.CAUSE, ("CUDA error: out of memory", "cudaMalloc failed: out of memory",
                                                     "EigenAllocator for GPU ran out of memory"),
    "The GPU ran out of memory (CUDA runtime wording)", rank=88, ignore_case=True,   # a C++ allocator's own "Cuda error"
    remedy="Lower the per-replica batch size, enable memory growth, and check that no other process holds the GPU "
    "(`nvidia-smi`).", component="cuda", versions="all",
    source=_CUDART + " (cudaErrorMemoryAllocation 'out of memory') / TensorFlow gpu_device.cc EigenAllocator (2.21 wheel)",
    fixture="RuntimeError: CUDA error: out of memory")
add("DD986", "xla-oom", C.OOM_GPU, R.CAUSE, ("Out of memory while trying to allocate",),
    "XLA ran out of GPU memory", rank=88,
    remedy="The compiled program needs more GPU memory than free: lower the batch size, or free memory held by other "
    "processes / TF's own preallocation (memory growth).", component="tensorflow", versions=">=2.4 (XLA/jit_compile)",
    source="openxla/xla xla/service/gpu (buffer allocation: 'Out of memory while trying to allocate %d bytes.')",
    fixture="tensorflow.python.framework.errors_impl.ResourceExhaustedError: Out of memory while trying to allocate "
            "17179869184 bytes.")
add("DD987", "cuda-driver-combination", C.VERSION_MISMATCH, R.CAUSE,
    ("forward compatibility was attempted on non supported HW", "unsupported display driver / cuda driver combination",
     "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorSystemDriverMismatch",
     "no kernel image is available for execution on the device", "CUDA_ERROR_NO_BINARY_FOR_GPU"),
    "The CUDA build in the container does not work with this node's driver or GPU", rank=82,
    remedy="The image's CUDA needs a newer driver than the node has (forward compatibility only works on data-centre "
    "GPUs), or its binaries have no kernels for this GPU's architecture: use an image built for the node's driver "
    "and GPU, or update the driver on every node.",
    component="cuda", versions=">=11.0", source=_CUDART + " (cudaErrorCompatNotSupportedOnDevice / "
    "cudaErrorSystemDriverMismatch / cudaErrorNoKernelImageForDevice)",
    fixture="failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on "
            "non supported HW")
add("DD1474", "cuda-symbol-not-found", C.VERSION_MISMATCH, R.CAUSE,
    ("named symbol not found", "cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND"),
    "A CUDA library looked up a kernel or symbol its loaded binary does not have: built for other GPUs or another CUDA",
    rank=62,
    remedy="The library (NCCL, a framework's kernels) was built without this GPU's architecture, or against another "
    "CUDA than the one loaded: use a build whose architecture list includes the node's GPUs (`nvidia-smi "
    "--query-gpu=compute_cap --format=csv`; NCCL's NVCC_GENCODE, a wheel for that CUDA), the same on every node.",
    component="cuda", versions="all", source=_CUDART + " (cudaErrorSymbolNotFound: \"named symbol not found\"; the "
    "driver API's CUDA_ERROR_NOT_FOUND)",
    fixture="gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'")
add("DD988", "cuda-device-assert", C.USER_CODE_ERROR, R.CAUSE, ("device-side assert triggered", "cudaErrorAssert"),
    "A GPU kernel's assertion failed (usually an index out of range)", rank=60,
    remedy="Usually labels or indices out of range for an embedding/loss: check the input values (run on the CPU for "
    "a readable error).", component="cuda", versions="all", source=_CUDART + " (cudaErrorAssert)",
    fixture="CUDA error: device-side assert triggered")
add("DD989", "cuda-context-lost", C.PEER_CRASHED, R.SYMPTOM,
    ("context is destroyed", "cudaErrorContextIsDestroyed"),
    "A CUDA call failed because the context was destroyed (an earlier GPU error, or shutdown)", rank=15,
    remedy="A consequence: the first GPU error before it is the cause.", component="cuda", versions="all",
    source=_CUDART + " (cudaErrorContextIsDestroyed)",
    fixture="E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:1234] could not synchronize on CUDA context: "
            "context is destroyed")

# -- session 29: allocation failures in words, and the peer-mapping limit ------------------------------------------------
add("DD1480", "gpu-allocation-out-of-memory", C.OOM_GPU, R.CAUSE, ("allocate GPU memory", "allocate device memory"),
    "A GPU allocation failed: the device's memory is exhausted", ignore_case=True, rank=78,
    regex=r"(?:failed to|cannot|could not|unable to) allocate (?:GPU|device) memory\b.*\bout of memory",
    remedy="The GPU's memory is full: lower the per-GPU batch or the model's footprint, free what other models or "
    "processes on that GPU hold (`nvidia-smi`), or set the framework's memory pool limits (a second framework in the "
    "same process pre-allocates too).",
    component="cuda", versions="all", source="CUDA runtime cudaErrorMemoryAllocation ('out of memory') as the "
    "allocating library reports it (Hydrogen/LBANN, CuPy, RMM: \"Failed to allocate GPU memory with message: "
    "\\\"out of memory\\\"\")",
    fixture="Failed to allocate GPU memory with message: \"out of memory\" (536870912 bytes requested, 459145216 bytes "
            "available, 17071734784 bytes total)")
add("DD1485", "cuda-too-many-peers", C.RESOURCE_EXHAUSTION, R.CAUSE, ("TOO_MANY_PEERS", "peer mapping resources exhausted",
                                                                      "cudaErrorTooManyPeers"),
    "A GPU ran out of the hardware resources that map its peers' memory", rank=80,
    remedy="A GPU can enable peer access to a limited number of other GPUs (8 on most parts): map fewer peers per "
    "process (one GPU per process, CUDA_VISIBLE_DEVICES), or let the library fall back to copies through the host "
    "(NCCL_P2P_LEVEL / NCCL_P2P_DISABLE=1).",
    component="cuda", versions="all", source="CUDA driver API cuCtxEnablePeerAccess (CUDA_ERROR_TOO_MANY_PEERS: "
    "\"peer mapping resources exhausted\")",
    fixture="peer access from 0x7f76d46da2c0 to 0x7f76b4713830: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources "
            "exhausted")
add("DD1496", "cuda-check-out-of-memory", C.OOM_GPU, R.CAUSE, ("cudaSuccess (2 vs. 0)",),
    "A CUDA call failed with cudaErrorMemoryAllocation: the GPU's memory is exhausted", rank=80,
    regex=r"cudaSuccess \(2 vs\. 0\)",
    remedy="The GPU ran out of memory: lower the per-GPU batch or the model's footprint, or free what other processes "
    "on that GPU hold (`nvidia-smi`).",
    component="cuda", versions="all", source="CUDA runtime error 2 (cudaErrorMemoryAllocation, \"out of memory\") in a "
    "glog CHECK (Caffe's CUDA_CHECK: \"Check failed: error == cudaSuccess (2 vs. 0)  out of memory\")",
    fixture="F1206 16:55:19.914152  3830 parallel.cpp:85] Check failed: error == cudaSuccess (2 vs. 0)  out of memory")
