"""Version, implementation and platform mismatches, as each component detects them (codes DD1350-DD1389, DD1460).

Issue 25 item 4: ``version_mismatch`` is the category read worst on real logs (a task with another TensorFlow, Python,
MPI or library build fails, and the log reads as a crashed peer or a user error). Each signature below is one family
of messages a component prints when it itself detects the mismatch, mined from that component's own source:

* Ray (ray-project/ray): the driver/worker check against the cluster's versions
  (python/ray/_private/worker.py / utils.py ``check_version_info``) and Ray Client's ``_check_versions``
  (python/ray/util/client/worker.py);
* Horovod's runner (horovod/horovod horovod/runner/mpi_run.py ``_get_mpi_implementation``): no MPI, or an MPI
  implementation horovodrun does not know;
* MPICH's and Intel MPI's Hydra (pmodels/mpich src/pm/hydra utils/args/args.c ``match_arg``) refusing an option of
  another MPI's mpirun, and Open MPI's command-line parser (open-mpi/ompi opal/util/cmd_line.c) refusing one of
  Hydra's;
* TensorFlow (tensorflow/tensorflow): graph version skew (core/framework/versions.cc ``CheckVersions``,
  node_def_util.cc ``ValidateNodeDef``), a CPU without the instructions the wheel was built for
  (core/platform/cpu_feature_guard.cc), a GPU below the build's minimum compute capability
  (common_runtime/gpu/gpu_device.cc), TensorRT linked vs loaded (python/compiler/tensorrt/trt_convert.py), XLA's
  driver-older-than-ptxas warning (xla/service/gpu/nvptx_compiler.cc), and the TF ecosystem's own checks
  (tensorflow/probability ``_ensure_tf_install``, tensorflow/datasets, tensorflow/gan; tensorflow/addons
  resource_loader.py and its copies in KerasCV and TFRA);
* CUDA (cuda.h / driver_types.h): PTX built by a newer toolchain than the driver;
* the dynamic loader (glibc elf/dl-version.c, elf/dl-load.c, elf/dl-lookup.c, sysdeps/unix/sysv/linux/dl-osinfo.h):
  a symbol version the node's libraries lack, a library of the other word size, a versioned CUDA/MPI library
  (libcudart.so.N, libmpi.so.N) the node lacks, a C++ symbol of another build, a kernel older than the image's glibc;
* CPython (python/cpython Python/importdl.c, Lib/importlib/_bootstrap_external.py, Python/marshal.c,
  Python/modsupport.c), pybind11 (include/pybind11/detail/common.h ``PYBIND11_CHECK_PYTHON_VERSION``), Cython
  (Cython/Utility/ImportExport.c, ModuleSetupCode.c): extensions and byte code of another Python;
* NumPy (numpy/numpy numpy/_core/code_generators/generate_numpy_api.py ``_import_array``): extensions built
  against another NumPy C API/ABI;
* Protocol Buffers (protocolbuffers/protobuf python/google/protobuf/runtime_version.py, descriptor.py,
  src/google/protobuf/stubs/common.cc ``VerifyVersion``): generated code and runtime of different releases;
* Keras 3 (keras-team/keras keras/src/saving/saving_api.py, keras/src/backend/common/keras_tensor.py): artefacts and
  API use of Keras 2 / tf.keras;
* container runtimes (docker/cli cli/command/container/create.go, containerd/containerd images/image.go, moby
  distribution/pull_v2.go): an image built for another CPU architecture;
* Slurm (SchedMD/slurm src/common/slurm_errno.c): commands and daemons of different releases;
* pip (pypa/pip): a package, wheel or pin that does not fit the task's Python or platform, pins that conflict;
* kubectl (kubernetes/kubectl pkg/cmd/version/version.go): a client too far from the API server (a warning).

Already held elsewhere and not repeated here: NCCL's own version checks (DD714, DD931-DD933), Horovod's
framework-version check (DD723), horovodrun without MPI (DD912) and extensions not built (DD749), Open MPI's PMIx/ORTE checks (DD1300-DD1308),
runc's "exec format error" (DD877), cuDNN (DD763), TF ops not registered / attrs unknown (DD695, DD696).
"""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

VM = C.VERSION_MISMATCH
RAY = "ray-project/ray "
TF = "tensorflow/tensorflow "
CPY = "python/cpython "
GLIBC = "glibc (sourceware.org/git/glibc) "
PB = "protocolbuffers/protobuf "

# -- Ray: driver, workers and clients against the cluster's versions ----------------------------------------------------
add("DD1350", "ray-cluster-version-mismatch", VM, R.CAUSE, ("Version mismatch: The cluster was started with",),
    "This Ray process runs another Ray or Python version than the cluster it joins", rank=82,
    remedy="Run the same Ray and Python (major.minor, by default also the patch level) on the head, every worker node "
    "and the driver: the same container image or environment everywhere.",
    component="ray", versions="all", source=RAY + "python/ray/_private/utils.py / worker.py (check_version_info)",
    fixture="RuntimeError: Version mismatch: The cluster was started with:")
