"""Components' own messages, each classified once by what its source says it means (DD1476-DD1509, DD755, DD640,
DD1469).

Each log holds the message among the lines that surround it in a real job -- a traceback, a launcher's exit report,
NCCL's INFO lines, a scheduler's table -- which other signatures read differently (the code's error, a crashed peer,
an unknown error line); the reasoning must name the message's cause. The fixture checks in test_signatures.py cover
each signature alone.
"""
from __future__ import annotations

import pytest

from distdoctor.diagnose.logs.reason import reason
from distdoctor.diagnose.logs.scan import scan_bytes
from distdoctor.model import Category

_TB = 'Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n    main()\n'
_MPIRUN = ("--------------------------------------------------------------------------\nmpirun detected that one or more "
           "processes exited with non-zero status, thus causing\nthe job to be terminated.")


def _verdict(text: str):
    hits, facts = scan_bytes("output.log", (text + "\n").encode())
    return reason(hits, [facts])


@pytest.mark.parametrize("text,category,code", [
    # an allocating library's words for CUDA's cudaErrorMemoryAllocation, then the rank's abort
    ("terminate called after throwing an instance of 'hydrogen::GPUError'\n  what():  Failed to allocate GPU memory "
     "with message: \"out of memory\" (536870912 bytes requested, 459145216 bytes available, 17071734784 bytes total)\n"
     + _MPIRUN, Category.OOM_GPU, "DD1480"),
    # LightGBM's socket linker: the port is taken
    ("[LightGBM] [Info] Trying to bind port 12402...\n[LightGBM] [Fatal] Binding to port 12402 failed\n" + _TB
     + "lightgbm.basic.LightGBMError: Binding port 12402 failed", Category.PORT_IN_USE, "DD1481"),
    # HTCondor's hold reason in condor_q's table
    (" ID      OWNER          HELD_SINCE  HOLD_REASON\n1050981.0   dbrown         11/7  23:48 Job in status 2 put on "
     "hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000.", Category.OOM_HOST, "DD1482"),
    # Open MPI refuses an MPI call before MPI_Init (the program's order, not a crash)
    ("*** The MPI_Barrier() function was called before MPI_INIT was invoked.\n*** This is disallowed by the MPI "
     "standard.\n*** Your MPI job will now abort.\n[node1:12345] Local abort before MPI_INIT completed completed "
     "successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes "
     "were killed!\n" + _MPIRUN, Category.USER_CODE_ERROR, "DD1483"),
    # argparse's refusal, then the launcher's report of the exit
    ("usage: train.py [-h] [-c CONFIG]\ntrain.py: error: unrecognized arguments: --local_rank=1\n"
     "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=1']' returned "
     "non-zero exit status 2.", Category.USER_CODE_ERROR, "DD1484"),
    # CUDA's peer-mapping limit behind a generic CUDA error name
    ("2019-06-12 10:01:02.123: E tensorflow/core/common_runtime/gpu/gpu_device.cc:1301] peer access from "
     "0x7f76d46da2c0 to 0x7f76b4713830: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources exhausted",
     Category.RESOURCE_EXHAUSTION, "DD1485"),
    # an IB port down among NCCL's generic WARN lines
    ("host1:1307:1586 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\nhost1:1307:1591 [0] transport/net_ib.cc:100 NCCL "
     "WARN NET/IB : Got async event : port error\nhost1:1307:1591 [0] NCCL INFO transport/net.cc:1298 -> 6",
     Category.NETWORK_UNREACHABLE, "DD1486"),
    # Keras' optimizer refuses slot variables in another strategy's scope
    (_TB + "ValueError: Trying to create optimizer slot variable under the scope for tf.distribute.Strategy "
     "(<tensorflow.python.distribute.one_device_strategy.OneDeviceStrategy object at 0x7f8a>), which is different "
     "from the scope used for the original variable", Category.USER_CODE_ERROR, "DD1487"),
    # torchrun's rendezvous names its connection failure first, the unresolvable host after it
    ("RendezvousConnectionError: The connection to the C10d store has failed.\nTCP client failed to connect/validate "
     "to host slinky-0:29400 - Name or service not known", Category.NETWORK_UNREACHABLE, "DD1488"),
    # DeepSpeed's op builder compares the toolkit with the framework's build
    (_TB + "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version "
     "12.2 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a "
     "matching cuda version.", Category.VERSION_MISMATCH, "DD1489"),
    # Ray Tune cannot place a trial on the cluster as it is
    (_TB + "ray.tune.error.TuneError: Insufficient cluster resources to launch trial: trial requested 4 CPUs, 1 GPUs, "
     "but the cluster has only 0 CPUs, 0 GPUs, 8.6 GiB heap", Category.RESOURCE_EXHAUSTION, "DD1490"),
    # TFDS: fewer files than input pipelines
    (_TB + "ValueError: Cannot shard the pipeline with given `input_context`.`num_shards=1` but "
     "`num_input_pipelines=2`. This means that some workers won't read any data.",
     Category.DATA_SHARDING_IMBALANCE, "DD1491"),
    # horovodrun does not recognise the mpirun on PATH
    ("Open MPI not found in output of mpirun --version.\nTraceback (most recent call last):\n  File "
     "\"/usr/local/bin/horovodrun\", line 21, in <module>\n    run_commandline()\nException: horovodrun convenience "
     "script does not find an installed MPI.", Category.VERSION_MISMATCH, "DD1492"),
    # ps-lite's RDMA transport cannot pin its buffers, then aborts (read as a native crash otherwise)
    ("terminate called after throwing an instance of 'dmlc::Error'\n  what():  [16:23:05] src/./rdma_transport.h:130: "
     "Check failed: mr ibv_reg_mr failed: Cannot allocate memory, i=941, kMempoolChunkSize=56\nAborted (core dumped)",
     Category.RESOURCE_EXHAUSTION, "DD1493"),
    # icefall's GradScaler floor: the fp16 run diverged (a RuntimeError that otherwise reads as the code's error)
    (_TB + "RuntimeError: grad_scale is too small, exiting: 2.3283064365386963e-10", Category.NUMERICAL_DIVERGENCE,
     "DD1494"),
    # PySpark's own version check, inside the executor's Python traceback
    (_TB + "RuntimeError: Python in worker has different version 3.9 than that in driver 3.10, PySpark cannot run with "
     "different minor versions.", Category.VERSION_MISMATCH, "DD1495"),
    # CUDA's error 2 in a glog CHECK, then the abort (a native crash otherwise)
    ("F1206 16:55:19.914152  3830 parallel.cpp:85] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n"
     "*** Check failure stack trace: ***\n*** Aborted at 1481043319 (unix time) try \"date -d @1481043319\" if you are "
     "using GNU date ***", Category.OOM_GPU, "DD1496"),
    # a port taken, said in words by a launcher (a RuntimeError that otherwise reads as the code's error)
    ('  File "/usr/local/lib/python3.11/site-packages/pocket_coffea/executors/executors_lxplus.py", line 75, in setup\n'
     "    raise RuntimeError(\nRuntimeError: Port '8786' is already occupied on this node. Try another machine.",
     Category.PORT_IN_USE, "DD1497"),
    # the NGC container's entrypoint refuses the host's driver, then CUDA fails to initialise
    ("=============\n== PyTorch ==\n=============\nNVIDIA Release 20.10 (build 16775850)\nERROR: This container was built "
     "for NVIDIA Driver Release 455.23 or later, but\n       version 450.66 was detected and compatibility mode is "
     "UNAVAILABLE.\n" + _TB + "RuntimeError: CUDA error: no kernel image is available for execution on the device",
     Category.VERSION_MISMATCH, "DD1498"),
    ("ERROR: Detected NVIDIA Tesla K80 GPU, which is not supported by this container\nERROR: No supported GPU(s) "
     "detected to run this container", Category.VERSION_MISMATCH, "DD1498"),
    # preemption said in words, with a condition only after the statement (AzureML's message)
    ("AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. Check if the run has failed or "
     "restarted. Reason: Received pre-emption warning signal", Category.PREEMPTION, "DD1469"),
    # DDP's reducer, as a trainer's logger reports the exception (parameters that got no gradient)
    ("[2024-01-05 02:42:07][ INFO](trainer) - Epoch: 1/20, Iter: 1/2 -- train_loss: 0.9693\n[2024-01-05 02:42:14]"
     "[ERROR](trainer) - Current run is terminating due to exception: Expected to have finished reduction in the "
     "prior iteration before starting a new one. This error indicates that your module has parameters that were not "
     "used in producing loss.\nParameter indices which did not receive grad for rank 1: 35 36 37",
     Category.USER_CODE_ERROR, "DD1500"),
    (_TB + "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following "
     "reasons: 1) Use of a module parameter outside the `forward` function.\nParameter at index 127 has been marked as "
     "ready twice.", Category.USER_CODE_ERROR, "DD1501"),
    # DGL's RPC server, given an address this machine does not have
    ("Namespace(ip_config='ip_config.txt', num_servers=1, part_config='data/ogb-product.json')\n"
     "/opt/dgl/src/rpc/network/tcp_socket.cc: 69: Failed bind on 172.31.0.9:30050(ip+port), errno=99\n"
     "[08:12:03] /opt/dgl/src/rpc/rpc.cc:141: Cannot bind to 172.31.0.9:30050", Category.CONFIG_TF_CONFIG, "DD1502"),
    # an MPI argument error behind Open MPI's fatal handler (a count that overflowed: the program's defect)
    ("[n1:20431] *** An error occurred in MPI_Isend\n[n1:20431] *** reported by process [392036353,0]\n[n1:20431] *** "
     "on communicator MPI_COMM_WORLD\n[n1:20431] *** MPI_ERR_COUNT: invalid count argument\n[n1:20431] *** "
     "MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n" + _MPIRUN, Category.OTHER, "DD1503"),
    ("Abort(537490947) on node 12 (rank 12 in comm 0): Fatal error in PMPI_Send: Invalid count, error stack:\n"
     "PMPI_Send(157): MPI_Send(buf=0x2b1c, count=-1840700270, MPI_BYTE, dest=0, tag=7, MPI_COMM_WORLD) failed\n"
     "PMPI_Send(94).: Negative count, value is -1840700270", Category.OTHER, "DD1503"),
    # torch.multiprocessing.spawn's report of a child the kernel killed, then a sibling's broken start-up pipe
    (_TB + "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n"
     "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n_pickle.UnpicklingError: pickle "
     "data was truncated", Category.OOM_HOST, "DD1504"),
    # PyTorch's build lacks the backend the job asks for (a Windows wheel without NCCL), under torchrun's report
    (_TB + "  File \"C:\\Miniconda3\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py\", line 1013, in "
     "_new_process_group_helper\n    raise RuntimeError(\"Distributed package doesn't have NCCL built in\")\nRuntimeError: "
     "Distributed package doesn't have NCCL built in\nERROR:torch.distributed.elastic.multiprocessing.api:failed "
     "(exitcode: 1) local_rank: 0 (pid: 23152) of binary: C:\\Miniconda3\\python.exe", Category.OTHER, "DD1505"),
    ("ValueError: We detected accelerator mps on your machine. But we don't know which communication backend to use "
     "for this accelerator. Please specify the `backend` argument in the `init_process_group` call.",
     Category.OTHER, "DD1505"),
    # PyTorch 2's launcher passes --local-rank; a script written for 1.x parses --local_rank
    ("/usr/lib/python3/site-packages/torch/distributed/launch.py:181: FutureWarning: The module torch.distributed.launch "
     "is deprecated\nusage: main.py [-h] [--local_rank LOCAL_RANK] [--cfg CFG]\nmain.py: error: unrecognized arguments: "
     "--local-rank=1\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 1",
     Category.VERSION_MISMATCH, "DD1506"),
    # a script that takes no launcher argument at all: the command line is wrong (argparse's own refusal)
    ("usage: train.py [-h] [-c CONFIG]\ntrain.py: error: unrecognized arguments: --local_rank=1",
     Category.USER_CODE_ERROR, "DD1484"),
    # a script started without its launcher: the variables the launcher exports are missing
    (_TB + '  File "train.py", line 12, in setup\n    local_rank = int(os.environ["LOCAL_RANK"])\n  File "/usr/lib/'
     'python3.10/os.py", line 680, in __getitem__\n    raise KeyError(key) from None\nKeyError: \'LOCAL_RANK\'',
     Category.CONFIG_TF_CONFIG, "DD1507"),
    ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
     "but not set", Category.CONFIG_TF_CONFIG, "DD1507"),
    # the nodes' firewalls log what they drop while the controller loses the node
    ("error: Unable to register: Unable to contact slurm controller (connect failure)\nhpc-worker-02 kernel: "
     "[43351.006693] [UFW BLOCK] IN=eth0 OUT= SRC=10.0.0.5 DST=10.0.0.7 PROTO=TCP SPT=55926 DPT=6818 WINDOW=64240 "
     "RES=0x00 SYN URGP=0\nerror: Nodes hpc-worker-02 not responding, setting DOWN", Category.FIREWALL_OR_PORT_BLOCKED,
     "DD1508"),
    ("node2 kernel: filter_IN_public_REJECT: IN=ens3 OUT= MAC=fa:16:3e SRC=10.1.0.4 DST=10.1.0.5 LEN=60 PROTO=TCP "
     "SPT=48122 DPT=2222 WINDOW=29200 SYN URGP=0\n[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed",
     Category.FIREWALL_OR_PORT_BLOCKED, "DD1508"),
    # Open MPI's TCP listener refused its port by the security policy
    ("[login01][[51019,1],0][btl_tcp_component.c:872:mca_btl_tcp_component_create_listen] bind() failed: Permission "
     "denied (13)\n--------------------------------------------------------------------------\nWARNING: There was an "
     "error initializing an OpenFabrics device.", Category.FIREWALL_OR_PORT_BLOCKED, "DD1509"),
])
def test_a_components_own_message_names_its_cause(text, category, code):
    v = _verdict(text)
    assert (v.category, v.code) == (category, code)


