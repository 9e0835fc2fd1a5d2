"""Horovod (core, launcher, elastic driver) messages mined from horovod/horovod v0.13-v0.28 (codes DD900-DD917;
the first Horovod signatures are in comm.py)."""
from __future__ import annotations

from ....model import Category as C
from ..signature import Role as R, add

HVD = "horovod"
_PEER = ("A consequence of a failure on another rank: find that rank's own first error (its output, exit status, "
         "the OOM killer, the scheduler's events).")
_SAME = ("Every rank must submit the same collectives with the same arguments: look for rank-dependent branches, "
         "settings or library versions around the call.")

# -- stall inspector: the old (v0.13-v0.15) wording of DD721/DD722 ------------------------------------------------------
add("DD900", "horovod-stall-ready-ranks", C.HANG_COLLECTIVE_MISMATCH, R.CONTEXT, (" [ready ranks:",),
    "Horovod's (pre-0.16) stall warning lists the ranks that did submit a stalled tensor", rank=20,
    regex=r"Stalled ops:|\[ready ranks: [\d, ]+\]",
    remedy="The ranks not listed never submitted that tensor: they are on another code path, stuck, or finished.",
    component=HVD, versions="0.13-0.15", source="horovod/common/operations.cc (CheckForStalledTensors, v0.13.0)",
    fixture="Stalled ops: DistributedAdamOptimizer_Allreduce/HorovodAllreduce_gradients_AddN_1_0 [ready ranks: 0, 2, 3]")

# -- mismatched collectives (controller.cc): the same class as DD746/DD747/DD715 ---------------------------------------
add("DD901", "horovod-mismatched-scale", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE,
    ("Mismatched prescale and/or postscale factors",),
    "Horovod ranks allreduced one tensor with different pre/post-scale factors", rank=80, remedy=_SAME,
    component=HVD, versions=">=0.20", source="horovod/common/controller.cc (ConstructResponse)",
    fixture="Mismatched prescale and/or postscale factors: One rank sent factors (1, 0.25), but another rank sent "
            "factors (1, 0.125).")
add("DD902", "horovod-mismatched-reduce-op", C.HANG_COLLECTIVE_MISMATCH, R.CAUSE, ("Mismatched reduction operation:",),
    "Horovod ranks allreduced one tensor with different reduction operations", rank=80, remedy=_SAME,
    component=HVD, versions=">=0.22", source="horovod/common/controller.cc (ConstructResponse)",
    fixture="Mismatched reduction operation: One rank sent reduction op 1, but another rank sent reduction op 0.")
add("DD903", "horovod-process-set-mismatch", C.CONFIG_MISMATCH_ACROSS_WORKERS, R.CAUSE,
    ("Attempted to register process set with mismatching", "Different ranks tried to set up mismatching"),
    "Horovod ranks registered different process sets", rank=80,
    remedy="Every rank must create the same process sets in the same order (hvd.init(process_sets=...) or "
    "hvd.add_process_set on all ranks).", component=HVD, versions=">=0.23",
    source="horovod/common/process_set.cc / horovod/common/operations.cc",
    fixture="terminate called after throwing an instance of 'std::logic_error'  what():  Attempted to register process "
            "set with mismatching size on different ranks")
add("DD904", "horovod-not-in-process-set", C.USER_CODE_ERROR, R.CAUSE,
    ("is not a member of the provided process set", "Process is not part of provided process set",
     "Process set provided does not exist"),
    "A rank called a collective on a process set it does not belong to", rank=70,
    remedy="Call a process set's collectives only on its member ranks (check `process_set.included()`).",
    component=HVD, versions=">=0.23", source="horovod/common/operations.cc / horovod/common/basics.py",
    fixture="tensorflow.python.framework.errors_impl.InvalidArgumentError: Allreduce: Rank 3 is not a member of the "
            "provided process set.")
add("DD905", "horovod-join-unsupported", C.USER_CODE_ERROR, R.CAUSE,
    ("is not supported with Join at this time",),
    "A collective that hvd.join() cannot stand in for was called while some ranks had joined", rank=70,
    remedy="With uneven data and hvd.join(), only allreduce works on the joined ranks: use sparse_as_dense=True / "
    "sparse_to_dense=True, or give every rank the same number of steps.", component=HVD, versions=">=0.21",
    source="horovod/common/controller.cc",
    fixture="Allgather is not supported with Join at this time. Specify sparse_to_dense=True if using "
            "DistributedOptimizer")