add("DD1351", "ray-client-version-mismatch", VM, R.CAUSE,
    ("Python minor versions differ between client and server", "Client Ray installation incompatible with server"),
    "The Ray Client's Python or Ray protocol differs from the cluster's", rank=80,
    remedy="Use on the client machine the Python minor version and the Ray release the cluster runs.",
    component="ray", versions=">=1.4 (Ray Client)", source=RAY + "python/ray/util/client/worker.py (_check_versions)",
    fixture="RuntimeError: Python minor versions differ between client and server: client is 3.8.10, server is 3.7.7")
add("DD1352", "ray-patch-version-warning", VM, R.CONTEXT, ("Python patch version mismatch: The cluster was started",),
    "Ray warns that this process's Python patch release differs from the cluster's (it carries on)", rank=20,
    remedy="Usually harmless; align the Python patch release across nodes if pickled objects fail to load.",
    component="ray", versions=">=2.9", source=RAY + "python/ray/_private/utils.py (check_version_info, warning)",
    fixture="WARNING utils.py:1591 -- Python patch version mismatch: The cluster was started with:")

# -- MPI launchers: a command line or a build for another MPI implementation -------------------------------------------
add("DD1353", "hvd-mpi-implementation", VM, R.CAUSE,
    ("Unknown MPI implementation given in output of mpirun --version", "Was unable to run mpirun --version"),
    "horovodrun cannot tell which MPI the mpirun on PATH belongs to (an implementation it does not support, or an "
    "mpirun that does not run)", rank=72,
    remedy="Put an mpirun of the MPI Horovod was built with (Open MPI, Spectrum MPI, MPICH, Intel MPI) first on PATH on "
    "the launch node, or use `horovodrun --gloo`.",
    component="horovod", versions=">=0.20", source="horovod/horovod horovod/runner/mpi_run.py "
    "(_get_mpi_implementation; 'horovod does not find an installed MPI' is DD912)",
    fixture="Unknown MPI implementation given in output of mpirun --version:")
add("DD1354", "hydra-unrecognized-argument", VM, R.CAUSE, ("unrecognized argument", "argument matching returned error"),
    "MPICH's or Intel MPI's mpiexec (Hydra) refuses an option: the command line was written for another MPI", rank=74,
    regex=r"match_arg\b.*unrecognized argument|_parse_array\b.*argument matching returned error",
    remedy="The mpiexec on PATH is Hydra (MPICH / Intel MPI) but the options are Open MPI's (--allow-run-as-root, -x, "
    "--bind-to none, -mca): call the launcher of the MPI the program was built with, or use Hydra's options "
    "(-genv, -ppn, -bind-to).",
    component="mpich", versions="all (Hydra; Intel MPI's copy too)",
    source="pmodels/mpich src/pm/hydra/utils/args/args.c (match_arg / HYDU_parse_array)",
    fixture="[mpiexec@node1] match_arg (utils/args/args.c:163): unrecognized argument allow-run-as-root")
add("DD1355", "ompi-unknown-option", VM, R.CAUSE, (": Error: unknown option",),
    "Open MPI's mpirun refuses an option: often a command line written for another MPI (Hydra's -ppn, -genv)",
    regex=r"\b(?:mpirun|mpiexec|orterun|prterun|prun): Error: unknown option \"", rank=66,
    remedy="The mpirun on PATH is Open MPI's but the options are another launcher's (MPICH/Intel MPI: -ppn, -genv, "
    "-f hostfile): call the launcher of the MPI the program was built with, or use Open MPI's options "
    "(--map-by ppr:N:node, -x, --hostfile).",
    component="openmpi", versions="all", source="open-mpi/ompi opal/util/cmd_line.c (opal_cmd_line_parse)",
    fixture='mpirun: Error: unknown option "-ppn"')

# -- TensorFlow: graphs and builds of another version -------------------------------------------------------------------
add("DD1356", "tf-graphdef-version-range", VM, R.CAUSE,
    ("above current version", "below min producer", "disallows consumer version"),
    "A graph or checkpoint was written by a TensorFlow outside the range this binary reads", rank=78,
    regex=r"(?:GraphDef|Checkpoint|SavedModel)\w* (?:min consumer version -?\d+ above current version"
          r"|producer version -?\d+ below min producer|disallows consumer version)",
    remedy="The process reading the graph/checkpoint runs a TensorFlow too old (or too new) for the one that wrote it: "
    "run the same TensorFlow version in every task and in the job that exported the model.",
    component="tensorflow", versions="all", source=TF + "tensorflow/core/framework/versions.cc (CheckVersions)",
    fixture="ValueError: GraphDef min consumer version 1073741824 above current version 1286 for TensorFlow 2.15.0.  "
            "Please upgrade TensorFlow.")
add("DD1357", "tf-nodedef-inputs-skew", VM, R.CAUSE, ("NodeDef expected inputs '",),
    "A node's inputs do not fit this binary's definition of its op (the graph comes from another TF version)", rank=72,
    remedy="The graph was built by a TensorFlow whose op definition differs from this binary's: run the same "
    "TensorFlow on every task, or re-export the graph with the version that runs it.",
    component="tensorflow", versions="all", source=TF + "tensorflow/core/framework/node_def_util.cc (ValidateNodeDef)",
    fixture="InvalidArgumentError: NodeDef expected inputs 'float, int32' do not match 3 inputs specified; "
            "Op<name=ResizeBilinear; signature=images:T, size:int32 -> resized_images:float>")