@pytest.mark.parametrize("text", [
    "Checking whether the job was preempted",
    "If a node is preempted, the job restarts from its last checkpoint",
    "NCCL WARN NET/IB : Got async event : local access violation work queue error",
    "Failed to allocate GPU memory for the cache; retrying with a smaller pool",
    "Checking whether port 8786 is already in use before starting the scheduler",
    "/opt/dgl/src/rpc/network/tcp_socket.cc: 69: Failed bind on 172.31.0.9:30050(ip+port), errno=98",
])
def test_lookalikes_are_not_those_causes(text):
    codes = {h.sig.code for h in scan_bytes("w.log", (text + "\n").encode())[0]}
    assert not codes & {"DD1469", "DD1486", "DD1480", "DD1497", "DD1502"}, codes


def test_nccls_system_error_names_shared_memory_beside_the_network():
    """ncclSystemError says a system call failed, not which: a container's small /dev/shm (NCCL's troubleshooting
    names it first) as much as a socket. The verdict stays NCCL's line, at most medium, shared memory its first
    alternative; DDP's ready-twice names a library's own checkpointing as its other usual cause."""
    v = _verdict(_TB + "torch.distributed.DistBackendError: NCCL error in: NCCLUtils.hpp:268, unhandled system error "
                 "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5")
    assert (v.code, v.confidence) == ("DD711", "medium") and v.alternatives[0].category == Category.RESOURCE_EXHAUSTION
    v = _verdict(_TB + "RuntimeError: Expected to mark a variable ready only once.")
    assert (v.code, v.confidence) == ("DD1501", "medium") and v.alternatives[0].category == Category.OTHER