add("DD906", "horovod-nccl-op-failed", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("failed: unhandled system error", "failed: unhandled cuda error", "NCCL async error:", "failed: remote process exited",
     "failed: internal error", "failed: invalid usage", "failed: invalid argument"),
    "A Horovod NCCL operation failed", rank=60,
    regex=r"(?:nccl\w+|NCCL\w*) failed: (?P<why>unhandled system error|unhandled cuda error|remote process exited|"
          r"internal error|invalid usage|invalid argument)|NCCL async error: (?P<why2>.+)",
    remedy="Rerun with NCCL_DEBUG=INFO on every rank: a system error is usually the network interface "
    "(NCCL_SOCKET_IFNAME) or /dev/shm; a remote error a rank that died; an invalid usage ranks that disagree.",
    component=HVD, versions=">=0.16", source="horovod/common/ops/nccl_operations.cc (ErrorCheck) with NCCL's "
    "ncclGetErrorString",
    fixture="tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: unhandled system error")
add("DD907", "horovod-mpi-op-failed", C.PEER_CRASHED, R.SYMPTOM,
    ("failed, see MPI output for details",),
    "An MPI collective inside Horovod failed", rank=25,
    remedy="MPI printed why above (a lost peer, a network error): look for the first MPI error and the rank that died.",
    component=HVD, versions="all", source="horovod/common/ops/mpi_operations.cc",
    fixture="terminate called after throwing an instance of 'std::logic_error'  what():  MPI_Allreduce failed, see MPI "
            "output for details.")
add("DD908", "horovod-shutting-down", C.PEER_CRASHED, R.SYMPTOM,
    ("Horovod is shutting down", "Job has been shutdown, see above error messages for details", "HorovodInternalError"),
    "Horovod (or its elastic driver) is shutting down after an error; in elastic mode a collective failed "
    "(HorovodInternalError) because a worker went away", rank=20, remedy=_PEER, component=HVD,
    versions=">=0.20", source="horovod/common/basics.py / horovod/runner/elastic/driver.py / horovod/common/exceptions.py "
    "(HorovodInternalError, raised by horovod/tensorflow/elastic.py)",
    fixture="RuntimeError: Job has been shutdown, see above error messages for details.")

# -- launcher (horovodrun, gloo_run, mpi_run) --------------------------------------------------------------------------
add("DD909", "horovodrun-terminating-after-failure", C.PEER_CRASHED, R.CAUSE,
    ("Terminating remaining workers after failure of Process",),
    "horovodrun (Gloo) terminates the job after a process failed",
    regex=r"Terminating remaining workers after failure of Process (?P<rank>\d+)", rank=38, expect="rank:2",
    remedy="That process failed first: read its own output ([N]<stderr>: lines) for the cause.",
    component=HVD, versions=">=0.19", source="horovod/runner/gloo_run.py",
    fixture="Terminating remaining workers after failure of Process 2.")
add("DD910", "horovodrun-ssh-check", C.NETWORK_UNREACHABLE, R.CAUSE,
    ("could not connect to some hosts via ssh",),
    "horovodrun's ssh check could not reach some hosts", rank=75,
    remedy="Make passwordless ssh work from the launch host to every host (keys, known_hosts, port via -p), and check "
    "that the host names resolve.", component=HVD, versions=">=0.16", source="horovod/runner/launch.py",
    fixture="RuntimeError: could not connect to some hosts via ssh")
add("DD911", "horovodrun-not-enough-slots", C.RESOURCE_EXHAUSTION, R.CAUSE,
    ("Not enough slots on the hosts to fulfill the", "than there are available slots"),
    "horovodrun was asked for more processes than the hosts offer slots", rank=75,
    remedy="List enough slots per host (-H host1:4,host2:4 or the hostfile's slots=), or lower -np.",
    component=HVD, versions=">=0.19", source="horovod/runner/common/util/hosts.py / horovod/runner/js_run.py",
    fixture="ValueError: Requested more processes (8) than there are available slots (4)")
add("DD912", "horovodrun-no-mpi", C.VERSION_MISMATCH, R.CAUSE,
    ("horovod does not find an installed MPI", "but has not been built.  Ensure CMake is installed",
     "Gloo support has not been built", "MPI support has not been built"),
    "horovodrun cannot use the controller it needs: MPI is missing or Horovod was built without MPI/Gloo", rank=80,
    remedy="Install Open MPI/MPICH (then reinstall Horovod with --no-cache-dir), or use --gloo with a Horovod built "
    "with HOROVOD_WITH_GLOO=1; do it alike on every node.", component=HVD, versions=">=0.20",
    source="horovod/runner/mpi_run.py (_MPI_NOT_FOUND_ERROR_MSG) / horovod/runner/launch.py",
    fixture="Exception: horovod does not find an installed MPI.")