add("DD1358", "tf-cpu-instructions-missing", VM, R.CAUSE,
    ("The TensorFlow library was compiled to use",),
    "The TensorFlow wheel needs CPU instructions (AVX, AVX2, SSE4) this node's CPU does not have", rank=82,
    regex=r"The TensorFlow library was compiled to use \S+ instructions, but these aren't available on your machine",
    remedy="Install a TensorFlow build for this CPU (an older or source build without AVX, or the native arm64 build "
    "instead of an x86 one under emulation), or schedule the task on nodes with the instructions.",
    component="tensorflow", versions="all", source=TF + "tensorflow/core/platform/cpu_feature_guard.cc",
    fixture="F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX "
            "instructions, but these aren't available on your machine.")
add("DD1359", "tf-gpu-capability-too-low", VM, R.CAUSE, ("The minimum required Cuda capability is",),
    "TensorFlow ignores a GPU older than its build supports (the task runs on the CPU or finds no GPU)", rank=60,
    remedy="This TensorFlow build needs a newer GPU architecture: run on nodes with a supported GPU, or use a "
    "TensorFlow built for this compute capability, the same on every node.",
    component="tensorflow", versions=">=1.0", source=TF + "tensorflow/core/common_runtime/gpu/gpu_device.cc",
    fixture="Ignoring visible gpu device (device: 0, name: Tesla K20m, pci bus id: 0000:02:00.0, compute capability: "
            "3.5) with Cuda compute capability 3.5. The minimum required Cuda capability is 3.7.")
add("DD1360", "cuda-unsupported-ptx", VM, R.CAUSE,
    ("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cudaErrorUnsupportedPtxVersion",
     "the provided PTX was compiled with an unsupported toolchain"),
    "PTX in the binary was produced by a newer CUDA toolkit than the node's driver supports", rank=80,
    remedy="Update the driver on every node to one that supports the toolkit the binary (or XLA's ptxas) was built "
    "with, or use an image whose CUDA matches the nodes' driver.",
    component="cuda", versions=">=11.1", source="CUDA cuda.h / driver_types.h (CUDA_ERROR_UNSUPPORTED_PTX_VERSION / "
    "cudaErrorUnsupportedPtxVersion)",
    fixture="INTERNAL: Failed to load PTX text as a module: CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was "
            "compiled with an unsupported toolchain.")
add("DD1361", "xla-driver-older-than-ptxas", VM, R.CONTEXT, ("which is older than the ptxas CUDA version",),
    "XLA warns that the driver is older than its ptxas (it disables parallel compilation and carries on)", rank=20,
    remedy="Update the NVIDIA driver (or install the CUDA forward-compatibility package) to match the toolkit.",
    component="tensorflow", versions=">=2.9 (XLA GPU)", source="openxla/xla xla/service/gpu/nvptx_compiler.cc",
    fixture="The NVIDIA driver's CUDA version is 11.4 which is older than the ptxas CUDA version (11.8.89). Because "
            "the driver is older than the ptxas version, XLA is disabling parallel compilation")
add("DD1362", "tf-tensorrt-version", VM, R.CAUSE, ("but linked TensorFlow against TensorRT",),
    "The TensorRT loaded at run time differs from the one TensorFlow was linked against", rank=80,
    remedy="Install the TensorRT major version TensorFlow was built with (same or newer minor) on every node.",
    component="tensorflow", versions=">=1.14 (TF-TRT)", source=TF + "tensorflow/python/compiler/tensorrt/trt_convert.py "
    "(_check_trt_version_compatibility)",
    fixture="Loaded TensorRT 7.2.1 but linked TensorFlow against TensorRT 8.6.1. A few requirements must be met:")
add("DD1363", "tf-package-requires-tf", VM, R.CAUSE, ("Detected an installation of version",),
    "A TensorFlow add-on (TFP, TFDS, TF-GAN, ...) needs another TensorFlow version than the installed one", rank=78,
    regex=r"requires TensorFlow version >= ?\S+; Detected an installation of version",
    remedy="Install the TensorFlow release the package needs (or the package release made for the installed "
    "TensorFlow), the same in every task's environment.",
    component="tensorflow", versions="all", source="tensorflow/probability tensorflow_probability/python/__init__.py "
    "(_ensure_tf_install); the same check in tensorflow/datasets and tensorflow/gan",
    fixture="ImportError: This version of TensorFlow Probability requires TensorFlow version >= 2.5; Detected an "
            "installation of version 2.3.0. Please upgrade TensorFlow to proceed.")
add("DD1364", "tf-custom-ops-abi", VM, R.CAUSE, ("has compiled its custom ops against TensorFlow",),
    "An add-on's custom ops were built for another TensorFlow (segfaults or symbol errors may follow)", rank=60,
    remedy="Install the add-on release built for the installed TensorFlow (or the TensorFlow it names); "
    "TF_ADDONS_PY_OPS=1 falls back to pure-Python ops for TF Addons.",
    component="tensorflow", versions="all", source="tensorflow/addons tensorflow_addons/utils/resource_loader.py "
    "(display_warning_if_incompatible); the same in keras-team/keras-cv and tensorflow/recommenders-addons",
    fixture="TensorFlow Addons has compiled its custom ops against TensorFlow 2.2.0, and there are no compatibility "
            "guarantees between the two versions.")