@pytest.mark.parametrize("text,code,other", [
    # Open MPI reads Slurm's environment as an srun direct launch: a program started without mpirun in an allocation
    ("The application appears to have been direct launched using \"srun\",\nbut OMPI was not built with SLURM's PMI "
     "support and therefore cannot\nexecute.", "DD942", Category.USER_CODE_ERROR),
    # Gloo given an interface name that is no interface here: a launcher's own setting as much as a node's
    (_TB + "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
     "to find address for: ^lo,docker", "DD709", Category.OTHER),
])
def test_a_message_the_component_prints_for_more_than_one_cause_is_at_most_medium(text, code, other):
    v = _verdict(text)
    assert (v.code, v.confidence) == (code, "medium") and v.alternatives[0].category == other, v


@pytest.mark.parametrize("text", [
    "--------------------------------------------------------------------------\n"
    "All nodes which are allocated for this job are already filled.\n"
    "--------------------------------------------------------------------------",
    "There are not enough slots available in the system to satisfy the 2\nslots that were requested by the application:",
    "here are not enough slots available in the system to satisfy the N",   # a paste that lost its first letter
])
def test_mpiruns_missing_slots_are_the_host_list_it_was_given(text):
    """Open MPI's mapper (help-orte-rmaps-base.txt) found fewer free slots in the hostfile, -H list or allocation
    than processes requested: the launcher's description of the cluster is wrong for the job (each real case: a
    hostfile written without or with zero slots, horovodrun's -H without a count), not a machine out of resources."""
    v = _verdict(text)
    assert (v.category, v.code) == (Category.CONFIG_TF_CONFIG, "DD755")