add("DD913", "horovod-no-port", C.PORT_IN_USE, R.CAUSE, ("Unable to find a port to bind to",),
    "horovodrun found no free port for its services", rank=70,
    remedy="Every port horovodrun tried is taken (or blocked): free ports on the launch host or restrict the range.",
    component=HVD, versions=">=0.16", source="horovod/runner/util/network.py",
    fixture="Exception: Unable to find a port to bind to.")
add("DD914", "horovod-loopback-only", C.NETWORK_UNREACHABLE, R.CAUSE, ("No interface is found for address 127.0.0.1",),
    "Horovod found no network interface for an address (the hosts resolve to loopback)", rank=70,
    remedy="A host name resolves to 127.0.0.1 (an /etc/hosts entry): make every host name resolve to its routable "
    "address, or pass --network-interface.", component=HVD, versions=">=0.20",
    source="horovod/runner/driver/driver_service.py",
    fixture="ValueError: No interface is found for address 127.0.0.1.")
add("DD915", "horovod-elastic-no-hosts", C.PEER_CRASHED, R.CAUSE,
    ("No hosts from previous set remaining, unable to broadcast state",),
    "Horovod elastic lost every host that held the training state", rank=60,
    remedy="All hosts of the previous set failed or were removed at once: the state cannot be recovered; restart from "
    "the last checkpoint and check why those hosts went away.", component=HVD, versions=">=0.20",
    source="horovod/runner/elastic/driver.py",
    fixture="RuntimeError: No hosts from previous set remaining, unable to broadcast state.")
add("DD916", "horovod-elastic-stop", C.PEER_CRASHED, R.SYMPTOM,
    ("-> stop running",),
    "Horovod elastic gave up: too many failures, blacklisted slots or resets", regex=r"(?:failure count|blacklisted "
    r"slots count|reset count) .*-> stop running", rank=30,
    remedy="The workers kept failing: the first failure on any worker says why; raise --reset-limit only once that is "
    "fixed.", component=HVD, versions=">=0.20", source="horovod/runner/elastic/registration.py",
    fixture="ERROR:root:reset count 3 has exceeded limit 3 -> stop running")
add("DD917", "horovod-placement-timeout", C.RESOURCE_EXHAUSTION, R.CAUSE, ("Placement group creation timed out",),
    "Horovod on Ray could not reserve its workers' resources", rank=70,
    remedy="The Ray cluster has too few free CPUs/GPUs for the requested workers: lower num_workers or the resources "
    "per worker, or add nodes.", component=HVD, versions=">=0.22", source="horovod/ray/strategy.py",
    fixture="TimeoutError: Placement group creation timed out. Make sure your cluster either has enough resources or "
            "use an autoscaling cluster.")
add("DD1492", "horovodrun-mpi-implementation-not-found", C.VERSION_MISMATCH, R.CAUSE,
    ("not found in output of mpirun --version",),
    "horovodrun did not recognise the MPI implementation that `mpirun --version` reports", rank=80,
    remedy="The mpirun on PATH is not an implementation this Horovod supports or recognises (another MPI first on "
    "PATH, or an Open MPI that names itself 'OpenRTE' to an older horovodrun): put the MPI Horovod was built against "
    "first on PATH, upgrade Horovod, or run with --gloo.",
    component="horovod", versions="all", source="horovod/horovod horovod/runner/mpi_run.py (_get_mpi_implementation_flags: "
    "\"Open MPI/Spectrum MPI/MPICH not found in output of mpirun --version.\"; before 0.20: \"Open MPI not found in "
    "output of mpirun --version.\")",
    fixture="Open MPI not found in output of mpirun --version.")
add("DD1493", "ibverbs-register-memory-failed", C.RESOURCE_EXHAUSTION, R.CAUSE, ("ibv_reg_mr",),
    "Registering memory with the RDMA adapter failed: the locked-memory limit or the adapter's resources ran out",
    regex=r"ibv_reg_mr\b.*(?:Cannot allocate memory|failed)", rank=78,
    remedy="RDMA buffers must be pinned: raise the locked-memory limit where the task runs (`ulimit -l unlimited`, "
    "limits.conf, the container's memlock ulimit), or register less (smaller buffer pools or fewer chunks).",
    component="kernel", versions="all", source="rdma-core libibverbs ibv_reg_mr(3) (ENOMEM: the pinned-memory limit "
    "RLIMIT_MEMLOCK or the adapter's translation resources exhausted), as BytePS / ps-lite, NCCL and UCX report it",
    fixture="  what():  [16:23:05] src/./rdma_transport.h:130: Check failed: mr ibv_reg_mr failed: Cannot allocate "
            "memory, i=941, kMempoolChunkSize=56")