# -- Keras 3 reading Keras 2 artefacts -----------------------------------------------------------------------------------
add("DD1365", "keras3-legacy-api", VM, R.CAUSE,
    ("Keras 3 only supports V3 `.keras` files", "A KerasTensor cannot be used as input to a TensorFlow function"),
    "Keras 3 (tf.keras from TF 2.16 on) refuses a Keras 2 artefact or API use (SavedModel, TF ops on KerasTensors)",
    rank=74,
    remedy="The code or model was written for Keras 2 / tf.keras: install tf-keras and set TF_USE_LEGACY_KERAS=1 (or "
    "pin TensorFlow < 2.16) in every task, or port it to Keras 3 (keras.layers.TFSMLayer, keras.ops).",
    component="keras", versions=">=3.0", source="keras-team/keras keras/src/saving/saving_api.py (load_model) / "
    "keras/src/backend/common/keras_tensor.py (KerasTensor.__tf_tensor__)",
    fixture="ValueError: File format not supported: filepath=/models/resnet. Keras 3 only supports V3 `.keras` files "
            "and legacy H5 format files (`.h5` extension).")

# -- the dynamic loader and glibc ------------------------------------------------------------------------------------------
add("DD1366", "loader-symbol-version", VM, R.CAUSE, ("' not found",),
    "A library or program needs a newer glibc/libstdc++ (symbol version) than the node has", rank=76,
    # the named tags, or any library's symbol version where the loader's own "(required by ...)" follows (libfabric's
    # FABRIC_1.7, libnccl's, a plugin's)
    regex=r"version `(?:GLIBC|GLIBCXX|CXXABI|GCC|GOMP|OPENSSL|CURL|ZLIB|libcuda|libnvidia)\w*[\d.]*' not found"
          r"|version `[\w.+-]+' not found \(required by ",
    remedy="The binary was built on a newer system than this node (or image): use a build made for this glibc / "
    "libstdc++ (manylinux wheels, the matching container) or a newer base image, the same on every node.",
    component="glibc", versions="all", source=GLIBC + "elf/dl-version.c (match_symbol: \"version `%s' not found "
    "(required by %s)\")",
    fixture="ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by "
            "/opt/conda/lib/python3.10/site-packages/tensorflow/libtensorflow_framework.so.2)")
add("DD1367", "loader-wrong-elf-class", VM, R.CAUSE, ("wrong ELF class: ELFCLASS",),
    "A shared library of the other word size (32/64-bit) was found first", rank=78,
    remedy="A 32-bit library (or one for another platform) is on LD_LIBRARY_PATH ahead of the 64-bit one: fix the path "
    "or install the library built for this platform.",
    component="glibc", versions="all", source=GLIBC + "elf/dl-load.c (open_verify: \"wrong ELF class: ELFCLASS32\")",
    fixture="error while loading shared libraries: libmpi.so.40: wrong ELF class: ELFCLASS32")
add("DD1368", "loader-versioned-lib-missing", VM, R.CAUSE, ("cannot open shared object file",),
    "A versioned CUDA/cuDNN/NCCL/MPI library the binary was built for is not on this node", rank=74,
    regex=r"^(?!.*(?:Could not load dynamic library|dlerror|Could not dlopen)).*?\blib(?:cudart|cublas|cublasLt|cudnn"
          r"|cufft|curand|cusolver|cusparse|nvrtc|nvinfer|nvinfer_plugin|nccl|mpi|mpi_cxx|mpi_mpifh|mpich|mpicxx|"
          r"tensorflow_framework|python3\.\d+)\w*\.so\.\d[\w.]*: cannot open shared object file",
    remedy="The extension or program was built against another CUDA/cuDNN/NCCL/MPI major version than the node has: "
    "install that version on every node, or rebuild against the installed one (the same image everywhere).",
    component="glibc", versions="all", source=GLIBC + "elf/dl-load.c (_dl_map_object: \"cannot open shared object "
    "file\") for the sonames of the CUDA toolkit, NCCL, Open MPI and MPICH",
    fixture="ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory")
add("DD1369", "loader-cxx-undefined-symbol", VM, R.CAUSE, ("undefined symbol: _Z",),
    "A C++ extension was built against another version of the library it links (TensorFlow, MPI, CUDA)", rank=72,
    remedy="Rebuild the extension (Horovod, custom ops, tensorflow-io/text) against the installed TensorFlow and "
    "libraries (`pip install --no-cache-dir`), or install the release made for them, on every node.",
    component="glibc", versions="all", source=GLIBC + "elf/dl-lookup.c (_dl_lookup_symbol_x: \"undefined symbol: %s\")",
    fixture="ImportError: /usr/local/lib/python3.8/dist-packages/horovod/tensorflow/mpi_lib.cpython-38-x86_64-linux-"
            "gnu.so: undefined symbol: _ZN10tensorflow8OpKernel11TraceStringEPNS_15OpKernelContextEb")