_RANK_EXIT_MPI = ("--------------------------------------------------------------------------\nmpirun detected that one or "
                  "more processes exited with non-zero status, thus causing\nthe job to be terminated.")
_ELASTIC = ("E1030 11:42:16.325000 140014536193856 torch/distributed/elastic/multiprocessing/api.py:833] failed "
            "(exitcode: 1) local_rank: 0 (pid: 155690) of binary: /usr/bin/python3")


@pytest.mark.parametrize("text,category,code", [
    # glibc elf/dl-lookup.c: a library linked against a newer release of another one (not a native crash, not code)
    ("./a.out: relocation error: /opt/ucx/lib/ucx/libuct_ib.so.0: symbol mlx5dv_is_supported, version MLX5_1.8 not "
     "defined in file libmlx5.so.1 with link time reference\n" + _RANK_EXIT_MPI, Category.VERSION_MISMATCH, "DD1476"),
    # UCX ucp_context.c's own version check, warned before the program goes on
    ("[1748179345.114806] [beaker:3019122:0]     ucp_context.c:2257 UCX  WARN  UCP API version is incompatible: "
     "required >= 1.20, actual 1.18.0 (loaded from /usr/local/ucx/lib/libucp.so.0)\nBackend UCX was instantiated",
     Category.VERSION_MISMATCH, "DD1477"),
    # UCX ucp_listener.c, as a terminal wraps it: every transport failed to bind the port
    ("[dgx15:44156:0]   ucp_listener.c:263  UCX  ERROR none of the available transports can listen for \n"
     "connections on 0.0.0.0:13337", Category.PORT_IN_USE, "DD1478"),
    # CPython's own TypeError for an argument the callee does not take, inside a traceback (else the code's error)
    ("Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/acme/agents/tf/dqn/agent.py\", "
     "line 96, in __init__\n    replay_table = reverb.Table(\nTypeError: __init__() got an unexpected keyword argument "
     "'samples_per_insert'", Category.VERSION_MISMATCH, "DD1479"),
    # a loss or gradient norm said to be NaN in words (MAE's misc.py, ESPnet's trainer), then the launcher's exit
    ("[11:41:59.064379] Loss is nan, stopping training\n" + _ELASTIC, Category.NUMERICAL_DIVERGENCE, "DD640"),
    ("(trainer:582) WARNING: The grad norm is nan. Skipping updating the model.\n" * 3,
     Category.NUMERICAL_DIVERGENCE, "DD640"),
])
def test_the_stacks_own_words_for_a_version_a_port_and_a_nan(text, category, code):
    v = _verdict(text)
    assert (v.category, v.code) == (category, code)


@pytest.mark.parametrize("text", ["loss: 0.2606 (0.2654)  nanoseconds: 12", "the grad norm is 3.2", "Loss is finite"])
def test_finite_numbers_and_words_that_start_with_nan_are_no_divergence(text):
    assert "DD640" not in {h.sig.code for h in scan_bytes("w.log", (text + "\n").encode())[0]}


@pytest.mark.parametrize("text,category,code", [
    # CPython's AttributeError for a name a module lacks (Python 3 and 2 wordings): the code's release of the module
    ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    hvd.BroadcastGlobalVariablesHook(0)\n"
     "AttributeError: module 'horovod.tensorflow' has no attribute 'BroadcastGlobalVariablesHook'",
     Category.VERSION_MISMATCH, "DD1511"),
    ("AttributeError: 'module' object has no attribute 'initialize_tpu_system'", Category.VERSION_MISMATCH, "DD1511"),
    # ... except torch.distributed's process-group API, absent only from a build without distributed support
    ("AttributeError: module 'torch.distributed' has no attribute 'init_process_group'", Category.OTHER, "DD1512"),
    # the kernel's OOM kill said in words by what watched the process
    ("12:22:38  Container was OOM killed by the kernel   (exit 137, rank-5/6 first)", Category.OOM_HOST, "DD1513"),
])
def test_a_modules_missing_name_a_build_without_distributed_and_an_oom_kill_in_words(text, category, code):
    v = _verdict(text)
    assert (v.category, v.code) == (category, code)


@pytest.mark.parametrize("text", [
    "AttributeError: 'NoneType' object has no attribute 'shape'",                 # an object, not a module
    "AttributeError: module 'torch.distributed' has no attribute 'is_torchelastic_launched'",   # a newer name
    "to avoid the kernel's OOM killer, lower the batch size"])
def test_what_is_no_missing_module_name_nor_build_nor_oom_kill(text):
    codes = {h.sig.code for h in scan_bytes("w.log", (text + "\n").encode())[0]}
    assert not codes & ({"DD1511"} if "NoneType" in text else {"DD1512", "DD1513"})


def test_an_objects_missing_attribute_is_a_skew_at_most_medium_with_a_defect_next():
    """CPython's AttributeError on an object: the caller and the class disagree (releases apart, or the library's own
    defect): not the user's code by default, at most medium, the defect listed first among the alternatives."""
    v = _verdict("Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.9/site-packages/transformers/"
                 "trainer.py\", line 1645, in train\n    if self.args.distributed_state is None:\n"
                 "AttributeError: 'TrainingArguments' object has no attribute 'distributed_state'")
    assert (v.category, v.code) == (Category.VERSION_MISMATCH, "DD1514")
    assert v.confidence in ("medium", "low")
    assert v.alternatives and v.alternatives[0].category == Category.OTHER


@pytest.mark.parametrize("text,category,code", [
    # c10d's connect warning to a netmask: no store will ever start there -- not the benign retry of a starting rank 0
    ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 (errno: 110 - "
     "Connection timed out).", Category.CONFIG_TF_CONFIG, "DD1515"),
    # Envoy's RBAC filter (an Istio AuthorizationPolicy) denied the job's own traffic
    ('[2024-01-09T08:07:10.309Z] "GET /status HTTP/1.1" 403 - rbac_access_denied_matched_policy[none] - "-" 0 19 0',
     Category.FIREWALL_OR_PORT_BLOCKED, "DD1516"),
    # JAX refuses a multi-process start after its backend exists
    ("RuntimeError: jax.distributed.initialize() must be called before any JAX calls that might initialise the XLA "
     "backend. This includes any computation, but also calls to jax.devices.", Category.USER_CODE_ERROR, "DD1517"),
])
def test_a_mask_address_a_meshs_denial_and_jax_started_late(text, category, code):
    v = _verdict(text)
    assert (v.category, v.code) == (category, code)


def test_a_retry_to_a_real_host_stays_benign():
    hits = scan_bytes("w.log", b"[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-0]:29500 "
                                b"(errno: 111 - Connection refused).\n")[0]
    assert {h.sig.code for h in hits} & {"DD1452", "DD1515"} == {"DD1452"}


def test_a_collective_group_of_another_device_type_is_a_mismatch_across_workers():
    """TF's collective_param_resolver_local.cc: a task whose collective runs on a GPU joins a group another task
    formed on CPUs (one node without GPUs visible): the workers differ, not the code."""
    v = _verdict("tensorflow.python.framework.errors_impl.InternalError: Collective Op CollectiveBcastSend: Broadcast(1) "
                 "is assigned to device /job:worker/replica:0/task:0/device:GPU:0 with type GPU and group_key 1 but that "
                 "group has type CPU [Op:CollectiveBcastSend]")
    assert (v.category, v.code) == (Category.CONFIG_MISMATCH_ACROSS_WORKERS, "DD626")


@pytest.mark.parametrize("text", ["AttributeError: 'str' object has no attribute 'joinpath'",
                                  "AttributeError: 'Tensor' object has no attribute 'numpy'",
                                  "AttributeError: 'NoneType' object has no attribute 'shape'"])
def test_a_builtin_value_or_a_tensor_without_an_attribute_is_the_code_not_a_skew(text):
    """A builtin value or a tensor asked for what it never has is the code passing the wrong kind of value."""
    codes = {h.sig.code for h in scan_bytes("w.log", (text + "\n").encode())[0]}
    assert "DD1514" not in codes and "DD860" in codes


def test_an_hdf5_file_another_task_holds_is_the_code_writing_from_every_task():
    v = _verdict("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
                 "    model.save_weights('weights.h5')\nOSError: Unable to create file (unable to lock file, errno = 11, "
                 "error message = 'Resource temporarily unavailable')")
    assert (v.category, v.code) == (Category.USER_CODE_ERROR, "DD1519")