add("DD1476", "loader-symbol-version-missing", VM, R.CAUSE, ("with link time reference",),
    "A library was built against a newer release of another library than the node has", rank=74,
    regex=r"symbol \S+,? version \S+ not defined in file \S+ with link time reference",
    remedy="The program or one of its libraries was linked against a newer release of the named library (a symbol "
    "version it lacks): install that release on every node (the same driver / rdma-core / MOFED packages on login "
    "and compute nodes), or rebuild against the installed one.",
    component="glibc", versions="all", source=GLIBC + "elf/dl-lookup.c (\"symbol %s version %s not defined in file %s "
    "with link time reference\", printed after \"relocation error: <object>:\")",
    fixture="./a.out: relocation error: /opt/ucx/lib/ucx/libuct_ib.so.0: symbol mlx5dv_is_supported, version MLX5_1.8 "
            "not defined in file libmlx5.so.1 with link time reference")
add("DD1477", "ucx-api-incompatible", VM, R.CAUSE, ("UCP API version is incompatible",),
    "The program was built against a newer UCX than the one it loaded", rank=78,
    remedy="The UCX library loaded at run time is older than the one the program (Open MPI, NIXL, UCX-Py) was built "
    "against: put the matching libucp first on LD_LIBRARY_PATH, or rebuild against the installed UCX, on every node.",
    component="ucx", versions=">=1.9", source="openucx/ucx src/ucp/core/ucp_context.c (ucp_version_check: \"UCP API "
    "version is incompatible: required >= %d.%d, actual %s\")",
    fixture="[1748179345.114806] [host:3019122:0]     ucp_context.c:2257 UCX  WARN  UCP API version is incompatible: "
            "required >= 1.20, actual 1.18.0 (loaded from /usr/local/ucx/lib/libucp.so.0)")
add("DD1370", "glibc-kernel-too-old", VM, R.CAUSE, ("FATAL: kernel too old",),
    "The image's glibc needs a newer Linux kernel than the node runs", rank=82,
    remedy="Run the image on nodes with a newer kernel, or use an image built on an older base (older glibc).",
    component="glibc", versions="all", source=GLIBC + "sysdeps/unix/sysv/linux/dl-osinfo.h (DL_SYSDEP_OSCHECK)",
    fixture="FATAL: kernel too old")

# -- CPython, pybind11 and Cython: extensions and byte code of another Python -------------------------------------------
add("DD1371", "pybind11-python-version", VM, R.CAUSE, ("Python version mismatch: module was compiled for",),
    "A pybind11 extension was built for another Python version than the interpreter", rank=80,
    remedy="Install the wheel built for this Python (cp3X tag) or rebuild the extension with this interpreter, "
    "in every task's environment.",
    component="python", versions="all", source="pybind11/pybind11 include/pybind11/detail/common.h "
    "(PYBIND11_CHECK_PYTHON_VERSION)",
    fixture="ImportError: Python version mismatch: module was compiled for Python 3.11, but the interpreter version is "
            "incompatible: 3.12.12 (main, Oct  9 2025, 11:07:00) [GCC 13.4.0].")
add("DD1479", "python-unexpected-keyword", VM, R.CAUSE, ("got an unexpected keyword argument",),
    "A call passes an argument the called function does not take: caller and callee were written for different "
    "releases", regex=r"\w+\(\) got an unexpected keyword argument '\w+'", rank=50,
    remedy="The calling code (a library, the launcher's wrapper, the training script) was written for another release "
    "of the package it calls: install the release it was written for (its requirements), or update the caller, on "
    "every task; a typo in the argument's name reads the same.",
    component="python", versions="all", source="CPython Python/getargs.c and ceval.c (\"%U() got an unexpected keyword "
    "argument '%S'\"); category from the real corpus: 3 of its 4 cases were a library called with an argument of "
    "another release (the fourth a typo)",
    fixture="TypeError: __init__() got an unexpected keyword argument 'checkpoint_time_delta_minutes'")
add("DD1489", "deepspeed-cuda-mismatch", VM, R.CAUSE, ("does not match the version torch was compiled with",),
    "The CUDA toolkit that builds the extension is another version than the one the framework was built with",
    rank=82,
    remedy="Build the ops with the CUDA toolkit the installed framework was built for (point CUDA_HOME at it), or "
    "install the framework build for the installed toolkit, on every node.",
    component="deepspeed", versions="all", source="microsoft/DeepSpeed op_builder/builder.py (CUDAMismatchException: "
    "\"Installed CUDA version X does not match the version torch was compiled with Y\")",
    fixture="deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version "
            "12.2 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions "
            "without a matching cuda version.")