def test_a_traceback_a_library_logged_for_a_harmless_import_is_no_failure():
    """google-api-python-client logs the ImportError of its discovery cache, traceback and all, and goes on: its
    exception line is harmless (DD1520), so the traceback is no failure and not one cut before its exception."""
    v = _verdict("W0724 02:39:43.722238 140435012744960 __init__.py:44] file_cache is unavailable when using oauth2client "
                 ">= 4.0.0 or google-auth\nTraceback (most recent call last):\n  File \"/usr/local/lib/python2.7/dist-"
                 "packages/googleapiclient/discovery_cache/__init__.py\", line 41, in autodetect\n    from . import "
                 "file_cache\nImportError: file_cache is unavailable when using oauth2client >= 4.0.0 or google-auth\n"
                 "I0724 02:39:43.878710 140435012744960 tf_logging.py:115] Using config: {'_save_checkpoints_secs': None}")
    assert v.code not in ("DD861", "DD862", "DD860") and v.status.value != "failed"


def test_lightnings_misconfiguration_is_the_users_setup():
    v = _verdict("lightning_fabric.utilities.exceptions.MisconfigurationException: `Trainer(accelerator='tpu', "
                 "precision=64)` is not implemented.")
    assert (v.category, v.code) == (Category.USER_CODE_ERROR, "DD1521")


def test_a_launcher_that_cannot_execute_the_program_is_the_nodes_setup_in_every_launcher():
    """Slurm's execve(), MPICH's execvp and a platform runtime's failed spawn all say one thing: the program is not
    where the launcher looks on that node (an image without srun or mpirun on PATH) -- the setup, not a version and
    not a data file the code reads (DD868)."""
    for line, code in (("slurmstepd: error: execve(): torchrun: No such file or directory", "DD827"),
                       ("[mpiexec@nid02304] HYDU_create_process (utils/launch/launch.c:75): execvp error on file srun "
                        "(No such file or directory)", "DD957"),
                       ("UserError: Failed to spawn child process 'mpirun' because: Os { code: 2, kind: NotFound, "
                        "message: \"No such file or directory\" }", "DD1522")):
        v = _verdict(line)
        assert (v.category, v.code) == (Category.OTHER, code), line


def test_hccl_bind_failure_is_a_port_held_and_its_socket_timeout_a_symptom():
    """HCCL's own error codes (the CANN troubleshooting guide): EJ0003 a port another process holds, under the Python
    exception that reports the failed call; EI0006 a connect timeout whose first suspect is another rank."""
    v = _verdict("RuntimeError: createHCCLCommOrigin:... HCCL function error: HcclGetRootInfo(&hcclID), error code is 7\n"
                 "[ERROR] DIST call hccl api failed.\n"
                 "Communication_Error_Bind_IP_Port(EJ0003): Failed to bind the IP port.\n"
                 "Reason: The IP address and port have been bound already.")
    assert (v.category, v.code) == (Category.PORT_IN_USE, "DD1523")
    v = _verdict("EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request.")
    assert v.code == "DD1524" and v.confidence == "low"   # a symptom: alone, never a sure verdict


def test_a_stale_nfs_handle_is_the_shared_file_system_not_the_import():
    """ESTALE: a file another node replaced on the shared file system, whatever call met it (an import of a compiled
    cache, a read): not a version skew (DD862) and not the code's path (DD868)."""
    v = _verdict("ImportError: /home/u/.triton/cache/ab12/__triton_launcher.so: cannot stat shared object: Stale file "
                 "handle")
    assert (v.category, v.code) == (Category.OTHER, "DD1525")


def test_torchrun_agent_that_got_a_signal_was_stopped_from_outside():
    """torchrun's elastic agent reports the signal it got itself (SIGHUP: the session it was started from closed),
    then sends its workers the same signal: the launcher was stopped from outside, not a worker that failed."""
    v = _verdict("   39/100  13.9G  2.252  3.897:  43%|####  | 496/1155 [05:07<06:48,  1.61it/s]WARNING:torch.distributed."
                 "elastic.agent.server.api:Received 1 death signal, shutting down workers\n"
                 "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4193 closing signal SIGHUP\n"
                 "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4194 closing signal SIGHUP")
    assert (v.category, v.code) == (Category.PREEMPTION, "DD1526")
    v = _verdict("torch.distributed.elastic.multiprocessing.api.SignalException: Process 4015698 got signal: 15")
    assert (v.category, v.code) == (Category.PREEMPTION, "DD1526")


def test_a_pytorch_loss_dict_with_nan_reads_as_a_nan_loss():
    """A PyTorch loss printed in a dict shows its value as the tensor's repr: "'loss_cls': tensor(nan, ...)"."""
    hits, _ = scan_bytes("output.log", b"loss_dict = {'loss_cls': tensor(nan, device='cuda:0', grad_fn=<DivBackward0>),"
                         b" 'loss_box_reg': tensor(1310.0702, device='cuda:0', grad_fn=<DivBackward0>)}\n")
    assert "DD640" in {h.sig.code for h in hits}
    hits, _ = scan_bytes("output.log", b"{'loss_cls': tensor(0.6931, device='cuda:0')}\n")
    assert "DD640" not in {h.sig.code for h in hits}


def test_accelerate_port_check_reads_as_a_port_held():
    """accelerate launch checks its main process port before it starts anything and raises a ConnectionError in
    words: the port is held (DD1497), not the code's error that a bare Python exception would be."""
    v = _verdict(_TB + "ConnectionError: Tried to launch distributed communication on port `29500`, but another "
                 "process is utilizing it. Please specify a different port (such as using the `--main_process_port` "
                 "flag or specifying a different `main_process_port` in your config file) and rerun your script.")
    assert (v.category, v.code) == (Category.PORT_IN_USE, "DD1497")


def test_a_connect_that_timed_out_is_the_path_and_a_call_that_timed_out_the_peer():
    """ETIMEDOUT on a connect (or a deadline while connecting) means the peer's host gave no answer at all: a frozen
    process's kernel still completes the handshake, so the address or the path is at fault (DD1527). A deadline on a
    call the peer accepted stays a peer that does not answer (DD704)."""
    for line in ("tensorflow.python.framework.errors_impl.UnavailableError: Connection timed out",
                 "host-01:1234:5678 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed "
                 "out, on dev mlx5_0:1, curr state INIT, next state RTR",
                 "2022-08-17 11:04:03,941 [WARNING]: [Channel] grpc error, code: StatusCode.DEADLINE_EXCEEDED, details: "
                 "Deadline Exceeded.(call type: CONNECT) (channel.py:418)"):
        v = _verdict(line)
        assert (v.category, v.code) == (Category.NETWORK_UNREACHABLE, "DD1527"), line
    v = _verdict("tensorflow.python.framework.errors_impl.DeadlineExceededError: Deadline Exceeded\nAdditional GRPC "
                 "error information from remote target /job:worker/replica:0/task:3:\n:{\"description\":\"Deadline "
                 "Exceeded\",\"grpc_status\":4}")
    assert (v.category, v.code) == (Category.PEER_UNRESPONSIVE, "DD704")


def test_fujitsu_launcher_names_the_rank_that_aborted_and_the_learned_reading_says_why(tmp_path):
    """Fujitsu MPI's plexec reports which rank aborted (PLE 0608), not why: the rank is the culprit and, as for srun's
    exit report (DD1510), the learned reading decides the cause at low confidence (the category the line was given
    is no evidence)."""
    from distdoctor.diagnose.command import diagnose_paths
    from distdoctor.diagnose.logs.learned import DECIDED_BY_MODEL
    text = ("[fx0426:00065] [2] func:/opt/FJSVxtclanga/tcsds-1.2.40/lib64/libmpi.so.0(MPI_Abort+0xa0) "
            "[0x400000514c18]\n[WARN] PLE 0608 plexec One of MPI processes was aborted.(rank=0)(nid=0xff33000e)"
            "(CODE=1903,3028255134016143360,256)(DETAIL=N/A)")
    v = _verdict(text)
    assert v.code == "DD1528" and v.culprit == "rank:0" and "DD1528" in DECIDED_BY_MODEL
    (tmp_path / "output.log").write_text(text + "\n")
    rc = diagnose_paths([str(tmp_path / "output.log")], detected_at=0.0)[0].root_cause
    assert (rc.code, rc.culprit, rc.confidence) == ("DD1528", "rank:0", "low")
    assert "the learned reading of the real corpus ranks" in rc.summary


def test_a_cuda_out_of_memory_in_any_capitalisation_is_the_gpu():
    """A C++ allocator's own CUDA check spells the runtime's "out of memory" as "Cuda error" (vLLM's cumem allocator):
    the same cudaErrorMemoryAllocation as PyTorch's "CUDA error: out of memory" (DD985)."""
    for line in ("Runtime Error: Cuda error: out of memory at /workspace/csrc/cumem_allocator.cpp: 62",
                 "RuntimeError: CUDA error: out of memory"):
        v = _verdict(line)
        assert (v.category, v.code) == (Category.OOM_GPU, "DD985"), line


def test_a_libtpu_older_than_jax_accepts_is_the_versions():
    """JAX's Pallas refuses a libtpu more than about a month older than itself (DD1472, with libtpu's missing
    functions); some releases spell it libTPU."""
    for spelling in ("libtpu", "libTPU"):
        v = _verdict(_TB + f"RuntimeError: Pallas TPU requires a {spelling} version that's at most a month old. Found "
                     "version string:")
        assert (v.category, v.code) == (Category.VERSION_MISMATCH, "DD1472"), spelling


def test_the_ddp_wrapper_asked_for_the_models_attribute_is_the_code():
    """An attribute of the wrapped model asked of DistributedDataParallel / DataParallel (DD1529) is code that does
    not reach through ``.module``; another object's missing attribute stays the generic reading (DD1514)."""
    for wrapper in ("DistributedDataParallel", "DataParallel"):
        v = _verdict(_TB + f"AttributeError: '{wrapper}' object has no attribute 'self_cond'")
        assert (v.category, v.code) == (Category.USER_CODE_ERROR, "DD1529"), wrapper
        assert ".module" in v.remedy
    v = _verdict(_TB + "AttributeError: 'TrainingArguments' object has no attribute 'distributed_state'")
    assert v.code == "DD1514"