add("DD1498", "ngc-container-driver-check", VM, R.CAUSE,
    ("This container was built for NVIDIA Driver Release", "which is not supported by this container"),
    "The NVIDIA container's start-up check found the host's driver too old, or a GPU the image no longer supports",
    rank=84,
    remedy="Run a container release built for the node's driver and GPU (NVIDIA's support matrix per release), or "
    "upgrade the node's driver (data-center GPUs may use the CUDA forward-compatibility package); the same image on "
    "nodes with different drivers or GPUs fails only on some.",
    component="container-runtime", versions="NGC containers (nvidia_entrypoint.sh, since 19.x)",
    source="NVIDIA NGC images' /opt/nvidia/entrypoint.d driver check (\"This container was built for NVIDIA Driver "
    "Release %s or later, but version %s was detected and compatibility mode is UNAVAILABLE.\"; \"Detected NVIDIA %s "
    "GPU, which is not supported by this container\")",
    fixture="ERROR: This container was built for NVIDIA Driver Release 455.23 or later, but")
add("DD1372", "cpython-no-module-init", VM, R.CAUSE,
    ("dynamic module does not define module export function", "dynamic module does not define init function"),
    "An extension module was built for another Python (2 vs 3, another ABI) or is not a Python module", rank=74,
    remedy="Install the extension built for this interpreter (the wheel's cp tag must match the Python that runs it).",
    component="python", versions="all", source=CPY + "Python/importdl.c (_PyImport_LoadDynamicModuleWithSpec)",
    fixture="ImportError: dynamic module does not define module export function (PyInit__pywrap_tensorflow_internal)")
add("DD1373", "cpython-bad-magic", VM, R.CAUSE, ("bad magic number in",),
    "A .pyc file was compiled by another Python version", rank=72,
    remedy="Delete the stale __pycache__/.pyc files (or ship sources), or run the Python that compiled them.",
    component="python", versions="3.x", source=CPY + "Lib/importlib/_bootstrap_external.py (_classify_pyc)",
    fixture="ImportError: bad magic number in 'trainer.model': b'\\x03\\xf3\\r\\n'")
add("DD1374", "cpython-bad-marshal", VM, R.CAUSE, ("bad marshal data",),
    "Marshalled Python code (a Keras Lambda layer, a .pyc) was written by another Python version", rank=68,
    remedy="Load the model with the Python version that saved it (Lambda layers store byte code), or re-save it "
    "without Lambda layers / as weights only.",
    component="python", versions="all", source=CPY + "Python/marshal.c (r_object: \"bad marshal data (unknown type "
    "code)\")", fixture="ValueError: bad marshal data (unknown type code)")
add("DD1375", "cpython-c-api-version", VM, R.CONTEXT,
    ("Python C API version mismatch for module", "does not match runtime version"),
    "An extension was compiled for another Python release (a warning; crashes may follow)", rank=35,
    regex=r"Python C API version mismatch for module|compiletime version \S+ of module .* does not match runtime version",
    remedy="Install the build of the extension made for this Python release.",
    component="python", versions="all", source=CPY + "Python/modsupport.c (PyModule_Create2); cython/cython "
    "Cython/Utility/ModuleSetupCode.c (__Pyx_check_binary_version)",
    fixture="RuntimeWarning: compiletime version 3.5 of module 'tensorflow.python.framework.fast_tensor_util' does not "
            "match runtime version 3.6")
add("DD1376", "cython-size-changed", VM, R.CAUSE, ("size changed, may indicate binary incompatibility",),
    "A Cython extension was built against another version of a C library's types (usually NumPy)", rank=75,
    remedy="Reinstall the extension built against the installed NumPy (or install the NumPy it was built with), "
    "the same in every task's environment.",
    component="python", versions="all", source="cython/cython Cython/Utility/ImportExport.c (__Pyx_ImportType)",
    fixture="ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, "
            "got 88 from PyObject")

# -- NumPy and protobuf: the C API and the generated code of another release ---------------------------------------------
add("DD1377", "numpy-c-api-version", VM, R.CAUSE,
    ("module compiled against API version", "module compiled against ABI version",
     "compiled using NumPy 1.x cannot be run in", "_ARRAY_API not found"),
    "An extension (TensorFlow, h5py, ...) was built against another NumPy C API than the installed NumPy", rank=82,
    remedy="Install the NumPy major version the extensions were built for (numpy<2 for builds made against NumPy 1.x), "
    "or their releases built for the installed NumPy, in every task's environment.",
    component="python", versions="all", source="numpy/numpy numpy/_core/code_generators/generate_numpy_api.py "
    "(_import_array); numpy/_core/_multiarray_umath.py (NumPy 2 message)",
    fixture="RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe")
add("DD1378", "protobuf-gencode-runtime", VM, R.CAUSE,
    ("Detected mismatched Protobuf Gencode/Runtime", "Detected incompatible Protobuf Gencode/Runtime"),
    "Generated _pb2 code and the installed protobuf runtime are of incompatible releases", rank=80,
    remedy="Install the protobuf release the generated code (TensorFlow, grpcio-tools) was made with, or regenerate "
    "the code with the installed protoc: pin protobuf in every task's environment.",
    component="python", versions=">=5.26 (python runtime)", source=PB + "python/google/protobuf/runtime_version.py "
    "(ValidateProtobufRuntimeVersion)",
    fixture="google.protobuf.runtime_version.VersionError: Detected mismatched Protobuf Gencode/Runtime major versions "
            "when loading tensorflow/core/framework/attr_value.proto: gencode 5.28.3 runtime 4.25.3. Same major "
            "version is required.")
add("DD1379", "protobuf-generated-code-old", VM, R.CAUSE,
    ("your generated code is out of date and must be regenerated with protoc",),
    "Generated _pb2 code is older than the installed protobuf runtime accepts", rank=78,
    remedy="Pin protobuf<=3.20.x (or PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python) for packages whose _pb2 files are "
    "older, or upgrade those packages; the same in every task's environment.",
    component="python", versions=">=4.21", source=PB + "python/google/protobuf/descriptor.py (_Deprecated / "
    "_message.Message check)",
    fixture="If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with "
            "protoc >= 3.19.0.")
add("DD1380", "protobuf-cpp-verify-version", VM, R.CAUSE,
    ("of the Protocol Buffer runtime library, but the installed version is",
     "of the Protocol Buffer runtime library, which is not compatible with the installed version"),
    "A C++ program was built against another libprotobuf than the one it loads", rank=80,
    remedy="Load the libprotobuf the program was built with (LD_LIBRARY_PATH order, one protobuf per environment), "
    "or rebuild it against the installed one.",
    component="tensorflow", versions="all", source=PB + "src/google/protobuf/stubs/common.cc (VerifyVersion)",
    fixture="[libprotobuf FATAL google/protobuf/stubs/common.cc:83] This program requires version 3.21.0 of the "
            "Protocol Buffer runtime library, but the installed version is 3.19.6.  Please update your library.")

# -- containers: an image for another CPU architecture --------------------------------------------------------------------
add("DD1381", "image-no-platform-match", VM, R.CAUSE,
    ("no match for platform in manifest", "no matching manifest for"),
    "The image has no build for this node's CPU architecture (or OS)", rank=80,
    regex=r"no match for platform in manifest|no matching manifest for \S+ in the manifest list entries",
    remedy="Build and push the image for the nodes' architecture (docker buildx --platform linux/amd64,linux/arm64), or "
    "schedule on nodes of the architecture the image has (a nodeSelector on kubernetes.io/arch).",
    component="container-runtime", versions="all", source="containerd/containerd images/image.go (Manifest) / "
    "moby/moby distribution/pull_v2.go",
    fixture='Failed to pull image "registry.local/trainer:2.1": rpc error: code = NotFound desc = failed to pull and '
            'unpack image "registry.local/trainer:2.1": no match for platform in manifest: not found')
add("DD1382", "docker-platform-warning", VM, R.CONTEXT, ("does not match the detected host platform",),
    "Docker runs an image built for another CPU architecture (under emulation, when there is one)", rank=35,
    remedy="Use an image built for the host's architecture; under emulation TensorFlow may lack CPU instructions or "
    "fail with 'exec format error'.",
    component="container-runtime", versions=">=20.10", source="docker/cli cli/command/container/create.go "
    "(platform warning)",
    fixture="WARNING: The requested image's platform (linux/amd64) does not match the detected host platform "
            "(linux/arm64/v8) and no specific platform was requested")

# -- Slurm: client and controller of different releases -----------------------------------------------------------------
add("DD1383", "slurm-protocol-version", VM, R.CAUSE, ("Protocol version has changed, re-link your code",),
    "The Slurm commands (or a plugin) and the controller/daemons speak different protocol versions", rank=78,
    remedy="The srun/sbatch on PATH (or the libslurm a program links, e.g. an MPI's PMI plugin) is from another Slurm "
    "release than slurmctld/slurmd: use the cluster's own Slurm commands and rebuild what links libslurm.",
    component="slurm", versions="all", source="SchedMD/slurm src/common/slurm_errno.c (SLURM_PROTOCOL_VERSION_ERROR)",
    fixture="srun: error: Unable to allocate resources: Protocol version has changed, re-link your code")

# -- pip: the environment a task installs does not fit its Python or platform --------------------------------------------
_PIP = "pypa/pip "
add("DD1384", "pip-requires-python", VM, R.CAUSE, ("requires a different Python:",),
    "A package needs another Python version than the task's interpreter", rank=76,
    remedy="Run the task with a Python in the package's Requires-Python range, or pin a release of the package that "
    "supports this Python; the same image for every task.",
    component="python", versions=">=9.0", source=_PIP + "src/pip/_internal/resolution/legacy/resolver.py "
    "(_check_dist_requires_python: UnsupportedPythonVersion)",
    fixture="ERROR: Package 'tensorflow-io' requires a different Python: 3.6.9 not in '>=3.7, <3.11'")
add("DD1385", "pip-unsupported-wheel", VM, R.CAUSE, ("is not a supported wheel on this platform",),
    "A wheel built for another Python version, CPU architecture or OS was given to pip", rank=76,
    remedy="Use the wheel whose tags match the node (cpXY for its Python, x86_64/aarch64, manylinux glibc level): "
    "`pip debug --verbose` lists the tags this interpreter accepts.",
    component="python", versions="all", source=_PIP + "src/pip/_internal/req/constructors.py / resolution "
    "(InstallationError: \"%s is not a supported wheel on this platform.\")",
    fixture="ERROR: tensorflow-2.4.0-cp38-cp38-manylinux2010_x86_64.whl is not a supported wheel on this platform.")