def test_deepspeed_communication_used_before_it_was_set_up():
    """deepspeed.comm asserts deepspeed.init_distributed() ran first (DD1530): code written for a DeepSpeed before
    deepspeed.comm started torch.distributed only -- not the code's own assertion (DD860)."""
    v = _verdict(_TB + '  File "/usr/lib/python3/site-packages/deepspeed/comm/comm.py", line 536, in get_rank\n'
                 "    assert cdb is not None and cdb.is_initialized(\nAssertionError: DeepSpeed backend not set, please "
                 "initialize it using init_process_group()")
    assert (v.category, v.code) == (Category.VERSION_MISMATCH, "DD1530")
    assert "init_distributed" in v.remedy


def test_neuron_ranks_with_different_collectives_are_a_collective_mismatch():
    """The Neuron runtime checks that every rank's compiled graph holds the same collectives (DD1531): its refusal,
    and the load errors that follow it, are ranks that would wait in different collectives."""
    v = _verdict("2023-Oct-27 14:18:42.0222 35560:35755 ERROR   ENC:validate_neff_cc_ops                    [nec_dev 0] "
                 "mismatching number of cc ops, expected 6 received 3. Check if ranks 1 and 0 are using the same neff\n"
                 "2023-Oct-27 14:18:42.0222 35560:35755 ERROR   ENC:enc_load_operations                     [nec_dev 0] "
                 "failed to validate neff across the replica group\n"
                 "2023-Oct-27 14:18:42.0222 35560:35755 ERROR  NMGR:dlr_kelf_stage                          Failed to "
                 "load subgraph")
    assert (v.category, v.code) == (Category.HANG_COLLECTIVE_MISMATCH, "DD1531")


def test_tensorrt_llm_started_with_another_world_size_than_its_engine():
    """TensorRT-LLM's WorldConfig requires as many MPI processes as the engine's TP x PP (DD1532), in both wordings;
    not the program's own RuntimeError."""
    for line in ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/app/tensorrt_llm/cpp/"
                 "tensorrt_llm/runtime/worldConfig.cpp:90)",
                 "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: MPI size 1 != TP size 2 * PP size 1 * CP Size 1 "
                 "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:104)"):
        v = _verdict(_TB + line)
        assert (v.category, v.code) == (Category.CONFIG_MISMATCH_ACROSS_WORKERS, "DD1532"), line


def test_pytorch_rank_prefixed_lines_name_the_rank_and_end_the_traceback(tmp_path):
    """PyTorch 2.x prints a failing rank's lines as "[rank0]: ..." (torchrun's log-line prefix): the prefix names the
    rank, and the exception line under it ends the traceback (not a traceback cut before its exception, DD861)."""
    log = tmp_path / "output.log"
    log.write_text('[rank0]: Traceback (most recent call last):\n[rank0]:   File "/w/run_train.py", line 415, in '
                   "<module>\n[rank0]:     trainer.train(dataloader)\n[rank0]: AttributeError: 'NoneType' object has no "
                   "attribute 'item'\n")
    from distdoctor.diagnose.command import diagnose_paths
    rc = diagnose_paths([str(log)], detected_at=0.0)[0].root_cause
    assert rc.code != "DD861" and rc.culprit == "rank:0", rc
    assert "AttributeError" in rc.summary


def test_tensorflow_on_rocm_out_of_gpu_memory():
    """TensorFlow's ROCm build logs a failed device allocation with HIP's error code (DD1533): hipError_t(1002) is
    hipErrorMemoryAllocation, the GPU out of memory like CUDA_ERROR_OUT_OF_MEMORY on CUDA builds (DD760)."""
    v = _verdict("2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate "
                 "7.35G (7889485824 bytes) from device: hipError_t(1002)\n")
    assert (v.category, v.code) == (Category.OOM_GPU, "DD1533")
    # another HIP error in the same message is not the memory
    v = _verdict("E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G (7889485824 bytes) "
                 "from device: hipError_t(1010)\n")
    assert v.code != "DD1533"


def test_the_kernel_modules_api_mismatch_is_the_driver_against_its_library():
    """The NVIDIA kernel module's own words for a driver upgraded without reloading it (DD975, beside NVML's
    "Driver/library version mismatch"), as dmesg or journalctl prints them."""
    v = _verdict("Aug 26 14:08:07 node-3 kernel: NVRM: API mismatch: the client has the version 367.44, but\n"
                 "                                      NVRM: this kernel module has the version 367.35.  Please\n")
    assert (v.category, v.code) == (Category.VERSION_MISMATCH, "DD975")


def test_the_tail_of_yarns_memory_kill_is_the_kill():
    """The NodeManager's memory-kill message ends "... of ... virtual memory used. Killing container."; a user who
    quotes only that tail still quotes YARN's kill (DD788; the full physical-memory line stays DD787's)."""
    v = _verdict("15.8 GB of 14.7 GB virtual memory used. Killing container.")
    assert (v.category, v.code) == (Category.OOM_HOST, "DD788")
    v = _verdict("Container [pid=31337,containerID=container_e12_1600000000000_0042_01_000003] is running 532676608B "
                 "beyond the 'PHYSICAL' memory limit. Current usage: 4.5 GB of 4 GB physical memory used; 6.2 GB of "
                 "8.4 GB virtual memory used. Killing container.")
    assert (v.category, v.code) == (Category.OOM_HOST, "DD787")