add("DD1386", "pip-no-version-for-python", VM, R.CAUSE, ("Could not find a version that satisfies the requirement",),
    "The pinned release does not exist for this Python/platform (the index lists other versions)", rank=70,
    regex=r"Could not find a version that satisfies the requirement \S+ \(from versions: (?!none\))",
    remedy="The index has releases of the package, but not the pinned one for this interpreter and platform (old "
    "TensorFlow releases have no wheels for new Pythons, or for aarch64): pin a release built for them, or use the "
    "Python the pin was made for.",
    component="python", versions=">=10", source=_PIP + "src/pip/_internal/index/package_finder.py / "
    "resolution/resolvelib/factory.py (DistributionNotFound)",
    fixture="ERROR: Could not find a version that satisfies the requirement tensorflow==2.4.0 (from versions: 2.12.0, "
            "2.12.1, 2.13.0)")
add("DD1387", "pip-conflicting-dependencies", VM, R.CAUSE,
    ("because these package versions have conflicting dependencies",),
    "The pinned packages require incompatible versions of each other", rank=66,
    remedy="Pins of packages that need different versions of a common dependency (TensorFlow and Keras, protobuf, "
    "numpy): choose releases made for each other (the TensorFlow release notes list them).",
    component="python", versions=">=20.3 (resolver)", source=_PIP + "src/pip/_internal/resolution/resolvelib/factory.py "
    "(get_installation_error: ResolutionImpossible)",
    fixture="ERROR: Cannot install tensorflow==2.15.0 and keras==3.1.0 because these package versions have conflicting "
            "dependencies.")

# -- Kubernetes: kubectl and the API server of distant releases ---------------------------------------------------------
add("DD1388", "kubectl-version-skew", VM, R.CONTEXT, ("exceeds the supported minor version skew of",),
    "kubectl warns that it is more than one minor release away from the API server", rank=20,
    remedy="Use a kubectl within one minor release of the cluster; resources or fields it does not know may fail.",
    component="kubernetes", versions=">=1.28", source="kubernetes/kubectl pkg/cmd/version/version.go",
    fixture="WARNING: version difference between client (1.30) and server (1.26) exceeds the supported minor version "
            "skew of +/-1")
add("DD1460", "tf-function-not-registered-remote", C.VERSION_MISMATCH, R.CAUSE,
    ("' is neither a type of a primitive operation nor a name of a function registered in binary running on",),
    "A function the client sent is not registered in the TensorFlow binary that runs it (a remote worker or TPU "
    "host)", rank=70,
    remedy="TensorFlow's own reading: the client and server binaries are not built with the same version (a TPU or "
    "remote worker runtime older than the client's TensorFlow). Run the same TensorFlow on the client and every "
    "server (for a Cloud TPU, the runtime version matching the client). Under ParameterServerStrategy the "
    "coordinator also reads it as a worker that restarted and lost its functions: see that worker's log.",
    component="tensorflow", versions="all",
    source="TensorFlow source (string in the 2.21 wheel's libtensorflow_framework.so.2 / "
    "_pywrap_tensorflow_internal.so) eager/execute.cc, c_api (errors::NotFound(\"'\", name, \"' is neither a "
    "type of a primitive operation nor a name of a function registered in binary running on \", port::Hostname(), \". One possible root "
    "cause is the client and server binaries are not built with the same version.\")); "
    "distribute/coordinator/cluster_coordinator.py (_is_worker_failure)",
    fixture="NotFoundError: '__inference__tpu_init_fn_105' is neither a type of a primitive operation nor a name of a "
            "function registered in binary running on n-050d2992-w-0. Make sure the operation or function is "
            "registered in the binary running in this process.")
add("DD1472", "tpu-library-symbol-missing", VM, R.CAUSE, ("not available in this library",
                                                           "pallas tpu requires a libtpu version"),
    "The TPU runtime library (libtpu) does not match the framework: a function it needs is missing, or it is older "
    "than the framework accepts",
    regex=r"tpu_(?:library|executor)_init_fns\.inc:\d+\] \w+ not available in this library"
          r"|Pallas TPU requires a libtpu version", rank=85, ignore_case=True,
    remedy="Install the libtpu that matches the framework (`pip install \"jax[tpu]\"` pins it for JAX; the TPU VM "
    "image's runtime for TensorFlow), and do not load two frameworks that each bring their own libtpu into one "
    "process (import the one whose libtpu is installed first).",
    component="tensorflow", versions=">=2.4 (TPU builds; JAX's jaxlib shares the loader)",
    source="TensorFlow source tensorflow/core/tpu/tpu_library_init_fns.inc and tpu_executor_init_fns.inc (each "
    "libtpu symbol looked up with dlsym; a missing one: LOG(FATAL) << name << \" not available in this library.\"); "
    "JAX jax/_src/pallas/mosaic/lowering.py (is_cloud_tpu_older_than: RuntimeError(\"Pallas TPU requires a libtpu "
    "version that's at most a month old. Found version string: ...\"), spelled libTPU in some releases)",
    fixture="F external/org_tensorflow/tensorflow/core/tpu/tpu_executor_init_fns.inc:110] "
            "TpuTransferManager_ReadDynamicShapes not available in this library.")
